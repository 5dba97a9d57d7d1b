/* sweep_run (sim/sweep.h): rows in the configurations' order and the same bytes for any number of
 * workers; the lowest-numbered failure reported whatever order the workers met it in; the CSV's
 * header is the field table's sweep columns (sim/fields.h). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixtures.h"
#include "sweep.h"

int main(void) {
  gsl_set_error_handler_off();
  err_t e;
  model_t *m = fixture_bundled_model("resnet18");
  topo_t *t = fixture_bundled_topo("dgx1v-10gbe");
  profile_t *p = fixture_bundled_profile("v100-dgx1v");
  enum { N = 7 };
  sim_config c[N];
  for (int i = 0; i < N; i++) {
    sim_config_defaults(&c[i]);
    c[i].model = m, c[i].topo = t, c[i].profile = p;
    c[i].nodes = 1 + i % 3;
    c[i].bucket_cap_mb = 2.385 * (i + 1);
  }
  sweep_row one[N], three[N];
  sweep_opts o1 = {.jobs = 1}, o3 = {.jobs = 3};
  int rc1 = sweep_run(c, N, &o1, one, &e), rc3 = sweep_run(c, N, &o3, three, &e);
  CHECK(rc1 == ERR_OK && rc3 == ERR_OK, "%d configurations with 1 and 3 workers", N);
  CHECK(memcmp(one, three, sizeof one) == 0, "the rows are the same bytes with 1 and 3 workers");
  int order = 1;
  for (int i = 0; i < N; i++) order &= one[i].done && one[i].value[FIELD_GPUS] == 8 * c[i].nodes;
  CHECK(order, "row i is configuration i (its GPUs)");

  /* Configurations 3 and 6 (1-based) cannot run: a node count of 0. */
  c[2].nodes = 0, c[5].nodes = 0;
  for (int j = 1; j <= 4; j += 3) {
    sweep_opts o = {.jobs = j};
    int rc = sweep_run(c, N, &o, three, &e);
    CHECK(rc == ERR_USAGE && strncmp(e.msg, "configuration 3: ", 17) == 0, "%d worker(s): the first failure is reported: %s", j,
          e.msg);
  }
  c[2].nodes = 1, c[5].nodes = 1;
  sweep_opts it = {.jobs = 2, .what = SWEEP_ITERATION};
  CHECK(sweep_run(c, 2, &it, three, &e) == ERR_OK && three[0].value[FIELD_ITERATION_S] == one[0].value[FIELD_ITERATION_S] &&
            three[0].value[FIELD_SCALING_EFFICIENCY] == 0,
        "SWEEP_ITERATION: the same iteration, no 1-GPU twin");
  char *csv = sweep_csv(c, one, N, (const char *[]){"nodes", "extra"}, 2, (const char *[]){"1", "a", "2", "b", "3", "c", "1", "d", "2", "e", "3", "f", "1", "g"});
  int lines = 0;
  for (const char *q = csv; q && *q; q++) lines += *q == '\n';
  CHECK(csv && strncmp(csv, "extra,model,topology,profile,nodes,", 35) == 0 && lines == N + 1,
        "CSV: an axis that is a column is not repeated, another comes first; a header and %d rows", N);
  free(csv);
  model_destroy(m), topo_destroy(t), profile_destroy(p);
  return check_status();
}
