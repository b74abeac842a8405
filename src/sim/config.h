/* The validated, compiled form of a scenario that the engine runs.
 *
 * scenario.c turns the JSON document into this; after that nothing in the
 * engine looks at JSON again. Times are ns, rates req/s. */
#ifndef CS_CONFIG_H
#define CS_CONFIG_H

#include <glib.h>
#include <stdint.h>

#include "clustersim/control.h"
#include "clustersim/dispatch.h"
#include "clustersim/placement.h"
#include "llm/llm_sim.h"
#include "profiles/interference.h"
#include "profiles/network.h"
#include "profiles/profile.h"
#include "sim/warnings.h"

/* warnings.plan_gap when the scenario does not set it (scenario.c says why). */
#define CS_DEFAULT_PLAN_GAP 0.10

typedef enum {
  CS_ARRIVAL_POISSON,  /* exponential gaps */
  CS_ARRIVAL_GAMMA,    /* gamma gaps with shape k (CV = 1/sqrt(k)) */
  CS_ARRIVAL_CONSTANT, /* fixed gaps: the i-th request at start + i / rate */
  CS_ARRIVAL_TIMES,    /* an explicit list of send times */
  CS_ARRIVAL_PIECEWISE, /* per-interval rates (trace counts): Poisson or gamma within each */
} CsArrivalKind;

typedef struct {
  char *model;            /* model name; one client per model */
  double rate_rps;        /* > 0: the rate the client sends at */
  double planned_rate_rps; /* > 0: the rate the placement plans for (default rate_rps) */
  double slo_ms;          /* > 0 */
  int64_t slo_ns;
  CsArrivalKind arrival;
  double gamma_shape;     /* k, for CS_ARRIVAL_GAMMA */
  int64_t *times_ns;      /* CS_ARRIVAL_TIMES: send times after start_ns, non-decreasing */
  int64_t n_times;
  /* CS_ARRIVAL_PIECEWISE: only the intervals that hold requests, so that
   * memory grows with the trace's rows, not with its span. */
  int64_t *interval_index;  /* interval numbers (from 0 at start_ns), ascending */
  int64_t *interval_counts; /* requests in each (before scaling), > 0 */
  int64_t n_intervals;      /* entries of both arrays */
  int64_t interval_ns;    /* simulated length of an interval */
  double count_scale;     /* rate in interval k = counts[k] * count_scale / interval */
  double *interval_scale; /* NULL, or per listed interval a further factor (trace.rate_scale as
                             a profile over time, taken at the interval's midpoint) */
  gboolean piecewise_gamma; /* gamma gaps with gamma_shape instead of exponential */
  int64_t window_ns;      /* trace clients: length of the trace window (0: not a trace) */
  int64_t requests;       /* measured requests to send; 0 when duration bounds the client */
  int64_t duration_ns;    /* measured phase length; 0 when requests bound the client */
  int64_t warmup_ns;      /* warm-up phase before the measured one (not in metrics) */
  int64_t start_ns;       /* when the client starts sending */
  int64_t input_bytes;    /* request payload per request */
  int64_t output_bytes;   /* result payload per request */
} CsClientConfig;

typedef struct {
  int node;               /* node index */
  char *gpu_type;
  int physical;           /* physical GPU index (MIG instances of one GPU share it) */
  int mig_instance;       /* instance index on its GPU, -1 for a whole GPU */
  double sm_fraction;     /* share of the GPU's SMs (1 for a whole GPU) */
  double memory_fraction; /* share of the GPU's memory (1 for a whole GPU) */
} CsGpuConfig;

/* One node of the cluster ("cluster.nodes[i]", or the one-node form) and
 * what one of its GPUs costs. */
typedef struct {
  char *gpu_type;         /* as in its GPUs' CsGpuConfig */
  char *path;             /* its JSON path: "cluster.nodes[i]", or "cluster" for one node */
  int gpus;               /* physical GPUs (MIG instances not counted apart) */
  double price_per_hour;  /* dollars per GPU-hour; NAN when unknown */
  char *price_source;     /* where the price comes from; NULL when unknown */
} CsNodeConfig;

/* One LLM deployment of the scenario ("llm[i]", docs/llm.md "LLM models in
 * a scenario"): identical replicas run token by token (llm/llm_sim.h) on
 * GPUs of their own, beside the cluster's DNN models. Its requests are a
 * fixed list (its "requests", as `clustersim llm run` builds them), sent
 * by its client, clients[n_clients + i]. */
typedef struct {
  char *name;             /* the model's name in the results (unique among all models) */
  char *path;             /* "llm[i]", for messages */
  CsLlmSimConfig sim;     /* the deployment; its tables are owner's */
  CsLlmSimRequest *reqs;  /* n_reqs, in arrival order, arrivals from 0 */
  int n_reqs;
  int64_t ttft_slo_ns;    /* a request is good when its TTFT is at most this (0: no bound) */
  int64_t tpot_slo_ns;    /* ... and its time per output token after the first (0: no bound) */
  int gpus;               /* GPUs it holds: (replicas + decode replicas) x tensor parallel */
  char *device;           /* their type (data/llm/models.json) */
  double price_per_hour;  /* a GPU's, NAN when the device has none */
  char *llm_model;        /* the model config's name ("meta-llama/Llama-2-7b-hf") */
  char *scheduler;        /* the replica scheduler's name */
  int tensor_parallel;
  int64_t attention_clamped_policy; /* 1 when "attention_outside_grid" is "clamp" */
  void *owner;            /* what holds the tables (the scenario layer's), freed by owner_free */
  void (*owner_free)(void *owner);
} CsLlmServingConfig;

/* The compiled scenario. Dispatch policies see it as the opaque CsWorld of
 * clustersim/dispatch.h (read through cs_world_*, world.c). */
typedef struct CsWorld CsConfig;

struct CsWorld {
  uint64_t seed;
  CsClientConfig *clients;
  int n_clients;
  CsGpuConfig *gpus;
  int n_gpus;
  int n_nodes;
  CsNodeConfig *nodes;    /* n_nodes entries */
  gboolean has_mig;       /* some GPU is split into MIG instances */
  CsProfileSet *profiles;
  CsNetworkCurve *network;
  const CsDispatchPolicy *dispatch;
  void *dispatch_params;  /* parsed by dispatch->parse (NULL if it has no parse) */
  void *dispatch_user_data; /* what the policy was registered with */
  const CsPlacementPolicy *placement_policy; /* NULL when the dispatch policy uses none */
  CsPlacement *placement; /* computed at validation; NULL when none */
  gboolean *replica_failed; /* per replica: did not fit in memory (memory_overflow "fail") */
  double *replica_mreq;   /* per replica: its memory requirement, % of its GPU */
  gboolean mps;           /* co-located replicas share SMs under MPS (else time-slicing) */
  gboolean memory_overflow_fails; /* replicas beyond a GPU's memory fail instead of an error */
  double mps_gamma;       /* exponent of the power share rule (r/d)^gamma */
  gboolean mps_share_power; /* cluster.mps_share_rule "power" (else "scalable") */
  CsInterferenceSet *interference; /* share tables and pair factors, or NULL */
  char *interference_desc;
  char *network_desc;     /* what curve is used, for the summary */
  gboolean network_is_zero; /* payload sizes are not needed */
  int64_t timeseries_bin_ns; /* bin width of time series outputs */
  double percentile_sketch; /* outputs.percentile_sketch: relative error of sketched
                               percentiles; 0: exact (samples.h) */
  double plan_gap;        /* warnings.plan_gap: the shortfall of a model's goodput from
                             its planned goodput that warns (fraction); < 0: no check */
  char *trace_desc;       /* JSON text describing the trace used (file, sha256, ...), or NULL */
  char **profile_files;   /* profile entries as written, NULL-terminated */
  char **profile_paths;   /* the same, resolved to absolute paths */
  char *network_path;     /* absolute path of the network curve file, or NULL */
  char *interference_path; /* absolute path of the interference file, or NULL */
  char *trace_path;       /* absolute path of the trace file, or NULL */
  char **overrides;       /* "PATH=VALUE" applied (earlier runs' first), NULL-terminated */
  CsWarningList *warnings; /* found while compiling: settings that mislead, models unserved */
  char *name;             /* the scenario's file name, for messages */
  /* Runs the scenario's placement policy, with its parameters, on problem:
   * a controller's re-placement (control.c). Set by the scenario compiler,
   * which keeps what it needs in placement_params (freed with the config). */
  CsPlacement *(*place_again)(const struct CsWorld *c, const CsPlacementProblem *problem,
                              GError **error);
  void *placement_params;
  void *placement_user_data;
  /* The controller (clustersim/control.h), or NULL; its parameters. */
  const CsControllerPolicy *controller;
  void *controller_params;
  void *controller_user_data;
  int initial_gpus;       /* GPUs on at the start: the first initial_gpus of the cluster */
  double host_to_gpu_bytes_per_s; /* bandwidth of model loads (cluster.host_to_gpu_gbps) */
  int64_t model_load_overhead_ns; /* fixed cost of a model load (cluster.model_load_ms) */
  /* Every plug-in of the scenario's registry (clustersim/plugin.h), in load
   * order: absolute path and SHA-256; NULL-terminated, NULL when none. */
  char **plugin_paths;
  char **plugin_sha256;
  /* LLM deployments (CsLlmServingConfig), n_llm of them; their clients follow
   * the DNN models' in clients[] (n_clients + n_llm entries), unseen by
   * anything that reads n_clients: the DNN policies, placement, replay. */
  CsLlmServingConfig *llm;
  int n_llm;
};

void cs_config_free(CsConfig *c);

#endif
