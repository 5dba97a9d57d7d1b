#include "framework.h"

#include "dp.h"
#include "fsdp.h"
#include "readout.h"

/* DataParallel's results are its phases (dp_readout); FSDP's are DDP's readout and its collectives. */
static int dp_read(plan_t *p, record_t *rec, sim_result *r, err_t *e) { return dp_readout(p, rec, r, e); }
static int fsdp_read(plan_t *p, record_t *rec, sim_result *r, err_t *e) {
  int rc = readout_ddp(p, rec, r, e);
  return rc ? rc : fsdp_readout(p, rec, r, e);
}

static const framework_row rows[SIM_FRAMEWORK_COUNT] = {
    [SIM_FRAMEWORK_DDP] = {SIM_FRAMEWORK_DDP, plan_build, readout_ddp, plan_write, NULL, NULL},
    [SIM_FRAMEWORK_DP] = {SIM_FRAMEWORK_DP, dp_build, dp_read, dp_write, NULL, NULL},
    [SIM_FRAMEWORK_FSDP] = {SIM_FRAMEWORK_FSDP, fsdp_build, fsdp_read, fsdp_write, fsdp_shard_world, fsdp_shard_numel},
};

const framework_row *framework_get(sim_framework f) {
  return (int)f >= 0 && f < SIM_FRAMEWORK_COUNT ? &rows[f] : NULL;
}

int framework_shard_world(const sim_config *c) {
  const framework_row *f = framework_get(c->framework);
  return f && f->shard_world ? f->shard_world(c) : 1;
}
