/* bucket: DDP's gradient buckets, exactly as PyTorch's Reducer builds them.
 *
 * Construction (torch/csrc/distributed/c10d/reducer.cpp, compute_bucket_assignment_by_size, and
 * torch/nn/parallel/distributed.py): walk the tensors in registration order, keep one open bucket per
 * dtype, add the tensor, and close the bucket once its size is >= the current limit of that dtype
 * (so a bucket may exceed the limit by its last tensor). Each dtype's limits go
 * limits[0], limits[1], ..., the last one repeating ([first_cap, cap, cap, ...] for DDP's
 * bucket_cap_mb, the user's list for bucket_cap_mb_list). Which limits and which order an iteration
 * uses is the Reducer's, release by release: sim/reducer.h. Leftover open buckets are closed at the end. Buckets are sorted by their
 * smallest tensor index, and DDP reverses the list: the last-registered parameters reduce first.
 *
 * Rebuild (Reducer::rebuild_buckets, after the first iteration): the same walk over the tensors in
 * the order their gradients became ready, limits [first_cap, cap], no sort and no reversal.
 *
 * Before 1.1 (torch/nn/parallel/distributed.py, docs/reducer.md) the walk is the Python one or
 * torch::utils::take_tensors, and the list is not sorted: bucket_walk says which fit and order.
 *
 * A plan lists buckets in reduction order: all-reduces launch strictly in that order. */
#ifndef DDPSIM_BUCKET_H
#define DDPSIM_BUCKET_H

#include <stddef.h>

#include "err.h"
#include "model.h"

typedef struct {
  int ntensors;
  int *tensors; /* (ntensors) registration indices, in the order they were added */
  size_t bytes;
  int dtype_key;
} bucket_t;

typedef struct {
  int n;
  bucket_t *b; /* (n) in reduction order */
} bucket_plan;

/* When a dtype's open bucket closes. */
typedef enum {
  BUCKET_FIT_REACH = 0, /* once its size is >= the limit, the tensor that reaches it included (reducer.cpp,
                         * take_tensors, 0.2/0.3's own loop) */
  BUCKET_FIT_BELOW = 1  /* before a tensor that would take it past the limit (torch/_utils.py _take_tensors:
                         * a bucket exceeds the limit only by a tensor alone in it) */
} bucket_fit;

/* The order of the plan's list (the order the all-reduces run in). */
typedef enum {
  BUCKET_ORDER_SORTED_REVERSED = 0, /* sorted by smallest tensor index, reversed (1.1 on, construction) */
  BUCKET_ORDER_READY = 1,           /* walk in gradient-ready order, as closed (the rebuilt buckets) */
  BUCKET_ORDER_CLOSED = 2,          /* registration walk, as closed (0.4's nccl path: _take_tensors' yield order) */
  BUCKET_ORDER_CLOSED_REVERSED = 3, /* registration walk, the last closed first (1.0: next_bucket counts down) */
  BUCKET_ORDER_BY_READY = 4         /* registration walk, listed by when their last gradient is ready (0.2-0.4's
                                     * reduction threads, one per bucket, each queued by its last hook) */
} bucket_order;

/* A walk: the limits (each > 0; the last one repeats), its fit and order; one_dtype: every tensor
 * must be of one dtype (0.2/0.3: "DistributedDataParallel requires all parameters' data to be of the
 * same type"). */
typedef struct {
  const size_t *limits;
  int nlimits;
  bucket_fit fit;
  bucket_order order;
  int one_dtype;
} bucket_walk;

/* Bytes of a bucket cap given in MB as DDP converts it: int(mb * 1024 * 1024). */
size_t bucket_mb_to_bytes(double mb);

/* The assignment for n tensors of bytes[i] bytes and dtype key dtype_key[i] (any small integer).
 * order == NULL: construction-time assignment (registration order, sorted, reversed).
 * order != NULL: a permutation of 0..n-1, the gradient-ready order: the rebuilt assignment.
 * first_cap and cap must be > 0. On success the caller frees *out with bucket_plan_free.
 * ERR_INPUT if n < 1, a cap is 0 or order is not a permutation; ERR_NOMEM. */
int bucket_assign(int n, const size_t *bytes, const int *dtype_key, const int *order, size_t first_cap, size_t cap,
                  bucket_plan *out, err_t *e);

/* The same walk over the limits limits[0..nlimits-1] (each > 0; the last one repeats). */
int bucket_assign_limits(int n, const size_t *bytes, const int *dtype_key, const int *order, const size_t *limits,
                         int nlimits, bucket_plan *out, err_t *e);

/* The plan for a model run at precision `run` under those limits: construction-time, or rebuilt
 * in the order the model's backward makes gradients ready. */
int bucket_plan_for_limits(const model_t *m, model_dtype run, const size_t *limits, int nlimits, int rebuilt,
                           bucket_plan *out, err_t *e);

/* The plan DDP builds for a model run at precision `run`: construction-time, or rebuilt in the
 * order the model's backward makes gradients ready. */
int bucket_plan_for_model(const model_t *m, model_dtype run, double first_mb, double cap_mb, int rebuilt,
                          bucket_plan *out, err_t *e);

/* The plan of walk w for a model run at precision `run` (orders READY and BY_READY read the order
 * its backward makes gradients ready). ERR_INPUT for a bad walk or, with one_dtype, a second dtype. */
int bucket_plan_walk(const model_t *m, model_dtype run, const bucket_walk *w, bucket_plan *out, err_t *e);

/* One bucket per dtype holding every gradient (a flat all-reduce after backward), dtype order. */
int bucket_plan_flat(const model_t *m, model_dtype run, bucket_plan *out, err_t *e);

void bucket_plan_free(bucket_plan *p); /* frees the contents; NULL or an empty plan is a no-op */

#endif
