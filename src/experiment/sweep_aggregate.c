/* Statistics over seeds and the comparison table; see sweep_aggregate.h. */
#include "sweep_aggregate.h"

#include <cjson/cJSON.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <string.h>

typedef struct {
  int n, n_nan;
  double mean, sd, ci95; /* NAN when empty */
} Stat;

typedef struct {
  int variant, point; /* indices into the aggregate's lists */
  char *model;
  int n_metrics;
  int runs;           /* rows of status ok */
  GArray **values;    /* per metric: double, NaN left out */
  Stat *stats;        /* per metric */
} Group;

struct CsAggregate {
  int n_axes;
  GPtrArray *metrics;    /* char *: the runs table's metric names */
  GPtrArray *axis_names; /* char * */
  GPtrArray *variants;   /* char *, first appearance order */
  GPtrArray *points;     /* char ** of n_axes labels, first appearance order */
  GPtrArray *groups;     /* Group * */
  GArray *ok_runs;       /* int per (variant, point) pair index, see cell_index */
  GArray *bad_runs;      /* int: runs of any other status */
};

static void group_free(gpointer p)
{
  Group *g = p;
  g_free(g->model);
  for (int m = 0; m < g->n_metrics; m++)
    if (g->values[m])
      g_array_unref(g->values[m]);
  g_free(g->values);
  g_free(g->stats);
  g_free(g);
}

void cs_aggregate_free(CsAggregate *a)
{
  if (!a)
    return;
  g_ptr_array_unref(a->axis_names);
  g_ptr_array_unref(a->metrics);
  g_ptr_array_unref(a->variants);
  g_ptr_array_unref(a->points);
  g_ptr_array_unref(a->groups);
  g_array_unref(a->ok_runs);
  g_array_unref(a->bad_runs);
  g_free(a);
}

/* Index of key in index (a map to index + 1), adding it as the next one. */
static int intern(GHashTable *index, const char *key, gboolean *added)
{
  int i = GPOINTER_TO_INT(g_hash_table_lookup(index, key));
  *added = i == 0;
  if (i == 0) {
    i = (int)g_hash_table_size(index) + 1;
    g_hash_table_insert(index, g_strdup(key), GINT_TO_POINTER(i));
  }
  return i - 1;
}

/* Run counters per (variant, point) pair and kind (0: ok, 1: not run), kept
 * in a hash while the lists of variants and points still grow. */
static int *cell_counter(GHashTable *cells, int variant, int point, int which)
{
  char *key = g_strdup_printf("%d/%d/%d", variant, point, which);
  int *c = g_hash_table_lookup(cells, key);
  if (!c) {
    c = g_new0(int, 1);
    g_hash_table_insert(cells, key, c);
  } else {
    g_free(key);
  }
  return c;
}

static Stat compute(GArray *v, int n_nan)
{
  Stat s = { .n = (int)v->len, .n_nan = n_nan, .mean = NAN, .sd = NAN, .ci95 = NAN };
  const double *x = (const double *)(const void *)v->data;
  if (s.n >= 1)
    s.mean = gsl_stats_mean(x, 1, v->len);
  if (s.n >= 2) {
    s.sd = gsl_stats_sd(x, 1, v->len);
    s.ci95 = gsl_cdf_tdist_Pinv(0.975, s.n - 1) * s.sd / sqrt((double)s.n);
  }
  return s;
}

CsAggregate *cs_aggregate_new(const CsRunsTable *t)
{
  CsAggregate *a = g_new0(CsAggregate, 1);
  int nm = cs_runs_n_metrics(t);
  a->n_axes = t->n_axes;
  a->metrics = g_ptr_array_new_with_free_func(g_free);
  for (int m = 0; m < nm; m++)
    g_ptr_array_add(a->metrics, g_strdup(cs_runs_metric_name(t, m)));
  a->axis_names = g_ptr_array_new_with_free_func(g_free);
  for (int i = 0; i < t->n_axes; i++)
    g_ptr_array_add(a->axis_names,
                    g_strdup(g_ptr_array_index(t->columns, CS_RUNS_COL_FIRST_AXIS + i)));
  a->variants = g_ptr_array_new_with_free_func(g_free);
  a->points = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  a->groups = g_ptr_array_new_with_free_func(group_free);
  GHashTable *vidx = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GHashTable *pidx = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GHashTable *gidx = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GHashTable *cells = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  for (guint r = 0; r < t->rows->len; r++) {
    char **row = g_ptr_array_index(t->rows, r);
    gboolean added;
    int v = intern(vidx, row[CS_RUNS_COL_VARIANT], &added);
    if (added)
      g_ptr_array_add(a->variants, g_strdup(row[CS_RUNS_COL_VARIANT]));
    char **labels = g_new0(char *, t->n_axes + 1);
    for (int i = 0; i < t->n_axes; i++)
      labels[i] = g_strdup(row[CS_RUNS_COL_FIRST_AXIS + i]);
    /* Labels joined by the unit separator, which no sensible label holds. */
    char *pkey = g_strjoinv("\x1f", labels);
    int p = intern(pidx, pkey, &added);
    g_free(pkey);
    if (added)
      g_ptr_array_add(a->points, labels);
    else
      g_strfreev(labels);
    const char *model = row[cs_runs_col_model(t)];
    gboolean ok = strcmp(row[cs_runs_col_status(t)], "ok") == 0;
    /* One row per run counts it: the total row, or the single row of a run
     * that did not run. */
    if (!ok || strcmp(model, "total") == 0)
      (*cell_counter(cells, v, p, ok ? 0 : 1))++;
    if (!ok)
      continue;
    char *gkey = g_strdup_printf("%d/%d/%s", v, p, model);
    int gi = intern(gidx, gkey, &added);
    g_free(gkey);
    if (added) {
      Group *g = g_new0(Group, 1);
      g->variant = v;
      g->point = p;
      g->model = g_strdup(model);
      g->n_metrics = nm;
      g->values = g_new0(GArray *, nm);
      g->stats = g_new0(Stat, nm);
      for (int m = 0; m < nm; m++)
        g->values[m] = g_array_new(FALSE, FALSE, sizeof(double));
      g_ptr_array_add(a->groups, g);
    }
    Group *g = g_ptr_array_index(a->groups, gi);
    g->runs++;
    for (int m = 0; m < nm; m++) {
      double x = cs_runs_cell_value(row[cs_runs_col_metric(t, m)]);
      if (isnan(x))
        g->stats[m].n_nan++;
      else
        g_array_append_val(g->values[m], x);
    }
  }
  for (guint gi = 0; gi < a->groups->len; gi++) {
    Group *g = g_ptr_array_index(a->groups, gi);
    for (int m = 0; m < nm; m++)
      g->stats[m] = compute(g->values[m], g->stats[m].n_nan);
  }
  /* The run counts per (variant, point), as dense arrays for printing. */
  int nv = (int)a->variants->len, np = (int)a->points->len;
  a->ok_runs = g_array_sized_new(FALSE, TRUE, sizeof(int), (guint)(nv * np));
  a->bad_runs = g_array_sized_new(FALSE, TRUE, sizeof(int), (guint)(nv * np));
  g_array_set_size(a->ok_runs, (guint)(nv * np));
  g_array_set_size(a->bad_runs, (guint)(nv * np));
  for (int v = 0; v < nv; v++)
    for (int p = 0; p < np; p++) {
      g_array_index(a->ok_runs, int, v * np + p) = *cell_counter(cells, v, p, 0);
      g_array_index(a->bad_runs, int, v * np + p) = *cell_counter(cells, v, p, 1);
    }
  g_hash_table_unref(vidx);
  g_hash_table_unref(pidx);
  g_hash_table_unref(gidx);
  g_hash_table_unref(cells);
  return a;
}

/* A statistic as aggregate.csv writes it: empty when NaN. */
static void append_number(GString *out, double v)
{
  if (isnan(v))
    return;
  char *s = cs_runs_format_double(v);
  g_string_append(out, s);
  g_free(s);
}

char *cs_aggregate_to_csv(const CsAggregate *a)
{
  GString *out = g_string_new("variant");
  for (int i = 0; i < a->n_axes; i++) {
    g_string_append_c(out, ',');
    cs_runs_append_csv_field(out, g_ptr_array_index(a->axis_names, i));
  }
  g_string_append(out, ",model,metric,n,n_nan,mean,sd,ci95\n");
  for (guint gi = 0; gi < a->groups->len; gi++) {
    const Group *g = g_ptr_array_index(a->groups, gi);
    char **labels = g_ptr_array_index(a->points, g->point);
    for (int m = 0; m < g->n_metrics; m++) {
      const Stat *s = &g->stats[m];
      cs_runs_append_csv_field(out, g_ptr_array_index(a->variants, g->variant));
      for (int i = 0; i < a->n_axes; i++) {
        g_string_append_c(out, ',');
        cs_runs_append_csv_field(out, labels[i]);
      }
      g_string_append_c(out, ',');
      cs_runs_append_csv_field(out, g->model);
      g_string_append_printf(out, ",%s,%d,%d,", (const char *)g_ptr_array_index(a->metrics, m),
                             s->n, s->n_nan);
      append_number(out, s->mean);
      g_string_append_c(out, ',');
      append_number(out, s->sd);
      g_string_append_c(out, ',');
      append_number(out, s->ci95);
      g_string_append_c(out, '\n');
    }
  }
  return g_string_free(out, FALSE);
}

/* A statistic as aggregate.json writes it: the %.17g text of aggregate.csv
 * (cJSON's own numbers keep 15 digits when those read back within an ulp, so
 * the two files would disagree in the last bit), null when NaN. */
static cJSON *number_or_null(double v)
{
  if (isnan(v))
    return cJSON_CreateNull();
  char *s = cs_runs_format_double(v);
  cJSON *n = cJSON_CreateRaw(s);
  g_free(s);
  return n;
}

char *cs_aggregate_to_json(const CsAggregate *a)
{
  cJSON *root = cJSON_CreateObject();
  cJSON *axes = cJSON_AddArrayToObject(root, "axes");
  for (int i = 0; i < a->n_axes; i++)
    cJSON_AddItemToArray(axes, cJSON_CreateString(g_ptr_array_index(a->axis_names, i)));
  cJSON *metrics = cJSON_AddArrayToObject(root, "metrics");
  for (guint m = 0; m < a->metrics->len; m++)
    cJSON_AddItemToArray(metrics, cJSON_CreateString(g_ptr_array_index(a->metrics, m)));
  cJSON *groups = cJSON_AddArrayToObject(root, "groups");
  for (guint gi = 0; gi < a->groups->len; gi++) {
    const Group *g = g_ptr_array_index(a->groups, gi);
    char **labels = g_ptr_array_index(a->points, g->point);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "variant", g_ptr_array_index(a->variants, g->variant));
    cJSON *point = cJSON_AddObjectToObject(o, "point");
    for (int i = 0; i < a->n_axes; i++)
      cJSON_AddStringToObject(point, g_ptr_array_index(a->axis_names, i), labels[i]);
    cJSON_AddStringToObject(o, "model", g->model);
    cJSON_AddNumberToObject(o, "runs", g->runs);
    cJSON *stats = cJSON_AddObjectToObject(o, "stats");
    for (int m = 0; m < g->n_metrics; m++) {
      const Stat *s = &g->stats[m];
      cJSON *st = cJSON_CreateObject();
      cJSON_AddNumberToObject(st, "n", s->n);
      cJSON_AddNumberToObject(st, "n_nan", s->n_nan);
      cJSON_AddItemToObject(st, "mean", number_or_null(s->mean));
      cJSON_AddItemToObject(st, "sd", number_or_null(s->sd));
      cJSON_AddItemToObject(st, "ci95", number_or_null(s->ci95));
      cJSON_AddItemToObject(stats, g_ptr_array_index(a->metrics, m), st);
    }
    cJSON_AddItemToArray(groups, o);
  }
  char *text = cJSON_Print(root);
  char *out = g_strconcat(text, "\n", NULL);
  cJSON_free(text);
  cJSON_Delete(root);
  return out;
}

/* Decimals of the table's numbers, one count for all so that columns line
 * up: from the largest mean shown, about four significant digits. */
static int table_decimals(const CsAggregate *a, int metric, const char *model)
{
  double top = 0.0;
  for (guint gi = 0; gi < a->groups->len; gi++) {
    const Group *g = g_ptr_array_index(a->groups, gi);
    if (strcmp(g->model, model) == 0 && g->stats[metric].n > 0)
      top = MAX(top, fabs(g->stats[metric].mean));
  }
  return top >= 100.0 ? 1 : top >= 1.0 ? 2 : 4;
}

static char *cell_text(const CsAggregate *a, int v, int p, int metric, const char *model, int d)
{
  int np = (int)a->points->len;
  int ok = g_array_index(a->ok_runs, int, v * np + p);
  int bad = g_array_index(a->bad_runs, int, v * np + p);
  if (ok == 0)
    return g_strdup(bad ? "invalid" : "-");
  const Group *g = NULL;
  for (guint gi = 0; gi < a->groups->len && !g; gi++) {
    const Group *c = g_ptr_array_index(a->groups, gi);
    if (c->variant == v && c->point == p && strcmp(c->model, model) == 0)
      g = c;
  }
  GString *s = g_string_new(NULL);
  if (!g) {
    g_string_append(s, "-");
  } else {
    const Stat *st = &g->stats[metric];
    if (st->n == 0)
      g_string_append(s, "nan");
    else if (st->n == 1)
      g_string_append_printf(s, "%.*f", d, st->mean);
    else
      g_string_append_printf(s, "%.*f ± %.*f", d, st->mean, d, st->ci95);
  }
  if (bad)
    g_string_append_printf(s, " (%d invalid)", bad);
  return g_string_free(s, FALSE);
}

static void print_padded(FILE *out, const char *s, int width, gboolean last)
{
  int len = (int)g_utf8_strlen(s, -1);
  fputs(s, out);
  if (!last)
    for (int i = len; i < width + 2; i++)
      fputc(' ', out);
}

void cs_aggregate_print_table(const CsAggregate *a, int metric, const char *model, FILE *out)
{
  int nv = (int)a->variants->len, np = (int)a->points->len;
  int ncol = a->n_axes + nv;
  int d = table_decimals(a, metric, model);
  /* The table as strings first, to size the columns. */
  char ***cells = g_new0(char **, np + 1);
  int *width = g_new0(int, MAX(ncol, 1));
  cells[0] = g_new0(char *, ncol + 1);
  for (int i = 0; i < a->n_axes; i++)
    cells[0][i] = g_strdup(g_ptr_array_index(a->axis_names, i));
  for (int v = 0; v < nv; v++)
    cells[0][a->n_axes + v] = g_strdup(g_ptr_array_index(a->variants, v));
  for (int p = 0; p < np; p++) {
    char **labels = g_ptr_array_index(a->points, p);
    cells[p + 1] = g_new0(char *, ncol + 1);
    for (int i = 0; i < a->n_axes; i++)
      cells[p + 1][i] = g_strdup(labels[i]);
    for (int v = 0; v < nv; v++)
      cells[p + 1][a->n_axes + v] = cell_text(a, v, p, metric, model, d);
  }
  for (int r = 0; r <= np; r++)
    for (int c = 0; c < ncol; c++)
      width[c] = MAX(width[c], (int)g_utf8_strlen(cells[r][c], -1));
  fprintf(out, "%s of %s: mean ± 95 %% CI over seeds\n",
          (const char *)g_ptr_array_index(a->metrics, metric), model);
  for (int r = 0; r <= np; r++) {
    for (int c = 0; c < ncol; c++)
      print_padded(out, cells[r][c], width[c], c == ncol - 1);
    fputc('\n', out);
    g_strfreev(cells[r]);
  }
  g_free(cells);
  g_free(width);
}
