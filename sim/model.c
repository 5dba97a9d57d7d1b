#include "model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "txt.h"

#define MAX_TOKENS 32
#define FORMAT_TAG "ddpsim-model"

const char *model_dtype_name(model_dtype d) { return d == MODEL_FP16 ? "fp16" : d == MODEL_BF16 ? "bf16" : "fp32"; }
size_t model_dtype_size(model_dtype d) { return d == MODEL_FP32 ? 4 : 2; }

int model_dtype_parse(const char *s, model_dtype *out) {
  if (strcmp(s, "fp32") == 0) *out = MODEL_FP32;
  else if (strcmp(s, "fp16") == 0) *out = MODEL_FP16;
  else if (strcmp(s, "bf16") == 0) *out = MODEL_BF16;
  else return -1;
  return 0;
}

long model_dim_value(model_dim d, long batch) { return d.per_batch ? d.v * batch + d.c : d.v; }

model_dtype model_param_dtype(const model_param *p, model_dtype run) {
  return p->follows_run ? run : p->dtype;
}

model_dtype model_op_dtype(const model_op *op, model_dtype run) {
  return op->follows_run ? run : op->dtype;
}

size_t model_param_bytes(const model_t *m, int i, model_dtype run) {
  const model_param *p = &m->params[i];
  return (size_t)p->numel * model_dtype_size(model_param_dtype(p, run));
}

int model_foreach_ops(const model_t *m) {
  int n = 0;
  for (int i = 0; i < m->nops; i++) n += m->ops[i].phase == MODEL_PHASE_OPTIMIZER && strstr(m->ops[i].name, "._foreach_") != NULL;
  return n;
}

long model_total_params(const model_t *m) {
  long n = 0;
  for (int i = 0; i < m->nparams; i++) n += m->params[i].numel;
  return n;
}

size_t model_total_bytes(const model_t *m, model_dtype run) {
  size_t n = 0;
  for (int i = 0; i < m->nparams; i++) n += model_param_bytes(m, i, run);
  return n;
}

const char *model_conv_pass_name(model_conv_pass p) {
  static const char *const names[] = {NULL, "fwd", "dgrad", "wgrad"};
  return p >= MODEL_CONV_FWD && p <= MODEL_CONV_WGRAD ? names[p] : NULL;
}

const char *model_layout_name(model_layout l) { return l == MODEL_LAYOUT_NHWC ? "nhwc" : "nchw"; }

int model_layout_parse(const char *s, model_layout *out) {
  if (strcmp(s, "nchw") == 0) *out = MODEL_LAYOUT_NCHW;
  else if (strcmp(s, "nhwc") == 0) *out = MODEL_LAYOUT_NHWC;
  else return -1;
  return 0;
}

static const char *const optim_names[MODEL_OPTIM_COUNT] = {
    [MODEL_OPTIM_UNKNOWN] = "unknown", [MODEL_OPTIM_NONE] = "none", [MODEL_OPTIM_SGD] = "sgd",
    [MODEL_OPTIM_SGD_MOMENTUM] = "sgd-momentum", [MODEL_OPTIM_ADAM] = "adam", [MODEL_OPTIM_ADAMW] = "adamw",
    [MODEL_OPTIM_RMSPROP] = "rmsprop", [MODEL_OPTIM_RMSPROP_MOMENTUM] = "rmsprop-momentum",
    [MODEL_OPTIM_ADAGRAD] = "adagrad"};

const char *model_optim_name(model_optim o) { return o >= 0 && o < MODEL_OPTIM_COUNT ? optim_names[o] : "unknown"; }

int model_optim_parse(const char *s, model_optim *out) {
  for (int i = MODEL_OPTIM_NONE; i < MODEL_OPTIM_COUNT; i++)
    if (strcmp(s, optim_names[i]) == 0) return *out = (model_optim)i, 0;
  return -1;
}

long model_conv_p(const model_conv *cv) { return (cv->h + 2 * cv->pad_h - cv->r) / cv->stride_h + 1; }
long model_conv_q(const model_conv *cv) { return (cv->w + 2 * cv->pad_w - cv->s) / cv->stride_w + 1; }

static model_dim dim_times(model_dim d, long x) { return (model_dim){d.v * x, d.per_batch, d.c * x}; }

void model_conv_gemm(const model_conv *cv, model_dim *m, model_dim *n, model_dim *k) {
  long pq = model_conv_p(cv) * model_conv_q(cv), hw = cv->h * cv->w, crs = cv->c * cv->r * cv->s;
  if (cv->pass == MODEL_CONV_DGRAD) {
    /* Each input pixel receives R*S / (stride_h * stride_w) filter taps on average. */
    long st = cv->stride_h * cv->stride_w, krs = cv->k * cv->r * cv->s;
    *m = (model_dim){cv->c, 0, 0}, *n = dim_times(cv->n, hw), *k = (model_dim){(krs + st - 1) / st, 0, 0};
  } else if (cv->pass == MODEL_CONV_WGRAD) {
    *m = (model_dim){cv->k, 0, 0}, *n = (model_dim){crs, 0, 0}, *k = dim_times(cv->n, pq);
  } else {
    *m = (model_dim){cv->k, 0, 0}, *n = dim_times(cv->n, pq), *k = (model_dim){crs, 0, 0};
  }
}

long model_op_gemms(const model_op *op, long batch) {
  long g = op->kind == MODEL_OP_GEMM ? model_dim_value(op->gemms, batch) : 1;
  return g > 0 ? g : 1;
}

double model_op_flops(const model_op *op, long batch) {
  if (op->kind == MODEL_OP_ATTN) {
    /* Q K^T and P V: 2 x 2 q kv d per head; causal: the half below the diagonal (as
     * FlashAttention's benchmarks count it); backward 2.5 times the forward. */
    double f = 4.0 * (double)model_dim_value(op->gemms, batch) * (double)model_dim_value(op->m, batch) *
               (double)model_dim_value(op->n, batch) * (double)model_dim_value(op->k, batch);
    return f * (op->causal ? 0.5 : 1.0) * (op->bwd ? 2.5 : 1.0);
  }
  if (op->kind != MODEL_OP_GEMM) return 0.0;
  return 2.0 * (double)model_dim_value(op->m, batch) * (double)model_dim_value(op->n, batch) *
         (double)model_dim_value(op->k, batch) * (double)model_op_gemms(op, batch);
}

double model_op_bytes(const model_op *op, long batch, model_dtype run) {
  double es = (double)model_dtype_size(model_op_dtype(op, run));
  if (op->kind == MODEL_OP_GEMM) {
    double M = (double)model_dim_value(op->m, batch), N = (double)model_dim_value(op->n, batch),
           K = (double)model_dim_value(op->k, batch);
    return es * (M * K + K * N + M * N) * (double)model_op_gemms(op, batch);
  }
  if (op->kind == MODEL_OP_ATTN) {
    /* What the kernel reads and writes once: forward Q, K, V in and O out; backward Q, K, V, O, dO
     * in and dQ, dK, dV out (the S x S scores never leave the chip). */
    double q = (double)model_dim_value(op->gemms, batch) * (double)model_dim_value(op->m, batch),
           kv = (double)model_dim_value(op->kv_heads, batch) * (double)model_dim_value(op->n, batch),
           d = (double)model_dim_value(op->k, batch);
    return es * d * (op->bwd ? 4.0 * q + 4.0 * kv : 2.0 * q + 2.0 * kv);
  }
  return es * (double)model_dim_value(op->elems, batch) * (double)op->arrays;
}

void model_ready_order(const model_t *m, int *order) {
  int n = 0;
  for (int o = 0; o < m->nops; o++)
    for (int r = 0; r < m->ops[o].ready_count; r++) order[n++] = m->ready[m->ops[o].ready_first + r];
}

void model_destroy(model_t *m) {
  if (!m) return;
  free(m->params);
  free(m->frozen);
  free(m->no_input_grad);
  free(m->ops);
  free(m->ready);
  free(m);
}

/* ---- parsing ---- */

typedef struct {
  const char *origin;
  int line;
  int version; /* of the file: 1 to MODEL_FORMAT_VERSION */
  err_t *e;
  int pcap, ocap, rcap, fcap;
  long total_params;
} parser;

#define FAIL(P, ...) \
  (err_set((P)->e, ERR_INPUT, "%s:%d: ", (P)->origin, (P)->line), append((P)->e, __VA_ARGS__), ERR_INPUT)

static void append(err_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(err_t *e, const char *fmt, ...) {
  if (!e) return;
  size_t n = strlen(e->msg);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg + n, sizeof e->msg - n, fmt, ap);
  va_end(ap);
}

static int grow(void **p, int *cap, int need, size_t elem) {
  if (need <= *cap) return 0;
  int nc = *cap ? *cap * 2 : 16;
  while (nc < need) nc *= 2;
  void *np = realloc(*p, (size_t)nc * elem);
  if (!np) return -1;
  *p = np;
  *cap = nc;
  return 0;
}

static int parse_name(parser *P, const char *s, char *dst, const char *what) {
  size_t n = strlen(s);
  if (n == 0 || n >= MODEL_NAME_MAX) return FAIL(P, "%s '%s' must be 1 to %d characters", what, s, MODEL_NAME_MAX - 1);
  memcpy(dst, s, n + 1);
  return 0;
}

/* A positive integer at most max. */
static int parse_bounded(parser *P, const char *s, long *out, long max, const char *what) {
  if (txt_parse_long(s, out) || *out <= 0 || *out > max)
    return FAIL(P, "%s must be an integer from 1 to %ld, got '%s'", what, max, s);
  return 0;
}

static int parse_positive(parser *P, const char *s, long *out, const char *what) {
  return parse_bounded(P, s, out, MODEL_DIM_MAX, what);
}

/* "4096", "B", "256*B", "B*256"; version 2 also "C+B", "C+N*B", "C+B*N". */
static int parse_dim(parser *P, const char *s, model_dim *d, const char *what) {
  char buf[64];
  if (strlen(s) >= sizeof buf) return FAIL(P, "%s: value '%s' too long", what, s);
  strcpy(buf, s);
  d->per_batch = 0;
  d->v = 0;
  d->c = 0;
  char *term = buf, *plus = strchr(buf, '+');
  if (plus) {
    if (P->version < 2) return FAIL(P, "%s: '%s': a C+N*B dimension needs 'ddpsim-model 2'", what, s);
    *plus = '\0';
    if (txt_parse_long(buf, &d->c) || d->c < 0) return FAIL(P, "%s: '%s' is not C+N*B with C >= 0", what, s);
    if (d->c > MODEL_DIM_MAX) return FAIL(P, "%s: '%s' exceeds the largest dimension, %ld (2^40)", what, s, MODEL_DIM_MAX);
    term = plus + 1;
  }
  if (strcmp(term, "B") == 0) {
    d->per_batch = 1;
    d->v = 1;
    return 0;
  }
  char *star = strchr(term, '*');
  const char *num = term;
  if (star) {
    *star = '\0';
    if (strcmp(star + 1, "B") == 0) num = term;
    else if (strcmp(term, "B") == 0) num = star + 1;
    else return FAIL(P, "%s: '%s' is not N, B or N*B", what, s);
    d->per_batch = 1;
  } else if (plus) {
    return FAIL(P, "%s: '%s' is not C+N*B", what, s);
  }
  if (txt_parse_long(num, &d->v) || d->v <= 0)
    return FAIL(P, "%s: '%s' is not a positive integer, B or N*B", what, s);
  if (d->v > MODEL_DIM_MAX) return FAIL(P, "%s: '%s' exceeds the largest dimension, %ld (2^40)", what, s, MODEL_DIM_MAX);
  return 0;
}

static int parse_shape(parser *P, const char *s, model_param *p) {
  char buf[128];
  if (strlen(s) >= sizeof buf) return FAIL(P, "shape '%s' too long", s);
  strcpy(buf, s);
  p->ndim = 0;
  p->numel = 1;
  char *save = NULL;
  for (char *t = strtok_r(buf, "x", &save); t; t = strtok_r(NULL, "x", &save)) {
    long v;
    if (p->ndim == MODEL_MAX_DIMS) return FAIL(P, "shape '%s' has more than %d dimensions", s, MODEL_MAX_DIMS);
    if (txt_parse_long(t, &v) || v <= 0) return FAIL(P, "shape '%s': '%s' is not a positive integer", s, t);
    if (p->numel > MODEL_DIM_MAX / v) return FAIL(P, "shape '%s' has more than %ld (2^40) elements", s, MODEL_DIM_MAX);
    p->shape[p->ndim++] = v;
    p->numel *= v;
  }
  if (p->ndim == 0 || s[strlen(s) - 1] == 'x' || s[0] == 'x') return FAIL(P, "shape '%s' is not like 256x64", s);
  return 0;
}

static int find_param(const model_t *m, const char *name) {
  for (int i = 0; i < m->nparams; i++)
    if (strcmp(m->params[i].name, name) == 0) return i;
  return -1;
}

static int find_frozen(const model_t *m, const char *name) {
  for (int i = 0; i < m->nfrozen; i++)
    if (strcmp(m->frozen[i].name, name) == 0) return i;
  return -1;
}

/* `saved elems=DIM [bytes=DIM]` or `saved bytes=DIM` (version 5): what autograd keeps for backward. */
static int parse_saved(parser *P, model_t *m, char **tok, int n) {
  int have = 0;
  if (m->has_saved) return FAIL(P, "a second saved line");
  for (int i = 1; i < n; i++) {
    const char *v;
    if ((v = txt_kv(tok[i], "elems"))) {
      if (have & 1 || parse_dim(P, v, &m->saved_elems, "elems")) return have & 1 ? FAIL(P, "elems= given twice") : ERR_INPUT;
      have |= 1;
    } else if ((v = txt_kv(tok[i], "bytes"))) {
      if (have & 2 || parse_dim(P, v, &m->saved_bytes, "bytes")) return have & 2 ? FAIL(P, "bytes= given twice") : ERR_INPUT;
      have |= 2;
    } else {
      return FAIL(P, "unknown key '%s' on the saved line (expected elems= and bytes=)", tok[i]);
    }
  }
  if (!have) return FAIL(P, "expected 'saved elems=DIM bytes=DIM' (what autograd keeps for backward)");
  m->has_saved = 1;
  return 0;
}

/* A %XX-escaped word (the exporter's escapes of the bytes a word cannot hold, models/README.md)
 * decoded into dst[len]: 0, or -1 for a bad escape, a control byte or a result too long. */
static int unescape(const char *s, char *dst, size_t len) {
  size_t o = 0;
  for (; *s; s++) {
    unsigned c = (unsigned char)*s;
    if (c == '%') {
      unsigned v = 0;
      for (int d = 1; d <= 2; d++) {
        char h = s[d];
        int x = h >= '0' && h <= '9' ? h - '0' : h >= 'A' && h <= 'F' ? h - 'A' + 10 : h >= 'a' && h <= 'f' ? h - 'a' + 10 : -1;
        if (x < 0) return -1;
        v = v * 16 + (unsigned)x;
      }
      c = v, s += 2;
    }
    if (c < 0x20 || c == 0x7f || o + 1 >= len) return -1;
    dst[o++] = (char)c;
  }
  dst[o] = '\0';
  return o ? 0 : -1;
}

/* `measured device=NAME torch=VERSION steps=N date=YYYY-MM-DD` (version 6): where the ops' time_s=
 * and host_s= were measured. Every key once, all four required. */
static int parse_measured(parser *P, model_t *m, char **tok, int n) {
  static const char *const keys[] = {"device", "torch", "steps", "date", "step_rel_sd"};
  model_measured *d = &m->measured;
  int have = 0;
  d->step_rel_sd = -1;
  for (int i = 1; i < n; i++) {
    const char *v = NULL;
    int k = 0;
    while (k < 5 && !(v = txt_kv(tok[i], keys[k]))) k++;
    if (k == 5)
      return FAIL(P, "unknown key '%s' on the measured line (expected device=, torch=, steps=, date=, step_rel_sd=)", tok[i]);
    if (have & (1 << k)) return FAIL(P, "%s= given twice", keys[k]);
    have |= 1 << k;
    if (k == 0 && unescape(v, d->device, sizeof d->device))
      return FAIL(P, "device='%s': expected 1 to %d bytes, %%XX escapes for the others", v, MODEL_DEVICE_MAX - 1);
    if (k == 1 && (!*v || strlen(v) >= sizeof d->torch)) return FAIL(P, "torch='%s': expected a release such as 2.15.0", v);
    if (k == 2 && parse_bounded(P, v, &d->steps, MODEL_COUNT_MAX, "steps")) return ERR_INPUT;
    if (k == 3) {
      int y, mo, dd, len = 0;
      if (strlen(v) != 10 || sscanf(v, "%4d-%2d-%2d%n", &y, &mo, &dd, &len) != 3 || len != 10 || mo < 1 || mo > 12 ||
          dd < 1 || dd > 31)
        return FAIL(P, "date='%s': expected YYYY-MM-DD", v);
      memcpy(d->date, v, 11);
    }
    if (k == 1) snprintf(d->torch, sizeof d->torch, "%s", v);
    if (k == 4 && (txt_parse_double(v, &d->step_rel_sd) || !(d->step_rel_sd >= 0 && d->step_rel_sd <= 2)))
      return FAIL(P, "step_rel_sd='%s': expected the steps' relative standard deviation, 0 to 2", v);
  }
  for (int k = 0; k < 4; k++)
    if (!(have & (1 << k))) return FAIL(P, "the measured line needs %s= (device=, torch=, steps= and date=; step_rel_sd= optional)", keys[k]);
  d->present = 1;
  d->line = P->line;
  return 0;
}

/* A measured time (time_s=, host_s=): 0 to MODEL_MEASURED_MAX_s seconds. */
static int parse_seconds(parser *P, const char *v, double *out, const char *what) {
  if (txt_parse_double(v, out) || *out < 0 || *out > MODEL_MEASURED_MAX_s)
    return FAIL(P, "%s must be a time in seconds from 0 to %g, got '%s'", what, MODEL_MEASURED_MAX_s, v);
  return 0;
}

/* NAME SHAPE [dtype] of a param or frozen line (n of 3 or 4 tokens) into a new entry of *list: the
 * name unique among both kinds, the shape, the running total, the type. */
static int param_fields(parser *P, model_t *m, model_param **list, int *count, int *cap, char **tok, int n) {
  if (grow((void **)list, cap, *count + 1, sizeof **list)) return err_set(P->e, ERR_NOMEM, "%s: out of memory", P->origin);
  model_param *p = &(*list)[*count];
  memset(p, 0, sizeof *p);
  if (parse_name(P, tok[1], p->name, "parameter name")) return ERR_INPUT;
  if (find_param(m, p->name) >= 0 || find_frozen(m, p->name) >= 0) return FAIL(P, "parameter '%s' is declared twice", p->name);
  if (parse_shape(P, tok[2], p)) return ERR_INPUT;
  P->total_params += p->numel; /* each <= 2^40 and the sum so far too: no overflow */
  if (P->total_params > MODEL_DIM_MAX)
    return FAIL(P, "the parameters so far total %ld, more than %ld (2^40)", P->total_params, MODEL_DIM_MAX);
  p->follows_run = 1;
  if (n == 4 && strcmp(tok[3], "run") != 0) {
    if (model_dtype_parse(tok[3], &p->dtype)) return FAIL(P, "dtype '%s' is not fp32, fp16, bf16 or run", tok[3]);
    p->follows_run = 0;
  }
  (*count)++;
  return 0;
}

static int parse_param(parser *P, model_t *m, char **tok, int n) {
  /* Trailing markers (version 5), in any order: sparse, unused. */
  int sparse = 0, unused = 0;
  while (n >= 4 && (strcmp(tok[n - 1], "sparse") == 0 || strcmp(tok[n - 1], "unused") == 0)) {
    int *flag = tok[n - 1][0] == 's' ? &sparse : &unused;
    if (P->version < 5) return FAIL(P, "a parameter marked '%s' needs 'ddpsim-model 5'", tok[n - 1]);
    if (*flag) return FAIL(P, "'%s' is given twice", tok[n - 1]);
    *flag = 1;
    n--;
  }
  if (n < 3 || n > 4) return FAIL(P, "expected 'param NAME SHAPE [fp32|fp16|bf16|run] [sparse] [unused]'");
  int rc = param_fields(P, m, &m->params, &m->nparams, &P->pcap, tok, n);
  if (rc) return rc;
  m->params[m->nparams - 1].sparse = sparse;
  m->params[m->nparams - 1].unused = unused;
  return 0;
}

/* `frozen NAME SHAPE [fp32|fp16|bf16|run]` (version 7): a parameter that takes no gradient. */
static int parse_frozen(parser *P, model_t *m, char **tok, int n) {
  if (P->version < 7) return FAIL(P, "a frozen line needs 'ddpsim-model 7'");
  if (n < 3 || n > 4) return FAIL(P, "expected 'frozen NAME SHAPE [fp32|fp16|bf16|run]'");
  return param_fields(P, m, &m->frozen, &m->nfrozen, &P->fcap, tok, n);
}

static int parse_op(parser *P, model_t *m, model_phase phase, char **tok, int n) {
  model_op op;
  memset(&op, 0, sizeof op);
  op.phase = phase;
  op.count = 1;
  op.launches = 1;
  op.follows_run = 1;
  op.gemms = (model_dim){1, 0, 0};
  op.line = P->line;
  op.ready_first = m->nready;
  if (strcmp(tok[0], "gemm") == 0) op.kind = MODEL_OP_GEMM;
  else if (strcmp(tok[0], "ewise") == 0) op.kind = MODEL_OP_EWISE;
  else if (strcmp(tok[0], "conv") == 0) {
    if (P->version < 3) return FAIL(P, "a conv op needs 'ddpsim-model 3'");
    op.kind = MODEL_OP_GEMM;
    op.conv.pass = MODEL_CONV_FWD; /* set below; marks the op as a conv while parsing */
    op.conv.layout = m->layout;    /* header lines precede the sections */
  } else if (strcmp(tok[0], "attn") == 0) {
    if (P->version < 8) return FAIL(P, "an attn op needs 'ddpsim-model 8'");
    op.kind = MODEL_OP_ATTN;
  } else return FAIL(P, "unknown op kind '%s' (expected gemm, ewise, conv or attn)", tok[0]);
  int is_conv = op.conv.pass != MODEL_CONV_NONE, have_pass = 0, have_conv[7] = {0};
  long *conv_field[7 + 6] = {&op.conv.c, &op.conv.h, &op.conv.w, &op.conv.k, &op.conv.r, &op.conv.s, NULL,
                             &op.conv.pad_h, &op.conv.pad_w, &op.conv.stride_h, &op.conv.stride_w, NULL, NULL};
  static const char *const conv_key[] = {"c", "h", "w", "k", "r", "s", "n", "pad_h", "pad_w", "stride_h", "stride_w",
                                         "pad", "stride"};
  op.conv.stride_h = op.conv.stride_w = 1;
  if (n < 2 || strchr(tok[1], '=')) return FAIL(P, "op needs a name: '%s NAME key=value ...'", tok[0]);
  if (parse_name(P, tok[1], op.name, "op name")) return ERR_INPUT;
  int have_m = 0, have_n = 0, have_k = 0, have_e = 0, have_a = 0, have_f = 0, have_t = 0;
  for (int i = 2; i < n; i++) {
    const char *v;
    int ck = -1;
    for (int q = 0; is_conv && q < 13 && ck < 0; q++)
      if (txt_kv(tok[i], conv_key[q])) ck = q;
    if (is_conv && (v = txt_kv(tok[i], "pass"))) {
      int pz = MODEL_CONV_FWD;
      while (pz <= MODEL_CONV_WGRAD && strcmp(v, model_conv_pass_name((model_conv_pass)pz)) != 0) pz++;
      if (pz > MODEL_CONV_WGRAD) return FAIL(P, "pass '%s' is not fwd, dgrad or wgrad", v);
      op.conv.pass = (model_conv_pass)pz;
      have_pass = 1;
    } else if (ck == 6) {
      if (parse_dim(P, txt_kv(tok[i], "n"), &op.conv.n, "n")) return ERR_INPUT;
      have_conv[6] = 1;
    } else if (ck >= 0) {
      long x;
      v = txt_kv(tok[i], conv_key[ck]);
      int pad = ck == 7 || ck == 8 || ck == 11;
      if (pad ? txt_parse_long(v, &x) || x < 0 || x > 65536 : parse_bounded(P, v, &x, ck < 6 ? MODEL_DIM_MAX : 65536, conv_key[ck]))
        return pad ? FAIL(P, "%s must be an integer from 0 to 65536, got '%s'", conv_key[ck], v) : ERR_INPUT;
      if (ck < 11) *conv_field[ck] = x;
      else if (ck == 11) op.conv.pad_h = op.conv.pad_w = x;
      else op.conv.stride_h = op.conv.stride_w = x;
      if (ck < 6) have_conv[ck] = 1;
    } else if (is_conv && (txt_kv(tok[i], "m") || txt_kv(tok[i], "k") || txt_kv(tok[i], "gemms"))) {
      return FAIL(P, "a conv op's GEMM dimensions follow from its geometry: '%s' is not allowed", tok[i]);
    } else if (op.kind == MODEL_OP_GEMM && (v = txt_kv(tok[i], "m"))) {
      if (parse_dim(P, v, &op.m, "m")) return ERR_INPUT;
      have_m = 1;
    } else if (op.kind == MODEL_OP_GEMM && (v = txt_kv(tok[i], "n"))) {
      if (parse_dim(P, v, &op.n, "n")) return ERR_INPUT;
      have_n = 1;
    } else if (op.kind == MODEL_OP_GEMM && (v = txt_kv(tok[i], "k"))) {
      if (parse_dim(P, v, &op.k, "k")) return ERR_INPUT;
      have_k = 1;
    } else if (op.kind == MODEL_OP_GEMM && (v = txt_kv(tok[i], "gemms"))) {
      if (P->version < 2) return FAIL(P, "gemms= needs 'ddpsim-model 2'");
      if (parse_dim(P, v, &op.gemms, "gemms")) return ERR_INPUT;
    } else if (op.kind == MODEL_OP_ATTN && (v = txt_kv(tok[i], "heads"))) {
      if (parse_dim(P, v, &op.gemms, "heads")) return ERR_INPUT;
      have_m |= 8;
    } else if (op.kind == MODEL_OP_ATTN && (v = txt_kv(tok[i], "kv_heads"))) {
      if (parse_dim(P, v, &op.kv_heads, "kv_heads")) return ERR_INPUT;
      have_a = 1;
    } else if (op.kind == MODEL_OP_ATTN && (v = txt_kv(tok[i], "q"))) {
      if (parse_dim(P, v, &op.m, "q")) return ERR_INPUT;
      have_m |= 1;
    } else if (op.kind == MODEL_OP_ATTN && (v = txt_kv(tok[i], "kv"))) {
      if (parse_dim(P, v, &op.n, "kv")) return ERR_INPUT;
      have_m |= 2;
    } else if (op.kind == MODEL_OP_ATTN && (v = txt_kv(tok[i], "d"))) {
      if (parse_dim(P, v, &op.k, "d")) return ERR_INPUT;
      have_m |= 4;
    } else if (op.kind == MODEL_OP_ATTN && (v = txt_kv(tok[i], "causal"))) {
      if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) return FAIL(P, "causal must be 0 or 1, got '%s'", v);
      op.causal = v[0] == '1';
    } else if (op.kind == MODEL_OP_ATTN && (v = txt_kv(tok[i], "pass"))) {
      if (strcmp(v, "fwd") != 0 && strcmp(v, "bwd") != 0) return FAIL(P, "an attn op's pass must be fwd or bwd, got '%s'", v);
      op.bwd = v[0] == 'b';
      have_pass = 1;
    } else if (op.kind == MODEL_OP_EWISE && (v = txt_kv(tok[i], "elems"))) {
      if (parse_dim(P, v, &op.elems, "elems")) return ERR_INPUT;
      have_e = 1;
    } else if (op.kind == MODEL_OP_EWISE && (v = txt_kv(tok[i], "arrays"))) {
      if (parse_bounded(P, v, &op.arrays, MODEL_COUNT_MAX, "arrays")) return ERR_INPUT;
      have_a = 1;
    } else if ((v = txt_kv(tok[i], "count"))) {
      if (parse_bounded(P, v, &op.count, MODEL_COUNT_MAX, "count")) return ERR_INPUT;
    } else if ((v = txt_kv(tok[i], "launches"))) {
      if (parse_bounded(P, v, &op.launches, MODEL_COUNT_MAX, "launches")) return ERR_INPUT;
    } else if ((v = txt_kv(tok[i], "fwops"))) {
      if (parse_bounded(P, v, &op.fwops, MODEL_COUNT_MAX, "fwops")) return ERR_INPUT;
      have_f = 1;
    } else if ((v = txt_kv(tok[i], "dtype"))) {
      if (strcmp(v, "run") != 0) {
        if (model_dtype_parse(v, &op.dtype)) return FAIL(P, "dtype '%s' is not fp32, fp16, bf16 or run", v);
        op.follows_run = 0;
      }
    } else if ((v = txt_kv(tok[i], "time_s")) || (v = txt_kv(tok[i], "host_s"))) {
      int host = tok[i][0] == 'h';
      if (P->version < 6) return FAIL(P, "%s= needs 'ddpsim-model 6'", host ? "host_s" : "time_s");
      if (!m->measured.present)
        return FAIL(P, "%s= needs a 'measured' line before the sections (the device it was measured on)", host ? "host_s" : "time_s");
      if (have_t & (1 << host)) return FAIL(P, "%s= given twice", host ? "host_s" : "time_s");
      if (parse_seconds(P, v, host ? &op.host_s : &op.time_s, host ? "host_s" : "time_s")) return ERR_INPUT;
      have_t |= 1 << host;
    } else if ((v = txt_kv(tok[i], "ready"))) {
      if (phase != MODEL_PHASE_BACKWARD) return FAIL(P, "ready= is only allowed on backward ops");
      char buf[4096];
      if (strlen(v) >= sizeof buf) return FAIL(P, "ready= list too long");
      strcpy(buf, v);
      char *save = NULL;
      for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int idx = find_param(m, t);
        if (idx < 0 && find_frozen(m, t) >= 0) return FAIL(P, "ready= names '%s', which is frozen: it takes no gradient", t);
        if (idx < 0) return FAIL(P, "ready= names unknown parameter '%s'", t);
        if (grow((void **)&m->ready, &P->rcap, m->nready + 1, sizeof *m->ready))
          return err_set(P->e, ERR_NOMEM, "%s: out of memory", P->origin);
        m->ready[m->nready++] = idx;
      }
    } else {
      return FAIL(P, "unknown or misplaced key '%s' for a %s op", tok[i], tok[0]);
    }
  }
  if (is_conv) {
    for (int q = 0; q < 7; q++)
      if (!have_conv[q]) return FAIL(P, "conv op needs %s= (it needs pass, n, c, h, w, k, r, s)", conv_key[q]);
    if (!have_pass) return FAIL(P, "conv op needs pass=fwd, dgrad or wgrad");
    if (op.conv.h + 2 * op.conv.pad_h < op.conv.r || op.conv.w + 2 * op.conv.pad_w < op.conv.s)
      return FAIL(P, "the filter (r=%ld s=%ld) is larger than the padded image", op.conv.r, op.conv.s);
    model_conv_gemm(&op.conv, &op.m, &op.n, &op.k);
    /* The same bounds as a gemm line's (MODEL_DIM_MAX on each dimension at batch 1 per unit). */
    const model_dim *d3[3] = {&op.m, &op.n, &op.k};
    for (int q = 0; q < 3; q++)
      if (d3[q]->v > MODEL_DIM_MAX || d3[q]->c > MODEL_DIM_MAX || d3[q]->v < 0)
        return FAIL(P, "the conv's implicit GEMM has a dimension above %ld", MODEL_DIM_MAX);
    have_m = have_n = have_k = 1;
  }
  if (op.kind == MODEL_OP_GEMM && !(have_m && have_n && have_k)) return FAIL(P, "gemm op needs m=, n= and k=");
  if (op.kind == MODEL_OP_EWISE && !(have_e && have_a)) return FAIL(P, "ewise op needs elems= and arrays=");
  if (op.kind == MODEL_OP_ATTN) {
    if (have_m != 15 || !have_pass) return FAIL(P, "attn op needs heads=, q=, kv=, d= and pass=fwd or bwd");
    if (!have_a) op.kv_heads = op.gemms;
    long h = model_dim_value(op.gemms, 1), g = model_dim_value(op.kv_heads, 1);
    if (g < 1 || h < 1 || h % g != 0 || op.kv_heads.per_batch != op.gemms.per_batch)
      return FAIL(P, "an attn op's kv_heads must divide its heads, both per sequence alike (got heads=%ld, kv_heads=%ld)", h, g);
    /* a forward pass may run in backward too: a checkpointed block's recomputation */
    if (op.bwd ? phase != MODEL_PHASE_BACKWARD : phase == MODEL_PHASE_OPTIMIZER)
      return FAIL(P, "an attn op with pass=%s belongs to the %s section", op.bwd ? "bwd" : "fwd",
                  op.bwd ? "backward" : "forward (or backward, recomputed)");
  }
  if (!have_f) op.fwops = op.launches;
  if (have_t && have_t != 3) return FAIL(P, "a measured op needs both time_s= and host_s=");
  op.measured = have_t == 3;
  m->nmeasured += op.measured;
  op.ready_count = m->nready - op.ready_first;
  if (grow((void **)&m->ops, &P->ocap, m->nops + 1, sizeof *m->ops))
    return err_set(P->e, ERR_NOMEM, "%s: out of memory", P->origin);
  m->ops[m->nops++] = op;
  return 0;
}

int model_parse(const char *text, const char *origin, model_t **out, err_t *e) {
  *out = NULL;
  model_t *m = calloc(1, sizeof *m);
  char *buf = strdup(text);
  if (!m || !buf) {
    free(m);
    free(buf);
    return err_set(e, ERR_NOMEM, "%s: out of memory", origin);
  }
  snprintf(m->path, sizeof m->path, "%s", origin);
  strcpy(m->token_unit, "tokens");
  parser P = {.origin = origin, .line = 0, .e = e};
  int rc = ERR_OK;
  int have_header = 0, have_name = 0, have_batch = 0, have_tokens = 0, have_prec = 0;
  int seen_at[9] = {0}; /* the line of each once-only line (below), 0: not yet */
  int section = -1; /* -1: header, else model_phase */
  char *save = NULL;
  char *line = buf;
  while (line) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    P.line++;
    char *tok[MAX_TOKENS];
    int n = txt_split(line, tok, MAX_TOKENS);
    line = nl ? nl + 1 : NULL;
    if (n < 0) {
      rc = FAIL(&P, "more than %d words on one line", MAX_TOKENS);
      goto fail;
    }
    if (n == 0) continue;
    if (!have_header) {
      long v;
      if (strcmp(tok[0], FORMAT_TAG) != 0 || n != 2) {
        rc = FAIL(&P, "first line must be '%s %d'", FORMAT_TAG, 1);
        goto fail;
      }
      if (txt_parse_long(tok[1], &v) || v < 1 || v > MODEL_FORMAT_VERSION) {
        rc = FAIL(&P, "unsupported model format version '%s' (this ddpsim reads versions 1 to %d)", tok[1],
                  MODEL_FORMAT_VERSION);
        goto fail;
      }
      P.version = (int)v;
      have_header = 1;
      continue;
    }
    if (strcmp(tok[0], "forward") == 0 || strcmp(tok[0], "backward") == 0 || strcmp(tok[0], "optimizer") == 0) {
      int next = tok[0][0] == 'f' ? MODEL_PHASE_FORWARD : tok[0][0] == 'b' ? MODEL_PHASE_BACKWARD : MODEL_PHASE_OPTIMIZER;
      if (n != 1) {
        rc = FAIL(&P, "section line '%s' takes no arguments", tok[0]);
        goto fail;
      }
      if (next <= section) {
        rc = FAIL(&P, "section '%s' out of order (forward, backward, optimizer, each once)", tok[0]);
        goto fail;
      }
      section = next;
      continue;
    }
    if (section >= 0) {
      if ((rc = parse_op(&P, m, (model_phase)section, tok, n))) goto fail;
      continue;
    }
    /* Lines that say one thing once: a second one is refused, never silently the winner. */
    static const char *const once[] = {"name", "batch", "tokens", "output", "buffers", "input", "precision", "layout",
                                       "measured"};
    for (int k = 0; k < (int)(sizeof once / sizeof *once); k++)
      if (strcmp(tok[0], once[k]) == 0) {
        if (seen_at[k]) { rc = FAIL(&P, "a second '%s' line (the first is line %d)", once[k], seen_at[k]); goto fail; }
        seen_at[k] = P.line;
      }
    if (strcmp(tok[0], "name") == 0) {
      if (n != 2) { rc = FAIL(&P, "expected 'name NAME'"); goto fail; }
      if ((rc = parse_name(&P, tok[1], m->name, "model name"))) goto fail;
      have_name = 1;
    } else if (strcmp(tok[0], "batch") == 0) {
      if (n != 2) { rc = FAIL(&P, "expected 'batch N'"); goto fail; }
      if ((rc = parse_bounded(&P, tok[1], &m->batch, MODEL_BATCH_MAX, "batch"))) goto fail;
      have_batch = 1;
    } else if (strcmp(tok[0], "tokens") == 0) {
      if (n != 3) { rc = FAIL(&P, "expected 'tokens N UNIT' (tokens per sample, e.g. 'tokens 256 chars')"); goto fail; }
      if ((rc = parse_positive(&P, tok[1], &m->tokens_per_sample, "tokens"))) goto fail;
      if (strlen(tok[2]) >= sizeof m->token_unit) { rc = FAIL(&P, "token unit '%s' too long", tok[2]); goto fail; }
      strcpy(m->token_unit, tok[2]);
      have_tokens = 1;
    } else if (strcmp(tok[0], "output") == 0) {
      if (n != 2) { rc = FAIL(&P, "expected 'output ELEMENTS' (elements of one sample's output)"); goto fail; }
      if ((rc = parse_positive(&P, tok[1], &m->output_elems_per_sample, "output elements"))) goto fail;
    } else if (strcmp(tok[0], "buffers") == 0) {
      if (n != 2) { rc = FAIL(&P, "expected 'buffers BYTES' (bytes of the module's buffers)"); goto fail; }
      if ((rc = parse_positive(&P, tok[1], &m->buffer_bytes, "buffer bytes"))) goto fail;
    } else if (strcmp(tok[0], "input") == 0) {
      if (n != 2) { rc = FAIL(&P, "expected 'input BYTES' (bytes per sample copied to the GPU)"); goto fail; }
      if ((rc = parse_positive(&P, tok[1], &m->input_bytes_per_sample, "input bytes"))) goto fail;
    } else if (strcmp(tok[0], "precision") == 0) {
      if (n != 2 || model_dtype_parse(tok[1], &m->precision)) { rc = FAIL(&P, "expected 'precision fp32|fp16|bf16'"); goto fail; }
      have_prec = 1;
    } else if (strcmp(tok[0], "layout") == 0) {
      if (P.version < 4) { rc = FAIL(&P, "a layout line needs 'ddpsim-model 4'"); goto fail; }
      if (n != 2 || model_layout_parse(tok[1], &m->layout)) { rc = FAIL(&P, "expected 'layout nchw|nhwc'"); goto fail; }
    } else if (strcmp(tok[0], "saved") == 0) {
      if (P.version < 5) { rc = FAIL(&P, "a saved line needs 'ddpsim-model 5'"); goto fail; }
      if ((rc = parse_saved(&P, m, tok, n))) goto fail;
    } else if (strcmp(tok[0], "optim") == 0) {
      if (P.version < 5) { rc = FAIL(&P, "an optim line needs 'ddpsim-model 5'"); goto fail; }
      if (n != 2 || model_optim_parse(tok[1], &m->optim)) {
        rc = FAIL(&P, "expected 'optim none|sgd|sgd-momentum|adam|adamw|rmsprop|rmsprop-momentum|adagrad'");
        goto fail;
      }
    } else if (strcmp(tok[0], "no_input_grad") == 0) {
      if (P.version < 7) { rc = FAIL(&P, "a no_input_grad line needs 'ddpsim-model 7'"); goto fail; }
      if (n != 2) { rc = FAIL(&P, "expected 'no_input_grad MODULE[,MODULE...]'"); goto fail; }
      if (m->no_input_grad) { rc = FAIL(&P, "a second no_input_grad line"); goto fail; }
      if (!(m->no_input_grad = strdup(tok[1]))) { rc = err_set(e, ERR_NOMEM, "%s: out of memory", origin); goto fail; }
    } else if (strcmp(tok[0], "measured") == 0) {
      if (P.version < 6) { rc = FAIL(&P, "a measured line needs 'ddpsim-model 6'"); goto fail; }
      if ((rc = parse_measured(&P, m, tok, n))) goto fail;
    } else if (strcmp(tok[0], "param") == 0) {
      if ((rc = parse_param(&P, m, tok, n))) goto fail;
    } else if (strcmp(tok[0], "frozen") == 0) {
      if ((rc = parse_frozen(&P, m, tok, n))) goto fail;
    } else {
      rc = FAIL(&P, "unknown line '%s' (expected name, batch, tokens, input, output, buffers, precision, layout, saved, "
                    "optim, no_input_grad, measured, param, frozen, or a section)", tok[0]);
      goto fail;
    }
  }
  (void)save;
  P.line = 0;
  if (!have_header) { rc = err_set(e, ERR_INPUT, "%s: empty file, expected '%s %d'", origin, FORMAT_TAG, 1); goto fail; }
  if (!have_name || !have_batch || !have_tokens || !have_prec) {
    rc = err_set(e, ERR_INPUT, "%s: missing %s line", origin,
                 !have_name ? "'name'" : !have_batch ? "'batch'" : !have_tokens ? "'tokens'" : "'precision'");
    goto fail;
  }
  if (m->nparams == 0) { rc = err_set(e, ERR_INPUT, "%s: no 'param' lines", origin); goto fail; }
  int nb = 0;
  for (int i = 0; i < m->nops; i++) nb += m->ops[i].phase == MODEL_PHASE_BACKWARD;
  if (nb == 0) { rc = err_set(e, ERR_INPUT, "%s: no backward ops", origin); goto fail; }
  /* Every parameter must become ready exactly once. */
  int *seen = calloc((size_t)m->nparams, sizeof *seen);
  if (!seen) { rc = err_set(e, ERR_NOMEM, "%s: out of memory", origin); goto fail; }
  for (int o = 0; o < m->nops; o++) {
    const model_op *op = &m->ops[o];
    for (int r = 0; r < op->ready_count; r++) {
      int idx = m->ready[op->ready_first + r];
      if (seen[idx]) {
        rc = err_set(e, ERR_INPUT, "%s:%d: parameter '%s' already became ready at line %d", origin, op->line,
                     m->params[idx].name, seen[idx]);
        free(seen);
        goto fail;
      }
      seen[idx] = op->line;
    }
  }
  for (int i = 0; i < m->nparams; i++) {
    if (!seen[i]) {
      rc = err_set(e, ERR_INPUT, "%s: parameter '%s' never becomes ready (name it in a backward op's ready=)",
                   origin, m->params[i].name);
      free(seen);
      goto fail;
    }
  }
  free(seen);
  free(buf);
  *out = m;
  return ERR_OK;
fail:
  free(buf);
  model_destroy(m);
  return rc;
}

int model_load(const char *path, model_t **out, err_t *e) {
  *out = NULL;
  char *text;
  int rc = txt_read_text(path, &text, e);
  if (rc) return rc;
  rc = model_parse(text, path, out, e);
  free(text);
  return rc;
}
