/* libFuzzer target: the profile reader and schema (sim/profile.c) on arbitrary bytes, as a whole
 * profile and as a part. A profile that loads answers every query with finite, positive costs.
 * docs/testing.md, "Fuzzing". */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "profile.h"
#include "cost.h"

static void queries(const profile_t *p) {
  char line[1024];
  profile_summary(p, line, sizeof line);
  for (int i = 0; i < profile_nwarnings(p); i++) (void)profile_warning(p, i);
  /* One op of each kind and precision at a few shapes: inside and outside any measured table. */
  static const long dims[] = {1, 64, 4096, 1L << 20};
  for (int d = 0; d < MODEL_DTYPE_COUNT; d++)
    for (int k = 0; k < MODEL_OP_KIND_COUNT; k++)
      for (int s = 0; s < 4; s++) {
        model_op op = {.kind = (model_op_kind)k, .m = {dims[s], 0}, .n = {dims[3 - s], 1}, .k = {dims[s], 0},
                       .elems = {dims[s], 1}, .arrays = 3, .count = 1, .launches = 1 + s, .follows_run = 1};
        double t;
        err_t e;
        if (cost_op_time(p, &op, 8, (model_dtype)d, &t, NULL, &e) == ERR_OK && !(isfinite(t) && t > 0))
          __builtin_trap();
      }
  static const char *classes[] = {"nvlink", "ib-edr", "shm", "net", "pcie"};
  for (int c = 0; c < 5; c++) {
    double bw, lat;
    err_t e;
    if (profile_link(p, classes[c], 25e9, &bw, &lat, &e) == ERR_OK && !(isfinite(bw) && bw > 0 && isfinite(lat) && lat >= 0))
      __builtin_trap();
    (void)profile_hop_lat(p, classes[c], NCCL_ALGO_RING, NCCL_PROTO_LL, &lat, &e);
  }
  profile_jitter j;
  err_t e;
  profile_get_jitter(p, &j, &e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  cJSON *doc = NULL;
  err_t e;
  if (profile_json_parse(text, size, "fuzz.json", &doc, &e) == ERR_OK) {
    for (int part = 0; part < 2; part++) {
      profile_t *p = NULL;
      if (profile_from_json(doc, "fuzz.json", part, &p, &e) == ERR_OK) queries(p);
      else if (p) __builtin_trap();
      profile_destroy(p);
    }
    cJSON_Delete(doc);
  }
  free(text);
  return 0;
}
