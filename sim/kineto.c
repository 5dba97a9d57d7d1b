/* kineto: PyTorch profiler (Kineto) traces of a prediction, one per rank (kineto.h). */
#include "kineto.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "ncclmodel.h"
#include "strbuf.h"
#include "trace.h"
#include "version.h"

/* Streams (tid of the device's process) and the host's process: ddpsim's numbering, in the range
 * real traces show (PyTorch's default stream appears as 7). docs/trace.md. */
enum { STREAM_COMPUTE = 7, STREAM_NCCL = 20, STREAM_COPY = 21, STREAM_NCCL2 = 22, STREAM_NCCL3 = 23, HOST_PID_BASE = 10000,
       TID_COMM_THREAD = 1 };

/* CUPTI's callback ids of the runtime calls a launch is (cupti_runtime_cbid.h, CUDA 12). */
enum { CBID_LAUNCH_KERNEL = 211, CBID_MEMCPY_ASYNC = 41 };

/* One GPU activity of an iteration, before its launch time is known. */
typedef struct {
  char name[160];
  int memcpy;        /* 1: a Memcpy (gpu_memcpy, cudaMemcpyAsync), else a kernel */
  int host_comm;     /* 1: a gloo/MPI collective: a host span, not a GPU one */
  int stream;
  int phase;         /* whose host window launches it: 0 forward, 1 backward, 2 tail */
  double start_s, end_s;
  const char *source;
  int op, bucket;    /* the model op, the bucket; -1 where none */
} kern;

typedef struct {
  const sim_config *c;
  const predict_result *p;
  const sim_timeline *t;
  int rank, q, device, host_pid;
  cJSON *ev;
  kern *k;
  int nk, capk;
  long corr;         /* the last correlation id given */
  int it;            /* the iteration being laid out */
  double sync_s;     /* the end of the previous iteration's GPU work: the training loop's sync returns
                        then, so no later launch is earlier (the same instant, computed once) */
  int bad;
} kw;

static const char derived[] =
    "derived: the engine played this phase as one activity; each op's span is its share of it by the plan's per-op costs";

static kern *add_kern(kw *w, const char *name, int stream, int phase, double a, double b, const char *src) {
  if (w->nk == w->capk) {
    int cap = w->capk ? 2 * w->capk : 256;
    kern *g = realloc(w->k, (size_t)cap * sizeof *g);
    if (!g) {
      w->bad = 1;
      return NULL;
    }
    w->k = g;
    w->capk = cap;
  }
  kern *k = &w->k[w->nk++];
  memset(k, 0, sizeof *k);
  snprintf(k->name, sizeof k->name, "%s", name);
  k->stream = stream;
  k->phase = phase;
  k->start_s = a;
  k->end_s = b < a ? a : b;
  k->source = src;
  k->op = k->bucket = -1;
  return k;
}

typedef struct {
  kw *w;
  int phase;
} div_ctx;

static void add_op(void *user, int o, double a, double b) {
  div_ctx *x = user;
  kern *k = add_kern(x->w, o < 0 ? "copy gradients into buckets" : x->w->c->model->ops[o].name, STREAM_COMPUTE, x->phase,
                     a, b, derived);
  if (k) k->op = o;
}

static void divide(kw *w, int seg, double extra_s, int phase, double a, double b) {
  div_ctx x = {w, phase};
  timeline_divide(w->t, seg, extra_s, a, b, add_op, &x);
}

/* NCCL's name of a dtype in its kernels' names (src/device/generate.py: f16, bf16, f32). */
static const char *nccl_type(model_dtype d) { return d == MODEL_FP16 ? "f16" : d == MODEL_BF16 ? "bf16" : "f32"; }

/* The collective's kernel, as NCCL names it (src/device/generate.py): ncclDevKernel_<Coll>_<RedOp>_<type>_<ALGO>_<PROTO>,
 * an all-gather without the reduction and type. */
static void nccl_kernel_name(coll_kind kind, model_dtype d, int algo_i, int proto_i, char *out, size_t len) {
  char algo[16], proto[16];
  snprintf(algo, sizeof algo, "%s", nccl_algo_name((nccl_algo)algo_i));
  snprintf(proto, sizeof proto, "%s", nccl_proto_name((nccl_proto)proto_i));
  for (char *s = algo; *s; s++) *s = (char)(*s >= 'a' && *s <= 'z' ? *s - 32 : *s);
  for (char *s = proto; *s; s++) *s = (char)(*s >= 'a' && *s <= 'z' ? *s - 32 : *s);
  if (kind == COLL_ALLGATHER) snprintf(out, len, "ncclDevKernel_AllGather_%s_%s", algo, proto);
  else
    snprintf(out, len, "ncclDevKernel_%s_Sum_%s_%s_%s", kind == COLL_REDUCESCATTER ? "ReduceScatter" : "AllReduce", nccl_type(d), algo,
             proto);
}

/* The GPU activities of iteration `it` of simulated rank q, in w->k. */
static void collect(kw *w, int it) {
  const sim_timeline *t = w->t;
  const sim_result *r = &w->p->sim;
  int sync = t->ranks > 1 && it % t->no_sync == t->no_sync - 1, nccl = w->c->backend == SIM_BACKEND_NCCL;
  w->nk = 0;
  for (long i = 0; i < t->n && !w->bad; i++) {
    const timeline_span *s = &t->spans[i];
    if (s->rank != w->q || s->iter != it) continue;
    const char *src = s->derived ? "derived" : "simulated";
    kern *k = NULL;
    char name[160];
    switch (s->kind) {
    case TIMELINE_FORWARD: divide(w, -1, 0, 0, s->start_s, s->end_s); break;
    case TIMELINE_SEGMENT: divide(w, s->index, sync ? t->seg_copy_s[s->index] : 0, 1, s->start_s, s->end_s); break;
    case TIMELINE_OPTIMIZER: divide(w, -2, 0, 2, s->start_s, s->end_s); break;
    case TIMELINE_BACKWARD_REST:
      add_kern(w, "backward (ops after the last gradient-ready event)", STREAM_COMPUTE, 1, s->start_s, s->end_s, src);
      break;
    case TIMELINE_COPY_BACK: add_kern(w, timeline_kind_name(s->kind), STREAM_COMPUTE, 2, s->start_s, s->end_s, src); break;
    case TIMELINE_HOOK_PRE:
    case TIMELINE_HOOK_POST:
      k = add_kern(w, timeline_kind_name(s->kind), STREAM_NCCL, 1, s->start_s, s->end_s, src);
      if (k) k->bucket = s->index;
      break;
    case TIMELINE_COLLECTIVE:
      if (nccl) {
        const sim_bucket_time *bt = &r->buckets[s->index];
        model_dtype d = w->c->comm_hook == SIM_HOOK_FP16 ? MODEL_FP16 : w->c->comm_hook == SIM_HOOK_BF16 ? MODEL_BF16 : r->precision;
        nccl_kernel_name(COLL_ALLREDUCE, d, bt->algo, bt->proto, name, sizeof name);
      }
      else snprintf(name, sizeof name, "%s:all_reduce", sim_backend_name(w->c->backend));
      k = add_kern(w, name, STREAM_NCCL, 1, s->start_s, s->end_s, src);
      if (k) k->bucket = s->index, k->host_comm = !nccl;
      break;
    case TIMELINE_FSDP_OPS:
      divide(w, s->index, 0, s->index < t->npieces && strncmp(t->pieces[s->index], "backward", 8) == 0, s->start_s, s->end_s);
      break;
    case TIMELINE_FSDP_COPY: add_kern(w, timeline_kind_name(s->kind), STREAM_COMPUTE, 1, s->start_s, s->end_s, src); break;
    case TIMELINE_FSDP_COLL:
      if (s->index < t->ncolls) {
        const timeline_coll *tc = &t->colls[s->index];
        nccl_kernel_name((coll_kind)tc->kind, (model_dtype)tc->dtype, tc->algo, tc->proto, name, sizeof name);
        add_kern(w, name, s->track == TIMELINE_TRACK_COMM2 ? STREAM_NCCL2 : s->track == TIMELINE_TRACK_COMM3 ? STREAM_NCCL3 : STREAM_NCCL, 1,
                 s->start_s, s->end_s, src);
      }
      break;
    case TIMELINE_BROADCAST:
      if (nccl) snprintf(name, sizeof name, "ncclDevKernel_Broadcast_RING_LL");
      else snprintf(name, sizeof name, "%s:broadcast", sim_backend_name(w->c->backend));
      k = add_kern(w, name, STREAM_NCCL, 0, s->start_s, s->end_s, src);
      if (k) k->host_comm = !nccl;
      break;
    case TIMELINE_H2D:
      k = add_kern(w, r->h2d == SIM_H2D_PAGEABLE ? "Memcpy HtoD (Pageable -> Device)" : "Memcpy HtoD (Pinned -> Device)",
                   s->track == TIMELINE_TRACK_COPY ? STREAM_COPY : STREAM_COMPUTE, 0, s->start_s, s->end_s, src);
      if (k) k->memcpy = 1;
      break;
    default: break; /* waits (the GPU idles), instants, loads, host spans, the iteration itself */
    }
  }
}

static cJSON *event(kw *w, const char *ph, const char *cat, const char *name, int pid, int tid, double ts_s) {
  cJSON *e = cJSON_CreateObject();
  if (!e || !cJSON_AddItemToArray(w->ev, e)) {
    cJSON_Delete(e);
    w->bad = 1;
    return NULL;
  }
  if (!cJSON_AddStringToObject(e, "ph", ph) || (cat && !cJSON_AddStringToObject(e, "cat", cat)) ||
      !cJSON_AddStringToObject(e, "name", name) || !cJSON_AddNumberToObject(e, "pid", pid) ||
      !cJSON_AddNumberToObject(e, "tid", tid) || !trace_json_us(e, "ts", ts_s))
    w->bad = 1;
  return e;
}

static cJSON *span(kw *w, const char *cat, const char *name, int pid, int tid, double a_s, double b_s) {
  cJSON *e = event(w, "X", cat, name, pid, tid, a_s);
  /* Exact, so that HTA tells a launch after a kernel's end from one at its end (sim/trace.h). */
  if (e && !trace_json_dur(e, a_s, b_s)) w->bad = 1;
  return e;
}

static cJSON *args(kw *w, cJSON *e) {
  cJSON *a = e ? cJSON_AddObjectToObject(e, "args") : NULL;
  if (!a) w->bad = 1;
  return a;
}

static void num(kw *w, cJSON *a, const char *k, double v) {
  if (a && !cJSON_AddNumberToObject(a, k, v)) w->bad = 1;
}

static void str(kw *w, cJSON *a, const char *k, const char *v) {
  if (a && !cJSON_AddStringToObject(a, k, v)) w->bad = 1;
}

static void meta(kw *w, const char *what, int pid, int tid, const char *key, const char *sval, double nval) {
  cJSON *e = event(w, "M", NULL, what, pid, tid, 0), *a = args(w, e);
  if (sval) str(w, a, key, sval);
  else num(w, a, key, nval);
}

/* The host's window issuing phase ph of iteration it: its host-track span, or [at, at] where the
 * profile has no host costs (an instant host: everything is issued at the start of the step). */
static void host_window(kw *w, int it, int ph, double at, double *a, double *b) {
  static const int kinds[3] = {TIMELINE_HOST_FORWARD, TIMELINE_HOST_BACKWARD, TIMELINE_HOST_TAIL};
  *a = *b = at;
  for (long i = 0; i < w->t->n; i++) {
    const timeline_span *s = &w->t->spans[i];
    if (s->rank == w->q && s->iter == it && s->kind == kinds[ph]) {
      *a = s->start_s;
      *b = s->end_s;
      return;
    }
  }
}

static int by_phase_then_start(const void *x, const void *y) {
  const kern *a = x, *b = y;
  if (a->phase != b->phase) return a->phase - b->phase;
  return (a->start_s > b->start_s) - (a->start_s < b->start_s);
}

/* The iteration's step, its GPU spans, their launches and flows. */
static void emit_iteration(kw *w, int it, double step_a, double step_b) {
  char step[32];
  snprintf(step, sizeof step, "ProfilerStep#%d", it);
  cJSON *a = args(w, span(w, "user_annotation", step, w->host_pid, w->host_pid, step_a, step_b));
  num(w, a, "External id", (double)++w->corr);
  collect(w, it);
  if (w->bad) return;
  qsort(w->k, (size_t)w->nk, sizeof *w->k, by_phase_then_start);
  int n[3] = {0}, j[3] = {0};
  for (int i = 0; i < w->nk; i++) n[w->k[i].phase]++;
  double wa[3], wb[3];
  for (int ph = 0; ph < 3; ph++) host_window(w, it, ph, step_a, &wa[ph], &wb[ph]);
  for (int i = 0; i < w->nk && !w->bad; i++) {
    const kern *k = &w->k[i];
    int ph = k->phase;
    double slot = (wb[ph] - wa[ph]) / n[ph], launch = wa[ph] + slot * j[ph]++;
    if (launch < step_a) launch = step_a;
    if (launch < w->sync_s) launch = w->sync_s;
    if (launch > k->start_s) launch = k->start_s;
    double launch_end = launch + slot < k->start_s ? launch + slot : k->start_s;
    if (k->host_comm) { /* gloo, MPI: the host's collective, on the process group's thread */
      cJSON *e = args(w, span(w, "user_annotation", k->name, w->host_pid, w->host_pid + TID_COMM_THREAD, k->start_s, k->end_s));
      num(w, e, "External id", (double)++w->corr);
      if (k->bucket >= 0) num(w, e, "bucket", k->bucket);
      str(w, e, "ddpsim_source", k->source);
      continue;
    }
    long corr = ++w->corr;
    cJSON *rt = args(w, span(w, "cuda_runtime", k->memcpy ? "cudaMemcpyAsync" : "cudaLaunchKernel", w->host_pid, w->host_pid,
                             launch, launch_end));
    num(w, rt, "External id", (double)corr);
    num(w, rt, "cbid", k->memcpy ? CBID_MEMCPY_ASYNC : CBID_LAUNCH_KERNEL);
    num(w, rt, "correlation", (double)corr);
    cJSON *g = args(w, span(w, k->memcpy ? "gpu_memcpy" : "kernel", k->name, w->device, k->stream, k->start_s, k->end_s));
    num(w, g, "External id", (double)corr);
    num(w, g, "device", w->device);
    num(w, g, "context", 1);
    num(w, g, "stream", k->stream);
    num(w, g, "correlation", (double)corr);
    if (k->op >= 0) num(w, g, "op_index", k->op), num(w, g, "planned_us", w->t->op_s[k->op] * 1e6);
    if (k->bucket >= 0) {
      const sim_bucket_time *bt = &w->p->sim.buckets[k->bucket];
      num(w, g, "bucket", k->bucket);
      num(w, g, "bytes", (double)bt->wire_bytes);
      str(w, g, "algorithm", nccl_algo_name((nccl_algo)bt->algo));
      str(w, g, "protocol", nccl_proto_name((nccl_proto)bt->proto));
    }
    num(w, g, "iteration", it);
    str(w, g, "ddpsim_source", k->source);
    cJSON *s = event(w, "s", "ac2g", "ac2g", w->host_pid, w->host_pid, launch);
    if (s && !cJSON_AddNumberToObject(s, "id", (double)corr)) w->bad = 1;
    cJSON *f = event(w, "f", "ac2g", "ac2g", w->device, k->stream, k->start_s);
    if (f && (!cJSON_AddNumberToObject(f, "id", (double)corr) || !cJSON_AddStringToObject(f, "bp", "e"))) w->bad = 1;
  }
  for (int i = 0; i < w->nk; i++)
    if (w->k[i].stream == STREAM_COMPUTE && w->k[i].end_s > w->sync_s) w->sync_s = w->k[i].end_s;
}

static void top_level(kw *w, cJSON *o) {
  const sim_config *c = w->c;
  const sim_timeline *t = w->t;
  cJSON *di = cJSON_CreateObject(), *dp = cJSON_CreateArray(), *dev = cJSON_CreateObject(), *meta_o = cJSON_CreateObject();
  char buf[512];
  snprintf(buf, sizeof buf, "%s on %d x %d GPUs (%s, %s)", c->model->name, c->nodes, t->ranks / c->nodes, c->topo->name,
           profile_name(c->profile));
  int ok = di && dp && dev && meta_o && cJSON_AddNumberToObject(o, "schemaVersion", 1) &&
           cJSON_AddStringToObject(di, "backend", sim_backend_name(c->backend)) &&
           cJSON_AddNumberToObject(di, "rank", w->rank) && cJSON_AddNumberToObject(di, "world_size", t->ranks) &&
           cJSON_AddNumberToObject(di, "pg_count", 1) && cJSON_AddItemToObject(o, "distributedInfo", di);
  if (!ok) cJSON_Delete(di);
  di = NULL;
  ok = ok && cJSON_AddNumberToObject(dev, "id", w->device) && cJSON_AddStringToObject(dev, "name", profile_name(c->profile)) &&
       cJSON_AddItemToArray(dp, dev);
  if (!ok) cJSON_Delete(dev);
  ok = ok && cJSON_AddItemToObject(o, "deviceProperties", dp);
  if (!ok) cJSON_Delete(dp);
  ok = ok && cJSON_AddNumberToObject(o, "baseTimeNanoseconds", 0) && cJSON_AddStringToObject(o, "displayTimeUnit", "ms") &&
       cJSON_AddStringToObject(meta_o, "scenario", buf) && cJSON_AddStringToObject(meta_o, "generator", "ddpsim trace --format kineto") &&
       cJSON_AddStringToObject(meta_o, "time_unit", "microseconds of simulated time from the start of the run");
  if (ok && w->q != w->rank) {
    snprintf(buf, sizeof buf, "not simulated: a copy of its symmetric twin, rank %d", w->q);
    ok = cJSON_AddStringToObject(meta_o, "simulation", buf) != NULL;
  }
  snprintf(buf, sizeof buf, "iterations %d to %d of %d simulated (the steady state the report averages; earlier ones are "
                            "warm-up, as a profiler schedule's)", t->steady_from, t->iterations - 1, t->iterations);
  ok = ok && cJSON_AddStringToObject(meta_o, "steps", buf) &&
       cJSON_AddStringToObject(meta_o, "launches", "derived: each phase's launches spread evenly over the host's span "
                                                   "issuing it (at the step's start without host costs), none after its kernel") &&
       cJSON_AddItemToObject(o, "ddpsim", meta_o);
  if (!ok) {
    if (!cJSON_GetObjectItemCaseSensitive(o, "ddpsim")) cJSON_Delete(meta_o);
    w->bad = 1;
  }
  if (version_stamp(o)) w->bad = 1;
}

int kineto_build(const sim_config *c, const predict_result *p, int rank, cJSON **out, err_t *e) {
  const sim_timeline *t = p->sim.timeline;
  *out = NULL;
  if (!t) return err_set(e, ERR_INPUT, "internal: the prediction recorded no timeline to trace");
  if (t->dataparallel)
    return err_set(e, ERR_USAGE, "--format kineto: DataParallel is one process, not a trace per rank (use --format chrome)");
  int rc = trace_check_ranks(t, &rank, 1, e);
  if (rc) return rc;
  cJSON *o = cJSON_CreateObject();
  /* Correlation ids start past the int16 range, as a process's CUPTI counter is by the time it is
   * profiled: HTA 0.5.0 under pandas 3 fails on ids small enough to be stored as int8 or int16
   * (trace.py, transform_correlation_to_index). */
  kw w = {.c = c, .p = p, .t = t, .rank = rank, .q = trace_twin(t, rank), .device = rank % t->gpus_per_node,
          .host_pid = HOST_PID_BASE + rank, .corr = 65536, .sync_s = -INFINITY};
  w.bad = !o;
  if (o) top_level(&w, o);
  w.ev = w.bad ? NULL : cJSON_AddArrayToObject(o, "traceEvents");
  w.bad = w.bad || !w.ev;
  char name[96];
  if (!w.bad) {
    snprintf(name, sizeof name, "rank %d (node %d) host", rank, rank / t->gpus_per_node);
    meta(&w, "process_name", w.host_pid, 0, "name", name, 0);
    meta(&w, "process_labels", w.host_pid, 0, "labels", "CPU", 0);
    meta(&w, "thread_name", w.host_pid, w.host_pid, "name", "training loop (main thread)", 0);
    if (c->backend != SIM_BACKEND_NCCL) {
      snprintf(name, sizeof name, "%s process group", sim_backend_name(c->backend));
      meta(&w, "thread_name", w.host_pid, w.host_pid + TID_COMM_THREAD, "name", name, 0);
    }
    snprintf(name, sizeof name, "rank %d GPU %d", rank, w.device);
    meta(&w, "process_name", w.device, 0, "name", name, 0);
    snprintf(name, sizeof name, "GPU %d", w.device);
    meta(&w, "process_labels", w.device, 0, "labels", name, 0);
    meta(&w, "thread_name", w.device, STREAM_COMPUTE, "name", "stream 7 (compute)", 0);
    meta(&w, "thread_name", w.device, STREAM_NCCL, "name", "stream 20 (NCCL)", 0);
    meta(&w, "thread_name", w.device, STREAM_COPY, "name", "stream 21 (prefetch copies)", 0);
    if (t->ncolls > 0) {
      meta(&w, "thread_name", w.device, STREAM_NCCL2, "name", "stream 22 (NCCL: FSDP's reduce-scatters)", 0);
      meta(&w, "thread_name", w.device, STREAM_NCCL3, "name", "stream 23 (NCCL: HSDP's all-reduces)", 0);
    }
  }
  for (long i = 0; i < t->n && !w.bad; i++) {
    const timeline_span *s = &t->spans[i];
    if (s->rank == w.q && s->kind == TIMELINE_ITERATION && s->iter >= t->steady_from) emit_iteration(&w, s->iter, s->start_s, s->end_s);
  }
  free(w.k);
  if (w.bad) {
    cJSON_Delete(o);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  *out = o;
  return ERR_OK;
}

/* Kineto's own layout: the top-level members one per line, `"key": value` (tools find the rank
 * with a regular expression over the text, `"rank":\s+N`: HTA's trace_file.py), then one event
 * per line. NULL when out of memory. */
static char *kineto_text(const cJSON *o) {
  strbuf b = {0};
  strbuf_printf(&b, "{");
  const cJSON *m;
  int first = 1;
  cJSON_ArrayForEach(m, o) {
    strbuf_printf(&b, "%s\n  \"%s\": ", first ? "" : ",", m->string);
    first = 0;
    if (strcmp(m->string, "traceEvents") == 0) {
      strbuf_printf(&b, "[");
      const cJSON *ev;
      int k = 0;
      cJSON_ArrayForEach(ev, m) {
        char *t = cJSON_PrintUnformatted(ev);
        if (!t) b.failed = 1;
        else strbuf_printf(&b, "%s\n  %s", k++ ? "," : "", t);
        free(t);
      }
      strbuf_printf(&b, "\n  ]");
      continue;
    }
    char *t = cJSON_IsObject(m) ? cJSON_Print(m) : cJSON_PrintUnformatted(m);
    if (!t) b.failed = 1;
    else strbuf_printf(&b, "%s", t);
    free(t);
  }
  strbuf_printf(&b, "\n}\n");
  return strbuf_take(&b);
}

int kineto_is_trace_name(const char *name) {
  if (strncmp(name, "rank", 4) != 0) return 0;
  const char *p = name + 4, *digits = p;
  while (*p >= '0' && *p <= '9') p++;
  return p > digits && p - digits <= 10 && strcmp(p, ".pt.trace.json") == 0;
}

int kineto_check(const char *dir, err_t *e) { return afile_dir_check(dir, kineto_is_trace_name, e); }

int kineto_write(const sim_config *c, const predict_result *p, const int *ranks, int nranks, const char *dir, err_t *e) {
  const sim_timeline *t = p->sim.timeline;
  if (!t) return err_set(e, ERR_INPUT, "internal: the prediction recorded no timeline to trace");
  if (t->dataparallel) /* before the directory is made */
    return err_set(e, ERR_USAGE, "--format kineto: DataParallel is one process, not a trace per rank (use --format chrome)");
  int *sel = NULL, rc;
  if (!ranks) {
    nranks = t->sim_ranks;
    if (!(sel = malloc((size_t)(nranks > 0 ? nranks : 1) * sizeof *sel))) return err_set(e, ERR_NOMEM, "out of memory");
    for (int i = 0; i < nranks; i++) sel[i] = i;
    ranks = sel;
  }
  if ((rc = trace_check_ranks(t, ranks, nranks, e))) goto done;
  /* The whole folder is one run: written beside the target and swapped in (common/afile.h), so that
   * a second run never leaves the first one's ranks among its own, nor a killed one half of its. */
  afile_dir d;
  if ((rc = afile_dir_begin(&d, dir, kineto_is_trace_name, e))) goto done;
  for (int i = 0; i < nranks && !rc; i++) {
    cJSON *o;
    if ((rc = kineto_build(c, p, ranks[i], &o, e))) break;
    char *text = kineto_text(o);
    cJSON_Delete(o);
    if (!text) {
      rc = err_set(e, ERR_NOMEM, "out of memory");
      break;
    }
    char name[64];
    snprintf(name, sizeof name, "rank%d.pt.trace.json", ranks[i]);
    if ((rc = afile_write(afile_dir_file(&d, name), text, strlen(text), e))) {
      /* The message names the file as the user will look for it, not in the folder removed. */
      char why[sizeof e->msg];
      const char *at = strstr(e->msg, ": ");
      snprintf(why, sizeof why, "%s", at ? at : ": cannot write");
      err_set(e, rc, "%s/%s%s", dir, name, why);
    }
    free(text);
  }
  if (rc) afile_dir_abort(&d);
  else rc = afile_dir_commit(&d, e);
done:
  free(sel);
  return rc;
}
