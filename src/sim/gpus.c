/* The GPUs of the simulated world: a batch reaching its node (deferred start,
 * failed replicas), each GPU's FIFO of waiting batches, starting batches
 * (MIG speed, the execution model of gpu_exec.h) and finishing them (result
 * sent back), and the accounting of SM use, busy time and GPUs used per
 * time-series bin. */
#include <math.h>

#include "common/checked.h"
#include "engine_state.h"
#include "profiles/mig_table.h"
#include "profiles/share_rule.h"

/* ---- node, worker, GPU ------------------------------------------------------ */

/* Adds SM use (fraction of the GPU's SMs, from the execution model) held over
 * [start, end) to GPU g's bins. */
static void account_sm(Engine *e, int g, int64_t start, int64_t end, double sm)
{
  if (!e->series || end <= start || sm <= 0)
    return;
  cs_bins_add_span(e->gpus[g].sm_bins, e->bin_ns, start, end, sm);
  cs_engine_check_series(e, e->gpus[g].sm_bins);
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
  Gpu *gpu = &e->gpus[g];
  gpu->sm_use = cs_gpu_exec_sm_use(gpu->exec);
  if (e->opt && e->opt->on_gpu) {
    CsGpuState st = { .gpu = g, .time_ns = e->now, .running = gpu->n_running,
                      .queued = gpu->queued, .sm_use = gpu->sm_use };
    e->opt->on_gpu(&st, e->opt->user_data);
  }
}

/* What the dispatch policy and the observers learn of a batch. */
static CsBatchEvent batch_event(const Batch *b)
{
  CsBatchEvent ev = { .model = b->model, .gpu = b->gpu, .replica = b->replica, .size = b->n,
                      .dispatch_ns = b->dispatch_ns, .node_ns = b->node_ns,
                      .start_ns = b->start_ns, .end_ns = b->end_ns, .batch_id = b->id,
                      .worker = b->worker };
  return ev;
}

/* Settles the GPUs-used count (used.h) up to the bin of now: the GPUs busy
 * now first add their busy periods so far, so that no later period reaches
 * back before now's bin. O(GPUs), once per 2 x GPUs + 2,048 busy periods. */
static void settle_used(Engine *e)
{
  for (int g = 0; g < e->cfg->n_gpus; g++)
    if (e->gpus[g].busy_since >= 0)
      cs_used_add(&e->used, g, e->gpus[g].busy_since, e->now);
  cs_used_settle(&e->used, e->now / e->used.bin_ns);
}

/* Adds a busy period [start, end) of GPU g (at least one batch running) to
 * the GPUs-used count and its time series. A GPU's busy periods arrive in
 * time order. */
static void account_bins(Engine *e, int g, int64_t start, int64_t end)
{
  if (cs_used_add(&e->used, g, start, end))
    settle_used(e);
  if (e->series) {
    cs_bins_add_span(e->gpus[g].bins, e->bin_ns, start, end, 0.0);
    cs_engine_check_series(e, e->gpus[g].bins);
  }
}

/* Coarsens every series of the run once; see engine_state.h. */
static void coarsen_once(Engine *e)
{
  for (int g = 0; g < e->cfg->n_gpus; g++) {
    GArray *busy = cs_bins_coarsen(e->gpus[g].bins), *sm = cs_bins_coarsen(e->gpus[g].sm_bins);
    g_array_unref(e->gpus[g].bins);
    g_array_unref(e->gpus[g].sm_bins);
    e->gpus[g].bins = busy;
    e->gpus[g].sm_bins = sm;
  }
  for (int w = 0; w < e->n_workers; w++) {
    GArray *bins = cs_bins_coarsen(e->workers[w].bins);
    g_array_unref(e->workers[w].bins);
    e->workers[w].bins = bins;
  }
  e->bin_ns *= 2;
  for (int i = 0; i < e->cfg->n_clients; i++) {
    Client *c = &e->clients[i];
    GArray *s = cs_bins_coarsen(c->series);
    g_array_unref(c->series);
    c->series = s;
    /* The open bin's counts belong to the wide bin holding it. */
    if (c->open_bin >= 0) {
      c->open_bin /= 2;
      c->bin_start = c->open_bin * e->bin_ns;
      c->bin_end = cs_i64_add_sat(c->bin_start, e->bin_ns);
    }
  }
}

static gboolean series_too_long(const Engine *e)
{
  for (int g = 0; g < e->cfg->n_gpus; g++)
    if (e->gpus[g].bins->len >= CS_SERIES_MAX_RUNS || e->gpus[g].sm_bins->len >= CS_SERIES_MAX_RUNS)
      return TRUE;
  for (int w = 0; w < e->n_workers; w++)
    if (e->workers[w].bins->len >= CS_SERIES_MAX_RUNS)
      return TRUE;
  for (int i = 0; i < e->cfg->n_clients; i++)
    if (e->clients[i].series->len >= CS_SERIES_MAX_RUNS)
      return TRUE;
  return FALSE;
}

void cs_engine_coarsen_series(Engine *e)
{
  /* Each doubling leaves a series at most as many runs as its wide bins
   * hold something, so the loop ends by the time one bin spans the run. */
  do
    coarsen_once(e);
  while (series_too_long(e));
}

/* Compute demand d of a batch of n: the model's WSM at that batch size, or at
 * the nearest profiled batch size; NAN (the GPU model's default) if unknown. */
static double batch_demand(Engine *e, int model, int g, int n)
{
  const CsBatchPoint *best =
    cs_model_profile_nearest_point(e->profile[model * e->n_gpu_types + e->gpus[g].type], n);
  return best ? best->creq_pct[CS_CREQ_WSM] / 100.0 : NAN;
}

/* Closes GPU g's busy period when nothing runs on it any more. */
static void end_busy_period_if_idle(Engine *e, int g)
{
  Gpu *gpu = &e->gpus[g];
  if (gpu->n_running == 0) {
    gpu->busy_ns += e->now - gpu->busy_since;
    account_bins(e, g, gpu->busy_since, e->now);
    gpu->busy_since = -1;
  }
}

static void gpu_rearm(Engine *e, int g)
{
  Gpu *gpu = &e->gpus[g];
  cs_eq_cancel(e->q, gpu->done);
  gpu->done = CS_EVENT_HANDLE_NONE;
  int64_t t;
  uint64_t job;
  if (cs_gpu_exec_next(gpu->exec, &t, &job))
    gpu->done = eq_push(e->q, MAX(t, e->now), EV_GPU_DONE, (uint32_t)g, NULL);
}

/* A batch of n on MIG instance g (docs/gpu-model.md, "MIG"): where the
 * interference data measured the model at the instance's size, its isolated
 * latency times the measured ratio to the whole GPU, and the measured ratios
 * of several processes into spec; elsewhere times the MIG rule's ratio
 * (mig_table.h). Instances do not interfere. Saturates (then refused as too
 * late). */
static int64_t mig_iso_ns(Engine *e, int g, const Worker *w, const CsModelProfile *prof, int n,
                          int64_t iso, CsGpuJobSpec *spec)
{
  double f = e->cfg->gpus[g].sm_fraction;
  const CsMigTable *t = cs_interference_mig(e->cfg->interference, w->interference_model);
  int gpcs = cs_mig_table_size(t, f);
  double ratio;
  if (gpcs > 0) {
    ratio = cs_mig_table_iso_ratio(t, gpcs, n);
    if (!isnan(cs_mig_table_procs_ratio(t, gpcs, n, 2))) {
      spec->n_procs = CS_GPU_PROCS_MAX;
      for (int p = 1; p <= CS_GPU_PROCS_MAX; p++)
        spec->procs_ratio[p - 1] = cs_mig_table_procs_ratio(t, gpcs, n, p);
    }
  } else {
    ratio = prof ? cs_mig_rule_ratio(prof, n, f, CS_MIG_RULE_DEFAULT_KAPPA) : NAN;
    if (isnan(ratio)) { /* a profile without a usable curve: all of it scales */
      ratio = f < 1.0 ? 1.0 / f : 1.0;
    } else {
      /* Several batches of the model at once on the instance cost what one
       * batch of their sum costs (the rule's processes, mig_table.h). */
      spec->n_procs = CS_GPU_PROCS_MAX;
      for (int p = 1; p <= CS_GPU_PROCS_MAX; p++)
        spec->procs_ratio[p - 1] =
          cs_mig_rule_procs_ratio(prof, n, f, CS_MIG_RULE_DEFAULT_KAPPA, p);
    }
  }
  return ratio == 1.0 ? iso : cs_i64_round_sat(ceil((double)iso * ratio));
}

static void gpu_start(Engine *e, int g, Batch *b)
{
  Gpu *gpu = &e->gpus[g];
  Worker *w = &e->workers[b->worker];
  b->state = BATCH_RUNNING;
  b->start_ns = e->now;
  b->job = e->next_job++;
  double demand = batch_demand(e, b->model, g, b->n);
  int64_t iso = cs_engine_exec_ns(e, b->model, g, b->n);
  const CsModelProfile *prof = e->profile[b->model * e->n_gpu_types + e->gpus[g].type];
  CsGpuJobSpec spec = { 0 };
  if (e->cfg->gpus[g].mig_instance >= 0)
    iso = mig_iso_ns(e, g, w, prof, b->n, iso, &spec);
  b->iso_ns = iso;
  /* The fixed part feeds the share rule under a share and the interference
   * model's victim term when its data has one; looked up only then. */
  gboolean needs_fixed = (w->share > 0.0 && w->share < 1.0) ||
                         cs_gpu_exec_fallback(gpu->exec)->fixed_exponent != 0.0;
  double scalable = prof && needs_fixed ? cs_share_scalable_fraction(prof, b->n) : NAN;
  spec.model = w->interference_model;
  spec.batch = b->n;
  spec.iso_ns = iso;
  spec.demand = demand;
  spec.share = w->share;
  spec.worker = b->worker;
  spec.fixed = isnan(scalable) ? 0.0 : 1.0 - scalable;
  spec.group = b->model;
  gpu_changing(e, g);
  cs_gpu_exec_start(gpu->exec, e->now, b->job, &spec);
  w->busy = TRUE;
  if (gpu->n_running == gpu->cap_running) {
    gpu->cap_running = gpu->cap_running ? 2 * gpu->cap_running : 4;
    gpu->running = g_renew(Batch *, gpu->running, gpu->cap_running);
  }
  gpu->running[gpu->n_running++] = b;
  gpu->queued--;
  w->queued--;
  w->waiting_requests -= b->n;
  w->running_requests = b->n;
  gpu_changed(e, g);
  if (gpu->busy_since < 0)
    gpu->busy_since = e->now;
  if (e->dispatch->on_batch_start) {
    CsBatchEvent ev = batch_event(b);
    e->dispatch->on_batch_start(e->dispatch_state, &ev);
  }
}

/* Starts every waiting batch the GPU accepts now, in arrival order: with
 * time-slicing only the head when the GPU is idle; with MPS the first batch
 * of every idle worker (a worker runs one batch at a time, so its batches
 * keep their order), those that arrived first first. */
static void gpu_dispatch(Engine *e, int g)
{
  Gpu *gpu = &e->gpus[g];
  gboolean started = FALSE;
  if (gpu->time_slice) {
    Batch *b = gpu->head;
    if (b && !e->workers[b->worker].busy && cs_gpu_exec_accepts(gpu->exec, b->worker)) {
      gpu->head = b->next;
      if (gpu->tail == b)
        gpu->tail = NULL;
      b->next = NULL;
      gpu_start(e, g, b);
      started = TRUE;
    }
  } else {
    for (;;) {
      Worker *best = NULL;
      for (guint i = 0; i < gpu->workers->len; i++) {
        Worker *w = &e->workers[g_array_index(gpu->workers, int, i)];
        if (w->qhead && !w->busy && (!best || w->qhead->seq < best->qhead->seq) &&
            cs_gpu_exec_accepts(gpu->exec, w->qhead->worker))
          best = w;
      }
      if (!best)
        break;
      Batch *b = best->qhead;
      best->qhead = b->next;
      if (best->qtail == b)
        best->qtail = NULL;
      b->next = NULL;
      gpu_start(e, g, b);
      started = TRUE;
    }
  }
  if (started)
    gpu_rearm(e, g);
}

/* Queues b at its GPU (at the end of its worker's queue under MPS). */
static void enqueue(Engine *e, Gpu *gpu, Batch *b)
{
  b->state = BATCH_QUEUED;
  b->seq = e->next_seq++;
  b->next = NULL;
  Batch **head = gpu->time_slice ? &gpu->head : &e->workers[b->worker].qhead;
  Batch **tail = gpu->time_slice ? &gpu->tail : &e->workers[b->worker].qtail;
  if (*tail)
    (*tail)->next = b;
  else
    *head = b;
  *tail = b;
}

void cs_engine_on_batch_at_node(Engine *e, Batch *b)
{
  if (b->state == BATCH_PREEMPTED) {
    batch_release(e, b); /* its counters were settled when it was stopped */
    return;
  }
  if (b->node_ns < 0) {
    b->node_ns = e->now;
    e->gpus[b->gpu].in_transfer--;
    e->gpus[b->gpu].queued++;
    e->workers[b->worker].in_transfer--;
    e->workers[b->worker].queued++;
  }
  if (b->not_before_ns > e->now) {
    /* The dispatcher asked for a later start: the batch waits at the worker. */
    b->state = BATCH_WAITING;
    eq_push(e->q, b->not_before_ns, EV_BATCH_AT_NODE, 0, b);
    return;
  }
  int g = b->gpu;
  Gpu *gpu = &e->gpus[g];
  if (e->workers[b->worker].failed) {
    /* The replica did not fit in the GPU's memory: its requests fail. */
    for (int i = 0; i < b->n; i++)
      cs_engine_fail(e, b->model, &b->reqs[i]);
    gpu->queued--;
    int w = b->worker;
    e->workers[w].outstanding--;
    e->workers[w].queued--;
    e->workers[w].waiting_requests -= b->n;
    batch_release(e, b);
    cs_control_after_batch(e, w, g);
    return;
  }
  enqueue(e, gpu, b);
  gpu_dispatch(e, g);
}

void cs_engine_on_gpu_done(Engine *e, int g)
{
  Gpu *gpu = &e->gpus[g];
  gpu->done = CS_EVENT_HANDLE_NONE;
  int64_t t;
  uint64_t job;
  gboolean any = cs_gpu_exec_next(gpu->exec, &t, &job);
  g_assert(any);
  gpu_changing(e, g);
  cs_gpu_exec_finish(gpu->exec, e->now, job);
  Batch *b = NULL;
  for (int i = 0; i < gpu->n_running; i++)
    if (gpu->running[i]->job == job) {
      b = gpu->running[i];
      gpu->running[i] = gpu->running[--gpu->n_running];
      break;
    }
  g_assert(b != NULL);
  gpu_changed(e, g);
  Worker *wk = &e->workers[b->worker];
  wk->busy = FALSE;
  wk->outstanding--;
  wk->running_requests = 0;
  b->state = BATCH_RETURNING;
  b->end_ns = e->now;
  /* Inference latency of this worker over time (by completion time). */
  if (e->series) {
    cs_bins_add_at(wk->bins, e->now / e->bin_ns, 1, b->end_ns - b->start_ns);
    cs_engine_check_series(e, wk->bins);
  }
  gpu->batches++;
  end_busy_period_if_idle(e, g);
  if (e->dispatch->on_batch_finish || (e->opt && e->opt->on_batch)) {
    CsBatchEvent ev = batch_event(b);
    if (e->dispatch->on_batch_finish)
      e->dispatch->on_batch_finish(e->dispatch_state, &ev);
    if (e->opt && e->opt->on_batch)
      e->opt->on_batch(&ev, e->opt->user_data);
  }
  const Client *c = &e->clients[b->model];
  eq_push(e->q, cs_engine_transfer_end(e, b, c->cfg->output_bytes, "result payload"),
             EV_RESULT, 0, b);
  gpu_dispatch(e, g);
  gpu_rearm(e, g);
  cs_control_after_batch(e, b->worker, g);
}

/* Stops batch b of GPU g (sent, not finished) and hands its requests to out. */
static void preempt_batch(Engine *e, int g, Batch *b, GArray *out)
{
  Gpu *gpu = &e->gpus[g];
  g_array_append_vals(out, b->reqs, (guint)b->n);
  for (int i = 0; i < b->n; i++)
    cs_ledger_return(e, &b->reqs[i]); /* the policy holds them again */
  gpu->preempted++;
  Worker *wk = &e->workers[b->worker];
  wk->outstanding--;
  if (b->state == BATCH_RUNNING) {
    wk->running_requests = 0;
  } else {
    wk->waiting_requests -= b->n;
    if (b->state == BATCH_IN_TRANSFER)
      wk->in_transfer--;
    else
      wk->queued--;
  }
  switch (b->state) {
  case BATCH_IN_TRANSFER:
    gpu->in_transfer--;
    b->state = BATCH_PREEMPTED; /* released when its arrival event fires */
    break;
  case BATCH_WAITING:
    gpu->queued--;
    b->state = BATCH_PREEMPTED;
    break;
  case BATCH_QUEUED: {
    g_assert(gpu->time_slice); /* centralized policies preempt; their GPUs time-slice */
    Batch *prev = NULL;
    for (Batch *x = gpu->head; x != b; x = x->next)
      prev = x;
    if (prev)
      prev->next = b->next;
    else
      gpu->head = b->next;
    if (gpu->tail == b)
      gpu->tail = prev;
    gpu->queued--;
    batch_release(e, b);
    break;
  }
  case BATCH_RUNNING:
    gpu_changing(e, g);
    cs_gpu_exec_finish(gpu->exec, e->now, b->job); /* the job leaves: its work is lost */
    for (int i = 0; i < gpu->n_running; i++)
      if (gpu->running[i] == b) {
        gpu->running[i] = gpu->running[--gpu->n_running];
        break;
      }
    gpu_changed(e, g);
    e->workers[b->worker].busy = FALSE;
    gpu->preempted_ns += e->now - b->start_ns;
    end_busy_period_if_idle(e, g);
    batch_release(e, b);
    break;
  default:
    g_assert_not_reached();
  }
}

static gint batch_by_id(gconstpointer a, gconstpointer b)
{
  uint64_t x = (*(Batch *const *)a)->id, y = (*(Batch *const *)b)->id;
  return x < y ? -1 : x > y;
}

int cs_engine_preempt_gpu(Engine *e, int gpu, GArray *out)
{
  g_return_val_if_fail(e != NULL, 0);
  if (e->cfg->placement) {
    cs_engine_misuse(e, "cs_engine_preempt_gpu: the run has a placement (only centralized "
                        "policies may preempt)");
    return 0;
  }
  if (gpu < 0 || gpu >= e->cfg->n_gpus) {
    cs_engine_misuse(e, "cs_engine_preempt_gpu: gpu %d out of range (the cluster has %d)", gpu,
                     e->cfg->n_gpus);
    return 0;
  }
  if (!out || g_array_get_element_size(out) != sizeof(CsRequest)) {
    cs_engine_misuse(e, "cs_engine_preempt_gpu: out must be a GArray of CsRequest");
    return 0;
  }
  /* Sent and unfinished batches of this GPU, stopped in dispatch order. */
  GPtrArray *victims = g_ptr_array_new();
  for (guint i = 0; i < e->batches->len; i++) {
    Batch *b = g_ptr_array_index(e->batches, i);
    if (b->gpu == gpu && (b->state == BATCH_IN_TRANSFER || b->state == BATCH_WAITING ||
                          b->state == BATCH_QUEUED || b->state == BATCH_RUNNING))
      g_ptr_array_add(victims, b);
  }
  g_ptr_array_sort(victims, batch_by_id);
  for (guint i = 0; i < victims->len; i++)
    preempt_batch(e, gpu, g_ptr_array_index(victims, i), out);
  int n = (int)victims->len;
  g_ptr_array_free(victims, TRUE);
  if (n > 0) {
    gpu_dispatch(e, gpu);
    gpu_rearm(e, gpu);
    cs_control_after_batch(e, -1, gpu);
  }
  return n;
}
