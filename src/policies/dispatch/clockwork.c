/* Clockwork's controller scheduler (Gujarati et al., OSDI'20), INFER4, "the
 * Clockwork Scheduler" of its code, with every model loaded on every GPU.
 *
 * Requests: per model a FIFO in arrival order (one SLO per model, so also in
 * deadline order), ids contiguous from the front. A request's scheduling
 * deadline is D = send + max(SLO - buffer, schedule_ahead + buffer).
 * Candidates ("strategies"): on arrival, one per supported batch size b and
 * per GPU g, with priority D - l_g(b), the latest start that still meets D;
 * each GPU keeps its own min-heap of the strategies of every model. A
 * strategy is void once its request left the queue (batched or dropped), so
 * batching a request voids its candidates on every GPU.
 * A GPU schedules (an arrival, or its window reopening): while its committed
 * work ends before now + schedule_ahead, take its most urgent strategy S
 * (request r, size b), plan it at t = max(end of committed work, now +
 * future) and try to form a batch:
 *  - fail when S is void or D_S <= t + l(b);
 *  - drop from the queue's front the requests with D < t (they cannot even
 *    start in time);
 *  - fail when fewer than b requests are queued; avail = the requests from
 *    r to the newest; when avail < b, count back from the newest while D <= t
 *    + l(b) and, if b are found, S takes the b-th from the back as its
 *    request; else fail;
 *  - upgrade b to the largest supported size <= avail; if that one would
 *    finish after D_S, fail (the code gives up rather than keep b);
 *  - drop front requests other than r whose D < t + l(b) ("skipped");
 *  - send the b requests at the front, to start at t.
 * The strategy is popped whether or not it made a batch. Nothing is
 * preempted; the batch is sent at once and starts at t (a batch planned
 * ahead waits at its GPU). A request still queued at its D gets a timeout
 * (dropped then).
 * GPUs are visited from a rotating index (Clockwork's infer threads poll
 * them round-robin); each GPU's window reopens at end - schedule_ahead (a
 * timer: the controller polls continuously). */
#include <math.h>
#include <string.h>

#include "clustersim/dispatch.h"

typedef struct {
  int64_t schedule_ahead_ns, buffer_ns, future_ns, max_exec_ns;
  int max_batch;
  gboolean powers_of_two; /* Clockwork's TVM builds; Symphony's authors allowed any size */
} ClockworkParams;

typedef struct {
  int64_t priority, deadline;
  uint64_t request;        /* per-model request id */
  int model, b;
  uint64_t seq;            /* push order: ties in priority keep it */
} Strategy;

typedef struct {
  GArray *q;               /* CsRequest, arrival order, from index head */
  guint head;
  uint64_t front_id;       /* id of q[head]; ids are contiguous */
  int64_t exec_slo_ns;
  int *sizes;              /* supported batch sizes, ascending */
  int n_sizes;
  CsTimer timeout_timer;
  uint64_t timeout_for;    /* the request id the timer is armed for */
} ModelQ;

typedef struct {
  GArray *heap;            /* Strategy, min-heap on (priority, seq) */
  int64_t end_ns;          /* when its committed work ends */
  CsTimer wake;
} GpuQ;

typedef struct {
  CsEngine *e;
  const ClockworkParams *p;
  ModelQ *models;
  int n_models;
  GpuQ *gpus;
  int n_gpus;
  int next_gpu;            /* round-robin start of the next visit */
  uint64_t seq;
} Clockwork;

enum { TIMER_TIMEOUT = 0u << 31, TIMER_WAKE = 1u << 31 };

/* ---- strategy heaps --------------------------------------------------------------- */

static inline gboolean before(const Strategy *a, const Strategy *b)
{
  return a->priority < b->priority || (a->priority == b->priority && a->seq < b->seq);
}

static void heap_push(GArray *h, const Strategy *s)
{
  g_array_append_vals(h, s, 1);
  Strategy *a = (Strategy *)h->data;
  guint i = h->len - 1;
  while (i > 0) {
    guint parent = (i - 1) / 2;
    if (!before(&a[i], &a[parent]))
      break;
    Strategy t = a[i];
    a[i] = a[parent];
    a[parent] = t;
    i = parent;
  }
}

static void heap_pop(GArray *h)
{
  Strategy *a = (Strategy *)h->data;
  a[0] = a[h->len - 1];
  g_array_set_size(h, h->len - 1);
  guint n = h->len, i = 0;
  for (;;) {
    guint l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && before(&a[l], &a[m]))
      m = l;
    if (r < n && before(&a[r], &a[m]))
      m = r;
    if (m == i)
      break;
    Strategy t = a[i];
    a[i] = a[m];
    a[m] = t;
    i = m;
  }
}

/* ---- queues ------------------------------------------------------------------------ */

static inline guint q_len(const ModelQ *q)
{
  return q->q->len - q->head;
}

static inline const CsRequest *q_at(const ModelQ *q, guint i)
{
  return &g_array_index(q->q, CsRequest, q->head + i);
}

static inline int64_t q_deadline(const ModelQ *q, guint i)
{
  return q_at(q, i)->send_ns + q->exec_slo_ns;
}

static void q_pop(ModelQ *q)
{
  q->head++;
  q->front_id++;
  if (q->head >= 1024 && q->head * 2 >= q->q->len) {
    g_array_remove_range(q->q, 0, q->head);
    q->head = 0;
  }
}

static void drop_front(Clockwork *c, int m)
{
  cs_engine_drop(c->e, m, q_at(&c->models[m], 0));
  q_pop(&c->models[m]);
}

/* The queue position of the request with per-model id, or -1 when it left. */
static inline int64_t q_pos(const ModelQ *q, uint64_t id)
{
  return id >= q->front_id && id < q->front_id + q_len(q) ? (int64_t)(id - q->front_id) : -1;
}

/* The largest supported size <= n (at least the smallest). */
static int batch_lookup(const ModelQ *q, int64_t n)
{
  int best = q->sizes[0];
  for (int i = 0; i < q->n_sizes && q->sizes[i] <= n; i++)
    best = q->sizes[i];
  return best;
}

static void arm_timeout(Clockwork *c, int m);
static void arm_wake(Clockwork *c, int g);

/* ---- the scheduler ---------------------------------------------------------------- */

/* Tries to form a batch from strategy s planned at t; returns its size (0:
 * failed). On success the batch's requests are the first b of the queue. */
static int try_dequeue(Clockwork *c, Strategy *s, int g, int64_t t)
{
  ModelQ *q = &c->models[s->model];
  int b = s->b;
  int64_t done = t + cs_engine_exec_ns(c->e, s->model, g, b);
  if (q_pos(q, s->request) < 0 || s->deadline <= done)
    return 0;
  /* Requests that cannot even start by their deadline. */
  while (q_len(q) > 0 && q_deadline(q, 0) < t)
    drop_front(c, s->model);
  if ((int64_t)q_len(q) < b)
    return 0;
  int64_t pos = q_pos(q, s->request);
  if (pos < 0)
    return 0;
  int64_t avail = (int64_t)q_len(q) - pos;
  if (avail < b) {
    /* The code's fallback: from the newest back while deadlines fit. With
     * one SLO per model the newest has the latest deadline, so it rarely
     * finds b. */
    int found = 0;
    int64_t i = (int64_t)q_len(q) - 1;
    for (; i >= 0 && q_deadline(q, (guint)i) <= done; i--)
      if (++found == b)
        break;
    if (found < b)
      return 0;
    s->request = q->front_id + (uint64_t)i;
    s->deadline = q_deadline(q, (guint)i);
    pos = i;
    avail = (int64_t)q_len(q) - pos;
  }
  int up = batch_lookup(q, avail);
  if (up > b) {
    int64_t up_done = t + cs_engine_exec_ns(c->e, s->model, g, up);
    if (up_done > s->deadline)
      return 0;
    b = up;
    done = up_done;
  }
  /* Older requests that would finish late are sacrificed for S's batch. */
  while (q_len(q) > 0 && q->front_id != s->request && q_deadline(q, 0) < done)
    drop_front(c, s->model);
  if ((int64_t)q_len(q) < b)
    return 0;
  return b;
}

static void send_batch(Clockwork *c, int m, int g, int b, int64_t t)
{
  ModelQ *q = &c->models[m];
  CsBatch *batch = cs_engine_batch_new(c->e, m, b);
  for (int i = 0; i < b; i++) {
    cs_batch_add(c->e, batch, q_at(q, 0));
    q_pop(q);
  }
  cs_batch_set_not_before(batch, t);
  c->gpus[g].end_ns = t + cs_engine_exec_ns(c->e, m, g, b);
  cs_engine_send_gpu(c->e, batch, g);
}

/* schedule_infer for GPU g. */
static void schedule_gpu(Clockwork *c, int g, int64_t now)
{
  GpuQ *gq = &c->gpus[g];
  GArray *h = gq->heap;
  for (;;) {
    /* Lazy purge: void strategies and those past their deadline. */
    while (h->len > 0) {
      Strategy *top = &g_array_index(h, Strategy, 0);
      if (q_pos(&c->models[top->model], top->request) >= 0 && top->deadline > now)
        break;
      heap_pop(h);
    }
    int64_t t = MAX(gq->end_ns, now + c->p->future_ns);
    if (h->len == 0 || t >= now + c->p->schedule_ahead_ns)
      break;
    Strategy s = g_array_index(h, Strategy, 0);
    heap_pop(h);
    int b = try_dequeue(c, &s, g, t);
    if (b > 0)
      send_batch(c, s.model, g, b, t);
    arm_timeout(c, s.model);
  }
  arm_wake(c, g);
}

static void schedule_all(Clockwork *c, int64_t now)
{
  for (int k = 0; k < c->n_gpus; k++)
    schedule_gpu(c, (c->next_gpu + k) % c->n_gpus, now);
  c->next_gpu = (c->next_gpu + 1) % MAX(c->n_gpus, 1);
}

/* The window of GPU g reopens when its committed work ends within
 * schedule_ahead; nothing to do while its heap is empty (an arrival will
 * visit it). */
static void arm_wake(Clockwork *c, int g)
{
  GpuQ *gq = &c->gpus[g];
  cs_engine_cancel(c->e, gq->wake);
  gq->wake = CS_TIMER_NONE;
  if (gq->heap->len == 0)
    return;
  int64_t now = cs_engine_now(c->e);
  int64_t at = gq->end_ns - c->p->schedule_ahead_ns + 1;
  if (at <= now)
    return; /* open now: nothing it could take (schedule_gpu just ran) */
  gq->wake = cs_engine_timer(c->e, at, TIMER_WAKE | (uint32_t)g);
}

/* A request still queued at its deadline gets a timeout (Clockwork's
 * admission thread); the front has the earliest deadline. */
static void arm_timeout(Clockwork *c, int m)
{
  ModelQ *q = &c->models[m];
  if (q->timeout_timer != CS_TIMER_NONE && q_len(q) > 0 && q->timeout_for == q->front_id)
    return; /* armed for the same front request */
  cs_engine_cancel(c->e, q->timeout_timer);
  q->timeout_timer = CS_TIMER_NONE;
  if (q_len(q) > 0) {
    q->timeout_for = q->front_id;
    q->timeout_timer =
      cs_engine_timer(c->e, MAX(cs_engine_now(c->e), q_deadline(q, 0)), TIMER_TIMEOUT | (uint32_t)m);
  }
}

/* ---- vtable ------------------------------------------------------------------------- */

static void *clockwork_parse(CsParams *params, void *user_data, GError **error)
{
  (void)user_data;
  static const char *const keys[] = { "policy",      "schedule_ahead_ms", "buffer_ms", "future_ms",
                                      "max_exec_ms", "max_batch",         "batch_sizes", NULL };
  static const char *const size_rules[] = { "all", "powers_of_two", NULL };
  /* Defaults of Clockwork's controller (INFER4): 10 ms ahead, deadlines 5 ms
   * early, plans at least 1 ms ahead, batches up to 16 running at most
   * 250 ms; any batch size, as Symphony's authors changed it for their
   * comparison (Clockwork's TVM builds only powers of two). */
  double ahead_ms = 10, buffer_ms = 5, future_ms = 1, max_exec_ms = 250;
  int max_batch = 16, rule = 0;
  cs_params_doc(params, "schedule_ahead_ms", "a GPU takes work while its committed work ends before now + this");
  cs_params_doc(params, "buffer_ms", "scheduling deadline: send + max(SLO - buffer_ms, schedule_ahead_ms + buffer_ms)");
  cs_params_doc(params, "future_ms", "a batch is planned at least this far ahead");
  cs_params_doc(params, "max_exec_ms", "batch sizes above 1 running longer than this on some GPU are left out");
  cs_params_doc(params, "max_batch", "largest batch size (INFER4's 16)");
  cs_params_doc(params, "batch_sizes", "all: every size from 1 to max_batch; powers_of_two: Clockwork's TVM builds");
  /* Each field is read on its own, so that their problems are listed
   * together; an unknown field stops the parse (its fix changes the rest). */
  CsErrorList *problems = cs_error_list_new();
  if (cs_params_check_keys(params, keys, cs_error_list_slot(problems))) {
    cs_params_double(params, "schedule_ahead_ms", FALSE, 0.0, 1e6, &ahead_ms,
                     cs_error_list_slot(problems));
    cs_params_double(params, "buffer_ms", FALSE, 0.0, 1e6, &buffer_ms,
                     cs_error_list_slot(problems));
    cs_params_double(params, "future_ms", FALSE, 0.0, 1e6, &future_ms,
                     cs_error_list_slot(problems));
    cs_params_double(params, "max_exec_ms", FALSE, 0.0, 1e9, &max_exec_ms,
                     cs_error_list_slot(problems));
    cs_params_int(params, "max_batch", FALSE, 1, 1 << 16, &max_batch, cs_error_list_slot(problems));
    cs_params_choice(params, "batch_sizes", FALSE, size_rules, &rule, cs_error_list_slot(problems));
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params),
                            error))
    return NULL;
  ClockworkParams *p = g_new0(ClockworkParams, 1);
  p->schedule_ahead_ns = llround(ahead_ms * 1e6);
  p->buffer_ns = llround(buffer_ms * 1e6);
  p->future_ns = llround(future_ms * 1e6);
  p->max_exec_ns = llround(max_exec_ms * 1e6);
  p->max_batch = max_batch;
  p->powers_of_two = rule == 1;
  return p;
}

static void clockwork_write(const void *params, CsParamsWriter *out)
{
  const ClockworkParams *p = params;
  cs_params_write_double(out, "schedule_ahead_ms", p->schedule_ahead_ns / 1e6);
  cs_params_write_double(out, "buffer_ms", p->buffer_ns / 1e6);
  cs_params_write_double(out, "future_ms", p->future_ns / 1e6);
  cs_params_write_double(out, "max_exec_ms", p->max_exec_ns / 1e6);
  cs_params_write_int(out, "max_batch", p->max_batch);
  cs_params_write_string(out, "batch_sizes", p->powers_of_two ? "powers_of_two" : "all");
}

static void *clockwork_create(CsEngine *e, const void *params, void *user_data)
{
  (void)user_data;
  const CsWorld *w = cs_engine_world(e);
  Clockwork *c = g_new0(Clockwork, 1);
  c->e = e;
  c->p = params;
  c->n_models = cs_world_n_models(w);
  c->n_gpus = cs_world_n_gpus(w);
  c->models = g_new0(ModelQ, MAX(c->n_models, 1));
  for (int m = 0; m < c->n_models; m++) {
    ModelQ *q = &c->models[m];
    q->q = g_array_new(FALSE, FALSE, sizeof(CsRequest));
    int64_t slo = cs_world_slo_ns(w, m);
    q->exec_slo_ns = MAX(slo - c->p->buffer_ns, c->p->schedule_ahead_ns + c->p->buffer_ns);
    /* Sizes above 1 whose run time exceeds max_exec on some GPU are left
     * out (Clockwork's Model constructor); 1 is always kept. */
    q->sizes = g_new(int, c->p->max_batch);
    for (int b = 1; b <= c->p->max_batch; b++) {
      if (c->p->powers_of_two && (b & (b - 1)) != 0)
        continue;
      gboolean fits = TRUE;
      for (int g = 0; g < c->n_gpus && b > 1; g++)
        fits = fits && cs_engine_exec_ns(e, m, g, b) <= c->p->max_exec_ns;
      if (fits)
        q->sizes[q->n_sizes++] = b;
    }
  }
  c->gpus = g_new0(GpuQ, MAX(c->n_gpus, 1));
  for (int g = 0; g < c->n_gpus; g++) {
    c->gpus[g].heap = g_array_new(FALSE, FALSE, sizeof(Strategy));
    c->gpus[g].end_ns = INT64_MIN / 2;
  }
  return c;
}

static void clockwork_destroy(void *state)
{
  Clockwork *c = state;
  for (int m = 0; m < c->n_models; m++) {
    g_array_unref(c->models[m].q);
    g_free(c->models[m].sizes);
  }
  for (int g = 0; g < c->n_gpus; g++)
    g_array_unref(c->gpus[g].heap);
  g_free(c->models);
  g_free(c->gpus);
  g_free(c);
}

static void clockwork_on_request(void *state, int m, const CsRequest *r)
{
  Clockwork *c = state;
  ModelQ *q = &c->models[m];
  uint64_t id = q->front_id + q_len(q);
  g_array_append_vals(q->q, r, 1);
  int64_t d = r->send_ns + q->exec_slo_ns;
  for (int g = 0; g < c->n_gpus; g++)
    for (int i = 0; i < q->n_sizes; i++) {
      Strategy s = { .priority = d - cs_engine_exec_ns(c->e, m, g, q->sizes[i]),
                     .deadline = d, .request = id, .model = m, .b = q->sizes[i],
                     .seq = c->seq++ };
      heap_push(c->gpus[g].heap, &s);
    }
  schedule_all(c, cs_engine_now(c->e));
  arm_timeout(c, m);
}

static void clockwork_on_timer(void *state, uint32_t arg)
{
  Clockwork *c = state;
  int i = (int)(arg & ~TIMER_WAKE);
  int64_t now = cs_engine_now(c->e);
  if (arg & TIMER_WAKE) {
    c->gpus[i].wake = CS_TIMER_NONE;
    schedule_gpu(c, i, now);
    return;
  }
  ModelQ *q = &c->models[i];
  q->timeout_timer = CS_TIMER_NONE;
  while (q_len(q) > 0 && q_deadline(q, 0) <= now)
    drop_front(c, i);
  arm_timeout(c, i);
}

const CsDispatchPolicy cs_dispatch_clockwork = {
  .name = "clockwork",
  .description = "Clockwork's controller (INFER4): per GPU the candidate of every request and "
                 "batch size with the earliest latest start, planned up to 10 ms ahead",
  .uses_placement = FALSE,
  .parse = clockwork_parse,
  .free_params = g_free,
  .create = clockwork_create,
  .destroy = clockwork_destroy,
  .on_request = clockwork_on_request,
  .on_timer = clockwork_on_timer,
  .describe = clockwork_write,
  .write_defaults = clockwork_write,
};
