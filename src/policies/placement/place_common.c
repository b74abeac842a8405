/* Shared parameter readers and candidate batch sizes; see place_common.h. */
#include "place_common.h"

#include <math.h>
#include <string.h>

#include "common/json_input.h"

const int cs_place_default_batches[] = { 4, 8, 16, 32, 64, 128 };
const int cs_place_n_default_batches = G_N_ELEMENTS(cs_place_default_batches);

static const char *const metric_names[CS_CREQ_N_METRICS] = { "ao", "wao", "wsm" };

const char *cs_place_metric_name(CsCreqMetric metric)
{
  g_return_val_if_fail(metric >= 0 && metric < CS_CREQ_N_METRICS, "?");
  return metric_names[metric];
}

gboolean cs_place_read_metric(const cJSON *params, const char *key, CsCreqMetric *out,
                              const char *file, const char *path, GError **error)
{
  const char *name = NULL;
  if (!params || !cJSON_GetObjectItemCaseSensitive(params, key))
    return TRUE;
  if (!cs_json_read_string(params, key, TRUE, &name, file, path, error))
    return FALSE;
  for (int i = 0; i < CS_CREQ_N_METRICS; i++) {
    if (g_ascii_strcasecmp(name, metric_names[i]) == 0) {
      *out = (CsCreqMetric)i;
      return TRUE;
    }
  }
  char *p = cs_json_path_key(path, key);
  cs_json_fail(error, file, p, "expected \"ao\", \"wao\" or \"wsm\", got \"%s\"", name);
  g_free(p);
  return FALSE;
}

static int compare_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

gboolean cs_place_read_batch_sizes(const cJSON *params, int **out, int *n, const char *file,
                                   const char *path, GError **error)
{
  const cJSON *list = params ? cJSON_GetObjectItemCaseSensitive(params, "batch_sizes") : NULL;
  if (!list) {
    *n = cs_place_n_default_batches;
    *out = g_new(int, *n);
    memcpy(*out, cs_place_default_batches, sizeof cs_place_default_batches);
    return TRUE;
  }
  char *list_path = cs_json_path_key(path, "batch_sizes");
  int count = cJSON_GetArraySize(list);
  if (!cJSON_IsArray(list) || count == 0) {
    cs_json_fail(error, file, list_path, "expected a non-empty array of batch sizes, got %s",
                 cJSON_IsArray(list) ? "an empty array" : cs_json_type_name(list));
    g_free(list_path);
    return FALSE;
  }
  int *sizes = g_new(int, count);
  int i = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, list)
  {
    double v = cJSON_IsNumber(item) ? item->valuedouble : NAN;
    if (!(v >= 1 && v <= (1 << 20) && v == floor(v))) {
      char *ip = cs_json_path_index(list_path, i);
      if (cJSON_IsNumber(item))
        cs_json_fail(error, file, ip, "expected an integer batch size in [1, %d], got %g",
                     1 << 20, v);
      else
        cs_json_fail(error, file, ip, "expected an integer batch size in [1, %d], got %s",
                     1 << 20, cs_json_type_name(item));
      g_free(ip);
      g_free(list_path);
      g_free(sizes);
      return FALSE;
    }
    sizes[i++] = (int)v;
  }
  qsort(sizes, (size_t)count, sizeof *sizes, compare_int);
  for (i = 1; i < count; i++) {
    if (sizes[i] == sizes[i - 1]) {
      cs_json_fail(error, file, list_path, "batch size %d is listed twice", sizes[i]);
      g_free(list_path);
      g_free(sizes);
      return FALSE;
    }
  }
  g_free(list_path);
  *out = sizes;
  *n = count;
  return TRUE;
}

gboolean cs_model_options_init(CsModelOptions *out, const CsProfileSet *profiles,
                               const char *gpu_type, const CsPlacementModel *model,
                               CsCreqMetric metric, const int *batches, int n_batches,
                               const char *policy, GError **error)
{
  memset(out, 0, sizeof *out);
  const CsModelProfile *prof = cs_profile_set_lookup(profiles, gpu_type, model->name);
  if (!prof) {
    g_set_error(error, CS_PLACEMENT_ERROR, CS_PLACEMENT_ERROR_PROFILE,
                "placement \"%s\": no profile for model \"%s\" on GPU type \"%s\"", policy,
                model->name, gpu_type);
    return FALSE;
  }
  out->prof = prof;
  out->opts = g_new0(CsBatchOption, MAX(n_batches, 1));
  double slo_ns = model->slo_ms * 1e6;
  for (int i = 0; i < n_batches; i++) {
    const CsBatchPoint *pt = cs_model_profile_point(prof, batches[i]);
    /* Creq and Mreq come only from profiled points: the linear latency model
     * says nothing about resources, so unprofiled sizes are no candidates. */
    if (!pt || isnan(pt->mreq_pct) || isnan(pt->creq_pct[metric]))
      continue;
    if (pt->creq_pct[metric] > 100.0 || pt->mreq_pct > 100.0)
      break;
    CsBatchOption *o = &out->opts[out->n++];
    o->batch = pt->batch;
    o->latency_ms = (double)pt->latency_ns * 1e-6;
    o->goodput = cs_model_profile_throughput_rps(prof, pt->batch);
    o->creq = pt->creq_pct[metric];
    o->mreq = pt->mreq_pct;
    o->meets_slo = (double)pt->latency_ns <= slo_ns;
  }
  return TRUE;
}

void cs_model_options_clear(CsModelOptions *o)
{
  g_free(o->opts);
  memset(o, 0, sizeof *o);
}

gboolean cs_place_require_homogeneous(const CsPlacementInput *in, const char *policy,
                                      GError **error)
{
  for (int g = 1; g < in->n_gpus; g++) {
    if (strcmp(in->gpus[g].gpu_type, in->gpus[0].gpu_type) != 0) {
      g_set_error(error, CS_PLACEMENT_ERROR, CS_PLACEMENT_ERROR_PARAMS,
                  "placement \"%s\" needs GPUs of one type (as in the thesis), but GPU 0 is "
                  "\"%s\" and GPU %d is \"%s\"",
                  policy, in->gpus[0].gpu_type, g, in->gpus[g].gpu_type);
      return FALSE;
    }
  }
  return TRUE;
}

void cs_place_compute_expected(CsPlacement *p, const CsPlacementInput *in)
{
  for (int m = 0; m < in->n_models; m++)
    p->expected_goodput[m] = 0.0;
  for (guint i = 0; i < p->replicas->len; i++) {
    const CsReplica *r = &g_array_index(p->replicas, CsReplica, i);
    const CsModelProfile *prof = cs_profile_set_lookup(in->profiles, in->gpus[r->gpu].gpu_type,
                                                       in->models[r->model].name);
    g_assert(prof != NULL);
    p->expected_goodput[r->model] += cs_model_profile_throughput_rps(prof, r->batch);
  }
  p->expected_total = 0.0;
  for (int m = 0; m < in->n_models; m++) {
    p->expected_goodput[m] = MIN(in->models[m].rate_rps, p->expected_goodput[m]);
    p->expected_total += p->expected_goodput[m];
  }
}
