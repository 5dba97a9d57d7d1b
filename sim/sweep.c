/* sweep: configurations simulated in parallel, results in order (sweep.h). */
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memory.h"
#include "predict.h"
#include "strbuf.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void fill_row(const sim_result *r, sweep_row *row) {
  row->gpus = r->gpus;
  row->batch = r->batch;
  row->precision = (int)r->precision;
  row->iteration_s = r->iteration_s;
  row->iteration_ci_s = r->jittered ? r->iteration_ci_s : NAN; /* NAN stays NAN: too few cycles */
  row->compute_s = r->compute_s;
  row->forward_s = r->forward_s;
  row->backward_s = r->backward_s;
  row->optimizer_s = r->optimizer_s;
  row->bucket_copy_s = r->bucket_copy_s;
  row->exposed_comm_s = r->exposed_comm_s;
  row->straggler_wait_s = r->straggler_wait_s;
  row->loading_s = r->loading_s;
  row->transfer_s = r->transfer_s;
  row->buffer_broadcast_s = r->buffer_broadcast_s;
  row->comm_busy_s = r->comm_busy_s;
  row->dp_scatter_s = r->dp_scatter_s;
  row->dp_replicate_s = r->dp_replicate_s;
  row->dp_gather_s = r->dp_gather_s;
  row->dp_reduce_s = r->dp_reduce_s;
  row->buckets = r->plan.n;
}

/* The buyer's figures not known until sweep_row_buy fills them. */
static void buy_unknown(sweep_row *row) {
  row->memory_peak_bytes = row->fits = row->max_batch_per_gpu = NAN;
  row->train_s = row->gpu_hours = row->cost = row->energy_kwh = row->co2_kg = NAN;
  row->iteration_s_lo = row->iteration_s_hi = row->samples_per_s_lo = row->samples_per_s_hi = NAN;
}

void sweep_row_fill(const predict_result *p, sweep_row *row) {
  memset(row, 0, sizeof *row);
  buy_unknown(row);
  fill_row(&p->sim, row);
  row->samples_per_s = p->samples_per_s;
  row->tokens_per_s = p->tokens_per_s;
  row->scaling_efficiency = p->scaling_efficiency;
  row->single_gpu_iteration_s = p->single_gpu_iteration_s;
  row->done = 1;
}

/* The one-GPU twins already simulated by this process (predict_twin): a sweep varies nodes, caps
 * and fabrics far more often than what one GPU does, so most twins repeat. A hit needs the twin's
 * configuration equal byte for byte (pointers to the same loaded inputs): never a wrong one. */
#define TWINS 64
typedef struct {
  int n, next;
  sim_config key[TWINS];
  double iteration_s[TWINS];
} twins_t;

int sweep_row_buy(const sim_config *c, model_optim optim, const budget_job *j, sweep_row *row, err_t *e) {
  buy_unknown(row);
  memory_parts m;
  int rc = memory_estimate(c, optim, &m, e);
  if (rc) return rc;
  row->memory_peak_bytes = m.peak_bytes;
  if (m.device_bytes > 0) row->fits = !memory_oom(&m);
  long b = memory_max_batch(&m);
  if (b >= 0) row->max_batch_per_gpu = (double)b;
  if (!j) return ERR_OK;
  profile_device d;
  profile_get_device(c->profile, &d);
  budget_result br;
  if ((rc = budget_compute(j, row->gpus, row->batch, row->iteration_s, row->compute_s, &d, &br, e))) return rc;
  row->train_s = br.train_s;
  row->gpu_hours = br.gpu_hours;
  if (br.has_cost) row->cost = br.cost;
  if (br.has_energy) row->energy_kwh = br.energy_kwh;
  if (br.has_co2) row->co2_kg = br.co2_kg;
  return ERR_OK;
}

static int run_one(const sim_config *c, sweep_what what, sweep_row *row, twins_t *tw) {
  memset(row, 0, sizeof *row);
  buy_unknown(row);
  err_t e;
  if (what == SWEEP_PREDICT) {
    sim_config one;
    memset(&one, 0, sizeof one);
    predict_twin(c, &one);
    predict_opts po = {.skip_early = 1}; /* a row has no use for them */
    int hit = -1;
    for (int k = 0; tw && k < tw->n && hit < 0; k++)
      if (memcmp(&tw->key[k], &one, sizeof one) == 0) hit = k;
    if (hit >= 0) po.single_gpu_iteration_s = tw->iteration_s[hit];
    predict_result p;
    if ((row->status = predict_run_opts(c, &po, &p, &e)) == ERR_OK) {
      sweep_row_fill(&p, row);
      if (tw && hit < 0 && p.sim.gpus > 1) {
        tw->key[tw->next] = one;
        tw->iteration_s[tw->next] = p.single_gpu_iteration_s;
        tw->next = (tw->next + 1) % TWINS;
        if (tw->n < TWINS) tw->n++;
      }
      predict_result_free(&p);
    }
  } else {
    sim_result r;
    if ((row->status = sim_run(c, &r, &e)) == ERR_OK) {
      fill_row(&r, row);
      row->samples_per_s = (double)r.gpus * (double)r.batch / r.iteration_s;
      row->tokens_per_s = row->samples_per_s * (double)c->model->tokens_per_sample;
      sim_result_free(&r);
    }
  }
  if (row->status) snprintf(row->msg, sizeof row->msg, "%s", e.msg);
  row->done = 1;
  return row->status;
}

int sweep_run_one(const sim_config *c, sweep_what what, sweep_row *row) { return run_one(c, what, row, NULL); }

/* What the workers share with the parent: the next configuration to take, how many are done, the
 * lowest failed index (n while none), and the rows. */
typedef struct {
  atomic_int next, done, stop_at;
  sweep_row rows[];
} shared_t;

static void lower_to(atomic_int *a, int v) {
  int cur = atomic_load(a);
  while (v < cur && !atomic_compare_exchange_weak(a, &cur, v)) {
  }
}

static void work(const sim_config *cfgs, int n, sweep_what what, shared_t *sh) {
  static twins_t tw; /* this worker's */
  for (;;) {
    int i = atomic_fetch_add(&sh->next, 1);
    /* Past a failure nothing more is started; before it everything runs, so the lowest failure
     * is found whatever the order the workers took them in. */
    if (i >= n || i > atomic_load(&sh->stop_at)) return;
    if (run_one(&cfgs[i], what, &sh->rows[i], &tw)) lower_to(&sh->stop_at, i);
    atomic_fetch_add(&sh->done, 1);
  }
}

static int first_failure(const sweep_row *rows, int n, err_t *e) {
  for (int i = 0; i < n; i++) {
    if (!rows[i].done) return err_set(e, ERR_SIM, "configuration %d: not simulated (a sweep worker died)", i + 1);
    if (rows[i].status) return err_set(e, rows[i].status, "configuration %d: %s", i + 1, rows[i].msg);
  }
  return ERR_OK;
}

static void report(const sweep_opts *o, int done, int n, double t0, double *last) {
  double t = now_s(), every = o->every_s > 0 ? o->every_s : 0.5;
  if (!o->progress || (done < n && t - *last < every)) return;
  *last = t;
  o->progress(o->progress_arg, done, n, t - t0);
}

int sweep_run(const sim_config *cfgs, int n, const sweep_opts *o, sweep_row *rows, err_t *e) {
  double t0 = now_s(), last = t0;
  int jobs = o->jobs < 1 ? 1 : o->jobs;
  if (jobs > n) jobs = n;
  if (n <= 0) return ERR_OK;
  if (jobs == 1) {
    twins_t *tw = calloc(1, sizeof *tw);
    memset(rows, 0, (size_t)n * sizeof *rows);
    for (int i = 0; i < n; i++) {
      if (run_one(&cfgs[i], o->what, &rows[i], tw)) break;
      report(o, i + 1, n, t0, &last);
    }
    free(tw); /* NULL (out of memory): no cache, the same rows */
    return first_failure(rows, n, e);
  }
  size_t bytes = sizeof(shared_t) + (size_t)n * sizeof(sweep_row);
  shared_t *sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) return err_set(e, ERR_IO, "cannot map memory for the sweep's workers: %s", strerror(errno));
  atomic_init(&sh->next, 0);
  atomic_init(&sh->done, 0);
  atomic_init(&sh->stop_at, n);
  pid_t pid[jobs];
  int started = 0, rc = ERR_OK;
  pid_t parent = getpid();
  fflush(NULL); /* nothing buffered is written twice */
  for (; started < jobs; started++) {
    pid_t p = fork();
    if (p < 0) {
      rc = err_set(e, ERR_IO, "cannot start a sweep worker: %s", strerror(errno));
      break;
    }
    if (p == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
      work(cfgs, n, o->what, sh);
      _exit(0);
    }
    pid[started] = p;
  }
  if (rc) atomic_store(&sh->stop_at, -1); /* the workers started take nothing more */
  int running = started, died = 0;
  while (running > 0) {
    int status;
    pid_t w = o->progress ? waitpid(-1, &status, WNOHANG) : waitpid(-1, &status, 0);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) break;
    if (w == 0) {
      report(o, atomic_load(&sh->done), n, t0, &last);
      nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
      continue;
    }
    for (int k = 0; k < started; k++)
      if (pid[k] == w) {
        running--;
        died |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
      }
  }
  if (!rc) {
    memcpy(rows, sh->rows, (size_t)n * sizeof *rows);
    report(o, atomic_load(&sh->done), n, t0, &last);
    rc = first_failure(rows, n, e);
    if (!rc && died) rc = err_set(e, ERR_SIM, "a sweep worker died");
  }
  munmap(sh, bytes);
  return rc;
}

/* ---- the columns ---- */

const char *const sweep_columns[] = {
    "model", "topology", "profile", "nodes", "gpus_per_node", "gpus", "batch_per_gpu", "precision", "framework", "mode",
    "fidelity", "pytorch", "bucket_cap_mb", "bucket_cap_mb_given", "comm_hook", "gradient_as_bucket_view", "no_sync",
    "iteration_s", "samples_per_s", "tokens_per_s", "token_unit", "scaling_efficiency", "single_gpu_iteration_s",
    "compute_s", "forward_s", "backward_s", "optimizer_s", "bucket_copy_s", "exposed_comm_s", "straggler_wait_s",
    "loading_s", "transfer_s", "buffer_broadcast_s", "comm_busy_s", "dp_scatter_s", "dp_replicate_s", "dp_gather_s",
    "dp_reduce_s", "buckets", "memory_peak_bytes", "fits", "max_batch_per_gpu", "train_s", "gpu_hours", "cost",
    "energy_kwh", "co2_kg", "iteration_s_lo", "iteration_s_hi", "samples_per_s_lo", "samples_per_s_hi",
    "iteration_ci_s", NULL};

/* Column k of a row: a string (returned, buf may hold it) or a number (*v, NULL returned). */
static const char *column(const sim_config *c, const sweep_row *r, int k, char *buf, size_t len, double *v) {
  const double parts[] = {r->iteration_s,    r->samples_per_s,  r->tokens_per_s,   0,
                          r->scaling_efficiency, r->single_gpu_iteration_s, r->compute_s, r->forward_s,
                          r->backward_s,     r->optimizer_s,    r->bucket_copy_s,  r->exposed_comm_s,
                          r->straggler_wait_s, r->loading_s,    r->transfer_s,     r->buffer_broadcast_s,
                          r->comm_busy_s,    r->dp_scatter_s,   r->dp_replicate_s, r->dp_gather_s,
                          r->dp_reduce_s,    r->buckets,        r->memory_peak_bytes, r->fits,
                          r->max_batch_per_gpu, r->train_s,     r->gpu_hours,      r->cost,
                          r->energy_kwh,     r->co2_kg,         r->iteration_s_lo, r->iteration_s_hi,
                          r->samples_per_s_lo, r->samples_per_s_hi, r->iteration_ci_s};
  switch (k) {
  case 0: return c->model->name;
  case 1: return c->topo->name;
  case 2: return profile_name(c->profile);
  case 3: *v = c->nodes; return NULL;
  case 4: *v = c->nodes > 0 ? r->gpus / c->nodes : 0; return NULL;
  case 5: *v = r->gpus; return NULL;
  case 6: *v = (double)r->batch; return NULL;
  case 7: return model_dtype_name((model_dtype)r->precision);
  case 8: return sim_framework_name(c->framework);
  case 9: return sim_mode_name(c->mode);
  case 10: return sim_fidelity_name(c->fidelity);
  case 11: return reducer_version_name(c->pytorch, buf, len);
  case 12: *v = sim_bucket_cap_mb(c); return NULL;
  case 13: *v = c->bucket_cap_mb > 0; return NULL;
  case 14: return sim_comm_hook_name(c->comm_hook);
  case 15: *v = c->bucket_view; return NULL;
  case 16: *v = c->no_sync; return NULL;
  case 20: return c->model->token_unit;
  default: *v = parts[k - 17]; return NULL;
  }
}

static int is_column(const char *name) {
  for (int k = 0; sweep_columns[k]; k++)
    if (strcmp(sweep_columns[k], name) == 0) return 1;
  return 0;
}

static void csv_field(strbuf *s, const char *f) {
  if (!strpbrk(f, ",\"\n")) {
    strbuf_printf(s, "%s", f);
    return;
  }
  strbuf_printf(s, "\"");
  for (; *f; f++) strbuf_printf(s, *f == '"' ? "\"\"" : "%c", *f);
  strbuf_printf(s, "\"");
}

char *sweep_csv(const sim_config *cfgs, const sweep_row *rows, int n, const char *const *axis_names, int naxes,
                const char *const *axis_values) {
  strbuf s = {0};
  const char *sep = "";
  for (int a = 0; a < naxes; a++)
    if (!is_column(axis_names[a])) strbuf_printf(&s, "%s", sep), csv_field(&s, axis_names[a]), sep = ",";
  for (int k = 0; sweep_columns[k]; k++) strbuf_printf(&s, "%s%s", sep, sweep_columns[k]), sep = ",";
  strbuf_printf(&s, "\n");
  for (int i = 0; i < n; i++) {
    sep = "";
    for (int a = 0; a < naxes; a++)
      if (!is_column(axis_names[a])) strbuf_printf(&s, "%s", sep), csv_field(&s, axis_values[i * naxes + a]), sep = ",";
    for (int k = 0; sweep_columns[k]; k++) {
      char buf[32];
      double v;
      const char *t = column(&cfgs[i], &rows[i], k, buf, sizeof buf, &v);
      strbuf_printf(&s, "%s", sep);
      if (t) csv_field(&s, t);
      else if (!isnan(v)) strbuf_printf(&s, "%.10g", v); /* NaN: not known, an empty field */
      sep = ",";
    }
    strbuf_printf(&s, "\n");
  }
  return strbuf_take(&s);
}

cJSON *sweep_json(const sim_config *cfgs, const sweep_row *rows, int n, const char *const *axis_names, int naxes,
                  const char *const *axis_values) {
  cJSON *o = cJSON_CreateObject(), *axes = cJSON_AddArrayToObject(o, "axes"), *cols = cJSON_AddArrayToObject(o, "columns"),
        *arr = cJSON_AddArrayToObject(o, "rows");
  if (!o || !axes || !cols || !arr) goto fail;
  for (int a = 0; a < naxes; a++)
    if (!cJSON_AddItemToArray(axes, cJSON_CreateString(axis_names[a]))) goto fail;
  for (int k = 0; sweep_columns[k]; k++)
    if (!cJSON_AddItemToArray(cols, cJSON_CreateString(sweep_columns[k]))) goto fail;
  for (int i = 0; i < n; i++) {
    cJSON *r = cJSON_CreateObject();
    if (!r || !cJSON_AddItemToArray(arr, r)) {
      cJSON_Delete(r);
      goto fail;
    }
    for (int a = 0; a < naxes; a++)
      if (!is_column(axis_names[a]) && !cJSON_AddStringToObject(r, axis_names[a], axis_values[i * naxes + a])) goto fail;
    for (int k = 0; sweep_columns[k]; k++) {
      char buf[32];
      double v;
      const char *t = column(&cfgs[i], &rows[i], k, buf, sizeof buf, &v);
      if (!(t ? cJSON_AddStringToObject(r, sweep_columns[k], t)
              : isnan(v) ? cJSON_AddNullToObject(r, sweep_columns[k]) /* not known */
                         : cJSON_AddNumberToObject(r, sweep_columns[k], v)))
        goto fail;
    }
  }
  return o;
fail:
  cJSON_Delete(o);
  return NULL;
}
