#!/usr/bin/env bash
# Regenerates the golden summaries of the regression suite (tests/regression)
# from the current build. Run it only when a change of results is intended,
# then review `git diff tests/regression/golden` and commit it with the change.
# Usage: tools/update-goldens.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
ninja -C "$build" src/cli/clustersim >/dev/null
cd "$root/tests/regression"
for scenario in *.json; do
  name=${scenario%.json}
  out=$(mktemp -d)
  "$build/src/cli/clustersim" run "$scenario" --output "$out" >/dev/null
  cp "$out/summary.json" "golden/$name.summary.json"
  rm -rf "$out"
  echo "updated golden/$name.summary.json"
done
