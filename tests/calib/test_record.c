/* record_compute's compute.jitter (calib/record.h) on synthetic measurements, no timing: the
 * measured ratios are written when the schema takes every one of them, and when one iteration was
 * disturbed past it the profile has no jitter, says why, and still validates (the failure this
 * replaces: "internal: the profile to write is invalid: compute.jitter.ratios[0] ..."). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "computebench.h"
#include "profile.h"
#include "profilew.h"
#include "record.h"

/* A GEMM of m x n x k at 10 GFLOP/s (fp32 operands). */
static computebench_meas gemm(long m, long n, long k) {
  computebench_meas g = {.kind = COMPUTEBENCH_GEMM, .m = m, .n = n, .k = k};
  snprintf(g.name, sizeof g.name, "grid");
  g.flops = 2.0 * m * n * k;
  g.bytes = 4.0 * (m * k + k * n + m * n);
  g.median_s = g.mean_s = 1e-6 + g.flops / 1e10;
  return g;
}

/* A copy of size bytes at 5 GB/s. */
static computebench_meas copy(double size) {
  computebench_meas c = {.kind = COMPUTEBENCH_EWISE, .bytes = 2 * size};
  snprintf(c.name, sizeof c.name, "copy");
  c.median_s = c.mean_s = 1e-6 + c.bytes / 5e9;
  return c;
}

/* Records a result whose mLSTM iterations took times[0..n) into a fresh profile: rc, the fit, and
 * the document (caller deletes). */
static cJSON *record(const double *times, size_t n, record_compute_fit *fit, int *rc, err_t *e) {
  computebench_meas m[8];
  size_t k = 0;
  m[k++] = gemm(16, 16, 16), m[k++] = gemm(64, 64, 64), m[k++] = gemm(256, 256, 256);
  m[k++] = copy(4096), m[k++] = copy(65536), m[k++] = copy(1 << 20);
  for (size_t i = 0; i < k; i++) m[i].samples_s = &m[i].median_s, m[i].nsamples = 1; /* one run each */
  computebench_meas it = {.kind = COMPUTEBENCH_MLSTM, .H = 32, .B = 2, .T = 3, .nsamples = n};
  snprintf(it.name, sizeof it.name, "iteration");
  double buf[16];
  memcpy(buf, times, n * sizeof *times);
  it.samples_s = buf;
  for (size_t i = 0; i < n; i++) it.mean_s += times[i] / (double)n;
  it.median_s = it.mean_s;
  m[k++] = it;
  computebench_result res = {.n = k, .cap = k, .m = m};
  snprintf(res.dev.name, sizeof res.dev.name, "test");
  computebench_cfg cfg = {.backend = COMPUTEBENCH_CPU, .precision = COMPUTEBENCH_FP32, .iters = (int)n};
  profilew_prov p = {0};
  cJSON *doc = profilew_new("t", &p);
  *rc = record_compute(doc, &cfg, &res, fit, e);
  return doc;
}

static const cJSON *jitter_of(const cJSON *doc) {
  return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "compute"), "jitter");
}

int main(void) {
  record_compute_fit fit;
  err_t e = {0};
  int rc;

  /* Undisturbed: three ratios to the mean, written. */
  const double calm[] = {1.0e-3, 1.1e-3, 0.9e-3};
  cJSON *doc = record(calm, 3, &fit, &rc, &e);
  const cJSON *ratios = cJSON_GetObjectItemCaseSensitive(jitter_of(doc), "ratios");
  truth("calm runs: recorded", rc == 0);
  truth("calm runs: compute.jitter has 3 ratios", cJSON_GetArraySize(ratios) == 3 && fit.jitter_ratios == 3);
  if (rc) printf("     (%s)\n", e.msg);
  if (cJSON_GetArraySize(ratios) == 3)
    near("calm runs: the second ratio is 1.1", cJSON_GetArrayItem(ratios, 1)->valuedouble, 1.1, 1e-12);
  truth("calm runs: nothing left out", fit.jitter_left_out[0] == 0);
  truth("calm runs: the profile part validates", profilew_validate(doc, "calm.json", 1, &e) == 0);
  cJSON_Delete(doc);

  /* One run preempted (40 times the others): the others are below 0.1 of the mean. */
  const double disturbed[] = {15e-6, 16e-6, 600e-6};
  doc = record(disturbed, 3, &fit, &rc, &e);
  truth("disturbed runs: recorded", rc == 0);
  truth("disturbed runs: no compute.jitter", jitter_of(doc) == NULL && fit.jitter_ratios == 0);
  printf("     (%s)\n", fit.jitter_left_out);
  truth("disturbed runs: says which run and the range", strstr(fit.jitter_left_out, "timed iteration 1 of H=32 B=2 T=3") &&
                                                            strstr(fit.jitter_left_out, "outside the 0.1 .. 10"));
  truth("disturbed runs: the profile part validates", profilew_validate(doc, "disturbed.json", 1, &e) == 0);
  cJSON_Delete(doc);

  /* At the schema's edge: ratios exactly in range are kept. */
  const double edge[] = {0.1, 1.9};
  doc = record(edge, 2, &fit, &rc, &e);
  truth("ratios 0.1 and 1.9: kept", rc == 0 && fit.jitter_ratios == 2 && jitter_of(doc) != NULL);
  truth("ratios 0.1 and 1.9: the profile part validates", profilew_validate(doc, "edge.json", 1, &e) == 0);
  cJSON_Delete(doc);

  /* One timed run: nothing to compare, no jitter and no warning. */
  const double one[] = {1e-3};
  doc = record(one, 1, &fit, &rc, &e);
  truth("one run: no jitter, no warning", rc == 0 && jitter_of(doc) == NULL && fit.jitter_left_out[0] == 0);
  cJSON_Delete(doc);
  return check_status();
}
