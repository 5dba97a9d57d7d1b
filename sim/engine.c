/* engine: a plan's program in closed form, or its events in a child (engine.h). */
#include "engine.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "events.h"
#include "maxplus.h"

#ifndef DDPSIM_EVENTS_MODULE
#define DDPSIM_EVENTS_MODULE "ddpsim-events.so"
#endif
#ifndef DDPSIM_REL_EVENTS_MODULE
#define DDPSIM_REL_EVENTS_MODULE "../lib/ddpsim/ddpsim-events.so"
#endif

const char *engine_events_path(char *buf, size_t len) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  struct stat st;
  if (n > 0) {
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) *slash = '\0';
    if ((size_t)snprintf(buf, len, "%s/%s", self, DDPSIM_REL_EVENTS_MODULE) < len && stat(buf, &st) == 0) return buf;
  }
  return DDPSIM_EVENTS_MODULE;
}

/* The module's events_child, loaded once per process (before any fork, so children inherit it). */
static events_child_fn *events_load(err_t *e) {
  static events_child_fn *child;
  if (child) return child;
  char buf[PATH_MAX + 64];
  const char *path = engine_events_path(buf, sizeof buf);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    err_set(e, ERR_SIM, "cannot load the events engine: %s", dlerror());
    return NULL;
  }
  void *f = dlsym(h, EVENTS_CHILD_SYMBOL);
  if (!f) {
    err_set(e, ERR_SIM, "cannot load the events engine: %s has no %s", path, EVENTS_CHILD_SYMBOL);
    dlclose(h);
    return NULL;
  }
  child = (events_child_fn *)f; /* POSIX: a function's address through dlsym's void * */
  return child;
}

int engine_run(const plan_t *p, record_t *rec, err_t *e) {
  memset(rec, 0, sizeof *rec);
  int rc, pipefd[2] = {-1, -1};
  /* The child builds the platform (sim/platform.h); what it would refuse for its input is refused
   * here, with the message. */
  if ((rc = platform_check(&p->platform, e))) return rc;
  if (!p->events && maxplus_applies(p)) {
    int done;
    if ((rc = maxplus_run(p, rec, &done, e)) || done) return rc;
  }
  if (pipe(pipefd) != 0) {
    rc = err_set(e, ERR_IO, "cannot create a pipe: %s", strerror(errno));
    goto done;
  }
  events_child_fn *child = events_load(e);
  if (!child) {
    rc = ERR_SIM;
    goto done;
  }
  fflush(NULL);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    rc = err_set(e, ERR_SIM, "cannot fork the simulation: %s", strerror(errno));
    goto done;
  }
  if (pid == 0) {
    close(pipefd[0]);
    child(p, pipefd[1], parent);
  }
  close(pipefd[1]);
  pipefd[1] = -1;
  err_t re;
  int read_rc = record_read(pipefd[0], rec, p->iterations, p->nb, p->sim_ranks, prog_at_count(&p->prog), &re);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    rc = err_set(e, ERR_SIM, "the simulation engine died (signal %d)", WTERMSIG(status));
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == EVENTS_EXIT_PLATFORM) {
    rc = err_set(e, ERR_SIM, "the simulation engine could not build its platform");
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == EVENTS_EXIT_PROGRAM) {
    rc = err_set(e, ERR_SIM, "internal: a stream of the program read its rank's values in another iteration");
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    rc = err_set(e, ERR_SIM, "the simulation engine failed (exit status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  } else if (read_rc) {
    rc = err_set(e, read_rc, "%s", re.msg);
  } else if (rec->finished != rec->expected) {
    rc = err_set(e, ERR_SIM, "the simulation deadlocked: %d of the actors finished", rec->finished);
  } else {
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) == 0) rec->peak_rss_kb = ru.ru_maxrss;
    rc = ERR_OK;
  }
done:
  if (pipefd[0] >= 0) close(pipefd[0]);
  if (pipefd[1] >= 0) close(pipefd[1]);
  if (rc) record_free(rec);
  return rc;
}
