#!/bin/bash
# clustersim run --decisions: the decision log agrees, request by request,
# with requests.csv (written by another path of the engine), is the same
# bytes for the same scenario and seed, and is written only by runs that
# succeed.
. "$(dirname "$0")/harness.sh"

cat > "$tmp/check.py" <<'PY'
import csv, json, sys
log, reqs = sys.argv[1], sys.argv[2]
lines = [json.loads(l) for l in open(log)]
head = lines[0]
assert head["format"] == "clustersim-decisions" and head["version"] == 1, head
assert head["scenario"]["clients"][0]["model"] == head["models"][0]["name"], head["scenario"]
# the end record comes last, with a window per model
end = lines[-1]
assert end["ev"] == "end" and len(end["windows"]) == len(head["models"]), end
for w in end["windows"]:
    assert 0 <= w["start_ns"] and (w["end_ns"] == 0 or w["start_ns"] < w["end_ns"] <= end["at_ns"]), w
lines = lines[:-1]
sent, batches, left = {}, {}, {}
replica_life, gpu_life = {}, {}
for r in lines[1:]:
    if r["ev"] == "request":
        assert r["id"] not in sent
        sent[r["id"]] = r
    elif r["ev"] == "replica":
        replica_life[r["id"]] = r["life"]
    elif r["ev"] == "gpu":
        gpu_life[r["gpu"]] = r["life"]
    elif r["ev"] == "batch":
        # sent only to an active replica, or a GPU that takes work
        if r["replica"] >= 0:
            assert replica_life.get(r["replica"]) == "active", (r, replica_life.get(r["replica"]))
        assert gpu_life.get(r["gpu"], "ready") == "ready", (r, gpu_life.get(r["gpu"]))
        batches[r["id"]] = r
    elif r["ev"] == "left":
        assert r["id"] not in left
        left[r["id"]] = r
    else:
        raise AssertionError(r)
member = {}
for b in batches.values():
    for q in b["requests"]:
        assert q in sent, q
        member.setdefault(q, []).append(b["id"])
rows = list(csv.DictReader(open(reqs)))
assert len(rows) == len(sent), (len(rows), len(sent))
for row in rows:
    i = int(row["id"])
    assert int(row["send_ns"]) == sent[i]["send_ns"]
    assert bool(int(row["measured"])) == sent[i]["measured"], (row, sent[i])
    assert int(row["model"] != "") and sent[i]["model"] == [m["name"] for m in head["models"]].index(row["model"])
    if row["status"] == "ok":
        b = batches[int(row["batch_id"])]
        # preempted batches aside, a request runs in the last batch that held it
        assert member[i][-1] == b["id"], (i, member[i], b["id"])
        assert int(row["dispatch_ns"]) == b["dispatch_ns"]
        assert int(row["gpu"]) == b["gpu"] and int(row["worker"]) == b["worker"]
        assert int(row["batch_size"]) == len(b["requests"])
        assert int(row["exec_start_ns"]) >= b["not_before_ns"]
    else:
        assert left[i]["why"] == row["status"], (row, left[i])
print(len(sent), len(batches), len(left), len(replica_life), sorted(set(replica_life.values())))
PY

run_and_check() {
  local what=$1
  shift
  rm -rf "$tmp/out" "$tmp/d.jsonl"
  "$bin" run "$@" --decisions "$tmp/d.jsonl" -o "$tmp/out" --requests-csv >/dev/null 2>&1
  check "$what: the log agrees with requests.csv" python3 "$tmp/check.py" "$tmp/d.jsonl" "$tmp/out/requests.csv"
}

cp "$src/tests/cli/bad_inputs/base.json" "$tmp/base.json"
run_and_check "router" "$tmp/base.json"
run_and_check "symphony dropping" "$tmp/base.json" --unset placement --set 'dispatch={"policy": "symphony"}' --set 'clients[0].rate=2000' --set 'clients[0].slo_ms=20' --set 'clients[0].requests=400'
run_and_check "a model left unserved" "$tmp/base.json" --set 'clients[1]={"model": "vgg19", "rate": 50, "slo_ms": 200, "requests": 20}' --set 'cluster.gpus=1'
run_and_check "under a controller" "$tmp/base.json" --set 'controller={"policy": "replan", "period_s": 0.2, "tick_s": 0.1, "min_interval_s": 0}' --set 'clients[0].planned_rate=10' --set 'placement={"policy": "milp"}'
run_and_check "autoscaled" "$tmp/base.json" --unset placement --set 'dispatch={"policy": "eager"}' --set 'controller={"policy": "autoscale", "initial_gpus": 1, "tick_s": 0.1, "provision_delay_s": 0.1}' --set 'clients[0].rate=1500' --set 'clients[0].requests=1500' --set 'clients[0].slo_ms=30'

"$bin" run "$tmp/base.json" --decisions "$tmp/a.jsonl" >/dev/null 2>&1
"$bin" run "$tmp/base.json" --decisions "$tmp/b.jsonl" >/dev/null 2>&1
check "same scenario and seed, same bytes" cmp -s "$tmp/a.jsonl" "$tmp/b.jsonl"
"$bin" run "$tmp/base.json" --decisions "$tmp/a.jsonl" >/dev/null 2>&1
check "an existing log is refused without --force" test $? -eq 2
"$bin" run "$tmp/base.json" --set clients[0].rate=-1 --decisions "$tmp/c.jsonl" >/dev/null 2>&1
check "a failed run leaves no log" test ! -e "$tmp/c.jsonl" -a ! -e "$tmp/c.jsonl.partial"
finish
