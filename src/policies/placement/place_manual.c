/* "manual": the replicas are written in the scenario.
 *
 *   "placement": {"policy": "manual",
 *                 "replicas": [{"model": "resnet50", "gpu": 0, "batch": 8, "mps_share": 0.5}]}
 *
 * Expected goodput per model is what its replicas can serve in isolation,
 * min(rate, sum of batch / latency(batch)), the same estimate Usher uses. */
#include <string.h>

#include "place_common.h"
#include "placement_policies.h"

static int find_model(const CsPlacementProblem *in, const char *name)
{
  for (int i = 0; i < in->n_models; i++)
    if (strcmp(in->models[i].name, name) == 0)
      return i;
  return -1;
}

static CsPlacement *manual_place(const CsPlacementProblem *in, CsParams *params, void *user_data,
                                 GError **error)
{
  (void)user_data;
  static const char *const keys[] = { "policy", "replicas", NULL };
  static const char *const replica_keys[] = { "model", "gpu", "batch", "mps_share", NULL };
  cs_params_doc(params, "replicas", "array of {\"model\", \"gpu\", \"batch\", \"mps_share\"}: model name, GPU index, batch size >= 1, MPS share in [0, 1] (with cluster.mps); required");
  if (!cs_params_check_keys(params, keys, error))
    return NULL;
  CsParams *list = cs_params_get(params, "replicas");
  if (!list || cs_params_kind(list) != CS_PARAMS_ARRAY) {
    cs_params_fail_field(params, "replicas", error, "expected an array of replicas, got %s",
                         list ? cs_params_kind_name(list) : "nothing");
    return NULL;
  }
  CsPlacement *p = cs_placement_new(in->n_models);
  double *capacity = g_new0(double, MAX(in->n_models, 1));
  /* Every replica is checked and their problems are reported together; an
   * unknown field stops its replica (its fix changes the rest). */
  CsErrorList *problems = cs_error_list_new();
  for (int i = 0; i < cs_params_size(list); i++) {
    CsParams *item = cs_params_at(list, i);
    const char *model = NULL;
    int gpu = 0, batch = 1;
    double share = 0.0;
    gboolean ok = (cs_params_kind(item) == CS_PARAMS_OBJECT ||
                   cs_params_fail(item, cs_error_list_slot(problems), "expected an object, got %s",
                                  cs_params_kind_name(item))) &&
                  cs_params_check_keys(item, replica_keys, cs_error_list_slot(problems));
    if (ok) {
      ok &= cs_params_string(item, "model", TRUE, &model, cs_error_list_slot(problems));
      ok &= cs_params_int(item, "gpu", TRUE, 0, G_MAXINT, &gpu, cs_error_list_slot(problems));
      ok &= cs_params_int(item, "batch", TRUE, 1, 1 << 20, &batch, cs_error_list_slot(problems));
      ok &= cs_params_double(item, "mps_share", FALSE, 0.0, 1.0, &share,
                             cs_error_list_slot(problems));
    }
    int m = ok ? find_model(in, model) : -1;
    if (ok && m < 0)
      ok = cs_params_fail(item, cs_error_list_slot(problems),
                          "model \"%s\" has no client in the scenario", model);
    if (ok && gpu >= in->n_gpus)
      ok = cs_params_fail(item, cs_error_list_slot(problems),
                          "gpu %d does not exist (the cluster has %d GPUs)", gpu, in->n_gpus);
    const CsModelProfile *prof = NULL;
    if (ok) {
      prof = cs_profile_set_lookup(in->profiles, in->gpus[gpu].gpu_type, model);
      if (!prof)
        ok = cs_params_fail(item, cs_error_list_slot(problems),
                            "no profile for model \"%s\" on GPU type \"%s\"", model,
                            in->gpus[gpu].gpu_type);
    }
    if (ok) {
      cs_placement_add(p, m, gpu, batch, share);
      capacity[m] += batch / (cs_model_profile_latency_ns(prof, batch) * 1e-9);
    }
  }
  if (!cs_error_list_finish(problems, cs_params_file(params), "placement.replicas", error)) {
    g_free(capacity);
    cs_placement_free(p);
    return NULL;
  }
  for (int m = 0; m < in->n_models; m++)
    cs_placement_set_expected_goodput(p, m, MIN(in->models[m].rate_rps, capacity[m]));
  g_free(capacity);
  return p;
}

const CsPlacementPolicy cs_place_manual = {
  .name = "manual",
  .description = "replicas (model, gpu, batch, mps_share) listed in the scenario",
  .place = manual_place,
};
