/* ktrace: a PyTorch profiler trace read (ktrace.h). The trace fields and their sources:
 * docs/calib.md, "import kineto". */
#include "ktrace.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#define NOMEM(e) err_set((e), ERR_NOMEM, "out of memory")

/* The whole file, gunzipped when it is gzip data (gzread passes other data through as is). */
static int read_all(const char *path, char **out, size_t *len, err_t *e) {
  *out = NULL;
  gzFile f = gzopen(path, "rb");
  if (!f) return err_set(e, ERR_IO, "%s: cannot read", path);
  size_t cap = 1 << 20, n = 0;
  char *buf = malloc(cap + 1);
  int got;
  while (buf) {
    if (cap - n < (1 << 16)) {
      char *nb = cap > ((size_t)1 << 33) ? NULL : realloc(buf, 2 * cap + 1);
      if (!nb) break;
      buf = nb, cap *= 2;
    }
    if ((got = gzread(f, buf + n, (unsigned)(cap - n < (1u << 30) ? cap - n : (1u << 30)))) <= 0) break;
    n += (size_t)got;
  }
  int zerr = Z_OK;
  const char *zmsg = buf ? gzerror(f, &zerr) : "";
  char why[128];
  snprintf(why, sizeof why, "%s", zmsg ? zmsg : "");
  int closed = gzclose_r(f);
  if (!buf) return NOMEM(e);
  if (zerr != Z_OK || closed != Z_OK) {
    free(buf);
    return err_set(e, ERR_INPUT, "%s: truncated or corrupt gzip data (zlib: %s)", path,
                   *why ? why : "unexpected end of file");
  }
  buf[n] = '\0';
  *out = buf, *len = n;
  return ERR_OK;
}

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }
static double num(const cJSON *o, const char *k, double dflt) {
  const cJSON *v = get(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}
/* o[k] when it is a whole number in [lo, hi], else dflt: a cast of anything else is undefined. */
static long long whole(const cJSON *o, const char *k, double lo, double hi, long long dflt) {
  double v = num(o, k, NAN);
  return v >= lo && v <= hi && v == floor(v) ? (long long)v : dflt;
}
static const char *str(const cJSON *o, const char *k) {
  const cJSON *v = get(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}
/* Old traces (2021, Kineto 0.1) use "Kernel", "Runtime", "Operator"; newer ones lower case. */
static int cat_is(const cJSON *ev, const char *a, const char *b) {
  const char *c = str(ev, "cat");
  return c && (strcmp(c, a) == 0 || (b && strcmp(c, b) == 0));
}
/* s holds w, ignoring case (strcasestr is a GNU extension). */
static int has_ci(const char *s, const char *w) {
  size_t n = strlen(w);
  for (; s && *s; s++)
    if (!strncasecmp(s, w, n)) return 1;
  return 0;
}
static int has_nccl(const char *s) { return has_ci(s, "nccl"); }

int ktrace_dtype_size(const char *d) {
  if (!d) return 0;
  static const struct { const char *name; int size; } t[] = {
      {"bfloat16", 2}, {"half", 2}, {"float16", 2}, {"double", 8}, {"float64", 8}, {"float", 4},
      {"long", 8},     {"int64", 8}, {"short", 2},  {"int16", 2},  {"uint8", 1},  {"int8", 1},
      {"int", 4},      {"char", 1},  {"byte", 1},   {"bool", 1}}; /* in this order: "int" last of the ints */
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (has_ci(d, t[i].name)) return t[i].size;
  return 0;
}

/* "allreduce", "nccl:all_reduce", "_reduce_scatter_base", "ncclKernel_AllReduce_RING_LL..." into
 * one spelling: lower case without underscores, matched on its start. */
static void coll_of(const char *s, char *out, size_t len) {
  char flat[64] = "";
  size_t k = 0;
  if (!strncmp(s, "nccl:", 5)) s += 5;
  else if (!strncmp(s, "ncclKernel_", 11)) s += 11;
  else if (!strncmp(s, "ncclDevKernel_", 14)) s += 14;
  for (; *s && *s != '(' && k + 1 < sizeof flat; s++)
    if (*s != '_') flat[k++] = (char)tolower((unsigned char)*s);
  flat[k] = '\0';
  static const struct { const char *flat, *name; } t[] = {
      {"allreduce", "all_reduce"},         {"broadcast", "broadcast"}, {"allgather", "all_gather"},
      {"reducescatter", "reduce_scatter"}, {"alltoall", "all_to_all"}, {"sendrecv", "send_recv"},
      {"reduce", "reduce"}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strncmp(flat, t[i].flat, strlen(t[i].flat))) {
      snprintf(out, len, "%s", t[i].name);
      return;
    }
  snprintf(out, len, "%s", *flat ? flat : "unknown");
}

typedef struct {
  double ts, end, dur; /* dur as recorded: end - ts loses digits at the trace clock's magnitude */
  const cJSON *ev;
} span;
static int by_ts(const void *a, const void *b) {
  double x = ((const span *)a)->ts, y = ((const span *)b)->ts;
  return (x > y) - (x < y);
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median(double *v, size_t n) {
  if (!n) return 0;
  qsort(v, n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A runtime call by its correlation id, the link Kineto draws from a launch to its kernel. */
typedef struct {
  double corr;
  const cJSON *ev;
} corr_ent;
static int by_corr(const void *a, const void *b) {
  double x = ((const corr_ent *)a)->corr, y = ((const corr_ent *)b)->corr;
  return (x > y) - (x < y);
}
static const cJSON *launch_of(const corr_ent *c, size_t n, const cJSON *kernel) {
  double k = num(get(kernel, "args"), "correlation", -1);
  if (k < 0) return NULL;
  corr_ent key = {k, NULL}, *hit = bsearch(&key, c, n, sizeof *c, by_corr);
  return hit ? hit->ev : NULL;
}

/* The bytes of a record_function range's tensors ("Input Dims", "Input type"), where recorded. */
static double annotation_bytes(const cJSON *ann) {
  const cJSON *args = get(ann, "args"), *dims = get(args, "Input Dims"), *types = get(args, "Input type");
  double total = 0;
  for (int i = 0; i < cJSON_GetArraySize(dims); i++) {
    const cJSON *d = cJSON_GetArrayItem(dims, i), *x;
    const cJSON *ty = cJSON_GetArrayItem(types, i);
    int size = ktrace_dtype_size(cJSON_IsString(ty) ? ty->valuestring : NULL);
    if (!cJSON_IsArray(d) || !size || !cJSON_GetArraySize(d)) continue;
    double prod = 1;
    cJSON_ArrayForEach(x, d) prod *= cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble == floor(x->valuedouble)
                                          ? x->valuedouble
                                          : NAN; /* a dim is a whole number: the bytes are too */
    total += prod * size;
  }
  return total > 0 && total <= 1e15 ? total : 0; /* NaN (a bad dim) and absurd sizes: not recorded */
}

/* The `nccl:*` record_function range on the launching thread that holds the launch call. */
static const cJSON *annotation_of(const span *ann, size_t nann, const cJSON *launch) {
  if (!launch) return NULL;
  double ts = num(launch, "ts", -1);
  const cJSON *tid = get(launch, "tid");
  for (size_t i = 0; i < nann; i++) {
    const cJSON *at = get(ann[i].ev, "tid");
    if (ann[i].ts <= ts && ts <= ann[i].end && tid && at && cJSON_Compare(tid, at, 1)) return ann[i].ev;
  }
  return NULL;
}

static int step_of(const span *steps, size_t n, double ts) {
  for (size_t i = 0; i < n; i++)
    if (steps[i].ts <= ts && ts < steps[i].end) return (int)i;
  return -1;
}

static void read_device(const cJSON *root, int id, ktrace *t) {
  const cJSON *d;
  cJSON_ArrayForEach(d, get(root, "deviceProperties")) {
    if (whole(d, "id", 0, 1e6, -1) != id) continue;
    snprintf(t->device, sizeof t->device, "%s", str(d, "name") ? str(d, "name") : "");
    t->sm_count = (int)whole(d, "numSms", 0, 1e6, 0);
    t->memory_bytes = num(d, "totalGlobalMem", 0);
    t->cc_major = (int)whole(d, "computeMajor", 0, 1000, 0);
    t->cc_minor = (int)whole(d, "computeMinor", 0, 1000, 0);
  }
}

static int analyse(const cJSON *root, ktrace *t, err_t *e) {
  const char *path = t->path;
  const cJSON *events = get(root, "traceEvents"), *ev;
  if (!cJSON_IsObject(root) || !cJSON_IsArray(events))
    return err_set(e, ERR_INPUT, "%s: not a Chrome trace: no \"traceEvents\" array", path);
  const cJSON *di = get(root, "distributedInfo");
  snprintf(t->backend, sizeof t->backend, "%s", str(di, "backend") ? str(di, "backend") : "");
  snprintf(t->nccl_version, sizeof t->nccl_version, "%s", str(di, "nccl_version") ? str(di, "nccl_version") : "");
  t->rank = (int)whole(di, "rank", 0, 1e7, -1);
  t->world_size = (int)whole(di, "world_size", 1, 1e7, -1);

  size_t n = (size_t)cJSON_GetArraySize(events), nk = 0, nst = 0, nl = 0, nc = 0, nann = 0;
  span *kern = malloc((n + 1) * sizeof *kern), *steps = malloc((n + 1) * sizeof *steps);
  span *ann = malloc((n + 1) * sizeof *ann);
  corr_ent *corr = malloc((n + 1) * sizeof *corr);
  double *launch = malloc((n + 1) * sizeof *launch);
  int rc = ERR_OK;
  if (!kern || !steps || !ann || !corr || !launch) {
    rc = NOMEM(e);
    goto done;
  }
  cJSON_ArrayForEach(ev, events) {
    const char *name = str(ev, "name"), *ph = str(ev, "ph");
    double ts = num(ev, "ts", NAN), dur = num(ev, "dur", NAN);
    if (!name || !ph || strcmp(ph, "X") || !isfinite(ts) || !isfinite(dur) || dur < 0) continue;
    span s = {ts, ts + dur, dur, ev};
    if (cat_is(ev, "kernel", "Kernel")) kern[nk++] = s;
    else if (cat_is(ev, "cuda_runtime", "Runtime")) {
      double c = num(get(ev, "args"), "correlation", -1);
      if (c >= 0) corr[nc++] = (corr_ent){c, ev};
      if (!strcmp(name, "cudaLaunchKernel") || !strcmp(name, "cudaLaunchKernelExC")) launch[nl++] = dur * 1e-6;
    } else if (!cat_is(ev, "gpu_user_annotation", NULL) && !strncmp(name, "ProfilerStep#", 13)) {
      steps[nst++] = s;
    } else if (cat_is(ev, "user_annotation", "Operator") && !strncmp(name, "nccl:", 5)) {
      ann[nann++] = s;
    } else if (cat_is(ev, "cpu_op", "Operator")) {
      t->ncpu_ops++;
      t->nbackward += strstr(name, "Backward") || strstr(name, "backward");
    }
  }
  const cJSON *props = get(root, "deviceProperties");
  if (!nk)
    rc = err_set(e, ERR_INPUT, "%s: a CPU-only trace: no GPU kernels%s (profile with ProfilerActivity.CUDA)", path,
                 cJSON_GetArraySize(props) ? "" : " and no deviceProperties");
  else if (!nst)
    rc = err_set(e, ERR_INPUT,
                 "%s: no ProfilerStep#N ranges: not a training loop traced with a schedule and prof.step()", path);
  else if (t->ncpu_ops && !t->nbackward) /* without CPU ops (CUDA activities alone) it cannot tell */
    rc = err_set(e, ERR_INPUT, "%s: an inference trace: no backward ops (%zu CPU ops, none an autograd Backward)",
                 path, t->ncpu_ops);
  else if (!cJSON_GetArraySize(props))
    rc = err_set(e, ERR_INPUT, "%s: no \"deviceProperties\": the trace does not say which GPU ran it", path);
  if (rc) goto done;

  qsort(kern, nk, sizeof *kern, by_ts);
  qsort(steps, nst, sizeof *steps, by_ts);
  qsort(corr, nc, sizeof *corr, by_corr);
  qsort(ann, nann, sizeof *ann, by_ts);
  t->nkernels = nk;
  t->device_id = (int)whole(get(kern[0].ev, "args"), "device", 0, 1e6, 0);
  read_device(root, t->device_id, t);
  if (!*t->device) {
    rc = err_set(e, ERR_INPUT, "%s: deviceProperties has no entry with \"id\": %d, the kernels' device", path,
                 t->device_id);
    goto done;
  }

  /* NCCL kernels, their bytes and their steps */
  for (size_t i = 0; i < nk; i++) t->nnccl += has_nccl(str(kern[i].ev, "name"));
  t->nccl = calloc(t->nnccl + 1, sizeof *t->nccl);
  t->nsteps = nst;
  t->step_s = calloc(nst, sizeof *t->step_s);
  t->input_wait_s = calloc(nst, sizeof *t->input_wait_s);
  if (!t->nccl || !t->step_s || !t->input_wait_s) {
    rc = NOMEM(e);
    goto done;
  }
  size_t j = 0;
  for (size_t i = 0; i < nk; i++) {
    const cJSON *k = kern[i].ev, *args = get(k, "args");
    const char *name = str(k, "name");
    if (!has_nccl(name)) continue;
    ktrace_nccl *c = &t->nccl[j++];
    const cJSON *l = launch_of(corr, nc, k), *a = annotation_of(ann, nann, l);
    const char *cn = str(args, "Collective name");
    coll_of(cn ? cn : a ? str(a, "name") : name, c->coll, sizeof c->coll);
    snprintf(c->dtype, sizeof c->dtype, "%s", str(args, "dtype") ? str(args, "dtype") : "");
    c->start_us = kern[i].ts;
    c->dur_s = kern[i].dur * 1e-6;
    const cJSON *grid = get(args, "grid"), *g;
    double blocks = cJSON_IsArray(grid) ? 1 : -1; /* CUDA's grid: at most 2^31 x 65535 x 65535 */
    cJSON_ArrayForEach(g, grid) blocks *= cJSON_IsNumber(g) && g->valuedouble >= 1 && g->valuedouble <= 2147483647.0
                                              ? floor(g->valuedouble) : NAN;
    c->blocks = blocks >= 1 && blocks <= 1e15 ? (long)blocks : -1;
    c->in_nelems = whole(args, "In msg nelems", 0, 1e15, -1);
    c->out_nelems = whole(args, "Out msg nelems", 0, 1e15, -1);
    c->group_size = (int)whole(args, "Group size", 1, 1e7, -1);
    c->bytes_from = "";
    if (c->in_nelems >= 0 && ktrace_dtype_size(c->dtype)) {
      c->bytes = (double)c->in_nelems * ktrace_dtype_size(c->dtype);
      c->bytes_from = "kernel args";
    } else if (a && (c->bytes = annotation_bytes(a)) > 0) {
      c->bytes_from = "record_function";
    } else if ((c->bytes = (double)whole(args, "bytes", 1, 1e15, 0)) > 0) {
      c->bytes_from = "ddpsim";
    }
    c->step = step_of(steps, nst, l ? num(l, "ts", kern[i].ts) : kern[i].ts);
  }

  /* compute kernels beside an NCCL kernel or apart (NCCL kernels are few: a plain scan) */
  for (size_t i = 0; i < nk; i++) {
    if (has_nccl(str(kern[i].ev, "name"))) continue;
    double d = kern[i].dur * 1e-6;
    int over = 0;
    for (size_t q = 0; q < t->nnccl && !over; q++)
      over = kern[i].ts < t->nccl[q].start_us + t->nccl[q].dur_s * 1e6 && t->nccl[q].start_us < kern[i].end;
    t->ncompute++, t->compute_s += d;
    if (over) t->noverlap++, t->overlap_s += d;
  }

  /* steps: wall time, and the GPU idle from the step's start to the first kernel the step launched
   * (the kernels still running at its start were launched by the step before) */
  for (size_t s = 0; s < nst; s++) {
    t->step_s[s] = steps[s].dur * 1e-6;
    double busy_until = -INFINITY;
    size_t i = 0;
    for (; i < nk; i++) {
      const cJSON *l = launch_of(corr, nc, kern[i].ev);
      double at = l ? num(l, "ts", kern[i].ts) : kern[i].ts;
      if (at >= steps[s].ts && at < steps[s].end) break;
      if (kern[i].end > busy_until) busy_until = kern[i].end;
    }
    if (i == nk) continue; /* the step launched no kernel */
    double from = busy_until > steps[s].ts ? busy_until : steps[s].ts;
    t->input_wait_s[s] = kern[i].ts > from ? (kern[i].ts - from) * 1e-6 : 0;
  }

  /* launch calls: the median, and those far longer than it (blocked on a full launch queue) */
  t->nlaunch = nl;
  if (nl) {
    t->launch_median_s = median(launch, nl); /* sorts */
    t->launch_max_s = launch[nl - 1];
    size_t keep = nl;
    while (keep > 0 && launch[keep - 1] > KTRACE_BLOCKED_X * t->launch_median_s) keep--;
    t->nblocked = nl - keep;
    t->launch_unblocked_median_s = median(launch, keep);
  }
done:
  free(kern), free(steps), free(ann), free(corr), free(launch);
  return rc;
}

/* Does the text stop inside a string, an object or an array (a trace cut short: the profiler killed
 * while writing, a partial copy)? cJSON reports where it stopped, not why. */
static int ends_early(const char *s, size_t len) {
  long depth = 0;
  int in_str = 0;
  for (size_t i = 0; i < len; i++) {
    if (in_str) {
      if (s[i] == '\\') i++;
      else if (s[i] == '"') in_str = 0;
    } else if (s[i] == '"') in_str = 1;
    else if (s[i] == '{' || s[i] == '[') depth++;
    else if (s[i] == '}' || s[i] == ']') depth--;
  }
  return in_str || depth > 0;
}

int ktrace_parse(const char *text, size_t len, const char *path, ktrace *t, err_t *e) {
  memset(t, 0, sizeof *t);
  snprintf(t->path, sizeof t->path, "%s", path);
  t->rank = t->world_size = -1;
  if (!len) return err_set(e, ERR_INPUT, "%s: empty file", path);
  cJSON *root = cJSON_ParseWithLength(text, len);
  int rc;
  if (!root) {
    const char *at = cJSON_GetErrorPtr(); /* where the parse stopped */
    size_t off = at && at >= text && at <= text + len ? (size_t)(at - text) : len, line = 1;
    for (size_t i = 0; i < off && i < len; i++) line += text[i] == '\n';
    rc = err_set(e, ERR_INPUT, "%s:%zu: not valid JSON%s", path, line,
                 ends_early(text, len) ? " (the document ends early: a truncated trace?)" : "");
  } else {
    rc = analyse(root, t, e);
  }
  cJSON_Delete(root);
  return rc;
}

int ktrace_read(const char *path, ktrace *t, err_t *e) {
  memset(t, 0, sizeof *t);
  char *text;
  size_t len = 0;
  int rc = read_all(path, &text, &len, e);
  if (!rc) rc = ktrace_parse(text, len, path, t, e);
  free(text);
  return rc;
}

void ktrace_free(ktrace *t) {
  if (!t) return;
  free(t->step_s), free(t->input_wait_s), free(t->nccl);
  t->step_s = t->input_wait_s = NULL;
  t->nccl = NULL;
}

int ktrace_allreduce_sweep(const ktrace *t, size_t n, commbench_cfg *cfg, commbench_result *res, int *nranks,
                           err_t *e) {
  memset(res, 0, sizeof *res);
  memset(cfg, 0, sizeof *cfg);
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += t[i].nnccl;
  double (*pt)[2] = malloc((total + 1) * sizeof *pt);
  if (!pt) return NOMEM(e);
  size_t np = 0;
  *nranks = -1;
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < t[i].nnccl; k++) {
      const ktrace_nccl *c = &t[i].nccl[k];
      if (strcmp(c->coll, "all_reduce") || c->bytes <= 0) continue;
      pt[np][0] = c->bytes, pt[np][1] = c->dur_s, np++;
      int g = c->group_size > 0 ? c->group_size : t[i].world_size;
      if (g > *nranks) *nranks = g;
    }
  qsort(pt, np, sizeof *pt, cmp_d); /* by bytes: the first member */
  size_t sizes = 0;
  for (size_t i = 0; i < np; i++) sizes += !i || pt[i][0] != pt[i - 1][0];
  int rc = ERR_OK;
  if (*nranks < 2)
    rc = n && t[0].world_size < 0
             ? err_set(e, ERR_RUNTIME, "no NCCL all-reduce over 2 or more ranks (%zu NCCL kernel(s); no distributedInfo: "
                                       "one process)", total)
             : err_set(e, ERR_RUNTIME, "no NCCL all-reduce over 2 or more ranks (%zu NCCL kernel(s), world size %d)",
                       total, n ? t[0].world_size : -1);
  else if (sizes < 3) /* two sizes fix the ring's line exactly: nothing left for the quality gate to judge */
    rc = err_set(e, ERR_RUNTIME, "%zu all-reduce kernel(s) of %zu size(s) with known bytes: a fit needs 3 sizes or more",
                 np, sizes);
  else if (!(res->rows = calloc(sizes, sizeof *res->rows)))
    rc = NOMEM(e);
  for (size_t i = 0; !rc && i < np; i++) {
    if (i && pt[i][0] == pt[i - 1][0]) {
      commbench_row *o = &res->rows[res->nrows - 1];
      if (pt[i][1] < o->samples_s[0]) o->samples_s[0] = o->mean_s = o->median_s = o->min_s = o->max_s = pt[i][1];
      continue;
    }
    commbench_row *o = &res->rows[res->nrows];
    if (!(o->samples_s = malloc(sizeof *o->samples_s))) {
      rc = NOMEM(e);
      break;
    }
    res->nrows++;
    o->bytes = (size_t)pt[i][0];
    o->count = o->bytes / 4; /* in float32 elements, the unit of comm's sweep (recorded, never fitted) */
    o->wrong = -1;
    o->samples_s[0] = o->mean_s = o->median_s = o->min_s = o->max_s = pt[i][1];
  }
  for (size_t i = 0; !rc && i < res->nrows; i++) {
    commbench_row *o = &res->rows[i];
    o->algbw_GBps = (double)o->bytes / o->median_s * 1e-9;
    o->busbw_GBps = o->algbw_GBps * 2.0 * (*nranks - 1) / *nranks;
    res->avg_busbw_GBps += o->busbw_GBps / (double)res->nrows;
  }
  if (!rc) {
    res->nranks = *nranks;
    res->wrong = -1;
    cfg->min_bytes = res->rows[0].bytes;
    cfg->max_bytes = res->rows[res->nrows - 1].bytes;
    cfg->factor = pow((double)cfg->max_bytes / (double)cfg->min_bytes, 1.0 / (double)(res->nrows - 1)); /* mean step */
    cfg->iters = 1;
  }
  free(pt);
  return rc;
}
