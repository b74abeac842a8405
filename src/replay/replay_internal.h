/* A replay's state, shared by replay.c (the real-time part) and
 * replay_results.c (counting what it measured with the simulator's rules). */
#ifndef CS_REPLAY_INTERNAL_H
#define CS_REPLAY_INTERNAL_H

#include "clustersim/backend.h"
#include "decision_log.h"
#include "sim/config.h"

/* What happened to one batch, ns from the replay's epoch (the simulated
 * run's time 0). */
typedef struct {
  int64_t dispatch_ns;      /* sent */
  int64_t node_ns;          /* its inputs at its GPU (and not before its not_before) */
  int64_t start_ns, end_ns; /* execution on the backend */
  int64_t dispatch_late_ns; /* sent this long after its recorded dispatch time */
  int64_t start_late_ns;    /* started this long after its GPU or worker could take it */
  gint sent;                /* atomic: the clock thread has sent it */
} ReplayBatch;

typedef struct Executor Executor;

typedef struct {
  const DecisionLog *log;
  const CsConfig *cfg;      /* the log's scenario, compiled */
  const CsBackend *backend;
  void *state;              /* the backend's */
  CsBackendSetup setup;
  gboolean mps;
  double max_lateness_ms;
  gboolean spin_idle;       /* executors spin, never sleep, until their next batch */
  gboolean realtime;        /* the clock thread ran at real-time priority */
  GArray *wakeup_late_ns;   /* int64 ns per step of the wake-up probe (probe.h), or NULL */
  int64_t epoch_ns;         /* CLOCK_MONOTONIC at the run's time 0 */
  int64_t *send_ns;         /* per request: when it was sent */
  GArray *times;            /* ReplayBatch per batch of the log */
  GArray *left_ns;          /* int64 per left record: when it left */
  Executor **executors;
  int n_executors;
  int *executor_of;         /* per batch */
  GMutex lock;              /* guards prepared and error */
  GCond cond;
  int prepared;             /* executors whose workers are prepared */
  gboolean started;         /* the epoch is set: executors may begin */
  gint failed;              /* atomic: stop */
  GError *error;            /* the first failure */
} Replay;

/* The scenario log recorded, compiled with the replicas active at 0 as a
 * manual placement (so that no placement policy runs again) and without its
 * controller (whose actions the log holds). NULL with error set when it no
 * longer compiles (a profile file moved) or disagrees with the header. */
CsConfig *cs_replay_compile_scenario(const DecisionLog *log, GError **error);

/* The results of a finished replay, counted as the simulator counts a run
 * (sim/clients.c, sim/metrics.c), with a "replay" section: the backend
 * (described: JSON text, or NULL), lateness and validity. Writes requests_csv
 * (NULL: none) as a run writes requests.csv. NULL with error set when the
 * CSV cannot be written. */
CsResults *cs_replay_results(const Replay *rp, const char *described, const char *requests_csv,
                             GError **error);

#endif
