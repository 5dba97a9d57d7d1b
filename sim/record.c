#include "record.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "program.h"

void record_tail(const plan_t *p, record_t *rec, int r, int it, int sync, const double *v, double t0, double d0,
                        double end, double done, double cb) {
  double reach = v[PROG_STAT_REACH];
  if (sync && reach > rec->reach_max[it]) rec->reach_max[it] = reach;
  if (r == 0) {
    rec->iter_end[it] = done;
    rec->tail_span[it] = done - d0;
    rec->fwd[it] = v[PROG_STAT_FWD];
    rec->bwd[it] = v[PROG_STAT_BWD];
    rec->copy_in[it] = v[PROG_STAT_COPY_IN];
    rec->copy_back[it] = cb > 0 ? cb : 0;
    rec->copy_early[it] = sync ? v[PROG_STAT_COPY_EARLY] : 0;
    rec->reach0[it] = reach;
  }
  if (it >= plan_first_steady(p)) {
    /* The stream idle for the host: before the last wait (the plan's), and in the tail what it took
     * beyond its own work. The host idle: everything it did not spend issuing. */
    double tail_idle = end - d0 - v[PROG_STAT_TAIL_DEV], busy = end - t0, hbusy = v[PROG_STAT_HOST_BUSY];
    rec->host_busy[r] += hbusy;
    rec->device_busy[r] += v[PROG_STAT_DEV_BUSY];
    rec->host_bound[r] += v[PROG_STAT_STARVED] + (tail_idle > 0 ? tail_idle : 0);
    rec->device_bound[r] += busy > hbusy ? busy - hbusy : 0;
  }
}

/* ---- the one serializer: a header, then every field by name and length ---- */

enum { BY_ITER = 0, BY_RANK = 1, BY_AT = 2 };
static const struct {
  const char *name;
  size_t off;
  int by;
} fields[] = {
    {"iter_start", offsetof(record_t, iter_start), BY_ITER},
    {"iter_end", offsetof(record_t, iter_end), BY_ITER},
    {"at", offsetof(record_t, at), BY_AT},
    {"fwd", offsetof(record_t, fwd), BY_ITER},
    {"bwd", offsetof(record_t, bwd), BY_ITER},
    {"copy_in", offsetof(record_t, copy_in), BY_ITER},
    {"copy_back", offsetof(record_t, copy_back), BY_ITER},
    {"copy_early", offsetof(record_t, copy_early), BY_ITER},
    {"reach0", offsetof(record_t, reach0), BY_ITER},
    {"reach_max", offsetof(record_t, reach_max), BY_ITER},
    {"slowed", offsetof(record_t, slowed), BY_ITER},
    {"load_wait", offsetof(record_t, load_wait), BY_ITER},
    {"copy_wait", offsetof(record_t, copy_wait), BY_ITER},
    {"tail_span", offsetof(record_t, tail_span), BY_ITER},
    {"host_busy", offsetof(record_t, host_busy), BY_RANK},
    {"device_busy", offsetof(record_t, device_busy), BY_RANK},
    {"host_bound", offsetof(record_t, host_bound), BY_RANK},
    {"device_bound", offsetof(record_t, device_bound), BY_RANK},
};
#define NFIELDS (sizeof fields / sizeof *fields)

typedef struct {
  char magic[8]; /* "ddprec2" */
  int32_t iterations, nb, ranks, finished, expected;
  int64_t messages, nat;
} record_head;

typedef struct {
  char name[16];
  int64_t count;
} field_head;

static double **field_ptr(record_t *r, size_t i) { return (double **)((char *)r + fields[i].off); }
static double *const *field_cptr(const record_t *r, size_t i) { return (double *const *)((const char *)r + fields[i].off); }
static size_t field_len(const record_t *r, size_t i) {
  switch (fields[i].by) {
  case BY_ITER: return (size_t)r->iterations;
  case BY_RANK: return (size_t)r->ranks;
  default: return (size_t)r->nat;
  }
}

static int write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

static int read_all(int fd, void *buf, size_t len) {
  char *p = buf;
  while (len) {
    ssize_t got = read(fd, p, len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    p += got;
    len -= (size_t)got;
  }
  return 0;
}

int record_alloc(record_t *r, int K, int nb, int ranks, long nat) {
  r->iterations = K;
  r->nb = nb;
  r->ranks = ranks;
  r->nat = nat;
  for (size_t i = 0; i < NFIELDS; i++)
    if (!(*field_ptr(r, i) = calloc(field_len(r, i) + 1, sizeof(double)))) return -1;
  return 0;
}

int record_write(int fd, const record_t *r) {
  record_head h = {.magic = "ddprec2", .iterations = r->iterations, .nb = r->nb, .ranks = r->ranks, .finished = r->finished,
                   .expected = r->expected, .messages = r->messages, .nat = r->nat};
  if (write_all(fd, &h, sizeof h)) return -1;
  for (size_t i = 0; i < NFIELDS; i++) {
    field_head fh = {.count = (int64_t)field_len(r, i)};
    snprintf(fh.name, sizeof fh.name, "%s", fields[i].name);
    if (write_all(fd, &fh, sizeof fh) || write_all(fd, *field_cptr(r, i), field_len(r, i) * sizeof(double))) return -1;
  }
  field_head sh = {.name = "spans", .count = r->nspans};
  if (write_all(fd, &sh, sizeof sh) || (r->nspans && write_all(fd, r->spans, (size_t)r->nspans * sizeof *r->spans))) return -1;
  return 0;
}

int record_read(int fd, record_t *r, int K, int nb, int ranks, long nat, err_t *e) {
  record_head h;
  if (read_all(fd, &h, sizeof h)) return err_set(e, ERR_SIM, "the simulation engine sent no record");
  if (memcmp(h.magic, "ddprec2", 8) != 0 || h.iterations != K || h.nb != nb || h.ranks != ranks || h.nat != nat)
    return err_set(e, ERR_SIM, "the simulation engine sent a record for another plan");
  if (record_alloc(r, K, nb, ranks, nat)) return err_set(e, ERR_NOMEM, "out of memory");
  r->finished = h.finished;
  r->expected = h.expected;
  r->messages = (long)h.messages;
  for (size_t i = 0; i < NFIELDS; i++) {
    field_head fh;
    if (read_all(fd, &fh, sizeof fh) || strncmp(fh.name, fields[i].name, sizeof fh.name) != 0 ||
        fh.count != (int64_t)field_len(r, i))
      return err_set(e, ERR_SIM, "the simulation engine's record lacks field %s", fields[i].name);
    if (read_all(fd, *field_ptr(r, i), field_len(r, i) * sizeof(double)))
      return err_set(e, ERR_SIM, "the simulation engine's record is cut short in field %s", fields[i].name);
  }
  field_head sh;
  if (read_all(fd, &sh, sizeof sh) || strncmp(sh.name, "spans", sizeof sh.name) != 0 || sh.count < 0 ||
      (uint64_t)sh.count > SIZE_MAX / sizeof *r->spans)
    return err_set(e, ERR_SIM, "the simulation engine's record lacks its spans");
  r->nspans = (long)sh.count;
  if (r->nspans && !(r->spans = malloc((size_t)r->nspans * sizeof *r->spans))) return err_set(e, ERR_NOMEM, "out of memory");
  if (r->nspans && read_all(fd, r->spans, (size_t)r->nspans * sizeof *r->spans))
    return err_set(e, ERR_SIM, "the simulation engine's record is cut short in its spans");
  return ERR_OK;
}

void record_free(record_t *r) {
  if (!r) return;
  for (size_t i = 0; i < NFIELDS; i++) {
    free(*field_ptr(r, i));
    *field_ptr(r, i) = NULL;
  }
  free(r->spans);
  r->spans = NULL;
  r->nspans = 0;
}
