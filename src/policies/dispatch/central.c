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
 * it is a safety margin. central_check compares explicit settings with the
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
 */
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "sim/engine_internal.h"
#include "sim/warnings.h"

typedef enum { RULE_DEFERRED, RULE_EAGER, RULE_TIMEOUT } ExecRule;
typedef enum { GPU_LOWEST_ID, GPU_EARLIEST_FREE } GpuChoice;
typedef enum { GATHER_WINDOW, GATHER_HEAD } Gathering;

/* What central_check derived for one model, for the summary: the scheduler's
 * budgets and the simulated transfers at batch 1 and at the largest batch. */
typedef struct {
  char *model;
  int largest_batch;           /* largest k with d_ctrl + network budgets + l(k) <= SLO */
  int64_t transfer_ns[2];      /* scheduler: transfer(1), transfer(largest) */
  int64_t net_transfer_ns[2];  /* network(k * input_bytes) at the same k */
  int64_t resp_ns[2];          /* scheduler: resp(1), resp(largest) */
  int64_t net_resp_ns[2];      /* network(k * output_bytes) at the same k */
} ModelBudget;

typedef struct {
  ExecRule rule;
  GpuChoice gpu_choice;
  Gathering gathering;
  int64_t d_ctrl_ns, d_data_ns, d_resp_ns; /* d_data/d_resp: only when explicit */
  gboolean data_explicit, resp_explicit;
  int64_t timeout_ns; /* RULE_TIMEOUT: k */
  int max_batch;
  ModelBudget *budgets; /* per client, filled by central_check; NULL before */
  int n_budgets;
} CentralParams;

/* Budgets are capped so that a time plus a few of them cannot overflow
 * int64 (INT64_MAX / 8 ns is about 36 years). */
#define BUDGET_CAP (INT64_MAX / 8)

/* A model's budget tables, indexed by batch size k in [0, len). */
typedef struct {
  int64_t *transfer; /* transfer(k); delay(k) = d_ctrl + transfer(k) */
  int64_t *resp;     /* resp(k) */
  int len;
} Budget;

/* Timer arguments: kind in the top two bits, index below. */
enum { TIMER_MODEL = 0u << 30, TIMER_DROP = 1u << 30, TIMER_GPU = 2u << 30 };
#define TIMER_KIND(a) ((a) & (3u << 30))
#define TIMER_INDEX(a) ((int)((a) & ~(3u << 30)))

typedef struct {
  Req *buf;          /* ring buffer of waiting requests */
  size_t head, len, cap;
  int64_t slo_ns;
  Budget budget;
  int target;        /* largest batch that can meet the SLO at all (window gathering) */
  gboolean has_cand;
  int bs;
  int64_t exec_ns, latest_ns;
  gboolean waiting;  /* schedulable, waiting for a GPU */
  CsEventHandle model_timer, drop_timer;
} ModelQ;

typedef struct {
  Engine *e;
  const CsConfig *cfg;
  const CentralParams *p;
  ModelQ *models;
  int n_models;
  int64_t *free_ns;  /* per GPU: when the scheduler believes it is free */
  int n_gpus;
  int timer_gpu;     /* GPU the GPU timer is armed for, -1 if none */
  CsEventHandle gpu_timer;
  int n_waiting;
} Central;

/* ---- parameters ------------------------------------------------------------ */

static void *central_parse(const cJSON *params, const char *file, const char *path,
                           ExecRule rule, GError **error)
{
  static const char *const keys[] = { "policy",    "gpu_choice", "batch_gathering",
                                      "d_ctrl_us", "d_data_us",  "d_resp_ms",
                                      "max_batch", "timeout_ms", NULL };
  /* d_ctrl's default is that of Symphony's public implementation; d_data and
   * d_resp default to the simulated network (its 50 us and 2 ms assume a
   * network the scenario may not have). */
  double d_ctrl_us = 100.0, d_data_us = 0.0, d_resp_ms = 0.0, timeout_ms = -1.0;
  int max_batch = 512;
  /* Symphony keeps batches large by dropping the head under overload; the
   * eager and timeout baselines drop only hopeless requests, like the eager
   * systems they stand for. Either can be chosen explicitly. */
  const char *choice = "lowest_id", *gather = rule == RULE_DEFERRED ? "window" : "head";
  if (params &&
      (!cs_json_check_keys(params, keys, file, path, error) ||
       !cs_json_read_string(params, "gpu_choice", FALSE, &choice, file, path, error) ||
       !cs_json_read_string(params, "batch_gathering", FALSE, &gather, file, path, error) ||
       !cs_json_read_double(params, "d_ctrl_us", FALSE, 0.0, 1e9, &d_ctrl_us, file, path, error) ||
       !cs_json_read_double(params, "d_data_us", FALSE, 0.0, 1e9, &d_data_us, file, path, error) ||
       !cs_json_read_double(params, "d_resp_ms", FALSE, 0.0, 1e9, &d_resp_ms, file, path, error) ||
       !cs_json_read_int(params, "max_batch", FALSE, 1, 1 << 20, &max_batch, file, path, error) ||
       !cs_json_read_double(params, "timeout_ms", FALSE, 0.0, 1e9, &timeout_ms, file, path,
                            error)))
    return NULL;
  GpuChoice gc;
  if (strcmp(choice, "lowest_id") == 0)
    gc = GPU_LOWEST_ID;
  else if (strcmp(choice, "earliest_free") == 0)
    gc = GPU_EARLIEST_FREE;
  else {
    char *p = cs_json_path_key(path, "gpu_choice");
    cs_json_fail(error, file, p, "expected \"lowest_id\" or \"earliest_free\", got \"%s\"", choice);
    g_free(p);
    return NULL;
  }
  Gathering ga;
  if (strcmp(gather, "window") == 0)
    ga = GATHER_WINDOW;
  else if (strcmp(gather, "head") == 0)
    ga = GATHER_HEAD;
  else {
    char *p = cs_json_path_key(path, "batch_gathering");
    cs_json_fail(error, file, p, "expected \"window\" or \"head\", got \"%s\"", gather);
    g_free(p);
    return NULL;
  }
  if (rule == RULE_TIMEOUT && timeout_ms < 0) {
    char *p = cs_json_path_key(path, "timeout_ms");
    cs_json_fail(error, file, p, "required field is missing (the timeout k after the first "
                                 "request of a batch)");
    g_free(p);
    return NULL;
  }
  if (rule != RULE_TIMEOUT && timeout_ms >= 0) {
    cs_json_fail(error, file, path, "\"timeout_ms\" applies to dispatch \"timeout\" only");
    return NULL;
  }
  CentralParams *cp = g_new0(CentralParams, 1);
  cp->rule = rule;
  cp->gpu_choice = gc;
  cp->gathering = ga;
  cp->d_ctrl_ns = llround(d_ctrl_us * 1e3);
  cp->d_data_ns = llround(d_data_us * 1e3);
  cp->d_resp_ns = llround(d_resp_ms * 1e6);
  cp->data_explicit = cJSON_GetObjectItemCaseSensitive(params, "d_data_us") != NULL;
  cp->resp_explicit = cJSON_GetObjectItemCaseSensitive(params, "d_resp_ms") != NULL;
  cp->timeout_ns = timeout_ms >= 0 ? llround(timeout_ms * 1e6) : 0;
  cp->max_batch = max_batch;
  return cp;
}

static void *parse_deferred(const cJSON *p, const char *f, const char *path, GError **e)
{
  return central_parse(p, f, path, RULE_DEFERRED, e);
}
static void *parse_eager(const cJSON *p, const char *f, const char *path, GError **e)
{
  return central_parse(p, f, path, RULE_EAGER, e);
}
static void *parse_timeout(const cJSON *p, const char *f, const char *path, GError **e)
{
  return central_parse(p, f, path, RULE_TIMEOUT, e);
}

static void central_free(void *params)
{
  CentralParams *p = params;
  for (int m = 0; m < p->n_budgets; m++)
    g_free(p->budgets[m].model);
  g_free(p->budgets);
  g_free(p);
}

/* The effective scenario's dispatch object: every parameter with its value.
 * d_data_us and d_resp_ms stay out unless given: their default is "from the
 * network", which only their absence says. */
static void central_fill_defaults(const void *params, cJSON *obj)
{
  const CentralParams *p = params;
  if (!cJSON_GetObjectItemCaseSensitive(obj, "gpu_choice"))
    cJSON_AddStringToObject(obj, "gpu_choice",
                            p->gpu_choice == GPU_LOWEST_ID ? "lowest_id" : "earliest_free");
  if (!cJSON_GetObjectItemCaseSensitive(obj, "batch_gathering"))
    cJSON_AddStringToObject(obj, "batch_gathering",
                            p->gathering == GATHER_WINDOW ? "window" : "head");
  if (!cJSON_GetObjectItemCaseSensitive(obj, "d_ctrl_us"))
    cJSON_AddNumberToObject(obj, "d_ctrl_us", p->d_ctrl_ns / 1e3);
  if (!cJSON_GetObjectItemCaseSensitive(obj, "max_batch"))
    cJSON_AddNumberToObject(obj, "max_batch", p->max_batch);
}

static void central_describe(const void *params, cJSON *out)
{
  const CentralParams *p = params;
  cJSON_AddStringToObject(out, "gpu_choice",
                          p->gpu_choice == GPU_LOWEST_ID ? "lowest_id" : "earliest_free");
  cJSON_AddStringToObject(out, "batch_gathering", p->gathering == GATHER_WINDOW ? "window" : "head");
  /* Whether each delay was set or derived, so that a reader knows what ran. */
  cJSON_AddNumberToObject(out, "d_ctrl_us", p->d_ctrl_ns / 1e3);
  if (p->data_explicit)
    cJSON_AddNumberToObject(out, "d_data_us", p->d_data_ns / 1e3);
  cJSON_AddStringToObject(out, "d_data_source", p->data_explicit ? "explicit" : "network");
  if (p->resp_explicit)
    cJSON_AddNumberToObject(out, "d_resp_ms", p->d_resp_ns / 1e6);
  cJSON_AddStringToObject(out, "d_resp_source", p->resp_explicit ? "explicit" : "network");
  cJSON_AddNumberToObject(out, "max_batch", p->max_batch);
  if (p->rule == RULE_TIMEOUT)
    cJSON_AddNumberToObject(out, "timeout_ms", p->timeout_ns / 1e6);
  if (p->budgets) {
    cJSON *arr = cJSON_AddArrayToObject(out, "budgets");
    for (int m = 0; m < p->n_budgets; m++) {
      const ModelBudget *b = &p->budgets[m];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "model", b->model);
      cJSON_AddNumberToObject(o, "largest_batch", b->largest_batch);
      cJSON_AddNumberToObject(o, "transfer_us_batch_1", b->transfer_ns[0] / 1e3);
      cJSON_AddNumberToObject(o, "transfer_us_largest_batch", b->transfer_ns[1] / 1e3);
      cJSON_AddNumberToObject(o, "network_transfer_us_batch_1", b->net_transfer_ns[0] / 1e3);
      cJSON_AddNumberToObject(o, "network_transfer_us_largest_batch", b->net_transfer_ns[1] / 1e3);
      cJSON_AddNumberToObject(o, "response_ms_batch_1", b->resp_ns[0] / 1e6);
      cJSON_AddNumberToObject(o, "response_ms_largest_batch", b->resp_ns[1] / 1e6);
      cJSON_AddNumberToObject(o, "network_response_ms_batch_1", b->net_resp_ns[0] / 1e6);
      cJSON_AddNumberToObject(o, "network_response_ms_largest_batch", b->net_resp_ns[1] / 1e6);
      cJSON_AddItemToArray(arr, o);
    }
  }
}

/* ---- budgets -------------------------------------------------------------------- */

/* The simulated transfer of k payloads of bytes each, as the engine computes
 * it (network of the product), with the product saturating and the result
 * capped at BUDGET_CAP. */
static int64_t net_ns(const CsConfig *cfg, int64_t bytes, int k)
{
  int64_t total = bytes > 0 && k > INT64_MAX / bytes ? INT64_MAX : bytes * k;
  return MIN(cs_network_curve_latency_ns(cfg->network, total), BUDGET_CAP);
}

/* Extends model m's tables to cover batch size k. Explicit settings give
 * d_data * k and d_resp; otherwise the network's figure for the batch's
 * payload, made non-decreasing in k by a running maximum: gathering bisects on
 * the assumption that a larger batch never returns earlier, and on a fitted
 * curve that dips the budget then errs late, never early. */
static void budget_extend(Budget *b, const CentralParams *p, const CsConfig *cfg, int m, int k)
{
  if (k < b->len)
    return;
  int old = b->len, len = MAX(k + 1, 2 * old);
  b->transfer = g_renew(int64_t, b->transfer, len);
  b->resp = g_renew(int64_t, b->resp, len);
  const CsClientConfig *cl = &cfg->clients[m];
  for (int i = old; i < len; i++) {
    int64_t t, r;
    if (p->data_explicit)
      t = i > 0 && p->d_data_ns > BUDGET_CAP / i ? BUDGET_CAP : p->d_data_ns * i;
    else
      t = i == 0 ? 0 : MAX(net_ns(cfg, cl->input_bytes, i), b->transfer[i - 1]);
    if (p->resp_explicit)
      r = MIN(p->d_resp_ns, BUDGET_CAP);
    else
      r = i == 0 ? 0 : MAX(net_ns(cfg, cl->output_bytes, i), b->resp[i - 1]);
    b->transfer[i] = t;
    b->resp[i] = r;
  }
  b->len = len;
}

static void budget_clear(Budget *b)
{
  g_free(b->transfer);
  g_free(b->resp);
  b->transfer = b->resp = NULL;
  b->len = 0;
}

/* TRUE when the scheduler's figure est is more than 10 % away from the
 * simulated sim (any est > 0 when sim is 0). */
static gboolean mismatch(int64_t est, int64_t sim)
{
  return fabs((double)est - (double)sim) > 0.1 * (double)sim;
}

/* Compiled-scenario check (CsDispatchPolicy.check): per model, the largest
 * batch B that fits the SLO with the network-derived budgets (the batch that
 * window gathering aims at when nothing is explicit; independent of explicit
 * d_data/d_resp so that the comparison points do not move with them), the
 * figures for the summary, and a "budget_network_mismatch" warning when an
 * explicit d_data_us or d_resp_ms is more than 10 % off the simulated
 * transfer at batch 1 or at batch B. */
static void central_check(void *params, const CsConfig *cfg, CsWarningList *w)
{
  CentralParams *p = params;
  for (int m = 0; m < p->n_budgets; m++)
    g_free(p->budgets[m].model);
  g_free(p->budgets);
  p->n_budgets = cfg->n_clients;
  p->budgets = g_new0(ModelBudget, MAX(cfg->n_clients, 1));
  CentralParams derived = *p;
  derived.data_explicit = derived.resp_explicit = FALSE;
  for (int m = 0; m < cfg->n_clients; m++) {
    const CsClientConfig *cl = &cfg->clients[m];
    ModelBudget *mb = &p->budgets[m];
    mb->model = g_strdup(cl->model);
    const CsModelProfile *prof =
      cfg->n_gpus > 0 ? cs_profile_set_lookup(cfg->profiles, cfg->gpus[0].gpu_type, cl->model)
                      : NULL;
    Budget nb = { 0 }, sb = { 0 };
    int big = 1;
    while (prof && big < p->max_batch) {
      budget_extend(&nb, &derived, cfg, m, big + 1);
      int64_t need = p->d_ctrl_ns + nb.transfer[big + 1] + nb.resp[big + 1] +
                     MIN(cs_model_profile_exec_ns(prof, big + 1), BUDGET_CAP);
      if (need > cl->slo_ns)
        break;
      big++;
    }
    budget_extend(&sb, p, cfg, m, big);
    const int ks[2] = { 1, big };
    for (int i = 0; i < 2; i++) {
      mb->transfer_ns[i] = sb.transfer[ks[i]];
      mb->resp_ns[i] = sb.resp[ks[i]];
      mb->net_transfer_ns[i] = net_ns(cfg, cl->input_bytes, ks[i]);
      mb->net_resp_ns[i] = net_ns(cfg, cl->output_bytes, ks[i]);
    }
    mb->largest_batch = big;
    budget_clear(&nb);
    budget_clear(&sb);
    if (p->data_explicit && (mismatch(mb->transfer_ns[0], mb->net_transfer_ns[0]) ||
                             mismatch(mb->transfer_ns[1], mb->net_transfer_ns[1])))
      cs_warning_add(w, "budget_network_mismatch", cl->model, -1,
                     "dispatch.d_data_us = %g budgets the transfer of a batch of 1 at %.1f us and "
                     "of a batch of %d (the largest within the SLO) at %.1f us, but the simulated "
                     "network takes %.1f us and %.1f us (%" G_GINT64_FORMAT
                     " bytes per request); remove d_data_us to take the transfer from the "
                     "scenario's network",
                     p->d_data_ns / 1e3, mb->transfer_ns[0] / 1e3, big, mb->transfer_ns[1] / 1e3,
                     mb->net_transfer_ns[0] / 1e3, mb->net_transfer_ns[1] / 1e3,
                     (gint64)cl->input_bytes);
    if (p->resp_explicit && (mismatch(mb->resp_ns[0], mb->net_resp_ns[0]) ||
                             mismatch(mb->resp_ns[1], mb->net_resp_ns[1])))
      cs_warning_add(w, "budget_network_mismatch", cl->model, -1,
                     "dispatch.d_resp_ms = %g budgets %.3f ms for a result to come back, but the "
                     "simulated network returns the result of a batch of 1 in %.3f ms and of a "
                     "batch of %d (the largest within the SLO) in %.3f ms (%" G_GINT64_FORMAT
                     " bytes per request); remove d_resp_ms to take the response time from the "
                     "scenario's network",
                     p->d_resp_ns / 1e6, mb->resp_ns[0] / 1e6, mb->net_resp_ns[0] / 1e6, big,
                     mb->net_resp_ns[1] / 1e6, (gint64)cl->output_bytes);
  }
}

/* ---- queues ------------------------------------------------------------------ */

static void q_push(ModelQ *q, const Req *r)
{
  if (q->len == q->cap) {
    size_t cap = q->cap ? q->cap * 2 : 64;
    Req *buf = g_new(Req, cap);
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

static inline const Req *q_at(const ModelQ *q, size_t i)
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
    budget_extend(b, c->p, c->cfg, m, k);
  return c->p->d_ctrl_ns + b->transfer[k];
}

/* resp(k): the time the result of a batch of k of model m needs to come back. */
static inline int64_t resp_ns(Central *c, int m, int k)
{
  Budget *b = &c->models[m].budget;
  if (G_UNLIKELY(k >= b->len))
    budget_extend(b, c->p, c->cfg, m, k);
  return b->resp[k];
}

/* Latency of a batch of k of model m. Every GPU of the sub-cluster is assumed
 * to share one profile (the first GPU's), as in Symphony's homogeneous pools. */
static inline int64_t lat(Central *c, int m, int k)
{
  return MIN(cs_engine_latency(c->e, m, 0, k), BUDGET_CAP);
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

static void update_candidate(Central *c, int m, int64_t gpu_free_ns)
{
  ModelQ *q = &c->models[m];
  int64_t now = cs_engine_now(c->e);
  cs_engine_cancel(c->e, q->model_timer);
  cs_engine_cancel(c->e, q->drop_timer);
  q->model_timer = q->drop_timer = CS_EVENT_HANDLE_NONE;
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
  const Req *head = q_at(q, 0);
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
    Batch *b = cs_engine_batch_new(c->e, m, q->bs);
    for (int i = 0; i < q->bs; i++) {
      cs_engine_batch_add(c->e, b, q_at(q, 0));
      q_pop(q);
    }
    b->not_before_ns = q->exec_ns;
    c->free_ns[g] = q->exec_ns + lat(c, m, q->bs);
    cs_engine_send(c->e, b, g, m * c->n_gpus + g); /* a worker per (model, GPU) */
    update_candidate(c, m, INT64_MIN);
  }
  set_gpu_timer(c);
}

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
  q->model_timer = CS_EVENT_HANDLE_NONE;
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
  c->gpu_timer = CS_EVENT_HANDLE_NONE;
  c->timer_gpu = -1;
  if (c->n_waiting == 0)
    return;
  int g = earliest_gpu(c);
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
  c->gpu_timer = CS_EVENT_HANDLE_NONE;
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

static void *central_create(Engine *e, const void *params)
{
  const CsConfig *cfg = cs_engine_config(e);
  Central *c = g_new0(Central, 1);
  c->e = e;
  c->cfg = cfg;
  c->p = params;
  c->n_models = cfg->n_clients;
  c->models = g_new0(ModelQ, MAX(c->n_models, 1));
  for (int m = 0; m < c->n_models; m++) {
    ModelQ *q = &c->models[m];
    q->slo_ns = cfg->clients[m].slo_ns;
    /* The largest batch that could meet the SLO if dispatched on arrival. */
    q->target = 1;
    while (q->target < c->p->max_batch &&
           delay_ns(c, m, q->target + 1) + lat(c, m, q->target + 1) +
               resp_ns(c, m, q->target + 1) <= q->slo_ns)
      q->target++;
  }
  c->n_gpus = cfg->n_gpus;
  c->free_ns = g_new0(int64_t, MAX(c->n_gpus, 1));
  for (int g = 0; g < c->n_gpus; g++)
    c->free_ns[g] = INT64_MIN / 2; /* free since forever */
  c->timer_gpu = -1;
  return c;
}

static void central_destroy(void *state)
{
  Central *c = state;
  for (int m = 0; m < c->n_models; m++) {
    g_assert(c->models[m].len == 0); /* every request was sent or dropped */
    g_free(c->models[m].buf);
    budget_clear(&c->models[m].budget);
  }
  g_free(c->models);
  g_free(c->free_ns);
  g_free(c);
}

static void central_on_request(void *state, int m, const Req *r)
{
  Central *c = state;
  q_push(&c->models[m], r);
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
    c->models[i].drop_timer = CS_EVENT_HANDLE_NONE;
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
    .free_params = central_free,                                                              \
    .check = central_check,                                                                   \
    .create = central_create,                                                                 \
    .destroy = central_destroy,                                                               \
    .on_request = central_on_request,                                                         \
    .on_timer = central_on_timer,                                                             \
    .describe = central_describe,                                                             \
    .fill_defaults = central_fill_defaults,                                                   \
  }

CENTRAL_POLICY(cs_dispatch_symphony, "symphony",
               "Symphony deferred batch scheduling: dispatch at frontrun d - l(|B|+1)",
               parse_deferred);
CENTRAL_POLICY(cs_dispatch_eager, "eager",
               "centralized, dispatch as soon as a GPU is free (Symphony's eager baseline)",
               parse_eager);
CENTRAL_POLICY(cs_dispatch_timeout, "timeout",
               "centralized, dispatch at first arrival + timeout_ms (Symphony's baseline)",
               parse_timeout);
