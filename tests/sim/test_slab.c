/* Shared 2 MB slabs (src/sim/slab.h): pieces aligned, apart from one another
 * and from 2 MB boundaries, intact while others come and go, shared by the
 * small users of a thread, a new slab when one is full, and freed from any
 * thread. */
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

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_pieces_apart_and_intact),
    cmocka_unit_test(test_small_pieces_share_a_slab),
    cmocka_unit_test(test_free_from_another_thread),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
