#!/usr/bin/env bash
# Values in range field by field whose sums, products or spans are not
# (issue 13), as the CLI meets them: run and place on a trace whose rows are
# 50 days apart in intervals of 1 ms (each crashed), and unrepresentable
# times refused at validation with exit 2 and nothing on stdout.
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

finish
