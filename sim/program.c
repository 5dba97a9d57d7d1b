#include "program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int prog_init(prog_t *p, int nslots, err_t *e) {
  memset(p, 0, sizeof *p);
  p->nslots = nslots < PROG_NSTATS ? PROG_NSTATS : nslots;
  if (prog_stream_add(p, PROG_STREAM_COMPUTE) != 0) return err_set(e, ERR_NOMEM, "out of memory");
  return ERR_OK;
}

void prog_free(prog_t *p) {
  if (!p) return;
  for (int s = 0; s < p->nstreams; s++) free(p->streams[s].ins);
  free(p->streams);
  memset(p, 0, sizeof *p);
}

int prog_stream_add(prog_t *p, prog_stream_kind kind) {
  prog_stream *s = realloc(p->streams, (size_t)(p->nstreams + 1) * sizeof *s);
  if (!s) return -1;
  p->streams = s;
  memset(&s[p->nstreams], 0, sizeof *s);
  s[p->nstreams].kind = kind;
  s[p->nstreams].track = -1;
  return p->nstreams++;
}

int prog_emit(prog_t *p, int s, const prog_instr *in) {
  prog_stream *st = &p->streams[s];
  if (st->n == st->cap) {
    int cap = st->cap ? 2 * st->cap : 16;
    prog_instr *ins = realloc(st->ins, (size_t)cap * sizeof *ins);
    if (!ins) return -1;
    st->ins = ins;
    st->cap = cap;
  }
  st->ins[st->n++] = *in;
  return 0;
}

static int slot_ok(const prog_t *p, int slot) { return slot >= -1 && slot < p->nslots; }

int prog_finish(prog_t *p, err_t *e) {
  p->nevents = p->ncoll = p->shares_gpu = 0;
  for (int s = 0; s < p->nstreams; s++)
    for (int i = 0; i < p->streams[s].n; i++) {
      const prog_instr *in = &p->streams[s].ins[i];
      if ((in->op == PROG_RECORD || in->op == PROG_WAIT) && in->ev >= p->nevents) p->nevents = in->ev + 1;
      if (in->op == PROG_COLL && in->coll >= p->ncoll) p->ncoll = in->coll + 1;
      if (in->shares) p->shares_gpu = 1;
    }
  int rc = ERR_OK, ne = p->nevents, nc = p->ncoll;
  int *rec = calloc((size_t)ne + 1, sizeof *rec), *wait = calloc((size_t)ne + 1, sizeof *wait);
  int *coll = calloc((size_t)nc + 1, sizeof *coll);
  if (!rec || !wait || !coll) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto done;
  }
  if (p->nstreams < 1 || p->streams[0].kind != PROG_STREAM_COMPUTE) {
    rc = err_set(e, ERR_INPUT, "internal: a program's stream 0 is its compute stream");
    goto done;
  }
  for (int s = 0; s < p->nstreams && !rc; s++) {
    const prog_stream *st = &p->streams[s];
    for (int i = 0; i < st->n && !rc; i++) {
      const prog_instr *in = &st->ins[i];
      int compute_only = in->op == PROG_BEGIN || in->op == PROG_INPUT || in->op == PROG_MARK || in->op == PROG_TAIL;
      if (!slot_ok(p, in->dur) || !slot_ok(p, in->lag) || (in->op == PROG_TAIL && (!slot_ok(p, in->a) || !slot_ok(p, in->b) ||
                                                                                      in->a < 0 || in->b < 0)))
        rc = err_set(e, ERR_INPUT, "internal: stream %d instruction %d names a slot out of range", s, i);
      else if (compute_only != 0 && st->kind != PROG_STREAM_COMPUTE)
        rc = err_set(e, ERR_INPUT, "internal: stream %d instruction %d belongs on the compute stream", s, i);
      else if (in->op == PROG_COLL && (st->kind != PROG_STREAM_NCCL || in->coll < 0 || coll[in->coll]++))
        rc = err_set(e, ERR_INPUT, "internal: stream %d instruction %d: collective %d off an NCCL stream or twice", s, i, in->coll);
      else if ((in->op == PROG_RECORD || in->op == PROG_WAIT) && in->ev < 0)
        rc = err_set(e, ERR_INPUT, "internal: stream %d instruction %d names no event", s, i);
      else if (in->op == PROG_RECORD && rec[in->ev]++)
        rc = err_set(e, ERR_INPUT, "internal: event %d is recorded twice", in->ev);
      else if (in->op == PROG_WAIT && wait[in->ev]++)
        rc = err_set(e, ERR_INPUT, "internal: event %d is waited for twice", in->ev);
      else if (!(in->mem >= 0 && in->mem <= 1) || (in->shares && in->op != PROG_COMPUTE))
        rc = err_set(e, ERR_INPUT, "internal: stream %d instruction %d: a memory-bound share is 0 to 1, sharing is COMPUTE's", s, i);
      else if (in->op == PROG_BEGIN && i != 0)
        rc = err_set(e, ERR_INPUT, "internal: BEGIN is not the compute stream's first instruction");
      else if (in->op == PROG_TAIL && i != st->n - 1)
        rc = err_set(e, ERR_INPUT, "internal: TAIL is not the compute stream's last instruction");
    }
  }
  if (!rc && (p->streams[0].n < 2 || p->streams[0].ins[0].op != PROG_BEGIN || p->streams[0].ins[p->streams[0].n - 1].op != PROG_TAIL))
    rc = err_set(e, ERR_INPUT, "internal: the compute stream starts with BEGIN and ends with TAIL");
  for (int v = 0; v < ne && !rc; v++)
    if (!rec[v] && wait[v]) rc = err_set(e, ERR_INPUT, "internal: event %d is waited for but never recorded", v);
  /* One stream records an event and another waits for it. */
  for (int s = 0; s < p->nstreams && !rc; s++)
    for (int i = 0; i < p->streams[s].n; i++)
      if (p->streams[s].ins[i].op == PROG_RECORD) rec[p->streams[s].ins[i].ev] = s + 1;
  for (int s = 0; s < p->nstreams && !rc; s++)
    for (int i = 0; i < p->streams[s].n && !rc; i++)
      if (p->streams[s].ins[i].op == PROG_WAIT && rec[p->streams[s].ins[i].ev] == s + 1)
        rc = err_set(e, ERR_INPUT, "internal: stream %d waits for its own event %d", s, p->streams[s].ins[i].ev);
done:
  free(rec);
  free(wait);
  free(coll);
  return rc;
}

long prog_at_index(const prog_t *p, int s, int i) {
  long k = 0;
  for (int q = 0; q < s; q++) k += p->streams[q].n;
  return k + i;
}

long prog_at_count(const prog_t *p) { return prog_at_index(p, p->nstreams, 0); }

static const char *const op_names[] = {"begin", "input", "sleep", "compute", "mark", "record", "wait", "take_cores", "give_cores",
                                       "coll", "tail"};
_Static_assert(sizeof op_names / sizeof *op_names == PROG_TAIL + 1, "a name for every instruction");

int prog_write(FILE *f, const prog_t *p, err_t *e) {
  fprintf(f, "# program: %d streams, %d events, %d collectives, %d values per rank and iteration\n", p->nstreams, p->nevents,
          p->ncoll, p->nslots);
  fprintf(f, "# stream kind index op sync span index event coll slot seconds lag_slot\n");
  for (int s = 0; s < p->nstreams; s++)
    for (int i = 0; i < p->streams[s].n; i++) {
      const prog_instr *in = &p->streams[s].ins[i];
      char span[48]; /* the span's name as one word */
      snprintf(span, sizeof span, "%s", in->span >= 0 ? timeline_kind_name(in->span) : "-");
      for (char *c = span; *c; c++)
        if (*c == ' ') *c = '_';
      fprintf(f, "stream %d %s %d %s %d %s %d %d %d %d %.9g %d\n", s, p->streams[s].kind == PROG_STREAM_COMPUTE ? "compute" : "nccl", i,
              op_names[in->op], in->sync, span, in->index, in->ev, in->coll, in->dur, in->dur >= 0 ? 0.0 : in->dur_s, in->lag);
    }
  if (ferror(f)) return err_set(e, ERR_IO, "cannot write the program");
  return ERR_OK;
}
