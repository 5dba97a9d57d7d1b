/* ddpsim: predict how fast a data-parallel (PyTorch DDP) training job runs on many GPUs.
 * A thin front end: flags in, library calls, output; exit 0 ok, 1 failure, 2 misuse. */
#include <errno.h>
#include <getopt.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sort.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bucket.h"
#include "data.h"
#include "model.h"
#include "modelgen.h"
#include "modelzoo.h"
#include "nccl.h"
#include "predict.h"
#include "profile.h"
#include "report.h"
#include "sim.h"
#include "topo.h"

int cmd_validate(int argc, char **argv); /* cmd_validate.c */

#define EXIT_MISUSE 2
#define MAX_LIST 64

static const char *prog = "ddpsim";

static void usage_main(FILE *f) {
  fprintf(f,
          "usage: ddpsim COMMAND [options]\n"
          "\n"
          "Predicts the throughput of PyTorch DistributedDataParallel training with a SimGrid\n"
          "simulation of every GPU, from a model, a topology and a hardware profile.\n"
          "\n"
          "commands:\n"
          "  predict    throughput, scaling efficiency and time breakdown for one configuration\n"
          "  sweep      predictions over lists of node counts, bucket caps and topologies\n"
          "  recommend  the bucket cap to use, from a sweep of caps for one configuration\n"
          "  trace      the simulated iteration as a Chrome trace (timeline)\n"
          "  buckets    DDP's gradient bucket assignment for a model\n"
          "  genmodel   write a model file (mlstm) from its sizes\n"
          "  validate   predictions against a real data-parallel run on this machine (ddpcalib train)\n"
          "\n"
          "`ddpsim COMMAND --help` describes each. Bundled data: %s\n",
          data_dir());
}

static const char *common_help =
    "  --model M            model file or bundled name (default mlstm-4k)\n"
    "  --topology T         topology file or bundled name (default dgx1v-ib)\n"
    "  --profile P          profile file or bundled name (default v100-dgx1v)\n"
    "  --gpus-per-node G    GPUs per node (default: the topology's)\n"
    "  --batch B            per-GPU batch (default: the model's)\n"
    "  --precision fp32|fp16  run precision (default: the model's)\n"
    "  --first-bucket-mb Y  first bucket cap in MB (default 1)\n"
    "  --rebuilt            buckets rebuilt in gradient-ready order (after DDP's first iteration)\n"
    "  --bucket-view        DDP(gradient_as_bucket_view=True): no gradient copies into and out of\n"
    "                       buckets (PyTorch's default copies them)\n"
    "  --static-graph       DDP(static_graph=True): rebuilt buckets, and the first iteration's single\n"
    "                       bucket reported apart\n"
    "  --mode ddp|flat      ddp: bucketed all-reduces overlapping backward (default);\n"
    "                       flat: one all-reduce of all gradients after backward\n"
    "  --fidelity flow|step flow: one flow per ring edge (default, fast); step: every ring step\n"
    "  --iterations K       iterations simulated, steady state from the 2nd on (default 3)\n"
    "  --no-sync K          all-reduce every K-th iteration only (DDP's no_sync(); default 1)\n"
    "  --comm-hook none|fp16  fp16: DDP's fp16_compress_hook (half the bytes, two casts)\n"
    "  --jitter-cv X        each GPU's compute per iteration varies (lognormal, this coefficient\n"
    "                       of variation; 0: none); default: the profile's compute.jitter, if any\n"
    "  --seed N             seed of the jitter draws (default 1)\n"
    "  --nccl-algo LIST     NCCL_ALGO: ring, tree or both (default auto: NCCL's fastest)\n"
    "  --nccl-proto LIST    NCCL_PROTO: LL, LL128, Simple (default auto); needs the profile's comm.nccl\n"
    "  --num-workers W      DataLoader workers loading batches (default 0: the training loop loads)\n"
    "  --load-ms X          time one worker takes to load one batch (default 0: loading not modelled)\n"
    "  --pin-memory         batches in pinned memory (faster copies; default pageable, as PyTorch)\n"
    "  --non-blocking       copies with non_blocking=True (no effect without --pin-memory)\n"
    "  --prefetch           pinned copies one batch ahead on a side stream, overlapping compute\n"
    "  --no-h2d             do not model the host-to-device copy of the batch\n"
    "  --framework ddp|dp   ddp: DistributedDataParallel (default); dp: DataParallel, one process with\n"
    "                       one thread per GPU whose kernel launches take turns under Python's GIL\n"
    "  --host-launch-us X   host cost of one kernel launch (default: the profile's compute.host, or 0)\n"
    "  --dp-backward-gil    dp: backward's launches take turns under the GIL too (autograd functions\n"
    "                       written in Python, as in 2017 PyTorch; default: C++ threads)\n";

static void usage_predict(FILE *f) {
  fprintf(f,
          "usage: ddpsim predict [--nodes N] [--bucket-cap-mb X] [options] [--json]\n"
          "\n"
          "Simulates DDP training on N nodes and prints throughput (samples/s and tokens/s),\n"
          "scaling efficiency against one GPU, the time breakdown and every bucket's timeline.\n"
          "\n"
          "  --nodes N            number of nodes (default 1)\n"
          "  --bucket-cap-mb X    DDP's bucket_cap_mb (default 25)\n"
          "%s"
          "  --json               print one JSON object instead of the table\n"
          "  --trace FILE         also write the reported iteration of rank 0 as a Chrome trace\n"
          "                       (chrome://tracing or ui.perfetto.dev), atomically\n",
          common_help);
}

static void usage_sweep(FILE *f) {
  fprintf(f,
          "usage: ddpsim sweep [--nodes LIST] [--bucket-cap-mb LIST] [--topology LIST] [options] [--csv]\n"
          "\n"
          "Predicts every combination of the comma-separated lists (e.g. --nodes 1,2,4,8,16\n"
          "--bucket-cap-mb 1,25,100 --topology dgx1v-ib,dgx1v-10gbe) and prints a table, or CSV.\n"
          "\n"
          "%s"
          "  --csv                comma-separated output with a header line\n",
          common_help);
}

#define RECOMMEND_CAPS "0.5,1,2,5,10,25,50,100,200"

static void usage_recommend(FILE *f) {
  fprintf(f,
          "usage: ddpsim recommend [--nodes N] [--bucket-cap-mb LIST] [options] [--json]\n"
          "\n"
          "Simulates one configuration at every bucket cap of LIST (default %s MB;\n"
          "PyTorch's default 25 MB is always included) and recommends the fastest: its gain over the\n"
          "default and the caps within 1%% of it.\n"
          "\n"
          "%s"
          "  --json               one JSON object: caps, recommended_bucket_cap_mb, gain_over_default\n",
          RECOMMEND_CAPS, common_help);
}

static void usage_trace(FILE *f) {
  fprintf(f,
          "usage: ddpsim trace -o FILE [--nodes N] [--bucket-cap-mb X] [options]\n"
          "\n"
          "Writes the reported iteration of rank 0 (compute and communication streams, every bucket) as\n"
          "a Chrome trace to FILE, atomically (chrome://tracing or ui.perfetto.dev): `predict --trace FILE`\n"
          "without the report.\n"
          "\n"
          "%s"
          "  -o, --output FILE    the trace file (required)\n",
          common_help);
}

static void usage_buckets(FILE *f) {
  fprintf(f,
          "usage: ddpsim buckets [--model M] [--bucket-cap-mb X] [--first-bucket-mb Y]\n"
          "                      [--precision fp32|fp16] [--rebuilt] [--mode ddp|flat] [--json]\n"
          "\n"
          "Prints DDP's gradient buckets in reduction order, with bytes and parameter names and\n"
          "registration indices (0-based), exactly as PyTorch's Reducer assigns them.\n");
}

static void usage_genmodel(FILE *f) {
  fprintf(f,
          "usage: ddpsim genmodel mlstm --hidden H [--embed E] [--vocab V] [--seq T] [--batch B] [common]\n"
          "       ddpsim genmodel resnet --depth 18|34|50|101|152 [--image PX] [--classes C] [--batch B]\n"
          "                              [--amp] [common]\n"
          "       ddpsim genmodel bert [--size base|large] [--seq S] [--batch B] [--amp] [common]\n"
          "common: [--precision fp32|fp16] [--name NAME] [-o FILE]\n"
          "\n"
          "Writes a model file to FILE (atomically) or to standard output (docs/models.md):\n"
          "  mlstm   sentiment-discovery's multiplicative LSTM; defaults embed 64, vocab 256, seq 256,\n"
          "          batch 256, fp16\n"
          "  resnet  torchvision's ResNet; defaults 224x224 images, 1000 classes, batch 64, fp16\n"
          "  bert    Hugging Face's BertForPreTraining; defaults base, seq 128, batch 32, fp16\n"
          "--amp keeps parameters and gradients fp32 (torch.cuda.amp) while ops run at --precision.\n");
}

static int misuse(void (*usage)(FILE *), const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int misuse(void (*usage)(FILE *), const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s: ", prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  (void)usage;
  fprintf(stderr, "(see '%s --help')\n", prog);
  return EXIT_MISUSE;
}

static int fail(const err_t *e) {
  fprintf(stderr, "%s: %s\n", prog, e->msg);
  return EXIT_FAILURE;
}

static int parse_int(const char *s, int *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < -2147483647L || v > 2147483647L) return -1;
  *out = (int)v;
  return 0;
}

/* A finite number >= 0 (the whole string). */
static int parse_nonneg_double(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (!*s || *end || !isfinite(v) || v < 0) return -1;
  *out = v;
  return 0;
}

/* An integer from lo to hi (the whole string). */
static int parse_int_range(const char *s, int lo, int hi, int *out) {
  return parse_int(s, out) || *out < lo || *out > hi ? -1 : 0;
}

static int parse_pos_double(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (!*s || *end || !isfinite(v) || v <= 0) return -1;
  *out = v;
  return 0;
}

/* Splits a comma-separated list in place. */
static int split_list(char *s, char **items, int max) {
  int n = 0;
  for (char *save = NULL, *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (n == max) return -1;
    items[n++] = t;
  }
  return n;
}

typedef struct {
  const char *model, *topology, *profile, *trace;
  char *nodes, *cap; /* lists for sweep */
  int cap_given;      /* --bucket-cap-mb was on the command line */
  int gpus_per_node, iterations, rebuilt, json, csv, no_sync, static_graph, bucket_view;
  double jitter_cv;
  unsigned long seed;
  unsigned nccl_algos, nccl_protos;
  int workers, pin, nonblocking, prefetch, no_h2d;
  sim_framework framework;
  double host_launch_us;
  int dp_backward_gil;
  double load_ms;
  sim_comm_hook hook;
  long batch;
  int precision;
  double first_mb;
  sim_mode mode;
  sim_fidelity fidelity;
} opts;

enum {
  O_MODEL = 256, O_TOPO, O_PROFILE, O_NODES, O_GPN, O_BATCH, O_CAP, O_FIRST, O_PREC, O_MODE, O_FID,
  O_ITER, O_REBUILT, O_JSON, O_CSV, O_HELP, O_NOSYNC, O_HOOK, O_JITTER, O_SEED, O_ALGO, O_PROTO,
  O_WORKERS, O_LOAD, O_PIN, O_NONBLOCK, O_PREFETCH, O_NOH2D, O_FRAMEWORK, O_HOSTLAUNCH, O_STATIC, O_VIEW, O_TRACE, O_DPGIL
};

static const struct option long_opts[] = {
    {"model", required_argument, 0, O_MODEL},     {"topology", required_argument, 0, O_TOPO},
    {"profile", required_argument, 0, O_PROFILE}, {"nodes", required_argument, 0, O_NODES},
    {"gpus-per-node", required_argument, 0, O_GPN}, {"batch", required_argument, 0, O_BATCH},
    {"bucket-cap-mb", required_argument, 0, O_CAP}, {"first-bucket-mb", required_argument, 0, O_FIRST},
    {"precision", required_argument, 0, O_PREC},  {"mode", required_argument, 0, O_MODE},
    {"fidelity", required_argument, 0, O_FID},    {"iterations", required_argument, 0, O_ITER},
    {"rebuilt", no_argument, 0, O_REBUILT},       {"json", no_argument, 0, O_JSON},
    {"static-graph", no_argument, 0, O_STATIC},   {"bucket-view", no_argument, 0, O_VIEW},
    {"trace", required_argument, 0, O_TRACE},
    {"csv", no_argument, 0, O_CSV},               {"help", no_argument, 0, O_HELP},
    {"no-sync", required_argument, 0, O_NOSYNC},  {"comm-hook", required_argument, 0, O_HOOK},
    {"jitter-cv", required_argument, 0, O_JITTER}, {"seed", required_argument, 0, O_SEED},
    {"nccl-algo", required_argument, 0, O_ALGO},  {"nccl-proto", required_argument, 0, O_PROTO},
    {"num-workers", required_argument, 0, O_WORKERS}, {"load-ms", required_argument, 0, O_LOAD},
    {"pin-memory", no_argument, 0, O_PIN},        {"non-blocking", no_argument, 0, O_NONBLOCK},
    {"prefetch", no_argument, 0, O_PREFETCH},     {"no-h2d", no_argument, 0, O_NOH2D},
    {"framework", required_argument, 0, O_FRAMEWORK}, {"host-launch-us", required_argument, 0, O_HOSTLAUNCH},
    {"dp-backward-gil", no_argument, 0, O_DPGIL},
    {0, 0, 0, 0}};

/* Parses the options a command accepts (`allowed` lists their ids). Returns 0, 1 for --help, or
 * EXIT_MISUSE after printing why. */
static int parse_opts(int argc, char **argv, const int *allowed, void (*usage)(FILE *), opts *o) {
  memset(o, 0, sizeof *o);
  o->model = "mlstm-4k";
  o->topology = "dgx1v-ib";
  o->profile = "v100-dgx1v";
  o->nodes = "1";
  o->cap = "25";
  o->first_mb = 1.0;
  o->iterations = 3;
  o->no_sync = 1;
  o->hook = SIM_HOOK_NONE;
  o->jitter_cv = -1;
  o->seed = 1;
  o->precision = -1;
  o->host_launch_us = -1;
  o->mode = SIM_MODE_DDP;
  o->fidelity = SIM_FIDELITY_FLOW;
  optind = 1;
  opterr = 0;
  for (;;) {
    int idx = 0;
    int c = getopt_long(argc, argv, "", long_opts, &idx);
    if (c == -1) break;
    if (c == O_HELP) {
      usage(stdout);
      return 1;
    }
    if (c == '?' || c == ':') {
      const char *bad = argv[optind - 1];
      return misuse(usage, "%s: unknown option or missing value: '%s'", argv[0], bad);
    }
    int ok = 0;
    for (const int *a = allowed; *a; a++) ok |= *a == c;
    if (!ok) return misuse(usage, "%s: option '--%s' does not apply here", argv[0], long_opts[idx].name);
    switch (c) {
    case O_MODEL: o->model = optarg; break;
    case O_TOPO: o->topology = optarg; break;
    case O_PROFILE: o->profile = optarg; break;
    case O_NODES: o->nodes = optarg; break;
    case O_CAP: o->cap = optarg, o->cap_given = 1; break;
    case O_GPN:
      if (parse_int_range(optarg, 1, 4096, &o->gpus_per_node))
        return misuse(usage, "--gpus-per-node must be an integer from 1 to 4096, got '%s'", optarg);
      break;
    case O_BATCH: {
      int b;
      if (parse_int(optarg, &b) || b < 1) return misuse(usage, "--batch must be a positive integer, got '%s'", optarg);
      o->batch = b;
      break;
    }
    case O_FIRST:
      if (parse_pos_double(optarg, &o->first_mb)) return misuse(usage, "--first-bucket-mb must be a positive number, got '%s'", optarg);
      break;
    case O_PREC: {
      model_dtype d;
      if (model_dtype_parse(optarg, &d)) return misuse(usage, "--precision must be fp32 or fp16, got '%s'", optarg);
      o->precision = (int)d;
      break;
    }
    case O_MODE:
      if (strcmp(optarg, "ddp") == 0) o->mode = SIM_MODE_DDP;
      else if (strcmp(optarg, "flat") == 0) o->mode = SIM_MODE_FLAT;
      else return misuse(usage, "--mode must be ddp or flat, got '%s'", optarg);
      break;
    case O_FID:
      if (strcmp(optarg, "flow") == 0) o->fidelity = SIM_FIDELITY_FLOW;
      else if (strcmp(optarg, "step") == 0) o->fidelity = SIM_FIDELITY_STEP;
      else return misuse(usage, "--fidelity must be flow or step, got '%s'", optarg);
      break;
    case O_ITER:
      if (parse_int_range(optarg, 1, 1000, &o->iterations))
        return misuse(usage, "--iterations must be an integer from 1 to 1000, got '%s'", optarg);
      break;
    case O_NOSYNC:
      if (parse_int_range(optarg, 1, 1000, &o->no_sync))
        return misuse(usage, "--no-sync must be an integer from 1 to 1000, got '%s'", optarg);
      break;
    case O_HOOK:
      if (strcmp(optarg, "none") == 0) o->hook = SIM_HOOK_NONE;
      else if (strcmp(optarg, "fp16") == 0) o->hook = SIM_HOOK_FP16;
      else return misuse(usage, "--comm-hook must be none or fp16, got '%s'", optarg);
      break;
    case O_JITTER:
      if (parse_nonneg_double(optarg, &o->jitter_cv) || o->jitter_cv >= 1)
        return misuse(usage, "--jitter-cv must be a number from 0 to below 1, got '%s'", optarg);
      break;
    case O_SEED: {
      char *end;
      errno = 0;
      o->seed = strtoul(optarg, &end, 10);
      if (!*optarg || *end || errno || optarg[0] == '-') return misuse(usage, "--seed must be a non-negative integer, got '%s'", optarg);
      break;
    }
    case O_ALGO:
      if (nccl_parse_algos(optarg, &o->nccl_algos)) return misuse(usage, "--nccl-algo must list ring and/or tree (or auto), got '%s'", optarg);
      break;
    case O_PROTO:
      if (nccl_parse_protos(optarg, &o->nccl_protos))
        return misuse(usage, "--nccl-proto must list LL, LL128 and/or Simple (or auto), got '%s'", optarg);
      break;
    case O_WORKERS:
      if (parse_int_range(optarg, 0, 256, &o->workers))
        return misuse(usage, "--num-workers must be an integer from 0 to 256, got '%s'", optarg);
      break;
    case O_LOAD:
      if (parse_nonneg_double(optarg, &o->load_ms)) return misuse(usage, "--load-ms must be a number >= 0, got '%s'", optarg);
      break;
    case O_FRAMEWORK:
      if (strcmp(optarg, "ddp") == 0) o->framework = SIM_FRAMEWORK_DDP;
      else if (strcmp(optarg, "dp") == 0) o->framework = SIM_FRAMEWORK_DP;
      else return misuse(usage, "--framework must be ddp or dp, got '%s'", optarg);
      break;
    case O_DPGIL: o->dp_backward_gil = 1; break;
    case O_HOSTLAUNCH:
      if (parse_nonneg_double(optarg, &o->host_launch_us))
        return misuse(usage, "--host-launch-us must be a number >= 0, got '%s'", optarg);
      break;
    case O_PIN: o->pin = 1; break;
    case O_NONBLOCK: o->nonblocking = 1; break;
    case O_PREFETCH: o->prefetch = 1; break;
    case O_NOH2D: o->no_h2d = 1; break;
    case O_REBUILT: o->rebuilt = 1; break;
    case O_STATIC: o->static_graph = 1; break;
    case O_VIEW: o->bucket_view = 1; break;
    case O_TRACE: o->trace = optarg; break;
    case O_JSON: o->json = 1; break;
    case O_CSV: o->csv = 1; break;
    }
  }
  if (optind < argc) return misuse(usage, "%s: unexpected argument '%s'", argv[0], argv[optind]);
  if (o->no_h2d && (o->pin || o->nonblocking || o->prefetch))
    return misuse(usage, "--no-h2d contradicts --pin-memory, --non-blocking and --prefetch");
  return 0;
}

/* Loaded inputs. */
typedef struct {
  model_t *model;
  topo_t *topo;
  profile_t *profile;
} inputs;

static void inputs_free(inputs *in) {
  model_destroy(in->model);
  topo_destroy(in->topo);
  profile_destroy(in->profile);
  memset(in, 0, sizeof *in);
}

static int load_model(const char *name, model_t **m, err_t *e) {
  char path[1024];
  int rc = data_resolve(DATA_MODEL, name, path, sizeof path, e);
  return rc ? rc : model_load(path, m, e);
}

static int load_topo(const char *name, topo_t **t, err_t *e) {
  char path[1024];
  int rc = data_resolve(DATA_TOPOLOGY, name, path, sizeof path, e);
  return rc ? rc : topo_load(path, t, e);
}

static int load_profile(const char *name, profile_t **p, err_t *e) {
  char path[1024];
  int rc = data_resolve(DATA_PROFILE, name, path, sizeof path, e);
  return rc ? rc : profile_load(path, p, e);
}

static void config_from(const opts *o, const inputs *in, sim_config *c) {
  sim_config_defaults(c);
  c->model = in->model;
  c->topo = in->topo;
  c->profile = in->profile;
  c->gpus_per_node = o->gpus_per_node;
  c->batch = o->batch;
  c->precision = o->precision;
  c->first_bucket_mb = o->first_mb;
  c->rebuilt = o->rebuilt;
  c->static_graph = o->static_graph;
  c->bucket_view = o->bucket_view;
  c->mode = o->mode;
  c->fidelity = o->fidelity;
  c->iterations = o->iterations;
  c->no_sync = o->no_sync;
  c->comm_hook = o->hook;
  c->jitter_cv = o->jitter_cv;
  c->seed = o->seed;
  c->nccl_algos = o->nccl_algos;
  c->nccl_protos = o->nccl_protos;
  c->workers = o->workers;
  c->framework = o->framework;
  c->host_launch_s = o->host_launch_us < 0 ? -1 : o->host_launch_us * 1e-6;
  c->dp_backward_gil = o->dp_backward_gil;
  c->load_s = o->load_ms * 1e-3;
  /* PyTorch: non_blocking only matters for pinned memory; a prefetcher copies pinned batches. */
  c->h2d = o->no_h2d ? SIM_H2D_OFF
         : o->prefetch ? SIM_H2D_PREFETCH
         : o->pin && o->nonblocking ? SIM_H2D_PINNED_ASYNC
         : o->pin ? SIM_H2D_PINNED
         : o->nonblocking ? SIM_H2D_PAGEABLE
                          : SIM_H2D_AUTO;
}

static const int sim_opts[] = {O_MODEL, O_TOPO, O_PROFILE, O_NODES, O_GPN, O_BATCH, O_CAP, O_FIRST, O_PREC,
                               O_MODE,  O_FID,  O_ITER,    O_REBUILT, O_NOSYNC, O_HOOK, O_JITTER, O_SEED, O_ALGO, O_PROTO,
                               O_WORKERS, O_LOAD, O_PIN, O_NONBLOCK, O_PREFETCH, O_NOH2D,
                               O_FRAMEWORK, O_HOSTLAUNCH, O_STATIC, O_VIEW, O_DPGIL, 0};

/* The simulation options plus the 0-terminated `extra`, 0-terminated, into out (64 entries). */
static const int *sim_opts_and(const int *extra, int *out) {
  int k = 0;
  for (const int *a = sim_opts; *a; a++) out[k++] = *a;
  for (const int *a = extra; *a; a++) out[k++] = *a;
  out[k] = 0;
  return out;
}

static int write_atomic(const char *path, const char *text, err_t *e);

/* Prints a report built by the library (NULL: it ran out of memory) and frees it; the exit status. */
static int emit_text(char *s) {
  if (!s) {
    fprintf(stderr, "%s: out of memory while formatting the report\n", prog);
    return 1;
  }
  fputs(s, stdout);
  free(s);
  return 0;
}

static int emit_json(cJSON *j) {
  char *s = j ? cJSON_Print(j) : NULL;
  cJSON_Delete(j);
  if (!s) return emit_text(NULL);
  size_t n = strlen(s);
  char *t = realloc(s, n + 2);
  if (!t) {
    free(s);
    return emit_text(NULL);
  }
  t[n] = '\n';
  t[n + 1] = '\0';
  return emit_text(t);
}

/* predict, or (trace_only) trace: the same options, the trace written and no report printed. */
static int run_predict(int argc, char **argv, void (*usage)(FILE *), int trace_only) {
  int allowed[64];
  sim_opts_and(trace_only ? (const int[]){O_TRACE, 0} : (const int[]){O_JSON, O_TRACE, 0}, allowed);
  opts o;
  int rc = parse_opts(argc, argv, allowed, usage, &o);
  if (rc) return rc == 1 ? 0 : rc;
  int nodes;
  double cap;
  if (parse_int(o.nodes, &nodes) || nodes < 1) return misuse(usage, "--nodes must be a positive integer, got '%s'", o.nodes);
  if (parse_pos_double(o.cap, &cap)) return misuse(usage, "--bucket-cap-mb must be a positive number, got '%s'", o.cap);
  inputs in = {0};
  err_t e;
  if ((rc = load_model(o.model, &in.model, &e)) || (rc = load_topo(o.topology, &in.topo, &e)) ||
      (rc = load_profile(o.profile, &in.profile, &e))) {
    inputs_free(&in);
    return fail(&e);
  }
  sim_config c;
  config_from(&o, &in, &c);
  c.nodes = nodes;
  c.bucket_cap_mb = cap;
  predict_result p;
  if ((rc = predict_run(&c, &p, &e))) {
    inputs_free(&in);
    return fail(&e);
  }
  int status = 0;
  if (o.trace) {
    cJSON *tj = report_trace_json(&c, &p);
    char *text = tj ? cJSON_Print(tj) : NULL;
    cJSON_Delete(tj);
    if (!text) status = emit_text(NULL);
    else if (write_atomic(o.trace, text, &e)) status = fail(&e);
    free(text);
  }
  if (status == 0 && !trace_only)
    status = o.json ? emit_json(report_predict_json(&c, &p)) : emit_text(report_predict_table(&c, &p));
  else if (status == 0)
    printf("wrote %s\n", o.trace);
  predict_result_free(&p);
  inputs_free(&in);
  return status;
}

static int cmd_sweep(int argc, char **argv) {
  int allowed[64];
  sim_opts_and((const int[]){O_CSV, 0}, allowed);
  opts o;
  int rc = parse_opts(argc, argv, allowed, usage_sweep, &o);
  if (rc) return rc == 1 ? 0 : rc;
  char nodes_buf[1024], caps_buf[1024], topo_buf[4096];
  char *node_s[MAX_LIST], *cap_s[MAX_LIST], *topo_s[MAX_LIST];
  snprintf(nodes_buf, sizeof nodes_buf, "%s", o.nodes);
  snprintf(caps_buf, sizeof caps_buf, "%s", o.cap);
  snprintf(topo_buf, sizeof topo_buf, "%s", o.topology);
  int nn = split_list(nodes_buf, node_s, MAX_LIST), nc = split_list(caps_buf, cap_s, MAX_LIST),
      nt = split_list(topo_buf, topo_s, MAX_LIST);
  if (nn < 1 || nc < 1 || nt < 1) return misuse(usage_sweep, "lists must have 1 to %d comma-separated items", MAX_LIST);
  int nodes[MAX_LIST];
  double caps[MAX_LIST];
  for (int i = 0; i < nn; i++)
    if (parse_int(node_s[i], &nodes[i]) || nodes[i] < 1) return misuse(usage_sweep, "--nodes: '%s' is not a positive integer", node_s[i]);
  for (int i = 0; i < nc; i++)
    if (parse_pos_double(cap_s[i], &caps[i])) return misuse(usage_sweep, "--bucket-cap-mb: '%s' is not a positive number", cap_s[i]);
  inputs in = {0};
  err_t e;
  topo_t *topos[MAX_LIST] = {0};
  if ((rc = load_model(o.model, &in.model, &e)) || (rc = load_profile(o.profile, &in.profile, &e))) goto fail;
  for (int t = 0; t < nt; t++)
    if ((rc = load_topo(topo_s[t], &topos[t], &e))) goto fail;
  int status = emit_text(report_sweep_header(o.csv));
  for (int t = 0; t < nt; t++) {
    in.topo = topos[t];
    for (int i = 0; i < nn; i++) {
      double iter_s[MAX_LIST];
      for (int j = 0; j < nc; j++) {
        sim_config c;
        config_from(&o, &in, &c);
        c.nodes = nodes[i];
        c.bucket_cap_mb = caps[j];
        predict_result p;
        if ((rc = predict_run(&c, &p, &e))) goto fail;
        iter_s[j] = p.sim.iteration_s;
        status |= emit_text(report_sweep_row(o.csv, topos[t]->name, nodes[i], caps[j], &c, &p));
        fflush(stdout);
        predict_result_free(&p);
      }
      if (nc > 1 && !o.csv) status |= emit_text(report_sweep_best(caps, iter_s, nc));
    }
  }
  in.topo = NULL;
  for (int t = 0; t < nt; t++) topo_destroy(topos[t]);
  inputs_free(&in);
  return status;
fail:
  in.topo = NULL;
  for (int t = 0; t < nt; t++) topo_destroy(topos[t]);
  inputs_free(&in);
  return fail(&e);
}

static int cmd_predict(int argc, char **argv) { return run_predict(argc, argv, usage_predict, 0); }

static int cmd_recommend(int argc, char **argv) {
  int allowed[64];
  sim_opts_and((const int[]){O_JSON, 0}, allowed);
  opts o;
  int rc = parse_opts(argc, argv, allowed, usage_recommend, &o);
  if (rc) return rc == 1 ? 0 : rc;
  int nodes;
  if (parse_int(o.nodes, &nodes) || nodes < 1) return misuse(usage_recommend, "--nodes must be a positive integer, got '%s'", o.nodes);
  char caps_buf[1024];
  char *cap_s[MAX_LIST];
  snprintf(caps_buf, sizeof caps_buf, "%s", o.cap_given ? o.cap : RECOMMEND_CAPS);
  int nc = split_list(caps_buf, cap_s, MAX_LIST - 1);
  if (nc < 1) return misuse(usage_recommend, "--bucket-cap-mb: 1 to %d comma-separated caps", MAX_LIST - 1);
  double caps[MAX_LIST], iter_s[MAX_LIST];
  int have_default = 0;
  for (int i = 0; i < nc; i++) {
    if (parse_pos_double(cap_s[i], &caps[i])) return misuse(usage_recommend, "--bucket-cap-mb: '%s' is not a positive number", cap_s[i]);
    for (int j = 0; j < i; j++)
      if (caps[j] == caps[i]) return misuse(usage_recommend, "--bucket-cap-mb: %g is listed twice", caps[i]);
    have_default |= caps[i] == 25.0;
  }
  if (!have_default) caps[nc++] = 25.0;
  gsl_sort(caps, 1, (size_t)nc);
  inputs in = {0};
  err_t e;
  if ((rc = load_model(o.model, &in.model, &e)) || (rc = load_topo(o.topology, &in.topo, &e)) ||
      (rc = load_profile(o.profile, &in.profile, &e))) {
    inputs_free(&in);
    return fail(&e);
  }
  sim_config c;
  for (int i = 0; i < nc; i++) {
    config_from(&o, &in, &c);
    c.nodes = nodes;
    c.bucket_cap_mb = caps[i];
    predict_result p;
    if ((rc = predict_run(&c, &p, &e))) {
      inputs_free(&in);
      return fail(&e);
    }
    iter_s[i] = p.sim.iteration_s;
    predict_result_free(&p);
  }
  int status = o.json ? emit_json(report_recommend_json(&c, caps, iter_s, nc, 25.0))
                      : emit_text(report_recommend_table(&c, caps, iter_s, nc, 25.0));
  inputs_free(&in);
  return status;
}

static int cmd_trace(int argc, char **argv) {
  /* `predict --trace FILE` without the report: -o/--output names the file. */
  char **args = malloc(((size_t)argc + 1) * sizeof *args);
  if (!args) return fail(&(err_t){"out of memory"});
  int n = 0, have_out = 0;
  for (int i = 0; i < argc; i++) {
    if (i > 0 && (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0)) {
      args[n++] = "--trace";
      have_out = 1;
    } else if (i > 0 && strncmp(argv[i], "--output=", 9) == 0) {
      static char buf[4096];
      snprintf(buf, sizeof buf, "--trace=%s", argv[i] + 9);
      args[n++] = buf;
      have_out = 1;
    } else if (i > 0 && (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)) {
      free(args);
      usage_trace(stdout);
      return 0;
    } else {
      args[n++] = argv[i];
    }
  }
  args[n] = NULL;
  if (!have_out) {
    free(args);
    return misuse(usage_trace, "%s", "-o FILE is required");
  }
  int rc = run_predict(n, args, usage_trace, 1);
  free(args);
  return rc;
}

static int cmd_buckets(int argc, char **argv) {
  static const int allowed[] = {O_MODEL, O_CAP, O_FIRST, O_PREC, O_REBUILT, O_MODE, O_JSON, 0};
  opts o;
  int rc = parse_opts(argc, argv, allowed, usage_buckets, &o);
  if (rc) return rc == 1 ? 0 : rc;
  double cap;
  if (parse_pos_double(o.cap, &cap)) return misuse(usage_buckets, "--bucket-cap-mb must be a positive number, got '%s'", o.cap);
  err_t e;
  model_t *m = NULL;
  if ((rc = load_model(o.model, &m, &e))) return fail(&e);
  model_dtype prec = o.precision >= 0 ? (model_dtype)o.precision : m->precision;
  bucket_plan plan;
  rc = o.mode == SIM_MODE_FLAT ? bucket_plan_flat(m, prec, &plan, &e)
                               : bucket_plan_for_model(m, prec, o.first_mb, cap, o.rebuilt, &plan, &e);
  if (rc) {
    model_destroy(m);
    return fail(&e);
  }
  int status = o.json ? emit_json(report_buckets_json(m, prec, &plan)) : emit_text(report_buckets_table(m, prec, &plan));
  bucket_plan_free(&plan);
  model_destroy(m);
  return status;
}

/* Writes text to path atomically: a temporary file beside it, then rename. */
static int write_atomic(const char *path, const char *text, err_t *e) {
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) return err_set(e, ERR_IO, "%s: cannot create a temporary file: %s", tmp, strerror(errno));
  FILE *f = fdopen(fd, "w");
  if (!f) {
    close(fd);
    unlink(tmp);
    return err_set(e, ERR_IO, "%s: %s", tmp, strerror(errno));
  }
  int bad = fputs(text, f) < 0;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    int saved = errno;
    unlink(tmp);
    return err_set(e, ERR_IO, "%s: cannot write: %s", path, strerror(saved));
  }
  return ERR_OK;
}

/* genmodel's options: every family's, each recorded as given or not. */
enum { G_HIDDEN, G_EMBED, G_VOCAB, G_SEQ, G_BATCH, G_DEPTH, G_IMAGE, G_CLASSES, G_SIZE, G_AMP, G_PREC, G_NAME, G_COUNT };

static int cmd_genmodel(int argc, char **argv) {
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    usage_genmodel(stdout);
    return 0;
  }
  const char *family = argc >= 2 ? argv[1] : "";
  int fam = strcmp(family, "mlstm") == 0 ? 0 : strcmp(family, "resnet") == 0 ? 1 : strcmp(family, "bert") == 0 ? 2 : -1;
  if (fam < 0) return misuse(usage_genmodel, "genmodel: the model family must be given first; known: mlstm, resnet, bert");
  static const struct option gopts[] = {
      {"hidden", required_argument, 0, G_HIDDEN}, {"embed", required_argument, 0, G_EMBED},
      {"vocab", required_argument, 0, G_VOCAB},   {"seq", required_argument, 0, G_SEQ},
      {"batch", required_argument, 0, G_BATCH},   {"depth", required_argument, 0, G_DEPTH},
      {"image", required_argument, 0, G_IMAGE},   {"classes", required_argument, 0, G_CLASSES},
      {"size", required_argument, 0, G_SIZE},     {"amp", no_argument, 0, G_AMP},
      {"precision", required_argument, 0, G_PREC}, {"name", required_argument, 0, G_NAME},
      {"help", no_argument, 0, 'h'},              {0, 0, 0, 0}};
  /* Which options each family takes. */
  static const char takes[3][G_COUNT] = {
      [0] = {[G_HIDDEN] = 1, [G_EMBED] = 1, [G_VOCAB] = 1, [G_SEQ] = 1, [G_BATCH] = 1, [G_PREC] = 1, [G_NAME] = 1},
      [1] = {[G_DEPTH] = 1, [G_IMAGE] = 1, [G_CLASSES] = 1, [G_BATCH] = 1, [G_AMP] = 1, [G_PREC] = 1, [G_NAME] = 1},
      [2] = {[G_SIZE] = 1, [G_SEQ] = 1, [G_BATCH] = 1, [G_AMP] = 1, [G_PREC] = 1, [G_NAME] = 1}};
  int num[G_COUNT] = {0}, given[G_COUNT] = {0};
  const char *out = NULL, *name = NULL, *size = "base";
  model_dtype prec = MODEL_FP16;
  optind = 2;
  opterr = 0;
  for (;;) {
    int c = getopt_long(argc, argv, "o:", gopts, NULL);
    if (c == -1) break;
    if (c == 'h') {
      usage_genmodel(stdout);
      return 0;
    }
    if (c == 'o') {
      out = optarg;
      continue;
    }
    if (c < 0 || c >= G_COUNT) return misuse(usage_genmodel, "genmodel: unknown option or missing value: '%s'", argv[optind - 1]);
    if (!takes[fam][c]) {
      const char *opt = "?";
      for (const struct option *g = gopts; g->name; g++)
        if (g->val == c) opt = g->name;
      return misuse(usage_genmodel, "genmodel %s: option '--%s' does not apply to it", family, opt);
    }
    given[c] = 1;
    if (c == G_NAME) name = optarg;
    else if (c == G_SIZE) size = optarg;
    else if (c == G_PREC) {
      if (model_dtype_parse(optarg, &prec)) return misuse(usage_genmodel, "--precision must be fp32 or fp16, got '%s'", optarg);
    } else if (c != G_AMP && (parse_int(optarg, &num[c]) || num[c] < 1))
      return misuse(usage_genmodel, "sizes must be positive integers, got '%s'", optarg);
  }
  if (optind < argc) return misuse(usage_genmodel, "genmodel: unexpected argument '%s'", argv[optind]);
  err_t e;
  char *text = NULL;
  int rc;
  if (fam == 0) {
    if (!given[G_HIDDEN]) return misuse(usage_genmodel, "genmodel mlstm needs --hidden H");
    modelgen_mlstm spec = {.name = name, .hidden = num[G_HIDDEN], .embed = given[G_EMBED] ? num[G_EMBED] : 64,
                           .vocab = given[G_VOCAB] ? num[G_VOCAB] : 256, .seq = given[G_SEQ] ? num[G_SEQ] : 256,
                           .batch = given[G_BATCH] ? num[G_BATCH] : 256, .precision = prec};
    rc = modelgen_mlstm_text(&spec, &text, &e);
  } else if (fam == 1) {
    if (!given[G_DEPTH]) return misuse(usage_genmodel, "genmodel resnet needs --depth 18|34|50|101|152");
    modelzoo_resnet spec;
    if (modelzoo_resnet_defaults(num[G_DEPTH], &spec, &e)) return misuse(usage_genmodel, "%s", e.msg);
    if (name) spec.name = name;
    if (given[G_IMAGE]) spec.image = num[G_IMAGE];
    if (given[G_CLASSES]) spec.classes = num[G_CLASSES];
    if (given[G_BATCH]) spec.batch = num[G_BATCH];
    spec.precision = prec;
    spec.amp = given[G_AMP];
    rc = modelzoo_resnet_text(&spec, &text, &e);
  } else {
    modelzoo_bert spec;
    if (modelzoo_bert_defaults(size, &spec, &e)) return misuse(usage_genmodel, "%s", e.msg);
    if (name) spec.name = name;
    if (given[G_SEQ]) spec.seq = num[G_SEQ];
    if (given[G_BATCH]) spec.batch = num[G_BATCH];
    spec.precision = prec;
    spec.amp = given[G_AMP];
    rc = modelzoo_bert_text(&spec, &text, &e);
  }
  if (rc) return fail(&e);
  if (out) {
    if (write_atomic(out, text, &e)) rc = fail(&e);
  } else {
    fputs(text, stdout);
  }
  free(text);
  return rc;
}

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  if (argc < 2) {
    usage_main(stderr);
    return EXIT_MISUSE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    usage_main(stdout);
    return 0;
  }
  if (strcmp(cmd, "predict") == 0) return cmd_predict(argc - 1, argv + 1);
  if (strcmp(cmd, "sweep") == 0) return cmd_sweep(argc - 1, argv + 1);
  if (strcmp(cmd, "recommend") == 0) return cmd_recommend(argc - 1, argv + 1);
  if (strcmp(cmd, "trace") == 0) return cmd_trace(argc - 1, argv + 1);
  if (strcmp(cmd, "buckets") == 0) return cmd_buckets(argc - 1, argv + 1);
  if (strcmp(cmd, "genmodel") == 0) return cmd_genmodel(argc - 1, argv + 1);
  if (strcmp(cmd, "validate") == 0) return cmd_validate(argc - 1, argv + 1);
  fprintf(stderr, "%s: unknown command '%s' (predict, sweep, recommend, trace, buckets, genmodel, validate; see --help)\n", prog, cmd);
  return EXIT_MISUSE;
}
