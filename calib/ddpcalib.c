/* ddpcalib: calibrates this machine and writes the profile ddpsim reads.
 * A thin front end: the table of commands (each in calib/cli/cmd_<name>.c over the option tables of
 * sim/cli/cli.h, declared in calib/cli/calcmd.h); exit 0 ok, 1 failure, 2 misuse, decided by
 * cli_exit alone (sim/err.h's err_exit_code). Commands and flags: docs/calib.md. */
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <string.h>

#include "calcmd.h"
#include "cli.h"

static const calcmd_entry commands[] = {
    {"comm", "all-reduce sweep (MPI between processes, or NCCL between GPUs); fits the link", cmd_comm},
    {"compute", "times the mLSTM kernels, a GEMM grid and elementwise copies; fits the ops", cmd_compute},
    {"h2d", "host-to-device copy bandwidth (CUDA only)", cmd_h2d},
    {"merge", "merges two profiles (the second wins on conflicts)", cmd_merge},
    {"validate", "checks a profile against the schema", cmd_validate},
    {"train", "a real data-parallel training run (DDP buckets over MPI), timed", cmd_train},
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

static void usage_main(FILE *f) {
  fprintf(f,
          "usage: ddpcalib COMMAND [flags]   (ddpcalib COMMAND --help for each)\n"
          "\n"
          "Calibrates this machine with real kernels and real all-reduces, fits cost models, and writes\n"
          "the profile JSON that `ddpsim predict --profile FILE` reads (docs/calib.md, docs/profile.md).\n"
          "\n"
          "commands:\n");
  for (int i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\nexit status: 0 success, 1 runtime failure, 2 usage error\n");
}

/* Under mpirun every rank would repeat a misuse: only rank 0 (or a plain run) reports it. */
static int finish(const cli_ctx *x, int status) {
  if (status == CLI_USAGE && calcmd_quiet()) return cli_exit_code(status);
  return cli_exit(x, status);
}

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  calcmd_set_line(argc, argv);
  cli_ctx x;
  cli_ctx_init(&x, "ddpcalib", NULL);
  if (argc < 2) {
    usage_main(stderr);
    return cli_exit_code(CLI_USAGE);
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    usage_main(stdout);
    return cli_exit_code(CLI_HELP);
  }
  /* Each command parses argv[1..]: its own name stands where the program name was. */
  for (int i = 0; i < NCOMMANDS; i++)
    if (strcmp(name, commands[i].name) == 0) {
      cli_ctx_init(&x, "ddpcalib", name);
      return finish(&x, commands[i].run(&x, argc - 1, argv + 1));
    }
  char known[256] = "";
  for (int i = 0; i < NCOMMANDS; i++)
    snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", commands[i].name);
  return finish(&x, cli_usage(&x, "unknown command '%s' (%s)", name, known));
}
