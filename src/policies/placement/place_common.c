/* Shared parameter readers and candidate batch sizes; see place_common.h. */
#include "place_common.h"

#include <math.h>
#include <string.h>


const int cs_place_default_batches[] = { 4, 8, 16, 32, 64, 128 };
const int cs_place_n_default_batches = G_N_ELEMENTS(cs_place_default_batches);

static const char *const metric_names[CS_CREQ_N_METRICS] = { "ao", "wao", "wsm" };

const char *cs_place_metric_name(CsCreqMetric metric)
{
  g_return_val_if_fail(metric >= 0 && metric < CS_CREQ_N_METRICS, "?");
  return metric_names[metric];
}

gboolean cs_place_read_metric(CsParams *params, const char *key, const char *alias,
                              const char *family, CsCreqMetric *out, GError **error)
{
  /* The current metric's name as the default: absent, it maps back to *out
   * (and the policy catalogue shows it). */
  const char *name = cs_place_metric_name(*out);
  CsCreqMetric implied = *out;
  if (!cs_params_string(params, key, FALSE, &name, error))
    return FALSE;
  int found = -1;
  for (int i = 0; i < CS_CREQ_N_METRICS && found < 0; i++)
    if (g_ascii_strcasecmp(name, metric_names[i]) == 0)
      found = i;
  if (found < 0)
    return cs_params_fail_field(params, key, error,
                                "expected \"ao\", \"wao\" or \"wsm\", got \"%s\"", name);
  if (alias && (CsCreqMetric)found != implied)
    return cs_params_fail_field(params, key, error,
                                "policy \"%s\" always uses metric \"%s\"; use policy \"%s\" to "
                                "choose another",
                                alias, cs_place_metric_name(implied), family);
  *out = (CsCreqMetric)found;
  return TRUE;
}

static int compare_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

gboolean cs_place_read_batch_sizes(CsParams *params, int **out, int *n, GError **error)
{
  CsParams *list = cs_params_get(params, "batch_sizes");
  if (!list) {
    *n = cs_place_n_default_batches;
    *out = g_new(int, *n);
    memcpy(*out, cs_place_default_batches, sizeof cs_place_default_batches);
    return TRUE;
  }
  int count = cs_params_size(list);
  if (cs_params_kind(list) != CS_PARAMS_ARRAY || count == 0)
    return cs_params_fail(list, error, "expected a non-empty array of batch sizes, got %s",
                          cs_params_kind(list) == CS_PARAMS_ARRAY ? "an empty array"
                                                                  : cs_params_kind_name(list));
  int *sizes = g_new(int, count);
  for (int i = 0; i < count; i++) {
    CsParams *item = cs_params_at(list, i);
    double v = NAN;
    /* A number that is not finite (1e999) gets the readers' own message
     * rather than "got nan". */
    if (cs_params_kind(item) == CS_PARAMS_NUMBER &&
        !cs_params_as_double(item, -INFINITY, INFINITY, &v, error)) {
      g_free(sizes);
      return FALSE;
    }
    if (!(v >= 1 && v <= (1 << 20) && v == floor(v))) {
      if (cs_params_kind(item) == CS_PARAMS_NUMBER)
        cs_params_fail(item, error, "expected an integer batch size in [1, %d], got %g", 1 << 20,
                       v);
      else
        cs_params_fail(item, error, "expected an integer batch size in [1, %d], got %s", 1 << 20,
                       cs_params_kind_name(item));
      g_free(sizes);
      return FALSE;
    }
    sizes[i] = (int)v;
  }
  qsort(sizes, (size_t)count, sizeof *sizes, compare_int);
  for (int i = 1; i < count; i++) {
    if (sizes[i] == sizes[i - 1]) {
      cs_params_fail(list, error, "batch size %d is listed twice", sizes[i]);
      g_free(sizes);
      return FALSE;
    }
  }
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
    g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
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

gboolean cs_place_require_homogeneous(const CsPlacementProblem *in, const char *policy,
                                      GError **error)
{
  for (int g = 1; g < in->n_gpus; g++) {
    if (strcmp(in->gpus[g].gpu_type, in->gpus[0].gpu_type) != 0) {
      g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                  "placement \"%s\" needs GPUs of one type (as in the thesis), but GPU 0 is "
                  "\"%s\" and GPU %d is \"%s\"",
                  policy, in->gpus[0].gpu_type, g, in->gpus[g].gpu_type);
      return FALSE;
    }
  }
  return TRUE;
}

void cs_place_compute_expected(CsPlacement *p, const CsPlacementProblem *in)
{
  double *sum = g_new0(double, MAX(in->n_models, 1));
  for (int i = 0; i < cs_placement_n_replicas(p); i++) {
    const CsReplica *r = cs_placement_replica(p, i);
    const CsModelProfile *prof = cs_profile_set_lookup(in->profiles, in->gpus[r->gpu].gpu_type,
                                                       in->models[r->model].name);
    g_assert(prof != NULL);
    sum[r->model] += cs_model_profile_throughput_rps(prof, r->batch);
  }
  for (int m = 0; m < in->n_models; m++)
    cs_placement_set_expected_goodput(p, m, MIN(in->models[m].rate_rps, sum[m]));
  g_free(sum);
}
