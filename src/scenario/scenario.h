/* Internal side of scenarios (public side in clustersim.h). */
#ifndef CS_SCENARIO_INTERNAL_H
#define CS_SCENARIO_INTERNAL_H

#include <cjson/cJSON.h>

#include "clustersim/clustersim.h"
#include "sim/config.h"

/* How the layer above runs a scenario: the scenario layer compiles and
 * writes scenarios but does not run them. A placement policy that scores
 * candidates by simulation (cs_placement_simulate) gets each candidate
 * written as a scenario here (placement_sim.c) and run by the runner the
 * experiment layer handed to the scenario (experiment/run.h), as
 * CsRunOptions hands callbacks to the engine (docs/architecture.md). */
typedef struct {
  /* Runs sc once with its seed replaced by seed (>= 0). Returns its results
   * (free with cs_results_free), or NULL with error set. */
  CsResults *(*run)(CsScenario *sc, int64_t seed, GError **error);
} CsScenarioRunner;

/* Sets the runner sc's placement problem simulates candidates with; NULL
 * for none (cs_placement_simulate and cs_placement_problem_place then fail:
 * the problem has no simulator). runner must outlive sc. Safe to call from
 * threads compiling sc at the same time. */
void cs_scenario_set_runner(CsScenario *sc, const CsScenarioRunner *runner);

/* Validates the scenario and returns its compiled form (free with
 * cs_config_free), or NULL with error set naming file, JSON path and what was
 * expected. Computes the placement; a placement policy that simulates
 * candidates runs them with the runner set on sc. */
CsConfig *cs_scenario_compile(const CsScenario *sc, GError **error);

/* The name used in messages (the file name for loaded scenarios). */
const char *cs_scenario_name(const CsScenario *sc);

/* The scenario document as it stands (overrides applied). */
const cJSON *cs_scenario_root(const CsScenario *sc);

/* cs_scenario_set without recording the override (the goodput search probes
 * rates this way and restores them). */
/* --set path=value, or --unset path when value is NULL, where path may hold
 * "[*]" steps: each stands for every element of the array the scenario
 * holds there, and a later one expands within each element (an experiment's
 * edits, docs/experiments.md). Each array is walked once, so an edit over n
 * elements costs O(n), not the O(n^2) of n indexed edits. The value is
 * parsed once (JSON, else a bare string, as cs_scenario_set); each element's
 * edit is recorded as the override of its concrete path, as n separate
 * edits would be. Returns FALSE with error set ("--set PATH: at
 * clients[3].rate: why", or naming the array that is absent, not an array or
 * empty) on the first element that fails; the edits before it stay. */
gboolean cs_scenario_edit_each(CsScenario *sc, const char *path, const char *value,
                               GError **error);

gboolean cs_scenario_set_unrecorded(CsScenario *sc, const char *path, const char *value,
                                    GError **error);

/* The setup of a compiled scenario as recorded in summary.json: files by
 * name and SHA-256 (never by the path they were found at), cluster, clients'
 * arrival processes, overrides. Returns a new cJSON object, or NULL with
 * error set when a file cannot be read to hash it. */
cJSON *cs_config_setup_json(const CsConfig *c, GError **error);

/* The cluster's price in dollars per hour: the sum over nodes of GPUs x
 * price of one GPU (a MIG instance costs nothing on top of its GPU), and over
 * the LLM deployments of GPUs x their device's price. NAN
 * when some node's price is unknown; *note (may be NULL) then gets one line
 * naming the first such node and how to give its price (g_free it), else
 * NULL. */
double cs_config_cluster_price(const CsConfig *c, char **note);

/* The effective scenario of sc as compiled into c (its seed included); see
 * cs_scenario_effective_json(). Returns newly allocated JSON text. */
char *cs_config_effective_json(const CsScenario *sc, const CsConfig *c);

/* The same document as a new cJSON tree (cJSON_Delete it); its text is
 * cs_json_print_exact_line of it. A run keeps the tree and prints it only
 * when asked (cs_results_effective_scenario). */
cJSON *cs_config_effective_doc(const CsScenario *sc, const CsConfig *c);

/* Requests client i is expected to send, warm-up included, with its rate
 * multiplied by rate_multiplier (a goodput search's probes): the count of
 * explicit times or exact trace rows, the trace's scaled interval counts,
 * requests + rate x warm-up, or rate x (warm-up + duration). */
double cs_config_expected_requests(const CsConfig *c, int i, double rate_multiplier);

/* Peak memory of a run per request sent, in bytes, for the estimate in
 * messages: two latency samples of a measured request (8 bytes each), their
 * pooled copy for the totals (8) and the request's record while a policy
 * queues it (24), rounded up. Measured with getrusage on a saturated run. */
#define CS_BYTES_PER_REQUEST 64

/* Checks the expected requests of every client (rates x rate_multiplier)
 * against max_requests (0: CS_DEFAULT_MAX_REQUESTS; < 0: no limit). Returns
 * FALSE with error set ("FILE: clients: the run would send about N
 * requests, more than the limit of L (HOW); it would need about X GiB ...")
 * when they exceed it; how says how to raise the limit. */
gboolean cs_config_check_requests(const CsConfig *c, const char *file, int64_t max_requests,
                                  double rate_multiplier, const char *how, GError **error);

/* The most GPUs a cluster may have, MIG instances counted (each is a GPU
 * of the cluster numbering): memory grows with them, and the count is
 * checked while the cluster section is read, before its GPUs are allocated.
 * A node holds at most as many. */
#define CS_MAX_GPUS (1 << 20)

/* Peak memory of a run per GPU, in bytes, for the estimate in messages:
 * measured with /usr/bin/time on a run of one model on one node of 2^20
 * GPUs (1.6 GB), rounded down. */
#define CS_BYTES_PER_GPU 1536

#endif
