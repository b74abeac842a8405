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

/* At most this many requests in a model's batches (counts x sizes), so
 * that 100 x requests fits an int64 (quantile ranks). */
#define CS_BATCH_MAX_REQUESTS (G_MAXINT64 / 100)

/* How many batches of one size held measured requests. */
typedef struct {
  int size;      /* requests in the batch, >= 1 */
  int64_t count; /* batches of that size, >= 1 */
} RunBatchSize;

typedef struct {
  const char *name;
  double slo_ms;                    /* NaN when null */
  double latency_mean;              /* ms, NaN when no request completed */
  double stage_mean[CS_N_STAGES];   /* ms, NaN when null or absent */
  gboolean has_stage_means;         /* summary.json gives them (newer versions) */
  GArray *replicas;                 /* RunReplica */
  int64_t batches;                  /* batches.count */
  GArray *batch_sizes;              /* RunBatchSize of batches.sizes, by size; NULL when
                                     * summary.json has none (older versions) */
  gboolean llm;                     /* an LLM deployment (summary.json's "llm"): its slo_ms
                                     * is no SLO of its own, ttft/tpot_slo_ms are */
  double ttft_slo_ms, tpot_slo_ms;
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
  int llm_gpus;       /* GPUs of its LLM deployments (not in gpus) */
  const char *llm_gpu_type; /* the first deployment's device, or NULL */
} RunSummary;

/* Reads dir/summary.json into r (r->dir set, the rest zero), checked field
 * by field. Returns FALSE with error naming the file and JSON path (or that
 * dir is no run's output); cs_run_summary_clear(r) is needed either way. */
gboolean cs_run_summary_read(RunSummary *r, GError **error);
void cs_run_summary_clear(RunSummary *r);

/* requests.csv at path: the end-to-end latency (ns) of each served measured
 * request (status ok), into lat[m] (one GArray of int64_t per model of r),
 * sorted. Returns FALSE with error naming the file and line. */
gboolean cs_run_read_latencies(const RunSummary *r, const char *path, GArray **lat,
                               GError **error);

/* The ranks (1-based) the latency CDFs show of n sorted values (a new
 * GArray of int64_t): all up to 2000, else the documented sample. */
GArray *cs_cdf_ranks(int64_t n);

/* Appends ns as milliseconds with exactly 6 decimals (exact: no rounding). */
void cs_append_ms(GString *out, int64_t ns);

/* Index of the model called name, or -1. */
int cs_run_summary_model(const RunSummary *r, const char *name);

/* gpu_busy: GPUs used and busy over time, busy fraction per GPU
 * (gpus_over_time.csv, gpu_timeseries.csv). Returns FALSE with error set on
 * a malformed file; absent files are a note. */
gboolean cs_figure_gpu_busy(CsFigureSet *set, const RunSummary *r, GError **error);

/* placement: the replicas on each GPU, their batch and MPS share. */
void cs_figure_placement(CsFigureSet *set, const RunSummary *r);

/* The nearest-rank quantile (pct in 1..100) of a batch size distribution
 * (RunBatchSize, by size, not empty): the smallest size b such that the
 * batches of size <= b reach rank ceil(pct/100 x total), counting each
 * batch once, or (by_requests) each batch as many times as it holds
 * requests: the batch size the request at that rank ran in. */
int cs_batch_quantile(const GArray *sizes, int pct, gboolean by_requests);

/* Appends one .dat block of a batch size CDF, a row per size, under label:
 * label, size, batches, cum_batches, fraction_batches, cum_requests,
 * fraction_requests; the first row is size 0 (nothing yet), so that the
 * steps drawn rise from 0. */
void cs_batch_cdf_block(GString *dat, const char *label, const GArray *sizes);

/* The columns of those blocks, for .dat headers. */
#define CS_BATCH_CDF_COLUMNS \
  "size\tbatches\tcum_batches\tfraction_batches\tcum_requests\tfraction_requests"

/* Appends the x axis settings of batch size CDFs whose largest size is
 * max_size: from 0, integer tics when there are few. */
void cs_batch_xaxis(GString *gp, int max_size);

/* batch_sizes: per model, the CDF of batch size by batches and by requests,
 * medians marked (figures_batch.c). */
void cs_figure_batch_sizes(CsFigureSet *set, const RunSummary *r);

/* figures_llm.c: "llm_over_time", each LLM deployment's KV use and output
 * tokens/s over time, from r->dir/llm_over_time.csv; nothing (TRUE) when
 * the run has none. Returns FALSE with error set (naming the file and
 * line) when the file is malformed. */
gboolean cs_figure_llm_over_time(CsFigureSet *set, const RunSummary *r, GError **error);

/* The title's second line: "placement P, dispatch D, N GPUs (MPS)". */
char *cs_run_subtitle(const RunSummary *r);

G_END_DECLS

#endif
