/* Vidur's processed LLM request traces (arrived_at,num_prefill_tokens,
 * num_decode_tokens); see trace.h. Arrival times become integer nanoseconds,
 * parsed from the decimal text (no floating point), so that a simulation fed
 * the file arrives exactly when Vidur's does. */
#include <string.h>

#include "common/csv.h"
#include "trace.h"

#define VIDUR_COLUMNS "arrived_at,num_prefill_tokens,num_decode_tokens"
#define NS_PER_S INT64_C(1000000000)
/* 10^6 s (11.6 days): far beyond any trace, and every arrival fits int64 ns
 * with room for the sums a simulation makes of them. */
#define MAX_ARRIVAL_S INT64_C(1000000)

/* "S[.F]" (digits only) as nanoseconds, rounded to the nearest (half up):
 * the files hold some times as float reprs ("199.96150599999999", 14
 * digits), which are a nanosecond-exact time once rounded. FALSE on any
 * other text or on more than MAX_ARRIVAL_S seconds. */
static gboolean parse_seconds(const char *text, int64_t *out_ns)
{
  const char *p = text;
  int64_t s = 0;
  if (*p < '0' || *p > '9')
    return FALSE;
  for (; *p >= '0' && *p <= '9'; p++) {
    s = s * 10 + (*p - '0');
    if (s > MAX_ARRIVAL_S)
      return FALSE;
  }
  int64_t frac = 0, scale = NS_PER_S;
  gboolean round_up = FALSE;
  if (*p == '.') {
    p++;
    if (*p < '0' || *p > '9')
      return FALSE;
    for (int digits = 0; *p >= '0' && *p <= '9'; p++, digits++) {
      if (digits < 9) {
        scale /= 10;
        frac += (*p - '0') * scale;
      } else if (digits == 9) {
        round_up = *p >= '5';
      }
    }
  }
  if (*p != '\0')
    return FALSE;
  *out_ns = s * NS_PER_S + frac + (round_up ? 1 : 0);
  return TRUE;
}

CsLlmRequestTrace *cs_vidur_trace_load(const char *path, GError **error)
{
  CsCsv csv;
  if (!cs_csv_open(&csv, path, error))
    return NULL;
  GArray *records = g_array_new(FALSE, FALSE, sizeof(CsLlmRequestRecord));
  int col_at, col_prefill, col_decode, rc = -1;
  size_t n_columns = 0;
  if (!cs_csv_read_header(&csv, VIDUR_COLUMNS, error) ||
      (col_at = cs_csv_require(&csv, "arrived_at", VIDUR_COLUMNS, error)) < 0 ||
      (col_prefill = cs_csv_require(&csv, "num_prefill_tokens", VIDUR_COLUMNS, error)) < 0 ||
      (col_decode = cs_csv_require(&csv, "num_decode_tokens", VIDUR_COLUMNS, error)) < 0)
    goto out;
  n_columns = csv.n_fields;
  int64_t last_ns = 0, last_line = 0;
  while ((rc = cs_csv_next_row(&csv, records->len, n_columns, "request: " VIDUR_COLUMNS,
                               error)) > 0) {
    CsLlmRequestRecord r = { .line = csv.lineno };
    const char *at = csv.fields[col_at];
    if (!parse_seconds(at, &r.time_ns)) {
      rc = cs_csv_fail(&csv, error,
                       "column arrived_at: expected seconds from the first request, digits "
                       "with an optional fraction (at most %" G_GINT64_FORMAT " s), got \"%.40s\"",
                       MAX_ARRIVAL_S, at);
      break;
    }
    if (!cs_csv_parse_count(&csv, csv.fields[col_prefill], "column num_prefill_tokens",
                            &r.prompt_tokens, error) ||
        !cs_csv_parse_count(&csv, csv.fields[col_decode], "column num_decode_tokens",
                            &r.output_tokens, error)) {
      rc = -1;
      break;
    }
    /* Vidur clips both to at least 1 when it replays a trace; a file with a
     * 0 is refused rather than silently changed. */
    if (r.prompt_tokens < 1 || r.output_tokens < 1) {
      rc = cs_csv_fail(&csv, error, "column %s: expected at least 1 token, got 0",
                       r.prompt_tokens < 1 ? "num_prefill_tokens" : "num_decode_tokens");
      break;
    }
    if (records->len > 0 && r.time_ns < last_ns) {
      rc = cs_csv_fail(&csv, error,
                       "rows must be sorted by arrived_at: \"%.40s\" is earlier than the "
                       "arrival on line %" G_GINT64_FORMAT,
                       at, last_line);
      break;
    }
    last_ns = r.time_ns;
    last_line = csv.lineno;
    g_array_append_val(records, r);
  }
out:
  cs_csv_close(&csv);
  if (rc < 0) {
    g_array_free(records, TRUE);
    return NULL;
  }
  CsLlmRequestTrace *t = g_new0(CsLlmRequestTrace, 1);
  t->n_records = records->len;
  t->records = (CsLlmRequestRecord *)(void *)g_array_free(records, FALSE);
  return t;
}

void cs_llm_request_trace_free(CsLlmRequestTrace *t)
{
  if (!t)
    return;
  g_free(t->records);
  g_free(t);
}
