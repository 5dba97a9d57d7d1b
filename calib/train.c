/* train: DDP's gradient reduction around the CPU mLSTM. Contracts in train.h; what it measures and
 * how it compares with ddpsim: docs/validation.md. */
#define _GNU_SOURCE /* clock_gettime, CLOCK_THREAD_CPUTIME_ID */
#include "train.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bucket.h"

static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void train_cfg_defaults(train_cfg *c) {
  memset(c, 0, sizeof *c);
  c->shape = (mlstm_shape){.H = 256, .E = 64, .V = 256, .T = 8, .B = 4};
  c->mode = SIM_MODE_DDP;
  c->bucket_cap_mb = REDUCER_DEFAULT_CAP_MB;
  c->first_bucket_mb = REDUCER_FIRST_BUCKET_MB;
  c->no_sync = 1;
  c->iters = 20;
  c->warmups = 3;
  c->seed = 1234;
  c->optim = TRAIN_SGD;
  c->lr = 0.01f;
  c->poll = 1;
}

int train_cfg_check(const train_cfg *c, err_t *e) {
  if (mlstm_shape_check(&c->shape) != MLSTM_OK)
    return err_set(e, ERR_USAGE, "sizes out of range (hidden %d, embed %d, vocab %d <= 256, seq %d, batch %d)",
                   c->shape.H, c->shape.E, c->shape.V, c->shape.T, c->shape.B);
  if (c->mode != SIM_MODE_DDP && c->mode != SIM_MODE_FLAT) return err_set(e, ERR_USAGE, "--mode must be ddp or flat");
  if (!(c->bucket_cap_mb > 0) || !(c->first_bucket_mb > 0) || bucket_mb_to_bytes(c->bucket_cap_mb) < 1 ||
      bucket_mb_to_bytes(c->first_bucket_mb) < 1)
    return err_set(e, ERR_USAGE, "--bucket-cap-mb and --first-bucket-mb must be at least one byte");
  if (c->no_sync < 1) return err_set(e, ERR_USAGE, "--no-sync must be >= 1");
  if (c->iters < 1 || c->warmups < 0) return err_set(e, ERR_USAGE, "-n must be >= 1 and -w >= 0");
  if (c->optim != TRAIN_SGD && c->optim != TRAIN_ADAM) return err_set(e, ERR_USAGE, "--optimizer must be sgd or adam");
  if (!(c->lr > 0) || !isfinite(c->lr)) return err_set(e, ERR_USAGE, "--lr must be a positive number");
  return ERR_OK;
}

static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* Token at stream position pos: words of 3 tokens, each word drawn from the seed, the 2nd and 3rd
 * tokens following the 1st; a little structure for the loss to find. */
static uint8_t stream_at(uint64_t seed, long pos, int V) {
  uint64_t w = mix64(seed ^ mix64((uint64_t)(pos / 3)));
  return (uint8_t)((w % 64 + (uint64_t)(pos % 3) * 17) % (uint64_t)V);
}

void train_tokens(const mlstm_shape *s, uint64_t seed, long iter, long first_seq, long global_batch,
                  uint8_t *tokens) {
  for (int b = 0; b < s->B; b++) {
    long seq = iter * global_batch + first_seq + b; /* global sequence number */
    long start = seq * (long)s->T;                  /* consecutive windows overlapping by one token */
    for (int t = 0; t <= s->T; t++) tokens[(size_t)t * (size_t)s->B + (size_t)b] = stream_at(seed, start + t, s->V);
  }
}

/* ---- the reducer ---------------------------------------------------------------------------- */

typedef struct {
  int nranks, nb, poll, sync;
  float scale;                  /* 1 / world size */
  const float *grads, *accum;   /* accum: NULL unless gradients are being accumulated (no_sync) */
  const mlstm_param_info *info; /* (MLSTM_NPARAMS) */
  int param_bucket[MLSTM_NPARAMS];
  size_t param_off[MLSTM_NPARAMS]; /* floats from the start of its bucket */
  float **buf;                  /* (nb) flat bucket buffers */
  size_t *count;                /* (nb) floats per bucket */
  int *ntensors, *remaining;    /* (nb) */
  MPI_Request *req;             /* (nb) */
  int next_launch, next_done;
  double t0;
  train_bucket_time *times;     /* (nb) this iteration's */
  int mpi_failed;
} reducer;

static void reducer_poll(reducer *r) {
  while (r->poll && r->next_done < r->next_launch) {
    int flag = 0;
    if (MPI_Test(&r->req[r->next_done], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) r->mpi_failed = 1;
    if (!flag) return;
    r->times[r->next_done++].end_s = MPI_Wtime() - r->t0;
  }
}

/* Starts, strictly in bucket order, every bucket that is ready and whose predecessors started. */
static void reducer_launch(reducer *r) {
  while (r->next_launch < r->nb && r->remaining[r->next_launch] == 0) {
    int b = r->next_launch++;
    r->times[b].start_s = MPI_Wtime() - r->t0;
    if (MPI_Iallreduce(MPI_IN_PLACE, r->buf[b], (int)r->count[b], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r->req[b]) !=
        MPI_SUCCESS)
      r->mpi_failed = 1;
  }
}

/* The gradient hook: copy (and divide) into the bucket, launch what is ready, let MPI progress. */
static void on_grad_ready(int p, void *user) {
  reducer *r = user;
  if (!r->sync) return;
  int b = r->param_bucket[p];
  const mlstm_param_info *pi = &r->info[p];
  const float *g = r->grads + pi->offset;
  float *dst = r->buf[b] + r->param_off[p];
  if (r->accum) {
    const float *a = r->accum + pi->offset;
    for (size_t i = 0; i < pi->numel; i++) dst[i] = (g[i] + a[i]) * r->scale;
  } else {
    for (size_t i = 0; i < pi->numel; i++) dst[i] = g[i] * r->scale;
  }
  if (--r->remaining[b] == 0) {
    r->times[b].ready_s = MPI_Wtime() - r->t0;
    reducer_launch(r);
  }
  reducer_poll(r);
}

static void reducer_begin(reducer *r, double t0, train_bucket_time *times, int sync) {
  r->t0 = t0;
  r->times = times;
  r->sync = sync;
  r->next_launch = r->next_done = 0;
  for (int b = 0; b < r->nb; b++) r->remaining[b] = r->ntensors[b];
}

static void reducer_finish(reducer *r) {
  reducer_launch(r); /* every bucket is ready after backward; nothing should remain */
  while (r->next_done < r->next_launch) {
    if (MPI_Wait(&r->req[r->next_done], MPI_STATUS_IGNORE) != MPI_SUCCESS) r->mpi_failed = 1;
    r->times[r->next_done++].end_s = MPI_Wtime() - r->t0;
  }
}

/* ---- optimizer ------------------------------------------------------------------------------ */

static void optim_step(const train_cfg *c, float *p, const float *g, float *m, float *v, size_t n, long step) {
  if (c->optim == TRAIN_SGD) {
    for (size_t i = 0; i < n; i++) p[i] -= c->lr * g[i];
    return;
  }
  const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
  float c1 = 1.0f - powf(b1, (float)step), c2 = 1.0f - powf(b2, (float)step);
  float lr_t = c->lr * sqrtf(c2) / c1;
  for (size_t i = 0; i < n; i++) {
    m[i] = b1 * m[i] + (1 - b1) * g[i];
    v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
    p[i] -= lr_t * m[i] / (sqrtf(v[i]) + eps * sqrtf(c2));
  }
}

/* ---- the run -------------------------------------------------------------------------------- */

void train_result_free(train_result *r) {
  if (!r) return;
  free(r->bucket_bytes);
  free(r->bucket_ntensors);
  free(r->bucket_tensors);
  free(r->iter);
  free(r->bucket);
  free(r->params);
  memset(r, 0, sizeof *r);
}

static int mlstm_fail(int st, const char *what, err_t *e) {
  return err_set(e, ERR_RUNTIME, "mlstm %s: %s", what, mlstm_strerror(st));
}

int train_run(const train_cfg *c, train_result *r, err_t *e) {
  memset(r, 0, sizeof *r);
  int rc = train_cfg_check(c, e);
  if (rc) return rc;
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const mlstm_shape *s = &c->shape;
  mlstm_param_info info[MLSTM_NPARAMS];
  size_t nparams = 0;
  mlstm_layout(s, info, &nparams);

  mlstm_cpu *m = NULL;
  bucket_plan plan = {0};
  reducer red = {0};
  float *adam_m = NULL, *adam_v = NULL, *accum = NULL, *bufmem = NULL, *p0 = NULL;
  uint8_t *tokens = NULL;
  char msg[256];
  if (mlstm_cpu_create(s, &m, msg, sizeof msg) != MLSTM_OK) {
    rc = err_set(e, ERR_NOMEM, "mlstm: %s", msg);
    goto fail;
  }
  float *params = mlstm_cpu_params(m), *grads = mlstm_cpu_grads(m);
  if (rank == 0) mlstm_init_params(s, params, c->seed, 0.1f);
  /* DDP's constructor broadcasts rank 0's parameters. */
  if (MPI_Bcast(params, (int)nparams, MPI_FLOAT, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
    rc = err_set(e, ERR_RUNTIME, "MPI_Bcast of the parameters failed");
    goto fail;
  }

  /* Buckets: the same code as `ddpsim buckets`, over fp32 gradient bytes. */
  size_t bytes[MLSTM_NPARAMS];
  int dtype[MLSTM_NPARAMS], order[MLSTM_NPARAMS];
  for (int i = 0; i < MLSTM_NPARAMS; i++) bytes[i] = info[i].numel * sizeof(float), dtype[i] = 0;
  mlstm_grad_ready_order(order);
  err_t be;
  if (c->mode == SIM_MODE_DDP) {
    if (bucket_assign(MLSTM_NPARAMS, bytes, dtype, c->rebuilt ? order : NULL, bucket_mb_to_bytes(c->first_bucket_mb),
                      bucket_mb_to_bytes(c->bucket_cap_mb), &plan, &be)) {
      rc = err_set(e, ERR_RUNTIME, "bucket assignment: %s", be.msg);
      goto fail;
    }
  } else {
    int all[MLSTM_NPARAMS];
    for (int i = 0; i < MLSTM_NPARAMS; i++) all[i] = i;
    /* One bucket of every gradient, as ddpsim's flat mode: a cap larger than the whole. */
    if (bucket_assign(MLSTM_NPARAMS, bytes, dtype, all, nparams * sizeof(float) + 1, nparams * sizeof(float) + 1,
                      &plan, &be)) {
      rc = err_set(e, ERR_RUNTIME, "bucket assignment: %s", be.msg);
      goto fail;
    }
  }
  int nb = plan.n, total_iters = c->warmups + c->iters;
  r->nranks = nranks;
  r->nparams = nparams;
  r->grad_bytes = nparams * sizeof(float);
  r->nbuckets = nb;
  r->bucket_bytes = calloc((size_t)nb, sizeof *r->bucket_bytes);
  r->bucket_ntensors = calloc((size_t)nb, sizeof *r->bucket_ntensors);
  r->bucket_tensors = calloc(MLSTM_NPARAMS, sizeof *r->bucket_tensors);
  r->iter = calloc((size_t)c->iters, sizeof *r->iter);
  r->bucket = calloc((size_t)c->iters * (size_t)nb, sizeof *r->bucket);
  r->params = malloc(nparams * sizeof *r->params);
  red.buf = calloc((size_t)nb, sizeof *red.buf);
  red.count = calloc((size_t)nb, sizeof *red.count);
  red.ntensors = calloc((size_t)nb, sizeof *red.ntensors);
  red.remaining = calloc((size_t)nb, sizeof *red.remaining);
  red.req = calloc((size_t)nb, sizeof *red.req);
  bufmem = malloc(nparams * sizeof *bufmem); /* DDP's buckets, or flat mode's one flat buffer */
  tokens = malloc((size_t)(s->T + 1) * (size_t)s->B);
  p0 = malloc(nparams * sizeof *p0);
  if (c->optim == TRAIN_ADAM) {
    adam_m = calloc(nparams, sizeof *adam_m);
    adam_v = calloc(nparams, sizeof *adam_v);
  }
  if (c->no_sync > 1) accum = calloc(nparams, sizeof *accum);
  if (!r->bucket_bytes || !r->bucket_ntensors || !r->bucket_tensors || !r->iter || !r->bucket || !r->params ||
      !red.buf || !red.count || !red.ntensors || !red.remaining || !red.req || !bufmem ||
      !tokens || !p0 || (c->optim == TRAIN_ADAM && (!adam_m || !adam_v)) || (c->no_sync > 1 && !accum)) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto fail;
  }
  size_t off = 0;
  int k = 0;
  for (int b = 0; b < nb; b++) {
    const bucket_t *bk = &plan.b[b];
    r->bucket_bytes[b] = bk->bytes;
    r->bucket_ntensors[b] = red.ntensors[b] = bk->ntensors;
    red.buf[b] = bufmem ? bufmem + off : NULL;
    size_t in = 0;
    for (int j = 0; j < bk->ntensors; j++) {
      int p = bk->tensors[j];
      r->bucket_tensors[k++] = p;
      red.param_bucket[p] = b;
      red.param_off[p] = in;
      in += info[p].numel;
    }
    red.count[b] = in;
    off += in;
  }
  red.nranks = nranks;
  red.nb = nb;
  red.poll = c->poll;
  red.scale = 1.0f / (float)nranks;
  red.grads = grads;
  red.info = info;

  train_bucket_time *iter_times = calloc((size_t)nb, sizeof *iter_times);
  if (!iter_times) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto fail;
  }
  long steps = 0;
  double t_first = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int it = 0; it < total_iters; it++) {
    int timed = it >= c->warmups, ti = it - c->warmups;
    int sync = it % c->no_sync == c->no_sync - 1;
    int accumulating = accum && it % c->no_sync != 0; /* accum holds earlier iterations' gradients */
    train_tokens(s, c->seed, it, (long)rank * s->B, (long)nranks * s->B, tokens);
    if (timed && ti == 0) t_first = MPI_Wtime();
    double c0 = thread_cpu_s(), t0 = MPI_Wtime();
    float loss = 0;
    int st = mlstm_cpu_prepare(m, tokens);
    for (int t = 0; st == MLSTM_OK && t < s->T; t++) st = mlstm_cpu_forward_step(m, t);
    if (st == MLSTM_OK) st = mlstm_cpu_decoder_forward(m, &loss);
    if (st != MLSTM_OK) {
      rc = mlstm_fail(st, "forward", e);
      goto fail_it;
    }
    double tf = MPI_Wtime();
    memset(iter_times, 0, (size_t)nb * sizeof *iter_times);
    red.accum = accumulating ? accum : NULL;
    reducer_begin(&red, t0, iter_times, sync && c->mode == SIM_MODE_DDP);
    st = mlstm_cpu_decoder_backward(m, on_grad_ready, &red);
    for (int t = s->T - 1; st == MLSTM_OK && t >= 0; t--) {
      st = mlstm_cpu_backward_step(m, t);
      reducer_poll(&red);
    }
    if (st == MLSTM_OK) st = mlstm_cpu_weight_grads(m, on_grad_ready, &red);
    if (st == MLSTM_OK) st = mlstm_cpu_embedding_grad(m, on_grad_ready, &red);
    if (st != MLSTM_OK) {
      rc = mlstm_fail(st, "backward", e);
      goto fail_it;
    }
    if (!sync) { /* no_sync(): autograd accumulates into .grad; no communication, no step */
      if (accumulating)
        for (size_t i = 0; i < nparams; i++) accum[i] += grads[i];
      else
        memcpy(accum, grads, nparams * sizeof *accum);
    }
    double tb = MPI_Wtime(), tw = tb;
    if (sync) {
      if (c->mode == SIM_MODE_DDP) {
        reducer_finish(&red);
      } else {
        /* sentiment-discovery's allreduce_params (model/distributed.py), called only when
         * distributed: every gradient flattened into one buffer (_flatten_dense_tensors),
         * all-reduced, divided by the world size and copied back (below). */
        if (accumulating)
          for (size_t i = 0; i < nparams; i++) grads[i] += accum[i];
        for (int p = 0; nranks > 1 && p < MLSTM_NPARAMS; p++)
          memcpy(red.buf[0] + red.param_off[p], grads + info[p].offset, info[p].numel * sizeof(float));
        iter_times[0].ready_s = iter_times[0].start_s = MPI_Wtime() - t0;
        if (nranks > 1 &&
            MPI_Allreduce(MPI_IN_PLACE, red.buf[0], (int)nparams, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
          red.mpi_failed = 1;
        iter_times[0].end_s = MPI_Wtime() - t0;
      }
      if (red.mpi_failed) {
        rc = err_set(e, ERR_RUNTIME, "an MPI all-reduce failed");
        goto fail_it;
      }
      tw = MPI_Wtime();
      if (c->mode == SIM_MODE_DDP) { /* the reduced buckets back into .grad */
        for (int p = 0; p < MLSTM_NPARAMS; p++)
          memcpy(grads + info[p].offset, red.buf[red.param_bucket[p]] + red.param_off[p], info[p].numel * sizeof(float));
      } else if (nranks > 1) { /* coalesced /= world_size, then each gradient's part copied back */
        for (size_t i = 0; i < nparams; i++) red.buf[0][i] *= red.scale;
        for (int p = 0; p < MLSTM_NPARAMS; p++)
          memcpy(grads + info[p].offset, red.buf[0] + red.param_off[p], info[p].numel * sizeof(float));
      }
      optim_step(c, params, grads, adam_m, adam_v, nparams, ++steps);
    }
    double te = MPI_Wtime(), ce = thread_cpu_s();
    if (timed) {
      train_iter *ri = &r->iter[ti];
      ri->time_s = te - t0;
      ri->forward_s = tf - t0;
      ri->backward_s = tb - tf;
      ri->wait_s = tw - tb;
      ri->step_s = te - tw;
      ri->cpu_s = ce - c0;
      ri->loss = loss;
      ri->synced = sync;
      if (sync) memcpy(&r->bucket[(size_t)ti * (size_t)nb], iter_times, (size_t)nb * sizeof *iter_times);
    }
    continue;
  fail_it:
    free(iter_times);
    goto fail;
  }
  r->elapsed_s = MPI_Wtime() - t_first;
  free(iter_times);

  /* Iteration times: the slowest rank decides. */
  double *tmax = malloc((size_t)c->iters * sizeof *tmax);
  if (!tmax) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto fail;
  }
  for (int i = 0; i < c->iters; i++) tmax[i] = r->iter[i].time_s;
  MPI_Allreduce(MPI_IN_PLACE, tmax, c->iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int i = 0; i < c->iters; i++) r->iter[i].time_s = tmax[i];
  free(tmax);
  MPI_Bcast(&r->elapsed_s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

  /* The CPU share of the least served rank. */
  double wall = 0, cpu = 0;
  for (int i = 0; i < c->iters; i++) wall += r->iter[i].forward_s + r->iter[i].backward_s + r->iter[i].wait_s + r->iter[i].step_s,
                                     cpu += r->iter[i].cpu_s;
  r->cpu_share = wall > 0 ? cpu / wall : 0;
  MPI_Allreduce(MPI_IN_PLACE, &r->cpu_share, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);

  /* Do all ranks hold the same parameters? */
  memcpy(r->params, params, nparams * sizeof *params);
  memcpy(p0, params, nparams * sizeof *p0);
  MPI_Bcast(p0, (int)nparams, MPI_FLOAT, 0, MPI_COMM_WORLD);
  double d = 0;
  for (size_t i = 0; i < nparams; i++) {
    double x = fabs((double)params[i] - (double)p0[i]);
    if (!(x <= d)) d = x; /* NaN propagates */
  }
  MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  r->param_rank_maxdiff = d;
  rc = ERR_OK;
  goto done;

fail:
  train_result_free(r);
done:
  free(red.buf);
  free(red.count);
  free(red.ntensors);
  free(red.remaining);
  free(red.req);
  free(bufmem);
  free(tokens);
  free(p0);
  free(adam_m);
  free(adam_v);
  free(accum);
  bucket_plan_free(&plan);
  mlstm_cpu_destroy(m);
  return rc;
}
