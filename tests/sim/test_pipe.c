/* The host and the compute stream as a pipeline (sim/pipe.h), on cases computed by hand: alone, and
 * through sim_run (a host-bound GPU pair that differ 1.5x in speed, NCCL's launch as host work). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixtures.h"
#include "modelgen.h"
#include "pipe.h"
#include "plan.h"
#include "sim.h"

static const double us = 1e-6;

static void pipe_cases(void) {
  pipe_t p;
  err_t e;
  if (pipe_init(&p, PIPE_QUEUE_DEFAULT, &e)) {
    CHECK(0, "%s", e.msg);
    return;
  }
  /* Host-bound: 40 runs of 3 us host, 1 us GPU: the sum of host costs plus the last run's GPU time. */
  pipe_reset(&p, 0, 0);
  pipe_op(&p, 3 * us, 1 * us, 40, 1);
  CHECK(check_close(40 * 3 * us + 1 * us, p.D, 0, 1e-12), "host-bound: stream ends at %.6g us = 40 x 3 + 1", p.D / us);
  CHECK(check_close(p.D - 40 * us, p.starved_s, 0, 1e-12), "host-bound: the stream idled %.6g us for the host", p.starved_s / us);
  /* Device-bound: the first launch, then the sum of GPU times. */
  pipe_reset(&p, 0, 0);
  pipe_op(&p, 1 * us, 4 * us, 40, 1);
  CHECK(check_close(1 * us + 40 * 4 * us, p.D, 0, 1e-12) && check_close(40 * us, p.H, 0, 1e-12),
        "device-bound: stream ends at %.6g us = 1 + 40 x 4, host free at %.6g us", p.D / us, p.H / us);
  /* Mixed: 10 runs host-bound (3 us host, 1 us GPU), then 10 GPU-bound (1 us host, 4 us GPU): 30 us
   * of issuing, the first part's last GPU microsecond, then 40 us of GPU: 71 us. max(host + tail,
   * GPU) says 50 us, per-op max(host, GPU) 70 us. */
  pipe_reset(&p, 0, 0);
  pipe_op(&p, 3 * us, 1 * us, 10, 1);
  pipe_op(&p, 1 * us, 4 * us, 10, 1);
  CHECK(check_close(71 * us, p.D, 0, 1e-12), "mixed: stream ends at %.6g us = 30 + 1 + 40", p.D / us);
  /* And the other order: GPU-bound first (the host gets 30 us ahead), then host-bound runs that the
   * GPU's backlog absorbs: 1 + 40 + 10 = 51 us (per-op max: 70). */
  pipe_reset(&p, 0, 0);
  pipe_op(&p, 1 * us, 4 * us, 10, 1);
  pipe_op(&p, 3 * us, 1 * us, 10, 1);
  CHECK(check_close(51 * us, p.D, 0, 1e-12), "mixed, GPU-bound first: stream ends at %.6g us = 1 + 40 + 10", p.D / us);
  /* Steady state over a billion runs, jumped over: 2 us host, 1 us GPU. */
  pipe_reset(&p, 0, 0);
  pipe_op(&p, 2 * us, 1 * us, 1000000000L, 1);
  CHECK(check_close(2000.0 + 1 * us, p.D, 0, 1e-9) && check_close(1000.0, p.dev_busy_s, 0, 1e-9),
        "1e9 host-bound runs: stream ends at %.9f s, GPU busy %.6f s", p.D, p.dev_busy_s);
  pipe_free(&p);

  /* A queue of 2 kernels: 10 us kernels launched at 1 us each; the third launch waits for the first
   * kernel (11 us), the fourth for the second (21), the fifth for the third (31): the host waited
   * 8 + 9 + 9 us, and host work after the launches starts at 31 us, not 5. */
  if (pipe_init(&p, 2, &e) == 0) {
    pipe_op(&p, 1 * us, 10 * us, 5, 1);
    CHECK(check_close(51 * us, p.D, 0, 1e-12) && check_close(31 * us, p.H, 0, 1e-12) && check_close(26 * us, p.queue_wait_s, 0, 1e-12),
          "queue of 2: stream %.6g us, host %.6g us, blocked %.6g us", p.D / us, p.H / us, p.queue_wait_s / us);
    /* A run of 2 kernels takes both slots: it waits for the stream to drain. */
    pipe_reset(&p, 0, 0);
    pipe_op(&p, 1 * us, 10 * us, 1, 1);
    pipe_op(&p, 1 * us, 10 * us, 1, 2);
    CHECK(check_close(11 * us, p.H, 0, 1e-12) && check_close(21 * us, p.D, 0, 1e-12),
          "a 2-kernel run in a 2-slot queue waits for the first: host %.6g us, stream %.6g us", p.H / us, p.D / us);
    pipe_free(&p);
  } else CHECK(0, "%s", e.msg);
  /* Jumping over a GPU-bound steady state with a full queue gives what running every step gives. */
  pipe_t a, b;
  if (pipe_init(&a, 16, &e) == 0 && pipe_init(&b, 16, &e) == 0) {
    pipe_op(&a, 1.3 * us, 3.1 * us, 100000, 2);
    pipe_host(&a, 50 * us);
    pipe_op(&a, 7.7 * us, 0.5 * us, 3, 1);
    for (int k = 0; k < 100000; k++) pipe_op(&b, 1.3 * us, 3.1 * us, 1, 2);
    pipe_host(&b, 50 * us);
    for (int k = 0; k < 3; k++) pipe_op(&b, 7.7 * us, 0.5 * us, 1, 1);
    CHECK(check_close(b.D, a.D, 0, 1e-9) && check_close(b.H, a.H, 0, 1e-9) && check_close(b.queue_wait_s, a.queue_wait_s, 0, 1e-6),
          "steady-state jump = step by step: stream %.9g / %.9g s, host %.9g / %.9g s", a.D, b.D, a.H, b.H);
  } else CHECK(0, "%s", e.msg);
  pipe_free(&a);
  pipe_free(&b);
  CHECK(pipe_init(&a, 0, &e) == ERR_INPUT, "a queue of 0 kernels -> %s", e.msg);
}

/* A profile whose GPU costs nothing but its elementwise passes (at ewise_Bps), with `host` the
 * compute.host members (may be empty) and `extra` top-level members before comm (may be empty). */
static profile_t *host_profile(const char *host, double ewise_Bps, const char *extra, const char *origin) {
  char text[2048];
  snprintf(text, sizeof text,
           "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"host\":{%s},\"fp32\":{"
           "\"gemm\":{\"model\":\"roofline\",\"launch_s\":0,\"peak_flops\":1e15,\"efficiency\":1,\"mem_bw_Bps\":1e15},"
           "\"ewise\":{\"model\":\"roofline\",\"launch_s\":0,\"mem_bw_Bps\":%g}}},%s"
           "\"comm\":{\"links\":{\"nvl\":{\"lat_s\":2e-6,\"bw_Bps\":1e10},\"ib\":{\"lat_s\":1e-6,\"bw_Bps\":1.25e10},"
           "\"tcp\":{\"lat_s\":5e-6,\"bw_Bps\":5e9}}}}",
           host, ewise_Bps, extra);
  return fixture_profile(text, origin);
}

/* A host-bound model: 10 pairs of an op with 1 launch (10 us of host) and 25 us of GPU time, and an
 * op with 2 launches (20 us) and 1 us: per pair 30 us of host, 26 of GPU. */
static void gpu_pair(void) {
  char model[4096] = "ddpsim-model 1\nname m\nbatch 1\ntokens 1 samples\nprecision fp32\nparam p 1000\nforward\n";
  for (int k = 0; k < 10; k++) /* 25 us and 1 us at 1e12 B/s: 25e6 and 1e6 bytes, one array of 4 B elements */
    strcat(model, "ewise a elems=6250000 arrays=1 launches=1\newise b elems=250000 arrays=1 launches=2\n");
  strcat(model, "backward\newise g elems=1 arrays=1 ready=p\n");
  model_t *m = fixture_model(model, "pair.model");
  topo_t *t = fixture_topo("ddpsim-topology 1\nname t\ngpus_per_node 2\nintra nvl links=1 bw=10GBps\nnic none\n", "pair.topo");
  double it[2] = {0, 0}, hb = 0, db = 0, busy = 0;
  for (int fast = 0; fast < 2; fast++) {
    profile_t *p = host_profile("\"launch_s\":1.0e-5", fast ? 1.5e12 : 1e12, "", "pair.json");
    sim_config c;
    fixture_config(&c, m, t, p, 1, 1);
    sim_result r;
    err_t e;
    if (sim_run(&c, &r, &e) == 0) {
      it[fast] = r.iteration_s;
      if (!fast) hb = r.host_bound_s, db = r.device_bound_s, busy = r.device_busy_s;
      sim_result_free(&r);
    } else CHECK(0, "%s", e.msg);
    profile_destroy(p);
  }
  /* Forward: the k-th pair's 1-us op starts when the host has issued it, at 30k us: 306 us; backward's
   * one launch is issued at 310 us and runs (almost) no time. A 1.5x faster GPU: the same 310 us. */
  CHECK(check_close(310 * us, it[0], 0, 1e-6), "host-bound: iteration %.6g us = 10 x 30 + 10 us of issuing", it[0] / us);
  CHECK(check_close(it[0], it[1], 0, 1e-6), "a 1.5x faster GPU trains at the same rate: %.6g us (per-op max would say 377 vs 460)",
        it[1] / us);
  CHECK(check_close(260 * us, busy, 0, 1e-6) && check_close(it[0] - busy, hb, 0, 1e-6) && db < 1e-9,
        "breakdown: GPU busy %.6g us, host-bound %.6g us, device-bound %.3g us", busy / us, hb / us, db / us);
  /* Two GPUs under DDP: the bucket is ready after backward's op and the Reducer's copy into it (two
   * launches: 320 us of issuing); NCCL's launch is a third, so the all-reduce starts 10 us later. */
  {
    profile_t *p = host_profile("\"launch_s\":1.0e-5", 1e12, "", "pair.json");
    sim_config c;
    fixture_config(&c, m, t, p, 1, 2);
    sim_result r;
    err_t e;
    if (sim_run(&c, &r, &e) == 0) {
      /* (the copy's own 16 ns on the GPU within 0.05 us) */
      CHECK(r.plan.n == 1 && check_close(320 * us, r.buckets[0].ready_s, 0.05 * us, 0) &&
                check_close(10 * us, r.buckets[0].comm_start_s - r.buckets[0].ready_s, 0.05 * us, 0),
            "DDP: bucket ready at %.6g us, its all-reduce launched by the host %.6g us later", r.buckets[0].ready_s / us,
            (r.buckets[0].comm_start_s - r.buckets[0].ready_s) / us);
      sim_result_free(&r);
    } else CHECK(0, "%s", e.msg);
    profile_destroy(p);
  }
  model_destroy(m);
  topo_destroy(t);
}

/* Host cost per op as data: launches x launch_s + fwops x dispatch_s (profile or flag). */
static void dispatch_cost(void) {
  profile_t *p = host_profile("\"launch_s\":1.0e-5,\"dispatch_s\":4e-6,\"jitter_s\":2e-6,\"framework\":\"torch test\"", 1e15, "",
                              "disp.json");
  model_t *m = fixture_model("ddpsim-model 1\nname m\nbatch 1\ntokens 1 samples\nprecision fp32\nparam p 10\nforward\n"
                             "ewise f elems=1 arrays=1 count=4 fwops=3\nbackward\newise g elems=1 arrays=1 fwops=2 launches=3 ready=p\n",
                             "disp.model");
  topo_t *t = fixture_topo("ddpsim-topology 1\nname t\ngpus_per_node 1\nintra nvl links=1 bw=10GBps\nnic none\n", "disp.topo");
  CHECK(profile_host_dispatch_s(p) == 4e-6 && profile_host_jitter_s(p) == 2e-6 && m->ops[0].fwops == 3 && m->ops[0].launches == 1 &&
            m->ops[1].fwops == 2 && m->ops[1].launches == 3,
        "compute.host.dispatch_s, jitter_s and fwops= are read (launches default 1)");
  model_t *bad = NULL;
  err_t e;
  CHECK(model_parse("ddpsim-model 1\nname m\nbatch 1\ntokens 1 samples\nprecision fp32\nparam p 10\nbackward\n"
                    "ewise g elems=1 arrays=1 fwops=0 ready=p\n", "bad.model", &bad, &e) == ERR_INPUT &&
            strstr(e.msg, "bad.model:8: fwops must be an integer from 1"),
        "fwops=0 -> %s", e.msg);
  model_destroy(bad);
  sim_config c;
  fixture_config(&c, m, t, p, 1, 1);
  c.host_jitter_s = 0; /* the profile's 2 us of host noise off: --host-jitter-us 0 */
  sim_result r;
  /* forward: 4 runs x (1 launch x 10 us + 3 ops x 4 us) = 88 us; backward (3 x 10 + 2 x 4) = 38 us */
  if (sim_run(&c, &r, &e) == 0) {
    CHECK(check_close(88 * us, r.forward_s, 0, 1e-6) && check_close(38 * us, r.backward_s, 0, 1e-6),
          "host per run = launches x launch_s + fwops x dispatch_s: forward %.6g us, backward %.6g us", r.forward_s / us,
          r.backward_s / us);
    sim_result_free(&r);
  } else CHECK(0, "%s", e.msg);
  c.host_dispatch_s = 1e-6; /* --host-dispatch-us 1 */
  if (sim_run(&c, &r, &e) == 0) {
    CHECK(check_close(4 * 13 * us, r.forward_s, 0, 1e-6), "--host-dispatch-us 1: forward %.6g us = 4 x (10 + 3)", r.forward_s / us);
    sim_result_free(&r);
  } else CHECK(0, "%s", e.msg);
  model_destroy(m);
  topo_destroy(t);
  profile_destroy(p);
}

/* gloo's all-reduce of a 4 MB bucket on 2 GPUs, by hand: D2H (10 us + 4 MB / 10 GB/s = 410 us), the
 * ring over the TCP connections (2 x (5 us + 2 MB / 5 GB/s) = 810 us; NCCL's and MPI's ring over
 * NVLink: 2 x (2 us + 2 MB / 10 GB/s) = 404 us), the CPU's sum of half the bucket (2 MB / 5 GB/s =
 * 400 us), H2D (410 us): 2,030 us. Its wait blocks the host: the launches of DDP's copy back and of
 * the optimizer's op (10 us each) follow it; under NCCL the host issued them long before. On 2 nodes
 * of 2 GPUs (4 x 12.5 GB/s NICs) gloo's ring takes one NIC at a connection's 5 GB/s: 6 x 5 us +
 * 6 MB / 5 GB/s = 1,230 us, the sum 3 MB / 5 GB/s = 600 us: 2,650 us. */
static void gloo(void) {
  profile_t *p = host_profile("\"launch_s\":1.0e-5,\"reduce_Bps\":5e9", 1e15, "\"h2d\":{\"pinned_sync\":{\"lat_s\":1e-5,\"bw_Bps\":1e10}},",
                              "gloo.json");
  model_t *m = fixture_model("ddpsim-model 1\nname m\nbatch 1\ntokens 1 samples\nprecision fp32\nparam p 1000000\nbackward\n"
                             "ewise b elems=250000000000 arrays=1 ready=p\noptimizer\newise step elems=1 arrays=1\n",
                             "gloo.model");
  topo_t *t = fixture_topo("ddpsim-topology 1\nname t\ngpus_per_node 2\nintra nvl links=1 bw=10GBps\nnic none\n", "gloo.topo");
  sim_config c;
  fixture_config(&c, m, t, p, 1, 2);
  sim_result r;
  err_t e;
  double tail[3] = {0, 0, 0};
  for (int be = 0; be < 3; be++) {
    c.backend = (sim_backend)be;
    if (sim_run(&c, &r, &e) == 0) {
      double took = r.buckets[0].comm_end_s - r.buckets[0].comm_start_s;
      tail[be] = r.buckets_iteration_s - r.buckets[0].comm_end_s;
      if (be == SIM_BACKEND_GLOO) CHECK(check_close(2030 * us, took, 0.01 * us, 0), "gloo: all-reduce of 4 MB %.6g us = 410 + 810 + 400 + 410", took / us);
      else CHECK(check_close(404 * us, took, 0.01 * us, 0), "%s: the ring alone, %.6g us", be ? "mpi" : "nccl", took / us);
      sim_result_free(&r);
    } else CHECK(0, "%s", e.msg);
  }
  CHECK(tail[0] < 0.1 * us && check_close(20 * us, tail[1], 0.1 * us, 0) && check_close(20 * us, tail[2], 0.1 * us, 0),
        "after the wait: nccl %.3g us (the host issued ahead), gloo %.3g us and mpi %.3g us (the host waited, then launched two kernels)",
        tail[0] / us, tail[1] / us, tail[2] / us);
  c.backend = SIM_BACKEND_GLOO;
  c.nccl_algos = 1;
  CHECK(sim_run(&c, &r, &e) == ERR_USAGE && strstr(e.msg, "not with the gloo backend"), "gloo with NCCL_ALGO -> %s", e.msg);
  c.nccl_algos = 0;
  topo_t *t2 = fixture_topo("ddpsim-topology 1\nname t\ngpus_per_node 2\nintra nvl links=1 bw=10GBps\nnic ib count=4 bw=100Gbps\n", "gloo2.topo");
  fixture_config(&c, m, t2, p, 2, 2);
  c.backend = SIM_BACKEND_GLOO;
  if (sim_run(&c, &r, &e) == 0) {
    double took = r.buckets[0].comm_end_s - r.buckets[0].comm_start_s;
    CHECK(check_close(2650 * us, took, 0.01 * us, 0) && r.channels == 1 && r.nics_used == 1,
          "gloo on 2 nodes: %.6g us = 410 + 1230 + 600 + 410, over %d channel(s) and %d NIC(s)", took / us, r.channels, r.nics_used);
    sim_result_free(&r);
  } else CHECK(0, "gloo on 2 nodes: %s", e.msg);
  topo_destroy(t2);
  model_destroy(m);
  topo_destroy(t);
  profile_destroy(p);
  /* A GPU profile without comm.links.tcp cannot price gloo (it used to be priced over NVLink). */
  p = fixture_profile("{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"host\":{\"reduce_Bps\":5e9},\"fp32\":{"
                      "\"gemm\":{\"model\":\"roofline\",\"launch_s\":0,\"peak_flops\":1e15,\"efficiency\":1,\"mem_bw_Bps\":1e15},"
                      "\"ewise\":{\"model\":\"roofline\",\"launch_s\":0,\"mem_bw_Bps\":1e15}}},"
                      "\"h2d\":{\"pinned_sync\":{\"lat_s\":1e-5,\"bw_Bps\":1e10}},"
                      "\"comm\":{\"links\":{\"nvl\":{\"lat_s\":2e-6,\"bw_Bps\":1e10}}}}",
                      "notcp.json");
  m = fixture_model("ddpsim-model 1\nname m\nbatch 1\ntokens 1 samples\nprecision fp32\nparam p 10\nbackward\newise b elems=1 arrays=1 ready=p\n",
                    "g.model");
  t = fixture_topo("ddpsim-topology 1\nname t\ngpus_per_node 2\nintra nvl links=1 bw=10GBps\nnic none\n", "g.topo");
  fixture_config(&c, m, t, p, 1, 2);
  c.backend = SIM_BACKEND_GLOO;
  CHECK(sim_run(&c, &r, &e) == ERR_INPUT && strstr(e.msg, "over TCP") && strstr(e.msg, "comm.links.tcp"), "gloo without a tcp link -> %s",
        e.msg);
  model_destroy(m);
  topo_destroy(t);
  profile_destroy(p);
  p = host_profile("", 1e15, "", "nohost.json");
  m = fixture_model("ddpsim-model 1\nname m\nbatch 1\ntokens 1 samples\nprecision fp32\nparam p 10\nbackward\newise b elems=1 arrays=1 ready=p\n",
                    "g.model");
  t = fixture_topo("ddpsim-topology 1\nname t\ngpus_per_node 2\nintra nvl links=1 bw=10GBps\nnic none\n", "g.topo");
  fixture_config(&c, m, t, p, 1, 2);
  c.backend = SIM_BACKEND_GLOO;
  CHECK(sim_run(&c, &r, &e) == ERR_INPUT && strstr(e.msg, "h2d.pinned_sync"), "gloo without host-device costs -> %s", e.msg);
  profile_destroy(p);
  /* A CPU profile (device.kind "cpu"): the tensors are in host memory, gloo stages nothing, and
   * needs neither h2d nor reduce_Bps. With comm.links.tcp gloo's ring runs over it, 40 bytes on 2
   * ranks: 2 x (5 us + 20 B / 5 GB/s) = 10.008 us; MPI's over the topology's link, 2 x (2 us + 20 B /
   * 10 GB/s) = 4.004 us; without the class gloo's ring is MPI's (the link ddpcalib machine measures). */
  profile_t *cpu[2] = {host_profile("", 1e15, "\"device\":{\"kind\":\"cpu\"},", "cpu.json"),
                       fixture_profile("{\"format\":\"ddpsim-profile\",\"version\":1,\"device\":{\"kind\":\"cpu\"},\"compute\":{\"fp32\":{"
                                       "\"gemm\":{\"model\":\"roofline\",\"launch_s\":0,\"peak_flops\":1e15,\"efficiency\":1,\"mem_bw_Bps\":1e15},"
                                       "\"ewise\":{\"model\":\"roofline\",\"launch_s\":0,\"mem_bw_Bps\":1e15}}},"
                                       "\"comm\":{\"links\":{\"nvl\":{\"lat_s\":2e-6,\"bw_Bps\":1e10}}}}",
                                       "cpu-notcp.json")};
  double took[2][2] = {{0, 0}, {0, 0}};
  for (int q = 0; q < 2; q++)
    for (int k = 0; k < 2; k++) {
      c.profile = cpu[q];
      c.backend = k ? SIM_BACKEND_GLOO : SIM_BACKEND_MPI;
      if (sim_run(&c, &r, &e) == 0) {
        took[q][k] = r.buckets[0].comm_end_s - r.buckets[0].comm_start_s;
        sim_result_free(&r);
      } else CHECK(0, "%s on a CPU profile: %s", k ? "gloo" : "mpi", e.msg);
    }
  CHECK(check_close(10.008 * us, took[0][1], 0.001 * us, 0) && check_close(4.004 * us, took[0][0], 0.001 * us, 0),
        "gloo on a CPU profile with comm.links.tcp: its ring over TCP, %.6g us (mpi %.6g us)", took[0][1] / us, took[0][0] / us);
  CHECK(check_close(4.004 * us, took[1][1], 0.001 * us, 0) && took[1][1] == took[1][0],
        "gloo on a CPU profile without comm.links.tcp: the topology's link, %.6g us (mpi %.6g us)", took[1][1] / us, took[1][0] / us);
  model_destroy(m);
  topo_destroy(t);
  profile_destroy(cpu[0]);
  profile_destroy(cpu[1]);
}

/* Collectives that share the cores (comm.links.<cls>.shares_compute), by hand. Bucket a (100 MB,
 * ready after a short first segment) is all-reduced during the second segment (100 ms): its ring
 * takes T = 2 x (2 us + 50 MB / 10 GB/s) = 10.004 ms. Beside it the segment runs at 1 - cpu_share of
 * its rate: cpu_share 0.5 makes the iteration 0.5 T longer than links that cost the cores nothing;
 * without cpu_share the collective and the segment take turns (T longer). */
static void cpu_share(void) {
  model_t *m = fixture_model("ddpsim-model 1\nname m\nbatch 1\ntokens 1 samples\nprecision fp32\nparam a 25000000\nparam b 10\n"
                             "backward\newise s1 elems=1000 arrays=1 ready=a\newise s2 elems=25000000000 arrays=1 ready=b\n",
                             "share.model");
  topo_t *t = fixture_topo("ddpsim-topology 1\nname t\ngpus_per_node 2\nintra shm links=1 bw=10GBps\nnic none\n", "share.topo");
  const char *link[3] = {"", ",\"shares_compute\":true,\"cpu_share\":0.5", ",\"shares_compute\":true"};
  double it[3] = {0, 0, 0};
  for (int k = 0; k < 3; k++) {
    char text[1024];
    snprintf(text, sizeof text,
             "{\"format\":\"ddpsim-profile\",\"version\":1,\"device\":{\"kind\":\"cpu\"},\"compute\":{\"fp32\":{"
             "\"gemm\":{\"model\":\"roofline\",\"launch_s\":0,\"peak_flops\":1e15,\"efficiency\":1,\"mem_bw_Bps\":1e15},"
             "\"ewise\":{\"model\":\"roofline\",\"launch_s\":0,\"mem_bw_Bps\":1e12}}},"
             "\"comm\":{\"links\":{\"shm\":{\"lat_s\":2e-6,\"bw_Bps\":1e10%s}}}}",
             link[k]);
    profile_t *p = fixture_profile(text, "share.json");
    sim_config c;
    fixture_config(&c, m, t, p, 1, 2);
    c.backend = SIM_BACKEND_GLOO;
    c.bucket_cap_mb = 1;
    sim_result r;
    err_t e;
    if (sim_run(&c, &r, &e) == 0) {
      it[k] = r.iteration_s;
      sim_result_free(&r);
    } else CHECK(0, "cpu_share case %d: %s", k, e.msg);
    profile_destroy(p);
  }
  double T = 2 * (2e-6 + 50e6 / 1e10);
  CHECK(check_close(0.5 * T, it[1] - it[0], 1e-3 * T, 0), "cpu_share 0.5: the iteration %.6g ms longer than free links, 0.5 T = %.6g ms",
        (it[1] - it[0]) * 1e3, 0.5 * T * 1e3);
  CHECK(check_close(T, it[2] - it[0], 1e-3 * T, 0), "cores taken whole: the iteration %.6g ms longer than free links, T = %.6g ms",
        (it[2] - it[0]) * 1e3, T * 1e3);
  model_destroy(m);
  topo_destroy(t);
}

/* Host noise: every rank's host starts each iteration late by an exponential draw (sd 20 us). On one
 * host-bound GPU the iteration is longer by exactly rank 0's mean draw; on 8 the all-reduce waits for
 * the slowest host, E[max of 8] = 20 us x (1 + 1/2 + ... + 1/8) = 54.36 us (sd of the max 24 us:
 * over 999 iterations within 4 sd of the mean, 3.0 us). */
static void host_noise(void) {
  profile_t *p = host_profile("\"launch_s\":1.0e-5", 1e12, "", "noise.json");
  model_t *m = fixture_model("ddpsim-model 1\nname m\nbatch 1\ntokens 1 samples\nprecision fp32\nparam p 1000\nforward\n"
                             "ewise f elems=1 arrays=1 launches=10\nbackward\newise g elems=1 arrays=1 ready=p\n",
                             "noise.model");
  topo_t *t = fixture_topo("ddpsim-topology 1\nname t\ngpus_per_node 8\nintra nvl links=1 bw=10GBps\nnic none\n", "noise.topo");
  for (int g = 1; g <= 8; g += 7) {
    sim_config c;
    fixture_config(&c, m, t, p, 1, g);
    c.iterations = 1000;
    sim_result base, r;
    err_t e;
    if (sim_run(&c, &base, &e)) {
      CHECK(0, "%s", e.msg);
      continue;
    }
    c.host_jitter_s = 20e-6;
    if (sim_run(&c, &r, &e) == 0) {
      double extra = r.iteration_s - base.iteration_s;
      if (g == 1)
        CHECK(check_close(r.host_jitter_s, extra, 1e-12, 1e-9) && check_close(20e-6, r.host_jitter_s, 2.6e-6, 0),
              "1 GPU: the iteration is longer by rank 0's mean delay, %.4f us (draws' mean %.4f us, sd 20)", extra / us,
              r.host_jitter_s / us);
      else
        CHECK(check_close(54.3571e-6, extra, 3.0e-6, 0) && r.straggler_wait_s > 0 &&
                  check_close(extra - r.host_jitter_s, r.straggler_wait_s, 0.05 * us, 0),
              "8 GPUs: %.3f us longer (E[slowest of 8] 54.36 us); rank 0's own %.3f us, waiting for the slowest %.3f us", extra / us,
              r.host_jitter_s / us, r.straggler_wait_s / us);
      sim_result_free(&r);
    } else CHECK(0, "%s", e.msg);
    sim_result_free(&base);
  }
  model_destroy(m);
  topo_destroy(t);
  profile_destroy(p);
}

/* The mLSTM as written (genmodel --cell autograd): the same parameters, gradient-ready events and
 * registration order as the fused cell; per step the unfused ops, weight gradients with k = B and
 * their accumulation into full-size buffers; more framework ops and launches per iteration. */
static void mlstm_cells(void) {
  model_t *m[2] = {NULL, NULL};
  long ops[2] = {0, 0}, launches[2] = {0, 0};
  err_t e;
  for (int cell = 0; cell < 2; cell++) {
    modelgen_mlstm spec = {.hidden = 64, .embed = 16, .vocab = 32, .seq = 10, .batch = 4, .precision = MODEL_FP32,
                           .autograd_cell = cell};
    char *text = NULL;
    if (modelgen_mlstm_text(&spec, &text, &e) || model_parse(text, cell ? "autograd" : "fused", &m[cell], &e)) {
      CHECK(0, "%s", e.msg);
      free(text);
      return;
    }
    free(text);
    for (int o = 0; o < m[cell]->nops; o++) ops[cell] += m[cell]->ops[o].count * m[cell]->ops[o].fwops,
                                              launches[cell] += m[cell]->ops[o].count * m[cell]->ops[o].launches;
  }
  int same = m[0]->nparams == m[1]->nparams && m[0]->nready == m[1]->nready;
  for (int i = 0; same && i < m[0]->nparams; i++) same = m[0]->params[i].numel == m[1]->params[i].numel;
  for (int i = 0; same && i < m[0]->nready; i++) same = m[0]->ready[i] == m[1]->ready[i];
  CHECK(same, "autograd cell: the same %d parameters and gradient-ready order as the fused one", m[0]->nparams);
  int wgrad = 0, acc = 0;
  for (int o = 0; o < m[1]->nops; o++) {
    const model_op *op = &m[1]->ops[o];
    if (!strcmp(op->name, "d_w_hh")) wgrad = op->k.per_batch && op->k.v == 1 && op->m.v == 256 && op->n.v == 64 && op->count == 10;
    if (!strcmp(op->name, "acc_w_hh")) acc = op->elems.v == 256 * 64 && !op->elems.per_batch && op->count == 10;
  }
  CHECK(wgrad && acc, "autograd cell: W_hh's gradient per step is a 256x64 GEMM with k = B, summed into a 256x64 buffer, 10 times");
  /* Per step, launches: forward 6 (fused 13: its gate math is 10 kernels), backward 17 (fused 18); the
   * fused cell's 8 whole-sequence GEMMs (inputs, weight gradients, inputs' gradients) go. Framework
   * ops: forward 10 per step (each linear a t() and a matmul). */
  CHECK(launches[0] - launches[1] == 8 * 10 + 8 && ops[0] - ops[1] == 4 * 10 + 8,
        "autograd cell: %ld framework ops and %ld launches per iteration (fused: %ld and %ld)", ops[1], launches[1], ops[0], launches[0]);
  model_destroy(m[0]);
  model_destroy(m[1]);
}

/* DDP before the C++ Reducer (docs/reducer.md), a 4 MB bucket on 2 GPUs by hand, copies at 10 GB/s
 * (the profile's ewise roofline, no launch cost): 1 MB of fp32 gradient = 4 MB per array pass.
 *   0.2 (gloo, a reduction thread): on its stream flatten + divide (4 passes, 1,600 us), gloo's
 *       2,030 us (as above), the copy back (2 passes, 800 us): the bucket's span 4,430 us; nothing
 *       on the compute stream ("bucket copies" 0).
 *   1.0 (gloo, _queue_reduction): flatten + divide on a worker stream (1,600 us) + 2,030 us = 3,630
 *       us; the copy back after the wait (800 us of bucket copies).
 *   0.4 (nccl, after backward): the flatten on the compute stream (800 us), the ring (404 us), the
 *       division and copy back (1,600 us): 2,400 us of bucket copies. */
static void python_ddp(void) {
  profile_t *p = host_profile("\"launch_s\":1.0e-5,\"reduce_Bps\":5e9", 1e10, "\"h2d\":{\"pinned_sync\":{\"lat_s\":1e-5,\"bw_Bps\":1e10}},",
                              "py.json");
  model_t *m = fixture_model("ddpsim-model 1\nname m\nbatch 1\ntokens 1 samples\nprecision fp32\nparam p 1000000\nbackward\n"
                             "ewise b elems=1000 arrays=1 ready=p\noptimizer\newise step elems=1 arrays=1\n",
                             "py.model");
  topo_t *t = fixture_topo("ddpsim-topology 1\nname t\ngpus_per_node 2\nintra nvl links=1 bw=10GBps\nnic none\n", "py.topo");
  struct {
    int version;
    sim_backend be;
    double span_us, copies_us;
  } rows[] = {{2, SIM_BACKEND_GLOO, 4430, 0}, {100, SIM_BACKEND_GLOO, 3630, 800}, {4, SIM_BACKEND_NCCL, 404, 2400}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    sim_config c;
    sim_result r;
    err_t e;
    fixture_config(&c, m, t, p, 1, 2);
    c.pytorch = rows[i].version;
    c.backend = rows[i].be;
    if (sim_run(&c, &r, &e) == 0) {
      double took = r.buckets[0].comm_end_s - r.buckets[0].comm_start_s;
      CHECK(check_close(rows[i].span_us * us, took, 0.01 * us, 0) && check_close(rows[i].copies_us * us, r.bucket_copy_s, 0.01 * us, 0),
            "PyTorch %d.%d: the bucket's span %.6g us (want %g), bucket copies %.6g us (want %g)", rows[i].version / 100,
            rows[i].version % 100, took / us, rows[i].span_us, r.bucket_copy_s / us, rows[i].copies_us);
      sim_result_free(&r);
    } else CHECK(0, "PyTorch %d.%d: %s", rows[i].version / 100, rows[i].version % 100, e.msg);
  }
  model_destroy(m);
  topo_destroy(t);
  profile_destroy(p);
}

/* ProcessGroupNCCL's host work around each all-reduce (docs/reducer.md, "ProcessGroupNCCL's host
 * work"), by hand: 4 parameters of 1.2 MB each, each ready after its own backward op, on 2 GPUs; launch
 * 10 us, event calls 2 us. Per bucket, 1.4 makes 5 event calls at the launch and 1 at the final wait
 * (12 us), 2.5 makes 8 and 1 (18 us); cap 1 gives 4 buckets (each 1.2 MB reaches the cap), cap 100
 * gives 2 under 1.4 (the 1 MiB first bucket and the rest) and 1 under 2.5 (a given cap is the first
 * bucket's too). With event_s 0 the host does neither; gloo and MPI never (worker threads). */
static void pg_config(sim_config *c, model_t *m, topo_t *t, profile_t *p, int version, sim_backend be, double cap_mb) {
  fixture_config(c, m, t, p, 1, 2);
  c->pytorch = version;
  c->backend = be;
  c->bucket_cap_mb = cap_mb;
  c->host_jitter_s = 0;
}

static void pg_host_work(void) {
  model_t *m = fixture_model("ddpsim-model 1\nname m\nbatch 1\ntokens 1 samples\nprecision fp32\nparam a 300000\nparam b 300000\n"
                             "param c 300000\nparam d 300000\nbackward\newise gd elems=1 arrays=1 ready=d\n"
                             "ewise gc elems=1 arrays=1 ready=c\newise gb elems=1 arrays=1 ready=b\newise ga elems=1 arrays=1 ready=a\n"
                             "optimizer\newise step elems=1 arrays=1\n",
                             "pg.model");
  topo_t *t = fixture_topo("ddpsim-topology 1\nname t\ngpus_per_node 2\nintra nvl links=1 bw=10GBps\nnic none\n", "pg.topo");
  const char *extra = "\"h2d\":{\"pinned_sync\":{\"lat_s\":1e-5,\"bw_Bps\":1e10}},";
  profile_t *ev = host_profile("\"launch_s\":1.0e-5,\"event_s\":2e-6,\"reduce_Bps\":5e9", 1e15, extra, "pg.json");
  profile_t *none = host_profile("\"launch_s\":1.0e-5,\"reduce_Bps\":5e9", 1e15, extra, "pg0.json");
  CHECK(profile_host_event_s(ev) == 2e-6 && profile_host_event_s(none) == 0, "compute.host.event_s is read (absent: 0)");
  struct {
    int version;
    sim_backend be;
    double cap_mb;
    int nb;
    double per_bucket_us; /* host work per bucket, at the launch and at the final wait */
  } rows[] = {{104, SIM_BACKEND_NCCL, 1, 4, 12}, {104, SIM_BACKEND_NCCL, 100, 2, 12}, {205, SIM_BACKEND_NCCL, 1, 4, 18},
              {205, SIM_BACKEND_NCCL, 100, 1, 18}, {104, SIM_BACKEND_GLOO, 1, 4, 0}, {104, SIM_BACKEND_MPI, 1, 4, 0}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    double host[2] = {0, 0};
    int nb[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
      sim_config c;
      plan_t pl;
      err_t e;
      pg_config(&c, m, t, k ? ev : none, rows[i].version, rows[i].be, rows[i].cap_mb);
      if (plan_build(&c, &pl, &e) == 0) {
        host[k] = pl.host_s;
        nb[k] = pl.nb;
        plan_free(&pl);
      } else CHECK(0, "%s", e.msg);
    }
    double want = rows[i].nb * rows[i].per_bucket_us * us;
    CHECK(nb[0] == rows[i].nb && nb[1] == rows[i].nb && check_close(want, host[1] - host[0], 1e-9, 1e-9),
          "PyTorch %d.%d %s, cap %g MB: %d buckets, the host's process-group work %.6g us (want %g x %g us)", rows[i].version / 100,
          rows[i].version % 100, sim_backend_name(rows[i].be), rows[i].cap_mb, nb[1], (host[1] - host[0]) / us, (double)rows[i].nb,
          rows[i].per_bucket_us);
  }
  /* The work before the launch delays the all-reduce: under 1.4 bucket 0 (launched when ready, the
   * NCCL stream idle) starts 5 x 2 us later after it is ready than without the event calls. */
  double lag[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    sim_config c;
    sim_result r;
    err_t e;
    pg_config(&c, m, t, k ? ev : none, 104, SIM_BACKEND_NCCL, 100);
    if (sim_run(&c, &r, &e) == 0) {
      lag[k] = r.buckets[0].comm_start_s - r.buckets[0].ready_s;
      sim_result_free(&r);
    } else CHECK(0, "%s", e.msg);
  }
  CHECK(check_close(10 * us, lag[1] - lag[0], 0.05 * us, 0), "1.4: bucket 0's all-reduce starts %.6g us after it is ready, %.6g us later (5 x 2)",
        lag[1] / us, (lag[1] - lag[0]) / us);
  model_destroy(m);
  topo_destroy(t);
  profile_destroy(ev);
  profile_destroy(none);
}

int main(void) {
  pipe_cases();
  python_ddp();
  pg_host_work();
  mlstm_cells();
  host_noise();
  gloo();
  cpu_share();
  gpu_pair();
  dispatch_cost();
  return check_status();
}
