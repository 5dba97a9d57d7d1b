#include "platform.h"

#include <math.h>
#include <stdlib.h>

void platform_host_name(int rank, char *buf, size_t len) { snprintf(buf, len, "gpu%d", rank); }

static int bad(double x) { return !(x >= 0) || !isfinite(x); }

typedef struct {
  long long key; /* src * n + dst */
  int channel;
} route_use;

static int cmp_use(const void *a, const void *b) {
  const route_use *x = a, *y = b;
  return x->key < y->key ? -1 : x->key > y->key ? 1 : x->channel - y->channel;
}

static int find(int *parent, int k) {
  while (parent[k] != k) k = parent[k] = parent[parent[k]];
  return k;
}

/* The links of node m (every node when m < 0): the GPUs' links inside it, and its NICs. */
static void write_node_links(FILE *f, const platform_spec *s, int m, const int *members) {
  int G = s->gpus_per_node, N = s->nodes;
  for (int node = m < 0 ? 0 : m; node < (m < 0 ? N : m + 1); node++)
    for (int u = 0; u < G && G > 1; u++) {
      if (!s->pair_Bps) {
        fprintf(f, "  <link id=\"up%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\"/>\n", node * G + u, s->gpu_Bps, s->intra_lat_s);
        fprintf(f, "  <link id=\"down%d\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", node * G + u, s->gpu_Bps);
        continue;
      }
      for (int v = 0; v < G; v++)
        if (s->pair_Bps[u * G + v] > 0)
          fprintf(f, "  <link id=\"nvl%d_%d_%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\"/>\n", node, u, v, s->pair_Bps[u * G + v],
                  s->intra_lat_s);
    }
  for (int node = m < 0 ? 0 : m; N > 1 && node < (m < 0 ? N : m + 1); node++)
    for (int k = 0; k < s->nics; k++) {
      if (!members[k]) continue;
      fprintf(f, "  <link id=\"nicup%d_%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\"/>\n", node, k, members[k] * s->nic_Bps,
              s->nic_lat_s);
      fprintf(f, "  <link id=\"nicdown%d_%d\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", node, k, members[k] * s->nic_Bps);
    }
}

/* Routes for use[from..to) (sorted, each pair once); inter-node ones only when `direct` (one zone). */
static void write_routes(FILE *f, const platform_spec *s, const route_use *use, size_t from, size_t to, int n, int *parent,
                         int direct) {
  int G = s->gpus_per_node;
  for (size_t i = from; i < to; i++) {
    if (i > 0 && use[i].key == use[i - 1].key) continue;
    int src = (int)(use[i].key / n), dst = (int)(use[i].key % n);
    int node = src / G, next_node = dst / G;
    if (node != next_node && !direct) continue;
    fprintf(f, "  <route src=\"gpu%d\" dst=\"gpu%d\" symmetrical=\"NO\">", src, dst);
    if (node == next_node && s->pair_Bps) {
      fprintf(f, "<link_ctn id=\"nvl%d_%d_%d\"/>", node, src % G, dst % G);
    } else if (node == next_node) {
      fprintf(f, "<link_ctn id=\"up%d\"/><link_ctn id=\"down%d\"/>", src, dst);
    } else {
      int k = find(parent, s->ch->nic[use[i].channel]);
      fprintf(f, "<link_ctn id=\"nicup%d_%d\"/>", node, k);
      if (s->backbone_bw_Bps > 0) fprintf(f, "<link_ctn id=\"backbone\"/>");
      fprintf(f, "<link_ctn id=\"nicdown%d_%d\"/>", next_node, k);
    }
    fprintf(f, "</route>\n");
  }
}

static int cmp_ll(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return x < y ? -1 : x > y;
}

int platform_write(FILE *f, const platform_spec *s, err_t *e) {
  int G = s->gpus_per_node, N = s->nodes;
  const channels_t *ch = s->ch;
  if (N < 1 || G < 1) return err_set(e, ERR_INPUT, "platform needs at least one node and one GPU per node");
  if (!ch || ch->count < 1 || ch->gpus != G) return err_set(e, ERR_INPUT, "platform needs the channels of its %d GPUs per node", G);
  if (G > 1 && !s->pair_Bps && !(s->gpu_Bps > 0)) return err_set(e, ERR_INPUT, "intra-node bandwidth must be positive");
  if (N > 1 && (s->nics < 1 || s->nics > 64 || !(s->nic_Bps > 0)))
    return err_set(e, ERR_INPUT, "%d nodes need a NIC between them, and this topology has none", N);
  if (bad(s->intra_lat_s) || bad(s->nic_lat_s) || bad(s->backbone_bw_Bps) || bad(s->gpu_Bps) || bad(s->nic_Bps))
    return err_set(e, ERR_INPUT, "platform numbers must be finite and non-negative");
  int n = N * G;

  /* Every (rank, successor) pair some channel uses, once, with the first channel using it. */
  size_t nuse = n > 1 ? (size_t)n * (size_t)ch->count : 0, nroute = 0;
  route_use *use = malloc((nuse ? nuse : 1) * sizeof *use);
  if (!use) return err_set(e, ERR_NOMEM, "out of memory");
  for (int c = 0; c < ch->count && n > 1; c++)
    for (int r = 0; r < n; r++) {
      use[nroute].key = (long long)r * n + channels_next(ch, N, c, r);
      use[nroute++].channel = c;
    }
  qsort(use, nroute, sizeof *use, cmp_use);

  /* NICs two channels reach from the same pair of GPUs become one link. */
  int parent[64], members[64] = {0};
  for (int k = 0; k < 64; k++) parent[k] = k;
  for (size_t i = 1; i < nroute; i++)
    if (use[i].key == use[i - 1].key && ch->nic[use[i].channel] >= 0 && ch->nic[use[i - 1].channel] >= 0) {
      int a = find(parent, ch->nic[use[i].channel]), b = find(parent, ch->nic[use[i - 1].channel]);
      if (a != b) parent[a] = b;
    }
  for (int k = 0; N > 1 && k < s->nics; k++) members[find(parent, k)]++;

  /* Per node, the merged NIC each GPU leaves or enters its node through (-1: none). When a GPU
   * leaves (or enters) through one NIC only, each node is a zone of its own whose routes to and from
   * a router carry the NICs, and nodes reach each other through the routers: SimGrid's route tables
   * then grow with G^2 per node and N^2 between nodes instead of (N G)^2. Otherwise one zone. */
  int hier = N > 1;
  int *exit_nic = malloc((size_t)G * sizeof *exit_nic), *entry_nic = malloc((size_t)G * sizeof *entry_nic);
  if (!exit_nic || !entry_nic) {
    free(exit_nic);
    free(entry_nic);
    free(use);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  for (int g = 0; g < G; g++) exit_nic[g] = entry_nic[g] = -1;
  for (size_t i = 0; hier && i < nroute; i++) {
    int src = (int)(use[i].key / n), dst = (int)(use[i].key % n);
    if (src / G == dst / G) continue;
    int k = find(parent, ch->nic[use[i].channel]), *x = &exit_nic[src % G], *y = &entry_nic[dst % G];
    if ((*x >= 0 && *x != k) || (*y >= 0 && *y != k)) hier = 0;
    *x = k;
    *y = k;
  }

  fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n");
  fprintf(f, "<!-- generated by ddpsim: %d nodes x %d GPUs, %d channel(s) -->\n", N, G, ch->count);
  fprintf(f, "<platform version=\"4.1\">\n<zone id=\"cluster\" routing=\"Full\">\n");
  size_t next_use = 0;
  for (int m = 0; m < N; m++) {
    if (hier) fprintf(f, "<zone id=\"node%d\" routing=\"Full\">\n", m);
    /* Compute is modelled as sleeps; hosts only carry actors. */
    for (int u = 0; u < G; u++) fprintf(f, "  <host id=\"gpu%d\" speed=\"1Gf\"/>\n", m * G + u);
    if (hier) fprintf(f, "  <router id=\"router%d\"/>\n", m);
    if (hier || m == N - 1) write_node_links(f, s, hier ? m : -1, members);
    if (!hier) continue;
    size_t from = next_use;
    while (next_use < nroute && (int)(use[next_use].key / n) / G == m) next_use++;
    write_routes(f, s, use, from, next_use, n, parent, 0);
    for (int u = 0; u < G; u++) {
      if (exit_nic[u] >= 0)
        fprintf(f, "  <route src=\"gpu%d\" dst=\"router%d\" symmetrical=\"NO\"><link_ctn id=\"nicup%d_%d\"/></route>\n", m * G + u,
                m, m, exit_nic[u]);
      if (entry_nic[u] >= 0)
        fprintf(f, "  <route src=\"router%d\" dst=\"gpu%d\" symmetrical=\"NO\"><link_ctn id=\"nicdown%d_%d\"/></route>\n", m,
                m * G + u, m, entry_nic[u]);
    }
    fprintf(f, "</zone>\n");
  }
  if (N > 1 && s->backbone_bw_Bps > 0) fprintf(f, "  <link id=\"backbone\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", s->backbone_bw_Bps);
  /* SimGrid refuses a route without links: a non-blocking switch is a link that bounds no flow (a
   * fat pipe, not shared, far faster than any NIC). */
  if (hier && !(s->backbone_bw_Bps > 0))
    fprintf(f, "  <link id=\"switch\" bandwidth=\"1e18Bps\" latency=\"0s\" sharing_policy=\"FATPIPE\"/>\n");
  if (!hier) write_routes(f, s, use, 0, nroute, n, parent, 1);
  /* Between node zones: one route per pair of nodes a channel crosses, through the backbone. */
  long long *pairs = hier ? malloc((nroute ? nroute : 1) * sizeof *pairs) : NULL;
  size_t npairs = 0;
  for (size_t i = 0; pairs && i < nroute; i++) {
    long long a = (use[i].key / n) / G, b = (use[i].key % n) / G;
    if (a != b) pairs[npairs++] = a * N + b;
  }
  if (pairs) qsort(pairs, npairs, sizeof *pairs, cmp_ll);
  for (size_t i = 0; pairs && i < npairs; i++) {
    if (i > 0 && pairs[i] == pairs[i - 1]) continue;
    int a = (int)(pairs[i] / N), b = (int)(pairs[i] % N);
    fprintf(f, "  <zoneRoute src=\"node%d\" dst=\"node%d\" gw_src=\"router%d\" gw_dst=\"router%d\" symmetrical=\"NO\">", a, b, a, b);
    fprintf(f, "<link_ctn id=\"%s\"/></zoneRoute>\n", s->backbone_bw_Bps > 0 ? "backbone" : "switch");
  }
  int nomem = hier && !pairs;
  free(pairs);
  free(exit_nic);
  free(entry_nic);
  if (nomem) {
    free(use);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  fprintf(f, "</zone>\n</platform>\n");
  free(use);
  if (ferror(f)) return err_set(e, ERR_IO, "cannot write the platform file");
  return ERR_OK;
}
