/* fields (sim/fields.h): the table of result fields is whole and consistent: every row has a name,
 * a unit and the accessor its kind needs; sweep's columns are numbered 1..N once each and their
 * names unique; the table's lines have distinct positions and a label; a group's rows are
 * adjacent; plot's range of every column is what docs/plots.md's naming rule says, but for the
 * names it lists apart. `test_fields --list` prints the table for tests/tools/test_schemas.py,
 * which holds docs/cli.md and docs/schemas/predict.schema.json to it: one line per field, tab
 * separated: JSON path (group.name; "-" for sweep's only), kind, frameworks (ddp,dp), always (1:
 * in every report of its frameworks), unit, sweep's column ("-": none) and its position. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fields.h"

static const char *const kinds[] = {"number", "bool", "name", "text", "json"};

static int list(void) {
  for (int k = 0; k < FIELD_COUNT; k++) {
    const field *f = &field_table[k];
    const char *col = field_column(f);
    char path[128];
    if (!f->frameworks) snprintf(path, sizeof path, "-");
    else snprintf(path, sizeof path, "%s%s%s", f->group ? f->group : "", f->group ? "." : "", f->name);
    printf("%s\t%s\t%s%s%s\t%d\t%s\t%s\t%d\n", path, kinds[f->kind], f->frameworks & FIELD_DDP ? "ddp" : "",
           f->frameworks == FIELD_ALL ? "," : "", f->frameworks & FIELD_DP ? "dp" : "", !f->json_if && !f->optional,
           f->unit, col ? col : "-", f->sweep);
  }
  return 0;
}

/* docs/plots.md: counts `gpus`, `nodes`; `scaling_efficiency`; `bucket_cap_mb` >= 0; else a rate
 * `*_per_s`, an iteration `*iteration_s` (> 0), a time `*_s`. */
static field_range documented(const char *name) {
  size_t n = strlen(name);
  if (!strcmp(name, "gpus") || !strcmp(name, "nodes")) return FIELD_ATLEAST1;
  if (!strcmp(name, "scaling_efficiency")) return FIELD_FRACTION;
  if (!strcmp(name, "bucket_cap_mb")) return FIELD_NONNEG;
  if (n > 3 && (!strcmp(name + n - 3, "_lo") || !strcmp(name + n - 3, "_hi"))) n -= 3;
  if (n > 6 && !strncmp(name + n - 6, "_per_s", 6)) return FIELD_RATE;
  if (n >= 11 && !strncmp(name + n - 11, "iteration_s", 11)) return FIELD_ITERATION;
  if (n > 2 && !strncmp(name + n - 2, "_s", 2)) return FIELD_NONNEG;
  return FIELD_ANY;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--list")) return list();
  int whole = 1, accessors = 1;
  for (int k = 0; k < FIELD_COUNT; k++) {
    const field *f = &field_table[k];
    whole &= f->name && f->unit;
    if (!f->name) continue;
    int ok = f->kind == FIELD_TEXT ? f->text != NULL
             : f->kind == FIELD_JSON ? f->json != NULL
                                     : (f->type != FIELD_FN || f->num) && (f->kind != FIELD_NAME || f->name_of);
    if (!ok) printf("# %s: no accessor for its kind\n", f->name);
    accessors &= ok;
  }
  CHECK(whole, "every one of the %d fields has a name and a unit", FIELD_COUNT);
  CHECK(accessors, "every field has the accessor its kind needs");

  field_id ids[FIELD_COUNT];
  int n = field_sweep_columns(ids), count = 0, unique = 1, inorder = 1;
  for (int k = 0; k < FIELD_COUNT; k++) count += field_table[k].sweep > 0;
  for (int i = 0; i < n; i++) {
    inorder &= field_table[ids[i]].sweep == i + 1;
    for (int j = 0; j < i; j++) unique &= strcmp(field_column(&field_table[ids[i]]), field_column(&field_table[ids[j]])) != 0;
  }
  CHECK(n == count && inorder, "sweep's %d columns are numbered 1..%d, once each", count, n);
  CHECK(unique, "sweep's column names are unique");

  int lines = 1, labels = 1;
  for (int k = 0; k < FIELD_COUNT; k++) {
    const field *f = &field_table[k];
    if (!f->line) continue;
    labels &= f->label != NULL && f->frameworks != 0;
    for (int j = 0; j < k; j++) lines &= field_table[j].line != f->line;
  }
  CHECK(lines && labels, "the table's lines have distinct positions, a label and frameworks");

  int adjacent = 1;
  for (int k = 1; k < FIELD_COUNT; k++) {
    const char *g = field_table[k].group;
    if (!g || (field_table[k - 1].group && !strcmp(field_table[k - 1].group, g))) continue;
    for (int j = 0; j < k - 1; j++) adjacent &= !field_table[j].group || strcmp(field_table[j].group, g) != 0;
  }
  CHECK(adjacent, "a group's fields are adjacent (one object in predict's JSON)");

  int ranges = 1;
  for (int k = 0; k < FIELD_COUNT; k++) {
    const field *f = &field_table[k];
    const char *names[] = {field_column(f), f->group ? NULL : f->name};
    for (int i = 0; i < 2; i++) {
      if (!names[i]) continue;
      int ok = f->range == documented(names[i]) && field_range_of(names[i]) == f->range;
      if (!ok) printf("# %s: range %d, docs/plots.md's %d\n", names[i], f->range, documented(names[i]));
      ranges &= ok;
    }
  }
  CHECK(ranges, "plot's range of each column is docs/plots.md's");
  CHECK(field_range_of("mean_iteration_s") == FIELD_ITERATION && field_range_of("regret") == FIELD_ANY &&
            field_range_of("samples_per_s_hi") == FIELD_RATE && field_range_of("iteration_s_lo") == FIELD_ITERATION &&
            field_range_of("iteration_ci_s") == FIELD_NONNEG,
        "a name not in the table: its unit's range (recommend's mean_iteration_s an iteration, > 0)");
  const char *must;
  CHECK(!field_range_ok(FIELD_NONNEG, -1e-12, &must) && !strcmp(must, "a number >= 0") &&
            !field_range_ok(FIELD_FRACTION, 1.01, &must) && field_range_ok(FIELD_FRACTION, 1, &must) &&
            !field_range_ok(FIELD_ATLEAST1, 1.5, &must) && !field_range_ok(FIELD_RATE, INFINITY, &must) &&
            field_range_ok(FIELD_ANY, NAN, &must) && !field_range_ok(FIELD_ITERATION, 0, &must) &&
            field_range_ok(FIELD_ITERATION, 2.385e-6, &must) && field_range_ok(FIELD_NONNEG, 0, &must),
        "ranges refuse what ddpsim never writes (a negative time, 101%%, 1.5 GPUs, inf, an iteration of 0 s)");
  return check_status();
}
