/* Sweeps: runs on threads, the runs table, statistics over seeds.
 *
 * Expected values come from outside the code under test: the rows of a run
 * are compared with cs_run of the same scenario and seed, the statistics with
 * values worked out by hand and Student's t from printed tables (t(0.975, 1)
 * = 12.7062, t(0.975, 4) = 2.7764). */
#include <glib/gstdio.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "experiment/experiment.h"
#include "experiment/sweep.h"
#include "experiment/sweep_aggregate.h"
#include "test_util.h"

static char *dir;

static const char *const base_json =
  "{\"profiles\": [\"synthetic.json\"],"
  " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
  " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 20},"
  " \"placement\": {\"policy\": \"dedicated\"},"
  " \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 60, \"requests\": 150},"
  "              {\"model\": \"b\", \"rate\": 150, \"slo_ms\": 80, \"requests\": 150}]}";

/* Three variants, one of them invalid on one GPU only (its manual replica is
 * on GPU 1), two GPU counts, three seeds: 18 runs. */
static const char *const experiment_json =
  "{\"name\": \"t\", \"base\": \"base.json\","
  " \"variants\": [{\"name\": \"dedicated\"},"
  "  {\"name\": \"wait5\", \"set\": {\"dispatch.max_wait_ms\": 5}},"
  "  {\"name\": \"manual\", \"set\": {\"placement\": {\"policy\": \"manual\", \"replicas\": ["
  "     {\"model\": \"a\", \"gpu\": 0, \"batch\": 4}, {\"model\": \"b\", \"gpu\": 1, \"batch\": 4}]}}}],"
  " \"axes\": [{\"name\": \"gpus\", \"path\": \"cluster.gpus\", \"values\": [1, 2]}],"
  " \"seeds\": {\"first\": 1, \"count\": 3}}";

static CsExperiment *exp_;

static int setup(void **state)
{
  (void)state;
  dir = test_dir_with_profile(1.0, 4.0);
  char *p = g_build_filename(dir, "base.json", NULL);
  assert_true(g_file_set_contents(p, base_json, -1, NULL));
  g_free(p);
  p = g_build_filename(dir, "exp.json", NULL);
  assert_true(g_file_set_contents(p, experiment_json, -1, NULL));
  GError *err = NULL;
  exp_ = cs_experiment_load(p, &err);
  if (!exp_)
    fail_msg("%s", err->message);
  g_free(p);
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  cs_experiment_free(exp_);
  test_dir_remove(dir);
  return 0;
}

static char *sweep_csv(int threads, int shard_index, int shard_count)
{
  CsSweepOptions opt = { .threads = threads, .shard_index = shard_index,
                         .shard_count = shard_count };
  CsRunsTable *t = cs_sweep_run(exp_, &opt, NULL);
  char *csv = cs_runs_table_to_csv(t);
  cs_runs_table_free(t);
  return csv;
}

/* The same bytes with one thread and with three. */
static void test_threads_do_not_change_the_table(void **state)
{
  (void)state;
  char *one = sweep_csv(1, 0, 1), *three = sweep_csv(3, 0, 1);
  assert_string_equal(one, three);
  g_free(one);
  g_free(three);
}

/* Equal, or both NaN (the latency of a model with no result). */
static gboolean same(const char *cell, double v)
{
  double x = cs_runs_cell_value(cell);
  return (isnan(x) && isnan(v)) || x == v;
}

static int col(const CsRunsTable *t, const char *name)
{
  for (guint c = 0; c < t->columns->len; c++)
    if (strcmp(g_ptr_array_index(t->columns, c), name) == 0)
      return (int)c;
  fail_msg("no column %s", name);
  return -1;
}

/* Every row equals cs_run of the run's scenario and seed; the manual variant
 * on one GPU is one "invalid" row with cs_run's message, and the others ran. */
static void test_rows_equal_single_runs(void **state)
{
  (void)state;
  CsSweepOptions opt = { .threads = 2, .shard_count = 1 };
  CsRunsTable *t = cs_sweep_run(exp_, &opt, NULL);
  /* 15 runs with 2 models + total, 3 invalid runs with one row. */
  assert_int_equal(t->rows->len, 15 * 3 + 3);
  assert_int_equal(cs_sweep_n_invalid(t), 3);
  guint r = 0;
  for (int run = 0; run < cs_experiment_n_runs(exp_); run++) {
    GError *err = NULL;
    CsScenario *sc = cs_experiment_run_scenario(exp_, run, &err);
    assert_non_null(sc);
    CsRunOptions ro;
    cs_run_options_init(&ro);
    ro.seed_override = cs_experiment_run_seed(exp_, run);
    CsResults *res = cs_run(sc, &ro, &err);
    char **row = g_ptr_array_index(t->rows, r);
    assert_int_equal(cs_runs_row_run_id(row), run);
    assert_string_equal(row[col(t, "variant")], cs_experiment_run_variant(exp_, run));
    assert_string_equal(row[col(t, "gpus")], cs_experiment_run_label(exp_, run, 0));
    char *seed = g_strdup_printf("%d", (int)cs_experiment_run_seed(exp_, run));
    assert_string_equal(row[col(t, "seed")], seed);
    g_free(seed);
    if (!res) {
      assert_string_equal(cs_experiment_run_variant(exp_, run), "manual");
      assert_string_equal(row[col(t, "status")], "invalid");
      assert_string_equal(row[col(t, "error")], err->message);
      assert_string_equal(row[col(t, "goodput_rps")], "");
      g_clear_error(&err);
      r++;
    } else {
      for (int m = 0; m <= cs_results_n_models(res); m++, r++) {
        const CsModelResult *mr =
          m < cs_results_n_models(res) ? cs_results_model(res, m) : cs_results_total(res);
        row = g_ptr_array_index(t->rows, r);
        assert_string_equal(row[col(t, "model")], mr->model);
        assert_string_equal(row[col(t, "status")], "ok");
        assert_true(same(row[col(t, "goodput_rps")], mr->goodput_rps));
        assert_true(same(row[col(t, "latency_p99_ms")], mr->latency.p99));
        assert_true(same(row[col(t, "mean_batch")], mr->mean_batch));
        assert_int_equal((int64_t)cs_runs_cell_value(row[col(t, "good")]), mr->good);
        assert_int_equal((int64_t)cs_runs_cell_value(row[col(t, "unserved")]), mr->unserved);
      }
    }
    cs_results_free(res);
    cs_scenario_free(sc);
  }
  assert_int_equal(r, t->rows->len);
  /* dedicated on 1 GPU leaves b unserved: the code is on b's row and the total. */
  char **b_row = g_ptr_array_index(t->rows, 1);
  assert_string_equal(b_row[col(t, "model")], "b");
  assert_string_equal(b_row[col(t, "warnings")], "model_unserved");
  assert_string_equal(((char **)g_ptr_array_index(t->rows, 0))[col(t, "warnings")], "");
  assert_string_equal(((char **)g_ptr_array_index(t->rows, 2))[col(t, "warnings")],
                      "model_unserved");
  cs_runs_table_free(t);
}

/* Shards partition the runs by run number mod N, and their rows are the
 * unsharded rows of those runs. */
static void test_shards_partition_the_runs(void **state)
{
  (void)state;
  CsSweepOptions opt = { .threads = 1, .shard_index = 1, .shard_count = 4 };
  GArray *ids = NULL;
  CsRunsTable *t = cs_sweep_run(exp_, &opt, &ids);
  static const int expect[] = { 1, 5, 9, 13, 17 };
  assert_int_equal(ids->len, G_N_ELEMENTS(expect));
  for (guint i = 0; i < ids->len; i++)
    assert_int_equal(g_array_index(ids, int, i), expect[i]);
  for (guint r = 0; r < t->rows->len; r++)
    assert_int_equal(cs_runs_row_run_id(g_ptr_array_index(t->rows, r)) % 4, 1);
  g_array_unref(ids);
  cs_runs_table_free(t);
}

/* A table written and read back is the same table. */
static void test_csv_round_trip(void **state)
{
  (void)state;
  const char *axes[] = { "load, \"quoted\"" };
  CsRunsTable *t = cs_runs_table_new(axes, 1, FALSE);
  GPtrArray *rows = cs_runs_rows(t, 0, "v,1", axes, 4, NULL, NULL, "line one\nline \"two\"");
  cs_runs_table_take(t, rows);
  char *csv = cs_runs_table_to_csv(t);
  GError *err = NULL;
  CsRunsTable *back = cs_runs_table_parse(csv, "runs.csv", &err);
  assert_non_null(back);
  char *again = cs_runs_table_to_csv(back);
  assert_string_equal(csv, again);
  char **row = g_ptr_array_index(back->rows, 0);
  assert_string_equal(row[CS_RUNS_COL_VARIANT], "v,1");
  assert_string_equal(row[cs_runs_col_error(back)], "line one\nline \"two\"");
  assert_null(cs_runs_table_parse("run_id,variant\n", "x.csv", &err));
  assert_non_null(strstr(err->message, "x.csv: line 1: not the header of a runs.csv"));
  g_clear_error(&err);
  g_free(csv);
  g_free(again);
  cs_runs_table_free(t);
  cs_runs_table_free(back);
}

/* A runs table with chosen goodputs: the statistics must be the hand-worked
 * ones. */
static CsRunsTable *table_of_goodputs(const double *values, int n)
{
  CsRunsTable *t = cs_runs_table_new(NULL, 0, FALSE);
  int c = cs_runs_col_metric(t, cs_runs_metric_index(t, "goodput_rps"));
  for (int i = 0; i < n; i++) {
    GPtrArray *rows = cs_runs_rows(t, i, "v", NULL, i + 1, NULL, NULL, "x");
    char **row = g_ptr_array_index(rows, 0);
    g_free(row[cs_runs_col_status(t)]);
    row[cs_runs_col_status(t)] = g_strdup("ok");
    g_free(row[cs_runs_col_model(t)]);
    row[cs_runs_col_model(t)] = g_strdup("total");
    g_free(row[c]);
    row[c] = cs_runs_format_double(values[i]);
    cs_runs_table_take(t, rows);
  }
  return t;
}

/* The goodput line of aggregate.csv: "v,total,goodput_rps,n,n_nan,mean,sd,ci95". */
static char **goodput_line(const CsRunsTable *t)
{
  CsAggregate *a = cs_aggregate_new(t);
  char *csv = cs_aggregate_to_csv(a);
  cs_aggregate_free(a);
  char **lines = g_strsplit(csv, "\n", -1);
  g_free(csv);
  char **fields = NULL;
  for (int i = 0; lines[i] && !fields; i++)
    if (strstr(lines[i], ",goodput_rps,"))
      fields = g_strsplit(lines[i], ",", -1);
  g_strfreev(lines);
  assert_non_null(fields);
  return fields;
}

static void assert_close(const char *text, double expect)
{
  double got = g_ascii_strtod(text, NULL);
  if (fabs(got - expect) > 1e-4 * fabs(expect))
    fail_msg("%s is not %.6f", text, expect);
}

static void test_statistics(void **state)
{
  (void)state;
  /* 5 seeds: mean 3, sd sqrt(2.5) = 1.5811388, CI 2.7764 * 1.5811388 / sqrt(5). */
  const double five[] = { 1, 2, 3, 4, 5 };
  CsRunsTable *t = table_of_goodputs(five, 5);
  char **f = goodput_line(t);
  assert_string_equal(f[0], "v");
  assert_string_equal(f[1], "total");
  assert_string_equal(f[3], "5");
  assert_string_equal(f[4], "0");
  assert_close(f[5], 3.0);
  assert_close(f[6], 1.5811388);
  assert_close(f[7], 2.7764 * 1.5811388 / sqrt(5.0));
  g_strfreev(f);
  cs_runs_table_free(t);
  /* 2 values and a NaN: the NaN is left out and counted; df 1. */
  const double two[] = { 10, NAN, 14 };
  t = table_of_goodputs(two, 3);
  f = goodput_line(t);
  assert_string_equal(f[3], "2");
  assert_string_equal(f[4], "1");
  assert_close(f[5], 12.0);
  assert_close(f[6], sqrt(8.0));
  assert_close(f[7], 12.7062 * sqrt(8.0) / sqrt(2.0));
  g_strfreev(f);
  cs_runs_table_free(t);
  /* One value: no spread, no interval. */
  const double one[] = { 7 };
  t = table_of_goodputs(one, 1);
  f = goodput_line(t);
  assert_string_equal(f[3], "1");
  assert_close(f[5], 7.0);
  assert_string_equal(f[6], "");
  assert_string_equal(f[7], "");
  g_strfreev(f);
  cs_runs_table_free(t);
}


/* A goodput-search sweep. The "capacity" variant is the closed form of
 * test_metrics.c: one replica runs every request alone for 10 ms (capacity
 * 100 req/s), constant arrivals at 50 m req/s for 10 s and SLO 50 ms, so p99
 * holds while m <= 2.00808 and the search must end between 2 (within its
 * tolerance) and that. "hopeless" has an SLO of 5 ms below the 10 ms of every
 * batch: no load passes. Each passing row must be cs_run at the load found. */
static void test_search_sweep(void **state)
{
  (void)state;
  char *sdir = test_dir_with_profile(0.0, 10.0);
  char *p = g_build_filename(sdir, "base.json", NULL);
  assert_true(g_file_set_contents(p,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 50, \"slo_ms\": 50, \"arrival\": \"constant\","
    "   \"duration_s\": 10}]}", -1, NULL));
  g_free(p);
  p = g_build_filename(sdir, "exp.json", NULL);
  assert_true(g_file_set_contents(p,
    "{\"base\": \"base.json\", \"variants\": [{\"name\": \"capacity\"},"
    "  {\"name\": \"hopeless\", \"set\": {\"clients[0].slo_ms\": 5}}],"
    " \"seeds\": {\"first\": 1, \"count\": 2},"
    " \"search\": {\"max_multiplier\": 4, \"tolerance\": 0.0005}}", -1, NULL));
  GError *err = NULL;
  CsExperiment *e = cs_experiment_load(p, &err);
  if (!e)
    fail_msg("%s", err->message);
  g_free(p);
  assert_non_null(cs_experiment_search(e));
  CsSweepOptions opt = { .threads = 2, .shard_count = 1 };
  CsRunsTable *t = cs_sweep_run(e, &opt, NULL);
  assert_true(t->search);
  assert_int_equal(t->rows->len, 4 * 2); /* 4 runs: model a and total */
  assert_int_equal(cs_sweep_n_invalid(t), 0);
  for (guint r = 0; r < t->rows->len; r++) {
    char **row = g_ptr_array_index(t->rows, r);
    int run = cs_runs_row_run_id(row);
    assert_string_equal(row[col(t, "status")], "ok");
    assert_true(cs_runs_cell_value(row[col(t, "search_probes")]) >= 1);
    double max_load = cs_runs_cell_value(row[col(t, "max_load_rps")]);
    double m = cs_runs_cell_value(row[col(t, "search_multiplier")]);
    if (run >= 2) { /* hopeless */
      assert_float_equal(max_load, 0.0, 0.0);
      assert_float_equal(m, 0.0, 0.0);
      assert_string_equal(row[col(t, "goodput_rps")], "");
      assert_string_equal(row[col(t, "warnings")], "no_goodput");
      continue;
    }
    assert_true(m >= 2.0 * (1 - 0.0005) && m <= 2.00808);
    assert_float_equal(max_load, 50 * m, 1e-9);
    assert_true(same(row[col(t, "offered_rps")], max_load));
    /* The row is the simulation at that load. */
    CsScenario *sc = cs_experiment_run_scenario(e, run, &err);
    char *rate = cs_runs_format_double(50 * m);
    assert_true(cs_scenario_set(sc, "clients[0].rate", rate, NULL));
    g_free(rate);
    CsRunOptions ro;
    cs_run_options_init(&ro);
    ro.seed_override = cs_experiment_run_seed(e, run);
    CsResults *res = cs_run(sc, &ro, &err);
    assert_non_null(res);
    const CsModelResult *mr = cs_results_model(res, 0);
    assert_true(same(row[col(t, "goodput_rps")], mr->goodput_rps));
    assert_true(same(row[col(t, "latency_p99_ms")], mr->latency.p99));
    assert_int_equal((int64_t)cs_runs_cell_value(row[col(t, "good")]), mr->good);
    assert_true(mr->latency.p99 <= 50.0);
    cs_results_free(res);
    cs_scenario_free(sc);
  }
  /* Written and read back: the same search table. */
  char *csv = cs_runs_table_to_csv(t);
  CsRunsTable *back = cs_runs_table_parse(csv, "runs.csv", &err);
  assert_non_null(back);
  assert_true(back->search);
  char *again = cs_runs_table_to_csv(back);
  assert_string_equal(csv, again);
  /* The statistics: the hopeless variant's goodput is 0 over both seeds, its
   * run metrics are absent. */
  CsAggregate *a = cs_aggregate_new(t);
  char *agg = cs_aggregate_to_csv(a);
  assert_non_null(strstr(agg, "\nhopeless,total,max_load_rps,2,0,0,0,0\n"));
  assert_non_null(strstr(agg, "\nhopeless,total,goodput_rps,0,2,,,\n"));
  g_free(agg);
  cs_aggregate_free(a);
  g_free(csv);
  g_free(again);
  cs_runs_table_free(back);
  cs_runs_table_free(t);
  cs_experiment_free(e);
  test_dir_remove(sdir);
}

/* A bad "search" block is refused with its JSON path. */
static void test_search_block_errors(void **state)
{
  (void)state;
  static const struct {
    const char *block, *message;
  } cases[] = {
    { "[]", "exp.json: search: expected an object" },
    { "{\"criterion\": \"p95\"}", "exp.json: search.criterion: expected \"p99\" or \"bad_rate\", got \"p95\"" },
    { "{\"tolerance\": 0}", "exp.json: search.tolerance: expected a number between 0 and 1" },
    { "{\"max_multiplier\": 0}", "exp.json: search.max_multiplier: expected a number above 0" },
    { "{\"max_probes\": 1}", "exp.json: search.max_probes" },
    { "{\"bad_rate_bound\": 0.05}", "exp.json: search.bad_rate_bound: applies to the \"bad_rate\" criterion only" },
    { "{\"bad_rate_bound\": 1, \"criterion\": \"bad_rate\"}", "exp.json: search.bad_rate_bound: expected a number below 1" },
    { "{\"tolerence\": 0.1}", "exp.json: search: unknown field \"tolerence\" (did you mean \"tolerance\"?)" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *text = g_strdup_printf("{\"base\": \"base.json\", \"seeds\": [1], \"search\": %s}",
                                 cases[i].block);
    char *p = g_build_filename(dir, "exp.json", NULL);
    assert_true(g_file_set_contents(p, text, -1, NULL));
    GError *err = NULL;
    CsExperiment *e = cs_experiment_load(p, &err);
    assert_null(e);
    char *want = g_build_filename(dir, cases[i].message, NULL);
    if (!g_str_has_prefix(err->message, want))
      fail_msg("case %zu: got \"%s\", expected it to start with \"%s\"", i, err->message, want);
    g_free(want);
    g_clear_error(&err);
    g_free(p);
    g_free(text);
  }
}

/* The progress line at given times (no clock read): the time left is the
 * runs left at the mean pace so far, worked by hand. */
static void test_progress_text(void **state)
{
  (void)state;
  static const struct {
    int done, total;
    double elapsed;
    const char *want;
  } cases[] = {
    { 0, 270, 0.4, "sweep: 0 of 270 runs (0 %), 0:00 elapsed, time left unknown" },
    /* 27 runs in 5 s: 243 left take 45 s. */
    { 27, 270, 5.0, "sweep: 27 of 270 runs (10 %), 0:05 elapsed, about 0:45 left" },
    /* 1 run in 61.5 s, 99 left: 6088.5 s = 1:41:28. */
    { 1, 100, 61.5, "sweep: 1 of 100 runs (1 %), 1:01 elapsed, about 1:41:28 left" },
    /* 2 of 3 in 3725 s (1:02:05): 1862.5 s left = 31:02. */
    { 2, 3, 3725.0, "sweep: 2 of 3 runs (66 %), 1:02:05 elapsed, about 31:02 left" },
    { 270, 270, 7.9, "sweep: 270 of 270 runs (100 %), 0:07 elapsed" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *got = cs_sweep_progress_text(cases[i].done, cases[i].total, cases[i].elapsed);
    assert_string_equal(got, cases[i].want);
    g_free(got);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_threads_do_not_change_the_table),
    cmocka_unit_test(test_rows_equal_single_runs),
    cmocka_unit_test(test_shards_partition_the_runs),
    cmocka_unit_test(test_csv_round_trip),
    cmocka_unit_test(test_statistics),
    cmocka_unit_test(test_search_sweep),
    cmocka_unit_test(test_search_block_errors),
    cmocka_unit_test(test_progress_text),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
