#define _POSIX_C_SOURCE 200809L /* popen, pclose */
#include "hostbench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "profilew.h"

#include "data.h"

/* The helper's place in the data directory (sim/data.h): calib/ of the source tree, or of the
 * installed data (CMakeLists.txt installs it there). */
#ifndef HOSTBENCH_HELPER
#define HOSTBENCH_HELPER "calib/host_overhead.py"
#endif

/* Single-quoted for the shell: every ' becomes '\''. */
static int quote(char *out, size_t len, const char *s) {
  size_t k = 0;
  if (k + 1 >= len) return -1;
  out[k++] = '\'';
  for (; *s; s++) {
    const char *piece = *s == '\'' ? "'\\''" : (char[]){*s, 0};
    size_t n = strlen(piece);
    if (k + n + 2 >= len) return -1;
    memcpy(out + k, piece, n);
    k += n;
  }
  out[k++] = '\'';
  out[k] = 0;
  return 0;
}

static int num(const cJSON *o, const char *key, double *v, err_t *e) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble)) return err_set(e, ERR_INPUT, "host helper: \"%s\" is missing or not a number", key);
  *v = j->valuedouble;
  return ERR_OK;
}

int hostbench_run(const hostbench_cfg *c, hostbench_result *r, err_t *e) {
  memset(r, 0, sizeof *r);
  char py[1200], helper[1200], dev[64], cmd[4096], default_helper[1100];
  snprintf(default_helper, sizeof default_helper, "%s/%s", data_dir(), HOSTBENCH_HELPER);
  if (quote(py, sizeof py, c->python ? c->python : "python3") || quote(helper, sizeof helper, c->helper ? c->helper : default_helper) ||
      quote(dev, sizeof dev, c->device))
    return err_set(e, ERR_USAGE, "the interpreter's or the helper's path is too long");
  snprintf(cmd, sizeof cmd, "%s %s --device %s --ops %d --iters %d --warmup %d", py, helper, dev, c->ops, c->iters, c->warmups);
  fflush(NULL);
  FILE *f = popen(cmd, "r");
  if (!f) return err_set(e, ERR_RUNTIME, "cannot run %s", cmd);
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n + 4096 > cap) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    if (!got) break;
    n += got;
  }
  int status = pclose(f);
  if (!buf) return err_set(e, ERR_NOMEM, "out of memory");
  buf[n] = 0;
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    free(buf);
    return err_set(e, ERR_RUNTIME, "the host helper failed (exit status %d): %s", WIFEXITED(status) ? WEXITSTATUS(status) : -1, cmd);
  }
  r->raw = cJSON_Parse(buf);
  free(buf);
  if (!cJSON_IsObject(r->raw)) {
    hostbench_free(r);
    return err_set(e, ERR_INPUT, "host helper: its output is not a JSON object");
  }
  const cJSON *fw = cJSON_GetObjectItemCaseSensitive(r->raw, "framework"), *dv = cJSON_GetObjectItemCaseSensitive(r->raw, "device");
  const cJSON *wl = cJSON_GetObjectItemCaseSensitive(r->raw, "workload_s"), *w;
  double ops = 0;
  int rc;
  if (!cJSON_IsString(fw) || !cJSON_IsString(dv)) rc = err_set(e, ERR_INPUT, "host helper: \"framework\" or \"device\" is missing");
  else if ((rc = num(r->raw, "dispatch_s", &r->dispatch_s, e)) || (rc = num(r->raw, "jitter_s", &r->jitter_s, e)) ||
           (rc = num(r->raw, "ops", &ops, e)) || (rc = num(r->raw, "reduce_Bps", &r->reduce_Bps, e))) {
  } else if (!(r->dispatch_s > 0) || r->dispatch_s > 10 || !(r->jitter_s >= 0) || r->jitter_s > 10 || ops < 1 ||
             !(r->reduce_Bps >= 1e3 && r->reduce_Bps <= 1e15))
    rc = err_set(e, ERR_INPUT, "host helper: dispatch_s %g s, jitter_s %g s, ops %g or reduce_Bps %g out of range", r->dispatch_s,
                 r->jitter_s, ops, r->reduce_Bps);
  else if (!cJSON_IsArray(wl) || cJSON_GetArraySize(wl) < 2)
    rc = err_set(e, ERR_INPUT, "host helper: \"workload_s\" must be an array of 2 or more times");
  if (rc) {
    hostbench_free(r);
    return rc;
  }
  snprintf(r->framework, sizeof r->framework, "%s", fw->valuestring);
  snprintf(r->device, sizeof r->device, "%s", dv->valuestring);
  r->ops = (int)ops;
  int k = 0;
  cJSON_ArrayForEach(w, wl) {
    if (!cJSON_IsNumber(w)) {
      hostbench_free(r);
      return err_set(e, ERR_INPUT, "host helper: workload_s[%d] is not a number", k);
    }
    r->workload_s += w->valuedouble;
    k++;
  }
  r->workload_s /= k;
  return ERR_OK;
}

int hostbench_write(cJSON *doc, const hostbench_result *r, err_t *e) {
  cJSON *host = profilew_obj(profilew_obj(doc, "compute"), "host");
  cJSON *raw = cJSON_Duplicate(r->raw, 1);
  cJSON *samples = profilew_obj(doc, "samples");
  char src[400];
  snprintf(src, sizeof src, "ddpcalib host: %s on %s, median of timed batches of %d ops; jitter: sd of the batches", r->framework,
           r->device, r->ops);
  int rc;
  if (!host || !raw || !samples || !cJSON_AddItemToObject(samples, "host", raw)) {
    cJSON_Delete(raw);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  if (r->launch_s > 0 && (rc = profilew_num(host, "launch_s", r->launch_s, e))) return rc;
  if ((rc = profilew_num(host, "dispatch_s", r->dispatch_s, e)) || (rc = profilew_num(host, "jitter_s", r->jitter_s, e)) ||
      (rc = profilew_num(host, "jitter_ops", r->ops, e)) || (rc = profilew_num(host, "reduce_Bps", r->reduce_Bps, e)) || (rc = profilew_str(host, "framework", r->framework, e)) ||
      (rc = profilew_str(host, "source", src, e)))
    return rc;
  return ERR_OK;
}

void hostbench_free(hostbench_result *r) {
  if (!r) return;
  cJSON_Delete(r->raw);
  r->raw = NULL;
}
