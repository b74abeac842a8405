/* Memory for the long-lived, append-only data of a run (the samples'
 * blocks, src/sim/samples.c), carved from 2 MB slabs that are advised as
 * transparent huge pages and shared by every user in a thread.
 *
 * Why: on a virtual machine the first touch of each fresh 4 KB page costs a
 * trap of 10-20 us (docs/performance.md); a 1 M request run touched 1,500
 * pages of sample memory one by one, a tenth of its whole-process time.
 * Carved from shared 2 MB slabs, the same memory comes in a few huge pages
 * where the system has them (one fault each), and small sets do not each
 * hold a 2 MB page of their own. Where huge pages are refused or absent
 * nothing changes but the allocator.
 *
 * Each slab counts its live pieces; it is freed with the last one (and once
 * its thread has moved on to another slab or ended). Pieces may be freed
 * from any thread. */
#ifndef CS_SLAB_H
#define CS_SLAB_H

#include <stddef.h>

#define CS_SLAB_SIZE ((size_t)2 << 20)
/* The largest piece a slab gives out: half a slab, so that at most half of
 * one is left unused when the next piece does not fit. */
#define CS_SLAB_MAX_PIECE (CS_SLAB_SIZE / 2)

/* size bytes (1 <= size <= CS_SLAB_MAX_PIECE), 64-byte aligned, a piece of
 * the thread's slab. Aborts when out of memory, as g_malloc does. */
void *cs_slab_alloc(size_t size);

/* The free end of the thread's current slab, where its next piece starts,
 * and its bytes in *room (NULL and 0 before the first piece): a caller may
 * write a piece there before it knows the piece's length, then take it
 * with cs_slab_alloc(len), len <= *room (and, as for any piece, <=
 * CS_SLAB_MAX_PIECE), which returns this address as long as nothing else
 * on the thread took a piece in between. */
void *cs_slab_free_end(size_t *room);

/* Gives back what cs_slab_alloc gave; NULL is accepted. */
void cs_slab_free(void *piece);

#endif
