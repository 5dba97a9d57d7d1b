/* validate: predictions against real runs. Contracts in validate.h; docs/validation.md. */
#include "validate.h"

#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model.h"
#include "modelgen.h"
#include "ncclmodel.h"
#include "profile.h"
#include "strbuf.h"
#include "topo.h"
#include "version.h"

void validate_opts_defaults(validate_opts *o) {
  memset(o, 0, sizeof *o);
  o->mpirun = "mpirun";
  o->hidden = 256, o->embed = 64, o->vocab = 256, o->seq = 8, o->batch = 4;
  o->iters = 30, o->warmups = 5, o->repeats = 1;
  o->rebuilt = 1;
  o->max_drift = 0.10, o->drift_retries = 2;
  o->optimizer_sgd = 0; /* Adam, the optimizer of the bundled mLSTM model files */
  long nprocs[8];
  double caps[32];
  int nn = 0, nc = 0;
  char *end;
  for (const char *s = VALIDATE_NPROCS; *s && nn < 8; s = end + (*end == ',')) nprocs[nn++] = strtol(s, &end, 10);
  for (const char *s = VALIDATE_CAPS_MB; *s && nc < 32; s = end + (*end == ',')) caps[nc++] = strtod(s, &end);
  err_t e;
  (void)validate_set_configs(o, nprocs, nn, caps, nc, 1, 1, 0, &e); /* 8 configurations: never too many */
}

int validate_set_configs(validate_opts *o, const long *nprocs, int nn, const double *caps, int nc, int ddp, int flat,
                         double first_mb, err_t *e) {
  double maxcap = 0;
  for (int i = 0; i < nc; i++) maxcap = fmax(maxcap, caps[i]);
  o->nconfigs = 0;
  for (int p = 0; p < nn; p++) {
    int np = (int)nprocs[p];
    for (int i = 0; ddp && i < nc; i++) {
      if (np == 1 && caps[i] != maxcap) continue;
      if (o->nconfigs == VALIDATE_MAX_CONFIGS) return err_set(e, ERR_USAGE, "too many configurations");
      o->configs[o->nconfigs++] = (validate_config){np, SIM_MODE_DDP, caps[i], first_mb > 0 ? first_mb : caps[i]};
    }
    if (flat) {
      if (o->nconfigs == VALIDATE_MAX_CONFIGS) return err_set(e, ERR_USAGE, "too many configurations");
      o->configs[o->nconfigs++] = (validate_config){np, SIM_MODE_FLAT, 0, 0};
    }
  }
  return ERR_OK;
}

void validate_config_label(const validate_config *c, char *buf, size_t len) {
  if (c->mode == SIM_MODE_FLAT) snprintf(buf, len, "%dp flat", c->nprocs);
  else if (c->first_mb == c->cap_mb) snprintf(buf, len, "%dp ddp %gMB", c->nprocs, c->cap_mb);
  else snprintf(buf, len, "%dp ddp %gMB/%gMB", c->nprocs, c->cap_mb, c->first_mb);
}

void validate_report_free(validate_report *r) {
  if (!r) return;
  for (int i = 0; i < r->nrows; i++) free(r->rows[i].buckets);
  free(r->rows);
  free(r->repeats);
  memset(r, 0, sizeof *r);
}

static void say(validate_progress_fn f, void *user, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(validate_progress_fn f, void *user, const char *fmt, ...) {
  if (!f) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  f(line, user);
}

/* ---- subprocesses --------------------------------------------------------------------------- */

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  for (size_t n; buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
    len += n;
    if (cap - len < 2) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) free(buf);
      buf = nb;
    }
  }
  fclose(f);
  if (buf) buf[len] = 0;
  return buf;
}

/* The last non-empty line of a file, for error messages. */
/* The reason a child gave, from its stderr: the last line our own programs wrote ("ddpcalib ...:",
 * "ddpsim ...:"), else, for mpirun's refusal to run as root, what to set; else the last line that
 * is not a banner of dashes (mpirun frames its messages with them). */
static void last_line(const char *path, char *out, size_t len) {
  char *t = slurp(path);
  out[0] = 0;
  if (!t) return;
  const char *ours = NULL, *plain = NULL;
  int root = strstr(t, "as root") != NULL; /* mpirun: "an attempt to run as root" */
  for (char *l = t, *next; l; l = next) {
    next = strchr(l, '\n');
    if (next) *next++ = 0;
    size_t n = strlen(l);
    while (n && (l[n - 1] == '\r' || l[n - 1] == ' ')) l[--n] = 0;
    if (!strncmp(l, "ddpcalib ", 9) || !strncmp(l, "ddpsim ", 7)) ours = l;
    if (n && strspn(l, "- \t") != n) plain = l;
  }
  if (ours) snprintf(out, len, "%s", ours);
  else if (root)
    snprintf(out, len, "mpirun refuses to run as root: export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                       "(README.md, \"Running as root\")");
  else snprintf(out, len, "%s", plain ? plain : "");
  free(t);
}

/* Runs argv with stdout and stderr to workdir/tag.out and .err, OPENBLAS_NUM_THREADS=1 (one BLAS
 * thread per process, so processes do not fight over the cores). *out gets stdout (caller frees)
 * if out is non-NULL. */
static int run_cmd(const char *workdir, const char *tag, char *const argv[], char **out, err_t *e) {
  char po[1200], pe[1200];
  snprintf(po, sizeof po, "%s/%s.out", workdir, tag);
  snprintf(pe, sizeof pe, "%s/%s.err", workdir, tag);
  if (out) *out = NULL;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return err_set(e, ERR_IO, "cannot start %s: %s", argv[0], strerror(errno));
  if (pid == 0) {
    int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fo < 0 || fe < 0) _exit(126);
    dup2(fo, 1), dup2(fe, 2);
    close(fo), close(fe);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    execvp(argv[0], argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return err_set(e, ERR_IO, "waiting for %s: %s", argv[0], strerror(errno));
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    char ll[400];
    last_line(pe, ll, sizeof ll);
    char cmd[600] = "";
    for (int i = 0; argv[i] && strlen(cmd) < 400; i++) {
      strncat(cmd, i ? " " : "", sizeof cmd - strlen(cmd) - 1);
      strncat(cmd, argv[i], sizeof cmd - strlen(cmd) - 1);
    }
    if (WIFEXITED(st))
      return err_set(e, ERR_IO, "`%s` exited with %d: %s (output in %s)", cmd, WEXITSTATUS(st), ll[0] ? ll : "no message", pe);
    return err_set(e, ERR_IO, "`%s` was killed by signal %d (output in %s)", cmd, WTERMSIG(st), pe);
  }
  if (out && !(*out = slurp(po))) return err_set(e, ERR_IO, "%s: cannot read", po);
  return ERR_OK;
}

/* ---- calibration ---------------------------------------------------------------------------- */

/* ddpcalib compute at the model's own GEMM shapes at (H, B, T), a GEMM grid and copies: seconds at
 * these sizes. `rt` names the files (compute_<rt>.json, calib_compute_<rt>.out/.err). */
static int calib_compute(const validate_opts *o, const char *rt, validate_progress_fn pf, void *user, char *compute,
                         size_t len, err_t *e) {
  char H[32], B[32], T[32], tag[64];
  snprintf(H, sizeof H, "%ld", o->hidden);
  snprintf(B, sizeof B, "%ld", o->batch);
  snprintf(T, sizeof T, "%ld", o->seq);
  snprintf(compute, len, "%s/compute_%s.json", o->workdir, rt);
  snprintf(tag, sizeof tag, "calib_compute_%s", rt);
  char *a1[] = {(char *)o->ddpcalib, "compute", "--backend", "cpu", "--hidden", H, "--batch", B, "--seq", T,
                "-n", "30", "-w", "3", "--gemm-max", "256", "-o", compute,
                o->accept_poor_fit ? "--accept-poor-fit" : NULL, NULL};
  say(pf, user, "calibrating compute: %s compute --backend cpu --hidden %s --batch %s --seq %s", o->ddpcalib, H, B, T);
  return run_cmd(o->workdir, tag, a1, NULL, e);
}

/* ddpcalib merge of a compute and a comm calibration into profile_<rt>.json. */
static int calib_merge(const validate_opts *o, const char *rt, const char *compute, const char *comm, char *profile,
                       size_t len, err_t *e) {
  char tag[64];
  snprintf(profile, len, "%s/profile_%s.json", o->workdir, rt);
  snprintf(tag, sizeof tag, "calib_merge_%s", rt);
  char *a3[] = {(char *)o->ddpcalib, "merge", (char *)compute, (char *)comm, "-o", profile, NULL};
  return run_cmd(o->workdir, tag, a3, NULL, e);
}

/* The whole calibration of one attempt of a repeat (`rt` "r0", "r0_a1", ...): compute, comm,
 * merged into *profile; *compute and *comm get the two files (the drift check reuses them). */
static int calibrate(const validate_opts *o, const char *rt, validate_progress_fn pf, void *user, char *profile,
                     size_t len, char *compute, char *comm, size_t plen, err_t *e) {
  char tag[64];
  int rc = calib_compute(o, rt, pf, user, compute, plen, e);
  if (rc) return rc;
  snprintf(comm, plen, "%s/comm_%s.json", o->workdir, rt);
  snprintf(tag, sizeof tag, "calib_comm_%s", rt);
  /* The all-reduce between two processes of this host, from below the smallest bucket to above
   * the whole gradient. */
  char *a2[] = {(char *)o->mpirun, "-np", "2", "--oversubscribe", (char *)o->ddpcalib, "comm", "--backend", "mpi",
                "-b", "1K", "-e", "8M", "-f", "2", "-n", "20", "-w", "5", "--link-class", "shm", "-o", comm,
                o->accept_poor_fit ? "--accept-poor-fit" : NULL, NULL};
  say(pf, user, "calibrating communication: %s -np 2 %s comm --backend mpi -b 1K -e 8M", o->mpirun, o->ddpcalib);
  if ((rc = run_cmd(o->workdir, tag, a2, NULL, e))) return rc;
  return calib_merge(o, rt, compute, comm, profile, len, e);
}

/* ---- prediction ----------------------------------------------------------------------------- */


/* Appends the first len characters of line without its " launches=N" token: the generated file
 * counts the kernels a PyTorch cell launches, while kernels/ runs each op as one fused call. */
static void put_fused(strbuf *out, const char *line, int len) {
  const char *l = strstr(line, " launches=");
  if (!l || l - line >= len) {
    strbuf_printf(out, "%.*s", len, line);
    return;
  }
  const char *after = l + 10;
  while (after < line + len && *after >= '0' && *after <= '9') after++;
  strbuf_printf(out, "%.*s%.*s", (int)(l - line), line, (int)(line + len - after), after);
}

/* Elements of an mLSTM parameter, by its name in the model file; 0 if unknown. */
static long param_numel(const validate_opts *o, const char *name, size_t len) {
  long H = o->hidden, E = o->embed, V = o->vocab;
  const struct {
    const char *n;
    long v;
  } t[] = {{"encoder.weight", V * E}, {"decoder.weight", V * H}, {"decoder.bias", V}, {"b_ih", 4 * H},
           {"b_hh", 4 * H},           {"w_ih_g", 4 * H},        {"w_ih_v", 4 * H * E}, {"w_hh_g", 4 * H},
           {"w_hh_v", 4 * H * H},     {"w_mih_g", H},           {"w_mih_v", H * E},  {"w_mhh_g", H},
           {"w_mhh_v", H * H}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (strlen(t[i].n) == len && strncmp(t[i].n, name, len) == 0) return t[i].v;
  return 0;
}

/* The mLSTM as ddpsim sees it (modelgen), plus the work the real run does that ddpsim does not
 * model by itself (docs/simulation.md: the copies of gradients into buckets), written as ops so
 * the profile prices them:
 *   ddp:  each gradient-ready op's gradients are copied (and divided by the world size) into their
 *         bucket before the bucket counts them: an ewise op of 2 arrays after the op, carrying its
 *         ready= list; the reduced buckets copied back before the optimizer (2 arrays of P);
 *   flat: nothing (ddpsim's flat mode prices the flatten, division and copy back itself, on more
 *         than one process; on one, sentiment-discovery's wrapper does not run).
 * With SGD the optimizer op is SGD's: read p, g; write p (3 arrays of P). */
static int make_model(const validate_opts *o, sim_mode mode, model_t **m, err_t *e) {
  modelgen_mlstm spec = {.name = "mlstm-validate", .hidden = o->hidden, .embed = o->embed, .vocab = o->vocab,
                         .seq = o->seq, .batch = o->batch, .precision = MODEL_FP32, .kernels_order = 1};
  char *text;
  int rc = modelgen_mlstm_text(&spec, &text, e);
  if (rc) return rc;
  long H = o->hidden, E = o->embed, V = o->vocab;
  long P = V * E + V * H + V + 8 * H + 4 * H * (E + 1) + 4 * H * (H + 1) + H * (E + 1) + H * (H + 1);
  strbuf out = {0};
  int section = 0; /* 1 forward, 2 backward, 3 optimizer */
  for (char *line = text, *next; line && *line; line = next) {
    char *nl = strchr(line, '\n');
    next = nl ? nl + 1 : NULL;
    int len = nl ? (int)(nl - line) : (int)strlen(line);
    if (strncmp(line, "forward", 7) == 0) section = 1;
    else if (strncmp(line, "backward", 8) == 0) section = 2;
    else if (strncmp(line, "optimizer", 9) == 0) section = 3;
    if (section == 3 && strncmp(line, "optimizer", 9) == 0) {
      strbuf_printf(&out, "%.*s\n", len, line);
      if (mode == SIM_MODE_DDP)
        strbuf_printf(&out, "ewise ddp_copy_back elems=%ld arrays=2 dtype=fp32   # reduced buckets into .grad\n", P);
      if (o->optimizer_sgd) {
        strbuf_printf(&out, "ewise sgd elems=%ld arrays=3 dtype=fp32   # p -= lr g\n", P);
        break; /* modelgen's Adam op is all that follows */
      }
      continue;
    }
    const char *ready = section == 2 && mode == SIM_MODE_DDP ? strstr(line, " ready=") : NULL;
    if (ready && ready - line < len) {
      /* The op without its ready list, then the copy that makes the gradients count. */
      const char *list = ready + 7;
      int llen = 0;
      while (list + llen < line + len && list[llen] != ' ' && list[llen] != '\t' && list[llen] != '#') llen++;
      long numel = 0;
      for (const char *p = list; p < list + llen;) {
        const char *c = memchr(p, ',', (size_t)(list + llen - p));
        size_t n = c ? (size_t)(c - p) : (size_t)(list + llen - p);
        long k = param_numel(o, p, n);
        if (k == 0) {
          free(text), strbuf_free(&out);
          return err_set(e, ERR_INPUT, "the generated model names an unknown parameter '%.*s'", (int)n, p);
        }
        numel += k;
        p += n + (c ? 1 : 0);
      }
      put_fused(&out, line, (int)(ready - line));
      strbuf_printf(&out, "%.*s\n", (int)(line + len - (list + llen)), list + llen);
      strbuf_printf(&out, "ewise ddp_copy elems=%ld arrays=2 ready=%.*s   # into the bucket, / world size\n", numel, llen, list);
      continue;
    }
    put_fused(&out, line, len);
    strbuf_printf(&out, "\n");
  }
  free(text);
  char *model_text = strbuf_take(&out);
  if (!model_text) return err_set(e, ERR_NOMEM, "out of memory");
  rc = model_parse(model_text, "<ddpsim validate model>", m, e);
  if (rc == ERR_OK && o->workdir) { /* kept beside the other inputs, for a reader to check */
    char path[1100];
    snprintf(path, sizeof path, "%s/model_%s.model", o->workdir, sim_mode_name(mode));
    FILE *f = fopen(path, "w");
    if (f) fputs(model_text, f), fclose(f);
  }
  free(model_text);
  return rc;
}

static int make_topo(int nprocs, topo_t **t, err_t *e) {
  char text[512];
  /* N processes on one host; the profile's comm.links.shm gives the effective numbers (its bw_Bps
   * wins over the nominal figure here). */
  snprintf(text, sizeof text,
           "ddpsim-topology 1\nname local-%dp\ngpus_per_node %d\nintra shm links=1 bw=10GBps\nnic none\n", nprocs,
           nprocs);
  return topo_parse(text, "<ddpsim validate topology>", t, e);
}

static double num(const cJSON *o, const char *key);

/* ---- elementwise costs from the timed mLSTM phases ------------------------------------------ */

/* Which phase of kernels/ (ddpcalib compute's names) each op of the generated model runs in. Ops of
 * fwd_step and bwd_step run once per time step (count T in the model), as the phases are timed. */
static const struct {
  const char *op, *phase;
} op_phase[] = {
    {"embed", "prepare"},         {"weight_norm", "prepare"},   {"x_ih", "prepare"},       {"x_mih", "prepare"},
    {"mhh_h", "fwd_step"},        {"m_mul", "fwd_step"},        {"hh_m", "fwd_step"},      {"gates", "fwd_step"},
    {"decoder", "decoder_fwd"},   {"softmax_xent", "decoder_fwd"},
    {"d_logits", "decoder_bwd"},  {"d_dec_w", "decoder_bwd"},   {"d_dec_b", "decoder_bwd"}, {"d_h_dec", "decoder_bwd"},
    {"d_gates", "bwd_step"},      {"d_m", "bwd_step"},          {"d_m_mul", "bwd_step"},   {"d_h", "bwd_step"},
    {"d_w_hh", "wgrad"},          {"wn_hh_bwd", "wgrad"},       {"d_w_mhh", "wgrad"},      {"wn_mhh_bwd", "wgrad"},
    {"d_w_ih", "wgrad"},          {"wn_ih_bwd", "wgrad"},       {"d_w_mih", "wgrad"},      {"wn_mih_bwd", "wgrad"},
    {"d_bias", "wgrad"},          {"d_x_ih", "embed_grad"},     {"d_x_mih", "embed_grad"}, {"d_embed", "embed_grad"},
};

static const char *phase_of(const char *op) {
  for (size_t i = 0; i < sizeof op_phase / sizeof op_phase[0]; i++)
    if (strcmp(op_phase[i].op, op) == 0) return op_phase[i].phase;
  return NULL;
}

/* Median time of the sample named `op` in a samples array whose H, B, T (and m, n, k for GEMMs,
 * when m > 0) match; NAN if absent. */
static double sample_time(const cJSON *arr, const char *op, long H, long B, long T, long m, long n, long k) {
  const cJSON *x;
  cJSON_ArrayForEach(x, arr) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(x, "op");
    if (!cJSON_IsString(name) || strcmp(name->valuestring, op) != 0) continue;
    if (num(x, "H") != H || num(x, "B") != B || num(x, "T") != T) continue;
    if (m > 0 && (num(x, "m") != m || num(x, "n") != n || num(x, "k") != k)) continue;
    return num(x, "median_s");
  }
  return NAN;
}

/* Writes to `out` the profile `in` with compute.fp32.ewise replaced by a roofline whose bandwidth is
 * this CPU's effective elementwise rate, derived from the profile's own mLSTM phase samples
 * (validate.h): the elementwise time of an iteration (every phase minus its GEMMs, the per-step
 * phases T times) over the elementwise bytes of the same ops. One rate for every elementwise op:
 * per-phase rates are noisy (a phase of 0.1 ms minus GEMMs timed at another moment), and a table
 * keyed by bytes cannot tell apart ops of equal size in different phases. ERR_INPUT if the profile
 * lacks the samples at this (H, B, T). *rate_Bps gets the rate. */
static int derive_ewise(const char *in, const char *out, const validate_opts *o, const model_t *m, double *rate_Bps,
                        err_t *e) {
  char *text = slurp(in);
  if (!text) return err_set(e, ERR_IO, "%s: cannot read", in);
  cJSON *doc = cJSON_Parse(text);
  free(text);
  if (!doc) return err_set(e, ERR_INPUT, "%s: not JSON", in);
  int rc = ERR_OK;
  cJSON *samples = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(doc, "samples"), "compute"), "fp32");
  const cJSON *ph = cJSON_GetObjectItemCaseSensitive(samples, "mlstm"), *gm = cJSON_GetObjectItemCaseSensitive(samples, "gemm");
  cJSON *fp32 = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "compute"), "fp32");
  if (!cJSON_IsArray(ph) || !cJSON_IsArray(gm) || !cJSON_IsObject(fp32)) {
    rc = err_set(e, ERR_INPUT, "%s: no samples.compute.fp32.mlstm/gemm to derive elementwise costs from (use --ewise memcpy)",
                 in);
    goto done;
  }
  static const char *phases[] = {"prepare", "fwd_step", "decoder_fwd", "decoder_bwd", "bwd_step", "wgrad", "embed_grad"};
  double resid_s = 0, bytes = 0;
  for (size_t p = 0; p < sizeof phases / sizeof phases[0]; p++) {
    double tp = sample_time(ph, phases[p], o->hidden, o->batch, o->seq, 0, 0, 0);
    if (!(tp > 0)) {
      rc = err_set(e, ERR_INPUT, "%s: no timing of the mLSTM phase %s at H %ld, B %ld, T %ld (use --ewise memcpy)", in,
                   phases[p], o->hidden, o->batch, o->seq);
      goto done;
    }
    double reps = strcmp(phases[p], "fwd_step") == 0 || strcmp(phases[p], "bwd_step") == 0 ? (double)o->seq : 1;
    double gemm = 0;
    for (int i = 0; i < m->nops; i++) {
      const model_op *op = &m->ops[i];
      const char *opp = phase_of(op->name);
      if (!opp || strcmp(opp, phases[p]) != 0) continue;
      if (op->kind == MODEL_OP_GEMM) {
        double t = sample_time(gm, op->name, o->hidden, o->batch, o->seq, model_dim_value(op->m, o->batch),
                               model_dim_value(op->n, o->batch), model_dim_value(op->k, o->batch));
        if (!(t > 0)) {
          rc = err_set(e, ERR_INPUT, "%s: no timing of the GEMM %s at the model's shape (use --ewise memcpy)", in, op->name);
          goto done;
        }
        gemm += t;
      } else {
        bytes += reps * model_op_bytes(op, o->batch, MODEL_FP32);
      }
    }
    resid_s += reps * (tp - gemm);
  }
  if (!(resid_s > 0) || !(bytes > 0)) {
    rc = err_set(e, ERR_INPUT, "%s: the timed GEMMs account for all of the mLSTM phases; no elementwise rate (use --ewise memcpy)",
                 in);
    goto done;
  }
  *rate_Bps = bytes / resid_s;
  cJSON *ew = cJSON_CreateObject();
  if (!ew) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto done;
  }
  cJSON_AddStringToObject(ew, "model", "roofline");
  cJSON_AddNumberToObject(ew, "launch_s", 0);
  cJSON_AddNumberToObject(ew, "mem_bw_Bps", *rate_Bps);
  cJSON_AddNumberToObject(ew, "mem_efficiency", 1);
  cJSON_AddStringToObject(ew, "source",
                          "ddpsim validate: the timed mLSTM phases (samples.compute.fp32.mlstm) minus their timed GEMMs "
                          "(samples.compute.fp32.gemm), over the bytes of the phases' elementwise ops");
  if (cJSON_GetObjectItemCaseSensitive(fp32, "ewise")) cJSON_ReplaceItemInObjectCaseSensitive(fp32, "ewise", ew);
  else cJSON_AddItemToObject(fp32, "ewise", ew);
  char *js = version_stamp(doc) == 0 ? cJSON_Print(doc) : NULL;
  FILE *f = js ? fopen(out, "w") : NULL;
  if (!js) rc = err_set(e, ERR_NOMEM, "out of memory");
  else if (!f || fputs(js, f) < 0) rc = err_set(e, ERR_IO, "%s: cannot write", out);
  if (f && fclose(f) != 0 && !rc) rc = err_set(e, ERR_IO, "%s: cannot write", out);
  free(js);
done:
  cJSON_Delete(doc);
  return rc;
}

/* One prediction and one real run of a configuration (one repeat). */
typedef struct {
  double pred_s, pf, pb, po, pe; /* iteration, forward, backward, optimizer, exposed comm */
  double *pbt;                   /* (nb * 3) predicted ready, start, end */
  size_t *pbytes;                /* (nb) */
  int pnb;
  double iter_s, iqr_rel, fwd, bwd, wait, step, chars_per_s, cpu_share;
  double *bt; /* (nb * 3) measured ready, start, end */
  size_t *bytes;
  int nb;
} sample;

static void sample_free(sample *s) {
  free(s->pbt), free(s->pbytes), free(s->bt), free(s->bytes);
}

static int predict(const validate_config *vc, const validate_opts *o, const model_t *m, const profile_t *prof,
                   sample *sm, err_t *e) {
  topo_t *t = NULL;
  int rc = make_topo(vc->nprocs, &t, e);
  if (rc) return rc;
  sim_config c;
  sim_config_defaults(&c);
  c.model = m;
  c.topo = t;
  c.profile = prof;
  c.nodes = 1;
  c.gpus_per_node = vc->nprocs;
  c.batch = o->batch;
  c.precision = MODEL_FP32;
  c.mode = vc->mode;
  c.bucket_cap_mb = vc->mode == SIM_MODE_DDP ? vc->cap_mb : REDUCER_DEFAULT_CAP_MB;
  c.first_bucket_mb = vc->mode == SIM_MODE_DDP ? vc->first_mb : REDUCER_FIRST_BUCKET_MB;
  c.layout = o->rebuilt ? SIM_LAYOUT_REBUILT : SIM_LAYOUT_CONSTRUCTION; /* as calib/train.c builds them */
  c.bucket_view = 1; /* DDP's bucket copies are ops of the model file built above (every process count);
                      * flat mode's are ddpsim's own */
  c.fidelity = SIM_FIDELITY_FLOW;
  c.iterations = 3;
  /* No compute jitter: ddpcalib's jitter ratios, from ten whole iterations on a machine shared with
   * other work, mostly record that work; the comparison is of the expected iteration. */
  c.jitter_cv = 0;
  /* MPI is not NCCL: a plain ring (what ddpcalib comm fitted), whatever the profile carries. */
  c.nccl_algos = 1u << NCCL_ALGO_RING;
  c.nccl_protos = 1u << NCCL_PROTO_SIMPLE;
  /* The real run makes its tokens before the iteration's clock starts, on the CPU: no loading, no
   * host-to-device copy. */
  c.h2d = SIM_H2D_OFF;
  c.load_s = 0;
  sim_result r;
  if ((rc = sim_run(&c, &r, e))) {
    topo_destroy(t);
    return rc;
  }
  sm->pred_s = r.iteration_s;
  sm->pf = r.forward_s, sm->pb = r.backward_s, sm->po = r.optimizer_s, sm->pe = r.exposed_comm_s;
  sm->pnb = r.plan.n;
  sm->pbt = calloc((size_t)r.plan.n * 3 + 1, sizeof *sm->pbt);
  sm->pbytes = calloc((size_t)r.plan.n + 1, sizeof *sm->pbytes);
  if (!sm->pbt || !sm->pbytes) rc = err_set(e, ERR_NOMEM, "out of memory");
  for (int b = 0; !rc && b < r.plan.n; b++) {
    sm->pbytes[b] = r.plan.b[b].bytes;
    sm->pbt[3 * b] = r.buckets[b].ready_s;
    sm->pbt[3 * b + 1] = r.buckets[b].comm_start_s;
    sm->pbt[3 * b + 2] = r.buckets[b].comm_end_s;
  }
  sim_result_free(&r);
  topo_destroy(t);
  return rc;
}

/* ---- measurement ---------------------------------------------------------------------------- */

/* The median of v[0..n) (0 if empty), sorting v in place. */
static double median(double *v, int n) {
  if (n < 1) return 0;
  gsl_sort(v, 1, (size_t)n);
  return gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
}

static double num(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int parse_run(const char *text, const char *origin, sample *sm, err_t *e) {
  cJSON *j = cJSON_Parse(text);
  if (!j) return err_set(e, ERR_IO, "%s: not the JSON of ddpcalib train", origin);
  int rc = ERR_OK;
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, "iteration_s");
  const cJSON *ph = cJSON_GetObjectItemCaseSensitive(j, "phases_median_s");
  const cJSON *bs = cJSON_GetObjectItemCaseSensitive(j, "buckets");
  const cJSON *its = cJSON_GetObjectItemCaseSensitive(j, "iterations");
  sm->iter_s = num(it, "median");
  sm->fwd = num(ph, "forward"), sm->bwd = num(ph, "backward"), sm->wait = num(ph, "wait"), sm->step = num(ph, "step");
  sm->chars_per_s = num(j, "chars_per_s");
  sm->cpu_share = num(j, "cpu_share");
  if (!cJSON_IsArray(bs) || !cJSON_IsArray(its) || !(sm->iter_s > 0) || !isfinite(sm->fwd)) {
    cJSON_Delete(j);
    return err_set(e, ERR_IO, "%s: ddpcalib train's JSON lacks iteration_s, phases_median_s, buckets or iterations",
                   origin);
  }
  int ni = cJSON_GetArraySize(its);
  double *t = malloc((size_t)(ni > 0 ? ni : 1) * sizeof *t);
  sm->nb = cJSON_GetArraySize(bs);
  sm->bt = calloc((size_t)sm->nb * 3 + 1, sizeof *sm->bt);
  sm->bytes = calloc((size_t)sm->nb + 1, sizeof *sm->bytes);
  if (!t || !sm->bt || !sm->bytes) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
  } else {
    for (int i = 0; i < ni; i++) t[i] = num(cJSON_GetArrayItem(its, i), "time_s");
    gsl_sort(t, 1, (size_t)ni);
    sm->iqr_rel = ni >= 4 ? (t[(3 * ni) / 4] - t[ni / 4]) / sm->iter_s : 0;
    for (int b = 0; b < sm->nb; b++) {
      const cJSON *bo = cJSON_GetArrayItem(bs, b);
      sm->bytes[b] = (size_t)num(bo, "bytes");
      sm->bt[3 * b] = num(bo, "ready_s"), sm->bt[3 * b + 1] = num(bo, "start_s"), sm->bt[3 * b + 2] = num(bo, "end_s");
    }
  }
  free(t);
  cJSON_Delete(j);
  return rc;
}

static int measure(const validate_config *vc, const validate_opts *o, int ci, const char *rt, sample *sm, err_t *e) {
  char np[16], H[32], E[32], V[32], T[32], B[32], cap[32], first[32], n[16], w[16], tag[64];
  snprintf(np, sizeof np, "%d", vc->nprocs);
  snprintf(H, sizeof H, "%ld", o->hidden), snprintf(E, sizeof E, "%ld", o->embed);
  snprintf(V, sizeof V, "%ld", o->vocab), snprintf(T, sizeof T, "%ld", o->seq), snprintf(B, sizeof B, "%ld", o->batch);
  snprintf(cap, sizeof cap, "%.17g", vc->mode == SIM_MODE_DDP ? vc->cap_mb : REDUCER_DEFAULT_CAP_MB);
  snprintf(first, sizeof first, "%.17g", vc->mode == SIM_MODE_DDP ? vc->first_mb : REDUCER_FIRST_BUCKET_MB);
  snprintf(n, sizeof n, "%d", o->iters), snprintf(w, sizeof w, "%d", o->warmups);
  char *argv[48];
  int k = 0;
  argv[k++] = (char *)o->mpirun, argv[k++] = "-np", argv[k++] = np, argv[k++] = "--oversubscribe";
  argv[k++] = (char *)o->ddpcalib, argv[k++] = "train", argv[k++] = "--json";
  argv[k++] = "--hidden", argv[k++] = H, argv[k++] = "--embed", argv[k++] = E, argv[k++] = "--vocab", argv[k++] = V;
  argv[k++] = "--seq", argv[k++] = T, argv[k++] = "--batch", argv[k++] = B;
  argv[k++] = "--mode", argv[k++] = (char *)sim_mode_name(vc->mode);
  argv[k++] = "--bucket-cap-mb", argv[k++] = cap, argv[k++] = "--first-bucket-mb", argv[k++] = first;
  if (o->rebuilt) argv[k++] = "--rebuilt";
  argv[k++] = "--optimizer", argv[k++] = o->optimizer_sgd ? "sgd" : "adam";
  argv[k++] = "-n", argv[k++] = n, argv[k++] = "-w", argv[k++] = w;
  argv[k] = NULL;
  char *out = NULL;
  snprintf(tag, sizeof tag, "train_c%02d_%s", ci, rt);
  int rc = run_cmd(o->workdir, tag, argv, &out, e);
  if (rc) return rc;
  char origin[1200];
  snprintf(origin, sizeof origin, "%s/%s.out", o->workdir, tag);
  rc = parse_run(out, origin, sm, e);
  free(out);
  if (rc) return rc;
  if (sm->nb != sm->pnb)
    return err_set(e, ERR_SIM, "%s: %d buckets measured, %d simulated: the bucket plans differ", origin, sm->nb, sm->pnb);
  for (int b = 0; b < sm->nb; b++)
    if (sm->bytes[b] != sm->pbytes[b])
      return err_set(e, ERR_SIM, "%s: bucket %d has %zu bytes, simulated %zu: the bucket plans differ", origin, b,
                     sm->bytes[b], sm->pbytes[b]);
  return ERR_OK;
}

/* Medians over the repeats of one configuration into its row. */
static int aggregate(const sample *s, int R, validate_row *row, err_t *e) {
  double *v = malloc((size_t)R * sizeof *v);
  row->nbuckets = s[0].nb;
  row->buckets = calloc((size_t)row->nbuckets + 1, sizeof *row->buckets);
  if (!v || !row->buckets) {
    free(v);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
#define MED(dst, expr)                                \
  do {                                                \
    for (int r = 0; r < R; r++) v[r] = s[r].expr;     \
    dst = median(v, R);                               \
  } while (0)
  MED(row->pred_s, pred_s);
  MED(row->pred_forward_s, pf);
  MED(row->pred_backward_s, pb);
  MED(row->pred_optimizer_s, po);
  MED(row->pred_exposed_comm_s, pe);
  MED(row->meas_forward_s, fwd);
  MED(row->meas_backward_s, bwd);
  MED(row->meas_wait_s, wait);
  MED(row->meas_step_s, step);
  MED(row->meas_chars_per_s, chars_per_s);
  MED(row->meas_cpu_share, cpu_share);
  MED(row->meas_s, iter_s);
  double lo = v[0], hi = v[R - 1]; /* sorted by median() */
  row->noise = R >= 2 ? (hi - lo) / row->meas_s : s[0].iqr_rel;
  for (int b = 0; b < row->nbuckets; b++) {
    validate_bucket *vb = &row->buckets[b];
    vb->index = b;
    vb->bytes = s[0].bytes[b];
    MED(vb->pred_ready_s, pbt[3 * b]);
    MED(vb->pred_start_s, pbt[3 * b + 1]);
    MED(vb->pred_end_s, pbt[3 * b + 2]);
    MED(vb->meas_ready_s, bt[3 * b]);
    MED(vb->meas_start_s, bt[3 * b + 1]);
    MED(vb->meas_end_s, bt[3 * b + 2]);
    MED(vb->pred_comm_s, pbt[3 * b + 2] - s[r].pbt[3 * b + 1]);
    MED(vb->meas_comm_s, bt[3 * b + 2] - s[r].bt[3 * b + 1]);
    vb->comm_rel_err = vb->meas_comm_s > 0 ? (vb->pred_comm_s - vb->meas_comm_s) / vb->meas_comm_s : NAN;
  }
#undef MED
  row->rel_err = (row->pred_s - row->meas_s) / row->meas_s;
  free(v);
  return ERR_OK;
}

/* ---- the whole comparison ------------------------------------------------------------------- */

/* The profile ddpsim predicts with, from the calibrated profile `raw` of attempt `rt`: with the
 * elementwise costs derived from its timed phases (profile_<rt>_ewise.json) unless ewise_memcpy.
 * `used` gets the path loaded; *rate_Bps the derived rate (0 with ewise_memcpy). */
static int load_profile(const validate_opts *o, const model_t *m, const char *raw, const char *rt, char *used,
                        size_t len, profile_t **prof, double *rate_Bps, err_t *e) {
  *rate_Bps = 0;
  snprintf(used, len, "%s", raw);
  if (!o->ewise_memcpy) {
    char derived[1100];
    snprintf(derived, sizeof derived, "%s/profile_%s_ewise.json", o->workdir, rt);
    int rc = derive_ewise(raw, derived, o, m, rate_Bps, e);
    if (rc) return rc;
    snprintf(used, len, "%s", derived);
  }
  return profile_load(used, prof, e);
}

/* The drift check's yardstick: the predicted iteration of 1 process in flat mode (no buckets, no
 * communication: only what the compute calibration priced). */
static int predict_1p(const validate_opts *o, const model_t *mflat, const profile_t *prof, double *t, err_t *e) {
  validate_config c = {1, SIM_MODE_FLAT, 0, 0};
  sample s;
  memset(&s, 0, sizeof s);
  int rc = predict(&c, o, mflat, prof, &s, e);
  *t = s.pred_s;
  sample_free(&s);
  return rc;
}

/* After an attempt's real runs: calibrates compute again, builds the profile the attempt would have
 * predicted with (merged with the attempt's own comm calibration, the same elementwise derivation)
 * and compares the 1-process predictions under both (validate.h). */
static int drift_check(const validate_opts *o, const char *rt, const char *comm, const model_t *m, const model_t *mflat,
                       const profile_t *before, validate_progress_fn pf, void *user, validate_repeat *vr, err_t *e) {
  char rt2[48], compute2[1100], raw2[1100], used2[1100];
  snprintf(rt2, sizeof rt2, "%s_after", rt);
  int rc = calib_compute(o, rt2, pf, user, compute2, sizeof compute2, e);
  if (rc || (rc = calib_merge(o, rt2, compute2, comm, raw2, sizeof raw2, e))) return rc;
  profile_t *after = NULL;
  double rate = 0;
  if ((rc = load_profile(o, m, raw2, rt2, used2, sizeof used2, &after, &rate, e))) return rc;
  rc = predict_1p(o, mflat, before, &vr->pred_before_s, e);
  if (!rc) rc = predict_1p(o, mflat, after, &vr->pred_after_s, e);
  profile_destroy(after);
  if (rc) return rc;
  if (!(vr->pred_before_s > 0) || !(vr->pred_after_s > 0))
    return err_set(e, ERR_SIM, "the 1-process prediction of the drift check is not positive (%g s, %g s)", vr->pred_before_s,
                   vr->pred_after_s);
  vr->drift = (vr->pred_after_s - vr->pred_before_s) / vr->pred_before_s;
  return ERR_OK;
}

int validate_run(const validate_opts *o, validate_progress_fn pf, void *user, validate_report *out, err_t *e) {
  memset(out, 0, sizeof *out);
  if (!o->ddpcalib || access(o->ddpcalib, X_OK) != 0)
    return err_set(e, ERR_INPUT, "ddpcalib not found at '%s' (build the ddpcalib target, or pass --ddpcalib PATH)",
                   o->ddpcalib ? o->ddpcalib : "(none)");
  if (!o->workdir) return err_set(e, ERR_INPUT, "no work directory");
  if (o->nconfigs < 1 || o->nconfigs > VALIDATE_MAX_CONFIGS || o->repeats < 1 || o->iters < 1 || o->warmups < 0)
    return err_set(e, ERR_INPUT, "bad validation options (configurations, repeats, iterations)");
  if (!(o->max_drift >= 0) || !isfinite(o->max_drift) || o->drift_retries < 0 || o->drift_retries > VALIDATE_MAX_DRIFT_RETRIES)
    return err_set(e, ERR_INPUT, "bad drift check options (max drift %g, retries %d: a fraction >= 0, 0 to %d retries)",
                   o->max_drift, o->drift_retries, VALIDATE_MAX_DRIFT_RETRIES);
  for (int i = 0; i < o->nconfigs; i++)
    if (o->configs[i].nprocs < 1) return err_set(e, ERR_INPUT, "process counts must be >= 1");
  int R = o->repeats, NC = o->nconfigs, rc = ERR_OK;
  model_t *m = NULL, *mflat = NULL;
  profile_t *prof = NULL;
  sample *smp = calloc((size_t)NC * (size_t)R, sizeof *smp);
  out->rows = calloc((size_t)NC, sizeof *out->rows);
  out->repeats = calloc((size_t)R, sizeof *out->repeats);
  out->nrepeats = R;
  if (!smp || !out->rows || !out->repeats) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto done;
  }
  if ((rc = make_model(o, SIM_MODE_DDP, &m, e)) || (rc = make_model(o, SIM_MODE_FLAT, &mflat, e))) goto done;
  /* Each repeat calibrates afresh, then predicts and measures every configuration: on a machine
   * shared with other work the speed drifts over minutes, and a calibration is a statement about
   * the machine as it is when the real runs happen. Whether it still was after them is the drift
   * check's question; an attempt that fails it is redone whole, from its calibration. */
  for (int rep = 0; rep < R; rep++) {
    validate_repeat *vr = &out->repeats[rep];
    vr->drift = vr->pred_before_s = vr->pred_after_s = NAN;
    for (int att = 0;; att++) {
      char rt[32], raw[1100], compute[1100], comm[1100];
      if (att) snprintf(rt, sizeof rt, "r%d_a%d", rep, att);
      else snprintf(rt, sizeof rt, "r%d", rep);
      for (int i = 0; att && i < NC; i++) { /* the drifted attempt's samples go */
        sample *sm = &smp[(size_t)i * (size_t)R + (size_t)rep];
        sample_free(sm);
        memset(sm, 0, sizeof *sm);
      }
      if (o->profile) {
        snprintf(raw, sizeof raw, "%s", o->profile);
      } else {
        say(pf, user, "repeat %d/%d%s: calibrating", rep + 1, R, att ? " (again: the last attempt drifted)" : "");
        if ((rc = calibrate(o, rt, pf, user, raw, sizeof raw, compute, comm, sizeof compute, e))) goto done;
      }
      profile_destroy(prof);
      prof = NULL;
      double rate = 0;
      if ((rc = load_profile(o, m, raw, rt, out->profile, sizeof out->profile, &prof, &rate, e))) goto done;
      if (profile_nwarnings(prof) > 0 && !out->poor_fits)
        snprintf(out->poor_fit, sizeof out->poor_fit, "%s", profile_warning(prof, 0));
      out->poor_fits += profile_nwarnings(prof);
      if (!o->ewise_memcpy)
        say(pf, user, "repeat %d/%d: elementwise rate of the mLSTM's own passes %.2f GB/s", rep + 1, R, rate / 1e9);
      for (int i = 0; i < NC; i++) {
        sample *sm = &smp[(size_t)i * (size_t)R + (size_t)rep];
        char label[64];
        validate_config_label(&o->configs[i], label, sizeof label);
        if ((rc = predict(&o->configs[i], o, o->configs[i].mode == SIM_MODE_DDP ? m : mflat, prof, sm, e))) goto done;
        if ((rc = measure(&o->configs[i], o, i, rt, sm, e))) goto done;
        say(pf, user, "repeat %d/%d %-16s predicted %.3f ms, measured %.3f ms", rep + 1, R, label, sm->pred_s * 1e3,
            sm->iter_s * 1e3);
      }
      if (o->profile) break; /* a given profile was not measured now: nothing to compare with */
      if ((rc = drift_check(o, rt, comm, m, mflat, prof, pf, user, vr, e))) goto done;
      vr->redone = att;
      vr->attempt_drift[att] = vr->drift;
      say(pf, user, "repeat %d/%d: drift %+.1f%% (1-process prediction %.3f ms calibrated before the runs, %.3f ms after)",
          rep + 1, R, vr->drift * 100, vr->pred_before_s * 1e3, vr->pred_after_s * 1e3);
      if (!(o->max_drift > 0) || fabs(vr->drift) <= o->max_drift) break;
      if (att >= o->drift_retries) {
        vr->drifted = 1;
        out->drifted_repeats++;
        say(pf, user, "repeat %d/%d: |drift| beyond %.3g%% in all %d attempt(s): kept, marked drifted", rep + 1, R,
            o->max_drift * 100, att + 1);
        break;
      }
      out->redone_attempts++;
      say(pf, user, "repeat %d/%d: |drift| beyond %.3g%%: redoing the repeat (attempt %d of %d)", rep + 1, R,
          o->max_drift * 100, att + 2, o->drift_retries + 1);
    }
  }
  for (int i = 0; i < NC; i++) {
    out->rows[i].cfg = o->configs[i];
    out->nrows = i + 1;
    if ((rc = aggregate(&smp[(size_t)i * (size_t)R], R, &out->rows[i], e))) goto done;
  }
  /* Summaries. */
  int nv = 0;
  for (int i = 0; i < out->nrows; i++) nv += out->rows[i].nbuckets + 1;
  double *v = malloc((size_t)nv * sizeof *v);
  if (!v) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto done;
  }
  int n = 0;
  for (int i = 0; i < out->nrows; i++) {
    v[n++] = fabs(out->rows[i].rel_err);
    out->max_abs_err = fmax(out->max_abs_err, fabs(out->rows[i].rel_err));
  }
  out->median_abs_err = median(v, n);
  n = 0;
  for (int i = 0; i < out->nrows; i++)
    if (out->rows[i].meas_cpu_share >= 0.9) {
      v[n++] = fabs(out->rows[i].rel_err);
      out->max_abs_err_uncontended = fmax(out->max_abs_err_uncontended, fabs(out->rows[i].rel_err));
    }
  out->n_uncontended = n;
  out->median_abs_err_uncontended = median(v, n);
  n = 0;
  for (int i = 0; i < out->nrows; i++) {
    const validate_row *r = &out->rows[i];
    if (r->cfg.nprocs < 2) continue;
    for (int b = 0; b < r->nbuckets; b++)
      if (isfinite(r->buckets[b].comm_rel_err)) {
        v[n++] = fabs(r->buckets[b].comm_rel_err);
        out->max_abs_comm_err = fmax(out->max_abs_comm_err, v[n - 1]);
      }
  }
  out->n_comm = n;
  out->median_abs_comm_err = median(v, n);
  free(v);
  /* Ranking of bucket caps: pairs of ddp rows with the same process count (> 1). */
  for (int i = 0; i < out->nrows; i++)
    for (int j = i + 1; j < out->nrows; j++) {
      const validate_row *a = &out->rows[i], *b = &out->rows[j];
      if (a->cfg.mode != SIM_MODE_DDP || b->cfg.mode != SIM_MODE_DDP || a->cfg.nprocs != b->cfg.nprocs ||
          a->cfg.nprocs < 2)
        continue;
      out->rank_pairs++;
      double dm = b->meas_s - a->meas_s, noise = fmax(a->noise * a->meas_s, b->noise * b->meas_s);
      if (fabs(dm) <= noise) continue;
      out->rank_resolved++;
      double dp = b->pred_s - a->pred_s;
      out->rank_agree += (dp > 0) == (dm > 0) && dp != 0;
    }
  rc = ERR_OK;
done:
  if (smp)
    for (size_t i = 0; i < (size_t)NC * (size_t)R; i++) sample_free(&smp[i]);
  free(smp);
  model_destroy(m);
  model_destroy(mflat);
  profile_destroy(prof);
  if (rc) validate_report_free(out);
  return rc;
}

/* ---- output --------------------------------------------------------------------------------- */

static void err_summary(strbuf *s, const char *what, const char *unit, int n, double median_err, double max_err) {
  if (n == 0) strbuf_printf(s, "# %s: no %s to compare\n", what, unit);
  else strbuf_printf(s, "# %s: median |error| %.1f%%, max |error| %.1f%% over %d %s\n", what, median_err * 100, max_err * 100, n, unit);
}

char *validate_table(const validate_opts *o, const validate_report *r) {
  strbuf s = {0};
  strbuf_printf(&s, "# ddpsim validate: mLSTM H %ld E %ld V %ld T %ld, batch %ld per process, fp32, %s, %s buckets\n", o->hidden,
      o->embed, o->vocab, o->seq, o->batch, o->optimizer_sgd ? "sgd" : "adam", o->rebuilt ? "rebuilt" : "construction-time");
  strbuf_printf(&s, "# real runs: mpirun -np N ddpcalib train, %d warm-up + %d timed iterations, %d run(s) each\n", o->warmups,
      o->iters, o->repeats);
  strbuf_printf(&s, "# profile: %s (elementwise ops: %s)\n", r->profile,
      o->ewise_memcpy ? "ddpcalib's memcpy table" : "derived from the timed mLSTM phases");
  if (r->poor_fits)
    strbuf_printf(&s, "# warning: %d poor fit(s) kept by --accept-poor-fit, the first %s\n", r->poor_fits, r->poor_fit);
  if (o->profile) {
    strbuf_printf(&s, "# drift check: none (a given profile was not calibrated now)\n");
  } else {
    strbuf_printf(&s, "# drift: 1-process predicted iteration, compute calibrated after the repeat's runs against before; ");
    if (o->max_drift > 0)
      strbuf_printf(&s, "beyond %.3g%%: redone, up to %d time(s)\n", o->max_drift * 100, o->drift_retries);
    else
      strbuf_printf(&s, "reported only (--max-drift 0)\n");
    for (int i = 0; i < r->nrepeats; i++) {
      const validate_repeat *vr = &r->repeats[i];
      strbuf_printf(&s, "# repeat %d: drift %+.1f%% (%.3f -> %.3f ms)", i + 1, vr->drift * 100, vr->pred_before_s * 1e3,
          vr->pred_after_s * 1e3);
      if (vr->redone) {
        strbuf_printf(&s, ", redone %d time(s), earlier attempts", vr->redone);
        for (int a = 0; a < vr->redone; a++) strbuf_printf(&s, " %+.1f%%", vr->attempt_drift[a] * 100);
      }
      strbuf_printf(&s, "%s\n", vr->drifted ? "  DRIFTED (every attempt beyond the bound; kept)" : "");
    }
  }
  strbuf_printf(&s, "#\n");
  strbuf_printf(&s, "# %-18s %9s %9s %8s %7s %5s | %-29s | %s\n", "configuration", "predicted", "measured", "error", "noise",
      "cpu", "predicted fwd/bwd/opt/exposed", "measured fwd/bwd/wait/step");
  strbuf_printf(&s, "# %-18s %9s %9s %8s %7s %5s | %-29s | %s\n", "", "(ms)", "(ms)", "", "", "", "(ms)", "(ms)");
  for (int i = 0; i < r->nrows; i++) {
    const validate_row *w = &r->rows[i];
    char label[64], pb[64], mb[64];
    validate_config_label(&w->cfg, label, sizeof label);
    snprintf(pb, sizeof pb, "%.2f/%.2f/%.2f/%.2f", w->pred_forward_s * 1e3, w->pred_backward_s * 1e3,
             w->pred_optimizer_s * 1e3, w->pred_exposed_comm_s * 1e3);
    snprintf(mb, sizeof mb, "%.2f/%.2f/%.2f/%.2f", w->meas_forward_s * 1e3, w->meas_backward_s * 1e3,
             w->meas_wait_s * 1e3, w->meas_step_s * 1e3);
    strbuf_printf(&s, "  %-18s %9.3f %9.3f %+7.1f%% %6.1f%% %4.0f%% | %-29s | %s\n", label, w->pred_s * 1e3, w->meas_s * 1e3,
        w->rel_err * 100, w->noise * 100, w->meas_cpu_share * 100, pb, mb);
    if (w->cfg.nprocs < 2) continue;
    for (int b = 0; b < w->nbuckets; b++) {
      const validate_bucket *vb = &w->buckets[b];
      strbuf_printf(&s, "      bucket %-2d %9zu B  all-reduce %7.3f %7.3f ms %+7.1f%%   ready %7.3f %7.3f   end %7.3f %7.3f ms\n",
          b, vb->bytes, vb->pred_comm_s * 1e3, vb->meas_comm_s * 1e3, vb->comm_rel_err * 100, vb->pred_ready_s * 1e3,
          vb->meas_ready_s * 1e3, vb->pred_end_s * 1e3, vb->meas_end_s * 1e3);
    }
  }
  strbuf_printf(&s, "#\n# cpu: CPU time / wall time of the least served rank of the real run (below 100%%: other work had a core)\n");
  strbuf_printf(&s, "# bucket lines: predicted then measured (all-reduce duration, error; ready; end), from the iteration start\n");
  /* A summary over nothing is said to be none, never printed as an error of 0. */
  err_summary(&s, "iteration time", "configurations", r->nrows, r->median_abs_err, r->max_abs_err);
  err_summary(&s, "iteration time, runs with >= 90% of a core per rank", "configurations", r->n_uncontended,
              r->median_abs_err_uncontended, r->max_abs_err_uncontended);
  err_summary(&s, "bucket all-reduce time (multi-process)", "all-reduces", r->n_comm, r->median_abs_comm_err,
              r->max_abs_comm_err);
  strbuf_printf(&s, "# bucket-cap ranking: %d pairs, %d differ by more than the noise, %d of those predicted in the same order\n",
      r->rank_pairs, r->rank_resolved, r->rank_agree);
  return strbuf_take(&s);
}

/* A summary number, or null where it summarises nothing. */
static void add_summary(cJSON *j, const char *key, int n, double v) {
  if (n > 0) cJSON_AddNumberToObject(j, key, v);
  else cJSON_AddNullToObject(j, key);
}

cJSON *validate_json(const validate_opts *o, const validate_report *r) {
  cJSON *j = cJSON_CreateObject();
  if (!j || version_stamp(j)) {
    cJSON_Delete(j);
    return NULL;
  }
  cJSON *m = cJSON_AddObjectToObject(j, "model");
  cJSON_AddNumberToObject(m, "hidden", (double)o->hidden);
  cJSON_AddNumberToObject(m, "embed", (double)o->embed);
  cJSON_AddNumberToObject(m, "vocab", (double)o->vocab);
  cJSON_AddNumberToObject(m, "seq", (double)o->seq);
  cJSON_AddNumberToObject(m, "batch", (double)o->batch);
  cJSON_AddStringToObject(j, "optimizer", o->optimizer_sgd ? "sgd" : "adam");
  cJSON_AddBoolToObject(j, "rebuilt", o->rebuilt);
  cJSON_AddNumberToObject(j, "iters", o->iters);
  cJSON_AddNumberToObject(j, "warmups", o->warmups);
  cJSON_AddNumberToObject(j, "repeats", o->repeats);
  cJSON_AddStringToObject(j, "profile", r->profile);
  cJSON_AddStringToObject(j, "ewise", o->ewise_memcpy ? "memcpy" : "kernels");
  cJSON_AddNumberToObject(j, "poor_fits_kept", r->poor_fits);
  cJSON *rows = cJSON_AddArrayToObject(j, "rows");
  for (int i = 0; i < r->nrows; i++) {
    const validate_row *w = &r->rows[i];
    cJSON *ro = cJSON_CreateObject();
    cJSON_AddItemToArray(rows, ro);
    char label[64];
    validate_config_label(&w->cfg, label, sizeof label);
    cJSON_AddStringToObject(ro, "config", label);
    cJSON_AddNumberToObject(ro, "nprocs", w->cfg.nprocs);
    cJSON_AddStringToObject(ro, "mode", sim_mode_name(w->cfg.mode));
    if (w->cfg.mode == SIM_MODE_DDP) {
      cJSON_AddNumberToObject(ro, "bucket_cap_mb", w->cfg.cap_mb);
      cJSON_AddNumberToObject(ro, "first_bucket_mb", w->cfg.first_mb);
    }
    cJSON_AddNumberToObject(ro, "predicted_s", w->pred_s);
    cJSON_AddNumberToObject(ro, "measured_s", w->meas_s);
    cJSON_AddNumberToObject(ro, "rel_error", w->rel_err);
    cJSON_AddNumberToObject(ro, "noise", w->noise);
    cJSON *p = cJSON_AddObjectToObject(ro, "predicted_phases_s");
    cJSON_AddNumberToObject(p, "forward", w->pred_forward_s);
    cJSON_AddNumberToObject(p, "backward", w->pred_backward_s);
    cJSON_AddNumberToObject(p, "optimizer", w->pred_optimizer_s);
    cJSON_AddNumberToObject(p, "exposed_comm", w->pred_exposed_comm_s);
    p = cJSON_AddObjectToObject(ro, "measured_phases_s");
    cJSON_AddNumberToObject(p, "forward", w->meas_forward_s);
    cJSON_AddNumberToObject(p, "backward", w->meas_backward_s);
    cJSON_AddNumberToObject(p, "wait", w->meas_wait_s);
    cJSON_AddNumberToObject(p, "step", w->meas_step_s);
    cJSON_AddNumberToObject(ro, "measured_chars_per_s", w->meas_chars_per_s);
    cJSON_AddNumberToObject(ro, "measured_cpu_share", w->meas_cpu_share);
    cJSON *bs = cJSON_AddArrayToObject(ro, "buckets");
    for (int b = 0; b < w->nbuckets; b++) {
      const validate_bucket *vb = &w->buckets[b];
      cJSON *bo = cJSON_CreateObject();
      cJSON_AddItemToArray(bs, bo);
      cJSON_AddNumberToObject(bo, "index", b);
      cJSON_AddNumberToObject(bo, "bytes", (double)vb->bytes);
      cJSON_AddNumberToObject(bo, "predicted_ready_s", vb->pred_ready_s);
      cJSON_AddNumberToObject(bo, "predicted_start_s", vb->pred_start_s);
      cJSON_AddNumberToObject(bo, "predicted_end_s", vb->pred_end_s);
      cJSON_AddNumberToObject(bo, "measured_ready_s", vb->meas_ready_s);
      cJSON_AddNumberToObject(bo, "measured_start_s", vb->meas_start_s);
      cJSON_AddNumberToObject(bo, "measured_end_s", vb->meas_end_s);
      cJSON_AddNumberToObject(bo, "predicted_comm_s", vb->pred_comm_s);
      cJSON_AddNumberToObject(bo, "measured_comm_s", vb->meas_comm_s);
      if (w->cfg.nprocs > 1 && isfinite(vb->comm_rel_err)) cJSON_AddNumberToObject(bo, "comm_rel_error", vb->comm_rel_err);
      else cJSON_AddNullToObject(bo, "comm_rel_error");
    }
  }
  cJSON *dc = cJSON_AddObjectToObject(j, "drift_check");
  cJSON_AddBoolToObject(dc, "measured", !o->profile);
  cJSON_AddNumberToObject(dc, "max_drift", o->max_drift);
  cJSON_AddNumberToObject(dc, "retries", o->drift_retries);
  cJSON_AddNumberToObject(dc, "drifted_repeats", r->drifted_repeats);
  cJSON_AddNumberToObject(dc, "redone_attempts", r->redone_attempts);
  cJSON *rd = cJSON_AddArrayToObject(dc, "repeats");
  for (int i = 0; i < r->nrepeats; i++) {
    const validate_repeat *vr = &r->repeats[i];
    cJSON *ro = cJSON_CreateObject();
    cJSON_AddItemToArray(rd, ro);
    cJSON_AddNumberToObject(ro, "repeat", i + 1);
    if (isfinite(vr->drift)) {
      cJSON_AddNumberToObject(ro, "drift", vr->drift);
      cJSON_AddNumberToObject(ro, "predicted_1p_before_s", vr->pred_before_s);
      cJSON_AddNumberToObject(ro, "predicted_1p_after_s", vr->pred_after_s);
    } else {
      cJSON_AddNullToObject(ro, "drift");
    }
    cJSON_AddNumberToObject(ro, "redone", vr->redone);
    cJSON_AddBoolToObject(ro, "drifted", vr->drifted);
    cJSON *ad = cJSON_AddArrayToObject(ro, "attempt_drifts");
    for (int a = 0; isfinite(vr->drift) && a <= vr->redone; a++)
      cJSON_AddItemToArray(ad, cJSON_CreateNumber(vr->attempt_drift[a]));
  }
  add_summary(j, "median_abs_error", r->nrows, r->median_abs_err);
  add_summary(j, "max_abs_error", r->nrows, r->max_abs_err);
  cJSON_AddNumberToObject(j, "uncontended_configs", r->n_uncontended);
  add_summary(j, "median_abs_error_uncontended", r->n_uncontended, r->median_abs_err_uncontended);
  add_summary(j, "max_abs_error_uncontended", r->n_uncontended, r->max_abs_err_uncontended);
  cJSON_AddNumberToObject(j, "comm_compared", r->n_comm);
  add_summary(j, "median_abs_comm_error", r->n_comm, r->median_abs_comm_err);
  add_summary(j, "max_abs_comm_error", r->n_comm, r->max_abs_comm_err);
  cJSON *rk = cJSON_AddObjectToObject(j, "ranking");
  cJSON_AddNumberToObject(rk, "pairs", r->rank_pairs);
  cJSON_AddNumberToObject(rk, "resolved", r->rank_resolved);
  cJSON_AddNumberToObject(rk, "agree", r->rank_agree);
  return j;
}
