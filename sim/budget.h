/* budget: how long and how much: a prediction's iteration turned into time to train, GPU-hours,
 * cost, energy and CO2 (docs/memory.md, "Time, cost and energy", derives each and says what is left
 * out).
 *
 *   samples     = a whole number >= 1; E epochs of S: ceil(E * S)  (a partial epoch's last, partial
 *                 sample counts whole, as the last batch does)
 *   iterations  = ceil(samples / (gpus * batch))        (the last, partial batch counts whole)
 *   train_s     = iterations * iteration_s
 *   gpu_hours   = gpus * train_s / 3600;  cost = gpu_hours * price per GPU-hour
 *   utilization = compute_s / iteration_s               (the share of the iteration the GPU's compute
 *                                                        stream spans, host-bound gaps included)
 *   power_W     = idle_W + utilization * (tdp_W - idle_W)   per GPU (the card's, profile "device")
 *   energy_kWh  = gpus * power_W * train_s / 3.6e6;     co2_kg = energy_kWh * grid kgCO2 per kWh
 * The GPUs' board power only: host CPUs, memory, network, cooling (PUE) are not counted. */
#ifndef DDPSIM_BUDGET_H
#define DDPSIM_BUDGET_H

#include <cjson/cJSON.h>

#include "err.h"
#include "profile.h"

typedef struct {
  double samples;            /* samples to train, all GPUs together: a whole number >= 1 */
  double price_per_gpu_hour; /* currency per GPU-hour; 0: no cost */
  double grid_kgco2_per_kwh; /* kg CO2 per kWh of the grid; 0: no CO2 */
  const char *price_source;  /* where the price is from (a price table's row, sim/prices.h); NULL: given */
  char currency[8];          /* the price's currency (a price table's row: USD); "": a price given as a number */
} budget_job;

typedef struct {
  double iterations, train_s, gpu_hours;
  double cost;               /* 0 when no price was given (has_cost 0) */
  double utilization, power_W, energy_kwh, co2_kg; /* energy 0 when the card's power is unknown */
  int has_cost, has_energy, has_co2;
} budget_result;

/* The whole samples of `epochs` epochs of a data set of `dataset_size` samples (both > 0, the size a
 * whole number): ceil(epochs x dataset_size), where a product within rounding (1e-9) of a whole
 * number is that number (1.1 x 10 is 11 samples, not 12). 0 where the epochs hold less than one
 * sample: nothing to train (the caller refuses it). */
double budget_samples(double epochs, double dataset_size);

/* The budget of j on `gpus` GPUs of card d, each running `batch` samples per iteration of
 * iteration_s seconds, computing compute_s of it. ERR_USAGE for samples, gpus, batch or times out
 * of range (samples not a whole number >= 1, a non-positive or non-finite value, compute_s above
 * iteration_s by more than rounding). */
int budget_compute(const budget_job *j, int gpus, long batch, double iteration_s, double compute_s, const profile_device *d,
                   budget_result *out, err_t *e);

/* The `budget` object of predict's JSON (docs/cli.md); NULL when out of memory. */
cJSON *budget_json(const budget_job *j, const budget_result *b);
/* Table lines (malloc'd; NULL when out of memory). */
char *budget_table(const budget_job *j, const budget_result *b);

#endif
