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
 * models by strcmp) so the output does not depend on directory order.
 *
 * This file is the command and `profile list`; reading the files, the
 * shared formatting and `profile show` are in profile_catalog.c,
 * profile_format.c and profile_show.c (cmd_profile.h). */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cmd_profile.h"

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
  /* show PATH reads PATH as if given with --profile (a path that is not a
   * regular file too, so that the reader says what it is). */
  if (is_show && g_file_test(argv[1], G_FILE_TEST_EXISTS) &&
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
  if (argc >= 2 && strcmp(argv[1], "measure") == 0)
    return cmd_profile_measure(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "import") == 0)
    return cmd_profile_import(argc - 1, argv + 1);
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    puts("Usage: clustersim profile list [--json] [--profile FILE ...]\n"
         "       clustersim profile show NAME [--json] [--profile FILE ...]\n"
         "       clustersim profile measure --backend NAME --like PROFILE --models A,B\n"
         "                                  --gpu-type NAME -o DIR\n"
         "       clustersim profile import FILE.csv ... -o OUT.json [--interference OUT2.json]\n"
         "(COMMAND --help for details)");
    return 0;
  }
  return cli_fail("clustersim profile",
                  "expected a subcommand: list, show, measure or import (see clustersim profile --help)");
}
