/* "dedicated": each model alone on its own GPU, in scenario order, at the
 * largest batch size whose isolated latency fits the model's SLO.
 *
 * A baseline, and the default placement. Candidate batch sizes are the
 * profiled ones; a profile with only a linear model offers 1..max_batch.
 * A model gets no replica (and its requests fail, visibly) when the cluster
 * has no GPU left for it or no batch size fits its SLO; the log says which. */
#include "common/json_input.h"
#include "placement_policies.h"

static int largest_batch_within(const CsModelProfile *prof, double slo_ms, int max_batch)
{
  int64_t slo_ns = (int64_t)(slo_ms * 1e6);
  int best = 0;
  if (prof->n_points > 0) {
    for (int i = 0; i < prof->n_points; i++)
      if (prof->points[i].batch <= max_batch && prof->points[i].latency_ns <= slo_ns)
        best = MAX(best, prof->points[i].batch);
  } else {
    for (int b = 1; b <= max_batch; b++)
      if (cs_model_profile_latency_ns(prof, b) <= slo_ns)
        best = b;
  }
  return best;
}

static CsPlacement *dedicated_place(const CsPlacementInput *in, const cJSON *params,
                                    const char *file, const char *path, GError **error)
{
  static const char *const keys[] = { "policy", "max_batch", NULL };
  int max_batch = 128;
  if (params && (!cs_json_check_keys(params, keys, file, path, error) ||
                 !cs_json_read_int(params, "max_batch", FALSE, 1, 1 << 20, &max_batch, file,
                                   path, error)))
    return NULL;
  CsPlacement *p = cs_placement_new(in->n_models);
  int next_gpu = 0;
  for (int m = 0; m < in->n_models; m++) {
    const CsPlacementModel *model = &in->models[m];
    if (next_gpu >= in->n_gpus) {
      g_string_append_printf(p->log, "%s: not served, no GPU left\n", model->name);
      continue;
    }
    const CsPlacementGpu *gpu = &in->gpus[next_gpu];
    const CsModelProfile *prof = cs_profile_set_lookup(in->profiles, gpu->gpu_type, model->name);
    if (!prof) {
      g_set_error(error, CS_PLACEMENT_ERROR, CS_PLACEMENT_ERROR_PROFILE,
                  "placement \"dedicated\": no profile for model \"%s\" on GPU type \"%s\"",
                  model->name, gpu->gpu_type);
      cs_placement_free(p);
      return NULL;
    }
    int batch = largest_batch_within(prof, model->slo_ms, max_batch);
    if (batch == 0) {
      g_string_append_printf(p->log, "%s: not served, no batch size meets SLO %.3f ms alone\n",
                             model->name, model->slo_ms);
      continue;
    }
    cs_placement_add(p, m, next_gpu, batch, 0.0);
    double capacity = batch / (cs_model_profile_latency_ns(prof, batch) * 1e-9);
    p->expected_goodput[m] = MIN(model->rate_rps, capacity);
    p->expected_total += p->expected_goodput[m];
    g_string_append_printf(p->log, "%s: gpu %d, batch %d\n", model->name, next_gpu, batch);
    next_gpu++;
  }
  return p;
}

const CsPlacementPolicy cs_place_dedicated = {
  .name = "dedicated",
  .description = "each model alone on its own GPU at the largest batch whose latency fits its SLO",
  .place = dedicated_place,
};
