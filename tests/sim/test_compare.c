/* test_compare: a setup's text (sim/compare.h) and the decision's margin, on entries whose figures
 * are set by hand and whose margins are worked out in the comments. */
#include <string.h>

#include "check.h"
#include "compare.h"

static void entry(compare_entry *x, const char *label, double train_s, double cost, double iv_lo, double iv_hi) {
  memset(x, 0, sizeof *x);
  snprintf(x->label, sizeof x->label, "%s", label);
  x->has_budget = 1;
  x->budget.train_s = train_s;
  x->budget.has_cost = cost > 0;
  x->budget.cost = cost;
  x->budget.gpu_hours = train_s / 3600 * 8;
  x->p.samples_per_s = 1000;
  x->p.sim.gpus = 8;
  /* An interval of its validated part alone (no draws, no profile of its own: nothing paired). */
  if (iv_lo > 0) {
    x->has_iv = 1, x->iv.level = 0.9, x->iv.nominal_s = 1, x->iv.lo_s = iv_lo, x->iv.hi_s = iv_hi;
    x->iv.profile_lo = x->iv.profile_hi = 1, x->iv.validated_lo = iv_lo, x->iv.validated_hi = iv_hi;
    x->iv.measured_lo = x->iv.measured_hi = 1; /* no measured op times */
  }
}

int main(void) {
  err_t e;
  compare_setup s;
  CHECK(compare_setup_parse("topology=dgx1v-ib,profile=v100-dgx1v,nodes=4,gpus-per-node=2,price=2.385,name=IB", &s, &e) == ERR_OK &&
            !strcmp(s.topology, "dgx1v-ib") && !strcmp(s.profile, "v100-dgx1v") && s.nodes == 4 && s.gpus_per_node == 2 &&
            !strcmp(s.price, "2.385") && !strcmp(s.name, "IB"),
        "a setup with every key");
  CHECK(compare_setup_parse("nodes=3", &s, &e) == ERR_OK && s.nodes == 3 && !s.topology[0] && !s.profile[0] && !s.price[0],
        "keys left out stay empty (the command's flags)");
  CHECK(compare_setup_parse("nodes=0", &s, &e) == ERR_USAGE && strstr(e.msg, "nodes= must be an integer"), "nodes=0: %s", e.msg);
  CHECK(compare_setup_parse("gpus-per-node=2x", &s, &e) == ERR_USAGE && strstr(e.msg, "gpus-per-node="), "gpus-per-node=2x: %s", e.msg);
  CHECK(compare_setup_parse("profile=", &s, &e) == ERR_USAGE && strstr(e.msg, "profile= needs a value"), "profile=: %s", e.msg);
  CHECK(compare_setup_parse("name=a,name=b", &s, &e) == ERR_USAGE && strstr(e.msg, "name= given twice"), "twice: %s", e.msg);
  CHECK(compare_setup_parse("", &s, &e) == ERR_USAGE, "empty: %s", e.msg);
  CHECK(compare_setup_parse("nodes=2", &s, &e) == ERR_OK && s.framework == -1 && s.fsdp_reshard == -1 && s.fsdp_replicate == 0,
        "framework and FSDP's knobs not given: the command's");
  CHECK(compare_setup_parse("framework=fsdp,fsdp-reshard-after-forward=false,fsdp-replicate=2", &s, &e) == ERR_OK &&
            s.framework == SIM_FRAMEWORK_FSDP && s.fsdp_reshard == 0 && s.fsdp_replicate == 2,
        "framework=fsdp with its knobs");
  CHECK(compare_setup_parse("framework=zero", &s, &e) == ERR_USAGE && strstr(e.msg, "framework= must be ddp, dp or fsdp"), "framework=zero: %s",
        e.msg);
  CHECK(compare_setup_parse("fsdp-reshard-after-forward=1", &s, &e) == ERR_USAGE && strstr(e.msg, "true or false"), "reshard=1: %s", e.msg);

  compare_entry v[2];
  compare_margin m;
  /* A 7200 s at 230.5, B 5940.8 s at 251.35: B saves (7200 - 5940.8) / 7200 = 17.49% of the time for
   * (251.35 - 230.5) / 230.5 = 9.05% more cost. Intervals A 0.9..1.1, B 0.85..1.15, not paired: B / A
   * = 0.825111 within exp(-+hypot) of B's lo with A's hi, B's hi with A's lo (sim/interval.h):
   * saved 1 - 0.825111 exp(hypot(log 1.15, log 0.9)) = 1.71% .. 1 - 0.825111 exp(-hypot(log 0.85,
   * log 1.1)) = 31.66%: above 0, not within the uncertainty (their intervals overlap, but overlap is
   * not the question: the difference is). */
  entry(&v[0], "A", 7200, 230.5, 0.9, 1.1);
  entry(&v[1], "B", 5940.8, 251.35, 0.85, 1.15);
  compare_margin_of(v, 0, 1, &m);
  CHECK(m.faster == 1 && m.slower == 0 && check_close(1259.2 / 7200, m.time_saved, 0, 1e-12) &&
            check_close(20.85 / 230.5, m.cost_change, 0, 1e-12) && m.by_cost && m.within == 0 && !m.paired_draws &&
            !m.paired_kind && check_close(0.0170636, m.saved_lo, 1e-6, 0) && check_close(0.3165776, m.saved_hi, 1e-6, 0),
        "margin by hand: saved %.6f (%.6f .. %.6f), change %.6f, within %d", m.time_saved, m.saved_lo, m.saved_hi,
        m.cost_change, m.within);
  CHECK(!strcmp(m.text, "B saves 17.5% of the time (90%: 1.7% .. 31.7%) for 9.0% more cost; within the uncertainty: no"),
        "text: %s", m.text);
  compare_margin_of(v, 1, 0, &m);
  CHECK(m.faster == 1 && m.slower == 0, "the order of the pair does not change the margin");
  /* Both 0.7..1.3: saved 1 - 0.825111 exp(hypot(log 1.3, log 0.7)) = -28.47% .. 47.01%: within. */
  entry(&v[0], "A", 7200, 230.5, 0.7, 1.3);
  entry(&v[1], "B", 5940.8, 251.35, 0.7, 1.3);
  compare_margin_of(v, 0, 1, &m);
  CHECK(m.within == 1 && check_close(-0.2847195, m.saved_lo, 1e-6, 0) && check_close(0.4700724, m.saved_hi, 1e-6, 0) &&
            strstr(m.text, "(90%: -28.5% .. 47.0%)") && strstr(m.text, "; within the uncertainty: yes"),
        "wide intervals: %s", m.text);
  /* Paired draws (one profile document): A's four draws 1, 1, 1, 1, B's 0.9, 1.0, 1.05, 1.1 of their
   * references; the validated parts 1. B / A's draws sorted, central 90% (GSL's quantiles, linear
   * between order statistics): 0.915 .. 1.0925; saved 1 - 0.825111 x 1.0925 = 9.857% .. 24.502%. */
  entry(&v[0], "A", 7200, 230.5, 1, 1);
  entry(&v[1], "B", 5940.8, 251.35, 1, 1);
  static const double bd[4] = {0.9, 1.0, 1.05, 1.1};
  for (int k = 0; k < 2; k++) {
    v[k].profile_arg = "p.json";
    v[k].iv.draws = 4;
    for (int d = 0; d < 4; d++) v[k].iv.draw_ratio[d] = k ? bd[d] : 1;
  }
  compare_margin_of(v, 0, 1, &m);
  CHECK(m.paired_draws && !m.paired_kind && m.within == 0 && check_close(0.0985661, m.saved_lo, 1e-6, 0) &&
            check_close(0.2450233, m.saved_hi, 1e-6, 0),
        "paired draws: %d, %.6f .. %.6f", m.paired_draws, m.saved_lo, m.saved_hi);
  v[1].profile_arg = "q.json"; /* another document: its draws are not A's; the profile factors 1 and 1 */
  compare_margin_of(v, 0, 1, &m);
  CHECK(!m.paired_draws && check_close(m.saved_lo, m.saved_hi, 1e-12, 0), "not paired: the factors alone (%.6f .. %.6f)",
        m.saved_lo, m.saved_hi);
  /* No price for A: GPU-hours, A 16, B 13.2018 (8 GPUs): 17.49% less; no interval for A: no verdict. */
  entry(&v[0], "A", 7200, 0, 0, 0);
  compare_margin_of(v, 0, 1, &m);
  CHECK(!m.by_cost && m.within == -1 && check_close(-1259.2 / 7200, m.cost_change, 0, 1e-12) &&
            !strcmp(m.text, "B saves 17.5% of the time for 17.5% less GPU-hours"),
        "no price, no interval: %s", m.text);
  /* Equal times and costs. */
  entry(&v[0], "A", 3600, 10, 0, 0);
  entry(&v[1], "B", 3600, 10, 0, 0);
  compare_margin_of(v, 0, 1, &m);
  CHECK(m.time_saved == 0 && !strcmp(m.text, "A and B take the same time at the same cost"), "equal: %s", m.text);

  /* The measured part (sim/interval.h): a lognormal of the steps' spread, 10% over 7 steps at 90%:
   * sigma = sqrt(log 1.01) = 0.0997513, z = 1.6448536: factors exp(-+0.164076) = 0.848677, 1.178304;
   * in quadrature with a validated 0.8 .. 1.25: exp(-+hypot(0.164076, 0.223144) = 0.276974) = 0.758075, 1.319131. */
  {
    interval_t a;
    CHECK(interval_profile(1.0, 0, NULL, 0, 1, 0.9, &a, &e) == ERR_OK, "an interval without draws");
    interval_measured(&a, 7, 0.1);
    interval_validated(&a, 3, 50, 0.8, 1.25);
    CHECK(a.measured_steps == 7 && check_close(0.848677, a.measured_lo, 0, 2e-6) && check_close(1.178304, a.measured_hi, 0, 2e-6) &&
              check_close(0.758075, a.lo_s, 0, 2e-6) && check_close(1.319131, a.hi_s, 0, 2e-6),
          "measured part %.6f .. %.6f, the whole %.6f .. %.6f", a.measured_lo, a.measured_hi, a.lo_s, a.hi_s);
    interval_t b = a;
    double lo, hi;
    interval_ratio(&a, &b, 1, 1, &lo, &hi);
    CHECK(lo == 1 && hi == 1, "one model's measured part on both sides cancels (with the validated part shared): %g .. %g", lo, hi);
    interval_measured(&b, 0, 0); /* b's profile not of the measured device: its times unused */
    interval_ratio(&a, &b, 1, 1, &lo, &hi);
    CHECK(check_close(0.848677, lo, 0, 2e-6) && check_close(1.178304, hi, 0, 2e-6) && b.measured_lo == 1,
          "a measured part on one side alone stays: %.6f .. %.6f", lo, hi);
    interval_measured(&a, 7, 0);
    CHECK(a.measured_steps == 0 && a.measured_lo == 1 && a.measured_hi == 1, "a spread of 0: no measured part");
  }
  return check_status();
}
