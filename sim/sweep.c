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
#include "wall.h"

/* Every column's number (sweep_row): from the prediction, the buyer's figures unknown. What is
 * not a column (a simulation's wall time) stays NaN: rows are the same bytes however they ran. */
static void fill(const sim_config *c, const predict_result *p, sweep_row *row) {
  const field_ctx x = {.c = c, .p = p};
  for (int k = 0; k < FIELD_COUNT; k++) {
    const field *f = &field_table[k];
    int number = f->kind == FIELD_NUMBER || f->kind == FIELD_BOOL || f->kind == FIELD_NAME;
    row->value[k] = number && f->sweep ? field_value(f, &x) : NAN;
  }
  row->done = 1;
}

void sweep_row_fill(const sim_config *c, const predict_result *p, sweep_row *row) {
  memset(row, 0, sizeof *row);
  fill(c, p, row);
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
  memory_parts m;
  budget_result br;
  field_ctx x = {.c = c, .mem = &m, .job = j};
  int rc = memory_estimate(c, optim, &m, e);
  if (rc) return rc;
  profile_device d;
  profile_get_device(c->profile, &d);
  if (j && (rc = budget_compute(j, (int)row->value[FIELD_GPUS], (long)row->value[FIELD_BATCH_PER_GPU],
                                row->value[FIELD_ITERATION_S], row->value[FIELD_COMPUTE_S], &d, &br, e)))
    return rc;
  if (j) x.budget = &br;
  snprintf(row->currency, sizeof row->currency, "%s", j && j->price_per_gpu_hour > 0 ? j->currency : "");
  /* The fields that read no prediction: the memory's, the budget's, the interval's (NaN: the caller's). */
  for (int k = FIELD_BUYER; k < FIELD_COUNT; k++) row->value[k] = field_value(&field_table[k], &x);
  return ERR_OK;
}

void sweep_vs_first(const sim_config *cfgs, sweep_row *rows, const interval_t *ivs, int n) {
  for (int i = 0; i < n; i++) {
    double *v = rows[i].value, r = v[FIELD_SAMPLES_PER_S] / rows[0].value[FIELD_SAMPLES_PER_S], lo, hi;
    v[FIELD_SPEEDUP_VS_FIRST] = r;
    v[FIELD_SPEEDUP_VS_FIRST_LO] = v[FIELD_SPEEDUP_VS_FIRST_HI] = NAN;
    /* the factors are on the time, so the throughput's are their inverse */
    if (ivs && interval_pair(&cfgs[0], &ivs[0], &cfgs[i], &ivs[i], &lo, &hi))
      v[FIELD_SPEEDUP_VS_FIRST_LO] = r / hi, v[FIELD_SPEEDUP_VS_FIRST_HI] = r / lo;
  }
}

static int run_one(const sim_config *c, sweep_what what, sweep_row *row, twins_t *tw) {
  memset(row, 0, sizeof *row);
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
      fill(c, &p, row);
      if (tw && hit < 0 && p.sim.gpus > 1) {
        tw->key[tw->next] = one;
        tw->iteration_s[tw->next] = p.single_gpu_iteration_s;
        tw->next = (tw->next + 1) % TWINS;
        if (tw->n < TWINS) tw->n++;
      }
      predict_result_free(&p);
    }
  } else {
    predict_result p; /* the run alone: no twin, scaling_efficiency and single_gpu_iteration_s 0 */
    memset(&p, 0, sizeof p);
    /* a measured step prices the host as predict does (the interval's draws: each its own factor) */
    sim_config cal;
    row->status = predict_host(c, &cal, &p, &e);
    if (!row->status && (row->status = sim_run(&cal, &p.sim, &e)) == ERR_OK) {
      p.samples_per_s = (double)p.sim.gpus * (double)p.sim.batch / p.sim.iteration_s;
      p.tokens_per_s = p.samples_per_s * (double)c->model->tokens_per_sample;
      fill(c, &p, row);
      sim_result_free(&p.sim);
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
  double t = wall_now_s(), every = o->every_s > 0 ? o->every_s : 0.5;
  if (!o->progress || (done < n && t - *last < every)) return;
  *last = t;
  o->progress(o->progress_arg, done, n, t - t0);
}

int sweep_run(const sim_config *cfgs, int n, const sweep_opts *o, sweep_row *rows, err_t *e) {
  double t0 = wall_now_s(), last = t0;
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

/* Column id of row r: a text (returned, buf may hold it) or a number (*v, NULL returned). */
static const char *column(const sim_config *c, const sweep_row *r, field_id id, char *buf, size_t len, double *v) {
  const field *f = &field_table[id];
  budget_job j = {0}; /* a text column reads the configuration, and the row's currency */
  snprintf(j.currency, sizeof j.currency, "%s", r->currency);
  const field_ctx x = {.c = c, .job = &j};
  *v = r->value[id];
  /* A configuration's column (those before iteration_s) of another framework's: '-' (a DDP knob in an
   * FSDP row); results keep their numbers. */
  if (f->frameworks && !field_in_framework(f, &x) && f->sweep < field_table[FIELD_ITERATION_S].sweep) return "-";
  return field_text(f, &x, *v, buf, len);
}

static int is_column(const char *name) {
  for (int k = 0; k < FIELD_COUNT; k++) {
    const char *col = field_column(&field_table[k]);
    if (col && strcmp(col, name) == 0) return 1;
  }
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
  field_id ids[FIELD_COUNT];
  int ncol = field_sweep_columns(ids);
  for (int k = 0; k < ncol; k++) strbuf_printf(&s, "%s%s", sep, field_column(&field_table[ids[k]])), sep = ",";
  strbuf_printf(&s, "\n");
  for (int i = 0; i < n; i++) {
    sep = "";
    for (int a = 0; a < naxes; a++)
      if (!is_column(axis_names[a])) strbuf_printf(&s, "%s", sep), csv_field(&s, axis_values[i * naxes + a]), sep = ",";
    for (int k = 0; k < ncol; k++) {
      char buf[32];
      double v;
      const char *t = column(&cfgs[i], &rows[i], ids[k], buf, sizeof buf, &v);
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
  field_id ids[FIELD_COUNT];
  int ncol = field_sweep_columns(ids);
  for (int k = 0; k < ncol; k++)
    if (!cJSON_AddItemToArray(cols, cJSON_CreateString(field_column(&field_table[ids[k]])))) goto fail;
  for (int i = 0; i < n; i++) {
    cJSON *r = cJSON_CreateObject();
    if (!r || !cJSON_AddItemToArray(arr, r)) {
      cJSON_Delete(r);
      goto fail;
    }
    for (int a = 0; a < naxes; a++)
      if (!is_column(axis_names[a]) && !cJSON_AddStringToObject(r, axis_names[a], axis_values[i * naxes + a])) goto fail;
    for (int k = 0; k < ncol; k++) {
      char buf[32];
      double v;
      const char *t = column(&cfgs[i], &rows[i], ids[k], buf, sizeof buf, &v), *name = field_column(&field_table[ids[k]]);
      if (!(t ? cJSON_AddStringToObject(r, name, t)
              : isnan(v) ? cJSON_AddNullToObject(r, name) /* not known */
                         : cJSON_AddNumberToObject(r, name, v)))
        goto fail;
    }
  }
  return o;
fail:
  cJSON_Delete(o);
  return NULL;
}
