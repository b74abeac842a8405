/* "search.grid" expanded into deployments (llm_search_grid.h). */
#include <string.h>

#include "common/json_input.h"
#include "llm_search_grid.h"

/* The fields a deployment may set (llm_search_config.c's read_deployment),
 * but its name. */
static const char *const FIELDS[] = { "model", "device", "node", "tensor_parallel",
                                      "pipeline_parallel", "replicas", "router", "scheduler",
                                      "max_tokens", "memory_margin", "attention_outside_grid",
                                      "max_replicas", NULL };
static const char *const BUNDLE_KEYS[] = { "name", "model", "device", "node", "tensor_parallel",
                                           "pipeline_parallel", "replicas", "router",
                                           "scheduler", "max_tokens", "memory_margin",
                                           "attention_outside_grid", "max_replicas", NULL };

static gboolean is_field(const char *k)
{
  for (int i = 0; FIELDS[i]; i++)
    if (strcmp(FIELDS[i], k) == 0)
      return TRUE;
  return g_str_has_prefix(k, "scheduler.") && k[10] != '\0' && strchr(k + 10, '.') == NULL;
}

/* The label of one value of field key (its last component). */
static void append_label(GString *s, const char *key, const cJSON *v)
{
  const char *dot = strrchr(key, '.');
  const char *last = dot ? dot + 1 : key;
  if (s->len > 0)
    g_string_append_c(s, ' ');
  if (cJSON_IsString(v)) {
    g_string_append(s, v->valuestring);
  } else if (cJSON_IsNumber(v)) {
    if (strcmp(last, "tensor_parallel") == 0)
      g_string_append_printf(s, "TP%g", v->valuedouble);
    else if (strcmp(last, "pipeline_parallel") == 0)
      g_string_append_printf(s, "PP%g", v->valuedouble);
    else if (strcmp(last, "batch_size_cap") == 0)
      g_string_append_printf(s, "cap %g", v->valuedouble);
    else if (strcmp(last, "chunk_size") == 0)
      g_string_append_printf(s, "chunk %g", v->valuedouble);
    else
      g_string_append_printf(s, "%s=%g", last, v->valuedouble);
  } else if (cJSON_IsObject(v)) {
    const cJSON *name = cJSON_GetObjectItem(v, "name");
    if (cJSON_IsString(name)) {
      g_string_append(s, name->valuestring);
      return;
    }
    gsize before = s->len;
    for (const cJSON *f = v->child; f; f = f->next) {
      GString *sub = g_string_new(NULL);
      append_label(sub, f->string, f);
      if (s->len > before)
        g_string_append_c(s, ' ');
      g_string_append(s, sub->str);
      g_string_free(sub, TRUE);
    }
  } else {
    char *t = cJSON_PrintUnformatted(v);
    g_string_append_printf(s, "%s=%s", last, t);
    cJSON_free(t);
  }
}

/* The fields an option of axis sets, into set ("scheduler.KEY" for a
 * scheduler's). */
static void fields_set(const char *axis, const cJSON *opt, gboolean bundle, GPtrArray *set)
{
  if (!bundle && strcmp(axis, "scheduler") != 0) {
    g_ptr_array_add(set, g_strdup(axis));
    return;
  }
  if (!bundle) {
    for (const cJSON *f = opt->child; f; f = f->next)
      g_ptr_array_add(set, g_strdup_printf("scheduler.%s", f->string));
    return;
  }
  for (const cJSON *f = opt->child; f; f = f->next) {
    if (strcmp(f->string, "name") == 0)
      continue;
    if (strcmp(f->string, "scheduler") == 0)
      fields_set("scheduler", f, FALSE, set);
    else
      g_ptr_array_add(set, g_strdup(f->string));
  }
}

/* Sets field key (a field or "scheduler.KEY") of deployment d to v. */
static void set_field(cJSON *d, const char *key, const cJSON *v)
{
  if (strcmp(key, "scheduler") == 0 || g_str_has_prefix(key, "scheduler.")) {
    cJSON *sc = cJSON_GetObjectItem(d, "scheduler");
    if (sc == NULL)
      sc = cJSON_AddObjectToObject(d, "scheduler");
    if (key[9] == '.') {
      cJSON_DeleteItemFromObject(sc, key + 10);
      cJSON_AddItemToObject(sc, key + 10, cJSON_Duplicate(v, TRUE));
    } else {
      for (const cJSON *f = v->child; f; f = f->next) {
        cJSON_DeleteItemFromObject(sc, f->string);
        cJSON_AddItemToObject(sc, f->string, cJSON_Duplicate(f, TRUE));
      }
    }
    return;
  }
  cJSON_DeleteItemFromObject(d, key);
  cJSON_AddItemToObject(d, key, cJSON_Duplicate(v, TRUE));
}

static void apply(cJSON *d, const char *axis, const cJSON *opt, gboolean bundle)
{
  if (!bundle) {
    set_field(d, axis, opt);
    return;
  }
  for (const cJSON *f = opt->child; f; f = f->next)
    if (strcmp(f->string, "name") != 0)
      set_field(d, f->string, f);
}

/* One axis's options checked: a non-empty array of distinct options, each
 * of the axis's kind, their labels distinct. */
static gboolean check_axis(const char *axis, const cJSON *opts, const char *file,
                           const char *path, GError **error)
{
  gboolean bundle = !is_field(axis);
  if (!cJSON_IsArray(opts) || cJSON_GetArraySize(opts) < 1)
    return cs_json_fail(error, file, path, "expected a non-empty array of %s, got %s",
                        bundle ? "objects of deployment fields (a bundle: \"AXIS\" is no "
                                 "deployment field)" : "the field's values",
                        cJSON_IsArray(opts) ? "an empty array" : cs_json_type_name(opts));
  int n = cJSON_GetArraySize(opts);
  gboolean ok = TRUE;
  char **labels = g_new0(char *, n);
  for (int j = 0; j < n && ok; j++) {
    const cJSON *o = cJSON_GetArrayItem(opts, j);
    char *op = cs_json_path_index(path, j);
    if (bundle) {
      ok = cs_json_expect_object(o, file, op, error) &&
           cs_json_check_keys(o, BUNDLE_KEYS, file, op, error);
      const cJSON *nm = ok ? cJSON_GetObjectItem(o, "name") : NULL;
      if (ok && nm != NULL && !cJSON_IsString(nm))
        ok = cs_json_fail(error, file, op, "name: expected a string, got %s",
                          cs_json_type_name(nm));
      const cJSON *sc = ok ? cJSON_GetObjectItem(o, "scheduler") : NULL;
      if (ok && sc != NULL && !cJSON_IsObject(sc))
        ok = cs_json_fail(error, file, op, "scheduler: expected an object, got %s",
                          cs_json_type_name(sc));
      if (ok && cJSON_GetArraySize(o) == (nm != NULL))
        ok = cs_json_fail(error, file, op, "expected at least one deployment field");
    } else if (strcmp(axis, "scheduler") == 0) {
      ok = cs_json_expect_object(o, file, op, error);
    } else if (!(cJSON_IsString(o) || cJSON_IsNumber(o) || cJSON_IsBool(o))) {
      ok = cs_json_fail(error, file, op, "expected a value of %s (a string or a number), got %s",
                        axis, cs_json_type_name(o));
    }
    for (int k = 0; ok && k < j; k++)
      if (cJSON_Compare(o, cJSON_GetArrayItem(opts, k), TRUE))
        ok = cs_json_fail(error, file, op, "expected distinct options, got a repeat of [%d]", k);
    if (ok) {
      GString *s = g_string_new(NULL);
      append_label(s, axis, o);
      labels[j] = g_string_free(s, FALSE);
      for (int k = 0; ok && k < j; k++)
        if (strcmp(labels[j], labels[k]) == 0)
          ok = cs_json_fail(error, file, op, "expected a label of its own, got \"%s\", as [%d] "
                            "(give the options a \"name\")", labels[j], k);
    }
    g_free(op);
  }
  for (int j = 0; j < n; j++)
    g_free(labels[j]);
  g_free(labels);
  return ok;
}

void cs_llm_grid_free(CsLlmGrid *g)
{
  if (g == NULL)
    return;
  for (int i = 0; i < g->n_points; i++) {
    cJSON_Delete(g->points[i].deployment);
    cJSON_Delete(g->points[i].options);
    g_free(g->points[i].name);
    g_free(g->points[i].choice);
  }
  g_free(g->points);
  for (int a = 0; a < g->n_axes; a++)
    g_free(g->axis[a]);
  g_free(g->axis);
  g_free(g->options);
  g_free(g->n_options);
  g_free(g);
}

CsLlmGrid *cs_llm_grid_expand(const cJSON *grid, const char *file, GError **error)
{
  const char *path = "search.grid";
  if (!cs_json_expect_object(grid, file, path, error))
    return NULL;
  if (grid->child == NULL) {
    cs_json_fail(error, file, path, "expected at least one axis, {\"FIELD\": [OPTION, ...], "
                 "...}, got {}");
    return NULL;
  }
  CsLlmGrid *g = g_new0(CsLlmGrid, 1);
  g->n_axes = cJSON_GetArraySize(grid);
  g->axis = g_new0(char *, g->n_axes);
  g->options = g_new0(const cJSON *, g->n_axes);
  g->n_options = g_new0(int, g->n_axes);
  GHashTable *owner = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  gboolean ok = TRUE;
  double size = 1;
  int a = 0;
  for (const cJSON *ax = grid->child; ax && ok; ax = ax->next, a++) {
    char *ap = cs_json_path_key(path, ax->string);
    g->axis[a] = g_strdup(ax->string);
    ok = check_axis(ax->string, ax, file, ap, error);
    if (ok) {
      g->options[a] = ax;
      g->n_options[a] = cJSON_GetArraySize(ax);
      size *= g->n_options[a];
      GPtrArray *set = g_ptr_array_new_with_free_func(g_free);
      for (const cJSON *o = ax->child; o; o = o->next)
        fields_set(ax->string, o, !is_field(ax->string), set);
      for (guint k = 0; k < set->len && ok; k++) {
        const char *f = g_ptr_array_index(set, k);
        const char *other = g_hash_table_lookup(owner, f);
        if (other != NULL && strcmp(other, ax->string) != 0)
          ok = cs_json_fail(error, file, ap, "expected no field another axis sets, got %s, "
                            "which \"%s\" sets too", f, other);
        else if (other == NULL)
          g_hash_table_insert(owner, g_strdup(f), g->axis[a]);
      }
      g_ptr_array_free(set, TRUE);
    }
    g_free(ap);
  }
  g_hash_table_destroy(owner);
  if (ok && size > CS_LLM_GRID_MAX)
    ok = cs_json_fail(error, file, path, "expected at most %d combinations, got %.0f (the "
                      "product of the lists' lengths)", CS_LLM_GRID_MAX, size);
  if (!ok) {
    cs_llm_grid_free(g);
    return NULL;
  }
  g->n_points = (int)size;
  g->points = g_new0(CsLlmGridPoint, g->n_points);
  for (int i = 0; i < g->n_points; i++) {
    CsLlmGridPoint *p = &g->points[i];
    p->choice = g_new0(int, g->n_axes);
    /* itertools.product's order: the last axis varies fastest. */
    for (int k = g->n_axes - 1, rest = i; k >= 0; k--) {
      p->choice[k] = rest % g->n_options[k];
      rest /= g->n_options[k];
    }
    p->deployment = cJSON_CreateObject();
    p->options = cJSON_CreateObject();
    GString *name = g_string_new(NULL);
    for (int k = 0; k < g->n_axes; k++) {
      const cJSON *o = cJSON_GetArrayItem(g->options[k], p->choice[k]);
      apply(p->deployment, g->axis[k], o, !is_field(g->axis[k]));
      cJSON_AddItemToObject(p->options, g->axis[k], cJSON_Duplicate(o, TRUE));
      append_label(name, g->axis[k], o);
    }
    p->name = g_string_free(name, FALSE);
  }
  return g;
}
