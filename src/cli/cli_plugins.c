/* Plug-ins for every command (docs/extending.md, "Plug-ins"): the global
 * option --plugin FILE (repeatable, anywhere before a "--"), the
 * CLUSTERSIM_PLUGINS variable (paths separated by ':'), and the "plugins"
 * fields of scenarios and experiments all load into one registry, the
 * process's, which every scenario a command runs is given. A file named twice
 * loads once. */
#include <string.h>

#include "cli.h"
#include "clustersim/plugin.h"

static CsRegistry *registry;
static char **plain_argv; /* argv without the --plugin options; lives until exit */

CsRegistry *cli_registry(void)
{
  if (!registry)
    registry = cs_registry_new();
  return registry;
}

/* Loads one plug-in named by where ("--plugin", "CLUSTERSIM_PLUGINS"). */
static gboolean load(const char *where, const char *path)
{
  GError *err = NULL;
  if (cs_registry_load_plugin(cli_registry(), path, &err))
    return TRUE;
  fprintf(stderr, "clustersim: %s: %s\n", where, err->message);
  g_error_free(err);
  return FALSE;
}

int cli_plugins_setup(int *argc, char ***argv)
{
  const char *env = g_getenv("CLUSTERSIM_PLUGINS");
  char **list = env ? g_strsplit(env, G_SEARCHPATH_SEPARATOR_S, -1) : NULL;
  gboolean ok = TRUE;
  for (int i = 0; ok && list && list[i]; i++)
    ok = !*list[i] || load("CLUSTERSIM_PLUGINS", list[i]); /* "a::b", a trailing ':' */
  g_strfreev(list);
  /* The options, in order, after the environment's: the last word on a
   * collision is the command line's. */
  plain_argv = g_new0(char *, *argc + 1);
  int n = 0;
  gboolean rest = FALSE;
  for (int i = 0; ok && i < *argc; i++) {
    const char *a = (*argv)[i];
    rest = rest || strcmp(a, "--") == 0;
    if (i == 0 || rest || !g_str_has_prefix(a, "--plugin")) {
      plain_argv[n++] = (*argv)[i];
    } else if (strcmp(a, "--plugin") == 0) {
      if (i + 1 >= *argc || !*(*argv)[i + 1]) {
        fputs("clustersim: --plugin: expected a plug-in file (FILE.so) after it\n", stderr);
        ok = FALSE;
      } else {
        ok = load("--plugin", (*argv)[++i]);
      }
    } else if (a[8] == '=') {
      ok = a[9] ? load("--plugin", a + 9)
                : (fputs("clustersim: --plugin=: expected a plug-in file (FILE.so)\n", stderr),
                   FALSE);
    } else {
      plain_argv[n++] = (*argv)[i]; /* --pluginx: the command's to refuse */
    }
  }
  if (!ok)
    return EXIT_BAD_INPUT;
  *argc = n;
  *argv = plain_argv;
  return 0;
}

gboolean cli_scenario_plugins(CsScenario *sc)
{
  cs_scenario_set_registry(sc, cli_registry());
  GError *err = NULL;
  if (cs_scenario_load_plugins(sc, &err))
    return TRUE;
  cli_fail("clustersim", err->message);
  g_error_free(err);
  return FALSE;
}
