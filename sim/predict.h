/* predict: a simulation turned into what a user asks for: throughput and scaling.
 *
 * Runs the configured simulation and the same model on one GPU (no communication; the same jitter,
 * drawing the run's rank-0 draws), and derives
 * samples/s, tokens/s and scaling efficiency = throughput(N) / (N * throughput(1)), all of the
 * iteration simulated (by default DDP's steady state). When the Reducer all-reduces other buckets
 * before its steady state (sim/reducer.h: iteration 1, and 2 under static_graph), those iterations
 * are simulated too and reported apart. */
#ifndef DDPSIM_PREDICT_H
#define DDPSIM_PREDICT_H

#include "sim.h"

/* With jitter (compute or host), one run of a few iterations is one noisy draw, not the steady
 * state: the run is repeated with more iterations (at least PREDICT_MIN_ITERATIONS, growing as the
 * interval needs, at most PREDICT_MAX_ITERATIONS, the plan's bound) until the half-width of the
 * 95% confidence interval of its mean iteration (sim_result.iteration_ci_s) is at most
 * sim_config.jitter_ci_rel of it (0: exactly the configured iterations, the interval reported); the report gives the interval and the iterations run. The one-GPU twin
 * runs as many iterations under the same jitter with rank 0's draws (common random numbers): every
 * iteration of the run waits for its slowest rank, so its mean is never below the twin's, and the
 * scaling efficiency never above 1 (where an input pipeline lets the run's mean come out below the
 * twin's by less than their two intervals, the two are equal within the noise, and the reference
 * is reported as the run's own iteration: efficiency 1). Without jitter, --iterations is used as
 * given. */
#define PREDICT_MIN_ITERATIONS 30
#define PREDICT_MAX_ITERATIONS 1000

typedef struct {
  sim_result sim;
  double host_launch_s, host_dispatch_s; /* the host costs the run priced its ops with (per launch, per op) */
  double host_scale;        /* with sim_config.measured_step_s: what they are of the profile's (or the
                               flags'), solved from the measured step; 0: not solved */
  double measured_step_s;   /* sim_config.measured_step_s; NaN: none given */
  double single_gpu_iteration_s;
  double samples_per_s;
  double tokens_per_s;
  double scaling_efficiency;
  int nearly;               /* DDP iterations before the steady state reported apart (0..2) */
  double early_s[2];        /* iteration 1 (and 2) before the steady state, one each */
  reducer_iter early[2];    /* the buckets they all-reduced */
  reducer_iter steady;      /* the buckets of the iteration simulated */
} predict_result;

/* One GPU's measured step (sim_config.measured_step_s, --measured-step-s): where it is longer than
 * the device takes, the rest is the host's, spread over the ops as their host costs are. The host
 * costs per launch and per framework op (cost_host_launch, cost_host_dispatch: the profile's or the
 * flags') are multiplied by one factor, solved (bracketed regula falsi, to 1e-6 of the step) so
 * that the 1-GPU twin's simulated iteration (predict_twin, without jitter) equals the measured
 * step; a factor below 1 where the measured step is shorter than the twin's. The measurement is an
 * input: it calibrates the host; every other prediction made with it is a prediction. ERR_INPUT
 * naming --measured-step-s when the device alone takes longer than the step (no host cost makes
 * it that short), when the profile has no host cost to scale, or when the step would need host
 * costs over SIM_MAX_HOST_US; sim_run's errors. On success c's host_launch_s and host_dispatch_s are
 * the solved costs, measured_step_s 0 (c is then an ordinary configuration), *scale the factor. */
int predict_host_from_step(sim_config *c, double *scale, err_t *e);

/* *cal = c with its host solved from its measured step where it has one (predict_host_from_step),
 * and in *out the host costs the run prices its ops with: host_launch_s, host_dispatch_s,
 * host_scale and measured_step_s (the rest of *out untouched). What every run of a configuration
 * does first (predict_run_opts, sweep's rows); errors as predict_host_from_step. */
int predict_host(const sim_config *c, sim_config *cal, predict_result *out, err_t *e);

/* Runs both simulations (with sim_config.measured_step_s, the host solved first:
 * predict_host_from_step). On success the caller frees *out with predict_result_free. Errors as
 * sim_run. */
int predict_run(const sim_config *c, predict_result *out, err_t *e);

/* What a caller running many predictions (sim/sweep.h) can leave out. */
typedef struct {
  int skip_early;                 /* do not simulate the iterations before the steady state (nearly 0) */
  double single_gpu_iteration_s;  /* > 0: the one-GPU twin's time, known already (of predict_twin(c)) */
} predict_opts;
int predict_run_opts(const sim_config *c, const predict_opts *o, predict_result *out, err_t *e);

/* The configuration whose iteration is single_gpu_iteration_s: c on one GPU, flow fidelity, the
 * same jitter (FSDP: one rank's work, its optimizer stepping its shard of the job's ranks). Copied from c (padding included), so configurations equal bytewise have equal twins.
 * With jitter predict_run_opts runs its own twin at the run's final iteration count (a known
 * single_gpu_iteration_s is then not used). */
void predict_twin(const sim_config *c, sim_config *one);
void predict_result_free(predict_result *p); /* NULL is a no-op */

#endif
