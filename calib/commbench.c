/* commbench: the all-reduce sweep driver. */
#include "commbench.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"

int commbench_check_cfg(const commbench_cfg *c, err_t *e) {
  if (c->min_bytes < 4) return err_set(e, ERR_USAGE, "-b: the smallest size is 4 bytes (one float)");
  if (c->max_bytes < c->min_bytes)
    return err_set(e, ERR_USAGE, "-e: max size %zu is below min size %zu", c->max_bytes, c->min_bytes);
  if (!(c->factor > 1.0) && c->max_bytes > c->min_bytes)
    return err_set(e, ERR_USAGE, "-f: the factor must be > 1");
  if (c->iters < 1) return err_set(e, ERR_USAGE, "-n: at least one iteration");
  if (c->warmups < 0) return err_set(e, ERR_USAGE, "-w: warm-ups must be >= 0");
  return ERR_OK;
}

void commbench_result_free(commbench_result *r) {
  if (!r) return;
  for (size_t i = 0; i < r->nrows; i++) free(r->rows[i].samples_s);
  free(r->rows);
  memset(r, 0, sizeof *r);
}

int commbench_run(const commbench_cfg *cfg, const commbench_backend *b,
                  void (*on_row)(const commbench_row *row, void *arg), void *arg,
                  commbench_result *out, err_t *e) {
  memset(out, 0, sizeof *out);
  int rc = commbench_check_cfg(cfg, e);
  if (rc) return rc;
  if (b->nranks < 2)
    return err_set(e, ERR_RUNTIME,
                   "%s: an all-reduce over %d participant measures no communication; run %s",
                   b->name, b->nranks,
                   strcmp(b->name, "mpi") == 0 ? "under mpirun -np N with N >= 2"
                                               : "with -g N >= 2 or under mpirun");

  /* The sizes: min * f^k, rounded down to whole floats, strictly increasing. */
  size_t cap = 1;
  for (double s = (double)cfg->min_bytes; cfg->factor > 1 && s * cfg->factor <= (double)cfg->max_bytes;
       s *= cfg->factor)
    cap++;
  size_t *sizes = malloc(cap * sizeof *sizes);
  if (!sizes) return err_set(e, ERR_NOMEM, "out of memory");
  size_t nsizes = 0;
  double s = (double)cfg->min_bytes;
  for (size_t k = 0; k < cap; k++, s *= cfg->factor) {
    size_t bytes = ((size_t)(s + 0.5) / 4) * 4;
    if (bytes > cfg->max_bytes) bytes = (cfg->max_bytes / 4) * 4;
    if (bytes >= 4 && (nsizes == 0 || bytes > sizes[nsizes - 1])) sizes[nsizes++] = bytes;
  }
  out->rows = calloc(nsizes, sizeof *out->rows);
  double *t = malloc((size_t)cfg->iters * sizeof *t);
  if (!out->rows || !t) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto done;
  }
  out->nranks = b->nranks;
  out->wrong = cfg->check ? 0 : -1;
  if ((rc = b->alloc(b->ctx, sizes[nsizes - 1] / 4, e))) goto done;

  double busbw_sum = 0;
  for (size_t k = 0; k < nsizes; k++) {
    commbench_row *row = &out->rows[k];
    row->bytes = sizes[k];
    row->count = sizes[k] / 4;
    row->wrong = -1;
    row->samples_s = malloc((size_t)cfg->iters * sizeof *row->samples_s);
    if (!row->samples_s) {
      rc = err_set(e, ERR_NOMEM, "out of memory");
      goto done;
    }
    out->nrows = k + 1;
    if ((rc = b->fill(b->ctx, row->count, e))) goto done;
    for (int w = 0; w < cfg->warmups; w++) {
      double dummy;
      if ((rc = b->allreduce(b->ctx, row->count, &dummy, e))) goto done;
    }
    for (int i = 0; i < cfg->iters; i++)
      if ((rc = b->allreduce(b->ctx, row->count, &row->samples_s[i], e))) goto done;
    if ((rc = b->reduce_max(b->ctx, row->samples_s, (size_t)cfg->iters, e))) goto done;
    if (cfg->check) {
      if ((rc = b->check(b->ctx, row->count, &row->wrong, e))) goto done;
      out->wrong += row->wrong;
    }
    memcpy(t, row->samples_s, (size_t)cfg->iters * sizeof *t);
    gsl_sort(t, 1, (size_t)cfg->iters);
    double sum = 0;
    for (int i = 0; i < cfg->iters; i++) sum += t[i];
    row->mean_s = sum / cfg->iters;
    row->min_s = t[0];
    row->max_s = t[cfg->iters - 1];
    row->median_s = gsl_stats_median_from_sorted_data(t, 1, (size_t)cfg->iters);
    row->algbw_GBps = (double)row->bytes / row->mean_s / 1e9;
    row->busbw_GBps = row->algbw_GBps * coll_bus_factor(COLL_ALLREDUCE, (long)b->nranks);
    busbw_sum += row->busbw_GBps;
    if (on_row) on_row(row, arg);
  }
  out->avg_busbw_GBps = busbw_sum / (double)nsizes;
done:
  free(sizes);
  free(t);
  return rc;
}

void commbench_format_header(char *buf, size_t len) {
  snprintf(buf, len,
           "#                                                  out-of-place\n"
           "#       size         count      type   redop     time   algbw   busbw  #wrong\n"
           "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)");
}

void commbench_format_row(const commbench_row *r, char *buf, size_t len) {
  char wrong[32];
  if (r->wrong < 0)
    snprintf(wrong, sizeof wrong, "N/A");
  else
    snprintf(wrong, sizeof wrong, "%lld", r->wrong);
  snprintf(buf, len, "%12zu  %12zu  %8s  %6s  %8.2f  %6.2f  %6.2f  %6s", r->bytes, r->count, "float",
           "sum", r->mean_s * 1e6, r->algbw_GBps, r->busbw_GBps, wrong);
}

void commbench_format_footer(const commbench_result *r, char *buf, size_t len) {
  char wrong[64];
  if (r->wrong < 0)
    snprintf(wrong, sizeof wrong, "not checked (use -c)");
  else
    snprintf(wrong, sizeof wrong, "%lld %s", r->wrong, r->wrong ? "FAILED" : "OK");
  snprintf(buf, len,
           "# Out of bounds values : %s\n"
           "# Avg bus bandwidth    : %.4f GB/s",
           wrong, r->avg_busbw_GBps);
}
