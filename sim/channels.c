#include "channels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STEP_BUDGET 2000000L /* DFS steps per candidate bandwidth */
#define TOL 1e-9

typedef struct {
  const channels_spec *s;
  int G;
  double speed;
  double *rem_pair;           /* (G x G) what is left of each directed link (pair graphs only:
                                 switched nodes need no search) */
  double rem_nic[64];
  int *cur;                   /* (CHANNELS_MAX x G) the channels being built */
  int cur_nic[CHANNELS_MAX];
  unsigned char *visited;     /* (CHANNELS_MAX x G) per channel: GPUs already on its ring */
  int *best;                  /* (CHANNELS_MAX x G) */
  int best_nic[CHANNELS_MAX];
  int best_count;
  int bound;
  long steps;
  int stop;                   /* the bound is reached or the budget spent */
} search_state;

static int is_near(const channels_spec *s, int k, int g) { return !s->near || s->near[k * s->gpus + g]; }

/* NIC k is near some GPU in use: NCCL uses it (not the others: nearer paths give it channels). */
static int nic_in_use(const channels_spec *s, int k) {
  for (int g = 0; g < s->gpus; g++)
    if (is_near(s, k, g)) return 1;
  return 0;
}

static int fits(double rem, double want) { return rem >= want * (1 - TOL); }

static int edge_ok(const search_state *st, int u, int v) { return fits(st->rem_pair[u * st->G + v], st->speed); }

static void edge_take(search_state *st, int u, int v, double amount) { st->rem_pair[u * st->G + v] -= amount; }

static void set_search(search_state *st, int depth);

/* Extends channel `depth` from position pos (order[pos - 1] = u). `gt`: the channel is already
 * lexicographically after the previous one (channels are kept in nondecreasing order, so each set
 * is tried once). */
static void ring_dfs(search_state *st, int depth, int pos, int u, int gt) {
  if (st->stop) return;
  if (++st->steps > STEP_BUDGET) {
    st->stop = 1;
    return;
  }
  int G = st->G, *ord = st->cur + (size_t)depth * G;
  unsigned char *visited = st->visited + (size_t)depth * G;
  const int *prev = depth > 0 ? st->cur + (size_t)(depth - 1) * G : NULL;
  if (pos == G) {
    if (st->s->nodes == 1) {
      if (!edge_ok(st, u, ord[0])) return;
      edge_take(st, u, ord[0], st->speed);
      set_search(st, depth + 1);
      edge_take(st, u, ord[0], -st->speed);
    } else if (is_near(st->s, st->cur_nic[depth], u)) {
      set_search(st, depth + 1);
    }
    return;
  }
  for (int v = 0; v < G && !st->stop; v++) {
    if (visited[v] || !edge_ok(st, u, v)) continue;
    if (prev && !gt && v < prev[pos]) continue;
    ord[pos] = v;
    visited[v] = 1;
    edge_take(st, u, v, st->speed);
    ring_dfs(st, depth, pos + 1, v, gt || (prev && v > prev[pos]));
    edge_take(st, u, v, -st->speed);
    visited[v] = 0;
  }
}

static void set_search(search_state *st, int depth) {
  int G = st->G;
  if (depth > st->best_count) {
    st->best_count = depth;
    memcpy(st->best, st->cur, (size_t)depth * G * sizeof *st->best);
    memcpy(st->best_nic, st->cur_nic, sizeof st->best_nic);
  }
  if (st->best_count >= st->bound) st->stop = 1;
  if (st->stop || depth == CHANNELS_MAX) return;
  int *ord = st->cur + (size_t)depth * G;
  unsigned char *visited = st->visited + (size_t)depth * G;
  const int *prev = depth > 0 ? st->cur + (size_t)(depth - 1) * G : NULL;
  if (st->s->nodes == 1) {
    ord[0] = 0; /* a ring may start anywhere: at GPU 0 */
    visited[0] = 1;
    st->cur_nic[depth] = -1;
    ring_dfs(st, depth, 1, 0, 0);
    visited[0] = 0;
    return;
  }
  int kmin = prev ? st->cur_nic[depth - 1] : 0;
  for (int k = kmin; k < st->s->nics && !st->stop; k++) {
    if (!fits(st->rem_nic[k], st->speed)) continue;
    st->rem_nic[k] -= st->speed; /* its uplink carries the ring out, its downlink the ring in */
    st->cur_nic[depth] = k;
    int same = prev && k == st->cur_nic[depth - 1];
    for (int g = 0; g < G && !st->stop; g++) {
      if (!is_near(st->s, k, g) || (same && g < prev[0])) continue;
      ord[0] = g;
      visited[g] = 1;
      ring_dfs(st, depth, 1, g, !same || g > prev[0]);
      visited[g] = 0;
    }
    st->rem_nic[k] += st->speed;
  }
}

/* At most how many channels of bandwidth s the node's links and NICs could carry. */
static int channel_bound(const channels_spec *s, int reach, double speed) {
  int G = s->gpus;
  double b = CHANNELS_MAX;
  if (G > 1) {
    for (int u = 0; u < G; u++) {
      double out = 0, in = 0;
      if (s->pair_Bps) {
        for (int v = 0; v < G; v++) {
          out += floor(s->pair_Bps[u * G + v] / speed + TOL);
          in += floor(s->pair_Bps[v * G + u] / speed + TOL);
        }
      } else {
        out = in = floor(s->gpu_Bps / speed + TOL);
      }
      b = fmin(b, fmin(out, in));
    }
  }
  if (s->nodes > 1) b = fmin(b, reach * floor(s->nic_Bps / speed + TOL));
  return (int)b;
}

static int cmp_desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Switched nodes: every order is as good as any other, so the channels are built directly, spread
 * over the NICs in turn, entering at the first GPU near the NIC and leaving from the second. */
static void switched_build(const channels_spec *s, double speed, int count, int *order, int *nic) {
  int G = s->gpus;
  for (int c = 0; c < count; c++) {
    int *ord = order + (size_t)c * G;
    int in = 0, out = G - 1;
    nic[c] = -1;
    if (s->nodes > 1) {
      int per = (int)floor(s->nic_Bps / speed + TOL), skip = c / per;
      for (int k = 0; k < s->nics; k++) {
        if (nic_in_use(s, k) && skip-- == 0) {
          nic[c] = k;
          break;
        }
      }
      int first = -1, second = -1;
      for (int g = 0; g < G; g++)
        if (is_near(s, nic[c], g)) {
          if (first < 0) first = g;
          else if (second < 0) second = g;
        }
      in = first;
      out = second >= 0 ? second : first;
    }
    int p = 0;
    ord[p++] = in;
    for (int g = 0; g < G; g++)
      if (g != in && g != out) ord[p++] = g;
    if (out != in) ord[p++] = out;
  }
}

int channels_search(const channels_spec *s, channels_t *out, err_t *e) {
  memset(out, 0, sizeof *out);
  int G = s->gpus;
  if (G < 1 || s->nodes < 1) return err_set(e, ERR_INPUT, "channels need at least one GPU and one node");
  if (s->nodes > 1 && (s->nics < 1 || s->nics > 64 || !(s->nic_Bps > 0)))
    return err_set(e, ERR_INPUT, "%d nodes need between 1 and 64 NICs of positive bandwidth", s->nodes);
  int reach = 0; /* NICs in use */
  for (int k = 0; s->nodes > 1 && k < s->nics; k++) reach += nic_in_use(s, k);
  if (s->nodes > 1 && reach == 0) return err_set(e, ERR_INPUT, "no NIC is near any of the %d GPUs in use", G);
  out->gpus = G;
  for (int c = 0; c < CHANNELS_MAX; c++) out->nic[c] = -1;
  if (G == 1 && s->nodes == 1) { /* nothing to communicate with */
    out->order = calloc(1, sizeof *out->order);
    out->pos = calloc(1, sizeof *out->pos);
    if (!out->order || !out->pos) goto nomem;
    out->count = 1;
    return ERR_OK;
  }
  if (G > 1 && !s->pair_Bps && !(s->gpu_Bps > 0)) return err_set(e, ERR_INPUT, "intra-node bandwidth must be positive");
  if (s->pair_Bps && G > 64) return err_set(e, ERR_INPUT, "GPU pairs describe at most 64 GPUs per node, not %d", G);

  /* What no set of channels can exceed: a GPU's links in and out, a node's NICs. NCCL stops
   * searching when it gets there. */
  double upper = INFINITY;
  if (G > 1)
    for (int u = 0; u < G; u++) {
      double o = 0, in = 0;
      for (int v = 0; v < G; v++) {
        o += s->pair_Bps ? s->pair_Bps[u * G + v] : 0;
        in += s->pair_Bps ? s->pair_Bps[v * G + u] : 0;
      }
      if (!s->pair_Bps) o = in = s->gpu_Bps;
      upper = fmin(upper, fmin(o, in));
    }
  if (s->nodes > 1) upper = fmin(upper, reach * s->nic_Bps);

  /* Candidate per-channel bandwidths: every link capacity divided by 1..4, highest first. */
  double cand[4 * (64 * 64 + 2)];
  int nc = 0;
  if (G > 1 && s->pair_Bps) {
    for (int i = 0; i < G * G; i++)
      if (s->pair_Bps[i] > 0)
        for (int k = 1; k <= 4; k++) cand[nc++] = s->pair_Bps[i] / k;
  } else if (G > 1) {
    for (int k = 1; k <= 4; k++) cand[nc++] = s->gpu_Bps / k;
  }
  if (s->nodes > 1)
    for (int k = 1; k <= 4; k++) cand[nc++] = s->nic_Bps / k;
  qsort(cand, (size_t)nc, sizeof *cand, cmp_desc);

  search_state st;
  memset(&st, 0, sizeof st);
  st.s = s;
  st.G = G;
  size_t cells = (size_t)CHANNELS_MAX * (size_t)G;
  st.cur = calloc(cells, sizeof *st.cur);
  st.best = calloc(cells, sizeof *st.best);
  st.visited = calloc(cells, 1);
  out->order = calloc(cells, sizeof *out->order);
  if (s->pair_Bps) st.rem_pair = malloc((size_t)G * G * sizeof *st.rem_pair);
  int ok = st.cur && st.best && st.visited && out->order && (!s->pair_Bps || st.rem_pair);
  double best_total = 0;
  for (int i = 0; ok && i < nc; i++) {
    double speed = cand[i];
    if (i > 0 && speed > cand[i - 1] * (1 - TOL)) continue; /* the same value again */
    if (out->count && speed < 0.49 * out->speed_Bps) break;  /* NCCL stops lowering here */
    int bound = channel_bound(s, reach, speed), count;
    if (bound < 1) continue;
    if (!s->pair_Bps) {
      count = bound;
      switched_build(s, speed, count, st.best, st.best_nic);
    } else {
      st.speed = speed;
      memcpy(st.rem_pair, s->pair_Bps, (size_t)G * G * sizeof *st.rem_pair);
      for (int k = 0; k < s->nics && k < 64; k++) st.rem_nic[k] = s->nic_Bps;
      st.best_count = 0;
      st.bound = bound;
      st.steps = 0;
      st.stop = 0;
      set_search(&st, 0);
      count = st.best_count;
      if (st.steps > STEP_BUDGET) out->exhausted = 1;
    }
    if (count > 0 && count * speed > best_total * (1 + TOL)) {
      best_total = count * speed;
      out->count = count;
      out->speed_Bps = speed;
      memcpy(out->order, st.best, (size_t)count * G * sizeof *out->order);
      for (int c = 0; c < count; c++) out->nic[c] = s->nodes > 1 ? st.best_nic[c] : -1;
    }
    if (best_total >= upper * (1 - TOL)) break;
  }
  free(st.cur);
  free(st.best);
  free(st.visited);
  free(st.rem_pair);
  if (!ok) goto nomem;
  if (out->count == 0) {
    channels_free(out);
    if (s->nodes == 1) return err_set(e, ERR_INPUT, "no ring passes through all %d GPUs over the node's links", G);
    return err_set(e, ERR_INPUT, "no ring passes through all %d GPUs entering and leaving the node through the same NIC", G);
  }
  out->pos = malloc((size_t)out->count * G * sizeof *out->pos);
  if (!out->pos) goto nomem;
  for (int c = 0; c < out->count; c++)
    for (int p = 0; p < G; p++) out->pos[c * G + out->order[c * G + p]] = p;
  unsigned long long used = 0;
  for (int c = 0; c < out->count; c++)
    if (out->nic[c] >= 0) used |= 1ull << out->nic[c];
  out->nics_used = __builtin_popcountll(used);
  return ERR_OK;
nomem:
  channels_free(out);
  return err_set(e, ERR_NOMEM, "out of memory");
}

int channels_spec_from_topo(const topo_t *t, int gpus, int nodes, double link_Bps, double nic_Bps, channels_spec *s,
                            double **pair, unsigned char **near, err_t *e) {
  *pair = NULL;
  *near = NULL;
  memset(s, 0, sizeof *s);
  if ((t->npairs || t->has_near) && gpus > t->gpus_per_node)
    return err_set(e, ERR_INPUT, "%s: the topology's %s describe %d GPUs per node, fewer than the %d asked for", t->path,
                   t->npairs ? "pairs" : "nic_near lines", t->gpus_per_node, gpus);
  if (nodes > 1 && !t->has_nic)
    return err_set(e, ERR_INPUT, "%s: topology '%s' has no NIC ('nic none'), so it cannot span %d nodes", t->path,
                   t->name, nodes);
  s->gpus = gpus;
  s->nodes = nodes;
  if (gpus > 1 && t->npairs) {
    *pair = calloc((size_t)gpus * (size_t)gpus, sizeof **pair);
    if (!*pair) return err_set(e, ERR_NOMEM, "out of memory");
    for (int u = 0; u < gpus; u++)
      for (int v = 0; v < gpus; v++) (*pair)[u * gpus + v] = topo_pair_links(t, u, v) * link_Bps;
    s->pair_Bps = *pair;
  } else if (gpus > 1) {
    s->gpu_Bps = link_Bps * t->intra_links;
  }
  if (nodes > 1) {
    s->nics = t->nic_count;
    s->nic_Bps = nic_Bps;
    if (t->has_near) {
      *near = malloc((size_t)t->nic_count * (size_t)gpus);
      if (!*near) {
        free(*pair);
        *pair = NULL;
        return err_set(e, ERR_NOMEM, "out of memory");
      }
      for (int k = 0; k < t->nic_count; k++)
        for (int g = 0; g < gpus; g++) (*near)[k * gpus + g] = t->near[k][g];
      s->near = *near;
    }
  }
  return ERR_OK;
}

int channels_link_units(const topo_t *t, int gpus, int nodes, double *units, err_t *e) {
  /* Several nodes: the NICs are the bottleneck the measurement sees; links inside a node are made
   * wide enough never to limit a channel. */
  double link = nodes > 1 ? 1e6 : 1.0;
  channels_spec s;
  double *pair;
  unsigned char *near;
  channels_t ch;
  int rc = channels_spec_from_topo(t, gpus, nodes, link, 1.0, &s, &pair, &near, e);
  if (!rc) rc = channels_search(&s, &ch, e);
  if (!rc) {
    *units = channels_bw_Bps(&ch);
    channels_free(&ch);
  }
  free(pair);
  free(near);
  return rc;
}

int channels_next(const channels_t *ch, int nodes, int c, int rank) {
  int G = ch->gpus, node = rank / G, p = ch->pos[c * G + rank % G];
  const int *ord = ch->order + (size_t)c * G;
  if (p < G - 1) return node * G + ord[p + 1];
  return (node + 1) % nodes * G + ord[0];
}

double channels_bw_Bps(const channels_t *ch) { return ch->count * ch->speed_Bps; }

void channels_free(channels_t *ch) {
  if (!ch) return;
  free(ch->order);
  free(ch->pos);
  ch->order = ch->pos = NULL;
}
