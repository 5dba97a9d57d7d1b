/* launchbench with CUDA: an empty kernel, launched LAUNCHBENCH_BATCH times per timed batch. */
extern "C" {
#include "devinfo.h"
#include "launchbench.h"
}

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__global__ void launchbench_empty(void) {}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

extern "C" int launchbench_time(int iters, double *launch_s, char *dev, size_t devlen, err_t *e) {
  devinfo d;
  int rc = devinfo_read(DEVINFO_CUDA, &d, e); /* ERR_NODEV without a GPU */
  if (rc) return rc;
  if (iters < 1) return err_set(e, ERR_USAGE, "launchbench: at least one batch");
  snprintf(dev, devlen, "%s", d.name);
  cudaError_t ce;
  double *t = (double *)malloc((size_t)iters * sizeof *t);
  if (!t) return err_set(e, ERR_NOMEM, "out of memory");
  for (int it = -2; it < iters && rc == ERR_OK; it++) { /* two untimed batches first */
    double t0 = now_s();
    for (int k = 0; k < LAUNCHBENCH_BATCH; k++) launchbench_empty<<<1, 1>>>();
    double t1 = now_s();
    if ((ce = cudaGetLastError()) != cudaSuccess || (ce = cudaDeviceSynchronize()) != cudaSuccess)
      rc = err_set(e, ERR_RUNTIME, "cuda: empty kernel: %s", cudaGetErrorString(ce));
    else if (it >= 0)
      t[it] = (t1 - t0) / LAUNCHBENCH_BATCH;
  }
  if (rc == ERR_OK) {
    qsort(t, (size_t)iters, sizeof *t, cmp);
    *launch_s = iters % 2 ? t[iters / 2] : 0.5 * (t[iters / 2 - 1] + t[iters / 2]);
  }
  free(t);
  return rc;
}
