/* The compiled scenario as dispatch policies see it: CsWorld, read-only
 * (clustersim/dispatch.h). */
#include "config.h"

int cs_world_n_models(const CsWorld *w)
{
  g_return_val_if_fail(w != NULL, 0);
  return w->n_clients;
}

/* Out-of-range indices get neutral answers rather than a crash: a user's
 * policy reads through these. */
static gboolean model_ok(const CsWorld *w, int m)
{
  g_return_val_if_fail(w != NULL, FALSE);
  return m >= 0 && m < w->n_clients;
}

static gboolean gpu_ok(const CsWorld *w, int g)
{
  g_return_val_if_fail(w != NULL, FALSE);
  return g >= 0 && g < w->n_gpus;
}

const char *cs_world_model_name(const CsWorld *w, int model)
{
  return model_ok(w, model) ? w->clients[model].model : NULL;
}

int64_t cs_world_slo_ns(const CsWorld *w, int model)
{
  return model_ok(w, model) ? w->clients[model].slo_ns : 0;
}

double cs_world_rate_rps(const CsWorld *w, int model)
{
  return model_ok(w, model) ? w->clients[model].rate_rps : 0.0;
}

double cs_world_planned_rate_rps(const CsWorld *w, int model)
{
  return model_ok(w, model) ? w->clients[model].planned_rate_rps : 0.0;
}

int64_t cs_world_input_bytes(const CsWorld *w, int model)
{
  return model_ok(w, model) ? w->clients[model].input_bytes : 0;
}

int64_t cs_world_output_bytes(const CsWorld *w, int model)
{
  return model_ok(w, model) ? w->clients[model].output_bytes : 0;
}

int cs_world_n_gpus(const CsWorld *w)
{
  g_return_val_if_fail(w != NULL, 0);
  return w->n_gpus;
}

const char *cs_world_gpu_type(const CsWorld *w, int gpu)
{
  return gpu_ok(w, gpu) ? w->gpus[gpu].gpu_type : NULL;
}

int cs_world_gpu_node(const CsWorld *w, int gpu)
{
  return gpu_ok(w, gpu) ? w->gpus[gpu].node : -1;
}

const CsProfileSet *cs_world_profiles(const CsWorld *w)
{
  g_return_val_if_fail(w != NULL, NULL);
  return w->profiles;
}

const CsModelProfile *cs_world_profile(const CsWorld *w, int model, int gpu)
{
  if (!model_ok(w, model) || !gpu_ok(w, gpu))
    return NULL;
  return cs_profile_set_lookup(w->profiles, w->gpus[gpu].gpu_type, w->clients[model].model);
}

const CsPlacement *cs_world_placement(const CsWorld *w)
{
  g_return_val_if_fail(w != NULL, NULL);
  return w->placement;
}

int64_t cs_world_network_ns(const CsWorld *w, int64_t bytes)
{
  g_return_val_if_fail(w != NULL, 0);
  return cs_network_curve_latency_ns(w->network, bytes);
}

uint64_t cs_world_seed(const CsWorld *w)
{
  g_return_val_if_fail(w != NULL, 0);
  return w->seed;
}
