/* The config of a cluster of identical LLM replicas (docs/llm.md,
 * "clustersim llm run"): read and checked once, with the data files it
 * names loaded, and the request list it describes built on demand, at the
 * config's arrival rate or another one (the capacity search's probes,
 * experiment/llm_search.h).
 *
 * Synthetic requests draw from the project's random streams (sim/rng.h),
 * one a quantity, as the engine's clients do: "llm/arrivals" (the
 * intervals), "llm/prompt_tokens" and "llm/output_tokens" (the lengths),
 * each seeded from (requests.synthetic.seed, its name). So the lengths do
 * not depend on the rate: two rates give the same requests at other times
 * (common random numbers for a search). An interval is Vidur's capped
 * exponential, min(-ln(1 - U) / qps, 3 / qps) (vidur/utils/random.py's
 * Poisson generator; docs/research/vidur.md section 5); a length uniform
 * on [MIN, MAX] is MIN + floor(U x (MAX - MIN + 1)). They are not Vidur's
 * draws (Python's random). */
#ifndef CS_SCENARIO_LLM_CONFIG_H
#define CS_SCENARIO_LLM_CONFIG_H

#include <cjson/cJSON.h>
#include <glib.h>
#include <stdint.h>

#include "llm/llm_attention.h"
#include "llm/llm_iteration.h"
#include "llm/llm_model.h"
#include "llm/llm_ops.h"
#include "clustersim/registry.h"
#include "llm/llm_sim.h"

G_BEGIN_DECLS

typedef struct {
  cJSON *root;                 /* the config as read (owned), for provenance */
  char *file;                  /* the name messages give it */
  CsLlmModelSet *models;
  CsLlmOps *ops;
  CsLlmAttention *att;
  CsLlmAttentionOutside attention_outside; /* "attention_outside_grid": refuse or clamp */
  CsLlmCollectives *coll;      /* NULL at tensor_parallel 1 */
  const CsLlmDevice *device;   /* in models; its price_per_hour may be 0 (none) */
  int tensor_parallel, pipeline_parallel;
  int max_tokens;
  int64_t timeseries_bin_ns;   /* "timeseries_bin_s" (default 1 s): llm run's timeseries.csv */
  CsLlmSimConfig sim;          /* the deployment, ready for cs_llm_sim_run */
  CsNetworkCurve *kv_curve;    /* "disaggregated": the KV transfer's (sim.kv_curve); else NULL */
  /* requests.synthetic (synthetic TRUE) */
  gboolean synthetic;
  gboolean poisson;            /* FALSE: "static", every request at 0 */
  int n;
  double qps;                  /* the config's rate (1 when not given: static, a search) */
  gboolean rate_free;          /* a format other than the run's: qps not required */
  int prompt[2], output[2];    /* [MIN, MAX] tokens */
  uint64_t seed;
  /* requests.synthetic.lengths (llm_lengths.h): the trace's lengths, in the
   * order requests take them (len_prompt NULL: uniform draws instead) */
  int *len_prompt, *len_output;
  int n_len;
  char *lengths_path;
  int64_t lengths_cut;         /* rows cut to fit max_tokens (Vidur's cut in proportion) */
  int64_t lengths_skipped;     /* rows left out by min_/max_prompt_tokens */
  /* requests.trace (synthetic FALSE): the requests as trace_replay makes them */
  CsLlmSimRequest *trace_reqs;
  int n_trace;
  int64_t cut_prompts;         /* rows whose prompt was cut to fit max_tokens */
  int64_t skipped;             /* rows left out by min_/max_prompt_tokens */
  char *trace_path;
  /* The registry custom schedulers were looked up in (NULL: built-ins only;
   * not owned, only used while parsing), and what they were given: the
   * prefill (or only) pool's [0] and the decode pool's [1] policy and the
   * parameters its parse returned, freed with the config. */
  const CsRegistry *registry;
  const CsLlmSchedulerPolicy *custom[2];
  void *custom_params[2];
} CsLlmConfig;

/* Reads FILE, a config of format "clustersim-llm-run"; a "scheduler.policy"
 * that no built-in scheduler has is looked up in registry (NULL: none).
 * Returns the config (cs_llm_config_free; it keeps pointers to registry's
 * policies, which must outlive it) or NULL with error set "FILE: PATH: what
 * was expected" (CS_INPUT_ERROR_*, as cs_json_fail) for every bad field, a
 * data file that cannot be loaded (named by the field that chose it), a
 * tensor-parallel degree without tables, an unknown scheduler (the known
 * ones named), a custom scheduler's parse failing. */
CsLlmConfig *cs_llm_config_load(const char *file, const CsRegistry *registry, GError **error);

/* The same on a parsed document: root (taken, freed on failure too) must
 * have format `format` (NULL: neither "format" nor "version" may appear, a
 * deployment inside a scenario; its requests need a rate as a run's do); extra_keys (NULL-terminated, or NULL) are top-level
 * keys it may hold besides the run's, left for the caller to read. label
 * names it in messages ("FILE" or "FILE: search.deployments[2]"); a trace's
 * relative path is taken from dir. Returns NULL with error set as above. */
CsLlmConfig *cs_llm_config_parse(cJSON *root, const char *format,
                                 const char *const *extra_keys, const char *label,
                                 const char *dir, GError **error);
/* The same with custom schedulers looked up in registry (NULL: none). */
CsLlmConfig *cs_llm_config_parse_in(cJSON *root, const char *format,
                                    const char *const *extra_keys, const char *label,
                                    const char *dir, const CsRegistry *registry,
                                    GError **error);

void cs_llm_config_free(CsLlmConfig *cfg);

/* Builds the request list: the trace's, or the synthetic one, at qps when
 * qps > 0 (Poisson arrivals only) and at the config's rate otherwise.
 * Same config and qps, same list. Returns a new array of *n requests
 * (g_free) or NULL with error set (CS_INPUT_ERROR_INVALID) when qps > 0 and
 * the requests are not synthetic Poisson ones, or when the rate is so low
 * that the arrivals pass 9e9 s (int64 ns). */
CsLlmSimRequest *cs_llm_config_requests(const CsLlmConfig *cfg, double qps, int *n,
                                        GError **error);

G_END_DECLS

#endif
