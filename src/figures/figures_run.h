/* What the run figures read of a run's summary.json (internal to
 * figures_run.c and figures_cluster.c). */
#ifndef CS_FIGURES_RUN_H
#define CS_FIGURES_RUN_H

#include <cjson/cJSON.h>

#include "clustersim/clustersim.h"
#include "figures.h"

G_BEGIN_DECLS

typedef struct {
  int gpu, batch;
  double share; /* MPS share, 0: no limit; NaN when summary.json has none */
} RunReplica;

typedef struct {
  const char *name;
  double slo_ms;                    /* NaN when null */
  double latency_mean;              /* ms, NaN when no request completed */
  double stage_mean[CS_N_STAGES];   /* ms, NaN when null or absent */
  gboolean has_stage_means;         /* summary.json gives them (newer versions) */
  GArray *replicas;                 /* RunReplica */
} RunModel;

typedef struct {
  const char *type;
  double busy_fraction, memory_pct;
  int physical, mig_instance; /* mig_instance -1 for a whole GPU */
} RunGpu;

typedef struct {
  const char *dir;
  char *path;         /* dir/summary.json, for messages */
  cJSON *doc;         /* owns the strings below */
  int n_models;
  RunModel *models;
  int n_gpus;
  RunGpu *gpus;
  gboolean mps;
  const char *placement, *dispatch;
  double bin_s;       /* width of the time-series bins */
} RunSummary;

/* Index of the model called name, or -1. */
int cs_run_summary_model(const RunSummary *r, const char *name);

/* gpu_busy: GPUs used and busy over time, busy fraction per GPU
 * (gpus_over_time.csv, gpu_timeseries.csv). Returns FALSE with error set on
 * a malformed file; absent files are a note. */
gboolean cs_figure_gpu_busy(CsFigureSet *set, const RunSummary *r, GError **error);

/* placement: the replicas on each GPU, their batch and MPS share. */
void cs_figure_placement(CsFigureSet *set, const RunSummary *r);

/* The title's second line: "placement P, dispatch D, N GPUs (MPS)". */
char *cs_run_subtitle(const RunSummary *r);

G_END_DECLS

#endif
