/* The figures a researcher reads first (internal; docs/experiments.md,
 * "Figures"), built from output files only, so that they can be redrawn from
 * an output directory at any time:
 *
 * - a sweep's "metric vs axis" figures, one series per variant with its 95 %
 *   confidence interval over the seeds, from DIR/aggregate.csv and
 *   DIR/sweep.json (figures_sweep.c);
 * - a run's latency CDF per model, stage breakdown, GPUs busy over time,
 *   placement map and batch sizes, from the files `clustersim run --output DIR` writes
 *   (figures_run.c, figures_cluster.c, figures_batch.c);
 * - the comparison of runs' batch size and latency CDFs, from their output
 *   directories (figures_compare.c).
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

/* The figures comparing the runs of dirs[0..n-1] (n >= 2, each a run's
 * output directory): per model of every run, batch_sizes_compare_MODEL and,
 * when every run has requests.csv, latency_cdf_compare_MODEL, one series
 * per run. Fails naming the file and field when a directory is not a run's
 * output or a file is malformed, when fewer than two runs or one run twice
 * are given, or when the runs have no model in common; models only some runs
 * have are left out with a note. */
CsFigureSet *cs_figures_compare(const char *const *dirs, int n, GError **error);

G_END_DECLS

#endif
