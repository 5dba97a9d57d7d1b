/* ktrace: what a PyTorch profiler (Kineto) Chrome trace of GPU training measured: the device and
 * the run it records, each ProfilerStep's wall time and the GPU's idle wait at its start, every NCCL
 * kernel with its bytes and thread blocks, compute kernels beside NCCL or apart, and the host's
 * cudaLaunchKernel costs. docs/calib.md, "import kineto", names the trace fields read and where
 * Kineto and PyTorch write them. Pure: never prints, never exits. */
#ifndef DDPCALIB_KTRACE_H
#define DDPCALIB_KTRACE_H

#include <stddef.h>

#include "commbench.h"
#include "err.h"

/* One NCCL kernel (name containing "nccl"). */
typedef struct {
  char coll[24];      /* all_reduce, broadcast, all_gather, reduce_scatter, all_to_all, send_recv, ... */
  char dtype[24];     /* as recorded ("Float"), "" when not */
  double start_us;    /* the kernel's ts (trace clock) */
  double dur_s;
  long blocks;        /* grid x*y*z: NCCL's channels (one thread block each) */
  long long in_nelems, out_nelems; /* -1 when not recorded */
  int group_size;     /* -1 when not recorded */
  double bytes;       /* the collective's input bytes; 0 when unknown */
  const char *bytes_from; /* "kernel args" (In msg nelems x dtype), "record_function" (Input Dims),
                           * "ddpsim" (the `bytes` arg of ddpsim's own traces, sim/kineto.c), "" */
  int step;           /* index into the steps, -1 outside every step */
} ktrace_nccl;

typedef struct {
  char path[512];
  /* deviceProperties[] entry of the device the kernels ran on */
  char device[128];
  int device_id, sm_count, cc_major, cc_minor;
  double memory_bytes;
  /* distributedInfo ("" / -1 where absent: a single-process trace has none) */
  char backend[32], nccl_version[32];
  int rank, world_size;
  /* ProfilerStep#N ranges on the host, in trace order */
  size_t nsteps;
  double *step_s;        /* [nsteps] wall time */
  double *input_wait_s;  /* [nsteps] GPU idle from the step's start to the first kernel it launched */
  /* kernels */
  size_t nkernels, ncompute, noverlap;  /* noverlap: compute kernels overlapping an NCCL kernel */
  double compute_s, overlap_s;          /* their summed durations */
  size_t nnccl;
  ktrace_nccl *nccl;                    /* [nnccl] in start order */
  /* cudaLaunchKernel / cudaLaunchKernelExC host durations */
  size_t nlaunch, nblocked;             /* nblocked: longer than KTRACE_BLOCKED_X times the median */
  double launch_median_s, launch_unblocked_median_s, launch_max_s;
  size_t ncpu_ops, nbackward;           /* CPU ops, and those whose name holds "Backward"/"backward" */
} ktrace;

/* A launch call this many times the median of the trace's launch calls is counted queue-blocked
 * (docs/calib.md, "import kineto"). */
#define KTRACE_BLOCKED_X 10.0

/* Reads `path` (.json, or gzip-compressed whatever its name) into *t (caller frees with
 * ktrace_free, also on failure). ERR_IO when it cannot be read; ERR_INPUT `path: what is wrong`
 * when it is not JSON (or truncated), not a Chrome trace, or not a GPU training trace (no
 * deviceProperties or no kernels: CPU only; no ProfilerStep#N; CPU ops but none of backward:
 * inference; a trace of GPU activities alone cannot show backward and is read). */
int ktrace_read(const char *path, ktrace *t, err_t *e);
/* The same on a trace already in memory (text[0..len), NUL-terminated, as JSON; `path` names it in
 * messages): what ktrace_read does after reading the file. */
int ktrace_parse(const char *text, size_t len, const char *path, ktrace *t, err_t *e);
void ktrace_free(ktrace *t);

/* Size of one element of a PyTorch dtype as a trace spells it ("Float", "c10::Half", "long int");
 * 0 when unknown. */
int ktrace_dtype_size(const char *dtype);

/* The all-reduce kernels of the n traces (one run's ranks) as a sweep for commfit_ring: one row per
 * distinct byte count, its one sample the fastest kernel of that size (a kernel that waited for a
 * late peer only ever lasts longer), and *nranks the group's size. ERR_RUNTIME naming what is
 * missing when there are fewer than 3 sizes or no group of >= 2 ranks. res: free with
 * commbench_result_free (also on failure). */
int ktrace_allreduce_sweep(const ktrace *t, size_t n, commbench_cfg *cfg, commbench_result *res,
                           int *nranks, err_t *e);

#endif
