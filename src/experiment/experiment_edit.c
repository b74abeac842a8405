/* An experiment's edits applied to a scenario: experiment_edit.h. Split from
 * experiment.c, which reads and expands the grid. */
#include "experiment_edit.h"

#include <string.h>

#include "common/json_input.h"
#include "scenario/scenario.h"

/* The node at a scenario path (same grammar as cs_scenario_set), or NULL. */
static const cJSON *lookup(const cJSON *node, const char *path)
{
  const char *p = path;
  while (node && *p) {
    if (*p == '[') {
      char *end;
      long idx = strtol(p + 1, &end, 10);
      if (end == p + 1 || *end != ']' || idx < 0 || idx > G_MAXINT)
        return NULL;
      node = cJSON_IsArray(node) ? cJSON_GetArrayItem(node, (int)idx) : NULL;
      p = end + 1;
    } else {
      size_t len = strcspn(p, ".[");
      if (len == 0)
        return NULL;
      char *key = g_strndup(p, len);
      node = cJSON_IsObject(node) ? cJSON_GetObjectItemCaseSensitive(node, key) : NULL;
      g_free(key);
      p += len;
    }
    if (*p == '.')
      p++;
  }
  return node;
}

/* Applies an edit at one concrete path (no "[*]"); on failure *why says why,
 * without the "--set PATH: " the scenario's message starts with. */
static gboolean apply_concrete(CsScenario *sc, const char *path, const char *value,
                               const char *written, char **why)
{
  GError *err = NULL;
  gboolean ok = value ? cs_scenario_set(sc, path, value, &err) : cs_scenario_unset(sc, path, &err);
  if (ok)
    return TRUE;
  char *prefix = g_strdup_printf("%s %s: ", value ? "--set" : "--unset", path);
  const char *msg = err->message;
  if (g_str_has_prefix(msg, prefix))
    msg += strlen(prefix);
  *why = strcmp(path, written) != 0 ? g_strdup_printf("at %s: %s", path, msg) : g_strdup(msg);
  g_free(prefix);
  g_error_free(err);
  return FALSE;
}

/* Applies an edit at path, expanding its first "[*]" over the array the
 * scenario holds there (and the rest recursively). */
gboolean cs_experiment_apply_path(CsScenario *sc, const char *path, const char *value,
                           const char *written, char **why)
{
  const char *star = strstr(path, "[*]");
  if (!star)
    return apply_concrete(sc, path, value, written, why);
  char *prefix = g_strndup(path, (gsize)(star - path));
  const cJSON *arr = lookup(cs_scenario_root(sc), prefix);
  int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
  gboolean ok = TRUE;
  if (!cJSON_IsArray(arr)) {
    *why = g_strdup_printf("%s is %s in the scenario, not an array to expand [*] over",
                           *prefix ? prefix : "the root", arr ? cs_json_type_name(arr) : "absent");
    ok = FALSE;
  } else if (n == 0) {
    *why = g_strdup_printf("%s is an empty array: [*] stands for no element", prefix);
    ok = FALSE;
  }
  for (int k = 0; ok && k < n; k++) {
    /* Unsets go from the end: removing an element moves the later ones up. */
    int i = value ? k : n - 1 - k;
    char *p = g_strdup_printf("%s[%d]%s", prefix, i, star + 3);
    ok = cs_experiment_apply_path(sc, p, value, written, why);
    g_free(p);
  }
  g_free(prefix);
  return ok;
}
