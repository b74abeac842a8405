/* "emulated": a batch takes exactly its profiled isolated latency on its
 * GPU's type, spent asleep (as nexuslb's emulated GPUs do). No interference,
 * no MPS cap, no MIG fraction: a replay on it measures the replay's own
 * scheduling overhead and nothing of the hardware. The last 150 us of each
 * sleep are spun (cs_wait_until_ns): a plain sleep ends 50-70 us late here. */
#include <string.h>

#include "backends.h"

typedef struct {
  const CsBackendSetup *setup;
} Emulated;

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
                "backend \"emulated\": no profile of %s on GPU type %s", model, type);
    return FALSE;
  }
  w->data = (void *)p;
  return TRUE;
}

static gboolean emulated_execute(void *state, CsBackendWorker *w, int batch, GError **error)
{
  (void)state;
  (void)error;
  int64_t start = cs_monotonic_ns();
  cs_wait_until_ns(start + cs_model_profile_latency_ns(w->data, batch));
  return TRUE;
}

static char *emulated_describe(void *state)
{
  (void)state;
  return g_strdup("{\"execution\":\"sleeps for the profiled isolated latency (no interference, "
                  "no MPS cap, no MIG fraction)\"}");
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
  .describe = emulated_describe,
  .worker_share = emulated_worker_share,
  .close = emulated_close,
};
