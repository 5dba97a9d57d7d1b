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

/* A folder of files written as one: a reader (and a crash, or a signal) finds the old folder whole
 * or the new one whole, never a mix of two runs. The files go into a temporary folder beside the
 * target ("DIR.tmp.XXXXXX", same parent, so that a rename moves it), written with afile_write
 * (afile_dir_file names them), then afile_dir_commit flushes the folder to disk and swaps it in:
 * on Linux in one step (renameat2 RENAME_EXCHANGE), elsewhere, or on a file system that cannot
 * exchange, by renaming the old folder away and the new one in with SIGINT, SIGTERM and SIGHUP
 * blocked between the two; then the old folder is removed. The old folder must hold nothing but
 * files whose names `ours` accepts (the writer's own): anything else in it (a file of another
 * program, a subfolder, a dot file) is refused and the folder left untouched. A target that is a
 * symbolic link to a folder is written through (the link stays). A new folder gets 0777 less the
 * umask; an old one keeps its mode.
 *
 * Signals: from afile_dir_begin until afile_dir_commit or afile_dir_abort returns, SIGINT, SIGTERM
 * and SIGHUP (where left at their default) remove the temporary folder first (the same handler as
 * afile_write's: a file being written in it goes too), then end the process with that signal. A
 * SIGKILL leaves the temporary folder beside the target (its name says what it is). One at a time;
 * not for several threads. Messages start with the path given. */
typedef struct {
  const char *path;        /* as given, for messages */
  int (*ours)(const char *name);
  char real[4096];         /* the folder a write lands in (a link resolved) */
  char tmp[4096 + 32];     /* the temporary folder */
  char file[4096 + 300];   /* afile_dir_file's last path */
  int exists;              /* the target folder existed at afile_dir_begin */
  unsigned mode;           /* the mode the new folder gets */
} afile_dir;

/* Checks, before any long work, that a folder could be written at path: not a file (`exists and is
 * not a directory`), nothing in it that `ours` refuses, a folder can be made beside it (and is
 * removed again). ERR_IO with `path: what is wrong`. */
int afile_dir_check(const char *path, int (*ours)(const char *name), err_t *e);

/* Checks as afile_dir_check and makes the temporary folder; the signal guard is on from here. */
int afile_dir_begin(afile_dir *d, const char *path, int (*ours)(const char *name), err_t *e);

/* The path of file `name` inside the temporary folder (d->file, valid until the next call): the
 * path to afile_write. */
const char *afile_dir_file(afile_dir *d, const char *name);

/* Flushes the temporary folder, swaps it in for the target and removes the old folder (checked
 * again first); the guard is off after it. On failure the temporary folder is removed and the
 * target untouched (ERR_IO naming the path), except where only the old folder's removal failed:
 * then the new folder is in place and the message names what is left. */
int afile_dir_commit(afile_dir *d, err_t *e);

/* Removes the temporary folder and what is in it; the guard is off after it. */
void afile_dir_abort(afile_dir *d);

#endif
