/* test_modelzoo: the ResNet and BERT model generators (sim/modelzoo.c) and the bundled files.
 *
 *   test_modelzoo MODELS_DIR     checks; the bundled files in MODELS_DIR must be the generator's output
 *   test_modelzoo --write DIR    writes the bundled files into DIR (then exit 0)
 *
 * References: parameter counts from torchvision's weight metadata (num_params) and Hugging Face's
 * checkpoints (bert-base-uncased: BertModel 109,482,240, BertForPreTraining 110,106,428;
 * bert-large-uncased: 335,141,888 and 336,226,108); ResNet forward multiply-adds from torchvision's
 * metadata (_ops, GMACs at 224x224: resnet18 1.814, resnet50 4.089, resnet101 7.801); BERT forward
 * FLOPs per sequence from the usual dense estimate 2 N S (N = the published 110M / 340M parameters,
 * Devlin et al. 2019) plus the attention's two S x S products, 4 L S^2 H. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/check.h"
#include "bucket.h"
#include "model.h"
#include "modelzoo.h"
#include "txt.h"

typedef struct {
  const char *file; /* bundled file name */
  int is_bert;
  int depth;        /* ResNet */
  const char *size; /* BERT */
} bundled;

static const bundled BUNDLED[] = {
    {"resnet18.model", 0, 18, NULL},
    {"resnet50.model", 0, 50, NULL},
    {"bert-base.model", 1, 0, "base"},
    {"bert-large.model", 1, 0, "large"},
};
#define NBUNDLED (int)(sizeof BUNDLED / sizeof BUNDLED[0])

static int generate(const bundled *b, char **text, err_t *e) {
  if (b->is_bert) {
    modelzoo_bert spec;
    int rc = modelzoo_bert_defaults(b->size, &spec, e);
    return rc ? rc : modelzoo_bert_text(&spec, text, e);
  }
  modelzoo_resnet spec;
  int rc = modelzoo_resnet_defaults(b->depth, &spec, e);
  return rc ? rc : modelzoo_resnet_text(&spec, text, e);
}

static int write_bundled(const char *dir) {
  for (int i = 0; i < NBUNDLED; i++) {
    char *text = NULL, path[1024];
    err_t e;
    if (generate(&BUNDLED[i], &text, &e)) {
      fprintf(stderr, "%s: %s\n", BUNDLED[i].file, e.msg);
      return 1;
    }
    snprintf(path, sizeof path, "%s/%s", dir, BUNDLED[i].file);
    FILE *f = fopen(path, "w");
    int bad = !f || fputs(text, f) == EOF;
    if (f && fclose(f)) bad = 1;
    free(text);
    if (bad) {
      fprintf(stderr, "cannot write %s\n", path);
      return 1;
    }
    printf("wrote %s\n", path);
  }
  return 0;
}

/* Parses generated text; NULL (and a failed check) if it does not parse. */
static model_t *parse(const char *what, const char *text) {
  model_t *m = NULL;
  err_t e = {{0}};
  int rc = text ? model_parse(text, what, &m, &e) : ERR_INPUT;
  CHECK(rc == ERR_OK, "%s parses; every parameter becomes ready exactly once%s%s", what, rc ? ": " : "",
        rc ? e.msg : "");
  return rc ? NULL : m;
}

static int param_index(const model_t *m, const char *name) {
  for (int i = 0; i < m->nparams; i++)
    if (strcmp(m->params[i].name, name) == 0) return i;
  return -1;
}

/* GEMM FLOPs of one phase per sample (all launches, at batch B). */
static double gemm_flops(const model_t *m, model_phase ph, long batch) {
  double f = 0;
  for (int i = 0; i < m->nops; i++)
    if (m->ops[i].phase == ph) f += model_op_flops(&m->ops[i], batch) * (double)m->ops[i].count;
  return f / (double)batch;
}

static long prefix_params(const model_t *m, const char *prefix) {
  long n = 0;
  for (int i = 0; i < m->nparams; i++)
    if (strncmp(m->params[i].name, prefix, strlen(prefix)) == 0) n += m->params[i].numel;
  return n;
}

static void first_last(const model_t *m, const char *what, const char *first, const char *last) {
  CHECK(strcmp(m->params[0].name, first) == 0 && strcmp(m->params[m->nparams - 1].name, last) == 0,
        "%s: first parameter %s, last %s (got %s, %s)", what, first, last, m->params[0].name,
        m->params[m->nparams - 1].name);
}

static void ready_ends(const model_t *m, const char *what, const char *first, const char *last) {
  int *order = malloc((size_t)m->nparams * sizeof *order);
  if (!order) return;
  model_ready_order(m, order);
  CHECK(strcmp(m->params[order[0]].name, first) == 0 && strcmp(m->params[order[m->nparams - 1]].name, last) == 0,
        "%s: first gradient ready %s, last %s (got %s, %s)", what, first, last, m->params[order[0]].name,
        m->params[order[m->nparams - 1]].name);
  free(order);
}

/* Backward GEMMs are the forward ones twice over (input and weight gradients), less what is skipped. */
static void backward_ratio(const model_t *m, const char *what, double lo, double hi) {
  double f = gemm_flops(m, MODEL_PHASE_FORWARD, m->batch), b = gemm_flops(m, MODEL_PHASE_BACKWARD, m->batch);
  CHECK(b / f >= lo && b / f <= hi, "%s: backward GEMM flops %.4f x forward (expect %.2f .. %.2f)", what, b / f, lo,
        hi);
}

/* Each convolution's backward passes against its forward (sim/model.h, model_conv_gemm): the weight
 * gradient and the implicit-GEMM data gradient (over the input's H x W, R*S/strides taps each) do
 * the forward's multiply-adds; only the stem has no data gradient. */
static void conv_passes(const model_t *m, const char *what) {
  int nfwd = 0, bad = 0, ndgrad = 0;
  for (int i = 0; i < m->nops; i++) {
    const model_op *f = &m->ops[i];
    if (f->conv.pass != MODEL_CONV_FWD) continue;
    nfwd++;
    char dn[MODEL_NAME_MAX + 8], wn[MODEL_NAME_MAX + 8];
    snprintf(dn, sizeof dn, "%s.dgrad", f->name);
    snprintf(wn, sizeof wn, "%s.wgrad", f->name);
    double ff = model_op_flops(f, 8);
    for (int j = 0; j < m->nops; j++) {
      const model_op *b = &m->ops[j];
      if (strcmp(b->name, wn) == 0) bad += b->conv.pass != MODEL_CONV_WGRAD || model_op_flops(b, 8) != ff;
      if (strcmp(b->name, dn) == 0) {
        ndgrad++;
        bad += b->conv.pass != MODEL_CONV_DGRAD || model_op_flops(b, 8) != ff;
      }
    }
  }
  CHECK(nfwd > 10 && ndgrad == nfwd - 1 && bad == 0, "%s: %d conv forwards, %d data gradients, %d passes off", what,
        nfwd, ndgrad, bad);
}

static void check_resnet(int depth, long params, double gmacs) {
  modelzoo_resnet spec;
  err_t e;
  char *text = NULL, what[32];
  snprintf(what, sizeof what, "resnet%d", depth);
  CHECK(modelzoo_resnet_defaults(depth, &spec, &e) == ERR_OK && modelzoo_resnet_text(&spec, &text, &e) == ERR_OK,
        "%s generates", what);
  model_t *m = parse(what, text);
  free(text);
  if (!m) return;
  CHECK(model_total_params(m) == params, "%s: %ld parameters (torchvision: %ld)", what, model_total_params(m), params);
  first_last(m, what, "conv1.weight", "fc.bias");
  ready_ends(m, what, "fc.bias", "conv1.weight");
  CHECK(m->batch == 64 && m->tokens_per_sample == 1 && strcmp(m->token_unit, "images") == 0 &&
            m->precision == MODEL_FP16,
        "%s: batch 64, 1 image per sample, fp16", what);
  if (gmacs > 0) {
    double macs = gemm_flops(m, MODEL_PHASE_FORWARD, m->batch) / 2;
    CHECK(check_close(gmacs * 1e9, macs, 0, 0.05), "%s: forward %.4g multiply-adds per image within 5%% of %.4g",
          what, macs, gmacs * 1e9);
  }
  conv_passes(m, what);
  model_destroy(m);
}

static void check_bert(const char *size, long bert_params, long hf_params, double published_params, long L, long H) {
  modelzoo_bert spec;
  err_t e;
  char *text = NULL, what[32];
  snprintf(what, sizeof what, "bert-%s", size);
  CHECK(modelzoo_bert_defaults(size, &spec, &e) == ERR_OK && modelzoo_bert_text(&spec, &text, &e) == ERR_OK,
        "%s generates", what);
  model_t *m = parse(what, text);
  free(text);
  if (!m) return;
  CHECK(prefix_params(m, "bert.") == bert_params, "%s: BertModel %ld parameters (Hugging Face: %ld)", what,
        prefix_params(m, "bert."), bert_params);
  CHECK(model_total_params(m) == hf_params, "%s: BertForPreTraining %ld parameters (Hugging Face: %ld)", what,
        model_total_params(m), hf_params);
  first_last(m, what, "bert.embeddings.word_embeddings.weight", "cls.seq_relationship.bias");
  ready_ends(m, what, "cls.seq_relationship.bias", "bert.embeddings.word_embeddings.weight");
  CHECK(m->batch == 32 && m->tokens_per_sample == 128 && strcmp(m->token_unit, "tokens") == 0 &&
            m->precision == MODEL_FP16,
        "%s: batch 32, 128 tokens per sample, fp16", what);
  double S = 128, ref = 2 * published_params * S + 4.0 * (double)L * S * S * (double)H;
  double f = gemm_flops(m, MODEL_PHASE_FORWARD, m->batch);
  CHECK(check_close(ref, f, 0, 0.05), "%s: forward %.4g flops per sequence within 5%% of 2 N S + 4 L S^2 H = %.4g",
        what, f, ref);
  backward_ratio(m, what, 1.99, 2.01);
  model_destroy(m);
}

/* The model of spec q, generated and parsed (NULL, the check failed, where either fails). */
static model_t *gpt_variant(const modelzoo_gpt *q, const char *what) {
  char *text = NULL;
  err_t e;
  model_t *m = NULL;
  if (modelzoo_gpt_text(q, &text, &e) == ERR_OK) m = parse(what, text);
  else CHECK(0, "%s generates: %s", what, e.msg);
  free(text);
  return m;
}

/* GPT-2 at its four published sizes: Hugging Face's GPT2LMHeadModel parameter counts (the model
 * cards' 124M, 355M, 774M, 1.5B: 124,439,808, 354,823,168, 774,030,080, 1,557,611,200); forward
 * GEMM flops per token the dense estimate 2 N' + 4 L S H (Kaplan et al. 2020: N' the weights that
 * multiply, the LM head's V x H included; the attention's two S x S products). */
static void check_gpt(void) {
  static const char *const sizes[4] = {"small", "medium", "large", "xl"};
  static const long hf_params[4] = {124439808L, 354823168L, 774030080L, 1557611200L};
  for (int i = 0; i < 4; i++) {
    modelzoo_gpt spec;
    err_t e;
    char *text = NULL, what[32];
    snprintf(what, sizeof what, "gpt2 %s", sizes[i]);
    int ok = modelzoo_gpt_defaults(sizes[i], &spec, &e) == ERR_OK;
    spec.eager = 1; /* the S x S products as GEMMs: Kaplan's count below; sdpa after the loop */
    CHECK(ok && modelzoo_gpt_text(&spec, &text, &e) == ERR_OK, "%s (eager) generates", what);
    model_t *m = parse(what, text);
    free(text);
    if (!m) continue;
    CHECK(model_total_params(m) == hf_params[i], "%s: %ld parameters (Hugging Face: %ld)", what,
          model_total_params(m), hf_params[i]);
    first_last(m, what, "transformer.wte.weight", "transformer.ln_f.bias");
    ready_ends(m, what, "transformer.ln_f.weight", "transformer.wte.weight");
    double H = (double)spec.hidden, L = (double)spec.layers, S = 1024, V = 50257;
    double weights = L * 12 * H * H + V * H; /* c_attn 3H^2, c_proj H^2, c_fc and mlp.c_proj 4H^2 each */
    double ref = S * (2 * weights + 4 * L * S * H), f = gemm_flops(m, MODEL_PHASE_FORWARD, m->batch);
    CHECK(check_close(ref, f, 0, 0.001), "%s: forward %.5g flops per sequence = 2 N' S + 4 L S^2 H = %.5g", what, f,
          ref);
    backward_ratio(m, what, 1.99, 2.01);
    model_destroy(m);
  }
  modelzoo_gpt g;
  err_t e;
  char *text = NULL;
  /* sdpa (the default): the same parameters; one fused op per pass and layer, causal (half of Q K^T
   * and P V's 4 S^2 H per layer), backward 2.5 times it; no A x S probabilities or their mask saved,
   * the kernel's output (H) and log-sum-exp (A fp32) per token instead. */
  modelzoo_gpt_defaults("small", &g, &e);
  CHECK(g.eager == 0, "GPT's default attention is sdpa");
  model_t *se[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    g.eager = k;
    CHECK(modelzoo_gpt_text(&g, &text, &e) == ERR_OK, "gpt2 small, %s, generates", k ? "eager" : "sdpa");
    se[k] = parse(k ? "gpt2 eager" : "gpt2 sdpa", text);
    free(text);
    text = NULL;
  }
  if (se[0] && se[1]) {
    model_t *m0 = se[0];
    double H = 768, L = 12, S = 1024, V = 50257, A = 12, B = (double)m0->batch;
    double dense = S * 2 * (L * 12 * H * H + V * H), attn = 2 * L * S * S * H;
    int nattn = 0;
    for (int i = 0; i < m0->nops; i++) nattn += m0->ops[i].kind == MODEL_OP_ATTN;
    CHECK(model_total_params(m0) == model_total_params(se[1]) && nattn == 2 * 12,
          "sdpa: the same parameters as eager, one attn op per pass and layer (%d)", nattn);
    CHECK(check_close(dense + attn, gemm_flops(m0, MODEL_PHASE_FORWARD, m0->batch), 0, 0.001) &&
              check_close(2 * dense + 2.5 * attn, gemm_flops(m0, MODEL_PHASE_BACKWARD, m0->batch), 0, 0.001),
          "sdpa: forward 2 N' S + 2 L S^2 H (causal), backward 2 x dense + 2.5 x attention");
    double run = 2; /* fp16 */
    double e_ps = run * (double)se[1]->saved_elems.v + (double)se[1]->saved_bytes.v,
           s_ps = run * (double)m0->saved_elems.v + (double)m0->saved_bytes.v;
    double diff = L * S * (run * (2 * A * S - H) + (A * S - 4 * A));
    CHECK(check_close(e_ps - s_ps, diff, 0, 1e-12) && m0->saved_bytes.c == 16 * 12,
          "sdpa saves %.4g B a sample less than eager (%.4g: the A x S probabilities and mask, less O and the "
          "log-sum-exp), and the dropout's generator state once a layer (B = %g)", e_ps - s_ps, diff, B);
  }
  /* MPT's configuration: no dropout (no dropout op, no mask, no dropped copy saved) and nn.GELU
   * (its input saved, 2 F a token and layer with c_proj's, not gelu_new's 5). */
  if (se[0]) {
    modelzoo_gpt q = g;
    q.eager = 0;
    q.no_dropout = 1;
    q.exact_gelu = 1;
    model_t *m1 = gpt_variant(&q, "gpt2 sdpa, no dropout, exact GELU");
    if (m1) {
      int drops = 0;
      for (int i = 0; i < m1->nops; i++) drops += strstr(m1->ops[i].name, "drop") != NULL;
      double H = 768, L = 12, S = 1024, F = 3072, run = 2;
      double a = run * (double)se[0]->saved_elems.v + (double)se[0]->saved_bytes.v,
             b = run * (double)m1->saved_elems.v + (double)m1->saved_bytes.v;
      double want = run * L * S * 3 * F + (S * H + L * S * 2 * H); /* 3 F of GELU; the masks (bool) */
      CHECK(drops == 0 && check_close(want, a - b, 0, 1e-12) && m1->saved_bytes.c == 0 && model_total_params(m1) == 124439808L,
            "no dropout and nn.GELU: no dropout op (%d), %.4g B a sample less saved (%.4g: 3 F of gelu_new's, the "
            "embedding's and two residual masks), no generator state", drops, a - b, want);
      model_destroy(m1);
    }
  }
  /* Every block checkpointed: the same parameters and forward; backward adds each block's forward
   * again (all of forward but the LM head's 2 S V H, the embeddings' none); saved, each block's input
   * and one block's activations in place of L blocks'. */
  if (se[0]) {
    modelzoo_gpt q = g;
    q.eager = 0;
    q.checkpoint = 1;
    model_t *m2 = gpt_variant(&q, "gpt2 checkpointed");
    if (m2) {
      double S = 1024, H = 768, V = 50257, L = 12;
      long B = m2->batch;
      double fwd = gemm_flops(se[0], MODEL_PHASE_FORWARD, B), extra = gemm_flops(m2, MODEL_PHASE_BACKWARD, B) -
                                                                  gemm_flops(se[0], MODEL_PHASE_BACKWARD, B);
      CHECK(model_total_params(m2) == 124439808L && check_close(fwd, gemm_flops(m2, MODEL_PHASE_FORWARD, B), 0, 1e-12) &&
                check_close(fwd - 2 * S * V * H, extra, 0, 1e-9),
            "checkpointed: backward recomputes the blocks' forward (%.5g FLOPs a sequence: forward less the LM head's)",
            extra);
      double layer = ((double)se[0]->saved_elems.v - S * (2 * H) - (S - 1) * V) / L; /* one block's elements */
      CHECK(check_close(S * L * H + layer + S * 2 * H + (S - 1) * V, (double)m2->saved_elems.v, 0, 1e-12),
            "checkpointed: saves each block's input and one block's activations (%.4g elements a sample, of %.4g)",
            (double)m2->saved_elems.v, (double)se[0]->saved_elems.v);
      model_destroy(m2);
    }
  }
  model_destroy(se[0]);
  model_destroy(se[1]);
  g.eager = 0;
  g.untied = 1;
  g.layers = 2;
  g.seq = 128;
  CHECK(modelzoo_gpt_text(&g, &text, &e) == ERR_OK, "gpt 2 layers, untied, seq 128 generates");
  model_t *m = parse("gpt untied", text);
  free(text);
  if (m) {
    CHECK(strcmp(m->params[m->nparams - 1].name, "lm_head.weight") == 0 && param_index(m, "transformer.wte.weight") == 0 &&
              model_total_params(m) == 124439808L - 10L * 7087872L + 50257L * 768L,
          "untied: lm_head.weight last, %ld parameters (ten fewer layers of 7,087,872, one more V x H)",
          model_total_params(m));
    model_destroy(m);
  }
  g.heads = 5;
  CHECK(modelzoo_gpt_text(&g, &text, &e) == ERR_USAGE && strstr(e.msg, "not a multiple of the 5 heads"),
        "heads not dividing hidden: %s", e.msg);
  CHECK(modelzoo_gpt_defaults("huge", &g, &e) == ERR_INPUT, "an unknown GPT size is refused: %s", e.msg);
}

static void check_buckets(void) {
  modelzoo_resnet spec;
  err_t e;
  char *text = NULL;
  modelzoo_resnet_defaults(50, &spec, &e);
  modelzoo_resnet_text(&spec, &text, &e);
  model_t *m = parse("resnet50 for buckets", text);
  free(text);
  if (!m) return;
  int fcw = param_index(m, "fc.weight"), fcb = param_index(m, "fc.bias");
  for (int rebuilt = 0; rebuilt <= 1; rebuilt++) {
    bucket_plan plan;
    int rc = bucket_plan_for_model(m, MODEL_FP32, 1.0, 25.0, rebuilt, &plan, &e);
    CHECK(rc == ERR_OK && plan.n >= 4 && plan.n <= 6, "resnet50 fp32, 25 MB cap, %s: %d buckets (102 MB of gradients)",
          rebuilt ? "rebuilt" : "construction", rc ? -1 : plan.n);
    if (rc) continue;
    int has_w = 0, has_b = 0;
    for (int t = 0; t < plan.b[0].ntensors; t++) {
      has_w |= plan.b[0].tensors[t] == fcw;
      has_b |= plan.b[0].tensors[t] == fcb;
    }
    if (!rebuilt)
      CHECK(has_w && has_b, "resnet50 construction: fc.weight and fc.bias are in the first-reduced bucket");
    else /* ready order, limits [1 MiB, 25 MiB]: fc.bias is ready first; the 8 MB fc.weight closes it */
      CHECK(has_w && has_b && plan.b[0].ntensors == 2 && plan.b[0].tensors[0] == fcb,
            "resnet50 rebuilt: fc.bias (first ready) and fc.weight alone in the first bucket");
    int has_conv1 = 0;
    for (int t = 0; t < plan.b[plan.n - 1].ntensors; t++) has_conv1 |= plan.b[plan.n - 1].tensors[t] == 0;
    CHECK(has_conv1, "resnet50 %s: conv1.weight is in the last-reduced bucket", rebuilt ? "rebuilt" : "construction");
    bucket_plan_free(&plan);
  }
  model_destroy(m);
}

static void check_options(void) {
  err_t e;
  char *text = NULL;
  modelzoo_bert b;
  modelzoo_bert_defaults("base", &b, &e);
  b.seq = 512;
  b.name = NULL;
  CHECK(modelzoo_bert_text(&b, &text, &e) == ERR_OK, "bert-base at seq 512 generates");
  model_t *m = parse("bert-base seq 512", text);
  free(text);
  if (m) {
    CHECK(m->tokens_per_sample == 512 && strcmp(m->name, "bert-12x768") == 0, "seq 512: 512 tokens per sample, name %s",
          m->name);
    CHECK(model_total_params(m) == 110106428L, "seq 512: parameters unchanged");
    model_destroy(m);
  }
  modelzoo_resnet r;
  modelzoo_resnet_defaults(50, &r, &e);
  r.image = 225; /* odd sizes round as PyTorch does: 225 -> 113 -> 57 -> 57 -> 29 -> 15 -> 8 */
  r.batch = 3;
  r.precision = MODEL_FP32;
  CHECK(modelzoo_resnet_text(&r, &text, &e) == ERR_OK, "resnet50 at 225x225, batch 3, fp32 generates");
  m = parse("resnet50 225", text);
  if (m) {
    CHECK(strstr(text, "conv  layer4.2.conv3") && strstr(text, "pass=fwd n=B c=512 h=8 w=8 k=2048 r=1 s=1") && m->batch == 3 &&
              m->precision == MODEL_FP32,
          "resnet50 at 225: last block at 8x8, batch 3, fp32");
    model_destroy(m);
  }
  free(text);

  /* amp: fp32 parameters (so fp32 gradients and buckets) in an fp16 run; ops unchanged. */
  modelzoo_resnet_defaults(50, &r, &e);
  r.amp = 1;
  CHECK(modelzoo_resnet_text(&r, &text, &e) == ERR_OK, "resnet50 with amp generates");
  m = parse("resnet50 amp", text);
  if (m) {
    CHECK(model_total_bytes(m, MODEL_FP16) == 4 * 25557032UL && strstr(text, "param conv1.weight 64x3x7x7 fp32\n") &&
              strstr(text, "param fc.bias 1000 fp32\n") && m->precision == MODEL_FP16,
          "resnet50 amp: %zu gradient bytes in an fp16 run (4 per parameter)", model_total_bytes(m, MODEL_FP16));
    model_destroy(m);
  }
  free(text);
  modelzoo_bert_defaults("base", &b, &e);
  b.amp = 1;
  CHECK(modelzoo_bert_text(&b, &text, &e) == ERR_OK, "bert-base with amp generates");
  m = parse("bert-base amp", text);
  if (m) {
    CHECK(model_total_bytes(m, MODEL_FP16) == 4 * 110106428UL, "bert-base amp: %zu gradient bytes in an fp16 run",
          model_total_bytes(m, MODEL_FP16));
    model_destroy(m);
  }
  free(text);

  /* Error paths: ERR_USAGE with a message (each is a flag of ddpsim genmodel), nothing allocated. */
  struct {
    const char *what;
    int rc;
  } cases[16];
  int n = 0;
  text = NULL;
  cases[n].what = "resnet depth 19";
  cases[n++].rc = modelzoo_resnet_defaults(19, &r, &e);
  modelzoo_resnet_defaults(18, &r, &e);
  r.depth = 20;
  cases[n].what = "resnet spec depth 20";
  cases[n++].rc = modelzoo_resnet_text(&r, &text, &e);
  modelzoo_resnet_defaults(18, &r, &e);
  r.image = 0;
  cases[n].what = "resnet image 0";
  cases[n++].rc = modelzoo_resnet_text(&r, &text, &e);
  modelzoo_resnet_defaults(18, &r, &e);
  r.batch = -2;
  cases[n].what = "resnet batch -2";
  cases[n++].rc = modelzoo_resnet_text(&r, &text, &e);
  modelzoo_resnet_defaults(18, &r, &e);
  r.classes = 1L << 30;
  cases[n].what = "resnet 2^30 classes";
  cases[n++].rc = modelzoo_resnet_text(&r, &text, &e);
  cases[n].what = "bert size 'huge'";
  cases[n++].rc = modelzoo_bert_defaults("huge", &b, &e);
  cases[n].what = "bert size NULL";
  cases[n++].rc = modelzoo_bert_defaults(NULL, &b, &e);
  modelzoo_bert_defaults("base", &b, &e);
  b.heads = 7;
  cases[n].what = "bert 7 heads of 768";
  cases[n++].rc = modelzoo_bert_text(&b, &text, &e);
  modelzoo_bert_defaults("base", &b, &e);
  b.seq = 513;
  cases[n].what = "bert seq 513 > 512 positions";
  cases[n++].rc = modelzoo_bert_text(&b, &text, &e);
  modelzoo_bert_defaults("large", &b, &e);
  b.layers = 0;
  cases[n].what = "bert 0 layers";
  cases[n++].rc = modelzoo_bert_text(&b, &text, &e);
  modelzoo_bert_defaults("large", &b, &e);
  b.precision = (model_dtype)7;
  cases[n].what = "bert precision 7";
  cases[n++].rc = modelzoo_bert_text(&b, &text, &e);
  for (int i = 0; i < n; i++) CHECK(cases[i].rc == ERR_USAGE, "%s is refused (ERR_USAGE)", cases[i].what);
  CHECK(text == NULL, "refused sizes leave *text NULL");
  CHECK(strstr(e.msg, "precision") != NULL, "the last refusal says why: %s", e.msg);
}

static void check_bundled(const char *dir) {
  for (int i = 0; i < NBUNDLED; i++) {
    char *text = NULL, path[1024];
    err_t e;
    snprintf(path, sizeof path, "%s/%s", dir, BUNDLED[i].file);
    char *file = txt_read_file(path, NULL);
    int rc = generate(&BUNDLED[i], &text, &e);
    CHECK(file && rc == ERR_OK && strcmp(file, text) == 0,
          "models/%s is the generator's output (regenerate: test_modelzoo --write models)", BUNDLED[i].file);
    if (file) {
      model_t *m = NULL;
      CHECK(model_load(path, &m, &e) == ERR_OK, "models/%s loads", BUNDLED[i].file);
      model_destroy(m);
    }
    free(file);
    free(text);
  }
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--write") == 0) return write_bundled(argv[2]);
  if (argc != 2) {
    fprintf(stderr, "usage: test_modelzoo MODELS_DIR | --write DIR\n");
    return 2;
  }
  check_resnet(18, 11689512L, 1.814);
  check_resnet(34, 21797672L, 0);
  check_resnet(50, 25557032L, 4.089);
  check_resnet(101, 44549160L, 7.801);
  check_resnet(152, 60192808L, 0);
  check_bert("base", 109482240L, 110106428L, 110e6, 12, 768);
  check_bert("large", 335141888L, 336226108L, 340e6, 24, 1024);
  check_gpt();
  check_buckets();
  check_options();
  check_bundled(argv[1]);
  return check_status();
}
