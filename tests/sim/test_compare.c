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
  if (iv_lo > 0) x->has_iv = 1, x->iv.nominal_s = 1, x->iv.lo_s = iv_lo, x->iv.hi_s = iv_hi;
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
   * (251.35 - 230.5) / 230.5 = 9.05% more cost. Intervals: A 6480..7920 s, B (0.85..1.15) 5049.68..6831.92 s:
   * they overlap, within the uncertainty. */
  entry(&v[0], "A", 7200, 230.5, 0.9, 1.1);
  entry(&v[1], "B", 5940.8, 251.35, 0.85, 1.15);
  compare_margin_of(v, 0, 1, &m);
  CHECK(m.faster == 1 && m.slower == 0 && check_close(1259.2 / 7200, m.time_saved, 0, 1e-12) &&
            check_close(20.85 / 230.5, m.cost_change, 0, 1e-12) && m.by_cost && m.within == 1,
        "margin by hand: saved %.6f, change %.6f, within %d", m.time_saved, m.cost_change, m.within);
  CHECK(!strcmp(m.text, "B saves 17.5% of the time for 9.0% more cost; within the uncertainty: yes"), "text: %s", m.text);
  compare_margin_of(v, 1, 0, &m);
  CHECK(m.faster == 1 && m.slower == 0, "the order of the pair does not change the margin");
  /* B's interval 0.95..1.05: 5643.76..6237.84 s, below A's 6480: not within. */
  entry(&v[1], "B", 5940.8, 251.35, 0.95, 1.05);
  compare_margin_of(v, 0, 1, &m);
  CHECK(m.within == 0 && strstr(m.text, "; within the uncertainty: no"), "disjoint intervals: %s", m.text);
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
  return check_status();
}
