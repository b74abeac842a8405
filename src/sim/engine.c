/* The core loop of the simulation engine; see engine.h. This file holds
 * setup, the event loop, the filling of the results and teardown, and the
 * services that dispatch policies call (clustersim/dispatch.h). The entities of
 * the simulated world are in clients.c and gpus.c, the metrics of a run in
 * metrics.c; engine_state.h holds the state they share.
 *
 * Hot-path notes: one event per arrival, then a constant number of events per
 * batch (timeout, node arrival, execution end, result arrival), so the cost per
 * request falls with the batch size. Requests travel inside their batch as
 * small records; batches come from a free list; latencies per batch size are
 * looked up in per-(model, GPU type) tables filled on first use. */
#include "engine.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "common/checked.h"
#include "engine_internal.h"
#include "engine_state.h"
#include "event_queue.h"
#include "gpu/gpu_exec.h"
#include "rng.h"
#include "stats.h"

/* ---- services for dispatch policies (clustersim/dispatch.h) --------------- */

/* A dispatch policy's misuse of a service (a GPU out of range, a batch sent
 * twice) stops the run: the first one is kept and cs_engine_run reports it,
 * so a policy's bug never becomes a silent wrong number. */
void cs_engine_misuse(Engine *e, const char *fmt, ...)
{
  if (e->misuse)
    return;
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  e->misuse = g_strdup_printf("dispatch policy \"%s\": %s (at %.6f s simulated)",
                              e->dispatch->name, msg, e->now * 1e-9);
  g_free(msg);
}

void cs_engine_limit(Engine *e, const char *fmt, ...)
{
  if (e->limit)
    return;
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  e->limit = g_strdup_printf("%s (at %.6f s simulated)", msg, e->now * 1e-9);
  g_free(msg);
}

int64_t cs_engine_transfer_end(Engine *e, const Batch *b, int64_t per_request, const char *what)
{
  int64_t bytes = 0;
  if (cs_network_curve_uses_size(e->cfg->network) && !cs_i64_mul(b->n, per_request, &bytes)) {
    /* A wrapped product would be a negative size, which the curve takes for
     * a 0 ns transfer: a wrong number, not a slow one. */
    cs_engine_limit(e, "the %s of a batch of %d requests of %s is %d x %" G_GINT64_FORMAT
                    " bytes, more than 2^63 bytes",
                    what, b->n, e->cfg->clients[b->model].model, b->n, (gint64)per_request);
    return e->now;
  }
  /* Fibonacci hashing: sizes are multiples of a per-request payload (often of
   * a large power of two), which a plain modulo would send to one slot. */
  int slot = (int)(((uint64_t)bytes * 0x9e3779b97f4a7c15ULL) >> 56);
  if (e->net_bytes[slot] != bytes) {
    e->net_bytes[slot] = bytes;
    e->net_ns[slot] = cs_network_curve_latency_ns(e->cfg->network, bytes);
  }
  /* The curve saturates at INT64_MAX; so does the sum, which the core loop
   * then refuses as past the time limit. */
  return cs_i64_add_sat(e->now, e->net_ns[slot]);
}

gboolean cs_engine_model_ok(Engine *e, const char *call, int model)
{
  if (model >= 0 && model < e->cfg->n_clients)
    return TRUE;
  cs_engine_misuse(e, "%s: model %d out of range (the scenario has %d)", call, model, e->cfg->n_clients);
  return FALSE;
}

const CsWorld *cs_engine_world(const Engine *e)
{
  g_return_val_if_fail(e != NULL, NULL);
  return e->cfg;
}

int64_t cs_engine_now(const Engine *e)
{
  g_return_val_if_fail(e != NULL, 0);
  return e->now;
}

CsTimer cs_engine_timer(Engine *e, int64_t at, uint32_t arg)
{
  g_return_val_if_fail(e != NULL, CS_TIMER_NONE);
  return cs_timer_pack(eq_push(e->q, MAX(at, e->now), EV_DISPATCH, arg, NULL));
}

gboolean cs_engine_cancel(Engine *e, CsTimer t)
{
  g_return_val_if_fail(e != NULL, FALSE);
  return cs_eq_cancel_kind(e->q, cs_timer_unpack(t), EV_DISPATCH);
}

int cs_engine_n_replicas(const Engine *e)
{
  g_return_val_if_fail(e != NULL, 0);
  return e->replicas ? (int)e->replicas->len : 0;
}

const CsReplica *cs_engine_replica(const Engine *e, int i)
{
  g_return_val_if_fail(e != NULL, NULL);
  return i >= 0 && i < cs_engine_n_replicas(e) ? &g_array_index(e->replicas, CsReplica, i) : NULL;
}

gboolean cs_engine_replica_active(const Engine *e, int i)
{
  g_return_val_if_fail(e != NULL, FALSE);
  return i >= 0 && i < cs_engine_n_replicas(e) &&
         g_array_index(e->replica_life, ReplicaLife, i).life == CS_REPLICA_ACTIVE;
}

gboolean cs_engine_replica_pending(const Engine *e, int i)
{
  g_return_val_if_fail(e != NULL, FALSE);
  if (i < 0 || i >= cs_engine_n_replicas(e))
    return FALSE;
  int life = g_array_index(e->replica_life, ReplicaLife, i).life;
  return life == CS_REPLICA_WAITING || life == CS_REPLICA_LOADING;
}

gboolean cs_engine_gpu_ready(const Engine *e, int gpu)
{
  g_return_val_if_fail(e != NULL, FALSE);
  return gpu >= 0 && gpu < e->cfg->n_gpus && cs_control_gpu_takes_work(e, gpu);
}

int cs_engine_gpu_in_transfer(const Engine *e, int gpu)
{
  g_return_val_if_fail(e != NULL, 0);
  return gpu >= 0 && gpu < e->cfg->n_gpus ? e->gpus[gpu].in_transfer : 0;
}

int cs_engine_gpu_queued(const Engine *e, int gpu)
{
  g_return_val_if_fail(e != NULL, 0);
  return gpu >= 0 && gpu < e->cfg->n_gpus ? e->gpus[gpu].queued : 0;
}

int cs_engine_gpu_running(const Engine *e, int gpu)
{
  g_return_val_if_fail(e != NULL, 0);
  return gpu >= 0 && gpu < e->cfg->n_gpus ? e->gpus[gpu].n_running : 0;
}

gboolean cs_engine_replica_queue(const Engine *e, int replica, CsReplicaQueue *out)
{
  g_return_val_if_fail(out != NULL, FALSE);
  memset(out, 0, sizeof *out);
  g_return_val_if_fail(e != NULL, FALSE);
  if (replica < 0 || replica >= cs_engine_n_replicas(e))
    return FALSE;
  /* A placement-based run's worker w is replica w (control.c adds both). */
  const Worker *w = &e->workers[replica];
  out->in_transfer = w->in_transfer;
  out->queued = w->queued;
  out->waiting_requests = w->waiting_requests;
  out->busy = w->busy;
  out->running_requests = w->running_requests;
  out->fails_memory = w->failed;
  return TRUE;
}

/* The policy's stream: "dispatch/<name>" of the run's seed (rng.h), apart
 * from every client's "client/<model>/arrivals". */
static gsl_rng *policy_rng(Engine *e)
{
  if (G_UNLIKELY(!e->policy_rng)) {
    char *stream = g_strdup_printf("dispatch/%s", e->dispatch->name);
    e->policy_rng = cs_rng_stream_new(e->cfg->seed, stream);
    g_free(stream);
  }
  return e->policy_rng;
}

double cs_engine_policy_uniform(CsEngine *e)
{
  g_return_val_if_fail(e != NULL, 0.0);
  return cs_rng_uniform(policy_rng(e));
}

void cs_engine_abort(CsEngine *e, const char *message)
{
  g_return_if_fail(e != NULL && message != NULL);
  cs_engine_misuse(e, "%s", message);
}

uint64_t cs_engine_policy_random(CsEngine *e)
{
  g_return_val_if_fail(e != NULL, 0);
  /* One 64-bit output of the stream's generator (rng.h). */
  return cs_rng_bits64(policy_rng(e));
}

/* ---- setup, loop, teardown -------------------------------------------------- */

/* Says what an event at or past CS_TIME_LIMIT_NS was for. */
static void refuse_time(Engine *e, const CsEvent *ev)
{
  double at_s = ev->time == INT64_MAX ? INFINITY : ev->time * 1e-9;
  char *what;
  if (ev->kind == EV_ARRIVAL)
    what = g_strdup_printf("the next request of %s", e->cfg->clients[ev->arg].model);
  else if (ev->kind == EV_BATCH_AT_NODE)
    what = g_strdup_printf("a batch of %s at its GPU (after its transfer or a deferred start)",
                           e->cfg->clients[((const Batch *)ev->ptr)->model].model);
  else if (ev->kind == EV_RESULT)
    what = g_strdup_printf("the result of a batch of %s at its client",
                           e->cfg->clients[((const Batch *)ev->ptr)->model].model);
  else if (ev->kind == EV_GPU_DONE)
    what = g_strdup_printf("the end of a batch on GPU %u", ev->arg);
  else if (ev->kind == EV_CONTROL)
    what = g_strdup_printf("a timer of controller \"%s\"", e->cfg->controller->name);
  else if (ev->kind == EV_REPLICA_READY)
    what = g_strdup_printf("the end of the load of replica %u", ev->arg);
  else if (ev->kind == EV_GPU_READY)
    what = g_strdup_printf("the end of the provisioning of GPU %u", ev->arg);
  else
    what = g_strdup_printf("a timer of dispatch policy \"%s\"", e->dispatch->name);
  cs_engine_limit(e, "%s would be at %g s of simulated time, past the limit of %g s (2^62 ns): "
                  "times that large cannot be represented; check the rates, payload sizes, "
                  "profile latencies and network curve",
                  what, at_s, CS_TIME_LIMIT_NS * 1e-9);
  g_free(what);
}

static void setup(Engine *e)
{
  const CsConfig *cfg = e->cfg;
  e->q = cs_eq_new();
  cs_eq_set_stream_kind(e->q, EV_ARRIVAL); /* the clients' arrivals: the stream */
  e->batches = g_ptr_array_new();
  cs_ledger_init(&e->ledger);
  e->gpus = g_new0(Gpu, MAX(cfg->n_gpus, 1));
  e->gpu_types = g_new0(const char *, MAX(cfg->n_gpus, 1));
  for (int g = 0; g < cfg->n_gpus; g++) {
    int t = 0;
    while (t < e->n_gpu_types && strcmp(e->gpu_types[t], cfg->gpus[g].gpu_type) != 0)
      t++;
    if (t == e->n_gpu_types)
      e->gpu_types[e->n_gpu_types++] = cfg->gpus[g].gpu_type;
    e->gpus[g].type = t;
  }
  e->bin_ns = cfg->timeseries_bin_ns;
  e->series = e->opt && e->opt->timeseries;
  cs_used_init(&e->used, cfg->n_gpus, cfg->timeseries_bin_ns);
  int n_pairs = cfg->n_clients * e->n_gpu_types;
  e->profile = g_new0(const CsModelProfile *, MAX(n_pairs, 1));
  e->latency = g_new0(GArray *, MAX(n_pairs, 1));
  for (int m = 0; m < cfg->n_clients; m++)
    for (int t = 0; t < e->n_gpu_types; t++) {
      int k = m * e->n_gpu_types + t;
      e->profile[k] = cs_profile_set_lookup(cfg->profiles, e->gpu_types[t], cfg->clients[m].model);
      e->latency[k] = g_array_new(FALSE, TRUE, sizeof(int64_t));
    }
  int n_all = cfg->n_clients + cfg->n_llm; /* the LLM deployments' clients last */
  e->clients = g_new0(Client, MAX(n_all, 1));
  for (int i = 0; i < n_all; i++) {
    Client *c = &e->clients[i];
    c->cfg = &cfg->clients[i];
    char *stream = g_strdup_printf("client/%s/arrivals", c->cfg->model);
    c->rng = cs_rng_stream_new(cfg->seed, stream);
    g_free(stream);
    c->window_start_ns = c->cfg->start_ns + c->cfg->warmup_ns;
    c->window_end_ns = c->cfg->duration_ns > 0 ? c->window_start_ns + c->cfg->duration_ns : 0;
    /* Exact percentiles, or a sketch of constant memory (samples.h). */
    double a = cfg->percentile_sketch;
    c->e2e = cs_samples_new(FALSE, a);
    c->router_wait = cs_samples_new(FALSE, a);
    for (int s = CS_STAGE_ROUTER_WAIT + 1; s < CS_N_STAGES; s++)
      c->batch_stage[s] = cs_samples_new(TRUE, a);
    c->batch_sizes = g_array_new(FALSE, TRUE, sizeof(int64_t));
    c->series = cs_bins_new();
    c->open_bin = -1;
    c->bin_start = e->series ? 1 : INT64_MIN; /* no bin open; without series, none ever */
    c->bin_end = e->series ? 0 : INT64_MAX;
    c->mean_gap_s = 1.0 / c->cfg->rate_rps;
    double warm = c->cfg->rate_rps * c->cfg->warmup_ns * 1e-9;
    e->expected_requests += warm + (c->cfg->requests > 0
                                      ? (double)c->cfg->requests
                                      : c->cfg->rate_rps * c->cfg->duration_ns * 1e-9);
  }
  /* Workers: the placement's replicas, or one per model for centralized dispatch. */
  gboolean by_replica = cfg->placement != NULL;
  e->n_workers = by_replica ? cs_placement_n_replicas(cfg->placement) : cfg->n_clients * cfg->n_gpus;
  e->cap_workers = MAX(e->n_workers, 1);
  e->workers = g_new0(Worker, e->cap_workers);
  for (int w = 0; w < e->n_workers; w++) {
    Worker *wk = &e->workers[w];
    if (by_replica) {
      const CsReplica *r = cs_placement_replica(cfg->placement, w);
      wk->model = r->model;
      wk->share = cfg->mps ? r->mps_share : 0.0;
      wk->failed = cfg->replica_failed && cfg->replica_failed[w];
      wk->gpu = r->gpu;
    } else {
      wk->gpu = w % MAX(cfg->n_gpus, 1);
      wk->model = w / cfg->n_gpus; /* worker = model * n_gpus + gpu */
    }
    wk->bins = cs_bins_new();
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
    gc.share_rule = cfg->mps_share_power ? CS_SHARE_RULE_POWER : CS_SHARE_RULE_SCALABLE;
    gpu->exec = cs_gpu_exec_new(&gc);
    if (!gpu->time_slice) {
      gpu->workers = g_array_new(FALSE, FALSE, sizeof(int));
      for (int w = 0; w < e->n_workers; w++)
        if (e->workers[w].gpu == g)
          g_array_append_val(gpu->workers, w);
    }
    gpu->busy_since = -1;
    gpu->bins = cs_bins_new();
    gpu->sm_bins = cs_bins_new();
  }
  cs_control_setup(e);
  e->dispatch = cfg->dispatch;
  e->dispatch_state = e->dispatch->create(e, cfg->dispatch_params, cfg->dispatch_user_data);
  cs_control_start(e);
  cs_engine_llm_setup(e);
  /* First arrivals in client order, so equal first-arrival times keep it. */
  for (int i = 0; i < n_all; i++)
    cs_engine_schedule_next_arrival(e, i);
}

static void run_loop(Engine *e)
{
  CsEvent ev;
  const uint64_t progress_every = 1u << 16;
  for (;;) {
    if (!eq_pop(e->q, &ev)) {
      /* Nothing is pending: a policy that acts only on events (Shepherd's
       * emulator) still holds what it could not serve; it decides now, and
       * the run goes on if it set a timer or sent a batch. */
      if (!e->dispatch->on_quiet)
        break;
      e->dispatch->on_quiet(e->dispatch_state);
      if (G_UNLIKELY(e->misuse) || !eq_pop(e->q, &ev))
        break;
    }
    g_assert(ev.time >= e->now); /* time never runs backwards */
    if (G_UNLIKELY(ev.time >= CS_TIME_LIMIT_NS)) {
      refuse_time(e, &ev);
      break;
    }
    e->now = ev.time;
    e->events++;
    switch (ev.kind) {
    case EV_ARRIVAL:
      on_arrival(e, (int)ev.arg);
      break;
    case EV_DISPATCH:
      if (e->dispatch->on_timer)
        e->dispatch->on_timer(e->dispatch_state, ev.arg);
      break;
    case EV_BATCH_AT_NODE:
      cs_engine_on_batch_at_node(e, ev.ptr);
      break;
    case EV_GPU_DONE:
      cs_engine_on_gpu_done(e, (int)ev.arg);
      break;
    case EV_RESULT:
      cs_engine_on_result(e, ev.ptr);
      break;
    case EV_CONTROL:
    case EV_REPLICA_READY:
    case EV_GPU_READY:
      cs_control_on_event(e, &ev);
      break;
    case EV_LLM:
      cs_engine_llm_on_event(e);
      break;
    default:
      g_assert_not_reached();
    }
    if (G_UNLIKELY(e->misuse || e->limit))
      break;
    if (G_UNLIKELY(e->events % progress_every == 0) && e->max_generated > 0 &&
        e->next_id > (uint64_t)e->max_generated) {
      /* cs_run refused runs expected to exceed the limit; this one drew far
       * more than expected (or a caller skipped the check). */
      cs_engine_limit(e, "the run sent more than %" G_GINT64_FORMAT " requests, twice the limit "
                      "of requests a run may send",
                      (gint64)e->max_generated);
      break;
    }
    if (G_UNLIKELY(e->events % progress_every == 0) && e->opt && e->opt->on_progress) {
      double generated = (double)e->next_id;
      double f = e->expected_requests > 0 ? generated / e->expected_requests : 1.0;
      if (!e->opt->on_progress(MIN(f, 1.0), e->now, e->opt->user_data)) {
        e->cancelled = TRUE;
        break;
      }
    }
  }
}

static void teardown(Engine *e)
{
  const CsConfig *cfg = e->cfg;
  cs_control_teardown(e); /* the controller first: it may hold what the policy gave it */
  e->dispatch->destroy(e->dispatch_state);
  g_clear_pointer(&e->policy_rng, gsl_rng_free);
  cs_engine_llm_teardown(e);
  for (int i = 0; i < cfg->n_clients + cfg->n_llm; i++) {
    Client *c = &e->clients[i];
    gsl_rng_free(c->rng);
    cs_samples_free(c->e2e);
    cs_samples_free(c->router_wait);
    for (int s = 0; s < CS_N_STAGES; s++)
      cs_samples_free(c->batch_stage[s]);
    g_array_unref(c->batch_sizes);
    g_clear_pointer(&c->series, g_array_unref);
  }
  g_free(e->clients);
  for (int k = 0; k < cfg->n_clients * e->n_gpu_types; k++)
    g_array_unref(e->latency[k]);
  g_free(e->latency);
  g_free(e->profile);
  g_free(e->gpu_types);
  /* Time series not moved to the results (a run that failed). */
  for (int g = 0; g < cfg->n_gpus; g++) {
    cs_gpu_exec_free(e->gpus[g].exec);
    g_free(e->gpus[g].running);
    g_clear_pointer(&e->gpus[g].workers, g_array_unref);
    g_clear_pointer(&e->gpus[g].bins, g_array_unref);
    g_clear_pointer(&e->gpus[g].sm_bins, g_array_unref);
  }
  g_free(e->gpus);
  cs_used_clear(&e->used);
  for (int w = 0; w < e->n_workers; w++)
    g_clear_pointer(&e->workers[w].bins, g_array_unref);
  g_free(e->workers);
  /* Every batch, also those a stopped run left in flight or in a policy. */
  for (guint i = 0; i < e->batches->len; i++) {
    Batch *b = g_ptr_array_index(e->batches, i);
    g_free(b->reqs);
    g_free(b);
  }
  g_ptr_array_free(e->batches, TRUE);
  cs_ledger_clear(&e->ledger);
  cs_eq_free(e->q);
  g_free(e->misuse);
  g_free(e->limit);
}

CsResults *cs_engine_run(const CsConfig *cfg, FILE *requests_csv, FILE *decisions,
                         const CsRunOptions *opt, GError **error)
{
  Engine e = { .cfg = cfg, .opt = opt, .csv = requests_csv, .decisions = decisions };
  for (size_t i = 0; i < G_N_ELEMENTS(e.net_bytes); i++)
    e.net_bytes[i] = -1;
  gint64 t0 = g_get_monotonic_time();
  if (e.csv)
    fputs("id,model,measured,status,send_ns,dispatch_ns,node_ns,exec_start_ns,exec_end_ns,"
          "receive_ns,latency_ns,slo_met,batch_size,gpu,replica,worker,batch_id\n",
          e.csv);
  int64_t limit = opt && opt->max_requests != 0 ? opt->max_requests : CS_DEFAULT_MAX_REQUESTS;
  e.max_generated = limit > 0 && limit <= INT64_MAX / 2 ? 2 * limit : 0;
  setup(&e);
  run_loop(&e);
  cs_engine_llm_finish(&e);
  /* Every request handed to the policy must leave it exactly once. */
  for (int i = 0; i < cfg->n_clients && !e.misuse && !e.limit && !e.cancelled; i++)
    if (e.clients[i].resolved > e.clients[i].generated)
      cs_engine_misuse(&e, "%" G_GINT64_FORMAT " requests of %s left the policy more than once (sent, "
             "dropped or marked unserved twice)",
             (gint64)(e.clients[i].resolved - e.clients[i].generated), cfg->clients[i].model);
  if (e.misuse || e.limit || e.cancelled) {
    if (e.misuse)
      g_set_error_literal(error, CS_ERROR, CS_ERROR_POLICY, e.misuse);
    else if (e.limit)
      g_set_error_literal(error, CS_ERROR, CS_ERROR_INVALID, e.limit);
    else
      g_set_error(error, CS_ERROR, CS_ERROR_CANCELLED,
                  "run cancelled by the progress callback at %.6f s simulated", e.now * 1e-9);
    teardown(&e);
    return NULL;
  }

  if (e.decisions) {
    /* The last record: when the run ended and each client's measurement
     * window, which a replay needs to count results as the run did. */
    fprintf(e.decisions, "{\"ev\":\"end\",\"at_ns\":%" G_GINT64_FORMAT ",\"windows\":[",
            (gint64)e.now);
    for (int i = 0; i < cfg->n_clients; i++)
      fprintf(e.decisions, "%s{\"start_ns\":%" G_GINT64_FORMAT ",\"end_ns\":%" G_GINT64_FORMAT "}",
              i ? "," : "", (gint64)e.clients[i].window_start_ns,
              (gint64)e.clients[i].window_end_ns);
    fputs("]}\n", e.decisions);
  }
  /* The open bins close into the series (which may double their width
   * once more) before any series moves to the results. */
  int n_all = cfg->n_clients + cfg->n_llm;
  for (int i = 0; i < n_all && e.series; i++) {
    cs_engine_flush_bin(&e.clients[i]);
    cs_engine_check_series(&e, e.clients[i].series);
  }
  CsResults *res = cs_results_alloc(n_all, cfg->n_gpus);
  for (int i = 0; i < n_all; i++) {
    Client *c = &e.clients[i];
    res->model_names[i] = g_strdup(c->cfg->model);
    res->models[i].model = res->model_names[i];
    cs_engine_fill_model_result(&res->models[i], c);
    res->models[i].expected_goodput_rps =
      cfg->placement && i < cfg->n_clients ? cs_placement_expected_goodput(cfg->placement, i)
                                           : NAN;
    g_array_append_vals(res->batch_sizes[i], c->batch_sizes->data, c->batch_sizes->len);
    if (e.series) {
      res->model_series[i] = c->series;
      c->series = NULL;
    }
  }
  int n_replicas = cfg->placement ? cs_placement_n_replicas(cfg->placement) : 0;
  cs_engine_fill_total(res, e.clients);
  for (int g = 0; g < cfg->n_gpus; g++) {
    res->gpus[g].node = cfg->gpus[g].node;
    res->gpus[g].physical = cfg->gpus[g].physical;
    res->gpus[g].mig_instance = cfg->gpus[g].mig_instance;
    res->gpus[g].sm_fraction = cfg->gpus[g].sm_fraction;
    res->gpus[g].memory_fraction = cfg->gpus[g].memory_fraction;
    res->gpus[g].gpu_type = g_strdup(cfg->gpus[g].gpu_type);
    res->gpus[g].busy_ns = e.gpus[g].busy_ns;
    res->gpus[g].batches = e.gpus[g].batches;
    res->gpus[g].preempted = e.gpus[g].preempted;
    res->gpus[g].preempted_ns = e.gpus[g].preempted_ns;
    res->gpus[g].busy_fraction = e.now > 0 ? (double)e.gpus[g].busy_ns / (double)e.now : 0.0;
  }
  /* GPUs used: every GPU is idle now, so every bin is final. */
  cs_used_settle(&e.used, INT64_MAX);
  res->used_bin_ns = cfg->timeseries_bin_ns;
  res->gpus_used_mean = cs_used_mean(&e.used);
  res->gpus_used_max = e.used.max;
  res->has_series = e.series;
  /* Per-GPU and per-worker time series move to the results. */
  res->gpu_bins = g_new0(GArray *, MAX(cfg->n_gpus, 1));
  res->gpu_sm_bins = g_new0(GArray *, MAX(cfg->n_gpus, 1));
  for (int g = 0; g < cfg->n_gpus; g++) {
    if (e.series) {
      res->gpu_bins[g] = e.gpus[g].bins;
      res->gpu_sm_bins[g] = e.gpus[g].sm_bins;
      e.gpus[g].bins = e.gpus[g].sm_bins = NULL;
    }
    res->gpus[g].memory_pct = 0;
  }
  if (e.series)
    res->bin_total = cs_bins_merge(res->gpu_bins, cfg->n_gpus);
  res->n_workers = e.n_workers;
  res->workers = g_new0(CsWorkerResult, MAX(e.n_workers, 1));
  for (int w = 0; w < e.n_workers; w++) {
    CsWorkerResult *wr = &res->workers[w];
    wr->model = g_strdup(cfg->clients[e.workers[w].model].model);
    wr->gpu = e.workers[w].gpu;
    wr->share = e.workers[w].share;
    if (e.series) {
      wr->bins = e.workers[w].bins;
      e.workers[w].bins = NULL;
    }
  }
  for (int r = 0; r < n_replicas; r++)
    if (!(cfg->replica_failed && cfg->replica_failed[r]))
      res->gpus[cs_placement_replica(cfg->placement, r)->gpu].memory_pct +=
        cfg->replica_mreq ? cfg->replica_mreq[r] : 0;
  res->bin_ns = e.bin_ns;
  res->percentile_sketch = cfg->percentile_sketch;
  res->seed = cfg->seed;
  res->sim_time_ns = e.now;
  res->events = e.events;
  res->placement_policy = g_strdup(cfg->placement ? cfg->placement_policy->name : "none");
  res->dispatch_policy = g_strdup(cfg->dispatch->name);
  res->warnings = cs_warning_list_new();
  cs_warning_list_extend(res->warnings, cfg->warnings);
  cs_control_fill_results(&e, res);
  cs_engine_llm_fill_results(&e, res);
  for (int i = 0; i < cfg->n_clients; i++)
    if (e.clients[i].resolved < e.clients[i].generated)
      cs_warning_add(res->warnings, "requests_held", cfg->clients[i].model, -1,
                     "%" G_GINT64_FORMAT " of its %" G_GINT64_FORMAT " requests were still held "
                     "by dispatch policy \"%s\" when the run ended (never sent, dropped or "
                     "marked unserved): they count as not answered",
                     (gint64)(e.clients[i].generated - e.clients[i].resolved),
                     (gint64)e.clients[i].generated, cfg->dispatch->name);
  cs_engine_warn_about_run(res);
  cs_engine_warn_plan_gap(res, e.clients, cfg);

  teardown(&e);
  res->wall_s = (g_get_monotonic_time() - t0) * 1e-6;
  return res;
}
