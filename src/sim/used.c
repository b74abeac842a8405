/* GPUs used per bin, reduced to a mean and a maximum; see used.h. */
#include "used.h"

#include <stdlib.h>

typedef struct {
  int64_t bin, delta;
} Change;

/* Settling once the change points outnumber 4 per GPU (at most 2 per GPU
 * survive a settle: the -1 one past a span ending in the current bin) keeps
 * the cost amortised O(log) per span and the memory O(GPUs). */
#define SETTLE_BASE 4096

void cs_used_init(CsUsed *u, int n_gpus, int64_t bin_ns)
{
  *u = (CsUsed){ .bin_ns = bin_ns, .n_gpus = n_gpus };
  u->last = g_new(int64_t, n_gpus > 0 ? n_gpus : 1);
  for (int g = 0; g < n_gpus; g++)
    u->last[g] = -1;
  u->changes = g_array_new(FALSE, FALSE, sizeof(Change));
}

void cs_used_clear(CsUsed *u)
{
  g_clear_pointer(&u->last, g_free);
  g_clear_pointer(&u->changes, g_array_unref);
}

gboolean cs_used_add(CsUsed *u, int g, int64_t start, int64_t end)
{
  if (end <= start)
    return FALSE;
  /* The bins the span overlaps that g has not marked yet. */
  int64_t lo = start / u->bin_ns, hi = (end - 1) / u->bin_ns;
  if (lo <= u->last[g])
    lo = u->last[g] + 1;
  if (lo > hi)
    return FALSE;
  g_assert(lo >= u->settled); /* the caller's promise to cs_used_settle */
  u->last[g] = hi;
  u->sum += hi - lo + 1;
  if (hi + 1 > u->end)
    u->end = hi + 1;
  Change up = { lo, 1 }, down = { hi + 1, -1 };
  g_array_append_val(u->changes, up);
  g_array_append_val(u->changes, down);
  return u->changes->len >= (guint)(4 * u->n_gpus + SETTLE_BASE);
}

static int cmp_change(const void *p, const void *q)
{
  int64_t x = ((const Change *)p)->bin, y = ((const Change *)q)->bin;
  return (x > y) - (x < y);
}

void cs_used_settle(CsUsed *u, int64_t final_bin)
{
  GArray *ch = u->changes;
  if (ch->len > 0)
    qsort(ch->data, ch->len, sizeof(Change), cmp_change);
  /* After all the changes at a bin, the level is the GPUs used in it (and
   * in the bins up to the next change). Changes at final_bin and later may
   * still be joined by others at the same bin: they stay. */
  guint i = 0;
  while (i < ch->len && g_array_index(ch, Change, i).bin < final_bin) {
    int64_t bin = g_array_index(ch, Change, i).bin;
    for (; i < ch->len && g_array_index(ch, Change, i).bin == bin; i++)
      u->level += g_array_index(ch, Change, i).delta;
    if (u->level > u->max)
      u->max = u->level;
  }
  g_array_remove_range(ch, 0, i);
  if (final_bin > u->settled)
    u->settled = final_bin;
}

double cs_used_mean(const CsUsed *u)
{
  return u->end > 0 ? (double)u->sum / (double)u->end : 0.0;
}
