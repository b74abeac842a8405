/* Tests of interference files (src/profiles/interference.c): every way a file
 * can be wrong, each refused with the file, the JSON path and what was
 * expected; the table completion rule of docs/gpu-model.md on small grids
 * worked by hand; the fallback and the queries at their edges. (Loading the
 * shipped iGniter data and the use of tables by the GPU model are tested in
 * tests/gpu.) */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "profiles/interference.h"

#define HEAD "{\"format\": \"clustersim-interference\", \"version\": 1, \"source\": \"s\""

/* cmocka 1.1.5 has no floating-point assertion. */
#define assert_close(a, b, eps) assert_close_impl((a), (b), (eps), #a, __FILE__, __LINE__)
static void assert_close_impl(double a, double b, double eps, const char *what, const char *file,
                              int line)
{
  if (!(fabs(a - b) <= eps)) {
    print_error("%s = %.17g, expected %.17g (eps %g)\n", what, a, b, eps);
    _fail(file, line);
  }
}

typedef struct {
  const char *json;
  const char *message; /* the whole message after "bad.json: " */
} BadFile;

static const BadFile bad_files[] = {
  { "[]", "expected an object, got an array" },
  { "{\"version\": 1}", "format: required field is missing" },
  { "{\"format\": \"clustersim-interference\", \"source\": \"s\"}",
    "version: required field is missing" },
  { "{\"format\": \"clustersim-interference\", \"version\": 1.5}",
    "version: expected an integer, got a fractional number" },
  { "{\"format\": \"clustersim-interference\", \"version\": 1}",
    "source: required field is missing" },
  { HEAD ", \"description\": 3}", "description: expected a non-empty string, got a number" },
  { HEAD ", \"other\": 3}",
    "unknown field \"other\" (known fields: format, version, source, description, models, "
    "pairs, fallback, combine)" },
  { HEAD ", \"models\": {}}", "models: expected an array, got an object" },
  { HEAD ", \"pairs\": 2}", "pairs: expected an array, got a number" },
  /* models */
  { HEAD ", \"models\": [1]}", "models[0]: expected an object, got a number" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"l2_utl\": []}]}",
    "models[0]: unknown field \"l2_utl\" (did you mean \"l2_util\"?)" },
  { HEAD ", \"models\": [{\"share_latency\": [[1, 100, 1]]}]}",
    "models[0].model: required field is missing" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"share_latency\": \"fast\"}]}",
    "models[0].share_latency: expected an array, got a string" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"l2_util\": {}}]}",
    "models[0].l2_util: expected an array, got an object" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"dram_util\": null}]}",
    "models[0].dram_util: expected an array, got null" },
  { HEAD ", \"models\": [{\"model\": \"a\"}, {\"model\": \"a\"}]}",
    "models[1].model: model \"a\" is defined twice" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"share_latency\": []}]}",
    "models[0].share_latency: expected a non-empty array of [batch, share_pct, value] triples" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"share_latency\": [[1, 50, 2], [2, 50, 3],"
    " [1, 50, 2.5]]}]}",
    "models[0].share_latency[2]: batch 1, share 50 % given twice (also at [0])" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"share_latency\": [[1, 100]]}]}",
    "models[0].share_latency[0]: expected a [batch, share_pct, value] triple, got an array" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"share_latency\": [5]}]}",
    "models[0].share_latency[0]: expected a [batch, share_pct, value] triple, got a number" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"share_latency\": [[0, 100, 1]]}]}",
    "models[0].share_latency[0]: batch: expected an integer in [1, 1000000]" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"share_latency\": [[1.5, 100, 1]]}]}",
    "models[0].share_latency[0]: batch: expected an integer in [1, 1000000]" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"share_latency\": [[2000000, 100, 1]]}]}",
    "models[0].share_latency[0]: batch: expected an integer in [1, 1000000]" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"share_latency\": [[\"1\", 100, 1]]}]}",
    "models[0].share_latency[0]: batch: expected an integer in [1, 1000000]" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"share_latency\": [[1, 0, 1]]}]}",
    "models[0].share_latency[0]: share_pct: expected a number > 0 and <= 100" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"share_latency\": [[1, \"50\", 1]]}]}",
    "models[0].share_latency[0]: share_pct: expected a number > 0 and <= 100" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"share_latency\": [[1, 100, 0]]}]}",
    "models[0].share_latency[0]: value: expected a number in [1e-06, 1e+09]" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"share_latency\": [[1, 100, \"1\"]]}]}",
    "models[0].share_latency[0]: value: expected a number in [1e-06, 1e+09]" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"l2_util\": [[1, 100, 101]]}]}",
    "models[0].l2_util[0]: value: expected a number in [0, 100]" },
  { HEAD ", \"models\": [{\"model\": \"a\", \"dram_util\": [[1, 100, 5], [2, 50, 6]]}]}",
    "models[0].dram_util: cannot complete the table: no measured cell to derive batch 1, "
    "share 50 % from (docs/gpu-model.md, table completion)" },
  /* pairs */
  { HEAD ", \"pairs\": [[]]}", "pairs[0]: expected an object, got an array" },
  { HEAD ", \"pairs\": [{\"victim\": \"a\", \"aggressor\": \"b\", \"slowdown\": 1.1, "
    "\"sample\": 2}]}",
    "pairs[0]: unknown field \"sample\" (did you mean \"samples\"?)" },
  { HEAD ", \"pairs\": [{\"aggressor\": \"b\", \"slowdown\": 1.1}]}",
    "pairs[0].victim: required field is missing" },
  { HEAD ", \"pairs\": [{\"victim\": \"a\", \"slowdown\": 1.1}]}",
    "pairs[0].aggressor: required field is missing" },
  { HEAD ", \"pairs\": [{\"victim\": \"a\", \"aggressor\": \"b\"}]}",
    "pairs[0]: expected either \"slowdown\" (a measured factor) or \"scale\" (on the "
    "fallback's excess), got neither" },
  { HEAD ", \"pairs\": [{\"victim\": \"a\", \"aggressor\": \"b\", \"slowdown\": 1.1, "
    "\"scale\": 1}]}",
    "pairs[0]: expected either \"slowdown\" (a measured factor) or \"scale\" (on the "
    "fallback's excess), got both" },
  { HEAD ", \"pairs\": [{\"victim\": \"a\", \"aggressor\": \"b\", \"scale\": -1}]}",
    "pairs[0].scale: expected a number in [0, 1000], got -1" },
  { HEAD ", \"pairs\": [{\"victim\": \"a\", \"aggressor\": \"b\", \"slowdown\": 2000}]}",
    "pairs[0].slowdown: expected a number in [0.001, 1000], got 2000" },
  { HEAD ", \"pairs\": [{\"victim\": \"a\", \"aggressor\": \"b\", \"slowdown\": 1.1, "
    "\"samples\": 0}]}",
    "pairs[0].samples: expected an integer in [1, 2147483647], got 0" },
  { HEAD ", \"pairs\": [{\"victim\": \"a\", \"aggressor\": \"b\", \"slowdown\": 1.1, "
    "\"note\": 4}]}",
    "pairs[0].note: expected a non-empty string, got a number" },
  /* fallback */
  { HEAD ", \"fallback\": 0.1}", "fallback: expected an object, got a number" },
  { HEAD ", \"fallback\": {\"constnt\": 0.1}}",
    "fallback: unknown field \"constnt\" (did you mean \"constant\"?)" },
  { HEAD ", \"fallback\": {\"constant\": -0.1}}",
    "fallback.constant: expected a number in [0, 100], got -0.1" },
  { HEAD ", \"fallback\": {\"victim\": 101}}",
    "fallback.victim: expected a number in [-100, 100], got 101" },
  { HEAD ", \"fallback\": {\"aggressor\": -101}}",
    "fallback.aggressor: expected a number in [-100, 100], got -101" },
  { HEAD ", \"fallback\": {\"metric\": 2}}",
    "fallback.metric: expected a non-empty string, got a number" },
  { HEAD ", \"fallback\": {\"default_util_pct\": 150}}",
    "fallback.default_util_pct: expected a number in [0, 100], got 150" },
  { HEAD ", \"fallback\": {\"form\": \"quadratic\"}}",
    "fallback.form: expected \"batch_share\" or \"linear\", got \"quadratic\"" },
  { HEAD ", \"fallback\": {\"form\": \"batch_share\", \"constant\": 0.1}}",
    "fallback: unknown field \"constant\" (known fields: form, c, batch_exponent, "
    "share_exponent, fixed_exponent)" },
  { HEAD ", \"fallback\": {\"form\": \"linear\", \"c\": 0.1}}",
    "fallback: unknown field \"c\" (known fields: form, constant, victim, aggressor, metric, "
    "default_util_pct)" },
  { HEAD ", \"fallback\": {\"form\": \"batch_share\", \"share_exponent\": 0}}",
    "fallback.share_exponent: expected a number in [0.01, 10], got 0" },
  { HEAD ", \"fallback\": {\"form\": \"batch_share\", \"fixed_exponent\": -1}}",
    "fallback.fixed_exponent: expected a number in [0, 10], got -1" },
  /* combine */
  { HEAD ", \"combine\": {\"rule\": \"max\"}}",
    "combine.rule: expected \"product\" or \"norm\", got \"max\"" },
  { HEAD ", \"combine\": {\"exponent\": 2}}", "combine.rule: required field is missing" },
  { HEAD ", \"combine\": {\"rule\": \"product\", \"exponent\": 2}}",
    "combine.exponent: applies to the rule \"norm\" only" },
  { HEAD ", \"combine\": {\"rule\": \"norm\", \"exponent\": 0.5}}",
    "combine.exponent: expected a number in [1, 100], got 0.5" },
  { HEAD ", \"fallback\": {\"constant\": 0.1}, \"combine\": {\"rule\": \"norm\"}}",
    "combine.exponent: required with a linear fallback (the batch_share form implies "
    "1 / share_exponent)" },
};

static void test_bad_files(void **state)
{
  (void)state;
  int failures = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(bad_files); i++) {
    GError *error = NULL;
    CsInterferenceSet *set = cs_interference_set_load_data(bad_files[i].json, "bad.json", &error);
    char *want = g_strdup_printf("bad.json: %s", bad_files[i].message);
    if (set || !g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID) ||
        strcmp(error->message, want) != 0) {
      print_error("case %zu: %s\n  got      \"%s\"\n  expected \"%s\"\n", i, bad_files[i].json,
                  error ? error->message : "success", want);
      failures++;
    }
    cs_interference_set_free(set);
    g_clear_error(&error);
    g_free(want);
  }
  assert_int_equal(failures, 0);

  GError *error = NULL;
  assert_null(cs_interference_set_load_data("{\"format\": ", "cut.json", &error));
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_PARSE));
  g_clear_error(&error);
}

/* Completion from one side only. Model "below": rows batch 1 (50 % and
 * 100 %) and batch 4 (100 % only): cell (4, 50 %) = 4.0 * ratio of row 1
 * (3.0 / 1.5 = 2) = 8.0. Model "above": the measured row is above: cell
 * (1, 50 %) = 1.0 * (12 / 4) = 3.0. */
static void test_completion_one_side(void **state)
{
  (void)state;
  GError *error = NULL;
  CsInterferenceSet *set = cs_interference_set_load_data(
    HEAD ", \"models\": ["
    "{\"model\": \"below\", \"share_latency\": [[1, 50, 3.0], [1, 100, 1.5], [4, 100, 4.0]]},"
    "{\"model\": \"above\", \"share_latency\": [[1, 100, 1.0], [4, 50, 12.0], [4, 100, 4.0]]}]}",
    "one.json", &error);
  assert_non_null(set);
  int below = cs_interference_set_find(set, "below"), above = cs_interference_set_find(set, "above");
  assert_close(cs_interference_share_latency_ms(set, below, 4, 0.5), 8.0, 1e-12);
  assert_close(cs_interference_share_latency_ms(set, above, 1, 0.5), 3.0, 1e-12);
  /* Measured cells stay as given. */
  assert_close(cs_interference_share_latency_ms(set, above, 4, 0.5), 12.0, 0);
  cs_interference_set_free(set);
}

/* Two reference columns at the same distance: the larger share is used
 * first (docs/gpu-model.md). Shares 25, 50, 100 %; row batch 1 complete
 * (8, 3, 1 ms); row batch 2 has 25 % (20 ms) and 100 % (2 ms). Cell
 * (2, 50 %) from the 100 % column: 2 * 3/1 = 6 ms (from 25 % it would be
 * 20 * 3/8 = 7.5 ms). */
static void test_completion_tie(void **state)
{
  (void)state;
  GError *error = NULL;
  CsInterferenceSet *set = cs_interference_set_load_data(
    HEAD ", \"models\": [{\"model\": \"m\", \"share_latency\": "
    "[[1, 25, 8.0], [1, 50, 3.0], [1, 100, 1.0], [2, 25, 20.0], [2, 100, 2.0]]}]}",
    "tie.json", &error);
  assert_non_null(set);
  assert_close(cs_interference_share_latency_ms(set, 0, 2, 0.5), 6.0, 1e-12);
  cs_interference_set_free(set);
}

/* A measured reference of 0 (utilisation) gives no ratio: the other column
 * is used. l2_util: row 1 has 0 % at 50 %, 10 % at 25 % and 20 % at 100 %;
 * row 2 has 0 % at 50 % (no ratio against it) and 30 % at 25 %: the (2,
 * 100 %) cell comes from column 25 %: 30 * 20/10 = 60 %. */
static void test_completion_zero_reference(void **state)
{
  (void)state;
  GError *error = NULL;
  CsInterferenceSet *set = cs_interference_set_load_data(
    HEAD ", \"models\": [{\"model\": \"m\", \"l2_util\": "
    "[[1, 25, 10], [1, 50, 0], [1, 100, 20], [2, 25, 30], [2, 50, 0]]}]}",
    "zero.json", &error);
  if (!set)
    print_error("%s\n", error->message);
  assert_non_null(set);
  assert_close(cs_interference_util(set, 0, CS_UTIL_L2, 2, 1.0), 0.60, 1e-12);
  /* No latency table: no share latency, no slowdown. */
  assert_false(cs_interference_has_share_table(set, 0));
  assert_true(isnan(cs_interference_share_latency_ms(set, 0, 2, 0.5)));
  assert_true(isnan(cs_interference_share_slowdown(set, 0, 2, 0.5)));
  cs_interference_set_free(set);
}

/* The batch_share form and the combining rules, against values worked by
 * hand: excess = c b_a^x (4 s_a s_v)^z; norm F = 1 + (sum e^q)^(1/q);
 * product F = prod (1 + e); a pair's scale multiplies its excess. */
static void test_batch_share_and_combine(void **state)
{
  (void)state;
  GError *error = NULL;
  CsInterferenceSet *set = cs_interference_set_load_data(
    HEAD ", \"fallback\": {\"form\": \"batch_share\", \"c\": 0.1, \"batch_exponent\": 0.5,"
    " \"share_exponent\": 0.5}, \"pairs\": [{\"victim\": \"a\", \"aggressor\": \"b\","
    " \"scale\": 2}]}", "bs.json", &error);
  assert_non_null(set);
  const CsInterferenceFallback *fb = cs_interference_set_fallback(set);
  assert_int_equal(fb->form, CS_FALLBACK_BATCH_SHARE);
  /* the form implies the norm with q = 1 / z = 2 */
  assert_int_equal(fb->combine, CS_COMBINE_NORM);
  assert_close(fb->combine_exponent, 2.0, 0);
  /* batch 4 aggressor on half the GPU, victim on a quarter: 0.1 x 2 x
   * (4 x 0.5 x 0.25)^0.5 = 0.2 x 0.7071068 = 0.1414214 */
  CsPairSide v = { 1, 0.25, 0, 0 }, a = { 4, 0.5, 0, 0 };
  assert_close(cs_interference_fallback_excess(fb, &v, &a), 0.14142135623730950, 1e-15);
  /* two aggressors of excess 0.3 and 0.4: norm 1 + sqrt(0.09 + 0.16) = 1.5 */
  double sum = cs_interference_combine_term(fb, 0.3) + cs_interference_combine_term(fb, 0.4);
  assert_close(cs_interference_combine_factor(fb, sum), 1.5, 1e-15);
  assert_close(cs_interference_combine_factor(fb, 0.0), 1.0, 0);
  assert_close(cs_interference_pair_scale(set, cs_interference_set_find(set, "a"),
                                          cs_interference_set_find(set, "b")), 2.0, 0);
  assert_true(isnan(cs_interference_pair_scale(set, cs_interference_set_find(set, "b"),
                                               cs_interference_set_find(set, "a"))));
  assert_true(isnan(cs_interference_pair(set, cs_interference_set_find(set, "a"),
                                         cs_interference_set_find(set, "b"))));
  cs_interference_set_free(set);

  /* the victim's fixed part: phi^w with w = 0.5 on the excess above,
   * 0.1414214 x sqrt(0.36) = 0.0848528; below the floor phi counts as 0.05
   * (x 0.2236068 = 0.0316228); w = 0 (absent) leaves phi unread */
  set = cs_interference_set_load_data(
    HEAD ", \"fallback\": {\"form\": \"batch_share\", \"c\": 0.1, \"batch_exponent\": 0.5,"
    " \"share_exponent\": 0.5, \"fixed_exponent\": 0.5}}", "fx.json", &error);
  assert_non_null(set);
  fb = cs_interference_set_fallback(set);
  assert_close(fb->fixed_exponent, 0.5, 0);
  v.fixed = 0.36;
  assert_close(cs_interference_fallback_excess(fb, &v, &a), 0.08485281374238570, 1e-15);
  v.fixed = 0.01;
  assert_close(cs_interference_fallback_excess(fb, &v, &a), 0.03162277660168380, 1e-15);
  a.fixed = 1.0; /* the aggressor's phi plays no part */
  assert_close(cs_interference_fallback_excess(fb, &v, &a), 0.03162277660168380, 1e-15);
  cs_interference_set_free(set);
  CsInterferenceFallback off;
  cs_interference_fallback_init(&off);
  assert_close(off.fixed_exponent, 0.0, 0);
  v.fixed = 0.36;
  CsPairSide v0 = v;
  v0.fixed = 0.9;
  assert_close(cs_interference_fallback_excess(&off, &v, &a),
               cs_interference_fallback_excess(&off, &v0, &a), 0);
  v = (CsPairSide){ 1, 0.25, 0, 0 };
  a = (CsPairSide){ 4, 0.5, 0, 0 };

  /* product, explicitly: 1.3 x 1.4 = 1.82 */
  set = cs_interference_set_load_data(
    HEAD ", \"combine\": {\"rule\": \"product\"}}", "prod.json", &error);
  assert_non_null(set);
  fb = cs_interference_set_fallback(set);
  sum = cs_interference_combine_term(fb, 0.3) + cs_interference_combine_term(fb, 0.4);
  assert_close(cs_interference_combine_factor(fb, sum), 1.82, 1e-14);
  cs_interference_set_free(set);

  /* a linear fallback keeps version 1's product; the norm needs an exponent */
  set = cs_interference_set_load_data(
    HEAD ", \"fallback\": {\"constant\": 0.1}, \"combine\": {\"rule\": \"norm\","
    " \"exponent\": 3}}", "lin.json", &error);
  assert_non_null(set);
  fb = cs_interference_set_fallback(set);
  assert_int_equal(fb->form, CS_FALLBACK_LINEAR);
  assert_close(cs_interference_fallback_excess(fb, &v, &a), 0.1, 1e-15);
  /* 1 + (0.3^3 + 0.4^3)^(1/3) = 1 + 0.091^(1/3) = 1.4497941 */
  sum = cs_interference_combine_term(fb, 0.3) + cs_interference_combine_term(fb, 0.4);
  assert_close(cs_interference_combine_factor(fb, sum), 1.4497941, 1e-7);
  cs_interference_set_free(set);
  set = cs_interference_set_load_data(HEAD ", \"fallback\": {\"constant\": 0.1}}", "l.json",
                                      &error);
  assert_int_equal(cs_interference_set_fallback(set)->combine, CS_COMBINE_PRODUCT);
  cs_interference_set_free(set);

  /* the built-in default is the batch_share fit with the norm */
  CsInterferenceFallback def;
  cs_interference_fallback_init(&def);
  assert_int_equal(def.form, CS_FALLBACK_BATCH_SHARE);
  assert_int_equal(def.combine, CS_COMBINE_NORM);
}

/* The fallback of a file, metric dram, and its floor of 1. */
static void test_fallback_and_accessors(void **state)
{
  (void)state;
  GError *error = NULL;
  CsInterferenceSet *set = cs_interference_set_load_data(
    HEAD ", \"description\": \"V100 16 GB\", \"fallback\": {\"constant\": 0.05, \"victim\": -2,"
    " \"aggressor\": 0.5, \"metric\": \"dram\", \"default_util_pct\": 20},"
    " \"models\": [{\"model\": \"m\", \"share_latency\": [[1, 100, 2.0]]}]}",
    "fb.json", &error);
  assert_non_null(set);
  assert_string_equal(cs_interference_set_source(set), "fb.json: s");
  assert_string_equal(cs_interference_set_description(set), "V100 16 GB");
  assert_string_equal(cs_interference_set_model_name(set, 0), "m");
  const CsInterferenceFallback *fb = cs_interference_set_fallback(set);
  assert_int_equal(fb->metric, CS_UTIL_DRAM);
  assert_close(fb->default_util, 0.20, 1e-15);
  /* 1 + 0.05 - 2 * 0.1 + 0.5 * 0.4 = 1.05 */
  assert_close(cs_interference_fallback_eval(fb, 0.1, 0.4), 1.05, 1e-12);
  /* 1 + 0.05 - 2 * 0.5 + 0 = 0.05 < 1: co-location never speeds up. */
  assert_close(cs_interference_fallback_eval(fb, 0.5, 0.0), 1.0, 0);

  /* Queries outside the set answer "unknown", never crash. */
  assert_int_equal(cs_interference_set_find(NULL, "m"), -1);
  assert_int_equal(cs_interference_set_find(set, NULL), -1);
  assert_int_equal(cs_interference_set_n_models(NULL), 0);
  assert_false(cs_interference_has_share_table(set, 1));
  assert_false(cs_interference_has_share_table(NULL, 0));
  assert_true(isnan(cs_interference_share_latency_ms(set, -1, 1, 1.0)));
  assert_true(isnan(cs_interference_share_slowdown(set, 5, 1, 1.0)));
  assert_true(isnan(cs_interference_util(set, 0, CS_UTIL_N_METRICS, 1, 1.0)));
  assert_true(isnan(cs_interference_util(set, 0, (CsUtilMetric)-1, 1, 1.0)));
  assert_true(isnan(cs_interference_util(set, 3, CS_UTIL_L2, 1, 1.0)));
  assert_true(isnan(cs_interference_pair(set, 0, 1)));
  assert_true(isnan(cs_interference_pair(set, 1, 0)));
  assert_true(isnan(cs_interference_pair(set, 0, -1)));
  assert_true(isnan(cs_interference_pair(set, 0, 0)));
  /* A share outside (0, 1] means the whole GPU. */
  assert_close(cs_interference_share_latency_ms(set, 0, 1, 1.5), 2.0, 0);
  assert_close(cs_interference_share_latency_ms(set, 0, 1, -1.0), 2.0, 0);
  cs_interference_set_free(set);

  /* Without "description" the description is "". */
  set = cs_interference_set_load_data(HEAD "}", "min.json", &error);
  assert_non_null(set);
  assert_string_equal(cs_interference_set_description(set), "");
  assert_int_equal(cs_interference_set_n_models(set), 0);
  assert_close(cs_interference_set_fallback(set)->constant, CS_INTERFERENCE_DEFAULT_CONSTANT, 0);
  cs_interference_set_free(set);
}

/* A table measured at a smaller share than the full GPU still gives a
 * slowdown of at least 1: latency(50 %) / latency(100 %) where a faster
 * partial share (measurement noise) would give 0.9. */
static void test_slowdown_floor(void **state)
{
  (void)state;
  GError *error = NULL;
  CsInterferenceSet *set = cs_interference_set_load_data(
    HEAD ", \"models\": [{\"model\": \"m\", \"share_latency\": [[1, 50, 0.9], [1, 100, 1.0]]}]}",
    "noise.json", &error);
  assert_non_null(set);
  assert_close(cs_interference_share_latency_ms(set, 0, 1, 0.5), 0.9, 0);
  assert_close(cs_interference_share_slowdown(set, 0, 1, 0.5), 1.0, 0);
  cs_interference_set_free(set);
}

/* Co-location never speeds a batch up: a fallback with a negative victim
 * coefficient (a file may fit one) evaluates to 1 + 0 - 1 x 0.5 = 0.5 below
 * the floor, and the slowdown is 1; above the floor it is the formula. */
static void test_fallback_floor(void **state)
{
  (void)state;
  CsInterferenceFallback fb;
  cs_interference_fallback_init(&fb);
  fb.constant = 0.0;
  fb.victim = -1.0;
  fb.aggressor = 0.0;
  assert_float_equal(cs_interference_fallback_eval(&fb, 0.5, 0.0), 1.0, 0.0);
  fb.constant = 0.25;
  fb.victim = 0.5;
  assert_float_equal(cs_interference_fallback_eval(&fb, 0.5, 0.0), 1.5, 1e-12);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_files),
    cmocka_unit_test(test_fallback_floor),
    cmocka_unit_test(test_completion_one_side),
    cmocka_unit_test(test_completion_tie),
    cmocka_unit_test(test_completion_zero_reference),
    cmocka_unit_test(test_batch_share_and_combine),
    cmocka_unit_test(test_fallback_and_accessors),
    cmocka_unit_test(test_slowdown_floor),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
