/* wall: the monotonic clock in seconds, the one timer of ddpsim's and ddpcalib's libraries (a
 * sweep's progress, the simulation's wall time, the calibration's samples). Never fails: a clock
 * that cannot be read (no CLOCK_MONOTONIC) gives 0. */
#ifndef DDPSIM_WALL_H
#define DDPSIM_WALL_H

/* Seconds since an arbitrary fixed point (CLOCK_MONOTONIC): differences are elapsed time. */
double wall_now_s(void);

#endif
