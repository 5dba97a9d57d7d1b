/* accuracy: ddpsim's predictions against published real-run figures.
 *
 * A points file (validate/published.txt; format in validate/README.md) lists figures read in public
 * sources (DeepLearningExamples, DLPerf, sentiment-discovery, ...), each with its source, hardware,
 * software and the ddpsim scenario that reproduces its setup. accuracy_load reads it (errors as
 * `file:line: what is wrong`, nothing half-loaded); accuracy_run predicts every point with
 * predict_run (sim/predict.h) and fills each point's error; accuracy_summary says how far off the
 * predictions are. The reports (table, JSON, Markdown for docs/accuracy.md) are built as text or
 * cJSON for the front end to print; this library never prints and never exits.
 *
 * Two kinds of point stay out of the summary, and every report says so: `unsupported` points
 * (ddpsim has no model or profile for them; counted in the file, not predicted) and points with a
 * `fits` line (the figure fitted a parameter of the bundled profile named there, so it is an input,
 * not a validation point: docs/accuracy.md). */
#ifndef DDPSIM_ACCURACY_H
#define DDPSIM_ACCURACY_H

#include <cjson/cJSON.h>

#include "err.h"

#define ACCURACY_TEXT_MAX 384
#define ACCURACY_NAME_MAX 64

typedef enum { ACCURACY_SAMPLES = 0, ACCURACY_TOKENS = 1, ACCURACY_HOURS = 2 } accuracy_metric;

typedef struct {
  int line;                               /* of its `point` line */
  char name[ACCURACY_NAME_MAX];
  char group[ACCURACY_NAME_MAX];          /* the independent source it belongs to */
  char source[ACCURACY_TEXT_MAX], hardware[ACCURACY_TEXT_MAX], software[ACCURACY_TEXT_MAX];
  char setup[ACCURACY_TEXT_MAX];
  char fits[ACCURACY_TEXT_MAX];           /* "": validation; else the parameter it fitted */
  char unsupported[ACCURACY_TEXT_MAX];    /* "": predicted; else why not */
  double published;                       /* in `unit` */
  char unit[16];                          /* as written: images/s, sequences/s, chars/s, hours, ... */
  accuracy_metric metric;
  long iterations;                        /* ACCURACY_HOURS: iterations the hours cover */
  /* The scenario: a bundled model (or file), or a generated one ("resnet depth=50 amp"). */
  char model[ACCURACY_TEXT_MAX], genmodel[ACCURACY_TEXT_MAX];
  char profile[ACCURACY_TEXT_MAX], topology[ACCURACY_TEXT_MAX];
  int nodes, gpus;
  long batch;
  int precision;                          /* model_dtype */
  int no_sync;                            /* >= 1: DDP all-reduces every no_sync-th micro-batch */
  int mode;                               /* sim_mode: DDP's buckets, or flat (`mode flat`) */
  int pytorch;                            /* the release the run used (`pytorch 0.3`: reducer.h's version); 0: the latest */
  int h2d;                                /* sim_h2d: how the batch reaches the GPU (`loader`;
                                             SIM_H2D_AUTO when not given: PyTorch's pageable default) */
  int framework;                          /* sim_framework (`framework`; default DDP) */
  char fsdp_units[ACCURACY_TEXT_MAX];     /* FSDP's knobs (sim_config's fsdp_*): "" the default units */
  int fsdp_reshard, fsdp_replicate, fsdp_param_dtype, fsdp_reduce_dtype;
  /* Filled by accuracy_run. */
  int status;                             /* ERR_OK, or why the prediction failed (msg) */
  char msg[1024];
  double predicted;                       /* in `unit` */
  double error;                           /* (predicted - published) / published */
} accuracy_point;

typedef struct {
  char path[512];
  int n;
  accuracy_point *points;
  int no_gpu_sharing; /* an ablation: predict every point with sim_config.gpu_sharing 0 */
  int no_host_costs;  /* an ablation: predict every point with the host's launch, dispatch and jitter
                         costs 0 (sim_config.host_*_s), whatever the profile's compute.host says */
  unsigned long long text_hash; /* FNV-1a (64 bits) of the points file's text, set by accuracy_parse */
} accuracy_set;

/* Loads a points file into *out (free with accuracy_destroy). ERR_IO if unreadable, ERR_INPUT with
 * `path:line: reason` if malformed; nothing allocated on failure. */
int accuracy_load(const char *path, accuracy_set **out, err_t *e);
int accuracy_parse(const char *text, const char *origin, accuracy_set **out, err_t *e);
void accuracy_destroy(accuracy_set *s); /* NULL is a no-op */

/* Predicts every supported point. A point whose inputs fail to load or simulate keeps that status
 * and message (it counts as failed in the summary); the call itself fails only with ERR_NOMEM. */
int accuracy_run(accuracy_set *s, err_t *e);

/* Keeps only the points of profile `profile` (a bundled name, as the points file names it) at
 * precision `precision` (model_dtype), in order: the kind of run a prediction's validated error is
 * taken from (sim/interval.h). Returns how many are kept. */
int accuracy_select(accuracy_set *s, const char *profile, int precision);

/* Over the validated points of s (predicted, not inputs), the range of true / predicted time per
 * iteration: published / predicted throughput for samples and tokens, published / predicted hours
 * for hours. Returns how many points it covers (0: *lo, *hi untouched). */
int accuracy_time_ratios(const accuracy_set *s, double *lo, double *hi);

/* ---- the validated ratios, cached (docs/memory.md, "How sure") ----
 * Predicting the published points of one profile and precision takes about 30 ms a point, and every
 * interval needs them (sim/interval.h). The build writes them once for every profile and precision
 * of the bundled points file (`ddpsim accuracy --ratios FILE`), each row with a fingerprint of what
 * the ratios depend on besides ddpsim's code (which the build ties them to): ddpsim's version, the
 * points file's text, and the bytes of every model, topology and profile file its points of that
 * profile and precision name, resolved as accuracy_run resolves them. A row is used only where the
 * fingerprint of the inputs in use is the same; any other case predicts the points again. The file:
 *   `# comment` lines; then `ddpsim-ratios 1`; then one row per profile and precision, fields
 *   separated by tabs: profile, precision (fp32, fp16, bf16), points, lo, hi (as
 *   accuracy_time_ratios gives them; 1 and 1 with 0 points), fingerprint (16 hex digits). */

/* The fingerprint of (profile, precision) over the points of s (all of them, or those
 * accuracy_select kept). ERR_OK; an input file's error (ERR_INPUT, ERR_IO) with its path. */
int accuracy_fingerprint(const accuracy_set *s, const char *profile, int precision, unsigned long long *fp, err_t *e);

/* The cache's text for every profile and precision that s's supported points have, after
 * accuracy_run. NULL with e set (ERR_NOMEM, or an input file's error). The caller frees it. */
char *accuracy_ratios_text(const accuracy_set *s, err_t *e);

/* Looks (profile, precision, fingerprint fp) up in a cache's text (named origin in messages): 1 and
 * *n, *lo, *hi when its row is there with that fingerprint, 0 when not (absent, or another
 * fingerprint: stale). A malformed text: -1 and `origin:line: what is wrong` in e (ERR_INPUT). */
int accuracy_ratios_lookup(const char *text, const char *origin, const char *profile, int precision, unsigned long long fp,
                           int *n, double *lo, double *hi, err_t *e);

typedef struct {
  int points, groups;          /* in the file; independent sources */
  int unsupported, inputs, failed;
  int validated;               /* predicted validation points: what the numbers below cover */
  double median_abs, worst_abs; /* of |error|, over the validated points (0 when none) */
  double mean_signed;
  int worst;                   /* index of the worst validated point, -1 when none */
  int above_25;                /* validated points with |error| > 25% */
} accuracy_summary;

void accuracy_summarize(const accuracy_set *s, accuracy_summary *out);

/* Reports (NULL on allocation failure): a table for a terminal, one JSON object (points and
 * summary), and the Markdown of docs/accuracy.md's generated part. */
char *accuracy_table(const accuracy_set *s, const accuracy_summary *sum);
cJSON *accuracy_json(const accuracy_set *s, const accuracy_summary *sum);
char *accuracy_markdown(const accuracy_set *s, const accuracy_summary *sum);

#endif
