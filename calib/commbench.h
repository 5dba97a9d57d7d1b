/* commbench: the all-reduce sweep driver (the nccl-tests shape: one driver owns sizes, timing and
 * checking; each backend is a small plug-in that moves the bytes).
 *
 * A sweep runs float sum all-reduces, out of place, at sizes min, min*f, min*f^2, ... <= max
 * (each rounded down to a multiple of 4 bytes; duplicates after rounding are dropped). At each size:
 * `warmups` untimed all-reduces, then `iters` timed ones, each timed alone by the backend; the
 * per-iteration times are reduced with max over processes (the slowest rank decides, as in a real
 * synchronous step). With `check`, the receive buffer is compared element by element with the exact
 * expected sum and the wrong elements of all processes are counted.
 *
 * Definitions (docs/calib.md derives busbw):
 *   algbw = size / time;  busbw = algbw * 2(n-1)/n, n = ranks in the ring. */
#ifndef DDPCALIB_COMMBENCH_H
#define DDPCALIB_COMMBENCH_H

#include <stddef.h>

#include "err.h"

/* A backend: all function pointers are required. `ctx` is the backend's own state. */
typedef struct {
  const char *name;  /* "mpi", "nccl" */
  int nranks;        /* participants in the all-reduce (processes x local devices) */
  int is_root;       /* this process reports and writes the profile */
  int nhosts;        /* distinct hosts among the participants */
  char hosts[256];   /* their names, comma-separated (truncated) */
  char devices[256]; /* device names, for provenance ("cpu" for MPI) */
  char library[128]; /* library and version, e.g. "Open MPI v4.1.4", "NCCL 2.28.3" */
  void *ctx;
  /* Allocates buffers for up to max_count floats per participant. */
  int (*alloc)(void *ctx, size_t max_count, err_t *e);
  /* Fills the send buffers with the check pattern (participant r, element i: (r+1) * (1 + i%7))
   * and the receive buffers with -1. */
  int (*fill)(void *ctx, size_t count, err_t *e);
  /* One all-reduce of `count` floats; returns when it is complete on this process; writes the
   * elapsed seconds measured on this process. */
  int (*allreduce)(void *ctx, size_t count, double *elapsed_s, err_t *e);
  /* Counts the receive-buffer elements differing from n(n+1)/2 * (1 + i%7), summed over all
   * processes, result valid on every process. */
  int (*check)(void *ctx, size_t count, long long *wrong, err_t *e);
  /* Replaces v[0..n) by its elementwise max over all processes (identity for one process). */
  int (*reduce_max)(void *ctx, double *v, size_t n, err_t *e);
} commbench_backend;

typedef struct {
  size_t min_bytes, max_bytes; /* -b, -e */
  double factor;               /* -f, > 1 */
  int iters, warmups;          /* -n >= 1, -w >= 0 */
  int check;                   /* -c */
} commbench_cfg;

/* One size of the sweep. */
typedef struct {
  size_t bytes, count;
  double mean_s, median_s, min_s, max_s; /* over the per-iteration times */
  double algbw_GBps, busbw_GBps;         /* from mean_s, in 1e9 B/s as nccl-tests prints */
  long long wrong;                       /* -1 when not checked */
  double *samples_s;                     /* [iters] per-iteration times (max over processes) */
} commbench_row;

typedef struct {
  size_t nrows;
  commbench_row *rows;
  int nranks;
  double avg_busbw_GBps; /* mean busbw over the sizes, as nccl-tests' closing line */
  long long wrong;       /* total wrong elements, -1 when not checked */
} commbench_result;

/* Checks cfg (ERR_USAGE with a message naming the flag). */
int commbench_check_cfg(const commbench_cfg *cfg, err_t *e);

/* Runs the sweep. on_row (may be NULL) is called after each size with the finished row, on every
 * process: the caller decides who prints. The caller owns `out` and frees it with
 * commbench_result_free (also on failure). Needs nranks >= 2. */
int commbench_run(const commbench_cfg *cfg, const commbench_backend *b,
                  void (*on_row)(const commbench_row *row, void *arg), void *arg,
                  commbench_result *out, err_t *e);

void commbench_result_free(commbench_result *r);

/* The table, one line each, without a newline, into buf (nccl-tests' columns):
 * header (several lines joined by '\n', each starting with '#'), one data row, and the footer. */
void commbench_format_header(char *buf, size_t len);
void commbench_format_row(const commbench_row *row, char *buf, size_t len);
void commbench_format_footer(const commbench_result *r, char *buf, size_t len);

#endif
