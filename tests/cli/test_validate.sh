#!/bin/bash
# clustersim profile measure and clustersim validate on the emulated backend,
# whose batches take exactly their profiled latency: the measured profile
# must give back the profile it emulates, the pairs no slowdown, and a
# validation an error within the replay's own overhead. Timing checks have
# generous bounds (a shared machine); accuracy figures come from
# bench/replay_accuracy.sh. Executors sleep between batches (--sleep-idle):
# spinning would take both cores from the tests running beside this one.
. "$(dirname "$0")/harness.sh"

cat > "$tmp/back.py" <<'PY'
import json, re, sys
src, got = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ref = {(m["model"], b["batch"]): b["latency_ms"] for m in src["models"] if m["gpu"] == "v100"
       for b in m.get("batches", [])}
# The measurement's own probe (its source: "woke X ms late from its sleeps
# (p90"): when one wake-up in ten of a thread of normal priority was that
# late, so may the p10 of a point be.
probe = float(re.search(r"woke (\S+) ms late from its sleeps \(p90", got["source"]).group(1))
n = 0
for m in got["models"]:
    assert m["gpu"] == "emu"
    for b in m["batches"]:
        want = ref[(m["model"], b["batch"])]
        # A sleep of the profiled latency, timed: never shorter, a little
        # longer. The tight bound is on the least disturbed executions (p10):
        # on a loaded machine most wake-ups can be late by a millisecond or
        # more, which moves the median (a CI run saw that) but not the p10.
        p10, p90 = (float(x) for x in re.fullmatch(r"p10 (\S+) ms, p90 (\S+) ms", b["note"]).groups())
        # The note's p10 and p90 are rounded to 0.0001 ms (a median of
        # 9.600259 ms once came with "p10 9.6003 ms"): half of that either way.
        r = 0.00005
        assert want <= p10 + r and p10 - r <= b["latency_ms"] <= p90 + r, (m["model"], b, want)
        assert p10 <= want * 1.05 + 0.2 + probe, (m["model"], b, want, probe)
        assert b["latency_ms"] <= want * 1.5 + 2, (m["model"], b, want)
        n += 1
assert n == 6, n
assert "profile measure --backend emulated" in got["source"] and "UTC" in got["source"]
PY
# The pairs: sleeps side by side take nothing from each other, slowdown 1.
# The victim's median and its isolated one are sleeps that may each wake up
# late by the run's own late wake-up (as for the shares below: the p90 of
# the isolated latencies above those emulated): the slowdown may be off 1 by
# that over the victim's latency, and by 10 % (5 % below) on top.
cat > "$tmp/pairs.py" <<'PY'
import json, re, sys
src, got, inter = (json.load(open(p)) for p in sys.argv[1:4])
ref = {(m["model"], b["batch"]): b["latency_ms"] for m in src["models"] if m["gpu"] == "v100"
       for b in m.get("batches", [])}
late = 0.0
for m in got["models"]:
    for b in m["batches"]:
        p90 = float(re.fullmatch(r"p10 \S+ ms, p90 (\S+) ms", b["note"]).group(1))
        late = max(late, p90 - ref[(m["model"], b["batch"])])
pairs = inter["pairs"]
assert len(pairs) == 2, pairs
for p in pairs:
    slack = late / ref[(p["victim"], 8)]
    assert 0.95 - slack <= p["slowdown"] <= 1.1 + slack, (p, late)
PY
# The p10 bound needs one in ten wake-ups of a run to be on time; a burst
# of other work can hold every one of a run's up. A measurement that misses
# it is taken again, three times at most: a backend that sleeps too long
# still fails every time, a busy minute of the machine does not.
measure_once() {
  rm -rf "$tmp/m"
  "$bin" profile measure --backend emulated --like v100_thesis --models resnet50,alexnet \
    --gpu-type emu --batches 4,8,16 --repeat 9 --pair-batch 8 -o "$tmp/m" >/dev/null 2>&1
}
measured_back() {
  python3 "$tmp/back.py" "$src/data/profiles/v100_thesis.json" "$tmp/m/profile.json" >"$tmp/back.txt" 2>&1 ||
    { echo "# $(tail -n 1 "$tmp/back.txt")"; return 1; }
  python3 "$tmp/pairs.py" "$src/data/profiles/v100_thesis.json" "$tmp/m/profile.json" \
    "$tmp/m/interference.json" >"$tmp/pairs.txt" 2>&1 || { echo "# $(tail -n 1 "$tmp/pairs.txt")"; return 1; }
}
retry_timing "the measurement" measure_once measured_back
check "profile measure exits 0" test $rc -eq 0
check "the measured profile loads" "$bin" profile show "$tmp/m/profile.json" --json
check "the emulated backend's profile is the profile it emulates" \
  python3 "$tmp/back.py" "$src/data/profiles/v100_thesis.json" "$tmp/m/profile.json"
check "the emulated pairs slow each other down by at most 10 % (and the run's late wake-up)" \
  python3 "$tmp/pairs.py" "$src/data/profiles/v100_thesis.json" "$tmp/m/profile.json" "$tmp/m/interference.json"
bad "measure: a model without a profile" "model nosuch has no profile on GPU type v100" \
  profile measure --backend emulated --like v100_thesis --models nosuch --gpu-type e -o "$tmp/x"
bad "measure: batches not ascending" "--batches: expected ascending batch sizes" \
  profile measure --backend emulated --like v100_thesis --models alexnet --gpu-type e --batches 4,2 -o "$tmp/x"
bad "measure: pair batch not measured" "--pair-batch: expected 0 or one of --batches" \
  profile measure --backend emulated --like v100_thesis --models alexnet --gpu-type e --batches 1,2 -o "$tmp/x"
check "a refused measurement writes nothing" test ! -e "$tmp/x"

# Shares: the emulated backend runs a batch on an MPS share for its
# isolated latency times the share table's slowdown (latency at the share
# over latency at 100 %), so measuring it gives back, at the points the
# iGniter table measured at both shares, profile latency x that ratio.
measure_shares_once() {
  rm -rf "$tmp/s"
  "$bin" profile measure --backend emulated --like igniter_v100_profile --like-interference igniter_v100 \
    --models alexnet,resnet50 --gpu-type emu --batches 1,16 --shares 20,50,100 --repeat 5 \
    --pair-batch 0 -o "$tmp/s" >/dev/null 2>&1
}
shares_back() {
  python3 "$tmp/shares.py" "$src/data/profiles/igniter_v100_profile.json" \
    "$src/data/profiles/igniter_v100.json" "$tmp/s/interference.json" "$tmp/s/profile.json" \
    >"$tmp/shares.txt" 2>&1 || { echo "# $(tail -n 1 "$tmp/shares.txt")"; return 1; }
}
# A share's latency is a median of sleeps, which wake up late by what the
# machine's load makes them: a fixed bound on that (0.2 ms) failed on a
# machine with a load of 7-14 on 2 cores. The same run measured that
# lateness itself: its isolated latencies (profile.json, at 100 %) are the
# same kind of sleeps in the same rounds, and their p90 above the latency
# they emulate is the run's own late wake-up. The shares' medians may be
# late by that much, no more; never early.
cat > "$tmp/shares.py" <<'PY'
import json, re, sys
prof, tab, got, measured = (json.load(open(p)) for p in sys.argv[1:5])
iso = {(m["model"], b["batch"]): b["latency_ms"] for m in prof["models"] for b in m["batches"]}
table = {m["model"]: {(b, s): l for b, s, l in m["share_latency"]} for m in tab["models"]}
late = 0.0
for m in measured["models"]:
    for b in m["batches"]:
        p90 = float(re.fullmatch(r"p10 \S+ ms, p90 (\S+) ms", b["note"]).group(1))
        late = max(late, p90 - iso[(m["model"], b["batch"])])
print(f"# this run's late wake-ups: up to {late:.3f} ms (p90 of the isolated latencies)")
n = 0
for m in got["models"]:
    rows = {(b, s): l for b, s, l in m["share_latency"]}
    assert sorted(rows) == [(b, s) for b in (1, 16) for s in (20, 50, 100)], sorted(rows)
    for (b, s), l in rows.items():
        t = table[m["model"]]
        want = iso[(m["model"], b)] * t[(b, s)] / t[(b, 100)]
        assert want <= l <= want * 1.05 + 0.2 + late, (m["model"], b, s, l, want, late)
        n += 1
assert n == 12, n
assert "share_latency: each batch size alone" in got["source"]
assert "pairs" not in got and "Pairs not measured" in got["source"]
PY
# The run's own lateness bounds most runs; a burst of other work between
# the isolated rounds and the share rounds can still exceed it (seen once in
# CI's pass beside two CPU hogs, 2026-12-01): such a run is taken again,
# three times at most, as the measurement above.
retry_timing "the share measurement" measure_shares_once shares_back
check "profile measure --shares exits 0" test $rc -eq 0
check "measured share tables are the emulated ones" python3 "$tmp/shares.py" \
  "$src/data/profiles/igniter_v100_profile.json" "$src/data/profiles/igniter_v100.json" \
  "$tmp/s/interference.json" "$tmp/s/profile.json"
check "the measured share tables load" "$bin" run "$src/examples/quickstart.json" \
  --set "cluster.interference=\"$tmp/s/interference.json\"" --json >/dev/null
bad "measure: shares on a backend without shares" "--shares: backend cpu does not run workers on a share" \
  profile measure --backend cpu --like v100_thesis --models alexnet --gpu-type e --shares 50 -o "$tmp/x"
bad "measure: shares not ascending" "--shares: expected ascending percentages in [1, 100]" \
  profile measure --backend emulated --like v100_thesis --models alexnet --gpu-type e --shares 50,20 -o "$tmp/x"
bad "measure: a share above 100 %" "--shares: expected ascending percentages in [1, 100]" \
  profile measure --backend emulated --like v100_thesis --models alexnet --gpu-type e --shares 101 -o "$tmp/x"

cp "$src/examples/validate/colocated.json" "$tmp/col.json"
sed -i 's|\.\./\.\./data/profiles/v100_thesis.json|v100_thesis|' "$tmp/col.json"
# The replay's error is its overhead plus the machine's late wake-ups, and a
# burst of other work can push one validation past the bounds below; such a
# validation is run again, three times at most (see "Under load" in
# docs/testing.md): a replay that is always off still fails. A machine busy
# through all three (CI's pass beside two CPU hogs, 2026-12-02) is one the
# validation must call busy (machine_busy, from its probe thread of normal
# priority, while it measured the profile and during the replay), and then
# the error may be what the probes measured, no more: a batch's median error
# within the two p90 wake-up latenesses + 0.5 ms, a model's p50 within three
# times that + 1 ms.
busy="d['machine_busy']"
wake="(d['normal_thread_wakeup_ms']['measurement']['p90'] + d['normal_thread_wakeup_ms']['replay']['p90'])"
col_ok="d['batch_execution_error_pct']['batches'] > 50 and ((d['replay_valid'] and d['batch_execution_error_pct']['median_abs'] < 5) or ($busy and d['batch_execution_error_pct']['median_abs_ms'] <= $wake + 0.5))"
col_models="all(abs(m['p50_diff_pct']) < 10 and abs(m['goodput_diff_pct']) < 5 for m in d['models']) or ($busy and all(abs(m['p50_real_ms'] - m['p50_sim_ms']) <= 3 * $wake + 1 for m in d['models']))"
validate_once() {
  rm -rf "$tmp/v"
  "$bin" validate "$tmp/col.json" --backend emulated --sleep-idle --repeat 5 --set 'clients[0].duration_s=2' \
    --set 'clients[1].duration_s=2' --set 'clients[0].rate=150' --set 'clients[1].rate=300' \
    --max-lateness-ms 20 -o "$tmp/v" >"$tmp/v.txt" 2>"$tmp/v.err"
}
# What a try measured, printed when it misses: the report's figures and the
# replay's own lateness (replayed/summary.json), to tell a loaded machine from
# a replay that is off.
validation_figures() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/report.json"))
r = json.load(open(sys.argv[1] + "/replayed/summary.json"))["replay"]
print("#   replay_valid", d["replay_valid"], "batch error %", d["batch_execution_error_pct"],
      "drift %", d["machine_drift_pct"])
print("#   per model (p50 diff %, goodput diff %):",
      [(m["model"], round(m["p50_diff_pct"], 2), round(m["goodput_diff_pct"], 2)) for m in d["models"]])
print("#   replay lateness ms:", r["lateness_ms"], "clock thread realtime:", r["clock_thread_realtime"])
PY
}
validated() { py "$col_ok and $col_models" "$tmp/v/report.json" || { validation_figures "$tmp/v"; false; }; }
retry_timing "the validation" validate_once validated
check "validate exits 0" test $rc -eq 0
check "validate prints its report" grep -q "Batch execution time, real vs simulated" "$tmp/v.txt"
for f in report.json report.md scenario.json decisions.jsonl profile/profile.json \
         profile/interference.json simulated/summary.json replayed/summary.json \
         simulated/requests.csv replayed/requests.csv figures/latency_cdf_compare_resnet50.dat; do
  check "validate writes $f" test -s "$tmp/v/$f"
done
# Emulated batches last their profiled latency, which the simulation used:
# the error is the replay's overhead and the timer's.
check "validate: replay valid, batch execution error median under 5 % (or the machine called busy, the error within its lateness)" py "$col_ok" "$tmp/v/report.json"
check "validate: p50 within 10 %, goodput within 5 % (or busy, p50 within its lateness)" py "$col_models" "$tmp/v/report.json"
check "validate: goodput agrees, so no diagnosis (or the diagnosis names the busy machine)" \
  py "d['diagnosis'] == [] or ($busy and all('machine was busy' in x['text'] for x in d['diagnosis']))" "$tmp/v/report.json"
check "validate: the report says what the probe measured" \
  py "all(0 <= d['normal_thread_wakeup_ms'][k]['p50'] <= d['normal_thread_wakeup_ms'][k]['p90'] for k in ('measurement', 'replay')) and $busy == any(d['normal_thread_wakeup_ms'][k]['busy'] for k in ('measurement', 'replay'))" "$tmp/v/report.json"
check "validate: a busy machine is said in report.md exactly when report.json says it" \
  bash -c "[ \"\$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"machine_busy\"])' '$tmp/v/report.json')\" = \"\$(grep -q 'The machine was busy' '$tmp/v/report.md' && echo True || echo False)\" ]"
check "the validation's scenario runs on the measured profile" \
  py 'd["placement"]["policy"] == "manual" and d["cluster"]["gpu_type"] == "emulated_measured" and d["cluster"]["interference"].endswith("interference.json")' "$tmp/v/scenario.json"
# A placement with MPS shares: validate measures the backend at those shares
# (and 100 %) and simulates on the measured tables; the emulated backend
# runs them by the scenario's tables, so the error stays the overhead's.
cat > "$tmp/shares.json" <<'JSON'
{"name": "shares", "seed": 1, "profiles": ["igniter_v100_profile"], "network": "zero",
 "cluster": {"gpus": 1, "gpu_type": "v100_igniter", "mps": true, "interference": "igniter_v100"},
 "dispatch": {"policy": "router", "max_wait_ms": 40},
 "placement": {"policy": "manual", "replicas": [
   {"model": "resnet50", "gpu": 0, "batch": 8, "mps_share": 0.6},
   {"model": "alexnet", "gpu": 0, "batch": 8, "mps_share": 0.4}]},
 "clients": [
   {"model": "resnet50", "rate": 200, "slo_ms": 200, "arrival": "poisson", "duration_s": 1.5, "warmup_s": 0.2},
   {"model": "alexnet", "rate": 300, "slo_ms": 150, "arrival": "poisson", "duration_s": 1.5, "warmup_s": 0.2}]}
JSON
# Batches of a few ms: a loaded machine's late wake-ups are a few % of them.
vs_ok="(d['batch_execution_error_pct']['median_abs'] < 10 and all(abs(m['goodput_diff_pct']) < 5 for m in d['models'])) or ($busy and d['batch_execution_error_pct']['median_abs_ms'] <= $wake + 0.5)"
validate_shares_once() {
  rm -rf "$tmp/vs"
  "$bin" validate "$tmp/shares.json" --backend emulated --sleep-idle --repeat 3 --max-lateness-ms 20 \
    -o "$tmp/vs" >/dev/null 2>&1
}
validated_shares() { py "$vs_ok" "$tmp/vs/report.json" || { validation_figures "$tmp/vs"; false; }; }
retry_timing "the validation with shares" validate_shares_once validated_shares
check "validate with shares exits 0" test $rc -eq 0
check "validate measured the placement's shares and 100 %" \
  py 'sorted({s for m in d["models"] for b, s, l in m["share_latency"]}) == [40, 60, 100]' "$tmp/vs/profile/interference.json"
check "validate with shares: batch execution error median under 10 %, goodput within 5 % (or busy, within its lateness)" \
  py "$vs_ok" "$tmp/vs/report.json"
bad "validate: an earlier validation is kept" "holds an earlier validation" \
  validate "$tmp/col.json" --backend emulated -o "$tmp/v"
bad "validate: no backend" "expected --backend NAME" validate "$tmp/col.json" -o "$tmp/w"
# Without -o (the form docs/replay.md gives): the report printed only, in a
# temporary directory removed at the end (exit status 2 before, "expected
# --output DIR").
mkdir -p "$tmp/tt"
TMPDIR="$tmp/tt" "$bin" validate "$tmp/col.json" --backend emulated --sleep-idle --repeat 3 \
  --set 'clients[0].duration_s=1' --set 'clients[1].duration_s=1' --max-lateness-ms 20 \
  >"$tmp/po.txt" 2>"$tmp/po.err"
rc=$?
check "validate without -o exits 0" test $rc -eq 0
check "validate without -o prints its report" grep -q "Batch execution time, real vs simulated" "$tmp/po.txt"
check "validate without -o says the report is printed only" grep -q "no -o DIR: the report is printed only" "$tmp/po.err"
check "validate without -o names no figures it did not keep" bash -c "! grep -q '^Figures:' '$tmp/po.txt'"
check "validate without -o leaves nothing behind" test -z "$(ls -A "$tmp/tt")"
finish
