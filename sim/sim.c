#include "sim.h"

#include <errno.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "channels.h"
#include "nccl.h"
#include "platform.h"

void sim_config_defaults(sim_config *c) {
  memset(c, 0, sizeof *c);
  c->nodes = 1;
  c->gpus_per_node = 0;
  c->batch = 0;
  c->precision = -1;
  c->bucket_cap_mb = 25.0;
  c->first_bucket_mb = 1.0;
  c->mode = SIM_MODE_DDP;
  c->fidelity = SIM_FIDELITY_FLOW;
  c->iterations = 3;
  c->no_sync = 1;
  c->comm_hook = SIM_HOOK_NONE;
  c->jitter_cv = -1;
  c->seed = 1;
  c->h2d = SIM_H2D_AUTO;
  c->host_launch_s = -1;
  c->framework = SIM_FRAMEWORK_DDP;
}

void sim_result_free(sim_result *r) {
  if (!r) return;
  bucket_plan_free(&r->plan);
  free(r->buckets);
  r->buckets = NULL;
}

double sim_ring_time(int n, double bytes, double lat_s, double bw_Bps) {
  if (n <= 1) return 0.0;
  return 2.0 * (n - 1) * (lat_s + bytes / ((double)n * bw_Bps));
}

/* ---- what the child process simulates: everything precomputed by the parent ---- */

#define SEND_SLOTS 8 /* step fidelity: sends in flight per rank and channel (NCCL_STEPS) */

typedef struct {
  int n;              /* ranks */
  int iterations;     /* in all: cycles x no_sync */
  int no_sync;        /* gradients are all-reduced in every no_sync-th iteration only */
  sim_fidelity fidelity;
  double forward_s, optimizer_s;
  int nseg;
  double *seg_s;      /* (nseg) backward segments: compute time up to a gradient-ready event */
  int nb;
  int nch;            /* NCCL channels: every all-reduce is split evenly over them */
  int *next;          /* (nch x n) each rank's successor on each channel's ring */
  long *chunk_bytes;  /* (nb) bytes each rank sends per ring step and channel: ceil(bucket / n / nch) */
  int *ready_seg;     /* (nb) segment after which the bucket is ready */
  double *hook_pre_s, *hook_post_s; /* (nb) communication hook work before and after the all-reduce */
  double *jitter;     /* (iterations x n) compute time multipliers per iteration and rank, or NULL */
  /* Input pipeline (docs/simulation.md): loading by `workers` DataLoader workers (0: in the training
   * loop), then the host-to-device copy, serial or prefetched on a side stream. */
  double load_s;      /* loading one batch, one worker; 0: not modelled */
  int workers;
  double copy_s;      /* the H2D copy of one batch; 0: not modelled */
  int prefetch;       /* the copy runs ahead on a side stream, overlapping compute */
  int shares_compute; /* all-reduces and compute take turns on the same cores (MPI on CPUs) */
  double copy_back_s; /* DDP: copying the reduced buckets back into the gradients, after the wait */
  double *seg_copy_s; /* (nseg) DDP: copying the gradients ready after segment s into their buckets */
  long *edge_bytes;   /* (nb) flow fidelity: bytes on each edge of each channel for the chosen
                         algorithm/protocol */
  double *lat_s;      /* (nb) flow fidelity: the latency term of NCCL's model */
  double *base_lat_s; /* (nb) step fidelity: NCCL's base latency, before the first step */
  sg_comm_t *send_buf; /* (n x SEND_SLOTS x nch) step fidelity: sends in flight, set up in the child */
} runplan;

typedef struct {
  sg_sem_t loaded, load_slots; /* batches loaded by the workers, and free prefetch slots */
  sg_sem_t on_gpu, gpu_slots;  /* prefetch: batches copied to the GPU, and free GPU buffers */
  sg_sem_t core;               /* shares_compute: the cores compute and communication take turns on */
  int *ready_iter; /* (nb) iteration in which the bucket last became ready */
  sg_sem_t ready_sem;
  sg_sem_t done_sem;
  sg_mailbox_t *inbox; /* (nch) what this rank receives on each channel */
} rank_state;

/* Child-process globals: one simulation per process. */
static const runplan *G;
static rank_state *S;
static int g_finished;
static long g_messages;
static double *g_iter_start, *g_iter_end; /* (iterations), rank 0 */
static double *g_ready, *g_start, *g_end; /* (nb), rank 0, last iteration, absolute */
static double *g_load_wait, *g_copy_wait;  /* (iterations), rank 0: exposed loading and copying */
static double *g_prefetch_load_wait;       /* (iterations), rank 0: the prefetcher's wait for loading */
static char g_dummy;
static sg_bar_t g_ring_barrier; /* flow fidelity: the end of one all-reduce on every rank */

static void sleep_for(double s) {
  if (s > 0) sg_actor_sleep_for(s);
}

/* A DataLoader worker: loads batches k, k + W, ... each taking load_s, as long as a prefetch slot is
 * free (PyTorch keeps prefetch_factor = 2 batches per worker in flight). */
static void loader_actor(int argc, char *argv[]) {
  (void)argc;
  int r = atoi(argv[1]), k = atoi(argv[2]);
  rank_state *me = &S[r];
  for (int it = k; it < G->iterations; it += G->workers) {
    sg_sem_acquire(me->load_slots);
    sleep_for(G->load_s);
    sg_sem_release(me->loaded);
  }
  g_finished++;
}

/* The next loaded batch, as the training loop (or the prefetcher) takes it; returns the wait. */
static double take_loaded_batch(rank_state *me) {
  double t0 = simgrid_get_clock();
  if (G->workers == 0) {
    sleep_for(G->load_s); /* num_workers = 0: the loop loads it itself */
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
  for (int it = 0; it < G->iterations; it++) {
    double w = G->load_s > 0 ? take_loaded_batch(me) : 0;
    if (r == 0) g_prefetch_load_wait[it] = w;
    sg_sem_acquire(me->gpu_slots);
    sleep_for(G->copy_s);
    sg_sem_release(me->on_gpu);
  }
  g_finished++;
}

/* Input of one iteration as the training loop sees it: loading, then the copy. */
static void get_input(int r, int it) {
  rank_state *me = &S[r];
  double lw = 0, cw = 0;
  if (G->prefetch) {
    double t0 = simgrid_get_clock();
    sg_sem_acquire(me->on_gpu);
    sg_sem_release(me->gpu_slots);
    double w = simgrid_get_clock() - t0;
    /* What the loop waited for: loading first (as far as the prefetcher waited for it; recorded for
     * rank 0, the only one reported), the rest copying. */
    double pw = r == 0 ? g_prefetch_load_wait[it] : 0;
    lw = w < pw ? w : pw;
    cw = w - lw;
  } else {
    if (G->load_s > 0) lw = take_loaded_batch(me);
    sleep_for(G->copy_s); /* pageable, or pinned on the compute stream: the GPU waits for it */
    cw = G->copy_s;
  }
  if (r == 0) {
    g_load_wait[it] = lw;
    g_copy_wait[it] = cw;
  }
}

/* Compute for s seconds; where communication shares the cores, hold them meanwhile. */
static void compute_for(rank_state *me, double s) {
  if (s <= 0) return;
  if (G->shares_compute) sg_sem_acquire(me->core);
  sg_actor_sleep_for(s);
  if (G->shares_compute) sg_sem_release(me->core);
}

static void compute_actor(int argc, char *argv[]) {
  (void)argc;
  int r = atoi(argv[1]);
  rank_state *me = &S[r];
  for (int it = 0; it < G->iterations; it++) {
    /* Under no_sync(), only the last iteration of each cycle all-reduces (and waits). */
    int sync = G->n > 1 && it % G->no_sync == G->no_sync - 1;
    int last = r == 0 && it == G->iterations - 1;
    if (r == 0) g_iter_start[it] = simgrid_get_clock();
    get_input(r, it);
    /* This GPU's compute speed in this iteration (1 without jitter): stragglers. */
    double slow = G->jitter ? G->jitter[(size_t)it * (size_t)G->n + (size_t)r] : 1.0;
    compute_for(me, G->forward_s * slow);
    for (int s = 0; s < G->nseg; s++) {
      compute_for(me, (G->seg_s[s] + (sync ? G->seg_copy_s[s] : 0)) * slow);
      for (int b = 0; b < G->nb; b++) {
        if (G->ready_seg[b] != s) continue;
        if (last) g_ready[b] = simgrid_get_clock();
        if (!sync) {
          if (last) g_start[b] = g_end[b] = g_ready[b];
          continue;
        }
        me->ready_iter[b] = it;
        sg_sem_release(me->ready_sem);
      }
    }
    if (sync) {
      sg_sem_acquire(me->done_sem); /* DDP's final wait for all buckets */
      compute_for(me, G->copy_back_s * slow);
    }
    compute_for(me, G->optimizer_s * slow);
    if (r == 0) g_iter_end[it] = simgrid_get_clock();
  }
  g_finished++;
}

/* One all-reduce of bucket b, seen from rank r: its share on every channel at once. */
static void allreduce(int r, int b) {
  int steps = 2 * (G->n - 1), nch = G->nch;
  void *got;
  sg_comm_t c[2 * CHANNELS_MAX];
  if (G->fidelity == SIM_FIDELITY_STEP) {
    /* Every ring step of every channel as a message. The inboxes are this actor's permanent
     * receivers, so a send starts at once (NCCL keeps buffers at the receiver); step s+1's send
     * waits only for step s's chunk to arrive, as the reduction needs it (docs/simulation.md). */
    sleep_for(G->base_lat_s[b]);
    sg_comm_t *sends = G->send_buf + (size_t)r * SEND_SLOTS * (size_t)nch;
    for (int s = 0; s < steps; s++) {
      /* NCCL has NCCL_STEPS (8) buffers per connection: a send waits for a free one (the one step
       * s - 8 used). Waiting keeps SimGrid's lists of pending sends short, too. */
      sg_comm_t *slot = sends + (size_t)(s % SEND_SLOTS) * nch;
      if (s >= SEND_SLOTS) sg_comm_wait_all(slot, (size_t)nch);
      for (int k = 0; k < nch; k++) {
        sg_mailbox_t out = S[G->next[(size_t)k * G->n + (size_t)r]].inbox[k];
        slot[k] = sg_mailbox_put_async(out, &g_dummy, G->chunk_bytes[b]);
        c[k] = sg_mailbox_get_async(S[r].inbox[k], &got);
      }
      sg_comm_wait_all(c, (size_t)nch);
      g_messages += nch;
    }
    for (int s = steps > SEND_SLOTS ? steps - SEND_SLOTS : 0; s < steps; s++)
      sg_comm_wait_all(sends + (size_t)(s % SEND_SLOTS) * nch, (size_t)nch);
  } else {
    /* One flow per ring edge and channel carrying what the chosen NCCL algorithm and protocol put
     * on an edge (links have no latency in flow fidelity). The collective is one pipeline: it ends
     * when its slowest edge has delivered (the barrier), plus NCCL's latency term
     * (docs/simulation.md). */
    for (int k = 0; k < nch; k++) {
      sg_mailbox_t out = S[G->next[(size_t)k * G->n + (size_t)r]].inbox[k];
      c[2 * k] = sg_mailbox_put_async(out, &g_dummy, G->edge_bytes[b]);
      c[2 * k + 1] = sg_mailbox_get_async(S[r].inbox[k], &got);
    }
    sg_comm_wait_all(c, 2 * (size_t)nch);
    g_messages += nch;
    sg_barrier_wait(g_ring_barrier);
    sleep_for(G->lat_s[b]);
  }
}

static void comm_actor(int argc, char *argv[]) {
  (void)argc;
  int r = atoi(argv[1]);
  rank_state *me = &S[r];
  if (G->fidelity == SIM_FIDELITY_STEP)
    for (int k = 0; k < G->nch; k++) {
      char name[32];
      snprintf(name, sizeof name, "inbox%d.%d", r, k);
      sg_mailbox_set_receiver(name);
    }
  for (int it = G->no_sync - 1; it < G->iterations; it += G->no_sync) {
    for (int b = 0; b < G->nb; b++) {
      while (me->ready_iter[b] != it) sg_sem_acquire(me->ready_sem);
      int last = r == 0 && it == G->iterations - 1;
      if (last) g_start[b] = simgrid_get_clock();
      /* Where the cores do the communication, a ready bucket waits for the op in progress (DDP's
       * hooks run between ops) and backward waits for the all-reduce. */
      if (G->shares_compute) sg_sem_acquire(me->core);
      sleep_for(G->hook_pre_s[b]);
      allreduce(r, b);
      sleep_for(G->hook_post_s[b]);
      if (G->shares_compute) sg_sem_release(me->core);
      if (last) g_end[b] = simgrid_get_clock();
    }
    sg_sem_release(me->done_sem);
  }
  g_finished++;
}

typedef struct {
  int status; /* 0 ok, 1 deadlock */
  int finished;
  long messages;
} wire_head;

static int write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

static int read_all(int fd, void *buf, size_t len) {
  char *p = buf;
  while (len) {
    ssize_t got = read(fd, p, len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    p += got;
    len -= (size_t)got;
  }
  return 0;
}

/* Runs in the child: never returns. */
static void child_main(runplan *plan, const char *platform_path, int fd) {
  G = plan;
  if (plan->fidelity == SIM_FIDELITY_STEP && plan->n > 1) {
    plan->send_buf = calloc((size_t)plan->n * SEND_SLOTS * (size_t)plan->nch, sizeof *plan->send_buf);
    if (!plan->send_buf) _exit(3);
  }
  int K = plan->iterations, nb = plan->nb;
  S = calloc((size_t)plan->n, sizeof *S);
  g_iter_start = calloc((size_t)K, sizeof(double));
  g_iter_end = calloc((size_t)K, sizeof(double));
  g_ready = calloc((size_t)nb + 1, sizeof(double));
  g_start = calloc((size_t)nb + 1, sizeof(double));
  g_end = calloc((size_t)nb + 1, sizeof(double));
  g_load_wait = calloc((size_t)K, sizeof(double));
  g_copy_wait = calloc((size_t)K, sizeof(double));
  g_prefetch_load_wait = calloc((size_t)K, sizeof(double));
  if (!S || !g_iter_start || !g_iter_end || !g_ready || !g_start || !g_end || !g_load_wait || !g_copy_wait ||
      !g_prefetch_load_wait)
    _exit(3);

  /* CM02 without cross-traffic or TCP window: a lone transfer takes exactly latency + size/bandwidth
   * (docs/simulation.md). SimGrid's own log is silenced: the front end reports. */
  char *args[] = {"ddpsim",
                  "--cfg=network/model:CM02",
                  "--cfg=network/crosstraffic:0",
                  "--cfg=network/TCP-gamma:0",
                  "--cfg=contexts/factory:raw",
                  "--cfg=contexts/stack-size:256",
                  "--log=root.thres:critical",
                  NULL};
  int argc = (int)(sizeof args / sizeof *args) - 1;
  simgrid_init(&argc, args);
  simgrid_load_platform(platform_path);
  if (plan->n > 1) g_ring_barrier = sg_barrier_init((unsigned)plan->n);

  for (int r = 0; r < plan->n; r++) {
    char name[32], host[32], rank[16];
    S[r].ready_iter = malloc((size_t)(nb ? nb : 1) * sizeof(int));
    if (!S[r].ready_iter) _exit(3);
    for (int b = 0; b < nb; b++) S[r].ready_iter[b] = -1;
    S[r].ready_sem = sg_sem_init(0);
    S[r].done_sem = sg_sem_init(0);
    S[r].loaded = sg_sem_init(0);
    S[r].load_slots = sg_sem_init(2 * (plan->workers > 0 ? plan->workers : 1));
    S[r].on_gpu = sg_sem_init(0);
    S[r].gpu_slots = sg_sem_init(1);
    S[r].core = sg_sem_init(1);
    S[r].inbox = malloc((size_t)plan->nch * sizeof *S[r].inbox);
    if (!S[r].inbox) _exit(3);
    for (int k = 0; k < plan->nch; k++) {
      snprintf(name, sizeof name, "inbox%d.%d", r, k);
      S[r].inbox[k] = sg_mailbox_by_name(name);
    }
    platform_host_name(r, host, sizeof host);
    snprintf(rank, sizeof rank, "%d", r);
    sg_host_t h = sg_host_by_name(host);
    if (!h) _exit(4);
    const char *argv[] = {"compute", rank, NULL};
    snprintf(name, sizeof name, "compute%d", r);
    sg_actor_create_(name, h, compute_actor, 2, argv);
    if (plan->n > 1) {
      const char *cargv[] = {"comm", rank, NULL};
      snprintf(name, sizeof name, "comm%d", r);
      sg_actor_create_(name, h, comm_actor, 2, cargv);
    }
    if (plan->load_s > 0)
      for (int k = 0; k < plan->workers; k++) {
        char kk[16];
        snprintf(kk, sizeof kk, "%d", k);
        const char *largv[] = {"loader", rank, kk, NULL};
        snprintf(name, sizeof name, "loader%d.%d", r, k);
        sg_actor_create_(name, h, loader_actor, 3, largv);
      }
    if (plan->prefetch) {
      const char *pargv[] = {"prefetch", rank, NULL};
      snprintf(name, sizeof name, "prefetch%d", r);
      sg_actor_create_(name, h, prefetch_actor, 2, pargv);
    }
  }
  simgrid_run();

  int expected = plan->n * ((plan->n > 1 ? 2 : 1) + (plan->load_s > 0 ? plan->workers : 0) + (plan->prefetch ? 1 : 0));
  wire_head head = {.status = g_finished == expected ? 0 : 1, .finished = g_finished, .messages = g_messages};
  if (write_all(fd, &head, sizeof head) || write_all(fd, g_iter_start, (size_t)K * sizeof(double)) ||
      write_all(fd, g_iter_end, (size_t)K * sizeof(double)) || write_all(fd, g_ready, (size_t)nb * sizeof(double)) ||
      write_all(fd, g_start, (size_t)nb * sizeof(double)) || write_all(fd, g_end, (size_t)nb * sizeof(double)) ||
      write_all(fd, g_load_wait, (size_t)K * sizeof(double)) || write_all(fd, g_copy_wait, (size_t)K * sizeof(double)))
    _exit(5);
  _exit(0);
}

/* ---- the parent: validate, precompute, fork, collect ---- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double host_launch(const sim_config *c) {
  return c->host_launch_s >= 0 ? c->host_launch_s : profile_host_launch_s(c->profile);
}

/* Time of an op's `count` runs. A run takes the longer of the GPU's time and the host's: `launches`
 * kernel launches at the profile's host cost each, times `host_threads` when that many threads
 * take turns under one lock (DataParallel's replicas and Python's GIL; 1 otherwise). */
static int op_time_host(const sim_config *c, const model_op *op, long batch, model_dtype prec, int host_threads,
                        double *t, int *extrap, err_t *e) {
  double one;
  int x = 0;
  int rc = profile_op_time(c->profile, op, batch, prec, &one, &x, e);
  if (rc) return rc;
  *extrap += x;
  double host = (double)op->launches * host_launch(c) * host_threads;
  *t = (one > host ? one : host) * (double)op->count;
  return ERR_OK;
}

static int op_phase_time(const sim_config *c, const model_op *op, long batch, model_dtype prec, double *t,
                         int *extrap, err_t *e) {
  return op_time_host(c, op, batch, prec, 1, t, extrap, e);
}

/* An elementwise pass over numel gradient elements moving `arrays` arrays, costed by the profile. */
static int copy_time(const sim_config *c, long numel, long arrays, long batch, model_dtype prec, double *t, int *extrap,
                     err_t *e) {
  model_op op = {.kind = MODEL_OP_EWISE, .elems = {numel, 0}, .arrays = arrays, .count = 1, .launches = 1,
                 .follows_run = 1};
  snprintf(op.name, sizeof op.name, "ddp_bucket_copy");
  return op_phase_time(c, &op, batch, prec, t, extrap, e);
}

/* The network as simulated: effective bandwidths and hop latencies from the profile, NCCL's
 * channels through the node's links and NICs, and the platform they become (docs/simulation.md). */
typedef struct {
  platform_spec spec;
  channels_t ch;
  double *pair_Bps;        /* (G x G) the pair graph's capacities, or NULL (switched) */
  unsigned char *near;     /* (nics x G) or NULL */
} net_t;

static void net_free(net_t *net) {
  channels_free(&net->ch);
  free(net->pair_Bps);
  free(net->near);
}

static int net_build(const sim_config *c, int gpn, net_t *net, err_t *e) {
  const topo_t *t = c->topo;
  platform_spec *spec = &net->spec;
  int rc;
  double link_bw = 0, nic_bw = 0, lat;
  spec->nodes = c->nodes;
  spec->gpus_per_node = gpn;
  if (gpn > 1) {
    if ((rc = profile_link(c->profile, t->intra_class, t->intra_bw_Bps, &link_bw, &lat, e))) return rc;
    if ((rc = profile_hop_lat(c->profile, t->intra_class, "ring", "Simple", &lat, e))) return rc;
    spec->intra_lat_s = lat;
  }
  if (c->nodes > 1 && t->has_nic) {
    if ((rc = profile_link(c->profile, t->nic_class, t->nic_bw_Bps, &nic_bw, &lat, e))) return rc;
    if ((rc = profile_hop_lat(c->profile, t->nic_class, "ring", "Simple", &lat, e))) return rc;
    spec->nic_lat_s = lat;
    spec->backbone_bw_Bps = t->switch_bw_Bps;
  }
  channels_spec cs;
  if ((rc = channels_spec_from_topo(t, gpn, c->nodes, link_bw, nic_bw, &cs, &net->pair_Bps, &net->near, e))) return rc;
  spec->pair_Bps = cs.pair_Bps;
  spec->gpu_Bps = cs.gpu_Bps;
  spec->nics = cs.nics;
  spec->nic_Bps = cs.nic_Bps;
  err_t ce;
  if ((rc = channels_search(&cs, &net->ch, &ce))) return err_set(e, rc, "%s: %s", t->path, ce.msg);
  spec->ch = &net->ch;
  return ERR_OK;
}

/* The input pipeline: loading by DataLoader workers and the host-to-device copy of each batch. */
static int input_pipeline(const sim_config *c, const model_t *m, long batch, runplan *plan, sim_result *r, err_t *e) {
  if (c->load_s < 0 || !isfinite(c->load_s)) return err_set(e, ERR_INPUT, "load time per batch must be >= 0");
  if (c->workers < 0 || c->workers > 256) return err_set(e, ERR_INPUT, "DataLoader workers must be 0 to 256, got %d", c->workers);
  plan->load_s = c->load_s;
  plan->workers = c->workers;
  sim_h2d mode = c->h2d;
  double bytes = (double)m->input_bytes_per_sample * (double)batch;
  int have = 0;
  double lat = 0, bw = 0;
  static const char *const profile_mode[] = {[SIM_H2D_PAGEABLE] = "pageable_sync", [SIM_H2D_PINNED] = "pinned_sync",
                                             [SIM_H2D_PINNED_ASYNC] = "pinned_async", [SIM_H2D_PREFETCH] = "pinned_async"};
  if (mode == SIM_H2D_AUTO) {
    /* PyTorch's default (pin_memory=False): pageable copies, when the profile and the model say
     * what they cost; otherwise the copy is not modelled, and the report says so. */
    mode = SIM_H2D_OFF;
    if (bytes > 0 && profile_h2d(c->profile, profile_mode[SIM_H2D_PAGEABLE], &have, &lat, &bw, e) == 0 && have)
      mode = SIM_H2D_PAGEABLE;
  }
  r->h2d = mode;
  if (mode == SIM_H2D_OFF) return ERR_OK;
  if (bytes <= 0)
    return err_set(e, ERR_INPUT, "%s: the model has no 'input' line: the bytes of a sample to copy are unknown", m->path);
  int rc = profile_h2d(c->profile, profile_mode[mode], &have, &lat, &bw, e);
  if (rc) return rc;
  if (!have)
    return err_set(e, ERR_INPUT, "%s: no h2d.%s (host-to-device copy cost; ddpcalib h2d measures it)", profile_name(c->profile),
                   profile_mode[mode]);
  plan->copy_s = lat + bytes / bw;
  plan->prefetch = mode == SIM_H2D_PREFETCH;
  return ERR_OK;
}

/* Fills plan->jitter (NULL when there is no jitter) and the straggler summary in r. */
static int draw_jitter(const sim_config *c, int n, runplan *plan, sim_result *r, err_t *e) {
  profile_jitter j;
  int rc = profile_get_jitter(c->profile, &j, e);
  if (rc) return rc;
  if (c->jitter_cv >= 0) {
    j.kind = c->jitter_cv > 0 ? PROFILE_JITTER_LOGNORMAL : PROFILE_JITTER_NONE;
    j.cv = c->jitter_cv;
  }
  r->jitter_kind = j.kind;
  r->jitter_cv = j.kind == PROFILE_JITTER_LOGNORMAL ? j.cv : 0;
  if (j.kind == PROFILE_JITTER_NONE) return ERR_OK;
  size_t count = (size_t)plan->iterations * (size_t)n;
  plan->jitter = malloc(count * sizeof *plan->jitter);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  if (!plan->jitter || !rng) {
    gsl_rng_free(rng);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  gsl_rng_set(rng, c->seed);
  for (size_t i = 0; i < count; i++) plan->jitter[i] = profile_jitter_draw(&j, rng);
  gsl_rng_free(rng);
  /* What synchronising costs: in each iteration every GPU waits for the slowest one's compute.
   * Reported as the mean over the steady-state iterations of (slowest - mean) compute. */
  int first = plan->iterations > c->no_sync ? c->no_sync : 0;
  double sum = 0;
  for (int it = first; it < plan->iterations; it++) {
    const double *row = plan->jitter + (size_t)it * (size_t)n;
    double mx = row[0], mean = 0;
    for (int k = 0; k < n; k++) {
      if (row[k] > mx) mx = row[k];
      mean += row[k] / n;
    }
    sum += mx - mean;
  }
  r->straggler_s = r->compute_s * sum / (plan->iterations - first);
  return ERR_OK;
}

/* PyTorch's DataParallel on one node (docs/simulation.md): one process, one Python thread per GPU.
 * Every iteration scatters the inputs, replicates the parameters from GPU 0, runs the replicas'
 * forward with their kernel launches taking turns under the GIL, gathers the outputs to GPU 0 (and
 * scatters their gradients back), runs backward (C++ threads, no GIL), reduces the gradients to
 * GPU 0, and steps the optimizer there. Nothing overlaps, so it is summed, not simulated. */
static int dp_run(const sim_config *c, const model_t *m, long batch, model_dtype prec, int G, double bw, double hop,
                  const runplan *plan, sim_result *r, err_t *e) {
  if (c->mode != SIM_MODE_DDP || c->no_sync != 1 || c->comm_hook != SIM_HOOK_NONE || c->rebuilt || c->static_graph ||
      c->fidelity != SIM_FIDELITY_FLOW)
    return err_set(e, ERR_INPUT, "DataParallel has no buckets, no_sync, communication hooks or fidelities to choose");
  if (c->jitter_cv > 0) return err_set(e, ERR_INPUT, "compute jitter is not modelled for DataParallel");
  r->jitter_kind = PROFILE_JITTER_NONE;
  r->jitter_cv = r->straggler_s = 0;
  if (plan->prefetch) return err_set(e, ERR_INPUT, "DataParallel scatters its input itself: no side-stream prefetch");
  if (G > 1 && m->output_elems_per_sample <= 0)
    return err_set(e, ERR_INPUT, "%s: DataParallel gathers the outputs to GPU 0, and the model has no 'output' line", m->path);
  int rc;
  for (int o = 0; o < m->nops; o++) {
    const model_op *op = &m->ops[o];
    double t;
    /* Forward runs in G Python threads; backward in the autograd engine's device threads, which
     * need the GIL only where the autograd functions are Python (dp_backward_gil). */
    int threads = op->phase == MODEL_PHASE_FORWARD || (op->phase == MODEL_PHASE_BACKWARD && c->dp_backward_gil) ? G : 1;
    if ((rc = op_time_host(c, op, batch, prec, threads, &t, &r->extrapolated_ops, e))) return rc;
    if (op->phase == MODEL_PHASE_FORWARD) r->forward_s += t;
    else if (op->phase == MODEL_PHASE_BACKWARD) r->backward_s += t;
    else r->optimizer_s += t;
  }
  r->compute_s = r->forward_s + r->backward_s + r->optimizer_s;
  double S = (double)model_total_bytes(m, prec);
  double out = (double)m->output_elems_per_sample * (double)model_dtype_size(prec) * (double)batch;
  if (G > 1) {
    r->dp_replicate_s = (G - 1) * hop + S / bw;                   /* broadcast, pipelined along the GPUs */
    r->dp_gather_s = 2.0 * (G - 1) * out / bw;                    /* into GPU 0's links, and back */
    r->dp_reduce_s = (G - 1) * hop + (double)(G - 1) / G * S / bw; /* a ring reduce to GPU 0 */
  }
  r->dp_scatter_s = G * plan->copy_s;                             /* one thread copies every chunk */
  r->transfer_s = r->dp_scatter_s;
  if (plan->load_s > 0) {
    /* The DataLoader's batch is all G replicas' samples. */
    double load = G * plan->load_s, rest = r->compute_s + r->dp_scatter_s + r->dp_replicate_s + r->dp_gather_s + r->dp_reduce_s;
    r->loading_s = plan->workers == 0 ? load : (load / plan->workers > rest ? load / plan->workers - rest : 0);
  }
  r->exposed_comm_s = r->dp_replicate_s + r->dp_gather_s + r->dp_reduce_s;
  r->iteration_s = r->loading_s + r->transfer_s + r->compute_s + r->exposed_comm_s;
  r->iterations_simulated = 0;
  return ERR_OK;
}

int sim_run(const sim_config *c, sim_result *r, err_t *e) {
  memset(r, 0, sizeof *r);
  double wall0 = now_s();
  const model_t *m = c->model;
  if (!m || !c->topo || !c->profile) return err_set(e, ERR_INPUT, "a model, a topology and a profile are needed");
  int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : c->topo->gpus_per_node;
  long batch = c->batch > 0 ? c->batch : m->batch;
  model_dtype prec = c->precision >= 0 ? (model_dtype)c->precision : m->precision;
  if (c->nodes < 1 || c->nodes > 65536) return err_set(e, ERR_INPUT, "node count must be between 1 and 65536, got %d", c->nodes);
  if (gpn > 4096) return err_set(e, ERR_INPUT, "GPUs per node must be at most 4096, got %d", gpn);
  if ((long)c->nodes * gpn > 65536) return err_set(e, ERR_INPUT, "at most 65536 GPUs can be simulated");
  if (c->iterations < 1 || c->iterations > 1000) return err_set(e, ERR_INPUT, "iterations must be between 1 and 1000, got %d", c->iterations);
  if (!(c->jitter_cv < 1.0) || isnan(c->jitter_cv)) return err_set(e, ERR_INPUT, "jitter cv must be below 1, got %g", c->jitter_cv);
  if (c->no_sync < 1 || c->no_sync > 1000) return err_set(e, ERR_INPUT, "no-sync cycle must be between 1 and 1000, got %d", c->no_sync);
  if (batch > 1L << 30) return err_set(e, ERR_INPUT, "batch %ld is too large", batch);
  int n = c->nodes * gpn;
  if (c->dp_backward_gil && c->framework != SIM_FRAMEWORK_DP)
    return err_set(e, ERR_INPUT, "a backward under the GIL is DataParallel's (framework dp), not DDP's");
  if (c->framework == SIM_FRAMEWORK_DP && c->nodes != 1)
    return err_set(e, ERR_INPUT, "DataParallel runs in one process: one node only, not %d", c->nodes);

  net_t net;
  memset(&net, 0, sizeof net);
  runplan plan;
  memset(&plan, 0, sizeof plan);
  char platform_path[512];
  int have_platform = 0, pfd = -1, pipefd[2] = {-1, -1};
  double *wire = NULL;
  int *param_seg = NULL;
  int rc = net_build(c, gpn, &net, e);
  if (rc) goto done;
  /* NCCL splits each all-reduce evenly over its channels: together they give C x their bandwidth. */
  double ring_bw = channels_bw_Bps(&net.ch);
  r->channels = net.ch.count;
  r->channel_bw_Bps = net.ch.speed_Bps;
  r->nics_used = net.ch.nics_used;
  r->channels_exhausted = net.ch.exhausted;

  /* NCCL: which algorithms and protocols may run. Step fidelity simulates ring/Simple messages. */
  nccl_model nm;
  if ((rc = nccl_model_init(&nm, c->profile, c->topo, c->nodes, gpn, net.ch.count, ring_bw, ring_bw, e))) goto done;
  unsigned algos = c->nccl_algos ? c->nccl_algos : NCCL_ALL_ALGOS;
  unsigned protos = c->nccl_protos ? c->nccl_protos : NCCL_ALL_PROTOS;
  if (c->fidelity == SIM_FIDELITY_STEP) {
    if ((c->nccl_algos && !(c->nccl_algos & (1u << NCCL_ALGO_RING))) ||
        (c->nccl_protos && !(c->nccl_protos & (1u << NCCL_PROTO_SIMPLE)))) {
      rc = err_set(e, ERR_INPUT, "step fidelity simulates ring all-reduces with the Simple protocol only; use flow fidelity for others");
      goto done;
    }
    algos = 1u << NCCL_ALGO_RING;
    protos = 1u << NCCL_PROTO_SIMPLE;
  }

  /* Buckets. static_graph's steady state runs the buckets rebuilt after the first iteration. */
  int rebuilt = c->rebuilt || c->static_graph;
  if (c->mode == SIM_MODE_FLAT) rc = bucket_plan_flat(m, prec, &r->plan, e);
  else rc = bucket_plan_for_model(m, prec, c->first_bucket_mb, c->bucket_cap_mb, rebuilt, &r->plan, e);
  if (rc) goto done;
  int nb = r->plan.n;

  /* Compute times and the gradient-ready segments of backward. */
  plan.n = n;
  plan.nch = net.ch.count;
  plan.next = malloc((size_t)plan.nch * (size_t)n * sizeof *plan.next);
  if (!plan.next) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto done;
  }
  for (int k = 0; k < plan.nch; k++)
    for (int q = 0; q < n; q++) plan.next[(size_t)k * n + q] = channels_next(&net.ch, c->nodes, k, q);
  plan.no_sync = c->no_sync;
  plan.shares_compute = (gpn > 1 && profile_link_shares_compute(c->profile, c->topo->intra_class)) ||
                        (c->nodes > 1 && profile_link_shares_compute(c->profile, c->topo->nic_class));
  r->shares_compute = plan.shares_compute;
  plan.iterations = c->iterations * c->no_sync;
  if (c->load_s > 0 && c->workers > 1) {
    /* W workers hand out batches in rounds of W: average over whole rounds, or the mean is off. */
    int first = c->iterations > 1 ? c->no_sync : 0, steady = plan.iterations - first;
    int round = c->workers * c->no_sync;
    plan.iterations = first + (steady + round - 1) / round * round;
  }
  r->iterations_simulated = plan.iterations;
  plan.fidelity = c->fidelity;
  plan.nb = nb;
  param_seg = malloc((size_t)m->nparams * sizeof *param_seg);
  plan.seg_s = malloc((size_t)(m->nops + 1) * sizeof *plan.seg_s);
  plan.seg_copy_s = calloc((size_t)(m->nops + 1), sizeof *plan.seg_copy_s);
  plan.chunk_bytes = malloc((size_t)nb * sizeof *plan.chunk_bytes);
  plan.ready_seg = malloc((size_t)nb * sizeof *plan.ready_seg);
  plan.hook_pre_s = calloc((size_t)nb, sizeof *plan.hook_pre_s);
  plan.hook_post_s = calloc((size_t)nb, sizeof *plan.hook_post_s);
  plan.edge_bytes = calloc((size_t)nb, sizeof *plan.edge_bytes);
  plan.lat_s = calloc((size_t)nb, sizeof *plan.lat_s);
  plan.base_lat_s = calloc((size_t)nb, sizeof *plan.base_lat_s);
  r->buckets = calloc((size_t)nb, sizeof *r->buckets);
  if (!param_seg || !plan.seg_s || !plan.seg_copy_s || !plan.chunk_bytes || !plan.ready_seg || !plan.hook_pre_s || !plan.hook_post_s ||
      !plan.edge_bytes || !plan.lat_s || !plan.base_lat_s || !r->buckets) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto done;
  }
  /* DDP with gradient_as_bucket_view=False (PyTorch's default) copies every gradient into its
   * bucket and, after the all-reduce, back into .grad (docs/simulation.md). */
  int copies = c->mode == SIM_MODE_DDP && n > 1 && !c->bucket_view;
  if (copies) {
    double back;
    if ((rc = copy_time(c, model_total_params(m), 2, batch, prec, &back, &r->extrapolated_ops, e))) goto done;
    plan.copy_back_s = back;
    r->bucket_copy_s = back;
  }
  double pending = 0;
  for (int o = 0; o < m->nops; o++) {
    const model_op *op = &m->ops[o];
    double t;
    if ((rc = op_phase_time(c, op, batch, prec, &t, &r->extrapolated_ops, e))) goto done;
    if (op->phase == MODEL_PHASE_FORWARD) {
      r->forward_s += t;
    } else if (op->phase == MODEL_PHASE_OPTIMIZER) {
      r->optimizer_s += t;
    } else {
      r->backward_s += t;
      pending += t;
      if (op->ready_count) {
        if (copies) {
          /* The Reducer's hook copies the ready gradients into their bucket (and the bucket is
           * divided by the world size): read and write both, twice, on the compute stream. */
          long numel = 0;
          for (int k = 0; k < op->ready_count; k++) numel += m->params[m->ready[op->ready_first + k]].numel;
          double ct;
          if ((rc = copy_time(c, numel, 4, batch, prec, &ct, &r->extrapolated_ops, e))) goto done;
          r->bucket_copy_s += ct;
          plan.seg_copy_s[plan.nseg] = ct;
        }
        for (int k = 0; k < op->ready_count; k++) param_seg[m->ready[op->ready_first + k]] = plan.nseg;
        plan.seg_s[plan.nseg++] = pending;
        pending = 0;
      }
    }
  }
  if (pending > 0) plan.seg_s[plan.nseg++] = pending; /* backward work after the last gradient */
  plan.forward_s = r->forward_s;
  plan.optimizer_s = r->optimizer_s;
  for (int b = 0; b < nb; b++) {
    const bucket_t *bk = &r->plan.b[b];
    int seg = 0;
    for (int k = 0; k < bk->ntensors; k++)
      if (param_seg[bk->tensors[k]] > seg) seg = param_seg[bk->tensors[k]];
    plan.ready_seg[b] = seg;
    size_t wire_bytes = bk->bytes;
    if (c->comm_hook == SIM_HOOK_FP16 && bk->dtype_key == MODEL_FP32) {
      /* fp16_compress_hook: cast the bucket to fp16 (read 4, write 2 bytes per element), all-reduce
       * half the bytes, cast back (read 2, write 4). Each cast costs an ewise pass of the profile. */
      model_op cast = {.kind = MODEL_OP_EWISE, .elems = {(long)(bk->bytes / 4), 0}, .arrays = 3, .count = 1,
                       .follows_run = 0, .dtype = MODEL_FP16};
      snprintf(cast.name, sizeof cast.name, "fp16_compress_cast");
      double t;
      if ((rc = op_phase_time(c, &cast, batch, prec, &t, &r->extrapolated_ops, e))) goto done;
      plan.hook_pre_s[b] = plan.hook_post_s[b] = t;
      wire_bytes = bk->bytes / 2;
    }
    r->buckets[b].wire_bytes = wire_bytes;
    size_t per = (size_t)n * (size_t)plan.nch;
    plan.chunk_bytes[b] = (long)((wire_bytes + per - 1) / per);
    if (plan.chunk_bytes[b] < 1) plan.chunk_bytes[b] = 1;
    /* NCCL's choice for this bucket, and what it puts on each edge. */
    nccl_choice ch;
    if ((rc = nccl_choose(&nm, (double)wire_bytes, algos, protos, &ch, e))) goto done;
    r->buckets[b].algo = ch.algo;
    r->buckets[b].proto = ch.proto;
    r->buckets[b].nccl_estimate_s = ch.time_s;
    plan.edge_bytes[b] = (long)ceil(ch.edge_bytes / plan.nch);
    if (plan.edge_bytes[b] < 1) plan.edge_bytes[b] = 1;
    plan.lat_s[b] = ch.lat_s;
    plan.base_lat_s[b] = nm.base_lat_s[ch.algo][ch.proto];
  }

  r->gpus = n;
  r->batch = batch;
  r->precision = prec;
  /* Compute on the GPU: the model's ops, and DDP's bucket copies (in synchronised iterations). */
  r->compute_s = r->forward_s + r->backward_s + r->optimizer_s + r->bucket_copy_s / c->no_sync;
  /* Stragglers: every GPU's compute in every iteration scaled by a draw from the profile's
   * distribution (or --jitter-cv), seeded, so runs are reproducible. */
  if ((rc = draw_jitter(c, n, &plan, r, e))) goto done;
  if ((rc = input_pipeline(c, m, batch, &plan, r, e))) goto done;
  if (c->framework == SIM_FRAMEWORK_DP) {
    /* Recompute the compute phases with DataParallel's host threads, then sum its iteration. */
    r->forward_s = r->backward_s = r->optimizer_s = 0;
    r->extrapolated_ops = 0;
    r->intra_bw_Bps = ring_bw;
    r->intra_lat_s = net.spec.intra_lat_s;
    bucket_plan_free(&r->plan);
    free(r->buckets);
    r->buckets = NULL;
    rc = dp_run(c, m, batch, prec, gpn, ring_bw, net.spec.intra_lat_s, &plan, r, e);
    goto done;
  }
  /* What the channels get: inside a node all of them; between nodes the NICs they cross. */
  r->intra_bw_Bps = gpn > 1 ? ring_bw : 0;
  r->intra_lat_s = net.spec.intra_lat_s;
  r->nic_bw_Bps = c->nodes > 1 ? ring_bw : 0;
  r->nic_lat_s = net.spec.nic_lat_s;

  /* The platform file, then the engine in a child process. */
  const char *tmpdir = getenv("TMPDIR");
  snprintf(platform_path, sizeof platform_path, "%s/ddpsim-platform-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  pfd = mkstemp(platform_path);
  if (pfd < 0) {
    rc = err_set(e, ERR_IO, "%s: cannot create the platform file: %s", platform_path, strerror(errno));
    goto done;
  }
  have_platform = 1;
  FILE *pf = fdopen(pfd, "w");
  if (!pf) {
    rc = err_set(e, ERR_IO, "%s: cannot write the platform file: %s", platform_path, strerror(errno));
    goto done;
  }
  pfd = -1;
  /* Flow fidelity adds NCCL's latency term itself: its links carry none (equal max-min shares). */
  platform_spec pspec = net.spec;
  if (c->fidelity == SIM_FIDELITY_FLOW) pspec.intra_lat_s = pspec.nic_lat_s = 0;
  rc = platform_write(pf, &pspec, e);
  if (fclose(pf) != 0 && rc == 0) rc = err_set(e, ERR_IO, "%s: cannot write the platform file", platform_path);
  if (rc) goto done;

  if (pipe(pipefd) != 0) {
    rc = err_set(e, ERR_IO, "cannot create a pipe: %s", strerror(errno));
    goto done;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    rc = err_set(e, ERR_SIM, "cannot fork the simulation: %s", strerror(errno));
    goto done;
  }
  if (pid == 0) {
    close(pipefd[0]);
    child_main(&plan, platform_path, pipefd[1]);
  }
  close(pipefd[1]);
  pipefd[1] = -1;
  int K = plan.iterations;
  wire_head head;
  size_t nd = (size_t)(4 * K + 3 * nb);
  wire = malloc(nd * sizeof *wire);
  int read_ok = wire && read_all(pipefd[0], &head, sizeof head) == 0 && read_all(pipefd[0], wire, nd * sizeof *wire) == 0;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!read_ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    if (WIFSIGNALED(status))
      rc = err_set(e, ERR_SIM, "the simulation engine died (signal %d)", WTERMSIG(status));
    else
      rc = err_set(e, ERR_SIM, "the simulation engine failed (exit status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    goto done;
  }
  if (head.status != 0) {
    rc = err_set(e, ERR_SIM, "the simulation deadlocked: %d of the actors finished", head.finished);
    goto done;
  }
  const double *is = wire, *ie = wire + K, *rd = wire + 2 * K, *st = rd + nb, *en = st + nb;
  /* Steady state: the mean over cycles 2..C of no_sync iterations (every iteration starts where the
   * previous ended); with one cycle, that cycle. */
  int cyc = c->no_sync;
  r->iteration_s = K == cyc ? (ie[K - 1] - is[0]) / K : (ie[K - 1] - is[cyc]) / (K - cyc);
  const double *lw = en + nb, *cw = lw + K;
  int first = K == cyc ? 0 : cyc;
  for (int it = first; it < K; it++) {
    r->loading_s += lw[it] / (K - first);
    r->transfer_s += cw[it] / (K - first);
  }
  r->exposed_comm_s = r->iteration_s - r->compute_s - r->loading_s - r->transfer_s;
  if (r->exposed_comm_s < 0 && r->exposed_comm_s > -1e-9 * r->iteration_s) r->exposed_comm_s = 0;
  double base = is[K - 1];
  for (int b = 0; b < nb; b++) {
    r->buckets[b].index = b;
    r->buckets[b].bytes = r->plan.b[b].bytes;
    r->buckets[b].ready_s = rd[b] - base;
    r->buckets[b].comm_start_s = st[b] - base;
    r->buckets[b].comm_end_s = en[b] - base;
    r->comm_busy_s += en[b] - st[b];
  }
  r->messages = head.messages;
  struct rusage ru;
  if (getrusage(RUSAGE_CHILDREN, &ru) == 0) r->peak_rss_kb = ru.ru_maxrss;
  rc = ERR_OK;
done:
  if (pipefd[0] >= 0) close(pipefd[0]);
  if (pipefd[1] >= 0) close(pipefd[1]);
  if (pfd >= 0) close(pfd);
  if (have_platform) unlink(platform_path);
  free(wire);
  free(param_seg);
  free(plan.seg_s);
  free(plan.seg_copy_s);
  free(plan.chunk_bytes);
  free(plan.ready_seg);
  free(plan.hook_pre_s);
  free(plan.hook_post_s);
  free(plan.jitter);
  free(plan.edge_bytes);
  free(plan.lat_s);
  free(plan.base_lat_s);
  free(plan.next);
  net_free(&net);
  if (rc) sim_result_free(r);
  r->wall_s = now_s() - wall0;
  return rc;
}
