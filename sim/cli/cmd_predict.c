/* cmd_predict: `ddpsim predict`, and the simulation `ddpsim trace` shares with it. */
#include <stdlib.h>

#include "afile.h"
#include "buyopts.h"
#include "cmd.h"
#include "err.h"
#include "kineto.h"
#include "out.h"
#include "predict.h"
#include "report.h"
#include "simopts.h"
#include "trace.h"

static const char *usage_predict =
    "usage: ddpsim predict [--nodes N] [--bucket-cap-mb X] [options] [--json]\n"
    "\n"
    "Simulates DDP training on N nodes and prints throughput (samples/s and tokens/s),\n"
    "scaling efficiency against one GPU, the time breakdown and every bucket's timeline; the\n"
    "memory per GPU and its parts (refused, exit 1, when it exceeds the card's); with --samples\n"
    "or --epochs, the time to train, GPU-hours, cost and energy (docs/memory.md).\n"
    "\n";

static const char *usage_trace =
    "usage: ddpsim trace -o DIR|FILE [--format kineto|chrome] [--nodes N] [--bucket-cap-mb X] [options]\n"
    "\n"
    "--format kineto (the default) writes one PyTorch profiler trace per rank into DIR\n"
    "(rank<R>.pt.trace.json), as torch.profiler writes them: Holistic Trace Analysis, Perfetto and\n"
    "tensorboard read them. DIR is one run whole: the new one's files only, or on a failure or a\n"
    "signal the old ones as they were; a DIR holding other files is refused. A run that does not\n"
    "fit the card is refused as predict refuses it (--allow-oom).\n"
    "--format chrome writes one Chrome trace of every rank to FILE, for\n"
    "ui.perfetto.dev or chrome://tracing: per rank a compute stream (iterations, input, forward and backward op by op,\n"
    "DDP's bucket copies, the final wait, the optimizer), the NCCL stream (one all-reduce per bucket\n"
    "with its bytes, algorithm and protocol), copy streams and DataLoader workers; gradient-ready\n"
    "instants and an arrow from each bucket becoming ready to its all-reduce. `predict --trace FILE`\n"
    "without the report; docs/trace.md says what is simulated and what is derived.\n"
    "\n";

/* --format's values: the trace formats. */
enum { FORMAT_KINETO = 0, FORMAT_CHROME = 1 };
static const char *const formats[] = {"kineto", "chrome", NULL};

/* The run as traces of the ranks `which` names (trace_parse_ranks), written atomically: a Chrome
 * trace in the file path, or Kineto's, one per rank, in the directory path. */
static int write_trace(cli_ctx *x, const sim_config *c, const predict_result *p, const char *which, const char *path, int format) {
  err_t e;
  int n, *ranks = malloc(TRACE_MAX_RANKS * sizeof *ranks), rc;
  cJSON *tj = NULL;
  if (!ranks) return out_text(x, NULL);
  if ((rc = trace_parse_ranks(which, p->sim.gpus, ranks, &n, &e)) ||
      (format == FORMAT_KINETO ? (rc = kineto_write(c, p, n < 0 ? NULL : ranks, n, path, &e))
                               : (rc = trace_build(c, p, n < 0 ? NULL : ranks, n, &tj, &e)))) {
    free(ranks);
    return rc == ERR_USAGE ? cli_usage(x, "%s", e.msg) : cli_fail(x, rc, "%s", e.msg);
  }
  free(ranks);
  if (format == FORMAT_KINETO) return CLI_OK;
  char *text = cJSON_PrintUnformatted(tj);
  cJSON_Delete(tj);
  rc = text ? out_write_atomic(x, path, text) : out_text(x, NULL);
  free(text);
  return rc;
}

/* A trace's path, before the run: a folder afile_dir can swap in (kineto) or a file afile_write can
 * write (chrome), and not one of the inputs (the model, topology, profile; predict's price table). */
static int check_trace_path(cli_ctx *x, const simopts *o, const buyopts *bo, const char *flag, const char *path, int format) {
  err_t e;
  int rc = format == FORMAT_KINETO ? kineto_check(path, &e) : afile_check(path, &e);
  if (rc) return cli_fail(x, rc, "%s %s", flag, e.msg);
  return simopts_not_input(x, o, flag, path, "--prices", bo->prices_file[0] ? bo->prices_file : NULL);
}

int cmd_predict_run(cli_ctx *x, int argc, char **argv, int trace_only) {
  simopts o;
  simopts_init(&o);
  int nodes, json = 0, format = -1; /* -1: not given (kineto) */
  double cap;
  static const char simulated[] = "simulated";
  const char *trace = NULL, *ranks = simulated;
  cli_opt common[SIMOPTS_COUNT];
  simopts_table(&o, common);
  cli_opt own[SIMOPTS_JOB_COUNT];
  simopts_job_table(&nodes, &cap, own);
  const cli_opt predict_out[] = {
      {"json", 0, CLI_FLAG, &json, NULL, "print one JSON object instead of the table"},
      {"trace", 0, CLI_STRING, &trace, "PATH",
       "also write the run's traces (--format: kineto, a directory of one\nPyTorch profiler trace per rank; chrome, one file)"},
      {"format", 0, CLI_ENUM, &format, "kineto|chrome", "the trace's format (default kineto)", .names = formats},
      {"ranks", 0, CLI_STRING, &ranks, "LIST", "the trace's ranks: 0,3,8-15, all, or simulated (default)"},
      {0}};
  const cli_opt trace_out[] = {
      {"output", 'o', CLI_STRING, &trace, "PATH", "the trace directory (kineto) or file (chrome) (required)"},
      {"format", 0, CLI_ENUM, &format, "kineto|chrome",
       "kineto (default): one PyTorch profiler trace per rank, for HTA and\nPerfetto; chrome: one Chrome trace of every rank", .names = formats},
      {"trace", 0, CLI_STRING, &trace, "FILE", NULL}, /* as predict's */
      {"ranks", 0, CLI_STRING, &ranks, "LIST",
       "the ranks to show: a list (0,3,8-15), all, or simulated (default:\nthe ranks the engine played; with symmetry 2 nodes)"},
      {0}};
  buyopts bo;
  buyopts_init(&bo);
  cli_opt buy[BUYOPTS_COUNT], trace_buy[3];
  buyopts_table(&bo, buy);
  /* trace refuses a run that does not fit as predict does: the memory's two options. */
  cli_select(buy, (const char *const[]){"optimizer", "allow-oom", NULL}, trace_buy);
  const cli_opt *tables[] = {own, common, trace_only ? trace_out : predict_out, trace_only ? trace_buy : buy, NULL};
  const cli_cmd c = {.usage = trace_only ? usage_trace : usage_predict, .tables = tables, .elsewhere = simopts_known};
  simopts_inputs in;
  sim_config cfg;
  int rc = simopts_setup(x, &c, argc, argv, &o, trace_only ? &trace : NULL, "-o PATH is required", &nodes, &cap, &in, &cfg);
  if (rc) return rc;
  if (!trace && (ranks != simulated || format >= 0)) {
    simopts_inputs_free(&in);
    return cli_usage(x, "%s chooses the %s of a trace: give --trace PATH too", format >= 0 ? "--format" : "--ranks",
                     format >= 0 ? "format" : "ranks");
  }
  if (format < 0) format = FORMAT_KINETO;
  cfg.record_spans = trace != NULL;
  memory_parts mem;
  budget_job job;
  int budget = buyopts_job(&bo, &job);
  if (!trace_only && (rc = buyopts_check(x, &bo))) {
    simopts_inputs_free(&in);
    return rc;
  }
  /* The trace's target before the simulation (a trace of thousands of ranks takes minutes): it can
   * be written, and is none of the inputs. */
  if (trace && (rc = check_trace_path(x, &o, &bo, trace_only ? "-o" : "--trace", trace, format))) {
    simopts_inputs_free(&in);
    return rc;
  }
  predict_result p;
  err_t e;
  /* The memory needs only the plan: a configuration that does not fit is refused before any
   * simulation runs, after the plan's checks of the scenario (a batch too large, ...), which come
   * first as they would in the run; trace's too: a trace of a run that cannot start is refused as
   * its prediction is. */
  if ((rc = sim_check(&cfg, &e))) rc = cli_fail(x, rc, "%s", e.msg);
  else rc = buyopts_memory(x, &bo, &cfg, &mem);
  if (rc) {
    simopts_inputs_free(&in);
    return rc;
  }
  if ((rc = predict_run(&cfg, &p, &e))) {
    simopts_inputs_free(&in);
    return cli_fail(x, rc, "%s", e.msg);
  }
  char price_note[512];
  if (!trace_only && budget && bo.price_class[0]) {
    if ((rc = buyopts_price(x, &bo, bo.price_class, cfg.profile, &job, price_note, sizeof price_note))) {
      predict_result_free(&p);
      simopts_inputs_free(&in);
      return rc;
    }
  }
  budget_result br = {0};
  profile_device dev;
  profile_get_device(cfg.profile, &dev);
  if (!trace_only && budget &&
      (rc = budget_compute(&job, p.sim.gpus, p.sim.batch, p.sim.iteration_s, p.sim.compute_s, &dev, &br, &e))) {
    predict_result_free(&p);
    simopts_inputs_free(&in);
    return cli_fail(x, rc, "%s", e.msg);
  }
  interval_t iv;
  if (!trace_only && bo.interval && (rc = buyopts_interval(x, &bo, o.profile, &cfg, p.sim.iteration_s, p.sim.jittered, 1, NULL, &iv))) {
    predict_result_free(&p);
    simopts_inputs_free(&in);
    return rc;
  }
  if (trace) rc = write_trace(x, &cfg, &p, ranks, trace, format);
  const report_buyer rb = {.mem = &mem, .job = budget ? &job : NULL, .budget = budget ? &br : NULL, .iv = bo.interval ? &iv : NULL};
  if (!rc && !trace_only && json) rc = out_json(x, report_predict_json(&cfg, &p, &rb));
  else if (!rc && !trace_only) rc = out_text(x, report_predict_table(&cfg, &p, &rb));
  else if (!rc) printf("wrote %s\n", trace);
  predict_result_free(&p);
  simopts_inputs_free(&in);
  return rc;
}

int cmd_predict(cli_ctx *x, int argc, char **argv) { return cmd_predict_run(x, argc, argv, 0); }
