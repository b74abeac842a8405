#!/usr/bin/env bash
# Runs a sweep as N shards with GNU parallel (Debian package `parallel`), then
# merges them. The merged outputs are byte for byte what the unsharded
# `clustersim sweep EXPERIMENT -o DIR` writes (docs/experiments.md, "Beyond
# one machine").
#
# Usage: tools/sweep-parallel.sh EXPERIMENT OUTDIR N [GNU parallel options...]
#
#   tools/sweep-parallel.sh experiments/thesis_6_2_1.json out/6_2_1 8
#   tools/sweep-parallel.sh experiments/thesis_6_2_1.json out/6_2_1 8 -j2
#
# Writes, in OUTDIR (which must be new or empty):
#   shard-K/       K = 1..N: `clustersim sweep EXPERIMENT --shard K/N` (runs.csv, shard.json)
#   parallel.log   GNU parallel's job log: host, run time and exit status of each shard
#   merged/        `clustersim sweep merge` of the shards: runs.csv, aggregate.csv,
#                  aggregate.json, sweep.json, as the unsharded sweep writes them
# and prints the comparison table. Exit status, as clustersim sweep's: 0; 1 when
# some runs were invalid (named on stderr, status "invalid" in runs.csv; the
# others ran); 2 when a shard or the merge failed (a failed shard is named and
# nothing is merged).
#
# Options after N go to GNU parallel unchanged: -j2 runs two shards at a time
# (default: one per CPU core), -S/--sshlogin runs them on other hosts,
# --retries 3 reruns a failed shard (on another host when there is one). In
# them, {} stands for the shard number K. A shard whose runs are partly
# invalid still succeeds (its job exits 0): GNU parallel only sees failures.
#
# Environment:
#   CLUSTERSIM  the clustersim binary (default: clustersim on PATH, else this
#               checkout's build/src/cli/clustersim)
#   THREADS     each shard's -j (default 1: parallel already keeps one shard
#               per core busy)
#
# Across hosts. EXPERIMENT, OUTDIR and the binary are made absolute here, and
# every host must find them at those paths: clustersim, the experiment file,
# its base scenario and the profiles that names (for a shipped experiment: the
# built checkout at the same path). The shards are merged on this machine.
#  - With a shared filesystem (the usual cluster home directory), nothing more:
#      tools/sweep-parallel.sh experiments/E.json out/E 24 -S 4/node1,4/node2
#  - Without one, each host writes its shards on its own disk; --return brings
#    each shard's two files back to the same paths here (rsync, needed on
#    every host), and --cleanup then removes them there (never use --cleanup
#    on a shared filesystem: the remote copy is the local one):
#      out=$PWD/out/E
#      tools/sweep-parallel.sh experiments/E.json "$out" 24 -S 4/node1,4/node2 \
#        --return "$out/shard-{}/runs.csv" --return "$out/shard-{}/shard.json" --cleanup
#    (--return of the directory shard-{} brings it back too, but --cleanup
#    does not remove a directory.)
# ssh must log in without a password prompt (keys or an agent); `:` in the
# -S list adds this machine. CI tests both recipes against a second sshd on
# the CI machine itself, not on separate machines (docs/experiments.md, "What
# is tested").
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prog=sweep-parallel.sh

usage() {
  echo "usage: $prog EXPERIMENT OUTDIR N [GNU parallel options...]" >&2
  exit 2
}
[ $# -ge 3 ] || usage
exp=$1 out=$2 n=$3
shift 3
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "$prog: N: expected a number of shards >= 1, not '$n'" >&2; exit 2; }
[ -f "$exp" ] || { echo "$prog: $exp: no such experiment file" >&2; exit 2; }
command -v parallel >/dev/null ||
  { echo "$prog: GNU parallel is not installed (Debian: apt-get install parallel)" >&2; exit 2; }

abspath() {  # an absolute path for $1, whose directory exists
  printf '%s/%s\n' "$(cd "$(dirname "$1")" && pwd)" "$(basename "$1")"
}
bin=${CLUSTERSIM:-}
if [ -z "$bin" ]; then
  bin=$(command -v clustersim || true)
  [ -n "$bin" ] || bin=$here/../build/src/cli/clustersim
fi
[ -x "$bin" ] || bin=$(command -v "$bin" || true)
[ -n "$bin" ] && [ -x "$bin" ] ||
  { echo "$prog: no clustersim binary: set CLUSTERSIM or build (meson setup build && ninja -C build)" >&2; exit 2; }
bin=$(abspath "$bin")
exp=$(abspath "$exp")
threads=${THREADS:-1}

if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  echo "$prog: $out is not empty: give a new OUTDIR (the shards of an earlier sweep must not mix in)" >&2
  exit 2
fi
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)

# clustersim's exit status 1 means some runs were invalid: the shard's outputs
# are complete and the merge reports those runs, so the job exits 0 then, and
# GNU parallel sees a failure (for --retries, --halt) only when a shard failed.
# -q: the words reach the command as they are (paths with spaces), locally and
# over ssh. --joblog: each shard's host and exit status, read below.
parallel --will-cite --joblog "$out/parallel.log" "$@" \
  -q sh -c '"$0" "$@"; s=$?; [ "$s" -ne 1 ] || s=0; exit "$s"' \
  "$bin" sweep "$exp" --shard "{}/$n" -j "$threads" --force -o "$out/shard-{}" \
  ::: $(seq 1 "$n")
pstatus=$?

failed=$(awk -F'\t' 'NR > 1 && ($7 != 0 || $8 != 0) { printf "%s%d (exit %d, signal %d, host %s)", sep, $1, $7, $8, $2; sep = ", " }' \
  "$out/parallel.log" 2>/dev/null)
missing=
for k in $(seq 1 "$n"); do
  [ -f "$out/shard-$k/shard.json" ] || missing="$missing $k"
done
if [ -n "$failed" ] || [ -n "$missing" ]; then
  [ -z "$failed" ] || echo "$prog: shards failed: $failed" >&2
  [ -z "$missing" ] || echo "$prog: shards without outputs in $out:$missing" >&2
  echo "$prog: GNU parallel exited $pstatus; nothing merged (job log: $out/parallel.log)" >&2
  exit 2
fi

shards=()
for k in $(seq 1 "$n"); do shards+=("$out/shard-$k"); done
"$bin" sweep merge -o "$out/merged" "${shards[@]}"
