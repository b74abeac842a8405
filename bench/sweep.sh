#!/usr/bin/env bash
# Sweep benchmark: the thesis' 6.2.1 grid (experiments/thesis_6_2_1.json, 270
# simulations) with -j1 and with -j2, REPEAT times each (default 3). Prints the
# wall and CPU seconds of each run and the best wall time per -j, and checks
# that both give the same bytes. Issue 12's target: the whole grid in under
# 20 s of wall time on 2 cores. Wall time is only meaningful on an otherwise
# idle machine: the load average is printed first.
# Usage: bench/sweep.sh [BUILD_DIR]   (default: build-release, configured here
#        with --buildtype=release if missing)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build-release}
if [ ! -d "$build" ]; then
  meson setup "$build" "$root" --buildtype=release >/dev/null
fi
ninja -C "$build" src/cli/clustersim >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repeat=${REPEAT:-3}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for j in 1 2; do
  best=
  for i in $(seq "$repeat"); do
    TIMEFORMAT='%R %U %S'
    { time "$build/src/cli/clustersim" sweep "$root/experiments/thesis_6_2_1.json" -j$j \
        -o "$tmp/j$j" --force >/dev/null; } 2>"$tmp/time"
    read -r wall user sys <"$tmp/time"
    echo "-j$j run $i: $wall s wall, $(awk "BEGIN { print $user + $sys }") s CPU"
    if [ -z "$best" ] || awk "BEGIN { exit !($wall < $best) }"; then best=$wall; fi
  done
  echo "-j$j best: $best s wall"
done
diff -r "$tmp/j1" "$tmp/j2" >/dev/null && echo "-j1 and -j2 outputs identical"
