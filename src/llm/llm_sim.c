/* The token-level simulation of LLM replicas (llm_sim.h): a deployment run
 * instant by instant (CsLlmCluster: arrivals and batch ends, the routers,
 * the per-request record), the whole run over a list of requests on top of
 * it; the figures of a finished run are llm_sim_summary.c's. */
#include "llm_sim.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_input.h"

static const char *const ROUTER_NAMES[] = { "round_robin", "lor", "least_outstanding" };

const char *cs_llm_router_name(CsLlmRouter router)
{
  return (unsigned)router < G_N_ELEMENTS(ROUTER_NAMES) ? ROUTER_NAMES[router] : "?";
}

gboolean cs_llm_router_parse(const char *name, CsLlmRouter *out, GError **error)
{
  for (unsigned i = 0; i < G_N_ELEMENTS(ROUTER_NAMES); i++) {
    if (name != NULL && strcmp(name, ROUTER_NAMES[i]) == 0) {
      *out = (CsLlmRouter)i;
      return TRUE;
    }
  }
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
              "LLM router \"%s\": expected round_robin, lor or least_outstanding",
              name != NULL ? name : "(null)");
  return FALSE;
}

/* A batch end: replica and the sequence number of its start, which orders
 * equal times as Vidur's event ids do (llm_sim.h). */
typedef struct {
  int64_t time_ns;
  int64_t seq;
  int replica;
  int stage;              /* the pipeline stage the batch ends (the last: the batch's end) */
  struct Slot *req;       /* a transfer's end (disaggregated): its request; NULL a stage end */
} BatchEnd;

static gint batch_end_cmp(gconstpointer a, gconstpointer b, gpointer data)
{
  (void)data;
  const BatchEnd *x = a, *y = b;
  if (x->time_ns != y->time_ns)
    return x->time_ns < y->time_ns ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One request from its arrival to its completion. The schedulers hold
 * pointers to req and dreq, so a slot never moves: slots come in chunks
 * and go back to a free list when their request completes. */
typedef struct Slot {
  CsLlmRequest req;       /* the scheduler's view: the whole request, or disaggregated the
                           * prefill replica's (one output token) */
  CsLlmRequest dreq;      /* disaggregated: the decode replica's, the whole request */
  int64_t last_iter_end;  /* the end of its last batch (TBT) */
  int64_t last_token;     /* the time of its last output token, -1 none */
  int64_t tag;            /* the caller's */
  gboolean live;          /* added and not completed */
  CsLlmSimRequestResult out;
  struct Slot *next;      /* the arrivals not routed yet, or the free list */
} Slot;

enum { SLOT_CHUNK = 256 };

static Slot *slot_of(CsLlmRequest *r, gboolean decode_side)
{
  return decode_side ? (Slot *)((char *)r - offsetof(Slot, dreq)) : (Slot *)r;
}

/* One pipeline stage of a replica: a FIFO of batches, one executing at a
 * time. Batches move through the stages in the order they were formed, so
 * a batch is its ordinal (0 for the replica's first) and the queue of a
 * stage is the ordinals [started, arrived). */
typedef struct {
  int64_t arrived;        /* batches that reached the stage */
  int64_t started;        /* batches that started it */
  gboolean busy;
} Stage;

typedef struct {
  CsLlmSched *sched;
  Stage *stages;          /* exec.pp of them */
  int64_t ended;          /* batches through the last stage (the ordinal of the oldest in flight) */
  int64_t stage_busy_ns;  /* the stages' execution times summed (busy_ns is this / pp) */
  int64_t last_change_ns; /* when allocated blocks last changed or were sampled */
  int64_t last_blocks;
  /* At the current instant: got a request, ended a batch, or (disaggregated)
   * a transfer to or from it ended. */
  gboolean got_request, ended_batch, poked;
} Replica;

struct CsLlmCluster {
  CsLlmSimConfig cfg;          /* a copy; what it points to is the caller's */
  CsLlmClusterHooks hooks;
  CsLlmExec *exec;
  Replica *rep;
  int n_rep;                   /* all replicas: the prefill pool, then the decode pool */
  gboolean disagg;
  GSequence *ends;             /* BatchEnd, ordered by (time, seq) */
  int64_t seq;
  int64_t rr_counter;
  int64_t now_ns;              /* the instant of the last step (-1 before the first) */
  int64_t last_arrival_ns;     /* of the last request added */
  Slot *arrivals, *arrivals_tail; /* added, not routed yet, in arrival order */
  Slot *free_slots;
  GPtrArray *chunks;           /* Slot[SLOT_CHUNK] each */
  int64_t live;                /* requests added and not completed */
  CsLlmBatchRequest *breqs;    /* scratch for timing a batch */
  int breqs_cap;
  CsLlmSimResult *res;         /* the counters and per-replica results; no requests */
};

/* The series' bin of t (cfg.series_bin_ns > 0), the series grown to hold
 * it and its width doubled while it would pass CS_LLM_SERIES_MAX. */
static CsLlmBin *bin_at(CsLlmCluster *s, int64_t t)
{
  GArray *a = s->res->series;
  while (t / s->res->series_bin_ns >= CS_LLM_SERIES_MAX) {
    /* Pairs merge: bin k of the new width is bins 2k and 2k + 1. */
    guint n = (a->len + 1) / 2;
    for (guint k = 0; k < n; k++) {
      CsLlmBin m = g_array_index(a, CsLlmBin, 2 * k);
      if (2 * k + 1 < a->len) {
        const CsLlmBin *o = &g_array_index(a, CsLlmBin, 2 * k + 1);
        m.block_ns += o->block_ns;
        m.restarts += o->restarts;
        m.tokens += o->tokens;
        m.batches += o->batches;
        m.arrivals += o->arrivals;
        m.completions += o->completions;
      }
      g_array_index(a, CsLlmBin, k) = m;
    }
    g_array_set_size(a, n);
    s->res->series_bin_ns *= 2;
  }
  guint k = (guint)(t / s->res->series_bin_ns);
  if (k >= a->len)
    g_array_set_size(a, k + 1); /* zeroed: the array clears new elements */
  return &g_array_index(a, CsLlmBin, k);
}

/* blocks held over [from, to), spread over the bins it spans. */
static void series_blocks(CsLlmCluster *s, int64_t from, int64_t to, int64_t blocks)
{
  while (from < to) {
    CsLlmBin *b = bin_at(s, from);
    int64_t end = MIN(to, (from / s->res->series_bin_ns + 1) * s->res->series_bin_ns);
    b->block_ns += (double)blocks * (double)(end - from);
    from = end;
  }
}

/* The allocated blocks of replica i changed (or may have) at t: add the
 * interval since the last change to its integral and update the peak. */
static void sample_blocks(CsLlmCluster *s, int i, int64_t t)
{
  Replica *r = &s->rep[i];
  CsLlmSimReplicaResult *rr = &s->res->replicas[i];
  if (s->res->series != NULL && r->last_blocks > 0)
    series_blocks(s, r->last_change_ns, t, r->last_blocks);
  rr->block_ns += (double)r->last_blocks * (double)(t - r->last_change_ns);
  r->last_change_ns = t;
  r->last_blocks = cs_llm_sched_allocated_blocks(r->sched);
  if (r->last_blocks > rr->peak_blocks)
    rr->peak_blocks = r->last_blocks;
}

static int route(CsLlmCluster *s)
{
  int n = s->cfg.replicas;
  if (s->cfg.router == CS_LLM_ROUTER_ROUND_ROBIN)
    return (int)(s->rr_counter++ % n);
  /* lor: the shortest waiting queue, the lowest id on ties (Vidur's min over
   * its replica map, which iterates in id order); least_outstanding: the
   * fewest requests not finished, waiting or admitted, the same ties. */
  gboolean all = s->cfg.router == CS_LLM_ROUTER_LEAST_OUTSTANDING;
  int best = 0, best_n = 0;
  for (int i = 0; i < n; i++) {
    const CsLlmSched *q = s->rep[i].sched;
    int k = cs_llm_sched_n_waiting(q) + (all ? cs_llm_sched_n_holding(q) : 0);
    if (i == 0 || k < best_n) {
      best = i;
      best_n = k;
    }
  }
  return best;
}

static void describe_batch(GString *m, int replica, int64_t t, const CsLlmBatch *b)
{
  int prefills = b->n - b->n_decode;
  g_string_append_printf(m, "replica %d, batch at %.9f s: %d requests (%d prefilling, %d "
                         "decoding), %" G_GINT64_FORMAT " tokens (",
                         replica, (double)t / 1e9, b->n, prefills, b->n_decode, b->total_tokens);
  /* Each request as "ID: prefill|decode TOKENS after PROCESSED", the first
   * 8 of a large batch. */
  int shown = b->n <= 10 ? b->n : 8;
  for (int i = 0; i < shown; i++)
    g_string_append_printf(m, "%s%" G_GINT64_FORMAT ": %s %d after %d", i ? ", " : "",
                           b->entries[i].req->id, b->entries[i].prefill ? "prefill" : "decode",
                           b->entries[i].tokens, b->entries[i].processed_before);
  if (shown < b->n)
    g_string_append_printf(m, " and %d more", b->n - shown);
  g_string_append(m, ")");
}

/* Replica i holds the decode pool's copies (disaggregated). */
static gboolean decode_pool(const CsLlmCluster *s, int i)
{
  return s->disagg && i >= s->cfg.replicas;
}

static void push_event(CsLlmCluster *s, int64_t t, int replica, int stage, Slot *req)
{
  BatchEnd *be = g_new(BatchEnd, 1);
  *be = (BatchEnd){ .time_ns = t, .seq = s->seq++, .replica = replica, .stage = stage,
                    .req = req };
  g_sequence_insert_sorted(s->ends, be, batch_end_cmp, NULL);
}

/* The requests of b as the execution model takes them (s->breqs). */
static void batch_requests(CsLlmCluster *s, const CsLlmBatch *b)
{
  if (b->n > s->breqs_cap) {
    s->breqs_cap = b->n;
    s->breqs = g_renew(CsLlmBatchRequest, s->breqs, s->breqs_cap);
  }
  for (int k = 0; k < b->n; k++) {
    const CsLlmBatchEntry *en = &b->entries[k];
    s->breqs[k] = (CsLlmBatchRequest){ .num_tokens = en->tokens,
                                       .num_processed = en->processed_before,
                                       .prefill_complete = !en->prefill };
  }
}

/* Stage `stage` of replica i is free at t: the batch at the head of its
 * queue, if any, starts it (Vidur's ReplicaStageScheduleEvent) and its end
 * is due after the stage's time (cs_llm_exec_batch_time at that stage: its
 * layers, and the send to the next stage but on the last). */
static gboolean try_start_stage(CsLlmCluster *s, int i, int stage, int64_t t, GError **error)
{
  Replica *r = &s->rep[i];
  Stage *g = &r->stages[stage];
  if (g->busy || g->started == g->arrived)
    return TRUE;
  const CsLlmBatch *b = cs_llm_sched_flight(r->sched, (int)(g->started - r->ended));
  g_assert(b != NULL);
  batch_requests(s, b);
  CsLlmStageTime st;
  CsLlmBatchAttention att;
  GError *e = NULL;
  if (!cs_llm_exec_batch_time(s->exec, s->breqs, b->n, stage, &st, &att, &e)) {
    GString *m = g_string_new(NULL);
    describe_batch(m, i, t, b);
    if (s->cfg.exec.pp > 1)
      g_string_append_printf(m, " at pipeline stage %d", stage);
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s cannot be timed: %s",
                m->str, e->message);
    g_string_free(m, TRUE);
    g_error_free(e);
    return FALSE;
  }
  if (stage == 0) {
    /* Once per batch: the attention is the same at every stage. */
    s->res->attention_clamped_batches += att.clamped > 0;
    s->res->replicas[i].flops += cs_llm_exec_batch_flops(s->exec, s->breqs, b->n);
  }
  int64_t dur = llround(st.total_ms * 1e6);
  g->busy = TRUE;
  g->started++;
  push_event(s, t + dur, i, stage, NULL);
  /* One device's busy time: each device runs one stage; the mean over the
   * stages (exactly the batches' times with one stage). */
  r->stage_busy_ns += dur;
  s->res->replicas[i].busy_ns = r->stage_busy_ns / s->cfg.exec.pp;
  return TRUE;
}

/* Replica i has fewer than pp batches in flight at t: form its next one,
 * which joins its first stage's queue (and starts it when the stage is
 * free). *formed says whether a batch was formed. */
static gboolean start_batch(CsLlmCluster *s, int i, int64_t t, gboolean *formed,
                            GError **error)
{
  Replica *r = &s->rep[i];
  GError *e = NULL;
  int64_t restarts = cs_llm_sched_n_restarts(r->sched);
  const CsLlmBatch *b = cs_llm_sched_next_batch(r->sched, &e);
  /* A call that only restarted requests (vLLM and Sarathi restart a decode
   * that finds no free block, the last one itself) formed no batch but
   * freed their blocks, so a batch may form now. Vidur's replica waits for
   * its next event instead, and with none pending it never finishes the
   * request; a real engine schedules again in its next step. Asked again
   * until a batch forms or a call restarts nothing (after an empty batch
   * nothing runs, so the next call restarts nothing). */
  for (int64_t before = restarts; b == NULL && e == NULL &&
                                  cs_llm_sched_n_restarts(r->sched) > before;) {
    before = cs_llm_sched_n_restarts(r->sched);
    b = cs_llm_sched_next_batch(r->sched, &e);
  }
  *formed = b != NULL;
  if (e != NULL) {
    /* A custom scheduler's failure or misuse (clustersim/llm.h): when and
     * where. */
    g_propagate_prefixed_error(error, e, "at %.9g s simulated, replica %d: ", t * 1e-9, i);
    return FALSE;
  }
  sample_blocks(s, i, t); /* restarts free, admissions allocate */
  if (s->res->series != NULL) {
    CsLlmBin *bin = bin_at(s, t);
    bin->restarts += cs_llm_sched_n_restarts(r->sched) - restarts;
    bin->batches += b != NULL;
  }
  if (b == NULL)
    return TRUE;
  for (int k = 0; k < b->n; k++) {
    CsLlmSimRequestResult *out = &slot_of(b->entries[k].req, decode_pool(s, i))->out;
    if (out->scheduled_ns < 0)
      out->scheduled_ns = t;
  }
  s->res->replicas[i].n_batches++;
  s->res->n_batches++;
  r->stages[0].arrived++;
  return try_start_stage(s, i, 0, t, error);
}

/* Disaggregated: the decode replica for a request whose prefill ends now:
 * the fewest waiting there (its queue, with the requests pending transfer
 * to it) plus transfers on the way (lor, counting what it will have to
 * take), the lowest id on ties. */
static int decode_load(const CsLlmCluster *s, int i)
{
  return cs_llm_sched_n_waiting(s->rep[i].sched) + cs_llm_sched_n_in_transfer(s->rep[i].sched);
}

static int choose_decode(const CsLlmCluster *s)
{
  int best = s->cfg.replicas;
  for (int i = best + 1; i < s->n_rep; i++)
    if (decode_load(s, i) < decode_load(s, best))
      best = i;
  return best;
}

/* Disaggregated: decode replica d reserves blocks for the requests pending
 * transfer to it, FIFO while the head fits, and their transfers start at t
 * (llm_sim.h's order at an instant, 3 and 4). */
static void reserve_transfers(CsLlmCluster *s, int d, int64_t t)
{
  CsLlmRequest *r;
  gboolean any = FALSE;
  while ((r = cs_llm_sched_reserve_prefilled(s->rep[d].sched)) != NULL) {
    Slot *q = slot_of(r, TRUE);
    q->out.transfer_start_ns = t;
    q->out.kv_wait_ns = t - q->out.first_token_ns;
    push_event(s, t + cs_llm_kv_transfer_ns(&s->cfg, r->prompt_tokens), d, 0, q);
    any = TRUE;
  }
  if (any)
    sample_blocks(s, d, t);
}

/* The request of q completed at t: the caller hears of it, the slot is
 * free again. */
static void complete(CsLlmCluster *s, Slot *q, int64_t t)
{
  q->out.completed_ns = t;
  if (t > s->res->makespan_ns)
    s->res->makespan_ns = t;
  if (s->res->series != NULL)
    bin_at(s, t)->completions++;
  if (s->hooks.done != NULL)
    s->hooks.done(s->hooks.user, &q->out, q->tag);
  q->live = FALSE;
  s->live--;
  q->next = s->free_slots;
  s->free_slots = q;
}

static gboolean end_batch(CsLlmCluster *s, int i, int64_t t, GError **error)
{
  Replica *r = &s->rep[i];
  const CsLlmBatch *b = cs_llm_sched_batch_done(r->sched, NULL);
  g_assert(b != NULL); /* a batch of this replica was in flight */
  r->ended++;
  gboolean decode_side = decode_pool(s, i);
  for (int k = 0; k < b->n; k++) {
    const CsLlmBatchEntry *en = &b->entries[k];
    Slot *q = slot_of(en->req, decode_side);
    CsLlmSimRequestResult *out = &q->out;
    if (!en->prefill) {
      /* Vidur's decode_token_execution_plus_preemption_time; disaggregated,
       * a request's first decode counts from its prefill's end, the
       * transfer and the wait for decode blocks included. */
      int64_t tbt = t - q->last_iter_end;
      if (s->hooks.tbt != NULL)
        s->hooks.tbt(s->hooks.user, q->tag, tbt);
      out->n_tbt++;
      out->tbt_sum_ns += tbt;
      if (tbt > out->tbt_max_ns)
        out->tbt_max_ns = tbt;
    }
    q->last_iter_end = t;
    if (en->emitted) {
      if (s->res->series != NULL)
        bin_at(s, t)->tokens++;
      if (q->last_token >= 0) {
        int64_t gap = t - q->last_token;
        if (s->hooks.gap != NULL)
          s->hooks.gap(s->hooks.user, q->tag, gap);
        if (gap > out->gap_max_ns)
          out->gap_max_ns = gap;
      }
      q->last_token = t;
    }
    if (en->first_token)
      out->first_token_ns = t;
    if (en->finished && !decode_side && en->req->keep_blocks) {
      /* Prefill done on the prefill pool: the request queues at its decode
       * replica, pending transfer, its blocks held here until the transfer
       * ends. */
      int d = choose_decode(s);
      out->decode_replica = d;
      if (!cs_llm_sched_add_prefilled(s->rep[d].sched, &q->dreq, error))
        return FALSE;
    } else if (en->finished) {
      out->restarts = q->req.restarts + (decode_side ? en->req->restarts : 0);
      out->final_decode_tokens = en->req->decode_tokens;
      complete(s, q, t);
    }
  }
  sample_blocks(s, i, t);
  return TRUE;
}

/* Disaggregated: request q's KV cache reached decode replica d at t, where
 * its blocks were reserved. The prefill replica frees its blocks; the
 * decode replica takes it into its next batch. */
static void end_transfer(CsLlmCluster *s, int d, Slot *q, int64_t t)
{
  int p = q->out.replica;
  gboolean ok = cs_llm_sched_release(s->rep[p].sched, &q->req, NULL);
  g_assert(ok); /* it finished keeping its blocks */
  sample_blocks(s, p, t);
  s->rep[p].poked = TRUE; /* the freed blocks may admit a waiting prefill */
  q->out.transfer_end_ns = t;
  ok = cs_llm_sched_prefilled_arrived(s->rep[d].sched, &q->dreq, NULL);
  g_assert(ok); /* reserve_transfers started it */
  s->rep[d].poked = TRUE;
}

static gboolean check_disagg(const CsLlmSimConfig *cfg, GError **error)
{
  const char *bad = cfg->decode_replicas < 0 ? "decode replicas >= 0"
                    : cfg->decode_replicas == 0 ? NULL
                    : cfg->decode_sched.policy == CS_LLM_SCHED_STATIC
                      ? "a decode scheduler of vllm, sarathi or orca (static batching admits "
                        "whole prefills only)"
                    : cfg->kv_curve == NULL       ? "a KV-transfer curve"
                    : cfg->kv_bytes_per_token < 0 ? "KV bytes per token >= 0"
                                                  : NULL;
  if (bad != NULL) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM simulation, disaggregated: expected %s", bad);
    return FALSE;
  }
  return TRUE;
}

int64_t cs_llm_kv_transfer_ns(const CsLlmSimConfig *cfg, int prompt_tokens)
{
  return cs_network_curve_latency_ns(cfg->kv_curve, (int64_t)prompt_tokens *
                                                      cfg->kv_bytes_per_token);
}

CsLlmCluster *cs_llm_cluster_new(const CsLlmSimConfig *cfg, const CsLlmClusterHooks *hooks,
                                 GError **error)
{
  if (cfg->replicas < 1) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM simulation: replicas: expected at least 1, got %d", cfg->replicas);
    return NULL;
  }
  if (cfg->exec.pp > 1 && cfg->decode_replicas > 0) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM simulation, disaggregated: pipeline parallelism (%d stages) is not "
                "simulated with disaggregated serving: expected 1 stage",
                cfg->exec.pp);
    return NULL;
  }
  if (cfg->exec.pp < 1 || cfg->sched.num_stages != cfg->exec.pp ||
      (cfg->decode_replicas > 0 && cfg->decode_sched.num_stages != cfg->exec.pp)) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM simulation: %d pipeline stage(s): expected the schedulers' num_stages "
                "to be the same (got %d)",
                cfg->exec.pp, cfg->sched.num_stages);
    return NULL;
  }
  if (!check_disagg(cfg, error))
    return NULL;
  CsLlmCluster *s = g_new0(CsLlmCluster, 1);
  s->cfg = *cfg;
  if (hooks != NULL)
    s->hooks = *hooks;
  s->disagg = cfg->decode_replicas > 0;
  s->n_rep = cfg->replicas + cfg->decode_replicas;
  s->now_ns = -1;
  s->ends = g_sequence_new(g_free);
  s->chunks = g_ptr_array_new_with_free_func(g_free);
  CsLlmSimResult *res = s->res = g_new0(CsLlmSimResult, 1);
  res->n_replicas = s->n_rep;
  res->n_prefill_replicas = s->disagg ? cfg->replicas : 0;
  res->replicas = g_new0(CsLlmSimReplicaResult, s->n_rep);
  res->tbt_ns = g_array_new(FALSE, FALSE, sizeof(int64_t));
  res->gap_ns = g_array_new(FALSE, FALSE, sizeof(int64_t));
  s->exec = cs_llm_exec_new(&cfg->exec, error);
  if (s->exec == NULL) {
    cs_llm_cluster_free(s);
    return NULL;
  }
  s->rep = g_new0(Replica, s->n_rep);
  for (int i = 0; i < s->n_rep; i++) {
    res->replicas[i].num_blocks = i < cfg->replicas ? cfg->sched.num_blocks
                                                    : cfg->decode_sched.num_blocks;
    s->rep[i].sched = cs_llm_sched_new(i < cfg->replicas ? &cfg->sched : &cfg->decode_sched, error);
    s->rep[i].stages = g_new0(Stage, cfg->exec.pp);
    if (s->rep[i].sched == NULL) {
      cs_llm_cluster_free(s);
      return NULL;
    }
  }
  for (int i = 0; i < s->n_rep; i++)
    res->total_blocks += res->replicas[i].num_blocks;
  res->device_flops_per_s = cfg->device_flops_per_s;
  if (cfg->series_bin_ns > 0) {
    res->series = g_array_new(FALSE, TRUE, sizeof(CsLlmBin));
    res->series_bin_ns = cfg->series_bin_ns;
  }
  return s;
}

void cs_llm_cluster_free(CsLlmCluster *s)
{
  if (s == NULL)
    return;
  if (s->rep != NULL)
    for (int i = 0; i < s->n_rep; i++) {
      cs_llm_sched_free(s->rep[i].sched);
      g_free(s->rep[i].stages);
    }
  g_free(s->rep);
  cs_llm_exec_free(s->exec);
  g_sequence_free(s->ends);
  g_ptr_array_free(s->chunks, TRUE);
  g_free(s->breqs);
  cs_llm_sim_result_free(s->res);
  g_free(s);
}

static Slot *take_slot(CsLlmCluster *s)
{
  if (s->free_slots == NULL) {
    Slot *chunk = g_new0(Slot, SLOT_CHUNK);
    g_ptr_array_add(s->chunks, chunk);
    for (int k = SLOT_CHUNK - 1; k >= 0; k--) {
      chunk[k].next = s->free_slots;
      s->free_slots = &chunk[k];
    }
  }
  Slot *q = s->free_slots;
  s->free_slots = q->next;
  return q;
}

gboolean cs_llm_cluster_add(CsLlmCluster *s, const CsLlmSimRequest *r, int64_t tag,
                            GError **error)
{
  const char *bad = r->arrival_ns < 0             ? "an arrival >= 0"
                    : r->prompt_tokens < 1        ? "prompt tokens >= 1"
                    : r->output_tokens < 1        ? "output tokens >= 1"
                    : s->res->n_requests > 0 && r->arrival_ns < s->last_arrival_ns
                      ? "an arrival no earlier than the previous request's"
                    : r->arrival_ns < s->now_ns ? "an arrival no earlier than the simulation's "
                                                  "last instant"
                                                : NULL;
  if (bad != NULL) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM simulation: request %" G_GINT64_FORMAT " (id %" G_GINT64_FORMAT "): "
                "expected %s, got arrival %" G_GINT64_FORMAT " ns, %d prompt and %d output "
                "tokens",
                tag, r->id, bad, r->arrival_ns, r->prompt_tokens, r->output_tokens);
    return FALSE;
  }
  Slot *q = take_slot(s);
  *q = (Slot){ .last_token = -1, .tag = tag, .live = TRUE };
  /* Disaggregated, the prefill replica runs the prompt and its first output
   * token only, keeping the KV cache until its transfer ends; the decode
   * replica's copy has the whole request. */
  cs_llm_request_init(&q->req, r->id, r->arrival_ns, r->prompt_tokens,
                      s->disagg ? 1 : r->output_tokens);
  q->req.keep_blocks = s->disagg && r->output_tokens > 1;
  if (s->disagg)
    cs_llm_request_init(&q->dreq, r->id, r->arrival_ns, r->prompt_tokens, r->output_tokens);
  q->out = (CsLlmSimRequestResult){ .id = r->id,
                                    .arrival_ns = r->arrival_ns,
                                    .prompt_tokens = r->prompt_tokens,
                                    .output_tokens = r->output_tokens,
                                    .scheduled_ns = -1,
                                    .first_token_ns = -1,
                                    .completed_ns = -1,
                                    .decode_replica = -1,
                                    .transfer_start_ns = -1,
                                    .kv_wait_ns = -1,
                                    .transfer_end_ns = -1 };
  if (s->arrivals_tail != NULL)
    s->arrivals_tail->next = q;
  else
    s->arrivals = q;
  s->arrivals_tail = q;
  s->last_arrival_ns = r->arrival_ns;
  s->res->n_requests++;
  s->res->output_tokens += r->output_tokens;
  s->live++;
  return TRUE;
}

int64_t cs_llm_cluster_next_ns(const CsLlmCluster *s)
{
  int64_t t = s->arrivals != NULL ? s->arrivals->out.arrival_ns : INT64_MAX;
  GSequenceIter *it = g_sequence_get_begin_iter(s->ends);
  if (!g_sequence_iter_is_end(it)) {
    const BatchEnd *first = g_sequence_get(it);
    if (first->time_ns < t)
      t = first->time_ns;
  }
  return t;
}

gboolean cs_llm_cluster_step(CsLlmCluster *s, GError **error)
{
  int64_t t = cs_llm_cluster_next_ns(s);
  if (t == INT64_MAX)
    return TRUE;
  s->now_ns = t;
  /* 1. Arrivals at t, routed in arrival order. */
  while (s->arrivals != NULL && s->arrivals->out.arrival_ns == t) {
    Slot *q = s->arrivals;
    s->arrivals = q->next;
    if (s->arrivals == NULL)
      s->arrivals_tail = NULL;
    q->next = NULL;
    int i = route(s);
    q->out.replica = i;
    if (s->res->series != NULL)
      bin_at(s, t)->arrivals++;
    if (!cs_llm_sched_add(s->rep[i].sched, &q->req, error))
      return FALSE;
    s->rep[i].got_request = TRUE;
  }
  /* 2. Batch ends at t, in start order. */
  GSequenceIter *it;
  while (!g_sequence_iter_is_end(it = g_sequence_get_begin_iter(s->ends))) {
    BatchEnd *be = g_sequence_get(it);
    if (be->time_ns != t)
      break;
    int i = be->replica, stage = be->stage;
    Slot *q = be->req;
    g_sequence_remove(it);
    if (q != NULL) {
      /* A transfer's end (disaggregated), in the same order by creation. */
      end_transfer(s, i, q, t);
      continue;
    }
    /* A stage end: the stage takes the next batch of its queue, and the
     * batch goes on to the next stage or, from the last, ends (Vidur's
     * BatchStageEndEvent: its stage's schedule before the batch's arrival
     * at the next, then BatchEndEvent). */
    Replica *r = &s->rep[i];
    r->stages[stage].busy = FALSE;
    if (!try_start_stage(s, i, stage, t, error))
      return FALSE;
    if (stage + 1 < s->cfg.exec.pp) {
      r->stages[stage + 1].arrived++;
      if (!try_start_stage(s, i, stage + 1, t, error))
        return FALSE;
      continue;
    }
    if (!end_batch(s, i, t, error))
      return FALSE;
    r->ended_batch = TRUE;
  }
  /* 3. Decode replicas reserve for the transfers pending to them. */
  for (int i = s->cfg.replicas; s->disagg && i < s->n_rep; i++)
    reserve_transfers(s, i, t);
  /* 4. Replicas with fewer batches in flight than stages form their next
   * ones, while they can (Vidur's on_schedule loop); a decode replica's
   * restarts may have freed blocks for a pending transfer. */
  for (int i = 0; i < s->n_rep; i++) {
    /* One pass for the arrivals at t and one for the batch that ended:
     * Vidur's ReplicaScheduleEvents (a second pass forms a batch only when
     * the first formed none, its restarts having freed blocks). */
    Replica *r = &s->rep[i];
    int passes = r->got_request + r->ended_batch;
    if (passes == 0 && r->poked)
      passes = 1;
    r->got_request = r->ended_batch = r->poked = FALSE;
    for (int k = 0; k < passes; k++) {
      gboolean formed = TRUE;
      while (formed && cs_llm_sched_n_in_flight(r->sched) < s->cfg.exec.pp)
        if (!start_batch(s, i, t, &formed, error))
          return FALSE;
    }
    if (passes == 0)
      continue;
    if (decode_pool(s, i))
      reserve_transfers(s, i, t);
  }
  return TRUE;
}

int64_t cs_llm_cluster_live(const CsLlmCluster *s)
{
  return s->live;
}

const CsLlmSched *cs_llm_cluster_replica_sched(const CsLlmCluster *s, int replica)
{
  return replica >= 0 && replica < s->n_rep ? s->rep[replica].sched : NULL;
}

/* The first live request, for the message of a run that cannot finish. */
static const Slot *first_live(const CsLlmCluster *s)
{
  const Slot *best = NULL;
  for (guint c = 0; c < s->chunks->len; c++) {
    const Slot *chunk = g_ptr_array_index(s->chunks, c);
    for (int k = 0; k < SLOT_CHUNK; k++)
      if (chunk[k].live && (best == NULL || chunk[k].tag < best->tag))
        best = &chunk[k];
  }
  return best;
}

gboolean cs_llm_cluster_finish(CsLlmCluster *s, GError **error)
{
  const Slot *q = s->live > 0 ? first_live(s) : NULL;
  if (q != NULL && s->disagg) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM simulation: request %" G_GINT64_FORMAT " never finished (prefill "
                "replica %d, decode replica %d)",
                q->out.id, q->out.replica, q->out.decode_replica);
    return FALSE;
  }
  if (q != NULL) {
    const CsLlmSched *r = s->rep[q->out.replica].sched;
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM simulation: request %" G_GINT64_FORMAT " never finished: replica %d "
                "(scheduler %s) holds it with no batch it can form (%d waiting, %d running)",
                q->out.id, q->out.replica, cs_llm_sched_config_name(cs_llm_sched_config(r)),
                cs_llm_sched_n_waiting(r), cs_llm_sched_n_running(r));
    return FALSE;
  }
  CsLlmSimResult *res = s->res;
  for (int i = 0; i < s->n_rep; i++) {
    sample_blocks(s, i, res->makespan_ns);
    res->replicas[i].restarts = cs_llm_sched_n_restarts(s->rep[i].sched);
    res->restarts += res->replicas[i].restarts;
  }
  return TRUE;
}

const CsLlmSimResult *cs_llm_cluster_result(const CsLlmCluster *s)
{
  return s->res;
}

GArray *cs_llm_cluster_take_series(CsLlmCluster *s)
{
  GArray *a = s->res->series;
  s->res->series = NULL;
  return a;
}
