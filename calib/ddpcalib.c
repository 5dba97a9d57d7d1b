/* ddpcalib: calibrates this machine and writes the profile ddpsim reads.
 * A thin front end: the table of commands (each in calib/cli/cmd_<name>.c over the option tables of
 * common/cli.h, declared in calib/cli/calcmd.h); exit 0 ok, 1 failure, 2 misuse, decided by
 * cli_exit alone (common/err.h's err_exit_code). Commands and flags: docs/calib.md. */
#include <gsl/gsl_errno.h>
#include <stdio.h>

#include "calcmd.h"
#include "cli.h"

static const cli_command commands[] = {
    {"comm", "all-reduce sweep (MPI between processes, or NCCL between GPUs); fits the link", cmd_comm},
    {"compute", "times the mLSTM kernels, a GEMM grid and elementwise copies; fits the ops", cmd_compute},
    {"h2d", "host-to-device copy bandwidth (CUDA only)", cmd_h2d},
    {"host", "the framework's host cost per op and the host's noise (installed PyTorch)", cmd_host},
    {"machine", "this machine in one step: one complete profile and its topology (CPU, MPI)", cmd_machine},
    {"cluster", "a cluster's profile: one profile's compute, each link class named explicitly", cmd_cluster},
    {"import", "a profile part from nccl-tests logs or profiler traces (import nccl-tests|kineto ...)", cmd_import},
    {"merge", "merges two profiles (the second wins on conflicts)", cmd_merge},
    {"validate", "checks a profile against the schema", cmd_validate},
    {"train", "a real data-parallel training run (DDP buckets over MPI), timed", cmd_train},
};

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  calcmd_set_line(argc, argv);
  /* Under mpirun every rank would repeat a misuse: only rank 0 (or a plain run) reports it. */
  const cli_program p = {
      .prog = "ddpcalib",
      .intro = "usage: ddpcalib COMMAND [flags]   (ddpcalib COMMAND --help for each)\n"
               "\n"
               "Calibrates this machine with real kernels and real all-reduces, fits cost models, and writes\n"
               "the profile JSON that `ddpsim predict --profile FILE` reads (docs/calib.md, docs/profile.md).\n",
      .outro = "exit status: 0 success, 1 runtime failure, 2 usage error\n",
      .commands = commands,
      .ncommands = (int)(sizeof commands / sizeof *commands),
      .quiet = calcmd_quiet,
  };
  return cli_main(&p, argc, argv);
}
