/* ncclog: the output of NVIDIA's nccl-tests (all_reduce_perf and the other *_perf programs) read
 * back: what ran (collective, ranks, hosts, devices, the sweep's flags) and each size's
 * out-of-place and in-place time, algbw and busbw, so that `ddpcalib import nccl-tests` can fit a
 * cluster's links from logs its owners already have (docs/calib.md, "import nccl-tests").
 *
 * The layout is nccl-tests' src/common.cu (Reporter, run()): comment lines start with '#' (the
 * "# nThread ..." flags line, one "#  Rank R Group G Pid P on HOST device D [0xBB] NAME" line per
 * rank, "# Avg bus bandwidth : X", "# Collective test concluded: NAME_perf" in newer releases); a
 * data line is "%12li  %12li  %8s  %6s  %6i" (size in bytes, count, type, redop, root; releases
 * before the root column have 12 fields) then "  %7s  %6.2f  %6.2f  %5li" (time in us, algbw and
 * busbw in GB/s = 1e9 B/s, #wrong or N/A) out of place, then the same in place. A "N: " prefix
 * (srun -l) is ignored, as are lines that are neither (NCCL INFO, the shell's). Every data line is
 * checked: algbw = size / time and busbw = algbw x the collective's bus factor (sim/coll.h) within
 * the printed precision; a line that breaks either is an error naming file:line. */
#ifndef DDPCALIB_NCCLOG_H
#define DDPCALIB_NCCLOG_H

#include <stddef.h>

#include "coll.h"
#include "err.h"

typedef struct {
  size_t bytes, count;
  double time_us[2], algbw_GBps[2], busbw_GBps[2]; /* [0] out of place, [1] in place */
  int has[2];                                       /* the column was printed (not N/A) */
  long long wrong[2];                               /* -1: not checked (N/A) */
  int line;
} ncclog_row;

typedef struct {
  char path[512];
  int coll;                 /* coll_kind, or -1 when the log does not say (ncclog_set_coll) */
  int nranks, nhosts;       /* rank lines, distinct hosts among them */
  char **hostv;             /* (nhosts) their names */
  char hosts[256], devices[256], type[16], redop[16]; /* for people: comma-separated, cut when full */
  int iters, warmups;       /* from the flags line; 0 when absent */
  double avg_busbw_GBps;    /* the closing line's; 0 when absent */
  ncclog_row *rows;
  size_t nrows;
} ncclog;

/* Parses text (the log's contents) read from `path`. coll >= 0 names the collective when the
 * log does not (a log that names another is an error), -1 leaves it to the log, or to the bus
 * factor its rows show when it is silent (all-gather for all-gather or reduce-scatter, whose rings
 * take the same steps). ERR_INPUT with `path:line: what` on a malformed or
 * inconsistent line, no data, no rank lines or a collective ddpsim does not model; ERR_NOMEM.
 * The caller frees *out with ncclog_free, also on failure. */
int ncclog_parse(const char *text, const char *path, int coll, ncclog *out, err_t *e);

void ncclog_free(ncclog *l); /* NULL is a no-op */

#include "commbench.h"

/* The log as the sweep `ddpcalib comm` measures (commbench.h), so that the same fit, quality gate
 * and record apply: per size the out-of-place (in_place 0) or in-place time, as the time of an
 * all-reduce over the same ring, t x 2(n-1) / nsteps (sim/coll.h: the ring model's steps of the
 * log's collective; 1 for an all-reduce), as mean, median, min and max (nccl-tests prints one mean
 * per size), with one sample; *cfg gets the sizes, iters 1 and the log's warm-ups. ERR_INPUT when
 * a row lacks that column. The caller frees *res with commbench_result_free. */
int ncclog_to_sweep(const ncclog *l, int in_place, commbench_cfg *cfg, commbench_result *res, err_t *e);

/* The collective's name as nccl-tests spells its program: "all_reduce", "all_gather", ... */
const char *ncclog_coll_name(int coll);

#endif
