/* Trace-driven clients beyond tests/sim/test_trace_clients.c: every bad
 * "trace" setting with its whole message (docs/scenario.md, "Trace-driven
 * clients"), the "blocks" mapping on both function-keyed formats, gamma
 * generation per interval, unsorted rows, and an explicit format, each
 * against counts and times worked out from the small files below. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "test_util.h"

/* MAF 2019, per-minute counts: f1 6 then 7, f2 0 then 3, f3 5 then 0. */
static const char counts_csv[] =
  "HashOwner,HashApp,HashFunction,Trigger,1,2\n"
  "o1,a1,f1,http,6,7\n"
  "o2,a2,f2,http,0,3\n"
  "o3,a3,f3,http,5,0\n";
/* MAF 2021: functions a1/f1 (starts 1, 3 and 5 s) and a2/f2 (starts 2, 4 s),
 * in order of first appearance a1/f1, a2/f2. */
static const char inv_csv[] =
  "app,func,end_timestamp,duration\n"
  "a1,f1,1.5,0.5\n"
  "a2,f2,2.5,0.5\n"
  "a1,f1,3.5,0.5\n"
  "a2,f2,4.5,0.5\n"
  "a1,f1,5.5,0.5\n";
/* The same rows out of order. */
static const char unsorted_csv[] =
  "app,func,end_timestamp,duration\n"
  "a1,f1,3.5,0.5\n"
  "a2,f2,2.5,0.5\n"
  "a1,f1,1.5,0.5\n";
static const char llm_csv[] =
  "TIMESTAMP,ContextTokens,GeneratedTokens\n"
  "2023-11-16 18:15:46.0000000,374,44\n"
  "2023-11-16 18:15:47.0000000,396,109\n";
static const char unknown_csv[] = "x,y\n1,2\n";
static const char broken2021_csv[] = "app,func,end_timestamp,duration\na1,f1,1.5,zz\n";
static const char broken2019_csv[] = "HashOwner,HashApp,HashFunction,Trigger,1\no1,a1,f1,http,x\n";

static char *fixture_dir(void)
{
  char *dir = test_dir_with_profile(0.1, 1.0);
  const char *files[][2] = {
    { "counts.csv", counts_csv },     { "inv.csv", inv_csv },
    { "unsorted.csv", unsorted_csv }, { "llm.csv", llm_csv },
    { "unknown.csv", unknown_csv },   { "broken2021.csv", broken2021_csv },
    { "broken2019.csv", broken2019_csv },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
    char *p = g_build_filename(dir, files[i][0], NULL);
    assert_true(g_file_set_contents(p, files[i][1], -1, NULL));
    g_free(p);
  }
  return dir;
}

static char *scenario(const char *trace, const char *clients)
{
  return g_strdup_printf(
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"trace\": %s, \"clients\": %s}", trace, clients);
}

#define ONE "[{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"}]"
#define TWO "[{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"}, {\"model\": \"b\", \"slo_ms\": 100, \"arrival\": \"trace\"}]"

typedef struct {
  const char *trace, *clients;
  const char *message; /* whole message; {DIR} is the fixture directory */
} BadTrace;

static const BadTrace bad[] = {
  { "{\"file\": \"counts.csv\", \"format\": 3}", ONE, "test.json: trace.format: expected a non-empty string, got a number" },
  { "{\"file\": \"counts.csv\", \"start_s\": -1}", ONE, "test.json: trace.start_s: expected a number >= 0, got -1" },
  { "{\"file\": \"counts.csv\", \"duration_s\": 0}", ONE, "test.json: trace.duration_s: expected a number > 0, got 0" },
  { "{\"file\": \"counts.csv\", \"time_scale\": 0}", ONE, "test.json: trace.time_scale: expected a number in [1e-06, 1e+06], got 0" },
  { "{\"file\": \"counts.csv\", \"rate_scale\": 0}", ONE, "test.json: trace.rate_scale: expected a number in [1e-06, 1e+06], got 0" },
  { "{\"file\": \"counts.csv\", \"interval_s\": 0}", ONE, "test.json: trace.interval_s: expected a number in [0.001, 1e+06], got 0" },
  { "{\"file\": \"counts.csv\", \"cv\": 0}", ONE, "test.json: trace.cv: expected a number in [0.001, 1000], got 0" },
  { "{\"file\": \"counts.csv\", \"arrivals\": 3}", ONE, "test.json: trace.arrivals: expected a non-empty string, got a number" },
  { "{\"file\": \"counts.csv\", \"allow_unsorted\": \"yes\"}", ONE, "test.json: trace.allow_unsorted: expected true or false, got a string" },
  { "{\"file\": \"counts.csv\", \"format\": \"csv\"}", ONE, "test.json: trace.format: unknown trace format \"csv\": expected auto, maf2019, maf2021 or azure-llm" },
  { "{\"file\": \"unknown.csv\"}", ONE, "{DIR}/unknown.csv: line 1: unrecognised header: expected the columns of MAF 2019 (HashOwner,HashApp,HashFunction,Trigger,<minutes>), MAF 2021 (app,func,end_timestamp,duration) or Azure LLM (TIMESTAMP,ContextTokens,GeneratedTokens)" },
  { "{\"file\": \"counts.csv\", \"arrivals\": \"uniform\"}", ONE, "test.json: trace.arrivals: expected \"exact\", \"poisson\" or \"gamma\", got \"uniform\"" },
  { "{\"file\": \"counts.csv\", \"cv\": 2}", ONE, "test.json: trace: \"cv\" is required with \"arrivals\": \"gamma\" and only then" },
  { "{\"file\": \"counts.csv\", \"rate_scale\": []}", ONE, "test.json: trace.rate_scale: expected a number or a non-empty array of {\"at_s\": t, \"scale\": f}" },
  { "{\"file\": \"counts.csv\", \"rate_scale\": [{\"at_s\": 60, \"scale\": 1}]}", ONE, "test.json: trace.rate_scale[0]: at_s: the first point must be at 0 (the window's start), got 60" },
  { "{\"file\": \"counts.csv\", \"rate_scale\": [{\"at_s\": 0, \"scale\": 1}, {\"at_s\": 0, \"scale\": 2}]}", ONE, "test.json: trace.rate_scale[1]: at_s: expected a time after the previous point's 0 s, got 0" },
  { "{\"file\": \"counts.csv\", \"rate_scale\": [{\"at_s\": 0, \"scale\": -1}]}", ONE, "test.json: trace.rate_scale[0].scale: expected a number in [0, 1e+06], got -1" },
  { "{\"file\": \"counts.csv\", \"rate_scale\": [{\"at_s\": 0, \"factor\": 1}]}", ONE, "test.json: trace.rate_scale[0]: unknown field \"factor\" (known fields: at_s, scale)" },
  { "{\"file\": \"counts.csv\", \"rate_scale\": [{\"at_s\": 0}]}", ONE, "test.json: trace.rate_scale[0].scale: required field is missing" },
  { "{\"file\": \"counts.csv\", \"rate_scale\": [3]}", ONE, "test.json: trace.rate_scale[0]: expected an object, got a number" },
  { "{\"file\": \"inv.csv\", \"rate_scale\": [{\"at_s\": 0, \"scale\": 1}]}", ONE, "test.json: trace.rate_scale: exact replay keeps the trace's timestamps and cannot scale the rate; use \"time_scale\" or \"poisson\"/\"gamma\" arrivals" },
  { "{\"file\": \"inv.csv\", \"rate_scale\": 2}", ONE, "test.json: trace.rate_scale: exact replay keeps the trace's timestamps and cannot scale the rate; use \"time_scale\" or \"poisson\"/\"gamma\" arrivals" },
  { "{\"file\": \"counts.csv\", \"start_s\": 30}", ONE, "test.json: trace.start_s: MAF 2019 counts invocations per minute: expected a multiple of 60 s, got 30" },
  { "{\"file\": \"counts.csv\", \"duration_s\": 90}", ONE, "test.json: trace.duration_s: MAF 2019 counts invocations per minute: expected a multiple of 60 s, got 90" },
  { "{\"file\": \"llm.csv\", \"mapping\": \"blocks\"}", ONE, "test.json: trace.mapping: Azure LLM rows have no function to group into blocks: use \"stripe\"" },
  { "{\"file\": \"llm.csv\", \"mapping\": [{\"function\": \"x\", \"model\": \"a\"}]}", ONE, "test.json: trace.mapping: Azure LLM rows have no function to map explicitly: use \"stripe\"" },
  { "{\"file\": \"counts.csv\", \"mapping\": [3]}", ONE, "test.json: trace.mapping[0]: expected an object, got a number" },
  { "{\"file\": \"counts.csv\", \"mapping\": [{\"fn\": \"f1\"}]}", ONE, "test.json: trace.mapping[0]: unknown field \"fn\" (known fields: function, model)" },
  { "{\"file\": \"counts.csv\", \"mapping\": [{\"model\": \"a\"}]}", ONE, "test.json: trace.mapping[0].function: required field is missing" },
  { "{\"file\": \"counts.csv\", \"mapping\": [{\"function\": \"f1\"}]}", ONE, "test.json: trace.mapping[0].model: required field is missing" },
  { "{\"file\": \"counts.csv\", \"mapping\": [{\"function\": \"f1\", \"model\": \"a\"}, {\"function\": \"f1\", \"model\": \"b\"}]}", TWO, "test.json: trace.mapping[1]: function \"f1\" is mapped twice" },
  /* the window [0, 120) s: a warm-up of 120 s leaves nothing to measure */
  { "{\"file\": \"counts.csv\"}", "[{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\", \"warmup_s\": 120}]", "test.json: clients[0]: warmup_s is as long as the trace window (120 s)" },
  /* f2 has no invocation in minute 1 */
  { "{\"file\": \"counts.csv\", \"duration_s\": 60, \"mapping\": [{\"function\": \"f2\", \"model\": \"a\"}]}", ONE, "test.json: clients[0]: model \"a\" receives no request from the trace in the window (check trace.mapping, start_s and duration_s)" },
  { "{\"file\": \"unsorted.csv\"}", ONE, "{DIR}/unsorted.csv: line 3: rows must be sorted by start time (end_timestamp - duration): start 2.000000 s is earlier than 3.000000 s on line 2 (pass the allow-unsorted option to sort in memory)" },
  { "{\"file\": \"broken2021.csv\", \"mapping\": \"blocks\"}", ONE, "{DIR}/broken2021.csv: line 2: column duration: expected a finite number, got \"zz\"" },
  { "{\"file\": \"broken2019.csv\", \"mapping\": \"blocks\"}", ONE, "{DIR}/broken2019.csv: line 2: minute 1: expected a non-negative integer, got \"x\"" },
};

static void test_bad_traces(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  int failures = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    char *json = scenario(bad[i].trace, bad[i].clients);
    CsScenario *sc = test_scenario(dir, json);
    GError *err = NULL;
    gboolean ok = cs_scenario_validate(sc, &err);
    char **parts = g_strsplit(bad[i].message, "{DIR}", -1);
    char *want = g_strjoinv(dir, parts);
    g_strfreev(parts);
    if (ok) {
      print_error("case %zu: accepted, expected\n  %s\n", i, want);
      failures++;
    } else if (strcmp(err->message, want) != 0) {
      print_error("case %zu:\n  got      %s\n  expected %s\n", i, err->message, want);
      failures++;
    }
    g_clear_error(&err);
    g_free(want);
    cs_scenario_free(sc);
    g_free(json);
  }
  test_dir_remove(dir);
  assert_int_equal(failures, 0);
}

typedef struct {
  GArray *sends[2];
} Sends;

static void collect(const CsRequestRecord *rec, void *user)
{
  Sends *s = user;
  g_array_append_val(s->sends[rec->client], rec->send_ns);
}

static gint cmp_ns(gconstpointer a, gconstpointer b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static CsResults *run(const char *dir, const char *trace, const char *clients, Sends *s)
{
  char *json = scenario(trace, clients);
  CsScenario *sc = test_scenario(dir, json);
  CsRunOptions opt;
  cs_run_options_init(&opt);
  if (s) {
    for (int i = 0; i < 2; i++)
      s->sends[i] = g_array_new(FALSE, FALSE, sizeof(int64_t));
    opt.on_request = collect;
    opt.user_data = s;
  }
  CsResults *r = test_run(sc, &opt);
  for (int i = 0; s && i < 2; i++)
    g_array_sort(s->sends[i], cmp_ns);
  cs_scenario_free(sc);
  g_free(json);
  return r;
}

static void sends_free(Sends *s)
{
  for (int i = 0; i < 2; i++)
    g_array_unref(s->sends[i]);
}

static const cJSON *setup_trace(const CsResults *r, cJSON **doc)
{
  char *json = cs_results_to_json(r);
  *doc = cJSON_Parse(json);
  g_free(json);
  return cJSON_GetObjectItem(cJSON_GetObjectItem(*doc, "setup"), "trace");
}

/* MAF 2019 "blocks": 3 functions over 2 clients, blocks of ceil(3/2) = 2:
 * f1 and f2 feed a (6 + 7 + 0 + 3 = 16 invocations over 120 s), f3 feeds b
 * (5 over 120 s). The offered rates are the counts over the window. */
static void test_blocks_maf2019(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  CsResults *r = run(dir, "{\"file\": \"counts.csv\", \"mapping\": \"blocks\"}", TWO, NULL);
  assert_float_equal(cs_results_model(r, 0)->offered_rps, 16.0 / 120.0, 1e-12);
  assert_float_equal(cs_results_model(r, 1)->offered_rps, 5.0 / 120.0, 1e-12);
  assert_float_equal(cs_results_model(r, 0)->window_s, 120.0, 1e-12);
  cJSON *doc;
  const cJSON *t = setup_trace(r, &doc);
  assert_string_equal(cJSON_GetObjectItem(t, "mapping")->valuestring, "blocks");
  assert_string_equal(cJSON_GetObjectItem(t, "arrivals")->valuestring, "poisson");
  assert_string_equal(cJSON_GetObjectItem(t, "format")->valuestring, "maf2019");
  cJSON_Delete(doc);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* MAF 2021 "blocks", format given: 2 functions over 2 clients, one each:
 * a1/f1 -> a at 1, 3, 5 s; a2/f2 -> b at 2, 4 s (the window starts at 0). */
static void test_blocks_maf2021(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  Sends s;
  CsResults *r = run(dir, "{\"file\": \"inv.csv\", \"format\": \"maf2021\", \"mapping\": \"blocks\"}", TWO, &s);
  const int64_t s_ns = 1000000000;
  assert_int_equal(s.sends[0]->len, 3);
  assert_int_equal(s.sends[1]->len, 2);
  for (int i = 0; i < 3; i++)
    assert_int_equal(g_array_index(s.sends[0], int64_t, i), (1 + 2 * i) * s_ns);
  for (int i = 0; i < 2; i++)
    assert_int_equal(g_array_index(s.sends[1], int64_t, i), (2 + 2 * i) * s_ns);
  cJSON *doc;
  const cJSON *t = setup_trace(r, &doc);
  assert_string_equal(cJSON_GetObjectItem(t, "mapping")->valuestring, "blocks");
  assert_string_equal(cJSON_GetObjectItem(t, "arrivals")->valuestring, "exact");
  cJSON_Delete(doc);
  sends_free(&s);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* Rows out of order are accepted with allow_unsorted and replayed in time
 * order: starts 3, 2 and 1 s, sent at 1, 2 and 3 s (one client, stripe). */
static void test_allow_unsorted(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  Sends s;
  CsResults *r = run(dir, "{\"file\": \"unsorted.csv\", \"allow_unsorted\": true}", ONE, &s);
  assert_int_equal(s.sends[0]->len, 3);
  for (int i = 0; i < 3; i++)
    assert_int_equal(g_array_index(s.sends[0], int64_t, i), (int64_t)(i + 1) * 1000000000);
  sends_free(&s);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* Gamma per interval from MAF 2021 timestamps: the 5 starts in the window
 * [0, 6) s counted per 2 s interval; the offered rate is their count over the
 * window, 5 / 6 s, and the setup names the process and its shape 1/cv^2 = 4. */
static void test_gamma_intervals(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  CsResults *r = run(dir,
    "{\"file\": \"inv.csv\", \"arrivals\": \"gamma\", \"cv\": 0.5, \"interval_s\": 2, \"duration_s\": 6}",
    ONE, NULL);
  assert_float_equal(cs_results_model(r, 0)->offered_rps, 5.0 / 6.0, 1e-12);
  cJSON *doc;
  const cJSON *t = setup_trace(r, &doc);
  assert_string_equal(cJSON_GetObjectItem(t, "arrivals")->valuestring, "gamma");
  assert_float_equal(cJSON_GetObjectItem(t, "interval_s")->valuedouble, 2.0, 0);
  const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "setup"), "clients"), 0);
  assert_string_equal(cJSON_GetObjectItem(c0, "arrival")->valuestring, "trace (gamma per interval)");
  assert_float_equal(cJSON_GetObjectItem(c0, "gamma_shape")->valuedouble, 4.0, 1e-12);
  assert_float_equal(cJSON_GetObjectItem(c0, "cv")->valuedouble, 0.5, 1e-12);
  cJSON_Delete(doc);
  cs_results_free(r);
  test_dir_remove(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_traces),
    cmocka_unit_test(test_blocks_maf2019),
    cmocka_unit_test(test_blocks_maf2021),
    cmocka_unit_test(test_allow_unsorted),
    cmocka_unit_test(test_gamma_intervals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
