/* The outputs of a run (public side in clustersim.h: cs_results_to_json,
 * cs_results_print_table, cs_results_write_*). */
#ifndef CS_OUTPUTS_H
#define CS_OUTPUTS_H

#include <cjson/cJSON.h>

#include "sim/warnings.h"

/* The warnings as a JSON array of {"code", "model", "gpu", "message"} (model
 * and gpu are left out when they do not apply). */
cJSON *cs_warning_list_to_json(const CsWarningList *l);

#endif
