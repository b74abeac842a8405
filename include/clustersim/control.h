/* libclustersim: controllers, the policies that change the cluster while a
 * run goes on.
 *
 * A controller watches the run (arrivals, answers within or past the SLO,
 * GPU busy time) at moments it chooses with timers, and acts:
 *  - re-placement: it runs the scenario's placement policy again with the
 *    rates it estimates (cs_control_place) or builds a placement itself, and
 *    applies it (cs_control_apply). Replicas that stay keep running; new ones
 *    load (their memory over the host-to-GPU bandwidth, docs/scenario.md,
 *    "Controllers") and start taking batches when loaded; replicas that go
 *    finish the batches they hold (they drain) before their memory is freed.
 *    A new replica waits for memory a draining one still holds.
 *  - autoscaling: it provisions GPUs of the cluster's pool, which take work
 *    after a provisioning delay, and releases them; a GPU released finishes
 *    what it holds and is then off. Results report GPU-hours and cost from
 *    the time each GPU was provisioned.
 * The scenario names one controller in "controller.policy"; the built-in
 * ones are "replan" (periodic or triggered re-placement) and "autoscale"
 * (Symphony's signals); a researcher registers their own (registry.h).
 *
 * Every change reaches the dispatch policy through its on_cluster_change
 * callback (dispatch.h); a dispatch policy without it cannot run under a
 * controller that changes what it sees, and the scenario is refused.
 *
 * Times are simulated ns. Nothing is thread safe: a controller runs on the
 * run's thread, between events. Its timers fire only while the run has
 * other work (a client still sends or a request is in flight): a run ends
 * when its requests are done, whatever the controller has planned.
 */
#ifndef CLUSTERSIM_CONTROL_H
#define CLUSTERSIM_CONTROL_H

#include "core.h"
#include "dispatch.h"
#include "params.h"
#include "placement.h"

G_BEGIN_DECLS

/* The run as a controller sees it and acts on it. */
typedef struct CsControl CsControl;

/* Life of a GPU of the cluster's pool. */
typedef enum {
  CS_GPU_OFF,          /* not provisioned: takes no work, costs nothing */
  CS_GPU_PROVISIONING, /* asked for, not ready yet: costs, takes no work */
  CS_GPU_READY,        /* takes work */
  CS_GPU_RELEASING,    /* released: takes no new work, finishes what it holds */
} CsGpuLife;

/* Life of a replica (index into the run's replicas: the scenario's placement
 * first, then every replica an applied placement added, in order). */
typedef enum {
  CS_REPLICA_WAITING,  /* its GPU lacks memory (a draining replica holds it) or is not ready */
  CS_REPLICA_LOADING,  /* its weights are on their way to the GPU */
  CS_REPLICA_ACTIVE,   /* takes batches */
  CS_REPLICA_DRAINING, /* takes no batches; runs those it was sent */
  CS_REPLICA_RETIRED,  /* gone, memory freed */
} CsReplicaLife;

/* Every service below takes the CsControl its policy's callback was given,
 * valid only during that callback (the engine owns it); a NULL one is a
 * broken precondition, refused GLib-style (g_return_val_if_fail: a critical
 * warning, nothing done, the value a function returns for an out-of-range
 * argument, FALSE, -1 or NULL). */

/* ---- Observing ---------------------------------------------------------------- */

/* The world the run simulates (dispatch.h: models, GPUs, profiles). */
CS_API const CsWorld *cs_control_world(const CsControl *c);
/* Current simulated time in ns. */
CS_API int64_t cs_control_now(const CsControl *c);

/* Counts since the start of the run, warm-up included (a real controller
 * sees every request): requests of model that arrived; answered within the
 * SLO (good); not answered within it (bad: late results, drops, failures,
 * unserved). A request counts as bad once its result arrives late or it
 * leaves unserved, so bad counts lag by the requests still in flight.
 * Out-of-range models give 0. */
CS_API int64_t cs_control_arrivals(const CsControl *c, int model);
CS_API int64_t cs_control_good(const CsControl *c, int model);
CS_API int64_t cs_control_bad(const CsControl *c, int model);

/* Busy time of gpu from the start of the run to now, the current busy period
 * included; 0 when out of range. */
CS_API int64_t cs_control_gpu_busy_ns(const CsControl *c, int gpu);

/* Life of gpu (CS_GPU_OFF when out of range). */
CS_API CsGpuLife cs_control_gpu_life(const CsControl *c, int gpu);

/* Replicas of the run (see CsReplicaLife), each replica and its life. */
CS_API int cs_control_n_replicas(const CsControl *c);
CS_API const CsReplica *cs_control_replica(const CsControl *c, int i);
CS_API CsReplicaLife cs_control_replica_life(const CsControl *c, int i);

/* ---- Acting ---------------------------------------------------------------- */

/* Schedules the controller's on_timer(arg) at at_ns (earlier is taken as
 * now). Returns its handle (cs_control_cancel). */
CS_API CsTimer cs_control_timer(CsControl *c, int64_t at_ns, uint32_t arg);
/* Cancels a pending timer of the controller's (one cs_control_timer
 * returned). Returns TRUE if it was pending; FALSE for one that fired or was
 * cancelled, CS_TIMER_NONE, and any handle that is not a pending controller
 * timer (a dispatch policy's timer, a guessed value): those cancel nothing. */
CS_API gboolean cs_control_cancel(CsControl *c, CsTimer t);

/* Runs the scenario's placement policy, with its parameters, on the GPUs
 * that are READY or PROVISIONING, planning for rates[model] req/s (NULL: the
 * scenario's planned rates). Returns a new placement in the cluster's GPU
 * indices (free with cs_placement_free), or NULL with error set when the
 * run has no placement or the policy fails. Nothing changes until
 * cs_control_apply. */
CS_API CsPlacement *cs_control_place(CsControl *c, const double *rates, GError **error);

/* Makes p the run's placement: a live replica (not draining or retired)
 * equal to one of p's in model, GPU, batch and share keeps running; each
 * other replica of p is added (it loads; without load time when a replica
 * of its model is on that GPU already: the weights are there); each live
 * replica p lacks is removed: it keeps taking batches until the replicas
 * added for its model in this change are active (make before break), or
 * drains at once when its GPU's memory is needed or its model gets no
 * replica. Returns the number of replicas added plus removed (0: nothing
 * changed), or -1 with error set when p does not fit (a replica on a GPU
 * that is off or releasing, on no profile, or GPU memory exceeded by p's
 * replicas alone); the run then keeps its placement. */
CS_API int cs_control_apply(CsControl *c, const CsPlacement *p, GError **error);

/* Provisions gpu: it becomes READY delay_ns from now (plus, under a
 * centralized dispatch policy, the time to load every model). Returns FALSE
 * when the GPU is not OFF or out of range. */
CS_API gboolean cs_control_provision_gpu(CsControl *c, int gpu, int64_t delay_ns);

/* Releases gpu: it takes no new work, its replicas drain, and it is OFF
 * once it holds nothing. Returns FALSE when it is not READY or
 * PROVISIONING (a GPU still provisioning is off at once). */
CS_API gboolean cs_control_release_gpu(CsControl *c, int gpu);

/* Adds a warning to the run's results (dispatch.h, cs_warning_add). */
CS_API void cs_control_warn(CsControl *c, const char *code, const char *model, int gpu,
                            const char *fmt, ...) G_GNUC_PRINTF(5, 6);

/* Records a decision in the run's control log (summary.json "control.log"),
 * stamped with the simulated time. */
CS_API void cs_control_note(CsControl *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* ---- The policy ---------------------------------------------------------------- */

typedef struct CsControllerPolicy {
  const char *name;        /* the scenario's "controller.policy" */
  const char *description; /* one line for listings */
  /* TRUE when it may provision or release GPUs (the scenario's
   * "controller.initial_gpus" then says how many are on at the start). */
  gboolean scales_gpus;
  /* TRUE when it re-places (cs_control_place): the scenario's dispatch
   * policy must then use a placement. */
  gboolean needs_placement;
  /* Parses the scenario's "controller" object, as a dispatch policy's parse
   * (dispatch.h). Required. */
  void *(*parse)(CsParams *params, void *user_data, GError **error);
  void (*free_params)(void *params);
  /* Optional: called once when the scenario is compiled, to warn about a
   * setting that disagrees with the world (as a dispatch policy's check). */
  void (*check)(void *params, const CsWorld *w, CsWarningList *warnings, void *user_data);
  /* Optional: writes the parameters as the summary shows them, and every
   * default for the effective scenario (as dispatch.h). */
  void (*describe)(const void *params, CsParamsWriter *out);
  void (*write_defaults)(const void *params, CsParamsWriter *out);
  /* Creates the per-run state at time 0 (it sets its first timer here).
   * Required. */
  void *(*create)(CsControl *c, const void *params, void *user_data);
  void (*destroy)(void *state);
  /* A timer it set fires. Required. */
  void (*on_timer)(void *state, uint32_t arg);
} CsControllerPolicy;

G_END_DECLS

#endif
