/* The runs table of a sweep (internal): runs.csv, one row per run and model
 * plus a "total" row per run (docs/experiments.md, "Sweeps").
 *
 * Columns: run_id, variant, one per axis (the level's label), seed, model,
 * status ("ok" or "invalid"), error, the metrics of CsModelResult (names in
 * cs_runs_metric_name), warnings (the run's warning codes for that model,
 * joined by ';'; every code of the run on the total row). Doubles are written
 * with %.17g, so that reading a row back gives the very values the run
 * produced; NaN is "nan". A run that did not run has one row, model empty,
 * its message in error and no metric.
 *
 * A goodput-search sweep (an experiment with "search") has three more metric
 * columns after the run metrics: max_load_rps (the model's offered load at
 * the highest load that met the objective, 0 when none did), search_multiplier
 * (the rate multiplier there, 0 when none) and search_probes (simulations
 * run). The run metrics are those of the simulation at that load; when no
 * load met the objective they are empty and the warnings hold "no_goodput".
 *
 * Everything computed from a sweep (aggregate, comparison table) is computed
 * from this table's text values, whether the table was filled by running or
 * read back from shards' runs.csv: both paths give the same bytes. */
#ifndef CS_SWEEP_RUNS_H
#define CS_SWEEP_RUNS_H

#include <glib.h>

#include "clustersim/clustersim.h"

G_BEGIN_DECLS

typedef struct {
  GPtrArray *columns; /* char *: the header */
  int n_axes;         /* axis columns, right after "variant" */
  gboolean search;    /* a goodput-search sweep: the search metrics follow */
  GPtrArray *rows;    /* char ** of columns->len fields each (g_strfreev) */
} CsRunsTable;

/* The table's metrics: their number and names, in column order. */
int cs_runs_n_metrics(const CsRunsTable *t);
const char *cs_runs_metric_name(const CsRunsTable *t, int i);
/* Index of the table's metric called name, or -1. */
int cs_runs_metric_index(const CsRunsTable *t, const char *name);
/* Whether name is a metric of some runs table (with or without search). */
gboolean cs_runs_is_metric_name(const char *name);
/* The metrics any table may have, ", "-separated, for messages (g_free it). */
char *cs_runs_metric_names(void);

/* Column indices in a table with n_axes axes. */
enum { CS_RUNS_COL_RUN_ID = 0, CS_RUNS_COL_VARIANT = 1, CS_RUNS_COL_FIRST_AXIS = 2 };
int cs_runs_col_seed(const CsRunsTable *t);
int cs_runs_col_model(const CsRunsTable *t);
int cs_runs_col_status(const CsRunsTable *t);
int cs_runs_col_error(const CsRunsTable *t);
int cs_runs_col_metric(const CsRunsTable *t, int metric);

/* An empty table with these axis names, with the search metrics when search. */
CsRunsTable *cs_runs_table_new(const char *const *axis_names, int n_axes, gboolean search);
void cs_runs_table_free(CsRunsTable *t);

/* How a goodput search ended, for the search columns. */
typedef struct {
  gboolean passed;   /* some load met the objective */
  double multiplier; /* of the highest such load (0 when none) */
  int probes;        /* simulations run */
} CsRunsSearch;

/* The rows of a run (a new array of char ** rows, freeing them with it): one
 * per model of res and a total row; or, when res is NULL, one row of status
 * "invalid" with message. labels has t->n_axes entries. In a search table,
 * search says how the search ended and res is the simulation at the highest
 * load that passed (when none passed: any probe, for its models alone). */
GPtrArray *cs_runs_rows(const CsRunsTable *t, int run_id, const char *variant,
                        const char *const *labels, int64_t seed, const CsResults *res,
                        const CsRunsSearch *search, const char *message);

/* Appends rows (as cs_runs_rows returns them) to the table, taking them. */
void cs_runs_table_take(CsRunsTable *t, GPtrArray *rows);

/* Appends field f to out as runs.csv writes it: quoted (quotes doubled)
 * when it holds a comma, quote or line break. */
void cs_runs_append_csv_field(GString *out, const char *f);

/* The table as CSV text (RFC 4180 quoting; g_free it). */
char *cs_runs_table_to_csv(const CsRunsTable *t);

/* Reads runs.csv text written by cs_runs_table_to_csv of this version.
 * Returns NULL with error set naming file and line when it is not. */
CsRunsTable *cs_runs_table_parse(const char *text, const char *file, GError **error);

/* A row's run id (the first field, checked by parse or written by us). */
int cs_runs_row_run_id(char **row);

/* A double as runs.csv writes it: %.17g in the C locale, "nan" for NaN
 * (g_free it). */
char *cs_runs_format_double(double v);

/* Reads a metric cell: a number, or NaN for "nan" and for an empty cell. */
double cs_runs_cell_value(const char *cell);

G_END_DECLS

#endif
