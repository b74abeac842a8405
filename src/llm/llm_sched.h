/* The replica schedulers of an LLM replica (issue 38): which requests run
 * in the next iteration and with how many tokens each, and the KV-cache
 * blocks they hold. A time-free state machine: the caller (the engine, or a
 * test) adds requests as they arrive, asks for the next batch when the
 * replica is idle, and reports the batch done when its iteration ends.
 *
 * The rules are Vidur's replica schedulers as read from its source
 * (github:microsoft/vidur at 7d47513, docs/research/vidur.md section 4).
 * Paths below are Vidur's, under vidur/; "base" is
 * scheduler/replica_scheduler/base_replica_scheduler.py, "request" is
 * entities/request.py, the policies are scheduler/replica_scheduler/
 * POLICY_replica_scheduler.py.
 *
 * Request accounting (request):
 * - A request has prefill tokens (its prompt) and decode tokens (its
 *   output). When an iteration processes its last prefill token, the
 *   request also gets its first output token in that iteration
 *   (processed += 1), so D output tokens take one prefill iteration (or
 *   several chunks) and D - 1 decode iterations. It is finished when
 *   processed == prefill + decode.
 * - Restart (recompute preemption): prefill := processed (the prompt and
 *   the tokens generated so far), decode := total - prefill, processed := 0,
 *   restarts += 1; the scheduler frees all its blocks and puts it at the
 *   FRONT of the waiting queue. The first-token event happens once in a
 *   request's life (Vidur keeps prefill_completed_at's first value).
 *
 * Common rules (base):
 * - Blocks are counted per request; a request "holds memory" from its
 *   admission until it finishes or restarts. can_allocate(n): free >= n.
 * - A request's next tokens: 1 once its prefill is complete, else its whole
 *   prefill (Sarathi overrides this with chunks).
 * - Requests that are admitted but not in a batch form the running list
 *   (Vidur's _preempted_requests: "running, waiting for the next
 *   iteration", not a preemption). A batch's unfinished requests are
 *   appended to it in batch order when the batch ends; finished ones free
 *   their blocks.
 * - Up to num_stages batches in flight (base on_schedule: Vidur forms
 *   batches while _num_running_batches < num_stages, each decrementing it
 *   in its on_batch_end). A batch's requests are in no list while it is in
 *   flight, so the next batch is formed from the others; the stages being
 *   FIFO, batches end in the order they were formed, and
 *   cs_llm_sched_batch_done ends the oldest.
 *
 * "vllm" (vllm_replica_scheduler.py):
 * - max_micro_batch_size = batch_size_cap / stages; watermark =
 *   int(watermark_blocks_fraction * num_blocks).
 * - Prefill first: take waiting requests FIFO, stopping at the first that
 *   fails one of (in this order): memory (a request not holding memory needs
 *   free - ceil(prefill / block_size) >= watermark), the padded budget
 *   (n_in_batch * max(next tokens) <= max_tokens_in_batch, counting this
 *   one), requests holding memory < batch_size_cap, batch size <
 *   max_micro_batch_size. Admission reserves ceil(prefill / block_size)
 *   blocks. If any request was taken, the batch is those whole prefills
 *   only.
 * - Else a decode batch: the running list sorted by arrival (stable), up to
 *   max_micro_batch_size, 1 token each. Each needs free >= 1 (even when it
 *   needs no new block); when that fails the latest-arrived other running
 *   request not yet taken (the list's last) is restarted, and so on; with
 *   none left the request restarts itself. A request taken gets one more
 *   block when processed > blocks * block_size (it is never more than one
 *   token over).
 * "sarathi" (sarathi_replica_scheduler.py), same memory rules, watermark
 *   and max_micro_batch_size:
 * - (1) the running list in its current order (not sorted: leftovers of the
 *   last call, then the last batch in batch order), up to
 *   max_micro_batch_size: decodes take 1 token each, with vLLM's
 *   free >= 1 rule and restarts (the victim is the list's last entry not yet
 *   taken, which may be a request in the middle of its prefill); partial
 *   prefills are set aside; decodes count in the budget but are not limited
 *   by it;
 * - (2) the partial prefills set aside: min(remaining prefill, chunk_size -
 *   tokens so far) each; those that get 0 stay in the running list;
 * - the running list left is then sorted by arrival (stable);
 * - (3) new requests FIFO while requests holding memory < batch_size_cap,
 *   batch size < max_micro_batch_size, memory (vLLM's rule, reserving the
 *   WHOLE prefill's blocks at admission), and a chunk of at least 1 token
 *   is left (the last may get a partial chunk).
 * "orca" (orca_replica_scheduler.py): all running requests in list order,
 *   then new requests FIFO while free >= max_blocks_per_sequence
 *   (max_tokens / block_size, reserved at admission for the request's whole
 *   life; no watermark), the batch limited by max_batch = min(max_batch_size,
 *   batch_size_cap) (not divided by stages); whole prefills and decodes
 *   mixed, no token budget, no preemption.
 * "static" (faster_transformer_replica_scheduler.py, FasterTransformer's
 *   static batching): while an ended batch has unfinished requests, the
 *   next batch is those of the oldest such batch (1 token each; with
 *   pipeline stages each batch re-runs on its own, Vidur's
 *   _preempted_batches); otherwise a new batch from the queue FIFO, up to
 *   max_batch, each reserving max_blocks_per_sequence while free allows.
 *   New arrivals wait until a whole batch has finished.
 *
 * "custom" (CS_LLM_SCHED_CUSTOM; llm_sched_custom.c, clustersim/llm.h): a
 *   CsLlmSchedulerPolicy of a registry forms the batch through the checked
 *   services (allocate, schedule, restart) on these same queues, blocks and
 *   batch; requests prefilled elsewhere are reserved by vLLM's rule
 *   (cs_llm_sched_reserve_prefilled: the framework's, not the policy's); a
 *   request may need up
 *   to num_blocks (cs_llm_sched_add), the watermark being the policy's to
 *   keep.
 *
 * Differences from Vidur (each would be a bug to copy):
 * 1. static: Vidur frees memory only when all of a batch's requests have
 *    finished, and then only for the requests of the last iteration: the
 *    requests that finished earlier are dropped from the re-run batch and
 *    their blocks are never freed (its _pending_free_map is never filled),
 *    so the pool shrinks with every batch of unequal lengths until nothing
 *    can be admitted. Here a request's blocks are freed when it finishes,
 *    under every policy. The admissions are the same (a new static batch is
 *    formed only after the old one ended) as long as Vidur's pool had not
 *    yet leaked below a request's reservation.
 * 2. sarathi: a restart victim can be a request in the middle of its
 *    prefill (processed = the chunks done, < its prefill). Vidur's restart
 *    then makes the chunks done its new prefill and turns the rest of the
 *    prompt into output tokens (decode := total - processed), so the request
 *    emits more output tokens than it asked for, one decode iteration per
 *    prompt token left. Here a request restarted before its prefill is
 *    complete keeps its prefill and output and starts again from 0.
 * 3. Requests Vidur would accept but could never run are refused at
 *    cs_llm_sched_add (see there). Vidur's request generator keeps prompt +
 *    output <= max_tokens; with the defaults and a memory plan of a few
 *    request slots or more, the other checks then hold as well; where they
 *    do not, Vidur's replica would wait forever.
 * 4. Equal arrival keys: Vidur sorts by arrival time with a stable sort, so
 *    ties keep list order; here too (the caller's key may be a time or a
 *    sequence number).
 *
 * Checked (tests/llm/test_sched_vidur.py): on seeded random workloads with
 * tight memory, with 1, 2 and 4 stages, the traces (batches, tokens,
 * restarts, first tokens, finishes, blocks after every iteration) equal
 * those of Vidur's own scheduler classes with differences 1 and 2 applied
 * to them. With one stage, the sorts by arrival (vLLM's, Sarathi's)
 * changed no trace there: the running list stays in arrival order. With
 * stages vLLM's decides (a request left over while others were in flight
 * precedes them in the list; test_llm_sched_stages); Sarathi's still
 * changed none.
 */
#ifndef CS_LLM_SCHED_H
#define CS_LLM_SCHED_H

#include <glib.h>
#include <stdint.h>

#include "clustersim/llm.h"

G_BEGIN_DECLS

typedef enum {
  CS_LLM_SCHED_VLLM,
  CS_LLM_SCHED_SARATHI,
  CS_LLM_SCHED_ORCA,
  CS_LLM_SCHED_STATIC,
  CS_LLM_SCHED_CUSTOM, /* a CsLlmSchedulerPolicy of a registry (clustersim/llm.h) */
} CsLlmSchedPolicy;

/* "vllm", "sarathi", "orca", "static"; "custom" for CS_LLM_SCHED_CUSTOM
 * (cs_llm_sched_config_name gives the policy's own name). */
const char *cs_llm_sched_policy_name(CsLlmSchedPolicy policy);

/* Parses one of those names (also Vidur's "faster_transformer" for static).
 * Returns FALSE with error set (CS_INPUT_ERROR_INVALID) naming the name and
 * the known ones when it is none of them. */
gboolean cs_llm_sched_policy_parse(const char *name, CsLlmSchedPolicy *out, GError **error);

typedef struct {
  CsLlmSchedPolicy policy;
  int64_t num_blocks;               /* KV blocks of the replica (cs_llm_plan's num_blocks); no default */
  int block_size;                   /* tokens per block: 16 */
  int batch_size_cap;               /* 128 */
  int64_t max_batch_size;           /* memory plan's max_batch_size: orca and static take
                                     * min(this, batch_size_cap); default 128 */
  double watermark_blocks_fraction; /* 0.01, vllm and sarathi */
  int max_tokens_in_batch;          /* 4096, vllm's padded budget */
  int chunk_size;                   /* 512, sarathi's token budget */
  int max_tokens;                   /* 4096: the longest request (prompt + output); orca and
                                     * static reserve max_tokens / block_size blocks each */
  int num_stages;                   /* pipeline stages: batches in flight at most; 1 */
  /* CS_LLM_SCHED_CUSTOM: the policy, its user data and its parameters (what
   * its parse returned; owned by whoever parsed them), all outliving every
   * scheduler made from this config. NULL otherwise. */
  const CsLlmSchedulerPolicy *custom;
  void *custom_user_data;
  const void *custom_params;
} CsLlmSchedConfig;

/* The scheduler's name as a deployment writes it: the built-in policy's
 * name, or the custom policy's. */
const char *cs_llm_sched_config_name(const CsLlmSchedConfig *cfg);

/* Fills cfg with policy and Vidur's defaults (above); num_blocks is 0 and
 * must be set. */
void cs_llm_sched_config_init(CsLlmSchedConfig *cfg, CsLlmSchedPolicy policy);

typedef enum {
  CS_LLM_REQ_NEW,      /* not added yet */
  CS_LLM_REQ_WAITING,  /* in the waiting queue, holding no blocks */
  CS_LLM_REQ_RUNNING,  /* admitted, between iterations, holding blocks */
  CS_LLM_REQ_IN_BATCH, /* in the batch in flight */
  CS_LLM_REQ_FINISHED, /* all its tokens processed, blocks freed */
} CsLlmReqState;

/* A request (opaque in clustersim/llm.h). The caller owns it and keeps it
 * alive and in place from cs_llm_sched_add until it has finished (or the
 * scheduler is freed); the scheduler updates it and the caller only reads
 * it. */
struct CsLlmRequest {
  int64_t id;            /* the caller's; used in messages */
  int64_t arrival;       /* the key running requests are sorted by (Vidur's arrived_at) */
  int prompt_tokens;     /* as asked, >= 1 */
  int output_tokens;     /* as asked, >= 1 */
  /* Vidur's accounting, changed by restarts: */
  int prefill_tokens;    /* the prompt, or after a restart prompt + tokens generated */
  int decode_tokens;     /* prompt_tokens + output_tokens - prefill_tokens */
  int processed_tokens;  /* of prefill_tokens + decode_tokens */
  int64_t blocks;        /* KV blocks held */
  int restarts;
  int emitted_tokens;    /* output tokens produced in its life, output_tokens at the end */
  gboolean prefill_complete;
  gboolean got_first_token;
  gboolean keep_blocks;  /* set by the caller before adding: when it finishes, its blocks
                          * stay held until cs_llm_sched_release (a prefill replica keeps a
                          * request's KV cache until its transfer ends, as in Splitwise) */
  CsLlmReqState state;
  const CsLlmReplica *owner; /* the scheduler it was added to (custom policies' checks) */
};

/* Sets r up as a new request (every other field 0 or FALSE). */
void cs_llm_request_init(CsLlmRequest *r, int64_t id, int64_t arrival, int prompt_tokens,
                         int output_tokens);

/* One request's share of a batch. */
typedef struct {
  CsLlmRequest *req;
  int tokens;             /* processed this iteration */
  gboolean prefill;       /* prefill tokens (a whole prefill or a chunk); else 1 decode token */
  int processed_before;   /* the request's processed tokens when scheduled (the KV it reads) */
  /* Filled by cs_llm_sched_batch_done: */
  gboolean emitted;       /* it produced an output token (a decode, or its prefill's last chunk) */
  gboolean first_token;   /* that token was its first (once in its life, restarts aside) */
  gboolean finished;
} CsLlmBatchEntry;

typedef struct {
  CsLlmBatchEntry *entries; /* n of them, in Vidur's order */
  int n;
  int64_t total_tokens;     /* sum of tokens */
  int64_t prefill_tokens;   /* of which prefill (Vidur's batch.num_prefill_tokens) */
  int n_decode;             /* entries with one decode token */
  CsLlmRequest **restarted; /* restarted while this batch was formed, in order; n_restarted */
  int n_restarted;
} CsLlmBatch;

/* The scheduler of one replica: the CsLlmReplica a custom policy sees. */
typedef struct CsLlmReplica CsLlmSched;

/* A scheduler for one replica. Returns it (cs_llm_sched_free) or NULL with
 * error set (CS_INPUT_ERROR_INVALID) naming the field and what was
 * expected: num_blocks, block_size, batch_size_cap, max_batch_size,
 * max_tokens_in_batch, chunk_size, max_tokens < 1; a watermark fraction
 * outside [0, 1); num_stages < 1; for vllm, sarathi and custom,
 * batch_size_cap < num_stages (max_micro_batch_size would be 0); for orca and static, max_tokens /
 * block_size < 1 or more blocks than num_blocks (no request could ever be
 * admitted); custom set with another policy, or CUSTOM without it; for
 * custom, its create failing (the policy's message, named). */
CsLlmSched *cs_llm_sched_new(const CsLlmSchedConfig *cfg, GError **error);

/* Frees the scheduler; the requests are the caller's. Accepts NULL. */
void cs_llm_sched_free(CsLlmSched *s);

const CsLlmSchedConfig *cs_llm_sched_config(const CsLlmSched *s);

/* A request arrives: r (cs_llm_request_init'ed, state NEW) joins the back of
 * the waiting queue. Returns FALSE with error set (CS_INPUT_ERROR_INVALID,
 * naming the request's id and the field) when r is not NEW, prompt or output
 * < 1, prompt + output > max_tokens, or the request could never run on an
 * empty replica even after restarts (which re-prefill up to prompt + output
 * - 1 tokens): for vllm, prompt + output - 1 > max_tokens_in_batch; for vllm
 * and sarathi, ceil((prompt + output - 1) / block_size) > num_blocks -
 * watermark. */
gboolean cs_llm_sched_add(CsLlmSched *s, CsLlmRequest *r, GError **error);

/* Disaggregated serving (llm_sim.h), the decode side. A request prefilled
 * on another replica comes here in three steps, as in splitwise-sim (the
 * destination's memory allocated before the flow) and DistServe (a
 * migration accepted only when its blocks are free):
 *  1. cs_llm_sched_add_prefilled: r (NEW, output tokens >= 2) was prefilled
 *     elsewhere, which produced its first output token and still holds its
 *     prompt's KV cache. It joins this replica's queue pending transfer
 *     (FIFO, counted in n_waiting, holding nothing) with processed = prompt
 *     + 1, prefill complete, first token and one emitted token done.
 *  2. cs_llm_sched_reserve_prefilled: the queue's head, when it fits, gets
 *     its blocks now and is returned; the caller starts its KV transfer.
 *     vllm and sarathi need ceil(prompt / block_size) blocks above the
 *     watermark (its next decode adds a block when it crosses one, as after
 *     a local prefill) and fewer than batch_size_cap requests holding
 *     memory; orca needs max_tokens / block_size free blocks and fewer than
 *     max_batch holding. NULL when the queue is empty or its head does not
 *     fit (head-of-line: the first refused stops the rest, as DistServe's
 *     decoding scheduler). The caller asks again whenever blocks may have
 *     freed, until NULL; in transfer, r stays WAITING and holds its blocks
 *     (counted in n_holding and cs_llm_sched_n_in_transfer, in no queue a
 *     batch is formed from, never a restart victim).
 *  3. cs_llm_sched_prefilled_arrived: its transfer ended; r joins the
 *     running list's end when the next batch is formed (after the batch in
 *     flight's requests), and is scheduled by the policy's own rules (a
 *     decode; a restart prefills it here again from 0).
 * add_prefilled returns FALSE with error set (CS_INPUT_ERROR_INVALID, naming
 * the request) for the static policy, an output of 1 token, or anything
 * cs_llm_sched_add refuses (the same bounds: a restart here may re-prefill
 * up to prompt + output - 1 tokens; so the head always fits an empty
 * replica). prefilled_arrived returns FALSE with error set for a request
 * reserve_prefilled did not return or that arrived already. */
gboolean cs_llm_sched_add_prefilled(CsLlmSched *s, CsLlmRequest *r, GError **error);
CsLlmRequest *cs_llm_sched_reserve_prefilled(CsLlmSched *s);
gboolean cs_llm_sched_prefilled_arrived(CsLlmSched *s, CsLlmRequest *r, GError **error);
/* Requests reserved here whose transfer has not ended. */
int cs_llm_sched_n_in_transfer(const CsLlmSched *s);

/* Frees the blocks of r, a finished request added with keep_blocks set.
 * Returns FALSE with error set (CS_INPUT_ERROR_INVALID) when r is not
 * finished or does not keep its blocks. */
gboolean cs_llm_sched_release(CsLlmSched *s, CsLlmRequest *r, GError **error);

/* Forms the next batch by the policy's rules and marks it in flight. Returns
 * it (owned by the scheduler, valid until the next call of this function
 * after its cs_llm_sched_batch_done),
 * or NULL when no batch can be formed now (error unset): nothing waits or
 * runs, or every waiting request is held back (vLLM, Sarathi: memory; this
 * cannot last with nothing in flight for requests cs_llm_sched_add took,
 * once the caller asks again after a call that only restarted requests, as
 * llm_sim.c's start_batch does).
 * Restarts done while forming it are in the batch's restarted list (and,
 * with no batch, still happen: see cs_llm_sched_n_restarts). Returns NULL
 * with error set (CS_INPUT_ERROR_INVALID) when num_stages batches are
 * already in flight; for custom, NULL with error set (CS_ERROR, CS_ERROR_POLICY)
 * when its schedule fails or misused a service (now or, from
 * on_batch_done, since the last batch). */
const CsLlmBatch *cs_llm_sched_next_batch(CsLlmSched *s, GError **error);

/* The oldest batch in flight has run (through every stage): each request's processed tokens advance by
 * its tokens (a prefill's last token also yields an output token, above),
 * finished requests free their blocks, the others rejoin the running list
 * (static: the batch to re-run). Fills the entries' emitted, first_token
 * and finished, and returns the batch (valid until the next call of
 * cs_llm_sched_next_batch). Returns NULL with
 * error set (CS_INPUT_ERROR_INVALID) when no batch is in flight. */
const CsLlmBatch *cs_llm_sched_batch_done(CsLlmSched *s, GError **error);

/* The state: blocks allocated (num_blocks - free), requests waiting,
 * running between iterations (static: in the batch to re-run), holding
 * blocks, and restarts so far; whether any batch is in flight. */
int64_t cs_llm_sched_allocated_blocks(const CsLlmSched *s);
int cs_llm_sched_n_waiting(const CsLlmSched *s);
int cs_llm_sched_n_running(const CsLlmSched *s);
int cs_llm_sched_n_holding(const CsLlmSched *s);
int64_t cs_llm_sched_n_restarts(const CsLlmSched *s);
gboolean cs_llm_sched_in_flight(const CsLlmSched *s);
/* The batches in flight (0 to num_stages), and the i-th of them, oldest
 * first (0 <= i < that), or NULL. */
int cs_llm_sched_n_in_flight(const CsLlmSched *s);
const CsLlmBatch *cs_llm_sched_flight(const CsLlmSched *s, int i);

/* The waiting queue's i-th request from the front (0 <= i < n_waiting), or
 * NULL. */
const CsLlmRequest *cs_llm_sched_waiting(const CsLlmSched *s, int i);
/* The requests added by cs_llm_sched_add_prefilled and not reserved yet
 * (pending transfer), and the i-th (0-based) of them in FIFO order, or NULL
 * out of range. */
int cs_llm_sched_n_prefilled_waiting(const CsLlmSched *s);
const CsLlmRequest *cs_llm_sched_prefilled_waiting(const CsLlmSched *s, int i);

/* The limit on a batch's requests: max_micro_batch_size (vllm, sarathi) or
 * max_batch (orca, static); and the watermark in blocks (vllm, sarathi; 0
 * otherwise). */
int64_t cs_llm_sched_batch_limit(const CsLlmSched *s);
int64_t cs_llm_sched_watermark(const CsLlmSched *s);

G_END_DECLS

#endif
