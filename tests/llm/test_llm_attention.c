/* Tests of the attention tables and a batch's attention time
 * (src/llm/llm_attention.c) and of a batch timed from its requests
 * (cs_llm_exec_batch_time), on an inline made-up table and on the shipped
 * sample data/llm/attention/a100/meta-llama__Llama-2-7b-hf.json (found
 * through CS_SOURCE_ROOT). Expected values are worked by hand in the
 * comments from the fixture's numbers or the shipped JSON's. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "llm/llm_attention.h"
#include "llm/llm_iteration.h"
#include "llm/llm_model.h"
#include "llm/llm_ops.h"

#define assert_close(a, b) assert_close_impl((a), (b), #a, __FILE__, __LINE__)
static void assert_close_impl(double a, double b, const char *what, const char *file, int line)
{
  if (!(fabs(a - b) <= 1e-12 * fmax(1, fabs(b)))) {
    print_error("%s = %.17g, expected %.17g\n", what, a, b);
    _fail(file, line);
  }
}

#define L7 "meta-llama/Llama-2-7b-hf"
#define L70 "meta-llama/Llama-2-70b-hf"

/* Made up. The prefill triangle at max_model_len 768: only chunk 512 + kv
 * 512 is beyond it, so (512, 512) is null. */
#define ATT_JSON                                                                            \
  "{\"format\": \"clustersim-llm-attention\", \"version\": 1, \"source\": \"test fixture\",\n" \
  " \"gpu\": \"a100\", \"model\": \"" L7 "\", \"tp\": 1, \"block_size\": 16,\n"              \
  " \"max_model_len\": 768, \"attention_backend\": \"FLASH\",\n"                             \
  " \"decode\": {\"kv_cache_size\": [64, 128, 256], \"batch_size\": [1, 2, 4],\n"            \
  "  \"median_ms\": [[0.010, 0.012, 0.016],\n"                                               \
  "                [0.012, 0.016, 0.024],\n"                                                 \
  "                [0.020, 0.028, 0.044]]},\n"                                               \
  " \"prefill\": {\"kv_cache_size\": [0, 256, 512], \"prefill_chunk_size\": [128, 256, 512],\n" \
  "  \"median_ms\": [[0.020, 0.050, 0.150],\n"                                               \
  "                [0.030, 0.070, 0.200],\n"                                                 \
  "                [0.040, 0.090, null]]}}\n"

static const CsLlmModel LLAMA7 = { .name = L7, .num_layers = 32, .num_q_heads = 32,
                                   .num_kv_heads = 32, .embedding_dim = 4096,
                                   .mlp_hidden_dim = 11008, .max_position_embeddings = 4096,
                                   .vocab_size = 32000, .use_gated_mlp = TRUE,
                                   .post_attn_norm = TRUE };
/* Llama-2-70B's shape: grouped-query attention, 64 query heads on 8 KV heads. */
static const CsLlmModel LLAMA70 = { .name = L70, .num_layers = 80, .num_q_heads = 64,
                                    .num_kv_heads = 8, .embedding_dim = 8192,
                                    .mlp_hidden_dim = 28672, .max_position_embeddings = 4096,
                                    .vocab_size = 32000, .use_gated_mlp = TRUE,
                                    .post_attn_norm = TRUE };

static void assert_has(const GError *e, const char *want)
{
  assert_non_null(e);
  if (!strstr(e->message, want))
    print_error("missing \"%s\" in: %s\n", want, e->message);
  assert_non_null(strstr(e->message, want));
}

/* text with its one occurrence of from replaced by to (g_free it). */
static char *replace(const char *text, const char *from, const char *to)
{
  const char *at = strstr(text, from);
  assert_non_null(at);
  assert_null(strstr(at + 1, from));
  return g_strdup_printf("%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
}

static CsLlmAttention *load_text(const char *text)
{
  GError *e = NULL;
  CsLlmAttention *a = cs_llm_attention_load_data(text, "att.json", &e);
  if (!a)
    print_error("%s\n", e->message);
  assert_non_null(a);
  return a;
}

static void test_load_and_lookup(void **state)
{
  (void)state;
  /* Through a file once. */
  GError *e = NULL;
  char *dir = g_dir_make_tmp("test_llm_attention_XXXXXX", &e);
  assert_non_null(dir);
  char *path = g_build_filename(dir, "att.json", NULL);
  assert_true(g_file_set_contents(path, ATT_JSON, -1, &e));
  CsLlmAttention *a = cs_llm_attention_load(path, &e);
  assert_non_null(a);
  assert_string_equal(cs_llm_attention_file(a), path);
  assert_string_equal(cs_llm_attention_gpu(a), "a100");
  assert_string_equal(cs_llm_attention_model(a), L7);
  assert_int_equal(cs_llm_attention_tp(a), 1);
  assert_non_null(strstr(cs_llm_attention_source(a), ": test fixture"));
  cs_llm_attention_free(a);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
  assert_null(cs_llm_attention_load("no/such/attention.json", &e));
  assert_true(g_error_matches(e, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  g_clear_error(&e);

  a = load_text(ATT_JSON);
  double ms = -1;
  /* Exact at grid points, corners included. */
  assert_true(cs_llm_attention_decode_ms(a, 1, 64, &ms, &e));
  assert_close(ms, 0.010);
  assert_true(cs_llm_attention_decode_ms(a, 4, 256, &ms, &e));
  assert_close(ms, 0.044);
  assert_true(cs_llm_attention_decode_ms(a, 2, 128, &ms, &e));
  assert_close(ms, 0.016);
  assert_true(cs_llm_attention_prefill_ms(a, 512, 256, &ms, &e));
  assert_close(ms, 0.200);
  assert_true(cs_llm_attention_prefill_ms(a, 256, 512, &ms, &e));
  assert_close(ms, 0.090);
  /* The middle of the cell batch 2..4 x kv 64..128: the mean of its
   * corners, (0.012 + 0.016 + 0.016 + 0.024) / 4 = 0.017. */
  assert_true(cs_llm_attention_decode_ms(a, 3, 96, &ms, &e));
  assert_close(ms, 0.017);
  /* Batch 3, kv 192: row 128 at batch 3 is 0.020, row 256 is 0.036, and
   * half way between them 0.028. */
  assert_true(cs_llm_attention_decode_ms(a, 3, 192, &ms, &e));
  assert_close(ms, 0.028);
  /* Prefill chunk 192, kv 128: (0.020 + 0.050 + 0.030 + 0.070) / 4. */
  assert_true(cs_llm_attention_prefill_ms(a, 192, 128, &ms, &e));
  assert_close(ms, 0.0425);
  /* On a grid line with a null cell beside it: kv 256 exactly, chunk 400
   * (of 256..512): 0.070 + (0.200 - 0.070) * 144 / 256 = 0.143125; chunk
   * 256 exactly, kv 400: 0.070 + (0.090 - 0.070) * 144 / 256 = 0.08125. */
  assert_true(cs_llm_attention_prefill_ms(a, 400, 256, &ms, &e));
  assert_close(ms, 0.143125);
  assert_true(cs_llm_attention_prefill_ms(a, 256, 400, &ms, &e));
  assert_close(ms, 0.08125);

  /* Inside that cell, off its profiled edges: refused, though 300 + 300
   * is within max_model_len. */
  assert_false(cs_llm_attention_prefill_ms(a, 300, 300, &ms, &e));
  assert_has(e, "att.json: prefill attention at chunk 300, kv 300: its cell (chunk 256 to 512, "
                "kv 256 to 512) lacks (chunk 512, kv 512), beyond max_model_len 768; refused "
                "rather than extrapolated (profiled: prefill_chunk_size 128 to 512, "
                "kv_cache_size 0 to 512 where chunk + kv <= 768)");
  g_clear_error(&e);
  assert_false(cs_llm_attention_prefill_ms(a, 512, 300, &ms, &e));
  assert_has(e, "lacks (chunk 512, kv 512)");
  g_clear_error(&e);
  assert_false(cs_llm_attention_prefill_ms(a, 512, 512, &ms, &e));
  assert_has(e, "at chunk 512, kv 512: its cell (chunk 512 to 512, kv 512 to 512) lacks");
  g_clear_error(&e);
  /* Outside the grid, each side. */
  assert_false(cs_llm_attention_decode_ms(a, 5, 128, &ms, &e));
  assert_has(e, "att.json: decode attention at batch 5, kv 128: outside the profiled grid "
                "(batch_size 1 to 4, kv_cache_size 64 to 256; no extrapolation)");
  g_clear_error(&e);
  assert_false(cs_llm_attention_decode_ms(a, 1, 32, &ms, &e));
  assert_has(e, "decode attention at batch 1, kv 32: outside");
  g_clear_error(&e);
  assert_false(cs_llm_attention_decode_ms(a, 0, 64, &ms, &e));
  assert_has(e, "decode attention at batch 0, kv 64: outside");
  g_clear_error(&e);
  assert_false(cs_llm_attention_prefill_ms(a, 64, 0, &ms, &e));
  assert_has(e, "prefill attention at chunk 64, kv 0: outside the profiled grid "
                "(prefill_chunk_size 128 to 512, kv_cache_size 0 to 512");
  g_clear_error(&e);
  assert_false(cs_llm_attention_prefill_ms(a, 128, 513, &ms, &e));
  assert_has(e, "prefill attention at chunk 128, kv 513: outside");
  g_clear_error(&e);

  /* The model and TP check. */
  assert_true(cs_llm_attention_check(a, &LLAMA7, 1, &e));
  assert_false(cs_llm_attention_check(a, &LLAMA7, 2, &e));
  assert_has(e, "att.json: tp: expected 2 (the replica's TP for " L7 "), got 1");
  g_clear_error(&e);
  assert_false(cs_llm_attention_check(a, &LLAMA70, 1, &e));
  assert_has(e, "att.json: model: expected \"" L70 "\", got \"" L7 "\"");
  g_clear_error(&e);
  cs_llm_attention_free(a);

  char *rel = cs_llm_attention_rel_path("a100", L7);
  assert_string_equal(rel, "attention/a100/meta-llama__Llama-2-7b-hf.json");
  g_free(rel);
}

/* The grid's edge for points off it (CS_LLM_ATTN_CLAMP_OUTSIDE): each
 * value below is the table's at the edge point named, worked from
 * ATT_JSON by hand. */
static void test_clamp_outside(void **state)
{
  (void)state;
  GError *e = NULL;
  CsLlmAttentionOutside mode = CS_LLM_ATTN_REFUSE_OUTSIDE;
  assert_true(cs_llm_attention_outside_parse("clamp", &mode, &e));
  assert_int_equal(mode, CS_LLM_ATTN_CLAMP_OUTSIDE);
  assert_true(cs_llm_attention_outside_parse("refuse", &mode, &e));
  assert_int_equal(mode, CS_LLM_ATTN_REFUSE_OUTSIDE);
  assert_false(cs_llm_attention_outside_parse("extrapolate", &mode, &e));
  assert_has(e, "\"extrapolate\": expected \"refuse\" or \"clamp\"");
  g_clear_error(&e);

  CsLlmAttention *a = load_text(ATT_JSON);
  cs_llm_attention_set_outside(a, CS_LLM_ATTN_CLAMP_OUTSIDE);
  double ms = -1;
  /* Batch 5 -> 4 at kv 128: 0.024; kv 32 -> 64 at batch 1: 0.010; both
   * axes, batch 9 kv 1000 -> (4, 256): 0.044; batch 3 kv 1000 -> kv 256,
   * half way between batch 2 and 4: (0.028 + 0.044) / 2 = 0.036. */
  assert_true(cs_llm_attention_decode_ms(a, 5, 128, &ms, &e));
  assert_close(ms, 0.024);
  assert_true(cs_llm_attention_decode_ms(a, 1, 32, &ms, &e));
  assert_close(ms, 0.010);
  assert_true(cs_llm_attention_decode_ms(a, 9, 1000, &ms, &e));
  assert_close(ms, 0.044);
  assert_true(cs_llm_attention_decode_ms(a, 3, 1000, &ms, &e));
  assert_close(ms, 0.036);
  /* Inside the grid nothing changes: the cell's middle as before. */
  assert_true(cs_llm_attention_decode_ms(a, 3, 96, &ms, &e));
  assert_close(ms, 0.017);
  /* Prefill chunk 64 -> 128 at kv 0: 0.020; chunk 64 at kv 768 -> (128,
   * 512): 0.040. A null corner is refused still: chunk 600 -> 512 at kv
   * 512 is the triangle's null. */
  assert_true(cs_llm_attention_prefill_ms(a, 64, 0, &ms, &e));
  assert_close(ms, 0.020);
  assert_true(cs_llm_attention_prefill_ms(a, 64, 768, &ms, &e));
  assert_close(ms, 0.040);
  assert_false(cs_llm_attention_prefill_ms(a, 600, 512, &ms, &e));
  assert_has(e, "at chunk 512, kv 512: its cell (chunk 512 to 512, kv 512 to 512) lacks");
  g_clear_error(&e);

  /* A batch counts its lookups that moved: 8 decodes of 1000 processed
   * (kv 1024 -> 256, batch 8 -> 4) and a prefill of 64 (-> 128), 2; three
   * decodes of 100 (kv 128, inside), 0. Times as above: 0.044 x 1 (not GQA)
   * + 0.020. */
  CsLlmBatchRequest reqs[9];
  for (int i = 0; i < 8; i++)
    reqs[i] = (CsLlmBatchRequest){ .num_tokens = 1, .num_processed = 1000,
                                   .prefill_complete = TRUE };
  reqs[8] = (CsLlmBatchRequest){ .num_tokens = 64, .num_processed = 0 };
  CsLlmBatchAttention t;
  assert_true(cs_llm_attention_batch(a, &LLAMA7, reqs, 9, &t, &e));
  assert_int_equal(t.clamped, 2);
  assert_close(t.total_ms, 0.044 + 0.020);
  for (int i = 0; i < 3; i++)
    reqs[i].num_processed = 100;
  assert_true(cs_llm_attention_batch(a, &LLAMA7, reqs, 3, &t, &e));
  assert_int_equal(t.clamped, 0);
  /* Back to refusing: the same point fails, as by default. */
  cs_llm_attention_set_outside(a, CS_LLM_ATTN_REFUSE_OUTSIDE);
  assert_false(cs_llm_attention_decode_ms(a, 5, 128, &ms, &e));
  assert_has(e, "outside the profiled grid");
  g_clear_error(&e);
  cs_llm_attention_free(a);
}

static void test_bad_files(void **state)
{
  (void)state;
  const struct {
    const char *from, *to, *want;
  } cases[] = {
    { "\"clustersim-llm-attention\"", "\"clustersim-llm-ops\"",
      "att.json: format: expected \"clustersim-llm-attention\", got \"clustersim-llm-ops\"" },
    { "\"version\": 1", "\"version\": 2", "att.json: version: unsupported version 2" },
    { "\"block_size\"", "\"blok_size\"", "att.json: unknown field \"blok_size\"" },
    { "\"tp\": 1", "\"tp\": 0", "att.json: tp: expected an integer in [1," },
    { "\"max_model_len\": 768", "\"max_model_len\": \"768\"", "att.json: max_model_len:" },
    { "\"attention_backend\": \"FLASH\"", "\"attention_backend\": \"\"",
      "att.json: attention_backend:" },
    { " \"decode\": {", " \"decod\": {", "att.json: unknown field \"decod\"" },
    { "[64, 128, 256]", "[64, 256, 128]",
      "att.json: decode.kv_cache_size[2]: expected ascending values without repeats: a value "
      "> 256 (the previous one), got 128" },
    { "[64, 128, 256]", "[64, 64, 256]", "att.json: decode.kv_cache_size[1]: expected ascending" },
    { "[1, 2, 4]", "[0, 2, 4]", "att.json: decode.batch_size[0]: expected an integer in [1," },
    { "[0, 256, 512]", "[-1, 256, 512]",
      "att.json: prefill.kv_cache_size[0]: expected an integer in [0," },
    { "[128, 256, 512]", "[]",
      "att.json: prefill.prefill_chunk_size: expected a non-empty array, got an empty array" },
    { "[[0.010, 0.012, 0.016],", "[[0.010, 0.012],",
      "att.json: decode.median_ms[0]: expected 3 values, one per batch_size, got 2" },
    { "[0.040, 0.090, null]", "[0.040, 0.090, null, 0.3]",
      "att.json: prefill.median_ms[2]: expected 3 values, one per prefill_chunk_size, got 4" },
    { "[0.020, 0.028, 0.044]]", "0.020]",
      "att.json: decode.median_ms[2]: expected an array of 3 values, one per batch_size, got "
      "a number" },
    { ",\n                [0.040, 0.090, null]]", "]",
      "att.json: prefill.median_ms: expected 3 rows, one per kv_cache_size, got 2" },
    /* A null where chunk + kv is within max_model_len, in either grid. */
    { "[0.020, 0.050, 0.150]", "[0.020, 0.050, null]",
      "att.json: prefill.median_ms[0][2]: expected a time in ms > 0 (chunk 512 + kv 0 <= "
      "max_model_len 768), got null" },
    { "[[0.010, 0.012, 0.016]", "[[null, 0.012, 0.016]",
      "att.json: decode.median_ms[0][0]: expected a time in ms > 0, got null" },
    /* A number where it must be null. */
    { "[0.040, 0.090, null]", "[0.040, 0.090, 0.3]",
      "att.json: prefill.median_ms[2][2]: expected null (chunk 512 + kv 512 > max_model_len "
      "768: not profiled), got a number" },
    { "[0.012, 0.016, 0.024]", "[0.012, 0, 0.024]",
      "att.json: decode.median_ms[1][1]: expected a time in ms > 0, got 0" },
    { "[0.012, 0.016, 0.024]", "[0.012, -0.016, 0.024]", "att.json: decode.median_ms[1][1]:" },
    { "[0.012, 0.016, 0.024]", "[0.012, \"0.016\", 0.024]",
      "att.json: decode.median_ms[1][1]:" },
    { "[0.012, 0.016, 0.024]", "[0.012, 1e999, 0.024]",
      "att.json: decode.median_ms[1][1]: expected a finite number" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *text = replace(ATT_JSON, cases[i].from, cases[i].to);
    GError *e = NULL;
    CsLlmAttention *a = cs_llm_attention_load_data(text, "att.json", &e);
    if (a)
      print_error("case %zu loaded\n", i);
    assert_null(a);
    assert_has(e, cases[i].want);
    g_clear_error(&e);
    g_free(text);
  }
  /* A missing grid, a grid not an object, not JSON. */
  const struct {
    const char *text, *want;
  } whole[] = {
    { "{\"format\": \"clustersim-llm-attention\", \"version\": 1, \"source\": \"s\", \"gpu\": "
      "\"a100\", \"model\": \"m\", \"tp\": 1, \"block_size\": 16, \"max_model_len\": 8, "
      "\"attention_backend\": \"b\"}",
      "att.json: decode: required field is missing" },
    { "{\"format\": \"clustersim-llm-attention\", \"version\": 1, \"source\": \"s\", \"gpu\": "
      "\"a100\", \"model\": \"m\", \"tp\": 1, \"block_size\": 16, \"max_model_len\": 8, "
      "\"attention_backend\": \"b\", \"decode\": []}",
      "att.json: decode:" },
    { "{\"format\": ", "att.json" },
    { "[]", "att.json" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(whole); i++) {
    GError *e = NULL;
    assert_null(cs_llm_attention_load_data(whole[i].text, "att.json", &e));
    assert_has(e, whole[i].want);
    g_clear_error(&e);
  }
}

#define REQ_DECODE(p) { .num_tokens = 1, .num_processed = (p), .prefill_complete = TRUE }
#define REQ_PREFILL(c, p) { .num_tokens = (c), .num_processed = (p), .prefill_complete = FALSE }

static void test_batch(void **state)
{
  (void)state;
  CsLlmAttention *a = load_text(ATT_JSON);
  GError *e = NULL;
  CsLlmBatchAttention t;

  /* Two decodes, 65 and 66 processed: mean 65.5, truncated 65, rounded up
   * to 128: decode(2, 128) = 0.016; Llama-2-7B is not GQA (32 = 32 heads),
   * so no factor. */
  CsLlmBatchRequest d2[] = { REQ_DECODE(65), REQ_DECODE(66) };
  assert_true(cs_llm_attention_batch(a, &LLAMA7, d2, 2, &t, &e));
  assert_int_equal(t.decode_batch, 2);
  assert_int_equal(t.decode_kv, 128);
  assert_close(t.decode_ms, 0.016);
  assert_int_equal(t.num_prefills, 0);
  assert_close(t.prefill_ms, 0);
  assert_close(t.kv_cache_save_ms, 0);
  assert_close(t.total_ms, 0.016);
  /* 64 and 65: mean 64.5, truncated to 64 first, which is a multiple of
   * 64: kv 64 (not 128, which rounding the mean itself up would give):
   * decode(2, 64) = 0.012. Exactly 128 stays 128. */
  CsLlmBatchRequest d3[] = { REQ_DECODE(64), REQ_DECODE(65) };
  assert_true(cs_llm_attention_batch(a, &LLAMA7, d3, 2, &t, &e));
  assert_int_equal(t.decode_kv, 64);
  assert_close(t.decode_ms, 0.012);
  CsLlmBatchRequest d4[] = { REQ_DECODE(128) };
  assert_true(cs_llm_attention_batch(a, &LLAMA7, d4, 1, &t, &e));
  assert_int_equal(t.decode_kv, 128);
  assert_close(t.decode_ms, 0.012);

  /* Two prefills of 300 and 400 tokens from scratch: chunk_eq =
   * sqrt(90000 + 160000) = 500, kv_sum 0: prefill(500, 0) = 0.050 +
   * (0.150 - 0.050) * 244 / 256 = 0.1453125. */
  CsLlmBatchRequest p2[] = { REQ_PREFILL(300, 0), REQ_PREFILL(400, 0) };
  assert_true(cs_llm_attention_batch(a, &LLAMA7, p2, 2, &t, &e));
  assert_int_equal(t.num_prefills, 2);
  assert_int_equal(t.prefill_chunk_eq, 500);
  assert_int_equal(t.prefill_kv_sum, 0);
  assert_close(t.prefill_ms, 0.1453125);
  assert_int_equal(t.decode_batch, 0);
  assert_close(t.total_ms, 0.1453125);
  /* Chunks of 96 and 128 after 1 and 65 processed: each kv rounded up
   * before the sum, 64 + 128 = 192 (the sum 66 rounded would be 128);
   * chunk_eq sqrt(9216 + 16384) = 160. Bilinear at (160, 192): row kv 0
   * 0.020 + 0.030 * 32/128 = 0.0275, row 256 0.030 + 0.040 / 4 = 0.040,
   * then 0.0275 + (0.040 - 0.0275) * 192/256 = 0.036875. With two
   * decodes (65, 66: 0.016 as above) the total is 0.052875. */
  CsLlmBatchRequest mix[] = { REQ_DECODE(65), REQ_PREFILL(96, 1), REQ_DECODE(66),
                              REQ_PREFILL(128, 65) };
  assert_true(cs_llm_attention_batch(a, &LLAMA7, mix, 4, &t, &e));
  assert_int_equal(t.prefill_kv_sum, 192);
  assert_int_equal(t.prefill_chunk_eq, 160);
  assert_close(t.prefill_ms, 0.036875);
  assert_int_equal(t.decode_batch, 2);
  assert_close(t.decode_ms, 0.016);
  assert_close(t.total_ms, 0.052875);
  /* chunk_eq is the nearest integer: 200 and 201 give sqrt(80401) =
   * 283.55..., 284. */
  CsLlmBatchRequest p3[] = { REQ_PREFILL(200, 0), REQ_PREFILL(201, 0) };
  assert_true(cs_llm_attention_batch(a, &LLAMA7, p3, 2, &t, &e));
  assert_int_equal(t.prefill_chunk_eq, 284);
  /* Exact at the largest chunks: (2^20 - 1)^2 + 2^40 = 2199021158401,
   * sqrt 1482909.69..., 1482910 (named in the error, beyond the grid). */
  CsLlmBatchRequest big[] = { REQ_PREFILL(CS_LLM_BATCH_MAX_TOKENS - 1, 0),
                              REQ_PREFILL(CS_LLM_BATCH_MAX_TOKENS, 0) };
  assert_false(cs_llm_attention_batch(a, &LLAMA7, big, 2, &t, &e));
  assert_has(e, "att.json: prefill attention at chunk 1482910, kv 0: outside the profiled grid");
  assert_has(e, "(the batch's 2 prefills as one: chunk round(sqrt(2199021158401)) and kv the "
                "sum of each one's processed tokens rounded up to a multiple of 64)");
  g_clear_error(&e);

  /* GQA (Llama-2-70B's 64 query on 8 KV heads): x 1.1 with more than one
   * request of a phase, x 1 with one. The table's model is not checked
   * here, only the heads are read. */
  assert_true(cs_llm_attention_batch(a, &LLAMA70, d2, 2, &t, &e));
  assert_close(t.decode_ms, 0.016 * 1.1);
  assert_true(cs_llm_attention_batch(a, &LLAMA70, d4, 1, &t, &e));
  assert_close(t.decode_ms, 0.012);
  assert_true(cs_llm_attention_batch(a, &LLAMA70, p2, 2, &t, &e));
  assert_close(t.prefill_ms, 0.1453125 * 1.1);
  CsLlmBatchRequest p1[] = { REQ_PREFILL(500, 0) };
  assert_true(cs_llm_attention_batch(a, &LLAMA70, p1, 1, &t, &e));
  assert_close(t.prefill_ms, 0.1453125);
  /* One decode and one prefill: one of each phase, no factor on either:
   * decode(1, 128) = 0.012 and prefill(500, 0). */
  CsLlmBatchRequest one_each[] = { REQ_DECODE(100), REQ_PREFILL(500, 0) };
  assert_true(cs_llm_attention_batch(a, &LLAMA70, one_each, 2, &t, &e));
  assert_close(t.total_ms, 0.012 + 0.1453125);

  /* Bad requests and failed lookups. */
  assert_false(cs_llm_attention_batch(a, &LLAMA7, d2, 0, &t, &e));
  assert_has(e, "att.json: a batch of 0 requests: expected 1 to 1048576");
  g_clear_error(&e);
  const struct {
    CsLlmBatchRequest r;
    const char *want;
  } bad[] = {
    { { 2, 100, TRUE }, "att.json: request 1 of the batch (decoding): expected 1 token this "
                        "iteration and 1 to 2^40 tokens processed, got 2 tokens and 100 "
                        "processed" },
    { { 1, 0, TRUE }, "request 1 of the batch (decoding): expected 1 token" },
    { { 0, 0, FALSE }, "request 1 of the batch (prefilling): expected 1 to 2^20 tokens this "
                       "iteration and 0 to 2^40 tokens processed, got 0 tokens and 0 "
                       "processed" },
    { { CS_LLM_BATCH_MAX_TOKENS + 1, 0, FALSE }, "got 1048577 tokens" },
    { { 128, -1, FALSE }, "got 128 tokens and -1 processed" },
    { { 128, (INT64_C(1) << 40) + 1, FALSE }, "and 1099511627777 processed" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    CsLlmBatchRequest r[] = { REQ_DECODE(65), bad[i].r };
    assert_false(cs_llm_attention_batch(a, &LLAMA7, r, 2, &t, &e));
    assert_has(e, bad[i].want);
    g_clear_error(&e);
  }
  /* Five decodes: batch 5 beyond the grid's 4. */
  CsLlmBatchRequest d5[] = { REQ_DECODE(65), REQ_DECODE(65), REQ_DECODE(65), REQ_DECODE(65),
                             REQ_DECODE(65) };
  assert_false(cs_llm_attention_batch(a, &LLAMA7, d5, 5, &t, &e));
  assert_has(e, "att.json: decode attention at batch 5, kv 128: outside the profiled grid "
                "(batch_size 1 to 4, kv_cache_size 64 to 256; no extrapolation) (the batch's "
                "5 decoding requests, 325 tokens processed in all, looked up at their mean "
                "rounded up to a multiple of 64)");
  g_clear_error(&e);
  /* Two prefills after 300 processed each: kv 320 + 320 = 640 > 512. */
  CsLlmBatchRequest pk[] = { REQ_PREFILL(128, 300), REQ_PREFILL(128, 300) };
  assert_false(cs_llm_attention_batch(a, &LLAMA7, pk, 2, &t, &e));
  assert_has(e, "prefill attention at chunk 181, kv 640: outside");
  g_clear_error(&e);
  cs_llm_attention_free(a);
}

static char *llm_path(const char *rel)
{
  const char *root = g_getenv("CS_SOURCE_ROOT");
  if (!root) {
    print_error("CS_SOURCE_ROOT is not set (run through meson test)\n");
    fail();
  }
  return g_build_filename(root, "data", "llm", rel, NULL);
}

static void *checked(void *p, GError *e)
{
  if (!p)
    print_error("%s\n", e->message);
  assert_non_null(p);
  return p;
}

/* The shipped sample (values copied from its JSON) and one batch of
 * Llama-2-7B on an a100 at TP1 timed end to end. */
static void test_shipped(void **state)
{
  (void)state;
  GError *e = NULL;
  char *rel = cs_llm_attention_rel_path("a100", L7);
  char *apath = llm_path(rel);
  CsLlmAttention *a = checked(cs_llm_attention_load(apath, &e), e);
  double ms = 0;
  const struct {
    gboolean decode;
    int64_t col, kv;
    double ms;
  } points[] = {
    { TRUE, 1, 32, 0.009000000000000001 }, { TRUE, 32, 512, 0.185 },
    { TRUE, 128, 4032, 4.227 },            { TRUE, 96, 3008, 2.475 },
    { TRUE, 16, 1024, 0.187 },             { FALSE, 64, 0, 0.015 },
    { FALSE, 4096, 0, 2.742 },             { FALSE, 1024, 3072, 0.616 },
    { FALSE, 2048, 2048, 1.21 },           { FALSE, 512, 256, 0.12 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(points); i++) {
    gboolean ok = points[i].decode
                    ? cs_llm_attention_decode_ms(a, points[i].col, points[i].kv, &ms, &e)
                    : cs_llm_attention_prefill_ms(a, points[i].col, points[i].kv, &ms, &e);
    if (!ok)
      print_error("%s\n", e->message);
    assert_true(ok);
    assert_true(ms == points[i].ms);
  }
  /* Decode batch 24, kv 768, the middle of batch 16..32 x kv 512..1024:
   * (0.11 + 0.185 + 0.187 + 0.324) / 4 = 0.2015. Prefill chunk 3000 at kv
   * 0, on the kv-0 line: 0.781 + (2.742 - 0.781) * 952 / 2048 =
   * 1.69255859375; at kv 100 its cell lacks (4096, 256). */
  assert_true(cs_llm_attention_decode_ms(a, 24, 768, &ms, &e));
  assert_close(ms, 0.2015);
  assert_true(cs_llm_attention_prefill_ms(a, 3000, 0, &ms, &e));
  assert_close(ms, 1.69255859375);
  assert_false(cs_llm_attention_prefill_ms(a, 3000, 100, &ms, &e));
  assert_has(e, "prefill attention at chunk 3000, kv 100: its cell (chunk 2048 to 4096, kv 0 "
                "to 256) lacks (chunk 4096, kv 256), beyond max_model_len 4096");
  g_clear_error(&e);
  /* Decodes with 4033 processed round to 4096, beyond the sample's 4032. */
  assert_false(cs_llm_attention_decode_ms(a, 1, 4096, &ms, &e));
  assert_has(e, "outside the profiled grid (batch_size 1 to 128, kv_cache_size 32 to 4032");
  g_clear_error(&e);

  char *mpath = llm_path("models.json");
  char *orel = cs_llm_ops_rel_path("a100", L7);
  char *opath = llm_path(orel);
  CsLlmModelSet *set = checked(cs_llm_models_load(mpath, &e), e);
  CsLlmOps *ops = checked(cs_llm_ops_load(opath, &e), e);
  const CsLlmModel *m = checked((void *)cs_llm_models_find_model(set, L7, &e), e);
  CsLlmExecConfig cfg = { .model = m, .ops = ops, .devices_per_node = 4, .tp = 1, .pp = 1,
                          .attention = a };
  CsLlmExec *x = checked(cs_llm_exec_new(&cfg, &e), e);
  /* 32 decoding requests with 512 processed each: N = 32, N8 = 32;
   * attention decode(32, 512) = 0.185 (no GQA factor: 32 query = 32 KV
   * heads); the ops at 32 tokens (ops/a100/meta-llama__Llama-2-7b-hf.json,
   * TP1, num_tokens[6] = 32): input_layernorm 0.004 + attn_pre_proj 0.066
   * + attn_rope 0.006 + attn_post_proj 0.027 + post_attention_layernorm
   * 0.005 + mlp_up_proj 0.115 + mlp_act 0.008 + mlp_down_proj 0.065 + add
   * 0.002 = 0.298 ms; a layer 0.298 + 0.185 = 0.483 ms, x 32 layers =
   * 15.456 ms (attention 5.92 ms of it); TP1: no all-reduce; PP1: no send. */
  CsLlmBatchRequest reqs[32];
  for (int i = 0; i < 32; i++)
    reqs[i] = (CsLlmBatchRequest)REQ_DECODE(512);
  CsLlmStageTime t;
  CsLlmBatchAttention at;
  assert_true(cs_llm_exec_batch_time(x, reqs, 32, 0, &t, &at, &e));
  assert_int_equal(t.num_tokens, 32);
  assert_int_equal(t.num_tokens_rounded, 32);
  assert_int_equal(at.decode_batch, 32);
  assert_int_equal(at.decode_kv, 512);
  assert_true(at.decode_ms == 0.185);
  assert_close(t.attention_ms, 0.185 * 32);
  assert_close(t.total_ms, 15.456);
  assert_close(t.all_reduce_ms, 0);
  /* The detail is optional. Adding a prefill of 100 tokens from scratch:
   * N = 132, N8 = 136. */
  CsLlmBatchRequest more[33];
  memcpy(more, reqs, sizeof reqs);
  more[32] = (CsLlmBatchRequest)REQ_PREFILL(100, 0);
  assert_true(cs_llm_exec_batch_time(x, more, 33, 0, &t, NULL, &e));
  assert_int_equal(t.num_tokens, 132);
  assert_int_equal(t.num_tokens_rounded, 136);
  /* Errors pass through: a bad request, a stage beyond PP. */
  more[32].num_tokens = 0;
  assert_false(cs_llm_exec_batch_time(x, more, 33, 0, &t, NULL, &e));
  assert_has(e, "request 32 of the batch (prefilling)");
  g_clear_error(&e);
  assert_false(cs_llm_exec_batch_time(x, reqs, 32, 1, &t, NULL, &e));
  assert_has(e, "a stage of 0 to 0, got 32 tokens, 0.185 ms, stage 1");
  g_clear_error(&e);
  cs_llm_exec_free(x);

  /* Without an attention table, only the caller-given entry point. */
  cfg.attention = NULL;
  x = checked(cs_llm_exec_new(&cfg, &e), e);
  assert_false(cs_llm_exec_batch_time(x, reqs, 32, 0, &t, NULL, &e));
  assert_has(e, L7 " at TP1: no attention table was given");
  g_clear_error(&e);
  assert_true(cs_llm_exec_stage_time(x, 32, 0.185, 0, &t, &e));
  assert_close(t.total_ms, 15.456);
  cs_llm_exec_free(x);
  /* A table of another degree is refused when the replica is built. */
  cfg.attention = a;
  cfg.tp = 2;
  cfg.devices_per_node = 8;
  CsLlmCollectives *coll = NULL;
  char *cpath = llm_path("collectives/a100_dgx.json");
  coll = checked(cs_llm_collectives_load(cpath, &e), e);
  cfg.collectives = coll;
  assert_null(cs_llm_exec_new(&cfg, &e));
  assert_has(e, "meta-llama__Llama-2-7b-hf.json: tp: expected 2 (the replica's TP for " L7
                "), got 1");
  g_clear_error(&e);

  cs_llm_collectives_free(coll);
  cs_llm_ops_free(ops);
  cs_llm_models_free(set);
  cs_llm_attention_free(a);
  g_free(cpath);
  g_free(opath);
  g_free(orel);
  g_free(mpath);
  g_free(apath);
  g_free(rel);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_load_and_lookup),
    cmocka_unit_test(test_clamp_outside),
    cmocka_unit_test(test_bad_files),
    cmocka_unit_test(test_batch),
    cmocka_unit_test(test_shipped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
