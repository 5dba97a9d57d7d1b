/* memory: will a training configuration fit on its GPUs? DDP's memory per GPU, part by part.
 *
 * The parts (docs/memory.md derives each and gives its source):
 *   parameters     the model's, at their types (run precision or fixed; model_param_bytes)
 *   gradients      one per parameter, of its type
 *   (FSDP: parameters, gradients, master copies and optimizer state are one rank's shard of each)
 *   unsharded      FSDP: the parameters all-gathered at the end of forward (sim/fsdp.h: the root's,
 *                  and two units' with reshard_after_forward, else every unit's)
 *   buckets        DDP's Reducer allocates one flat tensor per bucket holding every gradient
 *                  (torch/csrc/distributed/c10d/reducer.cpp, initialize_buckets): a second copy of
 *                  the gradients, unless gradient_as_bucket_view makes the gradients views of it;
 *                  flat mode's one flattened buffer is the same second copy; DataParallel has none
 *   master         fp32 master weights and their fp32 gradients where a parameter runs in 16 bits
 *                  (apex's FP16_Optimizer / amp O2, sentiment-discovery's fp16 training); none where
 *                  the parameters are fp32 already (torch.autocast keeps them fp32)
 *   optimizer      the optimizer's state: copies per parameter element (sgd 0, sgd-momentum 1, adam
 *                  and adamw 2, rmsprop 1, rmsprop-momentum 2, adagrad 1), fp32 where master
 *                  weights are kept, else of the parameter's type
 *   activations    what autograd keeps for backward at the end of forward, at the batch: the model
 *                  file's `saved` line (generated models compute it; the exporter records it)
 *   buffers        the module's buffers (BatchNorm statistics)
 *   context        the CUDA context (the profile's device.cuda_context_bytes)
 *   allocator      what PyTorch's caching allocator reserves beyond the persistent tensors' bytes:
 *                  every block rounded up to 512 bytes and large segments to 2 MiB
 *                  (c10/cuda/CUDACachingAllocator.cpp: kMinBlockSize, kRoundLarge)
 * peak = the sum: every part is resident at the end of forward, when autograd holds the most.
 * Transient buffers (a kernel's workspace, the gradients of the layer in flight, NCCL's own
 * buffers) and the fragmentation of freed activations are not modelled: docs/memory.md. */
#ifndef DDPSIM_MEMORY_H
#define DDPSIM_MEMORY_H

#include <cjson/cJSON.h>

#include "err.h"
#include "model.h"
#include "sim.h"

typedef struct {
  long batch;                  /* per GPU, as estimated */
  model_dtype precision;       /* the run precision */
  model_optim optim;           /* the optimizer whose state is counted */
  int optim_states;            /* its state copies per parameter element; -1: unknown (not counted) */
  int activations_known;       /* 0: the model file has no `saved` line; activations_bytes is 0 */
  double params_bytes, grads_bytes, buckets_bytes, master_bytes, optim_bytes, activations_bytes, buffers_bytes,
      context_bytes, allocator_bytes;
  double unsharded_bytes;      /* FSDP: the units' parameters all-gathered at the end of forward */
  double peak_bytes;           /* the sum of the parts above */
  double device_bytes;         /* the card's memory (profile device.memory_bytes); 0: unknown */
  double per_sample_bytes;     /* what one more sample per GPU adds (activations) */
  int host_memory;             /* the ranks are CPU processes (device.kind cpu): device_bytes is the host's */
} memory_parts;

/* The parts of configuration c at its batch and precision (the model's where c leaves them), with
 * optimizer `optim` (MODEL_OPTIM_UNKNOWN: the model file's `optim` line). Where neither names one,
 * optim_states is -1 and the optimizer's state is not counted (optim_bytes 0: the peak is then a
 * lower bound, as without a `saved` line); ERR_INPUT or ERR_NOMEM from building DDP's buckets. */
int memory_estimate(const sim_config *c, model_optim optim, memory_parts *out, err_t *e);

/* State copies per parameter element the optimizer keeps (sgd 0, adam 2, ...); -1 for UNKNOWN. */
int memory_optim_states(model_optim o);

/* The largest per-GPU batch whose peak fits in the card: from the parts' constant and per-sample
 * terms (peak is linear in the batch). 0 when not even batch 1 fits; -1 when it cannot be told (the
 * card's memory or the activations unknown). */
long memory_max_batch(const memory_parts *m);

/* 1 when the card's memory is known and the peak exceeds it. */
int memory_oom(const memory_parts *m);

/* "OOM at batch 256: 41.2 of 32 GiB; largest batch that fits: 192" (or "... no batch fits"). */
void memory_oom_message(const memory_parts *m, char *buf, size_t len);

/* The `memory` object of predict's JSON (docs/cli.md): every part in bytes, the peak, the card's
 * memory, whether it fits, the largest batch that fits. NULL when out of memory. */
cJSON *memory_json(const memory_parts *m);

/* Table lines: the peak and its parts in GiB, then the card and the largest batch (malloc'd; NULL
 * when out of memory). */
char *memory_table(const memory_parts *m);

#endif
