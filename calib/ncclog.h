/* ncclog: the output of NVIDIA's nccl-tests (all_reduce_perf and the other *_perf programs) read
 * back: what ran (collective, ranks, hosts, devices, the sweep's flags) and each size's
 * out-of-place and in-place time, algbw and busbw, so that `ddpcalib import nccl-tests` can fit a
 * cluster's links from logs its owners already have (docs/calib.md, "import nccl-tests", lists
 * every release's layout with the nccl-tests source it comes from).
 *
 * Comment lines start with '#': the flags line, one "# Rank R [Group G] [Pid P] on HOST device D
 * [BUS] NAME" line per rank, the column header ("# size count type redop [root] time algbw busbw
 * #wrong ..."), the footer ("# Out of bounds values", "# Avg bus bandwidth") and, from v2.16.7 on,
 * "# Collective test starting/concluded: NAME_perf". The column header says where each field of a
 * data line is (releases differ: the root column, "error" or "#wrong", #bitdiff, per-iteration
 * columns, a trailing timestamp; v1.0 prints milliseconds); a log without one is read as v2.x's 12
 * or 13 fields. A launcher's prefix ("N: " of srun -l, "[R,N]<stdout>:" of Open MPI's
 * --tag-output, "[N] " of MPICH/Intel MPI) is ignored, as are lines that are neither (NCCL INFO,
 * the shell's). Every data line is checked: algbw = size / time and busbw = algbw x the
 * collective's bus factor (sim/coll.h) within the printed precision, #wrong a count in range; a
 * line that breaks one is an error naming file:line. */
#ifndef DDPCALIB_NCCLOG_H
#define DDPCALIB_NCCLOG_H

#include <stddef.h>

#include "coll.h"
#include "err.h"

typedef struct {
  size_t bytes, count;
  double time_us[2], algbw_GBps[2], busbw_GBps[2]; /* [0] out of place, [1] in place */
  int has[2];                                       /* the column was printed (not N/A) */
  long long wrong[2]; /* -1: not checked (N/A); -2: checked, the count is the footer's (before v2.13) */
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
  long long oob;            /* "# Out of bounds values : N": the wrong values' count; -1 when absent */
  char release[64];         /* the nccl-tests releases whose layout the log has: "v2.14.1..v2.16.6" */
  ncclog_row *rows;
  size_t nrows;
} ncclog;

/* Parses text (the log's contents) read from `path`. coll >= 0 names the collective when the
 * log does not (a log that names another, or whose redop or root column rules it out, is an
 * error); -1 leaves it to the log: its "Collective test" line, else what its rows show (a
 * reduction op or none, a root or -1, the bus factor busbw / algbw), refusing a log those leave
 * ambiguous (all_gather or alltoall; all_reduce or sendrecv on 2 ranks: "give --collective").
 * ERR_INPUT with `path:line: what` on a malformed or inconsistent line, no data, no rank lines or
 * a collective ddpsim does not model; ERR_NOMEM.
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
