#!/usr/bin/env bash
# clustersim profile import and calibrate --measured on the shipped measured
# data (docs/profiles.md "Importing measured data", docs/gpu-model.md "Scoring
# measured rows"). Expected values are computed here from the CSV rows with
# python3, not copied from the program's output.
# Usage: test_cli_measured.sh CLUSTERSIM_BINARY SOURCE_ROOT
. "$(dirname "$0")/harness.sh"
unset CLUSTERSIM_DATA_DIR
m="$src/data/measured"

# ---- profile import ------------------------------------------------------
"$bin" profile import "$m/gpulet_a100_isolated.csv" "$m/gpulet_a100_pairs.csv" --gpu-type a100_gpulet \
  -o "$tmp/a.json" --interference "$tmp/ai.json" >"$tmp/imp.out" 2>"$tmp/imp.err"
check "import: exit 0, nothing on stdout" bash -c "[ $? -eq 0 ] && [ ! -s '$tmp/imp.out' ]"
check "import: counts on stderr" grep -qF "(70 batch points) and $tmp/ai.json (420 share cells, 8 pairs from 1960 rows)" "$tmp/imp.err"
mkdir "$tmp/again"
"$bin" profile import "$m/gpulet_a100_isolated.csv" "$m/gpulet_a100_pairs.csv" --gpu-type a100_gpulet \
  -o "$tmp/again/a.json" --interference "$tmp/again/ai.json" 2>/dev/null
for f in a.json ai.json a.sources.csv ai.sources.csv; do
  check "import: $f byte-identical on rerun" cmp -s "$tmp/$f" "$tmp/again/$f"
done
check "import: every isolated row at 100 % is a batch point, every other one a share cell (values, notes)" python3 -c "
import csv, json, sys
rows = list(csv.DictReader(open('$m/gpulet_a100_isolated.csv')))
p = json.load(open('$tmp/a.json')); i = json.load(open('$tmp/ai.json'))
pts = {(x['model'], b['batch']): (b['latency_ms'], b['note']) for x in p['models'] for b in x['batches']}
cells = {(x['model'], c[0], c[1]): c[2] for x in i['models'] for c in x['share_latency']}
ok = len(pts) == 70 and len(cells) == 420
for r in rows:
    k = (r['model'], int(r['batch']))
    ok = ok and cells[k + (float(r['share_pct']),)] == float(r['latency_ms'])
    if r['share_pct'] == '100':
        ok = ok and pts[k] == (float(r['latency_ms']), r['source_path'])
sys.exit(0 if ok else 1)"
check "import: provenance names a CSV line for every number" python3 -c "
import csv, json, sys
s = list(csv.DictReader(open('$tmp/ai.sources.csv')))
rows = {int(r['line']) for r in s if r['file'] == 'gpulet_a100_pairs.csv'}
cells = [r for r in s if '.share_latency[' in r['json_path']]
sys.exit(0 if len(rows) == 1960 and len(cells) == 420 and all(r['source_path'] for r in s) else 1)"
check "import: source names each CSV with its sha256" python3 -c "
import hashlib, json, sys
src = json.load(open('$tmp/ai.json'))['source']
h = hashlib.sha256(open('$m/gpulet_a100_pairs.csv', 'rb').read()).hexdigest()
sys.exit(0 if 'gpulet_a100_pairs.csv (sha256 %s)' % h in src else 1)"

h=source,gpu,model,batch,share_pct,mig_gpcs,partners,latency_ms,isolated_latency_ms,kind
printf '%s\n' "$h" s,g,m,1,,,,2,,isolated s,g,m,2,,,,3,,isolated s,g,m,1,,1,,5,,isolated \
  's,g,m,1,50,,a:b=1:s=25;b:b=1:s=25,4,2,colocated' >"$tmp/mixed.csv"
"$bin" profile import "$tmp/mixed.csv" -o "$tmp/mixed.json" --interference "$tmp/mixedi.json" 2>"$tmp/mixed.err"
check "import: unmapped rows counted and named (MIG)" grep -qF "1 row not imported: MIG instance rows (mig_gpcs; not an MPS share of the whole GPU) (mixed.csv line 4)" "$tmp/mixed.err"
check "import: unmapped rows counted and named (several partners)" grep -qF "1 row not imported: co-located with several partners or copies (pairs take one) (mixed.csv line 5)" "$tmp/mixed.err"

# ---- calibrate --measured --------------------------------------------------
"$bin" calibrate --measured "$m/igniter_v100_pairs.csv" --profile v100_igniter --json >"$tmp/ig.json" 2>"$tmp/ig.err"
check "calibrate --measured: exit 0, stderr empty" bash -c "[ $? -eq 0 ] && [ ! -s '$tmp/ig.err' ]"
check "calibrate --measured --json: total, baselines, sources, pairs" py "d['total']['rows'] == 750 and
  set(d['total']) >= {'rows', 'median_pct', 'p90_pct'} and
  set(d['baselines']) == {'none', 'constant', 'pair_factor', 'pair_loglinear'} and
  [s['source'] for s in d['sources']] == ['igniter_icloud_ecnu'] and len(d['pairs']) == 6 and
  all(p['measured_scale'] and p['rows'] == 125 for p in d['pairs']) and
  d['inputs']['interference'] == 'igniter_v100.json' and d['not_scored']['rows'] == 0" "$tmp/ig.json"
check "calibrate --measured: none = |isolated - real| / real (the profile's 100 % column completes the tables)" python3 -c "
import csv, json, statistics, sys
r = list(csv.DictReader(open('$m/igniter_v100_pairs.csv')))
e = sorted(abs(float(x['isolated_latency_ms']) - float(x['latency_ms'])) / float(x['latency_ms']) for x in r)
d = json.load(open('$tmp/ig.json'))
sys.exit(0 if abs(d['baselines']['none']['median_pct'] - 100 * statistics.median(e)) < 1e-3 else 1)"
check "calibrate --measured: constant = exp(mean log(latency / isolated)) of the shipped rows" python3 -c "
import csv, json, math, sys
r = list(csv.DictReader(open('$m/igniter_v100_pairs.csv')))
k = math.exp(sum(math.log(float(x['latency_ms']) / float(x['isolated_latency_ms'])) for x in r) / len(r))
d = json.load(open('$tmp/ig.json'))
c = d['sources'][0]['constant']
sys.exit(0 if abs(c['slowdown'] - k) < 1e-12 and c['rows'] == 750 and c['own_source'] else 1)"
"$bin" calibrate --measured "$m/igniter_v100_pairs.csv" --profile igniter_v100_profile --json >"$tmp/ig2.json" 2>&1
"$bin" calibrate --measured "$m/igniter_v100_pairs.csv" --profile "$src/data/profiles/igniter_v100_profile.json" \
  --interference "$src/data/profiles/igniter_v100.json" --json >"$tmp/ig3.json" 2>&1
check "calibrate --measured: --profile by GPU type, shipped name or path: same report" \
  bash -c "cmp -s '$tmp/ig.json' '$tmp/ig2.json' && cmp -s '$tmp/ig.json' '$tmp/ig3.json'"
"$bin" calibrate --measured "$m/gpulet_a100_pairs.csv" --profile a100_gpulet >"$tmp/g.txt" 2>&1
check "calibrate --measured: text report, 1960 rows, pairs marked measured" \
  bash -c "grep -q '^rows scored: 1960; not scored: 0' '$tmp/g.txt' && [ \$(grep -c '(measured scale)' '$tmp/g.txt') -eq 8 ]"
"$bin" calibrate --measured "$m/gpulet_a100_isolated.csv" --measured "$m/gpulet_a100_pairs.csv" --profile a100_gpulet --json >"$tmp/g2.json" 2>&1
check "calibrate --measured: isolated rows counted as not scored" py "d['total']['rows'] == 1960 and d['not_scored']['rows'] == 420" "$tmp/g2.json"
"$bin" calibrate --measured "$m/gpulet_a100_pairs.csv" --measured "$m/igniter_v100_pairs.csv" --profile a100_gpulet --json >"$tmp/mix.json" 2>"$tmp/mix.err"
check "calibrate --measured: rows of two GPUs with one profile warned about, the others not scored" bash -c "
  grep -qF 'warning: the scored rows were measured on 2 GPUs' '$tmp/mix.err' &&
  python3 -c \"import json,sys; d=json.load(open('$tmp/mix.json')); sys.exit(0 if d['total']['rows'] == 1960 + 250 and d['not_scored']['rows'] == 500 and len(d['gpus']) == 2 else 1)\""
check "calibrate --measured: pairs are per source (resnet50|vgg19 twice)" py "len(d['pairs']) == 8 + 2 and
  sorted(p['source'] for p in d['pairs'] if (p['victim'], p['aggressor']) == ('resnet50', 'vgg19')) == ['gpulet_0909wlgur', 'igniter_icloud_ecnu']" "$tmp/mix.json"

# ---- profile measure --csv: the same format, read back by import and calibrate --
"$bin" profile measure --backend emulated --like v100_thesis --like-interference igniter_v100 \
  --models resnet50,vgg19 --batches 1,2 --pair-batch 2 --shares 50,100 --repeat 3 --gpu-type emu \
  -o "$tmp/meas" --csv "$tmp/meas.csv" >"$tmp/meas.out" 2>"$tmp/meas.err"
check "measure --csv: exit 0, the CSV path printed" bash -c "[ $? -eq 0 ] && grep -qx '$tmp/meas.csv' '$tmp/meas.out'"
check "measure --csv: isolated, 50 % and pair rows (100 % is the isolated row), as profile.json" python3 -c "
import csv, json, sys
r = list(csv.DictReader(open('$tmp/meas.csv')))
p = json.load(open('$tmp/meas/profile.json'))
iso = {(x['model'], int(x['batch'])): float(x['latency_ms']) for x in r if x['kind'] == 'isolated' and not x['share_pct']}
want = {(m['model'], b['batch']): b['latency_ms'] for m in p['models'] for b in m['batches']}
ok = len(r) == 4 + 4 + 2 and all(abs(iso[k] - want[k]) <= 1e-6 * want[k] for k in want)
ok = ok and sorted(x['share_pct'] for x in r if x['share_pct']) == ['50'] * 4
ok = ok and sorted(x['partners'] for x in r if x['kind'] == 'colocated') == ['resnet50:b=2', 'vgg19:b=2']
ok = ok and all(x['machine'] and x['source_path'] for x in r)
sys.exit(0 if ok else 1)"
"$bin" profile import "$tmp/meas.csv" -o "$tmp/emu.json" --interference "$tmp/emu_interference.json" 2>"$tmp/emu.err"
check "measure --csv: profile import reads it (pairs without shares named)" bash -c "[ $? -eq 0 ] && grep -qF '2 rows not imported: co-located without the MPS share of both sides' '$tmp/emu.err'"
"$bin" calibrate --measured "$tmp/meas.csv" --profile "$tmp/emu.json" --json >"$tmp/emu.score" 2>&1
check "measure --csv: calibrate --measured scores its pairs" py "d['total']['rows'] == 2 and d['inputs']['interference'] == 'emu_interference.json'" "$tmp/emu.score"
finish
