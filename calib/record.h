/* record: puts measurements and their fits into a profile tree (profilew.h), in the layout of
 * docs/profile.md plus the additions listed in docs/calib.md. */
#ifndef DDPCALIB_RECORD_H
#define DDPCALIB_RECORD_H

#include <cjson/cJSON.h>

#include "err.h"
#include "commbench.h"
#include "fit.h"

/* Writes comm.links.<link_class> (lat_s, bw_Bps, source, and the fit with its regimes and
 * residuals) and samples.comm.<link_class> (every size with its per-iteration times). The profile's
 * bw_Bps is one link's: the fitted ring bandwidth divided by link_units, the links the measured
 * ring spans (>= 1; units_from says where that number comes from, e.g. "topology dgx1v-ib, 8 GPUs
 * per host", and is recorded with ring_bw_Bps; NULL when it is 1 by default). Also the measured
 * uncertainty of bw_Bps and lat_s (uncertainty."comm.links.<class>.bw_Bps", docs/profile.md): the
 * rms residual of the regime each comes from and the spread of its timed iterations. */
int record_comm(cJSON *doc, const char *link_class, const commbench_backend *b,
                const commbench_cfg *cfg, const commbench_result *res, const fit_ring_result *fit,
                double link_units, const char *units_from, err_t *e);

#include "nccltune.h"

/* Writes what nccltune_fit found (docs/calib.md): comm.nccl.<algo>.<proto> for every enabled
 * combination ({base_lat_s, bw_factor} and the fit's details; a refused one is left out, which
 * ddpsim reads as disabled) with comm.nccl.source naming the ranks and nodes measured;
 * comm.links.<link_class>.hop_lat_s for all six combinations, the latencies the fit assumed for
 * this class's hops (between nodes when s->nodes > 1, inside a node otherwise) with hops_source as
 * its source; and, when res and cfg are not NULL, samples.nccl.<link_class> with each enabled
 * combination's sweep (res[a][q]). comm.links.<link_class> must exist already (record_comm first).
 * Replaces whatever comm.nccl the tree had. */
int record_nccl(cJSON *doc, const char *link_class, const char *hops_source, const nccltune_setup *s,
                const nccltune_result *r, const commbench_cfg *cfg,
                const commbench_result res[NCCL_NALGO][NCCL_NPROTO], err_t *e);

#include "computebench.h"

/* What record_compute fitted, for the front end to print. */
typedef struct {
  fit_roofline gemm, ewise;
  size_t gemm_points, ewise_points;       /* distinct shapes / sizes in the tables */
  double gemm_loo_rms, gemm_loo_max;      /* leave-one-out error of the table inside its range */
  double ewise_loo_rms, ewise_loo_max;
  size_t jitter_ratios;                   /* compute.jitter.ratios written (0: none) */
  char jitter_left_out[512];              /* why the timed iterations gave no compute.jitter ("": it
                                             has one, or no shape was timed twice) */
} record_compute_fit;

/* Fits and writes compute.<precision>.gemm and .ewise ("model": "table" with the measured points
 * (median time per shape; shapes measured twice are averaged) and a fitted roofline fallback)
 * and samples.compute.<precision> (every measurement with its per-iteration times). compute.jitter
 * gets every timed whole mLSTM iteration over its shape's mean, unless one of those ratios is
 * outside PROFILE_JITTER_RATIO_MIN .. _MAX (a run the machine disturbed, mostly on tiny shapes):
 * then the profile has no compute.jitter and fit->jitter_left_out says why, for the front end to
 * warn; the times stay in samples. The profile's "device" is replaced by res->dev (name,
 * memory_bytes, sm_count, hbm_Bps where known, and source: docs/calib.md, "The device"). */
int record_compute(cJSON *doc, const computebench_cfg *cfg, const computebench_result *res,
                   record_compute_fit *fit, err_t *e);
#endif
