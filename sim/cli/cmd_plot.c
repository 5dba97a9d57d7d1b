/* cmd_plot: `ddpsim plot KIND -i FILE -o OUT.png|svg`, a plot of sweep, recommend or predict output
 * drawn by gnuplot. The library (sim/plot.h) writes the script; this runs gnuplot on it in a private
 * temporary directory and writes the picture atomically. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "afile.h"
#include "cmd.h"
#include "err.h"
#include "out.h"
#include "plot.h"
#include "txt.h"

static const char *usage_plot =
    "usage: ddpsim plot scaling|caps|breakdown|timeline|pareto -i FILE -o OUT.png|OUT.svg [--script FILE]\n"
    "\n"
    "Draws a plot with gnuplot, PNG or SVG by OUT's extension, from what ddpsim wrote:\n"
    "  scaling    `sweep --csv`: throughput and speedup against GPUs, a line per topology, the ideal\n"
    "  caps       `sweep --csv` or `recommend --json`: throughput (or iteration time) against the\n"
    "             bucket cap, with an uncertainty band where *_lo and *_hi columns are present\n"
    "  breakdown  `sweep --csv`: the iteration's parts stacked per node count\n"
    "  timeline   `predict --json`: one iteration, compute and every bucket's all-reduce\n"
    "  pareto     `sweep --csv` with --samples or --epochs (and --price): cost (or GPU-hours)\n"
    "             against time to train, a point per row, the Pareto front, error bars from the interval\n"
    "Columns are found by name (others are ignored); docs/plots.md lists what each plot needs.\n"
    "gnuplot must be installed (scripts/setup.sh); $DDPSIM_GNUPLOT names another binary.\n"
    "\n";

/* Runs gnuplot on script; 0, or a failure with the message in x. */
static int run_gnuplot(cli_ctx *x, const char *script) {
  const char *gp = getenv("DDPSIM_GNUPLOT");
  if (!gp || !*gp) gp = "gnuplot";
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return cli_fail(x, ERR_IO, "cannot start gnuplot: %s", strerror(errno));
  if (pid == 0) {
    execlp(gp, gp, script, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return cli_fail(x, ERR_IO, "cannot run '%s': is gnuplot installed? (scripts/setup.sh installs it)", gp);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return cli_fail(x, ERR_IO, "gnuplot failed on the plot's script");
  return CLI_OK;
}

int cmd_plot(cli_ctx *x, int argc, char **argv) {
  const char *input = NULL, *output = NULL, *script_out = NULL;
  const cli_opt opts[] = {
      {"input", 'i', CLI_STRING, &input, "FILE", "sweep --csv, recommend --json or predict --json output (required)"},
      {"output", 'o', CLI_STRING, &output, "FILE", "the picture: .png or .svg (required)"},
      {"script", 0, CLI_STRING, &script_out, "FILE", "also write the gnuplot script (its data inline)"},
      {0}};
  const cli_opt *tables[] = {opts, NULL};
  const cli_cmd c = {.usage = usage_plot, .tables = tables, .max_args = 1};
  char *args[1];
  int nargs = 0, rc = cli_parse(x, &c, argc, argv, args, &nargs, stdout);
  if (rc) return rc;
  int kind = -1;
  for (int k = 0; nargs == 1 && plot_kind_names[k]; k++)
    if (!strcmp(args[0], plot_kind_names[k])) kind = k;
  if (kind < 0) return cli_usage(x, "which plot: scaling, caps, breakdown, timeline or pareto");
  if (!input || !output) return cli_usage(x, "-i FILE and -o FILE are required");
  err_t e;
  size_t len;
  char *text = txt_read_file(input, &len), *script = NULL, *shown = NULL, *picture = NULL;
  if (!text) return cli_fail(x, ERR_IO, "%s: cannot read: %s", input, strerror(errno));
  char dir[] = "/tmp/ddpsim-plot-XXXXXX", tmp_out[64], tmp_script[64];
  const char *dot = strrchr(output, '.');
  snprintf(tmp_out, sizeof tmp_out, "%s/plot%s", dir, dot && strlen(dot) < 8 ? dot : "");
  int series;
  /* The script checks the output's extension (ERR_USAGE) before anything is run. */
  if ((rc = plot_script((plot_kind)kind, text, input, output, &shown, &series, &e))) {
    free(text);
    return rc == ERR_USAGE ? cli_usage(x, "%s", e.msg) : cli_fail(x, rc, "%s", e.msg);
  }
  /* Both outputs writable before anything is drawn: a bad --script path must not leave the picture
   * written and the command failed. */
  if ((rc = afile_check(output, &e)) || (script_out && (rc = afile_check(script_out, &e)))) {
    rc = cli_fail(x, rc, "%s", e.msg);
    goto done;
  }
  /* Neither output may replace the input it is drawn from. */
  const char *in_flag[] = {"-i"}, *in[] = {input};
  if ((rc = afile_not_input("-o", output, in_flag, in, 1, &e)) || (rc = afile_not_input("--script", script_out, in_flag, in, 1, &e))) {
    rc = cli_fail(x, rc, "%s", e.msg);
    goto done;
  }
  if (!mkdtemp(dir)) {
    rc = cli_fail(x, ERR_IO, "cannot make a temporary directory: %s", strerror(errno));
    goto done;
  }
  snprintf(tmp_out, sizeof tmp_out, "%s/plot%s", dir, dot);
  snprintf(tmp_script, sizeof tmp_script, "%s/plot.gp", dir);
  if ((rc = plot_script((plot_kind)kind, text, input, tmp_out, &script, &series, &e))) {
    rc = cli_fail(x, rc, "%s", e.msg);
    goto clean;
  }
  if ((rc = afile_write(tmp_script, script, strlen(script), &e))) {
    rc = cli_fail(x, rc, "%s", e.msg);
    goto clean;
  }
  if ((rc = run_gnuplot(x, tmp_script))) goto clean;
  if (!(picture = txt_read_file(tmp_out, &len)) || len == 0) {
    rc = cli_fail(x, ERR_IO, "gnuplot wrote no picture");
    goto clean;
  }
  if ((rc = afile_write(output, picture, len, &e)) || (script_out && (rc = afile_write(script_out, shown, strlen(shown), &e)))) {
    rc = cli_fail(x, rc, "%s", e.msg);
    goto clean;
  }
  printf("wrote %s (%d series)\n", output, series);
clean:
  unlink(tmp_out);
  unlink(tmp_script);
  rmdir(dir);
done:
  free(picture);
  free(script);
  free(shown);
  free(text);
  return rc;
}
