/* comm_nccl: the NCCL all-reduce backend of commbench (built only with CUDA).
 *
 * Each process drives `ngpus` local GPUs; under mpirun with P processes the ring has P * ngpus
 * participants, the ncclUniqueId made by rank 0 and broadcast over MPI_COMM_WORLD. Local GPU i of
 * a process is device (local_rank * ngpus + i) mod device_count, local_rank counting the processes
 * on the same host. Each all-reduce is timed on the host around the grouped launch and the
 * synchronisation of every stream (as nccl-tests does).
 *
 * The caller initialises MPI before comm_nccl_open and finalises it after comm_nccl_close. */
#ifndef DDPCALIB_COMM_NCCL_H
#define DDPCALIB_COMM_NCCL_H

#include "err.h"
#include "commbench.h"

/* Fills *b. ERR_NODEV when CUDA reports no device (any error from cudaGetDeviceCount counts as
 * none), ERR_RUNTIME on any other CUDA, NCCL or MPI failure. Collective over MPI_COMM_WORLD. */
int comm_nccl_open(commbench_backend *b, int ngpus, err_t *e);

/* Destroys the communicators, streams and buffers. NULL or a never-opened backend is a no-op. */
void comm_nccl_close(commbench_backend *b);

#endif
