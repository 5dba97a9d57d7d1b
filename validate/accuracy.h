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

/* ---- the validated error (docs/memory.md, "How sure"; docs/accuracy.md, "Coverage") ----
 * Over the validated points, r = true / predicted iteration time (published / predicted throughput,
 * published / predicted hours). The error of a new run of one kind (profile, precision) is modelled
 * in log r: centred on the mean of that kind's points (what its card and precision share), or of
 * every point where the kind has none; spread by the standard deviation of log r over every point
 * (the error across families: a user's model is a family of its own, so one family's miss is not
 * the width of another's interval, and a kind without points still has the whole set's). The
 * interval at level L: exp(centre -+ t sd sqrt(1 + 1/n)), t Student's quantile (1 + L) / 2 with
 * n - 1 degrees of freedom, n every validated point; widened to contain 1 (the prediction is always
 * inside its interval). accuracy_coverage checks it by leave-one-source-out. */
typedef struct {
  int points;     /* of the kind (0: centred on every point) */
  double centre;  /* mean log r over the kind's points, or over every point */
  int all_points; /* every validated point (< 2: no spread, factors 1 and 1) */
  double sd;      /* standard deviation of log r over every validated point */
} accuracy_error;

/* The level the reports' coverage is measured at: predict's default (sim/cli/buyopts.h). */
#define ACCURACY_LEVEL 0.9

/* The error model of (profile, precision) over the validated points of s (after accuracy_run);
 * points of the group `leave_out` are left out (NULL: none). Returns m->all_points. */
int accuracy_error_model(const accuracy_set *s, const char *profile, int precision, const char *leave_out,
                         accuracy_error *m);

/* The factors on the predicted time at level in (0, 1): *lo <= 1 <= *hi (1 and 1 with fewer than 2
 * points). */
void accuracy_error_factors(const accuracy_error *m, double level, double *lo, double *hi);

/* Leave-one-source-out: each validated point's interval at `level` from the points of the other
 * groups alone, and whether its true time falls inside. */
typedef struct {
  double level;
  int points, covered;              /* validated points with an interval (other groups have >= 2) */
  double median_lo, median_hi;      /* of the factors */
  double median_width;              /* of hi - lo */
} accuracy_coverage;
void accuracy_coverage_run(const accuracy_set *s, double level, accuracy_coverage *out);

/* ---- the validated error, cached ----
 * Predicting the published points takes about 30 ms a point (1.6 s for the 52 bundled), more than a
 * prediction itself, and every interval needs them (sim/interval.h). The build writes the error
 * model once for every profile and precision of the bundled points file (`ddpsim accuracy --ratios
 * FILE`), each row with a fingerprint of what the error depends on besides ddpsim's code (which
 * the build ties it to): ddpsim's version, the points file's text, and the bytes of every model,
 * topology and profile file its points name, resolved as accuracy_run resolves them (every point:
 * the spread is the whole set's). A row is used only where the fingerprint of the inputs in use is
 * the same; any other case predicts the points again. The file:
 *   `# comment` lines; then `ddpsim-ratios 2`; then rows, fields separated by tabs: profile,
 *   precision (fp32, fp16, bf16), points, centre, all_points, sd (accuracy_error's fields),
 *   fingerprint (16 hex digits); one row per profile and precision with points, and one whose
 *   profile and precision are `*`: every point (points == all_points, the kinds without points). */

/* The fingerprint of the points of s (every supported one). ERR_OK; an input file's error
 * (ERR_INPUT, ERR_IO) with its path. */
int accuracy_fingerprint(const accuracy_set *s, unsigned long long *fp, err_t *e);

/* The cache's text, after accuracy_run. NULL with e set (ERR_NOMEM, or an input file's error). The
 * caller frees it. */
char *accuracy_ratios_text(const accuracy_set *s, err_t *e);

/* Looks (profile, precision) up in a cache's text (named origin in messages) for fingerprint fp: 1
 * and *m when the kind's row, or else the `*` row (m->points 0), is there with that fingerprint; 0
 * when neither is (absent, or another fingerprint: stale). A malformed text: -1 and
 * `origin:line: what is wrong` in e (ERR_INPUT). */
int accuracy_ratios_lookup(const char *text, const char *origin, const char *profile, int precision, unsigned long long fp,
                           accuracy_error *m, err_t *e);

typedef struct {
  int points, groups;          /* in the file; independent sources */
  int unsupported, inputs, failed;
  int validated;               /* predicted validation points: what the numbers below cover */
  double median_abs, worst_abs; /* of |error|, over the validated points (0 when none) */
  double mean_signed;
  int worst;                   /* index of the worst validated point, -1 when none */
  int above_25;                /* validated points with |error| > 25% */
  accuracy_coverage coverage;  /* at ACCURACY_LEVEL */
} accuracy_summary;

void accuracy_summarize(const accuracy_set *s, accuracy_summary *out);

/* Reports (NULL on allocation failure): a table for a terminal, one JSON object (points and
 * summary), and the Markdown of docs/accuracy.md's generated part. */
char *accuracy_table(const accuracy_set *s, const accuracy_summary *sum);
cJSON *accuracy_json(const accuracy_set *s, const accuracy_summary *sum);
char *accuracy_markdown(const accuracy_set *s, const accuracy_summary *sum);

#endif
