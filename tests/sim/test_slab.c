/* Shared 2 MB slabs (src/sim/slab.h): pieces aligned, apart from one another
 * and from 2 MB boundaries, intact while others come and go, shared by the
 * small users of a thread, a new slab when one is full, freed from any
 * thread, and the free end where the next piece starts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "sim/slab.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

static uintptr_t slab_of(const void *p)
{
  return (uintptr_t)p & ~(uintptr_t)(CS_SLAB_SIZE - 1);
}

/* Pieces of many sizes, each filled with its own byte: all aligned, none
 * at a 2 MB boundary, none spanning two slabs, and every byte still its
 * piece's after all were written (so no two overlap). */
static void test_pieces_apart_and_intact(void **state)
{
  (void)state;
  enum { N = 300 };
  void *piece[N];
  size_t size[N];
  GRand *rand = g_rand_new_with_seed(7);
  for (int i = 0; i < N; i++) {
    size[i] = i % 10 == 0 ? CS_SLAB_MAX_PIECE : (size_t)g_rand_int_range(rand, 1, 70000);
    piece[i] = cs_slab_alloc(size[i]);
    assert_non_null(piece[i]);
    assert_int_equal((uintptr_t)piece[i] % 64, 0);
    assert_int_not_equal((uintptr_t)piece[i] % CS_SLAB_SIZE, 0);
    assert_true(slab_of(piece[i]) == slab_of((guint8 *)piece[i] + size[i] - 1));
#ifdef __SANITIZE_ADDRESS__
    /* A slab is one allocation to ASan: what is not given out is poisoned,
     * so that an overrun past a piece is reported. */
    assert_false(__asan_address_is_poisoned((guint8 *)piece[i] + size[i] - 1));
    assert_true(__asan_address_is_poisoned((guint8 *)piece[i] + size[i]));
#endif
    memset(piece[i], i & 0xff, size[i]);
  }
  for (int i = 0; i < N; i++)
    for (size_t k = 0; k < size[i]; k += 97)
      assert_int_equal(((guint8 *)piece[i])[k], i & 0xff);
  for (int i = 0; i < N; i += 2) /* free half, allocate again, check the rest */
    cs_slab_free(piece[i]);
  for (int i = 0; i < N; i += 2) {
    piece[i] = cs_slab_alloc(size[i]);
    memset(piece[i], i & 0xff, size[i]);
  }
  for (int i = 0; i < N; i++) {
    for (size_t k = 0; k < size[i]; k += 97)
      assert_int_equal(((guint8 *)piece[i])[k], i & 0xff);
    cs_slab_free(piece[i]);
  }
  g_rand_free(rand);
}

/* Small pieces in a row share a slab (the point: one huge page, not one per
 * user); one that does not fit starts the next slab. */
static void test_small_pieces_share_a_slab(void **state)
{
  (void)state;
  void *a = cs_slab_alloc(64 << 10);
  void *b = cs_slab_alloc(64 << 10);
  void *c = cs_slab_alloc(128 << 10);
  assert_true(slab_of(a) == slab_of(b) && slab_of(b) == slab_of(c));
  /* Two pieces of half a slab cannot both fit in what is left. */
  void *d = cs_slab_alloc(CS_SLAB_MAX_PIECE);
  void *e = cs_slab_alloc(CS_SLAB_MAX_PIECE);
  assert_true(slab_of(d) != slab_of(e));
  cs_slab_free(a);
  cs_slab_free(b);
  cs_slab_free(c);
  cs_slab_free(d);
  cs_slab_free(e);
  cs_slab_free(NULL);
}

/* The free end is where the next piece starts: bytes written there before
 * the piece is taken are the piece's, and the room is what is left of the
 * slab (a piece of that size still fits; one more byte would not). */
static void test_free_end_is_the_next_piece(void **state)
{
  (void)state;
  size_t room;
  cs_slab_free_end(&room); /* earlier tests' slab: below leaves 8 KB for this one */
  void *filler = room > 0 && room < 8192 ? cs_slab_alloc(room) : NULL;
  void *first = cs_slab_alloc(1000);
  guint8 *end = cs_slab_free_end(&room);
  assert_non_null(end);
  assert_true(slab_of(end) == slab_of(first) && end > (guint8 *)first);
  assert_int_equal((uintptr_t)end % 64, 0);
  assert_int_equal(slab_of(end) + CS_SLAB_SIZE - (uintptr_t)end, room);
  memset(end, 0xa5, 5000); /* written before it is a piece */
  guint8 *piece = cs_slab_alloc(3000);
  assert_ptr_equal(piece, end);
  for (int k = 0; k < 3000; k += 7)
    assert_int_equal(piece[k], 0xa5);
#ifdef __SANITIZE_ADDRESS__
  /* Past the piece, the free end is poisoned again. */
  assert_true(__asan_address_is_poisoned(piece + 3000));
#endif
  size_t left;
  guint8 *next = cs_slab_free_end(&left);
  assert_ptr_equal(next, piece + 3008); /* 3000 to 64 bytes */
  assert_int_equal(left, room - 3008);
  /* Fill the slab to its end: a piece of all the room is the free end. */
  while (left > CS_SLAB_MAX_PIECE) {
    cs_slab_free(cs_slab_alloc(CS_SLAB_MAX_PIECE));
    next = cs_slab_free_end(&left);
  }
  guint8 *last = cs_slab_alloc(left);
  assert_ptr_equal(last, next);
  assert_true(slab_of(last) == slab_of(first));
  memset(last, 1, left);
  cs_slab_free_end(&left);
  assert_int_equal(left, 0);
  guint8 *other = cs_slab_alloc(1);
  assert_true(slab_of(other) != slab_of(first));
  cs_slab_free(first);
  cs_slab_free(piece);
  cs_slab_free(last);
  cs_slab_free(other);
  cs_slab_free(filler);
}

static gpointer free_end_in_thread(gpointer data)
{
  size_t *room = data;
  return cs_slab_free_end(room);
}

static gpointer alloc_in_thread(gpointer data)
{
  void **out = data;
  for (int i = 0; i < 8; i++)
    out[i] = cs_slab_alloc(300000);
  return NULL; /* the thread's current slab is given up when it ends */
}

/* Pieces of a thread that has ended stay valid, and are freed here. */
static void test_free_from_another_thread(void **state)
{
  (void)state;
  void *pieces[8];
  g_thread_join(g_thread_new("slab", alloc_in_thread, pieces));
  for (int i = 0; i < 8; i++)
    memset(pieces[i], 0x5a, 300000);
  for (int i = 0; i < 8; i++)
    cs_slab_free(pieces[i]);
}

/* A free end looked at, then left for a piece that does not fit in it: the
 * piece starts the next slab, and under ASan the tail left behind is
 * poisoned again (cs_slab_free_end unpoisoned it for the caller). */
static void test_free_end_left_behind(void **state)
{
  (void)state;
  GPtrArray *taken = g_ptr_array_new_with_free_func(cs_slab_free);
  size_t room;
  g_ptr_array_add(taken, cs_slab_alloc(64));
  cs_slab_free_end(&room);
  while (room > CS_SLAB_MAX_PIECE / 2) {
    g_ptr_array_add(taken, cs_slab_alloc(CS_SLAB_MAX_PIECE / 4));
    cs_slab_free_end(&room);
  }
  guint8 *tail = cs_slab_free_end(&room);
#ifdef __SANITIZE_ADDRESS__
  assert_false(__asan_address_is_poisoned(tail));
#endif
  guint8 *next = cs_slab_alloc(room + 64);
  assert_true(slab_of(next) != slab_of(tail));
#ifdef __SANITIZE_ADDRESS__
  assert_true(__asan_address_is_poisoned(tail));
#endif
  cs_slab_free(next);
  g_ptr_array_unref(taken);
}

/* A thread without a piece yet has no free end. */
static void test_no_free_end_before_a_piece(void **state)
{
  (void)state;
  size_t room = 1;
  assert_null(g_thread_join(g_thread_new("slab", free_end_in_thread, &room)));
  assert_int_equal(room, 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_pieces_apart_and_intact),
    cmocka_unit_test(test_small_pieces_share_a_slab),
    cmocka_unit_test(test_free_from_another_thread),
    cmocka_unit_test(test_free_end_is_the_next_piece),
    cmocka_unit_test(test_no_free_end_before_a_piece),
    cmocka_unit_test(test_free_end_left_behind),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
