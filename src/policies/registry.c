/* Registries of policies (clustersim/registry.h), and the lookups the
 * scenario compiler makes through them. A scenario without a registry sees
 * the built-in policies: the const tables of placement_registry.c and
 * dispatch/registry.c, so that nothing global is ever written. */
#include <string.h>

#include "clustersim/plugin.h"
#include "common/json_input.h"
#include "common/params_internal.h"
#include "control/control.h"
#include "dispatch/dispatch.h"
#include "llm/llm_sched.h"
#include "placement/placement.h"
#include "registry_internal.h"

typedef struct {
  const void *policy; /* CsPlacementPolicy, CsDispatchPolicy or CsControllerPolicy */
  const char *name;
  void *user_data;
  int origin; /* ORIGIN_BUILTIN, ORIGIN_PROGRAM, or the index of the plug-in that added it */
} Entry;

enum { ORIGIN_BUILTIN = -2, ORIGIN_PROGRAM = -1 };

typedef struct {
  char *path;   /* absolute, symbolic links resolved */
  char *sha256; /* of its bytes when loaded */
} Plugin;

struct CsRegistry {
  gint refs;
  GArray *placement; /* Entry, registration order (built-ins first) */
  GArray *dispatch;  /* Entry */
  GArray *control;   /* Entry */
  GArray *llm;       /* Entry: LLM replica schedulers added (none built in) */
  GArray *plugins;   /* Plugin, load order */
  /* While a plug-in's cs_plugin_init runs (plugin.c): the origin of what it
   * adds, the lengths to roll back to, and the first add it had refused. */
  int loading; /* ORIGIN_PROGRAM when no plug-in is loading */
  guint mark[4];
  GError *load_error;
};

static void add(GArray *a, const void *policy, const char *name, void *user_data, int origin)
{
  Entry e = { .policy = policy, .name = name, .user_data = user_data, .origin = origin };
  g_array_append_val(a, e);
}

static void plugin_clear(gpointer p)
{
  Plugin *pl = p;
  g_free(pl->path);
  g_free(pl->sha256);
}

CsRegistry *cs_registry_new(void)
{
  CsRegistry *r = g_new0(CsRegistry, 1);
  r->refs = 1;
  r->placement = g_array_new(FALSE, FALSE, sizeof(Entry));
  r->dispatch = g_array_new(FALSE, FALSE, sizeof(Entry));
  const CsPlacementPolicy *const *pl = cs_placement_policy_list();
  for (int i = 0; pl[i]; i++)
    add(r->placement, pl[i], pl[i]->name, NULL, ORIGIN_BUILTIN);
  const CsDispatchPolicy *const *d = cs_dispatch_policy_list();
  for (int i = 0; d[i]; i++)
    add(r->dispatch, d[i], d[i]->name, NULL, ORIGIN_BUILTIN);
  r->control = g_array_new(FALSE, FALSE, sizeof(Entry));
  const CsControllerPolicy *const *k = cs_controller_policy_list();
  for (int i = 0; k[i]; i++)
    add(r->control, k[i], k[i]->name, NULL, ORIGIN_BUILTIN);
  r->llm = g_array_new(FALSE, FALSE, sizeof(Entry));
  r->plugins = g_array_new(FALSE, FALSE, sizeof(Plugin));
  g_array_set_clear_func(r->plugins, plugin_clear);
  r->loading = ORIGIN_PROGRAM;
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
  g_array_free(r->llm, TRUE);
  g_array_free(r->plugins, TRUE);
  g_free(r);
}

static const Entry *find(const GArray *a, const char *name)
{
  for (guint i = 0; i < a->len; i++)
    if (strcmp(g_array_index(a, Entry, i).name, name) == 0)
      return &g_array_index(a, Entry, i);
  return NULL;
}

static gboolean check_name_text(const char *kind, const char *name, GError **error);

/* Who added a policy, for the message that refuses its name to another. */
static char *origin_name(const CsRegistry *r, int origin)
{
  if (origin == ORIGIN_BUILTIN)
    return g_strdup("a built-in policy");
  if (origin == ORIGIN_PROGRAM)
    return g_strdup("a policy the program added");
  char *base = g_path_get_basename(g_array_index(r->plugins, Plugin, origin).path);
  char *s = g_strdup_printf("a policy of plug-in %s", base);
  g_free(base);
  return s;
}

/* Keeps the first refusal of a plug-in's add (plugin.c reports it even when
 * cs_plugin_init ignores it). Returns FALSE. */
static gboolean refused(CsRegistry *r, GError **error, GError *err)
{
  if (r->loading != ORIGIN_PROGRAM && !r->load_error)
    r->load_error = g_error_copy(err);
  g_propagate_error(error, err);
  return FALSE;
}

/* A name a scenario can write and a shell can pass without quoting, and not
 * taken. */
static gboolean check_name(CsRegistry *r, const char *kind, const char *name, const GArray *taken,
                           GError **error)
{
  GError *err = NULL;
  const Entry *e = name ? find(taken, name) : NULL;
  if (e) {
    char *by = origin_name(r, e->origin);
    char *who = r->loading >= 0 ? origin_name(r, r->loading) : NULL;
    g_set_error(&err, CS_ERROR, CS_ERROR_INVALID,
                "%s policy \"%s\": the registry already has a policy of that name (%s)%s%s",
                kind, name, by, who ? ", so it cannot be " : "", who ? who : "");
    g_free(by);
    g_free(who);
    return refused(r, error, err);
  }
  if (!check_name_text(kind, name, &err))
    return refused(r, error, err);
  return TRUE;
}

static gboolean check_name_text(const char *kind, const char *name, GError **error)
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
  return TRUE;
}

gboolean cs_registry_add_placement(CsRegistry *r, const CsPlacementPolicy *policy,
                                   void *user_data, GError **error)
{
  g_return_val_if_fail(r != NULL && policy != NULL, FALSE);
  if (!check_name(r, "placement", policy->name, r->placement, error))
    return FALSE;
  if (!policy->place) {
    return refused(r, error, g_error_new(CS_ERROR, CS_ERROR_INVALID,
                                         "placement policy \"%s\": no place callback",
                                         policy->name));
  }
  add(r->placement, policy, policy->name, user_data, r->loading);
  return TRUE;
}

gboolean cs_registry_add_dispatch(CsRegistry *r, const CsDispatchPolicy *policy, void *user_data,
                                  GError **error)
{
  g_return_val_if_fail(r != NULL && policy != NULL, FALSE);
  if (!check_name(r, "dispatch", policy->name, r->dispatch, error))
    return FALSE;
  const char *missing = !policy->create       ? "create"
                        : !policy->destroy    ? "destroy"
                        : !policy->on_request ? "on_request"
                        : policy->parse && !policy->free_params ? "free_params (it has parse)"
                                                                : NULL;
  if (missing) {
    return refused(r, error, g_error_new(CS_ERROR, CS_ERROR_INVALID,
                                         "dispatch policy \"%s\": no %s callback", policy->name,
                                         missing));
  }
  add(r->dispatch, policy, policy->name, user_data, r->loading);
  return TRUE;
}

gboolean cs_registry_add_controller(CsRegistry *r, const CsControllerPolicy *policy,
                                    void *user_data, GError **error)
{
  g_return_val_if_fail(r != NULL && policy != NULL, FALSE);
  if (!check_name(r, "controller", policy->name, r->control, error))
    return FALSE;
  const char *missing = !policy->parse        ? "parse"
                        : !policy->create     ? "create"
                        : !policy->on_timer   ? "on_timer"
                        : !policy->free_params ? "free_params"
                                                : NULL;
  if (missing) {
    return refused(r, error, g_error_new(CS_ERROR, CS_ERROR_INVALID,
                                         "controller policy \"%s\": no %s callback", policy->name,
                                         missing));
  }
  add(r->control, policy, policy->name, user_data, r->loading);
  return TRUE;
}

gboolean cs_registry_add_llm_scheduler(CsRegistry *r, const CsLlmSchedulerPolicy *policy,
                                       void *user_data, GError **error)
{
  g_return_val_if_fail(r != NULL && policy != NULL, FALSE);
  /* The built-in schedulers are no entries (they run inside the library),
   * but their names are theirs. */
  CsLlmSchedPolicy builtin;
  if (policy->name != NULL && cs_llm_sched_policy_parse(policy->name, &builtin, NULL)) {
    char *who = r->loading >= 0 ? origin_name(r, r->loading) : NULL;
    GError *err = g_error_new(CS_ERROR, CS_ERROR_INVALID,
                              "LLM scheduler policy \"%s\": the registry already has a policy "
                              "of that name (a built-in policy)%s%s",
                              policy->name, who ? ", so it cannot be " : "", who ? who : "");
    g_free(who);
    return refused(r, error, err);
  }
  if (!check_name(r, "LLM scheduler", policy->name, r->llm, error))
    return FALSE;
  const char *missing = !policy->schedule ? "schedule"
                        : policy->parse && !policy->free_params ? "free_params (it has parse)"
                        : policy->create && !policy->destroy ? "destroy (it has create)"
                                                             : NULL;
  if (missing) {
    return refused(r, error, g_error_new(CS_ERROR, CS_ERROR_INVALID,
                                         "LLM scheduler policy \"%s\": no %s callback",
                                         policy->name, missing));
  }
  add(r->llm, policy, policy->name, user_data, r->loading);
  return TRUE;
}

const CsLlmSchedulerPolicy *cs_registry_llm_scheduler(const CsRegistry *r, const char *name,
                                                      void **user_data)
{
  const Entry *e = r && name ? find(r->llm, name) : NULL;
  if (user_data)
    *user_data = e ? e->user_data : NULL;
  return e ? e->policy : NULL;
}

int cs_registry_n_llm_scheduler(const CsRegistry *r)
{
  return r ? (int)r->llm->len : 0;
}

const CsLlmSchedulerPolicy *cs_registry_llm_scheduler_at(const CsRegistry *r, int i)
{
  return r && i >= 0 && i < (int)r->llm->len ? g_array_index(r->llm, Entry, i).policy : NULL;
}

char *cs_registry_llm_scheduler_names(const CsRegistry *r)
{
  /* The built-ins as llm_sched names them, then Vidur's name of static. */
  GString *names = g_string_new(NULL);
  for (int p = CS_LLM_SCHED_VLLM; p < CS_LLM_SCHED_CUSTOM; p++)
    g_string_append_printf(names, "%s, ", cs_llm_sched_policy_name((CsLlmSchedPolicy)p));
  g_string_append(names, "faster_transformer");
  for (guint i = 0; r && i < r->llm->len; i++)
    g_string_append_printf(names, ", %s", g_array_index(r->llm, Entry, i).name);
  return g_string_free(names, FALSE);
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

/* ---- plug-ins (plugin.c loads them) ------------------------------------------- */

int cs_registry_n_plugins(const CsRegistry *r)
{
  return r ? (int)r->plugins->len : 0;
}

const char *cs_registry_plugin_path(const CsRegistry *r, int i)
{
  g_return_val_if_fail(r != NULL, NULL);
  return i >= 0 && i < (int)r->plugins->len ? g_array_index(r->plugins, Plugin, i).path : NULL;
}

const char *cs_registry_plugin_sha256(const CsRegistry *r, int i)
{
  g_return_val_if_fail(r != NULL, NULL);
  return i >= 0 && i < (int)r->plugins->len ? g_array_index(r->plugins, Plugin, i).sha256
                                            : NULL;
}

int cs_registry_find_plugin(const CsRegistry *r, const char *path)
{
  for (guint i = 0; r && i < r->plugins->len; i++)
    if (strcmp(g_array_index(r->plugins, Plugin, i).path, path) == 0)
      return (int)i;
  return -1;
}

gboolean cs_registry_plugin_loading(const CsRegistry *r)
{
  return r->loading != ORIGIN_PROGRAM;
}

void cs_registry_plugin_begin(CsRegistry *r, const char *path, const char *sha256)
{
  Plugin p = { .path = g_strdup(path), .sha256 = g_strdup(sha256) };
  g_array_append_val(r->plugins, p);
  r->loading = (int)r->plugins->len - 1;
  r->mark[0] = r->placement->len;
  r->mark[1] = r->dispatch->len;
  r->mark[2] = r->control->len;
  r->mark[3] = r->llm->len;
  g_clear_error(&r->load_error);
}

GError *cs_registry_plugin_end(CsRegistry *r, gboolean keep)
{
  GError *err = r->load_error;
  r->load_error = NULL;
  r->loading = ORIGIN_PROGRAM;
  if (keep && !err)
    return NULL;
  g_array_set_size(r->placement, r->mark[0]);
  g_array_set_size(r->dispatch, r->mark[1]);
  g_array_set_size(r->control, r->mark[2]);
  g_array_set_size(r->llm, r->mark[3]);
  g_array_set_size(r->plugins, r->plugins->len - 1);
  return err;
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
