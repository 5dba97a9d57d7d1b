/* NCCL's channels over the node's link graph and NICs: counts and bandwidths worked out by hand for
 * the bundled DGX-1V and DGX-1 (P100) cube-meshes, channels that respect every link's capacity,
 * rings entering and leaving a node near their NIC, and simulated all-reduces that get the channels'
 * summed bandwidth: inside a cube-mesh, and over two NICs. */
#include <stdlib.h>
#include <string.h>

#include "channels.h"
#include "check.h"
#include "data.h"
#include "fixtures.h"
#include "sim.h"
#include "topo.h"

#define LANE 20e9 /* per link, per direction (any value: the counts scale) */
#define NIC 12e9

/* Channels for the first G GPUs of t on `nodes` nodes; checks that they are permutations, that no
 * directed link carries more than its capacity, and that rings enter and leave near their NIC. */
static int channels_for(const topo_t *t, int G, int nodes, channels_t *ch) {
  channels_spec s;
  double *pair;
  unsigned char *near;
  err_t e;
  int rc = channels_spec_from_topo(t, G, nodes, LANE, NIC, &s, &pair, &near, &e);
  if (!rc) rc = channels_search(&s, ch, &e);
  if (rc) {
    printf("      channels: %s\n", e.msg);
    free(pair);
    free(near);
    return rc;
  }
  double *used = calloc((size_t)G * G, sizeof *used);
  int perm = 1, near_ok = 1;
  for (int c = 0; c < ch->count; c++) {
    const int *o = ch->order + c * G;
    int seen[64] = {0};
    for (int p = 0; p < G; p++) seen[o[p]]++;
    for (int g = 0; g < G; g++) perm &= seen[g] == 1;
    for (int p = 0; p + 1 < G; p++) used[o[p] * G + o[p + 1]] += ch->speed_Bps;
    if (nodes == 1 && G > 1) used[o[G - 1] * G + o[0]] += ch->speed_Bps;
    if (nodes > 1 && near) near_ok &= near[ch->nic[c] * G + o[0]] && near[ch->nic[c] * G + o[G - 1]];
  }
  int fits = 1;
  if (pair)
    for (int i = 0; i < G * G; i++) fits &= used[i] <= pair[i] * (1 + 1e-12);
  else /* a switch: what each GPU sends and receives within its links into it */
    for (int u = 0; u < G; u++) {
      double out = 0, in = 0;
      for (int v = 0; v < G; v++) out += used[u * G + v], in += used[v * G + u];
      fits &= out <= s.gpu_Bps * (1 + 1e-12) && in <= s.gpu_Bps * (1 + 1e-12);
    }
  CHECK(perm, "%s, %d GPUs x %d nodes: every channel visits every GPU once", t->name, G, nodes);
  CHECK(fits, "%s, %d GPUs x %d nodes: no link carries more than its links' bandwidth", t->name, G, nodes);
  if (nodes > 1) CHECK(near_ok, "%s, %d GPUs x %d nodes: channels enter and leave at GPUs near their NIC", t->name, G, nodes);
  free(used);
  free(pair);
  free(near);
  return 0;
}

static void expect(const topo_t *t, int G, int nodes, int count, double speed, int nics_used, const char *why) {
  channels_t ch;
  if (channels_for(t, G, nodes, &ch)) {
    CHECK(0, "%s: channels for %d GPUs x %d nodes", t->name, G, nodes);
    return;
  }
  CHECK(ch.count == count && check_close(speed, ch.speed_Bps, 0, 1e-12) && ch.nics_used == nics_used && !ch.exhausted,
        "%s, %d GPUs x %d nodes: %d channels x %.3g GB/s through %d NICs (want %d x %.3g, %d: %s)", t->name, G, nodes,
        ch.count, ch.speed_Bps / 1e9, ch.nics_used, count, speed / 1e9, nics_used, why);
  channels_free(&ch);
}

static profile_t *profile(void) {
  char text[2048];
  snprintf(text, sizeof text,
           FIXTURE_FREE_COMPUTE
           "\"comm\":{\"links\":{\"nvlink\":{\"lat_s\":2.385e-6,\"bw_Bps\":%.17g},\"ib-edr\":{\"lat_s\":7.31e-6,\"bw_Bps\":%.17g},"
           "\"nic\":{\"lat_s\":7.31e-6,\"bw_Bps\":%.17g}}}}",
           LANE, NIC, NIC);
  return fixture_profile(text, "channels.json");
}

/* One bucket of S bytes all-reduced: its duration, and NCCL's estimate. */
static double allreduce(const topo_t *t, const profile_t *p, int nodes, int G, long S, sim_result *r) {
  char text[512];
  snprintf(text, sizeof text,
           "ddpsim-model 1\nname m\nbatch 1\ntokens 1 tokens\nprecision fp32\nparam w %ld\nbackward\newise g elems=1 arrays=1 ready=w\n",
           S / 4);
  model_t *m = fixture_model(text, "channels.model");
  sim_config c;
  fixture_config(&c, m, t, p, nodes, G);
  c.bucket_cap_mb = c.first_bucket_mb = 1000;
  c.nccl_algos = 1u << 0; /* ring */
  c.nccl_protos = 1u << 2; /* Simple */
  c.iterations = 2;
  err_t e;
  double d = -1;
  if (sim_run(&c, r, &e)) printf("      sim_run: %s\n", e.msg);
  else d = r->buckets[0].comm_end_s - r->buckets[0].comm_start_s;
  model_destroy(m);
  return d;
}

int main(void) {
  topo_t *v100 = fixture_bundled_topo("dgx1v-ib"), *p100 = fixture_bundled_topo("dgx1-p100");

  /* DGX-1V: each GPU has 6 links (NV2 to two neighbours, NV1 to two). */
  expect(v100, 8, 1, 6, LANE, 0, "every link of every GPU: the NV2 ring twice each way and the NV1 ring once");
  expect(v100, 4, 1, 4, LANE, 0, "GPU 0 has 4 links to GPUs 1-3");
  expect(v100, 3, 1, 2, LANE, 0, "GPU 0 has one link each to GPUs 1 and 2");
  expect(v100, 2, 1, 1, LANE, 0, "GPUs 0 and 1 share one link: not the six of an aggregate");
  expect(v100, 8, 2, 4, NIC, 4, "one channel per NIC at the NIC's bandwidth");
  expect(v100, 2, 2, 1, NIC, 1, "only NIC 0 is near GPUs 0 and 1");
  /* DGX-1 (P100): 4 links per GPU, quads fully connected. */
  expect(p100, 8, 1, 4, LANE, 0, "two Hamiltonian cycles of the cube-mesh, each way");
  expect(p100, 4, 1, 6, LANE / 2, 0,
         "a quad: 3 links per GPU, but only 2 disjoint directed rings exist, so 6 rings at half a link");

  /* NVSwitch nodes: no pair graph, each GPU with 12 (A100) or 18 (H100) links into the switch. */
  topo_t *a100 = fixture_bundled_topo("dgxa100-ib"), *h100 = fixture_bundled_topo("dgxh100-ib"), *roce = fixture_bundled_topo("a100-roce100");
  /* On one node a switch gives one ring at a GPU's whole bandwidth (sim/channels.h: switched nodes
   * need no search); NCCL splits it over more channels (topologies/README.md says what that changes). */
  expect(a100, 8, 1, 1, 12 * LANE, 0, "one ring over all 12 links of every GPU");
  expect(a100, 8, 2, 8, NIC, 8, "one channel per NIC, entering and leaving at the GPU pair beside it");
  expect(h100, 8, 1, 1, 18 * LANE, 0, "one ring over all 18 links of every GPU");
  expect(h100, 8, 2, 8, NIC, 8, "one channel per NIC (every GPU near every NIC: PXN)");
  expect(roce, 8, 2, 2, NIC, 2, "two 100 GbE NICs, one channel each");
  topo_destroy(a100);
  topo_destroy(h100);
  topo_destroy(roce);

  /* How many links a measured ring all-reduce spans (what ddpcalib comm --topology divides by). */
  struct {
    const topo_t *t;
    int G, nodes;
    double want;
  } units[] = {{v100, 8, 1, 6}, {v100, 4, 1, 4}, {v100, 2, 1, 1}, {p100, 4, 1, 3}, {v100, 8, 2, 4}, {v100, 2, 2, 1}};
  for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
    double got = -1;
    err_t e;
    int rc = channels_link_units(units[i].t, units[i].G, units[i].nodes, &got, &e);
    CHECK(rc == 0 && check_close(units[i].want, got, 0, 1e-12), "%s, %d GPUs x %d nodes: a ring spans %g %s (want %g)",
          units[i].t->name, units[i].G, units[i].nodes, got, units[i].nodes > 1 ? "NICs" : "links", units[i].want);
  }

  /* Simulated: channels split the bytes evenly and share links max-min; the all-reduce gets their
   * summed bandwidth. S is a multiple of 4 x n x channels, so every message is whole bytes. */
  profile_t *p = profile();
  sim_result r;
  long S = 4L * 4 * 6 * 100000;
  double got = allreduce(p100, p, 1, 4, S, &r), want = 2.0 * 3 * 2.385e-6 + 2.0 * 3 / 4 * S / (3 * LANE);
  CHECK(check_close(want, got, 0, 1e-6) && r.channels == 6,
        "4 P100s: ring all-reduce %.9g s = 2(n-1) hop + 2(n-1)/n S / (6 channels x LANE/2) = %.9g s", got, want);
  CHECK(check_close(r.buckets[0].nccl_estimate_s, got, 0, 1e-6), "4 P100s: equals NCCL's estimate %.9g s", r.buckets[0].nccl_estimate_s);
  sim_result_free(&r);

  /* Two NICs, both near both GPUs: two channels, one per NIC; the nodes exchange at 2 x NIC. */
  topo_t *two = fixture_topo("ddpsim-topology 1\nname two\ngpus_per_node 2\nintra nvlink links=2 bw=25GBps\n"
                             "pair 0 1 links=2\nnic nic count=2 bw=100Gbps\nnic_near 0 0,1\nnic_near 1 0,1\n",
                             "two.topo");
  topo_t *one = fixture_topo("ddpsim-topology 1\nname one\ngpus_per_node 2\nintra nvlink links=2 bw=25GBps\n"
                             "pair 0 1 links=2\nnic nic count=1 bw=100Gbps\n",
                             "one.topo");
  S = 4L * 4 * 2 * 100000;
  double t2 = allreduce(two, p, 2, 2, S, &r);
  int ch2 = r.channels, nics2 = r.nics_used;
  double nic2 = r.nic_bw_Bps;
  sim_result_free(&r);
  double t1 = allreduce(one, p, 2, 2, S, &r);
  double lat = 2.0 * 2 * 2.385e-6 + 2.0 * 7.31e-6; /* 2(n-1) hops: 2 x 2 inside the nodes, 2 between */
  want = lat + 2.0 * 3 / 4 * S / (2 * NIC);
  CHECK(ch2 == 2 && nics2 == 2 && check_close(2 * NIC, nic2, 0, 1e-12),
        "2 nodes x 2 GPUs, 2 NICs: %d channels through %d NICs, %.3g GB/s between nodes", ch2, nics2, nic2 / 1e9);
  CHECK(check_close(want, t2, 0, 1e-6), "2 NICs: all-reduce %.9g s = latency + 2(n-1)/n S / (2 NIC) = %.9g s", t2, want);
  want = lat + 2.0 * 3 / 4 * S / NIC;
  CHECK(check_close(want, t1, 0, 1e-6), "1 NIC: all-reduce %.9g s = latency + 2(n-1)/n S / NIC = %.9g s", t1, want);
  sim_result_free(&r);

  topo_destroy(v100);
  topo_destroy(p100);
  topo_destroy(two);
  topo_destroy(one);
  profile_destroy(p);
  return check_status();
}
