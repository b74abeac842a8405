/* libclustersim: LLM replica schedulers of your own (docs/llm.md, "A
 * replica scheduler of your own"; docs/extending.md).
 *
 * An LLM replica (docs/llm.md) runs one batch at a time per pipeline stage
 * (cs_llm_replica_num_stages, 1 unless the deployment sets
 * pipeline_parallel): while fewer batches than stages are in flight it
 * asks its replica scheduler for the next batch, which chooses the requests
 * and how many tokens each processes in the iteration, and gives them KV
 * cache blocks. The built-in schedulers (vllm, sarathi, orca, static) are
 * Vidur's; a scheduler of your own is a CsLlmSchedulerPolicy added to a
 * registry (cs_registry_add_llm_scheduler, registry.h), typically from a
 * plug-in (plugin.h), and named by a deployment's "scheduler.policy"
 * (`clustersim llm run`, `llm search`, a scenario's "llm" entries).
 *
 * The framework owns the requests, the queues and the blocks; the policy
 * acts only through the services below, from its schedule callback. What a
 * request looks like (Vidur's accounting, as the built-ins use it):
 * - a request has prefill tokens (its prompt) and decode tokens (its
 *   output). The iteration that processes its last prefill token also gives
 *   it its first output token (processed += 1), so its prefill is complete
 *   and its next iterations are decodes of 1 token each; it finishes when
 *   processed == prefill + decode, and its blocks are freed then.
 * - waiting: in the replica's waiting queue, holding no blocks (new ones at
 *   the back, restarted ones at the front).
 * - running: admitted (holding blocks) and neither in the batch being
 *   formed nor in a batch in flight (with pipeline stages, up to
 *   num_stages - 1 other batches may be): the requests left out of earlier
 *   batches first, then the last ended batch's unfinished ones in batch
 *   order.
 * - a restart (recompute preemption) frees a running request's blocks and
 *   puts it at the front of the waiting queue; once its prefill was
 *   complete, its prefill becomes the prompt and the tokens generated so far
 *   and its processed tokens 0 (a request restarted in the middle of its
 *   prefill starts it again).
 * - a request that completed its prefill on another replica
 *   (disaggregated serving) is admitted by the framework: the blocks of its
 *   prompt's KV are reserved here before its KV transfer starts, when they
 *   fit above the watermark (cs_llm_replica_watermark) and fewer than
 *   batch_size_cap requests hold memory, FIFO (counted in the free blocks
 *   and n_holding meanwhile); once the transfer has ended it appears at the
 *   running list's end, prefill complete.
 *
 * The framework checks every service call and stops the run with a clear
 * error (`clustersim llm run` exits 2) at the first misuse, even when the
 * callback ignores the error a service returned: more blocks than are free,
 * a request of another replica or one not in the state the service needs, a
 * request twice in one batch, a prefill chunk of more tokens than its
 * prefill has left, a decode of other than 1 token, a batch entry whose KV
 * does not fit its blocks (a prefill chunk needs blocks x block_size >=
 * processed + tokens; a decode, blocks x block_size >= processed, as
 * Vidur's allocation keeps), a service called outside schedule. A policy
 * bug never turns into a silently wrong number. The framework does not
 * enforce batch_size_cap, max_tokens_in_batch, chunk_size or the watermark:
 * they are the scheduler's settings, read through the getters, for a policy
 * to honour as its rules say.
 *
 * A schedule call may form an empty batch; the replica then waits for the
 * next arrival or transfer. A run whose requests can never finish (nothing
 * in flight, nothing pending, requests held) fails at its end, naming the
 * request, the replica and the scheduler.
 *
 * Time: a scheduler sees no clock (Vidur's do not either); requests carry
 * their arrival time. Determinism: a policy must not draw from any source
 * other than its state; then a run is byte-identical for the same inputs.
 * Nothing here is thread safe; a replica's callbacks run on one thread.
 */
#ifndef CLUSTERSIM_LLM_H
#define CLUSTERSIM_LLM_H

#include "core.h"
#include "params.h"

G_BEGIN_DECLS

typedef struct CsLlmRequest CsLlmRequest;
typedef struct CsLlmReplica CsLlmReplica;

/* ---- Requests (read-only; valid while the replica holds them) ------------ */

/* The request's id: its index in the run's request list. */
CS_API int64_t cs_llm_request_id(const CsLlmRequest *r);
/* Its arrival time in ns since the start of the run (ties: list order). */
CS_API int64_t cs_llm_request_arrival_ns(const CsLlmRequest *r);
/* The tokens it was asked with: prompt and output, each >= 1. */
CS_API int cs_llm_request_prompt_tokens(const CsLlmRequest *r);
CS_API int cs_llm_request_output_tokens(const CsLlmRequest *r);
/* Vidur's accounting (top of this header): prefill and decode tokens
 * (changed by restarts; their sum is prompt + output), tokens processed so
 * far, whether the prefill is complete, the KV blocks it holds, and how many
 * times it was restarted. */
CS_API int cs_llm_request_prefill_tokens(const CsLlmRequest *r);
CS_API int cs_llm_request_decode_tokens(const CsLlmRequest *r);
CS_API int cs_llm_request_processed_tokens(const CsLlmRequest *r);
CS_API gboolean cs_llm_request_prefill_complete(const CsLlmRequest *r);
CS_API int64_t cs_llm_request_blocks(const CsLlmRequest *r);
CS_API int cs_llm_request_restarts(const CsLlmRequest *r);

/* ---- The replica: its settings ---------------------------------------------- */

/* The KV blocks of the replica and the tokens one block holds. */
CS_API int64_t cs_llm_replica_num_blocks(const CsLlmReplica *rep);
CS_API int cs_llm_replica_block_size(const CsLlmReplica *rep);
/* The deployment's scheduler settings ("scheduler" object; docs/llm.md):
 * batch_size_cap, the memory plan's max_batch_size, max_tokens_in_batch,
 * chunk_size, max_tokens (the longest request, prompt + output), and the
 * watermark in blocks: int(watermark_blocks_fraction x num_blocks). */
CS_API int cs_llm_replica_batch_size_cap(const CsLlmReplica *rep);
/* The replica's pipeline stages (pipeline_parallel, >= 1): up to that many
 * batches are in flight at once. Vidur's vLLM and Sarathi limit a batch to
 * batch_size_cap / num_stages requests (their max_micro_batch_size). */
CS_API int cs_llm_replica_num_stages(const CsLlmReplica *rep);
CS_API int64_t cs_llm_replica_max_batch_size(const CsLlmReplica *rep);
CS_API int cs_llm_replica_max_tokens_in_batch(const CsLlmReplica *rep);
CS_API int cs_llm_replica_chunk_size(const CsLlmReplica *rep);
CS_API int cs_llm_replica_max_tokens(const CsLlmReplica *rep);
CS_API int64_t cs_llm_replica_watermark(const CsLlmReplica *rep);

/* ---- The replica: its state --------------------------------------------------- */

/* Blocks free (num_blocks - held) and requests holding blocks. */
CS_API int64_t cs_llm_replica_free_blocks(const CsLlmReplica *rep);
CS_API int cs_llm_replica_n_holding(const CsLlmReplica *rep);
/* The waiting queue (i = 0: its front) and the running list (top of this
 * header); NULL when i is out of range. The lists change as the services
 * run: a request admitted leaves the waiting queue for the running list's
 * end, one scheduled leaves the running list, one restarted goes to the
 * waiting queue's front. */
CS_API int cs_llm_replica_n_waiting(const CsLlmReplica *rep);
CS_API CsLlmRequest *cs_llm_replica_waiting(const CsLlmReplica *rep, int i);
CS_API int cs_llm_replica_n_running(const CsLlmReplica *rep);
CS_API CsLlmRequest *cs_llm_replica_running(const CsLlmReplica *rep, int i);

/* The batch: while schedule runs, the one being formed; in on_batch_done,
 * the one that ran (with pipeline stages, the oldest in flight). Entries in the order they were scheduled: the request,
 * its tokens, whether they were prefill tokens, and (on_batch_done only;
 * FALSE before) whether the request finished in it. NULL / 0 / FALSE when i
 * is out of range. */
CS_API int cs_llm_replica_batch_size(const CsLlmReplica *rep);
CS_API int64_t cs_llm_replica_batch_tokens(const CsLlmReplica *rep);
CS_API CsLlmRequest *cs_llm_replica_batch_request(const CsLlmReplica *rep, int i);
CS_API int cs_llm_replica_batch_entry_tokens(const CsLlmReplica *rep, int i);
CS_API gboolean cs_llm_replica_batch_entry_prefill(const CsLlmReplica *rep, int i);
CS_API gboolean cs_llm_replica_batch_entry_finished(const CsLlmReplica *rep, int i);

/* ---- Services (from schedule only) ------------------------------------------- */

/* Gives r n more blocks. r is waiting (it is admitted: it leaves the waiting
 * queue for the running list's end) or running. Returns FALSE with error
 * set (CS_ERROR_POLICY) and stops the run when n < 1, n > the free blocks,
 * or r is neither. */
CS_API gboolean cs_llm_replica_allocate(CsLlmReplica *rep, CsLlmRequest *r, int64_t n,
                                        GError **error);

/* Puts running request r in the batch with tokens tokens: a chunk of its
 * prefill (1 <= tokens <= prefill - processed) or, once its prefill is
 * complete, one decode token. Its blocks must hold the KV the entry writes
 * (top of this header). Returns FALSE with error set (CS_ERROR_POLICY) and
 * stops the run otherwise, or when r is not running (waiting: allocate it
 * first; already in the batch). */
CS_API gboolean cs_llm_replica_schedule(CsLlmReplica *rep, CsLlmRequest *r, int tokens,
                                        GError **error);

/* Restarts running request r (top of this header): frees its blocks, puts
 * it at the front of the waiting queue. Returns FALSE with error set
 * (CS_ERROR_POLICY) and stops the run when r is not running. */
CS_API gboolean cs_llm_replica_restart(CsLlmReplica *rep, CsLlmRequest *r, GError **error);

/* ---- The policy ------------------------------------------------------------------ */

typedef struct CsLlmSchedulerPolicy {
  const char *name;        /* the deployment's "scheduler.policy" */
  const char *description; /* one line for the docs and listings */
  /* Optional. Parses the policy's own fields of the "scheduler" object (the
   * framework reads policy, batch_size_cap, chunk_size, block_size,
   * watermark_blocks_fraction, max_tokens_in_batch and num_blocks itself;
   * any field nobody asked for is refused). Returns the parameters (freed
   * with free_params, required with parse) or NULL with error set. */
  void *(*parse)(CsParams *params, void *user_data, GError **error);
  void (*free_params)(void *params);
  /* Optional. Creates the state of one replica's scheduler (each replica has
   * its own) from params (NULL without parse); rep's settings may be read.
   * Returns the state (destroy, required with create, frees it; NULL is a
   * valid state) or sets error: the run is refused. */
  void *(*create)(const CsLlmReplica *rep, const void *params, void *user_data,
                  GError **error);
  void (*destroy)(void *state);
  /* Required. The replica is idle and holds requests (waiting or running):
   * form the next batch through the services. Returns TRUE, or FALSE with
   * error set to stop the run (the message is shown with the scheduler's
   * name and the simulated time). */
  gboolean (*schedule)(void *state, CsLlmReplica *rep, GError **error);
  /* Optional. The oldest batch in flight (with one stage, the batch formed
   * by the last schedule) has run through every stage: tokens are
   * processed, finished requests have freed their blocks (they are still
   * readable here, and not after), the others are back in the running list. */
  void (*on_batch_done)(void *state, const CsLlmReplica *rep);
} CsLlmSchedulerPolicy;

G_END_DECLS

#endif
