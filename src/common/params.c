/* Policy parameters as views of the scenario's JSON; see clustersim/params.h.
 *
 * A view keeps the keys a policy asked for, so that the framework can reject
 * the fields no policy code ever looked at (params_internal.h). Member views
 * are created on first use and owned by their parent, so a policy never frees
 * anything it reads. */
#include "params_internal.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "json_input.h"

struct CsParams {
  const cJSON *node;
  const char *file;      /* owned by the root */
  char *path;
  const char *name;      /* member name (points into node), or NULL */
  GHashTable *asked;     /* keys asked for (object views), or NULL until one is */
  GHashTable *members;   /* const cJSON * -> CsParams *, views created so far */
  GPtrArray *order;      /* the same views in creation order (for the check) */
  gboolean asked_all;    /* cs_params_to_json read everything below */
  /* The array's (or object's) members in order, taken on the first
   * cs_params_size or cs_params_at: cJSON finds the i-th member by walking
   * its list, and a policy reading a list by index would take n^2 / 2
   * steps (30,000 manual replicas took 20 s). */
  const cJSON **items;
  int n_items;
  char *owned_file;      /* root only */
  /* Describing mode (cs_params_new_describing): the readers record what
   * they are asked instead of reading. Root only; NULL otherwise. */
  GPtrArray *infos;      /* CsParamInfo *, in the order of first mention */
  cJSON *owned_node;     /* the empty object a describing view reads */
};

static CsParams *view_new(const cJSON *node, const char *file, char *path, const char *name)
{
  CsParams *p = g_new0(CsParams, 1);
  p->node = node;
  p->file = file;
  p->path = path;
  p->name = name;
  return p;
}

CsParams *cs_params_new_root(const cJSON *node, const char *file, const char *path)
{
  char *f = g_strdup(file ? file : "");
  CsParams *p = view_new(node, f, g_strdup(path ? path : ""), NULL);
  p->owned_file = f;
  return p;
}

void cs_params_free(CsParams *p)
{
  if (!p)
    return;
  if (p->order) {
    for (guint i = 0; i < p->order->len; i++)
      cs_params_free(g_ptr_array_index(p->order, i));
    g_ptr_array_free(p->order, TRUE);
    g_hash_table_destroy(p->members);
  }
  if (p->asked)
    g_hash_table_destroy(p->asked);
  g_free(p->path);
  g_free(p->owned_file);
  g_free(p->items);
  if (p->infos)
    g_ptr_array_free(p->infos, TRUE);
  cJSON_Delete(p->owned_node);
  g_free(p);
}

/* ---- describing mode ---------------------------------------------------------- */

static int choices_count(const char *const *choices)
{
  int n = 0;
  while (choices[n])
    n++;
  return n;
}

static void info_free(gpointer data)
{
  CsParamInfo *in = data;
  g_free(in->key);
  if (in->choices)
    g_ptr_array_free(in->choices, TRUE);
  g_free(in->str_default);
  g_free(in->default_text);
  g_free(in->doc);
  g_free(in);
}

CsParams *cs_params_new_describing(const char *path)
{
  cJSON *empty = cJSON_CreateObject();
  CsParams *p = cs_params_new_root(empty, "", path);
  p->owned_node = empty;
  p->infos = g_ptr_array_new_with_free_func(info_free);
  return p;
}

gboolean cs_params_describing(const CsParams *p)
{
  g_return_val_if_fail(p != NULL, FALSE);
  return p->infos != NULL;
}

int cs_params_n_infos(const CsParams *p)
{
  return p->infos ? (int)p->infos->len : 0;
}

const CsParamInfo *cs_params_info(const CsParams *p, int i)
{
  if (!p->infos || i < 0 || i >= (int)p->infos->len)
    return NULL;
  return g_ptr_array_index(p->infos, i);
}

/* The record of key, created on its first mention (type still unknown). */
static CsParamInfo *info_for(CsParams *p, const char *key)
{
  for (guint i = 0; i < p->infos->len; i++) {
    CsParamInfo *in = g_ptr_array_index(p->infos, i);
    if (strcmp(in->key, key) == 0)
      return in;
  }
  CsParamInfo *in = g_new0(CsParamInfo, 1);
  in->key = g_strdup(key);
  g_ptr_array_add(p->infos, in);
  return in;
}

/* Records a typed reader's call; the first typed call of a key wins (a
 * policy reading a key twice reads it the same way). */
static CsParamInfo *record(CsParams *p, const char *key, CsParamType type, gboolean required)
{
  CsParamInfo *in = info_for(p, key);
  if (in->type != CS_PARAM_ANY)
    return NULL;
  in->type = type;
  in->required = required;
  return in;
}

static void record_range(CsParamInfo *in, double min, double max, double dflt)
{
  in->has_range = TRUE;
  in->min = min;
  in->max = max;
  /* A default outside the range is a sentinel ("not given"), not a value
   * the policy runs with: its documentation says what absence means. */
  in->has_default = dflt >= min && dflt <= max;
  in->num_default = dflt;
}

void cs_params_doc(CsParams *obj, const char *key, const char *text)
{
  g_return_if_fail(obj != NULL && key != NULL && text != NULL);
  if (!obj->infos)
    return;
  CsParamInfo *in = info_for(obj, key);
  g_free(in->doc);
  in->doc = g_strdup(text);
}

void cs_params_doc_default(CsParams *obj, const char *key, const char *text)
{
  g_return_if_fail(obj != NULL && key != NULL && text != NULL);
  if (!obj->infos)
    return;
  CsParamInfo *in = info_for(obj, key);
  g_free(in->default_text);
  in->default_text = g_strdup(text);
}

void cs_params_doc_hide(CsParams *obj, const char *key)
{
  g_return_if_fail(obj != NULL && key != NULL);
  if (obj->infos)
    info_for(obj, key)->hidden = TRUE;
}

void cs_params_mark_known(CsParams *p, const char *key)
{
  if (!p->asked)
    p->asked = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  if (!g_hash_table_contains(p->asked, key))
    g_hash_table_add(p->asked, g_strdup(key));
}

/* The view of member node of p, created on first use. */
static CsParams *member(CsParams *p, const cJSON *node, char *path)
{
  if (!p->members) {
    p->members = g_hash_table_new(g_direct_hash, g_direct_equal);
    p->order = g_ptr_array_new();
  }
  CsParams *v = g_hash_table_lookup(p->members, node);
  if (v) {
    g_free(path);
    return v;
  }
  v = view_new(node, p->file, path, cJSON_IsObject(p->node) ? node->string : NULL);
  g_hash_table_insert(p->members, (gpointer)node, v);
  g_ptr_array_add(p->order, v);
  return v;
}

/* Sorts names for the "known fields" list: the order must not depend on hashing. */
static int compare_names(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Adds the message of each object below p (p included) with fields never
 * asked for to msgs, in the order the views were taken. */
static void collect_unasked(CsParams *p, GPtrArray *msgs)
{
  if (p->asked_all)
    return;
  if (cJSON_IsObject(p->node) && p->node->child) {
    GPtrArray *known = g_ptr_array_new();
    if (p->asked) {
      GHashTableIter it;
      gpointer key;
      g_hash_table_iter_init(&it, p->asked);
      while (g_hash_table_iter_next(&it, &key, NULL))
        g_ptr_array_add(known, key);
    }
    g_ptr_array_sort(known, compare_names);
    g_ptr_array_add(known, NULL);
    GError *e = NULL;
    if (!cs_json_check_keys(p->node, (const char *const *)known->pdata, p->file, p->path, &e)) {
      g_ptr_array_add(msgs, g_strdup(e->message));
      g_error_free(e);
    }
    g_ptr_array_free(known, TRUE);
  }
  for (guint i = 0; p->order && i < p->order->len; i++)
    collect_unasked(g_ptr_array_index(p->order, i), msgs);
}

gboolean cs_params_check_asked(CsParams *p, GError **error)
{
  /* Every object's unknown fields at once (a policy's list of replicas
   * with a typo in each: one error, not one run per replica), one object a
   * line; one object alone keeps the message it always had. */
  GPtrArray *msgs = g_ptr_array_new_with_free_func(g_free);
  collect_unasked(p, msgs);
  gboolean ok = msgs->len == 0;
  if (!ok) {
    g_ptr_array_add(msgs, NULL);
    char *all = g_strjoinv("\n", (char **)msgs->pdata);
    g_set_error_literal(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID, all); /* as cs_json_fail */
    g_free(all);
  }
  g_ptr_array_free(msgs, TRUE);
  return ok;
}

const cJSON *cs_params_json(const CsParams *p)
{
  return p->node;
}

const char *cs_params_file(const CsParams *p)
{
  return p->file;
}

const char *cs_params_path(const CsParams *p)
{
  return p->path;
}

CsParamsKind cs_params_kind(const CsParams *p)
{
  const cJSON *n = p->node;
  if (cJSON_IsBool(n))
    return CS_PARAMS_BOOL;
  if (cJSON_IsNumber(n))
    return CS_PARAMS_NUMBER;
  if (cJSON_IsString(n))
    return CS_PARAMS_STRING;
  if (cJSON_IsArray(n))
    return CS_PARAMS_ARRAY;
  if (cJSON_IsObject(n))
    return CS_PARAMS_OBJECT;
  return CS_PARAMS_NULL;
}

const char *cs_params_kind_name(const CsParams *p)
{
  return cs_json_type_name(p->node);
}

/* The members of p's array or object, listed once (one walk). */
static void index_items(CsParams *p)
{
  if (p->items || !(cJSON_IsArray(p->node) || cJSON_IsObject(p->node)))
    return;
  GPtrArray *a = g_ptr_array_new();
  const cJSON *n;
  cJSON_ArrayForEach(n, p->node)
    g_ptr_array_add(a, (gpointer)n);
  p->n_items = (int)a->len;
  g_ptr_array_add(a, NULL); /* items is non-NULL once listed, also when empty */
  p->items = (const cJSON **)g_ptr_array_free(a, FALSE);
}

int cs_params_size(const CsParams *p)
{
  /* The index is a cache: listing it leaves the view as the caller sees it. */
  index_items((CsParams *)p);
  return p->n_items;
}

CsParams *cs_params_at(CsParams *p, int i)
{
  if (i < 0 || i >= cs_params_size(p))
    return NULL;
  const cJSON *n = p->items[i];
  if (cJSON_IsObject(p->node)) {
    cs_params_mark_known(p, n->string);
    return member(p, n, cs_json_path_key(p->path, n->string));
  }
  return member(p, n, cs_json_path_index(p->path, i));
}

const char *cs_params_name(const CsParams *p)
{
  return p->name;
}

CsParams *cs_params_get(CsParams *p, const char *key)
{
  if (!cJSON_IsObject(p->node))
    return NULL;
  cs_params_mark_known(p, key);
  if (p->infos)
    info_for(p, key);
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(p->node, key);
  return n ? member(p, n, cs_json_path_key(p->path, key)) : NULL;
}

gboolean cs_params_has(CsParams *p, const char *key)
{
  if (!cJSON_IsObject(p->node))
    return FALSE;
  cs_params_mark_known(p, key);
  if (p->infos)
    info_for(p, key);
  return cJSON_GetObjectItemCaseSensitive(p->node, key) != NULL;
}

/* ---- field readers: the JSON readers of json_input.h, remembering the key -- */

static gboolean expect_object(const CsParams *p, GError **error)
{
  return cs_json_expect_object(p->node, p->file, p->path, error);
}

gboolean cs_params_double(CsParams *obj, const char *key, gboolean required, double min,
                          double max, double *out, GError **error)
{
  if (!expect_object(obj, error))
    return FALSE;
  cs_params_mark_known(obj, key);
  if (obj->infos) {
    CsParamInfo *in = record(obj, key, CS_PARAM_NUMBER, required);
    if (in)
      record_range(in, min, max, *out);
    if (required && !(*out >= min && *out <= max))
      *out = min; /* a value the policy can go on with (params.h) */
    return TRUE;
  }
  return cs_json_read_double(obj->node, key, required, min, max, out, obj->file, obj->path, error);
}

gboolean cs_params_int(CsParams *obj, const char *key, gboolean required, int min, int max,
                       int *out, GError **error)
{
  if (!expect_object(obj, error))
    return FALSE;
  cs_params_mark_known(obj, key);
  if (obj->infos) {
    CsParamInfo *in = record(obj, key, CS_PARAM_INTEGER, required);
    if (in)
      record_range(in, min, max, *out);
    if (required && !(*out >= min && *out <= max))
      *out = min;
    return TRUE;
  }
  return cs_json_read_int(obj->node, key, required, min, max, out, obj->file, obj->path, error);
}

gboolean cs_params_bool(CsParams *obj, const char *key, gboolean required, gboolean *out,
                        GError **error)
{
  if (!expect_object(obj, error))
    return FALSE;
  cs_params_mark_known(obj, key);
  if (obj->infos) {
    CsParamInfo *in = record(obj, key, CS_PARAM_BOOL, required);
    if (in) {
      in->has_default = TRUE;
      in->num_default = *out ? 1 : 0;
    }
    return TRUE;
  }
  return cs_json_read_bool(obj->node, key, required, out, obj->file, obj->path, error);
}

gboolean cs_params_string(CsParams *obj, const char *key, gboolean required, const char **out,
                          GError **error)
{
  if (!expect_object(obj, error))
    return FALSE;
  cs_params_mark_known(obj, key);
  if (obj->infos) {
    CsParamInfo *in = record(obj, key, CS_PARAM_STRING, required);
    if (in && *out) {
      in->has_default = TRUE;
      in->str_default = g_strdup(*out);
    }
    if (required && !*out)
      *out = "";
    return TRUE;
  }
  return cs_json_read_string(obj->node, key, required, out, obj->file, obj->path, error);
}

gboolean cs_params_choice(CsParams *obj, const char *key, gboolean required,
                          const char *const *choices, int *out, GError **error)
{
  if (obj->infos && expect_object(obj, error)) {
    cs_params_mark_known(obj, key);
    CsParamInfo *in = record(obj, key, CS_PARAM_CHOICE, required);
    if (in) {
      in->choices = g_ptr_array_new_with_free_func(g_free);
      int n = 0;
      for (; choices[n]; n++)
        g_ptr_array_add(in->choices, g_strdup(choices[n]));
      if (*out >= 0 && *out < n) {
        in->has_default = TRUE;
        in->str_default = g_strdup(choices[*out]);
      }
    }
    if (required && choices[0] && (*out < 0 || choices_count(choices) <= *out))
      *out = 0;
    return TRUE;
  }
  const char *s = NULL;
  if (!cs_params_string(obj, key, required, &s, error))
    return FALSE;
  if (!s)
    return TRUE;
  for (int i = 0; choices[i]; i++)
    if (strcmp(s, choices[i]) == 0) {
      *out = i;
      return TRUE;
    }
  GString *list = g_string_new(NULL);
  int n = 0;
  while (choices[n])
    n++;
  for (int i = 0; i < n; i++)
    g_string_append_printf(list, "%s\"%s\"", i == 0 ? "" : i == n - 1 ? " or " : ", ", choices[i]);
  char *hint = cs_did_you_mean(s, choices, n);
  cs_params_fail_field(obj, key, error, "expected %s, got \"%s\"%s", list->str, s, hint);
  g_free(hint);
  g_string_free(list, TRUE);
  return FALSE;
}

/* ---- the value itself ------------------------------------------------------ */

gboolean cs_params_as_double(const CsParams *p, double min, double max, double *out,
                             GError **error)
{
  return cs_json_value_double(p->node, min, max, out, p->file, p->path, error);
}

gboolean cs_params_as_int(const CsParams *p, int min, int max, int *out, GError **error)
{
  int64_t v;
  if (!cs_json_value_int64(p->node, min, max, &v, p->file, p->path, error))
    return FALSE;
  *out = (int)v;
  return TRUE;
}

gboolean cs_params_as_bool(const CsParams *p, gboolean *out, GError **error)
{
  return cs_json_value_bool(p->node, out, p->file, p->path, error);
}

gboolean cs_params_as_string(const CsParams *p, const char **out, GError **error)
{
  return cs_json_value_string(p->node, out, p->file, p->path, error);
}

gboolean cs_params_check_keys(CsParams *obj, const char *const *known, GError **error)
{
  if (!expect_object(obj, error))
    return FALSE;
  for (int i = 0; known[i]; i++) {
    cs_params_mark_known(obj, known[i]);
    if (obj->infos && strcmp(known[i], "policy") != 0)
      info_for(obj, known[i]);
  }
  return cs_json_check_keys(obj->node, known, obj->file, obj->path, error);
}

gboolean cs_params_fail(const CsParams *p, GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  cs_json_fail(error, p->file, p->path, "%s", msg);
  g_free(msg);
  return FALSE;
}

gboolean cs_params_fail_field(const CsParams *p, const char *key, GError **error,
                              const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  char *path = cs_json_path_key(p->path, key);
  cs_json_fail(error, p->file, path, "%s", msg);
  g_free(path);
  g_free(msg);
  return FALSE;
}

char *cs_params_to_json(CsParams *p)
{
  p->asked_all = TRUE;
  char *text = cJSON_PrintUnformatted(p->node);
  char *out = g_strdup(text);
  cJSON_free(text);
  return out;
}

/* ---- writer ---------------------------------------------------------------- */

struct CsParamsWriter {
  GPtrArray *stack;  /* cJSON * containers, innermost last */
  GArray *detached;  /* gboolean per container: not in the output (its key was taken) */
};

CsParamsWriter *cs_params_writer_new(cJSON *obj)
{
  CsParamsWriter *w = g_new0(CsParamsWriter, 1);
  w->stack = g_ptr_array_new();
  w->detached = g_array_new(FALSE, TRUE, sizeof(gboolean));
  g_ptr_array_add(w->stack, obj);
  gboolean no = FALSE;
  g_array_append_val(w->detached, no);
  return w;
}

void cs_params_writer_free(CsParamsWriter *w)
{
  if (!w)
    return;
  g_ptr_array_free(w->stack, TRUE);
  g_array_free(w->detached, TRUE);
  g_free(w);
}

static void put(CsParamsWriter *w, const char *key, cJSON *item)
{
  cJSON *top = g_ptr_array_index(w->stack, w->stack->len - 1);
  if (cJSON_IsArray(top))
    cJSON_AddItemToArray(top, item);
  else if (key && !cJSON_GetObjectItemCaseSensitive(top, key))
    cJSON_AddItemToObject(top, key, item);
  else
    cJSON_Delete(item); /* no key, or written before: the first value stays */
}

void cs_params_write_double(CsParamsWriter *w, const char *key, double v)
{
  put(w, key, cJSON_CreateNumber(v));
}

void cs_params_write_int(CsParamsWriter *w, const char *key, int64_t v)
{
  put(w, key, cJSON_CreateNumber((double)v));
}

void cs_params_write_bool(CsParamsWriter *w, const char *key, gboolean v)
{
  put(w, key, cJSON_CreateBool(v));
}

void cs_params_write_string(CsParamsWriter *w, const char *key, const char *v)
{
  put(w, key, cJSON_CreateString(v ? v : ""));
}

static void open_container(CsParamsWriter *w, const char *key, cJSON *c)
{
  cJSON *top = g_ptr_array_index(w->stack, w->stack->len - 1);
  /* A key written before: what follows goes to a detached container, dropped at its end. */
  gboolean detached = !cJSON_IsArray(top) && (!key || cJSON_GetObjectItemCaseSensitive(top, key));
  if (!detached)
    put(w, key, c);
  g_ptr_array_add(w->stack, c);
  g_array_append_val(w->detached, detached);
}

void cs_params_write_begin_object(CsParamsWriter *w, const char *key)
{
  open_container(w, key, cJSON_CreateObject());
}

void cs_params_write_begin_array(CsParamsWriter *w, const char *key)
{
  open_container(w, key, cJSON_CreateArray());
}

void cs_params_write_end(CsParamsWriter *w)
{
  g_return_if_fail(w->stack->len > 1);
  guint top = w->stack->len - 1;
  cJSON *c = g_ptr_array_index(w->stack, top);
  if (g_array_index(w->detached, gboolean, top))
    cJSON_Delete(c);
  g_ptr_array_remove_index(w->stack, top);
  g_array_remove_index(w->detached, top);
}

/* ---- A policy's parameter hooks (dispatch policies and controllers) -------- */

gboolean cs_policy_params_parse(const char *kind, const char *name, CsParseFn parse,
                                void (*free_params)(void *), void *user_data, const cJSON *obj,
                                const char *const *known, const char *file, const char *path,
                                void **params, GError **error)
{
  *params = NULL;
  cJSON *empty = obj ? NULL : cJSON_CreateObject();
  CsParams *view = cs_params_new_root(obj ? obj : empty, file, path);
  cs_params_mark_known(view, "policy");
  for (int i = 0; known && known[i]; i++)
    cs_params_mark_known(view, known[i]);
  gboolean ok = TRUE;
  if (parse) {
    GError *perr = NULL;
    *params = parse(view, user_data, &perr);
    if (perr || !*params) {
      if (!perr)
        g_set_error(&perr, CS_ERROR, CS_ERROR_POLICY,
                    "%s \"%s\" returned no parameters and no error", kind, name);
      if (*params && free_params)
        free_params(*params);
      *params = NULL;
      /* Errors from the parameter readers name the file and path already. */
      if (perr->domain == CS_ERROR && perr->code != CS_ERROR_POLICY)
        g_propagate_error(error, perr);
      else {
        g_set_error(error, CS_ERROR, CS_ERROR_POLICY, "%s: %s: %s", file, path, perr->message);
        g_error_free(perr);
      }
      ok = FALSE;
    }
  }
  if (ok && !cs_params_check_asked(view, error)) {
    if (*params && free_params)
      free_params(*params);
    *params = NULL;
    ok = FALSE;
  }
  cs_params_free(view);
  cJSON_Delete(empty);
  return ok;
}

char *cs_policy_params_json(CsWriteParamsFn describe, const void *params)
{
  cJSON *out = cJSON_CreateObject();
  if (describe) {
    CsParamsWriter *w = cs_params_writer_new(out);
    describe(params, w);
    cs_params_writer_free(w);
  }
  char *text = cJSON_PrintUnformatted(out);
  char *copy = g_strdup(text);
  cJSON_free(text);
  cJSON_Delete(out);
  return copy;
}

void cs_policy_params_fill(CsWriteParamsFn write_defaults, const void *params, cJSON *obj)
{
  if (!write_defaults)
    return;
  /* The writer keeps the first value of a field: the scenario's own. */
  CsParamsWriter *w = cs_params_writer_new(obj);
  write_defaults(params, w);
  cs_params_writer_free(w);
}
