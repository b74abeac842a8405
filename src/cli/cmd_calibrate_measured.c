/* clustersim calibrate --measured FILE.csv ... --profile NAME [--interference FILE]
 *                      [--gpu-type T] [--json]
 *
 * Finds the files (a profile by path, shipped name or GPU type; its
 * interference file by the naming convention of docs/gpu-model.md, "Scoring
 * measured rows"; the shipped pair data for the constant baseline), then
 * src/calibrate/calibrate_measured.h does the scoring. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cmd_calibrate.h"
#include "common/data_files.h"
#include "common/json_input.h"
#include "calibrate/calibrate_measured.h"

/* A profile file that declares GPU type name, searched in the data
 * directories' profiles/ (sorted, the first directory that has the name
 * wins as for any data file). NULL when none does. */
static char *find_by_gpu_type(const char *name, GError **error)
{
  char **dirs = cs_data_dirs();
  char *found = NULL;
  for (int d = 0; dirs[d] && !found; d++) {
    char *sub = g_build_filename(dirs[d], "profiles", NULL);
    GDir *dir = g_dir_open(sub, 0, NULL);
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *e;
    while (dir && (e = g_dir_read_name(dir)))
      if (g_str_has_suffix(e, ".json"))
        g_ptr_array_add(names, g_strdup(e));
    if (dir)
      g_dir_close(dir);
    g_ptr_array_sort(names, (GCompareFunc)(void *)g_strcmp0);
    for (guint i = 0; i < names->len && !found; i++) {
      char *path = g_build_filename(sub, (char *)names->pdata[i], NULL);
      cJSON *root = cs_json_load_file(path, NULL);
      const cJSON *fmt = root ? cJSON_GetObjectItemCaseSensitive(root, "format") : NULL;
      const cJSON *types = root ? cJSON_GetObjectItemCaseSensitive(root, "gpu_types") : NULL;
      const cJSON *t;
      if (cJSON_IsString(fmt) && strcmp(fmt->valuestring, "clustersim-profile") == 0)
        cJSON_ArrayForEach(t, types)
        {
          const cJSON *n = cJSON_GetObjectItemCaseSensitive(t, "name");
          if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
            found = g_strdup(path);
        }
      cJSON_Delete(root);
      g_free(path);
    }
    g_ptr_array_free(names, TRUE);
    g_free(sub);
  }
  g_strfreev(dirs);
  if (!found)
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "--profile %s: no such file, shipped profile or GPU type of one (clustersim "
                "profile list shows them)", name);
  return found;
}

/* DIR/STEM_interference.json, else DIR/STEM-without-_profile.json. NULL
 * when neither exists. */
static char *interference_beside(const char *profile_path)
{
  char *dir = g_path_get_dirname(profile_path);
  char *base = g_path_get_basename(profile_path);
  if (g_str_has_suffix(base, ".json"))
    base[strlen(base) - 5] = '\0';
  char *a = g_strdup_printf("%s_interference.json", base);
  char *path = g_build_filename(dir, a, NULL);
  g_free(a);
  if (!g_file_test(path, G_FILE_TEST_IS_REGULAR) && g_str_has_suffix(base, "_profile")) {
    g_free(path);
    base[strlen(base) - strlen("_profile")] = '\0';
    a = g_strdup_printf("%s.json", base);
    path = g_build_filename(dir, a, NULL);
    g_free(a);
  }
  if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
    g_free(path);
    path = NULL;
  }
  g_free(dir);
  g_free(base);
  return path;
}

/* The shipped pair data: *_pairs.csv of the first data directory with a
 * measured/ directory, sorted. */
static GPtrArray *shipped_pairs(GError **error)
{
  GPtrArray *files = g_ptr_array_new_with_free_func((GDestroyNotify)cs_measured_file_free);
  char **dirs = cs_data_dirs();
  for (int d = 0; dirs[d]; d++) {
    char *sub = g_build_filename(dirs[d], "measured", NULL);
    GDir *dir = g_dir_open(sub, 0, NULL);
    if (!dir) {
      g_free(sub);
      continue;
    }
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *e;
    while ((e = g_dir_read_name(dir)))
      if (g_str_has_suffix(e, "_pairs.csv"))
        g_ptr_array_add(names, g_strdup(e));
    g_dir_close(dir);
    g_ptr_array_sort(names, (GCompareFunc)(void *)g_strcmp0);
    for (guint i = 0; i < names->len; i++) {
      char *path = g_build_filename(sub, (char *)names->pdata[i], NULL);
      CsMeasuredFile *f = cs_measured_file_load(path, error);
      g_free(path);
      if (!f) {
        g_ptr_array_free(names, TRUE);
        g_ptr_array_free(files, TRUE);
        g_free(sub);
        g_strfreev(dirs);
        return NULL;
      }
      g_ptr_array_add(files, f);
    }
    g_ptr_array_free(names, TRUE);
    g_free(sub);
    break;
  }
  g_strfreev(dirs);
  return files;
}

int cmd_calibrate_measured(const CalibrateMeasuredArgs *a)
{
  const char *prog = "clustersim calibrate";
  GError *err = NULL;
  int status = 0;
  char *ppath = NULL, *ipath = NULL, *gpu = NULL;
  CsProfileSet *prof = NULL;
  CsInterferenceSet *tables = NULL;
  CsScoreResult *res = NULL;
  GPtrArray *files = g_ptr_array_new_with_free_func((GDestroyNotify)cs_measured_file_free);
  GPtrArray *shipped = NULL;
  if (!a->profile) {
    status = cli_fail(prog, "--measured needs --profile NAME (a profile file, shipped profile "
                      "or GPU type)");
    goto out;
  }
  if (g_file_test(a->profile, G_FILE_TEST_EXISTS))
    ppath = g_strdup(a->profile);
  else if (!(ppath = cs_data_file_find("profiles", a->profile))) {
    ppath = find_by_gpu_type(a->profile, &err);
    if (!ppath) {
      status = cli_fail(prog, err->message);
      goto out;
    }
    if (!a->gpu_type)
      gpu = g_strdup(a->profile);
  }
  prof = cs_profile_set_new();
  if (!cs_profile_set_load_file(prof, ppath, &err)) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  if (a->gpu_type)
    gpu = g_strdup(a->gpu_type);
  if (!gpu) {
    if (cs_profile_set_n_gpu_types(prof) != 1) {
      char *m = g_strdup_printf("--profile %s declares %d GPU types: name one with --gpu-type",
                                a->profile, cs_profile_set_n_gpu_types(prof));
      status = cli_fail(prog, m);
      g_free(m);
      goto out;
    }
    gpu = g_strdup(cs_gpu_type_name(cs_profile_set_gpu_type_at(prof, 0)));
  }
  if (!cs_profile_set_gpu_type(prof, gpu)) {
    char *m = g_strdup_printf("--gpu-type %s: not a GPU type of %s", gpu, ppath);
    status = cli_fail(prog, m);
    g_free(m);
    goto out;
  }
  if (a->interference)
    ipath = g_file_test(a->interference, G_FILE_TEST_EXISTS)
              ? g_strdup(a->interference) : cs_data_file_find("profiles", a->interference);
  else
    ipath = interference_beside(ppath);
  if (a->interference && !ipath)
    ipath = g_strdup(a->interference); /* the loader says what is wrong */
  if (ipath && !(tables = cs_interference_set_load_file(ipath, &err))) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  for (char **m = a->measured; *m; m++) {
    CsMeasuredFile *f = cs_measured_file_load(*m, &err);
    if (!f) {
      status = cli_fail("clustersim", err->message);
      goto out;
    }
    g_ptr_array_add(files, f);
  }
  shipped = shipped_pairs(&err);
  if (!shipped) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  CsScoreOptions opt = { .files = (CsMeasuredFile *const *)files->pdata,
                         .n_files = (int)files->len, .profile = prof, .gpu_type = gpu,
                         .tables = tables,
                         .shipped = (CsMeasuredFile *const *)shipped->pdata,
                         .n_shipped = (int)shipped->len, .gamma = a->gamma };
  res = cs_score_measured(&opt, &err);
  if (!res) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (res->gpus->len > 1) {
    GString *g = g_string_new(NULL);
    for (guint i = 0; i < res->gpus->len; i++)
      g_string_append_printf(g, "%s\"%s\"", i ? ", " : "", (char *)res->gpus->pdata[i]);
    fprintf(stderr, "%s: warning: the scored rows were measured on %u GPUs (%s), all predicted "
            "with one profile (GPU type %s)\n", prog, res->gpus->len, g->str, gpu);
    g_string_free(g, TRUE);
  }
  if (a->json) {
    cJSON *root = cs_score_json(res);
    cJSON *in = cJSON_CreateObject();
    cJSON *mf = cJSON_AddArrayToObject(in, "measured");
    for (guint i = 0; i < files->len; i++) {
      cJSON *o = cJSON_CreateObject();
      char *b = g_path_get_basename(((CsMeasuredFile *)files->pdata[i])->path);
      cJSON_AddStringToObject(o, "file", b);
      cJSON_AddStringToObject(o, "sha256", ((CsMeasuredFile *)files->pdata[i])->sha256);
      g_free(b);
      cJSON_AddItemToArray(mf, o);
    }
    char *pb = g_path_get_basename(ppath);
    cJSON_AddStringToObject(in, "profile", pb);
    g_free(pb);
    cJSON_AddStringToObject(in, "gpu_type", gpu);
    if (ipath) {
      char *ib = g_path_get_basename(ipath);
      cJSON_AddStringToObject(in, "interference", ib);
      g_free(ib);
    } else
      cJSON_AddNullToObject(in, "interference");
    cJSON_AddItemToObject(root, "inputs", in);
    char *text = cs_json_print_exact(root);
    printf("%s\n", text);
    g_free(text);
    cJSON_Delete(root);
  } else {
    GString *h = g_string_new("Measured rows scored with the GPU model: ");
    for (guint i = 0; i < files->len; i++) {
      char *b = g_path_get_basename(((CsMeasuredFile *)files->pdata[i])->path);
      g_string_append_printf(h, "%s%s", i ? ", " : "", b);
      g_free(b);
    }
    char *pb = g_path_get_basename(ppath), *ib = ipath ? g_path_get_basename(ipath) : NULL;
    g_string_append_printf(h, "\nprofile %s (GPU type %s), interference %s", pb, gpu,
                           ib ? ib : "none (the built-in fallback model, no share tables)");
    g_free(pb);
    g_free(ib);
    cs_score_print(res, h->str, stdout);
    g_string_free(h, TRUE);
  }
out:
  cs_score_result_free(res);
  cs_interference_set_free(tables);
  cs_profile_set_free(prof);
  g_ptr_array_free(files, TRUE);
  if (shipped)
    g_ptr_array_free(shipped, TRUE);
  g_clear_error(&err);
  g_free(ppath);
  g_free(ipath);
  g_free(gpu);
  return status;
}
