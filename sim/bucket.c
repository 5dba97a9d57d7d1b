#include "bucket.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t bucket_mb_to_bytes(double mb) { return (size_t)(mb * 1024.0 * 1024.0); }

void bucket_plan_free(bucket_plan *p) {
  if (!p) return;
  for (int i = 0; i < p->n; i++) free(p->b[i].tensors);
  free(p->b);
  p->b = NULL;
  p->n = 0;
}

/* Open bucket of one dtype while walking. */
typedef struct {
  int key;
  int *tensors;
  int ntensors;
  size_t bytes;
  int closed; /* buckets of this dtype closed so far: limits[min(closed, nlimits - 1)] applies */
} open_bucket;

static int push(bucket_plan *p, int *cap, open_bucket *ob) {
  if (p->n == *cap) {
    int nc = *cap ? *cap * 2 : 8;
    bucket_t *nb = realloc(p->b, (size_t)nc * sizeof *nb);
    if (!nb) return -1;
    p->b = nb;
    *cap = nc;
  }
  bucket_t *b = &p->b[p->n++];
  b->ntensors = ob->ntensors;
  b->tensors = ob->tensors;
  b->bytes = ob->bytes;
  b->dtype_key = ob->key;
  ob->tensors = NULL;
  ob->ntensors = 0;
  ob->bytes = 0;
  return 0;
}

static int min_index(const bucket_t *b) {
  int m = b->tensors[0];
  for (int i = 1; i < b->ntensors; i++)
    if (b->tensors[i] < m) m = b->tensors[i];
  return m;
}

static int cmp_bucket(const void *a, const void *b) {
  int x = min_index(a), y = min_index(b);
  return (x > y) - (x < y);
}

int bucket_assign(int n, const size_t *bytes, const int *dtype_key, const int *order, size_t first_cap, size_t cap,
                  bucket_plan *out, err_t *e) {
  const size_t limits[2] = {first_cap, cap};
  return bucket_assign_limits(n, bytes, dtype_key, order, limits, 2, out, e);
}

int bucket_assign_limits(int n, const size_t *bytes, const int *dtype_key, const int *order, const size_t *limits,
                         int nlimits, bucket_plan *out, err_t *e) {
  memset(out, 0, sizeof *out);
  if (n < 1) return err_set(e, ERR_INPUT, "bucket assignment needs at least one tensor");
  if (nlimits < 1) return err_set(e, ERR_INPUT, "bucket assignment needs at least one size limit");
  for (int i = 0; i < nlimits; i++)
    if (limits[i] == 0) return err_set(e, ERR_INPUT, "bucket caps must be at least one byte");
  int rc = ERR_OK, pcap = 0, nopen = 0;
  open_bucket *open = calloc((size_t)n, sizeof *open); /* at most one per distinct key */
  char *seen = order ? calloc((size_t)n, 1) : NULL;
  if (!open || (order && !seen)) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto done;
  }
  for (int step = 0; step < n; step++) {
    int t = order ? order[step] : step;
    if (order) {
      if (t < 0 || t >= n || seen[t]) {
        rc = err_set(e, ERR_INPUT, "ready order is not a permutation of the %d tensors", n);
        goto done;
      }
      seen[t] = 1;
    }
    open_bucket *ob = NULL;
    for (int i = 0; i < nopen; i++)
      if (open[i].key == dtype_key[t]) ob = &open[i];
    if (!ob) {
      ob = &open[nopen++];
      ob->key = dtype_key[t];
    }
    if (!ob->tensors) {
      ob->tensors = malloc((size_t)n * sizeof(int));
      if (!ob->tensors) {
        rc = err_set(e, ERR_NOMEM, "out of memory");
        goto done;
      }
    }
    ob->tensors[ob->ntensors++] = t;
    ob->bytes += bytes[t];
    size_t limit = limits[ob->closed < nlimits ? ob->closed : nlimits - 1];
    if (ob->bytes >= limit) {
      if (push(out, &pcap, ob)) {
        rc = err_set(e, ERR_NOMEM, "out of memory");
        goto done;
      }
      ob->closed++;
    }
  }
  /* Leftovers, in dtype-key order so the result does not depend on the walk. */
  for (;;) {
    open_bucket *best = NULL;
    for (int i = 0; i < nopen; i++)
      if (open[i].ntensors && (!best || open[i].key < best->key)) best = &open[i];
    if (!best) break;
    if (push(out, &pcap, best)) {
      rc = err_set(e, ERR_NOMEM, "out of memory");
      goto done;
    }
  }
  if (!order) {
    qsort(out->b, (size_t)out->n, sizeof *out->b, cmp_bucket);
    for (int i = 0, j = out->n - 1; i < j; i++, j--) {
      bucket_t tmp = out->b[i];
      out->b[i] = out->b[j];
      out->b[j] = tmp;
    }
  }
done:
  if (open)
    for (int i = 0; i < nopen; i++) free(open[i].tensors);
  free(open);
  free(seen);
  if (rc) bucket_plan_free(out);
  return rc;
}

static int model_tensors(const model_t *m, model_dtype run, size_t **bytes, int **keys, err_t *e) {
  /* A sparse gradient is never in a dense bucket: the Reducer gives it a bucket of its own and hands
   * the sparse tensor to the process group's all-reduce (torch/csrc/distributed/c10d/reducer.cpp,
   * compute_bucket_assignment_by_size and mark_variable_ready_sparse), and ProcessGroupNCCL refuses a
   * sparse all-reduce (ProcessGroupNCCL::allreduce_sparse; docs/export.md). ddpsim's collectives
   * are NCCL's, so it refuses the model rather than price a collective that does not run. */
  for (int i = 0; i < m->nparams; i++)
    if (m->params[i].sparse)
      return err_set(e, ERR_INPUT,
                     "%s: parameter '%s' has a sparse gradient (nn.Embedding(sparse=True)): DDP all-reduces it on its "
                     "own through the process group's sparse all-reduce, which NCCL does not support "
                     "(ProcessGroupNCCL::allreduce_sparse raises); ddpsim predicts NCCL's dense all-reduces only: "
                     "export the module with sparse=False to predict it",
                     m->path, m->params[i].name);
  *bytes = malloc((size_t)m->nparams * sizeof **bytes);
  *keys = malloc((size_t)m->nparams * sizeof **keys);
  if (!*bytes || !*keys) {
    free(*bytes);
    free(*keys);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  for (int i = 0; i < m->nparams; i++) {
    (*bytes)[i] = model_param_bytes(m, i, run);
    (*keys)[i] = (int)model_param_dtype(&m->params[i], run);
  }
  return ERR_OK;
}

int bucket_plan_for_model(const model_t *m, model_dtype run, double first_mb, double cap_mb, int rebuilt,
                          bucket_plan *out, err_t *e) {
  memset(out, 0, sizeof *out);
  if (!(first_mb > 0) || !(cap_mb > 0) || !isfinite(first_mb) || !isfinite(cap_mb))
    return err_set(e, ERR_INPUT, "bucket caps must be positive numbers of MB");
  const size_t limits[2] = {bucket_mb_to_bytes(first_mb), bucket_mb_to_bytes(cap_mb)};
  return bucket_plan_for_limits(m, run, limits, 2, rebuilt, out, e);
}

int bucket_plan_for_limits(const model_t *m, model_dtype run, const size_t *limits, int nlimits, int rebuilt,
                           bucket_plan *out, err_t *e) {
  memset(out, 0, sizeof *out);
  size_t *bytes;
  int *keys, *order = NULL;
  int rc = model_tensors(m, run, &bytes, &keys, e);
  if (rc) return rc;
  if (rebuilt) {
    order = malloc((size_t)m->nparams * sizeof *order);
    if (!order) {
      rc = err_set(e, ERR_NOMEM, "out of memory");
      goto done;
    }
    model_ready_order(m, order);
  }
  rc = bucket_assign_limits(m->nparams, bytes, keys, order, limits, nlimits, out, e);
done:
  free(order);
  free(bytes);
  free(keys);
  return rc;
}

int bucket_plan_flat(const model_t *m, model_dtype run, bucket_plan *out, err_t *e) {
  memset(out, 0, sizeof *out);
  size_t *bytes;
  int *keys;
  int rc = model_tensors(m, run, &bytes, &keys, e);
  if (rc) return rc;
  /* With limits larger than the whole model, the walk closes nothing early: one bucket per dtype. */
  size_t total = 0;
  for (int i = 0; i < m->nparams; i++) total += bytes[i];
  rc = bucket_assign(m->nparams, bytes, keys, NULL, total + 1, total + 1, out, e);
  if (rc == 0) {
    /* Order by dtype key, not reversed: there is no overlap to arrange for. */
    for (int i = 0; i + 1 < out->n; i++)
      for (int j = i + 1; j < out->n; j++)
        if (out->b[j].dtype_key < out->b[i].dtype_key) {
          bucket_t t = out->b[i];
          out->b[i] = out->b[j];
          out->b[j] = t;
        }
  }
  free(bytes);
  free(keys);
  return rc;
}
