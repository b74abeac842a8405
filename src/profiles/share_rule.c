/* The MPS share rule; see share_rule.h. */
#include "profiles/share_rule.h"

#include <math.h>

double cs_share_scalable_fraction(const CsModelProfile *p, int batch)
{
  g_return_val_if_fail(p != NULL && batch >= 1, NAN);
  if (!isfinite(p->alpha_ns))
    return NAN;
  double copy_ns = ((double)MAX(p->input_bytes, 0) + (double)MAX(p->output_bytes, 0)) /
                   CS_PCIE_BYTES_PER_MS * 1e6;
  double f = (p->alpha_ns - copy_ns) * batch / (double)cs_model_profile_latency_ns(p, batch);
  return CLAMP(f, 0.0, 1.0);
}

double cs_share_rule_ratio(double f, double e, double r)
{
  if (!(r < 1.0))
    return 1.0;
  if (!(f >= 0.0)) /* unknown: all of it scales */
    f = 1.0;
  return 1.0 + (1.0 - CLAMP(e, 0.0, 1.0)) * CLAMP(f, 0.0, 1.0) * (1.0 / r - 1.0);
}
