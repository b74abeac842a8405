/* Centralized dispatch over a sub-cluster in which every GPU runs every model:
 * Symphony's deferred batch scheduling and the baselines of the same paper.
 *
 * Source: Symphony (Chen et al.), section 3, Algorithm 1 and Appendix D.
 * State: per model a FIFO request queue and one candidate batch (bs, exec,
 * latest); per GPU the time the scheduler believes it becomes free.
 *
 * Budgets (per model m and batch size k): delay(k) = d_ctrl + transfer(k),
 * the time to get a batch of k to a GPU, and resp(k), the time its result
 * needs to come back. transfer(k) = d_data * k and resp(k) = d_resp when
 * those are set explicitly (Appendix D's constants); otherwise they are the
 * simulated transfers themselves: network(k * input_bytes of m) and
 * network(k * output_bytes of m), the figures cs_engine_send and the result
 * return use, made non-decreasing in k. A model's tables are filled lazily.
 * d_ctrl has no counterpart in the engine (no control message is simulated):
 * it is a safety margin. cs_central_check compares explicit settings with the
 * network (warning "budget_network_mismatch").
 *
 * Candidate (UpdateCandidate). A request is due at send + SLO; a batch of k
 * started at t returns at t + l(k) + resp(k), so its deadline for starting is
 * due - resp(k) - l(k) (Symphony's dl - l(k) with dl = due - d_resp when
 * resp is constant). With earliest(k) = max(now + delay(k), gpu_free_at)
 * (gpu_free_at = -inf unless a GPU was just granted):
 *  1. Batch gathering (below: "window", the default, or "head") sets bs and
 *     drops requests that cannot be served; due is then the head's (the
 *     earliest: one SLO per model).
 *  2. exec = max(earliest(bs), due - resp(bs + 1) - l(bs + 1))  deferred ("frontrun")
 *          = earliest(bs)                                        eager
 *          = max(earliest(bs), head send + k)                    timeout (clamped to latest)
 *     latest = due - resp(bs) - l(bs).
 *  3. The model timer fires at exec - delay(bs); a drop timer fires when the
 *     head can no longer be served even alone. Timers are cancelled and re-armed,
 *     never searched.
 * Model timer: pick a GPU free by exec: the lowest id (Algorithm 1; idle
 * high-id GPUs stay idle, so GPU use is load-proportional) or the earliest free
 * (Appendix D; spreads load). None free: the candidate waits as schedulable.
 * GPU timer (one, on the earliest free GPU, at its free time - the largest
 * delay of the waiting candidates): drop waiting candidates whose latest is before
 * the GPU's free time, then grant the GPU to the one with the smallest latest.
 * Grant: recompute the candidate with the GPU's free time, send its requests,
 * the GPU is believed busy until exec + l(bs); the batch may not start before
 * exec. Execution on a GPU is exclusive (one batch at a time).
 *
 * This file is the scheduler and the policies' vtables; the parameters, their
 * checks and the budget tables are in central_params.c (central.h).
 */
#include <math.h>
#include <string.h>

#include "central.h"

/* Timer arguments: kind in the top two bits, index below. */
enum { TIMER_MODEL = 0u << 30, TIMER_DROP = 1u << 30, TIMER_GPU = 2u << 30 };
#define TIMER_KIND(a) ((a) & (3u << 30))
#define TIMER_INDEX(a) ((int)((a) & ~(3u << 30)))

typedef struct {
  CsRequest *buf;          /* ring buffer of waiting requests */
  size_t head, len, cap;
  int64_t slo_ns;
  Budget budget;
  int target;        /* window gathering's target batch (TargetBatch) */
  /* TARGET_RATE: the arrival rate as nexuslb's RpsMeter measures it, samples
   * of rate_sample_ns from the first arrival, the last rate_window averaged. */
  int64_t first_arrival_ns;  /* -1 before the first */
  int64_t sample_index;      /* the sample being counted */
  int64_t sample_count;      /* its arrivals so far */
  int64_t *samples;          /* ring of the last rate_window sealed samples' counts */
  int64_t n_samples, samples_sum;
  int64_t target_sample;     /* sample_index when target was computed (-1: never) */
  gboolean has_cand;
  int bs;
  int64_t exec_ns, latest_ns;
  gboolean waiting;  /* schedulable, waiting for a GPU */
  CsTimer model_timer, drop_timer;
} ModelQ;

typedef struct {
  CsEngine *e;
  const CsWorld *w;
  const CentralParams *p;
  ModelQ *models;
  int n_models;
  int64_t *free_ns;  /* per GPU: when the scheduler believes it is free */
  int n_gpus;
  int timer_gpu;     /* GPU the GPU timer is armed for, -1 if none */
  int *type_gpu;     /* one GPU of each distinct GPU type */
  int n_types;
  CsTimer gpu_timer;
  int n_waiting;
} Central;

/* ---- queues ------------------------------------------------------------------ */

static void q_push(ModelQ *q, const CsRequest *r)
{
  if (q->len == q->cap) {
    size_t cap = q->cap ? q->cap * 2 : 64;
    CsRequest *buf = g_new(CsRequest, cap);
    for (size_t i = 0; i < q->len; i++)
      buf[i] = q->buf[(q->head + i) % q->cap];
    g_free(q->buf);
    q->buf = buf;
    q->cap = cap;
    q->head = 0;
  }
  q->buf[(q->head + q->len) % q->cap] = *r;
  q->len++;
}

static inline const CsRequest *q_at(const ModelQ *q, size_t i)
{
  return &q->buf[(q->head + i) % q->cap];
}

static void q_pop(ModelQ *q)
{
  q->head = (q->head + 1) % q->cap;
  q->len--;
}

/* ---- the algorithm ------------------------------------------------------------ */

/* delay(k): the time to get a batch of k of model m to a GPU. */
static inline int64_t delay_ns(Central *c, int m, int k)
{
  Budget *b = &c->models[m].budget;
  if (G_UNLIKELY(k >= b->len))
    cs_central_budget_extend(b, c->p, c->w, m, k);
  return c->p->d_ctrl_ns + b->transfer[k];
}

/* resp(k): the time the result of a batch of k of model m needs to come back. */
static inline int64_t resp_ns(Central *c, int m, int k)
{
  Budget *b = &c->models[m].budget;
  if (G_UNLIKELY(k >= b->len))
    cs_central_budget_extend(b, c->p, c->w, m, k);
  return b->resp[k];
}

/* Latency of a batch of k of model m as the scheduler plans it. In a cluster
 * of mixed GPU types it plans with the slowest type's latency at every batch
 * size, as Symphony's implementation does (MergeProfileBySlowest): a batch
 * planned for any GPU then meets its deadline on every GPU. */
static inline int64_t lat(Central *c, int m, int k)
{
  int64_t l = cs_engine_exec_ns(c->e, m, c->type_gpu[0], k);
  for (int t = 1; t < c->n_types; t++)
    l = MAX(l, cs_engine_exec_ns(c->e, m, c->type_gpu[t], k));
  return MIN(l, BUDGET_CAP);
}

/* How long the batch runs on the GPU it was granted. */
static inline int64_t lat_on(Central *c, int m, int g, int k)
{
  return MIN(cs_engine_exec_ns(c->e, m, g, k), BUDGET_CAP);
}

static void set_gpu_timer(Central *c);

/* When the SLO of the i-th waiting request of q ends. */
static inline int64_t due_ns(const ModelQ *q, size_t i)
{
  return q_at(q, i)->send_ns + q->slo_ns;
}

/* The last start of a batch of k of model m whose result is back by due. */
static inline int64_t last_start_ns(Central *c, int m, int k, int64_t due)
{
  return due - resp_ns(c, m, k) - lat(c, m, k);
}

/* When the result of a batch of k dispatched now (or onto a GPU free at
 * gpu_free_ns) is back. */
static inline int64_t done_ns(Central *c, int m, int k, int64_t now, int64_t gpu_free_ns)
{
  return MAX(now + delay_ns(c, m, k), gpu_free_ns) + lat(c, m, k) + resp_ns(c, m, k);
}

static void drop_head(Central *c, int m)
{
  ModelQ *q = &c->models[m];
  cs_engine_drop(c->e, m, q_at(q, 0));
  q_pop(q);
}

/* Batch gathering "head": drop only head requests that cannot finish even
 * alone; the batch is the longest run from the head that meets the head's
 * deadline. Returns the batch size (0: queue empty). */
static int gather_head(Central *c, int m, int64_t now, int64_t gpu_free_ns)
{
  ModelQ *q = &c->models[m];
  while (q->len > 0 && done_ns(c, m, 1, now, gpu_free_ns) > due_ns(q, 0))
    drop_head(c, m);
  if (q->len == 0)
    return 0;
  int64_t due = due_ns(q, 0);
  int limit = (int)MIN(q->len, (size_t)c->p->max_batch);
  int bs = 1;
  while (bs < limit && done_ns(c, m, bs + 1, now, gpu_free_ns) <= due)
    bs++;
  return bs;
}

/* Batch gathering "window" (drop the head to keep batches large, as Nexus'
 * early drop and Symphony's implementation do): the suffix of the queue that
 * can run as one batch within its first request's SLO sets the batch size
 * bs = min(target, suffix length); older requests that cannot finish with a
 * batch of bs are dropped; then the batch grows while the new head's deadline
 * still holds. Without overload the whole queue is the suffix and nothing is
 * dropped that "head" would keep. */
static int gather_window(Central *c, int m, int64_t now, int64_t gpu_free_ns)
{
  ModelQ *q = &c->models[m];
  size_t n = q->len;
  if (n == 0)
    return 0;
  /* Smallest start s whose suffix fits: done(n - s) <= due(s). The predicate
   * is monotone in s (shorter batches, later dues; budgets non-decreasing in
   * the batch size), so bisect. */
  size_t lo = 0, hi = n; /* the answer is in [lo, hi]; hi = n means none fits */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (done_ns(c, m, (int)MIN(n - mid, (size_t)c->p->max_batch), now, gpu_free_ns) <=
        due_ns(q, mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  size_t suffix = n - lo;
  if (suffix == 0) {
    while (q->len > 0)
      drop_head(c, m);
    return 0;
  }
  int bs = (int)MIN(suffix, (size_t)q->target);
  bs = MIN(bs, c->p->max_batch);
  int64_t f = done_ns(c, m, bs, now, gpu_free_ns);
  while (q->len > 0 && due_ns(q, 0) < f)
    drop_head(c, m);
  int64_t due = due_ns(q, 0);
  int limit = (int)MIN(q->len, (size_t)c->p->max_batch);
  while (bs < limit && done_ns(c, m, bs + 1, now, gpu_free_ns) <= due)
    bs++; /* free lunch */
  return bs;
}

/* ---- nexuslb's target batch (target_batch "rate") ------------------------------ */

/* Seals every sample that ended by now (zeros for samples without arrivals). */
static void meter_advance(Central *c, ModelQ *q, int64_t now)
{
  if (q->first_arrival_ns < 0)
    return;
  int64_t idx = (now - q->first_arrival_ns) / c->p->rate_sample_ns;
  int w = c->p->rate_window;
  if (idx - q->sample_index > w + 1) {
    /* Idle for longer than the window: every sample in it is 0. */
    q->sample_index = idx - w - 1;
    q->sample_count = 0;
  }
  while (q->sample_index < idx) {
    int slot = (int)(q->n_samples % w);
    if (q->n_samples >= w)
      q->samples_sum -= q->samples[slot];
    q->samples[slot] = q->sample_count;
    q->samples_sum += q->sample_count;
    q->n_samples++;
    q->sample_count = 0;
    q->sample_index++;
  }
}

static int64_t cost_lat(void *ctx, int m, int b)
{
  return lat(ctx, m, b);
}

static int64_t cost_overhead(void *ctx, int m, int b)
{
  return delay_ns(ctx, m, b) + resp_ns(ctx, m, b);
}

static int rate_target(Central *c, int m, double rate_per_ns)
{
  CsBatchCosts costs = { .lat_ns = cost_lat, .overhead_ns = cost_overhead, .ctx = c, .model = m };
  return cs_central_rate_target(rate_per_ns * 1e9, c->models[m].slo_ns, c->p->max_batch, &costs);
}

/* Before the first sealed sample: the largest b with l(b) <= SLO / 2 - 2 ms
 * (nexuslb's fallback, its 2 ms being the network it assumes), at least 1. */
static int fallback_target(Central *c, int m)
{
  int64_t half = c->models[m].slo_ns / 2 - 2000000;
  int b = 1;
  while (b < c->p->max_batch && lat(c, m, b + 1) <= half)
    b++;
  return b;
}

/* Recomputes the target when a sample was sealed since the last time. */
static void update_rate_target(Central *c, int m, int64_t now)
{
  ModelQ *q = &c->models[m];
  meter_advance(c, q, now);
  if (q->target_sample == q->sample_index)
    return;
  q->target_sample = q->sample_index;
  if (q->n_samples == 0) {
    q->target = fallback_target(c, m);
    return;
  }
  int64_t n = MIN(q->n_samples, (int64_t)c->p->rate_window);
  double rate = (double)q->samples_sum / ((double)n * (double)c->p->rate_sample_ns);
  q->target = rate_target(c, m, rate);
}

static void update_candidate(Central *c, int m, int64_t gpu_free_ns)
{
  ModelQ *q = &c->models[m];
  int64_t now = cs_engine_now(c->e);
  cs_engine_cancel(c->e, q->model_timer);
  cs_engine_cancel(c->e, q->drop_timer);
  q->model_timer = q->drop_timer = CS_TIMER_NONE;
  if (c->p->target == TARGET_RATE)
    update_rate_target(c, m, now);
  int bs = c->p->gathering == GATHER_WINDOW ? gather_window(c, m, now, gpu_free_ns)
                                            : gather_head(c, m, now, gpu_free_ns);
  if (bs == 0) {
    q->has_cand = FALSE;
    if (q->waiting) {
      q->waiting = FALSE;
      c->n_waiting--;
    }
    return;
  }
  const CsRequest *head = q_at(q, 0);
  int64_t due = due_ns(q, 0);
  int64_t earliest = MAX(now + delay_ns(c, m, bs), gpu_free_ns);
  int64_t latest = last_start_ns(c, m, bs, due);
  int64_t exec;
  switch (c->p->rule) {
  case RULE_DEFERRED:
    /* Deferring lets the batch grow by one; at max_batch it cannot. */
    exec = bs < c->p->max_batch ? MAX(earliest, last_start_ns(c, m, bs + 1, due)) : earliest;
    break;
  case RULE_EAGER:
    exec = earliest;
    break;
  default:
    exec = MIN(MAX(earliest, head->send_ns + c->p->timeout_ns), latest);
    break;
  }
  q->has_cand = TRUE;
  q->bs = bs;
  q->exec_ns = exec;
  q->latest_ns = latest;
  /* The head becomes hopeless 1 ns after the last moment it could start alone. */
  int64_t hopeless = last_start_ns(c, m, 1, due) - delay_ns(c, m, 1) + 1;
  q->drop_timer = cs_engine_timer(c->e, MAX(now, hopeless), TIMER_DROP | (uint32_t)m);
  if (!q->waiting)
    q->model_timer =
      cs_engine_timer(c->e, MAX(now, exec - delay_ns(c, m, bs)), TIMER_MODEL | (uint32_t)m);
}

static void grant(Central *c, int m, int g)
{
  ModelQ *q = &c->models[m];
  if (q->waiting) {
    q->waiting = FALSE;
    c->n_waiting--;
  }
  update_candidate(c, m, c->free_ns[g]);
  if (q->has_cand) {
    CsBatch *b = cs_engine_batch_new(c->e, m, q->bs);
    for (int i = 0; i < q->bs; i++) {
      cs_batch_add(c->e, b, q_at(q, 0));
      q_pop(q);
    }
    cs_batch_set_not_before(b, q->exec_ns);
    c->free_ns[g] = q->exec_ns + lat_on(c, m, g, q->bs);
    cs_engine_send_gpu(c->e, b, g);
    update_candidate(c, m, INT64_MIN);
  }
  set_gpu_timer(c);
}

/* free_ns of a GPU that takes no work (a controller has it off or released):
 * later than any time a run reaches, far enough from INT64_MAX for the sums
 * done_ns makes. */
#define GPU_OFF_NS (INT64_MAX / 4)

/* The GPU free soonest (lowest id among equals). */
static int earliest_gpu(const Central *c)
{
  int best = 0;
  for (int g = 1; g < c->n_gpus; g++)
    if (c->free_ns[g] < c->free_ns[best])
      best = g;
  return best;
}

static void on_model_timer(Central *c, int m)
{
  ModelQ *q = &c->models[m];
  q->model_timer = CS_TIMER_NONE;
  g_assert(q->has_cand);
  int g = -1;
  if (c->p->gpu_choice == GPU_LOWEST_ID) {
    for (int i = 0; i < c->n_gpus && g < 0; i++)
      if (c->free_ns[i] <= q->exec_ns)
        g = i;
  } else {
    int e = earliest_gpu(c);
    if (c->free_ns[e] <= q->exec_ns)
      g = e;
  }
  if (g >= 0) {
    grant(c, m, g);
  } else {
    q->waiting = TRUE;
    c->n_waiting++;
    set_gpu_timer(c);
  }
}

static void set_gpu_timer(Central *c)
{
  cs_engine_cancel(c->e, c->gpu_timer);
  c->gpu_timer = CS_TIMER_NONE;
  c->timer_gpu = -1;
  if (c->n_waiting == 0)
    return;
  int g = earliest_gpu(c);
  if (c->free_ns[g] == GPU_OFF_NS)
    return; /* no GPU takes work: on_cluster_change sets the timer when one does */
  int64_t max_delay = 0; /* of the waiting candidates: the first must reach the GPU as it frees */
  for (int m = 0; m < c->n_models; m++)
    if (c->models[m].waiting)
      max_delay = MAX(max_delay, delay_ns(c, m, c->models[m].bs));
  int64_t at = MAX(cs_engine_now(c->e), c->free_ns[g] - max_delay);
  c->timer_gpu = g;
  c->gpu_timer = cs_engine_timer(c->e, at, TIMER_GPU | (uint32_t)g);
}

static void on_gpu_timer(Central *c, int g)
{
  c->gpu_timer = CS_TIMER_NONE;
  int best = -1;
  for (int m = 0; m < c->n_models; m++) {
    ModelQ *q = &c->models[m];
    if (!q->waiting)
      continue;
    if (c->free_ns[g] > q->latest_ns) {
      /* This GPU frees too late for the candidate; it waits for its queue to
       * change (a new request or its drop timer) to be offered again. */
      q->waiting = FALSE;
      c->n_waiting--;
      continue;
    }
    if (best < 0 || q->latest_ns < c->models[best].latest_ns)
      best = m;
  }
  if (best >= 0)
    grant(c, best, g);
  else
    set_gpu_timer(c);
}

/* ---- vtable ------------------------------------------------------------------- */

static void *central_create(CsEngine *e, const void *params, void *user_data)
{
  (void)user_data;
  const CsWorld *w = cs_engine_world(e);
  Central *c = g_new0(Central, 1);
  c->e = e;
  c->w = w;
  c->p = params;
  c->n_models = cs_world_n_models(w);
  c->n_gpus = cs_world_n_gpus(w);
  c->type_gpu = g_new0(int, MAX(c->n_gpus, 1));
  for (int g = 0; g < c->n_gpus; g++) {
    int t = 0;
    while (t < c->n_types && strcmp(cs_world_gpu_type(w, c->type_gpu[t]), cs_world_gpu_type(w, g)))
      t++;
    if (t == c->n_types)
      c->type_gpu[c->n_types++] = g;
  }
  c->models = g_new0(ModelQ, MAX(c->n_models, 1));
  for (int m = 0; m < c->n_models; m++) {
    ModelQ *q = &c->models[m];
    q->slo_ns = cs_world_slo_ns(w, m);
    q->first_arrival_ns = -1;
    q->target_sample = -1;
    if (c->p->target == TARGET_RATE)
      q->samples = g_new0(int64_t, c->p->rate_window);
    /* TARGET_SLO: the largest batch that could meet the SLO if dispatched on
     * arrival. (TARGET_RATE replaces it before its first use.) */
    q->target = 1;
    while (q->target < c->p->max_batch &&
           delay_ns(c, m, q->target + 1) + lat(c, m, q->target + 1) +
               resp_ns(c, m, q->target + 1) <= q->slo_ns)
      q->target++;
  }
  c->free_ns = g_new0(int64_t, MAX(c->n_gpus, 1));
  for (int g = 0; g < c->n_gpus; g++)
    c->free_ns[g] = cs_engine_gpu_ready(e, g) ? INT64_MIN / 2 /* free since forever */ : GPU_OFF_NS;
  c->timer_gpu = -1;
  return c;
}

/* A controller provisioned or released GPUs: a GPU that takes no work is
 * never free; one that became ready is free now. */
static void central_on_cluster_change(void *state)
{
  Central *c = state;
  int64_t now = cs_engine_now(c->e);
  for (int g = 0; g < c->n_gpus; g++) {
    gboolean ready = cs_engine_gpu_ready(c->e, g);
    if (!ready)
      c->free_ns[g] = GPU_OFF_NS;
    else if (c->free_ns[g] == GPU_OFF_NS)
      c->free_ns[g] = now;
  }
  /* Candidates waiting for a GPU may take the new one. */
  set_gpu_timer(c);
}

static void central_destroy(void *state)
{
  Central *c = state;
  /* Requests still queued (a run stopped early) need no freeing: they are
   * copies in buf. */
  for (int m = 0; m < c->n_models; m++) {
    g_free(c->models[m].buf);
    g_free(c->models[m].samples);
    cs_central_budget_clear(&c->models[m].budget);
  }
  g_free(c->models);
  g_free(c->free_ns);
  g_free(c->type_gpu);
  g_free(c);
}

static void central_on_request(void *state, int m, const CsRequest *r)
{
  Central *c = state;
  ModelQ *q = &c->models[m];
  if (c->p->target == TARGET_RATE) {
    /* Every arrival counts, also those dropped later (nexuslb's Hit). */
    if (q->first_arrival_ns < 0)
      q->first_arrival_ns = r->send_ns;
    meter_advance(c, q, cs_engine_now(c->e));
    q->sample_count++;
  }
  q_push(q, r);
  update_candidate(c, m, INT64_MIN);
  if (c->models[m].waiting)
    set_gpu_timer(c); /* the waiting candidate grew: its delay changed */
}

static void central_on_timer(void *state, uint32_t arg)
{
  Central *c = state;
  int i = TIMER_INDEX(arg);
  switch (TIMER_KIND(arg)) {
  case TIMER_MODEL:
    on_model_timer(c, i);
    break;
  case TIMER_DROP:
    c->models[i].drop_timer = CS_TIMER_NONE;
    update_candidate(c, i, INT64_MIN);
    if (c->models[i].waiting || c->n_waiting > 0)
      set_gpu_timer(c);
    break;
  default:
    on_gpu_timer(c, i);
    break;
  }
}

#define CENTRAL_POLICY(var, pname, desc, parser)                                               \
  const CsDispatchPolicy var = {                                                              \
    .name = pname,                                                                            \
    .description = desc,                                                                      \
    .uses_placement = FALSE,                                                                  \
    .parse = parser,                                                                          \
    .free_params = cs_central_free,                                                           \
    .check = cs_central_check,                                                                \
    .create = central_create,                                                                 \
    .destroy = central_destroy,                                                               \
    .on_request = central_on_request,                                                         \
    .on_timer = central_on_timer,                                                             \
    .describe = cs_central_describe,                                                          \
    .write_defaults = cs_central_write_defaults,                                              \
    .on_cluster_change = central_on_cluster_change,                                           \
  }

CENTRAL_POLICY(cs_dispatch_symphony, "symphony",
               "Symphony deferred batch scheduling: dispatch at frontrun d - l(|B|+1)",
               cs_central_parse_deferred);
CENTRAL_POLICY(cs_dispatch_eager, "eager",
               "centralized, dispatch as soon as a GPU is free (Symphony's eager baseline)",
               cs_central_parse_eager);
CENTRAL_POLICY(cs_dispatch_timeout, "timeout",
               "centralized, dispatch at first arrival + timeout_ms (Symphony's baseline)",
               cs_central_parse_timeout);
