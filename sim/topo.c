#include "topo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "txt.h"

#define FORMAT_TAG "ddpsim-topology"
#define FORMAT_VERSION 1
#define MAX_TOKENS 16

void topo_destroy(topo_t *t) { free(t); }

static int copy_name(char *dst, const char *src) {
  size_t n = strlen(src);
  if (n == 0 || n >= TOPO_NAME_MAX) return -1;
  memcpy(dst, src, n + 1);
  return 0;
}

int topo_parse(const char *text, const char *origin, topo_t **out, err_t *e) {
  *out = NULL;
  topo_t *t = calloc(1, sizeof *t);
  char *buf = strdup(text);
  if (!t || !buf) {
    free(t);
    free(buf);
    return err_set(e, ERR_NOMEM, "%s: out of memory", origin);
  }
  snprintf(t->path, sizeof t->path, "%s", origin);
  int line_no = 0, rc = ERR_OK;
  int have_header = 0, have_name = 0, have_gpn = 0, have_intra = 0, have_nic = 0, have_switch = 0;
#define BAD(...) do { rc = err_set(e, ERR_INPUT, __VA_ARGS__); goto fail; } while (0)
  for (char *line = buf; line;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    line_no++;
    char *tok[MAX_TOKENS];
    int n = txt_split(line, tok, MAX_TOKENS);
    line = nl ? nl + 1 : NULL;
    if (n < 0) BAD("%s:%d: too many words on one line", origin, line_no);
    if (n == 0) continue;
    if (!have_header) {
      long v;
      if (strcmp(tok[0], FORMAT_TAG) != 0 || n != 2) BAD("%s:%d: first line must be '%s %d'", origin, line_no, FORMAT_TAG, FORMAT_VERSION);
      if (txt_parse_long(tok[1], &v) || v != FORMAT_VERSION)
        BAD("%s:%d: unsupported topology format version '%s' (this ddpsim reads version %d)", origin, line_no, tok[1], FORMAT_VERSION);
      have_header = 1;
    } else if (strcmp(tok[0], "name") == 0) {
      if (n != 2 || copy_name(t->name, tok[1])) BAD("%s:%d: expected 'name NAME'", origin, line_no);
      have_name = 1;
    } else if (strcmp(tok[0], "gpus_per_node") == 0) {
      long v;
      if (n != 2 || txt_parse_long(tok[1], &v) || v < 1 || v > 4096)
        BAD("%s:%d: expected 'gpus_per_node N' with 1 <= N <= 4096", origin, line_no);
      t->gpus_per_node = (int)v;
      have_gpn = 1;
    } else if (strcmp(tok[0], "intra") == 0) {
      /* intra CLASS links=N bw=BW */
      int hl = 0, hb = 0;
      if (n < 2 || strchr(tok[1], '=') || copy_name(t->intra_class, tok[1]))
        BAD("%s:%d: expected 'intra CLASS links=N bw=BANDWIDTH'", origin, line_no);
      for (int i = 2; i < n; i++) {
        const char *v;
        long l;
        if ((v = txt_kv(tok[i], "links"))) {
          if (txt_parse_long(v, &l) || l < 1 || l > 64) BAD("%s:%d: links must be an integer from 1 to 64, got '%s'", origin, line_no, v);
          t->intra_links = (int)l;
          hl = 1;
        } else if ((v = txt_kv(tok[i], "bw"))) {
          if (txt_parse_bw(v, &t->intra_bw_Bps) || t->intra_bw_Bps <= 0)
            BAD("%s:%d: bw '%s' is not a bandwidth like 25GBps or 100Gbps", origin, line_no, v);
          hb = 1;
        } else {
          BAD("%s:%d: unknown key '%s' (intra takes links= and bw=)", origin, line_no, tok[i]);
        }
      }
      if (!hl || !hb) BAD("%s:%d: intra needs links= and bw=", origin, line_no);
      have_intra = 1;
    } else if (strcmp(tok[0], "nic") == 0) {
      /* nic CLASS count=N bw=BW  |  nic none */
      if (n == 2 && strcmp(tok[1], "none") == 0) {
        t->has_nic = 0;
        have_nic = 1;
        continue;
      }
      int hc = 0, hb = 0;
      if (n < 2 || strchr(tok[1], '=') || copy_name(t->nic_class, tok[1]))
        BAD("%s:%d: expected 'nic CLASS count=N bw=BANDWIDTH' or 'nic none'", origin, line_no);
      for (int i = 2; i < n; i++) {
        const char *v;
        long l;
        if ((v = txt_kv(tok[i], "count"))) {
          if (txt_parse_long(v, &l) || l < 1 || l > 64) BAD("%s:%d: count must be an integer from 1 to 64, got '%s'", origin, line_no, v);
          t->nic_count = (int)l;
          hc = 1;
        } else if ((v = txt_kv(tok[i], "bw"))) {
          if (txt_parse_bw(v, &t->nic_bw_Bps) || t->nic_bw_Bps <= 0)
            BAD("%s:%d: bw '%s' is not a bandwidth like 100Gbps", origin, line_no, v);
          hb = 1;
        } else {
          BAD("%s:%d: unknown key '%s' (nic takes count= and bw=)", origin, line_no, tok[i]);
        }
      }
      if (!hc || !hb) BAD("%s:%d: nic needs count= and bw=", origin, line_no);
      t->has_nic = 1;
      have_nic = 1;
    } else if (strcmp(tok[0], "switch") == 0) {
      const char *v;
      if (n == 2 && strcmp(tok[1], "nonblocking") == 0) t->switch_bw_Bps = 0;
      else if (n == 2 && (v = txt_kv(tok[1], "bw")) && txt_parse_bw(v, &t->switch_bw_Bps) == 0 && t->switch_bw_Bps > 0) {
      } else BAD("%s:%d: expected 'switch nonblocking' or 'switch bw=BANDWIDTH'", origin, line_no);
      have_switch = 1;
    } else {
      BAD("%s:%d: unknown line '%s' (expected name, gpus_per_node, intra, nic or switch)", origin, line_no, tok[0]);
    }
  }
  if (!have_header) BAD("%s: empty file, expected '%s %d'", origin, FORMAT_TAG, FORMAT_VERSION);
  if (!have_name || !have_gpn || !have_intra || !have_nic)
    BAD("%s: missing %s line", origin, !have_name ? "'name'" : !have_gpn ? "'gpus_per_node'" : !have_intra ? "'intra'" : "'nic'");
  if (!have_switch) t->switch_bw_Bps = 0;
#undef BAD
  free(buf);
  *out = t;
  return ERR_OK;
fail:
  free(buf);
  free(t);
  return rc;
}

int topo_load(const char *path, topo_t **out, err_t *e) {
  *out = NULL;
  char *text = txt_read_file(path, NULL);
  if (!text) return err_set(e, ERR_IO, "%s: cannot read: %s", path, strerror(errno));
  int rc = topo_parse(text, path, out, e);
  free(text);
  return rc;
}
