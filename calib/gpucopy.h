/* gpucopy: CUDA memory copies timed with CUDA events (device-to-device for the elementwise
 * table, host-to-device for `ddpcalib h2d`). Without CUDA in the build, or when
 * cudaGetDeviceCount reports an error or no device, every function returns ERR_NODEV. */
#ifndef DDPCALIB_GPUCOPY_H
#define DDPCALIB_GPUCOPY_H

#include <stddef.h>

#include "devinfo.h"
#include "err.h"

/* Device 0's figures (devinfo_read, DEVINFO_CUDA) into dev, "CUDA runtime R, driver D, N device(s)"
 * into versions. */
int gpucopy_probe(devinfo *dev, char *versions, size_t verlen, err_t *e);

enum {
  GPUCOPY_D2D = 0,          /* cudaMemcpy device to device */
  GPUCOPY_H2D_PAGEABLE = 1, /* cudaMemcpy from malloc'd memory (staged by the driver) */
  GPUCOPY_H2D_PINNED = 2,   /* cudaMemcpy from cudaMallocHost memory */
  GPUCOPY_H2D_ASYNC = 3,    /* cudaMemcpyAsync from pinned memory on a stream */
  GPUCOPY_NMODES
};
/* "d2d", "pageable_sync", "pinned_sync", "pinned_async". */
const char *gpucopy_mode_name(int mode);

/* `warmups` untimed copies of `bytes`, then `iters` timed ones, each between two events on the
 * copy's stream; samples_s[iters] gets the seconds of each. */
int gpucopy_time(int mode, size_t bytes, int warmups, int iters, double *samples_s, err_t *e);

#endif
