/* Fuzzes values, not only syntax: every scenario that validates and asks for
 * little work (fuzz_common.c: at most 2000 expected requests on at most 16
 * GPUs) is simulated with observers that check every request, batch and GPU
 * state against docs/scenario.md, and its effective scenario is run again to
 * check it reproduces the results. Files resolve as in fuzz_scenario. */
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
  if (fuzz_validation_cheap(sc) && fuzz_run_checked(sc))
    fuzz_accept();
  cs_scenario_free(sc);
  return 0;
}
