/* The engine at scale: symmetry and the two fidelities.
 *
 * 1. Symmetry: where no jitter tells nodes apart, 2 simulated nodes stand for N (sim/plan.h). The
 *    reduced run must give what the full run gives: the iteration and every bucket's ready, start
 *    and end, on the bundled ResNet-50 and mLSTM-4k, DGX-1V over InfiniBand and over an
 *    oversubscribed switch (a backbone all nodes share), 3 to 6 nodes, both fidelities.
 * 2. The fidelities model the same latencies: one all-reduce of every size from 1 KiB to 256 MiB on
 *    8, 128 and 1,024 V100s (1, 16 and 128 DGX-1V over InfiniBand, the bundled profile, NCCL
 *    choosing as it would) takes the same time in step and flow fidelity, within 2%, and flow
 *    fidelity equals NCCL's own estimate on the idle network (to whole bytes per message).
 * 3. The plan can be printed, and says what is simulated.
 * 4. predict's simulation.wall_s covers every simulation it ran (the run, its 1-GPU twin, the
 *    Reducer's first iterations): at least 90% of predict's wall time measured around it, never more.
 * 5. Compute that shares the GPU with a collective (sim/program.h, PROG_COMPUTE's slow): backward's
 *    segments, slowed by s while a bucket's all-reduce of C seconds runs beside them, end C x s later
 *    and the collective where it did; the same slowdown on forward, which no collective overlaps,
 *    changes nothing; with the bundled card's sharing, the closed form equals the events.
 * 6. Switched nodes (DGX A100: every GPU's link to the NVSwitch carries its flows to several
 *    successors, and a node's merged NIC link its four rings out): the pairs sharing links form
 *    groups, each leaving from one node; a full simulation with jitter, and one with host noise
 *    sharing the GPU, give in closed form (the groups' flows played max-min) what the events give.
 * 7. The closed form of the plans no jitter tells apart (one GPU, one node, 2 nodes, symmetry)
 *    equals the events. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "data.h"
#include "engine.h"
#include "fixtures.h"
#include "maxplus.h"
#include "plan.h"
#include "platform.h"
#include "predict.h"
#include "readout.h"
#include "sim.h"
#include "wall.h"

static profile_t *P;
static topo_t *T_IB, *T_OVER;
static model_t *M_RESNET, *M_MLSTM;

static int load(void) {
  M_RESNET = fixture_bundled_model("resnet50");
  M_MLSTM = fixture_bundled_model("mlstm-4k");
  T_IB = fixture_bundled_topo("dgx1v-ib");
  P = fixture_bundled_profile("v100-dgx1v");
  /* The same node behind a switch whose backbone carries 300 Gb/s in all: less than 2 nodes' NICs. */
  FILE *f = fopen(T_IB->path, "r");
  if (!f) return -1;
  char text[8192];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  char *sw = strstr(text, "switch nonblocking");
  if (!sw) return -1;
  char over[8192];
  snprintf(over, sizeof over, "%.*sswitch bw=300Gbps%s", (int)(sw - text), text, sw + strlen("switch nonblocking"));
  T_OVER = fixture_topo(over, "over.topo");
  return 0;
}

/* |a - b| relative to a (times of a millisecond or more here). */
static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(a), 1e-9); }

static int run(const model_t *m, const topo_t *t, int nodes, sim_fidelity f, int symmetry, unsigned algos, sim_result *r) {
  sim_config c;
  fixture_config(&c, m, t, P, nodes, 0);
  c.nccl_algos = algos;
  c.fidelity = f;
  c.iterations = 2;
  c.symmetry = symmetry;
  err_t e;
  int rc = sim_run(&c, r, &e);
  if (rc) printf("      sim_run: %s\n", e.msg);
  return rc;
}

static void symmetry_matches_full(void) {
  static const struct {
    const model_t **m;
    const char *name;
    topo_t **t;
    int nodes;
    sim_fidelity f;
    unsigned algos; /* NCCL_ALGO's choice (0: NCCL's own) */
  } cases[] = {
      {(const model_t **)&M_RESNET, "resnet50", &T_IB, 3, SIM_FIDELITY_FLOW, 0},
      {(const model_t **)&M_RESNET, "resnet50", &T_IB, 6, SIM_FIDELITY_FLOW, 0},
      {(const model_t **)&M_RESNET, "resnet50", &T_OVER, 5, SIM_FIDELITY_FLOW, 0},
      {(const model_t **)&M_MLSTM, "mlstm-4k", &T_OVER, 4, SIM_FIDELITY_FLOW, 0},
      {(const model_t **)&M_RESNET, "resnet50", &T_IB, 4, SIM_FIDELITY_STEP, 0},
      {(const model_t **)&M_MLSTM, "mlstm-4k", &T_OVER, 3, SIM_FIDELITY_STEP, 0},
      /* The hierarchical all-reduce's phases: rings inside the nodes and between them. */
      {(const model_t **)&M_RESNET, "resnet50 hier", &T_IB, 4, SIM_FIDELITY_FLOW, 1u << NCCL_ALGO_HIER},
      {(const model_t **)&M_MLSTM, "mlstm-4k hier", &T_OVER, 3, SIM_FIDELITY_STEP, 1u << NCCL_ALGO_HIER},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    sim_result full, sym;
    const char *topo = *cases[i].t == T_IB ? "dgx1v-ib" : "oversubscribed";
    const char *fid = cases[i].f == SIM_FIDELITY_STEP ? "step" : "flow";
    if (run(*cases[i].m, *cases[i].t, cases[i].nodes, cases[i].f, 0, cases[i].algos, &full) ||
        run(*cases[i].m, *cases[i].t, cases[i].nodes, cases[i].f, 1, cases[i].algos, &sym)) {
      CHECK(0, "%s, %s, %d nodes, %s: simulation failed", cases[i].name, topo, cases[i].nodes, fid);
      continue;
    }
    CHECK(full.ranks_simulated == full.gpus && sym.ranks_simulated == 16,
          "%s, %s, %d nodes, %s: full simulates %d GPUs, symmetric %d", cases[i].name, topo, cases[i].nodes, fid,
          full.ranks_simulated, sym.ranks_simulated);
    double worst = rel(full.iteration_s, sym.iteration_s);
    for (int b = 0; b < full.plan.n && b < sym.plan.n; b++) {
      const sim_bucket_time *x = &full.buckets[b], *y = &sym.buckets[b];
      double d[] = {rel(x->ready_s, y->ready_s), rel(x->comm_start_s, y->comm_start_s),
                    rel(x->comm_end_s, y->comm_end_s)};
      for (int k = 0; k < 3; k++)
        if (d[k] > worst) worst = d[k];
    }
    CHECK(full.plan.n == sym.plan.n && worst < 1e-9,
          "%s, %s, %d nodes, %s: iteration full %.9f s, symmetric %.9f s; worst relative difference %.2g over %d buckets",
          cases[i].name, topo, cases[i].nodes, fid, full.iteration_s, sym.iteration_s, worst, full.plan.n);
    if (cases[i].algos && cases[i].f == SIM_FIDELITY_FLOW) {
      /* On an idle network (one collective at a time, non-blocking switch), its phases take NCCL's
       * estimate of each: their sum, the composed estimate. */
      double off = 0;
      for (int b = 0; b < sym.plan.n; b++) {
        const sim_bucket_time *x = &sym.buckets[b];
        off = fmax(off, rel(x->nccl_estimate_s, x->comm_end_s - x->comm_start_s));
      }
      CHECK(sym.plan.n > 0 && sym.buckets[0].algo == NCCL_ALGO_HIER && off < 1e-5,
            "%s, %s, %d nodes: every bucket's phases take the composed estimate (worst %.2g)", cases[i].name, topo, cases[i].nodes, off);
    }
    sim_result_free(&full);
    sim_result_free(&sym);
  }
  /* Jitter tells the nodes apart: every GPU is simulated. */
  sim_config c;
  fixture_config(&c, M_RESNET, T_IB, P, 3, 0);
  c.jitter_cv = 0.05;
  sim_result r;
  err_t e;
  if (sim_run(&c, &r, &e) == 0) {
    CHECK(r.ranks_simulated == 24, "with jitter all 24 GPUs are simulated (%d)", r.ranks_simulated);
    sim_result_free(&r);
  } else {
    CHECK(0, "jitter run: %s", e.msg);
  }
}

/* A model whose one gradient of `bytes` is ready at once. */
static model_t *one_bucket(long bytes) {
  char text[512];
  snprintf(text, sizeof text,
           "ddpsim-model 1\nname one\nbatch 1\ntokens 1 tokens\nprecision fp32\nparam p %ld\nbackward\n"
           "ewise g elems=1 arrays=1 ready=p\n",
           bytes / 4);
  return fixture_model(text, "one.model");
}

static void fidelities_agree(void) {
  static const int nodes[] = {1, 16, 128};
  for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++)
    for (long bytes = 1024; bytes <= 256L << 20; bytes *= 8) {
      model_t *m = one_bucket(bytes);
      sim_result r[2];
      sim_config c;
      fixture_config(&c, m, T_IB, P, nodes[i], 0);
      c.iterations = 1;
      c.bucket_cap_mb = c.first_bucket_mb = 1024;
      err_t e;
      int ok = 1;
      for (int f = 0; f < 2 && ok; f++) {
        c.fidelity = f ? SIM_FIDELITY_STEP : SIM_FIDELITY_FLOW;
        if (sim_run(&c, &r[f], &e)) {
          printf("      sim_run: %s\n", e.msg);
          ok = 0;
          if (f) sim_result_free(&r[0]);
        }
      }
      if (!ok) {
        CHECK(0, "%d GPUs, %ld B: simulation failed", nodes[i] * 8, bytes);
        model_destroy(m);
        continue;
      }
      const sim_bucket_time *a = &r[0].buckets[0], *b = &r[1].buckets[0];
      double flow = a->comm_end_s - a->comm_start_s, step = b->comm_end_s - b->comm_start_s;
      /* Flow equals the estimate up to whole bytes per channel (a tiny bucket's edge rounds up). */
      CHECK(check_close(a->nccl_estimate_s, flow, 0, 1e-4) && check_close(flow, step, 0, 0.02),
            "%4d GPUs, %9ld B, %s/%s: flow %.6g s (NCCL's estimate %.6g s), step %.6g s (%+.2f%%)", nodes[i] * 8, bytes,
            nccl_algo_name((nccl_algo)a->algo), nccl_proto_name((nccl_proto)a->proto), flow, a->nccl_estimate_s, step,
            100 * (step / flow - 1));
      sim_result_free(&r[0]);
      sim_result_free(&r[1]);
      model_destroy(m);
    }
}

static void plan_prints(void) {
  sim_config c;
  fixture_config(&c, M_RESNET, T_IB, P, 64, 0);
  plan_t p;
  err_t e;
  if (plan_build(&c, &p, &e)) {
    CHECK(0, "plan_build: %s", e.msg);
    return;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  int rc = f ? plan_write(f, &p, &e) : ERR_IO;
  if (f) fclose(f);
  CHECK(rc == 0 && strstr(buf, "job 64 nodes x 8 GPUs = 512 ranks") && strstr(buf, "simulated 2 nodes (16 ranks)"),
        "the plan says what is simulated");
  int lines = 0;
  for (char *s = buf; s && (s = strstr(s, "\nbucket ")); s++) lines++;
  CHECK(lines == p.nb && p.nb > 1, "the plan has a line per bucket (%d of %d)", lines, p.nb);
  CHECK(buf && strstr(buf, " allreduce "), "each bucket names its collective");
  free(buf);
  plan_free(&p);
}

static void predict_wall_covers_all(void) {
  sim_config c;
  fixture_config(&c, M_MLSTM, T_IB, P, 2048, 0);
  c.iterations = 2;
  c.symmetry = 0; /* every GPU: the early iterations then cost as much as the run's own */
  predict_result r;
  err_t e;
  double t0 = wall_now_s();
  int rc = predict_run(&c, &r, &e);
  double outer = wall_now_s() - t0;
  CHECK(rc == 0, "predict of mlstm-4k on 16,384 GPUs, every GPU simulated%s%s", rc ? ": " : "", rc ? e.msg : "");
  if (rc) return;
  CHECK(r.nearly > 0 && r.single_gpu_iteration_s > 0, "it simulated the 1-GPU twin and %d early iteration(s)", r.nearly);
  CHECK(r.sim.wall_s <= outer && r.sim.wall_s >= 0.9 * outer,
        "simulation.wall_s %.3f s covers predict's %.3f s (90%% to 100%%)", r.sim.wall_s, outer);
  predict_result_free(&r);
}

/* Plans c and runs its events with every COMPUTE of span kind `kind` (-1: none) sharing the GPU with
 * collectives that take `slow` of its SMs (the work bound by them: mem 0); *nb: the plan's buckets.
 * (The readout takes the plan's buckets: a plan is read out once.) */
static int run_slowed(const sim_config *c, int kind, double slow, sim_result *r, int *nb, err_t *e) {
  plan_t p;
  memset(r, 0, sizeof *r);
  int rc = plan_build(c, &p, e);
  if (rc) return rc;
  *nb = p.nb;
  prog_stream *st = &p.prog.streams[0];
  for (int i = 0; i < st->n; i++)
    if (st->ins[i].op == PROG_COMPUTE) {
      st->ins[i].shares = st->ins[i].span == kind;
      st->ins[i].mem = 0;
    }
  for (int b = 0; b < p.nb; b++) {
    p.coll[b].sm_frac = slow;
    p.coll[b].hbm_frac = 0.9; /* not what work bound by the SMs sees */
  }
  record_t rec;
  if ((rc = prog_finish(&p.prog, e)) == 0 && (rc = engine_run(&p, &rec, e)) == 0) {
    rc = readout_ddp(&p, &rec, r, e);
    record_free(&rec);
  }
  plan_free(&p);
  return rc;
}

static void gpu_sharing_slows_compute(void) {
  /* Segment 0 makes the 64 MiB gradient ready; about 9 ms of memory-bound work follows it, beside
   * the bucket's all-reduce over 8 V100s (about 1 ms). */
  model_t *m = fixture_model("ddpsim-model 1\nname share\nbatch 1\ntokens 1 tokens\nprecision fp32\nparam p 16777216\n"
                             "backward\newise g elems=1 arrays=1 ready=p\newise h elems=1000000000 arrays=2\n",
                             "share.model");
  sim_config c;
  fixture_config(&c, m, T_IB, P, 1, 0);
  c.iterations = 2;
  c.bucket_cap_mb = c.first_bucket_mb = 1024;
  err_t e;
  sim_result a, b, f;
  memset(&b, 0, sizeof b);
  memset(&f, 0, sizeof f);
  int nb = 0;
  int ok = run_slowed(&c, -1, 0, &a, &nb, &e) == 0 && run_slowed(&c, TIMELINE_SEGMENT, 0.5, &b, &nb, &e) == 0 &&
           run_slowed(&c, TIMELINE_FORWARD, 0.5, &f, &nb, &e) == 0;
  CHECK(ok, "three runs of the plan%s%s", ok ? "" : ": ", ok ? "" : e.msg);
  if (ok) {
    const sim_bucket_time *x = &a.buckets[0], *y = &b.buckets[0];
    double coll = x->comm_end_s - x->comm_start_s;
    CHECK(nb == 1 && coll > 1e-4 && check_close(a.iteration_s + 0.5 * coll, b.iteration_s, 1e-12, 1e-9),
          "backward's segments at half rate beside a %.6g s all-reduce: %.9g s -> %.9g s (+%.9g, want +%.9g)", coll, a.iteration_s,
          b.iteration_s, b.iteration_s - a.iteration_s, 0.5 * coll);
    CHECK(check_close(x->comm_end_s, y->comm_end_s, 1e-12, 1e-12) && check_close(x->comm_start_s, y->comm_start_s, 1e-12, 1e-12),
          "the all-reduce runs where it did (%.9g-%.9g s)", y->comm_start_s, y->comm_end_s);
    CHECK(check_close(b.backward_s - a.backward_s, 0.5 * coll, 1e-12, 1e-9) && check_close(a.exposed_comm_s, b.exposed_comm_s, 1e-12, 1e-6),
          "the breakdown puts it in backward (%.9g s more), not in exposed communication", b.backward_s - a.backward_s);
    CHECK(f.iteration_s == a.iteration_s, "forward slowed beside no collective: %.9g s, as without (%.9g s)", f.iteration_s, a.iteration_s);
  }
  /* The bundled profile's card (its SMs and bandwidth): every segment shares the GPU; a full
   * simulation of 4 nodes with jitter, closed form against events. Within 1e-8: SimGrid's clock is
   * kept to its timing precision (precision/timing, 1e-9 s by default), and each rate change of a
   * compute slowed beside a collective (the copies back beside the last all-reduce add some) is an
   * event of its own; the two met to 1e-12 before those copies, and 4e-10 s (4.4e-9 relative) after. */
  sim_config d;
  fixture_config(&d, M_RESNET, T_IB, P, 4, 0);
  d.symmetry = 0;
  d.jitter_cv = 0.05;
  d.iterations = 3;
  sim_result x[2];
  int okx = 1;
  for (int ev = 0; ev < 2 && okx; ev++) {
    d.events = ev;
    if (sim_run(&d, &x[ev], &e)) {
      CHECK(0, "sim_run: %s", e.msg);
      if (ev) sim_result_free(&x[0]);
      okx = 0;
    }
  }
  if (okx) {
    double worst = rel(x[1].iteration_s, x[0].iteration_s);
    for (int k = 0; k < x[0].plan.n; k++) {
      worst = fmax(worst, rel(x[1].buckets[k].comm_end_s, x[0].buckets[k].comm_end_s));
      worst = fmax(worst, rel(x[1].buckets[k].ready_s, x[0].buckets[k].ready_s));
    }
    CHECK(x[0].closed_form && !x[1].closed_form && worst < 1e-8 && x[1].backward_s > 0 && rel(x[1].backward_s, x[0].backward_s) < 1e-8,
          "ResNet-50 on 32 GPUs sharing each GPU with NCCL, jitter: closed form %.9g s, events %.9g s (worst bucket or iteration %.1e)",
          x[0].iteration_s, x[1].iteration_s, worst);
    sim_result_free(&x[0]);
    sim_result_free(&x[1]);
  }
  sim_result_free(&a);
  sim_result_free(&b);
  sim_result_free(&f);
  model_destroy(m);
}

/* c run in closed form (x[0]) and with its events (x[1]); *worst: the largest relative difference of
 * the iteration, compute and every bucket's ready, start and end. 0, or -1 (reported) if a run
 * failed, both freed. */
static int both_ways(sim_config *c, sim_result x[2], double *worst) {
  err_t e;
  for (int ev = 0; ev < 2; ev++) {
    c->events = ev;
    if (sim_run(c, &x[ev], &e)) {
      CHECK(0, "sim_run: %s", e.msg);
      if (ev) sim_result_free(&x[0]);
      return -1;
    }
  }
  *worst = fmax(rel(x[1].iteration_s, x[0].iteration_s), rel(x[1].compute_s, x[0].compute_s));
  for (int b = 0; b < x[0].plan.n && b < x[1].plan.n; b++) {
    *worst = fmax(*worst, rel(x[1].buckets[b].comm_start_s, x[0].buckets[b].comm_start_s));
    *worst = fmax(*worst, rel(x[1].buckets[b].comm_end_s, x[0].buckets[b].comm_end_s));
    *worst = fmax(*worst, rel(x[1].buckets[b].ready_s, x[0].buckets[b].ready_s));
  }
  return 0;
}

/* 6. Switched nodes: groups of pairs sharing links, and the closed form that plays them. */
static void switched_nodes_closed_form(void) {
  err_t e;
  topo_t *t = fixture_bundled_topo("dgxa100-ib");
  profile_t *pa = fixture_bundled_profile("a100-dgxa100");
  sim_config c;
  fixture_config(&c, M_RESNET, t, pa, 4, 0);
  c.symmetry = 0;
  c.jitter_cv = 0.05;
  c.iterations = 3;
  plan_t p;
  platform_net net;
  if (plan_build(&c, &p, &e) == ERR_OK) {
    if (platform_pairs(&p.platform, &net, &e) == ERR_OK) {
      /* Per node one group inside it (the GPUs' switch links) and one out of it (the NICs, merged). */
      int G = p.gpus_per_node, inside = 0, out = 0, sized = 1;
      for (int g = 0; g < net.ngroups; g++) {
        const platform_pair *a = &net.pairs[net.group_pair[net.group_at[g]]];
        int in_node = a->dst / G == a->src / G;
        inside += in_node;
        out += !in_node;
        sized &= net.group_at[g + 1] - net.group_at[g] >= (size_t)(in_node ? G : 2);
      }
      CHECK(!net.exclusive && net.one_node && inside == 4 && out == 4 && sized && net.nlinks > 0,
            "DGX A100 x 4: pairs sharing links in %d groups inside nodes and %d out of them, each leaving one node (%d)",
            inside, out, net.one_node);
      platform_net_free(&net);
    } else {
      CHECK(0, "platform_pairs: %s", e.msg);
    }
    plan_free(&p);
  } else {
    CHECK(0, "plan_build: %s", e.msg);
  }
  for (int k = 0; k < 2; k++) {
    if (k == 1) {
      c.model = M_MLSTM;
      c.jitter_cv = 0;
      c.host_jitter_s = 200e-6;
    } else {
      c.gpu_sharing = 0;
    }
    sim_result x[2];
    double worst;
    if (both_ways(&c, x, &worst)) continue;
    CHECK(x[0].closed_form && !x[1].closed_form && worst < 1e-6 && x[0].iteration_s > 0,
          "%s on 32 A100s (DGX A100), %s: closed form %.9g s, events %.9g s (worst bucket or iteration %.1e)",
          k ? "mLSTM-4k" : "ResNet-50", k ? "host noise, sharing the GPU" : "jitter", x[0].iteration_s, x[1].iteration_s, worst);
    sim_result_free(&x[0]);
    sim_result_free(&x[1]);
  }
  topo_destroy(t);
  profile_destroy(pa);
}

/* 7. The plans no jitter tells apart: one GPU (no NCCL stream), one node, 2 nodes, and 2 nodes standing
 * for 16 by symmetry, on DGX-1V and on DGX A100's switched nodes, sharing the GPU or not: the closed
 * form gives what the events give (the interval's draws and predict's 1-GPU twin take it). */
static void small_plans_closed_form(void) {
  topo_t *ta = fixture_bundled_topo("dgxa100-ib");
  profile_t *pa = fixture_bundled_profile("a100-dgxa100");
  static const struct {
    int a100, nodes, gpn, sharing;
  } cases[] = {{0, 1, 1, 1}, {0, 1, 8, 1}, {0, 2, 8, 0}, {0, 16, 8, 1}, {1, 1, 8, 1}, {1, 2, 8, 1}, {1, 16, 8, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    sim_config c;
    fixture_config(&c, M_RESNET, cases[i].a100 ? ta : T_IB, cases[i].a100 ? pa : P, cases[i].nodes, cases[i].gpn);
    c.gpu_sharing = cases[i].sharing;
    c.iterations = 3;
    sim_result x[2];
    double worst;
    if (both_ways(&c, x, &worst)) continue;
    CHECK(x[0].closed_form && !x[1].closed_form && x[0].plan.n == x[1].plan.n && worst < 1e-8 && x[0].iteration_s > 0 &&
              x[0].ranks_simulated == x[1].ranks_simulated,
          "ResNet-50 on %d x %d %s (%d simulated)%s: closed form %.9g s, events %.9g s (worst bucket or iteration %.1e)",
          cases[i].nodes, cases[i].gpn, cases[i].a100 ? "A100" : "V100", x[0].ranks_simulated,
          cases[i].sharing ? ", sharing the GPU" : "", x[0].iteration_s, x[1].iteration_s, worst);
    sim_result_free(&x[0]);
    sim_result_free(&x[1]);
  }
  topo_destroy(ta);
  profile_destroy(pa);
}

int main(void) {
  if (load()) return 1;
  gpu_sharing_slows_compute();
  switched_nodes_closed_form();
  small_plans_closed_form();
  predict_wall_covers_all();
  symmetry_matches_full();
  fidelities_agree();
  plan_prints();
  model_destroy(M_RESNET);
  model_destroy(M_MLSTM);
  topo_destroy(T_IB);
  topo_destroy(T_OVER);
  profile_destroy(P);
  return check_status();
}
