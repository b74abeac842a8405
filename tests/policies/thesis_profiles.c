/* See thesis_profiles.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <glib.h>

#include "clustersim/profiles.h"
#include "thesis_profiles.h"

int thesis_profiles_setup(void **state)
{
  const char *root = g_getenv("CS_SOURCE_ROOT");
  char *path = g_build_filename(root ? root : ".", "data", "profiles", "v100_thesis.json", NULL);
  GError *err = NULL;
  CsProfileSet *set = cs_profile_set_new();
  gboolean ok = cs_profile_set_load_file(set, path, &err);
  g_free(path);
  if (!ok) {
    print_error("%s\n", err->message);
    g_error_free(err);
    cs_profile_set_free(set);
    return -1;
  }
  *state = set;
  return 0;
}

int thesis_profiles_teardown(void **state)
{
  cs_profile_set_free(*state);
  return 0;
}
