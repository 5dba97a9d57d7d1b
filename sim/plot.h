/* plot: gnuplot scripts for ddpsim's results, PNG or SVG (docs/plots.md).
 *
 * Reads what the commands write (a `ddpsim sweep --csv` table, a `recommend --json` or a `predict
 * --json` object) and writes one self-contained gnuplot script (the data inline, as datablocks)
 * that draws the plot to a file. Columns are found by name: any others (new ones included) are
 * ignored, and a plot says which it needs:
 *   scaling    sweep CSV: topology, gpus, samples_per_s, scaling_efficiency. Throughput and speedup
 *              against GPUs, one line per topology, the ideal line (N x one GPU's throughput, taken
 *              from samples_per_s / (gpus x scaling_efficiency)); of several caps, each point is
 *              the best cap's.
 *   caps       sweep CSV or recommend JSON (its `caps` array): bucket_cap_mb and samples_per_s
 *              (else iteration_s); one line per (topology, nodes) when those columns are there. An
 *              uncertainty band is drawn where Y_lo and Y_hi columns (Y the value drawn, e.g.
 *              samples_per_s_lo, iteration_s_hi) are present.
 *   breakdown  sweep CSV: nodes and the parts present of loading_s, transfer_s,
 *              buffer_broadcast_s, compute_s, exposed_comm_s, straggler_wait_s, stacked per node
 *              count, a group of bars per (topology, bucket_cap_mb) (at most 6; the title names
 *              the others).
 *   timeline   predict JSON: each bucket's ready_s, comm_start_s, comm_end_s (simulated) on one row
 *              per bucket, and the compute phases (loading_s, transfer_s, buffer_broadcast_s,
 *              forward_s, backward_s, bucket copies, optimizer_s) laid end to end on a row of
 *              their own (a series and legend entry each), which the title says are laid out
 *              from the breakdown.
 *   pareto     sweep CSV with a job (--samples or --epochs): train_s and cost (else gpu_hours), one
 *              point per row (hours, cost), a colour per topology (and profile, where several), the
 *              rows whose fits is 0 apart, and the Pareto front (the rows no other fitting row
 *              beats on both; labelled with their gpus); with iteration_s_lo/_hi (sweep's
 *              interval, there unless --no-interval) error bars, the iteration's factors on both axes. The title names the
 *              scenario: model, batch_per_gpu, precision, profile, pytorch (or how many differ).
 * Every title names the scenario (model, batch, precision, profile, PyTorch release) from the
 * input's columns or fields; the caps plot marks DDP's default cap and the recommended one; the
 * breakdown draws a group per (topology, cap) and names any it leaves out; the timeline's labels
 * keep a spacing rule (docs/plots.md, "What every plot says").
 * Nothing here prints or runs gnuplot: the front end does. */
#ifndef DDPSIM_PLOT_H
#define DDPSIM_PLOT_H

#include "err.h"

typedef enum { PLOT_SCALING = 0, PLOT_CAPS, PLOT_BREAKDOWN, PLOT_TIMELINE, PLOT_PARETO, PLOT_KIND_COUNT } plot_kind;

/* "scaling", "caps", "breakdown", "timeline", "pareto" (NULL-terminated, for an option table). */
extern const char *const plot_kind_names[];

/* The gnuplot script drawing plot `kind` of `input` (the text of the file named `origin`) into
 * out_path, a .png (pngcairo) or .svg file. *script is malloc'd (the caller frees it); *series is
 * the number of plotted series (lines, bands, bar stacks) it draws. ERR_INPUT with `origin: what
 * is wrong` (a missing column, a row that does not parse, nothing to plot), ERR_USAGE for an
 * output that is neither .png nor .svg, ERR_NOMEM. */
int plot_script(plot_kind kind, const char *input, const char *origin, const char *out_path, char **script, int *series,
                err_t *e);

#endif
