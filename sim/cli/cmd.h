/* cmd: ddpsim's commands, one file each (sim/cli/cmd_<name>.c); sim/ddpsim.c lists them for cli_main.
 *
 * A command gets argv from its own name on and a cli_ctx for its messages; it returns a status
 * (cli.h: CLI_OK, CLI_HELP, CLI_USAGE, or a library's failure code with the message in the
 * context), which main turns into the exit code with cli_exit, the one place that does. */
#ifndef DDPSIM_CMD_H
#define DDPSIM_CMD_H

#include "cli.h"

int cmd_predict(cli_ctx *x, int argc, char **argv);   /* predict.c */
int cmd_sweep(cli_ctx *x, int argc, char **argv);     /* sweep.c */
int cmd_recommend(cli_ctx *x, int argc, char **argv); /* recommend.c */
int cmd_trace(cli_ctx *x, int argc, char **argv);     /* trace.c */
int cmd_buckets(cli_ctx *x, int argc, char **argv);   /* buckets.c */
int cmd_genmodel(cli_ctx *x, int argc, char **argv);  /* genmodel.c */
int cmd_validate(cli_ctx *x, int argc, char **argv);  /* validate.c */
int cmd_plan(cli_ctx *x, int argc, char **argv);      /* plan.c */
int cmd_plot(cli_ctx *x, int argc, char **argv);      /* plot.c */
int cmd_accuracy(cli_ctx *x, int argc, char **argv);  /* accuracy.c */
int cmd_compare(cli_ctx *x, int argc, char **argv);   /* compare.c */

/* predict and trace: the same options and simulation; trace (trace_only) writes the Chrome trace
 * to trace_file and prints no report. predict.c. */
int cmd_predict_run(cli_ctx *x, int argc, char **argv, int trace_only);

#endif
