/* Experiment files' grids: expanding a grid into its runs (coordinates,
 * each run's scenario) and what it says about them; see experiment.h and
 * docs/experiments.md ("Sweeps"). Reading the file is experiment_load.c. */
#include "experiment.h"

#include <string.h>

#include "common/json_input.h"
#include "experiment_edit.h"
#include "experiment_internal.h"
#include "scenario/scenario.h"
#include "sim/rng.h"

static void edit_free(gpointer p)
{
  Edit *ed = p;
  g_free(ed->path);
  g_free(ed->value);
  g_free(ed->where);
  g_free(ed);
}

Level *cs_experiment_level_new(const char *name)
{
  Level *lv = g_new0(Level, 1);
  lv->name = g_strdup(name);
  lv->edits = g_ptr_array_new_with_free_func(edit_free);
  return lv;
}

void cs_experiment_level_free(gpointer p)
{
  Level *lv = p;
  if (!lv)
    return;
  g_free(lv->name);
  g_ptr_array_unref(lv->edits);
  g_free(lv);
}

void cs_experiment_axis_free(gpointer p)
{
  Axis *a = p;
  g_free(a->name);
  g_ptr_array_unref(a->levels);
  g_free(a);
}

void cs_experiment_free(CsExperiment *e)
{
  if (!e)
    return;
  g_free(e->file);
  g_free(e->name);
  g_free(e->sha256);
  g_free(e->base_file);
  g_free(e->base_sha256);
  g_free(e->base_dir);
  g_free(e->base_json);
  cs_experiment_level_free(e->common);
  if (e->variants)
    g_ptr_array_unref(e->variants);
  if (e->axes)
    g_ptr_array_unref(e->axes);
  if (e->seeds)
    g_array_unref(e->seeds);
  g_strfreev(e->plugins);
  cs_registry_unref(e->registry);
  g_free(e);
}

/* Applies the edits of lv to sc; a failure names the edit and, when context
 * is given, the run. */
static gboolean apply_level(const CsExperiment *e, CsScenario *sc, const Level *lv,
                            const char *context, GError **error)
{
  for (guint i = 0; i < lv->edits->len; i++) {
    const Edit *ed = g_ptr_array_index(lv->edits, i);
    char *why = NULL;
    if (!cs_experiment_apply_path(sc, ed->path, ed->value, &why)) {
      cs_json_fail(error, e->file, ed->where, "%s (applied to %s%s%s)", why, e->base_file,
                   context ? " for " : "", context ? context : "");
      g_free(why);
      return FALSE;
    }
  }
  return TRUE;
}

/* Splits a run number into variant, axis levels (n_axes entries) and seed index. */
void cs_experiment_run_coords(const CsExperiment *e, int run, int *variant, int *levels, int *seed)
{
  int n_seeds = (int)e->seeds->len;
  *seed = run % n_seeds;
  int rest = run / n_seeds;
  int point = rest % e->n_points;
  *variant = rest / e->n_points;
  for (int a = (int)e->axes->len - 1; a >= 0; a--) {
    const Axis *ax = g_ptr_array_index(e->axes, a);
    levels[a] = point % (int)ax->levels->len;
    point /= (int)ax->levels->len;
  }
}

/* "variant NAME, AXIS LABEL, ..." of a variant and axis levels. */
static char *describe_point(const CsExperiment *e, int variant, const int *levels)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "variant %s", cs_experiment_variant_name(e, variant));
  for (guint a = 0; a < e->axes->len; a++)
    g_string_append_printf(s, ", %s %s", cs_experiment_axis_name(e, (int)a),
                           cs_experiment_axis_label(e, (int)a, levels[a]));
  return g_string_free(s, FALSE);
}

CsScenario *cs_experiment_build(const CsExperiment *e, int variant, const int *levels,
                                gboolean with_context, GError **error)
{
  CsScenario *sc = cs_scenario_new_from_json(e->base_json, e->base_file, e->base_dir, error);
  if (!sc)
    return NULL;
  cs_scenario_set_registry(sc, e->registry);
  char *context = with_context ? describe_point(e, variant, levels) : NULL;
  gboolean ok = apply_level(e, sc, e->common, context, error) &&
                apply_level(e, sc, g_ptr_array_index(e->variants, variant), context, error);
  for (guint a = 0; ok && a < e->axes->len; a++) {
    const Axis *ax = g_ptr_array_index(e->axes, a);
    ok = apply_level(e, sc, g_ptr_array_index(ax->levels, levels[a]), context, error);
  }
  g_free(context);
  if (!ok) {
    cs_scenario_free(sc);
    return NULL;
  }
  return sc;
}

const char *cs_experiment_name(const CsExperiment *e)
{
  g_return_val_if_fail(e != NULL, NULL);
  return e->name;
}

int cs_experiment_n_runs(const CsExperiment *e)
{
  g_return_val_if_fail(e != NULL, 0);
  return e->n_runs;
}

int cs_experiment_n_variants(const CsExperiment *e)
{
  g_return_val_if_fail(e != NULL, 0);
  return (int)e->variants->len;
}

const char *cs_experiment_variant_name(const CsExperiment *e, int variant)
{
  g_return_val_if_fail(e != NULL, NULL);
  if (variant < 0 || variant >= (int)e->variants->len)
    return NULL;
  return ((const Level *)g_ptr_array_index(e->variants, variant))->name;
}

int cs_experiment_n_axes(const CsExperiment *e)
{
  g_return_val_if_fail(e != NULL, 0);
  return (int)e->axes->len;
}

const char *cs_experiment_axis_name(const CsExperiment *e, int axis)
{
  g_return_val_if_fail(e != NULL, NULL);
  if (axis < 0 || axis >= (int)e->axes->len)
    return NULL;
  return ((const Axis *)g_ptr_array_index(e->axes, axis))->name;
}

int cs_experiment_axis_n_levels(const CsExperiment *e, int axis)
{
  g_return_val_if_fail(e != NULL, 0);
  if (axis < 0 || axis >= (int)e->axes->len)
    return 0;
  return (int)((const Axis *)g_ptr_array_index(e->axes, axis))->levels->len;
}

const char *cs_experiment_axis_label(const CsExperiment *e, int axis, int level)
{
  if (cs_experiment_axis_n_levels(e, axis) <= level || level < 0)
    return NULL;
  const Axis *ax = g_ptr_array_index(e->axes, axis);
  return ((const Level *)g_ptr_array_index(ax->levels, level))->name;
}

const char *cs_experiment_run_variant(const CsExperiment *e, int run)
{
  if (run < 0 || run >= cs_experiment_n_runs(e))
    return NULL;
  int *levels = g_newa(int, e->axes->len + 1), variant, seed;
  cs_experiment_run_coords(e, run, &variant, levels, &seed);
  return cs_experiment_variant_name(e, variant);
}

const char *cs_experiment_run_label(const CsExperiment *e, int run, int axis)
{
  if (run < 0 || run >= cs_experiment_n_runs(e) || axis < 0 || axis >= (int)e->axes->len)
    return NULL;
  int *levels = g_newa(int, e->axes->len + 1), variant, seed;
  cs_experiment_run_coords(e, run, &variant, levels, &seed);
  return cs_experiment_axis_label(e, axis, levels[axis]);
}

const CsGoodputSearchOptions *cs_experiment_search(const CsExperiment *e)
{
  return e->has_search ? &e->search : NULL;
}

int64_t cs_experiment_run_seed(const CsExperiment *e, int run)
{
  if (run < 0 || run >= cs_experiment_n_runs(e))
    return 0;
  return g_array_index(e->seeds, int64_t, run % (int)e->seeds->len);
}

char *cs_experiment_run_describe(const CsExperiment *e, int run)
{
  int *levels = g_newa(int, e->axes->len + 1), variant, seed;
  cs_experiment_run_coords(e, run, &variant, levels, &seed);
  char *point = describe_point(e, variant, levels);
  char *s = g_strdup_printf("%s, seed %" G_GINT64_FORMAT, point, cs_experiment_run_seed(e, run));
  g_free(point);
  return s;
}

CsScenario *cs_experiment_run_scenario(const CsExperiment *e, int run, GError **error)
{
  if (run < 0 || run >= cs_experiment_n_runs(e)) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID, "run %d out of range (the experiment has %d)",
                run, e ? e->n_runs : 0);
    return NULL;
  }
  int *levels = g_newa(int, e->axes->len + 1), variant, seed;
  cs_experiment_run_coords(e, run, &variant, levels, &seed);
  return cs_experiment_build(e, variant, levels, TRUE, error);
}

cJSON *cs_experiment_describe(const CsExperiment *e)
{
  cJSON *d = cJSON_CreateObject();
  char *file = g_path_get_basename(e->file), *base = g_path_get_basename(e->base_file);
  cJSON_AddStringToObject(d, "experiment", e->name);
  cJSON_AddStringToObject(d, "file", file);
  cJSON_AddStringToObject(d, "sha256", e->sha256);
  cJSON *b = cJSON_AddObjectToObject(d, "base");
  cJSON_AddStringToObject(b, "file", base);
  cJSON_AddStringToObject(b, "sha256", e->base_sha256);
  g_free(file);
  g_free(base);
  cJSON_AddStringToObject(d, "version", cs_version());
  /* A merge compares descriptions: shards of two stream versions (rng.h)
   * drew other numbers for the same seeds and are refused. */
  cJSON_AddNumberToObject(d, "rng_stream_version", CS_RNG_STREAM_VERSION);
  cJSON_AddNumberToObject(d, "runs", e->n_runs);
  cJSON *vs = cJSON_AddArrayToObject(d, "variants");
  for (guint v = 0; v < e->variants->len; v++)
    cJSON_AddItemToArray(vs, cJSON_CreateString(cs_experiment_variant_name(e, (int)v)));
  cJSON *axes = cJSON_AddArrayToObject(d, "axes");
  for (guint a = 0; a < e->axes->len; a++) {
    cJSON *ax = cJSON_CreateObject();
    cJSON_AddStringToObject(ax, "name", cs_experiment_axis_name(e, (int)a));
    cJSON *labels = cJSON_AddArrayToObject(ax, "labels");
    for (int l = 0; l < cs_experiment_axis_n_levels(e, (int)a); l++)
      cJSON_AddItemToArray(labels, cJSON_CreateString(cs_experiment_axis_label(e, (int)a, l)));
    cJSON_AddItemToArray(axes, ax);
  }
  cJSON *seeds = cJSON_AddArrayToObject(d, "seeds");
  for (guint s = 0; s < e->seeds->len; s++)
    cJSON_AddItemToArray(seeds, cJSON_CreateNumber((double)g_array_index(e->seeds, int64_t, s)));
  if (e->has_search)
    cJSON_AddItemToObject(d, "search", cs_search_options_describe(&e->search));
  cs_experiment_describe_plugins(e->registry, d);
  return d;
}

const char *cs_experiment_file(const CsExperiment *e)
{
  return e->file;
}

int cs_experiment_n_seeds(const CsExperiment *e)
{
  return (int)e->seeds->len;
}

const char *const *cs_experiment_plugins(const CsExperiment *e)
{
  return (const char *const *)e->plugins;
}

void cs_experiment_set_registry(CsExperiment *e, CsRegistry *registry)
{
  if (registry)
    cs_registry_ref(registry);
  cs_registry_unref(e->registry);
  e->registry = registry;
}
