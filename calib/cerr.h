/* cerr: how the calib library reports failure.
 *
 * Every fallible function returns an int status (CERR_OK = 0) and, on failure, writes a one-line
 * message into a caller-owned `cerr`. Messages about files start with `file: `. The library never
 * prints and never exits; the front end (ddpcalib.c) maps CERR_USAGE to exit 2 and every other
 * failure to exit 1. */
#ifndef DDPCALIB_CERR_H
#define DDPCALIB_CERR_H

enum {
  CERR_OK = 0,
  CERR_USAGE = 1,   /* a flag or argument is wrong; the user can fix the command line */
  CERR_INPUT = 2,   /* an input file is unreadable or malformed */
  CERR_NOMEM = 3,   /* out of memory */
  CERR_IO = 4,      /* a file could not be written */
  CERR_RUNTIME = 5, /* the measurement itself failed (MPI, CUDA, NCCL, a wrong result, a fit) */
  CERR_NODEV = 6,   /* the requested device does not exist here (no GPU); tests map it to 77 */
};

typedef struct {
  char msg[1024];
} cerr;

/* Writes the printf-style message into e (if e is non-NULL) and returns code. */
int cerr_set(cerr *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
