/* libclustersim: execution backends, and replaying a run's decisions on them.
 *
 * `clustersim run --decisions FILE` records what the simulator decided
 * (docs/scenario.md, "Decision log"). cs_replay() plays that log back in real
 * time: each request is sent at its recorded time, each batch is formed and
 * sent exactly as decided, and a backend executes it; real clocks
 * (CLOCK_MONOTONIC) time every stage. The result has the shape of a
 * simulated run's, so the same tools compare the two (docs/replay.md).
 *
 * A backend executes batches. The built-in ones (cs_backend_builtin):
 *   "emulated"  sleeps for the profiled latency of each batch (no
 *               interference, no MPS cap): what is left is the replay's own
 *               scheduling overhead;
 *   "cpu"       each GPU of the scenario is a set of CPU cores; each model is
 *               a chain of single-precision matrix multiplications (OpenBLAS,
 *               one thread per worker) whose cost grows with the batch size;
 *               co-located workers contend for cores, caches and memory
 *               bandwidth. OpenBLAS is loaded when it is first opened.
 *   "cuda"      a process per worker running cuBLAS chains on its device
 *               (built where the CUDA toolkit is; never run on a GPU).
 * A researcher adds their own by filling a CsBackend and passing it in
 * CsReplayOptions. Nothing here is global.
 */
#ifndef CLUSTERSIM_BACKEND_H
#define CLUSTERSIM_BACKEND_H

#include "clustersim.h"
#include "placement.h"
#include "profiles.h"

G_BEGIN_DECLS

/* What a backend is opened for: the GPUs and models of the scenario whose
 * decisions are replayed. Owned by the caller; valid until close. */
typedef struct {
  int n_gpus;
  const char *const *gpu_types;  /* per GPU: its GPU type's name in profiles */
  gboolean mps;                  /* co-located workers run concurrently (MPS), else take turns */
  int n_models;
  const char *const *models;     /* model names, indexed as in the decision log */
  const CsProfileSet *profiles;  /* the scenario's profiles */
  /* "KEY=VALUE" settings given to the backend (--backend-option), NULL-
   * terminated; NULL for none. A backend refuses a key it does not know. */
  const char *const *options;
  /* The scenario's interference data (cluster.interference), or NULL: a
   * backend that emulates execution may take latency-vs-share tables from
   * it (the emulated backend does). */
  const CsInterferenceSet *interference;
} CsBackendSetup;

/* One worker as the backend sees it: a replica (or, for a centralized
 * policy, a model) on a GPU. */
typedef struct {
  int gpu;
  int worker;        /* the worker index of the decision log */
  int model;         /* index into CsBackendSetup.models */
  double mps_share;  /* its MPS share in (0, 1], 0 = none */
  int max_batch;     /* the largest batch it will be given */
  void *data;        /* the backend's own, set by prepare */
} CsBackendWorker;

typedef struct {
  const char *name;
  const char *description;
  /* Every error a backend's callbacks set is shown prefixed with
   * 'backend "NAME": ' (and, for a batch, its number and GPU) by the
   * framework: the messages do not name the backend themselves.
   *
   * Returns the backend's state, or NULL with error set (bad option, no
   * device). Called once, from the replay's main thread. */
  void *(*open)(const CsBackendSetup *setup, void *user_data, GError **error);
  /* Called once per worker, from the thread that will run its batches,
   * before the clock starts: load the model, allocate, pin the thread.
   * Returns FALSE with error set when it cannot. May be NULL. */
  gboolean (*prepare)(void *state, CsBackendWorker *w, GError **error);
  /* Executes one batch of batch requests on w and returns when it is done;
   * FALSE with error set when it failed. Called from w's thread; batches of
   * different workers run concurrently (under MPS, or on different GPUs). */
  gboolean (*execute)(void *state, CsBackendWorker *w, int batch, GError **error);
  /* Frees what prepare allocated for w (w's thread). May be NULL. */
  void (*release)(void *state, CsBackendWorker *w);
  /* What ran, as JSON text (library, machine, sizes), g_free'd by the
   * caller; may be NULL. */
  char *(*describe)(void *state);
  /* The fraction of gpu's compute one worker can use when alone (a
   * single-threaded worker on a GPU of k cores: 1/k), or NAN when unknown.
   * `clustersim profile measure` writes it as the profile's Creq. May be
   * NULL (unknown). */
  double (*worker_share)(void *state, int gpu);
  void (*close)(void *state);
  /* TRUE when a worker prepared with mps_share in (0, 1) runs on that share
   * of its GPU (as MPS's active thread percentage caps a process), so that
   * `clustersim profile measure --shares` can measure latency-vs-share
   * tables on it. */
  gboolean runs_shares;
} CsBackend;

/* The built-in backend called name ("emulated", "cpu", "cuda"), or NULL
 * when there is none of that name or it was not built (see
 * cs_backend_builtin_names). */
CS_API const CsBackend *cs_backend_builtin(const char *name);

/* The built-in backends of this build, comma separated (g_free it). */
CS_API char *cs_backend_builtin_names(void);

/* The value of key in setup->options, or NULL when absent. */
CS_API const char *cs_backend_option(const CsBackendSetup *setup, const char *key);

/* TRUE when every key of setup->options is one of known (NULL-terminated);
 * else FALSE with error set naming the key, the backend and what it knows. */
CS_API gboolean cs_backend_check_options(const CsBackendSetup *setup, const char *backend,
                                         const char *const *known, GError **error);

typedef struct {
  const char *decisions;      /* the decision log to replay (required) */
  const CsBackend *backend;   /* required */
  void *backend_user_data;
  const char *const *backend_options; /* "KEY=VALUE", NULL-terminated, or NULL */
  /* The replay is valid when the 99th percentile of its scheduling
   * lateness (a batch sent, or started, after the time it was due) is at
   * most this many ms; <= 0: the default, 1 ms. */
  double max_lateness_ms;
  /* A state of backend the caller opened (and closes), or NULL for
   * cs_replay to open its own with backend_options. Its setup must have the
   * log's GPUs and models, in the log's order. Reusing the state a profile
   * was measured with lets a backend run the replay on the very resources
   * it measured (the cpu backend: the same memory). */
  void *backend_state;
  const char *requests_csv;   /* write one row per request here (as a run does), or NULL */
  gboolean progress;          /* a progress line on stderr (the CLI sets it on a TTY) */
  /* Executors spin until their next batch instead of sleeping: a core that
   * sleeps between batches (a virtual CPU halted by its host) ran the next
   * batch up to 20 % slower on the machines this was developed on. Costs a
   * core per executor. */
  gboolean spin_idle;
  /* A replay takes as long as the run it records: one whose log spans more
   * than this many seconds (its last request, batch or end record) is
   * refused before the backend is opened, with CS_ERROR_INVALID giving the
   * span; 0: the default, CS_REPLAY_DEFAULT_MAX_DURATION_S; < 0: no bound. */
  double max_duration_s;
} CsReplayOptions;

/* The default bound on a replay's real duration: an hour. */
#define CS_REPLAY_DEFAULT_MAX_DURATION_S 3600.0

/* Fills opt with the defaults: no log, no backend, a 1 ms lateness bound,
 * no CSV, no progress, the default bound on the duration. Never fails. */
CS_API void cs_replay_options_init(CsReplayOptions *opt);

/* Replays opt->decisions on opt->backend in real time (it takes as long as
 * the run it records). Returns results like cs_run's, with a "replay"
 * section (lateness, validity, the backend's description); NULL with error
 * set when the log is unreadable or malformed (CS_ERROR_IO, CS_ERROR_PARSE or
 * CS_ERROR_INVALID, naming the
 * file, the line and the field), spans more than opt->max_duration_s
 * (CS_ERROR_INVALID), or the backend fails (CS_ERROR_POLICY). A
 * replay whose lateness exceeds the bound still returns results, with
 * cs_results_replay_valid FALSE and a warning "replay_late". */
CS_API CsResults *cs_replay(const CsReplayOptions *opt, GError **error);

/* TRUE for a replay whose scheduling lateness stayed within its bound, and
 * for a simulated run (which has no lateness). */
CS_API gboolean cs_results_replay_valid(const CsResults *r);

G_END_DECLS

#endif
