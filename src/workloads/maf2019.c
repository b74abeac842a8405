/* Azure Functions 2019 (MAF 2019) per-minute invocation counts; see trace.h.
 *
 * The invocations file streams one function row at a time. The companion
 * files (durations, memory) are keyed tables read completely at open: they
 * are one row per function, and a join needs random access by hash.
 */
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "trace.h"
#include "common/csv.h"

#define INVOCATIONS_COLUMNS "HashOwner,HashApp,HashFunction,Trigger,<minutes 1..1440>"
#define DURATIONS_COLUMNS "HashOwner,HashApp,HashFunction,Average,..."
#define MEMORY_COLUMNS "[HashFunction,]HashOwner,HashApp,AverageAllocatedMb,..."

/* A companion table: key -> value. by_function tells which key the file has;
 * app keys are "owner,app" (a comma cannot occur inside a hash). */
typedef struct {
  GHashTable *values; /* char* -> double* */
  gboolean by_function;
} Companion;

struct CsMaf2019Reader {
  CsCsv csv;
  int col_owner, col_app, col_function, col_trigger;
  int first_column; /* header index of the first minute column */
  int first_minute;
  int n_minutes;
  int64_t *counts;
  int64_t rows;
  Companion durations;
  Companion memory;
  GString *app_key; /* scratch for "owner,app" lookups */
};

static gboolean is_digits(const char *s)
{
  if (!*s)
    return FALSE;
  for (; *s; s++)
    if (*s < '0' || *s > '9')
      return FALSE;
  return TRUE;
}

static void companion_clear(Companion *c)
{
  if (c->values)
    g_hash_table_destroy(c->values);
  c->values = NULL;
}

/* Reads a companion file: the value column plus the key columns. */
static gboolean companion_load(Companion *c, const char *path, const char *value_column,
                               gboolean function_key_required, const char *expected,
                               GError **error)
{
  CsCsv csv;
  if (!cs_csv_open(&csv, path, error))
    return FALSE;
  gboolean ok = FALSE;
  if (!cs_csv_read_header(&csv, expected, error))
    goto out;
  size_t n_columns = csv.n_fields;
  int col_value = cs_csv_require(&csv, value_column, expected, error);
  if (col_value < 0)
    goto out;
  int col_function = cs_csv_find(&csv, "HashFunction");
  int col_owner = -1, col_app = -1;
  if (col_function < 0) {
    if (function_key_required) {
      cs_csv_require(&csv, "HashFunction", expected, error);
      goto out;
    }
    if ((col_owner = cs_csv_require(&csv, "HashOwner", expected, error)) < 0 ||
        (col_app = cs_csv_require(&csv, "HashApp", expected, error)) < 0)
      goto out;
  }
  c->by_function = col_function >= 0;
  char label[64];
  g_snprintf(label, sizeof label, "column %s", value_column);
  c->values = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  int64_t rows = 0;
  int rc;
  while ((rc = cs_csv_next(&csv, error)) > 0) {
    if (!cs_csv_expect_fields(&csv, n_columns, error))
      goto out;
    double v;
    if (!cs_csv_parse_double(&csv, csv.fields[col_value], label, TRUE, &v, error))
      goto out;
    char *key = c->by_function
                  ? g_strdup(csv.fields[col_function])
                  : g_strconcat(csv.fields[col_owner], ",", csv.fields[col_app], NULL);
    if (g_hash_table_contains(c->values, key)) {
      g_free(key); /* first row wins (trace.h) */
    } else {
      double *slot = g_new(double, 1);
      *slot = v;
      g_hash_table_insert(c->values, key, slot);
    }
    rows++;
  }
  if (rc < 0)
    goto out;
  if (rows == 0) {
    cs_csv_fail(&csv, error, "no data rows after the header");
    goto out;
  }
  ok = TRUE;
out:
  cs_csv_close(&csv);
  return ok;
}

static double companion_lookup(const Companion *c, GString *scratch, const char *owner,
                               const char *app, const char *function)
{
  if (!c->values)
    return NAN;
  const double *v;
  if (c->by_function) {
    v = g_hash_table_lookup(c->values, function);
  } else {
    g_string_assign(scratch, owner);
    g_string_append_c(scratch, ',');
    g_string_append(scratch, app);
    v = g_hash_table_lookup(c->values, scratch->str);
  }
  return v ? *v : NAN;
}

/* Finds the named columns and checks that the minute columns are contiguous
 * integers inside one day. */
static gboolean parse_header(CsMaf2019Reader *r, GError **error)
{
  CsCsv *csv = &r->csv;
  /* Named columns come first; the minute columns are everything from the
   * first all-digit name on. */
  size_t first = 0;
  while (first < csv->n_fields && !is_digits(csv->fields[first]))
    first++;
  if ((r->col_owner = cs_csv_require(csv, "HashOwner", INVOCATIONS_COLUMNS, error)) < 0 ||
      (r->col_app = cs_csv_require(csv, "HashApp", INVOCATIONS_COLUMNS, error)) < 0 ||
      (r->col_function = cs_csv_require(csv, "HashFunction", INVOCATIONS_COLUMNS, error)) < 0 ||
      (r->col_trigger = cs_csv_require(csv, "Trigger", INVOCATIONS_COLUMNS, error)) < 0)
    return FALSE;
  if (first == csv->n_fields) {
    cs_csv_fail(csv, error, "header: no minute columns (expected columns named 1..%d after %s)",
                CS_MAF2019_MINUTES_PER_DAY, "HashOwner,HashApp,HashFunction,Trigger");
    return FALSE;
  }
  r->first_column = (int)first;
  r->n_minutes = (int)(csv->n_fields - first);
  for (size_t i = first; i < csv->n_fields; i++) {
    const char *name = csv->fields[i];
    if (!is_digits(name) || strlen(name) > 4) {
      cs_csv_fail(csv, error,
                  "header column %zu: expected a minute number (1..%d), got \"%.40s\"", i + 1,
                  CS_MAF2019_MINUTES_PER_DAY, name);
      return FALSE;
    }
    int minute = atoi(name);
    if (i == first) {
      if (minute < 1 || minute > CS_MAF2019_MINUTES_PER_DAY) {
        cs_csv_fail(csv, error, "header column %zu: minute %d is outside 1..%d", i + 1, minute,
                    CS_MAF2019_MINUTES_PER_DAY);
        return FALSE;
      }
      r->first_minute = minute;
    } else {
      int want = r->first_minute + (int)(i - first);
      if (minute != want) {
        cs_csv_fail(csv, error,
                    "header column %zu: minute columns must be contiguous: expected %d, got %d",
                    i + 1, want, minute);
        return FALSE;
      }
    }
  }
  int last = r->first_minute + r->n_minutes - 1;
  if (last > CS_MAF2019_MINUTES_PER_DAY) {
    cs_csv_fail(csv, error, "header: minute %d is outside 1..%d (one file holds one day)", last,
                CS_MAF2019_MINUTES_PER_DAY);
    return FALSE;
  }
  r->counts = g_new(int64_t, r->n_minutes);
  return TRUE;
}

CsMaf2019Reader *cs_maf2019_reader_open(const char *invocations_path, const char *durations_path,
                                        const char *memory_path, GError **error)
{
  CsMaf2019Reader *r = g_new0(CsMaf2019Reader, 1);
  r->app_key = g_string_new(NULL);
  if (!cs_csv_open(&r->csv, invocations_path, error))
    goto fail;
  if (!cs_csv_read_header(&r->csv, INVOCATIONS_COLUMNS, error) || !parse_header(r, error))
    goto fail;
  /* The durations file always has HashFunction; the original memory file is
   * per app, the vHive sampler's is per function: both are accepted. */
  if (durations_path &&
      !companion_load(&r->durations, durations_path, "Average", TRUE, DURATIONS_COLUMNS, error))
    goto fail;
  if (memory_path && !companion_load(&r->memory, memory_path, "AverageAllocatedMb", FALSE,
                                     MEMORY_COLUMNS, error))
    goto fail;
  return r;
fail:
  cs_maf2019_reader_close(r);
  return NULL;
}

int cs_maf2019_reader_next(CsMaf2019Reader *r, CsMaf2019Record *rec, GError **error)
{
  CsCsv *csv = &r->csv;
  int rc = cs_csv_next_row(csv, r->rows, (size_t)(r->first_column + r->n_minutes), "function",
                           error);
  if (rc <= 0)
    return rc;
  int64_t total = 0;
  char column[32];
  for (int m = 0; m < r->n_minutes; m++) {
    const char *text = csv->fields[r->first_column + m];
    /* Fast path for the common short count; the general parser below gives
     * the messages. */
    int64_t v;
    if (text[0] >= '0' && text[0] <= '9' && text[1] == '\0') {
      v = text[0] - '0';
    } else {
      g_snprintf(column, sizeof column, "minute %d", r->first_minute + m);
      if (!cs_csv_parse_count(csv, text, column, &v, error))
        return -1;
    }
    if (total > INT64_MAX - v)
      return cs_csv_fail(csv, error, "row total overflows a 64-bit count");
    total += v;
    r->counts[m] = v;
  }
  r->rows++;
  rec->owner = csv->fields[r->col_owner];
  rec->app = csv->fields[r->col_app];
  rec->function = csv->fields[r->col_function];
  rec->trigger = csv->fields[r->col_trigger];
  rec->first_minute = r->first_minute;
  rec->n_minutes = r->n_minutes;
  rec->counts = r->counts;
  rec->total = total;
  rec->duration_avg_ms =
    companion_lookup(&r->durations, r->app_key, rec->owner, rec->app, rec->function);
  rec->memory_avg_mb =
    companion_lookup(&r->memory, r->app_key, rec->owner, rec->app, rec->function);
  rec->line = csv->lineno;
  return 1;
}

int cs_maf2019_reader_first_minute(const CsMaf2019Reader *r)
{
  return r->first_minute;
}

int cs_maf2019_reader_n_minutes(const CsMaf2019Reader *r)
{
  return r->n_minutes;
}

void cs_maf2019_reader_close(CsMaf2019Reader *r)
{
  if (!r)
    return;
  cs_csv_close(&r->csv);
  companion_clear(&r->durations);
  companion_clear(&r->memory);
  g_string_free(r->app_key, TRUE);
  g_free(r->counts);
  g_free(r);
}
