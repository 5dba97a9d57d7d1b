/* calcmd: what ddpcalib's commands share (calcmd.h). */
#define _POSIX_C_SOURCE 200809L
#include "calcmd.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "parse.h"

static int g_argc;
static char **g_argv;

int calcmd_quiet(void) {
  const char *r = getenv("OMPI_COMM_WORLD_RANK");
  if (!r) r = getenv("PMI_RANK");
  return r && strcmp(r, "0") != 0;
}

int calcmd_check_output(cli_ctx *x, const char *path) {
  err_t e;
  if (!path || calcmd_quiet()) return CLI_OK;
  int rc = afile_check(path, &e);
  return rc ? cli_fail(x, rc, "%s", e.msg) : CLI_OK;
}

int calcmd_not_input(cli_ctx *x, const char *out_flag, const char *out, const char *const *in_flags, const char *const *in, int n) {
  err_t e;
  if (!out || calcmd_quiet()) return CLI_OK;
  int rc = afile_not_input(out_flag, out, in_flags, in, n, &e);
  return rc ? cli_fail(x, rc, "%s", e.msg) : CLI_OK;
}

void calcmd_set_line(int argc, char **argv) {
  g_argc = argc;
  g_argv = argv;
}

profilew_prov calcmd_prov(const char *subcommand) {
  return (profilew_prov){.subcommand = subcommand, .argc = g_argc, .argv = g_argv};
}

int calcmd_status(cli_ctx *x, int rc, const err_t *e) {
  if (rc == ERR_OK) return CLI_OK;
  return rc == ERR_USAGE ? cli_usage(x, "%s", e->msg) : cli_fail(x, rc, "%s", e->msg);
}

int calcmd_mpi_init(cli_ctx *x, int *argc, char ***argv) {
  return MPI_Init(argc, argv) == MPI_SUCCESS ? CLI_OK : cli_fail(x, ERR_RUNTIME, "MPI_Init failed");
}

int calcmd_bytes(const char *text, void *dest) {
  err_t e;
  return parse_bytes(text, "", (size_t *)dest, &e) ? -1 : 0;
}

void calcmd_print_row(const commbench_row *row, void *arg) {
  const commbench_backend *b = arg;
  if (!b->is_root) return;
  char line[256];
  commbench_format_row(row, line, sizeof line);
  printf("%s\n", line);
  fflush(stdout);
}

void calcmd_print_ring_fit(const char *link_class, const fit_ring_result *fit) {
  printf("# fit (ring model on median times, %zu regime(s)):\n", fit->nregimes);
  for (size_t i = 0; i < fit->nregimes; i++) {
    const fit_regime *g = &fit->regime[i];
    /* A negative intercept is the line's, not a latency: said so, never printed as one. */
    printf("#   %10.0f .. %10.0f B: %s %.3f us/hop%s, bw %.3f GB/s/link, residual rms %.1f%% max %.1f%%\n",
           g->min_bytes, g->max_bytes, g->lat_s < 0 ? "intercept" : "lat", g->lat_s * 1e6,
           g->lat_s < 0 ? " (below 0: not a latency)" : "", g->bw_Bps / 1e9, g->rms_rel * 100, g->max_rel * 100);
  }
  printf("# comm.links.%s: lat_s %.4g, bw_Bps %.4g (residual over the sweep: rms %.1f%%, max %.1f%%)\n",
         link_class, fit->lat_s, fit->bw_Bps, fit->rms_rel * 100, fit->max_rel * 100);
}

void calcmd_print_span(const commfit_span *sp, const char *link_class, double ring_bw_Bps) {
  if (sp->from[0])
    printf("# the ring spans %g %s link(s) (%s): bw_Bps per link %.4g\n", sp->units, link_class, sp->from,
           ring_bw_Bps / sp->units);
}

int calcmd_gate(const char *what, const char *why, int keepable, int accept_poor, err_t *e) {
  if (!keepable)
    return err_set(e, ERR_RUNTIME,
                   "%s: the fit is not physical: %s; ddpsim's loader could not read it, so nothing is written "
                   "(measure again: more iterations, a quieter machine, another size range)", what, why);
  if (!accept_poor)
    return err_set(e, ERR_RUNTIME,
                   "%s: poor fit: %s; nothing written (measure again, or keep it with --accept-poor-fit: the "
                   "profile then carries a warning that ddpsim reports)", what, why);
  printf("# warning: %s: poor fit kept (--accept-poor-fit): %s\n", what, why);
  return ERR_OK;
}

int calcmd_gate_compute(cJSON *doc, const char *prec, const record_compute_fit *fit, int accept_poor, err_t *e) {
  /* The tables are the measured points themselves: only the fallbacks are fitted. */
  for (int k = 0; k < 2; k++) {
    char what[64], why[512];
    int keepable, rc;
    snprintf(what, sizeof what, "compute.%s.%s", prec, k == 0 ? "gemm" : "ewise");
    if (!fit_roofline_poor(k == 0 ? &fit->gemm : &fit->ewise, k == 0, why, sizeof why, &keepable)) continue;
    if ((rc = calcmd_gate(what, why, keepable, accept_poor, e)) || (rc = calcmd_mark_poor(doc, what, why, e))) return rc;
  }
  return ERR_OK;
}

int calcmd_write(cJSON *doc, const char *output, err_t *e) {
  int rc = profilew_write(doc, output, e);
  if (!rc) printf("# wrote %s\n", output);
  return rc;
}

int calcmd_mark_poor(cJSON *doc, const char *what, const char *why, err_t *e) {
  char path[256], note[640];
  snprintf(path, sizeof path, "%s", what);
  cJSON *o = doc;
  for (char *save = NULL, *k = strtok_r(path, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
    o = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!cJSON_IsObject(o)) return err_set(e, ERR_RUNTIME, "internal: %s is not in the profile to mark it", what);
  snprintf(note, sizeof note, "poor fit kept by --accept-poor-fit: %s", why);
  return profilew_str(o, "warning", note, e);
}
