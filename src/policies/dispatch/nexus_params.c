/* The "nexus" dispatch policy's parameters: parsing with their defaults,
 * the check against the scenario's world when it is compiled (an initial
 * plan that fits the cluster), the effective scenario's defaults and the
 * summary's description (with the initial plan). The packing they plan
 * with is nexus_plan.c, the policy nexus.c. */
#include <math.h>

#include "nexus.h"

/* ---- parameters ------------------------------------------------------------------ */

void *cs_nexus_parse(CsParams *params, void *user_data, GError **error)
{
  (void)user_data;
  static const char *const keys[] = { "policy",  "epoch_s",      "network_reserve_ms",
                                      "frontends", "poll_us",    "initial_plan",
                                      "replan",  NULL };
  static const char *const initials[] = { "declared", "one_gpu_per_model", "whole_cluster",
                                          NULL };
  /* Symphony's text: the scheduler re-plans every 10 s (when replan is
   * on). nexuslb: 2 ms of network kept out of the saturate rule, a backend
   * polls every 50 us, one frontend (at most 1000: each keeps a round-robin
   * state per model and GPU).
   *
   * The default plan is a static one for the whole cluster, never
   * recomputed: Nexus as Symphony's experiments ran it (issue 31). nexuslb's
   * run_nexus takes a static schedule (its "schedule" key, added the day
   * after run_nexus first ran; static backends are never re-planned), and
   * without one it would start each model on one GPU (LoadModel with no
   * estimated workload) and re-plan only after 30 one-second rate samples.
   * Symphony's paper reads the same way: its Figure 2 (right) has Nexus
   * keeping every GPU busy at 3K req/s, before its peak goodput, which a
   * plan packed to the load does not do (it leaves GPUs idle); section 5
   * blames Nexus' "static partitioning of models to backends" for bursty
   * loads; Table 2 compares Nexus with N b / (alpha b + beta) for all N = 8
   * GPUs. Nexus' own epoch planning (initial_plan "declared", replan true)
   * plans from the last rate with no headroom, as the real Nexus does, so a
   * saturated GPU gets its full throughput and Poisson bursts make it drop
   * about 2 % (docs/dispatch.md). */
  double epoch_s = 10.0, reserve_ms = 2.0, poll_us = 50.0;
  int frontends = 1, initial = INITIAL_WHOLE_CLUSTER;
  gboolean replan = FALSE;
  cs_params_doc(params, "epoch_s", "with replan: re-plan every epoch (refused without replan true)");
  cs_params_doc(params, "network_reserve_ms", "kept out of the saturate rule (nexuslb's network_latency_us)");
  cs_params_doc(params, "frontends", "frontends, each with its own round-robin state");
  cs_params_doc(params, "poll_us", "an idle backend looks for work this often");
  cs_params_doc(params, "initial_plan", "the plan at t = 0: whole_cluster (declared mix scaled to the GPUs), declared (the clients' rates) or one_gpu_per_model");
  cs_params_doc(params, "replan", "true: Nexus' epoch scheduler re-plans every epoch_s from the observed rates; false: the initial plan runs throughout");
  /* Each field is read on its own, so that their problems are listed
   * together; an unknown field stops the parse (its fix changes the rest). */
  CsErrorList *problems = cs_error_list_new();
  if (cs_params_check_keys(params, keys, cs_error_list_slot(problems))) {
    cs_params_double(params, "epoch_s", FALSE, 0.001, 1e6, &epoch_s, cs_error_list_slot(problems));
    cs_params_double(params, "network_reserve_ms", FALSE, 0.0, 1e6, &reserve_ms,
                     cs_error_list_slot(problems));
    cs_params_int(params, "frontends", FALSE, 1, 1000, &frontends, cs_error_list_slot(problems));
    cs_params_double(params, "poll_us", FALSE, 0.001, 1e9, &poll_us, cs_error_list_slot(problems));
    cs_params_choice(params, "initial_plan", FALSE, initials, &initial,
                     cs_error_list_slot(problems));
    cs_params_bool(params, "replan", FALSE, &replan, cs_error_list_slot(problems));
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params),
                            error))
    return NULL;
  if (!replan && cs_params_has(params, "epoch_s")) {
    cs_params_fail(params, error,
                   "\"epoch_s\" sets how often the plan is recomputed; with \"replan\": false "
                   "(the default) it would be ignored: set \"replan\": true to re-plan");
    return NULL;
  }
  NexusParams *p = g_new0(NexusParams, 1);
  p->epoch_ns = llround(epoch_s * 1e9);
  p->reserve_ns = llround(reserve_ms * 1e6);
  p->frontends = frontends;
  p->poll_ns = MAX(llround(poll_us * 1e3), 1);
  p->initial = (NexusInitial)initial;
  p->replan = replan;
  return p;
}

static void clear_derived(NexusParams *p)
{
  for (int m = 0; m < p->n_models; m++)
    g_free(p->models[m]);
  for (int t = 0; t < p->n_types; t++)
    g_free(p->types[t]);
  g_free(p->models);
  g_free(p->types);
  g_free(p->declared_rps);
  cs_nexus_plan_free(p->initial_plan);
  cs_nexus_plan_free(p->declared_plan);
  p->models = p->types = NULL;
  p->declared_rps = NULL;
  p->initial_plan = p->declared_plan = NULL;
  p->n_models = p->n_types = 0;
}

void cs_nexus_free_params(void *params)
{
  if (!params)
    return;
  clear_derived(params);
  g_free(params);
}

typedef struct {
  const CsWorld *w;
  const int *rep;
} WorldCosts;

static int64_t world_lat(void *ctx, int m, int t, int b)
{
  const WorldCosts *wc = ctx;
  const CsModelProfile *prof = cs_world_profile(wc->w, m, wc->rep[t]);
  return prof ? MIN(cs_model_profile_exec_ns(prof, b), INT64_MAX / 8) : INT64_MAX / 8;
}

/* The plan at the declared rates, and the one that runs from t = 0, for the
 * summary; a warning per model the GPUs cannot hold. Runtime plans follow
 * the observed rates and are not known here: the warnings speak of the
 * declared rates, and a model left without a backend at run time shows in
 * its unserved count. */
void cs_nexus_check(void *params, const CsWorld *w, CsWarningList *warnings, void *user_data)
{
  (void)user_data;
  NexusParams *p = params;
  clear_derived(p);
  int n_models = cs_world_n_models(w), n_gpus = cs_world_n_gpus(w);
  int *gpu_type = g_new0(int, MAX(n_gpus, 1)), *rep = g_new0(int, MAX(n_gpus, 1));
  int *type_gpus = g_new0(int, MAX(n_gpus, 1));
  int64_t *slo = g_new0(int64_t, MAX(n_models, 1));
  p->n_types = cs_nexus_gpu_types(w, gpu_type, rep, type_gpus);
  p->n_models = n_models;
  p->models = g_new0(char *, MAX(n_models, 1));
  p->types = g_new0(char *, MAX(p->n_types, 1));
  p->declared_rps = g_new0(double, MAX(n_models, 1));
  for (int t = 0; t < p->n_types; t++)
    p->types[t] = g_strdup(cs_world_gpu_type(w, rep[t]));
  for (int m = 0; m < n_models; m++) {
    p->models[m] = g_strdup(cs_world_model_name(w, m));
    p->declared_rps[m] = MAX(cs_world_rate_rps(w, m), NEXUS_MIN_RATE_RPS);
    slo[m] = cs_world_slo_ns(w, m);
  }
  WorldCosts wc = { .w = w, .rep = rep };
  NexusCosts c = { .lat_ns = world_lat, .ctx = &wc, .n_models = n_models,
                   .n_types = p->n_types, .type_gpus = type_gpus, .slo_ns = slo,
                   .reserve_ns = p->reserve_ns };
  NexusPlan *declared = cs_nexus_plan_new(n_models, n_gpus);
  cs_nexus_squishy(&c, p->declared_rps, declared);
  cs_nexus_assign(declared, NULL, gpu_type, n_gpus);
  if (p->initial == INITIAL_DECLARED) {
    p->initial_plan = declared;
  } else {
    p->declared_plan = declared;
    p->initial_plan = cs_nexus_plan_new(n_models, n_gpus);
    if (p->initial == INITIAL_ONE_PER_MODEL)
      cs_nexus_one_per_model(&c, p->initial_plan);
    else
      cs_nexus_whole_cluster(&c, p->declared_rps, p->initial_plan);
    cs_nexus_assign(p->initial_plan, NULL, gpu_type, n_gpus);
  }
  /* Without re-planning only the initial plan ever runs. */
  const NexusPlan *converged = p->replan ? declared : p->initial_plan;
  for (int m = 0; m < n_models; m++) {
    double at_start = 0, converged_rps = 0;
    for (int i = 0; i < p->initial_plan->n_bins; i++)
      for (int j = 0; j < p->initial_plan->bins[i].n_sessions; j++)
        if (p->initial_plan->bins[i].sessions[j].model == m)
          at_start += p->initial_plan->bins[i].sessions[j].throughput_rps;
    for (int i = 0; i < converged->n_bins; i++)
      for (int j = 0; j < converged->bins[i].n_sessions; j++)
        if (converged->bins[i].sessions[j].model == m)
          converged_rps += converged->bins[i].sessions[j].throughput_rps;
    if (declared->no_gpu[m]) {
      int64_t best = INT64_MAX;
      for (int t = 0; t < p->n_types; t++)
        best = MIN(best, world_lat(&wc, m, t, 1));
      cs_warning_add(warnings, "nexus_no_backend", p->models[m], -1,
                     "a batch of 1 takes %.3f ms on the fastest GPU type, more than half of its "
                     "SLO less the network reserve ((%.3f - %.3f) / 2 ms), Nexus' rule for a "
                     "batch: no GPU runs it and its requests are counted unserved",
                     best / 1e6, slo[m] / 1e6, p->reserve_ns / 1e6);
      continue;
    }
    if (converged_rps < p->declared_rps[m] - 1e-3)
      cs_warning_add(warnings, "nexus_gpu_shortfall", p->models[m], -1,
                     "at its declared %.1f req/s, squishy bin packing needs more GPUs than the "
                     "cluster's %d: the %s plan gives it %.1f req/s%s (saturated GPUs go first, "
                     "to the models with the highest rates)",
                     p->declared_rps[m], n_gpus, p->replan ? "epochs'" : "static",
                     converged_rps,
                     converged_rps > 0 ? "" : ", no backend: its requests are counted unserved");
    if (at_start == 0 && converged_rps > 0)
      cs_warning_add(warnings, "nexus_no_backend", p->models[m], -1,
                     "the initial plan finds no GPU left for it among the cluster's %d: its "
                     "requests until the first epoch (%.3f s) are counted unserved",
                     n_gpus, p->epoch_ns / 1e9);
  }
  g_free(slo);
  g_free(type_gpus);
  g_free(rep);
  g_free(gpu_type);
}

void cs_nexus_write_defaults(const void *params, CsParamsWriter *out)
{
  const NexusParams *p = params;
  if (p->replan)
    cs_params_write_double(out, "epoch_s", p->epoch_ns / 1e9);
  cs_params_write_double(out, "network_reserve_ms", p->reserve_ns / 1e6);
  cs_params_write_int(out, "frontends", p->frontends);
  cs_params_write_double(out, "poll_us", p->poll_ns / 1e3);
  static const char *const initials[] = { "declared", "one_gpu_per_model", "whole_cluster" };
  cs_params_write_string(out, "initial_plan", initials[p->initial]);
  cs_params_write_bool(out, "replan", p->replan);
}

static void describe_plan(const NexusParams *p, const NexusPlan *plan, const char *key,
                          CsParamsWriter *out)
{
  cs_params_write_begin_object(out, key);
  cs_params_write_begin_array(out, "gpus");
  for (int g = 0; g < plan->cap; g++)
    for (int i = 0; i < plan->n_bins; i++) {
      const NexusBin *bin = &plan->bins[i];
      if (bin->gpu != g)
        continue;
      cs_params_write_begin_object(out, NULL);
      cs_params_write_int(out, "gpu", g);
      cs_params_write_string(out, "gpu_type", p->types[bin->type]);
      cs_params_write_string(out, "kind", bin->saturated ? "saturated" : "residual");
      cs_params_write_double(out, "duty_ms", bin->duty_ns / 1e6);
      cs_params_write_double(out, "occupancy", (double)bin->exec_ns / bin->duty_ns);
      cs_params_write_begin_array(out, "models");
      for (int j = 0; j < bin->n_sessions; j++) {
        const NexusSession *s = &bin->sessions[j];
        cs_params_write_begin_object(out, NULL);
        cs_params_write_string(out, "model", p->models[s->model]);
        cs_params_write_int(out, "batch", s->batch);
        cs_params_write_double(out, "throughput_rps", s->throughput_rps);
        cs_params_write_end(out);
      }
      cs_params_write_end(out);
      cs_params_write_end(out);
    }
  cs_params_write_end(out);
  cs_params_write_begin_array(out, "unplaced");
  for (int m = 0; m < plan->n_models; m++)
    if (plan->unplaced_rps[m] > 0 || plan->no_gpu[m]) {
      cs_params_write_begin_object(out, NULL);
      cs_params_write_string(out, "model", p->models[m]);
      cs_params_write_double(out, "rate_rps", plan->unplaced_rps[m]);
      cs_params_write_end(out);
    }
  cs_params_write_end(out);
  cs_params_write_end(out);
}

void cs_nexus_describe(const void *params, CsParamsWriter *out)
{
  const NexusParams *p = params;
  cs_nexus_write_defaults(params, out);
  if (p->replan)
    cs_params_write_string(out, "rate_estimate", "arrivals in the last epoch / epoch_s");
  if (p->initial_plan) {
    describe_plan(p, p->initial_plan, "plan_at_start", out);
    if (p->declared_plan)
      describe_plan(p, p->declared_plan, "plan_at_declared_rates", out);
  }
}
