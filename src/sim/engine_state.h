/* The state of one run, private to src/sim: the engine and the entities of
 * the simulated world, shared by the files that implement them (see
 * engine.h for the pipeline of a request):
 *   engine.c   the core loop, setup and teardown, and the services that
 *              dispatch policies use (clustersim/dispatch.h);
 *   clients.c  arrival processes and measurement windows, and what becomes
 *              of each request (result, drop, failure; per-request records);
 *   gpus.c     batches at the node, GPU queues, batch start and finish, SM
 *              and busy-time accounting;
 *   metrics.c  a finished run's per-model and total metrics and the warnings
 *              about it.
 * src/replay counts a replay's results into Clients too, so that a replay
 * and a run follow the same rules (cs_engine_fill_model_result and after).
 * The functions below were static in one engine.c. Those called across files
 * now carry the cs_engine_ prefix of every libclustersim symbol; the two on
 * the hot path stay static inline here, under their own names. */
#ifndef CS_ENGINE_STATE_H
#define CS_ENGINE_STATE_H

#include <glib.h>
#include <gsl/gsl_rng.h>
#include <stdint.h>
#include <stdio.h>

#include "clustersim/clustersim.h"
#include "common/checked.h"
#include "config.h"
#include "engine_internal.h"
#include "event_queue_impl.h"
#include "gpu/gpu_exec.h"
#include "bins.h"
#include "used.h"
#include "results.h"
#include "samples.h"

enum {
  EV_ARRIVAL,       /* arg: client */
  EV_DISPATCH,      /* arg: the dispatch policy's own */
  EV_BATCH_AT_NODE, /* ptr: batch */
  EV_GPU_DONE,      /* arg: gpu; the GPU's earliest completion */
  EV_RESULT,        /* ptr: batch */
  EV_CONTROL,       /* arg: the controller's own (control.c) */
  EV_REPLICA_READY, /* arg: replica, done loading (control.c) */
  EV_GPU_READY,     /* arg: gpu, done provisioning (control.c) */
  EV_LLM,           /* the LLM deployments' next instant (llm_serving.c) */
};

/* llm_serving.c: one LLM deployment of the run. */
typedef struct CsLlmServing CsLlmServing;

#define CS_GAP_BATCH 32

typedef struct {
  const CsClientConfig *cfg;
  gsl_rng *rng;           /* this client's arrival gaps and nothing else: draw_gaps
                           * draws ahead on that ground (clients.c) */
  int64_t index;          /* requests generated so far, warm-up included */
  int64_t last_ns;        /* time of the last arrival (random processes) */
  int64_t interval_pos;   /* piecewise arrivals: the listed interval of the last arrival */
  int64_t window_start_ns, window_end_ns; /* window_end_ns is 0 until known */
  gboolean done;
  /* metrics */
  int64_t generated, warmup, measured, completed, good, failed, dropped, unserved;
  int64_t late;           /* measured requests whose result arrived after the window */
  int64_t in_window, good_in_window; /* results (any request) arriving inside the window */
  int64_t last_out_ns;    /* when the last measured request completed, failed or was dropped */
  CsSamples *e2e;         /* ns per completed measured request */
  CsSamples *router_wait; /* ns per completed measured request */
  /* Every other stage is shared by the requests of a batch: one weighted
   * sample per batch keeps memory per request small and the result exact. */
  CsSamples *batch_stage[CS_N_STAGES]; /* weighted; [CS_STAGE_ROUTER_WAIT] NULL */
  GArray *batch_sizes;    /* int64 count per size */
  int64_t batches, batched_requests;
  /* Sum over completed measured requests of their batch's isolated
   * execution time (ns; the GPU stage's counterpart without sharing or
   * interference), for the plan_gap warning's cause. */
  double iso_ns_sum;
  int64_t resolved;       /* requests (warm-up included) answered, dropped, failed or unserved */
  /* What a controller observes (control.h): every request, warm-up included. */
  int64_t all_good, all_bad;
  /* Per bin, warm-up included (bins.h): a = results within the SLO arriving
   * in it, b = requests leaving in it without one (late, dropped, failed,
   * unserved), x = requests sent in it. */
  GArray *series;
  /* The bin being filled, added to series when time leaves it (an addition
   * per request would cost more than the request's other bookkeeping). */
  int64_t open_bin;       /* -1: none */
  int64_t open_good, open_bad, open_sent;
  /* The open bin's times [bin_start, bin_end), so that counting into it
   * needs no division (an empty range when no bin is open). */
  int64_t bin_start, bin_end;
  double mean_gap_s;      /* 1 / rate_rps, for Poisson and gamma gaps */
  /* Poisson and gamma gaps (ns) drawn ahead (clients.c): the last
   * gaps_left of gaps[] not used yet (0, as zeroed: none drawn) */
  int gaps_left;
  int64_t gaps[CS_GAP_BATCH];
} Client;

/* A worker: one model replica on one GPU (router dispatch), or one model on
 * any GPU (centralized dispatch). It runs one batch at a time. */
typedef struct {
  int model;
  double share;           /* MPS share in (0, 1], 0 = none */
  int interference_model; /* index in the interference tables, -1 if unknown */
  gboolean failed;        /* did not fit in memory: its batches fail */
  gboolean busy;
  int gpu;                /* its GPU (replica workers), or -1 */
  GArray *bins;           /* batches that finished per bin (bins.h: a batches, b GPU ns) */
  int outstanding;        /* batches sent to it and not finished (a draining replica waits for 0) */
  /* Its part of its GPU's in_transfer and queued (Gpu), the requests in
   * those batches and in the one it runs: cs_engine_replica_queue. */
  int in_transfer, queued;
  int64_t waiting_requests, running_requests;
  Batch *qhead, *qtail;   /* under MPS: its batches waiting at the GPU, in arrival order */
} Worker;

typedef struct {
  /* Batches waiting at this GPU, in arrival order: one FIFO when the GPU
   * time-slices; under MPS a FIFO per worker (Worker.qhead), so that starting
   * the next batches costs O(workers), not O(waiting batches), however long
   * an overloaded replica's queue grows. */
  Batch *head, *tail;
  GArray *workers;        /* under MPS: the workers (int) placed on this GPU; NULL otherwise */
  CsGpuExec *exec;        /* the execution model */
  CsEventHandle done;     /* the one pending completion event */
  Batch **running;        /* batches executing now */
  int n_running, cap_running;
  int in_transfer;        /* batches sent to this GPU, not at its node yet */
  int queued;             /* batches in its FIFO */
  gboolean time_slice;    /* one batch at a time */
  int64_t busy_since;     /* start of the current busy period, -1 when idle */
  int64_t busy_ns;
  int64_t batches;
  int64_t preempted;      /* batches stopped by cs_engine_preempt_gpu */
  int64_t preempted_ns;   /* GPU time they had run, lost */
  int type;               /* index into Engine.gpu_types */
  GArray *bins;           /* busy time per bin (bins.h: a = ns with a batch running) */
  GArray *sm_bins;        /* SM use per bin (bins.h: x = integral of the SM fraction, ns) */
  int64_t last_change_ns; /* when the running set last changed */
  double sm_use;          /* SM use since then */
  /* control.c: the GPU's life (CsGpuLife), memory its live replicas hold (%
   * of the GPU's), and the periods it was provisioned (billed). */
  int life;
  double mem_used;
  int64_t on_since;       /* start of the current provisioned period, -1 when off */
  GArray *on_spans;       /* int64 pairs [from, to) of past provisioned periods */
  CsEventHandle ready_ev; /* its pending EV_GPU_READY */
} Gpu;

/* control.c: a replica's life (control.h), kept for every replica of the run. */
typedef struct {
  int life;               /* CsReplicaLife */
  double mreq;            /* % of its GPU's memory it holds while not retired */
  int64_t load_ns;        /* how long its load takes (0: weights already there) */
  uint64_t change;        /* the applied placement that added it (0: the scenario's) */
  uint64_t retire_after;  /* > 0: active until change retire_after's replicas of its model are */
  CsEventHandle ready_ev; /* its pending EV_REPLICA_READY */
  int64_t added_ns, active_ns, drain_ns, retired_ns; /* -1 until it happens */
} ReplicaLife;

typedef struct CsControl ControlState;

/* batches.c: the requests the dispatch policy was given, from the oldest
 * not yet answered to the newest (ids first..next - 1), each with its
 * model, send time, "measured" and where it is, in a ring indexed by id
 * (entry of id at ring[id & (cap - 1)], cap a power of two, grown when the
 * span would pass it). */
enum { CS_LEDGER_GONE, CS_LEDGER_HELD, CS_LEDGER_SENT }; /* SENT: in flight, HELD again if preempted */

typedef struct {
  int64_t send_ns;
  int32_t model;
  uint8_t measured, state;
} CsLedgerEntry;

typedef struct {
  CsLedgerEntry *ring;
  uint64_t cap;
  uint64_t first; /* every request before it is answered */
  uint64_t next;  /* the id the next request given to the policy gets */
} CsLedger;

/* batches.c: the ledger (CsLedger). cs_ledger_add enters a request given to
 * the policy; cs_ledger_leave checks that r is one the policy holds,
 * unchanged and of model (-1: any), and marks it sent (in flight) or gone,
 * else records the misuse naming call and returns FALSE; cs_ledger_return
 * gives a sent request back to the policy (preemption); cs_ledger_done
 * marks a sent request answered. */
void cs_ledger_init(CsLedger *l);
void cs_ledger_clear(CsLedger *l);
gboolean cs_ledger_leave(Engine *e, const char *call, const Req *r, int model, gboolean sent);
void cs_ledger_return(Engine *e, const Req *r);
void cs_ledger_grow(CsLedger *l);

/* Inline: the engine calls these once per request, from another file
 * (clients.c); a call each cost several percent of a one-model run. */
static inline void cs_ledger_add(Engine *e, const Req *r, int model);
static inline void cs_ledger_done(Engine *e, const Req *r);
static inline void cs_ledger_set_state(CsLedger *l, const Req *r, int state);

struct CsEngine {
  const CsConfig *cfg;
  const CsRunOptions *opt;
  CsEventQueue *q;
  int64_t now;
  uint64_t next_id;
  Client *clients;
  Gpu *gpus;
  int n_gpu_types;
  const char **gpu_types;         /* distinct GPU type names */
  const CsModelProfile **profile; /* [model * n_gpu_types + type], NULL if none */
  GArray **latency;               /* [model * n_gpu_types + type]: int64 ns per batch size */
  Worker *workers;
  int n_workers;
  uint64_t next_job;
  uint64_t next_seq;      /* Batch.seq of the next batch queued at a GPU */
  uint64_t next_batch_id; /* ids of dispatched batches, from 1 */
  Batch *free_batches;
  GPtrArray *batches;     /* every batch allocated (freed at teardown, wherever it is) */
  FILE *csv;
  uint64_t events;
  double expected_requests; /* for progress */
  int64_t max_generated;  /* > 0: the run stops past this many requests */
  const CsDispatchPolicy *dispatch;
  void *dispatch_state;
  /* The policy's random stream (cs_engine_policy_uniform), created at its
   * first draw: a run whose policy draws nothing allocates none. */
  gsl_rng *policy_rng;
  /* Width of the time-series bins (Gpu.bins, Worker.bins); the totals over
   * GPUs (Symphony's "GPUs used") are merged from the GPUs' at the end. */
  int64_t bin_ns;
  /* Whether the run keeps the time series (CsRunOptions.timeseries): the
   * per-GPU, per-worker and per-model series above are filled only then;
   * they double bin_ns whenever one reaches CS_SERIES_MAX_RUNS
   * runs (cs_engine_coarsen_series), so they never grow without bound. */
  gboolean series;
  /* GPUs used per bin of the scenario's width, always (the summary's
   * autoscaling figures), in O(GPUs) memory (used.h). */
  CsUsed used;
  char *misuse;           /* the first misuse of a service by the dispatch policy, or NULL */
  CsLedger ledger;        /* the requests given to the policy (batches.c) */
  char *limit;            /* the first time or size the run cannot represent, or NULL */
  gboolean cancelled;     /* the progress callback asked to stop */
  int cap_workers;        /* room in workers */
  /* control.c: the run's replicas (the placement's, then those added), their
   * lives, and the controller; NULL / 0 for a centralized run without one. */
  GArray *replicas;       /* CsReplica */
  GArray *replica_life;   /* ReplicaLife, parallel to replicas */
  ControlState *control;  /* NULL without a controller */
  FILE *decisions;        /* the decision log, or NULL */
  /* The network curve's answers by size (a pow() each otherwise; a run sends
   * few distinct sizes: batch sizes x models x 2 directions), one per slot of
   * a hash of the size; net_bytes -1 = empty. */
  int64_t net_bytes[256], net_ns[256];
  /* llm_serving.c: the scenario's LLM deployments (cfg->n_llm), their
   * clients past cfg->n_clients in clients[], and the one EV_LLM event
   * standing for their next instant. */
  CsLlmServing *llm;
  CsEventHandle llm_ev;
  int64_t llm_ev_ns;
};

/* ---- the ledger's per-request steps (batches.c has the rest) ---------------- */

/* The entry of id, or NULL when the ledger no longer (or never) had it. */
static inline CsLedgerEntry *cs_ledger_entry(CsLedger *l, uint64_t id)
{
  return id >= l->first && id < l->next ? &l->ring[id & (l->cap - 1)] : NULL;
}

static inline void cs_ledger_add(Engine *e, const Req *r, int model)
{
  CsLedger *l = &e->ledger;
  g_assert(r->id == l->next); /* ids are given in order */
  if (G_UNLIKELY(l->next - l->first == l->cap))
    cs_ledger_grow(l);
  CsLedgerEntry x = { .send_ns = r->send_ns, .model = model, .measured = r->measured ? 1 : 0,
                      .state = CS_LEDGER_HELD };
  l->ring[l->next++ & (l->cap - 1)] = x;
}

/* Marks r's entry; first moves past the requests that are gone. */
static inline void cs_ledger_set_state(CsLedger *l, const Req *r, int state)
{
  CsLedgerEntry *x = cs_ledger_entry(l, r->id);
  g_assert(x);
  x->state = (uint8_t)state;
  while (l->first < l->next && l->ring[l->first & (l->cap - 1)].state == CS_LEDGER_GONE)
    l->first++;
}

static inline void cs_ledger_done(Engine *e, const Req *r)
{
  cs_ledger_set_state(&e->ledger, r, CS_LEDGER_GONE);
}

/* Returns a batch to the engine's free list (on the hot path: inline). */
static inline void batch_release(Engine *e, Batch *b)
{
  b->state = BATCH_FREE;
  b->next = e->free_batches;
  e->free_batches = b;
}

/* clients.c */
void cs_engine_schedule_next_arrival(Engine *e, int ci);
/* Closes client c's open bin into its series. */
void cs_engine_flush_bin(Client *c);

/* Doubles the bin width of every time series of the run (merging pairs of
 * bins) until each holds fewer than CS_SERIES_MAX_RUNS runs (gpus.c). */
void cs_engine_coarsen_series(Engine *e);

/* Calls cs_engine_coarsen_series when series holds too many runs. */
static inline void cs_engine_check_series(Engine *e, const GArray *series)
{
  if (G_UNLIKELY(series->len >= CS_SERIES_MAX_RUNS))
    cs_engine_coarsen_series(e);
}

/* Counts results within the SLO, requests that left without one and
 * requests sent, now, into client c's per-bin series. */
void cs_engine_open_bin(Engine *e, Client *c);

/* Without time series (Engine.series) no bin is ever opened: [INT64_MIN,
 * INT64_MAX) holds every time, and the counts below go nowhere. */
static inline void cs_engine_count_in_bin(Engine *e, Client *c, int64_t good, int64_t bad,
                                          int64_t sent)
{
  if (G_UNLIKELY(e->now < c->bin_start || e->now >= c->bin_end))
    cs_engine_open_bin(e, c);
  c->open_good += good;
  c->open_bad += bad;
  c->open_sent += sent;
}
void cs_engine_on_result(Engine *e, Batch *b);
/* clients.c: whether the run writes or observes per-request records, and
 * one such record out (requests.csv, CsRunOptions.on_request). */
gboolean cs_engine_wants_records(const Engine *e);
void cs_engine_emit_record(Engine *e, const CsRequestRecord *r);

/* llm_serving.c: the LLM deployments: set up after the clients; an
 * arrival of client ci >= cfg->n_clients; EV_LLM; at the end of a run,
 * the check that every request completed (else a limit), then the
 * results (CsResults.llm, and the warnings) and teardown. */
void cs_engine_llm_setup(Engine *e);
void cs_engine_llm_arrival(Engine *e, int ci);
void cs_engine_llm_on_event(Engine *e);
void cs_engine_llm_finish(Engine *e);
void cs_engine_llm_fill_results(Engine *e, CsResults *res);
void cs_engine_llm_teardown(Engine *e);

/* The arrival of a client's request, the one event every request has: inline
 * in the core loop (engine.c), as it was before the split. It belongs to the
 * clients (clients.c). */
static inline void on_arrival(Engine *e, int ci)
{
  if (G_UNLIKELY(ci >= e->cfg->n_clients)) {
    cs_engine_llm_arrival(e, ci);
    return;
  }
  Client *c = &e->clients[ci];
  cs_engine_count_in_bin(e, c, 0, 0, 1);
  Req r = { .id = e->next_id++, .send_ns = e->now, .measured = e->now >= c->window_start_ns };
  c->index++;
  c->generated++;
  if (r.measured)
    c->measured++;
  else
    c->warmup++;
  cs_engine_schedule_next_arrival(e, ci);
  if (G_UNLIKELY(e->decisions))
    fprintf(e->decisions, "{\"ev\":\"request\",\"id\":%" G_GUINT64_FORMAT ",\"model\":%d,\"send_ns\":%"
            G_GINT64_FORMAT ",\"measured\":%s}\n", (guint64)r.id, ci, (gint64)r.send_ns,
            r.measured ? "true" : "false");
  cs_ledger_add(e, &r, ci);
  e->dispatch->on_request(e->dispatch_state, ci, &r);
  /* r lives only during the call (dispatch.h): a pointer kept past it then
   * reads an id the engine never gave, which every service refuses (a
   * volatile store, which the compiler keeps although r dies here). */
  *(volatile uint64_t *)&r.id = UINT64_MAX;
}

/* engine.c: records (the first) misuse of a service by the dispatch policy:
 * the run stops and cs_engine_run fails with CS_ERROR_POLICY and the message. */
void cs_engine_misuse(Engine *e, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* engine.c: FALSE after recording a misuse when model is out of range. */
gboolean cs_engine_model_ok(Engine *e, const char *call, int model);

/* engine.c: records (the first) reason the run cannot go on because a time
 * or size does not fit in int64: the run stops and cs_engine_run fails with
 * CS_ERROR_INVALID and this message. */
void cs_engine_limit(Engine *e, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* engine.c: when a transfer of batch b's payload (per_request bytes per
 * request, what it is for the message) that starts now ends: now + the
 * network curve's latency, saturating at INT64_MAX (which the core loop
 * refuses). When the payload n x per_request overflows int64, records a
 * limit and returns now. */
int64_t cs_engine_transfer_end(Engine *e, const Batch *b, int64_t per_request, const char *what);

/* gpus.c */
void cs_engine_on_batch_at_node(Engine *e, Batch *b);
void cs_engine_on_gpu_done(Engine *e, int g);

/* control.c */
/* Builds the replica table and the GPUs' lives (before the dispatch policy
 * is created); cs_control_start creates the controller (after it). */
void cs_control_setup(Engine *e);
void cs_control_start(Engine *e);
void cs_control_teardown(Engine *e);
/* Handles EV_CONTROL, EV_REPLICA_READY and EV_GPU_READY. */
void cs_control_on_event(Engine *e, const CsEvent *ev);
/* A batch of worker w finished, failed or was stopped: a draining replica
 * with nothing left retires, a releasing GPU with nothing left is off. */
void cs_control_after_batch(Engine *e, int w, int gpu);
/* Moves what the control layer gathered into the results. */
void cs_control_fill_results(Engine *e, CsResults *res);
/* TRUE when gpu takes new work (no controller: always). */
gboolean cs_control_gpu_takes_work(const Engine *e, int gpu);

/* metrics.c */
void cs_engine_fill_model_result(CsModelResult *m, Client *c);
/* Totals over res's models, whose clients are clients (latency pooled);
 * cs_engine_fill_model_result has filled each model from its client. */
void cs_engine_fill_total(CsResults *res, const Client *clients);
/* TRUE when the model's last measured request finished more than
 * max(10 SLOs, 1 s) after its window ended (the `unstable` warning). */
gboolean cs_engine_model_unstable(const CsModelResult *m);
void cs_engine_warn_about_run(CsResults *res);
/* Adds a plan_gap warning for each model whose goodput falls short of the
 * smaller of its expected goodput (finite, > 0) and its offered rate by
 * more than cfg->plan_gap, naming the largest measured contributor to the
 * shortfall. Call after cs_engine_warn_about_run (it reads res's models,
 * filled from clients). */
void cs_engine_warn_plan_gap(CsResults *res, const Client *clients, const CsConfig *cfg);

#endif
