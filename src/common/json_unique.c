/* Refusing duplicate object keys; see cs_json_check_unique in json_input.h.
 *
 * cJSON keeps every member of an object, and cJSON_GetObjectItem returns the
 * first: a duplicate's value would never be read nor validated, and a copy of
 * the tree (the effective scenario) would carry both, so another reader (jq,
 * Python: the last wins) would see another value than the one that ran.
 *
 * The check walks the text alongside the parsed tree: cJSON keeps members in
 * the order of the text, so the n-th key met in an object's text is its n-th
 * child, and the walk knows each key's line while the tree gives the key as
 * decoded ("\u0061" and "a" are one key). The text is valid JSON (cJSON parsed
 * it), so the walk only needs to skip strings, scalars and whitespace. */
#include "json_input.h"

#include <string.h>

typedef struct {
  const char *p;   /* current position in the text */
  const char *end; /* one past the text's last byte */
  int line;        /* line of p, 1-based */
  const char *file;
  GString *path; /* JSON path of the value being walked */
} Walk;

/* cJSON skips every byte up to 32 as whitespace (and so must the walk). */
static void skip_space(Walk *w)
{
  while (w->p < w->end && (unsigned char)*w->p <= 32) {
    if (*w->p == '\n')
      w->line++;
    w->p++;
  }
}

static void skip_string(Walk *w)
{
  w->p++; /* opening quote */
  while (w->p < w->end && *w->p != '"') {
    if (*w->p == '\\' && w->p + 1 < w->end)
      w->p++;
    if (*w->p == '\n')
      w->line++;
    w->p++;
  }
  if (w->p < w->end)
    w->p++; /* closing quote */
}

static gboolean walk_value(Walk *w, const cJSON *node, GError **error);

/* Objects up to this many members compare each key with the earlier ones;
 * larger ones use a hash table, so a huge object stays linear. */
#define UNIQUE_LINEAR_MAX 16

static gboolean walk_object(Walk *w, const cJSON *obj, GError **error)
{
  w->p++; /* '{' */
  gsize len = w->path->len;
  GHashTable *seen = NULL; /* key -> first line, once the object is large */
  const char *keys[UNIQUE_LINEAR_MAX];
  int lines[UNIQUE_LINEAR_MAX];
  int n = 0;
  gboolean ok = TRUE;
  const cJSON *child = obj ? obj->child : NULL;
  skip_space(w);
  while (ok && w->p < w->end && *w->p != '}') {
    int line = w->line;
    skip_string(w);
    skip_space(w);
    w->p++; /* ':' */
    const char *key = child && child->string ? child->string : "";
    int first = 0;
    if (!seen && n == UNIQUE_LINEAR_MAX) {
      seen = g_hash_table_new(g_str_hash, g_str_equal);
      for (int i = 0; i < n; i++)
        g_hash_table_insert(seen, (gpointer)keys[i], GINT_TO_POINTER(lines[i]));
    }
    if (seen) {
      first = GPOINTER_TO_INT(g_hash_table_lookup(seen, key));
      if (!first)
        g_hash_table_insert(seen, (gpointer)key, GINT_TO_POINTER(line));
    } else {
      for (int i = 0; i < n && !first; i++)
        if (strcmp(keys[i], key) == 0)
          first = lines[i];
      if (!first) {
        keys[n] = key;
        lines[n++] = line;
      }
    }
    if (first) {
      if (first == line)
        ok = cs_json_fail(error, w->file, w->path->str,
                          "field \"%s\" given twice on line %d (a field may appear once)", key,
                          line);
      else
        ok = cs_json_fail(error, w->file, w->path->str,
                          "field \"%s\" given twice, on line %d and line %d (a field may "
                          "appear once)",
                          key, first, line);
      break;
    }
    if (len)
      g_string_append_c(w->path, '.');
    g_string_append(w->path, key);
    ok = walk_value(w, child, error);
    g_string_truncate(w->path, len);
    skip_space(w);
    if (w->p < w->end && *w->p == ',') {
      w->p++;
      skip_space(w);
    }
    child = child ? child->next : NULL;
  }
  if (w->p < w->end)
    w->p++; /* '}' */
  if (seen)
    g_hash_table_destroy(seen);
  return ok;
}

static gboolean walk_array(Walk *w, const cJSON *arr, GError **error)
{
  w->p++; /* '[' */
  gsize len = w->path->len;
  gboolean ok = TRUE;
  const cJSON *child = arr ? arr->child : NULL;
  skip_space(w);
  for (int i = 0; ok && w->p < w->end && *w->p != ']'; i++) {
    g_string_append_printf(w->path, "[%d]", i);
    ok = walk_value(w, child, error);
    g_string_truncate(w->path, len);
    skip_space(w);
    if (w->p < w->end && *w->p == ',') {
      w->p++;
      skip_space(w);
    }
    child = child ? child->next : NULL;
  }
  if (w->p < w->end)
    w->p++; /* ']' */
  return ok;
}

static gboolean walk_value(Walk *w, const cJSON *node, GError **error)
{
  skip_space(w);
  if (w->p >= w->end)
    return TRUE;
  switch (*w->p) {
  case '{':
    return walk_object(w, node, error);
  case '[':
    return walk_array(w, node, error);
  case '"':
    skip_string(w);
    return TRUE;
  default:
    /* A number or a literal: runs up to a delimiter. */
    while (w->p < w->end && (unsigned char)*w->p > 32 && *w->p != ',' && *w->p != ']' &&
           *w->p != '}')
      w->p++;
    return TRUE;
  }
}

gboolean cs_json_check_unique(const cJSON *root, const char *text, size_t len, const char *file,
                              int first_line, GError **error)
{
  Walk w = { text, text + len, first_line, file, g_string_new(NULL) };
  if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
    w.p += 3; /* a UTF-8 byte-order mark, which cJSON skips too */
  gboolean ok = walk_value(&w, root, error);
  g_string_free(w.path, TRUE);
  return ok;
}
