/* Fitting the interference model to measured co-locations (docs/gpu-model.md,
 * "Calibration"): the batch_share form of interference.h,
 *
 *   slowdown(v, a) = 1 + c * b_a^x * (4 s_a s_v)^z * max(phi_v, 0.05)^w,
 *
 * (phi_v the victim's fixed part; w = 0 leaves it out), on one group of
 * observations or jointly on several (one per GPU type's data: the share
 * exponent z shared, c, x and w each group's own), and, given that form, a
 * scale on the excess per measured ordered pair.
 * Both by nonlinear least squares (GSL's multifit_nlinear, Levenberg-
 * Marquardt with the analytic Jacobian) on the log of predicted over measured
 * latency, i.e. on relative errors; a measurement pair closed-loop, so the
 * predicted latency is the solo latency times the slowdown. Deterministic;
 * nothing global. */
#ifndef CS_INTERFERENCE_FIT_H
#define CS_INTERFERENCE_FIT_H

#include <glib.h>

G_BEGIN_DECLS

/* One measured latency of a victim next to one aggressor. */
typedef struct {
  int victim, aggressor;   /* model indices (any numbering the caller uses) */
  int batch_v, batch_a;
  double share_v, share_a; /* fractions of the SMs each may occupy, (0, 1] */
  double ratio;            /* measured latency / solo latency at the same batch and share */
  double fixed_v;          /* the victim's phi (CsPairSide.fixed); read only when w != 0 */
  int group;               /* for the joint fit: 0 <= group < its n_groups */
} CsPairObs;

typedef struct {
  int n;                   /* observations used */
  double c, x, z;          /* the fit */
  double w;                /* exponent of the victim's fixed part; cs_fit_batch_share fits
                              none (0); a group of the joint fit may have one */
  double ci[3][2];         /* 95 % intervals of c, x, z (t quantile, n - 3 degrees of freedom,
                              covariance from J^T J scaled by the residual variance) */
  double sigma;            /* residual standard deviation of log(pred / measured) */
  gboolean converged;      /* the solver met its tolerances (else the last iterate) */
} CsBatchShareFit;

/* Fits c, x, z on the observations with use[i] TRUE (use NULL: all). Returns
 * FALSE when fewer than 4 are used or a ratio is not > 0 (out untouched). */
gboolean cs_fit_batch_share(const CsPairObs *obs, int n, const gboolean *use,
                            CsBatchShareFit *out);

/* The joint fit over groups: z shared, each group's c, x, and w where
 * fit_fixed[g] (else w = 0). At most CS_JOINT_MAX_GROUPS groups. */
#define CS_JOINT_MAX_GROUPS 8
typedef struct {
  int n;                   /* observations used */
  int n_groups;
  int n_params;            /* 1 + 2 n_groups + the groups fitting w */
  CsBatchShareFit group[CS_JOINT_MAX_GROUPS]; /* each group's c, x, z (shared), w; their
                              n, ci (of c, x, z) and sigma are the joint fit's, per group
                              only n is the group's own count */
  double w_ci[CS_JOINT_MAX_GROUPS][2]; /* 95 % interval of w (0, 0 when not fitted) */
  double sigma;            /* residual standard deviation of log(pred / measured), all groups */
  gboolean converged;
} CsJointFit;

/* Fits the observations with use[i] TRUE (NULL: all) whose group is in
 * [0, n_groups). Returns FALSE (out untouched) when n_groups is not in
 * [1, CS_JOINT_MAX_GROUPS], a group has fewer than 4 observations, or an
 * observation is invalid (ratio, share or batch not > 0). fit_fixed may be
 * NULL (no group fits w). Deterministic. */
gboolean cs_fit_joint(const CsPairObs *obs, int n, const gboolean *use, int n_groups,
                      const gboolean *fit_fixed, CsJointFit *out);

/* Scale k >= 0 on the excess of fit for the observations with use[i] TRUE
 * (one ordered pair): least squares of log(1 + k e) - log(ratio). Returns
 * NAN when none is used. */
double cs_fit_pair_scale(const CsPairObs *obs, int n, const gboolean *use,
                         const CsBatchShareFit *fit);

/* One measured cell of a share table against the share rule (share_rule.h). */
typedef struct {
  int model;               /* any numbering, for leave-one-out */
  int batch;
  double scalable;         /* f of the model's profile at the batch */
  double share;            /* r, (0, 1) */
  double ratio;            /* measured latency / the profile's latency at the batch */
} CsShareObs;

typedef struct {
  int n;
  double e;                /* the rule's serial part */
  double ci[2];            /* 95 % interval (as CsBatchShareFit's) */
  double sigma;            /* residual standard deviation of log(pred / measured) */
  gboolean converged;
} CsShareFit;

/* Fits e of 1 + (1 - e) f (1/r - 1) to the observations with use[i] TRUE
 * (NULL: all) by least squares of log(pred / measured). Returns FALSE when
 * fewer than 2 are used or a ratio is not > 0 (out untouched). */
gboolean cs_fit_share_serial(const CsShareObs *obs, int n, const gboolean *use, CsShareFit *out);

/* The fit's slowdown for one observation's batch, shares and victim's fixed
 * part (without scale). */
double cs_batch_share_slowdown(const CsBatchShareFit *fit, const CsPairObs *o);

G_END_DECLS

#endif
