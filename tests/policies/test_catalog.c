/* The policy catalogue (src/policies/catalog.c, `clustersim policies`):
 * - it lists exactly the policies of the registry, built-in and added, in
 *   registration order, through the public listing functions;
 * - a plug-in's parameters come out as its readers ask for them: type,
 *   required, range, choices, the default its *out held, its doc lines;
 * - in describing mode a reader of a required field returns TRUE and leaves
 *   *out alone (a required one gets a value in range), so the policy reads
 *   on (the catalogue sees every field);
 * - outside describing mode the doc calls change nothing. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/params_internal.h"
#include "policies/catalog.h"

/* ---- a plug-in of each kind ---------------------------------------------------- */

static CsPlacement *plug_place(const CsPlacementProblem *pb, CsParams *params, void *ud,
                               GError **error)
{
  (void)ud;
  double alpha = 0.25;
  int steps = 7;
  cs_params_doc(params, "alpha", "the plug-in's weight");
  cs_params_doc(params, "table", "an object of its own");
  cs_params_doc_default(params, "table", "built in");
  if (!cs_params_double(params, "alpha", FALSE, 0.0, 1.0, &alpha, error) ||
      !cs_params_int(params, "steps", TRUE, 1, 99, &steps, error))
    return NULL;
  cs_params_get(params, "table");
  /* Reached in describing mode too (the required steps did not stop it);
   * the empty problem has no model. */
  return cs_placement_new(pb->n_models);
}

static const CsPlacementPolicy plug_placement = {
  .name = "plug-place", .description = "a plug-in placement", .place = plug_place,
};

static void *plug_parse(CsParams *params, void *ud, GError **error)
{
  (void)ud;
  static const char *const modes[] = { "slow", "fast", NULL };
  int mode = 1;
  gboolean on = TRUE;
  const char *label = "x";
  cs_params_doc(params, "mode", "how it goes");
  if (!cs_params_choice(params, "mode", FALSE, modes, &mode, error) ||
      !cs_params_bool(params, "on", FALSE, &on, error) ||
      !cs_params_string(params, "label", FALSE, &label, error))
    return NULL;
  return g_new0(int, 1);
}

static void *dummy_create(CsEngine *e, const void *p, void *ud)
{
  (void)e, (void)p, (void)ud;
  return NULL;
}
static void dummy_destroy(void *s)
{
  (void)s;
}
static void dummy_request(void *s, int m, const CsRequest *r)
{
  (void)s, (void)m, (void)r;
}

static const CsDispatchPolicy plug_dispatch = {
  .name = "plug-dispatch", .description = "a plug-in dispatch policy", .parse = plug_parse,
  .free_params = g_free, .create = dummy_create, .destroy = dummy_destroy,
  .on_request = dummy_request,
};

static const cJSON *find_policy(const cJSON *all, const char *kind, const char *name)
{
  const cJSON *p;
  cJSON_ArrayForEach(p, all)
    if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(p, "kind")), kind) == 0 &&
        strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(p, "name")), name) == 0)
      return p;
  return NULL;
}

static const cJSON *find_param(const cJSON *policy, const char *name)
{
  const cJSON *p;
  cJSON_ArrayForEach(p, cJSON_GetObjectItem(policy, "parameters"))
    if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(p, "name")), name) == 0)
      return p;
  return NULL;
}

/* The catalogue's (kind, name) pairs equal the registry's, in order. */
static void check_lists_registry(const CsRegistry *r, const cJSON *all)
{
  int i = 0;
  int n = cJSON_GetArraySize(all);
  assert_int_equal(n, cs_registry_n_placement(r) + cs_registry_n_dispatch(r) +
                        cs_registry_n_controller(r));
  for (int k = 0; k < cs_registry_n_placement(r); k++, i++) {
    const cJSON *p = cJSON_GetArrayItem(all, i);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "kind")), "placement");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "name")),
                        cs_registry_placement_at(r, k)->name);
  }
  for (int k = 0; k < cs_registry_n_dispatch(r); k++, i++) {
    const cJSON *p = cJSON_GetArrayItem(all, i);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "kind")), "dispatch");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "name")),
                        cs_registry_dispatch_at(r, k)->name);
  }
  for (int k = 0; k < cs_registry_n_controller(r); k++, i++) {
    const cJSON *p = cJSON_GetArrayItem(all, i);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "kind")), "controller");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "name")),
                        cs_registry_controller_at(r, k)->name);
  }
}

static void test_builtins_listed(void **state)
{
  (void)state;
  CsRegistry *r = cs_registry_new();
  cJSON *all = cs_policy_catalog(r);
  check_lists_registry(r, all);
  /* The numbers the docs give (docs/policies.md, docs/dispatch.md). */
  assert_int_equal(cs_registry_n_placement(r), 10);
  assert_int_equal(cs_registry_n_dispatch(r), 7);
  assert_int_equal(cs_registry_n_controller(r), 2);
  /* Every built-in parameter has its line. */
  const cJSON *pol;
  cJSON_ArrayForEach(pol, all)
  {
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(pol, "parameters"))
    {
      const char *doc = cJSON_GetStringValue(cJSON_GetObjectItem(p, "description"));
      if (!doc || !*doc)
        fail_msg("%s %s: parameter %s has no description",
                 cJSON_GetStringValue(cJSON_GetObjectItem(pol, "kind")),
                 cJSON_GetStringValue(cJSON_GetObjectItem(pol, "name")),
                 cJSON_GetStringValue(cJSON_GetObjectItem(p, "name")));
    }
  }
  /* timeout_ms is timeout's alone (symphony reads it only to refuse it). */
  assert_non_null(find_param(find_policy(all, "dispatch", "timeout"), "timeout_ms"));
  assert_true(cJSON_IsTrue(cJSON_GetObjectItem(
    find_param(find_policy(all, "dispatch", "timeout"), "timeout_ms"), "required")));
  assert_null(find_param(find_policy(all, "dispatch", "symphony"), "timeout_ms"));
  /* Defaults that differ within one parser: eager's and symphony's. */
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
                        find_param(find_policy(all, "dispatch", "eager"), "gpu_choice"), "default")),
                      "earliest_free");
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
                        find_param(find_policy(all, "dispatch", "symphony"), "gpu_choice"),
                        "default")),
                      "lowest_id");
  /* The framework's own field of a controller that scales GPUs. */
  assert_non_null(find_param(find_policy(all, "controller", "autoscale"), "initial_gpus"));
  assert_null(find_param(find_policy(all, "controller", "replan"), "initial_gpus"));
  cJSON_Delete(all);
  cs_registry_unref(r);
}

static void test_plugins_listed(void **state)
{
  (void)state;
  CsRegistry *r = cs_registry_new();
  assert_true(cs_registry_add_placement(r, &plug_placement, NULL, NULL));
  assert_true(cs_registry_add_dispatch(r, &plug_dispatch, NULL, NULL));
  cJSON *all = cs_policy_catalog(r);
  check_lists_registry(r, all);

  const cJSON *pl = find_policy(all, "placement", "plug-place");
  assert_non_null(pl);
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(pl, "description")),
                      "a plug-in placement");
  const cJSON *alpha = find_param(pl, "alpha");
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(alpha, "type")), "number");
  assert_true(cJSON_IsFalse(cJSON_GetObjectItem(alpha, "required")));
  assert_float_equal(cJSON_GetObjectItem(alpha, "default")->valuedouble, 0.25, 0);
  assert_float_equal(cJSON_GetObjectItem(alpha, "min")->valuedouble, 0.0, 0);
  assert_float_equal(cJSON_GetObjectItem(alpha, "max")->valuedouble, 1.0, 0);
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(alpha, "description")),
                      "the plug-in's weight");
  const cJSON *steps = find_param(pl, "steps");
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(steps, "type")), "integer");
  assert_true(cJSON_IsTrue(cJSON_GetObjectItem(steps, "required")));
  assert_null(cJSON_GetObjectItem(steps, "default")); /* required: no default shown */
  const cJSON *table = find_param(pl, "table");
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(table, "type")), "json");
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(table, "default_text")),
                      "built in");
  /* Order of first mention: the doc lines came first. */
  assert_string_equal(
    cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(pl,
                                                                  "parameters"), 1), "name")),
    "table");

  const cJSON *d = find_policy(all, "dispatch", "plug-dispatch");
  const cJSON *mode = find_param(d, "mode");
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(mode, "type")), "choice");
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(mode, "default")), "fast");
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(mode, "choices")), 2);
  assert_true(cJSON_IsTrue(cJSON_GetObjectItem(find_param(d, "on"), "default")));
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(find_param(d, "label"), "default")),
                      "x");
  cJSON_Delete(all);
  cs_registry_unref(r);
}

static void test_describing_readers(void **state)
{
  (void)state;
  CsParams *v = cs_params_new_describing("dispatch");
  assert_true(cs_params_describing(v));
  double x = 3.5;
  GError *err = NULL;
  assert_true(cs_params_double(v, "x", TRUE, 0, 10, &x, &err));
  assert_null(err);
  assert_float_equal(x, 3.5, 0);
  const char *s = NULL;
  assert_true(cs_params_string(v, "s", TRUE, &s, &err));
  assert_string_equal(s, ""); /* a required string is never left NULL */
  int n = -5;
  assert_true(cs_params_int(v, "n", TRUE, 1, 9, &n, &err));
  assert_int_equal(n, 1); /* nor a required number out of its range */
  static const char *const modes[] = { "a", "b", NULL };
  int mode = -1;
  assert_true(cs_params_choice(v, "mode", TRUE, modes, &mode, &err));
  assert_int_equal(mode, 0);
  assert_int_equal(cs_params_n_infos(v), 4);
  assert_true(cs_params_info(v, 0)->required);
  assert_false(cs_params_info(v, 1)->has_default); /* *out was NULL */
  cs_params_free(v);

  /* Outside describing mode the doc calls are no-ops and the reader reads. */
  cJSON *obj = cJSON_Parse("{\"x\": 2}");
  CsParams *p = cs_params_new_root(obj, "f.json", "dispatch");
  assert_false(cs_params_describing(p));
  cs_params_doc(p, "x", "text");
  cs_params_doc_default(p, "x", "text");
  cs_params_doc_hide(p, "x");
  assert_true(cs_params_double(p, "x", TRUE, 0, 10, &x, &err));
  assert_float_equal(x, 2, 0);
  assert_int_equal(cs_params_n_infos(p), 0);
  assert_true(cs_params_check_asked(p, &err));
  cs_params_free(p);
  cJSON_Delete(obj);
}

/* The framework's check of fields never asked for names every object's
 * unknown fields in one error, one object a line (it stopped at the first). */
static void test_unknown_fields_of_every_object(void **state)
{
  (void)state;
  cJSON *obj = cJSON_Parse("{\"a\": 1, \"x\": {\"b\": 2, \"c\": 3}, \"zz\": 4, \"ab\": 5}");
  CsParams *p = cs_params_new_root(obj, "f.json", "placement");
  int v = 0;
  GError *err = NULL;
  assert_true(cs_params_int(p, "a", TRUE, 0, 9, &v, &err));
  CsParams *x = cs_params_get(p, "x");
  assert_true(cs_params_int(x, "b", TRUE, 0, 9, &v, &err));
  assert_false(cs_params_check_asked(p, &err));
  assert_string_equal(err->message,
                      "f.json: placement: unknown fields \"zz\" and \"ab\" (did you mean \"a\"?) "
                      "(known fields: a, x)\n"
                      "f.json: placement.x: unknown field \"c\" (did you mean \"b\"?)");
  g_clear_error(&err);
  cs_params_free(p);
  cJSON_Delete(obj);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_builtins_listed),
    cmocka_unit_test(test_plugins_listed),
    cmocka_unit_test(test_describing_readers),
    cmocka_unit_test(test_unknown_fields_of_every_object),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
