/* reducer: what PyTorch's DDP Reducer does around the bucket assignment, release by release.
 *
 * sim/bucket.h assigns tensors to buckets for given size limits and order. Which limits, which
 * order and in which iteration is the Reducer's business, and it changed across releases
 * (docs/reducer.md has the table and the PyTorch source each row comes from):
 *   - 1.1-1.5: construction-time buckets, limits [1 MiB, cap], for ever.
 *   - 1.6: buckets rebuilt once, after iteration 1, in the order gradients became ready, limits
 *     [1 MiB, cap], when find_unused_parameters=False (reducer.cpp, should_rebuild_buckets).
 *   - 1.9: static_graph (_set_static_graph; a constructor argument from 1.11): also rebuilt, one
 *     iteration later: iteration 1 all-reduces every bucket after backward (delay_all_reduce),
 *     iteration 2 runs the construction-time buckets, the rebuilt ones from iteration 3.
 *   - 1.12: with find_unused_parameters=False or static_graph, the construction-time assignment is
 *     one bucket per dtype (limits [sys.maxsize]): iteration 1 all-reduces all gradients at once.
 *   - 2.4: bucket_cap_mb defaults to None; a cap given by the user also caps the first bucket,
 *     construction and rebuild alike; the 1 MiB first bucket stays only when it is left unset.
 *   - 2.11: bucket_cap_mb_list: per-bucket limits, used for construction and rebuild, and the
 *     construction-time buckets are then used from iteration 1 even without find_unused_parameters.
 * Other knobs by release: gradient_as_bucket_view 1.7, fp16_compress_hook 1.8, bf16_compress_hook
 * 1.10. Versions are written major*100+minor (2.5 -> 205).
 *
 * Before the C++ Reducer, DDP was Python (torch/nn/parallel/distributed.py; docs/reducer.md):
 *   - 0.2, 0.3: 1 MiB buckets in registration order, one dtype only, gloo only; each bucket's last
 *     gradient hook queues it to a reduction thread of its own (its own process group and CUDA
 *     stream), which flattens it, divides it by the world size, all-reduces it and copies it back.
 *   - 0.4: the same with gloo (1 MiB per dtype, _take_tensors); with nccl every gradient is reduced
 *     after backward (a queued callback) in 256 MiB buckets, each flattened, all-reduced, divided
 *     and copied back on the default stream.
 *   - 1.0 (c10d): bucket_cap_mb (25) buckets in registration order (take_tensors), reduced from the
 *     last as they become ready (_queue_reduction: flatten and divide on a worker stream, then the
 *     process group's all-reduce); every bucket copied back once the last is queued. */
#ifndef DDPSIM_REDUCER_H
#define DDPSIM_REDUCER_H

#include <stddef.h>

#include "bucket.h"
#include "err.h"

#define REDUCER_VERSION_MIN 2      /* 0.2: DDP's oldest modelled release (its first) */
#define REDUCER_VERSION_C10D 100   /* 1.0: c10d, bucket_cap_mb */
#define REDUCER_VERSION_CPP 101    /* 1.1: the C++ Reducer */
#define REDUCER_VERSION_OLDEST 2   /* 0.2: the oldest release a version may name */
#define REDUCER_VERSION_CPP_AUTOGRAD 4 /* 0.4: autograd's functions in C++ (pytorch/pytorch#3275) */
#define REDUCER_VERSION_LATEST 215 /* 2.15: the newest release read (and the default) */
#define REDUCER_MAX_LIMITS 64      /* entries of a bucket_cap_mb_list */
/* DDP's defaults (docs/reducer.md): bucket_cap_mb 25 (torch/nn/parallel/distributed.py, where it is
 * not given) and the first bucket's 1 MiB (dist._DEFAULT_FIRST_BUCKET_BYTES), in MB. Written here
 * once; the scenario (sim/scenario.h), ddpcalib train and validate take them from here, the help
 * texts REDUCER_DEFAULT_CAP's digits (CLI_TEXT, common/cli.h). */
#define REDUCER_DEFAULT_CAP 25
#define REDUCER_DEFAULT_CAP_MB ((double)REDUCER_DEFAULT_CAP)
#define REDUCER_FIRST_BUCKET_MB 1.0

/* DDP's process group (sim_backend's, mapped by sim_reducer_knobs). */
typedef enum { REDUCER_PG_NCCL = 0, REDUCER_PG_GLOO = 1, REDUCER_PG_MPI = 2 } reducer_pg;

/* DDP's constructor arguments that decide the buckets, under their PyTorch names. */
typedef struct {
  int version;            /* major*100+minor; 0: REDUCER_VERSION_LATEST */
  double bucket_cap_mb;   /* <= 0: not given (DDP's default, REDUCER_DEFAULT_CAP_MB) */
  double first_bucket_mb; /* <= 0: the release's own (REDUCER_FIRST_BUCKET_MB); > 0: set */
  int find_unused_parameters;
  int static_graph;
  int ncap_list;                          /* bucket_cap_mb_list entries; 0: none */
  double cap_list_mb[REDUCER_MAX_LIMITS]; /* bucket_cap_mb_list */
  reducer_pg pg;                          /* the process group (0.4 had a path of its own for nccl) */
  int no_broadcast_buffers;               /* broadcast_buffers=False (an argument from 0.4) */
} reducer_knobs;

/* Which buckets an iteration all-reduces. */
typedef enum {
  REDUCER_CONSTRUCTION = 0, /* the construction-time assignment: registration order, reversed */
  REDUCER_REBUILT = 1       /* rebuilt in gradient-ready order */
} reducer_layout;

/* What DDP does around each bucket's all-reduce, by release (docs/reducer.md, "Per-gradient work"). */
typedef enum {
  REDUCER_WORK_REDUCER = 0, /* 1.1 on: the C++ Reducer's copy of each ready gradient into its bucket (and
                             * division, reducer_fused_copy), on the compute stream; copies back after the wait */
  REDUCER_WORK_THREAD = 1,  /* 0.2-0.4 (gloo): per bucket, on its reduction thread's stream: flatten, divide,
                             * all-reduce, copy each gradient back */
  REDUCER_WORK_QUEUED = 2,  /* 1.0: per bucket, on a worker stream: flatten, divide, all-reduce; every
                             * gradient copied back after the last bucket is queued */
  REDUCER_WORK_AFTER = 3    /* 0.4 (nccl): after backward, per bucket on the default stream: flatten,
                             * all-reduce, divide, copy back */
} reducer_work;

typedef struct {
  reducer_layout layout;
  int nlimits;                      /* >= 1 */
  size_t limits[REDUCER_MAX_LIMITS]; /* per-dtype bucket size limits in bytes, the last one repeats */
  int delayed;                      /* every bucket all-reduced after backward (static_graph, iteration 1;
                                     * 0.4 with nccl) */
  bucket_fit fit;                   /* how a bucket closes, */
  bucket_order order;               /* the order its all-reduces run in, */
  int one_dtype;                    /* and whether the model must be of one dtype (bucket.h) */
  reducer_work work;                /* the copies and divisions around each all-reduce */
} reducer_iter;

/* The bucket walk of an iteration (pointing into it). */
void reducer_walk(const reducer_iter *it, bucket_walk *w);

/* "2.5" -> 205 (also "2.5.1": the patch is ignored; "0.3" -> 3). ERR_INPUT with a message naming
 * the range for a malformed version or one outside [REDUCER_VERSION_OLDEST, REDUCER_VERSION_LATEST];
 * DDP refuses releases before REDUCER_VERSION_MIN (reducer_check). */
int reducer_version_parse(const char *text, int *version, err_t *e);

/* The release's host behaviour (docs/reducer.md, "Host behaviour by release"): 1 when autograd's
 * functions were Python, so that DataParallel's backward takes turns under the GIL (before 0.4). */
int reducer_backward_gil(int version);
/* The Reducer's work on each ready gradient (docs/reducer.md, "Per-gradient work"): 1 from 1.7,
 * where mark_variable_ready_dense divides while copying (at::mul_out into the bucket view, one pass,
 * one kernel per gradient; with gradient_as_bucket_view a div_ of the view in place); 0 before,
 * where it copied each gradient (copy_, one kernel each) and divided the whole bucket (div_) once
 * its last gradient arrived. */
#define REDUCER_VERSION_FUSED_COPY 107
int reducer_fused_copy(int version);

/* ProcessGroupNCCL's host work around each all-reduce the C++ Reducer (1.1 on) issues, beyond NCCL's
 * launch (docs/reducer.md, "ProcessGroupNCCL's host work"), in CUDA event calls: *issue per call
 * (collective(): syncStreams' cudaEventRecord on the current stream and cudaStreamWaitEvent of the
 * NCCL stream; the work's event created, recorded on the NCCL stream and destroyed with the work: 5;
 * from 1.8 the work's future marked completed records an event of its own, created and destroyed
 * too: 8) and *wait per work at the final wait (finalize_backward: work->wait() or, later, its
 * future's, one cudaStreamWaitEvent of the current stream). Both 0 before 1.1 (not modelled). */
#define REDUCER_VERSION_PG_FUTURE 108
void reducer_pg_nccl_calls(int version, int *issue, int *wait);

/* PyTorch's fp32 math by release, on a card with TF32 (docs/profile.md, "fp32 math"): cuDNN's
 * convolutions (torch.backends.cudnn.allow_tf32) in TF32 from 1.7; matmuls
 * (torch.backends.cuda.matmul.allow_tf32) in TF32 from 1.7 to 1.11 and strict from 1.12. Before 1.7
 * neither had TF32. Version 0: the newest. */
#define REDUCER_VERSION_TF32 107
#define REDUCER_VERSION_STRICT_MATMUL 112
int reducer_tf32_cudnn(int version);
int reducer_tf32_matmul(int version);

/* "2.5" into buf. */
const char *reducer_version_name(int version, char *buf, size_t n);

/* ERR_INPUT (misuse) when the knobs ask for something their release does not have (bucket_cap_mb
 * before 1.0, find_unused_parameters and the first bucket's size before 1.1, static_graph before 1.9,
 * bucket_cap_mb_list before 2.11, a non-positive cap, a process group its DDP did not work with: gloo
 * only before 0.4, gloo or nccl before 1.1) or the extra knobs the caller passes:
 * gradient_as_bucket_view (before 1.7), comm hook 1 = fp16 (before 1.8), 2 = bf16 (1.10). */
int reducer_check(const reducer_knobs *k, int bucket_view, int comm_hook, err_t *e);

/* The process group a release's DDP is run with when none is named: gloo before 0.4 (its only one),
 * nccl after. */
reducer_pg reducer_default_pg(int version);

/* The bucket cap the release runs with, in MB (MiB before 1.0, which had no bucket_cap_mb): the
 * given bucket_cap_mb, else REDUCER_DEFAULT_CAP_MB from 1.0; 1 before (256 for 0.4's nccl path). */
double reducer_cap_mb(const reducer_knobs *k);

/* How DDP broadcasts the module's buffers from rank 0 before each forward, in chunks of this many
 * bytes: 250 MiB from 1.0 (broadcast_bucket_size, _dist_broadcast_coalesced), 10 MiB in 0.4
 * (broadcast_bucket_size = 10 * MB), all of them in one flat tensor in 0.3 (SIZE_MAX); 0 in 0.2,
 * whose forward with one device per process returns before _sync_params. */
size_t reducer_buffer_chunk_bytes(int version);

/* The first iteration (1-based) of the steady state: 1, 2 (rebuilt after iteration 1) or 3
 * (static_graph). */
int reducer_steady_iteration(const reducer_knobs *k);

/* The buckets iteration `iteration` all-reduces (1-based; 0: the steady state). */
void reducer_iteration(const reducer_knobs *k, int iteration, reducer_iter *out);

/* "rebuilt", "construction-time", or "one bucket per dtype", with ", all after backward" when
 * delayed: what an iteration all-reduces, for reports. */
const char *reducer_iter_name(const reducer_iter *it, char *buf, size_t n);

#endif
