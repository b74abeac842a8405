#!/usr/bin/env bash
# The thesis' iGniter experiments (6.2.1, 6.2.2, 6.3) on the thesis' V100
# table, with iGniter's measurements derived from the simulator's GPU model
# (no "coefficients" in the scenarios). Prints, per run, the GPUs iGniter's
# plan needs, the goodput per model and in total (req/s) and the ideal
# (submitted) total. docs/policies.md ("iGniter on the thesis' V100 table")
# discusses the numbers.
#
# Usage: examples/thesis_igniter/sweep.sh [CLUSTERSIM]   (default: build/src/cli/clustersim)
# 29 simulations, a few seconds in all.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/src/cli/clustersim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run LABEL SCENARIO --set ...: one simulation, one line of the table.
run() {
  local label=$1 scenario=$2
  shift 2
  "$bin" run "$scenario" --output "$tmp/out" --force "$@" >/dev/null 2>&1
  python3 - "$label" "$tmp/out/summary.json" <<'PY'
import json, re, sys
label, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
need = re.search(r"gpus_needed: (\d+)", d["placement"]["log"]).group(1)
per = " ".join("%s %.0f" % (m["model"], m["goodput_rps"]) for m in d["models"])
t = d["total"]
print("%-22s plan %s GPUs  goodput %7.1f of %7.1f  (%s)" % (label, need, t["goodput_rps"],
                                                          t["submitted_rps"], per))
PY
}

echo "6.2.1: alexnet, densenet121, efficientnet_b7, resnet50, vgg19; 500 req/s each; SLO 200 ms"
for g in 1 2 3 4 5 6; do
  run "$g GPUs" "$here/thesis_6_2_1.json" --set cluster.gpus=$g
done
echo
echo "6.2.2: resnet50, mobilenet_v2, bert, gpt2; 300 req/s each; SLO 300 ms"
for g in 1 2 3 4 5 6 7 8; do
  run "$g GPUs" "$here/thesis_6_2_2.json" --set cluster.gpus=$g
done
echo
echo "6.3: the 6.2.1 models on 4 GPUs; total rate split equally; 8 s of requests"
for slo in 150 250 350; do
  for total in 1000 2000 3000 4000 5000; do
    rate=$((total / 5))
    sets=()
    for i in 0 1 2 3 4; do
      sets+=(--set "clients[$i].rate=$rate" --set "clients[$i].requests=$((rate * 8))"
             --set "clients[$i].slo_ms=$slo")
    done
    run "SLO $slo, $total req/s" "$here/thesis_6_3.json" "${sets[@]}"
  done
done
