#include "plot.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "reducer.h"
#include "strbuf.h"

const char *const plot_kind_names[] = {"scaling", "caps", "breakdown", "timeline", "pareto", NULL};

/* A table of text cells with named columns: a CSV, or a JSON array of objects. */
typedef struct {
  int ncol, nrow;
  char **col;   /* (ncol) */
  char **cell;  /* (nrow x ncol), NULL where a row has no value */
  int *line;    /* (nrow) each row's line in a CSV file; 0 for a JSON row */
} table;

static void table_free(table *t) {
  for (int i = 0; i < t->ncol; i++) free(t->col[i]);
  for (long i = 0; i < (long)t->nrow * t->ncol; i++) free(t->cell[i]);
  free(t->col);
  free(t->cell);
  free(t->line);
  memset(t, 0, sizeof *t);
}

static int col_of(const table *t, const char *name) {
  for (int i = 0; i < t->ncol; i++)
    if (!strcmp(t->col[i], name)) return i;
  return -1;
}

static const char *cell(const table *t, int r, int c) { return c < 0 ? NULL : t->cell[(long)r * t->ncol + c]; }

/* The number in cell (r, c); NAN when absent or not a number. */
static double num(const table *t, int r, int c) {
  const char *s = cell(t, r, c);
  char *end;
  if (!s || !*s) return NAN;
  double v = strtod(s, &end);
  return *end ? NAN : v;
}

static int table_add_row(table *t, int line) {
  char **g = realloc(t->cell, (size_t)(t->nrow + 1) * (size_t)t->ncol * sizeof *g);
  if (!g) return -1;
  t->cell = g;
  int *l = realloc(t->line, (size_t)(t->nrow + 1) * sizeof *l);
  if (!l) return -1;
  t->line = l;
  l[t->nrow] = line;
  memset(g + (long)t->nrow * t->ncol, 0, (size_t)t->ncol * sizeof *g);
  t->nrow++;
  return 0;
}

/* A CSV with a header line; '#' lines and blank lines are skipped; no quoting (ddpsim writes none). */
static int table_csv(const char *text, const char *origin, table *t, err_t *e) {
  int line = 0;
  const char *p = text;
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    line++;
    char *l = strndup(p, len), *save = NULL;
    p += len + (nl ? 1 : 0);
    if (!l) return err_set(e, ERR_NOMEM, "out of memory");
    if (len && l[len - 1] == '\r') l[len - 1] = '\0';
    if (!l[0] || l[0] == '#') {
      free(l);
      continue;
    }
    if (!t->col) {
      int n = 1;
      for (char *c = l; *c; c++) n += *c == ',';
      t->col = calloc((size_t)n, sizeof *t->col);
      if (!t->col) {
        free(l);
        return err_set(e, ERR_NOMEM, "out of memory");
      }
      for (char *f = strtok_r(l, ",", &save); f; f = strtok_r(NULL, ",", &save)) t->col[t->ncol++] = strdup(f);
      free(l);
      if (t->ncol != n) return err_set(e, ERR_INPUT, "%s:%d: an empty column name in the header", origin, line);
      continue;
    }
    if (table_add_row(t, line)) {
      free(l);
      return err_set(e, ERR_NOMEM, "out of memory");
    }
    int k = 0;
    char *s = l;
    for (;;) {
      char *comma = strchr(s, ',');
      if (comma) *comma = '\0';
      if (k >= t->ncol) {
        free(l);
        return err_set(e, ERR_INPUT, "%s:%d: more fields than the header's %d", origin, line, t->ncol);
      }
      t->cell[(long)(t->nrow - 1) * t->ncol + k++] = strdup(s);
      if (!comma) break;
      s = comma + 1;
    }
    free(l);
    if (k != t->ncol) return err_set(e, ERR_INPUT, "%s:%d: %d fields, the header has %d", origin, line, k, t->ncol);
  }
  if (!t->col) return err_set(e, ERR_INPUT, "%s: empty: no header line", origin);
  return ERR_OK;
}

/* The scenario a plot's title names: these columns (or top-level JSON fields), in this order. */
static const char *const scenario_cols[] = {"model", "batch_per_gpu", "precision", "profile", "pytorch"};
static const char *const scenario_fmt[] = {"%s", "batch %s per GPU", "%s", "profile %s", "PyTorch %s"};
#define NSCENARIO 5

/* A JSON array of objects (recommend's `caps`): the first object's keys are the columns; `extra`
 * names top-level fields copied into every row (the configuration's topology and nodes, and the
 * scenario's fields). */
static int table_json(const cJSON *arr, const cJSON *top, const char *origin, table *t, err_t *e) {
  static const char *const extra[2 + NSCENARIO] = {"topology", "nodes", "model", "batch_per_gpu", "precision", "profile",
                                                   "pytorch"};
  const cJSON *first = cJSON_GetArrayItem(arr, 0);
  if (!cJSON_IsObject(first)) return err_set(e, ERR_INPUT, "%s: caps: an array of objects expected", origin);
  int n = cJSON_GetArraySize(first) + 2 + NSCENARIO;
  if (!(t->col = calloc((size_t)n, sizeof *t->col))) return err_set(e, ERR_NOMEM, "out of memory");
  for (const cJSON *k = first->child; k; k = k->next) t->col[t->ncol++] = strdup(k->string);
  for (int i = 0; i < 2 + NSCENARIO; i++)
    if (cJSON_GetObjectItemCaseSensitive(top, extra[i]) && col_of(t, extra[i]) < 0) t->col[t->ncol++] = strdup(extra[i]);
  const cJSON *row;
  cJSON_ArrayForEach(row, arr) {
    if (table_add_row(t, 0)) return err_set(e, ERR_NOMEM, "out of memory");
    for (int c = 0; c < t->ncol; c++) {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, t->col[c]);
      if (!v) v = cJSON_GetObjectItemCaseSensitive(top, t->col[c]);
      char buf[64];
      if (cJSON_IsNumber(v)) snprintf(buf, sizeof buf, "%.17g", v->valuedouble);
      else if (cJSON_IsString(v)) snprintf(buf, sizeof buf, "%s", v->valuestring);
      else continue;
      t->cell[(long)(t->nrow - 1) * t->ncol + c] = strdup(buf);
    }
  }
  return ERR_OK;
}

/* The parts of an iteration (sim/scenario.h: they add up to iteration_s), as sweep's columns name
 * them, and as the breakdown plot's legend does. */
static const char *const parts[] = {"loading_s", "transfer_s", "buffer_broadcast_s", "compute_s", "exposed_comm_s",
                                    "straggler_wait_s"};
static const char *const part_titles[] = {"loading", "host-to-device copy", "buffer broadcast", "compute",
                                          "exposed communication", "waiting for stragglers"};
#define NPARTS 6

/* A row's parts are parts of its iteration: none, and not their sum, longer than its iteration_s
 * (sweep writes 10 digits: 1e-6 of rounding). */
static int table_parts_check(const table *t, const char *origin, err_t *e) {
  int ci = col_of(t, "iteration_s");
  for (int r = 0; ci >= 0 && r < t->nrow; r++) {
    double it = num(t, r, ci), sum = 0;
    if (isnan(it)) continue;
    char at[32]; /* the row: a CSV's line, a JSON array's index */
    if (t->line[r]) snprintf(at, sizeof at, ":%d:", t->line[r]);
    else snprintf(at, sizeof at, ": caps[%d].", r);
    for (int i = 0; i < NPARTS; i++) {
      int c = col_of(t, parts[i]);
      double v = num(t, r, c);
      if (isnan(v)) continue;
      sum += v;
      if (v > it * (1 + 1e-6))
        return err_set(e, ERR_INPUT, "%s%s%s: '%s' is longer than the iteration (iteration_s %s)", origin, at, parts[i], cell(t, r, c),
                       cell(t, r, ci));
    }
    if (sum > it * (1 + 1e-6))
      return err_set(e, ERR_INPUT, "%s%sstraggler_wait_s: the parts (loading_s to straggler_wait_s) add up to %g s, more than iteration_s %s",
                     origin, at, sum, cell(t, r, ci));
  }
  return ERR_OK;
}

/* Every cell of a column the plots know must hold what ddpsim writes there: a value that cannot be
 * (inf, a negative time, 0 GPUs) is refused as the loaders refuse one, `origin:LINE:COLUMN` (CSV)
 * or `origin: caps[ROW].COLUMN` (JSON), never drawn. */
static int table_check(const table *t, const char *origin, err_t *e) {
  for (int c = 0; c < t->ncol; c++) {
    field_range k = field_range_of(t->col[c]);
    if (k == FIELD_ANY) continue;
    for (int r = 0; r < t->nrow; r++) {
      const char *text = cell(t, r, c), *must;
      if (!text || !*text) continue;
      char *end;
      double v = strtod(text, &end);
      if (*end) v = NAN;
      if (field_range_ok(k, v, &must)) continue;
      if (t->line[r]) return err_set(e, ERR_INPUT, "%s:%d:%s: '%s' must be %s", origin, t->line[r], t->col[c], text, must);
      return err_set(e, ERR_INPUT, "%s: caps[%d].%s: '%s' must be %s", origin, r, t->col[c], text, must);
    }
  }
  return table_parts_check(t, origin, e);
}

/* Whether JSON value v of field `name` is a number in its range; *must what it must be. */
static int json_ok(const cJSON *v, const char *name, const char **must) {
  return field_range_ok(field_range_of(name), cJSON_IsNumber(v) ? v->valuedouble : NAN, must);
}

/* The time a timeline's collectives are measured in: the iteration they come from (predict's
 * buckets_iteration_s, DDP's and FSDP's), else the mean iteration; *what names it. */
static double timeline_iteration(const cJSON *j, const char **what) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "buckets_iteration_s");
  *what = cJSON_IsNumber(v) ? "buckets_iteration_s" : "iteration_s";
  return cJSON_IsNumber(v) ? v->valuedouble : cJSON_GetObjectItemCaseSensitive(j, "iteration_s")->valuedouble;
}

/* One collective's times (a bucket's ready, start and end; an FSDP collective's start and end):
 * numbers >= 0, in order, none past the iteration they come from (more than rounding: predict
 * writes 15 digits), as sim/scenario.h promises. `arr` and `row` name it. */
static int timeline_coll_check(const cJSON *o, const char *const *names, int n, double it, const char *itname, const char *arr,
                               int row, const char *origin, err_t *e) {
  const char *must;
  double prev = 0;
  for (int i = 0; i < n; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, names[i]);
    if (!v) continue;
    if (!json_ok(v, names[i], &must)) return err_set(e, ERR_INPUT, "%s: %s[%d].%s must be %s", origin, arr, row, names[i], must);
    double x = v->valuedouble;
    if (x > it * (1 + 1e-9))
      return err_set(e, ERR_INPUT, "%s: %s[%d].%s: %g s is past the iteration it belongs to (%s %g s)", origin, arr, row, names[i], x,
                     itname, it);
    if (x < prev * (1 - 1e-9))
      return err_set(e, ERR_INPUT, "%s: %s[%d].%s: %g s is before its %s (%g s)", origin, arr, row, names[i], x, names[i - 1], prev);
    prev = x;
  }
  return ERR_OK;
}

/* The same for predict --json's fields the timeline draws: its iteration (> 0) and phases (>= 0,
 * together no longer than the iteration), each bucket's and FSDP collective's times. */
static int timeline_check(const cJSON *j, const char *const *fields, int nfields, const char *origin, err_t *e) {
  static const char *const iters[] = {"iteration_s", "buckets_iteration_s"};
  static const char *const bucket_fields[] = {"ready_s", "comm_start_s", "comm_end_s"};
  static const char *const fsdp_fields[] = {"start_s", "end_s"};
  const char *must;
  for (int i = 0; i < 2; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, iters[i]);
    if ((v || !i) && !json_ok(v, iters[i], &must)) return err_set(e, ERR_INPUT, "%s: %s must be %s", origin, iters[i], must);
  }
  double it = cJSON_GetObjectItemCaseSensitive(j, "iteration_s")->valuedouble, sum = 0;
  for (int i = 0; i < nfields; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, fields[i]);
    if (v && !json_ok(v, fields[i], &must))
      return err_set(e, ERR_INPUT, "%s: %s must be %s", origin, fields[i], must);
    if (v) sum += v->valuedouble;
    if (v && v->valuedouble > it * (1 + 1e-9))
      return err_set(e, ERR_INPUT, "%s: %s: %g s is longer than the iteration (iteration_s %g s)", origin, fields[i], v->valuedouble, it);
  }
  /* the phases are parts of the iteration: laid end to end they fit in it */
  if (sum > it * (1 + 1e-9))
    return err_set(e, ERR_INPUT, "%s: the phases (%s, ...) add up to %g s, more than the iteration (iteration_s %g s)", origin, fields[0],
                   sum, it);
  const char *itname;
  double bit = timeline_iteration(j, &itname);
  int r = 0, rc;
  const cJSON *b;
  cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(j, "buckets")) {
    if ((rc = timeline_coll_check(b, bucket_fields, 3, bit, itname, "buckets", r++, origin, e))) return rc;
  }
  r = 0;
  cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(j, "fsdp_collectives")) {
    if ((rc = timeline_coll_check(b, fsdp_fields, 2, bit, itname, "fsdp_collectives", r++, origin, e))) return rc;
  }
  return ERR_OK;
}

static int need(const table *t, const char *name, const char *origin, const char *plot, err_t *e) {
  if (col_of(t, name) >= 0) return ERR_OK;
  return err_set(e, ERR_INPUT, "%s: no '%s' column, which the %s plot needs (docs/plots.md)", origin, name, plot);
}

/* The terminal for out_path, by extension. */
static int terminal(strbuf *s, const char *out_path, err_t *e) {
  const char *dot = strrchr(out_path, '.');
  if (dot && !strcmp(dot, ".png")) strbuf_printf(s, "set terminal pngcairo size 960,600 enhanced font 'sans,10'\n");
  else if (dot && !strcmp(dot, ".svg")) strbuf_printf(s, "set terminal svg size 960,600 enhanced font 'sans,10'\n");
  else return err_set(e, ERR_USAGE, "%s: the plot's file must end in .png or .svg", out_path);
  strbuf_printf(s, "set output '");
  for (const char *c = out_path; *c; c++) strbuf_printf(s, *c == '\'' ? "''" : "%c", *c);
  strbuf_printf(s, "'\nset key top left box opaque\nset grid\n");
  return ERR_OK;
}

/* A gnuplot string: single-quoted, quotes doubled. */
static void quoted(strbuf *s, const char *text) {
  strbuf_printf(s, "'");
  for (const char *c = text; *c; c++) strbuf_printf(s, *c == '\'' ? "''" : "%c", *c);
  strbuf_printf(s, "'");
}

/* Distinct values of column c (or one group "" when c < 0), in order of first appearance. */
static int groups(const table *t, int c, const char **out, int max) {
  int n = 0;
  for (int r = 0; r < t->nrow; r++) {
    const char *v = c < 0 ? "" : cell(t, r, c) ? cell(t, r, c) : "";
    int seen = 0;
    for (int i = 0; i < n && !seen; i++) seen = !strcmp(out[i], v);
    if (!seen && n < max) out[n++] = v;
  }
  return n;
}

#define MAX_GROUPS 32

/* The scenario line of a title: "resnet50, batch 64 per GPU, fp16, profile v100-dgx1v, PyTorch
 * 2.5", from the table's columns of those names or (t NULL) j's top-level fields. A column holding
 * several values lists up to three ("batch 32/64 per GPU"), more are "mixed"; a missing one is
 * left out. */
static void scenario_line(const table *t, const cJSON *j, char *out, size_t len) {
  size_t n = 0;
  out[0] = '\0';
  for (int i = 0; i < NSCENARIO && n < len; i++) {
    char val[160] = "";
    if (t) {
      const char *v[MAX_GROUPS];
      int c = col_of(t, scenario_cols[i]), nv = c < 0 ? 0 : groups(t, c, v, MAX_GROUPS);
      if (nv > 3) snprintf(val, sizeof val, "mixed");
      for (int k = 0; k <= 3 && k < nv && nv <= 3; k++)
        snprintf(val + strlen(val), sizeof val - strlen(val), "%s%s", k ? "/" : "", v[k]);
    } else {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, scenario_cols[i]);
      if (cJSON_IsString(v)) snprintf(val, sizeof val, "%s", v->valuestring);
      else if (cJSON_IsNumber(v)) snprintf(val, sizeof val, "%g", v->valuedouble);
    }
    if (!val[0]) continue;
    if (n) n += (size_t)snprintf(out + n, len - n, ", ");
    if (n < len) n += (size_t)snprintf(out + n, len - n, scenario_fmt[i], val);
  }
}

/* `set title` (or, multi, the multiplot's title option): `what` over the scenario's line, shown
 * as written (noenhanced: an underscore in a name is no subscript). */
static void scenario_title(strbuf *s, const char *what, const table *t, const cJSON *j, int multi) {
  char line[512];
  scenario_line(t, j, line, sizeof line);
  strbuf_printf(s, "%s", multi ? " title " : "set title ");
  quoted(s, what);
  if (line[0]) {
    strbuf_printf(s, " . \"\\n\" . ");
    quoted(s, line);
  }
  strbuf_printf(s, " noenhanced%s", multi ? "" : "\n");
}

/* One line per (topology, profile): a sweep of two profiles is two machines, and the best of their
 * throughputs at a GPU count would hide the slower one's rows. The profile is named in a line's
 * title where the table has several; each profile's ideal line is its own one GPU's throughput times
 * N (the speedup's ideal, N, is every line's). */
#define KEY_LEN 160

/* The index of series key k among keys[0 .. *n), which it joins at the end where new and there is
 * room; -1 where there is none (MAX_GROUPS keys). */
static int key_index(char keys[][KEY_LEN], int *n, const char *k) {
  for (int g = 0; g < *n; g++)
    if (!strcmp(keys[g], k)) return g;
  if (*n >= MAX_GROUPS) return -1;
  snprintf(keys[*n], KEY_LEN, "%s", k);
  return (*n)++;
}

/* Row r's series in a plot of a line (scaling) or a colour (pareto) per topology, and per profile
 * where the table has several (multi): "dgx1v-ib", "dgx1v-ib, v100-dgx1v". */
static void topo_profile_key(const table *t, int r, int ct, int cp, int multi, char *k, size_t len) {
  const char *tv = ct >= 0 && cell(t, r, ct) ? cell(t, r, ct) : "", *pv = cp >= 0 && cell(t, r, cp) ? cell(t, r, cp) : "";
  snprintf(k, len, "%s%s%s", tv, multi ? ", " : "", multi ? pv : "");
}

static int plot_scaling(const table *t, const char *origin, strbuf *s, int *series, err_t *e) {
  int rc;
  const char *cols[] = {"topology", "gpus", "samples_per_s", "scaling_efficiency"};
  for (int i = 0; i < 4; i++)
    if ((rc = need(t, cols[i], origin, "scaling", e))) return rc;
  int ct = col_of(t, "topology"), cg = col_of(t, "gpus"), cs = col_of(t, "samples_per_s"), ce = col_of(t, "scaling_efficiency");
  int cp = col_of(t, "profile");
  const char *prof[MAX_GROUPS];
  int np = groups(t, cp, prof, MAX_GROUPS), multi = np > 1;
  /* The lines' keys, in order of first appearance: the topology, and the profile where several. */
  char key[MAX_GROUPS][KEY_LEN];
  int nk = 0, kprof[MAX_GROUPS];
  for (int r = 0; r < t->nrow; r++) {
    const char *pv = cp >= 0 && cell(t, r, cp) ? cell(t, r, cp) : "";
    char k[KEY_LEN];
    topo_profile_key(t, r, ct, cp, multi, k, sizeof k);
    int had = nk, g = key_index(key, &nk, k);
    if (g >= had) /* a new line: its profile */
      for (kprof[g] = 0; kprof[g] < np && strcmp(prof[kprof[g]], pv); kprof[g]++) {}
  }
  double single[MAX_GROUPS] = {0};
  int first[MAX_GROUPS]; /* each profile's first line: the ideal line's GPU counts */
  for (int i = 0; i < MAX_GROUPS; i++) first[i] = -1;
  /* Each line's best throughput per GPU count (over the sweep's caps), as datablocks gpus,
   * samples/s, speedup. */
  for (int g = 0; g < nk; g++) {
    strbuf_printf(s, "$t%d << EOD\n", g);
    double done[256];
    int nd = 0, pi = kprof[g] < np ? kprof[g] : 0;
    if (first[pi] < 0) first[pi] = g;
    for (int r = 0; r < t->nrow; r++) {
      char k[KEY_LEN];
      topo_profile_key(t, r, ct, cp, multi, k, sizeof k);
      if (strcmp(k, key[g])) continue;
      double gpus = num(t, r, cg), best = -1, eff = 0;
      int dup = 0;
      for (int i = 0; i < nd; i++) dup |= done[i] == gpus;
      if (dup || isnan(gpus) || nd == 256) continue;
      for (int q = r; q < t->nrow; q++) {
        char kq[KEY_LEN];
        topo_profile_key(t, q, ct, cp, multi, kq, sizeof kq);
        if (!strcmp(kq, key[g]) && num(t, q, cg) == gpus && num(t, q, cs) > best) best = num(t, q, cs), eff = num(t, q, ce);
      }
      if (!(best > 0) || !(eff > 0)) return err_set(e, ERR_INPUT, "%s: row %d: samples_per_s and scaling_efficiency must be > 0", origin, r + 1);
      done[nd++] = gpus;
      if (single[pi] == 0) single[pi] = best / (gpus * eff);
      strbuf_printf(s, "%.17g %.17g %.17g\n", gpus, best, eff * gpus);
    }
    strbuf_printf(s, "EOD\n");
  }
  if (!nk || single[0] <= 0) return err_set(e, ERR_INPUT, "%s: no rows to plot", origin);
  int nideal = np > 0 ? np : 1;
  for (int i = 0; i < nideal; i++) strbuf_printf(s, "single%d = %.17g\n", i, single[i]);
  strbuf_printf(s, "set multiplot layout 1,2");
  scenario_title(s, "Scaling: the best bucket cap of the sweep at each GPU count", t, NULL, 1);
  strbuf_printf(s, "\n");
  strbuf_printf(s, "set logscale xy 2\nset xlabel 'GPUs'\nset ylabel 'samples/s'\nset title 'Throughput'\n");
  for (int pass = 0; pass < 2; pass++) {
    if (pass) strbuf_printf(s, "set title 'Speedup over one GPU'\nset ylabel 'speedup'\n");
    strbuf_printf(s, "plot ");
    for (int g = 0; g < nk; g++) {
      strbuf_printf(s, "$t%d using 1:%d with linespoints lw 2 lc %d title ", g, pass ? 3 : 2, g + 1);
      quoted(s, key[g]);
      strbuf_printf(s, " noenhanced, ");
    }
    for (int i = 0; i < (pass ? 1 : nideal); i++) {
      char title[160];
      snprintf(title, sizeof title, "ideal%s%s", multi && !pass ? ", " : "", multi && !pass ? prof[i] : "");
      strbuf_printf(s, "%s$t%d using 1:", i ? ", " : "", first[i] >= 0 ? first[i] : 0);
      if (pass) strbuf_printf(s, "($1)");
      else strbuf_printf(s, "($1 * single%d)", i);
      strbuf_printf(s, " with lines dt %d lc rgb 'gray40' title ", 2 + i);
      quoted(s, title);
      strbuf_printf(s, " noenhanced");
    }
    strbuf_printf(s, "\n");
  }
  strbuf_printf(s, "unset multiplot\n");
  *series = 2 * nk + nideal + 1;
  return ERR_OK;
}

/* A vertical line at cap x (MB), its label written up along it, on its left: text that runs
 * along its own line crosses no other mark's. */
static void cap_mark(strbuf *s, double x, const char *label, const char *colour) {
  strbuf_printf(s, "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead dt 2 lw 2 lc rgb '%s' front\n", x, x, colour);
  strbuf_printf(s, "set label ");
  quoted(s, label);
  strbuf_printf(s, " at %.17g, graph 0.03 left rotate by 90 offset -1.6,0 boxed tc rgb '%s' front noenhanced\n", x, colour);
}

/* j: recommend's JSON (its recommended cap is marked), or NULL for a sweep's table (its best row's
 * cap is). */
static int plot_caps(const table *t, const cJSON *j, const char *origin, strbuf *s, int *series, err_t *e) {
  int rc;
  if ((rc = need(t, "bucket_cap_mb", origin, "caps", e))) return rc;
  const char *y = col_of(t, "samples_per_s") >= 0 ? "samples_per_s" : "iteration_s";
  if ((rc = need(t, y, origin, "caps", e))) return rc;
  char lo[64], hi[64];
  snprintf(lo, sizeof lo, "%s_lo", y);
  snprintf(hi, sizeof hi, "%s_hi", y);
  int cc = col_of(t, "bucket_cap_mb"), cy = col_of(t, y), cl = col_of(t, lo), ch = col_of(t, hi), band = cl >= 0 && ch >= 0;
  /* A sweep writes the band's columns empty where it was left out (--no-interval): no band then. */
  int filled = 0;
  for (int r = 0; band && r < t->nrow; r++) filled += !isnan(num(t, r, cl)) || !isnan(num(t, r, ch));
  band = band && filled > 0;
  int ct = col_of(t, "topology"), cn = col_of(t, "nodes");
  /* One series per (topology, nodes): a group key of both. */
  const char *keys[MAX_GROUPS];
  char keybuf[MAX_GROUPS][96];
  int nk = 0;
  for (int r = 0; r < t->nrow; r++) {
    char k[96];
    snprintf(k, sizeof k, "%s%s%s%s", ct >= 0 ? cell(t, r, ct) : "", ct >= 0 && cn >= 0 ? ", " : "", cn >= 0 ? cell(t, r, cn) : "",
             cn >= 0 ? " nodes" : "");
    int seen = 0;
    for (int i = 0; i < nk && !seen; i++) seen = !strcmp(keys[i], k);
    if (!seen && nk < MAX_GROUPS) {
      snprintf(keybuf[nk], sizeof keybuf[nk], "%s", k);
      keys[nk] = keybuf[nk];
      nk++;
    }
  }
  for (int g = 0; g < nk; g++) {
    strbuf_printf(s, "$c%d << EOD\n", g);
    for (int r = 0; r < t->nrow; r++) {
      char k[96];
      snprintf(k, sizeof k, "%s%s%s%s", ct >= 0 ? cell(t, r, ct) : "", ct >= 0 && cn >= 0 ? ", " : "",
               cn >= 0 ? cell(t, r, cn) : "", cn >= 0 ? " nodes" : "");
      if (strcmp(k, keys[g])) continue;
      double x = num(t, r, cc), v = num(t, r, cy);
      if (!(x > 0) || isnan(v)) return err_set(e, ERR_INPUT, "%s: row %d: bucket_cap_mb and %s must be numbers (cap > 0)", origin, r + 1, y);
      if (band) {
        double a = num(t, r, cl), b = num(t, r, ch);
        /* Only lo <= hi: a band over draws (recommend's) need not hold the nominal value. */
        if (isnan(a) || isnan(b) || a > b)
          return err_set(e, ERR_INPUT, "%s: row %d: %s <= %s must hold", origin, r + 1, lo, hi);
        strbuf_printf(s, "%.17g %.17g %.17g %.17g\n", x, v, a, b);
      } else {
        strbuf_printf(s, "%.17g %.17g\n", x, v);
      }
    }
    strbuf_printf(s, "EOD\n");
  }
  if (!nk || !t->nrow) return err_set(e, ERR_INPUT, "%s: no rows to plot", origin);
  int thr = !strcmp(y, "samples_per_s");
  strbuf_printf(s, "set logscale x 2\nset xlabel 'bucket\\_cap\\_mb (MB)'\nset ylabel '%s'\n", thr ? "samples/s" : "iteration time (s)");
  char what[128];
  snprintf(what, sizeof what, "%s against DDP's bucket cap%s", thr ? "Throughput" : "Iteration time",
           band ? " (band: the uncertainty)" : "");
  scenario_title(s, what, t, NULL, 0);
  /* The marks: DDP's default cap, and the recommended one: recommend's, else the sweep's best row's
   * (the highest throughput, or the shortest iteration). The axis holds both. */
  double def = REDUCER_DEFAULT_CAP_MB, rec = NAN, lo_x = def, hi_x = def;
  int best = -1;
  for (int r = 0; r < t->nrow; r++) {
    double x = num(t, r, cc), v = num(t, r, cy);
    lo_x = fmin(lo_x, x);
    hi_x = fmax(hi_x, x);
    if (best < 0 || (thr ? v > num(t, best, cy) : v < num(t, best, cy))) best = r;
  }
  char rec_label[256];
  const cJSON *rj = j ? cJSON_GetObjectItemCaseSensitive(j, "recommended_bucket_cap_mb") : NULL;
  const cJSON *bj = j ? cJSON_GetObjectItemCaseSensitive(j, "best_bucket_cap_mb") : NULL;
  if (cJSON_IsNumber(rj) && rj->valuedouble > 0) {
    rec = rj->valuedouble;
    int n = snprintf(rec_label, sizeof rec_label, "recommended: %g MB", rec);
    if (cJSON_IsNumber(bj) && bj->valuedouble != rec)
      snprintf(rec_label + n, sizeof rec_label - (size_t)n, " (%g MB: not surely faster)", bj->valuedouble);
  } else {
    rec = num(t, best, cc);
    int n = snprintf(rec_label, sizeof rec_label, "recommended: %g MB (the sweep's best", rec);
    if (nk > 1 && (ct >= 0 || cn >= 0))
      n += snprintf(rec_label + n, sizeof rec_label - (size_t)n, ", %s%s%s%s", ct >= 0 ? cell(t, best, ct) : "",
                    ct >= 0 && cn >= 0 ? ", " : "", cn >= 0 ? cell(t, best, cn) : "", cn >= 0 ? " nodes" : "");
    snprintf(rec_label + n, sizeof rec_label - (size_t)n, ")");
  }
  lo_x = fmin(lo_x, rec);
  hi_x = fmax(hi_x, rec);
  lo_x /= 1.5;
  hi_x *= 1.5;
  strbuf_printf(s, "set xrange [%.17g:%.17g]\n", lo_x, hi_x);
  /* The mark is DDP's default where a row at that cap left it not given (recommend's default row;
   * a sweep's bucket_cap_mb_given 0); a cap of 25 given is not DDP's default, which also cuts a 1 MiB
   * first bucket (sim/reducer.h), and is labelled as such. */
  int cg = col_of(t, "bucket_cap_mb_given"), is_default = cg < 0;
  for (int r = 0; r < t->nrow && !is_default; r++) is_default = num(t, r, cc) == def && num(t, r, cg) == 0;
  char def_text[80], def_label[400];
  if (is_default) snprintf(def_text, sizeof def_text, "DDP default");
  else snprintf(def_text, sizeof def_text, "DDP's default cap, given (without its 1 MiB first bucket)");
  strbuf_printf(s, "set style textbox opaque noborder\n");
  if (rec == def) {
    snprintf(def_label, sizeof def_label, "%s = %s", def_text, rec_label);
    cap_mark(s, def, def_label, "gray20");
  } else {
    snprintf(def_label, sizeof def_label, "%s: %g MB", def_text, def);
    cap_mark(s, def, def_label, "gray20");
    cap_mark(s, rec, rec_label, "#1a7a1a");
  }
  /* The key below the plot: inside, it would hide the lines and the marks. */
  strbuf_printf(s, "set key outside below\nset style fill transparent solid 0.25 noborder\nplot ");
  for (int g = 0; g < nk; g++) {
    if (band) strbuf_printf(s, "$c%d using 1:3:4 with filledcurves lc %d notitle, ", g, g + 1);
    strbuf_printf(s, "$c%d using 1:2 with linespoints lw 2 lc %d title ", g, g + 1);
    quoted(s, keys[g][0] ? keys[g] : y);
    strbuf_printf(s, "%s", g + 1 < nk ? ", " : "\n");
  }
  *series = nk * (band ? 2 : 1);
  return ERR_OK;
}


/* The groups a breakdown draws side by side: at most this many (topology, cap) pairs; the others
 * are named in the title as dropped. */
#define BREAKDOWN_GROUPS 6

static int plot_breakdown(const table *t, const char *origin, strbuf *s, int *series, err_t *e) {
  int rc;
  if ((rc = need(t, "nodes", origin, "breakdown", e))) return rc;
  int cn = col_of(t, "nodes"), ct = col_of(t, "topology"), cc = col_of(t, "bucket_cap_mb"), pc[NPARTS], np = 0;
  for (int i = 0; i < NPARTS; i++)
    if ((pc[i] = col_of(t, parts[i])) >= 0) np++;
  if (!np) return err_set(e, ERR_INPUT, "%s: none of the time parts (compute_s, exposed_comm_s, ...) the breakdown plot needs", origin);
  if (!t->nrow) return err_set(e, ERR_INPUT, "%s: no rows to plot", origin);
  /* One group of bars per (topology, cap) pair, in order of first appearance; the cap is named
   * only where the table has several. */
  const char *caps[MAX_GROUPS];
  int ncaps = cc >= 0 ? groups(t, cc, caps, MAX_GROUPS) : 1;
  char key[MAX_GROUPS][128];
  int nall = 0, *grp = malloc((size_t)t->nrow * sizeof *grp);
  if (!grp) return err_set(e, ERR_NOMEM, "out of memory");
  for (int r = 0; r < t->nrow; r++) {
    char k[128];
    snprintf(k, sizeof k, "%s%s%s%s", ct >= 0 ? cell(t, r, ct) : "", ct >= 0 && ncaps > 1 ? ", " : "",
             ncaps > 1 ? cell(t, r, cc) : "", ncaps > 1 ? " MB" : "");
    int g = -1;
    for (int i = 0; i < nall && g < 0; i++)
      if (!strcmp(key[i], k)) g = i;
    if (g < 0 && nall < MAX_GROUPS) snprintf(key[g = nall++], sizeof key[0], "%s", k);
    grp[r] = g >= 0 && g < BREAKDOWN_GROUPS ? g : -1;
  }
  int nk = nall < BREAKDOWN_GROUPS ? nall : BREAKDOWN_GROUPS;
  /* A part drawn only where it is not zero in every plotted row: a stack of empty series teaches
   * nothing (a sweep writes every part). If all are zero, the parts present are drawn. */
  int nonzero[NPARTS] = {0}, nz = 0;
  for (int r = 0; r < t->nrow; r++) {
    if (grp[r] < 0) continue;
    for (int i = 0; i < NPARTS; i++) {
      if (pc[i] < 0) continue;
      double v = num(t, r, pc[i]);
      if (!(v >= 0)) {
        free(grp);
        return err_set(e, ERR_INPUT, "%s: row %d: %s must be a number >= 0", origin, r + 1, parts[i]);
      }
      nonzero[i] |= v > 0;
    }
  }
  for (int i = 0; i < NPARTS; i++) nz += pc[i] >= 0 && nonzero[i];
  if (nz) {
    for (int i = 0; i < NPARTS; i++)
      if (pc[i] >= 0 && !nonzero[i]) pc[i] = -1;
    np = nz;
  }
  for (int g = 0; g < nk; g++) {
    strbuf_printf(s, "$b%d << EOD\n", g);
    for (int r = 0; r < t->nrow; r++) {
      if (grp[r] != g) continue;
      strbuf_printf(s, "%s", cell(t, r, cn));
      for (int i = 0; i < NPARTS; i++)
        if (pc[i] >= 0) strbuf_printf(s, " %.17g", num(t, r, pc[i]));
      strbuf_printf(s, "\n");
    }
    strbuf_printf(s, "EOD\n");
  }
  free(grp);
  /* Each group's name under its bars, below the axis's label. */
  strbuf_printf(s, "set style data histograms\nset style histogram rowstacked title offset 0,-1.5 font ',11'\n"
                   "set style fill solid 0.8 border -1\nset boxwidth 0.7\nset bmargin 5\nset xlabel 'nodes'\n"
                   "set ylabel 'seconds per iteration'\nset yrange [0:*]\nset key outside right\n");
  /* The title names the one group's key, the one cap, and any group dropped. */
  char what[512], one[200] = "";
  if (nk == 1) snprintf(one, sizeof one, "%s", key[0]);
  if (ncaps == 1 && cc >= 0)
    snprintf(one + strlen(one), sizeof one - strlen(one), "%sbucket cap %s MB", one[0] ? ", " : "", cell(t, 0, cc));
  int n = snprintf(what, sizeof what, "Where an iteration's time goes%s%s%s", one[0] ? " (" : "", one, one[0] ? ")" : "");
  for (int g = nk; g < nall && g < nk + 3 && n < (int)sizeof what; g++)
    n += g == nk ? snprintf(what + n, sizeof what - (size_t)n, "; not drawn (only %d groups fit): %s", BREAKDOWN_GROUPS, key[g])
                 : snprintf(what + n, sizeof what - (size_t)n, ", %s", key[g]);
  if (nall > nk + 3 && n < (int)sizeof what)
    snprintf(what + n, sizeof what - (size_t)n, " and %s%d more", nall == MAX_GROUPS ? "at least " : "", nall - nk - 3);
  scenario_title(s, what, t, NULL, 0);
  strbuf_printf(s, "plot ");
  for (int g = 0; g < nk; g++) {
    strbuf_printf(s, "%snewhistogram ", g ? ", " : "");
    quoted(s, nk > 1 ? key[g] : "");
    int k = 0;
    for (int i = 0; i < NPARTS; i++) {
      if (pc[i] < 0) continue;
      strbuf_printf(s, ", $b%d using %d%s lc %d ", g, k + 2, k ? "" : ":xtic(1)", i + 1);
      if (g) strbuf_printf(s, "notitle");
      else strbuf_printf(s, "title '%s'", part_titles[i]);
      k++;
    }
  }
  strbuf_printf(s, "\n");
  *series = np * nk;
  return ERR_OK;
}

static double jnum(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* The timeline's geometry, which its labels' spacing rests on: the plot area spans these screen
 * fractions of the 960-pixel-wide picture (terminal()), and a label of n characters of the 8-point
 * sans font is taken as n * TIMELINE_CHAR_PX + TIMELINE_PAD_PX wide, an upper bound for the phase
 * names as measured in a PNG (docs/plots.md, "The timeline's labels"). */
#define TIMELINE_LEFT 0.10
#define TIMELINE_RIGHT 0.97
#define TIMELINE_PLOT_PX (0.87 * 960)
#define TIMELINE_CHAR_PX 6.0
#define TIMELINE_PAD_PX 8.0
#define TIMELINE_NPH 7

/* Where phase label `text` centred at c (ms) goes: on level 0 or 1 (below the compute row), if its
 * width (at most TIMELINE_CHAR_PX a character, TIMELINE_PAD_PX between labels) fits beside the
 * labels already on that level, kept inside [0, xmax]; -1 when it fits on neither. *x: its centre. */
static int timeline_place(double c, const char *text, double xmax, double used[2][TIMELINE_NPH][2], int nused[2],
                          double *x) {
  double w = ((double)strlen(text) * TIMELINE_CHAR_PX + TIMELINE_PAD_PX) / TIMELINE_PLOT_PX * xmax;
  if (w > xmax) return -1;
  *x = fmin(fmax(c, w / 2), xmax - w / 2);
  for (int lv = 0; lv < 2; lv++) {
    int clash = 0;
    for (int i = 0; i < nused[lv]; i++) clash |= *x - w / 2 < used[lv][i][1] && *x + w / 2 > used[lv][i][0];
    if (clash) continue;
    used[lv][nused[lv]][0] = *x - w / 2;
    used[lv][nused[lv]][1] = *x + w / 2;
    nused[lv]++;
    return lv;
  }
  return -1;
}

static int plot_timeline(const cJSON *j, const char *origin, strbuf *s, int *series, err_t *e) {
  const cJSON *bs = cJSON_GetObjectItemCaseSensitive(j, "buckets"), *fs = cJSON_GetObjectItemCaseSensitive(j, "fsdp_collectives");
  if (!cJSON_IsArray(bs) || !cJSON_GetObjectItemCaseSensitive(j, "forward_s"))
    return err_set(e, ERR_INPUT, "%s: the timeline plot needs predict --json's object (buckets, forward_s, ...)", origin);
  /* FSDP (docs/fsdp.md): a row per kind of collective, its all-gathers, reduce-scatters and HSDP's
   * all-reduces, in place of DDP's bucket rows. */
  int fsdp = cJSON_IsArray(fs) && cJSON_GetArraySize(fs) > 0;
  static const char *const fkinds[3] = {"allgather", "reducescatter", "allreduce"};
  static const char *const fnames[3] = {"all-\\ngathers", "reduce-\\nscatters", "all-\\nreduces"}; /* two lines: the margin is measured */
  int frows = 0, frow[3] = {0, 0, 0};
  const cJSON *f;
  if (fsdp) {
    cJSON_ArrayForEach(f, fs) {
      const cJSON *k = cJSON_GetObjectItemCaseSensitive(f, "collective");
      for (int i = 0; i < 3; i++)
        if (cJSON_IsString(k) && !strcmp(k->valuestring, fkinds[i])) frow[i] = 1;
    }
    for (int i = 0; i < 3; i++) frow[i] = frow[i] ? ++frows : 0;
  }
  /* The compute row: the breakdown's phases end to end (derived), in ms; each phase its own series
   * in its own colour, so the legend names every colour drawn. */
  static const char *const ph[TIMELINE_NPH] = {"loading_s", "transfer_s", "buffer_broadcast_s", "forward_s", "backward_s",
                                               "bucket_copy_s", "optimizer_s"};
  const char *names[TIMELINE_NPH] = {"loading", "H2D copy", "buffer broadcast", "forward", "backward",
                                     fsdp ? "FSDP copies" : "bucket copies", "optimizer"};
  static const char *const shorts[TIMELINE_NPH] = {"load", "H2D", "bcast", "fwd", "bwd", "copy", "opt"};
  static const char *const colours[TIMELINE_NPH] = {"#8c8c8c", "#17becf", "#bcbd22", "#1f77b4", "#ff7f0e", "#9467bd",
                                                    "#2ca02c"};
  int rc = timeline_check(j, ph, TIMELINE_NPH, origin, e);
  if (rc) return rc;
  double t = 0, comm_end = 0, start[TIMELINE_NPH], dur[TIMELINE_NPH];
  int nb = fsdp ? frows : cJSON_GetArraySize(bs);
  const cJSON *b;
  cJSON_ArrayForEach(b, bs) if (jnum(b, "comm_end_s") > comm_end) comm_end = jnum(b, "comm_end_s");
  if (fsdp) cJSON_ArrayForEach(f, fs) if (jnum(f, "end_s") > comm_end) comm_end = jnum(f, "end_s");
  for (int i = 0; i < TIMELINE_NPH; i++) {
    if (i == 6 && comm_end > t) t = comm_end; /* the optimizer runs after the final wait */
    start[i] = t * 1e3;
    dur[i] = jnum(j, ph[i]) * 1e3;
    t += jnum(j, ph[i]);
  }
  double xmax = fmax(t, comm_end) * 1e3 * 1.02;
  if (!(xmax > 0)) xmax = 1;
  strbuf_printf(s, "$compute << EOD\n");
  for (int i = 0; i < TIMELINE_NPH; i++) strbuf_printf(s, "%.9g %.9g\n", start[i], start[i] + dur[i]);
  /* The labels: each phase's name under the compute row, on one of two staggered levels; the short
   * name where the full one fits on neither; none where neither fits (the legend still names it). */
  strbuf_printf(s, "EOD\n$labels << EOD\n");
  double used[2][TIMELINE_NPH][2], x;
  int nused[2] = {0, 0}, nlabels = 0;
  for (int i = 0; i < TIMELINE_NPH; i++) {
    if (!(dur[i] > 0)) continue;
    const char *text = names[i];
    int lv = timeline_place(start[i] + dur[i] / 2, text, xmax, used, nused, &x);
    if (lv < 0) lv = timeline_place(start[i] + dur[i] / 2, text = shorts[i], xmax, used, nused, &x);
    if (lv < 0) continue;
    strbuf_printf(s, "%.9g %d \"%s\"\n", x, lv, text);
    nlabels++;
  }
  strbuf_printf(s, "EOD\n$comm << EOD\n");
  int k = 0;
  if (fsdp) /* no ready instant: NaN draws no point */
    cJSON_ArrayForEach(f, fs) {
      const cJSON *kk = cJSON_GetObjectItemCaseSensitive(f, "collective");
      for (int i = 0; i < 3; i++)
        if (cJSON_IsString(kk) && !strcmp(kk->valuestring, fkinds[i]))
          strbuf_printf(s, "%d NaN %.9g %.9g\n", frow[i], jnum(f, "start_s") * 1e3, jnum(f, "end_s") * 1e3);
    }
  else
    cJSON_ArrayForEach(b, bs) {
      strbuf_printf(s, "%d %.9g %.9g %.9g\n", k + 1, jnum(b, "ready_s") * 1e3, jnum(b, "comm_start_s") * 1e3,
                    jnum(b, "comm_end_s") * 1e3);
      k++;
    }
  strbuf_printf(s, "EOD\n");
  if (!nb) strbuf_printf(s, "$comm << EOD\n0 0 0 0\nEOD\n");
  /* A label level's height in data units: about 14 pixels of the ~430 the rows share. */
  double lvl = fmax(0.35, 14.0 * (nb + 3) / 430.0);
  scenario_title(s, fsdp ? "One iteration: FSDP's collectives as simulated; the compute row laid end to end from the breakdown"
                        : "One iteration: bucket all-reduces as simulated; the compute row laid end to end from the breakdown",
                 NULL, j, 0);
  strbuf_printf(s, "set xlabel 'ms from the start of the iteration'\nset xrange [0:%.9g]\nset yrange [%.9g:%d]\n", xmax,
                -0.3 - 2.3 * lvl, nb + 1);
  strbuf_printf(s, "set lmargin at screen %.2f\nset rmargin at screen %.2f\nset bmargin 7\n", TIMELINE_LEFT, TIMELINE_RIGHT);
  /* One bucket's name in every `step` rows: the rows' names never overlap either. */
  int step = nb > 30 ? (nb + 29) / 30 : 1;
  strbuf_printf(s, "set ytics ('compute' 0");
  if (fsdp)
    for (int i = 0; i < 3; i++) {
      if (frow[i]) strbuf_printf(s, ", \"%s\" %d", fnames[i], frow[i]); /* double quotes: gnuplot reads the \\n */
    }
  else
    for (int i = 0; i < nb; i += step) strbuf_printf(s, ", 'bucket %d' %d", i, i + 1);
  strbuf_printf(s, ")\nset style fill solid 0.7 border -1\nset key outside below horizontal\nplot ");
  int n = 0;
  for (int i = 0; i < TIMELINE_NPH; i++) {
    if (!(dur[i] > 0)) continue;
    strbuf_printf(s, "$compute every ::%d::%d using (($1+$2)/2):(0):(($2-$1)/2):(0.3) with boxxyerror lc rgb '%s' title '%s', \\\n  ",
                  i, i, colours[i], names[i]);
    n++;
  }
  if (nlabels) {
    strbuf_printf(s, "$labels using 1:(-0.3 - (%.9g) * ($2 + 0.6)):3 with labels font ',8' notitle, \\\n  ", lvl);
    n++;
  }
  if (fsdp) {
    strbuf_printf(s, "$comm using (($3+$4)/2):1:(($4-$3)/2):(0.3) with boxxyerror lc rgb '#cc3333' title 'collective'\n");
    *series = n + 1;
    return ERR_OK;
  }
  strbuf_printf(s, "$comm using (($3+$4)/2):1:(($4-$3)/2):(0.3) with boxxyerror lc rgb '#cc3333' title 'all-reduce', \\\n"
                   "  $comm using 2:1 with points pt 7 ps 1 lc rgb 'black' title 'bucket ready'\n");
  *series = n + 2;
  return ERR_OK;
}

/* Cost (else GPU-hours) against time to train, one point per row labelled with its GPUs, a colour
 * per topology (and profile, where the rows have several), the rows that do not fit their cards
 * apart, and the Pareto front: the rows no other fitting row beats on both. The cost axis names the
 * rows' currency (sweep's `currency` column); rows priced in different currencies are refused. */
static int plot_pareto(const table *t, const char *origin, strbuf *s, int *series, err_t *e) {
  int rc;
  if ((rc = need(t, "train_s", origin, "pareto", e))) return rc;
  int cx = col_of(t, "train_s"), cc = col_of(t, "cost"), cg = col_of(t, "gpu_hours");
  int priced = 0;
  for (int r = 0; cc >= 0 && r < t->nrow; r++) priced += !isnan(num(t, r, cc));
  const char *yname = priced ? "cost" : "gpu_hours";
  if ((rc = need(t, yname, origin, "pareto", e))) return rc;
  /* The currency of the cost: every priced row's the same ("" where the prices were given as numbers). */
  const char *cur = NULL;
  int ccur = col_of(t, "currency");
  for (int r = 0; priced && r < t->nrow; r++) {
    if (isnan(num(t, r, cc))) continue;
    const char *c = ccur >= 0 && cell(t, r, ccur) ? cell(t, r, ccur) : "";
    if (!cur) cur = c;
    else if (strcmp(cur, c) != 0)
      return err_set(e, ERR_INPUT, "%s: row %d: a cost in %s beside one in %s: costs in different currencies are not one axis",
                     origin, r + 1, *c ? c : "a price given as a number", *cur ? cur : "a price given as a number");
  }
  int cy = priced ? cc : cg, ct = col_of(t, "topology"), cp = col_of(t, "profile"), cf = col_of(t, "fits"), cn = col_of(t, "gpus");
  int ci = col_of(t, "iteration_s"), cl = col_of(t, "iteration_s_lo"), ch = col_of(t, "iteration_s_hi");
  int bars = ci >= 0 && cl >= 0 && ch >= 0;
  for (int r = 0; bars && r < t->nrow; r++) bars = !isnan(num(t, r, cl)) && !isnan(num(t, r, ch));
  const char *profs[MAX_GROUPS];
  int two = cp >= 0 && groups(t, cp, profs, MAX_GROUPS) > 1;
  char keys[MAX_GROUPS][KEY_LEN];
  int nk = 0, *key = calloc((size_t)t->nrow + 1, sizeof *key), *front = calloc((size_t)t->nrow + 1, sizeof *front);
  if (!key || !front) {
    free(key), free(front);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  int misfit = 0;
  for (int r = 0; r < t->nrow; r++) {
    double x = num(t, r, cx), y = num(t, r, cy);
    if (!(x > 0) || !(y > 0)) {
      rc = err_set(e, ERR_INPUT, "%s: row %d: train_s and %s must be numbers above 0 (sweep --samples N or --epochs E "
                   "--dataset-size S%s)", origin, r + 1, yname, priced ? " --price X" : "");
      goto out;
    }
    char k[KEY_LEN];
    topo_profile_key(t, r, ct, cp, two, k, sizeof k);
    int g = key_index(keys, &nk, k);
    key[r] = g >= 0 ? g : MAX_GROUPS - 1;
    front[r] = !(cf >= 0 && num(t, r, cf) == 0);
    misfit += !front[r];
  }
  /* The front: a fitting row that no other fitting row matches or beats on both, and beats on one. */
  for (int r = 0; r < t->nrow; r++)
    for (int q = 0; q < t->nrow && front[r]; q++) {
      if (q == r || (cf >= 0 && num(t, q, cf) == 0)) continue;
      double xr = num(t, r, cx), yr = num(t, r, cy), xq = num(t, q, cx), yq = num(t, q, cy);
      if (xq <= xr && yq <= yr && (xq < xr || yq < yr)) front[r] = 0;
    }
  /* The data: hours, cost, and with the interval the same factors on both (docs/memory.md). */
  for (int g = 0; g <= nk; g++) {
    strbuf_printf(s, "$%s%d << EOD\n", g < nk ? "p" : "m", g);
    for (int r = 0; r < t->nrow; r++) {
      int fits = !(cf >= 0 && num(t, r, cf) == 0);
      if (g < nk ? (key[r] != g || !fits) : fits) continue;
      double x = num(t, r, cx) / 3600, y = num(t, r, cy), lo = 1, hi = 1;
      if (bars) lo = num(t, r, cl) / num(t, r, ci), hi = num(t, r, ch) / num(t, r, ci);
      strbuf_printf(s, "%.17g %.17g %.17g %.17g %.17g %.17g\n", x, y, x * lo, x * hi, y * lo, y * hi);
    }
    strbuf_printf(s, "EOD\n");
  }
  /* Every fitting row's GPUs, beside its point. */
  strbuf_printf(s, "$gpus << EOD\n");
  for (int r = 0; r < t->nrow; r++)
    if (!(cf >= 0 && num(t, r, cf) == 0))
      strbuf_printf(s, "%.17g %.17g \"%s\"\n", num(t, r, cx) / 3600, num(t, r, cy), cn >= 0 ? cell(t, r, cn) : "?");
  strbuf_printf(s, "EOD\n");
  /* The front, in order of time. */
  strbuf_printf(s, "$front << EOD\n");
  int nf = 0;
  for (double last = -1;;) {
    int best = -1;
    for (int r = 0; r < t->nrow; r++)
      if (front[r] && num(t, r, cx) > last && (best < 0 || num(t, r, cx) < num(t, best, cx))) best = r;
    if (best < 0) break;
    last = num(t, best, cx);
    strbuf_printf(s, "%.17g %.17g \"%s\"\n", last / 3600, num(t, best, cy), cn >= 0 ? cell(t, best, cn) : "?");
    nf++;
  }
  strbuf_printf(s, "EOD\n");
  if (!t->nrow || !nk) {
    rc = err_set(e, ERR_INPUT, "%s: no rows to plot", origin);
    goto out;
  }
  char what[256];
  snprintf(what, sizeof what, "%s against time to train (numbers: GPUs%s)", priced ? "Cost" : "GPU-hours",
           bars ? "; bars: the interval of each row" : "");
  scenario_title(s, what, t, NULL, 0);
  char ylabel[96];
  if (!priced) snprintf(ylabel, sizeof ylabel, "GPU-hours");
  else if (cur && *cur) snprintf(ylabel, sizeof ylabel, "cost (%s)", cur);
  else snprintf(ylabel, sizeof ylabel, "cost (GPU-hours x the price per GPU-hour given)");
  strbuf_printf(s, "set xlabel 'time to train (hours)'\nset ylabel '%s'\nset key outside right top vertical box\n", ylabel);
  double xmin = INFINITY, xmax = 0;
  for (int r = 0; r < t->nrow; r++) xmin = fmin(xmin, num(t, r, cx)), xmax = fmax(xmax, num(t, r, cx));
  if (xmax > 8 * xmin) { /* a log axis, ticked at 1, 2 and 5 of each decade it spans */
    strbuf_printf(s, "set logscale x 10\nset autoscale xfix\nset xtics (");
    int first = 1;
    for (double d = pow(10, floor(log10(xmin / 3600 / 1.5))); d < xmax / 3600 * 1.5; d *= 10)
      for (int m = 0; m < 3; m++) {
        double v = d * (m == 0 ? 1 : m == 1 ? 2 : 5);
        if (v < xmin / 3600 / 1.5 || v > xmax / 3600 * 1.5) continue;
        strbuf_printf(s, "%s'%g' %.17g", first ? "" : ", ", v, v);
        first = 0;
      }
    strbuf_printf(s, ")\n");
  }
  strbuf_printf(s, "set offsets graph 0.05, graph 0.12, graph 0.08, graph 0.05\nplot ");
  for (int g = 0; g < nk; g++) {
    strbuf_printf(s, "$p%d using 1:2%s with %s pt 7 ps 1.3 lc %d title ", g, bars ? ":3:4:5:6" : "", bars ? "xyerrorbars" : "points",
                  g + 1);
    quoted(s, keys[g][0] ? keys[g] : "rows");
    strbuf_printf(s, " noenhanced, ");
  }
  if (misfit) strbuf_printf(s, "$m%d using 1:2 with points pt 2 ps 1.5 lc rgb 'red' title 'does not fit the card', ", nk);
  strbuf_printf(s, "$front using 1:2 with steps dt 2 lw 2 lc rgb 'gray20' title 'Pareto front', "
                   "$gpus using 1:2:3 with labels offset 0.9,0.7 left font ',8' notitle\n");
  *series = nk + (misfit > 0) + 2;
  (void)nf;
out:
  free(key);
  free(front);
  return rc;
}

int plot_script(plot_kind kind, const char *input, const char *origin, const char *out_path, char **script, int *series,
                err_t *e) {
  *script = NULL;
  *series = 0;
  strbuf s = {0};
  table t = {0};
  cJSON *j = NULL;
  int rc = terminal(&s, out_path, e);
  const char *p = input;
  while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
  if (!rc && *p == '{') {
    if (!(j = cJSON_Parse(input))) rc = err_set(e, ERR_INPUT, "%s: not valid JSON", origin);
    else if (kind != PLOT_TIMELINE) {
      const cJSON *caps = cJSON_GetObjectItemCaseSensitive(j, "caps");
      if (!cJSON_IsArray(caps)) rc = err_set(e, ERR_INPUT, "%s: the %s plot reads a sweep CSV or recommend --json (caps)", origin,
                                             plot_kind_names[kind]);
      else rc = table_json(caps, j, origin, &t, e);
    }
  } else if (!rc) {
    if (kind == PLOT_TIMELINE) rc = err_set(e, ERR_INPUT, "%s: the timeline plot reads predict --json's object", origin);
    else rc = table_csv(input, origin, &t, e);
  }
  if (!rc && kind != PLOT_TIMELINE) rc = table_check(&t, origin, e);
  if (!rc) {
    switch (kind) {
    case PLOT_SCALING: rc = plot_scaling(&t, origin, &s, series, e); break;
    case PLOT_CAPS: rc = plot_caps(&t, j, origin, &s, series, e); break;
    case PLOT_BREAKDOWN: rc = plot_breakdown(&t, origin, &s, series, e); break;
    case PLOT_PARETO: rc = plot_pareto(&t, origin, &s, series, e); break;
    default: rc = plot_timeline(j, origin, &s, series, e); break;
    }
  }
  table_free(&t);
  cJSON_Delete(j);
  char *text = strbuf_take(&s);
  if (!rc && !text) rc = err_set(e, ERR_NOMEM, "out of memory");
  if (rc) {
    free(text);
    return rc;
  }
  *script = text;
  return ERR_OK;
}
