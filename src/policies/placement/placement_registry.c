/* The one table of placement policies, looked up by name. */
#include <string.h>

#include "placement.h"
#include "placement_policies.h"

static const CsPlacementPolicy *const registry[] = {
  &cs_place_manual,
  &cs_place_dedicated,
  &cs_place_usher,
  &cs_place_wao_usher,
  &cs_place_wsm_usher,
  &cs_place_milp,
  &cs_place_ao_milp,
  &cs_place_wsm_milp,
  &cs_place_igniter,
  &cs_place_search,
  NULL,
};

const CsPlacementPolicy *cs_placement_policy_lookup(const char *name)
{
  for (int i = 0; registry[i]; i++)
    if (strcmp(registry[i]->name, name) == 0)
      return registry[i];
  return NULL;
}

const CsPlacementPolicy *const *cs_placement_policy_list(void)
{
  return registry;
}
