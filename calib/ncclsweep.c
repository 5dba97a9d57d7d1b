/* ncclsweep: every NCCL algorithm x protocol swept and fitted (ncclsweep.h). */
#define _GNU_SOURCE
#include "ncclsweep.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_nccl.h"

/* Every process agrees on the worst of its `mine` (0 ok, 1 refused, 2 failed). */
static int agree(int mine) {
  int worst = mine;
  if (MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) return 2;
  return worst;
}

/* One combination: NCCL_ALGO and NCCL_PROTO set, fresh communicators (NCCL reads both when a
 * communicator is created, in tuning.cc, so they cannot change under an open one), one probe
 * all-reduce of a single float. A runtime error at the open or at the probe, on any process, is
 * NCCL refusing the combination: *refused is set, `why` says why, and the status is ERR_OK. No
 * device, a bad -g or no memory stay failures. On success the backend is left open in *b. */
static int tuning_open(int ngpus, int a, int q, commbench_backend *b, int *refused, char *why, size_t why_len,
                       err_t *e) {
  *refused = 0;
  setenv("NCCL_ALGO", nccl_algo_env(a), 1);
  setenv("NCCL_PROTO", nccl_proto_name(q), 1);
  int rc = comm_nccl_open(b, ngpus, e);
  int worst = agree(rc == ERR_OK ? 0 : rc == ERR_RUNTIME ? 1 : 2);
  if (worst == 0) {
    double dt;
    rc = b->alloc(b->ctx, 1, e);
    if (!rc) rc = b->fill(b->ctx, 1, e);
    int mine = rc ? 2 : 0;
    if (!rc && (rc = b->allreduce(b->ctx, 1, &dt, e))) mine = 1;
    worst = agree(mine);
  }
  if (worst == 0) return ERR_OK;
  if (worst == 2) {
    comm_nccl_close(b);
    return rc ? rc : err_set(e, ERR_RUNTIME, "nccl: another process failed to open NCCL");
  }
  snprintf(why, why_len, "%s", rc ? e->msg : "refused on another process");
  comm_nccl_close(b);
  *refused = 1;
  return ERR_OK;
}

/* commbench's row callback, on rank 0 only. */
typedef struct {
  const ncclsweep_hooks *h;
  int root;
} row_arg;

static void on_row(const commbench_row *row, void *arg) {
  const row_arg *r = arg;
  if (r->root && r->h->row) r->h->row(row, r->h->arg);
}

/* Sweeps combination (a, q) into out; the first (ring/Simple) also settles the link class. */
static int sweep_one(const commbench_cfg *cfg, int ngpus, int a, int q, int first, const char *topology,
                     const ncclsweep_hooks *h, int root, ncclsweep_result *out, err_t *e) {
  int refused, rc;
  char why[sizeof e->msg];
  commbench_backend b;
  if ((rc = tuning_open(ngpus, a, q, &b, &refused, why, sizeof why, e))) return rc;
  if (refused) {
    if (first) return err_set(e, ERR_RUNTIME, "nccl: ring/Simple was refused (%s); it gives the link's bandwidth", why);
    out->refused[a][q] = 1;
    if (root && h->refused) h->refused(a, q, why, h->arg);
    return ERR_OK;
  }
  if (first) {
    out->info = b;
    out->info.ctx = NULL;
    if ((rc = commfit_span_of(topology, b.nranks, b.nhosts, &out->span, e)) ||
        (rc = commfit_link_class(&out->span, &out->link_class, b.nhosts, 1, e))) {
      comm_nccl_close(&b);
      return rc;
    }
    if (root && h->opened) h->opened(&b, out->link_class, h->arg);
  }
  if (root && h->start) h->start(a, q, h->arg);
  row_arg ra = {h, root};
  rc = commbench_run(cfg, &b, on_row, &ra, &out->res[a][q], e);
  comm_nccl_close(&b);
  if (rc) return rc;
  if (root && h->done) h->done(a, q, &out->res[a][q], h->arg);
  if (out->res[a][q].wrong > 0)
    return err_set(e, ERR_RUNTIME, "comm: %s/%s: %lld wrong elements in the all-reduce results", nccl_algo_name(a),
                   nccl_proto_name(q), out->res[a][q].wrong);
  return ERR_OK;
}

int ncclsweep_run(const commbench_cfg *cfg, int ngpus, const char *topology, const char *link_class,
                  const ncclsweep_hooks *h, ncclsweep_result *out, err_t *e) {
  /* Every combination that runs an all-reduce, each algorithm's Simple first; ring/Simple first of
   * all: it is the one that must work (the link's bandwidth comes from it). */
  static const int protos[NCCL_NPROTO] = {NCCL_PROTO_SIMPLE, NCCL_PROTO_LL, NCCL_PROTO_LL128};
  static const char *env_names[2] = {"NCCL_ALGO", "NCCL_PROTO"};
  memset(out, 0, sizeof *out);
  out->link_class = link_class;
  char *saved[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++)
    if (getenv(env_names[i])) saved[i] = strdup(getenv(env_names[i]));
  int rank = 0, rc = ERR_OK;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int a = 0; a < NCCL_NALGO && !rc; a++)
    for (int k = 0; k < NCCL_NPROTO && !rc; k++)
      if (nccl_algo_swept((nccl_algo)a, (nccl_proto)protos[k]))
        rc = sweep_one(cfg, ngpus, a, protos[k], a == NCCL_ALGO_RING && k == 0, topology, h, rank == 0, out, e);
  for (int i = 0; i < 2; i++) {
    if (saved[i]) setenv(env_names[i], saved[i], 1);
    else unsetenv(env_names[i]);
    free(saved[i]);
  }
  return rc;
}

void ncclsweep_result_free(ncclsweep_result *r) {
  if (!r) return;
  for (int a = 0; a < NCCL_NALGO; a++)
    for (int q = 0; q < NCCL_NPROTO; q++) commbench_result_free(&r->res[a][q]);
}

int ncclsweep_fit_all(const ncclsweep_result *r, size_t regimes, ncclsweep_fit *f, err_t *e) {
  const commbench_backend *info = &r->info;
  memset(f, 0, sizeof *f);
  int rc = commfit_ring(&r->res[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], info->nranks, regimes, &f->ring, e);
  if (rc) return rc;
  if (info->nranks % info->nhosts)
    return err_set(e, ERR_RUNTIME, "nccl: %d ranks on %d hosts are not the same number per host", info->nranks,
                   info->nhosts);
  f->setup = (nccltune_setup){.nranks = info->nranks, .nodes = info->nhosts,
                              .gpus_per_node = info->nranks / info->nhosts, .bw_Bps = f->ring.bw_Bps};
  f->intra = strncmp(r->link_class, "pci", 3) == 0 ? NCCL_HW_PCI : NCCL_HW_NVLINK;
  nccl_hw_hops(f->intra, f->setup.hop_intra_s);
  nccl_hw_hops(NCCL_HW_NET, f->setup.hop_net_s);
  nccltune_sweep sweep[NCCL_NALGO][NCCL_NPROTO];
  double *bytes[NCCL_NALGO][NCCL_NPROTO], *t[NCCL_NALGO][NCCL_NPROTO];
  memset(sweep, 0, sizeof sweep);
  memset(bytes, 0, sizeof bytes);
  memset(t, 0, sizeof t);
  for (int a = 0; a < NCCL_NALGO && !rc; a++)
    for (int q = 0; q < NCCL_NPROTO && !rc; q++) {
      sweep[a][q].refused = r->refused[a][q];
      if (!nccl_algo_swept((nccl_algo)a, (nccl_proto)q) || r->refused[a][q] || (rc = commfit_points(&r->res[a][q], &bytes[a][q], &t[a][q], e))) continue;
      sweep[a][q].bytes = bytes[a][q];
      sweep[a][q].time_s = t[a][q];
      sweep[a][q].n = r->res[a][q].nrows;
    }
  fit_ring_opts fo = fit_ring_defaults();
  fo.max_regimes = regimes;
  if (!rc) rc = nccltune_fit(&f->setup, (const nccltune_sweep(*)[NCCL_NPROTO])sweep, &fo, &f->tune, e);
  snprintf(f->hops_source, sizeof f->hops_source,
           "assumed, not measured: NCCL src/graph/tuning.cc hwLat (%s) per algorithm and protocol; "
           "ddpcalib comm --nccl-tuning subtracted them from the measured latency to get comm.nccl base_lat_s",
           nccl_hw_name(f->setup.nodes > 1 ? NCCL_HW_NET : f->intra));
  for (int a = 0; a < NCCL_NALGO; a++)
    for (int q = 0; q < NCCL_NPROTO; q++) free(bytes[a][q]), free(t[a][q]);
  return rc;
}
