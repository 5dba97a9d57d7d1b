/* cost: what an op, a gradient copy and a batch's host-to-device copy cost under a configuration.
 *
 * The one place where ops are priced: an op's GPU time from the profile's cost models (cost_op_time:
 * rooflines, measured tables, convolutions; the profile, sim/profile.h, only loads and hands them
 * out), and where that meets the scenario's host side: an op's run has a GPU time and a host time
 * (its kernel launches and framework ops at the host's costs), which the plan builders (sim/plan.c
 * for DDP, sim/dp.c for DataParallel) play against each other in a pipeline (sim/pipe.h).
 * docs/simulation.md, docs/profile.md. */
#ifndef DDPSIM_COST_H
#define DDPSIM_COST_H

#include "err.h"
#include "model.h"
#include "profile.h"
#include "scenario.h"

/* Time of ONE launch of op at per-GPU batch `batch` and run precision `run` on profile p. *extrapolated
 * (may be NULL) is set to 1 when a measured table had to fall back to its roofline outside the
 * measured range. A convolution whose model layout differs from its precision's
 * compute.<p>.conv_layout also pays the transposes of its image-side tensors at the elementwise
 * cost (docs/profile.md). ERR_INPUT if the profile has no cost model for that precision and op kind. */
int cost_op_time(const profile_t *p, const model_op *op, long batch, model_dtype run, double *time_s, int *extrapolated,
                 err_t *e);

/* The host cost of one kernel launch: the config's, or the profile's compute.host.launch_s. */
double cost_host_launch(const sim_config *c);

/* The host cost of one framework op (Python and the dispatcher): the config's, or the profile's
 * compute.host.dispatch_s. */
double cost_host_dispatch(const sim_config *c);

/* The host cost of one CUDA event call (a record, a stream's wait, an event's creation or
 * destruction): the config's, or the profile's compute.host.event_s. */
double cost_host_event(const sim_config *c);

/* What a run makes of the model's measured op times (format version 6: the `measured` line, the ops'
 * time_s= and host_s=; docs/export.md). They price the run where the profile is of the device they
 * were measured on (its device.name is the `measured` line's device) and the run is at the file's
 * batch and precision (the times are of that batch and type); otherwise every op is priced by the
 * profile's cost models and `why` says what differed. */
typedef struct {
  int ops;                 /* ops in the model carrying measured times (0: nothing to use) */
  int total;               /* ops in the model */
  int used;                /* 1: those ops are priced from their measured times in this run */
  const char *device;      /* the device they were measured on (the model's; "" without) */
  char why[256];           /* ops > 0 && !used: why they were ignored */
} cost_measured_info;

/* Fills *out for a run of c at per-GPU batch `batch` and precision `prec`. Never fails. */
void cost_measured(const sim_config *c, long batch, model_dtype prec, cost_measured_info *out);

/* Where an fp32 run's GEMMs are priced at another math than PyTorch runs them (docs/profile.md,
 * "fp32 math"). cost_op_sides prices each fp32 GEMM op by the profile's table of the math the
 * release runs it at (sim/reducer.h, reducer_tf32_matmul and reducer_tf32_cudnn; profile_fp32_gemm)
 * where it has one, else by compute.fp32.gemm. This counts the model's ops priced by the profile
 * (not by measured times) at the other math: matmuls that run strict (1.12 on) under a profile with
 * a TF32 table only, convolutions that run in TF32 (1.7 on) under one with a strict table only.
 * Zero where the profile does not say its math or the run is not fp32. */
typedef struct {
  profile_math math; /* the profile's compute.fp32.gemm.math */
  int matmuls;       /* matmuls priced at TF32 that PyTorch runs strict */
  int convs;         /* convolutions priced strict that cuDNN runs in TF32 */
} cost_fp32_math_info;

/* Fills *out for a run of c at precision `prec`. Never fails. */
void cost_fp32_math(const sim_config *c, model_dtype prec, cost_fp32_math_info *out);

/* One run of an op, each side on its own: the GPU's time (cost_op_time) and the host's (its
 * kernel launches at the launch cost each, its framework ops at the dispatch cost each); an op
 * carrying measured times, in a run cost_measured says they price, costs those instead. Adds to
 * *extrap as cost_op. DDP's pipeline (sim/pipe.h) plays the two against each other; errors as
 * cost_op_time. */
int cost_op_sides(const sim_config *c, const model_op *op, long batch, model_dtype prec, double *dev_s, double *host_s,
                  int *extrap, err_t *e);

/* Time of an op's `count` runs outside the pipeline (a hook's cast on the communication stream),
 * each the longer of its GPU and host times. Adds to *extrap the ops whose cost fell outside a
 * measured table. Errors as cost_op_time. */
int cost_op(const sim_config *c, const model_op *op, long batch, model_dtype prec, double *t, int *extrap, err_t *e);

/* Elementwise passes over numel gradient elements moving `arrays` arrays in `kernels` launches
 * (DDP's bucket copies: one kernel per gradient): the GPU's time of the profile's elementwise model
 * (its host side, a launch each, is the pipeline's: plan_t.launch_host_s). `name` is the op's in a
 * message ("ddp_bucket_copy", "fsdp_copy_in"). */
int cost_copy(const sim_config *c, const char *name, long numel, long arrays, long kernels, long batch, model_dtype prec, double *t,
              int *extrap, err_t *e);

/* The host-to-device copy of one batch: the mode simulated (never SIM_H2D_AUTO: AUTO becomes
 * pageable where the profile has h2d costs and the model an `input` size, else OFF) and its time
 * (0 when OFF). Also checks the config's loading fields (load_s >= 0, 0..256 workers). ERR_INPUT
 * when the mode needs what the model or the profile lacks. */
int cost_input(const sim_config *c, const model_t *m, long batch, sim_h2d *mode, double *copy_s, err_t *e);

#endif
