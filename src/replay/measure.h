/* Profiling a backend (`clustersim profile measure`): isolated latency per
 * batch size of each model, and the slowdown of each model next to each
 * other one on the same GPU, written in the project's own formats
 * (clustersim-profile, clustersim-interference) with the machine and the
 * date in their source. */
#ifndef CS_MEASURE_H
#define CS_MEASURE_H

#include "clustersim/backend.h"
#include "probe.h"

typedef struct {
  const CsBackend *backend;
  const char *const *backend_options; /* NULL-terminated, or NULL */
  const CsProfileSet *like;   /* the profiles the backend sizes its models from */
  const char *like_type;      /* their GPU type */
  const char *const *models;  /* NULL-terminated, each profiled on like_type */
  const int *batches;         /* batch sizes to measure, ascending */
  int n_batches;
  int repeat;                 /* timed executions per point (after 3 untimed) */
  int pair_batch;             /* batch size of both models in pair measurements; 0: no pairs */
  /* MPS shares (percent, in (0, 100], ascending) to measure each model's
   * latency-vs-share table at, every batch size; n_shares 0: none. Needs
   * a backend that runs_shares. */
  const int *shares;
  int n_shares;
  /* Interference data the backend is opened with (an emulating backend's
   * share tables), or NULL. */
  const CsInterferenceSet *like_interference;
  const char *gpu_type;       /* name of the measured GPU type in the files written */
  /* A state of backend the caller opened (and closes) with models in the
   * order of models, whose GPU 0 is measured; NULL: one GPU, opened here. */
  void *backend_state;
  /* When not NULL: set to the same measurements as rows of the measured
   * format (src/profiles/measured.h, docs/profiles.md "Measured data"; g_free
   * it): isolated rows (blank share), share rows, co-located pair rows. */
  char **csv;
  /* When not NULL: set to what the wake-up probe (probe.h) measured over
   * the measurement, judged against the median of every latency measured
   * (busy: the latencies include late wake-ups of about p90_ms). */
  CsProbeStats *wakeup;
} CsMeasureOptions;

/* The real time cs_measure_backend(o) is expected to take, in seconds:
 * per worker (model x share) 100 ms of warm-up, then (3 + repeat) runs of
 * every batch size, and per ordered pair 100 ms and (3 + repeat) runs of the
 * victim's pair batch, each run taking the latency of o->like on
 * o->like_type (which the emulated backend sleeps for and the cpu and cuda
 * backends size their models from). A model without a profile counts 0. */
double cs_measure_expected_s(const CsMeasureOptions *o);

/* The most timed samples cs_measure_backend holds ((models x (1 + shares)
 * x batch sizes) x (3 + repeat) doubles, 200 MB): more is refused before
 * anything is allocated or run. */
#define CS_MEASURE_MAX_SAMPLES 25000000

/* A duration in seconds for messages, in larger units beside when long:
 * "23.6 s", "9.01e+06 s (about 104 days)". Returns newly allocated text. */
char *cs_duration_words(double s);

/* Measures on o->backend (one GPU, workers concurrent as under MPS) and
 * returns the profile and interference files as JSON text (g_free), and the
 * backend's description (JSON text; g_free). *interference is NULL without
 * pairs and shares. FALSE with error set when the backend fails, cannot run
 * shares that were asked for, a model has no profile on like_type, or the
 * samples would exceed CS_MEASURE_MAX_SAMPLES (CS_ERROR_INVALID). */
gboolean cs_measure_backend(const CsMeasureOptions *o, char **profile, char **interference,
                            char **described, GError **error);

#endif
