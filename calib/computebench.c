/* computebench: times the mLSTM phases, GEMMs and copies with the real kernels. */
#define _POSIX_C_SOURCE 200809L
#include "computebench.h"

#include <cblas.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpucopy.h"
#include "mlstm.h"
#include "wall.h"

enum { EMBED = 64, VOCAB = 256 };

const char *const computebench_precisions[] = {"fp32", "fp16", "bf16", NULL};

int computebench_check_cfg(const computebench_cfg *c, err_t *e) {
  if (c->backend != COMPUTEBENCH_CPU && c->backend != COMPUTEBENCH_CUDA)
    return err_set(e, ERR_USAGE, "--backend: cpu or cuda");
  if (c->precision < COMPUTEBENCH_FP32 || c->precision > COMPUTEBENCH_BF16)
    return err_set(e, ERR_USAGE, "--precision: fp32, fp16 or bf16");
  if (c->precision != COMPUTEBENCH_FP32 && c->backend == COMPUTEBENCH_CPU)
    return err_set(e, ERR_USAGE, "--precision %s needs --backend cuda (the CPU kernels are fp32)",
                   computebench_precisions[c->precision]);
  if (c->tf32 && (c->backend != COMPUTEBENCH_CUDA || c->precision != COMPUTEBENCH_FP32))
    return err_set(e, ERR_USAGE, "--tf32 needs --backend cuda and --precision fp32");
  if (c->nhidden < 1 || c->nbatch < 1) return err_set(e, ERR_USAGE, "--hidden and --batch need values");
  if (c->seq < 1) return err_set(e, ERR_USAGE, "--seq must be >= 1");
  if (c->iters < 1) return err_set(e, ERR_USAGE, "-n: at least one iteration");
  if (c->warmups < 0) return err_set(e, ERR_USAGE, "-w: warm-ups must be >= 0");
  if (c->gemm_max < 16) return err_set(e, ERR_USAGE, "--gemm-max must be >= 16");
  if (c->copy_max_bytes < 4096) return err_set(e, ERR_USAGE, "the largest copy must be >= 4K");
  for (size_t i = 0; i < c->nhidden; i++)
    for (size_t j = 0; j < c->nbatch; j++) {
      mlstm_shape s = {.H = (int)c->hidden[i], .E = EMBED, .V = VOCAB, .T = c->seq, .B = (int)c->batch[j]};
      if (mlstm_shape_check(&s))
        return err_set(e, ERR_USAGE, "--hidden %ld --batch %ld --seq %d: shape out of range",
                       c->hidden[i], c->batch[j], c->seq);
    }
  return ERR_OK;
}

void computebench_result_free(computebench_result *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) free(r->m[i].samples_s);
  free(r->m);
  memset(r, 0, sizeof *r);
}

/* A new measurement with room for nsamples samples. NULL when out of memory. */
static computebench_meas *meas_new(computebench_result *r, int kind, const char *name,
                                   size_t nsamples, err_t *e) {
  if (r->n == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 64;
    computebench_meas *m = realloc(r->m, cap * sizeof *m);
    if (!m) return err_set(e, ERR_NOMEM, "out of memory"), NULL;
    r->m = m;
    r->cap = cap;
  }
  computebench_meas *m = &r->m[r->n];
  memset(m, 0, sizeof *m);
  m->samples_s = calloc(nsamples, sizeof *m->samples_s);
  if (!m->samples_s) return err_set(e, ERR_NOMEM, "out of memory"), NULL;
  r->n++;
  m->kind = kind;
  snprintf(m->name, sizeof m->name, "%s", name);
  m->nsamples = nsamples;
  return m;
}

static void meas_stats(computebench_meas *m) {
  size_t n = m->nsamples;
  double *t = malloc(n * sizeof *t);
  double sum = 0, sq = 0;
  for (size_t i = 0; i < n; i++) sum += m->samples_s[i];
  m->mean_s = sum / (double)n;
  for (size_t i = 0; i < n; i++) sq += (m->samples_s[i] - m->mean_s) * (m->samples_s[i] - m->mean_s);
  m->stdev_s = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
  if (!t) { /* keep going without the order statistics rather than fail a finished run */
    m->median_s = m->min_s = m->max_s = m->mean_s;
    return;
  }
  memcpy(t, m->samples_s, n * sizeof *t);
  gsl_sort(t, 1, n);
  m->min_s = t[0];
  m->max_s = t[n - 1];
  m->median_s = gsl_stats_median_from_sorted_data(t, 1, n);
  free(t);
}

/* ---- the backend: CPU model or CUDA model behind one small interface ---- */

typedef struct {
  int cuda;
  mlstm_cpu *cpu;
  mlstm_cuda *gpu;
  double t0;
  float *a, *b, *c; /* CPU GEMM operands, sized for the largest shape */
  size_t cap;       /* floats in each */
} engine;

static int mlstm_fail(engine *g, int st, const char *what, err_t *e) {
  const char *detail = g->gpu ? mlstm_cuda_last_error(g->gpu) : "";
  return err_set(e, st == MLSTM_ENODEV ? ERR_NODEV : ERR_RUNTIME, "%s: %s%s%s", what,
                 mlstm_strerror(st), *detail ? ": " : "", detail);
}

static int timer_start(engine *g) {
  if (g->cuda) return mlstm_cuda_timer_start(g->gpu);
  g->t0 = wall_now_s();
  return MLSTM_OK;
}

static int timer_stop(engine *g, double *s) {
  if (g->cuda) return mlstm_cuda_timer_stop(g->gpu, s);
  *s = wall_now_s() - g->t0;
  return MLSTM_OK;
}

enum { PH_PREPARE, PH_FWD_STEP, PH_DEC_FWD, PH_DEC_BWD, PH_BWD_STEP, PH_WGRAD, PH_EMBED, PH_N };
static const char *phase_name[PH_N] = {"prepare",  "fwd_step", "decoder_fwd", "decoder_bwd",
                                       "bwd_step", "wgrad",    "embed_grad"};
static const mlstm_phase phase_id[PH_N] = {MLSTM_PHASE_PREPARE,     MLSTM_PHASE_FWD_STEP,
                                           MLSTM_PHASE_DECODER_FWD, MLSTM_PHASE_DECODER_BWD,
                                           MLSTM_PHASE_BWD_STEP,    MLSTM_PHASE_WGRAD,
                                           MLSTM_PHASE_EMBED_GRAD};

static int run_phase(engine *g, int ph, int t, const uint8_t *tok) {
  float loss;
  if (g->cuda) {
    switch (ph) {
    case PH_PREPARE: return mlstm_cuda_prepare(g->gpu, tok);
    case PH_FWD_STEP: return mlstm_cuda_forward_step(g->gpu, t);
    case PH_DEC_FWD: return mlstm_cuda_decoder_forward(g->gpu, NULL);
    case PH_DEC_BWD: return mlstm_cuda_decoder_backward(g->gpu, NULL, NULL);
    case PH_BWD_STEP: return mlstm_cuda_backward_step(g->gpu, t);
    case PH_WGRAD: return mlstm_cuda_weight_grads(g->gpu, NULL, NULL);
    default: return mlstm_cuda_embedding_grad(g->gpu, NULL, NULL);
    }
  }
  switch (ph) {
  case PH_PREPARE: return mlstm_cpu_prepare(g->cpu, tok);
  case PH_FWD_STEP: return mlstm_cpu_forward_step(g->cpu, t);
  case PH_DEC_FWD: return mlstm_cpu_decoder_forward(g->cpu, &loss);
  case PH_DEC_BWD: return mlstm_cpu_decoder_backward(g->cpu, NULL, NULL);
  case PH_BWD_STEP: return mlstm_cpu_backward_step(g->cpu, t);
  case PH_WGRAD: return mlstm_cpu_weight_grads(g->cpu, NULL, NULL);
  default: return mlstm_cpu_embedding_grad(g->cpu, NULL, NULL);
  }
}

/* One whole iteration, phase by phase; when rec is non-NULL each phase (each step) is timed into
 * rec[phase]->samples_s starting at index *pos[phase]. */
static int iteration(engine *g, int T, const uint8_t *tok, computebench_meas **rec, size_t *pos,
                     computebench_meas *total, size_t it, err_t *e) {
  static const int order[PH_N] = {PH_PREPARE, PH_FWD_STEP, PH_DEC_FWD, PH_DEC_BWD,
                                  PH_BWD_STEP, PH_WGRAD, PH_EMBED};
  double sum = 0;
  for (int o = 0; o < PH_N; o++) {
    int ph = order[o];
    int steps = ph == PH_FWD_STEP || ph == PH_BWD_STEP ? T : 1;
    for (int s = 0; s < steps; s++) {
      int t = ph == PH_BWD_STEP ? T - 1 - s : s;
      int st;
      double sec = 0;
      if ((st = timer_start(g))) return mlstm_fail(g, st, "timer", e);
      if ((st = run_phase(g, ph, t, tok))) return mlstm_fail(g, st, phase_name[ph], e);
      if ((st = timer_stop(g, &sec))) return mlstm_fail(g, st, "timer", e);
      sum += sec;
      if (rec) rec[ph]->samples_s[pos[ph]++] = sec;
    }
  }
  if (total) total->samples_s[it] = sum;
  return ERR_OK;
}

/* One timed GEMM C[m,n] = A[m,k] B[k,n]. */
static int gemm_once(engine *g, long m, long n, long k, double *sec, err_t *e) {
  if (g->cuda) {
    int st = mlstm_cuda_bench_gemm(g->gpu, (int)m, (int)n, (int)k, 1, sec);
    return st ? mlstm_fail(g, st, "cuBLAS GEMM", e) : ERR_OK;
  }
  double t0 = wall_now_s();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, g->a, (int)k,
              g->b, (int)n, 0.0f, g->c, (int)n);
  *sec = wall_now_s() - t0;
  return ERR_OK;
}

static int ensure_gemm_buffers(engine *g, long m, long n, long k, err_t *e) {
  if (g->cuda) return ERR_OK;
  size_t need = (size_t)(m * k > k * n ? (m * k > m * n ? m * k : m * n) : (k * n > m * n ? k * n : m * n));
  if (need <= g->cap) return ERR_OK;
  free(g->a), free(g->b), free(g->c);
  g->a = malloc(need * sizeof(float));
  g->b = malloc(need * sizeof(float));
  g->c = malloc(need * sizeof(float));
  g->cap = need;
  if (!g->a || !g->b || !g->c) {
    g->cap = 0;
    return err_set(e, ERR_NOMEM, "cannot allocate GEMM operands of %zu floats", need);
  }
  for (size_t i = 0; i < need; i++) g->a[i] = g->b[i] = (float)((i % 13) * 0.01);
  return ERR_OK;
}

static int time_gemm(engine *g, const computebench_cfg *cfg, computebench_result *r, const char *name,
                     long m, long n, long k, int H, int B,
                     void (*on_meas)(const computebench_meas *, void *), void *arg, err_t *e) {
  int rc = ensure_gemm_buffers(g, m, n, k, e);
  if (rc) return rc;
  computebench_meas *x = meas_new(r, COMPUTEBENCH_GEMM, name, (size_t)cfg->iters, e);
  if (!x) return ERR_NOMEM;
  x->m = m, x->n = n, x->k = k, x->H = H, x->B = B, x->T = H ? cfg->seq : 0;
  x->flops = 2.0 * (double)m * (double)n * (double)k;
  x->bytes = (cfg->precision == COMPUTEBENCH_FP32 ? 4.0 : 2.0) * (double)(m * k + k * n + m * n);
  double sec;
  for (int w = 0; w < cfg->warmups; w++)
    if ((rc = gemm_once(g, m, n, k, &sec, e))) return rc;
  for (int i = 0; i < cfg->iters; i++)
    if ((rc = gemm_once(g, m, n, k, &x->samples_s[i], e))) return rc;
  meas_stats(x);
  if (on_meas) on_meas(x, arg);
  return ERR_OK;
}

static void engine_free(engine *g) {
  mlstm_cpu_destroy(g->cpu);
  mlstm_cuda_destroy(g->gpu);
  g->cpu = NULL;
  g->gpu = NULL;
}

/* All of one (H, B): the mLSTM phases, then the model's GEMM shapes. */
static int run_shape(engine *g, const computebench_cfg *cfg, int H, int B, computebench_result *r,
                     void (*on_meas)(const computebench_meas *, void *), void *arg, err_t *e) {
  mlstm_shape s = {.H = H, .E = EMBED, .V = VOCAB, .T = cfg->seq, .B = B};
  char msg[256] = "";
  int st, rc = ERR_OK;
  engine_free(g);
  size_t np = mlstm_num_params(H, EMBED, VOCAB);
  float *params = malloc(np * sizeof *params);
  uint8_t *tok = malloc((size_t)(s.T + 1) * (size_t)B);
  if (!params || !tok) {
    rc = err_set(e, ERR_NOMEM, "out of memory for H=%d", H);
    goto done;
  }
  mlstm_init_params(&s, params, 2385, 0.1f);
  for (size_t i = 0; i < (size_t)(s.T + 1) * (size_t)B; i++) tok[i] = (uint8_t)((i * 37 + 11) % VOCAB);
  if (g->cuda) {
    st = mlstm_cuda_create(&s,
                           cfg->precision == COMPUTEBENCH_FP16   ? MLSTM_FP16
                           : cfg->precision == COMPUTEBENCH_BF16 ? MLSTM_BF16
                                                                 : MLSTM_FP32,
                           &g->gpu, msg, sizeof msg);
    if (!st && cfg->tf32) st = mlstm_cuda_set_tf32(g->gpu, 1);
    if (!st) st = mlstm_cuda_set_params(g->gpu, params);
  } else {
    st = mlstm_cpu_create(&s, &g->cpu, msg, sizeof msg);
    if (!st) memcpy(mlstm_cpu_params(g->cpu), params, np * sizeof *params);
  }
  if (st) {
    rc = err_set(e, st == MLSTM_ENODEV ? ERR_NODEV : ERR_RUNTIME, "mlstm H=%d B=%d: %s", H, B,
                 *msg ? msg : mlstm_strerror(st));
    goto done;
  }

  computebench_meas *rec[PH_N];
  size_t pos[PH_N] = {0};
  for (int ph = 0; ph < PH_N; ph++) {
    size_t per = ph == PH_FWD_STEP || ph == PH_BWD_STEP ? (size_t)s.T : 1;
    if (!(rec[ph] = meas_new(r, COMPUTEBENCH_MLSTM, phase_name[ph], per * (size_t)cfg->iters, e))) {
      rc = ERR_NOMEM;
      goto done;
    }
    rec[ph]->H = H, rec[ph]->B = B, rec[ph]->T = s.T;
    rec[ph]->flops = mlstm_flops(&s, phase_id[ph]);
  }
  /* meas_new may move r->m: take the pointers again once all are allocated. */
  for (int ph = 0; ph < PH_N; ph++) rec[ph] = &r->m[r->n - PH_N - 0 + ph];
  computebench_meas *total = meas_new(r, COMPUTEBENCH_MLSTM, "iteration", (size_t)cfg->iters, e);
  if (!total) {
    rc = ERR_NOMEM;
    goto done;
  }
  for (int ph = 0; ph < PH_N; ph++) rec[ph] = &r->m[r->n - 1 - PH_N + ph];
  total->H = H, total->B = B, total->T = s.T;
  total->flops = mlstm_flops(&s, MLSTM_PHASE_ITERATION);
  for (int w = 0; w < cfg->warmups; w++)
    if ((rc = iteration(g, s.T, tok, NULL, NULL, NULL, 0, e))) goto done;
  for (int i = 0; i < cfg->iters; i++)
    if ((rc = iteration(g, s.T, tok, rec, pos, total, (size_t)i, e))) goto done;
  for (int ph = 0; ph < PH_N; ph++) {
    meas_stats(rec[ph]);
    if (on_meas) on_meas(rec[ph], arg);
  }
  meas_stats(total);
  if (on_meas) on_meas(total, arg);

  /* The model's GEMMs at this shape (models/mlstm-*.model names and convention). */
  long h = H, tb = (long)s.T * B, E = EMBED, V = VOCAB;
  struct { const char *name; long m, n, k; } shapes[] = {
      {"x_ih", 4 * h, tb, E},    {"x_mih", h, tb, E},      {"mhh_h", h, B, h},
      {"hh_m", 4 * h, B, h},     {"decoder", V, tb, h},    {"d_dec_w", V, h, tb},
      {"d_h_dec", h, tb, V},     {"d_m", h, B, 4 * h},     {"d_h", h, B, h},
      {"d_w_hh", 4 * h, h, tb},  {"d_w_mhh", h, h, tb},    {"d_w_ih", 4 * h, E, tb},
      {"d_w_mih", h, E, tb},     {"d_x_ih", E, tb, 4 * h}, {"d_x_mih", E, tb, h}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    if ((rc = time_gemm(g, cfg, r, shapes[i].name, shapes[i].m, shapes[i].n, shapes[i].k, H, B,
                        on_meas, arg, e)))
      goto done;
done:
  free(params);
  free(tok);
  return rc;
}

/* One timed elementwise copy of `bytes` on the CPU. */
static int copy_cpu(size_t bytes, const computebench_cfg *cfg, double *samples, err_t *e) {
  char *src = malloc(bytes), *dst = malloc(bytes);
  if (!src || !dst) {
    free(src), free(dst);
    return err_set(e, ERR_NOMEM, "cannot allocate 2 x %zu bytes", bytes);
  }
  memset(src, 1, bytes);
  memset(dst, 0, bytes);
  for (int i = -cfg->warmups; i < cfg->iters; i++) {
    double t0 = wall_now_s();
    memcpy(dst, src, bytes);
    double t = wall_now_s() - t0;
    /* Keep the copy observable so it is not optimised away. */
    src[i & 7] = dst[bytes - 1 - (size_t)(i & 7)];
    if (i >= 0) samples[i] = t;
  }
  free(src);
  free(dst);
  return ERR_OK;
}

int computebench_run(const computebench_cfg *cfg,
                     void (*on_meas)(const computebench_meas *m, void *arg), void *arg,
                     computebench_result *out, err_t *e) {
  memset(out, 0, sizeof *out);
  int rc = computebench_check_cfg(cfg, e);
  if (rc) return rc;
  engine g = {.cuda = cfg->backend == COMPUTEBENCH_CUDA};
  if (g.cuda) {
    char ver[128];
    if ((rc = gpucopy_probe(&out->dev, ver, sizeof ver, e))) return rc;
    if (cfg->tf32 && !out->dev.tf32)
      return err_set(e, ERR_RUNTIME, "--tf32: %s has no TF32 tensor cores (compute capability 8.0 and later have)",
                     out->dev.name);
    snprintf(out->library, sizeof out->library, "cuBLAS (kernels/mlstm_cuda.cu); %s", ver);
    snprintf(out->driver, sizeof out->driver, "%s", ver);
  } else {
    if ((rc = devinfo_read(DEVINFO_CPU, &out->dev, e))) return rc;
    snprintf(out->library, sizeof out->library, "OpenBLAS: %.200s", openblas_get_config());
  }

  for (size_t i = 0; i < cfg->nhidden && !rc; i++)
    for (size_t j = 0; j < cfg->nbatch && !rc; j++)
      rc = run_shape(&g, cfg, (int)cfg->hidden[i], (int)cfg->batch[j], out, on_meas, arg, e);
  if (rc) goto done;

  /* The plain GEMM grid needs a model on CUDA (its handle and stream): keep the last one. */
  for (long m = 16; m <= cfg->gemm_max && !rc; m *= 4)
    for (long n = 16; n <= cfg->gemm_max && !rc; n *= 4)
      for (long k = 16; k <= cfg->gemm_max && !rc; k *= 4)
        rc = time_gemm(&g, cfg, out, "grid", m, n, k, 0, 0, on_meas, arg, e);
  for (size_t i = 0; i < cfg->nmodel_shapes && !rc; i++)
    rc = time_gemm(&g, cfg, out, "model", cfg->model_shapes[i][0], cfg->model_shapes[i][1], cfg->model_shapes[i][2],
                   0, 0, on_meas, arg, e);
  if (rc) goto done;

  for (long bytes = 4096; bytes <= cfg->copy_max_bytes; bytes *= 4) {
    computebench_meas *x = meas_new(out, COMPUTEBENCH_EWISE, "copy", (size_t)cfg->iters, e);
    if (!x) {
      rc = ERR_NOMEM;
      goto done;
    }
    x->bytes = 2.0 * (double)bytes;
    rc = g.cuda ? gpucopy_time(GPUCOPY_D2D, (size_t)bytes, cfg->warmups, cfg->iters, x->samples_s, e)
                : copy_cpu((size_t)bytes, cfg, x->samples_s, e);
    if (rc) goto done;
    meas_stats(x);
    if (on_meas) on_meas(x, arg);
  }
done:
  engine_free(&g);
  free(g.a), free(g.b), free(g.c);
  return rc;
}

int computebench_model_shapes(const model_t *m, long batch, long (**out)[3], size_t *n, err_t *e) {
  *n = 0;
  *out = malloc((size_t)(m->nops > 0 ? m->nops : 1) * sizeof **out);
  if (!*out) return err_set(e, ERR_NOMEM, "out of memory");
  for (int i = 0; i < m->nops; i++) {
    const model_op *op = &m->ops[i];
    if (op->kind != MODEL_OP_GEMM) continue;
    long s[3] = {model_dim_value(op->m, batch), model_dim_value(op->n, batch),
                 model_dim_value(op->k, batch) * model_op_gemms(op, batch)};
    size_t j = 0;
    while (j < *n && memcmp((*out)[j], s, sizeof s) != 0) j++;
    if (j == *n) memcpy((*out)[(*n)++], s, sizeof s);
  }
  return ERR_OK;
}
