/* out: how ddpsim's commands print what the library built, and write files atomically.
 * Front-end code: failures are a status with the message in the caller's cli_ctx (cli.h). */
#ifndef DDPSIM_OUT_H
#define DDPSIM_OUT_H

#include <cjson/cJSON.h>

#include "cli.h"

/* Prints a report the library built (NULL: it ran out of memory) and frees it: CLI_OK, or ERR_NOMEM
 * with the message in x. out_json stamps the object with "ddpsim_version" (common/version.h) and prints
 * cJSON's text and a newline. */
int out_text(cli_ctx *x, char *s);
int out_json(cli_ctx *x, cJSON *j);

/* Writes text to path atomically (common/afile.h: fsync, rename, umask, links written through): CLI_OK
 * or ERR_IO. */
int out_write_atomic(cli_ctx *x, const char *path, const char *text);

/* A progress line for a long run (sim/sweep.h's sweep_progress_fn, arg an out_progress):
 * "PROG WHERE: DONE/N WHAT, T s, about L s left" on stderr, rewritten in place on a terminal (one
 * line each call elsewhere); shown when `forced`, or on a terminal once the run has taken 3 s, so
 * tests and pipes stay quiet. */
typedef struct {
  const cli_ctx *x;
  const char *what; /* "configurations", "simulations" */
  int forced;
} out_progress;
void out_progress_line(void *arg, int done, int n, double elapsed_s);

/* The same line for a loop of the front end's own: call it after each of n steps; it keeps the
 * start and the last line's time in *t (zeroed, then a call with done 0 before the first step) and shows a line at most
 * every 0.5 s, and at the last step. */
typedef struct {
  double t0_s, last_s;
} out_ticks;
void out_progress_tick(const out_progress *p, out_ticks *t, int done, int n);

#endif
