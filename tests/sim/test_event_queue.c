/* Event queue: time order, FIFO tie-break, cancellation by handle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "sim/event_queue.h"

#define STREAM_KIND 7

static void test_time_order_and_fifo_ties(void **state)
{
  (void)state;
  CsEventQueue *q = cs_eq_new();
  /* Pushed out of time order; equal times must pop in push order. */
  cs_eq_push(q, 30, 0, 1, NULL);
  cs_eq_push(q, 10, 0, 2, NULL);
  cs_eq_push(q, 20, 0, 3, NULL);
  cs_eq_push(q, 10, 0, 4, NULL);
  cs_eq_push(q, 10, 0, 5, NULL);
  const uint32_t expect[] = { 2, 4, 5, 3, 1 };
  CsEvent ev;
  for (int i = 0; i < 5; i++) {
    assert_true(cs_eq_pop(q, &ev));
    assert_int_equal(ev.arg, expect[i]);
  }
  assert_false(cs_eq_pop(q, &ev));
  cs_eq_free(q);
}

static void test_tie_break_both_ways(void **state)
{
  (void)state;
  /* The tie-break follows push order whichever of two equal events is pushed first. */
  for (int first = 0; first < 2; first++) {
    CsEventQueue *q = cs_eq_new();
    cs_eq_push(q, 5, 0, (uint32_t)first, NULL);
    cs_eq_push(q, 5, 0, (uint32_t)!first, NULL);
    CsEvent ev;
    cs_eq_pop(q, &ev);
    assert_int_equal(ev.arg, first);
    cs_eq_free(q);
  }
}

static void test_cancel(void **state)
{
  (void)state;
  CsEventQueue *q = cs_eq_new();
  CsEventHandle a = cs_eq_push(q, 1, 0, 1, NULL);
  CsEventHandle b = cs_eq_push(q, 2, 0, 2, NULL);
  cs_eq_push(q, 3, 0, 3, NULL);
  assert_true(cs_eq_pending(q, b));
  assert_true(cs_eq_cancel(q, b));
  assert_false(cs_eq_pending(q, b));
  assert_false(cs_eq_cancel(q, b)); /* stale */
  assert_false(cs_eq_cancel(q, CS_EVENT_HANDLE_NONE));
  CsEvent ev;
  cs_eq_pop(q, &ev);
  assert_int_equal(ev.arg, 1);
  assert_false(cs_eq_cancel(q, a)); /* already fired */
  /* The freed slot is reused; the old handle must not cancel the new event. */
  CsEventHandle c = cs_eq_push(q, 4, 0, 4, NULL);
  assert_int_equal(c.slot, a.slot); /* the slot was reused, so only the generation tells */
  assert_false(cs_eq_cancel(q, a));
  assert_false(cs_eq_cancel(q, b));
  cs_eq_pop(q, &ev);
  assert_int_equal(ev.arg, 3);
  cs_eq_pop(q, &ev);
  assert_int_equal(ev.arg, 4);
  assert_int_equal(cs_eq_size(q), 0);
  cs_eq_free(q);
}

/* Random pushes and cancels against a reference: pops must come out sorted by
 * (time, push order) and contain exactly the events not cancelled. */
static void test_random_against_reference(void **state)
{
  (void)state;
  enum { N = 20000 };
  CsEventQueue *q = cs_eq_new();
  CsEventHandle *h = g_new(CsEventHandle, N);
  int64_t *time = g_new(int64_t, N);
  gboolean *cancelled = g_new0(gboolean, N);
  GRand *rand = g_rand_new_with_seed(7);
  for (int i = 0; i < N; i++) {
    time[i] = g_rand_int_range(rand, 0, 500); /* many ties */
    h[i] = cs_eq_push(q, time[i], 0, (uint32_t)i, NULL);
  }
  int n_cancel = 0;
  for (int i = 0; i < N; i += 3) {
    assert_true(cs_eq_cancel(q, h[i]));
    cancelled[i] = TRUE;
    n_cancel++;
  }
  assert_int_equal(cs_eq_size(q), N - n_cancel);
  CsEvent ev;
  int64_t last_t = -1;
  int last_i = -1, count = 0;
  while (cs_eq_pop(q, &ev)) {
    int i = (int)ev.arg;
    assert_false(cancelled[i]);
    assert_int_equal(ev.time, time[i]);
    assert_true(ev.time > last_t || (ev.time == last_t && i > last_i));
    last_t = ev.time;
    last_i = i;
    count++;
  }
  assert_int_equal(count, N - n_cancel);
  g_rand_free(rand);
  g_free(h);
  g_free(time);
  g_free(cancelled);
  cs_eq_free(q);
}

/* A simulation's pattern: pop, then push (often right after, into the hole
 * the pop left at the root: event_queue.c), cancel (one step in cancel_every;
 * often enough, the dead entries outnumber the pending ones and the heap is
 * rebuilt), peek and count, all interleaved, against a linear scan for the
 * earliest (time, push order). seq_limit > 0: the queue renumbers its
 * sequence numbers that often (as it does when 2^32 run out). */
static void interleaved_against_linear_scan(int cancel_every, uint64_t seq_limit)
{
  typedef struct {
    int64_t time;
    int id;
    CsEventHandle h;
  } Pending;
  GArray *pend = g_array_new(FALSE, FALSE, sizeof(Pending));
  CsEventQueue *q = cs_eq_new();
  cs_eq_set_stream_kind(q, STREAM_KIND);
  if (seq_limit > 0)
    cs_eq_set_seq_limit(q, seq_limit);
  GRand *rand = g_rand_new_with_seed(11);
  int next_id = 0;
  int64_t now = 0;
  for (int i = 0; i < 50; i++) {
    Pending p = { g_rand_int_range(rand, 0, 100), next_id++, { 0, 0 } };
    p.h = cs_eq_push(q, p.time, 0, (uint32_t)p.id, NULL);
    g_array_append_val(pend, p);
  }
  for (int step = 0; step < 200000 && pend->len > 0; step++) {
    /* The reference: earliest time, then lowest id (ids follow push order). */
    guint best = 0;
    for (guint k = 1; k < pend->len; k++) {
      const Pending *a = &g_array_index(pend, Pending, k), *b = &g_array_index(pend, Pending, best);
      if (a->time < b->time || (a->time == b->time && a->id < b->id))
        best = k;
    }
    Pending want = g_array_index(pend, Pending, best);
    g_array_remove_index_fast(pend, best);
    CsEvent ev;
    assert_true(cs_eq_pop(q, &ev));
    assert_int_equal(ev.arg, want.id);
    assert_int_equal(ev.time, want.time);
    /* The stream's events pop with the stream's kind and no pointer. */
    assert_int_equal(ev.kind, want.h.gen == 0 ? STREAM_KIND : 0);
    assert_null(ev.ptr);
    assert_false(cs_eq_pending(q, want.h));
    now = ev.time;
    int r = g_rand_int_range(rand, 0, 10);
    while (g_rand_int_range(rand, 0, cancel_every) == 0 && pend->len > 0) {
      /* cancel, with the hole open; a cancelled handle is stale at once
       * (the stream's events have none: another try) */
      guint k = (guint)g_rand_int_range(rand, 0, (gint32)pend->len);
      CsEventHandle h = g_array_index(pend, Pending, k).h;
      if (h.gen == 0)
        continue;
      assert_true(cs_eq_cancel(q, h));
      assert_false(cs_eq_pending(q, h));
      assert_false(cs_eq_cancel(q, h));
      g_array_remove_index_fast(pend, k);
    }
    if (r == 1) { /* count and peek, with the hole open */
      assert_int_equal(cs_eq_size(q), pend->len);
      int64_t first = INT64_MAX;
      for (guint k = 0; k < pend->len; k++)
        first = MIN(first, g_array_index(pend, Pending, k).time);
      assert_int_equal(cs_eq_peek_time(q), first);
    }
    /* Push 0, 1 or 2 events from now on, some at now itself (ties); the
     * queue holds 20 to 200 events, then drains. */
    int n_push = step >= 150000 ? 0 : pend->len < 20 ? 2 : pend->len > 200 ? 0
                                                      : g_rand_int_range(rand, 0, 3);
    for (int k = 0; k < n_push; k++) {
      Pending p = { now + g_rand_int_range(rand, 0, 3) * g_rand_int_range(rand, 0, 50),
                    next_id++, { 0, 0 } };
      /* With a handle or in the stream: the order must not depend on it. */
      if (g_rand_boolean(rand))
        p.h = cs_eq_push(q, p.time, 0, (uint32_t)p.id, NULL);
      else
        cs_eq_push_stream(q, p.time, (uint32_t)p.id);
      g_array_append_val(pend, p);
    }
  }
  assert_int_equal(cs_eq_size(q), pend->len);
  g_rand_free(rand);
  g_array_unref(pend);
  cs_eq_free(q);
}

static void test_interleaved_against_linear_scan(void **state)
{
  (void)state;
  interleaved_against_linear_scan(10, 0);
}

/* Cancelling more than half the time: dead entries pile up and the heap is
 * rebuilt without them, again and again. */
static void test_interleaved_many_cancels(void **state)
{
  (void)state;
  interleaved_against_linear_scan(2, 0);
}

/* Sequence numbers renumbered every 97 pushes (every push, while more than
 * 97 events are pending), with and without cancellations. */
static void test_interleaved_seq_renumbered(void **state)
{
  (void)state;
  interleaved_against_linear_scan(10, 97);
  interleaved_against_linear_scan(2, 97);
}

/* Events of equal time pop in push order, with handles or in the stream, also after
 * renumbering (limit 3) and without it (limit 0: the default). */
static void test_ties_across_lanes(void **state)
{
  (void)state;
  for (uint64_t limit = 0; limit <= 3; limit += 3) {
    CsEventQueue *q = cs_eq_new();
    if (limit)
      cs_eq_set_seq_limit(q, limit);
    for (uint32_t i = 0; i < 10; i++) {
      if (i % 3 % 2)
        cs_eq_push_stream(q, i % 2 ? 5 : 9, i);
      else
        cs_eq_push(q, i % 2 ? 5 : 9, 0, i, NULL);
    }
    const uint32_t expect[] = { 1, 3, 5, 7, 9, 0, 2, 4, 6, 8 };
    CsEvent ev;
    for (int i = 0; i < 10; i++) {
      assert_true(cs_eq_pop(q, &ev));
      assert_int_equal(ev.arg, expect[i]);
    }
    assert_false(cs_eq_pop(q, &ev));
    cs_eq_free(q);
  }
}

/* Renumbering keeps the order of events of equal time already pending. */
static void test_seq_renumbered_keeps_ties(void **state)
{
  (void)state;
  CsEventQueue *q = cs_eq_new();
  cs_eq_set_seq_limit(q, 3);
  for (uint32_t i = 0; i < 10; i++)
    cs_eq_push(q, i % 2 ? 5 : 9, 0, i, NULL);
  const uint32_t expect[] = { 1, 3, 5, 7, 9, 0, 2, 4, 6, 8 };
  CsEvent ev;
  for (int i = 0; i < 10; i++) {
    assert_true(cs_eq_pop(q, &ev));
    assert_int_equal(ev.arg, expect[i]);
  }
  assert_false(cs_eq_pop(q, &ev));
  cs_eq_free(q);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_time_order_and_fifo_ties),
    cmocka_unit_test(test_tie_break_both_ways),
    cmocka_unit_test(test_cancel),
    cmocka_unit_test(test_random_against_reference),
    cmocka_unit_test(test_interleaved_against_linear_scan),
    cmocka_unit_test(test_interleaved_many_cancels),
    cmocka_unit_test(test_interleaved_seq_renumbered),
    cmocka_unit_test(test_seq_renumbered_keeps_ties),
    cmocka_unit_test(test_ties_across_lanes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
