#include "cost.h"

#include <gsl/gsl_interp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gemmcost.h"
#include "roofline.h"

/* ---- An op's GPU time from the profile's cost models (docs/profile.md) ---- */

/* A convolution pass measured at exactly this geometry: 1 and its time (the mean of repeats). */
static int conv_time(const profile_convtable *t, const model_op *op, long batch, double *time_s) {
  const model_conv *cv = &op->conv;
  const double g[PROFILE_CONV_GEO] = {(double)model_dim_value(cv->n, batch), cv->c, cv->h, cv->w, cv->k, cv->r,
                                      cv->s, cv->pad_h, cv->pad_w, cv->stride_h, cv->stride_w};
  int q = cv->pass - MODEL_CONV_FWD, hits = 0;
  double sum = 0;
  for (int i = 0; i < t->npts; i++)
    if (t->time_s[i][q] > 0 && memcmp(t->geo[i], g, sizeof g) == 0) sum += t->time_s[i][q], hits++;
  if (hits) *time_s = sum / hits;
  return hits > 0;
}

static int op_time(const profile_t *p, const model_op *op, long batch, model_dtype run, profile_math math, double *time_s,
                   int *extrapolated, err_t *e);

/* Where x lies in the increasing a[0..n-1]: a[*i] <= x <= a[*i + 1] with weight *w of a[*i + 1]
 * (linear in lin, else in log); clamped to the ends, returning 1 there (outside what was measured). */
static int bracket(const double *a, int n, double x, int lin, int *i, double *w) {
  if (n == 1 || x <= a[0]) return *i = 0, *w = 0, x < a[0] || (n == 1 && x != a[0]);
  if (x >= a[n - 1]) return *i = n - 2, *w = 1, x > a[n - 1];
  int k = 0;
  while (x > a[k + 1]) k++;
  *i = k;
  *w = lin ? (x - a[k]) / (a[k + 1] - a[k]) : log(x / a[k]) / log(a[k + 1] / a[k]);
  return 0;
}

/* A fused attention op (model.h, MODEL_OP_ATTN). With the precision's attention table its FLOPs
 * at the table's rate for its causality, interpolated in log(kv length) and linearly in head
 * dimension (the rate of forward and backward together prices each pass; outside the table, its
 * nearest edge, counted as extrapolated). Without one, the GEMMs of the pass at the profile's GEMM
 * costs: forward Q K^T (kv x q x d) and P V (d x q x kv) per head, half each when causal; backward
 * 2.5 times the forward's (docs/models.md, "Fused attention"). */
static int attn_time(const profile_t *p, const model_op *op, long batch, model_dtype run, profile_math math, double *time_s,
                     int *extrapolated, err_t *e) {
  const profile_attention *t = profile_attention_table(p, model_op_dtype(op, run));
  if (extrapolated) *extrapolated = 0;
  if (t) {
    int is, id;
    double ws, wd;
    int x = bracket(t->seq, t->nseq, (double)model_dim_value(op->n, batch), 0, &is, &ws);
    x |= bracket(t->dims, t->nd, (double)model_dim_value(op->k, batch), 1, &id, &wd);
    const double(*r)[PROFILE_ATTN_SEQ] = t->flops_s[op->causal ? 1 : 0];
    int is1 = t->nseq > 1 ? is + 1 : is, id1 = t->nd > 1 ? id + 1 : id;
    double lo = r[id][is] * (1 - ws) + r[id][is1] * ws, hi = r[id1][is] * (1 - ws) + r[id1][is1] * ws;
    *time_s = model_op_flops(op, batch) / (lo * (1 - wd) + hi * wd);
    if (extrapolated) *extrapolated = x;
    return ERR_OK;
  }
  model_op g[2] = {{.kind = MODEL_OP_GEMM, .m = op->n, .n = op->m, .k = op->k, .gemms = op->gemms},
                   {.kind = MODEL_OP_GEMM, .m = op->k, .n = op->m, .k = op->n, .gemms = op->gemms}};
  double sum = 0;
  for (int i = 0; i < 2; i++) {
    g[i].count = g[i].launches = 1;
    g[i].follows_run = op->follows_run;
    g[i].dtype = op->dtype;
    snprintf(g[i].name, sizeof g[i].name, "%.40s %s", op->name, i ? "P V" : "Q K^T");
    double ts;
    int x = 0;
    int rc = op_time(p, &g[i], batch, run, math, &ts, &x, e);
    if (rc) return rc;
    sum += ts;
    if (extrapolated && x) *extrapolated = 1;
  }
  *time_s = sum * (op->causal ? 0.5 : 1.0) * (op->bwd ? 2.5 : 1.0);
  return ERR_OK;
}

/* math: the fp32 GEMM math the op runs at (UNKNOWN: the profile's compute.fp32.gemm, whatever it
 * is of); the profile's table of that math prices it where it has one. */
static int op_time(const profile_t *p, const model_op *op, long batch, model_dtype run, profile_math math, double *time_s,
                   int *extrapolated, err_t *e) {
  if (op->kind == MODEL_OP_ATTN) return attn_time(p, op, batch, run, math, time_s, extrapolated, e);
  model_dtype d = model_op_dtype(op, run);
  int gemm = op->kind == MODEL_OP_GEMM;
  const profile_costmodel *c = profile_cost_model(p, d, op->kind), *m = NULL;
  if (gemm && d == MODEL_FP32 && (m = profile_fp32_gemm(p, math))) c = m;
  if (extrapolated) *extrapolated = 0;
  if (!c->present)
    return err_set(e, ERR_INPUT, "%s: no %s cost model for %s (op '%s')", profile_path(p), gemm ? "gemm" : "ewise",
                   model_dtype_name(d), op->name);
  double flops = model_op_flops(op, batch), bytes = model_op_bytes(op, batch, run);
  /* An op standing for several kernels pays the launch cost of each of them. */
  double extra = op->launches > 1 ? (double)(op->launches - 1) * c->roof.launch_s : 0;
  if (op->conv.pass != MODEL_CONV_NONE && conv_time(profile_conv_table(p, d), op, batch, time_s)) {
    *time_s += extra;
    return ERR_OK;
  }
  const profile_convclass *cc =
      op->conv.pass != MODEL_CONV_NONE
          ? profile_conv_class(p, d, op->conv.r, op->conv.s, op->conv.stride_h, op->conv.stride_w)
          : NULL;
  if (cc) {
    const gemmcost_table *ct = &cc->shapes[op->conv.pass - MODEL_CONV_FWD];
    double M = (double)model_dim_value(op->m, batch), N = (double)model_dim_value(op->n, batch),
           K = (double)model_dim_value(op->k, batch);
    if (gemmcost_inside(ct, M, N, K)) {
      *time_s = gemmcost_time(ct, M, N, K, roofline_time(&c->roof, 1, flops, bytes), NULL) + extra;
      return ERR_OK;
    }
  }
  if (!c->is_table) {
    *time_s = roofline_time(&c->roof, gemm, flops, bytes) + extra;
    return ERR_OK;
  }
  /* An exactly measured shape costs what was measured (the mean of its samples); the samples are
   * single GEMMs, so a batched one is costed by its FLOPs below. */
  double sum = 0;
  int hits = 0;
  for (int i = 0; i < c->npts; i++) {
    int same = gemm ? model_op_gemms(op, batch) == 1 && c->pm[i] == (double)model_dim_value(op->m, batch) &&
                          c->pn[i] == (double)model_dim_value(op->n, batch) &&
                          c->pk[i] == (double)model_dim_value(op->k, batch)
                    : c->pbytes[i] == bytes;
    if (same) {
      sum += c->ptime[i];
      hits++;
    }
  }
  if (hits) {
    *time_s = sum / hits + extra;
    return ERR_OK;
  }
  if (gemm) {
    /* A batched GEMM is costed by its FLOPs: as one product of the same m and n and gemms times k. */
    double M = (double)model_dim_value(op->m, batch), N = (double)model_dim_value(op->n, batch);
    double K = (double)model_dim_value(op->k, batch) * (double)model_op_gemms(op, batch);
    *time_s = gemmcost_time(&c->shapes, M, N, K, roofline_time(&c->roof, 1, flops, bytes), extrapolated) + extra;
    return ERR_OK;
  }
  double size = bytes;
  double ls = log(size);
  if (c->interp && ls >= c->logsize[0] && ls <= c->logsize[c->nuniq - 1]) {
    double rate = gsl_interp_eval(c->interp, c->logsize, c->rate, ls, NULL);
    *time_s = size / rate + extra;
    return ERR_OK;
  }
  if (extrapolated) *extrapolated = 1;
  if (c->nuniq > 0 && ls > c->logsize[c->nuniq - 1]) {
    /* Past the largest measured size, that size's rate: elementwise work past the caches runs at
     * memory's rate, which larger sizes do not raise, where the fallback, fitted over every size,
     * carries the caches' (docs/profile.md). */
    *time_s = size / c->rate[c->nuniq - 1] + extra;
    return ERR_OK;
  }
  *time_s = roofline_time(&c->roof, gemm, flops, bytes) + extra;
  return ERR_OK;
}

/* cost_op_time at fp32 GEMM math `math` (op_time). */
static int op_time_math(const profile_t *p, const model_op *op, long batch, model_dtype run, profile_math math, double *time_s,
                        int *extrapolated, err_t *e) {
  int rc = op_time(p, op, batch, run, math, time_s, extrapolated, e);
  model_dtype d = model_op_dtype(op, run);
  model_layout native;
  if (rc || op->conv.pass == MODEL_CONV_NONE || !profile_conv_layout(p, d, &native) || op->conv.layout == native)
    return rc;
  /* A convolution in the other layout than its kernels': cuDNN transposes the pass's image-side
   * operand and result into the kernels' layout and back (docs/profile.md, `conv_layout`):
   * the input x (N C H W) and the output side y (N K P Q) in every pass (fwd reads x and writes y,
   * dgrad reads dy and writes dx, wgrad reads x and dy), each read and written once, one kernel
   * each, at the precision's elementwise cost. */
  const model_conv *cv = &op->conv;
  double nb = (double)model_dim_value(cv->n, batch);
  double sizes[2] = {nb * (double)cv->c * (double)cv->h * (double)cv->w,
                     nb * (double)cv->k * (double)model_conv_p(cv) * (double)model_conv_q(cv)};
  for (int i = 0; i < 2; i++) {
    model_op t = {.kind = MODEL_OP_EWISE, .elems = {(long)sizes[i], 0, 0}, .arrays = 2, .count = 1, .launches = 1,
                  .fwops = 0, .follows_run = 0, .dtype = d};
    snprintf(t.name, sizeof t.name, "%.40s layout transpose", op->name);
    double ts;
    int x = 0;
    if ((rc = op_time(p, &t, batch, run, PROFILE_MATH_UNKNOWN, &ts, &x, e))) return rc;
    *time_s += ts;
    if (extrapolated && x) *extrapolated = 1;
  }
  return ERR_OK;
}

int cost_op_time(const profile_t *p, const model_op *op, long batch, model_dtype run, double *time_s, int *extrapolated,
                 err_t *e) {
  return op_time_math(p, op, batch, run, PROFILE_MATH_UNKNOWN, time_s, extrapolated, e);
}

/* The math PyTorch's release runs an fp32 GEMM op at on a card with TF32 (sim/reducer.h): a
 * convolution in TF32 from 1.7 (cudnn.allow_tf32), a matmul in TF32 from 1.7 to 1.11 only
 * (matmul.allow_tf32), strict otherwise. */
static profile_math fp32_math_run(const sim_config *c, const model_op *op) {
  int tf32 = op->conv.pass != MODEL_CONV_NONE ? reducer_tf32_cudnn(c->pytorch) : reducer_tf32_matmul(c->pytorch);
  return tf32 ? PROFILE_MATH_TF32 : PROFILE_MATH_STRICT;
}

/* ---- The scenario's host side, copies and input ---- */

double cost_host_launch(const sim_config *c) {
  return c->host_launch_s >= 0 ? c->host_launch_s : profile_host_launch_s(c->profile);
}

double cost_host_dispatch(const sim_config *c) {
  return c->host_dispatch_s >= 0 ? c->host_dispatch_s : profile_host_dispatch_s(c->profile);
}

double cost_host_event(const sim_config *c) {
  return c->host_event_s >= 0 ? c->host_event_s : profile_host_event_s(c->profile);
}

void cost_measured(const sim_config *c, long batch, model_dtype prec, cost_measured_info *out) {
  const model_t *m = c->model;
  profile_device d;
  profile_get_device(c->profile, &d);
  memset(out, 0, sizeof *out);
  out->ops = m->nmeasured;
  out->total = m->nops;
  out->device = m->measured.present ? m->measured.device : "";
  if (!out->ops) return;
  if (!d.name[0])
    snprintf(out->why, sizeof out->why, "profile %s does not name its device (device.name)", profile_name(c->profile));
  else if (strcmp(d.name, m->measured.device) != 0)
    snprintf(out->why, sizeof out->why, "profile %s is of another device (%.100s)", profile_name(c->profile), d.name);
  else if (batch != m->batch)
    snprintf(out->why, sizeof out->why, "they are of batch %ld, the run's is %ld", m->batch, batch);
  else if (prec != m->precision)
    snprintf(out->why, sizeof out->why, "they are of precision %s, the run's is %s", model_dtype_name(m->precision),
             model_dtype_name(prec));
  else
    out->used = 1;
}

void cost_fp32_math(const sim_config *c, model_dtype prec, cost_fp32_math_info *out) {
  const model_t *m = c->model;
  cost_measured_info mi;
  memset(out, 0, sizeof *out);
  out->math = profile_fp32_gemm_math(c->profile);
  /* Before 1.7 no release ran TF32 (nor ran on a card with it: CUDA 11 builds came with 1.7). */
  if (prec != MODEL_FP32 || out->math == PROFILE_MATH_UNKNOWN || !reducer_tf32_cudnn(c->pytorch)) return;
  cost_measured(c, sim_batch(c), prec, &mi);
  for (int i = 0; i < m->nops; i++) {
    const model_op *op = &m->ops[i];
    if (op->kind != MODEL_OP_GEMM || model_op_dtype(op, prec) != MODEL_FP32 || (mi.used && op->measured) ||
        profile_fp32_gemm(c->profile, fp32_math_run(c, op)))
      continue;
    if (op->conv.pass == MODEL_CONV_NONE) out->matmuls++;
    else out->convs++;
  }
}

/* An op's measured times, where the run is the one they were measured in (cost_measured). */
static int measured_sides(const sim_config *c, const model_op *op, long batch, model_dtype prec, double *dev_s,
                          double *host_s) {
  cost_measured_info mi;
  if (!op->measured) return 0;
  cost_measured(c, batch, prec, &mi);
  if (!mi.used) return 0;
  *dev_s = op->time_s;
  *host_s = op->host_s;
  return 1;
}

int cost_op_sides(const sim_config *c, const model_op *op, long batch, model_dtype prec, double *dev_s, double *host_s,
                  int *extrap, err_t *e) {
  if (measured_sides(c, op, batch, prec, dev_s, host_s)) return ERR_OK;
  int x = 0;
  /* A profile whose gemm says no math has no table of either (profile_fp32_gemm): its gemm prices. */
  int rc = op_time_math(c->profile, op, batch, prec, fp32_math_run(c, op), dev_s, &x, e);
  if (rc) return rc;
  *extrap += x;
  *host_s = (double)op->launches * cost_host_launch(c) + (double)op->fwops * cost_host_dispatch(c);
  return ERR_OK;
}

int cost_op(const sim_config *c, const model_op *op, long batch, model_dtype prec, double *t, int *extrap, err_t *e) {
  double one, host;
  int rc = cost_op_sides(c, op, batch, prec, &one, &host, extrap, e);
  if (rc) return rc;
  *t = (one > host ? one : host) * (double)op->count;
  return ERR_OK;
}

int cost_copy(const sim_config *c, const char *name, long numel, long arrays, long kernels, long batch, model_dtype prec, double *t,
              int *extrap, err_t *e) {
  model_op op = {.kind = MODEL_OP_EWISE, .elems = {numel, 0}, .arrays = arrays, .count = 1, .launches = kernels > 1 ? kernels : 1,
                 .follows_run = 1};
  snprintf(op.name, sizeof op.name, "%s", name);
  double host;
  return cost_op_sides(c, &op, batch, prec, t, &host, extrap, e);
}

int cost_input(const sim_config *c, const model_t *m, long batch, sim_h2d *mode_out, double *copy_s, err_t *e) {
  if (c->load_s < 0 || !isfinite(c->load_s)) return err_set(e, ERR_INPUT, "load time per batch must be >= 0");
  if (c->workers < 0 || c->workers > 256) return err_set(e, ERR_INPUT, "DataLoader workers must be 0 to 256, got %d", c->workers);
  *copy_s = 0;
  sim_h2d mode = c->h2d;
  double bytes = (double)m->input_bytes_per_sample * (double)batch;
  int have = 0;
  double lat = 0, bw = 0;
  /* The profile's copy each mode pays: a prefetch is a pinned asynchronous copy on a side stream. */
  static const profile_h2d_mode profile_mode[] = {
      [SIM_H2D_PAGEABLE] = PROFILE_H2D_PAGEABLE_SYNC, [SIM_H2D_PINNED] = PROFILE_H2D_PINNED_SYNC,
      [SIM_H2D_PINNED_ASYNC] = PROFILE_H2D_PINNED_ASYNC, [SIM_H2D_PREFETCH] = PROFILE_H2D_PINNED_ASYNC};
  if (mode == SIM_H2D_AUTO) {
    /* PyTorch's default (pin_memory=False): pageable copies, when the profile and the model say
     * what they cost; otherwise the copy is not modelled, and the report says so. */
    mode = SIM_H2D_OFF;
    if (bytes > 0 && profile_h2d(c->profile, profile_mode[SIM_H2D_PAGEABLE], &have, &lat, &bw, e) == 0 && have)
      mode = SIM_H2D_PAGEABLE;
  }
  *mode_out = mode;
  if (mode == SIM_H2D_OFF) return ERR_OK;
  if (bytes <= 0)
    return err_set(e, ERR_INPUT, "%s: the model has no 'input' line: the bytes of a sample to copy are unknown", m->path);
  int rc = profile_h2d(c->profile, profile_mode[mode], &have, &lat, &bw, e);
  if (rc) return rc;
  if (!have)
    return err_set(e, ERR_INPUT, "%s: no h2d.%s (host-to-device copy cost; ddpcalib h2d measures it)", profile_name(c->profile),
                   profile_h2d_name(profile_mode[mode]));
  *copy_s = lat + bytes / bw;
  return ERR_OK;
}
