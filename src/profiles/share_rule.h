/* The MPS share rule for models without a latency-vs-share table
 * (docs/gpu-model.md, "The MPS share rule"): a batch capped to a fraction r
 * of the SMs takes
 *
 *   lat(b, r) / lat(b, 1) = 1 + (1 - e) f(b) (1/r - 1)
 *
 * where f(b) is the part of its isolated latency that scales with the SMs,
 * from the model's profile (cs_share_scalable_fraction), and e the part of
 * that work that still does not speed up with more SMs, one constant
 * fitted on the shipped share tables by `clustersim calibrate`. The part
 * 1 - f (the request's copies and the batch-independent part of the
 * latency) does not scale. Never faster as r shrinks, 1 at r = 1, never
 * slower than 1/r. */
#ifndef CS_SHARE_RULE_H
#define CS_SHARE_RULE_H

#include <glib.h>

#include "profiles/profile.h"

G_BEGIN_DECLS

/* iGniter's PCIe constant, bytes per ms host to device (igniter_config). */
#define CS_PCIE_BYTES_PER_MS 1e7

/* e fitted by `clustersim calibrate` on the four iGniter V100 share tables
 * (log least squares over every measured cell below a 100 % share); tests
 * check it equals the fit. */
#define CS_SHARE_RULE_DEFAULT_SERIAL 0.0989

/* f in [0, 1] for a batch of the profile: the per-request slope of the
 * profile's linear model less the request's copies, over the latency at
 * that batch, (alpha - c) b / L(b), c = (input + output bytes) /
 * CS_PCIE_BYTES_PER_MS (0 when the profile gives no payload); clamped.
 * NAN when the profile has no usable line (alpha not finite). */
double cs_share_scalable_fraction(const CsModelProfile *p, int batch);

/* The latency ratio above for f, e in [0, 1] and r in (0, 1] (r >= 1: 1). */
double cs_share_rule_ratio(double f, double e, double r);

G_END_DECLS

#endif
