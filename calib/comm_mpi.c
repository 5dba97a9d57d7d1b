/* comm_mpi: MPI_Allreduce backend. */
#include "comm_mpi.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int rank, size;
  size_t cap;  /* floats allocated */
  float *send; /* [cap] */
  float *recv; /* [cap] */
} mpi_ctx;

static int mpi_fail(err_t *e, int code, const char *what) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "error %d", code);
  return err_set(e, ERR_RUNTIME, "mpi: %s: %s", what, s);
}

static int m_alloc(void *vc, size_t max_count, err_t *e) {
  mpi_ctx *c = vc;
  if (max_count > (size_t)0x7fffffff)
    return err_set(e, ERR_USAGE, "mpi: %zu floats exceed MPI's int count", max_count);
  free(c->send);
  free(c->recv);
  c->send = malloc(max_count * sizeof(float));
  c->recv = malloc(max_count * sizeof(float));
  c->cap = max_count;
  if (!c->send || !c->recv) return err_set(e, ERR_NOMEM, "mpi: cannot allocate 2 x %zu floats", max_count);
  return ERR_OK;
}

static int m_fill(void *vc, size_t count, err_t *e) {
  (void)e;
  mpi_ctx *c = vc;
  for (size_t i = 0; i < count; i++) {
    c->send[i] = (float)(c->rank + 1) * (float)(1 + i % 7);
    c->recv[i] = -1.0f;
  }
  return ERR_OK;
}

static int m_allreduce(void *vc, size_t count, double *elapsed_s, err_t *e) {
  mpi_ctx *c = vc;
  double t0 = MPI_Wtime();
  int rc = MPI_Allreduce(c->send, c->recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  *elapsed_s = MPI_Wtime() - t0;
  return rc == MPI_SUCCESS ? ERR_OK : mpi_fail(e, rc, "MPI_Allreduce");
}

static int m_check(void *vc, size_t count, long long *wrong, err_t *e) {
  mpi_ctx *c = vc;
  /* Small integers: every partial sum is exact in float, so equality is the right test. */
  float ranks = (float)c->size * (float)(c->size + 1) / 2.0f;
  long long w = 0;
  for (size_t i = 0; i < count; i++)
    if (c->recv[i] != ranks * (float)(1 + i % 7)) w++;
  int rc = MPI_Allreduce(&w, wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return rc == MPI_SUCCESS ? ERR_OK : mpi_fail(e, rc, "MPI_Allreduce (check)");
}

static int m_reduce_max(void *vc, double *v, size_t n, err_t *e) {
  (void)vc;
  int rc = MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return rc == MPI_SUCCESS ? ERR_OK : mpi_fail(e, rc, "MPI_Allreduce (max)");
}

int comm_mpi_hosts(char *hosts, size_t len, int *nhosts, err_t *e) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  int nlen = 0;
  MPI_Get_processor_name(name, &nlen);
  char *all = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
  if (!all) return err_set(e, ERR_NOMEM, "mpi: out of memory");
  int rc = MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                         MPI_CHAR, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) {
    free(all);
    return mpi_fail(e, rc, "MPI_Allgather");
  }
  hosts[0] = '\0';
  *nhosts = 0;
  for (int r = 0; r < size; r++) {
    const char *h = all + (size_t)r * MPI_MAX_PROCESSOR_NAME;
    int seen = 0;
    for (int q = 0; q < r && !seen; q++) seen = strcmp(h, all + (size_t)q * MPI_MAX_PROCESSOR_NAME) == 0;
    if (seen) continue;
    size_t used = strlen(hosts);
    snprintf(hosts + used, len - used, "%s%s", *nhosts ? "," : "", h);
    (*nhosts)++;
  }
  free(all);
  return ERR_OK;
}

int comm_mpi_open(commbench_backend *b, err_t *e) {
  memset(b, 0, sizeof *b);
  mpi_ctx *c = calloc(1, sizeof *c);
  if (!c) return err_set(e, ERR_NOMEM, "mpi: out of memory");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c->size);

  int rc = comm_mpi_hosts(b->hosts, sizeof b->hosts, &b->nhosts, e);
  if (rc) {
    free(c);
    return rc;
  }
  int len = 0;
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  MPI_Get_library_version(lib, &len);
  lib[strcspn(lib, ",\n")] = '\0'; /* "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4" */
  snprintf(b->library, sizeof b->library, "%.100s", lib);
  snprintf(b->devices, sizeof b->devices, "cpu (one rank per process)");
  b->name = "mpi";
  b->nranks = c->size;
  b->is_root = c->rank == 0;
  b->ctx = c;
  b->alloc = m_alloc;
  b->fill = m_fill;
  b->allreduce = m_allreduce;
  b->check = m_check;
  b->reduce_max = m_reduce_max;
  return ERR_OK;
}

void comm_mpi_close(commbench_backend *b) {
  if (!b || !b->ctx) return;
  mpi_ctx *c = b->ctx;
  free(c->send);
  free(c->recv);
  free(c);
  b->ctx = NULL;
}
