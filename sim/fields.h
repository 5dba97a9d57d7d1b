/* fields: the result fields of a prediction, one row each, the one list every output reads.
 *
 * A row says a field's JSON name (and the object of predict's JSON it sits in), its unit, where its
 * value lives (an offset into predict_result and its C type, or a small accessor), which
 * frameworks' reports have it, its line in predict's table (label, format, when it shows), its
 * column in sweep's CSV and JSON, and the range `ddpsim plot` accepts in that column. The writers
 * iterate the table: sim/report.c (predict's JSON and table), sim/sweep.c (sweep's columns),
 * sim/plot.c (the checks of what it reads). A new field is a value in the result (sim_result or
 * predict_result), an id below, a row in sim/fields.c and its line in docs/cli.md and
 * docs/schemas/predict.schema.json (tests/tools/test_schemas.py checks both list exactly the
 * table's fields).
 *
 * The table is in the order of predict's JSON; the table's lines (`line`) and sweep's columns
 * (`sweep`) are numbered apart, since their orders are not the JSON's. Nothing here prints. */
#ifndef DDPSIM_FIELDS_H
#define DDPSIM_FIELDS_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "budget.h"
#include "interval.h"
#include "memory.h"
#include "predict.h"
#include "strbuf.h"

/* Every field, in the order of predict's JSON (a group's fields: FIELD_<GROUP>_...), then those
 * only sweep writes. */
typedef enum {
  FIELD_MODEL, FIELD_TOPOLOGY, FIELD_PROFILE, FIELD_NODES, FIELD_GPUS_PER_NODE, FIELD_GPUS, FIELD_BATCH_PER_GPU,
  FIELD_PRECISION, FIELD_MODE, FIELD_FIDELITY, FIELD_PYTORCH, FIELD_BUCKET_CAP_MB, FIELD_BUCKET_CAP_MB_GIVEN,
  FIELD_FIRST_BUCKET_BYTES, FIELD_FIND_UNUSED_PARAMETERS, FIELD_STATIC_GRAPH, FIELD_DDP_ITERATION, FIELD_BUCKET_LAYOUT,
  FIELD_BEFORE_STEADY_STATE, FIELD_ITERATIONS, FIELD_NO_SYNC, FIELD_COMM_HOOK, FIELD_ITERATION_S, FIELD_ITERATION_CI_S,
  FIELD_SAMPLES_PER_S, FIELD_TOKENS_PER_S, FIELD_TOKEN_UNIT, FIELD_COMPUTE_S, FIELD_FORWARD_S, FIELD_BACKWARD_S,
  FIELD_OPTIMIZER_S, FIELD_BUCKET_COPY_S, FIELD_BUCKET_VIEW,
  FIELD_HD_HOST_BUSY_S, FIELD_HD_DEVICE_BUSY_S, FIELD_HD_HOST_BOUND_S, FIELD_HD_DEVICE_BOUND_S, FIELD_HD_HOST_BOUND_MAX_S,
  FIELD_HD_HOST_JITTER_S,
  FIELD_EXPOSED_COMM_S, FIELD_STRAGGLER_WAIT_S, FIELD_STRAGGLER_S, FIELD_FRAMEWORK, FIELD_BACKEND, FIELD_HOST_LAUNCH_S,
  FIELD_HOST_DISPATCH_S, FIELD_MEASURED_STEP_S, FIELD_HOST_SCALE,
  FIELD_DP_SCATTER_S, FIELD_DP_REPLICATE_S, FIELD_DP_GATHER_S, FIELD_DP_REDUCE_S, FIELD_DP_BACKWARD_GIL, FIELD_DP_GIL_SHARE,
  FIELD_DP_HANDOVER_S, FIELD_DP_HOST_BUSY_S, FIELD_DP_HOST_BOUND_S,
  FIELD_LOADING_S, FIELD_TRANSFER_S, FIELD_BUFFER_BROADCAST_S, FIELD_H2D, FIELD_NUM_WORKERS, FIELD_LOAD_S_PER_BATCH,
  FIELD_JITTER, FIELD_JITTER_CV, FIELD_SEED, FIELD_COMM_BUSY_S, FIELD_COMM_SHARES_COMPUTE, FIELD_SINGLE_GPU_ITERATION_S,
  FIELD_SCALING_EFFICIENCY, FIELD_GRADIENT_BYTES, FIELD_EXTRAPOLATED_OPS, FIELD_MEASURED,
  FIELD_LINKS_INTRA_BW_BPS, FIELD_LINKS_INTRA_LAT_S, FIELD_LINKS_NIC_BW_BPS, FIELD_LINKS_NIC_LAT_S, FIELD_LINKS_CHANNELS,
  FIELD_LINKS_CHANNEL_BW_BPS, FIELD_LINKS_NICS_USED, FIELD_LINKS_CHANNEL_SEARCH_EXHAUSTED,
  FIELD_BUCKETS_ITERATION_S, FIELD_BUCKETS, FIELD_FSDP_COLLECTIVES,
  FIELD_SIM_MESSAGES, FIELD_SIM_ITERATIONS, FIELD_SIM_RANKS_SIMULATED, FIELD_SIM_WALL_S, FIELD_SIM_PEAK_RSS_KB,
  FIELD_SIM_CLOSED_FORM,
  FIELD_MEMORY, FIELD_BUDGET, FIELD_INTERVAL,
  /* sweep's only (predict's JSON has them in `buckets`, `memory`, `budget`, `interval`); from
   * FIELD_BUYER on, the buyer's figures, which read no prediction (sweep_row_buy) */
  FIELD_NBUCKETS, FIELD_MEMORY_PEAK_BYTES, FIELD_FITS, FIELD_MAX_BATCH_PER_GPU, FIELD_TRAIN_S, FIELD_GPU_HOURS,
  FIELD_COST, FIELD_CURRENCY, FIELD_ENERGY_KWH, FIELD_CO2_KG, FIELD_ITERATION_S_LO, FIELD_ITERATION_S_HI, FIELD_SAMPLES_PER_S_LO,
  FIELD_SAMPLES_PER_S_HI, FIELD_SPEEDUP_VS_FIRST, FIELD_SPEEDUP_VS_FIRST_LO, FIELD_SPEEDUP_VS_FIRST_HI,
  FIELD_COUNT,
  FIELD_BUYER = FIELD_MEMORY_PEAK_BYTES
} field_id;

/* What a field holds: a number; a boolean (true/false in predict's JSON, 1/0 in sweep's); an
 * enum's value (a number) written as its name; a text; a JSON value built whole (an array, an
 * object). */
typedef enum { FIELD_NUMBER = 0, FIELD_BOOL, FIELD_NAME, FIELD_TEXT, FIELD_JSON } field_kind;

/* The C type at a row's offset. */
typedef enum { FIELD_FN = 0, FIELD_DOUBLE, FIELD_INT, FIELD_LONG } field_type;

/* Which frameworks' reports (predict's JSON and table) have a field: bit 1 << sim_framework each;
 * sweep writes every column for every row (0 where the framework has none). */
enum {
  FIELD_DDP = 1u << SIM_FRAMEWORK_DDP,
  FIELD_DP = 1u << SIM_FRAMEWORK_DP,
  FIELD_FSDP = 1u << SIM_FRAMEWORK_FSDP,
  FIELD_ALL = (1u << SIM_FRAMEWORK_COUNT) - 1
};

/* What `ddpsim plot` accepts in a column: anything (not checked); a count >= 1; a rate > 0; an
 * efficiency in (0, 1]; a number >= 0 (times, caps); an iteration's length, > 0 (no iteration
 * takes no time). */
typedef enum { FIELD_ANY = 0, FIELD_ATLEAST1, FIELD_RATE, FIELD_FRACTION, FIELD_NONNEG, FIELD_ITERATION } field_range;

/* Where a field is in predict's `interval` object: not; scaled as the iteration (a time, a cost);
 * against it (a throughput). */
enum { FIELD_IV_NONE = 0, FIELD_IV_TIME, FIELD_IV_RATE };

/* What a value is read from. p: the prediction (NULL where only the buyer's figures are read,
 * sweep_row_buy); mem, job and budget, iv: the buyer's figures asked for (NULL: not asked). */
typedef struct {
  const sim_config *c;
  const predict_result *p;
  const memory_parts *mem;
  const budget_job *job;
  const budget_result *budget;
  const interval_t *iv;
} field_ctx;

typedef struct {
  const char *name;  /* the JSON key (and sweep's column unless `column`) */
  const char *group; /* the object of predict's JSON it is in; NULL: the top level */
  const char *unit;  /* as docs/cli.md's sweep table gives it */
  field_kind kind;
  unsigned frameworks; /* FIELD_DDP | FIELD_DP | FIELD_FSDP: in whose reports; 0: sweep's only */
  /* Where it lives: type and offset in predict_result, or (FIELD_FN) an accessor; NaN: not known. */
  field_type type;
  size_t at;
  double (*num)(const field_ctx *x);
  const char *(*name_of)(int v, char *buf, size_t len);            /* FIELD_NAME */
  const char *(*text)(const field_ctx *x, char *buf, size_t len);  /* FIELD_TEXT; sweep: x->c and x->job's currency only */
  cJSON *(*json)(const field_ctx *x);                              /* FIELD_JSON (NULL: out of memory) */
  int (*json_if)(const field_ctx *x); /* NULL: always in its frameworks' JSON; else whether */
  int optional;                       /* left out of the JSON where not known (NaN) */
  int interval;                       /* FIELD_IV_*: in predict's `interval` object */
  field_range range;
  /* sweep's column: its position (1, 2, ...; 0: none) and name when not `name`. */
  int sweep;
  const char *column;
  /* predict's table: its line's position (0: none), label and printf format of the value times
   * `scale` (0: 1; format NULL: bytes, as "1.23 MiB"), when it shows (NULL: always in its
   * frameworks), what follows the value on the line and the lines after it. */
  int line;
  const char *label, *format;
  const char *(*label_of)(const field_ctx *x); /* NULL: `label`; else the line's label for x */
  double scale;
  int (*line_if)(const field_ctx *x);
  void (*note)(strbuf *s, const field_ctx *x);
  void (*after)(strbuf *s, const field_ctx *x);
} field;

/* The table, indexed by field_id. */
extern const field field_table[FIELD_COUNT];

/* A bucket's parameters as a JSON array: their names (names != 0) or registration indices (the
 * buckets field's JSON, and `ddpsim buckets --json`). */
cJSON *field_bucket_params(const model_t *m, const bucket_t *b, int names);
/* A simulated bucket's all-reduce as nccl-tests reports one: algbw and busbw, GB/s. */
void field_bucket_bw(const sim_result *r, const sim_bucket_time *t, double *alg_GBps, double *bus_GBps);

/* Whether row f is in the reports of x's framework. */
int field_in_framework(const field *f, const field_ctx *x);
/* A number, bool or name field's value (the name's enum value); NaN where not known. */
double field_value(const field *f, const field_ctx *x);
/* A text or name field's text (buf may hold it); else NULL. For a name, of value v. */
const char *field_text(const field *f, const field_ctx *x, double v, char *buf, size_t len);
/* sweep's column name of f (NULL: not a column). */
const char *field_column(const field *f);

/* What plot accepts in a column named `name` (an `_lo`/`_hi` band column as its value's): the
 * field's range; for a name no field has (recommend's columns), the unit its name ends in: a rate
 * `_per_s` > 0, an iteration `iteration_s` > 0, a time `_s` >= 0, else not checked. */
field_range field_range_of(const char *name);
/* Whether v is in range r; *must says what it must be otherwise. */
int field_range_ok(field_range r, double v, const char **must);

/* sweep's columns in order: ids[0..n-1] (ids has FIELD_COUNT room); returns n. */
int field_sweep_columns(field_id *ids);

#endif
