/* Scenario validation, every branch of it: a table of bad scenarios, each
 * with the whole message it must produce (file, JSON path, what was
 * expected: the contract of docs/scenario.md), --set paths, and the defaults
 * a minimal scenario compiles to.
 *
 * Beside the synthetic profile (test_util.h: GPU type "gpu", models a, b, c
 * with payloads) the fixture directory holds:
 * - other.json: GPU type "gpu2" (models "a" and "d", no payload sizes) and
 *   models "e" (Mreq 60 %) and "f" (Mreq 50 %) on "gpu", no payload sizes;
 * - broken files: a profile, a network curve and interference tables that
 *   are valid JSON but not valid files of their kind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "test_util.h"

#define PROF "\"profiles\": [\"synthetic.json\", \"other.json\"]"
#define GPU1 "\"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\"}"
#define GPU2 "\"cluster\": {\"gpus\": 2, \"gpu_type\": \"gpu\"}"
#define CA "{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"requests\": 10}"
#define CLIENTS_A "\"clients\": [" CA "]"
/* A scenario with the synthetic profiles, one GPU and client a, plus X. */
#define WITH(X) "{" PROF ", " GPU1 ", " CLIENTS_A ", " X "}"
/* Same with the cluster given by X. */
#define CLUSTER(X) "{" PROF ", \"cluster\": " X ", " CLIENTS_A "}"
/* Same with the clients given by X. */
#define CLIENTS(X) "{" PROF ", " GPU2 ", \"clients\": [" X "]}"
/* Same with client a's arrival given by X. */
#define ARRIVAL(X) CLIENTS("{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"requests\": 10, \"arrival\": " X "}")
#define SYMPHONY(X) "{" PROF ", " GPU1 ", " CLIENTS_A ", \"dispatch\": {\"policy\": \"symphony\"}, " X "}"

static const char other_profile[] =
  "{\"format\": \"clustersim-profile\", \"version\": 1, \"source\": \"tests\","
  " \"gpu_types\": [{\"name\": \"gpu2\", \"description\": \"second type\", \"sm_count\": 40,"
  "  \"memory_bytes\": 8589934592}],"
  " \"models\": ["
  "  {\"gpu\": \"gpu2\", \"model\": \"a\", \"linear\": {\"alpha_ms\": 1, \"beta_ms\": 1}},"
  "  {\"gpu\": \"gpu2\", \"model\": \"d\", \"linear\": {\"alpha_ms\": 1, \"beta_ms\": 1}},"
  "  {\"gpu\": \"gpu\", \"model\": \"e\", \"batches\": [{\"batch\": 1, \"latency_ms\": 2, \"mreq_pct\": 60},"
  "   {\"batch\": 4, \"latency_ms\": 5, \"mreq_pct\": 70}]},"
  "  {\"gpu\": \"gpu\", \"model\": \"f\", \"batches\": [{\"batch\": 1, \"latency_ms\": 2, \"mreq_pct\": 50},"
  "   {\"batch\": 2, \"latency_ms\": 3, \"mreq_pct\": 55}]}]}";

typedef struct {
  const char *json;
  const char *message; /* the whole message; "{DIR}" stands for the fixture directory */
} BadCase;

static const BadCase bad_cases[] = {
  /* top level */
  { "{" PROF ", " GPU1 ", " CLIENTS_A ", \"name\": 3}", "test.json: name: expected a non-empty string, got a number" },
  { WITH("\"duration_s\": 0"), "test.json: duration_s: expected a number > 0, got 0" },
  { WITH("\"outputs\": true"), "test.json: outputs: expected an object, got a boolean" },
  { WITH("\"outputs\": {\"request_csv\": true}"), "test.json: outputs: unknown field \"request_csv\" (did you mean \"requests_csv\"?)" },
  { WITH("\"outputs\": {\"timeseries_bin_s\": 0}"), "test.json: outputs.timeseries_bin_s: expected a number in [0.001, 1e+06], got 0" },
  { WITH("\"overrides_applied\": \"seed=2\""), "test.json: overrides_applied: expected an array of \"PATH=VALUE\" strings, got a string" },
  { WITH("\"overrides_applied\": [\"seed=2\", 7]"), "test.json: overrides_applied[1]: expected a \"PATH=VALUE\" string, got a number" },
  /* profiles */
  { "{\"profiles\": \"synthetic.json\", " GPU1 ", " CLIENTS_A "}", "test.json: profiles: expected a non-empty array of profile file names, got a string" },
  { "{\"profiles\": [], " GPU1 ", " CLIENTS_A "}", "test.json: profiles: expected a non-empty array of profile file names, got an array" },
  { "{\"profiles\": [3], " GPU1 ", " CLIENTS_A "}", "test.json: profiles[0]: expected a file name, got a number" },
  { "{\"profiles\": [\"synthetic.json\", \"\"], " GPU1 ", " CLIENTS_A "}", "test.json: profiles[1]: expected a file name, got a string" },
  { "{\"profiles\": [\"/nonexistent/p.json\"], " GPU1 ", " CLIENTS_A "}", "test.json: profiles[0]: file \"/nonexistent/p.json\" not found (looked relative to the scenario and in the data directory's profiles/; set CLUSTERSIM_DATA_DIR to add one)" },
  /* A directory or device where a file should be: said so, not "not found". */
  { "{\"profiles\": [\".\"], " GPU1 ", " CLIENTS_A "}", "test.json: profiles[0]: file \".\" is not a regular file (a directory)" },
  { WITH("\"network\": {\"curve\": \"/dev/null\"}"), "test.json: network.curve: file \"/dev/null\" is not a regular file (a character device)" },
  { "{\"profiles\": [\"synthetic.json\", \"broken_profile.json\"], " GPU1 ", " CLIENTS_A "}", "test.json: profiles[1]: {DIR}/broken_profile.json: format: required field is missing" },
  /* network */
  { WITH("\"network\": \"fast\""), "test.json: network: expected \"zero\" or an object {\"constant_ms\": x} or {\"curve\": file}, got a string" },
  { WITH("\"network\": {\"constant\": 1}"), "test.json: network: unknown field \"constant\" (did you mean \"constant_ms\"?)" },
  { WITH("\"network\": {\"constant_ms\": -1}"), "test.json: network.constant_ms: expected a number >= 0, got -1" },
  { WITH("\"network\": {\"curve\": 3}"), "test.json: network.curve: expected a non-empty string, got a number" },
  { WITH("\"network\": {}"), "test.json: network: expected exactly one of \"constant_ms\" and \"curve\"" },
  { WITH("\"network\": {\"curve\": \"nope.json\"}"), "test.json: network.curve: file \"nope.json\" not found (looked relative to the scenario and in the data directory's profiles/network/; set CLUSTERSIM_DATA_DIR to add one)" },
  { WITH("\"network\": {\"curve\": \"broken_curve.json\"}"), "test.json: network.curve: {DIR}/broken_curve.json: format: required field is missing" },
  /* cluster */
  { "{" PROF ", " CLIENTS_A "}", "test.json: cluster: required field is missing (e.g. {\"gpus\": 4, \"gpu_type\": \"v100\"})" },
  { CLUSTER("3"), "test.json: cluster: expected an object, got a number" },
  { CLUSTER("{\"gpus\": 1, \"gpu_type\": \"gpu\", \"mps_gamma\": 0}"), "test.json: cluster.mps_gamma: expected a number in [0.01, 100], got 0" },
  { CLUSTER("{\"gpus\": 1, \"gpu_type\": \"gpu\", \"mps_share_rule\": \"knee\"}"), "test.json: cluster.mps_share_rule: expected \"scalable\" or \"power\", got \"knee\"" },
  { CLUSTER("{\"gpus\": 1, \"gpu_type\": \"gpu\", \"mps_share_rule\": 1}"), "test.json: cluster.mps_share_rule: expected a non-empty string, got a number" },
  { CLUSTER("{\"gpus\": 1, \"gpu_type\": \"gpu\", \"interference\": 5}"), "test.json: cluster.interference: expected a non-empty string, got a number" },
  { CLUSTER("{\"gpus\": 1, \"gpu_type\": \"gpu\", \"memory_overflow\": true}"), "test.json: cluster.memory_overflow: expected a non-empty string, got a boolean" },
  { CLUSTER("{\"gpus\": 1, \"gpu_type\": \"gpu\", \"interference\": \"broken_interference.json\"}"), "test.json: cluster.interference: {DIR}/broken_interference.json: format: required field is missing" },
  { CLUSTER("{\"gpu_type\": \"gpu\"}"), "test.json: cluster.gpus: required field is missing" },
  { CLUSTER("{\"gpus\": 1}"), "test.json: cluster.gpu_type: required field is missing" },
  { CLUSTER("{\"gpus\": 1, \"gpu_type\": \"gpu\", \"mig\": {}}"), "test.json: cluster.mig: expected a non-empty array of {\"sm_fraction\": f, \"memory_fraction\": m}, got an object" },
  { CLUSTER("{\"gpus\": 1, \"gpu_type\": \"gpu\", \"mig\": []}"), "test.json: cluster.mig: expected a non-empty array of {\"sm_fraction\": f, \"memory_fraction\": m}, got an array" },
  { CLUSTER("{\"gpus\": 1, \"gpu_type\": \"gpu\", \"mig\": [0.5]}"), "test.json: cluster.mig[0]: expected an object, got a number" },
  { CLUSTER("{\"gpus\": 1, \"gpu_type\": \"gpu\", \"mig\": [{\"sm\": 0.5}]}"), "test.json: cluster.mig[0]: unknown field \"sm\" (known fields: sm_fraction, memory_fraction)" },
  { CLUSTER("{\"gpus\": 1, \"gpu_type\": \"gpu\", \"mig\": [{\"sm_fraction\": 2, \"memory_fraction\": 0.5}]}"), "test.json: cluster.mig[0].sm_fraction: expected a number in [0.001, 1], got 2" },
  { CLUSTER("{\"gpus\": 1, \"gpu_type\": \"gpu\", \"mig\": [{\"sm_fraction\": 0.5, \"memory_fraction\": 0.6}, {\"sm_fraction\": 0.5, \"memory_fraction\": 0.6}]}"), "test.json: cluster.mig: instances take 1 of the SMs and 1.2 of the memory; each must be at most 1" },
  { CLUSTER("{\"gpus\": 1, \"nodes\": [{\"gpus\": 1, \"gpu_type\": \"gpu\"}]}"), "test.json: cluster: give either \"nodes\" or \"gpus\" with \"gpu_type\" (and \"mig\", \"price_per_hour\") for one node, not both" },
  { CLUSTER("{\"gpu_type\": \"gpu\", \"nodes\": [{\"gpus\": 1, \"gpu_type\": \"gpu\"}]}"), "test.json: cluster: give either \"nodes\" or \"gpus\" with \"gpu_type\" (and \"mig\", \"price_per_hour\") for one node, not both" },
  { CLUSTER("{\"mig\": [{\"sm_fraction\": 1, \"memory_fraction\": 1}], \"nodes\": [{\"gpus\": 1, \"gpu_type\": \"gpu\"}]}"), "test.json: cluster: give either \"nodes\" or \"gpus\" with \"gpu_type\" (and \"mig\", \"price_per_hour\") for one node, not both" },
  { CLUSTER("{\"nodes\": {\"gpus\": 1}}"), "test.json: cluster.nodes: expected a non-empty array of {\"gpus\": n, \"gpu_type\": name}, got an object" },
  { CLUSTER("{\"nodes\": []}"), "test.json: cluster.nodes: expected a non-empty array of {\"gpus\": n, \"gpu_type\": name}, got an array" },
  { CLUSTER("{\"nodes\": [\"gpu\"]}"), "test.json: cluster.nodes[0]: expected an object, got a string" },
  { CLUSTER("{\"nodes\": [{\"gpu_type\": \"gpu\"}]}"), "test.json: cluster.nodes[0].gpus: required field is missing" },
  { CLUSTER("{\"nodes\": [{\"gpus\": 1, \"gpu_type\": \"gpu\"}, {\"gpus\": 1}]}"), "test.json: cluster.nodes[1].gpu_type: required field is missing" },
  { CLUSTER("{\"nodes\": [{\"gpus\": 1, \"gpu_type\": \"gpu3\"}]}"), "test.json: cluster.nodes[0]: gpu_type \"gpu3\" is not defined by any loaded profile (did you mean \"gpu\" or \"gpu2\"?)" },
  { CLUSTER("{\"nodes\": [{\"gpus\": 1, \"gpu_type\": \"gpu\", \"mig\": [{\"sm_fraction\": 0.5}]}]}"), "test.json: cluster.nodes[0].mig[0].memory_fraction: required field is missing" },
  /* clients */
  { CLIENTS("7"), "test.json: clients[0]: expected an object, got a number" },
  { CLIENTS("{\"model\": 1, \"rate\": 100, \"slo_ms\": 50, \"requests\": 10}"), "test.json: clients[0].model: expected a non-empty string, got a number" },
  { CLIENTS("{\"model\": \"a\", \"rate\": 100, \"planned_rate\": 0, \"slo_ms\": 50, \"requests\": 10}"), "test.json: clients[0].planned_rate: expected a number > 0, got 0" },
  { CLIENTS("{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 0, \"requests\": 10}"), "test.json: clients[0].slo_ms: expected a number > 0, got 0" },
  { CLIENTS("{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"requests\": 2.5}"), "test.json: clients[0].requests: expected an integer, got a fractional number" },
  { CLIENTS("{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"requests\": 0}"), "test.json: clients[0].requests: expected an integer in [1, 2305843009213693951], got 0" },
  { CLIENTS("{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"duration_s\": \"1\"}"), "test.json: clients[0].duration_s: expected a number, got a string" },
  { CLIENTS("{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"requests\": 10, \"warmup_s\": -1}"), "test.json: clients[0].warmup_s: expected a number >= 0, got -1" },
  { CLIENTS("{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"requests\": 10, \"start_s\": -2}"), "test.json: clients[0].start_s: expected a number >= 0, got -2" },
  { CLIENTS("{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"requests\": 10, \"input_bytes\": -1}"), "test.json: clients[0].input_bytes: expected an integer in [0, 2305843009213693951], got -1" },
  { CLIENTS("{\"model\": \"a\", \"rate\": 100, \"slo_ms\": 50, \"requests\": 10, \"output_bytes\": 1.5}"), "test.json: clients[0].output_bytes: expected an integer, got a fractional number" },
  { CLIENTS("{\"model\": \"a\", \"slo_ms\": 50, \"requests\": 10, \"arrival\": \"trace\"}"), "test.json: clients[0]: a \"trace\" arrival takes its requests and rate from the scenario's \"trace\": remove \"requests\"" },
  { CLIENTS("{\"model\": \"a\", \"slo_ms\": 50, \"duration_s\": 10, \"arrival\": \"trace\"}"), "test.json: clients[0]: a \"trace\" arrival takes its requests and rate from the scenario's \"trace\": remove \"duration_s\"" },
  { CLIENTS("{\"model\": \"a\", \"slo_ms\": 50, \"requests\": 3, \"arrival\": {\"process\": \"times\", \"times_ms\": [0, 1]}}"), "test.json: clients[0]: a \"times\" arrival sets the requests and rate itself: remove \"requests\"" },
  { CLIENTS("{\"model\": \"a\", \"slo_ms\": 50, \"duration_s\": 3, \"arrival\": {\"process\": \"times\", \"times_ms\": [0, 1]}}"), "test.json: clients[0]: a \"times\" arrival sets the requests and rate itself: remove \"duration_s\"" },
  { "{" PROF ", \"cluster\": {\"nodes\": [{\"gpus\": 2, \"gpu_type\": \"gpu\"}, {\"gpus\": 1, \"gpu_type\": \"gpu2\"}]}, \"clients\": [{\"model\": \"dd\", \"rate\": 1, \"slo_ms\": 50, \"requests\": 1}]}",
    "test.json: clients[0]: model \"dd\" has no profile on any GPU type of the cluster (did you mean \"d\"?)" },
  /* payload sizes: the profile on gpu2 gives none, so a network needs them */
  { "{" PROF ", \"network\": {\"constant_ms\": 1}, \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu2\"}, \"clients\": [{\"model\": \"d\", \"rate\": 1, \"slo_ms\": 50, \"requests\": 1}]}",
    "test.json: clients[0]: the profile of \"d\" gives no request payload size and the network is not zero: set \"input_bytes\"" },
  { "{" PROF ", \"network\": {\"constant_ms\": 1}, \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu2\"}, \"clients\": [{\"model\": \"d\", \"rate\": 1, \"slo_ms\": 50, \"requests\": 1, \"input_bytes\": 5}]}",
    "test.json: clients[0]: the profile of \"d\" gives no result payload size and the network is not zero: set \"output_bytes\"" },
  /* arrival processes */
  { ARRIVAL("3"), "test.json: clients[0].arrival: expected \"poisson\", \"constant\" or {\"process\": \"gamma\", \"cv\": x}, got a number" },
  { ARRIVAL("{\"cv\": 1}"), "test.json: clients[0].arrival.process: required field is missing" },
  { ARRIVAL("{\"process\": \"gamma\", \"shap\": 1}"), "test.json: clients[0].arrival: unknown field \"shap\" (did you mean \"shape\"?)" },
  { ARRIVAL("\"gamma\""), "test.json: clients[0].arrival: a gamma process needs exactly one of \"shape\" and \"cv\"" },
  { ARRIVAL("{\"process\": \"gamma\", \"shape\": 0}"), "test.json: clients[0].arrival.shape: expected a number in [1e-06, 1e+06], got 0" },
  { ARRIVAL("{\"process\": \"gamma\", \"cv\": 1e4}"), "test.json: clients[0].arrival.cv: expected a number in [0.001, 1000], got 10000" },
  { ARRIVAL("{\"process\": \"gamma\", \"shape\": 2, \"cv\": 0.5}"), "test.json: clients[0].arrival: a gamma process needs exactly one of \"shape\" and \"cv\"" },
  { ARRIVAL("{\"process\": \"bursty\"}"), "test.json: clients[0].arrival.process: expected \"poisson\", \"gamma\", \"constant\", \"times\" or \"trace\", got \"bursty\"" },
  { ARRIVAL("{\"process\": \"poisson\", \"times_ms\": [1]}"), "test.json: clients[0].arrival: \"times_ms\" applies to \"times\" only" },
  { ARRIVAL("{\"process\": \"constant\", \"shape\": 2}"), "test.json: clients[0].arrival: \"shape\" and \"cv\" apply to \"gamma\" only" },
  { CLIENTS("{\"model\": \"a\", \"slo_ms\": 50, \"arrival\": {\"process\": \"times\", \"times_ms\": 3}}"), "test.json: clients[0].arrival.times_ms: expected a non-empty array of times in ms, got a number" },
  { CLIENTS("{\"model\": \"a\", \"slo_ms\": 50, \"arrival\": {\"process\": \"times\", \"times_ms\": []}}"), "test.json: clients[0].arrival.times_ms: expected a non-empty array of times in ms, got an array" },
  { CLIENTS("{\"model\": \"a\", \"slo_ms\": 50, \"arrival\": {\"process\": \"times\", \"times_ms\": [0, -1]}}"), "test.json: clients[0].arrival.times_ms[1]: expected a time in ms in [0, 1e+12] (simulated time is limited to 1e+09 s), got -1" },
  { CLIENTS("{\"model\": \"a\", \"slo_ms\": 50, \"arrival\": {\"process\": \"times\", \"times_ms\": [\"0\"]}}"), "test.json: clients[0].arrival.times_ms[0]: expected a time in ms in [0, 1e+12] (simulated time is limited to 1e+09 s), got a string" },
  /* trace object */
  { "{" PROF ", " GPU1 ", \"trace\": [\"x.csv\"], \"clients\": [{\"model\": \"a\", \"slo_ms\": 50, \"arrival\": \"trace\"}]}", "test.json: trace: expected an object, got an array" },
  { "{" PROF ", " GPU1 ", \"trace\": {\"format\": \"maf2019\"}, \"clients\": [{\"model\": \"a\", \"slo_ms\": 50, \"arrival\": \"trace\"}]}", "test.json: trace.file: required field is missing" },
  /* dispatch */
  { WITH("\"dispatch\": \"symphony\""), "test.json: dispatch: expected an object, got a string" },
  { WITH("\"dispatch\": {\"policy\": 1}"), "test.json: dispatch.policy: expected a non-empty string, got a number" },
  { WITH("\"dispatch\": {\"max_wait\": 1}"), "test.json: dispatch: unknown field \"max_wait\" (did you mean \"max_wait_ms\"?)" },
  /* every unknown field of one object in one error (each was found one run at a time) */
  { WITH("\"dispatch\": {\"max_wait\": 1, \"foo\": 2}"), "test.json: dispatch: unknown fields \"max_wait\" (did you mean \"max_wait_ms\"?) and \"foo\" (known fields: policy, max_wait_ms)" },
  { WITH("\"dispatch\": {\"max_wait\": 1, \"max_wai\": 2, \"maxwait_ms\": 3}"), "test.json: dispatch: unknown fields \"max_wait\" (did you mean \"max_wait_ms\"?), \"max_wai\" (did you mean \"max_wait_ms\"?) and \"maxwait_ms\" (did you mean \"max_wait_ms\"?)" },
  { WITH("\"dispatch\": {\"policy\": \"symphony\", \"batch_gathering\": \"tail\"}"), "test.json: dispatch.batch_gathering: expected \"window\" or \"head\", got \"tail\"" },
  { WITH("\"dispatch\": {\"policy\": \"symphony\", \"gpu_choice\": 2}"), "test.json: dispatch.gpu_choice: expected a non-empty string, got a number" },
  { WITH("\"dispatch\": {\"policy\": \"symphony\", \"batch_gathering\": 2}"), "test.json: dispatch.batch_gathering: expected a non-empty string, got a number" },
  { WITH("\"dispatch\": {\"policy\": \"symphony\", \"d_ctrl_us\": -1}"), "test.json: dispatch.d_ctrl_us: expected a number >= 0, got -1" },
  { WITH("\"dispatch\": {\"policy\": \"symphony\", \"d_data_us\": -1}"), "test.json: dispatch.d_data_us: expected a number >= 0, got -1" },
  { WITH("\"dispatch\": {\"policy\": \"eager\", \"d_resp_ms\": -1}"), "test.json: dispatch.d_resp_ms: expected a number >= 0, got -1" },
  { WITH("\"dispatch\": {\"policy\": \"eager\", \"max_batch\": 0}"), "test.json: dispatch.max_batch: expected an integer in [1, 1048576], got 0" },
  { WITH("\"dispatch\": {\"policy\": \"timeout\", \"timeout_ms\": -5}"), "test.json: dispatch.timeout_ms: expected a number >= 0, got -5" },
  { WITH("\"dispatch\": {\"policy\": \"eager\", \"timeout_ms\": 5}"), "test.json: dispatch: \"timeout_ms\" applies to dispatch \"timeout\" only" },
  /* settings a centralized dispatch policy would ignore */
  { "{" PROF ", \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"mps\": false}, " CLIENTS_A ", \"dispatch\": {\"policy\": \"symphony\"}}",
    "test.json: cluster.mps: dispatch \"symphony\" runs one batch at a time on each GPU, with every model loaded (memory checked at validation), so this setting would be ignored; remove it" },
  { "{" PROF ", \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"memory_overflow\": \"error\"}, " CLIENTS_A ", \"dispatch\": {\"policy\": \"eager\"}}",
    "test.json: cluster.memory_overflow: dispatch \"eager\" runs one batch at a time on each GPU, with every model loaded (memory checked at validation), so this setting would be ignored; remove it" },
  { "{" PROF ", \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"mps_gamma\": 2}, " CLIENTS_A ", \"dispatch\": {\"policy\": \"symphony\"}}",
    "test.json: cluster.mps_gamma: is the exponent of the MPS share rule \"power\"; dispatch \"symphony\" uses no MPS, so it would be ignored; remove it" },
  /* MIG instances do not use the exponent either (their tables or the MIG rule) */
  { "{" PROF ", \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"mps_gamma\": 2, \"mig\": [{\"sm_fraction\": 0.5, \"memory_fraction\": 0.5}]}, " CLIENTS_A ", \"dispatch\": {\"policy\": \"symphony\"}}",
    "test.json: cluster.mps_gamma: is the exponent of the MPS share rule \"power\"; dispatch \"symphony\" uses no MPS, so it would be ignored; remove it" },
  { "{" PROF ", " GPU1 ", \"clients\": [{\"model\": \"a\", \"rate\": 100, \"planned_rate\": 90, \"slo_ms\": 50, \"requests\": 10}], \"dispatch\": {\"policy\": \"timeout\", \"timeout_ms\": 1}}",
    "test.json: clients[0].planned_rate: dispatch \"timeout\" uses no placement, so nothing plans for this rate; remove it" },
  /* several of them: one error listing each, then the --unset options removing them all
   * (each was found one run at a time: the dispatch's unknown field, then the placement,
   * then the cluster's settings) */
  { "{" PROF ", \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"mps\": true, \"mps_gamma\": 2}, \"clients\": [" CA ", {\"model\": \"b\", \"rate\": 10, \"planned_rate\": 9, \"slo_ms\": 50, \"requests\": 1}], \"dispatch\": {\"policy\": \"symphony\", \"max_wait_ms\": 5}, \"placement\": {\"policy\": \"dedicated\"}}",
    "test.json: dispatch \"symphony\" would ignore 5 settings of the scenario (it runs every model on every GPU, one batch at a time, without a placement):\n"
    "  dispatch: unknown field \"max_wait_ms\" (known fields: policy, gpu_choice, batch_gathering, target_batch, rate_sample_ms, rate_window, d_ctrl_us, d_data_us, d_resp_ms, max_batch, timeout_ms)\n"
    "  placement: dispatch \"symphony\" runs every model on every GPU and uses no placement; remove \"placement\"\n"
    "  cluster.mps: dispatch \"symphony\" runs one batch at a time on each GPU, with every model loaded (memory checked at validation), so this setting would be ignored; remove it\n"
    "  cluster.mps_gamma: is the exponent of the MPS share rule \"power\"; dispatch \"symphony\" uses no MPS, so it would be ignored; remove it\n"
    "  clients[1].planned_rate: dispatch \"symphony\" uses no placement, so nothing plans for this rate; remove it\n"
    "remove them with: --unset dispatch.max_wait_ms --unset placement --unset cluster.mps --unset cluster.mps_gamma --unset clients[1].planned_rate" },
  /* a bad value is fixed, not removed: it alone is the error */
  { "{" PROF ", \"cluster\": {\"gpus\": 1, \"gpu_type\": \"gpu\", \"mps\": true}, " CLIENTS_A ", \"dispatch\": {\"policy\": \"symphony\", \"max_batch\": 0}, \"placement\": {\"policy\": \"dedicated\"}}",
    "test.json: dispatch.max_batch: expected an integer in [1, 1048576], got 0" },
  { "{" PROF ", \"cluster\": {\"nodes\": [{\"gpus\": 1, \"gpu_type\": \"gpu\"}, {\"gpus\": 1, \"gpu_type\": \"gpu2\"}]}, \"clients\": [{\"model\": \"d\", \"rate\": 1, \"slo_ms\": 50, \"requests\": 1}], \"dispatch\": {\"policy\": \"symphony\"}}",
    "test.json: clients[0]: dispatch \"symphony\" runs every model on every GPU, but model \"d\" has no profile on GPU type \"gpu\" (gpu 0)" },
  /* e (Mreq 60 % at its smallest batch) and f (50 %) do not fit together on one GPU */
  { "{" PROF ", " GPU1 ", \"clients\": [{\"model\": \"e\", \"rate\": 1, \"slo_ms\": 50, \"requests\": 1}, {\"model\": \"f\", \"rate\": 1, \"slo_ms\": 50, \"requests\": 1}], \"dispatch\": {\"policy\": \"symphony\"}}",
    "test.json: dispatch: dispatch \"symphony\" loads every model on every GPU, but on gpu 0 (gpu) their memory (e 60.00 %, f 50.00 %) sums to 110.00 %, over the 100 % it has" },
  /* placement */
  { WITH("\"placement\": \"manual\""), "test.json: placement: expected an object, got a string" },
  { WITH("\"placement\": {\"policy\": 4}"), "test.json: placement.policy: expected a non-empty string, got a number" },
  { "{" PROF ", \"cluster\": {\"nodes\": [{\"gpus\": 1, \"gpu_type\": \"gpu\"}, {\"gpus\": 1, \"gpu_type\": \"gpu2\"}]}, \"clients\": [{\"model\": \"d\", \"rate\": 1, \"slo_ms\": 50, \"requests\": 1}]}",
    "test.json: placement: placement \"dedicated\": no profile for model \"d\" on GPU type \"gpu\"" },
  /* memory: e (60 % at batch 1, 70 % at batch 4: the nearest profiled size
   * to 3 is 4) and f (50 %) on gpu 1, after a replica on gpu 0 */
  { "{" PROF ", " GPU2 ", \"clients\": [{\"model\": \"e\", \"rate\": 1, \"slo_ms\": 50, \"requests\": 1}, {\"model\": \"f\", \"rate\": 1, \"slo_ms\": 50, \"requests\": 1}],"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"f\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"e\", \"gpu\": 1, \"batch\": 3}, {\"model\": \"f\", \"gpu\": 1, \"batch\": 1}]}}",
    "test.json: placement: gpu 1 (gpu) cannot hold its replicas: Mreq e batch 3 (70.00 %), f batch 1 (50.00 %) sum to 120.00 % of the GPU's memory, over the 100 % it has (set cluster.memory_overflow to \"fail_replicas\" to simulate the failure instead)" },
  /* Several independent problems: one error listing each (issue 35; each was
   * found one run at a time). A list's items are all checked, an item's
   * fields each on its own; an unknown field stops its object, and a check
   * that needs an earlier one (a model's profile after its name) stays
   * behind it. */
  { "{" PROF ", " GPU1 ", \"clients\": [{\"model\": \"a\", \"rate\": -1, \"slo_ms\": \"x\", \"requests\": 10}, {\"model\": \"b\", \"rat\": 1, \"slo_ms\": 50}, {\"model\": \"zz\", \"rate\": 1, \"slo_ms\": 50, \"requests\": 1}, {\"model\": \"c\", \"rate\": 1, \"slo_ms\": 50, \"requests\": 1, \"duration_s\": 1}]}",
    "test.json: 5 problems in clients:\n"
    "  clients[0].rate: expected a number > 0, got -1\n"
    "  clients[0].slo_ms: expected a number, got a string\n"
    "  clients[1]: unknown field \"rat\" (did you mean \"rate\"?)\n"
    "  clients[2]: model \"zz\" has no profile on any GPU type of the cluster\n"
    "  clients[3]: give \"requests\" or \"duration_s\", not both" },
  { "{" PROF ", " GPU1 ", \"clients\": [" CA ", " CA "]}",
    "test.json: clients[1]: model \"a\" already has a client (clients[0]); one client per model" },
  { CLUSTER("{\"gpus\": 1, \"gpu_type\": \"gpu\", \"mps\": 1, \"mps_share_rule\": \"linear\", \"memory_overflow\": \"drop\"}"),
    "test.json: 3 problems in cluster:\n"
    "  cluster.mps: expected true or false, got a number\n"
    "  cluster.memory_overflow: expected \"error\" or \"fail_replicas\", got \"drop\"\n"
    "  cluster.mps_share_rule: expected \"scalable\" or \"power\", got \"linear\"" },
  { CLUSTER("{\"nodes\": [{\"gpus\": 0, \"gpu_type\": \"gpu\"}, {\"gpus\": 1, \"gpu_type\": \"gpx\"}, {\"gpus\": 1}, {\"gpus\": 1, \"gpu_type\": \"gpu\", \"mig\": [{\"sm_fraction\": 0.5}, {\"sm_fraction\": 0.5, \"memory_fraction\": 0}]}]}"),
    "test.json: 5 problems in cluster.nodes:\n"
    "  cluster.nodes[0].gpus: expected an integer in [1, 1048576], got 0\n"
    "  cluster.nodes[1]: gpu_type \"gpx\" is not defined by any loaded profile (did you mean \"gpu\"?)\n"
    "  cluster.nodes[2].gpu_type: required field is missing\n"
    "  cluster.nodes[3].mig[0].memory_fraction: required field is missing\n"
    "  cluster.nodes[3].mig[1].memory_fraction: expected a number in [0.001, 1], got 0" },
  { CLUSTER("{\"gpus\": 1, \"gpu_type\": \"gpu\", \"mig\": [{\"sm_fraction\": 2, \"memory_fraction\": 0.5}, 3]}"),
    "test.json: 2 problems in cluster.mig:\n"
    "  cluster.mig[0].sm_fraction: expected a number in [0.001, 1], got 2\n"
    "  cluster.mig[1]: expected an object, got a number" },
  { "{\"profiles\": [3, \"synthetic.json\", \"broken_profile.json\"], " GPU1 ", " CLIENTS_A "}",
    "test.json: 2 problems in profiles:\n"
    "  profiles[0]: expected a file name, got a number\n"
    "  profiles[2]: {DIR}/broken_profile.json: format: required field is missing" },
  { "{" PROF ", " GPU2 ", \"clients\": [" CA ", {\"model\": \"b\", \"rate\": 1, \"slo_ms\": 50, \"requests\": 1}],"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"a\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"x\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"b\", \"gpu\": 2, \"batch\": 1}, {\"model\": \"b\", \"gpu\": 1, \"batch\": 0, \"mps_share\": 2}, {\"model\": \"b\", \"gpus\": 1}]}}",
    "test.json: 5 problems in placement.replicas:\n"
    "  placement.replicas[1]: model \"x\" has no client in the scenario\n"
    "  placement.replicas[2]: gpu 2 does not exist (the cluster has 2 GPUs)\n"
    "  placement.replicas[3].batch: expected an integer in [1, 1048576], got 0\n"
    "  placement.replicas[3].mps_share: expected a number in [0, 1], got 2\n"
    "  placement.replicas[4]: unknown field \"gpus\" (did you mean \"gpu\"?)" },
  /* each GPU that cannot hold its replicas, once */
  { "{" PROF ", " GPU2 ", \"clients\": [{\"model\": \"e\", \"rate\": 1, \"slo_ms\": 50, \"requests\": 1}, {\"model\": \"f\", \"rate\": 1, \"slo_ms\": 50, \"requests\": 1}],"
    " \"placement\": {\"policy\": \"manual\", \"replicas\": [{\"model\": \"e\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"f\", \"gpu\": 0, \"batch\": 1}, {\"model\": \"f\", \"gpu\": 0, \"batch\": 2}, {\"model\": \"f\", \"gpu\": 1, \"batch\": 2}, {\"model\": \"f\", \"gpu\": 1, \"batch\": 1}]}}",
    "test.json: 2 problems in placement:\n"
    "  placement: gpu 0 (gpu) cannot hold its replicas: Mreq e batch 1 (60.00 %), f batch 1 (50.00 %) sum to 110.00 % of the GPU's memory, over the 100 % it has (set cluster.memory_overflow to \"fail_replicas\" to simulate the failure instead)\n"
    "  placement: gpu 1 (gpu) cannot hold its replicas: Mreq f batch 2 (55.00 %), f batch 1 (50.00 %) sum to 105.00 % of the GPU's memory, over the 100 % it has (set cluster.memory_overflow to \"fail_replicas\" to simulate the failure instead)" },
  /* a policy's parameters */
  { WITH("\"dispatch\": {\"policy\": \"symphony\", \"max_batch\": 0, \"d_ctrl_us\": -1, \"batch_gathering\": \"tail\"}"),
    "test.json: 3 problems in dispatch:\n"
    "  dispatch.batch_gathering: expected \"window\" or \"head\", got \"tail\"\n"
    "  dispatch.d_ctrl_us: expected a number >= 0, got -1\n"
    "  dispatch.max_batch: expected an integer in [1, 1048576], got 0" },
  { WITH("\"placement\": {\"policy\": \"milp\", \"time_limit_s\": 0, \"node_limit\": 0}"),
    "test.json: 2 problems in placement:\n"
    "  placement.time_limit_s: expected a number in [0.001, 1e+06], got 0\n"
    "  placement.node_limit: expected an integer in [1, 2147483647], got 0" },
};

static char *fixture_dir(void)
{
  char *dir = test_dir_with_profile(1.0, 4.0);
  const char *files[][2] = {
    { "other.json", other_profile },
    { "broken_profile.json", "{\"version\": 1}" },
    { "broken_curve.json", "{\"version\": 1}" },
    { "broken_interference.json", "{\"version\": 1}" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
    char *p = g_build_filename(dir, files[i][0], NULL);
    assert_true(g_file_set_contents(p, files[i][1], -1, NULL));
    g_free(p);
  }
  return dir;
}

static char *replace_dir(const char *msg, const char *dir)
{
  char **parts = g_strsplit(msg, "{DIR}", -1);
  char *out = g_strjoinv(dir, parts);
  g_strfreev(parts);
  return out;
}

static void test_bad_scenarios(void **state)
{
  (void)state;
  char *dir = fixture_dir();
  int failures = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
    GError *err = NULL;
    CsScenario *sc = cs_scenario_new_from_json(bad_cases[i].json, "test.json", dir, &err);
    if (!sc) {
      print_error("case %zu does not parse: %s\n", i, err->message);
      g_error_free(err);
      failures++;
      continue;
    }
    gboolean ok = cs_scenario_validate(sc, &err);
    cs_scenario_free(sc);
    char *want = replace_dir(bad_cases[i].message, dir);
    if (ok) {
      print_error("case %zu: accepted, expected\n  %s\n", i, want);
      failures++;
    } else {
      assert_true(err->domain == CS_ERROR);
      if (strcmp(err->message, want) != 0) {
        print_error("case %zu:\n  got      %s\n  expected %s\n", i, err->message, want);
        failures++;
      }
      g_error_free(err);
    }
    g_free(want);
  }
  test_dir_remove(dir);
  assert_int_equal(failures, 0);
}

/* --set paths: the value lands where the path says (read back from the
 * scenario's JSON), and a malformed path is refused with a reason, the
 * override then not recorded. */
static void test_set_paths(void **state)
{
  (void)state;
  CsScenario *sc = cs_scenario_new(NULL, NULL);
  GError *err = NULL;
  const char *sets[][2] = {
    { "profiles[0]", "\"x.json\"" },
    { "profiles[0]", "\"y.json\"" }, /* replaces the element */
    { "profiles[1]", "z.json" },     /* appends; a bare word is a string */
    { "m[0][1]", "3" },              /* index past the end of a new array: refused */
    { "m[0][0]", "3" },              /* nested arrays are created */
    { "cluster.gpus", "2" },
    { "cluster.gpus", "4" },         /* replaces the field */
  };
  const gboolean want_ok[] = { TRUE, TRUE, TRUE, FALSE, TRUE, TRUE, TRUE };
  for (size_t i = 0; i < G_N_ELEMENTS(sets); i++) {
    gboolean ok = cs_scenario_set(sc, sets[i][0], sets[i][1], &err);
    if (ok != want_ok[i])
      fail_msg("set %s: %s", sets[i][0], ok ? "accepted" : err->message);
    g_clear_error(&err);
  }
  char *json = cs_scenario_to_json(sc);
  cJSON *doc = cJSON_Parse(json);
  g_free(json);
  const cJSON *profiles = cJSON_GetObjectItem(doc, "profiles");
  assert_int_equal(cJSON_GetArraySize(profiles), 2);
  assert_string_equal(cJSON_GetArrayItem(profiles, 0)->valuestring, "y.json");
  assert_string_equal(cJSON_GetArrayItem(profiles, 1)->valuestring, "z.json");
  const cJSON *m = cJSON_GetObjectItem(doc, "m");
  assert_int_equal(cJSON_GetArraySize(m), 1);
  assert_int_equal(cJSON_GetArrayItem(cJSON_GetArrayItem(m, 0), 0)->valueint, 3);
  assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "cluster"), "gpus")->valueint, 4);
  cJSON_Delete(doc);

  /* A scenario made in code without a name is called "<scenario>" in messages. */
  assert_false(cs_scenario_validate(sc, &err));
  assert_string_equal(err->message, "<scenario>: unknown field \"m\" (known fields: name, seed, "
                      "duration_s, profiles, network, cluster, dispatch, placement, controller, "
                      "clients, trace, outputs, warnings, overrides_applied, plugins, llm)");
  g_clear_error(&err);

  const char *bad[][2] = {
    { "cluster[0]", "--set cluster[0]: indexing something that is not an array" },
    { "profiles[1x]", "--set profiles[1x]: expected [index] with a non-negative integer" },
    { "profiles[-1]", "--set profiles[-1]: expected [index] with a non-negative integer" },
    { "profiles[", "--set profiles[: expected [index] with a non-negative integer" },
    { "cluster..gpus", "--set cluster..gpus: empty field name" },
    { "cluster.gpus.x", "--set cluster.gpus.x: a field of something that is not an object" },
    /* A trailing dot names no field: it must not pass as a set. */
    { "cluster.gpus.", "--set cluster.gpus.: empty field name" },
    { "profiles[0].", "--set profiles[0].: empty field name" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    if (cs_scenario_set(sc, bad[i][0], "5", &err))
      fail_msg("set %s: accepted", bad[i][0]);
    if (strcmp(err->message, bad[i][1]) != 0)
      fail_msg("set %s:\n  got      %s\n  expected %s", bad[i][0], err->message, bad[i][1]);
    g_clear_error(&err);
  }
  /* The refused paths left the values alone. */
  json = cs_scenario_to_json(sc);
  doc = cJSON_Parse(json);
  g_free(json);
  assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "cluster"), "gpus")->valueint, 4);
  assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "profiles"), 0)->valuestring,
                      "y.json");
  cJSON_Delete(doc);
  cs_scenario_free(sc);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_scenarios),
    cmocka_unit_test(test_set_paths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
