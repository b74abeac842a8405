/* Private to src/scenario: the scenario object and the readers of the
 * scenario's sections.
 *
 * cs_scenario_compile (scenario.c) reads the top-level fields itself and
 * calls one reader per section, in the order of this header; each reader
 * lives in the file of its section, so that a file reads one part of
 * docs/scenario.md. The readers were static functions of one scenario.c;
 * they keep their names with the cs_scenario_ prefix that every non-static
 * symbol of libclustersim carries. */
#ifndef CS_SCENARIO_PRIVATE_H
#define CS_SCENARIO_PRIVATE_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "clustersim/clustersim.h"
#include "scenario.h"
#include "sim/config.h"

struct CsScenario {
  cJSON *root;
  char *name;     /* file name used in messages */
  char *base_dir; /* resolves relative paths */
  GPtrArray *overrides; /* "PATH=VALUE" of every cs_scenario_set, in order */
  CsRegistry *registry; /* the policies it may name (a reference), or NULL: the built-ins */
  gpointer runner; /* atomic: the CsScenarioRunner that simulates placement candidates, or NULL */
};

/* scenario.c: resolves a file named in the scenario: relative to the
 * scenario's directory, else as a name in <data dir>/<sub>/ with or without
 * ".json". Returns the absolute path (g_free it) or NULL after setting error. */
char *cs_scenario_resolve_data_file(const CsScenario *sc, const char *entry, const char *sub,
                                    const char *json_path, GError **error);

/* scenario_plugins.c: "plugins": each must be loaded in the scenario's
 * registry (cs_scenario_load_plugins); fills c->plugin_paths and _sha256 with
 * every plug-in of the registry, and warns (plugin_changed) of a file whose
 * SHA-256 is not the one the field recorded. */
gboolean cs_scenario_read_plugins(const CsScenario *sc, CsConfig *c, GError **error);

/* scenario_cluster.c: "profiles", "network" and "cluster" (GPUs, nodes,
 * MIG, MPS, interference, memory overflow). */
gboolean cs_scenario_read_profiles(const CsScenario *sc, CsConfig *c, GError **error);
gboolean cs_scenario_read_network(const CsScenario *sc, CsConfig *c, GError **error);
gboolean cs_scenario_read_cluster(const CsScenario *sc, CsConfig *c, GError **error);

/* scenario_clients.c: "clients" (arrival processes, windows, payloads) and
 * "trace"; needs the cluster (model names are checked against its GPU types). */
gboolean cs_scenario_read_clients(const CsScenario *sc, CsConfig *c, GError **error);
/* scenario_llm.c: the "llm" deployments (none when absent), after the
 * clients: each adds a client past n_clients. */
gboolean cs_scenario_read_llm(const CsScenario *sc, CsConfig *c, GError **error);

/* scenario_policies.c: "dispatch", then "placement" with the memory check of
 * the replicas it places; needs clients and cluster. */
gboolean cs_scenario_read_dispatch(const CsScenario *sc, CsConfig *c, GError **error);
gboolean cs_scenario_read_placement(const CsScenario *sc, CsConfig *c, GError **error);
gboolean cs_scenario_read_controller(const CsScenario *sc, CsConfig *c, GError **error);

/* placement_sim.c: a snapshot of sc to simulate placement candidates on
 * (clustersim/placement.h, cs_placement_simulate) with sc's runner; NULL when
 * sc has none (cs_scenario_set_runner). Free with _free (NULL ok). */
CsPlacementSimulator *cs_placement_simulator_new(const CsScenario *sc);
void cs_placement_simulator_free(CsPlacementSimulator *s);

/* The second line of an "unknown policy" message: where a user's own
 * policy comes from. */
#define CS_PLUGIN_HINT "\n  (a policy of your own: build it as a plug-in and load it with --plugin FILE.so, docs/extending.md)"

#endif
