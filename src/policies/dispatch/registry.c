/* The built-in dispatch policies, and the framework's side of a policy's
 * parameter hooks. */
#include <string.h>

#include "common/json_input.h"
#include "common/params_internal.h"
#include "dispatch.h"

static const CsDispatchPolicy *const builtins[] = {
  &cs_dispatch_router,
  &cs_dispatch_symphony,
  &cs_dispatch_eager,
  &cs_dispatch_timeout,
  &cs_dispatch_shepherd,
  &cs_dispatch_clockwork,
  &cs_dispatch_nexus,
  NULL,
};

gboolean cs_dispatch_plans_by_slowest_type(const CsDispatchPolicy *policy)
{
  return policy == &cs_dispatch_symphony || policy == &cs_dispatch_eager ||
         policy == &cs_dispatch_timeout;
}

const CsDispatchPolicy *cs_dispatch_policy_lookup(const char *name)
{
  for (int i = 0; builtins[i]; i++)
    if (strcmp(builtins[i]->name, name) == 0)
      return builtins[i];
  return NULL;
}

const CsDispatchPolicy *const *cs_dispatch_policy_list(void)
{
  return builtins;
}

gboolean cs_dispatch_parse(const CsDispatchPolicy *policy, void *user_data, const cJSON *obj,
                           const char *file, const char *path, void **params, GError **error)
{
  *params = NULL;
  cJSON *empty = obj ? NULL : cJSON_CreateObject();
  CsParams *view = cs_params_new_root(obj ? obj : empty, file, path);
  cs_params_mark_known(view, "policy");
  gboolean ok = TRUE;
  if (policy->parse) {
    GError *perr = NULL;
    *params = policy->parse(view, user_data, &perr);
    if (perr || !*params) {
      if (!perr)
        g_set_error(&perr, CS_ERROR, CS_ERROR_POLICY,
                    "dispatch policy \"%s\" returned no parameters and no error", policy->name);
      if (*params && policy->free_params)
        policy->free_params(*params);
      *params = NULL;
      /* Errors from the parameter readers name the file and path already. */
      if (perr->domain == CS_ERROR && perr->code != CS_ERROR_POLICY)
        g_propagate_error(error, perr);
      else {
        g_set_error(error, CS_ERROR, CS_ERROR_POLICY, "%s: %s: %s", file, path, perr->message);
        g_error_free(perr);
      }
      ok = FALSE;
    }
  }
  if (ok && !cs_params_check_asked(view, error)) {
    if (*params && policy->free_params)
      policy->free_params(*params);
    *params = NULL;
    ok = FALSE;
  }
  cs_params_free(view);
  cJSON_Delete(empty);
  return ok;
}

char *cs_dispatch_describe_json(const CsDispatchPolicy *policy, const void *params)
{
  cJSON *out = cJSON_CreateObject();
  if (policy->describe) {
    CsParamsWriter *w = cs_params_writer_new(out);
    policy->describe(params, w);
    cs_params_writer_free(w);
  }
  char *text = cJSON_PrintUnformatted(out);
  char *copy = g_strdup(text);
  cJSON_free(text);
  cJSON_Delete(out);
  return copy;
}

void cs_dispatch_fill_defaults(const CsDispatchPolicy *policy, const void *params, cJSON *obj)
{
  if (!policy->write_defaults)
    return;
  /* The writer keeps the first value of a field: the scenario's own. */
  CsParamsWriter *w = cs_params_writer_new(obj);
  policy->write_defaults(params, w);
  cs_params_writer_free(w);
}
