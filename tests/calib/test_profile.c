/* One profile schema: `ddpcalib validate` (profilew_validate) refuses every profile ddpsim's loader
 * (profile_parse, sim/profile.h) refuses, with the very same message; it also accepts the halves
 * ddpcalib writes for merging, which ddpsim alone would not simulate. One line per check; exits 1
 * if any check fails. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "profile.h"
#include "profilew.h"

/* A whole profile with one part replaced: the fp32 gemm model, the nvlink link, and extra members
 * of compute, comm and the top level (each starts with a comma, or is empty). */
typedef struct {
  const char *what, *gemm, *link, *compute_extra, *comm_extra, *top_extra;
  const char *want; /* a part of the message both must give; NULL: both accept */
} variant;

#define GEMM_OK "{\"model\":\"roofline\",\"launch_s\":2.5e-6,\"peak_flops\":1.57e13,\"efficiency\":0.63,\"mem_bw_Bps\":9e11}"
#define LINK_OK "{\"lat_s\":3.4e-6,\"efficiency\":0.8}"

static void render(const variant *v, char *buf, size_t len) {
  snprintf(buf, len,
           "{\"format\":\"ddpsim-profile\",\"version\":1,\"name\":\"t\",\"provenance\":{\"kind\":\"test\"},"
           "\"compute\":{\"fp32\":{\"gemm\":%s,\"ewise\":{\"model\":\"roofline\",\"launch_s\":2.5e-6,"
           "\"mem_bw_Bps\":9e11}}%s},\"comm\":{\"links\":{\"nvlink\":%s}%s}%s}",
           v->gemm ? v->gemm : GEMM_OK, v->compute_extra ? v->compute_extra : "", v->link ? v->link : LINK_OK,
           v->comm_extra ? v->comm_extra : "", v->top_extra ? v->top_extra : "");
}

/* ddpsim's verdict on text (*rs, es) and ddpcalib validate's (*rc, ec), both naming `origin`. */
static void verdicts(const char *text, const char *origin, int part, int *rs, err_t *es, int *rc, err_t *ec) {
  profile_t *p = NULL;
  *rs = profile_parse(text, origin, &p, es);
  profile_destroy(p);
  cJSON *doc = cJSON_Parse(text);
  *rc = doc ? profilew_validate(doc, origin, part, ec) : -1;
  cJSON_Delete(doc);
}

/* Both verdicts on a whole profile: the same status and the same message. */
static void same_verdict(const variant *v) {
  char text[2048], what[2 * sizeof(err_t) + 256];
  render(v, text, sizeof text);
  err_t es = {{0}}, ec = {{0}};
  int rs, rc;
  verdicts(text, "p.json", PROFILE_WHOLE, &rs, &es, &rc, &ec);
  if (!v->want) {
    snprintf(what, sizeof what, "%s: ddpsim and ddpcalib validate both accept it (%s / %s)", v->what,
             rs ? es.msg : "ok", rc ? ec.msg : "ok");
    truth(what, rs == ERR_OK && rc == ERR_OK);
    return;
  }
  snprintf(what, sizeof what, "%s: ddpsim refuses it: %s", v->what, rs ? es.msg : "accepted");
  truth(what, rs == ERR_INPUT && strstr(es.msg, v->want));
  snprintf(what, sizeof what, "%s: ddpcalib validate refuses it with the same message: %s", v->what,
           rc ? ec.msg : "accepted");
  truth(what, rc == ERR_INPUT && strcmp(es.msg, ec.msg) == 0);
}

/* A half as ddpcalib writes it: validate accepts it, ddpsim wants a whole profile (sim_want NULL:
 * it accepts it too). */
static void half(const char *what, const char *text, const char *sim_want) {
  char line[2 * sizeof(err_t) + 256];
  err_t es = {{0}}, ec = {{0}};
  int rs, rc;
  verdicts(text, "h.json", PROFILE_PART, &rs, &es, &rc, &ec);
  snprintf(line, sizeof line, "%s: ddpcalib validate accepts it (%s)", what, rc ? ec.msg : "ok");
  truth(line, rc == ERR_OK);
  snprintf(line, sizeof line, "%s: ddpsim %s (%s)", what, sim_want ? "refuses it" : "accepts it", rs ? es.msg : "ok");
  truth(line, sim_want ? rs == ERR_INPUT && strstr(es.msg, sim_want) : rs == ERR_OK);
}

int main(void) {
  static const variant cases[] = {
      {.what = "a whole profile"},
      {.what = "link efficiency 2.0", .link = "{\"lat_s\":3.4e-6,\"efficiency\":2.0}",
       .want = "p.json: comm.links.nvlink.efficiency must be a fraction from 0.001 to 1, got 2"},
      {.what = "link efficiency 2.0 beside a bw_Bps", .link = "{\"lat_s\":3.4e-6,\"bw_Bps\":2e10,\"efficiency\":2.0}",
       .want = "p.json: comm.links.nvlink.efficiency must be a fraction from 0.001 to 1, got 2"},
      {.what = "a link latency of 1e-300", .link = "{\"lat_s\":1e-300,\"bw_Bps\":2e10}",
       .want = "p.json: comm.links.nvlink.lat_s must be a time in seconds from 1e-09 to 10 (or 0), got 1e-300"},
      {.what = "a link bandwidth of 1e308", .link = "{\"lat_s\":1e-6,\"bw_Bps\":1e308}",
       .want = "p.json: comm.links.nvlink.bw_Bps must be a bandwidth in bytes/s from 1000 to 1e+15, got 1e+308"},
      {.what = "a duplicate key", .link = "{\"lat_s\":1e-6,\"bw_Bps\":2e10,\"lat_s\":3e-6}",
       .want = "p.json: comm.links.nvlink: \"lat_s\" is given twice (duplicate key)"},
      {.what = "1e999 in a free-form section", .top_extra = ",\"samples\":{\"t\":[1,1e999]}",
       .want = "p.json: samples.t[1]: number out of range"},
      {.what = "a gemm point of a fractional size",
       .gemm = "{\"model\":\"table\",\"points\":[{\"m\":4.5,\"n\":2,\"k\":2,\"time_s\":1e-5}],\"fallback\":" GEMM_OK "}",
       .want = "compute.fp32.gemm.points[0].m must be an integer dimension from 1 to 1e+12, got 4.5"},
      {.what = "empirical jitter whose mean is not 1",
       .compute_extra = ",\"jitter\":{\"model\":\"empirical\",\"ratios\":[1.3,1.5]}", .want = "their mean must be 1"},
      {.what = "a peak of 1e308 flop/s",
       .gemm = "{\"model\":\"roofline\",\"launch_s\":2.5e-6,\"peak_flops\":1e308,\"efficiency\":0.6,\"mem_bw_Bps\":9e11}",
       .want = "compute.fp32.gemm.peak_flops must be a rate in flop/s from 1e+06 to 1e+18, got 1e+308"},
      {.what = "an empty link", .link = "{}", .want = "p.json: comm.links.nvlink.lat_s is missing"},
      {.what = "a negative link latency", .link = "{\"lat_s\":-2.5e-6,\"bw_Bps\":2e10}",
       .want = "p.json: comm.links.nvlink.lat_s must be a time in seconds from 1e-09 to 10 (or 0), got -2.5e-06"},
      {.what = "shares_compute not a boolean", .link = "{\"lat_s\":3.4e-6,\"bw_Bps\":2e10,\"shares_compute\":\"yes\"}",
       .want = "comm.links.nvlink.shares_compute must be true or false"},
      {.what = "gemm efficiency 2.0",
       .gemm = "{\"model\":\"roofline\",\"launch_s\":2.5e-6,\"peak_flops\":1.57e13,\"efficiency\":2.0,\"mem_bw_Bps\":9e11}",
       .want = "p.json: compute.fp32.gemm.efficiency must be a fraction from 0.001 to 1, got 2"},
      {.what = "a table without points",
       .gemm = "{\"model\":\"table\",\"points\":[],\"fallback\":" GEMM_OK "}",
       .want = "compute.fp32.gemm.points must be a non-empty array"},
      {.what = "an empty fp16 section", .compute_extra = ",\"fp16\":{}", .want = "p.json: compute.fp16.gemm is missing"},
      {.what = "a negative host launch cost", .compute_extra = ",\"host\":{\"launch_s\":-1e-5}",
       .want = "compute.host.launch_s must be a time in seconds from 1e-09 to 10 (or 0), got -1e-05"},
      {.what = "jitter cv 1.5", .compute_extra = ",\"jitter\":{\"model\":\"lognormal\",\"cv\":1.5}",
       .want = "compute.jitter.cv must be a coefficient of variation from 1e-06 to 0.99 (or 0), got 1.5"},
      {.what = "an h2d mode without bandwidth", .top_extra = ",\"h2d\":{\"pinned_sync\":{\"lat_s\":1e-5}}",
       .want = "h2d.pinned_sync.bw_Bps is missing"},
      {.what = "an unknown NCCL tuning model", .comm_extra = ",\"nccl\":{\"tuning_model\":\"nccl-2.8\"}",
       .want = "comm.nccl.tuning_model must be \"nccl-2.7\" or \"nccl-2.18\""},
      {.what = "hop_lat_s with an unknown algorithm",
       .link = "{\"lat_s\":3.4e-6,\"bw_Bps\":2e10,\"hop_lat_s\":{\"collnet\":{\"LL\":1e-6}}}",
       .want = "comm.links.nvlink.hop_lat_s.collnet: unknown algorithm (ring, tree, pat, hier)"},
      {.what = "a bw_factor above 1",
       .comm_extra = ",\"nccl\":{\"ring\":{\"Simple\":{\"base_lat_s\":8.4e-6,\"bw_factor\":1.25}}}",
       .want = "comm.nccl.ring.Simple.bw_factor must be a fraction from 0.001 to 1, got 1.25"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) same_verdict(&cases[i]);

  /* The halves of `ddpcalib comm` and `ddpcalib compute` (profilew_new's empty sections). */
  half("a comm-only half",
       "{\"format\":\"ddpsim-profile\",\"version\":1,\"name\":\"c\",\"provenance\":{},\"compute\":{},"
       "\"comm\":{\"links\":{\"shm\":{\"lat_s\":1.7e-6,\"bw_Bps\":3.1e9,\"shares_compute\":true}}}}",
       "\"compute\" has none of \"fp32\", \"fp16\", \"bf16\"");
  half("a compute-only half",
       "{\"format\":\"ddpsim-profile\",\"version\":1,\"name\":\"c\",\"provenance\":{},\"compute\":{\"fp32\":{\"gemm\":" GEMM_OK
       ",\"ewise\":{\"model\":\"roofline\",\"launch_s\":0,\"mem_bw_Bps\":4.5e10}}},\"comm\":{\"links\":{}}}",
       "\"comm.links\" is empty");

  /* What validate adds to the schema, and what a half may not lack. */
  err_t e = {{0}};
  cJSON *d = cJSON_Parse("{\"format\":\"ddpsim-profile\",\"version\":1,\"name\":\"x\",\"provenance\":{}}");
  int rc = profilew_validate(d, "n.json", PROFILE_PART, &e);
  cJSON_Delete(d);
  truth("neither compute nor comm: validate refuses it", rc == ERR_INPUT && strstr(e.msg, "n.json: neither"));
  d = cJSON_Parse("{\"format\":\"ddpsim-profile\",\"version\":1,\"comm\":{\"links\":{}}}");
  rc = profilew_validate(d, "q.json", PROFILE_PART, &e);
  cJSON_Delete(d);
  truth("no name: validate refuses it (ddpcalib's record-keeping rule)", rc == ERR_INPUT && strstr(e.msg, "q.json: name is missing"));
  return check_status();
}
