/* Scenarios' edits: --set and --unset at a path, and an experiment's edit
 * over every element of an array ("[*]"), applied to the scenario's JSON
 * document and recorded as overrides (scenario.c holds the document). */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "common/input_file.h"
#include "common/json_input.h"
#include "scenario.h"
#include "scenario_internal.h"

/* ---- --set ------------------------------------------------------------------ */

static gboolean set_fail(GError **error, const char *path, const char *why)
{
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "--set %s: %s", path, why);
  return FALSE;
}

/* Sets the value at p, a path relative to node, to v (taken, also on
 * failure), creating missing objects and arrays along the way; messages
 * name path, the whole path written. */
static gboolean set_value_at(cJSON *node, const char *p, const char *path, cJSON *v,
                             GError **error)
{
  gboolean ok = TRUE;
  if (!*p)
    ok = set_fail(error, path, "empty path");
  while (ok && *p) {
    if (*p == '[') {
      char *end;
      long idx = strtol(p + 1, &end, 10);
      if (end == p + 1 || *end != ']' || idx < 0) {
        ok = set_fail(error, path, "expected [index] with a non-negative integer");
        break;
      }
      if (!cJSON_IsArray(node)) {
        ok = set_fail(error, path, "indexing something that is not an array");
        break;
      }
      int n = cJSON_GetArraySize(node);
      p = end + 1;
      if (*p == '.' && *++p == '\0') {
        ok = set_fail(error, path, "empty field name"); /* a trailing dot */
        break;
      }
      gboolean last = (*p == '\0');
      if (idx > n) {
        ok = set_fail(error, path, "index past the end of the array");
        break;
      }
      if (last) {
        if (idx == n)
          cJSON_AddItemToArray(node, v);
        else
          cJSON_ReplaceItemInArray(node, (int)idx, v);
        v = NULL;
        break;
      }
      if (idx == n)
        cJSON_AddItemToArray(node, (*p == '[') ? cJSON_CreateArray() : cJSON_CreateObject());
      node = cJSON_GetArrayItem(node, (int)idx);
      continue;
    }
    size_t len = strcspn(p, ".[");
    if (len == 0) {
      ok = set_fail(error, path, "empty field name");
      break;
    }
    char *key = g_strndup(p, len);
    p += len;
    gboolean last = (*p == '\0');
    if (*p == '.' && *++p == '\0') {
      g_free(key);
      ok = set_fail(error, path, "empty field name"); /* a trailing dot */
      break;
    }
    if (!cJSON_IsObject(node)) {
      g_free(key);
      ok = set_fail(error, path, "a field of something that is not an object");
      break;
    }
    if (last) {
      if (cJSON_GetObjectItemCaseSensitive(node, key))
        cJSON_ReplaceItemInObjectCaseSensitive(node, key, v);
      else
        cJSON_AddItemToObject(node, key, v);
      v = NULL;
      g_free(key);
      break;
    }
    cJSON *child = cJSON_GetObjectItemCaseSensitive(node, key);
    if (!child) {
      child = (*p == '[') ? cJSON_CreateArray() : cJSON_CreateObject();
      cJSON_AddItemToObject(node, key, child);
    }
    g_free(key);
    node = child;
  }
  cJSON_Delete(v);
  return ok;
}

static gboolean set_value(CsScenario *sc, const char *path, cJSON *v, GError **error)
{
  return set_value_at(sc->root, path, path, v, error);
}

/* The value of --set PATH=value: JSON when it parses as JSON, else a bare
 * string, so that --set clients[0].arrival=gamma works without shell
 * quoting. Returns a new tree, or NULL with error set for JSON with a
 * duplicate key. */
static cJSON *parse_set_value(const char *path, const char *value, GError **error)
{
  cJSON *v = cJSON_Parse(value);
  char *label = g_strdup_printf("--set %s", path);
  gboolean unique = !v || cs_json_check_unique(v, value, strlen(value), label, 1, error);
  g_free(label);
  if (!unique) {
    cJSON_Delete(v);
    return NULL;
  }
  return v ? v : cJSON_CreateString(value);
}

gboolean cs_scenario_set_unrecorded(CsScenario *sc, const char *path, const char *value,
                                    GError **error)
{
  cJSON *v = parse_set_value(path, value, error);
  return v && set_value(sc, path, v, error);
}

gboolean cs_scenario_set(CsScenario *sc, const char *path, const char *value, GError **error)
{
  if (!cs_scenario_set_unrecorded(sc, path, value, error))
    return FALSE;
  g_ptr_array_add(sc->overrides, g_strdup_printf("%s=%s", path, value));
  return TRUE;
}

/* Sets path to v (taken) and records "PATH=JSON" as an override. */
static gboolean set_recorded(CsScenario *sc, const char *path, cJSON *v, GError **error)
{
  char *text = cJSON_PrintUnformatted(v);
  gboolean ok = set_value(sc, path, v, error);
  if (ok)
    g_ptr_array_add(sc->overrides, g_strdup_printf("%s=%s", path, text));
  cJSON_free(text);
  return ok;
}

gboolean cs_scenario_set_int(CsScenario *sc, const char *path, int64_t value, GError **error)
{
  /* From 2^53 on a JSON number no longer holds every integer exactly (the
   * readers refuse 2^53 itself, which may stand for 2^53 + 1). */
  if (value >= 9007199254740992LL || value <= -9007199254740992LL)
    return set_fail(error, path, "an integer of magnitude 2^53 or more is not exact in JSON");
  return set_recorded(sc, path, cJSON_CreateNumber((double)value), error);
}

gboolean cs_scenario_set_double(CsScenario *sc, const char *path, double value, GError **error)
{
  if (!isfinite(value))
    return set_fail(error, path, "not a finite number (JSON has no NaN or infinity)");
  return set_recorded(sc, path, cJSON_CreateNumber(value), error);
}

gboolean cs_scenario_set_string(CsScenario *sc, const char *path, const char *value,
                                GError **error)
{
  if (!value)
    return set_fail(error, path, "NULL string");
  return set_recorded(sc, path, cJSON_CreateString(value), error);
}

gboolean cs_scenario_set_bool(CsScenario *sc, const char *path, gboolean value, GError **error)
{
  return set_recorded(sc, path, cJSON_CreateBool(value), error);
}

/* Names the fields of obj close to key, as " (did you mean ...?)", or "". */
static char *field_hint(const cJSON *obj, const char *key)
{
  GPtrArray *names = g_ptr_array_new();
  const cJSON *f;
  cJSON_ArrayForEach(f, obj)
    g_ptr_array_add(names, f->string);
  char *hint = cs_did_you_mean(key, (const char *const *)names->pdata, (int)names->len);
  g_ptr_array_free(names, TRUE);
  return hint;
}

static gboolean unset_fail(GError **error, const char *path, const char *fmt, ...)
  G_GNUC_PRINTF(3, 4);
static gboolean unset_fail(GError **error, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *why = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "--unset %s: %s", path, why);
  g_free(why);
  return FALSE;
}

/* Removes the value at p, a path relative to node whose own path is walked
 * ("" for the root); messages name path, the whole path written. */
static gboolean unset_at(cJSON *node, const char *p, const char *path, const char *node_path,
                         GError **error)
{
  /* Same path grammar as set_value: fields separated by '.', [index] steps. */
  if (!*p)
    return unset_fail(error, path, "empty path");
  GString *walked = g_string_new(node_path); /* for messages: where the walk got to */
  gboolean ok = TRUE;
  while (ok && *p) {
    cJSON *parent = node;
    if (*p == '[') {
      char *end;
      long idx = strtol(p + 1, &end, 10);
      if (end == p + 1 || *end != ']' || idx < 0) {
        ok = unset_fail(error, path, "expected [index] with a non-negative integer");
        break;
      }
      if (!cJSON_IsArray(parent) || idx >= cJSON_GetArraySize(parent)) {
        ok = unset_fail(error, path, "%s has no element [%ld]",
                        walked->len ? walked->str : "the scenario", idx);
        break;
      }
      p = end + 1;
      g_string_append_printf(walked, "[%ld]", idx);
      if (*p == '\0') {
        cJSON_DeleteItemFromArray(parent, (int)idx);
        break;
      }
      node = cJSON_GetArrayItem(parent, (int)idx);
    } else {
      size_t len = strcspn(p, ".[");
      if (len == 0) {
        ok = unset_fail(error, path, "empty field name");
        break;
      }
      char *key = g_strndup(p, len);
      p += len;
      cJSON *child = cJSON_IsObject(parent) ? cJSON_GetObjectItemCaseSensitive(parent, key) : NULL;
      if (!child) {
        char *hint = cJSON_IsObject(parent) ? field_hint(parent, key) : g_strdup("");
        ok = unset_fail(error, path, "%s has no field \"%s\"%s",
                        walked->len ? walked->str : "the scenario", key, hint);
        g_free(hint);
        g_free(key);
        break;
      }
      g_string_append_printf(walked, "%s%s", walked->len ? "." : "", key);
      if (*p == '\0') {
        cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
        g_free(key);
        break;
      }
      g_free(key);
      node = child;
    }
    if (*p == '.' && *++p == '\0')
      ok = unset_fail(error, path, "empty field name"); /* a trailing dot */
  }
  g_string_free(walked, TRUE);
  return ok;
}

gboolean cs_scenario_unset(CsScenario *sc, const char *path, GError **error)
{
  gboolean ok = unset_at(sc->root, path, path, "", error);
  if (ok)
    g_ptr_array_add(sc->overrides, g_strdup_printf("unset %s", path));
  return ok;
}


/* ---- an edit over every element: "[*]" --------------------------------------- */

/* The node at p, a path relative to node (same grammar as --set), or NULL. */
static cJSON *lookup_at(cJSON *node, const char *p)
{
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

typedef struct {
  CsScenario *sc;
  const char *written; /* the path as written, stars included */
  const char *value;   /* NULL: unset */
  const cJSON *v;      /* value parsed once; each element gets a copy */
  GString *at;         /* the concrete path of the node being edited */
} Each;

static gboolean each_fail(const Each *x, GError **error, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static gboolean each_fail(const Each *x, GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *why = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s %s: %s",
              x->value ? "--set" : "--unset", x->written, why);
  g_free(why);
  return FALSE;
}

/* The edit at rest (relative to elem, an element of arr whose path is x->at;
 * rest is "" for the element itself, else starts with '.' or '['). */
static gboolean each_leaf(Each *x, cJSON *arr, cJSON *elem, const char *rest, GError **error)
{
  char *full = g_strconcat(x->at->str, rest, NULL);
  const char *p = *rest == '.' ? rest + 1 : rest;
  GError *err = NULL;
  gboolean ok = TRUE;
  if (*p == '\0') {
    if (x->value)
      cJSON_ReplaceItemViaPointer(arr, elem, cJSON_Duplicate(x->v, TRUE));
    else
      cJSON_Delete(cJSON_DetachItemViaPointer(arr, elem));
  } else {
    ok = x->value ? set_value_at(elem, p, full, cJSON_Duplicate(x->v, TRUE), &err)
                  : unset_at(elem, p, full, x->at->str, &err);
  }
  if (ok) {
    g_ptr_array_add(x->sc->overrides, x->value ? g_strdup_printf("%s=%s", full, x->value)
                                               : g_strdup_printf("unset %s", full));
  } else {
    /* "--set FULL: why" becomes "--set WRITTEN: at FULL: why". */
    char *prefix = g_strdup_printf("%s %s: ", x->value ? "--set" : "--unset", full);
    const char *why = g_str_has_prefix(err->message, prefix) ? err->message + strlen(prefix)
                                                             : err->message;
    each_fail(x, error, "at %s: %s", full, why);
    g_free(prefix);
    g_error_free(err);
  }
  g_free(full);
  return ok;
}

/* Expands the first "[*]" of rest (relative to node, whose path is x->at)
 * over the array there, and the rest within each element. */
static gboolean each_at(Each *x, cJSON *arr_parent, cJSON *node, const char *rest, GError **error)
{
  const char *star = strstr(rest, "[*]");
  if (!star)
    return each_leaf(x, arr_parent, node, rest, error);
  char *segment = g_strndup(rest, (gsize)(star - rest));
  cJSON *arr = lookup_at(node, *segment == '.' ? segment + 1 : segment);
  gsize at_len = x->at->len;
  g_string_append(x->at, segment);
  g_free(segment);
  gboolean ok = TRUE;
  if (!cJSON_IsArray(arr))
    ok = each_fail(x, error, "%s is %s in the scenario, not an array to expand [*] over",
                   x->at->len ? x->at->str : "the root", arr ? cs_json_type_name(arr) : "absent");
  else if (!arr->child)
    ok = each_fail(x, error, "%s is an empty array: [*] stands for no element", x->at->str);
  gsize arr_len = x->at->len;
  if (ok && x->value) {
    int i = 0;
    for (cJSON *elem = arr->child, *next; ok && elem; elem = next, i++) {
      next = elem->next; /* elem may be replaced */
      g_string_append_printf(x->at, "[%d]", i);
      ok = each_at(x, arr, elem, star + 3, error);
      g_string_truncate(x->at, arr_len);
    }
  } else if (ok) {
    /* Unsets go from the end, as n --unset edits would: removing an element
     * moves the later ones up. cJSON's first element points back to the last. */
    int i = 0;
    for (cJSON *elem = arr->child; elem; elem = elem->next)
      i++;
    cJSON *elem = arr->child->prev;
    while (ok && i > 0) {
      cJSON *prev = --i > 0 ? elem->prev : NULL;
      g_string_append_printf(x->at, "[%d]", i);
      ok = each_at(x, arr, elem, star + 3, error);
      g_string_truncate(x->at, arr_len);
      elem = prev;
    }
  }
  g_string_truncate(x->at, at_len);
  return ok;
}

gboolean cs_scenario_edit_each(CsScenario *sc, const char *path, const char *value,
                               GError **error)
{
  if (!strstr(path, "[*]"))
    return value ? cs_scenario_set(sc, path, value, error) : cs_scenario_unset(sc, path, error);
  cJSON *v = NULL;
  if (value && !(v = parse_set_value(path, value, error)))
    return FALSE;
  Each x = { .sc = sc, .written = path, .value = value, .v = v, .at = g_string_new(NULL) };
  gboolean ok = each_at(&x, NULL, sc->root, path, error);
  g_string_free(x.at, TRUE);
  cJSON_Delete(v);
  return ok;
}
