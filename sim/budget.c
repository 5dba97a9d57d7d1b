/* budget: time to train, GPU-hours, cost, energy and CO2 of a prediction (budget.h). */
#include "budget.h"

#include <math.h>

#include "strbuf.h"

double budget_samples(double epochs, double dataset_size) {
  double n = epochs * dataset_size, near = round(n);
  if (fabs(n - near) <= 1e-9 * n) return near;
  return n < 1 ? 0 : ceil(n);
}

int budget_compute(const budget_job *j, int gpus, long batch, double iteration_s, double compute_s, const profile_device *d,
                   budget_result *out, err_t *e) {
  *out = (budget_result){0};
  if (!(j->samples >= 1) || !isfinite(j->samples) || j->samples != floor(j->samples))
    return err_set(e, ERR_USAGE, "the samples to train must be a whole number from 1, got %g", j->samples);
  if (gpus < 1 || batch < 1) return err_set(e, ERR_USAGE, "gpus (%d) and batch (%ld) must be positive", gpus, batch);
  if (!(iteration_s > 0) || !isfinite(iteration_s) || !(compute_s >= 0) || compute_s > iteration_s * (1 + 1e-9))
    return err_set(e, ERR_USAGE, "iteration %g s with compute %g s: not a valid prediction", iteration_s, compute_s);
  if (!(j->price_per_gpu_hour >= 0) || !(j->grid_kgco2_per_kwh >= 0))
    return err_set(e, ERR_USAGE, "a price or a grid intensity must not be negative");
  out->iterations = ceil(j->samples / ((double)gpus * (double)batch));
  out->train_s = out->iterations * iteration_s;
  out->gpu_hours = (double)gpus * out->train_s / 3600.0;
  out->has_cost = j->price_per_gpu_hour > 0;
  out->cost = out->gpu_hours * j->price_per_gpu_hour;
  out->utilization = fmin(1.0, compute_s / iteration_s);
  if (d->tdp_W > 0 && d->idle_W > 0) {
    out->has_energy = 1;
    out->power_W = d->idle_W + out->utilization * (d->tdp_W - d->idle_W);
    out->energy_kwh = (double)gpus * out->power_W * out->train_s / 3.6e6;
    out->has_co2 = j->grid_kgco2_per_kwh > 0;
    out->co2_kg = out->energy_kwh * j->grid_kgco2_per_kwh;
  }
  return ERR_OK;
}

cJSON *budget_json(const budget_job *j, const budget_result *b) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddNumberToObject(o, "samples", j->samples);
  cJSON_AddNumberToObject(o, "iterations", b->iterations);
  cJSON_AddNumberToObject(o, "train_s", b->train_s);
  cJSON_AddNumberToObject(o, "train_hours", b->train_s / 3600.0);
  cJSON_AddNumberToObject(o, "gpu_hours", b->gpu_hours);
  if (b->has_cost) {
    cJSON_AddNumberToObject(o, "price_per_gpu_hour", j->price_per_gpu_hour);
    if (j->currency[0]) cJSON_AddStringToObject(o, "currency", j->currency);
    else cJSON_AddNullToObject(o, "currency");
    cJSON_AddNumberToObject(o, "cost", b->cost);
    if (j->price_source) cJSON_AddStringToObject(o, "price_source", j->price_source);
  } else {
    cJSON_AddNullToObject(o, "cost");
  }
  cJSON_AddNumberToObject(o, "utilization", b->utilization);
  if (b->has_energy) {
    cJSON_AddNumberToObject(o, "power_W_per_gpu", b->power_W);
    cJSON_AddNumberToObject(o, "energy_kwh", b->energy_kwh);
  } else {
    cJSON_AddNullToObject(o, "energy_kwh");
  }
  if (b->has_co2) {
    cJSON_AddNumberToObject(o, "grid_kgco2_per_kwh", j->grid_kgco2_per_kwh);
    cJSON_AddNumberToObject(o, "co2_kg", b->co2_kg);
  } else {
    cJSON_AddNullToObject(o, "co2_kg");
  }
  return o;
}

char *budget_table(const budget_job *j, const budget_result *b) {
  strbuf s = {0};
  strbuf_printf(&s, "%-24s %14.2f h     (%.0f sample%s in %.0f iteration%s)\n", "time to train", b->train_s / 3600.0, j->samples,
                j->samples == 1 ? "" : "s", b->iterations, b->iterations == 1 ? "" : "s");
  strbuf_printf(&s, "%-24s %14.1f\n", "GPU-hours", b->gpu_hours);
  if (b->has_cost)
    strbuf_printf(&s, "%-24s %14.2f %-5s (at %g%s%s per GPU-hour)\n", "cost", b->cost, j->currency, j->price_per_gpu_hour,
                  j->currency[0] ? " " : "", j->currency);
  if (b->has_cost && j->price_source) strbuf_printf(&s, "# price: %s\n", j->price_source);
  if (b->has_energy)
    strbuf_printf(&s, "%-24s %14.1f kWh   (GPUs' board power only: %.0f W each at %.0f%% compute)\n", "energy", b->energy_kwh,
                  b->power_W, 100.0 * b->utilization);
  else strbuf_printf(&s, "# energy: the profile does not give the card's power (device.tdp_W, idle_W)\n");
  if (b->has_co2) strbuf_printf(&s, "%-24s %14.1f kg    (at %g kg CO2 per kWh)\n", "CO2", b->co2_kg, j->grid_kgco2_per_kwh);
  return strbuf_take(&s);
}
