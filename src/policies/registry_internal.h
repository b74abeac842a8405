/* The scenario compiler's side of registries (public side:
 * clustersim/registry.h). */
#ifndef CS_REGISTRY_INTERNAL_H
#define CS_REGISTRY_INTERNAL_H

#include "clustersim/registry.h"

/* The policy named name in r (NULL r: the built-in policies) and the user
 * data it was registered with; NULL when none has that name. */
const CsPlacementPolicy *cs_registry_find_placement(const CsRegistry *r, const char *name,
                                                    void **user_data);
const CsDispatchPolicy *cs_registry_find_dispatch(const CsRegistry *r, const char *name,
                                                  void **user_data);
const CsControllerPolicy *cs_registry_find_controller(const CsRegistry *r, const char *name,
                                                      void **user_data);

/* The names of r's controllers (NULL r: the built-ins), ", "-separated. */
char *cs_registry_controller_names(const CsRegistry *r);

/* The names of r's placement (or dispatch) policies, ", "-separated, in
 * registration order (NULL r: the built-ins). g_free the result. */
char *cs_registry_names(const CsRegistry *r, gboolean dispatch);

#endif
