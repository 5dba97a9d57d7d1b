#include "profile.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemmcost.h"
#include "ncclmodel.h"
#include "roofline.h"
#include "txt.h"
#include "uncert.h"

#define FORMAT_TAG "ddpsim-profile"
#define FORMAT_VERSION 1

/* compute.<precision>.conv: measured convolutions, by geometry (docs/profile.md). */
#define CONV_GEO PROFILE_CONV_GEO /* n c h w k r s pad_h pad_w stride_h stride_w */
static const char *const conv_keys[CONV_GEO] = {"n", "c", "h", "w", "k", "r", "s", "pad_h", "pad_w", "stride_h", "stride_w"};
static const char *const conv_pass_keys[3] = {"fwd_s", "dgrad_s", "wgrad_s"};

/* 1 if a convolution of filter r x s and these strides belongs to class c. */
static int conv_in_class(const profile_convclass *c, long r, long s, long stride_h, long stride_w) {
  return c->r == r && c->s == s && c->stride_h == stride_h && c->stride_w == stride_w;
}

/* comm.nccl and hop_lat_s are keyed by NCCL's algorithm and protocol names (sim/ncclmodel.h's). */
#define NALGO NCCL_NALGO
#define NPROTO NCCL_NPROTO

static int algo_index(const char *s) {
  for (int i = 0; i < NALGO; i++)
    if (strcmp(s, nccl_algo_name((nccl_algo)i)) == 0) return i;
  return -1;
}

static int proto_index(const char *s) {
  for (int i = 0; i < NPROTO; i++)
    if (strcmp(s, nccl_proto_name((nccl_proto)i)) == 0) return i;
  return -1;
}

typedef struct {
  char name[64];
  double lat_s, bw_Bps, efficiency; /* bw_Bps == 0: use efficiency * nominal */
  int shares_compute;               /* transfers are done by the cores that compute (MPI on CPUs) */
  double cpu_share;                 /* of those cores, what a collective keeps busy while it runs (0: all) */
  int has_hop[NALGO][NPROTO];
  double hop_lat_s[NALGO][NPROTO]; /* hop_lat_s.<algo>.<proto> */
} linkcost;

#define MAX_WARNINGS 8

struct profile {
  char warning[MAX_WARNINGS][384]; /* "path: text" of each `warning` a fit carries (the first 8) */
  int nwarnings;                   /* all of them */
  double host_launch_s; /* compute.host.launch_s: host-side cost of one kernel launch (0: none) */
  double host_dispatch_s; /* compute.host.dispatch_s: the framework's host cost per op (0: none) */
  double host_event_s;    /* compute.host.event_s: host cost of one CUDA event call (0: none) */
  double host_jitter_s;   /* compute.host.jitter_s: additive host noise per iteration, sd (0: none) */
  double host_reduce_Bps; /* compute.host.reduce_Bps: the host CPU summing buffers (gloo; 0: unknown) */
  profile_device device;  /* "device": the card's memory and power (0 where absent) */
  profile_jitter jitter;
  double *jitter_ratios;
  char name[128];
  char path[512];
  profile_costmodel cost[MODEL_DTYPE_COUNT][MODEL_OP_KIND_COUNT];
  profile_convtable conv[MODEL_DTYPE_COUNT];
  profile_attention attn[MODEL_DTYPE_COUNT];
  int has_conv_layout[MODEL_DTYPE_COUNT]; /* compute.<precision>.conv_layout present */
  model_layout conv_layout[MODEL_DTYPE_COUNT]; /* its `native`: the layout the convolution kernels take */
  profile_math fp32_gemm_math;                 /* compute.fp32.gemm.math */
  profile_costmodel fp32_gemm_alt;             /* compute.fp32.gemm_tf32 or gemm_strict: the other math's */
  profile_math fp32_gemm_alt_math;             /* which (UNKNOWN: none) */
  int nlinks;
  linkcost *links;
  struct {
    char mode[32];
    double lat_s, bw_Bps;
  } h2d[8];
  int nh2d;
  int has_nccl;                       /* comm.nccl present */
  int nccl_tuning_model;              /* comm.nccl.tuning_model: PROFILE_NCCL_* */
  int nccl_gpu_arch;                  /* comm.nccl.gpu_arch: PROFILE_ARCH_* (nccl-2.18) */
  int nccl_on[NALGO][NPROTO];
  double nccl_base_s[NALGO][NPROTO], nccl_bwf[NALGO][NPROTO];
};

static void costmodel_free(profile_costmodel *c) {
  free(c->pm);
  free(c->pn);
  free(c->pk);
  free(c->pbytes);
  free(c->ptime);
  free(c->logsize);
  free(c->rate);
  if (c->interp) gsl_interp_free(c->interp);
  gemmcost_free(&c->shapes);
}

void profile_destroy(profile_t *p) {
  if (!p) return;
  for (int d = 0; d < MODEL_DTYPE_COUNT; d++)
    for (int k = 0; k < MODEL_OP_KIND_COUNT; k++) costmodel_free(&p->cost[d][k]);
  costmodel_free(&p->fp32_gemm_alt);
  for (int d = 0; d < MODEL_DTYPE_COUNT; d++) {
    free(p->conv[d].geo), free(p->conv[d].time_s);
    for (int c = 0; c < p->conv[d].ncls; c++)
      for (int q = 0; q < 3; q++) gemmcost_free(&p->conv[d].cls[c].shapes[q]);
    free(p->conv[d].cls);
  }
  free(p->links);
  free(p->jitter_ratios);
  free(p);
}

const char *profile_name(const profile_t *p) { return p->name; }

static const char *const kind_names[MODEL_OP_KIND_COUNT] = {"gemm", "ewise"};

int profile_require(const profile_t *p, const model_dtype *precs, int nprec, const char *const *classes, int nclasses,
                    err_t *e) {
  for (int i = 0; i < nprec; i++)
    for (int k = 0; k < MODEL_OP_KIND_COUNT; k++)
      if (!p->cost[precs[i]][k].present)
        return err_set(e, ERR_INPUT, "%s: no %s cost model for %s (a run at %s needs compute.%s.%s)", p->path,
                       kind_names[k], model_dtype_name(precs[i]), model_dtype_name(precs[i]),
                       model_dtype_name(precs[i]), kind_names[k]);
  for (int i = 0; i < nclasses; i++) {
    double bw, lat;
    int rc = profile_link(p, classes[i], 1, &bw, &lat, e);
    if (rc) return rc;
  }
  return ERR_OK;
}

int profile_nwarnings(const profile_t *p) { return p->nwarnings; }

const char *profile_warning(const profile_t *p, int i) {
  return i >= 0 && i < p->nwarnings && i < MAX_WARNINGS ? p->warning[i] : NULL;
}

void profile_summary(const profile_t *p, char *buf, size_t len) {
  size_t n = 0;
#define ADD(...) (n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, __VA_ARGS__))
  ADD("compute");
  int any = 0;
  for (int d = 0; d < MODEL_DTYPE_COUNT; d++)
    if (p->cost[d][MODEL_OP_GEMM].present) ADD("%s %s", any++ ? "," : "", model_dtype_name((model_dtype)d));
  for (int d = 0; d < MODEL_DTYPE_COUNT; d++)
    if (!p->cost[d][MODEL_OP_GEMM].present) ADD("%s no %s", any++ ? "," : "", model_dtype_name((model_dtype)d));
  ADD("; links");
  for (int i = 0; i < p->nlinks; i++) ADD("%s %s", i ? "," : "", p->links[i].name);
  if (!p->nlinks) ADD(" none");
  if (p->jitter.kind == PROFILE_JITTER_LOGNORMAL) ADD("; jitter lognormal cv %g", p->jitter.cv);
  else if (p->jitter.kind == PROFILE_JITTER_EMPIRICAL) ADD("; jitter empirical (%d ratios)", p->jitter.nratios);
  else ADD("; no jitter");
  if (p->nh2d) ADD("; h2d");
  if (p->has_nccl) ADD("; comm.nccl");
  if (p->nwarnings) ADD("; %d poor fit(s) kept with a warning", p->nwarnings);
#undef ADD
}

/* ---- loading ---- */

/* The physical bounds of every number the schema reads (docs/profile.md, "Ranges"): wide enough
 * for any real machine, narrow enough that no value reaches SimGrid or the cost model as 1e-300 or
 * 1e308 (a latency of 1e-300 s or a bandwidth of 1e308 B/s is a typo or an overflow, never a
 * measurement). zero_ok: 0 is also allowed (a cost that is absent). */
typedef struct {
  double lo, hi;
  int zero_ok, integer;
  const char *what;
} range;

static const range R_LAT = {PROFILE_LAT_MIN_s, PROFILE_LAT_MAX_s, 1, 0, "a time in seconds"};        /* latencies, launch costs */
static const range R_TIME = {PROFILE_LAT_MIN_s, 1e5, 0, 0, "a time in seconds"};        /* a measured time */
static const range R_BW = {TXT_BW_MIN_Bps, TXT_BW_MAX_Bps, 0, 0, "a bandwidth in bytes/s"}; /* common/txt.h */
static const range R_FLOPS = {PROFILE_FLOPS_MIN, PROFILE_FLOPS_MAX, 0, 0, "a rate in flop/s"};
static const range R_FRAC = {1e-3, 1.0, 0, 0, "a fraction"};                /* efficiencies, factors */
static const range R_DIM = {1, 1e12, 0, 1, "an integer dimension"};        /* gemm m, n, k */
static const range R_BYTES = {1, 1e15, 0, 0, "a size in bytes"};
static const range R_CV = {1e-6, 0.99, 1, 0, "a coefficient of variation"}; /* lognormal jitter */
static const range R_RATIO = {PROFILE_JITTER_RATIO_MIN, PROFILE_JITTER_RATIO_MAX, 0, 0,
                              "a ratio to the mean"}; /* empirical jitter */

static int check_range(double v, const range *r, const char *path, const char *key, const char *origin, err_t *e) {
  if (isfinite(v) && ((v >= r->lo && v <= r->hi) || (r->zero_ok && v == 0)) && (!r->integer || v == floor(v)))
    return 0;
  return err_set(e, ERR_INPUT, "%s: %s%s%s must be %s from %g to %g%s, got %g", origin, path, *key ? "." : "", key,
                 r->what, r->lo, r->hi, r->zero_ok ? " (or 0)" : "", v);
}

static int get_num(const cJSON *obj, const char *key, const char *path, const char *origin, int required,
                   double def, const range *r, double *out, err_t *e) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    if (required) return err_set(e, ERR_INPUT, "%s: %s.%s is missing", origin, path, key);
    *out = def;
    return 0;
  }
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
    return err_set(e, ERR_INPUT, "%s: %s.%s must be a number", origin, path, key);
  if (check_range(v->valuedouble, r, path, key, origin, e)) return ERR_INPUT;
  *out = v->valuedouble;
  return 0;
}

static int load_roofline(const cJSON *o, int gemm, const char *path, const char *origin, roofline *r, err_t *e) {
  int rc;
  if ((rc = get_num(o, "launch_s", path, origin, 1, 0, &R_LAT, &r->launch_s, e))) return rc;
  if ((rc = get_num(o, "mem_bw_Bps", path, origin, 1, 0, &R_BW, &r->mem_bw_Bps, e))) return rc;
  if ((rc = get_num(o, "mem_efficiency", path, origin, 0, 1.0, &R_FRAC, &r->mem_efficiency, e))) return rc;
  if (gemm) {
    if ((rc = get_num(o, "peak_flops", path, origin, 1, 0, &R_FLOPS, &r->peak_flops, e))) return rc;
    if ((rc = get_num(o, "efficiency", path, origin, 1, 0, &R_FRAC, &r->efficiency, e))) return rc;
  }
  return 0;
}

static int cmp_double_pair(const void *a, const void *b) {
  const double *x = a, *y = b;
  return (x[0] > y[0]) - (x[0] < y[0]);
}

static int load_table(const cJSON *o, int gemm, double esize, const char *path, const char *origin, profile_costmodel *c,
                      err_t *e) {
  char sub[256];
  const cJSON *fb = cJSON_GetObjectItemCaseSensitive(o, "fallback");
  snprintf(sub, sizeof sub, "%s.fallback", path);
  if (!cJSON_IsObject(fb)) return err_set(e, ERR_INPUT, "%s: %s is missing (a roofline object)", origin, sub);
  const cJSON *fm = cJSON_GetObjectItemCaseSensitive(fb, "model");
  if (!cJSON_IsString(fm) || strcmp(fm->valuestring, "roofline") != 0)
    return err_set(e, ERR_INPUT, "%s: %s.model must be \"roofline\"", origin, sub);
  int rc = load_roofline(fb, gemm, sub, origin, &c->roof, e);
  if (rc) return rc;
  const cJSON *pts = cJSON_GetObjectItemCaseSensitive(o, "points");
  if (!cJSON_IsArray(pts) || cJSON_GetArraySize(pts) < 1)
    return err_set(e, ERR_INPUT, "%s: %s.points must be a non-empty array", origin, path);
  int n = cJSON_GetArraySize(pts);
  c->npts = n;
  c->ptime = calloc((size_t)n, sizeof(double));
  c->logsize = calloc((size_t)n, sizeof(double));
  c->rate = calloc((size_t)n, sizeof(double));
  double *pairs = calloc((size_t)n * 2, sizeof(double));
  if (gemm) {
    c->pm = calloc((size_t)n, sizeof(double));
    c->pn = calloc((size_t)n, sizeof(double));
    c->pk = calloc((size_t)n, sizeof(double));
  } else {
    c->pbytes = calloc((size_t)n, sizeof(double));
  }
  if (!c->ptime || !c->logsize || !c->rate || !pairs || (gemm ? !c->pm || !c->pn || !c->pk : !c->pbytes)) {
    free(pairs);
    return err_set(e, ERR_NOMEM, "%s: out of memory", origin);
  }
  int i = 0;
  const cJSON *pt;
  cJSON_ArrayForEach(pt, pts) {
    snprintf(sub, sizeof sub, "%s.points[%d]", path, i);
    double size;
    if (!cJSON_IsObject(pt)) {
      free(pairs);
      return err_set(e, ERR_INPUT, "%s: %s must be an object", origin, sub);
    }
    if ((rc = get_num(pt, "time_s", sub, origin, 1, 0, &R_TIME, &c->ptime[i], e))) goto fail;
    if (gemm) {
      if ((rc = get_num(pt, "m", sub, origin, 1, 0, &R_DIM, &c->pm[i], e))) goto fail;
      if ((rc = get_num(pt, "n", sub, origin, 1, 0, &R_DIM, &c->pn[i], e))) goto fail;
      if ((rc = get_num(pt, "k", sub, origin, 1, 0, &R_DIM, &c->pk[i], e))) goto fail;
      size = 2.0 * c->pm[i] * c->pn[i] * c->pk[i];
    } else {
      if ((rc = get_num(pt, "bytes", sub, origin, 1, 0, &R_BYTES, &c->pbytes[i], e))) goto fail;
      size = c->pbytes[i];
    }
    pairs[2 * i] = size;
    pairs[2 * i + 1] = size / c->ptime[i];
    i++;
  }
  /* Distinct sizes, sorted, rates of equal sizes averaged. */
  qsort(pairs, (size_t)n, 2 * sizeof(double), cmp_double_pair);
  int u = 0;
  for (int j = 0; j < n;) {
    int k = j;
    double sum = 0;
    while (k < n && pairs[2 * k] == pairs[2 * j]) sum += pairs[2 * k++ + 1];
    c->logsize[u] = log(pairs[2 * j]);
    c->rate[u] = sum / (k - j);
    u++;
    j = k;
  }
  free(pairs);
  c->nuniq = u;
  if (gemm) {
    /* The fit's time at each measured shape, for the shape-aware correction (sim/gemmcost.h). */
    for (int j = 0; j < n; j++) {
      double M = c->pm[j], N = c->pn[j], K = c->pk[j];
      c->rate[j] = roofline_time(&c->roof, 1, 2 * M * N * K, esize * (M * K + K * N + M * N));
    }
    if ((rc = gemmcost_build(&c->shapes, c->pm, c->pn, c->pk, c->ptime, c->rate, n, e))) return rc;
    c->is_table = 1;
    return 0;
  }
  if (u >= 2) {
    c->interp = gsl_interp_alloc(gsl_interp_linear, (size_t)u);
    if (!c->interp || gsl_interp_init(c->interp, c->logsize, c->rate, (size_t)u) != GSL_SUCCESS)
      return err_set(e, ERR_NOMEM, "%s: %s: cannot set up interpolation over %d sizes: %s", origin, path, u,
                     c->interp ? "the sizes do not increase (GSL refused them)" : "out of memory");
  }
  c->is_table = 1;
  return 0;
fail:
  free(pairs);
  return rc;
}

/* An optional `warning` string on a fit ddpcalib kept with --accept-poor-fit (docs/calib.md,
 * "Quality gates"): collected for ddpsim to report. */
static int load_warning(const cJSON *o, const char *path, const char *origin, profile_t *p, err_t *e) {
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "warning");
  if (!w) return 0;
  if (!cJSON_IsString(w)) return err_set(e, ERR_INPUT, "%s: %s.warning must be a string", origin, path);
  if (p->nwarnings < MAX_WARNINGS)
    snprintf(p->warning[p->nwarnings], sizeof p->warning[0], "%s: %s", path, w->valuestring);
  p->nwarnings++;
  return 0;
}

static int load_cost(const cJSON *o, int gemm, double esize, const char *path, const char *origin, profile_costmodel *c,
                     err_t *e) {
  if (!cJSON_IsObject(o)) return err_set(e, ERR_INPUT, "%s: %s must be an object", origin, path);
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "model");
  if (!cJSON_IsString(m)) return err_set(e, ERR_INPUT, "%s: %s.model is missing (\"roofline\" or \"table\")", origin, path);
  int rc;
  if (strcmp(m->valuestring, "roofline") == 0) rc = load_roofline(o, gemm, path, origin, &c->roof, e);
  else if (strcmp(m->valuestring, "table") == 0) rc = load_table(o, gemm, esize, path, origin, c, e);
  else return err_set(e, ERR_INPUT, "%s: %s.model '%s' is not \"roofline\" or \"table\"", origin, path, m->valuestring);
  if (rc == 0) c->present = 1;
  return rc;
}

/* compute.<precision>.conv (optional): {"source", "points": [{n, c, h, w, k, r, s, pad_h, pad_w,
 * stride_h, stride_w, and at least one of fwd_s, dgrad_s, wgrad_s}]}. */
static int load_conv(const cJSON *o, const char *dn, const roofline *fit, double esize, const char *origin,
                     profile_convtable *t, err_t *e) {
  if (!o) return 0;
  char path[64], sub[96];
  snprintf(path, sizeof path, "compute.%s.conv", dn);
  if (!cJSON_IsObject(o)) return err_set(e, ERR_INPUT, "%s: %s must be an object {source, points}", origin, path);
  const cJSON *pts = cJSON_GetObjectItemCaseSensitive(o, "points"), *pt;
  if (!cJSON_IsArray(pts) || cJSON_GetArraySize(pts) < 1)
    return err_set(e, ERR_INPUT, "%s: %s.points must be a non-empty array", origin, path);
  int n = cJSON_GetArraySize(pts), i = 0, rc = 0;
  t->geo = calloc((size_t)n, sizeof *t->geo);
  t->time_s = calloc((size_t)n, sizeof *t->time_s);
  if (!t->geo || !t->time_s) return err_set(e, ERR_NOMEM, "%s: out of memory", origin);
  static const range R_PAD = {0, 1e6, 1, 1, "an integer"};
  cJSON_ArrayForEach(pt, pts) {
    snprintf(sub, sizeof sub, "%s.points[%d]", path, i);
    if (!cJSON_IsObject(pt)) return err_set(e, ERR_INPUT, "%s: %s must be an object", origin, sub);
    for (int g = 0; g < CONV_GEO; g++)
      if ((rc = get_num(pt, conv_keys[g], sub, origin, 1, 0, g == 7 || g == 8 ? &R_PAD : &R_DIM, &t->geo[i][g], e)))
        return rc;
    const double *v = t->geo[i];
    if (v[2] + 2 * v[7] < v[5] || v[3] + 2 * v[8] < v[6])
      return err_set(e, ERR_INPUT, "%s: %s: the filter (r %g, s %g) is larger than the padded image (%g x %g)", origin,
                     sub, v[5], v[6], v[2] + 2 * v[7], v[3] + 2 * v[8]);
    int any = 0;
    for (int q = 0; q < 3; q++) {
      if ((rc = get_num(pt, conv_pass_keys[q], sub, origin, 0, 0, &R_TIME, &t->time_s[i][q], e))) return rc;
      any |= t->time_s[i][q] > 0;
    }
    if (!any) return err_set(e, ERR_INPUT, "%s: %s has none of fwd_s, dgrad_s, wgrad_s", origin, sub);
    i++;
  }
  t->npts = n;
  /* Each class's points of each pass as implicit GEMMs, the gemm fallback their fit: a convolution
   * measured at another geometry is priced from the measured convolutions of its class nearest its
   * implicit GEMM. */
  t->cls = calloc((size_t)n, sizeof *t->cls);
  double *buf = malloc((size_t)n * 5 * sizeof *buf);
  if (!t->cls || !buf) {
    free(buf);
    return err_set(e, ERR_NOMEM, "%s: out of memory", origin);
  }
  for (int j = 0; j < n; j++) {
    const double *v = t->geo[j];
    int c = 0;
    while (c < t->ncls && !conv_in_class(&t->cls[c], (long)v[5], (long)v[6], (long)v[9], (long)v[10])) c++;
    if (c == t->ncls) t->cls[t->ncls++] = (profile_convclass){(long)v[5], (long)v[6], (long)v[9], (long)v[10], {{0}}};
  }
  for (int c = 0; c < t->ncls && !rc; c++) {
    profile_convclass *cc = &t->cls[c];
    for (int q = 0; q < 3 && !rc; q++) {
      int np = 0;
      for (int j = 0; j < n; j++) {
        const double *v = t->geo[j];
        if (!(t->time_s[j][q] > 0) || !conv_in_class(cc, (long)v[5], (long)v[6], (long)v[9], (long)v[10])) continue;
        model_conv cv = {.pass = (model_conv_pass)(MODEL_CONV_FWD + q), .n = {(long)v[0], 0, 0}, .c = (long)v[1],
                         .h = (long)v[2], .w = (long)v[3], .k = (long)v[4], .r = (long)v[5], .s = (long)v[6],
                         .pad_h = (long)v[7], .pad_w = (long)v[8], .stride_h = (long)v[9], .stride_w = (long)v[10]};
        model_dim dm, dn_, dk;
        model_conv_gemm(&cv, &dm, &dn_, &dk);
        double M = (double)dm.v, N = (double)dn_.v, K = (double)dk.v;
        buf[np] = M, buf[n + np] = N, buf[2 * n + np] = K, buf[3 * n + np] = t->time_s[j][q];
        buf[4 * n + np] = roofline_time(fit, 1, 2 * M * N * K, esize * (M * K + K * N + M * N));
        np++;
      }
      rc = gemmcost_build(&cc->shapes[q], buf, buf + n, buf + 2 * n, buf + 3 * n, buf + 4 * n, np, e);
    }
  }
  free(buf);
  return rc;
}

/* compute.fp32.gemm.math (optional): "tf32" or "strict", what the GEMM costs are of; no other
 * precision has one (their tensor-core math is the only one). */
static int load_math(const cJSON *o, int d, const char *path, const char *origin, profile_t *p, err_t *e) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "math");
  if (!m) return 0;
  if (d != MODEL_FP32 || !cJSON_IsString(m) || (strcmp(m->valuestring, "tf32") && strcmp(m->valuestring, "strict")))
    return err_set(e, ERR_INPUT, "%s: %s.math: %s", origin, path,
                   d != MODEL_FP32 ? "only compute.fp32.gemm says its math (TF32 or strict)" : "must be \"tf32\" or \"strict\"");
  p->fp32_gemm_math = strcmp(m->valuestring, "tf32") ? PROFILE_MATH_STRICT : PROFILE_MATH_TF32;
  return 0;
}

/* compute.fp32.gemm_tf32 or compute.fp32.gemm_strict (optional, one of them): the GEMM costs at the
 * other math than compute.fp32.gemm's, which must say its own (docs/profile.md, "fp32 math"). */
static int load_gemm_alt(const cJSON *prec, double esize, const char *origin, profile_t *p, err_t *e) {
  static const struct {
    const char *key, *word;
    profile_math math;
  } alts[] = {{"gemm_tf32", "tf32", PROFILE_MATH_TF32}, {"gemm_strict", "strict", PROFILE_MATH_STRICT}};
  for (size_t i = 0; i < sizeof alts / sizeof *alts; i++) {
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(prec, alts[i].key);
    if (!o) continue;
    char path[64];
    snprintf(path, sizeof path, "compute.fp32.%s", alts[i].key);
    if (p->fp32_gemm_alt_math != PROFILE_MATH_UNKNOWN)
      return err_set(e, ERR_INPUT, "%s: %s: compute.fp32 has gemm_tf32 and gemm_strict; it may hold one other math", origin, path);
    if (p->fp32_gemm_math == PROFILE_MATH_UNKNOWN || p->fp32_gemm_math == alts[i].math)
      return err_set(e, ERR_INPUT, "%s: %s: compute.fp32.gemm must say its math, and the other one (%s)", origin, path,
                     p->fp32_gemm_math == PROFILE_MATH_UNKNOWN ? "it says none" : "it says the same");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "math");
    if (m && !(cJSON_IsString(m) && strcmp(m->valuestring, alts[i].word) == 0))
      return err_set(e, ERR_INPUT, "%s: %s.math: must be \"%s\", as its name says", origin, path, alts[i].word);
    int rc = load_cost(o, 1, esize, path, origin, &p->fp32_gemm_alt, e);
    if (!rc) rc = load_warning(o, path, origin, p, e);
    if (rc) return rc;
    p->fp32_gemm_alt_math = alts[i].math;
  }
  return ERR_OK;
}

/* compute.<precision>.conv_layout (optional): {"native": "nchw"|"nhwc", "source"}: the layout the
 * precision's convolution kernels take (and its conv table was measured in). */
/* An increasing array of 1..max positive numbers into out; its length, or -1. */
static int increasing(const cJSON *a, int max, double *out) {
  int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
  if (n < 1 || n > max) return -1;
  for (int i = 0; i < n; i++) {
    const cJSON *v = cJSON_GetArrayItem(a, i);
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || !isfinite(v->valuedouble) || (i && !(v->valuedouble > out[i - 1])))
      return -1;
    out[i] = v->valuedouble;
  }
  return n;
}

/* compute.<dn>.attention (optional): {"kernel", "seq": [...], "head_dims": [...], "full_tflops" and
 * "causal_tflops": one row of rates per head dimension, one rate per length}, each rate above 0 and
 * at most the precision's GEMM peak (peak_flops: a fused kernel's products run on the same units). */
static int load_attention(const cJSON *o, const char *dn, double peak_flops, const char *origin, profile_attention *out,
                          err_t *e) {
  if (!o) return 0;
  char path[64];
  snprintf(path, sizeof path, "compute.%s.attention", dn);
  if (!cJSON_IsObject(o)) return err_set(e, ERR_INPUT, "%s: %s must be an object", origin, path);
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kernel");
  if (!cJSON_IsString(k) || !k->valuestring[0] || strlen(k->valuestring) >= sizeof out->kernel)
    return err_set(e, ERR_INPUT, "%s: %s.kernel must name the kernel measured (1 to %zu characters)", origin, path,
                   sizeof out->kernel - 1);
  snprintf(out->kernel, sizeof out->kernel, "%s", k->valuestring);
  if ((out->nseq = increasing(cJSON_GetObjectItemCaseSensitive(o, "seq"), PROFILE_ATTN_SEQ, out->seq)) < 0)
    return err_set(e, ERR_INPUT, "%s: %s.seq must be 1 to %d increasing lengths above 0", origin, path, PROFILE_ATTN_SEQ);
  if ((out->nd = increasing(cJSON_GetObjectItemCaseSensitive(o, "head_dims"), PROFILE_ATTN_DIMS, out->dims)) < 0)
    return err_set(e, ERR_INPUT, "%s: %s.head_dims must be 1 to %d increasing head dimensions above 0", origin, path,
                   PROFILE_ATTN_DIMS);
  static const char *const rows[2] = {"full_tflops", "causal_tflops"};
  for (int c = 0; c < 2; c++) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, rows[c]);
    if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) != out->nd)
      return err_set(e, ERR_INPUT, "%s: %s.%s must hold one row per head dimension (%d)", origin, path, rows[c], out->nd);
    for (int d = 0; d < out->nd; d++) {
      const cJSON *r = cJSON_GetArrayItem(t, d);
      if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != out->nseq)
        return err_set(e, ERR_INPUT, "%s: %s.%s[%d] must hold one rate per length (%d)", origin, path, rows[c], d, out->nseq);
      for (int i = 0; i < out->nseq; i++) {
        const cJSON *v = cJSON_GetArrayItem(r, i);
        double f = cJSON_IsNumber(v) ? v->valuedouble * 1e12 : NAN;
        if (!(f > 0) || !(f <= peak_flops))
          return err_set(e, ERR_INPUT, "%s: %s.%s[%d][%d] must be a rate above 0 and at most the gemm peak (%g TFLOP/s)",
                         origin, path, rows[c], d, i, peak_flops / 1e12);
        out->flops_s[c][d][i] = f;
      }
    }
  }
  out->present = 1;
  return 0;
}

static int load_conv_layout(const cJSON *o, const char *dn, const char *origin, int *has, model_layout *out,
                            err_t *e) {
  if (!o) return 0;
  const cJSON *nat = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "native") : NULL;
  if (!cJSON_IsString(nat) || model_layout_parse(nat->valuestring, out))
    return err_set(e, ERR_INPUT, "%s: compute.%s.conv_layout must be an object whose \"native\" is \"nchw\" or \"nhwc\"",
                   origin, dn);
  *has = 1;
  return 0;
}

/* An {"ring": {"LL": ..., "Simple": ...}, "tree": {...}} table. With bwf == NULL (hop_lat_s) the
 * leaves are latencies in seconds; otherwise (comm.nccl) objects {base_lat_s, bw_factor}. */
static int load_algo_table(const cJSON *o, const char *origin, const char *path, int on[NALGO][NPROTO],
                           double lat[NALGO][NPROTO], double bwf[NALGO][NPROTO], err_t *e) {
  if (!o) return 0;
  char where[256];
  if (!cJSON_IsObject(o)) return err_set(e, ERR_INPUT, "%s: %s%s must be an object", origin, path, bwf ? "" : ".hop_lat_s");
  const cJSON *a;
  cJSON_ArrayForEach(a, o) {
    int ai = algo_index(a->string);
    snprintf(where, sizeof where, "%s%s.%s", path, bwf ? "" : ".hop_lat_s", a->string);
    if (ai < 0) {
      if (strcmp(a->string, "source") == 0 ||
          (bwf && (strcmp(a->string, "tuning_model") == 0 || strcmp(a->string, "gpu_arch") == 0)))
        continue;
      return err_set(e, ERR_INPUT, "%s: %s: unknown algorithm (%s)", origin, where, nccl_algo_list());
    }
    if (!cJSON_IsObject(a)) return err_set(e, ERR_INPUT, "%s: %s must be an object", origin, where);
    const cJSON *q;
    cJSON_ArrayForEach(q, a) {
      int qi = proto_index(q->string);
      char leaf[300];
      snprintf(leaf, sizeof leaf, "%s.%s", where, q->string);
      if (qi < 0) return err_set(e, ERR_INPUT, "%s: %s: unknown protocol (LL, LL128, Simple)", origin, leaf);
      int rc;
      if (!bwf) {
        if (!cJSON_IsNumber(q)) return err_set(e, ERR_INPUT, "%s: %s must be a latency in seconds", origin, leaf);
        if ((rc = check_range(q->valuedouble, &R_LAT, leaf, "", origin, e))) return rc;
        lat[ai][qi] = q->valuedouble;
      } else {
        if (!cJSON_IsObject(q)) return err_set(e, ERR_INPUT, "%s: %s must be an object {base_lat_s, bw_factor}", origin, leaf);
        if ((rc = get_num(q, "base_lat_s", leaf, origin, 1, 0, &R_LAT, &lat[ai][qi], e))) return rc;
        if ((rc = get_num(q, "bw_factor", leaf, origin, 1, 0, &R_FRAC, &bwf[ai][qi], e))) return rc;
      }
      on[ai][qi] = 1;
    }
  }
  return 0;
}

/* compute.jitter: {"model": "lognormal", "cv": 0.02} or {"model": "empirical", "ratios": [...]}. */
/* compute.host: the host's side of an op (docs/profile.md): launch_s per kernel launch, dispatch_s
 * per framework op, event_s per CUDA event call (a record or a stream's wait), jitter_s the sd of an
 * additive host delay per iteration, reduce_Bps the CPU's summing speed (gloo); each optional (0). */
static int load_host(const cJSON *host, const char *origin, profile_t *p, err_t *e) {
  if (!host) return ERR_OK;
  if (!cJSON_IsObject(host)) return err_set(e, ERR_INPUT, "%s: compute.host must be an object {launch_s, dispatch_s, event_s, jitter_s}", origin);
  int rc;
  if ((rc = get_num(host, "launch_s", "compute.host", origin, 0, 0, &R_LAT, &p->host_launch_s, e)) ||
      (rc = get_num(host, "dispatch_s", "compute.host", origin, 0, 0, &R_LAT, &p->host_dispatch_s, e)) ||
      (rc = get_num(host, "event_s", "compute.host", origin, 0, 0, &R_LAT, &p->host_event_s, e)) ||
      (rc = get_num(host, "jitter_s", "compute.host", origin, 0, 0, &R_LAT, &p->host_jitter_s, e)) ||
      (rc = get_num(host, "reduce_Bps", "compute.host", origin, 0, 0, &R_BW, &p->host_reduce_Bps, e)))
    return rc;
  return ERR_OK;
}

/* "device": {kind, name, memory_bytes, cuda_context_bytes, tdp_W, idle_W, sm_count, hbm_Bps, source},
 * each optional (docs/profile.md). */
static int load_device(const cJSON *d, const char *origin, profile_t *p, err_t *e) {
  static const range R_MEM = {1 << 20, 1e15, 0, 0, "a size in bytes"};
  static const range R_CTX = {0, 1e12, 1, 0, "a size in bytes"};
  static const range R_W = {1, 1e5, 0, 0, "a power in watts"};
  static const range R_SM = {1, 100000, 0, 1, "a count of streaming multiprocessors"};
  static const range R_HBM = {1e9, 1e14, 0, 0, "a bandwidth in bytes per second"};
  if (!d) return ERR_OK;
  if (!cJSON_IsObject(d))
    return err_set(e, ERR_INPUT, "%s: \"device\" must be an object {kind, name, memory_bytes, cuda_context_bytes, tdp_W, idle_W, sm_count, hbm_Bps}",
                   origin);
  int rc;
  profile_device *v = &p->device;
  const cJSON *kd = cJSON_GetObjectItemCaseSensitive(d, "kind");
  if (kd) {
    const char *k = cJSON_IsString(kd) ? kd->valuestring : "";
    if (strcmp(k, "gpu") == 0) v->kind = PROFILE_DEVICE_GPU;
    else if (strcmp(k, "cpu") == 0) v->kind = PROFILE_DEVICE_CPU;
    else return err_set(e, ERR_INPUT, "%s: device.kind must be \"gpu\" or \"cpu\"", origin);
  }
  if ((rc = get_num(d, "memory_bytes", "device", origin, 0, 0, &R_MEM, &v->memory_bytes, e)) ||
      (rc = get_num(d, "cuda_context_bytes", "device", origin, 0, 0, &R_CTX, &v->cuda_context_bytes, e)) ||
      (rc = get_num(d, "tdp_W", "device", origin, 0, 0, &R_W, &v->tdp_W, e)) ||
      (rc = get_num(d, "idle_W", "device", origin, 0, 0, &R_W, &v->idle_W, e)) ||
      (rc = get_num(d, "sm_count", "device", origin, 0, 0, &R_SM, &v->sm_count, e)) ||
      (rc = get_num(d, "hbm_Bps", "device", origin, 0, 0, &R_HBM, &v->hbm_Bps, e)))
    return rc;
  const cJSON *nm = cJSON_GetObjectItemCaseSensitive(d, "name");
  if (nm) {
    const char *t = cJSON_IsString(nm) ? nm->valuestring : NULL;
    size_t len = t ? strlen(t) : 0;
    for (size_t i = 0; t && i < len; i++)
      if ((unsigned char)t[i] < 0x20 || t[i] == 0x7f) t = NULL;
    if (!t || len == 0 || len >= sizeof v->name)
      return err_set(e, ERR_INPUT, "%s: device.name must be a string of 1 to %d characters without control characters",
                     origin, PROFILE_DEVICE_NAME_MAX - 1);
    memcpy(v->name, t, len + 1);
  }
  if (v->idle_W > 0 && v->tdp_W > 0 && v->idle_W > v->tdp_W)
    return err_set(e, ERR_INPUT, "%s: device.idle_W (%g) exceeds device.tdp_W (%g)", origin, v->idle_W, v->tdp_W);
  if (v->cuda_context_bytes > 0 && v->memory_bytes > 0 && v->cuda_context_bytes >= v->memory_bytes)
    return err_set(e, ERR_INPUT, "%s: device.cuda_context_bytes must be below device.memory_bytes", origin);
  return ERR_OK;
}

void profile_get_device(const profile_t *p, profile_device *out) { *out = p->device; }

const char *profile_rank_word(const profile_t *p, int plural) {
  if (p->device.kind == PROFILE_DEVICE_CPU) return plural ? "processes" : "process";
  return plural ? "GPUs" : "GPU";
}

static const char *const jitter_names[] = {[PROFILE_JITTER_NONE] = "none", [PROFILE_JITTER_LOGNORMAL] = "lognormal",
                                           [PROFILE_JITTER_EMPIRICAL] = "empirical"};

const char *profile_jitter_name(profile_jitter_kind k) { return jitter_names[k]; }

static int load_jitter(const cJSON *j, const char *origin, profile_t *p, err_t *e) {
  if (!j) return 0;
  const cJSON *m = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "model") : NULL;
  if (!cJSON_IsString(m))
    return err_set(e, ERR_INPUT, "%s: compute.jitter.model must be \"lognormal\" or \"empirical\"", origin);
  if (strcmp(m->valuestring, jitter_names[PROFILE_JITTER_LOGNORMAL]) == 0) {
    int rc = get_num(j, "cv", "compute.jitter", origin, 1, 0, &R_CV, &p->jitter.cv, e);
    if (rc) return rc;
    p->jitter.kind = p->jitter.cv > 0 ? PROFILE_JITTER_LOGNORMAL : PROFILE_JITTER_NONE;
    return 0;
  }
  if (strcmp(m->valuestring, jitter_names[PROFILE_JITTER_EMPIRICAL]) != 0)
    return err_set(e, ERR_INPUT, "%s: compute.jitter.model '%s' is not \"lognormal\" or \"empirical\"", origin, m->valuestring);
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "ratios");
  int n = cJSON_IsArray(r) ? cJSON_GetArraySize(r) : 0;
  if (n < 1) return err_set(e, ERR_INPUT, "%s: compute.jitter.ratios must be a non-empty array", origin);
  p->jitter_ratios = malloc((size_t)n * sizeof *p->jitter_ratios);
  if (!p->jitter_ratios) return err_set(e, ERR_NOMEM, "%s: out of memory", origin);
  int i = 0;
  const cJSON *v;
  cJSON_ArrayForEach(v, r) {
    char where[48];
    snprintf(where, sizeof where, "compute.jitter.ratios[%d]", i);
    if (!cJSON_IsNumber(v)) return err_set(e, ERR_INPUT, "%s: %s must be a number", origin, where);
    if (check_range(v->valuedouble, &R_RATIO, where, "", origin, e)) return ERR_INPUT;
    p->jitter_ratios[i++] = v->valuedouble;
  }
  double mean = 0;
  for (i = 0; i < n; i++) mean += p->jitter_ratios[i] / n;
  if (fabs(mean - 1) > 0.05)
    return err_set(e, ERR_INPUT, "%s: compute.jitter.ratios: each is a time over the mean time, so their mean must be 1 "
                   "(within 0.05), got %g", origin, mean);
  p->jitter.kind = PROFILE_JITTER_EMPIRICAL;
  p->jitter.ratios = p->jitter_ratios;
  p->jitter.nratios = n;
  return 0;
}

/* The deepest nesting of arrays and objects in text, strings skipped: tells a document cJSON refuses
 * for its depth alone (CJSON_NESTING_LIMIT) from one that is not JSON. */
static int json_depth(const char *text) {
  int depth = 0, deepest = 0, in_string = 0;
  for (const char *c = text; *c; c++) {
    if (in_string) {
      if (*c == '\\' && c[1]) c++;
      else if (*c == '"') in_string = 0;
    } else if (*c == '"') {
      in_string = 1;
    } else if (*c == '[' || *c == '{') {
      if (++depth > deepest) deepest = depth;
    } else if (*c == ']' || *c == '}') {
      depth--;
    }
  }
  return deepest;
}

int profile_json_parse(const char *text, size_t len, const char *origin, cJSON **out, err_t *e) {
  *out = NULL;
  if (strlen(text) != len) {
    int line = 1;
    for (const char *s = text; *s; s++) line += *s == '\n';
    return err_set(e, ERR_INPUT, "%s:%d: a NUL byte: not a JSON text file", origin, line);
  }
  const char *s = text;
  while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
  if (!*s) return err_set(e, ERR_INPUT, "%s: empty file, expected a JSON profile", origin);
  /* require_null_terminated: anything but white space after the document is an error, not ignored. */
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
  if (!root) {
    /* cJSON gives the position where parsing stopped; turn it into a line number. */
    const char *where = end ? end : cJSON_GetErrorPtr();
    int line = 1;
    if (where)
      for (const char *c = text; c < where && *c; c++) line += *c == '\n';
    /* A whole document followed by more text parses up to the document's end. */
    cJSON *first = cJSON_ParseWithOpts(text, NULL, 0);
    cJSON_Delete(first);
    if (!first && json_depth(text) > CJSON_NESTING_LIMIT)
      return err_set(e, ERR_INPUT, "%s:%d: arrays and objects nested deeper than %d levels (the most ddpsim reads)", origin, line,
                     CJSON_NESTING_LIMIT);
    return err_set(e, ERR_INPUT, "%s:%d: %s", origin, line,
                   first ? "data after the end of the JSON document" : "not valid JSON");
  }
  *out = root;
  return ERR_OK;
}

int profile_parse(const char *text, const char *origin, profile_t **out, err_t *e) {
  *out = NULL;
  cJSON *root;
  int rc = profile_json_parse(text, strlen(text), origin, &root, e);
  if (rc) return rc;
  rc = profile_from_json(root, origin, PROFILE_WHOLE, out, e);
  cJSON_Delete(root);
  return rc;
}

static int cmp_member_name(const void *a, const void *b) {
  return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* What cJSON lets through and no reader should see: a key given twice in one object (cJSON keeps
 * both and lookups find the first, while a merge would apply both) and a number that overflowed
 * to infinity (1e999, which cJSON would write back as null). Checked over the whole document,
 * free-form sections included, so whatever passes can be written back and read again. */
static int check_tree(const cJSON *node, char *path, size_t cap, const char *origin, err_t *e) {
  if (cJSON_IsNumber(node) && !isfinite(node->valuedouble))
    return err_set(e, ERR_INPUT, "%s: %s: number out of range (overflows a double)", origin, *path ? path : "(top)");
  if (!cJSON_IsObject(node) && !cJSON_IsArray(node)) return ERR_OK;
  size_t len = strlen(path), n = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, node) n++;
  if (cJSON_IsObject(node) && n > 1) {
    const cJSON **v = malloc(n * sizeof *v);
    if (!v) return err_set(e, ERR_NOMEM, "%s: out of memory", origin);
    size_t i = 0;
    cJSON_ArrayForEach(c, node) v[i++] = c;
    qsort(v, n, sizeof *v, cmp_member_name);
    for (i = 1; i < n && strcmp(v[i - 1]->string, v[i]->string) != 0; i++) {
    }
    if (i < n) {
      int rc = err_set(e, ERR_INPUT, "%s: %s%s\"%.80s\" is given twice (duplicate key)", origin, path, len ? ": " : "",
                       v[i]->string);
      free(v);
      return rc;
    }
    free(v);
  }
  size_t i = 0;
  cJSON_ArrayForEach(c, node) {
    i++;
    /* A finite number or another scalar has nothing to check: its path is written only where it
     * is needed (a profile's tables are arrays of thousands of numbers, and every interval draw is
     * checked). */
    if (!cJSON_IsObject(c) && !cJSON_IsArray(c) && !(cJSON_IsNumber(c) && !isfinite(c->valuedouble))) continue;
    if (cJSON_IsObject(node)) snprintf(path + len, cap - len, "%s%.80s", len ? "." : "", c->string);
    else snprintf(path + len, cap - len, "[%zu]", i - 1);
    int rc = check_tree(c, path, cap, origin, e);
    path[len] = '\0';
    if (rc) return rc;
  }
  return ERR_OK;
}

int profile_check_json(const cJSON *root, const char *origin, int part, err_t *e) {
  profile_t *p;
  int rc = profile_from_json(root, origin, part, &p, e);
  profile_destroy(p);
  return rc;
}

int profile_from_json(const cJSON *root, const char *origin, int part, profile_t **out, err_t *e) {
  *out = NULL;
  int rc = ERR_OK;
  profile_t *p = calloc(1, sizeof *p);
  if (!p) return err_set(e, ERR_NOMEM, "%s: out of memory", origin);
  snprintf(p->path, sizeof p->path, "%s", origin);
  char where[1024] = "";
  if ((rc = check_tree(root, where, sizeof where, origin, e))) goto fail;
  if ((rc = uncert_check(root, origin, e))) goto fail; /* docs/profile.md, "Uncertainty" */
  const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
  const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
  if (!cJSON_IsObject(root) || !cJSON_IsString(fmt) || strcmp(fmt->valuestring, FORMAT_TAG) != 0) {
    rc = err_set(e, ERR_INPUT, "%s: not a ddpsim profile (\"format\" must be \"%s\")", origin, FORMAT_TAG);
    goto fail;
  }
  if (ver && !cJSON_IsNumber(ver)) {
    rc = err_set(e, ERR_INPUT, "%s: \"version\" must be a number (%d), not %s", origin, FORMAT_VERSION,
                 cJSON_IsString(ver) ? "a string" : "another JSON type");
    goto fail;
  }
  if (!cJSON_IsNumber(ver)) {
    rc = err_set(e, ERR_INPUT, "%s: \"version\" is missing (ddpsim and ddpcalib read version %d)", origin, FORMAT_VERSION);
    goto fail;
  }
  if (ver->valuedouble != FORMAT_VERSION) {
    rc = err_set(e, ERR_INPUT, "%s: unsupported profile version %g (ddpsim and ddpcalib read version %d)", origin,
                 ver->valuedouble, FORMAT_VERSION);
    goto fail;
  }
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
  snprintf(p->name, sizeof p->name, "%s", cJSON_IsString(name) ? name->valuestring : origin);

  const cJSON *compute = cJSON_GetObjectItemCaseSensitive(root, "compute");
  const cJSON *comm = cJSON_GetObjectItemCaseSensitive(root, "comm");
  if (part && !compute && !comm) {
    rc = err_set(e, ERR_INPUT, "%s: neither \"compute\" nor \"comm\" is present", origin);
    goto fail;
  }
  if ((compute || !part) && !cJSON_IsObject(compute)) {
    rc = err_set(e, ERR_INPUT, "%s: \"compute\" is missing or not an object", origin);
    goto fail;
  }
  int any = 0;
  for (int d = 0; d < MODEL_DTYPE_COUNT; d++) {
    const char *dn = model_dtype_name((model_dtype)d);
    const cJSON *prec = cJSON_GetObjectItemCaseSensitive(compute, dn);
    if (!prec) continue;
    for (int k = 0; k < MODEL_OP_KIND_COUNT; k++) {
      char path[128];
      snprintf(path, sizeof path, "compute.%s.%s", dn, kind_names[k]);
      const cJSON *o = cJSON_GetObjectItemCaseSensitive(prec, kind_names[k]);
      if (!o) {
        rc = err_set(e, ERR_INPUT, "%s: %s is missing", origin, path);
        goto fail;
      }
      if ((rc = load_cost(o, k == MODEL_OP_GEMM, (double)model_dtype_size((model_dtype)d), path, origin,
                          &p->cost[d][k], e)))
        goto fail;
      if ((rc = load_warning(o, path, origin, p, e))) goto fail;
      if ((rc = load_math(o, d, path, origin, p, e))) goto fail;
    }
    if (d == MODEL_FP32 && (rc = load_gemm_alt(prec, (double)model_dtype_size(MODEL_FP32), origin, p, e))) goto fail;
    if ((rc = load_conv(cJSON_GetObjectItemCaseSensitive(prec, "conv"), dn, &p->cost[d][MODEL_OP_GEMM].roof,
                        (double)model_dtype_size((model_dtype)d), origin, &p->conv[d], e)))
      goto fail;
    if ((rc = load_conv_layout(cJSON_GetObjectItemCaseSensitive(prec, "conv_layout"), dn, origin, &p->has_conv_layout[d],
                               &p->conv_layout[d], e)))
      goto fail;
    if ((rc = load_attention(cJSON_GetObjectItemCaseSensitive(prec, "attention"), dn, p->cost[d][MODEL_OP_GEMM].roof.peak_flops,
                             origin, &p->attn[d], e)))
      goto fail;
    any = 1;
  }
  if (!any && !part) {
    rc = err_set(e, ERR_INPUT, "%s: \"compute\" has none of \"fp32\", \"fp16\", \"bf16\"", origin);
    goto fail;
  }

  if ((rc = load_jitter(cJSON_GetObjectItemCaseSensitive(compute, "jitter"), origin, p, e))) goto fail;
  if ((rc = load_host(cJSON_GetObjectItemCaseSensitive(compute, "host"), origin, p, e))) goto fail;

  if ((rc = load_device(cJSON_GetObjectItemCaseSensitive(root, "device"), origin, p, e))) goto fail;

  const cJSON *h2d = cJSON_GetObjectItemCaseSensitive(root, "h2d"), *hm;
  if (h2d && !cJSON_IsObject(h2d)) {
    rc = err_set(e, ERR_INPUT, "%s: \"h2d\" must be an object", origin);
    goto fail;
  }
  cJSON_ArrayForEach(hm, h2d) {
    if (strcmp(hm->string, "source") == 0 && cJSON_IsString(hm)) continue;
    char path[96];
    snprintf(path, sizeof path, "h2d.%.60s", hm->string);
    if (!cJSON_IsObject(hm) || p->nh2d == 8 || strlen(hm->string) >= sizeof p->h2d[0].mode) {
      rc = err_set(e, ERR_INPUT, "%s: %s must be an object {lat_s, bw_Bps} (at most 8 modes)", origin, path);
      goto fail;
    }
    strcpy(p->h2d[p->nh2d].mode, hm->string);
    if ((rc = get_num(hm, "lat_s", path, origin, 1, 0, &R_LAT, &p->h2d[p->nh2d].lat_s, e))) goto fail;
    if ((rc = get_num(hm, "bw_Bps", path, origin, 1, 0, &R_BW, &p->h2d[p->nh2d].bw_Bps, e))) goto fail;
    p->nh2d++;
  }

  if (comm && !cJSON_IsObject(comm)) {
    rc = err_set(e, ERR_INPUT, "%s: \"comm\" must be an object", origin);
    goto fail;
  }
  const cJSON *links = comm ? cJSON_GetObjectItemCaseSensitive(comm, "links") : NULL;
  if ((links || !part) && !cJSON_IsObject(links)) {
    rc = err_set(e, ERR_INPUT, "%s: \"comm.links\" is missing or not an object", origin);
    goto fail;
  }
  int nl = cJSON_GetArraySize(links);
  if (!part && nl == 0) {
    rc = err_set(e, ERR_INPUT, "%s: \"comm.links\" is empty: a whole profile needs the link classes its topologies "
                 "name (a part for ddpcalib merge may leave them out)", origin);
    goto fail;
  }
  p->links = calloc((size_t)(nl ? nl : 1), sizeof *p->links);
  if (!p->links) {
    rc = err_set(e, ERR_NOMEM, "%s: out of memory", origin);
    goto fail;
  }
  const cJSON *l;
  cJSON_ArrayForEach(l, links) {
    char path[160];
    linkcost *lc = &p->links[p->nlinks];
    snprintf(path, sizeof path, "comm.links.%s", l->string);
    if (!cJSON_IsObject(l)) {
      rc = err_set(e, ERR_INPUT, "%s: %s must be an object", origin, path);
      goto fail;
    }
    if (strlen(l->string) >= sizeof lc->name) {
      rc = err_set(e, ERR_INPUT, "%s: %s: link class name too long", origin, path);
      goto fail;
    }
    strcpy(lc->name, l->string);
    if ((rc = get_num(l, "lat_s", path, origin, 1, 0, &R_LAT, &lc->lat_s, e))) goto fail;
    /* Either may be absent (0 here), not both; each that is present is checked. */
    if ((rc = get_num(l, "bw_Bps", path, origin, 0, 0, &R_BW, &lc->bw_Bps, e))) goto fail;
    if ((rc = get_num(l, "efficiency", path, origin, 0, 0, &R_FRAC, &lc->efficiency, e))) goto fail;
    if (lc->bw_Bps == 0 && lc->efficiency == 0) {
      rc = err_set(e, ERR_INPUT, "%s: %s needs bw_Bps (bytes/s) or efficiency (a fraction of the nominal bandwidth)",
                   origin, path);
      goto fail;
    }
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(l, "shares_compute");
    if (sc && !cJSON_IsBool(sc)) {
      rc = err_set(e, ERR_INPUT, "%s: %s.shares_compute must be true or false", origin, path);
      goto fail;
    }
    lc->shares_compute = cJSON_IsTrue(sc);
    if ((rc = get_num(l, "cpu_share", path, origin, 0, 0, &R_FRAC, &lc->cpu_share, e))) goto fail;
    if (lc->cpu_share > 0 && !lc->shares_compute) {
      rc = err_set(e, ERR_INPUT, "%s: %s.cpu_share needs shares_compute true (it says how much of the cores it takes)", origin, path);
      goto fail;
    }
    if ((rc = load_warning(l, path, origin, p, e))) goto fail;
    if ((rc = load_algo_table(cJSON_GetObjectItemCaseSensitive(l, "hop_lat_s"), origin, path, lc->has_hop, lc->hop_lat_s,
                              NULL, e)))
      goto fail;
    p->nlinks++;
  }
  const cJSON *nccl = cJSON_GetObjectItemCaseSensitive(comm, "nccl");
  if (nccl) {
    p->has_nccl = 1;
    if ((rc = load_algo_table(nccl, origin, "comm.nccl", p->nccl_on, p->nccl_base_s, p->nccl_bwf, e))) goto fail;
    const cJSON *tm = cJSON_GetObjectItemCaseSensitive(nccl, "tuning_model");
    /* NCCL's tuning.cc refinements by release, and the GPU architecture its 2.12+ tables are keyed by. */
    static const char *const models[] = {"nccl-2.7", "nccl-2.18"}, *const archs[] = {"volta", "ampere", "hopper"};
    if (tm) {
      for (int i = 0; i < 2; i++)
        if (cJSON_IsString(tm) && strcmp(tm->valuestring, models[i]) == 0) p->nccl_tuning_model = i + 1;
      if (!p->nccl_tuning_model) {
        rc = err_set(e, ERR_INPUT, "%s: comm.nccl.tuning_model must be \"nccl-2.7\" or \"nccl-2.18\" (the refinements ddpsim knows)", origin);
        goto fail;
      }
    }
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(nccl, "gpu_arch");
    p->nccl_gpu_arch = -1;
    for (int i = 0; arch && i < 3; i++)
      if (cJSON_IsString(arch) && strcmp(arch->valuestring, archs[i]) == 0) p->nccl_gpu_arch = i;
    if ((arch && p->nccl_gpu_arch < 0) || (p->nccl_tuning_model == PROFILE_NCCL_2_18) != (arch != NULL)) {
      rc = err_set(e, ERR_INPUT, "%s: comm.nccl.gpu_arch must be \"volta\", \"ampere\" or \"hopper\", given with tuning_model \"nccl-2.18\" and only then", origin);
      goto fail;
    }
  }
  *out = p;
  return ERR_OK;
fail:
  profile_destroy(p);
  return rc;
}

int profile_load(const char *path, profile_t **out, err_t *e) {
  *out = NULL;
  char *text;
  int rc = txt_read_text(path, &text, e);
  if (rc) return rc;
  rc = profile_parse(text, path, out, e);
  free(text);
  return rc;
}

/* ---- queries ---- */

const char *profile_path(const profile_t *p) { return p->path; }

const profile_costmodel *profile_cost_model(const profile_t *p, model_dtype d, model_op_kind k) { return &p->cost[d][k]; }

const profile_convtable *profile_conv_table(const profile_t *p, model_dtype d) { return &p->conv[d]; }
const profile_attention *profile_attention_table(const profile_t *p, model_dtype d) {
  return p->attn[d].present ? &p->attn[d] : NULL;
}

const profile_convclass *profile_conv_class(const profile_t *p, model_dtype d, long r, long s, long stride_h,
                                            long stride_w) {
  for (int i = 0; i < p->conv[d].ncls; i++)
    if (conv_in_class(&p->conv[d].cls[i], r, s, stride_h, stride_w)) return &p->conv[d].cls[i];
  return NULL;
}

profile_math profile_fp32_gemm_math(const profile_t *p) { return p->fp32_gemm_math; }

const profile_costmodel *profile_fp32_gemm(const profile_t *p, profile_math math) {
  if (math == PROFILE_MATH_UNKNOWN) return NULL;
  if (p->fp32_gemm_math == math && p->cost[MODEL_FP32][MODEL_OP_GEMM].present) return &p->cost[MODEL_FP32][MODEL_OP_GEMM];
  return p->fp32_gemm_alt_math == math ? &p->fp32_gemm_alt : NULL;
}

int profile_conv_layout(const profile_t *p, model_dtype d, model_layout *native) {
  if (p->has_conv_layout[d]) *native = p->conv_layout[d];
  return p->has_conv_layout[d];
}

/* The link class named cls, or NULL. */
static const linkcost *find_link(const profile_t *p, const char *cls) {
  for (int i = 0; i < p->nlinks; i++)
    if (strcmp(p->links[i].name, cls) == 0) return &p->links[i];
  return NULL;
}

int profile_link(const profile_t *p, const char *cls, double nominal_bw_Bps, double *bw_Bps, double *lat_s,
                 err_t *e) {
  const linkcost *l = find_link(p, cls);
  if (l) {
    *bw_Bps = l->bw_Bps > 0 ? l->bw_Bps : l->efficiency * nominal_bw_Bps;
    *lat_s = l->lat_s;
    return ERR_OK;
  }
  char known[512] = "";
  for (int i = 0; i < p->nlinks; i++) {
    if (i) strncat(known, ", ", sizeof known - strlen(known) - 1);
    strncat(known, p->links[i].name, sizeof known - strlen(known) - 1);
  }
  return err_set(e, ERR_INPUT, "%s: no comm.links entry for link class '%s' (it has: %s)", p->path, cls,
                 known[0] ? known : "none");
}

int profile_get_jitter(const profile_t *p, profile_jitter *out, err_t *e) {
  (void)e;
  *out = p->jitter;
  return ERR_OK;
}

double profile_jitter_draw(const profile_jitter *j, const gsl_rng *rng) {
  if (j->kind == PROFILE_JITTER_LOGNORMAL) {
    /* Mean 1, coefficient of variation cv: sigma^2 = ln(1 + cv^2), mu = -sigma^2 / 2. */
    double s2 = log1p(j->cv * j->cv);
    return gsl_ran_lognormal(rng, -s2 / 2, sqrt(s2));
  }
  if (j->kind == PROFILE_JITTER_EMPIRICAL) return j->ratios[gsl_rng_uniform_int(rng, (unsigned long)j->nratios)];
  return 1.0;
}

/* ERR_USAGE unless a and q are values of their enums (a caller's bug: every loaded table has them all). */
static int check_algo(nccl_algo a, nccl_proto q, err_t *e) {
  if ((int)a >= 0 && a < NCCL_NALGO && (int)q >= 0 && q < NCCL_NPROTO) return ERR_OK;
  return err_set(e, ERR_USAGE, "no NCCL algorithm %d or protocol %d", (int)a, (int)q);
}

int profile_nccl(const profile_t *p, nccl_algo a, nccl_proto q, int *enabled, double *base_lat_s, double *bw_factor,
                 err_t *e) {
  if (check_algo(a, q, e)) return ERR_USAGE;
  if (!p->has_nccl) {
    /* Without comm.nccl: ring/Simple only, no base latency, full bandwidth. */
    *enabled = a == NCCL_ALGO_RING && q == NCCL_PROTO_SIMPLE;
    *base_lat_s = 0;
    *bw_factor = 1;
    return ERR_OK;
  }
  *enabled = p->nccl_on[a][q];
  *base_lat_s = p->nccl_base_s[a][q];
  *bw_factor = p->nccl_bwf[a][q];
  return ERR_OK;
}

int profile_nccl_tuning_model(const profile_t *p) { return p->nccl_tuning_model; }
int profile_nccl_gpu_arch(const profile_t *p) { return p->nccl_tuning_model == PROFILE_NCCL_2_18 ? p->nccl_gpu_arch : -1; }

int profile_hop_lat(const profile_t *p, const char *cls, nccl_algo a, nccl_proto q, double *lat_s, err_t *e) {
  if (check_algo(a, q, e)) return ERR_USAGE;
  const char *algo = nccl_algo_name(a), *proto = nccl_proto_name(q);
  const linkcost *l = find_link(p, cls);
  if (l) {
    if (l->has_hop[a][q]) *lat_s = l->hop_lat_s[a][q];
    else if (!p->has_nccl) *lat_s = l->lat_s;
    else
      return err_set(e, ERR_INPUT, "%s: comm.nccl enables %s/%s but comm.links.%s.hop_lat_s.%s.%s is missing", p->path, algo,
                     proto, cls, algo, proto);
    return ERR_OK;
  }
  double bw;
  return profile_link(p, cls, 1, &bw, lat_s, e); /* reports the missing class */
}

const char *profile_h2d_name(profile_h2d_mode m) {
  static const char *const names[PROFILE_H2D_NMODES] = {
      [PROFILE_H2D_PAGEABLE_SYNC] = "pageable_sync", [PROFILE_H2D_PINNED_SYNC] = "pinned_sync",
      [PROFILE_H2D_PINNED_ASYNC] = "pinned_async"};
  return names[m];
}

int profile_h2d(const profile_t *p, profile_h2d_mode mode, int *present, double *lat_s, double *bw_Bps, err_t *e) {
  *present = 0;
  if ((int)mode < 0 || mode >= PROFILE_H2D_NMODES) return err_set(e, ERR_USAGE, "no host-to-device copy mode %d", (int)mode);
  for (int i = 0; i < p->nh2d; i++)
    if (strcmp(p->h2d[i].mode, profile_h2d_name(mode)) == 0) {
      *present = 1;
      *lat_s = p->h2d[i].lat_s;
      *bw_Bps = p->h2d[i].bw_Bps;
    }
  return ERR_OK;
}

double profile_host_launch_s(const profile_t *p) { return p->host_launch_s; }
double profile_host_dispatch_s(const profile_t *p) { return p->host_dispatch_s; }
double profile_host_event_s(const profile_t *p) { return p->host_event_s; }
double profile_host_jitter_s(const profile_t *p) { return p->host_jitter_s; }
double profile_host_reduce_Bps(const profile_t *p) { return p->host_reduce_Bps; }

int profile_has_link(const profile_t *p, const char *cls) { return find_link(p, cls) != NULL; }

int profile_link_shares_compute(const profile_t *p, const char *cls) {
  const linkcost *l = find_link(p, cls);
  return l ? l->shares_compute : 0;
}

double profile_link_cpu_share(const profile_t *p, const char *cls) {
  const linkcost *l = find_link(p, cls);
  return l && l->shares_compute ? l->cpu_share : 0;
}

/* ---- Profiles drawn from the document's uncertainty (sim/uncert.h perturbs, this loads) ---- */

void profile_draws_free(profile_draws *d) {
  for (int s = 1; s < d->n; s++) profile_destroy((profile_t *)d->p[s]);
  free(d->p);
  d->p = NULL;
  d->n = 0;
}

int profile_draws_build(const cJSON *doc, const char *origin, const profile_t *nominal, unsigned long seed, int S,
                         profile_draws *d, err_t *e) {
  d->n = 0;
  d->p = calloc((size_t)S + 1, sizeof *d->p);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  if (!d->p || !rng) {
    gsl_rng_free(rng);
    free(d->p);
    d->p = NULL;
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  gsl_rng_set(rng, seed);
  d->p[d->n++] = nominal;
  int rc = ERR_OK;
  for (int s = 1; s <= S && !rc; s++) {
    cJSON *drawn;
    char name[600];
    snprintf(name, sizeof name, "%s (draw %d of seed %lu)", origin, s, seed);
    profile_t *p = NULL;
    if (!(rc = uncert_perturb(doc, rng, &drawn, e))) {
      rc = profile_from_json(drawn, name, PROFILE_WHOLE, &p, e);
      cJSON_Delete(drawn);
    }
    if (!rc) d->p[d->n++] = p;
  }
  gsl_rng_free(rng);
  if (rc) profile_draws_free(d);
  return rc;
}
