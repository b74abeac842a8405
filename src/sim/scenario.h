/* Internal side of scenarios (public side in clustersim.h). */
#ifndef CS_SCENARIO_INTERNAL_H
#define CS_SCENARIO_INTERNAL_H

#include "clustersim/clustersim.h"
#include "config.h"

/* Validates the scenario and returns its compiled form (free with
 * cs_config_free), or NULL with error set naming file, JSON path and what was
 * expected. Computes the placement. */
CsConfig *cs_scenario_compile(const CsScenario *sc, GError **error);

/* The name used in messages (the file name for loaded scenarios). */
const char *cs_scenario_name(const CsScenario *sc);


#endif
