#include "sim.h"

#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "engine.h"
#include "framework.h"
#include "plan.h"
#include "wall.h"

double sim_ring_time(int n, double bytes, double lat_s, double bw_Bps) {
  if (n <= 1) return 0.0;
  return (double)coll_ring_steps(COLL_ALLREDUCE, n) * (lat_s + bytes / ((double)n * bw_Bps));
}

/* The framework's plan builder (its row, sim/framework.h). */
static int build(const sim_config *c, plan_t *p, err_t *e) {
  const framework_row *f = framework_get(c->framework);
  if (!f) return err_set(e, ERR_USAGE, "unknown framework %d", (int)c->framework);
  return f->build(c, p, e);
}

int sim_check(const sim_config *c, err_t *e) {
  plan_t p;
  int rc = build(c, &p, e);
  if (rc == ERR_OK) plan_free(&p);
  return rc;
}

int sim_run(const sim_config *c, sim_result *r, err_t *e) {
  memset(r, 0, sizeof *r);
  double wall0 = wall_now_s();
  int rc;
  plan_t p;
  record_t rec;
  if ((rc = build(c, &p, e))) goto done;
  rc = engine_run(&p, &rec, e);
  if (rc == ERR_OK) {
    rc = framework_get(c->framework)->readout(&p, &rec, r, e);
    record_free(&rec);
  }
  plan_free(&p);
done:
  if (rc) sim_result_free(r);
  r->wall_s = wall_now_s() - wall0;
  return rc;
}
