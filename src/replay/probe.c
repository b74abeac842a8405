/* The wake-up probe (probe.h). */
#define _GNU_SOURCE
#include "probe.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include "backends.h"
#include "sim/stats.h"

struct CsProbe {
  GThread *thread;
  int64_t start_ns;
  gint stop;       /* atomic */
  GArray *late_ns; /* written by the thread only, read after the join */
};

static gpointer probe_main(gpointer data)
{
  CsProbe *p = data;
  /* Normal priority, whatever the starting thread's: a thread inherits its
   * creator's policy, and the replay's clock thread may run at real-time
   * priority, which would hide the load the probe is for. */
  struct sched_param normal = { .sched_priority = 0 };
  pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal);
  /* Sleeps as precise as the replay's own (replay.c). */
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  int64_t due = p->start_ns;
  /* One step at least, also when stopped before the thread first ran. */
  do {
    cs_sleep_until_ns(due);
    int64_t late = cs_monotonic_ns() - due;
    g_array_append_val(p->late_ns, late);
    /* After a long stall the next step is due from now: one stall is one
     * late wake-up, not a burst of them. */
    due = MAX(due, cs_monotonic_ns()) + CS_PROBE_PERIOD_NS;
  } while (!g_atomic_int_get(&p->stop));
  return NULL;
}

CsProbe *cs_probe_start(int64_t start_ns)
{
  CsProbe *p = g_new0(CsProbe, 1);
  p->start_ns = start_ns;
  /* An hour of steps is 14 MB; growth beyond the first 4096 doubles. */
  p->late_ns = g_array_sized_new(FALSE, FALSE, sizeof(int64_t), 4096);
  p->thread = g_thread_new("cs-probe", probe_main, p);
  return p;
}

GArray *cs_probe_stop(CsProbe *p)
{
  g_atomic_int_set(&p->stop, 1);
  g_thread_join(p->thread);
  GArray *samples = p->late_ns;
  g_free(p);
  return samples;
}

gboolean cs_probe_busy(double wakeup_p90_ms, double typical_ms)
{
  if (!isfinite(wakeup_p90_ms) || !isfinite(typical_ms))
    return FALSE;
  return wakeup_p90_ms > MAX(CS_PROBE_BUSY_FLOOR_MS, CS_PROBE_BUSY_FRACTION * typical_ms);
}

CsProbeStats cs_probe_stats(GArray *samples, double typical_ms)
{
  CsLatencyStats ls;
  cs_latency_stats((int64_t *)samples->data, samples->len, &ls);
  CsProbeStats s = { .p50_ms = ls.p50, .p90_ms = ls.p90, .max_ms = ls.max,
                     .samples = samples->len };
  s.busy = cs_probe_busy(ls.p90, typical_ms);
  return s;
}
