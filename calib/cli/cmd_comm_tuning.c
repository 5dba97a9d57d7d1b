/* cmd_comm_tuning: `ddpcalib comm --backend nccl --nccl-tuning`, the front end of calib/ncclsweep.h:
 * each combination's table as it is swept, the fits, the profile. Built only with CUDA.
 * docs/calib.md, "NCCL's algorithms and protocols". */
#include <mpi.h>
#include <stdio.h>

#include "calcmd.h"
#include "ncclsweep.h"
#include "record.h"

static void on_refused(int a, int q, const char *why, void *arg) {
  (void)arg;
  printf("# NCCL_ALGO=%s NCCL_PROTO=%s: refused by NCCL (%s): comm.nccl.%s.%s disabled\n#\n", nccl_algo_env(a),
         nccl_proto_name(q), why, nccl_algo_name(a), nccl_proto_name(q));
}

static void on_opened(const commbench_backend *b, const char *link_class, void *arg) {
  const commbench_cfg *cfg = arg;
  printf("# ddpcalib comm --nccl-tuning: backend %s (%s), %d ranks on %d host(s): %s\n"
         "# link class %s; %d warm-up + %d timed iterations per size; time = mean per iteration, "
         "max over ranks\n#\n",
         b->name, b->library, b->nranks, b->nhosts, b->hosts, link_class, cfg->warmups, cfg->iters);
}

static void on_start(int a, int q, void *arg) {
  (void)arg;
  char hdr[512];
  commbench_format_header(hdr, sizeof hdr);
  printf("# NCCL_ALGO=%s NCCL_PROTO=%s (comm.nccl.%s.%s)\n%s\n", nccl_algo_env(a), nccl_proto_name(q),
         nccl_algo_name(a), nccl_proto_name(q), hdr);
  fflush(stdout);
}

static void on_row(const commbench_row *row, void *arg) {
  (void)arg;
  const commbench_backend root = {.is_root = 1};
  calcmd_print_row(row, (void *)&root);
}

static void on_done(int a, int q, const commbench_result *res, void *arg) {
  (void)a, (void)q, (void)arg;
  char foot[256];
  commbench_format_footer(res, foot, sizeof foot);
  printf("%s\n#\n", foot);
}

static void print_tuning(const ncclsweep_fit *f) {
  printf("# fit comm.nccl (t = c0 + c1 S per combination; hops assumed from NCCL tuning.cc hwLat: %s inside a "
         "host, network between hosts; bw %.4g B/s from ring/Simple):\n",
         nccl_hw_name(f->intra), f->setup.bw_Bps);
  for (int a = 0; a < NCCL_NALGO; a++)
    for (int q = 0; q < NCCL_NPROTO; q++) {
      if (!nccl_algo_swept(a, q)) continue;
      const nccltune_combo *cb = &f->tune.c[a][q];
      if (!cb->enabled) {
        printf("#   %s/%-6s disabled (refused by NCCL)\n", nccl_algo_name(a), nccl_proto_name(q));
        continue;
      }
      printf("#   %s/%-6s c0 %9.3f us, hops %9.3f us -> base_lat_s %.4g%s; bw_factor %.4g%s; residual rms %.1f%% "
             "max %.1f%%\n",
             nccl_algo_name(a), nccl_proto_name(q), cb->c0_s * 1e6, cb->hops_s * 1e6, cb->base_lat_s,
             cb->base_clamped ? " (clamped: fit below 0)" : "", cb->bw_factor,
             cb->bw_clamped ? " (clamped: fit above 1)" : "", cb->rms_rel * 100, cb->max_rel * 100);
    }
}

int cmd_comm_tuning(cli_ctx *x, const commbench_cfg *cfg, int ngpus, const char *link_class, const char *topology,
                    const char *output, int regimes, int accept_poor) {
  ncclsweep_hooks h = {on_refused, on_opened, on_start, on_row, on_done, (void *)cfg};
  ncclsweep_result r;
  ncclsweep_fit f;
  err_t e = {{0}};
  cJSON *doc = NULL;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int rc = ncclsweep_run(cfg, ngpus, topology, link_class, &h, &r, &e);
  if (rc || rank != 0) goto done;
  rc = ncclsweep_fit_all(&r, (size_t)regimes, &f, &e);
  if (f.ring.nregimes) {
    calcmd_print_ring_fit(r.link_class, &f.ring);
    calcmd_print_span(&r.span, r.link_class, f.ring.bw_Bps);
  }
  if (rc) goto done;
  print_tuning(&f);
  char what[128], why[512];
  int keepable, poor = fit_ring_poor(&f.ring, why, sizeof why, &keepable);
  snprintf(what, sizeof what, "comm.links.%s", r.link_class);
  if (poor && (rc = calcmd_gate(what, why, keepable, accept_poor, &e))) goto done;
  if (output) {
    profilew_prov p = calcmd_prov("comm");
    p.devices = r.info.devices, p.hosts = r.info.hosts, p.libraries = r.info.library;
    doc = profilew_new("measured", &p);
    if (!doc) rc = err_set(&e, ERR_NOMEM, "out of memory");
    const commbench_result *ring = &r.res[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE];
    if (!rc)
      rc = record_comm(doc, r.link_class, &r.info, cfg, ring, &f.ring, r.span.units,
                       r.span.from[0] ? r.span.from : NULL, &e);
    if (!rc)
      rc = record_nccl(doc, r.link_class, f.hops_source, &f.setup, &f.tune, cfg,
                       (const commbench_result(*)[NCCL_NPROTO])r.res, &e);
    if (!rc && poor) rc = calcmd_mark_poor(doc, what, why, &e);
    if (!rc) rc = calcmd_write(doc, output, &e);
  }
done:
  fflush(stdout);
  cJSON_Delete(doc);
  ncclsweep_result_free(&r);
  return calcmd_status(x, rc, &e);
}
