/* Replica schedulers of a user's own (clustersim/llm.h): the views of the
 * replica and its requests, and the services, each checked, through which a
 * custom policy forms its batches. The queues, blocks and batch are the
 * built-in schedulers' (llm_sched.c); only the choice is the policy's. */
#include <stdarg.h>

#include "llm_sched_internal.h"

/* ---- requests ---------------------------------------------------------------- */

int64_t cs_llm_request_id(const CsLlmRequest *r)
{
  g_return_val_if_fail(r != NULL, -1);
  return r->id;
}

int64_t cs_llm_request_arrival_ns(const CsLlmRequest *r)
{
  g_return_val_if_fail(r != NULL, -1);
  return r->arrival;
}

int cs_llm_request_prompt_tokens(const CsLlmRequest *r)
{
  g_return_val_if_fail(r != NULL, 0);
  return r->prompt_tokens;
}

int cs_llm_request_output_tokens(const CsLlmRequest *r)
{
  g_return_val_if_fail(r != NULL, 0);
  return r->output_tokens;
}

int cs_llm_request_prefill_tokens(const CsLlmRequest *r)
{
  g_return_val_if_fail(r != NULL, 0);
  return r->prefill_tokens;
}

int cs_llm_request_decode_tokens(const CsLlmRequest *r)
{
  g_return_val_if_fail(r != NULL, 0);
  return r->decode_tokens;
}

int cs_llm_request_processed_tokens(const CsLlmRequest *r)
{
  g_return_val_if_fail(r != NULL, 0);
  return r->processed_tokens;
}

gboolean cs_llm_request_prefill_complete(const CsLlmRequest *r)
{
  g_return_val_if_fail(r != NULL, FALSE);
  return r->prefill_complete;
}

int64_t cs_llm_request_blocks(const CsLlmRequest *r)
{
  g_return_val_if_fail(r != NULL, 0);
  return r->blocks;
}

int cs_llm_request_restarts(const CsLlmRequest *r)
{
  g_return_val_if_fail(r != NULL, 0);
  return r->restarts;
}

/* ---- the replica's settings and state ------------------------------------------ */

int64_t cs_llm_replica_num_blocks(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 0);
  return rep->cfg.num_blocks;
}

int cs_llm_replica_block_size(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 0);
  return rep->cfg.block_size;
}

int cs_llm_replica_num_stages(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 1);
  return rep->cfg.num_stages;
}

int cs_llm_replica_batch_size_cap(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 0);
  return rep->cfg.batch_size_cap;
}

int64_t cs_llm_replica_max_batch_size(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 0);
  return rep->cfg.max_batch_size;
}

int cs_llm_replica_max_tokens_in_batch(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 0);
  return rep->cfg.max_tokens_in_batch;
}

int cs_llm_replica_chunk_size(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 0);
  return rep->cfg.chunk_size;
}

int cs_llm_replica_max_tokens(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 0);
  return rep->cfg.max_tokens;
}

int64_t cs_llm_replica_watermark(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 0);
  return rep->watermark;
}

int64_t cs_llm_replica_free_blocks(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 0);
  return rep->cfg.num_blocks - rep->allocated;
}

int cs_llm_replica_n_holding(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 0);
  return rep->holding;
}

int cs_llm_replica_n_waiting(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 0);
  return (int)rep->waiting.length;
}

CsLlmRequest *cs_llm_replica_waiting(const CsLlmReplica *rep, int i)
{
  g_return_val_if_fail(rep != NULL, NULL);
  if (i < 0 || (guint)i >= rep->waiting.length)
    return NULL;
  /* A policy reads the queue front to back: from the link of the last read
   * the next is one step, so a scan is linear, not quadratic. The cursor
   * is a cache, not state: the const is kept for the caller. */
  CsLlmReplica *w = (CsLlmReplica *)rep;
  GList *l;
  if (w->cursor_link != NULL && w->cursor_gen == w->waiting_gen && i >= w->cursor_i) {
    l = w->cursor_link;
    for (int k = w->cursor_i; k < i; k++)
      l = l->next;
  } else {
    l = g_queue_peek_nth_link(&w->waiting, (guint)i);
  }
  w->cursor_link = l;
  w->cursor_i = i;
  w->cursor_gen = w->waiting_gen;
  return l->data;
}

int cs_llm_replica_n_running(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 0);
  return (int)rep->running->len;
}

CsLlmRequest *cs_llm_replica_running(const CsLlmReplica *rep, int i)
{
  g_return_val_if_fail(rep != NULL, NULL);
  return i >= 0 && (guint)i < rep->running->len ? rep->running->pdata[i] : NULL;
}

/* The batch the policy sees: the one that ran in on_batch_done, else the
 * one being formed. */
static const CsLlmBatch *view(const CsLlmReplica *rep)
{
  return rep->done_view != NULL ? rep->done_view : &rep->batch;
}

int cs_llm_replica_batch_size(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 0);
  return view(rep)->n;
}

int64_t cs_llm_replica_batch_tokens(const CsLlmReplica *rep)
{
  g_return_val_if_fail(rep != NULL, 0);
  return view(rep)->total_tokens;
}

static const CsLlmBatchEntry *entry(const CsLlmReplica *rep, int i)
{
  const CsLlmBatch *b = view(rep);
  return i >= 0 && i < b->n ? &b->entries[i] : NULL;
}

CsLlmRequest *cs_llm_replica_batch_request(const CsLlmReplica *rep, int i)
{
  g_return_val_if_fail(rep != NULL, NULL);
  const CsLlmBatchEntry *e = entry(rep, i);
  return e ? e->req : NULL;
}

int cs_llm_replica_batch_entry_tokens(const CsLlmReplica *rep, int i)
{
  g_return_val_if_fail(rep != NULL, 0);
  const CsLlmBatchEntry *e = entry(rep, i);
  return e ? e->tokens : 0;
}

gboolean cs_llm_replica_batch_entry_prefill(const CsLlmReplica *rep, int i)
{
  g_return_val_if_fail(rep != NULL, FALSE);
  const CsLlmBatchEntry *e = entry(rep, i);
  return e ? e->prefill : FALSE;
}

gboolean cs_llm_replica_batch_entry_finished(const CsLlmReplica *rep, int i)
{
  g_return_val_if_fail(rep != NULL, FALSE);
  const CsLlmBatchEntry *e = entry(rep, i);
  return e ? e->finished : FALSE;
}

/* ---- services ------------------------------------------------------------------ */

/* Records the first misuse (it stops the run whatever the policy does next)
 * and sets error: 'LLM scheduler "NAME": SERVICE: request ID: message'. */
static gboolean misuse(CsLlmReplica *s, GError **error, const char *service,
                       const CsLlmRequest *r, const char *fmt, ...) G_GNUC_PRINTF(5, 6);

static gboolean misuse(CsLlmReplica *s, GError **error, const char *service,
                       const CsLlmRequest *r, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  char *who = r != NULL ? g_strdup_printf("request %" G_GINT64_FORMAT ": ", (gint64)r->id)
                        : g_strdup("");
  GError *e = g_error_new(CS_ERROR, CS_ERROR_POLICY, "LLM scheduler \"%s\": %s: %s%s",
                          cs_llm_sched_config_name(&s->cfg), service, who, msg);
  g_free(who);
  g_free(msg);
  if (s->violation == NULL)
    s->violation = g_error_copy(e);
  g_propagate_error(error, e);
  return FALSE;
}

static const char *state_name(CsLlmReqState st)
{
  switch (st) {
  case CS_LLM_REQ_NEW:
    return "not added to a replica";
  case CS_LLM_REQ_WAITING:
    return "waiting";
  case CS_LLM_REQ_RUNNING:
    return "running";
  case CS_LLM_REQ_IN_BATCH:
    return "already in the batch";
  case CS_LLM_REQ_FINISHED:
    return "finished";
  }
  return "?";
}

/* The checks every service makes first: called from schedule, on a request
 * of this replica. */
static gboolean check_call(CsLlmReplica *s, const CsLlmRequest *r, const char *service,
                           GError **error)
{
  if (!s->in_schedule)
    return misuse(s, error, service, NULL, "called outside the policy's schedule callback");
  if (r == NULL)
    return misuse(s, error, service, NULL, "no request (NULL)");
  if (r->owner != s)
    return misuse(s, error, service, r, "a request of another replica");
  return TRUE;
}

/* r's index in the running list, or -1. */
static int running_index(const CsLlmReplica *s, const CsLlmRequest *r)
{
  guint i;
  if (r->state != CS_LLM_REQ_RUNNING || !g_ptr_array_find(s->running, r, &i))
    return -1;
  return (int)i;
}

gboolean cs_llm_replica_allocate(CsLlmReplica *s, CsLlmRequest *r, int64_t n, GError **error)
{
  g_return_val_if_fail(s != NULL, FALSE);
  const char *fn = "cs_llm_replica_allocate";
  if (!check_call(s, r, fn, error))
    return FALSE;
  int64_t free_now = s->cfg.num_blocks - s->allocated;
  if (n < 1 || n > free_now)
    return misuse(s, error, fn, r, "%" G_GINT64_FORMAT " blocks, expected 1 to the %"
                  G_GINT64_FORMAT " free",
                  (gint64)n, (gint64)free_now);
  if (r->state == CS_LLM_REQ_WAITING) {
    GList *l = g_queue_find(&s->waiting, r);
    if (l == NULL)
      return misuse(s, error, fn, r, "not in the waiting queue (a request still on its way "
                    "from a prefill replica)");
    g_queue_delete_link(&s->waiting, l);
    s->waiting_gen++;
    r->state = CS_LLM_REQ_RUNNING;
    g_ptr_array_add(s->running, r);
  } else if (running_index(s, r) < 0) {
    return misuse(s, error, fn, r, "%s, expected a waiting or running request",
                  state_name(r->state));
  }
  cs_llm_sched_allocate(s, r, n);
  return TRUE;
}

gboolean cs_llm_replica_schedule(CsLlmReplica *s, CsLlmRequest *r, int tokens, GError **error)
{
  g_return_val_if_fail(s != NULL, FALSE);
  const char *fn = "cs_llm_replica_schedule";
  if (!check_call(s, r, fn, error))
    return FALSE;
  int i = running_index(s, r);
  if (i < 0)
    return misuse(s, error, fn, r, "%s, expected a running request (one holding blocks: "
                  "cs_llm_replica_allocate admits a waiting one)",
                  state_name(r->state));
  int64_t room = r->blocks * s->cfg.block_size;
  if (!r->prefill_complete) {
    int left = r->prefill_tokens - r->processed_tokens;
    if (tokens < 1 || tokens > left)
      return misuse(s, error, fn, r, "a prefill chunk of %d tokens, expected 1 to the %d "
                    "its prefill has left",
                    tokens, left);
    if (room < (int64_t)r->processed_tokens + tokens)
      return misuse(s, error, fn, r, "its %" G_GINT64_FORMAT " blocks hold %" G_GINT64_FORMAT
                    " tokens, expected room for the %d processed and the %d of this chunk",
                    (gint64)r->blocks, (gint64)room, r->processed_tokens, tokens);
  } else {
    if (tokens != 1)
      return misuse(s, error, fn, r, "a decode of %d tokens, expected 1", tokens);
    if (room < r->processed_tokens)
      return misuse(s, error, fn, r, "its %" G_GINT64_FORMAT " blocks hold %" G_GINT64_FORMAT
                    " tokens, expected room for the %d processed (allocate a block first)",
                    (gint64)r->blocks, (gint64)room, r->processed_tokens);
  }
  g_ptr_array_remove_index(s->running, (guint)i);
  cs_llm_sched_batch_append(s, r, tokens);
  return TRUE;
}

gboolean cs_llm_replica_restart(CsLlmReplica *s, CsLlmRequest *r, GError **error)
{
  g_return_val_if_fail(s != NULL, FALSE);
  const char *fn = "cs_llm_replica_restart";
  if (!check_call(s, r, fn, error))
    return FALSE;
  int i = running_index(s, r);
  if (i < 0)
    return misuse(s, error, fn, r, "%s, expected a running request", state_name(r->state));
  g_ptr_array_remove_index(s->running, (guint)i);
  cs_llm_sched_restart(s, r);
  s->waiting_gen++;
  return TRUE;
}

/* ---- the policy's callbacks ------------------------------------------------------ */

gboolean cs_llm_sched_custom_create(CsLlmSched *s, GError **error)
{
  const CsLlmSchedulerPolicy *p = s->cfg.custom;
  if (p->create != NULL) {
    GError *e = NULL;
    s->custom_state = p->create(s, s->cfg.custom_params, s->cfg.custom_user_data, &e);
    if (e != NULL) {
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID, "LLM scheduler \"%s\": %s", p->name,
                  e->message);
      g_error_free(e);
      if (s->custom_state != NULL && p->destroy != NULL)
        p->destroy(s->custom_state);
      s->custom_state = NULL;
      return FALSE;
    }
  }
  s->custom_live = TRUE;
  return TRUE;
}

void cs_llm_sched_custom_destroy(CsLlmSched *s)
{
  if (s->custom_live && s->cfg.custom->destroy != NULL)
    s->cfg.custom->destroy(s->custom_state);
  s->custom_live = FALSE;
  g_clear_error(&s->violation);
}

gboolean cs_llm_sched_custom_next(CsLlmSched *s, GError **error)
{
  const CsLlmSchedulerPolicy *p = s->cfg.custom;
  if (s->violation != NULL) {
    g_propagate_error(error, g_error_copy(s->violation));
    return FALSE;
  }
  if (g_queue_is_empty(&s->waiting) && s->running->len == 0)
    return TRUE;
  s->waiting_gen++;
  GError *e = NULL;
  s->in_schedule = TRUE;
  gboolean ok = p->schedule(s->custom_state, s, &e);
  s->in_schedule = FALSE;
  if (s->violation != NULL) {
    g_clear_error(&e);
    g_propagate_error(error, g_error_copy(s->violation));
    return FALSE;
  }
  if (ok && e == NULL)
    return TRUE;
  /* An error set is a failure, whatever schedule returned. */
  g_set_error(error, CS_ERROR, CS_ERROR_POLICY, "LLM scheduler \"%s\": %s", p->name,
              e != NULL ? e->message : "schedule returned FALSE and set no error");
  g_clear_error(&e);
  return FALSE;
}

void cs_llm_sched_custom_batch_done(CsLlmSched *s, const CsLlmBatch *b)
{
  if (s->cfg.custom->on_batch_done == NULL)
    return;
  s->done_view = b;
  s->cfg.custom->on_batch_done(s->custom_state, s);
  s->done_view = NULL;
}
