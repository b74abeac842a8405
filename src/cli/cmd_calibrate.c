/* clustersim calibrate [--interference F] [--experiments F] [--profile F] [--gamma G]
 * clustersim calibrate --measured FILE.csv ... --profile NAME [--json] (cmd_calibrate_measured.c) */
#include <stdio.h>

#include "cli.h"
#include "cmd_calibrate.h"
#include "calibrate/calibrate.h"
#include "calibrate/calibrate_joint.h"
#include "common/data_files.h"

/* A file given on the command line as is, else the named file in the first
 * data directory that has it. */
static char *data_file(const char *given, const char *name)
{
  if (given)
    return g_strdup(given);
  char *found = cs_data_file_find("profiles", name);
  return found ? found : g_build_filename("data", "profiles", name, NULL);
}

/* The named file of data/measured in the first data directory that has it. */
static char *measured_file(const char *name)
{
  char *found = cs_data_file_find("measured", name);
  return found ? found : g_build_filename("data", "measured", name, NULL);
}

int cmd_calibrate(int argc, char **argv)
{
  const char *prog = "clustersim calibrate";
  char *interference = NULL, *experiments = NULL, *profile = NULL, *share_profile = NULL,
       *share_gpu = NULL, *points = NULL, *gpu_type = NULL, *mig = NULL;
  char **measured = NULL, **share_measured = NULL;
  gboolean json = FALSE;
  double gamma = 1.0;
  GOptionEntry entries[] = {
    { "interference", 0, 0, G_OPTION_ARG_FILENAME, &interference, "Interference tables (default: igniter_v100.json from the data directory)", "FILE" },
    { "experiments", 0, 0, G_OPTION_ARG_FILENAME, &experiments, "Measured co-location experiments (default: gpu_calibration.json)", "FILE" },
    { "profile", 0, 0, G_OPTION_ARG_FILENAME, &profile, "Profile for experiments that need one (default: v100_thesis.json)", "FILE" },
    { "share-profile", 0, 0, G_OPTION_ARG_FILENAME, &share_profile, "Profile of the share tables' models, for the MPS share rule's check (default: igniter_v100_profile.json)", "FILE" },
    { "share-gpu-type", 0, 0, G_OPTION_ARG_STRING, &share_gpu, "Their GPU type in it (default: v100_igniter)", "T" },
    { "share-measured", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &share_measured, "Measured CSV whose rows alone at MPS shares check the share rule as one more source (repeatable; default: gpulet_a100_isolated.csv and rapp_v100_sm_share.csv from the data directory)", "FILE" },
    { "mig", 0, 0, G_OPTION_ARG_FILENAME, &mig, "MIG tables for the MIG rule's check (default: a100_parvagpu_mig.json)", "FILE" },
    { "points", 0, 0, G_OPTION_ARG_FILENAME, &points, "Also write every measured pair latency with what each variant simulates for it, as CSV (tools/plot_calibration.py draws them)", "FILE" },
    { "measured", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &measured, "Score the GPU model on the co-located rows of this measured CSV instead (docs/gpu-model.md, \"Scoring measured rows\"; repeatable; needs --profile)", "FILE.csv" },
    { "gpu-type", 0, 0, G_OPTION_ARG_STRING, &gpu_type, "With --measured: the GPU type of the profile (default: its only one, or the GPU type --profile names)", "T" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "With --measured: print the report as a JSON object", NULL },
    { "gamma", 0, 0, G_OPTION_ARG_DOUBLE, &gamma, "Exponent of the power share rule (r/d)^gamma, for comparison (default 1.0)", "G" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("- the GPU model against measured co-location");
  g_option_context_set_summary(ctx,
    "Runs the measured co-location experiments (iGniter's V100 pairs, the iGniter README example,\n"
    "the thesis' points) through the simulator's GPU model and prints, per model pair and per\n"
    "model, the median and 90th percentile of |sim - real| / real: as loaded, with the\n"
    "interference model alone, without interference, leaving each pair (and each model) out of\n"
    "the model's fit; and the fit itself (GSL nonlinear least squares) with 95 % intervals;\n"
    "then the MPS share rule for models without a share table against the shipped share\n"
    "tables, leaving one model out of its fit; and the MIG rule for instances without a\n"
    "measurement against the measured MIG tables, likewise; last the interference model\n"
    "fitted on the shipped pairs of every GPU type at once (the coefficients the shipped files\n"
    "carry), scored leaving each pair, each model and each GPU type out.\n"
    "With --measured FILE.csv (repeatable) --profile NAME: predicts every co-located row of the\n"
    "files with the GPU model instead and reports the errors per source, per ordered pair and\n"
    "in total, beside the baselines; --profile takes a file, a shipped profile's name or a GPU\n"
    "type, its interference file is found beside it unless --interference names one.\n"
    "docs/gpu-model.md explains the figures.");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  int status = 0;
  char *ipath = NULL, *epath = NULL, *ppath = NULL, *spath = NULL, *mpath = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (argc != 1) {
    status = cli_fail(prog, "takes no positional argument (see --help)");
    goto out;
  }
  /* The range of a scenario's cluster.mps_gamma: a huge exponent makes the
   * MPS cap (r/d)^gamma 0, and a batch that never progresses hung the run. */
  if (!(gamma >= 0.01 && gamma <= 100)) {
    status = cli_fail(prog, "--gamma: expected a number in [0.01, 100], as cluster.mps_gamma");
    goto out;
  }
  if (measured) {
    if (experiments || share_profile || share_gpu || points || share_measured || mig) {
      status = cli_fail(prog, "--measured scores measured rows: --experiments, --share-profile, "
                        "--share-gpu-type, --share-measured, --mig and --points belong to the "
                        "other report");
      goto out;
    }
    CalibrateMeasuredArgs a = { .measured = measured, .profile = profile, .gpu_type = gpu_type,
                                .interference = interference, .gamma = gamma, .json = json };
    status = cmd_calibrate_measured(&a);
    goto out;
  }
  if (json || gpu_type) {
    status = cli_fail(prog, json ? "--json: only with --measured" : "--gpu-type: only with --measured");
    goto out;
  }
  ipath = data_file(interference, "igniter_v100.json");
  epath = data_file(experiments, "gpu_calibration.json");
  ppath = data_file(profile, "v100_thesis.json");
  spath = data_file(share_profile, "igniter_v100_profile.json");
  mpath = data_file(mig, "a100_parvagpu_mig.json");
  if (!share_measured) {
    share_measured = g_new0(char *, 3);
    share_measured[0] = measured_file("gpulet_a100_isolated.csv");
    share_measured[1] = measured_file("rapp_v100_sm_share.csv");
  }
  CsGpuCalibrateOptions opt = { .interference_path = ipath, .calibration_path = epath,
                                .profile_path = ppath, .gamma = gamma,
                                .share_profile_path = spath,
                                .share_gpu_type = share_gpu ? share_gpu : "v100_igniter",
                                .mig_path = mpath,
                                .share_measured_paths = (const char *const *)share_measured };
  CsGpuCalibration *c = cs_gpu_calibrate(&opt, &err);
  if (!c) {
    status = cli_fail("clustersim", err->message);
    goto out;
  }
  if (points && !cs_gpu_calibration_write_points(c, points, &err)) {
    char *msg = g_strdup_printf("--points: %s", err->message);
    status = cli_fail(prog, msg);
    g_free(msg);
  } else {
    cs_gpu_calibration_print(c, &opt, stdout);
    CsJointCalibration *joint = cs_joint_calibrate_shipped(&err);
    if (joint) {
      fputc('\n', stdout);
      cs_joint_calibration_print(joint, stdout);
      cs_joint_calibration_free(joint);
    } else
      status = cli_fail("clustersim", err->message);
  }
  cs_gpu_calibration_free(c);
out:
  g_clear_error(&err);
  g_free(ipath);
  g_free(epath);
  g_free(ppath);
  g_free(spath);
  g_free(mpath);
  g_strfreev(share_measured);
  g_free(mig);
  g_free(share_profile);
  g_free(share_gpu);
  g_free(points);
  g_free(interference);
  g_free(experiments);
  g_free(profile);
  g_free(gpu_type);
  g_strfreev(measured);
  g_option_context_free(ctx);
  return status;
}
