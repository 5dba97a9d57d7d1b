#include "afile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/* The temporary file being written, and the temporary folder (afile_dir), removed by on_signal when
 * SIGINT, SIGTERM or SIGHUP arrives before they are renamed (one of each at a time: not for several
 * threads at once). A file written inside a guarded folder nests its guard in the folder's. */
static char pending[PATH_MAX + 32], pending_dir[PATH_MAX + 32];
static volatile sig_atomic_t have_pending, have_pending_dir;
static const int caught[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction saved_actions[3];
static int guard_depth;

/* Removes every entry of folder path (files only: ours never makes subfolders), then the folder:
 * 0, or -1. Async-signal-safe on Linux (getdents64 on a descriptor: no malloc, unlike opendir), so
 * that on_signal can call it. Entries are removed while listed, so passes repeat from the start
 * until one finds nothing left. */
static int remove_dir(const char *path) {
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  if (fd < 0) return -1;
#ifdef __linux__
  for (int pass = 0, removed = 1; removed && pass < 1000; pass++) {
    removed = 0;
    lseek(fd, 0, SEEK_SET);
    char buf[4096];
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
      for (long off = 0; off < n;) {
        const struct {
          unsigned long long ino;
          long long off;
          unsigned short reclen;
          unsigned char type;
          char name[];
        } *de = (const void *)(buf + off);
        off += de->reclen;
        if (strcmp(de->name, ".") && strcmp(de->name, "..") && unlinkat(fd, de->name, 0) == 0) removed = 1;
      }
  }
#else
  DIR *dir = fdopendir(dup(fd));
  for (struct dirent *de; dir && (de = readdir(dir));)
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) unlinkat(fd, de->d_name, 0);
  if (dir) closedir(dir);
#endif
  close(fd);
  return rmdir(path);
}

/* Removes what is pending and dies of the signal, as the process would have without us. */
static void on_signal(int sig) {
  if (have_pending) unlink(pending); /* async-signal-safe */
  if (have_pending_dir) remove_dir(pending_dir);
  signal(sig, SIG_DFL);
  raise(sig); /* blocked while the handler runs: delivered, and fatal, when it returns */
}

/* From here until the matching guard_off() a signal runs on_signal. A signal the process ignores
 * stays ignored, and one it handles itself keeps its handler (that handler owns the process's end).
 * Nested calls (a file in a folder) leave the outer one's handlers in place. */
static void guard_on(void) {
  if (guard_depth++) return;
  for (int i = 0; i < 3; i++) {
    sigaction(caught[i], NULL, &saved_actions[i]);
    if (saved_actions[i].sa_handler != SIG_DFL || (saved_actions[i].sa_flags & SA_SIGINFO)) continue;
    struct sigaction a = {.sa_handler = on_signal};
    sigemptyset(&a.sa_mask);
    sigaction(caught[i], &a, NULL);
  }
}

static void guard_off(void) {
  if (--guard_depth) return;
  for (int i = 0; i < 3; i++) sigaction(caught[i], &saved_actions[i], NULL);
}

static void guard(const char *tmp) {
  snprintf(pending, sizeof pending, "%s", tmp);
  have_pending = 1;
  guard_on();
}

static void unguard(void) {
  guard_off();
  have_pending = 0;
}

/* SIGINT, SIGTERM and SIGHUP held back (old: the mask to restore), where a signal between two steps
 * would leave a state on_signal cannot clean. */
static void block_caught(sigset_t *old) {
  sigset_t block;
  sigemptyset(&block);
  for (int i = 0; i < 3; i++) sigaddset(&block, caught[i]);
  sigprocmask(SIG_BLOCK, &block, old);
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
  sigset_t old;
  block_caught(&old);
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

/* ---- folders written as one (afile_dir) ---- */

/* The folder a write to path lands in, into real (len bytes): path without trailing slashes (so
 * that "d/" gets its temporary folder beside d, not in it), or what a symbolic link points to, or
 * for ".", ".." and the like the folder they name. The root cannot be replaced. */
static int resolve_dir(const char *path, char *real, size_t len, err_t *e) {
  struct stat st;
  if (!*path) return err_set(e, ERR_IO, "an empty folder name");
  if ((size_t)snprintf(real, len, "%s", path) >= len) return err_set(e, ERR_IO, "%s: name too long", path);
  size_t n = strlen(real);
  while (n > 1 && real[n - 1] == '/') real[--n] = 0;
  const char *base = strrchr(real, '/');
  base = base ? base + 1 : real;
  if ((lstat(real, &st) == 0 && S_ISLNK(st.st_mode)) || !strcmp(base, ".") || !strcmp(base, "..")) {
    char *r = realpath(real, NULL);
    if (!r) return err_set(e, ERR_IO, "%s: a symbolic link to a folder that cannot be reached: %s", path, strerror(errno));
    int too_long = (size_t)snprintf(real, len, "%s", r) >= len;
    free(r);
    if (too_long) return err_set(e, ERR_IO, "%s: name too long", path);
  }
  if (!strcmp(real, "/")) return err_set(e, ERR_IO, "%s: the root folder cannot be replaced", path);
  return ERR_OK;
}

/* The target folder real, if it exists, holds only regular files whose names ours accepts:
 * ERR_OK (*exists set, *mode its mode), or ERR_IO naming what is in the way. */
static int check_old(const char *path, const char *real, int (*ours)(const char *), int *exists, unsigned *mode, err_t *e) {
  struct stat st;
  *exists = 0;
  if (stat(real, &st) != 0) {
    if (errno == ENOENT) return ERR_OK;
    return err_set(e, ERR_IO, "%s: cannot read: %s", path, strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return err_set(e, ERR_IO, "%s: exists and is not a directory", path);
  *exists = 1;
  *mode = st.st_mode & 07777;
  DIR *dir = opendir(real);
  if (!dir) return err_set(e, ERR_IO, "%s: cannot read the folder: %s", path, strerror(errno));
  int rc = ERR_OK;
  for (struct dirent *de; !rc && (de = readdir(dir));) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    int regular = fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
    if (!regular || !ours(de->d_name))
      rc = err_set(e, ERR_IO, "%s: holds '%s', which is not a file this command writes: refusing to replace the folder "
                              "(move it away, or write to a new folder)", path, de->d_name);
  }
  closedir(dir);
  return rc;
}

int afile_dir_check(const char *path, int (*ours)(const char *name), err_t *e) {
  char real[PATH_MAX], tmp[PATH_MAX + 32];
  int exists;
  unsigned mode;
  int rc = resolve_dir(path, real, sizeof real, e);
  if (rc || (rc = check_old(path, real, ours, &exists, &mode, e))) return rc;
  snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", real);
  if (!mkdtemp(tmp)) return err_set(e, ERR_IO, "%s: cannot create a folder beside it: %s", path, strerror(errno));
  rmdir(tmp);
  return ERR_OK;
}

int afile_dir_begin(afile_dir *d, const char *path, int (*ours)(const char *name), err_t *e) {
  memset(d, 0, sizeof *d);
  d->path = path;
  d->ours = ours;
  int rc = resolve_dir(path, d->real, sizeof d->real, e);
  if (rc || (rc = check_old(path, d->real, ours, &d->exists, &d->mode, e))) return rc;
  if (!d->exists) {
    mode_t mask = umask(0);
    umask(mask);
    d->mode = 0777 & ~mask;
  }
  char tmp[sizeof d->tmp];
  snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", d->real);
  sigset_t old;
  block_caught(&old); /* no signal between the folder's creation and its guard */
  if (mkdtemp(tmp)) {
    snprintf(d->tmp, sizeof d->tmp, "%s", tmp);
    snprintf(pending_dir, sizeof pending_dir, "%s", tmp);
    have_pending_dir = 1;
    guard_on();
  } else {
    rc = err_set(e, ERR_IO, "%s: cannot create a folder beside it: %s", path, strerror(errno));
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  return rc;
}

const char *afile_dir_file(afile_dir *d, const char *name) {
  snprintf(d->file, sizeof d->file, "%s/%s", d->tmp, name);
  return d->file;
}

void afile_dir_abort(afile_dir *d) {
  if (!d->tmp[0]) return;
  remove_dir(d->tmp);
  have_pending_dir = 0;
  d->tmp[0] = 0;
  guard_off();
}

/* fsync of folder path itself: 0 or -1 (a file system that cannot sync a folder passes). */
static int sync_folder(const char *path) {
  int fd = open(path, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return -1;
  int bad = fsync(fd) != 0 && errno != EINVAL;
  close(fd);
  return bad ? -1 : 0;
}

/* Puts the folder tmp where real is, the old one (if any) left at *old_at: 0 or an errno. With
 * the caught signals blocked: between two renames the target would be missing. */
static int swap_in(const char *real, const char *tmp, int exists, char *old_at, size_t len) {
  old_at[0] = 0;
  if (!exists) return rename(tmp, real) == 0 ? 0 : errno;
#ifdef RENAME_EXCHANGE
  if (renameat2(AT_FDCWD, tmp, AT_FDCWD, real, RENAME_EXCHANGE) == 0) {
    snprintf(old_at, len, "%s", tmp); /* the old folder is where the new one was */
    return 0;
  }
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return errno;
#endif
  /* No exchange here: the old folder renamed away (onto an empty folder of a free name), the new
   * one in, the old one back if that fails. */
  snprintf(old_at, len, "%s.old.XXXXXX", real);
  if (!mkdtemp(old_at)) return old_at[0] = 0, errno;
  if (rename(real, old_at) != 0) {
    int err = errno;
    rmdir(old_at);
    old_at[0] = 0;
    return err;
  }
  if (rename(tmp, real) != 0) {
    int err = errno;
    rename(old_at, real);
    old_at[0] = 0;
    return err;
  }
  return 0;
}

int afile_dir_commit(afile_dir *d, err_t *e) {
  if (!d->tmp[0]) return err_set(e, ERR_IO, "%s: internal: no folder being written", d->path);
  int exists;
  unsigned mode;
  int rc = ERR_OK, err = 0;
  char old_at[PATH_MAX + 32];
  if (sync_folder(d->tmp) != 0 || chmod(d->tmp, d->mode) != 0) {
    err = errno;
    rc = err_set(e, ERR_IO, "%s: cannot write: %s", d->path, strerror(err));
  }
  sigset_t old;
  block_caught(&old);
  /* Checked again: what was added since afile_dir_begin is not ours to remove either. */
  if (!rc) rc = check_old(d->path, d->real, d->ours, &exists, &mode, e);
  if (!rc && (err = swap_in(d->real, d->tmp, exists, old_at, sizeof old_at)))
    rc = err_set(e, ERR_IO, "%s: cannot put the new folder in place: %s", d->path, strerror(err));
  if (rc) {
    sigprocmask(SIG_SETMASK, &old, NULL);
    afile_dir_abort(d);
    return rc;
  }
  /* The new folder is in place: from here a signal removes the old one, wherever it now is. */
  snprintf(pending_dir, sizeof pending_dir, "%s", old_at);
  have_pending_dir = old_at[0] != 0;
  d->tmp[0] = 0;
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (sync_dir(d->real) != 0)
    rc = err_set(e, ERR_IO, "%s: written, but its parent folder cannot be flushed to disk: %s", d->path, strerror(errno));
  if (old_at[0] && remove_dir(old_at) != 0 && !rc)
    rc = err_set(e, ERR_IO, "%s: written, but the old folder, left at %s, cannot be removed: %s", d->path, old_at, strerror(errno));
  have_pending_dir = 0;
  guard_off();
  return rc;
}
