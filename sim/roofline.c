#include "roofline.h"

double roofline_time(const roofline *r, int gemm, double flops, double bytes) {
  double t_mem = bytes / (r->mem_bw_Bps * r->mem_efficiency);
  double t_flop = gemm ? flops / (r->peak_flops * r->efficiency) : 0.0;
  return r->launch_s + (t_flop > t_mem ? t_flop : t_mem);
}
