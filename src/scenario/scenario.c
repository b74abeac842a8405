/* Scenarios: the JSON document a user writes, its --set overrides, and its
 * validation into a CsConfig (config.h). The format is documented in
 * docs/scenario.md; every field has a default there and here.
 *
 * This file holds the scenario object (load, free, --set), cs_config_free,
 * the resolution of the data files a scenario names, and
 * cs_scenario_compile, which reads the top-level fields, "outputs" and
 * "overrides_applied" itself and every other section with the reader in the
 * file of that section (scenario_internal.h): scenario_cluster.c,
 * scenario_clients.c, scenario_policies.c. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "cs_config.h"
#include "clustersim/clustersim.h"
#include "common/data_files.h"
#include "common/input_file.h"
#include "common/json_input.h"
#include "sim/config.h"
#include "scenario.h"
#include "scenario_internal.h"

static CsScenario *scenario_wrap(cJSON *root, const char *name, const char *base_dir)
{
  CsScenario *sc = g_new0(CsScenario, 1);
  sc->root = root;
  sc->name = g_strdup(name);
  sc->base_dir = g_strdup(base_dir ? base_dir : ".");
  sc->overrides = g_ptr_array_new_with_free_func(g_free);
  return sc;
}

CsScenario *cs_scenario_load(const char *path, GError **error)
{
  cJSON *root = cs_json_load_file(path, error);
  if (!root)
    return NULL;
  char *dir = g_path_get_dirname(path);
  CsScenario *sc = scenario_wrap(root, path, dir);
  g_free(dir);
  return sc;
}

CsScenario *cs_scenario_new_from_json(const char *json, const char *name, const char *base_dir,
                                      GError **error)
{
  cJSON *root = cs_json_parse(json, name, error);
  return root ? scenario_wrap(root, name, base_dir) : NULL;
}

CsScenario *cs_scenario_new(const char *name, const char *base_dir)
{
  return scenario_wrap(cJSON_CreateObject(), name ? name : "<scenario>", base_dir);
}

void cs_scenario_free(CsScenario *sc)
{
  if (!sc)
    return;
  cJSON_Delete(sc->root);
  g_free(sc->name);
  g_free(sc->base_dir);
  g_ptr_array_unref(sc->overrides);
  cs_registry_unref(sc->registry);
  g_free(sc);
}

void cs_scenario_set_registry(CsScenario *sc, CsRegistry *registry)
{
  if (registry)
    cs_registry_ref(registry);
  cs_registry_unref(sc->registry);
  sc->registry = registry;
}

void cs_scenario_set_runner(CsScenario *sc, const CsScenarioRunner *runner)
{
  /* Atomic: threads of a caller may compile one scenario at once, each
   * handing it the same runner. */
  g_atomic_pointer_set(&sc->runner, (gpointer)runner);
}

char *cs_scenario_to_json(const CsScenario *sc)
{
  return cs_json_print_exact(sc->root);
}

const char *cs_scenario_name(const CsScenario *sc)
{
  return sc->name;
}

const cJSON *cs_scenario_root(const CsScenario *sc)
{
  return sc->root;
}

/* ---- validation ------------------------------------------------------------- */

void cs_config_free(CsConfig *c)
{
  if (!c)
    return;
  for (int i = 0; i < c->n_clients + c->n_llm; i++) {
    g_free(c->clients[i].model);
    g_free(c->clients[i].times_ns);
    g_free(c->clients[i].interval_index);
    g_free(c->clients[i].interval_counts);
    g_free(c->clients[i].interval_scale);
  }
  g_free(c->trace_desc);
  g_free(c->clients);
  for (int i = 0; i < c->n_llm; i++) {
    CsLlmServingConfig *d = &c->llm[i];
    g_free(d->name);
    g_free(d->path);
    g_free(d->reqs);
    g_free(d->device);
    g_free(d->llm_model);
    g_free(d->scheduler);
    if (d->owner_free != NULL)
      d->owner_free(d->owner);
  }
  g_free(c->llm);
  for (int i = 0; i < c->n_gpus; i++)
    g_free(c->gpus[i].gpu_type);
  g_free(c->gpus);
  for (int i = 0; c->nodes && i < c->n_nodes; i++) {
    g_free(c->nodes[i].gpu_type);
    g_free(c->nodes[i].price_source);
    g_free(c->nodes[i].path);
  }
  g_free(c->nodes);
  cs_profile_set_free(c->profiles);
  cs_network_curve_free(c->network);
  cs_placement_free(c->placement);
  g_free(c->replica_failed);
  g_free(c->replica_mreq);
  cs_interference_set_free(c->interference);
  g_free(c->interference_desc);
  if (c->dispatch && c->dispatch_params && c->dispatch->free_params)
    c->dispatch->free_params(c->dispatch_params);
  g_free(c->network_desc);
  g_strfreev(c->profile_files);
  g_strfreev(c->profile_paths);
  g_free(c->network_path);
  g_free(c->interference_path);
  g_free(c->trace_path);
  g_strfreev(c->overrides);
  g_strfreev(c->plugin_paths);
  g_strfreev(c->plugin_sha256);
  cs_warning_list_free(c->warnings);
  g_free(c->name);
  cJSON_Delete(c->placement_params); /* a cJSON copy: scenario_policies.c */
  if (c->controller && c->controller_params && c->controller->free_params)
    c->controller->free_params(c->controller_params);
  g_free(c);
}

static char *find_data_file(const CsScenario *sc, const char *entry, const char *sub,
                            const char *json_path, GError **error);

/* Resolves a file named in the scenario: relative to the scenario's directory,
 * else as a name in <data dir>/<sub>/ with or without ".json". Returns the
 * absolute path (g_free it) or NULL after setting error. */
char *cs_scenario_resolve_data_file(const CsScenario *sc, const char *entry, const char *sub,
                                    const char *json_path, GError **error)
{
  char *found = find_data_file(sc, entry, sub, json_path, error);
  if (!found)
    return NULL;
  /* Absolute, so that the effective scenario can be run from anywhere. */
  char *abs = g_canonicalize_filename(found, NULL);
  g_free(found);
  return abs;
}

static char *find_data_file(const CsScenario *sc, const char *entry, const char *sub,
                            const char *json_path, GError **error)
{
  char *p = g_path_is_absolute(entry) ? g_strdup(entry)
                                      : g_build_filename(sc->base_dir, entry, NULL);
  /* A directory or a FIFO where the file should be is not "not found" (and
   * the data directories must not be searched past it). */
  const char *kind = cs_input_not_regular(p);
  if (kind) {
    cs_json_fail(error, sc->name, json_path, "file \"%s\" is not a regular file (%s)", entry,
                 kind);
    g_free(p);
    return NULL;
  }
  if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
    return p;
  /* Nor is a symbolic link that leads nowhere. */
  const char *broken = cs_input_broken_link(p);
  g_free(p);
  if (broken) {
    cs_json_fail(error, sc->name, json_path, "file \"%s\" cannot be read: %s", entry, broken);
    return NULL;
  }
  if (!g_path_is_absolute(entry)) {
    p = cs_data_file_find(sub, entry);
    if (p)
      return p;
  }
  cs_json_fail(error, sc->name, json_path,
               "file \"%s\" not found (looked relative to the scenario and in the data "
               "directory's %s/; set CLUSTERSIM_DATA_DIR to add one)",
               entry, sub);
  return NULL;
}

static const char *const top_keys[] = { "name",       "seed",    "duration_s", "profiles",
                                        "network",    "cluster", "dispatch",   "placement",
                                        "controller", "clients", "trace",      "outputs",
                                        "warnings",   "overrides_applied", "plugins",
                                        "llm",        NULL };

/* "overrides_applied": the --set overrides an effective scenario already
 * holds (informational: they are in its values); the summary lists them
 * before this run's own. */
static gboolean read_overrides(const CsScenario *sc, CsConfig *c, GError **error)
{
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(sc->root, "overrides_applied");
  GPtrArray *all = g_ptr_array_new();
  gboolean ok = TRUE;
  if (list && !cJSON_IsArray(list))
    ok = cs_json_fail(error, sc->name, "overrides_applied",
                      "expected an array of \"PATH=VALUE\" strings, got %s",
                      cs_json_type_name(list));
  int i = 0;
  const cJSON *item;
  const cJSON *items = ok ? list : NULL;
  cJSON_ArrayForEach(item, items)
  {
    if (!cJSON_IsString(item)) {
      char *jp = cs_json_path_index("overrides_applied", i);
      ok = cs_json_fail(error, sc->name, jp, "expected a \"PATH=VALUE\" string, got %s",
                        cs_json_type_name(item));
      g_free(jp);
      break;
    }
    g_ptr_array_add(all, g_strdup(item->valuestring));
    i++;
  }
  for (guint k = 0; k < sc->overrides->len; k++)
    g_ptr_array_add(all, g_strdup(g_ptr_array_index(sc->overrides, k)));
  g_ptr_array_add(all, NULL);
  c->overrides = (char **)g_ptr_array_free(all, FALSE);
  return ok;
}

/* "warnings": {"plan_gap": x}, x in [0, 1] or false (docs/scenario.md,
 * Warnings). The default, 10 %, is well above the sampling noise of a
 * goodput: n Poisson arrivals vary by 1/sqrt(n), 0.7 % for 300 req/s over
 * a minute, 1.1 % for 4.6 req/s over half an hour, so a warning means the
 * plan and the simulation disagree, not that the arrivals were unlucky. */
static gboolean read_warning_settings(const CsScenario *sc, CsConfig *c, GError **error)
{
  static const char *const keys[] = { "plan_gap", NULL };
  c->plan_gap = CS_DEFAULT_PLAN_GAP;
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(sc->root, "warnings");
  if (!w)
    return TRUE;
  if (!cs_json_expect_object(w, sc->name, "warnings", error) ||
      !cs_json_check_keys(w, keys, sc->name, "warnings", error))
    return FALSE;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(w, "plan_gap");
  if (!v)
    return TRUE;
  if (cJSON_IsFalse(v)) {
    c->plan_gap = -1.0;
    return TRUE;
  }
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0.0 ||
      v->valuedouble > 1.0) {
    char *got = !cJSON_IsNumber(v)         ? g_strdup(cJSON_IsTrue(v) ? "true"
                                                                     : cs_json_type_name(v))
                : !isfinite(v->valuedouble) ? g_strdup(cs_json_nonfinite_name(v->valuedouble))
                                            : g_strdup_printf("%g", v->valuedouble);
    cs_json_fail(error, sc->name, "warnings.plan_gap",
                 "expected a number in [0, 1] (the fraction of its planned goodput a model may "
                 "fall short by before a plan_gap warning) or false (no check), got %s",
                 got);
    g_free(got);
    return FALSE;
  }
  c->plan_gap = v->valuedouble;
  return TRUE;
}

CsConfig *cs_scenario_compile(const CsScenario *sc, GError **error)
{
  if (!cs_json_expect_object(sc->root, sc->name, "", error) ||
      !cs_json_check_keys(sc->root, top_keys, sc->name, "", error))
    return NULL;
  CsConfig *c = g_new0(CsConfig, 1);
  c->warnings = cs_warning_list_new();
  c->name = g_strdup(sc->name);
  int64_t seed = 1;
  const char *name = NULL;
  gboolean ok = cs_json_read_string(sc->root, "name", FALSE, &name, sc->name, "", error) &&
                cs_json_read_int64(sc->root, "seed", FALSE, 0, INT64_MAX, &seed, sc->name, "",
                                   error);
  c->seed = (uint64_t)seed;
  if (ok) {
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(sc->root, "outputs");
    static const char *const out_keys[] = { "requests_csv", "timeseries_bin_s",
                                            "percentile_sketch", NULL };
    gboolean csv = FALSE;
    double bin_s = 1.0, sketch = 0.0;
    if (out)
      ok = cs_json_expect_object(out, sc->name, "outputs", error) &&
           cs_json_check_keys(out, out_keys, sc->name, "outputs", error) &&
           cs_json_read_bool(out, "requests_csv", FALSE, &csv, sc->name, "outputs", error) &&
           cs_json_read_double(out, "timeseries_bin_s", FALSE, 1e-3, 1e6, &bin_s, sc->name,
                               "outputs", error) &&
           cs_json_read_double(out, "percentile_sketch", FALSE, 1e-4, 0.1, &sketch, sc->name,
                               "outputs", error);
    c->timeseries_bin_ns = llround(bin_s * 1e9);
    c->percentile_sketch = sketch;
  }
  ok = ok && read_warning_settings(sc, c, error);
  ok = ok && read_overrides(sc, c, error) && cs_scenario_read_plugins(sc, c, error) &&
       cs_scenario_read_profiles(sc, c, error) &&
       cs_scenario_read_network(sc, c, error) && cs_scenario_read_cluster(sc, c, error) &&
       cs_scenario_read_clients(sc, c, error) && cs_scenario_read_llm(sc, c, error) &&
       cs_scenario_read_dispatch(sc, c, error) &&
       cs_scenario_read_controller(sc, c, error) && cs_scenario_read_placement(sc, c, error);
  if (!ok) {
    cs_config_free(c);
    return NULL;
  }
  return c;
}

gboolean cs_scenario_requests_csv_wanted(const CsScenario *sc)
{
  const cJSON *out = cJSON_GetObjectItemCaseSensitive(sc->root, "outputs");
  return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(out, "requests_csv"));
}
