/* Internal: "requests.synthetic.lengths" of an LLM config (docs/llm.md,
 * "clustersim llm run"): the prompt and output lengths of synthetic
 * requests taken from a trace's rows, as Vidur's trace length generator
 * takes them (vidur/request_generator/trace_request_length_generator.py),
 * while the arrivals are drawn (Poisson at the run's or a probe's rate).
 *
 * {"trace": PATH (relative to the config), "trace_format": "vidur" |
 * "azure_llm", "order": "shuffle" | "trace", "prefill_scale": 1,
 * "decode_scale": 1, "min_prompt_tokens": N, "max_prompt_tokens": N}.
 * Each row as Vidur's generator makes it: tokens x scale truncated; a row
 * over max_tokens loses ceil(excess x prompt / total) prompt tokens and
 * ceil(excess x output / total) output tokens (Vidur's cut in proportion;
 * trace_replay, "requests": {"trace"}, cuts the prompt alone); both clipped
 * to at least 1. Then (clustersim's, as for a trace) rows whose prompt lies
 * outside [min_prompt_tokens, max_prompt_tokens] are left out. "shuffle"
 * (the default, as Vidur shuffles its rows) puts the rows left in a random
 * order drawn from the stream "llm/length_order" of the synthetic seed
 * (Fisher-Yates; not pandas' permutation); "trace" keeps the file's. Request
 * i takes row i, so n is at most the rows left. */
#ifndef CS_SCENARIO_LLM_LENGTHS_H
#define CS_SCENARIO_LLM_LENGTHS_H

#include "llm_config.h"

/* Reads obj into r's len_prompt, len_output, n_len, lengths_path,
 * lengths_cut and lengths_skipped. FALSE with error "FILE: PATH: ..." on a
 * bad field or file, a row that cannot fit max_tokens, or no row left. */
gboolean cs_llm_lengths_read(CsLlmConfig *r, const cJSON *obj, const char *file,
                             const char *dir, int max_tokens, uint64_t seed, GError **error);

#endif
