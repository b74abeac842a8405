#!/usr/bin/env bash
# Trace replay benchmark: the 500-function, 8-hour MAF 2019 excerpt at its real
# rate (about 3 million requests) through 16 V100s (bench/maf2019_8h.json),
# thesis router with a manual placement. Prints the wall time of the whole
# command (trace reading included) and the engine's figures, REPEAT times
# (default 3). Usage: bench/trace_replay.sh [BUILD_DIR] (default build-release)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build-release}
[ -d "$build" ] || meson setup "$build" "$root" --buildtype=release >/dev/null
ninja -C "$build" src/cli/clustersim >/dev/null
for i in $(seq "${REPEAT:-3}"); do
  start=$(date +%s.%N)
  line=$("$build/src/cli/clustersim" run "$here/maf2019_8h.json" | grep '^engine:')
  end=$(date +%s.%N)
  printf 'run %d: %.2f s wall for the whole command; %s\n' "$i" "$(echo "$end - $start" | bc)" "$line"
done
