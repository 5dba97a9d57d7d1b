/* comm_nccl: NCCL all-reduce backend. Plain C over the CUDA runtime and NCCL APIs. */
#define _POSIX_C_SOURCE 200809L
#include "comm_nccl.h"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_mpi.h"
#include "wall.h"

enum { MAX_LOCAL = 64 };

typedef struct {
  int rank, size;   /* MPI */
  int ngpus;        /* local GPUs of this process */
  int nranks;       /* participants in the ring */
  int dev[MAX_LOCAL];
  ncclComm_t comm[MAX_LOCAL];
  cudaStream_t stream[MAX_LOCAL];
  float *send[MAX_LOCAL], *recv[MAX_LOCAL]; /* device, [cap] each */
  float *host;                              /* [cap] staging for fill and check */
  size_t cap;
} nccl_ctx;

#define CUDA_TRY(call)                                                                          \
  do {                                                                                          \
    cudaError_t err_ = (call);                                                                  \
    if (err_ != cudaSuccess)                                                                    \
      return err_set(e, ERR_RUNTIME, "cuda: %s: %s", #call, cudaGetErrorString(err_));        \
  } while (0)
#define NCCL_TRY(call)                                                                          \
  do {                                                                                          \
    ncclResult_t r_ = (call);                                                                   \
    if (r_ != ncclSuccess)                                                                      \
      return err_set(e, ERR_RUNTIME, "nccl: %s: %s", #call, ncclGetErrorString(r_));          \
  } while (0)

static void free_buffers(nccl_ctx *c) {
  for (int i = 0; i < c->ngpus; i++) {
    if (c->send[i]) cudaFree(c->send[i]);
    if (c->recv[i]) cudaFree(c->recv[i]);
    c->send[i] = c->recv[i] = NULL;
  }
  free(c->host);
  c->host = NULL;
  c->cap = 0;
}

static int n_alloc(void *vc, size_t max_count, err_t *e) {
  nccl_ctx *c = vc;
  free_buffers(c);
  c->host = malloc(max_count * sizeof(float));
  if (!c->host) return err_set(e, ERR_NOMEM, "nccl: cannot allocate %zu floats on the host", max_count);
  c->cap = max_count;
  for (int i = 0; i < c->ngpus; i++) {
    CUDA_TRY(cudaSetDevice(c->dev[i]));
    CUDA_TRY(cudaMalloc((void **)&c->send[i], max_count * sizeof(float)));
    CUDA_TRY(cudaMalloc((void **)&c->recv[i], max_count * sizeof(float)));
  }
  return ERR_OK;
}

static int n_fill(void *vc, size_t count, err_t *e) {
  nccl_ctx *c = vc;
  for (int i = 0; i < c->ngpus; i++) {
    int r = c->rank * c->ngpus + i;
    for (size_t j = 0; j < count; j++) c->host[j] = (float)(r + 1) * (float)(1 + j % 7);
    CUDA_TRY(cudaSetDevice(c->dev[i]));
    CUDA_TRY(cudaMemcpy(c->send[i], c->host, count * sizeof(float), cudaMemcpyHostToDevice));
    for (size_t j = 0; j < count; j++) c->host[j] = -1.0f;
    CUDA_TRY(cudaMemcpy(c->recv[i], c->host, count * sizeof(float), cudaMemcpyHostToDevice));
  }
  return ERR_OK;
}

static int n_allreduce(void *vc, size_t count, double *elapsed_s, err_t *e) {
  nccl_ctx *c = vc;
  double t0 = wall_now_s();
  NCCL_TRY(ncclGroupStart());
  for (int i = 0; i < c->ngpus; i++)
    NCCL_TRY(ncclAllReduce(c->send[i], c->recv[i], count, ncclFloat, ncclSum, c->comm[i], c->stream[i]));
  NCCL_TRY(ncclGroupEnd());
  for (int i = 0; i < c->ngpus; i++) {
    CUDA_TRY(cudaSetDevice(c->dev[i]));
    CUDA_TRY(cudaStreamSynchronize(c->stream[i]));
  }
  *elapsed_s = wall_now_s() - t0;
  return ERR_OK;
}

static int n_check(void *vc, size_t count, long long *wrong, err_t *e) {
  nccl_ctx *c = vc;
  /* Small integers: every partial sum is exact in float, so equality is the right test. */
  float ranks = (float)c->nranks * (float)(c->nranks + 1) / 2.0f;
  long long w = 0;
  for (int i = 0; i < c->ngpus; i++) {
    CUDA_TRY(cudaSetDevice(c->dev[i]));
    CUDA_TRY(cudaMemcpy(c->host, c->recv[i], count * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t j = 0; j < count; j++)
      if (c->host[j] != ranks * (float)(1 + j % 7)) w++;
  }
  if (MPI_Allreduce(&w, wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
    return err_set(e, ERR_RUNTIME, "mpi: MPI_Allreduce (check) failed");
  return ERR_OK;
}

static int n_reduce_max(void *vc, double *v, size_t n, err_t *e) {
  (void)vc;
  if (MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
    return err_set(e, ERR_RUNTIME, "mpi: MPI_Allreduce (max) failed");
  return ERR_OK;
}

static int open_ctx(commbench_backend *b, nccl_ctx *c, int ngpus, err_t *e) {
  int ndev = 0;
  cudaError_t ce = cudaGetDeviceCount(&ndev);
  if (ce != cudaSuccess || ndev < 1)
    return err_set(e, ERR_NODEV, "nccl: no CUDA device (cudaGetDeviceCount: %s)",
                   ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices");
  if (ngpus > MAX_LOCAL) return err_set(e, ERR_USAGE, "-g: at most %d GPUs per process", MAX_LOCAL);
  MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c->size);
  MPI_Comm local;
  int local_rank = 0;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &local) !=
      MPI_SUCCESS)
    return err_set(e, ERR_RUNTIME, "mpi: MPI_Comm_split_type failed");
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_free(&local);
  if (ngpus > ndev)
    return err_set(e, ERR_USAGE, "-g %d: this host has %d CUDA device(s)", ngpus, ndev);
  c->ngpus = ngpus;
  c->nranks = c->size * ngpus;
  for (int i = 0; i < ngpus; i++) c->dev[i] = (local_rank * ngpus + i) % ndev;

  ncclUniqueId id;
  if (c->rank == 0) NCCL_TRY(ncclGetUniqueId(&id));
  if (MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
    return err_set(e, ERR_RUNTIME, "mpi: MPI_Bcast of the ncclUniqueId failed");
  NCCL_TRY(ncclGroupStart());
  for (int i = 0; i < ngpus; i++) {
    CUDA_TRY(cudaSetDevice(c->dev[i]));
    NCCL_TRY(ncclCommInitRank(&c->comm[i], c->nranks, id, c->rank * ngpus + i));
  }
  NCCL_TRY(ncclGroupEnd());
  for (int i = 0; i < ngpus; i++) {
    CUDA_TRY(cudaSetDevice(c->dev[i]));
    CUDA_TRY(cudaStreamCreateWithFlags(&c->stream[i], cudaStreamNonBlocking));
  }

  int rc = comm_mpi_hosts(b->hosts, sizeof b->hosts, &b->nhosts, e);
  if (rc) return rc;
  struct cudaDeviceProp prop;
  CUDA_TRY(cudaGetDeviceProperties(&prop, c->dev[0]));
  snprintf(b->devices, sizeof b->devices, "%.200s x %d per process (%d processes)", prop.name, ngpus,
           c->size);
  int nv = 0, drv = 0, rt = 0;
  ncclGetVersion(&nv);
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  snprintf(b->library, sizeof b->library, "NCCL %d; CUDA runtime %d; CUDA driver %d", nv, rt, drv);
  return ERR_OK;
}

int comm_nccl_open(commbench_backend *b, int ngpus, err_t *e) {
  memset(b, 0, sizeof *b);
  b->name = "nccl";
  nccl_ctx *c = calloc(1, sizeof *c);
  if (!c) return err_set(e, ERR_NOMEM, "nccl: out of memory");
  b->ctx = c;
  int rc = open_ctx(b, c, ngpus, e);
  if (rc) {
    comm_nccl_close(b);
    return rc;
  }
  b->nranks = c->nranks;
  b->is_root = c->rank == 0;
  b->alloc = n_alloc;
  b->fill = n_fill;
  b->allreduce = n_allreduce;
  b->check = n_check;
  b->reduce_max = n_reduce_max;
  return ERR_OK;
}

void comm_nccl_close(commbench_backend *b) {
  if (!b || !b->ctx) return;
  nccl_ctx *c = b->ctx;
  free_buffers(c);
  for (int i = 0; i < c->ngpus; i++) {
    if (c->comm[i]) ncclCommDestroy(c->comm[i]);
    if (c->stream[i]) cudaStreamDestroy(c->stream[i]);
  }
  free(c);
  b->ctx = NULL;
}
