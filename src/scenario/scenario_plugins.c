/* A scenario's "plugins" (docs/scenario.md, "Plug-ins"): loading them into
 * the scenario's registry (cs_scenario_load_plugins, clustersim/plugin.h),
 * and checking at compile time that they are loaded and unchanged.
 *
 * Loading and compiling are separate because compiling must not write the
 * registry: a sweep compiles its runs in many threads at once, all sharing
 * one registry that was filled before they started. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "clustersim/plugin.h"
#include "common/json_input.h"
#include "policies/registry_internal.h"
#include "scenario_internal.h"

gboolean cs_scenario_load_plugins(CsScenario *sc, GError **error)
{
  g_return_val_if_fail(sc != NULL, FALSE);
  GPtrArray *written = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
  gboolean ok = cs_plugins_field_read(sc->root, sc->name, sc->base_dir, written, paths, NULL,
                                      error);
  if (ok && paths->len > 0 && !sc->registry)
    sc->registry = cs_registry_new();
  for (guint i = 0; ok && i < paths->len; i++) {
    GError *err = NULL;
    if (!cs_registry_load_plugin(sc->registry, g_ptr_array_index(paths, i), &err)) {
      char *jp = cs_json_path_index("plugins", (int)i);
      ok = cs_json_fail(error, sc->name, jp, "\"%s\": %s",
                        (const char *)g_ptr_array_index(written, i), err->message);
      g_free(jp);
      g_error_free(err);
    }
  }
  g_ptr_array_unref(written);
  g_ptr_array_unref(paths);
  return ok;
}

gboolean cs_scenario_read_plugins(const CsScenario *sc, CsConfig *c, GError **error)
{
  GPtrArray *written = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *shas = g_ptr_array_new_with_free_func(g_free);
  gboolean ok = cs_plugins_field_read(sc->root, sc->name, sc->base_dir, written, paths, shas,
                                      error);
  for (guint i = 0; ok && i < paths->len; i++) {
    const char *path = g_ptr_array_index(paths, i), *want = g_ptr_array_index(shas, i);
    char *jp = cs_json_path_index("plugins", (int)i);
    char real[PATH_MAX];
    int at = realpath(path, real) ? cs_registry_find_plugin(sc->registry, real) : -1;
    if (at < 0 && !realpath(path, real))
      ok = cs_json_fail(error, sc->name, jp, "plug-in \"%s\": cannot open it: %s",
                        (const char *)g_ptr_array_index(written, i), g_strerror(errno));
    else if (at < 0)
      ok = cs_json_fail(error, sc->name, jp,
                        "plug-in \"%s\" is not loaded (clustersim loads the plug-ins a scenario "
                        "names; a program calls cs_scenario_load_plugins)",
                        (const char *)g_ptr_array_index(written, i));
    else if (want && strcmp(want, cs_registry_plugin_sha256(sc->registry, at)) != 0)
      cs_warning_add(c->warnings, "plugin_changed", NULL, -1,
                     "%s: %s: plug-in %s has SHA-256 %s, the scenario recorded %s: it changed "
                     "since the run that wrote this scenario, and its policies may not give "
                     "the same results",
                     sc->name, jp, real, cs_registry_plugin_sha256(sc->registry, at), want);
    g_free(jp);
  }
  int n = cs_registry_n_plugins(sc->registry);
  if (ok && n > 0) {
    c->plugin_paths = g_new0(char *, n + 1);
    c->plugin_sha256 = g_new0(char *, n + 1);
    for (int i = 0; i < n; i++) {
      c->plugin_paths[i] = g_strdup(cs_registry_plugin_path(sc->registry, i));
      c->plugin_sha256[i] = g_strdup(cs_registry_plugin_sha256(sc->registry, i));
    }
  }
  g_ptr_array_unref(written);
  g_ptr_array_unref(paths);
  g_ptr_array_unref(shas);
  return ok;
}
