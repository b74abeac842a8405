/* Azure Functions 2021 (MAF 2021) per-invocation rows; see trace.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_input.h"
#include "trace.h"
#include "common/csv.h"

#define MAF2021_COLUMNS "app,func,end_timestamp,duration"
/* Bound on start times so that nanoseconds fit int64_t with a wide margin. */
#define MAX_ABS_SECONDS 1e9

struct CsMaf2021Reader {
  CsCsv csv;
  CsTraceFlags flags;
  size_t n_columns;
  int col_app, col_func, col_end, col_duration;
  int64_t rows;
  double last_arrival;
  int64_t last_arrival_line;
};

CsMaf2021Reader *cs_maf2021_reader_open(const char *path, CsTraceFlags flags, GError **error)
{
  CsMaf2021Reader *r = g_new0(CsMaf2021Reader, 1);
  r->flags = flags;
  if (!cs_csv_open(&r->csv, path, error) ||
      !cs_csv_read_header(&r->csv, MAF2021_COLUMNS, error))
    goto fail;
  r->n_columns = r->csv.n_fields;
  if ((r->col_app = cs_csv_require(&r->csv, "app", MAF2021_COLUMNS, error)) < 0 ||
      (r->col_func = cs_csv_require(&r->csv, "func", MAF2021_COLUMNS, error)) < 0 ||
      (r->col_end = cs_csv_require(&r->csv, "end_timestamp", MAF2021_COLUMNS, error)) < 0 ||
      (r->col_duration = cs_csv_require(&r->csv, "duration", MAF2021_COLUMNS, error)) < 0)
    goto fail;
  return r;
fail:
  cs_maf2021_reader_close(r);
  return NULL;
}

int cs_maf2021_reader_next(CsMaf2021Reader *r, CsMaf2021Record *rec, GError **error)
{
  CsCsv *csv = &r->csv;
  int rc = cs_csv_next_row(csv, r->rows, r->n_columns, "invocation: " MAF2021_COLUMNS, error);
  if (rc <= 0)
    return rc;
  double end, duration;
  if (!cs_csv_parse_double(csv, csv->fields[r->col_end], "column end_timestamp", FALSE, &end,
                           error) ||
      !cs_csv_parse_double(csv, csv->fields[r->col_duration], "column duration", TRUE,
                           &duration, error))
    return -1;
  /* The file only has the end; the simulator needs the start. */
  double arrival = end - duration;
  if (!(fabs(arrival) <= MAX_ABS_SECONDS))
    return cs_csv_fail(csv, error,
                       "start time end_timestamp - duration = %g s is outside +-%g s (expected "
                       "seconds since the start of the trace)",
                       arrival, MAX_ABS_SECONDS);
  if (!(r->flags & CS_TRACE_ALLOW_UNSORTED) && r->rows > 0 && arrival < r->last_arrival)
    return cs_csv_fail(csv, error,
                       "rows must be sorted by start time (end_timestamp - duration): start "
                       "%.6f s is earlier than %.6f s on line %" G_GINT64_FORMAT
                       " (pass the allow-unsorted option to sort in memory)",
                       arrival, r->last_arrival, r->last_arrival_line);
  r->rows++;
  r->last_arrival = arrival;
  r->last_arrival_line = csv->lineno;
  rec->app = csv->fields[r->col_app];
  rec->func = csv->fields[r->col_func];
  rec->arrival_s = arrival;
  rec->arrival_ns = (int64_t)llround(arrival * 1e9);
  rec->duration_s = duration;
  rec->end_s = end;
  rec->line = csv->lineno;
  return 1;
}

void cs_maf2021_reader_close(CsMaf2021Reader *r)
{
  if (!r)
    return;
  cs_csv_close(&r->csv);
  g_free(r);
}

/* Orders by arrival; the line number breaks ties, which makes qsort stable
 * (lines are unique and increase in file order). */
static int compare_arrival(const void *a, const void *b)
{
  const CsMaf2021Record *x = a, *y = b;
  if (x->arrival_s != y->arrival_s)
    return x->arrival_s < y->arrival_s ? -1 : 1;
  return (x->line > y->line) - (x->line < y->line);
}

CsMaf2021Trace *cs_maf2021_load_sorted(const char *path, GError **error)
{
  CsMaf2021Reader *r = cs_maf2021_reader_open(path, CS_TRACE_ALLOW_UNSORTED, error);
  if (!r)
    return NULL;
  CsMaf2021Trace *t = g_new0(CsMaf2021Trace, 1);
  /* Hashes repeat for every invocation of a function: store each once. */
  t->strings = g_string_chunk_new(4096);
  GArray *records = g_array_new(FALSE, FALSE, sizeof(CsMaf2021Record));
  CsMaf2021Record rec;
  int rc;
  while ((rc = cs_maf2021_reader_next(r, &rec, error)) > 0) {
    rec.app = g_string_chunk_insert_const(t->strings, rec.app);
    rec.func = g_string_chunk_insert_const(t->strings, rec.func);
    g_array_append_val(records, rec);
  }
  cs_maf2021_reader_close(r);
  if (rc < 0) {
    g_array_free(records, TRUE);
    cs_maf2021_trace_free(t);
    return NULL;
  }
  t->n_records = records->len;
  t->records = (CsMaf2021Record *)(void *)g_array_free(records, FALSE);
  if (t->n_records > 1)
    qsort(t->records, t->n_records, sizeof *t->records, compare_arrival);
  return t;
}

void cs_maf2021_trace_free(CsMaf2021Trace *t)
{
  if (!t)
    return;
  g_free(t->records);
  if (t->strings)
    g_string_chunk_free(t->strings);
  g_free(t);
}
