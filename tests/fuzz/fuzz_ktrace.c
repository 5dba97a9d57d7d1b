/* libFuzzer target: `ddpcalib import kineto`'s reader (calib/ktrace.c) on arbitrary JSON. What it
 * accepts must add up: every kernel is compute or NCCL, overlapping ones are among the compute
 * ones, no step, wait, duration or launch figure is negative or not finite, and the all-reduce
 * sweep built from it has strictly increasing sizes and positive times. docs/testing.md, "Fuzzing". */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"
#include "ktrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  ktrace t;
  err_t e;
  if (ktrace_parse(text, size, "trace.json", &t, &e) == ERR_OK) {
    if (t.ncompute + t.nnccl != t.nkernels || t.noverlap > t.ncompute || !(t.overlap_s <= t.compute_s + 1e-9) ||
        t.nblocked > t.nlaunch || !(t.launch_median_s >= 0) || !isfinite(t.launch_max_s))
      __builtin_trap();
    for (size_t i = 0; i < t.nsteps; i++)
      if (!(t.step_s[i] >= 0) || !(t.input_wait_s[i] >= 0) || !isfinite(t.input_wait_s[i])) __builtin_trap();
    for (size_t i = 0; i < t.nnccl; i++)
      if (!(t.nccl[i].dur_s >= 0) || !(t.nccl[i].bytes >= 0 && t.nccl[i].bytes <= 1e16)) __builtin_trap();
    commbench_cfg cfg;
    commbench_result res;
    int nranks;
    if (ktrace_allreduce_sweep(&t, 1, &cfg, &res, &nranks, &e) == ERR_OK) {
      for (size_t i = 0; i < res.nrows; i++)
        if ((i && res.rows[i].bytes <= res.rows[i - 1].bytes) || !(res.rows[i].median_s >= 0)) __builtin_trap();
    }
    commbench_result_free(&res);
  }
  ktrace_free(&t);
  free(text);
  return 0;
}
