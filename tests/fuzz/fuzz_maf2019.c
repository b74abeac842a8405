/* Fuzzes the MAF 2019 reader (per-minute invocation counts) with its
 * companion files: the input is the invocations CSV, optionally followed by
 * a line "##" and the durations CSV, and another "##" and the memory CSV
 * (an empty part leaves that file out).
 * Reads it, inspects it and compiles and runs small scenarios on it
 * (fuzz_trace_scenarios). Checks trace.h's promises on records: counts >= 0
 * summing to the total, minutes within the day and the header's range. */
#include <string.h>

#include "fuzz_common.h"
#include "workloads/trace.h"

/* Poisson within minutes dealt in stripes, and gamma within two-minute
 * intervals at half the rate, functions in blocks, under Symphony. */
static const char *const scenarios[] = {
  "{\"profiles\": [\"v100_thesis\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"v100\"},"
  " \"trace\": {\"file\": \"-\", \"format\": \"maf2019\"},"
  " \"clients\": [{\"model\": \"resnet50\", \"slo_ms\": 200, \"arrival\": \"trace\"},"
  "  {\"model\": \"alexnet\", \"slo_ms\": 100, \"arrival\": \"trace\", \"warmup_s\": 30}]}",
  "{\"profiles\": [\"v100_thesis\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"v100\"},"
  " \"dispatch\": {\"policy\": \"symphony\"},"
  " \"trace\": {\"file\": \"-\", \"arrivals\": \"gamma\", \"cv\": 2, \"interval_s\": 120,"
  "  \"rate_scale\": 0.5, \"mapping\": \"blocks\", \"time_scale\": 0.1},"
  " \"clients\": [{\"model\": \"resnet50\", \"slo_ms\": 200, \"arrival\": \"trace\"},"
  "  {\"model\": \"alexnet\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}",
  NULL,
};

#define SEPARATOR "\n##\n"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  fuzz_init(*argv);
  return 0;
}

/* memmem is a GNU extension; the project builds with POSIX only. */
static const uint8_t *find_separator(const uint8_t *p, const uint8_t *end)
{
  size_t n = strlen(SEPARATOR);
  for (; (size_t)(end - p) >= n; p++)
    if (memcmp(p, SEPARATOR, n) == 0)
      return p;
  return NULL;
}

/* TRUE when the whole file was read without error. */
static gboolean read_all(const char *inv, const char *dur, const char *mem)
{
  GError *error = NULL;
  CsMaf2019Reader *r = cs_maf2019_reader_open(inv, dur, mem, &error);
  if (!r) {
    fuzz_reject(&error);
    return FALSE;
  }
  int first = cs_maf2019_reader_first_minute(r), n = cs_maf2019_reader_n_minutes(r);
  if (first < 1 || n < 1 || first + n - 1 > CS_MAF2019_MINUTES_PER_DAY)
    fuzz_fail("minutes %d..%d", first, first + n - 1);
  CsMaf2019Record rec;
  int rc;
  while ((rc = cs_maf2019_reader_next(r, &rec, &error)) == 1) {
    int64_t sum = 0;
    for (int i = 0; i < rec.n_minutes; i++) {
      if (rec.counts[i] < 0 || rec.counts[i] > INT64_MAX - sum)
        fuzz_fail("line %" G_GINT64_FORMAT ": count %" G_GINT64_FORMAT " after a sum of %"
                  G_GINT64_FORMAT, rec.line, rec.counts[i], sum);
      sum += rec.counts[i];
    }
    if (sum != rec.total || rec.first_minute != first || rec.n_minutes != n)
      fuzz_fail("line %" G_GINT64_FORMAT ": total %" G_GINT64_FORMAT " of counts summing to %"
                G_GINT64_FORMAT ", minutes %d+%d in a file of %d+%d", rec.line, rec.total, sum,
                rec.first_minute, rec.n_minutes, first, n);
  }
  fuzz_reject(&error);
  cs_maf2019_reader_close(r);
  return rc == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* Split at the separators: invocations, durations, memory. */
  const char *names[3] = { "invocations.csv", "durations.csv", "memory.csv" };
  const char *paths[3] = { NULL, NULL, NULL };
  const uint8_t *p = data, *end = data + size;
  for (int k = 0; k < 3; k++) {
    const uint8_t *sep = k < 2 ? find_separator(p, end) : NULL;
    const uint8_t *part_end = sep ? sep + 1 : end; /* the part keeps its last newline */
    /* An empty part (a lone newline) gives no file: memory without durations. */
    if (part_end - p > 1)
      paths[k] = fuzz_write_temp(names[k], p, (size_t)(part_end - p));
    if (!sep)
      break;
    p = sep + strlen(SEPARATOR);
  }
  if (!paths[0])
    paths[0] = fuzz_write_temp(names[0], data, 0);
  gboolean ok = read_all(paths[0], NULL, NULL);
  if (paths[1] || paths[2])
    ok = read_all(paths[0], paths[1], paths[2]) && ok;
  if (ok)
    fuzz_accept();
  GError *error = NULL;
  (void)cs_trace_detect_format(paths[0], &error);
  fuzz_reject(&error);
  CsTraceStats stats;
  if (cs_trace_inspect(paths[0], CS_TRACE_FORMAT_MAF2019, CS_TRACE_FLAGS_NONE, &stats, &error)) {
    cJSON_Delete(cs_trace_stats_to_json(&stats));
    cs_trace_stats_print(&stats, fuzz_null_file());
  }
  fuzz_reject(&error);
  cs_trace_stats_clear(&stats);
  fuzz_trace_scenarios(scenarios, paths[0]);
  return 0;
}
