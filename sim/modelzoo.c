#include "modelzoo.h"

#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- text building ---- */

typedef struct {
  strbuf text;
  int too_long; /* a name did not fit its buffer (cannot happen within the validated sizes) */
} sbuf;

static void put(sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  strbuf_vprintf(&s->text, fmt, ap);
  va_end(ap);
}

/* With amp, every "param NAME SHAPE" line gets " fp32": the gradients keep the parameters' dtype. */
static void amp_params(sbuf *s) {
  if (s->text.failed || s->too_long || !s->text.buf) return;
  sbuf o = {0};
  for (char *line = s->text.buf; *line;) {
    char *nl = strchr(line, '\n');
    int len = nl ? (int)(nl - line) : (int)strlen(line);
    put(&o, "%.*s%s%s", len, line, strncmp(line, "param ", 6) == 0 ? " fp32" : "", nl ? "\n" : "");
    line += len + (nl ? 1 : 0);
  }
  strbuf_free(&s->text);
  *s = o;
}

static int finish(sbuf *s, int amp, char **text, err_t *e) {
  if (amp) amp_params(s);
  if (s->too_long) {
    strbuf_free(&s->text);
    return err_set(e, ERR_USAGE, "a generated name is too long");
  }
  *text = strbuf_take(&s->text);
  return *text ? ERR_OK : err_set(e, ERR_NOMEM, "out of memory");
}

/* An op dimension: a constant, or v per sample of the batch (written v*B). */
typedef struct {
  long v;
  int per_batch;
} dim;

static dim C(long v) { return (dim){v, 0}; }
static dim PB(long v) { return (dim){v, 1}; }

static const char *dimstr(char *buf, size_t n, dim d) {
  if (d.per_batch && d.v == 1) snprintf(buf, n, "B");
  else if (d.per_batch) snprintf(buf, n, "%ld*B", d.v);
  else snprintf(buf, n, "%ld", d.v);
  return buf;
}

/* Ops are written one per line with aligned columns; `ready` and `note` may be NULL. */
static void gemm(sbuf *s, const char *name, dim m, dim n, dim k, const char *ready, const char *note) {
  char a[32], b[32], c[32];
  put(s, "gemm  %-40s m=%s n=%s k=%s", name, dimstr(a, sizeof a, m), dimstr(b, sizeof b, n), dimstr(c, sizeof c, k));
  if (ready) put(s, " ready=%s", ready);
  if (note) put(s, "  # %s", note);
  put(s, "\n");
}

static void ewise_dt(sbuf *s, const char *name, dim elems, long arrays, long count, const char *dtype,
                     const char *ready, const char *note) {
  char a[32];
  put(s, "ewise %-40s elems=%s arrays=%ld", name, dimstr(a, sizeof a, elems), arrays);
  if (count > 1) put(s, " count=%ld", count);
  if (dtype) put(s, " dtype=%s", dtype);
  if (ready) put(s, " ready=%s", ready);
  if (note) put(s, "  # %s", note);
  put(s, "\n");
}

static void ewise(sbuf *s, const char *name, dim elems, long arrays, long count, const char *ready, const char *note) {
  ewise_dt(s, name, elems, arrays, count, NULL, ready, note);
}

/* The transformers' optimizer: AdamW over P fp32 master weights; then finish(). */
static int adamw_finish(sbuf *s, long P, int amp, char **text, err_t *e) {
  put(s, "\noptimizer\n");
  put(s, "# AdamW on fp32 master weights: read param, grad, m, v; write param, m, v.\n");
  ewise_dt(s, "adamw", C(P), 7, 1, "fp32", NULL, NULL);
  return finish(s, amp, text, e);
}

/* "P.a,P.b": the parameters of one module, ready together after its autograd node. */
static const char *pair(sbuf *s, char *buf, size_t n, const char *module, const char *a, const char *b) {
  int k = snprintf(buf, n, "%s.%s,%s.%s", module, a, module, b);
  if (k < 0 || (size_t)k >= n) s->too_long = 1;
  return buf;
}

/* "a.b" */
static const char *cat(sbuf *s, char *buf, size_t n, const char *a, const char *b) {
  int k = snprintf(buf, n, "%s.%s", a, b);
  if (k < 0 || (size_t)k >= n) s->too_long = 1;
  return buf;
}

/* ======================================================================================
 * ResNet (torchvision)
 *
 * Convolutions as im2col GEMMs: forward m = out channels, n = H_out W_out per sample,
 * k = in channels * kh * kw; the weight gradient m = out, n = in*kh*kw, k = H_out W_out B; the
 * input gradient m = in*kh*kw, n = H_out W_out B, k = out. Batch norm, ReLU, pooling and the
 * residual add are elementwise passes over the activations.
 * ====================================================================================== */

#define RESNET_MAX_BLOCKS 64

typedef struct {
  char prefix[32]; /* "layer3.5" */
  long cin, width, cout, stride, hin, hout;
  int downsample;
} rblock;

static long conv_out(long h, long stride) { return (h - 1) / stride + 1; } /* k3/p1, k1/p0, k7/p3 */

int modelzoo_resnet_defaults(int depth, modelzoo_resnet *spec, err_t *e) {
  static const char *const names[5] = {"resnet18", "resnet34", "resnet50", "resnet101", "resnet152"};
  static const int depths[5] = {18, 34, 50, 101, 152};
  for (int i = 0; i < 5; i++) {
    if (depths[i] != depth) continue;
    spec->name = names[i];
    spec->depth = depth;
    spec->image = 224;
    spec->classes = 1000;
    spec->batch = 64;
    spec->precision = MODEL_FP16;
    spec->amp = 0;
    spec->uint8_input = 0;
    spec->channels_last = 0;
    return ERR_OK;
  }
  return err_set(e, ERR_USAGE, "ResNet depth %d is not one of torchvision's 18, 34, 50, 101, 152", depth);
}

static void conv_param(sbuf *s, const char *module, long cout, long cin, long k) {
  put(s, "param %s.weight %ldx%ldx%ldx%ld\n", module, cout, cin, k, k);
}

static void bn_param(sbuf *s, const char *module, long c) {
  put(s, "param %s.weight %ld\nparam %s.bias %ld\n", module, c, module, c);
}

/* One pass of a convolution (no bias; square, padding k/2: torchvision's 7x7/p3, 3x3/p1, 1x1/p0)
 * as a `conv` line: its implicit GEMM follows from the geometry (sim/model.h, model_conv_gemm). */
static void conv_line(sbuf *s, const char *name, const char *pass, long cin, long cout, long k, long stride,
                      long hin, const char *ready, const char *note) {
  put(s, "conv  %-40s pass=%s n=B c=%ld h=%ld w=%ld k=%ld r=%ld s=%ld", name, pass, cin, hin, hin, cout, k, k);
  if (stride > 1) put(s, " stride=%ld", stride);
  if (k / 2) put(s, " pad=%ld", k / 2);
  if (ready) put(s, " ready=%s", ready);
  if (note) put(s, "  # %s", note);
  put(s, "\n");
}

static void conv_fwd(sbuf *s, const char *module, long cin, long cout, long k, long stride, long hin, long hout) {
  char note[96];
  snprintf(note, sizeof note, "%ldx%ld/%ld conv, %ldx%ld -> %ldx%ld", k, k, stride, hin, hin, hout, hout);
  conv_line(s, module, "fwd", cin, cout, k, stride, hin, NULL, note);
}

/* Backward of one convolution: the input gradient (unless first), then the weight gradient, after
 * which the autograd node is done and the weight's gradient is ready. */
static void conv_bwd(sbuf *s, const char *module, long cin, long cout, long k, long stride, long hin, int first) {
  char name[80], ready[80];
  if (!first) conv_line(s, cat(s, name, sizeof name, module, "dgrad"), "dgrad", cin, cout, k, stride, hin, NULL, NULL);
  snprintf(ready, sizeof ready, "%s.weight", module);
  conv_line(s, cat(s, name, sizeof name, module, "wgrad"), "wgrad", cin, cout, k, stride, hin, ready, NULL);
}

/* Batch norm in training: statistics (1 read) then normalise (1 read, 1 write); backward: the
 * reductions for dgamma, dbeta (read dy, x) then dx (read dy, x, write dx). */
static void bn_fwd(sbuf *s, const char *module, long c, long h) { ewise(s, module, PB(c * h * h), 3, 1, NULL, NULL); }

static void bn_bwd(sbuf *s, const char *module, long c, long h) {
  char name[80], ready[160];
  ewise(s, cat(s, name, sizeof name, module, "bwd"), PB(c * h * h), 5, 1,
        pair(s, ready, sizeof ready, module, "weight", "bias"), NULL);
}

int modelzoo_resnet_text(const modelzoo_resnet *p, char **text, err_t *e) {
  *text = NULL;
  int bottleneck;
  int nb[4];
  switch (p->depth) {
  case 18: bottleneck = 0; memcpy(nb, (int[4]){2, 2, 2, 2}, sizeof nb); break;
  case 34: bottleneck = 0; memcpy(nb, (int[4]){3, 4, 6, 3}, sizeof nb); break;
  case 50: bottleneck = 1; memcpy(nb, (int[4]){3, 4, 6, 3}, sizeof nb); break;
  case 101: bottleneck = 1; memcpy(nb, (int[4]){3, 4, 23, 3}, sizeof nb); break;
  case 152: bottleneck = 1; memcpy(nb, (int[4]){3, 8, 36, 3}, sizeof nb); break;
  default: return err_set(e, ERR_USAGE, "ResNet depth %d is not one of torchvision's 18, 34, 50, 101, 152", p->depth);
  }
  if (p->image < 1 || p->classes < 1 || p->batch < 1)
    return err_set(e, ERR_USAGE, "ResNet sizes must be positive (image %ld, classes %ld, batch %ld)", p->image,
                   p->classes, p->batch);
  if (p->image > 16384 || p->classes > 1L << 24)
    return err_set(e, ERR_USAGE, "ResNet sizes must be at most image 16384 pixels and classes 16777216 (got %ld, %ld)", p->image, p->classes);
  if (p->precision != MODEL_FP32 && p->precision != MODEL_FP16)
    return err_set(e, ERR_USAGE, "ResNet precision must be fp32 or fp16");

  /* The blocks, as torchvision's _make_layer builds them. */
  long exp = bottleneck ? 4 : 1;
  long h1 = conv_out(p->image, 2), h2 = conv_out(h1, 2); /* conv1 output, maxpool output */
  rblock blk[RESNET_MAX_BLOCKS];
  int n = 0;
  long cin = 64, h = h2;
  for (int st = 0; st < 4; st++) {
    long planes = 64L << st;
    for (int j = 0; j < nb[st]; j++) {
      rblock *b = &blk[n++];
      snprintf(b->prefix, sizeof b->prefix, "layer%d.%d", st + 1, j);
      b->stride = st > 0 && j == 0 ? 2 : 1;
      b->cin = cin;
      b->width = planes;
      b->cout = planes * exp;
      b->hin = h;
      b->hout = conv_out(h, b->stride);
      b->downsample = b->stride != 1 || cin != b->cout;
      cin = b->cout;
      h = b->hout;
    }
  }
  long cfin = cin, hfin = h;

  sbuf s = {0};
  char name[96], mod[96], mname[64];
  if (p->name) snprintf(mname, sizeof mname, "%s", p->name);
  else snprintf(mname, sizeof mname, "resnet%d", p->depth);

  /* Parameters, counted as they are written. */
  long P = 64 * 3 * 49 + 2 * 64;
  for (int i = 0; i < n; i++) {
    const rblock *b = &blk[i];
    if (bottleneck)
      P += b->width * b->cin + 2 * b->width + b->width * b->width * 9 + 2 * b->width + b->cout * b->width + 2 * b->cout;
    else P += b->width * b->cin * 9 + 2 * b->width + b->cout * b->width * 9 + 2 * b->cout;
    if (b->downsample) P += b->cout * b->cin + 2 * b->cout;
  }
  P += p->classes * cfin + p->classes;

  put(&s, "ddpsim-model 5\n");
  put(&s, "# ResNet-%d (torchvision resnet%d, v1.5), generated by `ddpsim genmodel resnet`:\n", p->depth, p->depth);
  put(&s, "#   %ldx%ld images, %ld classes; %ld parameters. Derivation: docs/models.md.\n", p->image, p->image,
      p->classes, P);
  if (p->amp) put(&s, "# torch.cuda.amp: parameters and gradients fp32, ops at the run precision.\n");
  put(&s, "name %s\nbatch %ld\ntokens 1 images\nprecision %s\n", mname, p->batch, model_dtype_name(p->precision));
  put(&s, "input %ld                          # a 3 x %ld x %ld %s image and an int64 label per sample\n",
      3 * p->image * p->image * (p->uint8_input ? 1 : 4) + 8, p->image, p->image, p->uint8_input ? "uint8" : "fp32");
  put(&s, "output %ld                           # class scores per sample\n", p->classes);
  put(&s, "layout %s                           # activations' memory format: %s\n",
      model_layout_name(p->channels_last ? MODEL_LAYOUT_NHWC : MODEL_LAYOUT_NCHW),
      p->channels_last ? "torch.channels_last" : "PyTorch's default (contiguous)");
  /* Each BatchNorm's buffers: running_mean and running_var (fp32, C each), num_batches_tracked (int64). */
  long bn_c = 64, bn_n = 1;
  for (int i = 0; i < n; i++) {
    const rblock *b = &blk[i];
    bn_c += bottleneck ? 2 * b->width + b->cout : b->width + b->cout;
    bn_n += bottleneck ? 3 : 2;
    if (b->downsample) bn_c += b->cout, bn_n++;
  }
  put(&s, "buffers %ld                          # BatchNorm running_mean, running_var (fp32), num_batches_tracked (int64)\n",
      8 * bn_c + 8 * bn_n);
  /* What autograd keeps for backward (docs/memory.md): per image, the input (saved by conv1), every
   * convolution's output (saved by its BatchNorm) and every BatchNorm's output (saved by the ReLU
   * applied in place, or by the residual add's ReLU; the next convolution saves the same tensor),
   * a downsample convolution's output, the max pool's output and its int64 indices, the pooled
   * features (saved by fc) and log_softmax's output (saved by the loss) with the int64 target; per
   * BatchNorm its fp32 save_mean and save_invstd, and the loss's total_weight (a scalar of the run type). */
  long sv = 3 * p->image * p->image + 2 * 64 * h1 * h1 + 64 * h2 * h2 + cfin + p->classes;
  long sv1 = 1; /* total_weight */
  for (int i = 0; i < n; i++) {
    const rblock *b = &blk[i];
    long in2 = b->hin * b->hin, out2 = b->hout * b->hout;
    sv += bottleneck ? 2 * b->width * in2 + 2 * b->width * out2 + 2 * b->cout * out2 : 2 * b->width * out2 + 2 * b->cout * out2;
    if (b->downsample) sv += b->cout * out2;
  }
  put(&s, "saved elems=%ld+%ld*B bytes=%ld+%ld*B    # saved for backward: activations (run precision); max-pool indices, target, BN statistics\n",
      sv1, sv, 8 * bn_c, 8 * 64 * h2 * h2 + 8);
  put(&s, "optim sgd-momentum\n\n");

  put(&s, "# Parameters in registration order (model.named_parameters(); BatchNorm running stats are buffers).\n");
  conv_param(&s, "conv1", 64, 3, 7);
  bn_param(&s, "bn1", 64);
  for (int i = 0; i < n; i++) {
    const rblock *b = &blk[i];
    if (bottleneck) {
      conv_param(&s, cat(&s, mod, sizeof mod, b->prefix, "conv1"), b->width, b->cin, 1);
      bn_param(&s, cat(&s, mod, sizeof mod, b->prefix, "bn1"), b->width);
      conv_param(&s, cat(&s, mod, sizeof mod, b->prefix, "conv2"), b->width, b->width, 3);
      bn_param(&s, cat(&s, mod, sizeof mod, b->prefix, "bn2"), b->width);
      conv_param(&s, cat(&s, mod, sizeof mod, b->prefix, "conv3"), b->cout, b->width, 1);
      bn_param(&s, cat(&s, mod, sizeof mod, b->prefix, "bn3"), b->cout);
    } else {
      conv_param(&s, cat(&s, mod, sizeof mod, b->prefix, "conv1"), b->width, b->cin, 3);
      bn_param(&s, cat(&s, mod, sizeof mod, b->prefix, "bn1"), b->width);
      conv_param(&s, cat(&s, mod, sizeof mod, b->prefix, "conv2"), b->cout, b->width, 3);
      bn_param(&s, cat(&s, mod, sizeof mod, b->prefix, "bn2"), b->cout);
    }
    if (b->downsample) {
      conv_param(&s, cat(&s, mod, sizeof mod, b->prefix, "downsample.0"), b->cout, b->cin, 1);
      bn_param(&s, cat(&s, mod, sizeof mod, b->prefix, "downsample.1"), b->cout);
    }
  }
  put(&s, "param fc.weight %ldx%ld\nparam fc.bias %ld\n", p->classes, cfin, p->classes);

  /* ---- forward ---- */
  put(&s, "\nforward\n");
  conv_fwd(&s, "conv1", 3, 64, 7, 2, p->image, h1);
  bn_fwd(&s, "bn1", 64, h1);
  ewise(&s, "relu", PB(64 * h1 * h1), 2, 1, NULL, NULL);
  snprintf(name, sizeof name, "3x3/2 max pool: read %ldx%ld, write %ldx%ld and the argmax indices", h1, h1, h2, h2);
  ewise(&s, "maxpool", PB(64 * (h1 * h1 + 2 * h2 * h2)), 1, 1, NULL, name);
  for (int i = 0; i < n; i++) {
    const rblock *b = &blk[i];
    const char *x = b->prefix;
    long ho2 = b->hout * b->hout;
    if (bottleneck) {
      conv_fwd(&s, cat(&s, mod, sizeof mod, x, "conv1"), b->cin, b->width, 1, 1, b->hin, b->hin);
      bn_fwd(&s, cat(&s, mod, sizeof mod, x, "bn1"), b->width, b->hin);
      ewise(&s, cat(&s, name, sizeof name, x, "relu1"), PB(b->width * b->hin * b->hin), 2, 1, NULL, NULL);
      conv_fwd(&s, cat(&s, mod, sizeof mod, x, "conv2"), b->width, b->width, 3, b->stride, b->hin, b->hout);
      bn_fwd(&s, cat(&s, mod, sizeof mod, x, "bn2"), b->width, b->hout);
      ewise(&s, cat(&s, name, sizeof name, x, "relu2"), PB(b->width * ho2), 2, 1, NULL, NULL);
      conv_fwd(&s, cat(&s, mod, sizeof mod, x, "conv3"), b->width, b->cout, 1, 1, b->hout, b->hout);
      bn_fwd(&s, cat(&s, mod, sizeof mod, x, "bn3"), b->cout, b->hout);
    } else {
      conv_fwd(&s, cat(&s, mod, sizeof mod, x, "conv1"), b->cin, b->width, 3, b->stride, b->hin, b->hout);
      bn_fwd(&s, cat(&s, mod, sizeof mod, x, "bn1"), b->width, b->hout);
      ewise(&s, cat(&s, name, sizeof name, x, "relu1"), PB(b->width * ho2), 2, 1, NULL, NULL);
      conv_fwd(&s, cat(&s, mod, sizeof mod, x, "conv2"), b->width, b->cout, 3, 1, b->hout, b->hout);
      bn_fwd(&s, cat(&s, mod, sizeof mod, x, "bn2"), b->cout, b->hout);
    }
    if (b->downsample) {
      conv_fwd(&s, cat(&s, mod, sizeof mod, x, "downsample.0"), b->cin, b->cout, 1, b->stride, b->hin, b->hout);
      bn_fwd(&s, cat(&s, mod, sizeof mod, x, "downsample.1"), b->cout, b->hout);
    }
    ewise(&s, cat(&s, name, sizeof name, x, "add"), PB(b->cout * ho2), 3, 1, NULL, "out += identity");
    ewise(&s, cat(&s, name, sizeof name, x, "relu"), PB(b->cout * ho2), 2, 1, NULL, NULL);
  }
  snprintf(name, sizeof name, "adaptive average pool: read %ldx%ld, write 1x1", hfin, hfin);
  ewise(&s, "avgpool", PB(cfin * (hfin * hfin + 1)), 1, 1, NULL, name);
  gemm(&s, "fc", C(p->classes), PB(1), C(cfin), NULL, NULL);
  ewise(&s, "loss", PB(p->classes), 2, 1, NULL,
        "cross-entropy: log-softmax reads the logits, writes log-probabilities");

  /* ---- backward: reverse layer order; ready after each autograd node ---- */
  put(&s, "\nbackward\n");
  ewise(&s, "loss.bwd", PB(p->classes), 4, 1, NULL, "NLL gradient into zeros (1), log-softmax backward (3)");
  gemm(&s, "fc.dgrad", C(cfin), PB(1), C(p->classes), NULL, NULL);
  gemm(&s, "fc.wgrad", C(p->classes), C(cfin), PB(1), NULL, NULL);
  ewise(&s, "fc.dbias", PB(p->classes), 1, 1, "fc.bias,fc.weight", "bias gradient: sum over the batch; bias ready first");
  ewise(&s, "avgpool.bwd", PB(cfin * (hfin * hfin + 1)), 1, 1, NULL, NULL);
  for (int i = n - 1; i >= 0; i--) {
    const rblock *b = &blk[i];
    const char *x = b->prefix;
    long ho2 = b->hout * b->hout;
    put(&s, "# %s\n", x);
    ewise(&s, cat(&s, name, sizeof name, x, "relu.bwd"), PB(b->cout * ho2), 3, 1, NULL, NULL);
    /* Autograd runs the node created last first: the shortcut, computed after bn3 in forward. */
    if (b->downsample) {
      bn_bwd(&s, cat(&s, mod, sizeof mod, x, "downsample.1"), b->cout, b->hout);
      conv_bwd(&s, cat(&s, mod, sizeof mod, x, "downsample.0"), b->cin, b->cout, 1, b->stride, b->hin, 0);
    }
    if (bottleneck) {
      bn_bwd(&s, cat(&s, mod, sizeof mod, x, "bn3"), b->cout, b->hout);
      conv_bwd(&s, cat(&s, mod, sizeof mod, x, "conv3"), b->width, b->cout, 1, 1, b->hout, 0);
      ewise(&s, cat(&s, name, sizeof name, x, "relu2.bwd"), PB(b->width * ho2), 3, 1, NULL, NULL);
      bn_bwd(&s, cat(&s, mod, sizeof mod, x, "bn2"), b->width, b->hout);
      conv_bwd(&s, cat(&s, mod, sizeof mod, x, "conv2"), b->width, b->width, 3, b->stride, b->hin, 0);
      ewise(&s, cat(&s, name, sizeof name, x, "relu1.bwd"), PB(b->width * b->hin * b->hin), 3, 1, NULL, NULL);
      bn_bwd(&s, cat(&s, mod, sizeof mod, x, "bn1"), b->width, b->hin);
      conv_bwd(&s, cat(&s, mod, sizeof mod, x, "conv1"), b->cin, b->width, 1, 1, b->hin, 0);
    } else {
      bn_bwd(&s, cat(&s, mod, sizeof mod, x, "bn2"), b->cout, b->hout);
      conv_bwd(&s, cat(&s, mod, sizeof mod, x, "conv2"), b->width, b->cout, 3, 1, b->hout, 0);
      ewise(&s, cat(&s, name, sizeof name, x, "relu1.bwd"), PB(b->width * ho2), 3, 1, NULL, NULL);
      bn_bwd(&s, cat(&s, mod, sizeof mod, x, "bn1"), b->width, b->hout);
      conv_bwd(&s, cat(&s, mod, sizeof mod, x, "conv1"), b->cin, b->width, 3, b->stride, b->hin, 0);
    }
    ewise(&s, cat(&s, name, sizeof name, x, "dx_sum"), PB(b->cin * b->hin * b->hin), 3, 1, NULL,
          "the block input's gradient: shortcut plus branch");
  }
  put(&s, "# stem\n");
  ewise(&s, "maxpool.bwd", PB(64 * (h1 * h1 + 4 * h2 * h2)), 1, 1, NULL,
        "zero the input gradient, read dy and indices, scatter-add");
  ewise(&s, "relu.bwd", PB(64 * h1 * h1), 3, 1, NULL, NULL);
  bn_bwd(&s, "bn1", 64, h1);
  conv_bwd(&s, "conv1", 3, 64, 7, 2, p->image, 1);

  put(&s, "\noptimizer\n");
  put(&s, "# SGD with momentum on fp32 weights: read param, grad, momentum; write param, momentum.\n");
  ewise_dt(&s, "sgd", C(P), 5, 1, "fp32", NULL, NULL);
  return finish(&s, p->amp, text, e);
}

/* ======================================================================================
 * BERT (Hugging Face BertForPreTraining)
 *
 * Tokens per step n = S*B. Every nn.Linear is one GEMM (bias fused into addmm) forward, and
 * backward its input gradient, weight gradient and bias reduction, in that order, after which
 * its autograd node is done. Attention runs as strided-batched GEMMs over the A heads and B
 * sequences: one launch each, written as one GEMM with the heads and the batch folded into n.
 * ====================================================================================== */

int modelzoo_bert_defaults(const char *size, modelzoo_bert *spec, err_t *e) {
  int large;
  if (size && strcmp(size, "base") == 0) large = 0;
  else if (size && strcmp(size, "large") == 0) large = 1;
  else return err_set(e, ERR_USAGE, "BERT size '%s' is not base or large", size ? size : "(null)");
  spec->name = large ? "bert-large" : "bert-base";
  spec->hidden = large ? 1024 : 768;
  spec->layers = large ? 24 : 12;
  spec->heads = large ? 16 : 12;
  spec->intermediate = large ? 4096 : 3072;
  spec->vocab = 30522;
  spec->max_position = 512;
  spec->type_vocab = 2;
  spec->seq = 128;
  spec->batch = 32;
  spec->precision = MODEL_FP16;
  spec->amp = 0;
  return ERR_OK;
}

/* One nn.Linear (out x in) over `rows` rows per sample: forward, or backward with ready=. */
static void linear_fwd(sbuf *s, const char *name, long out, long in, long rows, const char *note) {
  gemm(s, name, C(out), PB(rows), C(in), NULL, note);
}

static void linear_bwd(sbuf *s, const char *name, const char *module, long out, long in, long rows) {
  char n1[96], r[256];
  gemm(s, cat(s, n1, sizeof n1, name, "dgrad"), C(in), PB(rows), C(out), NULL, NULL);
  gemm(s, cat(s, n1, sizeof n1, name, "wgrad"), C(out), C(in), PB(rows), NULL, NULL);
  /* autograd accumulates nn.Linear's bias gradient before its weight's (AccumulateGrad order, checked
   * against post-accumulate-grad hooks by tests/torch/test_reducer.py) */
  ewise(s, cat(s, n1, sizeof n1, name, "dbias"), PB(out * rows), 1, 1, pair(s, r, sizeof r, module, "bias", "weight"),
        NULL);
}

/* LayerNorm: forward reads x and writes y (statistics kept per row); backward reads dy and x for
 * dx (3 arrays) and again for dgamma, dbeta (2). */
static void ln_bwd(sbuf *s, const char *name, const char *module, long elems_per_sample) {
  char n1[96], r[256];
  ewise(s, cat(s, n1, sizeof n1, name, "bwd"), PB(elems_per_sample), 5, 1,
        pair(s, r, sizeof r, module, "weight", "bias"), NULL);
}

int modelzoo_bert_text(const modelzoo_bert *p, char **text, err_t *e) {
  *text = NULL;
  long H = p->hidden, L = p->layers, A = p->heads, I = p->intermediate, V = p->vocab, Pm = p->max_position,
       T = p->type_vocab, S = p->seq;
  if (H < 1 || L < 1 || A < 1 || I < 1 || V < 1 || Pm < 1 || T < 1 || S < 1 || p->batch < 1)
    return err_set(e, ERR_USAGE,
                   "BERT sizes must be positive (hidden %ld, layers %ld, heads %ld, intermediate %ld, vocab %ld, "
                   "max_position %ld, type_vocab %ld, seq %ld, batch %ld)",
                   H, L, A, I, V, Pm, T, S, p->batch);
  if (H > 1L << 16 || L > 1024 || I > 1L << 20 || V > 1L << 24 || Pm > 1L << 20 || T > 1L << 20)
    return err_set(e, ERR_USAGE,
                   "BERT sizes must be at most hidden 65536, layers 1024, intermediate 1048576, vocab 16777216, "
                   "positions and type vocab 1048576 (got %ld, %ld, %ld, %ld, %ld, %ld)", H, L, I, V, Pm, T);
  if (H % A != 0) return err_set(e, ERR_USAGE, "BERT hidden size %ld is not a multiple of the %ld heads", H, A);
  if (S > Pm)
    return err_set(e, ERR_USAGE, "BERT sequence %ld is longer than its %ld position embeddings", S, Pm);
  if (p->precision != MODEL_FP32 && p->precision != MODEL_FP16)
    return err_set(e, ERR_USAGE, "BERT precision must be fp32 or fp16");
  long d = H / A;
  long layerP = 4 * (H * H + H) + 2 * H + (I * H + I) + (H * I + H) + 2 * H;
  long bertP = V * H + Pm * H + T * H + 2 * H + L * layerP + H * H + H;
  long P = bertP + V + H * H + H + 2 * H + 2 * H + 2;

  sbuf s = {0};
  char mname[64], name[128], mod[128], pre[64], r[256];
  if (p->name) snprintf(mname, sizeof mname, "%s", p->name);
  else snprintf(mname, sizeof mname, "bert-%ldx%ld", L, H);

  put(&s, "ddpsim-model 5\n");
  put(&s, "# BERT (Hugging Face BertForPreTraining: BertModel + MLM and NSP heads), generated by\n");
  put(&s, "#   `ddpsim genmodel bert`: hidden %ld, layers %ld, heads %ld, intermediate %ld, vocab %ld, seq %ld;\n",
      H, L, A, I, V, S);
  put(&s, "#   %ld parameters (BertModel %ld; the MLM decoder is tied to the word embeddings).\n", P, bertP);
  put(&s, "#   Derivation: docs/models.md.\n");
  if (p->amp) put(&s, "# torch.cuda.amp: parameters and gradients fp32, ops at the run precision.\n");
  put(&s, "name %s\nbatch %ld\ntokens %ld tokens\nprecision %s\n", mname, p->batch, S, model_dtype_name(p->precision));
  put(&s, "input %ld                          # input_ids, token_type_ids, attention_mask, MLM labels (int64 x %ld) and the NSP label\n",
      4 * S * 8 + 8, S);
  put(&s, "output %ld                       # MLM scores for every token (S x V) and the NSP pair\n", S * V + 2);
  put(&s, "buffers %ld                           # position_ids and token_type_ids, int64 x max_position each\n", 16 * Pm);
  /* What autograd keeps for backward (docs/memory.md), eager attention, dropout 0.1 in training as
   * on a GPU (native_dropout keeps its output where the next op saves it, and a bool mask). Per
   * token: the embeddings' sum and dropped output; per layer q, k, v, the context, both residual
   * sums and LayerNorm outputs, the intermediate and GELU outputs (2I), softmax's and dropout's
   * A x S probabilities; the MLM head's dense and GELU outputs, LayerNorm output and log_softmax over
   * V. Fixed-type bytes per token: the ids and labels (int64), every LayerNorm's fp32 mean and rstd,
   * the masks (A x S + 2H per layer, H for the embeddings). Per sample: the pooler's tanh output,
   * NSP's log_softmax (2) and label; once: one sequence's token_type_ids and the two losses'
   * total_weight scalars (of the run type). */
  put(&s, "saved elems=2+%ld*B bytes=%ld+%ld*B     # saved for backward: activations (run precision); ids, LayerNorm statistics, dropout masks\n",
      S * (2 * H + L * (8 * H + 2 * I + 2 * A * S) + 3 * H + V) + H + 2,
      8 * S, S * (8 + 8 + H + L * (A * S + 2 * H + 16) + 8 + 8) + 8);
  put(&s, "optim adamw\n\n");

  put(&s, "# Parameters in registration order (model.named_parameters(); tied weights once).\n");
  put(&s, "param bert.embeddings.word_embeddings.weight %ldx%ld\n", V, H);
  put(&s, "param bert.embeddings.position_embeddings.weight %ldx%ld\n", Pm, H);
  put(&s, "param bert.embeddings.token_type_embeddings.weight %ldx%ld\n", T, H);
  put(&s, "param bert.embeddings.LayerNorm.weight %ld\nparam bert.embeddings.LayerNorm.bias %ld\n", H, H);
  static const char *const qkv[3] = {"query", "key", "value"};
  for (long l = 0; l < L; l++) {
    snprintf(pre, sizeof pre, "bert.encoder.layer.%ld", l);
    for (int j = 0; j < 3; j++)
      put(&s, "param %s.attention.self.%s.weight %ldx%ld\nparam %s.attention.self.%s.bias %ld\n", pre, qkv[j], H, H,
          pre, qkv[j], H);
    put(&s, "param %s.attention.output.dense.weight %ldx%ld\nparam %s.attention.output.dense.bias %ld\n", pre, H, H,
        pre, H);
    put(&s, "param %s.attention.output.LayerNorm.weight %ld\nparam %s.attention.output.LayerNorm.bias %ld\n", pre, H,
        pre, H);
    put(&s, "param %s.intermediate.dense.weight %ldx%ld\nparam %s.intermediate.dense.bias %ld\n", pre, I, H, pre, I);
    put(&s, "param %s.output.dense.weight %ldx%ld\nparam %s.output.dense.bias %ld\n", pre, H, I, pre, H);
    put(&s, "param %s.output.LayerNorm.weight %ld\nparam %s.output.LayerNorm.bias %ld\n", pre, H, pre, H);
  }
  put(&s, "param bert.pooler.dense.weight %ldx%ld\nparam bert.pooler.dense.bias %ld\n", H, H, H);
  put(&s, "# BertLMPredictionHead's own bias comes before its submodules; decoder.weight is the word embedding.\n");
  put(&s, "param cls.predictions.bias %ld\n", V);
  put(&s, "param cls.predictions.transform.dense.weight %ldx%ld\nparam cls.predictions.transform.dense.bias %ld\n", H,
      H, H);
  put(&s, "param cls.predictions.transform.LayerNorm.weight %ld\nparam cls.predictions.transform.LayerNorm.bias %ld\n",
      H, H);
  put(&s, "param cls.seq_relationship.weight 2x%ld\nparam cls.seq_relationship.bias 2\n", H);

  long SH = S * H, SI = S * I, SSA = S * S * A;
  /* ---- forward ---- */
  put(&s, "\nforward\n");
  ewise(&s, "embeddings.word", PB(SH), 2, 1, NULL, "gather: read rows, write");
  ewise(&s, "embeddings.token_type", PB(SH), 2, 1, NULL, NULL);
  ewise(&s, "embeddings.sum", PB(SH), 3, 1, NULL, NULL);
  ewise(&s, "embeddings.position", PB(SH), 2, 1, NULL, "in-place add of the broadcast S x H table");
  ewise(&s, "embeddings.LayerNorm", PB(SH), 2, 1, NULL, NULL);
  ewise(&s, "embeddings.dropout", PB(SH), 3, 1, NULL, "read, write, and the mask counted as one array");
  for (long l = 0; l < L; l++) {
    snprintf(pre, sizeof pre, "layer.%ld", l);
    put(&s, "# %s\n", pre);
    for (int j = 0; j < 3; j++) linear_fwd(&s, cat(&s, name, sizeof name, pre, qkv[j]), H, H, S, NULL);
    ewise(&s, cat(&s, name, sizeof name, pre, "qk_heads"), PB(SH), 2, 2, NULL, "Q, K made contiguous per head for bmm");
    snprintf(r, sizeof r, "Q K^T: %ld heads x B of %ldx%ldx%ld", A, S, S, d);
    gemm(&s, cat(&s, name, sizeof name, pre, "scores"), C(S), PB(S * A), C(d), NULL, r);
    ewise(&s, cat(&s, name, sizeof name, pre, "scale"), PB(SSA), 2, 1, NULL, "/ sqrt(head size)");
    ewise(&s, cat(&s, name, sizeof name, pre, "mask"), PB(SSA), 2, 1, NULL, "+ attention mask (broadcast)");
    ewise(&s, cat(&s, name, sizeof name, pre, "softmax"), PB(SSA), 2, 1, NULL, NULL);
    ewise(&s, cat(&s, name, sizeof name, pre, "attn_dropout"), PB(SSA), 3, 1, NULL, NULL);
    ewise(&s, cat(&s, name, sizeof name, pre, "v_heads"), PB(SH), 2, 1, NULL, NULL);
    snprintf(r, sizeof r, "(P V)^T: %ld heads x B of %ldx%ldx%ld", A, d, S, S);
    gemm(&s, cat(&s, name, sizeof name, pre, "context"), C(d), PB(S * A), C(S), NULL, r);
    ewise(&s, cat(&s, name, sizeof name, pre, "context_merge"), PB(SH), 2, 1, NULL, "permute back to B x S x H");
    linear_fwd(&s, cat(&s, name, sizeof name, pre, "attention.output.dense"), H, H, S, NULL);
    ewise(&s, cat(&s, name, sizeof name, pre, "attention.output.dropout"), PB(SH), 3, 1, NULL, NULL);
    ewise(&s, cat(&s, name, sizeof name, pre, "attention.output.residual"), PB(SH), 3, 1, NULL, NULL);
    ewise(&s, cat(&s, name, sizeof name, pre, "attention.output.LayerNorm"), PB(SH), 2, 1, NULL, NULL);
    linear_fwd(&s, cat(&s, name, sizeof name, pre, "intermediate.dense"), I, H, S, NULL);
    ewise(&s, cat(&s, name, sizeof name, pre, "gelu"), PB(SI), 2, 1, NULL, NULL);
    linear_fwd(&s, cat(&s, name, sizeof name, pre, "output.dense"), H, I, S, NULL);
    ewise(&s, cat(&s, name, sizeof name, pre, "output.dropout"), PB(SH), 3, 1, NULL, NULL);
    ewise(&s, cat(&s, name, sizeof name, pre, "output.residual"), PB(SH), 3, 1, NULL, NULL);
    ewise(&s, cat(&s, name, sizeof name, pre, "output.LayerNorm"), PB(SH), 2, 1, NULL, NULL);
  }
  put(&s, "# pooler (first token) and the pretraining heads\n");
  linear_fwd(&s, "pooler.dense", H, H, 1, NULL);
  ewise(&s, "pooler.tanh", PB(H), 2, 1, NULL, NULL);
  linear_fwd(&s, "cls.transform.dense", H, H, S, NULL);
  ewise(&s, "cls.transform.gelu", PB(SH), 2, 1, NULL, NULL);
  ewise(&s, "cls.transform.LayerNorm", PB(SH), 2, 1, NULL, NULL);
  linear_fwd(&s, "cls.decoder", V, H, S, "MLM logits for every token; weight = word embeddings");
  linear_fwd(&s, "cls.seq_relationship", 2, H, 1, NULL);
  ewise(&s, "mlm_loss", PB(S * V), 2, 1, NULL, "log-softmax: read logits, write log-probabilities");
  ewise(&s, "nsp_loss", PB(2), 2, 1, NULL, NULL);

  /* ---- backward: autograd's order (latest-created node first among the ready ones) ---- */
  put(&s, "\nbackward\n");
  ewise(&s, "nsp_loss.bwd", PB(2), 4, 1, NULL, NULL);
  ewise(&s, "mlm_loss.bwd", PB(S * V), 4, 1, NULL, "NLL gradient into zeros (1), log-softmax backward (3)");
  linear_bwd(&s, "cls.seq_relationship", "cls.seq_relationship", 2, H, 1);
  gemm(&s, "cls.decoder.dgrad", C(H), PB(S), C(V), NULL, NULL);
  gemm(&s, "cls.decoder.wgrad", C(V), C(H), PB(S), NULL, "into the word embeddings' gradient: final only at the end");
  ewise(&s, "cls.decoder.dbias", PB(S * V), 1, 1, "cls.predictions.bias", NULL);
  ln_bwd(&s, "cls.transform.LayerNorm", "cls.predictions.transform.LayerNorm", SH);
  ewise(&s, "cls.transform.gelu.bwd", PB(SH), 3, 1, NULL, NULL);
  linear_bwd(&s, "cls.transform.dense", "cls.predictions.transform.dense", H, H, S);
  ewise(&s, "pooler.tanh.bwd", PB(H), 3, 1, NULL, NULL);
  linear_bwd(&s, "pooler.dense", "bert.pooler.dense", H, H, 1);
  ewise(&s, "sequence_output.grad", PB(SH), 4, 1, NULL, "first-token gradient into zeros (1), plus the MLM head's (3)");
  for (long l = L - 1; l >= 0; l--) {
    snprintf(pre, sizeof pre, "layer.%ld", l);
    char mpre[64];
    snprintf(mpre, sizeof mpre, "bert.encoder.layer.%ld", l);
    put(&s, "# %s\n", pre);
    ln_bwd(&s, cat(&s, name, sizeof name, pre, "output.LayerNorm"), cat(&s, mod, sizeof mod, mpre, "output.LayerNorm"),
           SH);
    ewise(&s, cat(&s, name, sizeof name, pre, "output.dropout.bwd"), PB(SH), 3, 1, NULL, NULL);
    linear_bwd(&s, cat(&s, name, sizeof name, pre, "output.dense"), cat(&s, mod, sizeof mod, mpre, "output.dense"), H,
               I, S);
    ewise(&s, cat(&s, name, sizeof name, pre, "gelu.bwd"), PB(SI), 3, 1, NULL, NULL);
    linear_bwd(&s, cat(&s, name, sizeof name, pre, "intermediate.dense"),
               cat(&s, mod, sizeof mod, mpre, "intermediate.dense"), I, H, S);
    ewise(&s, cat(&s, name, sizeof name, pre, "attention_output.grad_sum"), PB(SH), 3, 1, NULL,
          "FFN path plus residual");
    ln_bwd(&s, cat(&s, name, sizeof name, pre, "attention.output.LayerNorm"),
           cat(&s, mod, sizeof mod, mpre, "attention.output.LayerNorm"), SH);
    ewise(&s, cat(&s, name, sizeof name, pre, "attention.output.dropout.bwd"), PB(SH), 3, 1, NULL, NULL);
    linear_bwd(&s, cat(&s, name, sizeof name, pre, "attention.output.dense"),
               cat(&s, mod, sizeof mod, mpre, "attention.output.dense"), H, H, S);
    ewise(&s, cat(&s, name, sizeof name, pre, "context_merge.bwd"), PB(SH), 2, 1, NULL, NULL);
    gemm(&s, cat(&s, name, sizeof name, pre, "context.dprobs"), C(S), PB(S * A), C(d), NULL, "dC V^T");
    gemm(&s, cat(&s, name, sizeof name, pre, "context.dvalue"), C(d), PB(S * A), C(S), NULL, "(P^T dC)^T");
    ewise(&s, cat(&s, name, sizeof name, pre, "attn_dropout.bwd"), PB(SSA), 3, 1, NULL, NULL);
    ewise(&s, cat(&s, name, sizeof name, pre, "softmax.bwd"), PB(SSA), 3, 1, NULL, NULL);
    ewise(&s, cat(&s, name, sizeof name, pre, "scale.bwd"), PB(SSA), 2, 1, NULL, NULL);
    gemm(&s, cat(&s, name, sizeof name, pre, "scores.dquery"), C(d), PB(S * A), C(S), NULL, "(dS K)^T");
    gemm(&s, cat(&s, name, sizeof name, pre, "scores.dkey"), C(d), PB(S * A), C(S), NULL, "(dS^T Q)^T");
    ewise(&s, cat(&s, name, sizeof name, pre, "qkv_heads.bwd"), PB(SH), 2, 3, NULL,
          "per-head gradients back to B x S x H");
    for (int j = 2; j >= 0; j--) {
      char sub[64];
      snprintf(sub, sizeof sub, "attention.self.%s", qkv[j]);
      linear_bwd(&s, cat(&s, name, sizeof name, pre, qkv[j]), cat(&s, mod, sizeof mod, mpre, sub), H, H, S);
    }
    ewise(&s, cat(&s, name, sizeof name, pre, "input.grad_sum"), PB(SH), 3, 3, NULL,
          "value, key and query input gradients plus the residual");
  }
  put(&s, "# embeddings\n");
  ewise(&s, "embeddings.dropout.bwd", PB(SH), 3, 1, NULL, NULL);
  ln_bwd(&s, "embeddings.LayerNorm", "bert.embeddings.LayerNorm", SH);
  ewise(&s, "embeddings.position.bwd", PB(SH), 1, 1, "bert.embeddings.position_embeddings.weight",
        "sum over the batch into S rows");
  ewise(&s, "embeddings.token_type.bwd", PB(SH), 2, 1, "bert.embeddings.token_type_embeddings.weight", "scatter-add");
  ewise(&s, "embeddings.word.bwd", PB(SH), 2, 1, NULL, "scatter-add into a zeroed V x H gradient");
  ewise(&s, "embeddings.word.tied_sum", C(V * H), 4, 1, "bert.embeddings.word_embeddings.weight",
        "zero-fill (1), then add the decoder's gradient (3)");

  return adamw_finish(&s, P, p->amp, text, e);
}

/* ======================================================================================
 * GPT (Hugging Face GPT2LMHeadModel)
 *
 * Pre-LayerNorm decoder blocks: ln_1, c_attn (Q, K, V in one Conv1D: addmm with an in x out
 * weight), causal attention, c_proj, residual; ln_2, c_fc, GELU (tanh form), c_proj, residual; then
 * ln_f and the LM head over every token. Attention's products are strided-batched GEMMs over the A
 * heads and B sequences, written with gemms= (format version 2). The order of backward and of the
 * gradient-ready points is the one ddpsim_export records from GPT2LMHeadModel (docs/models.md).
 * ====================================================================================== */

int modelzoo_gpt_defaults(const char *size, modelzoo_gpt *spec, err_t *e) {
  static const char *const sizes[4] = {"small", "medium", "large", "xl"};
  static const char *const names[4] = {"gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"};
  static const long hidden[4] = {768, 1024, 1280, 1600}, layers[4] = {12, 24, 36, 48}, heads[4] = {12, 16, 20, 25};
  for (int i = 0; i < 4; i++) {
    if (!size || strcmp(size, sizes[i]) != 0) continue;
    *spec = (modelzoo_gpt){.name = names[i], .hidden = hidden[i], .layers = layers[i], .heads = heads[i],
                           .ffn = 4 * hidden[i], .vocab = 50257, .max_position = 1024, .seq = 1024, .batch = 8,
                           .untied = 0, .precision = MODEL_FP16, .amp = 0};
    return ERR_OK;
  }
  return err_set(e, ERR_INPUT, "GPT size '%s' is not small, medium, large or xl", size ? size : "(null)");
}

/* Causal attention of one layer, forward: heads split and scaled, Q K^T per head, the causal mask,
 * softmax, dropout, P V, heads merged. */
static void gpt_attention_fwd(sbuf *s, const char *pre, long S, long H, long A, int drop) {
  char name[128], note[96];
  long d = H / A, SH = S * H, SSA = S * S * A;
  ewise(s, cat(s, name, sizeof name, pre, "qkv_heads"), PB(SH), 2, 2, NULL, "Q scaled, K made contiguous per head");
  snprintf(note, sizeof note, "Q K^T: %ld heads x B of %ldx%ldx%ld", A, S, S, d);
  put(s, "gemm  %-40s m=%ld n=%ld k=%ld gemms=%ld*B  # %s\n", cat(s, name, sizeof name, pre, "scores"), S, S, d, A,
      note);
  ewise(s, cat(s, name, sizeof name, pre, "causal_mask"), PB(SSA), 3, 1, NULL, "where(mask, scores, -inf)");
  ewise(s, cat(s, name, sizeof name, pre, "softmax"), PB(SSA), 2, 1, NULL, NULL);
  if (drop) ewise(s, cat(s, name, sizeof name, pre, "attn_dropout"), PB(SSA), 3, 1, NULL, NULL);
  snprintf(note, sizeof note, "P V: %ld heads x B of %ldx%ldx%ld", A, S, d, S);
  put(s, "gemm  %-40s m=%ld n=%ld k=%ld gemms=%ld*B  # %s\n", cat(s, name, sizeof name, pre, "context"), d, S, S, A,
      note);
  ewise(s, cat(s, name, sizeof name, pre, "merge_heads"), PB(SH), 2, 1, NULL, NULL);
}

/* The same attention through F.scaled_dot_product_attention(is_causal=True, dropout_p=0.1): Q, K,
 * V passed as views of c_attn's output (split and permuted, no copy; the scale is the kernel's),
 * one fused op per pass, then the heads merged (transpose and contiguous: a copy). */
static void gpt_sdpa_fwd(sbuf *s, const char *pre, long S, long H, long A, int drop) {
  char name[128];
  put(s, "attn  %-40s heads=%ld*B q=%ld kv=%ld d=%ld causal=1 pass=fwd  # scaled_dot_product_attention, dropout %s\n",
      cat(s, name, sizeof name, pre, "sdpa"), A, S, S, H / A, drop ? "0.1" : "0");
  ewise(s, cat(s, name, sizeof name, pre, "merge_heads"), PB(S * H), 2, 1, NULL, NULL);
}

static void gpt_sdpa_bwd(sbuf *s, const char *pre, long S, long H, long A) {
  char name[128];
  ewise(s, cat(s, name, sizeof name, pre, "merge_heads.bwd"), PB(S * H), 2, 1, NULL, NULL);
  put(s, "attn  %-40s heads=%ld*B q=%ld kv=%ld d=%ld causal=1 pass=bwd  # dQ, dK, dV\n",
      cat(s, name, sizeof name, pre, "sdpa.bwd"), A, S, S, H / A);
  ewise(s, cat(s, name, sizeof name, pre, "qkv_heads.bwd"), PB(S * H), 2, 3, NULL, "dQ, dK, dV into B x S x 3H");
}

static void gpt_attention_bwd(sbuf *s, const char *pre, long S, long H, long A, int drop) {
  char name[128];
  long d = H / A, SH = S * H, SSA = S * S * A;
  ewise(s, cat(s, name, sizeof name, pre, "merge_heads.bwd"), PB(SH), 2, 1, NULL, NULL);
  put(s, "gemm  %-40s m=%ld n=%ld k=%ld gemms=%ld*B  # dC V^T\n", cat(s, name, sizeof name, pre, "context.dprobs"), S,
      S, d, A);
  put(s, "gemm  %-40s m=%ld n=%ld k=%ld gemms=%ld*B  # P^T dC\n", cat(s, name, sizeof name, pre, "context.dvalue"), d,
      S, S, A);
  if (drop) ewise(s, cat(s, name, sizeof name, pre, "attn_dropout.bwd"), PB(SSA), 3, 1, NULL, NULL);
  ewise(s, cat(s, name, sizeof name, pre, "softmax.bwd"), PB(SSA), 3, 1, NULL, NULL);
  ewise(s, cat(s, name, sizeof name, pre, "causal_mask.bwd"), PB(SSA), 3, 1, NULL, NULL);
  put(s, "gemm  %-40s m=%ld n=%ld k=%ld gemms=%ld*B  # dS K\n", cat(s, name, sizeof name, pre, "scores.dquery"), d, S,
      S, A);
  put(s, "gemm  %-40s m=%ld n=%ld k=%ld gemms=%ld*B  # dS^T Q\n", cat(s, name, sizeof name, pre, "scores.dkey"), d,
      S, S, A);
  ewise(s, cat(s, name, sizeof name, pre, "qkv_heads.bwd"), PB(SH), 2, 3, NULL, "per-head gradients into B x S x 3H");
}

/* One decoder block's forward: ln_1, c_attn, attention, c_proj, dropout, residual; ln_2, c_fc, GELU,
 * c_proj, dropout, residual. pre: "h.3" (or "h.3.recompute", its recomputation in backward). */
static void gpt_block_fwd(sbuf *s, const modelzoo_gpt *p, const char *pre, long drop) {
  char name[128];
  long S = p->seq, H = p->hidden, A = p->heads, F = p->ffn, SH = S * H, SF = S * F;
  ewise(s, cat(s, name, sizeof name, pre, "ln_1"), PB(SH), 2, 1, NULL, NULL);
  linear_fwd(s, cat(s, name, sizeof name, pre, "attn.c_attn"), 3 * H, H, S, NULL);
  if (p->eager) gpt_attention_fwd(s, pre, S, H, A, (int)drop);
  else gpt_sdpa_fwd(s, pre, S, H, A, (int)drop);
  linear_fwd(s, cat(s, name, sizeof name, pre, "attn.c_proj"), H, H, S, NULL);
  if (drop) ewise(s, cat(s, name, sizeof name, pre, "attn.resid_dropout"), PB(SH), 3, 1, NULL, NULL);
  ewise(s, cat(s, name, sizeof name, pre, "residual_1"), PB(SH), 3, 1, NULL, NULL);
  ewise(s, cat(s, name, sizeof name, pre, "ln_2"), PB(SH), 2, 1, NULL, NULL);
  linear_fwd(s, cat(s, name, sizeof name, pre, "mlp.c_fc"), F, H, S, NULL);
  ewise(s, cat(s, name, sizeof name, pre, "mlp.gelu"), PB(SF), 2, 1, NULL,
        p->exact_gelu ? "nn.GELU, one kernel" : "tanh GELU, one fused pass");
  linear_fwd(s, cat(s, name, sizeof name, pre, "mlp.c_proj"), H, F, S, NULL);
  if (drop) ewise(s, cat(s, name, sizeof name, pre, "mlp.dropout"), PB(SH), 3, 1, NULL, NULL);
  ewise(s, cat(s, name, sizeof name, pre, "residual_2"), PB(SH), 3, 1, NULL, NULL);
}

int modelzoo_gpt_text(const modelzoo_gpt *p, char **text, err_t *e) {
  *text = NULL;
  long H = p->hidden, L = p->layers, A = p->heads, F = p->ffn, V = p->vocab, Pm = p->max_position, S = p->seq;
  if (H < 1 || L < 1 || A < 1 || F < 1 || V < 1 || Pm < 1 || S < 1 || p->batch < 1)
    return err_set(e, ERR_USAGE,
                   "GPT sizes must be positive (hidden %ld, layers %ld, heads %ld, ffn %ld, vocab %ld, "
                   "max_position %ld, seq %ld, batch %ld)",
                   H, L, A, F, V, Pm, S, p->batch);
  if (H > 1L << 16 || L > 1024 || F > 1L << 20 || V > 1L << 24 || Pm > 1L << 20)
    return err_set(e, ERR_USAGE,
                   "GPT sizes must be at most hidden 65536, layers 1024, ffn 1048576, vocab 16777216 and positions "
                   "1048576 (got %ld, %ld, %ld, %ld, %ld)", H, L, F, V, Pm);
  if (H % A != 0) return err_set(e, ERR_USAGE, "GPT hidden size %ld is not a multiple of the %ld heads", H, A);
  if (S > Pm) return err_set(e, ERR_USAGE, "GPT sequence %ld is longer than its %ld position embeddings", S, Pm);
  if (p->precision != MODEL_FP32 && p->precision != MODEL_FP16)
    return err_set(e, ERR_USAGE, "GPT precision must be fp32 or fp16");
  long layerP = 2 * H + (3 * H * H + 3 * H) + (H * H + H) + 2 * H + (H * F + F) + (F * H + H);
  long P = V * H + Pm * H + L * layerP + 2 * H + (p->untied ? V * H : 0);
  long SH = S * H, SF = S * F;

  sbuf s = {0};
  char mname[64], name[128], mod[128], pre[64];
  if (p->name) snprintf(mname, sizeof mname, "%s", p->name);
  else snprintf(mname, sizeof mname, "gpt-%ldx%ld", L, H);
  put(&s, "ddpsim-model %d\n", p->eager ? 5 : 8);
  put(&s, "# GPT (Hugging Face GPT2LMHeadModel), generated by `ddpsim genmodel gpt`: hidden %ld, layers %ld,\n", H,
      L);
  put(&s, "#   heads %ld, ffn %ld, vocab %ld, positions %ld, seq %ld; %ld parameters; the LM head %s.\n", A, F, V, Pm,
      S, P, p->untied ? "has its own weight" : "is the token embedding (tied)");
  if (p->eager)
    put(&s, "#   Version 2: attention's products are strided-batched GEMMs (gemms=). Derivation: docs/models.md.\n");
  else
    put(&s, "#   Attention: sdpa, one fused op per pass (attn, version 8). Derivation: docs/models.md.\n");
  if (p->amp) put(&s, "# torch.cuda.amp: parameters and gradients fp32, ops at the run precision.\n");
  put(&s, "name %s\nbatch %ld\ntokens %ld tokens\nprecision %s\n", mname, p->batch, S, model_dtype_name(p->precision));
  put(&s, "input %ld                          # input_ids and labels, int64 x %ld each\n", 2 * S * 8, S);
  put(&s, "output %ld                       # LM scores for every token (S x V)\n", S * V);
  /* What autograd keeps for backward (docs/memory.md; checked by hand against the exporter): eager
   * attention, dropout 0.1 as on a GPU (bool masks). Per token and layer: the residual, both
   * LayerNorm outputs, q, k, v, softmax's and dropout's A x S probabilities, the merged heads, the
   * second residual, and gelu_new's five F-sized tensors (its input, tanh, 0.5x, 1+tanh, output);
   * then ln_f's input and output and log_softmax over the S-1 shifted positions. Bytes: the ids and
   * shifted labels (int64), LayerNorm statistics (fp32), the masks; once the loss's total_weight. */
  /* Without dropout (p 0: ATen's dropout returns its input) no mask and no dropped copy is saved;
   * nn.GELU saves its input alone (c_fc's output; c_proj saves the GELU's): 2 F, not gelu_new's 5. */
  long drop = p->no_dropout ? 0 : 1, gelu = p->exact_gelu ? 2 : 5;
  /* One layer's, per token: eager the A x S probabilities (and their dropped copy); sdpa the kernel's
   * output (H) and log-sum-exp (A fp32), q, k, v being c_attn's output as in eager; and the dropout
   * generator's state once a layer (two int64). */
  long layer_e = p->eager ? 8 * H + (1 + drop) * A * S + gelu * F : 9 * H + gelu * F;
  long layer_b = p->eager ? 16 + drop * (A * S + 2 * H) : 16 + 4 * A + drop * 2 * H, layer_c = p->eager ? 0 : 16 * drop;
  /* Activation checkpointing of every block (torch.utils.checkpoint): each block keeps its input
   * (H a token) and recomputes the rest in backward, where one block's activations are live at a
   * time: the peak is the L inputs and one block's. */
  long kept = p->checkpoint ? 1 : L;
  char bytes_c[32] = "";
  if (kept * layer_c > 0) snprintf(bytes_c, sizeof bytes_c, "%ld+", kept * layer_c);
  put(&s, "saved elems=1+%ld*B bytes=%s%ld*B       # saved for backward: activations (run precision); ids, LayerNorm statistics, %sdropout masks%s\n",
      S * ((p->checkpoint ? L * H : 0) + kept * layer_e + 2 * H) + (S - 1) * V, bytes_c,
      S * (drop * H + kept * layer_b + 8 + 8) + (S - 1) * 8, p->eager ? "" : "log-sum-exps, ",
      p->checkpoint ? "; every block checkpointed: its input, and one block's at a time" : "");
  put(&s, "optim adamw\n\n");

  put(&s, "# Parameters in registration order (model.named_parameters(); tied weights once). Conv1D: in x out.\n");
  put(&s, "param transformer.wte.weight %ldx%ld\nparam transformer.wpe.weight %ldx%ld\n", V, H, Pm, H);
  for (long l = 0; l < L; l++) {
    snprintf(pre, sizeof pre, "transformer.h.%ld", l);
    put(&s, "param %s.ln_1.weight %ld\nparam %s.ln_1.bias %ld\n", pre, H, pre, H);
    put(&s, "param %s.attn.c_attn.weight %ldx%ld\nparam %s.attn.c_attn.bias %ld\n", pre, H, 3 * H, pre, 3 * H);
    put(&s, "param %s.attn.c_proj.weight %ldx%ld\nparam %s.attn.c_proj.bias %ld\n", pre, H, H, pre, H);
    put(&s, "param %s.ln_2.weight %ld\nparam %s.ln_2.bias %ld\n", pre, H, pre, H);
    put(&s, "param %s.mlp.c_fc.weight %ldx%ld\nparam %s.mlp.c_fc.bias %ld\n", pre, H, F, pre, F);
    put(&s, "param %s.mlp.c_proj.weight %ldx%ld\nparam %s.mlp.c_proj.bias %ld\n", pre, F, H, pre, H);
  }
  put(&s, "param transformer.ln_f.weight %ld\nparam transformer.ln_f.bias %ld\n", H, H);
  if (p->untied) put(&s, "param lm_head.weight %ldx%ld\n", V, H);

  /* ---- forward ---- */
  put(&s, "\nforward\n");
  ewise(&s, "wte", PB(SH), 2, 1, NULL, "gather: read rows, write");
  ewise(&s, "wpe", PB(SH), 3, 1, NULL, "gather and add");
  if (drop) ewise(&s, "drop", PB(SH), 3, 1, NULL, "read, write, and the mask counted as one array");
  for (long l = 0; l < L; l++) {
    snprintf(pre, sizeof pre, "h.%ld", l);
    put(&s, "# %s\n", pre);
    gpt_block_fwd(&s, p, pre, drop);
  }
  ewise(&s, "ln_f", PB(SH), 2, 1, NULL, NULL);
  linear_fwd(&s, "lm_head", V, H, S, "scores for every token, no bias");
  ewise(&s, "loss", PB(S * V), 2, 1, NULL, "log-softmax: read logits, write log-probabilities");

  /* ---- backward ---- */
  put(&s, "\nbackward\n");
  ewise(&s, "loss.bwd", PB(S * V), 4, 1, NULL, "NLL gradient into zeros (1), log-softmax backward (3)");
  gemm(&s, "lm_head.wgrad", C(H), C(V), PB(S), NULL,
       p->untied ? NULL : "into the token embedding's gradient: final only at the end");
  gemm(&s, "lm_head.dgrad", C(H), PB(S), C(V), p->untied ? "lm_head.weight" : NULL, NULL);
  ln_bwd(&s, "ln_f", "transformer.ln_f", SH);
  for (long l = L - 1; l >= 0; l--) {
    char mpre[64];
    snprintf(pre, sizeof pre, "h.%ld", l);
    snprintf(mpre, sizeof mpre, "transformer.h.%ld", l);
    put(&s, "# %s\n", pre);
    if (p->checkpoint) { /* the block's forward again (its dropout masks regenerated from the saved RNG state) */
      char rpre[80];
      snprintf(rpre, sizeof rpre, "%s.recompute", pre);
      gpt_block_fwd(&s, p, rpre, drop);
    }
    if (drop) ewise(&s, cat(&s, name, sizeof name, pre, "mlp.dropout.bwd"), PB(SH), 3, 1, NULL, NULL);
    linear_bwd(&s, cat(&s, name, sizeof name, pre, "mlp.c_proj"), cat(&s, mod, sizeof mod, mpre, "mlp.c_proj"), H, F,
               S);
    ewise(&s, cat(&s, name, sizeof name, pre, "mlp.gelu.bwd"), PB(SF), 3, 1, NULL, NULL);
    linear_bwd(&s, cat(&s, name, sizeof name, pre, "mlp.c_fc"), cat(&s, mod, sizeof mod, mpre, "mlp.c_fc"), F, H, S);
    ln_bwd(&s, cat(&s, name, sizeof name, pre, "ln_2"), cat(&s, mod, sizeof mod, mpre, "ln_2"), SH);
    ewise(&s, cat(&s, name, sizeof name, pre, "residual_2.grad_sum"), PB(SH), 3, 1, NULL, "MLP path plus residual");
    if (drop) ewise(&s, cat(&s, name, sizeof name, pre, "attn.resid_dropout.bwd"), PB(SH), 3, 1, NULL, NULL);
    linear_bwd(&s, cat(&s, name, sizeof name, pre, "attn.c_proj"), cat(&s, mod, sizeof mod, mpre, "attn.c_proj"), H,
               H, S);
    if (p->eager) gpt_attention_bwd(&s, pre, S, H, A, (int)drop);
    else gpt_sdpa_bwd(&s, pre, S, H, A);
    linear_bwd(&s, cat(&s, name, sizeof name, pre, "attn.c_attn"), cat(&s, mod, sizeof mod, mpre, "attn.c_attn"),
               3 * H, H, S);
    ln_bwd(&s, cat(&s, name, sizeof name, pre, "ln_1"), cat(&s, mod, sizeof mod, mpre, "ln_1"), SH);
    ewise(&s, cat(&s, name, sizeof name, pre, "residual_1.grad_sum"), PB(SH), 3, 1, NULL, "attention path plus residual");
  }
  put(&s, "# embeddings\n");
  if (drop) ewise(&s, "drop.bwd", PB(SH), 3, 1, NULL, NULL);
  ewise(&s, "wpe.bwd", PB(SH), 1, 1, "transformer.wpe.weight", "sum over the batch into S rows");
  ewise(&s, "wte.bwd", PB(SH), 2, 1, p->untied ? "transformer.wte.weight" : NULL,
        "scatter-add into a zeroed V x H gradient");
  if (!p->untied)
    ewise(&s, "wte.tied_sum", C(V * H), 4, 1, "transformer.wte.weight",
          "zero-fill (1), then add the LM head's gradient (3)");

  return adamw_finish(&s, P, p->amp, text, e);
}
