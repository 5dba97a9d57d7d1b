/* devinfo: the device's own figures as it reports them, for the profile's "device" object
 * (docs/profile.md, "The card"; docs/calib.md, "The device"). One reading for every command that
 * writes a device (compute, machine through record_compute; h2d's and host's device names).
 *
 *   kind: "cpu" or "gpu" (the backend read; ddpsim's gloo stages a GPU's buckets through the host)
 *   CPU:  name          /proc/cpuinfo's first "model name" line ("cpu" where there is none)
 *         memory_bytes  sysconf(_SC_PHYS_PAGES) x sysconf(_SC_PAGESIZE): the host's RAM
 *         sm_count, hbm_Bps: not applicable, 0 (so ddpsim's GPU-sharing model stays off)
 *   CUDA: device 0's cudaDeviceProp.name and .totalGlobalMem, .multiProcessorCount, and the
 *         nominal peak memory bandwidth 2 x cudaDevAttrMemoryClockRate (kHz) x 1000 x
 *         cudaDevAttrGlobalMemoryBusWidth (bits) / 8: a clock x width figure, not a measurement.
 *
 * Not read: the CUDA context's size (the runtime creates a context before it can say what is free,
 * so "free before minus free after" cannot be measured without NVML, which is no dependency) and
 * the board's power limits (NVML again). Those stay absent from what ddpcalib writes. */
#ifndef DDPCALIB_DEVINFO_H
#define DDPCALIB_DEVINFO_H

#include <stddef.h>

#include "err.h"

enum { DEVINFO_CPU = 0, DEVINFO_CUDA = 1 };

typedef struct {
  char name[256];      /* as the device names itself */
  double memory_bytes; /* 0 where not known */
  double sm_count;     /* 0: not applicable (CPU) or not reported */
  double hbm_Bps;      /* 0: not applicable (CPU) or not reported */
  int ndevices;        /* CUDA: devices the runtime sees (device 0 is the one read); CPU: 1 */
  int backend;         /* DEVINFO_CPU or DEVINFO_CUDA: written as device.kind "cpu" or "gpu" */
  int tf32;            /* CUDA: 1 where the card has TF32 tensor cores (compute capability 8.0 on) */
  char source[512];    /* which call gave each figure, for device.source */
} devinfo;

/* Fills *out for `backend` (DEVINFO_CPU or DEVINFO_CUDA). CUDA without CUDA in the build, or where
 * cudaGetDeviceCount reports an error or no device: ERR_NODEV ("no CUDA device ..."). A CPU whose
 * memory sysconf cannot say keeps memory_bytes 0 (not an error). */
int devinfo_read(int backend, devinfo *out, err_t *e);

/* One line for the front end: "NAME: 23.54 GiB memory, 132 SMs, 3350 GB/s nominal memory bandwidth"
 * (the figures known). */
void devinfo_summary(const devinfo *d, char *buf, size_t len);

#endif
