/* "manual": the replicas are written in the scenario.
 *
 *   "placement": {"policy": "manual",
 *                 "replicas": [{"model": "resnet50", "gpu": 0, "batch": 8, "mps_share": 0.5}]}
 *
 * Expected goodput per model is what its replicas can serve in isolation,
 * min(rate, sum of batch / latency(batch)), the same estimate Usher uses. */
#include <string.h>

#include "common/json_input.h"
#include "placement_policies.h"

static int find_model(const CsPlacementInput *in, const char *name)
{
  for (int i = 0; i < in->n_models; i++)
    if (strcmp(in->models[i].name, name) == 0)
      return i;
  return -1;
}

static CsPlacement *manual_place(const CsPlacementInput *in, const cJSON *params,
                                 const char *file, const char *path, GError **error)
{
  static const char *const keys[] = { "policy", "replicas", NULL };
  static const char *const replica_keys[] = { "model", "gpu", "batch", "mps_share", NULL };
  if (!cs_json_check_keys(params, keys, file, path, error))
    return NULL;
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(params, "replicas");
  char *list_path = cs_json_path_key(path, "replicas");
  if (!cJSON_IsArray(list)) {
    cs_json_fail(error, file, list_path, "expected an array of replicas, got %s",
                 cs_json_type_name(list));
    g_free(list_path);
    return NULL;
  }
  CsPlacement *p = cs_placement_new(in->n_models);
  double *capacity = g_new0(double, in->n_models);
  int i = 0;
  const cJSON *item;
  gboolean ok = TRUE;
  cJSON_ArrayForEach(item, list)
  {
    char *rp = cs_json_path_index(list_path, i++);
    const char *model = NULL;
    int gpu = 0, batch = 1;
    double share = 0.0;
    ok = cs_json_expect_object(item, file, rp, error) &&
         cs_json_check_keys(item, replica_keys, file, rp, error) &&
         cs_json_read_string(item, "model", TRUE, &model, file, rp, error) &&
         cs_json_read_int(item, "gpu", TRUE, 0, G_MAXINT, &gpu, file, rp, error) &&
         cs_json_read_int(item, "batch", TRUE, 1, 1 << 20, &batch, file, rp, error) &&
         cs_json_read_double(item, "mps_share", FALSE, 0.0, 1.0, &share, file, rp, error);
    int m = ok ? find_model(in, model) : -1;
    if (ok && m < 0)
      ok = cs_json_fail(error, file, rp, "model \"%s\" has no client in the scenario", model);
    if (ok && gpu >= in->n_gpus)
      ok = cs_json_fail(error, file, rp, "gpu %d does not exist (the cluster has %d GPUs)", gpu,
                        in->n_gpus);
    const CsModelProfile *prof = NULL;
    if (ok) {
      prof = cs_profile_set_lookup(in->profiles, in->gpus[gpu].gpu_type, model);
      if (!prof)
        ok = cs_json_fail(error, file, rp, "no profile for model \"%s\" on GPU type \"%s\"",
                          model, in->gpus[gpu].gpu_type);
    }
    if (ok) {
      cs_placement_add(p, m, gpu, batch, share);
      capacity[m] += batch / (cs_model_profile_latency_ns(prof, batch) * 1e-9);
    }
    g_free(rp);
    if (!ok)
      break;
  }
  g_free(list_path);
  if (!ok) {
    g_free(capacity);
    cs_placement_free(p);
    return NULL;
  }
  for (int m = 0; m < in->n_models; m++) {
    p->expected_goodput[m] = MIN(in->models[m].rate_rps, capacity[m]);
    p->expected_total += p->expected_goodput[m];
  }
  g_free(capacity);
  return p;
}

const CsPlacementPolicy cs_place_manual = {
  .name = "manual",
  .description = "replicas (model, gpu, batch, mps_share) listed in the scenario",
  .place = manual_place,
};
