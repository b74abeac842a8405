/* Fuzzes the MAF 2021 reader (one row per invocation): the input is the CSV
 * file. Reads it streaming in both orderings, loads it sorted, inspects it
 * (cs_trace_inspect) and compiles and runs small scenarios on it
 * (fuzz_trace_scenarios). Checks trace.h's promises on records: durations
 * >= 0, sorted order where asked for. */
#include "fuzz_common.h"
#include "workloads/trace.h"

/* Exact replay; per-second Poisson intervals on unsorted rows with the
 * functions dealt to clients in blocks under Symphony's dispatch; and the
 * shortest intervals validation accepts (1 ms) in a window, where a trace of
 * days needs billions of them. */
static const char *const scenarios[] = {
  "{\"profiles\": [\"v100_thesis\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"v100\"},"
  " \"trace\": {\"file\": \"-\", \"format\": \"maf2021\"},"
  " \"clients\": [{\"model\": \"resnet50\", \"slo_ms\": 200, \"arrival\": \"trace\"},"
  "  {\"model\": \"alexnet\", \"slo_ms\": 100, \"arrival\": \"trace\", \"warmup_s\": 1}]}",
  "{\"profiles\": [\"v100_thesis\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"v100\"},"
  " \"dispatch\": {\"policy\": \"symphony\"},"
  " \"trace\": {\"file\": \"-\", \"arrivals\": \"poisson\", \"interval_s\": 1,"
  "  \"allow_unsorted\": true, \"mapping\": \"blocks\", \"time_scale\": 0.5},"
  " \"clients\": [{\"model\": \"resnet50\", \"slo_ms\": 200, \"arrival\": \"trace\"},"
  "  {\"model\": \"alexnet\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}",
  "{\"profiles\": [\"v100_thesis\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"v100\"},"
  " \"trace\": {\"file\": \"-\", \"arrivals\": \"gamma\", \"cv\": 0.5, \"interval_s\": 0.001,"
  "  \"start_s\": 0.5, \"rate_scale\": 2},"
  " \"clients\": [{\"model\": \"resnet50\", \"slo_ms\": 200, \"arrival\": \"trace\"}]}",
  NULL,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  fuzz_init(*argv);
  return 0;
}

/* TRUE when the whole file was read without error. */
static gboolean read_all(const char *path, CsTraceFlags flags)
{
  GError *error = NULL;
  CsMaf2021Reader *r = cs_maf2021_reader_open(path, flags, &error);
  if (!r) {
    fuzz_reject(&error);
    return FALSE;
  }
  CsMaf2021Record rec;
  double prev = -G_MAXDOUBLE;
  int rc;
  while ((rc = cs_maf2021_reader_next(r, &rec, &error)) == 1) {
    if (!(rec.duration_s >= 0) || (!(flags & CS_TRACE_ALLOW_UNSORTED) && rec.arrival_s < prev))
      fuzz_fail("line %" G_GINT64_FORMAT ": arrival %.17g after %.17g, duration %.17g", rec.line,
                rec.arrival_s, prev, rec.duration_s);
    prev = rec.arrival_s;
  }
  fuzz_reject(&error);
  cs_maf2021_reader_close(r);
  return rc == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_write_temp("maf2021.csv", data, size);
  read_all(path, CS_TRACE_FLAGS_NONE);
  if (read_all(path, CS_TRACE_ALLOW_UNSORTED))
    fuzz_accept();
  GError *error = NULL;
  CsMaf2021Trace *t = cs_maf2021_load_sorted(path, &error);
  fuzz_reject(&error);
  for (size_t i = 1; t && i < t->n_records; i++)
    if (t->records[i].arrival_ns < t->records[i - 1].arrival_ns)
      fuzz_fail("loaded trace not sorted at record %zu", i);
  cs_maf2021_trace_free(t);
  (void)cs_trace_detect_format(path, &error);
  fuzz_reject(&error);
  for (int unsorted = 0; unsorted < 2; unsorted++) {
    CsTraceStats stats;
    if (cs_trace_inspect(path, CS_TRACE_FORMAT_MAF2021,
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
