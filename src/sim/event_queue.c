/* 4-ary min-heap keyed by (time, seq); see event_queue.h.
 *
 * A heap entry is 16 bytes, (time, seq, slot) packed into one unsigned
 * 128-bit integer: time (sign bit flipped, so that unsigned order is signed
 * order) in the high half, the 32-bit push sequence number and the slot in
 * the low half. Comparing two entries is then one 128-bit comparison
 * (cmp/sbb, no branch on the tie) and four children take 64 bytes;
 * the slot takes part in the comparison harmlessly, as no two pending
 * events share a sequence number. When the 32-bit sequence runs out, the
 * pending entries are sorted and renumbered 0, 1, ... in their order, which
 * keeps every comparison between them (and a sorted array is a heap).
 *
 * Cancellation removes the entry at once, found by the position its slot
 * keeps (a lazy removal, tried, left cancelled router timers in the heap
 * for their whole wait and made every push dearer).
 *
 * Lanes: each lane is a heap of its own; a pop takes the smaller of the
 * lanes' roots, and the sequence numbers are shared, so the order is that
 * of one heap. A stream that always has one event pending per source (the
 * clients' next arrivals, most of a run's events) kept in a lane of its own
 * leaves both heaps smaller: with one client, its lane is a single entry.
 *
 * Popping leaves a hole at its lane's root instead of removing it at once:
 * the core loop pushes the next event of the popped one's owner (the next
 * arrival, the next stage of a batch) more often than not, and that push
 * fills the hole with one sift-down instead of a removal's sift-down and an
 * insertion's sift-up. Any other operation removes the holes first. (time,
 * seq) is a total order, so the pop order does not depend on the layout. */
#include "event_queue.h"

#include <stdlib.h>

#define ARITY 4
#define SIGN ((uint64_t)1 << 63)

/* A heap entry: (time ^ SIGN) << 64 | seq << 32 | slot. One integer rather
 * than a struct of two halves: passed by value, a struct went through the
 * stack into a vector register, and loading it back stalled on store
 * forwarding (half of sift_down's cycles in perf). */
typedef unsigned __int128 HeapEntry;
typedef unsigned __int128 Key;

typedef struct {
  uint32_t kind;
  uint32_t arg;
  void *ptr;
  uint32_t gen;      /* bumped when the slot is released; starts at 1 so 0 means "none" */
  uint32_t heap_pos; /* index in its lane's heap while pending; UINT32_MAX when free */
  uint32_t lane;     /* its lane while pending */
  uint32_t next_free;
} Slot;

typedef struct {
  HeapEntry *heap;
  size_t size, cap;  /* heap entries, the hole included while open */
  gboolean hole;     /* heap[0] was popped; size still counts it */
} Lane;

struct CsEventQueue {
  Lane lanes[CS_EQ_LANES];
  size_t live;        /* pending events */
  Slot *slots;
  uint32_t n_slots, slots_cap;
  uint32_t free_head; /* UINT32_MAX when no free slot */
  uint64_t next_seq;
  uint64_t seq_limit; /* renumber when next_seq reaches it (2^32; lower in tests) */
};

CsEventQueue *cs_eq_new(void)
{
  CsEventQueue *q = g_new0(CsEventQueue, 1);
  q->free_head = UINT32_MAX;
  q->seq_limit = (uint64_t)1 << 32;
  return q;
}

void cs_eq_free(CsEventQueue *q)
{
  if (!q)
    return;
  for (int l = 0; l < CS_EQ_LANES; l++)
    g_free(q->lanes[l].heap);
  g_free(q->slots);
  g_free(q);
}

static inline Key key(HeapEntry e)
{
  return e;
}

static inline uint32_t slot_of(HeapEntry e)
{
  return (uint32_t)e;
}

static inline int64_t time_of(HeapEntry e)
{
  return (int64_t)((uint64_t)(e >> 64) ^ SIGN);
}

static inline HeapEntry entry(int64_t time, uint64_t seq, uint32_t slot)
{
  return (HeapEntry)((uint64_t)time ^ SIGN) << 64 | seq << 32 | slot;
}

static inline void place(CsEventQueue *q, HeapEntry *h, size_t pos, HeapEntry e)
{
  h[pos] = e;
  q->slots[slot_of(e)].heap_pos = (uint32_t)pos;
}

static void sift_up(CsEventQueue *q, Lane *lane, size_t pos, HeapEntry e)
{
  HeapEntry *h = lane->heap;
  Key k = key(e);
  while (pos > 0) {
    size_t parent = (pos - 1) / ARITY;
    if (!(k < key(h[parent])))
      break;
    place(q, h, pos, h[parent]);
    pos = parent;
  }
  place(q, h, pos, e);
}

/* Places e at pos (a hole) or below. */
static void sift_down(CsEventQueue *q, Lane *lane, size_t pos, HeapEntry e)
{
  HeapEntry *h = lane->heap;
  size_t n = lane->size;
  Key k = key(e);
  for (;;) {
    size_t first = pos * ARITY + 1;
    if (first >= n)
      break;
    size_t best = first;
    Key bk = key(h[first]);
    size_t last = MIN(first + ARITY, n);
    for (size_t c = first + 1; c < last; c++) {
      Key ck = key(h[c]);
      if (ck < bk) {
        bk = ck;
        best = c;
      }
    }
    if (!(bk < k))
      break;
    place(q, h, pos, h[best]);
    pos = best;
  }
  place(q, h, pos, e);
}

static inline uint32_t take_slot(CsEventQueue *q)
{
  if (G_LIKELY(q->free_head != UINT32_MAX)) {
    uint32_t s = q->free_head;
    q->free_head = q->slots[s].next_free;
    return s;
  }
  if (q->n_slots == q->slots_cap) {
    q->slots_cap = q->slots_cap ? q->slots_cap * 2 : 64;
    q->slots = g_renew(Slot, q->slots, q->slots_cap);
  }
  uint32_t s = q->n_slots++;
  q->slots[s].gen = 1;
  return s;
}

static inline void release_slot(CsEventQueue *q, uint32_t s)
{
  Slot *sl = &q->slots[s];
  sl->gen++;
  if (G_UNLIKELY(sl->gen == 0)) /* 0 is reserved for the null handle */
    sl->gen = 1;
  sl->heap_pos = UINT32_MAX;
  sl->next_free = q->free_head;
  q->free_head = s;
  q->live--;
}

/* Removes the entry at pos of the lane (its slot already released or about to be). */
static void remove_at(CsEventQueue *q, Lane *lane, size_t pos)
{
  lane->size--;
  if (pos == lane->size)
    return;
  HeapEntry moved = lane->heap[lane->size];
  /* The moved entry may belong above or below pos. */
  if (pos > 0 && key(moved) < key(lane->heap[(pos - 1) / ARITY]))
    sift_up(q, lane, pos, moved);
  else
    sift_down(q, lane, pos, moved);
}

/* Removes the lane's popped root, if any. */
static inline void fill_hole(CsEventQueue *q, Lane *lane)
{
  if (lane->hole) {
    lane->hole = FALSE;
    remove_at(q, lane, 0);
  }
}

static int cmp_entries(const void *a, const void *b)
{
  Key ka = key(*(const HeapEntry *)a), kb = key(*(const HeapEntry *)b);
  return ka < kb ? -1 : ka > kb;
}

/* The sequence numbers ran out: number the entries of every lane 0, 1, ...
 * in their (time, seq) order, which every later push follows. A sorted lane
 * is a heap. */
static void renumber(CsEventQueue *q)
{
  size_t at[CS_EQ_LANES] = { 0 };
  for (int l = 0; l < CS_EQ_LANES; l++) {
    Lane *lane = &q->lanes[l];
    fill_hole(q, lane);
    if (lane->size > 1) /* an unused lane has no array: qsort must not see NULL */
      qsort(lane->heap, lane->size, sizeof(HeapEntry), cmp_entries);
    for (size_t i = 0; i < lane->size; i++)
      q->slots[slot_of(lane->heap[i])].heap_pos = (uint32_t)i;
  }
  /* Merge the sorted lanes, numbering as it goes. */
  uint64_t seq = 0;
  for (;;) {
    int best = -1;
    for (int l = 0; l < CS_EQ_LANES; l++)
      if (at[l] < q->lanes[l].size &&
          (best < 0 || key(q->lanes[l].heap[at[l]]) < key(q->lanes[best].heap[at[best]])))
        best = l;
    if (best < 0)
      break;
    HeapEntry *e = &q->lanes[best].heap[at[best]++];
    *e = entry(time_of(*e), seq++, slot_of(*e));
  }
  q->next_seq = seq;
}

CsEventHandle cs_eq_push_in(CsEventQueue *q, int lane_index, int64_t time, uint32_t kind,
                            uint32_t arg, void *ptr)
{
  g_assert(lane_index >= 0 && lane_index < CS_EQ_LANES);
  if (G_UNLIKELY(q->next_seq >= q->seq_limit))
    renumber(q);
  uint32_t s = take_slot(q);
  Slot *sl = &q->slots[s];
  sl->kind = kind;
  sl->arg = arg;
  sl->ptr = ptr;
  sl->lane = (uint32_t)lane_index;
  q->live++;
  HeapEntry e = entry(time, q->next_seq++, s);
  Lane *lane = &q->lanes[lane_index];
  if (lane->hole) {
    lane->hole = FALSE;
    sift_down(q, lane, 0, e);
  } else {
    if (lane->size == lane->cap) {
      lane->cap = lane->cap ? lane->cap * 2 : 64;
      lane->heap = g_renew(HeapEntry, lane->heap, lane->cap);
    }
    sift_up(q, lane, lane->size++, e);
  }
  return (CsEventHandle){ .slot = s, .gen = sl->gen };
}

CsEventHandle cs_eq_push(CsEventQueue *q, int64_t time, uint32_t kind, uint32_t arg, void *ptr)
{
  return cs_eq_push_in(q, 0, time, kind, arg, ptr);
}

/* The lane whose root is the earliest pending event, or NULL when there is
 * none; fills the holes first. */
static inline Lane *earliest(CsEventQueue *q)
{
  Lane *best = NULL;
  Key bk = 0;
  for (int l = 0; l < CS_EQ_LANES; l++) {
    Lane *lane = &q->lanes[l];
    fill_hole(q, lane);
    if (lane->size > 0 && (!best || key(lane->heap[0]) < bk)) {
      best = lane;
      bk = key(lane->heap[0]);
    }
  }
  return best;
}

gboolean cs_eq_pop(CsEventQueue *q, CsEvent *out)
{
  Lane *lane = earliest(q);
  if (!lane)
    return FALSE;
  HeapEntry top = lane->heap[0];
  const Slot *sl = &q->slots[slot_of(top)];
  out->time = time_of(top);
  out->kind = sl->kind;
  out->arg = sl->arg;
  out->ptr = sl->ptr;
  release_slot(q, slot_of(top));
  lane->hole = TRUE;
  return TRUE;
}

gboolean cs_eq_pending(const CsEventQueue *q, CsEventHandle h)
{
  return h.gen != 0 && h.slot < q->n_slots && q->slots[h.slot].gen == h.gen &&
         q->slots[h.slot].heap_pos != UINT32_MAX;
}

gboolean cs_eq_cancel(CsEventQueue *q, CsEventHandle h)
{
  if (!cs_eq_pending(q, h))
    return FALSE;
  Lane *lane = &q->lanes[q->slots[h.slot].lane];
  fill_hole(q, lane);
  remove_at(q, lane, q->slots[h.slot].heap_pos);
  release_slot(q, h.slot);
  return TRUE;
}

size_t cs_eq_size(const CsEventQueue *q)
{
  return q->live;
}

int64_t cs_eq_peek_time(CsEventQueue *q)
{
  Lane *lane = earliest(q);
  return lane ? time_of(lane->heap[0]) : INT64_MAX;
}

void cs_eq_set_seq_limit(CsEventQueue *q, uint64_t limit)
{
  q->seq_limit = MIN(MAX(limit, 1), (uint64_t)1 << 32);
}
