/* LLM replica schedulers as a plug-in (clustersim/llm.h), for
 * test_cli_llm_plugin.sh:
 * - "reserve_whole": admits waiting requests FIFO while fewer than
 *   "requests" (its own field, default 1) hold memory and the blocks of a
 *   request's whole life (prompt + output) are free; runs every admitted
 *   request each iteration, whole prefills and decodes mixed. Never out of
 *   memory, so never a restart. With "requests": 1 the replica serves one
 *   request at a time, FIFO: a timeline the test checks without the
 *   simulator's help.
 * - "bad_decode": vLLM-like, but decodes 2 tokens at once: a misuse the
 *   framework must stop. */
#include <clustersim/llm.h>
#include <clustersim/plugin.h>
#include <clustersim/registry.h>

CS_PLUGIN_DEFINE_ABI_VERSION

typedef struct {
  int requests;
} Params;

static void *rw_parse(CsParams *p, void *ud, GError **error)
{
  (void)ud;
  Params *par = g_new0(Params, 1);
  par->requests = 1;
  cs_params_doc(p, "requests", "requests holding memory at once");
  if (!cs_params_int(p, "requests", FALSE, 1, 100000, &par->requests, error)) {
    g_free(par);
    return NULL;
  }
  return par;
}

static void *rw_create(const CsLlmReplica *rep, const void *params, void *ud, GError **error)
{
  (void)rep, (void)ud, (void)error;
  return g_memdup2(params, sizeof(Params));
}

static int64_t ceil_div(int64_t a, int64_t b)
{
  return (a + b - 1) / b;
}

static gboolean rw_schedule(void *state, CsLlmReplica *rep, GError **error)
{
  const Params *par = state;
  int bs = cs_llm_replica_block_size(rep);
  /* The running first (their blocks cover their whole life), then
   * admissions. */
  while (cs_llm_replica_n_running(rep) > 0) {
    CsLlmRequest *r = cs_llm_replica_running(rep, 0);
    int tokens = cs_llm_request_prefill_complete(r)
                     ? 1
                     : cs_llm_request_prefill_tokens(r) - cs_llm_request_processed_tokens(r);
    if (!cs_llm_replica_schedule(rep, r, tokens, error))
      return FALSE;
  }
  while (cs_llm_replica_n_waiting(rep) > 0 && cs_llm_replica_n_holding(rep) < par->requests) {
    CsLlmRequest *r = cs_llm_replica_waiting(rep, 0);
    int64_t need = ceil_div(cs_llm_request_prompt_tokens(r) + cs_llm_request_output_tokens(r), bs);
    if (need > cs_llm_replica_free_blocks(rep))
      break;
    if (!cs_llm_replica_allocate(rep, r, need, error) ||
        !cs_llm_replica_schedule(rep, r, cs_llm_request_prefill_tokens(r), error))
      return FALSE;
  }
  return TRUE;
}

static const CsLlmSchedulerPolicy reserve_whole = {
  .name = "reserve_whole",
  .description = "whole-life reservations, FIFO, up to \"requests\" at once",
  .parse = rw_parse,
  .free_params = g_free,
  .create = rw_create,
  .destroy = g_free,
  .schedule = rw_schedule,
};

static gboolean bad_schedule(void *state, CsLlmReplica *rep, GError **error)
{
  (void)state;
  int bs = cs_llm_replica_block_size(rep);
  if (cs_llm_replica_n_running(rep) > 0)
    return cs_llm_replica_schedule(rep, cs_llm_replica_running(rep, 0), 2, error);
  CsLlmRequest *r = cs_llm_replica_waiting(rep, 0);
  return cs_llm_replica_allocate(rep, r, ceil_div(cs_llm_request_prompt_tokens(r) + 2, bs),
                                 error) &&
         cs_llm_replica_schedule(rep, r, cs_llm_request_prefill_tokens(r), error);
}

static const CsLlmSchedulerPolicy bad_decode = {
  .name = "bad_decode",
  .description = "decodes two tokens at once (a misuse)",
  .schedule = bad_schedule,
};

G_MODULE_EXPORT gboolean cs_plugin_init(CsRegistry *registry, GError **error)
{
  return cs_registry_add_llm_scheduler(registry, &reserve_whole, NULL, error) &&
         cs_registry_add_llm_scheduler(registry, &bad_decode, NULL, error);
}
