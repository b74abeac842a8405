#!/usr/bin/env bash
# clustersim run as a researcher meets it: warnings for runs that mislead,
# honest counts, outputs that never mix runs, provenance that reproduces a
# run, and planned versus offered rates.
# Usage: test_cli_run.sh CLUSTERSIM_BINARY SOURCE_ROOT
. "$(dirname "$0")/harness.sh"
q="$src/examples/quickstart.json"
prof="$src/data/profiles/v100_thesis.json"

# ---- warnings -----------------------------------------------------------------
# One resnet50 replica at batch 16 serves about 1000 req/s; 5000 req/s for 20 s
# leaves a queue that drains for about 80 s after the window.
cat >"$tmp/over.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 1, "gpu_type": "v100"},
 "placement": {"policy": "manual", "replicas": [{"model": "resnet50", "gpu": 0, "batch": 16}]},
 "clients": [{"model": "resnet50", "rate": 5000, "slo_ms": 200, "duration_s": 20}]}
JSON
"$bin" run "$tmp/over.json" --output "$tmp/over" >"$tmp/over.out" 2>"$tmp/over.err"
check "overload: run still exits 0" test $? -eq 0
check "overload: 'unstable' warning on stderr names the model" grep -q "warning \[unstable\] resnet50:" "$tmp/over.err"
check "overload: the warnings are in summary.json" py "[(w['code'], w['model']) for w in d['warnings']] == [('unstable', 'resnet50'), ('plan_gap', 'resnet50')]" "$tmp/over/summary.json"
check "overload: plan_gap names queue growth" grep -q "warning \[plan_gap\] resnet50: .*likely cause: queue growth: .*(unstable)" "$tmp/over.err"
check "overload: throughput counts results inside the window (about 1000, not the 5000 sent)" \
  py "900 < d['models'][0]['throughput_rps'] < 1100 and d['models'][0]['requests']['late'] > 50000" "$tmp/over/summary.json"
# The same, from the profile: the saturated replica finishes a batch of 16
# every 16 / throughput_rps(16) s back to back, so the results inside the
# 20 s window come at the profiled throughput (within 1 %: the first batch
# starts after 16 arrivals, the last one may straddle the end); every other
# measured request is late, and the backlog drains at the same rate.
check "overload: throughput = the profile's batch-16 throughput, late = measured - in window, drain = late / throughput" \
  python3 -c "
import json, sys
d = json.load(open('$tmp/over/summary.json'))['models'][0]
p = json.load(open('$prof'))
thr = next(b['throughput_rps'] for m in p['models'] if m['gpu'] == 'v100' and m['model'] == 'resnet50'
           for b in m['batches'] if b['batch'] == 16)
q = d['requests']
sys.exit(0 if abs(d['throughput_rps'] - thr) <= 0.01 * thr
         and q['late'] == q['measured'] - q['results_in_window'] and q['completed'] == q['measured']
         and abs(d['drain_s'] - q['late'] / thr) <= 0.01 * q['late'] / thr else 1)"
check "overload: the table points at the warnings" grep -q "^warnings: 2" "$tmp/over.out"
"$bin" run "$q" --set clients[0].duration_s=5 --set clients[1].duration_s=5 --set clients[2].duration_s=5 \
  >"$tmp/q.out" 2>"$tmp/q.err"
# The quickstart is stable, but alexnet's batches wait up to its whole SLO in
# the router (README, "Reading the quickstart"): plan_gap is its only warning.
check "quickstart: alexnet's plan_gap is the only warning" bash -c \
  "test \"\$(cut -d: -f2 '$tmp/q.err')\" = ' warning [plan_gap] alexnet' && grep -q 'likely cause: router wait' '$tmp/q.err'"
"$bin" run "$q" --set clients[0].duration_s=5 --set clients[1].duration_s=5 --set clients[2].duration_s=5 \
  --set dispatch.max_wait_ms=20 >/dev/null 2>"$tmp/q20.err"
check "quickstart with a 20 ms MAX_WAIT_TIME prints no warning" test ! -s "$tmp/q20.err"

# A placement that leaves a model without a replica: model_unserved, and the
# table's unserved column (not failed, not dropped) counts its requests.
cat >"$tmp/unserved.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 1, "gpu_type": "v100"},
 "placement": {"policy": "manual", "replicas": [{"model": "resnet50", "gpu": 0, "batch": 8}]},
 "clients": [{"model": "resnet50", "rate": 100, "slo_ms": 200, "requests": 500},
             {"model": "alexnet", "rate": 100, "slo_ms": 200, "requests": 300}]}
JSON
"$bin" run "$tmp/unserved.json" >"$tmp/u.out" 2>"$tmp/u.err"
check "model_unserved warning" grep -q "warning \[model_unserved\] alexnet: placement \"manual\" gives alexnet no replica" "$tmp/u.err"
check "table: alexnet's 300 requests are unserved, 0 failed, 0 dropped" \
  bash -c "awk '\$1 == \"alexnet\" { exit !(\$12 == 0 && \$13 == 300 && \$14 == 0) }' '$tmp/u.out'"
check "table header separates dropped, unserved, failed and late" \
  grep -qE "dropped +unserved +failed +late$" "$tmp/u.out"
"$bin" place "$tmp/unserved.json" --json >"$tmp/up.json" 2>"$tmp/up.err"
check "place: model_unserved warning on stderr and in --json" \
  bash -c "grep -q 'warning \[model_unserved\] alexnet' '$tmp/up.err' && python3 -c \"import json,sys; d=json.load(open('$tmp/up.json')); sys.exit(0 if d['warnings'][0]['code'] == 'model_unserved' else 1)\""

# Every replica fails in memory: the run serves nothing and says so.
cat >"$tmp/nothing.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 1, "gpu_type": "v100", "memory_overflow": "fail_replicas"},
 "placement": {"policy": "manual", "replicas": [{"model": "resnet50", "gpu": 0, "batch": 8},
   {"model": "resnet50", "gpu": 0, "batch": 8}, {"model": "resnet50", "gpu": 0, "batch": 8},
   {"model": "resnet50", "gpu": 0, "batch": 8}, {"model": "resnet50", "gpu": 0, "batch": 8},
   {"model": "resnet50", "gpu": 0, "batch": 8}, {"model": "resnet50", "gpu": 0, "batch": 8},
   {"model": "resnet50", "gpu": 0, "batch": 8}, {"model": "resnet50", "gpu": 0, "batch": 8},
   {"model": "resnet50", "gpu": 0, "batch": 8}, {"model": "resnet50", "gpu": 0, "batch": 8}]},
 "clients": [{"model": "resnet50", "rate": 100, "slo_ms": 200, "requests": 200}]}
JSON
python3 - "$tmp/nothing.json" "$prof" <<'PY'
# Keep only as many replicas as needed so that the first fits and every later
# one does not: with Mreq m of batch 8, the first fits and the rest fail only
# if m > 50 %; otherwise make the first take the memory with a big batch.
import json, sys
scen, prof = sys.argv[1:]
d = json.load(open(scen))
p = json.load(open(prof))
m = next(x for x in p["models"] if x["model"] == "resnet50")
pts = [b for b in m["batches"] if "mreq_pct" in b]
big = max(pts, key=lambda b: b["mreq_pct"])
n = int(100 // big["mreq_pct"]) + 1  # one more than fits
d["placement"]["replicas"] = [{"model": "resnet50", "gpu": 0, "batch": big["batch"]}] * n
json.dump(d, open(scen, "w"))
PY
"$bin" run "$tmp/nothing.json" --output "$tmp/nothing" >"$tmp/n.out" 2>"$tmp/n.err"
check "replica_fails warning for replicas beyond the GPU's memory" grep -q "warning \[replica_fails\] resnet50 gpu 0:" "$tmp/n.err"
check "failed requests are counted as failed" py "d['models'][0]['requests']['failed'] > 0 and d['models'][0]['requests']['unserved'] == 0" "$tmp/nothing/summary.json"

# The only replica does not fit its MIG instance's memory: nothing is served.
cat >"$tmp/none.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 1, "gpu_type": "v100", "memory_overflow": "fail_replicas",
   "mig": [{"sm_fraction": 0.5, "memory_fraction": 0.001}]},
 "placement": {"policy": "manual", "replicas": [{"model": "resnet50", "gpu": 0, "batch": 8}]},
 "clients": [{"model": "resnet50", "rate": 100, "slo_ms": 200, "requests": 50}]}
JSON
"$bin" run "$tmp/none.json" >/dev/null 2>"$tmp/none.err"
check "model_no_results and nothing_served when every request fails" \
  bash -c "grep -q 'warning \[model_no_results\] resnet50: none of its 50 measured requests' '$tmp/none.err' && grep -q 'warning \[nothing_served\]: the run served none of its 50' '$tmp/none.err'"
# A client that sends nothing inside its window.
cat >"$tmp/empty.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 1, "gpu_type": "v100"},
 "clients": [{"model": "resnet50", "rate": 0.001, "slo_ms": 200, "duration_s": 0.5, "arrival": "constant", "start_s": 0.1,
              "warmup_s": 0.1}]}
JSON
"$bin" run "$tmp/empty.json" >/dev/null 2>"$tmp/empty.err"
check "nothing_measured when no request falls in the window" grep -q "warning \[nothing_measured\]" "$tmp/empty.err"
# Symphony with an explicit per-request transfer budget the network contradicts.
cat >"$tmp/budget.json" <<JSON
{"profiles": ["$prof"], "network": {"curve": "gcp_n1_standard_16"}, "cluster": {"gpus": 2, "gpu_type": "v100"},
 "dispatch": {"policy": "symphony", "d_data_us": 50},
 "clients": [{"model": "resnet50", "rate": 100, "slo_ms": 200, "duration_s": 1}]}
JSON
"$bin" run "$tmp/budget.json" >/dev/null 2>"$tmp/budget.err"
check "budget_network_mismatch for an explicit d_data_us the curve contradicts" grep -q "warning \[budget_network_mismatch\] resnet50" "$tmp/budget.err"
"$bin" run "$tmp/budget.json" --set dispatch='{"policy": "symphony"}' >/dev/null 2>"$tmp/budget.err"
check "no budget warning when the budget comes from the network" test ! -s "$tmp/budget.err"

# Settings the chosen dispatch would ignore are refused.
cat >"$tmp/sym.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 2, "gpu_type": "v100", "interference": "igniter_v100"},
 "dispatch": {"policy": "symphony"},
 "clients": [{"model": "resnet50", "rate": 100, "slo_ms": 200, "requests": 200}]}
JSON
"$bin" run "$tmp/sym.json" >"$tmp/s.out" 2>"$tmp/s.err"
check "symphony refuses cluster.interference: exit 2" test $? -eq 2
check "symphony refuses cluster.interference: message" grep -q "cluster.interference: dispatch \"symphony\" runs one batch at a time" "$tmp/s.err"
python3 -c "
import json; d=json.load(open('$tmp/sym.json')); del d['cluster']['interference']; d['clients'][0]['planned_rate']=50
json.dump(d, open('$tmp/sym_planned.json','w'))"
"$bin" run "$tmp/sym_planned.json" >/dev/null 2>"$tmp/s.err"
check "symphony refuses planned_rate (nothing plans): message" grep -q "clients\[0\].planned_rate: dispatch \"symphony\" uses no placement" "$tmp/s.err"
# MPS shares of co-located replicas mean nothing under time-slicing.
cat >"$tmp/shares.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 1, "gpu_type": "v100"},
 "placement": {"policy": "manual", "replicas": [{"model": "resnet50", "gpu": 0, "batch": 8, "mps_share": 0.5},
                                                {"model": "alexnet", "gpu": 0, "batch": 8, "mps_share": 0.5}]},
 "clients": [{"model": "resnet50", "rate": 100, "slo_ms": 200, "duration_s": 2},
             {"model": "alexnet", "rate": 100, "slo_ms": 200, "duration_s": 2}]}
JSON
"$bin" run "$tmp/shares.json" >/dev/null 2>"$tmp/sh.err"
check "mps_shares_ignored warning when co-located shares meet time-slicing" grep -q "warning \[mps_shares_ignored\]" "$tmp/sh.err"
"$bin" run "$tmp/shares.json" --set cluster.mps=true >/dev/null 2>"$tmp/sh.err"
check "no warning with cluster.mps" test ! -s "$tmp/sh.err"
"$bin" run "$tmp/shares.json" --set cluster.interference=igniter_v100 --set cluster.mps_gamma=2 >/dev/null 2>"$tmp/sh.err"
check "setting_ignored warnings: interference and mps_gamma without MPS" \
  bash -c "test \"\$(grep -c 'warning \[setting_ignored\]' '$tmp/sh.err')\" -eq 2"
"$bin" run "$tmp/shares.json" --set cluster.interference=igniter_v100 --set cluster.mps_gamma=2 --set cluster.mps=true --set cluster.mps_share_rule=power >/dev/null 2>"$tmp/sh.err"
check "no setting_ignored warning with cluster.mps and the power share rule" test ! -s "$tmp/sh.err"
"$bin" run "$tmp/shares.json" --set cluster.mps_gamma=2 --set cluster.mps=true >/dev/null 2>"$tmp/sh.err"
check "setting_ignored warning: mps_gamma with the scalable share rule" \
  grep -q "warning \[setting_ignored\].*cluster.mps_gamma is the exponent of cluster.mps_share_rule \"power\"" "$tmp/sh.err"
"$bin" run "$tmp/shares.json" --set cluster.mps_share_rule=power >/dev/null 2>"$tmp/sh.err"
check "setting_ignored warning: mps_share_rule without MPS" \
  grep -q "warning \[setting_ignored\]: cluster.mps_share_rule applies" "$tmp/sh.err"

# ---- outputs never mix runs ---------------------------------------------------
short=(--set clients[0].duration_s=2 --set clients[1].duration_s=2 --set clients[2].duration_s=2)
"$bin" run "$q" "${short[@]}" --output "$tmp/o" --requests-csv >/dev/null 2>&1
check "first run writes requests.csv" test -s "$tmp/o/requests.csv"
python3 -c "
import json; d=json.load(open('$q')); d['outputs']={'requests_csv': True}
d['profiles']=['$src/data/profiles/v100_thesis.json']; d['network']={'curve': '$src/data/profiles/network/gcp_n1_standard_16.json'}
json.dump(d, open('$tmp/csv_in_scenario.json','w'))"
"$bin" run "$tmp/csv_in_scenario.json" "${short[@]}" --output "$tmp/oc" >/dev/null 2>&1
check "outputs.requests_csv in the scenario writes requests.csv: one row per request" \
  test "$(($(wc -l <"$tmp/oc/requests.csv") - 1))" -eq "$(python3 -c "import json;print(json.load(open('$tmp/oc/summary.json'))['total']['requests']['generated'])")"
cp "$tmp/o/summary.json" "$tmp/o.summary"
"$bin" run "$q" "${short[@]}" --output "$tmp/o" --seed 2 >"$tmp/o.out" 2>"$tmp/o.err"
check "reused --output is refused: exit 2" test $? -eq 2
check "reused --output is refused: message lists the files and --force" \
  grep -q "holds the outputs of an earlier run (summary.json, scenario.json, .*requests.csv); use --force" "$tmp/o.err"
check "reused --output is refused: nothing changed" cmp -s "$tmp/o/summary.json" "$tmp/o.summary"
check "reused --output is refused: nothing on stdout" test ! -s "$tmp/o.out"
"$bin" run "$q" "${short[@]}" --output "$tmp/o" --seed 2 --force >/dev/null 2>&1
check "--force replaces the set: new summary" py "d['seed'] == 2" "$tmp/o/summary.json"
check "--force replaces the whole set: the earlier requests.csv is gone" test ! -e "$tmp/o/requests.csv"
check "no temporary file is left" bash -c "! ls '$tmp/o' | grep -qE '\\.(new|partial)'"
mkdir "$tmp/mine" && echo keep >"$tmp/mine/notes.txt"
"$bin" run "$q" "${short[@]}" --output "$tmp/mine" >/dev/null 2>&1
check "a directory with other files (not outputs) is used and they are kept" \
  bash -c "test -s '$tmp/mine/summary.json' && test \"\$(cat '$tmp/mine/notes.txt')\" = keep"
: >"$tmp/afile"
"$bin" run "$q" "${short[@]}" --output "$tmp/afile" >/dev/null 2>"$tmp/f.err"
check "--output naming a file: exit 2 with a message" bash -c "test $? -eq 2 && grep -q 'exists and is not a directory' '$tmp/f.err'"
"$bin" run "$q" --force >/dev/null 2>"$tmp/f.err"
check "--force without --output is refused" grep -q -- "--force needs --output DIR" "$tmp/f.err"

# SIGINT and SIGTERM during a long run: no partial file, exit 130 / 143.
# The signal is sent once the run is writing (its partial file exists), however
# long that takes: no wall-clock bound here (meson's timeout bounds the test).
# 1.2 * 10^8 requests: over the default --max-requests, which "none" lifts.
long=(--set clients[0].duration_s=100000 --set clients[1].duration_s=100000 --set clients[2].duration_s=100000
      --max-requests none)
"$bin" run "$q" "${long[@]}" --output "$tmp/int" --requests-csv >/dev/null 2>&1 &
pid=$!
while kill -0 $pid 2>/dev/null && [ ! -e "$tmp/int/requests.csv.new.partial" ]; do sleep 0.1; done
check "SIGINT: sent while the run writes its partial file" test -e "$tmp/int/requests.csv.new.partial"
kill -INT $pid
wait $pid
rc=$?
check "SIGINT: exit 130" test $rc -eq 130
check "SIGINT: the directory the run created is gone, no partial file" test ! -e "$tmp/int"
mkdir "$tmp/term"
"$bin" run "$q" "${long[@]}" --output "$tmp/term" --requests-csv >/dev/null 2>&1 &
pid=$!
while kill -0 $pid 2>/dev/null && [ ! -e "$tmp/term/requests.csv.new.partial" ]; do sleep 0.1; done
check "SIGTERM: sent while the run writes its partial file" test -e "$tmp/term/requests.csv.new.partial"
kill -TERM $pid
wait $pid
rc=$?
check "SIGTERM: exit 143" test $rc -eq 143
check "SIGTERM: an existing directory stays, empty" bash -c "test -d '$tmp/term' && test -z \"\$(ls -A '$tmp/term')\""

# ---- provenance -----------------------------------------------------------------
(cd "$src/examples" && "$bin" run quickstart.json "${short[@]}" --set clients[0].rate=250 --seed 7 \
   --output "$tmp/p1" >/dev/null 2>&1)
check "scenario.json is written beside summary.json" test -s "$tmp/p1/scenario.json"
(cd / && "$bin" run "$tmp/p1/scenario.json" --output "$tmp/p2" >/dev/null 2>&1)
check "the effective scenario, run from another directory, reproduces summary.json byte for byte" \
  cmp -s "$tmp/p1/summary.json" "$tmp/p2/summary.json"
# Expected: quickstart.json's warm-up (5 s) and max_wait_ms (100, the
# thesis' MAX_WAIT_TIME), resnet50's input in the profile (3 x 224 x 224
# float32 = 602112 bytes) and this command's --seed and --set.
check "the effective scenario fills defaults (mps, max_wait_ms, warm-up, payloads) and lists the overrides" \
  py "d['cluster']['mps'] is False and d['dispatch']['max_wait_ms'] == 100 and d['clients'][2]['warmup_s'] == 5 and d['clients'][0]['input_bytes'] == 602112 and d['seed'] == 7 and d['overrides_applied'][-1] == 'clients[0].rate=250'" "$tmp/p1/scenario.json"
check "summary.json records seed, overrides, cluster, arrivals and warm-up" \
  py "d['seed'] == 7 and d['setup']['overrides'][-1] == 'clients[0].rate=250' and d['setup']['cluster']['mps'] is False and d['setup']['cluster']['interference'] is None and d['setup']['clients'][1]['arrival'] == 'gamma' and d['setup']['clients'][1]['cv'] == 2 and d['setup']['clients'][0]['warmup_s'] == 5" "$tmp/p1/summary.json"
check "summary.json names files by base name and SHA-256, not by path" \
  py "d['setup']['profiles'][0]['file'] == 'v100_thesis.json' and len(d['setup']['profiles'][0]['sha256']) == 64 and '/' not in json.dumps(d['setup'])" "$tmp/p1/summary.json"
"$bin" run "$q" "${short[@]}" --json >"$tmp/j.out" 2>/dev/null
check "run --json prints the summary on stdout" py "d['models'][0]['model'] == 'resnet50' and 'warnings' in d" "$tmp/j.out"

# ---- planned versus offered rate ---------------------------------------------------
# The thesis' clients sent less than their target (Table 4.1: 800 -> 711 req/s):
# the placement plans for 800 while the client sends 711.
cat >"$tmp/planned.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 2, "gpu_type": "v100"},
 "placement": {"policy": "dedicated"},
 "clients": [{"model": "resnet50", "rate": 711, "planned_rate": 800, "slo_ms": 200, "duration_s": 5, "warmup_s": 1}]}
JSON
"$bin" run "$tmp/planned.json" --output "$tmp/planned" >"$tmp/pl.out" 2>&1
check "planned_rate: the placement expects the planned rate, the client sends the offered one" \
  py "d['models'][0]['planned_rps'] == 800 and d['models'][0]['offered_rps'] == 711 and abs(d['models'][0]['expected_goodput_rps'] - 800) < 1e-6 and 690 < d['models'][0]['throughput_rps'] < 730" "$tmp/planned/summary.json"
# Poisson at 711 req/s for the 5 s window: 3555 requests expected, standard
# deviation sqrt(3555) = 60; four of them either side. Every one is served
# (dedicated planned for 800 >= 711).
check "planned_rate: the client sends a Poisson count around 711 x 5 s, all of it served" \
  py "abs(d['models'][0]['requests']['measured'] - 3555) <= 4 * 3555 ** 0.5 and d['models'][0]['requests']['completed'] == d['models'][0]['requests']['measured']" "$tmp/planned/summary.json"
check "planned_rate: the table shows a planned column" grep -qE "^model +slo_ms +offered +planned" "$tmp/pl.out"

# --unset removes a field so that its default applies; --set and --unset apply in
# command-line order. The quickstart's router+dedicated scenario becomes Symphony in
# one command, and runs exactly as the same document written by hand.
"$bin" run "$src/examples/quickstart.json" --unset placement --unset dispatch.max_wait_ms \
  --set dispatch.policy=symphony --output "$tmp/unset" >/dev/null 2>&1
check "unset: placement-based scenario switched to symphony runs" test $? -eq 0
check "unset: the summary names dispatch symphony and no placement" \
  py "d['dispatch']['policy'] == 'symphony' and d['placement']['policy'] == 'none'" "$tmp/unset/summary.json"
check "unset: the effective scenario has no placement and records the unsets" \
  py "'placement' not in d and d['overrides_applied'][:2] == ['unset placement', 'unset dispatch.max_wait_ms']" \
  "$tmp/unset/scenario.json"
python3 - "$src/examples/quickstart.json" "$tmp/by_hand.json" <<'PYEOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
del d["placement"]
d["dispatch"] = {"policy": "symphony"}
base = os.path.dirname(os.path.abspath(sys.argv[1]))
d["profiles"] = [os.path.join(base, p) for p in d["profiles"]]
d["network"]["curve"] = os.path.join(base, d["network"]["curve"])
json.dump(d, open(sys.argv[2], "w"))
PYEOF
"$bin" run "$tmp/by_hand.json" --output "$tmp/hand" >/dev/null 2>&1
check "unset: same per-model results as the document written without placement" \
  python3 -c "import json,sys; a=json.load(open('$tmp/unset/summary.json')); b=json.load(open('$tmp/hand/summary.json')); sys.exit(0 if a['models'] == b['models'] and a['engine']['events'] == b['engine']['events'] else 1)"
"$bin" run "$src/examples/quickstart.json" --unset placement --set placement.policy=usher --json \
  >"$tmp/order.json" 2>/dev/null
check "unset then set: the later --set wins (placement usher)" py "d['placement']['policy'] == 'usher'" "$tmp/order.json"
"$bin" run "$src/examples/quickstart.json" --set placement.policy=usher --unset placement --json \
  >"$tmp/order2.json" 2>/dev/null
check "set then unset: the later --unset wins (default placement dedicated)" \
  py "d['placement']['policy'] == 'dedicated'" "$tmp/order2.json"
bad "unset of a misspelt field" \
  'clustersim run: --unset placment: the scenario has no field "placment" (did you mean "placement"?)' \
  run "$src/examples/quickstart.json" --unset placment
bad "unset past the end of an array" "clustersim run: --unset clients[3]: clients has no element [3]" \
  run "$src/examples/quickstart.json" --unset 'clients[3]'

# A seed of 16 digits survives the effective scenario (cJSON alone writes 15
# significant digits and would change it).
"$bin" run "$src/examples/quickstart.json" --set seed=9007199254740991 --output "$tmp/bigseed" >/dev/null 2>&1
check "a 16-digit seed is written whole" grep -q '"seed":.9007199254740991,' "$tmp/bigseed/scenario.json"
"$bin" run "$tmp/bigseed/scenario.json" --output "$tmp/bigseed2" >/dev/null 2>&1
check "...and its effective scenario reproduces the summary" cmp -s "$tmp/bigseed/summary.json" "$tmp/bigseed2/summary.json"

# outputs.percentile_sketch: percentiles within the stated relative error of
# the exact run's (same seed, same requests), max and mean exactly equal, the
# mode in the summary and the table; an exact run's summary has no such key.
"$bin" run "$src/examples/quickstart.json" --output "$tmp/exact" >/dev/null 2>&1
"$bin" run "$src/examples/quickstart.json" --set outputs.percentile_sketch=0.01 \
  --output "$tmp/sketch" > "$tmp/sketch.txt" 2>&1
check "sketch: exits 0" test $? -eq 0
cat > "$tmp/sketch.py" <<'PY'
import json, sys
e, k = (json.load(open(p)) for p in sys.argv[1:3])
assert "percentiles" not in e and k["percentiles"] == {"mode": "sketch", "relative_error": 0.01}
n = 0
for me, mk in zip(e["models"] + [e["total"]], k["models"] + [k["total"]]):
    for q in ("p50", "p90", "p95", "p99"):
        a, b = me["latency_ms"][q], mk["latency_ms"][q]
        assert abs(b - a) <= 0.01 * a * (1 + 1e-9), (me["model"], q, a, b)
        n += 1
    assert me["latency_ms"]["max"] == mk["latency_ms"]["max"]
    assert me["latency_ms"]["mean"] == mk["latency_ms"]["mean"]
assert n >= 8
PY
check "sketch: percentiles within 1 % of the exact run, max and mean equal" \
  python3 "$tmp/sketch.py" "$tmp/exact/summary.json" "$tmp/sketch/summary.json"
check "sketch: the table says so" grep -q "from a quantile sketch: each within 1 % of the exact value" "$tmp/sketch.txt"
finish
