/* Fuzzes the decision log reader (replay/decision_log.h), the compilation of
 * the scenario a log records, and the counting of a replay's results
 * (replay_results.c), fed the log's own decided times: whatever the reader
 * accepts must be counted without a crash, every request exactly once. */
#include "fuzz_common.h"
#include "replay/backends.h"
#include "replay/replay_internal.h"
#include "sim/results.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  fuzz_init(*argv);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_write_temp("fuzz.jsonl", data, size);
  GError *error = NULL;
  DecisionLog *log = cs_decision_log_read(path, &error);
  if (!log) {
    fuzz_reject(&error);
    return 0;
  }
  /* The reader's promises: times never run backwards, members are known
   * requests of the batch's model. */
  int64_t last = 0;
  for (guint i = 0; i < log->timeline->len; i++) {
    int64_t at = g_array_index(log->timeline, DlEvent, i).at_ns;
    if (at < last)
      fuzz_fail("timeline event %u at %" G_GINT64_FORMAT " ns after %" G_GINT64_FORMAT, i,
                (gint64)at, (gint64)last);
    last = at;
  }
  for (guint i = 0; i < log->batches->len; i++) {
    const DlBatch *b = &g_array_index(log->batches, DlBatch, i);
    for (int k = 0; k < b->n; k++) {
      guint32 id = g_array_index(log->members, guint32, b->first + k);
      if (id >= log->requests->len ||
          g_array_index(log->requests, DlRequest, id).model != b->model)
        fuzz_fail("batch %u holds request %u of another model or none", i, id);
    }
  }
  CsConfig *cfg = cs_replay_compile_scenario(log, &error);
  if (!cfg) {
    cs_decision_log_free(log);
    fuzz_reject(&error);
    return 0;
  }
  fuzz_accept();
  Replay rp = { .log = log, .cfg = cfg, .backend = &cs_backend_emulated, .max_lateness_ms = 1 };
  rp.send_ns = g_new(int64_t, MAX(log->requests->len, 1));
  for (guint i = 0; i < log->requests->len; i++)
    rp.send_ns[i] = g_array_index(log->requests, DlRequest, i).send_ns;
  rp.times = g_array_new(FALSE, TRUE, sizeof(ReplayBatch));
  g_array_set_size(rp.times, log->batches->len);
  for (guint i = 0; i < log->batches->len; i++) {
    const DlBatch *b = &g_array_index(log->batches, DlBatch, i);
    ReplayBatch *t = &g_array_index(rp.times, ReplayBatch, i);
    t->dispatch_ns = b->dispatch_ns;
    t->node_ns = MAX(b->dispatch_ns, b->not_before_ns);
    t->start_ns = t->node_ns;
    t->end_ns = t->start_ns + 1000000;
  }
  rp.left_ns = g_array_new(FALSE, TRUE, sizeof(int64_t));
  for (guint i = 0; i < log->left->len; i++)
    g_array_append_val(rp.left_ns, g_array_index(log->left, DlLeft, i).at_ns);
  CsResults *res = cs_replay_results(&rp, NULL, NULL, &error);
  if (!res)
    fuzz_fail("counting an accepted log failed: %s", error->message);
  if (res->total.generated != (int64_t)log->requests->len)
    fuzz_fail("%" G_GINT64_FORMAT " requests counted, the log has %u",
              (gint64)res->total.generated, log->requests->len);
  char *json = cs_results_to_json(res);
  g_free(json);
  cs_results_free(res);
  g_free(rp.send_ns);
  g_array_unref(rp.times);
  g_array_unref(rp.left_ns);
  cs_config_free(cfg);
  cs_decision_log_free(log);
  return 0;
}
