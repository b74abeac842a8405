/* Trace-driven clients: exact replay, per-interval generation from counts,
 * function-to-model mappings, windows and scales, and bad trace settings. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "test_util.h"

static char *source_path(const char *rel)
{
  const char *root = g_getenv("CS_SOURCE_ROOT");
  if (!root)
    fail_msg("CS_SOURCE_ROOT is not set (run through meson test)");
  return g_build_filename(root, rel, NULL);
}

typedef struct {
  GArray *sends[3];
  int64_t in_empty_minute;
} Seen;

static void collect(const CsRequestRecord *rec, void *user)
{
  Seen *s = user;
  g_array_append_val(s->sends[rec->client], rec->send_ns);
  /* the synthetic MAF 2019 file below has no invocation in its second minute */
  if (rec->send_ns >= 60000000000LL && rec->send_ns < 120000000000LL)
    s->in_empty_minute++;
}

static CsResults *run_with(const char *dir, const char *json, Seen *seen)
{
  CsScenario *sc = test_scenario(dir, json);
  CsRunOptions opt;
  cs_run_options_init(&opt);
  if (seen) {
    for (int i = 0; i < 3; i++)
      seen->sends[i] = g_array_new(FALSE, FALSE, sizeof(int64_t));
    opt.on_request = collect;
    opt.user_data = seen;
  }
  CsResults *r = test_run(sc, &opt);
  cs_scenario_free(sc);
  return r;
}

static gint cmp_ns(gconstpointer a, gconstpointer b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void seen_free(Seen *s)
{
  for (int i = 0; i < 3; i++)
    if (s->sends[i])
      g_array_unref(s->sends[i]);
}

/* MAF 2021 excerpt replayed exactly over three clients (stripe): every row is
 * one request at its start time (end - duration). */
static void test_maf2021_exact(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *trace = source_path("data/traces/maf2021_vhive_invitro_head998/"
                            "AzureFunctionsInvocationTraceForTwoWeeksJan2021.csv");
  char *json = g_strdup_printf(
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 3, \"gpu_type\": \"gpu\"},"
    " \"trace\": {\"file\": \"%s\"},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"},"
    "  {\"model\": \"b\", \"slo_ms\": 100, \"arrival\": \"trace\"},"
    "  {\"model\": \"c\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}", trace);
  Seen seen = { 0 };
  CsResults *r = run_with(dir, json, &seen);
  int64_t total = 0;
  for (int i = 0; i < 3; i++) {
    total += cs_results_model(r, i)->generated;
    assert_true(cs_results_model(r, i)->generated > 0);
  }
  assert_int_equal(total, 998);
  /* The earliest start in the file is 0.0015 s (SOURCES.md). */
  int64_t first = INT64_MAX;
  for (int i = 0; i < 3; i++)
    for (guint k = 0; k < seen.sends[i]->len; k++)
      first = MIN(first, g_array_index(seen.sends[i], int64_t, k));
  assert_true(first >= 1000000 && first <= 2000000);
  char *summary = cs_results_to_json(r);
  assert_non_null(strstr(summary, "\"sha256\":\t\"8aa8f53ce4845b524e7656936c22c0a2407ea577da89a307e6d9a8f9695b7f50\""));
  assert_non_null(strstr(summary, "\"arrivals\":\t\"exact\""));
  g_free(summary);
  seen_free(&seen);
  cs_results_free(r);
  g_free(json);
  g_free(trace);
  test_dir_remove(dir);
}

/* Per-minute counts become per-interval Poisson arrivals: an empty minute
 * produces nothing, the totals follow the counts, rate_scale scales them and
 * time_scale compresses time. */
static void test_counts_poisson(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *path = g_build_filename(dir, "counts.csv", NULL);
  assert_true(g_file_set_contents(path,
    "HashOwner,HashApp,HashFunction,Trigger,1,2,3\n"
    "o1,a1,f1,http,6000,0,12000\n"
    "o2,a2,f2,timer,3000,0,3000\n", -1, NULL));
  const char *tmpl =
    "{\"seed\": 2, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"trace\": {\"file\": \"counts.csv\", \"rate_scale\": %g, \"time_scale\": %g},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"},"
    "  {\"model\": \"b\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}";
  char *json = g_strdup_printf(tmpl, 1.0, 1.0);
  Seen seen = { 0 };
  CsResults *r = run_with(dir, json, &seen);
  const CsModelResult *a = cs_results_model(r, 0), *b = cs_results_model(r, 1);
  assert_int_equal(seen.in_empty_minute, 0);
  /* Poisson totals: 18000 and 6000 expected; 4 standard deviations. */
  assert_true(fabs(a->generated - 18000.0) < 4 * sqrt(18000.0));
  assert_true(fabs(b->generated - 6000.0) < 4 * sqrt(6000.0));
  assert_float_equal(a->offered_rps, 18000.0 / 180.0, 1e-9);
  assert_float_equal(a->window_s, 180.0, 1e-9);
  seen_free(&seen);
  cs_results_free(r);
  g_free(json);

  json = g_strdup_printf(tmpl, 0.5, 0.5);
  r = run_with(dir, json, NULL);
  a = cs_results_model(r, 0);
  assert_true(fabs(a->generated - 9000.0) < 4 * sqrt(9000.0));
  assert_float_equal(a->window_s, 90.0, 1e-9);
  assert_float_equal(a->offered_rps, 100.0, 1e-9); /* half the requests in half the time */
  cs_results_free(r);
  g_free(json);
  g_free(path);
  test_dir_remove(dir);
}

typedef struct {
  int64_t per_minute[8];
} Minutes;

static void count_minutes(const CsRequestRecord *rec, void *user)
{
  Minutes *m = user;
  int k = (int)(rec->send_ns / 60000000000LL);
  if (k >= 0 && k < 8)
    m->per_minute[k]++;
}

/* trace.rate_scale as a profile over trace time: points (0 s, 1) and
 * (120 s, 3), linear between, held after. The factor of minute k is taken at
 * its midpoint: 1.5, 2.5, 3, 3 for minutes 1..4 (30, 90, 150, 210 s), so
 * counts of 60 each become 90, 150, 180, 180 requests: 600 in 240 s, an
 * offered 2.5 req/s. With gamma gaps of cv 0.001 the arrivals are all but
 * regular, so each minute holds its expected count to within one request. */
static void test_counts_rate_profile(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *path = g_build_filename(dir, "counts.csv", NULL);
  assert_true(g_file_set_contents(path,
    "HashOwner,HashApp,HashFunction,Trigger,1,2,3,4\n"
    "o1,a1,f1,http,60,60,60,60\n", -1, NULL));
  const char *json =
    "{\"seed\": 2, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"trace\": {\"file\": \"counts.csv\", \"arrivals\": \"gamma\", \"cv\": 0.001,"
    "   \"rate_scale\": [{\"at_s\": 0, \"scale\": 1}, {\"at_s\": 120, \"scale\": 3}]},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}";
  CsScenario *sc = test_scenario(dir, json);
  Minutes m = { { 0 } };
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = count_minutes;
  opt.user_data = &m;
  CsResults *r = test_run(sc, &opt);
  const CsModelResult *a = cs_results_model(r, 0);
  assert_float_equal(a->offered_rps, 2.5, 1e-12);
  const int64_t want[4] = { 90, 150, 180, 180 };
  for (int k = 0; k < 4; k++)
    assert_true(llabs(m.per_minute[k] - want[k]) <= 1);
  /* The summary records the profile. */
  char *text = cs_results_to_json(r);
  cJSON *doc = cJSON_Parse(text);
  const cJSON *prof = cJSON_GetObjectItem(
    cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "setup"), "trace"), "rate_scale");
  assert_int_equal(cJSON_GetArraySize(prof), 2);
  assert_float_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(prof, 1), "at_s")->valuedouble, 120, 0);
  assert_float_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(prof, 1), "scale")->valuedouble, 3, 0);
  cJSON_Delete(doc);
  g_free(text);
  cs_results_free(r);
  cs_scenario_free(sc);

  /* A one-point profile is the number: the same bytes but for the setup. */
  const char *one =
    "{\"seed\": 2, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"trace\": {\"file\": \"counts.csv\", \"rate_scale\": %s},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}";
  char *j1 = g_strdup_printf(one, "2"), *j2 = g_strdup_printf(one, "[{\"at_s\": 0, \"scale\": 2}]");
  CsScenario *s1 = test_scenario(dir, j1), *s2 = test_scenario(dir, j2);
  CsResults *r1 = test_run(s1, NULL), *r2 = test_run(s2, NULL);
  assert_int_equal(cs_results_model(r1, 0)->generated, cs_results_model(r2, 0)->generated);
  assert_float_equal(cs_results_model(r1, 0)->latency.p99, cs_results_model(r2, 0)->latency.p99, 0);
  assert_float_equal(cs_results_model(r1, 0)->offered_rps, cs_results_model(r2, 0)->offered_rps, 0);
  cs_results_free(r1);
  cs_results_free(r2);
  cs_scenario_free(s1);
  cs_scenario_free(s2);
  g_free(j1);
  g_free(j2);
  g_free(path);
  test_dir_remove(dir);
}

/* A rate profile of more than 100 points is summarised in the summary's
 * setup (the effective scenario lists it whole): its count, ends, range and
 * the SHA-256 of its points as little-endian doubles, here 101 points
 * (i s, 1 + (i mod 3) / 2); the digest is Python's
 * hashlib.sha256(b"".join(struct.pack("<dd", i, 1 + (i % 3) * 0.5) ...)).
 * 100 points are listed. */
static void test_long_rate_profile_summarised(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *path = g_build_filename(dir, "counts.csv", NULL);
  assert_true(g_file_set_contents(path,
    "HashOwner,HashApp,HashFunction,Trigger,1,2\n"
    "o1,a1,f1,http,6,6\n", -1, NULL));
  for (int n = 100; n <= 101; n++) {
    GString *s = g_string_new("{\"seed\": 2, \"profiles\": [\"synthetic.json\"],"
                              " \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
                              " \"trace\": {\"file\": \"counts.csv\", \"rate_scale\": [");
    for (int i = 0; i < n; i++)
      g_string_append_printf(s, "%s{\"at_s\": %d, \"scale\": %g}", i ? ", " : "", i,
                             1 + (i % 3) * 0.5);
    g_string_append(s, "]}, \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}");
    CsResults *r = run_with(dir, s->str, NULL);
    char *text = cs_results_to_json(r);
    cJSON *doc = cJSON_Parse(text);
    const cJSON *prof = cJSON_GetObjectItem(
      cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "setup"), "trace"), "rate_scale");
    if (n == 100) {
      assert_true(cJSON_IsArray(prof));
      assert_int_equal(cJSON_GetArraySize(prof), 100);
    } else {
      assert_true(cJSON_IsObject(prof));
      assert_float_equal(cJSON_GetObjectItem(prof, "points")->valuedouble, 101, 0);
      assert_float_equal(cJSON_GetObjectItem(prof, "first_at_s")->valuedouble, 0, 0);
      assert_float_equal(cJSON_GetObjectItem(prof, "last_at_s")->valuedouble, 100, 0);
      assert_float_equal(cJSON_GetObjectItem(prof, "min_scale")->valuedouble, 1, 0);
      assert_float_equal(cJSON_GetObjectItem(prof, "max_scale")->valuedouble, 2, 0);
      assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(prof, "sha256")),
                          "a4eddff0d29301d287e9738c8d840e66b8271319353c58e199727b14a661f524");
    }
    /* The effective scenario lists every point. */
    cJSON *eff = cJSON_Parse(cs_results_effective_scenario(r));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(eff, "trace"),
                                                            "rate_scale")), n);
    cJSON_Delete(eff);
    cJSON_Delete(doc);
    g_free(text);
    cs_results_free(r);
    g_string_free(s, TRUE);
  }
  g_free(path);
  test_dir_remove(dir);
}

/* An explicit mapping sends only the listed functions, to the named models.
 * Every count a wrong reading could take differs from the right one (300): f2's
 * minute 1 (30, window start ignored), minute 2 (0), f1's minute 3 (1200,
 * mapping ignored). */
static void test_explicit_mapping_and_window(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *path = g_build_filename(dir, "counts.csv", NULL);
  assert_true(g_file_set_contents(path,
    "HashOwner,HashApp,HashFunction,Trigger,1,2,3\n"
    "o1,a1,f1,http,600,0,1200\n"
    "o2,a2,f2,timer,30,0,300\n", -1, NULL));
  CsResults *r = run_with(dir,
    "{\"seed\": 2, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"trace\": {\"file\": \"counts.csv\", \"start_s\": 120, \"duration_s\": 60,"
    "   \"mapping\": [{\"function\": \"f2\", \"model\": \"a\"}]},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}", NULL);
  const CsModelResult *a = cs_results_model(r, 0);
  /* minute 3 of f2 only: 300 expected */
  assert_true(fabs(a->generated - 300.0) < 4 * sqrt(300.0));
  assert_float_equal(a->window_s, 60.0, 1e-9);
  cs_results_free(r);
  g_free(path);
  test_dir_remove(dir);
}


/* Sorted send times of client 0, in ns. */
static int64_t *sends_of(Seen *seen, guint *n)
{
  GArray *a = seen->sends[0];
  g_array_sort(a, cmp_ns);
  *n = a->len;
  return (int64_t *)a->data;
}

/* Exact replay of MAF 2021 rows inside a window: a row starting at trace time
 * t (end_timestamp - duration) is sent at (t - start_s) * time_scale after
 * the client starts. Rows start at 10, 2001, 2002, 2059.25 and 2060 s; the
 * window [2000, 2060) keeps the middle three. */
static void test_window_maf2021_timestamps(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *path = g_build_filename(dir, "inv.csv", NULL);
  assert_true(g_file_set_contents(path,
    "app,func,end_timestamp,duration\n"
    "a1,f1,10.5,0.5\n"
    "a1,f1,2001.5,0.5\n"
    "a2,f2,2002.25,0.25\n"
    "a1,f1,2059.75,0.5\n"
    "a2,f2,2060.0,0.0\n", -1, NULL));
  const char *tmpl =
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"trace\": {\"file\": \"inv.csv\", \"start_s\": 2000, \"duration_s\": 60, \"time_scale\": %g},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}";
  const double scales[] = { 1.0, 2.0 };
  for (int k = 0; k < 2; k++) {
    char *json = g_strdup_printf(tmpl, scales[k]);
    Seen seen = { 0 };
    CsResults *r = run_with(dir, json, &seen);
    guint n;
    int64_t *t = sends_of(&seen, &n);
    assert_int_equal(n, 3);
    assert_int_equal(t[0], (int64_t)(1.0e9 * scales[k]));
    assert_int_equal(t[1], (int64_t)(2.0e9 * scales[k]));
    assert_int_equal(t[2], (int64_t)(59.25e9 * scales[k]));
    assert_float_equal(cs_results_model(r, 0)->window_s, 60.0 * scales[k], 1e-12);
    seen_free(&seen);
    cs_results_free(r);
    g_free(json);
  }
  g_free(path);
  test_dir_remove(dir);
}

/* Azure LLM rows are timed from the file's first row: rows at +0, +1.5,
 * +3.25 and +7 s with start_s 1 and duration_s 5 keep +1.5 and +3.25, sent
 * at 0.5 and 2.25 s. */
static void test_window_llm_timestamps(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *path = g_build_filename(dir, "llm.csv", NULL);
  assert_true(g_file_set_contents(path,
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2023-11-16 18:15:46.0000000,374,44\n"
    "2023-11-16 18:15:47.5000000,396,109\n"
    "2023-11-16 18:15:49.2500000,10,1\n"
    "2023-11-16 18:15:53.0000000,10,1\n", -1, NULL));
  Seen seen = { 0 };
  CsResults *r = run_with(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"trace\": {\"file\": \"llm.csv\", \"start_s\": 1, \"duration_s\": 5},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}", &seen);
  guint n;
  int64_t *t = sends_of(&seen, &n);
  assert_int_equal(n, 2);
  assert_int_equal(t[0], 500000000);
  assert_int_equal(t[1], 2250000000);
  seen_free(&seen);
  cs_results_free(r);
  g_free(path);
  test_dir_remove(dir);
}

/* MAF 2019 counts with a window that starts at minute 2: the window's one
 * minute takes minute 2's 1000 invocations (minute 1 has 10), all sent
 * within the window's 60 s. */
static void test_window_maf2019_start(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *path = g_build_filename(dir, "counts.csv", NULL);
  assert_true(g_file_set_contents(path,
    "HashOwner,HashApp,HashFunction,Trigger,1,2,3\n"
    "o1,a1,f1,http,10,1000,0\n", -1, NULL));
  Seen seen = { 0 };
  CsResults *r = run_with(dir,
    "{\"seed\": 3, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"trace\": {\"file\": \"counts.csv\", \"start_s\": 60, \"duration_s\": 60},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}", &seen);
  guint n;
  int64_t *t = sends_of(&seen, &n);
  /* Poisson with mean 1000: 4 standard deviations. */
  assert_true(fabs(n - 1000.0) < 4 * sqrt(1000.0));
  assert_true(t[0] >= 0 && t[n - 1] < 60000000000LL);
  assert_float_equal(cs_results_model(r, 0)->offered_rps, 1000.0 / 60.0, 1e-9);
  seen_free(&seen);
  cs_results_free(r);
  g_free(path);
  test_dir_remove(dir);
}

/* A timestamp exactly at start_s + duration_s is outside the window:
 * arrivals at 0, 1 and 2 s with duration_s 2 give 2 requests, offered at
 * 2 / 2 s = 1 req/s. */
static void test_window_end_exclusive(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *path = g_build_filename(dir, "inv.csv", NULL);
  assert_true(g_file_set_contents(path,
    "app,func,end_timestamp,duration\n"
    "a1,f1,0.0,0.0\n"
    "a1,f1,1.0,0.0\n"
    "a1,f1,2.0,0.0\n", -1, NULL));
  CsResults *r = run_with(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"trace\": {\"file\": \"inv.csv\", \"duration_s\": 2},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}", NULL);
  assert_int_equal(cs_results_model(r, 0)->generated, 2);
  assert_float_equal(cs_results_model(r, 0)->offered_rps, 1.0, 1e-12); /* 2 in 2 s */
  cs_results_free(r);
  g_free(path);
  test_dir_remove(dir);
}

/* A partial last interval still counts: MAF 2019 minutes of 1000, 1000 and
 * 1000 invocations, interval_s 120, duration_s 180: [0, 120 s) gets minutes
 * 1-2 (2000 requests) and [120, 240 s) gets minute 3's 1000 at 1000/120
 * req/s, of which the window keeps [120, 180 s): 500. Poisson: 2500 expected,
 * 4 standard deviations. */
static void test_partial_last_interval(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *path = g_build_filename(dir, "counts.csv", NULL);
  assert_true(g_file_set_contents(path,
    "HashOwner,HashApp,HashFunction,Trigger,1,2,3\n"
    "o1,a1,f1,http,1000,1000,1000\n", -1, NULL));
  CsResults *r = run_with(dir,
    "{\"seed\": 4, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"trace\": {\"file\": \"counts.csv\", \"interval_s\": 120, \"duration_s\": 180},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"}]}", NULL);
  assert_true(fabs(cs_results_model(r, 0)->generated - 2500.0) < 4 * sqrt(2500.0));
  cs_results_free(r);
  g_free(path);
  test_dir_remove(dir);
}

typedef struct {
  const char *trace; /* JSON of the "trace" object; %s = the MAF 2019 file */
  const char *clients;
  const char *message;
} BadTrace;

static void test_bad_trace_settings(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.1, 1.0);
  char *path = g_build_filename(dir, "counts.csv", NULL);
  assert_true(g_file_set_contents(path,
    "HashOwner,HashApp,HashFunction,Trigger,1,2\n"
    "o1,a1,f1,http,6,7\n", -1, NULL));
  char *broken = g_build_filename(dir, "broken.csv", NULL);
  assert_true(g_file_set_contents(broken,
    "HashOwner,HashApp,HashFunction,Trigger,1,2\n"
    "o1,a1,f1,http,6,x\n", -1, NULL));
  const char *trace_client = "[{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": \"trace\"}]";
  const char *plain_client = "[{\"model\": \"a\", \"rate\": 5, \"slo_ms\": 100, \"requests\": 5}]";
  const BadTrace cases[] = {
    { "{\"file\": \"counts.csv\", \"arrivals\": \"exact\"}", trace_client, "test.json: trace.arrivals: \"exact\" needs timestamps" },
    { "{\"file\": \"counts.csv\", \"interval_s\": 30}", trace_client, "test.json: trace.interval_s: MAF 2019 counts invocations per minute: expected a multiple of 60 s, got 30" },
    { "{\"file\": \"counts.csv\", \"start_s\": 600}", trace_client, "the window starts at or after the end of the trace" },
    { "{\"file\": \"counts.csv\", \"arrivals\": \"gamma\"}", trace_client, "\"cv\" is required with \"arrivals\": \"gamma\"" },
    { "{\"file\": \"counts.csv\", \"mapping\": \"zigzag\"}", trace_client, "test.json: trace.mapping: expected \"stripe\", \"blocks\" or a list" },
    { "{\"file\": \"counts.csv\", \"mapping\": [{\"function\": \"nope\", \"model\": \"a\"}]}", trace_client, "test.json: trace.mapping[0]: function \"nope\" does not occur in counts.csv" },
    { "{\"file\": \"counts.csv\", \"mapping\": [{\"function\": \"f1\", \"model\": \"z\"}]}", trace_client, "test.json: trace.mapping[0]: model \"z\" has no client with \"arrival\": \"trace\"" },
    { "{\"file\": \"counts.csv\", \"spead\": 2}", trace_client, "test.json: trace: unknown field \"spead\"" },
    /* every entry of an explicit mapping checked, the problems listed together (issue 35) */
    { "{\"file\": \"counts.csv\", \"mapping\": [{\"function\": \"f1\", \"model\": \"z\"}, {\"function\": \"f1\", \"model\": \"a\"}, {\"function\": \"f1\", \"model\": \"a\"}, {\"funcion\": \"f2\"}]}", trace_client,
      "test.json: 3 problems in trace.mapping:\n"
      "  trace.mapping[0]: model \"z\" has no client with \"arrival\": \"trace\"\n"
      "  trace.mapping[2]: function \"f1\" is mapped twice\n"
      "  trace.mapping[3]: unknown field \"funcion\"" },
    { "{\"file\": \"counts.csv\", \"mapping\": [{\"function\": \"nope\", \"model\": \"a\"}, {\"function\": \"f1\", \"model\": \"a\"}, {\"function\": \"gone\", \"model\": \"a\"}]}", trace_client,
      "test.json: 2 problems in trace.mapping:\n"
      "  trace.mapping[0]: function \"nope\" does not occur in counts.csv\n"
      "  trace.mapping[2]: function \"gone\" does not occur in counts.csv" },
    { "{\"file\": \"missing.csv\"}", trace_client, "test.json: trace.file: file \"missing.csv\" not found" },
    { "{\"file\": \"broken.csv\"}", trace_client, "broken.csv: line 2:" },
    /* "blocks" first counts the functions; a format given explicitly that
     * the header contradicts failed there and leaked the count's table
     * (caught by the ASan run of tools/test-all.sh). */
    { "{\"file\": \"counts.csv\", \"format\": \"maf2021\", \"mapping\": \"blocks\"}", trace_client, "counts.csv: line 1: header: missing column \"app\"" },
    { "{\"file\": \".\"}", trace_client, "test.json: trace.file: file \".\" is not a regular file (a directory)" },
    { "{\"file\": \"counts.csv\"}", plain_client, "test.json: trace: no client has \"arrival\": \"trace\"" },
    { NULL, trace_client, "test.json: trace: required field is missing" },
    { "{\"file\": \"counts.csv\"}", "[{\"model\": \"a\", \"rate\": 3, \"slo_ms\": 100, \"arrival\": \"trace\"}]", "test.json: clients[0]: a \"trace\" arrival takes its requests and rate from the scenario's \"trace\": remove \"rate\"" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *json = g_strdup_printf(
      "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
      " %s%s%s \"clients\": %s}",
      cases[i].trace ? "\"trace\": " : "", cases[i].trace ? cases[i].trace : "",
      cases[i].trace ? "," : "", cases[i].clients);
    CsScenario *sc = test_scenario(dir, json);
    GError *err = NULL;
    assert_false(cs_scenario_validate(sc, &err));
    if (!strstr(err->message, cases[i].message))
      fail_msg("case %zu:\n  got      %s\n  expected %s", i, err->message, cases[i].message);
    g_error_free(err);
    cs_scenario_free(sc);
    g_free(json);
  }
  g_free(path);
  g_free(broken);
  test_dir_remove(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_maf2021_exact),
    cmocka_unit_test(test_counts_poisson),
    cmocka_unit_test(test_counts_rate_profile),
    cmocka_unit_test(test_long_rate_profile_summarised),
    cmocka_unit_test(test_explicit_mapping_and_window),
    cmocka_unit_test(test_window_maf2021_timestamps),
    cmocka_unit_test(test_window_llm_timestamps),
    cmocka_unit_test(test_window_maf2019_start),
    cmocka_unit_test(test_window_end_exclusive),
    cmocka_unit_test(test_partial_last_interval),
    cmocka_unit_test(test_bad_trace_settings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
