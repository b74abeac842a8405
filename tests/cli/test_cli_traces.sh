#!/usr/bin/env bash
# Traces through the CLI, each number computed here without clustersim:
# `trace inspect --json` on the three shipped excerpts against the same
# statistics recomputed with Python's csv, datetime and hashlib (definitions
# of docs/traces.md), and trace windows that start late (start_s > 0) in
# every format, with the send time of every request read from requests.csv
# and compared with the timestamps of the file worked out by hand.
# Usage: test_cli_traces.sh CLUSTERSIM_BINARY SOURCE_ROOT
. "$(dirname "$0")/harness.sh"

# ---- trace inspect against an independent recomputation ------------------------
cat >"$tmp/stats.py" <<'PY'
# Recomputes `trace inspect` statistics of a shipped excerpt from the file and
# compares them with clustersim's JSON. Prints "same" or what differs.
import csv, datetime, hashlib, json, re, statistics, sys

fmt, path, got_path = sys.argv[1:]
got = json.load(open(got_path))
want = {"format": fmt, "sha256": hashlib.sha256(open(path, "rb").read()).hexdigest()}


def per_minute(minutes):
    """min / median / max over every minute from the first to the last."""
    counts = {}
    for m in minutes:
        counts[m] = counts.get(m, 0) + 1
    span = [counts.get(m, 0) for m in range(min(minutes), max(minutes) + 1)]
    return span, {"min": min(span), "median": statistics.median(span), "max": max(span)}


def cv(times):
    gaps = [b - a for a, b in zip(times, times[1:])]
    mean = sum(gaps) / len(gaps)
    return statistics.pstdev(gaps) / mean


def top(counts):
    """10 busiest (app, function) by count, ties by function hash then app hash."""
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][1], kv[0][0]))[:10]
    return [{"app": a, "function": f, "invocations": n} for (a, f), n in rows]


rows = list(csv.DictReader(open(path, newline="")))
if fmt == "maf2019":
    minute_cols = [c for c in rows[0] if c.isdigit()]
    per_fn = {}
    for r in rows:
        key = (r["HashOwner"], r["HashApp"], r["HashFunction"])
        per_fn[key] = per_fn.get(key, 0) + sum(int(r[c]) for c in minute_cols)
    by_minute = [sum(int(r[c]) for r in rows) for c in minute_cols]
    want.update(rows=len(rows), functions=len(per_fn),
                apps=len({(o, a) for o, a, _ in per_fn}), invocations=sum(per_fn.values()),
                span={"first_minute": int(minute_cols[0]), "last_minute": int(minute_cols[-1]),
                      "minutes": len(minute_cols)},
                rate_per_minute={"min": min(by_minute), "median": statistics.median(by_minute),
                                 "max": max(by_minute)},
                top=top({(o + "/" + a, f): n for (o, a, f), n in per_fn.items()}))
    # inspect names the app by its hash alone
    for t in want["top"]:
        t["app"] = t["app"].split("/")[1]
elif fmt == "maf2021":
    starts = [float(r["end_timestamp"]) - float(r["duration"]) for r in rows]
    counts = {}
    for r in rows:
        counts[(r["app"], r["func"])] = counts.get((r["app"], r["func"]), 0) + 1
    span, rate = per_minute([int(s // 60) for s in starts])
    want.update(rows=len(rows), functions=len(counts), apps=len({a for a, _ in counts}),
                invocations=len(rows),
                span={"first_minute": int(min(starts) // 60), "last_minute": int(max(starts) // 60),
                      "minutes": len(span), "first_s": starts[0], "last_s": starts[-1]},
                rate_per_minute=rate, burstiness_cv=cv(starts), top=top(counts))
else:  # azure-llm: times in integer nanoseconds since the first row
    def epoch_ns(text):
        m = re.fullmatch(r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)?", text)
        day = datetime.datetime.fromisoformat(m.group(1) + " " + m.group(2)).replace(
            tzinfo=datetime.timezone.utc)
        ns = (int(day.timestamp()) * 10**9 + int((m.group(3) or "").ljust(9, "0")))
        zone = m.group(4)
        if zone and zone != "Z":
            sign = 1 if zone[0] == "+" else -1
            ns -= sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60) * 10**9
        return ns
    t = [epoch_ns(r["TIMESTAMP"]) for r in rows]
    t = [x - t[0] for x in t]
    span, rate = per_minute([x // (60 * 10**9) for x in t])
    want.update(rows=len(rows), invocations=len(rows), functions=None, apps=None,
                span={"first_minute": 0, "last_minute": t[-1] // (60 * 10**9), "minutes": len(span),
                      "first_s": 0, "last_s": t[-1] / 1e9},
                rate_per_minute=rate, burstiness_cv=cv([x / 1e9 for x in t]), top=[])

diff = []
def compare(key, w, g):
    if isinstance(w, dict):
        for k in w:
            compare(f"{key}.{k}", w[k], g.get(k) if isinstance(g, dict) else None)
    elif isinstance(w, float) and isinstance(g, (int, float)):
        if abs(w - g) > 1e-12 * max(1.0, abs(w)):
            diff.append(f"{key}: {g} != {w}")
    elif w != g:
        diff.append(f"{key}: {g!r} != {w!r}")
top_got = got.pop("top_functions", [])
compare("", {k: v for k, v in want.items() if k != "top"}, got)
if want["top"] != top_got:
    i = next((i for i, (w, g) in enumerate(zip(want["top"], top_got)) if w != g),
             min(len(want["top"]), len(top_got)))
    diff.append(f"top_functions[{i}]: {top_got[i:i + 1]} != {want['top'][i:i + 1]}")
print("same" if not diff else "; ".join(diff))
PY
for spec in "maf2019 maf2019_vhive_loader_sample500/invocations.csv" \
            "maf2021 maf2021_vhive_invitro_head998/AzureFunctionsInvocationTraceForTwoWeeksJan2021.csv" \
            "azure-llm azure_llm_2023/AzureLLMInferenceTrace_conv.csv"; do
  set -- $spec
  "$bin" trace inspect "$src/data/traces/$2" --json >"$tmp/$1.json" 2>"$tmp/$1.err"
  python3 "$tmp/stats.py" "$1" "$src/data/traces/$2" "$tmp/$1.json" >"$tmp/$1.cmp" 2>&1
  check "trace inspect $1: every statistic as recomputed from the file ($(cat "$tmp/$1.cmp"))" \
    grep -qx same "$tmp/$1.cmp"
done

# ---- trace windows with start_s > 0: send times in requests.csv ------------------
cat >"$tmp/prof.json" <<'JSON'
{"format": "clustersim-profile", "version": 1, "source": "tests",
 "gpu_types": [{"name": "gpu", "description": "test GPU", "sm_count": 80, "memory_bytes": 17179869184}],
 "models": [{"gpu": "gpu", "model": "a", "input_bytes": 1000, "output_bytes": 10,
             "linear": {"alpha_ms": 0.1, "beta_ms": 1}}]}
JSON
# scenario TRACE_FILE TRACE_FIELDS -> $tmp/sc.json (one trace client, model a)
scenario() {
  cat >"$tmp/sc.json" <<JSON
{"seed": 5, "profiles": ["$tmp/prof.json"], "cluster": {"gpus": 1, "gpu_type": "gpu"},
 "trace": {"file": "$1"$2},
 "clients": [{"model": "a", "slo_ms": 100, "arrival": "trace"}]}
JSON
}
# sends DIR -> the send_ns column of DIR/requests.csv, sorted, one per line
sends() {
  python3 -c "
import csv, sys
print('\n'.join(str(t) for t in sorted(int(r['send_ns']) for r in csv.DictReader(open('$1/requests.csv')))))"
}

# MAF 2021: rows start (end_timestamp - duration) at 1.0, 2.5, 3.0 and 10.0 s.
# The window start_s 2, duration_s 2 is [2, 4) s of trace time: 2.5 and 3.0
# s, sent at (t - start_s) x time_scale: 0.5 and 1.0 s, or 0.25 and 0.5 s at
# time_scale 0.5.
printf 'app,func,end_timestamp,duration\na,f,1.5,0.5\na,f,2.75,0.25\nb,g,3.0,0\na,f,10.5,0.5\n' >"$tmp/m21.csv"
scenario "$tmp/m21.csv" ', "start_s": 2, "duration_s": 2'
"$bin" run "$tmp/sc.json" --output "$tmp/m21" --requests-csv >/dev/null 2>&1
check "MAF 2021 window at start_s 2: sent at 0.5 and 1.0 s" \
  test "$(sends "$tmp/m21" | tr '\n' ' ')" = "500000000 1000000000 "
check "MAF 2021 window at start_s 2: offered 2 requests over 2 s" \
  py "d['models'][0]['offered_rps'] == 1 and d['models'][0]['window_s'] == 2" "$tmp/m21/summary.json"
scenario "$tmp/m21.csv" ', "start_s": 2, "duration_s": 2, "time_scale": 0.5'
"$bin" run "$tmp/sc.json" --output "$tmp/m21h" --requests-csv >/dev/null 2>&1
check "MAF 2021 window at start_s 2, time_scale 0.5: sent at 0.25 and 0.5 s" \
  test "$(sends "$tmp/m21h" | tr '\n' ' ')" = "250000000 500000000 "

# Azure LLM: times from the first row, zones applied: 18:15:46 (0 s),
# 18:15:47.5 (1.5 s), 18:46:49.25+00:30 = 18:16:49.25 UTC (63.25 s) and
# 17:16:56-01:00 = 18:16:56 UTC (70 s). Window start_s 1, duration_s 65:
# [1, 66) s keeps 1.5 and 63.25 s, sent at 0.5 and 62.25 s.
cat >"$tmp/llm.csv" <<'CSV'
TIMESTAMP,ContextTokens,GeneratedTokens
2023-11-16 18:15:46.0000000,374,44
2023-11-16 18:15:47.5000000,396,109
2023-11-16 18:46:49.2500000+00:30,10,1
2023-11-16 17:16:56-01:00,10,1
CSV
scenario "$tmp/llm.csv" ', "start_s": 1, "duration_s": 65'
"$bin" run "$tmp/sc.json" --output "$tmp/llm" --requests-csv >/dev/null 2>&1
check "Azure LLM window at start_s 1 (zone offsets with minutes): sent at 0.5 and 62.25 s" \
  test "$(sends "$tmp/llm" | tr '\n' ' ')" = "500000000 62250000000 "

# MAF 2019: minutes 1..5 count 7, 0, 900, 0, 500. start_s 60, duration_s 180
# is minutes 2-4: nothing in [0, 60) s (minute 2 is empty), minute 3's
# Poisson arrivals in [60, 120) s, nothing from 120 s on (minute 4 is empty;
# minutes 1 and 5 are outside the window). Count: Poisson, mean 900, within
# 4 standard deviations (120); offered 900 / 180 s = 5 req/s.
printf 'HashOwner,HashApp,HashFunction,Trigger,1,2,3,4,5\no1,a1,f1,http,7,0,900,0,500\n' >"$tmp/m19.csv"
scenario "$tmp/m19.csv" ', "start_s": 60, "duration_s": 180'
"$bin" run "$tmp/sc.json" --output "$tmp/m19" --requests-csv >/dev/null 2>&1
sends "$tmp/m19" >"$tmp/m19.sends"
check "MAF 2019 window at start_s 60: every request sent in [60, 120) s" \
  python3 -c "
import sys; t = [int(x) for x in open('$tmp/m19.sends')]
sys.exit(0 if t and all(60 * 10**9 <= x < 120 * 10**9 for x in t) and abs(len(t) - 900) < 120 else 1)"
check "MAF 2019 window at start_s 60: offered 900 requests over 180 s" \
  py "d['models'][0]['offered_rps'] == 5 and d['models'][0]['window_s'] == 180" "$tmp/m19/summary.json"

finish
