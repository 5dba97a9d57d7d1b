#include "cost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double cost_host_launch(const sim_config *c) {
  return c->host_launch_s >= 0 ? c->host_launch_s : profile_host_launch_s(c->profile);
}

double cost_host_dispatch(const sim_config *c) {
  return c->host_dispatch_s >= 0 ? c->host_dispatch_s : profile_host_dispatch_s(c->profile);
}

void cost_measured(const sim_config *c, long batch, model_dtype prec, cost_measured_info *out) {
  const model_t *m = c->model;
  profile_device d;
  profile_get_device(c->profile, &d);
  memset(out, 0, sizeof *out);
  out->ops = m->nmeasured;
  out->total = m->nops;
  out->device = m->measured.present ? m->measured.device : "";
  if (!out->ops) return;
  if (!d.name[0])
    snprintf(out->why, sizeof out->why, "profile %s does not name its device (device.name)", profile_name(c->profile));
  else if (strcmp(d.name, m->measured.device) != 0)
    snprintf(out->why, sizeof out->why, "profile %s is of another device (%.100s)", profile_name(c->profile), d.name);
  else if (batch != m->batch)
    snprintf(out->why, sizeof out->why, "they are of batch %ld, the run's is %ld", m->batch, batch);
  else if (prec != m->precision)
    snprintf(out->why, sizeof out->why, "they are of precision %s, the run's is %s", model_dtype_name(m->precision),
             model_dtype_name(prec));
  else
    out->used = 1;
}

/* An op's measured times, where the run is the one they were measured in (cost_measured). */
static int measured_sides(const sim_config *c, const model_op *op, long batch, model_dtype prec, double *dev_s,
                          double *host_s) {
  cost_measured_info mi;
  if (!op->measured) return 0;
  cost_measured(c, batch, prec, &mi);
  if (!mi.used) return 0;
  *dev_s = op->time_s;
  *host_s = op->host_s;
  return 1;
}

int cost_op_sides(const sim_config *c, const model_op *op, long batch, model_dtype prec, double *dev_s, double *host_s,
                  int *extrap, err_t *e) {
  if (measured_sides(c, op, batch, prec, dev_s, host_s)) return ERR_OK;
  int x = 0;
  int rc = profile_op_time(c->profile, op, batch, prec, dev_s, &x, e);
  if (rc) return rc;
  *extrap += x;
  *host_s = (double)op->launches * cost_host_launch(c) + (double)op->fwops * cost_host_dispatch(c);
  return ERR_OK;
}

int cost_op(const sim_config *c, const model_op *op, long batch, model_dtype prec, double *t, int *extrap, err_t *e) {
  double one, host;
  int rc = cost_op_sides(c, op, batch, prec, &one, &host, extrap, e);
  if (rc) return rc;
  *t = (one > host ? one : host) * (double)op->count;
  return ERR_OK;
}

int cost_copy(const sim_config *c, long numel, long arrays, long batch, model_dtype prec, double *t, int *extrap,
              err_t *e) {
  model_op op = {.kind = MODEL_OP_EWISE, .elems = {numel, 0}, .arrays = arrays, .count = 1, .launches = 1,
                 .follows_run = 1};
  snprintf(op.name, sizeof op.name, "ddp_bucket_copy");
  double host;
  return cost_op_sides(c, &op, batch, prec, t, &host, extrap, e);
}

int cost_input(const sim_config *c, const model_t *m, long batch, sim_h2d *mode_out, double *copy_s, err_t *e) {
  if (c->load_s < 0 || !isfinite(c->load_s)) return err_set(e, ERR_INPUT, "load time per batch must be >= 0");
  if (c->workers < 0 || c->workers > 256) return err_set(e, ERR_INPUT, "DataLoader workers must be 0 to 256, got %d", c->workers);
  *copy_s = 0;
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
  *mode_out = mode;
  if (mode == SIM_H2D_OFF) return ERR_OK;
  if (bytes <= 0)
    return err_set(e, ERR_INPUT, "%s: the model has no 'input' line: the bytes of a sample to copy are unknown", m->path);
  int rc = profile_h2d(c->profile, profile_mode[mode], &have, &lat, &bw, e);
  if (rc) return rc;
  if (!have)
    return err_set(e, ERR_INPUT, "%s: no h2d.%s (host-to-device copy cost; ddpcalib h2d measures it)", profile_name(c->profile),
                   profile_mode[mode]);
  *copy_s = lat + bytes / bw;
  return ERR_OK;
}
