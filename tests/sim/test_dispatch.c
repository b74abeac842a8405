/* Dispatch policies against Symphony's worked example (section 3.3), its
 * analytic bounds (Table 2) and its qualitative claims on batch size and GPU
 * use (Figure 1, section 3.5). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "policies/dispatch/dispatch.h"
#include "scenario/scenario.h"
#include "test_util.h"

#define MAX_REQ 256

typedef struct {
  int64_t dispatch_ns[MAX_REQ];
  int batch[MAX_REQ], gpu[MAX_REQ];
  gboolean dropped[MAX_REQ];
  int n;
} Trace;

static void record(const CsRequestRecord *rec, void *user)
{
  Trace *t = user;
  assert_true(rec->id < MAX_REQ);
  t->dispatch_ns[rec->id] = rec->dispatch_ns;
  t->batch[rec->id] = rec->batch_size;
  t->gpu[rec->id] = rec->gpu;
  t->dropped[rec->id] = rec->dropped;
  t->n++;
}

/* Section 3.3: 3 GPUs, l(b) = b + 5 (ms), SLO 12, a request every 0.75 ms from
 * t = 0, no network or control delays; skip lists request numbers (1-based)
 * left out. */
static CsResults *run_example(const char *dir, const char *policy, const int *skip, int n_skip,
                              int n_requests, Trace *t)
{
  GString *times = g_string_new(NULL);
  for (int i = 1; i <= n_requests; i++) {
    gboolean skipped = FALSE;
    for (int k = 0; k < n_skip; k++)
      skipped |= skip[k] == i;
    if (!skipped)
      g_string_append_printf(times, "%s%g", times->len ? ", " : "", 0.75 * (i - 1));
  }
  char *json = g_strdup_printf(
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 3, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"%s\", \"d_ctrl_us\": 0, \"d_data_us\": 0, \"d_resp_ms\": 0},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 12, \"arrival\": {\"process\": \"times\", \"times_ms\": [%s]}}]}",
    policy, times->str);
  CsScenario *sc = test_scenario(dir, json);
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = record;
  opt.user_data = t;
  CsResults *r = test_run(sc, &opt);
  cs_scenario_free(sc);
  g_free(json);
  g_string_free(times, TRUE);
  return r;
}

static void test_symphony_example_first_batch(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 5.0);
  Trace t = { 0 };
  CsResults *r = run_example(dir, "symphony", NULL, 0, 40, &t);
  /* R1..R4 leave together at t = 2.25 (frontrun 2 < now 2.25 < latest 3). */
  for (int i = 0; i < 4; i++) {
    assert_int_equal(t.dispatch_ns[i], 2250000);
    assert_int_equal(t.batch[i], 4);
    assert_int_equal(t.gpu[i], 0);
  }
  /* Then the staggered pattern: every 3 ms a batch of 4 on the next GPU. */
  for (int k = 1; k < 9; k++) {
    assert_int_equal(t.dispatch_ns[4 * k], 2250000 + 3000000 * (int64_t)k);
    assert_int_equal(t.batch[4 * k], 4);
    assert_int_equal(t.gpu[4 * k], k % 3);
  }
  assert_int_equal(cs_results_model(r, 0)->dropped, 0);
  assert_int_equal(cs_results_model(r, 0)->good, 40);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* Section 3.3, second example: with R13-R15 missing, deferred scheduling
 * returns to batches of 4 without dropping anything, while eager scheduling
 * runs small batches and drops requests. */
static void test_symphony_example_recovers(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 5.0);
  const int skip[] = { 13, 14, 15 };
  Trace d = { 0 }, e = { 0 };
  CsResults *rd = run_example(dir, "symphony", skip, 3, 60, &d);
  CsResults *re = run_example(dir, "eager", skip, 3, 60, &e);
  const CsModelResult *md = cs_results_model(rd, 0), *me = cs_results_model(re, 0);
  assert_int_equal(md->dropped, 0);
  /* After the gap, every batch but the very last (which has nothing left to wait for) has 4. */
  for (int i = 15; i < 56; i++)
    assert_int_equal(d.batch[i], 4);
  assert_true(me->dropped > 0);
  assert_true(me->mean_batch < md->mean_batch / 1.5);
  print_message("deferred: mean batch %.2f, dropped %" G_GINT64_FORMAT "; eager: mean batch %.2f, "
                "dropped %" G_GINT64_FORMAT "\n",
                md->mean_batch, (gint64)md->dropped, me->mean_batch, (gint64)me->dropped);
  cs_results_free(rd);
  cs_results_free(re);
  test_dir_remove(dir);
}

/* Table 2: ResNet50 on 1080Ti, 8 GPUs, SLO 25 ms; InceptionResNetV2 SLO 70 ms.
 * Every expected number is the paper's (Table 2); its closed forms (section
 * 5.3) reproduce them: uncoordinated b = floor((SLO/2 - beta) / alpha),
 * staggered b = floor((SLO / (1 + 1/N) - beta) / alpha), throughput
 * N b / (alpha b + beta):
 *   ResNet50:  (12.5 - 5.072) / 1.053 = 7.05 -> 7, 8 x 7 / 12.443 ms = 4501;
 *              (22.222 - 5.072) / 1.053 = 16.29 -> 16, 8 x 16 / 21.92 ms = 5839.
 *   Inception: (35 - 18.368) / 5.090 = 3.27 -> 3, 8 x 3 / 33.638 ms = 713;
 *              (62.222 - 18.368) / 5.090 = 8.62 -> 8, 8 x 8 / 59.088 ms = 1083. */
static void test_table2_analytics(void **state)
{
  (void)state;
  CsBatchingBound s = cs_batching_staggered(1.053, 5.072, 25, 8);
  CsBatchingBound u = cs_batching_uncoordinated(1.053, 5.072, 25, 8);
  assert_int_equal(s.batch, 16);
  assert_int_equal((int)lround(s.throughput_rps), 5839);
  assert_int_equal(u.batch, 7);
  assert_int_equal((int)lround(u.throughput_rps), 4501);
  s = cs_batching_staggered(5.090, 18.368, 70, 8);
  assert_int_equal(s.batch, 8);
  assert_int_equal((int)lround(s.throughput_rps), 1083);
  u = cs_batching_uncoordinated(5.090, 18.368, 70, 8);
  assert_int_equal(u.batch, 3);
  assert_int_equal((int)lround(u.throughput_rps), 713);
  /* SLO/2 = 5 ms leaves nothing after beta = 5 ms: no batch fits. */
  u = cs_batching_uncoordinated(1.0, 5.0, 10, 8);
  assert_int_equal(u.batch, 0);
  assert_float_equal(u.throughput_rps, 0.0, 0.0);
}

/* Figure 1 and section 3.5 on the ResNet50 set-up: deferred batches are larger
 * than eager ones at every load (at least 3x at 1500 req/s); with lowest-id GPU
 * choice the busy time sits on the low ids and the idle fraction follows the
 * load, while eager keeps every GPU busy with small batches. */
static CsResults *run_resnet(const char *dir, const char *policy, double rate)
{
  char *json = g_strdup_printf(
    "{\"seed\": 5, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 8, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"%s\", \"d_ctrl_us\": 0, \"d_data_us\": 0, \"d_resp_ms\": 0},"
    " \"clients\": [{\"model\": \"a\", \"rate\": %g, \"slo_ms\": 25, \"duration_s\": 20, \"warmup_s\": 1}]}",
    policy, rate);
  CsScenario *sc = test_scenario(dir, json);
  CsResults *r = test_run(sc, NULL);
  cs_scenario_free(sc);
  g_free(json);
  return r;
}

static void test_batch_size_and_gpu_use(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.053, 5.072);
  const double loads[] = { 1500, 2500, 4000 };
  for (int i = 0; i < 3; i++) {
    CsResults *d = run_resnet(dir, "symphony", loads[i]);
    CsResults *e = run_resnet(dir, "eager", loads[i]);
    double bd = cs_results_model(d, 0)->mean_batch, be = cs_results_model(e, 0)->mean_batch;
    double busy_d = 0, busy_e = 0, min_e = 1;
    for (int g = 0; g < 8; g++) {
      busy_d += cs_results_gpu_busy_fraction(d, g) / 8;
      busy_e += cs_results_gpu_busy_fraction(e, g) / 8;
      min_e = MIN(min_e, cs_results_gpu_busy_fraction(e, g));
    }
    double expect_idle = 1.0 - loads[i] / 5839.0;
    print_message("%.0f req/s: mean batch deferred %.2f eager %.2f; idle fraction deferred %.3f "
                  "(1 - load/goodput %.3f), eager %.3f; gpu busy deferred 0:%.2f 7:%.2f\n",
                  loads[i], bd, be, 1 - busy_d, expect_idle, 1 - busy_e,
                  cs_results_gpu_busy_fraction(d, 0), cs_results_gpu_busy_fraction(d, 7));
    assert_true(bd > be);
    if (i == 0)
      assert_true(bd >= 3 * be);
    assert_true(cs_results_model(d, 0)->bad_rate < 0.01);
    /* Load-proportional use: idle fraction within 0.1 of 1 - load/goodput. */
    assert_true(fabs((1 - busy_d) - expect_idle) < 0.1);
    /* Lowest id first: GPU 0 works more than GPU 7. */
    assert_true(cs_results_gpu_busy_fraction(d, 0) > cs_results_gpu_busy_fraction(d, 7) + 0.2);
    /* Eager spreads small batches over every GPU. */
    assert_true(min_e > 0.05);
    assert_true(busy_e > busy_d);
    /* GPUs used over time (1 s bins): Symphony leaves GPUs unused at low load,
     * eager touches every GPU; the advice to remove GPUs follows. */
    if (i == 0) {
      char *jd = cs_results_to_json(d), *je = cs_results_to_json(e);
      cJSON *sd = cJSON_Parse(jd), *se = cJSON_Parse(je);
      const cJSON *ad = cJSON_GetObjectItem(sd, "autoscaling"), *ae = cJSON_GetObjectItem(se, "autoscaling");
      double used_d = cJSON_GetObjectItem(ad, "gpus_used_max")->valuedouble;
      double used_e = cJSON_GetObjectItem(ae, "gpus_used_mean")->valuedouble;
      double remove_d = cJSON_GetObjectItem(ad, "advice_remove_gpus")->valuedouble;
      print_message("gpus used: deferred max %.0f, eager mean %.2f; advice to remove %.2f GPUs\n",
                    used_d, used_e, remove_d);
      assert_true(used_d <= 6);
      /* Every whole 1 s bin uses all 8 GPUs; the last bin holds only the
       * drain after the window (4 ms here), where a GPU with nothing left
       * to finish counts as unused: at most that bin may fall short. (A
       * fixed 7.9 held for the draws of stream version 1 by luck: the drain
       * bin then lacked at most one GPU, with version 2 up to three.) */
      double bins = ceil(cJSON_GetObjectItem(se, "simulated_time_s")->valuedouble /
                         cJSON_GetObjectItem(ae, "timeseries_bin_s")->valuedouble);
      assert_true(used_e * bins >= 8 * (bins - 1) - 1e-9);
      assert_float_equal(remove_d, 8 * (1 - busy_d), 1e-9);
      cJSON_Delete(sd);
      cJSON_Delete(se);
      g_free(jd);
      g_free(je);
    }
    cs_results_free(d);
    cs_results_free(e);
  }
  test_dir_remove(dir);
}

/* Symphony's goodput (highest Poisson load with p99 <= SLO) against Table 2:
 * at least 80 % of the analytic staggered bound, and not below eager's. */
static double search_goodput(const char *dir, const char *policy, double slo_ms)
{
  char *json = g_strdup_printf(
    "{\"seed\": 3, \"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 8, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"%s\", \"d_ctrl_us\": 0, \"d_data_us\": 0, \"d_resp_ms\": 0},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": %g, \"duration_s\": 10, \"warmup_s\": 1}]}",
    policy, slo_ms);
  CsScenario *sc = test_scenario(dir, json);
  CsGoodputSearchOptions o;
  cs_goodput_search_options_init(&o);
  o.max_multiplier = 128;
  CsGoodputProbe best;
  GError *err = NULL;
  if (!cs_goodput_search(sc, &o, NULL, NULL, NULL, &best, &err))
    fail_msg("search: %s", err->message);
  cs_scenario_free(sc);
  g_free(json);
  return best.offered_rps;
}

static void test_goodput_against_table2(void **state)
{
  (void)state;
  struct {
    const char *name;
    double alpha, beta, slo, analytic, paper;
  } cases[] = {
    { "ResNet50", 1.053, 5.072, 25, 5839, 5264 },
    { "InceptionResNetV2", 5.090, 18.368, 70, 1083, 926 },
  };
  for (int i = 0; i < 2; i++) {
    char *dir = test_dir_with_profile(cases[i].alpha, cases[i].beta);
    double sym = search_goodput(dir, "symphony", cases[i].slo);
    double eager = search_goodput(dir, "eager", cases[i].slo);
    print_message("%s: goodput symphony %.0f req/s, eager %.0f req/s; analytic staggered %.0f, "
                  "paper measured %.0f\n",
                  cases[i].name, sym, eager, cases[i].analytic, cases[i].paper);
    /* The paper's measured goodput (Table 2), within 5 %. */
    assert_true(fabs(sym - cases[i].paper) <= 0.05 * cases[i].paper);
    assert_true(sym <= 1.02 * cases[i].analytic); /* the bound is a bound */
    assert_true(sym >= 0.98 * eager);
    test_dir_remove(dir);
  }
}

/* Figure 6a: 10 models of one profile (alpha 1 ms, beta 1..15 ms), SLO =
 * 2 l(8), 32 GPUs, Poisson. Deferred goodput is never below 0.95x eager's,
 * and its advantage grows with beta/alpha (the batching effect). The full
 * grid is bench/symphony_fig6a.py. */
static double fig6a_goodput(double beta, const char *policy)
{
  char *dir = g_dir_make_tmp("cs-fig6a-XXXXXX", NULL);
  GString *prof = g_string_new(
    "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"synthetic\","
    " \"gpu_types\": [{\"name\": \"gpu\", \"description\": \"synthetic\", \"sm_count\": 80, \"memory_bytes\": 0}],"
    " \"models\": [");
  GString *clients = g_string_new(NULL);
  for (int i = 0; i < 10; i++) {
    g_string_append_printf(prof, "%s{\"gpu\": \"gpu\", \"model\": \"m%d\", \"input_bytes\": 0, "
                           "\"output_bytes\": 0, \"linear\": {\"alpha_ms\": 1, \"beta_ms\": %g}}",
                           i ? ", " : "", i, beta);
    g_string_append_printf(clients, "%s{\"model\": \"m%d\", \"rate\": 100, \"slo_ms\": %g, "
                           "\"duration_s\": 5, \"warmup_s\": 1}", i ? ", " : "", i, 2 * (8 + beta));
  }
  g_string_append(prof, "]}");
  char *ppath = g_build_filename(dir, "fig6a.json", NULL);
  assert_true(g_file_set_contents(ppath, prof->str, -1, NULL));
  char *json = g_strdup_printf(
    "{\"seed\": 1, \"profiles\": [\"fig6a.json\"], \"cluster\": {\"gpus\": 32, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"%s\", \"d_ctrl_us\": 0, \"d_data_us\": 0, \"d_resp_ms\": 0},"
    " \"clients\": [%s]}", policy, clients->str);
  CsScenario *sc = test_scenario(dir, json);
  CsGoodputSearchOptions o;
  cs_goodput_search_options_init(&o);
  o.max_multiplier = 256;
  CsGoodputProbe best;
  GError *err = NULL;
  if (!cs_goodput_search(sc, &o, NULL, NULL, NULL, &best, &err))
    fail_msg("search: %s", err->message);
  cs_scenario_free(sc);
  g_free(json);
  g_free(ppath);
  g_string_free(prof, TRUE);
  g_string_free(clients, TRUE);
  test_dir_remove(dir);
  return best.offered_rps;
}

static void test_fig6a_trend(void **state)
{
  (void)state;
  const double betas[] = { 1, 8, 15 };
  double ratio[3];
  for (int i = 0; i < 3; i++) {
    double d = fig6a_goodput(betas[i], "symphony"), e = fig6a_goodput(betas[i], "eager");
    ratio[i] = e / d;
    print_message("beta/alpha %2.0f: deferred %.0f req/s, eager %.0f req/s, eager/deferred %.1f %%\n",
                  betas[i], d, e, 100 * ratio[i]);
    assert_true(d >= 0.95 * e);
  }
  assert_true(ratio[2] < ratio[1] && ratio[1] < ratio[0]);
  assert_true(ratio[2] < 0.9); /* a clear advantage once batching pays */
}


/* ---- budgets from the network (docs/dispatch.md, "Budgets") ------------------ */

/* Writes "net.json" into dir: latency_ms(x) = 0.0005 * x + c_ms, one segment. */
static void write_linear_curve(const char *dir, double c_ms)
{
  char *json = g_strdup_printf(
    "{\"format\": \"clustersim-network\", \"version\": 1, \"source\": \"test\","
    " \"segments\": [{\"a\": 0.0005, \"b\": 1, \"c_ms\": %.17g}]}", c_ms);
  char *path = g_build_filename(dir, "net.json", NULL);
  assert_true(g_file_set_contents(path, json, -1, NULL));
  g_free(path);
  g_free(json);
}

typedef struct {
  CsRequestRecord rec[8];
  int n;
} Records;

static void keep_record(const CsRequestRecord *rec, void *user)
{
  Records *t = user;
  assert_true(rec->id < 8);
  t->rec[rec->id] = *rec;
  t->rec[rec->id].model = NULL; /* not owned */
  t->n++;
}

static int count_warnings(const CsResults *r, const char *code)
{
  int n = 0;
  for (int i = 0; i < cs_results_n_warnings(r); i++)
    n += strcmp(cs_results_warning(r, i)->code, code) == 0;
  return n;
}

/* Four requests at 0, 1, 2, 3 ms of model "a" (l(b) = b + 5 ms, 1000 bytes in,
 * 100 bytes out), SLO 15 ms, one GPU, network 0.2 ms + 0.5 us per byte,
 * default delays: d_ctrl = 0.1 ms, transfer(k) = 0.2 + 0.5 k ms, so
 * delay(k) = 0.3 + 0.5 k ms; resp(k) = 0.2 + 0.05 k ms.
 *
 * symphony (frontrun exec = max(now + delay(bs), due - resp(bs+1) - l(bs+1))):
 *  t=0  R1: bs 1, exec = max(0.8, 15 - 0.30 - 7) = 7.7, timer at 7.7 - 0.8 = 6.9
 *  t=1  R2: bs 2, exec = max(2.3, 15 - 0.35 - 8) = 6.65, timer at 5.35
 *  t=2  R3: bs 3, exec = max(3.8, 15 - 0.40 - 9) = 5.6, timer at 3.8
 *  t=3  R4: bs 4 (done 3 + 2.3 + 9 + 0.4 = 14.7 <= 15), exec = max(5.3,
 *       15 - 0.45 - 10 = 4.55) = 5.3, timer at 5.3 - 2.3 = 3.0: dispatched now.
 *  The batch reaches the node at 3 + 2.2 = 5.2, starts at exec 5.3 (d_ctrl is
 *  the margin), ends at 14.3, its result is back at 14.3 + 0.4 = 14.7 <= 15.
 * eager (exec = earliest):
 *  t=0  R1: exec 0.8, dispatched at 0, node 0.7, starts 0.8, ends 6.8, back 7.05.
 *  t=1  R2: exec 1.8 but the GPU is believed busy until 6.8: waits; GPU timer
 *       at 6.8 - delay(1) = 6.0; R3 (t=2) makes it 6.8 - delay(2) = 5.5, R4
 *       (t=3, bs 3: done 3 + 1.8 + 8 + 0.35 = 13.15 <= 16) 6.8 - delay(3) = 5.0.
 *  t=5  grant: bs 3 (done max(6.8, 6.8) + 8 + 0.35 = 15.15 <= R2's 16), exec
 *       6.8; node 5 + 1.7 = 6.7, starts 6.8, ends 14.8, back 15.15. */
static void test_budget_timeline(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 5.0);
  write_linear_curve(dir, 0.2);
  const char *policies[] = { "symphony", "eager" };
  for (int p = 0; p < 2; p++) {
    char *json = g_strdup_printf(
      "{\"profiles\": [\"synthetic.json\"], \"network\": {\"curve\": \"net.json\"},"
      " \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"}, \"dispatch\": {\"policy\": \"%s\"},"
      " \"clients\": [{\"model\": \"a\", \"slo_ms\": 15, \"output_bytes\": 100,"
      " \"arrival\": {\"process\": \"times\", \"times_ms\": [0, 1, 2, 3]}}]}",
      policies[p]);
    CsScenario *sc = test_scenario(dir, json);
    Records t = { 0 };
    CsRunOptions opt;
    cs_run_options_init(&opt);
    opt.on_request = keep_record;
    opt.user_data = &t;
    CsResults *r = test_run(sc, &opt);
    assert_int_equal(t.n, 4);
    assert_int_equal(count_warnings(r, "budget_network_mismatch"), 0);
    assert_int_equal(cs_results_model(r, 0)->good, 4);
    if (p == 0) {
      for (int i = 0; i < 4; i++) {
        assert_int_equal(t.rec[i].batch_size, 4);
        assert_int_equal(t.rec[i].dispatch_ns, 3000000);
        assert_int_equal(t.rec[i].node_ns, 5200000);
        assert_int_equal(t.rec[i].exec_start_ns, 5300000);
        assert_int_equal(t.rec[i].exec_end_ns, 14300000);
        assert_int_equal(t.rec[i].receive_ns, 14700000);
      }
    } else {
      assert_int_equal(t.rec[0].batch_size, 1);
      assert_int_equal(t.rec[0].dispatch_ns, 0);
      assert_int_equal(t.rec[0].node_ns, 700000);
      assert_int_equal(t.rec[0].exec_start_ns, 800000);
      assert_int_equal(t.rec[0].receive_ns, 7050000);
      for (int i = 1; i < 4; i++) {
        assert_int_equal(t.rec[i].batch_size, 3);
        assert_int_equal(t.rec[i].dispatch_ns, 5000000);
        assert_int_equal(t.rec[i].node_ns, 6700000);
        assert_int_equal(t.rec[i].exec_start_ns, 6800000);
        assert_int_equal(t.rec[i].exec_end_ns, 14800000);
        assert_int_equal(t.rec[i].receive_ns, 15150000);
      }
    }
    cs_results_free(r);
    cs_scenario_free(sc);
    g_free(json);
  }
  test_dir_remove(dir);
}

/* Compiles a one-model scenario (model "a", l(b) = b + 5 ms, 1000 bytes in,
 * 10 out, SLO 15 ms, 2 GPUs) with the given network and dispatch fields;
 * returns its "budget_network_mismatch" warnings and the dispatch description
 * (cJSON_Delete) in *desc if desc. */
static int budget_warnings(const char *dir, const char *network, const char *fields,
                           cJSON **desc)
{
  char *json = g_strdup_printf(
    "{\"profiles\": [\"synthetic.json\"], \"network\": %s,"
    " \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"symphony\"%s%s},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 15, \"requests\": 10}]}",
    network, *fields ? ", " : "", fields);
  CsScenario *sc = test_scenario(dir, json);
  GError *err = NULL;
  CsConfig *cfg = cs_scenario_compile(sc, &err);
  if (!cfg)
    fail_msg("compile: %s", err->message);
  int n = 0;
  for (int i = 0; i < cs_warning_list_len(cfg->warnings); i++) {
    const CsWarning *w = cs_warning_list_get(cfg->warnings, i);
    if (strcmp(w->code, "budget_network_mismatch") == 0) {
      assert_string_equal(w->model, "a");
      n++;
    }
  }
  if (desc) {
    char *text = cs_dispatch_describe_json(cfg->dispatch, cfg->dispatch_params);
    *desc = cJSON_Parse(text);
    g_free(text);
  }
  cs_config_free(cfg);
  cs_scenario_free(sc);
  g_free(json);
  return n;
}

static double budget_field(const cJSON *desc, const char *key)
{
  const cJSON *b = cJSON_GetArrayItem(cJSON_GetObjectItem(desc, "budgets"), 0);
  const cJSON *v = cJSON_GetObjectItem(b, key);
  assert_non_null(v);
  return v->valuedouble;
}

/* The warning appears exactly when an explicit d_data_us or d_resp_ms is
 * more than 10 % off the simulated transfer at batch 1 or at the largest
 * batch within the SLO, and never for derived budgets. */
static void test_budget_mismatch_warning(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 5.0);
  /* 0.5 ms per 1000-byte request, nothing fixed: transfer(k) = 0.5 k ms, so a
   * per-request d_data can match at every batch size. Largest batch within
   * 15 ms: 0.1 + 0.5 k + (k + 5) + 0.005 k <= 15, k = 6. */
  write_linear_curve(dir, 0.0);
  const char *lin = "{\"curve\": \"net.json\"}";
  cJSON *desc = NULL;
  assert_int_equal(budget_warnings(dir, lin, "", &desc), 0);
  assert_string_equal(cJSON_GetObjectItem(desc, "d_data_source")->valuestring, "network");
  assert_string_equal(cJSON_GetObjectItem(desc, "d_resp_source")->valuestring, "network");
  assert_null(cJSON_GetObjectItem(desc, "d_data_us"));
  assert_float_equal(budget_field(desc, "largest_batch"), 6, 0);
  assert_float_equal(budget_field(desc, "transfer_us_batch_1"), 500, 1e-9);
  assert_float_equal(budget_field(desc, "transfer_us_largest_batch"), 3000, 1e-9);
  assert_float_equal(budget_field(desc, "response_ms_batch_1"), 0.005, 1e-9);
  assert_float_equal(budget_field(desc, "response_ms_largest_batch"), 0.030, 1e-9);
  cJSON_Delete(desc);
  const struct {
    const char *fields;
    int warnings;
  } lin_cases[] = {
    { "\"d_data_us\": 500", 0 }, { "\"d_data_us\": 540", 0 }, { "\"d_data_us\": 460", 0 },
    { "\"d_data_us\": 560", 1 }, { "\"d_data_us\": 440", 1 }, { "\"d_data_us\": 50", 1 },
    { "\"d_ctrl_us\": 0", 0 },   /* d_ctrl is a margin, never compared */
    { "\"d_data_us\": 50, \"d_resp_ms\": 2", 2 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(lin_cases); i++) {
    int n = budget_warnings(dir, lin, lin_cases[i].fields, &desc);
    if (n != lin_cases[i].warnings)
      fail_msg("%s: %d warnings, expected %d", lin_cases[i].fields, n, lin_cases[i].warnings);
    if (strstr(lin_cases[i].fields, "d_data_us")) {
      assert_string_equal(cJSON_GetObjectItem(desc, "d_data_source")->valuestring, "explicit");
      /* The comparison points stay where the network puts them. */
      assert_float_equal(budget_field(desc, "largest_batch"), 6, 0);
      assert_float_equal(budget_field(desc, "network_transfer_us_largest_batch"), 3000, 1e-9);
    }
    cJSON_Delete(desc);
  }
  /* 1 ms for every transfer: a constant d_resp can match it. */
  const char *con = "{\"constant_ms\": 1}";
  const struct {
    const char *fields;
    int warnings;
  } con_cases[] = {
    { "", 0 },
    { "\"d_resp_ms\": 1", 0 },    { "\"d_resp_ms\": 1.08", 0 }, { "\"d_resp_ms\": 0.92", 0 },
    { "\"d_resp_ms\": 1.12", 1 }, { "\"d_resp_ms\": 0.88", 1 }, { "\"d_resp_ms\": 2", 1 },
    /* d_data x k cannot be 1 ms both for 1 and for the largest batch (7 here:
     * 0.1 + 1 + (k + 5) + 1 <= 15) */
    { "\"d_data_us\": 1000", 1 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(con_cases); i++) {
    int n = budget_warnings(dir, con, con_cases[i].fields, NULL);
    if (n != con_cases[i].warnings)
      fail_msg("constant: %s: %d warnings, expected %d", con_cases[i].fields, n,
               con_cases[i].warnings);
  }
  /* A zero network: zero delays agree with it, the old defaults do not. */
  assert_int_equal(budget_warnings(dir, "\"zero\"", "", &desc), 0);
  assert_float_equal(budget_field(desc, "transfer_us_largest_batch"), 0, 0);
  assert_float_equal(budget_field(desc, "response_ms_largest_batch"), 0, 0);
  cJSON_Delete(desc);
  assert_int_equal(budget_warnings(dir, "\"zero\"", "\"d_data_us\": 0, \"d_resp_ms\": 0", NULL), 0);
  assert_int_equal(budget_warnings(dir, "\"zero\"", "\"d_data_us\": 50, \"d_resp_ms\": 2", NULL), 2);
  test_dir_remove(dir);
}

/* The acceptance of issue 9 point 2: the shipped GCP curve, default delays,
 * resnet50 and inception_v3 (v100_thesis.json) at 1100 req/s each on 4 V100s
 * (about 55 % of the load at which eager collapses, 2000-2400 req/s each):
 * Symphony's bad rate is within 1 point of eager's. With the former defaults
 * (d_data_us 50, d_resp_ms 2) the scheduler budgets 50 us for a transfer the
 * network makes 0.85 ms per request and Symphony was about 50 % bad. */
static CsResults *run_gcp(const char *policy, const char *delays)
{
  const char *root = g_getenv("CS_SOURCE_ROOT");
  if (!root)
    fail_msg("CS_SOURCE_ROOT is not set (run through meson test)");
  char *dir = g_build_filename(root, "data", "profiles", NULL);
  char *json = g_strdup_printf(
    "{\"seed\": 7, \"profiles\": [\"v100_thesis.json\"],"
    " \"network\": {\"curve\": \"network/gcp_n1_standard_16.json\"},"
    " \"cluster\": {\"gpus\": 4, \"gpu_type\": \"v100\"},"
    " \"dispatch\": {\"policy\": \"%s\"%s},"
    " \"clients\": [{\"model\": \"resnet50\", \"rate\": 1100, \"slo_ms\": 100, \"duration_s\": 20, \"warmup_s\": 2},"
    "  {\"model\": \"inception_v3\", \"rate\": 1100, \"slo_ms\": 100, \"duration_s\": 20, \"warmup_s\": 2}]}",
    policy, delays);
  CsScenario *sc = test_scenario(dir, json);
  CsResults *r = test_run(sc, NULL);
  cs_scenario_free(sc);
  g_free(json);
  g_free(dir);
  return r;
}

static void test_gcp_symphony_vs_eager(void **state)
{
  (void)state;
  CsResults *sym = run_gcp("symphony", "");
  CsResults *eager = run_gcp("eager", "");
  CsResults *old = run_gcp("symphony", ", \"d_data_us\": 50, \"d_resp_ms\": 2");
  for (int m = 0; m < 2; m++) {
    double bs = cs_results_model(sym, m)->bad_rate, be = cs_results_model(eager, m)->bad_rate;
    double bo = cs_results_model(old, m)->bad_rate;
    print_message("%s: bad rate symphony %.2f %%, eager %.2f %%, symphony with d_data_us 50 "
                  "and d_resp_ms 2: %.2f %%\n",
                  m == 0 ? "resnet50" : "inception_v3", 100 * bs, 100 * be, 100 * bo);
    assert_true(fabs(bs - be) <= 0.01);
    assert_true(bo > be + 0.10); /* the former defaults fail it */
  }
  assert_int_equal(count_warnings(sym, "budget_network_mismatch"), 0);
  assert_int_equal(count_warnings(eager, "budget_network_mismatch"), 0);
  assert_int_equal(count_warnings(old, "budget_network_mismatch"), 4); /* 2 models x 2 */
  cs_results_free(sym);
  cs_results_free(eager);
  cs_results_free(old);
}

/* Every stage time of every request, by id. */
typedef struct {
  int64_t dispatch[8], start[8], end[8], receive[8];
  int model[8];
  int n;
} Stages;

static void record_stages(const CsRequestRecord *rec, void *user)
{
  Stages *s = user;
  assert_true(rec->id < 8 && rec->served);
  s->dispatch[rec->id] = rec->dispatch_ns;
  s->start[rec->id] = rec->exec_start_ns;
  s->end[rec->id] = rec->exec_end_ns;
  s->receive[rec->id] = rec->receive_ns;
  s->model[rec->id] = rec->client;
  s->n++;
}

static CsResults *run_stages(const char *dir, const char *json, Stages *s)
{
  CsScenario *sc = test_scenario(dir, json);
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = record_stages;
  opt.user_data = s;
  CsResults *r = test_run(sc, &opt);
  cs_scenario_free(sc);
  return r;
}

#define MS(x) ((int64_t)llround((x) * 1e6))

/* Explicit non-zero delays: d_ctrl 0.5 ms, d_data 0.25 ms per request,
 * d_resp 1 ms, so delay(k) = 0.5 + 0.25 k; the simulated network takes 1 ms
 * each way. One GPU, l(b) = b + 5 ms, SLO 30 ms, requests at 0, 1, 2 ms.
 * Deadline dl = send + 30 - 1 = 29 ms for the head.
 * Symphony: after the third request bs = 3, exec = max(2 + 1.25, dl - l(4))
 * = max(3.25, 20) = 20; the model timer fires at exec - delay(3) = 18.75: the
 * batch leaves then, reaches the node at 19.75, may not start before 20, ends
 * at 28 and is back at 29.
 * Eager: request 1 leaves at 0 (exec = delay(1) = 0.75; the scheduler
 * believes the GPU busy until 0.75 + l(1) = 6.75), reaches the node at 1,
 * runs 1..7, back at 8. Request 2 waits for the GPU; with request 3 the
 * waiting candidate is bs = 2, and the GPU timer fires at 6.75 - delay(2) =
 * 5.75: the batch leaves then, reaches the node at 6.75, but the GPU runs
 * request 1 until 7 (the network was slower than the budget): it runs 7..14,
 * back at 15. */
static void test_explicit_delays_timeline(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 5.0);
  const char *tmpl =
    "{\"profiles\": [\"synthetic.json\"], \"network\": {\"constant_ms\": 1},"
    " \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"%s\", \"d_ctrl_us\": 500, \"d_data_us\": 250, \"d_resp_ms\": 1},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 30, \"arrival\": {\"process\": \"times\","
    "   \"times_ms\": [0, 1, 2]}}]}";
  char *json = g_strdup_printf(tmpl, "symphony");
  Stages s = { 0 };
  CsResults *r = run_stages(dir, json, &s);
  assert_int_equal(s.n, 3);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(s.dispatch[i], MS(18.75));
    assert_int_equal(s.start[i], MS(20));
    assert_int_equal(s.end[i], MS(28));
    assert_int_equal(s.receive[i], MS(29));
  }
  assert_float_equal(cs_results_model(r, 0)->bad_rate, 0.0, 0.0);
  cs_results_free(r);
  g_free(json);

  json = g_strdup_printf(tmpl, "eager");
  memset(&s, 0, sizeof s);
  r = run_stages(dir, json, &s);
  assert_int_equal(s.n, 3);
  assert_int_equal(s.dispatch[0], 0);
  assert_int_equal(s.start[0], MS(1));
  assert_int_equal(s.end[0], MS(7));
  assert_int_equal(s.receive[0], MS(8));
  for (int i = 1; i < 3; i++) {
    assert_int_equal(s.dispatch[i], MS(5.75));
    assert_int_equal(s.start[i], MS(7));
    assert_int_equal(s.end[i], MS(14));
    assert_int_equal(s.receive[i], MS(15));
  }
  cs_results_free(r);
  g_free(json);
  test_dir_remove(dir);
}

/* Two candidates wait for the one GPU with the same latest time: the GPU
 * timer grants the first model in client order. Models b and c: l(k) = k + 4
 * ms, SLO 100, no delays. b's request at 0 runs 0..5; at 1 ms c and b each
 * get a request (latest = 1 + 100 - 5 = 96 for both) and wait; at 5 the GPU
 * goes to b (5..10), then to c (10..15). Ids: b@0 is 0, c@1 is 1 (its first
 * arrival was scheduled at setup), b@1 is 2. */
static void test_gpu_timer_latest_tie(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(1.0, 5.0);
  Stages s = { 0 };
  CsResults *r = run_stages(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"eager\", \"d_ctrl_us\": 0, \"d_data_us\": 0, \"d_resp_ms\": 0},"
    " \"clients\": [{\"model\": \"b\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [0, 1]}},"
    "  {\"model\": \"c\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [1]}}]}",
    &s);
  assert_int_equal(s.n, 3);
  assert_int_equal(s.model[0], 0);
  assert_int_equal(s.start[0], 0);
  assert_int_equal(s.model[2], 0);
  assert_int_equal(s.dispatch[2], MS(5));
  assert_int_equal(s.start[2], MS(5));
  assert_int_equal(s.end[2], MS(10));
  assert_int_equal(s.model[1], 1);
  assert_int_equal(s.dispatch[1], MS(10));
  assert_int_equal(s.start[1], MS(10));
  assert_int_equal(s.end[1], MS(15));
  cs_results_free(r);
  test_dir_remove(dir);
}

/* The timeout baseline never waits past a batch's latest start: timeout_ms
 * 100, SLO 50 ms, l(1) = 10 ms, one request at 0: latest = 50 - 10 = 40 ms,
 * so it starts at 40 and is back at 50 (good), not held to 100 and dropped. */
static void test_timeout_clamped_to_latest(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 10.0);
  Stages s = { 0 };
  CsResults *r = run_stages(dir,
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"timeout\", \"timeout_ms\": 100, \"d_ctrl_us\": 0, \"d_data_us\": 0,"
    "   \"d_resp_ms\": 0},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 50, \"arrival\": {\"process\": \"times\", \"times_ms\": [0]}}]}",
    &s);
  assert_int_equal(s.n, 1);
  assert_int_equal(s.start[0], MS(40));
  assert_int_equal(s.receive[0], MS(50));
  assert_int_equal(cs_results_model(r, 0)->good, 1);
  cs_results_free(r);
  test_dir_remove(dir);
}

/* GPU choice at the boundary. eager, 2 GPUs, max_batch 1, l(1) = 10 ms, a
 * request every 10 ms: each arrives exactly when GPU 0 frees, and
 * lowest_id takes a GPU free *by* exec, so GPU 0 runs all 20 and GPU 1 none.
 * earliest_free with both GPUs free takes the lowest id too (Appendix D). */
static void test_gpu_choice_boundaries(void **state)
{
  (void)state;
  char *dir = test_dir_with_profile(0.0, 10.0);
  const char *tmpl =
    "{\"profiles\": [\"synthetic.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"eager\", \"gpu_choice\": \"%s\", \"max_batch\": 1, \"d_ctrl_us\": 0,"
    "   \"d_data_us\": 0, \"d_resp_ms\": 0},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 100, \"arrival\": \"constant\","
    "   \"requests\": %d}]}";
  char *json = g_strdup_printf(tmpl, "lowest_id", 20);
  CsScenario *sc = test_scenario(dir, json);
  CsResults *r = test_run(sc, NULL);
  char *summary = cs_results_to_json(r);
  cJSON *doc = cJSON_Parse(summary);
  cJSON *gpus = cJSON_GetObjectItem(doc, "gpus");
  assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(gpus, 0), "batches")->valueint, 20);
  assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(gpus, 1), "batches")->valueint, 0);
  cJSON_Delete(doc);
  g_free(summary);
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(json);

  json = g_strdup_printf(tmpl, "earliest_free", 1);
  Stages st = { 0 };
  r = run_stages(dir, json, &st);
  assert_int_equal(st.n, 1);
  summary = cs_results_to_json(r);
  doc = cJSON_Parse(summary);
  gpus = cJSON_GetObjectItem(doc, "gpus");
  assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(gpus, 0), "batches")->valueint, 1);
  assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(gpus, 1), "batches")->valueint, 0);
  cJSON_Delete(doc);
  g_free(summary);
  cs_results_free(r);
  g_free(json);
  test_dir_remove(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_symphony_example_first_batch),
    cmocka_unit_test(test_symphony_example_recovers),
    cmocka_unit_test(test_table2_analytics),
    cmocka_unit_test(test_batch_size_and_gpu_use),
    cmocka_unit_test(test_goodput_against_table2),
    cmocka_unit_test(test_fig6a_trend),
    cmocka_unit_test(test_budget_timeline),
    cmocka_unit_test(test_budget_mismatch_warning),
    cmocka_unit_test(test_gcp_symphony_vs_eager),
    cmocka_unit_test(test_explicit_delays_timeline),
    cmocka_unit_test(test_gpu_timer_latest_tie),
    cmocka_unit_test(test_timeout_clamped_to_latest),
    cmocka_unit_test(test_gpu_choice_boundaries),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
