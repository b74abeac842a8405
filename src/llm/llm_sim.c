/* The token-level simulation of LLM replicas (llm_sim.h): an event loop
 * over arrivals and batch ends, the routers, the per-request record and the
 * summary. */
#include "llm_sim.h"

#include <math.h>
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
  int req;                /* a transfer's end (disaggregated): its request; -1 a batch end */
} BatchEnd;

static gint batch_end_cmp(gconstpointer a, gconstpointer b, gpointer data)
{
  (void)data;
  const BatchEnd *x = a, *y = b;
  if (x->time_ns != y->time_ns)
    return x->time_ns < y->time_ns ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

typedef struct {
  CsLlmSched *sched;
  int64_t batch_start_ns; /* of the batch in flight */
  int64_t last_change_ns; /* when allocated blocks last changed or were sampled */
  int64_t last_blocks;
  gboolean poked;         /* got a request or ended a batch at the current instant */
} Replica;

typedef struct {
  const CsLlmSimConfig *cfg;
  CsLlmExec *exec;
  Replica *rep;
  int n_rep;                   /* all replicas: the prefill pool, then the decode pool */
  int n;                       /* requests */
  CsLlmRequest *reqs;          /* the scheduler's view, in input order (disaggregated: the
                                * prefill replica's, one output token each) */
  CsLlmRequest *dreqs;         /* disaggregated: the decode replica's, NULL otherwise */
  int *incoming;               /* disaggregated: per replica, transfers on the way to it */
  int64_t *last_iter_end;      /* per request: the end of its last batch (TBT) */
  int64_t *last_token;         /* per request: the time of its last output token, -1 none */
  GSequence *ends;             /* BatchEnd, ordered by (time, seq) */
  int64_t seq;
  int64_t rr_counter;
  CsLlmBatchRequest *breqs;    /* scratch for timing a batch */
  int breqs_cap;
  CsLlmSimResult *res;
} Sim;

/* The allocated blocks of replica i changed (or may have) at t: add the
 * interval since the last change to its integral and update the peak. */
static void sample_blocks(Sim *s, int i, int64_t t)
{
  Replica *r = &s->rep[i];
  CsLlmSimReplicaResult *rr = &s->res->replicas[i];
  rr->block_ns += (double)r->last_blocks * (double)(t - r->last_change_ns);
  r->last_change_ns = t;
  r->last_blocks = cs_llm_sched_allocated_blocks(r->sched);
  if (r->last_blocks > rr->peak_blocks)
    rr->peak_blocks = r->last_blocks;
}

static int route(Sim *s)
{
  int n = s->cfg->replicas;
  if (s->cfg->router == CS_LLM_ROUTER_ROUND_ROBIN)
    return (int)(s->rr_counter++ % n);
  /* lor: the shortest waiting queue, the lowest id on ties (Vidur's min over
   * its replica map, which iterates in id order); least_outstanding: the
   * fewest requests not finished, waiting or admitted, the same ties. */
  gboolean all = s->cfg->router == CS_LLM_ROUTER_LEAST_OUTSTANDING;
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

/* Replica i has no batch in flight at t: form and time its next one. */
static gboolean start_batch(Sim *s, int i, int64_t t, GError **error)
{
  Replica *r = &s->rep[i];
  GError *e = NULL;
  const CsLlmBatch *b = cs_llm_sched_next_batch(r->sched, &e);
  if (e != NULL) {
    g_propagate_error(error, e);
    return FALSE;
  }
  sample_blocks(s, i, t); /* restarts free, admissions allocate */
  if (b == NULL)
    return TRUE;
  if (b->n > s->breqs_cap) {
    s->breqs_cap = b->n;
    s->breqs = g_renew(CsLlmBatchRequest, s->breqs, s->breqs_cap);
  }
  for (int k = 0; k < b->n; k++) {
    const CsLlmBatchEntry *en = &b->entries[k];
    s->breqs[k] = (CsLlmBatchRequest){ .num_tokens = en->tokens,
                                       .num_processed = en->processed_before,
                                       .prefill_complete = !en->prefill };
    int64_t j = s->dreqs != NULL && en->req >= s->dreqs && en->req < s->dreqs + s->n
                  ? en->req - s->dreqs
                  : en->req - s->reqs;
    CsLlmSimRequestResult *out = &s->res->requests[j];
    if (out->scheduled_ns < 0)
      out->scheduled_ns = t;
  }
  CsLlmStageTime st;
  CsLlmBatchAttention att;
  if (!cs_llm_exec_batch_time(s->exec, s->breqs, b->n, 0, &st, &att, &e)) {
    GString *m = g_string_new(NULL);
    describe_batch(m, i, t, b);
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s cannot be timed: %s",
                m->str, e->message);
    g_string_free(m, TRUE);
    g_error_free(e);
    return FALSE;
  }
  s->res->attention_clamped_batches += att.clamped > 0;
  int64_t dur = llround(st.total_ms * 1e6);
  r->batch_start_ns = t;
  BatchEnd *be = g_new(BatchEnd, 1);
  *be = (BatchEnd){ .time_ns = t + dur, .seq = s->seq++, .replica = i, .req = -1 };
  g_sequence_insert_sorted(s->ends, be, batch_end_cmp, NULL);
  s->res->replicas[i].busy_ns += dur;
  s->res->replicas[i].n_batches++;
  s->res->n_batches++;
  return TRUE;
}

/* Disaggregated: the decode replica for a request whose transfer starts
 * now: the fewest waiting there plus transfers on the way (lor, counting
 * what it will have to take), the lowest id on ties. */
static int choose_decode(const Sim *s)
{
  int best = s->cfg->replicas;
  for (int i = best + 1; i < s->n_rep; i++)
    if (cs_llm_sched_n_waiting(s->rep[i].sched) + s->incoming[i] <
        cs_llm_sched_n_waiting(s->rep[best].sched) + s->incoming[best])
      best = i;
  return best;
}

static void push_event(Sim *s, int64_t t, int replica, int req)
{
  BatchEnd *be = g_new(BatchEnd, 1);
  *be = (BatchEnd){ .time_ns = t, .seq = s->seq++, .replica = replica, .req = req };
  g_sequence_insert_sorted(s->ends, be, batch_end_cmp, NULL);
}

static void end_batch(Sim *s, int i, int64_t t)
{
  Replica *r = &s->rep[i];
  const CsLlmBatch *b = cs_llm_sched_batch_done(r->sched, NULL);
  g_assert(b != NULL); /* a batch of this replica was in flight */
  for (int k = 0; k < b->n; k++) {
    const CsLlmBatchEntry *en = &b->entries[k];
    gboolean decode_side = s->dreqs != NULL && en->req >= s->dreqs && en->req < s->dreqs + s->n;
    int64_t j = decode_side ? en->req - s->dreqs : en->req - s->reqs;
    CsLlmSimRequestResult *out = &s->res->requests[j];
    if (!en->prefill) {
      /* Vidur's decode_token_execution_plus_preemption_time; disaggregated,
       * a request's first decode counts from its prefill's end, the
       * transfer and the wait for decode blocks included. */
      int64_t tbt = t - s->last_iter_end[j];
      g_array_append_val(s->res->tbt_ns, tbt);
      out->n_tbt++;
      out->tbt_sum_ns += tbt;
      if (tbt > out->tbt_max_ns)
        out->tbt_max_ns = tbt;
    }
    s->last_iter_end[j] = t;
    if (en->emitted) {
      if (s->last_token[j] >= 0) {
        int64_t gap = t - s->last_token[j];
        g_array_append_val(s->res->gap_ns, gap);
        if (gap > out->gap_max_ns)
          out->gap_max_ns = gap;
      }
      s->last_token[j] = t;
    }
    if (en->first_token)
      out->first_token_ns = t;
    if (en->finished && !decode_side && en->req->keep_blocks) {
      /* Prefill done on the prefill pool: its KV cache leaves now. */
      int d = choose_decode(s);
      s->incoming[d]++;
      out->decode_replica = d;
      out->transfer_start_ns = t;
      push_event(s, t + cs_llm_kv_transfer_ns(s->cfg, en->req->prompt_tokens), d, (int)j);
    } else if (en->finished) {
      out->completed_ns = t;
      out->restarts = s->reqs[j].restarts + (decode_side ? en->req->restarts : 0);
      out->final_decode_tokens = en->req->decode_tokens;
      if (t > s->res->makespan_ns)
        s->res->makespan_ns = t;
    }
  }
  sample_blocks(s, i, t);
}

/* Disaggregated: request j's KV cache reached decode replica d at t. The
 * prefill replica frees its blocks; the decode replica takes it. */
static gboolean end_transfer(Sim *s, int d, int j, int64_t t, GError **error)
{
  int p = s->res->requests[j].replica;
  gboolean ok = cs_llm_sched_release(s->rep[p].sched, &s->reqs[j], NULL);
  g_assert(ok); /* it finished keeping its blocks */
  sample_blocks(s, p, t);
  s->rep[p].poked = TRUE; /* the freed blocks may admit a waiting prefill */
  s->incoming[d]--;
  s->res->requests[j].transfer_end_ns = t;
  if (!cs_llm_sched_add_prefilled(s->rep[d].sched, &s->dreqs[j], error))
    return FALSE;
  s->rep[d].poked = TRUE;
  return TRUE;
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

static gboolean check_requests(const CsLlmSimRequest *reqs, int n, GError **error)
{
  if (n < 1) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM simulation: expected at least 1 request, got %d", n);
    return FALSE;
  }
  for (int i = 0; i < n; i++) {
    const CsLlmSimRequest *q = &reqs[i];
    const char *bad = q->arrival_ns < 0           ? "an arrival >= 0"
                      : q->prompt_tokens < 1      ? "prompt tokens >= 1"
                      : q->output_tokens < 1      ? "output tokens >= 1"
                      : i > 0 && q->arrival_ns < reqs[i - 1].arrival_ns
                        ? "an arrival no earlier than the previous request's"
                        : NULL;
    if (bad != NULL) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                  "LLM simulation: request %d (id %" G_GINT64_FORMAT "): expected %s, got "
                  "arrival %" G_GINT64_FORMAT " ns, %d prompt and %d output tokens",
                  i, q->id, bad, q->arrival_ns, q->prompt_tokens, q->output_tokens);
      return FALSE;
    }
  }
  return TRUE;
}

static void sim_clear(Sim *s)
{
  if (s->rep != NULL)
    for (int i = 0; i < s->n_rep; i++)
      cs_llm_sched_free(s->rep[i].sched);
  g_free(s->rep);
  cs_llm_exec_free(s->exec);
  g_free(s->reqs);
  g_free(s->dreqs);
  g_free(s->incoming);
  g_free(s->last_iter_end);
  g_free(s->last_token);
  if (s->ends != NULL)
    g_sequence_free(s->ends);
  g_free(s->breqs);
}

/* Every request finished? Else the first one that did not, as an error. */
static gboolean check_finished(Sim *s, int n, GError **error)
{
  for (int j = 0; j < n; j++) {
    if (s->dreqs != NULL && s->res->requests[j].completed_ns < 0) {
      int d = s->res->requests[j].decode_replica;
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                  "LLM simulation: request %" G_GINT64_FORMAT " never finished (prefill "
                  "replica %d, decode replica %d)",
                  s->reqs[j].id, s->res->requests[j].replica, d);
      return FALSE;
    }
    if (s->dreqs == NULL && s->reqs[j].state != CS_LLM_REQ_FINISHED) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                  "LLM simulation: request %" G_GINT64_FORMAT " never finished: replica %d "
                  "holds it with no batch it can form (%d waiting, %d running)",
                  s->reqs[j].id, s->res->requests[j].replica,
                  cs_llm_sched_n_waiting(s->rep[s->res->requests[j].replica].sched),
                  cs_llm_sched_n_running(s->rep[s->res->requests[j].replica].sched));
      return FALSE;
    }
  }
  return TRUE;
}

CsLlmSimResult *cs_llm_sim_run(const CsLlmSimConfig *cfg, const CsLlmSimRequest *reqs, int n,
                               GError **error)
{
  if (cfg->replicas < 1) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM simulation: replicas: expected at least 1, got %d", cfg->replicas);
    return NULL;
  }
  if (cfg->exec.pp != 1) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "LLM simulation: pipeline parallelism is not simulated yet: expected 1 "
                "pipeline stage, got %d",
                cfg->exec.pp);
    return NULL;
  }
  if (!check_requests(reqs, n, error) || !check_disagg(cfg, error))
    return NULL;
  gboolean disagg = cfg->decode_replicas > 0;
  Sim s = { .cfg = cfg, .n_rep = cfg->replicas + cfg->decode_replicas, .n = n };
  s.exec = cs_llm_exec_new(&cfg->exec, error);
  if (s.exec == NULL)
    return NULL;
  s.rep = g_new0(Replica, s.n_rep);
  for (int i = 0; i < s.n_rep; i++) {
    s.rep[i].sched = cs_llm_sched_new(i < cfg->replicas ? &cfg->sched : &cfg->decode_sched, error);
    if (s.rep[i].sched == NULL) {
      sim_clear(&s);
      return NULL;
    }
  }
  CsLlmSimResult *res = g_new0(CsLlmSimResult, 1);
  res->n_requests = n;
  res->requests = g_new0(CsLlmSimRequestResult, n);
  res->n_replicas = s.n_rep;
  res->n_prefill_replicas = disagg ? cfg->replicas : 0;
  res->replicas = g_new0(CsLlmSimReplicaResult, s.n_rep);
  res->tbt_ns = g_array_new(FALSE, FALSE, sizeof(int64_t));
  res->gap_ns = g_array_new(FALSE, FALSE, sizeof(int64_t));
  for (int i = 0; i < s.n_rep; i++)
    res->replicas[i].num_blocks = i < cfg->replicas ? cfg->sched.num_blocks
                                                    : cfg->decode_sched.num_blocks;
  s.res = res;
  s.reqs = g_new0(CsLlmRequest, n);
  s.last_iter_end = g_new0(int64_t, n);
  s.last_token = g_new(int64_t, n);
  s.ends = g_sequence_new(g_free);
  if (disagg) {
    s.dreqs = g_new0(CsLlmRequest, n);
    s.incoming = g_new0(int, s.n_rep);
  }
  for (int j = 0; j < n; j++) {
    /* Disaggregated, the prefill replica runs the prompt and its first
     * output token only, keeping the KV cache until its transfer ends; the
     * decode replica's copy has the whole request. */
    cs_llm_request_init(&s.reqs[j], reqs[j].id, reqs[j].arrival_ns, reqs[j].prompt_tokens,
                        disagg ? 1 : reqs[j].output_tokens);
    s.reqs[j].keep_blocks = disagg && reqs[j].output_tokens > 1;
    if (disagg)
      cs_llm_request_init(&s.dreqs[j], reqs[j].id, reqs[j].arrival_ns, reqs[j].prompt_tokens,
                          reqs[j].output_tokens);
    s.last_token[j] = -1;
    res->requests[j] = (CsLlmSimRequestResult){ .id = reqs[j].id,
                                                .arrival_ns = reqs[j].arrival_ns,
                                                .prompt_tokens = reqs[j].prompt_tokens,
                                                .output_tokens = reqs[j].output_tokens,
                                                .scheduled_ns = -1,
                                                .first_token_ns = -1,
                                                .completed_ns = -1,
                                                .decode_replica = -1,
                                                .transfer_start_ns = -1,
                                                .transfer_end_ns = -1 };
    res->output_tokens += reqs[j].output_tokens;
  }

  int next = 0; /* the next arrival */
  for (;;) {
    GSequenceIter *it = g_sequence_get_begin_iter(s.ends);
    const BatchEnd *first = g_sequence_iter_is_end(it) ? NULL : g_sequence_get(it);
    if (next >= n && first == NULL)
      break;
    int64_t t = next < n ? reqs[next].arrival_ns : INT64_MAX;
    if (first != NULL && first->time_ns < t)
      t = first->time_ns;
    /* 1. Arrivals at t, routed in input order. */
    for (; next < n && reqs[next].arrival_ns == t; next++) {
      int i = route(&s);
      res->requests[next].replica = i;
      if (!cs_llm_sched_add(s.rep[i].sched, &s.reqs[next], error))
        goto fail;
      s.rep[i].poked = TRUE;
    }
    /* 2. Batch ends at t, in start order. */
    while (!g_sequence_iter_is_end(it = g_sequence_get_begin_iter(s.ends))) {
      BatchEnd *be = g_sequence_get(it);
      if (be->time_ns != t)
        break;
      int i = be->replica, j = be->req;
      g_sequence_remove(it);
      if (j >= 0) {
        /* A transfer's end (disaggregated), in the same order by creation. */
        if (!end_transfer(&s, i, j, t, error))
          goto fail;
        continue;
      }
      end_batch(&s, i, t);
      s.rep[i].poked = TRUE;
    }
    /* 3. Idle replicas form their next batch. */
    for (int i = 0; i < s.n_rep; i++) {
      if (!s.rep[i].poked)
        continue;
      s.rep[i].poked = FALSE;
      if (!cs_llm_sched_in_flight(s.rep[i].sched) && !start_batch(&s, i, t, error))
        goto fail;
    }
  }
  if (!check_finished(&s, n, error))
    goto fail;
  for (int i = 0; i < s.n_rep; i++) {
    sample_blocks(&s, i, res->makespan_ns);
    res->replicas[i].restarts = cs_llm_sched_n_restarts(s.rep[i].sched);
    res->restarts += res->replicas[i].restarts;
  }
  sim_clear(&s);
  return res;
fail:
  sim_clear(&s);
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
  g_free(r);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double cs_llm_quantile(double *v, size_t n, double q)
{
  if (n == 0)
    return NAN;
  qsort(v, n, sizeof *v, cmp_double);
  double h = q * (double)(n - 1);
  size_t lo = (size_t)floor(h);
  if (lo + 1 >= n)
    return v[n - 1];
  return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

/* The distribution of n values in ms (v is reordered). */
static void dist(double *v, size_t n, CsLlmDist *out)
{
  double sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += v[i];
  out->n = (int64_t)n;
  out->mean = n ? sum / (double)n : NAN;
  out->p50 = cs_llm_quantile(v, n, 0.50);
  out->p90 = cs_llm_quantile(v, n, 0.90);
  out->p99 = cs_llm_quantile(v, n, 0.99);
}

static void dist_ns(const GArray *a, CsLlmDist *out)
{
  double *v = g_new(double, a->len + 1);
  for (guint i = 0; i < a->len; i++)
    v[i] = (double)g_array_index(a, int64_t, i) / 1e6;
  dist(v, a->len, out);
  g_free(v);
}

/* The transfers' times and each pool's use (llm_sim.h). */
static void disagg_summary(const CsLlmSimResult *r, CsLlmSimSummary *out)
{
  double *v = g_new(double, r->n_requests + 1);
  size_t k = 0;
  for (int j = 0; j < r->n_requests; j++)
    if (r->requests[j].transfer_start_ns >= 0)
      v[k++] = (double)(r->requests[j].transfer_end_ns - r->requests[j].transfer_start_ns) / 1e6;
  dist(v, k, &out->transfer);
  g_free(v);
  double busy[2] = { 0, 0 }, kv[2] = { 0, 0 };
  for (int i = 0; i < r->n_replicas && r->makespan_ns > 0; i++) {
    const CsLlmSimReplicaResult *p = &r->replicas[i];
    int pool = i >= r->n_prefill_replicas;
    busy[pool] += (double)p->busy_ns / (double)r->makespan_ns;
    kv[pool] += p->block_ns / ((double)p->num_blocks * (double)r->makespan_ns);
  }
  int np = r->n_prefill_replicas, nd = r->n_replicas - np;
  out->prefill_busy_util = busy[0] / np;
  out->decode_busy_util = busy[1] / nd;
  out->prefill_kv_mean_util = kv[0] / np;
  out->decode_kv_mean_util = kv[1] / nd;
}

void cs_llm_sim_summary(const CsLlmSimResult *r, CsLlmSimSummary *out)
{
  memset(out, 0, sizeof *out);
  int n = r->n_requests;
  double *v = g_new(double, n + 1);
  for (int pass = 0; pass < 3; pass++) {
    for (int j = 0; j < n; j++) {
      const CsLlmSimRequestResult *q = &r->requests[j];
      v[j] = pass == 0   ? (double)(q->first_token_ns - q->arrival_ns) / 1e6
             : pass == 1 ? (double)(q->completed_ns - q->arrival_ns) / 1e6
                         : (double)(q->completed_ns - q->first_token_ns) / 1e6 /
                             q->final_decode_tokens;
    }
    dist(v, n, pass == 0 ? &out->ttft : pass == 1 ? &out->e2e : &out->decode_per_token);
  }
  g_free(v);
  dist_ns(r->tbt_ns, &out->tbt);
  dist_ns(r->gap_ns, &out->gap);
  double span = (double)(r->makespan_ns - r->requests[0].arrival_ns) / 1e9;
  out->output_tokens_per_s = span > 0 ? (double)r->output_tokens / span : NAN;
  out->requests_per_s = span > 0 ? n / span : NAN;
  double mean = 0;
  for (int i = 0; i < r->n_replicas; i++) {
    const CsLlmSimReplicaResult *p = &r->replicas[i];
    double peak = (double)p->peak_blocks / (double)p->num_blocks;
    if (peak > out->kv_peak_util)
      out->kv_peak_util = peak;
    if (r->makespan_ns > 0)
      mean += p->block_ns / ((double)p->num_blocks * (double)r->makespan_ns);
  }
  out->kv_mean_util = mean / r->n_replicas;
  if (r->n_prefill_replicas > 0)
    disagg_summary(r, out);
  out->restarts = r->restarts;
  out->makespan_ns = r->makespan_ns;
}
