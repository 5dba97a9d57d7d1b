/* gemmcost: the shape-aware interpolation of measured GEMM times (docs/profile.md, "GEMM tables").
 *
 * A table holds measured single GEMMs (m, n, k) -> time and, for each, the time of the table's
 * fitted roofline at that shape. The time of a shape inside the measured range (each of log m,
 * log n, log k between the smallest and largest measured) is the fit's time times exp(r), where r
 * is the log-ratio measured / fit of the nearest measured shapes, weighted by inverse
 * distance to the fourth power in (log m, log n, log k) (Shepard's rule over the GEMMCOST_NEIGHBOURS nearest, found
 * with GSL's partial sort). A measured shape therefore costs exactly what was measured (the mean of
 * its repeats); between shapes the correction lies between its neighbours', and the roofline
 * carries the shape's own compute- or memory-boundness (a small-N GEMM is memory-bound where the
 * data says so). Outside the range the caller uses the fit alone and says it extrapolated. */
#ifndef DDPSIM_GEMMCOST_H
#define DDPSIM_GEMMCOST_H

#include "err.h"

#define GEMMCOST_NEIGHBOURS 4

typedef struct {
  int n;                  /* distinct shapes */
  double *lm, *ln, *lk;   /* (n) log m, log n, log k */
  double *time_s;         /* (n) mean measured time */
  double *resid;          /* (n) log(measured / fit) */
  double lo[3], hi[3];    /* the measured range of log m, log n, log k */
  double rms_rel, max_rel; /* |fit - measured| / measured over the distinct shapes */
} gemmcost_table;

/* Builds t from npts points (m, n, k, time, the fit's time there; all > 0); repeated shapes are
 * averaged. ERR_NOMEM only. Free with gemmcost_free (also after a failure). */
int gemmcost_build(gemmcost_table *t, const double *m, const double *n, const double *k, const double *time_s,
                   const double *fit_s, int npts, err_t *e);
void gemmcost_free(gemmcost_table *t);

/* 1 if (m, n, k) lies inside the measured range. */
int gemmcost_inside(const gemmcost_table *t, double m, double n, double k);

/* Time of (m, n, k) whose fitted time is fit_s: the measured time for a measured shape, the
 * corrected fit inside the range; fit_s (and *extrapolated = 1) outside it. */
double gemmcost_time(const gemmcost_table *t, double m, double n, double k, double fit_s, int *extrapolated);

#endif
