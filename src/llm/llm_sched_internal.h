/* The replica scheduler's state, shared by the built-in policies
 * (llm_sched.c) and the services custom policies call (llm_sched_custom.c,
 * clustersim/llm.h). */
#ifndef CS_LLM_SCHED_INTERNAL_H
#define CS_LLM_SCHED_INTERNAL_H

#include "llm_sched.h"

G_BEGIN_DECLS

struct CsLlmReplica {
  CsLlmSchedConfig cfg;
  int64_t watermark;       /* blocks kept free for new admissions (vllm, sarathi) */
  int64_t batch_limit;     /* max_micro_batch_size or max_batch */
  int64_t max_blocks_seq;  /* max_tokens / block_size: orca and static reservations */
  int64_t allocated;       /* blocks held in all */
  int holding;             /* requests holding blocks (Vidur's len(allocation_map)) */
  int64_t n_restarts;
  GQueue waiting;          /* of CsLlmRequest *, front first */
  GQueue prefilled;        /* added by cs_llm_sched_add_prefilled, pending transfer */
  GQueue arrived;          /* reserved, transfer ended, to join the running list */
  int in_transfer;         /* reserved, transfer not ended */
  GPtrArray *running;      /* Vidur's _preempted_requests (static: the batch to re-run) */
  GPtrArray *set_aside;    /* sarathi: partial prefills of this call */
  GPtrArray *skipped;      /* sarathi: partial prefills that got no tokens */
  GQueue static_groups;    /* static: the running list's batches to re-run, as sizes
                            * (GINT_TO_POINTER), oldest first (Vidur's _preempted_batches) */
  /* The batch being formed (its buffers swap with a flight slot's when it
   * is formed), and the batches in flight: num_stages slots, a ring whose
   * oldest is flight[flight_head] (Vidur's _num_running_batches is
   * n_flight). */
  CsLlmBatch batch;
  int entries_cap;
  int restarted_cap;
  CsLlmBatch *flight;
  int *flight_entries_cap;
  int *flight_restarted_cap;
  int flight_head;
  int n_flight;
  const CsLlmBatch *done_view; /* in a custom policy's on_batch_done: the batch that ran */
  /* CS_LLM_SCHED_CUSTOM (llm_sched_custom.c) */
  void *custom_state;   /* what the policy's create returned */
  gboolean custom_live; /* create succeeded: destroy is owed */
  guint waiting_gen;    /* changes when the waiting queue does (custom services) */
  guint cursor_gen;     /* the cursor below is valid for this generation */
  int cursor_i;         /* cs_llm_replica_waiting's last index and its link */
  GList *cursor_link;
  gboolean in_schedule; /* the policy's schedule is running: services allowed */
  GError *violation;    /* the first misuse of a service: it stops the run */
};

/* ceil(a / b) for a >= 0, b >= 1. */
static inline int64_t cs_llm_ceil_div(int64_t a, int64_t b)
{
  return (a + b - 1) / b;
}

static inline int64_t cs_llm_sched_free_blocks(const CsLlmSched *s)
{
  return s->cfg.num_blocks - s->allocated;
}

/* Gives r n more blocks (it holds memory from then on); frees all of r's
 * blocks. */
void cs_llm_sched_allocate(CsLlmSched *s, CsLlmRequest *r, int64_t n);
void cs_llm_sched_free_request(CsLlmSched *s, CsLlmRequest *r);

/* Restarts running (or just popped) r: Vidur's Request.restart with the
 * header's difference 2; r goes to the waiting queue's front and the
 * batch's restarted list. */
void cs_llm_sched_restart(CsLlmSched *s, CsLlmRequest *r);

/* Appends r with tokens to the batch being formed; r is then IN_BATCH. */
void cs_llm_sched_batch_append(CsLlmSched *s, CsLlmRequest *r, int tokens);

/* Custom policies (llm_sched_custom.c): create the policy's state (FALSE
 * with error set when its create fails), destroy it, and form a batch
 * through the policy's schedule (FALSE with error set, CS_ERROR_POLICY,
 * when the policy fails or misused a service). */
gboolean cs_llm_sched_custom_create(CsLlmSched *s, GError **error);
void cs_llm_sched_custom_destroy(CsLlmSched *s);
gboolean cs_llm_sched_custom_next(CsLlmSched *s, GError **error);
void cs_llm_sched_custom_batch_done(CsLlmSched *s, const CsLlmBatch *b);

G_END_DECLS

#endif
