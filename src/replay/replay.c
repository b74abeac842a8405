/* cs_replay: a decision log played back in real time on a backend.
 *
 * The main thread is the clients and the dispatcher: it walks the log's
 * timeline (requests, batches, requests that left unrun) and acts on each at
 * its recorded time, measured on CLOCK_MONOTONIC from an epoch taken once
 * every worker is prepared. A batch sent at real time t reaches its GPU at
 * t + the network curve's latency for its payload (or at once when the policy
 * had its inputs there already), and may not start before its recorded
 * not_before. Executor threads run the batches: one per GPU when the GPUs
 * time-slice (batches of its workers take turns in the order they reached
 * it, as in the simulator), one per worker under MPS (workers run at once).
 * The result of a batch goes back after the network curve's latency for its
 * output payload: arithmetic, not a sleep, as nothing waits for it.
 *
 * What is measured: every stage's real time. The replay's own overhead is
 * its lateness: how long after its due time a batch was sent, and how long
 * after its GPU could take it (inputs there, worker free) it started. The
 * replay is valid when the 99th percentile of both stays within the bound.
 *
 * The results are counted by replay_results.c with the simulator's rules. */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <string.h>
#include <unistd.h>

#include "backends.h"
#include "measure.h"
#include "probe.h"
#include "clustersim/plugin.h"
#include "common/json_input.h"
#include "experiment/run.h"
#include "replay_internal.h"
#include "scenario/scenario.h"
#include "sim/results.h"

struct Executor {
  Replay *rp;
  int gpu;
  GThread *thread;
  GMutex lock;
  GCond cond;
  GArray *order;      /* its batch indices, in the order they were decided to reach it
                         (Planned while make_executors builds it) */
  GArray *workers;    /* CsBackendWorker served by this executor */
  int64_t free_at;    /* when its previous batch ended */
  GError *error;
};

static void fail_replay(Replay *rp, GError *err)
{
  g_mutex_lock(&rp->lock);
  if (!rp->error)
    rp->error = err;
  else
    g_error_free(err);
  g_mutex_unlock(&rp->lock);
  g_atomic_int_set(&rp->failed, 1);
}

static CsBackendWorker *find_worker(Executor *x, int worker)
{
  for (guint i = 0; i < x->workers->len; i++) {
    CsBackendWorker *w = &g_array_index(x->workers, CsBackendWorker, i);
    if (w->worker == worker)
      return w;
  }
  return NULL;
}

/* Timers of this thread wake it when asked, not up to 50 us later (the
 * default slack Linux allows itself to batch wake-ups). */
static void precise_timers(void)
{
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
}

/* The time a batch's inputs were decided to be at its GPU: its dispatch
 * plus the network's latency for its payload (none when the policy had them
 * there), and not before its not_before. */
static int64_t planned_node_ns(const Replay *rp, const DlBatch *b, int64_t dispatch_ns)
{
  const CsClientConfig *cc = &rp->cfg->clients[b->model];
  int64_t transfer =
    b->inputs_at_node || rp->cfg->network_is_zero
      ? 0
      : cs_network_curve_latency_ns(rp->cfg->network, (int64_t)b->n * cc->input_bytes);
  return MAX(dispatch_ns + transfer, b->not_before_ns);
}

/* An executor knows its batches and their order in advance (the log holds
 * them): it sleeps until the next is due by itself, then waits for the
 * clock thread to have sent it. Waking on its own saves a wake-up from
 * another thread (tens of microseconds on a virtual machine) per batch. */
static gpointer executor_main(gpointer data)
{
  Executor *x = data;
  Replay *rp = x->rp;
  GError *err = NULL;
  precise_timers();
  for (guint i = 0; i < x->workers->len && !err; i++)
    if (rp->backend->prepare &&
        !rp->backend->prepare(rp->state, &g_array_index(x->workers, CsBackendWorker, i), &err))
      break;
  if (err) {
    g_prefix_error(&err, "backend \"%s\": ", rp->backend->name);
    fail_replay(rp, err);
    err = NULL;
  }
  g_mutex_lock(&rp->lock);
  rp->prepared++;
  g_cond_broadcast(&rp->cond);
  while (!rp->started && !g_atomic_int_get(&rp->failed))
    g_cond_wait(&rp->cond, &rp->lock);
  g_mutex_unlock(&rp->lock);
  for (guint k = 0; k < x->order->len && !g_atomic_int_get(&rp->failed); k++) {
    guint bi = g_array_index(x->order, guint, k);
    const DlBatch *b = &g_array_index(rp->log->batches, DlBatch, bi);
    ReplayBatch *t = &g_array_index(rp->times, ReplayBatch, bi);
    /* Awake a little before it is due, then spinning for its hand-over. */
    int64_t due = rp->epoch_ns + planned_node_ns(rp, b, b->dispatch_ns);
    if (!rp->spin_idle && due - cs_monotonic_ns() > CS_SPIN_NS)
      cs_sleep_until_ns(due - CS_SPIN_NS);
    /* Sent yet? Usually by the time it is due: the clock thread sends it
     * then. Spin a little before sleeping on the condition. */
    int64_t spin_until = MAX(due, cs_monotonic_ns()) + 200000;
    while (!g_atomic_int_get(&t->sent) && cs_monotonic_ns() < spin_until &&
           !g_atomic_int_get(&rp->failed)) {
    }
    if (!g_atomic_int_get(&t->sent)) {
      g_mutex_lock(&x->lock);
      while (!g_atomic_int_get(&t->sent) && !g_atomic_int_get(&rp->failed))
        g_cond_wait(&x->cond, &x->lock);
      g_mutex_unlock(&x->lock);
      if (!g_atomic_int_get(&t->sent))
        break;
    }
    cs_wait_until_ns(rp->epoch_ns + t->node_ns);
    CsBackendWorker *w = find_worker(x, b->worker);
    int64_t start = cs_monotonic_ns() - rp->epoch_ns;
    gboolean ok = rp->backend->execute(rp->state, w, b->n, &err);
    int64_t end = cs_monotonic_ns() - rp->epoch_ns;
    /* It could start when its inputs were there and its GPU (time-slicing)
     * or worker (MPS) had finished the batch before. */
    int64_t ready = MAX(t->node_ns, x->free_at);
    t->start_ns = start;
    t->end_ns = end;
    t->start_late_ns = MAX(0, start - ready);
    x->free_at = end;
    if (!ok) {
      g_prefix_error(&err, "backend \"%s\", batch %" G_GUINT64_FORMAT " on GPU %d: ",
                     rp->backend->name, (guint64)b->id, b->gpu);
      fail_replay(rp, err);
      err = NULL;
      break;
    }
  }
  for (guint i = 0; i < x->workers->len; i++)
    if (rp->backend->release)
      rp->backend->release(rp->state, &g_array_index(x->workers, CsBackendWorker, i));
  return NULL;
}

/* The clock thread has sent a batch: its executor may run it. */
static void hand_over(Executor *x, ReplayBatch *t)
{
  g_mutex_lock(&x->lock);
  g_atomic_int_set(&t->sent, 1);
  g_cond_signal(&x->cond);
  g_mutex_unlock(&x->lock);
}

/* Batch indices in the order they were decided to reach their GPU (ties:
 * the order they were sent). */
typedef struct {
  int64_t planned;
  guint index;
} Planned;

static int by_planned(gconstpointer a, gconstpointer b)
{
  const Planned *x = a, *y = b;
  if (x->planned != y->planned)
    return x->planned < y->planned ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* One executor per GPU (time-slicing) or per worker of a GPU (MPS), each
 * with the workers it serves and the largest batch each is given. */
static void make_executors(Replay *rp)
{
  GHashTable *index = g_hash_table_new(g_int64_hash, g_int64_equal);
  GArray *keys = g_array_new(FALSE, FALSE, sizeof(gint64));
  rp->executor_of = g_new(int, MAX(rp->log->batches->len, 1));
  GPtrArray *execs = g_ptr_array_new();
  for (guint i = 0; i < rp->log->batches->len; i++) {
    const DlBatch *b = &g_array_index(rp->log->batches, DlBatch, i);
    g_array_append_val(keys, (gint64){ rp->mps ? ((gint64)b->gpu << 32) | (guint32)b->worker
                                               : (gint64)b->gpu });
  }
  for (guint i = 0; i < rp->log->batches->len; i++) {
    const DlBatch *b = &g_array_index(rp->log->batches, DlBatch, i);
    gint64 *key = &g_array_index(keys, gint64, i);
    gpointer found = g_hash_table_lookup(index, key);
    Executor *x;
    if (!found) {
      x = g_new0(Executor, 1);
      x->rp = rp;
      x->gpu = b->gpu;
      g_mutex_init(&x->lock);
      g_cond_init(&x->cond);
      x->order = g_array_new(FALSE, FALSE, sizeof(Planned));
      x->workers = g_array_new(FALSE, TRUE, sizeof(CsBackendWorker));
      g_ptr_array_add(execs, x);
      g_hash_table_insert(index, key, GINT_TO_POINTER(execs->len));
    } else {
      x = g_ptr_array_index(execs, GPOINTER_TO_INT(found) - 1);
    }
    rp->executor_of[i] = GPOINTER_TO_INT(g_hash_table_lookup(index, key)) - 1;
    Planned pl = { planned_node_ns(rp, b, b->dispatch_ns), i };
    g_array_append_val(x->order, pl);
    CsBackendWorker *w = find_worker(x, b->worker);
    if (!w) {
      CsBackendWorker nw = { .gpu = b->gpu, .worker = b->worker, .model = b->model,
                             .mps_share = b->mps_share, .max_batch = b->n };
      g_array_append_val(x->workers, nw);
    } else {
      w->max_batch = MAX(w->max_batch, b->n);
    }
  }
  g_hash_table_destroy(index);
  g_array_unref(keys);
  rp->n_executors = (int)execs->len;
  rp->executors = (Executor **)g_ptr_array_free(execs, FALSE);
  for (int e = 0; e < rp->n_executors; e++) {
    GArray *planned = rp->executors[e]->order;
    g_array_sort(planned, by_planned);
    GArray *order = g_array_sized_new(FALSE, FALSE, sizeof(guint), planned->len);
    for (guint k = 0; k < planned->len; k++)
      g_array_append_val(order, g_array_index(planned, Planned, k).index);
    g_array_unref(planned);
    rp->executors[e]->order = order;
  }
}

static void free_executors(Replay *rp)
{
  for (int e = 0; e < rp->n_executors; e++) {
    Executor *x = rp->executors[e];
    g_mutex_clear(&x->lock);
    g_cond_clear(&x->cond);
    g_array_unref(x->order);
    g_array_unref(x->workers);
    g_free(x);
  }
  g_free(rp->executors);
  g_free(rp->executor_of);
}

CsConfig *cs_replay_compile_scenario(const DecisionLog *log, GError **error)
{
  cJSON *sc_json = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(log->header, "scenario"), TRUE);
  cJSON_DeleteItemFromObjectCaseSensitive(sc_json, "controller");
  cJSON_DeleteItemFromObjectCaseSensitive(sc_json, "overrides_applied");
  if (log->has_placement) {
    cJSON *pl = cJSON_CreateObject();
    cJSON_AddStringToObject(pl, "policy", "manual");
    cJSON_AddItemToObject(pl, "replicas", cJSON_Duplicate(log->initial_replicas, TRUE));
    /* Replace, or add when the scenario had none (a log edited by hand). */
    cJSON_DeleteItemFromObjectCaseSensitive(sc_json, "placement");
    cJSON_AddItemToObject(sc_json, "placement", pl);
  }
  char *text = cJSON_PrintUnformatted(sc_json);
  cJSON_Delete(sc_json);
  char *name = g_strdup_printf("%s (its scenario)", log->path);
  CsScenario *sc = cs_scenario_new_from_json(text, name, NULL, error);
  cJSON_free(text);
  /* A run with a plug-in's policy recorded it (absolute path) in "plugins". */
  if (sc && !cs_scenario_load_plugins(sc, error))
    g_clear_pointer(&sc, cs_scenario_free);
  CsConfig *cfg = sc ? cs_experiment_compile(sc, error) : NULL;
  cs_scenario_free(sc);
  g_free(name);
  if (!cfg)
    return NULL;
  if (cfg->n_llm > 0) {
    /* Only the DNN models' decisions are logged, and no backend runs an LLM. */
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: its scenario has LLM deployments (\"llm\"), which are not replayed "
                "(docs/llm.md); remove \"llm\" from the scenario and run it again to replay its "
                "DNN models",
                log->path);
    cs_config_free(cfg);
    return NULL;
  }
  if (cfg->n_clients != log->n_models || cfg->n_gpus != log->n_gpus) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "%s: its scenario has %d models and %d GPUs, its header %d and %d", log->path,
                cfg->n_clients, cfg->n_gpus, log->n_models, log->n_gpus);
    cs_config_free(cfg);
    return NULL;
  }
  /* The records number models and GPUs as the header lists them, and the
   * replay runs them with the scenario's clients and GPUs at those numbers:
   * both must agree, or one model would be replayed with another's
   * latency. */
  for (int m = 0; m < cfg->n_clients; m++)
    if (strcmp(cfg->clients[m].model, log->models[m]) != 0 ||
        cfg->clients[m].slo_ns != log->slo_ns[m]) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                  "%s: line 1: models[%d] is %s (SLO %" G_GINT64_FORMAT
                  " ns) but its scenario's clients[%d] is %s (SLO %" G_GINT64_FORMAT
                  " ns): the header must list the scenario's models in its order (a log "
                  "edited by hand?)",
                  log->path, m, log->models[m], (gint64)log->slo_ns[m], m,
                  cfg->clients[m].model, (gint64)cfg->clients[m].slo_ns);
      cs_config_free(cfg);
      return NULL;
    }
  for (int g = 0; g < cfg->n_gpus; g++)
    if (strcmp(cfg->gpus[g].gpu_type, log->gpu_types[g]) != 0) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                  "%s: line 1: gpus[%d] is a %s but its scenario's GPU %d is a %s (a log edited "
                  "by hand?)",
                  log->path, g, log->gpu_types[g], g, cfg->gpus[g].gpu_type);
      cs_config_free(cfg);
      return NULL;
    }
  return cfg;
}

static void progress_line(const Replay *rp, int64_t at_ns, gboolean done)
{
  double total = rp->log->end_ns * 1e-9;
  fprintf(stderr, "\r\033[Kreplay: %.1f of %.1f s%s", at_ns * 1e-9, total, done ? "\n" : "");
  fflush(stderr);
}

/* The timeline, on the main thread. */
static void run_timeline(Replay *rp, gboolean progress)
{
  const DecisionLog *log = rp->log;
  int64_t next_progress = 0;
  for (guint i = 0; i < log->timeline->len && !g_atomic_int_get(&rp->failed); i++) {
    const DlEvent *ev = &g_array_index(log->timeline, DlEvent, i);
    /* Batches are sent to the microsecond (a sleep, then a spin); requests
     * and departures only need their time taken, and a spin for each of
     * thousands a second would take a core from the backend. */
    if (ev->kind == DL_EV_BATCH)
      cs_wait_until_ns(rp->epoch_ns + ev->at_ns);
    else
      cs_sleep_until_ns(rp->epoch_ns + ev->at_ns);
    int64_t now = cs_monotonic_ns() - rp->epoch_ns;
    if (ev->kind == DL_EV_REQUEST) {
      rp->send_ns[ev->index] = now;
    } else if (ev->kind == DL_EV_LEFT) {
      g_array_index(rp->left_ns, int64_t, ev->index) = now;
    } else {
      const DlBatch *b = &g_array_index(log->batches, DlBatch, ev->index);
      ReplayBatch *t = &g_array_index(rp->times, ReplayBatch, ev->index);
      t->dispatch_ns = now;
      t->dispatch_late_ns = now - b->dispatch_ns;
      t->node_ns = planned_node_ns(rp, b, now);
      hand_over(rp->executors[rp->executor_of[ev->index]], t);
    }
    if (progress && cs_monotonic_ns() >= next_progress) {
      progress_line(rp, now, FALSE);
      next_progress = cs_monotonic_ns() + 1000000000;
    }
  }
  if (progress)
    progress_line(rp, log->end_ns, TRUE);
}

void cs_replay_options_init(CsReplayOptions *opt)
{
  memset(opt, 0, sizeof *opt);
  opt->max_lateness_ms = 1.0;
}

CsResults *cs_replay(const CsReplayOptions *opt, GError **error)
{
  if (!opt || !opt->decisions || !opt->backend || !opt->backend->open ||
      !opt->backend->execute || !opt->backend->close) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "cs_replay: a decision log and a backend with open, execute and close are "
                "required");
    return NULL;
  }
  gint64 wall0 = g_get_monotonic_time();
  DecisionLog *log = cs_decision_log_read(opt->decisions, error);
  if (!log)
    return NULL;
  /* The replay sleeps until each time of the log: a span of years would
   * hold the caller for years. Checked before the backend is opened. */
  double max_s = opt->max_duration_s == 0 ? CS_REPLAY_DEFAULT_MAX_DURATION_S : opt->max_duration_s;
  int64_t span_ns = log->end_ns;
  if (log->timeline->len > 0)
    span_ns = MAX(span_ns, g_array_index(log->timeline, DlEvent, log->timeline->len - 1).at_ns);
  if (max_s > 0 && span_ns * 1e-9 > max_s) {
    char *words = cs_duration_words(span_ns * 1e-9);
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "%s: the replay would take %s of real time (the log's last record is at "
                "%" G_GINT64_FORMAT " ns), more than the limit of %g s (--max-duration-s, or "
                "CsReplayOptions.max_duration_s, raises it; none lifts it)",
                log->path, words, (gint64)span_ns, max_s);
    g_free(words);
    cs_decision_log_free(log);
    return NULL;
  }
  CsConfig *cfg = cs_replay_compile_scenario(log, error);
  if (!cfg) {
    cs_decision_log_free(log);
    return NULL;
  }
  Replay rp = { .log = log, .cfg = cfg, .backend = opt->backend, .mps = log->mps,
                .spin_idle = opt->spin_idle,
                .max_lateness_ms = opt->max_lateness_ms > 0 ? opt->max_lateness_ms : 1.0 };
  g_mutex_init(&rp.lock);
  g_cond_init(&rp.cond);
  rp.send_ns = g_new(int64_t, MAX(log->requests->len, 1));
  for (guint i = 0; i < log->requests->len; i++)
    rp.send_ns[i] = -1;
  rp.times = g_array_sized_new(FALSE, TRUE, sizeof(ReplayBatch), log->batches->len);
  g_array_set_size(rp.times, log->batches->len);
  rp.left_ns = g_array_sized_new(FALSE, TRUE, sizeof(int64_t), log->left->len);
  g_array_set_size(rp.left_ns, log->left->len);
  rp.setup = (CsBackendSetup){ .n_gpus = log->n_gpus, .gpu_types = (const char *const *)log->gpu_types,
                               .mps = log->mps, .n_models = log->n_models,
                               .models = (const char *const *)log->models,
                               .profiles = cfg->profiles, .options = opt->backend_options,
                               .interference = cfg->interference };
  CsResults *res = NULL;
  rp.state = opt->backend_state ? opt->backend_state
                                : opt->backend->open(&rp.setup, opt->backend_user_data, error);
  if (!rp.state) {
    if (error && *error)
      g_prefix_error(error, "backend \"%s\": ", opt->backend->name);
    goto out;
  }
  make_executors(&rp);
  for (int e = 0; e < rp.n_executors; e++)
    rp.executors[e]->thread = g_thread_new("cs-replay", executor_main, rp.executors[e]);
  /* Every worker prepared (models loaded, threads pinned) before the clock starts. */
  g_mutex_lock(&rp.lock);
  while (rp.prepared < rp.n_executors)
    g_cond_wait(&rp.cond, &rp.lock);
  g_mutex_unlock(&rp.lock);
  /* The clock thread sleeps almost always; at real-time priority it runs
   * the moment it wakes, instead of waiting for a worker busy on its core.
   * Allowed only to privileged processes: without it the replay still runs,
   * and its lateness says what that cost. */
  precise_timers();
  struct sched_param prio = { .sched_priority = 1 };
  int policy_before = 0;
  struct sched_param prio_before;
  pthread_getschedparam(pthread_self(), &policy_before, &prio_before);
  rp.realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &prio) == 0;
  rp.epoch_ns = cs_monotonic_ns() + 50000000; /* 50 ms for the threads to settle */
  g_mutex_lock(&rp.lock);
  rp.started = TRUE;
  g_cond_broadcast(&rp.cond);
  g_mutex_unlock(&rp.lock);
  /* How busy the machine is meanwhile (probe.h): batch times of executors
   * of normal priority include its late wake-ups. */
  CsProbe *probe = cs_probe_start(rp.epoch_ns);
  if (!g_atomic_int_get(&rp.failed))
    run_timeline(&rp, opt->progress);
  rp.wakeup_late_ns = cs_probe_stop(probe);
  /* A failure stops every executor: wake those waiting for a batch. */
  for (int e = 0; e < rp.n_executors; e++) {
    g_mutex_lock(&rp.executors[e]->lock);
    g_cond_signal(&rp.executors[e]->cond);
    g_mutex_unlock(&rp.executors[e]->lock);
  }
  if (rp.realtime)
    pthread_setschedparam(pthread_self(), policy_before, &prio_before);
  for (int e = 0; e < rp.n_executors; e++)
    g_thread_join(rp.executors[e]->thread);
  if (rp.error) {
    g_propagate_error(error, rp.error);
    rp.error = NULL;
  } else {
    char *described = opt->backend->describe ? opt->backend->describe(rp.state) : NULL;
    res = cs_replay_results(&rp, described, opt->requests_csv, error);
    g_free(described);
    if (res)
      res->wall_s = (g_get_monotonic_time() - wall0) * 1e-6;
  }
  if (!opt->backend_state)
    opt->backend->close(rp.state);
  free_executors(&rp);
out:
  g_free(rp.send_ns);
  g_array_unref(rp.times);
  g_array_unref(rp.left_ns);
  if (rp.wakeup_late_ns)
    g_array_unref(rp.wakeup_late_ns);
  g_mutex_clear(&rp.lock);
  g_cond_clear(&rp.cond);
  cs_config_free(cfg);
  cs_decision_log_free(log);
  return res;
}
