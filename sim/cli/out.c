/* out: printing reports and writing files atomically (out.h). */
#include "out.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "afile.h"
#include "err.h"
#include "version.h"
#include "wall.h"

int out_text(cli_ctx *x, char *s) {
  if (!s) return cli_fail(x, ERR_NOMEM, "out of memory while formatting the report");
  fputs(s, stdout);
  free(s);
  return CLI_OK;
}

int out_json(cli_ctx *x, cJSON *j) {
  char *s = j && version_stamp(j) == 0 ? cJSON_Print(j) : NULL;
  cJSON_Delete(j);
  int rc = out_text(x, s);
  if (rc == CLI_OK) putchar('\n');
  return rc;
}

int out_write_atomic(cli_ctx *x, const char *path, const char *text) {
  err_t e;
  int rc = afile_write(path, text, strlen(text), &e);
  return rc ? cli_fail(x, rc, "%s", e.msg) : CLI_OK;
}

void out_progress_line(void *arg, int done, int n, double t) {
  const out_progress *p = arg;
  int tty = isatty(2);
  if (!p->forced && (!tty || t < 3)) return;
  double left = done > 0 ? t * (n - done) / done : 0;
  fprintf(stderr, "%s%s %s: %d/%d %s, %.0f s, about %.0f s left%s", tty ? "\r" : "", p->x->prog, p->x->where, done, n, p->what, t,
          left, tty ? (done == n ? "   \n" : "   ") : "\n");
}

void out_progress_tick(const out_progress *p, out_ticks *t, int done, int n) {
  double now = wall_now_s();
  if (t->t0_s == 0) t->t0_s = t->last_s = now;
  if (done < n && now - t->last_s < 0.5) return;
  t->last_s = now;
  out_progress_line((void *)p, done, n, now - t->t0_s);
}
