/* The wake-up probe: how busy the machine is while something real-time runs
 * (a replay, a measurement of a backend).
 *
 * A thread of normal priority sleeps in steps of CS_PROBE_PERIOD_NS and
 * records how late each sleep ended. On a quiet machine a sleep ends tens of
 * microseconds late; when other work (or the host of a virtual machine)
 * holds the cores, as late as that work keeps them, and every other thread
 * of normal priority that sleeps (an executor between batches, the emulated
 * backend's batch, a timed run's start) wakes as late. The replay's own
 * lateness figures cannot show it: its clock thread runs at real-time
 * priority when allowed. One wake-up every 2 ms costs a few microseconds. */
#ifndef CS_REPLAY_PROBE_H
#define CS_REPLAY_PROBE_H

#include <glib.h>
#include <stdint.h>

#define CS_PROBE_PERIOD_NS 2000000

/* The machine is busy for work of a typical duration (a batch's median
 * latency) when one wake-up in ten is later than 5 % of it, and than the
 * 0.2 ms a quiet machine's sleeps and a final spin (CS_SPIN_NS) absorb. */
#define CS_PROBE_BUSY_FRACTION 0.05
#define CS_PROBE_BUSY_FLOOR_MS 0.2

typedef struct CsProbe CsProbe;

/* What a probe measured, ms; NAN without a sample. busy: cs_probe_busy of
 * p90 against the work's typical duration (FALSE when either is unknown). */
typedef struct {
  double p50_ms, p90_ms, max_ms;
  guint samples;
  gboolean busy;
} CsProbeStats;

/* Starts the probe's thread; it sleeps until start_ns (CLOCK_MONOTONIC, as
 * cs_monotonic_ns) before its first step. Never fails. */
CsProbe *cs_probe_start(int64_t start_ns);

/* Stops and joins the probe; returns its wake-up lateness samples (int64
 * ns, one per step, at least one; g_array_unref it) and frees the probe. */
GArray *cs_probe_stop(CsProbe *p);

/* TRUE when a p90 wake-up lateness of wakeup_p90_ms makes the machine busy
 * for work that typically lasts typical_ms (the rule above); FALSE when
 * either is not finite. */
gboolean cs_probe_busy(double wakeup_p90_ms, double typical_ms);

/* The stats of samples (as cs_probe_stop returns; sorted in place) judged
 * against typical_ms. */
CsProbeStats cs_probe_stats(GArray *samples, double typical_ms);

#endif
