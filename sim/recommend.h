/* recommend: the bucket cap to use for one configuration, robust to what the profile does not know,
 * and the other DDP knobs that would help (docs/cli.md, "recommend").
 *
 * The profile's uncertain numbers (sim/uncert.h) are drawn `samples` times from a seeded RNG; every
 * cap is simulated with each drawn profile (common random numbers: the caps of one draw meet the
 * same hardware), and with the nominal profile. In each draw a cap's regret is how much slower it
 * is than the fastest cap of that draw; the best cap minimises the `quantile` of its regret over
 * the draws (1: the worst case). Its gain over PyTorch's default (T_default / T_best - 1, per draw)
 * is reported as the mean, a central interval and how often it is positive. It is recommended
 * only when the interval's low end is at least `min_gain`; otherwise the answer is plainly "keep
 * the default". Then each other knob is tried on the recommended configuration over the same
 * draws: a first bucket of its own (bucket_cap_mb_list, 2.11 and later), gradient_as_bucket_view,
 * the fp16 and bf16 compression hooks (fp32 gradients only), broadcast_buffers=False (a model with
 * buffers on several GPUs), no_sync every 2 and 4 iterations; under FSDP its own knobs. The advice
 * is ranked: the knobs that apply by their mean paired gain, the best first, then those that do
 * not apply (the release lacks it, the gradients are already 16-bit), each saying why.
 * Library code: never prints. */
#ifndef DDPSIM_RECOMMEND_H
#define DDPSIM_RECOMMEND_H

#include <cjson/cJSON.h>

#include "sim.h"
#include "sweep.h"

#define RECOMMEND_MAX_CAPS 64
#define RECOMMEND_MAX_ADVICE 10

typedef struct {
  const sim_config *base;      /* the configuration (its bucket_cap_mb is not used) */
  const cJSON *profile_doc;    /* the base profile's JSON, with its "uncertainty" (uncert.h) */
  const char *profile_origin;  /* its file name, for messages */
  int ncaps;                   /* >= 1 caps, MB, ascending, one of them default_mb */
  const double *caps_mb;
  double default_mb;           /* PyTorch's default (25): simulated as bucket_cap_mb not given */
  int samples;                 /* draws of the profile (>= 0; 0 or no uncertainty: nominal only) */
  unsigned long seed;          /* of the draws */
  double quantile;             /* of the regret minimised, in (0, 1]; 1: the worst case */
  double level;                /* of the gain's central interval, in (0, 1) (0.9: 5% .. 95%) */
  double min_gain;             /* a gain's interval must start at or above this to count */
  int advise;                  /* also try the other knobs */
  sweep_opts run;              /* workers and progress (what is set here) */
} recommend_opts;

/* A relative gain (T_reference / T - 1) over the draws (the nominal profile's alone when there are
 * none). */
typedef struct {
  double nominal, mean, lo, hi; /* lo, hi: the central interval at opts.level */
  double wins;                  /* the fraction of draws where it is > 0 */
} recommend_gain;

typedef struct {
  const char *knob;            /* "first_bucket_cap", "gradient_as_bucket_view", "comm_hook", "broadcast_buffers", "static_graph",
                                  "no_sync";
                                  FSDP's: "reshard_after_forward", "hsdp", "forward_prefetch", "framework" */
  char setting[96];            /* what to set: "bucket_cap_mb_list=[1, 10]" */
  char note[256];              /* why it does not apply, or what it changes beyond speed */
  int applies;                 /* 0: not simulated (note says why) */
  int helps;                   /* gain.lo >= min_gain */
  int hurts;                   /* gain.hi <= -min_gain: slower in the interval's every part */
  int same;                    /* the gain exactly 0 nominally and in every draw: the knob changes nothing
                                  simulated here (PyTorch already does it, or it moves no time) */
  recommend_gain gain;         /* over the recommended configuration */
} recommend_advice;

typedef struct {
  int ncaps, def, best, recommended; /* indices into caps_mb: the default's, the best's, and the
                                   recommendation (the best when meaningful, else the default) */
  double caps_mb[RECOMMEND_MAX_CAPS];
  double nominal_s[RECOMMEND_MAX_CAPS];  /* iteration with the nominal profile */
  double mean_s[RECOMMEND_MAX_CAPS];     /* mean over the draws */
  double lo_s[RECOMMEND_MAX_CAPS], hi_s[RECOMMEND_MAX_CAPS]; /* the central interval (opts.level) of
                                            the iteration over the draws: a plot's band */
  double regret_q[RECOMMEND_MAX_CAPS];   /* the quantile of the regret minimised */
  double regret_max[RECOMMEND_MAX_CAPS]; /* the worst regret over the draws */
  double fastest[RECOMMEND_MAX_CAPS];    /* fraction of draws where the cap is the fastest */
  recommend_gain gain;                   /* the best over the default */
  int meaningful;                        /* gain.lo >= min_gain */
  int samples;                           /* draws made (0 when the profile states no uncertainty) */
  int uncertain;                         /* numbers of the profile that carry an uncertainty */
  int simulations;                       /* runs in all */
  int nadvice;
  recommend_advice advice[RECOMMEND_MAX_ADVICE];
  sweep_row scenario; /* the first cap's nominal run: the scenario's resolved fields (batch_per_gpu,
                         precision, pytorch) that the JSON states, so a plot's title can name them */
} recommend_result;

/* Runs the comparison. ERR_USAGE for options out of range (no caps, the default not among them, a
 * quantile or level outside its interval); a drawn profile that the schema refuses (a draw out of
 * a field's range) is ERR_INPUT naming the draw; errors of the simulations as sweep_run. */
int recommend_run(const recommend_opts *o, recommend_result *r, err_t *e);

/* The report as text and as JSON (docs/cli.md lists the fields). NULL when out of memory. */
char *recommend_table(const recommend_opts *o, const recommend_result *r);
cJSON *recommend_json(const recommend_opts *o, const recommend_result *r);

#endif
