/* Nexus (Shen et al., SOSP'19) as Symphony's section 2 describes it and its
 * authors' emulator (nexuslb's run_nexus) runs it: a global scheduler that
 * plans (and, with replan, re-plans every epoch), frontends that route each
 * request to a backend of its model, and backends (one per GPU) that run
 * their models round-robin.
 *
 * Scheduler. The plan (nexus_plan.c: squishy bin packing) gives each GPU its
 * models and their batch sizes. At t = 0 it is the declared mix scaled to
 * what the whole cluster holds ("whole_cluster", the default: the static
 * schedule Symphony's experiments ran), the plan at the clients' declared
 * rates ("declared", as if an earlier epoch had seen them) or one GPU per
 * model ("one_gpu_per_model", nexuslb's start). With replan (off by
 * default) it is recomputed at every multiple of epoch_s from the arrivals
 * of the epoch just ended (their count / epoch_s, at least 0.1 req/s:
 * nexuslb's floor, so a quiet model keeps a backend) and its GPUs are
 * chosen to keep models where they were. Epochs are applied when the first
 * event at or after their time is handled: only routing and the backends'
 * batches depend on the plan, and both read it in events, so this is the
 * same as a timer at the epoch's time (which would keep an ended run
 * alive).
 *
 * Frontends. A request goes to one of `frontends` frontends uniformly at
 * random (the policy's stream, cs_engine_policy_random); each frontend routes it by
 * deficit round robin over its model's backends (in GPU order), weighted
 * by their planned throughput for the model, with a state of its own
 * (nexuslb's GetBackendDeficitRoundRobin: a backend with at least one
 * credit takes the request and pays one; else it gains its quantum, its
 * throughput / the smallest, and the turn passes on). Route changes keep the
 * credits of backends that stay. The request reaches the backend's queue
 * after network(input_bytes); a model without a backend has its requests
 * counted unserved.
 *
 * Backends (nexuslb's fake backend). A pass visits the models in index
 * order; for one with queued requests it takes e = min(batch, queue)
 * requests in deadline order (deadline = send + SLO), dropping each whose
 * deadline is before now + l(e) and shrinking e when the queue can no
 * longer fill it; a non-empty batch runs at once (its inputs are at the
 * GPU already), and the pass goes on when it finishes. After a pass the
 * backend waits poll_us less the time it executed in the pass (nexuslb's
 * 50 us cycle), so an idle backend polls every poll_us: without a timer per
 * tick, a request reaching an idle backend starts a pass at the first tick
 * at or after its arrival. Requests queued on a GPU the new plan takes
 * their model from stay and are served there with the batch it had
 * (nexuslb's backends keep a model's queue and batch when the plan drops
 * it). */
#include <math.h>
#include <string.h>

#include "nexus.h"

enum { TIMER_TRANSIT = 0u << 30, TIMER_BACKEND = 1u << 30 };
#define TIMER_KIND(a) ((a) & (3u << 30))
#define TIMER_INDEX(a) ((int)((a) & ~(3u << 30)))

typedef struct {
  GArray *q;   /* CsRequest in arrival order from head: deadline order, one SLO per model */
  guint head;
} Fifo;

typedef struct {
  CsRequest r;
  int gpu;
} Transit;

typedef enum { BACKEND_IDLE, BACKEND_SLEEP, BACKEND_BUSY } BackendState;

typedef struct {
  BackendState state;
  int next_model;        /* the pass's position */
  int64_t pass_exec_ns;  /* time executed in this pass */
  int64_t idle_since_ns; /* BACKEND_IDLE: end of its last (empty) pass; ticks follow */
  CsTimer timer;
  int *batch;            /* per model: its batch here (0: never planned here) */
  Fifo *queues;          /* per model */
} Backend;

typedef struct {
  int n;
  int *gpus;             /* in GPU order */
  double *weight;        /* planned throughput, req/s */
} Route;

typedef struct {
  double *credit;        /* per backend of the route */
  int cur;
} Drr;

typedef struct {
  CsEngine *e;
  const CsWorld *w;
  const NexusParams *p;
  int n_models, n_gpus, n_types;
  int *gpu_type, *rep, *type_gpus;
  int64_t *slo_ns, *net_ns;
  NexusCosts costs;
  NexusPlan *plan, *next;
  Route *routes;         /* per model */
  Drr *drr;              /* [frontend x n_models + model] */
  double *scratch;
  Backend *backends;
  GArray **transit;      /* per model: Transit in flight, FIFO (one delay per model) */
  guint *transit_head;
  int64_t *arrivals;     /* per model, in the current epoch */
  double *rates;
  int64_t epoch_end_ns;
} Nexus;

/* ---- queues ---------------------------------------------------------------------- */

static inline guint fifo_len(const Fifo *f)
{
  return f->q->len - f->head;
}

static inline const CsRequest *fifo_front(const Fifo *f)
{
  return &g_array_index(f->q, CsRequest, f->head);
}

static void fifo_pop(Fifo *f)
{
  f->head++;
  if (f->head == f->q->len) {
    g_array_set_size(f->q, 0);
    f->head = 0;
  } else if (f->head >= 1024 && f->head * 2 >= f->q->len) {
    g_array_remove_range(f->q, 0, f->head);
    f->head = 0;
  }
}

/* ---- the plan ---------------------------------------------------------------------- */

static int64_t engine_lat(void *ctx, int m, int t, int b)
{
  Nexus *n = ctx;
  return cs_engine_exec_ns(n->e, m, n->rep[t], b);
}

/* Routes of model m from the plan; every frontend keeps the credits of the
 * backends that stay, a new backend starts with its quantum, and the turn
 * stays at its index modulo the new count (nexuslb's UpdateRoute). */
static void update_route(Nexus *n, int m)
{
  Route *old = &n->routes[m];
  int cnt = 0;
  int *gpus = g_new(int, MAX(n->n_gpus, 1));
  double *weight = g_new(double, MAX(n->n_gpus, 1));
  for (int g = 0; g < n->n_gpus; g++)
    for (int i = 0; i < n->plan->n_bins; i++) {
      const NexusBin *bin = &n->plan->bins[i];
      if (bin->gpu != g)
        continue;
      for (int j = 0; j < bin->n_sessions; j++)
        if (bin->sessions[j].model == m) {
          gpus[cnt] = g;
          weight[cnt++] = bin->sessions[j].throughput_rps;
        }
    }
  double least = INFINITY;
  for (int i = 0; i < cnt; i++)
    least = MIN(least, weight[i]);
  for (int f = 0; f < n->p->frontends; f++) {
    Drr *d = &n->drr[f * n->n_models + m];
    for (int i = 0; i < cnt; i++) {
      n->scratch[i] = weight[i] / least;
      for (int j = 0; j < old->n; j++)
        if (old->gpus[j] == gpus[i])
          n->scratch[i] = d->credit[j];
    }
    memcpy(d->credit, n->scratch, sizeof(double) * cnt);
    d->cur = cnt > 0 ? d->cur % cnt : 0;
  }
  g_free(old->gpus);
  g_free(old->weight);
  *old = (Route){ .n = cnt, .gpus = gpus, .weight = weight };
}

static void apply_plan(Nexus *n)
{
  for (int i = 0; i < n->plan->n_bins; i++) {
    const NexusBin *bin = &n->plan->bins[i];
    for (int j = 0; j < bin->n_sessions; j++)
      n->backends[bin->gpu].batch[bin->sessions[j].model] = bin->sessions[j].batch;
  }
  for (int m = 0; m < n->n_models; m++)
    update_route(n, m);
}

/* Closes every epoch that ended by now: re-plans from its arrivals. */
static void catch_up(Nexus *n, int64_t now)
{
  while (now >= n->epoch_end_ns) {
    for (int m = 0; m < n->n_models; m++) {
      n->rates[m] = MAX(n->arrivals[m] * 1e9 / (double)n->p->epoch_ns, NEXUS_MIN_RATE_RPS);
      n->arrivals[m] = 0;
    }
    cs_nexus_squishy(&n->costs, n->rates, n->next);
    cs_nexus_assign(n->next, n->plan, n->gpu_type, n->n_gpus);
    NexusPlan *t = n->plan;
    n->plan = n->next;
    n->next = t;
    apply_plan(n);
    n->epoch_end_ns += n->p->epoch_ns;
  }
}

/* ---- backends ---------------------------------------------------------------------- */

/* nexuslb's sliding-window batch of model m on GPU g at now: returns the
 * time it runs (0 when every candidate was dropped or none was queued). */
static int64_t take_batch(Nexus *n, int g, int m, int64_t now)
{
  Backend *be = &n->backends[g];
  Fifo *f = &be->queues[m];
  int e = MIN(be->batch[m], (int)fifo_len(f));
  if (e <= 0)
    return 0;
  int64_t finish = now + cs_engine_exec_ns(n->e, m, g, e);
  CsBatch *b = NULL;
  int taken = 0;
  while (taken < e && fifo_len(f) > 0) {
    const CsRequest *r = fifo_front(f);
    if (r->send_ns + n->slo_ns[m] < finish) {
      cs_engine_drop(n->e, m, r);
    } else {
      if (!b)
        b = cs_engine_batch_new(n->e, m, e);
      cs_batch_add(n->e, b, r);
      taken++;
    }
    fifo_pop(f);
    /* The queue can no longer fill e: aim at what it can, which finishes
     * sooner (nexuslb re-tests the requests after, not those dropped). */
    int can = taken + (int)fifo_len(f);
    if (e > can) {
      e = can;
      if (e > 0)
        finish = now + cs_engine_exec_ns(n->e, m, g, e);
    }
  }
  if (!b)
    return 0;
  cs_batch_set_inputs_at_node(b);
  cs_engine_send_gpu(n->e, b, g);
  return cs_engine_exec_ns(n->e, m, g, taken);
}

/* Goes on with GPU g's pass at now, until a batch runs or the backend
 * waits. */
static void backend_run(Nexus *n, int g, int64_t now)
{
  Backend *be = &n->backends[g];
  for (;;) {
    while (be->next_model < n->n_models) {
      int64_t ran = take_batch(n, g, be->next_model++, now);
      if (ran > 0) {
        be->pass_exec_ns += ran;
        be->state = BACKEND_BUSY;
        return;
      }
    }
    gboolean executed = be->pass_exec_ns > 0;
    int64_t wait = MAX(n->p->poll_ns - be->pass_exec_ns, 0);
    be->next_model = 0;
    be->pass_exec_ns = 0;
    if (!executed) {
      /* Empty pass: the queues are empty (a queued request is taken or
       * dropped); the next ticks are idle_since + k poll. */
      be->state = BACKEND_IDLE;
      be->idle_since_ns = now;
      return;
    }
    if (wait > 0) {
      be->state = BACKEND_SLEEP;
      be->timer = cs_engine_timer(n->e, now + wait, TIMER_BACKEND | (uint32_t)g);
      return;
    }
  }
}

/* A request reaches GPU g's queue. */
static void deliver(Nexus *n, int g, int m, const CsRequest *r, int64_t now)
{
  Backend *be = &n->backends[g];
  g_array_append_vals(be->queues[m].q, r, 1);
  if (be->state != BACKEND_IDLE)
    return;
  /* The first poll tick at or after now (at least one poll after the empty
   * pass, which saw nothing). */
  int64_t since = now - be->idle_since_ns;
  int64_t k = MAX((since + n->p->poll_ns - 1) / n->p->poll_ns, 1);
  be->state = BACKEND_SLEEP;
  be->timer = cs_engine_timer(n->e, be->idle_since_ns + k * n->p->poll_ns,
                              TIMER_BACKEND | (uint32_t)g);
}

/* ---- frontends ---------------------------------------------------------------------- */

static int drr_pick(Nexus *n, int f, int m)
{
  const Route *rt = &n->routes[m];
  Drr *d = &n->drr[f * n->n_models + m];
  double least = INFINITY;
  for (int i = 0; i < rt->n; i++)
    least = MIN(least, rt->weight[i]);
  /* Every quantum is at least 1, so a backend pays within n + 1 turns. */
  for (int i = 0; i <= rt->n; i++) {
    if (d->credit[d->cur] >= 1.0 - 1e-6) {
      d->credit[d->cur] -= 1.0;
      return rt->gpus[d->cur];
    }
    d->credit[d->cur] += rt->weight[d->cur] / least;
    d->cur = (d->cur + 1) % rt->n;
  }
  g_assert_not_reached();
  return rt->gpus[d->cur];
}

/* ---- vtable ------------------------------------------------------------------------ */

static void *nexus_create(CsEngine *e, const void *params, void *user_data)
{
  (void)user_data;
  const CsWorld *w = cs_engine_world(e);
  Nexus *n = g_new0(Nexus, 1);
  n->e = e;
  n->w = w;
  n->p = params;
  n->n_models = cs_world_n_models(w);
  n->n_gpus = cs_world_n_gpus(w);
  int nm = MAX(n->n_models, 1), ng = MAX(n->n_gpus, 1);
  n->gpu_type = g_new0(int, ng);
  n->rep = g_new0(int, ng);
  n->type_gpus = g_new0(int, ng);
  n->n_types = cs_nexus_gpu_types(w, n->gpu_type, n->rep, n->type_gpus);
  n->slo_ns = g_new0(int64_t, nm);
  n->net_ns = g_new0(int64_t, nm);
  n->rates = g_new0(double, nm);
  n->arrivals = g_new0(int64_t, nm);
  n->transit = g_new0(GArray *, nm);
  n->transit_head = g_new0(guint, nm);
  for (int m = 0; m < n->n_models; m++) {
    n->slo_ns[m] = cs_world_slo_ns(w, m);
    n->net_ns[m] = cs_world_network_ns(w, cs_world_input_bytes(w, m));
    n->rates[m] = MAX(cs_world_rate_rps(w, m), NEXUS_MIN_RATE_RPS);
    n->transit[m] = g_array_new(FALSE, FALSE, sizeof(Transit));
  }
  n->costs = (NexusCosts){ .lat_ns = engine_lat, .ctx = n, .n_models = n->n_models,
                           .n_types = n->n_types, .type_gpus = n->type_gpus,
                           .slo_ns = n->slo_ns, .reserve_ns = n->p->reserve_ns };
  n->backends = g_new0(Backend, ng);
  for (int g = 0; g < n->n_gpus; g++) {
    n->backends[g].batch = g_new0(int, nm);
    n->backends[g].queues = g_new0(Fifo, nm);
    for (int m = 0; m < n->n_models; m++)
      n->backends[g].queues[m].q = g_array_new(FALSE, FALSE, sizeof(CsRequest));
    /* Idle from the start: its first tick is at poll_us. */
    n->backends[g].state = BACKEND_IDLE;
  }
  n->routes = g_new0(Route, nm);
  n->drr = g_new0(Drr, (gsize)n->p->frontends * nm);
  for (int i = 0; i < n->p->frontends * n->n_models; i++)
    n->drr[i].credit = g_new0(double, ng);
  n->scratch = g_new0(double, ng);
  n->plan = cs_nexus_plan_new(n->n_models, n->n_gpus);
  n->next = cs_nexus_plan_new(n->n_models, n->n_gpus);
  if (n->p->initial == INITIAL_DECLARED)
    cs_nexus_squishy(&n->costs, n->rates, n->plan);
  else if (n->p->initial == INITIAL_ONE_PER_MODEL)
    cs_nexus_one_per_model(&n->costs, n->plan);
  else
    cs_nexus_whole_cluster(&n->costs, n->rates, n->plan);
  cs_nexus_assign(n->plan, NULL, n->gpu_type, n->n_gpus);
  apply_plan(n);
  /* Without re-planning no epoch ever ends. */
  n->epoch_end_ns = n->p->replan ? n->p->epoch_ns : INT64_MAX;
  return n;
}

static void nexus_destroy(void *state)
{
  Nexus *n = state;
  for (int g = 0; g < n->n_gpus; g++) {
    for (int m = 0; m < n->n_models; m++)
      g_array_unref(n->backends[g].queues[m].q);
    g_free(n->backends[g].queues);
    g_free(n->backends[g].batch);
  }
  for (int m = 0; m < n->n_models; m++) {
    g_array_unref(n->transit[m]);
    g_free(n->routes[m].gpus);
    g_free(n->routes[m].weight);
  }
  for (int i = 0; i < n->p->frontends * n->n_models; i++)
    g_free(n->drr[i].credit);
  cs_nexus_plan_free(n->plan);
  cs_nexus_plan_free(n->next);
  g_free(n->backends);
  g_free(n->routes);
  g_free(n->drr);
  g_free(n->scratch);
  g_free(n->transit);
  g_free(n->transit_head);
  g_free(n->arrivals);
  g_free(n->rates);
  g_free(n->slo_ns);
  g_free(n->net_ns);
  g_free(n->gpu_type);
  g_free(n->rep);
  g_free(n->type_gpus);
  g_free(n);
}

/* A frontend uniformly at random, from the policy's stream ("dispatch/nexus"
 * of the run's seed, which nothing else draws from). Exactly uniform: a
 * 64-bit draw below 2^64 mod frontends is drawn again (for any frontend
 * count here, with probability below 2^-32), so the rest are a whole number
 * of rounds of the frontends. */
static int pick_frontend(Nexus *n)
{
  uint64_t k = (uint64_t)n->p->frontends;
  uint64_t reject_below = (0 - k) % k; /* 2^64 mod k */
  uint64_t x;
  do
    x = cs_engine_policy_random(n->e);
  while (x < reject_below);
  return (int)(x % k);
}

static void nexus_on_request(void *state, int m, const CsRequest *r)
{
  Nexus *n = state;
  int64_t now = cs_engine_now(n->e);
  catch_up(n, now);
  n->arrivals[m]++;
  if (n->routes[m].n == 0) {
    cs_engine_unserved(n->e, m, r);
    return;
  }
  int f = n->p->frontends > 1 ? pick_frontend(n) : 0;
  int g = drr_pick(n, f, m);
  if (n->net_ns[m] == 0) {
    deliver(n, g, m, r, now);
    return;
  }
  Transit t = { .r = *r, .gpu = g };
  g_array_append_val(n->transit[m], t);
  cs_engine_timer(n->e, now + n->net_ns[m], TIMER_TRANSIT | (uint32_t)m);
}

static void nexus_on_timer(void *state, uint32_t arg)
{
  Nexus *n = state;
  int64_t now = cs_engine_now(n->e);
  catch_up(n, now);
  int i = TIMER_INDEX(arg);
  if (TIMER_KIND(arg) == TIMER_TRANSIT) {
    /* One delay per model: transits of a model land in the order sent. */
    GArray *tr = n->transit[i];
    Transit t = g_array_index(tr, Transit, n->transit_head[i]);
    /* Under steady load the FIFO is never empty: compact it now and then. */
    if (++n->transit_head[i] == tr->len) {
      g_array_set_size(tr, 0);
      n->transit_head[i] = 0;
    } else if (n->transit_head[i] >= 1024 && n->transit_head[i] * 2 >= tr->len) {
      g_array_remove_range(tr, 0, n->transit_head[i]);
      n->transit_head[i] = 0;
    }
    deliver(n, t.gpu, i, &t.r, now);
    return;
  }
  Backend *be = &n->backends[i];
  be->timer = CS_TIMER_NONE;
  be->next_model = 0;
  be->pass_exec_ns = 0;
  backend_run(n, i, now);
}

static void nexus_on_batch_finish(void *state, const CsBatchEvent *b)
{
  Nexus *n = state;
  int64_t now = cs_engine_now(n->e);
  catch_up(n, now);
  backend_run(n, b->gpu, now);
}

const CsDispatchPolicy cs_dispatch_nexus = {
  .name = "nexus",
  .description = "Nexus: squishy bin packing every epoch, frontends routing by weighted deficit "
                 "round robin, backends running their models round-robin with sliding-window "
                 "drops",
  .uses_placement = FALSE,
  .parse = cs_nexus_parse,
  .free_params = cs_nexus_free_params,
  .check = cs_nexus_check,
  .create = nexus_create,
  .destroy = nexus_destroy,
  .on_request = nexus_on_request,
  .on_timer = nexus_on_timer,
  .on_batch_finish = nexus_on_batch_finish,
  .describe = cs_nexus_describe,
  .write_defaults = cs_nexus_write_defaults,
};
