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
  return cs_policy_params_parse("dispatch policy", policy->name, policy->parse,
                                policy->free_params, user_data, obj, NULL, file, path, params,
                                error);
}

char *cs_dispatch_describe_json(const CsDispatchPolicy *policy, const void *params)
{
  return cs_policy_params_json(policy->describe, params);
}

void cs_dispatch_fill_defaults(const CsDispatchPolicy *policy, const void *params, cJSON *obj)
{
  cs_policy_params_fill(policy->write_defaults, params, obj);
}
