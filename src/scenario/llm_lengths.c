/* requests.synthetic.lengths (llm_lengths.h): a trace's prompt and output
 * lengths for synthetic requests, as Vidur's trace_request_length_generator
 * reads them (vidur/request_generator/trace_request_length_generator.py). */
#include <math.h>
#include <string.h>

#include "common/csv.h"
#include "common/json_input.h"
#include "llm_lengths.h"
#include "sim/rng.h"
#include "workloads/trace.h"

#define COLUMNS "num_prefill_tokens,num_decode_tokens"

/* One row: the file's tokens and its line. */
typedef struct {
  int64_t prompt, output, line;
} Row;

/* Vidur's length traces: any CSV with num_prefill_tokens and
 * num_decode_tokens (arrived_at and other columns ignored; Vidur's own
 * arxiv and bwb files have no arrivals), rows in file order. */
static GArray *read_vidur(const char *path, GError **error)
{
  CsCsv csv;
  if (!cs_csv_open(&csv, path, error))
    return NULL;
  GArray *rows = g_array_new(FALSE, FALSE, sizeof(Row));
  int cp, cd, rc = -1;
  if (cs_csv_read_header(&csv, COLUMNS, error) &&
      (cp = cs_csv_require(&csv, "num_prefill_tokens", COLUMNS, error)) >= 0 &&
      (cd = cs_csv_require(&csv, "num_decode_tokens", COLUMNS, error)) >= 0) {
    size_t nf = csv.n_fields;
    while ((rc = cs_csv_next_row(&csv, rows->len, nf, "request: " COLUMNS, error)) > 0) {
      Row r = { .line = csv.lineno };
      if (!cs_csv_parse_count(&csv, csv.fields[cp], "column num_prefill_tokens", &r.prompt,
                              error) ||
          !cs_csv_parse_count(&csv, csv.fields[cd], "column num_decode_tokens", &r.output,
                              error)) {
        rc = -1;
        break;
      }
      g_array_append_val(rows, r);
    }
  }
  cs_csv_close(&csv);
  if (rc < 0) {
    g_array_free(rows, TRUE);
    return NULL;
  }
  return rows;
}

/* An Azure LLM inference trace: ContextTokens and GeneratedTokens, rows in
 * time order (the order of cs_azure_llm_load_sorted). */
static GArray *read_azure(const char *path, GError **error)
{
  CsAzureLlmTrace *a = cs_azure_llm_load_sorted(path, error);
  if (a == NULL)
    return NULL;
  GArray *rows = g_array_new(FALSE, FALSE, sizeof(Row));
  for (size_t i = 0; i < a->n_records; i++) {
    Row r = { .prompt = a->records[i].context_tokens, .output = a->records[i].generated_tokens,
              .line = a->records[i].line };
    g_array_append_val(rows, r);
  }
  cs_azure_llm_trace_free(a);
  return rows;
}

/* Vidur's cut: tokens x scale truncated; a row whose total exceeds
 * max_tokens loses ceil(excess x its share) from each of prompt and output
 * (in doubles, as pandas computes it); then both are clipped to at least
 * 1. FALSE when the row still exceeds max_tokens (Vidur asserts it). */
static gboolean cut(const Row *row, double ps, double ds, int max_tokens, int *p, int *d,
                    gboolean *was_cut)
{
  double pf = trunc((double)row->prompt * ps), df = trunc((double)row->output * ds);
  double total = pf + df, excess = total - max_tokens;
  *was_cut = excess > 0;
  if (*was_cut) {
    pf -= ceil(excess * (pf / total));
    df -= ceil(excess * (df / total));
  }
  pf = fmax(pf, 1);
  df = fmax(df, 1);
  if (pf + df > max_tokens || pf > G_MAXINT || df > G_MAXINT)
    return FALSE;
  *p = (int)pf;
  *d = (int)df;
  return TRUE;
}

gboolean cs_llm_lengths_read(CsLlmConfig *r, const cJSON *obj, const char *file,
                             const char *dir, int max_tokens, uint64_t seed, GError **error)
{
  static const char *const known[] = { "trace", "trace_format", "order", "prefill_scale",
                                       "decode_scale", "min_prompt_tokens", "max_prompt_tokens",
                                       NULL };
  const char *path = "requests.synthetic.lengths";
  const char *rel = NULL, *format = "vidur", *order = "shuffle";
  double ps = 1, ds = 1;
  int min_prompt = 1, max_prompt = G_MAXINT;
  if (!cs_json_expect_object(obj, file, path, error) ||
      !cs_json_check_keys(obj, known, file, path, error) ||
      !cs_json_read_string(obj, "trace", TRUE, &rel, file, path, error) ||
      !cs_json_read_string(obj, "trace_format", FALSE, &format, file, path, error) ||
      !cs_json_read_string(obj, "order", FALSE, &order, file, path, error) ||
      !cs_json_read_double(obj, "prefill_scale", FALSE, 1e-9, 1e6, &ps, file, path, error) ||
      !cs_json_read_double(obj, "decode_scale", FALSE, 1e-9, 1e6, &ds, file, path, error) ||
      !cs_json_read_int(obj, "min_prompt_tokens", FALSE, 1, G_MAXINT, &min_prompt, file, path,
                        error) ||
      !cs_json_read_int(obj, "max_prompt_tokens", FALSE, min_prompt, G_MAXINT, &max_prompt,
                        file, path, error))
    return FALSE;
  gboolean azure = strcmp(format, "azure_llm") == 0;
  if (!azure && strcmp(format, "vidur") != 0)
    return cs_json_fail(error, file, "requests.synthetic.lengths.trace_format", "expected "
                        "\"vidur\" (a CSV with num_prefill_tokens and num_decode_tokens) or "
                        "\"azure_llm\" (ContextTokens, GeneratedTokens), got \"%s\"", format);
  gboolean shuffle = strcmp(order, "shuffle") == 0;
  if (!shuffle && strcmp(order, "trace") != 0)
    return cs_json_fail(error, file, "requests.synthetic.lengths.order", "expected "
                        "\"shuffle\" (the rows in a seeded random order, as Vidur's length "
                        "generator takes them) or \"trace\" (the file's order), got \"%s\"",
                        order);
  r->lengths_path = g_path_is_absolute(rel) ? g_strdup(rel) : g_build_filename(dir, rel, NULL);
  GError *e = NULL;
  GArray *rows = azure ? read_azure(r->lengths_path, &e) : read_vidur(r->lengths_path, &e);
  if (rows == NULL) {
    cs_json_fail(error, file, "requests.synthetic.lengths.trace", "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  r->len_prompt = g_new(int, MAX(rows->len, 1));
  r->len_output = g_new(int, MAX(rows->len, 1));
  r->n_len = 0;
  gboolean ok = TRUE;
  for (guint i = 0; i < rows->len && ok; i++) {
    const Row *row = &g_array_index(rows, Row, i);
    int p, d;
    gboolean was_cut;
    if (!cut(row, ps, ds, max_tokens, &p, &d, &was_cut)) {
      ok = cs_json_fail(error, file, "requests.synthetic.lengths.trace", "%s line %"
                        G_GINT64_FORMAT ": %" G_GINT64_FORMAT " + %" G_GINT64_FORMAT " tokens "
                        "do not fit max_tokens %d", r->lengths_path, row->line, row->prompt,
                        row->output, max_tokens);
      break;
    }
    if (p < min_prompt || p > max_prompt) {
      r->lengths_skipped++;
      continue;
    }
    r->lengths_cut += was_cut;
    r->len_prompt[r->n_len] = p;
    r->len_output[r->n_len++] = d;
  }
  g_array_free(rows, TRUE);
  if (ok && r->n_len == 0)
    ok = cs_json_fail(error, file, "requests.synthetic.lengths", "%s: no rows left (%"
                      G_GINT64_FORMAT " left out by min_/max_prompt_tokens)", r->lengths_path,
                      r->lengths_skipped);
  if (!ok)
    return FALSE;
  if (shuffle) {
    /* Fisher-Yates from its own stream, so the order does not depend on
     * the rate or on the other streams (not Vidur's permutation: pandas'). */
    CsRngState st;
    cs_rng_state_seed(&st, cs_rng_stream_seed(seed, "llm/length_order"));
    for (int i = r->n_len - 1; i > 0; i--) {
      int j = (int)floor(cs_rng_to_unit(cs_rng_next(&st)) * (i + 1));
      j = j > i ? i : j;
      int tp = r->len_prompt[i], tdd = r->len_output[i];
      r->len_prompt[i] = r->len_prompt[j];
      r->len_output[i] = r->len_output[j];
      r->len_prompt[j] = tp;
      r->len_output[j] = tdd;
    }
  }
  return TRUE;
}
