/* modelgen: model files generated from a few numbers.
 *
 * The multiplicative LSTM of sentiment-discovery (DESIGN.md): embedding E, hidden H, vocabulary V,
 * sequence length T, per-GPU batch B. Parameters in PyTorch's registration order with weight norm
 * on the four matrices; forward and backward as the GEMMs and elementwise passes kernels/ runs
 * (input projections for all T steps at once, one GEMM per matrix per step, the weight gradients
 * as large GEMMs over all T steps after backpropagation through time, so the recurrent weights'
 * gradients are ready only at the very end). docs/models.md derives every op.
 *
 * The order gradients become ready, which decides DDP's rebuilt buckets, is autograd's for the same
 * cell written as a PyTorch module (tests/torch/mlstm_module.py; checked against post-accumulate-grad
 * hooks by tests/torch/test_reducer.py), or, with kernels_order, the order kernels/ computes them in
 * (mlstm_grad_ready_order: what `ddpcalib train` all-reduces, for `ddpsim validate`). */
#ifndef DDPSIM_MODELGEN_H
#define DDPSIM_MODELGEN_H

#include "err.h"
#include "model.h"

typedef struct {
  const char *name; /* NULL: "mlstm-<H>" */
  long hidden, embed, vocab, seq, batch;
  model_dtype precision;
  int kernels_order; /* 0: autograd's gradient-ready order (PyTorch); 1: kernels/'s */
  int autograd_cell; /* 0: one fused cell per step (kernels/'s); 1: the cell as sentiment-discovery
                        wrote it, a per-step Python function under autograd (docs/models.md) */
} modelgen_mlstm;

/* Writes the model file text into *text (caller frees). ERR_USAGE for sizes out of range (each is
 * a flag of ddpsim genmodel). */
int modelgen_mlstm_text(const modelgen_mlstm *spec, char **text, err_t *e);

#endif
