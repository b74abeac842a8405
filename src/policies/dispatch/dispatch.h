/* The framework's side of dispatch policies (the policies' side is
 * clustersim/dispatch.h): the built-in policies, and running a policy's
 * parameter hooks on the scenario's "dispatch" object. */
#ifndef CS_DISPATCH_H
#define CS_DISPATCH_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "clustersim/dispatch.h"

extern const CsDispatchPolicy cs_dispatch_router;    /* thesis: per-replica timeout batching */
extern const CsDispatchPolicy cs_dispatch_symphony;  /* Symphony deferred batch scheduling */
extern const CsDispatchPolicy cs_dispatch_eager;     /* centralized, dispatch as soon as a GPU is free */
extern const CsDispatchPolicy cs_dispatch_timeout;   /* centralized, dispatch at first arrival + k */
extern const CsDispatchPolicy cs_dispatch_shepherd;  /* Shepherd's Flex with preemption */
extern const CsDispatchPolicy cs_dispatch_clockwork; /* Clockwork's controller (INFER4) */
extern const CsDispatchPolicy cs_dispatch_nexus;     /* Nexus: squishy bin packing, frontends, backends */

/* TRUE for the built-in policies that plan every GPU with the slowest GPU
 * type present (symphony, eager, timeout: central.c), so that adding a GPU
 * of a slower type can make a passing cluster fail. */
gboolean cs_dispatch_plans_by_slowest_type(const CsDispatchPolicy *policy);

/* Returns the built-in policy registered under name, or NULL. */
const CsDispatchPolicy *cs_dispatch_policy_lookup(const char *name);
/* Returns the NULL-terminated list of built-in policies. */
const CsDispatchPolicy *const *cs_dispatch_policy_list(void);

/* Runs policy->parse on obj (the scenario's "dispatch" object, or NULL for
 * none; file and path locate it in messages), then rejects any field of it
 * the policy never asked for. Sets *params (NULL for a policy without parse)
 * and returns TRUE, or returns FALSE with error set. */
gboolean cs_dispatch_parse(const CsDispatchPolicy *policy, void *user_data, const cJSON *obj,
                           const char *file, const char *path, void **params, GError **error);

/* The parameters as policy->describe writes them, as compact JSON text
 * ("{}" without describe). g_free the result. */
char *cs_dispatch_describe_json(const CsDispatchPolicy *policy, const void *params);

/* Adds to obj every default policy->write_defaults writes that obj lacks. */
void cs_dispatch_fill_defaults(const CsDispatchPolicy *policy, const void *params, cJSON *obj);

#endif
