/* launchbench without CUDA: there is nothing to launch. */
#include "launchbench.h"

int launchbench_time(int iters, double *launch_s, char *dev, size_t devlen, err_t *e) {
  (void)iters, (void)launch_s, (void)dev, (void)devlen;
  return err_set(e, ERR_NODEV, "no CUDA device (ddpcalib was built without CUDA)");
}
