#include "data.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef DDPSIM_DATA_DIR
#define DDPSIM_DATA_DIR "."
#endif
#ifndef DDPSIM_REL_DATA_DIR
#define DDPSIM_REL_DATA_DIR "../share/ddpsim"
#endif

static const char *const kind_dir[] = {"models", "topologies", "profiles"};
static const char *const kind_ext[] = {".model", ".topo", ".json"};
static const char *const kind_word[] = {"model", "topology", "profile"};

static int is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The running program's directory; "" without /proc. Looked up once. */
static const char *self_dir(void) {
  static char self[PATH_MAX];
  static int looked;
  if (looked) return self;
  looked = 1;
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  char *slash = n > 0 ? (self[n] = '\0', strrchr(self, '/')) : NULL;
  if (slash) *slash = '\0';
  else self[0] = '\0';
  return self;
}

/* The installed layout beside the running program: <its directory>/DDPSIM_REL_DATA_DIR when that
 * holds a models directory; "" when not (a build tree, or no /proc). Looked up once. */
static const char *installed_dir(void) {
  static char dir[PATH_MAX];
  static int looked;
  if (looked) return dir;
  looked = 1;
  char probe[PATH_MAX + 16];
  const char *self = self_dir();
  if (!*self) return dir;
  if ((size_t)snprintf(dir, sizeof dir, "%s/%s", self, DDPSIM_REL_DATA_DIR) >= sizeof dir ||
      (size_t)snprintf(probe, sizeof probe, "%s/models", dir) >= sizeof probe || !is_dir(probe))
    dir[0] = '\0';
  return dir;
}

const char *data_dir(void) {
  const char *d = getenv("DDPSIM_DATA_DIR");
  if (d && *d) return d;
  return *installed_dir() ? installed_dir() : DDPSIM_DATA_DIR;
}

int data_ratios_path(char *out, size_t len) {
  const char *self = self_dir();
  if (*installed_dir()) return (size_t)snprintf(out, len, "%s/validate/" DATA_RATIOS_FILE, installed_dir()) < len ? 0 : -1;
  return *self && (size_t)snprintf(out, len, "%s/" DATA_RATIOS_FILE, self) < len ? 0 : -1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void data_list(data_kind kind, char *out, size_t len) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/%s", data_dir(), kind_dir[kind]);
  out[0] = '\0';
  DIR *d = opendir(dir);
  if (!d) return;
  char *names[256];
  int n = 0;
  size_t el = strlen(kind_ext[kind]);
  struct dirent *de;
  while ((de = readdir(d)) && n < 256) {
    size_t l = strlen(de->d_name);
    if (l > el && strcmp(de->d_name + l - el, kind_ext[kind]) == 0) names[n++] = strndup(de->d_name, l - el);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  for (int i = 0; i < n; i++) {
    if (names[i] && strlen(out) + strlen(names[i]) + 3 < len) {
      if (out[0]) strcat(out, ", ");
      strcat(out, names[i]);
    }
    free(names[i]);
  }
}

const char *data_resolved(data_kind kind, const char *value, char *out, size_t len) {
  err_t ignored;
  return value && data_resolve(kind, value, out, len, &ignored) == ERR_OK ? out : NULL;
}

int data_resolve(data_kind kind, const char *value, char *out, size_t len, err_t *e) {
  if (!value || !*value) return err_set(e, ERR_USAGE, "--%s: an empty name", kind_word[kind]);
  struct stat st;
  int is_dir = stat(value, &st) == 0 && S_ISDIR(st.st_mode);
  if (strchr(value, '/') || is_file(value)) {
    if (is_dir) return err_set(e, ERR_INPUT, "%s: is a directory, not a %s file", value, kind_word[kind]);
    if (!is_file(value))
      return stat(value, &st) == 0 ? err_set(e, ERR_INPUT, "%s: not a regular file (a device, a FIFO or a socket), not a %s file",
                                             value, kind_word[kind])
                                   : err_set(e, ERR_INPUT, "%s: no such %s file", value, kind_word[kind]);
    snprintf(out, len, "%s", value);
    return ERR_OK;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/%s%s", data_dir(), kind_dir[kind], value, kind_ext[kind]);
  if (is_file(path)) {
    snprintf(out, len, "%s", path);
    return ERR_OK;
  }
  /* Not a bundled name: a directory of that name is what the user meant, and is not a file. */
  if (is_dir) return err_set(e, ERR_INPUT, "%s: is a directory, not a %s file", value, kind_word[kind]);
  char names[2048];
  data_list(kind, names, sizeof names);
  if (!names[0])
    return err_set(e, ERR_INPUT, "unknown %s '%s': nothing bundled in %s/%s (the data directory: $DDPSIM_DATA_DIR, or the "
                   "source tree); give a file path", kind_word[kind], value, data_dir(), kind_dir[kind]);
  return err_set(e, ERR_INPUT, "unknown %s '%s' (bundled: %s; or give a file path)", kind_word[kind], value, names);
}
