#!/usr/bin/env bash
# Regenerates the goldens of the regression suite (tests/regression) from the
# current build: every scenario's summary and, for the scenarios that ask for
# requests.csv, its CSV outputs (requests.csv, gpus_over_time.csv,
# gpu_timeseries.csv, worker_latency.csv; those over 100 kB gzipped, without
# name or time stamp so that equal outputs give equal bytes), then rebuilds the
# altered fixtures of the checker's own tests from the new goldens
# (tests/regression/fixtures/make_altered.py). Run it only when a change of
# results is intended, then review `git diff tests/regression` and commit it
# with the change. Goldens detect change; they do not say the numbers are right.
# Usage: tools/update-goldens.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
ninja -C "$build" src/cli/clustersim >/dev/null
cd "$root/tests/regression"
csvs="requests.csv gpus_over_time.csv gpu_timeseries.csv worker_latency.csv"
for scenario in *.json; do
  name=${scenario%.json}
  out=$(mktemp -d)
  "$build/src/cli/clustersim" run "$scenario" --output "$out" >/dev/null
  cp "$out/summary.json" "golden/$name.summary.json"
  echo "updated golden/$name.summary.json"
  for csv in $csvs; do
    rm -f "golden/$name.$csv" "golden/$name.$csv.gz"
  done
  if [ -f "$out/requests.csv" ]; then
    for csv in $csvs; do
      if [ "$(wc -c <"$out/$csv")" -gt 100000 ]; then
        gzip -n -9 -c "$out/$csv" >"golden/$name.$csv.gz"
        echo "updated golden/$name.$csv.gz"
      else
        cp "$out/$csv" "golden/$name.$csv"
        echo "updated golden/$name.$csv"
      fi
    done
  fi
  rm -rf "$out"
done
python3 fixtures/make_altered.py
