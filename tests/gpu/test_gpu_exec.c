/* Tests of the GPU execution model (src/gpu/gpu_exec.c), the interference
 * data loader (src/profiles/interference.c) and the calibration run
 * (src/calibrate/calibrate.c). Expected values are computed by hand in the
 * comments; the calibration tests pin the figures of docs/gpu-model.md. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "profiles/interference.h"
#include "profiles/profile.h"
#include "calibrate/calibrate.h"
#include "calibrate/calibrate_joint.h"
#include "profiles/share_rule.h"
#include "gpu/gpu_exec.h"

#define MS INT64_C(1000000)

#define assert_close(a, b, eps) assert_close_impl((a), (b), (eps), #a, __FILE__, __LINE__)
static void assert_close_impl(double a, double b, double eps, const char *what, const char *file,
                              int line)
{
  if (!(fabs(a - b) <= eps)) {
    print_error("%s = %.17g, expected %.17g (+- %g)\n", what, a, b, eps);
    _fail(file, line);
  }
}

static char *data_path(const char *rel)
{
  const char *root = g_getenv("CS_SOURCE_ROOT");
  if (!root) {
    print_error("CS_SOURCE_ROOT is not set (run through meson test)\n");
    fail();
  }
  return g_build_filename(root, "data", "profiles", rel, NULL);
}

static CsGpuJobSpec spec(int worker, int64_t iso_ns, double demand, double share)
{
  return (CsGpuJobSpec){ .model = -1, .batch = 4, .iso_ns = iso_ns, .demand = demand,
                         .share = share, .worker = worker };
}

/* No interference, and the power share rule (r/d)^gamma: the tests of the
 * cap below are worked with it; test_share_rule_scalable checks the
 * default rule. */
static CsGpuExecConfig plain_config(CsGpuShareMode mode)
{
  CsGpuExecConfig cfg;
  cs_gpu_exec_config_init(&cfg, NULL);
  cfg.mode = mode;
  cfg.interference = FALSE;
  cfg.share_rule = CS_SHARE_RULE_POWER;
  return cfg;
}

static void expect_next(const CsGpuExec *g, int64_t t, uint64_t id)
{
  int64_t nt = -1;
  uint64_t nid = 0;
  assert_true(cs_gpu_exec_next(g, &nt, &nid));
  assert_int_equal(nt, t);
  assert_int_equal(nid, id);
}

/* ---- processor sharing ------------------------------------------------------ */

/* Two batches of 10 ms isolated work, demand 1 each (D = 2 while both run),
 * the second starting 2 ms after the first:
 *   0..2 ms    A alone at speed 1: 8 ms left
 *   2..18 ms   both at speed 1/2: A needs 16 ms -> ends at 18 ms;
 *              B has done 8 ms of work -> 2 ms left
 *   18..20 ms  B alone at speed 1 -> ends at 20 ms. */
static void test_two_batches_contention(void **state)
{
  (void)state;
  CsGpuExecConfig cfg = plain_config(CS_GPU_MPS);
  CsGpuExec *g = cs_gpu_exec_new(&cfg);
  assert_false(cs_gpu_exec_next(g, NULL, NULL));
  assert_close(cs_gpu_exec_sm_use(g), 0.0, 0);
  CsGpuJobSpec a = spec(0, 10 * MS, 1.0, 0.0), b = spec(1, 10 * MS, 1.0, 0.0);
  cs_gpu_exec_start(g, 0, 1, &a);
  expect_next(g, 10 * MS, 1);
  assert_true(cs_gpu_exec_accepts(g, 1));
  assert_false(cs_gpu_exec_accepts(g, 0)); /* one batch per worker */
  cs_gpu_exec_start(g, 2 * MS, 2, &b);
  assert_close(cs_gpu_exec_speed(g, 1), 0.5, 1e-15);
  assert_close(cs_gpu_exec_speed(g, 2), 0.5, 1e-15);
  assert_close(cs_gpu_exec_sm_use(g), 1.0, 0);
  expect_next(g, 18 * MS, 1);
  assert_true(cs_gpu_exec_finish(g, 18 * MS, 1));
  assert_false(cs_gpu_exec_finish(g, 18 * MS, 1)); /* not running any more */
  assert_close(cs_gpu_exec_speed(g, 2), 1.0, 0);
  expect_next(g, 20 * MS, 2);
  assert_true(cs_gpu_exec_finish(g, 20 * MS, 2));
  assert_false(cs_gpu_exec_next(g, NULL, NULL));
  assert_int_equal(cs_gpu_exec_busy_ns(g), 20 * MS);
  /* SM use: 1 (A alone, d = 1) for 20 ms in total. */
  assert_close(cs_gpu_exec_sm_ns(g), 20.0 * MS, 1e-3);
  cs_gpu_exec_free(g);
}

/* Demands 0.6 + 0.6: D = 1.2, both at speed 1/1.2 while together.
 *   A alone 0..2 ms (8 ms left); together A needs 8 * 1.2 = 9.6 ms -> 11.6 ms;
 *   B did 9.6 / 1.2 = 8 ms of work -> 2 ms left, alone -> 13.6 ms.
 * Demands 0.4 + 0.5 (D = 0.9 <= 1) do not slow each other. */
static void test_partial_demands(void **state)
{
  (void)state;
  CsGpuExecConfig cfg = plain_config(CS_GPU_MPS);
  CsGpuExec *g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec a = spec(0, 10 * MS, 0.6, 0.0), b = spec(1, 10 * MS, 0.6, 0.0);
  cs_gpu_exec_start(g, 0, 1, &a);
  cs_gpu_exec_start(g, 2 * MS, 2, &b);
  assert_close(cs_gpu_exec_sm_use(g), 1.0, 0);
  expect_next(g, 11600000, 1);
  cs_gpu_exec_finish(g, 11600000, 1);
  expect_next(g, 13600000, 2);
  cs_gpu_exec_finish(g, 13600000, 2);
  cs_gpu_exec_free(g);

  g = cs_gpu_exec_new(&cfg);
  a = spec(0, 10 * MS, 0.4, 0.0);
  b = spec(1, 5 * MS, 0.5, 0.0);
  cs_gpu_exec_start(g, 0, 1, &a);
  cs_gpu_exec_start(g, 1 * MS, 2, &b);
  assert_close(cs_gpu_exec_sm_use(g), 0.9, 1e-15);
  expect_next(g, 6 * MS, 2);
  cs_gpu_exec_finish(g, 6 * MS, 2);
  expect_next(g, 10 * MS, 1);
  cs_gpu_exec_free(g);
}

/* Completion times are rounded up to the next integer ns, and an exact
 * result is not pushed up by floating-point noise:
 *   10 ns of work, 1 ns alone, then shared by three (D = 3): 1 + 9 * 3 = 28 ns;
 *   10 ns shared by three from t = 0: 30 ns exactly, not 31;
 *   1 ns of work with D = 1.5: 1.5 ns -> 2 ns. */
static void test_rounding_up(void **state)
{
  (void)state;
  CsGpuExecConfig cfg = plain_config(CS_GPU_MPS);
  CsGpuExec *g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec a = spec(0, 10, 1.0, 0.0), b = spec(1, 100, 1.0, 0.0), c = spec(2, 100, 1.0, 0.0);
  cs_gpu_exec_start(g, 0, 1, &a);
  cs_gpu_exec_start(g, 1, 2, &b);
  cs_gpu_exec_start(g, 1, 3, &c);
  /* A: 9 ns left at speed 1/3 -> 27 ns after t = 1 -> 28 ns. */
  expect_next(g, 28, 1);
  cs_gpu_exec_free(g);

  /* 10 ns of work with D = 3 from t = 0: 30 ns exactly, not 31. */
  g = cs_gpu_exec_new(&cfg);
  cs_gpu_exec_start(g, 0, 1, &a);
  cs_gpu_exec_start(g, 0, 2, &b);
  cs_gpu_exec_start(g, 0, 3, &c);
  expect_next(g, 30, 1);
  cs_gpu_exec_free(g);
  g = cs_gpu_exec_new(&cfg);
  a = spec(0, 1, 1.0, 0.0);
  b = spec(1, 100, 0.5, 0.0);
  cs_gpu_exec_start(g, 0, 1, &a);
  cs_gpu_exec_start(g, 0, 2, &b);
  expect_next(g, 2, 1);
  cs_gpu_exec_free(g);
}

/* Long batches end exactly: the slack that keeps rounding noise from adding
 * a nanosecond took a whole one off from 10^12 ns (1000 s) on, so a batch of
 * 10^12 ns ended at 10^12 - 1 and one of 10^15 ns (11.6 days) 1000 ns early.
 * Alone at speed 1 a batch of w ns ends w ns after its start; two of 10^15
 * ns with D = 2 end together at 2 * 10^15. */
static void test_long_batches_exact(void **state)
{
  (void)state;
  CsGpuExecConfig cfg = plain_config(CS_GPU_MPS);
  const int64_t works[] = { INT64_C(499999999999), INT64_C(1000000000000), INT64_C(1000000000001),
                            INT64_C(1000000000000000), INT64_C(3000000000000000) };
  for (size_t i = 0; i < G_N_ELEMENTS(works); i++) {
    CsGpuExec *g = cs_gpu_exec_new(&cfg);
    CsGpuJobSpec a = spec(0, works[i], 1.0, 0.0);
    cs_gpu_exec_start(g, 7, 1, &a);
    expect_next(g, 7 + works[i], 1);
    cs_gpu_exec_free(g);
  }
  CsGpuExec *g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec a = spec(0, INT64_C(1000000000000000), 1.0, 0.0);
  CsGpuJobSpec b = spec(1, INT64_C(1000000000000000), 1.0, 0.0);
  cs_gpu_exec_start(g, 0, 1, &a);
  cs_gpu_exec_start(g, 0, 2, &b);
  expect_next(g, INT64_C(2000000000000000), 1);
  cs_gpu_exec_free(g);
}

/* ---- time-slicing ------------------------------------------------------------ */

/* Without MPS the GPU takes one batch at a time; the caller queues the rest
 * (FIFO). Demands and shares do not matter: a batch alone runs at speed 1. */
static void test_time_slicing(void **state)
{
  (void)state;
  CsGpuExecConfig cfg = plain_config(CS_GPU_TIME_SLICE);
  cfg.interference = TRUE; /* nothing overlaps, so nothing interferes */
  CsGpuExec *g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec a = spec(0, 10 * MS, 1.0, 0.3), b = spec(1, 4 * MS, 0.2, 0.0);
  assert_true(cs_gpu_exec_accepts(g, 0));
  cs_gpu_exec_start(g, 0, 1, &a);
  assert_false(cs_gpu_exec_accepts(g, 1));
  assert_close(cs_gpu_exec_speed(g, 1), 1.0, 0); /* share ignored without MPS */
  expect_next(g, 10 * MS, 1);
  cs_gpu_exec_finish(g, 10 * MS, 1);
  assert_true(cs_gpu_exec_accepts(g, 1));
  cs_gpu_exec_start(g, 10 * MS, 2, &b);
  expect_next(g, 14 * MS, 2);
  cs_gpu_exec_finish(g, 14 * MS, 2);
  assert_int_equal(cs_gpu_exec_busy_ns(g), 14 * MS);
  /* SM use integral: 1.0 * 10 ms + 0.2 * 4 ms. */
  assert_close(cs_gpu_exec_sm_ns(g), 10.8 * MS, 1e-3);
  cs_gpu_exec_free(g);
}

/* ---- the scalable share rule ------------------------------------------------------ */

/* Without a share table a batch on a share r runs at 1 / (1 + (1 - e) f
 * (1/r - 1)), f = 1 - fixed: whatever its demand (no knee at the WSM, as the
 * iGniter tables show); e = 0.0989 by default. Worked by hand:
 * - f = 1 (fixed 0), r = 0.25: 1 + 0.9011 x 3 = 3.7033, 10 ms -> 37.033 ms;
 * - f = 0.4, r = 0.5, e = 0: 1 + 0.4 = 1.4, 10 ms -> 14 ms, demand 0.2
 *   (below the share) changing nothing;
 * - f = 0 or r >= 1: speed 1. */
static void test_share_rule_scalable(void **state)
{
  (void)state;
  CsGpuExecConfig cfg;
  cs_gpu_exec_config_init(&cfg, NULL);
  cfg.interference = FALSE;
  assert_int_equal(cfg.share_rule, CS_SHARE_RULE_SCALABLE);
  assert_close(cfg.share_serial, 0.0989, 0);
  CsGpuExec *g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec a = spec(0, 10 * MS, 1.0, 0.25);
  cs_gpu_exec_start(g, 0, 1, &a);
  expect_next(g, 37033000, 1);
  cs_gpu_exec_free(g);

  cfg.share_serial = 0.0;
  g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec b = spec(0, 10 * MS, 0.2, 0.5);
  b.fixed = 0.6;
  cs_gpu_exec_start(g, 0, 1, &b);
  expect_next(g, 14 * MS, 1);
  cs_gpu_exec_free(g);

  g = cs_gpu_exec_new(&cfg);
  b.fixed = 1.0;
  cs_gpu_exec_start(g, 0, 1, &b);
  expect_next(g, 10 * MS, 1);
  cs_gpu_exec_free(g);
  /* an unknown part (NAN) counts as all of it scaling */
  g = cs_gpu_exec_new(&cfg);
  b.fixed = NAN;
  cs_gpu_exec_start(g, 0, 1, &b);
  expect_next(g, 20 * MS, 1);
  cs_gpu_exec_free(g);
  /* the rule's function itself: never faster as r shrinks, 1 at r = 1,
   * never slower than 1/r */
  double last = 1.0;
  for (double r = 1.0; r > 0.01; r -= 0.01) {
    double x = cs_share_rule_ratio(0.7, 0.0989, r);
    assert_true(x >= last - 1e-12 && x <= 1.0 / r + 1e-12);
    last = x;
  }
  assert_close(cs_share_rule_ratio(0.7, 0.0989, 1.0), 1.0, 0);
}

/* f of the share rule from the shipped profiles, against an independent
 * computation (Python, from the same files: the profile's least-squares
 * line over its points, payload at 10^7 bytes/ms): iGniter's alexnet b16
 * 0.4807, resnet50 b16 0.7784, vgg19 b16 0.9399, ssd b32 0.8352 (slopes
 * 0.151797, 0.669062, 1.796927, 2.956612 ms per request); the thesis'
 * resnet50 b4 0.463 (slope 0.846802) and bert b4 0.879 (slope 7.492733). */
static void test_share_rule_profiles(void **state)
{
  (void)state;
  char *ipath = data_path("igniter_v100_profile.json"), *tpath = data_path("v100_thesis.json");
  CsProfileSet *prof = cs_profile_set_new();
  GError *error = NULL;
  assert_true(cs_profile_set_load_file(prof, ipath, &error));
  assert_true(cs_profile_set_load_file(prof, tpath, &error));
  static const struct { const char *gpu, *model; int batch; double f, slope_ms; } want[] = {
    { "v100_igniter", "alexnet", 16, 0.4807, 0.151797 },
    { "v100_igniter", "resnet50", 16, 0.7784, 0.669062 },
    { "v100_igniter", "vgg19", 16, 0.9399, 1.796927 },
    { "v100_igniter", "ssd", 32, 0.8352, 2.956612 },
    { "v100", "resnet50", 4, 0.463, 0.846802 },
    { "v100", "bert", 4, 0.879, 7.492733 },
  };
  for (size_t k = 0; k < G_N_ELEMENTS(want); k++) {
    const CsModelProfile *p = cs_profile_set_lookup(prof, want[k].gpu, want[k].model);
    assert_non_null(p);
    assert_close(p->alpha_ns / 1e6, want[k].slope_ms, 1e-6);
    assert_close(cs_share_scalable_fraction(p, want[k].batch), want[k].f, 1e-3);
  }
  cs_profile_set_free(prof);
  g_free(ipath);
  g_free(tpath);
}

/* ---- MPS cap ------------------------------------------------------------------- */

/* share 0.25 < demand 0.5: speed (0.25 / 0.5)^gamma; gamma 1 -> 1/2,
 * gamma 2 -> 1/4. share >= demand: no cap. The capped demand min(d, r)
 * counts in D: two workers with d = 1 under shares 0.5 each give D = 1, no
 * contention, each at (0.5/1) = 1/2. */
static void test_mps_cap(void **state)
{
  (void)state;
  CsGpuExecConfig cfg = plain_config(CS_GPU_MPS);
  CsGpuExec *g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec a = spec(0, 10 * MS, 0.5, 0.25);
  cs_gpu_exec_start(g, 0, 1, &a);
  assert_close(cs_gpu_exec_speed(g, 1), 0.5, 1e-15);
  assert_close(cs_gpu_exec_sm_use(g), 0.25, 1e-15);
  expect_next(g, 20 * MS, 1);
  cs_gpu_exec_free(g);

  cfg.gamma = 2.0;
  g = cs_gpu_exec_new(&cfg);
  cs_gpu_exec_start(g, 0, 1, &a);
  expect_next(g, 40 * MS, 1);
  cs_gpu_exec_free(g);

  cfg.gamma = 1.0;
  g = cs_gpu_exec_new(&cfg);
  a = spec(0, 10 * MS, 0.3, 0.5); /* share above demand */
  cs_gpu_exec_start(g, 0, 1, &a);
  assert_close(cs_gpu_exec_speed(g, 1), 1.0, 0);
  cs_gpu_exec_free(g);

  g = cs_gpu_exec_new(&cfg);
  a = spec(0, 10 * MS, NAN, 0.5); /* NAN demand: cfg default 1.0 */
  CsGpuJobSpec b = spec(1, 10 * MS, 1.0, 0.5);
  cs_gpu_exec_start(g, 0, 1, &a);
  cs_gpu_exec_start(g, 0, 2, &b);
  assert_close(cs_gpu_exec_sm_use(g), 1.0, 1e-15);
  assert_close(cs_gpu_exec_speed(g, 1), 0.5, 1e-15);
  assert_close(cs_gpu_exec_speed(g, 2), 0.5, 1e-15);
  expect_next(g, 20 * MS, 1);
  CsGpuJobInfo info;
  cs_gpu_exec_job(g, 1, &info);
  assert_int_equal(info.job_id, 2);
  assert_int_equal(info.worker, 1);
  assert_close(info.cap, 0.5, 1e-15);
  assert_close(info.sm_demand, 0.5, 1e-15);
  cs_gpu_exec_free(g);
}

/* ---- inputs at their edges ---------------------------------------------------------- */

/* Demands are clamped to [1e-6, 1]: two batches "demanding" 2 GPUs each
 * contend as two full GPUs (D = 2, speed 1/2 each: 10 ms of work ends at
 * 20 ms), not as D = 4. A demand of 0 counts as 1e-6. NAN takes the default
 * demand (1.0). */
static void test_demand_edges(void **state)
{
  (void)state;
  CsGpuExecConfig cfg = plain_config(CS_GPU_MPS);
  CsGpuExec *g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec a = spec(0, 10 * MS, 2.0, 0.0), b = spec(1, 10 * MS, 2.0, 0.0);
  cs_gpu_exec_start(g, 0, 1, &a);
  cs_gpu_exec_start(g, 0, 2, &b);
  assert_close(cs_gpu_exec_speed(g, 1), 0.5, 0);
  assert_close(cs_gpu_exec_sm_use(g), 1.0, 0);
  expect_next(g, 20 * MS, 1);
  assert_int_equal(cs_gpu_exec_n_running(g), 2);
  cs_gpu_exec_free(g);

  g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec z = spec(0, 10 * MS, 0.0, 0.0), n = spec(1, 10 * MS, NAN, 0.0);
  cs_gpu_exec_start(g, 0, 1, &z);
  assert_close(cs_gpu_exec_sm_use(g), 1e-6, 0);
  cs_gpu_exec_start(g, 0, 2, &n);
  /* D = 1 + 1e-6 > 1: both slow down by 1 / (1 + 1e-6). */
  assert_close(cs_gpu_exec_speed(g, 2), 1.0 / (1.0 + 1e-6), 1e-15);
  CsGpuJobInfo info;
  cs_gpu_exec_job(g, 1, &info);
  assert_close(info.sm_demand, 1.0, 0);
  /* Unknown jobs: no speed, no finish. Only one output wanted from next. */
  assert_true(isnan(cs_gpu_exec_speed(g, 99)));
  assert_false(cs_gpu_exec_finish(g, 0, 99));
  uint64_t id = 0;
  assert_true(cs_gpu_exec_next(g, NULL, &id));
  assert_int_equal(id, 1);
  int64_t t = 0;
  assert_true(cs_gpu_exec_next(g, &t, NULL));
  assert_true(t > 10 * MS);
  cs_gpu_exec_free(g);
}

/* A share of 1 (or more) is the whole GPU: no cap, the demand is not cut to
 * the share. With MPS, demand 0.6 and share 1.0 next to another 0.6: D = 1.2
 * (speeds 1/1.2). A share of 0.5 would cut each to 0.5 (D = 1, speed
 * (0.5/0.6)^gamma). */
static void test_share_edges(void **state)
{
  (void)state;
  CsGpuExecConfig cfg = plain_config(CS_GPU_MPS);
  CsGpuExec *g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec a = spec(0, 12 * MS, 0.6, 1.0), b = spec(1, 12 * MS, 0.6, 1.5);
  cs_gpu_exec_start(g, 0, 1, &a);
  cs_gpu_exec_start(g, 0, 2, &b);
  assert_close(cs_gpu_exec_speed(g, 1), 1.0 / 1.2, 1e-15);
  assert_close(cs_gpu_exec_speed(g, 2), 1.0 / 1.2, 1e-15);
  /* 12 ms at 1/1.2 = 14.4 ms; both end together, the first started first. */
  expect_next(g, 14400000, 1);
  cs_gpu_exec_free(g);

  /* A model index the tables do not have is treated as unknown (-1): the
   * fallback, never an out-of-range table. */
  GError *error = NULL;
  CsInterferenceSet *set = cs_interference_set_load_data(
    "{\"format\": \"clustersim-interference\", \"version\": 1, \"source\": \"s\","
    " \"models\": [{\"model\": \"m\", \"share_latency\": [[1, 50, 4.0], [1, 100, 1.0]]}],"
    " \"fallback\": {\"constant\": 0.25}}", "t.json", &error);
  assert_non_null(set);
  CsGpuExecConfig tcfg;
  cs_gpu_exec_config_init(&tcfg, set);
  tcfg.share_rule = CS_SHARE_RULE_POWER;
  g = cs_gpu_exec_new(&tcfg);
  CsGpuJobSpec x = spec(0, 10 * MS, 0.1, 0.5), y = spec(1, 10 * MS, 0.1, 0.0);
  x.model = 7;
  cs_gpu_exec_start(g, 0, 1, &x);
  cs_gpu_exec_start(g, 0, 2, &y);
  /* x: no table, share 0.5 >= demand 0.1 -> cap 1; the fallback pair
   * factor 1 + 0.25 -> speed 0.8. */
  CsGpuJobInfo info;
  cs_gpu_exec_job(g, 0, &info);
  assert_int_equal(info.model, -1);
  assert_close(info.cap, 1.0, 0);
  assert_close(cs_gpu_exec_speed(g, 1), 0.8, 1e-15);
  cs_gpu_exec_free(g);
  /* The same batch as model 0 ("m"): its table says 4 ms at 50 % vs 1 ms:
   * cap 1/4 -> speed 0.25 / 1.25 = 0.2. */
  g = cs_gpu_exec_new(&tcfg);
  x.model = 0;
  x.batch = 1;
  cs_gpu_exec_start(g, 0, 1, &x);
  cs_gpu_exec_start(g, 0, 2, &y);
  assert_close(cs_gpu_exec_speed(g, 1), 0.2, 1e-15);
  cs_gpu_exec_free(g);
  cs_interference_set_free(set);
}

/* Completion times beyond int64 ns saturate at INT64_MAX: never earlier
 * than the batch can end (the header promises times rounded up). Two
 * batches of 6e18 ns of work at speed 1/2 would end at 1.2e19 ns; work of
 * 5e18 ns started at 5e18 ns would end at 1e19 ns. */
static void test_far_completions(void **state)
{
  (void)state;
  CsGpuExecConfig cfg = plain_config(CS_GPU_MPS);
  CsGpuExec *g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec a = spec(0, INT64_C(6000000000000000000), 1.0, 0.0);
  CsGpuJobSpec b = spec(1, INT64_C(6000000000000000000), 1.0, 0.0);
  cs_gpu_exec_start(g, 0, 1, &a);
  cs_gpu_exec_start(g, 0, 2, &b);
  expect_next(g, INT64_MAX, 1);
  cs_gpu_exec_free(g);

  g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec c = spec(0, INT64_C(5000000000000000000), 1.0, 0.0);
  cs_gpu_exec_start(g, INT64_C(5000000000000000000), 1, &c);
  expect_next(g, INT64_MAX, 1);
  cs_gpu_exec_free(g);
}

/* ---- interference data: share tables --------------------------------------------- */

/* Model "m": batch 1 and 3 measured at 50 % and 100 %, batch 2 only at
 * 100 % (2.5 ms). Ratio 50%/100% is 2.0 at batch 1 and 3.0 at batch 3 -> 2.5
 * at batch 2 -> cell (2, 50 %) = 2.5 * 2.5 = 6.25 ms.
 * Model "n": rows 1 and 5 only, for interpolation in batch. */
static const char *const TABLES_JSON =
  "{\"format\": \"clustersim-interference\", \"version\": 1, \"source\": \"test\","
  " \"models\": ["
  "  {\"model\": \"m\", \"share_latency\": [[1, 50, 2.0], [1, 100, 1.0], [2, 100, 2.5],"
  "                                         [3, 50, 9.0], [3, 100, 3.0]],"
  "   \"l2_util\": [[1, 50, 10], [1, 100, 30], [3, 50, 20], [3, 100, 40]]},"
  "  {\"model\": \"n\", \"share_latency\": [[1, 25, 4.0], [1, 100, 1.0], [5, 25, 20.0],"
  "                                         [5, 100, 5.0]]}],"
  " \"pairs\": [{\"victim\": \"x\", \"aggressor\": \"y\", \"slowdown\": 1.2},"
  "             {\"victim\": \"x\", \"aggressor\": \"z\", \"slowdown\": 1.5},"
  "             {\"victim\": \"y\", \"aggressor\": \"x\", \"slowdown\": 1.1, \"samples\": 3}],"
  " \"fallback\": {\"constant\": 0.1}}";

static CsInterferenceSet *load_tables(void)
{
  GError *error = NULL;
  CsInterferenceSet *set = cs_interference_set_load_data(TABLES_JSON, "t.json", &error);
  if (!set)
    print_error("%s\n", error->message);
  assert_non_null(set);
  return set;
}

static void test_share_table_interpolation(void **state)
{
  (void)state;
  CsInterferenceSet *set = load_tables();
  int m = cs_interference_set_find(set, "m"), n = cs_interference_set_find(set, "n");
  assert_int_equal(m, 0);
  assert_int_equal(n, 1);
  assert_int_equal(cs_interference_set_find(set, "nope"), -1);
  assert_int_equal(cs_interference_set_n_models(set), 5); /* m, n and x, y, z from pairs */
  assert_false(cs_interference_has_share_table(set, cs_interference_set_find(set, "x")));
  /* measured and completed cells */
  assert_close(cs_interference_share_latency_ms(set, m, 1, 0.5), 2.0, 1e-12);
  assert_close(cs_interference_share_latency_ms(set, m, 2, 0.5), 6.25, 1e-12);
  assert_close(cs_interference_share_latency_ms(set, m, 2, 0.0), 2.5, 1e-12); /* no share */
  /* between shares: linear in 1/share. Batch 2 at 0.75: w = (1/0.75 - 1) /
   * (2 - 1) = 1/3 -> 2.5 + (6.25 - 2.5) / 3 = 3.75 */
  assert_close(cs_interference_share_latency_ms(set, m, 2, 0.75), 3.75, 1e-12);
  /* below the smallest share: grows as 1/share: 6.25 * 0.5 / 0.25 */
  assert_close(cs_interference_share_latency_ms(set, m, 2, 0.25), 12.5, 1e-12);
  /* between batches (model n, rows 1 and 5): batch 2 at 25 % = 4 + (20 - 4) / 4 */
  assert_close(cs_interference_share_latency_ms(set, n, 2, 0.25), 8.0, 1e-12);
  /* outside the batch range: clamped to the edge row */
  assert_close(cs_interference_share_latency_ms(set, n, 9, 1.0), 5.0, 1e-12);
  /* slowdown relative to the full GPU, never below 1 */
  assert_close(cs_interference_share_slowdown(set, m, 2, 0.75), 1.5, 1e-12);
  assert_close(cs_interference_share_slowdown(set, m, 2, 1.0), 1.0, 1e-12);
  assert_true(isnan(cs_interference_share_slowdown(set, 2, 2, 0.5)));
  /* utilisation: linear in share, as a fraction; batch 2 at 75 % =
   * mean of rows 1 (20 %) and 3 (30 %) = 25 % */
  assert_close(cs_interference_util(set, m, CS_UTIL_L2, 2, 0.75), 0.25, 1e-12);
  assert_true(isnan(cs_interference_util(set, m, CS_UTIL_DRAM, 2, 0.75)));

  /* In gpu_exec the table replaces the (r/d)^gamma cap: batch 2 of "m" at
   * share 0.75 has speed 1 / 1.5; 10 ms isolated -> 15 ms. */
  CsGpuExecConfig cfg;
  cs_gpu_exec_config_init(&cfg, set);
  CsGpuExec *g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec s = { .model = m, .batch = 2, .iso_ns = 10 * MS, .demand = 0.1, .share = 0.75,
                     .worker = 0 };
  cs_gpu_exec_start(g, 0, 7, &s);
  assert_close(cs_gpu_exec_speed(g, 7), 1.0 / 1.5, 1e-12);
  expect_next(g, 15 * MS, 7);
  cs_gpu_exec_free(g);
  /* Tables off, the power rule: share 0.75 >= demand 0.1 -> speed 1. */
  cfg.use_share_tables = FALSE;
  cfg.share_rule = CS_SHARE_RULE_POWER;
  g = cs_gpu_exec_new(&cfg);
  cs_gpu_exec_start(g, 0, 7, &s);
  assert_close(cs_gpu_exec_speed(g, 7), 1.0, 0);
  cs_gpu_exec_free(g);
  /* The default scalable rule, half of the latency fixed: 1 + (1 - e) x 0.5 x
   * (1/0.75 - 1) = 1 + 0.9011 x 0.5 / 3 = 1.1501833 */
  cfg.share_rule = CS_SHARE_RULE_SCALABLE;
  s.fixed = 0.5;
  g = cs_gpu_exec_new(&cfg);
  cs_gpu_exec_start(g, 0, 7, &s);
  assert_close(cs_gpu_exec_speed(g, 7), 1.0 / (1.0 + (1.0 - 0.0989) * 0.5 / 3.0), 1e-15);
  cs_gpu_exec_free(g);
  cs_interference_set_free(set);
}

/* ---- interference combination ----------------------------------------------------- */

/* x, y, z with small demands (no SM contention). Table: (x|y) 1.2, (x|z) 1.5,
 * (y|x) 1.1; every other pair falls back to 1 + 0.1.
 *   x: 1.2 * 1.5 = 1.8        y: (y|x) 1.1 * (y|z) 1.1 = 1.21
 *   z: (z|x) 1.1 * (z|y) 1.1 = 1.21
 * After y ends: x 1.5, z 1.1. Interference off: all 1. */
static void test_interference_combination(void **state)
{
  (void)state;
  CsInterferenceSet *set = load_tables();
  int x = cs_interference_set_find(set, "x"), y = cs_interference_set_find(set, "y"),
      z = cs_interference_set_find(set, "z");
  assert_close(cs_interference_pair(set, x, y), 1.2, 0);
  assert_true(isnan(cs_interference_pair(set, z, x)));
  assert_true(isnan(cs_interference_pair(set, -1, x)));
  CsGpuExecConfig cfg;
  cs_gpu_exec_config_init(&cfg, set);
  assert_close(cfg.fallback.constant, 0.1, 0);
  CsGpuExec *g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec sx = { .model = x, .batch = 1, .iso_ns = 100 * MS, .demand = 0.1, .worker = 0 };
  CsGpuJobSpec sy = sx, sz = sx;
  sy.model = y;
  sy.worker = 1;
  sy.iso_ns = 1 * MS;
  sz.model = z;
  sz.worker = 2;
  cs_gpu_exec_start(g, 0, 1, &sx);
  assert_close(cs_gpu_exec_speed(g, 1), 1.0, 0);
  cs_gpu_exec_start(g, 0, 2, &sy);
  cs_gpu_exec_start(g, 0, 3, &sz);
  assert_close(cs_gpu_exec_speed(g, 1), 1.0 / 1.8, 1e-12);
  assert_close(cs_gpu_exec_speed(g, 2), 1.0 / 1.21, 1e-12);
  assert_close(cs_gpu_exec_speed(g, 3), 1.0 / 1.21, 1e-12);
  CsGpuJobInfo info;
  cs_gpu_exec_job(g, 0, &info);
  assert_close(info.slowdown, 1.8, 1e-12);
  /* y: 1 ms at speed 1/1.21 -> 1.21 ms */
  expect_next(g, 1210000, 2);
  cs_gpu_exec_finish(g, 1210000, 2);
  assert_close(cs_gpu_exec_speed(g, 1), 1.0 / 1.5, 1e-12);
  assert_close(cs_gpu_exec_speed(g, 3), 1.0 / 1.1, 1e-12);
  cs_gpu_exec_finish(g, 2 * MS, 3);
  assert_close(cs_gpu_exec_speed(g, 1), 1.0, 0); /* alone: exactly 1 again */
  cs_gpu_exec_free(g);

  /* a model the tables do not know (-1) uses the fallback too */
  g = cs_gpu_exec_new(&cfg);
  sy.model = -1;
  cs_gpu_exec_start(g, 0, 1, &sx);
  cs_gpu_exec_start(g, 0, 2, &sy);
  assert_close(cs_gpu_exec_speed(g, 1), 1.0 / 1.1, 1e-12);
  cs_gpu_exec_free(g);

  cfg.interference = FALSE;
  g = cs_gpu_exec_new(&cfg);
  cs_gpu_exec_start(g, 0, 1, &sx);
  cs_gpu_exec_start(g, 0, 2, &sy);
  assert_close(cs_gpu_exec_speed(g, 1), 1.0, 0);
  cs_gpu_exec_free(g);

  /* pair table off: (x|y) from the fallback */
  cfg.interference = TRUE;
  cfg.use_pair_table = FALSE;
  g = cs_gpu_exec_new(&cfg);
  sy.model = y;
  cs_gpu_exec_start(g, 0, 1, &sx);
  cs_gpu_exec_start(g, 0, 2, &sy);
  assert_close(cs_gpu_exec_speed(g, 1), 1.0 / 1.1, 1e-12);
  cs_gpu_exec_free(g);

  /* without tables: the built-in fallback */
  cs_gpu_exec_config_init(&cfg, NULL);
  assert_close(cfg.fallback.constant, CS_INTERFERENCE_DEFAULT_CONSTANT, 0);
  assert_close(cs_interference_fallback_eval(&cfg.fallback, 0.5, 0.5),
               1.0 + CS_INTERFERENCE_DEFAULT_CONSTANT, 1e-15);
  cs_interference_set_free(set);
}

/* ---- determinism -------------------------------------------------------------------- */

/* A pseudo-random schedule of starts and finishes (fixed LCG) over 6 workers
 * with mixed demands, shares and models; the trace of completion times and
 * ids must be identical across runs, and equal-time ties go to the batch
 * started first. */
static GString *run_schedule(const CsInterferenceSet *set)
{
  CsGpuExecConfig cfg;
  cs_gpu_exec_config_init(&cfg, set);
  cfg.initial_capacity = 1; /* exercise growth */
  CsGpuExec *g = cs_gpu_exec_new(&cfg);
  GString *trace = g_string_new(NULL);
  uint64_t lcg = 12345;
  int64_t now = 0;
  uint64_t id = 1;
  const int models[] = { 0, 1, 2, 3, 4, -1 };
  for (int step = 0; step < 4000; step++) {
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    int w = (int)((lcg >> 33) % 6);
    int64_t t_next;
    uint64_t j;
    gboolean has = cs_gpu_exec_next(g, &t_next, &j);
    int64_t t_arr = now + (int64_t)((lcg >> 40) % (3 * MS));
    if (has && t_next <= t_arr) {
      now = t_next;
      cs_gpu_exec_finish(g, now, j);
      g_string_append_printf(trace, "%" G_GINT64_FORMAT ":%" G_GUINT64_FORMAT " ", now, j);
    } else {
      now = t_arr;
      if (cs_gpu_exec_accepts(g, w)) {
        CsGpuJobSpec s = { .model = models[w], .batch = 1 + w, .iso_ns = (1 + w) * MS,
                           .demand = 0.2 + 0.15 * w, .share = (w % 2) ? 0.3 : 0.0,
                           .worker = w };
        cs_gpu_exec_start(g, now, id++, &s);
      }
    }
  }
  cs_gpu_exec_free(g);
  return trace;
}

static void test_determinism(void **state)
{
  (void)state;
  CsInterferenceSet *set = load_tables();
  GString *a = run_schedule(set), *b = run_schedule(set);
  assert_true(a->len > 1000);
  assert_string_equal(a->str, b->str);
  g_string_free(a, TRUE);
  g_string_free(b, TRUE);
  cs_interference_set_free(set);

  /* tie: identical batches started together end at the same instant; the
   * one started first is reported first */
  CsGpuExecConfig cfg = plain_config(CS_GPU_MPS);
  CsGpuExec *g = cs_gpu_exec_new(&cfg);
  CsGpuJobSpec s1 = spec(0, 5 * MS, 0.5, 0.0), s2 = spec(1, 5 * MS, 0.5, 0.0);
  cs_gpu_exec_start(g, 0, 42, &s1);
  cs_gpu_exec_start(g, 0, 7, &s2);
  expect_next(g, 5 * MS, 42);
  cs_gpu_exec_finish(g, 5 * MS, 42);
  expect_next(g, 5 * MS, 7);
  cs_gpu_exec_free(g);
}

/* ---- loader errors -------------------------------------------------------------------- */

static void expect_load_error(const char *json, const char *needle)
{
  GError *error = NULL;
  CsInterferenceSet *set = cs_interference_set_load_data(json, "bad.json", &error);
  assert_null(set);
  assert_non_null(error);
  if (!strstr(error->message, needle) || strncmp(error->message, "bad.json: ", 10) != 0)
    print_error("message \"%s\" lacks \"%s\"\n", error->message, needle);
  assert_non_null(strstr(error->message, needle));
  g_error_free(error);
}

static void test_loader_errors(void **state)
{
  (void)state;
  expect_load_error("{\"format\": \"clustersim-interference\", \"version\": 2, \"source\": \"s\"}",
                    "version: unsupported version 2");
  expect_load_error("{\"format\": \"clustersim-profile\", \"version\": 1}", "format: expected");
  expect_load_error("{\"format\": \"clustersim-interference\", \"version\": 1, \"source\": \"s\","
                    " \"modles\": []}", "did you mean \"models\"");
  expect_load_error("{\"format\": \"clustersim-interference\", \"version\": 1, \"source\": \"s\","
                    " \"models\": [{\"model\": \"a\", \"share_latency\": [[1, 120, 2.0]]}]}",
                    "models[0].share_latency[0]: share_pct");
  expect_load_error("{\"format\": \"clustersim-interference\", \"version\": 1, \"source\": \"s\","
                    " \"models\": [{\"model\": \"a\", \"share_latency\": [[1, 50, 2.0],"
                    " [1, 50, 3.0]]}]}", "given twice");
  /* (1, 100 %) and (2, 50 %) only: no row measures both columns */
  expect_load_error("{\"format\": \"clustersim-interference\", \"version\": 1, \"source\": \"s\","
                    " \"models\": [{\"model\": \"a\", \"share_latency\": [[1, 100, 2.0],"
                    " [2, 50, 3.0]]}]}", "models[0].share_latency: cannot complete the table");
  expect_load_error("{\"format\": \"clustersim-interference\", \"version\": 1, \"source\": \"s\","
                    " \"pairs\": [{\"victim\": \"a\", \"aggressor\": \"b\", \"slowdown\": 1.1},"
                    " {\"victim\": \"a\", \"aggressor\": \"b\", \"slowdown\": 1.2}]}",
                    "pairs[1]: pair (victim \"a\", aggressor \"b\") is given twice");
  expect_load_error("{\"format\": \"clustersim-interference\", \"version\": 1, \"source\": \"s\","
                    " \"fallback\": {\"metric\": \"l3\"}}", "fallback.metric");
  GError *error = NULL;
  assert_null(cs_interference_set_load_file("/nonexistent/x.json", &error));
  assert_int_equal(error->code, CS_INPUT_ERROR_IO);
  g_error_free(error);
  cs_interference_set_free(NULL);
  cs_gpu_exec_free(NULL);
}

/* ---- shipped data ------------------------------------------------------------------------- */

/* igniter_v100.json loads; its completed 100 % column equals the isolated
 * latencies of igniter_v100_profile.json (both written by
 * tools/convert_igniter.py, the completion computed once in Python and once
 * here) to the ns; spot values against the source tables. */
static void test_shipped_igniter(void **state)
{
  (void)state;
  char *ipath = data_path("igniter_v100.json"), *ppath = data_path("igniter_v100_profile.json");
  GError *error = NULL;
  CsInterferenceSet *set = cs_interference_set_load_file(ipath, &error);
  if (!set)
    print_error("%s\n", error->message);
  assert_non_null(set);
  CsProfileSet *prof = cs_profile_set_new();
  assert_true(cs_profile_set_load_file(prof, ppath, &error));
  const char *models[] = { "alexnet", "resnet50", "vgg19", "ssd" };
  for (int k = 0; k < 4; k++) {
    int i = cs_interference_set_find(set, models[k]);
    assert_true(cs_interference_has_share_table(set, i));
    const CsModelProfile *p = cs_profile_set_lookup(prof, "v100_igniter", models[k]);
    assert_non_null(p);
    for (int b = 1; b <= 32; b++) {
      double ms = cs_interference_share_latency_ms(set, i, b, 1.0);
      assert_close((double)cs_model_profile_latency_ns(p, b), ms * 1e6, 1.0);
    }
  }
  int a = cs_interference_set_find(set, "alexnet"), r = cs_interference_set_find(set, "resnet50");
  /* solo table, alexnet b4 at 20 %: 3.4929833 ms (rounded to 6 decimals in the file;
   * upstream icloud-ecnu/igniter, i-Gniter/Profile/tools/gpulet.config, "alexnet"
   * latency "4" "20": 3.4929833297061914) */
  assert_close(cs_interference_share_latency_ms(set, a, 4, 0.2), 3.492983, 1e-9);
  /* config gpulatency resnet50 b16 at 10 %: 91.70025 + 16 * 606112 / 1e7 (upstream
   * i-Gniter/Algorithm/config: resnet50 gpulatency[1][0] = 91.70025076923079 ms at
   * batch 16, 10 %; transferdata 606112 bytes per request at 1e7 bytes/ms) */
  assert_close(cs_interference_share_latency_ms(set, r, 16, 0.1), 91.700251 + 0.9697792, 1e-5);
  /* The measured pairs carry a scale on the model's excess (test_calibration
   * checks it is the fit), no flat factor; the model is the built-in one. */
  assert_true(isnan(cs_interference_pair(set, a, r)));
  assert_close(cs_interference_pair_scale(set, a, r), 1.247, 1e-12);
  const CsInterferenceFallback *fb = cs_interference_set_fallback(set);
  assert_true(fb->form == CS_FALLBACK_BATCH_SHARE && fb->combine == CS_COMBINE_NORM);
  assert_close(fb->c, CS_INTERFERENCE_DEFAULT_C, 0);
  assert_close(fb->batch_exponent, CS_INTERFERENCE_DEFAULT_BATCH_EXPONENT, 0);
  assert_close(fb->share_exponent, CS_INTERFERENCE_DEFAULT_SHARE_EXPONENT, 0);
  assert_close(fb->combine_exponent, 1.0 / CS_INTERFERENCE_DEFAULT_SHARE_EXPONENT, 0);
  assert_non_null(strstr(cs_interference_set_source(set), "iGniter"));
  cs_profile_set_free(prof);
  cs_interference_set_free(set);
  g_free(ipath);
  g_free(ppath);
}

/* ---- calibration ----------------------------------------------------------------------------- */

static const CsCalibWorker *find_worker(const CsGpuCalibration *c, const char *exp,
                                        const char *model)
{
  for (int i = 0; i < c->n_colocations; i++)
    if (strcmp(c->colocations[i].name, exp) == 0)
      for (int k = 0; k < c->colocations[i].n_workers; k++)
        if (strcmp(c->colocations[i].workers[k].model, model) == 0)
          return &c->colocations[i].workers[k];
  print_error("no worker %s in %s\n", model, exp);
  fail();
  return NULL;
}

static double rel_err(const CsCalibWorker *w, double sim)
{
  return (sim - w->measured_ms) / w->measured_ms;
}

/* The figures of docs/gpu-model.md. Tolerances and why:
 * - the batch_share fit on iGniter's 750 latencies alone equals an
 *   independent fit of the same residuals (log of predicted / measured) with
 *   SciPy's least_squares: log c = -2.52996 (c = 0.0796622), x = 0.139488,
 *   z = 0.335183 (the shipped model is the joint fit over both GPU types
 *   instead: test_joint_calibration);
 * - measured pairs, table variant (model x scale per pair): total median
 *   <= 1.5 %, p90 <= 4 %, each pair median <= 2.5 %, p90 <= 6 % (the
 *   std-dev of a measurement is ~1-2 % of it);
 * - leave one pair out, the model fitted on the other two: total median
 *   <= 2.5 %, p90 <= 6.5 % (the target p90 of 5.5 % is not reached:
 *   resnet50+vgg19 interferes less than the other pairs predict, see the
 *   doc); the constant fitted the same way: median <= 5 %, p90 <= 8 % per
 *   pair; no interference at all is clearly worse (total median > 8 %).
 * - iGniter README example: within 5 % per model as shipped, within 6 %
 *   with the model alone (no pair data).
 * - thesis points read off figures ("about"): resnet50 + alexnet without
 *   shares and resnet50 under 17.55 % with the iGniter share table within
 *   15 %; bert under 31.83 % is NOT reached (-42 %, no share table for bert,
 *   gamma 1): pinned to [-45 %, -38 %] so that a change shows up. */
static void test_calibration(void **state)
{
  (void)state;
  char *ipath = data_path("igniter_v100.json"), *cpath = data_path("gpu_calibration.json"),
       *ppath = data_path("v100_thesis.json");
  char *spath = data_path("igniter_v100_profile.json");
  CsGpuCalibrateOptions opt = { .interference_path = ipath, .calibration_path = cpath,
                                .profile_path = ppath, .share_profile_path = spath,
                                .share_gpu_type = "v100_igniter" };
  GError *error = NULL;
  CsGpuCalibration *c = cs_gpu_calibrate(&opt, &error);
  if (!c)
    print_error("%s\n", error->message);
  assert_non_null(c);
  /* gpu_calibration.json holds 375 pair rows, 125 co-locations for each of
   * alexnet+resnet50, resnet50+vgg19 and vgg19+ssd, each row giving both
   * models' latencies: 250 errors per pair, 750 in all. */
  assert_int_equal(c->n_pairs, 3);
  for (int p = 0; p < 3; p++) {
    assert_int_equal(c->stats[CS_CALIB_TABLE][p].n, 250);
    assert_true(c->stats[CS_CALIB_TABLE][p].median <= 0.025);
    assert_true(c->stats[CS_CALIB_TABLE][p].p90 <= 0.06);
    assert_true(c->stats[CS_CALIB_LOO_CONST][p].median <= 0.05);
    assert_true(c->stats[CS_CALIB_LOO_CONST][p].p90 <= 0.08);
  }
  assert_int_equal(c->stats[CS_CALIB_TABLE][3].n, 750);
  assert_true(c->stats[CS_CALIB_TABLE][3].median <= 0.015);
  assert_true(c->stats[CS_CALIB_TABLE][3].p90 <= 0.04);
  assert_true(c->stats[CS_CALIB_LOPO][3].median <= 0.025);
  assert_true(c->stats[CS_CALIB_LOPO][3].p90 <= 0.065);
  assert_true(c->stats[CS_CALIB_NONE][3].median > 0.08);
  assert_true(c->fit.converged && c->fit.n == 750);
  assert_close(log(c->fit.c), -2.52996, 1e-4);
  assert_close(c->fit.x, 0.139488, 1e-5);
  assert_close(c->fit.z, 0.335183, 1e-5);
  assert_true(c->fit.ci[1][0] < c->fit.x && c->fit.x < c->fit.ci[1][1]);
  /* (the shipped model and scales are the joint fit's: test_joint_calibration) */
  /* the shipped constant is the all-pairs fit: the least-squares constant of
   * slowdown = 1 + c0 is the mean of measured / solo - 1 over the 750 latencies,
   * with solo the upstream solo table (gpulet.config) at the same batch and share:
   * 0.10139756292 (computed from the upstream files, outside this code; the
   * shipped solo table is rounded to 6 decimals, which moves it by about 5e-9) */
  assert_close(c->all_const, CS_INTERFERENCE_DEFAULT_CONSTANT, 5e-5);
  assert_close(c->all_const, 0.10139756292172818, 1e-7);

  const char *ig[] = { "alexnet", "resnet50", "vgg19" };
  for (int k = 0; k < 3; k++) {
    const CsCalibWorker *w = find_worker(c, "igniter-readme-example", ig[k]);
    assert_true(fabs(rel_err(w, w->sim_ms)) <= 0.05);
    assert_true(fabs(rel_err(w, w->sim_unseen_ms)) <= 0.06);
  }
  const CsCalibWorker *w = find_worker(c, "thesis-6.2.1-obs4", "resnet50");
  assert_true(fabs(rel_err(w, w->sim_ms)) <= 0.15);
  w = find_worker(c, "thesis-6.2.1-obs2", "resnet50");
  assert_true(fabs(rel_err(w, w->sim_ms)) <= 0.15);
  w = find_worker(c, "thesis-6.2.2-obs1", "bert");
  assert_true(rel_err(w, w->sim_ms) >= -0.52 && rel_err(w, w->sim_ms) <= -0.45);

  /* The share rule against the four share tables: e fitted on all of them
   * equals an independent fit (SciPy's least_squares on the same log
   * residuals: 0.099, and 0.142 / 0.089 / 0.089 / 0.068 leaving alexnet,
   * resnet50, vgg19, ssd out) and the built-in default; leave one model out,
   * pooled median <= 5 % and p90 <= 12 % where the power rule (d = 1: this
   * profile has no WSM) is far off (median > 15 %). */
  const CsCalibShare *sh = c->share;
  assert_non_null(sh);
  assert_int_equal(sh->n_models, 4);
  assert_int_equal(sh->stats[CS_SHARE_LOMO][4].n, 652);
  assert_close(sh->fit.e, 0.099, 5e-4);
  assert_close(sh->fit.e, CS_SHARE_RULE_DEFAULT_SERIAL, 5e-5);
  static const double lomo_e[4] = { 0.142, 0.089, 0.089, 0.068 };
  for (int m = 0; m < 4; m++)
    assert_close(sh->lomo_fit[m].e, lomo_e[m], 1e-3);
  assert_true(sh->stats[CS_SHARE_LOMO][4].median <= 0.05);
  assert_true(sh->stats[CS_SHARE_LOMO][4].p90 <= 0.12);
  assert_true(sh->stats[CS_SHARE_POWER][4].median > 0.15);

  /* deterministic: a second run gives the same numbers */
  CsGpuCalibration *c2 = cs_gpu_calibrate(&opt, &error);
  assert_non_null(c2);
  for (int v = 0; v < CS_CALIB_N_VARIANTS; v++)
    for (int p = 0; p <= 3; p++)
      assert_true(c->stats[v][p].median == c2->stats[v][p].median);
  for (int i = 0; i < c->n_colocations; i++)
    for (int k = 0; k < c->colocations[i].n_workers; k++)
      assert_true(c->colocations[i].workers[k].sim_ms == c2->colocations[i].workers[k].sim_ms);
  /* and prints */
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  cs_gpu_calibration_print(c, &opt, mem);
  fclose(mem);
  assert_non_null(strstr(buf, "alexnet+resnet50"));
  assert_non_null(strstr(buf, "igniter-readme-example"));
  free(buf);
  cs_gpu_calibration_free(c2);
  cs_gpu_calibration_free(c);

  /* bad inputs: an error naming the file, no result */
  opt.calibration_path = ipath; /* an interference file is not a calibration file */
  assert_null(cs_gpu_calibrate(&opt, &error));
  assert_non_null(strstr(error->message, "format: expected \"clustersim-calibration\""));
  g_clear_error(&error);
  opt.calibration_path = cpath;
  opt.interference_path = cpath;
  assert_null(cs_gpu_calibrate(&opt, &error));
  assert_non_null(strstr(error->message, "format: expected \"clustersim-interference\""));
  g_clear_error(&error);
  char *dir = g_dir_make_tmp("gpu-calib-XXXXXX", NULL);
  char *bad = g_build_filename(dir, "bad.json", NULL);
  assert_true(g_file_set_contents(bad,
    "{\"format\": \"clustersim-calibration\", \"version\": 1, \"source\": \"t\","
    " \"pairs\": {\"rows\": [[\"alexnet\", \"bert\", 2, 2, 50, 1.0, 2.0]]}}", -1, NULL));
  opt.interference_path = ipath;
  opt.calibration_path = bad;
  assert_null(cs_gpu_calibrate(&opt, &error));
  assert_non_null(strstr(error->message, "pairs.rows[0]: model \"bert\" has no"));
  g_clear_error(&error);
  g_remove(bad);
  g_rmdir(dir);
  g_free(bad);
  g_free(dir);
  g_free(ipath);
  g_free(cpath);
  g_free(ppath);
  g_free(spath);
}

/* The joint fit over both GPU types' shipped pairs (docs/gpu-model.md, "One
 * model for every GPU type"). Expected values and why:
 * - the fit equals an independent one of the same residuals, log(1 + e) -
 *   log(measured / isolated) over the 1960 Gpulet and 750 iGniter rows, with
 *   SciPy's least_squares (phi from a least-squares line of each model's
 *   full-GPU latencies, floored at 0.05): log c = -0.55972375 (a100_gpulet),
 *   -2.5151688 (v100_igniter), x = 0.03738699, 0.13953966, z = 0.42557105
 *   shared, w = 0.6895885 (a100_gpulet; none for v100_igniter);
 * - the shipped interference files and the built-in default carry it to 4
 *   digits, and each file's pair scales equal the scale fits on it;
 * - out of sample, each pair left out: a100_gpulet median <= 8 %, p90 <=
 *   24 % (the targets; one constant gives about 15 / 28 %);
 *   v100_igniter median <= 2.5 %, p90 <= 6.5 % (the target p90 of 5.5 % is
 *   not reached, as with the model fitted on iGniter alone: resnet50+vgg19);
 * - the victim term's choice: fitting it for v100_igniter makes unseen
 *   pairs worse, leaving it out for a100_gpulet doubles the median;
 * - a GPU type left out whole is clearly worse than a measured one. */
static void test_joint_calibration(void **state)
{
  (void)state;
  GError *error = NULL;
  CsJointCalibration *c = cs_joint_calibrate_shipped(&error);
  if (!c)
    print_error("%s\n", error->message);
  assert_non_null(c);
  assert_int_equal(c->n_groups, 2);
  const CsJointGroupResult *a = &c->group[0], *v = &c->group[1];
  assert_string_equal(a->name, "a100_gpulet");
  assert_string_equal(v->name, "v100_igniter");
  assert_int_equal(a->n_rows, 1960);
  assert_int_equal(v->n_rows, 750);
  assert_int_equal(a->n_skipped + v->n_skipped, 0);
  const CsBatchShareFit *fa = &c->fit.group[0], *fv = &c->fit.group[1];
  assert_true(c->fit.converged);
  assert_close(log(fa->c), -0.55972375, 1e-5);
  assert_close(log(fv->c), -2.5151688, 1e-5);
  assert_close(fa->x, 0.03738699, 1e-5);
  assert_close(fv->x, 0.13953966, 1e-5);
  assert_close(fa->z, 0.42557105, 1e-5);
  assert_close(fv->z, fa->z, 0);
  assert_close(fa->w, 0.6895885, 1e-5);
  assert_close(fv->w, 0.0, 0);
  /* the built-in default is the v100_igniter group, to 4 digits */
  assert_close(fv->c, CS_INTERFERENCE_DEFAULT_C, 5e-6);
  assert_close(fv->x, CS_INTERFERENCE_DEFAULT_BATCH_EXPONENT, 5e-5);
  assert_close(fv->z, CS_INTERFERENCE_DEFAULT_SHARE_EXPONENT, 5e-5);
  /* the shipped files: fallback and scales */
  const char *files[2] = { "a100_gpulet_interference.json", "igniter_v100.json" };
  for (int g = 0; g < 2; g++) {
    char *path = data_path(files[g]);
    CsInterferenceSet *set = cs_interference_set_load_file(path, &error);
    assert_non_null(set);
    const CsInterferenceFallback *fb = cs_interference_set_fallback(set);
    const CsBatchShareFit *f = &c->fit.group[g];
    assert_true(fb->form == CS_FALLBACK_BATCH_SHARE && fb->combine == CS_COMBINE_NORM);
    assert_close(fb->c, f->c, 5e-4 * f->c);
    assert_close(fb->batch_exponent, f->x, 5e-4 * fabs(f->x));
    assert_close(fb->share_exponent, f->z, 5e-4 * f->z);
    assert_close(fb->fixed_exponent, f->w, 5e-4 * f->w);
    const CsJointGroupResult *r = &c->group[g];
    assert_true(r->n_scales == (g == 0 ? 8 : 6));
    for (int k = 0; k < r->n_scales; k++) {
      double s = cs_interference_pair_scale(set, cs_interference_set_find(set, r->scale_victim[k]),
                                            cs_interference_set_find(set, r->scale_aggressor[k]));
      assert_close(s, r->scale[k], 5e-4 * r->scale[k]);
    }
    cs_interference_set_free(set);
    g_free(path);
  }
  assert_true(a->lopo.n == 1960 && v->lopo.n == 750);
  assert_true(a->lopo.median <= 0.08 && a->lopo.p90 <= 0.24);
  assert_true(v->lopo.median <= 0.025 && v->lopo.p90 <= 0.065);
  assert_true(a->toggle.median > 2.0 * a->lopo.median);
  assert_true(v->toggle.median > v->lopo.median);
  assert_true(a->logo.median > a->lopo.median + 0.05 && v->logo.median > 3.0 * v->lopo.median);
  assert_true(a->lomo.median <= 0.12 && v->lomo.median <= 0.03);
  /* unseen rows are predicted worse than seen ones */
  assert_true(a->lopo.p90 > a->in_sample.p90 && v->lopo.median > v->in_sample.median);
  /* deterministic, and it prints */
  CsJointCalibration *c2 = cs_joint_calibrate_shipped(&error);
  assert_non_null(c2);
  assert_true(c2->group[0].lopo.median == a->lopo.median && c2->group[1].lomo.p90 == v->lomo.p90);
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  cs_joint_calibration_print(c, mem);
  fclose(mem);
  assert_non_null(strstr(buf, "vgg19+vgg19"));
  free(buf);
  cs_joint_calibration_free(c2);
  cs_joint_calibration_free(c);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_two_batches_contention),
    cmocka_unit_test(test_partial_demands),
    cmocka_unit_test(test_rounding_up),
    cmocka_unit_test(test_long_batches_exact),
    cmocka_unit_test(test_time_slicing),
    cmocka_unit_test(test_share_rule_scalable),
    cmocka_unit_test(test_share_rule_profiles),
    cmocka_unit_test(test_mps_cap),
    cmocka_unit_test(test_demand_edges),
    cmocka_unit_test(test_share_edges),
    cmocka_unit_test(test_far_completions),
    cmocka_unit_test(test_share_table_interpolation),
    cmocka_unit_test(test_interference_combination),
    cmocka_unit_test(test_determinism),
    cmocka_unit_test(test_loader_errors),
    cmocka_unit_test(test_shipped_igniter),
    cmocka_unit_test(test_calibration),
    cmocka_unit_test(test_joint_calibration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
