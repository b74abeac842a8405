/* "GPUs used" per time-series bin (Symphony's autoscaling signal: the GPUs
 * that ran anything in the bin), reduced as the run goes to the two figures
 * the summary states, their mean and maximum over the bins, without keeping
 * a series: memory is O(GPUs), whatever the simulated span.
 *
 * Each GPU's busy periods (in time order) mark the bins they overlap; a bin
 * counts a GPU once. The marks are kept as +1/-1 change points until every
 * bin before some bin F is known to be final (no GPU can mark it any more),
 * then swept into the maximum and dropped; see cs_used_settle. */
#ifndef CS_USED_H
#define CS_USED_H

#include <glib.h>
#include <stdint.h>

typedef struct {
  int64_t bin_ns;
  int n_gpus;
  int64_t *last;     /* per GPU: the last bin it marked, -1 */
  GArray *changes;   /* (bin, delta) change points not swept yet */
  int64_t level;     /* GPUs used in the last bin swept */
  int64_t max;       /* the most GPUs used in one bin so far */
  int64_t sum;       /* GPU-bins marked (a GPU once per bin) */
  int64_t end;       /* one past the last bin marked */
  int64_t settled;   /* every bin before it is swept */
} CsUsed;

/* Prepares u for n_gpus GPUs and bins of bin_ns (> 0). */
void cs_used_init(CsUsed *u, int n_gpus, int64_t bin_ns);

/* Frees what u holds (it may be initialised again). */
void cs_used_clear(CsUsed *u);

/* Marks the bins GPU g's busy span [start, end) overlaps (nothing when end
 * <= start). start must not come before the end of g's previous span, and
 * no span may start before the bin of the last cs_used_settle. Returns TRUE
 * when the change points kept have grown enough that the caller should
 * settle (cs_used_settle) soon. */
gboolean cs_used_add(CsUsed *u, int g, int64_t start, int64_t end);

/* Sweeps every bin before final_bin into the maximum and drops its change
 * points: the caller promises that no span added later overlaps a bin before
 * final_bin (a GPU busy now must first have its span so far added, which a
 * later add of its whole span does not count twice). INT64_MAX: the run is
 * over. */
void cs_used_settle(CsUsed *u, int64_t final_bin);

/* The mean over bins 0 .. end - 1 (0 when no bin was marked) and the
 * maximum of GPUs used, after cs_used_settle(u, INT64_MAX). */
double cs_used_mean(const CsUsed *u);

#endif
