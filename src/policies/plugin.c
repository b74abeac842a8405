/* Plug-ins (clustersim/plugin.h): shared objects that add policies to a
 * registry, opened with GModule. registry.c keeps what was loaded; this file
 * opens the file, checks it and calls its entry point.
 *
 * Why the file is never unloaded once loaded: results, compiled scenarios
 * and the registry point into its policy structs and strings, and a policy
 * may have started threads or registered callbacks elsewhere; closing it
 * while any of that is alive is a crash far from its cause. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <gmodule.h>

#include "clustersim/plugin.h"
#include "common/json_input.h"
#include "registry_internal.h"

typedef int (*AbiFn)(void);
typedef gboolean (*InitFn)(CsRegistry *registry, GError **error);

static gboolean fail(GError **error, const char *path, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

static gboolean fail(GError **error, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, CS_ERROR, CS_ERROR_INVALID, "plug-in %s: %s", path, msg);
  g_free(msg);
  return FALSE;
}

/* The SHA-256 of the file's bytes, or NULL with error set. */
static char *file_sha256(const char *path, const char *shown, GError **error)
{
  GMappedFile *f = g_mapped_file_new(path, FALSE, NULL);
  if (!f) {
    fail(error, shown, "cannot read it");
    return NULL;
  }
  char *sha = g_compute_checksum_for_data(G_CHECKSUM_SHA256,
                                          (const guchar *)g_mapped_file_get_contents(f),
                                          g_mapped_file_get_length(f));
  g_mapped_file_unref(f);
  return sha;
}

/* Checks the ABI version and runs the entry point of an open module. */
static gboolean init_module(CsRegistry *r, GModule *m, const char *path, const char *real,
                            const char *sha, GError **error)
{
  gpointer abi_sym = NULL, init_sym = NULL;
  if (!g_module_symbol(m, "cs_plugin_abi_version", &abi_sym) || !abi_sym)
    return fail(error, path,
                "no cs_plugin_abi_version: not a clustersim plug-in, or one that lacks "
                "CS_PLUGIN_DEFINE_ABI_VERSION (clustersim/plugin.h)");
  int abi = ((AbiFn)abi_sym)();
  if (abi != CS_PLUGIN_ABI_VERSION)
    return fail(error, path,
                "built for plug-in ABI version %d, this clustersim has ABI version %d: rebuild it "
                "against this clustersim's headers",
                abi, CS_PLUGIN_ABI_VERSION);
  if (!g_module_symbol(m, "cs_plugin_init", &init_sym) || !init_sym)
    return fail(error, path,
                "no entry point cs_plugin_init (gboolean cs_plugin_init(CsRegistry *, GError **), "
                "exported with G_MODULE_EXPORT: clustersim/plugin.h)");
  GError *err = NULL;
  cs_registry_plugin_begin(r, real, sha);
  gboolean ok = ((InitFn)init_sym)(r, &err);
  /* An add the registry refused fails the load even when init went on. */
  GError *refusal = cs_registry_plugin_end(r, ok && !err);
  if (refusal) {
    fail(error, path, "%s", refusal->message);
    g_error_free(refusal);
    g_clear_error(&err);
    return FALSE;
  }
  if (!ok || err) {
    if (ok) /* TRUE with an error set: a bug of the plug-in, refused as such */
      fail(error, path, "cs_plugin_init returned TRUE but set an error: %s", err->message);
    else
      fail(error, path, "cs_plugin_init failed: %s",
           err ? err->message : "it returned FALSE without setting an error");
    g_clear_error(&err);
    return FALSE;
  }
  return TRUE;
}

gboolean cs_registry_load_plugin(CsRegistry *r, const char *path, GError **error)
{
  g_return_val_if_fail(r != NULL, FALSE);
  g_return_val_if_fail(path != NULL, FALSE);
  if (!*path)
    return fail(error, "\"\"", "empty path");
  if (cs_registry_plugin_loading(r)) /* from a cs_plugin_init: its origin would be lost */
    return fail(error, path, "cannot be loaded while another plug-in's cs_plugin_init runs");
  char real[PATH_MAX];
  if (!realpath(path, real))
    return fail(error, path, "cannot open it: %s", g_strerror(errno));
  if (!g_file_test(real, G_FILE_TEST_IS_REGULAR))
    return fail(error, path, "not a regular file");
  if (cs_registry_find_plugin(r, real) >= 0)
    return TRUE; /* the same file twice (a flag and a field): loaded once */
  char *sha = file_sha256(real, path, error);
  if (!sha)
    return FALSE;
  /* BIND_LOCAL: two plug-ins may both define cs_plugin_init. Not lazy: a
   * symbol the program lacks is an error now, not a crash mid-run. */
  GModule *m = g_module_open(real, G_MODULE_BIND_LOCAL);
  if (!m) {
    fail(error, path, "cannot load it as a shared object: %s", g_module_error());
    g_free(sha);
    return FALSE;
  }
  gboolean ok = init_module(r, m, path, real, sha, error);
  g_free(sha);
  if (!ok) {
    g_module_close(m); /* nothing of it is left in the registry */
    return FALSE;
  }
  g_module_make_resident(m);
  return TRUE;
}

gboolean cs_plugins_field_read(const cJSON *root, const char *file, const char *base_dir,
                               GPtrArray *written, GPtrArray *paths, GPtrArray *shas,
                               GError **error)
{
  static const char *const keys[] = { "path", "sha256", NULL };
  const cJSON *list = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "plugins")
                                           : NULL;
  if (!list)
    return TRUE;
  if (!cJSON_IsArray(list))
    return cs_json_fail(error, file, "plugins",
                        "expected an array of plug-in paths (shared objects), got %s",
                        cs_json_type_name(list));
  gboolean ok = TRUE;
  int i = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, list)
  {
    char *jp = cs_json_path_index("plugins", i++);
    const char *path = NULL, *sha = NULL;
    if (cJSON_IsString(item))
      path = item->valuestring;
    else if (cJSON_IsObject(item))
      ok = cs_json_check_keys(item, keys, file, jp, error) &&
           cs_json_read_string(item, "path", TRUE, &path, file, jp, error) &&
           cs_json_read_string(item, "sha256", FALSE, &sha, file, jp, error);
    else
      ok = cs_json_fail(error, file, jp,
                        "expected a plug-in path or {\"path\": ..., \"sha256\": ...}, got %s",
                        cs_json_type_name(item));
    if (ok && !*path)
      ok = cs_json_fail(error, file, jp, "expected a plug-in path, got an empty string");
    if (ok && sha && (strlen(sha) != 64 || strspn(sha, "0123456789abcdef") != 64))
      ok = cs_json_fail(error, file, jp, "sha256: expected 64 lower-case hex digits, got \"%s\"",
                        sha);
    g_free(jp);
    if (!ok)
      return FALSE;
    char *abs = g_path_is_absolute(path) ? g_strdup(path)
                                         : g_build_filename(base_dir ? base_dir : ".", path, NULL);
    if (written)
      g_ptr_array_add(written, g_strdup(path));
    g_ptr_array_add(paths, g_canonicalize_filename(abs, NULL));
    g_free(abs);
    if (shas)
      g_ptr_array_add(shas, g_strdup(sha));
  }
  return TRUE;
}
