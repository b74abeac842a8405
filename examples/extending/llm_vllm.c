/* An LLM replica scheduler of your own (docs/llm.md, "A replica scheduler
 * of your own"): vLLM's rules, as Vidur's vllm_replica_scheduler.py has
 * them, written against the public header clustersim/llm.h only. It is the
 * same policy as the built-in "vllm"; the tests check that both give the
 * same batches, restarts and blocks, iteration by iteration, so it shows
 * what the services can express. Change its rules to try your own.
 *
 * Rules (with S pipeline stages, up to S batches are in flight; a batch
 * holds at most max_micro_batch_size = batch_size_cap / S requests):
 * - prefills first: waiting requests in queue order, each admitted with its
 *   whole prefill's blocks while the free blocks stay at or above the
 *   watermark, the padded token budget (requests x longest prefill) stays
 *   within max_tokens_in_batch, fewer than batch_size_cap requests hold
 *   memory and the batch has fewer than max_micro_batch_size requests; a
 *   batch with a prefill holds prefills only;
 * - else decodes: running requests by arrival, up to max_micro_batch_size,
 *   1 token each, each needing one free block (vLLM asks for one even when
 *   the request needs none);
 *   when none is free the latest-arrived request not yet taken is restarted,
 *   and with none left the request itself.
 *
 * Built as a plug-in (-DCS_EXAMPLE_PLUGIN) it registers "vllm_example":
 *   clustersim --plugin llm_vllm.so llm run run.json
 * with "scheduler": {"policy": "vllm_example"} in run.json. */
#include <clustersim/llm.h>
#include <clustersim/registry.h>

#ifdef CS_EXAMPLE_PLUGIN
#include <clustersim/plugin.h>
#endif

typedef struct {
  GPtrArray *by_arrival; /* the running list sorted, reused every call */
} VllmState;

static void *vllm_create(const CsLlmReplica *rep, const void *params, void *user_data,
                         GError **error)
{
  (void)rep, (void)params, (void)user_data, (void)error;
  VllmState *st = g_new0(VllmState, 1);
  st->by_arrival = g_ptr_array_new();
  return st;
}

static void vllm_destroy(void *state)
{
  VllmState *st = state;
  g_ptr_array_free(st->by_arrival, TRUE);
  g_free(st);
}

static int64_t ceil_div(int64_t a, int64_t b)
{
  return (a + b - 1) / b;
}

/* Python's list.sort(key=arrived_at) is stable: insertion sort keeps ties
 * in list order (the list is a batch's worth of requests). */
static void sort_by_arrival(GPtrArray *a)
{
  for (guint i = 1; i < a->len; i++) {
    CsLlmRequest *r = a->pdata[i];
    guint j = i;
    while (j > 0 && cs_llm_request_arrival_ns(a->pdata[j - 1]) > cs_llm_request_arrival_ns(r)) {
      a->pdata[j] = a->pdata[j - 1];
      j--;
    }
    a->pdata[j] = r;
  }
}

/* Whole prefills from the waiting queue's front. Returns FALSE on a
 * service's error; *n is the batch's size. */
static gboolean admit_prefills(CsLlmReplica *rep, int *n, GError **error)
{
  int bs = cs_llm_replica_block_size(rep);
  int cap = cs_llm_replica_batch_size_cap(rep);
  int micro = cap / cs_llm_replica_num_stages(rep); /* max_micro_batch_size */
  int64_t max_len = 0;
  while (cs_llm_replica_n_waiting(rep) > 0) {
    CsLlmRequest *r = cs_llm_replica_waiting(rep, 0);
    int64_t prefill = cs_llm_request_prefill_tokens(r);
    int64_t need = ceil_div(prefill, bs);
    if (cs_llm_replica_free_blocks(rep) - need < cs_llm_replica_watermark(rep))
      break;
    int64_t new_max = MAX(max_len, prefill);
    if ((int64_t)(*n + 1) * new_max > cs_llm_replica_max_tokens_in_batch(rep))
      break;
    if (cs_llm_replica_n_holding(rep) == cap || *n == micro)
      break;
    if (!cs_llm_replica_allocate(rep, r, need, error) ||
        !cs_llm_replica_schedule(rep, r, (int)prefill, error))
      return FALSE;
    (*n)++;
    max_len = new_max;
  }
  return TRUE;
}

static gboolean vllm_schedule(void *state, CsLlmReplica *rep, GError **error)
{
  VllmState *st = state;
  int n = 0;
  if (!admit_prefills(rep, &n, error))
    return FALSE;
  if (n > 0)
    return TRUE;
  GPtrArray *run = st->by_arrival;
  g_ptr_array_set_size(run, 0);
  for (int i = 0; i < cs_llm_replica_n_running(rep); i++)
    g_ptr_array_add(run, cs_llm_replica_running(rep, i));
  sort_by_arrival(run);
  int micro = cs_llm_replica_batch_size_cap(rep) / cs_llm_replica_num_stages(rep);
  int64_t bs = cs_llm_replica_block_size(rep);
  guint lo = 0, hi = run->len; /* run[lo, hi): neither taken nor restarted */
  while (lo < hi && n < micro) {
    CsLlmRequest *r = run->pdata[lo++];
    gboolean runs = TRUE;
    while (cs_llm_replica_free_blocks(rep) < 1) {
      CsLlmRequest *victim = lo < hi ? run->pdata[--hi] : r;
      if (!cs_llm_replica_restart(rep, victim, error))
        return FALSE;
      if (victim == r) {
        runs = FALSE;
        break;
      }
    }
    if (!runs)
      continue;
    if (cs_llm_request_processed_tokens(r) > cs_llm_request_blocks(r) * bs &&
        !cs_llm_replica_allocate(rep, r, 1, error))
      return FALSE;
    if (!cs_llm_replica_schedule(rep, r, 1, error))
      return FALSE;
    n++;
  }
  return TRUE;
}

const CsLlmSchedulerPolicy cs_example_llm_vllm = {
  .name = "vllm_example",
  .description = "vLLM's continuous batching (prefills first, paged KV, restart on a full "
                 "cache), through the public interface",
  .create = vllm_create,
  .destroy = vllm_destroy,
  .schedule = vllm_schedule,
};

#ifdef CS_EXAMPLE_PLUGIN
CS_PLUGIN_DEFINE_ABI_VERSION

G_MODULE_EXPORT gboolean cs_plugin_init(CsRegistry *registry, GError **error)
{
  return cs_registry_add_llm_scheduler(registry, &cs_example_llm_vllm, NULL, error);
}
#endif
