#!/usr/bin/env bash
# The CLI's less common outputs: help paths (exit 0), profile show of
# interference and iGniter files and of a hand-made profile, and the text
# form of search for both the bad-rate criterion and a search where no load
# passes. Bad arguments and bad input
# files of every command are the table tests/cli/bad_inputs.tsv
# (docs/testing.md).
# Usage: test_cli_errors.sh CLUSTERSIM_BINARY SOURCE_ROOT
. "$(dirname "$0")/harness.sh"
q="$src/examples/quickstart.json"
short=(--set clients[0].duration_s=3 --set clients[1].duration_s=3 --set clients[2].duration_s=3)

# ---- help paths ---------------------------------------------------------------
"$bin" help >"$tmp/o" 2>"$tmp/e"
check "help: exit 0, usage on stdout" \
  bash -c "test $? -eq 0 && grep -q '^Usage: clustersim COMMAND' '$tmp/o' && test ! -s '$tmp/e'"
"$bin" trace --help >"$tmp/o" 2>"$tmp/e"
check "trace --help: exit 0, usage on stdout" \
  bash -c "test $? -eq 0 && grep -q '^Usage: clustersim trace inspect FILE' '$tmp/o'"

# ---- profile ------------------------------------------------------------------------------
# An interference file shown as text: the pairs column lists, per model, the
# models it has a measured pair with in either direction, as in the file.
"$bin" profile show igniter_v100 >"$tmp/ig.txt" 2>"$tmp/ig.err"
check "profile show interference file: exit 0" test $? -eq 0
check "profile show interference file: the measured-on line" \
  grep -q "^interference data (clustersim-interference), measured on NVIDIA Tesla V100" "$tmp/ig.txt"
python3 - "$src/data/profiles/igniter_v100.json" "$tmp/ig.txt" <<'PY' >"$tmp/ig.cmp"
import json, sys
d = json.load(open(sys.argv[1]))
want = {m["model"]: set() for m in d["models"]}
for p in d["pairs"]:
    want.setdefault(p["victim"], set()).add(p["aggressor"])
    want.setdefault(p["aggressor"], set()).add(p["victim"])
got = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 3 and f[0] in want:
        got[f[0]] = set() if f[2] == "-" else set(f[2].split(","))
print("same" if got == want else f"differ: {got} vs {want}")
PY
check "profile show interference file: pairs as in the file ($(cat "$tmp/ig.cmp"))" \
  grep -qx same "$tmp/ig.cmp"
"$bin" profile show igniter_v100_coefficients >"$tmp/co.txt" 2>&1
check "profile show iGniter file: GPU type and models as in the file" \
  py "open('$tmp/co.txt').read().find('iGniter measurements (clustersim-igniter) on GPU type ' + d['gpu_type'] + '\nmodels: ' + ', '.join(sorted(m['model'] if isinstance(m, dict) else m for m in d['models']))) >= 0" \
  "$src/data/profiles/igniter_v100_coefficients.json"
# A hand-made profile given on the command line: a GPU type without SM count
# or memory, batch sizes 1, 2, 3, 8 (a run of three and a single).
cat >"$tmp/mini.json" <<'JSON'
{"format": "clustersim-profile", "version": 1, "source": "hand-made",
 "gpu_types": [{"name": "tiny"}],
 "models": [{"gpu": "tiny", "model": "m", "batches": [{"batch": 1, "latency_ms": 1},
   {"batch": 2, "latency_ms": 1.5}, {"batch": 3, "latency_ms": 2}, {"batch": 8, "latency_ms": 5}]}]}
JSON
"$bin" profile show tiny --profile "$tmp/mini.json" >"$tmp/mini.txt" 2>&1
check "profile show: unknown SM count and memory said so" \
  grep -q "^GPU type tiny (mini): SM count unknown, memory unknown$" "$tmp/mini.txt"
check "profile show: batch sizes 1,2,3,8 as the range 1-3 and 8" grep -qE "^m +1-3,8 +1-5 " "$tmp/mini.txt"
"$bin" profile show tiny --profile "$tmp/mini.json" --json >"$tmp/mini.json.out" 2>&1
check "profile show --json: unknown SM count and memory are null" \
  py "d['gpu_types'][0]['sm_count'] is None and d['gpu_types'][0]['memory_bytes'] is None and d['profiles'][0]['batch_sizes'] == [1, 2, 3, 8]" \
  "$tmp/mini.json.out"
"$bin" profile list --profile "$tmp/mini.json" >"$tmp/list.txt" 2>&1
check "profile list: the given file is starred and named at the end" \
  bash -c "grep -qE '^mini \* +tiny \(1\) +1 +hand-made$' '$tmp/list.txt' && grep -qF '* given: $tmp/mini.json' '$tmp/list.txt'"

# ---- search ---------------------------------------------------------------------------------
# Bad-rate criterion, as JSON: a probe passes exactly when every model was
# measured and the worst bad rate is within the bound, and the goodput is
# the highest offered load among the passing probes.
"$bin" search "$q" "${short[@]}" --set dispatch.max_wait_ms=20 --max-multiplier 4 \
  --tolerance 0.1 --criterion bad-rate --bad-rate 0.05 --json >"$tmp/br.json" 2>"$tmp/br.err"
check "search bad-rate --json: exit 0" test $? -eq 0
check "search bad-rate --json: criterion and bound recorded" \
  py "d['criterion'] == 'bad-rate' and d['bad_rate_bound'] == 0.05" "$tmp/br.json"
check "search bad-rate --json: pass = measured_all and worst bad rate <= 0.05" \
  py "d['probes'] and all(p['pass'] == (p['measured_all'] and p['worst_bad_rate'] <= 0.05) for p in d['probes'])" \
  "$tmp/br.json"
check "search bad-rate --json: goodput = highest passing offered load" \
  py "d['goodput_rps'] == max(p['offered_rps'] for p in d['probes'] if p['pass'])" "$tmp/br.json"

# The same search as text: a row per probe, and the goodput line names the
# largest passing multiplier of the table.
"$bin" search "$q" "${short[@]}" --set dispatch.max_wait_ms=20 --max-multiplier 4 \
  --tolerance 0.1 --criterion bad-rate --bad-rate 0.05 >"$tmp/br.txt" 2>"$tmp/br.err"
check "search text: exit 0" test $? -eq 0
check "search text: header" grep -q "^probe   multiplier  offered_rps  goodput_rps worst_bad_rate result" "$tmp/br.txt"
check "search text: as many rows as JSON probes" \
  test "$(grep -cE '^ +[0-9]+ ' "$tmp/br.txt")" -eq "$(python3 -c "import json; print(len(json.load(open('$tmp/br.json'))['probes']))")"
best=$(awk '$NF == "pass" && $1 ~ /^[0-9]+$/ { if ($2 > m) m = $2 } END { print m }' "$tmp/br.txt")
check "search text: the goodput line names the largest passing multiplier ($best)" \
  grep -qE "^goodput: [0-9.]+ req/s offered \(multiplier $best\) with bad rate within bound$" "$tmp/br.txt"

# Nothing passes (alexnet misses its SLO at every load with max_wait 100 ms):
# the text says so, and probes down to a load where a model measured nothing.
"$bin" search "$q" "${short[@]}" --max-multiplier 4 --tolerance 0.1 >"$tmp/none.txt" 2>"$tmp/none.err"
check "search text, nothing passes: exit 0" test $? -eq 0
check "search text, nothing passes: says so" grep -q "^goodput: none: no probe passed$" "$tmp/none.txt"
check "search text, nothing passes: no probe reads pass" bash -c "! grep -qE ' pass$' '$tmp/none.txt'"
check "search text, nothing passes: the warning on stderr" grep -q "warning \[no_goodput\]" "$tmp/none.err"

finish
