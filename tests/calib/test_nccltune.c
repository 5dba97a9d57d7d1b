/* nccltune recovers NCCL's per-algorithm/protocol parameters from synthetic sweeps generated with
 * ddpsim's model (sim/ncclmodel.h, written out again here, not taken from the library) from known,
 * uneven parameters with 1% multiplicative noise (fixed-seed GSL RNG); then every error path and
 * both clamps. One line per check; exits 1 if any check fails.
 *
 * Usage: test_calib_nccltune            the checks
 *        test_calib_nccltune write DIR  also writes DIR/nccl-nvlink.json (8 GPUs on one node) and
 *                                       DIR/nccl-ib-edr.json (2 nodes x 4) through record_comm and
 *                                       record_nccl, for test_ddpsim.sh to give to ddpsim (no GPU
 *                                       here can produce them through ddpcalib comm --nccl-tuning).
 *
 * Tolerances. bw_factor: 3% (relative). It is a ratio of two slopes (this combination's and
 * ring/Simple's), each fitted on the ~10 bandwidth-bound sizes at 1% noise (about 0.5% each).
 * base_lat_s: 2% of the measured latency c0 (absolute). The base is c0 minus the assumed hop terms,
 * which are up to 97% of c0 (tree/Simple: 14 NVLink hops of 28 us against a base of 11.7 us), so
 * an error relative to the base alone would measure the hops, not the fit; c0 itself is fitted on
 * ~15 latency-bound sizes at 1% noise (about 0.3%). */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "commbench.h"
#include "nccltune.h"
#include "profilew.h"
#include "record.h"

enum { N = 26 }; /* 8 B .. 256 MiB, factor 2 */

/* The truth: ddpsim's model (sim/ncclmodel.h), independent of the library (nccl_time_s, which nccltune uses). */
typedef struct {
  int n, nodes, g;
  double bw, hop_intra[NCCL_NALGO][3], hop_net[NCCL_NALGO][3]; /* nccl_hw_hops' rows; ring and tree used */
  double base[2][3], f[2][3];
} truth_t;

static int floor_log2(int v) {
  int l = 0;
  while (v >>= 1) l++;
  return l;
}

static double c0_of(const truth_t *t, int a, int q) {
  if (a == 0)
    return t->base[a][q] + (2 * (t->n - 1) - 2 * (t->nodes - 1)) * t->hop_intra[a][q] +
           2 * (t->nodes - 1) * t->hop_net[a][q];
  return t->base[a][q] + 2 * ((t->g - 1) * t->hop_intra[a][q] + floor_log2(t->nodes) * t->hop_net[a][q]);
}

static double truth_time(const truth_t *t, int a, int q, double s) {
  double edge = a == 0 ? 2.0 * (t->n - 1) / t->n * s : 2.0 * s;
  return c0_of(t, a, q) + edge / (t->f[a][q] * t->bw);
}

static double bytes[N], times[NCCL_NALGO][3][N]; /* ring and tree: the all-reduce sweeps */

static void generate(gsl_rng *rng, const truth_t *t) {
  for (int i = 0; i < N; i++) bytes[i] = 8.0 * pow(2.0, i);
  for (int a = 0; a < 2; a++)
    for (int q = 0; q < 3; q++)
      for (int i = 0; i < N; i++) times[a][q][i] = truth_time(t, a, q, bytes[i]) * (1 + gsl_ran_gaussian(rng, 0.01));
}

/* The link's bandwidth as ddpcalib gets it: fit_ring on the ring/Simple sweep. */
static double ring_simple_bw(int n, err_t *e) {
  fit_ring_result r;
  if (fit_ring(bytes, times[0][2], N, n, NULL, &r, e)) return 0;
  return r.bw_Bps;
}

static void setup_from(const truth_t *t, double bw, nccltune_setup *s, nccltune_sweep sw[NCCL_NALGO][3]) {
  memset(s, 0, sizeof *s);
  s->nranks = t->n;
  s->nodes = t->nodes;
  s->gpus_per_node = t->g;
  s->bw_Bps = bw;
  memcpy(s->hop_intra_s, t->hop_intra, sizeof s->hop_intra_s);
  memcpy(s->hop_net_s, t->hop_net, sizeof s->hop_net_s);
  for (int a = 0; a < 2; a++)
    for (int q = 0; q < 3; q++) sw[a][q] = (nccltune_sweep){.bytes = bytes, .time_s = times[a][q], .n = N};
}

static void check_recovery(const char *label, const truth_t *t, const nccltune_result *r, int a, int q) {
  char what[160];
  const nccltune_combo *c = &r->c[a][q];
  snprintf(what, sizeof what, "%s %s/%s: enabled", label, nccl_algo_name(a), nccl_proto_name(q));
  truth(what, c->enabled);
  snprintf(what, sizeof what, "%s %s/%s: bw_factor", label, nccl_algo_name(a), nccl_proto_name(q));
  near(what, c->bw_factor, t->f[a][q], 0.03);
  snprintf(what, sizeof what, "%s %s/%s: base_lat_s (tol 2%% of c0 %.3g s)", label, nccl_algo_name(a), nccl_proto_name(q), c0_of(t, a, q));
  within(what, c->base_fit_s, t->base[a][q], 0.02 * c0_of(t, a, q));
  snprintf(what, sizeof what, "%s %s/%s: no clamp, residual near the 1%% noise", label, nccl_algo_name(a), nccl_proto_name(q));
  truth(what, !c->base_clamped && !c->bw_clamped && c->rms_rel < 0.02);
}

/* A profile with comm.links.<cls> (the ring/Simple sweep) and comm.nccl, as ddpcalib comm
 * --nccl-tuning writes it. */
static int write_profile(const char *path, const char *cls, const nccltune_setup *s, const nccltune_result *r,
                         err_t *e) {
  commbench_result res[NCCL_NALGO][3] = {{{0}}};
  commbench_row rows[2][3][N];
  for (int a = 0; a < 2; a++)
    for (int q = 0; q < 3; q++) {
      res[a][q] = (commbench_result){.nrows = N, .rows = rows[a][q], .nranks = s->nranks, .wrong = -1};
      for (int i = 0; i < N; i++) {
        double *tm = &times[a][q][i];
        rows[a][q][i] = (commbench_row){.bytes = (size_t)bytes[i], .count = (size_t)bytes[i] / 4, .mean_s = *tm,
                                        .median_s = *tm, .min_s = *tm, .max_s = *tm, .wrong = -1, .samples_s = tm,
                                        .algbw_GBps = bytes[i] / *tm / 1e9};
      }
    }
  commbench_backend b = {.name = "nccl", .nranks = s->nranks, .nhosts = s->nodes, .is_root = 1};
  commbench_cfg cfg = {.min_bytes = 8, .max_bytes = (size_t)bytes[N - 1], .factor = 2, .iters = 1};
  fit_ring_result fit;
  profilew_prov p = {.subcommand = "comm", .devices = "synthetic (test_calib_nccltune)"};
  cJSON *doc = profilew_new("synthetic-nccl", &p);
  int rc = doc ? ERR_OK : err_set(e, ERR_NOMEM, "out of memory");
  if (!rc) rc = fit_ring(bytes, times[0][2], N, s->nranks, NULL, &fit, e);
  if (!rc) rc = record_comm(doc, cls, &b, &cfg, &res[0][2], &fit, 1, NULL, e);
  if (!rc)
    rc = record_nccl(doc, cls, "assumed: NCCL tuning.cc hwLat (test_calib_nccltune)", s, r, &cfg,
                     (const commbench_result(*)[3])res, e);
  if (!rc) rc = profilew_write(doc, path, e);
  cJSON_Delete(doc);
  return rc;
}

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  const char *outdir = argc == 3 && strcmp(argv[1], "write") == 0 ? argv[2] : NULL;
  if (argc != 1 && !outdir) {
    fprintf(stderr, "usage: test_calib_nccltune [write DIR]\n");
    return 2;
  }
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 20250611);
  err_t e = {{0}};
  int rc;

  /* 1. One node of 8 GPUs over NVLink (hops: NCCL's NVLink row), link 19.3 GB/s, all six. */
  truth_t one = {.n = 8, .nodes = 1, .g = 8, .bw = 1.93e10,
                 .base = {{4.13e-6, 7.31e-6, 8.77e-6}, {5.29e-6, 3.87e-6, 1.17e-5}},
                 .f = {{0.247, 0.917, 1.0}, {0.231, 0.813, 0.874}}};
  nccl_hw_hops(NCCL_HW_NVLINK, one.hop_intra);
  nccl_hw_hops(NCCL_HW_NET, one.hop_net);
  generate(rng, &one);
  double bw = ring_simple_bw(8, &e);
  near("one node: link bandwidth from the ring/Simple sweep", bw, 1.93e10, 0.02);
  nccltune_setup s;
  nccltune_sweep sw[NCCL_NALGO][3] = {{{0}}};
  nccltune_result r;
  setup_from(&one, bw, &s, sw);
  rc = nccltune_fit(&s, (const nccltune_sweep(*)[3])sw, NULL, &r, &e);
  truth("one node: fit succeeds", rc == 0);
  if (rc) printf("     | %s\n", e.msg);
  truth("one node: all six combinations enabled", r.nenabled == 6);
  near("one node: ring/Simple bw_factor is 1 (bw is its own)", r.c[0][2].bw_factor, 1.0, 1e-9);
  for (int a = 0; a < 2; a++)
    for (int q = 0; q < 3; q++) check_recovery("one node:", &one, &r, a, q);
  near("one node: hop terms of tree/Simple = 2 (G-1) x 28 us", r.c[1][2].hops_s, 2 * 7 * 28e-6, 1e-12);
  near("one node: hop terms of ring/LL = 2(n-1) x 0.47 us", r.c[0][0].hops_s, 14 * 0.47e-6, 1e-12);
  nccltune_result r1 = r;
  nccltune_setup s1 = s;
  if (outdir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/nccl-nvlink.json", outdir);
    rc = write_profile(path, "nvlink", &s1, &r1, &e);
    truth("write: nccl-nvlink.json", rc == 0);
    if (rc) printf("     | %s\n", e.msg);
  }

  /* 2. Two nodes x 4 GPUs: intra hops NVLink, network hops NET; tree/LL and ring/LL128 refused. */
  truth_t two = {.n = 8, .nodes = 2, .g = 4, .bw = 1.137e10,
                 .base = {{6.71e-6, 1.0e-5, 1.433e-5}, {7.7e-6, 9.1e-6, 2.39e-5}},
                 .f = {{0.241, 0.9, 1.0}, {0.2, 0.7, 0.887}}};
  nccl_hw_hops(NCCL_HW_NVLINK, two.hop_intra);
  nccl_hw_hops(NCCL_HW_NET, two.hop_net);
  generate(rng, &two);
  bw = ring_simple_bw(8, &e);
  setup_from(&two, bw, &s, sw);
  sw[1][0].refused = 1;
  sw[0][1].refused = 1;
  rc = nccltune_fit(&s, (const nccltune_sweep(*)[3])sw, NULL, &r, &e);
  truth("two nodes: fit succeeds with two combinations refused", rc == 0);
  truth("two nodes: four enabled, the refused ones disabled", r.nenabled == 4 && !r.c[1][0].enabled && !r.c[0][1].enabled);
  near("two nodes: ring hops = 12 x NVLink + 2 x network (Simple)", r.c[0][2].hops_s, 12 * 3.4e-6 + 2 * 9.6e-6, 1e-12);
  near("two nodes: tree hops = 2 (3 x NVLink + 1 x network) (LL128)", r.c[1][1].hops_s, 2 * (3 * 1.2e-6 + 8.5e-6), 1e-12);
  check_recovery("two nodes:", &two, &r, 0, 0);
  check_recovery("two nodes:", &two, &r, 0, 2);
  check_recovery("two nodes:", &two, &r, 1, 1);
  check_recovery("two nodes:", &two, &r, 1, 2);
  if (outdir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/nccl-ib-edr.json", outdir);
    rc = write_profile(path, "ib-edr", &s, &r, &e);
    truth("write: nccl-ib-edr.json", rc == 0);
    if (rc) printf("     | %s\n", e.msg);
  }

  /* 3. Clamps: hops assumed larger than the measured latency; a combination outrunning ring/Simple. */
  generate(rng, &one);
  setup_from(&one, 1.93e10, &s, sw);
  s.hop_intra_s[1][2] = 40e-6; /* 14 x 40 us = 560 us > c0 = 404 us */
  rc = nccltune_fit(&s, (const nccltune_sweep(*)[3])sw, NULL, &r, &e);
  truth("clamp: fit succeeds", rc == 0);
  truth("clamp: tree/Simple base below 0 is recorded as 0 and flagged",
        r.c[1][2].base_clamped && r.c[1][2].base_lat_s == 0 && r.c[1][2].base_fit_s < -1.4e-4);
  truth("clamp: ... its residual shows the cost (> 10%)", r.c[1][2].max_rel > 0.1);
  truth("clamp: the other combinations are not clamped", !r.c[0][2].base_clamped && !r.c[1][1].base_clamped);
  one.f[1][1] = 1.61; /* tree/LL128 faster than ring/Simple */
  generate(rng, &one);
  setup_from(&one, 1.93e10, &s, sw);
  rc = nccltune_fit(&s, (const nccltune_sweep(*)[3])sw, NULL, &r, &e);
  truth("clamp: bw_factor above 1 is recorded as 1 and flagged",
        rc == 0 && r.c[1][1].bw_clamped && r.c[1][1].bw_factor == 1.0);
  near("clamp: ... keeping the fitted value", r.c[1][1].bw_factor_fit, 1.61, 0.03);

  /* 4. Errors, each naming the combination. */
  setup_from(&one, 1.93e10, &s, sw);
  sw[1][0].n = 2;
  rc = nccltune_fit(&s, (const nccltune_sweep(*)[3])sw, NULL, &r, &e);
  truth("error: two sizes are too few (names tree/LL)", rc == ERR_RUNTIME && strstr(e.msg, "tree/LL:") && strstr(e.msg, "at least 3"));
  printf("     | %s\n", e.msg);
  double flat[N];
  for (int i = 0; i < N; i++) flat[i] = 2.3e-5 * (1 + 0.001 * (i % 3));
  setup_from(&one, 1.93e10, &s, sw);
  sw[0][1].time_s = flat;
  rc = nccltune_fit(&s, (const nccltune_sweep(*)[3])sw, NULL, &r, &e);
  truth("error: time not growing with size (names ring/LL128)",
        rc == ERR_RUNTIME && strstr(e.msg, "ring/LL128:") && strstr(e.msg, "bandwidth"));
  printf("     | %s\n", e.msg);
  setup_from(&one, 1.93e10, &s, sw);
  for (int a = 0; a < 2; a++)
    for (int q = 0; q < 3; q++) sw[a][q].refused = 1;
  rc = nccltune_fit(&s, (const nccltune_sweep(*)[3])sw, NULL, &r, &e);
  truth("error: every combination refused", rc == ERR_RUNTIME && strstr(e.msg, "refused every"));
  printf("     | %s\n", e.msg);
  setup_from(&one, 1.93e10, &s, sw);
  s.gpus_per_node = 3;
  rc = nccltune_fit(&s, (const nccltune_sweep(*)[3])sw, NULL, &r, &e);
  truth("error: 8 ranks are not 1 node x 3", rc == ERR_RUNTIME && strstr(e.msg, "not 1 node(s) x 3"));
  setup_from(&one, 0, &s, sw);
  rc = nccltune_fit(&s, (const nccltune_sweep(*)[3])sw, NULL, &r, &e);
  truth("error: no link bandwidth", rc == ERR_RUNTIME && strstr(e.msg, "bandwidth"));
  setup_from(&one, 1.93e10, &s, sw);
  s.hop_net_s[0][0] = -1e-6;
  rc = nccltune_fit(&s, (const nccltune_sweep(*)[3])sw, NULL, &r, &e);
  truth("error: a negative hop latency (names ring/LL)", rc == ERR_RUNTIME && strstr(e.msg, "ring/LL:"));

  gsl_rng_free(rng);
  return check_status();
}
