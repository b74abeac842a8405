/* The experiment layer's side of compiling a scenario: the runner it hands
 * to the scenarios it compiles, so that a placement policy scoring
 * candidates by simulation (cs_placement_simulate) has them run by cs_run
 * (scenario/scenario.h: CsScenarioRunner; docs/architecture.md). */
#ifndef CS_EXPERIMENT_RUN_H
#define CS_EXPERIMENT_RUN_H

#include "scenario/scenario.h"

/* Hands sc the experiment layer's runner (cs_run with the seed replaced),
 * then compiles it: cs_scenario_compile's result, or NULL with error set.
 * Every compile above the scenario layer goes through here. */
CsConfig *cs_experiment_compile(CsScenario *sc, GError **error);

#endif
