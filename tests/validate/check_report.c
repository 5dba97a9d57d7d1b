/* check_report REPORT.json NROWS TARGET BOUND MIN_CPU: checks the JSON of `ddpsim validate --json`,
 * one line per check. Well formed: NROWS rows, every predicted and measured time positive and
 * finite, relative errors finite and equal to (pred - meas) / meas, the summary consistent with the
 * rows. A row whose measured_cpu_share is below MIN_CPU was measured while other work had a core: it
 * is reported but not held to the bound. Whether every uncontended row is within TARGET is printed
 * (the goal, not met reliably here: docs/validation.md); the check is BOUND.
 * Exit 0: well formed, every uncontended row within BOUND, and at least half the rows uncontended.
 * Exit 1: malformed. Exit 3: an uncontended row beyond BOUND. Exit 4: more than half the rows
 * contended (the caller measures again, or gives up as "machine busy"). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int fails = 0;
static void check(int ok, const char *what) {
  printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  fails += !ok;
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: check_report REPORT.json NROWS TARGET BOUND MIN_CPU\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    printf("FAIL cannot open %s\n", argv[1]);
    return 1;
  }
  static char buf[1 << 22];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  cJSON *j = cJSON_Parse(buf);
  check(j != NULL, "report is JSON");
  if (!j) return 1;
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
  int nrows = cJSON_GetArraySize(rows);
  check(cJSON_IsArray(rows) && nrows == atoi(argv[2]), "rows: one per configuration");
  double target = atof(argv[3]), bound = atof(argv[4]), min_cpu = atof(argv[5]), worst = 0, worst_free = 0;
  int beyond = 0, sane = 1, contended = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, rows) {
    double p = num(r, "predicted_s"), m = num(r, "measured_s"), e = num(r, "rel_error");
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(r, "config");
    int ok = p > 0 && m > 0 && isfinite(p) && isfinite(m) && isfinite(e) && fabs(e - (p - m) / m) < 1e-9;
    const cJSON *b, *bs = cJSON_GetObjectItemCaseSensitive(r, "buckets");
    ok &= cJSON_IsArray(bs) && cJSON_GetArraySize(bs) >= 1;
    cJSON_ArrayForEach(b, bs) ok &= num(b, "measured_end_s") >= num(b, "measured_start_s") &&
                                    num(b, "predicted_end_s") >= num(b, "predicted_start_s");
    sane &= ok;
    double cpu = num(r, "measured_cpu_share");
    int busy = !(cpu >= min_cpu);
    printf("     %-18s predicted %.3f ms, measured %.3f ms, error %+.1f%%, cpu %.0f%%%s%s\n",
           cJSON_IsString(cfg) ? cfg->valuestring : "?", p * 1e3, m * 1e3, e * 100, cpu * 100,
           busy ? "  (contended: not held to the bound)" : "", ok ? "" : "  (malformed)");
    if (fabs(e) > worst) worst = fabs(e);
    contended += busy;
    if (!busy && fabs(e) > worst_free) worst_free = fabs(e);
    beyond += !busy && !(fabs(e) <= bound);
  }
  check(sane, "every row: positive finite times, error = (predicted - measured) / measured, bucket end >= start");
  double med = num(j, "median_abs_error"), max = num(j, "max_abs_error");
  check(isfinite(med) && isfinite(max) && med <= max + 1e-12 && fabs(max - worst) < 1e-9,
        "median_abs_error <= max_abs_error = the largest |row error|");
  const cJSON *rk = cJSON_GetObjectItemCaseSensitive(j, "ranking");
  check(num(rk, "agree") <= num(rk, "resolved") && num(rk, "resolved") <= num(rk, "pairs"), "ranking counts consistent");
  cJSON_Delete(j);
  if (fails) return 1;
  if (2 * contended > nrows) {
    printf("BUSY %d of %d configurations measured while other work had a core (cpu < %.0f%%)\n", contended, nrows,
           min_cpu * 100);
    return 4;
  }
  printf("%s target: every uncontended configuration within %.0f%% (largest %.1f%%; over all rows largest %.1f%%, "
         "median %.1f%%)\n", worst_free <= target ? "met " : "miss", target * 100, worst_free * 100, worst * 100,
         med * 100);
  printf("%s every uncontended configuration within %.0f%%\n", beyond ? "MISS" : "ok  ", bound * 100);
  return beyond ? 3 : 0;
}
