/* pipe: one rank's host thread and its GPU's compute stream as a pipeline, evaluated in closed form.
 *
 * The host issues op runs in program order, each after its host cost (framework dispatch and the
 * kernel launch call); the stream runs each run once it is issued and the previous run is done; a
 * launch blocks while the stream holds `queue` kernels not yet finished (CUDA's pending-launch
 * limit, about 1024 per stream: docs/simulation.md, "Host and device"). With H the host's clock and
 * D the stream's, one run of host cost h, device time d and L kernels is the max-plus recurrence
 *
 *     H <- max(H + h, D of the kernel `queue` launches back)      D <- max(H, D) + d
 *
 * Identical runs of an op (`count`) reach a steady state in which every run shifts the whole state
 * by max(h, d); pipe_op detects it (the state after a run equal to the one before, shifted) and
 * jumps over the remaining runs, so a sequence costs O(ops x queue) at most whatever its counts.
 * Everything here is pure arithmetic on the caller's workspace: no allocation after pipe_init. */
#ifndef DDPSIM_PIPE_H
#define DDPSIM_PIPE_H

#include "err.h"

/* CUDA's launch queue per stream: about 1,000 kernels, after which cudaLaunchKernel blocks until one
 * finishes (measured: NVIDIA developer forums t/68937, StackOverflow 53970187; not a documented
 * limit, and cudaLimitDevRuntimePendingLaunchCount, 2048, is the device runtime's, not this). */
#define PIPE_QUEUE_DEFAULT 1024
#define PIPE_QUEUE_MAX 65536

typedef struct {
  int queue;       /* launch slots */
  double *ring;    /* (2 queue) first half: the stream's finishing time of the last `queue` kernels */
  long pos;        /* kernels launched since pipe_reset */
  double H, D;     /* the host's clock (when it is free) and the stream's (when it is free) */
  double host_busy_s, dev_busy_s; /* work done since pipe_reset */
  double starved_s;               /* the stream idle, waiting for the host to issue */
  double queue_wait_s;            /* the host blocked on a full launch queue */
} pipe_t;

/* Allocates the workspace for a queue of 1..PIPE_QUEUE_MAX launches. ERR_INPUT, ERR_NOMEM. */
int pipe_init(pipe_t *p, int queue, err_t *e);
void pipe_free(pipe_t *p); /* NULL is a no-op */

/* Starts a sequence with the host free at H0 and the stream at D0 (either may be -INFINITY: not
 * constraining, as pipe's max-plus coefficients need) and an empty queue; zeroes the totals. */
void pipe_reset(pipe_t *p, double H0, double D0);

/* `count` runs of an op, each host_s of host work, dev_s on the stream, `kernels` launch slots
 * (clamped to 1..queue). host_s, dev_s >= 0. */
void pipe_op(pipe_t *p, double host_s, double dev_s, long count, long kernels);

/* Host work that launches nothing (a hook's bookkeeping): the host's clock advances. */
void pipe_host(pipe_t *p, double host_s);

/* The stream cannot run anything before t (a cross-stream wait: DDP's final wait on the all-reduces
 * is an event the compute stream waits on, not the host). */
void pipe_stream_wait(pipe_t *p, double t);

#endif
