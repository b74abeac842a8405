/* clustersim: the command-line front end of libclustersim.
 *
 * Exit status: 0 on success, 2 on bad input (scenario, profile, flags) with a
 * message naming the file, the JSON path and what was expected; nothing is
 * written when a command fails. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *const usage_text =
  "Usage: clustersim COMMAND [OPTIONS]\n"
  "\n"
  "Deterministic discrete-event simulator of ML inference scheduling on GPU clusters.\n"
  "\n"
  "Commands:\n"
  "  run SCENARIO      simulate a scenario file, print the per-model table, write results\n"
  "  place SCENARIO    compute and print the placement (--list: the policies)\n"
  "  search SCENARIO   find the highest load served within the SLO (goodput search)\n"
  "  provision SCENARIO --types T1,T2  the fewest GPUs and the cheapest mix of GPU types\n"
  "                    that serve the scenario's load within the SLO\n"
  "  sweep EXPERIMENT  run a grid of variants x axes x seeds; mean and 95 % CI per point\n"
  "                    (sweep merge: combine --shard outputs; sweep plot DIR: redraw figures)\n"
  "  replay DECISIONS --backend NAME  play a run's decisions (run --decisions) back in real\n"
  "                    time on an execution backend (emulated, cpu, cuda) and measure them\n"
  "  validate SCENARIO --backend NAME  profile the backend, simulate, replay, report\n"
  "                    real against simulated (per batch, per model, figures)\n"
  "  plot RUNDIR       draw a run's figures (latency CDF, stages, GPUs busy, placement,\n"
  "                    batch sizes); plot --compare RUNDIR... -o OUTDIR: runs side by side\n"
  "  trace inspect FILE  statistics of an Azure trace file (MAF 2019/2021, Azure LLM)\n"
  "  calibrate         the GPU model against measured co-location (error per model pair);\n"
  "                    --measured FILE.csv --profile NAME: on any measured rows\n"
  "  profile list      the profile files found: GPU types, models, source (--json)\n"
  "  profile show NAME  a profile file, model or GPU type: batch sizes, latency, SLO, and\n"
  "                    which of Creq, Mreq, interference, iGniter inputs it has (--json)\n"
  "  profile import FILE.csv... -o OUT.json  measured rows (docs/profiles.md) to a profile,\n"
  "                    share tables and measured pairs (--interference OUT2.json)\n"
  "  derive-igniter    write iGniter's measurements derived from the simulator's GPU model\n"
  "  policies [NAME]   the placement, dispatch and controller policies and their parameters\n"
  "  llm run CONFIG    LLM replicas token by token (vLLM, Sarathi-Serve, ...): TTFT, TBT\n"
  "  llm search CONFIG the highest rate under TTFT/TBT SLOs; the cheapest deployment\n"
  "\n"
  "Options:\n"
  "  -h, --help        show this help (COMMAND --help for a command's options)\n"
  "  --version         print the version\n"
  "  --plugin FILE.so  load a plug-in's policies, for every command (repeatable; also\n"
  "                    CLUSTERSIM_PLUGINS=A.so:B.so and \"plugins\" in a scenario or\n"
  "                    experiment; docs/extending.md). A plug-in is code: trust it first\n";

int main(int argc, char **argv)
{
  int plugins = cli_plugins_setup(&argc, &argv); /* --plugin: global, taken out of argv */
  if (plugins != 0)
    return plugins;
  if (argc < 2) {
    fputs(usage_text, stderr);
    return EXIT_BAD_INPUT;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    fputs(usage_text, stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("clustersim %s\n", cs_version());
    return 0;
  }
  if (strcmp(cmd, "run") == 0)
    return cmd_run(argc - 1, argv + 1);
  if (strcmp(cmd, "place") == 0)
    return cmd_place(argc - 1, argv + 1);
  if (strcmp(cmd, "search") == 0)
    return cmd_search(argc - 1, argv + 1);
  if (strcmp(cmd, "provision") == 0)
    return cmd_provision(argc - 1, argv + 1);
  if (strcmp(cmd, "sweep") == 0)
    return cmd_sweep(argc - 1, argv + 1);
  if (strcmp(cmd, "replay") == 0)
    return cmd_replay(argc - 1, argv + 1);
  if (strcmp(cmd, "validate") == 0)
    return cmd_validate(argc - 1, argv + 1);
  if (strcmp(cmd, "plot") == 0)
    return cmd_plot(argc - 1, argv + 1);
  if (strcmp(cmd, "trace") == 0)
    return cmd_trace(argc - 1, argv + 1);
  if (strcmp(cmd, "calibrate") == 0)
    return cmd_calibrate(argc - 1, argv + 1);
  if (strcmp(cmd, "profile") == 0)
    return cmd_profile(argc - 1, argv + 1);
  if (strcmp(cmd, "policies") == 0)
    return cmd_policies(argc - 1, argv + 1);
  if (strcmp(cmd, "llm") == 0)
    return cmd_llm(argc - 1, argv + 1);
  if (strcmp(cmd, "derive-igniter") == 0)
    return cmd_derive(argc - 1, argv + 1);
  fprintf(stderr, "clustersim: unknown command \"%s\"\n\n%s", cmd, usage_text);
  return EXIT_BAD_INPUT;
}
