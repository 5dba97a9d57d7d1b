/* platform_build: a platform's layout (sim/platform.h) built in SimGrid's engine
 * (platform_build, sim/platform.h); part of the events module (sim/events.h). */
#include <stdio.h>
#include <stdlib.h>

#include "platform.h"
#include "platform_s4u.h"

static int fail(err_t *e) { return err_set(e, ERR_SIM, "%s", psg_error()); }

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
    if (!(L->link[layout_nic_up(L, m, k)] = psg_link_new(z, name, L->members[k] * s->nic_Bps, s->nic_lat_s, 0))) return fail(e);
    snprintf(name, sizeof name, "nicdown%d_%d", m, k);
    if (!(L->link[layout_nic_down(L, m, k)] = psg_link_new(z, name, L->members[k] * s->nic_Bps, 0, 0))) return fail(e);
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
    int nl = layout_route_links(L, src, dst, L->use[i].nic, ids);
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
  if (N > 1 && s->backbone_bw_Bps > 0 && !(backbone = L->link[layout_backbone(L)] = psg_link_new(root, "backbone", s->backbone_bw_Bps, 0, 0)))
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
      if (L->exit_nic[u] >= 0 && psg_route(z, gpu, router, NULL, NULL, &L->link[layout_nic_up(L, m, L->exit_nic[u])], 1)) return fail(e);
      if (L->entry_nic[u] >= 0 && psg_route(z, router, gpu, NULL, NULL, &L->link[layout_nic_down(L, m, L->entry_nic[u])], 1))
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

int platform_build(const platform_spec *s, sg_host_t *hosts, err_t *e) {
  layout L;
  int rc = layout_init(&L, s, e);
  if (rc) return rc;
  if (!(L.link = calloc(L.nlinks, sizeof *L.link))) rc = err_set(e, ERR_NOMEM, "out of memory");
  if (!rc) rc = build(&L, hosts, e);
  layout_free(&L);
  return rc;
}

