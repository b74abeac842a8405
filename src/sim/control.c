/* The cluster over time (clustersim/control.h): the run's replicas and their
 * lives (waiting for memory, loading, active, draining, retired), the GPUs'
 * lives (off, provisioning, ready, releasing) and the controller that
 * changes them. The engine's core loop hands this file its three events;
 * the GPU code tells it when a batch leaves a worker, so that a draining
 * replica retires and a releasing GPU goes off once they hold nothing.
 *
 * A run without a controller uses the same replica table (the scenario's
 * placement, every replica active from time 0, every GPU ready), so the
 * dispatch services read one table in every run. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "common/checked.h"
#include "control_internal.h"
#include "engine_state.h"


/* Appends a line of the control log at the current time. */
static void logf_at(ControlState *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void logf_at(ControlState *c, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_string_append_printf(c->log, "%.6f\t", c->e->now * 1e-9);
  g_string_append_vprintf(c->log, fmt, ap);
  g_string_append_c(c->log, '\n');
  va_end(ap);
}

static const char *model_name(const Engine *e, int m)
{
  return e->cfg->clients[m].model;
}

/* Memory of gpu its replicas may hold, in % of the whole GPU's. */
static double capacity(const Engine *e, int g)
{
  return 100.0 * e->cfg->gpus[g].memory_fraction;
}

/* Time to load a replica on gpu: its memory (Mreq x the GPU type's
 * memory) over the host-to-GPU bandwidth, plus the fixed overhead. Mreq
 * counts weights and activation memory: an upper bound of the bytes copied. */
static int64_t load_time(const Engine *e, int g, double mreq_pct)
{
  const CsGpuType *t = cs_profile_set_gpu_type(e->cfg->profiles, e->cfg->gpus[g].gpu_type);
  double bytes = t && t->memory_bytes > 0 ? mreq_pct / 100.0 * (double)t->memory_bytes : 0.0;
  double ns = bytes / e->cfg->host_to_gpu_bytes_per_s * 1e9;
  return cs_i64_add_sat(e->cfg->model_load_overhead_ns, cs_i64_round_sat(ceil(ns)));
}

/* The decision log's record of a replica's or a GPU's new life. */
static void decide_replica(Engine *e, int r, const char *life)
{
  if (G_LIKELY(!e->decisions))
    return;
  const CsReplica *rep = replica_of(e, r);
  fprintf(e->decisions,
          "{\"ev\":\"replica\",\"id\":%d,\"model\":%d,\"gpu\":%d,\"batch\":%d,"
          "\"mps_share\":%.17g,\"life\":\"%s\",\"at_ns\":%" G_GINT64_FORMAT "}\n",
          r, rep->model, rep->gpu, rep->batch, rep->mps_share, life, (gint64)e->now);
}

static void decide_gpu(Engine *e, int g, const char *life)
{
  if (G_LIKELY(!e->decisions))
    return;
  fprintf(e->decisions, "{\"ev\":\"gpu\",\"gpu\":%d,\"life\":\"%s\",\"at_ns\":%" G_GINT64_FORMAT
          "}\n", g, life, (gint64)e->now);
}

static void notify_dispatch(Engine *e)
{
  if (e->dispatch->on_cluster_change)
    e->dispatch->on_cluster_change(e->dispatch_state);
}

/* ---- replicas ------------------------------------------------------------------ */

/* Appends a replica (and its worker) in life WAITING. */
static int add_replica(Engine *e, const CsReplica *rep, double mreq, int64_t load_ns,
                       uint64_t change)
{
  int r = (int)e->replicas->len;
  g_array_append_val(e->replicas, *rep);
  ReplicaLife l = { .life = CS_REPLICA_WAITING, .mreq = mreq, .load_ns = load_ns,
                    .change = change, .added_ns = e->now, .active_ns = -1, .drain_ns = -1,
                    .retired_ns = -1 };
  g_array_append_val(e->replica_life, l);
  decide_replica(e, r, "waiting");
  if (e->n_workers == e->cap_workers) {
    e->cap_workers = MAX(2 * e->cap_workers, 8);
    e->workers = g_renew(Worker, e->workers, e->cap_workers);
  }
  g_assert(r == e->n_workers); /* worker i is replica i in a run with a placement */
  Worker *w = &e->workers[e->n_workers++];
  memset(w, 0, sizeof *w);
  w->model = rep->model;
  w->share = e->cfg->mps ? rep->mps_share : 0.0;
  w->gpu = rep->gpu;
  w->bins = cs_bins_new();
  if (e->gpus[rep->gpu].workers) /* MPS: the GPU starts its workers' batches */
    g_array_append_val(e->gpus[rep->gpu].workers, r);
  w->interference_model = e->cfg->interference
                            ? cs_interference_set_find(e->cfg->interference, model_name(e, rep->model))
                            : -1;
  return r;
}

static void check_gpu_off(Engine *e, int g);
static void start_waiting(Engine *e, int g);

static void retire(Engine *e, int r)
{
  ReplicaLife *l = life_of(e, r);
  const CsReplica *rep = replica_of(e, r);
  gboolean held = l->life != CS_REPLICA_WAITING; /* a waiting replica holds no memory yet */
  if (l->life == CS_REPLICA_LOADING)
    cs_eq_cancel(e->q, l->ready_ev);
  l->life = CS_REPLICA_RETIRED;
  l->retired_ns = e->now;
  decide_replica(e, r, "retired");
  if (held && !e->workers[r].failed)
    e->gpus[rep->gpu].mem_used = MAX(0.0, e->gpus[rep->gpu].mem_used - l->mreq);
  if (e->control)
    logf_at(e->control, "retire replica %d (%s on gpu %d, batch %d)", r,
            model_name(e, rep->model), rep->gpu, rep->batch);
  start_waiting(e, rep->gpu);
  check_gpu_off(e, rep->gpu);
}

static void drain(Engine *e, int r)
{
  ReplicaLife *l = life_of(e, r);
  if (l->life != CS_REPLICA_ACTIVE)
    return;
  l->life = CS_REPLICA_DRAINING;
  l->drain_ns = e->now;
  decide_replica(e, r, "draining");
  l->retire_after = 0;
  if (e->control) {
    e->control->removals++;
    logf_at(e->control, "drain replica %d (%s on gpu %d, batch %d, %d batches left)", r,
            model_name(e, replica_of(e, r)->model), replica_of(e, r)->gpu,
            replica_of(e, r)->batch, e->workers[r].outstanding);
  }
  if (e->workers[r].outstanding == 0)
    retire(e, r);
}

/* Replicas kept active until the replicas of their model added by a change
 * are: drained once none of those is still waiting or loading. */
static void release_superseded(Engine *e, int model)
{
  for (guint r = 0; r < e->replicas->len; r++) {
    ReplicaLife *l = life_of(e, (int)r);
    if (l->retire_after == 0 || replica_of(e, (int)r)->model != model)
      continue;
    gboolean pending = FALSE;
    for (guint q = 0; q < e->replicas->len && !pending; q++) {
      const ReplicaLife *n = life_of(e, (int)q);
      pending = n->change == l->retire_after && replica_of(e, (int)q)->model == model &&
                (n->life == CS_REPLICA_WAITING || n->life == CS_REPLICA_LOADING);
    }
    if (!pending)
      drain(e, (int)r);
  }
}

static void become_active(Engine *e, int r)
{
  ReplicaLife *l = life_of(e, r);
  l->life = CS_REPLICA_ACTIVE;
  l->active_ns = e->now;
  decide_replica(e, r, "active");
  if (e->control)
    logf_at(e->control, "replica %d active (%s on gpu %d, batch %d)", r,
            model_name(e, replica_of(e, r)->model), replica_of(e, r)->gpu, replica_of(e, r)->batch);
  release_superseded(e, replica_of(e, r)->model);
}

/* Starts loading the waiting replicas of gpu that fit in its free memory, in
 * replica order. When one does not fit, the replicas of the GPU kept active
 * only until their successors are ready (make before break) drain now: their
 * memory is what the new ones wait for. */
static void start_waiting(Engine *e, int g)
{
  Gpu *gpu = &e->gpus[g];
  if (gpu->life != CS_GPU_READY)
    return;
  gboolean short_of_memory = FALSE;
  for (guint r = 0; r < e->replicas->len; r++) {
    ReplicaLife *l = life_of(e, (int)r);
    const CsReplica *rep = replica_of(e, (int)r);
    if (l->life != CS_REPLICA_WAITING || rep->gpu != g)
      continue;
    if (gpu->mem_used + l->mreq > capacity(e, g) + 1e-9) {
      short_of_memory = TRUE;
      continue;
    }
    gpu->mem_used += l->mreq;
    if (e->control) {
      e->control->added++;
      e->control->loads += l->load_ns > 0;
      e->control->load_ns_total += l->load_ns;
      logf_at(e->control, "load replica %d (%s on gpu %d, batch %d, Mreq %.2f %%): %.3f s", (int)r,
              model_name(e, rep->model), g, rep->batch, l->mreq, l->load_ns * 1e-9);
    }
    if (l->load_ns == 0) {
      become_active(e, (int)r);
      continue;
    }
    l->life = CS_REPLICA_LOADING;
    decide_replica(e, (int)r, "loading");
    l->ready_ev = cs_eq_push(e->q, cs_i64_add_sat(e->now, l->load_ns), EV_REPLICA_READY,
                             (uint32_t)r, NULL);
  }
  if (!short_of_memory)
    return;
  for (guint r = 0; r < e->replicas->len; r++)
    if (life_of(e, (int)r)->retire_after != 0 && replica_of(e, (int)r)->gpu == g)
      drain(e, (int)r);
}

/* ---- GPUs ---------------------------------------------------------------------- */

static void gpu_on(Engine *e, int g)
{
  e->gpus[g].on_since = e->now;
}

static void gpu_off(Engine *e, int g)
{
  Gpu *gpu = &e->gpus[g];
  int64_t span[2] = { gpu->on_since, e->now };
  g_array_append_vals(gpu->on_spans, span, 2);
  gpu->on_since = -1;
  gpu->life = CS_GPU_OFF;
  decide_gpu(e, g, "off");
  if (e->control)
    logf_at(e->control, "gpu %d off", g);
}

/* A releasing GPU is off once no replica on it is left and no batch. */
static void check_gpu_off(Engine *e, int g)
{
  Gpu *gpu = &e->gpus[g];
  if (gpu->life != CS_GPU_RELEASING || gpu->in_transfer + gpu->queued + gpu->n_running > 0)
    return;
  for (guint r = 0; r < e->replicas->len; r++)
    if (replica_of(e, (int)r)->gpu == g && life_of(e, (int)r)->life != CS_REPLICA_RETIRED)
      return;
  gpu_off(e, g);
  notify_dispatch(e);
}

gboolean cs_control_gpu_takes_work(const Engine *e, int g)
{
  return e->gpus[g].life == CS_GPU_READY;
}

/* ---- setup and events -------------------------------------------------------- */

void cs_control_setup(Engine *e)
{
  const CsConfig *cfg = e->cfg;
  e->replicas = g_array_new(FALSE, FALSE, sizeof(CsReplica));
  e->replica_life = g_array_new(FALSE, FALSE, sizeof(ReplicaLife));
  int on = cfg->controller && cfg->controller->scales_gpus ? cfg->initial_gpus : cfg->n_gpus;
  for (int g = 0; g < cfg->n_gpus; g++) {
    Gpu *gpu = &e->gpus[g];
    gpu->on_spans = g_array_new(FALSE, FALSE, sizeof(int64_t));
    gpu->life = g < on ? CS_GPU_READY : CS_GPU_OFF;
    gpu->on_since = g < on ? 0 : -1;
  }
  for (int r = 0; cfg->placement && r < cs_placement_n_replicas(cfg->placement); r++) {
    g_array_append_val(e->replicas, *cs_placement_replica(cfg->placement, r));
    double mreq = cfg->replica_mreq ? cfg->replica_mreq[r] : 0.0;
    ReplicaLife l = { .life = CS_REPLICA_ACTIVE, .mreq = mreq, .added_ns = 0, .active_ns = 0,
                      .drain_ns = -1, .retired_ns = -1 };
    g_array_append_val(e->replica_life, l);
    if (!(cfg->replica_failed && cfg->replica_failed[r]))
      e->gpus[cs_placement_replica(cfg->placement, r)->gpu].mem_used += mreq;
    decide_replica(e, r, "active");
  }
  for (int g = 0; cfg->controller && cfg->controller->scales_gpus && g < cfg->n_gpus; g++)
    decide_gpu(e, g, g < on ? "ready" : "off");
  if (!cfg->controller)
    return;
  ControlState *c = g_new0(ControlState, 1);
  c->e = e;
  c->policy = cfg->controller;
  c->log = g_string_new(NULL);
  c->warnings = cs_warning_list_new();
  e->control = c;
}

/* After the dispatch policy exists: the controller sets its first timers. */
void cs_control_start(Engine *e)
{
  if (e->control)
    e->control->state =
      e->control->policy->create(e->control, e->cfg->controller_params, e->cfg->controller_user_data);
}

void cs_control_teardown(Engine *e)
{
  ControlState *c = e->control;
  if (c) {
    if (c->policy->destroy)
      c->policy->destroy(c->state);
    g_string_free(c->log, TRUE);
    cs_warning_list_free(c->warnings);
    g_free(c);
    e->control = NULL;
  }
  for (int g = 0; g < e->cfg->n_gpus; g++)
    g_clear_pointer(&e->gpus[g].on_spans, g_array_unref);
  g_clear_pointer(&e->replicas, g_array_unref);
  g_clear_pointer(&e->replica_life, g_array_unref);
}

/* Models to load on a GPU a centralized policy may use: every model. */
static int64_t load_every_model(Engine *e, int g)
{
  int64_t sum = 0;
  for (int m = 0; m < e->cfg->n_clients; m++) {
    const CsModelProfile *p = e->profile[m * e->n_gpu_types + e->gpus[g].type];
    const CsBatchPoint *first = p && p->n_points > 0 ? &p->points[0] : NULL;
    double mreq = cs_model_profile_mreq_pct(p, first ? first->batch : 1);
    sum = cs_i64_add_sat(sum, load_time(e, g, mreq));
  }
  return sum;
}

void cs_control_on_event(Engine *e, const CsEvent *ev)
{
  ControlState *c = e->control;
  switch (ev->kind) {
  case EV_CONTROL:
    c->pending--;
    /* The controller's timers do not keep a run alive: with nothing else
     * pending, the run is over. */
    if (cs_eq_size(e->q) > (size_t)c->pending)
      c->policy->on_timer(c->state, ev->arg);
    break;
  case EV_REPLICA_READY:
    become_active(e, (int)ev->arg);
    notify_dispatch(e);
    break;
  case EV_GPU_READY: {
    Gpu *gpu = &e->gpus[ev->arg];
    gpu->life = CS_GPU_READY;
    gpu->ready_ev = CS_EVENT_HANDLE_NONE;
    decide_gpu(e, (int)ev->arg, "ready");
    logf_at(c, "gpu %u ready", ev->arg);
    start_waiting(e, (int)ev->arg);
    notify_dispatch(e);
    break;
  }
  default:
    g_assert_not_reached();
  }
}

void cs_control_after_batch(Engine *e, int w, int g)
{
  if (w >= 0 && w < (int)e->replicas->len) {
    ReplicaLife *l = life_of(e, w);
    if (l->life == CS_REPLICA_DRAINING && e->workers[w].outstanding == 0) {
      retire(e, w);
      notify_dispatch(e);
      return;
    }
  }
  check_gpu_off(e, g);
}

/* ---- the controller's services (control.h) ------------------------------------ */

CsTimer cs_control_timer(CsControl *c, int64_t at_ns, uint32_t arg)
{
  g_return_val_if_fail(c != NULL, (CsTimer)0);
  c->pending++;
  return cs_timer_pack(cs_eq_push(c->e->q, MAX(at_ns, c->e->now), EV_CONTROL, arg, NULL));
}

gboolean cs_control_cancel(CsControl *c, CsTimer t)
{
  g_return_val_if_fail(c != NULL, FALSE);
  gboolean was = cs_eq_cancel_kind(c->e->q, cs_timer_unpack(t), EV_CONTROL);
  c->pending -= was;
  return was;
}

void cs_control_warn(CsControl *c, const char *code, const char *model, int gpu, const char *fmt,
                     ...)
{
  g_return_if_fail(c != NULL && code != NULL && fmt != NULL);
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  cs_warning_add(c->warnings, code, model, gpu, "%s (at %.3f s simulated)", msg, c->e->now * 1e-9);
  logf_at(c, "warning %s: %s", code, msg);
  g_free(msg);
}

void cs_control_note(CsControl *c, const char *fmt, ...)
{
  g_return_if_fail(c != NULL && fmt != NULL);
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  logf_at(c, "%s", msg);
  g_free(msg);
}

CsPlacement *cs_control_place(CsControl *c, const double *rates, GError **error)
{
  g_return_val_if_fail(c != NULL, NULL);
  Engine *e = c->e;
  const CsConfig *cfg = e->cfg;
  if (!cfg->placement_policy) {
    g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                "cs_control_place: dispatch \"%s\" uses no placement", cfg->dispatch->name);
    return NULL;
  }
  /* The policy sees the GPUs that are or will be ready, renumbered. */
  int *ids = g_new0(int, MAX(cfg->n_gpus, 1));
  CsPlacementGpu *gpus = g_new0(CsPlacementGpu, MAX(cfg->n_gpus, 1));
  int n = 0;
  for (int g = 0; g < cfg->n_gpus; g++)
    if (e->gpus[g].life == CS_GPU_READY || e->gpus[g].life == CS_GPU_PROVISIONING) {
      ids[n] = g;
      gpus[n++] = (CsPlacementGpu){ .gpu_type = cfg->gpus[g].gpu_type, .node = cfg->gpus[g].node };
    }
  CsPlacementModel *models = g_new0(CsPlacementModel, MAX(cfg->n_clients, 1));
  for (int m = 0; m < cfg->n_clients; m++)
    models[m] = (CsPlacementModel){ .name = cfg->clients[m].model,
                                    .rate_rps = rates ? rates[m] : cfg->clients[m].planned_rate_rps,
                                    .slo_ms = cfg->clients[m].slo_ms };
  CsPlacementGpuModel gm = { .mps = cfg->mps, .mps_gamma = cfg->mps_gamma,
                            .mps_share_power = cfg->mps_share_power,
                             .interference = cfg->interference,
                             .interference_name = cfg->interference_desc };
  CsPlacementProblem pb = { .models = models, .n_models = cfg->n_clients, .gpus = gpus,
                            .n_gpus = n, .profiles = cfg->profiles, .gpu_model = &gm };
  CsPlacement *p = NULL;
  for (int m = 0; m < cfg->n_clients && rates; m++)
    if (!(isfinite(rates[m]) && rates[m] >= 0)) {
      g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                  "cs_control_place: rate %g for %s: expected a finite number >= 0", rates[m],
                  cfg->clients[m].model);
      goto out;
    }
  CsPlacement *local = cfg->place_again(cfg, &pb, error);
  if (local) {
    /* Back to the cluster's GPU numbers. */
    p = cs_placement_new(cfg->n_clients);
    for (int i = 0; i < cs_placement_n_replicas(local); i++) {
      const CsReplica *r = cs_placement_replica(local, i);
      cs_placement_add(p, r->model, ids[r->gpu], r->batch, r->mps_share);
    }
    for (int m = 0; m < cfg->n_clients; m++)
      cs_placement_set_expected_goodput(p, m, cs_placement_expected_goodput(local, m));
    cs_placement_log(p, "%s", cs_placement_log_text(local));
    cs_placement_free(local);
  }
out:
  g_free(ids);
  g_free(gpus);
  g_free(models);
  return p;
}

static gboolean same_replica(const CsReplica *a, const CsReplica *b)
{
  return a->model == b->model && a->gpu == b->gpu && a->batch == b->batch &&
         fabs(a->mps_share - b->mps_share) < 1e-12;
}

/* Checks that p can run on the cluster as it is now. */
static gboolean check_apply(Engine *e, const CsPlacement *p, GError **error)
{
  const CsConfig *cfg = e->cfg;
  if (!p || cs_placement_n_models(p) != cfg->n_clients) {
    g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                "cs_control_apply: expected a placement for the run's %d models", cfg->n_clients);
    return FALSE;
  }
  double *mem = g_new0(double, MAX(cfg->n_gpus, 1));
  gboolean ok = TRUE;
  for (int i = 0; ok && i < cs_placement_n_replicas(p); i++) {
    const CsReplica *r = cs_placement_replica(p, i);
    const char *what = NULL;
    if (r->model < 0 || r->model >= cfg->n_clients)
      what = "its model is out of range";
    else if (r->gpu < 0 || r->gpu >= cfg->n_gpus)
      what = "its GPU is out of range";
    else if (e->gpus[r->gpu].life == CS_GPU_OFF || e->gpus[r->gpu].life == CS_GPU_RELEASING)
      what = "its GPU is off or being released";
    else if (r->batch < 1 || !(r->mps_share >= 0 && r->mps_share <= 1))
      what = "its batch is below 1 or its share outside [0, 1]";
    else if (!e->profile[r->model * e->n_gpu_types + e->gpus[r->gpu].type])
      what = "its model has no profile on the GPU's type";
    if (what) {
      g_set_error(error, CS_ERROR, CS_ERROR_POLICY, "cs_control_apply: replica %d (model %d, gpu "
                  "%d, batch %d): %s", i, r->model, r->gpu, r->batch, what);
      ok = FALSE;
      break;
    }
    mem[r->gpu] += cs_model_profile_mreq_pct(e->profile[r->model * e->n_gpu_types + e->gpus[r->gpu].type],
                                             r->batch);
  }
  for (int g = 0; ok && g < cfg->n_gpus; g++)
    if (mem[g] > capacity(e, g) + 1e-9) {
      g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                  "cs_control_apply: the replicas on gpu %d need %.2f %% of its memory, over the "
                  "%.4g %% it has", g, mem[g], capacity(e, g));
      ok = FALSE;
    }
  g_free(mem);
  return ok;
}

static gboolean is_live(const ReplicaLife *l)
{
  return l->life == CS_REPLICA_WAITING || l->life == CS_REPLICA_LOADING ||
         l->life == CS_REPLICA_ACTIVE;
}

int cs_control_apply(CsControl *c, const CsPlacement *p, GError **error)
{
  g_return_val_if_fail(c != NULL && p != NULL, -1);
  Engine *e = c->e;
  if (!check_apply(e, p, error))
    return -1;
  guint n_old = e->replicas->len, n_new = (guint)cs_placement_n_replicas(p);
  gboolean *kept = g_new0(gboolean, MAX(n_old, 1));
  gboolean *matched = g_new0(gboolean, MAX(n_new, 1));
  /* A live replica equal to one of p's stays (first equal, in replica order). */
  for (guint j = 0; j < n_new; j++) {
    const CsReplica *want = cs_placement_replica(p, (int)j);
    for (guint r = 0; r < n_old && !matched[j]; r++)
      if (!kept[r] && is_live(life_of(e, (int)r)) && same_replica(replica_of(e, (int)r), want))
        kept[r] = matched[j] = TRUE;
  }
  int added = 0, removed = 0;
  for (guint j = 0; j < n_new; j++)
    added += !matched[j];
  for (guint r = 0; r < n_old; r++)
    removed += !kept[r] && is_live(life_of(e, (int)r));
  if (added + removed == 0) {
    for (guint r = 0; r < n_old; r++)
      life_of(e, (int)r)->retire_after = 0; /* all of them stay */
    g_free(kept);
    g_free(matched);
    return 0;
  }
  uint64_t change = ++c->changes;
  logf_at(c, "change %" G_GUINT64_FORMAT ": %d replica(s) added, %d removed", (guint64)change,
          added, removed);
  gboolean *model_grows = g_new0(gboolean, MAX(e->cfg->n_clients, 1));
  for (guint j = 0; j < n_new; j++) {
    if (matched[j])
      continue;
    const CsReplica *rep = cs_placement_replica(p, (int)j);
    /* Weights already on the GPU (a replica of the model there, in any
     * life but retired) need no load: only the replica's memory changes. */
    gboolean weights_there = FALSE;
    for (guint r = 0; r < n_old && !weights_there; r++) {
      const ReplicaLife *l = life_of(e, (int)r);
      weights_there = l->life != CS_REPLICA_RETIRED && l->life != CS_REPLICA_WAITING &&
                      replica_of(e, (int)r)->model == rep->model && replica_of(e, (int)r)->gpu == rep->gpu;
    }
    double mreq =
      cs_model_profile_mreq_pct(e->profile[rep->model * e->n_gpu_types + e->gpus[rep->gpu].type],
                                rep->batch);
    add_replica(e, rep, mreq, weights_there ? 0 : load_time(e, rep->gpu, mreq), change);
    model_grows[rep->model] = TRUE;
  }
  for (guint r = 0; r < n_old; r++) {
    ReplicaLife *l = life_of(e, (int)r);
    if (kept[r]) {
      l->retire_after = 0;
      continue;
    }
    if (!is_live(l))
      continue;
    if (l->life != CS_REPLICA_ACTIVE) {
      retire(e, (int)r); /* never served: nothing to wait for */
      c->removals++;
    } else if (model_grows[replica_of(e, (int)r)->model]) {
      l->retire_after = change; /* make before break */
    } else {
      drain(e, (int)r);
    }
  }
  for (int g = 0; g < e->cfg->n_gpus; g++)
    start_waiting(e, g);
  for (int m = 0; m < e->cfg->n_clients; m++)
    if (model_grows[m])
      release_superseded(e, m);
  g_free(model_grows);
  g_free(kept);
  g_free(matched);
  notify_dispatch(e);
  return added + removed;
}

gboolean cs_control_provision_gpu(CsControl *c, int g, int64_t delay_ns)
{
  g_return_val_if_fail(c != NULL, FALSE);
  Engine *e = c->e;
  if (g < 0 || g >= e->cfg->n_gpus || e->gpus[g].life != CS_GPU_OFF)
    return FALSE;
  Gpu *gpu = &e->gpus[g];
  gpu->life = CS_GPU_PROVISIONING;
  decide_gpu(e, g, "provisioning");
  gpu_on(e, g);
  int64_t at = cs_i64_add_sat(e->now, MAX(delay_ns, 0));
  if (!e->cfg->placement)
    at = cs_i64_add_sat(at, load_every_model(e, g));
  gpu->ready_ev = cs_eq_push(e->q, at, EV_GPU_READY, (uint32_t)g, NULL);
  c->provisions++;
  logf_at(c, "provision gpu %d: ready at %.6f s", g, at * 1e-9);
  return TRUE;
}

gboolean cs_control_release_gpu(CsControl *c, int g)
{
  g_return_val_if_fail(c != NULL, FALSE);
  Engine *e = c->e;
  if (g < 0 || g >= e->cfg->n_gpus)
    return FALSE;
  Gpu *gpu = &e->gpus[g];
  if (gpu->life == CS_GPU_PROVISIONING) {
    cs_eq_cancel(e->q, gpu->ready_ev);
    c->releases++;
    logf_at(c, "release gpu %d (still provisioning)", g);
    gpu_off(e, g);
    return TRUE;
  }
  if (gpu->life != CS_GPU_READY)
    return FALSE;
  gpu->life = CS_GPU_RELEASING;
  decide_gpu(e, g, "releasing");
  c->releases++;
  logf_at(c, "release gpu %d", g);
  for (guint r = 0; r < e->replicas->len; r++) {
    ReplicaLife *l = life_of(e, (int)r);
    if (replica_of(e, (int)r)->gpu != g)
      continue;
    if (l->life == CS_REPLICA_WAITING || l->life == CS_REPLICA_LOADING)
      retire(e, (int)r);
    else
      drain(e, (int)r);
  }
  check_gpu_off(e, g);
  notify_dispatch(e);
  return TRUE;
}

/* ---- results -------------------------------------------------------------------- */

void cs_control_fill_results(Engine *e, CsResults *res)
{
  /* GPU time is charged over the longest measurement window (the one the
   * total goodput is measured over; the first of equal ones). */
  int64_t from = 0, to = 0;
  for (int i = 0; i < e->cfg->n_clients; i++) {
    const Client *cl = &e->clients[i];
    if (cl->window_end_ns - cl->window_start_ns > to - from) {
      from = cl->window_start_ns;
      to = cl->window_end_ns;
    }
  }
  for (int g = 0; g < e->cfg->n_gpus; g++) {
    Gpu *gpu = &e->gpus[g];
    if (gpu->on_since >= 0) { /* still on at the end */
      int64_t span[2] = { gpu->on_since, MAX(e->now, to) };
      g_array_append_vals(gpu->on_spans, span, 2);
    }
    int64_t billed = 0;
    for (guint i = 0; i + 1 < gpu->on_spans->len; i += 2) {
      int64_t a = MAX(g_array_index(gpu->on_spans, int64_t, i), from);
      int64_t b = MIN(g_array_index(gpu->on_spans, int64_t, i + 1), to);
      billed += MAX(b - a, 0);
    }
    res->gpus[g].billed_ns = billed;
    res->gpus[g].on_spans = gpu->on_spans;
    gpu->on_spans = NULL;
  }
  ControlState *c = e->control;
  if (!c)
    return;
  res->control = g_new0(CsControlResult, 1);
  CsControlResult *cr = res->control;
  cr->policy = g_strdup(c->policy->name);
  cr->changes = (int64_t)c->changes;
  cr->added = c->added;
  cr->loads = c->loads;
  cr->removals = c->removals;
  cr->provisions = c->provisions;
  cr->releases = c->releases;
  cr->load_s_total = c->load_ns_total * 1e-9;
  cr->replicas_total = (int)e->replicas->len;
  res->replica_spans = g_array_new(FALSE, FALSE, sizeof(CsReplicaSpan));
  for (guint r = 0; r < e->replicas->len; r++) {
    const ReplicaLife *l = life_of(e, (int)r);
    CsReplicaSpan sp = { .replica = *replica_of(e, (int)r), .added_ns = l->added_ns,
                         .active_ns = l->active_ns, .drain_ns = l->drain_ns,
                         .retired_ns = l->retired_ns };
    g_array_append_val(res->replica_spans, sp);
  }
  cr->log = g_string_free(c->log, FALSE);
  c->log = g_string_new(NULL);
  cs_warning_list_extend(res->warnings, c->warnings);
}
