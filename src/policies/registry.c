/* Registries of policies (clustersim/registry.h), and the lookups the
 * scenario compiler makes through them. A scenario without a registry sees
 * the built-in policies: the const tables of placement_registry.c and
 * dispatch/registry.c, so that nothing global is ever written. */
#include <string.h>

#include "common/json_input.h"
#include "common/params_internal.h"
#include "control/control.h"
#include "dispatch/dispatch.h"
#include "placement/placement.h"
#include "registry_internal.h"

typedef struct {
  const void *policy; /* CsPlacementPolicy, CsDispatchPolicy or CsControllerPolicy */
  const char *name;
  void *user_data;
} Entry;

struct CsRegistry {
  gint refs;
  GArray *placement; /* Entry, registration order (built-ins first) */
  GArray *dispatch;  /* Entry */
  GArray *control;   /* Entry */
};

static void add(GArray *a, const void *policy, const char *name, void *user_data)
{
  Entry e = { .policy = policy, .name = name, .user_data = user_data };
  g_array_append_val(a, e);
}

CsRegistry *cs_registry_new(void)
{
  CsRegistry *r = g_new0(CsRegistry, 1);
  r->refs = 1;
  r->placement = g_array_new(FALSE, FALSE, sizeof(Entry));
  r->dispatch = g_array_new(FALSE, FALSE, sizeof(Entry));
  const CsPlacementPolicy *const *pl = cs_placement_policy_list();
  for (int i = 0; pl[i]; i++)
    add(r->placement, pl[i], pl[i]->name, NULL);
  const CsDispatchPolicy *const *d = cs_dispatch_policy_list();
  for (int i = 0; d[i]; i++)
    add(r->dispatch, d[i], d[i]->name, NULL);
  r->control = g_array_new(FALSE, FALSE, sizeof(Entry));
  const CsControllerPolicy *const *k = cs_controller_policy_list();
  for (int i = 0; k[i]; i++)
    add(r->control, k[i], k[i]->name, NULL);
  return r;
}

CsRegistry *cs_registry_ref(CsRegistry *r)
{
  g_return_val_if_fail(r != NULL, NULL);
  g_atomic_int_inc(&r->refs);
  return r;
}

void cs_registry_unref(CsRegistry *r)
{
  if (!r || !g_atomic_int_dec_and_test(&r->refs))
    return;
  g_array_free(r->placement, TRUE);
  g_array_free(r->dispatch, TRUE);
  g_array_free(r->control, TRUE);
  g_free(r);
}

static const Entry *find(const GArray *a, const char *name)
{
  for (guint i = 0; i < a->len; i++)
    if (strcmp(g_array_index(a, Entry, i).name, name) == 0)
      return &g_array_index(a, Entry, i);
  return NULL;
}

/* A name a scenario can write and a shell can pass without quoting. */
static gboolean check_name(const char *kind, const char *name, const GArray *taken,
                           GError **error)
{
  if (!name || !*name) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID, "%s policy: empty name", kind);
    return FALSE;
  }
  for (const char *c = name; *c; c++)
    if (!(g_ascii_isalnum(*c) || *c == '-' || *c == '_' || *c == '.')) {
      g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                  "%s policy \"%s\": a name holds letters, digits, '-', '_' and '.' only", kind,
                  name);
      return FALSE;
    }
  if (find(taken, name)) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "%s policy \"%s\": the registry already has a policy of that name", kind, name);
    return FALSE;
  }
  return TRUE;
}

gboolean cs_registry_add_placement(CsRegistry *r, const CsPlacementPolicy *policy,
                                   void *user_data, GError **error)
{
  g_return_val_if_fail(r != NULL && policy != NULL, FALSE);
  if (!check_name("placement", policy->name, r->placement, error))
    return FALSE;
  if (!policy->place) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID, "placement policy \"%s\": no place callback",
                policy->name);
    return FALSE;
  }
  add(r->placement, policy, policy->name, user_data);
  return TRUE;
}

gboolean cs_registry_add_dispatch(CsRegistry *r, const CsDispatchPolicy *policy, void *user_data,
                                  GError **error)
{
  g_return_val_if_fail(r != NULL && policy != NULL, FALSE);
  if (!check_name("dispatch", policy->name, r->dispatch, error))
    return FALSE;
  const char *missing = !policy->create       ? "create"
                        : !policy->destroy    ? "destroy"
                        : !policy->on_request ? "on_request"
                        : policy->parse && !policy->free_params ? "free_params (it has parse)"
                                                                : NULL;
  if (missing) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID, "dispatch policy \"%s\": no %s callback",
                policy->name, missing);
    return FALSE;
  }
  add(r->dispatch, policy, policy->name, user_data);
  return TRUE;
}

gboolean cs_registry_add_controller(CsRegistry *r, const CsControllerPolicy *policy,
                                    void *user_data, GError **error)
{
  g_return_val_if_fail(r != NULL && policy != NULL, FALSE);
  if (!check_name("controller", policy->name, r->control, error))
    return FALSE;
  const char *missing = !policy->parse        ? "parse"
                        : !policy->create     ? "create"
                        : !policy->on_timer   ? "on_timer"
                        : !policy->free_params ? "free_params"
                                                : NULL;
  if (missing) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID, "controller policy \"%s\": no %s callback",
                policy->name, missing);
    return FALSE;
  }
  add(r->control, policy, policy->name, user_data);
  return TRUE;
}

const CsControllerPolicy *cs_registry_controller(const CsRegistry *r, const char *name,
                                                 void **user_data)
{
  const Entry *e = find(r->control, name);
  if (user_data)
    *user_data = e ? e->user_data : NULL;
  return e ? e->policy : NULL;
}

int cs_registry_n_controller(const CsRegistry *r)
{
  return (int)r->control->len;
}

const CsControllerPolicy *cs_registry_controller_at(const CsRegistry *r, int i)
{
  return i >= 0 && i < (int)r->control->len ? g_array_index(r->control, Entry, i).policy : NULL;
}

const CsPlacementPolicy *cs_registry_placement(const CsRegistry *r, const char *name,
                                               void **user_data)
{
  const Entry *e = find(r->placement, name);
  if (user_data)
    *user_data = e ? e->user_data : NULL;
  return e ? e->policy : NULL;
}

const CsDispatchPolicy *cs_registry_dispatch(const CsRegistry *r, const char *name,
                                             void **user_data)
{
  const Entry *e = find(r->dispatch, name);
  if (user_data)
    *user_data = e ? e->user_data : NULL;
  return e ? e->policy : NULL;
}

int cs_registry_n_placement(const CsRegistry *r)
{
  return (int)r->placement->len;
}

const CsPlacementPolicy *cs_registry_placement_at(const CsRegistry *r, int i)
{
  return i >= 0 && i < (int)r->placement->len ? g_array_index(r->placement, Entry, i).policy
                                              : NULL;
}

int cs_registry_n_dispatch(const CsRegistry *r)
{
  return (int)r->dispatch->len;
}

const CsDispatchPolicy *cs_registry_dispatch_at(const CsRegistry *r, int i)
{
  return i >= 0 && i < (int)r->dispatch->len ? g_array_index(r->dispatch, Entry, i).policy
                                             : NULL;
}

/* ---- lookups of the scenario compiler ----------------------------------------- */

const CsPlacementPolicy *cs_registry_find_placement(const CsRegistry *r, const char *name,
                                                    void **user_data)
{
  if (r)
    return cs_registry_placement(r, name, user_data);
  if (user_data)
    *user_data = NULL;
  return cs_placement_policy_lookup(name);
}

const CsDispatchPolicy *cs_registry_find_dispatch(const CsRegistry *r, const char *name,
                                                  void **user_data)
{
  if (r)
    return cs_registry_dispatch(r, name, user_data);
  if (user_data)
    *user_data = NULL;
  return cs_dispatch_policy_lookup(name);
}

const CsControllerPolicy *cs_registry_find_controller(const CsRegistry *r, const char *name,
                                                      void **user_data)
{
  if (r)
    return cs_registry_controller(r, name, user_data);
  if (user_data)
    *user_data = NULL;
  return cs_controller_policy_lookup(name);
}

char *cs_registry_controller_names(const CsRegistry *r)
{
  GString *names = g_string_new(NULL);
  if (r)
    for (guint i = 0; i < r->control->len; i++)
      g_string_append_printf(names, "%s%s", i ? ", " : "", g_array_index(r->control, Entry, i).name);
  else
    for (const CsControllerPolicy *const *all = cs_controller_policy_list(); *all; all++)
      g_string_append_printf(names, "%s%s", names->len ? ", " : "", (*all)->name);
  return g_string_free(names, FALSE);
}

char *cs_registry_names(const CsRegistry *r, gboolean dispatch)
{
  GString *names = g_string_new(NULL);
  if (r) {
    const GArray *a = dispatch ? r->dispatch : r->placement;
    for (guint i = 0; i < a->len; i++)
      g_string_append_printf(names, "%s%s", i ? ", " : "", g_array_index(a, Entry, i).name);
  } else if (dispatch) {
    const CsDispatchPolicy *const *all = cs_dispatch_policy_list();
    for (int i = 0; all[i]; i++)
      g_string_append_printf(names, "%s%s", i ? ", " : "", all[i]->name);
  } else {
    const CsPlacementPolicy *const *all = cs_placement_policy_list();
    for (int i = 0; all[i]; i++)
      g_string_append_printf(names, "%s%s", i ? ", " : "", all[i]->name);
  }
  return g_string_free(names, FALSE);
}

/* ---- parameter hooks shared by dispatch policies and controllers ------------ */

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
