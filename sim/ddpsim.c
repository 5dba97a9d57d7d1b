/* ddpsim: predict how fast a data-parallel (PyTorch DDP) training job runs on many GPUs.
 * A thin front end: the table of commands (each in sim/cli/cmd_<name>.c over the option tables of
 * common/cli.h); exit 0 ok, 1 failure, 2 misuse, decided by cli_exit alone. */
#include <gsl/gsl_errno.h>
#include <limits.h>
#include <stdio.h>

#include "cli.h"
#include "cmd.h"
#include "data.h"
#include "engine.h"
#include "sweep_mpi.h"

static const cli_command commands[] = {
    {"predict", "throughput, scaling efficiency and time breakdown for one configuration", cmd_predict},
    {"compare", "one job on two or more setups (topology, profile, nodes) side by side, and the margin", cmd_compare},
    {"sweep", "predictions over every combination of any options given several values", cmd_sweep},
    {"recommend", "the bucket cap to use, robust to the profile's uncertainty, and the knobs that help", cmd_recommend},
    {"trace", "the simulated iteration as a Chrome trace (timeline)", cmd_trace},
    {"plot", "plots of sweep, recommend and predict output, drawn by gnuplot (PNG, SVG)", cmd_plot},
    {"plan", "what the engine would simulate for one configuration, without running it", cmd_plan},
    {"buckets", "DDP's gradient bucket assignment for a model", cmd_buckets},
    {"genmodel", "write a model file (mlstm, resnet, bert, gpt) from its sizes", cmd_genmodel},
    {"validate", "predictions against a real data-parallel run on this machine (ddpcalib train)", cmd_validate},
    {"accuracy", "predictions against published real-run figures (validate/published.txt)", cmd_accuracy},
};

/* Under mpirun, rank 0 alone reports a misuse (every rank parses the same line). */
static int quiet(void) { return sweep_mpi_env_rank() != 0; }

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  char outro[2600], events[PATH_MAX + 64];
  snprintf(outro, sizeof outro, "`ddpsim COMMAND --help` describes each. Bundled data: %s\nEvents engine (loaded when a simulation plays events): %s\n",
           data_dir(), engine_events_path(events, sizeof events));
  const cli_program p = {
      .prog = "ddpsim",
      .intro = "usage: ddpsim COMMAND [options]\n"
               "\n"
               "Predicts the throughput of PyTorch DistributedDataParallel training with a SimGrid\n"
               "simulation of every GPU, from a model, a topology and a hardware profile.\n",
      .outro = outro,
      .commands = commands,
      .ncommands = (int)(sizeof commands / sizeof *commands),
      .quiet = quiet,
  };
  return cli_main(&p, argc, argv);
}
