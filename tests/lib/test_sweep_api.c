/* Sweeps from the library (clustersim/sweep.h, issue 35 part 2), through the
 * public header and the shared library only:
 * - a program's sweep writes the same bytes as `clustersim sweep` on the
 *   same experiment (runs.csv, aggregate.csv, aggregate.json, sweep.json),
 *   whatever the threads;
 * - a policy registered in code reaches every run through
 *   cs_experiment_use_registry (without it, its runs are "invalid" rows);
 * - a shard holds its runs and its shard.json; the output directory is
 *   refused when it holds a sweep already, unless forced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <glib/gstdio.h>

#include <clustersim/clustersim.h>

#include "test_util.h"

static const char *clustersim_exe;
static char *dir;

static const char *const set_files[] = { "runs.csv", "aggregate.csv", "aggregate.json",
                                         "sweep.json" };

static char *path_in(const char *sub, const char *name)
{
  return g_build_filename(dir, sub, name, NULL);
}

static char *read_text(const char *path)
{
  char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    fail_msg("cannot read %s", path);
  return text;
}

/* A dispatch policy of the test's own: each request alone to GPU 0. */
static void *mine_create(CsEngine *e, const void *params, void *user_data)
{
  (void)params, (void)user_data;
  return e;
}

static void mine_on_request(void *state, int model, const CsRequest *r)
{
  CsEngine *e = state;
  CsBatch *b = cs_engine_batch_new(e, model, 1);
  cs_batch_add(e, b, r);
  cs_engine_send_gpu(e, b, 0);
}

static void mine_destroy(void *state)
{
  (void)state; /* the engine, not ours */
}

static const CsDispatchPolicy mine = {
  .name = "mine", .uses_placement = FALSE, .create = mine_create, .destroy = mine_destroy,
  .on_request = mine_on_request,
};

static void write_experiment(void)
{
  char *base = g_build_filename(dir, "base.json", NULL);
  assert_true(g_file_set_contents(base,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 5},"
    " \"placement\": {\"policy\": \"dedicated\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 200, \"slo_ms\": 50, \"duration_s\": 2}]}",
    -1, NULL));
  char *exp = g_build_filename(dir, "exp.json", NULL);
  assert_true(g_file_set_contents(exp,
    "{\"name\": \"api\", \"base\": \"base.json\", \"seeds\": [1, 2, 3],"
    " \"variants\": [{\"name\": \"router\"},"
    "  {\"name\": \"mine\", \"set\": {\"dispatch\": {\"policy\": \"mine\"}}, \"unset\": [\"placement\"]}],"
    " \"axes\": [{\"name\": \"rate\", \"path\": \"clients[*].rate\", \"values\": [100, 300]}]}",
    -1, NULL));
  g_free(base);
  g_free(exp);
}

static CsExperiment *load(CsRegistry *reg)
{
  char *exp = g_build_filename(dir, "exp.json", NULL);
  GError *err = NULL;
  CsExperiment *e = cs_experiment_load(exp, &err);
  if (!e)
    fail_msg("%s", err->message);
  g_free(exp);
  if (reg && !cs_experiment_use_registry(e, reg, &err))
    fail_msg("%s", err->message);
  return e;
}

static void test_grid_and_registry(void **state)
{
  (void)state;
  CsExperiment *e = load(NULL);
  assert_string_equal(cs_experiment_name(e), "api");
  assert_int_equal(cs_experiment_n_runs(e), 12); /* 2 variants x 2 rates x 3 seeds */
  assert_int_equal(cs_experiment_n_variants(e), 2);
  assert_string_equal(cs_experiment_variant_name(e, 1), "mine");
  assert_null(cs_experiment_variant_name(e, 2));
  assert_int_equal(cs_experiment_axis_n_levels(e, 0), 2);
  assert_string_equal(cs_experiment_axis_label(e, 0, 1), "300");
  assert_string_equal(cs_experiment_run_variant(e, 7), "mine");
  assert_string_equal(cs_experiment_run_label(e, 7, 0), "100");
  assert_int_equal(cs_experiment_run_seed(e, 7), 2);
  assert_null(cs_experiment_run_variant(e, 12));
  /* Without the registry the policy is unknown: those six runs are invalid rows. */
  CsSweepOptions opt;
  cs_sweep_options_init(&opt);
  opt.threads = 2;
  CsSweepResults *r = cs_experiment_sweep(e, &opt);
  assert_int_equal(cs_sweep_results_n_runs(r), 12);
  assert_int_equal(cs_sweep_results_n_invalid(r), 6);
  cs_sweep_results_free(r);
  cs_experiment_free(e);

  CsRegistry *reg = cs_registry_new();
  GError *rerr = NULL;
  if (!cs_registry_add_dispatch(reg, &mine, NULL, &rerr))
    fail_msg("%s", rerr->message);
  e = load(reg);
  cs_registry_unref(reg);
  r = cs_experiment_sweep(e, &opt);
  assert_int_equal(cs_sweep_results_n_invalid(r), 0);
  char *csv = cs_sweep_results_text(r, "runs.csv");
  assert_non_null(strstr(csv, "mine"));
  g_free(csv);
  assert_null(cs_sweep_results_text(r, "shard.json"));
  cs_sweep_results_free(r);
  cs_experiment_free(e);
}

/* The library's output set is the command's, byte for byte (the policy of
 * the test's own is left out: the command does not have it). */
static void test_same_bytes_as_the_command(void **state)
{
  (void)state;
  char *exp = g_build_filename(dir, "exp.json", NULL);
  char *cli_out = g_build_filename(dir, "cli", NULL);
  /* The same grid without the "mine" variant. */
  char *only = g_build_filename(dir, "router.json", NULL);
  assert_true(g_file_set_contents(only,
    "{\"name\": \"api\", \"base\": \"base.json\", \"seeds\": [1, 2, 3],"
    " \"axes\": [{\"name\": \"rate\", \"path\": \"clients[*].rate\", \"values\": [100, 300]}]}",
    -1, NULL));
  const char *argv[] = { clustersim_exe, "sweep", only, "-o", cli_out, "-j", "1", "--no-render",
                         NULL };
  int status = 0;
  char *out = NULL, *errs = NULL;
  GError *err = NULL;
  if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &errs, &status,
                    &err))
    fail_msg("%s", err->message);
  if (!g_spawn_check_wait_status(status, NULL))
    fail_msg("clustersim sweep failed: %s", errs);
  GError *lerr = NULL;
  CsExperiment *e = cs_experiment_load(only, &lerr);
  if (!e)
    fail_msg("%s", lerr->message);
  CsSweepOptions opt;
  cs_sweep_options_init(&opt);
  opt.threads = 3;
  CsSweepResults *r = cs_experiment_sweep(e, &opt);
  char *lib_out = g_build_filename(dir, "lib", NULL);
  if (!cs_sweep_results_write(r, lib_out, FALSE, &lerr))
    fail_msg("%s", lerr->message);
  for (size_t i = 0; i < G_N_ELEMENTS(set_files); i++) {
    char *a = path_in("cli", set_files[i]), *b = path_in("lib", set_files[i]);
    char *ta = read_text(a), *tb = read_text(b);
    if (strcmp(ta, tb) != 0)
      fail_msg("%s differs between clustersim sweep and the library", set_files[i]);
    char *tc = cs_sweep_results_text(r, set_files[i]);
    assert_string_equal(tc, tb);
    g_free(tc);
    g_free(ta);
    g_free(tb);
    g_free(a);
    g_free(b);
  }
  /* The directory holds a sweep now: refused unless forced. */
  assert_false(cs_sweep_results_write(r, lib_out, FALSE, &lerr));
  assert_non_null(lerr);
  g_clear_error(&lerr);
  assert_true(cs_sweep_results_write(r, lib_out, TRUE, &lerr));
  cs_sweep_results_free(r);
  /* A shard: its runs (every second one) and its shard.json. */
  opt.shard_count = 2;
  opt.shard_index = 1;
  r = cs_experiment_sweep(e, &opt);
  assert_int_equal(cs_sweep_results_n_runs(r), cs_experiment_n_runs(e) / 2);
  char *shard = cs_sweep_results_text(r, "shard.json");
  assert_non_null(strstr(shard, "\"index\""));
  assert_null(cs_sweep_results_text(r, "aggregate.csv"));
  g_free(shard);
  cs_sweep_results_free(r);
  cs_experiment_free(e);
  g_free(only);
  g_free(out);
  g_free(errs);
  g_free(exp);
  g_free(cli_out);
  g_free(lib_out);
}

static int setup(void **state)
{
  (void)state;
  dir = test_dir_with_profile(1.0, 4.0);
  write_experiment();
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  char *argv[] = { "rm", "-rf", dir, NULL };
  g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
  g_free(dir);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: %s CLUSTERSIM\n", argv[0]);
    return 2;
  }
  clustersim_exe = argv[1];
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_grid_and_registry),
    cmocka_unit_test(test_same_bytes_as_the_command),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
