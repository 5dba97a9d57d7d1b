/* ddpsim: predict how fast a data-parallel (PyTorch DDP) training job runs on many GPUs.
 * A thin front end: the table of commands (each in sim/cli/cmd_<name>.c over the option tables of
 * sim/cli/cli.h); exit 0 ok, 1 failure, 2 misuse, decided by cli_exit alone. */
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "data.h"

static const cmd_entry commands[] = {
    {"predict", "throughput, scaling efficiency and time breakdown for one configuration", cmd_predict},
    {"sweep", "predictions over lists of node counts, bucket caps and topologies", cmd_sweep},
    {"recommend", "the bucket cap to use, from a sweep of caps for one configuration", cmd_recommend},
    {"trace", "the simulated iteration as a Chrome trace (timeline)", cmd_trace},
    {"plan", "what the engine would simulate for one configuration, without running it", cmd_plan},
    {"buckets", "DDP's gradient bucket assignment for a model", cmd_buckets},
    {"genmodel", "write a model file (mlstm, resnet, bert) from its sizes", cmd_genmodel},
    {"validate", "predictions against a real data-parallel run on this machine (ddpcalib train)", cmd_validate},
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

static void usage_main(FILE *f) {
  fprintf(f,
          "usage: ddpsim COMMAND [options]\n"
          "\n"
          "Predicts the throughput of PyTorch DistributedDataParallel training with a SimGrid\n"
          "simulation of every GPU, from a model, a topology and a hardware profile.\n"
          "\n"
          "commands:\n");
  for (int i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n`ddpsim COMMAND --help` describes each. Bundled data: %s\n", data_dir());
}

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  cli_ctx x;
  cli_ctx_init(&x, "ddpsim", NULL);
  if (argc < 2) {
    usage_main(stderr);
    return cli_exit_code(CLI_USAGE);
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    usage_main(stdout);
    return cli_exit_code(CLI_HELP);
  }
  for (int i = 0; i < NCOMMANDS; i++)
    if (strcmp(name, commands[i].name) == 0) {
      cli_ctx_init(&x, "ddpsim", name);
      return cli_exit(&x, commands[i].run(&x, argc - 1, argv + 1));
    }
  char known[256] = "";
  for (int i = 0; i < NCOMMANDS; i++)
    snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", commands[i].name);
  return cli_exit(&x, cli_usage(&x, "unknown command '%s' (%s)", name, known));
}
