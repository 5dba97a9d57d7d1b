/* err: how the sim library reports failure.
 *
 * Every fallible function returns an int status (ERR_OK = 0) and, on failure, writes a one-line
 * message into a caller-owned `err_t`. Messages about input files start with `file:line: ` (or
 * `file: ` where no line applies). The library never prints and never exits. */
#ifndef DDPSIM_ERR_H
#define DDPSIM_ERR_H

enum {
  ERR_OK = 0,
  ERR_INPUT = 1, /* bad input: a file, a value, a name; the user can fix it */
  ERR_NOMEM = 2, /* out of memory */
  ERR_IO = 3,    /* a file could not be read or written */
  ERR_SIM = 4,   /* the simulation itself failed (deadlock, engine error) */
};

typedef struct {
  char msg[1024];
} err_t;

/* Writes the printf-style message into e (if e is non-NULL) and returns code. */
int err_set(err_t *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
