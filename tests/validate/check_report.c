/* check_report REPORT.json NROWS TARGET BOUND MIN_CPU: checks the JSON of `ddpsim validate --json`,
 * one line per check. Well formed: NROWS rows, every predicted and measured time positive and
 * finite, relative errors finite and equal to (pred - meas) / meas, the summary consistent with the
 * rows. A row whose measured_cpu_share is below MIN_CPU was measured while other work had a core: it
 * is reported but not held to the bound. Whether every uncontended row is within TARGET is printed
 * (the goal, not met reliably here: docs/validation.md); the check is BOUND.
 * The drift check (drift_check): one entry per repeat, consistent with max_drift and retries. A
 * repeat kept although drifted (the machine changed speed between the calibrations before and after
 * its runs, in every attempt) is printed, and its rows are still held to BOUND: drift comes from
 * the calibrations alone, and a broken model must not be able to hide behind it.
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
  /* The drift check: one entry per repeat; a repeat is redone only while beyond max_drift, marked
   * drifted only when its kept attempt is still beyond it; the counts are the entries' sums. */
  const cJSON *dc = cJSON_GetObjectItemCaseSensitive(j, "drift_check");
  const cJSON *dr = cJSON_GetObjectItemCaseSensitive(dc, "repeats"), *x;
  double maxd = num(dc, "max_drift"), retries = num(dc, "retries");
  int measured = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(dc, "measured")), dok = cJSON_IsArray(dr) &&
      cJSON_GetArraySize(dr) == (int)num(j, "repeats") && maxd >= 0 && retries >= 0;
  int ndrifted = 0, nredone = 0, nrep = 0;
  cJSON_ArrayForEach(x, dr) {
    double d = num(x, "drift"), redone = num(x, "redone");
    int drifted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "drifted"));
    const cJSON *ad = cJSON_GetObjectItemCaseSensitive(x, "attempt_drifts");
    int na = cJSON_GetArraySize(ad), beyond_kept = maxd > 0 && fabs(d) > maxd;
    dok &= cJSON_IsArray(ad) && redone >= 0 && redone <= retries && cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(x, "drifted"));
    if (measured) {
      dok &= isfinite(d) && na == (int)redone + 1 && drifted == (beyond_kept && redone == retries);
      for (int a = 0; a < na; a++) {
        const cJSON *v = cJSON_GetArrayItem(ad, a);
        dok &= cJSON_IsNumber(v) && (a + 1 < na ? maxd > 0 && fabs(v->valuedouble) > maxd : v->valuedouble == d);
      }
    } else {
      dok &= cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(x, "drift")) && na == 0 && redone == 0 && !drifted;
    }
    if (measured) printf("     repeat %d: drift %+.1f%%, redone %.0f%s\n", ++nrep, d * 100, redone, drifted ? ", DRIFTED" : "");
    else printf("     repeat %d: drift not measured (a given profile)\n", ++nrep);
    ndrifted += drifted, nredone += (int)redone;
  }
  dok &= ndrifted == (int)num(dc, "drifted_repeats") && nredone == (int)num(dc, "redone_attempts");
  check(dok, "drift_check: one entry per repeat, redone only while beyond max_drift, counts = the entries' sums");
  cJSON_Delete(j);
  if (fails) return 1;
  if (measured && nrep > 0 && ndrifted == nrep)
    printf("DRIFT every repeat drifted beyond %g%% in every attempt: the machine changed speed under the runs "
           "(the rows are still held to the bound)\n", maxd * 100);
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
