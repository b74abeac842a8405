/* Fuzzes --set and --unset (cs_scenario_set, the typed setters and
 * cs_scenario_unset) on a fixed valid scenario. Each input line is one
 * override, as the CLI takes them:
 *   PATH=VALUE            cs_scenario_set (VALUE is JSON text or a bare word)
 *   unset PATH            cs_scenario_unset
 *   int|double|string|bool PATH=VALUE   the typed setter, VALUE parsed by C
 * Then the scenario is validated, and run with every check of
 * fuzz_run_checked when its work stays small. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

/* Touches every kind of field: files, cluster, dispatch and placement
 * parameters, both client kinds (duration and requests) and outputs. */
static const char base_scenario[] =
  "{\"name\": \"fuzz --set base\", \"seed\": 1, \"profiles\": [\"v100_thesis\"],"
  " \"network\": {\"curve\": \"gcp_n1_standard_16\"},"
  " \"cluster\": {\"gpus\": 3, \"gpu_type\": \"v100\"},"
  " \"dispatch\": {\"policy\": \"router\", \"max_wait_ms\": 100},"
  " \"placement\": {\"policy\": \"dedicated\"},"
  " \"clients\": ["
  "  {\"model\": \"resnet50\", \"rate\": 100, \"slo_ms\": 200, \"arrival\": \"poisson\","
  "   \"duration_s\": 2, \"warmup_s\": 1},"
  "  {\"model\": \"alexnet\", \"rate\": 200, \"slo_ms\": 100,"
  "   \"arrival\": {\"process\": \"gamma\", \"cv\": 2}, \"requests\": 50}],"
  " \"outputs\": {\"timeseries_bin_s\": 1}}";

/* More overrides add nothing a shorter input cannot reach. */
#define MAX_LINES 32

static void apply(CsScenario *sc, char *line)
{
  GError *error = NULL;
  if (g_str_has_prefix(line, "unset ")) {
    cs_scenario_unset(sc, line + 6, &error);
    fuzz_reject(&error);
    return;
  }
  char *eq = strchr(line, '=');
  if (!eq)
    return;
  *eq = '\0';
  const char *value = eq + 1;
  char *path = line, *space = strchr(line, ' ');
  if (space) {
    *space = '\0';
    path = space + 1;
    if (strcmp(line, "int") == 0)
      cs_scenario_set_int(sc, path, g_ascii_strtoll(value, NULL, 10), &error);
    else if (strcmp(line, "double") == 0)
      cs_scenario_set_double(sc, path, g_ascii_strtod(value, NULL), &error);
    else if (strcmp(line, "string") == 0)
      cs_scenario_set_string(sc, path, value, &error);
    else if (strcmp(line, "bool") == 0)
      cs_scenario_set_bool(sc, path, strcmp(value, "true") == 0, &error);
    else {
      *space = ' ';
      cs_scenario_set(sc, line, value, &error);
    }
  } else {
    cs_scenario_set(sc, path, value, &error);
  }
  fuzz_reject(&error);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  fuzz_init(*argv);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  GError *error = NULL;
  CsScenario *sc = cs_scenario_new_from_json(base_scenario, "base.json", fuzz_base_dir(), &error);
  if (!sc)
    fuzz_fail("the base scenario does not parse: %s", error->message);
  char *text = fuzz_strndup(data, size);
  char **lines = g_strsplit(text, "\n", MAX_LINES + 1);
  for (int i = 0; lines[i] && i < MAX_LINES; i++)
    apply(sc, lines[i]);
  g_strfreev(lines);
  g_free(text);
  g_free(cs_scenario_to_json(sc));
  if (fuzz_validation_cheap(sc)) {
    char *eff = cs_scenario_effective_json(sc, NULL, &error);
    fuzz_reject(&error);
    if (eff && fuzz_run_checked(sc))
      fuzz_accept();
    g_free(eff);
  }
  cs_scenario_free(sc);
  return 0;
}
