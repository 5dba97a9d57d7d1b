/* parse: strict parsing of command-line values.
 *
 * Each function parses the whole string or fails: trailing garbage, an empty string, a negative
 * or out-of-range number is an error (ERR_USAGE) whose message names `what` (the flag). */
#ifndef DDPCALIB_PARSE_H
#define DDPCALIB_PARSE_H

#include <stddef.h>

#include "err.h"

/* A byte count with an optional K, M or G suffix (powers of 1024, as nccl-tests reads them):
 * "8", "64K", "128M", "1G". Must be > 0. */
int parse_bytes(const char *s, const char *what, size_t *out, err_t *e);

/* An integer in [lo, hi]. */
int parse_int(const char *s, const char *what, long lo, long hi, long *out, err_t *e);

/* A real number > 0 (e.g. the -f factor must be > 1: checked by the caller). */
int parse_double(const char *s, const char *what, double *out, err_t *e);

/* A comma-separated list of integers in [lo, hi], at most `cap` of them: "4096,8192".
 * Writes them to out[] and their number to *n. */
int parse_int_list(const char *s, const char *what, long lo, long hi, long *out, size_t cap,
                   size_t *n, err_t *e);

#endif
