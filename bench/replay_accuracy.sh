#!/usr/bin/env bash
# Replay accuracy benchmark (issue 16; docs/replay.md, "Accuracy"): runs
# `clustersim validate` on examples/validate/isolated.json (resnet50 and
# alexnet take turns on one GPU, no MPS) and colocated.json (the two at once
# under MPS), on each BACKEND (default: cpu emulated), REPEAT times (default
# 3), and prints one line per validation: the replay's validity, the
# per-batch execution-time error (median and p90 of |real - sim| / sim, and
# the median signed error), the machine's drift (isolated latencies measured
# again after the replay) and per model the p50 and goodput differences.
# Each validation takes about 25 s (profiling, then 21 s of replay).
# Usage: bench/replay_accuracy.sh [BUILD_DIR] (default build)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
[ -d "$build" ] || meson setup "$build" "$root" >/dev/null
ninja -C "$build" src/cli/clustersim >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for backend in ${BACKENDS:-cpu emulated}; do
  for scenario in isolated colocated; do
    for i in $(seq "${REPEAT:-3}"); do
      dir="$out/$backend-$scenario-$i"
      "$build/src/cli/clustersim" validate "$root/examples/validate/$scenario.json" \
        --backend "$backend" -o "$dir" >/dev/null 2>&1
      python3 - "$dir/report.json" "$backend" "$scenario" "$i" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
e = r["batch_execution_error_pct"]
models = " ".join(f'{m["model"]} p50 {m["p50_diff_pct"]:+.1f}% goodput {m["goodput_diff_pct"]:+.1f}%'
                  for m in r["models"] if m["model"] != "total")
drift = r["machine_drift_pct"]
print(f'{sys.argv[2]:8} {sys.argv[3]:9} run {sys.argv[4]}: valid {str(r["replay_valid"]).lower():5} '
      f'machine drift {drift:+.1f}% '
      f'batch error median {e["median_abs"]:.2f}% p90 {e["p90_abs"]:.2f}% '
      f'(signed {e["median_signed"]:+.2f}%, {e["batches"]} batches); {models}')
PY
    done
  done
done
