#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclmodel.h"
#include "version.h"

enum { TID_HOST = 4, TID_COMPUTE = 1, TID_COMM = 2, TID_COPY = 3, TID_COMM2 = 5, TID_COMM3 = 6, TID_GIL_DP = 1000, TID_LOADER = 100 };

/* The trace under construction: the events array and what naming needs. */
typedef struct {
  const sim_config *c;
  const sim_result *r;
  const sim_timeline *t;
  cJSON *ev;
  int bad; /* out of memory somewhere */
} tw;

static cJSON *event(tw *w, const char *name, const char *ph, int pid, int tid) {
  cJSON *e = cJSON_CreateObject();
  if (!e || !cJSON_AddItemToArray(w->ev, e)) {
    cJSON_Delete(e);
    w->bad = 1;
    return NULL;
  }
  if (!cJSON_AddStringToObject(e, "name", name) || !cJSON_AddStringToObject(e, "ph", ph) ||
      !cJSON_AddNumberToObject(e, "pid", pid) || !cJSON_AddNumberToObject(e, "tid", tid))
    w->bad = 1;
  return e;
}

static cJSON *args_of(tw *w, cJSON *e) {
  if (!e) return NULL;
  cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "args");
  if (!a && !(a = cJSON_AddObjectToObject(e, "args"))) w->bad = 1;
  return a;
}

static void arg_num(tw *w, cJSON *e, const char *k, double v) {
  cJSON *a = args_of(w, e);
  if (a && !cJSON_AddNumberToObject(a, k, v)) w->bad = 1;
}

static void arg_str(tw *w, cJSON *e, const char *k, const char *v) {
  cJSON *a = args_of(w, e);
  if (a && !cJSON_AddStringToObject(a, k, v)) w->bad = 1;
}

int trace_json_us(cJSON *o, const char *key, double t_s) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.17g", t_s * 1e6);
  return cJSON_AddRawToObject(o, key, buf) != NULL;
}

int trace_json_dur(cJSON *o, double a_s, double b_s) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.17g", b_s * 1e6 - a_s * 1e6);
  return cJSON_AddRawToObject(o, "dur", buf) != NULL;
}

/* A complete span ("X") from start_s to end_s, seconds of simulated time, in microseconds. */
static cJSON *span_x(tw *w, const char *name, const char *cat, int pid, int tid, double start_s, double end_s) {
  cJSON *e = event(w, name, "X", pid, tid);
  if (e && (!cJSON_AddStringToObject(e, "cat", cat) || !trace_json_us(e, "ts", start_s) || !trace_json_dur(e, start_s, end_s)))
    w->bad = 1;
  return e;
}

/* A thread-scoped instant ("i"). */
static cJSON *instant(tw *w, const char *name, const char *cat, int pid, int tid, double at_s) {
  cJSON *e = event(w, name, "i", pid, tid);
  if (e && (!cJSON_AddStringToObject(e, "cat", cat) || !trace_json_us(e, "ts", at_s) ||
            !cJSON_AddStringToObject(e, "s", "t")))
    w->bad = 1;
  return e;
}

/* One end of a flow arrow: "s" (binds to the slice enclosing it) or "f" (to the next slice that
 * begins on its thread, the collective). */
static void flow(tw *w, const char *ph, const char *name, int pid, int tid, double at_s, double id) {
  cJSON *e = event(w, name, ph, pid, tid);
  if (e && (!cJSON_AddStringToObject(e, "cat", "bucket") || !trace_json_us(e, "ts", at_s) ||
            !cJSON_AddNumberToObject(e, "id", id)))
    w->bad = 1;
}

static void meta(tw *w, const char *what, int pid, int tid, const char *key, cJSON *value) {
  cJSON *e = value ? event(w, what, "M", pid, tid) : NULL;
  cJSON *a = e ? args_of(w, e) : NULL;
  if (!a || !cJSON_AddItemToObject(a, key, value)) {
    if (!a) cJSON_Delete(value);
    w->bad = 1;
  }
}

static int synced(const sim_timeline *t, int it) { return t->ranks > 1 && it % t->no_sync == t->no_sync - 1; }

static const char derived_ops[] =
    "derived: the engine simulated this phase as one activity; each op's span is its share of it by the plan's "
    "per-op costs";

/* The model's ops of one phase as children of a simulated span [a, b] (timeline_divide), and DDP's
 * copies into buckets after them where extra_s > 0. */
typedef struct {
  tw *w;
  int pid, tid, it, seg;
  double extra_s;
} op_ctx;

static void op_child(void *user, int o, double s0, double s1) {
  op_ctx *x = user;
  tw *w = x->w;
  if (w->bad) return;
  if (o < 0) {
    cJSON *e = span_x(w, "copy gradients into buckets", "copy", x->pid, x->tid, s0, s1);
    arg_num(w, e, "planned_us", x->extra_s * 1e6);
    arg_num(w, e, "iteration", x->it);
    arg_str(w, e, "source", "derived: DDP's copies of this segment's gradients into their buckets, played with the "
                            "segment's ops as one activity; its share of it by the plan's costs");
    return;
  }
  cJSON *e = span_x(w, w->c->model->ops[o].name, "op", x->pid, x->tid, s0, s1);
  arg_num(w, e, "op_index", o);
  arg_num(w, e, "iteration", x->it);
  model_phase ph = w->c->model->ops[o].phase;
  arg_str(w, e, "phase", ph == MODEL_PHASE_FORWARD ? "forward" : ph == MODEL_PHASE_OPTIMIZER ? "optimizer" : "backward");
  arg_num(w, e, "planned_us", w->t->op_s[o] * 1e6);
  arg_str(w, e, "source", derived_ops);
}

static void op_children(tw *w, int pid, int tid, int it, int seg, double extra_s, double a, double b) {
  op_ctx x = {.w = w, .pid = pid, .tid = tid, .it = it, .seg = seg, .extra_s = extra_s};
  timeline_divide(w->t, seg, extra_s, a, b, op_child, &x);
}

/* Gradient-ready instant at the end of backward segment s: the parameters whose gradients it made final. */
static void grads_ready(tw *w, int pid, int tid, int s, double at_s) {
  const model_t *m = w->c->model;
  const sim_timeline *t = w->t;
  cJSON *names = cJSON_CreateArray();
  int n = 0;
  for (int o = 0; names && o < t->nops; o++) {
    if (t->op_seg[o] != s) continue;
    for (int k = 0; k < m->ops[o].ready_count; k++, n++)
      if (!cJSON_AddItemToArray(names, cJSON_CreateString(m->params[m->ready[m->ops[o].ready_first + k]].name))) w->bad = 1;
  }
  if (!names || n == 0) {
    if (!names) w->bad = 1;
    cJSON_Delete(names);
    return;
  }
  char label[64];
  snprintf(label, sizeof label, "gradients ready (%d)", n);
  cJSON *e = instant(w, label, "gradient", pid, tid, at_s);
  cJSON *a = args_of(w, e);
  if (!a || !cJSON_AddItemToObject(a, "params", names)) {
    cJSON_Delete(names);
    w->bad = 1;
  }
  arg_num(w, e, "segment", s);
  arg_str(w, e, "source", "simulated: the end of the backward segment");
}

static double flow_id(const sim_timeline *t, int rank, int it, int b) {
  return ((double)rank * t->iterations + it) * (t->nb > 0 ? t->nb : 1) + b + 1;
}

static int tid_of(const timeline_span *s, int dp) {
  if (dp) return s->track == TIMELINE_TRACK_GIL ? TID_GIL_DP : 1 + s->rank;
  switch (s->track) {
  case TIMELINE_TRACK_COMM: return TID_COMM;
  case TIMELINE_TRACK_COMM2: return TID_COMM2;
  case TIMELINE_TRACK_COMM3: return TID_COMM3;
  case TIMELINE_TRACK_COPY: return TID_COPY;
  case TIMELINE_TRACK_LOADER: return TID_LOADER + s->index;
  case TIMELINE_TRACK_HOST: return TID_HOST;
  default: return TID_COMPUTE;
  }
}

/* Every span of simulated rank q, shown as job rank `pid`. */
static void rank_events(tw *w, int q, int pid) {
  const sim_timeline *t = w->t;
  const sim_result *r = w->r;
  int dp = t->dataparallel;
  if (dp) pid = 0; /* one process; the GPU is the thread */
  for (long i = 0; i < t->n && !w->bad; i++) {
    const timeline_span *s = &t->spans[i];
    if (s->rank != q) continue;
    int tid = tid_of(s, dp);
    const char *src = !s->derived ? "simulated"
                                  : "derived: the host's clock in the plan's pipeline of this iteration (sim/pipe.h), placed at the "
                                    "simulated start of its forward";
    char name[192];
    snprintf(name, sizeof name, "%s", timeline_kind_name(s->kind));
    cJSON *e = NULL;
    switch (s->kind) {
    case TIMELINE_READY: {
      const sim_bucket_time *bt = &r->buckets[s->index];
      snprintf(name, sizeof name, "bucket %d ready", s->index);
      e = instant(w, name, "bucket", pid, tid, s->start_s);
      arg_num(w, e, "bucket", s->index);
      arg_num(w, e, "bytes", (double)bt->bytes);
      arg_num(w, e, "iteration", s->iter);
      arg_str(w, e, "source", src);
      flow(w, "s", "bucket ready -> all-reduce", pid, tid, s->start_s, flow_id(t, pid, s->iter, s->index));
      continue;
    }
    case TIMELINE_COLLECTIVE: {
      const sim_bucket_time *bt = &r->buckets[s->index];
      snprintf(name, sizeof name, "all-reduce bucket %d", s->index);
      flow(w, "f", "bucket ready -> all-reduce", pid, tid, s->start_s, flow_id(t, pid, s->iter, s->index));
      e = span_x(w, name, "nccl", pid, tid, s->start_s, s->end_s);
      arg_num(w, e, "bucket", s->index);
      arg_num(w, e, "bytes", (double)bt->bytes);
      arg_num(w, e, "wire_bytes", (double)bt->wire_bytes);
      arg_str(w, e, "algorithm", nccl_algo_name((nccl_algo)bt->algo));
      arg_str(w, e, "protocol", nccl_proto_name((nccl_proto)bt->proto));
      arg_num(w, e, "nccl_estimate_us", bt->nccl_estimate_s * 1e6);
      arg_num(w, e, "params", r->plan.b[s->index].ntensors);
      break;
    }
    case TIMELINE_FSDP_OPS:
      snprintf(name, sizeof name, "%s", s->index < t->npieces ? t->pieces[s->index] : "FSDP ops");
      e = span_x(w, name, "compute", pid, tid, s->start_s, s->end_s);
      op_children(w, pid, tid, s->iter, s->index, 0, s->start_s, s->end_s);
      break;
    case TIMELINE_FSDP_COPY:
      e = span_x(w, name, "copy", pid, tid, s->start_s, s->end_s);
      arg_num(w, e, "unit", s->index);
      break;
    case TIMELINE_FSDP_WAIT: {
      snprintf(name, sizeof name, "waiting for %s", s->index < t->ncolls ? t->colls[s->index].name : "an FSDP collective");
      e = span_x(w, name, "wait", pid, tid, s->start_s, s->end_s);
      /* A flow from the collective's end to the end of the wait it released. */
      for (long j = 0; j < t->n; j++) {
        const timeline_span *c = &t->spans[j];
        if (c->rank != q || c->iter != s->iter || c->kind != TIMELINE_FSDP_COLL || c->index != s->index) continue;
        double id = ((double)q * t->iterations + s->iter) * (t->ncolls > 0 ? t->ncolls : 1) + s->index + 1;
        flow(w, "s", "FSDP collective -> compute", pid, tid_of(c, dp), c->end_s, id);
        flow(w, "f", "FSDP collective -> compute", pid, tid, s->end_s, id);
        break;
      }
      break;
    }
    case TIMELINE_FSDP_COLL: {
      const timeline_coll *tc = s->index < t->ncolls ? &t->colls[s->index] : NULL;
      snprintf(name, sizeof name, "%s", tc ? tc->name : "FSDP collective");
      e = span_x(w, name, "nccl", pid, tid, s->start_s, s->end_s);
      if (tc) {
        arg_num(w, e, "bytes", tc->bytes);
        arg_str(w, e, "algorithm", nccl_algo_name((nccl_algo)tc->algo));
        arg_str(w, e, "protocol", nccl_proto_name((nccl_proto)tc->proto));
      }
      break;
    }
    case TIMELINE_HOOK_PRE:
    case TIMELINE_HOOK_POST:
      snprintf(name, sizeof name, "%s, bucket %d", timeline_kind_name(s->kind), s->index);
      e = span_x(w, name, "hook", pid, tid, s->start_s, s->end_s);
      arg_num(w, e, "bucket", s->index);
      break;
    case TIMELINE_ITERATION:
      snprintf(name, sizeof name, "iteration %d", s->iter);
      e = span_x(w, name, "iteration", pid, tid, s->start_s, s->end_s);
      arg_str(w, e, "all_reduces", dp ? "DataParallel reduces to GPU 0" : synced(t, s->iter) ? "yes" : "no (no_sync)");
      break;
    case TIMELINE_SEGMENT:
      snprintf(name, sizeof name, "backward segment %d", s->index);
      e = span_x(w, name, "compute", pid, tid, s->start_s, s->end_s);
      arg_num(w, e, "segment", s->index);
      op_children(w, pid, tid, s->iter, s->index, synced(t, s->iter) ? t->seg_copy_s[s->index] : 0, s->start_s, s->end_s);
      grads_ready(w, pid, tid, s->index, s->end_s);
      break;
    case TIMELINE_FORWARD:
      e = span_x(w, name, "compute", pid, tid, s->start_s, s->end_s);
      op_children(w, pid, tid, s->iter, -1, 0, s->start_s, s->end_s);
      break;
    case TIMELINE_OPTIMIZER:
      e = span_x(w, name, "compute", pid, tid, s->start_s, s->end_s);
      op_children(w, pid, tid, s->iter, -2, 0, s->start_s, s->end_s);
      break;
    case TIMELINE_BACKWARD_REST:
      e = span_x(w, name, "compute", pid, tid, s->start_s, s->end_s);
      break;
    case TIMELINE_HOST_FORWARD:
    case TIMELINE_HOST_BACKWARD:
    case TIMELINE_HOST_TAIL:
    case TIMELINE_HOST_SYNC:
      e = span_x(w, name, "host", pid, tid, s->start_s, s->end_s);
      break;
    case TIMELINE_DP_BACKWARD:
      e = span_x(w, name, "compute", pid, tid, s->start_s, s->end_s);
      op_children(w, pid, tid, s->iter, 0, 0, s->start_s, s->end_s);
      break;
    case TIMELINE_LOAD:
      snprintf(name, sizeof name, "load batch %d", s->iter);
      e = span_x(w, name, "input", pid, tid, s->start_s, s->end_s);
      arg_num(w, e, "worker", s->index);
      break;
    case TIMELINE_H2D:
    case TIMELINE_COPY_BACK:
    case TIMELINE_DP_SCATTER:
      e = span_x(w, name, "copy", pid, tid, s->start_s, s->end_s);
      break;
    case TIMELINE_BROADCAST:
    case TIMELINE_DP_REPLICATE:
    case TIMELINE_DP_GATHER:
    case TIMELINE_DP_REDUCE:
      e = span_x(w, name, "comm", pid, tid, s->start_s, s->end_s);
      break;
    default:
      e = span_x(w, name, "wait", pid, tid, s->start_s, s->end_s);
      break;
    }
    arg_num(w, e, "iteration", s->iter);
    arg_str(w, e, "source", src);
  }
}

/* Process and thread names of job rank `pid` shown from simulated rank q. */
static void rank_meta(tw *w, int q, int pid) {
  const sim_timeline *t = w->t;
  int gpn = t->gpus_per_node, node = pid / gpn, gpu = pid % gpn;
  char name[160];
  if (t->dataparallel) {
    if (pid == 0) {
      snprintf(name, sizeof name, "DataParallel: one Python process, %d GPUs", t->ranks);
      meta(w, "process_name", 0, 0, "name", cJSON_CreateString(name));
      meta(w, "thread_name", 0, TID_GIL_DP, "name", cJSON_CreateString("GIL (the replicas' Python threads)"));
      meta(w, "thread_sort_index", 0, TID_GIL_DP, "sort_index", cJSON_CreateNumber(-1));
    }
    snprintf(name, sizeof name, "GPU %d (replica %d)", pid, pid);
    meta(w, "thread_name", 0, 1 + pid, "name", cJSON_CreateString(name));
    return;
  }
  if (q == pid) snprintf(name, sizeof name, "rank %d (node %d, GPU %d)", pid, node, gpu);
  else snprintf(name, sizeof name, "rank %d (node %d, GPU %d) = simulated rank %d", pid, node, gpu, q);
  meta(w, "process_name", pid, 0, "name", cJSON_CreateString(name));
  meta(w, "process_sort_index", pid, 0, "sort_index", cJSON_CreateNumber(pid));
  if (q != pid) {
    snprintf(name, sizeof name, "not simulated: a copy of its symmetric twin, rank %d", q);
    meta(w, "process_labels", pid, 0, "labels", cJSON_CreateString(name));
  }
  int used[TIMELINE_TRACK_COUNT] = {0}, workers = 0;
  for (long i = 0; i < t->n; i++) {
    const timeline_span *s = &t->spans[i];
    if (s->rank != q) continue;
    used[s->track] = 1;
    if (s->track == TIMELINE_TRACK_LOADER && s->index + 1 > workers) workers = s->index + 1;
  }
  int fsdp = t->ncolls > 0;
  const char *names[TIMELINE_TRACK_COUNT] = {[TIMELINE_TRACK_COMPUTE] = "compute stream",
                                             [TIMELINE_TRACK_COMM] = fsdp ? "NCCL stream (FSDP's all-gathers)" : "NCCL stream",
                                             [TIMELINE_TRACK_COPY] = "H2D copy stream (prefetch)",
                                             [TIMELINE_TRACK_COMM2] = "NCCL stream (FSDP's reduce-scatters)",
                                             [TIMELINE_TRACK_COMM3] = "NCCL stream (HSDP's all-reduces)"};
  static const int tids[TIMELINE_TRACK_COUNT] = {[TIMELINE_TRACK_COMPUTE] = TID_COMPUTE, [TIMELINE_TRACK_COMM] = TID_COMM,
                                                 [TIMELINE_TRACK_COPY] = TID_COPY, [TIMELINE_TRACK_COMM2] = TID_COMM2,
                                                 [TIMELINE_TRACK_COMM3] = TID_COMM3};
  for (int k = 0; k < TIMELINE_TRACK_COUNT; k++)
    if (names[k] && (used[k] || k == TIMELINE_TRACK_COMPUTE)) {
      meta(w, "thread_name", pid, tids[k], "name", cJSON_CreateString(names[k]));
      meta(w, "thread_sort_index", pid, tids[k], "sort_index", cJSON_CreateNumber(tids[k]));
    }
  if (used[TIMELINE_TRACK_HOST]) { /* above the streams it feeds */
    meta(w, "thread_name", pid, TID_HOST, "name", cJSON_CreateString("host: the training loop's thread issuing ops"));
    meta(w, "thread_sort_index", pid, TID_HOST, "sort_index", cJSON_CreateNumber(0));
  }
  for (int k = 0; k < workers; k++) {
    snprintf(name, sizeof name, "DataLoader worker %d", k);
    meta(w, "thread_name", pid, TID_LOADER + k, "name", cJSON_CreateString(name));
    meta(w, "thread_sort_index", pid, TID_LOADER + k, "sort_index", cJSON_CreateNumber(TID_LOADER + k));
  }
}

/* The simulated rank that job rank `rank` is shown from: itself, or its twin on node (node mod the
 * simulated nodes), the same GPU (symmetry, sim/plan.h). */
int trace_twin(const sim_timeline *t, int rank) {
  if (t->dataparallel || rank < t->sim_ranks) return rank;
  int gpn = t->gpus_per_node;
  return (rank / gpn) % t->sim_nodes * gpn + rank % gpn;
}

static void other_data(tw *w, cJSON *o, const int *ranks, int nranks) {
  const sim_config *c = w->c;
  const sim_timeline *t = w->t;
  cJSON *m = cJSON_AddObjectToObject(o, "otherData");
  if (!m) {
    w->bad = 1;
    return;
  }
  char buf[512];
  snprintf(buf, sizeof buf, "%s on %d x %d GPUs (%s, %s)", c->model->name, c->nodes, w->r->gpus / c->nodes, c->topo->name,
           profile_name(c->profile));
  cJSON_AddStringToObject(m, "scenario", buf);
  cJSON_AddStringToObject(m, "generator", "ddpsim trace");
  cJSON_AddStringToObject(m, "time_unit", "microseconds of simulated time from the start of the run");
  cJSON_AddNumberToObject(m, "ranks", t->ranks);
  cJSON_AddNumberToObject(m, "ranks_simulated", t->sim_ranks);
  cJSON_AddNumberToObject(m, "iterations", t->iterations);
  /* The host beside the GPU: rank 0's totals per steady iteration (docs/simulation.md, "Host and
   * device"); the compute track's spans are the stream's, host waits included. */
  cJSON *hd = cJSON_AddObjectToObject(m, "host_device_rank0_per_iteration_us");
  if (hd) {
    cJSON_AddNumberToObject(hd, "host_busy", w->r->host_busy_s * 1e6);
    cJSON_AddNumberToObject(hd, "device_busy", w->r->device_busy_s * 1e6);
    cJSON_AddNumberToObject(hd, "host_bound", w->r->host_bound_s * 1e6);
    cJSON_AddNumberToObject(hd, "device_bound", w->r->device_bound_s * 1e6);
  }
  cJSON *shown = cJSON_AddArrayToObject(m, "ranks_shown");
  for (int i = 0; shown && i < nranks; i++) cJSON_AddItemToArray(shown, cJSON_CreateNumber(ranks[i]));
  if (t->dataparallel)
    cJSON_AddStringToObject(m, "simulation", "DataParallel: one process; the engine played every GPU's phases in order, the "
                                             "copies between the GPUs as transfers over the node's links; the host's issuing "
                                             "and the GIL's turns are the plan's closed form (sim/dp.h)");
  else if (t->sim_ranks < t->ranks) {
    snprintf(buf, sizeof buf,
             "symmetry: the engine simulated %d of %d nodes (ranks 0-%d); every node does the same at the same time, so "
             "rank r on node n >= %d shows the spans of rank (n mod %d) * %d + r mod %d, its twin, and says so in its "
             "process name and labels",
             t->sim_nodes, t->ranks / t->gpus_per_node, t->sim_ranks - 1, t->sim_nodes, t->sim_nodes, t->gpus_per_node,
             t->gpus_per_node);
    cJSON_AddStringToObject(m, "simulation", buf);
  } else {
    cJSON_AddStringToObject(m, "simulation", "every rank simulated");
  }
  cJSON_AddStringToObject(m, "derived", derived_ops);
  if (!cJSON_GetObjectItemCaseSensitive(m, "derived")) w->bad = 1;
}

int trace_check_ranks(const sim_timeline *t, const int *ranks, int nranks, err_t *e) {
  if (nranks > TRACE_MAX_RANKS) return err_set(e, ERR_USAGE, "a trace shows at most %d ranks, not %d", TRACE_MAX_RANKS, nranks);
  for (int i = 0; i < nranks; i++) {
    if (ranks[i] < 0 || ranks[i] >= t->ranks)
      return err_set(e, ERR_USAGE, "rank %d is not in the job (ranks 0-%d)", ranks[i], t->ranks - 1);
    for (int j = 0; j < i; j++)
      if (ranks[j] == ranks[i]) return err_set(e, ERR_USAGE, "rank %d is listed twice", ranks[i]);
  }
  return ERR_OK;
}

int trace_build(const sim_config *c, const predict_result *p, const int *ranks, int nranks, cJSON **out, err_t *e) {
  const sim_timeline *t = p->sim.timeline;
  *out = NULL;
  if (!t) return err_set(e, ERR_INPUT, "internal: the prediction recorded no timeline to trace");
  int *sel = NULL;
  if (!ranks) {
    nranks = t->sim_ranks;
    if (!(sel = malloc((size_t)(nranks > 0 ? nranks : 1) * sizeof *sel))) return err_set(e, ERR_NOMEM, "out of memory");
    for (int i = 0; i < nranks; i++) sel[i] = i;
    ranks = sel;
  }
  int rc = trace_check_ranks(t, ranks, nranks, e);
  if (rc) {
    free(sel);
    return rc;
  }
  cJSON *o = cJSON_CreateObject();
  tw w = {.c = c, .r = &p->sim, .t = t, .ev = o ? cJSON_AddArrayToObject(o, "traceEvents") : NULL};
  w.bad = !w.ev || !cJSON_AddStringToObject(o, "displayTimeUnit", "ms") || version_stamp(o);
  for (int i = 0; i < nranks && !w.bad; i++) {
    int q = trace_twin(t, ranks[i]);
    rank_meta(&w, q, ranks[i]);
    rank_events(&w, q, ranks[i]);
  }
  if (!w.bad) other_data(&w, o, ranks, nranks);
  free(sel);
  if (w.bad) {
    cJSON_Delete(o);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  *out = o;
  return ERR_OK;
}

int trace_parse_ranks(const char *text, int job_ranks, int *out, int *n, err_t *e) {
  *n = 0;
  if (!strcmp(text, "simulated")) {
    *n = -1;
    return ERR_OK;
  }
  if (!strcmp(text, "all")) {
    if (job_ranks > TRACE_MAX_RANKS)
      return err_set(e, ERR_USAGE, "--ranks all: the job has %d ranks, a trace shows at most %d", job_ranks, TRACE_MAX_RANKS);
    for (int i = 0; i < job_ranks; i++) out[(*n)++] = i;
    return ERR_OK;
  }
  const char *s = text;
  while (*s) {
    char *end;
    errno = 0;
    long a = strtol(s, &end, 10), b = a;
    if (end == s || a < 0 || errno) return err_set(e, ERR_USAGE, "--ranks: '%s' is not a rank list (e.g. 0,3,8-15, all, simulated)", text);
    if (*end == '-') {
      s = end + 1;
      b = strtol(s, &end, 10);
      if (end == s || b < a || errno) return err_set(e, ERR_USAGE, "--ranks: '%s' has a bad range", text);
    }
    if (b >= job_ranks) return err_set(e, ERR_USAGE, "--ranks: rank %ld is not in the job (ranks 0-%d)", b, job_ranks - 1);
    if (*n + (b - a + 1) > TRACE_MAX_RANKS) return err_set(e, ERR_USAGE, "--ranks: a trace shows at most %d ranks", TRACE_MAX_RANKS);
    for (long r = a; r <= b; r++) out[(*n)++] = (int)r;
    if (*end == ',') end++;
    else if (*end) return err_set(e, ERR_USAGE, "--ranks: '%s' is not a rank list (e.g. 0,3,8-15, all, simulated)", text);
    s = end;
  }
  if (*n == 0) return err_set(e, ERR_USAGE, "--ranks: no rank given");
  return ERR_OK;
}
