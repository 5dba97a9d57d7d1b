/* cmd_trace: `ddpsim trace -o FILE`, predict's simulation written as a Chrome trace, no report. */
#include "cmd.h"

int cmd_trace(cli_ctx *x, int argc, char **argv) { return cmd_predict_run(x, argc, argv, 1); }
