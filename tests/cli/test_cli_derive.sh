#!/usr/bin/env bash
# `clustersim derive-igniter` as a user meets it: the file it writes, that it
# is deterministic, that placing with it equals placing without
# "coefficients" (the same derivation), and bad input (exit 2, a message
# naming what was wrong, no file written).
# Usage: test_cli_derive.sh CLUSTERSIM_BINARY SOURCE_ROOT
. "$(dirname "$0")/harness.sh"

"$bin" --help >"$tmp/help" 2>&1
check "--help lists derive-igniter" grep -q "derive-igniter" "$tmp/help"
"$bin" derive-igniter --help >"$tmp/help" 2>&1
check "derive-igniter --help documents --gpu-type" grep -q -- "--gpu-type" "$tmp/help"

"$bin" derive-igniter --profile v100_thesis --gpu-type v100 -o "$tmp/a.json" >"$tmp/a.out" 2>"$tmp/a.err"
check "exits 0" test $? -eq 0
check "stderr quiet" test ! -s "$tmp/a.err"
check "prints the fit per model" grep -q "^efficientnet_b7 " "$tmp/a.out"
check "a clustersim-igniter v1 file of the 13 models on v100" python3 -c "
import json,sys; d=json.load(open('$tmp/a.json'))
p=json.load(open('$src/data/profiles/v100_thesis.json'))
n=len({m['model'] for m in p['models'] if m['gpu'] == 'v100'})
sys.exit(0 if d['format'] == 'clustersim-igniter' and d['version'] == 1 and d['gpu_type'] == 'v100'
         and len(d['models']) == n == 13 else 1)"
check "source says what is measured and what is absent" python3 -c "
import json,sys; s=json.load(open('$tmp/a.json'))['source']
sys.exit(0 if all(x in s for x in ('not measured on a GPU', 'no L2 cache model',
                                    'no power or throttling model', 'profiles v100_thesis')) else 1)"
check "no path of this machine in the file" bash -c "! grep -qF -- '$src' '$tmp/a.json'"
"$bin" derive-igniter --profile v100_thesis --gpu-type v100 -o "$tmp/b.json" -q >"$tmp/b.out" 2>&1
check "--quiet prints nothing" test ! -s "$tmp/b.out"
check "deterministic: byte-identical files" cmp -s "$tmp/a.json" "$tmp/b.json"
"$bin" derive-igniter -p "$src/data/profiles/v100_thesis.json" -g v100 --models vgg19,alexnet \
  --mps-share-rule power --mps-gamma 2 --batches 1,16,32 --shares 10,50,100 -o "$tmp/c.json" >/dev/null 2>&1
check "--models, --mps-share-rule, --mps-gamma and the grid options" python3 -c "
import json,sys; d=json.load(open('$tmp/c.json'))
sys.exit(0 if [m['model'] for m in d['models']] == ['vgg19', 'alexnet'] and
         d['grid'] == {'batches': [1, 16, 32], 'shares_pct': [10, 50, 100]} and
         'MPS share rule power (gamma 2)' in d['source'] else 1)"
"$bin" derive-igniter -p igniter_v100_profile -g v100_igniter -i igniter_v100 -o "$tmp/d.json" >/dev/null 2>&1
check "--interference: iGniter's own tables" python3 -c "
import json,sys; d=json.load(open('$tmp/d.json'))
p=json.load(open('$src/data/profiles/igniter_v100_profile.json'))
want=sorted({m['model'] for m in p['models'] if m['gpu'] == 'v100_igniter'})
sys.exit(0 if sorted(m['model'] for m in d['models']) == want and len(want) == 4
         and 'interference igniter_v100' in d['source'] else 1)"

# The file given as "coefficients" places exactly as the derivation without it.
models='["alexnet", "densenet121", "efficientnet_b7", "resnet50", "vgg19"]'
python3 - "$src" "$tmp" "$models" <<'PY'
import json, sys
src, tmp, models = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
base = {"profiles": [src + "/data/profiles/v100_thesis.json"],
        "cluster": {"gpus": 6, "gpu_type": "v100", "mps": True},
        "placement": {"policy": "igniter"},
        "clients": [{"model": m, "rate": 500, "slo_ms": 200, "requests": 100} for m in models]}
json.dump(base, open(tmp + "/auto.json", "w"))
base["placement"]["coefficients"] = tmp + "/a.json"
json.dump(base, open(tmp + "/file.json", "w"))
PY
"$bin" place "$tmp/auto.json" --json >"$tmp/auto.out" 2>&1
"$bin" place "$tmp/file.json" --json >"$tmp/file.out" 2>&1
check "place without coefficients: derived, 5 GPUs used, every model placed" python3 -c "
import json,sys; d=json.load(open('$tmp/auto.out'))
placed={r['model'] for g in d['gpus'] for r in g['replicas']}
sys.exit(0 if len(placed) == 5 and 'derived from the simulator' in d['log'] else 1)"
check "the written file places the same replicas" python3 -c "
import json,sys; a=json.load(open('$tmp/auto.out')); b=json.load(open('$tmp/file.out'))
sys.exit(0 if a['gpus'] == b['gpus'] and a['expected_goodput_rps'] == b['expected_goodput_rps'] else 1)"

# The engine runs a batch exactly as the derivation measured it: resnet50
# batch 16 alone under a 30 % share, full batches only (constant arrivals).
cat >"$tmp/manual.json" <<JSON
{"profiles": ["$src/data/profiles/v100_thesis.json"], "cluster": {"gpus": 1, "gpu_type": "v100", "mps": true},
 "dispatch": {"policy": "router", "max_wait_ms": 1000},
 "placement": {"policy": "manual", "replicas": [{"model": "resnet50", "gpu": 0, "batch": 16, "mps_share": 0.3}]},
 "clients": [{"model": "resnet50", "rate": 400, "slo_ms": 1000, "requests": 320, "arrival": "constant"}]}
JSON
"$bin" run "$tmp/manual.json" --output "$tmp/manual" >/dev/null 2>&1
check "simulated GPU latency equals the derived cell (batch 16, 30 %)" python3 -c "
import csv,json,sys
d=json.load(open('$tmp/a.json')); g=d['grid']
m=[x for x in d['models'] if x['model']=='resnet50'][0]
want=m['gpu_latency_ms'][g['batches'].index(16)][g['shares_pct'].index(30)]
rows=list(csv.DictReader(open('$tmp/manual/worker_latency.csv')))
sys.exit(0 if rows and all(abs(float(r['mean_gpu_latency_ms']) - want) < 1e-6 for r in rows) else 1)"

bad_derive() { # description, expected message, derive-igniter args...: bad plus no file written
  local what=$1 msg=$2
  shift 2
  rm -f "$tmp/out.json"
  "$bin" derive-igniter "$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
  local rc=$?
  check "$what: exit 2" test $rc -eq 2
  check "$what: message" grep -qF -- "$msg" "$tmp/bad.err"
  check "$what: nothing on stdout" test ! -s "$tmp/bad.out"
  check "$what: no file written" test ! -e "$tmp/out.json"
}
o=(-o "$tmp/out.json")
bad_derive "unknown GPU type" 'GPU type "a100" is not in the profiles' -p v100_thesis -g a100 "${o[@]}"
bad_derive "unknown model" 'no profile of model "resnet5" on GPU type "v100"' -p v100_thesis -g v100 --models alexnet,resnet5 "${o[@]}"
bad_derive "model twice" 'model "vgg19" is listed twice' -p v100_thesis -g v100 --models vgg19,vgg19 "${o[@]}"
bad_derive "empty model name" "--models: expected comma-separated model names" -p v100_thesis -g v100 --models alexnet, "${o[@]}"
bad_derive "missing profile" '--profile: "nope" not found' -p nope -g v100 "${o[@]}"
bad_derive "no --profile" "--profile is required" -g v100 "${o[@]}"
bad_derive "no --gpu-type" "--gpu-type is required" -p v100_thesis "${o[@]}"
bad_derive "no --output" "--output is required" -p v100_thesis -g v100
bad_derive "bad gamma" "--mps-gamma: expected a number in [0.01, 100], as cluster.mps_gamma" -p v100_thesis -g v100 --mps-share-rule power --mps-gamma 0 "${o[@]}"
bad_derive "bad batches" "--batches: expected at least 3 increasing whole batch sizes" -p v100_thesis -g v100 --batches 1,8,4 "${o[@]}"
bad_derive "bad shares" "--shares: expected at least 3 increasing MPS shares in (0, 100]" -p v100_thesis -g v100 --shares 10,50,x "${o[@]}"
bad_derive "missing interference file" '--interference: "nope.json" not found' -p v100_thesis -g v100 -i nope.json "${o[@]}"
bad_derive "positional argument" "takes no positional argument" -p v100_thesis -g v100 extra "${o[@]}"
bad_derive "unwritable output" "$tmp/no/dir/out.json" -p v100_thesis -g v100 -o "$tmp/no/dir/out.json"

finish
