/* afile: writing an output file so that a reader never sees half of it.
 *
 * The one atomic writer both front ends use (ddpsim's reports and traces, ddpcalib's profiles):
 * the text goes to a temporary file in the target's directory, is flushed to disk (fsync), renamed
 * over the target, and the directory is flushed too, so that a crash leaves the old file or the
 * new one, never a mix. On failure the target is untouched and the temporary file removed.
 *
 * Permissions: a new file gets 0666 less the process's umask, as a plain open() would; an existing
 * file keeps its mode. A target that is a symbolic link is written through: the file it points to
 * is replaced and the link stays (a link to nothing is refused). A directory is refused.
 *
 * A target that exists and is not a regular file (a device node such as /dev/null, a FIFO, a
 * socket; or a link to one) is never replaced: it is opened and written in place, as the shell's
 * `cat > FILE` would (a FIFO waits for its reader), with no temporary file and no fsync.
 *
 * Signals: while the temporary file exists, SIGINT, SIGTERM and SIGHUP (where the process leaves
 * them at their default action) remove it first, then end the process with that same signal; the
 * previous dispositions are restored before afile_write returns. Not for several threads at once.
 * Messages start with the path. */
#ifndef DDPSIM_AFILE_H
#define DDPSIM_AFILE_H

#include <stddef.h>

#include "err.h"

/* Writes len bytes of data to path as above. ERR_IO with `path: what is wrong`. */
int afile_write(const char *path, const void *data, size_t len, err_t *e);

/* Checks, before any long work, that afile_write could write path: the target is not a directory
 * nor a dangling link, and a file can be created (and is removed again) in its directory (or, for a
 * target that is not a regular file, that it may be written).
 * ERR_IO with `path: what is wrong`. */
int afile_check(const char *path, err_t *e);

/* Refuses an output that is one of the command's inputs, so that writing it cannot replace what
 * the command reads. `out` (named by the flag out_flag, "-o") is compared with each of the n paths
 * in `in` (each named by in_flags[i]; a NULL path is skipped): the same file is the same device and
 * inode, through symbolic and hard links. An output that does not exist yet is no input's file; one
 * that is not a regular file (/dev/stdout, a FIFO) is written in place and replaces nothing, so it
 * passes too. ERR_IO with `OUT_FLAG OUT is the same file as IN_FLAG IN: refusing to replace an
 * input`. */
int afile_not_input(const char *out_flag, const char *out, const char *const *in_flags, const char *const *in,
                    int n, err_t *e);

#endif
