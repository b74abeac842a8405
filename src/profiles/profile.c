/* Model profiles: the profile set, its lookups and what a model's profile
 * answers (latency, throughput, execution time per batch); see profile.h.
 * Reading profile files is profile_load.c (docs/profiles.md: the format). */
#include "profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_input.h"
#include "profile_set.h"

/* ---- Ownership helpers --------------------------------------------------- */

void cs_profile_gpu_entry_free(GpuEntry *g)
{
  if (!g)
    return;
  g_free(g->type.name);
  g_free(g->type.description);
  g_free(g->type.price_source);
  g_free(g->origin);
  if (g->models)
    g_hash_table_unref(g->models);
  g_free(g);
}

void cs_profile_model_entry_free(ModelEntry *m)
{
  if (!m)
    return;
  for (int i = 0; i < m->prof.n_points; i++)
    g_free(m->prof.points[i].note);
  g_free(m->prof.points);
  g_free(m->prof.gpu_type);
  g_free(m->prof.model);
  g_free(m->prof.source);
  g_free(m->origin);
  g_free(m);
}

CsProfileSet *cs_profile_set_new(void)
{
  CsProfileSet *set = g_new0(CsProfileSet, 1);
  set->gpus = g_ptr_array_new_with_free_func((GDestroyNotify)cs_profile_gpu_entry_free);
  set->gpu_index = g_hash_table_new(g_str_hash, g_str_equal);
  set->models = g_ptr_array_new_with_free_func((GDestroyNotify)cs_profile_model_entry_free);
  return set;
}

void cs_profile_set_free(CsProfileSet *set)
{
  if (!set)
    return;
  /* Index tables borrow from the arrays: drop them first. */
  g_hash_table_unref(set->gpu_index);
  g_ptr_array_unref(set->gpus);
  g_ptr_array_unref(set->models);
  g_free(set);
}

int cs_batch_point_compare(const void *a, const void *b)
{
  int x = ((const CsBatchPoint *)a)->batch, y = ((const CsBatchPoint *)b)->batch;
  return (x > y) - (x < y);
}

/* ---- Lookup -------------------------------------------------------------- */

const CsModelProfile *cs_profile_set_lookup(const CsProfileSet *set, const char *gpu_type,
                                            const char *model)
{
  g_return_val_if_fail(set != NULL && gpu_type != NULL && model != NULL, NULL);
  const GpuEntry *g = g_hash_table_lookup(set->gpu_index, gpu_type);
  const ModelEntry *m = g ? g_hash_table_lookup(g->models, model) : NULL;
  return m ? &m->prof : NULL;
}

const CsGpuType *cs_profile_set_gpu_type(const CsProfileSet *set, const char *name)
{
  g_return_val_if_fail(set != NULL && name != NULL, NULL);
  const GpuEntry *g = g_hash_table_lookup(set->gpu_index, name);
  return g ? &g->type : NULL;
}

int cs_profile_set_n_gpu_types(const CsProfileSet *set)
{
  g_return_val_if_fail(set != NULL, 0);
  return (int)set->gpus->len;
}

const CsGpuType *cs_profile_set_gpu_type_at(const CsProfileSet *set, int i)
{
  g_return_val_if_fail(set != NULL && i >= 0 && (guint)i < set->gpus->len, NULL);
  return &((const GpuEntry *)g_ptr_array_index(set->gpus, i))->type;
}

char *cs_profile_set_suggest_gpu_type(const CsProfileSet *set, const char *name)
{
  g_return_val_if_fail(set != NULL && name != NULL, NULL);
  GPtrArray *names = g_ptr_array_new();
  for (guint i = 0; i < set->gpus->len; i++)
    g_ptr_array_add(names, ((GpuEntry *)g_ptr_array_index(set->gpus, i))->type.name);
  char *hint = cs_did_you_mean(name, (const char *const *)names->pdata, (int)names->len);
  g_ptr_array_free(names, TRUE);
  return hint;
}

int cs_profile_set_n_models(const CsProfileSet *set)
{
  g_return_val_if_fail(set != NULL, 0);
  return (int)set->models->len;
}

const CsModelProfile *cs_profile_set_model(const CsProfileSet *set, int i)
{
  g_return_val_if_fail(set != NULL && i >= 0 && (guint)i < set->models->len, NULL);
  return &((const ModelEntry *)g_ptr_array_index(set->models, i))->prof;
}

const CsBatchPoint *cs_model_profile_point(const CsModelProfile *p, int batch)
{
  g_return_val_if_fail(p != NULL, NULL);
  if (p->n_points == 0)
    return NULL;
  CsBatchPoint key = { .batch = batch };
  return bsearch(&key, p->points, (size_t)p->n_points, sizeof key, cs_batch_point_compare);
}

int64_t cs_model_profile_latency_ns(const CsModelProfile *p, int batch)
{
  g_return_val_if_fail(p != NULL && batch >= 1, 0);
  const CsBatchPoint *pt = cs_model_profile_point(p, batch);
  if (pt)
    return pt->latency_ns;
  double ns = p->alpha_ns * batch + p->beta_ns;
  /* (double)INT64_MAX is 2^63, one past the largest int64: >= saturates. */
  if (ns >= (double)INT64_MAX)
    return INT64_MAX;
  int64_t r = llround(ns);
  return r < 1 ? 1 : r;
}

double cs_model_profile_throughput_rps(const CsModelProfile *p, int batch)
{
  g_return_val_if_fail(p != NULL && batch >= 1, 0);
  const CsBatchPoint *pt = cs_model_profile_point(p, batch);
  if (pt && !isnan(pt->throughput_rps))
    return pt->throughput_rps;
  return batch / ((double)cs_model_profile_latency_ns(p, batch) * 1e-9);
}

int64_t cs_model_profile_exec_ns(const CsModelProfile *p, int batch)
{
  const CsBatchPoint *pt = cs_model_profile_point(p, batch);
  if (pt && !isnan(pt->throughput_rps) && pt->throughput_rps > 0)
    return MAX((int64_t)1, llround((double)batch / pt->throughput_rps * 1e9));
  return cs_model_profile_latency_ns(p, batch);
}

const CsBatchPoint *cs_model_profile_nearest_point(const CsModelProfile *p, int batch)
{
  const CsBatchPoint *best = NULL;
  for (int i = 0; p && i < p->n_points; i++)
    if (!best || abs(p->points[i].batch - batch) < abs(best->batch - batch))
      best = &p->points[i];
  return best;
}

double cs_model_profile_mreq_pct(const CsModelProfile *p, int batch)
{
  const CsBatchPoint *best = NULL;
  for (int i = 0; p && i < p->n_points; i++)
    if (!isnan(p->points[i].mreq_pct) &&
        (!best || abs(p->points[i].batch - batch) < abs(best->batch - batch)))
      best = &p->points[i];
  return best ? best->mreq_pct : 0.0;
}

/* ---- read-only accessors of the public API --------------------------------- */

const char *cs_gpu_type_name(const CsGpuType *t)
{
  return t->name;
}

const char *cs_gpu_type_description(const CsGpuType *t)
{
  return t->description ? t->description : "";
}

int cs_gpu_type_sm_count(const CsGpuType *t)
{
  return t->sm_count;
}

int64_t cs_gpu_type_memory_bytes(const CsGpuType *t)
{
  return t->memory_bytes;
}

double cs_gpu_type_price_per_hour(const CsGpuType *t)
{
  return t->price_per_hour;
}

const char *cs_gpu_type_price_source(const CsGpuType *t)
{
  return t->price_source;
}

const char *cs_model_profile_model(const CsModelProfile *p)
{
  return p->model;
}

const char *cs_model_profile_gpu_type(const CsModelProfile *p)
{
  return p->gpu_type;
}

double cs_model_profile_slo_ms(const CsModelProfile *p)
{
  return p->slo_ms;
}

int64_t cs_model_profile_input_bytes(const CsModelProfile *p)
{
  return p->input_bytes;
}

int64_t cs_model_profile_output_bytes(const CsModelProfile *p)
{
  return p->output_bytes;
}

const char *cs_model_profile_source(const CsModelProfile *p)
{
  return p->source ? p->source : "";
}

int cs_model_profile_n_points(const CsModelProfile *p)
{
  return p->n_points;
}

const CsBatchPoint *cs_model_profile_point_at(const CsModelProfile *p, int i)
{
  return i >= 0 && i < p->n_points ? &p->points[i] : NULL;
}

gboolean cs_model_profile_linear(const CsModelProfile *p, double *alpha_ns, double *beta_ns)
{
  if (alpha_ns)
    *alpha_ns = p->alpha_ns;
  if (beta_ns)
    *beta_ns = p->beta_ns;
  return !p->linear_fitted;
}
