/* sweep_mpi: a sweep over MPI ranks (sweep_mpi.h). */
#include "sweep_mpi.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int sweep_mpi_launched(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

int sweep_mpi_env_rank(void) {
  const char *r = getenv("OMPI_COMM_WORLD_RANK");
  if (!r) r = getenv("PMI_RANK");
  if (!r) r = getenv("PMIX_RANK");
  return r ? atoi(r) : 0;
}

static int mpi_fail(err_t *e, int code, const char *what) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, s, &len);
  return err_set(e, ERR_RUNTIME, "MPI: %s: %.*s", what, len, s);
}

int sweep_mpi_run(const sim_config *cfgs, int n, const sweep_opts *o, sweep_row *rows, int *root, err_t *e) {
  *root = 0;
  int rank = 0, size = 1, rc, m;
  if ((m = MPI_Init(NULL, NULL)) != MPI_SUCCESS) return mpi_fail(e, m, "MPI_Init");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* This rank's share, cyclic: neighbours in a sweep cost alike, so every rank gets a like mix. */
  int mine = n > rank ? (n - rank + size - 1) / size : 0;
  sim_config *sub = malloc((size_t)(mine ? mine : 1) * sizeof *sub);
  sweep_row *got = calloc((size_t)(mine ? mine : 1), sizeof *got);
  sweep_row *all = rank == 0 ? calloc((size_t)(n ? n : 1), sizeof *all) : NULL;
  int *counts = rank == 0 ? calloc((size_t)size, sizeof *counts) : NULL, *displs = rank == 0 ? calloc((size_t)size, sizeof *displs) : NULL;
  if (!sub || !got || (rank == 0 && (!all || !counts || !displs))) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    MPI_Abort(MPI_COMM_WORLD, 1);
    goto done;
  }
  for (int k = 0; k < mine; k++) sub[k] = cfgs[rank + k * size];
  sweep_opts local = *o;
  if (rank != 0) local.progress = NULL; /* one progress line, rank 0's (of its own share) */
  err_t le;
  rc = sweep_run(sub, mine, &local, got, &le);
  /* A share's rows past its own failure are not done; rank 0 finds the lowest failure among all. */
  if (rank == 0)
    for (int r = 0, off = 0; r < size; r++) {
      int share = n > r ? (n - r + size - 1) / size : 0;
      counts[r] = share * (int)sizeof(sweep_row);
      displs[r] = off;
      off += counts[r];
    }
  if ((m = MPI_Gatherv(got, mine * (int)sizeof(sweep_row), MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD)) !=
      MPI_SUCCESS) {
    rc = mpi_fail(e, m, "gathering the rows");
    goto done;
  }
  if (rank == 0) {
    *root = 1;
    rc = ERR_OK;
    for (int r = 0, off = 0; r < size; r++) {
      int share = counts[r] / (int)sizeof(sweep_row);
      for (int k = 0; k < share; k++) rows[r + k * size] = all[off + k];
      off += share;
    }
    for (int i = 0; i < n && !rc; i++) {
      if (rows[i].done && rows[i].status) rc = err_set(e, rows[i].status, "configuration %d: %s", i + 1, rows[i].msg);
      /* Not done: its rank stopped at an earlier failure of its own, found first, or a worker died. */
      else if (!rows[i].done) rc = err_set(e, ERR_SIM, "configuration %d: not simulated (a sweep worker died)", i + 1);
    }
  } else if (rc) {
    *e = le;
  }
done:
  free(sub);
  free(got);
  free(all);
  free(counts);
  free(displs);
  return rc;
}

void sweep_mpi_finish(void) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
}
