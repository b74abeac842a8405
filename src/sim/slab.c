/* Shared 2 MB slabs; see slab.h.
 *
 * A slab starts with its header (the count of live pieces, one more while
 * it is its thread's current slab), then pieces carved in order. A piece's
 * slab is found by rounding its address down to 2 MB: slabs are 2 MB
 * aligned and pieces never span two. */
#define _DEFAULT_SOURCE /* madvise */
#include "slab.h"

#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HEADER 64 /* a cache line: pieces stay 64-byte aligned */

/* Under AddressSanitizer the parts of a slab not given out are poisoned, so
 * that a write or read past a piece's end is reported as it would be
 * between two mallocs (a slab is one allocation to ASan). */
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

typedef struct {
  gint live; /* pieces not yet freed, + 1 while current */
} SlabHeader;

typedef struct {
  guint8 *slab; /* the current slab; NULL before the first piece */
  size_t used;  /* its bytes given out, the header included */
} ThreadSlab;

static void slab_unref(guint8 *slab)
{
  if (slab && g_atomic_int_dec_and_test(&((SlabHeader *)slab)->live)) {
    UNPOISON(slab, CS_SLAB_SIZE);
    free(slab);
  }
}

static void thread_slab_free(gpointer p)
{
  ThreadSlab *t = p;
  slab_unref(t->slab);
  g_free(t);
}

static GPrivate current = G_PRIVATE_INIT(thread_slab_free);

static guint8 *slab_new(void)
{
  void *v = NULL;
  if (posix_memalign(&v, CS_SLAB_SIZE, CS_SLAB_SIZE) != 0)
    g_error("cs_slab: out of memory for a %zu byte slab", CS_SLAB_SIZE);
#ifdef MADV_HUGEPAGE
  madvise(v, CS_SLAB_SIZE, MADV_HUGEPAGE); /* advice: refused or absent changes nothing */
#endif
  guint8 *p = v;
  ((SlabHeader *)p)->live = 1;
  POISON(p + HEADER, CS_SLAB_SIZE - HEADER);
  return p;
}

void *cs_slab_alloc(size_t size)
{
  g_assert(size >= 1 && size <= CS_SLAB_MAX_PIECE);
  size_t asked = size;
  size = (size + HEADER - 1) & ~(size_t)(HEADER - 1);
  ThreadSlab *t = g_private_get(&current);
  if (!t) {
    t = g_new0(ThreadSlab, 1);
    g_private_set(&current, t);
  }
  if (!t->slab || t->used + size > CS_SLAB_SIZE) {
    if (t->slab) /* the tail it leaves, which cs_slab_free_end may have unpoisoned */
      POISON(t->slab + t->used, CS_SLAB_SIZE - t->used);
    slab_unref(t->slab);
    t->slab = slab_new();
    t->used = HEADER;
  }
  g_atomic_int_inc(&((SlabHeader *)t->slab)->live);
  guint8 *piece = t->slab + t->used;
  t->used += size;
  UNPOISON(piece, asked);
  POISON(piece + asked, CS_SLAB_SIZE - (t->used - size) - asked); /* cs_slab_free_end's */
  return piece;
}

void *cs_slab_free_end(size_t *room)
{
  ThreadSlab *t = g_private_get(&current);
  if (!t || !t->slab) {
    *room = 0;
    return NULL;
  }
  *room = CS_SLAB_SIZE - t->used;
  UNPOISON(t->slab + t->used, *room);
  return t->slab + t->used;
}

void cs_slab_free(void *piece)
{
  if (piece)
    slab_unref((guint8 *)((uintptr_t)piece & ~(uintptr_t)(CS_SLAB_SIZE - 1)));
}
