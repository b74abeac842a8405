/* Azure LLM inference trace 2023 (TIMESTAMP,ContextTokens,GeneratedTokens);
 * see trace.h. Timestamps become integer nanoseconds so that arrival times
 * are exact (the files give 100 ns resolution) and runs stay reproducible. */
#include <stdlib.h>
#include <string.h>

#include "common/json_input.h"
#include "trace.h"
#include "common/csv.h"

#define LLM_COLUMNS "TIMESTAMP,ContextTokens,GeneratedTokens"
#define NS_PER_S INT64_C(1000000000)

struct CsAzureLlmReader {
  CsCsv csv;
  CsTraceFlags flags;
  size_t n_columns;
  int col_time, col_context, col_generated;
  int64_t rows;
  int64_t origin_epoch_ns;
  int64_t last_epoch_ns;
  int64_t last_line;
};

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil); avoids timegm, which is not POSIX, and the local zone. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

/* Reads exactly n digits at *p, advancing it. */
static gboolean take_digits(const char **p, int n, int *out)
{
  int v = 0;
  for (int i = 0; i < n; i++) {
    char c = (*p)[i];
    if (c < '0' || c > '9')
      return FALSE;
    v = v * 10 + (c - '0');
  }
  *p += n;
  *out = v;
  return TRUE;
}

static gboolean is_leap(int y)
{
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Parses "YYYY-MM-DD HH:MM:SS[.fffffffff][Z|+HH:MM|-HH:MM]"; without a zone
 * the time is taken as UTC. Returns FALSE on any deviation, including
 * impossible dates. */
static gboolean parse_timestamp(const char *text, int64_t *epoch_ns)
{
  static const int month_days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const char *p = text;
  int year, month, day, hour, minute, second;
  if (!take_digits(&p, 4, &year) || *p++ != '-' || !take_digits(&p, 2, &month) || *p++ != '-' ||
      !take_digits(&p, 2, &day) || (*p != ' ' && *p != 'T'))
    return FALSE;
  p++;
  if (!take_digits(&p, 2, &hour) || *p++ != ':' || !take_digits(&p, 2, &minute) ||
      *p++ != ':' || !take_digits(&p, 2, &second))
    return FALSE;
  int64_t frac_ns = 0;
  if (*p == '.') {
    p++;
    int digits = 0;
    int64_t scale = NS_PER_S;
    while (*p >= '0' && *p <= '9' && digits < 9) {
      scale /= 10;
      frac_ns += (*p - '0') * scale;
      p++;
      digits++;
    }
    if (digits == 0)
      return FALSE;
  }
  /* The 2024 week-long traces append a UTC offset ("+00:00"). */
  int64_t offset_s = 0;
  if (*p == 'Z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    int sign = *p++ == '-' ? -1 : 1, oh, om;
    if (!take_digits(&p, 2, &oh) || *p++ != ':' || !take_digits(&p, 2, &om) || oh > 23 ||
        om > 59)
      return FALSE;
    offset_s = sign * (oh * 3600 + om * 60);
  }
  if (*p != '\0')
    return FALSE;
  /* Years 1970..2199 keep epoch nanoseconds inside int64 and also the
   * difference of any two (at most 230 years; 2^63 ns is 292 years), which
   * time_ns is. */
  if (year < 1970 || year > 2199 || month < 1 || month > 12 || hour > 23 || minute > 59 ||
      second > 59)
    return FALSE;
  int dim = month_days[month - 1] + (month == 2 && is_leap(year));
  if (day < 1 || day > dim)
    return FALSE;
  int64_t secs = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second -
                 offset_s;
  *epoch_ns = secs * NS_PER_S + frac_ns;
  return TRUE;
}

char *cs_trace_format_epoch_ns(int64_t epoch_ns)
{
  int64_t secs = epoch_ns / NS_PER_S, ns = epoch_ns % NS_PER_S;
  if (ns < 0) {
    ns += NS_PER_S;
    secs--;
  }
  int64_t days = secs / 86400, sod = secs % 86400;
  if (sod < 0) {
    sod += 86400;
    days--;
  }
  int64_t y;
  int m, d;
  civil_from_days(days, &y, &m, &d);
  return g_strdup_printf("%04" G_GINT64_FORMAT "-%02d-%02d %02d:%02d:%02d.%09d", y, m, d,
                         (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60), (int)ns);
}

CsAzureLlmReader *cs_azure_llm_reader_open(const char *path, CsTraceFlags flags, GError **error)
{
  CsAzureLlmReader *r = g_new0(CsAzureLlmReader, 1);
  r->flags = flags;
  if (!cs_csv_open(&r->csv, path, error) || !cs_csv_read_header(&r->csv, LLM_COLUMNS, error))
    goto fail;
  r->n_columns = r->csv.n_fields;
  if ((r->col_time = cs_csv_require(&r->csv, "TIMESTAMP", LLM_COLUMNS, error)) < 0 ||
      (r->col_context = cs_csv_require(&r->csv, "ContextTokens", LLM_COLUMNS, error)) < 0 ||
      (r->col_generated = cs_csv_require(&r->csv, "GeneratedTokens", LLM_COLUMNS, error)) < 0)
    goto fail;
  return r;
fail:
  cs_azure_llm_reader_close(r);
  return NULL;
}

int cs_azure_llm_reader_next(CsAzureLlmReader *r, CsAzureLlmRecord *rec, GError **error)
{
  CsCsv *csv = &r->csv;
  int rc = cs_csv_next_row(csv, r->rows, r->n_columns, "request: " LLM_COLUMNS, error);
  if (rc <= 0)
    return rc;
  const char *text = csv->fields[r->col_time];
  int64_t epoch_ns;
  if (!parse_timestamp(text, &epoch_ns))
    return cs_csv_fail(csv, error,
                       "column TIMESTAMP: expected a date and time \"YYYY-MM-DD HH:MM:SS\" "
                       "with an optional fraction of up to 9 digits and zone +HH:MM (years "
                       "1970..2199), got \"%.40s\"",
                       text);
  int64_t context, generated;
  if (!cs_csv_parse_count(csv, csv->fields[r->col_context], "column ContextTokens", &context,
                          error) ||
      !cs_csv_parse_count(csv, csv->fields[r->col_generated], "column GeneratedTokens",
                          &generated, error))
    return -1;
  if (r->rows == 0) {
    r->origin_epoch_ns = epoch_ns;
  } else if (!(r->flags & CS_TRACE_ALLOW_UNSORTED) && epoch_ns < r->last_epoch_ns) {
    char *prev = cs_trace_format_epoch_ns(r->last_epoch_ns);
    cs_csv_fail(csv, error,
                "rows must be sorted by TIMESTAMP: \"%s\" is earlier than %s on line "
                "%" G_GINT64_FORMAT " (pass the allow-unsorted option to sort in memory)",
                text, prev, r->last_line);
    g_free(prev);
    return -1;
  }
  r->rows++;
  r->last_epoch_ns = epoch_ns;
  r->last_line = csv->lineno;
  rec->time_ns = epoch_ns - r->origin_epoch_ns;
  rec->epoch_ns = epoch_ns;
  rec->context_tokens = context;
  rec->generated_tokens = generated;
  rec->line = csv->lineno;
  return 1;
}

int64_t cs_azure_llm_reader_origin_epoch_ns(const CsAzureLlmReader *r)
{
  return r->origin_epoch_ns;
}

void cs_azure_llm_reader_close(CsAzureLlmReader *r)
{
  if (!r)
    return;
  cs_csv_close(&r->csv);
  g_free(r);
}

/* Orders by timestamp, ties by line: a stable order from qsort. */
static int compare_epoch(const void *a, const void *b)
{
  const CsAzureLlmRecord *x = a, *y = b;
  if (x->epoch_ns != y->epoch_ns)
    return x->epoch_ns < y->epoch_ns ? -1 : 1;
  return (x->line > y->line) - (x->line < y->line);
}

CsAzureLlmTrace *cs_azure_llm_load_sorted(const char *path, GError **error)
{
  CsAzureLlmReader *r = cs_azure_llm_reader_open(path, CS_TRACE_ALLOW_UNSORTED, error);
  if (!r)
    return NULL;
  GArray *records = g_array_new(FALSE, FALSE, sizeof(CsAzureLlmRecord));
  CsAzureLlmRecord rec;
  int rc;
  while ((rc = cs_azure_llm_reader_next(r, &rec, error)) > 0)
    g_array_append_val(records, rec);
  cs_azure_llm_reader_close(r);
  if (rc < 0) {
    g_array_free(records, TRUE);
    return NULL;
  }
  CsAzureLlmTrace *t = g_new0(CsAzureLlmTrace, 1);
  t->n_records = records->len;
  t->records = (CsAzureLlmRecord *)(void *)g_array_free(records, FALSE);
  qsort(t->records, t->n_records, sizeof *t->records, compare_epoch);
  t->origin_epoch_ns = t->records[0].epoch_ns;
  for (size_t i = 0; i < t->n_records; i++)
    t->records[i].time_ns = t->records[i].epoch_ns - t->origin_epoch_ns;
  return t;
}

void cs_azure_llm_trace_free(CsAzureLlmTrace *t)
{
  if (!t)
    return;
  g_free(t->records);
  g_free(t);
}
