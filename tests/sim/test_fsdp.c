/* FSDP2 as a stream program (sim/fsdp.h; docs/fsdp.md).
 *
 * 1. Units and bytes: on a small model, the default units are the numbered blocks, the root owns the
 *    rest; each parameter's shard is ceil(dim0 / world) rows (padding), the all-gather moves world x
 *    the shards at the parameters' type (param_dtype's where given), the reduce-scatter at
 *    reduce_dtype's, else the parameters' own whatever param_dtype.
 * 2. The host's issue order as FSDP2's hooks run, with and without reshard_after_forward, and with
 *    explicit forward prefetch (tests/torch/fsdp_oracle.py checks the same lines against real FSDP).
 * 3. Refusals: a pattern that matches nothing, nested units, another backend, no_sync.
 * 4. The engine: the 2-node symmetric run equals the full one (BERT-base, 3 and 4 DGX-1V nodes); the
 *    iteration's parts add up; more GPUs never make an iteration faster than one GPU's; resharding
 *    adds the backward all-gathers.
 * 5. Memory: parameters, gradients and optimizer state are one shard's; the unsharded units are
 *    counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "data.h"
#include "fixtures.h"
#include "fsdp.h"
#include "memory.h"
#include "sim.h"

static const char *TINY = "ddpsim-model 5\n"
                          "name tiny\nbatch 4\ntokens 1 samples\nprecision fp32\noptim adam\n"
                          "param emb.weight 10x8\n"
                          "param blocks.0.fc.weight 6x8\nparam blocks.0.fc.bias 6\n"
                          "param blocks.1.fc.weight 6x8\nparam blocks.1.fc.bias 6\n"
                          "param head.weight 3x8\n"
                          "forward\n"
                          "ewise emb elems=32*B arrays=2\n"
                          "gemm blocks.0.fc m=6 n=B k=8\n"
                          "gemm blocks.1.fc m=6 n=B k=8\n"
                          "gemm head m=3 n=B k=8\n"
                          "backward\n"
                          "gemm head.wgrad m=3 n=8 k=B ready=head.weight\n"
                          "gemm blocks.1.fc.wgrad m=6 n=8 k=B ready=blocks.1.fc.weight,blocks.1.fc.bias\n"
                          "gemm blocks.0.fc.wgrad m=6 n=8 k=B ready=blocks.0.fc.weight,blocks.0.fc.bias\n"
                          "ewise emb.bwd elems=32*B arrays=2 ready=emb.weight\n"
                          "optimizer\n"
                          "ewise adam elems=240 arrays=7 dtype=fp32\n";

static profile_t *P;
static topo_t *T;
static model_t *BERT;

static sim_config config(const model_t *m, int nodes, int gpn) {
  sim_config c;
  fixture_config(&c, m, T, P, nodes, gpn);
  c.framework = SIM_FRAMEWORK_FSDP;
  return c;
}

/* The plan's fsdp_issue lines, joined by ';' without the prefix. */
static int issues(const sim_config *c, char *out, size_t cap, err_t *e) {
  plan_t p;
  int rc = fsdp_build(c, &p, e);
  if (rc) return rc;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  rc = f ? fsdp_write(f, &p, e) : ERR_IO;
  if (f) fclose(f);
  plan_free(&p);
  out[0] = '\0';
  for (char *line = buf ? strtok(buf, "\n") : NULL; line; line = strtok(NULL, "\n"))
    if (strncmp(line, "fsdp_issue ", 11) == 0) {
      strncat(out, line + 11, cap - strlen(out) - 2);
      strcat(out, ";");
    }
  free(buf);
  return rc;
}

static void units(void) {
  model_t *m = fixture_model(TINY, "tiny.model");
  sim_config c = config(m, 1, 4);
  fsdp_unit *u = NULL;
  int n = 0;
  err_t e;
  int rc = fsdp_units(&c, 4, &u, &n, &e);
  CHECK(rc == 0 && n == 3, "default units: the root and the two numbered blocks (%d: %s)", n, rc ? e.msg : "");
  if (rc || n != 3) return;
  CHECK(strcmp(u[0].path, "") == 0 && strcmp(u[1].path, "blocks.0") == 0 && strcmp(u[2].path, "blocks.1") == 0,
        "root first, then the blocks in forward order");
  /* emb 10x8: ceil(10/4) = 3 rows of 8; head 3x8: 1 row: 32 per rank; a block: 2 x 8 + 2 = 18. */
  CHECK(u[0].nparams == 2 && u[0].numel == 104 && u[0].shard_numel == 32, "root: 2 parameters, 104 elements, a padded shard of 32 (%ld)",
        u[0].shard_numel);
  CHECK(u[1].shard_numel == 18 && u[1].ag_bytes == 4 * 18 * 4 && u[1].rs_bytes == 4 * 18 * 4,
        "block: a shard of 18, all-gather and reduce-scatter 288 bytes in fp32 (%.0f, %.0f)", u[1].ag_bytes, u[1].rs_bytes);
  CHECK(u[1].fwd_first == 1 && u[1].fwd_last == 1 && u[2].bwd_first == 5 && u[2].bwd_last == 5, "ops matched to units by name");
  free(u);
  c.fsdp_param_dtype = MODEL_BF16;
  rc = fsdp_units(&c, 4, &u, &n, &e);
  CHECK(rc == 0 && u[1].ag_bytes == 4 * 18 * 2 && u[1].rs_bytes == 4 * 18 * 4,
        "param_dtype bf16: all-gathers in bf16, reduce-scatters in the parameters' fp32 (reduce_dtype None)");
  free(u);
  c.fsdp_reduce_dtype = MODEL_BF16;
  rc = fsdp_units(&c, 4, &u, &n, &e);
  CHECK(rc == 0 && u[1].rs_bytes == 4 * 18 * 2, "reduce_dtype bf16: reduce-scatters in bf16");
  free(u);
  c = config(m, 1, 4);
  c.fsdp_units = "blocks.1";
  rc = fsdp_units(&c, 4, &u, &n, &e);
  CHECK(rc == 0 && n == 2 && u[0].nparams == 4, "--fsdp-units blocks.1: the root holds the rest (%d units)", n);
  free(u);
  c.fsdp_units = "block.*";
  rc = fsdp_units(&c, 4, &u, &n, &e);
  CHECK(rc == ERR_USAGE && strstr(e.msg, "block.*"), "a pattern that matches nothing is refused: %s", e.msg);
  c.fsdp_units = "blocks,blocks.*";
  rc = fsdp_units(&c, 4, &u, &n, &e);
  CHECK(rc == ERR_USAGE && strstr(e.msg, "nested"), "nested units are refused: %s", e.msg);

  char got[2048];
  c = config(m, 1, 4);
  rc = issues(&c, got, sizeof got, &e);
  const char *want = "all_gather <root> 512;forward <root>;all_gather blocks.0 288;forward blocks.0;all_gather blocks.1 288;"
                     "forward blocks.1;backward;all_gather blocks.1 288;all_gather blocks.0 288;reduce_scatter blocks.1 288;"
                     "reduce_scatter blocks.0 288;reduce_scatter <root> 512;";
  CHECK(rc == 0 && strcmp(got, want) == 0, "issue order, reshard_after_forward: %s", rc ? e.msg : got);
  c.fsdp_reshard = 0;
  rc = issues(&c, got, sizeof got, &e);
  want = "all_gather <root> 512;forward <root>;all_gather blocks.0 288;forward blocks.0;all_gather blocks.1 288;"
         "forward blocks.1;backward;reduce_scatter blocks.1 288;reduce_scatter blocks.0 288;reduce_scatter <root> 512;";
  CHECK(rc == 0 && strcmp(got, want) == 0, "issue order without resharding: no backward all-gathers: %s", rc ? e.msg : got);
  c.fsdp_reshard = 1;
  c.fsdp_forward_prefetch = 1;
  rc = issues(&c, got, sizeof got, &e);
  CHECK(rc == 0 && strncmp(got, "all_gather <root> 512;forward <root>;all_gather blocks.0 288;all_gather blocks.1 288;forward blocks.0;", 98) == 0,
        "forward prefetch 1: block 1's all-gather issued in block 0's pre-forward: %s", got);
  c = config(m, 1, 4);
  c.backend = SIM_BACKEND_GLOO;
  plan_t p;
  rc = fsdp_build(&c, &p, &e);
  CHECK(rc == ERR_USAGE && strstr(e.msg, "gloo"), "another backend is refused: %s", e.msg);
  c = config(m, 1, 4);
  c.no_sync = 2;
  rc = fsdp_build(&c, &p, &e);
  CHECK(rc == ERR_USAGE && strstr(e.msg, "no-sync"), "no_sync is refused: %s", e.msg);

  /* HSDP: the shard group is a node of 4, the 2 replicas all-reduce each reduced shard. */
  c = config(m, 2, 4);
  c.fsdp_replicate = 2;
  rc = issues(&c, got, sizeof got, &e);
  CHECK(rc == 0 && strstr(got, "backward;all_gather blocks.1 288;all_gather blocks.0 288;reduce_scatter blocks.1 288;all_reduce blocks.1 72;") &&
            strstr(got, "reduce_scatter <root> 512;all_reduce <root> 128;"),
        "HSDP: each reduce-scatter within the node, then the replicas' all-reduce of its 1/4 shard: %s", rc ? e.msg : got);
  c.fsdp_replicate = 3;
  rc = fsdp_build(&c, &p, &e);
  CHECK(rc == ERR_USAGE && strstr(e.msg, "--fsdp-replicate"), "HSDP with replicas other than the nodes is refused: %s", e.msg);

  /* A unit whose forward inputs take no gradient (the embedding of token ids: no_input_grad) reduces
   * in FSDP's final callback, after the root, as the oracle shows real FSDP2 doing. */
  {
    char text[4096];
    const char *tail = strstr(TINY, "param emb.weight");
    snprintf(text, sizeof text, "ddpsim-model 7\nname tiny-ids\nbatch 4\ntokens 1 samples\nprecision fp32\noptim adam\nno_input_grad emb\n%s",
             tail);
    model_t *mi = fixture_model(text, "ids.model");
    c = config(mi, 1, 4);
    c.fsdp_units = "emb,blocks.*";
    rc = issues(&c, got, sizeof got, &e);
    CHECK(rc == 0 && strstr(got, "reduce_scatter blocks.0 288;reduce_scatter <root> 128;reduce_scatter emb 384;"),
          "no_input_grad emb: the embedding unit's reduce-scatter after the root's, in the final callback: %s", rc ? e.msg : got);
    model_destroy(mi);
  }

  /* Backward ops named after another module (the exporter's tracker can): block 0's weight gradient
   * named as block 1's. The gradients say where each unit's backward ends; the order is as ever. */
  {
    char text[4096];
    snprintf(text, sizeof text, "%s", TINY);
    char *w = strstr(text, "gemm blocks.0.fc.wgrad");
    memcpy(w, "gemm blocks.1.fc.wgrad", 22);
    model_t *mm = fixture_model(text, "misnamed.model");
    c = config(mm, 1, 4);
    rc = issues(&c, got, sizeof got, &e);
    CHECK(rc == 0 && strstr(got, "backward;all_gather blocks.1 288;all_gather blocks.0 288;reduce_scatter blocks.1 288;"
                                 "reduce_scatter blocks.0 288;reduce_scatter <root> 512;"),
          "backward ops misnamed: each unit's backward laid out by its gradients, the issue order unchanged: %s", rc ? e.msg : got);
    model_destroy(mm);
  }

  /* A parameter without a gradient (`unused`): all-gathered, not reduce-scattered. */
  {
    static const char *UNUSED =
        "ddpsim-model 5\nname tiny-unused\nbatch 4\ntokens 1 samples\nprecision fp32\noptim adam\n"
        "param emb.weight 10x8\nparam blocks.0.fc.weight 6x8\nparam blocks.0.fc.bias 6\n"
        "param blocks.1.fc.weight 6x8\nparam blocks.1.fc.bias 6 unused\nparam head.weight 3x8\n"
        "forward\newise emb elems=32*B arrays=2\ngemm blocks.0.fc m=6 n=B k=8\ngemm blocks.1.fc m=6 n=B k=8\ngemm head m=3 n=B k=8\n"
        "backward\ngemm head.wgrad m=3 n=8 k=B ready=head.weight\ngemm blocks.1.fc.wgrad m=6 n=8 k=B ready=blocks.1.fc.weight\n"
        "gemm blocks.0.fc.wgrad m=6 n=8 k=B ready=blocks.0.fc.weight,blocks.0.fc.bias\n"
        "ewise emb.bwd elems=32*B arrays=2 ready=emb.weight,blocks.1.fc.bias\noptimizer\newise adam elems=212 arrays=7 dtype=fp32\n";
    model_t *mu = fixture_model(UNUSED, "unused.model");
    c = config(mu, 1, 4);
    rc = issues(&c, got, sizeof got, &e);
    CHECK(rc == 0 && strstr(got, "all_gather blocks.1 288;") && strstr(got, "reduce_scatter blocks.1 256;"),
          "an unused parameter is all-gathered (288 bytes) but not reduce-scattered (256): %s", rc ? e.msg : got);
    model_destroy(mu);
  }

  /* A frozen parameter (requires_grad=False): all-gathered with its unit, never reduce-scattered; its
   * shard counted in the memory without a gradient or state. */
  {
    static const char *FROZEN =
        "ddpsim-model 7\nname tiny-frozen\nbatch 4\ntokens 1 samples\nprecision fp32\noptim adam\n"
        "param blocks.0.fc.weight 6x8\nparam blocks.0.fc.bias 6\nparam blocks.1.fc.weight 6x8\nparam blocks.1.fc.bias 6\n"
        "param head.weight 3x8\nfrozen emb.weight 10x8\n"
        "forward\newise emb elems=32*B arrays=2\ngemm blocks.0.fc m=6 n=B k=8\ngemm blocks.1.fc m=6 n=B k=8\ngemm head m=3 n=B k=8\n"
        "backward\ngemm head.wgrad m=3 n=8 k=B ready=head.weight\ngemm blocks.1.fc.wgrad m=6 n=8 k=B ready=blocks.1.fc.weight,blocks.1.fc.bias\n"
        "gemm blocks.0.fc.wgrad m=6 n=8 k=B ready=blocks.0.fc.weight,blocks.0.fc.bias\noptimizer\newise adam elems=132 arrays=7 dtype=fp32\n";
    model_t *mf = fixture_model(FROZEN, "frozen.model");
    c = config(mf, 1, 4);
    rc = issues(&c, got, sizeof got, &e);
    CHECK(rc == 0 && strstr(got, "all_gather <root> 512;") && strstr(got, "reduce_scatter <root> 128;"),
          "a frozen embedding is all-gathered with the root (512 bytes) but not reduce-scattered (128): %s", rc ? e.msg : got);
    memory_parts fm;
    rc = memory_estimate(&c, MODEL_OPTIM_UNKNOWN, &fm, &e);
    CHECK(rc == 0 && fm.params_bytes == (8 + 18 + 18 + 24) * 4 && fm.grads_bytes == (8 + 18 + 18) * 4,
          "memory: the frozen shard among the parameters, not the gradients (%.0f, %.0f)", fm.params_bytes, fm.grads_bytes);
    model_destroy(mf);
  }

  /* Memory: one shard of each parameter, its gradient and Adam's two states. */
  memory_parts mp, one;
  c = config(m, 1, 4);
  sim_config c1 = config(m, 1, 1);
  rc = memory_estimate(&c, MODEL_OPTIM_UNKNOWN, &mp, &e) || memory_estimate(&c1, MODEL_OPTIM_UNKNOWN, &one, &e);
  /* shards: emb 24, head 8, blocks 18 + 18: 68 elements of fp32 */
  CHECK(rc == 0 && mp.params_bytes == 68 * 4 && mp.grads_bytes == 68 * 4 && mp.optim_bytes == 2 * 68 * 4,
        "4 GPUs: parameters, gradients, Adam's state of a 68-element shard (%.0f %.0f %.0f)", mp.params_bytes, mp.grads_bytes,
        mp.optim_bytes);
  CHECK(rc == 0 && mp.unsharded_bytes == (104 + 2 * 54) * 4 && one.unsharded_bytes == 0 && one.params_bytes == 212 * 4,
        "the root's and two blocks' unsharded parameters at the end of forward (%.0f); one GPU: none, all parameters",
        mp.unsharded_bytes);
  model_destroy(m);
}

static double run_iteration(sim_config *c, sim_result *r, const char *what) {
  err_t e;
  if (sim_run(c, r, &e)) {
    CHECK(0, "%s: %s", what, e.msg);
    return -1;
  }
  return r->iteration_s;
}

static void engine(void) {
  for (int nodes = 3; nodes <= 4; nodes++)
    for (int reshard = 0; reshard < 2; reshard++) {
      sim_config c = config(BERT, nodes, 8);
      c.fsdp_reshard = reshard;
      sim_result sym, full;
      double a = run_iteration(&c, &sym, "symmetric");
      c.symmetry = 0;
      double b = run_iteration(&c, &full, "full");
      CHECK(a > 0 && sym.ranks_simulated == 16 && full.ranks_simulated == nodes * 8 && check_close(b, a, 0, 1e-9),
            "BERT-base on %d DGX-1V, reshard %d: 2 nodes stand for %d (%.9f s, full %.9f s)", nodes, reshard, nodes, a, b);
      double parts = sym.compute_s + sym.exposed_comm_s + sym.straggler_wait_s + sym.loading_s + sym.transfer_s;
      CHECK(sym.exposed_comm_s >= 0 && check_close(sym.iteration_s, parts, 1e-12, 1e-9),
            "the parts add up to the iteration (%.9f = %.9f)", sym.iteration_s, parts);
      CHECK(sym.comm_busy_s > sym.exposed_comm_s && sym.comm_busy_s < sym.iteration_s,
            "communication busy (%.6f s, the collectives' union) between the exposed part and the iteration", sym.comm_busy_s);
      sim_result_free(&sym);
      sim_result_free(&full);
    }
  {
    sim_config h = config(BERT, 3, 8);
    h.fsdp_replicate = 3;
    sim_result sym, full;
    double a = run_iteration(&h, &sym, "HSDP symmetric");
    h.symmetry = 0;
    double b = run_iteration(&h, &full, "HSDP full");
    CHECK(a > 0 && check_close(b, a, 0, 1e-9) && sym.exposed_comm_s >= 0,
          "HSDP, BERT-base on 3 DGX-1V (3 replicas of 8): 2 nodes stand for 3 (%.9f s, full %.9f s)", a, b);
    sim_result_free(&sym);
    sim_result_free(&full);
  }
  sim_config c = config(BERT, 1, 1);
  sim_result r1, r8, rn;
  c.fsdp_shard_world = 8; /* predict's twin of the 8-GPU run: one rank's work */
  double t1 = run_iteration(&c, &r1, "1 GPU");
  c = config(BERT, 1, 8);
  double t8 = run_iteration(&c, &r8, "8 GPUs");
  c.fsdp_reshard = 0;
  double tn = run_iteration(&c, &rn, "8 GPUs, no reshard");
  CHECK(t1 > 0 && t8 >= t1 && tn >= t1 && r1.exposed_comm_s == 0, "one rank's work alone (its optimizer on its shard) has no collectives; 8 GPUs never run faster (%.6f, %.6f, %.6f s)",
        t1, t8, tn);
  plan_t p, q;
  err_t e;
  c.fsdp_reshard = 1;
  int rc = fsdp_build(&c, &p, &e);
  c.fsdp_reshard = 0;
  if (!rc) rc = fsdp_build(&c, &q, &e);
  /* BERT-base: 12 layers and the root: 13 all-gathers and reduce-scatters, 12 more with resharding. */
  CHECK(rc == 0 && p.prog.ncoll == 38 && q.prog.ncoll == 26, "collectives: %d with resharding, %d without", rc ? -1 : p.prog.ncoll,
        rc ? -1 : q.prog.ncoll);
  if (!rc) {
    plan_free(&p);
    plan_free(&q);
  }
  sim_result_free(&r1);
  sim_result_free(&r8);
  sim_result_free(&rn);
}

int main(void) {
  BERT = fixture_bundled_model("bert-base");
  T = fixture_bundled_topo("dgx1v-ib");
  P = fixture_bundled_profile("v100-dgx1v");
  units();
  engine();
  model_destroy(BERT);
  topo_destroy(T);
  profile_destroy(P);
  return check_status();
}
