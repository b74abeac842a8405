/* Placement records shared by every policy. */
#include "placement.h"

G_DEFINE_QUARK(cs-placement-error-quark, cs_placement_error)

CsPlacement *cs_placement_new(int n_models)
{
  CsPlacement *p = g_new0(CsPlacement, 1);
  p->replicas = g_array_new(FALSE, TRUE, sizeof(CsReplica));
  p->expected_goodput = g_new0(double, n_models > 0 ? n_models : 1);
  p->log = g_string_new(NULL);
  p->creq_metric = -1;
  p->gpus_needed = -1;
  return p;
}

void cs_placement_free(CsPlacement *p)
{
  if (!p)
    return;
  g_array_unref(p->replicas);
  g_free(p->expected_goodput);
  g_string_free(p->log, TRUE);
  g_free(p);
}

void cs_placement_add(CsPlacement *p, int model, int gpu, int batch, double mps_share)
{
  CsReplica r = { .model = model, .gpu = gpu, .batch = batch, .mps_share = mps_share };
  g_array_append_val(p->replicas, r);
}
