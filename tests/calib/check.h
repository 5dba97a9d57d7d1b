/* check: the calibration tests' harness. One line per check; main returns check_status(). */
#ifndef DDPCALIB_TEST_CHECK_H
#define DDPCALIB_TEST_CHECK_H

#include <math.h>
#include <stdio.h>

static int failures, checks;

/* |got - want| <= rtol |want| */
static inline void near(const char *what, double got, double want, double rtol) {
  double rel = fabs(got - want) / fabs(want);
  int ok = rel <= rtol;
  checks++;
  failures += !ok;
  printf("%s %s: got %.6g, want %.6g (rel err %.2e, tol %.0e)\n", ok ? "ok  " : "FAIL", what, got, want, rel, rtol);
}

/* |got - want| <= atol */
static inline void within(const char *what, double got, double want, double atol) {
  int ok = fabs(got - want) <= atol;
  checks++;
  failures += !ok;
  printf("%s %s: got %.6g, want %.6g (abs err %.2e, tol %.2e)\n", ok ? "ok  " : "FAIL", what, got, want,
         fabs(got - want), atol);
}

static inline void truth(const char *what, int cond) {
  checks++;
  failures += !cond;
  printf("%s %s\n", cond ? "ok  " : "FAIL", what);
}

static inline int check_status(void) {
  printf("%d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}

#endif
