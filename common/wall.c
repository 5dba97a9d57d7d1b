/* wall: the monotonic clock in seconds (wall.h). */
#include "wall.h"

#include <time.h>

double wall_now_s(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
