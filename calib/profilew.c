/* profilew: profile JSON: build, validate, merge, load, write atomically. */
#define _POSIX_C_SOURCE 200809L
#include "profilew.h"

#include <errno.h>
#include <gsl/gsl_version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "afile.h"
#include "profile.h"

int profilew_num(cJSON *obj, const char *key, double v, err_t *e) {
  cJSON *n = cJSON_CreateNumber(v);
  if (!n) return err_set(e, ERR_NOMEM, "out of memory");
  if (cJSON_GetObjectItemCaseSensitive(obj, key))
    cJSON_ReplaceItemInObjectCaseSensitive(obj, key, n);
  else
    cJSON_AddItemToObject(obj, key, n);
  return ERR_OK;
}

int profilew_str(cJSON *obj, const char *key, const char *v, err_t *e) {
  cJSON *n = cJSON_CreateString(v ? v : "");
  if (!n) return err_set(e, ERR_NOMEM, "out of memory");
  if (cJSON_GetObjectItemCaseSensitive(obj, key))
    cJSON_ReplaceItemInObjectCaseSensitive(obj, key, n);
  else
    cJSON_AddItemToObject(obj, key, n);
  return ERR_OK;
}

cJSON *profilew_obj(cJSON *obj, const char *key) {
  cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (o) return cJSON_IsObject(o) ? o : NULL;
  return cJSON_AddObjectToObject(obj, key);
}

/* The command line, each argument quoted for a POSIX shell when it needs it. */
static char *join_argv(int argc, char **argv) {
  size_t len = 1;
  for (int i = 0; i < argc; i++) len += 4 * strlen(argv[i]) + 3;
  char *s = malloc(len), *p = s;
  if (!s) return NULL;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int plain = *a != '\0';
    for (const char *c = a; *c; c++)
      if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+@%", *c))
        plain = 0;
    if (i) *p++ = ' ';
    if (plain) {
      p += sprintf(p, "%s", a);
      continue;
    }
    *p++ = '\'';
    for (const char *c = a; *c; c++) {
      if (*c == '\'') {
        memcpy(p, "'\\''", 4);
        p += 4;
      } else {
        *p++ = *c;
      }
    }
    *p++ = '\'';
  }
  *p = '\0';
  return s;
}

cJSON *profilew_new(const char *name, const profilew_prov *p) {
  cJSON *d = cJSON_CreateObject();
  if (!d) return NULL;
  char host[256] = "unknown", date[64] = "", kernel[512] = "";
  gethostname(host, sizeof host - 1);
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm)) strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  struct utsname u;
  if (uname(&u) == 0) snprintf(kernel, sizeof kernel, "%s %s %s", u.sysname, u.release, u.machine);
  char libs[512];
  snprintf(libs, sizeof libs, "GSL %s; cJSON %s%s%s", GSL_VERSION, cJSON_Version(),
           p && p->libraries && *p->libraries ? "; " : "", p && p->libraries ? p->libraries : "");
  char *cmd = p && p->argv ? join_argv(p->argc, p->argv) : NULL;

  cJSON *prov;
  int ok = cJSON_AddStringToObject(d, "format", "ddpsim-profile") &&
           cJSON_AddNumberToObject(d, "version", 1) && cJSON_AddStringToObject(d, "name", name) &&
           (prov = cJSON_AddObjectToObject(d, "provenance")) &&
           cJSON_AddStringToObject(prov, "kind", "measured") &&
           cJSON_AddStringToObject(prov, "tool", "ddpcalib") &&
           cJSON_AddStringToObject(prov, "subcommand", p && p->subcommand ? p->subcommand : "") &&
           cJSON_AddStringToObject(prov, "host", p && p->hosts && *p->hosts ? p->hosts : host) &&
           cJSON_AddStringToObject(prov, "os", kernel) &&
           cJSON_AddStringToObject(prov, "devices", p && p->devices ? p->devices : "") &&
           cJSON_AddStringToObject(prov, "driver", p && p->driver ? p->driver : "none") &&
           cJSON_AddStringToObject(prov, "libraries", libs) &&
           cJSON_AddStringToObject(prov, "date", date) &&
           cJSON_AddStringToObject(prov, "command", cmd ? cmd : "") &&
           cJSON_AddObjectToObject(d, "compute") && profilew_obj(profilew_obj(d, "comm"), "links") &&
           cJSON_AddObjectToObject(d, "samples");
  free(cmd);
  if (!ok) {
    cJSON_Delete(d);
    return NULL;
  }
  return d;
}

/* ---- load ---- */

int profilew_load(const char *path, cJSON **out, err_t *e) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return err_set(e, ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  while (buf) {
    len += fread(buf + len, 1, cap - len, f);
    if (len < cap) break;
    char *nb = realloc(buf, cap * 2);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap *= 2;
  }
  int err = ferror(f);
  fclose(f);
  if (!buf) return err_set(e, ERR_NOMEM, "%s: out of memory", path);
  if (err) {
    free(buf);
    return err_set(e, ERR_INPUT, "%s: read error (is it a directory?)", path);
  }
  if (len == 0) {
    free(buf);
    return err_set(e, ERR_INPUT, "%s: empty file, expected a JSON profile", path);
  }
  const char *end = NULL;
  cJSON *d = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
  if (!d) {
    size_t off = end && end >= buf && end <= buf + len ? (size_t)(end - buf) : 0;
    int line = 1;
    for (size_t i = 0; i < off; i++) line += buf[i] == '\n';
    free(buf);
    return err_set(e, ERR_INPUT, "%s:%d: malformed JSON", path, line);
  }
  free(buf);
  if (!cJSON_IsObject(d)) {
    cJSON_Delete(d);
    return err_set(e, ERR_INPUT, "%s: the top level is not a JSON object", path);
  }
  *out = d;
  return ERR_OK;
}

/* ---- validate ---- */

int profilew_validate(const cJSON *d, const char *file, err_t *e) {
  int rc = profile_check_json(d, file, PROFILE_PART, e);
  if (rc) return rc;
  /* Beyond what ddpsim reads: a profile ddpcalib accepts says what it is and where it comes from. */
  if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(d, "name")))
    return err_set(e, ERR_INPUT, "%s: name is missing", file);
  if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(d, "provenance")))
    return err_set(e, ERR_INPUT, "%s: provenance is missing", file);
  return ERR_OK;
}

/* ---- write ---- */

int profilew_write(const cJSON *doc, const char *path, err_t *e) {
  int rc = profilew_validate(doc, path, e);
  if (rc) {
    char why[sizeof e->msg];
    snprintf(why, sizeof why, "%s", e->msg); /* err_set writes into e->msg: no aliasing */
    return err_set(e, ERR_RUNTIME, "internal: the profile to write is invalid: %s", why);
  }
  char *text = cJSON_Print(doc);
  if (!text) return err_set(e, ERR_NOMEM, "%s: out of memory", path);
  size_t len = strlen(text);
  text[len] = '\n'; /* cJSON's text ends the file with a newline: its NUL is not written */
  rc = afile_write(path, text, len + 1, e);
  free(text);
  return rc;
}

/* ---- merge ---- */

/* Merges src into dst (both objects) at depth `depth` (1 = top level). At depth 3 a member of src
 * replaces dst's whole; `replaced` collects the paths where src overrode something. */
static int merge_into(cJSON *dst, const cJSON *src, int depth, const char *path, cJSON *replaced,
                      const char *src_file, err_t *e) {
  const cJSON *s;
  cJSON_ArrayForEach(s, src) {
    if (depth == 1 && (strcmp(s->string, "provenance") == 0)) continue;
    char p[512];
    snprintf(p, sizeof p, "%s%s%s", path, *path ? "." : "", s->string);
    cJSON *d = cJSON_GetObjectItemCaseSensitive(dst, s->string);
    if (d && cJSON_IsObject(d) && cJSON_IsObject(s) && depth < 3) {
      int rc = merge_into(d, s, depth + 1, p, replaced, src_file, e);
      if (rc) return rc;
      continue;
    }
    cJSON *copy = cJSON_Duplicate(s, 1);
    if (!copy) return err_set(e, ERR_NOMEM, "out of memory");
    if (d) {
      if (!cJSON_Compare(d, s, 1)) {
        char note[640];
        snprintf(note, sizeof note, "%s from %s", p, src_file);
        cJSON *n = cJSON_CreateString(note);
        if (!n) {
          cJSON_Delete(copy);
          return err_set(e, ERR_NOMEM, "out of memory");
        }
        cJSON_AddItemToArray(replaced, n);
      }
      cJSON_ReplaceItemInObjectCaseSensitive(dst, s->string, copy);
    } else {
      cJSON_AddItemToObject(dst, s->string, copy);
    }
  }
  return ERR_OK;
}

int profilew_merge(const cJSON *a, const char *a_file, const cJSON *b, const char *b_file,
                   const profilew_prov *p, cJSON **out, err_t *e) {
  *out = NULL;
  int rc;
  if ((rc = profilew_validate(a, a_file, e)) || (rc = profilew_validate(b, b_file, e))) return rc;
  cJSON *m = cJSON_Duplicate(a, 1);
  cJSON *prov = cJSON_CreateObject();
  cJSON *sources = cJSON_CreateArray();
  cJSON *replaced = cJSON_CreateArray();
  cJSON *fresh = profilew_new("", p);
  if (!m || !prov || !sources || !replaced || !fresh) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto fail;
  }
  if ((rc = merge_into(m, b, 1, "", replaced, b_file, e))) goto fail;
  /* The merged provenance: this merge's own record, then each source's provenance untouched. */
  cJSON *own = cJSON_DetachItemFromObjectCaseSensitive(fresh, "provenance");
  cJSON_Delete(fresh);
  fresh = NULL;
  if (!own) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto fail;
  }
  cJSON_ReplaceItemInObjectCaseSensitive(own, "kind", cJSON_CreateString("merged"));
  cJSON_AddItemToObject(own, "sources", sources);
  sources = NULL;
  cJSON *srcs = cJSON_GetObjectItemCaseSensitive(own, "sources");
  const cJSON *docs[2] = {a, b};
  const char *files[2] = {a_file, b_file};
  for (int i = 0; i < 2; i++) {
    cJSON *s = cJSON_CreateObject();
    cJSON *pv = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(docs[i], "provenance"), 1);
    if (!s || !pv || !cJSON_AddStringToObject(s, "file", files[i])) {
      cJSON_Delete(s);
      cJSON_Delete(pv);
      cJSON_Delete(own);
      rc = err_set(e, ERR_NOMEM, "out of memory");
      goto fail;
    }
    cJSON_AddItemToObject(s, "provenance", pv);
    cJSON_AddItemToArray(srcs, s);
  }
  cJSON_AddStringToObject(own, "conflicts", "the later file (the second) wins; see replaced");
  cJSON_AddItemToObject(own, "replaced", replaced);
  replaced = NULL;
  cJSON_ReplaceItemInObjectCaseSensitive(m, "provenance", own);
  cJSON_Delete(prov);
  *out = m;
  return ERR_OK;
fail:
  cJSON_Delete(m);
  cJSON_Delete(prov);
  cJSON_Delete(sources);
  cJSON_Delete(replaced);
  cJSON_Delete(fresh);
  return rc;
}
