/* clustersim profile list [--json] [--profile FILE ...]
 * clustersim profile show NAME [--json] [--profile FILE ...]
 *
 * What data a researcher can run with: the profile files in the data
 * directories (and any given with --profile), their GPU types and models, and
 * per (GPU type, model) which inputs the policies need are there: Creq (AO,
 * WAO, WSM), Mreq, interference data, iGniter measurements.
 *
 * Everything is read before anything is printed, so a bad file gives exit 2
 * and an empty stdout. Listings are sorted (files by name, GPU types and
 * models by strcmp) so the output does not depend on directory order. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "common/data_files.h"
#include "common/json_input.h"
#include "profiles/igniter_coef.h"
#include "profiles/interference.h"
#include "profiles/profile.h"

static const char *const metric_names[CS_CREQ_N_METRICS] = { "ao", "wao", "wsm" };

typedef enum { KIND_PROFILE, KIND_INTERFERENCE, KIND_IGNITER } FileKind;

/* One data file the command read. */
typedef struct {
  char *name;        /* file name without ".json": what NAME and the tables use */
  char *path;        /* where it was read */
  char *canonical;   /* absolute path, to tell the same file found twice */
  gboolean given;    /* from --profile (or a path given to show) */
  FileKind kind;
  char *source;      /* the file's "source" text, "" when it has none */
  /* KIND_PROFILE: the set holding it and its GPU types / models in that set
   * (indices [first, end), see cs_profile_set_n_gpu_types). */
  const CsProfileSet *set;
  int gpu_first, gpu_end, model_first, model_end;
  CsInterferenceSet *interference; /* KIND_INTERFERENCE, owned */
  CsIgniterCoefs *igniter;         /* KIND_IGNITER, owned */
} DataFile;

/* Everything read: data-directory files sorted by name, then given files in
 * the order given. */
typedef struct {
  GPtrArray *files;    /* DataFile*, owned */
  GPtrArray *sets;     /* CsProfileSet*, owned */
  char **dirs;         /* the data directories searched */
} Catalog;

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

static void catalog_clear(Catalog *cat)
{
  if (cat->files)
    g_ptr_array_free(cat->files, TRUE);
  if (cat->sets)
    g_ptr_array_free(cat->sets, TRUE);
  g_strfreev(cat->dirs);
  memset(cat, 0, sizeof *cat);
}

static char *stem_of(const char *path)
{
  char *base = g_path_get_basename(path);
  if (g_str_has_suffix(base, ".json"))
    base[strlen(base) - strlen(".json")] = '\0';
  return base;
}

/* g_ptr_array_sort comparators: the elements are pointers to the things compared. */
static int compare_str_ptr(const void *a, const void *b)
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

static gboolean fail(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean fail(GError **error, const char *fmt, ...)
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

/* Path of a --profile argument: the path itself when it is a file, else a
 * name in the data directories' profiles/ (as a scenario's "profiles"
 * entries). NULL with error set when neither exists. */
static char *resolve_given(const char *arg, GError **error)
{
  if (g_file_test(arg, G_FILE_TEST_IS_REGULAR))
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
static gboolean catalog_load(Catalog *cat, char **given, GError **error)
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
static GPtrArray *file_gpu_types(const DataFile *f)
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

static GPtrArray *file_profiles(const DataFile *f, const char *gpu_type, const char *model)
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
static int file_n_models(const DataFile *f, const char *gpu_type)
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
static GPtrArray *file_model_names(const DataFile *f)
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

/* Models that have a measured pair slowdown with model index i (either
 * order) in an interference file, sorted. */
static GPtrArray *interference_pairs(const CsInterferenceSet *s, int i)
{
  GPtrArray *out = g_ptr_array_new();
  for (int j = 0; j < cs_interference_set_n_models(s); j++)
    if (!isnan(cs_interference_pair(s, i, j)) || !isnan(cs_interference_pair(s, j, i)))
      g_ptr_array_add(out, (gpointer)cs_interference_set_model_name(s, j));
  g_ptr_array_sort(out, compare_str_ptr);
  return out;
}

/* iGniter files that measured model on gpu_type (a clustersim-igniter file
 * names the GPU type it was measured on). */
static GPtrArray *igniter_files_for(const Catalog *cat, const char *gpu_type, const char *model)
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
static GPtrArray *interference_files_for(const Catalog *cat, const char *model)
{
  GPtrArray *out = g_ptr_array_new();
  for (guint k = 0; k < cat->files->len; k++) {
    const DataFile *f = g_ptr_array_index(cat->files, k);
    if (f->kind == KIND_INTERFERENCE && cs_interference_set_find(f->interference, model) >= 0)
      g_ptr_array_add(out, (gpointer)f);
  }
  return out;
}

/* ---- Formatting helpers --------------------------------------------------- */

/* Characters of s as a terminal shows them: UTF-8 characters, or bytes when
 * s is not valid UTF-8 (the JSON parser does not check, and the UTF-8
 * functions must not walk past the end of a broken sequence). */
static int display_width(const char *s)
{
  return g_utf8_validate(s, -1, NULL) ? (int)g_utf8_strlen(s, -1) : (int)strlen(s);
}

static char *one_line(const char *text, int width)
{
  /* Sources are paragraphs; a listing gets the start of the first line. */
  char *raw = g_strndup(text, strcspn(text, "\n"));
  char *line = g_utf8_make_valid(raw, -1);
  g_free(raw);
  if (g_utf8_strlen(line, -1) <= width)
    return line;
  char *cut = g_utf8_substring(line, 0, width - 3);
  char *out = g_strconcat(cut, "...", NULL);
  g_free(cut);
  g_free(line);
  return out;
}

/* Batch sizes as "4,8,16" with runs of 3 or more consecutive sizes as "1-32". */
static void append_batches(GString *s, const int *b, int n)
{
  for (int i = 0; i < n;) {
    int j = i; /* last of the run of consecutive sizes starting at i */
    while (j + 1 < n && b[j + 1] == b[j] + 1)
      j++;
    if (s->len)
      g_string_append_c(s, ',');
    if (j - i >= 2) {
      g_string_append_printf(s, "%d-%d", b[i], b[j]);
      i = j + 1;
    } else {
      g_string_append_printf(s, "%d", b[i]);
      i++;
    }
  }
}

/* "all", "some" or "none" of n points having a value. */
static const char *coverage(int have, int n)
{
  return n > 0 && have == n ? "all" : have > 0 ? "some" : "none";
}

static int count_mreq(const CsModelProfile *p)
{
  int n = 0;
  for (int i = 0; i < p->n_points; i++)
    n += !isnan(p->points[i].mreq_pct);
  return n;
}

static int count_creq(const CsModelProfile *p, int m)
{
  int n = 0;
  for (int i = 0; i < p->n_points; i++)
    n += !isnan(p->points[i].creq_pct[m]);
  return n;
}

/* "80 SMs, 16 GiB; DESCRIPTION" (descriptions are sentences: they go last). */
static void format_gpu(GString *s, const CsGpuType *g)
{
  if (g->sm_count > 0)
    g_string_append_printf(s, "%d SMs", g->sm_count);
  else
    g_string_append(s, "SM count unknown");
  if (g->memory_bytes > 0)
    g_string_append_printf(s, ", %.4g GiB", (double)g->memory_bytes / (1024.0 * 1024 * 1024));
  else
    g_string_append(s, ", memory unknown");
  if (*g->description)
    g_string_append_printf(s, "; %s", g->description);
}

/* Smallest and largest profiled latency, ms (n_points > 0). */
static void latency_range_ms(const CsModelProfile *p, double *lo, double *hi)
{
  int64_t a = p->points[0].latency_ns, b = a;
  for (int i = 1; i < p->n_points; i++) {
    a = MIN(a, p->points[i].latency_ns);
    b = MAX(b, p->points[i].latency_ns);
  }
  *lo = a / 1e6;
  *hi = b / 1e6;
}

/* A text table: rows of cells, printed with columns padded to their widest
 * cell (the last column is not padded). */
typedef struct {
  GPtrArray *rows; /* char** rows, owned */
  int n_cols;
} Table;

static void table_init(Table *t, int n_cols)
{
  t->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  t->n_cols = n_cols;
}

/* Takes over the n_cols cells (g_strdup'd or g_strdup_printf'd). */
static void table_add(Table *t, char **cells)
{
  char **row = g_new0(char *, t->n_cols + 1);
  for (int c = 0; c < t->n_cols; c++)
    row[c] = cells[c];
  g_ptr_array_add(t->rows, row);
}

static void table_print(Table *t, GString *out)
{
  int *w = g_new0(int, t->n_cols);
  for (guint r = 0; r < t->rows->len; r++) {
    char **row = g_ptr_array_index(t->rows, r);
    for (int c = 0; c < t->n_cols; c++)
      w[c] = MAX(w[c], display_width(row[c]));
  }
  for (guint r = 0; r < t->rows->len; r++) {
    char **row = g_ptr_array_index(t->rows, r);
    GString *line = g_string_new(NULL);
    for (int c = 0; c < t->n_cols; c++) {
      g_string_append(line, row[c]);
      if (c < t->n_cols - 1)
        for (int k = display_width(row[c]); k < w[c] + 2; k++)
          g_string_append_c(line, ' ');
    }
    while (line->len && line->str[line->len - 1] == ' ')
      g_string_truncate(line, line->len - 1);
    g_string_append_printf(out, "%s\n", line->str);
    g_string_free(line, TRUE);
  }
  g_free(w);
  g_ptr_array_free(t->rows, TRUE);
  t->rows = NULL;
}

static cJSON *json_strings(GPtrArray *names)
{
  cJSON *a = cJSON_CreateArray();
  for (guint i = 0; i < names->len; i++)
    cJSON_AddItemToArray(a, cJSON_CreateString(g_ptr_array_index(names, i)));
  return a;
}

static const char *kind_name(FileKind k)
{
  return k == KIND_PROFILE ? "profile" : k == KIND_INTERFERENCE ? "interference" : "igniter";
}

/* The fields every file has in JSON: name, path, kind, given, source. */
static cJSON *json_file_head(const DataFile *f)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", f->name);
  cJSON_AddStringToObject(o, "path", f->path);
  cJSON_AddStringToObject(o, "kind", kind_name(f->kind));
  cJSON_AddBoolToObject(o, "given", f->given);
  cJSON_AddStringToObject(o, "source", f->source);
  return o;
}

static cJSON *json_gpu_type(const CsGpuType *g)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", g->name);
  cJSON_AddStringToObject(o, "description", g->description);
  if (g->sm_count > 0)
    cJSON_AddNumberToObject(o, "sm_count", g->sm_count);
  else
    cJSON_AddNullToObject(o, "sm_count");
  if (g->memory_bytes > 0)
    cJSON_AddNumberToObject(o, "memory_bytes", (double)g->memory_bytes);
  else
    cJSON_AddNullToObject(o, "memory_bytes");
  return o;
}

/* A file as `profile list` describes it. */
static cJSON *json_file(const DataFile *f)
{
  cJSON *o = json_file_head(f);
  if (f->kind == KIND_PROFILE) {
    GPtrArray *gpus = file_gpu_types(f);
    cJSON *a = cJSON_AddArrayToObject(o, "gpu_types");
    for (guint i = 0; i < gpus->len; i++) {
      const CsGpuType *g = g_ptr_array_index(gpus, i);
      cJSON *go = json_gpu_type(g);
      cJSON_AddNumberToObject(go, "models", file_n_models(f, g->name));
      cJSON_AddItemToArray(a, go);
    }
    g_ptr_array_free(gpus, TRUE);
    cJSON_AddNumberToObject(o, "models", file_n_models(f, NULL));
  } else {
    if (f->kind == KIND_INTERFERENCE)
      cJSON_AddStringToObject(o, "description", cs_interference_set_description(f->interference));
    else
      cJSON_AddStringToObject(o, "gpu_type", f->igniter->gpu_type);
    GPtrArray *names = file_model_names(f);
    cJSON_AddItemToObject(o, "models", json_strings(names));
    g_ptr_array_free(names, TRUE);
  }
  return o;
}

/* ---- profile list --------------------------------------------------------- */

static void list_text(const Catalog *cat, GString *out)
{
  Table t;
  table_init(&t, 4);
  table_add(&t, (char *[]){ g_strdup("NAME"), g_strdup("GPU TYPES (MODELS)"), g_strdup("MODELS"),
                            g_strdup("SOURCE") });
  int n_profiles = 0;
  for (guint k = 0; k < cat->files->len; k++) {
    const DataFile *f = g_ptr_array_index(cat->files, k);
    if (f->kind != KIND_PROFILE)
      continue;
    n_profiles++;
    GPtrArray *gpus = file_gpu_types(f);
    GString *types = g_string_new(NULL);
    for (guint i = 0; i < gpus->len; i++) {
      const CsGpuType *g = g_ptr_array_index(gpus, i);
      g_string_append_printf(types, "%s%s (%d)", i ? ", " : "", g->name, file_n_models(f, g->name));
    }
    if (gpus->len == 0)
      g_string_append(types, "-");
    g_ptr_array_free(gpus, TRUE);
    table_add(&t, (char *[]){ g_strdup_printf("%s%s", f->name, f->given ? " *" : ""),
                              g_string_free(types, FALSE),
                              g_strdup_printf("%d", file_n_models(f, NULL)),
                              one_line(f->source, 72) });
  }
  if (n_profiles)
    table_print(&t, out);
  else {
    g_ptr_array_free(t.rows, TRUE);
    g_string_append(out, "no profile files found\n");
  }

  gboolean header = FALSE;
  for (guint k = 0; k < cat->files->len; k++) {
    const DataFile *f = g_ptr_array_index(cat->files, k);
    if (f->kind == KIND_PROFILE)
      continue;
    if (!header)
      g_string_append(out, "\nInterference and iGniter files:\n");
    header = TRUE;
    GPtrArray *names = file_model_names(f);
    GString *models = g_string_new(NULL);
    for (guint i = 0; i < names->len; i++)
      g_string_append_printf(models, "%s%s", i ? ", " : "", (char *)g_ptr_array_index(names, i));
    if (f->kind == KIND_INTERFERENCE)
      g_string_append_printf(out, "  %s%s: interference data for %s; measured on %s\n", f->name,
                             f->given ? " *" : "", models->str,
                             *cs_interference_set_description(f->interference)
                               ? cs_interference_set_description(f->interference)
                               : "(no description)");
    else
      g_string_append_printf(out, "  %s%s: iGniter measurements for %s on GPU type %s\n",
                             f->name, f->given ? " *" : "", models->str, f->igniter->gpu_type);
    g_string_free(models, TRUE);
    g_ptr_array_free(names, TRUE);
  }

  g_string_append(out, "\nSearched (the first directory that has a name wins):\n");
  for (int d = 0; cat->dirs[d]; d++) {
    char *p = g_build_filename(cat->dirs[d], "profiles", NULL);
    g_string_append_printf(out, "  %s%s\n", p,
                           g_file_test(p, G_FILE_TEST_IS_DIR) ? "" : " (does not exist)");
    g_free(p);
  }
  for (guint k = 0; k < cat->files->len; k++) {
    const DataFile *f = g_ptr_array_index(cat->files, k);
    if (f->given)
      g_string_append_printf(out, "* given: %s\n", f->path);
  }
  g_string_append(out, "Details: clustersim profile show NAME (a file, model or GPU type).\n");
}

static cJSON *list_json(const Catalog *cat)
{
  cJSON *root = cJSON_CreateObject();
  cJSON *dirs = cJSON_AddArrayToObject(root, "data_dirs");
  for (int d = 0; cat->dirs[d]; d++) {
    char *p = g_build_filename(cat->dirs[d], "profiles", NULL);
    cJSON_AddItemToArray(dirs, cJSON_CreateString(p));
    g_free(p);
  }
  cJSON *files = cJSON_AddArrayToObject(root, "files");
  for (guint k = 0; k < cat->files->len; k++)
    cJSON_AddItemToArray(files, json_file(g_ptr_array_index(cat->files, k)));
  return root;
}

/* ---- profile show --------------------------------------------------------- */

/* One (GPU type, model) row of show. */
static void profile_row_text(const Catalog *cat, const CsModelProfile *p, Table *t)
{
  GString *batches = g_string_new(NULL);
  int *b = g_new(int, MAX(p->n_points, 1));
  for (int i = 0; i < p->n_points; i++)
    b[i] = p->points[i].batch;
  append_batches(batches, b, p->n_points);
  g_free(b);
  if (p->n_points == 0)
    g_string_append(batches, "-");

  char *latency;
  double lo, hi;
  if (p->n_points > 0) {
    latency_range_ms(p, &lo, &hi);
    latency = g_strdup_printf("%g-%g", lo, hi);
  } else
    latency = g_strdup_printf("%.4g*b+%.4g", p->alpha_ns / 1e6, p->beta_ns / 1e6);

  GString *creq = g_string_new(NULL);
  for (int m = 0; m < CS_CREQ_N_METRICS; m++) {
    int n = count_creq(p, m);
    if (n == 0)
      continue;
    g_string_append_printf(creq, "%s%s", creq->len ? "," : "", metric_names[m]);
    if (n < p->n_points)
      g_string_append_printf(creq, "(%d/%d)", n, p->n_points);
  }
  if (!creq->len)
    g_string_append(creq, "-");
  int nm = count_mreq(p);
  char *mreq = nm == 0 ? g_strdup("-")
               : nm == p->n_points ? g_strdup("yes")
                                   : g_strdup_printf("%d/%d", nm, p->n_points);

  GPtrArray *inter = interference_files_for(cat, p->model);
  GString *is = g_string_new(NULL);
  for (guint i = 0; i < inter->len; i++)
    g_string_append_printf(is, "%s%s", i ? "," : "", ((DataFile *)g_ptr_array_index(inter, i))->name);
  if (!is->len)
    g_string_append(is, "-");
  g_ptr_array_free(inter, TRUE);

  GPtrArray *ign = igniter_files_for(cat, p->gpu_type, p->model);
  GString *gs = g_string_new(NULL);
  if (ign->len) {
    g_string_append(gs, "measured (");
    for (guint i = 0; i < ign->len; i++)
      g_string_append_printf(gs, "%s%s", i ? "," : "", ((DataFile *)g_ptr_array_index(ign, i))->name);
    g_string_append(gs, ")");
  } else {
    g_string_append(gs, "derived on demand");
  }
  g_ptr_array_free(ign, TRUE);

  table_add(t, (char *[]){
    g_strdup(p->model), g_string_free(batches, FALSE), latency,
    isnan(p->slo_ms) ? g_strdup("-") : g_strdup_printf("%g", p->slo_ms),
    p->input_bytes < 0 ? g_strdup("-") : g_strdup_printf("%" G_GINT64_FORMAT, p->input_bytes),
    p->output_bytes < 0 ? g_strdup("-") : g_strdup_printf("%" G_GINT64_FORMAT, p->output_bytes),
    g_string_free(creq, FALSE), mreq, g_string_free(is, FALSE), g_string_free(gs, FALSE) });
}

static cJSON *json_batches_with(const CsModelProfile *p, int metric /* -1: Mreq */)
{
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < p->n_points; i++) {
    double v = metric < 0 ? p->points[i].mreq_pct : p->points[i].creq_pct[metric];
    if (!isnan(v))
      cJSON_AddItemToArray(a, cJSON_CreateNumber(p->points[i].batch));
  }
  return a;
}

static cJSON *profile_row_json(const Catalog *cat, const DataFile *f, const CsModelProfile *p)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "file", f->name);
  cJSON_AddStringToObject(o, "gpu_type", p->gpu_type);
  cJSON_AddStringToObject(o, "model", p->model);
  cJSON *b = cJSON_AddArrayToObject(o, "batch_sizes");
  for (int i = 0; i < p->n_points; i++)
    cJSON_AddItemToArray(b, cJSON_CreateNumber(p->points[i].batch));
  if (p->n_points > 0) {
    double lo, hi;
    latency_range_ms(p, &lo, &hi);
    cJSON *l = cJSON_AddObjectToObject(o, "latency_ms");
    cJSON_AddNumberToObject(l, "min", lo);
    cJSON_AddNumberToObject(l, "max", hi);
  } else {
    cJSON_AddNullToObject(o, "latency_ms");
  }
  cJSON *lin = cJSON_AddObjectToObject(o, "linear");
  cJSON_AddNumberToObject(lin, "alpha_ms", p->alpha_ns / 1e6);
  cJSON_AddNumberToObject(lin, "beta_ms", p->beta_ns / 1e6);
  cJSON_AddBoolToObject(lin, "fitted", p->linear_fitted);
  if (isnan(p->slo_ms))
    cJSON_AddNullToObject(o, "slo_ms");
  else
    cJSON_AddNumberToObject(o, "slo_ms", p->slo_ms);
  if (p->input_bytes < 0)
    cJSON_AddNullToObject(o, "input_bytes");
  else
    cJSON_AddNumberToObject(o, "input_bytes", (double)p->input_bytes);
  if (p->output_bytes < 0)
    cJSON_AddNullToObject(o, "output_bytes");
  else
    cJSON_AddNumberToObject(o, "output_bytes", (double)p->output_bytes);

  cJSON *fields = cJSON_AddObjectToObject(o, "fields");
  cJSON_AddStringToObject(fields, "mreq", coverage(count_mreq(p), p->n_points));
  for (int m = 0; m < CS_CREQ_N_METRICS; m++) {
    char *k = g_strdup_printf("creq_%s", metric_names[m]);
    cJSON_AddStringToObject(fields, k, coverage(count_creq(p, m), p->n_points));
    g_free(k);
  }
  cJSON_AddItemToObject(o, "mreq_batch_sizes", json_batches_with(p, -1));
  cJSON *cb = cJSON_AddObjectToObject(o, "creq_batch_sizes");
  for (int m = 0; m < CS_CREQ_N_METRICS; m++)
    cJSON_AddItemToObject(cb, metric_names[m], json_batches_with(p, m));

  cJSON *ia = cJSON_AddArrayToObject(o, "interference");
  GPtrArray *inter = interference_files_for(cat, p->model);
  for (guint k = 0; k < inter->len; k++) {
    const DataFile *fi = g_ptr_array_index(inter, k);
    int i = cs_interference_set_find(fi->interference, p->model);
    cJSON *io = cJSON_CreateObject();
    cJSON_AddStringToObject(io, "file", fi->name);
    cJSON_AddBoolToObject(io, "share_table", cs_interference_has_share_table(fi->interference, i));
    GPtrArray *pairs = interference_pairs(fi->interference, i);
    cJSON_AddItemToObject(io, "pairs_with", json_strings(pairs));
    g_ptr_array_free(pairs, TRUE);
    cJSON_AddItemToArray(ia, io);
  }
  g_ptr_array_free(inter, TRUE);

  cJSON *ig = cJSON_AddObjectToObject(o, "igniter");
  GPtrArray *ign = igniter_files_for(cat, p->gpu_type, p->model);
  cJSON_AddStringToObject(ig, "inputs", ign->len ? "measured" : "derived on demand");
  cJSON *ifs = cJSON_AddArrayToObject(ig, "files");
  for (guint k = 0; k < ign->len; k++)
    cJSON_AddItemToArray(ifs, cJSON_CreateString(((DataFile *)g_ptr_array_index(ign, k))->name));
  g_ptr_array_free(ign, TRUE);
  return o;
}

/* Prints (text) or adds (JSON) the profiles of a profile file that match
 * gpu_type / model (NULL: any), one table per GPU type. Returns the number of
 * GPU types shown (a type without models is shown too); adds the number of
 * profiles shown to *n_rows. */
static int show_profiles(const Catalog *cat, const DataFile *f, const char *gpu_type,
                         const char *model, GString *out, cJSON *rows, cJSON *gpu_list,
                         int *n_rows)
{
  int n = 0;
  GPtrArray *gpus = file_gpu_types(f);
  for (guint g = 0; g < gpus->len; g++) {
    const CsGpuType *gt = g_ptr_array_index(gpus, g);
    GPtrArray *profs = file_profiles(f, gt->name, model);
    if ((gpu_type && strcmp(gt->name, gpu_type) != 0) || (model && profs->len == 0)) {
      g_ptr_array_free(profs, TRUE);
      continue;
    }
    n++;
    if (gpu_list)
      cJSON_AddItemToArray(gpu_list, json_gpu_type(gt));
    if (out) {
      GString *desc = g_string_new(NULL);
      format_gpu(desc, gt);
      g_string_append_printf(out, "\nGPU type %s (%s): %s\n", gt->name, f->name, desc->str);
      g_string_free(desc, TRUE);
    }
    Table t;
    table_init(&t, 10);
    table_add(&t, (char *[]){ g_strdup("MODEL"), g_strdup("BATCH SIZES"), g_strdup("LATENCY ms"),
                              g_strdup("SLO ms"), g_strdup("IN B"), g_strdup("OUT B"),
                              g_strdup("CREQ"), g_strdup("MREQ"), g_strdup("INTERFERENCE"),
                              g_strdup("IGNITER INPUTS") });
    for (guint i = 0; i < profs->len; i++) {
      const CsModelProfile *p = g_ptr_array_index(profs, i);
      if (rows)
        cJSON_AddItemToArray(rows, profile_row_json(cat, f, p));
      else
        profile_row_text(cat, p, &t);
      (*n_rows)++;
    }
    if (out && profs->len)
      table_print(&t, out);
    else if (out)
      g_string_append(out, "(no models)\n");
    if (t.rows)
      g_ptr_array_free(t.rows, TRUE);
    g_ptr_array_free(profs, TRUE);
  }
  g_ptr_array_free(gpus, TRUE);
  return n;
}

/* Text of an interference or iGniter file. */
static void show_other_text(const DataFile *f, GString *out)
{
  GPtrArray *names = file_model_names(f);
  if (f->kind == KIND_INTERFERENCE) {
    g_string_append_printf(out, "interference data (%s), measured on %s\n",
                           CS_INTERFERENCE_FORMAT,
                           *cs_interference_set_description(f->interference)
                             ? cs_interference_set_description(f->interference)
                             : "(no description)");
    g_string_append(out, "Not tied to a GPU type: a scenario's cluster.interference chooses the "
                         "file that applies.\n\n");
    Table t;
    table_init(&t, 3);
    table_add(&t, (char *[]){ g_strdup("MODEL"), g_strdup("SHARE TABLE"),
                              g_strdup("MEASURED PAIRS WITH") });
    for (guint k = 0; k < names->len; k++) {
      int i = cs_interference_set_find(f->interference, g_ptr_array_index(names, k));
      GPtrArray *pairs = interference_pairs(f->interference, i);
      g_ptr_array_add(pairs, NULL);
      char *joined = pairs->len > 1 ? g_strjoinv(",", (char **)pairs->pdata) : g_strdup("-");
      g_ptr_array_free(pairs, TRUE);
      table_add(&t, (char *[]){ g_strdup(g_ptr_array_index(names, k)),
                                g_strdup(cs_interference_has_share_table(f->interference, i)
                                           ? "yes" : "-"),
                                joined });
    }
    table_print(&t, out);
  } else {
    g_string_append_printf(out, "iGniter measurements (%s) on GPU type %s\nmodels:",
                           CS_IGNITER_FORMAT, f->igniter->gpu_type);
    for (guint k = 0; k < names->len; k++)
      g_string_append_printf(out, "%s %s", k ? "," : "", (char *)g_ptr_array_index(names, k));
    g_string_append_c(out, '\n');
  }
  g_ptr_array_free(names, TRUE);
}

/* Every file, model and GPU type name of the catalog, for suggestions. */
static GPtrArray *all_names(const Catalog *cat)
{
  GPtrArray *out = g_ptr_array_new();
  for (guint k = 0; k < cat->files->len; k++) {
    const DataFile *f = g_ptr_array_index(cat->files, k);
    g_ptr_array_add(out, f->name);
    if (f->kind == KIND_PROFILE) {
      for (int i = f->gpu_first; i < f->gpu_end; i++)
        g_ptr_array_add(out, cs_profile_set_gpu_type_at(f->set, i)->name);
      for (int i = f->model_first; i < f->model_end; i++)
        g_ptr_array_add(out, cs_profile_set_model(f->set, i)->model);
    } else {
      GPtrArray *names = file_model_names(f);
      for (guint i = 0; i < names->len; i++)
        g_ptr_array_add(out, g_ptr_array_index(names, i));
      g_ptr_array_free(names, TRUE);
    }
  }
  return out;
}

static int show(const Catalog *cat, const char *name, gboolean json, GString *out,
                cJSON **json_out, GError **error)
{
  /* A file: its name, or the path it was read from. */
  char *canonical = g_file_test(name, G_FILE_TEST_IS_REGULAR)
                      ? g_canonicalize_filename(name, NULL) : NULL;
  char *stem = !strchr(name, G_DIR_SEPARATOR) && g_str_has_suffix(name, ".json")
                 ? stem_of(name) : g_strdup(name);
  GPtrArray *files = g_ptr_array_new();
  for (guint k = 0; k < cat->files->len; k++) {
    const DataFile *f = g_ptr_array_index(cat->files, k);
    if (strcmp(f->name, stem) == 0 || (canonical && strcmp(f->canonical, canonical) == 0))
      g_ptr_array_add(files, (gpointer)f);
  }
  g_free(canonical);
  g_free(stem);

  cJSON *root = json ? cJSON_CreateObject() : NULL;
  cJSON *rows = NULL, *gpu_list = NULL, *file_list = NULL;
  if (root) {
    cJSON_AddStringToObject(root, "query", name);
    file_list = cJSON_AddArrayToObject(root, "files");
    gpu_list = cJSON_AddArrayToObject(root, "gpu_types");
    rows = cJSON_AddArrayToObject(root, "profiles");
  }
  int n = 0, n_rows = 0;
  for (guint k = 0; k < files->len; k++) {
    const DataFile *f = g_ptr_array_index(files, k);
    n++;
    if (root)
      cJSON_AddItemToArray(file_list, json_file(f));
    else
      g_string_append_printf(out, "%s%s: %s\nsource: %s\n", k ? "\n" : "", f->name, f->path,
                             f->source);
    if (f->kind == KIND_PROFILE)
      show_profiles(cat, f, NULL, NULL, root ? NULL : out, rows, gpu_list, &n_rows);
    else if (!root)
      show_other_text(f, out);
  }
  const char *matched = "file";
  if (files->len == 0) {
    /* A model or a GPU type, in every profile file that has it. */
    int as_gpu = 0, as_model = 0;
    for (guint k = 0; k < cat->files->len; k++) {
      const DataFile *f = g_ptr_array_index(cat->files, k);
      if (f->kind != KIND_PROFILE)
        continue;
      int ng = show_profiles(cat, f, name, NULL, root ? NULL : out, rows, gpu_list, &n_rows);
      int nm = show_profiles(cat, f, NULL, name, root ? NULL : out, rows, gpu_list, &n_rows);
      if ((ng || nm) && root)
        cJSON_AddItemToArray(file_list, json_file(f));
      as_gpu += ng;
      as_model += nm;
    }
    n = as_gpu + as_model;
    matched = as_gpu && as_model ? "gpu type and model" : as_gpu ? "gpu type" : "model";
  }
  g_ptr_array_free(files, TRUE);

  GPtrArray *names = all_names(cat);
  if (n == 0) {
    char *hint = cs_did_you_mean(name, (const char *const *)names->pdata, (int)names->len);
    fail(error, "no profile file, model or GPU type called \"%s\"%s (clustersim profile list "
                "shows the files)", name, hint);
    g_free(hint);
    g_ptr_array_free(names, TRUE);
    cJSON_Delete(root);
    return EXIT_BAD_INPUT;
  }
  /* Names are case-sensitive: point out the ones that differ only in case. */
  g_ptr_array_sort(names, compare_str_ptr);
  GPtrArray *similar = g_ptr_array_new();
  for (guint i = 0; i < names->len; i++) {
    const char *s = g_ptr_array_index(names, i);
    if (g_ascii_strcasecmp(s, name) == 0 && strcmp(s, name) != 0 &&
        (similar->len == 0 || strcmp(g_ptr_array_index(similar, similar->len - 1), s) != 0))
      g_ptr_array_add(similar, (gpointer)s);
  }
  if (root) {
    cJSON_AddStringToObject(root, "matched", matched);
    cJSON_AddItemToObject(root, "differs_only_in_case", json_strings(similar));
  } else if (similar->len) {
    g_string_append(out, "\nNames are case-sensitive; also known:");
    for (guint i = 0; i < similar->len; i++)
      g_string_append_printf(out, "%s \"%s\"", i ? "," : "", (char *)g_ptr_array_index(similar, i));
    g_string_append_c(out, '\n');
  }
  g_ptr_array_free(similar, TRUE);
  g_ptr_array_free(names, TRUE);
  if (!root && n_rows)
    g_string_append(out,
                    "\nCREQ: compute requirement metrics given (n/m: at n of m batch sizes); "
                    "MREQ: memory requirement.\n"
                    "INTERFERENCE: interference files with this model (not tied to a GPU type; "
                    "a scenario's cluster.interference picks one).\n"
                    "IGNITER INPUTS: measured = a clustersim-igniter file covers this model on "
                    "this GPU type; otherwise derived on demand from the simulator's GPU model.\n");
  *json_out = root;
  return 0;
}

/* ---- Command -------------------------------------------------------------- */

static int profile_cmd(int argc, char **argv, gboolean is_show)
{
  const char *prog = is_show ? "clustersim profile show" : "clustersim profile list";
  gboolean json = FALSE;
  char **given = NULL;
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the same as a JSON document", NULL },
    { "profile", 'p', 0, G_OPTION_ARG_FILENAME_ARRAY, &given,
      "Also read FILE (a path, or a name in the data directories; profile, interference or "
      "iGniter file; repeatable; profiles given are loaded in order into one set)", "FILE" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new(
    is_show ? "NAME - details of a profile file, a model or a GPU type"
            : "- the profile files found in the data directories");
  g_option_context_set_summary(ctx,
    is_show
      ? "NAME is a profile file (name or path), else a model or a GPU type (case-sensitive).\n"
        "Prints per (GPU type, model): batch sizes profiled, latency range, SLO, payload sizes,\n"
        "and which inputs the policies need are there: Creq (AO/WAO/WSM), Mreq, interference\n"
        "data, iGniter measurements. Unknown names get the closest known ones."
      : "Lists every profile file in the data directories' profiles/ ($CLUSTERSIM_DATA_DIR, the\n"
        "installed data, the source tree's data) with its GPU types, number of models and\n"
        "source, then the interference and iGniter files. Formats: docs/profiles.md.");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  int status = 0;
  Catalog cat = { 0 };
  GString *out = g_string_new(NULL);
  cJSON *root = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (is_show && argc != 2) {
    status = cli_fail(prog, "expected exactly one NAME: a profile file, model or GPU type (see --help)");
    goto out;
  }
  if (!is_show && argc != 1) {
    status = cli_fail(prog, "expected no arguments (see --help)");
    goto out;
  }
  /* show PATH reads PATH as if given with --profile. */
  if (is_show && g_file_test(argv[1], G_FILE_TEST_IS_REGULAR) &&
      (strchr(argv[1], G_DIR_SEPARATOR) || g_str_has_suffix(argv[1], ".json"))) {
    int n = given ? (int)g_strv_length(given) : 0;
    given = g_renew(char *, given, n + 2);
    given[n] = g_strdup(argv[1]);
    given[n + 1] = NULL;
  }
  if (!catalog_load(&cat, given, &err)) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  if (is_show) {
    status = show(&cat, argv[1], json, out, &root, &err);
    if (status) {
      cli_fail(prog, err->message);
      goto out;
    }
  } else if (json) {
    root = list_json(&cat);
  } else {
    list_text(&cat, out);
  }
  if (root) {
    char *text = cJSON_Print(root);
    printf("%s\n", text);
    cJSON_free(text);
  } else {
    /* Sections start with a blank line to separate them; not the first. */
    fputs(out->str + (out->str[0] == '\n'), stdout);
  }
out:
  cJSON_Delete(root);
  g_string_free(out, TRUE);
  catalog_clear(&cat);
  g_clear_error(&err);
  g_strfreev(given);
  g_option_context_free(ctx);
  return status;
}

int cmd_profile(int argc, char **argv)
{
  if (argc >= 2 && strcmp(argv[1], "list") == 0)
    return profile_cmd(argc - 1, argv + 1, FALSE);
  if (argc >= 2 && strcmp(argv[1], "show") == 0)
    return profile_cmd(argc - 1, argv + 1, TRUE);
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    puts("Usage: clustersim profile list [--json] [--profile FILE ...]\n"
         "       clustersim profile show NAME [--json] [--profile FILE ...]\n"
         "(COMMAND --help for details)");
    return 0;
  }
  return cli_fail("clustersim profile",
                  "expected a subcommand: list or show (see clustersim profile --help)");
}
