/* A replay's measurements counted into results with the simulator's rules:
 * results and requests that left unrun are taken in the order they happened
 * and counted as sim/clients.c counts them (measurement windows of the run,
 * SLOs, stages), then sim/metrics.c turns the counts into the same per-model
 * figures, so a replay's summary.json reads like a run's. */
#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/json_input.h"
#include "policies/dispatch/dispatch.h"
#include "probe.h"
#include "replay_internal.h"
#include "scenario/scenario.h"
#include "sim/engine_state.h"
#include "sim/stats.h"

typedef struct {
  int64_t at_ns;
  guint seq;    /* ties: the order they were decided in */
  gboolean batch;
  guint index;  /* batch or left record */
} Outcome;

static int by_time(gconstpointer a, gconstpointer b)
{
  const Outcome *x = a, *y = b;
  if (x->at_ns != y->at_ns)
    return x->at_ns < y->at_ns ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int64_t receive_ns(const Replay *rp, const DlBatch *b, const ReplayBatch *t)
{
  int64_t back = rp->cfg->network_is_zero
                   ? 0
                   : cs_network_curve_latency_ns(rp->cfg->network,
                                                 (int64_t)b->n * rp->cfg->clients[b->model].output_bytes);
  return t->end_ns + back;
}

static void count_result(const Replay *rp, Client *c, const DlBatch *b, const ReplayBatch *t,
                         int64_t now, FILE *csv)
{
  const DecisionLog *log = rp->log;
  int64_t slo = c->cfg->slo_ns;
  int measured_in_batch = 0;
  c->resolved += b->n;
  gboolean in_window = now >= c->window_start_ns && (c->window_end_ns == 0 || now < c->window_end_ns);
  gboolean late = c->window_end_ns != 0 && now >= c->window_end_ns;
  for (int i = 0; i < b->n; i++) {
    guint32 id = g_array_index(log->members, guint32, b->first + i);
    const DlRequest *r = &g_array_index(log->requests, DlRequest, id);
    int64_t send = rp->send_ns[id];
    int64_t lat = now - send;
    if (in_window) {
      c->in_window++;
      c->good_in_window += lat <= slo;
    }
    if (r->measured) {
      measured_in_batch++;
      c->completed++;
      c->good += lat <= slo;
      c->late += late;
      int64_t wait = t->dispatch_ns - send;
      cs_samples_add(c->e2e, lat);
      cs_samples_add(c->router_wait, wait);
    }
    if (csv)
      fprintf(csv, "%u,%s,%d,ok,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
              ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
              ",%d,%d,%d,%d,%d,%" G_GUINT64_FORMAT "\n",
              id, c->cfg->model, r->measured ? 1 : 0, (gint64)send, (gint64)t->dispatch_ns,
              (gint64)t->node_ns, (gint64)t->start_ns, (gint64)t->end_ns, (gint64)now,
              (gint64)lat, lat <= slo ? 1 : 0, b->n, b->gpu, b->replica, b->worker,
              (guint64)b->id);
  }
  if (measured_in_batch > 0) {
    c->last_out_ns = now;
    const int64_t stage_ns[CS_N_STAGES] = {
      [CS_STAGE_TO_NODE] = t->node_ns - t->dispatch_ns,
      [CS_STAGE_QUEUE_WAIT] = t->start_ns - t->node_ns,
      [CS_STAGE_GPU] = t->end_ns - t->start_ns,
      [CS_STAGE_RESULT_RETURN] = now - t->end_ns,
    };
    for (int s = CS_STAGE_ROUTER_WAIT + 1; s < CS_N_STAGES; s++)
      cs_samples_add_weighted(c->batch_stage[s], stage_ns[s], measured_in_batch);
    c->batches++;
    c->batched_requests += b->n;
    if ((guint)b->n >= c->batch_sizes->len)
      g_array_set_size(c->batch_sizes, b->n + 1);
    g_array_index(c->batch_sizes, int64_t, b->n)++;
  }
}

static void count_left(const Replay *rp, Client *c, const DlLeft *l, int64_t now, FILE *csv)
{
  const DlRequest *r = &g_array_index(rp->log->requests, DlRequest, l->id);
  c->resolved++;
  if (r->measured) {
    c->dropped += l->why == DL_LEFT_DROPPED;
    c->unserved += l->why == DL_LEFT_UNSERVED;
    c->failed += l->why == DL_LEFT_FAILED;
    c->last_out_ns = now;
  }
  static const char *const why[] = { "dropped", "unserved", "failed" };
  int64_t send = rp->send_ns[l->id];
  if (csv)
    fprintf(csv, "%" G_GUINT64_FORMAT ",%s,%d,%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
            ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
            ",%" G_GINT64_FORMAT ",0,0,-1,-1,-1,0\n",
            (guint64)l->id, c->cfg->model, r->measured ? 1 : 0, why[l->why], (gint64)send,
            (gint64)now, (gint64)now, (gint64)now, (gint64)now, (gint64)now, (gint64)(now - send));
}

/* Percentiles of a lateness sample, ms. */
static cJSON *lateness_json(GArray *ns, CsLatencyStats *out)
{
  cs_latency_stats((int64_t *)ns->data, ns->len, out);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "p50", isfinite(out->p50) ? out->p50 : 0);
  cJSON_AddNumberToObject(o, "p90", isfinite(out->p90) ? out->p90 : 0);
  cJSON_AddNumberToObject(o, "p99", isfinite(out->p99) ? out->p99 : 0);
  cJSON_AddNumberToObject(o, "max", isfinite(out->max) ? out->max : 0);
  cJSON_AddNumberToObject(o, "mean", isfinite(out->mean) ? out->mean : 0);
  return o;
}

static int by_start(gconstpointer a, gconstpointer b)
{
  const int64_t *x = a, *y = b;
  return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Busy time of each GPU: the union of its batches' executions (under MPS
 * they overlap), and its time series. */
static void fill_gpus(const Replay *rp, CsResults *res, int64_t span_ns)
{
  const CsConfig *cfg = rp->cfg;
  const DecisionLog *log = rp->log;
  res->gpu_bins = g_new0(GArray *, MAX(cfg->n_gpus, 1));
  res->gpu_sm_bins = g_new0(GArray *, MAX(cfg->n_gpus, 1));
  GArray **spans = g_new0(GArray *, MAX(cfg->n_gpus, 1));
  for (int g = 0; g < cfg->n_gpus; g++)
    spans[g] = g_array_new(FALSE, FALSE, 2 * sizeof(int64_t));
  for (guint i = 0; i < log->batches->len; i++) {
    const DlBatch *b = &g_array_index(log->batches, DlBatch, i);
    const ReplayBatch *t = &g_array_index(rp->times, ReplayBatch, i);
    int64_t s[2] = { t->start_ns, t->end_ns };
    g_array_append_vals(spans[b->gpu], s, 1);
    res->gpus[b->gpu].batches++;
  }
  for (int g = 0; g < cfg->n_gpus; g++) {
    CsGpuResult *gr = &res->gpus[g];
    gr->node = cfg->gpus[g].node;
    gr->physical = cfg->gpus[g].physical;
    gr->mig_instance = cfg->gpus[g].mig_instance;
    gr->sm_fraction = cfg->gpus[g].sm_fraction;
    gr->memory_fraction = cfg->gpus[g].memory_fraction;
    gr->gpu_type = g_strdup(cfg->gpus[g].gpu_type);
    res->gpu_bins[g] = cs_bins_new();
    res->gpu_sm_bins[g] = cs_bins_new();
    g_array_sort(spans[g], by_start);
    int64_t from = -1, to = -1;
    for (guint i = 0; i <= spans[g]->len; i++) {
      const int64_t *s = i < spans[g]->len ? (const int64_t *)spans[g]->data + 2 * i : NULL;
      if (s && from >= 0 && s[0] <= to) {
        to = MAX(to, s[1]);
        continue;
      }
      if (from >= 0 && to > from) {
        gr->busy_ns += to - from;
        cs_bins_add_span(res->gpu_bins[g], res->bin_ns, from, to, 0.0);
      }
      if (s) {
        from = s[0];
        to = s[1];
      }
    }
    gr->busy_fraction = span_ns > 0 ? (double)gr->busy_ns / (double)span_ns : 0.0;
    g_array_unref(spans[g]);
  }
  g_free(spans);
  res->bin_total = cs_bins_merge(res->gpu_bins, cfg->n_gpus);
  res->has_series = TRUE; /* a replay's series follow its decision log, already in memory */
  cs_results_used_from_total(res);
}

CsResults *cs_replay_results(const Replay *rp, const char *described, const char *requests_csv,
                             GError **error)
{
  const DecisionLog *log = rp->log;
  const CsConfig *cfg = rp->cfg;
  FILE *csv = NULL;
  char *tmp = NULL;
  if (requests_csv) {
    tmp = g_strconcat(requests_csv, ".partial", NULL);
    csv = g_fopen(tmp, "w");
    if (!csv) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO, "%s: cannot write: %s",
                  requests_csv, g_strerror(errno));
      g_free(tmp);
      return NULL;
    }
    fputs("id,model,measured,status,send_ns,dispatch_ns,node_ns,exec_start_ns,exec_end_ns,"
          "receive_ns,latency_ns,slo_met,batch_size,gpu,replica,worker,batch_id\n", csv);
  }
  Client *clients = g_new0(Client, cfg->n_clients);
  for (int m = 0; m < cfg->n_clients; m++) {
    Client *c = &clients[m];
    c->cfg = &cfg->clients[m];
    c->window_start_ns = log->window_start_ns[m];
    c->window_end_ns = log->window_end_ns[m];
    c->e2e = cs_samples_new(FALSE, 0.0);
    c->router_wait = cs_samples_new(FALSE, 0.0);
    for (int s = CS_STAGE_ROUTER_WAIT + 1; s < CS_N_STAGES; s++)
      c->batch_stage[s] = cs_samples_new(TRUE, 0.0);
    c->batch_sizes = g_array_new(FALSE, TRUE, sizeof(int64_t));
  }
  GArray *send_late = g_array_sized_new(FALSE, FALSE, sizeof(int64_t), log->requests->len);
  for (guint i = 0; i < log->requests->len; i++) {
    const DlRequest *r = &g_array_index(log->requests, DlRequest, i);
    Client *c = &clients[r->model];
    c->generated++;
    c->measured += r->measured;
    c->warmup += !r->measured;
    int64_t late = rp->send_ns[i] - r->send_ns;
    g_array_append_val(send_late, late);
  }
  /* Results and requests that left, in the order they happened. */
  GArray *outcomes = g_array_sized_new(FALSE, FALSE, sizeof(Outcome),
                                       log->batches->len + log->left->len);
  GArray *dispatch_late = g_array_sized_new(FALSE, FALSE, sizeof(int64_t), log->batches->len);
  GArray *start_late = g_array_sized_new(FALSE, FALSE, sizeof(int64_t), log->batches->len);
  int64_t span = log->end_ns;
  for (guint i = 0; i < log->batches->len; i++) {
    const DlBatch *b = &g_array_index(log->batches, DlBatch, i);
    const ReplayBatch *t = &g_array_index(rp->times, ReplayBatch, i);
    Outcome o = { receive_ns(rp, b, t), 0, TRUE, i };
    g_array_append_val(outcomes, o);
    g_array_append_val(dispatch_late, t->dispatch_late_ns);
    g_array_append_val(start_late, t->start_late_ns);
    span = MAX(span, o.at_ns);
  }
  for (guint i = 0; i < log->left->len; i++) {
    Outcome o = { g_array_index(rp->left_ns, int64_t, i), 0, FALSE, i };
    g_array_append_val(outcomes, o);
    span = MAX(span, o.at_ns);
  }
  /* Ties in the order of the timeline (a batch's result before a later
   * decision's): seq is the outcome's decision order. */
  for (guint i = 0; i < outcomes->len; i++)
    g_array_index(outcomes, Outcome, i).seq = i;
  g_array_sort(outcomes, by_time);
  for (guint i = 0; i < outcomes->len; i++) {
    const Outcome *o = &g_array_index(outcomes, Outcome, i);
    if (o->batch) {
      const DlBatch *b = &g_array_index(log->batches, DlBatch, o->index);
      count_result(rp, &clients[b->model], b, &g_array_index(rp->times, ReplayBatch, o->index),
                   o->at_ns, csv);
    } else {
      const DlLeft *l = &g_array_index(log->left, DlLeft, o->index);
      count_left(rp, &clients[l->model], l, o->at_ns, csv);
    }
  }
  g_array_unref(outcomes);

  CsResults *res = cs_results_alloc(cfg->n_clients, cfg->n_gpus);
  res->bin_ns = cfg->timeseries_bin_ns;
  for (int m = 0; m < cfg->n_clients; m++) {
    res->model_names[m] = g_strdup(cfg->clients[m].model);
    res->models[m].model = res->model_names[m];
    cs_engine_fill_model_result(&res->models[m], &clients[m]);
    res->models[m].expected_goodput_rps = NAN; /* a replay predicts nothing */
    g_array_append_vals(res->batch_sizes[m], clients[m].batch_sizes->data,
                        clients[m].batch_sizes->len);
  }
  cs_engine_fill_total(res, clients);
  fill_gpus(rp, res, span);
  res->seed = cfg->seed;
  res->sim_time_ns = span;
  res->events = log->timeline->len + log->batches->len;
  res->placement_policy = g_strdup(cJSON_GetStringValue(
    cJSON_GetObjectItemCaseSensitive(log->header, "placement")));
  res->dispatch_policy = g_strdup(cJSON_GetStringValue(
    cJSON_GetObjectItemCaseSensitive(log->header, "dispatch")));
  res->dispatch_params_json = cs_dispatch_describe_json(cfg->dispatch, cfg->dispatch_params);
  cJSON *setup = cs_config_setup_json(cfg, NULL);
  if (setup) {
    char *text = cJSON_PrintUnformatted(setup);
    res->setup_json = g_strdup(text);
    cJSON_free(text);
    cJSON_Delete(setup);
  }
  char *eff = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(log->header, "scenario"));
  res->effective_scenario = g_strdup(eff);
  cJSON_free(eff);
  /* Prices are the simulator's business: a replay is not priced. */
  res->cost.price_per_hour = res->cost.cost = res->cost.goodput_per_dollar = NAN;
  res->cost.gpu_hours = res->cost.paid_per_hour = NAN;
  res->cost.duration_s = res->total.window_s;
  res->cost_note = g_strdup("a replay is not priced: see the simulated run's summary");
  res->cost.note = res->cost_note;

  res->warnings = cs_warning_list_new();
  CsLatencyStats ls_dispatch, ls_start, ls_send;
  cJSON *rj = cJSON_CreateObject();
  cJSON_AddStringToObject(rj, "backend", rp->backend->name);
  cJSON *bd = described ? cJSON_Parse(described) : NULL;
  cJSON_AddItemToObject(rj, "backend_details", bd ? bd : cJSON_CreateObject());
  cJSON_AddNumberToObject(rj, "max_lateness_ms", rp->max_lateness_ms);
  cJSON_AddBoolToObject(rj, "clock_thread_realtime", rp->realtime);
  cJSON_AddBoolToObject(rj, "executors_spin", rp->spin_idle);
  cJSON *lat = cJSON_AddObjectToObject(rj, "lateness_ms");
  cJSON_AddItemToObject(lat, "batch_sent", lateness_json(dispatch_late, &ls_dispatch));
  cJSON_AddItemToObject(lat, "batch_started", lateness_json(start_late, &ls_start));
  cJSON_AddItemToObject(lat, "request_sent", lateness_json(send_late, &ls_send));
  /* Not the replay's own: how late a thread of normal priority woke from a
   * sleep meanwhile (replay.c, the probe), the machine's other load. */
  CsLatencyStats ls_wakeup;
  if (rp->wakeup_late_ns)
    cJSON_AddItemToObject(lat, "normal_thread_wakeup",
                          lateness_json(rp->wakeup_late_ns, &ls_wakeup));
  double p99_dispatch = isfinite(ls_dispatch.p99) ? ls_dispatch.p99 : 0.0;
  double p99_start = isfinite(ls_start.p99) ? ls_start.p99 : 0.0;
  gboolean valid = p99_dispatch <= rp->max_lateness_ms && p99_start <= rp->max_lateness_ms;
  res->replay_invalid = !valid;
  cJSON_AddBoolToObject(rj, "valid", valid);
  cJSON_AddNumberToObject(rj, "batches", log->batches->len);
  char *rtext = cJSON_PrintUnformatted(rj);
  res->replay_json = g_strdup(rtext);
  cJSON_free(rtext);
  cJSON_Delete(rj);
  g_array_unref(dispatch_late);
  g_array_unref(start_late);
  g_array_unref(send_late);
  if (!valid)
    cs_warning_add(res->warnings, "replay_late", NULL, -1,
                   "the replay's own scheduling was late: 99th percentile %.3f ms sending "
                   "batches and %.3f ms starting them, above the %.3f ms bound; its latencies "
                   "include that overhead and are not a valid measurement of the backend",
                   p99_dispatch, p99_start, rp->max_lateness_ms);
  /* The machine's other load, from the probe (probe.h), judged against the
   * median batch. */
  if (rp->wakeup_late_ns && rp->wakeup_late_ns->len > 0) {
    GArray *exec_ns = g_array_sized_new(FALSE, FALSE, sizeof(int64_t), log->batches->len);
    for (guint i = 0; i < log->batches->len; i++) {
      const ReplayBatch *t = &g_array_index(rp->times, ReplayBatch, i);
      int64_t d = t->end_ns - t->start_ns;
      if (d > 0)
        g_array_append_val(exec_ns, d);
    }
    CsLatencyStats ls_exec;
    cs_latency_stats((int64_t *)exec_ns->data, exec_ns->len, &ls_exec);
    g_array_unref(exec_ns);
    if (cs_probe_busy(ls_wakeup.p90, ls_exec.p50))
      cs_warning_add(res->warnings, "replay_machine_busy", NULL, -1,
                     "the machine was busy during the replay: a thread of normal priority woke "
                     "%.3f ms late from its sleeps (p90; median %.3f ms), %.0f %% of the median "
                     "batch (%.3f ms); the replay's executors, of normal priority too, were as "
                     "late, and batch times and latencies include it: errors of that size are "
                     "the machine's, not the simulator's",
                     ls_wakeup.p90, ls_wakeup.p50, 100.0 * ls_wakeup.p90 / ls_exec.p50,
                     ls_exec.p50);
  }
  if (log->n_controller_records > 0)
    cs_warning_add(res->warnings, "replay_no_loads", NULL, -1,
                   "the run's controller changed replicas or GPUs (%d records): the replay sends "
                   "batches where and when they were decided, but loads no model and provisions "
                   "no GPU during the run (every worker is prepared before it starts)",
                   log->n_controller_records);
  for (int g = 0; g < cfg->n_gpus; g++)
    if (cfg->gpus[g].mig_instance >= 0) {
      cs_warning_add(res->warnings, "replay_mig", NULL, g,
                     "a MIG instance: backend \"%s\" runs it as it runs a whole GPU",
                     rp->backend->name);
      break;
    }
  for (int m = 0; m < cfg->n_clients; m++)
    if (clients[m].resolved < clients[m].generated)
      cs_warning_add(res->warnings, "requests_held", cfg->clients[m].model, -1,
                     "%" G_GINT64_FORMAT " of its %" G_GINT64_FORMAT " requests were never sent, "
                     "dropped or marked unserved in the log: they count as not answered",
                     (gint64)(clients[m].generated - clients[m].resolved),
                     (gint64)clients[m].generated);
  cs_engine_warn_about_run(res);

  for (int m = 0; m < cfg->n_clients; m++) {
    Client *c = &clients[m];
    cs_samples_free(c->e2e);
    cs_samples_free(c->router_wait);
    for (int s = 0; s < CS_N_STAGES; s++)
      cs_samples_free(c->batch_stage[s]);
    g_array_unref(c->batch_sizes);
  }
  g_free(clients);
  if (csv) {
    gboolean ok = !ferror(csv);
    ok = fclose(csv) == 0 && ok;
    if (ok && g_rename(tmp, requests_csv) != 0)
      ok = FALSE;
    if (!ok) {
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO, "%s: cannot write: %s", requests_csv,
                  g_strerror(errno));
      g_unlink(tmp);
      cs_results_free(res);
      res = NULL;
    }
    g_free(tmp);
  }
  return res;
}
