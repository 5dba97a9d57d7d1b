/* validate: ddpsim's predictions against a real data-parallel training run on this machine.
 *
 * Drives `ddpcalib` (and `mpirun`) as subprocesses: calibrates the CPU (ddpcalib compute at the
 * model's own shapes, ddpcalib comm between 2 MPI processes, merged into one profile), describes
 * the machine as a topology (N processes on one host over link class `shm`), then for each
 * configuration predicts with sim_run and runs `mpirun -np N ddpcalib train --json` with the same
 * model, batch, buckets and mode, and compares iteration times and per-bucket all-reduce times.
 * What is compared, and the known sources of error: docs/validation.md.
 *
 * Elementwise ops. ddpcalib's ewise table times memcpy; on a CPU the mLSTM's elementwise passes
 * (sigmoid, tanh, exp, the weight norm's square roots and divisions) are compute-bound and several
 * times slower per byte. Unless ewise_memcpy is set, the profile ddpsim is given here is the
 * calibrated one with compute.fp32.ewise.points replaced by points derived from the same
 * calibration run: each timed mLSTM phase (samples.compute.fp32.mlstm) minus the timed GEMMs of
 * that phase (samples.compute.fp32.gemm) is the time of its elementwise ops, shared among them in
 * proportion to their bytes. Only calibration data go in; nothing comes from the runs compared.
 *
 * Drift. Calibration and real runs are seconds apart on a machine shared with other work, and its
 * speed moves on that scale: when it moves between them, the error of a row is the measurement's,
 * not the model's. Unless a profile is given, each repeat therefore runs the compute calibration
 * again after its real runs, builds the profile it would have predicted with (the same merge with
 * the repeat's comm calibration, the same elementwise derivation) and predicts the 1-process flat
 * iteration (no communication: compute only) under both profiles. The drift is
 * (after - before) / before of that predicted time: positive when the machine was slower after the
 * runs. It is in the units of the error it would put into a 1-process row, and it comes from
 * calibration data only. A repeat whose |drift| exceeds max_drift is redone from its calibration,
 * up to drift_retries more times; if every attempt drifted, the last is kept and marked. Nothing
 * of the drift enters the predictions or the measurements.
 *
 * The library never prints: progress lines go to a caller's callback. Subprocess output is kept
 * in the work directory (one .out/.err pair per command). */
#ifndef DDPSIM_VALIDATE_H
#define DDPSIM_VALIDATE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "err.h"
#include "sim.h"

#define VALIDATE_MAX_CONFIGS 64
#define VALIDATE_MAX_DRIFT_RETRIES 10

typedef struct {
  int nprocs;
  sim_mode mode;
  double cap_mb;   /* ddp: bucket_cap_mb */
  double first_mb; /* ddp: first bucket cap */
} validate_config;

typedef struct {
  const char *ddpcalib;  /* path of the ddpcalib binary */
  const char *mpirun;    /* "mpirun" or a path */
  const char *workdir;   /* existing directory for profiles, models, outputs */
  const char *profile;   /* NULL: calibrate into workdir/profile.json; else use this profile */
  long hidden, embed, vocab, seq, batch; /* the mLSTM; batch per process */
  int iters, warmups;    /* of each real run */
  int repeats;           /* real runs per configuration (run-to-run noise), >= 1 */
  int optimizer_sgd;     /* 0: Adam (default: the bundled model files' optimizer), 1: plain SGD */
  int rebuilt;           /* buckets rebuilt in gradient-ready order (DDP's steady state) */
  int ewise_memcpy;      /* 0: elementwise costs derived from the timed mLSTM phases (below);
                            1: the profile's own ewise table (memcpy) */
  double max_drift;      /* redo a repeat whose |drift| exceeds this (fraction); 0: measure and report
                            the drift, never redo */
  int drift_retries;     /* extra attempts per repeat, 0 .. VALIDATE_MAX_DRIFT_RETRIES */
  int accept_poor_fit;   /* pass --accept-poor-fit to ddpcalib compute and comm: a calibration its
                            quality gate refuses on a busy machine is kept, marked with a warning
                            that the predictions report, instead of failing the run */
  int nconfigs;
  validate_config configs[VALIDATE_MAX_CONFIGS];
} validate_opts;

typedef struct {
  int index;
  size_t bytes;
  double pred_ready_s, pred_start_s, pred_end_s; /* relative to the iteration start */
  double meas_ready_s, meas_start_s, meas_end_s; /* medians over iterations and repeats */
  double pred_comm_s, meas_comm_s;               /* end - start */
  double comm_rel_err;                           /* (pred - meas) / meas */
} validate_bucket;

typedef struct {
  validate_config cfg;
  double pred_s, meas_s; /* steady-state iteration time */
  double rel_err;        /* (pred - meas) / meas */
  double noise;          /* run-to-run spread of meas: (max - min) / median over repeats, or the
                            interquartile range over iterations / median for one repeat */
  double pred_forward_s, pred_backward_s, pred_optimizer_s, pred_exposed_comm_s;
  double meas_forward_s, meas_backward_s, meas_wait_s, meas_step_s; /* medians (rank 0) */
  double meas_chars_per_s;
  double meas_cpu_share; /* the least served rank's CPU time / wall time (median over repeats):
                            below 1 when other work had a core */
  int nbuckets;
  validate_bucket *buckets; /* (nbuckets) reduction order */
} validate_row;

/* One repeat's drift check (validate.h, top). */
typedef struct {
  double drift;    /* of the attempt kept: (after - before) / before of the 1-process predicted
                      iteration; NAN when not measured (a profile was given) */
  double pred_before_s, pred_after_s; /* that prediction under the two calibrations */
  int redone;      /* attempts redone because they drifted (0 .. drift_retries) */
  int drifted;     /* kept although |drift| > max_drift: every attempt drifted */
  double attempt_drift[VALIDATE_MAX_DRIFT_RETRIES + 1]; /* (redone + 1) drifts, the kept one last */
} validate_repeat;

typedef struct {
  char profile[1024];  /* the profile used */
  int nrepeats;
  validate_repeat *repeats; /* (nrepeats) */
  int drifted_repeats;      /* repeats kept although drifted */
  int redone_attempts;      /* attempts redone over all repeats */
  int poor_fits;            /* fits kept by --accept-poor-fit in the profiles predicted with (their
                               warnings summed over repeats: profile_nwarnings) */
  char poor_fit[512];       /* the first of them, "JSON path: text" ("" when none) */
  int nrows;
  validate_row *rows;
  double median_abs_err, max_abs_err;         /* over rows, of |rel_err| (fractions) */
  double median_abs_comm_err, max_abs_comm_err; /* over buckets of multi-process rows */
  int n_uncontended;                          /* rows whose real run had >= 90% of a core per rank */
  int n_comm;                 /* bucket all-reduces compared (multi-process rows) */
  double median_abs_err_uncontended, max_abs_err_uncontended; /* over those rows (0 if none) */
  int rank_pairs, rank_resolved, rank_agree;  /* same nprocs and mode ddp, differing caps: pairs;
                                                 measured difference > noise; predicted order agrees */
} validate_report;

/* The default configurations' process counts and ddp bucket caps (MB), as `ddpsim validate`'s
 * --nprocs and --bucket-cap-mb lists take them: written here once. */
#define VALIDATE_NPROCS "1,2"
#define VALIDATE_CAPS_MB "0.05,0.25,1,4,25"

/* Fills the defaults: mLSTM H 256, E 64, V 256, T 8, B 4; 30 iterations, 5 warm-ups, 1 repeat;
 * drift check at 10% with 2 retries; Adam (the bundled model files' optimizer); rebuilt buckets;
 * elementwise costs from the timed phases; configurations validate_set_configs makes of
 * VALIDATE_NPROCS and VALIDATE_CAPS_MB in both modes (1 process: ddp at 25 MB, flat; 2 processes:
 * ddp at every cap with the first bucket equal to the cap, flat). Paths are the caller's. */
void validate_opts_defaults(validate_opts *o);

/* Sets o's configurations: for each of the nn process counts in turn, ddp (if asked) at each of the
 * nc caps, its first bucket first_mb or, when first_mb <= 0, the cap (one process: at the largest
 * cap only, its buckets copied but not exchanged), then flat (if asked). ERR_USAGE when they would
 * be more than VALIDATE_MAX_CONFIGS. */
int validate_set_configs(validate_opts *o, const long *nprocs, int nn, const double *caps, int nc, int ddp, int flat,
                         double first_mb, err_t *e);

typedef void (*validate_progress_fn)(const char *line, void *user);

/* Runs the whole comparison, each repeat with its drift check (above; out->repeats). ERR_INPUT for
 * bad options (max_drift negative, drift_retries outside 0..VALIDATE_MAX_DRIFT_RETRIES, ...) or a
 * missing ddpcalib (the message says where it was looked for), ERR_IO/ERR_SIM when a subprocess or
 * a simulation fails (the message names the command and its last line of error output). On
 * success the caller frees *out with validate_report_free. */
int validate_run(const validate_opts *o, validate_progress_fn progress, void *user, validate_report *out, err_t *e);
void validate_report_free(validate_report *r); /* NULL is a no-op */

/* "2p ddp 0.25MB", "1p flat": the configuration's label (static buffer of the caller). */
void validate_config_label(const validate_config *c, char *buf, size_t len);

/* The table (caller frees) and the JSON report (caller frees with cJSON_Delete); NULL when out of
 * memory. */
char *validate_table(const validate_opts *o, const validate_report *r);
cJSON *validate_json(const validate_opts *o, const validate_report *r);

#endif
