/* libclustersim: a deterministic discrete-event simulator of ML inference
 * serving on GPU clusters.
 *
 * A simulation is described by a scenario (a JSON document, see the README):
 * clients with arrival processes, a cluster of GPUs, profiles, a network
 * curve, a placement policy and the router's batching. cs_run() simulates it
 * and returns results: per-model rates, goodput, latency percentiles, the
 * stage breakdown and batch sizes, per-GPU busy time and the engine's cost.
 *
 * Guarantees:
 * - Determinism: the same scenario, seed and library build give identical
 *   results, and an identical cs_results_to_json() document.
 * - No global state: any number of scenarios and runs can coexist in one
 *   process (one thread per run at a time).
 * - Errors: every fallible call takes GError ** last. Bad input is reported in
 *   domain CS_ERROR with a message naming the file, the JSON path and what was
 *   expected; nothing is written to the outputs of a run that fails.
 *
 * Ownership: objects returned by *_new / *_load / cs_run belong to the caller
 * and are released with the matching *_free (which accept NULL). Strings
 * passed in are copied. Pointers returned by accessors stay owned by the
 * object they came from.
 */
#ifndef CLUSTERSIM_H
#define CLUSTERSIM_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

#include "control.h"
#include "core.h"
#include "dispatch.h"
#include "llm.h"
#include "params.h"
#include "placement.h"
#include "plugin.h"
#include "profiles.h"
#include "registry.h"
#include "sweep.h"

G_BEGIN_DECLS

/* ---- Scenarios ------------------------------------------------------------ */

typedef struct CsScenario CsScenario;

/* Loads a scenario file. Relative file names inside it (profiles, network
 * curve) are resolved against the file's directory. Returns NULL with error
 * set when the file cannot be read or is not JSON; the content is checked by
 * cs_scenario_validate() and cs_run(). */
CS_API CsScenario *cs_scenario_load(const char *path, GError **error);

/* Parses a scenario from JSON text; name is used in messages and base_dir
 * resolves relative file names (NULL: the current directory). */
CS_API CsScenario *cs_scenario_new_from_json(const char *json, const char *name,
                                             const char *base_dir, GError **error);

/* Returns an empty scenario to build in code with cs_scenario_set(). */
CS_API CsScenario *cs_scenario_new(const char *name, const char *base_dir);

/* Frees the scenario. Accepts NULL. */
CS_API void cs_scenario_free(CsScenario *sc);

/* Gives the scenario the policies of registry (registry.h) to name in its
 * "placement.policy" and "dispatch.policy"; the scenario keeps a reference
 * until it is freed or given another registry. NULL: the built-in policies
 * only (the default). */
CS_API void cs_scenario_set_registry(CsScenario *sc, CsRegistry *registry);

/* Sets one field by JSON path, as the CLI's --set does: path like "seed",
 * "router.max_wait_ms" or "clients[0].rate"; value is JSON text ("200",
 * "\"poisson\"", "{\"process\": \"gamma\", \"cv\": 2}"), or a bare word taken
 * as a string. Missing objects along the path are created; an array index may
 * be at most the array's length (appending). Returns FALSE with error set on a
 * malformed path or an index past the end. Validation happens later. */
CS_API gboolean cs_scenario_set(CsScenario *sc, const char *path, const char *value,
                                GError **error);

/* Typed setters: set the field at path (as cs_scenario_set) to a number, an
 * integer, a string (always a JSON string, even "200") or a boolean, without
 * writing JSON text. Each is recorded as an override "PATH=VALUE" with the
 * value as JSON. Return FALSE with error set on a malformed path, an index
 * past the end, a non-finite double or an integer beyond 2^53 in magnitude
 * (not exact in JSON), or a NULL string. Validation happens later. */
CS_API gboolean cs_scenario_set_int(CsScenario *sc, const char *path, int64_t value,
                                    GError **error);
CS_API gboolean cs_scenario_set_double(CsScenario *sc, const char *path, double value,
                                       GError **error);
CS_API gboolean cs_scenario_set_string(CsScenario *sc, const char *path, const char *value,
                                       GError **error);
CS_API gboolean cs_scenario_set_bool(CsScenario *sc, const char *path, gboolean value,
                                     GError **error);

/* Removes the field or array element at path (as the CLI's --unset PATH), so
 * that its default applies again: "placement" switches a scenario to no
 * placement, "clients[1]" drops the second client (later ones move up).
 * Recorded as the override "unset PATH". Returns FALSE with error set when
 * the path is malformed or names nothing in the scenario (with the closest
 * field names). */
CS_API gboolean cs_scenario_unset(CsScenario *sc, const char *path, GError **error);

/* Checks the whole scenario (fields, ranges, referenced files, profiles,
 * placement). Returns FALSE with error set describing the first problem. */
CS_API gboolean cs_scenario_validate(CsScenario *sc, GError **error);

/* TRUE when the scenario's "outputs" object asks for the per-request CSV
 * ("requests_csv": true); the caller chooses where it goes (CsRunOptions). */
CS_API gboolean cs_scenario_requests_csv_wanted(const CsScenario *sc);

/* Returns the scenario as JSON text (newly allocated; g_free it). */
CS_API char *cs_scenario_to_json(const CsScenario *sc);

typedef struct CsRunOptions CsRunOptions;

/* Returns the effective scenario as JSON text (newly allocated; g_free it):
 * the document that runs, with every cs_scenario_set override applied and
 * listed in "overrides_applied", the seed of opt (may be NULL) written in,
 * defaults written out (docs/scenario.md says which), and every file
 * reference replaced by its absolute path. Running it gives the same
 * cs_results_to_json() text as running sc with opt. Returns NULL with error
 * set when the scenario is invalid. */
CS_API char *cs_scenario_effective_json(CsScenario *sc, const CsRunOptions *opt, GError **error);

/* ---- Running ---------------------------------------------------------------- */

/* One request as it leaves the simulation (completed or failed). Times are
 * simulated ns since the start of the run. A request of an LLM deployment
 * (the scenario's "llm", its client after the DNN models') has id its
 * request list's, batch_size 0, gpu -1, batch_id 0 and worker -1, replica
 * its replica in the deployment (the decode replica when disaggregated);
 * dispatch, node and exec_start are the start of its first iteration,
 * exec_end and receive its completion, slo_met its TTFT and TPOT SLOs. */
typedef struct {
  uint64_t id;              /* global request id, in generation order */
  const char *model;        /* model name */
  int client;               /* client index in the scenario */
  gboolean measured;        /* FALSE for warm-up requests (excluded from metrics) */
  gboolean served;          /* FALSE if the request never ran (dropped, unserved or failed) */
  gboolean dropped;         /* TRUE if the dispatch policy dropped it (deadline unreachable) */
  gboolean unserved;        /* TRUE if its model has no replica in the placement */
  int64_t send_ns;          /* client sends */
  int64_t dispatch_ns;      /* router sends the batch */
  int64_t node_ns;          /* batch arrives at the node, enters the worker queue */
  int64_t exec_start_ns;    /* GPU starts the batch */
  int64_t exec_end_ns;      /* GPU finishes the batch */
  int64_t receive_ns;       /* client receives the result */
  int batch_size;           /* size of the batch it ran in; 0 if not served */
  int gpu;                  /* GPU index; -1 if not served */
  gboolean slo_met;         /* end-to-end latency <= SLO */
  int replica;              /* the placement's replica that ran it, -1 if none (centralized) */
  int worker;               /* the worker that ran it (a replica, or model x GPUs + GPU); -1 */
  uint64_t batch_id;        /* the batch it ran in (1, 2, ... in dispatch order); 0 if none */
} CsRequestRecord;

typedef void (*CsRequestObserver)(const CsRequestRecord *rec, void *user_data);

/* Called now and then during a run with the fraction in [0, 1] of the
 * requests to generate that have been generated and the simulated time.
 * Returns TRUE to go on, FALSE to stop the run: cs_run then returns NULL with
 * error CS_ERROR_CANCELLED (and writes no output). */
typedef gboolean (*CsProgressCallback)(double fraction, int64_t sim_time_ns, void *user_data);

/* Called for every batch that finishes executing on its GPU (CsBatchEvent,
 * dispatch.h: model, GPU, replica, size and the times it was dispatched,
 * reached the node, started and ended). */
typedef void (*CsBatchObserver)(const CsBatchEvent *batch, void *user_data);

/* A GPU whose set of running batches changed: after a batch started or
 * finished on it. */
typedef struct {
  int gpu;
  int64_t time_ns;
  int running;   /* batches executing now */
  int queued;    /* batches at its node waiting to start */
  double sm_use; /* fraction of its SMs in use under the execution model */
} CsGpuState;

typedef void (*CsGpuObserver)(const CsGpuState *state, void *user_data);

struct CsRunOptions {
  const char *requests_csv;      /* if set, every request is streamed to this CSV file */
  CsRequestObserver on_request;  /* optional, called for every request that leaves */
  CsProgressCallback on_progress; /* optional, called now and then; may stop the run */
  void *user_data;               /* passed to every callback */
  int64_t seed_override;         /* >= 0 replaces the scenario seed; -1 keeps it */
  CsBatchObserver on_batch;      /* optional, called for every batch that finishes */
  CsGpuObserver on_gpu;          /* optional, called at every change of a GPU's running set */
  /* If set, the run's timeline is written to this file as Chrome trace event
   * JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing open: one
   * process per GPU with a track per worker (a slice per batch) and counters
   * of running and queued batches, plus dispatch and client tracks (docs/
   * scenario.md, "Timeline"). Written only when the run succeeds. */
  const char *trace_json;
  /* Keep only events overlapping [trace_from_s, trace_to_s] of simulated
   * time; trace_to_s <= trace_from_s keeps everything. */
  double trace_from_s, trace_to_s;
  /* The most requests the run may send (memory and time grow with them):
   * cs_run refuses, before simulating, a scenario whose clients are expected
   * to send more (rate x time, request counts, trace rows), and stops a run
   * that sends twice as many. 0: CS_DEFAULT_MAX_REQUESTS; < 0: no limit. */
  int64_t max_requests;
  /* If set, the run's decisions are streamed to this file (JSON lines,
   * format "clustersim-decisions" version 1, docs/scenario.md "Decision
   * log"): every request as it arrives, every batch as it is sent (its
   * requests, GPU, worker, replica, share, not-before time) and every
   * request that leaves without running. Written under a temporary name and
   * renamed when the run succeeds; removed when it fails. */
  const char *decisions;
  /* Keep the run's time series (per GPU, per worker, per model), which
   * cs_results_write_gpu_timeseries, cs_results_write_gpu_detail and
   * cs_results_write_model_timeseries write; without it they fail. Their
   * memory is bounded: whenever one series reaches 4,096 runs of equal
   * bins, every series' bin width doubles (the summary's
   * "timeseries" section then states the width; docs/scenario.md). The
   * summary's GPUs-used figures are kept either way, at the scenario's bin
   * width, in O(GPUs) memory. */
  gboolean timeseries;
};

/* The default of CsRunOptions.max_requests (and of the CLI's
 * --max-requests): 10^8 requests, a few GiB of memory. */
#define CS_DEFAULT_MAX_REQUESTS INT64_C(100000000)

/* Initialises options to "no outputs, no callbacks, scenario seed, the
 * default request limit". */
CS_API void cs_run_options_init(CsRunOptions *opt);

/* Returns sizeof(CsRunOptions) in this build of the library: a binding that
 * lays the struct out itself (the Python package) checks its layout by it. */
CS_API size_t cs_run_options_size(void);

typedef struct CsResults CsResults;

/* Validates and simulates the scenario. Returns results, or NULL with error
 * set when the scenario is invalid, its clients would send more requests
 * than opt->max_requests (CS_ERROR_INVALID, with the memory they would
 * need; checked before simulating), the run reaches a simulated time or a
 * payload size int64 cannot hold (CS_ERROR_INVALID: 2^62 ns, about 146
 * years, is the limit), an output file cannot be written (a partial
 * requests CSV is removed), the dispatch policy misused an engine service
 * (CS_ERROR_POLICY, naming the call) or the progress callback stopped the
 * run (CS_ERROR_CANCELLED). opt may be NULL. */
CS_API CsResults *cs_run(CsScenario *sc, const CsRunOptions *opt, GError **error);

/* Frees results and everything they hand out. Accepts NULL. */
CS_API void cs_results_free(CsResults *r);

/* ---- Results ---------------------------------------------------------------- */

typedef struct {
  double p50, p90, p95, p99, max, mean; /* ms; NAN when no request completed */
} CsLatencyStats;

typedef enum {
  CS_STAGE_ROUTER_WAIT = 0, /* send -> batch dispatched by the router */
  CS_STAGE_TO_NODE,         /* router -> node transfer */
  CS_STAGE_QUEUE_WAIT,      /* wait in the worker queue */
  CS_STAGE_GPU,             /* batch execution on the GPU */
  CS_STAGE_RESULT_RETURN,   /* result transfer back to the client */
  CS_N_STAGES
} CsStage;

/* Returns the stage's name as used in outputs ("router_wait", ...). */
CS_API const char *cs_stage_name(CsStage s);

/* Per-model results; docs/scenario.md defines every figure. Requests are
 * "measured" when sent inside the client's measurement window (after
 * warm-up); rates are per second of that window. */
typedef struct {
  const char *model;
  double slo_ms;
  double offered_rps;      /* the client's configured sending rate */
  double planned_rps;      /* the rate the placement planned for (planned_rate, else rate) */
  double submitted_rps;    /* measured requests / window */
  double throughput_rps;   /* results (of any request) arriving inside the window / window */
  double goodput_rps;      /* of those, the ones within the SLO / window */
  double bad_rate;         /* 1 - good / measured: measured requests not answered within SLO */
  double expected_goodput_rps; /* the placement policy's prediction; NAN without placement */
  double window_s;         /* measurement window (after warm-up) */
  double drain_s;          /* from the window's end to the last measured request's outcome */
  int64_t generated, warmup, measured;
  int64_t completed;       /* measured requests that got a result (in the window or late) */
  int64_t good;            /* measured requests answered within the SLO */
  int64_t late;            /* measured requests whose result arrived after the window */
  int64_t dropped;         /* measured requests the dispatch policy dropped */
  int64_t unserved;        /* measured requests of a model the placement gave no replica */
  int64_t failed;          /* measured requests sent to a replica that did not fit in memory */
  int64_t in_window, good_in_window; /* results arriving inside the window (throughput) */
  CsLatencyStats latency;            /* end to end, measured requests */
  CsLatencyStats stage[CS_N_STAGES]; /* breakdown, measured requests */
  int64_t batches;                   /* batches dispatched holding measured requests */
  double mean_batch;
} CsModelResult;

/* An LLM deployment's results (the scenario's "llm" entries; docs/llm.md,
 * "LLM models in a scenario"). Its requests' end-to-end figures, goodput
 * and SLO counts are its CsModelResult's, which follow the DNN models' in
 * cs_results_model (good: TTFT and TPOT both within their SLOs). The
 * strings are owned by the results. Percentiles are samples.h's, as every
 * latency of the run; measured requests only. */
typedef struct {
  const char *model;          /* the scenario's name for it */
  const char *llm_model;      /* the model config's ("meta-llama/Llama-2-7b-hf") */
  const char *device;         /* its GPUs' type ("a100") */
  const char *scheduler;      /* the replica scheduler ("vllm", ...) */
  int replicas;               /* colocated, or the prefill pool's */
  int decode_replicas;        /* the decode pool's (0: colocated) */
  int tensor_parallel;
  int gpus;                   /* GPUs it holds (replicas + decode replicas) x tensor parallel */
  double ttft_slo_ms, tpot_slo_ms;
  CsLatencyStats ttft;        /* arrival to first token */
  CsLatencyStats tbt;         /* per decode iteration (Vidur's definition, llm_sim.h) */
  CsLatencyStats tpot;        /* (completion - first token) / (output tokens - 1), requests
                                 with more than one output token */
  int64_t output_tokens;      /* of the completed requests */
  double output_tokens_per_s; /* output tokens / (last completion - first arrival) */
  int64_t batches;            /* iterations run */
  int64_t restarts;           /* preemptions by recompute */
  int64_t attention_clamped_batches; /* looked up at the attention grid's edge */
  double kv_peak_util;        /* max over replicas of peak KV blocks / blocks */
  double kv_mean_util;        /* mean over replicas of the time-averaged KV blocks in use */
  double busy_fraction;       /* mean over replicas of the time with a batch in flight */
  double mfu;                 /* model FLOPs utilisation, mean over replicas: a device's FLOPs
                                 (Vidur's count) / (its peak x the span to the last completion);
                                 NAN when the device has no peak */
  double mfu_busy;            /* the same over its busy time */
  /* Rows of llm_over_time.csv for it (cs_results_write_llm_timeseries), or
   * NULL for a run that kept no time series. */
  const char *series_csv;
} CsLlmModelResult;

/* Number of LLM deployments, and the i-th one's results (NULL out of range). */
CS_API int cs_results_n_llm(const CsResults *r);
CS_API const CsLlmModelResult *cs_results_llm(const CsResults *r, int i);

/* Writes the LLM deployments' series as CSV: per deployment and bin
 * (outputs.timeseries_bin_s, doubled past 65,536 bins), from 0 to its last
 * completion, "model,time_s,kv_util,preemptions,output_tokens_per_s,
 * batches,arrivals,completions" (docs/llm.md). Returns FALSE with error set
 * if the file cannot be written, or (CS_ERROR_INVALID) if the run kept no
 * time series or has no LLM deployment. */
CS_API gboolean cs_results_write_llm_timeseries(const CsResults *r, const char *path,
                                                GError **error);

/* Number of models (one per client), and the i-th model's results. */
CS_API int cs_results_n_models(const CsResults *r);
CS_API const CsModelResult *cs_results_model(const CsResults *r, int i);
/* The results of the model called model, or NULL when the run has none. */
CS_API const CsModelResult *cs_results_model_by_name(const CsResults *r, const char *model);

/* The placement that ran (placement.h: replicas with GPU, batch and MPS
 * share, the policy's expected goodput per model, its log), owned by the
 * results; NULL when the dispatch policy uses no placement. Expected goodput
 * here is after the framework's capping (a replica that fails in memory). */
CS_API const CsPlacement *cs_results_placement(const CsResults *r);

/* Totals over all models (model = "total"; rates summed, latency pooled). */
CS_API const CsModelResult *cs_results_total(const CsResults *r);

/* What the run's GPUs cost (docs/scenario.md, "Cost"). A GPU's hourly price
 * comes from the scenario (cluster.price_per_hour, cluster.nodes[i].
 * price_per_hour) or its GPU type's profile; a MIG instance costs nothing on
 * top of its GPU. Under an autoscaling controller (control.h) a GPU is
 * charged for the time it was provisioned within the charged duration. */
typedef struct {
  double price_per_hour;     /* the cluster's dollars per hour: each GPU's price summed;
                                NAN when some GPU's price is unknown */
  double duration_s;         /* the measured duration charged: the longest measurement window */
  double cost;               /* each GPU's price x its GPU-hours; without autoscaling
                                price_per_hour x duration_s / 3600 dollars; NAN when unknown */
  double goodput_per_dollar; /* good requests per dollar: total goodput_rps x 3600 /
                                paid_per_hour; NAN when the price is unknown or 0 */
  const char *note;          /* one line saying why a figure is NAN, else NULL */
  double gpu_hours;          /* physical GPUs x hours provisioned within duration_s */
  double paid_per_hour;      /* cost / duration_s x 3600: price_per_hour without autoscaling,
                                what the provisioned GPUs cost per hour on average with it */
} CsCost;

/* The run's cost (owned by the results). */
CS_API const CsCost *cs_results_cost(const CsResults *r);

/* What the run's controller (control.h) did. */
typedef struct {
  char *policy;         /* its name */
  int64_t changes;      /* applied placements that changed replicas */
  int64_t added;        /* replicas added (loaded, or reusing weights already on the GPU) */
  int64_t loads;        /* those of them that loaded weights (load time > 0) */
  int64_t removals;     /* replicas removed (drained, or dropped before they served) */
  int64_t provisions;   /* GPUs provisioned */
  int64_t releases;     /* GPUs released */
  double load_s_total;  /* sum of the load times of those loads, s */
  int replicas_total;   /* replicas over the run, the scenario's placement included */
  char *log;            /* its decisions and the changes, a "TIME_S<TAB>TEXT" line each */
  char *params_json;    /* its parameters as JSON text */
} CsControlSummary;

/* The controller's summary (owned by the results), or NULL for a run
 * without a controller. */
CS_API const CsControlSummary *cs_results_control(const CsResults *r);

/* GPUs: number, and the busy fraction of GPU i over the simulated time. */
CS_API int cs_results_n_gpus(const CsResults *r);
CS_API double cs_results_gpu_busy_fraction(const CsResults *r, int gpu);
/* Batches GPU i finished, and those a dispatch policy stopped on it
 * (cs_engine_preempt_gpu) with the GPU time they had run, in ns. */
CS_API int64_t cs_results_gpu_batches(const CsResults *r, int gpu);
CS_API int64_t cs_results_gpu_preempted(const CsResults *r, int gpu, int64_t *lost_ns);

/* Engine cost: events processed (deterministic), wall time of the run in
 * seconds and simulated requests per wall second (not deterministic). */
CS_API uint64_t cs_results_events(const CsResults *r);
CS_API double cs_results_wall_seconds(const CsResults *r);
CS_API int64_t cs_results_sim_time_ns(const CsResults *r);

/* The full summary as JSON text (newly allocated; g_free it). It holds only
 * deterministic values, so two runs of one scenario and seed give identical
 * text. */
CS_API char *cs_results_to_json(const CsResults *r);

/* Writes the GPU-use time series as CSV: per bin (outputs.timeseries_bin_s,
 * default 1 s) in which some GPU ran a batch, in bin order, its start time,
 * the GPUs that ran anything in it and the average number of busy GPUs;
 * bins without a row are idle (zeros), so the file grows with what ran, not
 * with the simulated span. The bins are outputs.timeseries_bin_s wide, or a
 * power-of-two multiple of it that the summary's "timeseries.bin_s" states
 * (CsRunOptions.timeseries). Returns FALSE with error set if the file cannot
 * be written, or (CS_ERROR_INVALID) if the run kept no time series. */
CS_API gboolean cs_results_write_gpu_timeseries(const CsResults *r, const char *path,
                                                GError **error);

/* Writes the co-location time series as CSV: gpu_path gets, per GPU and bin
 * in which it ran, the busy fraction, the time-weighted SM use (fraction of
 * the GPU's SMs) and the memory placed (% of the GPU); worker_path gets, per
 * worker (replica) and bin in which a batch of it finished, the batches that
 * finished and their mean execution time on the GPU. Bins without a row are
 * idle. Returns FALSE with error set if a file cannot be written, or
 * (CS_ERROR_INVALID) if the run kept no time series. */
CS_API gboolean cs_results_write_gpu_detail(const CsResults *r, const char *gpu_path,
                                            const char *worker_path, GError **error);

/* Writes the per-model time series as CSV: per model and bin (outputs.
 * timeseries_bin_s) in which something happened, warm-up included, the
 * requests sent, the results within the SLO that arrived and the requests
 * that left without one (late, dropped, failed, unserved), with goodput in
 * req/s. cluster_path (may be NULL) gets the number of GPUs provisioned
 * (billed) at each time it changes. Returns FALSE with error set if a file
 * cannot be written, or (CS_ERROR_INVALID) if the run kept no time series. */
CS_API gboolean cs_results_write_model_timeseries(const CsResults *r, const char *path,
                                                  const char *cluster_path, GError **error);

/* The effective scenario of the run (see cs_scenario_effective_json), owned
 * by the results. Running it reproduces cs_results_to_json() byte for byte.
 * The text is made on the first call (a scenario of long lists costs
 * seconds to print, and most runs never ask), safely also when threads ask
 * at once; NULL (with a critical warning) for NULL results. */
CS_API const char *cs_results_effective_scenario(const CsResults *r);

/* Prints the per-model table to out. */
CS_API void cs_results_print_table(const CsResults *r, FILE *out);

/* A condition that does not stop a run but would mislead a reader of its
 * numbers: code is stable (docs/scenario.md lists every code), model is NULL
 * and gpu -1 when the warning concerns no single model or GPU. */
typedef struct {
  const char *code;
  const char *model;
  int gpu;
  const char *message;
} CsWarning;

/* Number of warnings of the run (scenario warnings first, then those found by
 * running it), and the i-th (owned by the results; NULL when out of range). */
CS_API int cs_results_n_warnings(const CsResults *r);
CS_API const CsWarning *cs_results_warning(const CsResults *r, int i);

/* ---- Goodput search ------------------------------------------------------------ */

/* Symphony's goodput: the highest offered load a configuration serves within
 * its objective, found by bisection over a multiplier applied to every
 * client's rate. */
typedef enum {
  CS_GOODPUT_P99,      /* every model's p99 latency <= its SLO, counting dropped and failed
                        * requests as too late: at least ceil(0.99 n) of n measured requests good */
  CS_GOODPUT_BAD_RATE, /* every model's bad rate <= bad_rate_bound */
} CsGoodputCriterion;

typedef struct {
  CsGoodputCriterion criterion;
  double bad_rate_bound;   /* for CS_GOODPUT_BAD_RATE, in [0, 1) */
  double max_multiplier;   /* upper end of the search; > 0 */
  double tolerance;        /* stop when (hi - lo) / hi <= tolerance; in (0, 1) */
  int max_probes;          /* safety limit on simulations, >= 2 */
} CsGoodputSearchOptions;

/* Defaults: p99, bad rate bound 0.01, max multiplier 64, tolerance 0.005, 40 probes. */
CS_API void cs_goodput_search_options_init(CsGoodputSearchOptions *o);

typedef struct {
  int index;            /* probe number, from 0 */
  double multiplier;    /* applied to every client's rate */
  double offered_rps;   /* total offered rate at this multiplier */
  double goodput_rps;   /* total simulated goodput */
  double worst_bad_rate; /* highest bad rate over the models */
  gboolean measured_all; /* every model measured at least one request (else it cannot pass) */
  gboolean pass;        /* the criterion holds */
} CsGoodputProbe;

typedef void (*CsGoodputProbeCallback)(const CsGoodputProbe *probe, void *user_data);

/* Runs the search: probes from max_multiplier/64 upwards by doubling until one
 * fails, then bisects; when the first probe fails it halves downwards, and
 * stops at a probe that measured no request of some model or at
 * max_multiplier/4096. A probe passes only if every model measured at least
 * one request. Returns TRUE and fills *best with the highest passing probe
 * (index -1, multiplier 0 and offered 0 if no probe passed), calling
 * on_probe (may be NULL) after every simulation. Returns FALSE with error set
 * when the scenario is invalid, a client has no rate to scale (explicit
 * times), the clients would send more requests than run_opt->max_requests
 * at max_multiplier (checked before the first probe), a probe fails (see
 * cs_run), or the options are out of range. */
CS_API gboolean cs_goodput_search(CsScenario *sc, const CsGoodputSearchOptions *opt,
                                  const CsRunOptions *run_opt, CsGoodputProbeCallback on_probe,
                                  void *user_data, CsGoodputProbe *best, GError **error);

/* ---- Batching analytics (Symphony section 3.3 / 5, Table 2) ----------------- */

/* Upper bounds for one model with latency l(b) = alpha*b + beta on n_gpus GPUs,
 * requests at constant gaps. Staggered execution (a centralized scheduler):
 * worst queueing delay l(b)/N, so b = floor((SLO/(1 + 1/N) - beta)/alpha).
 * No coordination (each GPU batches alone): worst queueing delay l(b), so
 * b = floor((SLO/2 - beta)/alpha). Throughput N*b/l(b) in req/s. batch is 0
 * (and throughput 0) when not even one request fits the SLO. */
typedef struct {
  int batch;
  double throughput_rps;
} CsBatchingBound;

/* The staggered and the uncoordinated bound (above); never fail. */
CS_API CsBatchingBound cs_batching_staggered(double alpha_ms, double beta_ms, double slo_ms,
                                             int n_gpus);
CS_API CsBatchingBound cs_batching_uncoordinated(double alpha_ms, double beta_ms, double slo_ms,
                                                 int n_gpus);

G_END_DECLS

#endif
