#!/usr/bin/env bash
# Values in range field by field whose sums, products or spans are not
# (issue 13), as the CLI meets them: run, place and search on a trace whose
# rows are 50 days apart in intervals of 1 ms (each crashed), unrepresentable
# times refused at validation, and the request limit (--max-requests) of
# run, search and sweep, refused with exit 2, the figure it would need and
# nothing on stdout.
# Usage: test_cli_limits.sh CLUSTERSIM_BINARY SOURCE_ROOT
. "$(dirname "$0")/harness.sh"
prof="$src/data/profiles/v100_thesis.json"

# ---- a trace whose two rows are 50 days apart, 1 ms intervals ---------------------
printf 'app,func,end_timestamp,duration\nx,f,0.5,0.1\nx,f,4320000.5,0.1\n' >"$tmp/far.csv"
cat >"$tmp/far.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 1, "gpu_type": "v100"},
 "trace": {"file": "far.csv", "arrivals": "poisson", "interval_s": 0.001, "rate_scale": 200,
           "duration_s": 4320001},
 "clients": [{"model": "resnet50", "slo_ms": 200, "arrival": "trace"}]}
JSON
"$bin" run "$tmp/far.json" --output "$tmp/far" >"$tmp/far.out" 2>"$tmp/far.err"
check "run: a trace 50 days long in 1 ms intervals runs (was SIGSEGV)" test $? -eq 0
# Poisson(200) requests in each of the two 1 ms intervals: both are served.
check "run: requests in both intervals, about 200 each" \
  py "150 < d['models'][0]['requests']['generated'] < 500 and d['simulated_time_s'] > 4320000.4" "$tmp/far/summary.json"
check "run: gpus_over_time.csv has a row per bin a GPU ran in, not one per second of 50 days" \
  test "$(wc -l <"$tmp/far/gpus_over_time.csv")" -le 5
"$bin" place "$tmp/far.json" >"$tmp/place.out" 2>&1
check "place: the same trace (was SIGSEGV)" test $? -eq 0

# ---- times that cannot be represented --------------------------------------------
cat >"$tmp/t.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 1, "gpu_type": "v100"},
 "clients": [{"model": "resnet50", "slo_ms": 200, "arrival": {"process": "times", "times_ms": [1e300]}}]}
JSON
bad "times_ms 1e300 (was an assertion abort)" \
  "t.json: clients[0].arrival.times_ms[0]: expected a time in ms in [0, 1e+12] (simulated time is limited to 1e+09 s), got 1e+300" \
  run "$tmp/t.json"
cat >"$tmp/h.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 1, "gpu_type": "v100"},
 "clients": [{"model": "resnet50", "slo_ms": 200, "rate": 1e-3, "start_s": 5e8, "duration_s": 6e8}]}
JSON
bad "a client sending until 1.1e9 s" \
  "h.json: clients[0]: sends until 1.1e+09 s of simulated time (start_s 5e+08 + warmup_s 0 + duration_s 6e+08): expected at most 1e+09 s" \
  run "$tmp/h.json"

# ---- the request limit -----------------------------------------------------------
cat >"$tmp/huge.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 1, "gpu_type": "v100"},
 "clients": [{"model": "resnet50", "slo_ms": 200, "rate": 1e12, "duration_s": 1e9}]}
JSON
# 10^12 req/s x 10^9 s = 10^21 requests, 64 bytes each: 10^21 * 64 / 2^30 GiB.
bad "rate 1e12 for 1e9 s (ran for ever)" \
  "huge.json: clients: the run would send about 1e+21 requests, more than the limit of 100000000 (--max-requests, or CsRunOptions.max_requests, raises it); it would need about 5.96e+13 GiB of memory for them" \
  run "$tmp/huge.json"
check "a refused run leaves no output directory" \
  bash -c "'$bin' run '$tmp/huge.json' --output '$tmp/none' 2>/dev/null; test ! -e '$tmp/none'"
bad "search refuses at the largest multiplier (64), before any probe" \
  "huge.json: clients: the run would send about 6.4e+22 requests at the largest rate multiplier, more than the limit of 100000000 (--max-requests raises it, a lower --max-multiplier avoids it)" \
  search "$tmp/huge.json"

cat >"$tmp/small.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 1, "gpu_type": "v100"},
 "clients": [{"model": "resnet50", "slo_ms": 200, "rate": 100, "requests": 300, "warmup_s": 1}]}
JSON
# 300 requests + 100 req/s x 1 s of warm-up = 400.
bad "--max-requests 399 refuses 400 expected requests" \
  "small.json: clients: the run would send about 400 requests, more than the limit of 399" \
  run "$tmp/small.json" --max-requests 399
"$bin" run "$tmp/small.json" --max-requests 400 --json >"$tmp/small.out" 2>/dev/null
check "--max-requests 400 runs them" py "d['models'][0]['requests']['measured'] == 300" "$tmp/small.out"
"$bin" run "$tmp/small.json" --max-requests none >/dev/null 2>&1
check "--max-requests none lifts the limit" test $? -eq 0
bad "--max-requests 0" "--max-requests 0: expected an integer >= 1, or none" \
  run "$tmp/small.json" --max-requests 0
bad "--max-requests abc" "--max-requests abc: expected an integer >= 1, or none" \
  search "$tmp/small.json" --max-requests abc

# A sweep: the run over the limit is reported invalid, the others go on.
cat >"$tmp/grid.json" <<'JSON'
{"name": "limits", "base": "small.json",
 "axes": [{"name": "requests", "path": "clients[0].requests", "values": [100, 1000]}],
 "seeds": {"first": 1, "count": 1}}
JSON
"$bin" sweep "$tmp/grid.json" -j1 --max-requests 500 >"$tmp/sw.out" 2>"$tmp/sw.err"
check "sweep --max-requests: exit 1 (some runs invalid)" test $? -eq 1
check "sweep --max-requests: the run of 1000 requests (1100 expected) is reported" \
  grep -q "requests 1000, seed 1) invalid: .*the run would send about 1.1e+03 requests, more than the limit of 500" "$tmp/sw.err"
check "sweep --max-requests: the run of 100 requests is not" \
  bash -c "! grep -q 'requests 100,' '$tmp/sw.err'"

finish
