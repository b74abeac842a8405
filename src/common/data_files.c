/* Data directory search; see data_files.h. */
#include "data_files.h"

#include "cs_config.h"

char **cs_data_dirs(void)
{
  GPtrArray *dirs = g_ptr_array_new();
  const char *env = g_getenv("CLUSTERSIM_DATA_DIR");
  if (env && *env)
    g_ptr_array_add(dirs, g_strdup(env));
  g_ptr_array_add(dirs, g_strdup(CS_DATADIR));
  g_ptr_array_add(dirs, g_strdup(CS_SOURCE_DATADIR));
  g_ptr_array_add(dirs, NULL);
  return (char **)g_ptr_array_free(dirs, FALSE);
}

char *cs_data_file_find(const char *sub, const char *name)
{
  char **dirs = cs_data_dirs();
  char *with_ext = g_str_has_suffix(name, ".json") ? NULL : g_strconcat(name, ".json", NULL);
  char *found = NULL;
  for (int i = 0; dirs[i] && !found; i++) {
    const char *names[2] = { name, with_ext };
    for (int k = 0; k < 2 && !found; k++) {
      if (!names[k])
        continue;
      char *p = g_build_filename(dirs[i], sub, names[k], NULL);
      if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
        found = p;
      else
        g_free(p);
    }
  }
  g_free(with_ext);
  g_strfreev(dirs);
  return found;
}
