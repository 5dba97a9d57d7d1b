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

/* A bandwidth within the bounds every loader shares (common/txt.h). */
static int parse_bw(const char *v, double *Bps) {
  return txt_parse_bw(v, Bps) || !(*Bps >= TXT_BW_MIN_Bps && *Bps <= TXT_BW_MAX_Bps) ? -1 : 0;
}

static int copy_name(char *dst, const char *src) {
  size_t n = strlen(src);
  if (n == 0 || n >= TOPO_NAME_MAX) return -1;
  memcpy(dst, src, n + 1);
  return 0;
}

/* Lines that say one thing once (name, gpus_per_node, intra, nic, switch): 1 with *first the line
 * of the earlier one when key was seen before (a second is refused, never silently the winner);
 * else records line and returns 0. */
static int once_again(const char *key, int seen_at[5], int line, int *first) {
  static const char *const once[5] = {"name", "gpus_per_node", "intra", "nic", "switch"};
  for (int k = 0; k < 5; k++)
    if (strcmp(key, once[k]) == 0) {
      if (seen_at[k]) return *first = seen_at[k], 1;
      seen_at[k] = line;
    }
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
  int seen_at[5] = {0}, first = 0; /* once_again's record */
  int pair_line = 0, near_line[TOPO_MAX_NICS] = {0}, pair_lines[TOPO_MAX_PAIRS];
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
    } else if (once_again(tok[0], seen_at, line_no, &first)) {
      BAD("%s:%d: a second '%s' line (the first is line %d)", origin, line_no, tok[0], first);
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
          if (parse_bw(v, &t->intra_bw_Bps))
            BAD("%s:%d: bw '%s' is not a bandwidth like 25GBps or 100Gbps from 1kBps to 1000TBps", origin, line_no, v);
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
          if (parse_bw(v, &t->nic_bw_Bps))
            BAD("%s:%d: bw '%s' is not a bandwidth like 100Gbps from 1kBps to 1000TBps", origin, line_no, v);
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
      else if (n == 2 && (v = txt_kv(tok[1], "bw")) && parse_bw(v, &t->switch_bw_Bps) == 0) {
      } else BAD("%s:%d: expected 'switch nonblocking' or 'switch bw=BANDWIDTH' (1kBps to 1000TBps)", origin, line_no);
      have_switch = 1;
    } else if (strcmp(tok[0], "pair") == 0) {
      /* pair A B links=N */
      long a, b, l;
      const char *v;
      if (n != 4 || txt_parse_long(tok[1], &a) || txt_parse_long(tok[2], &b) || !(v = txt_kv(tok[3], "links")) ||
          txt_parse_long(v, &l))
        BAD("%s:%d: expected 'pair GPU GPU links=N'", origin, line_no);
      if (a < 0 || b < 0 || a >= TOPO_MAX_GRAPH_GPUS || b >= TOPO_MAX_GRAPH_GPUS || a == b)
        BAD("%s:%d: a pair joins two different GPUs numbered 0 to %d", origin, line_no, TOPO_MAX_GRAPH_GPUS - 1);
      if (l < 1 || l > 64) BAD("%s:%d: links must be an integer from 1 to 64, got %ld", origin, line_no, l);
      for (int i = 0; i < t->npairs; i++)
        if ((t->pairs[i].a == a && t->pairs[i].b == b) || (t->pairs[i].a == b && t->pairs[i].b == a))
          BAD("%s:%d: GPUs %ld and %ld are paired twice", origin, line_no, a, b);
      t->pairs[t->npairs].a = (int)a;
      t->pairs[t->npairs].b = (int)b;
      t->pairs[t->npairs].links = (int)l;
      pair_lines[t->npairs++] = line_no;
      pair_line = line_no;
    } else if (strcmp(tok[0], "nic_near") == 0) {
      /* nic_near K GPU[,GPU...] */
      long k;
      if (n != 3 || txt_parse_long(tok[1], &k) || k < 0 || k >= TOPO_MAX_NICS)
        BAD("%s:%d: expected 'nic_near NIC GPU,GPU,...' with NIC from 0 to %d", origin, line_no, TOPO_MAX_NICS - 1);
      if (near_line[k]) BAD("%s:%d: NIC %ld already has a nic_near line (line %d)", origin, line_no, k, near_line[k]);
      for (char *g = tok[2], *save = NULL, *item; (item = strtok_r(g, ",", &save)); g = NULL) {
        long gpu;
        if (txt_parse_long(item, &gpu) || gpu < 0 || gpu >= TOPO_MAX_GRAPH_GPUS)
          BAD("%s:%d: '%s' is not a GPU number from 0 to %d", origin, line_no, item, TOPO_MAX_GRAPH_GPUS - 1);
        t->near[k][gpu] = 1;
      }
      near_line[k] = line_no;
      t->has_near = 1;
    } else {
      BAD("%s:%d: unknown line '%s' (expected name, gpus_per_node, intra, pair, nic, nic_near or switch)", origin,
          line_no, tok[0]);
    }
  }
  if (!have_header) BAD("%s: empty file, expected '%s %d'", origin, FORMAT_TAG, FORMAT_VERSION);
  if (!have_name || !have_gpn || !have_intra || !have_nic)
    BAD("%s: missing %s line", origin, !have_name ? "'name'" : !have_gpn ? "'gpus_per_node'" : !have_intra ? "'intra'" : "'nic'");
  if (!have_switch) t->switch_bw_Bps = 0;
  if (t->npairs) {
    if (t->gpus_per_node > TOPO_MAX_GRAPH_GPUS)
      BAD("%s:%d: pairs describe at most %d GPUs per node, and gpus_per_node is %d", origin, pair_line,
          TOPO_MAX_GRAPH_GPUS, t->gpus_per_node);
    for (int i = 0; i < t->npairs; i++)
      if (t->pairs[i].a >= t->gpus_per_node || t->pairs[i].b >= t->gpus_per_node)
        BAD("%s:%d: pair %d-%d names a GPU beyond gpus_per_node %d", origin, pair_lines[i], t->pairs[i].a, t->pairs[i].b,
            t->gpus_per_node);
    for (int g = 0; g < t->gpus_per_node; g++) {
      int sum = 0, last = 0;
      for (int i = 0; i < t->npairs; i++)
        if (t->pairs[i].a == g || t->pairs[i].b == g) {
          sum += t->pairs[i].links;
          last = pair_lines[i];
        }
      if (sum > t->intra_links)
        BAD("%s:%d: GPU %d has %d links in its pairs, more than the %d of its 'intra' line", origin, last, g, sum,
            t->intra_links);
    }
  }
  for (int k = 0; k < TOPO_MAX_NICS; k++) {
    if (!near_line[k]) continue;
    if (!t->has_nic || k >= t->nic_count)
      BAD("%s:%d: nic_near names NIC %d, and the node has %d NICs", origin, near_line[k], k, t->has_nic ? t->nic_count : 0);
    for (int g = t->gpus_per_node; g < TOPO_MAX_GRAPH_GPUS; g++)
      if (t->near[k][g]) BAD("%s:%d: nic_near names GPU %d beyond gpus_per_node %d", origin, near_line[k], g, t->gpus_per_node);
  }
  if (t->has_near) {
    if (t->gpus_per_node > TOPO_MAX_GRAPH_GPUS)
      BAD("%s: nic_near lines describe at most %d GPUs per node", origin, TOPO_MAX_GRAPH_GPUS);
    for (int k = 0; k < t->nic_count; k++)
      if (!near_line[k]) BAD("%s: NIC %d has no nic_near line (give one for every NIC, or none)", origin, k);
  }
#undef BAD
  free(buf);
  *out = t;
  return ERR_OK;
fail:
  free(buf);
  free(t);
  return rc;
}

int topo_pair_links(const topo_t *t, int u, int v) {
  for (int i = 0; i < t->npairs; i++)
    if ((t->pairs[i].a == u && t->pairs[i].b == v) || (t->pairs[i].a == v && t->pairs[i].b == u)) return t->pairs[i].links;
  return 0;
}

int topo_load(const char *path, topo_t **out, err_t *e) {
  *out = NULL;
  char *text;
  int rc = txt_read_text(path, &text, e);
  if (rc) return rc;
  rc = topo_parse(text, path, out, e);
  free(text);
  return rc;
}
