/* An experiment's edits applied to a scenario: experiment_edit.h. Split from
 * experiment.c, which reads and expands the grid. */
#include "experiment_edit.h"

#include <string.h>

#include "scenario/scenario.h"

gboolean cs_experiment_apply_path(CsScenario *sc, const char *path, const char *value,
                                  char **why)
{
  GError *err = NULL;
  if (cs_scenario_edit_each(sc, path, value, &err))
    return TRUE;
  char *prefix = g_strdup_printf("%s %s: ", value ? "--set" : "--unset", path);
  const char *msg = err->message;
  *why = g_strdup(g_str_has_prefix(msg, prefix) ? msg + strlen(prefix) : msg);
  g_free(prefix);
  g_error_free(err);
  return FALSE;
}
