#include "reducer.h"

#include <stdint.h>
#include <stdio.h>

#include "bucket.h"

/* Releases at which a behaviour starts (docs/reducer.md cites the source of each). */
enum {
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
    return err_set(e, ERR_INPUT, "PyTorch %d.%d is not modelled: releases 0.2 to %d.%d are (DDP's Reducer from 1.1; docs/reducer.md)",
                   major, minor, REDUCER_VERSION_LATEST / 100, REDUCER_VERSION_LATEST % 100);
  *version = v;
  return ERR_OK;
}

int reducer_fused_copy(int version) { return release(version) >= REDUCER_VERSION_FUSED_COPY; }

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

int reducer_check(const reducer_knobs *k, int bucket_view, int comm_hook, err_t *e) {
  int v = version_of(k), rc;
  if (v < REDUCER_VERSION_MIN && v >= REDUCER_VERSION_OLDEST)
    return err_set(e, ERR_INPUT, "DDP's C++ Reducer is modelled from PyTorch 1.1; %d.%d only for DataParallel (framework dp)",
                   v / 100, v % 100);
  if (v < REDUCER_VERSION_MIN || v > REDUCER_VERSION_LATEST)
    return err_set(e, ERR_INPUT, "PyTorch version %d.%d is not modelled", v / 100, v % 100);
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

void reducer_iteration(const reducer_knobs *k, int iteration, reducer_iter *out) {
  int v = version_of(k), steady = reducer_steady_iteration(k);
  if (iteration <= 0) iteration = steady;
  out->delayed = k->static_graph && v >= V_STATIC_GRAPH && iteration == 1;
  out->layout = rebuilds(k) && iteration >= steady ? REDUCER_REBUILT : REDUCER_CONSTRUCTION;
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
  snprintf(buf, n, "%s%s", single ? "one bucket per dtype" : it->layout == REDUCER_REBUILT ? "rebuilt buckets" : "construction-time buckets",
           it->delayed ? ", all after backward" : "");
  return buf;
}
