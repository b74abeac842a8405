/* The placement as a value: the replicas a placement policy chose and its
 * notes (clustersim/placement.h). The engine runs it and the controller
 * builds new ones (control.c); policies build it through the same functions.
 * It is the engine's so that the engine needs nothing from the policies
 * built on it (docs/architecture.md). */
#include "placement_value.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

CsPlacement *cs_placement_new(int n_models)
{
  CsPlacement *p = g_new0(CsPlacement, 1);
  p->replicas = g_array_new(FALSE, TRUE, sizeof(CsReplica));
  p->n_models = MAX(n_models, 0);
  p->expected_goodput = g_new0(double, MAX(n_models, 1));
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

CsPlacement *cs_placement_copy(const CsPlacement *p)
{
  CsPlacement *c = cs_placement_new(p->n_models);
  g_array_append_vals(c->replicas, p->replicas->data, p->replicas->len);
  memcpy(c->expected_goodput, p->expected_goodput, sizeof(double) * (size_t)p->n_models);
  c->expected_total = p->expected_total;
  g_string_assign(c->log, p->log->str);
  c->creq_metric = p->creq_metric;
  c->gpus_needed = p->gpus_needed;
  return c;
}

void cs_placement_add(CsPlacement *p, int model, int gpu, int batch, double mps_share)
{
  g_return_if_fail(p != NULL);
  CsReplica r = { .model = model, .gpu = gpu, .batch = batch, .mps_share = mps_share };
  g_array_append_val(p->replicas, r);
}

void cs_placement_remove_replica(CsPlacement *p, int i)
{
  g_return_if_fail(p != NULL);
  g_return_if_fail(i >= 0 && i < (int)p->replicas->len);
  g_array_remove_index(p->replicas, (guint)i);
}

void cs_placement_set_expected_goodput(CsPlacement *p, int model, double rps)
{
  g_return_if_fail(p != NULL);
  g_return_if_fail(model >= 0 && model < p->n_models);
  p->expected_goodput[model] = rps;
  /* In model order from 0, so that every reader sums the same way. */
  double total = 0.0;
  for (int m = 0; m < p->n_models; m++)
    total += p->expected_goodput[m];
  p->expected_total = total;
}

void cs_placement_log(CsPlacement *p, const char *fmt, ...)
{
  g_return_if_fail(p != NULL);
  va_list ap;
  va_start(ap, fmt);
  g_string_append_vprintf(p->log, fmt, ap);
  va_end(ap);
}

void cs_placement_set_creq_metric(CsPlacement *p, CsCreqMetric metric)
{
  g_return_if_fail(p != NULL);
  p->creq_metric = (int)metric;
}

void cs_placement_set_gpus_needed(CsPlacement *p, int gpus)
{
  g_return_if_fail(p != NULL);
  p->gpus_needed = gpus;
}

int cs_placement_n_models(const CsPlacement *p)
{
  g_return_val_if_fail(p != NULL, 0);
  return p->n_models;
}

int cs_placement_n_replicas(const CsPlacement *p)
{
  g_return_val_if_fail(p != NULL, 0);
  return (int)p->replicas->len;
}

const CsReplica *cs_placement_replica(const CsPlacement *p, int i)
{
  g_return_val_if_fail(p != NULL, NULL);
  return i >= 0 && i < (int)p->replicas->len ? &g_array_index(p->replicas, CsReplica, i) : NULL;
}

double cs_placement_expected_goodput(const CsPlacement *p, int model)
{
  g_return_val_if_fail(p != NULL, NAN);
  return model >= 0 && model < p->n_models ? p->expected_goodput[model] : NAN;
}

double cs_placement_expected_total(const CsPlacement *p)
{
  g_return_val_if_fail(p != NULL, NAN);
  return p->expected_total;
}

const char *cs_placement_log_text(const CsPlacement *p)
{
  g_return_val_if_fail(p != NULL, NULL);
  return p->log->str;
}

int cs_placement_creq_metric(const CsPlacement *p)
{
  g_return_val_if_fail(p != NULL, -1);
  return p->creq_metric;
}

int cs_placement_gpus_needed(const CsPlacement *p)
{
  g_return_val_if_fail(p != NULL, -1);
  return p->gpus_needed;
}
