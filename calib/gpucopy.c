/* gpucopy: CUDA copies timed with events; ERR_NODEV stubs without CUDA. */
#include "gpucopy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* The host-to-device modes are the profile's, in its order (their names are the h2d keys written). */
_Static_assert(GPUCOPY_H2D_PAGEABLE - 1 == PROFILE_H2D_PAGEABLE_SYNC && GPUCOPY_H2D_PINNED - 1 == PROFILE_H2D_PINNED_SYNC &&
                   GPUCOPY_H2D_ASYNC - 1 == PROFILE_H2D_PINNED_ASYNC && GPUCOPY_NMODES - 1 == PROFILE_H2D_NMODES,
               "gpucopy's host-to-device modes follow profile_h2d_mode");

const char *gpucopy_mode_name(int mode) {
  if (mode == GPUCOPY_D2D) return "d2d";
  return mode > GPUCOPY_D2D && mode < GPUCOPY_NMODES ? profile_h2d_name((profile_h2d_mode)(mode - 1)) : "?";
}

#ifndef DDPCALIB_HAVE_CUDA

int gpucopy_probe(devinfo *dev, char *versions, size_t verlen, err_t *e) {
  (void)versions, (void)verlen;
  return devinfo_read(DEVINFO_CUDA, dev, e); /* ERR_NODEV: built without CUDA */
}

int gpucopy_time(int mode, size_t bytes, int warmups, int iters, double *samples_s, err_t *e) {
  (void)mode, (void)bytes, (void)warmups, (void)iters, (void)samples_s;
  return err_set(e, ERR_NODEV, "no CUDA device (ddpcalib was built without CUDA)");
}

#else

#include <cuda_runtime.h>

#define TRY(call)                                                                               \
  do {                                                                                          \
    cudaError_t err_ = (call);                                                                  \
    if (err_ != cudaSuccess) {                                                                  \
      rc = err_set(e, ERR_RUNTIME, "cuda: %s: %s", #call, cudaGetErrorString(err_));          \
      goto done;                                                                                \
    }                                                                                           \
  } while (0)

int gpucopy_probe(devinfo *dev, char *versions, size_t verlen, err_t *e) {
  int rc = devinfo_read(DEVINFO_CUDA, dev, e);
  if (rc) return rc;
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  snprintf(versions, verlen, "CUDA runtime %d, driver %d, %d device(s)", rt, drv, dev->ndevices);
  return ERR_OK;
}

int gpucopy_time(int mode, size_t bytes, int warmups, int iters, double *samples_s, err_t *e) {
  int rc = ERR_OK, n = 0;
  cudaError_t ce = cudaGetDeviceCount(&n);
  if (ce != cudaSuccess || n < 1) return err_set(e, ERR_NODEV, "no CUDA device");
  void *dst = NULL, *src_dev = NULL, *host = NULL;
  int pinned = mode == GPUCOPY_H2D_PINNED || mode == GPUCOPY_H2D_ASYNC;
  cudaStream_t s = NULL;
  cudaEvent_t a = NULL, b = NULL;
  TRY(cudaMalloc(&dst, bytes));
  if (mode == GPUCOPY_D2D) {
    TRY(cudaMalloc(&src_dev, bytes));
    TRY(cudaMemset(src_dev, 1, bytes));
  } else if (pinned) {
    TRY(cudaMallocHost(&host, bytes));
    memset(host, 1, bytes);
  } else {
    host = malloc(bytes);
    if (!host) {
      rc = err_set(e, ERR_NOMEM, "cannot allocate %zu host bytes", bytes);
      goto done;
    }
    memset(host, 1, bytes);
  }
  TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  TRY(cudaEventCreate(&a));
  TRY(cudaEventCreate(&b));
  /* Synchronous copies run on the legacy default stream: their events go there too. */
  int sync = mode == GPUCOPY_H2D_PAGEABLE || mode == GPUCOPY_H2D_PINNED;
  cudaStream_t es = sync ? (cudaStream_t)0 : s;
  for (int i = -warmups; i < iters; i++) {
    TRY(cudaEventRecord(a, es));
    if (mode == GPUCOPY_D2D)
      TRY(cudaMemcpyAsync(dst, src_dev, bytes, cudaMemcpyDeviceToDevice, s));
    else if (mode == GPUCOPY_H2D_ASYNC)
      TRY(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, s));
    else
      TRY(cudaMemcpy(dst, host, bytes, cudaMemcpyHostToDevice));
    TRY(cudaEventRecord(b, es));
    TRY(cudaEventSynchronize(b));
    float ms = 0;
    TRY(cudaEventElapsedTime(&ms, a, b));
    if (i >= 0) samples_s[i] = ms * 1e-3;
  }
done:
  if (a) cudaEventDestroy(a);
  if (b) cudaEventDestroy(b);
  if (s) cudaStreamDestroy(s);
  if (dst) cudaFree(dst);
  if (src_dev) cudaFree(src_dev);
  if (host) {
    if (pinned)
      cudaFreeHost(host);
    else
      free(host);
  }
  return rc;
}
#endif
