/* A sweep's figures: a metric against an axis, one series per variant with
 * its 95 % confidence interval over the seeds (the thesis' Figure 6.1), drawn
 * from DIR/aggregate.csv with the names and orders of DIR/sweep.json; see
 * figures.h.
 *
 * Which figures: for each axis whose labels are all numbers (or the first
 * axis when none is, its labels then spread evenly along x), the metric
 * against that axis, one figure per combination of the other axes' labels;
 * with no axis, the variants side by side. The .dat copies aggregate.csv's
 * mean and ci95 texts unchanged, so that the figure shows exactly the
 * published numbers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_input.h"
#include "figures.h"
#include "common/csv.h"

#define P99 "latency_p99_ms"

typedef struct {
  char *name;
  GPtrArray *labels; /* char * */
  gboolean numeric;  /* every label is a finite number */
  int *order;        /* label indices in x order (by value when numeric) */
} Axis;

typedef struct {
  char *mean, *ci95; /* aggregate.csv's texts, "" when empty */
  int n;
} Cell;

typedef struct {
  const char *dir;
  char *experiment;
  GPtrArray *variants; /* char * */
  Axis *axes;
  int n_axes;
  int n_seeds;
  const char *model;
  GHashTable *cells; /* "metric\x1fvariant\x1flabel..." -> Cell */
  GHashTable *slos;  /* "variant\x1flabel..." -> double *: the SLO of the model at
                        that point (of every model for "total"), NaN when they differ */
  gboolean search;      /* sweep.json has "search": a goodput-search sweep */
  gboolean metric_seen; /* aggregate.csv has the figure's metric */
} Sweep;

static void cell_free(gpointer p)
{
  Cell *c = p;
  g_free(c->mean);
  g_free(c->ci95);
  g_free(c);
}

static void sweep_clear(Sweep *s)
{
  g_free(s->experiment);
  if (s->variants)
    g_ptr_array_unref(s->variants);
  for (int a = 0; a < s->n_axes; a++) {
    g_free(s->axes[a].name);
    g_ptr_array_unref(s->axes[a].labels);
    g_free(s->axes[a].order);
  }
  g_free(s->axes);
  if (s->cells)
    g_hash_table_unref(s->cells);
  if (s->slos)
    g_hash_table_unref(s->slos);
}

/* A label as a number, when the whole of it is one. */
static gboolean label_number(const char *s, double *out)
{
  char *end;
  if (!*s || g_ascii_isspace(*s))
    return FALSE;
  *out = g_ascii_strtod(s, &end);
  return *end == '\0' && isfinite(*out);
}

typedef struct {
  double value;
  int index;
} Ranked;

static int by_value(const void *a, const void *b)
{
  const Ranked *x = a, *y = b;
  return x->value < y->value ? -1 : x->value > y->value ? 1 : x->index - y->index;
}

/* Sets ax->numeric and ax->order: label indices by value when every label
 * is a number (equal values in label order), else in label order. */
static void order_axis(Axis *ax)
{
  int n = (int)ax->labels->len;
  Ranked *r = g_new(Ranked, n);
  ax->numeric = TRUE;
  for (int i = 0; i < n; i++) {
    r[i].index = i;
    ax->numeric = ax->numeric && label_number(g_ptr_array_index(ax->labels, i), &r[i].value);
  }
  if (ax->numeric)
    qsort(r, (size_t)n, sizeof *r, by_value);
  ax->order = g_new(int, n);
  for (int i = 0; i < n; i++)
    ax->order[i] = r[i].index;
  g_free(r);
}

static gboolean read_string_list(const cJSON *a, const char *file, const char *path,
                                 GPtrArray *out, GError **error)
{
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) == 0)
    return cs_json_fail(error, file, path, "expected a non-empty array of strings");
  int i = 0;
  const cJSON *x;
  cJSON_ArrayForEach(x, a)
  {
    const char *s;
    char *where = cs_json_path_index(path, i++);
    gboolean ok = cs_json_value_string(x, &s, file, where, error);
    g_free(where);
    if (!ok)
      return FALSE;
    g_ptr_array_add(out, g_strdup(s));
  }
  return TRUE;
}

/* sweep.json: the experiment's name, its variants, axes and seeds. */
static gboolean read_sweep_json(Sweep *s, GError **error)
{
  char *path = g_build_filename(s->dir, "sweep.json", NULL);
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    char *summary = g_build_filename(s->dir, "summary.json", NULL);
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO,
                "%s: absent: %s is not the output directory of a sweep (clustersim sweep "
                "EXPERIMENT -o DIR, or sweep merge -o DIR)%s",
                path, s->dir,
                g_file_test(summary, G_FILE_TEST_EXISTS)
                  ? "; it is a run's: clustersim plot draws its figures" : "");
    g_free(summary);
    g_free(path);
    return FALSE;
  }
  cJSON *d = cs_json_load_file(path, error);
  const char *name = NULL;
  gboolean ok = d && cs_json_expect_object(d, path, NULL, error) &&
                cs_json_read_string(d, "experiment", TRUE, &name, path, NULL, error);
  if (ok) {
    s->experiment = g_strdup(name);
    s->search = cJSON_HasObjectItem(d, "search");
    s->variants = g_ptr_array_new_with_free_func(g_free);
    ok = read_string_list(cJSON_GetObjectItemCaseSensitive(d, "variants"), path, "variants",
                          s->variants, error);
  }
  const cJSON *axes = d ? cJSON_GetObjectItemCaseSensitive(d, "axes") : NULL;
  if (ok && !cJSON_IsArray(axes))
    ok = cs_json_fail(error, path, "axes", "expected an array of {\"name\", \"labels\"}");
  if (ok) {
    s->n_axes = cJSON_GetArraySize(axes);
    s->axes = g_new0(Axis, MAX(s->n_axes, 1));
    for (int a = 0; a < s->n_axes; a++)
      s->axes[a].labels = g_ptr_array_new_with_free_func(g_free);
  }
  const cJSON *o = ok ? axes->child : NULL;
  for (int a = 0; ok && a < s->n_axes; a++, o = o->next) {
    Axis *ax = &s->axes[a];
    char *where = cs_json_path_index("axes", a);
    char *lw = cs_json_path_key(where, "labels");
    ok = cs_json_expect_object(o, path, where, error) &&
         cs_json_read_string(o, "name", TRUE, &name, path, where, error) &&
         read_string_list(cJSON_GetObjectItemCaseSensitive(o, "labels"), path, lw, ax->labels,
                          error);
    if (ok)
      ax->name = g_strdup(name);
    g_free(where);
    g_free(lw);
  }
  const cJSON *seeds = d ? cJSON_GetObjectItemCaseSensitive(d, "seeds") : NULL;
  if (ok && !cJSON_IsArray(seeds))
    ok = cs_json_fail(error, path, "seeds", "expected an array of seeds");
  if (ok)
    s->n_seeds = cJSON_GetArraySize(seeds);
  for (int a = 0; ok && a < s->n_axes; a++)
    order_axis(&s->axes[a]);
  cJSON_Delete(d);
  g_free(path);
  return ok;
}

static gboolean in_list(const GPtrArray *list, const char *s)
{
  for (guint i = 0; i < list->len; i++)
    if (strcmp(g_ptr_array_index(list, i), s) == 0)
      return TRUE;
  return FALSE;
}

/* A mean or ci95 cell: empty, or a finite number. */
static gboolean check_number(const CsCsv *csv, const char *text, const char *column,
                             GError **error)
{
  double v;
  char *label = g_strdup_printf("column %s", column);
  gboolean ok = !*text || cs_csv_parse_double(csv, text, label, FALSE, &v, error);
  g_free(label);
  return ok;
}

/* Keeps the SLO of a point (f: variant and axis labels), which a latency
 * figure marks: the model's, or for "total" that of every model when they
 * all have the same. */
static void note_slo(Sweep *s, char **f, const char *model, const char *mean)
{
  gboolean total = strcmp(s->model, "total") == 0;
  if (total ? strcmp(model, "total") == 0 : strcmp(model, s->model) != 0)
    return;
  double v;
  if (!label_number(mean, &v))
    v = NAN;
  GString *key = g_string_new(f[0]);
  for (int a = 0; a < s->n_axes; a++)
    g_string_append_printf(key, "\x1f%s", f[a + 1]);
  double *slo = g_hash_table_lookup(s->slos, key->str);
  if (!slo) {
    slo = g_new(double, 1);
    *slo = v;
    g_hash_table_insert(s->slos, g_string_free(key, FALSE), slo);
    return;
  }
  if (*slo != v)
    *slo = NAN;
  g_string_free(key, TRUE);
}

/* aggregate.csv: the cells of the model and metrics, checked against
 * sweep.json (a file of another sweep would draw wrong figures). */
static gboolean read_aggregate(Sweep *s, const char *const *metrics, GError **error)
{
  char *path = g_build_filename(s->dir, "aggregate.csv", NULL);
  GString *expect = g_string_new("variant");
  for (int a = 0; a < s->n_axes; a++)
    g_string_append_printf(expect, ",%s", s->axes[a].name);
  g_string_append(expect, ",model,metric,n,n_nan,mean,sd,ci95");
  size_t ncol = (size_t)s->n_axes + 8;
  CsCsv csv = { 0 };
  gboolean ok = cs_csv_open(&csv, path, error) && cs_csv_read_header(&csv, expect->str, error);
  if (ok) {
    GString *got = g_string_new(NULL);
    for (size_t i = 0; i < csv.n_fields; i++)
      g_string_append_printf(got, "%s%s", i ? "," : "", csv.fields[i]);
    if (strcmp(got->str, expect->str) != 0) {
      cs_csv_fail(&csv, error, "expected the columns %s (the axes of sweep.json beside it), got %s",
                  expect->str, got->str);
      ok = FALSE;
    }
    g_string_free(got, TRUE);
  }
  s->cells = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, cell_free);
  s->slos = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  GPtrArray *models = g_ptr_array_new_with_free_func(g_free);
  int rc = 0;
  while (ok && (rc = cs_csv_next(&csv, error)) == 1) {
    if (!cs_csv_expect_fields(&csv, ncol, error)) {
      ok = FALSE;
      break;
    }
    char **f = csv.fields;
    const char *model = f[s->n_axes + 1], *metric = f[s->n_axes + 2];
    if (!in_list(models, model))
      g_ptr_array_add(models, g_strdup(model));
    if (strcmp(metric, "slo_ms") == 0)
      note_slo(s, f, model, f[s->n_axes + 5]);
    s->metric_seen = s->metric_seen || strcmp(metric, metrics[0]) == 0;
    if (strcmp(model, s->model) != 0 || !g_strv_contains(metrics, metric))
      continue;
    int64_t n;
    if (!in_list(s->variants, f[0])) {
      cs_csv_fail(&csv, error, "variant \"%s\" is not a variant of sweep.json", f[0]);
      ok = FALSE;
    }
    for (int a = 0; ok && a < s->n_axes; a++)
      if (!in_list(s->axes[a].labels, f[a + 1])) {
        cs_csv_fail(&csv, error, "%s \"%s\" is not a label of that axis in sweep.json",
                    s->axes[a].name, f[a + 1]);
        ok = FALSE;
      }
    ok = ok && cs_csv_parse_count(&csv, f[s->n_axes + 3], "column n", &n, error) &&
         check_number(&csv, f[s->n_axes + 5], "mean", error) &&
         check_number(&csv, f[s->n_axes + 7], "ci95", error);
    if (!ok)
      break;
    GString *key = g_string_new(metric);
    for (int a = 0; a <= s->n_axes; a++)
      g_string_append_printf(key, "\x1f%s", f[a]);
    Cell *c = g_new0(Cell, 1);
    c->mean = g_strdup(f[s->n_axes + 5]);
    c->ci95 = g_strdup(f[s->n_axes + 7]);
    c->n = (int)n;
    g_hash_table_replace(s->cells, g_string_free(key, FALSE), c);
  }
  if (rc < 0)
    ok = FALSE;
  if (ok && !s->metric_seen) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: no metric \"%s\"%s", path, metrics[0],
                g_str_has_prefix(metrics[0], "search_") || strcmp(metrics[0], "max_load_rps") == 0
                  ? " (only a goodput-search sweep, an experiment with \"search\", has it)"
                  : "");
    ok = FALSE;
  }
  if (ok && g_hash_table_size(s->cells) == 0) {
    g_ptr_array_add(models, NULL);
    char *list = g_strjoinv(", ", (char **)models->pdata);
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: no statistics of model \"%s\" (models: %s)", path, s->model,
                *list ? list : "none");
    g_free(list);
    ok = FALSE;
  }
  g_ptr_array_unref(models);
  if (csv.fp)
    cs_csv_close(&csv);
  g_string_free(expect, TRUE);
  g_free(path);
  return ok;
}

/* What a metric is, with its unit, for the y axis. */
static const char *metric_label(const char *m)
{
  static const char *const labels[][2] = {
    { "slo_ms", "SLO (ms)" },
    { "offered_rps", "offered load (req/s)" },
    { "planned_rps", "planned load (req/s)" },
    { "submitted_rps", "submitted load (req/s)" },
    { "throughput_rps", "throughput (req/s)" },
    { "goodput_rps", "goodput (req/s)" },
    { "expected_goodput_rps", "expected goodput (req/s)" },
    { "bad_rate", "bad rate (fraction of measured requests)" },
    { "generated", "requests generated" },
    { "measured", "measured requests" },
    { "completed", "completed requests" },
    { "good", "requests within the SLO" },
    { "late", "late requests" },
    { "dropped", "dropped requests" },
    { "unserved", "unserved requests" },
    { "failed", "failed requests" },
    { "latency_p50_ms", "p50 latency (ms)" },
    { "latency_p90_ms", "p90 latency (ms)" },
    { "latency_p95_ms", "p95 latency (ms)" },
    { P99, "p99 latency (ms)" },
    { "latency_max_ms", "maximum latency (ms)" },
    { "latency_mean_ms", "mean latency (ms)" },
    { "batches", "batches" },
    { "mean_batch", "mean batch size (requests)" },
    { "median_batch", "median batch size (requests)" },
    { "p90_batch", "p90 batch size (requests)" },
    { "drain_s", "drain time (s)" },
    { "cost_per_hour", "cluster price (dollars per hour)" },
    { "goodput_per_dollar", "good requests per dollar" },
    { "max_load_rps", "goodput: highest load within the objective (req/s)" },
    { "search_multiplier", "rate multiplier of the highest passing load" },
    { "search_probes", "simulations of the search" },
    { "max_load_per_dollar", "requests per dollar at the highest load within the objective" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(labels); i++)
    if (strcmp(labels[i][0], m) == 0)
      return labels[i][1];
  return m;
}

/* One figure: metric against axis xa (-1: the variants side by side), at
 * the labels fixed[] of the other axes. */
typedef struct {
  const char *metric;
  int xa;
  const int *fixed; /* a label index per axis; xa's is ignored */
} View;

static Cell *lookup(const Sweep *s, const View *v, const char *variant, int xlabel)
{
  GString *key = g_string_new(v->metric);
  g_string_append_printf(key, "\x1f%s", variant);
  for (int a = 0; a < s->n_axes; a++)
    g_string_append_printf(key, "\x1f%s",
                           (const char *)g_ptr_array_index(
                             s->axes[a].labels, a == v->xa ? xlabel : v->fixed[a]));
  Cell *c = g_hash_table_lookup(s->cells, key->str);
  g_string_free(key, TRUE);
  return c;
}

/* "load = high, slo = 150": the other axes' labels of a figure. */
static char *fixed_text(const Sweep *s, const View *v, const char *sep, const char *eq)
{
  GString *t = g_string_new(NULL);
  for (int a = 0; a < s->n_axes; a++)
    if (a != v->xa)
      g_string_append_printf(t, "%s%s%s%s", t->len ? sep : "", s->axes[a].name, eq,
                             (const char *)g_ptr_array_index(s->axes[a].labels, v->fixed[a]));
  return g_string_free(t, FALSE);
}

/* The SLO a latency figure marks: the one SLO of every point it draws, NaN
 * when they differ or none is known. */
static double view_slo(const Sweep *s, const View *v)
{
  double slo = NAN;
  gboolean seen = FALSE;
  int nx = v->xa >= 0 ? (int)s->axes[v->xa].labels->len : 1;
  for (guint vi = 0; vi < s->variants->len; vi++)
    for (int x = 0; x < nx; x++) {
      GString *key = g_string_new(g_ptr_array_index(s->variants, vi));
      for (int a = 0; a < s->n_axes; a++)
        g_string_append_printf(key, "\x1f%s",
                               (const char *)g_ptr_array_index(
                                 s->axes[a].labels, a == v->xa ? x : v->fixed[a]));
      const double *p = g_hash_table_lookup(s->slos, key->str);
      g_string_free(key, TRUE);
      if (!p)
        continue;
      if (seen && !(*p == slo))
        return NAN;
      slo = *p;
      seen = TRUE;
    }
  return slo;
}

/* A row: the variant, x, every axis' label (tidy: each row says which
 * point it is), then the statistics. */
static void append_dat_row(GString *d, const Sweep *s, const View *v, const char *variant,
                           const char *x, int xlabel, const Cell *c)
{
  cs_dat_field(d, variant);
  g_string_append_printf(d, "\t%s", x);
  for (int a = 0; a < s->n_axes; a++) {
    g_string_append_c(d, '\t');
    cs_dat_field(d, g_ptr_array_index(s->axes[a].labels, a == v->xa ? xlabel : v->fixed[a]));
  }
  g_string_append_printf(d, "\t%s\t%s\t%d\n", *c->mean ? c->mean : "NaN",
                         *c->ci95 ? c->ci95 : "NaN", c->n);
}

/* The gnuplot style of series i: colour, point and dash type (dashes only
 * once the palette repeats). */
static void append_style(GString *gp, int i)
{
  static const int points[] = { 7, 5, 9, 11, 13, 6, 4, 8 };
  g_string_append_printf(gp, "set style line %d lc rgb \"%s\" lw 2 pt %d ps 0.9 dt %d\n", i + 1,
                         cs_figure_colour(i), points[i % 8], 1 + i / 8);
}

/* Two lines: what against what (the other axes' labels in parentheses),
 * then the statistics and the experiment. */
static char *figure_title(const Sweep *s, const View *v, const char *ylabel, const char *model,
                          const char *fixed)
{
  const Axis *ax = v->xa >= 0 ? &s->axes[v->xa] : NULL;
  GString *title = g_string_new(NULL);
  g_string_append_printf(title, "%s of %s vs %s", ylabel, model, ax ? ax->name : "variant");
  /* "Goodput", but "p99 latency". */
  if (g_ascii_islower(title->str[0]) && g_ascii_islower(title->str[1]))
    title->str[0] = g_ascii_toupper(title->str[0]);
  /* The unit belongs to the y label, not to the title. */
  char *paren = strstr(title->str, " (");
  if (paren)
    g_string_erase(title, paren - title->str, (gssize)strcspn(paren, ")") + 1);
  if (*fixed)
    g_string_append_printf(title, " (%s)", fixed);
  g_string_append_printf(title, "\nmean ± 95 %% confidence interval over %d seed%s · ",
                         s->n_seeds, s->n_seeds == 1 ? "" : "s");
  g_string_append(title, s->experiment);
  return g_string_free(title, FALSE);
}

/* The smallest step between the values of a numeric axis (1 otherwise): the
 * unit of the series' dodge. */
static double min_step(const Axis *ax)
{
  double step = 1.0, prev = 0, x = 0;
  gboolean have = FALSE;
  for (int k = 0; ax && ax->numeric && k < (int)ax->labels->len; k++) {
    label_number(g_ptr_array_index(ax->labels, ax->order[k]), &x);
    if (k > 0 && x > prev && (!have || x - prev < step)) {
      step = x - prev;
      have = TRUE;
    }
    prev = x;
  }
  return step;
}

/* The x tics: every value of a short numeric axis (a long one keeps
 * gnuplot's), every label of a categorical one, or every variant without an
 * axis, at its position. */
static void append_xtics(GString *gp, const Sweep *s, const Axis *ax)
{
  int n = ax ? (int)ax->labels->len : (int)s->variants->len;
  if (ax && ax->numeric && n > 12)
    return;
  g_string_append(gp, "set xtics (");
  glong longest = 0;
  for (int k = 0; k < n; k++) {
    const char *l = ax ? g_ptr_array_index(ax->labels, ax->order[k])
                       : g_ptr_array_index(s->variants, k);
    longest = MAX(longest, g_utf8_strlen(l, -1));
    g_string_append(gp, k ? ", " : "");
    cs_gp_tic(gp, l);
    if (ax && ax->numeric)
      g_string_append_printf(gp, " %s", l);
    else
      g_string_append_printf(gp, " %d", k);
  }
  /* About 75 characters fit side by side under the plot; longer labels
   * (a placement block's JSON, say) are slanted so that they do not run
   * into each other. */
  g_string_append_printf(gp, ") noenhanced%s\n",
                         n * (longest + 2) > 75 ? " rotate by -25 left" : "");
}

static void make_figure(const Sweep *s, const View *v, CsFigureSet *set)
{
  const Axis *ax = v->xa >= 0 ? &s->axes[v->xa] : NULL;
  int nx = ax ? (int)ax->labels->len : 1;
  char *fixed = fixed_text(s, v, ", ", " = ");
  char *fixed_name = fixed_text(s, v, "_", "-");
  GString *name = g_string_new(NULL);
  if (strcmp(s->model, "total") != 0)
    g_string_append_printf(name, "%s_", s->model);
  g_string_append_printf(name, "%s_vs_%s%s%s", v->metric, ax ? ax->name : "variant",
                         *fixed_name ? "_" : "", fixed_name);
  /* The series: variants with at least one point, in sweep.json's order. */
  GString *dat = g_string_new(NULL);
  GArray *series = g_array_new(FALSE, FALSE, sizeof(int));
  /* The range of the means and of the bars' low ends (above 0), for a log
   * scale. */
  double lo_mean = INFINITY, hi_mean = 0, lo_bar = INFINITY;
  for (guint vi = 0; vi < s->variants->len; vi++) {
    const char *variant = g_ptr_array_index(s->variants, vi);
    GString *block = g_string_new(NULL);
    for (int k = 0; k < nx; k++) {
      int li = ax ? ax->order[k] : 0;
      const Cell *c = ax ? lookup(s, v, variant, li) : lookup(s, v, variant, 0);
      if (!c)
        continue; /* no run of this point ran */
      double m, ci;
      if (label_number(c->mean, &m)) {
        lo_mean = MIN(lo_mean, m);
        hi_mean = MAX(hi_mean, m);
        lo_bar = MIN(lo_bar, label_number(c->ci95, &ci) && m - ci > 0 ? m - ci : m);
      }
      char *x = ax && ax->numeric ? g_strdup(g_ptr_array_index(ax->labels, li))
                                  : g_strdup_printf("%d", ax ? k : (int)vi);
      append_dat_row(block, s, v, variant, x, li, c);
      g_free(x);
    }
    if (block->len) {
      g_string_append_printf(dat, "%s%s", series->len ? "\n\n" : "", block->str);
      g_array_append_val(series, vi);
    }
    g_string_free(block, TRUE);
  }
  const char *ylabel = metric_label(v->metric);
  const char *model = strcmp(s->model, "total") == 0 ? "all models" : s->model;
  if (series->len == 0) {
    cs_figure_set_note(set, "%s of %s vs %s%s%s: no run ran, no figure", v->metric, model,
                       ax ? ax->name : "variant", *fixed ? ", " : "", fixed);
    goto out;
  }
  CsFigure *f = cs_figure_set_add(set, name->str);
  char *what = g_strdup_printf("%s of %s vs %s%s%s, per variant, mean and 95 %% CI over seeds",
                               v->metric, model, ax ? ax->name : "variant", *fixed ? ", " : "",
                               fixed);
  g_string_append_printf(f->dat, "# clustersim sweep figure data: %s\n", what);
  g_string_append(f->dat, "# experiment ");
  cs_dat_field(f->dat, s->experiment);
  g_string_append_printf(f->dat,
                         ", from aggregate.csv (model %s, metric %s). One block per variant,\n"
                         "# separated by two blank lines (gnuplot's index 0, 1, ...). x: %s;\n"
                         "# mean and ci95 as in aggregate.csv (ci95: half-width of the 95 %% "
                         "confidence\n# interval of the mean over the n seeds; NaN when n < 2).\n"
                         "# variant\tx",
                         s->model, v->metric,
                         ax && ax->numeric ? "the axis value"
                         : ax              ? "the label's position (0, 1, ...; the x tics)"
                                           : "the variant's position (the x tics)");
  for (int a = 0; a < s->n_axes; a++) {
    g_string_append_c(f->dat, '\t');
    cs_dat_field(f->dat, s->axes[a].name);
  }
  g_string_append_printf(f->dat, "\tmean\tci95\tn\n%s", dat->str);

  GString *gp = f->gp;
  cs_gp_begin(f, what);
  char *title = figure_title(s, v, ylabel, model, fixed);
  /* Latencies of overloaded points run to seconds while the others stay at
   * milliseconds: a log scale keeps both readable. Bars reaching 0 or below
   * are drawn down to the bottom of the plot. */
  gboolean latency = g_str_has_prefix(v->metric, "latency_");
  double slo = latency ? view_slo(s, v) : NAN;
  gboolean logy = latency && lo_mean > 0 && isfinite(lo_mean) && hi_mean / lo_mean > 20;
  double ymin = logy ? pow(10.0, floor(log10(lo_bar))) : 0.0;
  g_string_append(gp, "set title ");
  cs_gp_string(gp, title);
  g_string_append(gp, " noenhanced\nset xlabel ");
  cs_gp_string(gp, ax ? ax->name : "variant");
  g_string_append(gp, " noenhanced\nset ylabel ");
  char *yl = logy ? g_strdup_printf("%s, log scale", ylabel) : g_strdup(ylabel);
  if (logy && g_str_has_suffix(ylabel, ")")) {
    g_free(yl);
    yl = g_strdup_printf("%.*s, log scale)", (int)strlen(ylabel) - 1, ylabel);
  }
  cs_gp_string(gp, yl);
  g_free(yl);
  /* On a log scale the top is the data's (plus the offset below), not the
   * next decade, which would squeeze the data into the lower part. */
  g_string_append_printf(gp, " noenhanced\n%sset yrange [%.17g:*]\n",
                         logy ? "set logscale y\nset autoscale yfixmax\n" : "", ymin);
  g_string_append_printf(gp, "ymin = %.17g\n"
                             "low(mean, ci) = mean - ci > ymin ? mean - ci : ymin\n",
                         ymin);
  double step = min_step(ax);
  append_xtics(gp, s, ax);
  g_string_append(gp, "set offsets graph 0.04, graph 0.04, graph 0.08, 0\n"
                      "set bars 0.6\n"
                      "set key outside right top vertical Left reverse samplen 2.5\n");
  if (!ax)
    g_string_append(gp, "unset key\n");
  /* Neighbouring series dodge * step apart: together at most 0.3 of the
   * step, 0.075 for two. */
  char *dodge = g_strdup_printf("%.17g", ax && series->len > 1 ? 0.3 / MAX(series->len, 4) : 0.0);
  g_string_append_printf(gp,
                         "# Series at one x are drawn dodge x the smallest step between x "
                         "values apart,\n"
                         "# so that their error bars do not hide each other; gnuplot -e "
                         "'dodge=0' draws\n# them at their exact x.\n"
                         "if (!exists(\"dodge\")) dodge = %s\n"
                         "step = %.17g\n"
                         "shift(i) = (i - %.17g) * dodge * step\n",
                         dodge, step, (series->len - 1) / 2.0);
  g_free(dodge);
  for (guint i = 0; i < series->len; i++)
    append_style(gp, (int)i);
  cs_gp_outputs_begin(f);
  g_string_append(gp, "  plot \\\n");
  /* ci95 is NaN for one seed: a point without a bar. Lines join the points
   * of a numeric axis only: between categories there is nothing to join. */
  int mc = 3 + s->n_axes; /* the mean's column; ci95 follows */
  const char *style = ax && ax->numeric ? "yerrorlines" : "yerrorbars";
  for (guint i = 0; i < series->len; i++) {
    const char *variant = g_ptr_array_index(s->variants, g_array_index(series, int, i));
    g_string_append_printf(gp,
                           "    \"%s.dat\" index %u using ($2 + shift(%u)):%d:"
                           "(low($%d, valid(%d) ? $%d : 0)):($%d + (valid(%d) ? $%d : 0)) "
                           "with %s ls %u title ",
                           f->name, i, i, mc, mc, mc + 1, mc + 1, mc, mc + 1, mc + 1, style,
                           i + 1);
    cs_gp_string(gp, variant);
    g_string_append(gp, i + 1 < series->len || (latency && isfinite(slo)) ? ", \\\n" : "\n");
  }
  if (latency && isfinite(slo))
    g_string_append_printf(gp, "    %.17g with lines dt 2 lw 1.5 lc rgb \"#707070\" title \"SLO (%g ms)\"\n",
                           slo, slo);
  cs_gp_end(f);
  g_free(title);
  g_free(what);
out:
  g_array_unref(series);
  g_string_free(dat, TRUE);
  g_string_free(name, TRUE);
  g_free(fixed);
  g_free(fixed_name);
}

/* Every combination of the other axes' labels, first axis slowest. */
static void make_views(const Sweep *s, const char *metric, int xa, CsFigureSet *set)
{
  int *fixed = g_new0(int, MAX(s->n_axes, 1));
  for (;;) {
    View v = { .metric = metric, .xa = xa, .fixed = fixed };
    make_figure(s, &v, set);
    int a = s->n_axes - 1;
    for (; a >= 0; a--) {
      if (a == xa)
        continue;
      if (++fixed[a] < (int)s->axes[a].labels->len)
        break;
      fixed[a] = 0;
    }
    if (a < 0)
      break;
  }
  g_free(fixed);
}

CsFigureSet *cs_figures_sweep(const char *dir, const char *metric, const char *model,
                              GError **error)
{
  Sweep s = { .dir = dir, .model = model };
  if (!read_sweep_json(&s, error)) {
    sweep_clear(&s);
    return NULL;
  }
  if (!metric)
    metric = s.search ? "max_load_rps" : "goodput_rps";
  const char *metrics[] = { metric, strcmp(metric, P99) ? P99 : NULL, NULL };
  if (!read_aggregate(&s, metrics, error)) {
    sweep_clear(&s);
    return NULL;
  }
  CsFigureSet *set = cs_figure_set_new();
  for (int m = 0; metrics[m]; m++) {
    gboolean any = FALSE;
    for (int a = 0; a < s.n_axes; a++)
      if (s.axes[a].numeric) {
        make_views(&s, metrics[m], a, set);
        any = TRUE;
      }
    if (!any)
      make_views(&s, metrics[m], s.n_axes > 0 ? 0 : -1, set);
  }
  sweep_clear(&s);
  return set;
}
