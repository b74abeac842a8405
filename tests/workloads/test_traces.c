/* Tests of the trace readers (src/workloads/trace.h) on the shipped Azure
 * excerpts (data/traces, found through CS_SOURCE_ROOT) and on small bad files
 * written to a temporary directory.
 *
 * Reference numbers were counted independently of this code (python csv
 * module and awk over the same files), e.g.
 *   awk -F, 'NR>1{for(i=5;i<=NF;i++)s+=$i}END{print s}' invocations.csv
 * tests/cli/test_cli_traces.sh recomputes the inspect statistics of the
 * shipped excerpts the same way at every run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json_input.h"
#include "workloads/trace.h"

#define MAF2019_DIR "data/traces/maf2019_vhive_loader_sample500"
#define MAF2021_FILE                                                                               \
  "data/traces/maf2021_vhive_invitro_head998/AzureFunctionsInvocationTraceForTwoWeeksJan2021.csv"
#define LLM_FILE "data/traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv"
#define VIDUR_CODE_FILE "data/traces/vidur_processed/splitwise_code.csv"

/* cmocka 1.1.5 has no floating-point assertion. */
#define assert_near(a, b, tol) check_near((a), (b), (tol), #a, __FILE__, __LINE__)

static void check_near(double got, double want, double tol, const char *expr, const char *file,
                       int line)
{
  if (!(fabs(got - want) <= tol)) {
    print_error("%s = %.17g, expected %.17g (tolerance %g)\n", expr, got, want, tol);
    _fail(file, line);
  }
}

typedef struct {
  char *root; /* CS_SOURCE_ROOT */
  char *tmp;  /* scratch directory for bad files */
} Fixture;

static char *source_path(const Fixture *f, const char *rel)
{
  return g_build_filename(f->root, rel, NULL);
}

static char *write_tmp(const Fixture *f, const char *name, const char *content)
{
  char *path = g_build_filename(f->tmp, name, NULL);
  GError *error = NULL;
  if (!g_file_set_contents(path, content, -1, &error))
    fail_msg("cannot write %s: %s", path, error->message);
  return path;
}

static int setup(void **state)
{
  const char *root = g_getenv("CS_SOURCE_ROOT");
  if (!root) {
    fprintf(stderr, "CS_SOURCE_ROOT is not set (run through meson test)\n");
    return -1;
  }
  Fixture *f = g_new0(Fixture, 1);
  f->root = g_strdup(root);
  GError *error = NULL;
  f->tmp = g_dir_make_tmp("cs-test-traces-XXXXXX", &error);
  if (!f->tmp) {
    fprintf(stderr, "g_dir_make_tmp: %s\n", error->message);
    return -1;
  }
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  Fixture *f = *state;
  GDir *dir = g_dir_open(f->tmp, 0, NULL);
  const char *name;
  while (dir && (name = g_dir_read_name(dir))) {
    char *p = g_build_filename(f->tmp, name, NULL);
    g_remove(p);
    g_free(p);
  }
  if (dir)
    g_dir_close(dir);
  g_rmdir(f->tmp);
  g_free(f->tmp);
  g_free(f->root);
  g_free(f);
  return 0;
}

/* ------------------------------------------------------ shipped excerpts */

static void test_maf2019_excerpt(void **state)
{
  Fixture *f = *state;
  char *inv = source_path(f, MAF2019_DIR "/invocations.csv");
  GError *error = NULL;
  CsMaf2019Reader *r = cs_maf2019_reader_open(inv, NULL, NULL, &error);
  assert_non_null(r);
  assert_int_equal(cs_maf2019_reader_first_minute(r), 480);
  assert_int_equal(cs_maf2019_reader_n_minutes(r), 480);
  CsMaf2019Record rec;
  int64_t rows = 0, total = 0, max_row = 0;
  GHashTable *functions = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  int rc;
  while ((rc = cs_maf2019_reader_next(r, &rec, &error)) > 0) {
    int64_t sum = 0;
    for (int m = 0; m < rec.n_minutes; m++)
      sum += rec.counts[m];
    assert_int_equal(sum, rec.total);
    assert_int_equal(rec.first_minute, 480);
    assert_true(isnan(rec.duration_avg_ms));
    if (rows == 0) {
      assert_string_equal(rec.trigger, "http");
      assert_string_equal(rec.function,
                          "0951ccc96bb7542d6d77e5f7305478d46e4b2199765e7fbbef29bb72983e16e2");
      assert_int_equal(rec.total, 1);
      assert_int_equal(rec.line, 2);
    }
    g_hash_table_add(functions, g_strdup(rec.function));
    rows++;
    total += rec.total;
    max_row = MAX(max_row, rec.total);
  }
  assert_int_equal(rc, 0);
  assert_null(error);
  assert_int_equal(rows, 500);
  assert_int_equal(g_hash_table_size(functions), 500);
  assert_int_equal(total, INT64_C(3037902));
  assert_int_equal(max_row, INT64_C(1915521));
  /* End of file stays end of file. */
  assert_int_equal(cs_maf2019_reader_next(r, &rec, &error), 0);
  cs_maf2019_reader_close(r);
  g_hash_table_destroy(functions);
  g_free(inv);
}

static void test_maf2019_companions(void **state)
{
  Fixture *f = *state;
  char *inv = source_path(f, MAF2019_DIR "/invocations.csv");
  char *dur = source_path(f, MAF2019_DIR "/durations.csv");
  char *mem = source_path(f, MAF2019_DIR "/memory.csv");
  GError *error = NULL;
  CsMaf2019Reader *r = cs_maf2019_reader_open(inv, dur, mem, &error);
  assert_non_null(r);
  CsMaf2019Record rec;
  int64_t rows = 0, joined = 0;
  int rc;
  while ((rc = cs_maf2019_reader_next(r, &rec, &error)) > 0) {
    rows++;
    joined += !isnan(rec.duration_avg_ms) && !isnan(rec.memory_avg_mb);
    if (rows == 1) {
      assert_near(rec.duration_avg_ms, 2638.0, 0.0);
      assert_near(rec.memory_avg_mb, 50.8, 1e-12);
    }
    if (strcmp(rec.function,
               "1992918c23cc92244ef4a1efabbf23ab28abe05bf37658eec9af9232d78e0939") == 0) {
      assert_string_equal(rec.trigger, "event");
      assert_near(rec.duration_avg_ms, 195.0, 0.0);
      assert_near(rec.memory_avg_mb, 98.33333333333331, 1e-12);
    }
  }
  assert_int_equal(rc, 0);
  assert_int_equal(rows, 500);
  assert_int_equal(joined, 500); /* every function is in both companions */
  cs_maf2019_reader_close(r);
  g_free(inv);
  g_free(dur);
  g_free(mem);
}

static void test_maf2021_excerpt(void **state)
{
  Fixture *f = *state;
  char *path = source_path(f, MAF2021_FILE);
  GError *error = NULL;
  CsMaf2021Reader *r = cs_maf2021_reader_open(path, CS_TRACE_FLAGS_NONE, &error);
  assert_non_null(r);
  CsMaf2021Record rec;
  int64_t rows = 0;
  double prev = -INFINITY, sum = 0, first = NAN, last = NAN;
  int64_t first_ns = -1;
  int rc;
  while ((rc = cs_maf2021_reader_next(r, &rec, &error)) > 0) {
    assert_true(rec.arrival_s >= prev); /* sorted by start time */
    assert_true(rec.duration_s >= 0);
    assert_near(rec.arrival_s, rec.end_s - rec.duration_s, 0.0);
    assert_int_equal(rec.arrival_ns, llround(rec.arrival_s * 1e9));
    prev = rec.arrival_s;
    if (rows == 0) {
      first = rec.arrival_s;
      first_ns = rec.arrival_ns;
    }
    last = rec.arrival_s;
    sum += rec.arrival_s;
    rows++;
  }
  assert_int_equal(rc, 0);
  assert_int_equal(rows, 998);
  assert_near(first, 0.0014909000396728517, 1e-15);
  assert_int_equal(first_ns, 1490900);
  assert_near(last, 6464.802797006607, 1e-9);
  assert_near(sum, 2947814.3044648776, 1e-6);
  cs_maf2021_reader_close(r);

  /* The load-and-sort helper leaves a sorted file in the same order. */
  CsMaf2021Trace *t = cs_maf2021_load_sorted(path, &error);
  assert_non_null(t);
  assert_int_equal(t->n_records, 998);
  for (size_t i = 1; i < t->n_records; i++)
    assert_true(t->records[i].line == t->records[i - 1].line + 1);
  cs_maf2021_trace_free(t);
  g_free(path);
}

static void test_llm_excerpt(void **state)
{
  Fixture *f = *state;
  char *path = source_path(f, LLM_FILE);
  GError *error = NULL;
  CsAzureLlmReader *r = cs_azure_llm_reader_open(path, CS_TRACE_FLAGS_NONE, &error);
  assert_non_null(r);
  CsAzureLlmRecord rec;
  int64_t rows = 0, context = 0, generated = 0, last_ns = -1;
  int rc;
  while ((rc = cs_azure_llm_reader_next(r, &rec, &error)) > 0) {
    if (rows == 0) {
      assert_int_equal(rec.time_ns, 0);
      assert_int_equal(rec.epoch_ns, INT64_C(1700158546680590000));
      assert_int_equal(rec.context_tokens, 374);
      assert_int_equal(rec.generated_tokens, 44);
    }
    if (rows == 1) /* 18:15:50.9951690 - 18:15:46.6805900, exact */
      assert_int_equal(rec.time_ns, INT64_C(4314579000));
    assert_true(rec.time_ns >= last_ns);
    last_ns = rec.time_ns;
    context += rec.context_tokens;
    generated += rec.generated_tokens;
    rows++;
  }
  assert_int_equal(rc, 0);
  assert_int_equal(rows, 19366);
  assert_int_equal(context, INT64_C(22361870));
  assert_int_equal(generated, INT64_C(4088665));
  /* 19:14:08.4025270 - 18:15:46.6805900 = 58 min 21.7219370 s */
  assert_int_equal(last_ns, INT64_C(3501721937000));
  assert_int_equal(rec.generated_tokens, 183); /* last line, which has no newline */
  assert_int_equal(cs_azure_llm_reader_origin_epoch_ns(r), INT64_C(1700158546680590000));
  cs_azure_llm_reader_close(r);
  g_free(path);
}

/* Vidur's processed code trace as shipped: counts, sums and rows computed
 * from the file with Python's csv module (data/traces/README.md). */
static void test_vidur_trace(void **state)
{
  Fixture *f = *state;
  char *path = source_path(f, VIDUR_CODE_FILE);
  GError *error = NULL;
  CsLlmRequestTrace *t = cs_vidur_trace_load(path, &error);
  if (!t)
    fail_msg("%s", error->message);
  assert_int_equal(t->n_records, 8819);
  int64_t prompt = 0, output = 0;
  for (size_t i = 0; i < t->n_records; i++) {
    prompt += t->records[i].prompt_tokens;
    output += t->records[i].output_tokens;
  }
  assert_int_equal(prompt, 18059974);
  assert_int_equal(output, 245896);
  assert_int_equal(t->records[0].time_ns, 0);
  assert_int_equal(t->records[0].prompt_tokens, 4808);
  assert_int_equal(t->records[0].output_tokens, 10);
  assert_int_equal(t->records[1].time_ns, INT64_C(52000000));      /* 0.052 */
  assert_int_equal(t->records[2].time_ns, INT64_C(98189000));      /* 0.098189 */
  /* Line 223, "199.96150599999999": the nearest nanosecond. */
  assert_int_equal(t->records[221].line, 223);
  assert_int_equal(t->records[221].time_ns, INT64_C(199961506000));
  assert_int_equal(t->records[8818].time_ns, INT64_C(3435948056000));
  assert_int_equal(t->records[8818].prompt_tokens, 549);
  assert_int_equal(t->records[8818].output_tokens, 173);
  cs_llm_request_trace_free(t);
  g_free(path);

  /* Bad files: each refused with the file, the line and what was expected. */
  static const struct {
    const char *text, *message;
  } bad[] = {
    {"", "empty file"},
    {"arrived_at,num_prefill_tokens\n0,5\n", "num_decode_tokens"},
    {"arrived_at,num_prefill_tokens,num_decode_tokens\n", "no data rows"},
    {"arrived_at,num_prefill_tokens,num_decode_tokens\n0,5\n", "line 2"},
    {"arrived_at,num_prefill_tokens,num_decode_tokens\n1e3,5,5\n",
     "line 2: column arrived_at: expected seconds"},
    {"arrived_at,num_prefill_tokens,num_decode_tokens\n-1,5,5\n", "column arrived_at"},
    {"arrived_at,num_prefill_tokens,num_decode_tokens\n.5,5,5\n", "column arrived_at"},
    {"arrived_at,num_prefill_tokens,num_decode_tokens\n5.,5,5\n", "column arrived_at"},
    {"arrived_at,num_prefill_tokens,num_decode_tokens\n1000001,5,5\n", "at most 1000000 s"},
    {"arrived_at,num_prefill_tokens,num_decode_tokens\n0,0,5\n",
     "line 2: column num_prefill_tokens: expected at least 1 token"},
    {"arrived_at,num_prefill_tokens,num_decode_tokens\n0,5,0\n", "column num_decode_tokens"},
    {"arrived_at,num_prefill_tokens,num_decode_tokens\n0,5.5,3\n", "column num_prefill_tokens"},
    {"arrived_at,num_prefill_tokens,num_decode_tokens\n2,5,5\n1.5,5,5\n",
     "line 3: rows must be sorted by arrived_at: \"1.5\" is earlier than the arrival on line 2"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    char *file = g_build_filename(f->tmp, "vidur_bad.csv", NULL);
    assert_true(g_file_set_contents(file, bad[i].text, -1, NULL));
    error = NULL;
    assert_null(cs_vidur_trace_load(file, &error));
    assert_non_null(error);
    if (!strstr(error->message, bad[i].message) || !strstr(error->message, "vidur_bad.csv"))
      fail_msg("case %zu: got \"%s\", expected \"%s\"", i, error->message, bad[i].message);
    g_error_free(error);
    g_free(file);
  }
  /* Columns found by name, in any order; a time of more than nine fraction
   * digits rounds half up. */
  char *file = g_build_filename(f->tmp, "vidur_order.csv", NULL);
  assert_true(g_file_set_contents(
    file, "num_decode_tokens,arrived_at,num_prefill_tokens\n7,0.0000000004,3\n9,0.0000000005,4\n",
    -1, NULL));
  error = NULL;
  t = cs_vidur_trace_load(file, &error);
  if (!t)
    fail_msg("%s", error->message);
  assert_int_equal(t->n_records, 2);
  assert_int_equal(t->records[0].time_ns, 0);
  assert_int_equal(t->records[0].prompt_tokens, 3);
  assert_int_equal(t->records[0].output_tokens, 7);
  assert_int_equal(t->records[1].time_ns, 1);
  cs_llm_request_trace_free(t);
  g_free(file);
}

static void test_checksums(void **state)
{
  Fixture *f = *state;
  static const struct {
    const char *rel, *sha256;
  } files[] = {
    {LLM_FILE, "2f1e5b666d4e3055fdbba98598ce2ec307767b9064e03e2fa46676dbcc7d0bf8"},
    {MAF2019_DIR "/durations.csv",
     "bc2e52d33f1ec0d4032dc7cbdacadb7622413c9264f5478bf8da2c3aacd92b55"},
    {MAF2019_DIR "/invocations.csv",
     "a0ca953d1b50cc1f0e813c656e0c3d65b7369757804b571e2767e1ab76b05536"},
    {MAF2019_DIR "/memory.csv", "ea3ac4b65629cb33e567ac0a517d6ae68747a5dd143ff394b86f78f685b65305"},
    {MAF2021_FILE, "8aa8f53ce4845b524e7656936c22c0a2407ea577da89a307e6d9a8f9695b7f50"},
    {VIDUR_CODE_FILE, "f266b907d109d471c61283ab69771c17ad79a18b33ff6e96aa546346f52767a6"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
    char *path = source_path(f, files[i].rel);
    GError *error = NULL;
    char *hex = cs_trace_file_sha256(path, &error);
    assert_non_null(hex);
    assert_string_equal(hex, files[i].sha256); /* = SOURCES.md: byte-for-byte copies */
    g_free(hex);
    g_free(path);
  }
  GError *error = NULL;
  char *missing = g_build_filename(f->tmp, "does-not-exist.csv", NULL);
  assert_null(cs_trace_file_sha256(missing, &error));
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  g_error_free(error);
  g_free(missing);
}

/* ------------------------------------------------------------- inspect */

static void test_inspect_maf2019(void **state)
{
  Fixture *f = *state;
  char *path = source_path(f, MAF2019_DIR "/invocations.csv");
  CsTraceStats s;
  GError *error = NULL;
  assert_true(cs_trace_inspect(path, CS_TRACE_FORMAT_AUTO, CS_TRACE_FLAGS_NONE, &s, &error));
  assert_int_equal(s.format, CS_TRACE_FORMAT_MAF2019);
  assert_int_equal(s.rows, 500);
  assert_int_equal(s.functions, 500);
  assert_int_equal(s.apps, 476);
  assert_int_equal(s.invocations, INT64_C(3037902));
  assert_int_equal(s.first_minute, 480);
  assert_int_equal(s.last_minute, 959);
  assert_int_equal(s.span_minutes, 480);
  assert_near(s.rate_min, 3013, 0);
  assert_near(s.rate_median, 6463.5, 0);
  assert_near(s.rate_max, 7603, 0);
  assert_true(isnan(s.burstiness_cv));
  assert_int_equal(s.n_top, 10);
  assert_string_equal(s.top[0].function,
                      "1992918c23cc92244ef4a1efabbf23ab28abe05bf37658eec9af9232d78e0939");
  assert_int_equal(s.top[0].invocations, 1915521);
  assert_int_equal(s.top[1].invocations, 273379);
  assert_int_equal(s.top[9].invocations, 28800);
  assert_string_equal(s.sha256, "a0ca953d1b50cc1f0e813c656e0c3d65b7369757804b571e2767e1ab76b05536");

  cJSON *json = cs_trace_stats_to_json(&s);
  assert_string_equal(cJSON_GetObjectItem(json, "format")->valuestring, "maf2019");
  assert_near(cJSON_GetObjectItem(json, "invocations")->valuedouble, 3037902, 0);
  assert_true(cJSON_IsNull(cJSON_GetObjectItem(json, "burstiness_cv")));
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(json, "top_functions")), 10);
  cJSON *span = cJSON_GetObjectItem(json, "span");
  assert_near(cJSON_GetObjectItem(span, "first_minute")->valuedouble, 480, 0);
  cJSON_Delete(json);

  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  cs_trace_stats_print(&s, out);
  fclose(out);
  assert_non_null(strstr(text, "3037902"));
  assert_non_null(strstr(text, "480..959"));
  assert_non_null(strstr(text, "1992918c23cc92244ef4a1efabbf23ab28abe05bf37658eec9af9232d78e0939"));
  free(text);
  cs_trace_stats_clear(&s);
  g_free(path);
}

static void test_inspect_maf2021(void **state)
{
  Fixture *f = *state;
  char *path = source_path(f, MAF2021_FILE);
  CsTraceStats s;
  GError *error = NULL;
  assert_true(cs_trace_inspect(path, CS_TRACE_FORMAT_AUTO, CS_TRACE_FLAGS_NONE, &s, &error));
  assert_int_equal(s.format, CS_TRACE_FORMAT_MAF2021);
  assert_int_equal(s.rows, 998);
  assert_int_equal(s.invocations, 998);
  assert_int_equal(s.functions, 49);
  assert_int_equal(s.apps, 21);
  assert_int_equal(s.first_minute, 0);
  assert_int_equal(s.last_minute, 107);
  assert_int_equal(s.span_minutes, 108);
  assert_near(s.rate_min, 1, 0);
  assert_near(s.rate_median, 6, 0);
  assert_near(s.rate_max, 53, 0);
  assert_near(s.burstiness_cv, 1.7515203875968612, 1e-9);
  assert_int_equal(s.top[0].invocations, 174);
  assert_string_equal(s.top[0].function,
                      "9bc86d6cd1ee254aaa313492f0fd88be8bd7b92d50d4237ff52d7685440c0906");
  assert_int_equal(s.top[1].invocations, 108);
  cs_trace_stats_clear(&s);

  /* Sorting in memory gives the same numbers for a sorted file. */
  assert_true(cs_trace_inspect(path, CS_TRACE_FORMAT_MAF2021, CS_TRACE_ALLOW_UNSORTED, &s, &error));
  assert_int_equal(s.rows, 998);
  assert_near(s.burstiness_cv, 1.7515203875968612, 1e-9);
  cs_trace_stats_clear(&s);
  g_free(path);
}

static void test_inspect_llm(void **state)
{
  Fixture *f = *state;
  char *path = source_path(f, LLM_FILE);
  CsTraceStats s;
  GError *error = NULL;
  assert_true(cs_trace_inspect(path, CS_TRACE_FORMAT_AUTO, CS_TRACE_FLAGS_NONE, &s, &error));
  assert_int_equal(s.format, CS_TRACE_FORMAT_AZURE_LLM);
  assert_false(s.has_functions);
  assert_int_equal(s.n_top, 0);
  assert_int_equal(s.rows, 19366);
  assert_near(s.first_s, 0.0, 0);
  assert_near(s.last_s, 3501.721937, 1e-9); /* ~58 min */
  assert_int_equal(s.span_minutes, 59);
  assert_near(s.rate_min, 37, 0);
  assert_near(s.rate_median, 326, 0);
  assert_near(s.rate_max, 507, 0);
  assert_near(s.burstiness_cv, 1.0941699818437753, 1e-6);
  assert_string_equal(s.first_timestamp, "2023-11-16 18:15:46.680590000");
  cJSON *json = cs_trace_stats_to_json(&s);
  assert_true(cJSON_IsNull(cJSON_GetObjectItem(json, "functions")));
  assert_string_equal(cJSON_GetObjectItem(json, "format")->valuestring, "azure-llm");
  cJSON_Delete(json);
  cs_trace_stats_clear(&s);
  g_free(path);
}

static void test_detect_and_names(void **state)
{
  Fixture *f = *state;
  GError *error = NULL;
  char *dur = source_path(f, MAF2019_DIR "/durations.csv");
  assert_int_equal(cs_trace_detect_format(dur, &error), CS_TRACE_FORMAT_AUTO);
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID));
  assert_non_null(strstr(error->message, "durations.csv: line 1: this is a MAF 2019 durations"));
  g_clear_error(&error);
  g_free(dur);

  CsTraceFormat fmt;
  static const CsTraceFormat all[] = {CS_TRACE_FORMAT_AUTO, CS_TRACE_FORMAT_MAF2019,
                                      CS_TRACE_FORMAT_MAF2021, CS_TRACE_FORMAT_AZURE_LLM};
  for (size_t i = 0; i < G_N_ELEMENTS(all); i++) {
    assert_true(cs_trace_format_from_name(cs_trace_format_name(all[i]), &fmt, &error));
    assert_int_equal(fmt, all[i]);
  }
  assert_false(cs_trace_format_from_name("maf2020", &fmt, &error));
  assert_non_null(strstr(error->message, "unknown trace format \"maf2020\""));
  g_clear_error(&error);
}

/* ------------------------------------------------------ small good files */

static void test_csv_variants(void **state)
{
  Fixture *f = *state;
  GError *error = NULL;
  /* Byte-order mark, CRLF, quoted fields, a blank line, no final newline. */
  char *path = write_tmp(f, "variants.csv",
                         "\xEF\xBB\xBFHashOwner,HashApp,HashFunction,Trigger,1439,1440\r\n"
                         "o1,\"a,1\",f1,\"say \"\"hi\"\"\",3,4\r\n"
                         "\r\n"
                         "o2,a2,f2,timer,0,12");
  CsMaf2019Reader *r = cs_maf2019_reader_open(path, NULL, NULL, &error);
  assert_non_null(r);
  CsMaf2019Record rec;
  assert_int_equal(cs_maf2019_reader_next(r, &rec, &error), 1);
  assert_string_equal(rec.app, "a,1");
  assert_string_equal(rec.trigger, "say \"hi\"");
  assert_int_equal(rec.first_minute, 1439);
  assert_int_equal(rec.total, 7);
  assert_int_equal(cs_maf2019_reader_next(r, &rec, &error), 1);
  assert_int_equal(rec.line, 4);
  assert_int_equal(rec.counts[1], 12);
  assert_int_equal(cs_maf2019_reader_next(r, &rec, &error), 0);
  cs_maf2019_reader_close(r);
  g_free(path);

  /* Original app-level memory file (no HashFunction): joined by owner+app. */
  char *inv = write_tmp(f, "inv_small.csv",
                        "HashOwner,HashApp,HashFunction,Trigger,1\no1,a1,f1,http,2\n");
  char *mem = write_tmp(f, "mem_app.csv",
                        "HashOwner,HashApp,SampleCount,AverageAllocatedMb\no1,a1,5,123.5\n");
  r = cs_maf2019_reader_open(inv, NULL, mem, &error);
  assert_non_null(r);
  assert_int_equal(cs_maf2019_reader_next(r, &rec, &error), 1);
  assert_near(rec.memory_avg_mb, 123.5, 0);
  assert_true(isnan(rec.duration_avg_ms));
  cs_maf2019_reader_close(r);
  g_free(inv);
  g_free(mem);
}

static void test_llm_precision(void **state)
{
  Fixture *f = *state;
  GError *error = NULL;
  /* 100 ns apart, across a leap-day midnight, a 9-digit fraction, zones. */
  char *path = write_tmp(f, "llm_precise.csv",
                         "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                         "2024-02-29 23:59:59.9999999,1,2\n"
                         "2024-03-01 00:00:00.0000001,3,4\n"
                         "2024-03-01T00:00:00.000000250,5,6\n"
                         "2024-03-01 00:00:01,7,8\n"
                         "2024-03-01 00:00:01.5+00:00,9,10\n"
                         "2024-03-01 00:00:03Z,11,12\n"
                         "2024-03-01 01:00:02-01:00,13,14\n");
  CsAzureLlmReader *r = cs_azure_llm_reader_open(path, CS_TRACE_FLAGS_NONE, &error);
  assert_non_null(r);
  static const int64_t want[] = {0, 200, 350, 1000000100, 1500000100, 3000000100,
                                  INT64_C(7202000000100)};
  CsAzureLlmRecord rec;
  for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
    assert_int_equal(cs_azure_llm_reader_next(r, &rec, &error), 1);
    assert_int_equal(rec.time_ns, want[i]);
  }
  assert_int_equal(cs_azure_llm_reader_next(r, &rec, &error), 0);
  char *s = cs_trace_format_epoch_ns(cs_azure_llm_reader_origin_epoch_ns(r));
  assert_string_equal(s, "2024-02-29 23:59:59.999999900");
  g_free(s);
  cs_azure_llm_reader_close(r);
  g_free(path);
}

static void test_unsorted_allowed(void **state)
{
  Fixture *f = *state;
  GError *error = NULL;
  /* Starts: 5, 2, 5, 1 (line 5 and 3 tie at 5: file order is kept). */
  char *path = write_tmp(f, "maf2021_unsorted.csv",
                         "app,func,end_timestamp,duration\n"
                         "a,f1,6,1\n"
                         "a,f2,2.5,0.5\n"
                         "b,f3,5,0\n"
                         "b,f4,3,2\n");
  CsMaf2021Reader *r = cs_maf2021_reader_open(path, CS_TRACE_ALLOW_UNSORTED, &error);
  assert_non_null(r);
  CsMaf2021Record rec;
  int n = 0;
  while (cs_maf2021_reader_next(r, &rec, &error) > 0)
    n++;
  assert_int_equal(n, 4);
  assert_null(error);
  cs_maf2021_reader_close(r);

  CsMaf2021Trace *t = cs_maf2021_load_sorted(path, &error);
  assert_non_null(t);
  assert_int_equal(t->n_records, 4);
  static const char *order[] = {"f4", "f2", "f1", "f3"};
  for (size_t i = 0; i < 4; i++)
    assert_string_equal(t->records[i].func, order[i]);
  assert_near(t->records[0].arrival_s, 1.0, 0);
  cs_maf2021_trace_free(t);
  g_free(path);

  path = write_tmp(f, "llm_unsorted.csv",
                   "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                   "2023-11-16 18:00:10,1,1\n"
                   "2023-11-16 18:00:05,2,2\n"
                   "2023-11-16 18:00:10,3,3\n");
  CsAzureLlmReader *lr = cs_azure_llm_reader_open(path, CS_TRACE_ALLOW_UNSORTED, &error);
  CsAzureLlmRecord lrec;
  assert_int_equal(cs_azure_llm_reader_next(lr, &lrec, &error), 1);
  assert_int_equal(cs_azure_llm_reader_next(lr, &lrec, &error), 1);
  assert_int_equal(lrec.time_ns, INT64_C(-5000000000)); /* relative to the first row */
  cs_azure_llm_reader_close(lr);
  CsAzureLlmTrace *lt = cs_azure_llm_load_sorted(path, &error);
  assert_non_null(lt);
  assert_int_equal(lt->records[0].context_tokens, 2);
  assert_int_equal(lt->records[0].time_ns, 0);
  assert_int_equal(lt->records[1].context_tokens, 1);
  assert_int_equal(lt->records[2].context_tokens, 3);
  assert_int_equal(lt->records[2].time_ns, INT64_C(5000000000));
  cs_azure_llm_trace_free(lt);

  CsTraceStats s;
  assert_false(cs_trace_inspect(path, CS_TRACE_FORMAT_AUTO, CS_TRACE_FLAGS_NONE, &s, &error));
  assert_non_null(strstr(error->message, "llm_unsorted.csv: line 3: rows must be sorted"));
  g_clear_error(&error);
  cs_trace_stats_clear(&s);
  assert_true(cs_trace_inspect(path, CS_TRACE_FORMAT_AUTO, CS_TRACE_ALLOW_UNSORTED, &s, &error));
  assert_int_equal(s.rows, 3);
  assert_near(s.last_s, 5.0, 0);
  cs_trace_stats_clear(&s);
  g_free(path);
}


/* Header lines of the three formats. */
#define H19 "HashOwner,HashApp,HashFunction,Trigger,"
#define H21 "app,func,end_timestamp,duration\n"
#define HLLM "TIMESTAMP,ContextTokens,GeneratedTokens\n"

/* --------------------------------------------------- timestamps (Azure LLM) */

/* Epoch seconds from Python's datetime (UTC), independent of this code:
 *   (datetime(2199,12,31,23,59,59) - datetime(1970,1,1)).total_seconds()
 *     = 7258118399
 *   (datetime(2000,2,29,12) - datetime(1970,1,1)).total_seconds() = 951825600 */
static void test_llm_timestamp_range(void **state)
{
  Fixture *f = *state;
  GError *error = NULL;
  /* The first and last instants accepted, and 29 February of 2000 (a leap
   * year: divisible by 400). ALLOW_UNSORTED: the order is not an error. */
  char *path = write_tmp(f, "llm_range.csv",
                         HLLM "2000-02-29T12:00:00Z,3,3\n"
                              "2199-12-31 23:59:59.999999999,2,2\n"
                              "1970-01-01 00:00:00,1,1\n"
                              "2000-02-29 12:00:00.5Z,4,4\n");
  CsAzureLlmReader *r = cs_azure_llm_reader_open(path, CS_TRACE_ALLOW_UNSORTED, &error);
  assert_non_null(r);
  CsAzureLlmRecord rec;
  assert_int_equal(cs_azure_llm_reader_next(r, &rec, &error), 1);
  assert_int_equal(rec.epoch_ns, INT64_C(951825600) * 1000000000);
  assert_int_equal(rec.time_ns, 0);
  assert_int_equal(cs_azure_llm_reader_next(r, &rec, &error), 1);
  assert_int_equal(rec.epoch_ns, INT64_C(7258118399) * 1000000000 + 999999999);
  assert_int_equal(rec.time_ns,
                   (INT64_C(7258118399) - INT64_C(951825600)) * 1000000000 + 999999999);
  assert_int_equal(cs_azure_llm_reader_next(r, &rec, &error), 1);
  assert_int_equal(rec.epoch_ns, 0);
  assert_int_equal(rec.time_ns, INT64_C(-951825600) * 1000000000);
  assert_int_equal(cs_azure_llm_reader_next(r, &rec, &error), 1);
  assert_int_equal(rec.epoch_ns, INT64_C(951825600) * 1000000000 + 500000000);
  assert_int_equal(cs_azure_llm_reader_next(r, &rec, &error), 0);
  cs_azure_llm_reader_close(r);

  /* Before 1970 the formatter borrows from the seconds and the days. */
  static const struct {
    int64_t ns;
    const char *text;
  } fmt[] = {
    {0, "1970-01-01 00:00:00.000000000"},
    {-1, "1969-12-31 23:59:59.999999999"},
    {INT64_C(-86400) * 1000000000, "1969-12-31 00:00:00.000000000"},
    {INT64_C(-2208988800) * 1000000000, "1900-01-01 00:00:00.000000000"},
    {INT64_C(951825600) * 1000000000 + 5, "2000-02-29 12:00:00.000000005"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(fmt); i++) {
    char *text = cs_trace_format_epoch_ns(fmt[i].ns);
    assert_string_equal(text, fmt[i].text);
    g_free(text);
  }

  /* Sorted in memory the earliest row (1970) is the origin and the latest
   * (2199) is 230 years after it: still exact in int64 ns. (With years from
   * 1900 this difference overflowed: 300 years exceed 2^63 ns.) */
  CsAzureLlmTrace *t = cs_azure_llm_load_sorted(path, &error);
  assert_non_null(t);
  assert_int_equal(t->origin_epoch_ns, 0);
  assert_int_equal(t->records[1].context_tokens, 3);
  assert_int_equal(t->records[3].time_ns, INT64_C(7258118399) * 1000000000 + 999999999);
  cs_azure_llm_trace_free(t);
  cs_azure_llm_trace_free(NULL);
  g_free(path);
}

/* Each malformed TIMESTAMP is refused with the same message. */
static void test_llm_bad_timestamps(void **state)
{
  Fixture *f = *state;
  static const char *const bad[] = {
    "2023/11/16 18:15:46",       /* separator after the year */
    "2023-11/16 18:15:46",       /* separator after the month */
    "2023-11-1x 18:15:46",       /* day not digits */
    "2023-1x-16 18:15:46",       /* month not digits */
    "2023-11-16_18:15:46",       /* date-time separator */
    "2023-11-16 1x:15:46",       /* hour not digits */
    "2023-11-16 18-15:46",       /* separator after the hour */
    "2023-11-16 18:1x:46",       /* minute not digits */
    "2023-11-16 18:15-46",       /* separator after the minute */
    "2023-11-16 18:15:4x",       /* second not digits */
    "2023-11-16 18:15:46.",      /* a point without digits */
    "20x3-11-16 18:15:46",       /* year not digits */
    "2023-11- 6 18:15:46",       /* a space (below '0') for a digit */
    "2023-11-16 18:15:46.5 ",    /* trailing text */
    "2023-11-16 18:15:46+0x:00", /* zone hour not digits */
    "2023-11-16 18:15:46+05-00", /* zone separator */
    "2023-11-16 18:15:46+05:x0", /* zone minute not digits */
    "2023-11-16 18:15:46+05:60", /* zone minute 60 */
    "1969-12-31 23:59:59",       /* before 1970 */
    "1900-01-01 00:00:00",       /* (accepted before: 1900..2199 could overflow time_ns) */
    "2200-01-01 00:00:00",       /* after 2199 */
    "2023-00-16 18:15:46",       /* month 0 */
    "2023-11-16 24:00:00",       /* hour 24 */
    "2023-11-16 18:60:00",       /* minute 60 */
    "2023-11-16 18:15:60",       /* second 60 (no leap seconds) */
    "2023-11-00 18:15:46",       /* day 0 */
    "2023-04-31 18:15:46",       /* 30 days in April */
    "2100-02-29 00:00:00",       /* 2100: divisible by 100, not by 400 */
  };
  int failures = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    char *content = g_strdup_printf(HLLM "%s,1,2\n", bad[i]);
    char *path = write_tmp(f, "llm_bad_time.csv", content);
    GError *error = NULL;
    CsAzureLlmReader *r = cs_azure_llm_reader_open(path, CS_TRACE_FLAGS_NONE, &error);
    CsAzureLlmRecord rec;
    int rc = cs_azure_llm_reader_next(r, &rec, &error);
    char *want = g_strdup_printf("%s: line 2: column TIMESTAMP: expected a date and time "
                                 "\"YYYY-MM-DD HH:MM:SS\" with an optional fraction of up to 9 "
                                 "digits and zone +HH:MM (years 1970..2199), got \"%s\"",
                                 path, bad[i]);
    if (rc != -1 || !error || strcmp(error->message, want) != 0) {
      print_error("\"%s\": rc %d, message \"%s\"\n", bad[i], rc, error ? error->message : "");
      failures++;
    }
    g_clear_error(&error);
    cs_azure_llm_reader_close(r);
    g_free(want);
    g_free(path);
    g_free(content);
  }
  assert_int_equal(failures, 0);
}

/* ------------------------------------------------ more readers' behaviour */

static void test_maf2019_layouts(void **state)
{
  Fixture *f = *state;
  GError *error = NULL;
  /* A column before the minutes whose name is not a number (here empty) is
   * not a minute; the last field quoted. */
  char *path = write_tmp(f, "m19_extra.csv", H19 ",1,2\no,a,f,t,x,3,\"4\"\n");
  CsMaf2019Reader *r = cs_maf2019_reader_open(path, NULL, NULL, &error);
  assert_non_null(r);
  assert_int_equal(cs_maf2019_reader_first_minute(r), 1);
  assert_int_equal(cs_maf2019_reader_n_minutes(r), 2);
  CsMaf2019Record rec;
  assert_int_equal(cs_maf2019_reader_next(r, &rec, &error), 1);
  assert_int_equal(rec.total, 7);
  assert_int_equal(rec.counts[0], 3);
  assert_int_equal(rec.counts[1], 4);
  cs_maf2019_reader_close(r);
  g_free(path);

  /* Companions: the first row of a repeated key wins; a function missing
   * from a companion gets NAN; memory per function. */
  char *inv = write_tmp(f, "m19_inv.csv", H19 "1\no,a,f,t,1\no,a,g,t,2\n");
  char *dur = write_tmp(f, "m19_dur.csv",
                        "HashOwner,HashApp,HashFunction,Average\no,a,f,5\no,a,f,7\n");
  char *mem = write_tmp(f, "m19_mem.csv", "HashFunction,AverageAllocatedMb\ng,64\n");
  r = cs_maf2019_reader_open(inv, dur, mem, &error);
  assert_non_null(r);
  assert_int_equal(cs_maf2019_reader_next(r, &rec, &error), 1);
  assert_near(rec.duration_avg_ms, 5.0, 0);
  assert_true(isnan(rec.memory_avg_mb));
  assert_int_equal(cs_maf2019_reader_next(r, &rec, &error), 1);
  assert_true(isnan(rec.duration_avg_ms));
  assert_near(rec.memory_avg_mb, 64.0, 0);
  assert_int_equal(cs_maf2019_reader_next(r, &rec, &error), 0);
  cs_maf2019_reader_close(r);
  cs_maf2019_reader_close(NULL);

  /* The invocations file itself missing, companions given. */
  char *absent = g_build_filename(f->tmp, "absent_inv.csv", NULL);
  assert_null(cs_maf2019_reader_open(absent, dur, mem, &error));
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  assert_true(g_str_has_prefix(error->message, absent));
  g_clear_error(&error);
  g_free(absent);
  g_free(inv);
  g_free(dur);
  g_free(mem);
}

static void test_maf2021_single_and_bad_sorted(void **state)
{
  Fixture *f = *state;
  GError *error = NULL;
  /* One row: start = end - duration = 100 - 40 = 60 s. */
  char *path = write_tmp(f, "m21_one.csv", H21 "a,f,100,40\n");
  CsMaf2021Trace *t = cs_maf2021_load_sorted(path, &error);
  assert_non_null(t);
  assert_int_equal(t->n_records, 1);
  assert_near(t->records[0].arrival_s, 60.0, 0);
  assert_int_equal(t->records[0].arrival_ns, INT64_C(60000000000));
  cs_maf2021_trace_free(t);
  cs_maf2021_trace_free(NULL);
  g_free(path);

  /* A bad row stops load_sorted with the reader's message. */
  path = write_tmp(f, "m21_bad_sorted.csv", H21 "a,f,5,1\na,f,4,-1\n");
  assert_null(cs_maf2021_load_sorted(path, &error));
  assert_non_null(strstr(error->message, "m21_bad_sorted.csv: line 3: column duration: negative "
                                         "value \"-1\""));
  g_clear_error(&error);
  CsTraceStats s;
  assert_false(cs_trace_inspect(path, CS_TRACE_FORMAT_MAF2021, CS_TRACE_ALLOW_UNSORTED, &s,
                                &error));
  assert_non_null(strstr(error->message, "line 3: column duration: negative value"));
  g_clear_error(&error);
  cs_trace_stats_clear(&s);
  g_free(path);

  path = write_tmp(f, "llm_bad_sorted.csv", HLLM "2023-11-16 18:00:10,1,1\n2023-11-16,1,1\n");
  assert_null(cs_azure_llm_load_sorted(path, &error));
  assert_non_null(strstr(error->message, "llm_bad_sorted.csv: line 3: column TIMESTAMP"));
  g_clear_error(&error);
  assert_false(cs_trace_inspect(path, CS_TRACE_FORMAT_AZURE_LLM, CS_TRACE_ALLOW_UNSORTED, &s,
                                &error));
  assert_non_null(strstr(error->message, "line 3: column TIMESTAMP"));
  g_clear_error(&error);
  cs_trace_stats_clear(&s);
  g_free(path);
}

/* A NUL byte inside a line (a binary file) is refused by name and line. */
static void test_nul_byte(void **state)
{
  Fixture *f = *state;
  static const char content[] = HLLM "2023-11-16 18:15:46,1,2\n2023-11-16 18:15:4\0" "7,1,2\n";
  char *path = g_build_filename(f->tmp, "llm_nul.csv", NULL);
  assert_true(g_file_set_contents(path, content, sizeof content - 1, NULL));
  GError *error = NULL;
  CsAzureLlmReader *r = cs_azure_llm_reader_open(path, CS_TRACE_FLAGS_NONE, &error);
  CsAzureLlmRecord rec;
  assert_int_equal(cs_azure_llm_reader_next(r, &rec, &error), 1);
  assert_int_equal(cs_azure_llm_reader_next(r, &rec, &error), -1);
  char *want = g_strdup_printf("%s: line 3: unexpected NUL byte (not a text CSV file?)", path);
  assert_string_equal(error->message, want);
  g_clear_error(&error);
  g_free(want);
  cs_azure_llm_reader_close(r);
  g_free(path);
}

/* A directory given as a trace: refused as what it is when opened, not a
 * crash, an empty trace or an EISDIR read error after line 0. */
static void test_directory_as_trace(void **state)
{
  Fixture *f = *state;
  GError *error = NULL;
  char *dir = g_build_filename(f->tmp, "a_directory", NULL);
  assert_int_equal(g_mkdir(dir, 0700), 0);
  char *sum = cs_trace_file_sha256(dir, &error);
  assert_null(sum);
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  char *want = g_strdup_printf("%s: cannot read: not a regular file (a directory)", dir);
  assert_string_equal(error->message, want);
  g_clear_error(&error);

  assert_int_equal(cs_trace_detect_format(dir, &error), CS_TRACE_FORMAT_AUTO);
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  assert_string_equal(error->message, want);
  g_free(want);
  g_clear_error(&error);

  /* Format given: the checksum is read first and fails the same way. */
  CsTraceStats s;
  assert_false(cs_trace_inspect(dir, CS_TRACE_FORMAT_MAF2021, CS_TRACE_FLAGS_NONE, &s, &error));
  assert_non_null(strstr(error->message, ": cannot read: not a regular file (a directory)"));
  assert_null(s.sha256);
  g_clear_error(&error);
  cs_trace_stats_clear(&s);
  g_rmdir(dir);
  g_free(dir);

  /* A FIFO without a writer: opening it must not wait for one (before, the
   * test hung here), and a device must not be read without end. */
  char *fifo = g_build_filename(f->tmp, "a_fifo", NULL);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(cs_trace_detect_format(fifo, &error), CS_TRACE_FORMAT_AUTO);
  want = g_strdup_printf("%s: cannot read: not a regular file (a FIFO)", fifo);
  assert_string_equal(error->message, want);
  g_free(want);
  g_clear_error(&error);
  assert_null(cs_trace_file_sha256(fifo, &error));
  assert_non_null(strstr(error->message, "(a FIFO)"));
  g_clear_error(&error);
  g_unlink(fifo);
  g_free(fifo);
  assert_null(cs_maf2021_reader_open("/dev/zero", CS_TRACE_FLAGS_NONE, &error));
  assert_string_equal(error->message, "/dev/zero: cannot read: not a regular file (a character "
                                      "device)");
  g_clear_error(&error);

  char *absent = g_build_filename(f->tmp, "absent_trace.csv", NULL);
  assert_null(cs_maf2021_load_sorted(absent, &error));
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  g_clear_error(&error);
  assert_null(cs_azure_llm_load_sorted(absent, &error));
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  g_clear_error(&error);
  assert_null(cs_azure_llm_reader_open(absent, CS_TRACE_FLAGS_NONE, &error));
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  want = g_strdup_printf("%s: cannot read: not found", absent);
  assert_string_equal(error->message, want);
  g_free(want);
  g_clear_error(&error);
  assert_int_equal(cs_trace_detect_format(absent, &error), CS_TRACE_FORMAT_AUTO);
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  g_clear_error(&error);
  assert_false(cs_trace_inspect(absent, CS_TRACE_FORMAT_AZURE_LLM, CS_TRACE_FLAGS_NONE, &s,
                                &error));
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  g_clear_error(&error);
  cs_trace_stats_clear(&s);
  g_free(absent);
}

static void test_format_names_edge(void **state)
{
  (void)state;
  CsTraceFormat fmt = CS_TRACE_FORMAT_MAF2019;
  GError *error = NULL;
  assert_string_equal(cs_trace_format_name((CsTraceFormat)99), "unknown");
  assert_false(cs_trace_format_from_name(NULL, &fmt, &error));
  assert_string_equal(error->message, "unknown trace format \"\": expected auto, maf2019, "
                                      "maf2021 or azure-llm");
  assert_int_equal(fmt, CS_TRACE_FORMAT_MAF2019);
  g_clear_error(&error);
}

/* Statistics of small traces counted by hand. */
static void test_inspect_small_llm(void **state)
{
  Fixture *f = *state;
  GError *error = NULL;
  /* Arrivals 0, 30, 90, 180 s: minutes 0,0,1,3 -> per minute 2,1,0,1 (4
   * minutes; sorted 0,1,1,2: median 1). Gaps 30, 60, 90: mean 60, population
   * sd sqrt((900 + 0 + 900) / 3) = sqrt(600): CV sqrt(600)/60 = 0.40824829. */
  char *path = write_tmp(f, "llm_small.csv",
                         HLLM "2023-11-16 18:00:00,1,1\n2023-11-16 18:00:30,1,1\n"
                              "2023-11-16 18:01:30,1,1\n2023-11-16 18:03:00,1,1\n");
  CsTraceStats s;
  assert_true(cs_trace_inspect(path, CS_TRACE_FORMAT_AUTO, CS_TRACE_FLAGS_NONE, &s, &error));
  assert_int_equal(s.rows, 4);
  assert_int_equal(s.invocations, 4);
  assert_int_equal(s.first_minute, 0);
  assert_int_equal(s.last_minute, 3);
  assert_int_equal(s.span_minutes, 4);
  assert_near(s.rate_min, 0, 0);
  assert_near(s.rate_median, 1, 0);
  assert_near(s.rate_max, 2, 0);
  assert_near(s.burstiness_cv, sqrt(600.0) / 60.0, 1e-12);
  assert_near(s.last_s, 180.0, 0);

  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  cs_trace_stats_print(&s, out);
  fclose(out);
  assert_non_null(strstr(text, "functions     n/a (no function identity in this format)\n"));
  assert_non_null(strstr(text, "span          0.000 s .. 180.000 s (3.0 min; minutes 0..3, 4 "
                               "min)\n"));
  assert_non_null(strstr(text, "starts        2023-11-16 18:00:00.000000000 UTC (time 0)\n"));
  assert_non_null(strstr(text, "per minute    min 0, median 1.0, max 2\n"));
  assert_non_null(strstr(text, "burstiness    0.408 (CV of inter-arrival gaps; 1 = Poisson)\n"));
  assert_null(strstr(text, "busiest functions"));
  free(text);

  cJSON *json = cs_trace_stats_to_json(&s);
  cJSON *span = cJSON_GetObjectItem(json, "span");
  assert_string_equal(cJSON_GetObjectItem(span, "first_timestamp")->valuestring,
                      "2023-11-16 18:00:00.000000000");
  assert_near(cJSON_GetObjectItem(span, "last_s")->valuedouble, 180.0, 0);
  assert_near(cJSON_GetObjectItem(json, "burstiness_cv")->valuedouble, sqrt(600.0) / 60.0, 1e-12);
  assert_true(cJSON_IsNull(cJSON_GetObjectItem(json, "apps")));
  cJSON_Delete(json);
  cs_trace_stats_clear(&s);
  g_free(path);
}

static void test_inspect_small_maf2021(void **state)
{
  Fixture *f = *state;
  GError *error = NULL;
  /* Starts 60, 61, 62 s (minute 1). Three functions with one invocation
   * each: the busiest list breaks ties by function hash, then app hash. */
  char *path = write_tmp(f, "m21_ties.csv", H21 "b,f,60,0\na,g,61,0\na,f,62,0\n");
  CsTraceStats s;
  assert_true(cs_trace_inspect(path, CS_TRACE_FORMAT_AUTO, CS_TRACE_FLAGS_NONE, &s, &error));
  assert_int_equal(s.functions, 3);
  assert_int_equal(s.apps, 2);
  assert_int_equal(s.n_top, 3);
  assert_string_equal(s.top[0].app, "a");
  assert_string_equal(s.top[0].function, "f");
  assert_string_equal(s.top[1].app, "b");
  assert_string_equal(s.top[1].function, "f");
  assert_string_equal(s.top[2].function, "g");
  /* Gaps 1, 1: sd 0, CV 0. */
  assert_near(s.burstiness_cv, 0.0, 0);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  cs_trace_stats_print(&s, out);
  fclose(out);
  assert_non_null(strstr(text, "span          60.000 s .. 62.000 s (0.0 min; minutes 1..1, 1 "
                               "min)\n"));
  assert_non_null(strstr(text, "     1            1  33.33%  a                f\n"));
  assert_null(strstr(text, "starts"));
  free(text);
  cs_trace_stats_clear(&s);
  g_free(path);

  /* One invocation: no gap, so no burstiness. */
  path = write_tmp(f, "m21_single.csv", H21 "a,f,100,40\n");
  assert_true(cs_trace_inspect(path, CS_TRACE_FORMAT_MAF2021, CS_TRACE_ALLOW_UNSORTED, &s,
                               &error));
  assert_int_equal(s.first_minute, 1);
  assert_true(isnan(s.burstiness_cv));
  text = NULL;
  out = open_memstream(&text, &len);
  cs_trace_stats_print(&s, out);
  fclose(out);
  assert_non_null(strstr(text, "burstiness    n/a (fewer than 2 gaps)\n"));
  assert_non_null(strstr(text, "     1            1 100.00%  a                f\n"));
  free(text);
  cJSON *json = cs_trace_stats_to_json(&s);
  assert_true(cJSON_IsNull(cJSON_GetObjectItem(json, "burstiness_cv")));
  cJSON_Delete(json);
  cs_trace_stats_clear(&s);
  g_free(path);
}

/* Arrivals all at one instant: two gaps, both 0, so the CV (sd / mean) is
 * undefined, and the summary says why. */
static void test_inspect_one_instant(void **state)
{
  Fixture *f = *state;
  GError *error = NULL;
  char *path = write_tmp(f, "m21_instant.csv", H21 "a,f,10,0\na,f,10,0\na,f,10,0\n");
  CsTraceStats s;
  assert_true(cs_trace_inspect(path, CS_TRACE_FORMAT_AUTO, CS_TRACE_FLAGS_NONE, &s, &error));
  assert_true(isnan(s.burstiness_cv));
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  cs_trace_stats_print(&s, out);
  fclose(out);
  assert_non_null(strstr(text, "burstiness    n/a (all arrivals at one instant)\n"));
  free(text);
  cs_trace_stats_clear(&s);
  g_free(path);
}

/* Counts all zero: the busiest list shows 0 % shares, not a division by 0. */
static void test_inspect_zero_counts(void **state)
{
  Fixture *f = *state;
  GError *error = NULL;
  char *path = write_tmp(f, "m19_zero.csv", H19 "7,8\no,a,f,t,0,0\n");
  CsTraceStats s;
  assert_true(cs_trace_inspect(path, CS_TRACE_FORMAT_AUTO, CS_TRACE_FLAGS_NONE, &s, &error));
  assert_int_equal(s.invocations, 0);
  assert_int_equal(s.n_top, 1);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  cs_trace_stats_print(&s, out);
  fclose(out);
  assert_non_null(strstr(text, "     1            0   0.00%  a                f\n"));
  assert_non_null(strstr(text, "burstiness    n/a (per-minute counts only)\n"));
  free(text);
  cs_trace_stats_clear(&s);

  /* Cleared statistics (as after a failed inspect) still print and convert:
   * no path, no checksum. */
  cJSON *json = cs_trace_stats_to_json(&s);
  assert_string_equal(cJSON_GetObjectItem(json, "path")->valuestring, "");
  assert_true(cJSON_IsNull(cJSON_GetObjectItem(json, "sha256")));
  cJSON_Delete(json);
  text = NULL;
  out = open_memstream(&text, &len);
  cs_trace_stats_print(&s, out);
  fclose(out);
  assert_true(g_str_has_prefix(text, "trace         \nformat        auto\nsha256        -\n"));
  free(text);
  g_free(path);
}

/* Spans and totals past what the statistics hold are refused, not wrapped. */
static void test_inspect_limits(void **state)
{
  Fixture *f = *state;
  GError *error = NULL;
  CsTraceStats s;
  /* 610,000,000 s = 10,166,666 minutes > 10,000,000. */
  char *path = write_tmp(f, "m21_span.csv", H21 "a,f,0,0\na,f,610000000,0\n");
  assert_false(cs_trace_inspect(path, CS_TRACE_FORMAT_AUTO, CS_TRACE_FLAGS_NONE, &s, &error));
  char *want = g_strdup_printf("%s: arrivals span more than 10000000 minutes (0 s and 610000000 "
                               "s); is a time column in the wrong unit?", path);
  assert_string_equal(error->message, want);
  g_free(want);
  g_clear_error(&error);
  cs_trace_stats_clear(&s);
  assert_false(cs_trace_inspect(path, CS_TRACE_FORMAT_AUTO, CS_TRACE_ALLOW_UNSORTED, &s, &error));
  assert_non_null(strstr(error->message, "arrivals span more than 10000000 minutes"));
  g_clear_error(&error);
  cs_trace_stats_clear(&s);
  g_free(path);

  /* 1970 to 2170: about 105 million minutes. */
  path = write_tmp(f, "llm_span.csv", HLLM "1970-01-01 00:00:00,1,1\n2170-01-01 00:00:00,1,1\n");
  assert_false(cs_trace_inspect(path, CS_TRACE_FORMAT_AUTO, CS_TRACE_FLAGS_NONE, &s, &error));
  assert_non_null(strstr(error->message, "arrivals span more than 10000000 minutes"));
  g_clear_error(&error);
  cs_trace_stats_clear(&s);
  assert_false(cs_trace_inspect(path, CS_TRACE_FORMAT_AUTO, CS_TRACE_ALLOW_UNSORTED, &s, &error));
  assert_non_null(strstr(error->message, "arrivals span more than 10000000 minutes"));
  g_clear_error(&error);
  cs_trace_stats_clear(&s);
  g_free(path);

  /* Each row fits int64 but their sum does not. */
  path = write_tmp(f, "m19_sum.csv", H19 "7\no,a,f,t,9223372036854775807\no,a,g,t,1\n");
  assert_false(cs_trace_inspect(path, CS_TRACE_FORMAT_AUTO, CS_TRACE_FLAGS_NONE, &s, &error));
  want = g_strdup_printf("%s: line 3: the file's total count overflows 64 bits", path);
  assert_string_equal(error->message, want);
  g_free(want);
  g_clear_error(&error);
  cs_trace_stats_clear(&s);
  g_free(path);
}

/* ------------------------------------------------------------ bad files */

typedef enum { BAD_MAF2019, BAD_DURATIONS, BAD_MEMORY, BAD_MAF2021, BAD_LLM, BAD_DETECT } BadKind;

typedef struct {
  BadKind kind;
  const char *name;     /* file name; the message must start with it */
  const char *content;
  const char *expected; /* substring after "<name>: " */
} BadFile;

static const BadFile bad_files[] = {
  {BAD_MAF2019, "m19_empty.csv", "", "empty file: expected a header line"},
  {BAD_MAF2019, "m19_header_only.csv", H19 "1,2\n", "line 1: no data rows after the header"},
  {BAD_MAF2019, "m19_no_trigger.csv", "HashOwner,HashApp,HashFunction,1,2\no,a,f,1,2\n",
   "line 1: header: missing column \"Trigger\""},
  {BAD_MAF2019, "m19_no_minutes.csv", H19 "x\n",
   "line 1: header: no minute columns"},
  {BAD_MAF2019, "m19_minute_name.csv", H19 "480,481,x482\no,a,f,t,1,2,3\n",
   "line 1: header column 7: expected a minute number (1..1440), got \"x482\""},
  {BAD_MAF2019, "m19_gap.csv", H19 "480,481,483\no,a,f,t,1,2,3\n",
   "line 1: header column 7: minute columns must be contiguous: expected 482, got 483"},
  {BAD_MAF2019, "m19_minute0.csv", H19 "0,1\no,a,f,t,1,2\n",
   "line 1: header column 5: minute 0 is outside 1..1440"},
  {BAD_MAF2019, "m19_past_day.csv", H19 "1440,1441\no,a,f,t,1,2\n",
   "line 1: header: minute 1441 is outside 1..1440"},
  {BAD_MAF2019, "m19_short_row.csv", H19 "1,2\no,a,f,t,1,2\no,a,g,t,1\n",
   "line 3: expected 6 columns as in the header, got 5"},
  {BAD_MAF2019, "m19_long_row.csv", H19 "1,2\r\no,a,f,t,1,2,3\r\n",
   "line 2: expected 6 columns as in the header, got 7"},
  {BAD_MAF2019, "m19_text_count.csv", H19 "7,8\no,a,f,t,1,2\n\no,a,g,t,1,many\n",
   "line 4: minute 8: expected a non-negative integer, got \"many\""},
  {BAD_MAF2019, "m19_float_count.csv", H19 "7,8\no,a,f,t,1.5,2\n",
   "line 2: minute 7: expected a non-negative integer, got \"1.5\""},
  {BAD_MAF2019, "m19_negative.csv", H19 "7,8\no,a,f,t,1,-3\n",
   "line 2: minute 8: negative count \"-3\", expected an integer >= 0"},
  {BAD_MAF2019, "m19_quote.csv", H19 "7\no,\"a,f,t,1\n",
   "line 2: unterminated quoted field in column 2"},
  {BAD_MAF2019, "m19_after_quote.csv", H19 "7\no,\"a\"x,f,t,1\n",
   "line 2: expected ',' or end of line after the closing quote of column 2"},
  {BAD_DURATIONS, "dur_no_average.csv", "HashOwner,HashApp,HashFunction,Count\no,a,f,3\n",
   "line 1: header: missing column \"Average\""},
  {BAD_DURATIONS, "dur_no_function.csv", "HashOwner,HashApp,Average\no,a,3\n",
   "line 1: header: missing column \"HashFunction\""},
  {BAD_DURATIONS, "dur_negative.csv", "HashOwner,HashApp,HashFunction,Average\no,a,f,-2\n",
   "line 2: column Average: negative value \"-2\", expected a number >= 0"},
  {BAD_DURATIONS, "dur_header_only.csv", "HashOwner,HashApp,HashFunction,Average\n",
   "line 1: no data rows after the header"},
  {BAD_MEMORY, "mem_no_key.csv", "SampleCount,AverageAllocatedMb\n3,100\n",
   "line 1: header: missing column \"HashOwner\""},
  {BAD_MEMORY, "mem_text.csv", "HashFunction,AverageAllocatedMb\nf,lots\n",
   "line 2: column AverageAllocatedMb: expected a finite number, got \"lots\""},
  {BAD_MAF2021, "m21_empty.csv", "\n\n", "empty file: expected a header line with columns "
                                         "app,func,end_timestamp,duration"},
  {BAD_MAF2021, "m21_header_only.csv", H21, "line 1: no data rows after the header"},
  {BAD_MAF2021, "m21_no_duration.csv", "app,func,end_timestamp\na,f,1\n",
   "line 1: header: missing column \"duration\""},
  {BAD_MAF2021, "m21_columns.csv", H21 "a,f,1,0.5\na,f,2\n",
   "line 3: expected 4 columns as in the header, got 3"},
  {BAD_MAF2021, "m21_negative.csv", H21 "a,f,1,0.5\na,f,2,0.5\na,f,3,-0.25\n",
   "line 4: column duration: negative value \"-0.25\""},
  {BAD_MAF2021, "m21_text.csv", H21 "a,f,soon,0.5\n",
   "line 2: column end_timestamp: expected a finite number, got \"soon\""},
  {BAD_MAF2021, "m21_nan.csv", H21 "a,f,nan,0.5\n",
   "line 2: column end_timestamp: expected a finite number, got \"nan\""},
  {BAD_MAF2021, "m21_order.csv", H21 "a,f,10,1\na,f,12,1\na,f,11,1.5\n",
   "line 4: rows must be sorted by start time (end_timestamp - duration): start 9.500000 s is "
   "earlier than 11.000000 s on line 3"},
  {BAD_MAF2021, "m21_range.csv", H21 "a,f,1e12,0\n",
   "line 2: start time end_timestamp - duration = 1e+12 s is outside +-1e+09 s"},
  {BAD_LLM, "llm_empty.csv", "", "empty file: expected a header line with columns TIMESTAMP"},
  {BAD_LLM, "llm_header_only.csv", HLLM, "line 1: no data rows after the header"},
  {BAD_LLM, "llm_no_generated.csv", "TIMESTAMP,ContextTokens\n2023-11-16 18:15:46,1\n",
   "line 1: header: missing column \"GeneratedTokens\""},
  {BAD_LLM, "llm_month.csv", HLLM "2023-13-16 18:15:46.6805900,1,2\n",
   "line 2: column TIMESTAMP: expected a date and time"},
  {BAD_LLM, "llm_feb30.csv", HLLM "2023-02-29 00:00:00,1,2\n",
   "line 2: column TIMESTAMP: expected a date and time"},
  {BAD_LLM, "llm_fraction.csv", HLLM "2023-11-16 18:15:46.1234567890,1,2\n",
   "line 2: column TIMESTAMP: expected a date and time"},
  {BAD_LLM, "llm_zone.csv", HLLM "2023-11-16 18:15:46.5+25:00,1,2\n",
   "line 2: column TIMESTAMP: expected a date and time"},
  {BAD_LLM, "llm_epoch.csv", HLLM "1700158546.68,1,2\n",
   "line 2: column TIMESTAMP: expected a date and time"},
  {BAD_LLM, "llm_tokens.csv", HLLM "2023-11-16 18:15:46,1,2\r\n2023-11-16 18:15:47,-1,2\r\n",
   "line 3: column ContextTokens: negative count \"-1\""},
  {BAD_LLM, "llm_tokens_text.csv", HLLM "2023-11-16 18:15:46,1,\n",
   "line 2: column GeneratedTokens: expected a non-negative integer, got \"\""},
  {BAD_LLM, "llm_order.csv",
   HLLM "2023-11-16 18:15:46.5,1,2\n2023-11-16 18:15:46.4999999,1,2\n",
   "line 3: rows must be sorted by TIMESTAMP: \"2023-11-16 18:15:46.4999999\" is earlier than "
   "2023-11-16 18:15:46.500000000 on line 2"},
  {BAD_MAF2019, "m19_no_owner.csv", "HashApp,HashFunction,Trigger,1\na,f,t,1\n",
   "line 1: header: missing column \"HashOwner\""},
  {BAD_MAF2019, "m19_no_app.csv", "HashOwner,HashFunction,Trigger,1\no,f,t,1\n",
   "line 1: header: missing column \"HashApp\""},
  {BAD_MAF2019, "m19_no_function.csv", "HashOwner,HashApp,Trigger,1\no,a,t,1\n",
   "line 1: header: missing column \"HashFunction\""},
  {BAD_MAF2019, "m19_five_digits.csv", H19 "01440\no,a,f,t,1\n",
   "line 1: header column 5: expected a minute number (1..1440), got \"01440\""},
  {BAD_MAF2019, "m19_minute_point.csv", H19 "7,8.0\no,a,f,t,1,2\n",
   "line 1: header column 6: expected a minute number (1..1440), got \"8.0\""},
  {BAD_MAF2019, "m19_minus.csv", H19 "7\no,a,f,t,-\n",
   "line 2: minute 7: expected a non-negative integer, got \"-\""},
  {BAD_MAF2019, "m19_first_past_day.csv", H19 "1441\no,a,f,t,1\n",
   "line 1: header column 5: minute 1441 is outside 1..1440"},
  {BAD_MAF2019, "m19_empty_minute.csv", H19 "7,\no,a,f,t,1,2\n",
   "line 1: header column 6: expected a minute number (1..1440), got \"\""},
  /* INT64_MAX = 9223372036854775807: one more overflows. */
  {BAD_MAF2019, "m19_count_overflow.csv", H19 "7\no,a,f,t,9223372036854775808\n",
   "line 2: minute 7: expected a non-negative integer, got \"9223372036854775808\""},
  {BAD_MAF2019, "m19_row_overflow.csv", H19 "7,8\no,a,f,t,9223372036854775807,1\n",
   "line 2: row total overflows a 64-bit count"},
  {BAD_MAF2019, "m19_minus_text.csv", H19 "7\no,a,f,t,-x\n",
   "line 2: minute 7: expected a non-negative integer, got \"-x\""},
  {BAD_MAF2019, "m19_long_value.csv", H19 "7\no,a,f,t,0123456789012345678901234567890123456789xyz\n",
   "line 2: minute 7: expected a non-negative integer, got "
   "\"0123456789012345678901234567890123456789...\""},
  {BAD_DURATIONS, "dur_empty.csv", "", "empty file: expected a header line"},
  {BAD_DURATIONS, "dur_columns.csv", "HashOwner,HashApp,HashFunction,Average\no,a,f,1,2\n",
   "line 2: expected 4 columns as in the header, got 5"},
  {BAD_DURATIONS, "dur_quote.csv", "HashOwner,HashApp,HashFunction,Average\no,\"a,f,1\n",
   "line 2: unterminated quoted field in column 2"},
  {BAD_DURATIONS, "dur_empty_value.csv", "HashOwner,HashApp,HashFunction,Average\no,a,f,\n",
   "line 2: column Average: expected a finite number, got \"\""},
  {BAD_DURATIONS, "dur_trailing.csv", "HashOwner,HashApp,HashFunction,Average\no,a,f,1.5ms\n",
   "line 2: column Average: expected a finite number, got \"1.5ms\""},
  {BAD_DURATIONS, "dur_inf.csv", "HashOwner,HashApp,HashFunction,Average\no,a,f,inf\n",
   "line 2: column Average: expected a finite number, got \"inf\""},
  {BAD_MEMORY, "mem_no_app.csv", "HashOwner,AverageAllocatedMb\no,100\n",
   "line 1: header: missing column \"HashApp\""},
  {BAD_MEMORY, "mem_no_value.csv", "HashOwner,HashApp,HashFunction\no,a,f\n",
   "line 1: header: missing column \"AverageAllocatedMb\""},
  {BAD_MAF2021, "m21_no_app.csv", "func,end_timestamp,duration\nf,1,0\n",
   "line 1: header: missing column \"app\""},
  {BAD_MAF2021, "m21_no_func.csv", "app,end_timestamp,duration\na,1,0\n",
   "line 1: header: missing column \"func\""},
  {BAD_MAF2021, "m21_no_end.csv", "app,func,duration\na,f,0\n",
   "line 1: header: missing column \"end_timestamp\""},
  {BAD_LLM, "llm_no_timestamp.csv", "ContextTokens,GeneratedTokens\n1,2\n",
   "line 1: header: missing column \"TIMESTAMP\""},
  {BAD_LLM, "llm_no_context.csv", "TIMESTAMP,GeneratedTokens\n2023-11-16 18:15:46,2\n",
   "line 1: header: missing column \"ContextTokens\""},
  {BAD_DETECT, "unknown.csv", "time,count\n1,2\n", "line 1: unrecognised header"},
  {BAD_DETECT, "memory_companion.csv", "HashFunction,HashOwner,HashApp,AverageAllocatedMb\n",
   "line 1: this is a MAF 2019 memory file"},
  {BAD_DETECT, "detect_empty.csv", "", "empty file"},
};

/* Reads a whole file with the reader of kind; returns the error (or NULL). */
static GError *read_bad(const Fixture *f, const BadFile *b, const char *path)
{
  GError *error = NULL;
  int rc = 1;
  switch (b->kind) {
  case BAD_MAF2019:
  case BAD_DURATIONS:
  case BAD_MEMORY: {
    char *inv = NULL;
    if (b->kind != BAD_MAF2019)
      inv = write_tmp(f, "good_invocations.csv", H19 "1\no,a,f,t,1\n");
    CsMaf2019Reader *r = cs_maf2019_reader_open(inv ? inv : path,
                                                b->kind == BAD_DURATIONS ? path : NULL,
                                                b->kind == BAD_MEMORY ? path : NULL, &error);
    CsMaf2019Record rec;
    while (r && (rc = cs_maf2019_reader_next(r, &rec, &error)) > 0) {
    }
    cs_maf2019_reader_close(r);
    g_free(inv);
    break;
  }
  case BAD_MAF2021: {
    CsMaf2021Reader *r = cs_maf2021_reader_open(path, CS_TRACE_FLAGS_NONE, &error);
    CsMaf2021Record rec;
    while (r && (rc = cs_maf2021_reader_next(r, &rec, &error)) > 0) {
    }
    cs_maf2021_reader_close(r);
    break;
  }
  case BAD_LLM: {
    CsAzureLlmReader *r = cs_azure_llm_reader_open(path, CS_TRACE_FLAGS_NONE, &error);
    CsAzureLlmRecord rec;
    while (r && (rc = cs_azure_llm_reader_next(r, &rec, &error)) > 0) {
    }
    cs_azure_llm_reader_close(r);
    break;
  }
  case BAD_DETECT:
    cs_trace_detect_format(path, &error);
    break;
  }
  (void)rc;
  return error;
}

static void test_bad_files(void **state)
{
  Fixture *f = *state;
  int failures = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(bad_files); i++) {
    const BadFile *b = &bad_files[i];
    char *path = write_tmp(f, b->name, b->content);
    GError *error = read_bad(f, b, path);
    char *want = g_strdup_printf("%s: %s", path, b->expected);
    if (!error) {
      print_error("%s: no error, expected \"%s\"\n", b->name, want);
      failures++;
    } else if (!g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID) ||
               !g_str_has_prefix(error->message, want)) {
      print_error("%s:\n  got      \"%s\" (code %d)\n  expected \"%s...\"\n", b->name,
                  error->message, error->code, want);
      failures++;
    }
    /* Also through inspect, which must report the same error. */
    if (error && b->kind != BAD_DURATIONS && b->kind != BAD_MEMORY) {
      static const CsTraceFormat fmt[] = {
        [BAD_MAF2019] = CS_TRACE_FORMAT_MAF2019, [BAD_MAF2021] = CS_TRACE_FORMAT_MAF2021,
        [BAD_LLM] = CS_TRACE_FORMAT_AZURE_LLM, [BAD_DETECT] = CS_TRACE_FORMAT_AUTO};
      CsTraceStats s;
      GError *again = NULL;
      if (cs_trace_inspect(path, fmt[b->kind], CS_TRACE_FLAGS_NONE, &s, &again) ||
          strcmp(again->message, error->message) != 0) {
        print_error("%s: inspect gave \"%s\"\n", b->name, again ? again->message : "success");
        failures++;
      }
      cs_trace_stats_clear(&s);
      g_clear_error(&again);
    }
    g_clear_error(&error);
    g_free(want);
    g_free(path);
  }
  assert_int_equal(failures, 0);
}

static void test_missing_file(void **state)
{
  Fixture *f = *state;
  char *path = g_build_filename(f->tmp, "absent.csv", NULL);
  GError *error = NULL;
  assert_null(cs_maf2021_reader_open(path, CS_TRACE_FLAGS_NONE, &error));
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  assert_true(g_str_has_prefix(error->message, path));
  g_clear_error(&error);
  char *inv = source_path(f, MAF2019_DIR "/invocations.csv");
  assert_null(cs_maf2019_reader_open(inv, path, NULL, &error));
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  g_clear_error(&error);
  g_free(inv);
  g_free(path);
}

/* A zone offset counts its minutes: 18:46:46+00:30 is 18:16:46 UTC, 60 s
 * after 18:15:46+00:00; 18:00:00-00:45 is 18:45:00 UTC. */
static void test_llm_zone_minutes(void **state)
{
  Fixture *f = *state;
  GError *error = NULL;
  char *path = write_tmp(f, "llm_zone_minutes.csv",
                         "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                         "2023-11-16 18:15:46+00:00,1,2\n"
                         "2023-11-16 18:46:46+00:30,3,4\n"
                         "2023-11-16 18:00:00-00:45,5,6\n");
  CsAzureLlmReader *r = cs_azure_llm_reader_open(path, CS_TRACE_FLAGS_NONE, &error);
  assert_non_null(r);
  static const int64_t want[] = { 0, INT64_C(60000000000), INT64_C(1754000000000) };
  CsAzureLlmRecord rec;
  for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
    assert_int_equal(cs_azure_llm_reader_next(r, &rec, &error), 1);
    assert_int_equal(rec.time_ns, want[i]);
  }
  cs_azure_llm_reader_close(r);
  g_free(path);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_maf2019_excerpt),
    cmocka_unit_test(test_maf2019_companions),
    cmocka_unit_test(test_maf2021_excerpt),
    cmocka_unit_test(test_llm_excerpt),
    cmocka_unit_test(test_checksums),
    cmocka_unit_test(test_inspect_maf2019),
    cmocka_unit_test(test_inspect_maf2021),
    cmocka_unit_test(test_inspect_llm),
    cmocka_unit_test(test_detect_and_names),
    cmocka_unit_test(test_csv_variants),
    cmocka_unit_test(test_llm_precision),
    cmocka_unit_test(test_llm_zone_minutes),
    cmocka_unit_test(test_unsorted_allowed),
    cmocka_unit_test(test_bad_files),
    cmocka_unit_test(test_missing_file),
    cmocka_unit_test(test_llm_timestamp_range),
    cmocka_unit_test(test_llm_bad_timestamps),
    cmocka_unit_test(test_maf2019_layouts),
    cmocka_unit_test(test_maf2021_single_and_bad_sorted),
    cmocka_unit_test(test_nul_byte),
    cmocka_unit_test(test_directory_as_trace),
    cmocka_unit_test(test_format_names_edge),
    cmocka_unit_test(test_inspect_small_llm),
    cmocka_unit_test(test_inspect_small_maf2021),
    cmocka_unit_test(test_inspect_limits),
    cmocka_unit_test(test_inspect_one_instant),
    cmocka_unit_test(test_inspect_zero_counts),
    cmocka_unit_test(test_vidur_trace),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
