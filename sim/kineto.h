/* kineto: a prediction's timeline (sim/timeline.h) as PyTorch profiler traces, one JSON object per
 * rank in the format torch.profiler's Kineto writes (`export_chrome_trace`, tensorboard's
 * `*.pt.trace.json`), so that the tools that read real traces read ddpsim's: Holistic Trace
 * Analysis (HTA), Perfetto, tensorboard's profiler plugin. docs/trace.md says what each event is.
 *
 * Each rank's object has Kineto's top level (schemaVersion, distributedInfo {backend, rank,
 * world_size}, deviceProperties, baseTimeNanoseconds, traceEvents) and, per steady iteration (those
 * the report averages, timeline.steady_from on: as a profiler schedule with warm-up steps records
 * them), a `ProfilerStep#N` span on the host thread; every GPU activity is a `cat: kernel` (or
 * `gpu_memcpy`) span on its device (pid) and stream (tid) with args device, stream and correlation,
 * launched by one `cudaLaunchKernel` (`cudaMemcpyAsync`) `cat: cuda_runtime` span on the host thread
 * with the same correlation and an `ac2g` flow between them. NCCL's collectives are named as NCCL
 * names its kernels (`ncclDevKernel_AllReduce_Sum_f16_RING_LL`); under gloo or MPI they are host
 * spans (`gloo:all_reduce`) on a thread of their own, as PyTorch records them.
 *
 * Times are microseconds of simulated time (baseTimeNanoseconds 0). GPU spans are the engine's
 * (simulated) or its spans divided by the plan's costs (derived; args "ddpsim_source"); the launch
 * times are derived: the host issues each phase's launches evenly over its issuing span (the host
 * track, sim/pipe.h), or at the start of the step where the profile has no host costs, never after
 * the kernel starts. Symmetry: a rank not simulated shows its twin's spans (sim/trace.h). Nothing
 * here prints; kineto_write writes files. DataParallel has no per-rank processes: ERR_USAGE. */
#ifndef DDPSIM_KINETO_H
#define DDPSIM_KINETO_H

#include <cjson/cJSON.h>

#include "err.h"
#include "predict.h"

/* The trace of job rank `rank` (0 <= rank < the job's GPUs) of p, run with c->record_spans set. On
 * success *out is new (the caller deletes it). ERR_USAGE for DataParallel or a rank outside the
 * job, ERR_INPUT when p has no timeline, ERR_NOMEM. */
int kineto_build(const sim_config *c, const predict_result *p, int rank, cJSON **out, err_t *e);

/* Writes the traces of ranks[0..nranks-1] (NULL: the simulated ranks; checked as trace_build
 * checks them) into directory dir, one file each, `rank<R>.pt.trace.json`, the folder as one
 * (common/afile.h, afile_dir): it ends up holding this run's files and nothing else, or, on a
 * failure or a signal, what it held before. A dir that holds anything else than such files is
 * refused (ERR_IO) and left alone. ERR_USAGE as kineto_build and trace_check_ranks; ERR_IO naming
 * the path. */
int kineto_write(const sim_config *c, const predict_result *p, const int *ranks, int nranks, const char *dir, err_t *e);

/* 1 when name is one kineto_write writes (`rank<R>.pt.trace.json`, R decimal), else 0. */
int kineto_is_trace_name(const char *name);

/* Before the simulation: could kineto_write write dir (afile_dir_check with the names above)? */
int kineto_check(const char *dir, err_t *e);

#endif
