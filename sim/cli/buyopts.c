/* buyopts: the buyer's options shared by predict and sweep (buyopts.h). */
#include "buyopts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "accuracy.h"
#include "cost.h"
#include "data.h"
#include "prices.h"
#include "simopts.h"
#include "sweep.h"
#include "txt.h"

static int parse_optim(const char *s, void *dest) {
  model_optim o;
  if (model_optim_parse(s, &o)) return -1;
  *(int *)dest = (int)o;
  return 0;
}

int buyopts_parse_price(const char *text, double *price, const char **cls) {
  char *end;
  double v = strtod(text, &end);
  if (end != text && !*end) {
    if (!(v > 0) || v > 1e6) return -1;
    *price = v, *cls = NULL;
    return 0;
  }
  if (!prices_class_ok(text)) return -1;
  *price = 0, *cls = text;
  return 0;
}

static int parse_price(const char *s, void *dest) {
  buyopts *b = dest;
  const char *cls;
  if (buyopts_parse_price(s, &b->price, &cls) || (cls && strlen(cls) >= sizeof b->price_class)) return -1;
  snprintf(b->price_class, sizeof b->price_class, "%s", cls ? cls : "");
  return 0;
}

static int parse_prices_file(const char *s, void *dest) {
  buyopts *b = dest;
  if (!*s || strlen(s) >= sizeof b->prices_file) return -1;
  snprintf(b->prices_file, sizeof b->prices_file, "%s", s);
  return 0;
}

int buyopts_price(cli_ctx *x, const buyopts *b, const char *cls, const profile_t *p, budget_job *j, char *note, size_t len) {
  char path[1024];
  if (b->prices_file[0]) snprintf(path, sizeof path, "%s", b->prices_file);
  else snprintf(path, sizeof path, "%s/profiles/prices.tsv", data_dir());
  prices_t *t = NULL;
  err_t e;
  int rc = prices_load(path, &t, &e);
  if (rc) return cli_fail(x, rc, "--price %s: %s", cls, e.msg);
  const price_row *r = prices_find(t, profile_name(p), cls);
  if (!r) {
    char classes[512];
    prices_classes(t, profile_name(p), classes, sizeof classes);
    rc = cli_fail(x, ERR_INPUT, "--price %s: %s has no %s%sprice for profile %s (%s%s); give --price X or add a row", cls, path,
                  strcmp(cls, "auto") ? cls : "", strcmp(cls, "auto") ? " " : "", profile_name(p), classes[0] ? "it has: " : "it has none",
                  classes);
    prices_destroy(t);
    return rc;
  }
  j->price_per_gpu_hour = r->price_per_gpu_hour;
  snprintf(j->currency, sizeof j->currency, "%s", r->currency);
  prices_note(r, note, len);
  j->price_source = note;
  prices_destroy(t);
  return CLI_OK;
}

void buyopts_init(buyopts *b) {
  memset(b, 0, sizeof *b);
  b->interval = 1;
  b->draws = -1; /* not given: BUYOPTS_DRAWS (buyopts_check), unless --no-interval */
  b->level = -1;
}

void buyopts_table(buyopts *b, cli_opt t[BUYOPTS_COUNT]) {
  const cli_opt table[BUYOPTS_COUNT] = {
      {"optimizer", 0, CLI_CUSTOM, &b->optim, "NAME",
       "the optimizer whose state counts in the memory: none, sgd, sgd-momentum,\nadam, adamw, rmsprop, rmsprop-momentum, adagrad "
       "(default: the model file's)",
       .parse = parse_optim, .must = "must be none, sgd, sgd-momentum, adam, adamw, rmsprop, rmsprop-momentum or adagrad"},
      {"allow-oom", 0, CLI_FLAG, &b->allow_oom, NULL,
       "warn instead of refusing a configuration whose memory exceeds the card's"},
      {"samples", 0, CLI_DOUBLE, &b->samples, "N", "samples to train (all GPUs together, a whole number): time to train,\nGPU-hours, cost, energy",
       CLI_MIN_OPEN | CLI_MAX, 0, 1e18},
      {"epochs", 0, CLI_DOUBLE, &b->epochs, "E", "epochs to train (with --dataset-size): samples = E x S, a partial\nepoch's last sample rounded up (at least one sample)", CLI_MIN_OPEN | CLI_MAX, 0, 1e9},
      {"dataset-size", 0, CLI_DOUBLE, &b->dataset_size, "S", "samples in one epoch, a whole number (with --epochs)", CLI_MIN_OPEN | CLI_MAX, 0, 1e15},
      {"price", 0, CLI_CUSTOM, b, "X|auto|CLASS",
       "price of one GPU-hour (any currency): the cost; auto or a class (on-demand,\n...): the price table's example for the profile's card, with its date and\nsource (profiles/prices.tsv: examples to edit)",
       .parse = parse_price, .must = BUYOPTS_PRICE_MUST},
      {"prices", 0, CLI_CUSTOM, b, "FILE", "the price table of --price auto|CLASS (default: the bundled\nprofiles/prices.tsv)",
       .parse = parse_prices_file, .must = "must be a file's path (at most 1023 characters)"},
      {"grid-kgco2-per-kwh", 0, CLI_DOUBLE, &b->grid, "X", "the grid's carbon intensity, kg CO2 per kWh: the CO2",
       CLI_MIN_OPEN | CLI_MAX, 0, 10},
      {"interval", 0, CLI_FLAG, &b->interval_asked, NULL,
       "lo/hi of the main figures (the default): the profile's uncertainty drawn and\nsimulated, with ddpsim's error against published runs (centred on those of the\nsame profile and precision), in quadrature (docs/memory.md, \"How sure\")"},
      {"no-interval", 0, CLI_FLAG, &b->no_interval, NULL, "the nominal figures only: no draws simulated, no lo/hi"},
      {"draws", 0, CLI_INT, &b->draws, "N", "the interval's profiles drawn from the profile's uncertainty (default " CLI_TEXT(BUYOPTS_DRAWS) ")", CLI_MIN | CLI_MAX,
       0, INTERVAL_MAX_DRAWS},
      {"level", 0, CLI_DOUBLE, &b->level, "X", "the interval's level, both parts (default " CLI_TEXT(BUYOPTS_LEVEL) ")",
       CLI_MIN_OPEN | CLI_MAX_OPEN, 0, 1},
      {0}};
  memcpy(t, table, sizeof table);
}

int buyopts_check(cli_ctx *x, buyopts *b) {
  if (b->interval_asked && b->no_interval) return cli_usage(x, "--interval and --no-interval: choose one");
  b->interval = !b->no_interval;
  if (b->no_interval && (b->draws >= 0 || b->level >= 0))
    return cli_usage(x, "--%s shapes the interval: --no-interval leaves none to shape", b->draws >= 0 ? "draws" : "level");
  if (b->draws < 0) b->draws = BUYOPTS_DRAWS;
  if (b->level < 0) b->level = BUYOPTS_LEVEL;
  if ((b->epochs > 0) != (b->dataset_size > 0)) return cli_usage(x, "--epochs and --dataset-size go together");
  if (b->epochs > 0 && b->samples > 0) return cli_usage(x, "--samples and --epochs: choose one");
  /* Samples are whole: a count given is one; a partial epoch's last sample counts whole
   * (budget_samples), and epochs that hold less than one sample train nothing. */
  if (b->samples > 0 && b->samples != floor(b->samples))
    return cli_usage(x, "--samples must be a whole number of samples, got %g", b->samples);
  if (b->dataset_size > 0 && b->dataset_size != floor(b->dataset_size))
    return cli_usage(x, "--dataset-size must be a whole number of samples, got %g", b->dataset_size);
  if (b->epochs > 0 && budget_samples(b->epochs, b->dataset_size) < 1)
    return cli_usage(x, "--epochs %g of --dataset-size %g is %g of one sample: nothing to train (give at least one sample's worth)",
                     b->epochs, b->dataset_size, b->epochs * b->dataset_size);
  if (b->prices_file[0] && !b->price_class[0]) return cli_usage(x, "--prices FILE is the table of --price auto or --price CLASS: give one");
  if ((b->price > 0 || b->price_class[0] || b->grid > 0) && !(b->samples > 0 || b->epochs > 0))
    return cli_usage(x, "--price and --grid-kgco2-per-kwh need the samples to train: --samples N or --epochs E --dataset-size S");
  return CLI_OK;
}

int buyopts_job(const buyopts *b, budget_job *j) {
  memset(j, 0, sizeof *j);
  j->samples = b->samples > 0 ? b->samples : b->epochs > 0 ? budget_samples(b->epochs, b->dataset_size) : 0;
  j->price_per_gpu_hour = b->price;
  j->grid_kgco2_per_kwh = b->grid;
  return j->samples > 0;
}

int buyopts_memory(cli_ctx *x, const buyopts *b, const sim_config *c, memory_parts *m) {
  err_t e;
  int rc = memory_estimate(c, (model_optim)b->optim, m, &e);
  if (rc) return rc == ERR_USAGE ? cli_usage(x, "%s", e.msg) : cli_fail(x, rc, "%s", e.msg);
  if (!memory_oom(m)) return CLI_OK;
  char msg[256];
  memory_oom_message(m, msg, sizeof msg);
  if (!b->allow_oom) return cli_fail(x, ERR_INPUT, "%s (--allow-oom to simulate it anyway)", msg);
  fprintf(stderr, "%s %s: warning: %s\n", x->prog, x->where, msg);
  return CLI_OK;
}

/* The validated error of (profile, precision) from the running program's cache (validate/
 * accuracy.h): *found 1 with *m when the cache has it with the fingerprint of set's inputs, 0 when
 * there is no cache, no such row (stale), or an input of the points cannot be read (the points
 * predicted then say which). The status: ERR_OK, or why the cache could not be read (ERR_IO) or is
 * malformed (ERR_INPUT), with e set. */
static int cached_error(const accuracy_set *set, const char *profile, int prec, int *found, accuracy_error *m, err_t *e) {
  char path[1024];
  struct stat st;
  *found = 0;
  if (data_ratios_path(path, sizeof path) || stat(path, &st) != 0) return ERR_OK;
  unsigned long long fp;
  err_t fe;
  if (accuracy_fingerprint(set, &fp, &fe)) return ERR_OK;
  char *text = txt_read_file(path, NULL);
  if (!text) return err_set(e, ERR_IO, "%s: cannot read: %s", path, strerror(errno));
  *found = accuracy_ratios_lookup(text, path, profile, prec, fp, m, e);
  free(text);
  return *found < 0 ? ERR_INPUT : ERR_OK;
}

void buyopts_draws_free(buyopts_draws *k) {
  for (int i = 0; i < k->n; i++) profile_draws_free(&k->e[i].d);
  free(k->e);
  *k = (buyopts_draws){0};
}

int buyopts_interval_configs(cli_ctx *x, const buyopts *b, const char *profile_arg, const sim_config *c, int jittered,
                             buyopts_draws *drawn, sim_config **cfgs, int *n) {
  *cfgs = NULL;
  *n = 0;
  err_t e;
  int rc, k = 0;
  while (k < drawn->n && !(drawn->e[k].profile == c->profile && drawn->e[k].draws == b->draws)) k++;
  if (k == drawn->n) { /* the profile's document, drawn once for every configuration of it */
    if (drawn->n == drawn->cap) {
      int cap = drawn->cap ? 2 * drawn->cap : 4;
      void *more = realloc(drawn->e, (size_t)cap * sizeof *drawn->e);
      if (!more) return cli_fail(x, ERR_NOMEM, "out of memory");
      drawn->e = more, drawn->cap = cap;
    }
    char path[1024];
    cJSON *doc = NULL;
    if ((rc = simopts_read_profile_doc(x, profile_arg, path, sizeof path, &doc))) return rc;
    sim_config *none = NULL;
    int nn = 0;
    rc = interval_draws(c, doc, path, b->draws, 1, jittered, &drawn->e[k].d, &none, &nn, &e);
    cJSON_Delete(doc);
    free(none);
    if (rc) return cli_fail(x, rc, "%s", e.msg);
    drawn->e[k].profile = c->profile, drawn->e[k].draws = b->draws;
    drawn->n++;
  }
  if ((rc = interval_configs(c, &drawn->e[k].d, jittered, cfgs, n, &e))) return cli_fail(x, rc, "%s", e.msg);
  return CLI_OK;
}

int buyopts_interval(cli_ctx *x, const buyopts *b, const char *profile_arg, const sim_config *c, double nominal_s,
                     int jittered, int jobs, buyopts_validated *known, interval_t *iv) {
  /* The profile part: the drawn profiles simulated in `jobs` processes. */
  buyopts_draws drawn = {0};
  sim_config *cfgs = NULL;
  int n = 0;
  sweep_row *rows = NULL;
  double *t = NULL;
  int rc = buyopts_interval_configs(x, b, profile_arg, c, jittered, &drawn, &cfgs, &n);
  err_t e;
  if (!rc && n > 0 && (!(rows = malloc((size_t)n * sizeof *rows)) || !(t = malloc((size_t)n * sizeof *t))))
    rc = cli_fail(x, ERR_NOMEM, "out of memory");
  sweep_opts so = {.jobs = jobs, .what = SWEEP_ITERATION};
  if (!rc && n > 0 && (rc = sweep_run(cfgs, n, &so, rows, &e))) rc = cli_fail(x, rc, "%s", e.msg);
  for (int k = 0; !rc && k < n; k++) t[k] = rows[k].value[FIELD_ITERATION_S];
  if (!rc) rc = buyopts_interval_finish(x, b, c, nominal_s, jittered, t, n, known, iv);
  free(t);
  free(rows);
  free(cfgs);
  buyopts_draws_free(&drawn);
  return rc;
}

int buyopts_interval_finish(cli_ctx *x, const buyopts *b, const sim_config *c, double nominal_s, int jittered,
                            const double *t, int n, buyopts_validated *known, interval_t *iv) {
  err_t e;
  char path[1024];
  int rc = interval_profile(nominal_s, jittered, t, n, 1, b->level, iv, &e);
  if (rc) return cli_fail(x, rc, "%s", e.msg);
  /* The measured part: the spread of the steps the model's op times were measured over, where this
   * run prices them (sim/cost.h). */
  model_dtype prec = sim_precision(c);
  cost_measured_info mi;
  cost_measured(c, sim_batch(c), prec, &mi);
  if (mi.used) interval_measured(iv, c->model->measured.steps, c->model->measured.step_rel_sd);
  /* The validated part: the published points, predicted once. */
  accuracy_error m = {0};
  double lo = 1, hi = 1;
  for (int k = 0; known && k < known->n; k++)
    if (known->e[k].profile == c->profile && known->e[k].precision == (int)prec) {
      accuracy_error_factors(&known->e[k].m, b->level, &lo, &hi);
      interval_validated(iv, known->e[k].m.points, known->e[k].m.all_points, lo, hi);
      iv->validated_cached = known->e[k].cached;
      return CLI_OK;
    }
  accuracy_set *set = NULL;
  snprintf(path, sizeof path, "%s/validate/published.txt", data_dir());
  struct stat st;
  if (stat(path, &st) != 0 && errno == ENOENT) { /* a data dir of the user's own, without published points */
    interval_validated(iv, 0, 0, 1, 1);
    return CLI_OK;
  }
  if ((rc = accuracy_load(path, &set, &e))) return cli_fail(x, rc, "%s", e.msg);
  int cached = 0;
  rc = cached_error(set, profile_name(c->profile), (int)prec, &cached, &m, &e);
  if (!rc && !cached && !(rc = accuracy_run(set, &e))) accuracy_error_model(set, profile_name(c->profile), (int)prec, NULL, &m);
  accuracy_destroy(set);
  if (rc) return cli_fail(x, rc, "%s", e.msg);
  accuracy_error_factors(&m, b->level, &lo, &hi);
  interval_validated(iv, m.points, m.all_points, lo, hi);
  iv->validated_cached = cached > 0;
  if (known && known->n < (int)(sizeof known->e / sizeof *known->e)) {
    known->e[known->n].profile = c->profile, known->e[known->n].precision = (int)prec;
    known->e[known->n].m = m;
    known->e[known->n].cached = cached > 0;
    known->n++;
  }
  return CLI_OK;
}
