/* Tests of a capacity search's grid of deployments (search.grid,
 * src/experiment/llm_search_grid.c) and of synthetic requests whose lengths
 * come from a trace (requests.synthetic.lengths, src/scenario/llm_lengths.c),
 * on the shipped data (Llama-2-7B on an a100), with expected values from
 * outside the code: the grid's expansion against a list written by hand
 * (itertools.product's order), a grid search whose every deployment's
 * answer equals that deployment searched alone, a combination that does
 * not fit the memory skipped and named; the requests' lengths against the
 * trace's rows in order (Vidur's cut in proportion worked by hand), the
 * arrivals' mean gap against the capped exponential's mean within a bound
 * computed for n, the same lengths at two rates. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "experiment/llm_search.h"

static char *tmp_dir;

static int setup(void **state)
{
  (void)state;
  tmp_dir = g_dir_make_tmp("llm_search_grid.XXXXXX", NULL);
  return tmp_dir ? 0 : -1;
}

static int teardown(void **state)
{
  (void)state;
  GDir *d = g_dir_open(tmp_dir, 0, NULL);
  const char *n;
  while (d && (n = g_dir_read_name(d)) != NULL) {
    char *p = g_build_filename(tmp_dir, n, NULL);
    g_unlink(p);
    g_free(p);
  }
  if (d)
    g_dir_close(d);
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return 0;
}

static char *write_file(const char *name, const char *text)
{
  char *p = g_build_filename(tmp_dir, name, NULL);
  assert_true(g_file_set_contents(p, text, -1, NULL));
  return p;
}

/* A search config: the base's fields, the requests and the search's
 * extra fields (after "start_qps"). */
#define BASE "{\"format\": \"clustersim-llm-search\", \"version\": 1, " \
  "\"model\": \"meta-llama/Llama-2-7b-hf\", \"device\": \"a100\", " \
  "\"node\": \"a100_pairwise_nvlink\", \"attention_outside_grid\": \"clamp\", "
#define SYN(N) "\"requests\": {\"synthetic\": {\"n\": " #N ", \"prompt_tokens\": " \
  "{\"uniform\": [128, 512]}, \"output_tokens\": {\"uniform\": [16, 64]}, \"seed\": 3}}, "
#define SEARCH "\"search\": {\"slo\": {\"ttft_ms\": {\"quantile\": 0.9, \"max\": 500}, " \
  "\"tbt_ms\": {\"quantile\": 0.9, \"max\": 60}}, \"start_qps\": 4, "

static CsLlmSearchSpec *load(const char *name, const char *text, GError **e)
{
  char *p = write_file(name, text);
  CsLlmSearchSpec *s = cs_llm_search_spec_load(p, NULL, e);
  g_free(p);
  return s;
}

static CsLlmSearchSpec *load_ok(const char *name, const char *text)
{
  GError *e = NULL;
  CsLlmSearchSpec *s = load(name, text, &e);
  if (e)
    print_error("%s\n", e->message);
  assert_non_null(s);
  return s;
}

/* 2 x 3 x 2 combinations, the last axis fastest, against the list by hand. */
static void test_expansion(void **state)
{
  (void)state;
  CsLlmSearchSpec *s = load_ok("grid.json", BASE SYN(20) SEARCH
    "\"grid\": {\"sched\": [{\"scheduler\": {\"policy\": \"vllm\"}}, "
    "{\"name\": \"sarathi-1024\", \"scheduler\": {\"policy\": \"sarathi\", \"chunk_size\": 1024}}], "
    "\"scheduler.batch_size_cap\": [32, 64, 128], \"replicas\": [1, 2]}}}");
  static const struct { const char *name; CsLlmSchedPolicy pol; int chunk, cap, replicas; } want[] = {
    { "vllm cap 32 replicas=1", CS_LLM_SCHED_VLLM, 0, 32, 1 },
    { "vllm cap 32 replicas=2", CS_LLM_SCHED_VLLM, 0, 32, 2 },
    { "vllm cap 64 replicas=1", CS_LLM_SCHED_VLLM, 0, 64, 1 },
    { "vllm cap 64 replicas=2", CS_LLM_SCHED_VLLM, 0, 64, 2 },
    { "vllm cap 128 replicas=1", CS_LLM_SCHED_VLLM, 0, 128, 1 },
    { "vllm cap 128 replicas=2", CS_LLM_SCHED_VLLM, 0, 128, 2 },
    { "sarathi-1024 cap 32 replicas=1", CS_LLM_SCHED_SARATHI, 1024, 32, 1 },
    { "sarathi-1024 cap 32 replicas=2", CS_LLM_SCHED_SARATHI, 1024, 32, 2 },
    { "sarathi-1024 cap 64 replicas=1", CS_LLM_SCHED_SARATHI, 1024, 64, 1 },
    { "sarathi-1024 cap 64 replicas=2", CS_LLM_SCHED_SARATHI, 1024, 64, 2 },
    { "sarathi-1024 cap 128 replicas=1", CS_LLM_SCHED_SARATHI, 1024, 128, 1 },
    { "sarathi-1024 cap 128 replicas=2", CS_LLM_SCHED_SARATHI, 1024, 128, 2 },
  };
  assert_int_equal(s->n_deployments, 12);
  assert_int_equal(s->grid_combinations, 12);
  assert_int_equal(s->n_skipped, 0);
  for (int i = 0; i < 12; i++) {
    const CsLlmDeployment *d = &s->deployments[i];
    assert_string_equal(d->name, want[i].name);
    assert_int_equal(d->cfg->sim.sched.policy, want[i].pol);
    if (want[i].chunk)
      assert_int_equal(d->cfg->sim.sched.chunk_size, want[i].chunk);
    assert_int_equal(d->cfg->sim.sched.batch_size_cap, want[i].cap);
    assert_int_equal(d->cfg->sim.replicas, want[i].replicas);
    assert_non_null(d->options);
    assert_int_equal(cJSON_GetObjectItem(d->options, "replicas")->valueint, want[i].replicas);
  }
  cs_llm_search_spec_free(s);
}

static CsLlmSearchResult *search_one(const CsLlmSearchSpec *s, int i)
{
  GError *e = NULL;
  CsLlmSearchResult *r = cs_llm_search_capacity(s->deployments[i].cfg, 0, &s->slo, &s->params, &e);
  if (e)
    print_error("%s\n", e->message);
  assert_non_null(r);
  return r;
}

/* Every deployment of a grid answers as the same deployment alone. */
static void test_grid_equals_alone(void **state)
{
  (void)state;
  CsLlmSearchSpec *g = load_ok("grid2.json", BASE SYN(120) SEARCH
    "\"grid\": {\"scheduler.policy\": [\"vllm\", \"sarathi\"], "
    "\"scheduler.batch_size_cap\": [8, 64]}}}");
  static const char *const alone[] = {
    "\"scheduler\": {\"policy\": \"vllm\", \"batch_size_cap\": 8}, ",
    "\"scheduler\": {\"policy\": \"vllm\", \"batch_size_cap\": 64}, ",
    "\"scheduler\": {\"policy\": \"sarathi\", \"batch_size_cap\": 8}, ",
    "\"scheduler\": {\"policy\": \"sarathi\", \"batch_size_cap\": 64}, ",
  };
  assert_int_equal(g->n_deployments, 4);
  double answers[4];
  for (int i = 0; i < 4; i++) {
    char *text = g_strconcat(BASE, alone[i], SYN(120) SEARCH "\"max_probes\": 20}}", NULL);
    CsLlmSearchSpec *a = load_ok("alone.json", text);
    g_free(text);
    CsLlmSearchResult *rg = search_one(g, i), *ra = search_one(a, 0);
    assert_true(rg->found && ra->found);
    assert_true(rg->max_qps == ra->max_qps);
    assert_int_equal(rg->probes->len, ra->probes->len);
    for (guint k = 0; k < rg->probes->len; k++) {
      const CsLlmProbe *x = &g_array_index(rg->probes, CsLlmProbe, k);
      const CsLlmProbe *y = &g_array_index(ra->probes, CsLlmProbe, k);
      assert_true(x->qps == y->qps && x->pass == y->pass);
      assert_true(x->value[CS_LLM_SLO_TTFT] == y->value[CS_LLM_SLO_TTFT]);
    }
    answers[i] = rg->max_qps;
    cs_llm_search_result_free(rg);
    cs_llm_search_result_free(ra);
    cs_llm_search_spec_free(a);
  }
  /* The grid's options matter: a cap of 8 serves less than one of 64. */
  assert_true(answers[0] < answers[1] && answers[2] < answers[3]);
  cs_llm_search_spec_free(g);
}

/* 84 % of the a100 kept free leaves too little for a 4096-token request
 * beside the weights (the reader's memory plan), not for a 1024-token one:
 * that one combination is skipped and named, its options each load
 * elsewhere. */
static void test_skip(void **state)
{
  (void)state;
  CsLlmSearchSpec *s = load_ok("skip.json", BASE SYN(20) SEARCH
    "\"grid\": {\"memory_margin\": [0.1, 0.84], \"max_tokens\": [1024, 4096]}}}");
  assert_int_equal(s->grid_combinations, 4);
  assert_int_equal(s->n_deployments, 3);
  assert_int_equal(s->n_skipped, 1);
  assert_string_equal(s->skipped[0].name, "memory_margin=0.84 max_tokens=4096");
  assert_true(g_str_has_prefix(s->skipped[0].reason, "model: "));
  assert_non_null(strstr(s->skipped[0].reason, "does not fit"));
  assert_string_equal(s->deployments[2].name, "memory_margin=0.84 max_tokens=1024");
  cs_llm_search_spec_free(s);
  /* An option no combination loads refuses the config, naming it. */
  GError *e = NULL;
  assert_null(load("bad.json", BASE SYN(20) SEARCH
    "\"grid\": {\"memory_margin\": [0.1, 0.9], \"max_tokens\": [2048, 4096]}}}", &e));
  assert_non_null(e);
  assert_non_null(strstr(e->message, "search.grid.memory_margin[1]: expected an option some "
                                     "combination can run, got 0.9"));
  g_error_free(e);
}

/* A trace of lengths: row i's prompt and output. Row 3 is over 4096 in
 * all; row 4 has 0 output tokens. */
static const int ROWS[][2] = { { 100, 10 }, { 200, 20 }, { 300, 30 }, { 5000, 100 }, { 400, 0 },
                               { 50, 4000 } };

static char *lengths_trace(const char *name, int copies)
{
  GString *t = g_string_new("arrived_at,num_prefill_tokens,num_decode_tokens\n");
  for (int c = 0; c < copies; c++)
    for (int i = 0; i < 6; i++)
      g_string_append_printf(t, "%d.5,%d,%d\n", c * 6 + i, ROWS[i][0], ROWS[i][1]);
  char *p = write_file(name, t->str);
  g_string_free(t, TRUE);
  return p;
}

static CsLlmConfig *run_config(const char *lengths, int n, double qps, int seed)
{
  char *ns = n ? g_strdup_printf("\"n\": %d, ", n) : g_strdup("");
  char *text = g_strdup_printf("{\"format\": \"clustersim-llm-run\", \"version\": 1, "
    "\"model\": \"meta-llama/Llama-2-7b-hf\", \"device\": \"a100\", \"node\": "
    "\"a100_pairwise_nvlink\", \"requests\": {\"synthetic\": {%s\"qps\": %g, \"seed\": %d, "
    "\"lengths\": %s}}}", ns, qps, seed, lengths);
  g_free(ns);
  char *p = write_file("run.json", text);
  g_free(text);
  GError *e = NULL;
  CsLlmConfig *c = cs_llm_config_load(p, NULL, &e);
  if (e)
    print_error("%s\n", e->message);
  assert_non_null(c);
  g_free(p);
  return c;
}

/* In trace order: request i has row i's lengths, row 3 cut as Vidur's
 * length generator cuts it (5100 - 4096 = 1004 tokens too many: the prompt
 * loses ceil(1004 x 5000 / 5100) = 985, the output ceil(1004 x 100 / 5100)
 * = 20), row 4's 0 output tokens clipped to 1, row 5's (50 + 4000) kept. */
static void test_lengths_in_order(void **state)
{
  (void)state;
  char *p = lengths_trace("len.csv", 1);
  CsLlmConfig *c = run_config("{\"trace\": \"len.csv\", \"order\": \"trace\"}", 0, 2, 1);
  static const int want[][2] = { { 100, 10 }, { 200, 20 }, { 300, 30 }, { 4015, 80 },
                                 { 400, 1 }, { 50, 4000 } };
  int n = 0;
  GError *e = NULL;
  CsLlmSimRequest *r = cs_llm_config_requests(c, 0, &n, &e);
  assert_non_null(r);
  assert_int_equal(n, 6); /* n defaults to the rows */
  for (int i = 0; i < 6; i++) {
    assert_int_equal(r[i].prompt_tokens, want[i][0]);
    assert_int_equal(r[i].output_tokens, want[i][1]);
  }
  assert_int_equal(c->lengths_cut, 1);
  g_free(r);
  cs_llm_config_free(c);
  g_free(p);
}

/* Poisson arrivals at q: the mean of n - 1 intervals min(Exp(q), 3 / q)
 * is (1 - e^-3) / q = 0.950213 / q, its standard deviation sqrt(var / (n -
 * 1)) with var = (2 (1 - 4 e^-3) - 0.950213^2) / q^2 = 0.698799 / q^2
 * (worked by hand); within 4 of them at n = 12,000. The uncapped mean 1 /
 * q lies 6.5 of them away. The lengths are the same at every rate, and the
 * arrivals at 2q half those at q (to the ns). */
static void test_lengths_poisson(void **state)
{
  (void)state;
  char *p = lengths_trace("len2.csv", 2000);
  const double q = 3;
  CsLlmConfig *c = run_config("{\"trace\": \"len2.csv\"}", 0, q, 5);
  int n = 0, n2 = 0;
  GError *e = NULL;
  CsLlmSimRequest *a = cs_llm_config_requests(c, 0, &n, &e);
  CsLlmSimRequest *b = cs_llm_config_requests(c, 2 * q, &n2, &e);
  assert_non_null(a);
  assert_non_null(b);
  assert_int_equal(n, 12000);
  assert_int_equal(n2, 12000);
  double mean = (double)a[n - 1].arrival_ns / 1e9 / (n - 1);
  double sd = sqrt(0.698799 / (q * q) / (n - 1));
  assert_true(fabs(mean - 0.950213 / q) < 4 * sd);
  assert_true(fabs(mean - 1 / q) > 4 * sd);
  for (int i = 0; i < n; i++) {
    assert_int_equal(a[i].prompt_tokens, b[i].prompt_tokens);
    assert_int_equal(a[i].output_tokens, b[i].output_tokens);
    assert_true(llabs(b[i].arrival_ns - a[i].arrival_ns / 2) <= 1);
  }
  g_free(a);
  g_free(b);
  cs_llm_config_free(c);
  g_free(p);
}

/* "shuffle" (the default): the rows in a seeded order, every row once; the
 * same seed the same order, another seed another. */
static void test_lengths_shuffle(void **state)
{
  (void)state;
  char *p = lengths_trace("len3.csv", 10);
  CsLlmConfig *c1 = run_config("{\"trace\": \"len3.csv\"}", 0, 1, 1);
  CsLlmConfig *c1b = run_config("{\"trace\": \"len3.csv\", \"order\": \"shuffle\"}", 0, 1, 1);
  CsLlmConfig *c2 = run_config("{\"trace\": \"len3.csv\"}", 0, 1, 2);
  CsLlmConfig *ct = run_config("{\"trace\": \"len3.csv\", \"order\": \"trace\"}", 0, 1, 1);
  int counts[6] = { 0 }, same_as_trace = 0, same_seed = 0, other_seed = 0;
  assert_int_equal(c1->n_len, 60);
  for (int i = 0; i < 60; i++) {
    for (int k = 0; k < 6; k++)
      counts[k] += c1->len_prompt[i] == ct->len_prompt[k] && c1->len_output[i] == ct->len_output[k];
    same_as_trace += c1->len_prompt[i] == ct->len_prompt[i];
    same_seed += c1->len_prompt[i] == c1b->len_prompt[i];
    other_seed += c1->len_prompt[i] == c2->len_prompt[i];
  }
  for (int k = 0; k < 6; k++)
    assert_int_equal(counts[k], 10);
  assert_int_equal(same_seed, 60);
  assert_true(same_as_trace < 60 && other_seed < 60);
  cs_llm_config_free(c1);
  cs_llm_config_free(c1b);
  cs_llm_config_free(c2);
  cs_llm_config_free(ct);
  g_free(p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_expansion),
    cmocka_unit_test(test_grid_equals_alone),
    cmocka_unit_test(test_skip),
    cmocka_unit_test(test_lengths_in_order),
    cmocka_unit_test(test_lengths_poisson),
    cmocka_unit_test(test_lengths_shuffle),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
