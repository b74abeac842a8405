/* What dispatch policies see of the engine: requests, batches and the
 * services to schedule timers, send batches to GPUs and drop requests.
 * Internal to libclustersim. */
#ifndef CS_ENGINE_INTERNAL_H
#define CS_ENGINE_INTERNAL_H

#include <glib.h>
#include <stdint.h>

#include "config.h"
#include "policies/dispatch/dispatch.h"
#include "event_queue.h"

struct Req {
  uint64_t id;       /* global id in generation order */
  int64_t send_ns;   /* client send time */
  gboolean measured; /* FALSE during warm-up */
};

typedef struct Batch {
  int model;             /* client index */
  int gpu;               /* GPU it runs on */
  int worker;            /* worker that runs it: the replica index (router) or the model */
  uint64_t job;          /* execution id on the GPU */
  int n, cap;            /* requests held / capacity of reqs */
  Req *reqs;
  int64_t not_before_ns; /* the GPU must not start it earlier (0: as soon as it arrives) */
  int64_t dispatch_ns, node_ns, start_ns, end_ns;
  struct Batch *next;    /* free list, or the GPU's FIFO */
} Batch;

/* Current simulated time. */
int64_t cs_engine_now(const Engine *e);
/* The compiled scenario. */
const CsConfig *cs_engine_config(const Engine *e);

/* Schedules the dispatch policy's timer at time at (>= now); on_timer(arg)
 * is called then unless the handle is cancelled first. */
CsEventHandle cs_engine_timer(Engine *e, int64_t at, uint32_t arg);
/* Cancels a timer; stale or null handles are ignored. */
void cs_engine_cancel(Engine *e, CsEventHandle h);

/* Returns an empty batch of model with room for cap requests. */
Batch *cs_engine_batch_new(Engine *e, int model, int cap);
/* Appends a request to a batch (grows it if needed). */
void cs_engine_batch_add(Engine *e, Batch *b, const Req *r);
/* Sends the batch now to gpu: network transfer, then the GPU's queue, where
 * worker runs it (the placement's replica index for replica-based policies,
 * the model index for policies without placement). The engine owns the batch
 * from here on. */
void cs_engine_send(Engine *e, Batch *b, int gpu, int worker);
/* The request is dropped by the policy (it cannot meet its deadline). */
void cs_engine_drop(Engine *e, int model, const Req *r);
/* The request fails: the replica it was sent to did not fit in memory. */
void cs_engine_fail(Engine *e, int model, const Req *r);
/* The request is not served: its model has no replica. */
void cs_engine_unserved(Engine *e, int model, const Req *r);

/* Isolated latency of a batch of size n of model on gpu (profile). */
int64_t cs_engine_latency(Engine *e, int model, int gpu, int n);

#endif
