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

/* The walk: tensors in order `order` (registration order when NULL), one open bucket per dtype,
 * closed by `fit`; out lists the buckets as they closed, then the leftovers in dtype-key order. */
static int walk(int n, const size_t *bytes, const int *dtype_key, const int *order, const size_t *limits, int nlimits,
                bucket_fit fit, bucket_plan *out, err_t *e) {
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
    size_t limit = limits[ob->closed < nlimits ? ob->closed : nlimits - 1];
    if (fit == BUCKET_FIT_BELOW && ob->ntensors > 0 && ob->bytes + bytes[t] > limit) {
      if (push(out, &pcap, ob)) {
        rc = err_set(e, ERR_NOMEM, "out of memory");
        goto done;
      }
      ob->closed++;
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
    limit = limits[ob->closed < nlimits ? ob->closed : nlimits - 1];
    if (fit == BUCKET_FIT_REACH && ob->bytes >= limit) {
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
done:
  if (open)
    for (int i = 0; i < nopen; i++) free(open[i].tensors);
  free(open);
  free(seen);
  if (rc) bucket_plan_free(out);
  return rc;
}

static void reverse(bucket_plan *p) {
  for (int i = 0, j = p->n - 1; i < j; i++, j--) {
    bucket_t tmp = p->b[i];
    p->b[i] = p->b[j];
    p->b[j] = tmp;
  }
}

int bucket_assign_limits(int n, const size_t *bytes, const int *dtype_key, const int *order, const size_t *limits,
                         int nlimits, bucket_plan *out, err_t *e) {
  int rc = walk(n, bytes, dtype_key, order, limits, nlimits, BUCKET_FIT_REACH, out, e);
  if (rc == ERR_OK && !order) {
    qsort(out->b, (size_t)out->n, sizeof *out->b, cmp_bucket);
    reverse(out);
  }
  return rc;
}

/* The position of bucket b's last gradient in the ready order (pos[t]: tensor t's position). */
static int last_ready(const bucket_t *b, const int *pos) {
  int m = pos[b->tensors[0]];
  for (int i = 1; i < b->ntensors; i++)
    if (pos[b->tensors[i]] > m) m = pos[b->tensors[i]];
  return m;
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
  const bucket_walk w = {.limits = limits, .nlimits = nlimits, .fit = BUCKET_FIT_REACH,
                         .order = rebuilt ? BUCKET_ORDER_READY : BUCKET_ORDER_SORTED_REVERSED};
  return bucket_plan_walk(m, run, &w, out, e);
}

int bucket_plan_walk(const model_t *m, model_dtype run, const bucket_walk *w, bucket_plan *out, err_t *e) {
  memset(out, 0, sizeof *out);
  size_t *bytes;
  int *keys, *order = NULL, *pos = NULL, rc;
  if ((rc = model_tensors(m, run, &bytes, &keys, e))) return rc;
  if (w->one_dtype)
    for (int i = 1; i < m->nparams; i++)
      if (keys[i] != keys[0]) {
        rc = err_set(e, ERR_INPUT, "%s: parameters '%s' (%s) and '%s' (%s) differ in type: DDP before PyTorch 0.4 requires all "
                     "parameters' data to be of the same type", m->path, m->params[0].name, model_dtype_name((model_dtype)keys[0]),
                     m->params[i].name, model_dtype_name((model_dtype)keys[i]));
        goto done;
      }
  if (w->order == BUCKET_ORDER_READY || w->order == BUCKET_ORDER_BY_READY) {
    order = malloc((size_t)m->nparams * sizeof *order);
    pos = malloc((size_t)m->nparams * sizeof *pos);
    if (!order || !pos) {
      rc = err_set(e, ERR_NOMEM, "out of memory");
      goto done;
    }
    model_ready_order(m, order);
    for (int i = 0; i < m->nparams; i++) pos[order[i]] = i;
  }
  if (w->order == BUCKET_ORDER_SORTED_REVERSED) {
    rc = bucket_assign_limits(m->nparams, bytes, keys, NULL, w->limits, w->nlimits, out, e);
    goto done;
  }
  rc = walk(m->nparams, bytes, keys, w->order == BUCKET_ORDER_READY ? order : NULL, w->limits, w->nlimits, w->fit, out, e);
  if (rc) goto done;
  if (w->order == BUCKET_ORDER_CLOSED_REVERSED) reverse(out);
  if (w->order == BUCKET_ORDER_BY_READY) /* stable: buckets whose last gradients come together keep their walk's order */
    for (int i = 1; i < out->n; i++)
      for (int j = i; j > 0 && last_ready(&out->b[j - 1], pos) > last_ready(&out->b[j], pos); j--) {
        bucket_t tmp = out->b[j];
        out->b[j] = out->b[j - 1];
        out->b[j - 1] = tmp;
      }
done:
  free(order);
  free(pos);
  free(bytes);
  free(keys);
  if (rc) bucket_plan_free(out);
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
