#!/usr/bin/env bash
# Engine benchmark: simulates bench/engine_1h.json (5 models, batch 16, one
# hour, about 18 million requests) and prints events per second and simulated
# requests per second of wall time. Runs it REPEAT times (default 3) and
# prints each run and the best; compare builds side by side on one machine,
# not against absolute figures from elsewhere.
# Usage: bench/run.sh [BUILD_DIR]   (default: build-release, configured here
#        with --buildtype=release if missing)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build-release}
if [ ! -d "$build" ]; then
  meson setup "$build" "$root" --buildtype=release >/dev/null
fi
ninja -C "$build" src/cli/clustersim >/dev/null
repeat=${REPEAT:-3}
best=0
for i in $(seq "$repeat"); do
  line=$("$build/src/cli/clustersim" run "$here/engine_1h.json" | grep '^engine:')
  echo "run $i: $line"
  rps=$(echo "$line" | sed -E 's/.* ([0-9]+) simulated requests\/s/\1/')
  [ "$rps" -gt "$best" ] && best=$rps
done
echo "best: $best simulated requests/s"
