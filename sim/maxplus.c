#include "maxplus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "platform.h"

/* Whether a collective of p is composed of phases (their rings are not the pairs the closed form
 * times: the events play them). */
static int phased(const plan_t *p) {
  for (int b = 0; b < p->prog.ncoll; b++)
    if (p->coll[b].nphase) return 1;
  return 0;
}

int maxplus_applies(const plan_t *p) {
  /* Links without latency (the plan's: collectives wait NCCL's latency term instead), so that a
   * flow takes its bytes over its rate and nothing else. */
  int no_lat = p->platform.intra_lat_s == 0 && p->platform.nic_lat_s == 0;
  /* One NCCL stream: collectives of two streams at once share links (FSDP's), which the events play.
   * Any number of simulated ranks: every rank of a full simulation, the 2 nodes standing for all by
   * symmetry, one node, one GPU (no NCCL stream); tests/sim/test_engine.c checks each against the
   * events. */
  return no_lat && p->prog.nstreams <= 2 && !phased(p) && p->fidelity == SIM_FIDELITY_FLOW && !p->record_spans &&
         !p->shares_compute && !(p->load_s > 0);
}

/* A sleep of s from t, as the actors take it (none unless positive). */
static double after(double t, double s) { return s > 0 ? t + s : t; }

/* The evaluation's state: every rank's streams (n x ns), events (n x nevents), and the values that
 * outlive the compute stream's first run of an iteration (n x nlate). */
typedef struct {
  const plan_t *p;
  const platform_net *net;
  const platform_pair *pairs;
  size_t npairs;
  /* Groups of pairs sharing links (group_end): each link's flows when all its pairs run (n_flows),
   * and per pair of the group being played its start, bytes left, rate and end; per link what is
   * left of it and the flows not yet given a rate. */
  double *link_flows, *link_rem, *link_cnt; /* (net->nlinks) */
  double *least;                            /* (npairs) a grouped pair's least max-min rate */
  double *g_start, *g_left, *g_rate, *g_end; /* (largest group) */
  record_t *rec;
  int n, ns, ne, nlate, it, sync, last;
  int *pc, *posted;          /* (n x ns) the next instruction; at a COLL whose post is made */
  double *clock;             /* (n x ns) */
  double *ev_at;             /* (n x ne) */
  int *ev_it;                /* (n x ne) the iteration in which it was recorded */
  double *late;              /* (n x nlate) */
  int *late_map;             /* (nslots) a slot's place in late, or -1 */
  double *scratch;           /* (nslots) the rank whose compute stream runs first (cur) */
  int cur;
  double *it0, *t0, *copied, *taken; /* (n) */
  /* Work sharing the GPU (sim/program.h): each rank's collectives resolved and not yet behind its
   * compute stream, a ring of (start, end, sm, hbm) growing as needed; where the event of a stream's
   * WAIT is recorded on the compute stream (-1: elsewhere). */
  double **live;             /* (n) rings of live_cap x 4 */
  int *live_head, *live_n, *live_cap; /* (n) */
  int *ev_rec_pc;            /* (ne) */
} mp_t;

static void mp_free(mp_t *m) {
  for (int r = 0; m->live && r < m->n; r++) free(m->live[r]);
  void *a[] = {m->pc,  m->posted, m->clock,  m->ev_at,  m->ev_it, m->late,   m->late_map, m->scratch,
               m->it0, m->t0,     m->copied, m->taken, m->live,  m->live_head, m->live_n, m->live_cap, m->ev_rec_pc,
               m->link_flows, m->least, m->link_rem, m->link_cnt, m->g_start, m->g_left, m->g_rate, m->g_end};
  for (size_t i = 0; i < sizeof a / sizeof *a; i++) free(a[i]);
}

static int mp_alloc(mp_t *m, const plan_t *p) {
  const prog_t *g = &p->prog;
  size_t n = (size_t)p->sim_ranks, ns = (size_t)g->nstreams, ne = (size_t)g->nevents + 1;
  m->n = (int)n;
  m->ns = (int)ns;
  m->ne = (int)ne;
  m->late_map = malloc((size_t)g->nslots * sizeof *m->late_map);
  if (!m->late_map) return -1;
  /* Late: the stats, every slot of a stream other than the compute stream, and the compute
   * stream's from its first instruction that may block on another stream (a wait, or work sharing
   * the GPU) on: it may run those after another rank's values were computed. */
  for (int k = 0; k < g->nslots; k++) m->late_map[k] = k < PROG_NSTATS ? 1 : 0;
  for (int st = 0; st < g->nstreams; st++) {
    int late = st > 0;
    for (int i = 0; i < g->streams[st].n; i++) {
      const prog_instr *in = &g->streams[st].ins[i];
      late |= in->op == PROG_WAIT || in->op == PROG_COLL || (in->op == PROG_COMPUTE && in->shares);
      if (!late) continue;
      int ks[] = {in->dur, in->lag, in->op == PROG_TAIL ? in->a : -1, in->op == PROG_TAIL ? in->b : -1};
      for (size_t j = 0; j < sizeof ks / sizeof *ks; j++)
        if (ks[j] >= 0) m->late_map[ks[j]] = 1;
    }
  }
  for (int k = 0; k < g->nslots; k++) m->late_map[k] = m->late_map[k] ? m->nlate++ : -1;
  m->pc = calloc(n * ns, sizeof *m->pc);
  m->posted = calloc(n * ns, sizeof *m->posted);
  m->clock = calloc(n * ns, sizeof *m->clock);
  m->ev_at = calloc(n * ne, sizeof *m->ev_at);
  m->ev_it = malloc(n * ne * sizeof *m->ev_it);
  m->late = calloc(n * (size_t)m->nlate + 1, sizeof *m->late);
  m->scratch = calloc((size_t)g->nslots, sizeof *m->scratch);
  m->it0 = calloc(n, sizeof(double));
  m->t0 = calloc(n, sizeof(double));
  m->copied = calloc(n, sizeof(double));
  m->taken = calloc(n, sizeof(double));
  m->live = calloc(n, sizeof *m->live);
  m->live_head = calloc(n, sizeof(int));
  m->live_n = calloc(n, sizeof(int));
  m->live_cap = calloc(n, sizeof(int));
  m->ev_rec_pc = malloc(ne * sizeof(int));
  if (!m->live || !m->live_head || !m->live_n || !m->live_cap || !m->ev_rec_pc) return -1;
  const platform_net *net = m->net;
  size_t nl = (size_t)net->nlinks + 1, big = 1;
  for (int gr = 0; gr < net->ngroups; gr++)
    if (net->group_at[gr + 1] - net->group_at[gr] > big) big = net->group_at[gr + 1] - net->group_at[gr];
  m->link_flows = calloc(nl, sizeof(double));
  m->link_rem = calloc(nl, sizeof(double));
  m->link_cnt = calloc(nl, sizeof(double));
  m->g_start = calloc(big, sizeof(double));
  m->g_left = calloc(big, sizeof(double));
  m->g_rate = calloc(big, sizeof(double));
  m->g_end = calloc(big, sizeof(double));
  if (!m->link_flows || !m->link_rem || !m->link_cnt || !m->g_start || !m->g_left || !m->g_rate || !m->g_end) return -1;
  if (!(m->least = calloc(m->npairs + 1, sizeof(double)))) return -1;
  for (size_t i = 0; i < m->npairs; i++)
    for (int k = 0; m->pairs[i].group >= 0 && k < m->pairs[i].nlinks; k++) m->link_flows[m->pairs[i].link[k]] += m->pairs[i].flows;
  for (size_t i = 0; i < m->npairs; i++) {
    const platform_pair *q = &m->pairs[i];
    m->least[i] = INFINITY;
    for (int k = 0; q->group >= 0 && k < q->nlinks; k++) {
      double r = net->link_Bps[q->link[k]] / m->link_flows[q->link[k]];
      if (r < m->least[i]) m->least[i] = r;
    }
  }
  for (size_t v = 0; v < ne; v++) m->ev_rec_pc[v] = -1;
  for (int i = 0; i < g->streams[0].n; i++)
    if (g->streams[0].ins[i].op == PROG_RECORD) m->ev_rec_pc[g->streams[0].ins[i].ev] = i;
  if (!m->pc || !m->posted || !m->clock || !m->ev_at || !m->ev_it || !m->late || !m->scratch || !m->it0 || !m->t0 || !m->copied ||
      !m->taken)
    return -1;
  for (size_t i = 0; i < n * ne; i++) m->ev_it[i] = -1;
  return 0;
}

/* Rank r's value in slot k: the scratch while its compute stream runs first, else the late copy. */
static double slot(const mp_t *m, int r, int k) {
  if (r == m->cur) return m->scratch[k];
  return m->late[(size_t)r * (size_t)m->nlate + (size_t)m->late_map[k]];
}

static double dur(const mp_t *m, int r, const prog_instr *in) { return in->dur >= 0 ? slot(m, r, in->dur) : in->dur_s; }

/* The training loop's input of iteration it on rank r (sim/events.c's get_input without workers'
 * loading, which the closed form leaves to the events). */
static double input(mp_t *m, int r, double now) {
  const plan_t *p = m->p;
  double it0 = now, cw;
  if (p->prefetch) {
    /* The side stream copies batch it once it copied the previous one and the loop took that (one
     * GPU buffer); the loop takes it when both it and the copy are there. */
    double start = m->it == 0 ? 0 : (m->copied[r] > m->taken[r] ? m->copied[r] : m->taken[r]);
    m->copied[r] = after(start, p->copy_s);
    if (m->copied[r] > now) now = m->copied[r];
    m->taken[r] = now;
    cw = now - it0;
  } else {
    now = after(now, p->copy_s);
    cw = p->copy_s;
  }
  if (r == 0) {
    m->rec->load_wait[m->it] = 0;
    m->rec->copy_wait[m->it] = cw;
  }
  return now;
}

/* PROG_TAIL on rank r from d0 (sim/events.c's tail). */
static double tail(mp_t *m, int r, const prog_instr *in, double d0) {
  double end = d0 + slot(m, r, in->a), t0 = m->t0[r];
  if (t0 + slot(m, r, in->b) > end) end = t0 + slot(m, r, in->b);
  double cb = m->sync ? dur(m, r, in) : 0;
  if (cb > end - d0) cb = end - d0;
  double now = after(d0, cb);
  now = after(now, end - now);
  /* The stats are the first PROG_NSTATS slots, and the first late ones too (mp_alloc). */
  const double *stats = r == m->cur ? m->scratch : m->late + (size_t)r * (size_t)m->nlate;
  record_tail(m->p, m->rec, r, m->it, m->sync, stats, t0, d0, end, now, cb);
  return now;
}

/* Whether rank r's NCCL streams cannot start a collective before its compute stream, at instruction
 * pc, moves on: each has ended its iteration or waits for an event the compute stream records later
 * (sim/program.h: collectives start only after their WAIT). */
static int quiet(const mp_t *m, int r, int pc) {
  const prog_t *g = &m->p->prog;
  for (int st = 1; st < m->ns; st++) {
    size_t k = (size_t)r * (size_t)m->ns + (size_t)st;
    if (m->pc[k] >= g->streams[st].n) continue;
    const prog_instr *in = &g->streams[st].ins[m->pc[k]];
    if (in->op != PROG_WAIT || m->posted[k] || m->ev_rec_pc[in->ev] <= pc) return 0;
  }
  return 1;
}

/* Work of w full-rate seconds from `now` on rank r sharing the GPU with its live collectives (the
 * engine's run_shared, in closed form): piecewise at the rate between their starts and ends. */
static double shared_end(mp_t *m, int r, const prog_instr *in, double now, double w) {
  double *L = m->live[r];
  int h = m->live_head[r], cap = m->live_cap[r];
  /* Drop the collectives behind the stream. */
  while (m->live_n[r] > 0 && L[4 * h + 1] <= now) {
    h = m->live_head[r] = (h + 1) % cap;
    m->live_n[r]--;
  }
  double t = now, left = w;
  while (left > 0) {
    double sm = 0, hbm = 0, next = INFINITY;
    for (int j = 0; j < m->live_n[r]; j++) {
      const double *c = L + 4 * ((h + j) % cap);
      if (c[0] <= t && t < c[1]) {
        sm += c[2];
        hbm += c[3];
        if (c[1] < next) next = c[1];
      } else if (c[0] > t && c[0] < next) {
        next = c[0];
      }
    }
    double rate = prog_rate(in, sm, hbm);
    if (t + left / rate <= next) return t + left / rate;
    left -= (next - t) * rate;
    t = next;
  }
  return t;
}

/* Runs stream st of rank r until it waits for an event not yet recorded, posts a collective, or
 * ends its iteration. Returns whether it moved. */
static int advance(mp_t *m, int r, int st) {
  const prog_stream *ps = &m->p->prog.streams[st];
  size_t k = (size_t)r * (size_t)m->ns + (size_t)st;
  int moved = 0;
  while (m->pc[k] < ps->n) {
    const prog_instr *in = &ps->ins[m->pc[k]];
    double now = m->clock[k];
    if (!in->sync || m->sync) {
      size_t ev = (size_t)r * (size_t)m->ne + (size_t)(in->ev >= 0 ? in->ev : 0);
      switch (in->op) {
      case PROG_BEGIN:
        m->it0[r] = now;
        if (r == 0) m->rec->iter_start[m->it] = now;
        break;
      case PROG_INPUT:
        now = input(m, r, now);
        break;
      case PROG_SLEEP:
        now = after(now, dur(m, r, in));
        break;
      case PROG_COMPUTE: {
        double d = dur(m, r, in);
        if (in->shares && d > 0) {
          /* Its rate depends on the collectives beside it: every one that may start before it ends
           * must be resolved first. */
          if (!quiet(m, r, m->pc[k])) return moved;
          double end = shared_end(m, r, in, now, d);
          if (r == 0) m->rec->slowed[m->it] += end - now - d;
          now = end;
        } else {
          now = after(now, d);
        }
        break;
      }
      case PROG_MARK:
        m->t0[r] = now;
        break;
      case PROG_RECORD:
        m->ev_at[ev] = now;
        m->ev_it[ev] = m->it;
        break;
      case PROG_WAIT:
        if (m->ev_it[ev] != m->it) return moved;
        if (m->ev_at[ev] > now) now = m->ev_at[ev];
        if (in->lag >= 0 && m->ev_at[ev] + slot(m, r, in->lag) > now) now = m->ev_at[ev] + slot(m, r, in->lag);
        break;
      case PROG_COLL:
        m->posted[k] = 1; /* resolve() moves it on */
        return moved;
      case PROG_TAKE_CORES:
      case PROG_GIVE_CORES:
        break; /* maxplus_applies leaves plans whose collectives share the cores to the events */
      case PROG_TAIL:
        now = tail(m, r, in, now);
        break;
      }
    }
    m->clock[k] = now;
    if (r == 0 && m->last) m->rec->at[prog_at_index(&m->p->prog, st, m->pc[k])] = now;
    m->pc[k]++;
    moved = 1;
  }
  return moved;
}

/* Doubles rank r's ring of live collectives, in order from its head. -1: out of memory. */
static int live_grow(mp_t *m, int r) {
  int cap = m->live_cap[r], ncap = cap ? 2 * cap : 4;
  double *L = malloc((size_t)ncap * 4 * sizeof *L);
  if (!L) return -1;
  for (int j = 0; j < m->live_n[r]; j++) memcpy(L + 4 * j, m->live[r] + 4 * ((m->live_head[r] + j) % cap), 4 * sizeof *L);
  free(m->live[r]);
  m->live[r] = L;
  m->live_head[r] = 0;
  m->live_cap[r] = ncap;
  return 0;
}

/* The latest of `end` and the ends of group gr's flows, each pair's flows (edge bytes each) starting
 * when both its ranks have posted on stream st: the max-min fair sharing SimGrid's network model
 * gives flows on shared links (docs/simulation.md, "Switched nodes"), played from start to start and
 * end to end. Between two of those moments the rates are constant: progressive filling raises every
 * running flow's rate alike, and a link that fills fixes the rate of the flows crossing it. The
 * group is skipped where it cannot end after `end`: max-min gives every flow at least, on one of
 * its links, the link's bandwidth over all the flows crossing it (a link's level only rises as it
 * fills), so no pair ends after its start + edge over that rate. */
static double group_end(mp_t *m, int gr, int st, double edge, double end) {
  const platform_net *net = m->net;
  size_t ns = (size_t)m->ns, at = net->group_at[gr];
  int k = (int)(net->group_at[gr + 1] - at);
  const size_t *gp = net->group_pair + at;
  double latest = end, t = INFINITY;
  for (int i = 0; i < k; i++) {
    const platform_pair *q = &m->pairs[gp[i]];
    double a = m->clock[(size_t)q->src * ns + (size_t)st], z = m->clock[(size_t)q->dst * ns + (size_t)st];
    m->g_start[i] = a > z ? a : z;
    double most = m->g_start[i] + edge / m->least[gp[i]];
    if (most > latest) latest = most;
    m->g_left[i] = edge;
    m->g_end[i] = -1;
    if (m->g_start[i] < t) t = m->g_start[i];
  }
  if (latest <= end) return end; /* no pair of the group can end last */
  for (int running = k; running > 0;) {
    /* The rates from t: progressive filling over the pairs started and not ended. */
    for (int i = 0; i < k; i++) {
      const platform_pair *q = &m->pairs[gp[i]];
      for (int l = 0; l < q->nlinks; l++) m->link_rem[q->link[l]] = net->link_Bps[q->link[l]], m->link_cnt[q->link[l]] = 0;
    }
    for (int i = 0; i < k; i++) {
      const platform_pair *q = &m->pairs[gp[i]];
      m->g_rate[i] = m->g_end[i] < 0 && m->g_start[i] <= t ? -1 : 0; /* -1: running, no rate yet */
      for (int l = 0; m->g_rate[i] < 0 && l < q->nlinks; l++) m->link_cnt[q->link[l]] += q->flows;
    }
    for (;;) {
      int full = -1;
      double level = INFINITY;
      for (int i = 0; i < k; i++) {
        const platform_pair *q = &m->pairs[gp[i]];
        for (int l = 0; m->g_rate[i] < 0 && l < q->nlinks; l++) {
          int j = q->link[l];
          double lv = m->link_rem[j] / m->link_cnt[j];
          if (lv < level) level = lv, full = j;
        }
      }
      if (full < 0) break;
      if (level < 0) level = 0;
      for (int i = 0; i < k; i++) {
        const platform_pair *q = &m->pairs[gp[i]];
        int crosses = 0;
        for (int l = 0; m->g_rate[i] < 0 && l < q->nlinks; l++) crosses |= q->link[l] == full;
        if (!crosses) continue;
        m->g_rate[i] = level;
        for (int l = 0; l < q->nlinks; l++) {
          m->link_rem[q->link[l]] -= q->flows * level;
          m->link_cnt[q->link[l]] -= q->flows;
        }
      }
    }
    /* The next moment a pair starts or ends; the pairs ending then end. */
    double next = INFINITY;
    for (int i = 0; i < k; i++) {
      if (m->g_end[i] >= 0) continue;
      double at = m->g_start[i] > t ? m->g_start[i] : m->g_rate[i] > 0 ? t + m->g_left[i] / m->g_rate[i] : INFINITY;
      if (at < next) next = at;
    }
    if (next == INFINITY) return INFINITY; /* no rate: cannot happen with min_Bps > 0 (maxplus_run) */
    for (int i = 0; i < k; i++) {
      if (m->g_end[i] >= 0 || m->g_start[i] > t || !(m->g_rate[i] > 0)) continue;
      if (t + m->g_left[i] / m->g_rate[i] <= next) {
        m->g_end[i] = next;
        running--;
        if (next > end) end = next;
      } else {
        m->g_left[i] -= m->g_rate[i] * (next - t);
      }
    }
    t = next;
  }
  return end;
}

/* When every rank's stream st has posted its collective: it ends for all at once, at the latest
 * pair's (both ends posted + edge bytes over the pair's rate) plus NCCL's latency term (the engine's
 * barrier). Returns whether it did; -1 when out of memory. */
static int resolve(mp_t *m, int st) {
  const plan_t *p = m->p;
  size_t ns = (size_t)m->ns;
  for (int r = 0; r < m->n; r++)
    if (!m->posted[(size_t)r * ns + (size_t)st]) return 0;
  const prog_instr *in = &p->prog.streams[st].ins[m->pc[st]];
  const plan_coll *pc = &p->coll[in->coll];
  double end = 0;
  for (size_t i = 0; i < m->npairs; i++) {
    /* A pair alone on its links ends at this; one sharing them, no earlier. */
    double a = m->clock[(size_t)m->pairs[i].src * ns + (size_t)st], z = m->clock[(size_t)m->pairs[i].dst * ns + (size_t)st];
    double t = (a > z ? a : z) + (double)pc->edge_bytes * m->pairs[i].flows / m->pairs[i].min_Bps;
    if (t > end) end = t;
  }
  for (int gr = 0; gr < m->net->ngroups; gr++) end = group_end(m, gr, st, (double)pc->edge_bytes, end);
  double done = after(end, pc->lat_s);
  m->rec->messages += (long)m->n * p->ch.count;
  for (int r = 0; r < m->n; r++) {
    size_t k = (size_t)r * ns + (size_t)st;
    if (p->prog.shares_gpu) {
      /* The rank's GPU shares from its post to the end (sim/events.c's colls_change). */
      if (m->live_n[r] == m->live_cap[r] && live_grow(m, r)) return -1;
      double *c = m->live[r] + 4 * ((m->live_head[r] + m->live_n[r]++) % m->live_cap[r]);
      c[0] = m->clock[k];
      c[1] = done;
      c[2] = pc->sm_frac;
      c[3] = pc->hbm_frac;
    }
    m->clock[k] = done;
    m->posted[k] = 0;
    if (r == 0 && m->last) m->rec->at[prog_at_index(&p->prog, st, m->pc[k])] = done;
    m->pc[k]++;
  }
  return 1;
}

static int eval(const plan_t *p, const platform_net *net, record_t *rec, err_t *e) {
  const prog_t *g = &p->prog;
  mp_t m;
  memset(&m, 0, sizeof m);
  m.p = p;
  m.net = net;
  m.pairs = net->pairs;
  m.npairs = net->npairs;
  m.rec = rec;
  m.cur = -1;
  pipe_t w;
  plan_row row;
  memset(&w, 0, sizeof w);
  memset(&row, 0, sizeof row);
  int rc = ERR_OK;
  if (mp_alloc(&m, p)) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto done;
  }
  if ((rc = pipe_init(&w, p->queue, e)) || (rc = plan_row_alloc(p, &row, e))) goto done;
  int n = m.n, ns = m.ns;
  for (int it = 0; it < p->iterations && !rc; it++) {
    m.it = it;
    m.sync = plan_sync(p, it);
    m.last = it == p->iterations - 1;
    for (size_t k = 0; k < (size_t)n * (size_t)ns; k++) {
      m.pc[k] = 0;
      m.posted[k] = 0;
    }
    /* Each rank's values, then its compute stream as far as it goes alone. */
    for (int r = 0; r < n; r++) {
      plan_values(p, it, r, &w, &row, m.scratch);
      for (int k = 0; k < g->nslots; k++)
        if (m.late_map[k] >= 0) m.late[(size_t)r * (size_t)m.nlate + (size_t)m.late_map[k]] = m.scratch[k];
      m.cur = r;
      advance(&m, r, 0);
    }
    m.cur = -1;
    /* Then every stream as far as events allow, collectives resolved as every rank posts them. */
    for (;;) {
      int moved = 0, left = 0;
      for (int st = ns - 1; st >= 0; st--)
        for (int r = 0; r < n; r++) {
          moved |= advance(&m, r, st);
          left |= m.pc[(size_t)r * (size_t)ns + (size_t)st] < g->streams[st].n;
        }
      if (!left) break;
      for (int st = 1; st < ns && !rc; st++) {
        int did = resolve(&m, st);
        if (did < 0) rc = err_set(e, ERR_NOMEM, "out of memory");
        moved |= did > 0;
      }
      if (!rc && !moved) rc = err_set(e, ERR_SIM, "internal: the closed form found the program deadlocked in iteration %d", it);
      if (rc) break;
    }
  }
  rec->expected = rec->finished = n * (ns + (p->prefetch ? 1 : 0));
done:
  plan_row_free(&row);
  pipe_free(&w);
  mp_free(&m);
  return rc;
}

int maxplus_run(const plan_t *p, record_t *rec, int *done, err_t *e) {
  *done = 0;
  platform_net net;
  int rc = platform_pairs(&p->platform, &net, e);
  if (rc) return rc;
  int ok = net.exclusive || net.one_node;
  if (!ok) {
    platform_net_free(&net);
    return ERR_OK;
  }
  memset(rec, 0, sizeof *rec);
  if (record_alloc(rec, p->iterations, p->nb, p->sim_ranks, prog_at_count(&p->prog))) {
    platform_net_free(&net);
    record_free(rec);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  rc = eval(p, &net, rec, e);
  platform_net_free(&net);
  if (rc) {
    record_free(rec);
    return rc;
  }
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0) rec->peak_rss_kb = ru.ru_maxrss;
  rec->closed_form = 1;
  *done = 1;
  return ERR_OK;
}
