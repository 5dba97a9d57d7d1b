/* computebench: times the compute a DDP step runs, with the real kernels (kernels/mlstm.h).
 *
 * For each hidden size H x batch B of the grid (E = 64, V = 256, T = seq):
 *   - the mLSTM phases, each timed alone, every iteration: prepare, fwd_step (each of the T
 *     steps is one sample), decoder_fwd (decoder + loss), decoder_bwd, bwd_step (each step one
 *     sample), wgrad (the weight-gradient GEMMs over all steps), embed_grad, and the whole
 *     iteration (their sum);
 *   - the model's own GEMM shapes at (H, B, T), in the convention of the models/ files:
 *     C[m,n] = A[m,k] B[k,n] with m the weight rows and n the batch columns.
 * Then a plain GEMM grid m, n, k in {16, 64, 256, ..., gemm_max} and elementwise copies of
 * 4 KiB .. copy_max_bytes in steps of 4 (bytes moved = 2 x copy size: one read, one write).
 * CPU: CBLAS (cblas_sgemm) and memcpy, CLOCK_MONOTONIC. CUDA: cuBLAS (mlstm_cuda_bench_gemm) and
 * cudaMemcpy device to device, CUDA events. Every measurement has `warmups` untimed runs, then
 * `iters` timed ones kept one by one. */
#ifndef DDPCALIB_COMPUTEBENCH_H
#define DDPCALIB_COMPUTEBENCH_H

#include <stddef.h>

#include "devinfo.h"
#include "err.h"

enum { COMPUTEBENCH_CPU = 0, COMPUTEBENCH_CUDA = 1 };
enum { COMPUTEBENCH_FP32 = 0, COMPUTEBENCH_FP16 = 1, COMPUTEBENCH_BF16 = 2 };
/* "fp32", "fp16", "bf16": the precisions' names (--precision's, the profile's compute.<precision>),
 * NULL-terminated in this order. */
extern const char *const computebench_precisions[];
enum { COMPUTEBENCH_MAX_LIST = 16 };
/* The largest copy `ddpcalib compute` and `machine` time on either backend: past the last-level
 * cache (a 32 MiB L3 per CPU core complex on AMD EPYC, a 50-60 MB L2 on H100 and H200), so that the
 * table's largest size runs at memory's rate, the rate ddpsim prices larger elementwise work at
 * (docs/calib.md, "compute"). */
#define COMPUTEBENCH_COPY_MAX_BYTES (256L << 20)

typedef struct {
  int backend;   /* COMPUTEBENCH_CPU or _CUDA */
  int precision; /* COMPUTEBENCH_FP32, _FP16 or _BF16 (the last two CUDA only) */
  int tf32;      /* CUDA fp32 only: 1 lets cuBLAS use TF32 tensor cores (as PyTorch's allow_tf32), 0 strict */
  long hidden[COMPUTEBENCH_MAX_LIST];
  size_t nhidden;
  long batch[COMPUTEBENCH_MAX_LIST];
  size_t nbatch;
  int seq;             /* T >= 1 */
  int iters, warmups;  /* >= 1, >= 0 */
  long gemm_max;       /* largest dimension of the plain GEMM grid, >= 16 */
  long copy_max_bytes; /* largest elementwise copy (COMPUTEBENCH_COPY_MAX_BYTES) */
  /* --model: the distinct GEMM shapes (m, n, k) of a model's gemm and conv ops at its batch, timed
   * after the grid as measurements named "model" (computebench_model_shapes fills them). */
  long (*model_shapes)[3];
  size_t nmodel_shapes;
  char model_name[64]; /* the model's name, recorded with the shapes */
  long model_batch;
} computebench_cfg;

#include "model.h"

/* The distinct single-GEMM shapes of m's gemm and conv ops (a conv's implicit GEMM; a batched GEMM
 * as m, n, gemms x k, the shape ddpsim prices it by) at per-GPU batch `batch`, into *out (malloc'd,
 * the caller frees). ERR_NOMEM only. */
int computebench_model_shapes(const model_t *m, long batch, long (**out)[3], size_t *n, err_t *e);

/* Kinds of measurement. */
enum { COMPUTEBENCH_MLSTM = 0, COMPUTEBENCH_GEMM = 1, COMPUTEBENCH_EWISE = 2 };

typedef struct {
  int kind;
  char name[32];     /* mLSTM phase ("fwd_step"...), GEMM op name ("hh_m", "grid"), "copy" */
  int H, B, T;       /* the mLSTM shape it belongs to (0 for the grid and the copies) */
  long m, n, k;      /* GEMM dimensions (0 otherwise) */
  double flops;      /* matrix-product FLOPs of one sample (0 for copies) */
  double bytes;      /* GEMM: 4-or-2 x (mk + kn + mn); copy: 2 x size */
  size_t nsamples;
  double *samples_s; /* [nsamples], one per timed run (per step for fwd_step / bwd_step) */
  double mean_s, median_s, min_s, max_s, stdev_s;
} computebench_meas;

typedef struct {
  size_t n, cap;
  computebench_meas *m;
  devinfo dev;       /* the device's own figures (calib/devinfo.h): CPU model or GPU name, memory... */
  char library[256]; /* OpenBLAS config, or cuBLAS and the CUDA runtime/driver versions */
  char driver[128];  /* CUDA: "CUDA runtime R, driver D, N device(s)"; "" on the CPU */
} computebench_result;

/* ERR_USAGE with a message naming the flag when cfg is out of range (fp16 on CPU included). */
int computebench_check_cfg(const computebench_cfg *cfg, err_t *e);

/* Runs everything. on_meas (may be NULL) sees each finished measurement. The caller owns `out`
 * and frees it with computebench_result_free, also on failure. ERR_NODEV for CUDA without a GPU. */
int computebench_run(const computebench_cfg *cfg,
                     void (*on_meas)(const computebench_meas *m, void *arg), void *arg,
                     computebench_result *out, err_t *e);

void computebench_result_free(computebench_result *r);

#endif
