#!/usr/bin/env bash
# The CLI as a user meets it: exit codes, messages, outputs, determinism.
# Usage: test_cli.sh CLUSTERSIM_BINARY SOURCE_ROOT
. "$(dirname "$0")/harness.sh"
q="$src/examples/quickstart.json"

"$bin" --help >"$tmp/help" 2>&1
check "--help exits 0 and lists run" grep -q "run SCENARIO" "$tmp/help"
"$bin" run --help >"$tmp/help" 2>&1
check "run --help documents --set" grep -q -- "--set" "$tmp/help"
check "--version" test "$("$bin" --version)" = "clustersim $(sed -n "s/^  version : '\(.*\)',/\1/p" "$src/meson.build")"

"$bin" run "$q" --output "$tmp/a" --set clients[0].duration_s=5 >"$tmp/a.out" 2>"$tmp/a.err"
check "run exits 0" test $? -eq 0
check "table printed" grep -q "^resnet50 " "$tmp/a.out"
# No progress when not a terminal: stderr holds the warnings only (alexnet's
# plan_gap, README "Reading the quickstart").
check "stderr quiet when not a terminal" bash -c "! grep -v '^clustersim: warning ' '$tmp/a.err'"
check "summary.json written" test -s "$tmp/a/summary.json"
check "summary.json: the random streams' version (rng_stream_version 2, src/sim/rng.h)" py "d['rng_stream_version'] == 2 and list(d)[:3] == ['clustersim_version', 'seed', 'rng_stream_version']" "$tmp/a/summary.json"
check "no requests.csv unless asked" test ! -e "$tmp/a/requests.csv"
"$bin" run "$q" --output "$tmp/b" --set clients[0].duration_s=5 >/dev/null 2>&1
check "same scenario and seed: byte-identical summary.json" cmp -s "$tmp/a/summary.json" "$tmp/b/summary.json"
"$bin" run "$q" --output "$tmp/c" --seed 2 --set clients[0].duration_s=5 >/dev/null 2>&1
check "--seed changes the results" bash -c "! cmp -s '$tmp/a/summary.json' '$tmp/c/summary.json'"
check "--seed recorded" grep -q '"seed":	2' "$tmp/c/summary.json"
"$bin" run "$q" --output "$tmp/d" --requests-csv --set clients[0].duration_s=2 >/dev/null 2>&1
check "requests.csv has a header and one row per request" \
  test "$(($(wc -l <"$tmp/d/requests.csv") - 1))" -eq "$(python3 -c "import json;print(json.load(open('$tmp/d/summary.json'))['total']['requests']['generated'])")"

check "gpus_over_time.csv written" grep -q "^time_s,gpus_used,busy_gpus" "$tmp/a/gpus_over_time.csv"
check "gpu_timeseries.csv written" grep -q "^time_s,gpu,busy_fraction,sm_use,memory_pct" "$tmp/a/gpu_timeseries.csv"
check "worker_latency.csv has rows" test "$(wc -l <"$tmp/a/worker_latency.csv")" -gt 1
check "autoscaling signals in the summary" grep -q '"advice_add_gpus"' "$tmp/a/summary.json"
"$bin" search "$q" --set clients[0].duration_s=3 --set clients[1].duration_s=3 --set clients[2].duration_s=3 \
  --set dispatch.max_wait_ms=20 --max-multiplier 4 --tolerance 0.1 --json >"$tmp/search.json" 2>"$tmp/search.err"
check "search exits 0 and reports a goodput" python3 -c "
import json,sys; d=json.load(open('$tmp/search.json')); sys.exit(0 if d['probes'] and d['passed'] and d['goodput_rps'] > 0 else 1)"
# alexnet's 100 ms SLO cannot hold with a 100 ms MAX_WAIT_TIME at low load: no load passes,
# and the probes at loads too low to measure a request must not count as passes.
"$bin" search "$q" --set clients[0].duration_s=3 --set clients[1].duration_s=3 --set clients[2].duration_s=3 \
  --max-multiplier 4 --tolerance 0.1 --json >"$tmp/search0.json" 2>"$tmp/search0.err"
check "search: no passing probe gives no goodput" python3 -c "
import json,sys; d=json.load(open('$tmp/search0.json'))
sys.exit(0 if not d['passed'] and d['goodput_rps'] is None and not any(p['pass'] for p in d['probes'])
         and not d['probes'][-1]['measured_all'] else 1)"
check "search: no passing probe is a warning" grep -q "warning \[no_goodput\]" "$tmp/search0.err"

"$bin" place --list >"$tmp/list" 2>&1
check "place --list names usher, milp and dedicated" bash -c "grep -q '^usher ' '$tmp/list' && grep -q '^milp ' '$tmp/list' && grep -q '^dedicated ' '$tmp/list'"
cat >"$tmp/usher.json" <<JSON
{"profiles": ["$src/data/profiles/v100_thesis.json"], "cluster": {"gpus": 4, "gpu_type": "v100", "mps": true},
 "placement": {"policy": "usher"},
 "clients": [{"model": "alexnet", "rate": 400, "slo_ms": 200, "duration_s": 5},
             {"model": "gpt2", "rate": 400, "slo_ms": 200, "duration_s": 5},
             {"model": "resnet50", "rate": 400, "slo_ms": 200, "duration_s": 5},
             {"model": "t5", "rate": 400, "slo_ms": 200, "duration_s": 5}]}
JSON
"$bin" place "$tmp/usher.json" --json >"$tmp/place.json" 2>"$tmp/place.err"
check "place --json: Usher expects 800 req/s on the thesis example" python3 -c "
import json,sys; d=json.load(open('$tmp/place.json')); sys.exit(0 if abs(d['expected_goodput_rps'] - 800) < 0.01 and len(d['gpus']) == 4 else 1)"
# time_limit_s 1e6: no wall-clock limit on GLPK (the default 60 s could cut a
# solve short on a slow machine and change the answer); the thesis' 1092.04.
"$bin" place "$tmp/usher.json" --set placement.policy=milp --set placement.time_limit_s=1000000 \
  >"$tmp/place.txt" 2>&1
check "place prints the MILP's 1092.04" grep -q "^total .* 1092.04" "$tmp/place.txt"
# The MILP places gpt2 nowhere (model_unserved) and t5 partly: of the thesis'
# 1092.04 req/s, alexnet and resnet50 get their whole 400, t5 the remaining
# 292.04 of its 400, 73.0 %.
check "place warns that the MILP serves t5 only partly" grep -q \
  '^clustersim: warning \[plan_partial\] t5: placement "milp" serves it only partly: it expects a goodput of 292 of the 400 req/s it planned for (73.0 %)$' \
  "$tmp/place.txt"
check "place: a model without replica is model_unserved, not plan_partial" bash -c \
  "grep -q 'model_unserved\] gpt2' '$tmp/place.txt' && ! grep -q 'plan_partial\] gpt2' '$tmp/place.txt'"
"$bin" place "$tmp/usher.json" --set placement.policy=milp --set placement.time_limit_s=1000000 \
  --json >"$tmp/place_milp.json" 2>/dev/null
check "place --json lists plan_partial" python3 -c "
import json,sys; w=json.load(open('$tmp/place_milp.json'))['warnings']
sys.exit(0 if [x['model'] for x in w if x['code'] == 'plan_partial'] == ['t5'] else 1)"
# One replica of batch 100 running 0.2 x 100 + 10 = 30 ms serves 100 / 0.03 =
# 3333.3 req/s: of 5000 req/s that is 66.7 %; of 3000 it is all.
cat >"$tmp/lin.json" <<JSON
{"format": "clustersim-profile", "version": 1, "source": "test",
 "gpu_types": [{"name": "gpu", "description": "test GPU", "sm_count": 80, "memory_bytes": 17179869184}],
 "models": [{"gpu": "gpu", "model": "a", "linear": {"alpha_ms": 0.2, "beta_ms": 10}}]}
JSON
cat >"$tmp/partial.json" <<JSON
{"profiles": ["$tmp/lin.json"], "cluster": {"gpus": 1, "gpu_type": "gpu"},
 "placement": {"policy": "manual", "replicas": [{"model": "a", "gpu": 0, "batch": 100}]},
 "clients": [{"model": "a", "rate": 5000, "slo_ms": 100, "duration_s": 1}]}
JSON
"$bin" place "$tmp/partial.json" >"$tmp/partial.out" 2>"$tmp/partial.err"
check "place: 3333 of 5000 req/s planned is partial" grep -qx \
  'clustersim: warning \[plan_partial\] a: placement "manual" serves it only partly: it expects a goodput of 3333 of the 5000 req/s it planned for (66.7 %)' \
  "$tmp/partial.err"
"$bin" place "$tmp/partial.json" --set clients[0].rate=3000 >/dev/null 2>"$tmp/whole.err"
check "place: 3000 of 3000 req/s planned is not partial" test ! -s "$tmp/whole.err"
"$bin" calibrate >"$tmp/calib.txt" 2>&1
check "calibrate prints the per-pair errors" grep -q "^alexnet+resnet50" "$tmp/calib.txt"
check "calibrate prints the share rule's check" grep -q "^pooled, strict" "$tmp/calib.txt"
"$bin" calibrate --points "$tmp/points.csv" >/dev/null 2>&1
check "calibrate --points: 750 latencies, every variant" python3 -c "
import csv,sys; r=list(csv.DictReader(open('$tmp/points.csv')))
v=['table_ms','model_ms','none_ms','lopo_ms','loo-const_ms']
sys.exit(0 if len(r)==750 and all(k in r[0] for k in v) and
         all(float(x['none_ms'])==float(x['solo_ms']) or abs(float(x['none_ms'])/float(x['solo_ms'])-1)<1e-6 for x in r) else 1)"
t19="$src/data/traces/maf2019_vhive_loader_sample500/invocations.csv"
"$bin" trace inspect "$t19" --json >"$tmp/inspect.json" 2>"$tmp/inspect.err"
# 3,037,902: the sum of every minute column of the file, counted here.
check "trace inspect --json: 3,037,902 invocations in the MAF 2019 excerpt" python3 -c "
import csv,json,sys; d=json.load(open('$tmp/inspect.json'))
rows=list(csv.reader(open('$t19'))); n=sum(int(x) for r in rows[1:] for x in r[4:])
sys.exit(0 if d['invocations'] == n == 3037902 else 1)"
"$bin" trace inspect "$t19" >"$tmp/inspect.txt" 2>&1
check "trace inspect prints a table" grep -q "busiest functions" "$tmp/inspect.txt"
printf 'app,func,end_timestamp,duration\na,f,10,-1\n' >"$tmp/neg.csv"

bad "unknown command" 'unknown command "runn"' runn
bad "no scenario" "expected a SCENARIO file" run
bad "missing file" "nope.json: cannot read" run "$tmp/nope.json"
bad "bad --set value" "clients[0].rate: expected a number > 0, got -5" run "$q" --set clients[0].rate=-5
bad "misspelt --set field" 'unknown field "rat" (did you mean "rate"?)' run "$q" --set clients[0].rat=5
bad "bad --seed" "--seed x: expected an integer >= 0" run "$q" --seed x
bad "unknown flag" "Unknown option --sed" run "$q" --sed 3
"$bin" run "$q" --output "$tmp/never" --set clients[0].rate=-5 >/dev/null 2>&1
check "no output directory on failure" test ! -e "$tmp/never"
bad "trace inspect: negative duration" "neg.csv: line 2:" trace inspect "$tmp/neg.csv"
bad "trace inspect: bad format name" "clustersim trace inspect:" trace inspect "$t19" --format maf2020
bad "trace: no subcommand" "expected a subcommand: inspect" trace
python3 -c "
import json; d=json.load(open('$tmp/usher.json')); d['dispatch']={'policy':'symphony'}
json.dump(d, open('$tmp/sym_mps.json','w'))
del d['cluster']['mps']; json.dump(d, open('$tmp/sym.json','w'))"
bad "symphony refuses cluster.mps, which it would ignore" 'cluster.mps: dispatch "symphony" runs one batch at a time on each GPU' run "$tmp/sym_mps.json"
bad "place: symphony has no placement" 'dispatch "symphony" runs every model on every GPU and uses no placement' place "$tmp/sym.json"
bad "calibrate: missing file" "nope.json" calibrate --interference "$tmp/nope.json"
bad "search: bad criterion" "--criterion p95: expected p99 or bad-rate" search "$q" --criterion p95
bad "search: no scenario" "expected exactly one SCENARIO file" search
printf '{"seed": 1,' >"$tmp/broken.json"
bad "broken JSON" "broken.json: line 1, column 12: not valid JSON" run "$tmp/broken.json"

finish
