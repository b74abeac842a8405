/* Profiled attention times of LLM inference (issue 38) and the attention
 * time of one batch, as Vidur derives it from a batch's requests
 * (docs/research/vidur.md section 3).
 *
 * An attention table (format "clustersim-llm-attention", data/llm/attention/,
 * fields in docs/llm.md "The formats") holds, for one GPU type, one model and
 * one tensor-parallel degree TP, two grids of median times in ms per layer
 * on one TP shard:
 *   decode   median_ms[kv][batch]: a batch of `batch` decoding requests,
 *            each with `kv` tokens in its KV cache (Vidur's attn_decode);
 *   prefill  median_ms[kv][chunk]: one request prefilling `chunk` tokens
 *            after `kv` already cached (attn_prefill); null exactly where
 *            chunk + kv > max_model_len, points Vidur does not profile.
 *
 * Lookup is bilinear on the grid: linear in the column (batch or chunk)
 * between the two profiled columns around the point, then linear in kv
 * between the two profiled rows around it; exact at a grid point, and
 * linear along a grid line. Vidur instead fits a random forest to the same
 * medians (features batch_size and kv_cache_size for decode, kv_cache_size
 * and prefill_chunk_size squared for prefill) and predicts it up front on a
 * grid of every batch 1..128 and chunk 1..4096 by every kv 0..4096 step 64;
 * a forest is piecewise constant, so its values step between profiled
 * points and need not equal them at one. Outside the profiled grid, either
 * axis, either end, a lookup is an error, not an extrapolation.
 *
 * The prefill triangle. A prefill point (chunk, kv) inside the grid whose
 * cell has a null corner (e.g. chunk 3000, kv 100 in the shipped sample:
 * the cell chunk 2048..4096 x kv 0..256 lacks (4096, 256)) is interpolated
 * only when every corner it draws on is profiled: that is, when the null
 * corners have bilinear weight 0, which happens on a grid line whose two
 * ends are profiled (kv exactly 0 with chunk 2048..4096 is linear between
 * (2048, 0) and (4096, 0)) or at a profiled point. Anywhere else in such a
 * cell the lookup is an error naming the point, the cell and the missing
 * corner. Why not fill the half-cell (a plane through the three profiled
 * corners, or a guess at the null): the missing value is not a measurement
 * that could be reproduced, the profiled grid (a sample of Vidur's) is
 * coarse there, and a full table (chunk and kv by 64 or less) would have
 * the points; a refusal says that, a made-up value would hide it.
 *
 * A batch's attention (cs_llm_attention_batch) follows Vidur's
 * SklearnExecutionTimePredictor (vidur/execution_time_predictor/
 * sklearn_execution_time_predictor.py: _get_batch_decode_attention_params,
 * _get_batch_prefill_attention_params, _get_attention_decode_execution_time,
 * _get_attention_prefill_execution_time; defaults in vidur/config/config.py;
 * a request's counters in vidur/entities/batch.py and request.py), with G =
 * kv_cache_prediction_granularity = 64 and ceil_G(x) = x rounded up to a
 * multiple of G:
 *   decode   the requests whose prefill is complete, B of them:
 *            kv = ceil_G(floor(mean of their processed tokens))  (the mean
 *            truncated to an integer first, then rounded up: a mean of
 *            64.5 gives 64, not 128); decode_ms = decode(B, kv), times
 *            1.1 when B > 1 and the model is GQA (num_q_heads >
 *            num_kv_heads), else 1; 0 when B = 0.
 *   prefill  the others, P of them, request i prefilling c_i tokens after
 *            p_i processed: kv_sum = sum of ceil_G(p_i) (each rounded up
 *            before summing), chunk_eq = round(sqrt(sum of c_i^2)) (the
 *            nearest integer: sqrt of an integer is never halfway between
 *            two, so the rounding rule does not matter, and it is computed
 *            exactly); prefill_ms = prefill(chunk_eq, kv_sum), times 1.1
 *            when P > 1 and GQA, else 1; 0 when P = 0. (Vidur looks up
 *            chunk_eq^2 in its chunk-squared feature: the same point.)
 *   save     the KV-cache save, 0: Vidur's shipped profiles time it 0.
 *   total    decode_ms + prefill_ms + save, per layer.
 * 1.1 is 1 + Vidur's attention_{decode,prefill}_batching_overhead_fraction
 * (0.1 by default), applied to GQA models only.
 *
 * Tables are immutable once loaded; nothing is global.
 */
#ifndef CS_LLM_ATTENTION_H
#define CS_LLM_ATTENTION_H

#include <glib.h>
#include <stdint.h>

#include "llm_model.h"

G_BEGIN_DECLS

#define CS_LLM_ATTENTION_FORMAT "clustersim-llm-attention"

/* Vidur's kv_cache_prediction_granularity: KV sizes are looked up rounded
 * up to a multiple of it. */
#define CS_LLM_KV_GRANULARITY 64

/* Vidur's attention_decode_batching_overhead_fraction and
 * attention_prefill_batching_overhead_fraction (GQA models only). */
#define CS_LLM_ATTN_BATCHING_OVERHEAD 0.1

typedef struct CsLlmAttention CsLlmAttention;

/* Loads an attention table. Returns it (cs_llm_attention_free) or NULL with
 * error set (CS_INPUT_ERROR) when the file cannot be read, is not JSON, or
 * is not a valid table of version 1. Each problem names the file and the
 * field's JSON path (e.g. "prefill.median_ms[2][6]") with what was
 * expected: gpu, model and attention_backend non-empty strings; tp,
 * block_size and max_model_len integers >= 1; per grid, batch_size and
 * prefill_chunk_size integers >= 1 and kv_cache_size integers >= 0, each
 * strictly ascending; median_ms one row per kv_cache_size, each with one
 * value per column, finite numbers > 0, except a prefill value where chunk
 * + kv > max_model_len, which must be null (and only there). */
CsLlmAttention *cs_llm_attention_load(const char *path, GError **error);

/* The same from text in memory; name is the file name used in messages. */
CsLlmAttention *cs_llm_attention_load_data(const char *json, const char *name,
                                           GError **error);

void cs_llm_attention_free(CsLlmAttention *a);

/* The table's file name (as given), "gpu", "model", "tp", and "FILE: SOURCE". */
const char *cs_llm_attention_file(const CsLlmAttention *a);
const char *cs_llm_attention_gpu(const CsLlmAttention *a);
const char *cs_llm_attention_model(const CsLlmAttention *a);
int cs_llm_attention_tp(const CsLlmAttention *a);
const char *cs_llm_attention_source(const CsLlmAttention *a);

/* The data-directory name of a model's attention table for gpu:
 * "attention/GPU/MODEL.json", each "/" of the model name written "__"
 * (find it with cs_llm_data_find). g_free it. */
char *cs_llm_attention_rel_path(const char *gpu, const char *model);

/* Checks that the table was profiled for model m at degree tp: its "model"
 * is m's name (the file holds no shape of its own; the shape is m's) and
 * its "tp" equals tp. Returns FALSE with error set (CS_INPUT_ERROR_INVALID)
 * naming the file, the field and both values. */
gboolean cs_llm_attention_check(const CsLlmAttention *a, const CsLlmModel *m, int tp,
                                GError **error);

/* What a lookup does with a point off the profiled grid (below its first or
 * beyond its last batch, chunk or kv_cache_size):
 * - CS_LLM_ATTN_REFUSE_OUTSIDE (the default): fails, naming the point and
 *   the grid's range; nothing is made up.
 * - CS_LLM_ATTN_CLAMP_OUTSIDE: moves the point to the grid's nearest edge,
 *   axis by axis, and looks it up there: the constant extrapolation a
 *   piecewise-constant fit gives, as Vidur's random forests do beyond their
 *   training data. A batch says how many of its lookups were moved
 *   (CsLlmBatchAttention.clamped), so a run can say how often it relied on
 *   this. Null corners of the prefill triangle are refused either way. */
typedef enum {
  CS_LLM_ATTN_REFUSE_OUTSIDE,
  CS_LLM_ATTN_CLAMP_OUTSIDE,
} CsLlmAttentionOutside;

/* Sets how a's lookups treat a point off the grid (above). */
void cs_llm_attention_set_outside(CsLlmAttention *a, CsLlmAttentionOutside mode);

/* Parses "refuse" or "clamp". Returns FALSE with error set
 * (CS_INPUT_ERROR_INVALID) naming the value and the two known otherwise. */
gboolean cs_llm_attention_outside_parse(const char *name, CsLlmAttentionOutside *out,
                                        GError **error);

/* The decode attention time in ms per layer of batch decoding requests
 * with kv tokens cached each, bilinear on the decode grid. Returns TRUE
 * with *out_ms set, or FALSE with error set (CS_INPUT_ERROR_INVALID) naming
 * the file, the point and the grid's range when (batch, kv) lies outside
 * (and the mode, below, refuses it). */
gboolean cs_llm_attention_decode_ms(const CsLlmAttention *a, int64_t batch, int64_t kv,
                                    double *out_ms, GError **error);

/* The prefill attention time in ms per layer of one request prefilling
 * chunk tokens after kv cached, bilinear on the prefill grid. Returns TRUE
 * with *out_ms set, or FALSE with error set (CS_INPUT_ERROR_INVALID) naming
 * the file, the point and the grid's range when (chunk, kv) lies outside,
 * or the point, its cell and the missing corner when a corner it draws on
 * is null (the prefill triangle, above). */
gboolean cs_llm_attention_prefill_ms(const CsLlmAttention *a, int64_t chunk, int64_t kv,
                                     double *out_ms, GError **error);

/* One request of a batch, as the batch's iteration sees it. */
typedef struct {
  int64_t num_tokens;        /* tokens this iteration: the prompt chunk, or 1 when decoding */
  int64_t num_processed;     /* tokens processed before this iteration (Vidur's
                                num_processed_tokens) */
  gboolean prefill_complete; /* TRUE: the request decodes (Vidur's is_prefill_complete) */
} CsLlmBatchRequest;

/* The largest num_tokens and request count cs_llm_attention_batch takes:
 * they keep the sum of squared chunks inside int64. */
#define CS_LLM_BATCH_MAX_TOKENS (INT64_C(1) << 20)
#define CS_LLM_BATCH_MAX_REQUESTS (1 << 20)

/* A batch's attention, per layer, and the points it was looked up at. */
typedef struct {
  int decode_batch;          /* B: requests decoding */
  int64_t decode_kv;         /* ceil_G(floor(mean processed)) (0 when B = 0) */
  double decode_ms;          /* factor included; 0 when B = 0 */
  int num_prefills;          /* P */
  int64_t prefill_kv_sum;    /* sum of ceil_G(processed) (0 when P = 0) */
  int64_t prefill_chunk_eq;  /* round(sqrt(sum of chunk^2)) (0 when P = 0) */
  double prefill_ms;         /* factor included; 0 when P = 0 */
  double kv_cache_save_ms;   /* 0 (Vidur's shipped data) */
  double total_ms;           /* decode_ms + prefill_ms + kv_cache_save_ms */
  int clamped;               /* lookups moved to the grid's edge: 0, 1 or 2 (only under
                              * CS_LLM_ATTN_CLAMP_OUTSIDE) */
} CsLlmBatchAttention;

/* The attention time per layer of a batch of n requests (1 <= n <=
 * CS_LLM_BATCH_MAX_REQUESTS) of model m (only its heads are read: GQA or
 * not; the table should have passed cs_llm_attention_check for it), as
 * above. Returns TRUE with *out filled, or FALSE with error set
 * (CS_INPUT_ERROR_INVALID) when a request is out of range (num_tokens 1 to
 * CS_LLM_BATCH_MAX_TOKENS, exactly 1 when decoding; num_processed 0 to
 * 2^40, at least 1 when decoding), naming the request's index, or when a
 * lookup fails (the message of cs_llm_attention_decode_ms or _prefill_ms,
 * with the batch's counts). */
gboolean cs_llm_attention_batch(const CsLlmAttention *a, const CsLlmModel *m,
                                const CsLlmBatchRequest *reqs, int n, CsLlmBatchAttention *out,
                                GError **error);

G_END_DECLS

#endif
