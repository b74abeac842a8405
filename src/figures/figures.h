/* The figures a researcher reads first (internal; docs/experiments.md,
 * "Figures"), built from output files only, so that they can be redrawn from
 * an output directory at any time:
 *
 * - a sweep's "metric vs axis" figures, one series per variant with its 95 %
 *   confidence interval over the seeds, from DIR/aggregate.csv and
 *   DIR/sweep.json (figures_sweep.c);
 * - a run's latency CDF per model, stage breakdown, GPUs busy over time and
 *   placement map, from the files `clustersim run --output DIR` writes
 *   (figures_run.c, figures_cluster.c).
 *
 * Each returns the figure set (cs_figure_set_save writes it) or NULL with an
 * error naming the file, line or field that is wrong; nothing is written
 * then. A figure whose input is absent is left out with a note in the set. */
#ifndef CS_FIGURES_H
#define CS_FIGURES_H

#include "figure.h"

G_BEGIN_DECLS

/* The sweep figures of metric (a runs.csv metric name; NULL: max_load_rps
 * for a goodput-search sweep, else goodput_rps) and of the p99 latency, for
 * model ("total": the whole run). Fails naming the file when dir is not a
 * sweep's output or its aggregate.csv has no such metric or model. */
CsFigureSet *cs_figures_sweep(const char *dir, const char *metric, const char *model,
                              GError **error);

/* The figures of one run's output directory. */
CsFigureSet *cs_figures_run(const char *dir, GError **error);

G_END_DECLS

#endif
