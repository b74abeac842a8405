/* Applying an experiment's edits to a scenario (experiment.c): an edit at a
 * scenario path whose "[*]" steps expand over the arrays the scenario holds. */
#ifndef CS_EXPERIMENT_EDIT_H
#define CS_EXPERIMENT_EDIT_H

#include "clustersim/clustersim.h"

/* Sets (value: JSON text) or unsets (value NULL) path in sc, each "[*]"
 * standing for every element of the array the scenario holds there
 * (cs_scenario_edit_each: each array walked once). On failure returns FALSE
 * with *why (g_free it) saying why, without the "--set PATH: " of the
 * scenario's message. */
gboolean cs_experiment_apply_path(CsScenario *sc, const char *path, const char *value,
                                  char **why);

#endif
