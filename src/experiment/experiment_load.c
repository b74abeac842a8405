/* Experiment files: reading and checking one (its base, edits, variants,
 * axes, seeds, search and plug-ins) into a grid whose every point is built
 * once; see experiment.h and docs/experiments.md ("Sweeps"). */
#include "experiment.h"

#include <string.h>

#include "common/input_file.h"
#include "common/json_input.h"
#include "experiment_edit.h"
#include "experiment_internal.h"
#include "scenario/scenario.h"
#include "policies/registry_internal.h"
#include "search.h"
#include "sweep_runs.h"

static void add_edit(Level *lv, const char *path, const char *value, const char *where)
{
  Edit *ed = g_new0(Edit, 1);
  ed->path = g_strdup(path);
  ed->value = g_strdup(value);
  ed->where = g_strdup(where);
  g_ptr_array_add(lv->edits, ed);
}

/* The seed comes from "seeds" alone, so that every run's seed is in its row. */
static gboolean check_edit_path(const CsExperiment *e, const char *scenario_path,
                                const char *where, GError **error)
{
  if (!*scenario_path)
    return cs_json_fail(error, e->file, where, "expected a scenario path, got an empty one");
  if (strcmp(scenario_path, "seed") == 0)
    return cs_json_fail(error, e->file, where,
                        "the seed is chosen by \"seeds\", not edited in the scenario");
  return TRUE;
}

/* Reads obj's "unset" (array of paths) and "set" (object of path: value) into
 * lv; path is obj's JSON path. */
static gboolean read_edits(const CsExperiment *e, const cJSON *obj, const char *path, Level *lv,
                           GError **error)
{
  const cJSON *unset = cJSON_GetObjectItemCaseSensitive(obj, "unset");
  char *upath = cs_json_path_key(path, "unset");
  gboolean ok = TRUE;
  if (unset && !cJSON_IsArray(unset))
    ok = cs_json_fail(error, e->file, upath, "expected an array of scenario paths, got %s",
                      cs_json_type_name(unset));
  int i = 0;
  for (const cJSON *u = cJSON_IsArray(unset) ? unset->child : NULL; ok && u; u = u->next) {
    char *where = cs_json_path_index(upath, i++);
    const char *p = NULL;
    ok = cs_json_value_string(u, &p, e->file, where, error) &&
         check_edit_path(e, p, where, error);
    if (ok)
      add_edit(lv, p, NULL, where);
    g_free(where);
  }
  g_free(upath);
  const cJSON *set = cJSON_GetObjectItemCaseSensitive(obj, "set");
  char *spath = cs_json_path_key(path, "set");
  if (ok && set && !cJSON_IsObject(set))
    ok = cs_json_fail(error, e->file, spath,
                      "expected an object of scenario path: value, got %s",
                      cs_json_type_name(set));
  const cJSON *f;
  if (ok && set) {
    cJSON_ArrayForEach(f, set)
    {
      char *where = cs_json_path_key(spath, f->string);
      ok = check_edit_path(e, f->string, where, error);
      if (ok) {
        char *text = cJSON_PrintUnformatted(f);
        add_edit(lv, f->string, text, where);
        cJSON_free(text);
      }
      g_free(where);
      if (!ok)
        break;
    }
  }
  g_free(spath);
  return ok;
}

/* Checks that name (a variant's, an axis', a level's label) is printable
 * and not in the set names, then adds it. Names become fields and column
 * names of runs.csv and aggregate.csv, one record a line, and labels of the
 * printed table: a newline or another control character would split or
 * garble a record for the readers (sweep plot, spreadsheets). */
static gboolean check_unique(const CsExperiment *e, GHashTable *names, const char *name,
                             const char *what, const char *path, GError **error)
{
  for (const char *c = name; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f) {
      char *shown = g_strescape(name, NULL);
      gboolean r = cs_json_fail(error, e->file, path,
                                "%s \"%s\" holds a control character (byte 0x%02x): names "
                                "and labels are fields of runs.csv's lines; use printable "
                                "characters",
                                what, shown, (unsigned char)*c);
      g_free(shown);
      return r;
    }
  if (!g_hash_table_add(names, (gpointer)name))
    return cs_json_fail(error, e->file, path, "%s \"%s\" appears twice", what, name);
  return TRUE;
}

static gboolean read_variants(CsExperiment *e, const cJSON *root, GError **error)
{
  static const char *const keys[] = { "name", "set", "unset", "description", NULL };
  e->variants = g_ptr_array_new_with_free_func(cs_experiment_level_free);
  const cJSON *vs = cJSON_GetObjectItemCaseSensitive(root, "variants");
  if (!vs) {
    g_ptr_array_add(e->variants, cs_experiment_level_new("base")); /* the base scenario as it is */
    return TRUE;
  }
  if (!cJSON_IsArray(vs) || cJSON_GetArraySize(vs) == 0)
    return cs_json_fail(error, e->file, "variants",
                        "expected a non-empty array of {\"name\", \"set\", \"unset\"}, got %s",
                        cs_json_type_name(vs));
  GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
  /* Every variant is read: their problems are listed together. */
  CsErrorList *problems = cs_error_list_new();
  int i = 0;
  for (const cJSON *v = vs->child; v; v = v->next) {
    char *path = cs_json_path_index("variants", i++);
    const char *name = NULL;
    gboolean ok = cs_json_expect_object(v, e->file, path, cs_error_list_slot(problems)) &&
                  cs_json_check_keys(v, keys, e->file, path, cs_error_list_slot(problems)) &&
                  cs_json_read_string(v, "name", TRUE, &name, e->file, path,
                                      cs_error_list_slot(problems));
    if (ok) {
      char *npath = cs_json_path_key(path, "name");
      ok = check_unique(e, names, name, "variant", npath, cs_error_list_slot(problems));
      g_free(npath);
    }
    if (ok) {
      Level *lv = cs_experiment_level_new(name);
      g_ptr_array_add(e->variants, lv);
      read_edits(e, v, path, lv, cs_error_list_slot(problems));
    }
    g_free(path);
  }
  g_hash_table_destroy(names);
  return cs_error_list_finish(problems, e->file, "variants", error);
}

/* A value's label: a string as it is, anything else as compact JSON. */
static char *value_label(const cJSON *v)
{
  if (cJSON_IsString(v))
    return g_strdup(v->valuestring);
  char *text = cJSON_PrintUnformatted(v);
  char *label = g_strdup(text);
  cJSON_free(text);
  return label;
}

/* An axis of "path" and "values" (and optional "labels"). */
static gboolean read_value_axis(CsExperiment *e, const cJSON *ax, const char *path, Axis *a,
                                GError **error)
{
  const char *spath = NULL;
  if (!cs_json_read_string(ax, "path", TRUE, &spath, e->file, path, error))
    return FALSE;
  char *ppath = cs_json_path_key(path, "path");
  gboolean ok = check_edit_path(e, spath, ppath, error);
  g_free(ppath);
  if (!ok)
    return FALSE;
  const cJSON *values = cJSON_GetObjectItemCaseSensitive(ax, "values");
  const cJSON *labels = cJSON_GetObjectItemCaseSensitive(ax, "labels");
  char *vpath = cs_json_path_key(path, "values"), *lpath = cs_json_path_key(path, "labels");
  int n = cJSON_GetArraySize(values);
  if (!cJSON_IsArray(values) || n == 0)
    ok = cs_json_fail(error, e->file, vpath, "expected a non-empty array of values, got %s",
                      cs_json_type_name(values));
  else if (labels && (!cJSON_IsArray(labels) || cJSON_GetArraySize(labels) != n))
    ok = cs_json_fail(error, e->file, lpath, "expected an array of %d labels (one per value)",
                      n);
  GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
  const cJSON *v = ok ? values->child : NULL, *lab = labels ? labels->child : NULL; /* walked */
  for (int i = 0; ok && i < n; i++, v = v->next, lab = lab ? lab->next : NULL) {
    char *where = cs_json_path_index(vpath, i);
    char *label = NULL;
    if (labels) {
      char *lw = cs_json_path_index(lpath, i);
      const char *l = NULL;
      ok = cs_json_value_string(lab, &l, e->file, lw, error);
      label = g_strdup(l);
      g_free(lw);
    } else {
      label = value_label(v);
    }
    if (ok) {
      Level *lv = cs_experiment_level_new(label);
      g_ptr_array_add(a->levels, lv);
      char *text = cJSON_PrintUnformatted(v);
      add_edit(lv, spath, text, where);
      cJSON_free(text);
      ok = check_unique(e, names, lv->name, "label", labels ? lpath : vpath, error);
    }
    g_free(label);
    g_free(where);
  }
  g_hash_table_destroy(names);
  g_free(vpath);
  g_free(lpath);
  return ok;
}

/* An axis of "levels", each {"label", "set", "unset"}. */
static gboolean read_level_axis(CsExperiment *e, const cJSON *ax, const char *path, Axis *a,
                                GError **error)
{
  static const char *const keys[] = { "label", "set", "unset", NULL };
  const cJSON *levels = cJSON_GetObjectItemCaseSensitive(ax, "levels");
  char *lpath = cs_json_path_key(path, "levels");
  gboolean ok = TRUE;
  if (!cJSON_IsArray(levels) || cJSON_GetArraySize(levels) == 0)
    ok = cs_json_fail(error, e->file, lpath,
                      "expected a non-empty array of {\"label\", \"set\", \"unset\"}, got %s",
                      cs_json_type_name(levels));
  GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
  int i = 0;
  for (const cJSON *l = ok ? levels->child : NULL; ok && l; l = l->next) {
    char *where = cs_json_path_index(lpath, i++);
    const char *label = NULL;
    ok = cs_json_expect_object(l, e->file, where, error) &&
         cs_json_check_keys(l, keys, e->file, where, error) &&
         cs_json_read_string(l, "label", TRUE, &label, e->file, where, error);
    if (ok) {
      char *w = cs_json_path_key(where, "label");
      ok = check_unique(e, names, label, "label", w, error);
      g_free(w);
    }
    if (ok) {
      Level *lv = cs_experiment_level_new(label);
      g_ptr_array_add(a->levels, lv);
      ok = read_edits(e, l, where, lv, error);
    }
    g_free(where);
  }
  g_hash_table_destroy(names);
  g_free(lpath);
  return ok;
}

/* Column names of runs.csv that an axis may not take besides the metrics
 * (sweep_runs.c). */
static const char *const reserved_columns[] = { "run_id", "variant", "seed", "model", "status",
                                                "error", "warnings", NULL };

static gboolean read_axes(CsExperiment *e, const cJSON *root, GError **error)
{
  static const char *const keys[] = { "name", "path", "values", "labels", "levels", NULL };
  e->axes = g_ptr_array_new_with_free_func(cs_experiment_axis_free);
  const cJSON *axes = cJSON_GetObjectItemCaseSensitive(root, "axes");
  if (!axes)
    return TRUE;
  if (!cJSON_IsArray(axes))
    return cs_json_fail(error, e->file, "axes", "expected an array of axes, got %s",
                        cs_json_type_name(axes));
  GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
  /* Every axis is read: their problems are listed together. */
  CsErrorList *problems = cs_error_list_new();
  int i = 0;
  for (const cJSON *ax = axes->child; ax; ax = ax->next) {
    char *path = cs_json_path_index("axes", i++);
    const char *name = NULL;
    GError **error = cs_error_list_slot(problems);
    gboolean ok = cs_json_expect_object(ax, e->file, path, error) &&
                  cs_json_check_keys(ax, keys, e->file, path, error) &&
                  cs_json_read_string(ax, "name", TRUE, &name, e->file, path, error);
    char *npath = cs_json_path_key(path, "name");
    gboolean taken = ok && cs_runs_is_metric_name(name);
    for (int r = 0; ok && reserved_columns[r]; r++)
      taken = taken || strcmp(name, reserved_columns[r]) == 0;
    if (taken)
      ok = cs_json_fail(error, e->file, npath,
                        "\"%s\" is a column of runs.csv already; choose another name", name);
    if (ok)
      ok = check_unique(e, names, name, "axis", npath, error);
    g_free(npath);
    gboolean by_levels = ok && cJSON_HasObjectItem(ax, "levels");
    gboolean by_values = ok && (cJSON_HasObjectItem(ax, "path") ||
                                cJSON_HasObjectItem(ax, "values"));
    if (ok && by_levels == by_values)
      ok = cs_json_fail(error, e->file, path,
                        "expected either \"path\" and \"values\" or \"levels\"");
    if (ok && by_levels && cJSON_HasObjectItem(ax, "labels"))
      ok = cs_json_fail(error, e->file, path,
                        "\"labels\" goes with \"values\"; a level has its own \"label\"");
    if (ok) {
      Axis *a = g_new0(Axis, 1);
      a->name = g_strdup(name);
      a->levels = g_ptr_array_new_with_free_func(cs_experiment_level_free);
      g_ptr_array_add(e->axes, a);
      ok = by_levels ? read_level_axis(e, ax, path, a, error)
                     : read_value_axis(e, ax, path, a, error);
    }
    g_free(path);
  }
  g_hash_table_destroy(names);
  return cs_error_list_finish(problems, e->file, "axes", error);
}

static gboolean read_seeds(CsExperiment *e, const cJSON *root, GError **error)
{
  static const char *const keys[] = { "first", "count", NULL };
  /* 2^53 - 1: the largest integer the JSON readers take as exact. */
  const int64_t max_seed = 9007199254740991LL;
  e->seeds = g_array_new(FALSE, FALSE, sizeof(int64_t));
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "seeds");
  if (!s)
    return cs_json_fail(error, e->file, NULL,
                        "\"seeds\" is required: {\"first\": 1, \"count\": 5} or a list [1, 2, 3]");
  if (cJSON_IsArray(s)) {
    int n = cJSON_GetArraySize(s);
    if (n == 0)
      return cs_json_fail(error, e->file, "seeds", "expected at least one seed");
    /* A set of pointers into the sized array: a scan would be quadratic. */
    g_array_set_size(e->seeds, (guint)n);
    GHashTable *seen = g_hash_table_new(g_int64_hash, g_int64_equal);
    int i = 0;
    for (const cJSON *x = s->child; x; x = x->next, i++) {
      char *where = cs_json_path_index("seeds", i);
      gint64 *v = &g_array_index(e->seeds, gint64, i);
      gboolean ok = cs_json_value_int64(x, 0, max_seed, (int64_t *)v, e->file, where, error);
      if (ok && !g_hash_table_add(seen, v))
        ok = cs_json_fail(error, e->file, where, "seed %" G_GINT64_FORMAT " appears twice", *v);
      g_free(where);
      if (!ok) {
        g_hash_table_destroy(seen);
        return FALSE;
      }
    }
    g_hash_table_destroy(seen);
    return TRUE;
  }
  int64_t first = 0, count = 0;
  if (!cs_json_expect_object(s, e->file, "seeds", error) ||
      !cs_json_check_keys(s, keys, e->file, "seeds", error) ||
      !cs_json_read_int64(s, "first", TRUE, 0, max_seed, &first, e->file, "seeds", error) ||
      !cs_json_read_int64(s, "count", TRUE, 1, MAX_RUNS, &count, e->file, "seeds", error))
    return FALSE;
  if (first > max_seed - count + 1)
    return cs_json_fail(error, e->file, "seeds", "the last seed would pass 2^53");
  for (int64_t i = 0; i < count; i++) {
    int64_t v = first + i;
    g_array_append_val(e->seeds, v);
  }
  return TRUE;
}

static char *file_sha256(const char *text, gsize len)
{
  return g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, len);
}

/* "plugins": paths relative to the experiment file. */
static gboolean read_plugins(CsExperiment *e, const cJSON *root, GError **error)
{
  GPtrArray *paths = g_ptr_array_new();
  char *dir = g_path_get_dirname(e->file);
  gboolean ok = cs_plugins_field_read(root, e->file, dir, NULL, paths, NULL, error);
  g_ptr_array_add(paths, NULL);
  e->plugins = (char **)g_ptr_array_free(paths, FALSE);
  g_free(dir);
  return ok;
}

/* Reads the base scenario named by "base" (relative to the experiment file). */
static gboolean read_base(CsExperiment *e, const cJSON *root, GError **error)
{
  const char *base = NULL;
  if (!cs_json_read_string(root, "base", TRUE, &base, e->file, NULL, error))
    return FALSE;
  char *dir = g_path_get_dirname(e->file);
  char *path = g_path_is_absolute(base) ? g_strdup(base) : g_build_filename(dir, base, NULL);
  g_free(dir);
  gsize len = 0;
  GError *io = NULL;
  gboolean ok = cs_input_read(path, CS_INPUT_JSON_MAX_BYTES, &e->base_json, &len, &io);
  if (!ok) {
    /* io reads "PATH: cannot read: WHY"; the message names the field, so
     * only WHY is kept after the path. */
    const char *why = io->message;
    char *prefix = g_strconcat(path, ": cannot read: ", NULL);
    if (g_str_has_prefix(why, prefix))
      why += strlen(prefix);
    g_free(prefix);
    cs_json_fail(error, e->file, "base", "cannot read the base scenario %s: %s", path, why);
    g_error_free(io);
  } else {
    e->base_file = g_strdup(base);
    e->base_sha256 = file_sha256(e->base_json, len);
    e->base_dir = g_path_get_dirname(path);
    /* Parsed once here so that a base that is not JSON stops the sweep. */
    CsScenario *sc = cs_scenario_new_from_json(e->base_json, e->base_file, e->base_dir, error);
    ok = sc != NULL;
    cs_scenario_free(sc);
  }
  g_free(path);
  return ok;
}

CsExperiment *cs_experiment_load(const char *path, GError **error)
{
  static const char *const keys[] = { "name", "description", "base", "set", "unset",
                                      "variants", "axes", "seeds", "search", "plugins", NULL };
  char *text = NULL;
  gsize len = 0;
  if (!cs_input_read(path, CS_INPUT_JSON_MAX_BYTES, &text, &len, error))
    return NULL;
  CsExperiment *e = g_new0(CsExperiment, 1);
  e->file = g_strdup(path);
  e->sha256 = file_sha256(text, len);
  cJSON *root = cs_json_parse(text, path, error);
  g_free(text);
  const char *name = NULL;
  e->common = cs_experiment_level_new("");
  gboolean ok = root && cs_json_expect_object(root, path, NULL, error) &&
                cs_json_check_keys(root, keys, path, NULL, error);
  if (ok) {
    /* The sections are independent: each is read, and their problems are
     * listed together (a section's own list indented under it). */
    CsErrorList *problems = cs_error_list_new();
    cs_json_read_string(root, "name", FALSE, &name, path, NULL, cs_error_list_slot(problems));
    read_base(e, root, cs_error_list_slot(problems));
    read_edits(e, root, NULL, e->common, cs_error_list_slot(problems));
    read_variants(e, root, cs_error_list_slot(problems));
    read_axes(e, root, cs_error_list_slot(problems));
    read_seeds(e, root, cs_error_list_slot(problems));
    cs_search_options_read(root, path, &e->has_search, &e->search,
                           cs_error_list_slot(problems));
    read_plugins(e, root, cs_error_list_slot(problems));
    ok = cs_error_list_finish(problems, path, "the experiment", error);
  }
  if (ok) {
    char *bn = g_path_get_basename(path);
    e->name = g_strdup(name ? name : bn);
    g_free(bn);
    /* Each factor is below MAX_RUNS + 1 when multiplied, so nothing overflows. */
    int64_t points = 1, runs = 1;
    for (guint a = 0; a < e->axes->len; a++)
      points = MIN(points * ((Axis *)g_ptr_array_index(e->axes, a))->levels->len,
                   (int64_t)MAX_RUNS + 1);
    runs = MIN(points * (int64_t)MIN(e->variants->len, MAX_RUNS + 1), (int64_t)MAX_RUNS + 1);
    runs = MIN(runs * (int64_t)MIN(e->seeds->len, MAX_RUNS + 1), (int64_t)MAX_RUNS + 1);
    if (runs > MAX_RUNS)
      ok = cs_json_fail(error, path, NULL, "the grid has more than %d runs", MAX_RUNS);
    e->n_points = (int)points;
    e->n_runs = (int)runs;
  }
  cJSON_Delete(root);
  /* Every edit of every (variant, axis point) must apply: build each once. */
  int *levels = g_new0(int, e->axes ? e->axes->len + 1 : 1);
  int n_seeds = ok ? (int)e->seeds->len : 1;
  for (int run = 0; ok && run < e->n_runs; run += n_seeds) {
    int variant, seed;
    cs_experiment_run_coords(e, run, &variant, levels, &seed);
    CsScenario *sc = cs_experiment_build(e, variant, levels, e->n_runs > n_seeds, error);
    ok = sc != NULL;
    cs_scenario_free(sc);
  }
  g_free(levels);
  if (!ok) {
    cs_experiment_free(e);
    return NULL;
  }
  return e;
}
