/* The one table of dispatch policies, looked up by name. */
#include <string.h>

#include "dispatch.h"

static const CsDispatchPolicy *const registry[] = {
  &cs_dispatch_router,
  &cs_dispatch_symphony,
  &cs_dispatch_eager,
  &cs_dispatch_timeout,
  NULL,
};

const CsDispatchPolicy *cs_dispatch_policy_lookup(const char *name)
{
  for (int i = 0; registry[i]; i++)
    if (strcmp(registry[i]->name, name) == 0)
      return registry[i];
  return NULL;
}

const CsDispatchPolicy *const *cs_dispatch_policy_list(void)
{
  return registry;
}
