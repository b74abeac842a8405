/* The event queue's representation and its hot operations, as static
 * inline functions: the engine's core loop pops an event and pushes one or
 * two for almost every event it handles, and a call into event_queue.c for
 * each (with its 128-bit keys passed through registers and the callee-saved
 * ones spilled) cost as many instructions as the work itself
 * (docs/performance.md). eq_push, eq_push_stream and eq_pop are exactly
 * cs_eq_push, cs_eq_push_stream and cs_eq_pop (event_queue.c calls them);
 * what is rare (growing an array, the
 * sequence running out, cancelling) stays in event_queue.c. Private to
 * src/sim: only the engine's files and event_queue.c include it.
 *
 * A heap entry is 16 bytes, (time, seq, slot) packed into one unsigned
 * 128-bit integer: time (sign bit flipped, so that unsigned order is signed
 * order) in the high half, the 32-bit push sequence number and the slot in
 * the low half. Comparing two entries is then one 128-bit comparison
 * (cmp/sbb, no branch on the tie) and four children take 64 bytes;
 * the slot takes part in the comparison harmlessly, as no two pending
 * events share a sequence number. One integer rather than a struct of two
 * halves: passed by value, a struct went through the stack into a vector
 * register, and loading it back stalled on store forwarding (half of
 * sift_down's cycles in perf).
 *
 * Lanes: two heaps, the handles' (lane 0) and the stream's (lane 1, see
 * cs_eq_push_stream: its entries hold arg where the others hold their slot,
 * and no slot tracks their position); a pop takes the smaller of the two
 * roots, and the sequence numbers are shared, so the order is that of one
 * heap. The clients' next arrivals, most of a run's events, kept in the
 * stream leave both heaps smaller (with one client, its heap is a single
 * entry) and need neither a slot nor a handle.
 *
 * Popping leaves a hole at its lane's root instead of removing it at once:
 * the core loop pushes the next event of the popped one's owner (the next
 * arrival, the next stage of a batch) more often than not, and that push
 * fills the hole with one sift-down instead of a removal's sift-down and an
 * insertion's sift-up. Any other operation removes the holes first. (time,
 * seq) is a total order, so the pop order does not depend on the layout. */
#ifndef CS_EVENT_QUEUE_IMPL_H
#define CS_EVENT_QUEUE_IMPL_H

#include "event_queue.h"

#define CS_EQ_ARITY 4
#define CS_EQ_LANES 2
#define CS_EQ_STREAM 1 /* the stream's lane; 0 is the handles' */
#define CS_EQ_SIGN ((uint64_t)1 << 63)

/* (time ^ CS_EQ_SIGN) << 64 | seq << 32 | slot: the order of entries is
 * the order of the integers. */
typedef unsigned __int128 CsEqEntry;

typedef struct {
  uint32_t kind;
  uint32_t arg;
  void *ptr;
  uint32_t gen;      /* bumped when the slot is released; starts at 1 so 0 means "none" */
  uint32_t heap_pos; /* index in the handles' heap while pending; UINT32_MAX when free */
  uint32_t next_free;
} CsEqSlot;

typedef struct {
  CsEqEntry *heap;
  size_t size, cap;  /* heap entries, the hole included while open */
  gboolean hole;     /* heap[0] was popped; size still counts it */
} CsEqLane;

struct CsEventQueue {
  CsEqLane lanes[CS_EQ_LANES];
  size_t live;        /* pending events */
  CsEqSlot *slots;
  uint32_t n_slots, slots_cap;
  uint32_t free_head; /* UINT32_MAX when no free slot */
  uint64_t next_seq;
  uint64_t seq_limit; /* renumber when next_seq reaches it (2^32; lower in tests) */
  uint32_t stream_kind; /* the kind the stream's events pop with */
};

/* event_queue.c: the rare paths. A new slot when none is free (grows the
 * pool); room for one more entry in lane; the renumbering of the sequence
 * when it runs out. */
uint32_t cs_eq_new_slot(CsEventQueue *q);
void cs_eq_grow_lane(CsEqLane *lane);
void cs_eq_renumber(CsEventQueue *q);

static inline uint32_t cs_eq_slot_of(CsEqEntry e)
{
  return (uint32_t)e;
}

static inline int64_t cs_eq_time_of(CsEqEntry e)
{
  return (int64_t)((uint64_t)(e >> 64) ^ CS_EQ_SIGN);
}

static inline CsEqEntry cs_eq_entry(int64_t time, uint64_t seq, uint32_t slot)
{
  return (CsEqEntry)((uint64_t)time ^ CS_EQ_SIGN) << 64 | seq << 32 | slot;
}

/* track: e's low half is a slot whose position is kept (the handles'
 * lane), not the stream's arg. */
static inline void cs_eq_place(CsEventQueue *q, CsEqEntry *h, size_t pos, CsEqEntry e,
                               gboolean track)
{
  h[pos] = e;
  if (track)
    q->slots[cs_eq_slot_of(e)].heap_pos = (uint32_t)pos;
}

static inline void cs_eq_sift_up(CsEventQueue *q, CsEqLane *lane, size_t pos, CsEqEntry e,
                                 gboolean track)
{
  CsEqEntry *h = lane->heap;
  while (pos > 0) {
    size_t parent = (pos - 1) / CS_EQ_ARITY;
    if (!(e < h[parent]))
      break;
    cs_eq_place(q, h, pos, h[parent], track);
    pos = parent;
  }
  cs_eq_place(q, h, pos, e, track);
}

/* Places e at pos (a hole) or below. */
static inline void cs_eq_sift_down(CsEventQueue *q, CsEqLane *lane, size_t pos, CsEqEntry e,
                                   gboolean track)
{
  CsEqEntry *h = lane->heap;
  size_t n = lane->size;
  for (;;) {
    size_t first = pos * CS_EQ_ARITY + 1;
    if (first >= n)
      break;
    size_t best = first;
    CsEqEntry bk = h[first];
    size_t last = MIN(first + CS_EQ_ARITY, n);
    for (size_t c = first + 1; c < last; c++) {
      CsEqEntry ck = h[c];
      if (ck < bk) {
        bk = ck;
        best = c;
      }
    }
    if (!(bk < e))
      break;
    cs_eq_place(q, h, pos, bk, track);
    pos = best;
  }
  cs_eq_place(q, h, pos, e, track);
}

static inline uint32_t cs_eq_take_slot(CsEventQueue *q)
{
  if (G_LIKELY(q->free_head != UINT32_MAX)) {
    uint32_t s = q->free_head;
    q->free_head = q->slots[s].next_free;
    return s;
  }
  return cs_eq_new_slot(q);
}

static inline void cs_eq_release_slot(CsEventQueue *q, uint32_t s)
{
  CsEqSlot *sl = &q->slots[s];
  sl->gen++;
  if (G_UNLIKELY(sl->gen == 0)) /* 0 is reserved for the null handle */
    sl->gen = 1;
  sl->heap_pos = UINT32_MAX;
  sl->next_free = q->free_head;
  q->free_head = s;
  q->live--;
}

/* Removes the entry at pos of the lane (its slot already released or about to be). */
static inline void cs_eq_remove_at(CsEventQueue *q, CsEqLane *lane, size_t pos, gboolean track)
{
  lane->size--;
  if (pos == lane->size)
    return;
  CsEqEntry moved = lane->heap[lane->size];
  /* The moved entry may belong above or below pos. */
  if (pos > 0 && moved < lane->heap[(pos - 1) / CS_EQ_ARITY])
    cs_eq_sift_up(q, lane, pos, moved, track);
  else
    cs_eq_sift_down(q, lane, pos, moved, track);
}

/* Removes the lane's popped root, if any. */
static inline void cs_eq_fill_hole(CsEventQueue *q, CsEqLane *lane, gboolean track)
{
  if (lane->hole) {
    lane->hole = FALSE;
    cs_eq_remove_at(q, lane, 0, track);
  }
}

/* Places e (its sequence number taken) in lane: into the popped root's
 * hole with one sift-down, else at the end. */
static inline void cs_eq_insert(CsEventQueue *q, CsEqLane *lane, CsEqEntry e, gboolean track)
{
  if (lane->hole) {
    lane->hole = FALSE;
    cs_eq_sift_down(q, lane, 0, e, track);
  } else {
    if (G_UNLIKELY(lane->size == lane->cap))
      cs_eq_grow_lane(lane);
    cs_eq_sift_up(q, lane, lane->size++, e, track);
  }
}

/* cs_eq_push (event_queue.h). */
static inline CsEventHandle eq_push(CsEventQueue *q, int64_t time, uint32_t kind, uint32_t arg,
                                    void *ptr)
{
  if (G_UNLIKELY(q->next_seq >= q->seq_limit))
    cs_eq_renumber(q);
  uint32_t s = cs_eq_take_slot(q);
  CsEqSlot *sl = &q->slots[s];
  sl->kind = kind;
  sl->arg = arg;
  sl->ptr = ptr;
  q->live++;
  cs_eq_insert(q, &q->lanes[0], cs_eq_entry(time, q->next_seq++, s), TRUE);
  return (CsEventHandle){ .slot = s, .gen = sl->gen };
}

/* cs_eq_push_stream (event_queue.h). */
static inline void eq_push_stream(CsEventQueue *q, int64_t time, uint32_t arg)
{
  if (G_UNLIKELY(q->next_seq >= q->seq_limit))
    cs_eq_renumber(q);
  q->live++;
  cs_eq_insert(q, &q->lanes[CS_EQ_STREAM], cs_eq_entry(time, q->next_seq++, arg), FALSE);
}

/* The lane whose root is the earliest pending event, or NULL when there is
 * none; fills the holes first. Written out for two lanes: the loop over
 * them, with its "no lane yet" case, cost a third of a pop. */
G_STATIC_ASSERT(CS_EQ_LANES == 2);
static inline CsEqLane *cs_eq_earliest(CsEventQueue *q)
{
  CsEqLane *a = &q->lanes[0], *b = &q->lanes[CS_EQ_STREAM];
  cs_eq_fill_hole(q, a, TRUE);
  cs_eq_fill_hole(q, b, FALSE);
  if (a->size == 0)
    return b->size > 0 ? b : NULL;
  if (b->size == 0)
    return a;
  return b->heap[0] < a->heap[0] ? b : a;
}

/* cs_eq_pop (event_queue.h). */
static inline gboolean eq_pop(CsEventQueue *q, CsEvent *out)
{
  CsEqLane *lane = cs_eq_earliest(q);
  if (!lane)
    return FALSE;
  CsEqEntry top = lane->heap[0];
  out->time = cs_eq_time_of(top);
  lane->hole = TRUE;
  if (lane == &q->lanes[CS_EQ_STREAM]) {
    out->kind = q->stream_kind;
    out->arg = cs_eq_slot_of(top);
    out->ptr = NULL;
    q->live--;
    return TRUE;
  }
  const CsEqSlot *sl = &q->slots[cs_eq_slot_of(top)];
  out->kind = sl->kind;
  out->arg = sl->arg;
  out->ptr = sl->ptr;
  cs_eq_release_slot(q, cs_eq_slot_of(top));
  return TRUE;
}

#endif
