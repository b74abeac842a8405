/* 4-ary indexed min-heap keyed by (time, seq); see event_queue.h.
 *
 * Popping leaves a hole at the root instead of removing it at once: the core
 * loop pushes the next event of the popped one's owner (the next arrival,
 * the next stage of a batch) more often than not, and that push fills the
 * hole with one sift-down instead of a removal's sift-down and an
 * insertion's sift-up. Any other operation removes the hole first. (time,
 * seq) is a total order, so the pop order does not depend on the layout. */
#include "event_queue.h"

#define ARITY 4

typedef struct {
  int64_t time;
  uint64_t seq;
  uint32_t slot;
} HeapEntry;

typedef struct {
  uint32_t kind;
  uint32_t arg;
  void *ptr;
  uint32_t gen;      /* bumped when the slot is released; starts at 1 so 0 means "none" */
  uint32_t heap_pos; /* index in heap while pending; UINT32_MAX when free */
  uint32_t next_free;
} Slot;

struct CsEventQueue {
  HeapEntry *heap;
  size_t size, cap;
  Slot *slots;
  uint32_t n_slots, slots_cap;
  uint32_t free_head; /* UINT32_MAX when no free slot */
  uint64_t next_seq;
  gboolean hole;      /* heap[0] was popped; size still counts it */
};

CsEventQueue *cs_eq_new(void)
{
  CsEventQueue *q = g_new0(CsEventQueue, 1);
  q->free_head = UINT32_MAX;
  return q;
}

void cs_eq_free(CsEventQueue *q)
{
  if (!q)
    return;
  g_free(q->heap);
  g_free(q->slots);
  g_free(q);
}

static inline gboolean before(const HeapEntry *a, const HeapEntry *b)
{
  return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static inline void place(CsEventQueue *q, size_t pos, HeapEntry e)
{
  q->heap[pos] = e;
  q->slots[e.slot].heap_pos = (uint32_t)pos;
}

static void sift_up(CsEventQueue *q, size_t pos)
{
  HeapEntry e = q->heap[pos];
  while (pos > 0) {
    size_t parent = (pos - 1) / ARITY;
    if (!before(&e, &q->heap[parent]))
      break;
    place(q, pos, q->heap[parent]);
    pos = parent;
  }
  place(q, pos, e);
}

static void sift_down(CsEventQueue *q, size_t pos)
{
  HeapEntry e = q->heap[pos];
  for (;;) {
    size_t first = pos * ARITY + 1;
    if (first >= q->size)
      break;
    size_t best = first;
    size_t last = MIN(first + ARITY, q->size);
    for (size_t c = first + 1; c < last; c++)
      if (before(&q->heap[c], &q->heap[best]))
        best = c;
    if (!before(&q->heap[best], &e))
      break;
    place(q, pos, q->heap[best]);
    pos = best;
  }
  place(q, pos, e);
}

static uint32_t take_slot(CsEventQueue *q)
{
  if (q->free_head != UINT32_MAX) {
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

static void release_slot(CsEventQueue *q, uint32_t s)
{
  Slot *sl = &q->slots[s];
  sl->gen++;
  if (sl->gen == 0) /* 0 is reserved for the null handle */
    sl->gen = 1;
  sl->heap_pos = UINT32_MAX;
  sl->next_free = q->free_head;
  q->free_head = s;
}

CsEventHandle cs_eq_push(CsEventQueue *q, int64_t time, uint32_t kind, uint32_t arg, void *ptr)
{
  uint32_t s = take_slot(q);
  Slot *sl = &q->slots[s];
  sl->kind = kind;
  sl->arg = arg;
  sl->ptr = ptr;
  HeapEntry e = { .time = time, .seq = q->next_seq++, .slot = s };
  if (q->hole) {
    q->hole = FALSE;
    place(q, 0, e);
    sift_down(q, 0);
    return (CsEventHandle){ .slot = s, .gen = sl->gen };
  }
  if (q->size == q->cap) {
    q->cap = q->cap ? q->cap * 2 : 64;
    q->heap = g_renew(HeapEntry, q->heap, q->cap);
  }
  q->heap[q->size++] = e;
  sift_up(q, q->size - 1);
  return (CsEventHandle){ .slot = s, .gen = sl->gen };
}

static void remove_at(CsEventQueue *q, size_t pos)
{
  q->size--;
  if (pos == q->size)
    return;
  HeapEntry moved = q->heap[q->size];
  place(q, pos, moved);
  /* The moved entry may belong above or below its new position. */
  if (pos > 0 && before(&moved, &q->heap[(pos - 1) / ARITY]))
    sift_up(q, pos);
  else
    sift_down(q, pos);
}

/* Removes the popped root, if any. */
static inline void fill_hole(CsEventQueue *q)
{
  if (q->hole) {
    q->hole = FALSE;
    remove_at(q, 0);
  }
}

gboolean cs_eq_pop(CsEventQueue *q, CsEvent *out)
{
  fill_hole(q);
  if (q->size == 0)
    return FALSE;
  HeapEntry top = q->heap[0];
  Slot *sl = &q->slots[top.slot];
  out->time = top.time;
  out->kind = sl->kind;
  out->arg = sl->arg;
  out->ptr = sl->ptr;
  release_slot(q, top.slot);
  q->hole = TRUE;
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
  fill_hole(q);
  remove_at(q, q->slots[h.slot].heap_pos);
  release_slot(q, h.slot);
  return TRUE;
}

size_t cs_eq_size(const CsEventQueue *q)
{
  return q->size - (q->hole ? 1 : 0);
}

int64_t cs_eq_peek_time(CsEventQueue *q)
{
  fill_hole(q);
  return q->size ? q->heap[0].time : INT64_MAX;
}
