/* The scenario compiler's side of registries (public side:
 * clustersim/registry.h). */
#ifndef CS_REGISTRY_INTERNAL_H
#define CS_REGISTRY_INTERNAL_H

#include <cjson/cJSON.h>

#include "clustersim/registry.h"

/* A policy's parameter hooks, shared by dispatch policies and controllers. */
typedef void *(*CsParseFn)(CsParams *params, void *user_data, GError **error);
typedef void (*CsWriteParamsFn)(const void *params, CsParamsWriter *out);

/* Runs parse (may be NULL: no parameters) on obj (NULL: an empty object;
 * file and path locate it in messages), with "policy" and known
 * (NULL-terminated, may be NULL) accepted, then rejects any field nobody
 * asked for. kind and name ("dispatch policy", "router") name the policy in
 * messages. Sets *params and returns TRUE, or returns FALSE with error set. */
gboolean cs_policy_params_parse(const char *kind, const char *name, CsParseFn parse,
                                void (*free_params)(void *), void *user_data, const cJSON *obj,
                                const char *const *known, const char *file, const char *path,
                                void **params, GError **error);

/* The parameters as describe writes them (NULL: none), compact JSON text
 * ("{}" without); g_free it. */
char *cs_policy_params_json(CsWriteParamsFn describe, const void *params);

/* Adds to obj every field write_defaults (may be NULL) writes that obj lacks. */
void cs_policy_params_fill(CsWriteParamsFn write_defaults, const void *params, cJSON *obj);

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

/* Reads a "plugins" field of root (absent: none): an array whose items are a
 * path (relative to base_dir) or {"path": ..., "sha256": ...} (what an
 * effective scenario writes). Appends each path as written to written (may
 * be NULL), resolved against base_dir to paths, and its recorded SHA-256 (or
 * NULL) to shas (may be NULL). Returns FALSE with error set naming file and
 * "plugins[i]". */
gboolean cs_plugins_field_read(const cJSON *root, const char *file, const char *base_dir,
                               GPtrArray *written, GPtrArray *paths, GPtrArray *shas,
                               GError **error);

/* plugin.c's side of a registry (registry.c). The index of the plug-in at
 * path (absolute, links resolved) in r, or -1 (also for NULL r). */
int cs_registry_find_plugin(const CsRegistry *r, const char *path);

/* Whether a plug-in's cs_plugin_init is running on r. */
gboolean cs_registry_plugin_loading(const CsRegistry *r);

/* Records the plug-in at path as loading: what cs_registry_add_* adds until
 * _end is its, and the first add refused meanwhile is kept. */
void cs_registry_plugin_begin(CsRegistry *r, const char *path, const char *sha256);

/* Ends the load. With keep and no add refused, the plug-in and its policies
 * stay and NULL is returned; otherwise they are removed (the registry is as
 * before _begin) and the refusal is returned (NULL when there was none: the
 * caller refuses). */
GError *cs_registry_plugin_end(CsRegistry *r, gboolean keep);

#endif
