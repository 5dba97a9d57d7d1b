/* DDP scenarios on the bundled mLSTM-4k, DGX-1V profile: no_sync, the fp16 compression hook, flat
 * mode, one GPU, and what must hold between them. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixtures.h"
#include "predict.h"

static model_t *M;
static topo_t *T_IB, *T_ETH;
static profile_t *P;

static void load(void) {
  M = fixture_bundled_model("mlstm-4k");
  T_IB = fixture_bundled_topo("dgx1v-ib");
  T_ETH = fixture_bundled_topo("dgx1v-10gbe");
  P = fixture_bundled_profile("v100-dgx1v");
}

/* The scenarios' identities are about DDP's structure: compute does not share the GPU with the
 * all-reduces here (with it, backward is slower in synchronising iterations only, which the report
 * keeps inside backward; tests/sim/test_engine.c checks that mechanism). */
static void config(sim_config *c, const topo_t *t, int nodes) {
  sim_config_defaults(c);
  c->gpu_sharing = 0;
  c->model = M;
  c->topo = t;
  c->profile = P;
  c->nodes = nodes;
}

static int run(const sim_config *c, sim_result *r) {
  err_t e;
  int rc = sim_run(c, r, &e);
  if (rc) printf("      sim_run: %s\n", e.msg);
  return rc;
}

int main(void) {
  load();
  sim_config c;
  sim_result base, r;

  /* no_sync(K): K-1 iterations without communication, then one that all-reduces and waits. The
   * model is deterministic, so the mean iteration is compute + exposed(synced) / K exactly. */
  config(&c, T_ETH, 4);
  if (run(&c, &base) == 0) {
    CHECK(base.exposed_comm_s > 0.01, "10GbE, 4 nodes: %.4f s of communication exposed", base.exposed_comm_s);
    for (int k = 2; k <= 8; k *= 2) {
      c.no_sync = k;
      if (run(&c, &r)) continue;
      /* Bucket copies, like the all-reduce, happen in synchronised iterations only. */
      double want = base.compute_s - base.bucket_copy_s + (base.bucket_copy_s + base.exposed_comm_s) / k + base.transfer_s;
      CHECK(check_close(want, r.iteration_s, 0, 1e-9), "no_sync %d: iteration %.6f s = compute + h2d copy + (bucket copies + exposed) / %d = %.6f s", k,
            r.iteration_s, k, want);
      sim_result_free(&r);
    }
    c.no_sync = 1;

    /* fp16_compress_hook on fp32 gradients: half the bytes on the wire, two casts around each. */
    c.precision = MODEL_FP32;
    sim_result f32;
    if (run(&c, &f32) == 0) {
      c.comm_hook = SIM_HOOK_FP16;
      if (run(&c, &r) == 0) {
        for (int b = 0; b < r.plan.n; b++) {
          double d0 = f32.buckets[b].comm_end_s - f32.buckets[b].comm_start_s;
          double d1 = r.buckets[b].comm_end_s - r.buckets[b].comm_start_s;
          CHECK(r.buckets[b].wire_bytes == r.buckets[b].bytes / 2 && d1 > d0 / 2 && d1 < d0,
                "fp16 hook, bucket %d: %zu of %zu bytes on the wire, %.4f s vs %.4f s without", b, r.buckets[b].wire_bytes,
                r.buckets[b].bytes, d1, d0);
        }
        CHECK(r.iteration_s < f32.iteration_s, "fp16 hook: %.4f s per iteration vs %.4f s", r.iteration_s, f32.iteration_s);
        sim_result_free(&r);
      }
      c.comm_hook = SIM_HOOK_NONE;
      sim_result_free(&f32);
    }
    c.precision = -1;

    /* Flat: one all-reduce of every gradient after backward, no overlap: never faster than DDP.
     * Its copies: the flatten (2 arrays, one kernel) between backward and the all-reduce, the
     * divide and the copy back (4 arrays; one kernel and one per gradient) after it, so the flatten
     * is at most a third of the two together. */
    c.mode = SIM_MODE_FLAT;
    if (run(&c, &r) == 0) {
      CHECK(r.plan.n == 1, "flat: one bucket");
      double bwd_end = r.transfer_s + r.forward_s + r.backward_s, flatten = r.buckets[0].ready_s - bwd_end;
      CHECK(flatten > 0 && flatten <= r.bucket_copy_s / 3 + 1e-12 &&
                r.buckets[0].comm_start_s >= r.buckets[0].ready_s - 1e-12,
            "flat: the all-reduce starts when backward (%.6f s) and the flatten copy (%.6f s of the copies' %.6f s) end",
            bwd_end, flatten, r.bucket_copy_s);
      CHECK(check_close(r.exposed_comm_s, r.buckets[0].comm_end_s - r.buckets[0].comm_start_s, 0, 1e-9),
            "flat: all of it is exposed (%.4f s)", r.exposed_comm_s);
      CHECK(r.iteration_s >= base.iteration_s - 1e-12, "flat %.4f s is never faster than ddp %.4f s", r.iteration_s,
            base.iteration_s);
      sim_result_free(&r);
    }
    sim_result_free(&base);
  }

  /* One GPU: no communication at all. */
  config(&c, T_IB, 1);
  c.gpus_per_node = 1;
  if (run(&c, &r) == 0) {
    CHECK(r.exposed_comm_s < 1e-12 && r.comm_busy_s == 0 && check_close(r.compute_s + r.transfer_s, r.iteration_s, 0, 1e-12),
          "one GPU: iteration = compute + copy = %.6f s", r.iteration_s);
    sim_result_free(&r);
  }

  /* Scaling: more nodes never speed an iteration up; efficiency in (0, 1]. */
  double prev = 0;
  for (int nodes = 1; nodes <= 32; nodes *= 2) {
    config(&c, T_ETH, nodes);
    predict_result p;
    err_t e;
    if (predict_run(&c, &p, &e)) {
      CHECK(0, "predict: %s", e.msg);
      continue;
    }
    CHECK(p.sim.iteration_s >= prev - 1e-12 && p.scaling_efficiency > 0 && p.scaling_efficiency <= 1 + 1e-9,
          "10GbE, %2d nodes: iteration %.4f s, efficiency %.3f", nodes, p.sim.iteration_s, p.scaling_efficiency);
    prev = p.sim.iteration_s;
    predict_result_free(&p);
  }

  /* Stragglers: every GPU's compute per iteration drawn (lognormal, cv 2%), seeded. */
  {
    sim_result a, b, z, none;
    config(&c, T_IB, 2);
    if (run(&c, &none) == 0) {
      c.jitter_cv = 0;
      if (run(&c, &z) == 0) {
        CHECK(z.iteration_s == none.iteration_s && z.straggler_s == 0, "jitter cv 0 is no jitter");
        sim_result_free(&z);
      }
      c.jitter_cv = 0.02;
      c.iterations = 6;
      if (run(&c, &a) == 0 && run(&c, &b) == 0) {
        CHECK(a.iteration_s == b.iteration_s, "the same seed gives the same prediction (%.6f s)", a.iteration_s);
        CHECK(a.straggler_s > 0 && a.iteration_s > none.iteration_s,
              "16 GPUs wait for the slowest: %.4f s of straggling, iteration %.4f s vs %.4f s without jitter", a.straggler_s,
              a.iteration_s, none.iteration_s);
        sim_result_free(&b);
        c.seed = 7;
        if (run(&c, &b) == 0) {
          CHECK(a.iteration_s != b.iteration_s, "another seed, another draw (%.6f s)", b.iteration_s);
          sim_result_free(&b);
        }
        c.seed = 1;
        c.nodes = 32;
        if (run(&c, &b) == 0) {
          /* The expected maximum of n draws grows with n: for 256 lognormal draws of cv 2% it is about
           * 1 + 2.8 cv; the mean over 5 iterations stays near it. */
          double rel = b.straggler_s / b.compute_s;
          CHECK(b.straggler_s > a.straggler_s && rel > 0.03 && rel < 0.09,
                "256 GPUs straggle more than 16: %.4f s (%.1f%% of compute)", b.straggler_s, 100 * rel);
          sim_result_free(&b);
        }
        sim_result_free(&a);
      }
      sim_result_free(&none);
    }
  }

  /* The input pipeline (the fourth seed): loading by DataLoader workers, then the host-to-device
   * copy, on one GPU so nothing else is in the way. Copy costs: the profile's h2d. */
  {
    double bytes = (double)M->input_bytes_per_sample * (double)M->batch;
    sim_result base1, r1;
    config(&c, T_IB, 1);
    c.gpus_per_node = 1;
    c.iterations = 6;
    c.h2d = SIM_H2D_OFF;
    if (run(&c, &base1) == 0) {
      double T = base1.iteration_s;
      /* Pageable (PyTorch's default), then pinned: lat + bytes / bw, serial with compute. */
      c.h2d = SIM_H2D_AUTO;
      if (run(&c, &r1) == 0) {
        CHECK(r1.h2d == SIM_H2D_PAGEABLE && check_close(10e-6 + bytes / 6e9, r1.transfer_s, 0, 1e-9) &&
                  check_close(T + r1.transfer_s, r1.iteration_s, 0, 1e-9),
              "pageable copy by default: %.6f s = 10 us + %.0f B / 6 GB/s, serial", r1.transfer_s, bytes);
        sim_result_free(&r1);
      }
      c.h2d = SIM_H2D_PINNED_ASYNC;
      if (run(&c, &r1) == 0) {
        CHECK(check_close(10e-6 + bytes / 12e9, r1.transfer_s, 0, 1e-9) && check_close(T + r1.transfer_s, r1.iteration_s, 0, 1e-9),
              "pinned, non_blocking on the compute stream: %.6f s, still serial on the GPU", r1.transfer_s);
        sim_result_free(&r1);
      }
      c.h2d = SIM_H2D_PREFETCH;
      if (run(&c, &r1) == 0) {
        CHECK(r1.transfer_s == 0 && check_close(T, r1.iteration_s, 0, 1e-9), "prefetched on a side stream: hidden behind compute");
        sim_result_free(&r1);
      }
      /* Loading in the training loop: serial. */
      c.h2d = SIM_H2D_OFF;
      c.load_s = 0.0123;
      c.workers = 0;
      if (run(&c, &r1) == 0) {
        CHECK(check_close(0.0123, r1.loading_s, 0, 1e-9) && check_close(T + 0.0123, r1.iteration_s, 0, 1e-9),
              "num_workers 0: every iteration waits %.4f s for loading", r1.loading_s);
        sim_result_free(&r1);
      }
      /* Workers faster than compute: loading hidden. */
      c.load_s = 1.5 * T;
      c.workers = 4;
      if (run(&c, &r1) == 0) {
        CHECK(r1.loading_s < 1e-12 && check_close(T, r1.iteration_s, 0, 1e-9), "4 workers at %.3f s per batch keep up", c.load_s);
        sim_result_free(&r1);
      }
      /* Workers slower than compute: the loop runs at their pace, load / W per batch. */
      c.load_s = 5 * T;
      c.workers = 2;
      if (run(&c, &r1) == 0) {
        CHECK(check_close(c.load_s / 2, r1.iteration_s, 0, 1e-9) && check_close(c.load_s / 2 - T, r1.loading_s, 0, 1e-6),
              "2 workers at %.3f s per batch: one batch every %.4f s, %.4f s of waiting", c.load_s, r1.iteration_s, r1.loading_s);
        sim_result_free(&r1);
      }
      /* Prefetch with slow workers: the prefetcher's wait for loading counts as loading. */
      c.h2d = SIM_H2D_PREFETCH;
      if (run(&c, &r1) == 0) {
        CHECK(check_close(c.load_s / 2, r1.iteration_s, 0, 1e-9) && r1.loading_s > r1.transfer_s,
              "prefetch with slow loading: loading %.4f s, copy %.6f s", r1.loading_s, r1.transfer_s);
        sim_result_free(&r1);
      }
      sim_result_free(&base1);
    }
    c.load_s = 0;
    c.workers = 0;
    c.h2d = SIM_H2D_AUTO;
  }

  /* static_graph (PyTorch 2.15, reducer.h): the steady state, from iteration 3, runs the rebuilt
   * buckets; iterations 1 and 2 all-reduce one bucket of everything once backward is done, which
   * with gradient_as_bucket_view (no copies) is exactly a flat iteration. */
  {
    sim_result rb, fl;
    predict_result sg;
    err_t pe;
    config(&c, T_ETH, 4);
    c.bucket_view = 1;
    c.layout = SIM_LAYOUT_REBUILT;
    int ok = run(&c, &rb) == 0;
    c.layout = SIM_LAYOUT_REDUCER;
    c.mode = SIM_MODE_FLAT;
    c.iterations = 1;
    ok = ok && run(&c, &fl) == 0;
    config(&c, T_ETH, 4);
    c.bucket_view = 1;
    c.static_graph = 1;
    ok = ok && predict_run(&c, &sg, &pe) == 0;
    if (ok) {
      /* Flat mode flattens and unflattens; static_graph's bucket views copy nothing, but each
       * gradient is divided in its view (the steady state's bucket_copy_s), all before the one
       * all-reduce of iteration 1. */
      double flat_no_copies = fl.iteration_s - fl.bucket_copy_s + sg.sim.bucket_copy_s;
      CHECK(sg.sim.iteration_s == rb.iteration_s && sg.nearly == 2 && check_close(sg.early_s[0], flat_no_copies, 0, 1e-9) &&
                sg.early_s[1] == sg.early_s[0] && sg.early_s[0] > sg.sim.iteration_s && sg.early[0].delayed &&
                !sg.early[1].delayed && sg.steady.layout == REDUCER_REBUILT && fl.bucket_copy_s > 0,
            "static_graph: steady %.4f s (rebuilt), iterations 1 and 2 %.4f, %.4f s (one bucket: flat %.4f s less its "
            "%.4f s of copies)",
            sg.sim.iteration_s, sg.early_s[0], sg.early_s[1], fl.iteration_s, fl.bucket_copy_s);
      sim_result_free(&rb);
      sim_result_free(&fl);
      predict_result_free(&sg);
    } else CHECK(0, "static_graph runs");
  }

  /* Bad configurations are refused before the engine starts. */
  config(&c, T_IB, 0);
  err_t e;
  CHECK(sim_run(&c, &r, &e) == ERR_USAGE, "0 nodes (a flag's value: ERR_USAGE) -> %s", e.msg);
  config(&c, T_IB, 1);
  c.no_sync = 0;
  CHECK(sim_run(&c, &r, &e) == ERR_USAGE, "no_sync 0 (ERR_USAGE) -> %s", e.msg);

  model_destroy(M);
  topo_destroy(T_IB);
  topo_destroy(T_ETH);
  profile_destroy(P);
  return check_status();
}
