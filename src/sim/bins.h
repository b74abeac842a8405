/* Time series in bins of a fixed width, stored as runs of equal bins.
 *
 * Why runs: a dense array of bins grows with the simulated span, so two
 * requests 50 days apart in 1 s bins would need 4.3 million bins, and a
 * batch running for a simulated year 31 million. Here a series holds only
 * the bins something happened in, and a stretch of full bins with the same
 * values (the inside of a long busy period) is one run: memory grows with
 * the number of events that fill the series, never with the time between
 * them. Bins absent from the runs hold zeros.
 *
 * A series is a GArray of CsBinRun in ascending, non-overlapping bin order;
 * every addition must concern bins at or after the last bin already touched
 * (the engine adds in time order). */
#ifndef CS_BINS_H
#define CS_BINS_H

#include <glib.h>
#include <stdint.h>

typedef struct {
  int64_t first; /* first bin of the run */
  int64_t n;     /* bins in the run, >= 1 */
  int64_t a, b;  /* per bin: two integer sums (meaning given by the series) */
  double x;      /* per bin: a real sum */
} CsBinRun;

/* Returns a new empty series (g_array_unref it). */
GArray *cs_bins_new(void);

/* Adds the span [start, end) of simulated time to the bins of width bin_ns
 * it overlaps: each bin's a grows by the overlap in ns and its x by level
 * times the overlap. start must not fall before the last bin already
 * touched. Does nothing when end <= start. */
void cs_bins_add_span(GArray *runs, int64_t bin_ns, int64_t start, int64_t end, double level);

/* Adds da and db to bin's a and b; bin must not come before the last bin
 * already touched. */
void cs_bins_add_at(GArray *runs, int64_t bin, int64_t da, int64_t db);

/* Adds da, db and dx to bin's a, b and x at once (so that a bin equal to
 * the run before it joins that run); bin must not come before the last bin
 * already touched. */
void cs_bins_add_bin(GArray *runs, int64_t bin, int64_t da, int64_t db, double dx);

/* One past the last bin of the series (0 when empty). */
int64_t cs_bins_end(const GArray *runs);

/* Returns the series in bins twice as wide (g_array_unref it): bin k of
 * the result holds the sums of bins 2k and 2k + 1 of runs (a, b and x
 * added), stored as runs like its input. Takes O(R) time for R runs; the
 * result has at most 2R + 1 runs and, where runs was dense, half as many. */
GArray *cs_bins_coarsen(const GArray *runs);

/* The series of the per-bin sums of the a values of n series (b: how many
 * of them have a > 0 in the bin; x unused), stored as runs like its inputs
 * (g_array_unref it). Takes O(R log R) time for R runs in all. */
GArray *cs_bins_merge(GArray *const *series, int n);

#endif
