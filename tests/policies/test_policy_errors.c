/* Error paths of the placement policies, each with its whole message:
 * - iGniter's coefficients file (docs/policies.md): the shipped
 *   data/profiles/igniter_v100_coefficients.json with one field broken at a
 *   time;
 * - iGniter's, manual's, Usher's and the MILP's parameters;
 * and the few outcomes that follow from a rule rather than a solver: a batch
 * size whose Creq exceeds the GPU is no candidate, groups outside the range
 * are refused, a cluster without GPUs places nothing. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/json_input.h"
#include "profiles/igniter_coef.h"
#include "policies/placement/placement.h"
#include "policies/placement/usher.h"

static char *source_path(const char *rel)
{
  const char *root = g_getenv("CS_SOURCE_ROOT");
  if (!root)
    fail_msg("CS_SOURCE_ROOT is not set (run through meson test)");
  return g_build_filename(root, rel, NULL);
}

/* ---- iGniter coefficients, one field broken at a time ------------------------- */

/* Walks "a.b[1][2]" in root; returns the parent of the last step and sets
 * *key or *index (-1 when the last step is a key). */
static cJSON *walk(cJSON *root, const char *path, char **key, int *index)
{
  cJSON *node = root, *parent = NULL;
  const char *p = path;
  *key = NULL;
  *index = -1;
  while (*p) {
    parent = node;
    g_free(*key);
    *key = NULL;
    *index = -1;
    if (*p == '[') {
      char *end;
      *index = (int)strtol(p + 1, &end, 10);
      node = cJSON_GetArrayItem(node, *index);
      p = end + 1;
    } else {
      size_t len = strcspn(p, ".[");
      *key = g_strndup(p, len);
      node = cJSON_GetObjectItemCaseSensitive(node, *key);
      p += len;
    }
    if (*p == '.')
      p++;
  }
  return parent;
}

/* Sets path to the JSON value (NULL: removes it). */
static void mutate(cJSON *root, const char *path, const char *value)
{
  char *key;
  int index;
  cJSON *parent = walk(root, path, &key, &index);
  assert_non_null(parent);
  cJSON *v = value ? cJSON_Parse(value) : NULL;
  if (value)
    assert_non_null(v);
  if (key) {
    if (!v)
      cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
    else if (cJSON_GetObjectItemCaseSensitive(parent, key))
      cJSON_ReplaceItemInObjectCaseSensitive(parent, key, v);
    else
      cJSON_AddItemToObject(parent, key, v);
  } else if (!v) {
    cJSON_DeleteItemFromArray(parent, index);
  } else {
    cJSON_ReplaceItemInArray(parent, index, v);
  }
  g_free(key);
}

typedef struct {
  const char *path, *value; /* value NULL: the field is removed */
  const char *message;      /* the whole message */
} CoefCase;

#define M0 "models[0]"
static const CoefCase coef_cases[] = {
  { "format", NULL, "coef.json: format: required field is missing" },
  { "format", "\"clustersim-profile\"", "coef.json: format: expected \"clustersim-igniter\", got \"clustersim-profile\"" },
  { "version", NULL, "coef.json: version: required field is missing" },
  { "version", "2", "coef.json: version: unsupported version 2 (this build reads version 1)" },
  { "bogus", "1", "coef.json: unknown field \"bogus\" (known fields: format, version, source, description, gpu_type, hardware, scan, grid, models)" },
  { "source", NULL, "coef.json: source: required field is missing" },
  { "description", "3", "coef.json: description: expected a non-empty string, got a number" },
  { "gpu_type", NULL, "coef.json: gpu_type: required field is missing" },
  /* hardware */
  { "hardware", NULL, "coef.json: hardware: required field is missing" },
  { "hardware", "3", "coef.json: hardware: expected an object, got a number" },
  { "hardware.bogus", "1", "coef.json: hardware: unknown field \"bogus\" (known fields: max_frequency_mhz, power_cap_w, idle_power_w, pcie_bandwidth_bytes_per_ms, share_unit_pct)" },
  { "hardware.max_frequency_mhz", "0", "coef.json: hardware.max_frequency_mhz: expected a number > 0, got 0" },
  { "hardware.power_cap_w", "-1", "coef.json: hardware.power_cap_w: expected a number > 0, got -1" },
  { "hardware.idle_power_w", "-1", "coef.json: hardware.idle_power_w: expected a number >= 0, got -1" },
  { "hardware.pcie_bandwidth_bytes_per_ms", "0", "coef.json: hardware.pcie_bandwidth_bytes_per_ms: expected a number > 0, got 0" },
  { "hardware.share_unit_pct", "0", "coef.json: hardware.share_unit_pct: expected a number in [0.01, 100], got 0" },
  /* scan */
  { "scan", NULL, "coef.json: scan: required field is missing" },
  { "scan", "[]", "coef.json: scan: expected an object, got an array" },
  { "scan.bogus", "1", "coef.json: scan: unknown field \"bogus\" (known fields: model, copies, power_w, frequency_mhz, idle_ms_per_kernel)" },
  { "scan.model", "3", "coef.json: scan.model: expected a non-empty string, got a number" },
  { "scan.copies", NULL, "coef.json: scan.copies: required field is missing" },
  { "scan.copies", "[1, 2]", "coef.json: scan.copies: expected an array of at least 3 numbers, got fewer elements" },
  { "scan.copies", "\"1-5\"", "coef.json: scan.copies: expected an array of at least 3 numbers, got a string" },
  { "scan.copies[2]", "\"3\"", "coef.json: scan.copies[2]: expected a number, got a string" },
  { "scan.copies[2]", "0", "coef.json: scan.copies[2]: expected a number > 0, got 0" },
  { "scan.copies[2]", "2", "coef.json: scan.copies: expected increasing whole numbers of concurrent copies" },
  { "scan.copies[2]", "2.5", "coef.json: scan.copies: expected increasing whole numbers of concurrent copies" },
  { "scan.power_w", "[1, 2, 3]", "coef.json: scan.power_w: expected an array of 5 numbers, got another number of elements" },
  { "scan.power_w", "3", "coef.json: scan.power_w: expected an array of 5 numbers, got a number" },
  { "scan.frequency_mhz", NULL, "coef.json: scan.frequency_mhz: required field is missing" },
  { "scan.idle_ms_per_kernel[4]", "-1", "coef.json: scan.idle_ms_per_kernel[4]: expected a number >= 0, got -1" },
  /* before: "expected a number >= 0, got inf" */
  { "scan.idle_ms_per_kernel[4]", "1e999", "coef.json: scan.idle_ms_per_kernel[4]: expected a finite number >= 0, got infinity (a number beyond the range of a double, about 1.8e308)" },
  /* throttled from the second copy: the fit needs two unthrottled points first */
  { "scan.frequency_mhz", "[1530, 1500, 1480, 1470, 1460]", "coef.json: scan.frequency_mhz: the power/frequency fit needs at least two points at the maximum frequency 1530 MHz before the first throttled one" },
  /* every point at the 300 W cap: the extended power of the throttled points is the cap */
  { "scan.power_w", "[300, 300, 300, 300, 300]", "coef.json: scan.power_w: the extended power of the throttled points equals the cap; no frequency slope can be fitted" },
  /* grid */
  { "grid", NULL, "coef.json: grid: required field is missing" },
  { "grid", "true", "coef.json: grid: expected an object, got a boolean" },
  { "grid.bogus", "1", "coef.json: grid: unknown field \"bogus\" (known fields: batches, shares_pct)" },
  { "grid.batches", "[1, 16]", "coef.json: grid.batches: expected an array of at least 3 numbers, got fewer elements" },
  { "grid.batches", "[1, 16.5, 32]", "coef.json: grid.batches: expected increasing whole batch sizes" },
  { "grid.batches", "[1, 32, 16]", "coef.json: grid.batches: expected increasing whole batch sizes" },
  { "grid.shares_pct", NULL, "coef.json: grid.shares_pct: required field is missing" },
  { "grid.shares_pct", "[10, 50, 120]", "coef.json: grid.shares_pct: expected increasing MPS shares in (0, 100]" },
  { "grid.shares_pct", "[50, 10, 100]", "coef.json: grid.shares_pct: expected increasing MPS shares in (0, 100]" },
  /* models */
  { "models", NULL, "coef.json: models: expected a non-empty array of models, got nothing" },
  { "models", "[]", "coef.json: models: expected a non-empty array of models, got an empty array" },
  { "models", "{}", "coef.json: models: expected a non-empty array of models, got an object" },
  { M0, "3", "coef.json: models[0]: expected an object, got a number" },
  { M0 ".bogus", "1", "coef.json: models[0]: unknown field \"bogus\" (known fields: model, kernels, input_bytes, output_bytes, idle_ms, gpu_latency_ms, power_w, frequency_mhz, l2_points, pair)" },
  { M0 ".model", NULL, "coef.json: models[0].model: required field is missing" },
  { M0 ".kernels", "0", "coef.json: models[0].kernels: expected an integer in [1, 16777216], got 0" },
  { M0 ".input_bytes", "-1", "coef.json: models[0].input_bytes: expected an integer in [0, 1099511627776], got -1" },
  { M0 ".output_bytes", "1.5", "coef.json: models[0].output_bytes: expected an integer, got a fractional number" },
  { M0 ".idle_ms", "-1", "coef.json: models[0].idle_ms: expected a number >= 0, got -1" },
  { M0 ".gpu_latency_ms", NULL, "coef.json: models[0].gpu_latency_ms: required field is missing" },
  { M0 ".gpu_latency_ms", "[[1, 2, 3], [1, 2, 3]]", "coef.json: models[0].gpu_latency_ms: expected 3 rows (one per grid batch) of 3 numbers (one per grid share), got another number of rows" },
  { M0 ".gpu_latency_ms", "3", "coef.json: models[0].gpu_latency_ms: expected 3 rows (one per grid batch) of 3 numbers (one per grid share), got a number" },
  { M0 ".gpu_latency_ms[0]", "[1, 2]", "coef.json: models[0].gpu_latency_ms[0]: expected an array of 3 numbers, got another number of elements" },
  { M0 ".gpu_latency_ms[0][0]", "0.01", "coef.json: models[0].gpu_latency_ms[0][0]: latency 0.01 ms is not above idle_ms 0.0317683 ms" },
  { M0 ".power_w", NULL, "coef.json: models[0].power_w: required field is missing" },
  { M0 ".frequency_mhz[1][2]", "0", "coef.json: models[0].frequency_mhz[1][2]: expected a number > 0, got 0" },
  { M0 ".frequency_mhz", "[[1000, 1000, 1000], [1000, 1000, 1000], [1000, 1000, 1000]]", "coef.json: models[0]: power_w: fewer than two unthrottled cells (frequency within 1 MHz of 1530) with distinct throughput; cannot fit power against throughput" },
  { M0 ".l2_points", NULL, "coef.json: models[0].l2_points: expected an array of at least 2 points, got nothing" },
  { M0 ".l2_points", "[{\"batch\": 1, \"share_pct\": 10, \"l2_util_pct\": 3}]", "coef.json: models[0].l2_points: expected an array of at least 2 points, got fewer" },
  { M0 ".l2_points", "7", "coef.json: models[0].l2_points: expected an array of at least 2 points, got a number" },
  { M0 ".l2_points[0]", "7", "coef.json: models[0].l2_points[0]: expected an object, got a number" },
  { M0 ".l2_points[0].bogus", "1", "coef.json: models[0].l2_points[0]: unknown field \"bogus\" (known fields: batch, share_pct, l2_util_pct)" },
  { M0 ".l2_points[0].batch", "0", "coef.json: models[0].l2_points[0].batch: expected a number >= 1, got 0" },
  { M0 ".l2_points[0].share_pct", "0", "coef.json: models[0].l2_points[0].share_pct: expected a number in [1e-300, 100], got 0" },
  { M0 ".l2_points[0].l2_util_pct", "101", "coef.json: models[0].l2_points[0].l2_util_pct: expected a number in [0, 100], got 101" },
  { M0 ".l2_points[0].batch", "2", "coef.json: models[0].l2_points[0]: batch 2 and share 10 % must be a cell of the grid" },
  { M0 ".l2_points", "[{\"batch\": 1, \"share_pct\": 10, \"l2_util_pct\": 3}, {\"batch\": 1, \"share_pct\": 10, \"l2_util_pct\": 4}]", "coef.json: models[0].l2_points: the points need at least two distinct throughputs" },
  { M0 ".pair", NULL, "coef.json: models[0].pair: required field is missing" },
  { M0 ".pair", "3", "coef.json: models[0].pair: expected an object, got a number" },
  { M0 ".pair.bogus", "1", "coef.json: models[0].pair: unknown field \"bogus\" (known fields: l2_util_pct, active_ms_alone, active_ms_pair, frequency_pair_mhz)" },
  { M0 ".pair.l2_util_pct", "0", "coef.json: models[0].pair.l2_util_pct: expected a number in [1e-300, 100], got 0" },
  { M0 ".pair.active_ms_alone", "0", "coef.json: models[0].pair.active_ms_alone: expected a number > 0, got 0" },
  { M0 ".pair.active_ms_pair", NULL, "coef.json: models[0].pair.active_ms_pair: required field is missing" },
  { M0 ".pair.frequency_pair_mhz", "\"high\"", "coef.json: models[0].pair.frequency_pair_mhz: expected a number, got a string" },
  { "models[1].model", "\"alexnet\"", "coef.json: models[1]: model \"alexnet\" is listed twice" },
};

static void test_coefficients_file_errors(void **state)
{
  (void)state;
  char *path = source_path("data/profiles/igniter_v100_coefficients.json");
  GError *err = NULL;
  cJSON *good = cs_json_load_file(path, &err);
  assert_non_null(good);
  /* The unbroken file loads. */
  CsIgniterCoefs *c = cs_igniter_coefs_load_json(good, "coef.json", &err);
  assert_non_null(c);
  assert_non_null(cs_igniter_coefs_find(c, "alexnet"));
  assert_null(cs_igniter_coefs_find(c, "bert"));
  cs_igniter_coefs_free(c);
  cs_igniter_coefs_free(NULL);
  int failures = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(coef_cases); i++) {
    cJSON *doc = cJSON_Duplicate(good, TRUE);
    mutate(doc, coef_cases[i].path, coef_cases[i].value);
    c = cs_igniter_coefs_load_json(doc, "coef.json", &err);
    if (c) {
      print_error("case %zu (%s): accepted\n", i, coef_cases[i].path);
      failures++;
      cs_igniter_coefs_free(c);
    } else if (strcmp(err->message, coef_cases[i].message) != 0) {
      print_error("case %zu (%s):\n  got      %s\n  expected %s\n", i, coef_cases[i].path,
                  err->message, coef_cases[i].message);
      failures++;
    }
    g_clear_error(&err);
    cJSON_Delete(doc);
  }
  /* A document that is not an object, and a file that is not there. */
  cJSON *arr = cJSON_CreateArray();
  assert_null(cs_igniter_coefs_load_json(arr, "coef.json", &err));
  assert_string_equal(err->message, "coef.json: expected an object, got an array");
  g_clear_error(&err);
  cJSON_Delete(arr);
  assert_null(cs_igniter_coefs_load_file("/nonexistent/coef.json", &err));
  assert_true(g_str_has_prefix(err->message, "/nonexistent/coef.json: cannot read: "));
  g_clear_error(&err);
  cJSON_Delete(good);
  g_free(path);
  assert_int_equal(failures, 0);
}

/* ---- policy parameters ----------------------------------------------------------- */

/* A GPU type "tiny" with two models; alexnet's batch 8 has no Creq. */
static const char *const tiny_profile =
  "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"test\","
  " \"gpu_types\": [{\"name\": \"tiny\", \"description\": \"test GPU\"}],"
  " \"models\": ["
  "  {\"gpu\": \"tiny\", \"model\": \"alexnet\", \"batches\": ["
  "    {\"batch\": 4, \"latency_ms\": 2, \"mreq_pct\": 10, \"creq_pct\": {\"ao\": 40, \"wao\": 20, \"wsm\": 30}},"
  "    {\"batch\": 8, \"latency_ms\": 4, \"mreq_pct\": 20},"
  "    {\"batch\": 16, \"latency_ms\": 6, \"mreq_pct\": 30, \"creq_pct\": {\"ao\": 50, \"wao\": 30, \"wsm\": 40}}]},"
  "  {\"gpu\": \"tiny\", \"model\": \"resnet50\", \"batches\": ["
  "    {\"batch\": 4, \"latency_ms\": 8, \"mreq_pct\": 10, \"creq_pct\": {\"ao\": 40, \"wao\": 20, \"wsm\": 30}},"
  "    {\"batch\": 8, \"latency_ms\": 16, \"mreq_pct\": 20, \"creq_pct\": {\"ao\": 45, \"wao\": 25, \"wsm\": 35}}]}]}";

typedef struct {
  CsProfileSet *set;
  CsPlacementModel models[2];
  CsPlacementGpu gpus[2];
  CsPlacementProblem in;
} Fixture;

static int setup(void **state)
{
  Fixture *f = g_new0(Fixture, 1);
  GError *err = NULL;
  f->set = cs_profile_set_new();
  if (!cs_profile_set_load_data(f->set, tiny_profile, "tiny.json", &err)) {
    print_error("%s\n", err->message);
    return -1;
  }
  f->models[0] = (CsPlacementModel){ .name = "alexnet", .rate_rps = 100, .slo_ms = 100 };
  f->models[1] = (CsPlacementModel){ .name = "resnet50", .rate_rps = 100, .slo_ms = 100 };
  f->gpus[0] = f->gpus[1] = (CsPlacementGpu){ .gpu_type = "tiny" };
  f->in = (CsPlacementProblem){ .models = f->models, .n_models = 2, .gpus = f->gpus, .n_gpus = 2,
                              .profiles = f->set };
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  Fixture *f = *state;
  cs_profile_set_free(f->set);
  g_free(f);
  return 0;
}

static CsPlacement *run(const CsPlacementProblem *in, const char *name, const char *json,
                        GError **err)
{
  const CsPlacementPolicy *pol = cs_placement_policy_lookup(name);
  assert_non_null(pol);
  cJSON *params = json ? cJSON_Parse(json) : NULL;
  if (json)
    assert_non_null(params);
  CsPlacement *p = cs_placement_run(pol, NULL, in, params, "scen.json", "placement", err);
  cJSON_Delete(params);
  return p;
}

typedef struct {
  const char *policy, *params, *message;
} ParamCase;

static const ParamCase param_cases[] = {
  /* manual */
  { "manual", "{\"replica\": []}", "scen.json: placement: unknown field \"replica\" (did you mean \"replicas\"?)" },
  { "manual", "{\"replicas\": {}}", "scen.json: placement.replicas: expected an array of replicas, got an object" },
  { "manual", "{}", "scen.json: placement.replicas: expected an array of replicas, got nothing" },
  { "manual", "{\"replicas\": [3]}", "scen.json: placement.replicas[0]: expected an object, got a number" },
  { "manual", "{\"replicas\": [{\"model\": \"alexnet\", \"gpu\": 0, \"batch\": 4, \"share\": 1}]}", "scen.json: placement.replicas[0]: unknown field \"share\" (known fields: model, gpu, batch, mps_share)" },
  { "manual", "{\"replicas\": [{\"gpu\": 0, \"batch\": 4}]}", "scen.json: placement.replicas[0].model: required field is missing" },
  { "manual", "{\"replicas\": [{\"model\": \"alexnet\", \"gpu\": -1, \"batch\": 4}]}", "scen.json: placement.replicas[0].gpu: expected an integer in [0, 2147483647], got -1" },
  { "manual", "{\"replicas\": [{\"model\": \"alexnet\", \"gpu\": 0, \"batch\": 0}]}", "scen.json: placement.replicas[0].batch: expected an integer in [1, 1048576], got 0" },
  { "manual", "{\"replicas\": [{\"model\": \"alexnet\", \"gpu\": 0, \"batch\": 4, \"mps_share\": 1.5}]}", "scen.json: placement.replicas[0].mps_share: expected a number in [0, 1], got 1.5" },
  { "manual", "{\"replicas\": [{\"model\": \"alexnet\", \"gpu\": 0, \"batch\": 4}, {\"model\": \"vgg\", \"gpu\": 1, \"batch\": 4}]}", "scen.json: placement.replicas[1]: model \"vgg\" has no client in the scenario" },
  /* dedicated */
  { "dedicated", "{\"max_batch\": 0}", "scen.json: placement.max_batch: expected an integer in [1, 1048576], got 0" },
  /* usher: groups (at most CS_MATCHING_MAX_NODES = 20 models, the exact matching) */
  { "usher", "{\"groups\": \"all\"}", "scen.json: placement.groups: expected an array of groups (arrays of model names), got a string" },
  { "usher", "{\"groups\": [3]}", "scen.json: placement.groups[0]: expected an array of 1 to 20 model names, got a number" },
  { "usher", "{\"groups\": [[]]}", "scen.json: placement.groups[0]: expected an array of 1 to 20 model names, got another number of elements" },
  { "usher", "{\"groups\": [[\"alexnet\", 5]]}", "scen.json: placement.groups[0][1]: expected a model name, got a number" },
  { "usher", "{\"groups\": [[\"alexnet\"]]}", "scen.json: placement.groups: model \"resnet50\" is in no group" },
  { "usher", "{\"mode\": 2}", "scen.json: placement.mode: expected a non-empty string, got a number" },
  { "usher", "{\"batch_sizes\": 4}", "scen.json: placement.batch_sizes: expected a non-empty array of batch sizes, got a number" },
  { "usher", "{\"batch_sizes\": [4, \"8\"]}", "scen.json: placement.batch_sizes[1]: expected an integer batch size in [1, 1048576], got a string" },
  /* milp */
  { "milp", "[1]", "scen.json: placement: expected an object, got an array" },
  { "milp", "{\"metric\": \"wsm\", \"mps_shares\": 1}", "scen.json: placement.mps_shares: expected true or false, got a number" },
  { "milp", "{\"metric\": \"peak\"}", "scen.json: placement.metric: expected \"ao\", \"wao\" or \"wsm\", got \"peak\"" },
  { "ao-milp", "{\"metric\": \"wao\"}", "scen.json: placement.metric: policy \"ao-milp\" always uses metric \"ao\"; use policy \"milp\" to choose another" },
  /* before: "got nan" */
  { "usher", "{\"batch_sizes\": [4, 1e999]}", "scen.json: placement.batch_sizes[1]: expected a finite number, got infinity (a number beyond the range of a double, about 1.8e308)" },
  { "milp", "{\"batch_sizes\": [0]}", "scen.json: placement.batch_sizes[0]: expected an integer batch size in [1, 1048576], got 0" },
  { "milp", "{\"max_replicas\": {\"alexnet\": 1.5}}", "scen.json: placement.max_replicas.alexnet: expected an integer, got a fractional number" },
  /* igniter */
  { "igniter", "{\"slo_fraction\": 0}", "scen.json: placement.slo_fraction: expected a number in [0.001, 1], got 0" },
  { "igniter", "{\"split\": \"no\"}", "scen.json: placement.split: expected true or false, got a string" },
  { "igniter", "{\"coefficients\": 3}", "scen.json: placement.coefficients: expected the name of a clustersim-igniter file or the document as an object, got a number" },
  { "igniter", "{\"coefficients\": \"\"}", "scen.json: placement.coefficients: expected the name of a clustersim-igniter file or the document as an object, got a string" },
  { "igniter", "{\"coefficients\": \"no_such_coefficients\"}", "scen.json: placement.coefficients: coefficients file \"no_such_coefficients\" not found (looked as given and in the data directory's profiles/; set CLUSTERSIM_DATA_DIR to add one)" },
  { "igniter", "{\"coefficients\": \"/nonexistent/c.json\"}", "scen.json: placement.coefficients: coefficients file \"/nonexistent/c.json\" not found (looked as given and in the data directory's profiles/; set CLUSTERSIM_DATA_DIR to add one)" },
  { "igniter", "{\"coefficients\": {\"format\": \"clustersim-igniter\", \"version\": 1}}", "scen.json: placement.coefficients: source: required field is missing" },
};

static void test_param_errors(void **state)
{
  Fixture *f = *state;
  int failures = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(param_cases); i++) {
    GError *err = NULL;
    CsPlacement *p = run(&f->in, param_cases[i].policy, param_cases[i].params, &err);
    if (p) {
      print_error("case %zu (%s %s): accepted\n", i, param_cases[i].policy, param_cases[i].params);
      cs_placement_free(p);
      failures++;
    } else if (strcmp(err->message, param_cases[i].message) != 0) {
      print_error("case %zu:\n  got      %s\n  expected %s\n", i, err->message,
                  param_cases[i].message);
      failures++;
    }
    g_clear_error(&err);
  }
  assert_int_equal(failures, 0);
}

/* A profiled batch size without Creq is no candidate (the latency says
 * nothing about the resources it needs): alexnet's replicas never use batch
 * 8, under Usher and the MILP alike; explicit defaults ("mode": "fixed",
 * "metric": "ao" for ao-milp) are accepted. */
static void test_batch_without_creq_is_no_candidate(void **state)
{
  Fixture *f = *state;
  const char *runs[][2] = {
    { "usher", "{\"mode\": \"fixed\"}" },
    { "milp", NULL },
    { "ao-milp", "{\"metric\": \"ao\"}" },
  };
  for (size_t k = 0; k < G_N_ELEMENTS(runs); k++) {
    GError *err = NULL;
    CsPlacement *p = run(&f->in, runs[k][0], runs[k][1], &err);
    if (!p)
      fail_msg("%s: %s", runs[k][0], err->message);
    int alexnet = 0;
    for (guint r = 0; r < p->replicas->len; r++) {
      const CsReplica *rep = &g_array_index(p->replicas, CsReplica, r);
      if (rep->model == 0) {
        assert_int_not_equal(rep->batch, 8);
        alexnet++;
      }
    }
    assert_true(alexnet >= 1);
    cs_placement_free(p);
  }
}

/* cs_usher_place refuses group indices outside 0..n-1; on a cluster without
 * GPUs it places nothing and reports every model ungrouped. */
static void test_usher_direct(void **state)
{
  Fixture *f = *state;
  int bad_groups[2] = { 0, 2 };
  int batches[] = { 4, 8 };
  CsUsherOptions opt = { .metric = CS_CREQ_AO, .mode = CS_USHER_FIXED, .max_group_size = 4,
                         .batches = batches, .n_batches = 2, .mps_shares = TRUE,
                         .groups = bad_groups };
  GError *err = NULL;
  assert_null(cs_usher_place(&f->in, &opt, NULL, &err));
  assert_string_equal(err->message, "placement \"usher\": model \"resnet50\" has group 2; groups "
                                    "are numbered 0..1 and hold at most 20 models");
  g_clear_error(&err);

  opt.groups = NULL;
  CsPlacementProblem none = f->in;
  none.n_gpus = 0;
  CsUsherInfo info = { 0 };
  CsPlacement *p = cs_usher_place(&none, &opt, &info, &err);
  assert_non_null(p);
  assert_int_equal(p->replicas->len, 0);
  assert_int_equal(info.group_of_model[0], -1);
  assert_int_equal(info.group_of_model[1], -1);
  cs_usher_info_clear(&info);
  cs_placement_free(p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_coefficients_file_errors),
    cmocka_unit_test_setup_teardown(test_param_errors, setup, teardown),
    cmocka_unit_test_setup_teardown(test_batch_without_creq_is_no_candidate, setup, teardown),
    cmocka_unit_test_setup_teardown(test_usher_direct, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
