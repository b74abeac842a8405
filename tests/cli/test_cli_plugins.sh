#!/usr/bin/env bash
# Plug-ins (docs/extending.md, "Plug-ins"): the two policies of
# examples/extending, built as plug-ins, through run, place, search,
# provision and sweep (-j, shards, the experiment's field), checked against
# the examples' own programs, which drive the same policies through the
# library; the reproducibility record; and every refusal of a plug-in.
# Usage: test_cli_plugins.sh CLUSTERSIM_BINARY SOURCE_ROOT FIRST_FIT.so JSQ.so
#        FIRST_FIT_PROGRAM JSQ_PROGRAM DIR_OF_BAD_PLUGINS TICK_CONTROLLER.so
. "$(dirname "$0")/harness.sh"
ff=$3
jsq=$4
ff_prog=$5
jsq_prog=$6
badd=$7
tick=$8
prof="$src/data/profiles/v100_thesis.json"

# ---- the library's driver: what the programs print ----------------------------------
"$ff_prog" "$prof" >"$tmp/ff_prog.out" 2>&1
check "the first_fit program's own checks pass" test $? -eq 0
"$jsq_prog" "$prof" >"$tmp/jsq_prog.out" 2>&1
check "the jsq program's own checks pass" test $? -eq 0
# first_fit's table: model, rate, first-fit (wao), first-fit (wsm), usher.
col() { awk -v c="$2" '$1 ~ /^(resnet50|alexnet|vgg19|inception_v3|total)$/ { print $1, $c }' "$1"; }

# The scenario of first_fit.c's program, as a file.
cat >"$tmp/ff.json" <<JSON
{"seed": 11, "profiles": ["$prof"], "network": {"curve": "gcp_n1_standard_16"},
 "cluster": {"gpus": 4, "gpu_type": "v100", "mps": true}, "dispatch": {"max_wait_ms": 20},
 "placement": {"policy": "first-fit-creq", "slo_fraction": 0.25},
 "clients": [
  {"model": "resnet50", "rate": 800, "slo_ms": 200, "duration_s": 10, "warmup_s": 1},
  {"model": "alexnet", "rate": 1500, "slo_ms": 100, "duration_s": 10, "warmup_s": 1},
  {"model": "vgg19", "rate": 300, "slo_ms": 200, "duration_s": 10, "warmup_s": 1},
  {"model": "inception_v3", "rate": 400, "slo_ms": 200, "duration_s": 10, "warmup_s": 1}]}
JSON
# ...and of jsq.c's four-GPU comparison.
cat >"$tmp/jsq.json" <<JSON
{"seed": 3, "profiles": ["$prof"], "cluster": {"gpus": 4, "gpu_type": "v100"},
 "dispatch": {"policy": "jsq", "max_batch": 16},
 "clients": [{"model": "resnet50", "rate": 3000, "slo_ms": 100, "arrival": "constant",
              "duration_s": 10, "warmup_s": 1}]}
JSON

# ---- run ------------------------------------------------------------------------------
bad "run without the plug-in: the policy is unknown" \
  'placement.policy: unknown policy "first-fit-creq"' run "$tmp/ff.json"
"$bin" --plugin "$ff" run "$tmp/ff.json" -o "$tmp/r1" >"$tmp/r1.out" 2>"$tmp/r1.err"
check "run --plugin first_fit.so: exit 0" test $? -eq 0
col "$tmp/r1.out" 5 >"$tmp/cli_wao"
col "$tmp/ff_prog.out" 3 >"$tmp/lib_wao"
check "run: per-model goodput of first fit (WAO) = the library driver's, model by model" \
  cmp "$tmp/cli_wao" "$tmp/lib_wao"
check "run: the comparison is not empty (5 rows)" test "$(wc -l <"$tmp/lib_wao")" -eq 5
"$bin" run "$tmp/ff.json" --plugin "$ff" --set placement.metric='"wsm"' >"$tmp/r2.out" 2>/dev/null
col "$tmp/r2.out" 5 >"$tmp/cli_wsm"
col "$tmp/ff_prog.out" 4 >"$tmp/lib_wsm"
check "run: --plugin after the command; WSM goodput = the library driver's" \
  cmp "$tmp/cli_wsm" "$tmp/lib_wsm"
CLUSTERSIM_PLUGINS="$jsq" "$bin" run "$tmp/jsq.json" >"$tmp/j.out" 2>/dev/null
check "run: CLUSTERSIM_PLUGINS=jsq.so: exit 0" test $? -eq 0
# A plug-in's parameters with two bad values: one error naming both
# (CsErrorList, as jsq.c reads them), each value's bound the policy's own.
bad "a plug-in's two bad parameters: one error" \
  "jsq.json: 2 problems in dispatch:" \
  --plugin "$jsq" run "$tmp/jsq.json" --set dispatch.max_batch=0 --set dispatch.max_wait_ms=-1
check "a plug-in's two bad parameters: each on its line" python3 -c "
import sys
want = ('2 problems in dispatch:\\n'
        '  dispatch.max_batch: expected an integer in [1, 4096], got 0\\n'
        '  dispatch.max_wait_ms: expected a number in [0, 1e+06], got -1\\n')
sys.exit(0 if want in open(sys.argv[1]).read() else 1)" "$tmp/bad.err"
# The catalogue shows the plug-in's own lines (cs_params_doc).
"$bin" --plugin "$jsq" policies jsq >"$tmp/pol.out" 2>&1
check "policies jsq: the parameter's description" grep -qF "largest batch sent to a GPU" "$tmp/pol.out"
lib_jsq=$(awk '$1 == "jsq" { print $3, $4 }' "$tmp/jsq_prog.out")
cli_jsq=$(awk '$1 == "resnet50" { print $5, $10 }' "$tmp/j.out")
check "run: jsq's goodput and p99 = the library driver's ($lib_jsq)" test "$cli_jsq" = "$lib_jsq"
check "run: the jsq comparison is not empty" test "$(echo $lib_jsq | wc -w)" -eq 2

# ---- reproducibility: the record, determinism, rerun of the effective scenario -------
sha=$(sha256sum "$ff" | cut -d' ' -f1)
real=$(readlink -f "$ff")
check "summary.json: setup.plugins names first_fit.so by base name and SHA-256" \
  py "d['setup']['plugins'] == [{'file': 'first_fit.so', 'sha256': '$sha'}]" "$tmp/r1/summary.json"
check "scenario.json: plugins holds its absolute path and SHA-256" \
  py "d['plugins'] == [{'path': '$real', 'sha256': '$sha'}]" "$tmp/r1/scenario.json"
"$bin" --plugin "$ff" run "$tmp/ff.json" -o "$tmp/r1b" >/dev/null 2>&1
check "determinism: the same scenario and seed give the same summary.json, byte for byte" \
  cmp "$tmp/r1/summary.json" "$tmp/r1b/summary.json"
(cd / && "$bin" run "$tmp/r1/scenario.json" -o "$tmp/r1c" >/dev/null 2>"$tmp/r1c.err")
check "the effective scenario runs without --plugin (its field loads the plug-in)" test $? -eq 0
check "...and gives the same summary.json" cmp "$tmp/r1/summary.json" "$tmp/r1c/summary.json"
"$bin" --plugin "$ff" run "$tmp/r1/scenario.json" >/dev/null 2>"$tmp/twice.err"
check "the same file as --plugin and in the field loads once (no name collision)" test $? -eq 0
sed "s/$sha/$(printf '0%.0s' $(seq 64))/" "$tmp/r1/scenario.json" >"$tmp/changed.json"
"$bin" run "$tmp/changed.json" >/dev/null 2>"$tmp/changed.err"
check "a recorded SHA-256 that differs: the run still runs (exit 0)" test $? -eq 0
check "...with a plugin_changed warning naming the file and both hashes" \
  grep -qF "warning [plugin_changed]: $tmp/changed.json: plugins[0]: plug-in $real has SHA-256 $sha, the scenario recorded 000" "$tmp/changed.err"

# A run's decisions replayed: the log's scenario names the plug-in (absolute
# path), so the replay loads it with no flag.
sed 's/"rate": 3000/"rate": 300/; s/"duration_s": 10, "warmup_s": 1/"duration_s": 1/' "$tmp/jsq.json" >"$tmp/jsq_small.json"
"$bin" --plugin "$jsq" run "$tmp/jsq_small.json" --decisions "$tmp/d.jsonl" >/dev/null 2>&1
check "run --decisions with the plug-in's dispatch: exit 0" test $? -eq 0
"$bin" replay "$tmp/d.jsonl" --backend emulated >"$tmp/replay.out" 2>"$tmp/replay.err"
check "replay of its decisions without --plugin: exit 0 (was: plugins[0] is not loaded)" test $? -eq 0

# ---- place, search, provision -----------------------------------------------------------
"$bin" --plugin "$ff" place "$tmp/ff.json" >"$tmp/place.out" 2>&1
check "place: the plug-in's placement (its log: alexnet on gpu 0)" \
  grep -q "alexnet: batch 128 on gpu 0" "$tmp/place.out"
"$bin" --plugin "$ff" place --list >"$tmp/list.out" 2>&1
check "place --list: the plug-in's policy with its description, after the built-ins" \
  test "$(grep -v '^$' "$tmp/list.out" | grep -v '^(clustersim policies' | tail -n 1 | cut -c1-30)" = "first-fit-creq first fit by Cr"
"$bin" --plugin "$ff" search "$tmp/ff.json" --set placement.metric='"wsm"' >"$tmp/search.out" 2>&1
check "search: with the plug-in's policy, exit 0" test $? -eq 0
"$bin" --plugin "$jsq" provision "$tmp/jsq.json" --types v100 >"$tmp/prov.out" 2>&1
check "provision: with the plug-in's dispatch, exit 0" test $? -eq 0

# ---- sweep: plug-in policies beside a built-in -----------------------------------------------
cat >"$tmp/exp.json" <<JSON
{"name": "plug-ins", "base": "ff.json",
 "variants": [
   {"name": "first-fit-creq-wao", "set": {"placement.metric": "wao"}},
   {"name": "first-fit-creq-wsm", "set": {"placement.metric": "wsm"}},
   {"name": "usher", "unset": ["placement"], "set": {"placement": {"policy": "usher"}}}],
 "seeds": [11]}
JSON
"$bin" --plugin "$ff" sweep "$tmp/exp.json" -j 2 -o "$tmp/sw" >"$tmp/sw.out" 2>&1
check "sweep --plugin -j 2: exit 0" test $? -eq 0
check "runs.csv: the plug-in's runs ran (status ok) under their variant names" \
  test "$(grep -c '^[01],first-fit-creq-w[as][om],11,[a-z0-9_]*,ok,' "$tmp/sw/runs.csv")" -eq 10
goodput_of() {
  python3 -c "
import csv, sys
for r in csv.DictReader(open('$tmp/sw/runs.csv')):
    if r['variant'] == '$1': print(r['model'], '%.1f' % float(r['goodput_rps']))"
}
goodput_of first-fit-creq-wao >"$tmp/sw_wao"
goodput_of first-fit-creq-wsm >"$tmp/sw_wsm"
goodput_of usher >"$tmp/sw_usher"
col "$tmp/ff_prog.out" 5 >"$tmp/lib_usher"
check "sweep: first fit (WAO) per model = the library driver's" cmp "$tmp/sw_wao" "$tmp/lib_wao"
check "sweep: first fit (WSM) per model = the library driver's" cmp "$tmp/sw_wsm" "$tmp/lib_wsm"
check "sweep: the built-in usher beside them = the library driver's" cmp "$tmp/sw_usher" "$tmp/lib_usher"
check "sweep.json: the plug-in with its SHA-256" \
  py "d['plugins'] == [{'file': 'first_fit.so', 'sha256': '$sha'}]" "$tmp/sw/sweep.json"
"$bin" --plugin "$ff" sweep "$tmp/exp.json" -j 1 -o "$tmp/sw1" >/dev/null 2>&1
check "sweep -j 1 and -j 2: the same outputs, byte for byte" diff -r "$tmp/sw" "$tmp/sw1"
# The experiment's own field, relative to the experiment file.
mkdir -p "$tmp/exp2/lib"
cp "$ff" "$tmp/exp2/lib/first_fit.so"
cp "$tmp/ff.json" "$tmp/exp2/ff.json"
sed 's/"seeds"/"plugins": ["lib\/first_fit.so"], "seeds"/' "$tmp/exp.json" >"$tmp/exp2/exp.json"
"$bin" sweep "$tmp/exp2/exp.json" -o "$tmp/sw2" >/dev/null 2>&1
check "sweep: the experiment's \"plugins\" field loads it: exit 0" test $? -eq 0
check "...the same runs.csv as with --plugin" cmp "$tmp/sw/runs.csv" "$tmp/sw2/runs.csv"
# The base scenario's own field, relative to the base scenario.
mkdir -p "$tmp/exp4/scenarios/lib"
cp "$ff" "$tmp/exp4/scenarios/lib/first_fit.so"
sed 's/"seed": 11,/"seed": 11, "plugins": ["lib\/first_fit.so"],/' "$tmp/ff.json" >"$tmp/exp4/scenarios/ff.json"
sed 's/"base": "ff.json"/"base": "scenarios\/ff.json"/' "$tmp/exp.json" >"$tmp/exp4/exp.json"
"$bin" sweep "$tmp/exp4/exp.json" -j 2 -o "$tmp/sw4" >/dev/null 2>&1
check "sweep: the base scenario's \"plugins\" (relative to it) loads it: exit 0" test $? -eq 0
check "...the same runs.csv as with --plugin" cmp "$tmp/sw/runs.csv" "$tmp/sw4/runs.csv"
# Shards, each process loading it through the flag, merged.
"$bin" --plugin "$ff" sweep "$tmp/exp.json" --shard 1/2 -o "$tmp/s1" >/dev/null 2>&1
"$bin" sweep "$tmp/exp.json" --plugin "$ff" --shard 2/2 -o "$tmp/s2" >/dev/null 2>&1
"$bin" sweep merge -o "$tmp/merged" "$tmp/s1" "$tmp/s2" >/dev/null 2>&1
check "sweep shards with --plugin, merged == the unsharded outputs" diff -r "$tmp/sw" "$tmp/merged"
# A shard that ran another build of the plug-in (its bytes differ).
mkdir -p "$tmp/other"
cp "$ff" "$tmp/other/first_fit.so"
echo >>"$tmp/other/first_fit.so"
"$bin" sweep "$tmp/exp.json" --plugin "$tmp/other/first_fit.so" --shard 2/2 -o "$tmp/s2x" >/dev/null 2>&1
bad "sweep merge: shards that loaded different builds of the plug-in" \
  "are shards of different sweeps: their shard.json differ in sweep.plugins" \
  sweep merge -o "$tmp/m2" "$tmp/s1" "$tmp/s2x"
bad "place without the plug-in: the policy is unknown" \
  'placement.policy: unknown policy "first-fit-creq"' place "$tmp/ff.json"

# ---- a controller as a plug-in ----------------------------------------------------------
# tick-notes (tests/cli/plugins/tick_controller.c) notes each model's arrivals at
# first_s and every period_s after. Constant arrivals at rate r from start_s make
# arrival k (from 0) at start_s + k / r, so at time t it has seen
# min(n, floor((t - start_s) r) + 1) of its n = r x duration_s (0 before start_s).
cat >"$tmp/tick.json" <<JSON
{"seed": 1, "profiles": ["$prof"], "cluster": {"gpus": 2, "gpu_type": "v100"},
 "controller": {"policy": "tick-notes", "first_s": 0.005, "period_s": 1},
 "clients": [{"model": "resnet50", "rate": 100, "slo_ms": 200, "arrival": "constant", "duration_s": 3},
             {"model": "alexnet", "rate": 40, "slo_ms": 200, "arrival": "constant", "duration_s": 3,
              "start_s": 0.5}]}
JSON
bad "run without the controller's plug-in: the policy is unknown" \
  'controller.policy: unknown controller "tick-notes"' run "$tmp/tick.json"
"$bin" --plugin "$tick" run "$tmp/tick.json" -o "$tmp/tick" >"$tmp/tick.out" 2>&1
check "run --plugin tick_controller.so: exit 0" test $? -eq 0
check "the controller's notes: the closed-form arrival counts at each tick" python3 -c "
import json, math, sys
log = json.load(open(sys.argv[1]))['control']['log'].splitlines()
got = [(round(float(l.split()[0]), 6), l.split()[3], int(l.split()[5])) for l in log]
clients = [('resnet50', 100.0, 0.0), ('alexnet', 40.0, 0.5)]
want = []
for k in range(4):
    t = 0.005 + k
    for name, r, start in clients:
        seen = 0 if t < start else min(int(r * 3), math.floor((t - start) * r + 1e-9) + 1)
        want.append((round(t, 6), name, seen))
# The run ends once its requests are done: ticks after the last arrival's answer
# (here the one at 3.005 s) may or may not fire; the four from 0.005 s must.
sys.exit(0 if got[:len(want)] == want and len(got) <= len(want) + 2 else (print(got), 1)[1])" "$tmp/tick/summary.json"
check "the controller's parameters in the summary" py "d['control']['policy'] == 'tick-notes' and d['control']['params'] == {'first_s': 0.005, 'period_s': 1}" "$tmp/tick/summary.json"
"$bin" --plugin "$tick" policies tick-notes >"$tmp/tickpol.out" 2>&1
check "policies tick-notes: listed as a controller" grep -qF "tick-notes (controller)" "$tmp/tickpol.out"
check "policies tick-notes: its parameter's line" grep -qF "time between notes" "$tmp/tickpol.out"
bad "the controller's two bad parameters: one error" "tick.json: 2 problems in controller:" \
  --plugin "$tick" run "$tmp/tick.json" --set controller.first_s=-1 --set controller.period_s=0

# ---- refusals: exit 2, the file named, nothing on stdout -------------------------------
bad "a missing file" "clustersim: --plugin: plug-in $tmp/nope.so: cannot open it: No such file or directory" \
  --plugin "$tmp/nope.so" run "$tmp/ff.json"
echo "not a shared object" >"$tmp/text.so"
bad "a file that is not a shared object (GModule's message)" \
  "clustersim: --plugin: plug-in $tmp/text.so: cannot load it as a shared object:" \
  --plugin "$tmp/text.so" run "$tmp/ff.json"
bad "no ABI version symbol" "plug-in $badd/bad_no_abi.so: no cs_plugin_abi_version" \
  --plugin "$badd/bad_no_abi.so" run "$tmp/ff.json"
bad "no entry point" "plug-in $badd/bad_no_init.so: no entry point cs_plugin_init" \
  --plugin "$badd/bad_no_init.so" run "$tmp/ff.json"
bad "another ABI version: both versions said" \
  "plug-in $badd/bad_abi.so: built for plug-in ABI version 42, this clustersim has ABI version 1" \
  --plugin "$badd/bad_abi.so" run "$tmp/ff.json"
bad "the entry point returns FALSE: its message" \
  "plug-in $badd/bad_init_fails.so: cs_plugin_init failed: no licence for this cluster" \
  --plugin "$badd/bad_init_fails.so" run "$tmp/ff.json"
bad "a built-in's name, the refusal ignored by the plug-in" \
  "plug-in $badd/bad_collide.so: placement policy \"usher\": the registry already has a policy of that name (a built-in policy), so it cannot be a policy of plug-in bad_collide.so" \
  --plugin "$badd/bad_collide.so" run "$tmp/ff.json"
cp "$ff" "$tmp/ff_copy.so"
bad "another plug-in's name (the same policy in a second file)" \
  "plug-in $tmp/ff_copy.so: placement policy \"first-fit-creq\": the registry already has a policy of that name (a policy of plug-in first_fit.so), so it cannot be a policy of plug-in ff_copy.so" \
  --plugin "$ff" --plugin "$tmp/ff_copy.so" run "$tmp/ff.json"
CLUSTERSIM_PLUGINS="$tmp/gone.so" "$bin" run "$tmp/ff.json" >"$tmp/e.out" 2>"$tmp/e.err"
check "CLUSTERSIM_PLUGINS with a missing file: exit 2" test $? -eq 2
check "...naming the variable and the file" grep -qF "clustersim: CLUSTERSIM_PLUGINS: plug-in $tmp/gone.so: cannot open it" "$tmp/e.err"
bad "--plugin without a file" "clustersim: --plugin: expected a plug-in file (FILE.so) after it" run "$tmp/ff.json" --plugin
sed 's/"seed": 11,/"seed": 11, "plugins": ["missing.so"],/' "$tmp/ff.json" >"$tmp/field.json"
bad "the scenario's field: a missing file, named with the field" \
  "clustersim: $tmp/field.json: plugins[0]: \"missing.so\": plug-in $tmp/missing.so: cannot open it" run "$tmp/field.json"
sed 's/"seed": 11,/"seed": 11, "plugins": "first_fit.so",/' "$tmp/ff.json" >"$tmp/field2.json"
bad "the scenario's field: not an array" "field2.json: plugins: expected an array of plug-in paths" run "$tmp/field2.json"
sed 's/"seeds"/"plugins": ["nowhere.so"], "seeds"/' "$tmp/exp.json" >"$tmp/exp3.json"
bad "the experiment's field: a missing file" \
  "clustersim: $tmp/exp3.json: plugins[0]: plug-in $tmp/nowhere.so: cannot open it" sweep "$tmp/exp3.json"
check "a refused sweep writes nothing" test ! -e "$tmp/exp3"

finish
