/* mlstm.h: the multiplicative LSTM of DESIGN.md, forward and backward, on the CPU (the reference,
 * CBLAS) and on CUDA (cuBLAS). The table of contents of kernels/.
 *
 * What is computed (docs/kernels.md derives every formula and FLOP count):
 *   x_t   = encoder[tok_t]                                   embedding lookup, (B, E)
 *   m_t   = (W_mih x_t) * (W_mhh h_{t-1})                    (B, H)
 *   z_t   = W_ih x_t + b_ih + W_hh m_t + b_hh = [i f g o]    (B, 4H)
 *   c_t   = sigmoid(f) c_{t-1} + sigmoid(i) tanh(g)
 *   h_t   = sigmoid(o) tanh(c_t)                             h_{-1} = c_{-1} = 0
 *   y_t   = decoder.weight h_t + decoder.bias                (B, V)
 *   loss  = mean over the T*B positions of -log softmax(y_t)[tok_{t+1}]
 * with weight norm on the four matrices: W[r,:] = g[r] * v[r,:] / ||v[r,:]||.
 *
 * Memory layout. Parameters live in ONE flat float buffer in registration order (mlstm_layout), and
 * gradients in a second buffer of the same layout, so a DDP gradient bucket is a contiguous slice.
 * Matrices are row-major (rows, cols), as PyTorch stores them. Activations are row-major
 * (positions, features) with position p = t*B + b. Tokens are bytes, (T+1, B) row-major: the input
 * at step t is tok[t*B + b] and its target tok[(t+1)*B + b].
 *
 * Errors. Every function that can fail returns an mlstm_status (0 = MLSTM_OK); create functions
 * also write a message into a caller-owned buffer (err, errlen; err may be NULL). The library
 * never prints and never exits. destroy(NULL) is a no-op.
 *
 * Backend stubs. Without CUDA the mlstm_cuda_* functions exist and return MLSTM_ENODEV, so callers
 * link and branch at run time the same way on every machine.
 */
#ifndef DDPSIM_MLSTM_H
#define DDPSIM_MLSTM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MLSTM_OK = 0,
    MLSTM_EINVAL = 1,      /* bad argument: shape out of range, NULL pointer, step out of order */
    MLSTM_ENOMEM = 2,      /* host or device allocation failed */
    MLSTM_ENODEV = 3,      /* no usable GPU, or built without CUDA */
    MLSTM_ECUDA = 4,       /* a CUDA runtime call failed */
    MLSTM_ECUBLAS = 5,     /* a cuBLAS call failed */
    MLSTM_EOVERFLOW = 6    /* the sizes overflow the index types */
} mlstm_status;

/* A static English description of a status; never NULL (unknown codes get a generic text). */
const char *mlstm_strerror(int status);

/* ---- shapes and parameter layout ------------------------------------------------------------ */

typedef struct {
    int H; /* hidden size */
    int E; /* embedding size */
    int V; /* vocabulary size (256 for bytes; tokens must be < V) */
    int T; /* sequence length (steps of backpropagation through time) */
    int B; /* batch size */
} mlstm_shape;

/* MLSTM_EINVAL unless every dimension is >= 1, V <= 256 (tokens are bytes), and the largest
 * activation buffer (T*B*4H floats) fits in size_t and in int for BLAS. */
int mlstm_shape_check(const mlstm_shape *s);

/* The 13 parameters, in DESIGN.md's registration order (= index into the layout table). */
enum {
    MLSTM_ENCODER_W = 0, /* encoder.weight (V, E) */
    MLSTM_DECODER_W,     /* decoder.weight (V, H) */
    MLSTM_DECODER_B,     /* decoder.bias   (V, 1) */
    MLSTM_B_IH,          /* b_ih    (4H, 1) */
    MLSTM_B_HH,          /* b_hh    (4H, 1) */
    MLSTM_W_IH_G,        /* w_ih_g  (4H, 1) */
    MLSTM_W_IH_V,        /* w_ih_v  (4H, E) */
    MLSTM_W_HH_G,        /* w_hh_g  (4H, 1) */
    MLSTM_W_HH_V,        /* w_hh_v  (4H, H) */
    MLSTM_W_MIH_G,       /* w_mih_g (H, 1) */
    MLSTM_W_MIH_V,       /* w_mih_v (H, E) */
    MLSTM_W_MHH_G,       /* w_mhh_g (H, 1) */
    MLSTM_W_MHH_V,       /* w_mhh_v (H, H) */
    MLSTM_NPARAMS        /* 13 */
};

typedef struct {
    const char *name; /* "encoder.weight", "w_hh_v", ...: static storage */
    size_t offset;    /* in floats from the start of the flat buffer */
    size_t rows;
    size_t cols;      /* 1 for vectors */
    size_t numel;     /* rows * cols */
} mlstm_param_info;

/* Fills table[MLSTM_NPARAMS] (the parameters are contiguous: offset[i+1] = offset[i] + numel[i])
 * and *total (floats in the flat buffer; may be NULL). Only H, E, V are used.
 * MLSTM_EINVAL on a bad shape or NULL table. */
int mlstm_layout(const mlstm_shape *s, mlstm_param_info table[MLSTM_NPARAMS], size_t *total);

/* Number of parameters: V*E + V*H + V + 2*4H + 4H*(E+1) + 4H*(H+1) + H*(E+1) + H*(H+1),
 * 86,335,744 at H=4096, E=64, V=256. 0 on a bad shape. */
size_t mlstm_num_params(int H, int E, int V);

/* Deterministic initialisation of a flat host buffer laid out by mlstm_layout: every entry uniform
 * in [-scale, scale) from a splitmix64 stream seeded with seed, then each weight-norm g set to the
 * row norm of its v (so W = v at start, as torch.nn.utils.weight_norm does). */
int mlstm_init_params(const mlstm_shape *s, float *params, uint64_t seed, float scale);

/* ---- FLOP counts (matrix products only, 2*m*n*k each; elementwise work is not counted) ------- */

typedef enum {
    MLSTM_PHASE_PREPARE = 0,  /* weight norm + embedding + W_ih x, W_mih x for all T steps: 10TBEH */
    MLSTM_PHASE_FWD_STEP,     /* one recurrent forward step: 10 B H^2 */
    MLSTM_PHASE_DECODER_FWD,  /* decoder + loss forward: 2 T B H V */
    MLSTM_PHASE_DECODER_BWD,  /* decoder backward (dW_dec, dh): 4 T B H V */
    MLSTM_PHASE_BWD_STEP,     /* one BPTT step (activation gradients only): 10 B H^2 */
    MLSTM_PHASE_WGRAD,        /* weight-gradient GEMMs over all T steps: 10 T B H (H + E) */
    MLSTM_PHASE_EMBED_GRAD,   /* input gradient W_ih^T dz + W_mih^T dx_m: 10 T B H E */
    MLSTM_PHASE_FORWARD,      /* PREPARE + T * FWD_STEP + DECODER_FWD */
    MLSTM_PHASE_BACKWARD,     /* DECODER_BWD + T * BWD_STEP + WGRAD + EMBED_GRAD */
    MLSTM_PHASE_ITERATION,    /* FORWARD + BACKWARD = 30TBH^2 + 30TBHE + 6TBHV */
    MLSTM_NPHASES
} mlstm_phase;

/* FLOPs of one phase at shape s; 0.0 on a bad shape or phase. */
double mlstm_flops(const mlstm_shape *s, mlstm_phase phase);
/* "fwd_step", "iteration", ...: static storage; "?" for an unknown phase. */
const char *mlstm_phase_name(mlstm_phase phase);

/* ---- gradient-ready callback ---------------------------------------------------------------- */

/* Fired once per parameter when its gradient is final, in the order gradients become ready:
 *   decoder.weight, decoder.bias,                       (decoder backward)
 *   w_hh_g, w_hh_v, w_mhh_g, w_mhh_v, w_ih_g, w_ih_v, w_mih_g, w_mih_v,   (weight-gradient GEMMs
 *   b_ih, b_hh,                                          + weight norm, then bias reductions)
 *   encoder.weight                                       (embedding gradient, last)
 * On CUDA "final" means final in the order of the model's stream (mlstm_cuda_stream): work queued
 * on that stream afterwards, or after an event recorded on it, sees the finished gradient. */
typedef void (*mlstm_grad_ready_fn)(int param_index, void *user);

/* The documented order above, as parameter indices: order[MLSTM_NPARAMS]. */
void mlstm_grad_ready_order(int order[MLSTM_NPARAMS]);

/* ---- CPU reference (mlstm_cpu.c) ------------------------------------------------------------ */

typedef struct mlstm_cpu mlstm_cpu;

/* Allocates the parameters, gradients and every activation for shape s (about
 * 4*T*B*(16H + 2E + V) bytes of activations plus 8 bytes per parameter). The parameters start at
 * zero: fill them through mlstm_cpu_params (e.g. with mlstm_init_params).
 * On error *out is NULL, a message is written to err, and MLSTM_EINVAL / MLSTM_ENOMEM is returned.
 * The caller owns *out and frees it with mlstm_cpu_destroy. */
int mlstm_cpu_create(const mlstm_shape *s, mlstm_cpu **out, char *err, size_t errlen);
void mlstm_cpu_destroy(mlstm_cpu *m);

/* The flat parameter and gradient buffers (mlstm_num_params floats each), owned by m. The caller
 * may write parameters between iterations; gradients are overwritten by every backward. */
float *mlstm_cpu_params(mlstm_cpu *m);
float *mlstm_cpu_grads(mlstm_cpu *m);
/* Hidden states of the last forward, (T*B, H), owned by m. */
const float *mlstm_cpu_hidden(const mlstm_cpu *m);

/* Whole passes. forward runs prepare, the T steps and the decoder forward, and writes the mean
 * loss to *loss (may be NULL). backward needs the forward of the same tokens just before, and
 * overwrites every gradient; on_grad_ready may be NULL. iteration = forward + backward. */
int mlstm_cpu_forward(mlstm_cpu *m, const uint8_t *tokens, float *loss);
int mlstm_cpu_backward(mlstm_cpu *m, mlstm_grad_ready_fn on_grad_ready, void *user);
int mlstm_cpu_iteration(mlstm_cpu *m, const uint8_t *tokens, float *loss,
                        mlstm_grad_ready_fn on_grad_ready, void *user);

/* Phases, for the calibrator to time separately. Their sequence is the whole iteration:
 *   prepare(tokens); forward_step(t) for t = 0..T-1; decoder_forward(&loss);
 *   decoder_backward(); backward_step(t) for t = T-1..0; weight_grads(); embedding_grad().
 * Calling a phase out of that order computes garbage but is memory-safe; t outside [0, T) or a
 * token >= V gives MLSTM_EINVAL. backward_step(T-1) resets the recurrent gradients. */
int mlstm_cpu_prepare(mlstm_cpu *m, const uint8_t *tokens);
int mlstm_cpu_forward_step(mlstm_cpu *m, int t);
int mlstm_cpu_decoder_forward(mlstm_cpu *m, float *loss);
int mlstm_cpu_decoder_backward(mlstm_cpu *m, mlstm_grad_ready_fn on_grad_ready, void *user);
int mlstm_cpu_backward_step(mlstm_cpu *m, int t);
int mlstm_cpu_weight_grads(mlstm_cpu *m, mlstm_grad_ready_fn on_grad_ready, void *user);
int mlstm_cpu_embedding_grad(mlstm_cpu *m, mlstm_grad_ready_fn on_grad_ready, void *user);

/* ---- CUDA (mlstm_cuda.cu; stubs returning MLSTM_ENODEV without CUDA) ------------------------- */

typedef enum {
    MLSTM_FP32 = 0, /* fp32 storage, fp32 GEMMs (no TF32) */
    MLSTM_FP16 = 1, /* fp16 weights and GEMM inputs, fp32 accumulation and elementwise math,
                       fp32 master parameters and gradients */
    MLSTM_BF16 = 2  /* as fp16 with bfloat16 (no loss scale: fp32's exponent range); cuBLAS runs
                       bf16 GEMMs from sm_80 (Ampere) */
} mlstm_precision;

typedef struct mlstm_cuda mlstm_cuda;

/* 1 when CUDA is built in and at least one device answers, else 0. Never fails. */
int mlstm_cuda_available(void);
/* 1 when the current device runs precision p (bf16 needs compute capability 8.0: cuBLAS's bf16
 * GEMMs), else 0 (and 0 without CUDA or a device). Never fails. */
int mlstm_cuda_supports(mlstm_precision p);

/* Creates the model on the current device with its own stream and cuBLAS handle. Parameters start
 * at zero (load them with mlstm_cuda_set_params). MLSTM_ENODEV without a GPU; MLSTM_EINVAL on a bad
 * shape or precision; MLSTM_ENOMEM, MLSTM_ECUDA, MLSTM_ECUBLAS otherwise; *out is then NULL and
 * err holds a message. The caller owns *out and frees it with mlstm_cuda_destroy. */
int mlstm_cuda_create(const mlstm_shape *s, mlstm_precision prec, mlstm_cuda **out,
                      char *err, size_t errlen);
void mlstm_cuda_destroy(mlstm_cuda *m);

/* The message of the last failed call on m ("" if none); owned by m. */
const char *mlstm_cuda_last_error(const mlstm_cuda *m);
/* The model's cudaStream_t, as a pointer (NULL without CUDA). Every phase is queued on it. */
void *mlstm_cuda_stream(mlstm_cuda *m);
/* Waits for all queued work. */
int mlstm_cuda_sync(mlstm_cuda *m);

/* Copies between host buffers of mlstm_num_params floats (caller-owned) and the device (synchronous). */
int mlstm_cuda_set_params(mlstm_cuda *m, const float *host_params);
int mlstm_cuda_get_params(mlstm_cuda *m, float *host_params);
int mlstm_cuda_get_grads(mlstm_cuda *m, float *host_grads);
/* Hidden states of the last forward, (T*B, H) floats into a caller-owned host buffer. */
int mlstm_cuda_get_hidden(mlstm_cuda *m, float *host_hidden);
/* Device pointer to the flat fp32 gradient buffer (for all-reduces), owned by m. */
float *mlstm_cuda_grads_device(mlstm_cuda *m);

/* Same contracts as the CPU functions, with the work queued on the model's stream. tokens is a
 * host buffer. A non-NULL loss makes the call wait for the result; NULL keeps it asynchronous. */
int mlstm_cuda_forward(mlstm_cuda *m, const uint8_t *tokens, float *loss);
int mlstm_cuda_backward(mlstm_cuda *m, mlstm_grad_ready_fn on_grad_ready, void *user);
int mlstm_cuda_iteration(mlstm_cuda *m, const uint8_t *tokens, float *loss,
                         mlstm_grad_ready_fn on_grad_ready, void *user);
int mlstm_cuda_prepare(mlstm_cuda *m, const uint8_t *tokens);
int mlstm_cuda_forward_step(mlstm_cuda *m, int t);
int mlstm_cuda_decoder_forward(mlstm_cuda *m, float *loss);
int mlstm_cuda_decoder_backward(mlstm_cuda *m, mlstm_grad_ready_fn on_grad_ready, void *user);
int mlstm_cuda_backward_step(mlstm_cuda *m, int t);
int mlstm_cuda_weight_grads(mlstm_cuda *m, mlstm_grad_ready_fn on_grad_ready, void *user);
int mlstm_cuda_embedding_grad(mlstm_cuda *m, mlstm_grad_ready_fn on_grad_ready, void *user);

/* Event timing on the model's stream: start records an event, stop records a second one, waits
 * for it and writes the elapsed seconds between the two. */
int mlstm_cuda_timer_start(mlstm_cuda *m);
int mlstm_cuda_timer_stop(mlstm_cuda *m, double *seconds);

/* fp32 GEMMs on m's cuBLAS handle: on = 1 lets them use TF32 tensor cores
 * (CUBLAS_TF32_TENSOR_OP_MATH, sm_80 and later; what PyTorch's allow_tf32 asks), on = 0 keeps strict
 * fp32 (CUBLAS_DEFAULT_MATH, the default). MLSTM_EINVAL unless m is fp32; MLSTM_ENODEV without CUDA. */
int mlstm_cuda_set_tf32(mlstm_cuda *m, int on);

/* A plain GEMM C(m,n) = A(m,k) B(k,n) in the model's precision on its stream, `reps` times, for
 * the benchmark's reference FLOP/s, on operands uniform in [-1, 1) (not zeros, which can run
 * faster). *seconds gets the mean time of one GEMM (CUDA events). */
int mlstm_cuda_bench_gemm(mlstm_cuda *m, int M, int N, int K, int reps, double *seconds);

#ifdef __cplusplus
}
#endif

#endif /* DDPSIM_MLSTM_H */
