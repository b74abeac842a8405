/* The event queue: a pending set of timestamped events, popped in order.
 *
 * Ordering guarantee: events pop by increasing time; events with the same time
 * pop in the order they were pushed (FIFO), using a sequence number that the
 * queue assigns at push. Nothing depends on pointer values or memory layout, so
 * the order is the same on every run and machine.
 *
 * Cancellation: cs_eq_push returns a handle; cs_eq_cancel removes that event
 * in O(log n) using the event's heap position, never by searching. A handle
 * whose event already fired or was cancelled is stale and cancelling it does
 * nothing (a generation counter tells stale handles apart from reused slots).
 *
 * Implementation: a 4-ary min-heap of 16-byte (time, seq, slot) keys over a
 * pool of event slots that are reused through a free list, so pushing and
 * popping allocate nothing once the pool has grown to the peak number of
 * pending events; the stream's events (below) in a second heap of
 * (time, seq, arg) keys without slots.
 */
#ifndef CS_EVENT_QUEUE_H
#define CS_EVENT_QUEUE_H

#include <glib.h>
#include <stdint.h>

typedef struct {
  uint32_t slot; /* pool slot of the event */
  uint32_t gen;  /* generation of the slot when the event was pushed; 0 = no event */
} CsEventHandle;

/* What an event carries: a kind for the core loop's switch and two arguments. */
typedef struct {
  int64_t time;   /* simulated time, ns */
  uint32_t kind;  /* event kind, interpreted by the owner of the queue */
  uint32_t arg;   /* small integer argument (entity index) */
  void *ptr;      /* pointer argument (not owned by the queue) */
} CsEvent;

typedef struct CsEventQueue CsEventQueue;

/* Returns a new empty queue. */
CsEventQueue *cs_eq_new(void);
/* Frees the queue; accepts NULL. Pending events are discarded. */
void cs_eq_free(CsEventQueue *q);

/* Schedules an event at time; returns its handle for cancellation. */
CsEventHandle cs_eq_push(CsEventQueue *q, int64_t time, uint32_t kind, uint32_t arg, void *ptr);

/* The stream: events that carry only arg (they pop with the queue's
 * stream kind, 0 until set, and a NULL ptr) and have no handle, so that
 * they cannot be cancelled; e.g. the clients' next arrivals, one pending
 * per client and most of a run's events. They are kept in a heap of their
 * own without the bookkeeping handles need; the order of all events is the
 * order they would have if pushed with cs_eq_push. */
void cs_eq_set_stream_kind(CsEventQueue *q, uint32_t kind);
void cs_eq_push_stream(CsEventQueue *q, int64_t time, uint32_t arg);

/* Removes the earliest event into *out. Returns FALSE when the queue is empty. */
gboolean cs_eq_pop(CsEventQueue *q, CsEvent *out);

/* Cancels a pending event. Returns TRUE if it was pending, FALSE if the handle
 * is stale (already fired or cancelled) or null. */
gboolean cs_eq_cancel(CsEventQueue *q, CsEventHandle h);

/* Cancels a pending event only when it is of the given kind. Returns TRUE
 * if it was pending with that kind; FALSE (and cancels nothing) when the
 * handle is stale, null, or names an event of another kind. A handle given
 * to a policy (a dispatch policy's or a controller's timer) is only a slot
 * and a generation, so a policy could otherwise cancel any event of the
 * engine's whose handle it guesses or was handed by another party. */
gboolean cs_eq_cancel_kind(CsEventQueue *q, CsEventHandle h, uint32_t kind);

/* TRUE if the handle's event is still pending. */
gboolean cs_eq_pending(const CsEventQueue *q, CsEventHandle h);

/* Number of pending events. */
size_t cs_eq_size(const CsEventQueue *q);

/* Time of the earliest pending event; INT64_MAX when empty. */
int64_t cs_eq_peek_time(CsEventQueue *q);

/* For tests: renumber the pending events' sequence numbers when the next one
 * would reach limit (clamped to [1, 2^32], the default), as the queue does
 * when its 32-bit sequence runs out; the pop order must not change. */
void cs_eq_set_seq_limit(CsEventQueue *q, uint64_t limit);

static const CsEventHandle CS_EVENT_HANDLE_NONE = { 0, 0 };

#endif
