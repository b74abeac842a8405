/* The replica schedulers of an LLM replica; see llm_sched.h for the rules
 * and the Vidur file each comes from. */
#include "llm_sched_internal.h"

#include <string.h>

#include "common/json_input.h"

static const char *const POLICY_NAMES[] = { "vllm", "sarathi", "orca", "static", "custom" };

const char *cs_llm_sched_policy_name(CsLlmSchedPolicy policy)
{
  g_return_val_if_fail((unsigned)policy < G_N_ELEMENTS(POLICY_NAMES), "?");
  return POLICY_NAMES[policy];
}

const char *cs_llm_sched_config_name(const CsLlmSchedConfig *cfg)
{
  if (cfg->policy == CS_LLM_SCHED_CUSTOM && cfg->custom != NULL)
    return cfg->custom->name;
  return cs_llm_sched_policy_name(cfg->policy);
}

gboolean cs_llm_sched_policy_parse(const char *name, CsLlmSchedPolicy *out, GError **error)
{
  for (unsigned i = 0; i < CS_LLM_SCHED_CUSTOM; i++) {
    if (name != NULL && strcmp(name, POLICY_NAMES[i]) == 0) {
      *out = (CsLlmSchedPolicy)i;
      return TRUE;
    }
  }
  /* Vidur's own name of static batching. */
  if (name != NULL && strcmp(name, "faster_transformer") == 0) {
    *out = CS_LLM_SCHED_STATIC;
    return TRUE;
  }
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
              "LLM replica scheduler \"%s\": expected vllm, sarathi, orca, static or "
              "faster_transformer",
              name != NULL ? name : "(null)");
  return FALSE;
}

void cs_llm_sched_config_init(CsLlmSchedConfig *cfg, CsLlmSchedPolicy policy)
{
  memset(cfg, 0, sizeof *cfg);
  cfg->policy = policy;
  cfg->num_blocks = 0;
  cfg->block_size = 16;
  cfg->batch_size_cap = 128;
  cfg->max_batch_size = 128;
  cfg->watermark_blocks_fraction = 0.01;
  cfg->max_tokens_in_batch = 4096;
  cfg->chunk_size = 512;
  cfg->max_tokens = 4096;
  cfg->num_stages = 1;
}

void cs_llm_request_init(CsLlmRequest *r, int64_t id, int64_t arrival, int prompt_tokens,
                         int output_tokens)
{
  memset(r, 0, sizeof *r);
  r->id = id;
  r->arrival = arrival;
  r->prompt_tokens = prompt_tokens;
  r->output_tokens = output_tokens;
  r->prefill_tokens = prompt_tokens;
  r->decode_tokens = output_tokens;
  r->state = CS_LLM_REQ_NEW;
}

/* Custom policies get the watermark too: the framework admits prefilled
 * requests above it (clustersim/llm.h), and the policy reads it. */
static gboolean uses_watermark(CsLlmSchedPolicy p)
{
  return p == CS_LLM_SCHED_VLLM || p == CS_LLM_SCHED_SARATHI || p == CS_LLM_SCHED_CUSTOM;
}

static gboolean check_positive(int64_t v, const char *field, GError **error)
{
  if (v >= 1)
    return TRUE;
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
              "LLM replica scheduler: %s is %" G_GINT64_FORMAT ", expected >= 1", field,
              (gint64)v);
  return FALSE;
}

CsLlmSched *cs_llm_sched_new(const CsLlmSchedConfig *cfg, GError **error)
{
  g_return_val_if_fail(cfg != NULL, NULL);
  if ((unsigned)cfg->policy >= G_N_ELEMENTS(POLICY_NAMES) ||
      (cfg->policy == CS_LLM_SCHED_CUSTOM) != (cfg->custom != NULL)) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM replica scheduler: policy %d, expected one of vllm, sarathi, orca, static",
                (int)cfg->policy);
    return NULL;
  }
  if (!check_positive(cfg->num_blocks, "num_blocks", error) ||
      !check_positive(cfg->block_size, "block_size", error) ||
      !check_positive(cfg->batch_size_cap, "batch_size_cap", error) ||
      !check_positive(cfg->max_batch_size, "max_batch_size", error) ||
      !check_positive(cfg->max_tokens_in_batch, "max_tokens_in_batch", error) ||
      !check_positive(cfg->chunk_size, "chunk_size", error) ||
      !check_positive(cfg->max_tokens, "max_tokens", error))
    return NULL;
  if (!(cfg->watermark_blocks_fraction >= 0 && cfg->watermark_blocks_fraction < 1)) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM replica scheduler: watermark_blocks_fraction is %g, expected in [0, 1)",
                cfg->watermark_blocks_fraction);
    return NULL;
  }
  if (!check_positive(cfg->num_stages, "num_stages", error))
    return NULL;
  /* vLLM's and Sarathi's max_micro_batch_size = batch_size_cap // stages:
   * 0 would never form a batch (Vidur's replica would wait forever). */
  if (uses_watermark(cfg->policy) && cfg->batch_size_cap < cfg->num_stages) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM replica scheduler %s: batch_size_cap is %d with %d pipeline stages, "
                "expected >= num_stages (a batch's limit is batch_size_cap / num_stages)",
                cs_llm_sched_config_name(cfg), cfg->batch_size_cap, cfg->num_stages);
    return NULL;
  }
  int64_t max_blocks_seq = cfg->max_tokens / cfg->block_size;
  gboolean reserves_max = cfg->policy == CS_LLM_SCHED_ORCA || cfg->policy == CS_LLM_SCHED_STATIC;
  if (reserves_max && (max_blocks_seq < 1 || max_blocks_seq > cfg->num_blocks)) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM replica scheduler %s: max_tokens / block_size = %d / %d = %" G_GINT64_FORMAT
                " blocks per request, expected 1 to num_blocks (%" G_GINT64_FORMAT ")",
                cs_llm_sched_policy_name(cfg->policy), cfg->max_tokens, cfg->block_size,
                (gint64)max_blocks_seq, (gint64)cfg->num_blocks);
    return NULL;
  }
  CsLlmSched *s = g_new0(CsLlmSched, 1);
  s->cfg = *cfg;
  s->max_blocks_seq = max_blocks_seq;
  /* Python's int() of fraction * num_blocks: truncation, same product. */
  s->watermark =
      uses_watermark(cfg->policy)
          ? (int64_t)(cfg->watermark_blocks_fraction * (double)cfg->num_blocks)
          : 0;
  if (uses_watermark(cfg->policy))
    s->batch_limit = cfg->batch_size_cap / cfg->num_stages;
  else
    s->batch_limit = MIN(cfg->max_batch_size, (int64_t)cfg->batch_size_cap);
  g_queue_init(&s->waiting);
  g_queue_init(&s->prefilled);
  g_queue_init(&s->arrived);
  g_queue_init(&s->static_groups);
  s->running = g_ptr_array_new();
  s->set_aside = g_ptr_array_new();
  s->skipped = g_ptr_array_new();
  s->flight = g_new0(CsLlmBatch, cfg->num_stages);
  s->flight_entries_cap = g_new0(int, cfg->num_stages);
  s->flight_restarted_cap = g_new0(int, cfg->num_stages);
  if (cfg->policy == CS_LLM_SCHED_CUSTOM && !cs_llm_sched_custom_create(s, error)) {
    cs_llm_sched_free(s);
    return NULL;
  }
  return s;
}

void cs_llm_sched_free(CsLlmSched *s)
{
  if (s == NULL)
    return;
  cs_llm_sched_custom_destroy(s);
  g_queue_clear(&s->waiting);
  g_queue_clear(&s->prefilled);
  g_queue_clear(&s->arrived);
  g_queue_clear(&s->static_groups);
  g_ptr_array_free(s->running, TRUE);
  g_ptr_array_free(s->set_aside, TRUE);
  g_ptr_array_free(s->skipped, TRUE);
  g_free(s->batch.entries);
  g_free(s->batch.restarted);
  for (int k = 0; s->flight != NULL && k < s->cfg.num_stages; k++) {
    g_free(s->flight[k].entries);
    g_free(s->flight[k].restarted);
  }
  g_free(s->flight);
  g_free(s->flight_entries_cap);
  g_free(s->flight_restarted_cap);
  g_free(s);
}

const CsLlmSchedConfig *cs_llm_sched_config(const CsLlmSched *s)
{
  return &s->cfg;
}


gboolean cs_llm_sched_add(CsLlmSched *s, CsLlmRequest *r, GError **error)
{
  g_return_val_if_fail(s != NULL && r != NULL, FALSE);
  const CsLlmSchedConfig *c = &s->cfg;
  if (r->state != CS_LLM_REQ_NEW) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM request %" G_GINT64_FORMAT ": added twice (expected a new request)",
                (gint64)r->id);
    return FALSE;
  }
  if (r->prompt_tokens < 1 || r->output_tokens < 1) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM request %" G_GINT64_FORMAT ": %d prompt and %d output tokens, expected "
                ">= 1 each",
                (gint64)r->id, r->prompt_tokens, r->output_tokens);
    return FALSE;
  }
  int64_t total = (int64_t)r->prompt_tokens + r->output_tokens;
  if (total > c->max_tokens) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM request %" G_GINT64_FORMAT ": prompt + output = %" G_GINT64_FORMAT
                " tokens, expected <= max_tokens (%d)",
                (gint64)r->id, (gint64)total, c->max_tokens);
    return FALSE;
  }
  /* The longest prefill a restart can ask for: all tokens but the last. */
  int64_t longest = total - 1 > r->prompt_tokens ? total - 1 : r->prompt_tokens;
  if (c->policy == CS_LLM_SCHED_VLLM && longest > c->max_tokens_in_batch) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM request %" G_GINT64_FORMAT ": a prefill of up to %" G_GINT64_FORMAT
                " tokens (prompt + output - 1 after a restart), expected <= "
                "max_tokens_in_batch (%d)",
                (gint64)r->id, (gint64)longest, c->max_tokens_in_batch);
    return FALSE;
  }
  /* A custom policy owes the watermark nothing (it is the policy's to keep):
   * only the replica's blocks bound it. */
  gboolean custom = c->policy == CS_LLM_SCHED_CUSTOM;
  int64_t wm = custom ? 0 : s->watermark;
  if (uses_watermark(c->policy) && cs_llm_ceil_div(longest, c->block_size) > c->num_blocks - wm) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM request %" G_GINT64_FORMAT ": a prefill of up to %" G_GINT64_FORMAT
                " tokens needs %" G_GINT64_FORMAT " blocks, expected <= num_blocks%s (%"
                G_GINT64_FORMAT " - %" G_GINT64_FORMAT ")",
                (gint64)r->id, (gint64)longest, (gint64)cs_llm_ceil_div(longest, c->block_size),
                custom ? "" : " - watermark", (gint64)c->num_blocks, (gint64)wm);
    return FALSE;
  }
  r->state = CS_LLM_REQ_WAITING;
  r->owner = s;
  g_queue_push_tail(&s->waiting, r);
  return TRUE;
}

/* --- memory (base, and vLLM's and Sarathi's _can_allocate_request /
 * _allocate_request) --- */

void cs_llm_sched_allocate(CsLlmSched *s, CsLlmRequest *r, int64_t n)
{
  if (r->blocks == 0)
    s->holding++;
  r->blocks += n;
  s->allocated += n;
  g_assert(s->allocated <= s->cfg.num_blocks);
}

void cs_llm_sched_free_request(CsLlmSched *s, CsLlmRequest *r)
{
  if (r->blocks == 0)
    return;
  s->allocated -= r->blocks;
  s->holding--;
  r->blocks = 0;
  g_assert(s->allocated >= 0);
}

/* vLLM and Sarathi: a request holding no blocks needs its whole prefill's
 * blocks above the watermark; one holding blocks needs one free block. */
static gboolean can_allocate_request(const CsLlmSched *s, const CsLlmRequest *r)
{
  if (r->blocks == 0)
    return cs_llm_sched_free_blocks(s) - cs_llm_ceil_div(r->prefill_tokens, s->cfg.block_size) >= s->watermark;
  return cs_llm_sched_free_blocks(s) >= 1;
}

static void allocate_request(CsLlmSched *s, CsLlmRequest *r)
{
  int64_t bs = s->cfg.block_size;
  if (r->blocks == 0) {
    cs_llm_sched_allocate(s, r, cs_llm_ceil_div(r->prefill_tokens, bs));
    return;
  }
  int64_t over = r->processed_tokens - r->blocks * bs;
  g_assert(over <= 1);
  if (over == 1)
    cs_llm_sched_allocate(s, r, 1);
}

/* Vidur's Request.restart, with difference 2 of the header for a request
 * whose prefill is not complete. */
void cs_llm_sched_restart(CsLlmSched *s, CsLlmRequest *r)
{
  if (r->prefill_complete) {
    int total = r->prefill_tokens + r->decode_tokens;
    r->prefill_tokens = r->processed_tokens;
    r->decode_tokens = total - r->prefill_tokens;
  }
  r->processed_tokens = 0;
  r->prefill_complete = FALSE;
  r->restarts++;
  s->n_restarts++;
  cs_llm_sched_free_request(s, r);
  r->state = CS_LLM_REQ_WAITING;
  g_queue_push_head(&s->waiting, r);
  if (s->batch.n_restarted == s->restarted_cap) {
    s->restarted_cap = s->restarted_cap ? 2 * s->restarted_cap : 8;
    s->batch.restarted = g_renew(CsLlmRequest *, s->batch.restarted, s->restarted_cap);
  }
  s->batch.restarted[s->batch.n_restarted++] = r;
}

/* --- the batch being formed --- */

void cs_llm_sched_batch_append(CsLlmSched *s, CsLlmRequest *r, int tokens)
{
  CsLlmBatch *b = &s->batch;
  if (b->n == s->entries_cap) {
    s->entries_cap = s->entries_cap ? 2 * s->entries_cap : 16;
    b->entries = g_renew(CsLlmBatchEntry, b->entries, s->entries_cap);
  }
  CsLlmBatchEntry *e = &b->entries[b->n++];
  memset(e, 0, sizeof *e);
  e->req = r;
  e->tokens = tokens;
  e->prefill = !r->prefill_complete;
  e->processed_before = r->processed_tokens;
  b->total_tokens += tokens;
  if (e->prefill)
    b->prefill_tokens += tokens;
  else
    b->n_decode++;
  r->state = CS_LLM_REQ_IN_BATCH;
}

/* Base _get_request_next_num_tokens. */
static int next_tokens(const CsLlmRequest *r)
{
  return r->prefill_complete ? 1 : r->prefill_tokens;
}

static CsLlmRequest *pop_front(GPtrArray *a)
{
  return g_ptr_array_steal_index(a, 0);
}

static CsLlmRequest *pop_back(GPtrArray *a)
{
  return g_ptr_array_steal_index(a, a->len - 1);
}

/* Python's list.sort(key=arrived_at): stable. The lists hold at most a
 * batch's worth of requests, so insertion sort. */
static void sort_by_arrival(GPtrArray *a)
{
  for (guint i = 1; i < a->len; i++) {
    CsLlmRequest *r = a->pdata[i];
    guint j = i;
    while (j > 0 && ((CsLlmRequest *)a->pdata[j - 1])->arrival > r->arrival) {
      a->pdata[j] = a->pdata[j - 1];
      j--;
    }
    a->pdata[j] = r;
  }
}

/* The decode step of vLLM and Sarathi for r (popped from the running list):
 * restart the running list's last entries until r can have a block, or r
 * itself when none is left. Returns TRUE when r is allocated (and may run). */
static gboolean decode_or_preempt(CsLlmSched *s, CsLlmRequest *r)
{
  while (!can_allocate_request(s, r)) {
    if (s->running->len > 0) {
      cs_llm_sched_restart(s, pop_back(s->running));
    } else {
      cs_llm_sched_restart(s, r);
      return FALSE;
    }
  }
  allocate_request(s, r);
  return TRUE;
}

static void next_vllm(CsLlmSched *s)
{
  const CsLlmSchedConfig *c = &s->cfg;
  int max_len = 0;
  while (!g_queue_is_empty(&s->waiting)) {
    CsLlmRequest *r = g_queue_peek_head(&s->waiting);
    int next = next_tokens(r);
    if (!can_allocate_request(s, r))
      break;
    int new_max = MAX(max_len, next);
    if ((int64_t)(s->batch.n + 1) * new_max > c->max_tokens_in_batch)
      break;
    if (s->holding == c->batch_size_cap)
      break;
    if (s->batch.n == s->batch_limit)
      break;
    g_queue_pop_head(&s->waiting);
    allocate_request(s, r);
    cs_llm_sched_batch_append(s, r, next);
    max_len = new_max;
  }
  if (s->batch.n > 0)
    return;
  sort_by_arrival(s->running);
  while (s->running->len > 0) {
    if (s->batch.n == s->batch_limit)
      break;
    CsLlmRequest *r = pop_front(s->running);
    if (decode_or_preempt(s, r))
      cs_llm_sched_batch_append(s, r, next_tokens(r));
  }
}

/* Sarathi's chunk for r: what is left of its prefill, within the budget. */
static int sarathi_chunk(const CsLlmSched *s, const CsLlmRequest *r)
{
  int64_t left = (int64_t)r->prefill_tokens - r->processed_tokens;
  int64_t budget = (int64_t)s->cfg.chunk_size - s->batch.total_tokens;
  int64_t n = MIN(left, budget);
  return n > 0 ? (int)n : 0;
}

static void next_sarathi(CsLlmSched *s)
{
  const CsLlmSchedConfig *c = &s->cfg;
  g_ptr_array_set_size(s->set_aside, 0);
  g_ptr_array_set_size(s->skipped, 0);
  while (s->running->len > 0) {
    if (s->batch.n == s->batch_limit)
      break;
    CsLlmRequest *r = pop_front(s->running);
    if (!r->prefill_complete) {
      g_ptr_array_add(s->set_aside, r);
      continue;
    }
    /* A decode's next tokens are 1, never 0: no skip here. */
    if (decode_or_preempt(s, r))
      cs_llm_sched_batch_append(s, r, 1);
  }
  for (guint i = 0; i < s->set_aside->len; i++) {
    CsLlmRequest *r = s->set_aside->pdata[i];
    int n = sarathi_chunk(s, r);
    if (n == 0) {
      g_ptr_array_add(s->skipped, r);
      continue;
    }
    cs_llm_sched_batch_append(s, r, n);
  }
  /* skipped + what is left, sorted by arrival. */
  for (guint i = 0; i < s->skipped->len; i++)
    g_ptr_array_insert(s->running, (gint)i, s->skipped->pdata[i]);
  sort_by_arrival(s->running);
  while (!g_queue_is_empty(&s->waiting)) {
    if (s->holding == c->batch_size_cap)
      break;
    if (s->batch.n == s->batch_limit)
      break;
    CsLlmRequest *r = g_queue_peek_head(&s->waiting);
    if (!can_allocate_request(s, r))
      break;
    int n = sarathi_chunk(s, r);
    if (n == 0)
      break;
    g_queue_pop_head(&s->waiting);
    allocate_request(s, r);
    cs_llm_sched_batch_append(s, r, n);
  }
}

/* Orca's and static batching's admission: whole prefills FIFO, each
 * reserving the longest request's blocks. */
static void admit_max_length(CsLlmSched *s)
{
  while (!g_queue_is_empty(&s->waiting)) {
    if (s->batch.n == s->batch_limit)
      break;
    if (cs_llm_sched_free_blocks(s) < s->max_blocks_seq)
      break;
    CsLlmRequest *r = g_queue_pop_head(&s->waiting);
    cs_llm_sched_allocate(s, r, s->max_blocks_seq);
    cs_llm_sched_batch_append(s, r, next_tokens(r));
  }
}

static void next_orca(CsLlmSched *s)
{
  while (s->running->len > 0) {
    if (s->batch.n == s->batch_limit)
      break;
    CsLlmRequest *r = pop_front(s->running);
    cs_llm_sched_batch_append(s, r, next_tokens(r));
  }
  admit_max_length(s);
}

static void next_static(CsLlmSched *s)
{
  if (!g_queue_is_empty(&s->static_groups)) {
    /* Re-run the oldest ended batch's unfinished requests, all of them (a
     * static batch never exceeds the limit it was formed under); with
     * pipeline stages each batch re-runs on its own, as Vidur's
     * _preempted_batches. */
    int k = GPOINTER_TO_INT(g_queue_pop_head(&s->static_groups));
    for (int j = 0; j < k; j++) {
      CsLlmRequest *r = pop_front(s->running);
      cs_llm_sched_batch_append(s, r, next_tokens(r));
    }
    return;
  }
  admit_max_length(s);
}

/* At the start of every batch's forming: the requests whose transfer ended
 * join the running list's end, in the order their transfers ended (after
 * the last batch's requests, which batch_done appended). */
static void admit_prefilled(CsLlmSched *s)
{
  while (!g_queue_is_empty(&s->arrived))
    g_ptr_array_add(s->running, g_queue_pop_head(&s->arrived));
}

const CsLlmBatch *cs_llm_sched_next_batch(CsLlmSched *s, GError **error)
{
  g_return_val_if_fail(s != NULL, NULL);
  if (s->n_flight == s->cfg.num_stages) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM replica scheduler %s: %d batch(es) already in flight, one per pipeline "
                "stage (expected cs_llm_sched_batch_done first)",
                cs_llm_sched_config_name(&s->cfg), s->n_flight);
    return NULL;
  }
  CsLlmBatch *b = &s->batch;
  b->n = 0;
  b->total_tokens = 0;
  b->prefill_tokens = 0;
  b->n_decode = 0;
  b->n_restarted = 0;
  admit_prefilled(s);
  switch (s->cfg.policy) {
  case CS_LLM_SCHED_VLLM:
    next_vllm(s);
    break;
  case CS_LLM_SCHED_SARATHI:
    next_sarathi(s);
    break;
  case CS_LLM_SCHED_ORCA:
    next_orca(s);
    break;
  case CS_LLM_SCHED_STATIC:
    next_static(s);
    break;
  case CS_LLM_SCHED_CUSTOM:
    if (!cs_llm_sched_custom_next(s, error))
      return NULL;
    break;
  }
  if (b->n == 0)
    return NULL;
  /* The formed batch takes the next free slot of the ring; the slot's old
   * buffers become the next batch's to form in. */
  int k = (s->flight_head + s->n_flight) % s->cfg.num_stages;
  CsLlmBatch tb = s->flight[k];
  s->flight[k] = *b;
  *b = tb;
  int tc = s->flight_entries_cap[k];
  s->flight_entries_cap[k] = s->entries_cap;
  s->entries_cap = tc;
  tc = s->flight_restarted_cap[k];
  s->flight_restarted_cap[k] = s->restarted_cap;
  s->restarted_cap = tc;
  s->n_flight++;
  return &s->flight[k];
}

const CsLlmBatch *cs_llm_sched_batch_done(CsLlmSched *s, GError **error)
{
  g_return_val_if_fail(s != NULL, NULL);
  if (s->n_flight == 0) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM replica scheduler %s: no batch in flight (expected "
                "cs_llm_sched_next_batch first)",
                cs_llm_sched_config_name(&s->cfg));
    return NULL;
  }
  /* The oldest batch: stages are FIFO, so batches end in the order they
   * were formed. */
  CsLlmBatch *b = &s->flight[s->flight_head];
  s->flight_head = (s->flight_head + 1) % s->cfg.num_stages;
  s->n_flight--;
  int rejoined = 0;
  for (int i = 0; i < b->n; i++) {
    CsLlmBatchEntry *e = &b->entries[i];
    CsLlmRequest *r = e->req;
    int total = r->prefill_tokens + r->decode_tokens;
    r->processed_tokens += e->tokens;
    g_assert(r->processed_tokens <= total);
    if (!e->prefill) {
      e->emitted = TRUE;
    } else if (r->processed_tokens == r->prefill_tokens) {
      /* The prefill's last token yields an output token in the same
       * iteration (Vidur's Request.on_batch_end). */
      r->prefill_complete = TRUE;
      r->processed_tokens++;
      e->emitted = TRUE;
      if (!r->got_first_token) {
        r->got_first_token = TRUE;
        e->first_token = TRUE;
      }
    }
    if (e->emitted)
      r->emitted_tokens++;
    if (r->processed_tokens == total) {
      e->finished = TRUE;
      r->state = CS_LLM_REQ_FINISHED;
      if (!r->keep_blocks)
        cs_llm_sched_free_request(s, r);
    } else {
      r->state = CS_LLM_REQ_RUNNING;
      g_ptr_array_add(s->running, r);
      rejoined++;
    }
  }
  if (s->cfg.policy == CS_LLM_SCHED_STATIC && rejoined > 0)
    g_queue_push_tail(&s->static_groups, GINT_TO_POINTER(rejoined));
  if (s->cfg.policy == CS_LLM_SCHED_CUSTOM)
    cs_llm_sched_custom_batch_done(s, b);
  return b;
}

int64_t cs_llm_sched_allocated_blocks(const CsLlmSched *s)
{
  return s->allocated;
}

int cs_llm_sched_n_waiting(const CsLlmSched *s)
{
  return (int)(g_queue_get_length((GQueue *)&s->waiting) +
               g_queue_get_length((GQueue *)&s->prefilled));
}

int cs_llm_sched_n_running(const CsLlmSched *s)
{
  return (int)s->running->len;
}

int cs_llm_sched_n_holding(const CsLlmSched *s)
{
  return s->holding;
}

int64_t cs_llm_sched_n_restarts(const CsLlmSched *s)
{
  return s->n_restarts;
}

gboolean cs_llm_sched_in_flight(const CsLlmSched *s)
{
  return s->n_flight > 0;
}

int cs_llm_sched_n_in_flight(const CsLlmSched *s)
{
  return s->n_flight;
}

const CsLlmBatch *cs_llm_sched_flight(const CsLlmSched *s, int i)
{
  if (i < 0 || i >= s->n_flight)
    return NULL;
  return &s->flight[(s->flight_head + i) % s->cfg.num_stages];
}

const CsLlmRequest *cs_llm_sched_waiting(const CsLlmSched *s, int i)
{
  if (i < 0)
    return NULL;
  return g_queue_peek_nth((GQueue *)&s->waiting, (guint)i);
}

int cs_llm_sched_n_prefilled_waiting(const CsLlmSched *s)
{
  return (int)g_queue_get_length((GQueue *)&s->prefilled);
}

const CsLlmRequest *cs_llm_sched_prefilled_waiting(const CsLlmSched *s, int i)
{
  if (i < 0)
    return NULL;
  return g_queue_peek_nth((GQueue *)&s->prefilled, (guint)i);
}

int64_t cs_llm_sched_batch_limit(const CsLlmSched *s)
{
  return s->batch_limit;
}

int64_t cs_llm_sched_watermark(const CsLlmSched *s)
{
  return s->watermark;
}
