/* cmd_cluster: `ddpcalib cluster`, a profile for a cluster the user has not measured whole: the
 * compute of one profile (the user's own, from `ddpcalib machine` or `compute`) and each link class
 * of the cluster's topology taken from a named profile's named link class. Nothing is guessed:
 * every class the topology names needs its --link, and a --link for a class it does not name is a
 * misuse. docs/calib.md, "cluster". */
#include <stdio.h>
#include <string.h>

#include "calcmd.h"
#include "data.h"
#include "profile.h"
#include "topo.h"

static const char *usage =
    "usage: ddpcalib cluster --compute PROFILE --topology T --link SRC:CLASS=NAME[,...] -o OUT\n"
    "\n"
    "Writes one complete profile for topology T: compute (and compute.jitter, compute.host, h2d)\n"
    "and device from --compute, and for each --link entry the link class CLASS of profile SRC\n"
    "written as the class NAME of the topology, e.g.\n"
    "  --link my.json:shm=nvlink,v100-dgx1v:ib-edr=ib-edr\n"
    "takes this machine's measured MPI link as the nodes' intra-node class nvlink and the bundled\n"
    "reference's EDR InfiniBand between nodes. Every class T names must be given exactly once.\n"
    "Profiles and topologies are files or bundled names. comm.nccl is not carried (ddpsim then\n"
    "models ring/Simple with each link's lat_s and bandwidth).\n"
    "\n";

#define CLUSTER_MAX_LINKS 8

typedef struct {
  char src[1024], cls[64], dst[64];
} link_map;

/* "SRC:CLASS=NAME" (SRC may hold ':' itself: the last one before '=' splits). */
static int parse_link(const char *text, link_map *m) {
  const char *eq = strrchr(text, '=');
  if (!eq) return -1;
  const char *colon = eq;
  while (colon > text && *colon != ':') colon--;
  if (colon == text || colon + 1 == eq || !eq[1]) return -1;
  if ((size_t)(colon - text) >= sizeof m->src || (size_t)(eq - colon - 1) >= sizeof m->cls || strlen(eq + 1) >= sizeof m->dst)
    return -1;
  snprintf(m->src, sizeof m->src, "%.*s", (int)(colon - text), text);
  snprintf(m->cls, sizeof m->cls, "%.*s", (int)(eq - colon - 1), colon + 1);
  snprintf(m->dst, sizeof m->dst, "%s", eq + 1);
  return strpbrk(m->dst, ". \t\"\\") || strpbrk(m->cls, ". \t\"\\") ? -1 : 0;
}

/* A profile (file or bundled name) read and checked as a part (either half may be absent). */
static int load_part(const char *name, char *path, size_t len, cJSON **doc, err_t *e) {
  int rc = data_resolve(DATA_PROFILE, name, path, len, e);
  if (!rc) rc = profilew_load(path, doc, e);
  if (!rc && (rc = profile_check_json(*doc, path, PROFILE_PART, e))) {
    cJSON_Delete(*doc);
    *doc = NULL;
  }
  return rc;
}

/* Copies src[key] (if there) into dst[key], replacing it. */
static int copy_item(cJSON *dst, const cJSON *src, const char *key, err_t *e) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(src, key);
  if (!it) return ERR_OK;
  cJSON *d = cJSON_Duplicate(it, 1);
  if (!d) return err_set(e, ERR_NOMEM, "out of memory");
  cJSON_DeleteItemFromObjectCaseSensitive(dst, key);
  cJSON_AddItemToObject(dst, key, d);
  return ERR_OK;
}

/* comm.links[m->cls] of m->src, written into links as m->dst with where it comes from. */
static int take_link(cJSON *links, const link_map *m, err_t *e) {
  char path[4096];
  cJSON *src = NULL;
  int rc = load_part(m->src, path, sizeof path, &src, e);
  if (rc) return rc;
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(src, "comm"), "links");
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(l, m->cls);
  cJSON *d = it ? cJSON_Duplicate(it, 1) : NULL;
  char from[4200];
  snprintf(from, sizeof from, "%s: comm.links.%s (ddpcalib cluster --link)", path, m->cls);
  if (!it) rc = err_set(e, ERR_INPUT, "%s: no comm.links entry for link class '%s'", path, m->cls);
  else if (!d) rc = err_set(e, ERR_NOMEM, "out of memory");
  else if (!(rc = profilew_str(d, "mapped_from", from, e))) cJSON_AddItemToObject(links, m->dst, d), d = NULL;
  cJSON_Delete(d);
  cJSON_Delete(src);
  return rc;
}

int cmd_cluster(cli_ctx *x, int argc, char **argv) {
  const char *compute = NULL, *topology = NULL, *output = NULL;
  cli_list links = {0};
  const cli_opt opts[] = {
      {"compute", 0, CLI_STRING, &compute, "PROFILE", "the profile whose compute (and h2d) is taken (required)"},
      {"topology", 0, CLI_STRING, &topology, "T", "the cluster's topology, file or bundled name (required)"},
      {"link", 0, CLI_STRING, &links, "SRC:CLASS=NAME,...", "each class of T: profile SRC's class CLASS (required)",
       .list = CLUSTER_MAX_LINKS},
      {"output", 'o', CLI_STRING, &output, "FILE", "the profile to write (required)"},
      {0}};
  const cli_opt *tables[] = {opts, NULL};
  const cli_cmd c = {.usage = usage, .tables = tables};
  int rc = cli_parse(x, &c, argc, argv, NULL, NULL, stdout);
  if (rc) return rc;
  if (!compute || !topology || !links.n || !output)
    return cli_usage(x, "--compute, --topology, --link and -o are all required");
  link_map map[CLUSTER_MAX_LINKS];
  for (int i = 0; i < links.n; i++) {
    if (parse_link(links.s[i], &map[i]))
      return cli_usage(x, "--link must be SRC:CLASS=NAME (plain class names), got '%s'", links.s[i]);
    for (int j = 0; j < i; j++)
      if (strcmp(map[i].dst, map[j].dst) == 0) return cli_usage(x, "--link: class '%s' is given twice", map[i].dst);
  }
  if ((rc = calcmd_check_output(x, output))) return rc;
  /* -o is none of the profiles and the topology read (bundled names resolved to their files). */
  {
    char paths[CLUSTER_MAX_LINKS + 2][4096];
    const char *flags[CLUSTER_MAX_LINKS + 2] = {"--compute", "--topology"}, *in[CLUSTER_MAX_LINKS + 2];
    in[0] = data_resolved(DATA_PROFILE, compute, paths[0], sizeof paths[0]);
    in[1] = data_resolved(DATA_TOPOLOGY, topology, paths[1], sizeof paths[1]);
    for (int i = 0; i < links.n; i++) {
      flags[2 + i] = "--link";
      in[2 + i] = data_resolved(DATA_PROFILE, map[i].src, paths[2 + i], sizeof paths[2 + i]);
    }
    if ((rc = calcmd_not_input(x, "-o", output, flags, in, 2 + links.n))) return rc;
  }

  err_t e = {{0}};
  char tpath[4096], cpath[4096];
  topo_t *t = NULL;
  cJSON *cdoc = NULL, *doc = NULL;
  if ((rc = data_resolve(DATA_TOPOLOGY, topology, tpath, sizeof tpath, &e)) || (rc = topo_load(tpath, &t, &e))) goto done;
  /* The classes the topology names, each needing exactly one --link. */
  const char *need[2] = {t->intra_class, t->has_nic ? t->nic_class : NULL};
  for (int i = 0; i < links.n; i++)
    if (strcmp(map[i].dst, need[0]) != 0 && (!need[1] || strcmp(map[i].dst, need[1]) != 0)) {
      rc = err_set(&e, ERR_USAGE, "--link: %s names no link class '%s' (it names %s%s%s)", tpath, map[i].dst, need[0],
                   need[1] ? " and " : "", need[1] ? need[1] : "");
      goto done;
    }
  for (int k = 0; k < 2; k++) {
    int given = !need[k];
    for (int i = 0; i < links.n && !given; i++) given = strcmp(map[i].dst, need[k]) == 0;
    if (!given) {
      rc = err_set(&e, ERR_USAGE, "--link: %s names link class '%s': say which measured class it is (SRC:CLASS=%s)",
                   tpath, need[k], need[k]);
      goto done;
    }
  }
  if ((rc = load_part(compute, cpath, sizeof cpath, &cdoc, &e))) goto done;
  const cJSON *comp = cJSON_GetObjectItemCaseSensitive(cdoc, "compute");
  if (!cJSON_IsObject(comp) || !comp->child) {
    rc = err_set(&e, ERR_INPUT, "%s: no compute section to take", cpath);
    goto done;
  }
  profilew_prov p = calcmd_prov("cluster");
  doc = profilew_new("cluster", &p);
  cJSON *lk = doc ? profilew_obj(profilew_obj(doc, "comm"), "links") : NULL;
  if (!lk) rc = err_set(&e, ERR_NOMEM, "out of memory");
  if (!rc) rc = copy_item(doc, cdoc, "compute", &e);
  if (!rc) rc = copy_item(doc, cdoc, "h2d", &e);
  if (!rc) rc = copy_item(doc, cdoc, "device", &e); /* the card the compute ran on */
  if (!rc) rc = profilew_str(profilew_obj(doc, "provenance"), "compute_from", cpath, &e);
  for (int i = 0; i < links.n && !rc; i++) rc = take_link(lk, &map[i], &e);
  if (!rc) rc = profile_check_json(doc, output, PROFILE_WHOLE, &e);
  if (!rc) rc = profilew_write(doc, output, &e);
  if (rc) goto done;
  printf("# compute from %s\n", cpath);
  for (int i = 0; i < links.n; i++) {
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(lk, map[i].dst);
    int shares = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(l, "shares_compute"));
    printf("# comm.links.%s from %s, class %s%s\n", map[i].dst, map[i].src, map[i].cls,
           shares ? " (shares_compute, as measured between CPU processes: never overlapped with compute)" : "");
  }
  printf("# wrote %s for topology %s\n", output, t->name);
done:
  topo_destroy(t);
  cJSON_Delete(cdoc);
  cJSON_Delete(doc);
  return calcmd_status(x, rc, &e);
}
