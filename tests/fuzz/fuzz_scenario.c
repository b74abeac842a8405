/* Fuzzes the scenario loader: any JSON text as a scenario file resolved
 * against tests/fuzz/files, so that the profile, network-curve,
 * interference and trace files it names load too (bare names from data/).
 * Checks the effective scenario: it validates, and is a fixed point (its own
 * effective scenario is the same text), as clustersim.h promises. Nothing is
 * simulated here (fuzz_simulate does that). */
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  fuzz_init(*argv);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  CsScenario *sc = fuzz_load_scenario(data, size);
  if (!sc)
    return 0;
  g_free(cs_scenario_to_json(sc));
  if (!fuzz_validation_cheap(sc)) {
    cs_scenario_free(sc);
    return 0;
  }
  GError *error = NULL;
  char *eff = cs_scenario_effective_json(sc, NULL, &error);
  if (!eff) {
    fuzz_reject(&error);
    cs_scenario_free(sc);
    return 0;
  }
  (void)cs_scenario_requests_csv_wanted(sc);
  CsScenario *again = cs_scenario_new_from_json(eff, "effective.json", "/", &error);
  if (!again)
    fuzz_fail("effective scenario does not parse: %s\n%s", error->message, eff);
  char *eff2 = cs_scenario_effective_json(again, NULL, &error);
  if (!eff2)
    fuzz_fail("effective scenario is invalid: %s\n%s", error->message, eff);
  if (strcmp(eff, eff2) != 0)
    fuzz_fail("effective scenario is not a fixed point:\n%s\n---\n%s", eff, eff2);
  fuzz_accept();
  g_free(eff);
  g_free(eff2);
  cs_scenario_free(again);
  cs_scenario_free(sc);
  return 0;
}
