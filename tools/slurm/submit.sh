#!/usr/bin/env bash
# Submits a clustersim sweep to Slurm as N shards: a job array running
# sweep.sbatch (task K: `clustersim sweep EXPERIMENT --shard K/N`), then a
# merge job (merge.sbatch, --dependency=afterok on the array) writing exactly
# the unsharded outputs (docs/experiments.md, "Beyond one machine").
#
# Usage: tools/slurm/submit.sh [--wait] EXPERIMENT OUTDIR N [sbatch options...]
#
#   tools/slurm/submit.sh experiments/thesis_6_2_1.json out/6_2_1 24 --partition=short --time=00:20:00
#
# The sbatch options (partition, account, time, qos, cpus per task...) go to
# the array and to the merge job, and win over the scripts' #SBATCH lines.
# --cpus-per-task=C runs each shard's runs on C threads. With --array=1-N%M at
# most M shards run at a time (the %M is kept, the range is submit.sh's).
#
# Writes, in OUTDIR (new or empty, on a filesystem the compute nodes share):
#   shard-K/             K = 1..N: runs.csv and shard.json of shard K
#   merged/              runs.csv, aggregate.csv, aggregate.json, sweep.json:
#                        what `clustersim sweep EXPERIMENT -o DIR` writes
#   logs/shard-K.out     each array task's log
#   logs/merge.out       the merge's log, with the comparison table
# Without --wait it prints the two job ids and returns. With --wait it waits
# for the merge, prints its log and exits with its status: 0; 1 when some
# runs were invalid (listed; their rows say "invalid"); 2 when a shard failed
# (then the merge is cancelled, not left pending: --kill-on-invalid-dep) or
# the merge did.
#
# Environment: CLUSTERSIM, the clustersim binary the jobs run (default:
# clustersim on PATH, else this checkout's build/src/cli/clustersim); made
# absolute and passed to the jobs. Paths given here are made absolute too.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prog=submit.sh

wait=
if [ "${1:-}" = --wait ]; then wait=1; shift; fi
if [ $# -lt 3 ]; then
  echo "usage: $prog [--wait] EXPERIMENT OUTDIR N [sbatch options...]" >&2
  exit 2
fi
exp=$1 out=$2 n=$3
shift 3
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "$prog: N: expected a number of shards >= 1, not '$n'" >&2; exit 2; }
[ -f "$exp" ] || { echo "$prog: $exp: no such experiment file" >&2; exit 2; }
command -v sbatch >/dev/null || { echo "$prog: sbatch not found: is this a Slurm login node?" >&2; exit 2; }

# Options for both jobs; an --array=...%M keeps only its throttle.
opts=() throttle=
for o in "$@"; do
  case $o in
    --array=*%*) throttle=%${o##*%} ;;
    --array=* | -a) echo "$prog: the array is 1-$n (use --array=1-$n%M to throttle it)" >&2; exit 2 ;;
    --wait | -W) echo "$prog: give --wait first: $prog --wait EXPERIMENT OUTDIR N ..." >&2; exit 2 ;;
    *) opts+=("$o") ;;
  esac
done

abspath() {  # an absolute path for $1, whose directory exists
  printf '%s/%s\n' "$(cd "$(dirname "$1")" && pwd)" "$(basename "$1")"
}
bin=${CLUSTERSIM:-}
if [ -z "$bin" ]; then
  bin=$(command -v clustersim || true)
  [ -n "$bin" ] || bin=$here/../../build/src/cli/clustersim
fi
[ -x "$bin" ] || bin=$(command -v "$bin" || true)
[ -n "$bin" ] && [ -x "$bin" ] ||
  { echo "$prog: no clustersim binary: set CLUSTERSIM or build (meson setup build && ninja -C build)" >&2; exit 2; }
bin=$(abspath "$bin")
exp=$(abspath "$exp")
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  echo "$prog: $out is not empty: give a new OUTDIR (the shards of an earlier sweep must not mix in)" >&2
  exit 2
fi
mkdir -p "$out/logs" || exit 2
out=$(cd "$out" && pwd)

# The array. --parsable prints "JOBID" or "JOBID;CLUSTER".
array=$(sbatch --parsable --array="1-$n$throttle" --output="$out/logs/shard-%a.out" \
  --export="ALL,CLUSTERSIM=$bin" "${opts[@]}" "$here/sweep.sbatch" "$exp" "$out" "$n") ||
  { echo "$prog: sbatch refused the array job (message above)" >&2; rmdir "$out/logs" 2>/dev/null; exit 2; }
array=${array%%;*}
merge_opts=(--parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes
            --output="$out/logs/merge.out" --export="ALL,CLUSTERSIM=$bin" "${opts[@]}")
if [ -z "$wait" ]; then
  merge=$(sbatch "${merge_opts[@]}" "$here/merge.sbatch" "$out" "$n") ||
    { echo "$prog: sbatch refused the merge job (message above); the array $array is submitted" >&2; exit 2; }
  echo "submitted: array job $array ($n shards), merge job ${merge%%;*} after it"
  echo "outputs: $out/merged; logs: $out/logs; follow with: squeue -j $array,${merge%%;*}"
  exit 0
fi

echo "submitted: array job $array ($n shards); waiting for the merge job"
sbatch --wait "${merge_opts[@]}" "$here/merge.sbatch" "$out" "$n" >/dev/null
status=$?
# sbatch --wait exits 0 when the merge is cancelled because a shard failed:
# the shards' logs tell. A task that failed says so in the last line of its
# log (sweep.sbatch), or has no such line when it was killed (time limit,
# node failure) or never ran.
failed=
for k in $(seq 1 "$n"); do
  last=$(tail -n 1 "$out/logs/shard-$k.out" 2>/dev/null)
  [ "$last" = "shard $k/$n: exit status 0" ] || failed="$failed $k"
done
if [ -f "$out/logs/merge.out" ]; then
  cat "$out/logs/merge.out"
fi
if [ -n "$failed" ]; then
  echo "$prog: shards failed or did not finish:$failed (logs: $out/logs/shard-K.out); the merge did not run" >&2
  exit 2
fi
if [ ! -f "$out/logs/merge.out" ] || { [ "$status" -eq 0 ] && [ ! -f "$out/merged/sweep.json" ]; }; then
  echo "$prog: the merge job did not run or wrote nothing (sbatch --wait exited $status)" >&2
  exit 2
fi
exit "$status"
