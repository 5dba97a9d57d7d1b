/* events: the engine's SimGrid side, loaded on demand (events.h). */
#include "events.h"

#include "record.h"
#include <errno.h>
#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define SEND_SLOTS 8 /* step fidelity: sends in flight per rank and channel (NCCL_STEPS) */

/* Each actor's stack. SimGrid allocates it whole (zeroed, so touched) when actors have no guard
 * pages, and the actors here are shallow: their work runs on SimGrid's own stack through simcalls.
 * A full simulation of 1,024 GPUs takes 102 MB with 32 KiB stacks, 314 MB with 256 KiB (measured);
 * AddressSanitizer's larger frames get 256 KiB. */
#if defined(__SANITIZE_ADDRESS__)
#define ENGINE_STACK_CFG "--cfg=contexts/stack-size:256"
#else
#define ENGINE_STACK_CFG "--cfg=contexts/stack-size:32"
#endif

typedef struct {
  sg_sem_t loaded, load_slots; /* batches loaded by the workers, and free prefetch slots */
  sg_sem_t on_gpu, gpu_slots;  /* prefetch: batches copied to the GPU, and free GPU buffers */
  sg_sem_t core;               /* shares_compute: the cores compute and communication take turns on */
  sg_sem_t *wake;              /* (streams) released when an event the stream waits for is recorded */
  int *ev_iter;                /* (events) the iteration in which the event was last recorded */
  double *ev_at;               /* (events) when */
  sg_mailbox_t *inbox;         /* (streams x groups x channels) what this rank's NCCL streams receive */
  double *val;                 /* (slots) the program's values for iteration val_it (plan_values) */
  int val_it;
  double it0, t0;              /* the compute stream: the iteration's start, and forward's */
  int colls;                   /* collectives of the rank running now */
  double sm, hbm;              /* what they take of the GPU (plan_coll) */
  int computing;               /* the compute stream runs work that shares the GPU with them */
  sg_sem_t change;             /* released when colls changes while it does */
  pipe_t pipe;                 /* plan_values' workspace, and the row it fills under jitter */
  plan_row row;
} rank_state;

/* Child-process state: one simulation per process. */
static const plan_t *P;
static rank_state *S;
static record_t R;       /* rank 0's events */
static sim_timeline g_tl;     /* every rank's spans, when the plan asks for them */
static int g_finished;
static double *g_prefetch_load_wait; /* (K) rank 0: the prefetcher's wait for loading */
static sg_comm_t *g_send_buf; /* (sim_ranks x streams x SEND_SLOTS x channels) step fidelity: sends in flight */
static sg_bar_t *g_ring_barrier;      /* (streams) flow fidelity: the end of one collective on every rank */
static int g_groups = 1;              /* the nccl_groups whose rings have inboxes: all with phases, else the job's */
static sg_bar_t *g_node_barrier;      /* (sim_nodes x streams) ... of a composed collective's phase inside a node */
static sg_bar_t *g_rail_barrier;      /* (GPUs per node x streams) ... of its phase between the nodes */
static int *g_waiter;                 /* (events) the stream that waits for the event, or -1 */
static long *g_at_base;               /* (streams) the record's `at` index of each stream's first instruction */
static char g_dummy;

static void sleep_for(double s) {
  if (s > 0) sg_actor_sleep_for(s);
}

/* Records a span of rank r from start_s to now, when the plan asks for spans. */
static void span(int r, timeline_track track, timeline_kind kind, int index, int it, double start_s) {
  if (!P->record_spans) return;
  timeline_span s = {.rank = r, .track = track, .kind = kind, .index = index, .iter = it, .start_s = start_s,
                     .end_s = simgrid_get_clock()};
  if (timeline_add(&g_tl, &s)) _exit(3);
}

/* Records a span of rank r's host thread at absolute times [a, b] laid out from the plan's pipeline
 * (plan_row's host clock): derived, not played by an actor. */
static void host_span(int r, timeline_kind kind, int it, double a, double b) {
  if (!P->record_spans || !(b > a)) return;
  timeline_span s = {.rank = r, .track = TIMELINE_TRACK_HOST, .kind = kind, .index = -1, .iter = it, .derived = 1,
                     .start_s = a, .end_s = b};
  if (timeline_add(&g_tl, &s)) _exit(3);
}

/* A DataLoader worker: loads batches k, k + W, ... each taking load_s, as long as a prefetch slot is
 * free (PyTorch keeps prefetch_factor = 2 batches per worker in flight). */
static void loader_actor(int argc, char *argv[]) {
  (void)argc;
  int r = atoi(argv[1]), k = atoi(argv[2]);
  rank_state *me = &S[r];
  for (int it = k; it < P->iterations; it += P->workers) {
    sg_sem_acquire(me->load_slots);
    double t0 = simgrid_get_clock();
    sleep_for(P->load_s);
    span(r, TIMELINE_TRACK_LOADER, TIMELINE_LOAD, k, it, t0);
    sg_sem_release(me->loaded);
  }
  g_finished++;
}

/* The next loaded batch, as the training loop (or the prefetcher) takes it; returns the wait. */
static double take_loaded_batch(rank_state *me) {
  double t0 = simgrid_get_clock();
  if (P->workers == 0) {
    sleep_for(P->load_s); /* num_workers = 0: the loop loads it itself */
  } else {
    sg_sem_acquire(me->loaded);
    sg_sem_release(me->load_slots);
  }
  return simgrid_get_clock() - t0;
}

/* Prefetch on a side stream: copies batch it+1 while the GPU computes batch it (one buffer ahead). */
static void prefetch_actor(int argc, char *argv[]) {
  (void)argc;
  int r = atoi(argv[1]);
  rank_state *me = &S[r];
  for (int it = 0; it < P->iterations; it++) {
    double w = P->load_s > 0 ? take_loaded_batch(me) : 0;
    if (r == 0) g_prefetch_load_wait[it] = w;
    sg_sem_acquire(me->gpu_slots);
    double t0 = simgrid_get_clock();
    sleep_for(P->copy_s);
    span(r, TIMELINE_TRACK_COPY, TIMELINE_H2D, -1, it, t0);
    sg_sem_release(me->on_gpu);
  }
  g_finished++;
}

/* Input of one iteration as the training loop sees it: loading, then the copy. */
static void get_input(int r, int it) {
  rank_state *me = &S[r];
  double lw = 0, cw = 0;
  if (P->prefetch) {
    double t0 = simgrid_get_clock();
    sg_sem_acquire(me->on_gpu);
    sg_sem_release(me->gpu_slots);
    double w = simgrid_get_clock() - t0;
    if (w > 0) span(r, TIMELINE_TRACK_COMPUTE, TIMELINE_INPUT_WAIT, -1, it, t0);
    /* What the loop waited for: loading first (as far as the prefetcher waited for it; recorded for
     * rank 0, the only one reported), the rest copying. */
    double pw = r == 0 ? g_prefetch_load_wait[it] : 0;
    lw = w < pw ? w : pw;
    cw = w - lw;
  } else {
    double t0 = simgrid_get_clock();
    if (P->load_s > 0) lw = take_loaded_batch(me);
    if (lw > 0) span(r, TIMELINE_TRACK_COMPUTE, TIMELINE_INPUT_WAIT, -1, it, t0);
    t0 = simgrid_get_clock();
    sleep_for(P->copy_s); /* pageable, or pinned on the compute stream: the GPU waits for it */
    if (P->copy_s > 0) span(r, TIMELINE_TRACK_COMPUTE, TIMELINE_H2D, -1, it, t0);
    cw = P->copy_s;
  }
  if (r == 0) {
    R.load_wait[it] = lw;
    R.copy_wait[it] = cw;
  }
}

/* Work of s seconds (at the GPU's full rate) on rank r's compute stream sharing the GPU with the
 * rank's collectives (sim/program.h, PROG_COMPUTE): piecewise at the rate of the moment, re-timed
 * whenever a collective starts or ends. */
static void run_shared(rank_state *me, double s, const prog_instr *in) {
  me->computing = 1;
  for (double left = s; left > 0;) {
    double rate = prog_rate(in, me->sm, me->hbm), t = simgrid_get_clock();
    if (sg_sem_acquire_timeout(me->change, left / rate)) break; /* ran to its end */
    left -= (simgrid_get_clock() - t) * rate;
  }
  me->computing = 0;
}

/* Collective pc starts (+1) or ends (-1) on rank me: what it takes of the GPU changes, and a
 * computation sharing it is re-timed. */
static void colls_change(rank_state *me, const plan_coll *pc, int d) {
  me->colls += d;
  me->sm = me->colls ? me->sm + d * pc->sm_frac : 0;
  me->hbm = me->colls ? me->hbm + d * pc->hbm_frac : 0;
  if (me->computing) sg_sem_release(me->change);
}

/* Rank r computes for s seconds (a span of `kind` in iteration it), sharing the GPU with the rank's
 * collectives where `in` says so (NULL: not); where communication shares the cores, it holds them
 * meanwhile (the span starts when it has them). What sharing the GPU added is recorded for rank 0. */
static void compute_for(int r, double s, const prog_instr *in, timeline_kind kind, int index, int it) {
  if (s <= 0) return;
  if (P->shares_compute) sg_sem_acquire(S[r].core);
  double t0 = simgrid_get_clock();
  int shared = in && in->shares;
  if (shared) run_shared(&S[r], s, in);
  else sg_actor_sleep_for(s);
  if (r == 0 && shared) R.slowed[it] += simgrid_get_clock() - t0 - s;
  span(r, TIMELINE_TRACK_COMPUTE, kind, index, it, t0);
  if (P->shares_compute) sg_sem_release(S[r].core);
}

/* Sleeps until absolute time t (a span of `kind`), holding the cores where compute shares them. */
static void compute_until(int r, double t, timeline_kind kind, int index, int it) {
  compute_for(r, t - simgrid_get_clock(), NULL, kind, index, it);
}

/* One ring pass of rank r on NCCL stream st, group grp (nccl_group), over nch channels: successors next[c x ranks + r],
 * `edge` bytes per channel edge in flow fidelity (or `steps` messages of `step` bytes in step
 * fidelity), NCCL's latency term `lat`, and in flow fidelity the barrier `bar` of the ranks taking
 * part. */
static void ring_pass(int r, int st, int grp, int nch, const int *next, sg_bar_t bar, long edge, long steps, long step, double lat) {
  int mch = P->nch_max;
  size_t box = ((size_t)st * g_groups + (size_t)grp) * (size_t)mch; /* the group's inboxes: phases never mix */
  size_t n = (size_t)P->sim_ranks;
  void *got;
  sg_comm_t c[2 * CHANNELS_MAX];
  if (P->fidelity == SIM_FIDELITY_STEP) {
    /* NCCL's latency term, then every step of every channel as a message. The inboxes are this
     * actor's permanent receivers, so a send starts at once (NCCL keeps buffers at the receiver);
     * step s+1's send waits only for step s's chunk to arrive, as the reduction needs it. */
    sleep_for(lat);
    sg_comm_t *sends = g_send_buf + ((size_t)r * (size_t)P->prog.nstreams + (size_t)st) * SEND_SLOTS * (size_t)mch;
    for (long s = 0; s < steps; s++) {
      /* NCCL has NCCL_STEPS (8) buffers per connection: a send waits for a free one (the one step
       * s - 8 used). Waiting keeps SimGrid's lists of pending sends short, too. */
      sg_comm_t *slot = sends + (size_t)(s % SEND_SLOTS) * mch;
      if (s >= SEND_SLOTS) sg_comm_wait_all(slot, (size_t)nch);
      for (int k = 0; k < nch; k++) {
        sg_mailbox_t out = S[next[(size_t)k * n + (size_t)r]].inbox[box + k];
        slot[k] = sg_mailbox_put_async(out, &g_dummy, step);
        c[k] = sg_mailbox_get_async(S[r].inbox[box + k], &got);
      }
      sg_comm_wait_all(c, (size_t)nch);
      R.messages += nch;
    }
    for (long s = steps > SEND_SLOTS ? steps - SEND_SLOTS : 0; s < steps; s++)
      sg_comm_wait_all(sends + (size_t)(s % SEND_SLOTS) * mch, (size_t)nch);
  } else {
    /* One flow per edge and channel carrying what the chosen algorithm and protocol put on an
     * edge. The collective is one pipeline: it ends when its slowest edge has delivered (the
     * barrier), plus NCCL's latency term. */
    for (int k = 0; k < nch; k++) {
      sg_mailbox_t out = S[next[(size_t)k * n + (size_t)r]].inbox[box + k];
      c[2 * k] = sg_mailbox_put_async(out, &g_dummy, edge);
      c[2 * k + 1] = sg_mailbox_get_async(S[r].inbox[box + k], &got);
    }
    sg_comm_wait_all(c, 2 * (size_t)nch);
    R.messages += nch;
    sg_barrier_wait(bar);
    sleep_for(lat);
  }
}

/* One collective, seen from rank r: its share on every channel at once; a composed one's phases in
 * order, each on its group's rings with its group's barrier (sim/plan.h, plan_phase). */
static void collective(int r, int st, const plan_coll *pc) {
  if (pc->nphase == 0) {
    ring_pass(r, st, NCCL_GROUP_ALL, P->ch.count, P->next, g_ring_barrier[st], pc->edge_bytes, pc->steps, pc->step_bytes, pc->lat_s);
    return;
  }
  int gpn = P->gpus_per_node, ns = P->prog.nstreams;
  for (int i = 0; i < pc->nphase; i++) {
    const plan_phase *f = &pc->phase[i];
    if (f->solo) {
      sleep_for(f->lat_s);
      continue;
    }
    const int *next = P->next;
    sg_bar_t bar = g_ring_barrier[st];
    if (f->group == NCCL_GROUP_NODE) next = P->next_node, bar = g_node_barrier[(size_t)(r / gpn) * ns + st];
    if (f->group == NCCL_GROUP_RAIL) next = P->next_rail, bar = g_rail_barrier[(size_t)(r % gpn) * ns + st];
    ring_pass(r, st, (int)f->group, f->nch, next, bar, f->edge_bytes, f->steps, f->step_bytes, f->lat_s);
  }
}

/* The end of rank r's iteration on its compute stream (PROG_TAIL, sim/program.h): the copy back in
 * synchronising iterations (its GPU time first: nothing else runs then), the rest until
 * max(D0 + a, t0 + b) with D0 the stream's clock after the last wait; the record's per-iteration
 * figures, the host's track and the steady iterations' host and device totals. */
static void tail(int r, int it, int sync, const prog_instr *in) {
  rank_state *me = &S[r];
  const double *v = me->val;
  double d0 = simgrid_get_clock(), end = d0 + v[in->a], t0 = me->t0;
  if (t0 + v[in->b] > end) end = t0 + v[in->b];
  double cb = sync ? prog_dur(in, v) : 0;
  if (cb > end - d0) cb = end - d0;
  compute_for(r, cb, NULL, TIMELINE_COPY_BACK, -1, it);
  compute_until(r, end, TIMELINE_OPTIMIZER, -1, it);
  record_tail(P, &R, r, it, sync, v, t0, d0, end, simgrid_get_clock(), cb);
  span(r, TIMELINE_TRACK_COMPUTE, TIMELINE_ITERATION, -1, it, me->it0);
  if (P->record_spans) {
    double hf = v[PROG_STAT_HOST_FWD], hb = v[PROG_STAT_HOST_BWD], ht = v[PROG_STAT_HOST_TAIL];
    host_span(r, TIMELINE_HOST_FORWARD, it, t0, t0 + hf);
    host_span(r, TIMELINE_HOST_BACKWARD, it, t0 + hf, t0 + hb);
    if (ht >= 0) {
      host_span(r, TIMELINE_HOST_TAIL, it, t0 + hb, t0 + ht);
      host_span(r, TIMELINE_HOST_SYNC, it, t0 + ht, end);
    } else {
      host_span(r, TIMELINE_HOST_SYNC, it, t0 + hb, d0); /* the last wait blocks it (gloo, MPI) */
    }
  }
}

/* The rank's values for iteration it. They are computed when the compute stream begins it; a stream
 * that reads them in another iteration is a program the engine cannot play: the child fails. */
static const double *vals(const rank_state *me, int it) {
  if (me->val_it != it) _exit(EVENTS_EXIT_PROGRAM);
  return me->val;
}

/* One stream of rank r (argv: rank, stream) plays its program (sim/program.h) every iteration. */
static void stream_actor(int argc, char *argv[]) {
  (void)argc;
  int r = atoi(argv[1]), st = atoi(argv[2]);
  rank_state *me = &S[r];
  const prog_stream *ps = &P->prog.streams[st];
  int nch = P->nch_max;
  if (ps->kind == PROG_STREAM_NCCL && P->fidelity == SIM_FIDELITY_STEP)
    for (int k = 0; k < g_groups * nch; k++) sg_mailbox_set_receiver(sg_mailbox_get_name(me->inbox[(size_t)st * g_groups * nch + k]));
  timeline_track track = ps->track >= 0                    ? (timeline_track)ps->track
                         : ps->kind == PROG_STREAM_COMPUTE ? TIMELINE_TRACK_COMPUTE
                                                           : TIMELINE_TRACK_COMM;
  for (int it = 0; it < P->iterations; it++) {
    int sync = plan_sync(P, it), last = r == 0 && it == P->iterations - 1;
    for (int i = 0; i < ps->n; i++) {
      const prog_instr *in = &ps->ins[i];
      if (in->sync && !sync) {
        if (last) R.at[g_at_base[st] + i] = simgrid_get_clock();
        continue;
      }
      double t0 = simgrid_get_clock();
      switch (in->op) {
      case PROG_BEGIN:
        me->it0 = t0;
        if (r == 0) R.iter_start[it] = t0;
        plan_values(P, it, r, &me->pipe, &me->row, me->val);
        me->val_it = it;
        break;
      case PROG_INPUT:
        get_input(r, it);
        break;
      case PROG_MARK:
        me->t0 = t0;
        break;
      case PROG_SLEEP: {
        double d = prog_dur(in, vals(me, it));
        sleep_for(d);
        if (d > 0 && in->span >= 0) span(r, track, (timeline_kind)in->span, in->index, it, t0);
        break;
      }
      case PROG_COMPUTE:
        compute_for(r, prog_dur(in, vals(me, it)), in, (timeline_kind)in->span, in->index, it);
        break;
      case PROG_RECORD:
        if (in->span >= 0) span(r, track, (timeline_kind)in->span, in->index, it, t0);
        me->ev_iter[in->ev] = it;
        me->ev_at[in->ev] = t0;
        if (g_waiter[in->ev] >= 0) sg_sem_release(me->wake[g_waiter[in->ev]]);
        break;
      case PROG_WAIT:
        while (me->ev_iter[in->ev] < it) sg_sem_acquire(me->wake[st]);
        if (in->lag >= 0) sleep_for(me->ev_at[in->ev] + vals(me, it)[in->lag] - simgrid_get_clock());
        if (in->span >= 0 && simgrid_get_clock() > t0) span(r, track, (timeline_kind)in->span, in->index, it, t0);
        break;
      case PROG_TAKE_CORES:
        sg_sem_acquire(me->core);
        break;
      case PROG_GIVE_CORES:
        sg_sem_release(me->core);
        break;
      case PROG_COLL:
        colls_change(me, &P->coll[in->coll], +1);
        collective(r, st, &P->coll[in->coll]);
        colls_change(me, &P->coll[in->coll], -1);
        if (in->span >= 0) span(r, track, (timeline_kind)in->span, in->index, it, t0);
        break;
      case PROG_TAIL:
        tail(r, it, sync, in);
        break;
      }
      if (last) R.at[g_at_base[st] + i] = simgrid_get_clock();
    }
  }
  g_finished++;
}

/* ---- the child ---- */

static void spawn(const char *what, int r, const char *extra, sg_host_t h, void (*fn)(int, char **)) {
  char name[48], rank[16];
  snprintf(rank, sizeof rank, "%d", r);
  snprintf(name, sizeof name, "%s%d%s%s", what, r, extra ? "." : "", extra ? extra : "");
  const char *argv[] = {what, rank, extra, NULL};
  sg_actor_create_(name, h, fn, extra ? 3 : 2, argv);
}

/* Runs in the child: never returns. It dies with its parent: PR_SET_PDEATHSIG asks the kernel for
 * SIGKILL when the parent goes, and the getppid check covers a parent that went before the request
 * was made (the child is then someone else's). */
void events_child(const plan_t *plan, int fd, pid_t parent) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(EVENTS_EXIT_ORPHAN);
  P = plan;
  const prog_t *g = &plan->prog;
  int n = plan->sim_ranks, nch = plan->nch_max, K = plan->iterations, nb = plan->nb, ns = g->nstreams;
  if (plan->fidelity == SIM_FIDELITY_STEP && n > 1 &&
      !(g_send_buf = calloc((size_t)n * (size_t)ns * SEND_SLOTS * (size_t)nch, sizeof *g_send_buf)))
    _exit(3);
  S = calloc((size_t)n, sizeof *S);
  g_prefetch_load_wait = calloc((size_t)K, sizeof(double));
  g_waiter = malloc((size_t)(g->nevents + 1) * sizeof *g_waiter);
  g_at_base = malloc((size_t)ns * sizeof *g_at_base);
  g_ring_barrier = calloc((size_t)ns, sizeof *g_ring_barrier);
  g_groups = plan->phased ? NCCL_GROUPS : 1;
  g_node_barrier = calloc((size_t)plan->sim_nodes * (size_t)ns, sizeof *g_node_barrier);
  g_rail_barrier = calloc((size_t)plan->gpus_per_node * (size_t)ns, sizeof *g_rail_barrier);
  if (!g_node_barrier || !g_rail_barrier) _exit(3);
  if (!S || !g_prefetch_load_wait || !g_waiter || !g_at_base || !g_ring_barrier || record_alloc(&R, K, nb, n, prog_at_count(g)))
    _exit(3);
  for (int v = 0; v < g->nevents; v++) g_waiter[v] = -1;
  for (int st = 0; st < ns; st++) {
    g_at_base[st] = prog_at_index(g, st, 0);
    for (int i = 0; i < g->streams[st].n; i++)
      if (g->streams[st].ins[i].op == PROG_WAIT) g_waiter[g->streams[st].ins[i].ev] = st;
  }

  /* CM02 without cross-traffic or TCP window: a lone transfer takes exactly latency + size/bandwidth
   * (docs/simulation.md). No guard pages around the actors' stacks: each costs a memory mapping, and
   * the kernel's limit on mappings (vm.max_map_count, 65530 by default) would cap the actors. SimGrid's
   * own log is silenced: the front end reports. */
  char *args[] = {"ddpsim",
                  "--cfg=network/model:CM02",
                  "--cfg=network/crosstraffic:0",
                  "--cfg=network/TCP-gamma:0",
                  "--cfg=contexts/factory:raw",
                  ENGINE_STACK_CFG,
                  "--cfg=contexts/guard-size:0",
                  "--log=root.thres:critical",
                  NULL};
  int argc = (int)(sizeof args / sizeof *args) - 1;
  simgrid_init(&argc, args);
  sg_host_t *hosts = malloc((size_t)n * sizeof *hosts);
  err_t pe;
  if (!hosts) _exit(3);
  if (platform_build(&plan->platform, hosts, &pe)) _exit(EVENTS_EXIT_PLATFORM);
  for (int st = 0; st < ns; st++) {
    if (n <= 1 || g->streams[st].kind != PROG_STREAM_NCCL) continue;
    g_ring_barrier[st] = sg_barrier_init((unsigned)n);
    for (int k = 0; plan->ch_node.count && k < plan->sim_nodes; k++)
      g_node_barrier[(size_t)k * ns + st] = sg_barrier_init((unsigned)plan->gpus_per_node);
    for (int k = 0; plan->phased && k < plan->gpus_per_node; k++)
      g_rail_barrier[(size_t)k * ns + st] = sg_barrier_init((unsigned)plan->sim_nodes);
  }

  for (int r = 0; r < n; r++) {
    char name[48];
    rank_state *me = &S[r];
    me->ev_iter = malloc((size_t)(g->nevents + 1) * sizeof *me->ev_iter);
    me->ev_at = calloc((size_t)(g->nevents + 1), sizeof *me->ev_at);
    me->wake = malloc((size_t)ns * sizeof *me->wake);
    me->inbox = calloc((size_t)ns * (size_t)g_groups * (size_t)nch, sizeof *me->inbox);
    me->val = calloc((size_t)g->nslots, sizeof *me->val);
    if (!me->ev_iter || !me->ev_at || !me->wake || !me->inbox || !me->val) _exit(3);
    if (plan_varies(plan) && (pipe_init(&me->pipe, plan->queue, &pe) || plan_row_alloc(plan, &me->row, &pe))) _exit(3);
    for (int v = 0; v < g->nevents; v++) me->ev_iter[v] = -1;
    me->val_it = -1;
    me->loaded = sg_sem_init(0);
    me->load_slots = sg_sem_init(2 * (plan->workers > 0 ? plan->workers : 1));
    me->on_gpu = sg_sem_init(0);
    me->gpu_slots = sg_sem_init(1);
    me->core = sg_sem_init(1);
    me->change = sg_sem_init(0);
    sg_host_t h = hosts[r];
    for (int st = 0; st < ns; st++) {
      me->wake[st] = sg_sem_init(0);
      if (g->streams[st].kind == PROG_STREAM_NCCL)
        for (int k = 0; k < g_groups * nch; k++) {
          snprintf(name, sizeof name, "inbox%d.%d.%d", r, st, k);
          me->inbox[(size_t)st * g_groups * nch + k] = sg_mailbox_by_name(name);
        }
      char ss[16];
      snprintf(ss, sizeof ss, "%d", st);
      spawn("stream", r, ss, h, stream_actor);
    }
    if (plan->load_s > 0)
      for (int k = 0; k < plan->workers; k++) {
        char kk[16];
        snprintf(kk, sizeof kk, "%d", k);
        spawn("loader", r, kk, h, loader_actor);
      }
    if (plan->prefetch) spawn("prefetch", r, NULL, h, prefetch_actor);
  }
  simgrid_run();

  R.expected = n * (ns + (plan->load_s > 0 ? plan->workers : 0) + (plan->prefetch ? 1 : 0));
  R.finished = g_finished;
  R.spans = g_tl.spans;
  R.nspans = g_tl.n;
  if (record_write(fd, &R)) _exit(5);
  _exit(0);
}

