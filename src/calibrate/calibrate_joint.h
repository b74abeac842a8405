/* The interference model fitted on the measured pairs of several GPU types
 * at once (docs/gpu-model.md, "One model for every GPU type").
 *
 * Each group is one GPU type's measurements: co-located rows of measured
 * files (measured.h) with one partner each, the victim's and the partner's
 * MPS shares and the victim's isolated latency at its batch and share, and
 * the profile that gives each victim's fixed part phi (share_rule.h). The
 * joint fit (interference_fit.h) shares the share exponent z and gives each
 * group its own c, x and, where the group asks for it, the victim term's w.
 *
 * Scored only on what a fit did not see (the error of one latency is
 * |predicted - measured| / measured, predicted = the isolated latency times
 * the fitted slowdown, which is what the simulator gives two closed-loop
 * workers whose shares add up to the GPU):
 *   lopo   each unordered model pair of a group left out of the joint fit
 *          (every other row of every group kept), predicting its rows;
 *   toggle the same with the group's victim term switched (fitted where the
 *          group has none, none where it has one): the evidence for the
 *          choice;
 *   lomo   each model of a group left out (every row it is in, on either
 *          side), predicting its rows as the victim;
 *   logo   the group left out whole: one set of coefficients (c, x, z, w)
 *          fitted on the other groups pooled, as for a GPU type whose pairs
 *          were never measured;
 * and, for reference only, in sample (the joint fit on everything). Given
 * the joint fit, a scale on its excess is fitted per measured ordered pair
 * (what an interference file's pairs[] carry).
 * Deterministic; nothing global. */
#ifndef CS_CALIBRATE_JOINT_H
#define CS_CALIBRATE_JOINT_H

#include <glib.h>
#include <stdio.h>

#include "calibrate/calibrate.h"
#include "profiles/interference_fit.h"
#include "profiles/measured.h"
#include "profiles/profile.h"

G_BEGIN_DECLS

typedef struct {
  const char *name;                     /* the group, e.g. its GPU type; printed */
  const CsMeasuredFile *const *files;   /* its measured rows; rows that are not one-partner
                                           co-locations with both shares are skipped */
  int n_files;
  const CsProfileSet *profiles;         /* required: a profile of every victim ... */
  const char *gpu_type;                 /* ... on this GPU type, for phi */
  gboolean fit_fixed;                   /* fit the victim term's w for this group */
} CsJointGroupSpec;

#define CS_JOINT_MAX_PAIRS 32
#define CS_JOINT_MAX_MODELS 32

typedef struct {
  char *name;
  gboolean fit_fixed;
  int n_rows;                           /* rows fitted */
  int n_skipped;                        /* rows of its files not fitted (isolated, MIG,
                                           several partners, a share missing) */
  int n_pairs;
  char *pair_names[CS_JOINT_MAX_PAIRS]; /* "m1+m2", sorted */
  CsCalibStat lopo_pair[CS_JOINT_MAX_PAIRS];
  int n_models;
  char *model_names[CS_JOINT_MAX_MODELS]; /* models of its pairs, sorted */
  CsCalibStat lomo_model[CS_JOINT_MAX_MODELS]; /* n = 0 for a model never the victim */
  CsCalibStat lopo, toggle, lomo, logo, in_sample;
  int n_scales;                         /* measured ordered pairs */
  char *scale_victim[CS_JOINT_MAX_PAIRS * 2], *scale_aggressor[CS_JOINT_MAX_PAIRS * 2];
  double scale[CS_JOINT_MAX_PAIRS * 2]; /* on the joint fit's excess (cs_fit_pair_scale), the
                                           pair table of an interference file */
  int scale_samples[CS_JOINT_MAX_PAIRS * 2];
  CsBatchShareFit logo_fit;             /* the pooled fit of the other groups */
} CsJointGroupResult;

typedef struct {
  int n_groups;
  CsJointGroupResult group[CS_JOINT_MAX_GROUPS];
  CsJointFit fit;                       /* on every row of every group */
} CsJointCalibration;

/* Builds the observations of every group and runs the fits above. Returns
 * NULL with error set (CS_INPUT_ERROR, naming the file and line) when a
 * victim has no profile on its group's GPU type, a fitted row has no
 * isolated latency, a group has no row to fit, there are more groups,
 * pairs or models than the limits above, or a fit fails. */
CsJointCalibration *cs_joint_calibrate(const CsJointGroupSpec *groups, int n_groups,
                                       GError **error);
void cs_joint_calibration_free(CsJointCalibration *c); /* accepts NULL */

/* The joint fit over the shipped measurements of every GPU type, read from
 * the data directories (data_files.h): Gpulet's A100 pairs
 * (measured/gpulet_a100_pairs.csv, profile a100_gpulet.json, victim term
 * fitted) and iGniter's V100 pairs (measured/igniter_v100_pairs.csv,
 * profile igniter_v100_profile.json, none). NULL with error set when a file
 * is missing or bad. */
CsJointCalibration *cs_joint_calibrate_shipped(GError **error);

/* The report as text: the joint fit with its 95 % intervals, then per group
 * the scores above, per pair and per model. */
void cs_joint_calibration_print(const CsJointCalibration *c, FILE *out);

G_END_DECLS

#endif
