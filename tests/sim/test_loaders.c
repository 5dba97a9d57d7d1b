/* Model, topology and profile loaders: good files load; every bad one gives `file:line: reason`. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "bucket.h"
#include "cost.h"
#include "gemmcost.h"
#include "model.h"
#include "modelgen.h"
#include "profile.h"
#include "cost.h"
#include "topo.h"
#include "txt.h"

static const char *good_model =
    "ddpsim-model 1\n"
    "# a comment\n"
    "name tiny\nbatch 4\ntokens 16 chars\nprecision fp32\n"
    "param a 3x5\nparam b 7 fp16\n"
    "forward\n"
    "gemm f1 m=3 n=16*B k=5 count=2\n"
    "backward\n"
    "ewise g1 elems=B*8 arrays=3 ready=b\n"
    "gemm g2 m=3 n=5 k=B ready=a   # trailing comment\n"
    "optimizer\n"
    "ewise adam elems=22 arrays=7 dtype=fp32\n";

static void model_err(const char *what, const char *text, const char *want) {
  model_t *m = NULL;
  err_t e = {{0}};
  int rc = model_parse(text, "x.model", &m, &e);
  CHECK(rc == ERR_INPUT && m == NULL && strstr(e.msg, want) != NULL, "model %s -> %s", what, e.msg);
  model_destroy(m);
}

static void topo_err(const char *what, const char *text, const char *want) {
  topo_t *t = NULL;
  err_t e = {{0}};
  int rc = topo_parse(text, "x.topo", &t, &e);
  CHECK(rc == ERR_INPUT && t == NULL && strstr(e.msg, want) != NULL, "topology %s -> %s", what, e.msg);
  topo_destroy(t);
}

static void profile_err(const char *what, const char *text, const char *want) {
  profile_t *p = NULL;
  err_t e = {{0}};
  int rc = profile_parse(text, "x.json", &p, &e);
  CHECK(rc == ERR_INPUT && p == NULL && strstr(e.msg, want) != NULL, "profile %s -> %s", what, e.msg);
  profile_destroy(p);
}

#define HDR "ddpsim-model 1\nname t\nbatch 2\ntokens 3 chars\nprecision fp32\n"

static const char *roof =
    "{\"model\":\"roofline\",\"launch_s\":1e-6,\"peak_flops\":1e12,\"efficiency\":0.5,\"mem_bw_Bps\":1e11}";

/* A GEMM table's repeated shapes: each once, in the order of its first point, at the mean of its
 * repeats (sim/gemmcost.h), whatever the order the points come in. */
static void gemm_table_repeats(void) {
  const double m[] = {64, 128, 64, 32, 128, 64}, n[] = {64, 64, 64, 32, 64, 64}, k[] = {64, 64, 64, 32, 64, 64};
  const double t[] = {1e-3, 2e-3, 3e-3, 5e-4, 4e-3, 5e-3}, fit[] = {2e-3, 3e-3, 2e-3, 5e-4, 3e-3, 2e-3};
  gemmcost_table g;
  err_t e;
  int rc = gemmcost_build(&g, m, n, k, t, fit, 6, &e);
  CHECK(rc == 0 && g.n == 3, "a GEMM table of 6 points holds 3 shapes (%d)", g.n);
  if (!rc && g.n == 3) {
    int extra = 0;
    CHECK(g.lm[0] == log(64) && g.lm[1] == log(128) && g.lm[2] == log(32), "in the order of their first points");
    CHECK(fabs(g.time_s[0] - 3e-3) < 1e-15 && fabs(g.time_s[1] - 3e-3) < 1e-15 && g.time_s[2] == 5e-4,
          "each at the mean of its repeats: %g %g %g s", g.time_s[0], g.time_s[1], g.time_s[2]);
    CHECK(fabs(gemmcost_time(&g, 64, 64, 64, 2e-3, &extra) - 3e-3) < 1e-15 && !extra, "a measured shape costs its mean");
    CHECK(fabs(g.max_rel - 1.0 / 3.0) < 1e-12, "the fit's largest error over the shapes: %g", g.max_rel);
  }
  gemmcost_free(&g);
}

int main(void) {
  gemm_table_repeats();
  /* ---- models ---- */
  model_t *m = NULL;
  err_t e;
  int rc = model_parse(good_model, "good.model", &m, &e);
  CHECK(rc == 0, "a good model loads: %s", rc ? e.msg : "ok");
  if (m) {
    CHECK(m->nparams == 2 && m->params[0].numel == 15 && m->params[1].numel == 7, "parameter shapes");
    CHECK(model_param_bytes(m, 0, MODEL_FP16) == 30 && model_param_bytes(m, 1, MODEL_FP32) == 14,
          "run-precision and fixed dtypes give the gradient bytes");
    CHECK(m->nops == 4 && m->ops[0].count == 2 && model_dim_value(m->ops[0].n, 4) == 64, "ops, counts and N*B dims");
    CHECK(model_op_flops(&m->ops[2], 4) == 2.0 * 3 * 5 * 4, "gemm flops at batch 4");
    CHECK(model_op_bytes(&m->ops[1], 4, MODEL_FP16) == 2.0 * 32 * 3, "ewise bytes at batch 4, fp16");
    CHECK(model_op_bytes(&m->ops[3], 4, MODEL_FP16) == 4.0 * 22 * 7, "a dtype=fp32 op ignores the run precision");
    int order[2];
    model_ready_order(m, order);
    CHECK(order[0] == 1 && order[1] == 0, "ready order follows backward");
    model_destroy(m);
  }
  /* Version 2: C+N*B dimensions and batched GEMMs (gemms=), as ddpsim_export writes them. */
  rc = model_parse("ddpsim-model 2\nname t\nbatch 2\ntokens 3 chars\nprecision fp32\nparam a 3\nforward\n"
                   "gemm s m=7 n=5 k=3 gemms=12*B\newise ln elems=1536+768*B arrays=1\n"
                   "backward\ngemm d m=7 n=5 k=3 gemms=4 ready=a\n",
                   "v2.model", &m, &e);
  CHECK(rc == 0, "a version 2 model loads: %s", rc ? e.msg : "ok");
  if (m) {
    CHECK(model_op_gemms(&m->ops[0], 3) == 36 && model_op_flops(&m->ops[0], 3) == 2.0 * 7 * 5 * 3 * 36 &&
              model_op_bytes(&m->ops[0], 3, MODEL_FP16) == 2.0 * 36 * (7 * 3 + 3 * 5 + 7 * 5),
          "gemms=12*B at batch 3: 36 products, their flops and bytes");
    CHECK(model_dim_value(m->ops[1].elems, 3) == 1536 + 768 * 3 && model_op_bytes(&m->ops[1], 3, MODEL_FP32) ==
                                                                       4.0 * (1536 + 768 * 3),
          "elems=1536+768*B at batch 3");
    CHECK(model_op_gemms(&m->ops[1], 3) == 1 && model_op_gemms(&m->ops[2], 3) == 4, "gemms of an ewise op and a constant");
    model_destroy(m);
  }
  model_err("C+N*B in version 1", HDR "param a 3\nbackward\newise g elems=1+2*B arrays=1 ready=a\n",
            "x.model:8: elems: '1+2*B': a C+N*B dimension needs 'ddpsim-model 2'");
  model_err("gemms= in version 1", HDR "param a 3\nbackward\ngemm g m=1 n=1 k=1 gemms=2 ready=a\n",
            "x.model:8: gemms= needs 'ddpsim-model 2'");
  model_err("C+N without B", "ddpsim-model 2\nname t\nbatch 2\ntokens 3 chars\nprecision fp32\nparam a 3\nbackward\n"
            "ewise g elems=1+2 arrays=1 ready=a\n", "x.model:8: elems: '1+2' is not C+N*B");
  model_err("empty", "", "x.model: empty file");
  model_err("wrong header", "ddpsim-topology 1\n", "x.model:1: first line must be 'ddpsim-model 1'");
  model_err("wrong version", "ddpsim-model 9\n", "x.model:1: unsupported model format version '9'");
  model_err("unknown line", HDR "colour blue\n", "x.model:6: unknown line 'colour'");
  model_err("bad shape", HDR "param a 3xq\n", "x.model:6: shape '3xq'");
  model_err("zero dimension", HDR "param a 0x5\n", "x.model:6: shape '0x5'");
  model_err("duplicate parameter", HDR "param a 3\nparam a 4\n", "x.model:7: parameter 'a' is declared twice");
  model_err("bad dtype", HDR "param a 3 fp8\n", "x.model:6: dtype 'fp8'");
  model_err("unknown op", HDR "param a 3\nbackward\npool c1 m=1\n", "x.model:8: unknown op kind 'pool'");
  model_err("gemm missing k", HDR "param a 3\nbackward\ngemm g m=1 n=2 ready=a\n", "x.model:8: gemm op needs m=, n= and k=");
  model_err("bad dim", HDR "param a 3\nbackward\ngemm g m=1 n=C k=2 ready=a\n", "x.model:8: n: 'C'");
  model_err("unknown ready", HDR "param a 3\nbackward\newise g elems=1 arrays=1 ready=zz\n",
            "x.model:8: ready= names unknown parameter 'zz'");
  model_err("ready twice", HDR "param a 3\nbackward\newise g elems=1 arrays=1 ready=a\newise h elems=1 arrays=1 ready=a\n",
            "x.model:9: parameter 'a' already became ready at line 8");
  model_err("never ready", HDR "param a 3\nparam b 3\nbackward\newise g elems=1 arrays=1 ready=a\n",
            "x.model: parameter 'b' never becomes ready");
  model_err("ready in forward", HDR "param a 3\nforward\newise g elems=1 arrays=1 ready=a\n",
            "x.model:8: ready= is only allowed on backward ops");
  model_err("sections out of order", HDR "param a 3\nbackward\newise g elems=1 arrays=1 ready=a\nforward\n",
            "x.model:9: section 'forward' out of order");
  model_err("missing precision", "ddpsim-model 1\nname t\nbatch 2\ntokens 3 chars\nparam a 3\nbackward\newise g elems=1 arrays=1 ready=a\n",
            "x.model: missing 'precision' line");
  model_err("negative count", HDR "param a 3\nbackward\newise g elems=1 arrays=1 count=-2 ready=a\n",
            "x.model:8: count must be an integer from 1 to 1000000000, got '-2'");
  /* Overflow: refused where it is written, never wrapped into a small number. */
  model_err("a gemm dimension of 2^63-1 per sample",
            HDR "param a 3\nbackward\ngemm g m=9223372036854775807*B n=2 k=2 ready=a\n",
            "x.model:8: m: '9223372036854775807*B' exceeds the largest dimension, 1099511627776 (2^40)");
  model_err("a gemm dimension beyond a long", HDR "param a 3\nbackward\ngemm g m=4 n=99999999999999999999 k=2 ready=a\n",
            "x.model:8: n: '99999999999999999999' is not a positive integer");
  model_err("elems of 2^41", HDR "param a 3\nbackward\newise g elems=2199023255552 arrays=1 ready=a\n",
            "x.model:8: elems: '2199023255552' exceeds the largest dimension");
  model_err("a shape of 2^42 elements", HDR "param a 4194304x1048576\n", "x.model:6: shape '4194304x1048576' has more than");
  model_err("parameters totalling more than 2^40",
            HDR "param a 1048576x524288\nparam b 1048576x524288\nparam c 1048576x524288\n",
            "x.model:8: the parameters so far total 1649267441664, more than 1099511627776");
  model_err("a batch of 2^31", "ddpsim-model 1\nname t\nbatch 2147483648\n", "x.model:3: batch must be an integer from 1 to 4194304");
  model_err("launches beyond a billion", HDR "param a 3\nbackward\newise g elems=1 arrays=1 launches=2000000000 ready=a\n",
            "x.model:8: launches must be an integer from 1 to 1000000000");
  {
    /* The largest model the bounds allow: its sizes in doubles and longs stay exact and finite. */
    model_t *mm = NULL;
    err_t ee;
    int r = model_parse(HDR "param a 1048576x1048576\nbackward\ngemm g m=1099511627776 n=1099511627776*B k=3 ready=a\n",
                        "big.model", &mm, &ee);
    CHECK(r == 0 && model_total_params(mm) == MODEL_DIM_MAX &&
              model_dim_value(mm->ops[0].n, MODEL_BATCH_MAX) == MODEL_DIM_MAX * MODEL_BATCH_MAX &&
              model_op_flops(&mm->ops[0], MODEL_BATCH_MAX) == 2.0 * 3 * 0x1p40 * 0x1p40 * 0x1p22,
          "dimensions at the bounds load and multiply without overflow: %s", r ? ee.msg : "ok");
    model_destroy(mm);
    CHECK(model_load(".", &mm, &ee) == ERR_IO && strstr(ee.msg, ".: cannot read: Is a directory"),
          "a directory as a model file -> %s", ee.msg);
  }
  {
    model_t *mm = NULL;
    err_t ee;
    CHECK(model_load("/nonexistent/x.model", &mm, &ee) == ERR_IO && strstr(ee.msg, "/nonexistent/x.model: cannot read"),
          "an unreadable model file -> %s", ee.msg);
  }

  /* ---- the generator: parameter count and a consistent file ---- */
  {
    modelgen_mlstm spec = {.name = NULL, .hidden = 4096, .embed = 64, .vocab = 256, .seq = 256, .batch = 32,
                           .precision = MODEL_FP32};
    char *text = NULL;
    rc = modelgen_mlstm_text(&spec, &text, &e);
    m = NULL;
    if (rc == 0) rc = model_parse(text, "gen", &m, &e);
    CHECK(rc == 0 && model_total_params(m) == 86335744L, "generated mLSTM-4k parses, 86,335,744 parameters");
    if (m) {
      double f = 0;
      for (int i = 0; i < m->nops; i++)
        if (m->ops[i].phase != MODEL_PHASE_OPTIMIZER) f += model_op_flops(&m->ops[i], 32) * (double)m->ops[i].count;
      /* Recurrent GEMMs dominate: forward 2*(H*H + 4H*H) per token, backward twice that. */
      double per_token = f / (32.0 * 256.0), expect = 3.0 * 2.0 * 5.0 * 4096.0 * 4096.0;
      CHECK(per_token > expect && per_token < 1.1 * expect, "GEMM flops per char %.4g within 10%% of 30 H^2 = %.4g", per_token, expect);
    }
    model_destroy(m);
    free(text);
    spec.hidden = 0;
    CHECK(modelgen_mlstm_text(&spec, &text, &e) == ERR_USAGE, "generator refuses hidden 0 (ERR_USAGE)");
  }

  /* ---- topologies ---- */
  {
    topo_t *t = NULL;
    rc = topo_parse("ddpsim-topology 1\nname a\ngpus_per_node 4\nintra pcie links=1 bw=12GBps\nnic 25gbe count=1 bw=25Gbps\n"
                    "switch bw=100Gbps\n", "t.topo", &t, &e);
    CHECK(rc == 0 && t->gpus_per_node == 4 && t->intra_bw_Bps == 12e9 && t->nic_bw_Bps == 25e9 / 8 &&
              t->switch_bw_Bps == 100e9 / 8 && strcmp(t->nic_class, "25gbe") == 0,
          "a good topology loads with units converted");
    topo_destroy(t);
  }
  topo_err("wrong header", "ddpsim-model 1\n", "x.topo:1: first line must be 'ddpsim-topology 1'");
  topo_err("bad bandwidth", "ddpsim-topology 1\nname a\ngpus_per_node 8\nintra nvlink links=6 bw=25GB\n",
           "x.topo:4: bw '25GB' is not a bandwidth");
  topo_err("zero GPUs", "ddpsim-topology 1\nname a\ngpus_per_node 0\n", "x.topo:3: expected 'gpus_per_node N'");
  topo_err("unknown key", "ddpsim-topology 1\nname a\ngpus_per_node 8\nnic ib count=4 speed=1Gbps\n",
           "x.topo:4: unknown key 'speed=1Gbps'");
  topo_err("missing nic", "ddpsim-topology 1\nname a\ngpus_per_node 8\nintra nvlink links=6 bw=25GBps\n",
           "x.topo: missing 'nic' line");
  topo_err("unknown line", "ddpsim-topology 1\nname a\nracks 3\n", "x.topo:3: unknown line 'racks'");
  topo_err("a bandwidth of 1e-300", "ddpsim-topology 1\nname a\ngpus_per_node 8\nintra nvlink links=6 bw=1e-300GBps\n",
           "x.topo:4: bw '1e-300GBps' is not a bandwidth like 25GBps or 100Gbps from 1kBps to 1000TBps");
  topo_err("a bandwidth of 1e308", "ddpsim-topology 1\nname a\ngpus_per_node 8\nintra nvlink links=6 bw=25GBps\n"
           "nic ib count=4 bw=1e308Gbps\n", "x.topo:5: bw '1e308Gbps' is not a bandwidth like 100Gbps from 1kBps");
  topo_err("a switch of 1e300", "ddpsim-topology 1\nname a\nswitch bw=1e300Bps\n", "x.topo:3: expected 'switch nonblocking'");
  topo_err("an overflowing bandwidth", "ddpsim-topology 1\nname a\ngpus_per_node 8\nintra nvlink links=6 bw=1e999Bps\n",
           "x.topo:4: bw '1e999Bps' is not a bandwidth");
  {
    topo_t *t = NULL;
    err_t ee;
    CHECK(topo_load(".", &t, &ee) == ERR_IO && strstr(ee.msg, ".: cannot read: Is a directory"),
          "a directory as a topology file -> %s", ee.msg);
  }
#define HEAD "ddpsim-topology 1\nname a\ngpus_per_node 4\nintra nvlink links=2 bw=25GBps\nnic ib count=2 bw=100Gbps\n"
  {
    topo_t *t = NULL;
    rc = topo_parse(HEAD "pair 0 1 links=2\npair 2 3 links=1\nnic_near 0 0,1\nnic_near 1 2,3\n", "g.topo", &t, &e);
    CHECK(rc == 0 && t->npairs == 2 && topo_pair_links(t, 1, 0) == 2 && topo_pair_links(t, 2, 3) == 1 &&
              topo_pair_links(t, 0, 2) == 0 && t->has_near && t->near[0][1] && !t->near[0][2] && t->near[1][3],
          "a link graph and NIC placement load");
    topo_destroy(t);
  }
  topo_err("pair syntax", HEAD "pair 0 1 2\n", "x.topo:6: expected 'pair GPU GPU links=N'");
  topo_err("pair with itself", HEAD "pair 1 1 links=1\n", "x.topo:6: a pair joins two different GPUs");
  topo_err("pair twice", HEAD "pair 0 1 links=1\npair 1 0 links=1\n", "x.topo:7: GPUs 1 and 0 are paired twice");
  topo_err("pair beyond the node", HEAD "pair 0 5 links=1\n", "x.topo:6: pair 0-5 names a GPU beyond gpus_per_node 4");
  topo_err("more pair links than the GPU has", HEAD "pair 0 1 links=2\npair 0 2 links=1\n",
           "x.topo:7: GPU 0 has 3 links in its pairs, more than the 2 of its 'intra' line");
  topo_err("nic_near unknown NIC", HEAD "nic_near 2 0\nnic_near 0 1\nnic_near 1 1\n", "x.topo:6: nic_near names NIC 2, and the node has 2 NICs");
  topo_err("nic_near bad GPU", HEAD "nic_near 0 0,x\n", "x.topo:6: 'x' is not a GPU number");
  topo_err("nic_near beyond the node", HEAD "nic_near 0 7\nnic_near 1 0\n", "x.topo:6: nic_near names GPU 7 beyond gpus_per_node 4");
  topo_err("nic_near twice", HEAD "nic_near 0 0\nnic_near 0 1\n", "x.topo:7: NIC 0 already has a nic_near line (line 6)");
  topo_err("a NIC without nic_near", HEAD "nic_near 0 0\n", "x.topo: NIC 1 has no nic_near line");
#undef HEAD

  /* ---- profiles ---- */
  {
    char text[2048];
    snprintf(text, sizeof text,
             "{\"format\":\"ddpsim-profile\",\"version\":1,\"name\":\"p\",\"compute\":{\"fp32\":{\"gemm\":%s,"
             "\"ewise\":{\"model\":\"table\",\"points\":[{\"bytes\":1000,\"time_s\":1e-6},{\"bytes\":4000,\"time_s\":2e-6},"
             "{\"bytes\":4000,\"time_s\":2e-6}],\"fallback\":{\"model\":\"roofline\",\"launch_s\":0,\"mem_bw_Bps\":5e9}}}},"
             "\"comm\":{\"links\":{\"nvlink\":{\"lat_s\":1e-6,\"efficiency\":0.8},\"ib\":{\"lat_s\":5e-6,\"bw_Bps\":12e9}}}}",
             roof);
    profile_t *p = NULL;
    rc = profile_parse(text, "p.json", &p, &e);
    CHECK(rc == 0, "a good profile loads: %s", rc ? e.msg : "ok");
    if (p) {
      model_op op = {.kind = MODEL_OP_GEMM, .m = {1000, 0}, .n = {1000, 0}, .k = {1000, 0}, .count = 1, .follows_run = 1};
      double t;
      int x;
      rc = cost_op_time(p, &op, 1, MODEL_FP32, &t, &x, &e);
      CHECK(rc == 0 && check_close(1e-6 + 2e9 / 0.5e12, t, 0, 1e-12), "roofline gemm time %.6g", t);
      model_op ew = {.kind = MODEL_OP_EWISE, .elems = {500, 0}, .arrays = 1, .count = 1, .follows_run = 0, .dtype = MODEL_FP32};
      rc = cost_op_time(p, &ew, 1, MODEL_FP32, &t, &x, &e); /* 2000 bytes: between 1000 and 4000 */
      /* Rates 1e9 and 2e9 B/s, interpolated in log(size): halfway in log is 2000 -> 1.5e9 B/s. */
      CHECK(rc == 0 && x == 0 && check_close(2000.0 / 1.5e9, t, 0, 1e-9), "table ewise interpolated: %.6g s", t);
      ew.elems.v = 1000; /* 4000 bytes: measured twice, exactly */
      rc = cost_op_time(p, &ew, 1, MODEL_FP32, &t, &x, &e);
      CHECK(rc == 0 && x == 0 && check_close(2e-6, t, 0, 1e-12), "a measured size costs what was measured");
      /* Past the largest size: that size's rate (2e9 B/s), not the fallback's 5e9 fitted over the
       * caches' sizes; so a larger op never costs less than the largest measured one. */
      ew.elems.v = 100000; /* 400 kB */
      rc = cost_op_time(p, &ew, 1, MODEL_FP32, &t, &x, &e);
      CHECK(rc == 0 && x == 1 && check_close(4e5 / 2e9, t, 0, 1e-12),
            "past the table: the largest size's rate, flagged extrapolated: %.6g s", t);
      ew.elems.v = 1001; /* 4004 bytes, just past 4000 */
      rc = cost_op_time(p, &ew, 1, MODEL_FP32, &t, &x, &e);
      CHECK(rc == 0 && x == 1 && t > 2e-6 && check_close(4004 / 2e9, t, 0, 1e-12),
            "just past the largest size: dearer than it (%.6g s > 2e-6)", t);
      ew.elems.v = 25; /* 100 bytes: below the table, the fallback */
      rc = cost_op_time(p, &ew, 1, MODEL_FP32, &t, &x, &e);
      CHECK(rc == 0 && x == 1 && check_close(100 / 5e9, t, 0, 1e-12), "below the table: fallback, flagged extrapolated");
      ew.follows_run = 1;
      rc = cost_op_time(p, &ew, 1, MODEL_FP16, &t, &x, &e);
      CHECK(rc == ERR_INPUT && strstr(e.msg, "no ewise cost model for fp16"), "a missing precision -> %s", e.msg);
      double bw, lat;
      rc = profile_link(p, "nvlink", 25e9, &bw, &lat, &e);
      CHECK(rc == 0 && bw == 20e9 && lat == 1e-6, "link efficiency applies to the nominal bandwidth");
      rc = profile_link(p, "ib", 12.5e9, &bw, &lat, &e);
      CHECK(rc == 0 && bw == 12e9, "an absolute link bandwidth wins");
      rc = profile_link(p, "10gbe", 1.25e9, &bw, &lat, &e);
      CHECK(rc == ERR_INPUT && strstr(e.msg, "no comm.links entry for link class '10gbe' (it has: nvlink, ib)"),
            "a missing link class -> %s", e.msg);
      profile_destroy(p);
    }
  }
  profile_err("not JSON", "{\n\"format\": \"ddpsim-profile\",\n  oops\n}", "x.json:3: not valid JSON");
  profile_err("wrong format", "{\"format\":\"other\",\"version\":1}", "not a ddpsim profile");
  profile_err("wrong version", "{\"format\":\"ddpsim-profile\",\"version\":2}", "unsupported profile version 2");
  profile_err("no compute", "{\"format\":\"ddpsim-profile\",\"version\":1}", "\"compute\" is missing");
  {
    char text[1024];
    snprintf(text, sizeof text,
             "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{\"gemm\":{\"model\":\"roofline\","
             "\"launch_s\":0,\"peak_flops\":-1,\"efficiency\":0.5,\"mem_bw_Bps\":1e9}}}}");
    profile_err("negative peak", text, "compute.fp32.gemm.peak_flops must be a rate in flop/s from 1e+06 to 1e+18, got -1");
    snprintf(text, sizeof text,
             "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{\"gemm\":%s,\"ewise\":%s}},"
             "\"comm\":{\"links\":{\"x\":{\"lat_s\":1e-6}}}}", roof, roof);
    profile_err("link without bandwidth", text, "comm.links.x needs bw_Bps (bytes/s) or efficiency");
    snprintf(text, sizeof text,
             "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{\"gemm\":%s,\"ewise\":{\"model\":\"table\","
             "\"points\":[]}}},\"comm\":{\"links\":{}}}", roof);
    profile_err("table without fallback", text, "compute.fp32.ewise.fallback is missing");
  }

  /* ---- the fused attention op (format version 8) and a profile's attention table ---- */
  {
#define AT "ddpsim-model 8\nname t\nbatch 2\ntokens 128 tokens\nprecision fp16\nparam w 8\nforward\n"
    rc = model_parse(AT "attn a heads=4*B q=128 kv=128 d=64 causal=1 pass=fwd\nattn f heads=4*B q=128 kv=128 d=64 pass=fwd\n"
                        "backward\nattn a.bwd heads=4*B q=128 kv=128 d=64 kv_heads=2*B causal=1 pass=bwd\n"
                        "ewise g elems=8 arrays=2 ready=w\n",
                     "attn.model", &m, &e);
    CHECK(rc == 0, "a version 8 model with attn ops loads: %s", rc ? e.msg : "ok");
    if (m) {
      const model_op *a = &m->ops[0], *f = &m->ops[1], *b = &m->ops[2];
      double full = 4.0 * 8 * 128 * 128 * 64; /* 4 heads x batch 2 */
      CHECK(a->kind == MODEL_OP_ATTN && a->causal && !a->bwd && !f->causal && b->bwd &&
                model_dim_value(b->kv_heads, 2) == 4 && model_dim_value(a->kv_heads, 2) == 8,
            "attn ops: causal, pass and kv_heads (default: the heads) as written");
      CHECK(model_op_flops(f, 2) == full && model_op_flops(a, 2) == full / 2 && model_op_flops(b, 2) == 2.5 * full / 2,
            "attention FLOPs: 4 heads q kv d; causal half (%g of %g); backward 2.5 times", model_op_flops(a, 2), full);
      CHECK(model_op_bytes(f, 2, MODEL_FP16) == 2.0 * 64 * (2 * 8 * 128 + 2 * 8 * 128) &&
                model_op_bytes(b, 2, MODEL_FP16) == 2.0 * 64 * (4 * 8 * 128 + 4 * 4 * 128),
            "attention bytes: Q, K, V in and O out; backward Q, K, V, O, dO in and dQ, dK, dV out (K, V at kv_heads)");
      /* Without an attention table: the pass's GEMMs at the profile's GEMM costs, causal half, backward
       * 2.5 times; with one, the FLOPs at the table's rate. */
      char text[4096];
      snprintf(text, sizeof text,
               "{\"format\":\"ddpsim-profile\",\"version\":1,\"name\":\"p\",\"compute\":{\"fp16\":{\"gemm\":%s,\"ewise\":%s}},"
               "\"comm\":{\"links\":{\"nvlink\":{\"lat_s\":1e-6,\"bw_Bps\":1e9}}}}",
               roof, roof);
      profile_t *p = NULL;
      rc = profile_parse(text, "p.json", &p, &e);
      CHECK(rc == 0, "a profile without an attention table loads: %s", rc ? e.msg : "ok");
      if (p) {
        double ta, tf, tb, tg1, tg2;
        int x;
        model_op g1 = {.kind = MODEL_OP_GEMM, .m = {128, 0}, .n = {128, 0}, .k = {64, 0}, .gemms = {4, 1}, .count = 1,
                       .launches = 1, .follows_run = 1};
        model_op g2 = g1;
        g2.m = (model_dim){64, 0, 0}, g2.k = (model_dim){128, 0, 0};
        int bad = cost_op_time(p, a, 2, MODEL_FP16, &ta, &x, &e) || cost_op_time(p, f, 2, MODEL_FP16, &tf, &x, &e) ||
                  cost_op_time(p, b, 2, MODEL_FP16, &tb, &x, &e) || cost_op_time(p, &g1, 2, MODEL_FP16, &tg1, &x, &e) ||
                  cost_op_time(p, &g2, 2, MODEL_FP16, &tg2, &x, &e);
        CHECK(!bad, "attention priced without a table: %s", bad ? e.msg : "ok");
        CHECK(check_close(tg1 + tg2, tf, 0, 1e-12) && check_close(tf / 2, ta, 0, 1e-12) && check_close(2.5 * ta, tb, 0, 1e-12),
              "without a table: Q K^T and P V at the GEMM costs (%.6g s), causal at half (%.6g), backward 2.5 times (%.6g)",
              tf, ta, tb);
        profile_destroy(p);
      }
      const char *tab = "\"attention\":{\"kernel\":\"k\",\"seq\":[128,512],\"head_dims\":[64,128],"
                        "\"full_tflops\":[[100,200],[150,250]],\"causal_tflops\":[[50,100],[75,125]]}";
      snprintf(text, sizeof text,
               "{\"format\":\"ddpsim-profile\",\"version\":1,\"name\":\"p\",\"compute\":{\"fp16\":{\"gemm\":%s,"
               "\"ewise\":%s,%s}},\"comm\":{\"links\":{\"nvlink\":{\"lat_s\":1e-6,\"bw_Bps\":1e9}}}}",
               "{\"model\":\"roofline\",\"launch_s\":1e-6,\"peak_flops\":300e12,\"efficiency\":0.5,\"mem_bw_Bps\":1e11}",
               roof, tab);
      rc = profile_parse(text, "p.json", &p, &e);
      CHECK(rc == 0 && profile_attention_table(p, MODEL_FP16) && !profile_attention_table(p, MODEL_BF16),
            "a profile with an attention table loads: %s", rc ? e.msg : "ok");
      if (p) {
        double t;
        int x;
        rc = cost_op_time(p, f, 2, MODEL_FP16, &t, &x, &e);
        CHECK(!rc && x == 0 && check_close(full / 100e12, t, 0, 1e-12), "at a measured length and head dim: its rate (%.6g s)", t);
        rc = cost_op_time(p, a, 2, MODEL_FP16, &t, &x, &e);
        CHECK(!rc && x == 0 && check_close(full / 2 / 50e12, t, 0, 1e-12), "causal: half the FLOPs at the causal rate");
        model_op mid = *f;
        mid.n = (model_dim){256, 0, 0};
        mid.k = (model_dim){96, 0, 0};
        rc = cost_op_time(p, &mid, 2, MODEL_FP16, &t, &x, &e);
        /* 256: halfway in log between 128 and 512; 96 halfway between 64 and 128: (150 + 200) / 2 = 175... */
        double rate = 0.5 * (0.5 * 100 + 0.5 * 200) + 0.5 * (0.5 * 150 + 0.5 * 250);
        CHECK(!rc && x == 0 && check_close(model_op_flops(&mid, 2) / (rate * 1e12), t, 0, 1e-9),
              "between lengths (log) and head dims (linear): the interpolated rate, %.4g TFLOP/s", rate);
        mid.n = (model_dim){4096, 0, 0};
        rc = cost_op_time(p, &mid, 2, MODEL_FP16, &t, &x, &e);
        CHECK(!rc && x == 1, "past the table's lengths: its edge, counted as extrapolated");
        profile_destroy(p);
      }
      snprintf(text, sizeof text,
               "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp16\":{\"gemm\":%s,\"ewise\":%s,%s}}}", roof, roof,
               tab);
      profile_err("an attention rate above the gemm peak", text, "compute.fp16.attention.full_tflops[0][0] must be a rate above 0 and at most the gemm peak (1 TFLOP/s)");
      snprintf(text, sizeof text,
               "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp16\":{\"gemm\":%s,\"ewise\":%s,"
               "\"attention\":{\"kernel\":\"k\",\"seq\":[512,128],\"head_dims\":[64],\"full_tflops\":[[1,1]],"
               "\"causal_tflops\":[[1,1]]}}}}",
               roof, roof);
      profile_err("attention lengths not increasing", text, "compute.fp16.attention.seq must be 1 to 16 increasing lengths");
      model_destroy(m);
      m = NULL;
    }
    model_err("attn in version 7", "ddpsim-model 7\nname t\nbatch 2\ntokens 1 tokens\nprecision fp16\nparam w 8\nforward\n"
              "attn a heads=4 q=8 kv=8 d=8 pass=fwd\n", "x.model:8: an attn op needs 'ddpsim-model 8'");
    model_err("attn without d", AT "attn a heads=4 q=8 kv=8 pass=fwd\n", "x.model:8: attn op needs heads=, q=, kv=, d= and pass=");
    model_err("attn without pass", AT "attn a heads=4 q=8 kv=8 d=8\n", "x.model:8: attn op needs heads=");
    model_err("attn backward in forward", AT "attn a heads=4 q=8 kv=8 d=8 pass=bwd\n", "x.model:8: an attn op with pass=bwd belongs to the backward section");
    rc = model_parse(AT "attn a heads=4 q=8 kv=8 d=8 pass=fwd\nbackward\nattn a.recompute heads=4 q=8 kv=8 d=8 pass=fwd\n"
                        "attn a.bwd heads=4 q=8 kv=8 d=8 pass=bwd ready=w\n",
                     "ck.model", &m, &e);
    CHECK(rc == 0 && m && m->ops[1].phase == MODEL_PHASE_BACKWARD && !m->ops[1].bwd,
          "a forward attn op in backward loads (a checkpointed block's recomputation): %s", rc ? e.msg : "ok");
    model_destroy(m);
    m = NULL;
    model_err("attn in the optimizer", AT "attn a heads=4 q=8 kv=8 d=8 pass=fwd\noptimizer\nattn o heads=4 q=8 kv=8 d=8 pass=fwd\n",
              "x.model:10: an attn op with pass=fwd belongs to the forward (or backward, recomputed) section");
    model_err("attn kv_heads not dividing", AT "attn a heads=4 kv_heads=3 q=8 kv=8 d=8 pass=fwd\n", "kv_heads must divide its heads");
    model_err("attn causal=2", AT "attn a heads=4 q=8 kv=8 d=8 causal=2 pass=fwd\n", "x.model:8: causal must be 0 or 1");
    model_err("attn m= is a gemm's", AT "attn a heads=4 q=8 kv=8 d=8 m=3 pass=fwd\n", "unknown or misplaced key 'm=3' for a attn op");
#undef AT
  }

  /* ---- fits kept with --accept-poor-fit: their warnings load and are listed ---- */
  {
    char text[2048];
    snprintf(text, sizeof text,
             "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{\"gemm\":%s,\"ewise\":%s}},"
             "\"comm\":{\"links\":{\"shm\":{\"lat_s\":1e-6,\"bw_Bps\":1e9,\"warning\":\"poor fit kept: 140%% rms\"}}}}",
             roof, roof);
    profile_t *p = NULL;
    rc = profile_parse(text, "w.json", &p, &e);
    CHECK(rc == 0 && profile_nwarnings(p) == 1 && strcmp(profile_warning(p, 0), "comm.links.shm: poor fit kept: 140% rms") == 0 &&
              profile_warning(p, 1) == NULL,
          "a link's warning loads and is listed with its path: %s", rc ? e.msg : profile_warning(p, 0));
    profile_destroy(p);
    snprintf(text, sizeof text,
             "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{\"gemm\":%s,\"ewise\":%s}},"
             "\"comm\":{\"links\":{\"shm\":{\"lat_s\":1e-6,\"bw_Bps\":1e9,\"warning\":3}}}}", roof, roof);
    profile_err("a warning that is not a string", text, "x.json: comm.links.shm.warning must be a string");
  }

  /* ---- compute jitter ---- */
  {
    char text[2048];
    snprintf(text, sizeof text,
             "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"jitter\":{\"model\":\"empirical\","
             "\"ratios\":[0.9,1.1]},\"fp32\":{\"gemm\":%s,\"ewise\":%s}},\"comm\":{\"links\":{\"x\":{\"lat_s\":1e-6,\"bw_Bps\":1e9}}}}", roof, roof);
    profile_t *p = NULL;
    rc = profile_parse(text, "j.json", &p, &e);
    CHECK(rc == 0, "a profile with empirical jitter loads: %s", rc ? e.msg : "ok");
    if (p) {
      profile_jitter j;
      profile_get_jitter(p, &j, &e);
      gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
      int only = 1, lo = 0, hi = 0;
      for (int i = 0; i < 1000; i++) {
        double d = profile_jitter_draw(&j, rng);
        only &= d == 0.9 || d == 1.1;
        lo += d == 0.9;
        hi += d == 1.1;
      }
      CHECK(j.kind == PROFILE_JITTER_EMPIRICAL && only && lo > 400 && hi > 400, "empirical draws are measured ratios (%d, %d)", lo, hi);
      /* Lognormal with mean 1 and cv 0.05: sample mean and spread over 200,000 draws. */
      profile_jitter ln = {.kind = PROFILE_JITTER_LOGNORMAL, .cv = 0.05};
      double s1 = 0, s2 = 0;
      int N = 200000;
      for (int i = 0; i < N; i++) {
        double d = profile_jitter_draw(&ln, rng);
        s1 += d;
        s2 += d * d;
      }
      double mean = s1 / N, sd = sqrt(s2 / N - mean * mean);
      CHECK(check_close(1.0, mean, 1e-3, 0) && check_close(0.05, sd, 0, 0.02), "lognormal draws: mean %.5f, sd %.5f", mean, sd);
      gsl_rng_free(rng);
      profile_destroy(p);
    }
    snprintf(text, sizeof text,
             "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"jitter\":{\"model\":\"gauss\"},"
             "\"fp32\":{\"gemm\":%s,\"ewise\":%s}},\"comm\":{\"links\":{}}}", roof, roof);
    profile_err("unknown jitter model", text, "compute.jitter.model 'gauss'");
  }

  /* ---- conv ops: the implicit GEMM of each pass, hand-computed ----
   * c=64 h=w=56 k=128 r=s=3 stride 2 pad 1: P = Q = (56 + 2 - 3) / 2 + 1 = 28.
   * fwd   m = K = 128,  n = N*P*Q = 784 N,  k = C*R*S = 576
   * dgrad m = C = 64,   n = N*H*W = 3136 N, k = K*R*S / 4 = 288 (stride 2 x 2)
   * wgrad m = K = 128,  n = C*R*S = 576,    k = N*P*Q = 784 N */
  {
    const char *conv_model = "ddpsim-model 3\nname t\nbatch 2\ntokens 1 images\nprecision fp32\nparam w 128x64x3x3\n"
                             "forward\nconv c pass=fwd n=B c=64 h=56 w=56 k=128 r=3 s=3 stride=2 pad=1\n"
                             "backward\nconv c.dgrad pass=dgrad n=B c=64 h=56 w=56 k=128 r=3 s=3 stride=2 pad=1\n"
                             "conv c.wgrad pass=wgrad n=2*B c=64 h=56 w=56 k=128 r=3 s=3 stride_h=2 stride_w=2 "
                             "pad_h=1 pad_w=1 ready=w\noptimizer\newise sgd elems=73728 arrays=5\n";
    rc = model_parse(conv_model, "conv.model", &m, &e);
    CHECK(rc == 0, "a model with conv ops loads: %s", rc ? e.msg : "ok");
    if (m) {
      const model_op *f = &m->ops[0], *d = &m->ops[1], *w = &m->ops[2];
      CHECK(f->kind == MODEL_OP_GEMM && f->conv.pass == MODEL_CONV_FWD && model_conv_p(&f->conv) == 28 &&
                model_conv_q(&f->conv) == 28,
            "conv fwd: a gemm op, P = Q = 28");
      CHECK(model_dim_value(f->m, 4) == 128 && model_dim_value(f->n, 4) == 784 * 4 && model_dim_value(f->k, 4) == 576,
            "fwd implicit GEMM m=K n=N*P*Q k=C*R*S (%ld %ld %ld)", model_dim_value(f->m, 4), model_dim_value(f->n, 4),
            model_dim_value(f->k, 4));
      CHECK(d->conv.pass == MODEL_CONV_DGRAD && model_dim_value(d->m, 4) == 64 && model_dim_value(d->n, 4) == 3136 * 4 &&
                model_dim_value(d->k, 4) == 288,
            "dgrad implicit GEMM m=C n=N*H*W k=K*R*S/4 (%ld %ld %ld)", model_dim_value(d->m, 4), model_dim_value(d->n, 4),
            model_dim_value(d->k, 4));
      CHECK(w->conv.pass == MODEL_CONV_WGRAD && model_dim_value(w->m, 4) == 128 && model_dim_value(w->n, 4) == 576 &&
                model_dim_value(w->k, 4) == 784 * 8,
            "wgrad implicit GEMM m=K n=C*R*S k=N*P*Q with n=2*B (%ld %ld %ld)", model_dim_value(w->m, 4),
            model_dim_value(w->n, 4), model_dim_value(w->k, 4));
      CHECK(model_op_flops(f, 4) == model_op_flops(w, 2) && model_op_flops(d, 4) == model_op_flops(f, 4),
            "wgrad and the stride-2 dgrad do the forward's work");
      model_destroy(m);
      m = NULL;
    }
#define CV "ddpsim-model 3\nname t\nbatch 2\ntokens 1 images\nprecision fp32\nparam w 8x3x3x3\nforward\n"
    model_err("conv in version 2", "ddpsim-model 2\nname t\nbatch 2\ntokens 1 images\nprecision fp32\nparam w 8\nforward\n"
              "conv c pass=fwd n=B c=3 h=8 w=8 k=8 r=3 s=3\n", "x.model:8: a conv op needs 'ddpsim-model 3'");
    model_err("conv without pass", CV "conv c n=B c=3 h=8 w=8 k=8 r=3 s=3\n", "x.model:8: conv op needs pass=");
    model_err("conv without r", CV "conv c pass=fwd n=B c=3 h=8 w=8 k=8 s=3\n", "x.model:8: conv op needs r=");
    model_err("conv bad pass", CV "conv c pass=bwd n=B c=3 h=8 w=8 k=8 r=3 s=3\n", "x.model:8: pass 'bwd' is not");
    model_err("conv with m=", CV "conv c pass=fwd n=B c=3 h=8 w=8 k=8 r=3 s=3 m=4\n", "follow from its geometry: 'm=4'");
    model_err("conv filter too large", CV "conv c pass=fwd n=B c=3 h=2 w=8 k=8 r=3 s=3\n", "x.model:8: the filter");
    model_err("conv negative pad", CV "conv c pass=fwd n=B c=3 h=8 w=8 k=8 r=3 s=3 pad=-1\n", "pad must be an integer");
#undef CV
    /* Version 4: the activations' layout, carried by every conv op; NCHW where a file says none. */
    rc = model_parse("ddpsim-model 4\nname t\nbatch 2\ntokens 1 images\nprecision fp16\nlayout nhwc\nparam w 8x3x3x3\n"
                     "forward\nconv c pass=fwd n=B c=3 h=8 w=8 k=8 r=3 s=3\nbackward\n"
                     "conv c.wgrad pass=wgrad n=B c=3 h=8 w=8 k=8 r=3 s=3 ready=w\n",
                     "v4.model", &m, &e);
    CHECK(rc == 0, "a version 4 model with a layout loads: %s", rc ? e.msg : "ok");
    if (m) {
      CHECK(m->layout == MODEL_LAYOUT_NHWC && m->ops[0].conv.layout == MODEL_LAYOUT_NHWC &&
                m->ops[1].conv.layout == MODEL_LAYOUT_NHWC,
            "layout nhwc: the model's and each conv op's");
      model_destroy(m);
      m = NULL;
    }
    rc = model_parse(conv_model, "conv.model", &m, &e);
    CHECK(rc == 0 && m->layout == MODEL_LAYOUT_NCHW && m->ops[0].conv.layout == MODEL_LAYOUT_NCHW,
          "no layout line: NCHW, PyTorch's default");
    model_destroy(m);
    m = NULL;
#define L4 "ddpsim-model 4\nname t\nbatch 2\ntokens 1 images\nprecision fp32\n"
    model_err("layout in version 3", "ddpsim-model 3\nname t\nbatch 2\ntokens 1 images\nprecision fp32\nlayout nhwc\n",
              "x.model:6: a layout line needs 'ddpsim-model 4'");
    model_err("layout chwn", L4 "layout chwn\n", "x.model:6: expected 'layout nchw|nhwc'");
    model_err("layout without a value", L4 "layout\n", "x.model:6: expected 'layout nchw|nhwc'");
    /* Version 5: a parameter with a sparse gradient loads, and DDP's buckets refuse it: NCCL has no
     * sparse all-reduce (sim/bucket.c). */
    model_err("sparse in version 4", L4 "param e 10x4 sparse\n",
              "x.model:6: a parameter marked 'sparse' needs 'ddpsim-model 5'");
    model_err("unused twice",
              "ddpsim-model 5\nname t\nbatch 2\ntokens 1 images\nprecision fp32\nparam e 10 unused unused\n",
              "x.model:6: 'unused' is given twice");
    /* Version 7: frozen parameters (requires_grad=False), never ready, never a trainable one's name. */
    model_err("frozen in version 6", "ddpsim-model 6\nname t\nbatch 2\ntokens 1 images\nprecision fp32\nfrozen e 10x4\n",
              "x.model:6: a frozen line needs 'ddpsim-model 7'");
    model_err("frozen ready", "ddpsim-model 7\nname t\nbatch 2\ntokens 1 images\nprecision fp32\nparam l 4x4\nfrozen e 10x4\n"
              "forward\ngemm a m=4 n=B k=4\nbackward\ngemm b m=4 n=B k=4 ready=l,e\n",
              "x.model:11: ready= names 'e', which is frozen: it takes no gradient");
    model_err("frozen twice", "ddpsim-model 7\nname t\nbatch 2\ntokens 1 images\nprecision fp32\nparam e 4x4\nfrozen e 10x4\n",
              "x.model:7: parameter 'e' is declared twice");
    model_err("no_input_grad in version 6", "ddpsim-model 6\nname t\nbatch 2\ntokens 1 images\nprecision fp32\nno_input_grad emb\n",
              "x.model:6: a no_input_grad line needs 'ddpsim-model 7'");
    model_err("no_input_grad twice", "ddpsim-model 7\nname t\nbatch 2\ntokens 1 images\nprecision fp32\nno_input_grad a\nno_input_grad b\n",
              "x.model:7: a second no_input_grad line");
    model_err("frozen without a shape", "ddpsim-model 7\nname t\nbatch 2\ntokens 1 images\nprecision fp32\nfrozen e\n",
              "x.model:6: expected 'frozen NAME SHAPE [fp32|fp16|bf16|run]'");
    rc = model_parse("ddpsim-model 7\nname t\nbatch 2\ntokens 1 samples\nprecision fp16\nparam l 4x4\nfrozen e 10x4 fp32\n"
                     "forward\ngemm a m=4 n=B k=4\nbackward\ngemm b m=4 n=B k=4 ready=l\n",
                     "v7.model", &m, &e);
    CHECK(rc == 0 && m && m->nparams == 1 && m->nfrozen == 1 && m->frozen[0].numel == 40 && !m->frozen[0].follows_run &&
              m->frozen[0].dtype == MODEL_FP32,
          "version 7: 'frozen e 10x4 fp32' loads beside the trainable parameter, out of DDP's: %s", rc ? e.msg : "ok");
    model_destroy(m);
    m = NULL;
#undef L4
    rc = model_parse("ddpsim-model 5\nname t\nbatch 2\ntokens 1 samples\nprecision fp32\nparam e 10x4 fp32 sparse\n"
                     "param l 4x4 unused\nforward\ngemm a m=4 n=B k=4\nbackward\ngemm b m=4 n=B k=4 ready=l,e\n",
                     "v5.model", &m, &e);
    CHECK(rc == 0 && m && m->params[0].sparse && !m->params[1].sparse && !m->params[0].follows_run &&
              m->params[1].unused && !m->params[0].unused,
          "version 5: 'param e 10x4 fp32 sparse' loads as a sparse fp32 parameter, 'param l 4x4 unused' as unused: %s",
          rc ? e.msg : "ok");
    if (m) {
      bucket_plan bp;
      err_t be = {0};
      rc = bucket_plan_for_model(m, MODEL_FP32, 1, 25, 0, &bp, &be);
      CHECK(rc == ERR_INPUT && strstr(be.msg, "parameter 'e' has a sparse gradient") &&
                strstr(be.msg, "NCCL does not support"),
            "DDP's buckets refuse a sparse gradient, saying why: %s", be.msg);
      bucket_plan_free(&bp);
      model_destroy(m);
      m = NULL;
    }
    /* Version 5: the saved and optim lines (sim/memory.h). */
#define L5 "ddpsim-model 5\nname t\nbatch 2\ntokens 1 images\nprecision fp16\nparam w 8x3\n"
    rc = model_parse(L5 "saved elems=7+3*B bytes=16*B\noptim adamw\nforward\ngemm g m=8 n=B k=3\nbackward\n"
                        "gemm d m=8 n=3 k=B ready=w\n", "v5.model", &m, &e);
    CHECK(rc == 0 && m->has_saved && model_dim_value(m->saved_elems, 5) == 22 && model_dim_value(m->saved_bytes, 5) == 80 &&
              m->optim == MODEL_OPTIM_ADAMW,
          "version 5: saved elems=7+3*B bytes=16*B and optim adamw are read");
    model_destroy(m);
    m = NULL;
    model_err("saved in version 4", "ddpsim-model 4\nname t\nbatch 2\ntokens 1 images\nprecision fp32\nsaved elems=B\n",
              "x.model:6: a saved line needs 'ddpsim-model 5'");
    model_err("optim in version 4", "ddpsim-model 4\nname t\nbatch 2\ntokens 1 images\nprecision fp32\noptim adam\n",
              "x.model:6: an optim line needs 'ddpsim-model 5'");
    model_err("optim lamb", L5 "optim lamb\n", "x.model:7: expected 'optim none|sgd|sgd-momentum|adam|adamw|rmsprop|");
    model_err("saved with no key", L5 "saved\n", "x.model:7: expected 'saved elems=DIM bytes=DIM'");
    model_err("saved with a stray key", L5 "saved elems=B foo=3\n", "x.model:7: unknown key 'foo=3' on the saved line");
    model_err("saved twice", L5 "saved elems=B\nsaved bytes=4\n", "x.model:8: a second saved line");
    model_err("saved elems=0", L5 "saved elems=0\n", "x.model:7: elems: '0' is not a positive integer");
#undef L5
    /* Version 6: the measured line and the ops' measured times (sim/cost.h prices with them). */
#define L6 "ddpsim-model 6\nname t\nbatch 2\ntokens 1 images\nprecision fp32\nparam w 8x3\n"
#define MEAS "measured device=Intel(R)%20Xeon(R)%20CPU%20%40%202.20GHz torch=2.15.0+cpu steps=7 date=2026-11-26\n"
    rc = model_parse(L6 MEAS "forward\ngemm g m=8 n=B k=3 time_s=1.25e-4 host_s=3.5e-5\nbackward\n"
                        "gemm d m=8 n=3 k=B ready=w time_s=2.5e-4 host_s=0\noptimizer\newise sgd elems=24 arrays=3\n",
                     "v6.model", &m, &e);
    CHECK(rc == 0 && m->measured.present && strcmp(m->measured.device, "Intel(R) Xeon(R) CPU @ 2.20GHz") == 0 &&
              strcmp(m->measured.torch, "2.15.0+cpu") == 0 && m->measured.steps == 7 &&
              strcmp(m->measured.date, "2026-11-26") == 0 && m->measured.line == 7 && m->nmeasured == 2 &&
              m->ops[0].measured && m->ops[0].time_s == 1.25e-4 && m->ops[0].host_s == 3.5e-5 && m->ops[1].measured &&
              m->ops[1].time_s == 2.5e-4 && m->ops[1].host_s == 0 && !m->ops[2].measured && m->measured.step_rel_sd == -1,
          "version 6: the measured line (device decoded from %%XX) and two ops' time_s/host_s are read; no step_rel_sd: -1: %s",
          rc ? e.msg : m->measured.device);
    if (rc == 0) {
      /* Priced from the times only on a profile naming that device, at the file's batch and precision. */
      static char pt[2048];
      for (int k = 0; k < 2; k++) {
        snprintf(pt, sizeof pt,
                 "{\"format\":\"ddpsim-profile\",\"version\":1,%s\"compute\":{\"fp32\":{\"gemm\":%s,\"ewise\":%s}},"
                 "\"comm\":{\"links\":{\"nvlink\":{\"lat_s\":1e-6,\"efficiency\":0.8}}}}",
                 k ? "\"device\":{\"name\":\"Intel(R) Xeon(R) CPU @ 2.20GHz\"}," : "", roof, roof);
        profile_t *p = NULL;
        rc = profile_parse(pt, "d.json", &p, &e);
        CHECK(rc == 0, "a profile %s device.name loads: %s", k ? "with" : "without", rc ? e.msg : "ok");
        if (rc) continue;
        sim_config c;
        sim_config_defaults(&c);
        c.model = m, c.profile = p;
        cost_measured_info mi;
        double dev = 0, host = 0;
        int x = 0;
        cost_measured(&c, 2, MODEL_FP32, &mi);
        rc = cost_op_sides(&c, &m->ops[0], 2, MODEL_FP32, &dev, &host, &x, &e);
        if (k) {
          CHECK(mi.used && mi.ops == 2 && mi.total == 3 && rc == 0 && dev == 1.25e-4 && host == 3.5e-5,
                "the profile of that device: 2 of 3 ops priced from their times (%g s, host %g s)", dev, host);
          cost_measured(&c, 4, MODEL_FP32, &mi);
          CHECK(!mi.used && strstr(mi.why, "they are of batch 2, the run's is 4"), "at batch 4 they are ignored: %s", mi.why);
          cost_measured(&c, 2, MODEL_FP16, &mi);
          CHECK(!mi.used && strstr(mi.why, "precision fp32, the run's is fp16"), "at fp16 they are ignored: %s", mi.why);
          rc = cost_op_sides(&c, &m->ops[0], 4, MODEL_FP32, &dev, &host, &x, &e);
          CHECK(rc == 0 && dev != 1.25e-4, "at batch 4 the op is priced by the roofline: %g s", dev);
        } else {
          CHECK(!mi.used && mi.ops == 2 && strstr(mi.why, "does not name its device (device.name)") && rc == 0 &&
                    dev != 1.25e-4,
                "a profile without device.name: the times are ignored (%s), the roofline prices the op (%g s)", mi.why, dev);
        }
        profile_destroy(p);
      }
    }
    model_destroy(m);
    m = NULL;
    model_err("measured in version 5", "ddpsim-model 5\nname t\nbatch 2\ntokens 1 images\nprecision fp32\n" MEAS,
              "x.model:6: a measured line needs 'ddpsim-model 6'");
    model_err("time_s in version 5", "ddpsim-model 5\nname t\nbatch 2\ntokens 1 images\nprecision fp32\nparam w 3\n"
                                     "forward\newise e elems=3 arrays=1 time_s=1\n",
              "x.model:8: time_s= needs 'ddpsim-model 6'");
    model_err("time_s without a measured line", L6 "forward\newise e elems=3 arrays=1 time_s=1e-3 host_s=1e-4\n",
              "x.model:8: time_s= needs a 'measured' line before the sections");
    model_err("time_s without host_s", L6 MEAS "forward\newise e elems=3 arrays=1 time_s=1e-3\n",
              "x.model:9: a measured op needs both time_s= and host_s=");
    model_err("host_s twice", L6 MEAS "forward\newise e elems=3 arrays=1 host_s=1 host_s=2 time_s=1\n",
              "x.model:9: host_s= given twice");
    model_err("a negative time", L6 MEAS "forward\newise e elems=3 arrays=1 time_s=-1e-3 host_s=0\n",
              "x.model:9: time_s must be a time in seconds from 0 to 100000, got '-1e-3'");
    model_err("a time of 1e6 s", L6 MEAS "forward\newise e elems=3 arrays=1 time_s=1 host_s=1e6\n",
              "x.model:9: host_s must be a time in seconds from 0 to 100000, got '1e6'");
    model_err("a time that is not a number", L6 MEAS "forward\newise e elems=3 arrays=1 time_s=fast host_s=0\n",
              "x.model:9: time_s must be a time in seconds");
    model_err("measured twice", L6 MEAS MEAS, "x.model:8: a second 'measured' line (the first is line 7)");
    model_err("measured without date", L6 "measured device=cpu torch=2.15.0 steps=3\n",
              "x.model:7: the measured line needs date= (device=, torch=, steps= and date=; step_rel_sd= optional)");
    model_err("measured with a stray key", L6 "measured device=cpu torch=2 steps=3 date=2026-01-01 host=x\n",
              "x.model:7: unknown key 'host=x' on the measured line");
    model_err("measured device given twice", L6 "measured device=a device=b\n", "x.model:7: device= given twice");
    model_err("step_rel_sd above 2", L6 "measured device=cpu torch=2 steps=3 date=2026-01-01 step_rel_sd=2.5\n",
              "x.model:7: step_rel_sd='2.5': expected the steps' relative standard deviation, 0 to 2");
    model_err("step_rel_sd not a number", L6 "measured device=cpu torch=2 steps=3 date=2026-01-01 step_rel_sd=x\n",
              "x.model:7: step_rel_sd='x'");
    {
      model_t *ms = NULL;
      int rs = model_parse(L6 "measured device=cpu torch=2 steps=3 date=2026-01-01 step_rel_sd=0.042\n"
                              "forward\ngemm g m=8 n=B k=3\nbackward\ngemm d m=8 n=3 k=B ready=w\n",
                           "x.model", &ms, &e);
      CHECK(rs == 0 && ms->measured.step_rel_sd == 0.042, "the measured line's step_rel_sd= is read: %s", rs ? e.msg : "");
      model_destroy(ms);
    }
    model_err("a bad date", L6 "measured device=cpu torch=2 steps=3 date=2026-13-01\n",
              "x.model:7: date='2026-13-01': expected YYYY-MM-DD");
    model_err("a bad escape in device=", L6 "measured device=a%2 torch=2 steps=3 date=2026-01-01\n",
              "x.model:7: device='a%2': expected 1 to 127 bytes");
    model_err("a control byte in device=", L6 "measured device=a%0Ab torch=2 steps=3 date=2026-01-01\n",
              "x.model:7: device='a%0Ab'");
    model_err("steps=0", L6 "measured device=cpu torch=2 steps=0 date=2026-01-01\n",
              "x.model:7: steps must be an integer from 1 to");
    for (int k = 0; k < 3; k++) {
      static const char *const bad[] = {"3", "\"\"", "\"a\\nb\""};
      static char pt[2048];
      snprintf(pt, sizeof pt,
               "{\"format\":\"ddpsim-profile\",\"version\":1,\"device\":{\"name\":%s},\"compute\":{\"fp32\":{\"gemm\":%s,"
               "\"ewise\":%s}},\"comm\":{\"links\":{\"nvlink\":{\"lat_s\":1e-6,\"efficiency\":0.8}}}}",
               bad[k], roof, roof);
      profile_err(k == 0 ? "device.name a number" : k == 1 ? "device.name empty" : "device.name with a newline", pt,
                  "x.json: device.name must be a string of 1 to 127 characters without control characters");
    }
#undef MEAS
#undef L6
  }

  /* ---- shape-aware GEMM tables and convolution tables ---- */
  {
    /* Points at m = k = 1024, n = 16 and 256, and m = k = 4096, n = 16 and 256; n = 16 is measured
     * less efficient (rate 2*1024*16*1024/20us = 1.7 TF/s) than n = 256 (2*1024*256*1024/100us =
     * 5.4 TF/s). */
    static char text[4096];
    snprintf(text, sizeof text,
             "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{\"gemm\":{\"model\":\"table\","
             "\"points\":[{\"m\":1024,\"n\":16,\"k\":1024,\"time_s\":20e-6},{\"m\":1024,\"n\":256,\"k\":1024,\"time_s\":100e-6},"
             "{\"m\":1024,\"n\":256,\"k\":1024,\"time_s\":120e-6},"
             "{\"m\":4096,\"n\":16,\"k\":4096,\"time_s\":110e-6},{\"m\":4096,\"n\":256,\"k\":4096,\"time_s\":1.2e-3}],"
             "\"fallback\":{\"model\":\"roofline\",\"launch_s\":5e-6,\"peak_flops\":15e12,\"efficiency\":0.8,"
             "\"mem_bw_Bps\":9e11,\"mem_efficiency\":0.6}},"
             "\"conv\":{\"points\":[{\"n\":8,\"c\":64,\"h\":56,\"w\":56,\"k\":64,\"r\":3,\"s\":3,\"pad_h\":1,\"pad_w\":1,"
             "\"stride_h\":1,\"stride_w\":1,\"fwd_s\":3e-4,\"wgrad_s\":5e-4}]},"
             "\"ewise\":%s}},\"comm\":{\"links\":{\"nvlink\":{\"lat_s\":1e-6,\"efficiency\":0.8}}}}",
             roof);
    profile_t *p = NULL;
    rc = profile_parse(text, "g.json", &p, &e);
    CHECK(rc == 0, "a profile with gemm and conv tables loads: %s", rc ? e.msg : "ok");
    if (p) {
      model_op op = {.kind = MODEL_OP_GEMM, .m = {1024, 0, 0}, .n = {16, 0, 0}, .k = {1024, 0, 0}, .count = 1,
                     .launches = 1, .follows_run = 1};
      double t16, t64, t256, t, tout;
      int x, x2;
      rc = cost_op_time(p, &op, 1, MODEL_FP32, &t16, &x, &e);
      CHECK(rc == 0 && x == 0 && check_close(20e-6, t16, 0, 1e-12), "a measured shape costs what was measured: %g", t16);
      op.n.v = 256;
      rc = cost_op_time(p, &op, 1, MODEL_FP32, &t256, &x, &e);
      CHECK(rc == 0 && x == 0 && check_close(110e-6, t256, 0, 1e-12), "a shape measured twice costs the mean: %g", t256);
      op.m.v = op.k.v = 4096, op.n.v = 16;
      rc = cost_op_time(p, &op, 1, MODEL_FP32, &t, &x, &e);
      CHECK(rc == 0 && check_close(110e-6, t, 0, 1e-12), "the large small-N point exactly: %g", t);
      double r16 = 2.0 * 4096 * 16 * 4096 / t, r256 = 2.0 * 4096 * 256 * 4096 / 1.2e-3;
      CHECK(r16 < 0.8 * r256, "small N is costed less efficiently than large N, as measured (%.3g vs %.3g flop/s)", r16,
            r256);
      op.m.v = op.k.v = 1024, op.n.v = 64;
      rc = cost_op_time(p, &op, 1, MODEL_FP32, &t64, &x, &e);
      CHECK(rc == 0 && x == 0 && t64 > t16 && t64 < t256, "between measured n = 16 and 256: %g < %g < %g", t16, t64,
            t256);
      /* Sane along n between the measured ends: inside the range, between the two measured times.
       * (Shepard's rule does not promise monotonicity when farther shapes weigh in; docs/profile.md.) */
      int sane = 1;
      for (long n = 17; n < 256; n += 7) {
        op.n.v = n;
        rc |= cost_op_time(p, &op, 1, MODEL_FP32, &t, &x2, &e);
        sane &= t >= 0.99 * t16 && t <= 1.01 * t256 && x2 == 0;
      }
      CHECK(rc == 0 && sane, "between the measured shapes, the time lies between their times, inside the range");
      op.n.v = 8192; /* outside the measured n: the fitted roofline alone, flagged */
      rc = cost_op_time(p, &op, 1, MODEL_FP32, &tout, &x, &e);
      double F = 2.0 * 1024 * 8192 * 1024, B = 4.0 * (1024.0 * 1024 + 1024.0 * 8192 + 1024.0 * 8192);
      double want = 5e-6 + fmax(F / (15e12 * 0.8), B / (9e11 * 0.6));
      CHECK(rc == 0 && x == 1 && check_close(want, tout, 0, 1e-12), "outside: the fallback (%g), extrapolated", tout);
      /* A conv pass measured at its geometry costs what was measured; another batch falls back to
       * its implicit GEMM; a pass the table lacks too. */
      model_op cv = {.kind = MODEL_OP_GEMM, .count = 1, .launches = 1, .follows_run = 1,
                     .conv = {MODEL_CONV_FWD, MODEL_LAYOUT_NCHW, {1, 1, 0}, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1}};
      model_conv_gemm(&cv.conv, &cv.m, &cv.n, &cv.k);
      rc = cost_op_time(p, &cv, 8, MODEL_FP32, &t, &x, &e);
      CHECK(rc == 0 && check_close(3e-4, t, 0, 1e-12), "a measured convolution: %g", t);
      cv.conv.pass = MODEL_CONV_WGRAD;
      model_conv_gemm(&cv.conv, &cv.m, &cv.n, &cv.k);
      rc = cost_op_time(p, &cv, 8, MODEL_FP32, &t, &x, &e);
      CHECK(rc == 0 && check_close(5e-4, t, 0, 1e-12), "its measured weight gradient: %g", t);
      cv.conv.pass = MODEL_CONV_DGRAD;
      model_conv_gemm(&cv.conv, &cv.m, &cv.n, &cv.k);
      rc = cost_op_time(p, &cv, 8, MODEL_FP32, &t, &x, &e);
      F = 2.0 * 64 * (8.0 * 56 * 56) * 576, B = 4.0 * (64.0 * 576 + 576.0 * 8 * 56 * 56 + 64.0 * 8 * 56 * 56);
      want = 5e-6 + fmax(F / (15e12 * 0.8), B / (9e11 * 0.6));
      CHECK(rc == 0 && x == 1 && check_close(want, t, 0, 1e-12), "an unmeasured pass: its implicit GEMM (%g)", t);
      profile_destroy(p);
    }
    /* Convolutions correct each other only within a class (filter size and stride): two 3x3
     * stride-1 points measured at half the roofline's time (as Winograd's fewer multiplications
     * make them, docs/profile.md) price a 3x3 stride-1 convolution between them at half, but not a
     * 1x1 convolution with the very same implicit GEMM, nor a strided 3x3 one. */
    snprintf(text, sizeof text,
             "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{\"gemm\":{\"model\":\"table\","
             "\"points\":[{\"m\":1024,\"n\":16,\"k\":1024,\"time_s\":20e-6}],"
             "\"fallback\":{\"model\":\"roofline\",\"launch_s\":5e-6,\"peak_flops\":15e12,\"efficiency\":0.8,"
             "\"mem_bw_Bps\":9e11,\"mem_efficiency\":0.6}},"
             "\"conv\":{\"points\":[{\"n\":8,\"c\":64,\"h\":56,\"w\":56,\"k\":64,\"r\":3,\"s\":3,\"pad_h\":1,\"pad_w\":1,"
             "\"stride_h\":1,\"stride_w\":1,\"fwd_s\":%.17g},{\"n\":32,\"c\":64,\"h\":56,\"w\":56,\"k\":64,\"r\":3,\"s\":3,"
             "\"pad_h\":1,\"pad_w\":1,\"stride_h\":1,\"stride_w\":1,\"fwd_s\":%.17g}]},"
             "\"ewise\":%s}},\"comm\":{\"links\":{\"nvlink\":{\"lat_s\":1e-6,\"efficiency\":0.8}}}}",
             0.5 * (5e-6 + 2.0 * 64 * 8 * 3136 * 576 / 12e12), 0.5 * (5e-6 + 2.0 * 64 * 32 * 3136 * 576 / 12e12), roof);
    p = NULL;
    rc = profile_parse(text, "c.json", &p, &e);
    CHECK(rc == 0, "a profile with two 3x3 convolutions loads: %s", rc ? e.msg : "ok");
    if (p) {
      double t, want = 5e-6 + 2.0 * 64 * 16 * 3136 * 576 / 12e12; /* the roofline at the n = 16 implicit GEMM */
      int x;
      model_op cv = {.kind = MODEL_OP_GEMM, .count = 1, .launches = 1, .follows_run = 1,
                     .conv = {MODEL_CONV_FWD, MODEL_LAYOUT_NCHW, {1, 1, 0}, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1}};
      model_conv_gemm(&cv.conv, &cv.m, &cv.n, &cv.k);
      rc = cost_op_time(p, &cv, 16, MODEL_FP32, &t, &x, &e);
      CHECK(rc == 0 && x == 0 && check_close(0.5 * want, t, 0, 1e-9), "a 3x3/1 conv between its class: half (%g)", t);
      model_op one = {.kind = MODEL_OP_GEMM, .count = 1, .launches = 1, .follows_run = 1,
                      .conv = {MODEL_CONV_FWD, MODEL_LAYOUT_NCHW, {1, 1, 0}, 576, 56, 56, 64, 1, 1, 0, 0, 1, 1}};
      model_conv_gemm(&one.conv, &one.m, &one.n, &one.k);
      CHECK(model_dim_value(one.m, 16) == model_dim_value(cv.m, 16) &&
                model_dim_value(one.n, 16) == model_dim_value(cv.n, 16) &&
                model_dim_value(one.k, 16) == model_dim_value(cv.k, 16),
            "the 1x1 conv has the 3x3 conv's implicit GEMM");
      rc = cost_op_time(p, &one, 16, MODEL_FP32, &t, &x, &e);
      CHECK(rc == 0 && check_close(want, t, 0, 1e-9), "a 1x1 conv there: its implicit GEMM's time, not half (%g)", t);
      cv.conv.stride_h = cv.conv.stride_w = 2;
      model_conv_gemm(&cv.conv, &cv.m, &cv.n, &cv.k);
      double want2 = 5e-6 + 2.0 * 64 * 16 * 28 * 28 * 576 / 12e12;
      rc = cost_op_time(p, &cv, 16, MODEL_FP32, &t, &x, &e);
      CHECK(rc == 0 && check_close(want2, t, 0, 1e-9), "a 3x3/2 conv: its implicit GEMM's time (%g)", t);
      profile_destroy(p);
    }
#define PH "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{\"ewise\":%s,\"gemm\":%s%s}}}"
    const char *tab = "{\"model\":\"table\",\"fallback\":{\"model\":\"roofline\",\"launch_s\":0,\"peak_flops\":1e12,"
                      "\"efficiency\":0.5,\"mem_bw_Bps\":1e11},\"points\":[{\"m\":0,\"n\":2,\"k\":2,\"time_s\":1e-6}]}";
    snprintf(text, sizeof text, PH, roof, tab, "");
    profile_err("gemm point m=0", text, "x.json: compute.fp32.gemm.points[0].m must be an integer dimension");
    snprintf(text, sizeof text, PH, roof, roof,
             ",\"conv\":{\"points\":[{\"n\":8,\"c\":3,\"h\":8,\"w\":8,\"r\":3,\"s\":3,\"pad_h\":1,\"pad_w\":1,"
             "\"stride_h\":1,\"stride_w\":1,\"fwd_s\":1e-4}]}");
    profile_err("conv point without k", text, "x.json: compute.fp32.conv.points[0].k is missing");
    snprintf(text, sizeof text, PH, roof, roof,
             ",\"conv\":{\"points\":[{\"n\":8,\"c\":3,\"h\":8,\"w\":8,\"k\":8,\"r\":3,\"s\":3,\"pad_h\":1,\"pad_w\":1,"
             "\"stride_h\":1,\"stride_w\":1}]}");
    profile_err("conv point without a time", text, "x.json: compute.fp32.conv.points[0] has none of fwd_s, dgrad_s");
    snprintf(text, sizeof text, PH, roof, roof,
             ",\"conv\":{\"points\":[{\"n\":8,\"c\":3,\"h\":8,\"w\":8,\"k\":8,\"r\":3,\"s\":3,\"pad_h\":1,\"pad_w\":1,"
             "\"stride_h\":1,\"stride_w\":1,\"fwd_s\":-1}]}");
    profile_err("conv negative time", text, "x.json: compute.fp32.conv.points[0].fwd_s must be a time");
    snprintf(text, sizeof text, PH, roof, roof, ",\"conv\":[]");
    profile_err("conv not an object", text, "x.json: compute.fp32.conv must be an object");
    /* A convolution in the other layout than its precision's kernels pays cuDNN's two transposes, of
     * its input x (N C H W) and its output side y (N K P Q), each read and written once at the
     * elementwise roofline (launch 1 us, 1e11 B/s): c=64 h=w=56 k=128 3x3 stride 2 pad 1 at batch
     * 4 has x = 4*64*56*56 and y = 4*128*28*28 fp32 elements, whatever the pass. */
#define PL "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{\"ewise\":%s,\"gemm\":%s%s}}," \
           "\"comm\":{\"links\":{\"nvlink\":{\"lat_s\":1e-6,\"efficiency\":0.8}}}}"
    snprintf(text, sizeof text, PL, roof, roof, ",\"conv_layout\":{\"native\":\"nhwc\",\"source\":\"test\"}");
    profile_t *pl = NULL, *pn = NULL;
    rc = profile_parse(text, "l.json", &pl, &e);
    CHECK(rc == 0, "a profile with a conv_layout loads: %s", rc ? e.msg : "ok");
    snprintf(text, sizeof text, PL, roof, roof, "");
    rc = profile_parse(text, "n.json", &pn, &e);
    CHECK(rc == 0, "the same profile without it loads: %s", rc ? e.msg : "ok");
    if (pl && pn) {
      double x4 = 4.0 * 64 * 56 * 56, y4 = 4.0 * 128 * 28 * 28;
      double transposes = 2 * 1e-6 + 2 * 4 * (x4 + y4) / 1e11;
      for (int q = MODEL_CONV_FWD; q <= MODEL_CONV_WGRAD; q++) {
        model_op cv = {.kind = MODEL_OP_GEMM, .count = 1, .launches = 1, .follows_run = 1,
                       .conv = {(model_conv_pass)q, MODEL_LAYOUT_NHWC, {1, 1, 0}, 64, 56, 56, 128, 3, 3, 1, 1, 2, 2}};
        model_conv_gemm(&cv.conv, &cv.m, &cv.n, &cv.k);
        double base = 1e-6 + fmax(model_op_flops(&cv, 4) / 0.5e12, model_op_bytes(&cv, 4, MODEL_FP32) / 1e11);
        double t_native, t_other, t_unstated;
        int x = 0;
        rc = cost_op_time(pl, &cv, 4, MODEL_FP32, &t_native, &x, &e);
        cv.conv.layout = MODEL_LAYOUT_NCHW;
        rc |= cost_op_time(pl, &cv, 4, MODEL_FP32, &t_other, &x, &e);
        rc |= cost_op_time(pn, &cv, 4, MODEL_FP32, &t_unstated, &x, &e);
        CHECK(rc == 0 && check_close(base, t_native, 0, 1e-12) && check_close(base + transposes, t_other, 0, 1e-12) &&
                  check_close(base, t_unstated, 0, 1e-12),
              "conv %s: its kernels' layout %g s, the other layout %g s (+%g), a profile stating none %g s",
              model_conv_pass_name((model_conv_pass)q), t_native, t_other, transposes, t_unstated);
      }
    }
    profile_destroy(pl);
    profile_destroy(pn);
    snprintf(text, sizeof text, PH, roof, roof, ",\"conv_layout\":{\"native\":\"chwn\"}");
    profile_err("conv_layout chwn", text, "x.json: compute.fp32.conv_layout must be an object whose \"native\" is");
    snprintf(text, sizeof text, PH, roof, roof, ",\"conv_layout\":\"nhwc\"");
    profile_err("conv_layout a string", text, "x.json: compute.fp32.conv_layout must be an object");
    /* compute.fp32.gemm.math: "tf32" or "strict", read; absent: unknown; anything else refused. */
    {
      char gm[512];
      const char *maths[] = {"\"tf32\"", "\"strict\"", NULL};
      const profile_math want[] = {PROFILE_MATH_TF32, PROFILE_MATH_STRICT, PROFILE_MATH_UNKNOWN};
      for (int i = 0; i < 3; i++) {
        snprintf(gm, sizeof gm, "{%s%s%s%s", maths[i] ? "\"math\":" : "", maths[i] ? maths[i] : "", maths[i] ? "," : "",
                 roof + 1);
        snprintf(text, sizeof text, PL, roof, gm, "");
        profile_t *pm = NULL;
        rc = profile_parse(text, "m.json", &pm, &e);
        CHECK(rc == 0 && profile_fp32_gemm_math(pm) == want[i], "compute.fp32.gemm.math %s: read as %d%s%s",
              maths[i] ? maths[i] : "absent", rc ? -1 : (int)profile_fp32_gemm_math(pm), rc ? ": " : "", rc ? e.msg : "");
        profile_destroy(pm);
      }
      snprintf(gm, sizeof gm, "{\"math\":\"fast\",%s", roof + 1);
      snprintf(text, sizeof text, PH, roof, gm, "");
      profile_err("gemm.math fast", text, "x.json: compute.fp32.gemm.math: must be \"tf32\" or \"strict\"");
      /* Both maths (docs/profile.md, "fp32 math"): a TF32 gemm at 1e12 flop/s peak and a strict
       * gemm_strict at an eighth of it. PyTorch 2.15 runs fp32 matmuls strict and convolutions in
       * TF32; 1.8 both in TF32; each is priced by its math's table. A 1024^3 matmul (2.147e9 flop,
       * 12 MiB, half efficiency): 1 us + 2.147e9 / 0.5e12 s in TF32, 1 us + 2.147e9 / 0.0625e12 s strict. */
      const char *slow = "{\"model\":\"roofline\",\"launch_s\":1e-6,\"peak_flops\":1.25e11,\"efficiency\":0.5,\"mem_bw_Bps\":1e11}";
      char alt[512];
      snprintf(gm, sizeof gm, "{\"math\":\"tf32\",%s", roof + 1);
      snprintf(alt, sizeof alt, ",\"gemm_strict\":%s", slow);
      snprintf(text, sizeof text, PL, roof, gm, alt);
      profile_t *pb = NULL;
      rc = profile_parse(text, "b.json", &pb, &e);
      CHECK(rc == 0 && profile_fp32_gemm(pb, PROFILE_MATH_STRICT) && profile_fp32_gemm(pb, PROFILE_MATH_TF32) &&
                profile_fp32_gemm(pb, PROFILE_MATH_STRICT) != profile_fp32_gemm(pb, PROFILE_MATH_TF32),
            "gemm (tf32) and gemm_strict: both tables read%s%s", rc ? ": " : "", rc ? e.msg : "");
      if (pb) {
        model_op mm = {.kind = MODEL_OP_GEMM, .m = {1024, 0, 0}, .n = {1024, 0, 0}, .k = {1024, 0, 0}, .count = 1, .launches = 1,
                       .follows_run = 1};
        model_op cv = {.kind = MODEL_OP_GEMM, .count = 1, .launches = 1, .follows_run = 1,
                       .conv = {MODEL_CONV_FWD, MODEL_LAYOUT_NCHW, {1, 1, 0}, 64, 56, 56, 128, 3, 3, 1, 1, 2, 2}};
        model_conv_gemm(&cv.conv, &cv.m, &cv.n, &cv.k);
        double f = model_op_flops(&mm, 1), fc = model_op_flops(&cv, 4);
        sim_config c;
        sim_config_defaults(&c);
        c.profile = pb;
        const int rel[2] = {215, 108};
        for (int r = 0; r < 2; r++) {
          c.pytorch = rel[r];
          double tm, tc, h;
          int x = 0;
          rc = cost_op_sides(&c, &mm, 1, MODEL_FP32, &tm, &h, &x, &e) | cost_op_sides(&c, &cv, 4, MODEL_FP32, &tc, &h, &x, &e);
          double want_m = 1e-6 + f / (r == 0 ? 0.0625e12 : 0.5e12), want_c = 1e-6 + fmax(fc / 0.5e12, model_op_bytes(&cv, 4, MODEL_FP32) / 1e11);
          CHECK(rc == 0 && check_close(want_m, tm, 0, 1e-12) && check_close(want_c, tc, 0, 1e-12),
                "PyTorch %d.%d: an fp32 matmul by the %s table (%g s, want %g), a convolution by the TF32 one (%g, want %g)",
                rel[r] / 100, rel[r] % 100, r == 0 ? "strict" : "TF32", tm, want_m, tc, want_c);
        }
      }
      profile_destroy(pb);
      snprintf(text, sizeof text, PL, roof, roof, alt);
      profile_err("gemm_strict beside a gemm of no math", text, "compute.fp32.gemm_strict: compute.fp32.gemm must say its math");
      snprintf(gm, sizeof gm, "{\"math\":\"strict\",%s", roof + 1);
      snprintf(text, sizeof text, PL, roof, gm, alt);
      profile_err("gemm_strict beside a strict gemm", text, "compute.fp32.gemm_strict: compute.fp32.gemm must say its math, and the other one (it says the same)");
      snprintf(alt, sizeof alt, ",\"gemm_tf32\":{\"math\":\"strict\",%s", slow + 1);
      snprintf(text, sizeof text, PL, roof, gm, alt);
      profile_err("gemm_tf32 saying strict", text, "compute.fp32.gemm_tf32.math: must be \"tf32\", as its name says");
    }
#undef PL
#undef PH
  }

  /* ---- units ---- */
  double v;
  CHECK(txt_parse_bw("100Gbps", &v) == 0 && v == 12.5e9, "100Gbps is 12.5e9 B/s");
  CHECK(txt_parse_time("0.7us", &v) == 0 && check_close(7e-7, v, 0, 1e-15), "0.7us");
  CHECK(txt_parse_bw("12", &v) == -1 && txt_parse_time("3 s", &v) == -1, "numbers without or with spaced units are refused");
  return check_status();
}
