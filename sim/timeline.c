#include "timeline.h"

#include <stdlib.h>
#include <string.h>

int timeline_add(sim_timeline *t, const timeline_span *s) {
  if (t->n == t->cap) {
    long cap = t->cap ? 2 * t->cap : 256;
    timeline_span *g = realloc(t->spans, (size_t)cap * sizeof *g);
    if (!g) return -1;
    t->spans = g;
    t->cap = cap;
  }
  t->spans[t->n++] = *s;
  return 0;
}

sim_timeline *timeline_new(void) { return calloc(1, sizeof(sim_timeline)); }

double *timeline_dup_d(const double *src, int n) {
  double *d = calloc((size_t)(n > 0 ? n : 1), sizeof *d);
  if (d && n > 0) memcpy(d, src, (size_t)n * sizeof *d);
  return d;
}

int *timeline_dup_i(const int *src, int n) {
  int *d = calloc((size_t)(n > 0 ? n : 1), sizeof *d);
  if (d && n > 0) memcpy(d, src, (size_t)n * sizeof *d);
  return d;
}

void timeline_free(sim_timeline *t) {
  if (!t) return;
  free(t->spans);
  free(t->op_s);
  free(t->op_seg);
  free(t->seg_s);
  free(t->seg_copy_s);
  free(t->ready_seg);
  free(t->pieces);
  free(t->colls);
  free(t);
}

void timeline_divide(const sim_timeline *t, int seg, double extra_s, double a_s, double b_s,
                     void (*fn)(void *user, int op, double start_s, double end_s), void *user) {
  double total = extra_s, cum = 0;
  for (int o = 0; o < t->nops; o++)
    if (t->op_seg[o] == seg) total += t->op_s[o];
  if (total <= 0) return;
  double scale = (b_s - a_s) / total;
  for (int o = 0; o < t->nops; o++) {
    if (t->op_seg[o] != seg) continue;
    double s0 = a_s + cum * scale;
    cum += t->op_s[o];
    double s1 = extra_s > 0 || cum < total ? a_s + cum * scale : b_s;
    fn(user, o, s0, s1 < s0 ? s0 : s1);
  }
  if (extra_s > 0) fn(user, -1, a_s + cum * scale, b_s);
}

const char *timeline_kind_name(int kind) {
  static const char *const names[TIMELINE_KIND_COUNT] = {
      [TIMELINE_ITERATION] = "iteration",         [TIMELINE_INPUT_WAIT] = "waiting for input",
      [TIMELINE_H2D] = "host-to-device copy",     [TIMELINE_BROADCAST] = "broadcast buffers",
      [TIMELINE_FORWARD] = "forward",             [TIMELINE_SEGMENT] = "backward segment",
      [TIMELINE_FINAL_WAIT] = "waiting for all-reduces", [TIMELINE_COPY_BACK] = "copy buckets back to gradients",
      [TIMELINE_OPTIMIZER] = "optimizer",         [TIMELINE_HOOK_PRE] = "compress hook cast",
      [TIMELINE_COLLECTIVE] = "all-reduce",       [TIMELINE_HOOK_POST] = "compress hook cast back",
      [TIMELINE_LOAD] = "load batch",             [TIMELINE_READY] = "bucket ready",
      [TIMELINE_DP_SCATTER] = "scatter inputs",   [TIMELINE_DP_REPLICATE] = "replicate parameters",
      [TIMELINE_DP_GATHER] = "gather outputs",    [TIMELINE_DP_BACKWARD] = "backward",
      [TIMELINE_DP_REDUCE] = "reduce gradients",  [TIMELINE_GIL_HELD] = "GIL: replicas take turns launching",
      [TIMELINE_BACKWARD_REST] = "backward after the last gradient",
      [TIMELINE_HOST_FORWARD] = "host: issuing forward", [TIMELINE_HOST_BACKWARD] = "host: issuing backward",
      [TIMELINE_HOST_TAIL] = "host: issuing the optimizer", [TIMELINE_HOST_SYNC] = "host: waiting for the GPU",
      [TIMELINE_FSDP_OPS] = "FSDP unit's ops",  [TIMELINE_FSDP_COPY] = "FSDP copy",
      [TIMELINE_FSDP_WAIT] = "waiting for an FSDP collective", [TIMELINE_FSDP_COLL] = "FSDP collective",
  };
  return kind >= 0 && kind < TIMELINE_KIND_COUNT && names[kind] ? names[kind] : "?";
}
