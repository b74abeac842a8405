#!/usr/bin/env bash
# The cuda backend's first checks on a real GPU, as one short script for a
# machine that has one (docs/replay.md, "On a GPU"). It has NOT run on a GPU
# yet: the project's machines have none. What it does, each step bounded in
# time and logged, every output kept under OUT:
#   1. records the machine (nvidia-smi, CUDA toolkit, CPU);
#   2. builds the cuda backend (-Dcuda=enabled) in build-cuda;
#   3. starts an MPS control daemon of its own (pipe and log directories
#      under OUT), so that MPS shares apply;
#   4. `profile measure --backend cuda`: two models' isolated latencies per
#      batch, their latency at MPS shares 20/50/100 %, and both ordered pairs
#      at batch 8, as profile.json, interference.json and measured rows
#      (--csv: the format `profile import` and `calibrate --measured` read);
#   5. `calibrate --measured` on those rows with the measured profile;
#   6. `validate` on examples/validate/colocated.json, rates raised to a GPU's
#      speed;
#   7. stops the MPS daemon.
# A step that fails is reported and the next ones still run; the exit status
# is the number of failed steps (0: all ran).
# Usage: tools/gpu-check.sh [OUT]   (default: $OUT, else gpu-check-out)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-${OUT:-gpu-check-out}}
mkdir -p "$out"
out=$(cd "$out" && pwd)
failed=0
step() { # step NAME SECONDS COMMAND...: runs it, logs to OUT/NAME.log
  local name=$1 secs=$2
  shift 2
  echo "== $name (at most ${secs} s)" | tee -a "$out/steps.txt"
  if timeout "$secs" "$@" >"$out/$name.log" 2>&1; then
    echo "   ok" | tee -a "$out/steps.txt"
  else
    echo "   FAILED (exit $?; see $name.log)" | tee -a "$out/steps.txt"
    failed=$((failed + 1))
  fi
}

cd "$root"
step machine 30 bash -c 'nvidia-smi; nvidia-smi -q | head -60; ls -d /usr/local/cuda*; \
  /usr/local/cuda/bin/nvcc --version; lscpu | head -20; git rev-parse HEAD'
step build 300 bash -c 'meson setup build-cuda -Dcuda=enabled -Dcli_static_deps=disabled \
  --buildtype=release && ninja -C build-cuda'
cli=$root/build-cuda/src/cli/clustersim

export CUDA_MPS_PIPE_DIRECTORY=$out/mps-pipe CUDA_MPS_LOG_DIRECTORY=$out/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
step mps-start 20 nvidia-cuda-mps-control -d

step measure 240 "$cli" profile measure --backend cuda --like v100_thesis \
  --models resnet50,alexnet --gpu-type cuda_measured --batches 1,2,4,8,16,32 --repeat 20 \
  --pair-batch 8 --shares 20,50,100 -o "$out/measure" --csv "$out/measure/rows.csv"
step calibrate 60 "$cli" calibrate --measured "$out/measure/rows.csv" \
  --profile "$out/measure/profile.json" --interference "$out/measure/interference.json" --json
step validate 240 "$cli" validate examples/validate/colocated.json --backend cuda \
  --set 'clients[0].rate=400' --set 'clients[1].rate=800' -o "$out/validate"

step mps-stop 20 bash -c 'echo quit | nvidia-cuda-mps-control'
echo "$failed step(s) failed; outputs in $out" | tee -a "$out/steps.txt"
exit "$failed"
