#include "afile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
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

int afile_write(const char *path, const void *data, size_t len, err_t *e) {
  char *real = NULL, tmp[PATH_MAX + 32];
  int rc = resolve(path, &real, e);
  if (rc) return rc;
  int fd;
  if ((rc = make_temp(path, real, tmp, sizeof tmp, &fd, e))) {
    free(real);
    return rc;
  }
  /* mkstemp makes 0600; the file gets what open(O_CREAT, 0666) would, or the old file's mode. */
  struct stat st;
  mode_t mode;
  if (stat(real, &st) == 0) {
    mode = st.st_mode & 07777;
  } else {
    mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  const char *p = data;
  size_t left = len;
  int saved = 0;
  while (left && !saved) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) saved = w < 0 ? errno : EIO;
    else p += w, left -= (size_t)w;
  }
  if (!saved && fchmod(fd, mode) != 0) saved = errno;
  if (!saved && fsync(fd) != 0) saved = errno;
  if (close(fd) != 0 && !saved) saved = errno;
  if (!saved && rename(tmp, real) != 0) saved = errno;
  if (saved) {
    unlink(tmp);
    rc = err_set(e, ERR_IO, "%s: cannot write: %s", path, strerror(saved));
  } else if (sync_dir(real) != 0) {
    rc = err_set(e, ERR_IO, "%s: written, but its directory cannot be flushed to disk: %s", path, strerror(errno));
  }
  free(real);
  return rc;
}
