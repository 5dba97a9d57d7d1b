/* hostbench: the host side of the framework, measured with the user's installed PyTorch through a
 * small Python helper (calib/host_overhead.py): the host cost of one framework op (Python and the
 * dispatcher) and the spread of a fixed host workload (an additive host noise per iteration).
 * `ddpcalib host` writes them as compute.host.dispatch_s and jitter_s (docs/calib.md, "host"). */
#ifndef DDPCALIB_HOSTBENCH_H
#define DDPCALIB_HOSTBENCH_H

#include <cjson/cJSON.h>

#include "err.h"

typedef struct {
  const char *python;  /* the interpreter (NULL: python3 from PATH) */
  const char *helper;  /* the helper script (NULL: <data dir>/calib/host_overhead.py, sim/data.h) */
  const char *device;  /* "cpu" or "cuda" */
  int ops, iters, warmups;
} hostbench_cfg;

typedef struct {
  char framework[64], device[128];
  double dispatch_s;   /* median host time of one framework op */
  double jitter_s;     /* sd of the fixed workload's time */
  double workload_s;   /* its mean */
  double reduce_Bps;   /* the CPU summing float32 buffers (gloo's reduction) */
  double launch_s;     /* the raw launch of an empty kernel (calib/launchbench.h); 0: not measured */
  int ops;             /* framework ops in the workload */
  cJSON *raw;          /* the helper's whole output (owned: hostbench_free) */
} hostbench_result;

/* Runs the helper and checks what it printed (every field present, finite, dispatch_s > 0 and
 * jitter_s >= 0). ERR_RUNTIME when it cannot run or fails (its status), ERR_INPUT when its output is
 * not what this expects (naming the field), ERR_NOMEM. */
int hostbench_run(const hostbench_cfg *c, hostbench_result *r, err_t *e);

/* Writes compute.host {dispatch_s, jitter_s, reduce_Bps, launch_s where measured, framework, source} and samples.host (the raw times)
 * into a profile tree. ERR_NOMEM. */
int hostbench_write(cJSON *doc, const hostbench_result *r, err_t *e);

void hostbench_free(hostbench_result *r); /* NULL is a no-op */

#endif
