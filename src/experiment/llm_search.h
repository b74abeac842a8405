/* The capacity of LLM replicas under latency SLOs (issue 38; docs/llm.md
 * "Capacity search"), as Vidur's config explorer measures it
 * (vidur/config_optimizer/config_explorer/capacity_search.py): the highest
 * Poisson arrival rate at which a deployment's run meets the SLOs, and the
 * cheapest deployment of a list for a target rate (a disaggregated one's
 * cheapest prefill and decode pools, cs_llm_fewest_pools).
 *
 * A probe at rate q builds the config's synthetic requests at q
 * (cs_llm_config_requests: the same seed at every probe, so the lengths are
 * the same and the arrivals the same draws scaled, common random numbers),
 * or, with a trace and trace_qps (CsLlmSearchParams), the trace's requests
 * with their arrivals scaled to q (Vidur's own probes' requests, replayed:
 * bench/vidur/capacity_compare.py), runs them to completion (cs_llm_sim_run) and measures each SLO's
 * quantile over the run (cs_llm_quantile, linear): TTFT per request (ms),
 * TBT per decode iteration (ms), scheduling delay per request (s: the
 * start of its first batch minus its arrival, Vidur's
 * request_scheduling_delay). A probe passes when every bound given holds
 * (quantile <= max); a metric without samples (TBT when every request has
 * one output token) holds.
 *
 * The answer assumes that pass/fail is monotone in the rate (passing at q
 * implies passing below q). A run is one draw of a finite workload, so it
 * need not be: every probe is kept, and a result whose probes are not
 * monotone (a probe passed above one that failed) says so (non_monotone);
 * the answer is then still Vidur's (the last probe that passed), not a
 * claim about the rates between. */
#ifndef CS_EXPERIMENT_LLM_SEARCH_H
#define CS_EXPERIMENT_LLM_SEARCH_H

#include <glib.h>

#include "llm/llm_sim.h"
#include "scenario/llm_config.h"

G_BEGIN_DECLS

typedef enum {
  CS_LLM_SLO_TTFT,        /* ms */
  CS_LLM_SLO_TBT,         /* ms */
  CS_LLM_SLO_SCHED_DELAY, /* s, Vidur's own criterion (p99 <= 5 s by default there) */
  CS_LLM_SLO_N,
} CsLlmSloMetric;

/* "ttft_ms", "tbt_ms", "scheduling_delay_s": the config's keys. */
const char *cs_llm_slo_name(CsLlmSloMetric m);

typedef struct {
  gboolean on;
  double quantile; /* in [0, 1] */
  double max;      /* > 0, in the metric's unit */
} CsLlmSloBound;

typedef struct {
  CsLlmSloBound bound[CS_LLM_SLO_N]; /* at least one on */
} CsLlmSlo;

typedef struct {
  double qps;
  int replicas;               /* disaggregated: the prefill pool's */
  int decode_replicas;        /* the decode pool's; 0 when colocated */
  gboolean pass;
  double value[CS_LLM_SLO_N]; /* each bound's quantile; NAN when off or without samples */
  double ratio;               /* the largest value / max over the bounds on (0 without samples) */
  CsLlmSimSummary summary;    /* the whole run's (cs_llm_sim_summary) */
  int64_t batches;            /* the run's batches */
  int64_t attention_clamped_batches; /* of them, timed at the attention grid's edge */
} CsLlmProbe;

/* Measures the SLO's quantiles on a run's result into p (qps and replicas
 * left as they are). */
void cs_llm_slo_eval(const CsLlmSlo *slo, const CsLlmSimResult *r, CsLlmProbe *p);

/* One probe: cfg's deployment with `replicas` replicas (<= 0: cfg's) at
 * rate qps (> 0). Returns FALSE with error set when the requests cannot
 * be built at a rate (not synthetic Poisson) or the run fails
 * (cs_llm_sim_run's message, the rate prefixed). */
gboolean cs_llm_probe(const CsLlmConfig *cfg, int replicas, double qps, const CsLlmSlo *slo,
                      CsLlmProbe *out, GError **error);

/* One probe of a disaggregated cfg (decode_replicas > 0) with `prefill`
 * (>= 1) prefill and `decode` (>= 1) decode replicas, as cs_llm_probe. */
gboolean cs_llm_probe_pools(const CsLlmConfig *cfg, int prefill, int decode, double qps,
                            const CsLlmSlo *slo, CsLlmProbe *out, GError **error);

typedef struct {
  double start_qps;       /* > 0: the first probe is at start_qps (Vidur: right = 2 x it) */
  double granularity_pct; /* > 0: stop when right - left < this % of the last probe (2.5) */
  int max_probes;         /* >= 1 (20, Vidur's max_iterations) */
  double trace_qps;       /* > 0: the config's requests are a trace whose arrivals are those
                           * of this rate; a probe at q replays it with every arrival x
                           * trace_qps / q (rounded to the ns), the lengths as they are.
                           * 0: synthetic requests drawn at q (the default) */
} CsLlmSearchParams;

/* start 1, 2.5 %, 20 probes, synthetic requests: Vidur's defaults but
 * start_qps, which its jobs set per deployment. */
void cs_llm_search_params_init(CsLlmSearchParams *p);

typedef struct {
  gboolean found;     /* some probe passed */
  double max_qps;     /* the last probe that passed (Vidur's max_qps_under_sla); 0 when none */
  int best;           /* its index in probes; -1 when none */
  GArray *probes;     /* CsLlmProbe, in the order run */
  gboolean non_monotone;
  gboolean stopped_low; /* stopped before a rate whose arrivals could pass 9e9 s */
} CsLlmSearchResult;

/* Vidur's bisection. left = 0, right = 2 x start_qps, min_fail = 2^32; at
 * most max_probes times: stop when |right - left| < granularity_pct % of
 * the last probe's rate (never before the first); probe q = (left +
 * right) / 2; if it passes, left = q and, with r its ratio (above), right
 * = min(4 right, min_fail) when r < 1/8, min(2 right, min_fail) when r <
 * 1/4 or q > 0.8 right (Vidur compares its scheduling delay with 1/8 and
 * 1/4 of its SLO: the same rules for its one criterion); if it fails,
 * min_fail = min(min_fail, q) and right = q / 2 when r > 100 (Vidur: a
 * delay over 500 s, 100 times its 5 s SLO) and that stays above left,
 * right = q otherwise (Vidur lets right fall below left there, probing
 * again below a rate that passed). It also stops before a rate q with
 * n x 3 / q > 9e9 s (n the requests: their arrivals could pass int64 ns;
 * stopped_low), or with trace_qps before one at which the trace's last
 * arrival x trace_qps / q would pass 9e9 s. Deterministic: the same inputs give the
 * same probes. Returns the result (cs_llm_search_result_free) or NULL with
 * error set as cs_llm_probe. */
CsLlmSearchResult *cs_llm_search_capacity(const CsLlmConfig *cfg, int replicas,
                                          const CsLlmSlo *slo, const CsLlmSearchParams *sp,
                                          GError **error);

void cs_llm_search_result_free(CsLlmSearchResult *r);

/* GPUs of cfg's deployment at `replicas` replicas: (replicas + its decode
 * replicas when disaggregated) x TP x PP. */
int cs_llm_deployment_gpus(const CsLlmConfig *cfg, int replicas);

/* Its cost per hour: gpus x the device's price_per_hour (data/llm/models.json,
 * Vidur's GPU_COSTS). Returns FALSE with error set (CS_INPUT_ERROR_INVALID,
 * "FILE: device: ...") when the device has no price. */
gboolean cs_llm_deployment_cost(const CsLlmConfig *cfg, int replicas, double *per_hour,
                                GError **error);

/* The fewest replicas, 1 to max_replicas scanned up, whose run at qps
 * meets the SLO: *replicas (0 when none does), the probe of every count
 * tried appended to probes (may be NULL). Returns FALSE with error set as
 * cs_llm_probe. */
gboolean cs_llm_fewest_replicas(const CsLlmConfig *cfg, double qps, const CsLlmSlo *slo,
                                int max_replicas, int *replicas, GArray *probes, GError **error);

/* GPUs of a disaggregated cfg's deployment with `prefill` and `decode`
 * replicas ((prefill + decode) x TP x PP) and its cost per hour (the
 * device's price), as cs_llm_deployment_cost. */
gboolean cs_llm_pools_cost(const CsLlmConfig *cfg, int prefill, int decode, int *gpus,
                           double *per_hour, GError **error);

/* The cheapest split of a disaggregated deployment for a target rate
 * (cs_llm_fewest_pools). */
typedef struct {
  int prefill, decode;     /* the split found; 0, 0 when none */
  int probes;              /* probes run (<= max_probes) */
  int best;                /* its probe's index in probes; -1 when none (or probes NULL) */
  int complete_total;      /* every split of every total up to this was probed (0: none) */
  gboolean limited;        /* stopped at max_probes with splits within max_replicas unprobed */
  int stopped_at_total;    /* limited: the first split not probed, */
  int stopped_at_prefill;  /* stopped_at_prefill + (total - it) */
} CsLlmPoolFit;

/* The cheapest (prefill, decode) pools of a disaggregated cfg whose run at
 * qps meets the SLO, max_replicas bounding prefill + decode (as it bounds
 * the replicas of a colocated deployment): every total n = 2..max_replicas
 * in turn, each split p = 1..n - 1 with n - p decode replicas probed
 * (cs_llm_probe_pools), stopping at the first that passes. All splits of
 * one total cost the same, so that one is the cheapest, ties to fewer
 * prefill replicas; exact, monotone or not (nothing is skipped). At most
 * max_probes probes: when that many ran without a pass and splits remain,
 * it stops with limited set (no answer: a cheaper split is not ruled out
 * beyond complete_total). Each probe is appended to probes (may be NULL).
 * Returns FALSE with error set as cs_llm_probe. */
gboolean cs_llm_fewest_pools(const CsLlmConfig *cfg, double qps, const CsLlmSlo *slo,
                             int max_replicas, int max_probes, CsLlmPoolFit *out,
                             GArray *probes, GError **error);

/* A deployment's fit for a target rate, for cs_llm_cheapest. */
typedef struct {
  int replicas;       /* 0: none of 1..max_replicas meets the SLO; disaggregated: prefill + decode */
  int gpus;
  double cost_per_hour;
  int prefill, decode; /* disaggregated: the split (replicas = their sum); 0 when colocated */
} CsLlmFit;

/* The index of the cheapest fit with replicas > 0: the lowest cost, ties
 * (equal costs) to fewer GPUs, then to the lower index. -1 when none fits. */
int cs_llm_cheapest(const CsLlmFit *fits, int n);

/* A search config (format "clustersim-llm-search", docs/llm.md): a run's
 * fields plus "search": {"slo": {...}, "start_qps", "granularity_pct",
 * "max_probes", "max_replicas", "target_qps", "deployments": [...] or
 * "grid": {...}}. */
typedef struct {
  CsLlmConfig *cfg;  /* the run's fields merged with the deployment's */
  char *name;        /* "name", or one made of device, TP, policy, chunk, cap (a grid's: its
                      * options' labels, llm_search_grid.h) */
  int max_replicas;  /* for the target rate */
  cJSON *options;    /* a grid's: {AXIS: option}; NULL otherwise */
} CsLlmDeployment;

/* A grid's combination that does not load (its options each load in
 * another): left out of the deployments, listed. */
typedef struct {
  char *name;
  char *reason;      /* the run reader's message, "FIELD: ..." */
} CsLlmSkipped;

typedef struct {
  CsLlmConfig *base;         /* the config as written (its own deployment without "deployments") */
  CsLlmSlo slo;
  CsLlmSearchParams params;
  double target_qps;         /* 0: none */
  CsLlmDeployment *deployments;
  int n_deployments;         /* >= 1 */
  int grid_combinations;     /* "grid": the product's size (deployments + skipped); else 0 */
  CsLlmSkipped *skipped;     /* "grid": the combinations left out, in product order */
  int n_skipped;
} CsLlmSearchSpec;

/* Reads "slo" (obj at path): "ttft_ms", "tbt_ms", "scheduling_delay_s",
 * each optional, at least one, each {"quantile": Q in [0, 1], "max": X > 0}.
 * Returns FALSE with error set "FILE: PATH: ..." otherwise. */
gboolean cs_llm_slo_read(const cJSON *obj, const char *file, const char *path, CsLlmSlo *out,
                         GError **error);

/* Reads FILE. Each deployment is the run's fields with its own replacing
 * them ("scheduler" merged field by field), read as cs_llm_config_parse
 * reads a run, its messages naming "FILE: search.deployments[I]". With
 * "grid" (not with "deployments") the deployments are its combinations
 * (llm_search_grid.h) in product order; one that the run reader refuses is
 * skipped and listed (skipped) when each of its options loads in some other
 * combination, and the config is refused ("FILE: search.grid.AXIS[J]: ...",
 * with the reader's message of its first combination) when an option loads
 * in none (a typo, a device without tables, ...). Every
 * deployment's requests must be synthetic Poisson ones, or, with
 * "trace_qps": R (> 0, no target_qps), a trace whose arrivals are those
 * of rate R; with target_qps every device must have a price, and a
 * disaggregated deployment a max_replicas of at least 2 (its pools are
 * sized by cs_llm_fewest_pools). A scheduler no built-in one is named by is
 * looked up in registry (NULL: none; it must outlive the spec). Returns
 * the spec (cs_llm_search_spec_free) or NULL with error set naming the file
 * and the JSON path. */
CsLlmSearchSpec *cs_llm_search_spec_load(const char *file, const CsRegistry *registry,
                                         GError **error);

void cs_llm_search_spec_free(CsLlmSearchSpec *s);

G_END_DECLS

#endif
