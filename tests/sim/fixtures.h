/* fixtures: inputs the tests write inline, parsed or the test stops (exit 1, the parser's message). */
#ifndef DDPSIM_TEST_FIXTURES_H
#define DDPSIM_TEST_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>

#include "data.h"
#include "model.h"
#include "profile.h"
#include "sim.h"
#include "topo.h"

/* The start of a profile whose compute is nearly free (1e15 FLOP/s and B/s, 0.1 us per launch), so
 * a test's communication shows alone; the caller appends "\"comm\":{...}}". */
#define FIXTURE_FREE_COMPUTE                                                                                    \
  "{\"format\":\"ddpsim-profile\",\"version\":1,\"compute\":{\"fp32\":{"                                            \
  "\"gemm\":{\"model\":\"roofline\",\"launch_s\":1e-7,\"peak_flops\":1e15,\"efficiency\":1,\"mem_bw_Bps\":1e15}," \
  "\"ewise\":{\"model\":\"roofline\",\"launch_s\":1e-7,\"mem_bw_Bps\":1e15}}},"

static inline void fixture_die(const err_t *e) {
  printf("FAIL  %s\n", e->msg);
  exit(1);
}

static inline profile_t *fixture_profile(const char *text, const char *origin) {
  profile_t *p = NULL;
  err_t e;
  if (profile_parse(text, origin, &p, &e)) fixture_die(&e);
  return p;
}

static inline topo_t *fixture_topo(const char *text, const char *origin) {
  topo_t *t = NULL;
  err_t e;
  if (topo_parse(text, origin, &t, &e)) fixture_die(&e);
  return t;
}

static inline model_t *fixture_model(const char *text, const char *origin) {
  model_t *m = NULL;
  err_t e;
  if (model_parse(text, origin, &m, &e)) fixture_die(&e);
  return m;
}

/* A bundled input by name (models/, topologies/, profiles/: sim/data.h), loaded or the test stops. */
static inline model_t *fixture_bundled_model(const char *name) {
  char path[1024];
  err_t e;
  model_t *m = NULL;
  if (data_resolve(DATA_MODEL, name, path, sizeof path, &e) || model_load(path, &m, &e)) fixture_die(&e);
  return m;
}

static inline topo_t *fixture_bundled_topo(const char *name) {
  char path[1024];
  err_t e;
  topo_t *t = NULL;
  if (data_resolve(DATA_TOPOLOGY, name, path, sizeof path, &e) || topo_load(path, &t, &e)) fixture_die(&e);
  return t;
}

static inline profile_t *fixture_bundled_profile(const char *name) {
  char path[1024];
  err_t e;
  profile_t *p = NULL;
  if (data_resolve(DATA_PROFILE, name, path, sizeof path, &e) || profile_load(path, &p, &e)) fixture_die(&e);
  return p;
}

/* A simulation of model m on topology t with profile p, nodes x gpn GPUs, all else the defaults. */
static inline void fixture_config(sim_config *c, const model_t *m, const topo_t *t, const profile_t *p, int nodes, int gpn) {
  sim_config_defaults(c);
  c->model = m;
  c->topo = t;
  c->profile = p;
  c->nodes = nodes;
  c->gpus_per_node = gpn;
}

#endif
