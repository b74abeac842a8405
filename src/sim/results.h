/* Results of a run: what cs_results_* in clustersim.h read. Built by the
 * engine (metrics.c), rendered by experiment/outputs.c. The parts given as
 * JSON text (dispatch parameters, setup) and the copy of the placement that
 * ran are filled by experiment/run.c. */
#ifndef CS_RESULTS_INTERNAL_H
#define CS_RESULTS_INTERNAL_H

#include "bins.h"
#include "clustersim/clustersim.h"
#include "warnings.h"

typedef struct {
  char *model;
  int gpu;         /* -1: any GPU (one worker per model and GPU otherwise) */
  double share;
  GArray *bins;    /* bins.h runs: a = batches that finished in the bin, b = their GPU ns */
} CsWorkerResult;

typedef struct {
  int node;
  char *gpu_type;
  double memory_pct;  /* sum of the Mreq of its (non-failed) replicas */
  int physical;       /* physical GPU (MIG instances share one) */
  int mig_instance;   /* -1 for a whole GPU */
  double sm_fraction, memory_fraction;
  double busy_fraction;
  int64_t busy_ns;
  int64_t batches;
  int64_t preempted;    /* batches stopped by the dispatch policy (cs_engine_preempt_gpu) */
  int64_t preempted_ns; /* GPU time they had run, lost */
  GArray *on_spans;     /* int64 pairs [from, to): when it was provisioned (billed) */
  int64_t billed_ns;    /* provisioned time within the longest measurement window */
} CsGpuResult;

typedef CsControlSummary CsControlResult;

/* A replica of a run with a controller and when its life changed (ns; -1:
 * never). */
typedef struct {
  CsReplica replica;
  int64_t added_ns, active_ns, drain_ns, retired_ns;
} CsReplicaSpan;

struct CsResults {
  int n_models;
  /* LLM deployments (their strings in llm_strings, freed with the results). */
  CsLlmModelResult *llm;
  int n_llm;
  GPtrArray *llm_strings;
  CsModelResult *models;      /* model names owned by model_names */
  char **model_names;
  CsModelResult total;
  GArray **batch_sizes;       /* per model: int64 count per batch size (index = size) */
  int n_gpus;
  CsGpuResult *gpus;
  uint64_t seed;
  int64_t sim_time_ns;
  uint64_t events;
  double wall_s;
  char *placement_policy;
  CsPlacement *placement;     /* the placement that ran (a copy, experiment/run.c), or NULL */
  /* GPUs used per bin of used_bin_ns (the scenario's outputs.
   * timeseries_bin_s), kept by every run: the summary's autoscaling
   * figures. */
  int64_t used_bin_ns;
  double gpus_used_mean;      /* over the bins up to the last one a GPU ran in */
  int64_t gpus_used_max;
  /* Time series (bins.h: runs of equal bins; absent bins hold zeros), kept
   * only when has_series (CsRunOptions.timeseries); the series below are
   * NULL otherwise. bin_ns may be a power-of-two multiple of used_bin_ns
   * (the engine doubles it to bound the series' length). */
  gboolean has_series;
  int64_t bin_ns;             /* width of a time-series bin */
  double percentile_sketch;   /* relative error of sketched percentiles; 0: exact */
  GArray **gpu_bins;          /* per GPU: a = ns with a batch running */
  GArray **gpu_sm_bins;       /* per GPU: x = integral of its SM use, ns */
  CsWorkerResult *workers;
  int n_workers;
  GArray *bin_total;          /* a = busy GPU-ns over all GPUs, b = GPUs that ran anything */
  char *dispatch_policy;
  char *dispatch_params_json; /* the dispatch policy's parameters as JSON text (run.c) */
  CsWarningList *warnings;
  char *setup_json;           /* how the run was produced, JSON text (run.c, provenance.c) */
  /* The document that ran: built with the run (effective_doc, cheap, kept
   * by the layer that knows its form, experiment/run.c) and printed as JSON
   * text on first request (printing a scenario of 10^6
   * array elements costs seconds, and most runs, a sweep's among them,
   * never ask for it). */
  void *effective_doc;
  char *(*effective_print)(const void *doc); /* its text, newly allocated */
  void (*effective_free)(void *doc);
  char *effective_scenario;
  CsCost cost;                /* filled by experiment/run.c; cost.note points at cost_note */
  char *cost_note;
  /* Per model, warm-up included (bins.h): a = results within the SLO that
   * arrived in the bin, b = requests that left in it without one, x =
   * requests sent in it. */
  GArray **model_series;
  CsControlResult *control;   /* NULL without a controller */
  GArray *replica_spans;      /* with a controller: CsReplicaSpan per replica of the run */
  double gpu_hours;           /* provisioned GPU time within the charged duration (run.c) */
  char *replay_json;          /* a replay's own section (replay/replay.c) as JSON text, or NULL */
  gboolean replay_invalid;    /* a replay whose lateness exceeded its bound */
};

CsResults *cs_results_alloc(int n_models, int n_gpus);



/* A time series reaching this many runs makes the engine double the width
 * of every series' bins (docs/scenario.md), so that each holds fewer. With
 * CsBinRun's 40 bytes, under 160 KiB per series; GArray's capacity (a
 * power of two of bytes) then stays at 256 KiB, where one more run would
 * make it 512 KiB. */
#define CS_SERIES_MAX_RUNS 4096

/* Sets r's gpus_used_mean and gpus_used_max (at width r->bin_ns, which
 * becomes used_bin_ns) from r->bin_total. */
void cs_results_used_from_total(CsResults *r);

#endif
