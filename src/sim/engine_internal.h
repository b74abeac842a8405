/* The engine's side of the dispatch interface (public side:
 * clustersim/dispatch.h): requests and batches as the engine stores them, and
 * the services the engine itself uses besides the public ones. Private to
 * src/sim. */
#ifndef CS_ENGINE_INTERNAL_H
#define CS_ENGINE_INTERNAL_H

#include <glib.h>
#include <stdint.h>

#include "clustersim/dispatch.h"
#include "config.h"
#include "event_queue.h"

typedef struct CsEngine Engine;
typedef CsRequest Req;

struct CsBatch {
  struct CsEngine *engine; /* its engine, for the misuse of a service that takes none */
  int model;             /* client index */
  int gpu;               /* GPU it runs on */
  int worker;            /* worker that runs it: the replica index, or model * n_gpus + gpu */
  int replica;           /* the replica it was sent to, or -1 (centralized) */
  uint64_t id;           /* 1, 2, ... in dispatch order (0 before it is sent) */
  uint64_t job;          /* execution id on the GPU */
  uint64_t seq;          /* order of arrival in its GPU's queue (MPS: across the workers' queues) */
  int n, cap;            /* requests held / capacity of reqs */
  Req *reqs;
  int64_t not_before_ns; /* the GPU must not start it earlier (0: as soon as it arrives) */
  gboolean inputs_at_node; /* the policy forwarded the inputs earlier: no transfer on send */
  int state;             /* BatchState */
  int64_t dispatch_ns, node_ns, start_ns, end_ns;
  int64_t iso_ns;        /* its isolated execution time on its GPU (MIG instance), set at start */
  struct CsBatch *next;  /* free list, the GPU's FIFO, or its worker's (MPS) */
};
typedef struct CsBatch Batch;

/* Where a batch is (cs_engine_preempt_gpu stops the ones sent and unfinished). */
typedef enum {
  BATCH_FREE,        /* on the engine's free list */
  BATCH_HELD,        /* the policy is filling it */
  BATCH_IN_TRANSFER, /* sent, inputs on their way to the node (an EV_BATCH_AT_NODE pending) */
  BATCH_WAITING,     /* at the node before its not-before time (an EV_BATCH_AT_NODE pending) */
  BATCH_QUEUED,      /* in its GPU's FIFO */
  BATCH_RUNNING,
  BATCH_RETURNING,   /* finished, result on its way back (an EV_RESULT pending) */
  BATCH_PREEMPTED,   /* stopped while an event for it was pending: released when it fires */
} BatchState;

/* A timer handle is the event queue's handle packed in 64 bits; generation 0
 * (no event) packs to CS_TIMER_NONE. */
static inline CsTimer cs_timer_pack(CsEventHandle h)
{
  return ((uint64_t)h.gen << 32) | h.slot;
}

static inline CsEventHandle cs_timer_unpack(CsTimer t)
{
  CsEventHandle h = { .slot = (uint32_t)(t & 0xffffffffu), .gen = (uint32_t)(t >> 32) };
  return h;
}

/* The request fails: the replica it was sent to did not fit in memory. */
void cs_engine_fail(Engine *e, int model, const Req *r);

#endif
