#include "reducer.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bucket.h"

/* Releases at which a behaviour starts (docs/reducer.md cites the source of each). */
enum {
  V_PY_SYNC = 3,            /* 0.3: forward syncs buffers (_sync_params) with one device per process too */
  V_PY_NCCL = 4,            /* 0.4: distributed.py's nccl path (_register_nccl_grad_hook), 1 MiB buckets per dtype */
  V_C10D = REDUCER_VERSION_C10D, /* 1.0: c10d's _queue_reduction, bucket_cap_mb (25) */
  V_CPP = REDUCER_VERSION_CPP, /* 1.1: the C++ Reducer, find_unused_parameters, the 1 MiB first bucket */
  V_REBUILD = 106,          /* Reducer::rebuild_buckets (pytorch#35137) */
  V_BUCKET_VIEW = 107,      /* gradient_as_bucket_view */
  V_FP16_HOOK = 108,        /* ddp_comm_hooks.default_hooks.fp16_compress_hook */
  V_STATIC_GRAPH = 109,     /* _set_static_graph */
  V_BF16_HOOK = 110,        /* bf16_compress_hook */
  V_SINGLE_FIRST = 112,     /* bucket_size_limits = [sys.maxsize] without find_unused_parameters */
  V_CAP_CAPS_FIRST = 204,   /* bucket_cap_mb=None by default; a given cap caps the first bucket */
  V_CAP_LIST = 211,         /* bucket_cap_mb_list */
  V_FIRST_BELOW_CAP = 212,  /* _BucketCapacityConfig: [first, cap] only when first < cap */
};

/* A release as given, 0 (or less) standing for the newest modelled. */
static int release(int version) { return version > 0 ? version : REDUCER_VERSION_LATEST; }
static int version_of(const reducer_knobs *k) { return release(k->version); }

/* Digits at *p into *out (at most 4 of them); advances *p. */
static int number(const char **p, int *out) {
  int n = 0, v = 0;
  while (**p >= '0' && **p <= '9' && n < 4) v = v * 10 + (*(*p)++ - '0'), n++;
  *out = v;
  return n > 0 && !(**p >= '0' && **p <= '9');
}

int reducer_version_parse(const char *text, int *version, err_t *e) {
  const char *p = text ? text : "";
  int major, minor, patch;
  int ok = number(&p, &major) && *p++ == '.' && number(&p, &minor) && minor <= 99;
  if (ok && *p == '.') p++, ok = number(&p, &patch);
  if (!ok || *p)
    return err_set(e, ERR_INPUT, "PyTorch version '%s' is not MAJOR.MINOR (e.g. 2.5)", text ? text : "");
  int v = major * 100 + minor;
  if (v < REDUCER_VERSION_OLDEST || v > REDUCER_VERSION_LATEST)
    return err_set(e, ERR_INPUT, "PyTorch %d.%d is not modelled: releases 0.2 to %d.%d are (docs/reducer.md)",
                   major, minor, REDUCER_VERSION_LATEST / 100, REDUCER_VERSION_LATEST % 100);
  *version = v;
  return ERR_OK;
}

int reducer_fused_copy(int version) { return release(version) >= REDUCER_VERSION_FUSED_COPY; }

void reducer_pg_nccl_calls(int version, int *issue, int *wait) {
  int v = release(version);
  *issue = v < V_CPP ? 0 : v < REDUCER_VERSION_PG_FUTURE ? 5 : 8;
  *wait = v < V_CPP ? 0 : 1;
}

int reducer_backward_gil(int version) { return release(version) < REDUCER_VERSION_CPP_AUTOGRAD; }

int reducer_tf32_cudnn(int version) { return release(version) >= REDUCER_VERSION_TF32; }

int reducer_tf32_matmul(int version) {
  return reducer_tf32_cudnn(version) && release(version) < REDUCER_VERSION_STRICT_MATMUL;
}

const char *reducer_version_name(int version, char *buf, size_t n) {
  version = release(version);
  snprintf(buf, n, "%d.%d", version / 100, version % 100);
  return buf;
}

static int needs(int have, int from, const char *what, err_t *e) {
  char a[16], b[16];
  if (have >= from) return ERR_OK;
  return err_set(e, ERR_INPUT, "%s needs PyTorch %s or later (modelled: %s)", what, reducer_version_name(from, a, sizeof a),
                 reducer_version_name(have, b, sizeof b));
}

reducer_pg reducer_default_pg(int version) { return release(version) < V_PY_NCCL ? REDUCER_PG_GLOO : REDUCER_PG_NCCL; }

int reducer_check(const reducer_knobs *k, int bucket_view, int comm_hook, err_t *e) {
  int v = version_of(k), rc;
  char vb[16];
  if (v < REDUCER_VERSION_MIN || v > REDUCER_VERSION_LATEST)
    return err_set(e, ERR_INPUT, "PyTorch version %d.%d is not modelled", v / 100, v % 100);
  /* distributed.py's docstrings: "This module works only with the gloo backend" (0.2, 0.3: THD had
   * no nccl data channel), "only with the nccl and gloo backends" (0.4, 1.0). */
  if (v < V_PY_NCCL && k->pg != REDUCER_PG_GLOO)
    return err_set(e, ERR_INPUT, "--backend %s: DDP in PyTorch %s works only with the gloo backend (its distributed.py; "
                   "torch.distributed had no nccl process group before 0.4)", k->pg == REDUCER_PG_NCCL ? "nccl" : "mpi",
                   reducer_version_name(v, vb, sizeof vb));
  if (v < V_CPP && k->pg == REDUCER_PG_MPI)
    return err_set(e, ERR_INPUT, "--backend mpi: DDP in PyTorch %s works only with the nccl and gloo backends",
                   reducer_version_name(v, vb, sizeof vb));
  if (k->bucket_cap_mb > 0 && (rc = needs(v, V_C10D, "bucket_cap_mb (--bucket-cap-mb)", e))) return rc;
  if (k->first_bucket_mb > 0 && (rc = needs(v, V_CPP, "the first bucket's size (--first-bucket-mb)", e))) return rc;
  if (k->find_unused_parameters && (rc = needs(v, V_CPP, "find_unused_parameters", e))) return rc;
  if (k->no_broadcast_buffers && (rc = needs(v, V_PY_NCCL, "broadcast_buffers=False (--no-broadcast-buffers)", e))) return rc;
  if (k->static_graph && (rc = needs(v, V_STATIC_GRAPH, "static_graph", e))) return rc;
  if (k->ncap_list && (rc = needs(v, V_CAP_LIST, "bucket_cap_mb_list", e))) return rc;
  if (bucket_view && (rc = needs(v, V_BUCKET_VIEW, "gradient_as_bucket_view", e))) return rc;
  if (comm_hook == 1 && (rc = needs(v, V_FP16_HOOK, "fp16_compress_hook", e))) return rc;
  if (comm_hook == 2 && (rc = needs(v, V_BF16_HOOK, "bf16_compress_hook", e))) return rc;
  if (k->ncap_list < 0 || k->ncap_list > REDUCER_MAX_LIMITS)
    return err_set(e, ERR_INPUT, "bucket_cap_mb_list has %d entries (at most %d)", k->ncap_list, REDUCER_MAX_LIMITS);
  for (int i = 0; i < k->ncap_list; i++)
    if (!(k->cap_list_mb[i] > 0 && k->cap_list_mb[i] <= 1e9) || bucket_mb_to_bytes(k->cap_list_mb[i]) == 0)
      return err_set(e, ERR_INPUT, "bucket_cap_mb_list entry %d (%g) is not from one byte to 1e9 MB", i + 1, k->cap_list_mb[i]);
  return ERR_OK;
}

static int rebuilds(const reducer_knobs *k) {
  int v = version_of(k);
  if (v < V_REBUILD) return 0;
  return !k->find_unused_parameters || (k->static_graph && v >= V_STATIC_GRAPH);
}

int reducer_steady_iteration(const reducer_knobs *k) {
  if (!rebuilds(k)) return 1;
  return k->static_graph ? 3 : 2;
}

/* The limits for bucket_cap_mb (given or not) and the first bucket: [first, cap] or [cap]. */
static void cap_limits(const reducer_knobs *k, reducer_iter *out) {
  int v = version_of(k);
  int given = k->bucket_cap_mb > 0;
  size_t cap = bucket_mb_to_bytes(given ? k->bucket_cap_mb : REDUCER_DEFAULT_CAP_MB);
  size_t first = bucket_mb_to_bytes(k->first_bucket_mb > 0 ? k->first_bucket_mb : REDUCER_FIRST_BUCKET_MB);
  if (given && v >= V_CAP_CAPS_FIRST) first = cap;
  if (v >= V_FIRST_BELOW_CAP && first >= cap) first = cap;
  out->nlimits = 2;
  out->limits[0] = first;
  out->limits[1] = cap;
}

size_t reducer_buffer_chunk_bytes(int version) {
  int v = release(version);
  return v >= V_C10D ? bucket_mb_to_bytes(250.0) : v >= V_PY_NCCL ? bucket_mb_to_bytes(10.0) : v >= V_PY_SYNC ? SIZE_MAX : 0;
}

double reducer_cap_mb(const reducer_knobs *k) {
  int v = version_of(k);
  if (v >= V_C10D) return k->bucket_cap_mb > 0 ? k->bucket_cap_mb : REDUCER_DEFAULT_CAP_MB;
  return v >= V_PY_NCCL && k->pg == REDUCER_PG_NCCL ? 256.0 : 1.0;
}

/* Before the C++ Reducer: the same buckets in every iteration (docs/reducer.md cites each line). */
static void python_ddp(const reducer_knobs *k, int v, reducer_iter *out) {
  out->layout = REDUCER_CONSTRUCTION;
  out->nlimits = 1;
  out->limits[0] = bucket_mb_to_bytes(reducer_cap_mb(k)); /* bucket_bytes_cap = 1 * MB; 0.4 nccl 256 MB; 1.0's cap */
  if (v < V_PY_NCCL) { /* 0.2, 0.3 __init__: a new bucket once bucket_bytes >= bucket_bytes_cap */
    out->fit = BUCKET_FIT_REACH;
    out->order = BUCKET_ORDER_BY_READY;
    out->one_dtype = 1;
    out->work = REDUCER_WORK_THREAD;
  } else if (v < V_C10D && k->pg == REDUCER_PG_NCCL) { /* 0.4 _register_nccl_grad_hook: reduction_fn_nccl */
    /* nccl_reduce_bucket_size = 256 * MB (reducer_cap_mb) */
    out->fit = BUCKET_FIT_BELOW;
    out->order = BUCKET_ORDER_CLOSED;
    out->delayed = 1;
    out->work = REDUCER_WORK_AFTER;
  } else if (v < V_C10D) { /* 0.4 __init__: _take_tensors(module.parameters(), bucket_bytes_cap) */
    out->fit = BUCKET_FIT_BELOW;
    out->order = BUCKET_ORDER_BY_READY;
    out->work = REDUCER_WORK_THREAD;
  } else { /* 1.0 _ddp_init_helper: dist._dist_bucket_tensors(params, int(bucket_bytes_cap)) */
    out->fit = BUCKET_FIT_REACH;
    out->order = BUCKET_ORDER_CLOSED_REVERSED;
    out->work = REDUCER_WORK_QUEUED;
  }
}

void reducer_walk(const reducer_iter *it, bucket_walk *w) {
  *w = (bucket_walk){.limits = it->limits, .nlimits = it->nlimits, .fit = it->fit, .order = it->order, .one_dtype = it->one_dtype};
}

void reducer_iteration(const reducer_knobs *k, int iteration, reducer_iter *out) {
  int v = version_of(k), steady = reducer_steady_iteration(k);
  memset(out, 0, sizeof *out);
  if (v < V_CPP) {
    python_ddp(k, v, out);
    return;
  }
  if (iteration <= 0) iteration = steady;
  out->delayed = k->static_graph && v >= V_STATIC_GRAPH && iteration == 1;
  out->layout = rebuilds(k) && iteration >= steady ? REDUCER_REBUILT : REDUCER_CONSTRUCTION;
  out->fit = BUCKET_FIT_REACH;
  out->order = out->layout == REDUCER_REBUILT ? BUCKET_ORDER_READY : BUCKET_ORDER_SORTED_REVERSED;
  out->work = REDUCER_WORK_REDUCER;
  if (k->ncap_list > 0 && v >= V_CAP_LIST) {
    out->nlimits = k->ncap_list;
    for (int i = 0; i < k->ncap_list; i++) out->limits[i] = bucket_mb_to_bytes(k->cap_list_mb[i]);
    return;
  }
  if (out->layout == REDUCER_CONSTRUCTION && v >= V_SINGLE_FIRST &&
      (!k->find_unused_parameters || k->static_graph)) {
    out->nlimits = 1; /* [sys.maxsize]: one bucket per dtype */
    out->limits[0] = SIZE_MAX;
    return;
  }
  cap_limits(k, out);
}

const char *reducer_iter_name(const reducer_iter *it, char *buf, size_t n) {
  int single = it->nlimits == 1 && it->limits[0] == SIZE_MAX;
  snprintf(buf, n, "%s%s%s", single ? "one bucket per dtype" : it->layout == REDUCER_REBUILT ? "rebuilt buckets" : "construction-time buckets",
           it->work == REDUCER_WORK_THREAD ? ", a reduction thread each" : "", it->delayed ? ", all after backward" : "");
  return buf;
}
