/* 4-ary min-heap keyed by (time, seq); see event_queue.h, and
 * event_queue_impl.h for the representation and the hot paths.
 *
 * Cancellation removes the entry at once, found by the position its slot
 * keeps (a lazy removal, tried, left cancelled router timers in the heap
 * for their whole wait and made every push dearer).
 *
 * When the 32-bit sequence runs out, the pending entries are sorted and
 * renumbered 0, 1, ... in their order, which keeps every comparison between
 * them (and a sorted array is a heap). */
#include "event_queue_impl.h"

#include <stdlib.h>

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

uint32_t cs_eq_new_slot(CsEventQueue *q)
{
  if (q->n_slots == q->slots_cap) {
    q->slots_cap = q->slots_cap ? q->slots_cap * 2 : 64;
    q->slots = g_renew(CsEqSlot, q->slots, q->slots_cap);
  }
  uint32_t s = q->n_slots++;
  q->slots[s].gen = 1;
  return s;
}

void cs_eq_grow_lane(CsEqLane *lane)
{
  lane->cap = lane->cap ? lane->cap * 2 : 64;
  lane->heap = g_renew(CsEqEntry, lane->heap, lane->cap);
}

static int cmp_entries(const void *a, const void *b)
{
  CsEqEntry ka = *(const CsEqEntry *)a, kb = *(const CsEqEntry *)b;
  return ka < kb ? -1 : ka > kb;
}

/* The sequence numbers ran out: number the entries of every lane 0, 1, ...
 * in their (time, seq) order, which every later push follows. A sorted lane
 * is a heap. */
void cs_eq_renumber(CsEventQueue *q)
{
  size_t at[CS_EQ_LANES] = { 0 };
  for (int l = 0; l < CS_EQ_LANES; l++) {
    CsEqLane *lane = &q->lanes[l];
    gboolean track = l != CS_EQ_STREAM;
    cs_eq_fill_hole(q, lane, track);
    if (lane->size > 1) /* an unused lane has no array: qsort must not see NULL */
      qsort(lane->heap, lane->size, sizeof(CsEqEntry), cmp_entries);
    for (size_t i = 0; track && i < lane->size; i++)
      q->slots[cs_eq_slot_of(lane->heap[i])].heap_pos = (uint32_t)i;
  }
  /* Merge the sorted lanes, numbering as it goes. */
  uint64_t seq = 0;
  for (;;) {
    int best = -1;
    for (int l = 0; l < CS_EQ_LANES; l++)
      if (at[l] < q->lanes[l].size &&
          (best < 0 || q->lanes[l].heap[at[l]] < q->lanes[best].heap[at[best]]))
        best = l;
    if (best < 0)
      break;
    CsEqEntry *e = &q->lanes[best].heap[at[best]++];
    *e = cs_eq_entry(cs_eq_time_of(*e), seq++, cs_eq_slot_of(*e));
  }
  q->next_seq = seq;
}

CsEventHandle cs_eq_push(CsEventQueue *q, int64_t time, uint32_t kind, uint32_t arg, void *ptr)
{
  return eq_push(q, time, kind, arg, ptr);
}

void cs_eq_push_stream(CsEventQueue *q, int64_t time, uint32_t arg)
{
  eq_push_stream(q, time, arg);
}

void cs_eq_set_stream_kind(CsEventQueue *q, uint32_t kind)
{
  q->stream_kind = kind;
}

gboolean cs_eq_pop(CsEventQueue *q, CsEvent *out)
{
  return eq_pop(q, out);
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
  CsEqLane *lane = &q->lanes[0]; /* events with handles are all in lane 0 */
  cs_eq_fill_hole(q, lane, TRUE);
  cs_eq_remove_at(q, lane, q->slots[h.slot].heap_pos, TRUE);
  cs_eq_release_slot(q, h.slot);
  return TRUE;
}

gboolean cs_eq_cancel_kind(CsEventQueue *q, CsEventHandle h, uint32_t kind)
{
  if (!cs_eq_pending(q, h) || q->slots[h.slot].kind != kind)
    return FALSE;
  return cs_eq_cancel(q, h);
}

size_t cs_eq_size(const CsEventQueue *q)
{
  return q->live;
}

int64_t cs_eq_peek_time(CsEventQueue *q)
{
  CsEqLane *lane = cs_eq_earliest(q);
  return lane ? cs_eq_time_of(lane->heap[0]) : INT64_MAX;
}

void cs_eq_set_seq_limit(CsEventQueue *q, uint64_t limit)
{
  q->seq_limit = MIN(MAX(limit, 1), (uint64_t)1 << 32);
}
