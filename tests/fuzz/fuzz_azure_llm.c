/* Fuzzes the Azure LLM reader (TIMESTAMP,ContextTokens,GeneratedTokens): the
 * input is the CSV file. Reads it streaming in both orderings, loads it
 * sorted, inspects it and compiles and runs small scenarios on it
 * (fuzz_trace_scenarios). Checks trace.h's promises: token counts >= 0,
 * times relative to the origin, a sorted load starting at 0. */
#include "fuzz_common.h"
#include "workloads/trace.h"

/* Exact replay; Poisson intervals of 10 s on unsorted rows replayed twice
 * as fast under the eager dispatch; and the shortest intervals validation
 * accepts (1 ms) in a window, where a trace of days needs billions of them. */
static const char *const scenarios[] = {
  "{\"profiles\": [\"v100_thesis\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"v100\"},"
  " \"trace\": {\"file\": \"-\", \"format\": \"azure-llm\"},"
  " \"clients\": [{\"model\": \"gpt2\", \"slo_ms\": 1000, \"arrival\": \"trace\"},"
  "  {\"model\": \"t5\", \"slo_ms\": 300, \"arrival\": \"trace\", \"warmup_s\": 1}]}",
  "{\"profiles\": [\"v100_thesis\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"v100\"},"
  " \"dispatch\": {\"policy\": \"eager\"},"
  " \"trace\": {\"file\": \"-\", \"arrivals\": \"poisson\", \"interval_s\": 10,"
  "  \"allow_unsorted\": true, \"time_scale\": 0.5},"
  " \"clients\": [{\"model\": \"gpt2\", \"slo_ms\": 1000, \"arrival\": \"trace\"}]}",
  "{\"profiles\": [\"v100_thesis\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"v100\"},"
  " \"dispatch\": {\"policy\": \"timeout\", \"timeout_ms\": 5},"
  " \"trace\": {\"file\": \"-\", \"arrivals\": \"poisson\", \"interval_s\": 0.001,"
  "  \"start_s\": 1, \"rate_scale\": 0.5},"
  " \"clients\": [{\"model\": \"t5\", \"slo_ms\": 300, \"arrival\": \"trace\"}]}",
  NULL,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  fuzz_init(*argv);
  return 0;
}

static void check_record(const CsAzureLlmRecord *rec)
{
  if (rec->context_tokens < 0 || rec->generated_tokens < 0)
    fuzz_fail("line %" G_GINT64_FORMAT ": tokens %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT,
              rec->line, rec->context_tokens, rec->generated_tokens);
}

/* TRUE when the whole file was read without error. */
static gboolean read_all(const char *path, CsTraceFlags flags)
{
  GError *error = NULL;
  CsAzureLlmReader *r = cs_azure_llm_reader_open(path, flags, &error);
  if (!r) {
    fuzz_reject(&error);
    return FALSE;
  }
  CsAzureLlmRecord rec;
  int64_t prev = INT64_MIN;
  gboolean first = TRUE;
  int rc;
  while ((rc = cs_azure_llm_reader_next(r, &rec, &error)) == 1) {
    check_record(&rec);
    if ((first && rec.time_ns != 0) ||
        (!(flags & CS_TRACE_ALLOW_UNSORTED) && rec.time_ns < prev) ||
        rec.epoch_ns - cs_azure_llm_reader_origin_epoch_ns(r) != rec.time_ns)
      fuzz_fail("line %" G_GINT64_FORMAT ": time %" G_GINT64_FORMAT " after %" G_GINT64_FORMAT
                ", epoch %" G_GINT64_FORMAT ", origin %" G_GINT64_FORMAT,
                rec.line, rec.time_ns, prev, rec.epoch_ns,
                cs_azure_llm_reader_origin_epoch_ns(r));
    prev = rec.time_ns;
    first = FALSE;
  }
  fuzz_reject(&error);
  cs_azure_llm_reader_close(r);
  return rc == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_write_temp("azure_llm.csv", data, size);
  read_all(path, CS_TRACE_FLAGS_NONE);
  if (read_all(path, CS_TRACE_ALLOW_UNSORTED))
    fuzz_accept();
  GError *error = NULL;
  CsAzureLlmTrace *t = cs_azure_llm_load_sorted(path, &error);
  fuzz_reject(&error);
  if (t && t->n_records > 0) {
    if (t->records[0].time_ns != 0)
      fuzz_fail("sorted trace starts at %" G_GINT64_FORMAT, t->records[0].time_ns);
    for (size_t i = 1; i < t->n_records; i++)
      if (t->records[i].time_ns < t->records[i - 1].time_ns)
        fuzz_fail("loaded trace not sorted at record %zu", i);
    g_free(cs_trace_format_epoch_ns(t->origin_epoch_ns));
    g_free(cs_trace_format_epoch_ns(t->records[t->n_records - 1].epoch_ns));
  }
  cs_azure_llm_trace_free(t);
  (void)cs_trace_detect_format(path, &error);
  fuzz_reject(&error);
  for (int unsorted = 0; unsorted < 2; unsorted++) {
    CsTraceStats stats;
    if (cs_trace_inspect(path, CS_TRACE_FORMAT_AZURE_LLM,
                         unsorted ? CS_TRACE_ALLOW_UNSORTED : CS_TRACE_FLAGS_NONE, &stats,
                         &error)) {
      cJSON_Delete(cs_trace_stats_to_json(&stats));
      cs_trace_stats_print(&stats, fuzz_null_file());
    }
    fuzz_reject(&error);
    cs_trace_stats_clear(&stats);
  }
  fuzz_trace_scenarios(scenarios, path);
  return 0;
}
