/* A whole LLM simulation run over a list of requests (llm_sim.h's
 * cs_llm_sim_run), on top of the instant-by-instant deployment of
 * llm_sim.c. */
#include "llm_sim.h"

#include "common/json_input.h"

/* ---- a whole run over a list of requests ------------------------------------ */

static void run_tbt(void *user, int64_t tag, int64_t ns)
{
  (void)tag;
  g_array_append_val(((CsLlmSimResult *)user)->tbt_ns, ns);
}

static void run_gap(void *user, int64_t tag, int64_t ns)
{
  (void)tag;
  g_array_append_val(((CsLlmSimResult *)user)->gap_ns, ns);
}

static void run_done(void *user, const CsLlmSimRequestResult *r, int64_t tag)
{
  ((CsLlmSimResult *)user)->requests[tag] = *r;
}

CsLlmSimResult *cs_llm_sim_run(const CsLlmSimConfig *cfg, const CsLlmSimRequest *reqs, int n,
                               GError **error)
{
  if (n < 1) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM simulation: expected at least 1 request, got %d", n);
    return NULL;
  }
  /* The per-request results land here, in input order, as requests finish. */
  CsLlmSimResult *res = g_new0(CsLlmSimResult, 1);
  res->requests = g_new0(CsLlmSimRequestResult, n);
  res->tbt_ns = g_array_new(FALSE, FALSE, sizeof(int64_t));
  res->gap_ns = g_array_new(FALSE, FALSE, sizeof(int64_t));
  CsLlmClusterHooks hooks = { .tbt = run_tbt, .gap = run_gap, .done = run_done, .user = res };
  CsLlmCluster *s = cs_llm_cluster_new(cfg, &hooks, error);
  if (s == NULL) {
    cs_llm_sim_result_free(res);
    return NULL;
  }
  for (int j = 0; j < n; j++)
    if (!cs_llm_cluster_add(s, &reqs[j], j, error))
      goto fail;
  while (cs_llm_cluster_next_ns(s) != INT64_MAX)
    if (!cs_llm_cluster_step(s, error))
      goto fail;
  if (!cs_llm_cluster_finish(s, error))
    goto fail;
  /* The counters and per-replica results are the cluster's. */
  const CsLlmSimResult *c = cs_llm_cluster_result(s);
  res->n_requests = n;
  res->n_replicas = c->n_replicas;
  res->n_prefill_replicas = c->n_prefill_replicas;
  res->replicas = g_memdup2(c->replicas, sizeof *c->replicas * (gsize)c->n_replicas);
  res->makespan_ns = c->makespan_ns;
  res->n_batches = c->n_batches;
  res->restarts = c->restarts;
  res->output_tokens = c->output_tokens;
  res->attention_clamped_batches = c->attention_clamped_batches;
  res->total_blocks = c->total_blocks;
  res->device_flops_per_s = c->device_flops_per_s;
  res->series_bin_ns = c->series_bin_ns;
  res->series = cs_llm_cluster_take_series(s); /* moved */
  cs_llm_cluster_free(s);
  return res;
fail:
  cs_llm_cluster_free(s);
  cs_llm_sim_result_free(res);
  return NULL;
}

void cs_llm_sim_result_free(CsLlmSimResult *r)
{
  if (r == NULL)
    return;
  g_free(r->requests);
  g_free(r->replicas);
  g_array_free(r->tbt_ns, TRUE);
  g_array_free(r->gap_ns, TRUE);
  if (r->series != NULL)
    g_array_free(r->series, TRUE);
  g_free(r);
}
