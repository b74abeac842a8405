/* Time series as runs of equal bins; see bins.h. */
#include "bins.h"

#include <stdlib.h>

GArray *cs_bins_new(void)
{
  return g_array_new(FALSE, FALSE, sizeof(CsBinRun));
}

int64_t cs_bins_end(const GArray *runs)
{
  if (runs->len == 0)
    return 0;
  const CsBinRun *last = &g_array_index(runs, CsBinRun, runs->len - 1);
  return last->first + last->n;
}

/* Adds (da, db, dx) to each of the n bins from bin on. The first of them may
 * be the last bin already touched (a span that starts in the bin where the
 * previous one ended): it is split off its run and added to. Fresh bins
 * extend the last run when they follow it with equal values. The values of
 * a bin are the same, in the same order of additions, as a dense array
 * would hold. */
static void add_bins(GArray *runs, int64_t bin, int64_t n, int64_t da, int64_t db, double dx)
{
  if (n <= 0)
    return;
  if (runs->len > 0) {
    CsBinRun *last = &g_array_index(runs, CsBinRun, runs->len - 1);
    int64_t last_bin = last->first + last->n - 1;
    g_assert(bin >= last_bin); /* the engine adds in time order */
    if (bin == last_bin) {
      if (last->n > 1) {
        CsBinRun one = *last;
        one.first = last_bin;
        one.n = 1;
        last->n--;
        g_array_append_val(runs, one);
        last = &g_array_index(runs, CsBinRun, runs->len - 1);
      }
      last->a += da;
      last->b += db;
      last->x += dx;
      /* Completed, the bin may now equal the run before it: it joins it. */
      if (runs->len > 1) {
        CsBinRun *prev = last - 1;
        if (prev->first + prev->n == last_bin && prev->a == last->a && prev->b == last->b &&
            prev->x == last->x) {
          prev->n++;
          g_array_set_size(runs, runs->len - 1);
          last = prev;
        }
      }
      bin++;
      n--;
      if (n == 0)
        return;
    }
    if (last->first + last->n == bin && last->a == da && last->b == db && last->x == dx) {
      last->n += n;
      return;
    }
  }
  CsBinRun r = { .first = bin, .n = n, .a = da, .b = db, .x = dx };
  g_array_append_val(runs, r);
}

void cs_bins_add_span(GArray *runs, int64_t bin_ns, int64_t start, int64_t end, double level)
{
  if (end <= start)
    return;
  int64_t b0 = start / bin_ns, b1 = (end - 1) / bin_ns;
  if (b0 == b1) {
    add_bins(runs, b0, 1, end - start, 0, level * (double)(end - start));
    return;
  }
  /* A partial (or full) first bin, the full bins between, the last bin. */
  int64_t first_end = (b0 + 1) * bin_ns, last_start = b1 * bin_ns;
  add_bins(runs, b0, 1, first_end - start, 0, level * (double)(first_end - start));
  add_bins(runs, b0 + 1, b1 - b0 - 1, bin_ns, 0, level * (double)bin_ns);
  add_bins(runs, b1, 1, end - last_start, 0, level * (double)(end - last_start));
}

void cs_bins_add_at(GArray *runs, int64_t bin, int64_t da, int64_t db)
{
  add_bins(runs, bin, 1, da, db, 0.0);
}

void cs_bins_add_bin(GArray *runs, int64_t bin, int64_t da, int64_t db, double dx)
{
  add_bins(runs, bin, 1, da, db, dx);
}

GArray *cs_bins_coarsen(const GArray *runs)
{
  /* A run of n equal bins from f becomes: f's half of a wide bin when f is
   * odd (shared with what came before), the wide bins it covers whole
   * (twice its values), and its last bin's half of a wide bin when that one
   * is left over. add_bins adds into the last wide bin already touched, so
   * the halves shared by neighbouring runs sum. Bins are >= 0, so / 2 is
   * the floor. */
  GArray *out = g_array_sized_new(FALSE, FALSE, sizeof(CsBinRun), runs->len / 2 + 1);
  for (guint i = 0; i < runs->len; i++) {
    const CsBinRun *r = &g_array_index(runs, CsBinRun, i);
    int64_t f = r->first, n = r->n;
    if (f % 2 == 1) {
      add_bins(out, f / 2, 1, r->a, r->b, r->x);
      f++;
      n--;
    }
    int64_t pairs = n / 2;
    if (pairs > 0)
      add_bins(out, f / 2, pairs, 2 * r->a, 2 * r->b, 2.0 * r->x);
    if (n % 2 == 1)
      add_bins(out, (f + n - 1) / 2, 1, r->a, r->b, r->x);
  }
  return out;
}

typedef struct {
  int64_t bin;
  int64_t da, db;
} Change;

static int cmp_change(const void *p, const void *q)
{
  int64_t x = ((const Change *)p)->bin, y = ((const Change *)q)->bin;
  return (x > y) - (x < y);
}

GArray *cs_bins_merge(GArray *const *series, int n)
{
  /* Each run contributes its a (and one series with a > 0) from its first
   * bin to one past its last: a sweep over the sorted change points gives
   * the sums over every stretch of bins where no run starts or ends. */
  GArray *changes = g_array_new(FALSE, FALSE, sizeof(Change));
  for (int s = 0; s < n; s++)
    for (guint i = 0; series[s] && i < series[s]->len; i++) {
      const CsBinRun *r = &g_array_index(series[s], CsBinRun, i);
      if (r->a == 0)
        continue;
      Change up = { r->first, r->a, 1 }, down = { r->first + r->n, -r->a, -1 };
      g_array_append_val(changes, up);
      g_array_append_val(changes, down);
    }
  if (changes->len > 0) /* an empty GArray's data may be NULL, which qsort must not get */
    qsort(changes->data, changes->len, sizeof(Change), cmp_change);
  GArray *out = cs_bins_new();
  int64_t a = 0, b = 0;
  for (guint i = 0; i < changes->len;) {
    int64_t bin = g_array_index(changes, Change, i).bin;
    for (; i < changes->len && g_array_index(changes, Change, i).bin == bin; i++) {
      a += g_array_index(changes, Change, i).da;
      b += g_array_index(changes, Change, i).db;
    }
    if (b > 0 && i < changes->len) /* some run is open until the next change point */
      add_bins(out, bin, g_array_index(changes, Change, i).bin - bin, a, b, 0.0);
  }
  g_array_unref(changes);
  return out;
}
