/* Bucket assignment against hand-derived cases and the full mLSTM-4k. */
#include <stdlib.h>
#include <string.h>

#include "bucket.h"
#include "check.h"
#include "data.h"
#include "model.h"
#include "reducer.h"

#define MB (1024u * 1024u)

/* "0,1|2|3,4" style rendering of a plan: tensors of each bucket in reduction order. */
static void render(const bucket_plan *p, char *buf, size_t len) {
  buf[0] = '\0';
  for (int b = 0; b < p->n; b++) {
    if (b) strncat(buf, "|", len - strlen(buf) - 1);
    for (int k = 0; k < p->b[b].ntensors; k++) {
      char t[16];
      snprintf(t, sizeof t, "%s%d", k ? "," : "", p->b[b].tensors[k]);
      strncat(buf, t, len - strlen(buf) - 1);
    }
  }
}

static void expect(const char *what, int n, const size_t *bytes, const int *keys, const int *order, size_t first,
                   size_t cap, const char *want) {
  bucket_plan p;
  err_t e;
  char got[512] = "";
  int rc = bucket_assign(n, bytes, keys, order, first, cap, &p, &e);
  if (rc == 0) render(&p, got, sizeof got);
  CHECK(rc == 0 && strcmp(got, want) == 0, "%s: got %s, want %s", what, rc ? e.msg : got, want);
  bucket_plan_free(&p);
}

int main(void) {
  int one[8] = {0};
  /* Caps: first 1 MiB, then 4 MiB. Sizes in registration order. */
  {
    /* 0.5 MiB + 0.6 MiB closes the first bucket (>= 1 MiB); then 3 + 2 MiB closes a 4 MiB bucket
     * exceeding the cap by its last tensor; the 1 MiB leftover is a bucket of its own. Sorted by
     * smallest index then reversed: last-registered reduce first. */
    size_t b[] = {MB / 2, MB / 2 + MB / 10, 3 * MB, 2 * MB, MB};
    expect("first-bucket limit, overflow by last tensor, leftover", 5, b, one, NULL, MB, 4 * MB, "4|2,3|0,1");
  }
  {
    /* A tensor larger than the cap is a bucket alone once it arrives with an empty bucket. */
    size_t b[] = {10 * MB, 100, 200, 9 * MB};
    expect("tensor larger than the cap", 4, b, one, NULL, MB, 4 * MB, "1,2,3|0");
  }
  {
    /* Exactly the limit closes the bucket (>=). */
    size_t b[] = {MB, 4 * MB, 1};
    expect("size equal to the limit closes", 3, b, one, NULL, MB, 4 * MB, "2|1|0");
  }
  {
    /* Two dtypes: each has its own open bucket and its own limit sequence [first, cap, ...]. */
    size_t b[] = {MB / 2, MB / 2, MB / 2, MB / 2, 3 * MB, 3 * MB};
    int k[] = {0, 1, 0, 1, 0, 1};
    expect("two dtypes, own buckets and limits", 6, b, k, NULL, MB, 4 * MB, "5|4|1,3|0,2");
  }
  {
    /* Rebuilt: walk in gradient-ready order, no sort, no reversal. */
    size_t b[] = {MB / 2, MB / 2 + MB / 10, 3 * MB, 2 * MB, MB};
    int order[] = {4, 3, 2, 1, 0};
    expect("rebuilt in ready order", 5, b, one, order, MB, 4 * MB, "4|3,2|1,0");
    int order2[] = {2, 0, 4, 1, 3};
    expect("rebuilt, interleaved ready order", 5, b, one, order2, MB, 4 * MB, "2|0,4,1,3");
  }
  {
    size_t b[] = {1, 2};
    int bad[] = {0, 0};
    bucket_plan p;
    err_t e;
    CHECK(bucket_assign(2, b, one, bad, MB, MB, &p, &e) == ERR_INPUT, "a ready order that is not a permutation is refused");
    CHECK(bucket_assign(2, b, one, NULL, 0, MB, &p, &e) == ERR_INPUT, "a zero cap is refused");
    CHECK(bucket_mb_to_bytes(25) == 26214400u && bucket_mb_to_bytes(0.3) == 314572u,
          "MB converted as int(mb * 1024 * 1024)");
  }

  /* Before the C++ Reducer (docs/reducer.md), a small model by hand: a 0.5 MiB, b 0.75, c 0.25,
   * d 1.5 MiB, e 4 KiB (fp32), gradients ready e, d, c, b, a.
   * 0.2/0.3 (a new bucket once 1 MiB is reached): {a,b} {c,d} {e}, reduced as they become ready
   * (their last gradients at positions 4, 2, 0): e | c,d | a,b.
   * 0.4 with gloo (_take_tensors: close before a tensor that would pass 1 MiB): {a} {b,c} (exactly
   * 1 MiB stays open) {d} (alone, over) {e}; ready at 4, 3, 1, 0: e | d | b,c | a.
   * 0.4 with nccl: 256 MiB, one bucket after backward. 1.0 (take_tensors, >= cap, reduced from the
   * last), bucket_cap_mb 2: {a,b,c,d} {e}: e | a,b,c,d. */
  {
    const char *text = "ddpsim-model 1\nname tiny\nbatch 1\ntokens 1 tokens\nprecision fp32\n"
                       "param a 131072\nparam b 196608\nparam c 65536\nparam d 393216\nparam e 1024\n"
                       "backward\newise g1 elems=1 arrays=1 ready=e,d\newise g2 elems=1 arrays=1 ready=c,b\n"
                       "ewise g3 elems=1 arrays=1 ready=a\n";
    struct {
      int version;
      reducer_pg pg;
      double cap;
      const char *want;
    } rows[] = {{2, REDUCER_PG_GLOO, 0, "4|2,3|0,1"},   {3, REDUCER_PG_GLOO, 0, "4|2,3|0,1"},
                {4, REDUCER_PG_GLOO, 0, "4|3|1,2|0"},   {4, REDUCER_PG_NCCL, 0, "0,1,2,3,4"},
                {100, REDUCER_PG_NCCL, 2, "4|0,1,2,3"}, {100, REDUCER_PG_NCCL, 0, "0,1,2,3,4"}};
    model_t *m = NULL;
    err_t e;
    int rc = model_parse(text, "tiny.model", &m, &e);
    CHECK(rc == 0, "tiny model parses: %s", rc ? e.msg : "ok");
    for (size_t i = 0; m && i < sizeof rows / sizeof rows[0]; i++) {
      reducer_knobs k = {.version = rows[i].version, .pg = rows[i].pg, .bucket_cap_mb = rows[i].cap};
      reducer_iter it;
      bucket_walk w;
      bucket_plan p;
      char got[512] = "";
      reducer_iteration(&k, 0, &it);
      reducer_walk(&it, &w);
      rc = bucket_plan_walk(m, MODEL_FP32, &w, &p, &e);
      if (rc == 0) render(&p, got, sizeof got);
      CHECK(rc == 0 && strcmp(got, rows[i].want) == 0, "PyTorch %d.%d (%s, cap %g): got %s, want %s", rows[i].version / 100,
            rows[i].version % 100, rows[i].pg == REDUCER_PG_GLOO ? "gloo" : "nccl", rows[i].cap, rc ? e.msg : got, rows[i].want);
      bucket_plan_free(&p);
    }
    model_destroy(m);
    /* 0.2/0.3 refuse a model of two types; 0.4 buckets each type apart. */
    rc = model_parse("ddpsim-model 1\nname two\nbatch 1\ntokens 1 tokens\nprecision fp16\nparam a 10 fp32\nparam b 10\n"
                     "backward\newise g elems=1 arrays=1 ready=b,a\n",
                     "two.model", &m, &e);
    if (rc == 0) {
      reducer_knobs k = {.version = 3, .pg = REDUCER_PG_GLOO};
      reducer_iter it;
      bucket_walk w;
      bucket_plan p;
      reducer_iteration(&k, 0, &it);
      reducer_walk(&it, &w);
      rc = bucket_plan_walk(m, MODEL_FP16, &w, &p, &e);
      CHECK(rc == ERR_INPUT && strstr(e.msg, "same type"), "0.3: two types refused (%s)", rc ? e.msg : "accepted");
      k.version = 4;
      reducer_iteration(&k, 0, &it);
      reducer_walk(&it, &w);
      rc = bucket_plan_walk(m, MODEL_FP16, &w, &p, &e);
      CHECK(rc == 0 && p.n == 2, "0.4: a bucket per type (%d)", rc ? -1 : p.n);
      bucket_plan_free(&p);
      model_destroy(m);
    } else {
      CHECK(0, "two-type model parses: %s", e.msg);
    }
  }

  /* The full mLSTM-4k, fp32, 25 MB: hand-derived from the registration order. encoder (64 KiB) +
   * decoder.weight (4 MiB) reach the 1 MiB first limit; decoder.bias ... w_hh_v (256 MiB) reach 25 MB;
   * the rest is the leftover. Reversed: [w_mih_g .. w_mhh_v], [decoder.bias .. w_hh_v], [encoder,
   * decoder.weight]. */
  {
    char path[1024];
    err_t e;
    model_t *m = NULL;
    int rc = data_resolve(DATA_MODEL, "mlstm-4k", path, sizeof path, &e);
    if (rc == 0) rc = model_load(path, &m, &e);
    CHECK(rc == 0, "load bundled mlstm-4k: %s", rc ? e.msg : "ok");
    if (m) {
      CHECK(model_total_params(m) == 86335744L, "mlstm-4k has 86,335,744 parameters (got %ld)", model_total_params(m));
      bucket_plan p;
      char got[512] = "";
      rc = bucket_plan_for_model(m, MODEL_FP32, 1, 25, 0, &p, &e);
      if (rc == 0) render(&p, got, sizeof got);
      CHECK(rc == 0 && strcmp(got, "9,10,11,12|2,3,4,5,6,7,8|0,1") == 0, "mlstm-4k fp32 25 MB: %s", got);
      CHECK(rc == 0 && p.b[0].bytes == 4u * (4096 + 4096 * 64 + 4096 + 4096u * 4096),
            "mlstm-4k first reduced bucket holds %zu bytes", rc ? 0 : p.b[0].bytes);
      bucket_plan_free(&p);
      /* Rebuilt in autograd's ready order: decoder.bias, decoder.weight (closes the 1 MiB first
       * bucket), b_hh, b_ih, w_mhh_g, w_mhh_v (closes 25 MB), w_mih_g, w_mih_v, w_hh_g, w_hh_v
       * (closes), w_ih_g, w_ih_v, encoder (leftover). */
      rc = bucket_plan_for_model(m, MODEL_FP32, 1, 25, 1, &p, &e);
      if (rc == 0) render(&p, got, sizeof got);
      CHECK(rc == 0 && strcmp(got, "2,1|4,3,11,12|9,10,7,8|5,6,0") == 0, "mlstm-4k fp32 25 MB rebuilt: %s", got);
      bucket_plan_free(&p);
      rc = bucket_plan_flat(m, MODEL_FP16, &p, &e);
      CHECK(rc == 0 && p.n == 1 && p.b[0].bytes == 2u * 86335744u, "flat: one fp16 bucket of every gradient");
      bucket_plan_free(&p);
      model_destroy(m);
    }
  }
  return check_status();
}
