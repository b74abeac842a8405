/* Tests of measured MIG tables and the MIG rule (src/profiles/mig_table.c):
 * every way a table can be wrong, refused with the file, the JSON path and
 * what was expected; the queries on a small table worked by hand; the rule
 * and its processes on a hand-computed curve; the shipped ParvaGPU file against cells of its
 * source CSV. (The engine's use of them: tests/sim/test_colocation.c.) */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "profiles/interference.h"
#include "profiles/mig_table.h"

#define assert_close(a, b, eps) assert_close_impl((a), (b), (eps), #a, __FILE__, __LINE__)
static void assert_close_impl(double a, double b, double eps, const char *what, const char *file,
                              int line)
{
  if (!(fabs(a - b) <= eps)) {
    print_error("%s = %.17g, expected %.17g (eps %g)\n", what, a, b, eps);
    _fail(file, line);
  }
}

#define HEAD "{\"format\": \"clustersim-interference\", \"version\": 1, \"source\": \"s\", " \
             "\"models\": [{\"model\": \"m\", \"mig\": "
#define TAIL "}]}"
#define CELL(g, b, p, l) "{\"gpcs\": " #g ", \"batch\": " #b ", \"processes\": " #p \
                         ", \"latency_ms\": " #l ", \"source\": \"x\"}"

typedef struct {
  const char *json;
  const char *message; /* after "bad.json: " */
} BadFile;

static const BadFile bad_files[] = {
  { HEAD "3" TAIL, "models[0].mig: expected an object, got a number" },
  { HEAD "{\"cells\": [" CELL(1, 1, 1, 1) "]}" TAIL,
    "models[0].mig.gpu_gpcs: required field is missing" },
  { HEAD "{\"gpu_gpcs\": 2}" TAIL, "models[0].mig.cells: required field is missing" },
  { HEAD "{\"gpu_gpcs\": 2, \"cells\": []}" TAIL,
    "models[0].mig.cells: expected a non-empty array of cells, got an empty one" },
  { HEAD "{\"gpu_gpcs\": 2, \"cell\": []}" TAIL,
    "models[0].mig: unknown field \"cell\" (did you mean \"cells\"?)" },
  { HEAD "{\"gpu_gpcs\": 2, \"cells\": [" CELL(3, 1, 1, 1) "]}" TAIL,
    "models[0].mig.cells[0].gpcs: expected an integer in [1, 2], got 3" },
  { HEAD "{\"gpu_gpcs\": 2, \"cells\": [{\"gpcs\": 2, \"batch\": 1, \"proceses\": 1}]}" TAIL,
    "models[0].mig.cells[0]: unknown field \"proceses\" (did you mean \"processes\"?)" },
  { HEAD "{\"gpu_gpcs\": 2, \"cells\": [" CELL(2, 1, 1, 0) "]}" TAIL,
    "models[0].mig.cells[0].latency_ms: expected a number > 0, got 0" },
  { HEAD "{\"gpu_gpcs\": 2, \"cells\": [{\"gpcs\": 2, \"batch\": 2, \"processes\": 1, "
    "\"latency_ms\": 13, \"throughput_per_process\": 100, \"source\": \"x\"}]}" TAIL,
    "models[0].mig.cells[0].throughput_per_process: batch x 1000 / throughput = 20 ms "
    "disagrees with latency_ms 13 by more than its rounding (0.5 ms)" },
  { HEAD "{\"gpu_gpcs\": 2, \"cells\": [" CELL(2, 1, 1, 1) ", " CELL(2, 1, 1, 2) "]}" TAIL,
    "models[0].mig.cells: the cell (2 GPCs, batch 1, 1 processes) is given twice" },
  { HEAD "{\"gpu_gpcs\": 2, \"cells\": [" CELL(2, 1, 1, 1) ", " CELL(2, 2, 3, 2) "]}" TAIL,
    "models[0].mig.cells: the cell (2 GPCs, batch 2, 3 processes) has no single-process cell "
    "at the same size and batch to compare with" },
  { HEAD "{\"gpu_gpcs\": 2, \"cells\": [" CELL(2, 1, 1, 1) ", " CELL(1, 2, 1, 2) "]}" TAIL,
    "models[0].mig.cells: no batch of the 1-GPC instance alone is measured on the whole GPU "
    "(2 GPCs) alone, so it cannot be related to it" },
  { HEAD "{\"gpu_gpcs\": 2, \"cells\": [" CELL(2, 1, 1, 1) "], \"source\": \"x\"}" TAIL,
    "models[0].mig: unknown field \"source\" (known fields: gpu_gpcs, cells)" },
};

static void test_bad_files(void **state)
{
  (void)state;
  int failures = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(bad_files); i++) {
    GError *error = NULL;
    CsInterferenceSet *set = cs_interference_set_load_data(bad_files[i].json, "bad.json", &error);
    char *want = g_strdup_printf("bad.json: %s", bad_files[i].message);
    if (set || !error || strcmp(error->message, want) != 0) {
      print_error("case %zu: %s\n  got      \"%s\"\n  expected \"%s\"\n", i, bad_files[i].json,
                  error ? error->message : "success", want);
      failures++;
    }
    cs_interference_set_free(set);
    g_clear_error(&error);
    g_free(want);
  }
  assert_int_equal(failures, 0);
}

/* A table on a GPU of 4 GPCs (cells in ms):
 *   4 GPCs alone: batch 1 10, batch 4 20, batch 8 40
 *   2 GPCs alone: batch 1 11, batch 4 30; 2 processes 16.5, 45 (x1.5);
 *                 4 processes at batch 1 33 (x3)
 *   1 GPC alone:  batch 8 100 (the throughput 80 req/s: 8 x 1000 / 80)
 * iso ratios: 2 GPCs batch 1 1.1, batch 4 1.5, batch 2 1.1 + 0.4 / 3 (linear
 * in batch), batch 8 1.5 (the nearest measured); 1 GPC 100 / 40 = 2.5 at
 * every batch. Processes at 2 GPCs: 2 -> 1.5; 3 -> 2.25 (between 2 and 4);
 * 6 -> 3 + (3 - 1.5) x 2 / 2 = 4.5 (beyond the largest, from the last two);
 * 4 at batch 4 -> 3 (batch 1's, the only one measured). */
static void test_queries(void **state)
{
  (void)state;
  const char *json =
    HEAD "{\"gpu_gpcs\": 4, \"cells\": ["
    CELL(4, 1, 1, 10) ", " CELL(4, 4, 1, 20) ", " CELL(4, 8, 1, 40) ", "
    CELL(2, 4, 2, 45) ", " CELL(2, 1, 1, 11) ", " CELL(2, 4, 1, 30) ", " CELL(2, 1, 2, 16.5) ", "
    CELL(2, 1, 4, 33) ", "
    "{\"gpcs\": 1, \"batch\": 8, \"processes\": 1, \"latency_ms\": 100.4, "
    "\"throughput_per_process\": 80, \"source\": \"row 9\"}]}" TAIL;
  GError *error = NULL;
  CsInterferenceSet *set = cs_interference_set_load_data(json, "t.json", &error);
  assert_non_null(set);
  const CsMigTable *t = cs_interference_mig(set, cs_interference_set_find(set, "m"));
  assert_non_null(t);
  assert_int_equal(cs_mig_table_gpu_gpcs(t), 4);
  assert_int_equal(cs_mig_table_n_cells(t), 9);
  const CsMigCell *c = cs_mig_table_cell(t, 0); /* sorted: 1 GPC first */
  assert_int_equal(c->gpcs, 1);
  assert_close(c->latency_ms, 100.0, 1e-12);
  assert_close(c->stored_ms, 100.4, 1e-12);
  assert_string_equal(c->source, "row 9");
  assert_int_equal(cs_mig_table_size(t, 0.5), 2);
  assert_int_equal(cs_mig_table_size(t, 0.26), 1);   /* 1.04 GPCs */
  assert_int_equal(cs_mig_table_size(t, 0.52), 0);   /* 2.08: not a whole GPC */
  assert_int_equal(cs_mig_table_size(t, 0.75), 0);   /* 3: not measured */
  assert_int_equal(cs_mig_table_size(t, 1.0), 4);
  assert_close(cs_mig_table_iso_ratio(t, 2, 1), 1.1, 1e-12);
  assert_close(cs_mig_table_iso_ratio(t, 2, 4), 1.5, 1e-12);
  assert_close(cs_mig_table_iso_ratio(t, 2, 2), 1.1 + 0.4 / 3, 1e-12);
  assert_close(cs_mig_table_iso_ratio(t, 2, 8), 1.5, 1e-12);
  assert_close(cs_mig_table_iso_ratio(t, 1, 1), 2.5, 1e-12);
  assert_close(cs_mig_table_iso_ratio(t, 4, 3), 1.0, 0);
  assert_true(isnan(cs_mig_table_iso_ratio(t, 3, 1)));
  assert_close(cs_mig_table_procs_ratio(t, 2, 1, 1), 1.0, 0);
  assert_close(cs_mig_table_procs_ratio(t, 2, 1, 2), 1.5, 1e-12);
  assert_close(cs_mig_table_procs_ratio(t, 2, 2, 2), 1.5, 1e-12);
  assert_close(cs_mig_table_procs_ratio(t, 2, 1, 3), 2.25, 1e-12);
  assert_close(cs_mig_table_procs_ratio(t, 2, 1, 6), 4.5, 1e-12);
  assert_close(cs_mig_table_procs_ratio(t, 2, 4, 4), 3.0, 1e-12);
  assert_true(isnan(cs_mig_table_procs_ratio(t, 1, 8, 2)));
  assert_null(cs_interference_mig(set, -1));
  cs_interference_set_free(set);
}

/* The rule on the curve batch 1 10, 2 12, 4 20 (slope 4 beyond): batch 1 on
 * half the GPU with kappa 1 costs batch 2's 12 (1.2); batch 4 costs batch 8's
 * 20 + 4 x 4 = 36 (1.8); with kappa 0.5, batch 1 costs batch sqrt(2)'s
 * 10 + 2 x 0.41421 (1.082843). */
static void test_rule(void **state)
{
  (void)state;
  const double b[] = { 1, 2, 4 }, l[] = { 10, 12, 20 };
  assert_close(cs_mig_rule_ratio_curve(b, l, 3, 4.0, 1, 0.5, 1.0), 1.2, 1e-12);
  assert_close(cs_mig_rule_ratio_curve(b, l, 3, 4.0, 4, 0.5, 1.0), 1.8, 1e-12);
  assert_close(cs_mig_rule_ratio_curve(b, l, 3, 4.0, 1, 0.5, 0.5), 1.0 + 0.2 * (sqrt(2) - 1),
               1e-12);
  assert_close(cs_mig_rule_ratio_curve(b, l, 3, 4.0, 1, 1.0, 1.0), 1.0, 0);
  assert_true(isnan(cs_mig_rule_ratio_curve(b, l, 0, 0.0, 1, 0.5, 1.0)));
  assert_close(cs_mig_rule_ratio_curve(b, l, 0, 3.0, 2, 0.25, 1.0), 4.0, 1e-12);
  /* processes: two batches of 1 on half the GPU (kappa 1) cost one batch of
   * 2 there, L(4) / L(2) = 20 / 12; three on the whole GPU L(3) / L(1) =
   * 16 / 10 */
  assert_close(cs_mig_rule_procs_ratio_curve(b, l, 3, 4.0, 1, 0.5, 1.0, 2), 20.0 / 12.0, 1e-12);
  assert_close(cs_mig_rule_procs_ratio_curve(b, l, 3, 4.0, 1, 1.0, 1.0, 3), 1.6, 1e-12);
  assert_close(cs_mig_rule_procs_ratio_curve(b, l, 3, 4.0, 1, 0.5, 1.0, 1), 1.0, 0);
}

/* The shipped file (tools/convert_parvagpu.py) holds every row of the source
 * CSV (../shared/data/measured/parvagpu_a100_mig_mps.csv), 1747, in 11
 * models; its first two rows as the CSV has them: bert, 1 GPC, batch 1,
 * alone 13 ms at 74.408 req/s (1000 / 74.408 = 13.4394 ms), with 2 processes
 * 19 ms at 52.42 req/s each. */
static void test_shipped(void **state)
{
  (void)state;
  const char *root = g_getenv("CS_SOURCE_ROOT");
  assert_non_null(root);
  char *path = g_build_filename(root, "data", "profiles", "a100_parvagpu_mig.json", NULL);
  GError *error = NULL;
  CsInterferenceSet *set = cs_interference_set_load_file(path, &error);
  if (!set)
    print_error("%s\n", error->message);
  assert_non_null(set);
  int total = 0;
  for (int i = 0; i < cs_interference_set_n_models(set); i++)
    total += cs_mig_table_n_cells(cs_interference_mig(set, i));
  assert_int_equal(cs_interference_set_n_models(set), 11);
  assert_int_equal(total, 1747);
  const CsMigTable *t = cs_interference_mig(set, cs_interference_set_find(set, "bert"));
  const CsMigCell *c = cs_mig_table_cell(t, 0);
  assert_int_equal(c->gpcs, 1);
  assert_int_equal(c->batch, 1);
  assert_int_equal(c->processes, 1);
  assert_close(c->stored_ms, 13.0, 0);
  assert_close(c->latency_ms, 1000.0 / 74.408, 1e-12);
  assert_string_equal(c->source, "MunQ-Lee/ParvaGPU_SC24@5f3de1e185:prof_data/bert.csv line 2");
  assert_close(cs_mig_table_procs_ratio(t, 1, 1, 2), 74.408 / 52.42, 1e-12);
  assert_int_equal(cs_mig_table_size(t, 1.0 / 7), 1);
  cs_interference_set_free(set);
  g_free(path);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_files),
    cmocka_unit_test(test_queries),
    cmocka_unit_test(test_rule),
    cmocka_unit_test(test_shipped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
