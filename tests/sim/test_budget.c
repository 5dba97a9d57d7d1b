/* test_budget: the memory parts (sim/memory.h) and the time, cost and energy arithmetic
 * (sim/budget.h), each against numbers worked out by hand in the comments. */
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "check.h"
#include "fixtures.h"
#include "memory.h"
#include "model.h"
#include "profile.h"
#include "sim.h"

/* A card of 1 GiB with a 100 MiB context, 300 W board power, 50 W idle. */
static const char *profile_text =
    "{\"format\": \"ddpsim-profile\", \"version\": 1, \"name\": \"b\",\n"
    " \"device\": {\"memory_bytes\": 1073741824, \"cuda_context_bytes\": 104857600, \"tdp_W\": 300, \"idle_W\": 50},\n"
    " \"compute\": {\"fp32\": {\"gemm\": {\"model\": \"roofline\", \"launch_s\": 1e-6, \"peak_flops\": 1e13, \"efficiency\": 0.5, \"mem_bw_Bps\": 1e11},\n"
    "                        \"ewise\": {\"model\": \"roofline\", \"launch_s\": 1e-6, \"mem_bw_Bps\": 1e11}},\n"
    "             \"fp16\": {\"gemm\": {\"model\": \"roofline\", \"launch_s\": 1e-6, \"peak_flops\": 1e13, \"efficiency\": 0.5, \"mem_bw_Bps\": 1e11},\n"
    "                        \"ewise\": {\"model\": \"roofline\", \"launch_s\": 1e-6, \"mem_bw_Bps\": 1e11}}},\n"
    " \"comm\": {\"links\": {\"nvl\": {\"bw_Bps\": 1e10, \"lat_s\": 1e-6}}}}\n";

/* Two parameters: w 1000x1000 (run type), b 1000 fixed fp32; 6e6+8 run elements plus 4096 bytes per sample. */
static const char *model_text =
    "ddpsim-model 5\nname b\nbatch 8\ntokens 1 samples\nprecision fp16\nbuffers 4096\n"
    "saved elems=8+6000000*B bytes=4096*B\noptim adam\n"
    "param w 1000x1000\nparam b 1000 fp32\n"
    "forward\ngemm f m=1000 n=B k=1000\nbackward\ngemm d m=1000 n=1000 k=B ready=w,b\n"
    "optimizer\newise adam elems=1001000 arrays=7 dtype=fp32\n";

int main(void) {
  err_t e;
  profile_t *p = fixture_profile(profile_text, "b.json");
  model_t *m = fixture_model(model_text, "b.model");
  sim_config c;
  sim_config_defaults(&c);
  c.model = m;
  c.profile = p;
  c.nodes = 1;
  memory_parts mp;

  /* fp16, batch 8, Adam: parameters 2e6 + 4000 bytes, gradients the same, buckets (a second copy)
   * the same; master weights and gradients of w only (b is fp32 already): 2 x 4e6; Adam's two fp32
   * states: 2 x (4e6 + 4000); activations 2 x (8 + 48e6) + 8 x 4096; buffers 4096; context 100 MiB. */
  int rc = memory_estimate(&c, MODEL_OPTIM_UNKNOWN, &mp, &e);
  CHECK(rc == 0 && mp.optim == MODEL_OPTIM_ADAM && mp.optim_states == 2, "the model's optimizer: adam, 2 states");
  CHECK(mp.params_bytes == 2004000 && mp.grads_bytes == 2004000 && mp.buckets_bytes == 2004000,
        "parameters, gradients, buckets 2,004,000 bytes each (%.0f %.0f %.0f)", mp.params_bytes, mp.grads_bytes,
        mp.buckets_bytes);
  CHECK(mp.master_bytes == 8e6 && mp.optim_bytes == 8008000, "master 8e6, Adam state 8,008,000 (%.0f %.0f)", mp.master_bytes,
        mp.optim_bytes);
  CHECK(mp.activations_bytes == 2.0 * (8 + 48e6) + 8 * 4096 && mp.per_sample_bytes == 12e6 + 4096,
        "activations at batch 8: 96,032,784 bytes, 12,004,096 per sample (%.0f)", mp.activations_bytes);
  CHECK(mp.context_bytes == 104857600 && mp.buffers_bytes == 4096, "context 100 MiB, buffers 4096");
  double sum = mp.params_bytes + mp.grads_bytes + mp.buckets_bytes + mp.master_bytes + mp.optim_bytes + mp.activations_bytes +
               mp.buffers_bytes + mp.context_bytes + mp.allocator_bytes;
  CHECK(mp.peak_bytes == sum && mp.allocator_bytes > 0 && mp.allocator_bytes < 6 * 512.0 * 4, "the parts add up to the peak");
  /* Largest batch: (1 GiB - fixed) / 12,004,096. */
  double fixed = mp.peak_bytes - 8 * mp.per_sample_bytes;
  long want = (long)((1073741824.0 - fixed) / (12e6 + 4096));
  CHECK(memory_max_batch(&mp) == want && !memory_oom(&mp), "batch 8 fits; the largest that fits is %ld (%ld)", want,
        memory_max_batch(&mp));
  c.batch = want + 1;
  memory_estimate(&c, MODEL_OPTIM_UNKNOWN, &mp, &e);
  char msg[200];
  memory_oom_message(&mp, msg, sizeof msg);
  CHECK(memory_oom(&mp) && strstr(msg, "OOM at batch") && strstr(msg, "of 1.00 GiB; largest batch that fits"), "one more: %s", msg);
  c.batch = 8;
  c.bucket_view = 1;
  memory_estimate(&c, MODEL_OPTIM_SGD, &mp, &e);
  CHECK(mp.buckets_bytes == 0 && mp.optim_bytes == 0, "gradient_as_bucket_view: no second copy; plain SGD: no state");
  c.precision = MODEL_FP32;
  memory_estimate(&c, MODEL_OPTIM_SGD_MOMENTUM, &mp, &e);
  CHECK(mp.master_bytes == 0 && mp.params_bytes == 4004000 && mp.optim_bytes == 4004000 &&
            mp.activations_bytes == 4.0 * (8 + 48e6) + 8 * 4096,
        "fp32: no master copies; momentum 4,004,000; activations at 4 bytes");
  model_t *m2 = fixture_model("ddpsim-model 1\nname n\nbatch 8\ntokens 1 samples\nprecision fp32\nparam w 10\n"
                              "forward\ngemm f m=10 n=B k=1\nbackward\ngemm d m=10 n=1 k=B ready=w\n", "n.model");
  c.model = m2;
  rc = memory_estimate(&c, MODEL_OPTIM_UNKNOWN, &mp, &e);
  char *tab = rc ? NULL : memory_table(&mp);
  CHECK(rc == 0 && mp.optim_states == -1 && mp.optim_bytes == 0 && tab && strstr(tab, "give --optimizer"),
        "no optim line and no --optimizer: the state is not counted, and the table says so");
  free(tab);
  rc = memory_estimate(&c, MODEL_OPTIM_ADAMW, &mp, &e);
  CHECK(rc == 0 && !mp.activations_known && memory_max_batch(&mp) == -1, "no saved line: activations unknown, no largest batch");

  /* Budget: 8 GPUs x batch 32, 0.5 s per iteration of which 0.4 s computing, 25,600 samples:
   * 100 iterations, 50 s, 8 x 50 / 3600 = 0.1111 GPU-hours, at 3 per GPU-hour 0.3333; utilization
   * 0.8, power 50 + 0.8 x 250 = 250 W, energy 8 x 250 x 50 / 3.6e6 = 0.027778 kWh, at 0.5 kg/kWh
   * 0.013889 kg. */
  profile_device d;
  profile_get_device(p, &d);
  budget_job j = {.samples = 25600, .price_per_gpu_hour = 3, .grid_kgco2_per_kwh = 0.5};
  budget_result b;
  rc = budget_compute(&j, 8, 32, 0.5, 0.4, &d, &b, &e);
  CHECK(rc == 0 && b.iterations == 100 && b.train_s == 50, "100 iterations, 50 s");
  CHECK(check_close(400.0 / 3600, b.gpu_hours, 0, 1e-12) && check_close(1200.0 / 3600, b.cost, 0, 1e-12),
        "0.1111 GPU-hours, cost 0.3333 (%.6f, %.6f)", b.gpu_hours, b.cost);
  CHECK(check_close(0.8, b.utilization, 0, 1e-12) && check_close(250, b.power_W, 0, 1e-12), "utilization 0.8, 250 W per GPU");
  CHECK(check_close(100000.0 / 3.6e6, b.energy_kwh, 0, 1e-12) && check_close(50000.0 / 3.6e6, b.co2_kg, 0, 1e-12),
        "0.027778 kWh, 0.013889 kg CO2 (%.6f, %.6f)", b.energy_kwh, b.co2_kg);
  j.samples = 25601;
  budget_compute(&j, 8, 32, 0.5, 0.4, &d, &b, &e);
  CHECK(b.iterations == 101, "one sample more: a 101st (partial) iteration");
  profile_device none = {0};
  j.price_per_gpu_hour = 0;
  budget_compute(&j, 8, 32, 0.5, 0.4, &none, &b, &e);
  CHECK(!b.has_cost && !b.has_energy && !b.has_co2 && b.energy_kwh == 0, "no price, no card power: no cost, energy or CO2");
  CHECK(budget_compute(&j, 8, 32, 0.5, 0.6, &d, &b, &e) == ERR_USAGE, "compute longer than the iteration is refused");
  j.samples = 0;
  CHECK(budget_compute(&j, 8, 32, 0.5, 0.4, &d, &b, &e) == ERR_USAGE, "no samples is refused");
  /* issue 48: samples are whole; a partial epoch's last sample counts whole; less than one is none. */
  j.samples = 4.5;
  CHECK(budget_compute(&j, 8, 32, 0.5, 0.4, &d, &b, &e) == ERR_USAGE, "4.5 samples (a part of one) are refused");
  CHECK(budget_samples(1.5, 3) == 5 && budget_samples(2.385, 1000) == 2385 && budget_samples(2.3851, 1000) == 2386,
        "1.5 epochs of 3 samples are 5; 2.385 of 1000 are 2385, 2.3851 of them 2386");
  CHECK(budget_samples(1.1, 10) == 11 && budget_samples(0.7, 10) == 7, "1.1 x 10 is 11 samples, 0.7 x 10 is 7 (not 12, 8: rounding)");
  CHECK(budget_samples(0.0001, 1) == 0 && budget_samples(0.5, 1) == 0 && budget_samples(1, 1) == 1,
        "less than one sample's worth is none (0.0001 x 1, 0.5 x 1); one epoch of one is one");

  model_destroy(m2);
  model_destroy(m);
  profile_destroy(p);
  return check_status();
}
