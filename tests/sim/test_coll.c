/* The collectives table (sim/coll.h): each row against NCCL's own step counts (src/graph/tuning.cc:
 * nsteps = 2(n-1) for all-reduce, n-1 for all-gather and reduce-scatter, n for broadcast with
 * nInterSteps = nNodes; trees for all-reduce only, PAT for all-gather and reduce-scatter only), NCCL's
 * cost of each row worked by hand on the bundled V100 profile, and the engine running each row in
 * both fidelities (and PAT's rows at one GPU per node): flow equals NCCL's estimate, step is within
 * 2% of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "data.h"
#include "engine.h"
#include "fixtures.h"
#include "plan.h"
#include "readout.h"

/* What NCCL's tuning.cc says of each collective, written out independently of the table. */
static const struct {
  const char *name;
  int steps_per_rank; /* nsteps = steps_per_rank x (n - 1) + plus */
  int plus;           /* broadcast: nsteps = nRanks, nInterSteps = nNodes */
  int tree;
  int pat; /* tuning.cc at v2.23.4-1, lines 171-174 */
} nccl_says[] = {
    {"allreduce", 2, 0, 1, 0},
    {"allgather", 1, 0, 0, 1},
    {"reducescatter", 1, 0, 0, 1},
    {"broadcast", 1, 1, 0, 0},
};
#define NKINDS ((int)(sizeof nccl_says / sizeof *nccl_says))

int main(void) {
  err_t e;
  topo_t *t = fixture_bundled_topo("dgx1v-ib");
  profile_t *p = fixture_bundled_profile("v100-dgx1v");
  CHECK(NKINDS == COLL_NKINDS, "the table has the %d collectives NCCL's costs are written out for here (%d)", NKINDS, COLL_NKINDS);

  /* The rows. */
  for (int k = 0; k < NKINDS && k < COLL_NKINDS; k++) {
    const coll_desc *d = coll_get((coll_kind)k);
    CHECK(d && strcmp(d->name, nccl_says[k].name) == 0 && coll_by_name(nccl_says[k].name) == k, "row %d is %s", k, nccl_says[k].name);
    CHECK(coll_ring_steps((coll_kind)k, 1024) == nccl_says[k].steps_per_rank * 1023 + nccl_says[k].plus &&
              coll_ring_steps((coll_kind)k, 1) == 0 &&
              coll_ring_inter_steps((coll_kind)k, 128) == nccl_says[k].steps_per_rank * 127 + nccl_says[k].plus,
          "%s: %d x (n - 1) + %d steps, %d x (nodes - 1) + %d across nodes", nccl_says[k].name, nccl_says[k].steps_per_rank,
          nccl_says[k].plus, nccl_says[k].steps_per_rank, nccl_says[k].plus);
  }
  CHECK(coll_get(COLL_NKINDS) == NULL && coll_by_name("alltoall") == -1, "no row beyond the table");

  /* NCCL's cost of each, by hand: ring/Simple on 4 nodes of 8 GPUs, 4 channels of 12 GB/s. */
  nccl_model m;
  int rc = nccl_model_init(&m, p, t, 4, 8, 4, 48e9, 48e9, &e);
  CHECK(rc == 0, "nccl model: %s", rc ? e.msg : "ok");
  const double S = 96.5 * 1024 * 1024;
  for (int k = 0; rc == 0 && k < NKINDS; k++) {
    nccl_choice ch;
    int q = NCCL_PROTO_SIMPLE, a = NCCL_ALGO_RING, n = 32, nodes = 4;
    int r2 = nccl_choose(&m, (coll_kind)k, S, 1u << a, 1u << q, &ch, &e);
    double steps = nccl_says[k].steps_per_rank * (n - 1.0) + nccl_says[k].plus,
           inter = nccl_says[k].steps_per_rank * (nodes - 1.0) + nccl_says[k].plus;
    double lat = m.base_lat_s[a][q] + (steps - inter) * m.hop_intra_s[a][q] + inter * m.hop_net_s[a][q];
    if (k == COLL_ALLREDUCE) lat *= 1.9; /* NCCL 2.7's ring plateau: all-reduce only */
    double want = lat + steps / n * S / (m.bw_factor[a][q] * 48e9);
    CHECK(r2 == 0 && check_close(want, ch.time_s, 0, 1e-12) && ch.steps == (long)steps,
          "%s of %.1f MiB on 4 x 8 GPUs, ring/Simple: %.9g s, by hand %.9g s", nccl_says[k].name, S / 1048576, r2 ? -1 : ch.time_s,
          want);
    r2 = nccl_choose(&m, (coll_kind)k, S, 1u << NCCL_ALGO_TREE, NCCL_ALL_PROTOS, &ch, &e);
    CHECK((r2 == 0) == nccl_says[k].tree, "%s: a tree %s", nccl_says[k].name, nccl_says[k].tree ? "runs" : "is refused");
    CHECK(nccl_algo_runs(NCCL_ALGO_RING, (coll_kind)k, NCCL_PROTO_LL) && nccl_algo_runs(NCCL_ALGO_TREE, (coll_kind)k, NCCL_PROTO_SIMPLE) == nccl_says[k].tree &&
              nccl_algo_runs(NCCL_ALGO_PAT, (coll_kind)k, NCCL_PROTO_SIMPLE) == nccl_says[k].pat &&
              !nccl_algo_runs(NCCL_ALGO_PAT, (coll_kind)k, NCCL_PROTO_LL),
          "%s: the algorithm rows run it as a ring%s%s", nccl_says[k].name, nccl_says[k].tree ? ", a tree" : "",
          nccl_says[k].pat ? ", PAT (Simple)" : "");
  }

  /* PAT by hand, 4 nodes of 1 GPU (its rule), 4 channels of 12 GB/s: 8 us + log2(4) x the network's
   * tree/Simple hop / 3.5 + 4 x 2.8 us + S / (0.85 bw) (tuning.cc at v2.23.4-1); refused on 8 GPUs
   * per node (the model above). */
  nccl_model m1;
  rc = nccl_model_init(&m1, p, t, 4, 1, 4, 0, 48e9, &e);
  for (int k = 0; rc == 0 && k < NKINDS; k++) {
    nccl_choice ch;
    int r2 = nccl_choose(&m1, (coll_kind)k, S, 1u << NCCL_ALGO_PAT, NCCL_ALL_PROTOS, &ch, &e);
    double lat = 8e-6 + 2 * m1.hop_net_s[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] / 3.5 + 4 * 2.8e-6, want = lat + S / (0.85 * 48e9);
    if (!nccl_says[k].pat) {
      CHECK(r2 == ERR_INPUT, "%s: PAT is refused", nccl_says[k].name);
      continue;
    }
    CHECK(r2 == 0 && m1.hop_net_s[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] == 50e-6 && check_close(want, ch.time_s, 0, 1e-12) && ch.steps == 3,
          "%s of %.1f MiB on 4 x 1 GPU, pat/Simple: %.9g s, by hand %.9g s, %ld steps", nccl_says[k].name, S / 1048576, r2 ? -1 : ch.time_s,
          want, r2 ? 0 : ch.steps);
    nccl_choice c8;
    CHECK(nccl_choose(&m, (coll_kind)k, S, 1u << NCCL_ALGO_PAT, NCCL_ALL_PROTOS, &c8, &e) == ERR_INPUT,
          "%s on 8 GPUs per node: PAT is refused", nccl_says[k].name);
  }

  /* The engine runs each row: a plan whose one bucket runs that collective. */
  model_t *mod = fixture_model("ddpsim-model 1\nname one\nbatch 1\ntokens 1 tokens\nprecision fp32\nparam p 25165824\n"
                               "backward\newise g elems=1 arrays=1 ready=p\n",
                               "one.model");
  for (int k = 0; k < NKINDS + 3; k++)
    for (int f = 0; f < 2; f++) {
      /* Rows NKINDS and NKINDS + 1: all-gather and reduce-scatter as PAT, at one GPU per node; row
       * NKINDS + 2: the all-reduce as hier (not NCCL's: its phases on the nodes' rings and between
       * the nodes, each at its estimate on the idle network). */
      int pat = k == NKINDS || k == NKINDS + 1, hier = k == NKINDS + 2;
      coll_kind kind = pat ? (k == NKINDS ? COLL_ALLGATHER : COLL_REDUCESCATTER) : hier ? COLL_ALLREDUCE : (coll_kind)k;
      sim_config c;
      fixture_config(&c, mod, t, p, pat ? 4 : 3, pat ? 1 : 0);
      c.iterations = 1;
      c.fidelity = f ? SIM_FIDELITY_STEP : SIM_FIDELITY_FLOW;
      c.bucket_cap_mb = c.first_bucket_mb = 1024;
      if (hier) c.nccl_algos = 1u << NCCL_ALGO_HIER; /* planned with its rings inside and between the nodes */
      plan_t pl;
      record_t rec;
      sim_result r;
      memset(&r, 0, sizeof r);
      int ok = plan_build(&c, &pl, &e) == 0;
      if (ok && (pat || hier)) pl.algos = 1u << (pat ? NCCL_ALGO_PAT : NCCL_ALGO_HIER); /* the plan's were NCCL's own choice */
      ok = ok && plan_bucket_coll(&pl, 0, kind, (double)pl.buckets.b[0].bytes, &e) == 0;
      ok = ok && engine_run(&pl, &rec, &e) == 0;
      if (ok) {
        ok = readout_ddp(&pl, &rec, &r, &e) == 0;
        record_free(&rec);
      }
      if (!ok) {
        CHECK(0, "%s: %s", nccl_says[kind].name, e.msg);
        continue;
      }
      /* Flow: NCCL's estimate up to the whole byte each channel's flow is rounded up to (plan.c). */
      double got = r.buckets[0].comm_end_s - r.buckets[0].comm_start_s, want = pl.coll[0].estimate_s, byte_s = pl.ch.count / pl.ring_bw_Bps;
      CHECK(pl.coll[0].kind == kind && pl.coll[0].algo == (pat ? NCCL_ALGO_PAT : hier ? NCCL_ALGO_HIER : pl.coll[0].algo) &&
                check_close(want, got, f ? 0 : byte_s, f ? 0.02 : 1e-9),
            "%s of 96 MiB on %s, %s fidelity, %s/%s: %.9g s, NCCL's estimate %.9g s", nccl_says[kind].name, pat ? "4 x 1 GPU" : "3 x 8 GPUs",
            f ? "step" : "flow",
            nccl_algo_name(pl.coll[0].algo), nccl_proto_name(pl.coll[0].proto), got, want);
      sim_result_free(&r);
      plan_free(&pl);
    }
  model_destroy(mod);
  topo_destroy(t);
  profile_destroy(p);
  return check_status();
}
