/* The policy catalogue: every policy of a registry with its parameters, as
 * the policies themselves read them (params.h, "Documenting parameters").
 * Used by `clustersim policies`. */
#ifndef CS_POLICIES_CATALOG_H
#define CS_POLICIES_CATALOG_H

#include <cjson/cJSON.h>

#include "clustersim/registry.h"

/* Returns a new JSON array (cJSON_Delete it) with one object per policy of r
 * (NULL: the built-in policies), placement policies first, then dispatch,
 * then controllers, each in registration order:
 *   {"name", "kind": "placement"|"dispatch"|"controller", "description",
 *    "parameters": [{"name", "type", "required", "default" (absent when
 *    none), "default_text" (when the policy words it), "min", "max" (numbers
 *    and integers), "choices" (choices), "description"}]}
 * A policy's parameters are recorded by running its parse or place once on
 * a describing view; its result and error are discarded. Never fails. */
cJSON *cs_policy_catalog(const CsRegistry *r);

/* The fields a dispatch policy's parse asks for, recorded as for the
 * catalogue (those it reads only to refuse included): a new array of newly
 * allocated names (g_ptr_array_unref it). For the scenario's list of the
 * fields it does not know. */
GPtrArray *cs_policy_dispatch_fields(const CsDispatchPolicy *policy, void *user_data);

#endif
