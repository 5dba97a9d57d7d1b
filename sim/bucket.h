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

/* One bucket per dtype holding every gradient (a flat all-reduce after backward), dtype order. */
int bucket_plan_flat(const model_t *m, model_dtype run, bucket_plan *out, err_t *e);

void bucket_plan_free(bucket_plan *p); /* frees the contents; NULL or an empty plan is a no-op */

#endif
