/* cmd_validate: `ddpsim validate`, the front end of validate.c. Exit 0 ok, 1 failure (or an error
 * above --max-error), 2 misuse. docs/validation.md. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "validate.h"

int cmd_validate(int argc, char **argv);

static void usage_validate(FILE *f) {
  fprintf(f,
          "usage: ddpsim validate [--ddpcalib PATH] [--mpirun PATH] [--workdir DIR] [--profile FILE]\n"
          "                       [--hidden H] [--embed E] [--vocab V] [--seq T] [--batch B]\n"
          "                       [--nprocs LIST] [--bucket-cap-mb LIST] [--first-bucket-mb Y]\n"
          "                       [--modes LIST] [-n ITERS] [-w WARMUPS] [--repeats R]\n"
          "                       [--optimizer adam|sgd] [--no-rebuilt] [--ewise kernels|memcpy]\n"
          "                       [--max-drift F] [--drift-retries N] [--max-error F]\n"
          "                       [--json] [--json-out FILE]\n"
          "\n"
          "Checks ddpsim's predictions against a real data-parallel training run on this machine:\n"
          "calibrates it (ddpcalib compute and, under mpirun -np 2, ddpcalib comm, CPU backend),\n"
          "describes it as N processes on one host, and for each configuration predicts the\n"
          "iteration with ddpsim and runs `mpirun -np N ddpcalib train` with the same model, batch,\n"
          "buckets and mode. Prints predicted and measured iteration times, their relative error,\n"
          "the run-to-run noise, and the same for every bucket's all-reduce.\n"
          "\n"
          "  --ddpcalib PATH      the ddpcalib binary (default: ../calib/ddpcalib next to ddpsim's\n"
          "                       build directory)\n"
          "  --mpirun PATH        mpirun to launch with (default mpirun; run as root, Open MPI\n"
          "                       needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)\n"
          "  --workdir DIR        where profiles and every command's output are kept\n"
          "                       (default: a new /tmp/ddpsim-validate.XXXXXX)\n"
          "  --profile FILE       use this profile instead of calibrating\n"
          "  --hidden, --embed, --vocab, --seq, --batch   the mLSTM (default 256, 64, 256, 8, 4;\n"
          "                       batch per process)\n"
          "  --nprocs LIST        process counts (default 1,2); one process runs ddp at the largest\n"
          "                       cap only (its buckets are copied but not exchanged)\n"
          "  --bucket-cap-mb LIST bucket caps for ddp (default 0.05,0.25,1,4,25)\n"
          "  --first-bucket-mb Y  first bucket cap (default: equal to each cap)\n"
          "  --modes LIST         ddp, flat or both (default ddp,flat)\n"
          "  -n ITERS, -w WARMUPS timed and warm-up iterations of each real run (default 30, 5)\n"
          "  --repeats R          real runs per configuration, for the noise (default 1)\n"
          "  --optimizer adam|sgd the optimizer of the real run and of the model (default adam,\n"
          "                       as in the bundled mLSTM model files)\n"
          "  --no-rebuilt         construction-time buckets (default: rebuilt, DDP's steady state)\n"
          "  --ewise kernels|memcpy  elementwise op costs: derived from the calibration's timed\n"
          "                       mLSTM phases minus their GEMMs (default), or ddpcalib's memcpy table\n"
          "  --max-drift F        after each repeat's real runs the compute calibration runs again;\n"
          "                       the drift is the change of the 1-process predicted iteration\n"
          "                       between the two calibrations ((after - before) / before). A repeat\n"
          "                       whose |drift| exceeds F (a fraction, default 0.10) measured a\n"
          "                       machine that changed speed under it and is redone; 0 reports the\n"
          "                       drift without redoing. Not done with --profile\n"
          "  --drift-retries N    redo a drifting repeat at most N times (0-10, default 2); if every\n"
          "                       attempt drifted, the last is kept and marked DRIFTED\n"
          "  --max-error F        exit 1 if any configuration's |relative error| exceeds F\n"
          "  --json               print one JSON object: rows, drift_check, median_abs_error,\n"
          "                       max_abs_error\n"
          "  --json-out FILE      also write that JSON object to FILE\n");
}

static int misuse(const char *fmt, const char *arg) {
  fprintf(stderr, "ddpsim validate: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(see 'ddpsim validate --help')\n");
  return 2;
}

static int pos_long(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (!*s || *end || errno || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static int pos_double(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (!*s || *end || !isfinite(v) || v <= 0) return -1;
  *out = v;
  return 0;
}

static int nonneg_double(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (!*s || *end || !isfinite(v) || v < 0) return -1;
  *out = v;
  return 0;
}

static void progress(const char *line, void *user) {
  (void)user;
  fprintf(stderr, "# %s\n", line);
}

int cmd_validate(int argc, char **argv) {
  validate_opts o;
  validate_opts_defaults(&o);
  const char *nprocs_s = "1,2", *caps_s = "0.05,0.25,1,4,25", *modes_s = "ddp,flat", *workdir = NULL;
  double first_mb = 0, max_err = 0;
  int json = 0;
  const char *json_out = NULL;
  char ddpcalib[PATH_MAX + 32] = "";
  enum {
    O_CALIB = 256, O_MPIRUN, O_WORK, O_PROFILE, O_H, O_E, O_V, O_T, O_B, O_NP, O_CAP, O_FIRST, O_MODES, O_REP,
    O_OPT, O_NOREB, O_MAXERR, O_JSON, O_HELP, O_EWISE, O_JSONOUT, O_MAXDRIFT, O_DRIFTRET
  };
  static const struct option opts[] = {
      {"ddpcalib", required_argument, 0, O_CALIB}, {"mpirun", required_argument, 0, O_MPIRUN},
      {"workdir", required_argument, 0, O_WORK},   {"profile", required_argument, 0, O_PROFILE},
      {"hidden", required_argument, 0, O_H},       {"embed", required_argument, 0, O_E},
      {"vocab", required_argument, 0, O_V},        {"seq", required_argument, 0, O_T},
      {"batch", required_argument, 0, O_B},        {"nprocs", required_argument, 0, O_NP},
      {"bucket-cap-mb", required_argument, 0, O_CAP}, {"first-bucket-mb", required_argument, 0, O_FIRST},
      {"modes", required_argument, 0, O_MODES},    {"repeats", required_argument, 0, O_REP},
      {"optimizer", required_argument, 0, O_OPT},  {"no-rebuilt", no_argument, 0, O_NOREB},
      {"max-error", required_argument, 0, O_MAXERR}, {"json", no_argument, 0, O_JSON},
      {"help", no_argument, 0, O_HELP},            {"ewise", required_argument, 0, O_EWISE},
      {"json-out", required_argument, 0, O_JSONOUT}, {"max-drift", required_argument, 0, O_MAXDRIFT},
      {"drift-retries", required_argument, 0, O_DRIFTRET},
      {0, 0, 0, 0}};
  optind = 1;
  opterr = 0;
  for (;;) {
    int c = getopt_long(argc, argv, ":n:w:", opts, NULL);
    if (c == -1) break;
    long v;
    switch (c) {
    case O_HELP: usage_validate(stdout); return 0;
    case O_CALIB: snprintf(ddpcalib, sizeof ddpcalib, "%s", optarg); break;
    case O_MPIRUN: o.mpirun = optarg; break;
    case O_WORK: workdir = optarg; break;
    case O_PROFILE: o.profile = optarg; break;
    case O_H: case O_E: case O_V: case O_T: case O_B:
      if (pos_long(optarg, 1, c == O_V ? 256 : 1L << 16, &v)) return misuse("sizes must be positive integers (vocab <= 256), got '%s'", optarg);
      if (c == O_H) o.hidden = v;
      if (c == O_E) o.embed = v;
      if (c == O_V) o.vocab = v;
      if (c == O_T) o.seq = v;
      if (c == O_B) o.batch = v;
      break;
    case O_NP: nprocs_s = optarg; break;
    case O_CAP: caps_s = optarg; break;
    case O_MODES: modes_s = optarg; break;
    case O_FIRST:
      if (pos_double(optarg, &first_mb)) return misuse("--first-bucket-mb must be a positive number, got '%s'", optarg);
      break;
    case 'n':
      if (pos_long(optarg, 1, 100000, &v)) return misuse("-n must be an integer from 1 to 100000, got '%s'", optarg);
      o.iters = (int)v;
      break;
    case 'w':
      if (pos_long(optarg, 0, 100000, &v)) return misuse("-w must be an integer from 0 to 100000, got '%s'", optarg);
      o.warmups = (int)v;
      break;
    case O_REP:
      if (pos_long(optarg, 1, 100, &v)) return misuse("--repeats must be an integer from 1 to 100, got '%s'", optarg);
      o.repeats = (int)v;
      break;
    case O_OPT:
      if (strcmp(optarg, "adam") == 0) o.optimizer_sgd = 0;
      else if (strcmp(optarg, "sgd") == 0) o.optimizer_sgd = 1;
      else return misuse("--optimizer must be adam or sgd, got '%s'", optarg);
      break;
    case O_NOREB: o.rebuilt = 0; break;
    case O_EWISE:
      if (strcmp(optarg, "kernels") == 0) o.ewise_memcpy = 0;
      else if (strcmp(optarg, "memcpy") == 0) o.ewise_memcpy = 1;
      else return misuse("--ewise must be kernels or memcpy, got '%s'", optarg);
      break;
    case O_MAXERR:
      if (pos_double(optarg, &max_err)) return misuse("--max-error must be a positive fraction, got '%s'", optarg);
      break;
    case O_MAXDRIFT:
      if (nonneg_double(optarg, &o.max_drift)) return misuse("--max-drift must be a fraction >= 0 (0: no redo), got '%s'", optarg);
      break;
    case O_DRIFTRET:
      if (pos_long(optarg, 0, VALIDATE_MAX_DRIFT_RETRIES, &v))
        return misuse("--drift-retries must be an integer from 0 to 10, got '%s'", optarg);
      o.drift_retries = (int)v;
      break;
    case O_JSON: json = 1; break;
    case O_JSONOUT: json_out = optarg; break;
    default: return misuse(c == ':' ? "option '%s' needs a value" : "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return misuse("unexpected argument '%s'", argv[optind]);

  /* The configuration list. */
  char buf[1024];
  int nprocs[16], nnp = 0, ddp = 0, flat = 0, ncap = 0;
  double caps[32];
  snprintf(buf, sizeof buf, "%s", nprocs_s);
  for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
    long v;
    if (nnp == 16 || pos_long(t, 1, 64, &v)) return misuse("--nprocs: '%s' must list process counts from 1 to 64", nprocs_s);
    nprocs[nnp++] = (int)v;
  }
  snprintf(buf, sizeof buf, "%s", caps_s);
  for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv))
    if (ncap == 32 || pos_double(t, &caps[ncap++])) return misuse("--bucket-cap-mb: '%s' must list positive numbers", caps_s);
  snprintf(buf, sizeof buf, "%s", modes_s);
  for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
    if (strcmp(t, "ddp") == 0) ddp = 1;
    else if (strcmp(t, "flat") == 0) flat = 1;
    else return misuse("--modes: '%s' must list ddp and/or flat", modes_s);
  }
  if (!nnp || (!ddp && !flat) || (ddp && !ncap)) return misuse("%s", "empty list of process counts, modes or caps");
  double maxcap = 0;
  for (int i = 0; i < ncap; i++) maxcap = fmax(maxcap, caps[i]);
  o.nconfigs = 0;
  for (int p = 0; p < nnp; p++) {
    for (int i = 0; ddp && i < ncap; i++) {
      if (nprocs[p] == 1 && caps[i] != maxcap) continue;
      if (o.nconfigs == VALIDATE_MAX_CONFIGS) return misuse("%s", "too many configurations");
      o.configs[o.nconfigs++] = (validate_config){nprocs[p], SIM_MODE_DDP, caps[i], first_mb > 0 ? first_mb : caps[i]};
    }
    if (flat) {
      if (o.nconfigs == VALIDATE_MAX_CONFIGS) return misuse("%s", "too many configurations");
      o.configs[o.nconfigs++] = (validate_config){nprocs[p], SIM_MODE_FLAT, 0, 0};
    }
  }

  /* ddpcalib: next to ddpsim's build directory unless given. */
  if (!ddpcalib[0]) {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
      fprintf(stderr, "ddpsim validate: cannot find ddpsim's own path; pass --ddpcalib PATH\n");
      return 1;
    }
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash) *slash = 0;
    snprintf(ddpcalib, sizeof ddpcalib, "%s/../calib/ddpcalib", self);
  }
  if (access(ddpcalib, X_OK) != 0) {
    fprintf(stderr, "ddpsim validate: ddpcalib not found at '%s': build the ddpcalib target (cmake --build) or pass "
                    "--ddpcalib PATH\n", ddpcalib);
    return 1;
  }
  o.ddpcalib = ddpcalib;
  char wd[PATH_MAX];
  if (workdir) {
    if (mkdir(workdir, 0755) != 0 && errno != EEXIST) {
      fprintf(stderr, "ddpsim validate: %s: %s\n", workdir, strerror(errno));
      return 1;
    }
    snprintf(wd, sizeof wd, "%s", workdir);
  } else {
    snprintf(wd, sizeof wd, "/tmp/ddpsim-validate.XXXXXX");
    if (!mkdtemp(wd)) {
      fprintf(stderr, "ddpsim validate: cannot create a work directory: %s\n", strerror(errno));
      return 1;
    }
  }
  o.workdir = wd;
  fprintf(stderr, "# ddpsim validate: %d configuration(s); commands' output in %s\n", o.nconfigs, wd);

  validate_report r;
  err_t e;
  if (validate_run(&o, progress, NULL, &r, &e)) {
    fprintf(stderr, "ddpsim validate: %s\n", e.msg);
    return 1;
  }
  int status = 0;
  if (json) {
    cJSON *j = validate_json(&o, &r);
    char *s = j ? cJSON_Print(j) : NULL;
    if (s) printf("%s\n", s);
    else status = 1;
    free(s);
    cJSON_Delete(j);
  } else {
    char *s = validate_table(&o, &r);
    if (s) fputs(s, stdout);
    else status = 1;
    free(s);
  }
  if (status) fprintf(stderr, "ddpsim validate: out of memory while formatting the report\n");
  if (!status && json_out) {
    cJSON *j = validate_json(&o, &r);
    char *s = j ? cJSON_Print(j) : NULL;
    FILE *f = s ? fopen(json_out, "w") : NULL;
    if (!f || fputs(s, f) < 0 || fputc('\n', f) < 0) status = 1;
    if (f && fclose(f) != 0) status = 1;
    if (status) fprintf(stderr, "ddpsim validate: %s: cannot write the JSON report\n", json_out);
    free(s);
    cJSON_Delete(j);
  }
  if (!status && max_err > 0 && !(r.max_abs_err <= max_err)) {
    fprintf(stderr, "ddpsim validate: the largest |relative error| of the iteration time, %.1f%%, exceeds --max-error %.1f%%\n",
            r.max_abs_err * 100, max_err * 100);
    status = 1;
  }
  validate_report_free(&r);
  return status;
}
