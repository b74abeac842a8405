/* The policy catalogue (catalog.h): each policy reads an empty object in
 * describing mode (common/params_internal.h) and what it asked for is the
 * list of its parameters. There is no second list of parameters to keep in
 * sync with the code: a parameter a policy reads is a parameter it lists. */
#include "catalog.h"

#include <math.h>
#include <string.h>

#include "common/params_internal.h"
#include "placement/placement.h"

static const char *const type_names[] = {
  [CS_PARAM_ANY] = "json",     [CS_PARAM_NUMBER] = "number", [CS_PARAM_INTEGER] = "integer",
  [CS_PARAM_BOOL] = "boolean",  [CS_PARAM_STRING] = "string", [CS_PARAM_CHOICE] = "choice",
};

/* A bound the reader uses as "no bound" (G_MAXINT, 1e300, infinity). */
static void add_bound(cJSON *o, const char *key, double v)
{
  if (isfinite(v))
    cJSON_AddNumberToObject(o, key, v);
}

static cJSON *parameter_json(const CsParamInfo *in)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", in->key);
  cJSON_AddStringToObject(o, "type", type_names[in->type]);
  /* A field only named (a list or object the policy reads itself) has no
   * reader to say whether it is required: its description does. */
  if (in->type != CS_PARAM_ANY)
    cJSON_AddBoolToObject(o, "required", in->required);
  if (in->has_default && !in->required) {
    switch (in->type) {
    case CS_PARAM_NUMBER:
    case CS_PARAM_INTEGER:
      cJSON_AddNumberToObject(o, "default", in->num_default);
      break;
    case CS_PARAM_BOOL:
      cJSON_AddBoolToObject(o, "default", in->num_default != 0);
      break;
    case CS_PARAM_STRING:
    case CS_PARAM_CHOICE:
      cJSON_AddStringToObject(o, "default", in->str_default);
      break;
    case CS_PARAM_ANY:
      break;
    }
  }
  if (in->default_text)
    cJSON_AddStringToObject(o, "default_text", in->default_text);
  if (in->has_range) {
    add_bound(o, "min", in->min);
    add_bound(o, "max", in->max);
  }
  if (in->choices) {
    cJSON *c = cJSON_AddArrayToObject(o, "choices");
    for (guint i = 0; i < in->choices->len; i++)
      cJSON_AddItemToArray(c, cJSON_CreateString(g_ptr_array_index(in->choices, i)));
  }
  cJSON_AddStringToObject(o, "description", in->doc ? in->doc : "");
  return o;
}

static cJSON *policy_json(const char *kind, const char *name, const char *description,
                          const CsParams *view)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddStringToObject(o, "kind", kind);
  cJSON_AddStringToObject(o, "description", description ? description : "");
  cJSON *params = cJSON_AddArrayToObject(o, "parameters");
  for (int i = 0; view && i < cs_params_n_infos(view); i++)
    if (!cs_params_info(view, i)->hidden)
      cJSON_AddItemToArray(params, parameter_json(cs_params_info(view, i)));
  return o;
}

/* Runs a dispatch policy's or a controller's parse on a describing view. */
static void describe_parse(void *(*parse)(CsParams *, void *, GError **),
                           void (*free_params)(void *), void *user_data, CsParams *view)
{
  if (!parse)
    return;
  GError *err = NULL;
  void *params = parse(view, user_data, &err);
  if (params && free_params)
    free_params(params);
  g_clear_error(&err);
}

/* A placement policy's place on an empty problem: the built-in policies
 * return as soon as they have read their parameters; a plug-in may go on
 * and find nothing to place. */
static void describe_place(const CsPlacementPolicy *policy, void *user_data, CsParams *view)
{
  static const CsPlacementGpuModel gpu_model = { .mps_gamma = 1.0 };
  CsProfileSet *profiles = cs_profile_set_new();
  CsPlacementProblem problem = { .profiles = profiles, .gpu_model = &gpu_model };
  GError *err = NULL;
  CsPlacement *p = policy->place(&problem, view, user_data, &err);
  cs_placement_free(p);
  g_clear_error(&err);
  cs_profile_set_free(profiles);
}

GPtrArray *cs_policy_dispatch_fields(const CsDispatchPolicy *policy, void *user_data)
{
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  CsParams *view = cs_params_new_describing("dispatch");
  describe_parse(policy->parse, policy->free_params, user_data, view);
  for (int i = 0; i < cs_params_n_infos(view); i++)
    g_ptr_array_add(names, g_strdup(cs_params_info(view, i)->key));
  cs_params_free(view);
  return names;
}

cJSON *cs_policy_catalog(const CsRegistry *r)
{
  CsRegistry *own = r ? NULL : cs_registry_new();
  if (!r)
    r = own;
  cJSON *all = cJSON_CreateArray();
  for (int i = 0; i < cs_registry_n_placement(r); i++) {
    const CsPlacementPolicy *p = cs_registry_placement_at(r, i);
    void *ud = NULL;
    cs_registry_placement(r, p->name, &ud);
    CsParams *view = cs_params_new_describing("placement");
    describe_place(p, ud, view);
    cJSON_AddItemToArray(all, policy_json("placement", p->name, p->description, view));
    cs_params_free(view);
  }
  for (int i = 0; i < cs_registry_n_dispatch(r); i++) {
    const CsDispatchPolicy *d = cs_registry_dispatch_at(r, i);
    void *ud = NULL;
    cs_registry_dispatch(r, d->name, &ud);
    CsParams *view = cs_params_new_describing("dispatch");
    describe_parse(d->parse, d->free_params, ud, view);
    cJSON_AddItemToArray(all, policy_json("dispatch", d->name, d->description, view));
    cs_params_free(view);
  }
  for (int i = 0; i < cs_registry_n_controller(r); i++) {
    const CsControllerPolicy *k = cs_registry_controller_at(r, i);
    void *ud = NULL;
    cs_registry_controller(r, k->name, &ud);
    CsParams *view = cs_params_new_describing("controller");
    describe_parse(k->parse, k->free_params, ud, view);
    if (k->scales_gpus) {
      /* The framework reads this one for every controller that scales GPUs
       * (scenario_controller.c), bounded by the cluster's size. */
      int none = 0;
      cs_params_int(view, "initial_gpus", FALSE, 1, G_MAXINT, &none, NULL);
      cs_params_doc_default(view, "initial_gpus", "every GPU of the cluster");
      if (!cs_params_info(view, 0) || !cs_params_info(view, 0)->doc)
        cs_params_doc(view, "initial_gpus", "GPUs on at the start");
    }
    cJSON_AddItemToArray(all, policy_json("controller", k->name, k->description, view));
    cs_params_free(view);
  }
  /* LLM replica schedulers added to the registry (clustersim/llm.h; the
   * built-in ones are docs/llm.md's, not policy values): their own fields of
   * a deployment's "scheduler" object. */
  for (int i = 0; i < cs_registry_n_llm_scheduler(r); i++) {
    const CsLlmSchedulerPolicy *l = cs_registry_llm_scheduler_at(r, i);
    void *ud = NULL;
    cs_registry_llm_scheduler(r, l->name, &ud);
    CsParams *view = cs_params_new_describing("scheduler");
    describe_parse(l->parse, l->free_params, ud, view);
    cJSON_AddItemToArray(all, policy_json("llm_scheduler", l->name, l->description, view));
    cs_params_free(view);
  }
  cs_registry_unref(own);
  return all;
}
