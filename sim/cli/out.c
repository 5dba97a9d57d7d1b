/* out: printing reports and writing files atomically (out.h). */
#include "out.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

int out_text(cli_ctx *x, char *s) {
  if (!s) return cli_fail(x, ERR_NOMEM, "out of memory while formatting the report");
  fputs(s, stdout);
  free(s);
  return CLI_OK;
}

int out_json(cli_ctx *x, cJSON *j) {
  char *s = j ? cJSON_Print(j) : NULL;
  cJSON_Delete(j);
  int rc = out_text(x, s);
  if (rc == CLI_OK) putchar('\n');
  return rc;
}

int out_write_atomic(cli_ctx *x, const char *path, const char *text) {
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) return cli_fail(x, ERR_IO, "%s: cannot create a temporary file: %s", tmp, strerror(errno));
  FILE *f = fdopen(fd, "w");
  if (!f) {
    int saved = errno;
    close(fd);
    unlink(tmp);
    return cli_fail(x, ERR_IO, "%s: %s", tmp, strerror(saved));
  }
  int bad = fputs(text, f) < 0;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    int saved = errno;
    unlink(tmp);
    return cli_fail(x, ERR_IO, "%s: cannot write: %s", path, strerror(saved));
  }
  return CLI_OK;
}
