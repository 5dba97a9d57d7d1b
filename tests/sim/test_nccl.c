/* NCCL's algorithm and protocol choice (hand-computed from the tuning model's form) and the
 * simulated all-reduce following it on an idle platform, ring and tree. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixtures.h"
#include "model.h"
#include "ncclmodel.h"
#include "profile.h"
#include "sim.h"
#include "topo.h"

#define NIC_BW 11.3e9 /* per NIC; 2 NICs per node */
#define NVL_BW 19.7e9 /* per link; 3 links per GPU */

/* Hop latencies and base latencies, uneven on purpose; LL128 is left out (not enabled). */
static const char *profile_text =
    FIXTURE_FREE_COMPUTE
    "\"comm\":{\"nccl\":{\"ring\":{\"LL\":{\"base_lat_s\":3.6e-6,\"bw_factor\":0.25},\"Simple\":{\"base_lat_s\":8.4e-6,\"bw_factor\":1}},"
    "\"tree\":{\"LL\":{\"base_lat_s\":4.4e-6,\"bw_factor\":0.2368},\"Simple\":{\"base_lat_s\":0,\"bw_factor\":0.9}}},"
    "\"links\":{"
    "\"nvl\":{\"lat_s\":3.4e-6,\"bw_Bps\":19.7e9,\"hop_lat_s\":{\"ring\":{\"LL\":0.47e-6,\"Simple\":3.4e-6},\"tree\":{\"LL\":0.52e-6,\"Simple\":28e-6}}},"
    "\"nic\":{\"lat_s\":9.6e-6,\"bw_Bps\":11.3e9,\"hop_lat_s\":{\"ring\":{\"LL\":2.7e-6,\"Simple\":9.6e-6},\"tree\":{\"LL\":5e-6,\"Simple\":50e-6}}}}}}";

/* text with `add` inserted after its "nccl":{ (a profile that lists one more algorithm). */
static void with_nccl(char *out, size_t len, const char *text, const char *add) {
  const char *at = strstr(text, "\"nccl\":{") + 8;
  snprintf(out, len, "%.*s%s%s", (int)(at - text), text, add, at);
}

static topo_t *topology(int gpn) {
  char text[512];
  snprintf(text, sizeof text,
           "ddpsim-topology 1\nname t\ngpus_per_node %d\nintra nvl links=3 bw=25GBps\nnic nic count=2 bw=100Gbps\n", gpn);
  return fixture_topo(text, "nccl.topo");
}

static model_t *model(long bytes) {
  char text[512];
  snprintf(text, sizeof text,
           "ddpsim-model 1\nname m\nbatch 1\ntokens 1 tokens\nprecision fp32\nparam p %ld\nbackward\n"
           "ewise g elems=1 arrays=1 ready=p\n", bytes / 4);
  return fixture_model(text, "nccl.model");
}

int main(void) {
  err_t e;
  profile_t *p = fixture_profile(profile_text, "nccl.json");
  unsigned mask;
  CHECK(nccl_parse_algos("Tree,ring", &mask) == 0 && mask == 3u, "NCCL_ALGO=Tree,ring");
  CHECK(nccl_parse_protos("simple", &mask) == 0 && mask == 4u, "NCCL_PROTO=simple");
  CHECK(nccl_parse_protos("LL,bogus", &mask) == -1 && nccl_parse_algos("", &mask) == -1, "unknown names are refused");
  CHECK(nccl_parse_algos("PAT,ring", &mask) == 0 && mask == ((1u << NCCL_ALGO_PAT) | 1u), "NCCL_ALGO=PAT,ring");
  CHECK(nccl_parse_algos("auto", &mask) == 0 && mask == NCCL_ALGOS_AUTO, "auto: NCCL's own choice");
  CHECK(strcmp(nccl_algo_list(), "ring, tree, pat, hier") == 0 && nccl_algo_get(NCCL_NALGO) == NULL && !nccl_algo_env(NCCL_ALGO_HIER) &&
            !nccl_algo_swept(NCCL_ALGO_HIER, NCCL_PROTO_SIMPLE) && !nccl_algo_swept(NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE) &&
            nccl_algo_swept(NCCL_ALGO_TREE, NCCL_PROTO_LL) &&
            strcmp(nccl_algo_env(NCCL_ALGO_TREE), "Tree") == 0 && nccl_algo_get(NCCL_ALGO_TREE)->since == 204 &&
            strcmp(nccl_algo_env(NCCL_ALGO_PAT), "PAT") == 0 && nccl_algo_get(NCCL_ALGO_PAT)->since == 223,
        "the algorithm table: %s; the tree is NCCL_ALGO=Tree, NCCL 2.4; PAT is NCCL_ALGO=PAT, NCCL 2.23", nccl_algo_list());

  /* 4 nodes x 4 GPUs: bottleneck bw = min(3 x NVL, 2 x NIC) = 22.6 GB/s. */
  topo_t *t = topology(4);
  nccl_model m;
  int rc = nccl_model_init(&m, p, t, 4, 4, 2, 3 * NVL_BW, 2 * NIC_BW, &e);
  CHECK(rc == 0 && m.bw_Bps == 2 * NIC_BW && !m.enabled[NCCL_ALGO_RING][NCCL_PROTO_LL128], "model: bottleneck %.4g B/s, LL128 off",
        m.bw_Bps);
  double bw = 2 * NIC_BW;
  struct {
    double bytes;
    unsigned algos, protos;
    int algo, proto;
    double want;
  } cases[] = {
      /* 1 KiB: tree/LL: 4.4 + 2 (3 x 0.52 + log2(4) x 5) us + 2 x 1024 / (0.2368 bw) = 27.9 us beats
       * ring/LL: 3.6 + (30-6) 0.47 + 6 x 2.7 us + 30/16 x 1024 / (0.25 bw) = 31.4 us */
      {1024, 0, 0, NCCL_ALGO_TREE, NCCL_PROTO_LL, 4.4e-6 + 2 * (3 * 0.52e-6 + 2 * 5e-6) + 2.0 * 1024 / (0.2368 * bw)},
      {1024, 1u << NCCL_ALGO_RING, 0, NCCL_ALGO_RING, NCCL_PROTO_LL, 3.6e-6 + 24 * 0.47e-6 + 6 * 2.7e-6 + 30.0 / 16 * 1024 / (0.25 * bw)},
      /* 64 MiB: ring/Simple: 8.4 + 24 x 3.4 + 6 x 9.6 us + 30/16 x S / bw (tree/Simple pays 2S/(0.9 bw)) */
      {67108864, 0, 0, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8.4e-6 + 24 * 3.4e-6 + 6 * 9.6e-6 + 30.0 / 16 * 67108864 / bw},
      /* Forced tree: tree/LL for 1 KiB: 4.4 + 2 (3 x 0.52 + log2(4) x 5) us + 2 x 1024 / (0.2368 bw) */
      {1024, 1u << NCCL_ALGO_TREE, 0, NCCL_ALGO_TREE, NCCL_PROTO_LL, 4.4e-6 + 2 * (3 * 0.52e-6 + 2 * 5e-6) + 2.0 * 1024 / (0.2368 * bw)},
      /* Forced Simple, 1 KiB: ring/Simple, the latency term dominates */
      {1024, 0, 1u << NCCL_PROTO_SIMPLE, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8.4e-6 + 24 * 3.4e-6 + 6 * 9.6e-6 + 30.0 / 16 * 1024 / bw},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    nccl_choice ch;
    rc = nccl_choose(&m, COLL_ALLREDUCE, cases[i].bytes, cases[i].algos ? cases[i].algos : NCCL_ALGOS_AUTO,
                     cases[i].protos ? cases[i].protos : NCCL_ALL_PROTOS, &ch, &e);
    CHECK(rc == 0 && (int)ch.algo == cases[i].algo && (int)ch.proto == cases[i].proto && check_close(cases[i].want, ch.time_s, 0, 1e-12),
          "%.0f bytes: %s/%s in %.6g s (want %s/%s, %.6g s)", cases[i].bytes, rc ? "-" : nccl_algo_name(ch.algo),
          rc ? "-" : nccl_proto_name(ch.proto), rc ? 0 : ch.time_s, nccl_algo_name(cases[i].algo),
          nccl_proto_name(cases[i].proto), cases[i].want);
  }
  nccl_choice ch;
  CHECK(nccl_choose(&m, COLL_ALLREDUCE, 1024, NCCL_ALGOS_AUTO, 1u << NCCL_PROTO_LL128, &ch, &e) == ERR_INPUT &&
            strstr(e.msg, "ring/LL, ring/Simple, tree/LL, tree/Simple"),
        "only LL128 allowed -> %s", e.msg);

  /* The tree's log-depth latency beats the ring's linear one at 64 nodes of 1 GPU for small sizes. */
  topo_t *t1 = topology(1);
  rc = nccl_model_init(&m, p, t1, 64, 1, 2, 0, 2 * NIC_BW, &e);
  rc = rc ? rc : nccl_choose(&m, COLL_ALLREDUCE, 4096, NCCL_ALGOS_AUTO, NCCL_ALL_PROTOS, &ch, &e);
  CHECK(rc == 0 && ch.algo == NCCL_ALGO_TREE && check_close(4.4e-6 + 2 * 6 * 5e-6 + 2.0 * 4096 / (0.2368 * 2 * NIC_BW), ch.time_s, 0, 1e-12),
        "64 nodes, 4 KiB: %s/%s, %.6g s: log2(64) = 6 network hops each way", nccl_algo_name(ch.algo), nccl_proto_name(ch.proto),
        ch.time_s);

  /* PAT (tuning.cc at v2.23.4-1): all-gather and reduce-scatter at one GPU per node, Simple only;
   * 8 us + log2i(nodes) x the tree's network hop / 3.5 + n x 2.8 us, and S / (0.85 bw): the row's
   * own constants, as this profile has no comm.nccl.pat. 16 nodes of 1 GPU, 1 MiB. */
  {
    double bw1 = 2 * NIC_BW, S = 1048576, lat = 8e-6 + 4 * 50e-6 / 3.5 + 16 * 2.8e-6;
    rc = nccl_model_init(&m, p, t1, 16, 1, 2, 0, bw1, &e);
    CHECK(rc == 0 && m.enabled[NCCL_ALGO_PAT][NCCL_PROTO_SIMPLE] && !m.auto_on[NCCL_ALGO_PAT][NCCL_PROTO_SIMPLE] &&
              !m.enabled[NCCL_ALGO_PAT][NCCL_PROTO_LL],
          "16 x 1 GPU: PAT/Simple runs when forced; NCCL's own choice leaves it out (no comm.nccl.pat)");
    static const coll_kind gathers[] = {COLL_ALLGATHER, COLL_REDUCESCATTER};
    for (int k = 0; k < 2; k++) {
      rc = nccl_choose(&m, gathers[k], S, 1u << NCCL_ALGO_PAT, NCCL_ALL_PROTOS, &ch, &e);
      CHECK(rc == 0 && ch.algo == NCCL_ALGO_PAT && ch.proto == NCCL_PROTO_SIMPLE && check_close(lat + S / (0.85 * bw1), ch.time_s, 0, 1e-12) &&
                check_close(lat, ch.lat_s, 0, 1e-12) && check_close(S / 0.85, ch.edge_bytes, 0, 1e-12) && ch.steps == 15,
            "%s, forced pat: %.6g s (want %.6g), latency %.6g s (want %.6g), %.0f bytes per edge (S / 0.85), %ld steps (n - 1)",
            coll_get(gathers[k])->name, rc ? 0 : ch.time_s, lat + S / (0.85 * bw1), rc ? 0 : ch.lat_s, lat, rc ? 0 : ch.edge_bytes,
            rc ? 0 : ch.steps);
    }
    rc = nccl_choose(&m, COLL_ALLGATHER, S, NCCL_ALGOS_AUTO, NCCL_ALL_PROTOS, &ch, &e);
    CHECK(rc == 0 && ch.algo == NCCL_ALGO_RING, "allgather, NCCL's own choice without comm.nccl.pat: %s", rc ? e.msg : nccl_algo_name(ch.algo));
    CHECK(nccl_choose(&m, COLL_ALLREDUCE, S, 1u << NCCL_ALGO_PAT, NCCL_ALL_PROTOS, &ch, &e) == ERR_INPUT &&
              strstr(e.msg, "pat runs no allreduce"),
          "an all-reduce forced to PAT is refused: %s", e.msg);
    CHECK(nccl_choose(&m, COLL_BROADCAST, S, 1u << NCCL_ALGO_PAT, NCCL_ALL_PROTOS, &ch, &e) == ERR_INPUT,
          "a broadcast forced to PAT is refused: %s", e.msg);
    CHECK(nccl_choose(&m, COLL_ALLGATHER, S, 1u << NCCL_ALGO_PAT, 1u << NCCL_PROTO_LL, &ch, &e) == ERR_INPUT,
          "PAT with LL only is refused (Simple only): %s", e.msg);
    nccl_model m4;
    rc = nccl_model_init(&m4, p, t, 4, 4, 2, 3 * NVL_BW, 2 * NIC_BW, &e);
    CHECK(rc == 0 && !m4.enabled[NCCL_ALGO_PAT][NCCL_PROTO_SIMPLE] &&
              nccl_choose(&m4, COLL_ALLGATHER, S, 1u << NCCL_ALGO_PAT, NCCL_ALL_PROTOS, &ch, &e) == ERR_INPUT &&
              strstr(e.msg, "NCCL runs pat at up to 1 GPU(s) per node, not 4"),
          "4 GPUs per node: PAT is refused: %s", e.msg);
    rc = nccl_choose(&m4, COLL_ALLGATHER, S, (1u << NCCL_ALGO_PAT) | (1u << NCCL_ALGO_RING), NCCL_ALL_PROTOS, &ch, &e);
    CHECK(rc == 0 && ch.algo == NCCL_ALGO_RING, "4 GPUs per node, NCCL_ALGO=pat,ring: the ring");

    /* A profile that lists comm.nccl.pat (its NCCL is 2.23 or later; 2.24's factor 0.75): NCCL's own
     * choice considers PAT. 64 nodes of 1 GPU, 1 MiB all-gather: PAT 8 + 6 x 50 / 3.5 + 64 x 2.8 us
     * + S / (0.75 bw) = 334.8 us beats ring/LL 3.6 + 63 x 2.7 us + 63/64 S / (0.25 bw) = 356.3 us and
     * ring/Simple 659 us; at 4 KiB ring/LL's latency wins. */
    char text[4096];
    with_nccl(text, sizeof text, profile_text, "\"pat\":{\"Simple\":{\"base_lat_s\":8e-6,\"bw_factor\":0.75}},");
    profile_t *pp = fixture_profile(text, "pat.json");
    rc = nccl_model_init(&m, pp, t1, 64, 1, 2, 0, bw1, &e);
    rc = rc ? rc : nccl_choose(&m, COLL_ALLGATHER, S, NCCL_ALGOS_AUTO, NCCL_ALL_PROTOS, &ch, &e);
    double want = 8e-6 + 6 * 50e-6 / 3.5 + 64 * 2.8e-6 + S / (0.75 * bw1);
    CHECK(rc == 0 && m.auto_on[NCCL_ALGO_PAT][NCCL_PROTO_SIMPLE] && ch.algo == NCCL_ALGO_PAT && check_close(want, ch.time_s, 0, 1e-12),
          "comm.nccl.pat listed, 64 x 1 GPU, 1 MiB all-gather: NCCL picks %s/%s, %.6g s (want pat, %.6g s)", rc ? "-" : nccl_algo_name(ch.algo),
          rc ? "-" : nccl_proto_name(ch.proto), rc ? 0 : ch.time_s, want);
    rc = nccl_choose(&m, COLL_ALLGATHER, 4096, NCCL_ALGOS_AUTO, NCCL_ALL_PROTOS, &ch, &e);
    want = 3.6e-6 + 63 * 2.7e-6 + 63.0 / 64 * 4096 / (0.25 * bw1);
    CHECK(rc == 0 && ch.algo == NCCL_ALGO_RING && ch.proto == NCCL_PROTO_LL && check_close(want, ch.time_s, 0, 1e-12),
          "4 KiB all-gather: ring/LL's latency wins, %.6g s (want %.6g)", rc ? 0 : ch.time_s, want);
    rc = nccl_choose(&m, COLL_ALLREDUCE, S, NCCL_ALGOS_AUTO, NCCL_ALL_PROTOS, &ch, &e);
    CHECK(rc == 0 && ch.algo != NCCL_ALGO_PAT, "an all-reduce never runs as PAT: %s", rc ? e.msg : nccl_algo_name(ch.algo));
    profile_destroy(pp);
  }

  /* The hierarchical all-reduce (not NCCL's): a reduce-scatter inside each node, an all-reduce of
   * each S/G shard between the nodes (G rings sharing the NICs), an all-gather inside each node, each
   * a ring at the profile's ring costs; its estimate is their sum. 4 nodes x 4 GPUs, 64 MiB, Simple. */
  {
    double S = 67108864, intra = 3 * NVL_BW, nic = 2 * NIC_BW;
    double rs = 8.4e-6 + 3 * 3.4e-6 + 3.0 / 4 * S / intra, ar = 8.4e-6 + 6 * 9.6e-6 + 6.0 / 4 * (S / 4) / (nic / 4);
    double lat = 2 * (8.4e-6 + 3 * 3.4e-6) + 8.4e-6 + 6 * 9.6e-6, want = 2 * rs + ar;
    rc = nccl_model_init(&m, p, t, 4, 4, 2, intra, nic, &e);
    rc = rc ? rc : nccl_choose(&m, COLL_ALLREDUCE, S, 1u << NCCL_ALGO_HIER, 1u << NCCL_PROTO_SIMPLE, &ch, &e);
    CHECK(rc == 0 && ch.algo == NCCL_ALGO_HIER && check_close(want, ch.time_s, 0, 1e-12) && check_close(lat, ch.lat_s, 0, 1e-12) &&
              ch.steps == 30 && check_close((want - lat) * m.bw_Bps, ch.edge_bytes, 0, 1e-12),
          "hier/Simple, 64 MiB on 4 x 4: %.6g s (want %.6g = reduce-scatter %.6g + all-reduce %.6g + all-gather), %ld steps (the ring's)",
          rc ? 0 : ch.time_s, want, rs, ar, rc ? 0 : ch.steps);
    CHECK(check_close(2 * 3 * 3.4e-6 + 6 * 9.6e-6, nccl_hops_s(COLL_ALLREDUCE, NCCL_ALGO_HIER, 4, 4, 3.4e-6, 9.6e-6), 0, 1e-12) &&
              isnan(nccl_edge_per_byte(COLL_ALLREDUCE, NCCL_ALGO_HIER, 16)),
          "hier's hop terms are its phases'; no single edge-bytes form");
    /* Where the nodes are fast inside (10 x the network) it beats the ring and the tree at 256 MiB,
     * and still NCCL's own choice never takes it. */
    nccl_model mf;
    rc = nccl_model_init(&mf, p, t, 4, 4, 2, 10 * nic, nic, &e);
    rc = rc ? rc : nccl_choose(&mf, COLL_ALLREDUCE, 4 * S, NCCL_ALGOS_AUTO | 1u << NCCL_ALGO_HIER, NCCL_ALL_PROTOS, &ch, &e);
    CHECK(rc == 0 && ch.algo == NCCL_ALGO_HIER, "NCCL_ALGO=auto,hier, 256 MiB, nodes 10x faster inside: %s", rc ? e.msg : nccl_algo_name(ch.algo));
    rc = nccl_choose(&mf, COLL_ALLREDUCE, 4 * S, NCCL_ALGOS_AUTO, NCCL_ALL_PROTOS, &ch, &e);
    CHECK(rc == 0 && ch.algo != NCCL_ALGO_HIER, "NCCL's own choice: %s, never hier", rc ? e.msg : nccl_algo_name(ch.algo));
    CHECK(nccl_choose(&mf, COLL_ALLGATHER, S, 1u << NCCL_ALGO_HIER, NCCL_ALL_PROTOS, &ch, &e) == ERR_INPUT &&
              strstr(e.msg, "hier runs no allgather"),
          "an all-gather forced to hier is refused: %s", e.msg);
    char text[4096];
    with_nccl(text, sizeof text, profile_text, "\"hier\":{\"Simple\":{\"base_lat_s\":1e-6,\"bw_factor\":1}},");
    profile_t *ph = fixture_profile(text, "hier.json");
    CHECK(nccl_model_init(&mf, ph, t, 4, 4, 2, intra, nic, &e) == ERR_INPUT && strstr(e.msg, "comm.nccl.hier: not one of NCCL's algorithms"),
          "a profile listing hier -> %s", e.msg);
    profile_destroy(ph);
  }

  /* The simulation follows the choice exactly on an idle platform (flow fidelity). */
  static const long sizes[] = {1024, 262144, 67108864};
  static const unsigned algos[] = {0, 1u << NCCL_ALGO_TREE};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    for (size_t a = 0; a < 2; a++) {
      model_t *mm = model(sizes[i]);
      sim_config c;
      fixture_config(&c, mm, t, p, 4, 0);
      c.bucket_cap_mb = c.first_bucket_mb = 1000;
      c.nccl_algos = algos[a];
      c.iterations = 2;
      sim_result r;
      if (sim_run(&c, &r, &e)) {
        CHECK(0, "sim_run: %s", e.msg);
        model_destroy(mm);
        continue;
      }
      nccl_model mo;
      nccl_model_init(&mo, p, t, 4, 4, 2, 3 * NVL_BW, 2 * NIC_BW, &e);
      nccl_choose(&mo, COLL_ALLREDUCE, (double)sizes[i], algos[a] ? algos[a] : NCCL_ALGOS_AUTO, NCCL_ALL_PROTOS, &ch, &e);
      double got = r.buckets[0].comm_end_s - r.buckets[0].comm_start_s;
      /* Edge bytes are rounded up to whole bytes in the simulation: allow that much. */
      CHECK(r.buckets[0].algo == (int)ch.algo && r.buckets[0].proto == (int)ch.proto && check_close(ch.time_s, got, 2.0 / bw, 1e-9),
            "4 x 4 GPUs, %8ld B%s: simulated %s/%s %.6g s, NCCL model %.6g s", sizes[i], a ? " (NCCL_ALGO=tree)" : "",
            nccl_algo_name((nccl_algo)r.buckets[0].algo), nccl_proto_name((nccl_proto)r.buckets[0].proto), got, ch.time_s);
      sim_result_free(&r);
      model_destroy(mm);
    }

  /* Step fidelity runs NCCL's choice too (here a tree, forced), with the same latency term: on an
   * idle network one bucket's collective takes what flow fidelity gives, within 2%. */
  {
    model_t *mm = model(1024);
    sim_config c;
    sim_config_defaults(&c);
    c.model = mm;
    c.topo = t;
    c.profile = p;
    c.nodes = 2;
    c.nccl_algos = 1u << NCCL_ALGO_TREE;
    sim_result r[2];
    int ok = 1;
    for (int f = 0; f < 2; f++) {
      c.fidelity = f ? SIM_FIDELITY_STEP : SIM_FIDELITY_FLOW;
      ok = ok && sim_run(&c, &r[f], &e) == 0;
    }
    CHECK(ok && r[1].buckets[0].algo == NCCL_ALGO_TREE, "step fidelity runs the tree it is asked for");
    if (ok) {
      double d0 = r[0].buckets[0].comm_end_s - r[0].buckets[0].comm_start_s;
      double d1 = r[1].buckets[0].comm_end_s - r[1].buckets[0].comm_start_s;
      CHECK(check_close(d0, d1, 0, 0.02), "tree all-reduce: flow %.6g s, step %.6g s (NCCL's estimate %.6g s)", d0, d1,
            r[0].buckets[0].nccl_estimate_s);
      sim_result_free(&r[0]);
      sim_result_free(&r[1]);
    }
    model_destroy(mm);
  }

  /* A profile enabling a protocol must give its hop latency for every link class. */
  {
    const char *bad = "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{"
                      "\"gemm\":{\"model\":\"roofline\",\"launch_s\":0,\"peak_flops\":1e12,\"efficiency\":1,\"mem_bw_Bps\":1e12},"
                      "\"ewise\":{\"model\":\"roofline\",\"launch_s\":0,\"mem_bw_Bps\":1e12}}},"
                      "\"comm\":{\"nccl\":{\"ring\":{\"LL\":{\"base_lat_s\":1e-6,\"bw_factor\":0.25}}},"
                      "\"links\":{\"nvl\":{\"lat_s\":1e-6,\"bw_Bps\":1e10},\"nic\":{\"lat_s\":1e-6,\"bw_Bps\":1e10}}}}";
    profile_t *q = NULL;
    rc = profile_parse(bad, "bad.json", &q, &e);
    rc = rc ? rc : nccl_model_init(&m, q, t, 2, 4, 1, 1e10, 1e10, &e);
    CHECK(rc == ERR_INPUT && strstr(e.msg, "comm.links.nvl.hop_lat_s.ring.LL is missing"), "missing hop latency -> %s", e.msg);
    profile_destroy(q);
    const char *bad2 = "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{"
                       "\"gemm\":{\"model\":\"roofline\",\"launch_s\":0,\"peak_flops\":1e12,\"efficiency\":1,\"mem_bw_Bps\":1e12},"
                       "\"ewise\":{\"model\":\"roofline\",\"launch_s\":0,\"mem_bw_Bps\":1e12}}},\"comm\":{\"nccl\":{\"ring\":{\"LL\":"
                       "{\"base_lat_s\":1e-6,\"bw_factor\":2}}},\"links\":{\"nvl\":{\"lat_s\":1e-6,\"bw_Bps\":1e10}}}}";
    rc = profile_parse(bad2, "bad2.json", &q, &e);
    CHECK(rc == ERR_INPUT && strstr(e.msg, "comm.nccl.ring.LL.bw_factor must be a fraction from 0.001 to 1, got 2"), "bw_factor above 1 -> %s", e.msg);
  }

  /* NCCL 2.7's refinements (comm.nccl.tuning_model "nccl-2.7"), by hand from its tuning.cc. */
  {
    char text[4096];
    const char *fmt =
        "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{"
        "\"gemm\":{\"model\":\"roofline\",\"launch_s\":0,\"peak_flops\":1e15,\"efficiency\":1,\"mem_bw_Bps\":1e15},"
        "\"ewise\":{\"model\":\"roofline\",\"launch_s\":0,\"mem_bw_Bps\":1e15}}},"
        "\"comm\":{\"nccl\":{%s\"ring\":{\"LL\":{\"base_lat_s\":3.6e-6,\"bw_factor\":0.25},"
        "\"LL128\":{\"base_lat_s\":1e-5,\"bw_factor\":0.92},\"Simple\":{\"base_lat_s\":8.4e-6,\"bw_factor\":1}},"
        "\"tree\":{\"LL\":{\"base_lat_s\":4.4e-6,\"bw_factor\":0.2368},\"LL128\":{\"base_lat_s\":4.4e-6,\"bw_factor\":0.8235},"
        "\"Simple\":{\"base_lat_s\":0,\"bw_factor\":0.9}}},\"links\":{"
        "\"nvl\":{\"lat_s\":3.4e-6,\"bw_Bps\":20e9,\"hop_lat_s\":{\"ring\":{\"LL\":0.47e-6,\"LL128\":1.9e-6,\"Simple\":3.4e-6},"
        "\"tree\":{\"LL\":0.52e-6,\"LL128\":1.2e-6,\"Simple\":28e-6}}},"
        "\"nic\":{\"lat_s\":9.6e-6,\"bw_Bps\":12e9,\"hop_lat_s\":{\"ring\":{\"LL\":2.7e-6,\"LL128\":4e-6,\"Simple\":9.6e-6},"
        "\"tree\":{\"LL\":5e-6,\"LL128\":8.5e-6,\"Simple\":50e-6}}}}}}";
    snprintf(text, sizeof text, fmt, "\"tuning_model\":\"nccl-2.7\",");
    profile_t *pr = fixture_profile(text, "refined.json");
    snprintf(text, sizeof text, fmt, "");
    profile_t *pp = fixture_profile(text, "plain.json");
    topo_t *t8 = topology(8);
    nccl_model mr, mp;
    double S = 1048576, ring = 2.0 * 7 / 8 * S, bw6 = 6 * 20e9;
    /* One node of 8 GPUs, 6 channels of 20 GB/s. */
    rc = nccl_model_init(&mr, pr, t8, 1, 8, 6, bw6, 0, &e);
    rc = rc ? rc : nccl_choose(&mr, COLL_ALLREDUCE, S, 1u << NCCL_ALGO_RING, 1u << NCCL_PROTO_LL128, &ch, &e);
    double want = 1e-5 + 14 * 1.9e-6 + ring / (16.7e9 * 6);
    CHECK(rc == 0 && check_close(want, ch.time_s, 0, 1e-12),
          "2.7: ring/LL128 capped at 16.7 GB/s per channel: %.6g s (want %.6g: min(0.92 x 120, 6 x 16.7) GB/s)", ch.time_s, want);
    rc = nccl_choose(&mr, COLL_ALLREDUCE, S, 1u << NCCL_ALGO_TREE, 1u << NCCL_PROTO_SIMPLE, &ch, &e);
    want = 0 + 2 * 7 * 28e-6 + 2 * S / (0.9 * bw6 * 0.5);
    CHECK(rc == 0 && check_close(want, ch.time_s, 0, 1e-12),
          "2.7: tree/Simple at 1 MiB gets the correction 0.5 (S/64 = 2^14): %.6g s (want %.6g)", ch.time_s, want);
    rc = nccl_choose(&mr, COLL_ALLREDUCE, S, 1u << NCCL_ALGO_TREE, 1u << NCCL_PROTO_LL128, &ch, &e);
    want = 4.4e-6 + 2 * 7 * 1.2e-6 + 2 * S / (fmin(0.9 * 7 / 9 * bw6, fmin(110e9 * 7 / 9, 16.7e9 * 6 * 7 / 9)) * 0.6);
    CHECK(rc == 0 && check_close(want, ch.time_s, 0, 1e-12),
          "2.7: tree/LL128 on one node at 7/9, capped at 16.7 x 7/9 GB/s per channel, correction 0.6: %.6g s (want %.6g)",
          ch.time_s, want);
    /* Two nodes of 8: the plateau and LL's intra-node hops. */
    rc = nccl_model_init(&mr, pr, t8, 2, 8, 4, 4 * 12e9, 4 * 12e9, &e);
    rc = rc ? rc : nccl_model_init(&mp, pp, t8, 2, 8, 4, 4 * 12e9, 4 * 12e9, &e);
    nccl_choice cr, cp;
    rc = rc ? rc : nccl_choose(&mr, COLL_ALLREDUCE, S, 1u << NCCL_ALGO_RING, 1u << NCCL_PROTO_SIMPLE, &cr, &e);
    rc = rc ? rc : nccl_choose(&mp, COLL_ALLREDUCE, S, 1u << NCCL_ALGO_RING, 1u << NCCL_PROTO_SIMPLE, &cp, &e);
    CHECK(rc == 0 && check_close(1.9 * cp.lat_s, cr.lat_s, 0, 1e-12) && check_close(cp.edge_bytes, cr.edge_bytes, 0, 1e-12),
          "2.7: ring/Simple across nodes from n/16 x 64 KiB: latency x1.9 (%.4g s against %.4g s), same bandwidth", cr.lat_s,
          cp.lat_s);
    rc = nccl_choose(&mr, COLL_ALLREDUCE, 4096, 1u << NCCL_ALGO_RING, 1u << NCCL_PROTO_SIMPLE, &cr, &e);
    rc = rc ? rc : nccl_choose(&mp, COLL_ALLREDUCE, 4096, 1u << NCCL_ALGO_RING, 1u << NCCL_PROTO_SIMPLE, &cp, &e);
    CHECK(rc == 0 && cr.lat_s == cp.lat_s, "2.7: below n/16 x 64 KiB no plateau (%.4g s)", cr.lat_s);
    rc = nccl_choose(&mr, COLL_ALLREDUCE, 4096, 1u << NCCL_ALGO_RING, 1u << NCCL_PROTO_LL, &cr, &e);
    want = 3.6e-6 + (30 - 2) * 0.47e-6 * 1.8 + 2 * 2.7e-6;
    CHECK(rc == 0 && check_close(want, cr.lat_s, 0, 1e-12), "2.7: LL's intra-node hops cost 1.8x across nodes: %.6g s (want %.6g)",
          cr.lat_s, want);
    /* The simulation follows the refined choice on an idle platform (flow fidelity). */
    model_t *mm = model((long)S);
    sim_config c;
    fixture_config(&c, mm, t8, pr, 1, 4);
    c.bucket_cap_mb = c.first_bucket_mb = 1000;
    c.nccl_algos = 1u << NCCL_ALGO_TREE;
    c.iterations = 2;
    sim_result r;
    if (sim_run(&c, &r, &e) == 0) {
      double got = r.buckets[0].comm_end_s - r.buckets[0].comm_start_s;
      CHECK(check_close(r.buckets[0].nccl_estimate_s, got, 2.0 / 60e9, 1e-9), "2.7, 4 GPUs, tree: simulated %.6g s = NCCL's estimate %.6g s",
            got, r.buckets[0].nccl_estimate_s);
      sim_result_free(&r);
    } else CHECK(0, "sim_run: %s", e.msg);
    model_destroy(mm);
    topo_destroy(t8);
    profile_destroy(pr);
    profile_destroy(pp);
    profile_t *q = NULL;
    snprintf(text, sizeof text, fmt, "\"tuning_model\":\"nccl-2.19\",");
    CHECK(profile_parse(text, "bad.json", &q, &e) == ERR_INPUT && strstr(e.msg, "comm.nccl.tuning_model must be \"nccl-2.7\" or \"nccl-2.18\""),
          "an unknown tuning model -> %s", e.msg);
    snprintf(text, sizeof text, fmt, "\"tuning_model\":\"nccl-2.18\",");
    CHECK(profile_parse(text, "noarch.json", &q, &e) == ERR_INPUT && strstr(e.msg, "comm.nccl.gpu_arch must be"),
          "nccl-2.18 without gpu_arch -> %s", e.msg);
    snprintf(text, sizeof text, fmt, "\"tuning_model\":\"nccl-2.7\",\"gpu_arch\":\"ampere\",");
    CHECK(profile_parse(text, "arch27.json", &q, &e) == ERR_INPUT && strstr(e.msg, "comm.nccl.gpu_arch must be"),
          "gpu_arch with nccl-2.7 -> %s", e.msg);
    snprintf(text, sizeof text, fmt, "\"tuning_model\":\"nccl-2.18\",\"gpu_arch\":\"blackwell\",");
    CHECK(profile_parse(text, "archbad.json", &q, &e) == ERR_INPUT && strstr(e.msg, "comm.nccl.gpu_arch must be"),
          "an unknown gpu_arch -> %s", e.msg);
  }

  /* NCCL 2.18's refinements (tuning_model "nccl-2.18", gpu_arch), by hand from tuning.cc at v2.18.3-1:
   * the same profile numbers, the caps of Ampere and Hopper. */
  {
    char text[4096];
    const char *fmt =
        "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{"
        "\"gemm\":{\"model\":\"roofline\",\"launch_s\":0,\"peak_flops\":1e15,\"efficiency\":1,\"mem_bw_Bps\":1e15},"
        "\"ewise\":{\"model\":\"roofline\",\"launch_s\":0,\"mem_bw_Bps\":1e15}}},"
        "\"comm\":{\"nccl\":{\"tuning_model\":\"nccl-2.18\",\"gpu_arch\":\"%s\",\"ring\":{\"LL\":{\"base_lat_s\":6.6e-6,\"bw_factor\":0.25},"
        "\"LL128\":{\"base_lat_s\":14e-6,\"bw_factor\":0.92},\"Simple\":{\"base_lat_s\":8.4e-6,\"bw_factor\":1}},"
        "\"tree\":{\"LL\":{\"base_lat_s\":6.8e-6,\"bw_factor\":0.2421},\"LL128\":{\"base_lat_s\":14e-6,\"bw_factor\":0.8625},"
        "\"Simple\":{\"base_lat_s\":0,\"bw_factor\":0.92}}},\"links\":{"
        "\"nvl\":{\"lat_s\":3.4e-6,\"bw_Bps\":20e9,\"hop_lat_s\":{\"ring\":{\"LL\":0.6e-6,\"LL128\":1.9e-6,\"Simple\":3.4e-6},"
        "\"tree\":{\"LL\":0.6e-6,\"LL128\":1.25e-6,\"Simple\":4e-6}}},"
        "\"nic\":{\"lat_s\":14e-6,\"bw_Bps\":24e9,\"hop_lat_s\":{\"ring\":{\"LL\":2.7e-6,\"LL128\":4e-6,\"Simple\":14e-6},"
        "\"tree\":{\"LL\":5e-6,\"LL128\":8.5e-6,\"Simple\":14e-6}}}}}}";
    snprintf(text, sizeof text, fmt, "ampere");
    profile_t *pa = fixture_profile(text, "ampere.json");
    {
      /* PAT came with NCCL 2.23: a profile on 2.18's tuning model cannot list it. */
      char pt[4096];
      with_nccl(pt, sizeof pt, text, "\"pat\":{\"Simple\":{\"base_lat_s\":8e-6,\"bw_factor\":0.85}},");
      profile_t *p18 = fixture_profile(pt, "pat218.json");
      topo_t *t1n = topology(1);
      nccl_model m18;
      CHECK(nccl_model_init(&m18, p18, t1n, 4, 1, 1, 0, 24e9, &e) == ERR_INPUT &&
                strstr(e.msg, "comm.nccl.pat.Simple: pat came with NCCL 2.23, after its tuning_model's NCCL 2.18"),
            "2.18 listing pat -> %s", e.msg);
      topo_destroy(t1n);
      profile_destroy(p18);
    }
    snprintf(text, sizeof text, fmt, "hopper");
    profile_t *ph = fixture_profile(text, "hopper.json");
    topo_t *t8 = topology(8);
    nccl_model ma, mh;
    double S = 1048576, ring = 2.0 * 7 / 8 * S, bw = 8 * 40e9;
    /* One node of 8 GPUs, 8 channels of 40 GB/s: ring LL128 capped per channel by architecture. */
    rc = nccl_model_init(&ma, pa, t8, 1, 8, 8, bw, 0, &e);
    rc = rc ? rc : nccl_model_init(&mh, ph, t8, 1, 8, 8, bw, 0, &e);
    rc = rc ? rc : nccl_choose(&ma, COLL_ALLREDUCE, S, 1u << NCCL_ALGO_RING, 1u << NCCL_PROTO_LL128, &ch, &e);
    double want = 14e-6 + 14 * 1.9e-6 + ring / (8 * 20e9);
    CHECK(rc == 0 && check_close(want, ch.time_s, 0, 1e-12),
          "2.18 Ampere: ring/LL128 capped at 20 GB/s per channel: %.6g s (want %.6g)", ch.time_s, want);
    rc = nccl_choose(&mh, COLL_ALLREDUCE, S, 1u << NCCL_ALGO_RING, 1u << NCCL_PROTO_LL128, &ch, &e);
    want = 14e-6 + 14 * 1.9e-6 + ring / fmin(0.92 * bw, 8 * 36.7e9);
    CHECK(rc == 0 && check_close(want, ch.time_s, 0, 1e-12),
          "2.18 Hopper: ring/LL128 capped at 36.7 GB/s per channel: %.6g s (want %.6g)", ch.time_s, want);
    nccl_model mw;
    rc = nccl_model_init(&mw, pa, t8, 1, 8, 8, 8 * 50e9, 0, &e);
    rc = rc ? rc : nccl_choose(&mw, COLL_ALLREDUCE, S, 1u << NCCL_ALGO_RING, 1u << NCCL_PROTO_LL, &ch, &e);
    want = 6.6e-6 + 14 * 0.6e-6 + ring / 87.7e9;
    CHECK(rc == 0 && check_close(want, ch.time_s, 0, 1e-12),
          "2.18 Ampere, one node, 8 x 50 GB/s: ring/LL capped at 87.7 GB/s (not 100): %.6g s (want %.6g)", ch.time_s, want);
    rc = nccl_choose(&ma, COLL_ALLREDUCE, S, 1u << NCCL_ALGO_TREE, 1u << NCCL_PROTO_SIMPLE, &ch, &e);
    want = 0 + 2 * 7 * 4e-6 + 2 * S / (fmin(0.92 * bw, 8 * 24e9) * 0.5);
    CHECK(rc == 0 && check_close(want, ch.time_s, 0, 1e-12),
          "2.18 Ampere: tree/Simple capped at 24 GB/s per channel, correction 0.5 at 1 MiB: %.6g s (want %.6g)", ch.time_s, want);
    /* Two nodes: the network post overhead and the plateau (1.4x from Ampere on). */
    rc = nccl_model_init(&ma, pa, t8, 2, 8, 8, bw, 8 * 24e9, &e);
    nccl_choice c1;
    rc = rc ? rc : nccl_choose(&ma, COLL_ALLREDUCE, S, 1u << NCCL_ALGO_RING, 1u << NCCL_PROTO_SIMPLE, &c1, &e);
    want = 1.4 * (8.4e-6 + (30 - 2) * 3.4e-6 + 2 * 14e-6);
    CHECK(rc == 0 && check_close(want, c1.lat_s, 0, 1e-12),
          "2.18 Ampere, 2 nodes: ring/Simple latency with the 1.4x plateau: %.6g s (want %.6g)", c1.lat_s, want);
    rc = nccl_choose(&ma, COLL_ALLREDUCE, 4096, 1u << NCCL_ALGO_RING, 1u << NCCL_PROTO_LL, &c1, &e);
    want = 6.6e-6 + (30 - 2) * 1e-6 + 2 * 2.7e-6;
    CHECK(rc == 0 && check_close(want, c1.lat_s, 0, 1e-12),
          "2.18, 2 nodes: LL's intra-node hops cost at least the 1 us network overhead: %.6g s (want %.6g)", c1.lat_s, want);
    rc = nccl_choose(&ma, COLL_ALLREDUCE, 4096, 1u << NCCL_ALGO_RING, 1u << NCCL_PROTO_SIMPLE, &c1, &e);
    want = 8.4e-6 + (30 - 2) * 3.4e-6 + 2 * 14e-6;
    CHECK(rc == 0 && check_close(want, c1.lat_s, 0, 1e-12), "2.18: below 64 B per channel and rank no plateau: %.6g s (want %.6g)",
          c1.lat_s, want);
    topo_destroy(t8);
    profile_destroy(pa);
    profile_destroy(ph);
  }
  topo_destroy(t);
  topo_destroy(t1);
  profile_destroy(p);
  return check_status();
}
