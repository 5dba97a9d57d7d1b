/* PyTorch's DataParallel and the host cost of kernel launches, on small cases computed by hand. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixtures.h"
#include "model.h"
#include "profile.h"
#include "dp.h"
#include "sim.h"
#include "topo.h"

/* Compute nearly free on the device (1e15 B/s, no launch cost): host costs show alone. */
static const char *profile_text =
    "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"host\":{\"launch_s\":1.0e-5},\"fp32\":{"
    "\"gemm\":{\"model\":\"roofline\",\"launch_s\":0,\"peak_flops\":1e15,\"efficiency\":1,\"mem_bw_Bps\":1e15},"
    "\"ewise\":{\"model\":\"roofline\",\"launch_s\":0,\"mem_bw_Bps\":1e15}}},"
    "\"comm\":{\"links\":{\"nvl\":{\"lat_s\":2e-6,\"bw_Bps\":1e10}}}}";

/* One parameter of 1e6 fp32 elements (4 MB); forward: 7 launches x 3 steps; backward: 5 launches
 * x 3 steps; output 1000 elements per sample; batch 8. */
static const char *model_text =
    "ddpsim-model 1\nname m\nbatch 8\ntokens 1 samples\nprecision fp32\noutput 1000\nparam p 1000000\n"
    "forward\newise f elems=1 arrays=1 count=3 launches=7\n"
    "backward\newise b elems=1 arrays=1 count=3 launches=5 ready=p\n";

int main(void) {
  err_t e;
  profile_t *p = fixture_profile(profile_text, "dp.json");
  model_t *m = fixture_model(model_text, "dp.model");
  topo_t *t = fixture_topo("ddpsim-topology 1\nname t\ngpus_per_node 4\nintra nvl links=1 bw=10GBps\nnic none\n", "dp.topo");
  CHECK(profile_host_launch_s(p) == 1e-5 && m->ops[0].launches == 7 && m->output_elems_per_sample == 1000,
        "compute.host.launch_s, launches= and output are read");
  sim_config c;
  sim_config_defaults(&c);
  c.model = m;
  c.topo = t;
  c.profile = p;
  c.nodes = 1;
  sim_result r;
  /* DDP on 2 GPUs: every process launches its own kernels: 3 x 7 x 10 us forward; backward's 3 x 5
   * launches and the launch of the Reducer's bucket copy (host work too: sim/pipe.h). */
  c.gpus_per_node = 2;
  if (sim_run(&c, &r, &e) == 0) {
    CHECK(check_close(3 * 7 * 1e-5, r.forward_s, 0, 1e-9) && check_close(3 * 5 * 1e-5 + 1e-5, r.backward_s, 0, 1e-9),
          "DDP: forward %.6g s = 3 x 7 launches x 10 us, backward %.6g s = (3 x 5 + 1) x 10 us", r.forward_s, r.backward_s);
    sim_result_free(&r);
  } else CHECK(0, "%s", e.msg);
  /* DataParallel on 2 GPUs: the two replicas' host work takes turns under the GIL in forward: each
   * op run costs the host 2 x 70 us. The phases follow each other on GPU 0's stream, the host
   * issuing ahead: the replication (2 us + 4 MB / 10 GB/s = 402 us) hides under forward's 3 x 140 us
   * of issuing, so replicate + forward = 420 us; the gather (6.4 us) under backward's 3 x 50. */
  c.framework = SIM_FRAMEWORK_DP;
  if (sim_run(&c, &r, &e) == 0) {
    double S = 4e6, out = 1000.0 * 4 * 8, bw = 1e10, hop = 2e-6;
    CHECK(check_close(hop + S / bw, r.dp_replicate_s, 0, 1e-12), "DP: replicate 4 MB from GPU 0: %.6g s", r.dp_replicate_s);
    CHECK(check_close(2 * out / bw, r.dp_gather_s, 0, 1e-12), "DP: gather 8 x 1000 fp32 outputs and scatter their gradients: %.6g s",
          r.dp_gather_s);
    CHECK(check_close(hop + 0.5 * S / bw, r.dp_reduce_s, 0, 1e-12), "DP: reduce the gradients to GPU 0: %.6g s", r.dp_reduce_s);
    CHECK(check_close(2 * 3 * 7 * 1e-5, r.dp_replicate_s + r.forward_s, 0, 1e-9),
          "DP, 2 GPUs: replicate + forward %.6g s = 2 replicas x 3 x 7 x 10 us of issuing", r.dp_replicate_s + r.forward_s);
    CHECK(check_close(3 * 5 * 1e-5, r.dp_gather_s + r.backward_s, 0, 1e-9),
          "DP: backward runs in C++ threads, no GIL: gather + backward %.6g s = 3 x 5 x 10 us", r.dp_gather_s + r.backward_s);
    CHECK(r.host_bound_s > 0 && r.host_busy_s > 0, "DP: host-bound %.6g s of %.6g s issuing", r.host_bound_s, r.host_busy_s);
    double sum = r.forward_s + r.backward_s + r.optimizer_s + r.dp_replicate_s + r.dp_gather_s + r.dp_reduce_s + r.transfer_s;
    CHECK(check_close(sum, r.iteration_s, 0, 1e-12), "DP: the parts add up: iteration %.6g s is their sum", r.iteration_s);
    /* Its program (sim/dp.h) played by the engine: both GPUs, every iteration, the copies as
     * transfers over the links. */
    CHECK(r.ranks_simulated == 2 && r.iterations_simulated == c.iterations && r.messages > 0 && !r.closed_form,
          "DP: the engine played both GPUs' program (%d ranks, %d iterations, %ld messages)", r.ranks_simulated,
          r.iterations_simulated, (long)r.messages);
    sim_result_free(&r);
  } else CHECK(0, "%s", e.msg);
  /* 2017 PyTorch: backward's autograd functions were largely Python, so backward takes turns too. */
  c.dp_backward_gil = 1;
  if (sim_run(&c, &r, &e) == 0) {
    CHECK(check_close(2 * 3 * 5 * 1e-5, r.dp_gather_s + r.backward_s, 0, 1e-9),
          "DP, backward under the GIL: gather + backward %.6g s = 2 replicas x 3 x 5 x 10 us", r.dp_gather_s + r.backward_s);
    sim_result_free(&r);
  } else CHECK(0, "%s", e.msg);
  c.dp_backward_gil = 0;
  /* Two threads under the GIL by hand: an op of 10 us on the host, 6 of them under the lock, 1 us per
   * hand-over: a round of 2 x 7 = 14 us; with 3 us under the lock the threads overlap (10 us); one
   * thread never waits. */
  CHECK(check_close(14e-6, dp_gil_period(10e-6, 6e-6, 2, 1e-6), 0, 1e-12) && check_close(10e-6, dp_gil_period(10e-6, 3e-6, 2, 1e-6), 0, 1e-12) &&
            check_close(10e-6, dp_gil_period(10e-6, 6e-6, 1, 1e-6), 0, 1e-12) && check_close(28e-6, dp_gil_period(10e-6, 6e-6, 4, 1e-6), 0, 1e-12),
        "GIL turns: 2 threads 14 us, a 3 us share 10 us, 1 thread 10 us, 4 threads 28 us per op");
  /* The same through the simulation: half of forward's host cost under the lock and no hand-over
   * cost: 2 x 35 = 70 us per op, the threads no slower than one (the replication's 402 us shows);
   * all of it under the lock with 5 us per hand-over, one for each of the run's 7 framework ops:
   * 2 x (70 + 35) = 210 us per run. Forward's GPU time (femtoseconds here) is played as the
   * engine's shortest activity, SimGrid's timing precision of 1 ns: within 2 ns. */
  c.dp_gil_share = 0.5;
  if (sim_run(&c, &r, &e) == 0) {
    CHECK(check_close(402e-6, r.dp_replicate_s + r.forward_s, 2e-9, 1e-6), "DP, half under the GIL: replicate + forward %.6g s",
          r.dp_replicate_s + r.forward_s);
    sim_result_free(&r);
  } else CHECK(0, "%s", e.msg);
  c.dp_gil_share = 1;
  c.dp_handover_s = 5e-6;
  if (sim_run(&c, &r, &e) == 0) {
    CHECK(check_close(3 * 210e-6, r.dp_replicate_s + r.forward_s, 0, 1e-9), "DP, 5 us per hand-over: replicate + forward %.6g s = 3 x 2 x (70 + 7 x 5) us",
          r.dp_replicate_s + r.forward_s);
    sim_result_free(&r);
  } else CHECK(0, "%s", e.msg);
  c.dp_handover_s = 0;
  c.dp_gil_share = 1.5;
  CHECK(sim_run(&c, &r, &e) == ERR_USAGE && strstr(e.msg, "share of the host cost"), "a GIL share of 1.5 -> %s", e.msg);
  c.dp_gil_share = 1;
  /* Four replicas: four turns. */
  c.gpus_per_node = 4;
  if (sim_run(&c, &r, &e) == 0) {
    CHECK(check_close(4 * 3 * 7 * 1e-5, r.dp_replicate_s + r.forward_s, 0, 1e-9), "DP, 4 GPUs: replicate + forward %.6g s = 4 x 3 x 7 x 10 us",
          r.dp_replicate_s + r.forward_s);
    sim_result_free(&r);
  } else CHECK(0, "%s", e.msg);
  /* --host-launch-us overrides the profile; 0 switches host costs off. */
  c.host_launch_s = 0;
  if (sim_run(&c, &r, &e) == 0) {
    CHECK(r.forward_s < 1e-9, "no host cost: forward %.3g s (the device alone, behind the replication)", r.forward_s);
    sim_result_free(&r);
  } else CHECK(0, "%s", e.msg);
  c.host_launch_s = -1;
  /* What DataParallel cannot be. */
  c.nodes = 2;
  CHECK(sim_run(&c, &r, &e) == ERR_USAGE && strstr(e.msg, "one node only"), "DP on 2 nodes -> %s", e.msg);
  c.nodes = 1;
  c.no_sync = 2;
  CHECK(sim_run(&c, &r, &e) == ERR_USAGE && strstr(e.msg, "no buckets, no_sync"), "DP with no_sync -> %s", e.msg);
  c.no_sync = 1;
  c.framework = SIM_FRAMEWORK_DDP;
  c.dp_backward_gil = 1;
  CHECK(sim_run(&c, &r, &e) == ERR_USAGE && strstr(e.msg, "framework dp"), "DDP with a backward under the GIL -> %s", e.msg);
  c.dp_backward_gil = 0;
  /* Communication on the cores that compute (MPI between CPU processes): a bucket ready in the
   * middle of backward cannot overlap the rest of it. Backward: 2 ms, the gradient, 3 ms more;
   * the 4 MB all-reduce on 2 GPUs takes 2 x (2 us + 2 MB / 10 GB/s) = 0.404 ms. */
  {
    static const char *prof = "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{"
                              "\"gemm\":{\"model\":\"roofline\",\"launch_s\":0,\"peak_flops\":1e15,\"efficiency\":1,\"mem_bw_Bps\":1e15},"
                              "\"ewise\":{\"model\":\"roofline\",\"launch_s\":0,\"mem_bw_Bps\":1e12}}},"
                              "\"comm\":{\"links\":{\"nvl\":{\"lat_s\":2e-6,\"bw_Bps\":1e10,\"shares_compute\":%s}}}}";
    static const char *mtext = "ddpsim-model 1\nname m\nbatch 1\ntokens 1 samples\nprecision fp32\nparam p 1000000\n"
                               "backward\newise b1 elems=500000000 arrays=1 ready=p\newise b2 elems=750000000 arrays=1\n";
    model_t *mm = fixture_model(mtext, "sc.model");
    double it[2] = {0, 0};
    {
      for (int shared = 0; shared < 2; shared++) {
        char text[1024];
        snprintf(text, sizeof text, prof, shared ? "true" : "false");
        profile_t *q = fixture_profile(text, "sc.json");
        sim_config cc;
        fixture_config(&cc, mm, t, q, 1, 2);
        if (sim_run(&cc, &r, &e) == 0) {
          it[shared] = r.iteration_s;
          CHECK(r.shares_compute == shared, "shares_compute %s is read", shared ? "true" : "false");
          sim_result_free(&r);
        } else CHECK(0, "%s", e.msg);
        profile_destroy(q);
      }
      /* DDP's bucket copies: 1e6 gradients divided while copied into the bucket (one pass from
       * PyTorch 1.7: 2 arrays x 4 B at 1 TB/s, 8 us, before the gradient counts as ready) and back
       * after the wait (2 arrays: 8 us). */
      double A = 2 * (2e-6 + 2e6 / 1e10), in = 8e-6, back = 8e-6;
      CHECK(check_close(5e-3 + in + back, it[0], 0, 1e-9),
            "GPU-like links: the all-reduce hides behind the last 3 ms; bucket copies 16 us: %.6f s", it[0]);
      CHECK(check_close(5e-3 + in + A + back, it[1], 0, 1e-9), "links sharing the cores: 5 ms + 16 us + %.6f s of all-reduce = %.6f s",
            A, it[1]);
      model_destroy(mm);
    }
  }
  model_destroy(m);
  topo_destroy(t);
  profile_destroy(p);
  return check_status();
}
