/* The Reducer's table (sim/reducer.h, docs/reducer.md), row by row: which layout, which limits and
 * which iteration, per release and knobs. tests/torch/test_reducer.py checks the 2.15 row against
 * real PyTorch; the other rows are checked here against the sources docs/reducer.md cites. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "reducer.h"

#define MIB ((size_t)1 << 20)

static reducer_iter iter(int version, double cap, int fup, int sg, int k) {
  reducer_knobs kn = {.version = version, .bucket_cap_mb = cap, .find_unused_parameters = fup, .static_graph = sg};
  reducer_iter it;
  reducer_iteration(&kn, k, &it);
  return it;
}

static int limits(const reducer_iter *it, size_t first, size_t cap) {
  return it->nlimits == 2 && it->limits[0] == first && it->limits[1] == cap;
}

static int single(const reducer_iter *it) { return it->nlimits == 1 && it->limits[0] == SIZE_MAX; }

static int steady(int version, int fup, int sg) {
  reducer_knobs kn = {.version = version, .find_unused_parameters = fup, .static_graph = sg};
  return reducer_steady_iteration(&kn);
}

int main(void) {
  reducer_iter a, b;
  /* 1.1-1.5: construction-time [1 MiB, cap] for ever. */
  a = iter(105, 0, 0, 0, 1), b = iter(105, 5, 0, 0, 0);
  CHECK(steady(105, 0, 0) == 1 && a.layout == REDUCER_CONSTRUCTION && limits(&a, MIB, 25 * MIB) &&
            b.layout == REDUCER_CONSTRUCTION && limits(&b, MIB, 5 * MIB) && !a.delayed,
        "1.5: construction-time buckets, limits [1 MiB, cap], never rebuilt");
  /* 1.6-1.11: construction in iteration 1, rebuilt [1 MiB, cap] from 2; find_unused: never. */
  a = iter(108, 10, 0, 0, 1), b = iter(108, 10, 0, 0, 0);
  CHECK(steady(108, 0, 0) == 2 && a.layout == REDUCER_CONSTRUCTION && limits(&a, MIB, 10 * MIB) &&
            b.layout == REDUCER_REBUILT && limits(&b, MIB, 10 * MIB),
        "1.8: construction-time in iteration 1, rebuilt from iteration 2");
  CHECK(steady(108, 1, 0) == 1 && iter(108, 10, 1, 0, 0).layout == REDUCER_CONSTRUCTION,
        "1.8, find_unused_parameters: construction-time for ever");
  /* static_graph (1.9+): iteration 1 delayed, 2 construction, rebuilt from 3. */
  a = iter(110, 0, 0, 1, 1), b = iter(110, 0, 0, 1, 2);
  CHECK(steady(110, 0, 1) == 3 && a.delayed && a.layout == REDUCER_CONSTRUCTION && !single(&a) && !b.delayed &&
            b.layout == REDUCER_CONSTRUCTION && iter(110, 0, 0, 1, 3).layout == REDUCER_REBUILT,
        "1.10, static_graph: iteration 1 all after backward, 2 construction-time, rebuilt from 3");
  CHECK(steady(110, 1, 1) == 3, "static_graph rebuilds even with find_unused_parameters");
  /* 1.12+: one bucket per dtype in iteration 1 without find_unused_parameters. */
  a = iter(113, 0, 0, 0, 1), b = iter(113, 0, 1, 0, 1);
  CHECK(single(&a) && !a.delayed && limits(&b, MIB, 25 * MIB) && b.layout == REDUCER_CONSTRUCTION,
        "1.13: iteration 1 one bucket per dtype; with find_unused_parameters construction-time [1 MiB, 25 MiB]");
  a = iter(113, 0, 0, 1, 1), b = iter(113, 0, 0, 1, 2);
  CHECK(single(&a) && a.delayed && single(&b) && !b.delayed, "1.13, static_graph: iterations 1 and 2 one bucket");
  /* ProcessGroupNCCL's event calls per all-reduce and at the final wait (docs/reducer.md). */
  {
    int v[] = {100, 101, 107, 108, 215}, want[][2] = {{0, 0}, {5, 1}, {5, 1}, {8, 1}, {8, 1}}, ok = 1;
    for (int i = 0; i < 5; i++) {
      int is, wt;
      reducer_pg_nccl_calls(v[i], &is, &wt);
      ok = ok && is == want[i][0] && wt == want[i][1];
    }
    CHECK(ok, "ProcessGroupNCCL's event calls: none before 1.1, 5 per call and 1 at the wait to 1.7, 8 and 1 from 1.8");
  }
  /* 2.4: a given cap caps the first bucket, construction and rebuild. */
  a = iter(203, 5, 0, 0, 0), b = iter(204, 5, 0, 0, 0);
  CHECK(limits(&a, MIB, 5 * MIB) && limits(&b, 5 * MIB, 5 * MIB), "2.3 keeps the 1 MiB first bucket for a given cap; 2.4 caps it");
  a = iter(204, 0, 0, 0, 0), b = iter(204, 5, 1, 0, 1);
  CHECK(limits(&a, MIB, 25 * MIB) && limits(&b, 5 * MIB, 5 * MIB), "2.4: the default keeps 1 MiB; find_unused with a cap: [cap]");
  /* 2.12: [first, cap] only when first < cap. */
  reducer_knobs kn = {.version = 212, .first_bucket_mb = 50};
  reducer_iteration(&kn, 0, &a);
  kn.version = 211;
  reducer_iteration(&kn, 0, &b);
  CHECK(limits(&a, 25 * MIB, 25 * MIB) && limits(&b, 50 * MIB, 25 * MIB),
        "a first bucket above the cap: 2.12 uses [cap], 2.11 [first, cap]");
  /* 2.11: bucket_cap_mb_list, iteration 1 included. */
  reducer_knobs l = {.version = 211, .ncap_list = 3, .cap_list_mb = {1, 10, 50}};
  reducer_iteration(&l, 1, &a);
  reducer_iteration(&l, 0, &b);
  CHECK(a.layout == REDUCER_CONSTRUCTION && a.nlimits == 3 && a.limits[1] == 10 * MIB && b.layout == REDUCER_REBUILT &&
            b.nlimits == 3 && b.limits[2] == 50 * MIB,
        "2.11 bucket_cap_mb_list: the list's limits from iteration 1, then rebuilt with them");
  /* What each release lacks is refused. */
  err_t e;
  reducer_knobs sg = {.version = 108, .static_graph = 1};
  CHECK(reducer_check(&sg, 0, 0, &e) == ERR_INPUT && strstr(e.msg, "1.9"), "static_graph before 1.9: %s", e.msg);
  CHECK(reducer_check(&(reducer_knobs){.version = 106}, 1, 0, &e) == ERR_INPUT, "gradient_as_bucket_view before 1.7");
  CHECK(reducer_check(&(reducer_knobs){.version = 107}, 0, 1, &e) == ERR_INPUT, "fp16_compress_hook before 1.8");
  CHECK(reducer_check(&(reducer_knobs){.version = 109}, 0, 2, &e) == ERR_INPUT, "bf16_compress_hook before 1.10");
  CHECK(reducer_check(&(reducer_knobs){.version = 210, .ncap_list = 1, .cap_list_mb = {5}}, 0, 0, &e) == ERR_INPUT,
        "bucket_cap_mb_list before 2.11");
  CHECK(reducer_check(&(reducer_knobs){.version = 0, .ncap_list = 1, .cap_list_mb = {1e300}}, 0, 0, &e) == ERR_INPUT,
        "a list entry beyond 1e9 MB");
  CHECK(reducer_check(&(reducer_knobs){.version = 0}, 1, 2, &e) == ERR_OK, "the latest release has them all");
  /* Versions. */
  int v = 0;
  CHECK(reducer_version_parse("2.5", &v, &e) == ERR_OK && v == 205, "2.5 -> 205");
  CHECK(reducer_version_parse("1.13.1", &v, &e) == ERR_OK && v == 113, "1.13.1 -> 113");
  const char *bad[] = {"", "2", "2.", "2.5.", "2.5x", "x.5", "0.1", "3.0", "2.16", "-1.5", "2.100", NULL};
  for (int i = 0; bad[i]; i++) CHECK(reducer_version_parse(bad[i], &v, &e) == ERR_INPUT, "'%s' refused: %s", bad[i], e.msg);
  /* Releases before DDP's C++ Reducer (docs/reducer.md, "Before the C++ Reducer"): Python DDP. */
  CHECK(reducer_version_parse("0.3", &v, &e) == ERR_OK && v == 3, "0.3 -> 3");
  CHECK(reducer_check(&(reducer_knobs){.version = 3}, 0, 0, &e) == ERR_INPUT && strstr(e.msg, "--backend nccl") &&
            strstr(e.msg, "only with the gloo backend"),
        "DDP under 0.3 with nccl -> %s", e.msg);
  CHECK(reducer_check(&(reducer_knobs){.version = 2, .pg = REDUCER_PG_GLOO}, 0, 0, &e) == ERR_OK, "DDP under 0.2 with gloo");
  CHECK(reducer_check(&(reducer_knobs){.version = 4, .pg = REDUCER_PG_MPI}, 0, 0, &e) == ERR_INPUT && strstr(e.msg, "--backend mpi"),
        "DDP under 0.4 with mpi -> %s", e.msg);
  CHECK(reducer_check(&(reducer_knobs){.version = 4}, 0, 0, &e) == ERR_OK &&
            reducer_check(&(reducer_knobs){.version = 100, .pg = REDUCER_PG_GLOO}, 0, 0, &e) == ERR_OK,
        "DDP under 0.4 with nccl, 1.0 with gloo");
  CHECK(reducer_check(&(reducer_knobs){.version = 4, .pg = REDUCER_PG_GLOO, .bucket_cap_mb = 5}, 0, 0, &e) == ERR_INPUT &&
            strstr(e.msg, "--bucket-cap-mb") && reducer_check(&(reducer_knobs){.version = 100, .bucket_cap_mb = 5}, 0, 0, &e) == ERR_OK,
        "bucket_cap_mb from 1.0 -> %s", e.msg);
  CHECK(reducer_check(&(reducer_knobs){.version = 100, .first_bucket_mb = 2}, 0, 0, &e) == ERR_INPUT &&
            reducer_check(&(reducer_knobs){.version = 100, .find_unused_parameters = 1}, 0, 0, &e) == ERR_INPUT,
        "the first bucket's size and find_unused_parameters from 1.1");
  CHECK(reducer_check(&(reducer_knobs){.version = 3, .pg = REDUCER_PG_GLOO, .no_broadcast_buffers = 1}, 0, 0, &e) == ERR_INPUT &&
            strstr(e.msg, "--no-broadcast-buffers") &&
            reducer_check(&(reducer_knobs){.version = 4, .no_broadcast_buffers = 1}, 0, 0, &e) == ERR_OK,
        "broadcast_buffers from 0.4");
  CHECK(reducer_buffer_chunk_bytes(2) == 0 && reducer_buffer_chunk_bytes(3) == SIZE_MAX && reducer_buffer_chunk_bytes(4) == 10 * MIB &&
            reducer_buffer_chunk_bytes(100) == 250 * MIB && reducer_buffer_chunk_bytes(0) == 250 * MIB,
        "buffers broadcast: none in 0.2, one flat tensor in 0.3, 10 MiB chunks in 0.4, 250 MiB from 1.0");
  CHECK(reducer_default_pg(2) == REDUCER_PG_GLOO && reducer_default_pg(3) == REDUCER_PG_GLOO && reducer_default_pg(4) == REDUCER_PG_NCCL &&
            reducer_default_pg(0) == REDUCER_PG_NCCL,
        "the process group when none is named: gloo before 0.4, nccl after");
  {
    reducer_knobs k = {.version = 2, .pg = REDUCER_PG_GLOO};
    reducer_iteration(&k, 0, &a);
    CHECK(reducer_steady_iteration(&k) == 1 && a.layout == REDUCER_CONSTRUCTION && a.nlimits == 1 && a.limits[0] == MIB &&
              a.fit == BUCKET_FIT_REACH && a.order == BUCKET_ORDER_BY_READY && a.one_dtype && a.work == REDUCER_WORK_THREAD &&
              !a.delayed,
          "0.2: 1 MiB buckets closed once reached, one dtype, a reduction thread each, in the order they become ready");
    k.version = 4;
    reducer_iteration(&k, 1, &a);
    CHECK(a.nlimits == 1 && a.limits[0] == MIB && a.fit == BUCKET_FIT_BELOW && !a.one_dtype && a.work == REDUCER_WORK_THREAD,
          "0.4 with gloo: _take_tensors' 1 MiB buckets per dtype, reduction threads");
    k.pg = REDUCER_PG_NCCL;
    reducer_iteration(&k, 1, &a);
    CHECK(a.nlimits == 1 && a.limits[0] == 256 * MIB && a.fit == BUCKET_FIT_BELOW && a.order == BUCKET_ORDER_CLOSED && a.delayed &&
              a.work == REDUCER_WORK_AFTER,
          "0.4 with nccl: 256 MiB buckets all reduced after backward");
    k = (reducer_knobs){.version = 100};
    reducer_iteration(&k, 0, &a);
    b = iter(100, 10, 0, 0, 0);
    CHECK(a.nlimits == 1 && a.limits[0] == 25 * MIB && b.limits[0] == 10 * MIB && a.fit == BUCKET_FIT_REACH &&
              a.order == BUCKET_ORDER_CLOSED_REVERSED && a.work == REDUCER_WORK_QUEUED && !a.delayed,
          "1.0: bucket_cap_mb (25) buckets, no 1 MiB first bucket, reduced from the last, _queue_reduction");
    b = iter(101, 0, 0, 0, 0);
    CHECK(b.work == REDUCER_WORK_REDUCER && b.order == BUCKET_ORDER_SORTED_REVERSED && limits(&b, MIB, 25 * MIB),
          "1.1: the C++ Reducer");
  }
  CHECK(reducer_backward_gil(3) == 1 && reducer_backward_gil(4) == 0 && reducer_backward_gil(0) == 0 && reducer_backward_gil(215) == 0,
        "backward under the GIL before 0.4 (0.3 yes; 0.4, 2.15 and the default no)");
  char buf[16];
  CHECK(strcmp(reducer_version_name(0, buf, sizeof buf), "2.15") == 0 && strcmp(reducer_version_name(109, buf, sizeof buf), "1.9") == 0,
        "names: 0 is the latest, 2.15; 109 is 1.9");
  return check_status();
}
