/* fit: the cost models ddpcalib fits to its measurements, with GSL.
 *
 * Derivations and validity ranges: docs/calib.md. All fits are weighted least squares with weight
 * 1/t^2 on each measured time t, i.e. they minimise the *relative* error, because measured sizes
 * and times span many decades and a plain fit would ignore everything but the largest sizes.
 * Residuals are reported as relative errors (model - measured) / measured.
 *
 * The caller owns every array; nothing here allocates except fit_ring's GSL-free search, which
 * needs no workspace. Every function returns ERR_OK or an ERR_* code (common/err.h) with a message in `e`. */
#ifndef DDPCALIB_FIT_H
#define DDPCALIB_FIT_H

#include <stddef.h>

#include "err.h"

/* ---- weighted straight line: y = c0 + c1 x, weights w_i = 1/y_i^2 ---- */
typedef struct {
  double c0, c1;           /* intercept, slope */
  double rms_rel, max_rel; /* relative residuals over the fitted points */
  double chisq;            /* weighted residual sum of squares */
} fit_line;

/* Fits points [0, n) (n >= 2, every y > 0, x not all equal). */
int fit_line_rel(const double *x, const double *y, size_t n, fit_line *out, err_t *e);

/* ---- ring all-reduce: t(S) = 2(n-1) (lat_s + S / (n bw_Bps)), per size regime ---- */
enum { FIT_MAX_REGIMES = 4 };

typedef struct {
  size_t first, count;     /* the points [first, first+count) of the sweep it covers */
  double min_bytes, max_bytes;
  double lat_s, bw_Bps;    /* per ring hop; lat_s may come out <= 0 when the sizes are large;
                            * bw_Bps is INFINITY in a latency-bound regime (time flat in size) */
  double rms_rel, max_rel; /* residuals of this regime's line over its own points */
} fit_regime;

typedef struct {
  int nranks;
  size_t nregimes;
  fit_regime regime[FIT_MAX_REGIMES]; /* ordered by size */
  /* The summary ddpsim reads as comm.links.<class>: latency of the smallest-size regime (or, when
   * that intercept is not positive, the smallest measured time / 2(n-1)), bandwidth of the
   * largest-size regime. */
  double lat_s, bw_Bps;
  double rms_rel, max_rel; /* residuals of the summary model over the whole sweep */
} fit_ring_result;

typedef struct {
  size_t max_regimes;  /* 1..FIT_MAX_REGIMES; 1 turns bend detection off */
  size_t min_points;   /* points per regime, >= 3 */
  double min_gain;     /* a split must cut the weighted residual sum by at least this fraction */
  double good_enough;  /* a regime whose rms relative residual is below this is not split */
} fit_ring_opts;

/* Defaults: 3 regimes, 3 points each, 50% gain, 1% good enough. */
fit_ring_opts fit_ring_defaults(void);

/* bytes[] strictly increasing, time_s[] > 0, n points, nranks >= 2. Bends are found by binary
 * segmentation: each regime is split at the breakpoint minimising the summed residuals of the two
 * lines, and the split is kept if it lowers the Bayesian information criterion and cuts the
 * residual sum by opts->min_gain. A regime whose time does not grow with size is fitted as a
 * constant (latency-bound, bw_Bps = INFINITY); fails (ERR_RUNTIME) when that is the largest-size
 * regime, which must give the bandwidth. */
int fit_ring(const double *bytes, const double *time_s, size_t n, int nranks,
             const fit_ring_opts *opts, fit_ring_result *out, err_t *e);

/* Time of one all-reduce of `bytes` over n ranks under the summary model. */
double fit_ring_time(const fit_ring_result *r, double bytes);

/* ---- roofline: time = launch_s + max(flops / rate_flops, bytes / mem_bw_Bps) ---- */
typedef struct {
  double launch_s;     /* >= 0 */
  double rate_flops;   /* fitted peak_flops * efficiency; 0 for ewise */
  double mem_bw_Bps;   /* fitted mem_bw_Bps * mem_efficiency */
  double rms_rel, max_rel;
  size_t compute_bound; /* how many gemm points the fit found compute-bound */
} fit_roofline;

double fit_roofline_time(const fit_roofline *r, double flops, double bytes);

/* Elementwise points: fits t = launch + bytes / bw (launch clamped at 0: refit through the origin
 * when the intercept comes out negative or below PROFILE_LAT_MIN_s). n >= 2. */
int fit_roofline_ewise(const double *bytes, const double *time_s, size_t n, fit_roofline *out,
                       err_t *e);

/* Gemm points, given the memory bandwidth fitted from the elementwise points of the same precision:
 * fits launch and rate on the points the current model calls compute-bound, reclassifies, and
 * repeats until the classification is stable (at most 20 rounds); launch clamped at 0 as for
 * ewise. n >= 2. */
int fit_roofline_gemm(const double *flops, const double *bytes, const double *time_s, size_t n,
                      double mem_bw_Bps, fit_roofline *out, err_t *e);

/* ---- quality gates (docs/calib.md, "Quality gates") ----
 * A fit is "poor" when a coefficient has no physical meaning (a regime's line giving a negative
 * time within its own sizes; a latency, bandwidth or rate outside the ranges ddpsim's loader
 * accepts, docs/profile.md) or when the model ddpsim will use misses the measured times by more
 * than FIT_MAX_RMS_REL rms (relative). Each check returns 0 (good) or 1 (poor) and then writes
 * why into `why` (a sentence naming the coefficient or the residual and the threshold), and sets
 * *keepable to 0 when the profile could not hold the fit at all (a value the loader refuses),
 * to 1 when only its quality is in question (ddpcalib's --accept-poor-fit may keep it, marked). */
#define FIT_MAX_RMS_REL 1.0

int fit_ring_poor(const fit_ring_result *r, char *why, size_t len, int *keepable);
int fit_roofline_poor(const fit_roofline *r, int gemm, char *why, size_t len, int *keepable);

/* ---- table: docs/profile.md's "model": "table", evaluated as ddpsim must ---- */
typedef struct {
  size_t n;          /* distinct sizes */
  double *size;      /* [n] increasing; caller-provided storage of capacity >= points */
  double *time_s;    /* [n] mean time of the points of that size */
} fit_table;

/* Builds the table from `npoints` (size, time) points in any order; points of equal size are
 * averaged. t->size and t->time_s must each have room for npoints values. */
int fit_table_build(const double *size, const double *time_s, size_t npoints, fit_table *t,
                    err_t *e);

/* Time at `size`: the achieved rate size/time interpolated linearly in log(size) between
 * neighbours; outside [size[0], size[n-1]] returns `fallback_time_s` and sets *extrapolated. */
double fit_table_time(const fit_table *t, double size, double fallback_time_s, int *extrapolated);

#endif
