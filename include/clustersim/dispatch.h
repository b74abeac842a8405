/* libclustersim: dispatch policies, the online stage between the clients and
 * the GPUs that decides when requests leave as a batch and to which GPU.
 *
 * A dispatch policy owns every request from its arrival until it sends it to
 * a GPU in a batch (or drops it). It acts only through the engine services
 * below and learns of the world through CsWorld, the compiled scenario. Two
 * kinds exist:
 *  - placement-based (uses_placement TRUE): the scenario's placement policy
 *    decides the replicas first; the policy sends each batch to a replica
 *    (cs_engine_send_replica), which runs it on the replica's GPU with the
 *    replica's MPS share. The thesis' "router" is one.
 *  - centralized (uses_placement FALSE): every model may run on every GPU;
 *    the policy picks the GPU of each batch (cs_engine_send_gpu) and the GPU
 *    runs one batch at a time. Symphony's deferred batch scheduling and its
 *    "eager" and "timeout" baselines are such.
 * Built-in policies are CsDispatchPolicy values like the ones a user
 * registers (registry.h) and see nothing more than this header.
 *
 * Timing of a batch once sent (MODEL.md, section 2): network transfer of the
 * requests' payload to the GPU's node, the GPU's FIFO queue, execution (its
 * isolated latency, slowed by co-location under MPS and interference),
 * network transfer of the results back to the clients.
 *
 * Times are simulated ns since the start of the run. Models are indexed by
 * client order in the scenario, GPUs by cluster order. Nothing here is thread
 * safe: an engine runs on one thread, and callbacks must not block.
 *
 * Misuse: a service called with an index out of range, a batch sent to a
 * replica of another model, an empty batch, or the send of the other kind of
 * policy stops the run; cs_run() then returns NULL with CS_ERROR_POLICY and a
 * message naming the policy, the call and the simulated time. A policy bug
 * never turns into a silently wrong number.
 *
 * The engine keeps its own record of every request it gave the policy (its
 * id, model, send time, "measured", and whether the policy still holds it)
 * and checks each CsRequest and CsBatch a service is given against it. So
 * these are misuses too, each stopping the run at the call: a request the
 * engine never gave (or a pointer kept past on_request), a request changed
 * (send_ns, measured), added to a batch of another model, or leaving the
 * policy twice (sent twice, added twice to a batch that is sent, sent and
 * dropped); a batch sent twice, added to, changed or discarded once sent, or
 * read once discarded or answered; a NULL batch or request; a capacity, a
 * batch or an exec_ns size beyond CS_BATCH_MAX. A NULL engine (or world, or
 * batch to a getter) is refused as GLib refuses a broken precondition: a
 * critical warning, and the call returns 0, -1, NULL or FALSE doing nothing
 * (the run then says which requests were never sent: warning
 * requests_held).
 *
 * Lifetimes: the CsRequest of on_request lives for that call only; the
 * policy keeps a copy (it is a plain value: copy all of it), and passes
 * that copy to the services. A batch is the policy's from cs_engine_batch_new
 * until it sends or discards it, the engine's after; a cs_batch_request
 * pointer is valid until the next cs_batch_add to that batch, its send or its
 * discard. CsBatchEvent pointers live for their callback.
 */
#ifndef CLUSTERSIM_DISPATCH_H
#define CLUSTERSIM_DISPATCH_H

#include "core.h"
#include "params.h"
#include "placement.h"
#include "profiles.h"

G_BEGIN_DECLS

/* ---- The world: the compiled scenario, read-only ------------------------------- */

typedef struct CsWorld CsWorld;

/* Models are the scenario's clients, in order. Out-of-range indices give
 * NULL, 0 or -1 below, never a crash. */
CS_API int cs_world_n_models(const CsWorld *w);
/* The model's name, e.g. "resnet50" (owned by the world). */
CS_API const char *cs_world_model_name(const CsWorld *w, int model);
/* The model's latency objective in ns. */
CS_API int64_t cs_world_slo_ns(const CsWorld *w, int model);
/* The client's sending rate in req/s (the mean for trace clients). */
CS_API double cs_world_rate_rps(const CsWorld *w, int model);
/* The rate the scenario's placement plans for: the client's planned_rate,
 * else its rate. */
CS_API double cs_world_planned_rate_rps(const CsWorld *w, int model);
/* Request and result payload per request in bytes (0 when the network is
 * zero and the profile does not say). */
CS_API int64_t cs_world_input_bytes(const CsWorld *w, int model);
CS_API int64_t cs_world_output_bytes(const CsWorld *w, int model);

/* GPUs in cluster order (a MIG instance counts as one), their type name in
 * the profiles and the node they belong to. */
CS_API int cs_world_n_gpus(const CsWorld *w);
CS_API const char *cs_world_gpu_type(const CsWorld *w, int gpu);
CS_API int cs_world_gpu_node(const CsWorld *w, int gpu);

/* The scenario's profiles (profiles.h), owned by the world. */
CS_API const CsProfileSet *cs_world_profiles(const CsWorld *w);

/* The profile of model on gpu's type, or NULL when the set has none. */
CS_API const CsModelProfile *cs_world_profile(const CsWorld *w, int model, int gpu);

/* The placement the run executes, or NULL for a centralized policy. */
CS_API const CsPlacement *cs_world_placement(const CsWorld *w);

/* The run's seed (the scenario's, or the --seed override). A policy that
 * draws random numbers takes them from cs_engine_policy_uniform (its own
 * stream of this seed, below); one that keeps its own generator seeds it
 * from this seed and its name, so that its runs stay deterministic. */
CS_API uint64_t cs_world_seed(const CsWorld *w);

/* Latency of one network transfer of bytes (payload of a whole batch) on the
 * scenario's network curve, in ns; 0 on a zero network. */
CS_API int64_t cs_world_network_ns(const CsWorld *w, int64_t bytes);

/* ---- Warnings ---------------------------------------------------------------- */

typedef struct CsWarningList CsWarningList;

/* Adds a warning: a setting that disagrees with the world, or anything else
 * that would mislead a reader of the run's numbers. code is a short stable
 * identifier ("budget_network_mismatch"); model is a model name or NULL, gpu
 * a GPU index or -1. Shown on stderr by the CLI and stored in summary.json. */
CS_API void cs_warning_add(CsWarningList *l, const char *code, const char *model, int gpu,
                           const char *fmt, ...) G_GNUC_PRINTF(5, 6);

/* ---- Requests and batches ---------------------------------------------------------- */

typedef struct {
  uint64_t id;       /* global id, in generation order */
  int64_t send_ns;   /* when the client sent it */
  gboolean measured; /* FALSE during warm-up (not in the metrics) */
} CsRequest;

typedef struct CsBatch CsBatch;

/* The largest batch a policy may form, in requests: the largest batch size
 * a profile or a placement takes. cs_engine_batch_new refuses a larger
 * capacity, cs_batch_add a larger batch, cs_engine_exec_ns a larger n. */
#define CS_BATCH_MAX (1 << 20)

/* ---- Engine services ------------------------------------------------------------------ */

typedef struct CsEngine CsEngine;

/* A timer handle; CS_TIMER_NONE (0) is no timer. */
typedef uint64_t CsTimer;
#define CS_TIMER_NONE ((CsTimer)0)

/* The world the engine simulates (valid for the whole run). */
CS_API const CsWorld *cs_engine_world(const CsEngine *e);

/* Current simulated time. */
CS_API int64_t cs_engine_now(const CsEngine *e);

/* Schedules the policy's on_timer(arg) at time at_ns (>= now; earlier is
 * taken as now). Timers at the same time fire in the order they were set.
 * Returns its handle. */
CS_API CsTimer cs_engine_timer(CsEngine *e, int64_t at_ns, uint32_t arg);

/* Cancels a pending timer of this policy's (one cs_engine_timer returned).
 * Returns TRUE if it was pending; FALSE for a timer that already fired or was
 * cancelled, for CS_TIMER_NONE, and for any handle that is not a pending
 * dispatch timer (a controller's timer, a guessed value): those cancel
 * nothing. */
CS_API gboolean cs_engine_cancel(CsEngine *e, CsTimer t);

/* Returns an empty batch of model with room for capacity requests (a hint: it
 * grows; at most CS_BATCH_MAX). The policy owns it until it sends or
 * discards it. */
CS_API CsBatch *cs_engine_batch_new(CsEngine *e, int model, int capacity);

/* Gives back a batch the policy holds without sending it, after it sent,
 * dropped or marked unserved each request in it: the batch's requests are
 * not touched. A batch already sent is a misuse. */
CS_API void cs_engine_batch_discard(CsEngine *e, CsBatch *b);

/* Appends a request the policy holds (as on_request gave it, or an
 * unchanged copy) to its batch, a batch of the request's model the policy
 * holds. The request still belongs to the policy until the batch is sent. */
CS_API void cs_batch_add(CsEngine *e, CsBatch *b, const CsRequest *r);

/* Requests in the batch, and its model. */
CS_API int cs_batch_size(const CsBatch *b);
CS_API int cs_batch_model(const CsBatch *b);
/* The i-th request of the batch (NULL when out of range); valid until the
 * next cs_batch_add to the batch, its send or its discard. */
CS_API const CsRequest *cs_batch_request(const CsBatch *b, int i);

/* The GPU must not start the batch before t_ns (Symphony's deferred start);
 * by default it starts as soon as it is at the front of the GPU's queue. */
CS_API void cs_batch_set_not_before(CsBatch *b, int64_t t_ns);

/* The batch's inputs are already at its GPU's node: the policy forwarded each
 * request there when it arrived (as Nexus' frontends do) and modelled that
 * delay itself. Sending the batch then costs no transfer. */
CS_API void cs_batch_set_inputs_at_node(CsBatch *b);

/* The run's replicas: the placement's first (same indices), then each one a
 * controller added (control.h), in order; cs_engine_replica is NULL out of
 * range. Without a controller they are the placement's, all active. */
CS_API int cs_engine_n_replicas(const CsEngine *e);
CS_API const CsReplica *cs_engine_replica(const CsEngine *e, int replica);

/* TRUE when replica takes batches now: FALSE while it waits for memory or
 * loads, once it drains or retires, and out of range. */
CS_API gboolean cs_engine_replica_active(const CsEngine *e, int replica);

/* TRUE when replica will become active without further change: it waits
 * for memory or loads (a controller added it). FALSE otherwise. */
CS_API gboolean cs_engine_replica_pending(const CsEngine *e, int replica);

/* What the engine holds for one replica: the batches sent to it that have
 * not finished, by where they are, and the requests in them. Requests the
 * policy still holds (its own open batches) are the policy's to count.
 *   in_transfer + queued + busy = the batches sent to it that have not
 *   finished; summed over a GPU's replicas, in_transfer, queued and busy are
 *   cs_engine_gpu_in_transfer, cs_engine_gpu_queued and
 *   cs_engine_gpu_running of that GPU (placement-based runs).
 * A replica runs one batch at a time; the next one starts when it is idle,
 * is at the front (its GPU's FIFO when the GPU time-slices, its own under
 * MPS) and the GPU accepts it. */
typedef struct {
  int in_transfer;          /* batches on their way to its GPU's node (network) */
  int queued;               /* batches at the node not started: before their not-before
                             * time (cs_batch_set_not_before) or waiting in the queue */
  int64_t waiting_requests; /* requests in the in_transfer and queued batches */
  gboolean busy;            /* one of its batches is executing now */
  int64_t running_requests; /* requests in that batch; 0 when not busy */
  /* It did not fit in its GPU's memory (cluster.memory_overflow
   * "fail_replicas"): it stays active, and every batch sent to it fails
   * when it reaches the node (see on_batch_finish). */
  gboolean fails_memory;
} CsReplicaQueue;

/* Fills *out with replica's queue now and returns TRUE; FALSE, *out zeroed,
 * for a replica out of range (every replica of a centralized run: it has
 * none). The counters are read, not kept: call it again after any event.
 * Retired and draining replicas report what they still hold. out must not
 * be NULL (refused GLib-style, FALSE). */
CS_API gboolean cs_engine_replica_queue(const CsEngine *e, int replica, CsReplicaQueue *out);

/* TRUE when gpu takes new batches: FALSE while a controller has it off,
 * provisioning or released (and out of range). Always TRUE without a
 * controller that scales GPUs. */
CS_API gboolean cs_engine_gpu_ready(const CsEngine *e, int gpu);

/* Sends the batch now to replica (index among the run's replicas, which
 * must be active): transfer to its GPU's node, then its GPU's queue. The
 * engine owns the batch from here on. Placement-based policies only. */
CS_API void cs_engine_send_replica(CsEngine *e, CsBatch *b, int replica);

/* Sends the batch now to gpu (which must be ready), where it runs alone (one
 * batch at a time). Centralized policies only. */
CS_API void cs_engine_send_gpu(CsEngine *e, CsBatch *b, int gpu);

/* Preemption (Shepherd): stops every batch sent to gpu that has not finished
 * (in transfer, waiting for its not-before time, queued or running). The GPU
 * time they ran is lost (it counts as busy time and in the GPU's
 * "preempted_ms"); their requests return to the policy, which holds them
 * again and must send or drop each one. Appends those requests to out (a
 * GArray of CsRequest) in dispatch order and returns how many batches were
 * stopped (0: none). Centralized policies only; a placement-based policy,
 * a GPU out of range or a wrong array are misuses that stop the run. */
CS_API int cs_engine_preempt_gpu(CsEngine *e, int gpu, GArray *out);

/* The request leaves unserved: dropped because it cannot meet its deadline
 * (counted as dropped), or because its model has no replica (unserved). */
CS_API void cs_engine_drop(CsEngine *e, int model, const CsRequest *r);
CS_API void cs_engine_unserved(CsEngine *e, int model, const CsRequest *r);

/* Execution time of a batch of n requests of model on gpu when it runs alone
 * on the GPU (the profile's exec time), in ns. 1 <= n <= CS_BATCH_MAX. */
CS_API int64_t cs_engine_exec_ns(CsEngine *e, int model, int gpu, int n);

/* GPU state: batches sent to gpu that have not arrived at its node yet
 * (in transfer), at its node not started (waiting for their not-before time
 * or in its queue), and executing now. cs_engine_replica_queue splits them
 * by replica. */
CS_API int cs_engine_gpu_in_transfer(const CsEngine *e, int gpu);
CS_API int cs_engine_gpu_queued(const CsEngine *e, int gpu);
CS_API int cs_engine_gpu_running(const CsEngine *e, int gpu);

/* The policy's random stream: draws that only the policy makes, the same
 * ones for the same seed and policy name, whatever else the run draws.
 * cs_engine_policy_uniform returns a number in [0, 1), cs_engine_policy_random
 * 64 random bits; both advance one stream, created at the first draw.
 * The stream is rng.h's stream "dispatch/<policy name>" of the run's seed
 * (cs_world_seed): its seed is a hash of the two, so it shares no state
 * with any client's arrival stream ("client/<model>/arrivals"), and a policy
 * that draws more or fewer numbers moves no arrival, and two policies of
 * different names draw different numbers. The generator is the
 * project's xoshiro256** (stream version 2, summary.json's
 * "rng_stream_version"): a uniform is the top 53 bits of one 64-bit output
 * times 2^-53, cs_engine_policy_random one output. A later version may
 * change the generator, and then the draws (not their independence or
 * determinism): compare runs of one version. A NULL engine is refused
 * GLib-style (0). */
CS_API double cs_engine_policy_uniform(CsEngine *e);
CS_API uint64_t cs_engine_policy_random(CsEngine *e);

/* Stops the run because the policy cannot go on (a state it cannot handle, an
 * error of a policy written in another language): cs_run returns NULL with
 * CS_ERROR_POLICY and 'dispatch policy "NAME": message (at T s simulated)',
 * as for a misused service; the first such stop is the one reported. The
 * current callback returns normally; no other is called after it. A NULL
 * engine or message is refused GLib-style. */
CS_API void cs_engine_abort(CsEngine *e, const char *message);

/* ---- Callbacks ---------------------------------------------------------------------- */

/* What the engine tells a policy about a batch it sent. */
typedef struct {
  int model;
  int gpu;
  int replica;          /* the replica it was sent to, or -1 (centralized) */
  int size;             /* requests in it */
  int64_t dispatch_ns;  /* when the policy sent it */
  int64_t node_ns;      /* when it reached the GPU's node */
  int64_t start_ns;     /* when the GPU started it */
  int64_t end_ns;       /* when the GPU finished it (finish callback only) */
  uint64_t batch_id;    /* 1, 2, ... in dispatch order; requests carry it (CsRequestRecord) */
  int worker;           /* the worker that runs it: the replica, or model x GPUs + GPU */
} CsBatchEvent;

typedef struct CsDispatchPolicy {
  const char *name;        /* the scenario's "dispatch.policy" */
  const char *description; /* one line for the docs and listings */
  /* TRUE: the scenario's placement runs and batches go to its replicas.
   * FALSE: no placement; batches go to any GPU. */
  gboolean uses_placement;
  /* Parses the scenario's "dispatch" object (an empty object when absent).
   * Returns the policy's parameters (freed with free_params), or NULL with
   * error set naming the field. May be NULL: the policy takes no parameters
   * (and its params are NULL). */
  void *(*parse)(CsParams *params, void *user_data, GError **error);
  void (*free_params)(void *params);
  /* Optional. Called once when the scenario is compiled: may complete params
   * with what it derives from the world and adds a warning for each setting
   * that disagrees with it. Never fails. */
  void (*check)(void *params, const CsWorld *w, CsWarningList *warnings, void *user_data);
  /* Creates the per-run state. Required. */
  void *(*create)(CsEngine *e, const void *params, void *user_data);
  void (*destroy)(void *state);
  /* A request of model arrives; the policy owns it from now on (until it
   * sends it in a batch, drops it or marks it unserved: once). r lives for
   * this call only: keep a copy, never the pointer. Required. */
  void (*on_request)(void *state, int model, const CsRequest *r);
  /* A timer the policy set fires; arg is what it passed to cs_engine_timer. */
  void (*on_timer)(void *state, uint32_t arg);
  /* Optional: a batch the policy sent starts / finishes executing on its GPU.
   * Neither is called for a batch that never runs: a batch sent to a replica
   * that fails for memory (CsReplicaQueue.fails_memory) reaches the node
   * (after its transfer and its not-before time) and fails there: its
   * requests count as failed, the replica's queue lets go of it
   * (cs_engine_replica_queue), and no callback says so. A policy that counts
   * what it sent by these callbacks skips those replicas, or reads the
   * queue instead. A preempted batch (cs_engine_preempt_gpu) gets no
   * on_batch_finish either (its on_batch_start if it was running). */
  void (*on_batch_start)(void *state, const CsBatchEvent *b);
  void (*on_batch_finish)(void *state, const CsBatchEvent *b);
  /* Optional: writes the parameters as the run's summary shows them (under
   * "dispatch"), derived values included. */
  void (*describe)(const void *params, CsParamsWriter *out);
  /* Optional: writes every parameter the scenario may leave out, with the
   * value parse gave it; the effective scenario adds those the scenario's
   * "dispatch" object lacks, so that it states every default and parses to the
   * same parameters. */
  void (*write_defaults)(const void *params, CsParamsWriter *out);
  /* Optional: no event is left (no arrival, batch or timer pending). A
   * policy that acts only on events may still hold requests it will never
   * send (Shepherd's emulator drops them when it stops); it drops or sends
   * them here. The run goes on when it sets a timer or sends a batch, and
   * this is called again the next time nothing is pending. */
  void (*on_quiet)(void *state);
  /* Optional: a controller (control.h) changed the run's replicas (one
   * became active, started draining or retired) or GPUs (one became ready
   * or was released). The policy reads cs_engine_replica_active /
   * cs_engine_gpu_ready again and must stop sending where it no longer may;
   * requests it holds for a model left without any replica it drops or
   * marks unserved. A policy without it cannot run under a controller that
   * changes replicas or GPUs: the scenario is refused. */
  void (*on_cluster_change)(void *state);
} CsDispatchPolicy;

G_END_DECLS

#endif
