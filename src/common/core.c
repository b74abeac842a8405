/* What every module shares: the error domain and the version (core.h). */
#include "cs_config.h"
#include "clustersim/core.h"
#include "clustersim/plugin.h"
#include "json_input.h"

/* One error domain for the whole library: CS_INPUT_ERROR is the same quark. */
GQuark cs_error_quark(void)
{
  return cs_input_error_quark();
}

const char *cs_version(void)
{
  return CS_VERSION;
}

int cs_abi_version(void)
{
  return CS_PLUGIN_ABI_VERSION;
}
