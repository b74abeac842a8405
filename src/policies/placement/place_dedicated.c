/* "dedicated": each model alone on its own GPU, in scenario order, at the
 * largest batch size whose isolated latency fits the model's SLO.
 *
 * A baseline, and the default placement. Candidate batch sizes are the
 * profiled ones; a profile with only a linear model offers 1..max_batch.
 * A model gets no replica (and its requests fail, visibly) when the cluster
 * has no GPU left for it or no batch size fits its SLO; the log says which. */
#include "place_common.h"
#include "placement_policies.h"

static int largest_batch_within(const CsModelProfile *prof, double slo_ms, int max_batch)
{
  int64_t slo_ns = (int64_t)(slo_ms * 1e6);
  int best = 0;
  int n_points = cs_model_profile_n_points(prof);
  if (n_points > 0) {
    for (int i = 0; i < n_points; i++) {
      const CsBatchPoint *pt = cs_model_profile_point_at(prof, i);
      if (pt->batch <= max_batch && pt->latency_ns <= slo_ns)
        best = MAX(best, pt->batch);
    }
  } else {
    for (int b = 1; b <= max_batch; b++)
      if (cs_model_profile_latency_ns(prof, b) <= slo_ns)
        best = b;
  }
  return best;
}

static CsPlacement *dedicated_place(const CsPlacementProblem *in, CsParams *params,
                                    void *user_data, GError **error)
{
  (void)user_data;
  static const char *const keys[] = { "policy", "max_batch", NULL };
  int max_batch = 128;
  cs_params_doc(params, "max_batch", "largest batch a model's replica may get (the largest profiled batch within its SLO)");
  /* Each field is read on its own, so that their problems are listed
   * together; an unknown field stops the parse (its fix changes the rest). */
  CsErrorList *problems = cs_error_list_new();
  if (cs_params_check_keys(params, keys, cs_error_list_slot(problems))) {
    cs_params_int(params, "max_batch", FALSE, 1, 1 << 20, &max_batch, cs_error_list_slot(problems));
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), cs_params_path(params),
                            error))
    return NULL;
  CsPlacement *p = cs_placement_new(in->n_models);
  int next_gpu = 0;
  for (int m = 0; m < in->n_models; m++) {
    const CsPlacementModel *model = &in->models[m];
    if (next_gpu >= in->n_gpus) {
      cs_placement_log(p, "%s: not served, no GPU left\n", model->name);
      continue;
    }
    const CsPlacementGpu *gpu = &in->gpus[next_gpu];
    const CsModelProfile *prof = cs_profile_set_lookup(in->profiles, gpu->gpu_type, model->name);
    if (!prof) {
      g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                  "placement \"dedicated\": no profile for model \"%s\" on GPU type \"%s\"",
                  model->name, gpu->gpu_type);
      cs_placement_free(p);
      return NULL;
    }
    int batch = largest_batch_within(prof, model->slo_ms, max_batch);
    if (batch == 0) {
      cs_placement_log(p, "%s: not served, no batch size meets SLO %.3f ms alone\n", model->name,
                       model->slo_ms);
      continue;
    }
    cs_placement_add(p, m, next_gpu, batch, 0.0);
    double capacity = batch / (cs_model_profile_latency_ns(prof, batch) * 1e-9);
    cs_placement_set_expected_goodput(p, m, MIN(model->rate_rps, capacity));
    cs_placement_log(p, "%s: gpu %d, batch %d\n", model->name, next_gpu, batch);
    next_gpu++;
  }
  return p;
}

const CsPlacementPolicy cs_place_dedicated = {
  .name = "dedicated",
  .description = "each model alone on its own GPU at the largest batch whose latency fits its SLO",
  .place = dedicated_place,
};
