/* The joint fit section of `clustersim calibrate`: the interference model
 * fitted on the shipped pair measurements of every GPU type at once
 * (profiles/calibrate_joint.h), from the data directory. */
#include <stdio.h>

#include "cli.h"
#include "cmd_calibrate.h"
#include "common/data_files.h"
#include "profiles/calibrate_joint.h"

/* The shipped measurements, one group per GPU type: its pair rows, the
 * profile its victims' fixed parts come from, and whether its victim term
 * is fitted (the choice each group's "victim term switched" column
 * justifies: on Gpulet's A100 rows it is what carries to unseen pairs, on
 * iGniter's V100 rows it makes unseen pairs worse). */
static const struct {
  const char *gpu_type, *pairs, *profile;
  gboolean fit_fixed;
} shipped[] = {
  { "a100_gpulet", "gpulet_a100_pairs.csv", "a100_gpulet.json", TRUE },
  { "v100_igniter", "igniter_v100_pairs.csv", "igniter_v100_profile.json", FALSE },
};
#define N_SHIPPED ((int)G_N_ELEMENTS(shipped))

static char *find(const char *dir, const char *name)
{
  char *found = cs_data_file_find(dir, name);
  return found ? found : g_build_filename("data", dir, name, NULL);
}

CsJointCalibration *calibrate_joint_shipped(GError **error)
{
  CsMeasuredFile *files[N_SHIPPED] = { NULL };
  CsProfileSet *profiles[N_SHIPPED] = { NULL };
  const CsMeasuredFile *one[N_SHIPPED][1];
  CsJointGroupSpec groups[N_SHIPPED];
  CsJointCalibration *c = NULL;
  gboolean ok = TRUE;
  for (int g = 0; ok && g < N_SHIPPED; g++) {
    char *pairs = find("measured", shipped[g].pairs);
    char *profile = find("profiles", shipped[g].profile);
    files[g] = cs_measured_file_load(pairs, error);
    profiles[g] = cs_profile_set_new();
    ok = files[g] && cs_profile_set_load_file(profiles[g], profile, error);
    g_free(pairs);
    g_free(profile);
    if (!ok)
      break;
    one[g][0] = files[g];
    groups[g] = (CsJointGroupSpec){ shipped[g].gpu_type, one[g], 1, profiles[g],
                                    shipped[g].gpu_type, shipped[g].fit_fixed };
  }
  if (ok)
    c = cs_joint_calibrate(groups, N_SHIPPED, error);
  for (int g = 0; g < N_SHIPPED; g++) {
    cs_measured_file_free(files[g]);
    cs_profile_set_free(profiles[g]);
  }
  return c;
}
