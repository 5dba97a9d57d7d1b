/* txt: the small pieces shared by the line-oriented loaders (models, topologies).
 *
 * Files are read whole; lines are split on whitespace; `#` starts a comment. Numbers are strict:
 * trailing garbage is an error. Units follow SimGrid's spelling, decimal prefixes (1 GBps = 1e9
 * bytes/s, 1 Gbps = 1e9 bits/s). */
#ifndef DDPSIM_TXT_H
#define DDPSIM_TXT_H

#include <stddef.h>

#include "err.h"

/* Reads the whole file at path into a NUL-terminated buffer the caller frees. NULL on failure
 * (errno set). */
char *txt_read_file(const char *path, size_t *len);

/* The loaders' reader: *text the whole file (the caller frees it) and ERR_OK; or *text NULL and
 * ERR_IO `PATH: cannot read: WHY`, or ERR_INPUT `PATH:LINE: a NUL byte: not a text file` (a NUL
 * would otherwise end the text there, and the loader would report what is missing after it). */
int txt_read_text(const char *path, char **text, err_t *e);

/* Splits line in place at whitespace into at most max tokens, stopping at `#`. Returns the token
 * count, or -1 if there are more than max tokens. */
int txt_split(char *line, char **tok, int max);

/* Strict parsers: return 0 on success, -1 if s is not entirely a number of the right kind. */
int txt_parse_long(const char *s, long *out);    /* decimal integer */
int txt_parse_double(const char *s, double *out); /* finite double */
int txt_parse_bw(const char *s, double *Bps);     /* "25GBps", "100Gbps", "1.25e9Bps" */

/* The bandwidths every loader accepts (topologies' nominal ones, profiles' effective ones): 1 kB/s
 * to 1 PB/s, beyond any real link either way, so that nothing like 1e-300 or 1e308 reaches SimGrid. */
#define TXT_BW_MIN_Bps 1e3
#define TXT_BW_MAX_Bps 1e15
int txt_parse_time(const char *s, double *sec);   /* "0.7us", "5ms", "2e-6s", "10ns" */

/* If tok is "key=value" with key equal to `key`, returns a pointer to value; else NULL. */
const char *txt_kv(const char *tok, const char *key);

#endif
