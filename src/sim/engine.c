/* The core loop and the entities of the simulated pipeline; see engine.h.
 *
 * Hot-path notes: one event per arrival, then a constant number of events per
 * batch (timeout, node arrival, execution end, result arrival), so the cost per
 * request falls with the batch size. Requests travel inside their batch as
 * small records; batches come from a free list; latencies per batch size are
 * looked up in per-(model, GPU type) tables filled on first use. */
#include "engine.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <string.h>

#include "engine_internal.h"
#include "event_queue.h"
#include "gpu_exec.h"
#include "rng.h"
#include "stats.h"

enum {
  EV_ARRIVAL,       /* arg: client */
  EV_DISPATCH,      /* arg: the dispatch policy's own */
  EV_BATCH_AT_NODE, /* ptr: batch */
  EV_GPU_DONE,      /* arg: gpu; the GPU's earliest completion */
  EV_RESULT,        /* ptr: batch */
};

typedef struct {
  const CsClientConfig *cfg;
  gsl_rng *rng;
  int64_t index;          /* requests generated so far, warm-up included */
  int64_t last_ns;        /* time of the last arrival (random processes) */
  int64_t window_start_ns, window_end_ns; /* window_end_ns is 0 until known */
  gboolean done;
  /* metrics */
  int64_t generated, warmup, measured, completed, good, failed, dropped, unserved;
  int64_t late;           /* measured requests whose result arrived after the window */
  int64_t in_window, good_in_window; /* results (any request) arriving inside the window */
  int64_t last_out_ns;    /* when the last measured request completed, failed or was dropped */
  GArray *e2e;            /* int64 ns per completed measured request */
  GArray *router_wait;    /* int64 ns per completed measured request */
  /* Every other stage is shared by the requests of a batch: one weighted
   * sample per batch keeps memory per request small and the result exact. */
  GArray *batch_stage[CS_N_STAGES]; /* CsWeightedSample; [CS_STAGE_ROUTER_WAIT] unused */
  GArray *batch_sizes;    /* int64 count per size */
  int64_t batches, batched_requests;
} Client;

/* A worker: one model replica on one GPU (router dispatch), or one model on
 * any GPU (centralized dispatch). It runs one batch at a time. */
typedef struct {
  int model;
  double share;           /* MPS share in (0, 1], 0 = none */
  int interference_model; /* index in the interference tables, -1 if unknown */
  gboolean failed;        /* did not fit in memory: its batches fail */
  gboolean busy;
  int gpu;                /* its GPU (replica workers), or -1 */
  GArray *bins;           /* CsWorkerBin per time-series bin */
} Worker;

typedef struct {
  Batch *head, *tail;     /* FIFO of batches waiting at this GPU, arrival order */
  CsGpuExec *exec;        /* the execution model */
  CsEventHandle done;     /* the one pending completion event */
  Batch **running;        /* batches executing now */
  int n_running, cap_running;
  gboolean time_slice;    /* one batch at a time */
  int64_t busy_since;     /* start of the current busy period, -1 when idle */
  int64_t busy_ns;
  int64_t batches;
  int type;               /* index into Engine.gpu_types */
  int64_t last_bin;       /* last time-series bin counted as "used", -1 if none */
  GArray *bins;           /* CsGpuBin per time-series bin */
  int64_t last_change_ns; /* when the running set last changed */
  double sm_use;          /* SM use since then */
} Gpu;

struct Engine {
  const CsConfig *cfg;
  const CsRunOptions *opt;
  CsEventQueue *q;
  int64_t now;
  uint64_t next_id;
  Client *clients;
  Gpu *gpus;
  int n_gpu_types;
  const char **gpu_types;         /* distinct GPU type names */
  const CsModelProfile **profile; /* [model * n_gpu_types + type], NULL if none */
  GArray **latency;               /* [model * n_gpu_types + type]: int64 ns per batch size */
  Worker *workers;
  int n_workers;
  uint64_t next_job;
  Batch *free_batches;
  FILE *csv;
  uint64_t events;
  double expected_requests; /* for progress */
  const CsDispatchPolicy *dispatch;
  void *dispatch_state;
  /* GPU use over time, in bins of bin_ns: busy GPU-ns and GPUs that ran
   * anything in the bin (Symphony's "GPUs used"). */
  int64_t bin_ns;
  GArray *bin_busy_ns;    /* int64 per bin */
  GArray *bin_gpus_used;  /* int64 per bin */
};

/* ---- arrivals ----------------------------------------------------------- */

static int64_t gap_ns(Client *c)
{
  const CsClientConfig *cfg = c->cfg;
  double mean_s = 1.0 / cfg->rate_rps;
  double g;
  if (cfg->arrival == CS_ARRIVAL_POISSON)
    g = gsl_ran_exponential(c->rng, mean_s);
  else
    g = gsl_ran_gamma(c->rng, cfg->gamma_shape, mean_s / cfg->gamma_shape);
  return llround(g * 1e9);
}

/* Piecewise-constant rate (trace counts per interval): within interval k the
 * rate is counts[k] * count_scale / interval; gaps are exponential or gamma.
 * A gap that crosses into the next interval is discarded and drawing restarts
 * at the boundary with the new rate (exact for Poisson by memorylessness; a
 * renewal restart for gamma). Empty intervals produce nothing. Returns
 * INT64_MAX after the last interval. */
static int64_t piecewise_next(Client *c, int64_t index)
{
  const CsClientConfig *cfg = c->cfg;
  int64_t t = index == 0 ? cfg->start_ns : c->last_ns;
  for (;;) {
    int64_t k = (t - cfg->start_ns) / cfg->interval_ns;
    if (k >= cfg->n_intervals)
      return INT64_MAX;
    int64_t end = cfg->start_ns + (k + 1) * cfg->interval_ns;
    double n = cfg->interval_counts[k] * cfg->count_scale;
    if (n <= 0) {
      t = end;
      continue;
    }
    double mean_s = cfg->interval_ns * 1e-9 / n;
    double g = cfg->piecewise_gamma
                 ? gsl_ran_gamma(c->rng, cfg->gamma_shape, mean_s / cfg->gamma_shape)
                 : gsl_ran_exponential(c->rng, mean_s);
    int64_t next = t + llround(g * 1e9);
    if (next < end) {
      c->last_ns = next;
      return next;
    }
    t = end;
  }
}

/* Time of the client's arrival number index (0-based), drawing a gap for random
 * processes. Constant arrivals are computed from the index, not summed, so
 * rounding never drifts. */
static int64_t arrival_time(Client *c, int64_t index)
{
  const CsClientConfig *cfg = c->cfg;
  if (cfg->arrival == CS_ARRIVAL_CONSTANT)
    return cfg->start_ns + llround((double)index * 1e9 / cfg->rate_rps);
  if (cfg->arrival == CS_ARRIVAL_TIMES)
    return index < cfg->n_times
             ? cfg->start_ns + cfg->times_ns[index]
             : cfg->start_ns + cfg->times_ns[cfg->n_times - 1] + llround(1e9 / cfg->rate_rps);
  if (cfg->arrival == CS_ARRIVAL_PIECEWISE)
    return piecewise_next(c, index);
  int64_t base = index == 0 ? cfg->start_ns : c->last_ns;
  c->last_ns = base + gap_ns(c);
  return c->last_ns;
}

/* Decides whether arrival at time t is generated; sets the window end when the
 * client stops. */
static gboolean client_accepts(Client *c, int64_t t)
{
  const CsClientConfig *cfg = c->cfg;
  if (cfg->arrival == CS_ARRIVAL_TIMES && c->index >= cfg->n_times) {
    /* a trace window, or one mean gap after the last listed time */
    c->window_end_ns = cfg->window_ns > 0 ? cfg->start_ns + cfg->window_ns : t;
    return FALSE;
  }
  if (t < c->window_start_ns)
    return TRUE; /* warm-up */
  if (cfg->duration_ns > 0)
    return t < c->window_end_ns;
  if (c->measured < cfg->requests)
    return TRUE;
  /* Count-bounded: the window ends where the next arrival would have been. */
  c->window_end_ns = t;
  return FALSE;
}

static void schedule_next_arrival(Engine *e, int ci)
{
  Client *c = &e->clients[ci];
  int64_t t = arrival_time(c, c->index);
  if (client_accepts(c, t))
    cs_eq_push(e->q, t, EV_ARRIVAL, (uint32_t)ci, NULL);
  else
    c->done = TRUE;
}

/* ---- outputs per request -------------------------------------------------- */

static void emit(Engine *e, const CsRequestRecord *r)
{
  if (e->csv)
    fprintf(e->csv,
            "%" G_GUINT64_FORMAT ",%s,%d,%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
            ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
            ",%" G_GINT64_FORMAT ",%d,%d,%d\n",
            (guint64)r->id, r->model, r->measured ? 1 : 0,
            r->served ? "ok" : r->dropped ? "dropped" : r->unserved ? "unserved" : "failed",
            (gint64)r->send_ns, (gint64)r->dispatch_ns, (gint64)r->node_ns,
            (gint64)r->exec_start_ns, (gint64)r->exec_end_ns, (gint64)r->receive_ns,
            (gint64)(r->receive_ns - r->send_ns), r->slo_met ? 1 : 0, r->batch_size, r->gpu);
  if (e->opt && e->opt->on_request)
    e->opt->on_request(r, e->opt->user_data);
}

static gboolean wants_records(const Engine *e)
{
  return e->csv || (e->opt && e->opt->on_request);
}

/* ---- services for dispatch policies (engine_internal.h) --------------------- */

int64_t cs_engine_now(const Engine *e)
{
  return e->now;
}

const CsConfig *cs_engine_config(const Engine *e)
{
  return e->cfg;
}

CsEventHandle cs_engine_timer(Engine *e, int64_t at, uint32_t arg)
{
  g_assert(at >= e->now);
  return cs_eq_push(e->q, at, EV_DISPATCH, arg, NULL);
}

void cs_engine_cancel(Engine *e, CsEventHandle h)
{
  cs_eq_cancel(e->q, h);
}

Batch *cs_engine_batch_new(Engine *e, int model, int cap)
{
  cap = MAX(cap, 1);
  Batch *b = e->free_batches;
  if (b) {
    e->free_batches = b->next;
    if (b->cap < cap) {
      b->reqs = g_renew(Req, b->reqs, cap);
      b->cap = cap;
    }
  } else {
    b = g_new0(Batch, 1);
    b->reqs = g_new(Req, cap);
    b->cap = cap;
  }
  b->model = model;
  b->gpu = -1;
  b->n = 0;
  b->not_before_ns = 0;
  b->next = NULL;
  return b;
}

void cs_engine_batch_add(Engine *e, Batch *b, const Req *r)
{
  (void)e;
  if (b->n == b->cap) {
    b->cap *= 2;
    b->reqs = g_renew(Req, b->reqs, b->cap);
  }
  b->reqs[b->n++] = *r;
}

static void batch_release(Engine *e, Batch *b)
{
  b->next = e->free_batches;
  e->free_batches = b;
}

void cs_engine_send(Engine *e, Batch *b, int gpu, int worker)
{
  g_assert(b->n > 0 && gpu >= 0 && gpu < e->cfg->n_gpus);
  g_assert(worker >= 0 && worker < e->n_workers);
  b->gpu = gpu;
  b->worker = worker;
  b->dispatch_ns = e->now;
  b->node_ns = -1;
  int64_t bytes = (int64_t)b->n * e->clients[b->model].cfg->input_bytes;
  cs_eq_push(e->q, e->now + cs_network_curve_latency_ns(e->cfg->network, bytes), EV_BATCH_AT_NODE,
             0, b);
}

int64_t cs_engine_latency(Engine *e, int model, int gpu, int n)
{
  int k = model * e->n_gpu_types + e->gpus[gpu].type;
  GArray *t = e->latency[k];
  if (G_UNLIKELY((guint)n >= t->len)) {
    /* Filled on first use: policies may form batches of any size. */
    const CsModelProfile *prof = e->profile[k];
    g_assert(prof != NULL);
    guint old = t->len;
    g_array_set_size(t, MAX((guint)n + 1, old * 2));
    for (guint s = MAX(old, 1); s < t->len; s++)
      g_array_index(t, int64_t, s) = cs_model_profile_exec_ns(prof, (int)s);
  }
  return g_array_index(t, int64_t, n);
}

static void emit_unserved(Engine *e, int model, const Req *r, gboolean dropped,
                          gboolean unserved)
{
  if (r->measured)
    e->clients[model].last_out_ns = e->now;
  if (!wants_records(e))
    return;
  CsRequestRecord rec = {
    .id = r->id, .model = e->clients[model].cfg->model, .client = model,
    .measured = r->measured, .served = FALSE, .dropped = dropped, .unserved = unserved,
    .send_ns = r->send_ns,
    .dispatch_ns = e->now, .node_ns = e->now, .exec_start_ns = e->now,
    .exec_end_ns = e->now, .receive_ns = e->now, .batch_size = 0, .gpu = -1,
    .slo_met = FALSE,
  };
  emit(e, &rec);
}

void cs_engine_drop(Engine *e, int model, const Req *r)
{
  e->clients[model].dropped += r->measured;
  emit_unserved(e, model, r, TRUE, FALSE);
}

void cs_engine_fail(Engine *e, int model, const Req *r)
{
  e->clients[model].failed += r->measured;
  emit_unserved(e, model, r, FALSE, FALSE);
}

void cs_engine_unserved(Engine *e, int model, const Req *r)
{
  e->clients[model].unserved += r->measured;
  emit_unserved(e, model, r, FALSE, TRUE);
}

static void on_arrival(Engine *e, int ci)
{
  Client *c = &e->clients[ci];
  Req r = { .id = e->next_id++, .send_ns = e->now, .measured = e->now >= c->window_start_ns };
  c->index++;
  c->generated++;
  if (r.measured)
    c->measured++;
  else
    c->warmup++;
  schedule_next_arrival(e, ci);
  e->dispatch->on_request(e->dispatch_state, ci, &r);
}

/* ---- node, worker, GPU ------------------------------------------------------ */

static GArray *bins_upto(GArray *a, int64_t b)
{
  if ((guint)b >= a->len)
    g_array_set_size(a, b + 1);
  return a;
}

/* Adds SM use (fraction of the GPU's SMs, from the execution model) held over
 * [start, end) to GPU g's bins. */
static void account_sm(Engine *e, int g, int64_t start, int64_t end, double sm)
{
  if (end <= start || sm <= 0)
    return;
  GArray *a = bins_upto(e->gpus[g].bins, (end - 1) / e->bin_ns);
  for (int64_t b = start / e->bin_ns; b <= (end - 1) / e->bin_ns; b++) {
    int64_t lo = MAX(start, b * e->bin_ns), hi = MIN(end, (b + 1) * e->bin_ns);
    g_array_index(a, CsGpuBin, b).sm_ns += sm * (double)(hi - lo);
  }
}

/* Called when GPU g's running set is about to change: books the SM use of
 * the period that ends now. gpu_changed() records the new level. */
static void gpu_changing(Engine *e, int g)
{
  Gpu *gpu = &e->gpus[g];
  account_sm(e, g, gpu->last_change_ns, e->now, gpu->sm_use);
  gpu->last_change_ns = e->now;
}

static void gpu_changed(Engine *e, int g)
{
  e->gpus[g].sm_use = cs_gpu_exec_sm_use(e->gpus[g].exec);
}

/* Adds a busy period [start, end) of GPU g (at least one batch running) to
 * the time series. A GPU's busy periods arrive in time order. */
static void account_bins(Engine *e, int g, int64_t start, int64_t end)
{
  if (end <= start)
    return;
  GArray *gb = bins_upto(e->gpus[g].bins, (end - 1) / e->bin_ns);
  int64_t b0 = start / e->bin_ns, b1 = (end - 1) / e->bin_ns;
  if ((guint)b1 >= e->bin_busy_ns->len) {
    g_array_set_size(e->bin_busy_ns, b1 + 1);
    g_array_set_size(e->bin_gpus_used, b1 + 1);
  }
  for (int64_t b = b0; b <= b1; b++) {
    int64_t lo = MAX(start, b * e->bin_ns), hi = MIN(end, (b + 1) * e->bin_ns);
    g_array_index(e->bin_busy_ns, int64_t, b) += hi - lo;
    g_array_index(gb, CsGpuBin, b).busy_ns += hi - lo;
    if (b > e->gpus[g].last_bin) {
      g_array_index(e->bin_gpus_used, int64_t, b)++;
      e->gpus[g].last_bin = b;
    }
  }
}

/* Compute demand d of a batch of n: the model's WSM at that batch size, or at
 * the nearest profiled batch size; NAN (the GPU model's default) if unknown. */
static double batch_demand(Engine *e, int model, int g, int n)
{
  const CsBatchPoint *best =
    cs_model_profile_nearest_point(e->profile[model * e->n_gpu_types + e->gpus[g].type], n);
  return best ? best->creq_pct[CS_CREQ_WSM] / 100.0 : NAN;
}

static void gpu_rearm(Engine *e, int g)
{
  Gpu *gpu = &e->gpus[g];
  cs_eq_cancel(e->q, gpu->done);
  gpu->done = CS_EVENT_HANDLE_NONE;
  int64_t t;
  uint64_t job;
  if (cs_gpu_exec_next(gpu->exec, &t, &job))
    gpu->done = cs_eq_push(e->q, MAX(t, e->now), EV_GPU_DONE, (uint32_t)g, NULL);
}

static void gpu_start(Engine *e, int g, Batch *b)
{
  Gpu *gpu = &e->gpus[g];
  Worker *w = &e->workers[b->worker];
  b->start_ns = e->now;
  b->job = e->next_job++;
  double demand = batch_demand(e, b->model, g, b->n);
  int64_t iso = cs_engine_latency(e, b->model, g, b->n);
  double f = e->cfg->gpus[g].sm_fraction;
  if (f < 1.0) {
    /* A MIG instance with a fraction f of the SMs runs a batch of demand d at
     * (min(1, f/d))^gamma of its full-GPU speed; instances do not interfere. */
    double d = isnan(demand) ? 1.0 : demand;
    double speed = pow(MIN(1.0, f / d), e->cfg->mps_gamma);
    iso = (int64_t)ceil((double)iso / speed);
  }
  CsGpuJobSpec spec = {
    .model = w->interference_model,
    .batch = b->n,
    .iso_ns = iso,
    .demand = demand,
    .share = w->share,
    .worker = b->worker,
  };
  gpu_changing(e, g);
  cs_gpu_exec_start(gpu->exec, e->now, b->job, &spec);
  gpu_changed(e, g);
  w->busy = TRUE;
  if (gpu->n_running == gpu->cap_running) {
    gpu->cap_running = gpu->cap_running ? 2 * gpu->cap_running : 4;
    gpu->running = g_renew(Batch *, gpu->running, gpu->cap_running);
  }
  gpu->running[gpu->n_running++] = b;
  if (gpu->busy_since < 0)
    gpu->busy_since = e->now;
}

/* Starts every waiting batch the GPU accepts now, in arrival order: with
 * time-slicing only the head when the GPU is idle; with MPS every batch whose
 * worker is idle (a worker runs one batch at a time, so its batches keep
 * their order). */
static void gpu_dispatch(Engine *e, int g)
{
  Gpu *gpu = &e->gpus[g];
  Batch *prev = NULL, *b = gpu->head;
  gboolean started = FALSE;
  while (b) {
    Batch *next = b->next;
    Worker *w = &e->workers[b->worker];
    if (!w->busy && cs_gpu_exec_accepts(gpu->exec, b->worker)) {
      if (prev)
        prev->next = next;
      else
        gpu->head = next;
      if (gpu->tail == b)
        gpu->tail = prev;
      b->next = NULL;
      gpu_start(e, g, b);
      started = TRUE;
    } else {
      if (gpu->time_slice)
        break;
      prev = b;
    }
    b = next;
  }
  if (started)
    gpu_rearm(e, g);
}

static void on_batch_at_node(Engine *e, Batch *b)
{
  if (b->node_ns < 0)
    b->node_ns = e->now;
  if (b->not_before_ns > e->now) {
    /* The dispatcher asked for a later start: the batch waits at the worker. */
    cs_eq_push(e->q, b->not_before_ns, EV_BATCH_AT_NODE, 0, b);
    return;
  }
  int g = b->gpu;
  Gpu *gpu = &e->gpus[g];
  if (e->workers[b->worker].failed) {
    /* The replica did not fit in the GPU's memory: its requests fail. */
    for (int i = 0; i < b->n; i++)
      cs_engine_fail(e, b->model, &b->reqs[i]);
    batch_release(e, b);
    return;
  }
  if (gpu->tail)
    gpu->tail->next = b;
  else
    gpu->head = b;
  gpu->tail = b;
  gpu_dispatch(e, g);
}

static void on_gpu_done(Engine *e, int g)
{
  Gpu *gpu = &e->gpus[g];
  gpu->done = CS_EVENT_HANDLE_NONE;
  int64_t t;
  uint64_t job;
  gboolean any = cs_gpu_exec_next(gpu->exec, &t, &job);
  g_assert(any);
  gpu_changing(e, g);
  cs_gpu_exec_finish(gpu->exec, e->now, job);
  gpu_changed(e, g);
  Batch *b = NULL;
  for (int i = 0; i < gpu->n_running; i++)
    if (gpu->running[i]->job == job) {
      b = gpu->running[i];
      gpu->running[i] = gpu->running[--gpu->n_running];
      break;
    }
  g_assert(b != NULL);
  Worker *wk = &e->workers[b->worker];
  wk->busy = FALSE;
  b->end_ns = e->now;
  /* Inference latency of this worker over time (by completion time). */
  GArray *wb = bins_upto(wk->bins, e->now / e->bin_ns);
  CsWorkerBin *bin = &g_array_index(wb, CsWorkerBin, e->now / e->bin_ns);
  bin->batches++;
  bin->gpu_ns += b->end_ns - b->start_ns;
  gpu->batches++;
  if (gpu->n_running == 0) {
    gpu->busy_ns += e->now - gpu->busy_since;
    account_bins(e, g, gpu->busy_since, e->now);
    gpu->busy_since = -1;
  }
  const Client *c = &e->clients[b->model];
  int64_t bytes = (int64_t)b->n * c->cfg->output_bytes;
  cs_eq_push(e->q, e->now + cs_network_curve_latency_ns(e->cfg->network, bytes), EV_RESULT, 0, b);
  gpu_dispatch(e, g);
  gpu_rearm(e, g);
}

static inline void push64(GArray *a, int64_t v)
{
  g_array_append_val(a, v);
}

static void on_result(Engine *e, Batch *b)
{
  Client *c = &e->clients[b->model];
  int64_t slo = c->cfg->slo_ns;
  int measured_in_batch = 0;
  /* Results arrive in time order, and a client's window end is known before
   * any result arrives at or after it (it is set when the client stops). */
  gboolean in_window = e->now >= c->window_start_ns &&
                       (c->window_end_ns == 0 || e->now < c->window_end_ns);
  gboolean late = c->window_end_ns != 0 && e->now >= c->window_end_ns;
  for (int i = 0; i < b->n; i++) {
    const Req *r = &b->reqs[i];
    int64_t lat = e->now - r->send_ns;
    if (in_window) {
      c->in_window++;
      c->good_in_window += lat <= slo;
    }
    if (r->measured) {
      measured_in_batch++;
      c->completed++;
      c->good += lat <= slo;
      c->late += late;
      push64(c->e2e, lat);
      push64(c->router_wait, b->dispatch_ns - r->send_ns);
    }
    if (wants_records(e)) {
      CsRequestRecord rec = {
        .id = r->id, .model = c->cfg->model, .client = b->model, .measured = r->measured,
        .served = TRUE, .send_ns = r->send_ns, .dispatch_ns = b->dispatch_ns,
        .node_ns = b->node_ns, .exec_start_ns = b->start_ns, .exec_end_ns = b->end_ns,
        .receive_ns = e->now, .batch_size = b->n, .gpu = b->gpu,
        .slo_met = lat <= slo,
      };
      emit(e, &rec);
    }
  }
  if (measured_in_batch > 0) {
    c->last_out_ns = e->now;
    const int64_t stage_ns[CS_N_STAGES] = {
      [CS_STAGE_TO_NODE] = b->node_ns - b->dispatch_ns,
      [CS_STAGE_QUEUE_WAIT] = b->start_ns - b->node_ns,
      [CS_STAGE_GPU] = b->end_ns - b->start_ns,
      [CS_STAGE_RESULT_RETURN] = e->now - b->end_ns,
    };
    for (int s = CS_STAGE_ROUTER_WAIT + 1; s < CS_N_STAGES; s++) {
      CsWeightedSample ws = { .value = stage_ns[s], .weight = measured_in_batch };
      g_array_append_val(c->batch_stage[s], ws);
    }
    c->batches++;
    c->batched_requests += b->n;
    if ((guint)b->n >= c->batch_sizes->len)
      g_array_set_size(c->batch_sizes, b->n + 1);
    g_array_index(c->batch_sizes, int64_t, b->n)++;
  }
  batch_release(e, b);
}

/* ---- setup, loop, teardown -------------------------------------------------- */

static void setup(Engine *e)
{
  const CsConfig *cfg = e->cfg;
  e->q = cs_eq_new();
  e->gpus = g_new0(Gpu, MAX(cfg->n_gpus, 1));
  e->gpu_types = g_new0(const char *, MAX(cfg->n_gpus, 1));
  for (int g = 0; g < cfg->n_gpus; g++) {
    int t = 0;
    while (t < e->n_gpu_types && strcmp(e->gpu_types[t], cfg->gpus[g].gpu_type) != 0)
      t++;
    if (t == e->n_gpu_types)
      e->gpu_types[e->n_gpu_types++] = cfg->gpus[g].gpu_type;
    e->gpus[g].type = t;
    e->gpus[g].last_bin = -1;
  }
  e->bin_ns = cfg->timeseries_bin_ns;
  e->bin_busy_ns = g_array_new(FALSE, TRUE, sizeof(int64_t));
  e->bin_gpus_used = g_array_new(FALSE, TRUE, sizeof(int64_t));
  int n_pairs = cfg->n_clients * e->n_gpu_types;
  e->profile = g_new0(const CsModelProfile *, MAX(n_pairs, 1));
  e->latency = g_new0(GArray *, MAX(n_pairs, 1));
  for (int m = 0; m < cfg->n_clients; m++)
    for (int t = 0; t < e->n_gpu_types; t++) {
      int k = m * e->n_gpu_types + t;
      e->profile[k] = cs_profile_set_lookup(cfg->profiles, e->gpu_types[t], cfg->clients[m].model);
      e->latency[k] = g_array_new(FALSE, TRUE, sizeof(int64_t));
    }
  e->clients = g_new0(Client, cfg->n_clients);
  for (int i = 0; i < cfg->n_clients; i++) {
    Client *c = &e->clients[i];
    c->cfg = &cfg->clients[i];
    char *stream = g_strdup_printf("client/%s/arrivals", c->cfg->model);
    c->rng = cs_rng_stream_new(cfg->seed, stream);
    g_free(stream);
    c->window_start_ns = c->cfg->start_ns + c->cfg->warmup_ns;
    c->window_end_ns = c->cfg->duration_ns > 0 ? c->window_start_ns + c->cfg->duration_ns : 0;
    c->e2e = g_array_new(FALSE, FALSE, sizeof(int64_t));
    c->router_wait = g_array_new(FALSE, FALSE, sizeof(int64_t));
    for (int s = 0; s < CS_N_STAGES; s++)
      c->batch_stage[s] = g_array_new(FALSE, FALSE, sizeof(CsWeightedSample));
    c->batch_sizes = g_array_new(FALSE, TRUE, sizeof(int64_t));
    double warm = c->cfg->rate_rps * c->cfg->warmup_ns * 1e-9;
    e->expected_requests += warm + (c->cfg->requests > 0
                                      ? (double)c->cfg->requests
                                      : c->cfg->rate_rps * c->cfg->duration_ns * 1e-9);
  }
  /* Workers: the placement's replicas, or one per model for centralized dispatch. */
  gboolean by_replica = cfg->placement != NULL;
  e->n_workers = by_replica ? (int)cfg->placement->replicas->len : cfg->n_clients * cfg->n_gpus;
  e->workers = g_new0(Worker, MAX(e->n_workers, 1));
  for (int w = 0; w < e->n_workers; w++) {
    Worker *wk = &e->workers[w];
    if (by_replica) {
      const CsReplica *r = &g_array_index(cfg->placement->replicas, CsReplica, w);
      wk->model = r->model;
      wk->share = cfg->mps ? r->mps_share : 0.0;
      wk->failed = cfg->replica_failed && cfg->replica_failed[w];
      wk->gpu = r->gpu;
    } else {
      wk->gpu = w % MAX(cfg->n_gpus, 1);
      wk->model = w / cfg->n_gpus; /* worker = model * n_gpus + gpu */
    }
    wk->bins = g_array_new(FALSE, TRUE, sizeof(CsWorkerBin));
    wk->interference_model =
      cfg->interference ? cs_interference_set_find(cfg->interference, cfg->clients[wk->model].model)
                        : -1;
  }
  for (int g = 0; g < cfg->n_gpus; g++) {
    Gpu *gpu = &e->gpus[g];
    CsGpuExecConfig gc;
    cs_gpu_exec_config_init(&gc, cfg->interference);
    const CsGpuType *type = cs_profile_set_gpu_type(cfg->profiles, cfg->gpus[g].gpu_type);
    gc.sm_count = type ? type->sm_count : 0;
    gc.memory_bytes = type ? type->memory_bytes : 0;
    /* Centralized dispatch runs batches exclusively (Symphony); MPS is a
     * property of the placement's co-located replicas. */
    gpu->time_slice = !(cfg->mps && by_replica);
    gc.mode = gpu->time_slice ? CS_GPU_TIME_SLICE : CS_GPU_MPS;
    gc.gamma = cfg->mps_gamma;
    gpu->exec = cs_gpu_exec_new(&gc);
    gpu->busy_since = -1;
    gpu->bins = g_array_new(FALSE, TRUE, sizeof(CsGpuBin));
  }
  e->dispatch = cfg->dispatch;
  e->dispatch_state = e->dispatch->create(e, cfg->dispatch_params);
  /* First arrivals in client order, so equal first-arrival times keep it. */
  for (int i = 0; i < cfg->n_clients; i++)
    schedule_next_arrival(e, i);
}

static void run_loop(Engine *e)
{
  CsEvent ev;
  const uint64_t progress_every = 1u << 16;
  while (cs_eq_pop(e->q, &ev)) {
    g_assert(ev.time >= e->now); /* time never runs backwards */
    e->now = ev.time;
    e->events++;
    switch (ev.kind) {
    case EV_ARRIVAL:
      on_arrival(e, (int)ev.arg);
      break;
    case EV_DISPATCH:
      e->dispatch->on_timer(e->dispatch_state, ev.arg);
      break;
    case EV_BATCH_AT_NODE:
      on_batch_at_node(e, ev.ptr);
      break;
    case EV_GPU_DONE:
      on_gpu_done(e, (int)ev.arg);
      break;
    case EV_RESULT:
      on_result(e, ev.ptr);
      break;
    default:
      g_assert_not_reached();
    }
    if (G_UNLIKELY(e->events % progress_every == 0) && e->opt && e->opt->on_progress) {
      double generated = (double)e->next_id;
      double f = e->expected_requests > 0 ? generated / e->expected_requests : 1.0;
      e->opt->on_progress(MIN(f, 1.0), e->now, e->opt->user_data);
    }
  }
}

static void fill_model_result(CsModelResult *m, Client *c)
{
  const CsClientConfig *cfg = c->cfg;
  m->slo_ms = cfg->slo_ms;
  m->offered_rps = cfg->rate_rps;
  m->planned_rps = cfg->planned_rate_rps;
  int64_t window = c->window_end_ns - c->window_start_ns;
  m->window_s = window > 0 ? window * 1e-9 : 0.0;
  m->generated = c->generated;
  m->warmup = c->warmup;
  m->measured = c->measured;
  m->completed = c->completed;
  m->good = c->good;
  m->failed = c->failed;
  m->dropped = c->dropped;
  m->unserved = c->unserved;
  m->late = c->late;
  m->in_window = c->in_window;
  m->good_in_window = c->good_in_window;
  m->drain_s = c->measured > 0 && c->window_end_ns > 0 && c->last_out_ns > c->window_end_ns
                 ? (c->last_out_ns - c->window_end_ns) * 1e-9
                 : 0.0;
  m->submitted_rps = m->window_s > 0 ? c->measured / m->window_s : 0.0;
  m->throughput_rps = m->window_s > 0 ? c->in_window / m->window_s : 0.0;
  m->goodput_rps = m->window_s > 0 ? c->good_in_window / m->window_s : 0.0;
  m->bad_rate = c->measured > 0 ? 1.0 - (double)c->good / (double)c->measured : 0.0;
  cs_latency_stats((int64_t *)c->e2e->data, c->e2e->len, &m->latency);
  cs_latency_stats((int64_t *)c->router_wait->data, c->router_wait->len,
                   &m->stage[CS_STAGE_ROUTER_WAIT]);
  for (int s = CS_STAGE_ROUTER_WAIT + 1; s < CS_N_STAGES; s++)
    cs_weighted_latency_stats((CsWeightedSample *)c->batch_stage[s]->data,
                              c->batch_stage[s]->len, &m->stage[s]);
  m->batches = c->batches;
  m->mean_batch = c->batches > 0 ? (double)c->batched_requests / c->batches : NAN;
}

static void fill_total(CsResults *res, Engine *e)
{
  CsModelResult *t = &res->total;
  t->model = "total";
  t->slo_ms = NAN;
  GArray *pool = g_array_new(FALSE, FALSE, sizeof(int64_t));
  int64_t batched = 0;
  for (int i = 0; i < res->n_models; i++) {
    const CsModelResult *m = &res->models[i];
    t->offered_rps += m->offered_rps;
    t->planned_rps += m->planned_rps;
    t->submitted_rps += m->submitted_rps;
    t->throughput_rps += m->throughput_rps;
    t->goodput_rps += m->goodput_rps;
    t->expected_goodput_rps += m->expected_goodput_rps;
    t->generated += m->generated;
    t->warmup += m->warmup;
    t->measured += m->measured;
    t->completed += m->completed;
    t->good += m->good;
    t->failed += m->failed;
    t->dropped += m->dropped;
    t->unserved += m->unserved;
    t->late += m->late;
    t->in_window += m->in_window;
    t->good_in_window += m->good_in_window;
    t->drain_s = MAX(t->drain_s, m->drain_s);
    t->batches += m->batches;
    batched += e->clients[i].batched_requests;
    t->window_s = MAX(t->window_s, m->window_s);
  }
  t->bad_rate = t->measured > 0 ? 1.0 - (double)t->good / (double)t->measured : 0.0;
  t->mean_batch = t->batches > 0 ? (double)batched / t->batches : NAN;
  for (int s = -1; s <= CS_STAGE_ROUTER_WAIT; s++) {
    g_array_set_size(pool, 0);
    for (int i = 0; i < res->n_models; i++) {
      GArray *src = s < 0 ? e->clients[i].e2e : e->clients[i].router_wait;
      g_array_append_vals(pool, src->data, src->len);
    }
    cs_latency_stats((int64_t *)pool->data, pool->len, s < 0 ? &t->latency : &t->stage[s]);
  }
  g_array_unref(pool);
  GArray *wpool = g_array_new(FALSE, FALSE, sizeof(CsWeightedSample));
  for (int s = CS_STAGE_ROUTER_WAIT + 1; s < CS_N_STAGES; s++) {
    g_array_set_size(wpool, 0);
    for (int i = 0; i < res->n_models; i++)
      g_array_append_vals(wpool, e->clients[i].batch_stage[s]->data,
                          e->clients[i].batch_stage[s]->len);
    cs_weighted_latency_stats((CsWeightedSample *)wpool->data, wpool->len, &t->stage[s]);
  }
  g_array_unref(wpool);
}

/* A model is unstable when its measured requests keep finishing long after
 * its window ended: work was still queued, so its rates and percentiles
 * describe a queue that grows with the run's length, not a steady state.
 * "Long" is 10 SLOs or 1 s, whichever is longer: a stable queue drains
 * within a few latencies (the last request's own latency), and the SLO
 * bounds those for any setting a researcher would call feasible; the 1 s
 * floor keeps short SLOs from flagging a burst. */
static void warn_about_run(CsResults *res)
{
  for (int i = 0; i < res->n_models; i++) {
    const CsModelResult *m = &res->models[i];
    double limit_s = MAX(10.0 * m->slo_ms * 1e-3, 1.0);
    if (m->drain_s > limit_s)
      cs_warning_add(res->warnings, "unstable", m->model, -1,
                     "its last measured request finished %.3f s after the %.3f s measurement "
                     "window ended (%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                     " results late): the offered load exceeds what it is served at, and its "
                     "numbers depend on the run's length",
                     m->drain_s, m->window_s, (gint64)m->late, (gint64)m->measured);
    else if (m->measured > 0 && m->completed == 0 && m->unserved < m->measured)
      cs_warning_add(res->warnings, "model_no_results", m->model, -1,
                     "none of its %" G_GINT64_FORMAT " measured requests got a result (%" G_GINT64_FORMAT
                     " dropped, %" G_GINT64_FORMAT " unserved, %" G_GINT64_FORMAT " failed)",
                     (gint64)m->measured, (gint64)m->dropped, (gint64)m->unserved,
                     (gint64)m->failed);
  }
  if (res->total.measured > 0 && res->total.completed == 0)
    cs_warning_add(res->warnings, "nothing_served", NULL, -1,
                   "the run served none of its %" G_GINT64_FORMAT " measured requests",
                   (gint64)res->total.measured);
  else if (res->total.measured == 0)
    cs_warning_add(res->warnings, "nothing_measured", NULL, -1,
                   "no request was sent inside a measurement window: every rate and percentile "
                   "is empty");
}

CsResults *cs_engine_run(const CsConfig *cfg, FILE *requests_csv, const CsRunOptions *opt)
{
  Engine e = { .cfg = cfg, .opt = opt, .csv = requests_csv };
  gint64 t0 = g_get_monotonic_time();
  if (e.csv)
    fputs("id,model,measured,status,send_ns,dispatch_ns,node_ns,exec_start_ns,exec_end_ns,"
          "receive_ns,latency_ns,slo_met,batch_size,gpu\n",
          e.csv);
  setup(&e);
  run_loop(&e);

  CsResults *res = cs_results_alloc(cfg->n_clients, cfg->n_gpus);
  for (int i = 0; i < cfg->n_clients; i++) {
    Client *c = &e.clients[i];
    res->model_names[i] = g_strdup(c->cfg->model);
    res->models[i].model = res->model_names[i];
    fill_model_result(&res->models[i], c);
    res->models[i].expected_goodput_rps =
      cfg->placement ? cfg->placement->expected_goodput[i] : NAN;
    g_array_append_vals(res->batch_sizes[i], c->batch_sizes->data, c->batch_sizes->len);
  }
  for (guint r = 0; cfg->placement && r < cfg->placement->replicas->len; r++) {
    const CsReplica *rep = &g_array_index(cfg->placement->replicas, CsReplica, r);
    CsResultReplica rr = { .gpu = rep->gpu, .batch = rep->batch };
    g_array_append_val(res->replicas[rep->model], rr);
  }
  fill_total(res, &e);
  for (int g = 0; g < cfg->n_gpus; g++) {
    res->gpus[g].node = cfg->gpus[g].node;
    res->gpus[g].physical = cfg->gpus[g].physical;
    res->gpus[g].mig_instance = cfg->gpus[g].mig_instance;
    res->gpus[g].sm_fraction = cfg->gpus[g].sm_fraction;
    res->gpus[g].memory_fraction = cfg->gpus[g].memory_fraction;
    res->gpus[g].gpu_type = g_strdup(cfg->gpus[g].gpu_type);
    res->gpus[g].busy_ns = e.gpus[g].busy_ns;
    res->gpus[g].batches = e.gpus[g].batches;
    res->gpus[g].busy_fraction = e.now > 0 ? (double)e.gpus[g].busy_ns / (double)e.now : 0.0;
  }
  /* Per-GPU and per-worker time series move to the results. */
  res->gpu_bins = g_new0(GArray *, MAX(cfg->n_gpus, 1));
  for (int g = 0; g < cfg->n_gpus; g++) {
    res->gpu_bins[g] = e.gpus[g].bins;
    e.gpus[g].bins = NULL;
    res->gpus[g].memory_pct = 0;
  }
  res->n_workers = e.n_workers;
  res->workers = g_new0(CsWorkerResult, MAX(e.n_workers, 1));
  for (int w = 0; w < e.n_workers; w++) {
    CsWorkerResult *wr = &res->workers[w];
    wr->model = g_strdup(cfg->clients[e.workers[w].model].model);
    wr->gpu = e.workers[w].gpu;
    wr->share = e.workers[w].share;
    wr->bins = e.workers[w].bins;
    e.workers[w].bins = NULL;
  }
  for (guint r = 0; cfg->placement && r < cfg->placement->replicas->len; r++)
    if (!(cfg->replica_failed && cfg->replica_failed[r]))
      res->gpus[g_array_index(cfg->placement->replicas, CsReplica, r).gpu].memory_pct +=
        cfg->replica_mreq ? cfg->replica_mreq[r] : 0;
  res->bin_ns = e.bin_ns;
  res->bin_busy_ns = e.bin_busy_ns;
  res->bin_gpus_used = e.bin_gpus_used;
  res->seed = cfg->seed;
  res->sim_time_ns = e.now;
  res->events = e.events;
  res->placement_policy = g_strdup(cfg->placement ? cfg->placement_policy->name : "none");
  res->placement_log = g_strdup(cfg->placement ? cfg->placement->log->str : "");
  res->expected_total = cfg->placement ? cfg->placement->expected_total : NAN;
  res->dispatch_policy = g_strdup(cfg->dispatch->name);
  res->dispatch_params = cJSON_CreateObject();
  cfg->dispatch->describe(cfg->dispatch_params, res->dispatch_params);
  res->warnings = cs_warning_list_new();
  cs_warning_list_extend(res->warnings, cfg->warnings);
  warn_about_run(res);

  /* teardown */
  e.dispatch->destroy(e.dispatch_state);
  for (int i = 0; i < cfg->n_clients; i++) {
    Client *c = &e.clients[i];
    gsl_rng_free(c->rng);
    g_array_unref(c->e2e);
    g_array_unref(c->router_wait);
    for (int s = 0; s < CS_N_STAGES; s++)
      g_array_unref(c->batch_stage[s]);
    g_array_unref(c->batch_sizes);
  }
  g_free(e.clients);
  for (int k = 0; k < cfg->n_clients * e.n_gpu_types; k++)
    g_array_unref(e.latency[k]);
  g_free(e.latency);
  g_free(e.profile);
  g_free(e.gpu_types);
  for (int g = 0; g < cfg->n_gpus; g++) {
    cs_gpu_exec_free(e.gpus[g].exec);
    g_free(e.gpus[g].running);
  }
  g_free(e.gpus);
  g_free(e.workers);
  while (e.free_batches) {
    Batch *b = e.free_batches;
    e.free_batches = b->next;
    g_free(b->reqs);
    g_free(b);
  }
  cs_eq_free(e.q);
  res->wall_s = (g_get_monotonic_time() - t0) * 1e-6;
  return res;
}
