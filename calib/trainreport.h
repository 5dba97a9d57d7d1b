/* trainreport: what `ddpcalib train` reports of a run (train.h): its statistics, the JSON report,
 * the final parameters written to a file. docs/validation.md. Never prints. */
#ifndef DDPCALIB_TRAINREPORT_H
#define DDPCALIB_TRAINREPORT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "err.h"
#include "train.h"

/* The timed iterations' time: median, mean, min, max (seconds; zeros when out of memory). */
void trainreport_stats(const train_cfg *c, const train_result *r, double stats[4]);

/* Bucket b's ready, all-reduce start and end times: medians over the synced timed iterations. */
void trainreport_bucket_medians(const train_cfg *c, const train_result *r, int b, double out[3]);

/* A parameter tensor's name ("encoder.weight", "w_hh_g", ...; "?" out of range). */
const char *trainreport_param_name(int p);

/* The report as JSON (stats from trainreport_stats); the caller deletes it. NULL when out of memory. */
cJSON *trainreport_json(const train_cfg *c, const train_result *r, const double stats[4]);

/* Writes the n parameters as raw float32 to path, atomically (a temporary file renamed): ERR_IO. */
int trainreport_dump_params(const char *path, const float *p, size_t n, err_t *e);

#endif
