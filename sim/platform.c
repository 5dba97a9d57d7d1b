#include "platform.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>


static int bad(double x) { return !(x >= 0) || !isfinite(x); }

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

size_t layout_nic_up(const layout *L, int node, int k) { return (size_t)L->n * L->s->gpus_per_node + (size_t)node * 64 + (size_t)k; }
size_t layout_nic_down(const layout *L, int node, int k) { return layout_nic_up(L, L->s->nodes + node, k); }
size_t layout_backbone(const layout *L) { return layout_nic_up(L, 2 * L->s->nodes, 0); }

/* (platform.h) */
int layout_route_links(layout *L, int src, int dst, int nic, size_t ids[3]) {
  const platform_spec *s = L->s;
  int G = s->gpus_per_node, node = src / G, next_node = dst / G, nl = 0;
  if (node == next_node && s->pair_Bps) {
    ids[nl++] = (size_t)src * G + (size_t)(dst % G);
  } else if (node == next_node) {
    ids[nl++] = (size_t)src * G;
    ids[nl++] = (size_t)dst * G + 1;
  } else {
    int k = find(L->parent, nic);
    ids[nl++] = layout_nic_up(L, node, k);
    if (s->backbone_bw_Bps > 0) ids[nl++] = layout_backbone(L);
    ids[nl++] = layout_nic_down(L, next_node, k);
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
  if (id == layout_backbone(L)) return s->nodes > 1 ? s->backbone_bw_Bps : 0;
  int k = (int)((id - gpu_links) % 64);
  return s->nodes > 1 && k < s->nics ? L->members[k] * s->nic_Bps : 0;
}

void layout_free(layout *L) {
  free(L->use);
  free(L->exit_nic);
  free(L->entry_nic);
  free(L->link);
}

/* (platform.h) */
int layout_init(layout *L, const platform_spec *s, err_t *e) {
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
    int nl = layout_route_links(&L, src, dst, L.use[i].nic, ids);
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
