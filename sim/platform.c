#include "platform.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "platform_s4u.h"

static int bad(double x) { return !(x >= 0) || !isfinite(x); }

typedef struct {
  long long key; /* src * n + dst */
  int channel;   /* the job's channel using it, or -1 (a phase's ring) */
  int nic;       /* the NIC it crosses between nodes (before merging): its channel's, or a rail's;
                    -1: none (a node ring) */
} route_use;

static int cmp_use(const void *a, const void *b) {
  const route_use *x = a, *y = b;
  return x->key < y->key ? -1 : x->key > y->key ? 1 : x->channel - y->channel;
}

static int find(int *parent, int k) {
  while (parent[k] != k) k = parent[k] = parent[parent[k]];
  return k;
}

static size_t findz(size_t *parent, size_t k) {
  while (parent[k] != k) k = parent[k] = parent[parent[k]];
  return k;
}

int platform_check(const platform_spec *s, err_t *e) {
  int G = s->gpus_per_node, N = s->nodes;
  const channels_t *ch = s->ch;
  if (N < 1 || G < 1) return err_set(e, ERR_INPUT, "platform needs at least one node and one GPU per node");
  if (!ch || ch->count < 1 || ch->gpus != G) return err_set(e, ERR_INPUT, "platform needs the channels of its %d GPUs per node", G);
  if (s->ch_node && (s->ch_node->count < 1 || s->ch_node->gpus != G))
    return err_set(e, ERR_INPUT, "platform needs the node rings of its %d GPUs per node", G);
  for (int c = 0; s->ch_node && s->pair_Bps && G > 1 && c < s->ch_node->count; c++)
    for (int u = 0; u < G; u++) {
      int v = channels_next(s->ch_node, 1, c, u);
      if (!(s->pair_Bps[u * G + v] > 0)) return err_set(e, ERR_INPUT, "node ring %d goes from GPU %d to %d, which no link joins", c, u, v);
    }
  if (G > 1 && !s->pair_Bps && !(s->gpu_Bps > 0)) return err_set(e, ERR_INPUT, "intra-node bandwidth must be positive");
  if (N > 1 && (s->nics < 1 || s->nics > 64 || !(s->nic_Bps > 0)))
    return err_set(e, ERR_INPUT, "%d nodes need a NIC between them, and this topology has none", N);
  if (bad(s->intra_lat_s) || bad(s->nic_lat_s) || bad(s->backbone_bw_Bps) || bad(s->gpu_Bps) || bad(s->nic_Bps))
    return err_set(e, ERR_INPUT, "platform numbers must be finite and non-negative");
  return ERR_OK;
}

/* What the build works from: the pairs the channels use, the merged NICs, and the zones. */
typedef struct {
  const platform_spec *s;
  int n;
  route_use *use; /* (nroute) every (rank, successor) pair a channel uses, sorted; duplicates kept */
  size_t nroute;
  int parent[64], members[64]; /* NICs merged into one link: union-find, and each root's members */
  int hier;                    /* node zones behind routers (else one zone) */
  int *exit_nic, *entry_nic;   /* (G) hier: the merged NIC each local GPU leaves / enters through */
  /* Links are numbered (link_id): the GPUs' (pair graph: rank's link to local v at rank * G + v;
   * switched nodes: rank * G its link up, + 1 down), then each node's merged NICs up and down, then
   * the backbone. */
  size_t nlinks;
  psg_link **link;             /* (nlinks) build: each link's handle */
} layout;

static int fail(err_t *e) { return err_set(e, ERR_SIM, "%s", psg_error()); }

static size_t nic_up_id(const layout *L, int node, int k) { return (size_t)L->n * L->s->gpus_per_node + (size_t)node * 64 + (size_t)k; }
static size_t nic_down_id(const layout *L, int node, int k) { return nic_up_id(L, L->s->nodes + node, k); }
static size_t backbone_id(const layout *L) { return nic_up_id(L, 2 * L->s->nodes, 0); }

/* The links of the route from rank src to dst crossing NIC `nic` between nodes: ids[] (returns how
 * many). */
static int route_links(layout *L, int src, int dst, int nic, size_t ids[3]) {
  const platform_spec *s = L->s;
  int G = s->gpus_per_node, node = src / G, next_node = dst / G, nl = 0;
  if (node == next_node && s->pair_Bps) {
    ids[nl++] = (size_t)src * G + (size_t)(dst % G);
  } else if (node == next_node) {
    ids[nl++] = (size_t)src * G;
    ids[nl++] = (size_t)dst * G + 1;
  } else {
    int k = find(L->parent, nic);
    ids[nl++] = nic_up_id(L, node, k);
    if (s->backbone_bw_Bps > 0) ids[nl++] = backbone_id(L);
    ids[nl++] = nic_down_id(L, next_node, k);
  }
  return nl;
}

/* Link id's bandwidth (0: no such link). */
static double link_Bps(const layout *L, size_t id) {
  const platform_spec *s = L->s;
  int G = s->gpus_per_node;
  size_t gpu_links = (size_t)L->n * G;
  if (id < gpu_links) {
    if (G < 2) return 0;
    if (!s->pair_Bps) return id % (size_t)G < 2 ? s->gpu_Bps : 0;
    return s->pair_Bps[(size_t)((id / G) % G) * G + id % G];
  }
  if (id == backbone_id(L)) return s->nodes > 1 ? s->backbone_bw_Bps : 0;
  int k = (int)((id - gpu_links) % 64);
  return s->nodes > 1 && k < s->nics ? L->members[k] * s->nic_Bps : 0;
}

/* Node m's links (the GPUs' inside it and its NICs), made in zone z. */
static int make_node_links(layout *L, psg_zone *z, int m, err_t *e) {
  const platform_spec *s = L->s;
  int G = s->gpus_per_node, N = s->nodes;
  char name[64];
  for (int u = 0; u < G && G > 1; u++) {
    int r = m * G + u;
    if (!s->pair_Bps) {
      snprintf(name, sizeof name, "up%d", r);
      if (!(L->link[(size_t)r * G] = psg_link_new(z, name, s->gpu_Bps, s->intra_lat_s, 0))) return fail(e);
      snprintf(name, sizeof name, "down%d", r);
      if (!(L->link[(size_t)r * G + 1] = psg_link_new(z, name, s->gpu_Bps, 0, 0))) return fail(e);
      continue;
    }
    for (int v = 0; v < G; v++)
      if (s->pair_Bps[u * G + v] > 0) {
        snprintf(name, sizeof name, "nvl%d_%d_%d", m, u, v);
        if (!(L->link[(size_t)r * G + v] = psg_link_new(z, name, s->pair_Bps[u * G + v], s->intra_lat_s, 0))) return fail(e);
      }
  }
  for (int k = 0; N > 1 && k < s->nics; k++) {
    if (!L->members[k]) continue;
    snprintf(name, sizeof name, "nicup%d_%d", m, k);
    if (!(L->link[nic_up_id(L, m, k)] = psg_link_new(z, name, L->members[k] * s->nic_Bps, s->nic_lat_s, 0))) return fail(e);
    snprintf(name, sizeof name, "nicdown%d_%d", m, k);
    if (!(L->link[nic_down_id(L, m, k)] = psg_link_new(z, name, L->members[k] * s->nic_Bps, 0, 0))) return fail(e);
  }
  return ERR_OK;
}

/* Routes in zone z for use[from..to) (each pair once); inter-node ones only in one zone (!hier). */
static int make_routes(layout *L, psg_zone *z, sg_host_t *hosts, size_t from, size_t to, err_t *e) {
  int G = L->s->gpus_per_node, n = L->n;
  for (size_t i = from; i < to; i++) {
    if (i > 0 && L->use[i].key == L->use[i - 1].key) continue;
    int src = (int)(L->use[i].key / n), dst = (int)(L->use[i].key % n);
    if (src / G != dst / G && L->hier) continue;
    size_t ids[3];
    psg_link *links[3];
    int nl = route_links(L, src, dst, L->use[i].nic, ids);
    for (int k = 0; k < nl; k++) links[k] = L->link[ids[k]];
    if (psg_route(z, psg_host_point(hosts[src]), psg_host_point(hosts[dst]), NULL, NULL, links, nl)) return fail(e);
  }
  return ERR_OK;
}

/* Node zones (hier) or one zone, as platform.h describes. */
static int build(layout *L, sg_host_t *hosts, err_t *e) {
  const platform_spec *s = L->s;
  int G = s->gpus_per_node, N = s->nodes;
  char name[64];
  /* Compute is modelled as sleeps; hosts only carry actors. */
  const double speed = 1e9;
  psg_zone *root = psg_zone_new(NULL, "cluster", L->hier);
  if (!root) return fail(e);
  psg_link *backbone = NULL;
  if (N > 1 && s->backbone_bw_Bps > 0 && !(backbone = L->link[backbone_id(L)] = psg_link_new(root, "backbone", s->backbone_bw_Bps, 0, 0)))
    return fail(e);
  /* Every link lives in the root zone and is made before any node zone: SimGrid checks each new
   * link's name against every zone's (Engine::link_by_name_or_null, recursive), so links made in
   * node zones would cost O(N) each. Routes take them by handle, wherever they live. */
  int rc;
  for (int m = 0; m < N; m++)
    if ((rc = make_node_links(L, root, m, e))) return rc;
  size_t next_use = 0;
  for (int m = 0; m < N; m++) {
    psg_zone *z = root;
    if (L->hier) {
      snprintf(name, sizeof name, "node%d", m);
      if (!(z = psg_zone_new(root, name, 0))) return fail(e);
    }
    for (int u = 0; u < G; u++) {
      snprintf(name, sizeof name, "gpu%d", m * G + u);
      if (!(hosts[m * G + u] = psg_host(z, name, speed))) return fail(e);
    }
    if (!L->hier) continue;
    snprintf(name, sizeof name, "router%d", m);
    psg_point *router = psg_router(z, name);
    if (!router) return fail(e);
    size_t from = next_use;
    while (next_use < L->nroute && (int)(L->use[next_use].key / L->n) / G == m) next_use++;
    if ((rc = make_routes(L, z, hosts, from, next_use, e))) return rc;
    for (int u = 0; u < G; u++) {
      psg_point *gpu = psg_host_point(hosts[m * G + u]);
      if (L->exit_nic[u] >= 0 && psg_route(z, gpu, router, NULL, NULL, &L->link[nic_up_id(L, m, L->exit_nic[u])], 1)) return fail(e);
      if (L->entry_nic[u] >= 0 && psg_route(z, router, gpu, NULL, NULL, &L->link[nic_down_id(L, m, L->entry_nic[u])], 1))
        return fail(e);
    }
    if (psg_seal(z)) return fail(e);
    /* Between node zones, a star: up from this node through the backbone (if any), down with no
     * link. A flow between nodes crosses its NICs (the node zones' routes to and from the routers)
     * and the backbone once. */
    psg_point *zp = psg_zone_point(z);
    if (psg_route(root, zp, NULL, router, NULL, &backbone, backbone ? 1 : 0) ||
        psg_route(root, NULL, zp, NULL, router, NULL, 0))
      return fail(e);
  }
  if (!L->hier && (rc = make_routes(L, root, hosts, 0, L->nroute, e))) return rc;
  if (psg_seal(root)) return fail(e);
  return ERR_OK;
}

static void layout_free(layout *L) {
  free(L->use);
  free(L->exit_nic);
  free(L->entry_nic);
  free(L->link);
}

/* The pairs the channels use, the merged NICs and the zones of spec (free with layout_free). */
static int layout_init(layout *L, const platform_spec *s, err_t *e) {
  int rc = platform_check(s, e);
  if (rc) return rc;
  int G = s->gpus_per_node, N = s->nodes, n = N * G;
  const channels_t *ch = s->ch;
  *L = (layout){.s = s, .n = n};
  L->nlinks = (size_t)n * G + (size_t)2 * N * 64 + 1;

  /* Every (rank, successor) pair some channel uses, with the channel using it; then a composed
   * collective's node rings and rails. */
  int nnode = s->ch_node && G > 1 ? s->ch_node->count : 0, rails = s->rails && N > 1;
  size_t nuse = n > 1 ? (size_t)n * (size_t)(ch->count + nnode + rails) : 0;
  L->use = malloc((nuse ? nuse : 1) * sizeof *L->use);
  L->exit_nic = malloc((size_t)G * sizeof *L->exit_nic);
  L->entry_nic = malloc((size_t)G * sizeof *L->entry_nic);
  if (!L->use || !L->exit_nic || !L->entry_nic) {
    layout_free(L);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  for (int c = 0; c < ch->count && n > 1; c++)
    for (int r = 0; r < n; r++) {
      int dst = channels_next(ch, N, c, r);
      L->use[L->nroute++] = (route_use){.key = (long long)r * n + dst, .channel = c, .nic = ch->nic[c]};
    }
  for (int c = 0; c < nnode; c++)
    for (int r = 0; r < n; r++)
      L->use[L->nroute++] = (route_use){.key = (long long)r * n + r / G * G + channels_next(s->ch_node, 1, c, r % G), .channel = -1, .nic = -1};
  for (int r = 0; rails && r < n; r++) {
    int u = r % G, k = 0;
    while (s->near && k < s->nics - 1 && !s->near[k * G + u]) k++;
    L->use[L->nroute++] = (route_use){.key = (long long)r * n + (r / G + 1) % N * G + u, .channel = -1, .nic = k};
  }
  qsort(L->use, L->nroute, sizeof *L->use, cmp_use);

  /* NICs two channels reach from the same pair of GPUs become one link. */
  for (int k = 0; k < 64; k++) L->parent[k] = k;
  for (size_t i = 1; i < L->nroute; i++)
    if (L->use[i].key == L->use[i - 1].key && L->use[i].nic >= 0 && L->use[i - 1].nic >= 0) {
      int a = find(L->parent, L->use[i].nic), b = find(L->parent, L->use[i - 1].nic);
      if (a != b) L->parent[a] = b;
    }
  for (int k = 0; N > 1 && k < s->nics; k++) L->members[find(L->parent, k)]++;

  /* Per local GPU, the merged NIC it leaves or enters its node through (-1: none). When each GPU
   * leaves (and enters) through one NIC only, nodes are zones behind routers. */
  L->hier = N > 1;
  for (int g = 0; g < G; g++) L->exit_nic[g] = L->entry_nic[g] = -1;
  for (size_t i = 0; L->hier && i < L->nroute; i++) {
    int src = (int)(L->use[i].key / n), dst = (int)(L->use[i].key % n);
    if (src / G == dst / G) continue;
    int k = find(L->parent, L->use[i].nic), *x = &L->exit_nic[src % G], *y = &L->entry_nic[dst % G];
    if ((*x >= 0 && *x != k) || (*y >= 0 && *y != k)) L->hier = 0;
    *x = k;
    *y = k;
  }
  return ERR_OK;
}

int platform_build(const platform_spec *s, sg_host_t *hosts, err_t *e) {
  layout L;
  int rc = layout_init(&L, s, e);
  if (rc) return rc;
  if (!(L.link = calloc(L.nlinks, sizeof *L.link))) rc = err_set(e, ERR_NOMEM, "out of memory");
  if (!rc) rc = build(&L, hosts, e);
  layout_free(&L);
  return rc;
}

void platform_net_free(platform_net *net) {
  if (!net) return;
  free(net->pairs);
  free(net->group_at);
  free(net->group_pair);
  free(net->link_Bps);
  *net = (platform_net){0};
}

int platform_pairs(const platform_spec *s, platform_net *net, err_t *e) {
  *net = (platform_net){.exclusive = 1, .one_node = 1};
  layout L;
  int rc = layout_init(&L, s, e);
  if (rc) return rc;
  size_t cap = L.nroute ? L.nroute : 1;
  platform_pair *pp = malloc(cap * sizeof *pp);
  size_t *owner = malloc(L.nlinks * sizeof *owner); /* the first pair crossing each link, or SIZE_MAX */
  size_t *parent = malloc(cap * sizeof *parent);    /* pairs joined by shared links: union-find */
  int *dense = malloc(L.nlinks * sizeof *dense);     /* a link's number among the grouped pairs' */
  if (!pp || !owner || !parent || !dense) goto nomem;
  for (size_t i = 0; i < L.nlinks; i++) owner[i] = SIZE_MAX, dense[i] = -1;
  size_t np = 0;
  for (size_t i = 0; i < L.nroute; i++) {
    if (i > 0 && L.use[i].key == L.use[i - 1].key) {
      pp[np - 1].flows++;
      continue;
    }
    int src = (int)(L.use[i].key / L.n), dst = (int)(L.use[i].key % L.n);
    size_t ids[3];
    int nl = route_links(&L, src, dst, L.use[i].nic, ids);
    double min = 0;
    parent[np] = np;
    for (int k = 0; k < nl; k++) {
      double bw = link_Bps(&L, ids[k]);
      if (k == 0 || bw < min) min = bw;
      if (owner[ids[k]] == SIZE_MAX) {
        owner[ids[k]] = np;
      } else {
        size_t a = findz(parent, owner[ids[k]]), b = findz(parent, np);
        if (a < b) parent[b] = a; /* a set's root is its first pair */
        if (b < a) parent[a] = b;
      }
    }
    pp[np] = (platform_pair){.src = src, .dst = dst, .flows = 1, .min_Bps = min, .group = -1, .nlinks = nl};
    for (int k = 0; k < nl; k++) pp[np].link[k] = (int)ids[k]; /* layout ids until numbered below */
    np++;
  }
  /* Groups: the pairs' sets of more than one, numbered in order of their first pair (the root, met
   * before the others). */
  size_t *size = calloc(np + 1, sizeof *size);
  if (!size) goto nomem;
  for (size_t i = 0; i < np; i++) size[findz(parent, i)]++;
  int ng = 0;
  size_t members = 0;
  for (size_t i = 0; i < np; i++) {
    size_t root = findz(parent, i);
    if (size[root] < 2) continue;
    if (root == i) pp[i].group = ng++;
    else pp[i].group = pp[root].group;
    members++;
  }
  free(size);
  net->group_at = calloc((size_t)ng + 1, sizeof *net->group_at);
  net->group_pair = malloc((members ? members : 1) * sizeof *net->group_pair);
  if (!net->group_at || !net->group_pair) goto nomem;
  for (size_t i = 0; i < np; i++)
    if (pp[i].group >= 0) net->group_at[pp[i].group + 1]++;
  for (int g = 0; g < ng; g++) net->group_at[g + 1] += net->group_at[g];
  int nlinks = 0;
  for (size_t i = 0; i < np; i++) {
    if (pp[i].group < 0) continue;
    for (int k = 0; k < pp[i].nlinks; k++) {
      size_t id = (size_t)pp[i].link[k];
      if (dense[id] < 0) dense[id] = nlinks++;
      pp[i].link[k] = dense[id];
    }
  }
  /* parent is spent: it becomes each group's next free place in group_pair. */
  for (int g = 0; g < ng; g++) parent[g] = net->group_at[g];
  for (size_t i = 0; i < np; i++)
    if (pp[i].group >= 0) net->group_pair[parent[pp[i].group]++] = i;
  int G = s->gpus_per_node;
  for (int g = 0; g < ng; g++) {
    const platform_pair *a = &pp[net->group_pair[net->group_at[g]]];
    for (size_t j = net->group_at[g]; j < net->group_at[g + 1]; j++) {
      const platform_pair *b = &pp[net->group_pair[j]];
      if (b->src / G != a->src / G) net->one_node = 0;
    }
  }
  if (!(net->link_Bps = malloc((nlinks ? (size_t)nlinks : 1) * sizeof *net->link_Bps))) goto nomem;
  for (size_t id = 0; id < L.nlinks; id++)
    if (dense[id] >= 0) net->link_Bps[dense[id]] = link_Bps(&L, id);
  free(owner);
  free(parent);
  free(dense);
  layout_free(&L);
  net->pairs = pp;
  net->npairs = np;
  net->ngroups = ng;
  net->nlinks = nlinks;
  net->exclusive = ng == 0;
  return ERR_OK;
nomem:
  free(pp);
  free(owner);
  free(parent);
  free(dense);
  layout_free(&L);
  platform_net_free(net);
  return err_set(e, ERR_NOMEM, "out of memory");
}
