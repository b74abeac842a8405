/* libclustersim: plug-ins, policies of your own in a shared object that the
 * clustersim program (and any program of yours) loads by name.
 *
 * A plug-in is a shared object built against these headers that defines two
 * functions, both exported (G_MODULE_EXPORT):
 *
 *   CS_PLUGIN_DEFINE_ABI_VERSION
 *
 *   G_MODULE_EXPORT gboolean cs_plugin_init(CsRegistry *registry, GError **error)
 *   {
 *     return cs_registry_add_placement(registry, &my_policy, NULL, error);
 *   }
 *
 * and is built with
 *
 *   cc -shared -fPIC my_policy.c $(pkg-config --cflags clustersim) -o my_policy.so
 *
 * The library's functions are found in the program that loads it (the
 * clustersim program exports them, as libclustersim does), so the plug-in
 * need not link anything.
 *
 * cs_plugin_init adds the plug-in's policies to the registry it is given and
 * returns TRUE, or returns FALSE with error set (its message is shown to the
 * user, prefixed by the plug-in's path). It is called once per registry and
 * file. It must not keep the registry pointer beyond the call.
 *
 * A plug-in is arbitrary code run with the rights of the program that loads
 * it: load only plug-ins you trust, as you would run only programs you trust.
 *
 * Loading (cs_registry_load_plugin) refuses, with CS_ERROR_INVALID and a
 * message naming the file:
 * - a file that is missing or is not a shared object (GModule's message);
 * - a shared object without cs_plugin_abi_version or cs_plugin_init;
 * - a plug-in built for another CS_PLUGIN_ABI_VERSION (both versions named);
 * - a policy whose name is taken, by a built-in policy, another plug-in's or
 *   one the program added (both origins named), even when cs_plugin_init
 *   ignores the error cs_registry_add_* returned;
 * - cs_plugin_init returning FALSE.
 * On refusal the registry is as it was: the policies the plug-in added before
 * failing are removed and the file is unloaded.
 *
 * A loaded plug-in stays in the process until it exits (it is made
 * resident): results and scenarios may point into its policies.
 *
 * Reproducibility: the registry records every plug-in's path and the SHA-256
 * of its bytes. A run's summary lists them ("setup.plugins": base name and
 * SHA-256) and its effective scenario names them in "plugins" (absolute path
 * and SHA-256), so running the effective scenario loads the same files; a
 * file whose SHA-256 differs from the one recorded gives the run a
 * "plugin_changed" warning. */
#ifndef CLUSTERSIM_PLUGIN_H
#define CLUSTERSIM_PLUGIN_H

#include <gmodule.h>

#include "core.h"
#include "registry.h"

G_BEGIN_DECLS

typedef struct CsScenario CsScenario; /* clustersim.h */

/* The version of the plug-in interface: the layout of the policy structs
 * (placement.h, dispatch.h, control.h) and the meaning of the functions a
 * policy calls. It changes whenever a plug-in built against older headers
 * could misbehave with this library; a plug-in reports the version it was
 * built with through cs_plugin_abi_version(), and loading refuses any other. */
#define CS_PLUGIN_ABI_VERSION 1

/* Defines cs_plugin_abi_version(), returning the CS_PLUGIN_ABI_VERSION of the
 * headers the plug-in is compiled with. Write it once, at file scope, in
 * every plug-in. */
#define CS_PLUGIN_DEFINE_ABI_VERSION                                                          \
  G_MODULE_EXPORT int cs_plugin_abi_version(void);                                          \
  G_MODULE_EXPORT int cs_plugin_abi_version(void)                                           \
  {                                                                                         \
    return CS_PLUGIN_ABI_VERSION;                                                           \
  }

/* The entry point a plug-in defines (declared here so that its definition is
 * checked against this prototype); see the top of this header. Not part of
 * libclustersim: the library never defines it. */
G_MODULE_EXPORT gboolean cs_plugin_init(CsRegistry *registry, GError **error);

/* Loads the plug-in at path (relative paths: to the working directory) into
 * r: opens it with GModule, checks its ABI version and calls its
 * cs_plugin_init with r. A file r already loaded (the same file, after
 * symbolic links are resolved) is not loaded again: returns TRUE.
 *
 * Returns FALSE with error set (domain CS_ERROR, code CS_ERROR_INVALID, the
 * message starting with path) on each refusal listed at the top of this
 * header; r is then unchanged. Not thread safe: no other thread may use r
 * while a plug-in is loading into it (as for cs_registry_add_*). */
CS_API gboolean cs_registry_load_plugin(CsRegistry *r, const char *path, GError **error);

/* The number of plug-ins loaded into r (0 for NULL), and the i-th, in load
 * order: its absolute path (symbolic links resolved) and the SHA-256 of its
 * bytes when loaded (64 lower-case hex digits). Both strings belong to r;
 * NULL when i is out of range. */
CS_API int cs_registry_n_plugins(const CsRegistry *r);
CS_API const char *cs_registry_plugin_path(const CsRegistry *r, int i);
CS_API const char *cs_registry_plugin_sha256(const CsRegistry *r, int i);

/* Loads the plug-ins a scenario names in its "plugins" field (paths relative
 * to the scenario's directory; docs/scenario.md) into the scenario's registry,
 * first giving it a new one (cs_registry_new) when it has none. Running a
 * scenario that names a plug-in its registry has not loaded fails ("plugins[i]:
 * ... is not loaded"), so call this after cs_scenario_load and after
 * cs_scenario_set_registry. Returns FALSE with error set (naming the scenario
 * file, the field and the plug-in) when a field is malformed or a load is
 * refused. Not thread safe (it may add to the registry). */
CS_API gboolean cs_scenario_load_plugins(CsScenario *sc, GError **error);

G_END_DECLS

#endif
