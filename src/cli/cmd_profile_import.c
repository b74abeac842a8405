/* clustersim profile import FILE.csv ... -o OUT.json [--interference OUT2.json]
 *
 * Measured rows (the tidy CSV of docs/profiles.md, "Measured data") to a
 * profile and an interference file (src/profiles/measured_import.h), each
 * with a provenance CSV beside it (OUT.sources.csv). Everything is built and
 * checked in memory first: a bad input gives exit 2 and writes nothing. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "common/data_files.h"
#include "common/json_input.h"
#include "profiles/measured_import.h"

/* OUT.json -> OUT.sources.csv (OUT.sources.csv appended when no .json). */
static char *sidecar_path(const char *out)
{
  if (g_str_has_suffix(out, ".json"))
    return g_strdup_printf("%.*s.sources.csv", (int)(strlen(out) - 5), out);
  return g_strdup_printf("%s.sources.csv", out);
}

/* Writes every (path, text) pair through temporary files renamed at the
 * end, so an error leaves none of them half written. */
static gboolean write_all(char **paths, char **texts, int n, GError **error)
{
  char *tmp[8];
  int done = 0;
  gboolean ok = TRUE;
  for (; ok && done < n; done++) {
    tmp[done] = g_strdup_printf("%s.tmp-import", paths[done]);
    ok = g_file_set_contents(tmp[done], texts[done], -1, error);
    if (!ok)
      g_free(tmp[done]);
  }
  if (!ok)
    done--;
  for (int i = 0; i < done; i++) {
    if (ok && g_rename(tmp[i], paths[i]) != 0) {
      g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: cannot write: %s",
                  paths[i], g_strerror(errno));
      ok = FALSE;
    }
    g_remove(tmp[i]);
    g_free(tmp[i]);
  }
  return ok;
}

static char *print_json(const cJSON *root)
{
  char *t = cs_json_print_exact(root);
  char *s = g_strdup_printf("%s\n", t);
  g_free(t);
  return s;
}

int cmd_profile_import(int argc, char **argv)
{
  const char *prog = "clustersim profile import";
  char *output = NULL, *interference = NULL, *fallback_from = NULL, *variant_by = NULL;
  char **gpu_types = NULL;
  gboolean quiet = FALSE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Profile file to write (required); its provenance goes to OUT.sources.csv", "OUT.json" },
    { "interference", 0, 0, G_OPTION_ARG_FILENAME, &interference, "Also write the share tables and measured pairs as an interference file (one GPU type)", "OUT2.json" },
    { "gpu-type", 0, 0, G_OPTION_ARG_STRING_ARRAY, &gpu_types, "GPU type name for every row (all rows one gpu), or GPU=NAME for the rows whose gpu column is GPU (repeatable); default: the gpu column slugged", "NAME" },
    { "variant-by", 0, 0, G_OPTION_ARG_STRING, &variant_by, "Text columns whose values tell model variants apart: model@slug(values), e.g. framework_context,precision", "COLS" },
    { "fallback-from", 0, 0, G_OPTION_ARG_FILENAME, &fallback_from, "Interference file whose fallback model the pair scales refer to and the output carries (default: the built-in one)", "FILE" },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Do not list the rows not imported", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("FILE.csv... - measured rows to profile and interference files");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(ctx,
    "Reads measured rows (docs/profiles.md, \"Measured data\") and writes isolated rows at full\n"
    "share as a profile, isolated rows below 100 % share as share tables and rows co-located with\n"
    "one partner as measured pairs (a scale on the fallback model per ordered pair) of an\n"
    "interference file. Rows that map to neither are counted and named on stderr.");
  GError *err = NULL;
  int status = 0;
  GPtrArray *files = g_ptr_array_new_with_free_func((GDestroyNotify)cs_measured_file_free);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  CsImportResult res = { 0 };
  CsInterferenceSet *fb_set = NULL;
  char *fb_path = NULL, *psc = NULL, *isc = NULL, *pname = NULL, *iname = NULL;
  char **variants = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (argc < 2) {
    status = cli_fail(prog, "expected at least one measured CSV file (see --help)");
    goto out;
  }
  if (!output) {
    status = cli_fail(prog, "--output OUT.json is required");
    goto out;
  }
  psc = sidecar_path(output);
  isc = interference ? sidecar_path(interference) : NULL;
  if (interference && (strcmp(interference, output) == 0 || strcmp(interference, psc) == 0 ||
                       strcmp(isc, output) == 0)) {
    status = cli_fail(prog, "--interference: must differ from --output and its .sources.csv");
    goto out;
  }
  if (gpu_types)
    for (char **g = gpu_types; *g; g++) {
      const char *eq = strrchr(*g, '=');
      if ((eq && (eq == *g || eq[1] == '\0')) || (**g == '\0') ||
          (!eq && g_strv_length(gpu_types) > 1)) {
        char *m = g_strdup_printf("--gpu-type %s: expected NAME (once) or GPU=NAME entries", *g);
        status = cli_fail(prog, m);
        g_free(m);
        goto out;
      }
    }
  if (variant_by) {
    variants = g_strsplit(variant_by, ",", -1);
    for (char **v = variants; *v; v++)
      if (!**v) {
        status = cli_fail(prog, "--variant-by: expected column names separated by commas");
        goto out;
      }
  }
  CsImportOptions opt = { .gpu_types = gpu_types, .variant_by = variants,
                          .interference = interference != NULL };
  cs_interference_fallback_init(&opt.fallback);
  if (fallback_from) {
    fb_path = g_file_test(fallback_from, G_FILE_TEST_EXISTS)
                ? g_strdup(fallback_from) : cs_data_file_find("profiles", fallback_from);
    if (!fb_path)
      fb_path = g_strdup(fallback_from);
    fb_set = cs_interference_set_load_file(fb_path, &err);
    if (!fb_set) {
      char *m = g_strdup_printf("--fallback-from: %s", err->message);
      status = cli_fail(prog, m);
      g_free(m);
      goto out;
    }
    opt.fallback = *cs_interference_set_fallback(fb_set);
  }
  char *fb_base = fb_path ? g_path_get_basename(fb_path) : NULL;
  /* The set's source reads "PATH: SOURCE"; the path is this machine's. */
  const char *fb_text = fb_set ? strstr(cs_interference_set_source(fb_set), ": ") : NULL;
  char *fb_source = fb_base ? g_strdup_printf("the fallback of %s (%s)", fb_base,
                                              fb_text ? fb_text + 2 : "")
                            : NULL;
  g_free(fb_base);
  for (int i = 1; i < argc; i++) {
    CsMeasuredFile *f = cs_measured_file_load(argv[i], &err);
    if (!f) {
      g_free(fb_source);
      status = cli_fail("clustersim", err->message);
      goto out;
    }
    g_ptr_array_add(files, f);
    g_ptr_array_add(names, g_path_get_basename(argv[i]));
  }
  g_ptr_array_add(names, NULL);
  opt.file_names = (char **)names->pdata;
  opt.fallback_source = fb_source;
  pname = g_path_get_basename(output);
  iname = interference ? g_path_get_basename(interference) : NULL;
  opt.profile_name = pname;
  opt.interference_name = iname;
  gboolean ok = cs_measured_import((CsMeasuredFile *const *)files->pdata, (int)files->len, &opt,
                                   &res, &err);
  g_free(fb_source);
  if (res.skipped && !quiet)
    for (guint i = 0; i < res.skipped->len; i++)
      fprintf(stderr, "%s: note: %s\n", prog, (char *)res.skipped->pdata[i]);
  if (!ok) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  if (!res.profile) {
    status = cli_fail(prog, "no model has two batch points at full share: no profile to write to "
                      "--output (the rows not imported are listed above)");
    goto out;
  }
  char *paths[4] = { output, psc, interference, isc };
  char *texts[4] = { print_json(res.profile), g_strdup(res.profile_sources->str),
                     res.interference ? print_json(res.interference) : NULL,
                     res.interference ? g_strdup(res.interference_sources->str) : NULL };
  int n_out = res.interference ? 4 : 2;
  if (!write_all(paths, texts, n_out, &err))
    status = cli_fail(prog, err->message);
  else if (!quiet) {
    fprintf(stderr, "%s: wrote %s (%d batch points)", prog, output, res.n_batch_points);
    if (interference)
      fprintf(stderr, " and %s (%d share cells, %d pairs from %d rows)", interference,
              res.n_share_cells, res.n_pairs, res.n_pair_rows);
    fprintf(stderr, "; provenance in %s%s%s\n", psc, isc ? " and " : "", isc ? isc : "");
  }
  for (int i = 0; i < 4; i++)
    g_free(texts[i]);
out:
  cs_import_result_clear(&res);
  cs_interference_set_free(fb_set);
  g_ptr_array_free(files, TRUE);
  g_ptr_array_free(names, TRUE);
  g_clear_error(&err);
  g_free(fb_path);
  g_free(psc);
  g_free(isc);
  g_free(pname);
  g_free(iname);
  g_strfreev(variants);
  g_strfreev(gpu_types);
  g_free(output);
  g_free(interference);
  g_free(fallback_from);
  g_free(variant_by);
  g_option_context_free(ctx);
  return status;
}
