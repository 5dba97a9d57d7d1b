/* libFuzzer target: the topology loader (sim/topo.c) on arbitrary text. A topology that loads has
 * bandwidths inside the loaders' range (common/txt.h). docs/testing.md, "Fuzzing". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "topo.h"
#include "txt.h"

static int in_range(double bw) { return bw >= TXT_BW_MIN_Bps && bw <= TXT_BW_MAX_Bps; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  topo_t *t = NULL;
  err_t e;
  if (topo_parse(text, "fuzz.topo", &t, &e) == ERR_OK) {
    if (t->gpus_per_node < 1 || !in_range(t->intra_bw_Bps) || (t->has_nic && !in_range(t->nic_bw_Bps)) ||
        (t->switch_bw_Bps != 0 && !in_range(t->switch_bw_Bps)))
      __builtin_trap();
    for (int u = 0; u < t->gpus_per_node && u < 8; u++)
      for (int v = 0; v < t->gpus_per_node && v < 8; v++) (void)topo_pair_links(t, u, v);
  } else if (t) {
    __builtin_trap();
  }
  topo_destroy(t);
  free(text);
  return 0;
}
