/* sweep_mpi: a sweep spread over the ranks of an MPI job (`mpirun -np R ddpsim sweep ...`).
 *
 * Every rank builds the same list of configurations; rank r runs those whose index i has
 * i % R == r (with sweep_run, its own local workers), and rank 0 gathers every row into its place,
 * so it holds exactly the rows a local run would. Rows travel as bytes: the ranks run the same
 * ddpsim build (sweep_row has no pointers). This module alone links MPI (ddpsim's, not the
 * simulator library's); MPI_Init happens inside sweep_mpi_run, so it is called at most once per
 * process, and MPI_Finalize in sweep_mpi_finish. Library code: it never prints. */
#ifndef DDPSIM_SWEEP_MPI_H
#define DDPSIM_SWEEP_MPI_H

#include "sweep.h"

/* 1 when this process was started by an MPI launcher (mpirun's environment says so). */
int sweep_mpi_launched(void);

/* This process's rank as the launcher's environment gives it (0 when not launched by one). */
int sweep_mpi_env_rank(void);

/* Runs this rank's share of cfgs[0..n-1]; on rank 0 fills rows[0..n-1] with every rank's rows and
 * sets *root = 1 (else 0, rows untouched beyond this rank's). The status of the whole sweep on
 * rank 0 as sweep_run's (the lowest failed configuration over all ranks); on the others, their
 * own share's. ERR_RUNTIME when MPI fails. */
int sweep_mpi_run(const sim_config *cfgs, int n, const sweep_opts *o, sweep_row *rows, int *root, err_t *e);

/* Every rank calls it once it is done, rank 0 after what it does with the rows (the intervals'
 * draws, the output): the others wait for it there, so that none ends the job before rank 0 has
 * written it (a launcher may end the job when any rank exits). Then MPI_Finalize. A no-op where
 * MPI was not initialized or is finalized already. */
void sweep_mpi_finish(void);

#endif
