/* calcmd: ddpcalib's commands, one file each (calib/cli/cmd_<name>.c), the table ddpcalib.c
 * dispatches on, and what the commands share (calcmd.c). ddpsim's are sim/cli/cmd.h: the same
 * shape, over the same option tables (common/cli.h).
 *
 * A command gets argv from its own name on and a cli_ctx for its messages; it returns a status
 * (cli.h: CLI_OK, CLI_HELP, CLI_USAGE, or a library's failure code with the message in the
 * context), which main turns into the exit code with cli_exit, the one place that does (only MPI
 * rank 0 reports a misuse: calcmd_quiet). A command that starts MPI (comm, train) finalises it
 * before it returns. */
#ifndef DDPCALIB_CALCMD_H
#define DDPCALIB_CALCMD_H

#include "cli.h"
#include "commbench.h"
#include "commfit.h"
#include "err.h"
#include "profilew.h"
#include "record.h"

int cmd_comm(cli_ctx *x, int argc, char **argv);     /* cmd_comm.c */
int cmd_compute(cli_ctx *x, int argc, char **argv);  /* cmd_compute.c */
int cmd_h2d(cli_ctx *x, int argc, char **argv);      /* cmd_h2d.c */
int cmd_host(cli_ctx *x, int argc, char **argv);     /* cmd_host.c */
int cmd_machine(cli_ctx *x, int argc, char **argv);  /* cmd_machine.c */
int cmd_cluster(cli_ctx *x, int argc, char **argv);  /* cmd_cluster.c */
int cmd_merge(cli_ctx *x, int argc, char **argv);    /* cmd_merge.c */
int cmd_import(cli_ctx *x, int argc, char **argv);   /* cmd_import.c */
int cmd_import_kineto(cli_ctx *x, int argc, char **argv); /* cmd_import_kineto.c: `import kineto` */
int cmd_validate(cli_ctx *x, int argc, char **argv); /* cmd_merge.c */
int cmd_train(cli_ctx *x, int argc, char **argv);    /* cmd_train.c */

/* comm --nccl-tuning (cmd_comm_tuning.c, built with CUDA): the sweep of every NCCL algorithm x
 * protocol, its tables, fit and profile. MPI is initialised by the caller. */
int cmd_comm_tuning(cli_ctx *x, const commbench_cfg *cfg, int ngpus, const char *link_class, const char *topology,
                    const char *output, int regimes,
                    int accept_poor);

/* 1 on an MPI rank other than 0 (from mpirun's environment, before MPI starts): it keeps quiet
 * about misuse, which every rank would repeat. */
int calcmd_quiet(void);

/* The whole command line, as main got it, for the profile's provenance (calcmd_prov). */
void calcmd_set_line(int argc, char **argv);
profilew_prov calcmd_prov(const char *subcommand);

/* A library's status into the command's: ERR_USAGE becomes CLI_USAGE (the usage hint follows),
 * any other failure stays, with e's message in x. */
int calcmd_status(cli_ctx *x, int rc, const err_t *e);

/* Before measuring: can the output file (NULL: none) be written (common/afile.h's afile_check)? Checked
 * by the process that writes it (rank 0, or a plain run); ERR_IO in x with `path: what is wrong`.
 * Under mpirun the other ranks are ended by mpirun when rank 0 exits. */
int calcmd_check_output(cli_ctx *x, const char *path);

/* Before measuring or reading: the output `out` (named by out_flag; NULL: none) is none of the n
 * inputs in[i] (named by in_flags[i]; NULL: skipped), by common/afile.h's afile_not_input. Checked
 * by the process that writes it, as calcmd_check_output; ERR_IO in x naming both. */
int calcmd_not_input(cli_ctx *x, const char *out_flag, const char *out, const char *const *in_flags, const char *const *in, int n);

/* MPI_Init (a failure: ERR_RUNTIME in x). */
int calcmd_mpi_init(cli_ctx *x, int *argc, char ***argv);

/* CLI_CUSTOM parser of a byte count with a K, M or G suffix (calib/parse.c's parse_bytes) into a
 * size_t; CALCMD_BYTES_MUST says what it takes. */
int calcmd_bytes(const char *text, void *dest);
#define CALCMD_BYTES_MUST "must be a size in bytes > 0, with an optional K, M or G suffix (1024-based)"

/* What comm prints (rank 0), plain and --nccl-tuning alike: a row of the sweep's table (arg: a
 * commbench_backend, which prints when it is the root), the ring fit, the span of the ring over a
 * topology (nothing without one). */
void calcmd_print_row(const commbench_row *row, void *arg);
void calcmd_print_ring_fit(const char *link_class, const fit_ring_result *fit);
/* The quality gate every fitting command applies (calib/fit.h, docs/calib.md "Quality gates") to
 * a poor fit of `what` (a JSON path such as comm.links.shm): ERR_RUNTIME with a message saying why
 * and what to do, unless the fit is keepable and accept_poor (--accept-poor-fit) is set; then it
 * prints `# warning: ...` and returns ERR_OK, and the caller marks the unit with
 * calcmd_mark_poor once written. */
int calcmd_gate(const char *what, const char *why, int keepable, int accept_poor, err_t *e);
/* Puts "warning": "poor fit kept by --accept-poor-fit: why" into the unit at doc's `what` (a
 * dotted JSON path the command has just written). */
int calcmd_mark_poor(cJSON *doc, const char *what, const char *why, err_t *e);
/* The quality gate over compute's two fallback fits (compute.PREC.gemm and .ewise, already in doc):
 * calcmd_gate on each poor one, marked when kept. One gate for every command that fits compute
 * (compute, machine). */
int calcmd_gate_compute(cJSON *doc, const char *prec, const record_compute_fit *fit, int accept_poor, err_t *e);
/* Writes the measured profile doc to output (profilew_write: checked, atomic) and says so on
 * stdout; the status. */
int calcmd_write(cJSON *doc, const char *output, err_t *e);
/* The --accept-poor-fit option's help. */
#define CALCMD_ACCEPT_POOR_HELP \
  "keep a fit the quality gate refuses (residual above 100% rms, a regime\n" \
  "with a negative time), marked with a warning ddpsim reports"

/* The option entries every fitting import shares (`ddpcalib import nccl-tests` and `import kineto`):
 * --regimes K (int *), -o FILE (const char **), --accept-poor-fit (int *). Needs fit.h. */
#define CALCMD_FIT_OPTS(regimes, output, accept_poor)                                                        \
  {"regimes", 0, CLI_INT, regimes, "K", "at most K size regimes in the fit, 1..4 (default 3)", CLI_MIN | CLI_MAX, 1, \
   FIT_MAX_REGIMES},                                                                                         \
      {"output", 'o', CLI_STRING, output, "FILE", "profile to write (atomically; required)"},                \
      {"accept-poor-fit", 0, CLI_FLAG, accept_poor, NULL, CALCMD_ACCEPT_POOR_HELP}

void calcmd_print_span(const commfit_span *sp, const char *link_class, double ring_bw_Bps);

/* Bounds of the -n (timed) and -w (warm-up) iteration counts every measuring command takes. */
#define CALCMD_MAX_ITERS 1000000

#endif
