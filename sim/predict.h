/* predict: a simulation turned into what a user asks for: throughput and scaling.
 *
 * Runs the configured simulation and the same model on one GPU (no communication, no jitter: the
 * expected single-GPU time), and derives
 * samples/s, tokens/s and scaling efficiency = throughput(N) / (N * throughput(1)). With
 * static_graph, also DDP's first iteration, which all-reduces one bucket of every gradient. */
#ifndef DDPSIM_PREDICT_H
#define DDPSIM_PREDICT_H

#include "sim.h"

typedef struct {
  sim_result sim;
  double single_gpu_iteration_s;
  double samples_per_s;
  double tokens_per_s;
  double scaling_efficiency;
  double first_iteration_s; /* static_graph: DDP's first iteration, one bucket (0 otherwise) */
} predict_result;

/* Runs both simulations. On success the caller frees *out with predict_result_free. Errors as
 * sim_run. */
int predict_run(const sim_config *c, predict_result *out, err_t *e);
void predict_result_free(predict_result *p); /* NULL is a no-op */

#endif
