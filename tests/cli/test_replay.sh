#!/bin/bash
# clustersim replay: a run's decisions played back on the emulated backend
# give outputs in the run's formats, which the same tools read (plot
# --compare), with the replay's own section; outputs are not overwritten
# without --force; a backend option it does not know is refused. Accuracy
# figures come from bench/replay_accuracy.sh, not from here.
. "$(dirname "$0")/harness.sh"

cp "$src/tests/cli/bad_inputs/base.json" "$tmp/base.json"
"$bin" run "$tmp/base.json" --set 'clients[0].requests=150' --set 'clients[0].rate=300' \
  --decisions "$tmp/d.jsonl" -o "$tmp/sim" --requests-csv >/dev/null 2>&1
check "the run writes its decisions" test -s "$tmp/d.jsonl"
# Keeping to the decided times within 50 ms is a property of the machine as
# much as of the replay: on a loaded machine a burst of other work can delay
# one replay's wake-ups past it. So a late replay (valid false, and nothing
# else wrong) is run again, at most three times in all: a replay that is
# always late still fails, a burst of load does not.
replay_once() {
  rm -rf "$tmp/rep"
  "$bin" replay "$tmp/d.jsonl" --backend emulated --max-lateness-ms 50 -o "$tmp/rep" --requests-csv \
    >"$tmp/table.txt" 2>"$tmp/err.txt"
}
replay_on_time() { ! py 'd["replay"]["valid"] is False' "$tmp/rep/summary.json"; }
retry_timing "replay within 50 ms" replay_once replay_on_time
check "replay exits 0" test $rc -eq 0
check "no progress line when stderr is not a terminal" test ! -s "$tmp/err.txt"
check "the table names the models" grep -q '^resnet50' "$tmp/table.txt"
check "the replay names its backend and is valid" \
  py 'd["replay"]["backend"] == "emulated" and d["replay"]["valid"] is True' "$tmp/rep/summary.json"
check "its batches were sent at most 50 ms late (p99)" \
  py 'd["replay"]["lateness_ms"]["batch_sent"]["p99"] <= 50' "$tmp/rep/summary.json"
cat > "$tmp/same.py" <<'PY'
import csv, json, sys
sim, rep = (json.load(open(f"{d}/summary.json")) for d in sys.argv[1:3])
# every section and per-model field of a run is in the replay's summary
assert set(sim) - {"replay"} <= set(rep), set(sim) - set(rep)
for a, b in zip(sim["models"], rep["models"]):
    assert set(a) <= set(b), set(a) - set(b)
    assert a["requests"]["generated"] == b["requests"]["generated"]
    assert a["requests"]["completed"] == b["requests"]["completed"]
    assert a["batches"]["count"] == b["batches"]["count"]
s = list(csv.DictReader(open(f"{sys.argv[1]}/requests.csv")))
r = list(csv.DictReader(open(f"{sys.argv[2]}/requests.csv")))
assert s[0].keys() == r[0].keys()
assert sorted((x["id"], x["batch_id"], x["gpu"]) for x in s) == sorted((x["id"], x["batch_id"], x["gpu"]) for x in r)
PY
check "same formats, same requests in the same batches" python3 "$tmp/same.py" "$tmp/sim" "$tmp/rep"
check "plot --compare reads a run and its replay" \
  "$bin" plot --compare "$tmp/sim" "$tmp/rep" -o "$tmp/cmp" --no-render
check "... and draws their latency CDFs" test -s "$tmp/cmp/figures/latency_cdf_compare_resnet50.dat"
# Symphony defers batches (not_before after their dispatch): a replayed
# batch never starts before its decided time.
"$bin" run "$tmp/base.json" --unset placement --set 'dispatch={"policy": "symphony"}' \
  --set 'clients[0].rate=800' --set 'clients[0].requests=300' --set 'clients[0].slo_ms=60' \
  --decisions "$tmp/s.jsonl" >/dev/null 2>&1
"$bin" replay "$tmp/s.jsonl" --backend emulated --max-lateness-ms 50 -o "$tmp/srep" --requests-csv \
  >/dev/null 2>&1
cat > "$tmp/nb.py" <<'PY'
import csv, json, sys
batches = {r["id"]: r for r in map(json.loads, open(sys.argv[1])) if r.get("ev") == "batch"}
deferred = [b for b in batches.values() if b["not_before_ns"] > b["dispatch_ns"]]
assert len(deferred) >= 5, len(deferred)
for row in csv.DictReader(open(sys.argv[2])):
    if row["status"] == "ok":
        assert int(row["exec_start_ns"]) >= batches[int(row["batch_id"])]["not_before_ns"], row
PY
check "deferred batches start no earlier than decided" python3 "$tmp/nb.py" "$tmp/s.jsonl" "$tmp/srep/requests.csv"

# A bound no real replay meets: the replay runs and writes, and says it is
# not valid (summary, warning).
"$bin" replay "$tmp/d.jsonl" --backend emulated --max-lateness-ms 0.000001 -o "$tmp/late" \
  >/dev/null 2>"$tmp/late.err"
check "a replay later than its bound still exits 0" test $? -eq 0
check "... says it is not valid, with a replay_late warning" \
  py 'd["replay"]["valid"] is False and any(w["code"] == "replay_late" for w in d["warnings"])' "$tmp/late/summary.json"
check "... and warns on stderr" grep -q "replay_late" "$tmp/late.err"
bad "an earlier replay's outputs are kept" "holds the outputs of an earlier run" \
  replay "$tmp/d.jsonl" --backend emulated -o "$tmp/rep"
bad "an unknown backend option is refused" \
  'backend "emulated": --backend-option speed=2: unknown key; backend "emulated" takes no options' \
  replay "$tmp/d.jsonl" --backend emulated --backend-option speed=2 -o "$tmp/none"
check "a refused replay leaves no output directory" test ! -e "$tmp/none"

# The records number models as the header lists them: a header that lists
# the scenario's models in another order would replay alexnet with
# resnet50's latency, so it is refused (exit 2, nothing written).
"$bin" run "$tmp/base.json" --set 'clients[1]={"model": "alexnet", "rate": 100, "slo_ms": 100, "requests": 30}' \
  --decisions "$tmp/d2.jsonl" >/dev/null 2>&1
python3 - "$tmp/d2.jsonl" "$tmp/swapped.jsonl" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().split("\n")
head = json.loads(lines[0])
assert [m["name"] for m in head["models"]] == ["resnet50", "alexnet"], head["models"]
head["models"].reverse()
lines[0] = json.dumps(head)
open(sys.argv[2], "w").write("\n".join(lines))
PY
bad "a header listing the models in another order than its scenario" \
  "swapped.jsonl: line 1: models[0] is alexnet (SLO 100000000 ns) but its scenario's clients[0] is resnet50 (SLO 200000000 ns)" \
  replay "$tmp/swapped.jsonl" --backend emulated -o "$tmp/swapped"
check "... writes nothing" test ! -e "$tmp/swapped"
"$bin" replay "$tmp/d2.jsonl" --backend emulated -o "$tmp/two" >/dev/null 2>&1
check "the log as written, two models, replays (exit 0)" test $? -eq 0

# The cuda backend, when this build has it: on a machine without a GPU its
# workers fail at set-up and the replay says so (exit 2, nothing written);
# with one, the replay runs.
if "$bin" replay "$tmp/d.jsonl" --backend nosuch 2>&1 | grep -q 'cuda'; then
  worker=$(dirname "$bin")/../replay/clustersim-cuda-worker
  "$worker" --device 0 >"$tmp/w.txt" 2>/dev/null
  check "cuda worker: bad arguments are an error line and status 1"     test $? -eq 1 -a "$(head -c 12 "$tmp/w.txt")" = "error: usage"
  "$bin" replay "$tmp/d.jsonl" --backend cuda --max-lateness-ms 50 -o "$tmp/cu" >/dev/null 2>"$tmp/cu.err"
  status=$?
  if [ $status -eq 0 ]; then
    check "the cuda replay names its backend" py 'd["replay"]["backend"] == "cuda"' "$tmp/cu/summary.json"
  else
    check "cuda without a usable GPU: exit 2" test $status -eq 2
    check "... naming the worker that did not start" grep -q 'backend "cuda": the worker of resnet50 on GPU [0-9]* (CUDA device [0-9]*) did not start' "$tmp/cu.err"
    check "... naming it once" sh -c "! grep -q 'backend \"cuda\": backend' '$tmp/cu.err'"
    check "... and writing nothing" test ! -e "$tmp/cu"
  fi
fi
finish
