/* record: puts measurements and their fits into a profile tree (profilew.h), in the layout of
 * docs/profile.md plus the additions listed in docs/calib.md. */
#ifndef DDPCALIB_RECORD_H
#define DDPCALIB_RECORD_H

#include <cjson/cJSON.h>

#include "cerr.h"
#include "commbench.h"
#include "fit.h"

/* Writes comm.links.<link_class> (lat_s, bw_Bps, source, and the fit with its regimes and
 * residuals) and samples.comm.<link_class> (every size with its per-iteration times). */
int record_comm(cJSON *doc, const char *link_class, const commbench_backend *b,
                const commbench_cfg *cfg, const commbench_result *res, const fit_ring_result *fit,
                cerr *e);



#include "computebench.h"

/* What record_compute fitted, for the front end to print. */
typedef struct {
  fit_roofline gemm, ewise;
  size_t gemm_points, ewise_points;       /* distinct shapes / sizes in the tables */
  double gemm_loo_rms, gemm_loo_max;      /* leave-one-out error of the table inside its range */
  double ewise_loo_rms, ewise_loo_max;
} record_compute_fit;

/* Fits and writes compute.<precision>.gemm and .ewise ("model": "table" with the measured points
 * (median time per shape; shapes measured twice are averaged) and a fitted roofline fallback)
 * and samples.compute.<precision> (every measurement with its per-iteration times). */
int record_compute(cJSON *doc, const computebench_cfg *cfg, const computebench_result *res,
                   record_compute_fit *fit, cerr *e);
#endif
