#include "afile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file a write to path lands in: path itself, or what the symbolic link path points to.
 * *real is malloc'ed. */
static int resolve(const char *path, char **real, err_t *e) {
  struct stat st;
  if (!*path) return err_set(e, ERR_IO, "an empty file name");
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
    if (!(*real = realpath(path, NULL)))
      return err_set(e, ERR_IO, "%s: a symbolic link to a file that cannot be reached: %s", path, strerror(errno));
  } else if (!(*real = strdup(path))) {
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  if (stat(*real, &st) == 0 && S_ISDIR(st.st_mode)) {
    free(*real);
    *real = NULL;
    return err_set(e, ERR_IO, "%s: is a directory", path);
  }
  return ERR_OK;
}

/* The temporary file being written, removed by on_signal when SIGINT, SIGTERM or SIGHUP arrives
 * before it is renamed (one at a time: afile_write is not for several threads at once). */
static char pending[PATH_MAX + 32];
static volatile sig_atomic_t have_pending;
static const int caught[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction saved_actions[3];

/* Removes the temporary file and dies of the signal, as the process would have without us. */
static void on_signal(int sig) {
  if (have_pending) unlink(pending); /* async-signal-safe */
  signal(sig, SIG_DFL);
  raise(sig); /* blocked while the handler runs: delivered, and fatal, when it returns */
}

/* From here until unguard() a signal removes `pending` first. A signal the process ignores stays
 * ignored, and one it handles itself keeps its handler (that handler owns the process's end). */
static void guard(const char *tmp) {
  snprintf(pending, sizeof pending, "%s", tmp);
  have_pending = 1;
  for (int i = 0; i < 3; i++) {
    sigaction(caught[i], NULL, &saved_actions[i]);
    if (saved_actions[i].sa_handler != SIG_DFL || (saved_actions[i].sa_flags & SA_SIGINFO)) continue;
    struct sigaction a = {.sa_handler = on_signal};
    sigemptyset(&a.sa_mask);
    sigaction(caught[i], &a, NULL);
  }
}

static void unguard(void) {
  for (int i = 0; i < 3; i++) sigaction(caught[i], &saved_actions[i], NULL);
  have_pending = 0;
}

/* A new temporary file *fd beside real ("REAL.tmp.XXXXXX" in tmp, of size len). */
static int make_temp(const char *path, const char *real, char *tmp, size_t len, int *fd, err_t *e) {
  if ((size_t)snprintf(tmp, len, "%s.tmp.XXXXXX", real) >= len) return err_set(e, ERR_IO, "%s: name too long", path);
  if ((*fd = mkstemp(tmp)) < 0) return err_set(e, ERR_IO, "%s: cannot create a file there: %s", path, strerror(errno));
  return ERR_OK;
}

int afile_check(const char *path, err_t *e) {
  char *real = NULL, tmp[PATH_MAX + 32];
  int rc = resolve(path, &real, e);
  if (rc) return rc;
  struct stat st;
  if (stat(real, &st) == 0 && !S_ISREG(st.st_mode)) { /* written in place: it must take writes */
    int bad = access(real, W_OK) != 0 ? errno : 0;
    free(real);
    return bad ? err_set(e, ERR_IO, "%s: cannot write: %s", path, strerror(bad)) : ERR_OK;
  }
  int fd;
  rc = make_temp(path, real, tmp, sizeof tmp, &fd, e);
  free(real);
  if (rc) return rc;
  close(fd);
  unlink(tmp);
  return ERR_OK;
}

/* fsync of the directory holding file, so that the rename itself is on disk. */
static int sync_dir(const char *file) {
  char *copy = strdup(file);
  if (!copy) return -1;
  int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
  free(copy);
  if (fd < 0) return -1;
  int bad = fsync(fd) != 0 && errno != EINVAL; /* some file systems cannot sync a directory */
  close(fd);
  return bad ? -1 : 0;
}

/* Writes all of data to fd: 0 or the errno of the failure. */
static int write_all(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    p += w, len -= (size_t)w;
  }
  return 0;
}

/* A target that exists and is not a regular file (a device, a FIFO, a socket) is written in
 * place, as `cat > FILE` would: renaming over it would destroy it. */
static int write_in_place(const char *path, const char *real, const void *data, size_t len, err_t *e) {
  int fd = open(real, O_WRONLY | O_TRUNC | O_NOCTTY), saved = fd < 0 ? errno : write_all(fd, data, len);
  if (fd >= 0 && close(fd) != 0 && !saved) saved = errno;
  return saved ? err_set(e, ERR_IO, "%s: cannot write: %s", path, strerror(saved)) : ERR_OK;
}

int afile_write(const char *path, const void *data, size_t len, err_t *e) {
  char *real = NULL, tmp[PATH_MAX + 32];
  int rc = resolve(path, &real, e);
  if (rc) return rc;
  struct stat st;
  int exists = stat(real, &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    rc = write_in_place(path, real, data, len, e);
    free(real);
    return rc;
  }
  /* No signal between the temporary file's creation and its guard. */
  sigset_t block, old;
  sigemptyset(&block);
  for (int i = 0; i < 3; i++) sigaddset(&block, caught[i]);
  sigprocmask(SIG_BLOCK, &block, &old);
  int fd;
  if (!(rc = make_temp(path, real, tmp, sizeof tmp, &fd, e))) guard(tmp);
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (rc) {
    free(real);
    return rc;
  }
  /* mkstemp makes 0600; the file gets what open(O_CREAT, 0666) would, or the old file's mode. */
  mode_t mode;
  if (exists) {
    mode = st.st_mode & 07777;
  } else {
    mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  int saved = write_all(fd, data, len);
  if (!saved && fchmod(fd, mode) != 0) saved = errno;
  if (!saved && fsync(fd) != 0) saved = errno;
  if (close(fd) != 0 && !saved) saved = errno;
  if (!saved && rename(tmp, real) != 0) saved = errno;
  if (saved) unlink(tmp);
  unguard();
  if (saved) {
    rc = err_set(e, ERR_IO, "%s: cannot write: %s", path, strerror(saved));
  } else if (sync_dir(real) != 0) {
    rc = err_set(e, ERR_IO, "%s: written, but its directory cannot be flushed to disk: %s", path, strerror(errno));
  }
  free(real);
  return rc;
}

int afile_not_input(const char *out_flag, const char *out, const char *const *in_flags, const char *const *in,
                    int n, err_t *e) {
  struct stat so, si;
  if (!out || stat(out, &so) != 0 || !S_ISREG(so.st_mode)) return ERR_OK;
  for (int i = 0; i < n; i++) {
    if (!in[i] || stat(in[i], &si) != 0) continue;
    if (si.st_dev == so.st_dev && si.st_ino == so.st_ino)
      return err_set(e, ERR_IO, "%s %s is the same file as %s %s: refusing to replace an input", out_flag, out,
                     in_flags[i], in[i]);
  }
  return ERR_OK;
}
