/* Fuzzes the network-curve loader (cs_network_curve_load_data) and the
 * latency of transfers from 0 bytes to the largest payload: network.h
 * promises a latency >= 0 for every size (clamped below, saturating above). */
#include "fuzz_common.h"
#include "profiles/network.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  fuzz_init(*argv);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = fuzz_strndup(data, size);
  GError *error = NULL;
  CsNetworkCurve *curve = cs_network_curve_load_data(text, "fuzz.json", &error);
  g_free(text);
  if (!curve) {
    fuzz_reject(&error);
    return 0;
  }
  fuzz_accept();
  (void)cs_network_curve_source(curve);
  /* Every power of two and its neighbours: segment ends fall anywhere. */
  for (int shift = 0; shift < 63; shift++) {
    int64_t base = (int64_t)1 << shift;
    int64_t sizes[] = { base - 1, base, base + 1, INT64_MAX - base + 1 };
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
      int64_t ns = cs_network_curve_latency_ns(curve, sizes[i]);
      if (ns < 0)
        fuzz_fail("%" G_GINT64_FORMAT " bytes take %" G_GINT64_FORMAT " ns", sizes[i], ns);
    }
  }
  cs_network_curve_free(curve);
  return 0;
}
