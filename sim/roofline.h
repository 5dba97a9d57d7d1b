/* roofline: the compute cost model a profile states for an op kind and precision
 * (docs/profile.md, `"model": "roofline"`): one launch costs
 *
 *   t = launch_s + max(flops / (peak_flops efficiency), bytes / (mem_bw_Bps mem_efficiency))
 *
 * (elementwise ops: the memory term alone). Beneath both the profile's schema (sim/profile.c
 * evaluates a table's fitted roofline at its measured shapes when it loads them, sim/gemmcost.h)
 * and the pricing of ops (sim/cost.c): the one place of the formula. */
#ifndef DDPSIM_ROOFLINE_H
#define DDPSIM_ROOFLINE_H

typedef struct {
  double launch_s, peak_flops, efficiency, mem_bw_Bps, mem_efficiency;
} roofline;

/* The time of one launch moving `bytes` and, for a GEMM (gemm != 0), computing `flops`, seconds. */
double roofline_time(const roofline *r, int gemm, double flops, double bytes);

#endif
