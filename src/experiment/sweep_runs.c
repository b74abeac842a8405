/* runs.csv: rows from results, CSV text, and reading it back; see sweep_runs.h. */
#include "sweep_runs.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "sim/results.h"

/* KIND_BATCH_PCT: a percentile of the batch size distribution, computed from
 * the results' histogram (CsModelResult holds no batch percentile). */
typedef enum { KIND_DOUBLE, KIND_INT, KIND_BATCH_PCT } Kind;

/* The metric columns, in order: what a researcher compares across runs.
 * Configuration echoes (slo_ms, offered and planned rates) are kept so that a
 * row reads on its own when an axis changes them. */
static const struct {
  const char *name;
  Kind kind;
  size_t offset; /* in CsModelResult; KIND_BATCH_PCT: the percentile */
} metrics[] = {
  { "slo_ms", KIND_DOUBLE, offsetof(CsModelResult, slo_ms) },
  { "offered_rps", KIND_DOUBLE, offsetof(CsModelResult, offered_rps) },
  { "planned_rps", KIND_DOUBLE, offsetof(CsModelResult, planned_rps) },
  { "submitted_rps", KIND_DOUBLE, offsetof(CsModelResult, submitted_rps) },
  { "throughput_rps", KIND_DOUBLE, offsetof(CsModelResult, throughput_rps) },
  { "goodput_rps", KIND_DOUBLE, offsetof(CsModelResult, goodput_rps) },
  { "expected_goodput_rps", KIND_DOUBLE, offsetof(CsModelResult, expected_goodput_rps) },
  { "bad_rate", KIND_DOUBLE, offsetof(CsModelResult, bad_rate) },
  { "generated", KIND_INT, offsetof(CsModelResult, generated) },
  { "measured", KIND_INT, offsetof(CsModelResult, measured) },
  { "completed", KIND_INT, offsetof(CsModelResult, completed) },
  { "good", KIND_INT, offsetof(CsModelResult, good) },
  { "late", KIND_INT, offsetof(CsModelResult, late) },
  { "dropped", KIND_INT, offsetof(CsModelResult, dropped) },
  { "unserved", KIND_INT, offsetof(CsModelResult, unserved) },
  { "failed", KIND_INT, offsetof(CsModelResult, failed) },
  { "latency_p50_ms", KIND_DOUBLE, offsetof(CsModelResult, latency.p50) },
  { "latency_p90_ms", KIND_DOUBLE, offsetof(CsModelResult, latency.p90) },
  { "latency_p95_ms", KIND_DOUBLE, offsetof(CsModelResult, latency.p95) },
  { "latency_p99_ms", KIND_DOUBLE, offsetof(CsModelResult, latency.p99) },
  { "latency_max_ms", KIND_DOUBLE, offsetof(CsModelResult, latency.max) },
  { "latency_mean_ms", KIND_DOUBLE, offsetof(CsModelResult, latency.mean) },
  { "batches", KIND_INT, offsetof(CsModelResult, batches) },
  { "mean_batch", KIND_DOUBLE, offsetof(CsModelResult, mean_batch) },
  { "median_batch", KIND_BATCH_PCT, 50 },
  { "p90_batch", KIND_BATCH_PCT, 90 },
  { "drain_s", KIND_DOUBLE, offsetof(CsModelResult, drain_s) },
};
enum { N_METRICS = G_N_ELEMENTS(metrics) };

/* Cost (cs_results_cost): the cluster's price per hour on every row of the
 * run, the row's goodput per dollar of what the run paid per hour (per
 * model: the model's good requests per dollar of the whole cluster; under
 * autoscaling the GPUs provisioned, not the pool), and the run's GPU-hours
 * and what it paid per hour. Empty when a GPU's price is unknown. */
static const char *const cost_metrics[] = { "cost_per_hour", "goodput_per_dollar", "gpu_hours",
                                            "paid_per_hour" };
enum { N_COST = G_N_ELEMENTS(cost_metrics), N_RUN = N_METRICS + N_COST };

/* The columns a goodput-search sweep adds after the run metrics;
 * max_load_per_dollar is max_load_rps x 3600 / cost_per_hour, the requests
 * a dollar serves at the highest load within the objective. */
static const char *const search_metrics[] = { "max_load_rps", "search_multiplier",
                                              "search_probes", "max_load_per_dollar" };
enum { N_SEARCH = G_N_ELEMENTS(search_metrics), COL_MAX_LOAD = 0, COL_MULTIPLIER = 1,
       COL_PROBES = 2, COL_LOAD_PER_DOLLAR = 3 };

/* Columns before the axes, and between the axes and the metrics. */
static const char *const head_cols[] = { "run_id", "variant" };
static const char *const mid_cols[] = { "seed", "model", "status", "error" };
enum { N_HEAD = 2, N_MID = 4 };

int cs_runs_n_metrics(const CsRunsTable *t)
{
  return N_RUN + (t->search ? N_SEARCH : 0);
}

const char *cs_runs_metric_name(const CsRunsTable *t, int i)
{
  (void)t;
  return i < N_METRICS ? metrics[i].name
         : i < N_RUN   ? cost_metrics[i - N_METRICS]
                       : search_metrics[i - N_RUN];
}

int cs_runs_metric_index(const CsRunsTable *t, const char *name)
{
  for (int i = 0; i < cs_runs_n_metrics(t); i++)
    if (strcmp(cs_runs_metric_name(t, i), name) == 0)
      return i;
  return -1;
}

gboolean cs_runs_is_metric_name(const char *name)
{
  const CsRunsTable any = { .search = TRUE };
  return cs_runs_metric_index(&any, name) >= 0;
}

char *cs_runs_metric_names(void)
{
  const CsRunsTable any = { .search = TRUE };
  GString *list = g_string_new(NULL);
  for (int i = 0; i < cs_runs_n_metrics(&any); i++)
    g_string_append_printf(list, "%s%s", i ? ", " : "", cs_runs_metric_name(&any, i));
  return g_string_free(list, FALSE);
}

int cs_runs_col_seed(const CsRunsTable *t)
{
  return N_HEAD + t->n_axes;
}

int cs_runs_col_model(const CsRunsTable *t)
{
  return N_HEAD + t->n_axes + 1;
}

int cs_runs_col_status(const CsRunsTable *t)
{
  return N_HEAD + t->n_axes + 2;
}

int cs_runs_col_error(const CsRunsTable *t)
{
  return N_HEAD + t->n_axes + 3;
}

int cs_runs_col_metric(const CsRunsTable *t, int metric)
{
  return N_HEAD + t->n_axes + N_MID + metric;
}

static int n_columns(const CsRunsTable *t)
{
  return N_HEAD + t->n_axes + N_MID + cs_runs_n_metrics(t) + 1; /* + warnings */
}

CsRunsTable *cs_runs_table_new(const char *const *axis_names, int n_axes, gboolean search)
{
  CsRunsTable *t = g_new0(CsRunsTable, 1);
  t->n_axes = n_axes;
  t->search = search;
  t->columns = g_ptr_array_new_with_free_func(g_free);
  t->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  for (int i = 0; i < N_HEAD; i++)
    g_ptr_array_add(t->columns, g_strdup(head_cols[i]));
  for (int i = 0; i < n_axes; i++)
    g_ptr_array_add(t->columns, g_strdup(axis_names[i]));
  for (int i = 0; i < N_MID; i++)
    g_ptr_array_add(t->columns, g_strdup(mid_cols[i]));
  for (int i = 0; i < cs_runs_n_metrics(t); i++)
    g_ptr_array_add(t->columns, g_strdup(cs_runs_metric_name(t, i)));
  g_ptr_array_add(t->columns, g_strdup("warnings"));
  return t;
}

void cs_runs_table_free(CsRunsTable *t)
{
  if (!t)
    return;
  g_ptr_array_unref(t->columns);
  g_ptr_array_unref(t->rows);
  g_free(t);
}

char *cs_runs_format_double(double v)
{
  if (isnan(v))
    return g_strdup("nan");
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup(g_ascii_formatd(buf, sizeof buf, "%.17g", v));
}

/* The run's warning codes concerning model (every code when model is NULL),
 * each once, in the run's order, joined by ';'. */
static char *warning_codes(const CsResults *res, const char *model)
{
  GPtrArray *codes = g_ptr_array_new();
  for (int i = 0; i < cs_results_n_warnings(res); i++) {
    const CsWarning *w = cs_results_warning(res, i);
    if (model && (!w->model || strcmp(w->model, model) != 0))
      continue;
    gboolean seen = FALSE;
    for (guint k = 0; k < codes->len && !seen; k++)
      seen = strcmp(g_ptr_array_index(codes, k), w->code) == 0;
    if (!seen)
      g_ptr_array_add(codes, (gpointer)w->code);
  }
  g_ptr_array_add(codes, NULL);
  char *s = g_strjoinv(";", (char **)codes->pdata);
  g_ptr_array_free(codes, TRUE);
  return s;
}

/* A row with the run's coordinates filled and every other field empty. */
static char **row_new(const CsRunsTable *t, int run_id, const char *variant,
                      const char *const *labels, int64_t seed)
{
  int n = n_columns(t);
  char **row = g_new0(char *, n + 1);
  row[CS_RUNS_COL_RUN_ID] = g_strdup_printf("%d", run_id);
  row[CS_RUNS_COL_VARIANT] = g_strdup(variant);
  for (int a = 0; a < t->n_axes; a++)
    row[CS_RUNS_COL_FIRST_AXIS + a] = g_strdup(labels[a]);
  row[cs_runs_col_seed(t)] = g_strdup_printf("%" PRId64, seed);
  for (int c = cs_runs_col_model(t); c < n; c++)
    row[c] = g_strdup("");
  return row;
}

/* Replaces a row's field. */
static void set_field(char **row, int c, char *value)
{
  g_free(row[c]);
  row[c] = value;
}

/* Requests per dollar at rps requests per second on a cluster of price
 * dollars per hour; NAN when the price is unknown or 0. */
static double per_dollar(double rps, double price)
{
  return price > 0 ? rps * 3600.0 / price : NAN;
}

/* The search columns of a row: max_load is the model's offered load at the
 * highest load that passed (0 when none did). */
static void set_search_fields(const CsRunsTable *t, char **row, const CsRunsSearch *search,
                              double max_load, double price)
{
  set_field(row, cs_runs_col_metric(t, N_RUN + COL_MAX_LOAD),
            cs_runs_format_double(search->passed ? max_load : 0.0));
  set_field(row, cs_runs_col_metric(t, N_RUN + COL_MULTIPLIER),
            cs_runs_format_double(search->passed ? search->multiplier : 0.0));
  set_field(row, cs_runs_col_metric(t, N_RUN + COL_PROBES),
            g_strdup_printf("%d", search->probes));
  set_field(row, cs_runs_col_metric(t, N_RUN + COL_LOAD_PER_DOLLAR),
            cs_runs_format_double(per_dollar(search->passed ? max_load : 0.0, price)));
}

/* The nearest-rank pct-th percentile of the sizes of the batches that held
 * measured requests of model i (-1: every model's batches, pooled), the
 * histogram summary.json writes as batches.sizes: the smallest size b such
 * that the batches of size <= b number at least ceil(pct/100 x batches).
 * NaN without a batch, as mean_batch. */
static double batch_percentile(const CsResults *res, int i, int pct)
{
  int lo = i < 0 ? 0 : i, hi = i < 0 ? res->n_models : i + 1;
  int64_t n = 0;
  guint len = 0;
  for (int k = lo; k < hi; k++) {
    GArray *h = res->batch_sizes[k];
    for (guint b = 0; b < h->len; b++)
      n += g_array_index(h, int64_t, b);
    len = MAX(len, h->len);
  }
  int64_t rank = (pct * n + 99) / 100, cum = 0; /* ceil, in integers: exact */
  for (guint b = 1; n > 0 && b < len; b++) {
    for (int k = lo; k < hi; k++)
      if (b < res->batch_sizes[k]->len)
        cum += g_array_index(res->batch_sizes[k], int64_t, b);
    if (cum >= rank)
      return (double)b;
  }
  return NAN;
}

static char **row_of_model(const CsRunsTable *t, int run_id, const char *variant,
                           const char *const *labels, int64_t seed, const CsResults *res,
                           const CsRunsSearch *search, const CsModelResult *m, int index,
                           gboolean total)
{
  char **row = row_new(t, run_id, variant, labels, seed);
  set_field(row, cs_runs_col_model(t), g_strdup(m->model));
  set_field(row, cs_runs_col_status(t), g_strdup("ok"));
  int w = n_columns(t) - 1;
  if (search && !search->passed) {
    /* No load met the objective: there is no run to report, only that. */
    set_search_fields(t, row, search, 0.0, cs_results_cost(res)->price_per_hour);
    set_field(row, w, g_strdup("no_goodput"));
    return row;
  }
  for (int i = 0; i < N_METRICS; i++) {
    const char *field = (const char *)m + metrics[i].offset;
    if (metrics[i].kind == KIND_DOUBLE)
      set_field(row, cs_runs_col_metric(t, i),
                cs_runs_format_double(*(const double *)(const void *)field));
    else if (metrics[i].kind == KIND_BATCH_PCT)
      set_field(row, cs_runs_col_metric(t, i),
                cs_runs_format_double(batch_percentile(res, index, (int)metrics[i].offset)));
    else
      set_field(row, cs_runs_col_metric(t, i),
                g_strdup_printf("%" PRId64, *(const int64_t *)(const void *)field));
  }
  const CsCost *cost = cs_results_cost(res);
  set_field(row, cs_runs_col_metric(t, N_METRICS),
            cs_runs_format_double(cost->price_per_hour));
  set_field(row, cs_runs_col_metric(t, N_METRICS + 1),
            cs_runs_format_double(per_dollar(m->goodput_rps, cost->paid_per_hour)));
  set_field(row, cs_runs_col_metric(t, N_METRICS + 2), cs_runs_format_double(cost->gpu_hours));
  set_field(row, cs_runs_col_metric(t, N_METRICS + 3), cs_runs_format_double(cost->paid_per_hour));
  if (search)
    set_search_fields(t, row, search, m->offered_rps, cost->price_per_hour);
  set_field(row, w, warning_codes(res, total ? NULL : m->model));
  return row;
}

GPtrArray *cs_runs_rows(const CsRunsTable *t, int run_id, const char *variant,
                        const char *const *labels, int64_t seed, const CsResults *res,
                        const CsRunsSearch *search, const char *message)
{
  g_return_val_if_fail(!search == !t->search, NULL);
  GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  if (!res) {
    char **row = row_new(t, run_id, variant, labels, seed);
    set_field(row, cs_runs_col_status(t), g_strdup("invalid"));
    set_field(row, cs_runs_col_error(t), g_strdup(message));
    g_ptr_array_add(rows, row);
    return rows;
  }
  for (int i = 0; i < cs_results_n_models(res); i++)
    g_ptr_array_add(rows, row_of_model(t, run_id, variant, labels, seed, res, search,
                                       cs_results_model(res, i), i, FALSE));
  g_ptr_array_add(rows, row_of_model(t, run_id, variant, labels, seed, res, search,
                                     cs_results_total(res), -1, TRUE));
  return rows;
}

void cs_runs_table_take(CsRunsTable *t, GPtrArray *rows)
{
  for (guint i = 0; i < rows->len; i++)
    g_ptr_array_add(t->rows, g_ptr_array_index(rows, i));
  g_ptr_array_set_free_func(rows, NULL);
  g_ptr_array_unref(rows);
}

/* Appends a CSV field, quoted when it holds a separator, quote or line break. */
void cs_runs_append_csv_field(GString *out, const char *f)
{
  if (!strpbrk(f, ",\"\r\n")) {
    g_string_append(out, f);
    return;
  }
  g_string_append_c(out, '"');
  for (const char *c = f; *c; c++) {
    if (*c == '"')
      g_string_append_c(out, '"');
    g_string_append_c(out, *c);
  }
  g_string_append_c(out, '"');
}

static void append_record(GString *out, char **fields, int n)
{
  for (int i = 0; i < n; i++) {
    if (i)
      g_string_append_c(out, ',');
    cs_runs_append_csv_field(out, fields[i]);
  }
  g_string_append_c(out, '\n');
}

char *cs_runs_table_to_csv(const CsRunsTable *t)
{
  GString *out = g_string_new(NULL);
  int n = (int)t->columns->len;
  append_record(out, (char **)t->columns->pdata, n);
  for (guint r = 0; r < t->rows->len; r++)
    append_record(out, g_ptr_array_index(t->rows, r), n);
  return g_string_free(out, FALSE);
}

/* Splits CSV text (RFC 4180: quoted fields may hold commas, quotes doubled
 * and line breaks) into records, each a NULL-terminated array of fields.
 * Returns FALSE with error set naming file and line on a malformed quote. */
static gboolean parse_records(const char *text, const char *file, GPtrArray *records,
                              GError **error)
{
  const char *p = text;
  int line = 1;
  while (*p) {
    GPtrArray *fields = g_ptr_array_new();
    int start_line = line;
    for (;;) {
      GString *f = g_string_new(NULL);
      if (*p == '"') {
        p++;
        for (;;) {
          if (!*p) {
            g_string_free(f, TRUE);
            g_ptr_array_add(fields, NULL);
            g_strfreev((char **)g_ptr_array_free(fields, FALSE));
            g_set_error(error, CS_ERROR, CS_ERROR_PARSE,
                        "%s: line %d: a quoted field is not closed", file, start_line);
            return FALSE;
          }
          if (*p == '"' && p[1] == '"') {
            g_string_append_c(f, '"');
            p += 2;
          } else if (*p == '"') {
            p++;
            break;
          } else {
            line += (*p == '\n');
            g_string_append_c(f, *p++);
          }
        }
        if (*p && *p != ',' && *p != '\n' && *p != '\r') {
          g_string_free(f, TRUE);
          g_ptr_array_add(fields, NULL);
          g_strfreev((char **)g_ptr_array_free(fields, FALSE));
          g_set_error(error, CS_ERROR, CS_ERROR_PARSE,
                      "%s: line %d: text after a closing quote", file, line);
          return FALSE;
        }
      } else {
        size_t len = strcspn(p, ",\r\n");
        g_string_append_len(f, p, (gssize)len);
        p += len;
      }
      g_ptr_array_add(fields, g_string_free(f, FALSE));
      if (*p == ',') {
        p++;
        continue;
      }
      if (*p == '\r')
        p++;
      if (*p == '\n') {
        p++;
        line++;
      }
      break;
    }
    g_ptr_array_add(fields, NULL);
    g_ptr_array_add(records, g_ptr_array_free(fields, FALSE));
  }
  return TRUE;
}

int cs_runs_row_run_id(char **row)
{
  return (int)g_ascii_strtoll(row[CS_RUNS_COL_RUN_ID], NULL, 10);
}

double cs_runs_cell_value(const char *cell)
{
  if (!*cell)
    return NAN;
  return g_ascii_strtod(cell, NULL);
}

CsRunsTable *cs_runs_table_parse(const char *text, const char *file, GError **error)
{
  GPtrArray *records = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  if (!parse_records(text, file, records, error)) {
    g_ptr_array_unref(records);
    return NULL;
  }
  CsRunsTable *t = NULL;
  char **head = records->len ? g_ptr_array_index(records, 0) : NULL;
  int n = head ? (int)g_strv_length(head) : 0;
  /* A search table ends with its search columns, then "warnings". */
  gboolean search = n >= N_SEARCH + 1 &&
                    strcmp(head[n - 1 - N_SEARCH + COL_MAX_LOAD], search_metrics[COL_MAX_LOAD]) == 0;
  const CsRunsTable shape = { .n_axes = 0, .search = search };
  int n_axes = n - n_columns(&shape);
  /* The header must be the one this version writes, around any axis names. */
  gboolean ok = head && n_axes >= 0;
  if (ok) {
    t = cs_runs_table_new((const char *const *)head + N_HEAD, n_axes, search);
    for (int c = 0; c < n && ok; c++)
      ok = strcmp(head[c], g_ptr_array_index(t->columns, c)) == 0;
  }
  if (!ok) {
    g_set_error(error, CS_ERROR, CS_ERROR_PARSE,
                "%s: line 1: not the header of a runs.csv written by clustersim %s", file,
                cs_version());
  }
  for (guint r = 1; ok && r < records->len; r++) {
    char **row = g_ptr_array_index(records, r);
    guint64 id;
    if ((int)g_strv_length(row) != n ||
        !g_ascii_string_to_unsigned(row[CS_RUNS_COL_RUN_ID], 10, 0, G_MAXINT, &id, NULL)) {
      g_set_error(error, CS_ERROR, CS_ERROR_PARSE,
                  "%s: record %u: expected %d fields starting with a run id", file, r + 1, n);
      ok = FALSE;
      break;
    }
    g_ptr_array_add(t->rows, row);
    records->pdata[r] = NULL;
  }
  g_ptr_array_unref(records);
  if (!ok) {
    cs_runs_table_free(t);
    return NULL;
  }
  return t;
}
