/* Tests of the LLM capacity search (src/experiment/llm_search.c) whose
 * expected values come from outside it: a brute-force scan of rates on a
 * fine grid, a two-request deployment whose SLO boundary is in closed
 * form, the bisection's probe sequences worked by hand from Vidur's rules
 * (capacity_search.py) when everything passes or everything fails, the
 * cost arithmetic and the cheapest deployment against an enumeration.
 *
 * The deployment is made up, as in tests/llm/test_llm_sim.c: a model of 2
 * layers on constant tables, so a batch of prefills takes 3 ms, of decodes
 * 2.5 ms, a mixed one 3.5 ms. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "experiment/llm_search.h"
#include "llm/llm_attention.h"
#include "llm/llm_iteration.h"
#include "llm/llm_model.h"
#include "llm/llm_ops.h"
#include "llm/llm_sim.h"
#include "sim/rng.h"

#define MS INT64_C(1000000)
#include "../llm/llm_tiny.h"


static int setup(void **state)
{
  (void)state;
  return tiny_load();
}

static int teardown(void **state)
{
  (void)state;
  tiny_free();
  return 0;
}


static CsLlmDevice DEVICE = { .name = "a100", .memory_gib = 80, .price_per_hour = 2.21 };

/* A synthetic Poisson config of n requests on the tiny deployment. */
static void make_config(CsLlmConfig *c, CsLlmSchedPolicy pol, int replicas, int n, int p_lo,
                        int p_hi, int o_lo, int o_hi, uint64_t seed)
{
  memset(c, 0, sizeof *c);
  c->file = (char *)"test.json";
  c->device = &DEVICE;
  c->tensor_parallel = 1;
  c->pipeline_parallel = 1;
  c->max_tokens = 4096;
  c->sim.exec = (CsLlmExecConfig){ .model = &TINY_MODEL, .ops = ops, .devices_per_node = 1,
                                   .tp = 1, .pp = 1, .attention = att };
  cs_llm_sched_config_init(&c->sim.sched, pol);
  c->sim.sched.num_blocks = 100000;
  c->sim.replicas = replicas;
  c->sim.router = CS_LLM_ROUTER_ROUND_ROBIN;
  c->synthetic = TRUE;
  c->poisson = TRUE;
  c->n = n;
  c->qps = 1;
  c->prompt[0] = p_lo;
  c->prompt[1] = p_hi;
  c->output[0] = o_lo;
  c->output[1] = o_hi;
  c->seed = seed;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The test's own linear quantile (numpy's "linear"), not the library's. */
static double quantile(double *v, size_t n, double q)
{
  qsort(v, n, sizeof *v, cmp_double);
  double h = q * (double)(n - 1);
  size_t i = (size_t)floor(h);
  return i + 1 < n ? v[i] + (h - (double)i) * (v[i + 1] - v[i]) : v[n - 1];
}

/* Brute force: the run at qps and the SLO (TTFT and TBT only) checked from
 * the per-request results and the TBT samples directly. */
static gboolean brute_pass(const CsLlmConfig *c, int replicas, double qps, const CsLlmSlo *slo)
{
  int n = 0;
  GError *e = NULL;
  CsLlmSimRequest *reqs = cs_llm_config_requests(c, qps, &n, &e);
  assert_non_null(reqs);
  CsLlmSimConfig sim = c->sim;
  sim.replicas = replicas;
  CsLlmSimResult *r = cs_llm_sim_run(&sim, reqs, n, &e);
  if (e)
    print_error("%s\n", e->message);
  assert_non_null(r);
  gboolean pass = TRUE;
  if (slo->bound[CS_LLM_SLO_TTFT].on) {
    double *v = g_new(double, r->n_requests);
    for (int i = 0; i < r->n_requests; i++)
      v[i] = (double)(r->requests[i].first_token_ns - r->requests[i].arrival_ns) / 1e6;
    pass = pass && quantile(v, (size_t)r->n_requests, slo->bound[CS_LLM_SLO_TTFT].quantile) <=
                     slo->bound[CS_LLM_SLO_TTFT].max;
    g_free(v);
  }
  if (slo->bound[CS_LLM_SLO_TBT].on && r->tbt_ns->len > 0) {
    double *v = g_new(double, r->tbt_ns->len);
    for (guint i = 0; i < r->tbt_ns->len; i++)
      v[i] = (double)g_array_index(r->tbt_ns, int64_t, i) / 1e6;
    pass = pass && quantile(v, r->tbt_ns->len, slo->bound[CS_LLM_SLO_TBT].quantile) <=
                     slo->bound[CS_LLM_SLO_TBT].max;
    g_free(v);
  }
  cs_llm_sim_result_free(r);
  g_free(reqs);
  return pass;
}

static CsLlmSearchResult *search(const CsLlmConfig *c, const CsLlmSlo *slo, double start,
                                 int max_probes)
{
  CsLlmSearchParams sp;
  cs_llm_search_params_init(&sp);
  sp.start_qps = start;
  sp.max_probes = max_probes;
  GError *e = NULL;
  CsLlmSearchResult *r = cs_llm_search_capacity(c, 0, slo, &sp, &e);
  if (e)
    print_error("%s\n", e->message);
  assert_non_null(r);
  return r;
}

static CsLlmSlo slo_ttft_tbt(double q_ttft, double ttft_ms, double q_tbt, double tbt_ms)
{
  CsLlmSlo s;
  memset(&s, 0, sizeof s);
  s.bound[CS_LLM_SLO_TTFT] = (CsLlmSloBound){ ttft_ms > 0, q_ttft, ttft_ms };
  s.bound[CS_LLM_SLO_TBT] = (CsLlmSloBound){ tbt_ms > 0, q_tbt, tbt_ms };
  return s;
}

#define PROBE(r, i) (&g_array_index((r)->probes, CsLlmProbe, (i)))

/* The brute force over rates lo, lo + step, ... <= hi: the first that
 * fails and the highest that passes (equal to first_fail - step when the
 * grid is monotone). */
static void scan(const CsLlmConfig *c, const CsLlmSlo *slo, double lo, double hi, double step,
                 double *first_fail, double *highest_pass)
{
  *first_fail = INFINITY;
  *highest_pass = 0;
  for (int k = 0; lo + k * step <= hi; k++) {
    double q = lo + k * step;
    if (brute_pass(c, c->sim.replicas, q, slo))
      *highest_pass = q;
    else if (q < *first_fail)
      *first_fail = q;
  }
}

/* Every probe the search reports passes or fails as the brute force says
 * at that rate, and its non_monotone flag is what its probes show. */
static void check_probes(const CsLlmConfig *c, const CsLlmSlo *slo, const CsLlmSearchResult *r)
{
  double lowest_fail = INFINITY, highest_pass = -INFINITY;
  for (guint i = 0; i < r->probes->len; i++) {
    const CsLlmProbe *p = PROBE(r, i);
    assert_int_equal(p->pass, brute_pass(c, c->sim.replicas, p->qps, slo));
    if (p->pass)
      highest_pass = fmax(highest_pass, p->qps);
    else
      lowest_fail = fmin(lowest_fail, p->qps);
  }
  assert_int_equal(r->non_monotone, highest_pass > lowest_fail);
}

/* (a) A deployment whose pass/fail is monotone on a grid of 0.5
 * requests/s (batches of at most 4, TTFT p90 <= 50 ms): the answer passes,
 * lies below the first rate that fails, and within the granularity (2.5 %
 * of the last probe, <= the answer's 2.5 % + a grid step) of the highest
 * rate that passes. */
static void test_brute_force_monotone(void **state)
{
  (void)state;
  CsLlmConfig c;
  make_config(&c, CS_LLM_SCHED_VLLM, 1, 200, 64, 256, 2, 16, 2);
  c.sim.sched.batch_size_cap = 4;
  CsLlmSlo slo = slo_ttft_tbt(0.9, 50, 0, 0);
  const double step = 0.5;
  double first_fail, highest_pass;
  scan(&c, &slo, 1, 400, step, &first_fail, &highest_pass);
  assert_true(isfinite(first_fail));
  assert_true(fabs(first_fail - step - highest_pass) < 1e-9); /* monotone on the grid */
  CsLlmSearchResult *r = search(&c, &slo, 20, 20);
  check_probes(&c, &slo, r);
  assert_true(r->found);
  assert_false(r->non_monotone);
  assert_true(r->max_qps < first_fail);
  assert_true(r->max_qps >= highest_pass - 0.025 * r->max_qps * 1.03 - step);
  cs_llm_search_result_free(r);
}

/* (a) The same where the grid is not monotone (batches of at most 8,
 * TTFT p90 <= 20 ms: rates from 204.5 to 211 requests/s pass and fail in
 * turn, one finite workload's luck): the probes still agree with the
 * brute force, and the answer lies in the band, widened by the
 * granularity. */
static void test_brute_force_band(void **state)
{
  (void)state;
  CsLlmConfig c;
  make_config(&c, CS_LLM_SCHED_VLLM, 1, 200, 64, 256, 2, 16, 1);
  c.sim.sched.batch_size_cap = 8;
  CsLlmSlo slo = slo_ttft_tbt(0.9, 20, 0, 0);
  const double step = 0.5;
  double first_fail, highest_pass;
  scan(&c, &slo, 1, 400, step, &first_fail, &highest_pass);
  assert_true(highest_pass > first_fail); /* not monotone: the case this test is for */
  CsLlmSearchResult *r = search(&c, &slo, 20, 20);
  check_probes(&c, &slo, r);
  assert_true(r->found);
  assert_true(r->max_qps <= highest_pass + step);
  assert_true(r->max_qps >= first_fail - step - 0.025 * r->max_qps * 1.03 - step);
  cs_llm_search_result_free(r);
}

/* The first interval of the "llm/arrivals" stream of seed s at rate 1:
 * min(-ln(1 - U), 3) (llm_config.h), drawn here from sim/rng.h. */
static double first_interval(uint64_t seed)
{
  CsRngState st;
  cs_rng_state_seed(&st, cs_rng_stream_seed(seed, "llm/arrivals"));
  return fmin(-log(1 - cs_rng_to_unit(cs_rng_next(&st))), 3);
}

/* (b) A boundary in closed form. Two requests of 64 prompt tokens and one
 * output token on one vLLM replica: R0 at 0 prefills 0 -> 3 ms and is done;
 * R1 arrives at d = c / qps (c the first interval at rate 1): at d >= 3 ms
 * it finds the replica idle (TTFT 3 ms), at d < 3 ms it waits until 3
 * (TTFT 6 ms - d). With the SLO max TTFT (quantile 1) <= 5 ms a rate passes
 * iff 6 - d <= 5, i.e. d >= 1 ms, i.e. qps <= 1000 c. */
static void test_closed_form(void **state)
{
  (void)state;
  CsLlmConfig c;
  make_config(&c, CS_LLM_SCHED_VLLM, 1, 2, 64, 64, 1, 1, 11);
  CsLlmSlo slo = slo_ttft_tbt(1.0, 5, 0, 0);
  double boundary = 1000 * first_interval(11);
  CsLlmSearchResult *r = search(&c, &slo, 100, 20);
  for (guint i = 0; i < r->probes->len; i++) {
    const CsLlmProbe *p = PROBE(r, i);
    assert_int_equal(p->pass, p->qps <= boundary);
    /* the TTFT p100 itself: 3 ms idle, 6 - d waiting */
    double d = boundary / p->qps; /* ms: c / qps s = 1000 c / qps ms */
    double want = d >= 3 ? 3 : 6 - d;
    assert_true(fabs(p->value[CS_LLM_SLO_TTFT] - want) < 1e-5);
  }
  assert_true(r->found);
  assert_false(r->non_monotone);
  assert_true(r->max_qps <= boundary);
  assert_true(r->max_qps >= boundary * (1 - 0.025 * 1.03));
  /* The fewest replicas for a rate: above the boundary R1 waits on one
   * replica and goes to the second (round robin) on two, TTFT 3 ms. */
  /* Vidur's own criterion on the same runs: R1's scheduling delay is
   * 3 ms - d when it waits, 0 otherwise; max delay <= 2 ms holds iff
   * d >= 1 ms, the same boundary. A TBT bound adds nothing: one output
   * token a request, no TBT sample, which holds. */
  CsLlmSlo sd;
  memset(&sd, 0, sizeof sd);
  sd.bound[CS_LLM_SLO_SCHED_DELAY] = (CsLlmSloBound){ TRUE, 1.0, 0.002 };
  sd.bound[CS_LLM_SLO_TBT] = (CsLlmSloBound){ TRUE, 0.9, 1e-9 };
  CsLlmSearchResult *r2 = search(&c, &sd, 100, 20);
  for (guint i = 0; i < r2->probes->len; i++) {
    const CsLlmProbe *p = PROBE(r2, i);
    double d = boundary / p->qps; /* ms */
    assert_int_equal(p->pass, p->qps <= boundary);
    assert_true(fabs(p->value[CS_LLM_SLO_SCHED_DELAY] - (d >= 3 ? 0 : (3 - d) / 1e3)) < 1e-8);
    assert_true(isnan(p->value[CS_LLM_SLO_TBT]));
  }
  assert_true(r2->max_qps <= boundary && r2->max_qps >= boundary * (1 - 0.025 * 1.03));
  cs_llm_search_result_free(r2);
  int k = -1;
  GError *e = NULL;
  assert_true(cs_llm_fewest_replicas(&c, 1.5 * boundary, &slo, 4, &k, NULL, &e));
  assert_int_equal(k, 2);
  assert_true(cs_llm_fewest_replicas(&c, 0.5 * boundary, &slo, 4, &k, NULL, &e));
  assert_int_equal(k, 1);
  assert_true(cs_llm_fewest_replicas(&c, 1.5 * boundary, &slo, 1, &k, NULL, &e));
  assert_int_equal(k, 0); /* none of 1..1 */
  cs_llm_search_result_free(r);
}

/* Vidur's rules by hand when every probe passes with a ratio below 1/8
 * (an SLO no run comes near): left = 0, right = 2s; q1 = s, right = 4 x
 * 2s = 8s; q2 = (s + 8s) / 2 = 4.5s, right = 32s; q3 = (4.5 + 32) / 2 s =
 * 18.25s, right = 128s; q4 = (18.25 + 128) / 2 s = 73.125s; in general
 * q(k+1) = (q(k) + right(k)) / 2 with right(k) = 2s 4^k, until Vidur's
 * cap at 2^32 (below), the answer the last probe. When every probe fails with a
 * ratio above 100: q1 = s, right = s / 2 (above left = 0); q2 = s / 4,
 * right = s / 8; q(k) = s 4^-(k-1), none passing, until a rate so low
 * that the arrivals could pass int64 ns (below). */
static void test_hand_sequences(void **state)
{
  (void)state;
  CsLlmConfig c;
  make_config(&c, CS_LLM_SCHED_VLLM, 1, 20, 64, 128, 2, 4, 3);
  const double s = 10;
  CsLlmSlo easy = slo_ttft_tbt(0.9, 1e15, 0.9, 1e15);
  CsLlmSearchResult *r = search(&c, &easy, s, 20);
  const double first[] = { 10, 45, 182.5, 731.25 };
  for (int i = 0; i < 4; i++)
    assert_true(fabs(PROBE(r, i)->qps - first[i]) < 1e-9);
  /* Vidur's min_qps_over_sla starts at 2^32 and caps right: right(k) =
   * min(2s 4^k, 2^32) (from k = 15 at s = 10), and then the probes close
   * in on 2^32 until right - left < 2.5 % of q. */
  double q = s, right = fmin(8 * s, 4294967296.0);
  guint n = 1;
  while (n < 20 && !(right - q < 0.025 * q)) {
    q = (q + right) / 2;
    right = fmin(4 * right, 4294967296.0);
    assert_true(fabs(PROBE(r, n)->qps - q) <= 1e-12 * q);
    n++;
  }
  assert_int_equal(r->probes->len, n);
  assert_true(fabs(r->max_qps - q) <= 1e-12 * q);
  assert_int_equal(r->best, (int)n - 1);
  cs_llm_search_result_free(r);

  CsLlmSlo hard = slo_ttft_tbt(0.9, 1e-6, 0, 0); /* TTFT >= 3 ms: ratio >= 3e6 */
  r = search(&c, &hard, s, 20);
  /* 20 requests: the search stops before a rate q with 20 x 3 / q > 9e9 s,
   * q < 6.67e-9: q(k) = 10 x 4^-k stays above it for k <= 15 (4^15 =
   * 1.07e9 < 1.5e9 < 4^16), so 16 probes. */
  assert_int_equal(r->probes->len, 16);
  assert_true(r->stopped_low);
  for (int k = 0; k < 16; k++) {
    assert_false(PROBE(r, k)->pass);
    assert_true(fabs(PROBE(r, k)->qps - s * pow(4, -k)) <= 1e-12 * s * pow(4, -k));
  }
  assert_false(r->found);
  assert_int_equal(r->best, -1);
  assert_true(r->max_qps == 0);
  cs_llm_search_result_free(r);
  /* That rate is refused, not overflowed. */
  GError *e = NULL;
  int n_req = 0;
  assert_null(cs_llm_config_requests(&c, 1e-11, &n_req, &e));
  assert_non_null(strstr(e->message, "pass 9e9 s"));
  g_error_free(e);
}

/* (c) Costs by hand: 3 replicas at TP 2 are 6 GPUs, 6 x 2.21 = 13.26 $/h;
 * a device without a price is refused, naming it. */
static void test_cost(void **state)
{
  (void)state;
  CsLlmConfig c;
  make_config(&c, CS_LLM_SCHED_VLLM, 1, 2, 64, 64, 1, 1, 1);
  c.tensor_parallel = 2;
  assert_int_equal(cs_llm_deployment_gpus(&c, 3), 6);
  double cost = 0;
  GError *e = NULL;
  assert_true(cs_llm_deployment_cost(&c, 3, &cost, &e));
  assert_true(fabs(cost - 13.26) < 1e-12);
  CsLlmDevice free_dev = { .name = "x9", .price_per_hour = 0 };
  c.device = &free_dev;
  assert_false(cs_llm_deployment_cost(&c, 1, &cost, &e));
  assert_non_null(strstr(e->message, "test.json: device: \"x9\" has no price_per_hour"));
  g_error_free(e);
}

/* (c) The cheapest: ties by hand, then against an enumeration over
 * seeded lists (cost, then GPUs, then list order; 0 replicas never). */
static void test_cheapest(void **state)
{
  (void)state;
  const CsLlmFit none[] = { { 0, 0, 0, 0, 0 }, { 0, 0, 0, 0, 0 } };
  assert_int_equal(cs_llm_cheapest(none, 2), -1);
  /* 8.84 $/h as 4 GPUs at 2.21 (index 1) or 4 at 2.21 (index 2), 8.50 at
   * 5 GPUs: the cheapest is index 3. Without it, equal costs: index 1 and
   * 2 have 4 GPUs, index 0 has 8 at 1.105: fewer GPUs, then the lower
   * index: 1. */
  const CsLlmFit f[] = { { 2, 8, 8.84, 0, 0 }, { 1, 4, 8.84, 0, 0 }, { 4, 4, 8.84, 0, 0 },
                         { 5, 5, 8.5, 0, 0 } };
  assert_int_equal(cs_llm_cheapest(f, 4), 3);
  assert_int_equal(cs_llm_cheapest(f, 3), 1);
  CsRngState st;
  cs_rng_state_seed(&st, 42);
  for (int trial = 0; trial < 500; trial++) {
    CsLlmFit g[6];
    for (int i = 0; i < 6; i++) {
      g[i].replicas = (int)(cs_rng_next(&st) % 3);      /* 0: does not fit */
      g[i].gpus = 1 + (int)(cs_rng_next(&st) % 3);
      g[i].cost_per_hour = 1.0 + (double)(cs_rng_next(&st) % 3); /* ties often */
    }
    int want = -1;
    for (int i = 0; i < 6; i++) {
      if (g[i].replicas == 0)
        continue;
      gboolean beaten = FALSE;
      for (int j = 0; j < 6; j++)
        if (j != i && g[j].replicas > 0 &&
            (g[j].cost_per_hour < g[i].cost_per_hour ||
             (g[j].cost_per_hour == g[i].cost_per_hour &&
              (g[j].gpus < g[i].gpus || (g[j].gpus == g[i].gpus && j < i)))))
          beaten = TRUE;
      if (!beaten)
        want = i;
    }
    assert_int_equal(cs_llm_cheapest(g, 6), want);
  }
}

/* (e) The same search twice: the same probes, value for value. */
static void test_deterministic(void **state)
{
  (void)state;
  CsLlmConfig c;
  make_config(&c, CS_LLM_SCHED_SARATHI, 2, 60, 64, 256, 2, 16, 5);
  c.sim.sched.chunk_size = 4096;
  CsLlmSlo slo = slo_ttft_tbt(0.9, 20, 0.9, 6);
  CsLlmSearchResult *a = search(&c, &slo, 50, 20), *b = search(&c, &slo, 50, 20);
  assert_int_equal(a->probes->len, b->probes->len);
  for (guint i = 0; i < a->probes->len; i++) {
    const CsLlmProbe *p = PROBE(a, i), *q = PROBE(b, i);
    assert_true(p->qps == q->qps && p->pass == q->pass && p->ratio == q->ratio);
    assert_true(p->summary.ttft.p90 == q->summary.ttft.p90);
  }
  assert_true(a->max_qps == b->max_qps);
  cs_llm_search_result_free(a);
  cs_llm_search_result_free(b);
}

/* (f) search.trace_qps: a trace's arrivals are those of rate trace_qps and
 * a probe at q divides them by q / trace_qps. Worked by hand on the tiny
 * deployment under vLLM: request 0 arrives at 0 (prefill 0-3 ms, then
 * decodes of 2.5 ms: 3-5.5, 5.5-8 ms), request 1 at 10 ms / (q / R). At
 * q / R = 1 it arrives after request 0 is done (delay 0); at 2, at 5 ms,
 * during a decode, and starts at 5.5 ms (delay 0.5 ms); at 5, at 2 ms,
 * during the prefill, and starts at 3 ms (delay 1 ms). One probe
 * (start_qps q, max_probes 1) at each; the scheduling delay's maximum
 * (quantile 1) is request 1's. */
static void test_trace_rate(void **state)
{
  (void)state;
  CsLlmConfig c;
  make_config(&c, CS_LLM_SCHED_VLLM, 1, 2, 64, 64, 3, 3, 1);
  CsLlmSimRequest trace[2] = { { .id = 0, .arrival_ns = 0, .prompt_tokens = 64,
                                 .output_tokens = 3 },
                               { .id = 1, .arrival_ns = 10 * MS, .prompt_tokens = 64,
                                 .output_tokens = 3 } };
  c.synthetic = FALSE;
  c.trace_reqs = trace;
  c.n_trace = 2;
  CsLlmSlo slo;
  memset(&slo, 0, sizeof slo);
  slo.bound[CS_LLM_SLO_SCHED_DELAY] = (CsLlmSloBound){ TRUE, 1.0, 1.0 };
  const struct { double trace_qps, q, delay_s; } cases[] = {
    { 1, 1, 0 }, { 1, 2, 0.0005 }, { 1, 5, 0.001 }, { 2, 4, 0.0005 }, { 0.5, 2.5, 0.001 },
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    CsLlmSearchParams sp;
    cs_llm_search_params_init(&sp);
    sp.start_qps = cases[k].q;
    sp.max_probes = 1;
    sp.trace_qps = cases[k].trace_qps;
    GError *e = NULL;
    CsLlmSearchResult *r = cs_llm_search_capacity(&c, 0, &slo, &sp, &e);
    if (e)
      print_error("%s\n", e->message);
    assert_non_null(r);
    assert_int_equal(r->probes->len, 1);
    assert_true(PROBE(r, 0)->qps == cases[k].q);
    assert_true(fabs(PROBE(r, 0)->value[CS_LLM_SLO_SCHED_DELAY] - cases[k].delay_s) < 1e-12);
    cs_llm_search_result_free(r);
  }
  /* Without trace_qps the same config is refused at a rate, not run on the
   * trace's own arrivals. */
  CsLlmSearchParams sp;
  cs_llm_search_params_init(&sp);
  sp.start_qps = 2;
  GError *e = NULL;
  assert_null(cs_llm_search_capacity(&c, 0, &slo, &sp, &e));
  assert_non_null(e);
  g_error_free(e);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_brute_force_monotone),
    cmocka_unit_test(test_brute_force_band),
    cmocka_unit_test(test_closed_form),
    cmocka_unit_test(test_hand_sequences),
    cmocka_unit_test(test_cost),
    cmocka_unit_test(test_cheapest),
    cmocka_unit_test(test_deterministic),
    cmocka_unit_test(test_trace_rate),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
