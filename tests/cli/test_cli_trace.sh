#!/usr/bin/env bash
# clustersim run --trace: the timeline as Chrome trace event JSON, checked
# against the run's own requests.csv and summary.json (independent outputs of
# the same run) and against the rules of the trace format.
source "$(dirname "$0")/harness.sh"

scen=$src/examples/quickstart.json
# The whole quickstart: bert's batches on GPU 2 often end exactly when the
# next one starts, which a viewer must not draw overlapping.
"$bin" run "$scen" --output "$tmp/run" --requests-csv --trace "$tmp/trace.json" >/dev/null 2>&1
check "run with --trace exits 0" test $? -eq 0
check "trace: no temporary left" test ! -e "$tmp/trace.json.partial"

python3 - "$tmp/trace.json" "$tmp/run/requests.csv" "$tmp/run/summary.json" <<'PY' >"$tmp/check.out"
import collections, csv, json, sys
trace = json.load(open(sys.argv[1]))
reqs = list(csv.DictReader(open(sys.argv[2])))
summary = json.load(open(sys.argv[3]))
ev = trace["traceEvents"]
ok = lambda name, cond: print(("ok" if cond else "FAIL") + " " + name)
ok("every event has ph, pid, tid, ts", all({"ph", "pid", "tid", "ts"} <= e.keys() for e in ev))
xs = [e for e in ev if e["ph"] == "X"]
# One slice per batch: as many as distinct batch ids of served requests.
batches = {int(r["batch_id"]) for r in reqs if r["status"] == "ok"}
ok("one X slice per batch of requests.csv", sorted(e["args"]["batch_id"] for e in xs) == sorted(batches))
# A worker runs one batch at a time: slices on a thread never overlap.
by_thread = collections.defaultdict(list)
for e in xs:
    by_thread[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
# As a viewer reads them: ts + dur in doubles, no tolerance.
ok("no overlapping slices on a worker, not even by rounding", all(
    a[1] <= b[0] for s in by_thread.values() for a, b in zip(sorted(s), sorted(s)[1:])))
ok("back to back batches exist (the case the check is for)", any(
    a[1] == b[0] for s in by_thread.values() for a, b in zip(sorted(s), sorted(s)[1:])))
ok("times are whole microseconds", all(
    isinstance(e["ts"], int) and isinstance(e.get("dur", 0), int) for e in ev))
us = lambda ns: int(ns) // 1000  # the trace floors nanoseconds to microseconds
# Time-sliced GPUs (no MPS here): busy time is the sum of the slices.
sim_s = summary["simulated_time_s"]
for g in summary["gpus"]:
    mine = [e for e in xs if e["pid"] == 100 + g["id"]]
    busy_us = sum(e["dur"] for e in mine)
    ok(f"gpu {g['id']}: slices sum to busy_fraction x simulated time (1 us per slice)",
       abs(busy_us * 1e-6 - g["busy_fraction"] * sim_s) <= 1e-6 * (len(mine) + 1))
# Each request's async slice spans send to receive, as requests.csv says.
b = {e["id"]: e["ts"] for e in ev if e["ph"] == "b" and e["cat"] == "request"}
en = {e["id"]: e["ts"] for e in ev if e["ph"] == "e" and e["cat"] == "request"}
served = [r for r in reqs if r["status"] == "ok"]
ok("one request slice per served request", len(b) == len(served) == len(en))
ok("request slices span send to receive",
   all(b[int(r["id"])] == us(r["send_ns"]) and en[int(r["id"])] == us(r["receive_ns"])
       for r in served))
# Execution slices start and end where requests.csv says their batch ran.
start = {int(r["batch_id"]): (int(r["exec_start_ns"]), int(r["exec_end_ns"])) for r in served}
ok("slice times equal exec_start_ns and exec_end_ns, floored to microseconds",
   all(e["ts"] == us(start[e["args"]["batch_id"]][0]) and
       e["ts"] + e["dur"] == us(start[e["args"]["batch_id"]][1]) for e in xs))
names = {(e["pid"], e["args"]["name"]) for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
ok("GPU processes are named with their type", (100, "GPU 0 (v100)") in names)
PY
while read -r verdict what; do check "trace: $what" test "$verdict" = ok; done <"$tmp/check.out"

# A window keeps only events that overlap it.
"$bin" run "$scen" --set 'clients[0].duration_s=5' --set 'clients[1].duration_s=5' \
  --set 'clients[2].duration_s=5' --trace "$tmp/win.json" --trace-window 2:2.5 >/dev/null 2>&1
check "trace-window run exits 0" test $? -eq 0
check "trace-window: every event overlaps [2 s, 2.5 s]" python3 - "$tmp/win.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
lo, hi = 2e6, 2.5e6
pairs = {}
for e in ev:
    if e["ph"] in ("b", "e"):
        pairs.setdefault((e["cat"], e["id"]), {})[e["ph"]] = e["ts"]
good = all(e["ts"] <= hi and e["ts"] + e["dur"] >= lo for e in ev if e["ph"] == "X")
good &= all(p["b"] <= hi and p["e"] >= lo for p in pairs.values())
good &= all(lo <= e["ts"] <= hi for e in ev if e["ph"] == "C")
flows = {}
for e in ev:
    if e["ph"] in ("s", "f"):
        flows.setdefault(e["id"], {})[e["ph"]] = e["ts"]
good &= all(f["s"] <= hi and f["f"] >= lo for f in flows.values())
# Every arrow joins two things in the file: a transfer begins where it
# starts, a batch slice where it ends.
starts = {(e["pid"], e["tid"], e["ts"]) for e in ev if e["ph"] == "X"}
transfer_b = {(e["id"], e["ts"]) for e in ev if e["ph"] == "b" and e["cat"] == "transfer"}
good &= all(set(f) == {"s", "f"} and (i, f["s"]) in transfer_b for i, f in flows.items())
good &= all((e["pid"], e["tid"], e["ts"]) in starts for e in ev if e["ph"] == "f")
good &= any(e["ph"] == "X" for e in ev) and any(e["ph"] == "C" for e in ev)
sys.exit(0 if good else 1)
PY

# Determinism: the same run writes the same bytes.
"$bin" run "$scen" --trace "$tmp/again.json" >/dev/null 2>&1
check "trace: same scenario and seed, same bytes" cmp -s "$tmp/trace.json" "$tmp/again.json"

bad "--trace-window without --trace" "clustersim run: --trace-window needs --trace FILE" \
  run "$scen" --trace-window 1:2
bad "--trace-window malformed" "clustersim run: --trace-window 2:1: expected A:B, seconds of simulated time with 0 <= A < B" \
  run "$scen" --trace "$tmp/x.json" --trace-window 2:1
bad "--trace onto an existing file" "clustersim run: --trace $tmp/trace.json: exists; use --force to replace it, or another file" \
  run "$scen" --trace "$tmp/trace.json"
check "a refused --trace leaves the file as it was" cmp -s "$tmp/trace.json" "$tmp/again.json"
finish
