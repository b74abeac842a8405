/* Trace statistics for `clustersim trace inspect` and their JSON and table
 * output; see trace.h.
 *
 * All formats feed one accumulator: per-function counts (hash table, one
 * entry per function), per-minute counts over the span (one slot per minute)
 * and a running mean/variance of inter-arrival gaps (Welford), so memory
 * grows with functions and span, not rows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_input.h"
#include "trace.h"
#include "common/csv.h"

/* A timestamped trace whose rows spread over more minutes than this is
 * refused rather than given a huge per-minute table (14 days = 20,160). */
#define MAX_SPAN_MINUTES INT64_C(10000000)

typedef struct {
  char *app;
  char *function;
  int64_t invocations;
} FunctionCount;

typedef struct {
  GHashTable *functions; /* key -> FunctionCount* */
  GHashTable *apps;      /* set of app keys */
  GArray *per_minute;    /* int64 invocations of minute first_minute + i */
  int64_t first_minute;
  gboolean started;
  GString *key;          /* scratch */
  /* Gaps between consecutive arrivals (Welford's running moments). */
  gboolean have_prev;
  double prev_s;
  int64_t n_gaps;
  double gap_mean;
  double gap_m2;
} Acc;

static void function_count_free(gpointer p)
{
  FunctionCount *f = p;
  g_free(f->app);
  g_free(f->function);
  g_free(f);
}

static void acc_init(Acc *a)
{
  memset(a, 0, sizeof *a);
  a->functions = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, function_count_free);
  a->apps = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  a->per_minute = g_array_new(FALSE, TRUE, sizeof(int64_t));
  a->key = g_string_new(NULL);
}

static void acc_clear(Acc *a)
{
  g_hash_table_destroy(a->functions);
  g_hash_table_destroy(a->apps);
  g_array_free(a->per_minute, TRUE);
  g_string_free(a->key, TRUE);
}

/* Counts n invocations of a function; owner may be NULL (MAF 2021). The key
 * joins the hashes with ',' which cannot occur in them. */
static void acc_function(Acc *a, const char *owner, const char *app, const char *function,
                         int64_t n)
{
  g_string_truncate(a->key, 0);
  if (owner)
    g_string_append_printf(a->key, "%s,", owner);
  g_string_append(a->key, app);
  if (!g_hash_table_contains(a->apps, a->key->str))
    g_hash_table_add(a->apps, g_strdup(a->key->str));
  g_string_append_printf(a->key, ",%s", function);
  FunctionCount *f = g_hash_table_lookup(a->functions, a->key->str);
  if (!f) {
    f = g_new0(FunctionCount, 1);
    f->app = g_strdup(app);
    f->function = g_strdup(function);
    g_hash_table_insert(a->functions, g_strdup(a->key->str), f);
  }
  f->invocations += n;
}

/* Records one arrival at t_s seconds (non-decreasing across calls). */
static gboolean acc_arrival(Acc *a, double t_s, const char *path, GError **error)
{
  int64_t minute = (int64_t)floor(t_s / 60.0);
  if (!a->started) {
    a->started = TRUE;
    a->first_minute = minute;
  }
  int64_t index = minute - a->first_minute;
  if (index >= MAX_SPAN_MINUTES) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: arrivals span more than %" G_GINT64_FORMAT " minutes (%.0f s and %.0f s); "
                "is a time column in the wrong unit?",
                path, MAX_SPAN_MINUTES, (double)a->first_minute * 60.0, t_s);
    return FALSE;
  }
  if ((guint)index >= a->per_minute->len)
    g_array_set_size(a->per_minute, (guint)index + 1); /* zero-filled */
  g_array_index(a->per_minute, int64_t, index)++;
  if (a->have_prev) {
    double gap = t_s - a->prev_s;
    a->n_gaps++;
    double delta = gap - a->gap_mean;
    a->gap_mean += delta / (double)a->n_gaps;
    a->gap_m2 += delta * (gap - a->gap_mean);
  }
  a->have_prev = TRUE;
  a->prev_s = t_s;
  return TRUE;
}

static int compare_int64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Busiest first; hashes break ties so the order never depends on the hash
 * table. */
static int compare_busiest(const void *a, const void *b)
{
  const FunctionCount *x = *(FunctionCount *const *)a, *y = *(FunctionCount *const *)b;
  if (x->invocations != y->invocations)
    return x->invocations > y->invocations ? -1 : 1;
  int c = strcmp(x->function, y->function);
  return c ? c : strcmp(x->app, y->app);
}

/* Fills the count-derived fields of out from the accumulator. */
static void acc_finish(Acc *a, CsTraceStats *out)
{
  if (out->has_functions) {
    out->functions = g_hash_table_size(a->functions);
    out->apps = g_hash_table_size(a->apps);
    GPtrArray *values = g_ptr_array_new();
    GHashTableIter it;
    gpointer v;
    g_hash_table_iter_init(&it, a->functions);
    while (g_hash_table_iter_next(&it, NULL, &v))
      g_ptr_array_add(values, v);
    qsort(values->pdata, values->len, sizeof(gpointer), compare_busiest);
    for (guint i = 0; i < values->len && i < CS_TRACE_TOP_N; i++) {
      const FunctionCount *f = values->pdata[i];
      out->top[i].app = g_strdup(f->app);
      out->top[i].function = g_strdup(f->function);
      out->top[i].invocations = f->invocations;
      out->n_top = (int)i + 1;
    }
    g_ptr_array_free(values, TRUE);
  }
  guint n = a->per_minute->len;
  out->first_minute = a->first_minute;
  out->last_minute = a->first_minute + (int64_t)n - 1;
  out->span_minutes = n;
  if (n > 0) {
    int64_t *sorted = g_new(int64_t, n);
    memcpy(sorted, a->per_minute->data, n * sizeof(int64_t));
    qsort(sorted, n, sizeof *sorted, compare_int64);
    out->rate_min = (double)sorted[0];
    out->rate_max = (double)sorted[n - 1];
    out->rate_median = n % 2 ? (double)sorted[n / 2]
                             : ((double)sorted[n / 2 - 1] + (double)sorted[n / 2]) / 2.0;
    g_free(sorted);
  }
  if (out->has_timestamps && a->n_gaps >= 2 && a->gap_mean > 0)
    out->burstiness_cv = sqrt(a->gap_m2 / (double)a->n_gaps) / a->gap_mean;
}

static gboolean inspect_maf2019(const char *path, Acc *a, CsTraceStats *out, GError **error)
{
  CsMaf2019Reader *r = cs_maf2019_reader_open(path, NULL, NULL, error);
  if (!r)
    return FALSE;
  a->first_minute = cs_maf2019_reader_first_minute(r);
  g_array_set_size(a->per_minute, (guint)cs_maf2019_reader_n_minutes(r));
  int64_t *per_minute = (int64_t *)(void *)a->per_minute->data;
  CsMaf2019Record rec;
  int rc;
  while ((rc = cs_maf2019_reader_next(r, &rec, error)) > 0) {
    /* Every per-minute sum is at most the total, so this one check covers
     * them too. */
    if (out->invocations > INT64_MAX - rec.total) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                  "%s: line %" G_GINT64_FORMAT ": the file's total count overflows 64 bits",
                  path, rec.line);
      rc = -1;
      break;
    }
    out->rows++;
    out->invocations += rec.total;
    for (int m = 0; m < rec.n_minutes; m++)
      per_minute[m] += rec.counts[m];
    acc_function(a, rec.owner, rec.app, rec.function, rec.total);
  }
  cs_maf2019_reader_close(r);
  return rc == 0;
}

static gboolean maf2021_add(Acc *a, const CsMaf2021Record *rec, const char *path,
                            CsTraceStats *out, GError **error)
{
  if (out->rows == 0)
    out->first_s = rec->arrival_s;
  out->last_s = rec->arrival_s;
  out->rows++;
  acc_function(a, NULL, rec->app, rec->func, 1);
  return acc_arrival(a, rec->arrival_s, path, error);
}

static gboolean inspect_maf2021(const char *path, CsTraceFlags flags, Acc *a, CsTraceStats *out,
                                GError **error)
{
  if (flags & CS_TRACE_ALLOW_UNSORTED) {
    CsMaf2021Trace *t = cs_maf2021_load_sorted(path, error);
    if (!t)
      return FALSE;
    gboolean ok = TRUE;
    for (size_t i = 0; ok && i < t->n_records; i++)
      ok = maf2021_add(a, &t->records[i], path, out, error);
    cs_maf2021_trace_free(t);
    return ok;
  }
  CsMaf2021Reader *r = cs_maf2021_reader_open(path, flags, error);
  if (!r)
    return FALSE;
  CsMaf2021Record rec;
  int rc;
  while ((rc = cs_maf2021_reader_next(r, &rec, error)) > 0)
    if (!maf2021_add(a, &rec, path, out, error)) {
      rc = -1;
      break;
    }
  cs_maf2021_reader_close(r);
  return rc == 0;
}

static gboolean llm_add(Acc *a, const CsAzureLlmRecord *rec, const char *path, CsTraceStats *out,
                        GError **error)
{
  double t_s = (double)rec->time_ns / 1e9;
  if (out->rows == 0)
    out->first_s = t_s;
  out->last_s = t_s;
  out->rows++;
  return acc_arrival(a, t_s, path, error);
}

static gboolean inspect_llm(const char *path, CsTraceFlags flags, Acc *a, CsTraceStats *out,
                            GError **error)
{
  gboolean ok = TRUE;
  int64_t origin = 0;
  if (flags & CS_TRACE_ALLOW_UNSORTED) {
    CsAzureLlmTrace *t = cs_azure_llm_load_sorted(path, error);
    if (!t)
      return FALSE;
    for (size_t i = 0; ok && i < t->n_records; i++)
      ok = llm_add(a, &t->records[i], path, out, error);
    origin = t->origin_epoch_ns;
    cs_azure_llm_trace_free(t);
  } else {
    CsAzureLlmReader *r = cs_azure_llm_reader_open(path, flags, error);
    if (!r)
      return FALSE;
    CsAzureLlmRecord rec;
    int rc = 0;
    while (ok && (rc = cs_azure_llm_reader_next(r, &rec, error)) > 0)
      ok = llm_add(a, &rec, path, out, error);
    ok = ok && rc == 0;
    origin = cs_azure_llm_reader_origin_epoch_ns(r);
    cs_azure_llm_reader_close(r);
  }
  if (ok)
    out->first_timestamp = cs_trace_format_epoch_ns(origin);
  return ok;
}

gboolean cs_trace_inspect(const char *path, CsTraceFormat format, CsTraceFlags flags,
                          CsTraceStats *out, GError **error)
{
  memset(out, 0, sizeof *out);
  out->first_s = out->last_s = NAN;
  out->rate_min = out->rate_median = out->rate_max = NAN;
  out->burstiness_cv = NAN;
  out->path = g_strdup(path);
  if (format == CS_TRACE_FORMAT_AUTO) {
    format = cs_trace_detect_format(path, error);
    if (format == CS_TRACE_FORMAT_AUTO)
      return FALSE;
  }
  out->format = format;
  if (!(out->sha256 = cs_trace_file_sha256(path, error)))
    return FALSE;
  Acc a;
  acc_init(&a);
  gboolean ok = FALSE;
  switch (format) {
  case CS_TRACE_FORMAT_MAF2019:
    out->has_functions = TRUE;
    ok = inspect_maf2019(path, &a, out, error);
    break;
  case CS_TRACE_FORMAT_MAF2021:
    out->has_functions = out->has_timestamps = TRUE;
    ok = inspect_maf2021(path, flags, &a, out, error);
    out->invocations = out->rows;
    break;
  case CS_TRACE_FORMAT_AZURE_LLM:
    out->has_timestamps = TRUE;
    ok = inspect_llm(path, flags, &a, out, error);
    out->invocations = out->rows;
    break;
  case CS_TRACE_FORMAT_AUTO:
    break;
  }
  if (ok)
    acc_finish(&a, out);
  acc_clear(&a);
  return ok;
}

void cs_trace_stats_clear(CsTraceStats *s)
{
  g_free(s->path);
  g_free(s->sha256);
  g_free(s->first_timestamp);
  for (int i = 0; i < s->n_top; i++) {
    g_free(s->top[i].app);
    g_free(s->top[i].function);
  }
  memset(s, 0, sizeof *s);
}

/* cJSON numbers are doubles; counts stay exact up to 2^53. */
static void add_number_or_null(cJSON *obj, const char *key, gboolean applicable, double v)
{
  if (applicable && isfinite(v))
    cJSON_AddNumberToObject(obj, key, v);
  else
    cJSON_AddNullToObject(obj, key);
}

cJSON *cs_trace_stats_to_json(const CsTraceStats *s)
{
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "path", s->path ? s->path : "");
  cJSON_AddStringToObject(root, "format", cs_trace_format_name(s->format));
  if (s->sha256)
    cJSON_AddStringToObject(root, "sha256", s->sha256);
  else
    cJSON_AddNullToObject(root, "sha256");
  cJSON_AddNumberToObject(root, "rows", (double)s->rows);
  add_number_or_null(root, "functions", s->has_functions, (double)s->functions);
  add_number_or_null(root, "apps", s->has_functions, (double)s->apps);
  cJSON_AddNumberToObject(root, "invocations", (double)s->invocations);

  cJSON *span = cJSON_AddObjectToObject(root, "span");
  cJSON_AddNumberToObject(span, "first_minute", (double)s->first_minute);
  cJSON_AddNumberToObject(span, "last_minute", (double)s->last_minute);
  cJSON_AddNumberToObject(span, "minutes", (double)s->span_minutes);
  add_number_or_null(span, "first_s", s->has_timestamps, s->first_s);
  add_number_or_null(span, "last_s", s->has_timestamps, s->last_s);
  if (s->first_timestamp)
    cJSON_AddStringToObject(span, "first_timestamp", s->first_timestamp);
  else
    cJSON_AddNullToObject(span, "first_timestamp");

  cJSON *rate = cJSON_AddObjectToObject(root, "rate_per_minute");
  add_number_or_null(rate, "min", TRUE, s->rate_min);
  add_number_or_null(rate, "median", TRUE, s->rate_median);
  add_number_or_null(rate, "max", TRUE, s->rate_max);
  add_number_or_null(root, "burstiness_cv", s->has_timestamps, s->burstiness_cv);

  cJSON *top = cJSON_AddArrayToObject(root, "top_functions");
  for (int i = 0; i < s->n_top; i++) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "app", s->top[i].app);
    cJSON_AddStringToObject(e, "function", s->top[i].function);
    cJSON_AddNumberToObject(e, "invocations", (double)s->top[i].invocations);
    cJSON_AddItemToArray(top, e);
  }
  return root;
}

void cs_trace_stats_print(const CsTraceStats *s, FILE *out)
{
  fprintf(out, "%-13s %s\n", "trace", s->path ? s->path : "");
  fprintf(out, "%-13s %s\n", "format", cs_trace_format_name(s->format));
  fprintf(out, "%-13s %s\n", "sha256", s->sha256 ? s->sha256 : "-");
  fprintf(out, "%-13s %" G_GINT64_FORMAT "\n", "rows", s->rows);
  if (s->has_functions)
    fprintf(out, "%-13s %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT " apps)\n", "functions",
            s->functions, s->apps);
  else
    fprintf(out, "%-13s n/a (no function identity in this format)\n", "functions");
  fprintf(out, "%-13s %" G_GINT64_FORMAT "\n", "invocations", s->invocations);
  if (s->format == CS_TRACE_FORMAT_MAF2019)
    fprintf(out, "%-13s minutes %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT " of the day (%"
            G_GINT64_FORMAT " min)\n", "span", s->first_minute, s->last_minute, s->span_minutes);
  else
    fprintf(out, "%-13s %.3f s .. %.3f s (%.1f min; minutes %" G_GINT64_FORMAT "..%"
            G_GINT64_FORMAT ", %" G_GINT64_FORMAT " min)\n", "span", s->first_s, s->last_s,
            (s->last_s - s->first_s) / 60.0, s->first_minute, s->last_minute, s->span_minutes);
  if (s->first_timestamp)
    fprintf(out, "%-13s %s UTC (time 0)\n", "starts", s->first_timestamp);
  fprintf(out, "%-13s min %.0f, median %.1f, max %.0f\n", "per minute", s->rate_min,
          s->rate_median, s->rate_max);
  if (isfinite(s->burstiness_cv))
    fprintf(out, "%-13s %.3f (CV of inter-arrival gaps; 1 = Poisson)\n", "burstiness",
            s->burstiness_cv);
  else
    /* A timestamped trace has rows - 1 gaps; with 2 or more the CV is
     * undefined only when their mean is 0. */
    fprintf(out, "%-13s n/a (%s)\n", "burstiness",
            !s->has_timestamps ? "per-minute counts only"
            : s->rows < 3      ? "fewer than 2 gaps"
                               : "all arrivals at one instant");
  if (s->n_top == 0)
    return;
  fprintf(out, "\nbusiest functions\n  %4s %12s %7s  %-16s %s\n", "rank", "invocations", "share",
          "app", "function");
  for (int i = 0; i < s->n_top; i++) {
    const CsTraceTopEntry *e = &s->top[i];
    double share = s->invocations > 0 ? 100.0 * (double)e->invocations / (double)s->invocations
                                      : 0.0;
    /* App hashes are shortened: the function hash already identifies the row. */
    fprintf(out, "  %4d %12" G_GINT64_FORMAT " %6.2f%%  %-16.16s %s\n", i + 1, e->invocations,
            share, e->app, e->function);
  }
}
