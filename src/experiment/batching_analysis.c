/* Analytic batch sizes and throughput bounds; see clustersim.h. */
#include <math.h>

#include "clustersim/clustersim.h"

static CsBatchingBound bound(double alpha_ms, double beta_ms, double budget_ms, int n_gpus)
{
  CsBatchingBound r = { 0, 0.0 };
  if (alpha_ms <= 0 || n_gpus <= 0)
    return r;
  double b = floor((budget_ms - beta_ms) / alpha_ms);
  if (b < 1)
    return r;
  r.batch = (int)b;
  r.throughput_rps = n_gpus * b / ((alpha_ms * b + beta_ms) * 1e-3);
  return r;
}

CsBatchingBound cs_batching_staggered(double alpha_ms, double beta_ms, double slo_ms, int n_gpus)
{
  return bound(alpha_ms, beta_ms, slo_ms / (1.0 + 1.0 / n_gpus), n_gpus);
}

CsBatchingBound cs_batching_uncoordinated(double alpha_ms, double beta_ms, double slo_ms,
                                          int n_gpus)
{
  return bound(alpha_ms, beta_ms, slo_ms / 2.0, n_gpus);
}
