/* The outputs of a run: the summary JSON, the per-model table and the CSV
 * time series (clustersim.h), rendered from the results the engine filled. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/json_input.h"
#include "cs_config.h"
#include "outputs.h"
#include "llm/llm_sim.h"
#include "sim/results.h"
#include "sim/rng.h"

/* The warnings as a JSON array of {"code", "model", "gpu", "message"} (model
 * and gpu are left out when they do not apply). */
cJSON *cs_warning_list_to_json(const CsWarningList *l)
{
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < cs_warning_list_len(l); i++) {
    const CsWarning *w = cs_warning_list_get(l, i);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "code", w->code);
    if (w->model)
      cJSON_AddStringToObject(o, "model", w->model);
    if (w->gpu >= 0)
      cJSON_AddNumberToObject(o, "gpu", w->gpu);
    cJSON_AddStringToObject(o, "message", w->message);
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

/* JSON has no NaN: an undefined statistic is null. */
static void add_num(cJSON *o, const char *k, double v)
{
  if (isfinite(v))
    cJSON_AddNumberToObject(o, k, v);
  else
    cJSON_AddNullToObject(o, k);
}

static cJSON *latency_json(const CsLatencyStats *l, gboolean full)
{
  cJSON *o = cJSON_CreateObject();
  add_num(o, "p50", l->p50);
  if (full)
    add_num(o, "p90", l->p90);
  add_num(o, "p95", l->p95);
  if (full) {
    add_num(o, "p99", l->p99);
    add_num(o, "max", l->max);
  }
  /* Stage means add up to the mean latency, which percentiles do not: the
   * stage breakdown figure stacks them. */
  add_num(o, "mean", l->mean);
  return o;
}

static cJSON *model_json(const CsResults *r, const CsModelResult *m, int index)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "model", m->model);
  add_num(o, "slo_ms", m->slo_ms);
  add_num(o, "offered_rps", m->offered_rps);
  add_num(o, "planned_rps", m->planned_rps);
  add_num(o, "submitted_rps", m->submitted_rps);
  add_num(o, "throughput_rps", m->throughput_rps);
  add_num(o, "goodput_rps", m->goodput_rps);
  add_num(o, "expected_goodput_rps", m->expected_goodput_rps);
  add_num(o, "bad_rate", m->bad_rate);
  add_num(o, "window_s", m->window_s);
  add_num(o, "drain_s", m->drain_s);
  cJSON *req = cJSON_AddObjectToObject(o, "requests");
  cJSON_AddNumberToObject(req, "generated", (double)m->generated);
  cJSON_AddNumberToObject(req, "warmup", (double)m->warmup);
  cJSON_AddNumberToObject(req, "measured", (double)m->measured);
  cJSON_AddNumberToObject(req, "completed", (double)m->completed);
  cJSON_AddNumberToObject(req, "good", (double)m->good);
  cJSON_AddNumberToObject(req, "late", (double)m->late);
  cJSON_AddNumberToObject(req, "dropped", (double)m->dropped);
  cJSON_AddNumberToObject(req, "unserved", (double)m->unserved);
  cJSON_AddNumberToObject(req, "failed", (double)m->failed);
  cJSON_AddNumberToObject(req, "results_in_window", (double)m->in_window);
  cJSON_AddNumberToObject(req, "good_results_in_window", (double)m->good_in_window);
  cJSON_AddItemToObject(o, "latency_ms", latency_json(&m->latency, TRUE));
  cJSON *st = cJSON_AddObjectToObject(o, "stages_ms");
  for (int s = 0; s < CS_N_STAGES; s++)
    cJSON_AddItemToObject(st, cs_stage_name(s), latency_json(&m->stage[s], FALSE));
  cJSON *b = cJSON_AddObjectToObject(o, "batches");
  cJSON_AddNumberToObject(b, "count", (double)m->batches);
  add_num(b, "mean_size", m->mean_batch);
  if (index >= 0) {
    cJSON *sizes = cJSON_AddObjectToObject(b, "sizes");
    GArray *bs = r->batch_sizes[index];
    for (guint s = 1; s < bs->len; s++) {
      int64_t n = g_array_index(bs, int64_t, s);
      if (n > 0) {
        char key[16];
        g_snprintf(key, sizeof key, "%u", s);
        cJSON_AddNumberToObject(sizes, key, (double)n);
      }
    }
    cJSON *reps = cJSON_AddArrayToObject(o, "replicas");
    /* The model's replicas, in the placement's order. */
    for (int i = 0; r->placement && i < cs_placement_n_replicas(r->placement); i++) {
      const CsReplica *rr = cs_placement_replica(r->placement, i);
      if (rr->model != index)
        continue;
      cJSON *x = cJSON_CreateObject();
      cJSON_AddNumberToObject(x, "gpu", rr->gpu);
      cJSON_AddNumberToObject(x, "batch", rr->batch);
      cJSON_AddNumberToObject(x, "mps_share", rr->mps_share);
      cJSON_AddItemToArray(reps, x);
    }
  }
  return o;
}

/* An LLM deployment's own figures (CsLlmModelResult); its requests' are
 * in "models" under the same name. */
static cJSON *llm_json(const CsLlmModelResult *m)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "model", m->model);
  cJSON_AddStringToObject(o, "llm_model", m->llm_model);
  cJSON_AddStringToObject(o, "device", m->device);
  cJSON_AddStringToObject(o, "scheduler", m->scheduler);
  cJSON_AddNumberToObject(o, "replicas", m->replicas);
  cJSON_AddNumberToObject(o, "decode_replicas", m->decode_replicas);
  cJSON_AddNumberToObject(o, "tensor_parallel", m->tensor_parallel);
  cJSON_AddNumberToObject(o, "gpus", m->gpus);
  cJSON *slo = cJSON_AddObjectToObject(o, "slo");
  add_num(slo, "ttft_ms", m->ttft_slo_ms);
  add_num(slo, "tpot_ms", m->tpot_slo_ms);
  cJSON_AddItemToObject(o, "ttft_ms", latency_json(&m->ttft, TRUE));
  cJSON_AddItemToObject(o, "tbt_ms", latency_json(&m->tbt, TRUE));
  cJSON_AddItemToObject(o, "tpot_ms", latency_json(&m->tpot, TRUE));
  cJSON_AddNumberToObject(o, "output_tokens", (double)m->output_tokens);
  add_num(o, "output_tokens_per_s", m->output_tokens_per_s);
  cJSON_AddNumberToObject(o, "batches", (double)m->batches);
  cJSON_AddNumberToObject(o, "preemptions", (double)m->restarts);
  cJSON_AddNumberToObject(o, "attention_clamped_batches", (double)m->attention_clamped_batches);
  add_num(o, "kv_peak_util", m->kv_peak_util);
  add_num(o, "kv_mean_util", m->kv_mean_util);
  add_num(o, "busy_fraction", m->busy_fraction);
  add_num(o, "mfu", m->mfu);
  add_num(o, "mfu_busy", m->mfu_busy);
  return o;
}

char *cs_results_to_json(const CsResults *r)
{
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "clustersim_version", CS_VERSION);
  cJSON_AddNumberToObject(root, "seed", (double)r->seed);
  /* Which generator drew the seed's streams (rng.h): another version, other draws. */
  cJSON_AddNumberToObject(root, "rng_stream_version", CS_RNG_STREAM_VERSION);
  cJSON_AddItemToObject(root, "warnings", cs_warning_list_to_json(r->warnings));
  add_num(root, "simulated_time_s", r->sim_time_ns * 1e-9);
  cJSON *setup = r->setup_json ? cJSON_Parse(r->setup_json) : NULL;
  cJSON_AddItemToObject(root, "setup", setup ? setup : cJSON_CreateObject());
  cJSON *disp = cJSON_AddObjectToObject(root, "dispatch");
  cJSON_AddStringToObject(disp, "policy", r->dispatch_policy);
  cJSON *params = r->dispatch_params_json ? cJSON_Parse(r->dispatch_params_json) : NULL;
  cJSON_AddItemToObject(disp, "params", params ? params : cJSON_CreateObject());
  cJSON *pl = cJSON_AddObjectToObject(root, "placement");
  cJSON_AddStringToObject(pl, "policy", r->placement_policy);
  add_num(pl, "expected_goodput_rps",
          r->placement ? cs_placement_expected_total(r->placement) : NAN);
  cJSON_AddStringToObject(pl, "log", r->placement ? cs_placement_log_text(r->placement) : "");
  cJSON *models = cJSON_AddArrayToObject(root, "models");
  for (int i = 0; i < r->n_models; i++)
    cJSON_AddItemToArray(models, model_json(r, &r->models[i], i));
  cJSON_AddItemToObject(root, "total", model_json(r, &r->total, -1));
  if (r->n_llm > 0) { /* absent without: the DNN summaries stay as they were */
    cJSON *llm = cJSON_AddArrayToObject(root, "llm");
    for (int i = 0; i < r->n_llm; i++)
      cJSON_AddItemToArray(llm, llm_json(&r->llm[i]));
  }
  /* Unknown prices give null, never 0: a free cluster would win every comparison. */
  cJSON *cost = cJSON_AddObjectToObject(root, "cost");
  add_num(cost, "price_per_hour", r->cost.price_per_hour);
  add_num(cost, "duration_s", r->cost.duration_s);
  add_num(cost, "cost", r->cost.cost);
  add_num(cost, "goodput_per_dollar", r->cost.goodput_per_dollar);
  add_num(cost, "gpu_hours", r->cost.gpu_hours);
  if (r->control)
    add_num(cost, "paid_per_hour", r->cost.paid_per_hour);
  if (r->cost.note)
    cJSON_AddStringToObject(cost, "note", r->cost.note);
  if (r->control) {
    const CsControlSummary *k = r->control;
    cJSON *ctl = cJSON_AddObjectToObject(root, "control");
    cJSON_AddStringToObject(ctl, "policy", k->policy);
    cJSON *cp = k->params_json ? cJSON_Parse(k->params_json) : NULL;
    cJSON_AddItemToObject(ctl, "params", cp ? cp : cJSON_CreateObject());
    cJSON_AddNumberToObject(ctl, "placement_changes", (double)k->changes);
    cJSON_AddNumberToObject(ctl, "replicas_added", (double)k->added);
    cJSON_AddNumberToObject(ctl, "replica_loads", (double)k->loads);
    cJSON_AddNumberToObject(ctl, "replicas_removed", (double)k->removals);
    add_num(ctl, "load_s_total", k->load_s_total);
    cJSON_AddNumberToObject(ctl, "replicas_total", k->replicas_total);
    cJSON_AddNumberToObject(ctl, "gpus_provisioned", (double)k->provisions);
    cJSON_AddNumberToObject(ctl, "gpus_released", (double)k->releases);
    /* Every replica of the run and when it was added, became active, began
     * to drain and retired (null: it did not). */
    cJSON *reps = cJSON_AddArrayToObject(ctl, "replicas");
    for (guint i = 0; r->replica_spans && i < r->replica_spans->len; i++) {
      const CsReplicaSpan *sp = &g_array_index(r->replica_spans, CsReplicaSpan, i);
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "model", r->models[sp->replica.model].model);
      cJSON_AddNumberToObject(x, "gpu", sp->replica.gpu);
      cJSON_AddNumberToObject(x, "batch", sp->replica.batch);
      cJSON_AddNumberToObject(x, "mps_share", sp->replica.mps_share);
      add_num(x, "added_s", sp->added_ns >= 0 ? sp->added_ns * 1e-9 : NAN);
      add_num(x, "active_s", sp->active_ns >= 0 ? sp->active_ns * 1e-9 : NAN);
      add_num(x, "drain_s", sp->drain_ns >= 0 ? sp->drain_ns * 1e-9 : NAN);
      add_num(x, "retired_s", sp->retired_ns >= 0 ? sp->retired_ns * 1e-9 : NAN);
      cJSON_AddItemToArray(reps, x);
    }
    cJSON_AddStringToObject(ctl, "log", k->log ? k->log : "");
  }
  cJSON *gpus = cJSON_AddArrayToObject(root, "gpus");
  for (int g = 0; g < r->n_gpus; g++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", g);
    cJSON_AddNumberToObject(o, "node", r->gpus[g].node);
    cJSON_AddStringToObject(o, "gpu_type", r->gpus[g].gpu_type);
    add_num(o, "busy_fraction", r->gpus[g].busy_fraction);
    add_num(o, "memory_pct", r->gpus[g].memory_pct);
    if (r->gpus[g].mig_instance >= 0) {
      cJSON_AddNumberToObject(o, "physical_gpu", r->gpus[g].physical);
      cJSON_AddNumberToObject(o, "mig_instance", r->gpus[g].mig_instance);
      add_num(o, "sm_fraction", r->gpus[g].sm_fraction);
      add_num(o, "memory_fraction", r->gpus[g].memory_fraction);
    }
    cJSON_AddNumberToObject(o, "batches", (double)r->gpus[g].batches);
    if (r->control)
      add_num(o, "provisioned_s", (double)r->gpus[g].billed_ns * 1e-9);
    if (r->gpus[g].preempted > 0) {
      cJSON_AddNumberToObject(o, "batches_preempted", (double)r->gpus[g].preempted);
      add_num(o, "preempted_ms", (double)r->gpus[g].preempted_ns / 1e6);
    }
    cJSON_AddItemToArray(gpus, o);
  }
  /* Symphony 3.5: bad rate r and idle fraction f are the autoscaling signals;
   * N*r/(1-r) GPUs to add, N*f to remove. */
  cJSON *as = cJSON_AddObjectToObject(root, "autoscaling");
  double busy = 0;
  for (int g = 0; g < r->n_gpus; g++)
    busy += r->gpus[g].busy_fraction;
  double idle = r->n_gpus > 0 ? 1.0 - busy / r->n_gpus : 0.0;
  double bad = r->total.bad_rate;
  add_num(as, "bad_rate", bad);
  add_num(as, "gpu_idle_fraction", idle);
  add_num(as, "advice_add_gpus", bad < 1.0 ? r->n_gpus * bad / (1.0 - bad) : NAN);
  add_num(as, "advice_remove_gpus", r->n_gpus * idle);
  /* GPUs used per bin of the scenario's width, over every bin up to the
   * last one a GPU ran in, idle bins included (sim/used.h). */
  add_num(as, "gpus_used_mean", r->gpus_used_mean);
  cJSON_AddNumberToObject(as, "gpus_used_max", (double)r->gpus_used_max);
  add_num(as, "timeseries_bin_s", r->used_bin_ns * 1e-9);
  if (r->has_series && r->bin_ns != r->used_bin_ns) {
    /* Only then, so that the summaries of shorter runs stay as they were:
     * the CSV series' own width, doubled from the scenario's to bound them. */
    cJSON *ts = cJSON_AddObjectToObject(root, "timeseries");
    add_num(ts, "bin_s", r->bin_ns * 1e-9);
    add_num(ts, "requested_bin_s", r->used_bin_ns * 1e-9);
    cJSON_AddNumberToObject(ts, "max_runs", CS_SERIES_MAX_RUNS);
  }
  if (r->percentile_sketch > 0) {
    /* Only then: exact runs' summaries stay as they were. */
    cJSON *pc = cJSON_AddObjectToObject(root, "percentiles");
    cJSON_AddStringToObject(pc, "mode", "sketch");
    add_num(pc, "relative_error", r->percentile_sketch);
  }
  if (r->replay_json) {
    cJSON *rp = cJSON_Parse(r->replay_json);
    cJSON_AddItemToObject(root, "replay", rp ? rp : cJSON_CreateObject());
  }
  cJSON *eng = cJSON_AddObjectToObject(root, "engine");
  cJSON_AddNumberToObject(eng, "events", (double)r->events);
  char *s = cs_json_print_exact(root);
  cJSON_Delete(root);
  char *out = g_strconcat(s, "\n", NULL);
  g_free(s);
  return out;
}

static void fmt_num(char *buf, size_t n, double v, int prec)
{
  if (isfinite(v))
    g_snprintf(buf, n, "%.*f", prec, v);
  else
    g_strlcpy(buf, "-", n);
}

/* Whether any model's placement planned for a rate other than the one sent:
 * then the table shows both. */
static gboolean shows_planned(const CsResults *r)
{
  for (int i = 0; i < r->n_models; i++)
    if (r->models[i].planned_rps != r->models[i].offered_rps)
      return TRUE;
  return FALSE;
}

/* The model's plan gap, 1 - goodput / min(expected, offered), as the
 * plan_gap warning judges it (sim/plan_gap.c); NAN when the placement
 * expected nothing of it (no placement, or an expected goodput of 0). */
static double plan_gap_of(const CsModelResult *m, double *target)
{
  *target = 0.0;
  if (!isfinite(m->expected_goodput_rps) || m->expected_goodput_rps <= 0)
    return NAN;
  *target = MIN(m->expected_goodput_rps, m->offered_rps);
  return 1.0 - m->goodput_rps / *target;
}

static void print_row(FILE *out, const CsModelResult *m, gboolean planned, double gap)
{
  char slo[32], off[32], pla[32], thr[32], good[32], exp[32], gp[32], bad[32], p50[32], p99[32],
    mb[32];
  fmt_num(slo, sizeof slo, m->slo_ms, 1);
  fmt_num(off, sizeof off, m->offered_rps, 1);
  fmt_num(pla, sizeof pla, m->planned_rps, 1);
  fmt_num(thr, sizeof thr, m->throughput_rps, 1);
  fmt_num(good, sizeof good, m->goodput_rps, 1);
  fmt_num(exp, sizeof exp, m->expected_goodput_rps, 1);
  fmt_num(gp, sizeof gp, 100.0 * gap, 1);
  fmt_num(bad, sizeof bad, 100.0 * m->bad_rate, 2);
  fmt_num(p50, sizeof p50, m->latency.p50, 2);
  fmt_num(p99, sizeof p99, m->latency.p99, 2);
  fmt_num(mb, sizeof mb, m->mean_batch, 1);
  fprintf(out, "%-16s %7s %9s", m->model, slo, off);
  if (planned)
    fprintf(out, " %9s", pla);
  fprintf(out,
          " %10s %9s %9s %6s %7s %9s %9s %6s %8" G_GINT64_FORMAT " %8" G_GINT64_FORMAT
          " %7" G_GINT64_FORMAT " %7" G_GINT64_FORMAT "\n",
          thr, good, exp, gp, bad, p50, p99, mb, (gint64)m->dropped, (gint64)m->unserved,
          (gint64)m->failed, (gint64)m->late);
}

void cs_results_print_table(const CsResults *r, FILE *out)
{
  gboolean planned = shows_planned(r);
  fprintf(out, "%-16s %7s %9s", "model", "slo_ms", "offered");
  if (planned)
    fprintf(out, " %9s", "planned");
  fprintf(out, " %10s %9s %9s %6s %7s %9s %9s %6s %8s %8s %7s %7s\n", "throughput", "goodput",
          "expected", "gap_%", "bad_%", "p50_ms", "p99_ms", "batch", "dropped", "unserved",
          "failed", "late");
  /* The total's gap: the judged models' goodput against their targets. */
  double target_sum = 0.0, goodput_sum = 0.0;
  for (int i = 0; i < r->n_models; i++) {
    double target;
    double gap = plan_gap_of(&r->models[i], &target);
    print_row(out, &r->models[i], planned, gap);
    if (!isnan(gap)) {
      target_sum += target;
      goodput_sum += r->models[i].goodput_rps;
    }
  }
  print_row(out, &r->total, planned, target_sum > 0 ? 1.0 - goodput_sum / target_sum : NAN);
  fprintf(out,
          "\nrates in req/s over the measurement window; throughput and goodput count results "
          "arriving in it;\nbad_%% counts measured requests not answered within the SLO "
          "(dropped, unserved, failed or too slow);\nlate = measured requests answered after "
          "the window; dispatch %s; expected = goodput placement %s predicts;\ngap_%% = how far "
          "goodput falls short of min(expected, offered) (negative: above it)\n",
          r->dispatch_policy, r->placement_policy);
  if (r->percentile_sketch > 0)
    fprintf(out, "percentiles (p50, p99 and the stages) from a quantile sketch: each within "
                 "%.4g %% of the exact value (outputs.percentile_sketch); max and mean exact\n",
            100.0 * r->percentile_sketch);
  if (isfinite(r->cost.cost))
    fprintf(out, "cost: $%.4g per hour, $%.4g for the %.6g s measured", r->cost.price_per_hour,
            r->cost.cost, r->cost.duration_s);
  else
    fprintf(out, "cost: -");
  if (isfinite(r->cost.goodput_per_dollar))
    fprintf(out, ", %.6g good requests per dollar", r->cost.goodput_per_dollar);
  fprintf(out, "%s%s\n", r->cost.note ? "; " : "", r->cost.note ? r->cost.note : "");
  if (r->control)
    fprintf(out,
            "controller %s: %" G_GINT64_FORMAT " placement change(s), %" G_GINT64_FORMAT
            " replica(s) added (%" G_GINT64_FORMAT " loaded weights, %.4g s in all), %"
            G_GINT64_FORMAT " removed, %" G_GINT64_FORMAT " GPU(s) provisioned, %" G_GINT64_FORMAT
            " released; %.4g GPU-hours\n",
            r->control->policy, (gint64)r->control->changes, (gint64)r->control->added,
            (gint64)r->control->loads, r->control->load_s_total, (gint64)r->control->removals,
            (gint64)r->control->provisions, (gint64)r->control->releases, r->cost.gpu_hours);
  fprintf(out, "gpu busy:");
  for (int g = 0; g < r->n_gpus; g++)
    fprintf(out, " %d:%.1f%%", g, 100.0 * r->gpus[g].busy_fraction);
  fprintf(out, "\n");
  for (int i = 0; i < r->n_llm; i++) {
    const CsLlmModelResult *m = &r->llm[i];
    fprintf(out, "llm %s: %s, %d replica(s)", m->model, m->llm_model, m->replicas);
    if (m->decode_replicas > 0)
      fprintf(out, " + %d decode", m->decode_replicas);
    fprintf(out, " x TP%d on %d %s GPU(s), %s; SLO TTFT %.6g ms, TPOT %.6g ms (its slo_ms "
                 "above: the e2e both allow the longest output)\n",
            m->tensor_parallel, m->gpus, m->device, m->scheduler, m->ttft_slo_ms, m->tpot_slo_ms);
    fprintf(out, "  ms p50/p90/p99: TTFT %.6g/%.6g/%.6g, TBT %.6g/%.6g/%.6g, TPOT "
                 "%.6g/%.6g/%.6g; %.6g output tokens/s, %" G_GINT64_FORMAT " preemptions, KV "
                 "peak %.1f %% mean %.1f %%, busy %.1f %%, MFU %.2f %%\n",
            m->ttft.p50, m->ttft.p90, m->ttft.p99, m->tbt.p50, m->tbt.p90, m->tbt.p99,
            m->tpot.p50, m->tpot.p90, m->tpot.p99, m->output_tokens_per_s, (gint64)m->restarts,
            100 * m->kv_peak_util, 100 * m->kv_mean_util, 100 * m->busy_fraction, 100 * m->mfu);
  }
  double sim_s = r->sim_time_ns * 1e-9;
  fprintf(out,
          "engine: %" G_GUINT64_FORMAT " events, %.3f s simulated, %.3f s wall, %.0f events/s, "
          "%.0f simulated requests/s\n",
          (guint64)r->events, sim_s, r->wall_s, r->wall_s > 0 ? r->events / r->wall_s : 0.0,
          r->wall_s > 0 ? r->total.generated / r->wall_s : 0.0);
  if (cs_warning_list_len(r->warnings) > 0)
    fprintf(out, "warnings: %d (on stderr and in summary.json)\n",
            cs_warning_list_len(r->warnings));
}

/* Opens path for writing; NULL with error set when it cannot. */
static FILE *open_csv(const char *path, const char *header, GError **error)
{
  FILE *f = g_fopen(path, "w");
  if (!f) {
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: cannot write: %s", path, g_strerror(errno));
    return NULL;
  }
  fputs(header, f);
  return f;
}

/* Closes f; FALSE with error set when anything written to it failed. */
static gboolean close_csv(FILE *f, const char *path, GError **error)
{
  gboolean ok = !ferror(f);
  int saved = errno;
  if (fclose(f) != 0) {
    ok = FALSE;
    saved = errno;
  }
  if (!ok)
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: cannot write: %s", path, g_strerror(saved));
  return ok;
}

/* The writers of time series need a run that kept them. */
static gboolean need_series(const CsResults *r, const char *path, GError **error)
{
  if (r->has_series)
    return TRUE;
  g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
              "%s: the run kept no time series (run it with CsRunOptions.timeseries set, as "
              "clustersim run --output does)", path);
  return FALSE;
}

gboolean cs_results_write_llm_timeseries(const CsResults *r, const char *path, GError **error)
{
  if (!need_series(r, path, error))
    return FALSE;
  if (r->n_llm == 0) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID, "%s: the run has no LLM deployment", path);
    return FALSE;
  }
  FILE *out = open_csv(path, "model," CS_LLM_SERIES_HEADER, error);
  if (!out)
    return FALSE;
  for (int i = 0; i < r->n_llm; i++)
    fputs(r->llm[i].series_csv ? r->llm[i].series_csv : "", out);
  return close_csv(out, path, error);
}

/* The files are streamed: the time series are held as runs of equal bins
 * (sim/bins.h) and written a row per bin something happened in, so neither
 * memory nor the files grow with idle simulated time. */
gboolean cs_results_write_gpu_timeseries(const CsResults *r, const char *path, GError **error)
{
  if (!need_series(r, path, error))
    return FALSE;
  FILE *out = open_csv(path, "time_s,gpus_used,busy_gpus\n", error);
  if (!out)
    return FALSE;
  for (guint i = 0; r->bin_total && i < r->bin_total->len; i++) {
    const CsBinRun *run = &g_array_index(r->bin_total, CsBinRun, i);
    char busy[G_ASCII_DTOSTR_BUF_SIZE];
    /* busy GPU-ns over the bin width = average number of busy GPUs */
    g_ascii_formatd(busy, sizeof busy, "%.6f", (double)run->a / (double)r->bin_ns);
    for (int64_t b = run->first; b < run->first + run->n; b++) {
      char t[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_formatd(t, sizeof t, "%.9g", b * r->bin_ns * 1e-9);
      fprintf(out, "%s,%" G_GINT64_FORMAT ",%s\n", t, (gint64)run->b, busy);
    }
  }
  return close_csv(out, path, error);
}

static int cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

gboolean cs_results_write_model_timeseries(const CsResults *r, const char *path,
                                           const char *cluster_path, GError **error)
{
  if (!need_series(r, path, error))
    return FALSE;
  FILE *out = open_csv(path, "time_s,model,sent,good,bad,goodput_rps\n", error);
  if (!out)
    return FALSE;
  double bin_s = r->bin_ns * 1e-9;
  for (int m = 0; m < r->n_models; m++) {
    const GArray *runs = r->model_series ? r->model_series[m] : NULL;
    for (guint i = 0; runs && i < runs->len; i++) {
      const CsBinRun *x = &g_array_index(runs, CsBinRun, i);
      for (int64_t b = x->first; b < x->first + x->n; b++)
        fprintf(out, "%.9g,%s,%.0f,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%.6g\n", b * bin_s,
                r->models[m].model, x->x, (gint64)x->a, (gint64)x->b, (double)x->a / bin_s);
    }
  }
  if (!close_csv(out, path, error))
    return FALSE;
  if (!cluster_path)
    return TRUE;
  /* A step function: +1 at each provisioning, -1 at each end, in time order. */
  GArray *steps = g_array_new(FALSE, FALSE, sizeof(int64_t) * 2);
  for (int g = 0; g < r->n_gpus; g++)
    for (guint i = 0; r->gpus[g].on_spans && i + 1 < r->gpus[g].on_spans->len; i += 2) {
      int64_t up[2] = { g_array_index(r->gpus[g].on_spans, int64_t, i), 1 };
      int64_t down[2] = { g_array_index(r->gpus[g].on_spans, int64_t, i + 1), -1 };
      g_array_append_val(steps, up);
      g_array_append_val(steps, down);
    }
  g_array_sort(steps, cmp_i64);
  out = open_csv(cluster_path, "time_s,gpus_provisioned\n", error);
  if (!out) {
    g_array_unref(steps);
    return FALSE;
  }
  int64_t level = 0;
  for (guint i = 0; i < steps->len; i++) {
    const int64_t *st = (const int64_t *)steps->data + 2 * i;
    level += st[1];
    if (i + 1 < steps->len && ((const int64_t *)steps->data)[2 * (i + 1)] == st[0])
      continue; /* one row per time */
    fprintf(out, "%.9g,%" G_GINT64_FORMAT "\n", st[0] * 1e-9, (gint64)level);
  }
  g_array_unref(steps);
  return close_csv(out, cluster_path, error);
}

/* Walks a series bin by bin. */
typedef struct {
  const GArray *runs;
  guint i;
  int64_t off;
} BinWalk;

/* The current bin, or INT64_MAX past the end. */
static int64_t walk_bin(const BinWalk *w)
{
  return w->runs && w->i < w->runs->len ? g_array_index(w->runs, CsBinRun, w->i).first + w->off
                                         : INT64_MAX;
}

static const CsBinRun *walk_next(BinWalk *w)
{
  const CsBinRun *run = &g_array_index(w->runs, CsBinRun, w->i);
  if (++w->off == run->n) {
    w->i++;
    w->off = 0;
  }
  return run;
}

gboolean cs_results_write_gpu_detail(const CsResults *r, const char *gpu_path,
                                     const char *worker_path, GError **error)
{
  if (!need_series(r, gpu_path, error))
    return FALSE;
  double bin_s = r->bin_ns * 1e-9;
  FILE *out = open_csv(gpu_path, "time_s,gpu,busy_fraction,sm_use,memory_pct\n", error);
  if (!out)
    return FALSE;
  for (int g = 0; g < r->n_gpus; g++) {
    /* A row per bin the GPU was busy or used SMs in: the union of its two
     * series, in bin order. */
    BinWalk busy = { r->gpu_bins ? r->gpu_bins[g] : NULL, 0, 0 };
    BinWalk sm = { r->gpu_sm_bins ? r->gpu_sm_bins[g] : NULL, 0, 0 };
    for (;;) {
      int64_t b = MIN(walk_bin(&busy), walk_bin(&sm));
      if (b == INT64_MAX)
        break;
      int64_t busy_ns = walk_bin(&busy) == b ? walk_next(&busy)->a : 0;
      double sm_ns = walk_bin(&sm) == b ? walk_next(&sm)->x : 0.0;
      fprintf(out, "%.9g,%d,%.6f,%.6f,%.4f\n", b * bin_s, g, (double)busy_ns / (double)r->bin_ns,
              sm_ns / (double)r->bin_ns, r->gpus[g].memory_pct);
    }
  }
  if (!close_csv(out, gpu_path, error))
    return FALSE;
  out = open_csv(worker_path, "time_s,worker,model,gpu,mps_share,batches,mean_gpu_latency_ms\n",
                 error);
  if (!out)
    return FALSE;
  for (int w = 0; w < r->n_workers; w++) {
    BinWalk walk = { r->workers[w].bins, 0, 0 };
    for (int64_t b; (b = walk_bin(&walk)) != INT64_MAX;) {
      const CsBinRun *x = walk_next(&walk);
      if (x->a == 0)
        continue;
      fprintf(out, "%.9g,%d,%s,%d,%.4g,%" G_GINT64_FORMAT ",%.6f\n", b * bin_s, w,
              r->workers[w].model, r->workers[w].gpu, r->workers[w].share, (gint64)x->a,
              x->b / 1e6 / (double)x->a);
    }
  }
  return close_csv(out, worker_path, error);
}
