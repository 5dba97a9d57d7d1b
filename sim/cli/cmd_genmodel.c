/* cmd_genmodel: `ddpsim genmodel mlstm|resnet|bert|gpt`, a model file from its sizes. docs/models.md. */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "err.h"
#include "modelgen.h"
#include "modelzoo.h"
#include "out.h"
#include "simopts.h"

static const char *usage_genmodel =
    "usage: ddpsim genmodel mlstm --hidden H [--embed E] [--vocab V] [--seq T] [--batch B] [common]\n"
    "       ddpsim genmodel resnet --depth 18|34|50|101|152 [--image PX] [--classes C] [--batch B]\n"
    "                              [--amp] [--uint8-input] [--channels-last] [common]\n"
    "       ddpsim genmodel bert [--size base|large] [sizes] [--seq S] [--batch B] [--amp] [common]\n"
    "       ddpsim genmodel gpt [--size small|medium|large|xl] [sizes] [--seq S] [--untied]\n"
    "                           [--attention sdpa|eager] [--no-dropout] [--gelu tanh|exact] [--checkpoint]\n"
    "                           [--batch B] [--amp] [common]\n"
    "sizes: [--layers L] [--hidden H] [--heads A] [--ffn F] [--vocab V] [--positions P]\n"
    "common: [--precision fp32|fp16] [--name NAME] [-o FILE]\n"
    "\n"
    "Writes a model file to FILE (atomically) or to standard output (docs/models.md):\n"
    "  mlstm   sentiment-discovery's multiplicative LSTM; defaults embed 64, vocab 256, seq 256,\n"
    "          batch 256, fp16; --cell autograd: the per-step cell as written\n"
    "  resnet  torchvision's ResNet; defaults 224x224 images, 1000 classes, batch 64, fp16\n"
    "  bert    Hugging Face's BertForPreTraining; defaults base, seq 128, batch 32, fp16\n"
    "  gpt     Hugging Face's GPT2LMHeadModel (decoder-only, tied LM head); defaults small (GPT-2's\n"
    "          124M: 12 layers, hidden 768, 12 heads, ffn 3072, vocab 50257), seq 1024, batch 8, fp16\n"
    "The sizes override --size's; a model with changed sizes is named <family>-<layers>x<hidden>\n"
    "unless --name is given.\n"
    "--amp keeps parameters and gradients fp32 (torch.cuda.amp) while ops run at --precision.\n"
    "--uint8-input: the batch crosses to the GPU as uint8 pixels (DeepLearningExamples' loaders,\n"
    "DALI's CPU pipeline) instead of torchvision's fp32 tensors.\n"
    "--channels-last: activations in torch.channels_last (NHWC, `layout nhwc`) instead of PyTorch's\n"
    "default NCHW; a convolution in the other layout than its kernels' pays cuDNN's transposes.\n"
    "\n";

/* The sizes given (0: not given, the family's default). */
typedef struct {
  int hidden, embed, vocab, seq, batch, depth, image, classes, amp, precision, uint8_input, channels_last;
  int layers, heads, ffn, positions, untied, cell, attention, no_dropout, gelu, checkpoint;
  const char *size, *name, *out;
} gen_opts;

static const char *const families[] = {"mlstm", "resnet", "bert", "gpt", NULL};
static const char *const cells[] = {"fused", "autograd", NULL};
static const char *const attentions[] = {"sdpa", "eager", NULL}; /* modelzoo_gpt.eager: the index */
static const char *const gelus[] = {"tanh", "exact", NULL};       /* modelzoo_gpt.exact_gelu: the index */
#define TAKES_MAX 20
/* The options each family takes. */
static const char *const takes[4][TAKES_MAX] = {
    {"hidden", "embed", "vocab", "seq", "batch", "cell", "precision", "name", "output"},
    {"depth", "image", "classes", "batch", "amp", "uint8-input", "channels-last", "precision", "name", "output"},
    {"size", "layers", "hidden", "heads", "ffn", "vocab", "positions", "seq", "batch", "amp", "precision", "name",
     "output"},
    {"size", "layers", "hidden", "heads", "ffn", "vocab", "positions", "seq", "untied", "attention", "no-dropout",
     "gelu", "checkpoint", "batch", "amp", "precision", "name", "output"}};
static const char *const all_names[] = {"hidden", "embed",  "vocab", "seq",       "batch", "depth",     "image",
                                        "classes", "size",  "amp",   "precision", "name",  "output",    "layers",
                                        "heads",   "ffn",   "positions", "untied", "cell", "uint8-input",
                                        "channels-last", "attention", "no-dropout", "gelu", "checkpoint", NULL};

/* The transformer sizes given on the command line over a family's defaults; 1 if any was given. */
static int transformer_sizes(const gen_opts *g, long *layers, long *hidden, long *heads, long *ffn, long *vocab,
                             long *positions) {
  const int given[6] = {g->layers, g->hidden, g->heads, g->ffn, g->vocab, g->positions};
  long *const field[6] = {layers, hidden, heads, ffn, vocab, positions};
  int any = 0;
  for (int i = 0; i < 6; i++)
    if (given[i]) *field[i] = given[i], any = 1;
  return any;
}

/* The model file's text for family fam, or the status with the message in x. */
static int generate(cli_ctx *x, int fam, const gen_opts *g, char **text) {
  err_t e;
  int rc;
  if (fam == 0) {
    if (!g->hidden) return cli_usage(x, "needs --hidden H");
    modelgen_mlstm spec = {.name = g->name, .hidden = g->hidden, .embed = g->embed ? g->embed : 64,
                           .vocab = g->vocab ? g->vocab : 256, .seq = g->seq ? g->seq : 256,
                           .batch = g->batch ? g->batch : 256, .precision = (model_dtype)g->precision,
                           .autograd_cell = g->cell};
    rc = modelgen_mlstm_text(&spec, text, &e);
  } else if (fam == 1) {
    if (!g->depth) return cli_usage(x, "needs --depth 18|34|50|101|152");
    modelzoo_resnet spec;
    if (modelzoo_resnet_defaults(g->depth, &spec, &e)) return cli_usage(x, "%s", e.msg);
    if (g->name) spec.name = g->name;
    if (g->image) spec.image = g->image;
    if (g->classes) spec.classes = g->classes;
    if (g->batch) spec.batch = g->batch;
    spec.precision = (model_dtype)g->precision;
    spec.amp = g->amp;
    spec.uint8_input = g->uint8_input;
    spec.channels_last = g->channels_last;
    rc = modelzoo_resnet_text(&spec, text, &e);
  } else if (fam == 2) {
    modelzoo_bert spec;
    if (modelzoo_bert_defaults(g->size ? g->size : "base", &spec, &e)) return cli_usage(x, "%s", e.msg);
    if (transformer_sizes(g, &spec.layers, &spec.hidden, &spec.heads, &spec.intermediate, &spec.vocab,
                          &spec.max_position))
      spec.name = NULL;
    if (g->name) spec.name = g->name;
    if (g->seq) spec.seq = g->seq;
    if (g->batch) spec.batch = g->batch;
    spec.precision = (model_dtype)g->precision;
    spec.amp = g->amp;
    rc = modelzoo_bert_text(&spec, text, &e);
  } else {
    modelzoo_gpt spec;
    if (modelzoo_gpt_defaults(g->size ? g->size : "small", &spec, &e)) return cli_usage(x, "%s", e.msg);
    if (transformer_sizes(g, &spec.layers, &spec.hidden, &spec.heads, &spec.ffn, &spec.vocab, &spec.max_position))
      spec.name = NULL;
    /* GPT2Config's n_inner None: the MLP is 4 x n_embd, whatever hidden size was given */
    if (g->hidden && !g->ffn) spec.ffn = 4 * spec.hidden;
    if (g->name) spec.name = g->name;
    if (g->seq) spec.seq = g->seq;
    if (g->batch) spec.batch = g->batch;
    spec.untied = g->untied;
    spec.eager = g->attention;
    spec.no_dropout = g->no_dropout;
    spec.exact_gelu = g->gelu;
    spec.checkpoint = g->checkpoint;
    spec.precision = (model_dtype)g->precision;
    spec.amp = g->amp;
    rc = modelzoo_gpt_text(&spec, text, &e);
  }
  if (rc) return cli_fail(x, rc, "%s", e.msg);
  /* A generator never writes what the loader refuses: the text is loaded as predict would load it. */
  model_t *m = NULL;
  rc = model_parse(*text, "the generated model", &m, &e);
  model_destroy(m);
  if (rc) {
    free(*text);
    *text = NULL;
    return cli_usage(x, "these sizes make a model ddpsim cannot load: %s", e.msg);
  }
  return CLI_OK;
}

int cmd_genmodel(cli_ctx *x, int argc, char **argv) {
  gen_opts g = {.precision = MODEL_FP16};
  const cli_opt all[] = {
      {"hidden", 0, CLI_INT, &g.hidden, "H", "hidden size (mlstm: required)", CLI_MIN, 1},
      {"embed", 0, CLI_INT, &g.embed, "E", "mlstm: embedding size", CLI_MIN, 1},
      {"vocab", 0, CLI_INT, &g.vocab, "V", "vocabulary size", CLI_MIN, 1},
      {"layers", 0, CLI_INT, &g.layers, "L", "bert, gpt: transformer layers", CLI_MIN, 1},
      {"heads", 0, CLI_INT, &g.heads, "A", "bert, gpt: attention heads (must divide --hidden)", CLI_MIN, 1},
      {"ffn", 0, CLI_INT, &g.ffn, "F", "bert, gpt: the feed-forward inner size", CLI_MIN, 1},
      {"positions", 0, CLI_INT, &g.positions, "P", "bert, gpt: position embeddings (the longest --seq)", CLI_MIN, 1},
      {"untied", 0, CLI_FLAG, &g.untied, NULL, "gpt: the LM head has its own weight (default: tied to wte)"},
      {"attention", 0, CLI_ENUM, &g.attention, "sdpa|eager",
       "gpt: attn_implementation: sdpa (default, as Hugging Face and torchtitan run it:\none fused attention op per pass) or eager (the S x S scores as ops)",
       .names = attentions},
      {"no-dropout", 0, CLI_FLAG, &g.no_dropout, NULL,
       "gpt: every dropout p = 0, as MPT and Llama configure it (default GPT-2's 0.1): no\ndropout kernels, no masks saved"},
      {"gelu", 0, CLI_ENUM, &g.gelu, "tanh|exact",
       "gpt: the MLP's activation: tanh (GPT-2's gelu_new, default) or exact (nn.GELU,\nas MPT runs it: saves its input only)",
       .names = gelus},
      {"checkpoint", 0, CLI_FLAG, &g.checkpoint, NULL,
       "gpt: every block under activation checkpointing (torch.utils.checkpoint): it keeps\nits input, its forward runs again in backward"},
      {"cell", 0, CLI_ENUM, &g.cell, "fused|autograd",
       "mlstm: one fused cell per step (default), or the cell as written: a per-step\nPython function under autograd (unfused ops, per-step weight gradients)",
       .names = cells},
      {"depth", 0, CLI_INT, &g.depth, "D", "resnet: 18, 34, 50, 101 or 152 (required)", CLI_MIN, 1},
      {"image", 0, CLI_INT, &g.image, "PX", "resnet: image side in pixels", CLI_MIN, 1},
      {"classes", 0, CLI_INT, &g.classes, "C", "resnet: classes", CLI_MIN, 1},
      {"size", 0, CLI_STRING, &g.size, "NAME", "bert: base or large; gpt: small, medium, large or xl"},
      {"seq", 0, CLI_INT, &g.seq, "T", "mlstm, bert, gpt: sequence length", CLI_MIN, 1},
      {"batch", 0, CLI_INT, &g.batch, "B", "per-GPU batch", CLI_MIN, 1},
      {"amp", 0, CLI_FLAG, &g.amp, NULL, "resnet, bert, gpt: parameters and gradients fp32, ops at --precision"},
      {"uint8-input", 0, CLI_FLAG, &g.uint8_input, NULL, "resnet: the batch reaches the GPU as uint8 pixels (default fp32)"},
      {"channels-last", 0, CLI_FLAG, &g.channels_last, NULL, "resnet: activations in torch.channels_last (NHWC; default NCHW)"},
      {"precision", 0, CLI_CUSTOM, &g.precision, "fp32|fp16", "run precision (default fp16)", .parse = simopts_parse_precision,
       .must = "must be fp32 or fp16"},
      {"name", 0, CLI_STRING, &g.name, "NAME", "the model's name"},
      {"output", 'o', CLI_STRING, &g.out, "FILE", "write the model here, atomically (default: standard output)"},
      {0}};
  int fam = -1;
  for (int i = 0; argc >= 2 && families[i]; i++)
    if (strcmp(argv[1], families[i]) == 0) fam = i;
  const cli_opt *every[] = {all, NULL};
  const cli_cmd help = {.usage = usage_genmodel, .tables = every};
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--version") == 0))
    return cli_parse(x, &help, 2, argv, NULL, NULL, stdout); /* the help, or the version */
  if (fam < 0)
    return cli_usage(x, "%s%s%s: the model family must be given first; known: mlstm, resnet, bert, gpt",
                     argc >= 2 ? "unknown family '" : "", argc >= 2 ? argv[1] : "no family", argc >= 2 ? "'" : "");
  snprintf(x->where, sizeof x->where, "genmodel %s", families[fam]);
  cli_opt mine[TAKES_MAX];
  cli_select(all, takes[fam], mine);
  const cli_opt *tables[] = {mine, NULL};
  const cli_cmd c = {.usage = usage_genmodel, .tables = tables, .elsewhere = all_names, .not_here = "does not apply to it"};
  int rc = cli_parse(x, &c, argc - 1, argv + 1, NULL, NULL, stdout);
  char *text = NULL;
  if (rc || (rc = generate(x, fam, &g, &text))) return rc;
  if (g.out) rc = out_write_atomic(x, g.out, text);
  else fputs(text, stdout);
  free(text);
  return rc;
}
