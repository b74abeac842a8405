/* libclustersim: the policies a scenario can name.
 *
 * A registry maps the names in a scenario's "placement.policy",
 * "dispatch.policy" and "controller.policy", and an LLM deployment's
 * "scheduler.policy" (llm.h), to policies. cs_registry_new()
 * returns one holding every built-in policy; a researcher adds their own to it and gives it to the
 * scenarios that should see them (cs_scenario_set_registry). A scenario
 * without a registry of its own sees the built-in policies only. There is no
 * global registry: two simulations in one process see only what their own
 * registries hold.
 *
 * A registry is reference counted: a scenario holds a reference, so the
 * caller may drop theirs once it is set. The policy structs and user data
 * added must outlive the registry (typically they are static). Not thread
 * safe while policies are being added; read-only afterwards.
 */
#ifndef CLUSTERSIM_REGISTRY_H
#define CLUSTERSIM_REGISTRY_H

#include "control.h"
#include "core.h"
#include "dispatch.h"
#include "llm.h"
#include "placement.h"

G_BEGIN_DECLS

typedef struct CsRegistry CsRegistry;

/* Returns a registry holding every built-in placement and dispatch policy,
 * with one reference. Never fails. */
CS_API CsRegistry *cs_registry_new(void);

/* Adds / drops a reference; the registry is freed with the last one.
 * cs_registry_unref accepts NULL. */
CS_API CsRegistry *cs_registry_ref(CsRegistry *r);
CS_API void cs_registry_unref(CsRegistry *r);

/* Adds a policy under policy->name; user_data is passed to its callbacks.
 * Returns FALSE with error set (CS_ERROR_INVALID) when the name is empty or
 * taken (built-in names included), or a required callback (place; create and
 * on_request) is missing. */
CS_API gboolean cs_registry_add_placement(CsRegistry *r, const CsPlacementPolicy *policy,
                                          void *user_data, GError **error);
CS_API gboolean cs_registry_add_dispatch(CsRegistry *r, const CsDispatchPolicy *policy,
                                         void *user_data, GError **error);

/* Adds a controller (control.h) under policy->name. Returns FALSE with error
 * set when the name is empty or taken, or parse, free_params, create or
 * on_timer is missing. */
CS_API gboolean cs_registry_add_controller(CsRegistry *r, const CsControllerPolicy *policy,
                                           void *user_data, GError **error);

/* Adds an LLM replica scheduler (llm.h) under policy->name. Returns FALSE
 * with error set when the name is empty or taken (the built-in schedulers'
 * names, vllm, sarathi, orca, static and faster_transformer, included), or
 * schedule is missing, or parse without free_params, or create without
 * destroy. */
CS_API gboolean cs_registry_add_llm_scheduler(CsRegistry *r, const CsLlmSchedulerPolicy *policy,
                                              void *user_data, GError **error);

/* The LLM scheduler added under name (and its user data), or NULL (also for
 * the built-in schedulers' names: they are not CsLlmSchedulerPolicy values). */
CS_API const CsLlmSchedulerPolicy *cs_registry_llm_scheduler(const CsRegistry *r,
                                                             const char *name,
                                                             void **user_data);

/* The policy registered under name (and its user data, when user_data is not
 * NULL), or NULL. */
CS_API const CsPlacementPolicy *cs_registry_placement(const CsRegistry *r, const char *name,
                                                      void **user_data);
CS_API const CsDispatchPolicy *cs_registry_dispatch(const CsRegistry *r, const char *name,
                                                    void **user_data);

/* The controller registered under name (and its user data), or NULL. */
CS_API const CsControllerPolicy *cs_registry_controller(const CsRegistry *r, const char *name,
                                                        void **user_data);

/* Number of policies and the i-th, in registration order (built-ins first);
 * NULL when out of range. */
CS_API int cs_registry_n_placement(const CsRegistry *r);
CS_API const CsPlacementPolicy *cs_registry_placement_at(const CsRegistry *r, int i);
CS_API int cs_registry_n_dispatch(const CsRegistry *r);
CS_API const CsDispatchPolicy *cs_registry_dispatch_at(const CsRegistry *r, int i);
CS_API int cs_registry_n_controller(const CsRegistry *r);
CS_API const CsControllerPolicy *cs_registry_controller_at(const CsRegistry *r, int i);
/* The LLM schedulers added (the built-in ones are not listed). */
CS_API int cs_registry_n_llm_scheduler(const CsRegistry *r);
CS_API const CsLlmSchedulerPolicy *cs_registry_llm_scheduler_at(const CsRegistry *r, int i);

G_END_DECLS

#endif
