/* Tests of measured processes in the GPU execution model (src/gpu/gpu_exec.c,
 * CsGpuJobSpec.n_procs / group; docs/gpu-model.md, "MIG instances"): batches
 * of one group run at the measured per-process ratio instead of contention
 * and interference among them; toward other batches the usual terms act.
 * Every completion time is worked by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "gpu/gpu_exec.h"

/* A batch of 10 ms, demand d, in group g with ratios [1, 1.5] for 1 and 2
 * processes (n_procs 0: none). */
static CsGpuJobSpec job(int worker, double d, int group, int n_procs)
{
  CsGpuJobSpec s = { .model = -1, .batch = 1, .iso_ns = 10000000, .demand = d, .worker = worker,
                     .group = group, .n_procs = n_procs };
  s.procs_ratio[0] = 1.0;
  s.procs_ratio[1] = 1.5;
  return s;
}

/* Runs the GPU to idle; end[i] is job i's completion time. */
static void drain(CsGpuExec *gpu, int64_t *end, int n)
{
  int64_t t;
  uint64_t id;
  int left = n;
  while (left > 0 && cs_gpu_exec_next(gpu, &t, &id)) {
    assert_true(id < (uint64_t)n);
    end[id] = t;
    assert_true(cs_gpu_exec_finish(gpu, t, id));
    left--;
  }
  assert_int_equal(left, 0);
}

static int64_t run(const CsGpuJobSpec *specs, int n, gboolean interference, int64_t *end)
{
  CsGpuExecConfig cfg;
  cs_gpu_exec_config_init(&cfg, NULL);
  cfg.interference = interference;
  CsGpuExec *gpu = cs_gpu_exec_new(&cfg);
  for (int i = 0; i < n; i++)
    cs_gpu_exec_start(gpu, 0, (uint64_t)i, &specs[i]);
  drain(gpu, end, n);
  cs_gpu_exec_free(gpu);
  return end[0];
}

/* Two batches of one group, demand 1 each: 10 ms x 1.5 = 15 ms, with or
 * without the interference model (no pair term between them); the same two
 * without the measurement: D = 2, 20 ms (more with interference). Three of
 * the group: beyond the two ratios, 1.5 + (1.5 - 1) = 2, so 20 ms. */
static void test_group(void **state)
{
  (void)state;
  int64_t end[3];
  CsGpuJobSpec two[2] = { job(0, 1.0, 0, 2), job(1, 1.0, 0, 2) };
  assert_int_equal(run(two, 2, FALSE, end), 15000000);
  assert_int_equal(end[1], 15000000);
  assert_int_equal(run(two, 2, TRUE, end), 15000000);
  CsGpuJobSpec plain[2] = { job(0, 1.0, 0, 0), job(1, 1.0, 0, 0) };
  assert_int_equal(run(plain, 2, FALSE, end), 20000000);
  assert_true(run(plain, 2, TRUE, end) > 20000000);
  CsGpuJobSpec three[3] = { job(0, 1.0, 0, 2), job(1, 1.0, 0, 2), job(2, 1.0, 0, 2) };
  assert_int_equal(run(three, 3, FALSE, end), 20000000);
  /* different groups are not each other's processes: D = 2 */
  CsGpuJobSpec other[2] = { job(0, 1.0, 0, 2), job(1, 1.0, 1, 2) };
  assert_int_equal(run(other, 2, FALSE, end), 20000000);
}

/* Two of group 0 (demand 1) beside one of another model (demand 0.5), no
 * interference: D = 2.5. Each of the group counts its own demand and the
 * other's, 1.5: speed 1 / 1.5 / 1.5, done at 22.5 ms; the other runs at
 * 1 / 2.5 until then (9 ms of work), then alone: 1 ms more, 23.5 ms. */
static void test_group_and_other(void **state)
{
  (void)state;
  int64_t end[3];
  CsGpuJobSpec s[3] = { job(0, 1.0, 0, 2), job(1, 1.0, 0, 2), job(2, 0.5, 1, 0) };
  run(s, 3, FALSE, end);
  assert_int_equal(end[0], 22500000);
  assert_int_equal(end[1], 22500000);
  assert_int_equal(end[2], 23500000);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_group),
    cmocka_unit_test(test_group_and_other),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
