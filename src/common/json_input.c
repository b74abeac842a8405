/* Path-aware JSON readers; see json_input.h. */
#include "json_input.h"

#include "input_file.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* One error domain for the whole library: the public CS_ERROR (clustersim.h)
 * is this quark, and CS_INPUT_ERROR_* codes equal CS_ERROR_* codes. */
GQuark cs_input_error_quark(void)
{
  return g_quark_from_static_string("cs-error-quark");
}

cJSON *cs_json_parse(const char *text, const char *name, GError **error)
{
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(text, &end, TRUE);
  if (root) {
    if (cs_json_check_unique(root, text, strlen(text), name, 1, error))
      return root;
    cJSON_Delete(root);
    return NULL;
  }
  /* cJSON reports where parsing stopped; turn it into line and column. */
  int line = 1, col = 1;
  const char *stop = end ? end : text;
  for (const char *c = text; *c && c < stop; c++) {
    if (*c == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_PARSE,
              "%s: line %d, column %d: not valid JSON", name, line, col);
  return NULL;
}

cJSON *cs_json_load_file(const char *path, GError **error)
{
  char *text = NULL;
  if (!cs_input_read(path, CS_INPUT_JSON_MAX_BYTES, &text, NULL, error))
    return NULL;
  cJSON *root = cs_json_parse(text, path, error);
  g_free(text);
  return root;
}

char *cs_json_path_key(const char *path, const char *key)
{
  return (path && *path) ? g_strdup_printf("%s.%s", path, key) : g_strdup(key);
}

char *cs_json_path_index(const char *path, int index)
{
  return g_strdup_printf("%s[%d]", path ? path : "", index);
}

gboolean cs_json_fail(GError **error, const char *file, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (path && *path)
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s: %s: %s", file, path, msg);
  else
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, "%s: %s", file, msg);
  g_free(msg);
  return FALSE;
}

const char *cs_json_type_name(const cJSON *node)
{
  if (!node)
    return "nothing";
  if (cJSON_IsNull(node))
    return "null";
  if (cJSON_IsBool(node))
    return "a boolean";
  if (cJSON_IsNumber(node))
    return "a number";
  if (cJSON_IsString(node))
    return "a string";
  if (cJSON_IsArray(node))
    return "an array";
  if (cJSON_IsObject(node))
    return "an object";
  return "an unknown value";
}

gboolean cs_json_expect_object(const cJSON *node, const char *file, const char *path,
                               GError **error)
{
  if (cJSON_IsObject(node))
    return TRUE;
  return cs_json_fail(error, file, path, "expected an object, got %s", cs_json_type_name(node));
}

int cs_name_distance(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b);
  int *row = g_new(int, lb + 1);
  for (size_t j = 0; j <= lb; j++)
    row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int up = row[j];
      int cost = g_ascii_tolower(a[i - 1]) == g_ascii_tolower(b[j - 1]) ? 0 : 1;
      int best = MIN(row[j] + 1, row[j - 1] + 1);
      row[j] = MIN(best, diag + cost);
      diag = up;
    }
  }
  int d = row[lb];
  g_free(row);
  return d;
}

/* Distance used to rank suggestions: a known name that merely adds a suffix
 * to a name of 3 or more characters (often a unit, "_ms", or a variant,
 * "resnet" -> "resnet50") is as close as one typo. */
static int suggest_distance(const char *name, const char *known)
{
  size_t n = strlen(name);
  if (n >= 3 && strlen(known) >= n && g_ascii_strncasecmp(known, name, n) == 0)
    return MIN(1, cs_name_distance(name, known));
  return cs_name_distance(name, known);
}

/* Orders tied suggestions: the one that needs fewer edits first ("resnet" ->
 * "resnet50" before "resnet101"), then by strcmp, so that the result does not
 * depend on the order names were loaded in. user_data is the unknown name. */
static int compare_suggestions(const void *a, const void *b, void *user_data)
{
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  int dx = cs_name_distance(user_data, x), dy = cs_name_distance(user_data, y);
  return dx != dy ? (dx < dy ? -1 : 1) : strcmp(x, y);
}

const char **cs_suggest_names(const char *name, const char *const *known, int n_known)
{
  g_return_val_if_fail(name != NULL, NULL);
  if (n_known < 0)
    for (n_known = 0; known && known[n_known]; n_known++)
      ;
  /* Close means at most a third of the name differs (and at least one edit allowed). */
  int limit = MAX(1, (int)strlen(name) / 3);
  int best = G_MAXINT;
  for (int i = 0; i < n_known; i++)
    best = MIN(best, suggest_distance(name, known[i]));
  GPtrArray *out = g_ptr_array_new();
  for (int i = 0; i < n_known && best <= limit; i++) {
    if (suggest_distance(name, known[i]) != best)
      continue;
    gboolean seen = FALSE;
    for (guint k = 0; k < out->len && !seen; k++)
      seen = strcmp(g_ptr_array_index(out, k), known[i]) == 0;
    if (!seen)
      g_ptr_array_add(out, (gpointer)known[i]);
  }
  g_ptr_array_sort_with_data(out, compare_suggestions, (gpointer)name);
  g_ptr_array_add(out, NULL);
  return (const char **)g_ptr_array_free(out, FALSE);
}

char *cs_did_you_mean(const char *name, const char *const *known, int n_known)
{
  const char **names = cs_suggest_names(name, known, n_known);
  int n = 0;
  while (names[n] && n < CS_SUGGEST_MAX)
    n++;
  GString *s = g_string_new(NULL);
  for (int i = 0; i < n; i++)
    g_string_append_printf(s, "%s\"%s\"", i == 0 ? " (did you mean " : i == n - 1 ? " or " : ", ",
                           names[i]);
  if (n > 0)
    g_string_append(s, "?)");
  g_free(names);
  return g_string_free(s, FALSE);
}

gboolean cs_json_check_keys(const cJSON *obj, const char *const *known, const char *file,
                            const char *path, GError **error)
{
  /* Every unknown field at once, each with its suggestion: fixing them one
   * run at a time is what this spares the user. */
  GPtrArray *unknown = g_ptr_array_new();
  const cJSON *field;
  cJSON_ArrayForEach(field, obj)
  {
    gboolean ok = FALSE;
    for (int i = 0; known[i] && !ok; i++)
      ok = strcmp(field->string, known[i]) == 0;
    if (!ok)
      g_ptr_array_add(unknown, field->string);
  }
  if (unknown->len == 0) {
    g_ptr_array_free(unknown, TRUE);
    return TRUE;
  }
  GString *msg = g_string_new(unknown->len == 1 ? "unknown field " : "unknown fields ");
  gboolean unhinted = FALSE;
  for (guint u = 0; u < unknown->len; u++) {
    const char *name = g_ptr_array_index(unknown, u);
    char *hint = cs_did_you_mean(name, known, -1);
    unhinted = unhinted || !*hint;
    g_string_append_printf(msg, "%s\"%s\"%s",
                           u == 0 ? "" : u + 1 == unknown->len ? " and " : ", ", name, hint);
    g_free(hint);
  }
  if (unhinted) {
    g_string_append(msg, " (known fields: ");
    for (int i = 0; known[i]; i++)
      g_string_append_printf(msg, "%s%s", i ? ", " : "", known[i]);
    g_string_append(msg, ")");
  }
  cs_json_fail(error, file, path, "%s", msg->str);
  g_string_free(msg, TRUE);
  g_ptr_array_free(unknown, TRUE);
  return FALSE;
}

static const cJSON *get_field(const cJSON *obj, const char *key, gboolean required,
                              const char *file, const char *path, GError **error,
                              gboolean *failed)
{
  *failed = FALSE;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v && required) {
    char *p = cs_json_path_key(path, key);
    cs_json_fail(error, file, p, "required field is missing");
    g_free(p);
    *failed = TRUE;
  }
  return v;
}

static void format_bound(char *buf, size_t n, double v)
{
  g_snprintf(buf, n, "%g", v);
}

const char *cs_json_nonfinite_name(double v)
{
  if (isnan(v))
    return "NaN";
  if (isinf(v))
    return v > 0 ? "infinity (a number beyond the range of a double, about 1.8e308)"
                 : "-infinity (a number beyond the range of a double, about -1.8e308)";
  return NULL;
}

gboolean cs_json_value_double(const cJSON *v, double min, double max, double *out,
                              const char *file, const char *p, GError **error)
{
  if (!cJSON_IsNumber(v))
    return cs_json_fail(error, file, p, "expected a number, got %s", cs_json_type_name(v));
  /* cJSON turns a literal such as 1e999 into infinity: the number's own
   * kind ("got a number") would not tell the user what is wrong. */
  if (!isfinite(v->valuedouble))
    return cs_json_fail(error, file, p, "expected a finite number, got %s",
                        cs_json_nonfinite_name(v->valuedouble));
  if (v->valuedouble < min || v->valuedouble > max) {
    char lo[32], hi[32], got[32];
    format_bound(lo, sizeof lo, min);
    format_bound(hi, sizeof hi, max);
    format_bound(got, sizeof got, v->valuedouble);
    /* A tiny positive minimum stands for "strictly positive"; a large
     * maximum is left unsaid unless it is the bound that failed. */
    gboolean positive = min > 0.0 && min <= 1e-6;
    if (v->valuedouble > max && positive)
      return cs_json_fail(error, file, p, "expected a number > 0 and <= %s, got %s", hi, got);
    if (positive && max >= 1e9)
      return cs_json_fail(error, file, p, "expected a number > 0, got %s", got);
    if (v->valuedouble < min && max >= 1e9)
      return cs_json_fail(error, file, p, "expected a number >= %s, got %s", lo, got);
    return cs_json_fail(error, file, p, "expected a number in [%s, %s], got %s", lo, hi, got);
  }
  *out = v->valuedouble;
  return TRUE;
}

gboolean cs_json_read_double(const cJSON *obj, const char *key, gboolean required, double min,
                             double max, double *out, const char *file, const char *path,
                             GError **error)
{
  gboolean failed;
  const cJSON *v = get_field(obj, key, required, file, path, error, &failed);
  if (failed)
    return FALSE;
  if (!v)
    return TRUE;
  /* The usual case without building the field's path, which only a message
   * needs: a list of 10^6 points spent a tenth of its reading on paths. */
  if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= min &&
      v->valuedouble <= max) {
    *out = v->valuedouble;
    return TRUE;
  }
  char *p = cs_json_path_key(path, key);
  gboolean ok = cs_json_value_double(v, min, max, out, file, p, error);
  g_free(p);
  return ok;
}

gboolean cs_json_value_int64(const cJSON *v, int64_t min, int64_t max, int64_t *out,
                             const char *file, const char *p, GError **error)
{
  if (!cJSON_IsNumber(v))
    return cs_json_fail(error, file, p, "expected an integer, got %s", cs_json_type_name(v));
  double d = v->valuedouble;
  if (!isfinite(d))
    return cs_json_fail(error, file, p, "expected an integer, got %s", cs_json_nonfinite_name(d));
  /* From 2^53 on a double no longer holds every integer: 9007199254740993
   * is read as 9007199254740992, so 2^53 itself may stand for a number the
   * user did not write. This test comes before the fraction test, which
   * every such double passes or fails by rounding alone. */
  if (fabs(d) >= 9007199254740992.0)
    return cs_json_fail(error, file, p,
                        "expected an integer, got %.*g: too large to be exact (a double holds "
                        "every integer only below 2^53 = 9007199254740992)",
                        fabs(d) < 1e20 ? 20 : 6, d);
  if (d != floor(d))
    return cs_json_fail(error, file, p, "expected an integer, got a fractional number");
  if ((int64_t)d < min || (int64_t)d > max) {
    if (max == INT64_MAX)
      return cs_json_fail(error, file, p, "expected an integer >= %" G_GINT64_FORMAT
                          ", got %" G_GINT64_FORMAT, (gint64)min, (gint64)d);
    return cs_json_fail(error, file, p, "expected an integer in [%" G_GINT64_FORMAT
                        ", %" G_GINT64_FORMAT "], got %" G_GINT64_FORMAT,
                        (gint64)min, (gint64)max, (gint64)d);
  }
  *out = (int64_t)d;
  return TRUE;
}

gboolean cs_json_read_int64(const cJSON *obj, const char *key, gboolean required, int64_t min,
                            int64_t max, int64_t *out, const char *file, const char *path,
                            GError **error)
{
  gboolean failed;
  const cJSON *v = get_field(obj, key, required, file, path, error, &failed);
  if (failed)
    return FALSE;
  if (!v)
    return TRUE;
  char *p = cs_json_path_key(path, key);
  gboolean ok = cs_json_value_int64(v, min, max, out, file, p, error);
  g_free(p);
  return ok;
}

gboolean cs_json_read_int(const cJSON *obj, const char *key, gboolean required, int min, int max,
                          int *out, const char *file, const char *path, GError **error)
{
  int64_t v = *out;
  if (!cs_json_read_int64(obj, key, required, min, max, &v, file, path, error))
    return FALSE;
  *out = (int)v;
  return TRUE;
}

gboolean cs_json_value_string(const cJSON *v, const char **out, const char *file, const char *p,
                              GError **error)
{
  if (!cJSON_IsString(v) || !v->valuestring[0])
    return cs_json_fail(error, file, p, "expected a non-empty string, got %s",
                        cJSON_IsString(v) ? "an empty string" : cs_json_type_name(v));
  *out = v->valuestring;
  return TRUE;
}

gboolean cs_json_read_string(const cJSON *obj, const char *key, gboolean required,
                             const char **out, const char *file, const char *path,
                             GError **error)
{
  gboolean failed;
  const cJSON *v = get_field(obj, key, required, file, path, error, &failed);
  if (failed)
    return FALSE;
  if (!v)
    return TRUE;
  char *p = cs_json_path_key(path, key);
  gboolean ok = cs_json_value_string(v, out, file, p, error);
  g_free(p);
  return ok;
}

gboolean cs_json_value_bool(const cJSON *v, gboolean *out, const char *file, const char *p,
                            GError **error)
{
  if (!cJSON_IsBool(v))
    return cs_json_fail(error, file, p, "expected true or false, got %s", cs_json_type_name(v));
  *out = cJSON_IsTrue(v);
  return TRUE;
}

gboolean cs_json_read_bool(const cJSON *obj, const char *key, gboolean required, gboolean *out,
                           const char *file, const char *path, GError **error)
{
  gboolean failed;
  const cJSON *v = get_field(obj, key, required, file, path, error, &failed);
  if (failed)
    return FALSE;
  if (!v)
    return TRUE;
  char *p = cs_json_path_key(path, key);
  gboolean ok = cs_json_value_bool(v, out, file, p, error);
  g_free(p);
  return ok;
}

/* Replaces, in place, the large integral numbers under node by raw text. */
static void exact_numbers(cJSON *node)
{
  for (cJSON *c = node->child; c; c = c->next) {
    if (cJSON_IsNumber(c) && fabs(c->valuedouble) >= 1e15 && isfinite(c->valuedouble) &&
        c->valuedouble == floor(c->valuedouble)) {
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_formatd(buf, sizeof buf, "%.17g", c->valuedouble);
      cJSON *raw = cJSON_CreateRaw(buf);
      /* Replacing by pointer keeps no key: give the raw item the number's.
       * cJSON frees it with its default hooks, free(). */
      if (c->string)
        raw->string = strdup(c->string);
      cJSON_ReplaceItemViaPointer(node, c, raw);
      c = raw;
    } else if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
      exact_numbers(c);
    }
  }
}

char *cs_json_print_exact(const cJSON *root)
{
  cJSON *copy = cJSON_Duplicate(root, TRUE);
  if (cJSON_IsObject(copy) || cJSON_IsArray(copy))
    exact_numbers(copy);
  char *s = cJSON_Print(copy);
  char *out = g_strdup(s);
  cJSON_free(s);
  cJSON_Delete(copy);
  return out;
}

char *cs_json_print_exact_line(const cJSON *root)
{
  char *s = cs_json_print_exact(root);
  char *line = g_strconcat(s, "\n", NULL);
  g_free(s);
  return line;
}
