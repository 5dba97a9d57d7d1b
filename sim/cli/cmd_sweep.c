/* cmd_sweep: `ddpsim sweep`, predictions over every combination of any scenario options given
 * several values.
 *
 * Any option of the command's tables (the shared scenario options of simopts.c included, so a new
 * one is sweepable as soon as it is there) given a comma list or a range is an axis; the others
 * are fixed. Each combination becomes its own command line, parsed and checked by cli_parse as
 * predict's would be, so a bad value is reported as predict would report it, naming the option.
 * Every combination is built and checked before the first simulation runs; the simulations are
 * the library's (sim/sweep.h), spread over local workers (-j) and MPI ranks (sim/sweep_mpi.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buyopts.h"
#include "cmd.h"
#include "err.h"
#include "out.h"
#include "report.h"
#include "simopts.h"
#include "strbuf.h"
#include "sweep.h"
#include "sweep_mpi.h"

static const char *usage_sweep =
    "usage: ddpsim sweep [predict options, any of them with several values] [-j N] [--csv|--json]\n"
    "\n"
    "Predicts every combination of the options given several values and prints a table, CSV or\n"
    "JSON (columns: docs/cli.md). An option's values are a comma list (--nodes 1,2,4,8), a range\n"
    "FROM..TO (step 1), FROM..TO+STEP or FROM..TOxFACTOR (--nodes 1..64x2, --batch 32..256+32),\n"
    "or for the options whose value is itself a list (--bucket-cap-mb-list, --nccl-algo,\n"
    "--fsdp-units, ...)\n"
    "values separated by ';' (--nccl-algo 'ring;tree;ring,tree'). A flag takes =0,1 (or =off,on):\n"
    "--gradient-as-bucket-view=0,1. The first axis given varies slowest, --bucket-cap-mb always\n"
    "fastest (the best cap of each group is named). -j runs N configurations at once; under\n"
    "mpirun the ranks share the configurations and rank 0 prints them all, in the same order.\n"
    "Every row says its memory per GPU and whether it fits the card; with --samples or --epochs\n"
    "its time to train, GPU-hours, cost and energy, and --max-hours H keeps the rows that finish\n"
    "within H hours (docs/memory.md). Every row's throughput over the first row's (speedup_vs_first)\n"
    "has its paired interval: rows of one profile share its draws. A sweep of more than 10000\n"
    "configurations is refused (exit 2, naming the options whose values multiply) unless\n"
    "--max-configs N allows it; each configuration is a simulation, and its interval (the\n"
    "default) --draws more (--no-interval: none). On a terminal, a sweep that takes more than 3 s\n"
    "shows its progress on stderr (--progress: always).\n"
    "With --framework ddp,fsdp the --fsdp-* options apply to the FSDP rows alone.\n"
    "\n";

#define SWEEP_MAX_AXES 16
#define SWEEP_MAX_CONFIGS 1000000 /* --max-configs' ceiling: the arrays of every combination are allocated at once */
#define SWEEP_DEFAULT_CONFIGS 10000 /* a sweep larger than this is refused unless --max-configs asks for it */
#define SWEEP_MAX_VALUES 10000

typedef struct {
  const cli_opt *opt;
  char name[64];
  int n;
  char **v; /* its values, as text (a flag's: "0" or "1") */
} axis_t;

typedef struct {
  int n; /* argv entries */
  char **argv;
} argv_t;

/* Every loaded input, once per name. */
typedef struct {
  int n;
  struct {
    int kind; /* 0 model, 1 topology, 2 profile */
    char *name;
    void *p;
    int warned; /* a model's simopts_warn_unused was shown */
  } e[3 * 64];
} inputs_cache;

static int cached(cli_ctx *x, inputs_cache *c, int kind, const char *name, void **out) {
  for (int i = 0; i < c->n; i++)
    if (c->e[i].kind == kind && strcmp(c->e[i].name, name) == 0) return *out = c->e[i].p, CLI_OK;
  if (c->n == (int)(sizeof c->e / sizeof *c->e)) return cli_usage(x, "too many different models, topologies and profiles");
  /* Loaded into p, never into *out: on failure *out still holds an earlier combination's input,
   * which the cache owns (destroying it there was a double free). */
  void *p = NULL;
  int rc = kind == 0 ? simopts_load_model(x, name, (model_t **)&p)
         : kind == 1 ? simopts_load_topo(x, name, (topo_t **)&p)
                     : simopts_load_profile(x, name, (profile_t **)&p);
  char *keep = rc ? NULL : strdup(name);
  if (!rc && !keep) rc = cli_fail(x, ERR_NOMEM, "out of memory");
  if (rc) {
    if (p) kind == 0 ? model_destroy(p) : kind == 1 ? topo_destroy(p) : profile_destroy(p);
    return rc;
  }
  c->e[c->n].kind = kind, c->e[c->n].name = keep, c->e[c->n].warned = 0, c->e[c->n++].p = p;
  *out = p;
  return CLI_OK;
}

static void cache_free(inputs_cache *c) {
  for (int i = 0; i < c->n; i++) {
    if (c->e[i].kind == 0) model_destroy(c->e[i].p);
    else if (c->e[i].kind == 1) topo_destroy(c->e[i].p);
    else profile_destroy(c->e[i].p);
    free(c->e[i].name);
  }
  c->n = 0;
}

/* The rows' intervals into ivs[i] (where buys[i].interval): each profile drawn once, and the draws
 * of INTERVAL_ROWS rows at a time simulated as one sweep over `jobs` workers (a sweep of 1,000 rows
 * then forks its workers 16 times, not twice a row). Ticks ipr per row. The status. */
#define INTERVAL_ROWS 64
static int intervals(cli_ctx *x, const inputs_cache *cache, const sim_config *cfgs, const sweep_row *rows, const buyopts *buys,
                     int n, int jobs, buyopts_validated *known, interval_t *ivs, out_progress *ipr, out_ticks *ticks) {
  buyopts_draws drawn = {0};
  int rc = CLI_OK;
  for (int i0 = 0; i0 < n && !rc; i0 += INTERVAL_ROWS) {
    int i1 = i0 + INTERVAL_ROWS < n ? i0 + INTERVAL_ROWS : n, at[INTERVAL_ROWS + 1], nall = 0;
    sim_config *all = NULL;
    sweep_row *dr = NULL;
    double *t = NULL;
    for (int i = i0; i < i1 && !rc; i++) {
      at[i - i0] = nall;
      if (!buys[i].interval) continue;
      const char *name = NULL; /* the profile named as given: its document carries the uncertainty */
      for (int k = 0; k < cache->n && !name; k++)
        if (cache->e[k].kind == 2 && cache->e[k].p == cfgs[i].profile) name = cache->e[k].name;
      sim_config *one = NULL;
      int k = 0;
      int jittered = !isnan(rows[i].value[FIELD_ITERATION_CI_S]);
      if ((rc = buyopts_interval_configs(x, &buys[i], name, &cfgs[i], jittered, &drawn, &one, &k))) break;
      sim_config *more = k ? realloc(all, (size_t)(nall + k) * sizeof *all) : all;
      if (k && !more) rc = cli_fail(x, ERR_NOMEM, "out of memory");
      else if (k) memcpy(more + nall, one, (size_t)k * sizeof *one), all = more, nall += k;
      free(one);
    }
    at[i1 - i0] = nall;
    err_t e;
    sweep_opts so = {.jobs = jobs, .what = SWEEP_ITERATION};
    if (!rc && nall > 0 && (!(dr = malloc((size_t)nall * sizeof *dr)) || !(t = malloc((size_t)nall * sizeof *t))))
      rc = cli_fail(x, ERR_NOMEM, "out of memory");
    if (!rc && nall > 0 && (rc = sweep_run(all, nall, &so, dr, &e))) rc = cli_fail(x, rc, "%s", e.msg);
    for (int k = 0; !rc && k < nall; k++) t[k] = dr[k].value[FIELD_ITERATION_S];
    for (int i = i0; i < i1 && !rc; i++) {
      if (!buys[i].interval) continue;
      const double *v = rows[i].value;
      rc = buyopts_interval_finish(x, &buys[i], &cfgs[i], v[FIELD_ITERATION_S], !isnan(v[FIELD_ITERATION_CI_S]),
                                   t ? t + at[i - i0] : NULL, at[i - i0 + 1] - at[i - i0], known, &ivs[i]);
      if (!rc) out_progress_tick(ipr, ticks, i + 1, n);
    }
    free(t);
    free(dr);
    free(all);
  }
  buyopts_draws_free(&drawn);
  return rc;
}

static int push(char ***v, int *n, const char *s) {
  char **g = realloc(*v, (size_t)(*n + 2) * sizeof **v), *d = strdup(s);
  if (!g || !d) {
    free(d);
    if (g) *v = g;
    return -1;
  }
  *v = g;
  g[(*n)++] = d;
  g[*n] = NULL;
  return 0;
}

static void strings_free(char **v, int n) {
  for (int i = 0; i < n; i++) free(v[i]);
  free(v);
}

/* FROM..TO, FROM..TO+STEP, FROM..TOxFACTOR into values; 0 when text is no range, -1 when it is a
 * bad one (the message in x). */
static int range(cli_ctx *x, const char *opt, const char *text, axis_t *a) {
  const char *dots = strstr(text, "..");
  if (!dots) return 0;
  char head[64], *end;
  if (dots == text || (size_t)(dots - text) >= sizeof head) return 0;
  memcpy(head, text, (size_t)(dots - text));
  head[dots - text] = 0;
  double from = strtod(head, &end), to, step = 1;
  if (*end) return 0; /* "1." would take a dot of ".." */
  to = strtod(dots + 2, &end);
  if (end == dots + 2) return 0;
  int geometric = *end == 'x';
  if (*end == '+' || geometric) {
    const char *s = end + 1;
    step = strtod(s, &end);
    if (end == s || *end) return cli_usage(x, "--%s: bad step in the range '%s'", opt, text), -1;
  } else if (*end) {
    return 0;
  }
  if (!isfinite(from) || !isfinite(to) || to < from || (geometric ? !(step > 1) || !(from > 0) : !(step > 0)))
    return cli_usage(x, "--%s: the range '%s' must go up from FROM to TO by a step > 0 (or a factor > 1 from FROM > 0)", opt, text), -1;
  for (double v = from; v <= to * (1 + 1e-12); v = geometric ? v * step : v + step) {
    char b[32];
    snprintf(b, sizeof b, "%.15g", v);
    if (a->n == SWEEP_MAX_VALUES || push(&a->v, &a->n, b))
      return cli_usage(x, "--%s: the range '%s' has more than %d values", opt, text, SWEEP_MAX_VALUES), -1;
  }
  return 1;
}

/* What separates an axis's values: ';' for the options whose one value is itself a comma list
 * (--nccl-algo 'ring;tree,ring', --fsdp-units 'h.*;h.*,wte'), ',' for the others. */
static char item_sep(const cli_opt *o) {
  return o->arg && (strcmp(o->arg, "LIST") == 0 || strcmp(o->arg, "GLOBS") == 0) ? ';' : ',';
}

/* The values of one option as given: a range, else items separated by sep; a flag's from 0/1/off/on. */
static int values(cli_ctx *x, const cli_opt *o, const char *text, axis_t *a) {
  snprintf(a->name, sizeof a->name, "%s", o->name);
  a->opt = o;
  int r = o->kind == CLI_FLAG ? 0 : range(x, o->name, text, a);
  if (r < 0) return CLI_USAGE;
  if (r > 0) return CLI_OK;
  char sep = item_sep(o);
  for (const char *p = text;;) {
    const char *q = strchr(p, sep);
    size_t len = q ? (size_t)(q - p) : strlen(p);
    char item[512];
    if (len == 0) return cli_usage(x, "--%s has an empty item in '%s'", o->name, text);
    if (len >= sizeof item) return cli_usage(x, "--%s has an item longer than %zu characters", o->name, sizeof item - 1);
    memcpy(item, p, len);
    item[len] = 0;
    if (o->kind == CLI_FLAG) {
      int on = !strcmp(item, "1") || !strcmp(item, "on"), off = !strcmp(item, "0") || !strcmp(item, "off");
      if (!on && !off) return cli_usage(x, "--%s is a flag: as an axis it takes =0,1 (or =off,on), got '%s'", o->name, item);
      snprintf(item, sizeof item, "%d", on);
    }
    if (a->n == SWEEP_MAX_VALUES || push(&a->v, &a->n, item)) return cli_usage(x, "--%s: too many values", o->name);
    if (!q) break;
    p = q + 1;
  }
  return CLI_OK;
}

/* Splits argv into the fixed arguments and the axes. Options that are not found are left fixed:
 * the parse of each combination reports them. */
static int split(cli_ctx *x, const cli_cmd *c, int argc, char **argv, argv_t *fixed, axis_t *ax, int *nax) {
  *nax = 0;
  for (int i = 1; i < argc; i++) {
    const char *t = argv[i];
    if (strcmp(t, "--") == 0) {
      for (; i < argc; i++)
        if (push(&fixed->argv, &fixed->n, argv[i])) return cli_fail(x, ERR_NOMEM, "out of memory");
      break;
    }
    const cli_opt *o = NULL;
    const char *eq = NULL, *val = NULL;
    if (t[0] == '-' && t[1] == '-' && t[2]) {
      eq = strchr(t + 2, '=');
      o = cli_lookup(c, t + 2, eq ? (size_t)(eq - t - 2) : strlen(t + 2));
    }
    int takes = o && o->kind != CLI_FLAG;
    if (o && takes) val = eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : NULL;
    if (o && o->kind == CLI_FLAG && eq) val = eq + 1;
    int several = val && (strchr(val, item_sep(o)) || strstr(val, ".."));
    if (o && o->kind == CLI_FLAG && eq) several = 1; /* --flag=0,1 (or =1 alone) */
    if (!several || o->list) {
      /* Fixed: as given (a value in the next argument goes along). Options taking a list
       * themselves (cli_opt.list) are the command's own and stay as they are. */
      if (push(&fixed->argv, &fixed->n, t)) return cli_fail(x, ERR_NOMEM, "out of memory");
      if (takes && !eq && val && push(&fixed->argv, &fixed->n, argv[++i])) return cli_fail(x, ERR_NOMEM, "out of memory");
      continue;
    }
    if (takes && !eq) i++;
    int k = 0;
    while (k < *nax && ax[k].opt != o) k++;
    if (k < *nax) return cli_usage(x, "--%s is given twice", o->name);
    if (*nax == SWEEP_MAX_AXES) return cli_usage(x, "more than %d options with several values", SWEEP_MAX_AXES);
    memset(&ax[k], 0, sizeof ax[k]);
    (*nax)++;
    int rc = values(x, o, val, &ax[k]);
    if (rc) return rc;
  }
  /* --bucket-cap-mb varies fastest: the best cap of each group is then named. */
  for (int k = 0; k + 1 < *nax; k++)
    if (strcmp(ax[k].name, "bucket-cap-mb") == 0) {
      axis_t a = ax[k];
      memmove(&ax[k], &ax[k + 1], (size_t)(*nax - k - 1) * sizeof *ax);
      ax[*nax - 1] = a;
      break;
    }
  return CLI_OK;
}

/* The number of combinations of the axes into *n, within max (--max-configs). Past it, CLI_USAGE
 * naming the options whose values multiply, their counts and the product, and how to go past it
 * on purpose. */
static int bound(cli_ctx *x, const axis_t *ax, int nax, int max, int *n) {
  double product = 1;
  for (int a = 0; a < nax; a++) product *= ax[a].n;
  if (product <= max) return *n = (int)product, CLI_OK;
  strbuf s = {0};
  for (int a = 0; a < nax; a++)
    if (ax[a].n > 1) strbuf_printf(&s, "%s--%s (%d values)", s.len ? " x " : "", ax[a].name, ax[a].n);
  char *what = strbuf_take(&s);
  const char *axes = what ? what : "the options";
  int rc = product <= SWEEP_MAX_CONFIGS
               ? cli_usage(x,
                           "%s make %.0f configurations, more than the %d a sweep runs unless asked: give fewer values, or "
                           "--max-configs %.0f to run them all (each is a simulation, and its interval --draws more; "
                           "--no-interval: none)",
                           axes, product, max, product)
               : cli_usage(x, "%s make %.0f configurations, more than the %d a sweep can hold: give fewer values", axes, product,
                           SWEEP_MAX_CONFIGS);
  free(what);
  return rc;
}

/* The aligned table: the axes' values, then the main results; the best cap of each group. */
static char *table(const sim_config *cfgs, const sweep_row *rows, const interval_t *ivs, int n, const axis_t *ax, int nax,
                   char **vals) {
  strbuf s = {0};
  strbuf_printf(&s, "#");
  for (int a = 0; a < nax; a++) strbuf_printf(&s, " %-12s", ax[a].name);
  strbuf_printf(&s, " %6s %12s %12s %14s %8s %12s %8s %4s", "gpus", "iteration_s", "samples/s", "tokens/s", "eff_%", "exposed_s",
                "mem_GiB", "fits");
  int budget = n > 0 && !isnan(rows[0].value[FIELD_TRAIN_S]);
  if (budget) strbuf_printf(&s, " %10s %10s %10s", "train_h", "cost", "kWh");
  int paired = n > 0 && !isnan(rows[0].value[FIELD_SPEEDUP_VS_FIRST_LO]);
  char head[64];
  snprintf(head, sizeof head, "vs_first (%.0f%%)", paired ? 100 * ivs[0].level : 0);
  strbuf_printf(&s, " %s\n", paired ? head : "vs_first");
  int capfast = nax > 0 && strcmp(ax[nax - 1].name, "bucket-cap-mb") == 0, group = capfast ? ax[nax - 1].n : 0;
  for (int i = 0; i < n; i++) {
    strbuf_printf(&s, " ");
    for (int a = 0; a < nax; a++) strbuf_printf(&s, " %-12s", vals[i * nax + a]);
    const double *v = rows[i].value, fits = v[FIELD_FITS];
    strbuf_printf(&s, " %6d %12.6f %12.1f %14.0f %8.1f %12.6f %8.2f %4s", (int)v[FIELD_GPUS], v[FIELD_ITERATION_S],
                  v[FIELD_SAMPLES_PER_S], v[FIELD_TOKENS_PER_S], 100.0 * v[FIELD_SCALING_EFFICIENCY], v[FIELD_EXPOSED_COMM_S],
                  v[FIELD_MEMORY_PEAK_BYTES] / (1024.0 * 1024 * 1024), isnan(fits) ? "?" : fits > 0 ? "yes" : "NO");
    if (budget) /* nan: not asked */
      strbuf_printf(&s, " %10.2f %10.2f %10.1f", v[FIELD_TRAIN_S] / 3600, v[FIELD_COST], v[FIELD_ENERGY_KWH]);
    strbuf_printf(&s, " %8.4f", v[FIELD_SPEEDUP_VS_FIRST]);
    if (i == 0) strbuf_printf(&s, " (the reference)");
    else if (!isnan(v[FIELD_SPEEDUP_VS_FIRST_LO]))
      strbuf_printf(&s, " %.4f..%.4f", v[FIELD_SPEEDUP_VS_FIRST_LO], v[FIELD_SPEEDUP_VS_FIRST_HI]);
    strbuf_printf(&s, "\n");
    if (group > 1 && (i + 1) % group == 0) {
      double caps[64], it[64]; /* the first 64 caps of a longer group */
      int g = group > 64 ? 64 : group;
      for (int k = 0; k < g; k++) caps[k] = cfgs[i + 1 - group + k].bucket_cap_mb, it[k] = rows[i + 1 - group + k].value[FIELD_ITERATION_S];
      char *b = report_sweep_best(caps, it, cfgs + i + 1 - group, ivs ? ivs + i + 1 - group : NULL, g);
      strbuf_printf(&s, "%s", b ? b : "");
      free(b);
    }
  }
  return strbuf_take(&s);
}

int cmd_sweep(cli_ctx *x, int argc, char **argv) {
  simopts o;
  simopts_init(&o);
  int csv = 0, json = 0, jobs = 1, show = 0, nodes, max_configs = SWEEP_DEFAULT_CONFIGS;
  double cap;
  cli_opt common[SIMOPTS_COUNT], job[SIMOPTS_JOB_COUNT];
  simopts_table(&o, common);
  simopts_job_table(&nodes, &cap, job);
  const cli_opt tail[] = {{"jobs", 'j', CLI_INT, &jobs, "N", "configurations simulated at once, each in its own process (default 1)",
                           CLI_MIN | CLI_MAX, 1, 1024},
                          {"max-configs", 0, CLI_INT, &max_configs, "N",
                           "the most configurations the sweep may have (default 10000, at most\n1000000)", CLI_MIN | CLI_MAX, 1,
                           SWEEP_MAX_CONFIGS},
                          {"progress", 0, CLI_FLAG, &show, NULL,
                           "a progress line with the time left on stderr (default: when stderr is a\nterminal and the sweep takes more than 3 s)"},
                          {"csv", 0, CLI_FLAG, &csv, NULL, "comma-separated output with a header line (columns: docs/cli.md)"},
                          {"json", 0, CLI_FLAG, &json, NULL, "one JSON object: axes, columns, rows"},
                          {0}};
  buyopts bo;
  buyopts_init(&bo);
  double max_hours = 0;
  cli_opt buy[BUYOPTS_COUNT];
  buyopts_table(&bo, buy);
  const cli_opt own[] = {{"max-hours", 0, CLI_DOUBLE, &max_hours, "H",
                          "keep only the rows whose time to train is at most H hours (needs --samples\nor --epochs)",
                          CLI_MIN_OPEN | CLI_MAX, 0, 1e9},
                         {0}};
  const cli_opt *tables[] = {job, common, tail, buy, own, NULL};
  buyopts *buys = NULL;
  interval_t *ivs = NULL; /* the rows' intervals */
  const cli_cmd c = {.usage = usage_sweep, .tables = tables, .elsewhere = simopts_known};
  argv_t fixed = {0};
  axis_t ax[SWEEP_MAX_AXES];
  int nax = 0, rc, n = 1;
  inputs_cache cache = {0};
  int measured_warned = 0, math_warned = 0; /* simopts_warn_measured, _fp32_math were shown */
  sim_config *cfgs = NULL;
  sweep_row *rows = NULL;
  char **vals = NULL;
  char **held = NULL; /* each combination's --name=value texts: its config keeps pointers into them */
  if (push(&fixed.argv, &fixed.n, argv[0])) return cli_fail(x, ERR_NOMEM, "out of memory");
  if ((rc = split(x, &c, argc, argv, &fixed, ax, &nax))) goto done;
  /* The fixed options alone first: --max-configs bounds what is allocated below. */
  if ((rc = cli_parse(x, &c, fixed.n, fixed.argv, NULL, NULL, stdout)) || (rc = bound(x, ax, nax, max_configs, &n))) goto done;
  int framework_swept = 0, has[SIM_FRAMEWORK_COUNT] = {0}; /* the frameworks swept: each one's flags apply to its rows */
  for (int a = 0; a < nax; a++)
    if (strcmp(ax[a].name, "framework") == 0) {
      framework_swept = 1;
      for (int k = 0; k < ax[a].n; k++)
        for (int f = 0; f < SIM_FRAMEWORK_COUNT; f++) has[f] |= strcmp(ax[a].v[k], sim_framework_name((sim_framework)f)) == 0;
    }
  if (framework_swept && !has[SIM_FRAMEWORK_DDP]) { /* DDP's flags where no row is DDP */
    simopts t = o;
    t.framework = has[SIM_FRAMEWORK_FSDP] ? SIM_FRAMEWORK_FSDP : SIM_FRAMEWORK_DP;
    if ((rc = simopts_check(x, &t)) || (rc = simopts_check_cap(x, &t, cap))) goto done;
  }
  if (framework_swept && !has[SIM_FRAMEWORK_FSDP]) { /* FSDP's where none is FSDP */
    simopts t = o;
    t.framework = has[SIM_FRAMEWORK_DDP] ? SIM_FRAMEWORK_DDP : SIM_FRAMEWORK_DP;
    if ((rc = simopts_check(x, &t))) goto done;
  }
  /* One GPU's measured step is of one job on one card: not of a sweep over what changes the step. */
  static const char *const step_of[] = {"model", "profile", "batch", "precision", "pytorch", NULL};
  for (int a = 0; o.measured_step_s > 0 && a < nax; a++)
    for (int k = 0; step_of[k]; k++)
      if (strcmp(ax[a].name, step_of[k]) == 0) {
        rc = cli_usage(x, "--measured-step-s is one GPU's step of one job: a sweep over --%s gives it to several (sweep them one "
                          "at a time, each with its own step)",
                       step_of[k]);
        goto done;
      }
  cfgs = calloc((size_t)n, sizeof *cfgs);
  rows = calloc((size_t)n, sizeof *rows);
  buys = calloc((size_t)n, sizeof *buys);
  vals = calloc((size_t)n * (size_t)(nax ? nax : 1), sizeof *vals);
  held = calloc((size_t)n * (size_t)(nax ? nax : 1), sizeof *held);
  if (!cfgs || !rows || !vals || !buys || !held) {
    rc = cli_fail(x, ERR_NOMEM, "out of memory");
    goto done;
  }
  /* Every combination's command line, parsed and checked, its inputs loaded, before any runs. */
  for (int i = 0; i < n; i++) {
    char *av[fixed.n + SWEEP_MAX_AXES + 1], opt[600];
    /* The axes' values come first, then the user's fixed options as typed: an option left without
     * its value at the end of the line is then reported as such, never given an axis's text. */
    int ac = 0;
    av[ac++] = fixed.argv[0];
    for (int a = nax - 1, rest = i; a >= 0; a--) {
      const char *v = ax[a].v[rest % ax[a].n];
      vals[i * nax + a] = (char *)v;
      rest /= ax[a].n;
      if (ax[a].opt->kind == CLI_FLAG && *v != '1') continue;
      if (ax[a].opt->kind == CLI_FLAG) snprintf(opt, sizeof opt, "--%s", ax[a].name);
      else snprintf(opt, sizeof opt, "--%s=%s", ax[a].name, v);
      if (!(held[i * nax + a] = strdup(opt))) {
        rc = cli_fail(x, ERR_NOMEM, "out of memory");
        goto done;
      }
      av[ac++] = held[i * nax + a];
    }
    for (int k = 1; k < fixed.n; k++) av[ac++] = fixed.argv[k];
    av[ac] = NULL;
    simopts_init(&o);
    buyopts_init(&bo);
    nodes = 1, cap = 0, max_hours = 0;
    if ((rc = cli_parse(x, &c, ac, av, NULL, NULL, stdout))) goto done;
    if (framework_swept) { /* --framework ddp,fsdp: each framework's knobs are its rows' */
      simopts_own_knobs(&o, &cap);
      for (int a = 0; a < nax; a++) {
        int ddp = 0;
        for (const char *const *k = simopts_ddp_knobs; *k && !ddp; k++) ddp = !strcmp(ax[a].name, *k);
        if (ddp ? o.framework != SIM_FRAMEWORK_DDP : !strncmp(ax[a].name, "fsdp-", 5) && o.framework != SIM_FRAMEWORK_FSDP)
          vals[i * nax + a] = (char *)"-"; /* not this row's */
      }
    }
    if ((rc = simopts_check(x, &o)) || (rc = simopts_check_cap(x, &o, cap)) || (rc = buyopts_check(x, &bo))) goto done;
    buys[i] = bo;
    budget_job bj;
    if (max_hours > 0 && !buyopts_job(&bo, &bj)) {
      rc = cli_usage(x, "--max-hours needs the samples to train: --samples N or --epochs E --dataset-size S");
      goto done;
    }
    if (csv && json) {
      rc = cli_usage(x, "--csv and --json: choose one");
      goto done;
    }
    simopts_inputs in;
    if ((rc = cached(x, &cache, 0, o.model, (void **)&in.model)) || (rc = cached(x, &cache, 1, o.topology, (void **)&in.topo)) ||
        (rc = cached(x, &cache, 2, o.profile, (void **)&in.profile)))
      goto done;
    for (int k = 0; k < cache.n; k++) /* once per model, at its first combination that deserves it */
      if (cache.e[k].p == in.model && !cache.e[k].warned) cache.e[k].warned = simopts_warn_unused(x, &o, in.model);
    simopts_config(&o, &in, &cfgs[i]);
    cfgs[i].nodes = nodes;
    cfgs[i].bucket_cap_mb = cap;
    if (!measured_warned) measured_warned = simopts_warn_measured(x, &cfgs[i]); /* once, at the first that ignores them */
    if (!math_warned) math_warned = simopts_warn_fp32_math(x, &cfgs[i]);       /* once, at the first mispriced */
  }
  out_progress pr = {.x = x, .what = "configurations", .forced = show};
  sweep_opts so = {.jobs = jobs, .what = SWEEP_PREDICT, .progress = out_progress_line, .progress_arg = &pr};
  err_t e;
  int root = 1;
  if (sweep_mpi_launched()) rc = sweep_mpi_run(cfgs, n, &so, rows, &root, &e);
  else rc = sweep_run(cfgs, n, &so, rows, &e);
  if (rc) {
    rc = root ? cli_fail(x, rc, "%s", e.msg) : rc;
    goto done;
  }
  if (!root) goto done; /* rank 0 prints */
  /* The buyer's figures of every row, then --max-hours keeps those that finish in time. */
  int kept = 0;
  buyopts_validated known = {0};
  const profile_t *priced[16];
  int npriced = 0;
  /* The intervals' draws (--draws simulations a row) take longer than the rows themselves: their
   * own progress line. */
  out_progress ipr = {.x = x, .what = "intervals", .forced = show};
  out_ticks ticks = {0};
  if (n > 0 && buys[0].interval) out_progress_tick(&ipr, &ticks, 0, n);
  if (n > 0 && !(ivs = calloc((size_t)n, sizeof *ivs))) {
    rc = cli_fail(x, ERR_NOMEM, "out of memory");
    goto done;
  }
  if ((rc = intervals(x, &cache, cfgs, rows, buys, n, jobs, &known, ivs, &ipr, &ticks))) goto done;
  for (int i = 0; i < n; i++) {
    budget_job bj;
    int has = buyopts_job(&buys[i], &bj);
    char price_note[512];
    if (has && buys[i].price_class[0]) { /* --price auto|CLASS: the row's profile's price, its source said once */
      if ((rc = buyopts_price(x, &buys[i], buys[i].price_class, cfgs[i].profile, &bj, price_note, sizeof price_note)))
        goto done;
      int seen = 0;
      for (int k = 0; k < npriced; k++) seen |= priced[k] == cfgs[i].profile;
      if (!seen && npriced < 16) {
        priced[npriced++] = cfgs[i].profile;
        fprintf(stderr, "%s %s: price of %s: %s\n", x->prog, x->where, profile_name(cfgs[i].profile), price_note);
      }
    }
    if ((rc = sweep_row_buy(&cfgs[i], (model_optim)buys[i].optim, has ? &bj : NULL, &rows[i], &e))) {
      rc = cli_fail(x, rc, "configuration %d: %s", i + 1, e.msg);
      goto done;
    }
    if (buys[i].interval) {
      double *v = rows[i].value;
      v[FIELD_ITERATION_S_LO] = ivs[i].lo_s, v[FIELD_ITERATION_S_HI] = ivs[i].hi_s;
      interval_scale(&ivs[i], v[FIELD_SAMPLES_PER_S], 0, &v[FIELD_SAMPLES_PER_S_LO], &v[FIELD_SAMPLES_PER_S_HI]);
    }
    /* A row that does not fit its card trains nothing: --max-hours leaves it out too. */
    if (max_hours > 0 && (!(rows[i].value[FIELD_TRAIN_S] <= max_hours * 3600) || rows[i].value[FIELD_FITS] == 0)) continue;
    cfgs[kept] = cfgs[i], rows[kept] = rows[i], ivs[kept] = ivs[i];
    for (int a = 0; a < nax; a++) vals[kept * nax + a] = vals[i * nax + a];
    kept++;
  }
  if (kept < n)
    fprintf(stderr, "%s %s: %d of %d configurations fit and finish within %g hours\n", x->prog, x->where, kept, n, max_hours);
  n = kept;
  if (n > 0) sweep_vs_first(cfgs, rows, ivs, n); /* the kept rows over the first one shown */
  /* Columns are named as the JSON of predict names things: bucket_cap_mb for --bucket-cap-mb. */
  char name_buf[SWEEP_MAX_AXES][64];
  const char *names[SWEEP_MAX_AXES];
  for (int a = 0; a < nax; a++) {
    snprintf(name_buf[a], sizeof name_buf[a], "%s", ax[a].name);
    for (char *q = name_buf[a]; *q; q++) *q = *q == '-' ? '_' : *q;
    names[a] = name_buf[a];
  }
  if (json) rc = out_json(x, sweep_json(cfgs, rows, n, names, nax, (const char *const *)vals));
  else if (csv) rc = out_text(x, sweep_csv(cfgs, rows, n, names, nax, (const char *const *)vals));
  else rc = out_text(x, table(cfgs, rows, ivs, n, ax, nax, vals));
done:
  if (sweep_mpi_launched()) sweep_mpi_finish(); /* after rank 0's output: every rank waits for it */
  for (int a = 0; a < nax; a++) strings_free(ax[a].v, ax[a].n);
  strings_free(fixed.argv, fixed.n);
  free(cfgs);
  free(rows);
  free(buys);
  free(ivs);
  free(vals);
  if (held) strings_free(held, n * nax);
  cache_free(&cache);
  return rc;
}
