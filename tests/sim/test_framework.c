/* The framework table (sim/framework.h): one row per sim_framework, in order, each with its builder,
 * readout and printout, sharding both or neither; the report fields' framework bits are 1 << the
 * enum value, so that a row's reports need no test of which framework it is. */
#include <string.h>

#include "check.h"
#include "fields.h"
#include "framework.h"

int main(void) {
  int rows = 1;
  for (int f = 0; f < SIM_FRAMEWORK_COUNT; f++) {
    const framework_row *r = framework_get((sim_framework)f);
    int ok = r && r->id == (sim_framework)f && r->build && r->readout && r->write && !r->shard_world == !r->shard_numel &&
             sim_framework_name((sim_framework)f) != NULL;
    if (!ok) printf("# row %d (%s) is incomplete\n", f, sim_framework_name((sim_framework)f));
    rows &= ok;
  }
  CHECK(rows, "every framework has its row, in enum order: builder, readout, printout, sharding both or neither");
  CHECK(!framework_get((sim_framework)-1) && !framework_get((sim_framework)SIM_FRAMEWORK_COUNT),
        "no row outside the enum");
  CHECK(framework_get(SIM_FRAMEWORK_FSDP)->shard_world && !framework_get(SIM_FRAMEWORK_DDP)->shard_world &&
            !framework_get(SIM_FRAMEWORK_DP)->shard_world,
        "FSDP shards the model; DDP and DataParallel keep it whole on every rank");
  CHECK(FIELD_DDP == 1u << SIM_FRAMEWORK_DDP && FIELD_DP == 1u << SIM_FRAMEWORK_DP && FIELD_FSDP == 1u << SIM_FRAMEWORK_FSDP &&
            FIELD_ALL == (1u << SIM_FRAMEWORK_COUNT) - 1,
        "a field's framework bits are 1 << sim_framework, all of them FIELD_ALL");
  /* Every field's bits name frameworks of the table. */
  int bits = 1;
  for (int k = 0; k < FIELD_COUNT; k++) bits &= (field_table[k].frameworks & ~(unsigned)FIELD_ALL) == 0;
  CHECK(bits, "no field names a framework outside the table");
  return check_status();
}
