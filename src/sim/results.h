/* Results of a run: what cs_results_* in clustersim.h read. Built by the
 * engine (engine.c), rendered by results.c. */
#ifndef CS_RESULTS_INTERNAL_H
#define CS_RESULTS_INTERNAL_H

#include <cjson/cJSON.h>

#include "clustersim/clustersim.h"

typedef struct {
  int gpu;
  int batch;
} CsResultReplica;

typedef struct {
  int node;
  char *gpu_type;
  double busy_fraction;
  int64_t busy_ns;
  int64_t batches;
} CsGpuResult;

struct CsResults {
  int n_models;
  CsModelResult *models;      /* model names owned by model_names */
  char **model_names;
  CsModelResult total;
  GArray **batch_sizes;       /* per model: int64 count per batch size (index = size) */
  GArray **replicas;          /* per model: CsResultReplica */
  int n_gpus;
  CsGpuResult *gpus;
  uint64_t seed;
  int64_t sim_time_ns;
  uint64_t events;
  double wall_s;
  char *placement_policy;
  char *placement_log;
  double expected_total;
  char *network;
  char **profiles;
  int64_t bin_ns;             /* width of a time-series bin */
  GArray *bin_busy_ns;        /* int64 per bin: GPU-ns busy over all GPUs */
  GArray *bin_gpus_used;      /* int64 per bin: GPUs that ran anything */
  char *trace_desc;           /* JSON text of the trace used, or NULL */
  char *dispatch_policy;
  cJSON *dispatch_params;   /* the dispatch policy's parameters, for the summary */
};

CsResults *cs_results_alloc(int n_models, int n_gpus);

#endif
