/* err: how every library of the project (sim/, calib/) reports failure, and the one exit-code
 * policy of its front ends (ddpsim, ddpcalib).
 *
 * Every fallible function returns an int status (ERR_OK = 0) and, on failure, writes a one-line
 * message into a caller-owned `err_t`. Messages about input files start with `file:line: ` (or
 * `file: ` where no line applies; for JSON, the JSON path of the bad field follows). Libraries never
 * print and never exit: a front end prints the message and returns err_exit_code(status). */
#ifndef DDPSIM_ERR_H
#define DDPSIM_ERR_H

enum {
  ERR_OK = 0,
  ERR_INPUT = 1,   /* bad input: a file, a value, a name; the user can fix it */
  ERR_NOMEM = 2,   /* out of memory */
  ERR_IO = 3,      /* a file could not be read or written */
  ERR_SIM = 4,     /* the simulation itself failed (deadlock, engine error) */
  ERR_USAGE = 5,   /* a flag or argument is wrong; the user can fix the command line */
  ERR_RUNTIME = 6, /* a measurement failed (MPI, CUDA, NCCL, a wrong result, a fit) */
  ERR_NODEV = 7,   /* the requested device does not exist here (no GPU) */
};

typedef struct {
  char msg[1024];
} err_t;

/* Writes the printf-style message into e (if e is non-NULL) and returns code. */
int err_set(err_t *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The process exit status for a status code: 0 for ERR_OK, 2 for ERR_USAGE (misuse), 1 for every
 * other failure, ERR_NODEV included: a GPU test that wants "skipped" (77) where there is no GPU
 * decides that itself, from the message (tests/calib/test_gpu.sh looks for "no CUDA device"). */
int err_exit_code(int code);

#endif
