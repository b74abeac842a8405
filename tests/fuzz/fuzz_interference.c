/* Fuzzes the interference-table loader (cs_interference_set_load_data, with
 * the table completion of docs/gpu-model.md) and every query of
 * interference.h over batch sizes and MPS shares inside and outside the
 * grid. Checks the documented ranges: slowdowns are >= 1 (or NAN without a
 * table), the fallback's slowdown too, and models are found by their names. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "fuzz_common.h"
#include "profiles/interference.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  fuzz_init(*argv);
  return 0;
}

static const int batches[] = { 1, 2, 3, 8, 33, 1000, INT_MAX };
static const double shares[] = { 0, 1e-6, 0.01, 0.1, 0.33, 0.5, 1 };

static void query_model(const CsInterferenceSet *set, int i)
{
  const char *name = cs_interference_set_model_name(set, i);
  int found = cs_interference_set_find(set, name);
  if (found < 0 || strcmp(cs_interference_set_model_name(set, found), name) != 0)
    fuzz_fail("model %d (%s) is not found by its name", i, name);
  gboolean table = cs_interference_has_share_table(set, i);
  for (size_t b = 0; b < G_N_ELEMENTS(batches); b++)
    for (size_t s = 0; s < G_N_ELEMENTS(shares); s++) {
      (void)cs_interference_share_latency_ms(set, i, batches[b], shares[s]);
      double slow = cs_interference_share_slowdown(set, i, batches[b], shares[s]);
      if (table ? !(slow >= 1) : !isnan(slow))
        fuzz_fail("%s: slowdown %g at batch %d, share %g (table: %d)", name, slow, batches[b],
                  shares[s], table);
      for (int m = 0; m < CS_UTIL_N_METRICS; m++)
        (void)cs_interference_util(set, i, (CsUtilMetric)m, batches[b], shares[s]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = fuzz_strndup(data, size);
  GError *error = NULL;
  CsInterferenceSet *set = cs_interference_set_load_data(text, "fuzz.json", &error);
  g_free(text);
  if (!set) {
    fuzz_reject(&error);
    return 0;
  }
  fuzz_accept();
  (void)cs_interference_set_source(set);
  (void)cs_interference_set_description(set);
  (void)cs_interference_set_find(set, "no such model");
  const CsInterferenceFallback *fb = cs_interference_set_fallback(set);
  double utils[] = { 0, 0.5, 1 };
  for (size_t a = 0; a < G_N_ELEMENTS(utils); a++)
    for (size_t b = 0; b < G_N_ELEMENTS(utils); b++) {
      double slow = cs_interference_fallback_eval(fb, utils[a], utils[b]);
      if (!(slow >= 1))
        fuzz_fail("fallback slowdown %g at utilisations %g and %g", slow, utils[a], utils[b]);
    }
  int n = cs_interference_set_n_models(set);
  for (int i = 0; i < n; i++)
    query_model(set, i);
  for (int v = -1; v < n; v++)
    for (int a = -1; a < n; a++)
      (void)cs_interference_pair(set, v, a);
  cs_interference_set_free(set);
  return 0;
}
