/* commfit: the ring fit of a comm sweep and the link it measured (commfit.h). */
#include "commfit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channels.h"
#include "data.h"
#include "topo.h"

int commfit_points(const commbench_result *res, double **bytes, double **t, err_t *e) {
  *bytes = malloc(res->nrows * sizeof **bytes);
  *t = malloc(res->nrows * sizeof **t);
  if (!*bytes || !*t) {
    free(*bytes), free(*t);
    *bytes = *t = NULL;
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < res->nrows; i++) {
    (*bytes)[i] = (double)res->rows[i].bytes;
    (*t)[i] = res->rows[i].median_s;
  }
  return ERR_OK;
}

int commfit_ring(const commbench_result *res, int nranks, size_t regimes, fit_ring_result *fit, err_t *e) {
  double *bytes, *t;
  int rc = commfit_points(res, &bytes, &t, e);
  if (rc) return rc;
  fit_ring_opts fo = fit_ring_defaults();
  fo.max_regimes = regimes;
  rc = fit_ring(bytes, t, res->nrows, nranks, &fo, fit, e);
  free(bytes);
  free(t);
  return rc;
}

int commfit_span_of(const char *topology, int nranks, int nhosts, commfit_span *sp, err_t *e) {
  memset(sp, 0, sizeof *sp);
  sp->units = 1;
  if (!topology) return ERR_OK;
  char path[1024];
  err_t se;
  topo_t *t = NULL;
  if (nranks % nhosts) return err_set(e, ERR_RUNTIME, "%d ranks on %d hosts are not the same number per host", nranks, nhosts);
  int G = nranks / nhosts;
  if (data_resolve(DATA_TOPOLOGY, topology, path, sizeof path, &se) || topo_load(path, &t, &se))
    return err_set(e, ERR_USAGE, "--topology: %s", se.msg);
  if (channels_link_units(t, G, nhosts, &sp->units, &se)) {
    topo_destroy(t);
    return err_set(e, ERR_USAGE, "--topology: %s", se.msg);
  }
  snprintf(sp->cls, sizeof sp->cls, "%s", nhosts > 1 ? t->nic_class : t->intra_class);
  snprintf(sp->from, sizeof sp->from, "topology %s, %d GPU(s) per host on %d host(s)", t->name, G, nhosts);
  topo_destroy(t);
  return ERR_OK;
}

int commfit_link_class(const commfit_span *sp, const char **link_class, int nhosts, int nccl, err_t *e) {
  if (sp->cls[0] && *link_class && strcmp(*link_class, sp->cls) != 0)
    return err_set(e, ERR_USAGE, "--link-class %s, but the measured ring's links are the topology's '%s' (%s)",
                   *link_class, sp->cls, sp->from);
  if (!*link_class) *link_class = sp->cls[0] ? sp->cls : nhosts > 1 ? "net" : nccl ? "nvlink" : "shm";
  return ERR_OK;
}
