/* profile: what things cost on one kind of hardware (format: docs/profile.md): its one schema, and
 * getters for what a loaded profile holds.
 *
 * Compute: per precision and op kind a roofline or measured points with a fitted roofline, and
 * measured convolutions; what one launch of a model op costs from them is sim/cost.h's
 * cost_op_time. Communication: the effective bandwidth and per-hop latency of each link class,
 * NCCL's per-algorithm costs; host-to-device copies; the host's costs; compute jitter. */
#ifndef DDPSIM_PROFILE_H
#define DDPSIM_PROFILE_H

#include <cjson/cJSON.h>
#include <gsl/gsl_interp.h>
#include <gsl/gsl_rng.h>

#include "err.h"
#include "gemmcost.h"
#include "model.h"
#include "ncclmodel.h" /* nccl_algo, nccl_proto: what comm.nccl and hop_lat_s are keyed by */
#include "roofline.h"

typedef struct profile profile_t;

/* The physical ranges of docs/profile.md, "Ranges", that ddpcalib's quality gates share (the
 * bandwidths' are common/txt.h's TXT_BW_*): a latency or launch cost is 0 or 1 ns .. 10 s, a compute
 * rate 1 Mflop/s .. 1 Eflop/s, an empirical jitter ratio 0.1 .. 10. */
#define PROFILE_LAT_MIN_s 1e-9
#define PROFILE_LAT_MAX_s 10.0
#define PROFILE_FLOPS_MIN 1e6
#define PROFILE_FLOPS_MAX 1e18
/* compute.jitter.ratios[]: each a time over the mean time, 0.1 .. 10 (what ddpcalib may write). */
#define PROFILE_JITTER_RATIO_MIN 0.1
#define PROFILE_JITTER_RATIO_MAX 10.0

/* Run-to-run variation of a GPU's compute time (docs/profile.md, `compute.jitter`): each GPU's
 * compute in each iteration is multiplied by a draw with mean 1. */
typedef enum { PROFILE_JITTER_NONE = 0, PROFILE_JITTER_LOGNORMAL = 1, PROFILE_JITTER_EMPIRICAL = 2 } profile_jitter_kind;
/* "none", "lognormal", "empirical": compute.jitter.model's words (NONE's is what reports print). */
const char *profile_jitter_name(profile_jitter_kind k);

typedef struct {
  profile_jitter_kind kind;
  double cv;             /* lognormal: coefficient of variation */
  const double *ratios;  /* empirical: measured time / mean time, owned by the profile */
  int nratios;
} profile_jitter;

/* Loads a profile JSON file into *out (caller frees with profile_destroy). ERR_IO if unreadable,
 * ERR_INPUT with `path: what is wrong` (naming the JSON path of the bad field) otherwise. Every
 * field is validated here, so later queries fail only for things the profile lacks. */
int profile_load(const char *path, profile_t **out, err_t *e);

/* Parses the JSON text of a profile, `len` bytes NUL-terminated at text[len], into *out (the
 * caller frees it with cJSON_Delete); does not check the schema. ERR_INPUT with `origin:line: ...`
 * for malformed JSON, data after the document or a NUL byte, `origin: empty file` for nothing.
 * The one JSON reader of profiles: ddpsim's loader and ddpcalib's (calib/profilew.h) both use it. */
int profile_json_parse(const char *text, size_t len, const char *origin, cJSON **out, err_t *e);
int profile_parse(const char *text, const char *origin, profile_t **out, err_t *e);
void profile_destroy(profile_t *p); /* NULL is a no-op */

/* The one schema of docs/profile.md. profile_parse and profile_load check a whole profile
 * (PROFILE_WHOLE: at least one precision under "compute", a "comm.links" object), what ddpsim
 * needs to simulate. PROFILE_PART accepts the halves ddpcalib writes for `ddpcalib merge`:
 * "compute" (or its precisions) and "comm" (or "comm.links") may be absent, but not both; every
 * section that is present is checked exactly as for a whole profile, with the same messages. */
enum { PROFILE_WHOLE = 0, PROFILE_PART = 1 };

/* A profile from an already parsed JSON document (not modified, still the caller's); `origin`
 * (a file name) starts every message. As profile_parse otherwise. */
int profile_from_json(const cJSON *doc, const char *origin, int part, profile_t **out, err_t *e);

/* Checks doc as profile_from_json does and keeps nothing: ERR_OK, ERR_INPUT or ERR_NOMEM. This is
 * what `ddpcalib validate` runs (calib/profilew.h), so it and ddpsim refuse the same profiles with
 * the same message. */
int profile_check_json(const cJSON *doc, const char *origin, int part, err_t *e);

const char *profile_name(const profile_t *p);

/* What a run needs of a loaded profile beyond its schema: both op kinds' cost models at each of the
 * `nprec` precisions and an entry for each of the `nclasses` link classes. ERR_INPUT with the
 * message ddpsim gives when a run meets the gap (cost_op_time's, profile_link's). This is how
 * `ddpcalib validate --precision --links` refuses what such a run of ddpsim would refuse. */
int profile_require(const profile_t *p, const model_dtype *precs, int nprec, const char *const *classes, int nclasses,
                    err_t *e);

/* The `warning`s of fits ddpcalib kept with --accept-poor-fit (comm.links.<class>.warning,
 * compute.<precision>.<kind>.warning), as "JSON path: text": how many, and the i-th (the first 8
 * are kept; NULL beyond). Front ends report them whenever the profile is used. */
int profile_nwarnings(const profile_t *p);
const char *profile_warning(const profile_t *p, int i);

/* One line saying what the profile holds: "compute fp32, fp16; links nvlink, ib-edr; jitter ...",
 * naming what is absent ("no fp16"). Truncated to len. */
void profile_summary(const profile_t *p, char *buf, size_t len);

/* ---- The compute cost models as loaded: what sim/cost.c prices ops from (cost_op_time). Read
 * only, owned by the profile; every one was checked by the loader. ---- */

/* compute.<precision>.<kind>: a roofline, or a table of measured points with a fitted roofline as
 * its fallback (docs/profile.md). */
typedef struct {
  int present;
  int is_table;
  roofline roof; /* the model, or the table's fallback */
  /* table: measured points */
  int npts;
  double *pm, *pn, *pk; /* gemm shapes (npts) */
  double *pbytes;       /* ewise sizes (npts) */
  double *ptime;        /* (npts) */
  /* ewise: the rate (bytes / time) interpolated linearly over log(size); distinct sizes sorted,
   * rates of equal sizes averaged */
  int nuniq;
  double *logsize, *rate; /* (nuniq) */
  gsl_interp *interp;     /* NULL when nuniq < 2 */
  gemmcost_table shapes;  /* gemm tables: the shape-aware interpolation (sim/gemmcost.h) */
} profile_costmodel;

/* compute.<precision>.conv: measured convolutions by geometry, n c h w k r s pad_h pad_w stride_h
 * stride_w, each pass's time (fwd, dgrad, wgrad). */
enum { PROFILE_CONV_GEO = 11 };
/* Convolutions of one filter size and stride: cuDNN runs them with the same algorithms (a 3x3
 * stride-1 convolution may use Winograd's fewer multiplications, a 1x1 one is a plain GEMM), so a
 * measured convolution says something about another only within its class (docs/profile.md). */
typedef struct {
  long r, s, stride_h, stride_w;
  gemmcost_table shapes[3]; /* each pass's measured times over its implicit GEMM (sim/gemmcost.h) */
} profile_convclass;
typedef struct {
  int npts, ncls;
  double (*geo)[PROFILE_CONV_GEO];
  double (*time_s)[3];     /* 0: not measured */
  profile_convclass *cls;  /* (ncls) the distinct (r, s, stride_h, stride_w) of the points */
} profile_convtable;

/* compute.<precision>.attention: a fused attention kernel's measured speed (docs/profile.md): the
 * rate of its forward and backward together (FLOPs as model_op_flops counts them, over the time of
 * both passes) by key/value length and head dimension, for full and causal attention. */
enum { PROFILE_ATTN_SEQ = 16, PROFILE_ATTN_DIMS = 4 };
typedef struct {
  int present;
  int nseq, nd;
  double seq[PROFILE_ATTN_SEQ], dims[PROFILE_ATTN_DIMS]; /* increasing */
  double flops_s[2][PROFILE_ATTN_DIMS][PROFILE_ATTN_SEQ]; /* [causal][dim][seq], FLOP/s */
  char kernel[64];                                        /* "FlashAttention-2" */
} profile_attention;

/* Precision d's attention table, or NULL where the profile has none. */
const profile_attention *profile_attention_table(const profile_t *p, model_dtype d);

/* The cost model of op kind k at precision d (present == 0 where the profile has none). */
const profile_costmodel *profile_cost_model(const profile_t *p, model_dtype d, model_op_kind k);
/* Precision d's measured convolutions (npts == 0 where none). */
const profile_convtable *profile_conv_table(const profile_t *p, model_dtype d);
/* The class of precision d's convolutions with this filter and these strides, or NULL. */
const profile_convclass *profile_conv_class(const profile_t *p, model_dtype d, long r, long s, long stride_h,
                                            long stride_w);
/* 1 and *native (the layout the convolution kernels take) where compute.<d>.conv_layout is given. */
int profile_conv_layout(const profile_t *p, model_dtype d, model_layout *native);

/* What compute.fp32.gemm's costs are of (its optional `math`, docs/profile.md): TF32 tensor cores,
 * or strict fp32 on a card that has TF32; UNKNOWN where the profile does not say (a card without
 * TF32, or a source that does not tell). */
typedef enum { PROFILE_MATH_UNKNOWN = 0, PROFILE_MATH_TF32 = 1, PROFILE_MATH_STRICT = 2 } profile_math;
profile_math profile_fp32_gemm_math(const profile_t *p);
/* The fp32 GEMM costs of math `math`: compute.fp32.gemm where it says that math, else its twin of
 * the other math (compute.fp32.gemm_tf32 or gemm_strict, which a profile may add beside a gemm
 * that says its math); NULL where the profile has none of that math (or math is UNKNOWN). */
const profile_costmodel *profile_fp32_gemm(const profile_t *p, profile_math math);

/* The file (or origin) the profile was loaded from: what messages name. */
const char *profile_path(const profile_t *p);

/* Effective bandwidth of one link of class `cls` whose nominal bandwidth is nominal_bw_Bps, and the
 * latency of one ring hop over it. ERR_INPUT naming the profile if the class is absent. */
int profile_link(const profile_t *p, const char *cls, double nominal_bw_Bps, double *bw_Bps, double *lat_s,
                 err_t *e);

/* The link class of one TCP connection between two processes, which gloo's ring crosses (not a
 * topology's: docs/profile.md, "Communication"; sim/plan.c prices gloo on it, ddpcalib machine
 * writes it). */
#define PROFILE_LINK_TCP "tcp"

/* 1 if the profile has comm.links.<cls>. */
int profile_has_link(const profile_t *p, const char *cls);

/* 1 if comm.links.<cls>.shares_compute is true: the link's transfers are done by the cores that
 * compute (MPI between CPU processes), so communication and compute cannot overlap. */
int profile_link_shares_compute(const profile_t *p, const char *cls);
/* comm.links.<cls>.cpu_share (with shares_compute): the share of a core the link's collective keeps
 * busy while it runs alone (process CPU time over wall time, measured), so that compute beside it
 * runs at 1 - cpu_share of its rate instead of waiting for it; 0 where absent (the collective takes
 * the cores whole). */
double profile_link_cpu_share(const profile_t *p, const char *cls);

/* NCCL's cost of one algorithm and protocol (sim/nccl.h's, keyed by their names: "ring", "tree";
 * "LL", "LL128", "Simple"): comm.nccl.<algo>.<proto> {base_lat_s, bw_factor}. *enabled is 0 where the profile lacks it;
 * without comm.nccl only ring/Simple is enabled, with base 0 and factor 1. */
/* comm.nccl.tuning_model: which release's refinements of NCCL's own tuning model apply (sim/ncclmodel.h):
 * PROFILE_NCCL_NONE without it, PROFILE_NCCL_2_7 for "nccl-2.7", PROFILE_NCCL_2_18 for "nccl-2.18".
 * The latter's tables are keyed by GPU architecture: comm.nccl.gpu_arch ("volta", "ampere",
 * "hopper"; required with nccl-2.18 and refused without it), PROFILE_ARCH_*, -1 when absent. */
enum { PROFILE_NCCL_NONE = 0, PROFILE_NCCL_2_7 = 1, PROFILE_NCCL_2_18 = 2 };
enum { PROFILE_ARCH_VOLTA = 0, PROFILE_ARCH_AMPERE = 1, PROFILE_ARCH_HOPPER = 2 };
int profile_nccl_tuning_model(const profile_t *p);
int profile_nccl_gpu_arch(const profile_t *p);

int profile_nccl(const profile_t *p, nccl_algo a, nccl_proto q, int *enabled, double *base_lat_s, double *bw_factor,
                 err_t *e);

/* Per-hop latency of link class `cls` for an algorithm and protocol: comm.links.<cls>.hop_lat_s,
 * or lat_s when the profile has no comm.nccl. ERR_INPUT for a missing class or entry. */
int profile_hop_lat(const profile_t *p, const char *cls, nccl_algo a, nccl_proto q, double *lat_s, err_t *e);

/* The host-to-device copies a profile prices (h2d.<mode>, as ddpcalib h2d measures them): cudaMemcpy
 * from pageable and from pinned memory, cudaMemcpyAsync from pinned memory. */
typedef enum {
  PROFILE_H2D_PAGEABLE_SYNC = 0, PROFILE_H2D_PINNED_SYNC = 1, PROFILE_H2D_PINNED_ASYNC = 2, PROFILE_H2D_NMODES = 3
} profile_h2d_mode;
/* "pageable_sync", "pinned_sync", "pinned_async": the keys under "h2d". */
const char *profile_h2d_name(profile_h2d_mode m);

/* Host-to-device copy cost of a mode: h2d.<mode> {lat_s, bw_Bps}. *present is 0 when absent. */
int profile_h2d(const profile_t *p, profile_h2d_mode mode, int *present, double *lat_s, double *bw_Bps, err_t *e);

/* compute.host.launch_s: what the host (framework dispatch and the launch call) spends per kernel
 * launch; 0 when the profile does not say. */
double profile_host_launch_s(const profile_t *p);
/* compute.host.dispatch_s: the framework's host cost per op it dispatches (Python and PyTorch's
 * dispatcher, measured by `ddpcalib host`); 0 when the profile does not say. */
double profile_host_dispatch_s(const profile_t *p);
/* compute.host.event_s: what the host spends on one CUDA event call (a cudaEventRecord of a
 * timing-disabled event, a cudaStreamWaitEvent, an event's creation or destruction: ProcessGroupNCCL's
 * work around each collective, docs/reducer.md); 0 when the profile does not say. */
double profile_host_event_s(const profile_t *p);
/* compute.host.jitter_s: the standard deviation of an additive host delay per rank and iteration
 * (seconds, `ddpcalib host`); 0 when the profile does not say. */
double profile_host_jitter_s(const profile_t *p);
/* compute.host.reduce_Bps: bytes of a buffer the host CPU sums into another per second (gloo's
 * reduction); 0 when the profile does not say. */
double profile_host_reduce_Bps(const profile_t *p);

/* The card (the profile's "device" object, docs/profile.md; each field 0 where the profile does not
 * say): what kind of device it is (device.kind: "gpu", the default, or "cpu": the training
 * processes compute on the host's cores and their tensors live in host memory), its memory, what the CUDA context takes of it, its board power limit (TDP) and idle power,
 * its streaming multiprocessors and its memory (HBM) bandwidth; and its name as the device reports
 * it (cudaDeviceProp.name, a CPU's /proc/cpuinfo "model name"; "" where the profile does not say),
 * which says whether a model's measured times are this device's (sim/cost.h, cost_measured). */
#define PROFILE_DEVICE_NAME_MAX 128
typedef enum { PROFILE_DEVICE_GPU = 0, PROFILE_DEVICE_CPU = 1 } profile_device_kind;
typedef struct {
  profile_device_kind kind;
  double memory_bytes, cuda_context_bytes, tdp_W, idle_W, sm_count, hbm_Bps;
  char name[PROFILE_DEVICE_NAME_MAX];
} profile_device;
void profile_get_device(const profile_t *p, profile_device *out);

/* What one rank is on the profile's device, as reports name it: "GPU" ("GPUs"), or "process"
 * ("processes") where device.kind is cpu (the training processes compute on the host's cores). */
const char *profile_rank_word(const profile_t *p, int plural);

/* A nominal profile and S profiles drawn from its document's uncertainty (sim/uncert.h): p[0] the
 * nominal (not owned), p[1..S] the draws (owned), n = S + 1. The draws come from a gsl mt19937
 * seeded with `seed` (the same profiles on every machine), one uncert_perturb each, checked as a
 * whole profile and named "<origin> (draw K of seed N)" in messages. What recommend and predict's
 * intervals draw. */
typedef struct {
  int n;
  const profile_t **p;
} profile_draws;

/* ERR_NOMEM, or a drawn profile's error; nothing is left allocated on failure. */
int profile_draws_build(const cJSON *doc, const char *origin, const profile_t *nominal, unsigned long seed, int S,
                        profile_draws *d, err_t *e);
void profile_draws_free(profile_draws *d); /* a zeroed one is a no-op */

/* The profile's compute jitter (kind NONE if it has none). Never fails for a loaded profile. */
int profile_get_jitter(const profile_t *p, profile_jitter *out, err_t *e);

/* One multiplier drawn from j (1 for NONE): lognormal with mean 1 and j->cv, or a uniformly chosen
 * measured ratio. rng is a gsl_rng; the caller seeds it. */
double profile_jitter_draw(const profile_jitter *j, const gsl_rng *rng);

#endif
