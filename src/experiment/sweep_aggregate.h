/* Statistics over the seeds of a sweep (internal): aggregate.csv,
 * aggregate.json and the printed comparison table (docs/experiments.md).
 *
 * Groups are (variant, axis point, model), in the order they first appear in
 * the runs table; only rows of status "ok" count. Per group and metric: n
 * (values that are numbers), n_nan (NaN values, left out), mean, the sample
 * standard deviation (n - 1, gsl_stats_sd) and the half-width of the 95 %
 * confidence interval of the mean, t(0.975, n - 1) * sd / sqrt(n) with
 * Student's t from gsl_cdf_tdist_Pinv; sd and the interval are empty for
 * n < 2, the mean for n = 0. */
#ifndef CS_SWEEP_AGGREGATE_H
#define CS_SWEEP_AGGREGATE_H

#include <stdio.h>

#include "sweep_runs.h"

G_BEGIN_DECLS

typedef struct CsAggregate CsAggregate;

/* Computes the statistics of a runs table (read from its text values). */
CsAggregate *cs_aggregate_new(const CsRunsTable *t);
void cs_aggregate_free(CsAggregate *a);

/* aggregate.csv: variant, the axes, model, metric, n, n_nan, mean, sd, ci95
 * (g_free it). */
char *cs_aggregate_to_csv(const CsAggregate *a);

/* aggregate.json: {"axes", "metrics", "groups": [{"variant", "point",
 * "model", "runs", "stats": {METRIC: {"n", "n_nan", "mean", "sd", "ci95"}}}]}
 * with null for an empty value (g_free it). */
char *cs_aggregate_to_json(const CsAggregate *a);

/* Prints the comparison table of a metric of model: a row per axis point, a
 * column per variant, cells "mean ± ci95" over the seeds; "invalid" where
 * no run of the cell ran, "(k invalid)" after the numbers where some did not. */
void cs_aggregate_print_table(const CsAggregate *a, int metric, const char *model, FILE *out);

G_END_DECLS

#endif
