/* train: a real data-parallel training run of the CPU mLSTM, reducing gradients as PyTorch's
 * DistributedDataParallel does. What ddpsim's predictions are checked against (docs/validation.md).
 *
 * Every MPI process trains the same model (kernels/mlstm.h, rank 0's parameters broadcast at the
 * start) on its own B sequences of a seeded synthetic byte stream; together the ranks see one global
 * batch of N*B sequences (rank r holds global sequences r*B .. r*B+B-1), so N ranks at batch B
 * compute the same update as one process at batch N*B.
 *
 * Gradient reduction (mode SIM_MODE_DDP), as torch/csrc/distributed/c10d/reducer.cpp does it:
 *   - buckets from sim/bucket.c's bucket_assign (the code `ddpsim buckets` runs), over the fp32
 *     gradient bytes, construction-time or rebuilt in the kernels' gradient-ready order;
 *   - when a gradient becomes final (the kernels' on_grad_ready), it is copied into its bucket's
 *     flat buffer, multiplied by 1/N on the way (the Reducer divides while copying);
 *   - a bucket whose last gradient arrived is ready; ready buckets start their MPI_Iallreduce
 *     strictly in bucket order (a ready bucket waits for every earlier one to start);
 *   - after backward, the final wait (MPI_Waitall), the reduced buckets copied back into the
 *     gradients, then the optimizer step.
 * SIM_MODE_FLAT: one blocking MPI_Allreduce of the whole (contiguous) gradient buffer after backward,
 * then the division (sentiment-discovery's flattened all-reduce).
 *
 * Progress. Open MPI's non-blocking collectives (libnbc) advance only inside MPI calls: an
 * MPI_Iallreduce started in the middle of backward would otherwise sit idle until the final wait.
 * The run polls (MPI_Testall over the in-flight requests) after every gradient-ready callback and
 * after every backpropagation-through-time step, which is where a GPU's NCCL stream would be
 * progressing on its own. `poll = 0` turns this off, to measure what it is worth.
 *
 * no_sync = K: iterations with i % K != K-1 skip communication and the optimizer step and
 * accumulate their gradient locally (DDP's no_sync() with gradient accumulation); the K-th reduces
 * the sum and steps. K = 1 communicates every iteration.
 *
 * MPI must be initialised by the caller (MPI_COMM_WORLD is used). All functions are collective. */
#ifndef DDPCALIB_TRAIN_H
#define DDPCALIB_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "mlstm.h"
#include "scenario.h" /* sim_mode: the simulator's modes are the ones trained here */

typedef enum { TRAIN_SGD = 0, TRAIN_ADAM = 1 } train_optim;

typedef struct {
  mlstm_shape shape;      /* B is the per-rank batch */
  sim_mode mode;          /* SIM_MODE_DDP or SIM_MODE_FLAT */
  double bucket_cap_mb;   /* DDP's bucket_cap_mb (REDUCER_DEFAULT_CAP_MB) */
  double first_bucket_mb; /* first bucket's cap (REDUCER_FIRST_BUCKET_MB) */
  int rebuilt;            /* buckets rebuilt in gradient-ready order (DDP after its first iteration) */
  int no_sync;            /* communicate every K iterations, K >= 1 */
  int iters;              /* timed iterations, >= 1 */
  int warmups;            /* untimed iterations before them, >= 0 */
  uint64_t seed;          /* parameters and data stream */
  train_optim optim;      /* SGD (plain) or Adam (beta 0.9, 0.999, eps 1e-8) */
  float lr;
  int poll;               /* 1: progress polling during backward (default) */
} train_cfg;

/* The defaults: H 256, E 64, V 256, T 8, B 4, ddp, DDP's caps (REDUCER_DEFAULT_CAP_MB, REDUCER_FIRST_BUCKET_MB), construction-time buckets,
 * no_sync 1, 20 iterations, 3 warm-ups, seed 1234, SGD lr 0.01, polling on. */
void train_cfg_defaults(train_cfg *c);

/* Checks every field; ERR_USAGE with a message naming the flag. */
int train_cfg_check(const train_cfg *c, err_t *e);

typedef struct {
  double ready_s; /* last gradient of the bucket copied in, relative to the iteration start */
  double start_s; /* its MPI_Iallreduce called */
  double end_s;   /* its completion first observed (a poll or the final wait) */
} train_bucket_time;

typedef struct {
  double time_s;      /* iteration wall time, max over ranks */
  double forward_s;   /* rank 0's phases */
  double backward_s;  /* including the copies into buckets and the polls */
  double wait_s;      /* the final wait (and, flat, the all-reduce) */
  double step_s;      /* copy back, division (flat), optimizer */
  double cpu_s;       /* CPU time of rank 0's thread in the iteration: time - cpu_s is time the
                         process was not running (another process had the core) or slept */
  float loss;         /* rank 0's loss */
  int synced;         /* 1 if this iteration communicated */
} train_iter;

typedef struct {
  int nranks;
  size_t nparams;
  size_t grad_bytes;
  int nbuckets;
  size_t *bucket_bytes;      /* (nbuckets), reduction order */
  int *bucket_ntensors;      /* (nbuckets) */
  int *bucket_tensors;       /* concatenated tensor indices, bucket by bucket */
  train_iter *iter;          /* (iters) timed iterations */
  train_bucket_time *bucket; /* (iters * nbuckets), rank 0's; zeros in unsynced iterations */
  double elapsed_s;          /* wall time of the timed iterations on rank 0 */
  double param_rank_maxdiff; /* max |p_rank - p_rank0| over ranks and parameters at the end */
  double cpu_share;          /* min over ranks of (thread CPU time / wall time) over the timed
                                iterations: below 1 when some rank was not running (another
                                process had its core). Waiting inside MPI spins, so counts as CPU. */
  float *params;             /* (nparams) the final parameters (every rank holds its own) */
} train_result;

/* Runs warm-ups then the timed iterations. On success the caller frees *r with train_result_free.
 * ERR_USAGE for a bad cfg, ERR_NOMEM, ERR_RUNTIME (a kernel or MPI failure, with a message).
 * The result is complete on every rank (timings max-reduced over ranks where stated). */
int train_run(const train_cfg *c, train_result *r, err_t *e);
void train_result_free(train_result *r); /* NULL is a no-op */

/* The bytes of the synthetic stream at position pos: a seeded, order-2 Markov source over the
 * tokens < V, so the loss can fall. Writes the (T+1, B) token block of global sequences
 * first_seq .. first_seq+B-1 for iteration `iter` into tokens. */
void train_tokens(const mlstm_shape *s, uint64_t seed, long iter, long first_seq, long global_batch,
                  uint8_t *tokens);

/* Front end: `ddpcalib train ...` (flags in docs/validation.md). Initialises and finalises MPI.
 * Returns the exit status: 0, 1 runtime failure, 2 usage error. */
int train_main(int argc, char **argv);

#endif
