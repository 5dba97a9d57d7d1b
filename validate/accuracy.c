#include "accuracy.h"

#include <ctype.h>
#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "model.h"
#include "modelgen.h"
#include "modelzoo.h"
#include "predict.h"
#include "profile.h"
#include "reducer.h"
#include "strbuf.h"
#include "topo.h"
#include "txt.h"
#include "version.h"

#define FORMAT_TAG "ddpsim-published"
#define RATIOS_TAG "ddpsim-ratios 2"
#define MAX_POINTS 4096

/* FNV-1a, 64 bits (the fingerprints of the ratios cache): h continued over len bytes. */
#define FNV_BASIS 14695981039346656037ULL
static unsigned long long fnv(unsigned long long h, const void *data, size_t len) {
  const unsigned char *b = data;
  for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

/* ---- loading ---- */

/* The keys a point may carry, each at most once; REQ: every point must have it. */
enum { K_GROUP, K_SOURCE, K_HARDWARE, K_SOFTWARE, K_SETUP, K_PUBLISHED, K_ITERATIONS, K_MODEL, K_GENMODEL, K_PROFILE,
       K_TOPOLOGY, K_NODES, K_GPUS, K_BATCH, K_PRECISION, K_NO_SYNC, K_MODE, K_LOADER, K_FITS, K_UNSUPPORTED, K_FRAMEWORK,
       K_FSDP_UNITS, K_FSDP_RESHARD, K_FSDP_REPLICATE, K_FSDP_PARAM_DTYPE, K_FSDP_REDUCE_DTYPE, K_PYTORCH, K_COUNT };
static const struct {
  const char *name;
  int required;
} keys[K_COUNT] = {{"group", 1},   {"source", 1},   {"hardware", 1}, {"software", 1},  {"setup", 1},
                   {"published", 1}, {"iterations", 0}, {"model", 0}, {"genmodel", 0},  {"profile", 1},
                   {"topology", 1}, {"nodes", 1},    {"gpus", 1},     {"batch", 1},     {"precision", 1},
                   {"no_sync", 0},  {"mode", 0},     {"loader", 0},   {"fits", 0},     {"unsupported", 0},
                   {"framework", 0}, {"fsdp_units", 0}, {"fsdp_reshard_after_forward", 0}, {"fsdp_replicate", 0},
                   {"fsdp_param_dtype", 0}, {"fsdp_reduce_dtype", 0}, {"pytorch", 0}};

static const struct {
  const char *unit;
  accuracy_metric metric;
} units[] = {{"images/s", ACCURACY_SAMPLES}, {"sequences/s", ACCURACY_SAMPLES}, {"samples/s", ACCURACY_SAMPLES},
             {"chars/s", ACCURACY_TOKENS},   {"tokens/s", ACCURACY_TOKENS},       {"hours", ACCURACY_HOURS}};

#define FAIL(...) err_set(e, ERR_INPUT, __VA_ARGS__)

static int copy_text(char *dst, size_t len, const char *v, const char *origin, int line, const char *key, err_t *e) {
  if (strlen(v) >= len) return FAIL("%s:%d: %s is longer than %zu characters", origin, line, key, len - 1);
  strcpy(dst, v);
  return ERR_OK;
}

static int parse_int(const char *v, long lo, long hi, long *out) {
  return txt_parse_long(v, out) || *out < lo || *out > hi ? -1 : 0;
}

/* One `key value` line of point p. */
static int point_field(accuracy_point *p, int k, const char *v, const char *origin, int line, err_t *e) {
  long n;
  switch (k) {
  case K_GROUP: return copy_text(p->group, sizeof p->group, v, origin, line, "group", e);
  case K_SOURCE: return copy_text(p->source, sizeof p->source, v, origin, line, "source", e);
  case K_HARDWARE: return copy_text(p->hardware, sizeof p->hardware, v, origin, line, "hardware", e);
  case K_SOFTWARE: return copy_text(p->software, sizeof p->software, v, origin, line, "software", e);
  case K_SETUP: return copy_text(p->setup, sizeof p->setup, v, origin, line, "setup", e);
  case K_FITS: return copy_text(p->fits, sizeof p->fits, v, origin, line, "fits", e);
  case K_UNSUPPORTED: return copy_text(p->unsupported, sizeof p->unsupported, v, origin, line, "unsupported", e);
  case K_MODEL: return copy_text(p->model, sizeof p->model, v, origin, line, "model", e);
  case K_GENMODEL: return copy_text(p->genmodel, sizeof p->genmodel, v, origin, line, "genmodel", e);
  case K_PROFILE: return copy_text(p->profile, sizeof p->profile, v, origin, line, "profile", e);
  case K_TOPOLOGY: return copy_text(p->topology, sizeof p->topology, v, origin, line, "topology", e);
  case K_PUBLISHED: {
    char num[64], unit[32], extra[2];
    int got = sscanf(v, "%63s %31s %1s", num, unit, extra);
    if (got != 2 || txt_parse_double(num, &p->published) || !(p->published > 0))
      return FAIL("%s:%d: expected 'published VALUE UNIT' with a positive VALUE", origin, line);
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
      if (strcmp(unit, units[i].unit) == 0) {
        strcpy(p->unit, unit);
        p->metric = units[i].metric;
        return ERR_OK;
      }
    return FAIL("%s:%d: unit '%s' is not images/s, sequences/s, samples/s, chars/s, tokens/s or hours", origin, line, unit);
  }
  case K_ITERATIONS:
    if (parse_int(v, 1, 1000000000L, &p->iterations)) return FAIL("%s:%d: iterations must be an integer in [1, 1e9]", origin, line);
    return ERR_OK;
  case K_NODES:
    if (parse_int(v, 1, 1 << 20, &n)) return FAIL("%s:%d: nodes must be an integer in [1, 1048576]", origin, line);
    p->nodes = (int)n;
    return ERR_OK;
  case K_GPUS:
    if (parse_int(v, 1, 1 << 16, &n)) return FAIL("%s:%d: gpus (per node) must be an integer in [1, 65536]", origin, line);
    p->gpus = (int)n;
    return ERR_OK;
  case K_BATCH:
    if (parse_int(v, 1, MODEL_BATCH_MAX, &p->batch))
      return FAIL("%s:%d: batch (per GPU) must be an integer in [1, %ld]", origin, line, (long)MODEL_BATCH_MAX);
    return ERR_OK;
  case K_PYTORCH: {
    err_t why;
    if (reducer_version_parse(v, &p->pytorch, &why)) return FAIL("%s:%d: pytorch: %s", origin, line, why.msg);
    return ERR_OK;
  }
  case K_NO_SYNC:
    if (parse_int(v, 1, 1000000, &n)) return FAIL("%s:%d: no_sync must be an integer in [1, 1000000]", origin, line);
    p->no_sync = (int)n;
    return ERR_OK;
  case K_MODE: {
    int mo = sim_name_index(sim_mode_names, v);
    if (mo < 0) return FAIL("%s:%d: mode must be ddp or flat", origin, line);
    p->mode = mo;
    return ERR_OK;
  }
  case K_LOADER: /* how the batch reaches the GPU (sim_h2d's names but "auto"; docs/simulation.md) */
    if ((p->h2d = sim_name_index(sim_h2d_names, v)) > SIM_H2D_AUTO) return ERR_OK;
    p->h2d = SIM_H2D_AUTO;
    return FAIL("%s:%d: loader must be pageable, pinned, pinned-async, prefetch or none", origin, line);
  case K_PRECISION: {
    model_dtype d;
    if (model_dtype_parse(v, &d)) return FAIL("%s:%d: precision must be fp32, fp16 or bf16", origin, line);
    p->precision = (int)d;
    return ERR_OK;
  }
  case K_FRAMEWORK:
    if ((p->framework = sim_name_index(sim_framework_names, v)) >= 0) return ERR_OK;
    p->framework = SIM_FRAMEWORK_DDP;
    return FAIL("%s:%d: framework must be ddp, dp or fsdp", origin, line);
  case K_FSDP_UNITS: return copy_text(p->fsdp_units, sizeof p->fsdp_units, v, origin, line, "fsdp_units", e);
  case K_FSDP_RESHARD:
    if (strcmp(v, "true") && strcmp(v, "false")) return FAIL("%s:%d: fsdp_reshard_after_forward must be true or false", origin, line);
    p->fsdp_reshard = strcmp(v, "true") == 0;
    return ERR_OK;
  case K_FSDP_REPLICATE:
    if (parse_int(v, 1, 1 << 20, &n)) return FAIL("%s:%d: fsdp_replicate must be an integer in [1, 1048576]", origin, line);
    p->fsdp_replicate = (int)n;
    return ERR_OK;
  case K_FSDP_PARAM_DTYPE:
  case K_FSDP_REDUCE_DTYPE: {
    model_dtype d;
    if (model_dtype_parse(v, &d)) return FAIL("%s:%d: %s must be fp32, fp16 or bf16", origin, line, keys[k].name);
    *(k == K_FSDP_PARAM_DTYPE ? &p->fsdp_param_dtype : &p->fsdp_reduce_dtype) = (int)d;
    return ERR_OK;
  }
  }
  return FAIL("%s:%d: unknown key", origin, line);
}

/* What a finished point must have. */
static int point_check(const accuracy_point *p, const int *seen, const char *origin, err_t *e) {
  for (int k = 0; k < K_COUNT; k++)
    if (keys[k].required && !seen[k]) return FAIL("%s:%d: point %s has no '%s' line", origin, p->line, p->name, keys[k].name);
  if (seen[K_MODEL] == seen[K_GENMODEL])
    return FAIL("%s:%d: point %s needs exactly one of 'model' and 'genmodel'", origin, p->line, p->name);
  if ((p->metric == ACCURACY_HOURS) != (p->iterations > 0))
    return FAIL("%s:%d: point %s: 'iterations' goes with a figure in hours, and only then", origin, p->line, p->name);
  return ERR_OK;
}

static void trim(char **s) {
  while (isspace((unsigned char)**s)) (*s)++;
  char *end = *s + strlen(*s);
  while (end > *s && isspace((unsigned char)end[-1])) *--end = 0;
}

int accuracy_parse(const char *text, const char *origin, accuracy_set **out, err_t *e) {
  *out = NULL;
  accuracy_set *s = calloc(1, sizeof *s);
  char *copy = strdup(text);
  int rc = ERR_OK, cap = 0, seen[K_COUNT] = {0}, header = 0;
  if (!s || !copy) {
    rc = err_set(e, ERR_NOMEM, "%s: out of memory", origin);
    goto fail;
  }
  snprintf(s->path, sizeof s->path, "%s", origin);
  s->text_hash = fnv(FNV_BASIS, text, strlen(text));
  int line = 0;
  for (char *next = copy, *l; next; line++) {
    l = next;
    next = strchr(l, '\n');
    if (next) *next++ = 0;
    trim(&l);
    if (!*l || *l == '#') continue; /* a comment is a whole line: URLs carry '#' */
    char *v = l;
    while (*v && !isspace((unsigned char)*v)) v++;
    if (*v) *v++ = 0;
    trim(&v);
    if (!header) {
      if (strcmp(l, FORMAT_TAG) != 0 || strcmp(v, "1") != 0) {
        rc = FAIL("%s:%d: expected '" FORMAT_TAG " 1' as the first line", origin, line + 1);
        goto fail;
      }
      header = 1;
      continue;
    }
    if (strcmp(l, "point") == 0) {
      if (s->n && (rc = point_check(&s->points[s->n - 1], seen, origin, e))) goto fail;
      if (!*v || strchr(v, ' ') || strlen(v) >= ACCURACY_NAME_MAX) {
        rc = FAIL("%s:%d: expected 'point NAME' (one word, under %d characters)", origin, line + 1, ACCURACY_NAME_MAX);
        goto fail;
      }
      for (int i = 0; i < s->n; i++)
        if (strcmp(s->points[i].name, v) == 0) {
          rc = FAIL("%s:%d: point %s is already defined at line %d", origin, line + 1, v, s->points[i].line);
          goto fail;
        }
      if (s->n == MAX_POINTS) {
        rc = FAIL("%s:%d: more than %d points", origin, line + 1, MAX_POINTS);
        goto fail;
      }
      if (s->n == cap) {
        cap = cap ? 2 * cap : 32;
        accuracy_point *grown = realloc(s->points, (size_t)cap * sizeof *grown);
        if (!grown) {
          rc = err_set(e, ERR_NOMEM, "%s: out of memory", origin);
          goto fail;
        }
        s->points = grown;
      }
      accuracy_point *p = &s->points[s->n++];
      memset(p, 0, sizeof *p);
      memset(seen, 0, sizeof seen);
      p->line = line + 1;
      p->no_sync = 1;
      p->fsdp_reshard = 1;
      p->fsdp_param_dtype = p->fsdp_reduce_dtype = -1;
      strcpy(p->name, v);
      continue;
    }
    int k = 0;
    while (k < K_COUNT && strcmp(keys[k].name, l) != 0) k++;
    if (k == K_COUNT) {
      rc = FAIL("%s:%d: unknown key '%s' (validate/README.md lists them)", origin, line + 1, l);
      goto fail;
    }
    if (!s->n) {
      rc = FAIL("%s:%d: '%s' before the first 'point'", origin, line + 1, l);
      goto fail;
    }
    if (seen[k]++) {
      rc = FAIL("%s:%d: '%s' given twice for point %s", origin, line + 1, l, s->points[s->n - 1].name);
      goto fail;
    }
    if (!*v) {
      rc = FAIL("%s:%d: '%s' has no value", origin, line + 1, l);
      goto fail;
    }
    if ((rc = point_field(&s->points[s->n - 1], k, v, origin, line + 1, e))) goto fail;
  }
  if (!header) {
    rc = FAIL("%s:1: expected '" FORMAT_TAG " 1' as the first line", origin);
    goto fail;
  }
  if (!s->n) {
    rc = FAIL("%s:%d: no points", origin, line);
    goto fail;
  }
  if ((rc = point_check(&s->points[s->n - 1], seen, origin, e))) goto fail;
  free(copy);
  *out = s;
  return ERR_OK;
fail:
  free(copy);
  accuracy_destroy(s);
  return rc;
}

int accuracy_load(const char *path, accuracy_set **out, err_t *e) {
  *out = NULL;
  char *text = txt_read_file(path, NULL);
  if (!text) return err_set(e, ERR_IO, "%s: cannot read: %s", path, strerror(errno));
  int rc = accuracy_parse(text, path, out, e);
  free(text);
  return rc;
}

void accuracy_destroy(accuracy_set *s) {
  if (!s) return;
  free(s->points);
  free(s);
}

/* ---- predicting ---- */

/* "resnet depth=50 amp input=uint8 layout=nhwc", "bert size=large seq=128 amp", "mlstm hidden=4096 cell=autograd",
 * "gpt layers=32 hidden=4096 heads=32 ffn=16384 vocab=50368 positions=2048 seq=2048 untied amp [attention=eager] [dropout=0]
 * [gelu=exact] [checkpoint]": the generators of
 * `ddpsim genmodel` (sim/modelzoo.h, sim/modelgen.h) at the point's precision. gpt starts from size=small (GPT-2 124M)
 * and takes genmodel's sizes, as `ddpsim genmodel gpt` does. */
static int generate(const accuracy_point *p, char **text, err_t *e) {
  char buf[ACCURACY_TEXT_MAX], *tok[16];
  strcpy(buf, p->genmodel);
  int n = txt_split(buf, tok, 16);
  if (n < 1) return err_set(e, ERR_INPUT, "genmodel: expected 'FAMILY [key=value ...] [amp]'");
  model_dtype prec = p->precision == MODEL_FP32 ? MODEL_FP32 : MODEL_FP16; /* bf16 runs an fp16-typed model */
  long depth = 0, hidden = 0, seq = 0, layers = 0, heads = 0, ffn = 0, vocab = 0, positions = 0;
  int amp = 0, autograd = 0, uint8_input = 0, untied = 0, eager = 0, nodrop = 0, exact = 0, ckpt = 0, gpt = strcmp(tok[0], "gpt") == 0;
  const char *size = gpt ? "small" : "base";
  model_layout layout = MODEL_LAYOUT_NCHW;
  for (int i = 1; i < n; i++) {
    const char *v;
    if (strcmp(tok[i], "amp") == 0) amp = 1;
    else if ((v = txt_kv(tok[i], "depth")) && !txt_parse_long(v, &depth)) continue;
    else if ((v = txt_kv(tok[i], "hidden")) && !txt_parse_long(v, &hidden)) continue;
    else if ((v = txt_kv(tok[i], "seq")) && !txt_parse_long(v, &seq)) continue;
    else if (gpt && (v = txt_kv(tok[i], "layers")) && !txt_parse_long(v, &layers)) continue;
    else if (gpt && (v = txt_kv(tok[i], "heads")) && !txt_parse_long(v, &heads)) continue;
    else if (gpt && (v = txt_kv(tok[i], "ffn")) && !txt_parse_long(v, &ffn)) continue;
    else if (gpt && (v = txt_kv(tok[i], "vocab")) && !txt_parse_long(v, &vocab)) continue;
    else if (gpt && (v = txt_kv(tok[i], "positions")) && !txt_parse_long(v, &positions)) continue;
    else if (gpt && strcmp(tok[i], "untied") == 0) untied = 1;
    else if (gpt && strcmp(tok[i], "checkpoint") == 0) ckpt = 1;
    else if (gpt && (v = txt_kv(tok[i], "attention")) && (!strcmp(v, "sdpa") || !strcmp(v, "eager"))) eager = !strcmp(v, "eager");
    else if (gpt && (v = txt_kv(tok[i], "dropout")) && !strcmp(v, "0")) nodrop = 1;
    else if (gpt && (v = txt_kv(tok[i], "gelu")) && (!strcmp(v, "exact") || !strcmp(v, "tanh"))) exact = !strcmp(v, "exact");
    else if ((v = txt_kv(tok[i], "size"))) size = v;
    else if ((v = txt_kv(tok[i], "input")) && (!strcmp(v, "uint8") || !strcmp(v, "fp32")) && !strcmp(tok[0], "resnet"))
      uint8_input = !strcmp(v, "uint8");
    else if ((v = txt_kv(tok[i], "layout")) && !model_layout_parse(v, &layout) && !strcmp(tok[0], "resnet"))
      continue;
    else if ((v = txt_kv(tok[i], "cell")) && (!strcmp(v, "fused") || !strcmp(v, "autograd"))) autograd = !strcmp(v, "autograd");
    else return err_set(e, ERR_INPUT, "genmodel: unknown or malformed '%s'", tok[i]);
  }
  if (strcmp(tok[0], "resnet") == 0) {
    modelzoo_resnet r;
    int rc = modelzoo_resnet_defaults((int)depth, &r, e);
    if (rc) return rc;
    r.precision = prec;
    r.amp = amp;
    r.uint8_input = uint8_input;
    r.channels_last = layout == MODEL_LAYOUT_NHWC;
    r.batch = p->batch;
    return modelzoo_resnet_text(&r, text, e);
  }
  if (strcmp(tok[0], "bert") == 0) {
    modelzoo_bert b;
    int rc = modelzoo_bert_defaults(size, &b, e);
    if (rc) return rc;
    b.precision = prec;
    b.amp = amp;
    b.batch = p->batch;
    if (seq) b.seq = seq;
    return modelzoo_bert_text(&b, text, e);
  }
  if (gpt) {
    modelzoo_gpt g;
    int rc = modelzoo_gpt_defaults(size, &g, e);
    if (rc) return rc;
    long *const sizes[] = {&g.layers, &g.hidden, &g.heads, &g.ffn, &g.vocab, &g.max_position, &g.seq};
    const long given[] = {layers, hidden, heads, ffn, vocab, positions, seq};
    for (size_t k = 0; k < sizeof given / sizeof given[0]; k++)
      if (given[k]) *sizes[k] = given[k], g.name = NULL; /* "gpt-<layers>x<hidden>", as genmodel names it */
    g.untied = untied;
    g.eager = eager;
    g.no_dropout = nodrop;
    g.exact_gelu = exact;
    g.checkpoint = ckpt;
    g.precision = prec;
    g.amp = amp;
    g.batch = p->batch;
    return modelzoo_gpt_text(&g, text, e);
  }
  if (strcmp(tok[0], "mlstm") == 0 && !amp) {
    modelgen_mlstm m = {.hidden = hidden, .embed = 64, .vocab = 256, .seq = seq ? seq : 256, .batch = p->batch, .precision = prec,
                        .autograd_cell = autograd};
    return modelgen_mlstm_text(&m, text, e);
  }
  return err_set(e, ERR_INPUT, "genmodel: family '%s' is not resnet, bert, gpt or mlstm (mlstm without amp)", tok[0]);
}

static int load_inputs(const accuracy_point *p, model_t **m, topo_t **t, profile_t **pr, err_t *e) {
  char path[1024];
  int rc;
  if (p->genmodel[0]) {
    char *text = NULL;
    if (!(rc = generate(p, &text, e))) rc = model_parse(text, p->name, m, e);
    free(text);
  } else if (!(rc = data_resolve(DATA_MODEL, p->model, path, sizeof path, e))) {
    rc = model_load(path, m, e);
  }
  if (!rc && !(rc = data_resolve(DATA_TOPOLOGY, p->topology, path, sizeof path, e))) rc = topo_load(path, t, e);
  if (!rc && !(rc = data_resolve(DATA_PROFILE, p->profile, path, sizeof path, e))) rc = profile_load(path, pr, e);
  return rc;
}

static void predict_point(accuracy_point *p, const accuracy_set *s) {
  model_t *m = NULL;
  topo_t *t = NULL;
  profile_t *pr = NULL;
  err_t e;
  predict_result r;
  int rc = load_inputs(p, &m, &t, &pr, &e);
  if (!rc) {
    sim_config c;
    sim_config_defaults(&c);
    c.model = m;
    c.topo = t;
    c.profile = pr;
    c.nodes = p->nodes;
    c.gpus_per_node = p->gpus;
    c.batch = p->batch;
    c.precision = p->precision;
    c.no_sync = p->no_sync;
    c.mode = (sim_mode)p->mode;
    c.h2d = (sim_h2d)p->h2d;
    c.pytorch = p->pytorch;
    c.gpu_sharing = !s->no_gpu_sharing;
    if (s->no_host_costs) c.host_launch_s = c.host_dispatch_s = c.host_event_s = c.host_jitter_s = 0;
    c.framework = (sim_framework)p->framework;
    c.fsdp_units = p->fsdp_units[0] ? p->fsdp_units : NULL;
    c.fsdp_reshard = p->fsdp_reshard;
    c.fsdp_replicate = p->fsdp_replicate;
    c.fsdp_param_dtype = p->fsdp_param_dtype;
    c.fsdp_reduce_dtype = p->fsdp_reduce_dtype;
    c.backend = sim_default_backend(c.framework, c.pytorch); /* gloo for DDP before 0.4, its only one */
    if (!(rc = predict_run(&c, &r, &e))) {
      double samples = r.samples_per_s;
      p->predicted = p->metric == ACCURACY_SAMPLES ? samples
                   : p->metric == ACCURACY_TOKENS  ? r.tokens_per_s
                                                   : (double)p->iterations * p->nodes * p->gpus * p->batch / samples / 3600.0;
      p->error = (p->predicted - p->published) / p->published;
      predict_result_free(&r);
    }
  }
  p->status = rc;
  if (rc) snprintf(p->msg, sizeof p->msg, "%s", e.msg);
  model_destroy(m);
  topo_destroy(t);
  profile_destroy(pr);
}

int accuracy_run(accuracy_set *s, err_t *e) {
  (void)e;
  for (int i = 0; i < s->n; i++)
    if (!s->points[i].unsupported[0]) predict_point(&s->points[i], s);
  return ERR_OK;
}

/* ---- the summary ---- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A point the summary covers: predicted, and not an input. */
static int validated(const accuracy_point *p) { return !p->unsupported[0] && !p->fits[0] && p->status == ERR_OK; }

/* log(true / predicted time) of a validated point, or NAN when it has none. */
static double log_ratio(const accuracy_point *p) {
  if (!validated(p) || !(p->predicted > 0) || !(p->published > 0)) return NAN;
  /* error = (predicted - published) / published: a throughput's truth takes 1 + error times the
   * predicted time; hours are times already. */
  return log(p->metric == ACCURACY_HOURS ? p->published / p->predicted : p->predicted / p->published);
}

int accuracy_error_model(const accuracy_set *s, const char *profile, int precision, const char *leave_out,
                         accuracy_error *m) {
  double sum = 0, sum_kind = 0;
  memset(m, 0, sizeof *m);
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < s->n; i++) {
      const accuracy_point *p = &s->points[i];
      double l = log_ratio(p);
      if (isnan(l) || (leave_out && strcmp(p->group, leave_out) == 0)) continue;
      if (pass == 0) {
        m->all_points++, sum += l;
        if (profile && strcmp(p->profile, profile) == 0 && p->precision == precision) m->points++, sum_kind += l;
      } else {
        double d = l - sum / m->all_points;
        m->sd += d * d;
      }
    }
  if (!m->all_points) return 0;
  m->centre = m->points ? sum_kind / m->points : sum / m->all_points;
  m->sd = m->all_points > 1 ? sqrt(m->sd / (m->all_points - 1)) : 0;
  return m->all_points;
}

void accuracy_error_factors(const accuracy_error *m, double level, double *lo, double *hi) {
  *lo = *hi = 1;
  if (m->all_points < 2 || !(level > 0 && level < 1)) return;
  double n = m->all_points, w = gsl_cdf_tdist_Pinv((1 + level) / 2, n - 1) * m->sd * sqrt(1 + 1 / n);
  *lo = fmin(1.0, exp(m->centre - w));
  *hi = fmax(1.0, exp(m->centre + w));
}

static double median_of(double *v, int n) {
  if (n <= 0) return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Point i's interval at level from the other groups' points: 1 with *lo, *hi and *covered, or 0
 * (not validated, or fewer than 2 other points). */
static int loso(const accuracy_set *s, int i, double level, double *lo, double *hi, int *covered) {
  const accuracy_point *p = &s->points[i];
  double l = log_ratio(p);
  accuracy_error m;
  if (isnan(l) || accuracy_error_model(s, p->profile, p->precision, p->group, &m) < 2) return 0;
  accuracy_error_factors(&m, level, lo, hi);
  *covered = log(*lo) <= l && l <= log(*hi);
  return 1;
}

void accuracy_coverage_run(const accuracy_set *s, double level, accuracy_coverage *out) {
  memset(out, 0, sizeof *out);
  out->level = level;
  double *lo = malloc((size_t)(s->n ? s->n : 1) * 3 * sizeof *lo), *hi = lo + s->n, *width = hi + s->n;
  for (int i = 0, in; i < s->n && lo; i++) {
    int k = out->points;
    if (!loso(s, i, level, &lo[k], &hi[k], &in)) continue;
    out->points++;
    width[k] = hi[k] - lo[k];
    out->covered += in;
  }
  if (lo) {
    out->median_lo = median_of(lo, out->points);
    out->median_hi = median_of(hi, out->points);
    out->median_width = median_of(width, out->points);
  }
  free(lo);
}

/* ---- the ratios cache ---- */

/* Hashes the bytes of the file that kind/value resolves to into *h (not its path: an installed
 * program reads the same files elsewhere), once per path (seen: the paths hashed so far, *nseen
 * of them, at most 64; beyond that a file is hashed again, which is the same every time). */
static int hash_input(data_kind kind, const char *value, unsigned long long *h, char (*seen)[1024], int *nseen, err_t *e) {
  char path[1024];
  int rc = data_resolve(kind, value, path, sizeof path, e);
  if (rc) return rc;
  for (int k = 0; k < *nseen; k++)
    if (strcmp(seen[k], path) == 0) return ERR_OK;
  size_t len = 0;
  char *text = txt_read_file(path, &len);
  if (!text) return err_set(e, ERR_IO, "%s: cannot read: %s", path, strerror(errno));
  *h = fnv(*h, text, len);
  free(text);
  if (*nseen < 64) snprintf(seen[(*nseen)++], 1024, "%s", path);
  return ERR_OK;
}

int accuracy_fingerprint(const accuracy_set *s, unsigned long long *fp, err_t *e) {
  char (*seen)[1024] = malloc(64 * sizeof *seen);
  if (!seen) return err_set(e, ERR_NOMEM, "out of memory");
  int nseen = 0, rc = ERR_OK;
  const char *v = version_string();
  unsigned long long h = fnv(FNV_BASIS, v, strlen(v) + 1);
  h = fnv(h, &s->text_hash, sizeof s->text_hash);
  for (int i = 0; i < s->n && !rc; i++) {
    const accuracy_point *p = &s->points[i];
    if (p->unsupported[0]) continue;
    if (!p->genmodel[0]) rc = hash_input(DATA_MODEL, p->model, &h, seen, &nseen, e); /* a generated one is in the text */
    if (!rc) rc = hash_input(DATA_TOPOLOGY, p->topology, &h, seen, &nseen, e);
    if (!rc) rc = hash_input(DATA_PROFILE, p->profile, &h, seen, &nseen, e);
  }
  free(seen);
  *fp = h;
  return rc;
}

static void ratios_row(strbuf *b, const char *profile, const char *precision, const accuracy_error *m, unsigned long long fp) {
  strbuf_printf(b, "%s\t%s\t%d\t%.17g\t%d\t%.17g\t%016llx\n", profile, precision, m->points, m->centre, m->all_points, m->sd,
                fp);
}

char *accuracy_ratios_text(const accuracy_set *s, err_t *e) {
  unsigned long long fp;
  if (accuracy_fingerprint(s, &fp, e)) return NULL;
  strbuf b = {0};
  strbuf_printf(&b, "# ddpsim's validated error: log(true / predicted iteration time) over the published points, a row\n"
                    "# per profile and precision with points and one (*) for every point (validate/accuracy.h,\n"
                    "# docs/memory.md \"How sure\").\n"
                    "# Written by `ddpsim accuracy --ratios` (ddpsim %s) when ddpsim is built; generated, do not edit.\n" RATIOS_TAG "\n"
                    "# profile\tprecision\tpoints\tcentre\tall_points\tsd\tfingerprint\n",
                version_string());
  accuracy_error m;
  accuracy_error_model(s, NULL, 0, NULL, &m);
  m.points = m.all_points;
  ratios_row(&b, "*", "*", &m, fp);
  for (int i = 0; i < s->n; i++) {
    const accuracy_point *p = &s->points[i];
    int first = 1;
    for (int k = 0; k < i && first; k++) /* once per profile and precision */
      first = strcmp(s->points[k].profile, p->profile) || s->points[k].precision != p->precision;
    if (first && accuracy_error_model(s, p->profile, p->precision, NULL, &m) && m.points)
      ratios_row(&b, p->profile, model_dtype_name((model_dtype)p->precision), &m, fp);
  }
  char *t = strbuf_take(&b);
  if (!t) err_set(e, ERR_NOMEM, "out of memory");
  return t;
}

int accuracy_ratios_lookup(const char *text, const char *origin, const char *profile, int precision, unsigned long long fp,
                           accuracy_error *m, err_t *e) {
  int line = 0, header = 0, found = 0, all = 0;
  accuracy_error every = {0};
  for (const char *l = text; *l && !found; line++) {
    const char *end = strchr(l, '\n');
    size_t len = end ? (size_t)(end - l) : strlen(l);
    char buf[1024], *f[9];
    if (len >= sizeof buf) return err_set(e, ERR_INPUT, "%s:%d: line too long", origin, line + 1), -1;
    memcpy(buf, l, len);
    buf[len] = 0;
    l += len + (end != NULL);
    if (!buf[0] || buf[0] == '#') continue;
    if (!header) {
      if (strcmp(buf, RATIOS_TAG)) return err_set(e, ERR_INPUT, "%s:%d: expected '" RATIOS_TAG "'", origin, line + 1), -1;
      header = 1;
      continue;
    }
    int k = 0;
    for (char *save = NULL, *t = strtok_r(buf, "\t", &save); t && k < 9; t = strtok_r(NULL, "\t", &save)) f[k++] = t;
    model_dtype d = MODEL_FP32;
    long pts, apts;
    char *x, *y, *z;
    double c, sd;
    unsigned long long h;
    int star = k == 7 && strcmp(f[0], "*") == 0 && strcmp(f[1], "*") == 0;
    if (k != 7 || (!star && model_dtype_parse(f[1], &d)) || parse_int(f[2], 1, MAX_POINTS, &pts) ||
        (c = strtod(f[3], &x), *x) || !isfinite(c) || parse_int(f[4], pts, MAX_POINTS, &apts) ||
        (sd = strtod(f[5], &y), *y) || !(sd >= 0 && isfinite(sd)) || strlen(f[6]) != 16 || (h = strtoull(f[6], &z, 16), *z) ||
        (star && pts != apts))
      return err_set(e, ERR_INPUT,
                     "%s:%d: expected 'profile<TAB>precision<TAB>points<TAB>centre<TAB>all_points<TAB>sd<TAB>fingerprint' "
                     "(1 <= points <= all_points, sd >= 0; points == all_points for '*')",
                     origin, line + 1), -1;
    if (h != fp) continue;
    accuracy_error r = {.points = (int)pts, .centre = c, .all_points = (int)apts, .sd = sd};
    if (star) every = r, every.points = 0, all = 1;
    else if (strcmp(f[0], profile) == 0 && (int)d == precision) *m = r, found = 1;
  }
  if (!header) return err_set(e, ERR_INPUT, "%s: no '" RATIOS_TAG "' line", origin), -1;
  if (!found && all) *m = every, found = 1;
  return found;
}

void accuracy_summarize(const accuracy_set *s, accuracy_summary *out) {
  memset(out, 0, sizeof *out);
  out->points = s->n;
  out->worst = -1;
  double *abs_err = malloc((size_t)(s->n ? s->n : 1) * sizeof *abs_err);
  for (int i = 0; i < s->n; i++) {
    const accuracy_point *p = &s->points[i];
    int first = 1;
    for (int j = 0; j < i; j++) first &= strcmp(s->points[j].group, p->group) != 0;
    out->groups += first;
    if (p->unsupported[0]) out->unsupported++;
    else if (p->status) out->failed++;
    else if (p->fits[0]) out->inputs++;
    if (!validated(p)) continue;
    double a = fabs(p->error);
    if (abs_err) abs_err[out->validated] = a;
    out->validated++;
    out->mean_signed += p->error;
    if (a > 0.25) out->above_25++;
    if (out->worst < 0 || a > out->worst_abs) out->worst_abs = a, out->worst = i;
  }
  if (out->validated) {
    out->mean_signed /= out->validated;
    if (abs_err) out->median_abs = median_of(abs_err, out->validated);
  }
  free(abs_err);
  accuracy_coverage_run(s, ACCURACY_LEVEL, &out->coverage);
}

/* ---- reports ---- */

static const char *kind(const accuracy_point *p) {
  return p->unsupported[0] ? "unsupported" : p->status ? "failed" : p->fits[0] ? "input" : "validation";
}

static void summary_lines(strbuf *b, const accuracy_summary *sum, const char *prefix) {
  strbuf_printf(b, "%s%d points from %d independent sources: %d validated, %d inputs of a bundled profile (not counted), %d unsupported, %d failed\n",
                prefix, sum->points, sum->groups, sum->validated, sum->inputs, sum->unsupported, sum->failed);
  if (sum->validated)
    strbuf_printf(b, "%smedian |error| %.1f%%, worst %.1f%%, mean signed error %+.1f%%, %d above 25%%\n", prefix,
                  100 * sum->median_abs, 100 * sum->worst_abs, 100 * sum->mean_signed, sum->above_25);
  const accuracy_coverage *c = &sum->coverage;
  if (c->points)
    strbuf_printf(b, "%scoverage, leave-one-source-out: the %.0f%% validated interval from the other sources' points holds %d of %d "
                     "(%.1f%%); median interval %.3f .. %.3f of the prediction (width %.3f)\n",
                  prefix, 100 * c->level, c->covered, c->points, 100.0 * c->covered / c->points, c->median_lo, c->median_hi,
                  c->median_width);
}

char *accuracy_table(const accuracy_set *s, const accuracy_summary *sum) {
  strbuf b = {0};
  strbuf_printf(&b, "# %-30s %12s %12s %-11s %8s  %s\n", "point", "published", "predicted", "unit", "error", "kind");
  for (int i = 0; i < s->n; i++) {
    const accuracy_point *p = &s->points[i];
    if (p->unsupported[0] || p->status)
      strbuf_printf(&b, "  %-30s %12.6g %12s %-11s %8s  %s: %s\n", p->name, p->published, "-", p->unit, "-", kind(p),
                    p->unsupported[0] ? p->unsupported : p->msg);
    else
      strbuf_printf(&b, "  %-30s %12.6g %12.6g %-11s %+7.1f%%  %s\n", p->name, p->published, p->predicted, p->unit,
                    100 * p->error, kind(p));
  }
  summary_lines(&b, sum, "# ");
  return strbuf_take(&b);
}

/* What ddpsim predicts for the point: "`genmodel resnet ...` v100-dgx1v, dgx1v-ib, 1 x 8, batch
 * 256, fp16[, no_sync K][, mode flat][, pytorch R][, loader L][, dp | fsdp[ units U][ reshard_after_forward false]
 * [ replicate R][ param_dtype D][ reduce_dtype D]]" (the model in backquotes when quoted). */
static void scenario(strbuf *b, const accuracy_point *p, int quoted) {
  const char *q = quoted ? "`" : "";
  strbuf_printf(b, "%s%s%s%s %s, %s, %d x %d, batch %ld, %s", q, p->genmodel[0] ? "genmodel " : "",
                p->genmodel[0] ? p->genmodel : p->model, q, p->profile, p->topology, p->nodes, p->gpus, p->batch,
                model_dtype_name((model_dtype)p->precision));
  if (p->no_sync > 1) strbuf_printf(b, ", no_sync %d", p->no_sync);
  if (p->mode == SIM_MODE_FLAT) strbuf_printf(b, ", mode flat");
  if (p->pytorch > 0) {
    char rel[32];
    strbuf_printf(b, ", pytorch %s", reducer_version_name(p->pytorch, rel, sizeof rel));
  }
  if (p->h2d != SIM_H2D_AUTO) strbuf_printf(b, ", loader %s", sim_h2d_name((sim_h2d)p->h2d));
  if (p->framework != SIM_FRAMEWORK_DDP) strbuf_printf(b, ", %s", sim_framework_name((sim_framework)p->framework));
  if (p->framework != SIM_FRAMEWORK_FSDP) return;
  if (p->fsdp_units[0]) strbuf_printf(b, " units %s", p->fsdp_units);
  if (!p->fsdp_reshard) strbuf_printf(b, " reshard_after_forward false");
  if (p->fsdp_replicate > 1) strbuf_printf(b, " replicate %d", p->fsdp_replicate);
  if (p->fsdp_param_dtype >= 0) strbuf_printf(b, " param_dtype %s", model_dtype_name((model_dtype)p->fsdp_param_dtype));
  if (p->fsdp_reduce_dtype >= 0) strbuf_printf(b, " reduce_dtype %s", model_dtype_name((model_dtype)p->fsdp_reduce_dtype));
}

cJSON *accuracy_json(const accuracy_set *s, const accuracy_summary *sum) {
  cJSON *j = cJSON_CreateObject(), *pts = cJSON_AddArrayToObject(j, "points"), *o = cJSON_AddObjectToObject(j, "summary");
  cJSON_AddStringToObject(j, "file", s->path);
  for (int i = 0; i < s->n; i++) {
    const accuracy_point *p = &s->points[i];
    cJSON *q = cJSON_CreateObject();
    cJSON_AddItemToArray(pts, q);
    cJSON_AddStringToObject(q, "name", p->name);
    cJSON_AddStringToObject(q, "kind", kind(p));
    cJSON_AddStringToObject(q, "group", p->group);
    cJSON_AddStringToObject(q, "source", p->source);
    cJSON_AddStringToObject(q, "hardware", p->hardware);
    cJSON_AddStringToObject(q, "software", p->software);
    cJSON_AddStringToObject(q, "setup", p->setup);
    cJSON_AddStringToObject(q, "unit", p->unit);
    cJSON_AddNumberToObject(q, "published", p->published);
    strbuf sc = {0};
    scenario(&sc, p, 0);
    cJSON_AddStringToObject(q, "scenario", sc.buf ? sc.buf : "");
    free(sc.buf);
    if (p->fits[0]) cJSON_AddStringToObject(q, "fits", p->fits);
    if (p->unsupported[0]) cJSON_AddStringToObject(q, "unsupported", p->unsupported);
    else if (p->status) cJSON_AddStringToObject(q, "error_message", p->msg);
    else {
      cJSON_AddNumberToObject(q, "predicted", p->predicted);
      cJSON_AddNumberToObject(q, "error", p->error);
      double lo, hi;
      int in;
      if (loso(s, i, sum->coverage.level, &lo, &hi, &in)) {
        cJSON *c = cJSON_AddObjectToObject(q, "left_out");
        cJSON_AddNumberToObject(c, "lo_factor", lo);
        cJSON_AddNumberToObject(c, "hi_factor", hi);
        cJSON_AddBoolToObject(c, "covered", in);
      }
    }
  }
  cJSON_AddNumberToObject(o, "points", sum->points);
  cJSON_AddNumberToObject(o, "sources", sum->groups);
  cJSON_AddNumberToObject(o, "validated", sum->validated);
  cJSON_AddNumberToObject(o, "inputs", sum->inputs);
  cJSON_AddNumberToObject(o, "unsupported", sum->unsupported);
  cJSON_AddNumberToObject(o, "failed", sum->failed);
  cJSON_AddNumberToObject(o, "median_abs_error", sum->median_abs);
  cJSON_AddNumberToObject(o, "worst_abs_error", sum->worst_abs);
  cJSON_AddStringToObject(o, "worst", sum->worst >= 0 ? s->points[sum->worst].name : "");
  cJSON_AddNumberToObject(o, "mean_signed_error", sum->mean_signed);
  cJSON_AddNumberToObject(o, "above_25_percent", sum->above_25);
  cJSON *c = cJSON_AddObjectToObject(o, "coverage");
  cJSON_AddNumberToObject(c, "level", sum->coverage.level);
  cJSON_AddNumberToObject(c, "points", sum->coverage.points);
  cJSON_AddNumberToObject(c, "covered", sum->coverage.covered);
  cJSON_AddNumberToObject(c, "median_lo_factor", sum->coverage.median_lo);
  cJSON_AddNumberToObject(c, "median_hi_factor", sum->coverage.median_hi);
  cJSON_AddNumberToObject(c, "median_width", sum->coverage.median_width);
  return j;
}

/* Markdown cells may not hold '|'. */
static void cell(strbuf *b, const char *t) {
  for (size_t n; *t; t += n + (t[n] == '|')) {
    n = strcspn(t, "|");
    strbuf_printf(b, "%.*s%s", (int)n, t, t[n] == '|' ? "/" : "");
  }
}

char *accuracy_markdown(const accuracy_set *s, const accuracy_summary *sum) {
  strbuf b = {0};
  summary_lines(&b, sum, "");
  strbuf_printf(&b, "\n| point | source | hardware | software | setup | scenario | published | predicted | error | kind |\n"
                    "|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < s->n; i++) {
    const accuracy_point *p = &s->points[i];
    strbuf_printf(&b, "| %s | ", p->name);
    if (strncmp(p->source, "https://", 8) == 0) {
      strbuf_printf(&b, "[%s](", p->group);
      cell(&b, p->source);
      strbuf_printf(&b, ")");
    } else {
      strbuf_printf(&b, "%s: ", p->group);
      cell(&b, p->source);
    }
    strbuf_printf(&b, " | ");
    cell(&b, p->hardware);
    strbuf_printf(&b, " | ");
    cell(&b, p->software);
    strbuf_printf(&b, " | ");
    cell(&b, p->setup);
    strbuf_printf(&b, " | ");
    scenario(&b, p, 1);
    strbuf_printf(&b, " | %.6g %s | ", p->published, p->unit);
    if (p->unsupported[0] || p->status) {
      strbuf_printf(&b, "- | - | %s: ", kind(p));
      cell(&b, p->unsupported[0] ? p->unsupported : p->msg);
      strbuf_printf(&b, " |\n");
    } else {
      strbuf_printf(&b, "%.4g | %+.1f%% | %s", p->predicted, 100 * p->error, kind(p));
      if (p->fits[0]) {
        strbuf_printf(&b, ": fits ");
        cell(&b, p->fits);
      }
      strbuf_printf(&b, " |\n");
    }
  }
  return strbuf_take(&b);
}
