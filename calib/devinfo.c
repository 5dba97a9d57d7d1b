/* devinfo: the device's figures as it reports them (devinfo.h). */
#define _POSIX_C_SOURCE 200809L
#include "devinfo.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int read_cpu(devinfo *out) {
  snprintf(out->name, sizeof out->name, "cpu");
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "model name", 10) == 0) {
      char *v = strchr(line, ':');
      if (v) snprintf(out->name, sizeof out->name, "%.200s", v + 2);
      out->name[strcspn(out->name, "\n")] = '\0';
      break;
    }
  if (f) fclose(f);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) out->memory_bytes = (double)pages * (double)page;
  out->ndevices = 1;
  snprintf(out->source, sizeof out->source,
           "ddpcalib (calib/devinfo.c) on the CPU: name from /proc/cpuinfo's model name; memory_bytes = "
           "sysconf(_SC_PHYS_PAGES) x sysconf(_SC_PAGESIZE), the host's RAM, shared by every rank of the host; "
           "sm_count and hbm_Bps do not apply; cuda_context_bytes, tdp_W and idle_W are not read");
  return ERR_OK;
}

#ifndef DDPCALIB_HAVE_CUDA

static int read_cuda(devinfo *out, err_t *e) {
  (void)out;
  return err_set(e, ERR_NODEV, "no CUDA device (ddpcalib was built without CUDA)");
}

#else

#include <cuda_runtime.h>

static int read_cuda(devinfo *out, err_t *e) {
  int n = 0;
  /* Without a GPU cudaGetDeviceCount returns an error, not 0 (DESIGN.md): either is "no GPU". */
  cudaError_t ce = cudaGetDeviceCount(&n);
  if (ce != cudaSuccess || n < 1)
    return err_set(e, ERR_NODEV, "no CUDA device (cudaGetDeviceCount: %s)",
                   ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices");
  struct cudaDeviceProp p;
  if ((ce = cudaGetDeviceProperties(&p, 0)) != cudaSuccess)
    return err_set(e, ERR_RUNTIME, "cuda: cudaGetDeviceProperties: %s", cudaGetErrorString(ce));
  /* The name as the device reports it (torch.cuda.get_device_name's too): the exporter's measured
   * times are matched to a profile by it (sim/cost.h). */
  snprintf(out->name, sizeof out->name, "%.200s", p.name);
  out->ndevices = n;
  out->memory_bytes = (double)p.totalGlobalMem;
  out->sm_count = p.multiProcessorCount;
  out->tf32 = p.major >= 8;
  /* The memory clock and bus width by attribute: CUDA 13 removed the cudaDeviceProp fields, the
   * attributes exist in CUDA 11, 12 and 13. Double data rate: 2 transfers per clock. */
  int clock_kHz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&clock_kHz, cudaDevAttrMemoryClockRate, 0) == cudaSuccess &&
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0) == cudaSuccess && clock_kHz > 0 && bus_bits > 0)
    out->hbm_Bps = 2.0 * (double)clock_kHz * 1e3 * (double)bus_bits / 8.0;
  snprintf(out->source, sizeof out->source,
           "ddpcalib (calib/devinfo.c), CUDA device 0 of %d: name, memory_bytes (totalGlobalMem) and sm_count "
           "(multiProcessorCount) from cudaGetDeviceProperties; hbm_Bps %s; cuda_context_bytes, tdp_W and idle_W "
           "are not read (no NVML)",
           n,
           out->hbm_Bps > 0 ? "NOMINAL, not measured: 2 x cudaDevAttrMemoryClockRate x cudaDevAttrGlobalMemoryBusWidth / 8 "
                              "(a clock x width peak)"
                            : "not written: the device reports no memory clock or bus width");
  return ERR_OK;
}

#endif

int devinfo_read(int backend, devinfo *out, err_t *e) {
  memset(out, 0, sizeof *out);
  out->backend = backend;
  return backend == DEVINFO_CUDA ? read_cuda(out, e) : read_cpu(out);
}

void devinfo_summary(const devinfo *d, char *buf, size_t len) {
  int n = snprintf(buf, len, "%s", d->name);
  if (d->memory_bytes > 0 && n >= 0 && (size_t)n < len)
    n += snprintf(buf + n, len - (size_t)n, ": %.2f GiB memory", d->memory_bytes / (1024.0 * 1024.0 * 1024.0));
  if (d->sm_count > 0 && n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, ", %.0f SMs", d->sm_count);
  if (d->hbm_Bps > 0 && n >= 0 && (size_t)n < len)
    snprintf(buf + n, len - (size_t)n, ", %.0f GB/s nominal memory bandwidth (clock x bus width)", d->hbm_Bps / 1e9);
}
