/* model: what is trained, as ddpsim sees it.
 *
 * A model is its parameters in registration order (this decides DDP's buckets) and its work:
 * forward ops, backward ops (each naming the parameters whose gradients are final after it), and
 * optimizer ops. The text format is documented in models/README.md. Op dimensions may scale with
 * the per-GPU batch B; element sizes follow the run precision unless an op or a parameter fixes its
 * dtype. */
#ifndef DDPSIM_MODEL_H
#define DDPSIM_MODEL_H

#include <stddef.h>

#include "err.h"

/* bf16: 2 bytes like fp16, with its own compute costs (compute.bf16 in a profile: A100 and later). */
typedef enum { MODEL_FP32 = 0, MODEL_FP16 = 1, MODEL_BF16 = 2, MODEL_DTYPE_COUNT = 3 } model_dtype;

/* "fp32" or "fp16". */
const char *model_dtype_name(model_dtype d);
/* Bytes per element: 4 or 2. */
size_t model_dtype_size(model_dtype d);
/* Parses "fp32"/"fp16"; returns 0, or -1 for anything else. */
int model_dtype_parse(const char *s, model_dtype *out);

#define MODEL_NAME_MAX 64

/* Bounds the loader enforces (file:line names the value): every dimension, element count, byte
 * count and shape product at most MODEL_DIM_MAX (2^40, far above any real tensor, low enough that
 * dim x batch cannot overflow a long for a batch up to MODEL_BATCH_MAX), the model's batch at most
 * MODEL_BATCH_MAX (2^22), count, launches and arrays at most MODEL_COUNT_MAX, and the parameter
 * total at most MODEL_DIM_MAX. */
#define MODEL_DIM_MAX (1L << 40)
#define MODEL_BATCH_MAX (1L << 22)
#define MODEL_COUNT_MAX 1000000000L
#define MODEL_MAX_DIMS 4

typedef struct {
  char name[MODEL_NAME_MAX];
  int ndim;
  long shape[MODEL_MAX_DIMS];
  long numel;
  int follows_run;   /* 1: dtype is the run precision; 0: fixed to `dtype` */
  model_dtype dtype; /* meaningful when !follows_run */
  int sparse;        /* 1: its gradient is a sparse tensor (nn.Embedding(sparse=True); format version 5) */
  int unused;        /* 1: the recorded step gave it no gradient (format version 5): DDP needs
                      * find_unused_parameters=True */
} model_param;

/* A dimension: a constant, a multiple of the per-GPU batch B, or (format version 2) both. */
typedef struct {
  long v;
  int per_batch; /* value = per_batch ? v * B + c : v */
  long c;        /* the constant term beside v * B ("C+N*B", version 2); 0 otherwise */
} model_dim;

/* The op kinds. A profile has a cost model for each kind below MODEL_OP_KIND_COUNT (gemm, ewise);
 * a fused attention op (`attn` lines, format version 8: scaled_dot_product_attention as CUDA runs
 * it, one kernel per pass, no S x S tensor in memory) is priced from the profile's attention table
 * where it has one, else as the GEMMs of its pass (sim/cost.c, docs/models.md "Fused attention"). */
typedef enum { MODEL_OP_GEMM = 0, MODEL_OP_EWISE = 1, MODEL_OP_KIND_COUNT = 2, MODEL_OP_ATTN = MODEL_OP_KIND_COUNT } model_op_kind;

/* A convolution (format version 3, `conv` lines): its geometry in cuDNN's names (NCHW input, K
 * filters of C x R x S) and which of its three passes the op is. A conv op is a gemm op whose m, n,
 * k are the implicit GEMM of that pass (model_conv_gemm), so everything that costs a gemm costs it;
 * a profile's table of convolution times prices it directly where it holds the geometry. */
typedef enum { MODEL_CONV_NONE = 0, MODEL_CONV_FWD = 1, MODEL_CONV_DGRAD = 2, MODEL_CONV_WGRAD = 3 } model_conv_pass;

/* The activations' memory format (the `layout` line, format version 4): PyTorch's default
 * contiguous_format is NCHW, torch.channels_last is NHWC. A convolution whose layout is not the one
 * its precision's kernels take pays cuDNN's transposes (cost_op_time, docs/profile.md). */
typedef enum { MODEL_LAYOUT_NCHW = 0, MODEL_LAYOUT_NHWC = 1 } model_layout;

/* "nchw" or "nhwc". */
const char *model_layout_name(model_layout l);
/* Parses "nchw"/"nhwc"; returns 0, or -1 for anything else. */
int model_layout_parse(const char *s, model_layout *out);

typedef struct {
  model_conv_pass pass;
  model_layout layout; /* the model's `layout` (NCHW where the file has none) */
  model_dim n; /* images: the per-GPU batch, or a multiple of it */
  long c, h, w, k, r, s, pad_h, pad_w, stride_h, stride_w;
} model_conv;

/* "fwd", "dgrad", "wgrad" (NULL for NONE). */
const char *model_conv_pass_name(model_conv_pass p);

/* Output height and width of the convolution: (h + 2 pad_h - r) / stride_h + 1, and for w. */
long model_conv_p(const model_conv *cv);
long model_conv_q(const model_conv *cv);

/* The implicit GEMM of a pass in this format's convention C[m,n] = A[m,k] B[k,n], m the weight-side
 * rows and n the batch-side columns (the transpose of the statement in NVIDIA's "Convolutional
 * Layers User's Guide", which writes M for the batch side; the product is the same):
 *   fwd:   m = K,       n = N*P*Q, k = C*R*S
 *   dgrad: m = C,       n = N*H*W, k = ceil(K*R*S / (stride_h*stride_w))
 *          (each input pixel receives R*S / strides taps on average: the forward's multiply-adds
 *          when H = stride_h * P, as PyTorch's FlopCounterMode counts them)
 *   wgrad: m = K,       n = C*R*S, k = N*P*Q
 * A batch dimension n = v*B + c gives v*X*B + c*X for the per-image factor X. */
void model_conv_gemm(const model_conv *cv, model_dim *m, model_dim *n, model_dim *k);

typedef enum { MODEL_PHASE_FORWARD = 0, MODEL_PHASE_BACKWARD = 1, MODEL_PHASE_OPTIMIZER = 2 } model_phase;

typedef struct {
  char name[MODEL_NAME_MAX];
  model_op_kind kind;
  model_phase phase;
  model_dim m, n, k;   /* gemm: C[m,n] = A[m,k] B[k,n] */
  model_dim gemms;     /* gemm: independent products of that shape in one launch (a strided-batched
                          GEMM, `gemms=`, version 2); 1 for a plain GEMM */
  model_dim elems;     /* ewise: elements touched */
  long arrays;         /* ewise: arrays of `elems` elements read or written */
  long count;          /* the op runs this many times in a row (e.g. T time steps) */
  long launches;       /* kernels one run of the op launches */
  long fwops;          /* framework ops one run of the op stands for (each pays the framework's
                          dispatch on the host, sim/cost.h); `fwops=`, default: launches */
  int follows_run;     /* 1: element size of the run precision; 0: of `dtype` */
  model_dtype dtype;
  model_conv conv;     /* gemm: the convolution pass it is (pass NONE for a plain GEMM) */
  /* attn (the fused attention op): gemms holds the query heads (x B), m the query length, n the
   * key/value length, k the head dimension; kv_heads the key/value heads (GQA: fewer; `kv_heads=`,
   * default the query heads); causal (is_causal=True: about half the work); bwd: the backward
   * pass (`pass=bwd`), which does 2.5 times the forward's FLOPs (FlashAttention-2's count: five
   * products of the forward's two, one of them QK^T again). A forward pass in the backward section is
   * a recomputation (activation checkpointing). */
  model_dim kv_heads;
  int causal, bwd;
  int measured;        /* 1: `time_s=` and `host_s=` (format version 6) give one run's measured times */
  double time_s;       /* measured: one run's device time (a GPU's kernels; on a CPU the op and the work
                          since the op before) */
  double host_s;       /* measured: one run's host time (on a GPU the op's call and the work since the op
                          before; on a CPU that work alone) (models/README.md) */
  int ready_first;     /* this op's gradient-ready parameters: ready[ready_first ...] */
  int ready_count;
  int line;            /* line in the source file, for messages */
} model_op;

/* The optimizer whose state the model's training keeps (the `optim` line, format version 5): its
 * name only; how many state copies per parameter element each keeps is sim/memory.c's. */
typedef enum {
  MODEL_OPTIM_UNKNOWN = 0, MODEL_OPTIM_NONE, MODEL_OPTIM_SGD, MODEL_OPTIM_SGD_MOMENTUM, MODEL_OPTIM_ADAM,
  MODEL_OPTIM_ADAMW, MODEL_OPTIM_RMSPROP, MODEL_OPTIM_RMSPROP_MOMENTUM, MODEL_OPTIM_ADAGRAD, MODEL_OPTIM_COUNT
} model_optim;

/* "unknown", "none", "sgd", "sgd-momentum", "adam", "adamw", "rmsprop", "rmsprop-momentum", "adagrad". */
const char *model_optim_name(model_optim o);
/* Parses one of those names but "unknown"; returns 0, or -1 for anything else. */
int model_optim_parse(const char *s, model_optim *out);

/* The `measured` line (format version 6): the device the ops' `time_s=`/`host_s=` were measured on
 * (the exporter's --time or --from-trace), at the file's `batch` and `precision`. */
#define MODEL_DEVICE_MAX 128
typedef struct {
  int present;                  /* 0: the file has no `measured` line */
  char device[MODEL_DEVICE_MAX]; /* the device's name, decoded from its %XX escapes */
  char torch[32];               /* the torch release that ran the steps */
  long steps;                   /* timed steps the times are the mean of */
  double step_rel_sd;           /* step_rel_sd=: the steps' spread (sd / mean, 0 to 2); -1: not given */
  char date[16];                /* YYYY-MM-DD */
  int line;                     /* its line, for messages */
} model_measured;

typedef struct {
  char name[MODEL_NAME_MAX];
  char path[512];              /* where it was loaded from (or "<text>") */
  long batch;                  /* default per-GPU batch, samples */
  long tokens_per_sample;      /* e.g. sequence length T */
  char token_unit[16];         /* what a token is: "chars", "tokens", "images" */
  long input_bytes_per_sample; /* the `input` line: bytes of one sample copied host to GPU (0: none) */
  long buffer_bytes;           /* the `buffers` line: bytes of the module's buffers (BatchNorm running
                                  statistics, ...), which DDP broadcasts before every forward (0: none) */
  long output_elems_per_sample; /* the `output` line: elements of one sample's output, at the run
                                   precision (DataParallel gathers them to GPU 0; 0: unknown) */
  model_dtype precision;       /* default run precision */
  model_layout layout;         /* the `layout` line (version 4; default NCHW, PyTorch's default) */
  /* The `saved` line (version 5): what autograd keeps for backward at the end of forward, at per-GPU
   * batch B: saved_elems elements at the run precision and saved_bytes bytes of tensors whose type
   * does not follow it (int64 indices, fp32 statistics). has_saved 0: the file does not say. */
  int has_saved;
  model_dim saved_elems, saved_bytes;
  model_optim optim;           /* the `optim` line (version 5); MODEL_OPTIM_UNKNOWN where absent */
  char *no_input_grad;         /* the `no_input_grad` line (version 7): comma-separated module paths whose
                                  forward inputs took no gradient, or NULL (FSDP reduces such a unit in
                                  its final callback: sim/fsdp.h) */
  model_measured measured;     /* the `measured` line (version 6) */
  int nmeasured;               /* ops carrying measured times */
  int nparams;
  model_param *params;         /* (nparams) in registration order */
  int nfrozen;
  model_param *frozen;         /* (nfrozen) parameters with requires_grad=False (`frozen` lines, version
                                  7), in registration order: no gradient, so DDP never sees them (its
                                  Reducer skips them); FSDP shards and all-gathers them (sim/fsdp.h) and
                                  the memory counts them (sim/memory.h) */
  int nops;
  model_op *ops;               /* (nops) forward ops, then backward, then optimizer, in order */
  int *ready;                  /* parameter indices, referenced by ops */
  int nready;
} model_t;

/* The format versions model_load reads: 1 to 6. Version 2 adds `C+N*B` dimensions and `gemms=`;
 * version 3 adds `conv` ops; version 4 the `layout` line; version 5 the `sparse` and `unused`
 * parameter markers and the `saved` and `optim` lines; version 6 the `measured` line and the ops'
 * `time_s=`/`host_s=` (refused without a `measured` line before them); each is an error in an
 * older file (models/README.md). */
#define MODEL_FORMAT_VERSION 8
/* The largest measured time of one run of an op (time_s=, host_s=): 10^5 s, as a profile's points. */
#define MODEL_MEASURED_MAX_s 1e5

/* Loads a model file. On success *out is a model the caller frees with model_destroy. On failure
 * returns ERR_IO (unreadable) or ERR_INPUT with `path:line: reason`; nothing is allocated. */
int model_load(const char *path, model_t **out, err_t *e);

/* Same, from text in memory; `origin` names it in messages. */
int model_parse(const char *text, const char *origin, model_t **out, err_t *e);

void model_destroy(model_t *m); /* NULL is a no-op */

/* Value of a dimension at per-GPU batch B. */
long model_dim_value(model_dim d, long batch);

/* The element type a parameter (or an op) has in a run at precision `run`. */
model_dtype model_param_dtype(const model_param *p, model_dtype run);
model_dtype model_op_dtype(const model_op *op, model_dtype run);

/* Gradient bytes of parameter i at run precision `run`. */
size_t model_param_bytes(const model_t *m, int i, model_dtype run);

/* Total parameter count and gradient bytes at run precision. */
long model_total_params(const model_t *m);

/* Optimizer ops written as torch.optim's foreach step (the exporter names them OPTIM._foreach_OP,
 * python/ddpsim_export/model_text.py): how many. */
int model_foreach_ops(const model_t *m);
size_t model_total_bytes(const model_t *m, model_dtype run);

/* The products a GEMM op's one launch runs: its `gemms` at batch B (an op built in code with gemms
 * left zero counts 1); 1 for any other op. */
long model_op_gemms(const model_op *op, long batch);

/* FLOPs and bytes moved by ONE launch of op at batch B and run precision (not times count); a batched
 * GEMM's are its `gemms` products'. */
double model_op_flops(const model_op *op, long batch);
double model_op_bytes(const model_op *op, long batch, model_dtype run);

/* Writes into order[0 .. nparams-1] the parameter indices in the order their gradients become
 * ready during backward. Always succeeds for a loaded model (loading checks every parameter
 * becomes ready exactly once). */
void model_ready_order(const model_t *m, int *order);

#endif
