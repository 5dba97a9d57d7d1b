/* modelzoo: model files for well-known convolutional and transformer models.
 *
 * ResNet (torchvision's resnet18/34/50/101/152, v1.5: the bottleneck's stride is on its 3x3
 * convolution), GPT (Hugging Face's GPT2LMHeadModel, any size) and BERT (Hugging Face's BertForPreTraining: BertModel with its pooler, plus the
 * masked-LM and next-sentence heads, the MLM decoder tied to the word embeddings), written in the
 * model format of models/README.md. Parameters come in PyTorch's registration order
 * (model.named_parameters(), tied weights listed once) with their real names and shapes;
 * forward ops layer by layer; backward in the order autograd runs it, every parameter named in
 * ready= right after the op that ends its autograd node, so DDP can overlap the all-reduce of late
 * layers with the backward of early ones. docs/models.md derives every op and states what is
 * approximated.
 *
 * Both generators have the contract of modelgen_mlstm_text: they write the file text into *text
 * (the caller frees it), return ERR_USAGE with a message for sizes they cannot describe, ERR_NOMEM,
 * and never print or exit. */
#ifndef DDPSIM_MODELZOO_H
#define DDPSIM_MODELZOO_H

#include "err.h"
#include "model.h"

typedef struct {
  const char *name;      /* NULL: "resnet<depth>" */
  int depth;             /* 18, 34 (basic blocks), 50, 101, 152 (bottlenecks) */
  long image;            /* square input, pixels per side (224) */
  long classes;          /* fc outputs (1000) */
  long batch;            /* default per-GPU batch, images (64) */
  model_dtype precision; /* default run precision (fp16: mixed precision) */
  int amp;               /* 1: torch.cuda.amp: parameters, gradients and buckets stay fp32 while ops
                            follow the run precision; 0: the whole model at the run precision */
  int uint8_input;       /* 1: the batch reaches the GPU as uint8 pixels, converted and normalized there
                            (DeepLearningExamples' fast_collate, DALI's CPU pipeline); 0: fp32 pixels
                            (torchvision's transforms.ToTensor) */
  int channels_last;     /* 1: activations in torch.channels_last (NHWC, `layout nhwc`); 0: PyTorch's
                            default contiguous NCHW */
} modelzoo_resnet;

/* Fills *spec with torchvision's ResNet-<depth> at 224x224, 1000 classes, batch 64, fp16, amp 0, fp32 input,
 * NCHW, name "resnet<depth>". ERR_USAGE for a depth other than 18, 34, 50, 101, 152. */
int modelzoo_resnet_defaults(int depth, modelzoo_resnet *spec, err_t *e);

/* ResNet model text. ERR_USAGE for an unknown depth or a non-positive or absurd size. */
int modelzoo_resnet_text(const modelzoo_resnet *spec, char **text, err_t *e);

typedef struct {
  const char *name;      /* NULL: "bert-<layers>x<hidden>" */
  long hidden;           /* H: 768 (base), 1024 (large) */
  long layers;           /* L: 12, 24 */
  long heads;            /* A: 12, 16; must divide H */
  long intermediate;     /* I: 3072, 4096 */
  long vocab;            /* V: 30522 */
  long max_position;     /* 512: rows of the position embedding; seq may not exceed it */
  long type_vocab;       /* 2 */
  long seq;              /* S: tokens per sample (128) */
  long batch;            /* default per-GPU batch, sequences (32) */
  model_dtype precision; /* default run precision (fp16: mixed precision) */
  int amp;               /* as in modelzoo_resnet */
} modelzoo_bert;

/* Fills *spec with "base" (bert-base-uncased's config) or "large" (bert-large-uncased's), seq 128,
 * batch 32, fp16, amp 0, name "bert-base" / "bert-large". ERR_USAGE for any other size name. */
int modelzoo_bert_defaults(const char *size, modelzoo_bert *spec, err_t *e);

/* BERT (BertForPreTraining) model text. ERR_USAGE for non-positive sizes, heads not dividing
 * hidden, seq above max_position, or absurd sizes. */
int modelzoo_bert_text(const modelzoo_bert *spec, char **text, err_t *e);

typedef struct {
  const char *name;      /* NULL: "gpt-<layers>x<hidden>" */
  long hidden;           /* H: 768 (small) */
  long layers;           /* L: 12 */
  long heads;            /* A: 12; must divide H */
  long ffn;              /* F: the MLP's inner size, 4H */
  long vocab;            /* V: 50257 */
  long max_position;     /* 1024: rows of the position embedding; seq may not exceed it */
  long seq;              /* S: tokens per sample (1024) */
  long batch;            /* default per-GPU batch, sequences (8) */
  int untied;            /* 0: the LM head is the token embedding (GPT-2); 1: its own lm_head.weight */
  model_dtype precision; /* default run precision (fp16) */
  int amp;               /* as in modelzoo_resnet */
  int eager;             /* 1: attn_implementation="eager" (the S x S scores, softmax and dropout as
                            ops; format version 5); 0 (default): "sdpa", as Hugging Face runs it since
                            4.36 and torchtitan: one fused attention op per pass (format version 8;
                            docs/models.md, "Fused attention") */
  int no_dropout;        /* 1: every dropout's p is 0 (MPT's and Llama's configurations): no dropout
                            kernel runs and no mask is saved (ATen's dropout returns its input at p 0);
                            0: GPT-2's 0.1 everywhere */
  int exact_gelu;        /* 1: nn.GELU(approximate='none'), one kernel that saves its input (MPT's);
                            0: GPT-2's gelu_new written as Python ops, which saves five F-sized tensors */
  int checkpoint;        /* 1: every block under torch.utils.checkpoint (Hugging Face's
                            gradient_checkpointing_enable, torchtitan's full AC): each keeps its input,
                            and its forward runs again in backward before its gradients */
} modelzoo_gpt;

/* Fills *spec with GPT-2's "small" (124M), "medium", "large" or "xl" config, seq 1024, batch 8,
 * fp16, tied, amp 0, name "gpt2" / "gpt2-medium" / ... ERR_INPUT for any other size name. */
int modelzoo_gpt_defaults(const char *size, modelzoo_gpt *spec, err_t *e);

/* GPT (Hugging Face GPT2LMHeadModel: decoder-only, pre-LayerNorm, causal attention, Conv1D weights
 * stored in x out) model text: with sdpa (the default) format version 8, attention one fused op per
 * pass; eager, format version 5 (attention's products as strided-batched GEMMs, gemms=).
 * ERR_INPUT for non-positive sizes, heads not dividing hidden, seq above max_position, absurd sizes. */
int modelzoo_gpt_text(const modelzoo_gpt *spec, char **text, err_t *e);

#endif
