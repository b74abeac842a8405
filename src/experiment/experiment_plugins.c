/* An experiment's plug-ins (docs/experiments.md): those of its own
 * "plugins" and those each of its scenarios names, loaded into one registry
 * before any run starts; runs then only read it, from any thread. */
#include "clustersim/plugin.h"
#include "common/json_input.h"
#include "experiment.h"

gboolean cs_experiment_load_plugins(CsExperiment *e, CsRegistry *registry, GError **error)
{
  g_return_val_if_fail(e != NULL && registry != NULL, FALSE);
  cs_experiment_set_registry(e, registry);
  const char *const *own = cs_experiment_plugins(e);
  for (int i = 0; own && own[i]; i++) {
    GError *err = NULL;
    if (!cs_registry_load_plugin(registry, own[i], &err)) {
      char *jp = cs_json_path_index("plugins", i);
      cs_json_fail(error, cs_experiment_file(e), jp, "%s", err->message);
      g_free(jp);
      g_error_free(err);
      return FALSE;
    }
  }
  /* A variant or an axis level may name plug-ins of its own: one scenario per
   * (variant, axis point), as loading the experiment built them. */
  int step = cs_experiment_n_seeds(e);
  for (int run = 0; run < cs_experiment_n_runs(e); run += step) {
    CsScenario *sc = cs_experiment_run_scenario(e, run, error);
    gboolean ok = sc && cs_scenario_load_plugins(sc, error);
    cs_scenario_free(sc);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

void cs_experiment_describe_plugins(const CsRegistry *registry, cJSON *d)
{
  int n = cs_registry_n_plugins(registry);
  cJSON *list = n > 0 ? cJSON_AddArrayToObject(d, "plugins") : NULL;
  for (int i = 0; i < n; i++) {
    cJSON *o = cJSON_CreateObject();
    char *base = g_path_get_basename(cs_registry_plugin_path(registry, i));
    cJSON_AddStringToObject(o, "file", base);
    cJSON_AddStringToObject(o, "sha256", cs_registry_plugin_sha256(registry, i));
    g_free(base);
    cJSON_AddItemToArray(list, o);
  }
}
