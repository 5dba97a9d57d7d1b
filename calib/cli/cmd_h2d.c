/* cmd_h2d: `ddpcalib h2d`, host-to-device copy bandwidth (calib/gpucopy.h) per mode, fitted as
 * latency + bytes / bandwidth and written as h2d.<mode>. CUDA only. docs/calib.md, "h2d". */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calcmd.h"
#include "fit.h"
#include "gpucopy.h"

static const char *usage =
    "usage: ddpcalib h2d --backend cuda [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUPS]\n"
    "                    [-o PROFILE]\n"
    "\n"
    "Host-to-device copy bandwidth with cudaMemcpy (pageable and pinned host memory, synchronous)\n"
    "and cudaMemcpyAsync (pinned, on a stream), timed with CUDA events; fits latency and bandwidth\n"
    "of each and writes them under h2d.<mode>. CUDA only: --backend cpu is a usage error.\n"
    "\n";

static const char *const backends[] = {"cpu", "cuda", NULL};

/* One mode's sweep: rows printed, samples into arr, medians into med[0..n); t holds 2 iters (the
 * times, then them sorted). */
static int sweep_mode(int mode, size_t minb, double factor, size_t n, int warmups, int iters, double *bytes,
                      double *med, double *t, cJSON *arr, err_t *e) {
  double s = (double)minb;
  for (size_t k = 0; k < n; s *= factor, k++) {
    bytes[k] = (double)(size_t)s;
    int rc = gpucopy_time(mode, (size_t)s, warmups, iters, t, e);
    if (rc) return rc;
    memcpy(t + iters, t, (size_t)iters * sizeof *t);
    gsl_sort(t + iters, 1, (size_t)iters);
    med[k] = gsl_stats_median_from_sorted_data(t + iters, 1, (size_t)iters);
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o) || !cJSON_AddNumberToObject(o, "bytes", bytes[k]) ||
        !cJSON_AddNumberToObject(o, "median_s", med[k]) ||
        !cJSON_AddItemToObject(o, "times_s", cJSON_CreateDoubleArray(t, iters)))
      return err_set(e, ERR_NOMEM, "out of memory");
    printf("  %-14s %12.0f %12.2f %10.2f\n", gpucopy_mode_name(mode), bytes[k], med[k] * 1e6, bytes[k] / med[k] / 1e9);
  }
  return ERR_OK;
}

/* The line through one mode's medians, printed and written under h2d.<mode>. */
static int fit_mode(int mode, const double *bytes, const double *med, size_t n, cJSON *h2d, err_t *e) {
  fit_line l;
  int rc = fit_line_rel(bytes, med, n, &l, e);
  cJSON *m = rc ? NULL : profilew_obj(h2d, gpucopy_mode_name(mode));
  if (!rc && !m) rc = err_set(e, ERR_NOMEM, "out of memory");
  if (rc || (rc = profilew_num(m, "lat_s", l.c0 > 0 ? l.c0 : 0, e)) ||
      (rc = profilew_num(m, "bw_Bps", l.c1 > 0 ? 1.0 / l.c1 : 0, e)) ||
      (rc = profilew_num(m, "rms_rel_resid", l.rms_rel, e)) || (rc = profilew_num(m, "max_rel_resid", l.max_rel, e)))
    return rc;
  printf("# fit %s: lat %.2f us, bw %.2f GB/s, residual rms %.1f%% max %.1f%%\n", gpucopy_mode_name(mode),
         l.c0 * 1e6, l.c1 > 0 ? 1e-9 / l.c1 : 0, l.rms_rel * 100, l.max_rel * 100);
  return ERR_OK;
}

int cmd_h2d(cli_ctx *x, int argc, char **argv) {
  size_t minb = 4096, maxb = 64u << 20;
  double factor = 4;
  int iters = 10, warmups = 2, backend = -1;
  const char *output = NULL;
  const cli_opt opts[] = {
      {"backend", 0, CLI_ENUM, &backend, "cuda", "the only backend with a host-device copy", .names = backends,
       .must = "must be cuda"},
      {"minbytes", 'b', CLI_CUSTOM, &minb, "MIN", "smallest size, as in comm (default 4K)", .parse = calcmd_bytes,
       .must = "(-b) " CALCMD_BYTES_MUST},
      {"maxbytes", 'e', CLI_CUSTOM, &maxb, "MAX", "largest size (default 64M)", .parse = calcmd_bytes,
       .must = "(-e) " CALCMD_BYTES_MUST},
      {"stepfactor", 'f', CLI_DOUBLE, &factor, "F", "size factor between steps, > 1 (default 4)", CLI_MIN_OPEN, 1,
       .must = "(-f) must be a number > 1"},
      {"iters", 'n', CLI_INT, &iters, "N", "timed copies per size (default 10)", CLI_MIN | CLI_MAX, 1,
       CALCMD_MAX_ITERS, .must = "(-n) must be an integer from 1 to 1000000"},
      {"warmup_iters", 'w', CLI_INT, &warmups, "W", "untimed copies per size (default 2)", CLI_MIN | CLI_MAX, 0,
       CALCMD_MAX_ITERS, .must = "(-w) must be an integer from 0 to 1000000"},
      {"output", 'o', CLI_STRING, &output, "FILE", "profile to write (atomically)"},
      {0}};
  const cli_opt *tables[] = {opts, NULL};
  const cli_cmd c = {.usage = usage, .tables = tables};
  int rc = cli_parse(x, &c, argc, argv, NULL, NULL, stdout);
  if (rc) return rc;
  if (backend < 0) return cli_usage(x, "--backend cuda is required");
  if (backend == 0) return cli_usage(x, "--backend cpu: a host-to-device copy needs a GPU; use --backend cuda");
  if (maxb < minb) return cli_usage(x, "--maxbytes (-e): max size is below min size");
  if ((rc = calcmd_check_output(x, output))) return rc;

  devinfo dev;
  char ver[128];
  err_t e = {{0}};
  if ((rc = gpucopy_probe(&dev, ver, sizeof ver, &e))) return calcmd_status(x, rc, &e);
  size_t nsizes = 0;
  for (double s = (double)minb; s <= (double)maxb; s *= factor) nsizes++;
  double *bytes = calloc(nsizes, sizeof *bytes), *med = calloc(nsizes, sizeof *med);
  double *t = calloc(2 * (size_t)iters, sizeof *t);
  profilew_prov p = calcmd_prov("h2d");
  p.devices = dev.name, p.libraries = ver, p.driver = ver;
  cJSON *doc = profilew_new("measured", &p);
  cJSON *h2d = doc ? profilew_obj(doc, "h2d") : NULL;
  cJSON *samples = doc ? profilew_obj(profilew_obj(doc, "samples"), "h2d") : NULL;
  if (!bytes || !med || !t || !h2d || !samples) rc = err_set(&e, ERR_NOMEM, "out of memory");
  else {
    printf("# ddpcalib h2d: %s, %s; median of %d timed copies (CUDA events)\n", dev.name, ver, iters);
    printf("# %-14s %12s %12s %10s\n", "mode", "size(B)", "median(us)", "GB/s");
  }
  for (int mode = GPUCOPY_H2D_PAGEABLE; mode < GPUCOPY_NMODES && !rc; mode++) {
    cJSON *sm = profilew_obj(samples, gpucopy_mode_name(mode)), *arr = cJSON_AddArrayToObject(sm, "sizes");
    if (!arr) rc = err_set(&e, ERR_NOMEM, "out of memory");
    if (!rc) rc = sweep_mode(mode, minb, factor, nsizes, warmups, iters, bytes, med, t, arr, &e);
    if (!rc && nsizes >= 2) rc = fit_mode(mode, bytes, med, nsizes, h2d, &e);
  }
  if (!rc && output) rc = calcmd_write(doc, output, &e);
  free(bytes), free(med), free(t);
  cJSON_Delete(doc);
  return calcmd_status(x, rc, &e);
}
