/* libFuzzer target: the model loader (sim/model.c) on arbitrary text. A model that loads must give
 * finite sizes at its own batch and at the largest batch the loader's bounds allow (model.h), with
 * no signed overflow (UBSan traps it). docs/testing.md, "Fuzzing". */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  model_t *m = NULL;
  err_t e;
  if (model_parse(text, "fuzz.model", &m, &e) == ERR_OK) {
    if (model_total_params(m) <= 0 || model_total_params(m) > MODEL_DIM_MAX) __builtin_trap();
    for (int i = 0; i < m->nparams; i++) /* the version 5 markers are flags */
      if ((m->params[i].sparse | m->params[i].unused) & ~1) __builtin_trap();
    int nmeas = 0; /* version 6: measured times in range, only under a measured line naming a device */
    for (int i = 0; i < m->nops; i++) {
      const model_op *op = &m->ops[i];
      if (!op->measured) continue;
      nmeas++;
      if (!m->measured.present || !m->measured.device[0] || !(op->time_s >= 0 && op->time_s <= MODEL_MEASURED_MAX_s) ||
          !(op->host_s >= 0 && op->host_s <= MODEL_MEASURED_MAX_s))
        __builtin_trap();
    }
    if (nmeas != m->nmeasured) __builtin_trap();
    (void)model_total_bytes(m, MODEL_FP32);
    long batches[2] = {m->batch, MODEL_BATCH_MAX};
    for (int b = 0; b < 2; b++)
      for (int i = 0; i < m->nops; i++) {
        double f = model_op_flops(&m->ops[i], batches[b]), by = model_op_bytes(&m->ops[i], batches[b], MODEL_FP16);
        if (!isfinite(f) || !isfinite(by) || f < 0 || !(by > 0)) __builtin_trap();
      }
    int *order = malloc((size_t)m->nparams * sizeof *order);
    if (order) model_ready_order(m, order);
    free(order);
  } else if (m) {
    __builtin_trap(); /* a failed load leaves nothing allocated */
  }
  model_destroy(m);
  free(text);
  return 0;
}
