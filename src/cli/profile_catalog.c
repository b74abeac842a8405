/* The data files of the profile subcommand: the Catalog of every profile,
 * interference and iGniter file found in the data directories' profiles/ or
 * given with --profile, read before anything is printed; and the queries
 * list and show make over it (GPU types, models, the files that cover a
 * model). */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd_profile.h"
#include "common/data_files.h"
#include "common/input_file.h"
#include "common/json_input.h"

static void data_file_free(DataFile *f)
{
  g_free(f->name);
  g_free(f->path);
  g_free(f->canonical);
  g_free(f->source);
  cs_interference_set_free(f->interference);
  cs_igniter_coefs_free(f->igniter);
  g_free(f);
}

void catalog_clear(Catalog *cat)
{
  if (cat->files)
    g_ptr_array_free(cat->files, TRUE);
  if (cat->sets)
    g_ptr_array_free(cat->sets, TRUE);
  g_strfreev(cat->dirs);
  memset(cat, 0, sizeof *cat);
}

char *stem_of(const char *path)
{
  char *base = g_path_get_basename(path);
  if (g_str_has_suffix(base, ".json"))
    base[strlen(base) - strlen(".json")] = '\0';
  return base;
}

/* g_ptr_array_sort comparators: the elements are pointers to the things compared. */
int compare_str_ptr(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int compare_file_ptr(const void *a, const void *b)
{
  return strcmp((*(const DataFile *const *)a)->name, (*(const DataFile *const *)b)->name);
}

static int compare_gpu_ptr(const void *a, const void *b)
{
  return strcmp((*(const CsGpuType *const *)a)->name, (*(const CsGpuType *const *)b)->name);
}

gboolean fail(GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, msg);
  g_free(msg);
  return FALSE;
}

/* Reads one file into f. A file of another format is skipped (*skipped set)
 * when it was found in a data directory (calibration data lives there too)
 * and an error when it was given. Profiles found in a data directory each
 * get a set of their own, since each is meant to be usable alone; given
 * profiles share one set, loaded in order, as a scenario's "profiles" list
 * does (a file may use GPU types declared by one given before it). */
static gboolean read_file(Catalog *cat, DataFile *f, CsProfileSet **given_set, gboolean *skipped,
                          GError **error)
{
  *skipped = FALSE;
  cJSON *root = cs_json_load_file(f->path, error);
  if (!root)
    return FALSE;
  const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
  const char *format = cJSON_IsString(fmt) ? fmt->valuestring : "";
  const cJSON *src = cJSON_GetObjectItemCaseSensitive(root, "source");
  f->source = g_strdup(cJSON_IsString(src) ? src->valuestring : "");
  gboolean ok = TRUE;
  if (strcmp(format, CS_PROFILE_FORMAT) == 0) {
    f->kind = KIND_PROFILE;
    CsProfileSet *set = f->given ? *given_set : NULL;
    if (!set) {
      set = cs_profile_set_new();
      g_ptr_array_add(cat->sets, set);
      if (f->given)
        *given_set = set;
    }
    f->gpu_first = cs_profile_set_n_gpu_types(set);
    f->model_first = cs_profile_set_n_models(set);
    ok = cs_profile_set_load_file(set, f->path, error);
    f->gpu_end = cs_profile_set_n_gpu_types(set);
    f->model_end = cs_profile_set_n_models(set);
    f->set = set;
  } else if (strcmp(format, CS_INTERFERENCE_FORMAT) == 0) {
    f->kind = KIND_INTERFERENCE;
    f->interference = cs_interference_set_load_file(f->path, error);
    ok = f->interference != NULL;
  } else if (strcmp(format, CS_IGNITER_FORMAT) == 0) {
    f->kind = KIND_IGNITER;
    f->igniter = cs_igniter_coefs_load_json(root, f->path, error);
    ok = f->igniter != NULL;
  } else if (f->given) {
    ok = cs_json_fail(error, f->path, "format",
                      "expected \"%s\", \"%s\" or \"%s\", got %s%s%s", CS_PROFILE_FORMAT,
                      CS_INTERFERENCE_FORMAT, CS_IGNITER_FORMAT, *format ? "\"" : "",
                      *format ? format : "no format", *format ? "\"" : "");
  } else {
    *skipped = TRUE;
  }
  cJSON_Delete(root);
  return ok;
}

/* Path of a --profile argument: the path itself when it exists (a directory
 * too: its reader then says it is not a regular file, rather than "not
 * found"), else a name in the data directories' profiles/ (as a scenario's
 * "profiles" entries). NULL with error set when neither exists. */
static char *resolve_given(const char *arg, GError **error)
{
  /* A broken link is the user's file too: its reader names what is wrong. */
  if (g_file_test(arg, G_FILE_TEST_EXISTS) || cs_input_broken_link(arg))
    return g_strdup(arg);
  char *p = g_path_is_absolute(arg) ? NULL : cs_data_file_find("profiles", arg);
  if (!p)
    fail(error,
         "--profile %s: file not found (looked at the path and in the data directories' "
         "profiles/; set CLUSTERSIM_DATA_DIR to add one)",
         arg);
  return p;
}

/* Reads the .json files of the data directories' profiles/ (the first directory having a
 * name wins, as in cs_data_file_find) and the given files. */
gboolean catalog_load(Catalog *cat, char **given, GError **error)
{
  cat->files = g_ptr_array_new_with_free_func((GDestroyNotify)data_file_free);
  cat->sets = g_ptr_array_new_with_free_func((GDestroyNotify)cs_profile_set_free);
  cat->dirs = cs_data_dirs();

  /* Given files first, so that the same file found in a data directory is
   * listed once, as given. */
  GPtrArray *given_files = g_ptr_array_new();
  for (int i = 0; given && given[i]; i++) {
    char *path = resolve_given(given[i], error);
    if (!path) {
      g_ptr_array_set_free_func(given_files, (GDestroyNotify)data_file_free);
      g_ptr_array_free(given_files, TRUE);
      return FALSE;
    }
    char *canonical = g_canonicalize_filename(path, NULL);
    gboolean dup = FALSE;
    for (guint k = 0; k < given_files->len && !dup; k++)
      dup = strcmp(((DataFile *)g_ptr_array_index(given_files, k))->canonical, canonical) == 0;
    if (dup) {
      g_free(path);
      g_free(canonical);
      continue;
    }
    DataFile *f = g_new0(DataFile, 1);
    f->name = stem_of(path);
    f->path = path;
    f->canonical = canonical;
    f->given = TRUE;
    g_ptr_array_add(given_files, f);
  }

  GPtrArray *found = g_ptr_array_new();
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (int d = 0; cat->dirs[d]; d++) {
    char *sub = g_build_filename(cat->dirs[d], "profiles", NULL);
    GDir *dir = g_dir_open(sub, 0, NULL); /* a directory that does not exist has no files */
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *entry;
    while (dir && (entry = g_dir_read_name(dir)))
      if (g_str_has_suffix(entry, ".json"))
        g_ptr_array_add(names, g_strdup(entry));
    if (dir)
      g_dir_close(dir);
    g_ptr_array_sort(names, compare_str_ptr);
    for (guint k = 0; k < names->len; k++) {
      const char *n = g_ptr_array_index(names, k);
      char *path = g_build_filename(sub, n, NULL);
      if (!g_file_test(path, G_FILE_TEST_IS_REGULAR) || g_hash_table_contains(seen, n)) {
        g_free(path);
        continue;
      }
      g_hash_table_add(seen, g_strdup(n));
      char *canonical = g_canonicalize_filename(path, NULL);
      gboolean dup = FALSE;
      for (guint j = 0; j < given_files->len && !dup; j++)
        dup = strcmp(((DataFile *)g_ptr_array_index(given_files, j))->canonical, canonical) == 0;
      if (dup) {
        g_free(path);
        g_free(canonical);
        continue;
      }
      DataFile *f = g_new0(DataFile, 1);
      f->name = stem_of(n);
      f->path = path;
      f->canonical = canonical;
      g_ptr_array_add(found, f);
    }
    g_ptr_array_free(names, TRUE);
    g_free(sub);
  }
  g_hash_table_destroy(seen);
  /* Names are unique across directories, so sorting by name is total. */
  g_ptr_array_sort(found, compare_file_ptr);
  for (guint k = 0; k < given_files->len; k++)
    g_ptr_array_add(found, g_ptr_array_index(given_files, k));
  g_ptr_array_free(given_files, TRUE);

  gboolean ok = TRUE;
  CsProfileSet *given_set = NULL;
  for (guint k = 0; k < found->len; k++) {
    DataFile *f = g_ptr_array_index(found, k);
    gboolean skipped = FALSE;
    if (ok)
      ok = read_file(cat, f, &given_set, &skipped, error);
    if (ok && !skipped)
      g_ptr_array_add(cat->files, f);
    else
      data_file_free(f);
  }
  g_ptr_array_free(found, TRUE);
  return ok;
}

/* ---- Queries over the catalog -------------------------------------------- */

/* The GPU types of a profile file, sorted by name: those it declares and
 * those its models use (a given file may use types declared by one given
 * before it). g_ptr_array_free(.., TRUE). */
GPtrArray *file_gpu_types(const DataFile *f)
{
  GPtrArray *out = g_ptr_array_new();
  for (int i = f->gpu_first; i < f->gpu_end; i++)
    g_ptr_array_add(out, (gpointer)cs_profile_set_gpu_type_at(f->set, i));
  for (int i = f->model_first; i < f->model_end; i++) {
    const CsGpuType *g = cs_profile_set_gpu_type(f->set, cs_profile_set_model(f->set, i)->gpu_type);
    if (!g_ptr_array_find(out, g, NULL))
      g_ptr_array_add(out, (gpointer)g);
  }
  g_ptr_array_sort(out, compare_gpu_ptr);
  return out;
}

/* The (GPU type, model) profiles of a profile file on gpu_type (NULL: any),
 * with model == NULL or equal to model, sorted by GPU type then model. */
static int compare_profile_ptr(const void *a, const void *b)
{
  const CsModelProfile *x = *(const CsModelProfile *const *)a;
  const CsModelProfile *y = *(const CsModelProfile *const *)b;
  int c = strcmp(x->gpu_type, y->gpu_type);
  return c ? c : strcmp(x->model, y->model);
}

GPtrArray *file_profiles(const DataFile *f, const char *gpu_type, const char *model)
{
  GPtrArray *out = g_ptr_array_new();
  for (int i = f->model_first; i < f->model_end; i++) {
    const CsModelProfile *p = cs_profile_set_model(f->set, i);
    if ((!gpu_type || strcmp(p->gpu_type, gpu_type) == 0) &&
        (!model || strcmp(p->model, model) == 0))
      g_ptr_array_add(out, (gpointer)p);
  }
  g_ptr_array_sort(out, compare_profile_ptr);
  return out;
}

/* Number of distinct model names of a profile file (on gpu_type, or any when NULL). */
int file_n_models(const DataFile *f, const char *gpu_type)
{
  GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
  for (int i = f->model_first; i < f->model_end; i++) {
    const CsModelProfile *p = cs_profile_set_model(f->set, i);
    if (!gpu_type || strcmp(p->gpu_type, gpu_type) == 0)
      g_hash_table_add(names, p->model);
  }
  int n = (int)g_hash_table_size(names);
  g_hash_table_destroy(names);
  return n;
}

/* Model names of an interference or iGniter file, sorted. g_free the array only. */
GPtrArray *file_model_names(const DataFile *f)
{
  GPtrArray *out = g_ptr_array_new();
  if (f->kind == KIND_INTERFERENCE)
    for (int i = 0; i < cs_interference_set_n_models(f->interference); i++)
      g_ptr_array_add(out, (gpointer)cs_interference_set_model_name(f->interference, i));
  else if (f->kind == KIND_IGNITER)
    for (int i = 0; i < f->igniter->n_models; i++)
      g_ptr_array_add(out, f->igniter->models[i].name);
  g_ptr_array_sort(out, compare_str_ptr);
  return out;
}

/* Models that have a measured pair (a slowdown or a scale) with model index
 * i (either order) in an interference file, sorted. */
GPtrArray *interference_pairs(const CsInterferenceSet *s, int i)
{
  GPtrArray *out = g_ptr_array_new();
  for (int j = 0; j < cs_interference_set_n_models(s); j++)
    if (!isnan(cs_interference_pair(s, i, j)) || !isnan(cs_interference_pair(s, j, i)) ||
        !isnan(cs_interference_pair_scale(s, i, j)) || !isnan(cs_interference_pair_scale(s, j, i)))
      g_ptr_array_add(out, (gpointer)cs_interference_set_model_name(s, j));
  g_ptr_array_sort(out, compare_str_ptr);
  return out;
}

/* iGniter files that measured model on gpu_type (a clustersim-igniter file
 * names the GPU type it was measured on). */
GPtrArray *igniter_files_for(const Catalog *cat, const char *gpu_type, const char *model)
{
  GPtrArray *out = g_ptr_array_new();
  for (guint k = 0; k < cat->files->len; k++) {
    const DataFile *f = g_ptr_array_index(cat->files, k);
    if (f->kind == KIND_IGNITER && strcmp(f->igniter->gpu_type, gpu_type) == 0 &&
        cs_igniter_coefs_find(f->igniter, model))
      g_ptr_array_add(out, (gpointer)f);
  }
  return out;
}

/* Interference files that have model (they are not tied to a GPU type:
 * a scenario's cluster.interference picks the one that applies). */
GPtrArray *interference_files_for(const Catalog *cat, const char *model)
{
  GPtrArray *out = g_ptr_array_new();
  for (guint k = 0; k < cat->files->len; k++) {
    const DataFile *f = g_ptr_array_index(cat->files, k);
    if (f->kind == KIND_INTERFERENCE && cs_interference_set_find(f->interference, model) >= 0)
      g_ptr_array_add(out, (gpointer)f);
  }
  return out;
}
