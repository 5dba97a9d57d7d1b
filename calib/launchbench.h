/* launchbench: the raw host cost of one kernel launch, an empty kernel launched back to back on one
 * stream (fewer launches per batch than CUDA's launch queue holds, so the host never blocks), timed
 * on the host with clock_gettime around the launches, not the kernels. `ddpcalib host --device cuda`
 * writes it as compute.host.launch_s (docs/calib.md, "host"). */
#ifndef DDPCALIB_LAUNCHBENCH_H
#define DDPCALIB_LAUNCHBENCH_H

#include <stddef.h>

#include "err.h"

#define LAUNCHBENCH_BATCH 256 /* launches per timed batch: well below the ~1,000 the queue holds */

/* Median over `iters` batches of the host time per launch, into *launch_s; the device's name into
 * dev. ERR_NODEV without a GPU (or a build without CUDA), ERR_RUNTIME on a CUDA error. */
int launchbench_time(int iters, double *launch_s, char *dev, size_t devlen, err_t *e);

#endif
