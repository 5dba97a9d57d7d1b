/* trainreport: the statistics and JSON report of a training run (trainreport.h). */
#define _GNU_SOURCE
#include "trainreport.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "afile.h"
#include "version.h"

/* The median of v[0..n) (0 if empty), sorting v in place. */
static double median(double *v, int n) {
  if (n < 1) return 0;
  gsl_sort(v, 1, (size_t)n);
  return gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
}

void trainreport_stats(const train_cfg *c, const train_result *r, double stats[4]) {
  double *t = malloc((size_t)c->iters * sizeof *t), sum = 0;
  stats[0] = stats[1] = stats[3] = 0;
  stats[2] = 1e300;
  if (!t) return;
  for (int i = 0; i < c->iters; i++) {
    t[i] = r->iter[i].time_s;
    sum += t[i];
    if (t[i] < stats[2]) stats[2] = t[i];
    if (t[i] > stats[3]) stats[3] = t[i];
  }
  stats[1] = sum / c->iters;
  stats[0] = median(t, c->iters);
  free(t);
}

const char *trainreport_param_name(int p) {
  static const char *names[MLSTM_NPARAMS] = {"encoder.weight", "decoder.weight", "decoder.bias", "b_ih", "b_hh",
                                             "w_ih_g", "w_ih_v", "w_hh_g", "w_hh_v", "w_mih_g", "w_mih_v",
                                             "w_mhh_g", "w_mhh_v"};
  return p >= 0 && p < MLSTM_NPARAMS ? names[p] : "?";
}

/* Medians over the synced timed iterations of a bucket's three times. */
void trainreport_bucket_medians(const train_cfg *c, const train_result *r, int b, double out[3]) {
  double *v = malloc((size_t)c->iters * sizeof *v);
  out[0] = out[1] = out[2] = 0;
  if (!v) return;
  for (int f = 0; f < 3; f++) {
    int n = 0;
    for (int i = 0; i < c->iters; i++) {
      if (!r->iter[i].synced) continue;
      const train_bucket_time *t = &r->bucket[(size_t)i * (size_t)r->nbuckets + (size_t)b];
      v[n++] = f == 0 ? t->ready_s : f == 1 ? t->start_s : t->end_s;
    }
    out[f] = median(v, n);
  }
  free(v);
}

cJSON *trainreport_json(const train_cfg *c, const train_result *r, const double stats[4]) {
  cJSON *j = cJSON_CreateObject(), *o;
  if (!j || version_stamp(j)) {
    cJSON_Delete(j);
    return NULL;
  }
  cJSON_AddStringToObject(j, "tool", "ddpcalib train");
  cJSON_AddNumberToObject(j, "ranks", r->nranks);
  cJSON_AddStringToObject(j, "mode", sim_mode_name(c->mode));
  o = cJSON_AddObjectToObject(j, "shape");
  cJSON_AddNumberToObject(o, "hidden", c->shape.H);
  cJSON_AddNumberToObject(o, "embed", c->shape.E);
  cJSON_AddNumberToObject(o, "vocab", c->shape.V);
  cJSON_AddNumberToObject(o, "seq", c->shape.T);
  cJSON_AddNumberToObject(o, "batch", c->shape.B);
  cJSON_AddNumberToObject(j, "bucket_cap_mb", c->bucket_cap_mb);
  cJSON_AddNumberToObject(j, "first_bucket_mb", c->first_bucket_mb);
  cJSON_AddBoolToObject(j, "rebuilt", c->rebuilt);
  cJSON_AddNumberToObject(j, "no_sync", c->no_sync);
  cJSON_AddStringToObject(j, "optimizer", c->optim == TRAIN_ADAM ? "adam" : "sgd");
  cJSON_AddNumberToObject(j, "lr", c->lr);
  cJSON_AddBoolToObject(j, "poll", c->poll);
  cJSON_AddNumberToObject(j, "iters", c->iters);
  cJSON_AddNumberToObject(j, "warmups", c->warmups);
  cJSON_AddNumberToObject(j, "params", (double)r->nparams);
  cJSON_AddNumberToObject(j, "grad_bytes", (double)r->grad_bytes);
  cJSON *bs = cJSON_AddArrayToObject(j, "buckets");
  int k = 0;
  for (int b = 0; b < r->nbuckets; b++) {
    cJSON *bo = cJSON_CreateObject();
    cJSON_AddItemToArray(bs, bo);
    cJSON_AddNumberToObject(bo, "index", b);
    cJSON_AddNumberToObject(bo, "bytes", (double)r->bucket_bytes[b]);
    cJSON *names = cJSON_AddArrayToObject(bo, "tensors");
    for (int t = 0; t < r->bucket_ntensors[b]; t++)
      cJSON_AddItemToArray(names, cJSON_CreateString(trainreport_param_name(r->bucket_tensors[k++])));
    double med[3];
    trainreport_bucket_medians(c, r, b, med);
    cJSON_AddNumberToObject(bo, "ready_s", med[0]);
    cJSON_AddNumberToObject(bo, "start_s", med[1]);
    cJSON_AddNumberToObject(bo, "end_s", med[2]);
    cJSON_AddNumberToObject(bo, "comm_s", med[2] - med[1]);
  }
  cJSON *its = cJSON_AddArrayToObject(j, "iterations");
  for (int i = 0; i < c->iters; i++) {
    const train_iter *it = &r->iter[i];
    cJSON *io = cJSON_CreateObject();
    cJSON_AddItemToArray(its, io);
    cJSON_AddNumberToObject(io, "time_s", it->time_s);
    cJSON_AddNumberToObject(io, "forward_s", it->forward_s);
    cJSON_AddNumberToObject(io, "backward_s", it->backward_s);
    cJSON_AddNumberToObject(io, "wait_s", it->wait_s);
    cJSON_AddNumberToObject(io, "step_s", it->step_s);
    cJSON_AddNumberToObject(io, "cpu_s", it->cpu_s);
    cJSON_AddNumberToObject(io, "loss", it->loss);
    cJSON_AddBoolToObject(io, "synced", it->synced);
    if (!it->synced) continue;
    cJSON *ib = cJSON_AddArrayToObject(io, "buckets");
    for (int b = 0; b < r->nbuckets; b++) {
      const train_bucket_time *t = &r->bucket[(size_t)i * (size_t)r->nbuckets + (size_t)b];
      cJSON *to = cJSON_CreateObject();
      cJSON_AddItemToArray(ib, to);
      cJSON_AddNumberToObject(to, "ready_s", t->ready_s);
      cJSON_AddNumberToObject(to, "start_s", t->start_s);
      cJSON_AddNumberToObject(to, "end_s", t->end_s);
    }
  }
  o = cJSON_AddObjectToObject(j, "iteration_s");
  cJSON_AddNumberToObject(o, "median", stats[0]);
  cJSON_AddNumberToObject(o, "mean", stats[1]);
  cJSON_AddNumberToObject(o, "min", stats[2]);
  cJSON_AddNumberToObject(o, "max", stats[3]);
  o = cJSON_AddObjectToObject(j, "phases_median_s");
  static const char *ph[5] = {"forward", "backward", "wait", "step", "cpu"};
  for (int f = 0; f < 5; f++) {
    double *v = malloc((size_t)c->iters * sizeof *v);
    if (!v) break;
    for (int i = 0; i < c->iters; i++)
      v[i] = f == 0 ? r->iter[i].forward_s : f == 1 ? r->iter[i].backward_s : f == 2 ? r->iter[i].wait_s
           : f == 3 ? r->iter[i].step_s : r->iter[i].cpu_s;
    cJSON_AddNumberToObject(o, ph[f], median(v, c->iters));
    free(v);
  }
  double samples = (double)c->iters * r->nranks * c->shape.B;
  cJSON_AddNumberToObject(j, "cpu_share", r->cpu_share);
  cJSON_AddNumberToObject(j, "elapsed_s", r->elapsed_s);
  cJSON_AddNumberToObject(j, "samples_per_s", samples / r->elapsed_s);
  cJSON_AddNumberToObject(j, "chars_per_s", samples * c->shape.T / r->elapsed_s);
  cJSON_AddNumberToObject(j, "final_loss", r->iter[c->iters - 1].loss);
  cJSON_AddNumberToObject(j, "param_rank_maxdiff", r->param_rank_maxdiff);
  return j;
}

int trainreport_dump_params(const char *path, const float *p, size_t n, err_t *e) {
  return afile_write(path, p, n * sizeof *p, e);
}
