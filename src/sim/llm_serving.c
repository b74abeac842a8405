/* LLM deployments in the engine (docs/llm.md, "LLM models in a scenario"):
 * each deployment of the scenario's "llm" section runs its replicas token
 * by token (llm/llm_sim.h's CsLlmCluster) on the engine's clock, beside the
 * DNN models, on GPUs of its own. Its client (past the DNN models' in
 * Engine.clients) sends its request list; the results count into that
 * client as a DNN model's do (windows, goodput, latency, the time series,
 * requests.csv), with TTFT, TBT and TPOT beside them.
 *
 * One EV_LLM event stands for every deployment's next instant. When it
 * fires with other events still due at the same instant, it goes behind
 * them: every arrival of that instant reaches its deployment before the
 * deployment steps it, which is the order of llm_sim.h (arrivals, batch
 * ends, new batches) and so of `clustersim llm run` on the same list. */
#include <math.h>

#include "engine_state.h"

struct CsLlmServing {
  Engine *e;
  const CsLlmServingConfig *cfg;
  int client;             /* its index in Engine.clients */
  CsLlmCluster *cluster;
  CsSamples *ttft, *tbt, *tpot; /* measured requests', ns */
  int64_t output_tokens;  /* of the completed requests */
  int64_t first_arrival_ns, last_done_ns;
  /* The wait for a first iteration of the first and the last quarter of
   * the list (measured requests), for the queue_growing warning. */
  double wait_sum[2];
  int64_t wait_n[2];
};

/* A request's tag in the cluster: its index in the list, and whether it
 * is measured. */
static int64_t tag_of(int64_t index, gboolean measured)
{
  return index * 2 + (measured ? 1 : 0);
}

static void on_tbt(void *user, int64_t tag, int64_t ns)
{
  CsLlmServing *s = user;
  if (tag & 1)
    cs_samples_add(s->tbt, ns);
}

static void on_done(void *user, const CsLlmSimRequestResult *r, int64_t tag)
{
  CsLlmServing *s = user;
  Engine *e = s->e;
  Client *c = &e->clients[s->client];
  gboolean measured = tag & 1;
  int64_t ttft = r->first_token_ns - r->arrival_ns;
  /* DistServe's TPOT: the decode phase's time per token after the first;
   * one output token has none, and meets any TPOT SLO. */
  double tpot = r->output_tokens > 1
                  ? (double)(r->completed_ns - r->first_token_ns) / (r->output_tokens - 1)
                  : 0.0;
  gboolean good = ttft <= s->cfg->ttft_slo_ns && tpot <= (double)s->cfg->tpot_slo_ns;
  gboolean in_window = e->now >= c->window_start_ns &&
                       (c->window_end_ns == 0 || e->now < c->window_end_ns);
  gboolean late = c->window_end_ns != 0 && e->now >= c->window_end_ns;
  c->resolved++;
  if (in_window) {
    c->in_window++;
    c->good_in_window += good;
  }
  c->all_good += good;
  c->all_bad += !good;
  cs_engine_count_in_bin(e, c, good, !good, 0);
  s->output_tokens += r->output_tokens;
  s->last_done_ns = MAX(s->last_done_ns, r->completed_ns);
  if (measured) {
    c->completed++;
    c->good += good;
    c->late += late;
    c->last_out_ns = e->now;
    cs_samples_add(c->e2e, r->completed_ns - r->arrival_ns);
    /* The router's wait of a DNN request is, for an LLM one, the wait for
     * its first iteration (Vidur's scheduling delay). */
    cs_samples_add(c->router_wait, r->scheduled_ns - r->arrival_ns);
    int64_t index = tag >> 1, quarter = s->cfg->n_reqs / 4;
    if (index < quarter || index >= s->cfg->n_reqs - quarter) {
      int q = index >= s->cfg->n_reqs - quarter;
      s->wait_sum[q] += (double)(r->scheduled_ns - r->arrival_ns);
      s->wait_n[q]++;
    }
    cs_samples_add(s->ttft, ttft);
    if (r->output_tokens > 1)
      cs_samples_add(s->tpot, llround(tpot));
  }
  if (cs_engine_wants_records(e)) {
    CsRequestRecord rec = {
      .id = (uint64_t)r->id, .model = c->cfg->model, .client = s->client,
      .measured = measured, .served = TRUE, .send_ns = r->arrival_ns,
      .dispatch_ns = r->scheduled_ns, .node_ns = r->scheduled_ns,
      .exec_start_ns = r->scheduled_ns, .exec_end_ns = r->completed_ns,
      .receive_ns = r->completed_ns, .batch_size = 0, .gpu = -1, .slo_met = good,
      .replica = r->decode_replica >= 0 ? r->decode_replica : r->replica, .worker = -1,
      .batch_id = 0,
    };
    cs_engine_emit_record(e, &rec);
  }
}

/* The deployments' next instant is t or earlier. */
static void wake(Engine *e, int64_t t)
{
  if (e->llm_ev_ns <= t && cs_eq_pending(e->q, e->llm_ev))
    return;
  cs_eq_cancel(e->q, e->llm_ev);
  e->llm_ev = eq_push(e->q, t, EV_LLM, 0, NULL);
  e->llm_ev_ns = t;
}

/* A deployment's error stops the run, as a time the engine cannot hold
 * does: the scenario's file and the entry named. */
static void fail(Engine *e, const CsLlmServing *s, GError *err)
{
  cs_engine_limit(e, "%s: %s (%s): %s", e->cfg->name, s->cfg->path, s->cfg->name, err->message);
  g_error_free(err);
}

void cs_engine_llm_setup(Engine *e)
{
  const CsConfig *cfg = e->cfg;
  e->llm = g_new0(CsLlmServing, MAX(cfg->n_llm, 1));
  for (int i = 0; i < cfg->n_llm; i++) {
    CsLlmServing *s = &e->llm[i];
    s->e = e;
    s->cfg = &cfg->llm[i];
    s->client = cfg->n_clients + i;
    s->ttft = cs_samples_new(FALSE, cfg->percentile_sketch);
    s->tbt = cs_samples_new(FALSE, cfg->percentile_sketch);
    s->tpot = cs_samples_new(FALSE, cfg->percentile_sketch);
    s->first_arrival_ns = -1;
    CsLlmClusterHooks hooks = { .tbt = on_tbt, .done = on_done, .user = s };
    CsLlmSimConfig sim = s->cfg->sim;
    /* Its series (llm_over_time.csv) in the scenario's bins, when the run
     * keeps series. */
    sim.series_bin_ns = e->series ? e->bin_ns : 0;
    GError *err = NULL;
    s->cluster = cs_llm_cluster_new(&sim, &hooks, &err);
    if (s->cluster == NULL) /* compiled from a config llm_config.c accepted: not expected */
      fail(e, s, err);
  }
}

void cs_engine_llm_arrival(Engine *e, int ci)
{
  Client *c = &e->clients[ci];
  CsLlmServing *s = &e->llm[ci - e->cfg->n_clients];
  cs_engine_count_in_bin(e, c, 0, 0, 1);
  int64_t index = c->index;
  gboolean measured = e->now >= c->window_start_ns;
  c->index++;
  c->generated++;
  if (measured)
    c->measured++;
  else
    c->warmup++;
  cs_engine_schedule_next_arrival(e, ci);
  if (s->cluster == NULL)
    return;
  CsLlmSimRequest r = s->cfg->reqs[index];
  r.arrival_ns = e->now; /* the list's time, shifted by the client's start */
  if (s->first_arrival_ns < 0)
    s->first_arrival_ns = e->now;
  GError *err = NULL;
  if (!cs_llm_cluster_add(s->cluster, &r, tag_of(index, measured), &err)) {
    fail(e, s, err);
    return;
  }
  wake(e, e->now);
}

void cs_engine_llm_on_event(Engine *e)
{
  /* Behind whatever else is due now (this file's first comment). */
  if (cs_eq_peek_time(e->q) == e->now) {
    e->llm_ev = eq_push(e->q, e->now, EV_LLM, 0, NULL);
    e->llm_ev_ns = e->now;
    return;
  }
  int64_t next = INT64_MAX;
  for (int i = 0; i < e->cfg->n_llm && !e->limit; i++) {
    CsLlmServing *s = &e->llm[i];
    if (s->cluster == NULL)
      continue;
    /* An instant can follow at the same time (a batch or transfer of 0
     * ns): as cs_llm_sim_run, each is a step of its own. */
    while (cs_llm_cluster_next_ns(s->cluster) == e->now) {
      GError *err = NULL;
      if (!cs_llm_cluster_step(s->cluster, &err)) {
        fail(e, s, err);
        return;
      }
    }
    next = MIN(next, cs_llm_cluster_next_ns(s->cluster));
  }
  if (next != INT64_MAX && !e->limit)
    wake(e, next);
}

/* Mean and peak of replica figures over the deployment's replicas. */
static void replica_use(const CsLlmSimResult *r, int64_t makespan, CsLlmModelResult *out)
{
  double kv = 0, busy = 0;
  for (int i = 0; i < r->n_replicas; i++) {
    const CsLlmSimReplicaResult *p = &r->replicas[i];
    out->kv_peak_util = MAX(out->kv_peak_util, (double)p->peak_blocks / (double)p->num_blocks);
    if (makespan > 0) {
      kv += p->block_ns / ((double)p->num_blocks * (double)makespan);
      busy += (double)p->busy_ns / (double)makespan;
    }
  }
  out->kv_mean_util = kv / r->n_replicas;
  out->busy_fraction = busy / r->n_replicas;
}

static const char *keep(CsResults *res, const char *s)
{
  char *copy = g_strdup(s);
  g_ptr_array_add(res->llm_strings, copy);
  return copy;
}

void cs_engine_llm_finish(Engine *e)
{
  for (int i = 0; i < e->cfg->n_llm && !e->limit && !e->misuse && !e->cancelled; i++) {
    CsLlmServing *s = &e->llm[i];
    GError *err = NULL;
    if (s->cluster != NULL && !cs_llm_cluster_finish(s->cluster, &err))
      fail(e, s, err);
  }
}

void cs_engine_llm_fill_results(Engine *e, CsResults *res)
{
  const CsConfig *cfg = e->cfg;
  res->n_llm = cfg->n_llm;
  res->llm = g_new0(CsLlmModelResult, MAX(cfg->n_llm, 1));
  res->llm_strings = g_ptr_array_new_with_free_func(g_free);
  for (int i = 0; i < cfg->n_llm; i++) {
    const CsLlmServing *s = &e->llm[i];
    const CsLlmServingConfig *d = s->cfg;
    CsLlmModelResult *m = &res->llm[i];
    m->model = keep(res, d->name);
    m->llm_model = keep(res, d->llm_model);
    m->device = keep(res, d->device);
    m->scheduler = keep(res, d->scheduler);
    m->replicas = d->sim.replicas;
    m->decode_replicas = d->sim.decode_replicas;
    m->tensor_parallel = d->tensor_parallel;
    m->gpus = d->gpus;
    m->ttft_slo_ms = d->ttft_slo_ns * 1e-6;
    m->tpot_slo_ms = d->tpot_slo_ns * 1e-6;
    cs_samples_stats(&s->ttft, 1, &m->ttft);
    cs_samples_stats(&s->tbt, 1, &m->tbt);
    cs_samples_stats(&s->tpot, 1, &m->tpot);
    m->output_tokens = s->output_tokens;
    double span_s = (s->last_done_ns - s->first_arrival_ns) * 1e-9;
    m->output_tokens_per_s = span_s > 0 ? s->output_tokens / span_s : NAN;
    const CsLlmSimResult *r = cs_llm_cluster_result(s->cluster);
    m->batches = r->n_batches;
    m->restarts = r->restarts;
    m->attention_clamped_batches = r->attention_clamped_batches;
    replica_use(r, r->makespan_ns, m);
    cs_llm_sim_mfu(r, r->makespan_ns, &m->mfu, &m->mfu_busy);
    if (r->series != NULL) {
      GString *rows = g_string_new(NULL);
      cs_llm_series_csv(rows, d->name, r->series, r->series_bin_ns, r->total_blocks,
                        r->makespan_ns);
      g_ptr_array_add(res->llm_strings, rows->str);
      m->series_csv = rows->str;
      g_string_free(rows, FALSE);
    }
    /* A queue that grows through the list: its numbers describe the
     * list's length, not a steady state (the "unstable" warning's reason,
     * which a list of seconds-long requests rarely drains long enough to
     * show). */
    double first = s->wait_n[0] ? s->wait_sum[0] / s->wait_n[0] * 1e-6 : NAN;
    double last = s->wait_n[1] ? s->wait_sum[1] / s->wait_n[1] * 1e-6 : NAN;
    if (d->n_reqs >= 8 && last > 2 * first && last > d->ttft_slo_ns * 1e-6)
      cs_warning_add(res->warnings, "llm_queue_growing", d->name, -1,
                     "its requests' mean wait for a first iteration grew from %.6g ms (the "
                     "first quarter of its list) to %.6g ms (the last quarter), past its TTFT SLO "
                     "of %.6g ms: the offered rate exceeds what its %d replica(s) serve, and its "
                     "numbers depend on the list's length",
                     first, last, d->ttft_slo_ns * 1e-6, d->sim.replicas);
    if (r->attention_clamped_batches > 0)
      cs_warning_add(res->warnings, "attention_clamped", d->name, -1,
                     "%" G_GINT64_FORMAT " of its %" G_GINT64_FORMAT " batches looked their "
                     "attention up at the edge of the profiled grid of %s "
                     "(\"attention_outside_grid\": \"clamp\"): their attention time is the "
                     "edge's, not a measurement",
                     (gint64)r->attention_clamped_batches, (gint64)r->n_batches, d->llm_model);
  }
}

void cs_engine_llm_teardown(Engine *e)
{
  for (int i = 0; e->llm != NULL && i < e->cfg->n_llm; i++) {
    CsLlmServing *s = &e->llm[i];
    cs_llm_cluster_free(s->cluster);
    cs_samples_free(s->ttft);
    cs_samples_free(s->tbt);
    cs_samples_free(s->tpot);
  }
  g_free(e->llm);
  e->llm = NULL;
}
