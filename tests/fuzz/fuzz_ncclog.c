/* libFuzzer target: the nccl-tests log reader (calib/ncclog.c) on arbitrary text, with and without
 * a collective given, and the sweep it makes. A log that is read has at least 2 ranks, hosts
 * among them, a modelled collective, sizes increasing, positive finite times, a #wrong that is a
 * count or -1 (-2 before v2.13's footer), and a sweep whose wrong total is -1 or a sum that did
 * not wrap; no signed overflow or bad float conversion (UBSan traps it). docs/testing.md,
 * "Fuzzing". */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ncclog.h"

static void check(const char *text, int coll) {
  ncclog l;
  err_t e;
  int rc = ncclog_parse(text, "fuzz.log", coll, &l, &e);
  if (rc == ERR_OK) {
    if (l.nranks < 2 || l.nhosts < 1 || l.nhosts > l.nranks || l.coll < 0 || l.coll >= COLL_NKINDS || l.nrows == 0)
      __builtin_trap();
    if (coll >= 0 && l.coll != coll) __builtin_trap();
    for (size_t i = 0; i < l.nrows; i++) {
      const ncclog_row *r = &l.rows[i];
      if (i > 0 && r->bytes <= l.rows[i - 1].bytes) __builtin_trap();
      if (!r->has[0] && !r->has[1]) __builtin_trap();
      for (int p = 0; p < 2; p++)
        if (r->has[p] && (!(r->time_us[p] > 0) || !isfinite(r->time_us[p]) || r->wrong[p] < -2)) __builtin_trap();
    }
    for (int in_place = 0; in_place < 2; in_place++) {
      commbench_cfg cfg;
      commbench_result res;
      if (ncclog_to_sweep(&l, in_place, &cfg, &res, &e) == ERR_OK) {
        if (res.nrows != l.nrows || res.wrong < -1 || (res.wrong >= 0) != cfg.check || !(cfg.min_bytes <= cfg.max_bytes))
          __builtin_trap();
        for (size_t i = 0; i < res.nrows; i++)
          if (!(res.rows[i].mean_s > 0) || !isfinite(res.rows[i].mean_s) || res.rows[i].wrong < -1) __builtin_trap();
      }
      commbench_result_free(&res);
    }
  } else if (l.rows && l.nrows == 0) {
    __builtin_trap();
  }
  ncclog_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  check(text, -1);
  check(text, size ? data[0] % COLL_NKINDS : COLL_ALLREDUCE);
  free(text);
  return 0;
}
