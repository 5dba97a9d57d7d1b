/* cmd_compute: `ddpcalib compute`, the real kernels, the model's GEMMs, a GEMM grid and copies
 * timed (calib/computebench.h), fitted and written as compute.<precision> (calib/record.h).
 * docs/calib.md, "compute". */
#include <stdio.h>

#include <stdlib.h>

#include "calcmd.h"
#include "computebench.h"
#include "parse.h"
#include "record.h"

static const char *usage =
    "usage: ddpcalib compute --backend cpu|cuda [--hidden LIST] [--batch LIST] [--seq T]\n"
    "                        [--precision fp32|fp16|bf16] [--tf32] [--model FILE [--model-batch B]]\n"
    "                        [-n ITERS] [-w WARMUPS] [-o PROFILE]\n"
    "\n"
    "Times, with the real kernels (kernels/mlstm.h), the mLSTM forward and backward per step, the\n"
    "weight-gradient GEMMs, the decoder and loss at each hidden size x batch; then a GEMM grid\n"
    "(cblas_sgemm on cpu, cuBLAS on cuda on random operands) and elementwise copies of 4 KiB to\n"
    "256 MiB (512 MiB moved, past the last-level cache of current CPUs and cards). Keeps every\n"
    "per-iteration time, fits compute.<precision>.gemm and .ewise as \"model\": \"table\" with a\n"
    "fitted roofline fallback. --model also times every GEMM shape of that model file (a conv's\n"
    "implicit GEMM) at its batch, so that the profile prices that model from measured shapes; the\n"
    "profile's gemm table records them (model_shapes).\n"
    "\n";

static const char *const backends[] = {"cpu", "cuda", NULL};

/* --hidden and --batch: calib/parse.c's strict list (an empty item is refused). */
typedef struct {
  long *v;
  size_t *n;
} dims;

static int parse_dims(const char *text, void *dest) {
  const dims *d = dest;
  err_t e;
  return parse_int_list(text, "", 1, 65536, d->v, COMPUTEBENCH_MAX_LIST, d->n, &e) ? -1 : 0;
}

static void print_meas(const computebench_meas *m, void *arg) {
  (void)arg;
  char shape[64] = "", rate[32] = "";
  if (m->m)
    snprintf(shape, sizeof shape, "%ldx%ldx%ld", m->m, m->n, m->k);
  else if (m->kind == COMPUTEBENCH_EWISE)
    snprintf(shape, sizeof shape, "%.0f B", m->bytes);
  if (m->flops > 0) snprintf(rate, sizeof rate, "%.2f", m->flops / m->median_s / 1e9);
  else if (m->bytes > 0) snprintf(rate, sizeof rate, "%.2f GB/s", m->bytes / m->median_s / 1e9);
  printf("%-12s %5d %4d %4d  %-18s %6zu %11.2f %11.2f %9.2f  %s\n", m->name, m->H, m->B, m->T, shape,
         m->nsamples, m->median_s * 1e6, m->mean_s * 1e6, m->stdev_s * 1e6, rate);
  fflush(stdout);
}

static void print_fit(const char *prec, const record_compute_fit *fit) {
  printf("# fit compute.%s.gemm: table of %zu shapes (leave-one-out error rms %.1f%%, max %.1f%%);\n"
         "#   fallback roofline launch %.2f us, %.2f GFLOP/s, %zu compute-bound; residual rms %.1f%% max %.1f%%\n",
         prec, fit->gemm_points, fit->gemm_loo_rms * 100, fit->gemm_loo_max * 100, fit->gemm.launch_s * 1e6,
         fit->gemm.rate_flops / 1e9, fit->gemm.compute_bound, fit->gemm.rms_rel * 100, fit->gemm.max_rel * 100);
  printf("# fit compute.%s.ewise: table of %zu sizes (leave-one-out error rms %.1f%%, max %.1f%%);\n"
         "#   fallback roofline launch %.2f us, %.2f GB/s; residual rms %.1f%% max %.1f%%\n",
         prec, fit->ewise_points, fit->ewise_loo_rms * 100, fit->ewise_loo_max * 100, fit->ewise.launch_s * 1e6,
         fit->ewise.mem_bw_Bps / 1e9, fit->ewise.rms_rel * 100, fit->ewise.max_rel * 100);
  if (fit->jitter_ratios) printf("# compute.jitter: %zu measured iteration ratios\n", fit->jitter_ratios);
  if (fit->jitter_left_out[0]) printf("# warning: %s\n", fit->jitter_left_out);
}

int cmd_compute(cli_ctx *x, int argc, char **argv) {
  computebench_cfg cfg = {.backend = -1, .hidden = {256}, .nhidden = 1, .batch = {8}, .nbatch = 1, .seq = 8,
                          .iters = 10, .warmups = 2, .gemm_max = 512, .copy_max_bytes = COMPUTEBENCH_COPY_MAX_BYTES};
  const char *output = NULL, *model_path = NULL;
  long model_batch = 0;
  int accept_poor = 0;
  dims hidden = {cfg.hidden, &cfg.nhidden}, batch = {cfg.batch, &cfg.nbatch};
  const cli_opt opts[] = {
      {"backend", 0, CLI_ENUM, &cfg.backend, "cpu|cuda",
       "cpu: CBLAS reference kernels, monotonic clock; cuda: CUDA events", .names = backends},
      {"hidden", 0, CLI_CUSTOM, &hidden, "LIST", "hidden sizes H, comma-separated (default 256)", .parse = parse_dims,
       .must = "must be a comma-separated list of integers from 1 to 65536"},
      {"batch", 0, CLI_CUSTOM, &batch, "LIST", "batch sizes B, comma-separated (default 8)", .parse = parse_dims,
       .must = "must be a comma-separated list of integers from 1 to 65536"},
      {"seq", 0, CLI_INT, &cfg.seq, "T", "sequence length of the timed mLSTM pass (default 8)", CLI_MIN | CLI_MAX, 1,
       100000},
      {"precision", 0, CLI_ENUM, &cfg.precision, "P", "fp32, fp16 or bf16 (fp16, bf16: cuda only; default fp32)",
       .names = computebench_precisions},
      {"tf32", 0, CLI_FLAG, &cfg.tf32, NULL,
       "cuda fp32: let cuBLAS use TF32 tensor cores (PyTorch's allow_tf32); default strict fp32"},
      {"iters", 'n', CLI_INT, &cfg.iters, "N", "timed iterations of each measurement (default 10)", CLI_MIN | CLI_MAX,
       1, CALCMD_MAX_ITERS, .must = "(-n) must be an integer from 1 to 1000000"},
      {"warmup_iters", 'w', CLI_INT, &cfg.warmups, "W", "untimed warm-up iterations (default 2)", CLI_MIN | CLI_MAX, 0,
       CALCMD_MAX_ITERS, .must = "(-w) must be an integer from 0 to 1000000"},
      {"gemm-max", 0, CLI_LONG, &cfg.gemm_max, "D", "largest GEMM dimension of the plain grid (default 512)",
       CLI_MIN | CLI_MAX, 16, 65536},
      {"model", 0, CLI_STRING, &model_path, "FILE", "also time every GEMM shape of this model file (models/README.md)"},
      {"model-batch", 0, CLI_LONG, &model_batch, "B", "per-GPU batch of --model's shapes (default: the file's)",
       CLI_MIN | CLI_MAX, 1, MODEL_BATCH_MAX},
      {"output", 'o', CLI_STRING, &output, "FILE", "profile to write (atomically); without it, only print"},
      {"accept-poor-fit", 0, CLI_FLAG, &accept_poor, NULL, CALCMD_ACCEPT_POOR_HELP},
      {0}};
  const cli_opt *tables[] = {opts, NULL};
  const cli_cmd c = {.usage = usage, .tables = tables};
  err_t e = {{0}};
  int rc = cli_parse(x, &c, argc, argv, NULL, NULL, stdout);
  if (rc) return rc;
  if (cfg.backend < 0) return cli_usage(x, "--backend cpu|cuda is required");
  if ((rc = computebench_check_cfg(&cfg, &e))) return calcmd_status(x, rc, &e);
  if ((rc = calcmd_check_output(x, output)) || (rc = calcmd_not_input(x, "-o", output, (const char *[]){"--model"}, &model_path, 1)))
    return rc;
  if (model_batch && !model_path) return cli_usage(x, "--model-batch needs --model");
  model_t *model = NULL;
  if (model_path) {
    if ((rc = model_load(model_path, &model, &e))) return calcmd_status(x, rc, &e);
    if (!model_batch) model_batch = model->batch;
    rc = computebench_model_shapes(model, model_batch, &cfg.model_shapes, &cfg.nmodel_shapes, &e);
    if (!rc) snprintf(cfg.model_name, sizeof cfg.model_name, "%s", model->name);
    cfg.model_batch = model_batch;
    model_destroy(model);
    if (rc) return calcmd_status(x, rc, &e);
    printf("# --model %s: %zu distinct GEMM shapes at batch %ld\n", model_path, cfg.nmodel_shapes, model_batch);
  }

  const char *prec = computebench_precisions[cfg.precision];
  printf("# ddpcalib compute: backend %s, %s%s, %d warm-up + %d timed runs per measurement\n", backends[cfg.backend],
         prec, cfg.tf32 ? " (TF32 tensor cores)" : "", cfg.warmups, cfg.iters);
  printf("# %-10s %5s %4s %4s  %-18s %6s %11s %11s %9s  %s\n", "op", "H", "B", "T", "m x n x k | size",
         "runs", "median(us)", "mean(us)", "sd(us)", "GFLOP/s | GB/s");
  computebench_result res = {0};
  cJSON *doc = NULL;
  record_compute_fit fit;
  rc = computebench_run(&cfg, print_meas, NULL, &res, &e);
  if (!rc) {
    profilew_prov p = calcmd_prov("compute");
    p.devices = res.dev.name, p.libraries = res.library;
    if (res.driver[0]) p.driver = res.driver;
    doc = profilew_new("measured", &p);
    rc = doc ? record_compute(doc, &cfg, &res, &fit, &e) : err_set(&e, ERR_NOMEM, "out of memory");
  }
  if (!rc) {
    char dev[512];
    devinfo_summary(&res.dev, dev, sizeof dev);
    print_fit(prec, &fit);
    printf("# device: %s\n", dev);
  }
  if (!rc) rc = calcmd_gate_compute(doc, prec, &fit, accept_poor, &e);
  if (!rc && output) rc = calcmd_write(doc, output, &e);
  cJSON_Delete(doc);
  free(cfg.model_shapes);
  computebench_result_free(&res);
  return calcmd_status(x, rc, &e);
}
