/* Using libclustersim from C: build a scenario in code, run it, read results.
 *
 *   cc library_example.c $(pkg-config --cflags --libs clustersim) -o example
 *   ./example PROFILE.json
 *
 * Sweeps the router's MAX_WAIT_TIME for resnet50 on one V100 and prints the
 * goodput of each run. Exit status 0 on success, 2 on a bad profile path. */
#include <stdio.h>

#include <clustersim/clustersim.h>

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: %s PROFILE.json\n", argv[0]);
    return 2;
  }
  const double max_wait_ms[] = { 5, 25, 100 };
  printf("%-12s %12s %12s %10s\n", "max_wait_ms", "goodput_rps", "p99_ms", "mean_batch");
  for (int i = 0; i < 3; i++) {
    CsScenario *sc = cs_scenario_new("library_example", NULL);
    GError *err = NULL;
    char wait[32];
    snprintf(wait, sizeof wait, "%g", max_wait_ms[i]);
    /* Values are JSON text; bare words are taken as strings. */
    const char *fields[][2] = {
      { "seed", "1" },
      { "profiles[0]", argv[1] },
      { "cluster.gpus", "1" },
      { "cluster.gpu_type", "v100" },
      { "dispatch.max_wait_ms", wait },
      { "placement.policy", "manual" },
      { "placement.replicas[0]", "{\"model\": \"resnet50\", \"gpu\": 0, \"batch\": 16}" },
      { "clients[0]", "{\"model\": \"resnet50\", \"rate\": 400, \"slo_ms\": 100, \"duration_s\": 20}" },
    };
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
      if (!cs_scenario_set(sc, fields[f][0], fields[f][1], &err))
        break;
    CsResults *res = err ? NULL : cs_run(sc, NULL, &err);
    if (!res) {
      fprintf(stderr, "%s\n", err->message);
      g_error_free(err);
      cs_scenario_free(sc);
      return 2;
    }
    const CsModelResult *m = cs_results_model(res, 0);
    printf("%-12g %12.1f %12.2f %10.2f\n", max_wait_ms[i], m->goodput_rps, m->latency.p99,
           m->mean_batch);
    cs_results_free(res);
    cs_scenario_free(sc);
  }
  return 0;
}
