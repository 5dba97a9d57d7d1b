/* libFuzzer target: `ddpcalib merge` (calib/profilew.c) on two arbitrary JSON inputs (the bytes
 * before and after the first NUL byte, or the two halves). Whatever merge accepts, it must write a
 * profile that reads back through the same reader and schema (docs/calib.md: merge never writes
 * what the loader refuses). docs/testing.md, "Fuzzing". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "profile.h"
#include "profilew.h"

static cJSON *parse(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return NULL;
  cJSON *doc = NULL;
  err_t e;
  if (profile_json_parse(text, size, "in.json", &doc, &e) != ERR_OK || !cJSON_IsObject(doc)) {
    cJSON_Delete(doc);
    doc = NULL;
  }
  free(text);
  return doc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = memchr(data, 0, size);
  size_t na = nul ? (size_t)(nul - data) : size / 2;
  size_t skip = nul ? 1 : 0;
  cJSON *a = parse(data, na), *b = parse(data + na + skip, size - na - skip);
  if (a && b) {
    for (int policy = PROFILEW_JITTER_AUTO; policy <= PROFILEW_JITTER_NONE; policy++) {
      cJSON *m = NULL;
      err_t e;
      profilew_prov p = {.subcommand = "merge"};
      if (profilew_merge(a, "a.json", b, "b.json", (profilew_jitter)policy, &p, &m, &e) != ERR_OK) {
        if (m) __builtin_trap();
        continue;
      }
      /* What profilew_write would write: it must validate and read back. */
      char *text = cJSON_Print(m);
      cJSON *back = NULL;
      if (!text || profilew_validate(m, "m.json", PROFILE_PART, &e) != ERR_OK ||
          profile_json_parse(text, strlen(text), "m.json", &back, &e) != ERR_OK ||
          profilew_validate(back, "m.json", PROFILE_PART, &e) != ERR_OK)
        __builtin_trap();
      cJSON_Delete(back);
      free(text);
      cJSON_Delete(m);
    }
  }
  cJSON_Delete(a);
  cJSON_Delete(b);
  return 0;
}
