/* The scenario's "controller" section (clustersim/control.h): the policy
 * that changes replicas or GPUs during the run, its parameters, and the
 * checks that the rest of the scenario can follow it. Read after "dispatch"
 * and before "placement" (an autoscaling controller decides how many GPUs
 * the first placement sees). See docs/scenario.md, "Controllers". */
#include <string.h>

#include "common/json_input.h"
#include "policies/control/control.h"
#include "policies/registry_internal.h"
#include "scenario_internal.h"
#include "sim/config.h"

gboolean cs_scenario_read_controller(const CsScenario *sc, CsConfig *c, GError **error)
{
  c->initial_gpus = c->n_gpus;
  const cJSON *obj = cJSON_GetObjectItemCaseSensitive(sc->root, "controller");
  if (!obj) {
    const cJSON *cl = cJSON_GetObjectItemCaseSensitive(sc->root, "cluster");
    static const char *const load_keys[] = { "host_to_gpu_gbps", "model_load_ms", NULL };
    for (int k = 0; load_keys[k]; k++)
      if (cJSON_GetObjectItemCaseSensitive(cl, load_keys[k]))
        cs_warning_add(c->warnings, "setting_ignored", NULL, -1,
                       "cluster.%s sets how long a model load takes; without a \"controller\" "
                       "nothing loads during the run, so it is ignored",
                       load_keys[k]);
    return TRUE;
  }
  const char *policy = NULL;
  if (!cs_json_expect_object(obj, sc->name, "controller", error) ||
      !cs_json_read_string(obj, "policy", TRUE, &policy, sc->name, "controller", error))
    return FALSE;
  c->controller = cs_registry_find_controller(sc->registry, policy, &c->controller_user_data);
  if (!c->controller) {
    char *names = cs_registry_controller_names(sc->registry);
    cs_json_fail(error, sc->name, "controller.policy", "unknown controller \"%s\" (known: %s)"
                 CS_PLUGIN_HINT, policy, names);
    g_free(names);
    return FALSE;
  }
  static const char *const scaling_keys[] = { "initial_gpus", NULL };
  if (c->controller->scales_gpus) {
    int64_t initial = c->n_gpus;
    if (!cs_json_read_int64(obj, "initial_gpus", FALSE, 1, c->n_gpus, &initial, sc->name,
                            "controller", error))
      return FALSE;
    c->initial_gpus = (int)initial;
    if (c->has_mig)
      return cs_json_fail(error, sc->name, "controller.policy",
                          "controller \"%s\" provisions and releases whole GPUs; a cluster with "
                          "MIG instances is not supported (remove \"mig\" or the controller)",
                          policy);
  }
  if (!cs_controller_parse(c->controller, c->controller_user_data, obj,
                           c->controller->scales_gpus ? scaling_keys : NULL, sc->name, "controller",
                           &c->controller_params, error))
    return FALSE;
  if (c->controller->check)
    c->controller->check(c->controller_params, c, c->warnings, c->controller_user_data);
  if (c->controller->needs_placement && !c->dispatch->uses_placement)
    return cs_json_fail(error, sc->name, "controller.policy",
                        "controller \"%s\" re-runs the placement policy, but dispatch \"%s\" uses "
                        "no placement (it runs every model on every GPU)",
                        policy, c->dispatch->name);
  if (!c->dispatch->on_cluster_change)
    return cs_json_fail(error, sc->name, "controller.policy",
                        "controller \"%s\" changes the run's %s while it goes on, but dispatch "
                        "\"%s\" cannot follow such changes (it has no on_cluster_change); use a "
                        "dispatch policy that does (docs/scenario.md, \"Controllers\")",
                        policy, c->controller->scales_gpus ? "GPUs" : "replicas",
                        c->dispatch->name);
  return TRUE;
}
