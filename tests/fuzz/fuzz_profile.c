/* Fuzzes the profile loader (cs_profile_set_load_data) and every query of
 * profiles.h on what it accepted. Checks what profiles.h promises: a failed
 * load leaves the set unchanged, loading the same file again fails as a
 * duplicate, and every batch size >= 1 has a latency >= 1 ns. */
#include <limits.h>

#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  fuzz_init(*argv);
  return 0;
}

static void query(const CsModelProfile *p)
{
  (void)cs_model_profile_slo_ms(p);
  (void)cs_model_profile_input_bytes(p);
  (void)cs_model_profile_output_bytes(p);
  (void)cs_model_profile_source(p);
  (void)cs_model_profile_linear(p, NULL, NULL);
  int batches[] = { 1, 2, 3, 7, 64, 1000, 1 << 20, INT_MAX, 0 };
  int n = cs_model_profile_n_points(p);
  for (int i = -1; i < n + (int)G_N_ELEMENTS(batches); i++) {
    int b;
    if (i < 0)
      b = 1;
    else if (i < n)
      b = cs_model_profile_point_at(p, i)->batch;
    else
      b = batches[i - n];
    if (b < 1)
      continue;
    int64_t lat = cs_model_profile_latency_ns(p, b);
    if (lat < 1)
      fuzz_fail("%s on %s: latency of batch %d is %" G_GINT64_FORMAT " ns",
                cs_model_profile_model(p), cs_model_profile_gpu_type(p), b, lat);
    (void)cs_model_profile_throughput_rps(p, b);
    (void)cs_model_profile_exec_ns(p, b);
    (void)cs_model_profile_point(p, b);
    (void)cs_model_profile_nearest_point(p, b);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = fuzz_strndup(data, size);
  CsProfileSet *set = cs_profile_set_new();
  GError *error = NULL;
  if (!cs_profile_set_load_data(set, text, "fuzz.json", &error)) {
    fuzz_reject(&error);
    if (cs_profile_set_n_models(set) != 0 || cs_profile_set_n_gpu_types(set) != 0)
      fuzz_fail("a failed load left %d models and %d GPU types in the set",
                cs_profile_set_n_models(set), cs_profile_set_n_gpu_types(set));
    cs_profile_set_free(set);
    g_free(text);
    return 0;
  }
  fuzz_accept();
  int n_models = cs_profile_set_n_models(set), n_types = cs_profile_set_n_gpu_types(set);
  for (int i = 0; i < n_types; i++) {
    const CsGpuType *t = cs_profile_set_gpu_type_at(set, i);
    if (cs_profile_set_gpu_type(set, cs_gpu_type_name(t)) != t)
      fuzz_fail("GPU type %s is not found by its name", cs_gpu_type_name(t));
    (void)cs_gpu_type_description(t);
    (void)cs_gpu_type_sm_count(t);
    (void)cs_gpu_type_memory_bytes(t);
  }
  for (int i = 0; i < n_models; i++) {
    const CsModelProfile *p = cs_profile_set_model(set, i);
    if (cs_profile_set_lookup(set, cs_model_profile_gpu_type(p), cs_model_profile_model(p)) != p)
      fuzz_fail("%s on %s is not found by its names", cs_model_profile_model(p),
                cs_model_profile_gpu_type(p));
    query(p);
  }
  if (n_models + n_types > 0) {
    if (cs_profile_set_load_data(set, text, "again.json", &error))
      fuzz_fail("the same profile file loaded twice");
    fuzz_reject(&error);
    if (cs_profile_set_n_models(set) != n_models || cs_profile_set_n_gpu_types(set) != n_types)
      fuzz_fail("a failed load changed the set");
  }
  cs_profile_set_free(set);
  g_free(text);
  return 0;
}
