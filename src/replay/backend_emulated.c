/* "emulated": a batch takes exactly its profiled isolated latency on its
 * GPU's type, spent asleep (as nexuslb's emulated GPUs do). A worker on an
 * MPS share whose model has a latency-vs-share table in the scenario's
 * interference data sleeps that much longer, as a batch alone on its share
 * does in the simulator. No interference between workers, no MIG fraction:
 * a replay on it measures the replay's own scheduling overhead and nothing
 * of the hardware. The last 150 us of each sleep are spun
 * (cs_wait_until_ns): a plain sleep ends 50-70 us late here. */
#include <math.h>
#include <string.h>

#include "backends.h"
#include "profiles/interference.h"

typedef struct {
  const CsBackendSetup *setup;
} Emulated;

typedef struct {
  const CsModelProfile *profile;
  int share_table;  /* the model's index in setup->interference, or -1 */
} EmulatedWorker;

static void *emulated_open(const CsBackendSetup *setup, void *user_data, GError **error)
{
  (void)user_data;
  static const char *const known[] = { NULL };
  if (!cs_backend_check_options(setup, "emulated", known, error))
    return NULL;
  Emulated *e = g_new0(Emulated, 1);
  e->setup = setup;
  return e;
}

static gboolean emulated_prepare(void *state, CsBackendWorker *w, GError **error)
{
  Emulated *e = state;
  const char *type = e->setup->gpu_types[w->gpu];
  const char *model = e->setup->models[w->model];
  const CsModelProfile *p = cs_profile_set_lookup(e->setup->profiles, type, model);
  if (!p) {
    g_set_error(error, CS_ERROR, CS_ERROR_INVALID,
                "no profile of %s on GPU type %s", model, type);
    return FALSE;
  }
  EmulatedWorker *ew = g_new(EmulatedWorker, 1);
  ew->profile = p;
  ew->share_table = -1;
  if (e->setup->mps && w->mps_share > 0 && w->mps_share < 1) {
    int i = cs_interference_set_find(e->setup->interference, model);
    if (i >= 0 && cs_interference_has_share_table(e->setup->interference, i))
      ew->share_table = i;
  }
  w->data = ew;
  return TRUE;
}

static gboolean emulated_execute(void *state, CsBackendWorker *w, int batch, GError **error)
{
  (void)error;
  const Emulated *e = state;
  const EmulatedWorker *ew = w->data;
  int64_t start = cs_monotonic_ns();
  int64_t ns = cs_model_profile_latency_ns(ew->profile, batch);
  if (ew->share_table >= 0)
    ns = (int64_t)ceil((double)ns * cs_interference_share_slowdown(e->setup->interference,
                                                                    ew->share_table, batch,
                                                                    w->mps_share));
  cs_wait_until_ns(start + ns);
  return TRUE;
}

static void emulated_release(void *state, CsBackendWorker *w)
{
  (void)state;
  g_free(w->data);
  w->data = NULL;
}

static char *emulated_describe(void *state)
{
  (void)state;
  return g_strdup("{\"execution\":\"sleeps for the profiled isolated latency, times the "
                  "latency-vs-share table's slowdown on an MPS share where the scenario's "
                  "interference data has one (no interference between workers, no MIG "
                  "fraction)\"}");
}

/* Sleeping workers take nothing from one another. */
static double emulated_worker_share(void *state, int gpu)
{
  (void)state;
  (void)gpu;
  return 0.0;
}

static void emulated_close(void *state)
{
  g_free(state);
}

const CsBackend cs_backend_emulated = {
  .name = "emulated",
  .description = "sleeps for each batch's profiled latency: the replay's own overhead alone",
  .open = emulated_open,
  .prepare = emulated_prepare,
  .execute = emulated_execute,
  .release = emulated_release,
  .describe = emulated_describe,
  .worker_share = emulated_worker_share,
  .close = emulated_close,
  .runs_shares = TRUE,
};
