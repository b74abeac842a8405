/* What a controller observes (clustersim/control.h, "Observing"): the
 * world, the time, request counts per model, GPU and replica lives. Every
 * service refuses a NULL controller GLib-style. */
#include "control_internal.h"

const CsWorld *cs_control_world(const CsControl *c)
{
  g_return_val_if_fail(c != NULL, NULL);
  return c->e->cfg;
}

int64_t cs_control_now(const CsControl *c)
{
  g_return_val_if_fail(c != NULL, 0);
  return c->e->now;
}

static gboolean model_in_range(const CsControl *c, int model)
{
  return model >= 0 && model < c->e->cfg->n_clients;
}

int64_t cs_control_arrivals(const CsControl *c, int model)
{
  g_return_val_if_fail(c != NULL, 0);
  return model_in_range(c, model) ? c->e->clients[model].generated : 0;
}

int64_t cs_control_good(const CsControl *c, int model)
{
  g_return_val_if_fail(c != NULL, 0);
  return model_in_range(c, model) ? c->e->clients[model].all_good : 0;
}

int64_t cs_control_bad(const CsControl *c, int model)
{
  g_return_val_if_fail(c != NULL, 0);
  return model_in_range(c, model) ? c->e->clients[model].all_bad : 0;
}

int64_t cs_control_gpu_busy_ns(const CsControl *c, int g)
{
  g_return_val_if_fail(c != NULL, 0);
  if (g < 0 || g >= c->e->cfg->n_gpus)
    return 0;
  const Gpu *gpu = &c->e->gpus[g];
  return gpu->busy_ns + (gpu->busy_since >= 0 ? c->e->now - gpu->busy_since : 0);
}

CsGpuLife cs_control_gpu_life(const CsControl *c, int g)
{
  g_return_val_if_fail(c != NULL, CS_GPU_OFF);
  return g >= 0 && g < c->e->cfg->n_gpus ? (CsGpuLife)c->e->gpus[g].life : CS_GPU_OFF;
}

int cs_control_n_replicas(const CsControl *c)
{
  g_return_val_if_fail(c != NULL, 0);
  return (int)c->e->replicas->len;
}

const CsReplica *cs_control_replica(const CsControl *c, int i)
{
  g_return_val_if_fail(c != NULL, NULL);
  return i >= 0 && i < (int)c->e->replicas->len ? replica_of(c->e, i) : NULL;
}

CsReplicaLife cs_control_replica_life(const CsControl *c, int i)
{
  g_return_val_if_fail(c != NULL, CS_REPLICA_RETIRED);
  return i >= 0 && i < (int)c->e->replicas->len ? (CsReplicaLife)life_of(c->e, i)->life
                                                 : CS_REPLICA_RETIRED;
}
