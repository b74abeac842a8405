/* Results: allocation and the accessors of clustersim.h. Rendering them
 * (summary JSON, table, CSV files) is experiment/outputs.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cs_config.h"
#include "clustersim/backend.h"
#include "results.h"

CsResults *cs_results_alloc(int n_models, int n_gpus)
{
  CsResults *r = g_new0(CsResults, 1);
  r->n_models = n_models;
  r->models = g_new0(CsModelResult, MAX(n_models, 1));
  r->model_names = g_new0(char *, MAX(n_models, 1));
  r->batch_sizes = g_new0(GArray *, MAX(n_models, 1));
  r->model_series = g_new0(GArray *, MAX(n_models, 1));
  for (int i = 0; i < n_models; i++) {
    r->batch_sizes[i] = g_array_new(FALSE, TRUE, sizeof(int64_t));
  }
  r->n_gpus = n_gpus;
  r->gpus = g_new0(CsGpuResult, MAX(n_gpus, 1));
  return r;
}

void cs_results_free(CsResults *r)
{
  if (!r)
    return;
  g_free(r->llm);
  if (r->llm_strings != NULL)
    g_ptr_array_free(r->llm_strings, TRUE);
  for (int i = 0; i < r->n_models; i++) {
    g_free(r->model_names[i]);
    g_array_unref(r->batch_sizes[i]);
    if (r->model_series[i])
      g_array_unref(r->model_series[i]);
  }
  g_free(r->model_series);
  if (r->replica_spans)
    g_array_unref(r->replica_spans);
  if (r->control) {
    g_free(r->control->policy);
    g_free(r->control->log);
    g_free(r->control->params_json);
    g_free(r->control);
  }
  g_free(r->model_names);
  g_free(r->models);
  g_free(r->batch_sizes);
  for (int g = 0; g < r->n_gpus; g++) {
    g_free(r->gpus[g].gpu_type);
    if (r->gpus[g].on_spans)
      g_array_unref(r->gpus[g].on_spans);
    if (r->gpu_bins && r->gpu_bins[g])
      g_array_unref(r->gpu_bins[g]);
    if (r->gpu_sm_bins && r->gpu_sm_bins[g])
      g_array_unref(r->gpu_sm_bins[g]);
  }
  g_free(r->gpu_bins);
  g_free(r->gpu_sm_bins);
  for (int w = 0; w < r->n_workers; w++) {
    g_free(r->workers[w].model);
    if (r->workers[w].bins)
      g_array_unref(r->workers[w].bins);
  }
  g_free(r->workers);
  g_free(r->gpus);
  g_free(r->placement_policy);
  g_free(r->dispatch_policy);
  if (r->bin_total)
    g_array_unref(r->bin_total);
  g_free(r->dispatch_params_json);
  cs_placement_free(r->placement);
  g_free(r->setup_json);
  if (r->effective_doc)
    r->effective_free(r->effective_doc);
  g_free(r->effective_scenario);
  g_free(r->cost_note);
  g_free(r->replay_json);
  cs_warning_list_free(r->warnings);
  g_free(r);
}

gboolean cs_results_replay_valid(const CsResults *r)
{
  return !r->replay_invalid;
}

const CsControlSummary *cs_results_control(const CsResults *r)
{
  return r->control;
}

const char *cs_results_effective_scenario(const CsResults *r)
{
  g_return_val_if_fail(r != NULL, NULL);
  /* Printed once, also when threads ask at the same time. */
  CsResults *m = (CsResults *)r;
  if (g_once_init_enter(&m->effective_scenario)) {
    char *text = m->effective_doc ? m->effective_print(m->effective_doc) : g_strdup("");
    g_once_init_leave(&m->effective_scenario, text);
  }
  return m->effective_scenario;
}

int cs_results_n_warnings(const CsResults *r)
{
  return cs_warning_list_len(r->warnings);
}

const CsWarning *cs_results_warning(const CsResults *r, int i)
{
  return cs_warning_list_get(r->warnings, i);
}

int cs_results_n_models(const CsResults *r)
{
  return r->n_models;
}

const CsModelResult *cs_results_model(const CsResults *r, int i)
{
  g_return_val_if_fail(i >= 0 && i < r->n_models, NULL);
  return &r->models[i];
}

const CsModelResult *cs_results_model_by_name(const CsResults *r, const char *model)
{
  for (int i = 0; model && i < r->n_models; i++)
    if (strcmp(r->models[i].model, model) == 0)
      return &r->models[i];
  return NULL;
}

const CsPlacement *cs_results_placement(const CsResults *r)
{
  return r->placement;
}

const CsCost *cs_results_cost(const CsResults *r)
{
  return &r->cost;
}

const CsModelResult *cs_results_total(const CsResults *r)
{
  return &r->total;
}

int cs_results_n_gpus(const CsResults *r)
{
  return r->n_gpus;
}

double cs_results_gpu_busy_fraction(const CsResults *r, int gpu)
{
  g_return_val_if_fail(gpu >= 0 && gpu < r->n_gpus, NAN);
  return r->gpus[gpu].busy_fraction;
}

int64_t cs_results_gpu_batches(const CsResults *r, int gpu)
{
  g_return_val_if_fail(gpu >= 0 && gpu < r->n_gpus, -1);
  return r->gpus[gpu].batches;
}

int64_t cs_results_gpu_preempted(const CsResults *r, int gpu, int64_t *lost_ns)
{
  g_return_val_if_fail(gpu >= 0 && gpu < r->n_gpus, -1);
  if (lost_ns)
    *lost_ns = r->gpus[gpu].preempted_ns;
  return r->gpus[gpu].preempted;
}

uint64_t cs_results_events(const CsResults *r)
{
  return r->events;
}

double cs_results_wall_seconds(const CsResults *r)
{
  return r->wall_s;
}

int64_t cs_results_sim_time_ns(const CsResults *r)
{
  return r->sim_time_ns;
}

const char *cs_stage_name(CsStage s)
{
  static const char *const names[CS_N_STAGES] = { "router_wait", "to_node", "queue_wait", "gpu",
                                                  "result_return" };
  return (s >= 0 && s < CS_N_STAGES) ? names[s] : "unknown";
}


void cs_results_used_from_total(CsResults *r)
{
  /* Over every bin up to the last one a GPU ran in; bins absent from the
   * runs are idle and count as 0. */
  int64_t max_used = 0, used_sum = 0, n_bins = r->bin_total ? cs_bins_end(r->bin_total) : 0;
  for (guint i = 0; r->bin_total && i < r->bin_total->len; i++) {
    const CsBinRun *run = &g_array_index(r->bin_total, CsBinRun, i);
    max_used = MAX(max_used, run->b);
    used_sum += run->b * run->n; /* <= GPUs x bins: no overflow */
  }
  r->used_bin_ns = r->bin_ns;
  r->gpus_used_mean = n_bins > 0 ? (double)used_sum / (double)n_bins : 0.0;
  r->gpus_used_max = max_used;
}

int cs_results_n_llm(const CsResults *r)
{
  g_return_val_if_fail(r != NULL, 0);
  return r->n_llm;
}

const CsLlmModelResult *cs_results_llm(const CsResults *r, int i)
{
  g_return_val_if_fail(r != NULL, NULL);
  return i >= 0 && i < r->n_llm ? &r->llm[i] : NULL;
}
