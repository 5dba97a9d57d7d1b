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
#include "txt.h"
#include "version.h"

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
           cJSON_AddStringToObject(d, "ddpsim_version", version_string()) &&
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
  size_t len = 0;
  char *buf = txt_read_file(path, &len);
  if (!buf) return err_set(e, ERR_IO, "%s: cannot read: %s", path, strerror(errno));
  cJSON *d;
  int rc = profile_json_parse(buf, len, path, &d, e);
  free(buf);
  if (rc) return rc;
  if (!cJSON_IsObject(d)) {
    cJSON_Delete(d);
    return err_set(e, ERR_INPUT, "%s: the top level is not a JSON object", path);
  }
  *out = d;
  return ERR_OK;
}

/* ---- validate ---- */

int profilew_validate(const cJSON *d, const char *file, int part, err_t *e) {
  int rc = profile_check_json(d, file, part, e);
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
  int rc = profilew_validate(doc, path, PROFILE_PART, e);
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

/* A member at `path` (depth 1 = top level) is one unit, taken whole from one side, at depth 3
 * (compute.<precision>.<kind>, comm.links.<class>, samples.<section>.<name>), or sooner where its
 * parts only make sense together: h2d.<mode>, compute.jitter (a model and its numbers),
 * compute.host, comm.nccl (one tuning, one measurement), each uncertainty."<path>" entry, and the
 * device (one card's figures with the one source that says where they come from: two cards' never
 * mix, docs/calib.md, "merge"). */
static int is_unit(const char *path, int depth) {
  return depth >= 3 || strcmp(path, "device") == 0 || (depth == 2 && strncmp(path, "uncertainty.", 12) == 0) || strcmp(path, "compute.jitter") == 0 || strcmp(path, "compute.host") == 0 ||
         strcmp(path, "comm.nccl") == 0 || (depth == 2 && strncmp(path, "h2d.", 4) == 0);
}

static int add_str(cJSON *arr, const char *s, err_t *e) {
  cJSON *n = cJSON_CreateString(s);
  if (!n) return err_set(e, ERR_NOMEM, "out of memory");
  cJSON_AddItemToArray(arr, n);
  return ERR_OK;
}

static int in_list(const cJSON *arr, const char *s) {
  const cJSON *v;
  cJSON_ArrayForEach(v, arr) if (strcmp(v->valuestring, s) == 0) return 1;
  return 0;
}

/* Merges src into dst (both objects) at depth `depth`. Every unit of src is recorded in `from_src`
 * (its path); those that overrode a different value of dst also in `replaced` ("path from file"). */
static int merge_into(cJSON *dst, const cJSON *src, int depth, const char *path, cJSON *from_src, cJSON *replaced,
                      const char *src_file, err_t *e) {
  const cJSON *s;
  cJSON_ArrayForEach(s, src) {
    if (depth == 1 && (strcmp(s->string, "provenance") == 0 || strcmp(s->string, "ddpsim_version") == 0)) continue;
    char p[512];
    snprintf(p, sizeof p, "%s%s%s", path, *path ? "." : "", s->string);
    cJSON *d = cJSON_GetObjectItemCaseSensitive(dst, s->string);
    if (cJSON_IsObject(s) && !is_unit(p, depth) && (!d || cJSON_IsObject(d))) {
      if (!d && !(d = cJSON_AddObjectToObject(dst, s->string))) return err_set(e, ERR_NOMEM, "out of memory");
      int rc = merge_into(d, s, depth + 1, p, from_src, replaced, src_file, e);
      if (rc) return rc;
      continue;
    }
    int rc = add_str(from_src, p, e);
    if (rc) return rc;
    cJSON *copy = cJSON_Duplicate(s, 1);
    if (!copy) return err_set(e, ERR_NOMEM, "out of memory");
    if (d) {
      if (!cJSON_Compare(d, s, 1)) {
        char note[640];
        snprintf(note, sizeof note, "%s from %s", p, src_file);
        if ((rc = add_str(replaced, note, e))) {
          cJSON_Delete(copy);
          return rc;
        }
      }
      cJSON_ReplaceItemInObjectCaseSensitive(dst, s->string, copy);
    } else {
      cJSON_AddItemToObject(dst, s->string, copy);
    }
  }
  return ERR_OK;
}

/* An uncertainty entry describes one side's number (docs/profile.md, "Uncertainty"): it is kept
 * only where the unit holding its number came from the same side as the entry (b's entries are
 * those b has; a unit from b is in from_b). A unit b replaced thus drops a's entries under it. */
static void keep_own_uncertainty(cJSON *m, const cJSON *b, const cJSON *units, const cJSON *from_b) {
  cJSON *u = cJSON_GetObjectItemCaseSensitive(m, "uncertainty"), *en = u ? u->child : NULL;
  const cJSON *bu = cJSON_GetObjectItemCaseSensitive(b, "uncertainty");
  while (en) {
    cJSON *next = en->next;
    const cJSON *unit;
    int side = -1;
    cJSON_ArrayForEach(unit, units) {
      size_t n = strlen(unit->valuestring);
      if (strncmp(en->string, unit->valuestring, n) == 0 && en->string[n] == '.') side = in_list(from_b, unit->valuestring);
    }
    if (side >= 0 && side != (cJSON_GetObjectItemCaseSensitive(bu, en->string) != NULL))
      cJSON_Delete(cJSON_DetachItemViaPointer(u, en));
    en = next;
  }
}

/* The units of doc (as is_unit cuts them), in order, into `all`; provenance, format and version
 * (the same in both, or the merge was refused) and ddpsim_version (the merging tool's) left out. */
static int list_units(const cJSON *doc, int depth, const char *path, cJSON *all, err_t *e) {
  const cJSON *s;
  cJSON_ArrayForEach(s, doc) {
    if (depth == 1 && (strcmp(s->string, "provenance") == 0 || strcmp(s->string, "format") == 0 ||
                       strcmp(s->string, "version") == 0 || strcmp(s->string, "ddpsim_version") == 0))
      continue;
    char p[512];
    snprintf(p, sizeof p, "%s%s%s", path, *path ? "." : "", s->string);
    /* An empty container (an `uncertainty` or `links` object with nothing in it) holds no unit. */
    if (cJSON_IsObject(s) && !is_unit(p, depth) && !s->child) continue;
    int rc = cJSON_IsObject(s) && !is_unit(p, depth) ? list_units(s, depth + 1, p, all, e) : add_str(all, p, e);
    if (rc) return rc;
  }
  return ERR_OK;
}

/* 1 if every compute.<precision>.<kind> unit of the merged units came from the side whose unit
 * paths are `side` (from_b when b), i.e. that side measured all the compute the jitter would
 * multiply; *other names one that did not. */
static int owns_compute(const cJSON *units, const cJSON *from_b, int b, const char **other) {
  const cJSON *u;
  cJSON_ArrayForEach(u, units) {
    const char *p = u->valuestring;
    if (strncmp(p, "compute.fp32.", 13) != 0 && strncmp(p, "compute.fp16.", 13) != 0) continue;
    if (in_list(from_b, p) != b) {
      *other = p;
      return 0;
    }
  }
  return 1;
}

/* compute.jitter of the merge (docs/calib.md, "merge"): the policy's choice, written into m, and
 * the sentence saying what was done into *why. */
static int merge_jitter(cJSON *m, const cJSON *a, const char *a_file, const cJSON *b, const char *b_file,
                        profilew_jitter policy, const cJSON *units, const cJSON *from_b, char *why, size_t len,
                        err_t *e) {
  const cJSON *ja = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(a, "compute"), "jitter");
  const cJSON *jb = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "compute"), "jitter");
  cJSON *mc = cJSON_GetObjectItemCaseSensitive(m, "compute");
  if (cJSON_IsObject(mc)) cJSON_DeleteItemFromObjectCaseSensitive(mc, "jitter");
  const cJSON *take = NULL;
  const char *file = NULL;
  if (!ja && !jb) {
    snprintf(why, len, "compute.jitter: neither profile has one");
    return ERR_OK;
  }
  if (policy == PROFILEW_JITTER_NONE) {
    snprintf(why, len, "compute.jitter: left out (--jitter none)");
    return ERR_OK;
  }
  if (policy == PROFILEW_JITTER_FIRST || policy == PROFILEW_JITTER_SECOND) {
    int first = policy == PROFILEW_JITTER_FIRST;
    take = first ? ja : jb, file = first ? a_file : b_file;
    if (!take) {
      snprintf(why, len, "compute.jitter: %s has none, so the merge has none (--jitter %s)", file,
               first ? "first" : "second");
      return ERR_OK;
    }
    snprintf(why, len, "compute.jitter from %s (--jitter %s)", file, first ? "first" : "second");
  } else {
    /* auto: the jitter of the side that measured every precision the merge holds, else none. */
    int use_b = jb != NULL;
    take = use_b ? jb : ja, file = use_b ? b_file : a_file;
    const char *other = NULL;
    if (!owns_compute(units, from_b, use_b, &other)) {
      snprintf(why, len,
               "compute.jitter of %s left out: it was measured with that file's compute, and the merge's %s comes "
               "from %s (--jitter %s keeps it anyway)",
               file, other, use_b ? a_file : b_file, use_b ? "second" : "first");
      return ERR_OK;
    }
    snprintf(why, len, "compute.jitter from %s, which also gave all the merge's compute", file);
  }
  cJSON *copy = cJSON_Duplicate(take, 1);
  if (!copy || !mc) {
    cJSON_Delete(copy);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  cJSON_AddItemToObject(mc, "jitter", copy);
  return ERR_OK;
}

/* The `math` word of doc's compute.fp32.gemm ("tf32", "strict"), or NULL. */
static const char *fp32_gemm_math(const cJSON *doc, const cJSON **gemm) {
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "compute"), "fp32");
  *gemm = cJSON_GetObjectItemCaseSensitive(f, "gemm");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(*gemm, "math");
  return cJSON_IsString(m) ? m->valuestring : NULL;
}

/* Two fp32 GEMM tables of different math (ddpcalib compute with and without --tf32; docs/profile.md,
 * "fp32 math"): b's compute.fp32.gemm replaced a's in m, so a's stays beside it as
 * compute.fp32.gemm_<its math>, unless m has a table of that math there already. A table of a's
 * beside its gemm of the math b's gemm now has is b's gemm's older twin: it goes. */
static int keep_other_math(cJSON *m, const cJSON *a, err_t *e) {
  const cJSON *ag, *mg;
  const char *am = fp32_gemm_math(a, &ag), *mm = fp32_gemm_math(m, &mg);
  if (!mm) return ERR_OK;
  char key[32];
  cJSON *f = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "compute"), "fp32");
  snprintf(key, sizeof key, "gemm_%s", mm);
  cJSON_DeleteItemFromObjectCaseSensitive(f, key);
  if (!am || strcmp(am, mm) == 0) return ERR_OK;
  snprintf(key, sizeof key, "gemm_%s", am);
  if (cJSON_GetObjectItemCaseSensitive(f, key)) return ERR_OK;
  cJSON *copy = cJSON_Duplicate(ag, 1);
  if (!copy || !cJSON_AddItemToObject(f, key, copy)) {
    cJSON_Delete(copy);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  return ERR_OK;
}

int profilew_merge(const cJSON *a, const char *a_file, const cJSON *b, const char *b_file, profilew_jitter jitter,
                   const profilew_prov *p, cJSON **out, err_t *e) {
  *out = NULL;
  int rc;
  if ((rc = profilew_validate(a, a_file, PROFILE_PART, e)) || (rc = profilew_validate(b, b_file, PROFILE_PART, e)))
    return rc;
  cJSON *m = cJSON_Duplicate(a, 1);
  cJSON *from_b = cJSON_CreateArray(), *replaced = cJSON_CreateArray(), *units = cJSON_CreateArray();
  cJSON *fresh = profilew_new("", p), *own = NULL;
  if (!m || !from_b || !replaced || !units || !fresh) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto done;
  }
  if ((rc = merge_into(m, b, 1, "", from_b, replaced, b_file, e))) goto done;
  if ((rc = keep_other_math(m, a, e))) goto done;
  if (version_stamp(m)) { /* the merging tool's version, not a's */
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto done;
  }
  if ((rc = list_units(m, 1, "", units, e))) goto done;
  keep_own_uncertainty(m, b, units, from_b);
  char why[1024];
  if ((rc = merge_jitter(m, a, a_file, b, b_file, jitter, units, from_b, why, sizeof why, e))) goto done;
  /* The merged provenance: this merge's own record, each source's provenance untouched, and which
   * units came from which file. */
  own = cJSON_DetachItemFromObjectCaseSensitive(fresh, "provenance");
  cJSON *srcs = own ? cJSON_AddArrayToObject(own, "sources") : NULL;
  if (!srcs) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto done;
  }
  cJSON_ReplaceItemInObjectCaseSensitive(own, "kind", cJSON_CreateString("merged"));
  const cJSON *docs[2] = {a, b};
  const char *files[2] = {a_file, b_file};
  for (int i = 0; i < 2; i++) {
    cJSON *s = cJSON_CreateObject(), *took = cJSON_CreateArray();
    cJSON *pv = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(docs[i], "provenance"), 1);
    int ok = s && took && pv && cJSON_AddStringToObject(s, "file", files[i]);
    const cJSON *u;
    cJSON_ArrayForEach(u, units) {
      if (strcmp(u->valuestring, "compute.jitter") == 0 || in_list(from_b, u->valuestring) != i) continue;
      if (ok && add_str(took, u->valuestring, e)) ok = 0;
    }
    if (!ok) {
      cJSON_Delete(s);
      cJSON_Delete(took);
      cJSON_Delete(pv);
      rc = err_set(e, ERR_NOMEM, "out of memory");
      goto done;
    }
    cJSON_AddItemToObject(s, "provenance", pv);
    cJSON_AddItemToObject(s, "took", took);
    cJSON_AddItemToArray(srcs, s);
  }
  if (!cJSON_AddStringToObject(own, "conflicts", "the later file (the second) wins; see replaced") ||
      !cJSON_AddStringToObject(own, "jitter", why)) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto done;
  }
  cJSON_AddItemToObject(own, "replaced", replaced);
  replaced = NULL;
  cJSON_ReplaceItemInObjectCaseSensitive(m, "provenance", own);
  own = NULL;
  *out = m;
  m = NULL;
  rc = ERR_OK;
done:
  cJSON_Delete(m);
  cJSON_Delete(own);
  cJSON_Delete(from_b);
  cJSON_Delete(replaced);
  cJSON_Delete(units);
  cJSON_Delete(fresh);
  return rc;
}
