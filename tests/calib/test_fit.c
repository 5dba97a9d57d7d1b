/* Fits recover known coefficients from synthetic data with noise (fixed seed, uneven values):
 * the ring model with and without a bend, the roofline for ewise and gemm, and the table's
 * interpolation rule. One line per check; exits 1 if any check fails. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fit.h"

static double ring_t(int n, double lat, double bw, double s) {
  return 2.0 * (n - 1) * (lat + s / (n * bw));
}

int main(void) {
  gsl_set_error_handler_off();
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 20240917);
  err_t e = {{0}};
  enum { N = 24 };
  double bytes[N], t[N];

  /* 1. One regime: lat 2.385 us, bw 9.7 GB/s, 4 ranks, 1% multiplicative noise. */
  for (int i = 0; i < N; i++) {
    bytes[i] = 8.0 * pow(2.0, i);
    t[i] = ring_t(4, 2.385e-6, 9.7e9, bytes[i]) * (1 + gsl_ran_gaussian(rng, 0.01));
  }
  fit_ring_result r;
  int rc = fit_ring(bytes, t, N, 4, NULL, &r, &e);
  truth("ring, one regime: fit succeeds", rc == 0);
  truth("ring, one regime: no bend found in a straight line", r.nregimes == 1);
  near("ring, one regime: lat_s", r.lat_s, 2.385e-6, 0.02);
  near("ring, one regime: bw_Bps", r.bw_Bps, 9.7e9, 0.02);
  truth("ring, one regime: rms residual near the 1% noise", r.rms_rel < 0.02);

  /* 2. A bend at 64 KiB (eager -> rendezvous): below, lat 1.3 us and bw 3.1 GB/s; above,
   *    lat 17.9 us and bw 9.7 GB/s. 2% noise. */
  for (int i = 0; i < N; i++) {
    bytes[i] = 8.0 * pow(2.0, i);
    double lat = bytes[i] <= 65536 ? 1.3e-6 : 1.79e-5, bw = bytes[i] <= 65536 ? 3.1e9 : 9.7e9;
    t[i] = ring_t(8, lat, bw, bytes[i]) * (1 + gsl_ran_gaussian(rng, 0.02));
  }
  rc = fit_ring(bytes, t, N, 8, NULL, &r, &e);
  truth("ring, bend: fit succeeds", rc == 0);
  truth("ring, bend: two regimes found", r.nregimes == 2);
  if (r.nregimes == 2) {
    near("ring, bend: breakpoint (last size of the first regime)", r.regime[0].max_bytes, 65536, 1e-9);
    near("ring, bend: small-size lat_s", r.regime[0].lat_s, 1.3e-6, 0.05);
    near("ring, bend: small-size bw_Bps", r.regime[0].bw_Bps, 3.1e9, 0.10);
    near("ring, bend: large-size lat_s", r.regime[1].lat_s, 1.79e-5, 0.25);
    near("ring, bend: large-size bw_Bps", r.regime[1].bw_Bps, 9.7e9, 0.03);
  }
  near("ring, bend: summary lat_s is the small-size latency", r.lat_s, 1.3e-6, 0.05);
  near("ring, bend: summary bw_Bps is the large-size bandwidth", r.bw_Bps, 9.7e9, 0.03);
  fit_ring_opts one = fit_ring_defaults();
  one.max_regimes = 1;
  fit_ring_result r1;
  rc = fit_ring(bytes, t, N, 8, &one, &r1, &e);
  truth("ring, bend: a single line fits it worse", rc == 0 && r1.regime[0].rms_rel > 3 * r.regime[1].rms_rel);

  /* 2b. Latency-bound small sizes whose noise tilts the slope negative, then a bandwidth regime
   *     after a jump (lat 4.7 us -> 31.3 us, bw 2.3 GB/s): the first regime is a constant, not an
   *     error, and the summary takes its latency. */
  for (int i = 0; i < N; i++) {
    bytes[i] = 8.0 * pow(2.0, i);
    t[i] = i < 8 ? 2 * 4.7e-6 * (1.03 - 0.01 * i) : ring_t(2, 3.13e-5, 2.3e9, bytes[i]);
  }
  rc = fit_ring(bytes, t, N, 2, NULL, &r, &e);
  truth("ring, latency-bound start: fit succeeds", rc == 0);
  truth("ring, latency-bound start: the first regime has unbounded bandwidth",
        r.nregimes >= 2 && isinf(r.regime[0].bw_Bps));
  near("ring, latency-bound start: summary lat_s", r.lat_s, 4.7e-6, 0.03);
  near("ring, latency-bound start: summary bw_Bps", r.bw_Bps, 2.3e9, 0.01);

  /* 3. Errors. */
  rc = fit_ring(bytes, t, N, 1, NULL, &r, &e);
  truth("ring: one rank is refused", rc == ERR_RUNTIME && strstr(e.msg, "2 ranks"));
  double flat[4] = {1e-5, 1e-5, 1e-5, 1e-5};
  rc = fit_ring(bytes, flat, 4, 2, NULL, &r, &e);
  truth("ring: time not growing with size is refused", rc == ERR_RUNTIME && strstr(e.msg, "bandwidth"));
  double down[3] = {8, 4, 16};
  rc = fit_ring(down, flat, 3, 2, NULL, &r, &e);
  truth("ring: sizes out of order are refused", rc == ERR_RUNTIME);

  /* 4. Roofline: ewise copies at 11.3 GB/s with 1.7 us launch; gemm at 87.4 GFLOP/s, 3.1 us. */
  enum { M = 12 };
  double eb[M], et[M];
  for (int i = 0; i < M; i++) {
    eb[i] = 4096.0 * pow(2.0, i);
    et[i] = (1.7e-6 + eb[i] / 1.13e10) * (1 + gsl_ran_gaussian(rng, 0.01));
  }
  fit_roofline ew;
  rc = fit_roofline_ewise(eb, et, M, &ew, &e);
  truth("roofline ewise: fit succeeds", rc == 0);
  near("roofline ewise: mem_bw_Bps", ew.mem_bw_Bps, 1.13e10, 0.02);
  near("roofline ewise: launch_s", ew.launch_s, 1.7e-6, 0.15);
  {
    /* An intercept of 0.3 ns (below the 1 ns a profile's launch cost can be) is no launch cost:
     * refitted through the origin, launch 0, and the gate passes the fit. */
    double tb[M];
    for (int i = 0; i < M; i++) tb[i] = 3e-10 + eb[i] / 1.13e10;
    fit_roofline tiny;
    char why[256];
    int keep;
    rc = fit_roofline_ewise(eb, tb, M, &tiny, &e);
    truth("roofline ewise: a 0.3 ns intercept becomes launch 0", rc == 0 && tiny.launch_s == 0);
    near("roofline ewise: ... the bandwidth through the origin", tiny.mem_bw_Bps, 1.13e10, 0.01);
    truth("roofline ewise: ... and the gate passes it", fit_roofline_poor(&tiny, 0, why, sizeof why, &keep) == 0);
  }
  double gf[M], gb[M], gt[M];
  fit_roofline want = {.launch_s = 3.1e-6, .rate_flops = 8.74e10, .mem_bw_Bps = 1.13e10};
  int dims[M][3] = {{8, 8, 8},       {16, 16, 16},    {32, 32, 32},      {64, 64, 64},
                    {128, 128, 128}, {256, 256, 256}, {512, 512, 512},   {1024, 32, 1024},
                    {4096, 1, 4096}, {4096, 8, 64},   {2048, 2048, 128}, {768, 256, 1536}};
  for (int i = 0; i < M; i++) {
    double m = dims[i][0], n = dims[i][1], k = dims[i][2];
    gf[i] = 2 * m * n * k;
    gb[i] = 4 * (m * k + k * n + m * n);
    gt[i] = fit_roofline_time(&want, gf[i], gb[i]) * (1 + gsl_ran_gaussian(rng, 0.01));
  }
  fit_roofline g;
  rc = fit_roofline_gemm(gf, gb, gt, M, 1.13e10, &g, &e);
  truth("roofline gemm: fit succeeds", rc == 0);
  near("roofline gemm: rate (peak_flops * efficiency)", g.rate_flops, 8.74e10, 0.03);
  near("roofline gemm: launch_s", g.launch_s, 3.1e-6, 0.3);
  truth("roofline gemm: the matrix-vector shape is found memory-bound", g.compute_bound < M);
  truth("roofline gemm: rms residual near the 1% noise", g.rms_rel < 0.03);

  /* 5. Table: exact at measured sizes, rate interpolated in log(size), fallback outside. */
  double ts[4] = {1e3, 1e6, 1e6, 1e9}, tt[4] = {2e-6, 1.1e-4, 0.9e-4, 2.5e-2};
  double sb[4], tb[4];
  fit_table tab = {.size = sb, .time_s = tb};
  rc = fit_table_build(ts, tt, 4, &tab, &e);
  truth("table: built, equal sizes merged", rc == 0 && tab.n == 3);
  int ex;
  near("table: a measured size costs its (mean) measured time", fit_table_time(&tab, 1e6, 1.0, &ex), 1e-4, 1e-12);
  truth("table: ... and is not extrapolated", !ex);
  /* Half-way in log between 1e6 (rate 1e10) and 1e9 (rate 4e10): rate 2.5e10. */
  near("table: rate interpolated linearly in log(size)", fit_table_time(&tab, sqrt(1e15), 1.0, &ex),
       sqrt(1e15) / 2.5e10, 1e-12);
  near("table: outside the range the fallback is used", fit_table_time(&tab, 1e10, 0.37, &ex), 0.37, 0);
  truth("table: ... and reported as extrapolated", ex == 1);

  /* Quality gates (docs/calib.md): a good fit passes; the fit (a regime at -6455 us/hop,
   * 1459.6% rms over the sweep) is refused, and why is said; values ddpsim's loader refuses cannot
   * be kept at all. */
  {
    char why[512];
    int keep;
    fit_ring_result g = {.nranks = 2, .nregimes = 2, .lat_s = 3.7e-7, .bw_Bps = 6.35e9, .rms_rel = 0.46, .max_rel = 0.77};
    g.regime[0] = (fit_regime){.min_bytes = 8, .max_bytes = 128, .lat_s = 3.7e-7, .bw_Bps = INFINITY, .rms_rel = 0.61};
    g.regime[1] = (fit_regime){.min_bytes = 512, .max_bytes = 524288, .lat_s = 2.85e-7, .bw_Bps = 6.35e9, .rms_rel = 0.28};
    truth("gate: a noisy but sound CPU sweep (46% rms) passes", fit_ring_poor(&g, why, sizeof why, &keep) == 0);
    fit_ring_result bad = g;
    bad.regime[1].lat_s = -6455e-6, bad.regime[1].bw_Bps = 2e9, bad.regime[1].min_bytes = 4096;
    int poor = fit_ring_poor(&bad, why, sizeof why, &keep);
    printf("     | %s\n", why);
    truth("gate: a regime at -6455 us/hop (negative time at its smallest size) is poor, keepable",
          poor && keep && strstr(why, "negative time at its own smallest size (intercept -6455 us/hop)"));
    bad = g;
    bad.rms_rel = 14.596;
    poor = fit_ring_poor(&bad, why, sizeof why, &keep);
    truth("gate: 1459.6% rms over the sweep is poor, keepable",
          poor && keep && strstr(why, "misses the sweep by 1459.6% rms, above the 100% threshold"));
    bad = g;
    bad.rms_rel = 1.0;
    truth("gate: exactly at the threshold passes (<= 100%)", fit_ring_poor(&bad, why, sizeof why, &keep) == 0);
    bad.regime[0].rms_rel = 1.02;
    truth("gate: one regime above the threshold is poor", fit_ring_poor(&bad, why, sizeof why, &keep) && keep);
    bad = g;
    bad.lat_s = 1e-300;
    poor = fit_ring_poor(&bad, why, sizeof why, &keep);
    truth("gate: a latency of 1e-300 s cannot be kept (the loader refuses it)", poor && !keep && strstr(why, "latency"));
    bad = g;
    bad.bw_Bps = 1e308;
    poor = fit_ring_poor(&bad, why, sizeof why, &keep);
    truth("gate: a bandwidth of 1e308 B/s cannot be kept", poor && !keep && strstr(why, "bandwidth"));

    fit_roofline r = {.launch_s = 1.4e-7, .rate_flops = 9.1e10, .mem_bw_Bps = 2.0e11, .rms_rel = 0.39};
    truth("gate: a CPU roofline at 39% rms passes", fit_roofline_poor(&r, 1, why, sizeof why, &keep) == 0);
    r.rms_rel = 2.5;
    poor = fit_roofline_poor(&r, 1, why, sizeof why, &keep);
    truth("gate: a roofline at 250% rms is poor, keepable", poor && keep && strstr(why, "250.0% rms"));
    r.rms_rel = 0.39, r.rate_flops = 3;
    poor = fit_roofline_poor(&r, 1, why, sizeof why, &keep);
    truth("gate: a gemm rate of 3 flop/s cannot be kept", poor && !keep && strstr(why, "rate 3 flop/s"));
    truth("gate: ... but an ewise roofline ignores the rate", fit_roofline_poor(&r, 0, why, sizeof why, &keep) == 0);
  }

  gsl_rng_free(rng);
  return check_status();
}
