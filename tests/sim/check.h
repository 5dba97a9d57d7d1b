/* check: the smallest test harness. One line per check; main returns check_status(). */
#ifndef DDPSIM_TEST_CHECK_H
#define DDPSIM_TEST_CHECK_H

#include <math.h>
#include <stdio.h>

static int check_failed, check_total;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    check_total++;                                         \
    if (cond) {                                            \
      printf("ok    ");                                    \
    } else {                                               \
      check_failed++;                                      \
      printf("FAIL  %s:%d: ", __FILE__, __LINE__);         \
    }                                                      \
    printf(__VA_ARGS__);                                   \
    printf("\n");                                          \
  } while (0)

/* |ref - got| <= atol + rtol * |ref| */
static inline int check_close(double ref, double got, double atol, double rtol) {
  return fabs(ref - got) <= atol + rtol * fabs(ref);
}

static inline int check_status(void) {
  printf("%d passed, %d failed\n", check_total - check_failed, check_failed);
  return check_failed ? 1 : 0;
}

#endif
