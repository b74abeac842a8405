/* Internal side of scenarios (public side in clustersim.h). */
#ifndef CS_SCENARIO_INTERNAL_H
#define CS_SCENARIO_INTERNAL_H

#include "clustersim/clustersim.h"
#include "sim/config.h"

/* Validates the scenario and returns its compiled form (free with
 * cs_config_free), or NULL with error set naming file, JSON path and what was
 * expected. Computes the placement. */
CsConfig *cs_scenario_compile(const CsScenario *sc, GError **error);

/* The name used in messages (the file name for loaded scenarios). */
const char *cs_scenario_name(const CsScenario *sc);

/* The scenario document as it stands (overrides applied). */
const cJSON *cs_scenario_root(const CsScenario *sc);

/* cs_scenario_set without recording the override (the goodput search probes
 * rates this way and restores them). */
gboolean cs_scenario_set_unrecorded(CsScenario *sc, const char *path, const char *value,
                                    GError **error);

/* The setup of a compiled scenario as recorded in summary.json: files by
 * name and SHA-256 (never by the path they were found at), cluster, clients'
 * arrival processes, overrides. Returns a new cJSON object, or NULL with
 * error set when a file cannot be read to hash it. */
cJSON *cs_config_setup_json(const CsConfig *c, GError **error);

/* The effective scenario of sc as compiled into c (its seed included); see
 * cs_scenario_effective_json(). Returns newly allocated JSON text. */
char *cs_config_effective_json(const CsScenario *sc, const CsConfig *c);


#endif
