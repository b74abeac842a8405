/* Applying an experiment's edits to a scenario (experiment.c): an edit at a
 * scenario path whose "[*]" steps expand over the arrays the scenario holds. */
#ifndef CS_EXPERIMENT_EDIT_H
#define CS_EXPERIMENT_EDIT_H

#include "clustersim/clustersim.h"

/* Sets (value: JSON text) or unsets (value NULL) path in sc, expanding its
 * first "[*]" over the array the scenario holds there (and the rest
 * recursively). written is the path as the experiment wrote it, for
 * messages. On failure returns FALSE with *why (g_free it) saying why,
 * without the "--set PATH: " of the scenario's message. */
gboolean cs_experiment_apply_path(CsScenario *sc, const char *path, const char *value,
                                  const char *written, char **why);

#endif
