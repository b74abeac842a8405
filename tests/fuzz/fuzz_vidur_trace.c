/* Fuzzes the reader of Vidur's processed LLM traces (arrived_at,
 * num_prefill_tokens,num_decode_tokens): the input is the CSV file. Checks
 * trace.h's promises on what it accepts: token counts >= 1, times from 0 on,
 * in order, lines increasing. */
#include "fuzz_common.h"
#include "workloads/trace.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  fuzz_init(*argv);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_write_temp("vidur_trace.csv", data, size);
  GError *error = NULL;
  CsLlmRequestTrace *t = cs_vidur_trace_load(path, &error);
  fuzz_reject(&error);
  if (!t)
    return 0;
  fuzz_accept();
  if (t->n_records == 0)
    fuzz_fail("a trace loaded without records");
  for (size_t i = 0; i < t->n_records; i++) {
    const CsLlmRequestRecord *r = &t->records[i];
    if (r->prompt_tokens < 1 || r->output_tokens < 1 || r->time_ns < 0 ||
        r->time_ns > INT64_C(1000000) * 1000000000 + 1)
      fuzz_fail("line %" G_GINT64_FORMAT ": time %" G_GINT64_FORMAT ", tokens %" G_GINT64_FORMAT
                " and %" G_GINT64_FORMAT, r->line, r->time_ns, r->prompt_tokens, r->output_tokens);
    if (i > 0 && (r->time_ns < t->records[i - 1].time_ns || r->line <= t->records[i - 1].line))
      fuzz_fail("record %zu (line %" G_GINT64_FORMAT ") out of order", i, r->line);
  }
  cs_llm_request_trace_free(t);
  return 0;
}
