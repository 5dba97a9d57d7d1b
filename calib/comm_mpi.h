/* comm_mpi: the MPI all-reduce backend of commbench: MPI_Allreduce (float, sum, out of place)
 * between the processes of MPI_COMM_WORLD, one participant per process, timed with MPI_Wtime.
 *
 * The caller initialises MPI before comm_mpi_open and finalises it after comm_mpi_close. */
#ifndef DDPCALIB_COMM_MPI_H
#define DDPCALIB_COMM_MPI_H

#include "err.h"
#include "commbench.h"

/* Fills *b (rank 0 is root; hosts gathered from MPI_Get_processor_name). Collective. */
int comm_mpi_open(commbench_backend *b, err_t *e);

/* Gathers the processor names of all ranks of MPI_COMM_WORLD: the distinct ones, comma-separated,
 * into hosts (truncated to len), their number into *nhosts. Collective. */
int comm_mpi_hosts(char *hosts, size_t len, int *nhosts, err_t *e);

/* Frees what comm_mpi_open and the sweep allocated. NULL or a never-opened backend is a no-op. */
void comm_mpi_close(commbench_backend *b);

#endif
