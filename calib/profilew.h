/* profilew: builds, checks, merges, reads and writes profile JSON (docs/profile.md, with the
 * additions documented in docs/calib.md).
 *
 * A profile is a cJSON tree owned by the caller (free with cJSON_Delete). Messages about files
 * start with `file: ` (`file:line: ` for JSON syntax errors); messages about content name the JSON
 * path, e.g. `compute.fp32.gemm.points[3].time_s`. */
#ifndef DDPCALIB_PROFILEW_H
#define DDPCALIB_PROFILEW_H

#include <cjson/cJSON.h>

#include "err.h"

/* What a measured profile records about where it comes from. Any field may be NULL or empty. */
typedef struct {
  const char *subcommand; /* "comm", "compute", "h2d" */
  int argc;
  char **argv;            /* the exact command line, recorded shell-quoted */
  const char *devices;    /* e.g. "cpu (one rank per process)", "NVIDIA A100-SXM4-40GB x 8" */
  const char *hosts;      /* comma-separated; NULL = this host */
  const char *driver;     /* e.g. "CUDA driver 12040, runtime 12040" */
  const char *libraries;  /* e.g. "Open MPI v4.1.4; OpenBLAS 0.3.21" */
} profilew_prov;

/* A new empty profile: format, version 1, name, provenance (kind "measured", host, kernel,
 * date in UTC, the command, GSL and cJSON versions, plus p's fields), and empty "compute",
 * "comm": {"links": {}} and "samples". NULL when out of memory. */
cJSON *profilew_new(const char *name, const profilew_prov *p);

/* Adds a number / string member, replacing any member of that name. ERR_NOMEM on failure. */
int profilew_num(cJSON *obj, const char *key, double v, err_t *e);
int profilew_str(cJSON *obj, const char *key, const char *v, err_t *e);
/* Returns obj[key], creating an empty object there if absent (NULL when out of memory or when
 * obj[key] exists and is not an object). */
cJSON *profilew_obj(cJSON *obj, const char *key);

/* Reads and parses `path` (does not validate). */
int profilew_load(const char *path, cJSON **out, err_t *e);

/* Checks the tree against docs/profile.md with ddpsim's own loader (profile_check_json in
 * sim/profile.h), with ddpsim's message: with part PROFILE_WHOLE exactly what `ddpsim --profile`
 * accepts; with PROFILE_PART either half (compute or comm) may be missing or empty, as ddpcalib
 * writes them for merging, and every section present is checked as for a whole profile. Beyond
 * that schema, a top-level "name" string and "provenance" object are required. ERR_INPUT
 * (ERR_NOMEM) with `file: what is wrong`, naming the JSON path. */
int profilew_validate(const cJSON *doc, const char *file, int part, err_t *e);

/* Validates, then writes `doc` to `path` atomically (common/afile.h: a temporary file in the same
 * directory, flushed to disk, renamed over `path`, the directory flushed; the umask honoured, a
 * symbolic link written through). On failure `path` is untouched. */
int profilew_write(const cJSON *doc, const char *path, err_t *e);

/* Which compute.jitter a merge keeps (docs/calib.md, "merge"). Jitter is measured with a
 * compute calibration and describes that machine's noise, so by default (AUTO) it is kept only
 * when the side it comes from (b's when both have one) also gave every compute.<precision> of the
 * merge; otherwise it is left out. FIRST / SECOND take a's / b's regardless; NONE drops it. */
typedef enum { PROFILEW_JITTER_AUTO = 0, PROFILEW_JITTER_FIRST, PROFILEW_JITTER_SECOND, PROFILEW_JITTER_NONE } profilew_jitter;

/* Merges b over a into a new tree (*out; caller frees): objects merge key by key down to units
 * (`compute.<precision>.<kind>`, `comm.links.<class>`, `samples.<section>.<name>`, `h2d.<mode>`,
 * and whole `compute.host`, `comm.nccl`), which the later profile (b) replaces whole; top-level
 * scalars come from b; compute.jitter by `jitter`. Where b's compute.fp32.gemm replaces one of a's
 * of another math (tf32, strict), a's stays as compute.fp32.gemm_<its math> beside it. The provenance becomes {kind: "merged",
 * sources: [{file, provenance, took: [unit paths taken from it]}...], replaced: ["path from
 * b_file", ...], jitter: "what was done with compute.jitter and why"}. Both inputs must pass
 * profilew_validate (PROFILE_PART); the result is checked when written (profilew_write). */
int profilew_merge(const cJSON *a, const char *a_file, const cJSON *b, const char *b_file, profilew_jitter jitter,
                   const profilew_prov *p, cJSON **out, err_t *e);

#endif
