/* compare: one job on several setups, side by side, and the decision's margin (compare.h). */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "profile.h"
#include "strbuf.h"
#include "topo.h"

static int copy_value(const char *key, const char *v, size_t n, char *dst, size_t cap, err_t *e) {
  if (n == 0) return err_set(e, ERR_USAGE, "%s= needs a value", key);
  if (n >= cap) return err_set(e, ERR_USAGE, "%s=: the value is too long", key);
  memcpy(dst, v, n);
  dst[n] = '\0';
  return ERR_OK;
}

static int parse_count(const char *key, const char *v, size_t n, int *dst, err_t *e) {
  char buf[32], *end;
  if (n == 0 || n >= sizeof buf) return err_set(e, ERR_USAGE, "%s= must be an integer from 1 to 1000000", key);
  memcpy(buf, v, n);
  buf[n] = '\0';
  long x = strtol(buf, &end, 10);
  if (*end || end == buf || x < 1 || x > 1000000)
    return err_set(e, ERR_USAGE, "%s= must be an integer from 1 to 1000000, got '%s'", key, buf);
  *dst = (int)x;
  return ERR_OK;
}

/* Whether the key of the item at p (klen characters) is that of an item of text before p: a key
 * given twice is refused, as the last one would otherwise win unseen. */
static int given_before(const char *text, const char *p, size_t klen) {
  for (const char *q = text; q < p;) {
    const char *end = strchr(q, ',');
    if (!strncmp(q, p, klen) && q[klen] == '=') return 1;
    q = end ? end + 1 : p;
  }
  return 0;
}

int compare_setup_parse(const char *text, compare_setup *s, err_t *e) {
  memset(s, 0, sizeof *s);
  s->framework = s->fsdp_reshard = -1;
  const char *p = text;
  if (!*p) return err_set(e, ERR_USAGE, "an empty setup: give topology=T,profile=P,nodes=N");
  while (*p) {
    const char *end = strchr(p, ','), *eq = strchr(p, '=');
    if (!end) end = p + strlen(p);
    if (!eq || eq > end) return err_set(e, ERR_USAGE, "'%.*s' is not KEY=VALUE", (int)(end - p), p);
    size_t klen = (size_t)(eq - p), vlen = (size_t)(end - eq - 1);
    const char *v = eq + 1;
    int rc;
    if (given_before(text, p, klen)) return err_set(e, ERR_USAGE, "%.*s= given twice", (int)klen, p);
#define KEY(k) (klen == strlen(k) && !strncmp(p, k, klen))
    if (KEY("topology")) rc = copy_value("topology", v, vlen, s->topology, sizeof s->topology, e);
    else if (KEY("profile")) rc = copy_value("profile", v, vlen, s->profile, sizeof s->profile, e);
    else if (KEY("name")) rc = copy_value("name", v, vlen, s->name, sizeof s->name, e);
    else if (KEY("price")) rc = copy_value("price", v, vlen, s->price, sizeof s->price, e);
    else if (KEY("nodes")) rc = parse_count("nodes", v, vlen, &s->nodes, e);
    else if (KEY("gpus-per-node")) rc = parse_count("gpus-per-node", v, vlen, &s->gpus_per_node, e);
    else if (KEY("fsdp-replicate")) rc = parse_count("fsdp-replicate", v, vlen, &s->fsdp_replicate, e);
    else if (KEY("framework") || KEY("fsdp-reshard-after-forward")) {
      char word[16] = "";
      int fw = KEY("framework");
      rc = copy_value(fw ? "framework" : "fsdp-reshard-after-forward", v, vlen, word, sizeof word, e);
      int *dst = fw ? &s->framework : &s->fsdp_reshard;
      if (!rc && (*dst = fw ? sim_name_index(sim_framework_names, word) : !strcmp(word, "true") ? 1 : !strcmp(word, "false") ? 0 : -1) < 0)
        rc = err_set(e, ERR_USAGE, fw ? "framework= must be ddp, dp or fsdp, got '%s'" : "fsdp-reshard-after-forward= must be true or false, got '%s'",
                     word);
    } else
      rc = err_set(e, ERR_USAGE,
                   "unknown key '%.*s' (topology, profile, nodes, gpus-per-node, framework, fsdp-reshard-after-forward, fsdp-replicate, price, name)",
                   (int)klen, p);
#undef KEY
    if (rc) return rc;
    p = *end ? end + 1 : end;
  }
  return ERR_OK;
}

int compare_entry_run(compare_entry *x, err_t *e) {
  int rc = predict_run(&x->cfg, &x->p, e);
  if (rc) return rc;
  if ((rc = memory_estimate(&x->cfg, x->optim, &x->mem, e))) goto fail;
  if (x->has_budget) {
    profile_device dev;
    profile_get_device(x->cfg.profile, &dev);
    if ((rc = budget_compute(&x->job, x->p.sim.gpus, x->p.sim.batch, x->p.sim.iteration_s, x->p.sim.compute_s, &dev, &x->budget, e)))
      goto fail;
  }
  if (x->setup.name[0]) snprintf(x->label, sizeof x->label, "%s", x->setup.name);
  else if (x->setup.framework >= 0)
    snprintf(x->label, sizeof x->label, "%.40s x%d %s", x->cfg.topo->name, x->cfg.nodes,
             x->cfg.framework == SIM_FRAMEWORK_FSDP && x->cfg.fsdp_replicate > 1 ? "hsdp" : sim_framework_name(x->cfg.framework));
  else snprintf(x->label, sizeof x->label, "%.40s x%d", x->cfg.topo->name, x->cfg.nodes);
  return ERR_OK;
fail:
  predict_result_free(&x->p);
  return rc;
}

/* What tells setup x apart, one key at a time: its value of key k as text ("" past the last key). */
static const char *const label_keys[] = {"profile", "topology", "nodes", "gpus-per-node", "framework", "price", NULL};

static void label_value(const compare_entry *x, int k, char *buf, size_t len) {
  switch (k) {
  case 0: snprintf(buf, len, "%s", profile_name(x->cfg.profile)); break;
  case 1: snprintf(buf, len, "%s", x->cfg.topo->name); break;
  case 2: snprintf(buf, len, "%d", x->cfg.nodes); break;
  case 3: snprintf(buf, len, "%d", x->p.sim.gpus / (x->cfg.nodes > 0 ? x->cfg.nodes : 1)); break;
  case 4: snprintf(buf, len, "%s", sim_framework_name(x->cfg.framework)); break;
  default: snprintf(buf, len, "%s", x->setup.price); break;
  }
}

void compare_labels_distinct(compare_entry *v, int n) {
  char same[COMPARE_MAX_SETUPS] = {0};
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) same[i] |= i != j && !strcmp(v[i].label, v[j].label);
  char label[COMPARE_MAX_SETUPS][COMPARE_NAME_LEN];
  for (int i = 0; i < n; i++) {
    snprintf(label[i], sizeof label[i], "%s", v[i].label);
    if (!same[i]) continue;
    /* The keys whose values differ among the setups labelled alike, as key=value. */
    strbuf s = {0};
    for (int k = 0; label_keys[k]; k++) {
      char mine[256], other[256];
      int differs = 0;
      label_value(&v[i], k, mine, sizeof mine);
      for (int j = 0; j < n && !differs; j++)
        if (j != i && !strcmp(v[i].label, v[j].label)) label_value(&v[j], k, other, sizeof other), differs = strcmp(mine, other) != 0;
      if (differs) strbuf_printf(&s, "%s%s=%s", s.len ? "," : "", label_keys[k], mine);
    }
    char *what = strbuf_take(&s);
    if (what && *what) snprintf(label[i], sizeof label[i], "%.20s (%.40s)", v[i].label, what);
    free(what);
  }
  /* Setups alike in every key that differs among their group (or whose labels still meet) are
   * told apart by their place on the command line. */
  int again[COMPARE_MAX_SETUPS] = {0};
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) again[i] |= i != j && !strcmp(label[i], label[j]);
  for (int i = 0; i < n; i++)
    if (again[i]) snprintf(label[i], sizeof label[i], "%.30s (setup %d)", v[i].label, i + 1);
  for (int i = 0; i < n; i++) memcpy(v[i].label, label[i], sizeof v[i].label);
}

void compare_entry_free(compare_entry *x) {
  if (x) predict_result_free(&x->p);
}

static field_ctx ctx_of(const compare_entry *x) {
  field_ctx c = {.c = &x->cfg, .p = &x->p, .mem = &x->mem};
  if (x->has_budget) c.job = &x->job, c.budget = &x->budget;
  if (x->has_iv) c.iv = &x->iv;
  return c;
}

/* The time and the cost the margin weighs (compare.h). */
static double time_of(const compare_entry *x) { return x->has_budget ? x->budget.train_s : 1.0 / x->p.samples_per_s; }
static double cost_of(const compare_entry *x, int by_cost) {
  if (by_cost) return x->budget.cost;
  return x->has_budget ? x->budget.gpu_hours : x->p.sim.gpus / x->p.samples_per_s;
}

void compare_margin_of(const compare_entry *v, int a, int b, compare_margin *m) {
  memset(m, 0, sizeof *m);
  double ta = time_of(&v[a]), tb = time_of(&v[b]);
  m->faster = tb < ta ? b : a;
  m->slower = tb < ta ? a : b;
  const compare_entry *f = &v[m->faster], *s = &v[m->slower];
  double tf = time_of(f), ts = time_of(s);
  m->time_saved = (ts - tf) / ts;
  m->by_cost = f->has_budget && s->has_budget && f->budget.has_cost && s->budget.has_cost &&
               strcmp(f->job.currency, s->job.currency) == 0; /* costs in one currency (or both given as numbers) */
  double cf = cost_of(f, m->by_cost), cs = cost_of(s, m->by_cost);
  m->cost_change = (cf - cs) / cs;
  m->within = -1;
  if (f->has_iv && s->has_iv) {
    /* fast / slow = 1 - saved: its factors from the pair (compare.h). */
    m->paired_draws = f->profile_arg && s->profile_arg && strcmp(f->profile_arg, s->profile_arg) == 0;
    m->paired_kind = interval_same_kind(&f->cfg, &s->cfg);
    double lo, hi, r = tf / ts;
    interval_ratio(&s->iv, &f->iv, m->paired_draws, m->paired_kind, &lo, &hi);
    m->saved_lo = 1 - r * hi;
    m->saved_hi = 1 - r * lo;
    m->within = m->saved_lo <= 0;
  }
  const char *what = m->by_cost ? "cost" : "GPU-hours";
  size_t n;
  if (m->time_saved < 0.0005)
    n = (size_t)snprintf(m->text, sizeof m->text, "%s and %s take the same time", f->label, s->label);
  else
    n = (size_t)snprintf(m->text, sizeof m->text, "%s saves %.1f%% of the time", f->label, 100 * m->time_saved);
  /* Paired on both counts with nothing that moves the difference (a profile whose stated
   * uncertainty is of what both setups share): said, lest the zero width read as certainty. */
  if (m->within >= 0 && m->saved_hi - m->saved_lo < 5e-4 && m->paired_draws && m->paired_kind)
    n += (size_t)snprintf(m->text + n, sizeof m->text - n, " (no uncertainty the profile states moves the difference)");
  else if (m->within >= 0)
    n += (size_t)snprintf(m->text + n, sizeof m->text - n, " (%.0f%%: %.1f%% .. %.1f%%)", 100 * f->iv.level, 100 * m->saved_lo,
                          100 * m->saved_hi);
  if (fabs(m->cost_change) < 0.0005) n += (size_t)snprintf(m->text + n, sizeof m->text - n, " at the same %s", what);
  else
    n += (size_t)snprintf(m->text + n, sizeof m->text - n, " for %.1f%% %s %s", 100 * fabs(m->cost_change),
                          m->cost_change > 0 ? "more" : "less", what);
  if (m->within >= 0) n += (size_t)snprintf(m->text + n, sizeof m->text - n, "; within the uncertainty: %s", m->within ? "yes" : "no");
  const compare_entry *both[2] = {f, s};
  for (int k = 0; k < 2; k++)
    if (memory_oom(&both[k]->mem) && n < sizeof m->text)
      n += (size_t)snprintf(m->text + n, sizeof m->text - n, "; %s does not fit its cards' memory", both[k]->label);
}

/* The rows shown side by side, as sweep names them (sim/fields.c), with the table's format. */
static const struct {
  field_id id;
  const char *label, *format; /* format NULL: text; "fits": yes/no */
  double scale;
} rows[] = {
    {FIELD_TOPOLOGY, "topology", NULL, 1},
    {FIELD_PROFILE, "profile", NULL, 1},
    {FIELD_NODES, "nodes", "%.0f", 1},
    {FIELD_GPUS, "GPUs", "%.0f", 1},
    {FIELD_BATCH_PER_GPU, "batch per GPU", "%.0f", 1},
    {FIELD_ITERATION_S, "iteration (s)", "%.4f", 1},
    {FIELD_SAMPLES_PER_S, "samples/s", "%.1f", 1},
    {FIELD_SCALING_EFFICIENCY, "scaling efficiency", "%.3f", 1},
    {FIELD_MEMORY_PEAK_BYTES, "memory peak (GiB)", "%.2f", 1.0 / 1073741824.0},
    {FIELD_FITS, "fits the card", "fits", 1},
    {FIELD_MAX_BATCH_PER_GPU, "largest batch that fits", "%.0f", 1},
    {FIELD_TRAIN_S, "time to train (h)", "%.2f", 1.0 / 3600.0},
    {FIELD_GPU_HOURS, "GPU-hours", "%.1f", 1},
    {FIELD_COST, "cost", "%.2f", 1},
    {FIELD_ENERGY_KWH, "energy (kWh)", "%.1f", 1},
    {FIELD_CO2_KG, "CO2 (kg)", "%.1f", 1},
};
#define NROWS ((int)(sizeof rows / sizeof *rows))

static void lohi(const compare_entry *x, const field *f, double v, double *lo, double *hi) {
  interval_scale(&x->iv, v, f->interval == FIELD_IV_TIME, lo, hi);
}

cJSON *compare_json(const compare_entry *v, int n) {
  cJSON *o = cJSON_CreateObject(), *setups = cJSON_AddArrayToObject(o, "setups"), *dec = cJSON_AddArrayToObject(o, "decisions");
  if (!o || !setups || !dec) goto fail;
  for (int i = 0; i < n; i++) {
    cJSON *s = cJSON_CreateObject();
    if (!s || !cJSON_AddItemToArray(setups, s)) {
      cJSON_Delete(s);
      goto fail;
    }
    field_ctx c = ctx_of(&v[i]);
    cJSON_AddStringToObject(s, "name", v[i].label);
    for (int r = 0; r < NROWS; r++) {
      const field *f = &field_table[rows[r].id];
      const char *col = field_column(f);
      char buf[256];
      double x = field_value(f, &c);
      const char *t = field_text(f, &c, x, buf, sizeof buf);
      if (t) cJSON_AddStringToObject(s, col, t);
      else if (isnan(x)) cJSON_AddNullToObject(s, col);
      else if (f->kind == FIELD_BOOL || rows[r].id == FIELD_FITS) cJSON_AddBoolToObject(s, col, x != 0);
      else cJSON_AddNumberToObject(s, col, x);
      if (v[i].has_iv && f->interval && !isnan(x)) {
        double lo, hi;
        char name[96];
        lohi(&v[i], f, x, &lo, &hi);
        snprintf(name, sizeof name, "%s_lo", col);
        cJSON_AddNumberToObject(s, name, lo);
        snprintf(name, sizeof name, "%s_hi", col);
        cJSON_AddNumberToObject(s, name, hi);
      }
    }
    if (v[i].has_budget && v[i].budget.has_cost) {
      cJSON_AddNumberToObject(s, "price_per_gpu_hour", v[i].job.price_per_gpu_hour);
      if (v[i].job.currency[0]) cJSON_AddStringToObject(s, "currency", v[i].job.currency);
    }
    if (v[i].price_note[0]) cJSON_AddStringToObject(s, "price_source", v[i].price_note);
  }
  for (int i = 1; i < n; i++) {
    compare_margin m;
    compare_margin_of(v, 0, i, &m);
    cJSON *d = cJSON_CreateObject();
    if (!d || !cJSON_AddItemToArray(dec, d)) {
      cJSON_Delete(d);
      goto fail;
    }
    cJSON_AddStringToObject(d, "faster", v[m.faster].label);
    cJSON_AddStringToObject(d, "slower", v[m.slower].label);
    cJSON_AddNumberToObject(d, "time_saved", m.time_saved);
    cJSON_AddStringToObject(d, "cost_basis", m.by_cost ? "cost" : "gpu_hours");
    cJSON_AddNumberToObject(d, "cost_change", m.cost_change);
    if (m.within < 0) cJSON_AddNullToObject(d, "within_uncertainty");
    else {
      cJSON_AddBoolToObject(d, "within_uncertainty", m.within);
      cJSON_AddNumberToObject(d, "time_saved_lo", m.saved_lo);
      cJSON_AddNumberToObject(d, "time_saved_hi", m.saved_hi);
      cJSON_AddBoolToObject(d, "paired_draws", m.paired_draws);
      cJSON_AddBoolToObject(d, "shared_validated_error", m.paired_kind);
    }
    cJSON_AddStringToObject(d, "text", m.text);
  }
  return o;
fail:
  cJSON_Delete(o);
  return NULL;
}

/* One cell of row r for entry x: its text, or "" where not known. */
static void cell(const compare_entry *x, int r, int band, char *buf, size_t len) {
  field_ctx c = ctx_of(x);
  const field *f = &field_table[rows[r].id];
  double v = field_value(f, &c);
  char tb[256];
  const char *t = field_text(f, &c, v, tb, sizeof tb);
  buf[0] = '\0';
  if (band) {
    if (!x->has_iv || !f->interval || isnan(v)) return;
    double lo, hi;
    lohi(x, f, v, &lo, &hi);
    char a[40], b[40];
    snprintf(a, sizeof a, rows[r].format, lo * rows[r].scale);
    snprintf(b, sizeof b, rows[r].format, hi * rows[r].scale);
    snprintf(buf, len, "%s..%s", a, b);
  } else if (t) snprintf(buf, len, "%s", t);
  else if (isnan(v)) return;
  else if (!strcmp(rows[r].format, "fits")) snprintf(buf, len, "%s", v != 0 ? "yes" : "NO");
  else snprintf(buf, len, rows[r].format, v * rows[r].scale);
}

char *compare_table(const compare_entry *v, int n) {
  strbuf s = {0};
  int w = 20;
  for (int i = 0; i < n; i++)
    if ((int)strlen(v[i].label) + 2 > w) w = (int)strlen(v[i].label) + 2;
  strbuf_printf(&s, "%-26s", "");
  for (int i = 0; i < n; i++) strbuf_printf(&s, "%*s", w, v[i].label);
  strbuf_printf(&s, "\n");
  for (int r = 0; r < NROWS; r++)
    for (int band = 0; band < 2; band++) {
      char cells[COMPARE_MAX_SETUPS][128];
      int any = 0;
      for (int i = 0; i < n && i < COMPARE_MAX_SETUPS; i++) {
        cell(&v[i], r, band, cells[i], sizeof cells[i]);
        any |= cells[i][0] != '\0';
      }
      if (!any) continue;
      char label[64];
      snprintf(label, sizeof label, band ? "  interval" : "%s", rows[r].label);
      strbuf_printf(&s, "%-26s", label);
      for (int i = 0; i < n && i < COMPARE_MAX_SETUPS; i++) strbuf_printf(&s, "%*s", w, cells[i][0] ? cells[i] : "-");
      strbuf_printf(&s, "\n");
    }
  for (int i = 0; i < n; i++) {
    if (memory_oom(&v[i].mem)) {
      char msg[256];
      memory_oom_message(&v[i].mem, msg, sizeof msg);
      strbuf_printf(&s, "# %s: %s\n", v[i].label, msg);
    }
    if (v[i].price_note[0]) strbuf_printf(&s, "# %s: price %s\n", v[i].label, v[i].price_note);
  }
  for (int i = 1; i < n; i++) {
    compare_margin m;
    compare_margin_of(v, 0, i, &m);
    strbuf_printf(&s, "%s\n", m.text);
  }
  return strbuf_take(&s);
}
