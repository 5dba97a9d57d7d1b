/* test_afile: common/afile.h's refusal of an output that is an input (afile_not_input: the same
 * device and inode, through symbolic and hard links, never a file that merely has the same
 * content) and its folders written as one (afile_dir: the new run replaces the old whole, a folder
 * holding what the writer does not name is refused, an abort leaves nothing), with sim/kineto.h's
 * names of its files. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"
#include "check.h"
#include "kineto.h"

static char dir[64];

static const char *at(const char *name) {
  static char p[4][256];
  static int k;
  k = (k + 1) % 4;
  snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
  return p[k];
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) fputs(text, f), fclose(f);
}

/* afile_not_input of out against the one input in (flag --in): the status, the message in msg. */
static int not_input(const char *out, const char *in, char *msg) {
  err_t e = {{0}};
  const char *flags[] = {"--skipped", "--in"}, *ins[] = {NULL, in};
  int rc = afile_not_input("-o", out, flags, ins, 2, &e);
  snprintf(msg, 1024, "%s", rc ? e.msg : "");
  return rc;
}

/* The entries of folder path (not . and ..) and whether one is called name. */
static int entries(const char *path, const char *name, int *has) {
  DIR *d = opendir(path);
  int n = 0;
  *has = 0;
  for (struct dirent *de; d && (de = readdir(d));) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    n++;
    if (name && !strcmp(de->d_name, name)) *has = 1;
  }
  if (d) closedir(d);
  return d ? n : -1;
}

/* Entries of the test folder whose name starts with prefix (temporary folders left behind). */
static int left(const char *prefix) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *de; d && (de = readdir(d));) n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
  if (d) closedir(d);
  return n;
}

static void test_not_input(void) {
  char msg[1024];
  put(at("in"), "data");
  put(at("copy"), "data");
  if (symlink("in", at("soft")) != 0 || link(at("in"), at("hard")) != 0 || mkfifo(at("fifo"), 0600) != 0) {
    CHECK(0, "cannot make the links and the FIFO the test needs");
    return;
  }
  int rc = not_input(at("in"), at("in"), msg);
  CHECK(rc == ERR_IO && strstr(msg, "-o ") && strstr(msg, "is the same file as --in ") && strstr(msg, "refusing to replace an input"),
        "the output named as the input: refused, naming both (%s)", msg);
  CHECK(not_input(at("soft"), at("in"), msg) == ERR_IO, "a symbolic link to the input: refused (%s)", msg);
  CHECK(not_input(at("in"), at("soft"), msg) == ERR_IO, "the input given as a link, the output as the file: refused");
  CHECK(not_input(at("hard"), at("in"), msg) == ERR_IO, "a hard link to the input: refused (%s)", msg);
  CHECK(not_input(at("copy"), at("in"), msg) == ERR_OK, "a copy with the same content is another file: passes");
  CHECK(not_input(at("new"), at("in"), msg) == ERR_OK, "an output that does not exist yet: passes");
  CHECK(not_input(at("fifo"), at("fifo"), msg) == ERR_OK, "a FIFO (written in place, replacing nothing): passes");
  CHECK(not_input(NULL, at("in"), msg) == ERR_OK, "no output: passes");
  CHECK(not_input(at("in"), at("missing"), msg) == ERR_OK, "an input that does not exist: skipped");
  put(at("in"), "data");
  FILE *f = fopen(at("in"), "r");
  char got[8] = "";
  if (f) got[fread(got, 1, sizeof got - 1, f)] = 0, fclose(f);
  CHECK(strcmp(got, "data") == 0, "the input is as it was (%s)", got);
}

static void test_names(void) {
  CHECK(kineto_is_trace_name("rank0.pt.trace.json") && kineto_is_trace_name("rank4095.pt.trace.json"),
        "rank<R>.pt.trace.json is kineto_write's");
  const char *bad[] = {"rank.pt.trace.json", "rank-1.pt.trace.json", "rank3.pt.trace.json.bak", "xrank3.pt.trace.json",
                       "rank3.json", "notes.txt", ".rank3.pt.trace.json", "rank12345678901.pt.trace.json"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) CHECK(!kineto_is_trace_name(bad[i]), "'%s' is not", bad[i]);
}

/* One run of the folder writer into DIR/out, files rank0..rank<n-1>; the status. */
static int write_run(int n, const char *content, err_t *e) {
  afile_dir d;
  int rc = afile_dir_begin(&d, at("out"), kineto_is_trace_name, e);
  for (int i = 0; i < n && !rc; i++) {
    char name[64];
    snprintf(name, sizeof name, "rank%d.pt.trace.json", i);
    rc = afile_write(afile_dir_file(&d, name), content, strlen(content), e);
  }
  if (rc) afile_dir_abort(&d);
  else rc = afile_dir_commit(&d, e);
  return rc;
}

static void test_dir(void) {
  err_t e = {{0}};
  int has;
  CHECK(write_run(4, "one", &e) == ERR_OK && entries(at("out"), "rank3.pt.trace.json", &has) == 4 && has,
        "a new folder: the run's 4 files (%s)", e.msg);
  CHECK(write_run(2, "two", &e) == ERR_OK && entries(at("out"), "rank3.pt.trace.json", &has) == 2 && !has,
        "a second run of 2 over 4: only its own 2 files (%s)", e.msg);
  CHECK(left("out.") == 0, "nothing left beside the folder");
  /* An aborted run: the old folder whole, its temporary folder gone. */
  afile_dir d;
  int rc = afile_dir_begin(&d, at("out"), kineto_is_trace_name, &e);
  if (!rc) rc = afile_write(afile_dir_file(&d, "rank7.pt.trace.json"), "x", 1, &e);
  CHECK(rc == ERR_OK && left("out.tmp.") == 1, "while written: one temporary folder beside the target");
  afile_dir_abort(&d);
  CHECK(entries(at("out"), "rank7.pt.trace.json", &has) == 2 && !has && left("out.") == 0,
        "aborted: the old folder as it was, no temporary folder");
  /* A foreign file: refused by the check, the begin and a commit that finds it added since. */
  put(at("out/notes.txt"), "mine");
  rc = afile_dir_check(at("out"), kineto_is_trace_name, &e);
  CHECK(rc == ERR_IO && strstr(e.msg, "holds 'notes.txt'"), "a folder holding notes.txt: refused by the check (%s)", e.msg);
  CHECK(write_run(1, "three", &e) == ERR_IO && entries(at("out"), "notes.txt", &has) == 3 && has && left("out.") == 0,
        "and by the writer, the folder untouched (%s)", e.msg);
  unlink(at("out/notes.txt"));
  rc = afile_dir_begin(&d, at("out"), kineto_is_trace_name, &e);
  put(at("out/late.txt"), "mine");
  if (!rc) rc = afile_dir_commit(&d, &e);
  CHECK(rc == ERR_IO && entries(at("out"), "late.txt", &has) == 3 && has && left("out.") == 0,
        "a file added while the run is written: the commit refuses, the folder untouched (%s)", e.msg);
  unlink(at("out/late.txt"));
  put(at("file"), "x");
  rc = afile_dir_check(at("file"), kineto_is_trace_name, &e);
  CHECK(rc == ERR_IO && strstr(e.msg, "exists and is not a directory"), "a file as the folder: refused (%s)", e.msg);
  rc = afile_dir_check("/", kineto_is_trace_name, &e);
  CHECK(rc == ERR_IO, "the root folder: refused (%s)", e.msg);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/test_afile_XXXXXX");
  if (!mkdtemp(dir)) return 1;
  test_not_input();
  test_names();
  test_dir();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) printf("note  %s was not removed\n", dir);
  return check_status();
}
