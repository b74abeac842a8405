/* Experiment files: reading, checking and expanding the grid; see
 * experiment.h and docs/experiments.md ("Sweeps"). */
#include "experiment.h"

#include <string.h>

#include "common/input_file.h"
#include "common/json_input.h"
#include "experiment_edit.h"
#include "policies/registry_internal.h"
#include "scenario/scenario.h"
#include "sim/rng.h"
#include "search.h"
#include "sweep_runs.h"

/* Largest grid accepted: beyond it a typo (a seed count of 10^9) is likelier
 * than an intent, and run numbers stay far from int overflow. */
#define MAX_RUNS 10000000

/* One edit of the scenario. */
typedef struct {
  char *path;  /* scenario path; "[*]" steps expand over arrays */
  char *value; /* JSON text to set; NULL: unset */
  char *where; /* JSON path of the edit in the experiment file, for messages */
} Edit;

/* A variant, an axis level or the top-level edits: a name and its edits,
 * unsets before sets. */
typedef struct {
  char *name;
  GPtrArray *edits; /* Edit* */
} Level;

typedef struct {
  char *name;
  GPtrArray *levels; /* Level* */
} Axis;

struct CsExperiment {
  char *file;          /* the experiment file as given, for messages */
  char *name;
  char *sha256;        /* of the experiment file's bytes */
  char *base_file;     /* "base" as written: the scenario's name in messages */
  char *base_sha256;   /* of the base scenario file's bytes */
  char *base_dir;      /* resolves the base scenario's own relative file names */
  char *base_json;     /* the base scenario's text, parsed again for every run */
  Level *common;       /* top-level "set" and "unset" */
  GPtrArray *variants; /* Level* */
  GPtrArray *axes;     /* Axis* */
  GArray *seeds;       /* int64_t */
  gboolean has_search; /* every run is a goodput search with these options */
  CsGoodputSearchOptions search;
  int n_points;        /* product of the axes' level counts */
  int n_runs;
  char **plugins;       /* "plugins", absolute (experiment_plugins.c loads them) */
  CsRegistry *registry; /* given to every run's scenario, or NULL */
};

static void edit_free(gpointer p)
{
  Edit *ed = p;
  g_free(ed->path);
  g_free(ed->value);
  g_free(ed->where);
  g_free(ed);
}

static Level *level_new(const char *name)
{
  Level *lv = g_new0(Level, 1);
  lv->name = g_strdup(name);
  lv->edits = g_ptr_array_new_with_free_func(edit_free);
  return lv;
}

static void level_free(gpointer p)
{
  Level *lv = p;
  if (!lv)
    return;
  g_free(lv->name);
  g_ptr_array_unref(lv->edits);
  g_free(lv);
}

static void axis_free(gpointer p)
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
  level_free(e->common);
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
  e->variants = g_ptr_array_new_with_free_func(level_free);
  const cJSON *vs = cJSON_GetObjectItemCaseSensitive(root, "variants");
  if (!vs) {
    g_ptr_array_add(e->variants, level_new("base")); /* the base scenario as it is */
    return TRUE;
  }
  if (!cJSON_IsArray(vs) || cJSON_GetArraySize(vs) == 0)
    return cs_json_fail(error, e->file, "variants",
                        "expected a non-empty array of {\"name\", \"set\", \"unset\"}, got %s",
                        cs_json_type_name(vs));
  GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
  gboolean ok = TRUE;
  int i = 0;
  for (const cJSON *v = vs->child; ok && v; v = v->next) {
    char *path = cs_json_path_index("variants", i++);
    const char *name = NULL;
    ok = cs_json_expect_object(v, e->file, path, error) &&
         cs_json_check_keys(v, keys, e->file, path, error) &&
         cs_json_read_string(v, "name", TRUE, &name, e->file, path, error);
    if (ok) {
      char *npath = cs_json_path_key(path, "name");
      ok = check_unique(e, names, name, "variant", npath, error);
      g_free(npath);
    }
    if (ok) {
      Level *lv = level_new(name);
      g_ptr_array_add(e->variants, lv);
      ok = read_edits(e, v, path, lv, error);
    }
    g_free(path);
  }
  g_hash_table_destroy(names);
  return ok;
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
      Level *lv = level_new(label);
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
      Level *lv = level_new(label);
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
  e->axes = g_ptr_array_new_with_free_func(axis_free);
  const cJSON *axes = cJSON_GetObjectItemCaseSensitive(root, "axes");
  if (!axes)
    return TRUE;
  if (!cJSON_IsArray(axes))
    return cs_json_fail(error, e->file, "axes", "expected an array of axes, got %s",
                        cs_json_type_name(axes));
  GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
  gboolean ok = TRUE;
  int i = 0;
  for (const cJSON *ax = axes->child; ok && ax; ax = ax->next) {
    char *path = cs_json_path_index("axes", i++);
    const char *name = NULL;
    ok = cs_json_expect_object(ax, e->file, path, error) &&
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
      a->levels = g_ptr_array_new_with_free_func(level_free);
      g_ptr_array_add(e->axes, a);
      ok = by_levels ? read_level_axis(e, ax, path, a, error)
                     : read_value_axis(e, ax, path, a, error);
    }
    g_free(path);
  }
  g_hash_table_destroy(names);
  return ok;
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
static void run_coords(const CsExperiment *e, int run, int *variant, int *levels, int *seed)
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

static CsScenario *build(const CsExperiment *e, int variant, const int *levels,
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
  e->common = level_new("");
  gboolean ok = root && cs_json_expect_object(root, path, NULL, error) &&
                cs_json_check_keys(root, keys, path, NULL, error) &&
                cs_json_read_string(root, "name", FALSE, &name, path, NULL, error) &&
                read_base(e, root, error) && read_edits(e, root, NULL, e->common, error) &&
                read_variants(e, root, error) && read_axes(e, root, error) &&
                read_seeds(e, root, error) &&
                cs_search_options_read(root, path, &e->has_search, &e->search, error) &&
                read_plugins(e, root, error);
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
    run_coords(e, run, &variant, levels, &seed);
    CsScenario *sc = build(e, variant, levels, e->n_runs > n_seeds, error);
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
  run_coords(e, run, &variant, levels, &seed);
  return cs_experiment_variant_name(e, variant);
}

const char *cs_experiment_run_label(const CsExperiment *e, int run, int axis)
{
  if (run < 0 || run >= cs_experiment_n_runs(e) || axis < 0 || axis >= (int)e->axes->len)
    return NULL;
  int *levels = g_newa(int, e->axes->len + 1), variant, seed;
  run_coords(e, run, &variant, levels, &seed);
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
  run_coords(e, run, &variant, levels, &seed);
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
  run_coords(e, run, &variant, levels, &seed);
  return build(e, variant, levels, TRUE, error);
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
