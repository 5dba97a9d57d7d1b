/* cmd_validate: `ddpsim validate`, the front end of the validation driver (validate/validate.h).
 * Exit 0 ok, 1 failure (or an error above --max-error), 2 misuse. docs/validation.md. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "simopts.h"
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"
#include "cmd.h"
#include "out.h"
#include "validate.h"

static const char *usage_validate =
    "usage: ddpsim validate [--ddpcalib PATH] [--mpirun PATH] [--workdir DIR] [--profile FILE]\n"
    "                       [--hidden H] [--embed E] [--vocab V] [--seq T] [--batch B]\n"
    "                       [--nprocs LIST] [--bucket-cap-mb LIST] [--first-bucket-mb Y]\n"
    "                       [--modes LIST] [-n ITERS] [-w WARMUPS] [--repeats R]\n"
    "                       [--optimizer adam|sgd] [--no-rebuilt] [--ewise kernels|memcpy]\n"
    "                       [--max-drift F] [--drift-retries N] [--accept-poor-fit]\n"
    "                       [--max-error F]\n"
    "                       [--json] [--json-out FILE]\n"
    "\n"
    "Checks ddpsim's predictions against a real data-parallel training run on this machine:\n"
    "calibrates it (ddpcalib compute and, under mpirun -np 2, ddpcalib comm, CPU backend),\n"
    "describes it as N processes on one host, and for each configuration predicts the\n"
    "iteration with ddpsim and runs `mpirun -np N ddpcalib train` with the same model, batch,\n"
    "buckets and mode. Prints predicted and measured iteration times, their relative error,\n"
    "the run-to-run noise, and the same for every bucket's all-reduce.\n"
    "\n";

/* What the command line gives beside validate_opts. */
typedef struct {
  cli_list nprocs, caps, modes;
  double first_mb, max_err;
  int json, no_rebuilt, optimizer, ewise;
  long hidden, embed, vocab, seq, batch;
  const char *workdir, *json_out, *ddpcalib;
} val_args;

static const char *const optimizers[] = {"adam", "sgd", NULL}, *const ewises[] = {"kernels", "memcpy", NULL};

static int parse_args(cli_ctx *x, int argc, char **argv, validate_opts *o, val_args *a) {
  const cli_opt t[] = {
      {"ddpcalib", 0, CLI_STRING, &a->ddpcalib, "PATH", "the ddpcalib binary (default: ../calib/ddpcalib next to ddpsim's\nbuild directory)"},
      {"mpirun", 0, CLI_STRING, &o->mpirun, "PATH", "mpirun to launch with (default mpirun; run as root, Open MPI\nneeds OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)"},
      {"workdir", 0, CLI_STRING, &a->workdir, "DIR", "where profiles and every command's output are kept\n(default: a new /tmp/ddpsim-validate.XXXXXX)"},
      {"profile", 0, CLI_STRING, &o->profile, "FILE", "use this profile instead of calibrating"},
      {"hidden", 0, CLI_LONG, &a->hidden, "H", "the mLSTM's hidden size (default 256)", CLI_MIN | CLI_MAX, 1, 1 << 16},
      {"embed", 0, CLI_LONG, &a->embed, "E", "its embedding size (default 64)", CLI_MIN | CLI_MAX, 1, 1 << 16},
      {"vocab", 0, CLI_LONG, &a->vocab, "V", "its vocabulary (default 256)", CLI_MIN | CLI_MAX, 1, 256},
      {"seq", 0, CLI_LONG, &a->seq, "T", "its sequence length (default 8)", CLI_MIN | CLI_MAX, 1, 1 << 16},
      {"batch", 0, CLI_LONG, &a->batch, "B", "batch per process (default 4)", CLI_MIN | CLI_MAX, 1, 1 << 16},
      {"nprocs", 0, CLI_INT, &a->nprocs, "LIST", "process counts (default " VALIDATE_NPROCS "); one process runs ddp at the largest\ncap only (its buckets are copied but not exchanged)", CLI_MIN | CLI_MAX, 1, 64, .list = 16},
      {"bucket-cap-mb", 0, CLI_DOUBLE, &a->caps, "LIST", "bucket caps for ddp (default " VALIDATE_CAPS_MB ")", CLI_MIN | CLI_MAX, SIM_MIN_BUCKET_MB, SIM_MAX_BUCKET_MB, .list = 32, .must = SIM_BUCKET_MB_MUST},
      {"first-bucket-mb", 0, CLI_DOUBLE, &a->first_mb, "Y", "first bucket cap (default: equal to each cap)", CLI_MIN | CLI_MAX, SIM_MIN_BUCKET_MB, SIM_MAX_BUCKET_MB, .must = SIM_BUCKET_MB_MUST},
      {"modes", 0, CLI_ENUM, &a->modes, "LIST", "ddp, flat or both (default ddp,flat)", .names = sim_mode_names, .list = 2},
      {"iters", 'n', CLI_INT, &o->iters, "ITERS", "timed iterations of each real run (default 30)", CLI_MIN | CLI_MAX, 1, 100000},
      {"warmups", 'w', CLI_INT, &o->warmups, "WARMUPS", "warm-up iterations of each real run (default 5)", CLI_MIN | CLI_MAX, 0, 100000},
      {"repeats", 0, CLI_INT, &o->repeats, "R", "real runs per configuration, for the noise (default 1)", CLI_MIN | CLI_MAX, 1, 100},
      {"optimizer", 0, CLI_ENUM, &a->optimizer, "adam|sgd", "the optimizer of the real run and of the model (default adam,\nas in the bundled mLSTM model files)", .names = optimizers},
      {"no-rebuilt", 0, CLI_FLAG, &a->no_rebuilt, NULL, "construction-time buckets (default: rebuilt, DDP's steady state)"},
      {"ewise", 0, CLI_ENUM, &a->ewise, "kernels|memcpy", "elementwise op costs: derived from the calibration's timed\nmLSTM phases minus their GEMMs (default), or ddpcalib's memcpy table", .names = ewises},
      {"max-drift", 0, CLI_DOUBLE, &o->max_drift, "F", "after each repeat's real runs the compute calibration runs again;\nthe drift is the change of the 1-process predicted iteration\nbetween the two calibrations ((after - before) / before). A repeat\nwhose |drift| exceeds F (a fraction, default 0.10) measured a\nmachine that changed speed under it and is redone; 0 reports the\ndrift without redoing. Not done with --profile", CLI_MIN, 0, .must = "must be a fraction >= 0 (0: no redo)"},
      {"drift-retries", 0, CLI_INT, &o->drift_retries, "N", "redo a drifting repeat at most N times (0-10, default 2); if every\nattempt drifted, the last is kept and marked DRIFTED", CLI_MIN | CLI_MAX, 0, VALIDATE_MAX_DRIFT_RETRIES},
      {"accept-poor-fit", 0, CLI_FLAG, &o->accept_poor_fit, NULL, "keep a calibration that ddpcalib's quality gate refuses (a noisy\nfit on a busy machine), marked with a warning in the predictions,\ninstead of failing (passed to ddpcalib compute and comm)"},
      {"max-error", 0, CLI_DOUBLE, &a->max_err, "F", "exit 1 if any configuration's |relative error| exceeds F", CLI_MIN_OPEN, 0, .must = "must be a positive fraction"},
      {"json", 0, CLI_FLAG, &a->json, NULL, "print one JSON object: rows, drift_check, median_abs_error,\nmax_abs_error"},
      {"json-out", 0, CLI_STRING, &a->json_out, "FILE", "also write that JSON object to FILE"},
      {0}};
  const cli_opt *tables[] = {t, NULL};
  const cli_cmd c = {.usage = usage_validate, .tables = tables};
  return cli_parse(x, &c, argc, argv, NULL, NULL, stdout);
}

/* The configurations: every process count in every mode (validate_set_configs). */
static int configs(cli_ctx *x, const val_args *a, validate_opts *o) {
  int ddp = 0, flat = 0;
  for (int i = 0; i < a->modes.n; i++) ddp |= a->modes.i[i] == SIM_MODE_DDP, flat |= a->modes.i[i] == SIM_MODE_FLAT;
  err_t e;
  if (validate_set_configs(o, a->nprocs.i, a->nprocs.n, a->caps.d, a->caps.n, ddp, flat, a->first_mb, &e))
    return cli_usage(x, "%s", e.msg);
  return CLI_OK;
}

/* ddpcalib (beside ddpsim when installed, else in the build tree, unless given) and the work directory, into path and wd. */
static int locate(cli_ctx *x, const val_args *a, char *path, size_t len, char *wd, size_t wdlen) {
  if (a->ddpcalib) {
    snprintf(path, len, "%s", a->ddpcalib);
  } else {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return cli_fail(x, ERR_IO, "cannot find ddpsim's own path; pass --ddpcalib PATH");
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash) *slash = 0;
    snprintf(path, len, "%s/ddpcalib", self); /* installed: beside ddpsim */
    if (access(path, X_OK) != 0) snprintf(path, len, "%s/../calib/ddpcalib", self); /* the build tree */
  }
  if (access(path, X_OK) != 0)
    return cli_fail(x, ERR_INPUT, "ddpcalib not found at '%s': build the ddpcalib target (cmake --build) or pass --ddpcalib PATH", path);
  if (a->workdir) {
    if (mkdir(a->workdir, 0755) != 0 && errno != EEXIST) return cli_fail(x, ERR_IO, "%s: %s", a->workdir, strerror(errno));
    snprintf(wd, wdlen, "%s", a->workdir);
  } else {
    snprintf(wd, wdlen, "/tmp/ddpsim-validate.XXXXXX");
    if (!mkdtemp(wd)) return cli_fail(x, ERR_IO, "cannot create a work directory: %s", strerror(errno));
  }
  return CLI_OK;
}

static void progress(const char *line, void *user) {
  (void)user;
  fprintf(stderr, "# %s\n", line);
}

/* The report (JSON or table), the JSON file, and the --max-error verdict. */
static int report(cli_ctx *x, const val_args *a, const validate_opts *o, const validate_report *r) {
  int rc = a->json ? out_json(x, validate_json(o, r)) : out_text(x, validate_table(o, r));
  if (!rc && a->json_out) {
    cJSON *j = validate_json(o, r);
    char *s = j ? cJSON_Print(j) : NULL;
    cJSON_Delete(j);
    char *text = s ? malloc(strlen(s) + 2) : NULL;
    if (text) sprintf(text, "%s\n", s);
    free(s);
    rc = text ? out_write_atomic(x, a->json_out, text) : out_text(x, NULL);
    free(text);
    if (rc) return rc;
  }
  if (!rc && a->max_err > 0 && !(r->max_abs_err <= a->max_err))
    rc = cli_fail(x, ERR_INPUT, "the largest |relative error| of the iteration time, %.1f%%, exceeds --max-error %.1f%%",
                  r->max_abs_err * 100, a->max_err * 100);
  return rc;
}

int cmd_validate(cli_ctx *x, int argc, char **argv) {
  validate_opts o;
  validate_opts_defaults(&o);
  val_args a = {.nprocs.text = VALIDATE_NPROCS, .caps.text = VALIDATE_CAPS_MB, .modes.text = "ddp,flat", .hidden = o.hidden,
                .embed = o.embed, .vocab = o.vocab, .seq = o.seq, .batch = o.batch, .optimizer = o.optimizer_sgd,
                .ewise = o.ewise_memcpy};
  int rc = parse_args(x, argc, argv, &o, &a);
  if (!rc) rc = configs(x, &a, &o);
  if (rc) return rc;
  o.hidden = a.hidden, o.embed = a.embed, o.vocab = a.vocab, o.seq = a.seq, o.batch = a.batch;
  o.optimizer_sgd = a.optimizer, o.ewise_memcpy = a.ewise;
  if (a.no_rebuilt) o.rebuilt = 0;
  char ddpcalib[PATH_MAX + 32], wd[PATH_MAX];
  err_t e;
  /* --json-out before the runs (minutes): writable, and not the profile or ddpcalib it uses. */
  const char *in_flags[] = {"--profile", "--ddpcalib"}, *in[] = {o.profile, a.ddpcalib};
  if (a.json_out && ((rc = afile_check(a.json_out, &e)) || (rc = afile_not_input("--json-out", a.json_out, in_flags, in, 2, &e))))
    return cli_fail(x, rc, "%s", e.msg);
  if ((rc = locate(x, &a, ddpcalib, sizeof ddpcalib, wd, sizeof wd))) return rc;
  o.ddpcalib = ddpcalib;
  o.workdir = wd;
  fprintf(stderr, "# ddpsim validate: %d configuration(s); commands' output in %s\n", o.nconfigs, wd);
  validate_report r;
  if ((rc = validate_run(&o, progress, NULL, &r, &e))) return cli_fail(x, rc, "%s", e.msg);
  rc = report(x, &a, &o, &r);
  validate_report_free(&r);
  return rc;
}
