/* Requests prefilled on another replica (disaggregated serving, llm_sim.h)
 * and blocks kept past a request's end: the decode side's queue, the
 * reservation before a KV transfer, the transfer's end (llm_sched.h). */
#include "llm_sched_internal.h"

#include "common/json_input.h"

gboolean cs_llm_sched_add_prefilled(CsLlmSched *s, CsLlmRequest *r, GError **error)
{
  g_return_val_if_fail(s != NULL && r != NULL, FALSE);
  if (s->cfg.policy == CS_LLM_SCHED_STATIC) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM request %" G_GINT64_FORMAT ": a prefilled request needs a decode "
                "scheduler of vllm, sarathi or orca, got static (its batches admit only "
                "whole prefills)",
                (gint64)r->id);
    return FALSE;
  }
  if (r->state == CS_LLM_REQ_NEW && r->output_tokens < 2) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM request %" G_GINT64_FORMAT ": a prefilled request needs >= 2 output "
                "tokens (one came with its prefill), got %d",
                (gint64)r->id, r->output_tokens);
    return FALSE;
  }
  /* The same checks as a new request: after a restart here it prefills
   * again, up to prompt + output - 1 tokens. */
  if (!cs_llm_sched_add(s, r, error))
    return FALSE;
  g_queue_pop_tail(&s->waiting);
  r->processed_tokens = r->prompt_tokens + 1;
  r->prefill_complete = TRUE;
  r->got_first_token = TRUE;
  r->emitted_tokens = 1;
  g_queue_push_tail(&s->prefilled, r);
  return TRUE;
}

/* The pending queue's head, reserved when it fits: the blocks of its
 * prompt's KV (the decode that follows adds a block when it crosses one, as
 * after a local prefill) above the watermark, or orca's whole-life
 * reservation; and the cap on requests holding memory. Head-of-line: NULL
 * while the head does not fit, whatever is behind it. While its transfer
 * runs it stays WAITING, holding its blocks (no other WAITING request holds
 * any), out of every list a batch is formed from. */
CsLlmRequest *cs_llm_sched_reserve_prefilled(CsLlmSched *s)
{
  g_return_val_if_fail(s != NULL, NULL);
  CsLlmRequest *r = g_queue_peek_head(&s->prefilled);
  if (r == NULL)
    return NULL;
  gboolean orca = s->cfg.policy == CS_LLM_SCHED_ORCA;
  int64_t need = orca ? s->max_blocks_seq : cs_llm_ceil_div(r->prompt_tokens, s->cfg.block_size);
  int64_t cap = orca ? s->batch_limit : s->cfg.batch_size_cap;
  if (s->holding >= cap || cs_llm_sched_free_blocks(s) - need < s->watermark)
    return NULL;
  g_queue_pop_head(&s->prefilled);
  cs_llm_sched_allocate(s, r, need);
  s->in_transfer++;
  return r;
}

gboolean cs_llm_sched_prefilled_arrived(CsLlmSched *s, CsLlmRequest *r, GError **error)
{
  g_return_val_if_fail(s != NULL && r != NULL, FALSE);
  if (r->state != CS_LLM_REQ_WAITING || r->blocks == 0 || !r->prefill_complete) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM request %" G_GINT64_FORMAT ": arrived by transfer without a "
                "reservation (expected a request cs_llm_sched_reserve_prefilled returned)",
                (gint64)r->id);
    return FALSE;
  }
  g_assert(s->in_transfer > 0);
  s->in_transfer--;
  r->state = CS_LLM_REQ_RUNNING;
  g_queue_push_tail(&s->arrived, r);
  return TRUE;
}

int cs_llm_sched_n_in_transfer(const CsLlmSched *s)
{
  return s->in_transfer;
}

gboolean cs_llm_sched_release(CsLlmSched *s, CsLlmRequest *r, GError **error)
{
  g_return_val_if_fail(s != NULL && r != NULL, FALSE);
  if (r->state != CS_LLM_REQ_FINISHED || !r->keep_blocks) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM request %" G_GINT64_FORMAT ": released while %s (expected a finished "
                "request that keeps its blocks)",
                (gint64)r->id, r->state != CS_LLM_REQ_FINISHED ? "unfinished" : "not keeping blocks");
    return FALSE;
  }
  cs_llm_sched_free_request(s, r);
  r->keep_blocks = FALSE;
  return TRUE;
}

