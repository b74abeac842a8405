/* The scenario compiler's side of registries (public side:
 * clustersim/registry.h). */
#ifndef CS_REGISTRY_INTERNAL_H
#define CS_REGISTRY_INTERNAL_H

#include <cjson/cJSON.h>

#include "clustersim/registry.h"
#include "common/params_internal.h"

/* The policy named name in r (NULL r: the built-in policies) and the user
 * data it was registered with; NULL when none has that name. */
const CsPlacementPolicy *cs_registry_find_placement(const CsRegistry *r, const char *name,
                                                    void **user_data);
const CsDispatchPolicy *cs_registry_find_dispatch(const CsRegistry *r, const char *name,
                                                  void **user_data);
const CsControllerPolicy *cs_registry_find_controller(const CsRegistry *r, const char *name,
                                                      void **user_data);

/* The names of the LLM schedulers a deployment may name with r (NULL r:
 * the built-ins), ", "-separated; g_free it. */
char *cs_registry_llm_scheduler_names(const CsRegistry *r);

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
