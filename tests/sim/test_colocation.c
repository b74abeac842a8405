/* Co-location in the engine: time-slicing without MPS, processor sharing with
 * contention and interference under MPS (hand-computed), MPS shares, memory
 * checks and simulated memory failure. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "test_util.h"

/* Models a and b: 10 ms for a batch of 1, WSM 100 % (a batch fills the GPU),
 * Mreq 40 %; c: 10 ms, WSM 25 %, Mreq 40 %; d like c with Mreq 10 %; e like d
 * but 12 ms at batch 2 (a line of 2 ms per request plus 8 ms: at batch 1 a
 * fixed part phi = 0.8, where d's line through 0 gives phi = 0). */
static char *profile_dir(void)
{
  char *dir = g_dir_make_tmp("cs-coloc-XXXXXX", NULL);
  const char *json =
    "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"synthetic, for tests\","
    " \"gpu_types\": [{\"name\": \"gpu\", \"description\": \"test GPU\", \"sm_count\": 80, \"memory_bytes\": 17179869184}],"
    " \"models\": ["
    "  {\"gpu\": \"gpu\", \"model\": \"a\", \"input_bytes\": 0, \"output_bytes\": 0, \"batches\": ["
    "    {\"batch\": 1, \"latency_ms\": 10, \"mreq_pct\": 40, \"creq_pct\": {\"ao\": 100, \"wao\": 100, \"wsm\": 100}},"
    "    {\"batch\": 2, \"latency_ms\": 20, \"mreq_pct\": 40, \"creq_pct\": {\"ao\": 100, \"wao\": 100, \"wsm\": 100}}]},"
    "  {\"gpu\": \"gpu\", \"model\": \"b\", \"input_bytes\": 0, \"output_bytes\": 0, \"batches\": ["
    "    {\"batch\": 1, \"latency_ms\": 10, \"mreq_pct\": 40, \"creq_pct\": {\"ao\": 100, \"wao\": 100, \"wsm\": 100}},"
    "    {\"batch\": 2, \"latency_ms\": 20, \"mreq_pct\": 40, \"creq_pct\": {\"ao\": 100, \"wao\": 100, \"wsm\": 100}}]},"
    "  {\"gpu\": \"gpu\", \"model\": \"c\", \"input_bytes\": 0, \"output_bytes\": 0, \"batches\": ["
    "    {\"batch\": 1, \"latency_ms\": 10, \"mreq_pct\": 40, \"creq_pct\": {\"ao\": 25, \"wao\": 25, \"wsm\": 25}},"
    "    {\"batch\": 2, \"latency_ms\": 20, \"mreq_pct\": 40, \"creq_pct\": {\"ao\": 25, \"wao\": 25, \"wsm\": 25}}]},"
    "  {\"gpu\": \"gpu\", \"model\": \"d\", \"input_bytes\": 0, \"output_bytes\": 0, \"batches\": ["
    "    {\"batch\": 1, \"latency_ms\": 10, \"mreq_pct\": 10, \"creq_pct\": {\"ao\": 25, \"wao\": 25, \"wsm\": 25}},"
    "    {\"batch\": 2, \"latency_ms\": 20, \"mreq_pct\": 10, \"creq_pct\": {\"ao\": 25, \"wao\": 25, \"wsm\": 25}}]},"
    "  {\"gpu\": \"gpu\", \"model\": \"e\", \"input_bytes\": 0, \"output_bytes\": 0, \"batches\": ["
    "    {\"batch\": 1, \"latency_ms\": 10, \"mreq_pct\": 10, \"creq_pct\": {\"ao\": 25, \"wao\": 25, \"wsm\": 25}},"
    "    {\"batch\": 2, \"latency_ms\": 12, \"mreq_pct\": 10, \"creq_pct\": {\"ao\": 25, \"wao\": 25, \"wsm\": 25}}]}]}";
  char *p = g_build_filename(dir, "coloc.json", NULL);
  assert_true(g_file_set_contents(p, json, -1, NULL));
  g_free(p);
  return dir;
}

typedef struct {
  int64_t start[2], end[2]; /* per client: its single request's execution */
} Exec;

static void record(const CsRequestRecord *rec, void *user)
{
  Exec *x = user;
  x->start[rec->client] = rec->exec_start_ns;
  x->end[rec->client] = rec->exec_end_ns;
}

/* One request of each of two models at t = 0, both replicas on GPU 0. */
static Exec run_pair(const char *dir, const char *models[2], const char *cluster_extra,
                     const char *share0, const char *share1)
{
  char *json = g_strdup_printf(
    "{\"profiles\": [\"coloc.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"%s},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": ["
    "   {\"model\": \"%s\", \"gpu\": 0, \"batch\": 1%s}, {\"model\": \"%s\", \"gpu\": 0, \"batch\": 1%s}]},"
    " \"clients\": [{\"model\": \"%s\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [0]}},"
    "  {\"model\": \"%s\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [0]}}]}",
    cluster_extra, models[0], share0, models[1], share1, models[0], models[1]);
  CsScenario *sc = test_scenario(dir, json);
  Exec x = { { -1, -1 }, { -1, -1 } };
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = record;
  opt.user_data = &x;
  CsResults *r = test_run(sc, &opt);
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(json);
  return x;
}

static void test_time_slicing(void **state)
{
  (void)state;
  char *dir = profile_dir();
  const char *m[2] = { "a", "b" };
  Exec x = run_pair(dir, m, "", "", "");
  /* Without MPS the GPU takes turns in arrival order: a [0, 10), then b [10, 20). */
  assert_int_equal(x.start[0], 0);
  assert_int_equal(x.end[0], 10000000);
  assert_int_equal(x.start[1], 10000000);
  assert_int_equal(x.end[1], 20000000);
  test_dir_remove(dir);
}

static void test_processor_sharing(void **state)
{
  (void)state;
  char *dir = profile_dir();
  const char *m[2] = { "a", "b" };
  /* MPS, no shares: both start at 0; demands 1 + 1 = D = 2, and each slows
   * the other by the built-in interference model (no table; docs/gpu-model.md)
   * 1 + c b^x (4 s s)^z with c 0.08085, x 0.1395, z 0.4256, batch 1 and
   * s = 1 each: 1 + 0.08085 x 4^0.4256 = 1.1458534669: speed
   * 1 / (2 x 1.14585347), so 10 ms of isolated work ends at 22.9170693 ms,
   * rounded up to the ns. */
  Exec x = run_pair(dir, m, ", \"mps\": true", "", "");
  assert_int_equal(x.start[0], 0);
  assert_int_equal(x.start[1], 0);
  assert_int_equal(x.end[0], 22917070);
  assert_int_equal(x.end[1], 22917070);
  /* c and d need a quarter of the GPU each: D = 0.5, no contention; only
   * interference, with s = 0.25 each: 1 + 0.08085 x 0.25^0.4256 =
   * 1.0448170526, 10.4481705 ms each. */
  const char *mc[2] = { "c", "d" };
  x = run_pair(dir, mc, ", \"mps\": true", "", "");
  assert_int_equal(x.end[0], 10448171);
  assert_int_equal(x.end[1], 10448171);
  test_dir_remove(dir);
}

/* The interference model's victim term in the engine (docs/gpu-model.md):
 * e and d each take a quarter of the GPU (no shares, D = 0.5, no
 * contention), the file's fallback 0.1 x b^0 x (4 x 0.25 x 0.25)^0.5 x
 * max(phi, 0.05)^1 = 0.05 phi. Victim e (phi 0.8): excess 0.04; victim d
 * (phi 0, floored at 0.05): 0.0025. d ends at 10 x 1.0025 = 10.025 ms; e
 * has then done 10.025 / 1.04 = 9.6394231 ms of its 10, and runs the other
 * 0.3605769 ms alone: it ends at 10,385,577 ns (rounded up). Without the
 * term (fixed_exponent 0) both take 10 x 1.05 = 10.5 ms. */
static void test_victim_fixed_part(void **state)
{
  (void)state;
  char *dir = profile_dir();
  const char *fx =
    "{\"format\": \"clustersim-interference\", \"version\": 1, \"source\": \"synthetic, for tests\","
    " \"fallback\": {\"form\": \"batch_share\", \"c\": 0.1, \"batch_exponent\": 0,"
    " \"share_exponent\": 0.5, \"fixed_exponent\": %s}}";
  const char *m[2] = { "e", "d" };
  for (int with = 1; with >= 0; with--) {
    char *text = g_strdup_printf(fx, with ? "1" : "0");
    char *p = g_build_filename(dir, "fx.json", NULL);
    assert_true(g_file_set_contents(p, text, -1, NULL));
    g_free(p);
    g_free(text);
    Exec x = run_pair(dir, m, ", \"mps\": true, \"interference\": \"fx.json\"", "", "");
    assert_int_equal(x.start[0], 0);
    assert_int_equal(x.start[1], 0);
    assert_int_equal(x.end[1], with ? 10025000 : 10500000);
    assert_int_equal(x.end[0], with ? 10385577 : 10500000);
  }
  test_dir_remove(dir);
}

static void test_mps_share_cap(void **state)
{
  (void)state;
  char *dir = profile_dir();
  const char *m[2] = { "a", "c" };
  /* The default share rule: a on 50 % of the SMs, its latency all scalable
   * (f = alpha b / L = 10 ms x 1 / 10 ms = 1, no payload): ratio 1 + (1 -
   * 0.0989) x 1 x (1/0.5 - 1) = 1.9011, cap 1 / 1.9011; D = 0.5 + 0.25 < 1;
   * interference both ways with s_a = 0.5, s_c = 0.25: 1 + 0.08085 x
   * (4 x 0.125)^0.4256 = 1.0601951718. c ends first at 10.6019517 ms (up to
   * 10,601,952 ns); a's work done by then is 10.601952 / (1.9011 x
   * 1.06019517) = 5.2601127 ms, the other 4.7398873 ms take x 1.9011 =
   * 9.0109997 ms: a ends at 19,612,952 ns (each duration rounded up). */
  Exec x = run_pair(dir, m, ", \"mps\": true", ", \"mps_share\": 0.5", "");
  assert_int_equal(x.end[1], 10601952);
  assert_int_equal(x.end[0], 19612952);
  /* The power rule: cap (0.5 / 1)^1 = 0.5, the rest as above: a's work by
   * 10.601952 ms is 10.601952 x 0.5 / 1.06019517 = 5.0000001 ms, the other
   * 4.9999999 ms take 9.9999997 ms, up to 10 ms: a ends at 20,601,952 ns. */
  x = run_pair(dir, m, ", \"mps\": true, \"mps_share_rule\": \"power\"", ", \"mps_share\": 0.5", "");
  assert_int_equal(x.end[1], 10601952);
  assert_int_equal(x.end[0], 20601952);
  test_dir_remove(dir);
}

static void test_memory(void **state)
{
  (void)state;
  char *dir = profile_dir();
  /* Three replicas of 40 % on one GPU: 120 % does not fit. */
  const char *base =
    "{\"profiles\": [\"coloc.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"%s},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": ["
    "   {\"model\": \"a\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"b\", \"gpu\": 0, \"batch\": 1},"
    "   {\"model\": \"c\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"c\", \"gpu\": 1, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 10, \"slo_ms\": 100, \"requests\": 20},"
    "  {\"model\": \"b\", \"rate\": 10, \"slo_ms\": 100, \"requests\": 20},"
    "  {\"model\": \"c\", \"rate\": 10, \"slo_ms\": 100, \"requests\": 20, \"arrival\": \"constant\"}]}";
  char *json = g_strdup_printf(base, "");
  CsScenario *sc = test_scenario(dir, json);
  GError *err = NULL;
  assert_false(cs_scenario_validate(sc, &err));
  assert_non_null(strstr(err->message, "test.json: placement: gpu 0 (gpu) cannot hold its replicas: "
                                       "Mreq a batch 1 (40.00 %), b batch 1 (40.00 %), c batch 1 "
                                       "(40.00 %) sum to 120.00 %"));
  g_clear_error(&err);
  cs_scenario_free(sc);
  g_free(json);
  /* Simulated failure: c's replica on GPU 0 fails, so every other batch of c
   * (round-robin over its two replicas) fails: with max_wait 100 ms and 10 req/s
   * each batch holds one request, so 10 of c's 20 requests fail, visibly. */
  json = g_strdup_printf(base, ", \"memory_overflow\": \"fail_replicas\"");
  sc = test_scenario(dir, json);
  CsResults *r = test_run(sc, NULL);
  assert_int_equal(cs_results_model(r, 2)->failed, 10);
  assert_int_equal(cs_results_model(r, 2)->completed, 10);
  assert_int_equal(cs_results_model(r, 0)->failed, 0);
  char *summary = cs_results_to_json(r);
  assert_non_null(strstr(summary, "does not fit in gpu 0's memory"));
  g_free(summary);
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(json);
  test_dir_remove(dir);
}

typedef struct {
  int n[2];
  int64_t end[2][4]; /* per client, in completion order */
} Ends;

static void record_ends(const CsRequestRecord *rec, void *user)
{
  Ends *x = user;
  if (rec->client < 2 && x->n[rec->client] < 4)
    x->end[rec->client][x->n[rec->client]++] = rec->exec_end_ns;
}

/* MIG: one GPU split into two halves. Without a measured table, the MIG
 * rule: a batch b costs what b / f^kappa costs on the whole GPU (mig_table.h),
 * whatever the model's demand; a and d are both 10 ms per request, so each
 * takes 10 ms x 2^0.8614 = 18.168005 ms (rounded up to the ns) on its half.
 * Instances do not interfere, even with MPS on. Two replicas of d at once on
 * one instance: each costs what a batch of 2 costs there, L(2 x 2^0.8614) /
 * L(2^0.8614) = 2 (d is proportional in batch), so both end at 2 x
 * 18168005 ns (test_mig_measured: the same with a measured table). Memory:
 * an instance holds half the GPU's. */
static void test_mig(void **state)
{
  (void)state;
  char *dir = profile_dir();
  const char *tmpl =
    "{\"profiles\": [\"coloc.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"mps\": true,"
    "   \"mig\": [{\"sm_fraction\": 0.5, \"memory_fraction\": 0.5}, {\"sm_fraction\": 0.5, \"memory_fraction\": 0.5}]},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [%s]},"
    " \"clients\": [{\"model\": \"a\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [0]}},"
    "  {\"model\": \"d\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [0]}}]}";
  char *json = g_strdup_printf(tmpl, "{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"d\", \"gpu\": 1, \"batch\": 1}");
  CsScenario *sc = test_scenario(dir, json);
  Exec x = { { -1, -1 }, { -1, -1 } };
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = record;
  opt.user_data = &x;
  CsResults *r = test_run(sc, &opt);
  assert_int_equal(x.end[0], 18168005);
  assert_int_equal(x.end[1], 18168005);
  char *summary = cs_results_to_json(r);
  assert_non_null(strstr(summary, "\"mig_instance\":\t1"));
  g_free(summary);
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(json);
  /* a (40 %) and b (40 %) on one half-GPU instance: 80 % of the GPU's memory > 50 %. */
  json = g_strdup_printf(tmpl, "{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"d\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"a\", \"gpu\": 0, \"batch\": 2}");
  sc = test_scenario(dir, json);
  GError *err = NULL;
  assert_false(cs_scenario_validate(sc, &err));
  assert_non_null(strstr(err->message, "over the 50 % it has"));
  g_error_free(err);
  cs_scenario_free(sc);
  g_free(json);
  test_dir_remove(dir);
}

/* MIG with a measured table (docs/gpu-model.md, "MIG"): d measured on a
 * GPU of 2 GPCs, alone on the whole GPU 10 ms, alone on 1 GPC 1000 / 62.5 =
 * 16 ms (the throughput, finer than the stored latency), 24 ms each with two
 * processes. On a half instance (1 GPC): alone 10 x 16 / 10 = 16 ms; two
 * replicas at once both end at 10 x 1.6 x 24 / 16 = 24 ms (the measured
 * ratio, no contention or interference model between them). a, without a
 * table, follows the rule (18.168005 ms, test_mig). A third instance size
 * the table lacks (here none: 0.5 is 1 GPC) would fall back to the rule. */
static void test_mig_measured(void **state)
{
  (void)state;
  char *dir = profile_dir();
  const char *mig =
    "{\"format\": \"clustersim-interference\", \"version\": 1, \"source\": \"synthetic, for tests\","
    " \"models\": [{\"model\": \"d\", \"mig\": {\"gpu_gpcs\": 2, \"cells\": ["
    "  {\"gpcs\": 2, \"batch\": 1, \"processes\": 1, \"latency_ms\": 10, \"source\": \"t 1\"},"
    "  {\"gpcs\": 1, \"batch\": 1, \"processes\": 1, \"latency_ms\": 16.4, \"throughput_per_process\": 62.5, \"source\": \"t 2\"},"
    "  {\"gpcs\": 1, \"batch\": 1, \"processes\": 2, \"latency_ms\": 24, \"source\": \"t 3\"}]}}]}";
  char *mp = g_build_filename(dir, "mig.json", NULL);
  assert_true(g_file_set_contents(mp, mig, -1, NULL));
  const char *tmpl =
    "{\"profiles\": [\"coloc.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"mps\": %s,"
    "   \"interference\": \"%s\","
    "   \"mig\": [{\"sm_fraction\": 0.5, \"memory_fraction\": 0.5}, {\"sm_fraction\": 0.5, \"memory_fraction\": 0.5}]},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": ["
    "   {\"model\": \"d\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"d\", \"gpu\": 0, \"batch\": 1},"
    "   {\"model\": \"a\", \"gpu\": 1, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"d\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [%s]}},"
    "  {\"model\": \"a\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [0]}}]}";
  const char *times[2] = { "0", "0, 0" };
  const int64_t want[2] = { 16000000, 24000000 };
  for (int k = 0; k < 2; k++) {
    char *json = g_strdup_printf(tmpl, "true", mp, times[k]);
    CsScenario *sc = test_scenario(dir, json);
    Ends x = { { 0, 0 }, { { 0 } } };
    CsRunOptions opt;
    cs_run_options_init(&opt);
    opt.on_request = record_ends;
    opt.user_data = &x;
    CsResults *r = test_run(sc, &opt);
    assert_int_equal(x.n[0], k + 1);
    for (int i = 0; i <= k; i++)
      assert_int_equal(x.end[0][i], want[k]);
    assert_int_equal(x.n[1], 1);
    assert_int_equal(x.end[1][0], 18168005);
    cs_results_free(r);
    cs_scenario_free(sc);
    g_free(json);
  }
  /* Without MPS the tables still act on MIG instances: d alone 16 ms, and
   * no setting_ignored warning for cluster.interference. */
  char *json = g_strdup_printf(tmpl, "false", mp, "0");
  CsScenario *sc = test_scenario(dir, json);
  Ends x = { { 0, 0 }, { { 0 } } };
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = record_ends;
  opt.user_data = &x;
  CsResults *r = test_run(sc, &opt);
  assert_int_equal(x.end[0][0], 16000000);
  char *summary = cs_results_to_json(r);
  assert_null(strstr(summary, "setting_ignored"));
  g_free(summary);
  cs_results_free(r);
  cs_scenario_free(sc);
  g_free(json);
  g_free(mp);
  test_dir_remove(dir);
}

/* The rule's processes (mig_table.h), see test_mig: two replicas of d at
 * once on an instance without a table both end at 2 x 18168005 ns; one alone
 * at 18168005 ns. */
static void test_mig_rule_processes(void **state)
{
  (void)state;
  char *dir = profile_dir();
  const char *tmpl =
    "{\"profiles\": [\"coloc.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"mps\": true,"
    "   \"mig\": [{\"sm_fraction\": 0.5, \"memory_fraction\": 0.5}, {\"sm_fraction\": 0.5, \"memory_fraction\": 0.5}]},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": ["
    "   {\"model\": \"d\", \"gpu\": 1, \"batch\": 1}, {\"model\": \"d\", \"gpu\": 1, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"d\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [%s]}}]}";
  const char *times[2] = { "0", "0, 0" };
  const int64_t want[2] = { 18168005, 2 * 18168005 };
  for (int k = 0; k < 2; k++) {
    char *json = g_strdup_printf(tmpl, times[k]);
    CsScenario *sc = test_scenario(dir, json);
    Ends x = { { 0, 0 }, { { 0 } } };
    CsRunOptions opt;
    cs_run_options_init(&opt);
    opt.on_request = record_ends;
    opt.user_data = &x;
    CsResults *r = test_run(sc, &opt);
    assert_int_equal(x.n[0], k + 1);
    for (int i = 0; i <= k; i++)
      assert_int_equal(x.end[0][i], want[k]);
    cs_results_free(r);
    cs_scenario_free(sc);
    g_free(json);
  }
  test_dir_remove(dir);
}

/* The shipped ParvaGPU data end to end: on its own profile (a100_parvagpu,
 * the 7-GPC column) with its MIG tables, resnet50 batch 1 on a 1-GPC
 * instance (sm_fraction 1/7) takes the measured latency, 1000 / 196.762 ms
 * (prof_data/resnet50.csv line 2), and two replicas at once each 1000 /
 * 125.968 ms (line 3); to the ns the isolated latency and the ratio round
 * to (2 ns). */
static void test_mig_parvagpu(void **state)
{
  (void)state;
  const char *root = g_getenv("CS_SOURCE_ROOT");
  assert_non_null(root);
  char *dir = profile_dir();
  char *prof = g_build_filename(root, "data", "profiles", "a100_parvagpu.json", NULL);
  char *mig = g_build_filename(root, "data", "profiles", "a100_parvagpu_mig.json", NULL);
  const char *tmpl =
    "{\"profiles\": [\"%s\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"a100_parvagpu\", \"mps\": true,"
    "   \"interference\": \"%s\", \"mig\": [{\"sm_fraction\": 0.142857, \"memory_fraction\": 0.125}]},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": ["
    "   {\"model\": \"resnet50\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"resnet50\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"resnet50\", \"slo_ms\": 100, \"arrival\": {\"process\": \"times\", \"times_ms\": [%s]}}]}";
  const char *times[2] = { "0", "0, 0" };
  const double want_ns[2] = { 1e9 / 196.762, 1e9 / 125.968 };
  for (int k = 0; k < 2; k++) {
    char *json = g_strdup_printf(tmpl, prof, mig, times[k]);
    CsScenario *sc = test_scenario(dir, json);
    Ends x = { { 0, 0 }, { { 0 } } };
    CsRunOptions opt;
    cs_run_options_init(&opt);
    opt.on_request = record_ends;
    opt.user_data = &x;
    CsResults *r = test_run(sc, &opt);
    assert_int_equal(x.n[0], k + 1);
    for (int i = 0; i <= k; i++)
      assert_true(fabs((double)x.end[0][i] - want_ns[k]) <= 2.0);
    cs_results_free(r);
    cs_scenario_free(sc);
    g_free(json);
  }
  g_free(prof);
  g_free(mig);
  test_dir_remove(dir);
}

/* Centralized dispatch loads every model on every GPU: their memory must fit. */
static void test_central_memory(void **state)
{
  (void)state;
  char *dir = profile_dir();
  const char *tmpl =
    "{\"profiles\": [\"coloc.json\"], \"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"},"
    " \"dispatch\": {\"policy\": \"symphony\"},"
    " \"clients\": [{\"model\": \"a\", \"rate\": 10, \"slo_ms\": 100, \"requests\": 5},"
    "  {\"model\": \"%s\", \"rate\": 10, \"slo_ms\": 100, \"requests\": 5},"
    "  {\"model\": \"%s\", \"rate\": 10, \"slo_ms\": 100, \"requests\": 5}]}";
  char *json = g_strdup_printf(tmpl, "b", "c"); /* 3 x 40 % */
  CsScenario *sc = test_scenario(dir, json);
  GError *err = NULL;
  assert_false(cs_scenario_validate(sc, &err));
  assert_non_null(strstr(err->message, "test.json: dispatch: dispatch \"symphony\" loads every model on "
                                       "every GPU, but on gpu 0 (gpu) their memory (a 40.00 %, b 40.00 %, "
                                       "c 40.00 %) sums to 120.00 %, over the 100 % it has"));
  g_error_free(err);
  cs_scenario_free(sc);
  g_free(json);
  json = g_strdup_printf(tmpl, "b", "d"); /* 40 + 40 + 10 % fits */
  sc = test_scenario(dir, json);
  assert_true(cs_scenario_validate(sc, NULL));
  cs_scenario_free(sc);
  g_free(json);
  test_dir_remove(dir);
}

typedef struct {
  int64_t last_start[2];
  int64_t n[2];
  gboolean in_order;
} Order;

static void record_order(const CsRequestRecord *rec, void *user)
{
  Order *o = user;
  if (!rec->served) {
    o->in_order = FALSE;
    return;
  }
  /* Requests of a worker leave its queue in arrival order: with one request
   * per batch, a later request never starts before an earlier one. Records
   * come in the order requests finish, which for one worker is start order. */
  if (rec->exec_start_ns < o->last_start[rec->client])
    o->in_order = FALSE;
  o->last_start[rec->client] = rec->exec_start_ns;
  o->n[rec->client]++;
}

/* An overloaded replica under MPS: "c" gets 400 req/s against a capacity of
 * about 100 (10 ms a batch of 1), so ~360,000 batches wait behind it at the
 * end; "d" shares the GPU at 10 req/s. Every batch still starts in its
 * worker's arrival order, and the run ends: starting the next batches once
 * scanned every waiting batch of the GPU at each completion (quadratic in
 * the queue: longer than the test's time limit), now each worker's first. */
static void test_long_mps_queue(void **state)
{
  (void)state;
  char *dir = profile_dir();
  const char *json =
    "{\"profiles\": [\"coloc.json\"], \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"mps\": true},"
    " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 0},"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": ["
    "   {\"model\": \"c\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"d\", \"gpu\": 0, \"batch\": 1}]},"
    " \"clients\": [{\"model\": \"c\", \"rate\": 400, \"arrival\": \"constant\", \"slo_ms\": 100, \"duration_s\": 1200},"
    "  {\"model\": \"d\", \"rate\": 10, \"arrival\": \"constant\", \"slo_ms\": 100, \"duration_s\": 1200}]}";
  CsScenario *sc = test_scenario(dir, json);
  Order o = { { 0, 0 }, { 0, 0 }, TRUE };
  CsRunOptions opt;
  cs_run_options_init(&opt);
  opt.on_request = record_order;
  opt.user_data = &o;
  CsResults *r = test_run(sc, &opt);
  assert_true(o.in_order);
  assert_int_equal(o.n[0], 480000);
  assert_int_equal(o.n[1], 12000);
  cs_results_free(r);
  cs_scenario_free(sc);
  test_dir_remove(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_time_slicing),
    cmocka_unit_test(test_processor_sharing),
    cmocka_unit_test(test_victim_fixed_part),
    cmocka_unit_test(test_mps_share_cap),
    cmocka_unit_test(test_memory),
    cmocka_unit_test(test_mig),
    cmocka_unit_test(test_mig_measured),
    cmocka_unit_test(test_mig_rule_processes),
    cmocka_unit_test(test_mig_parvagpu),
    cmocka_unit_test(test_central_memory),
    cmocka_unit_test(test_long_mps_queue),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
