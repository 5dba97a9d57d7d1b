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

#endif
