#!/usr/bin/env bash
# clustersim profile list / show, and the "did you mean" of unknown names, as a
# user meets them. Expected values come from the shipped data files (read with
# python3), not from copies of their numbers.
# Usage: test_cli_profile.sh CLUSTERSIM_BINARY SOURCE_ROOT
. "$(dirname "$0")/harness.sh"
v100="$src/data/profiles/v100_thesis.json"
# Only the source tree's data: an installed copy or the caller's data directory
# must not change what the test sees.
unset CLUSTERSIM_DATA_DIR

"$bin" --help >"$tmp/help" 2>&1
check "--help lists profile list and show" bash -c "grep -q 'profile list' '$tmp/help' && grep -q 'profile show NAME' '$tmp/help'"

# ---- profile list --------------------------------------------------------
"$bin" profile list >"$tmp/list.txt" 2>"$tmp/list.err"
check "list exits 0" test $? -eq 0
check "list: stderr empty" test ! -s "$tmp/list.err"
n_models=$(python3 -c "import json; print(len({m['model'] for m in json.load(open('$v100'))['models']}))")
check "list: v100_thesis row with GPU type v100 and $n_models models" \
  grep -Eq "^v100_thesis +v100 \($n_models\) +$n_models " "$tmp/list.txt"
check "list: interference and iGniter files named" \
  bash -c "grep -q '^  igniter_v100: interference' '$tmp/list.txt' && grep -q '^  igniter_v100_coefficients: iGniter' '$tmp/list.txt'"
"$bin" profile list --json >"$tmp/list.json" 2>&1
check "list --json: v100_thesis with its GPU types and model count" python3 -c "
import json, sys
d = json.load(open('$tmp/list.json'))
f = json.load(open('$v100'))
e = [x for x in d['files'] if x['name'] == 'v100_thesis']
ok = (len(e) == 1 and e[0]['kind'] == 'profile' and e[0]['source'] == f['source']
      and [g['name'] for g in e[0]['gpu_types']] == sorted(g['name'] for g in f['gpu_types'])
      and e[0]['models'] == len({m['model'] for m in f['models']}))
sys.exit(0 if ok else 1)"
check "list --json: files sorted by name" python3 -c "
import json, sys
n = [x['name'] for x in json.load(open('$tmp/list.json'))['files']]
sys.exit(0 if n == sorted(n) else 1)"
"$bin" profile list >"$tmp/list2.txt" 2>&1
check "list: same output twice" cmp -s "$tmp/list.txt" "$tmp/list2.txt"

# ---- profile show FILE ---------------------------------------------------
"$bin" profile show v100_thesis >"$tmp/show.txt" 2>"$tmp/show.err"
check "show v100_thesis exits 0" test $? -eq 0
check "show: every model of the file with its batch sizes, in order" python3 -c "
import json, re, sys
f = json.load(open('$v100'))
rows = {}
for line in open('$tmp/show.txt'):
    m = re.match(r'^(\S+)\s+([0-9,\-]+)\s+\S+-\S+\s', line)
    if m:
        rows[m.group(1)] = m.group(2)
want = {m['model']: ','.join(str(b) for b in sorted(p['batch'] for p in m['batches']))
        for m in f['models']}
sys.exit(0 if rows == want else 1)"
"$bin" profile show v100_thesis --json >"$tmp/show.json" 2>&1
check "show --json: batch sizes, latency range, payloads per model match the file" python3 -c "
import json, sys
d = json.load(open('$tmp/show.json'))
f = json.load(open('$v100'))
got = {(p['gpu_type'], p['model']): p for p in d['profiles']}
ok = len(got) == len(f['models'])
for m in f['models']:
    p = got.get((m['gpu'], m['model']))
    lat = [b['latency_ms'] for b in m['batches']]
    ok = ok and p is not None and p['batch_sizes'] == sorted(b['batch'] for b in m['batches'])
    ok = ok and abs(p['latency_ms']['min'] - min(lat)) < 1e-9 and abs(p['latency_ms']['max'] - max(lat)) < 1e-9
    ok = ok and p['input_bytes'] == m.get('input_bytes') and p['output_bytes'] == m.get('output_bytes')
    ok = ok and p['slo_ms'] == m.get('slo_ms')
sys.exit(0 if ok else 1)"
check "show --json: Creq (ao/wao/wsm) and Mreq presence per batch size match the file" python3 -c "
import json, sys
d = json.load(open('$tmp/show.json'))
f = json.load(open('$v100'))
got = {(p['gpu_type'], p['model']): p for p in d['profiles']}
ok = True
for m in f['models']:
    p = got[(m['gpu'], m['model'])]
    bs = sorted(m['batches'], key=lambda b: b['batch'])
    want_mreq = [b['batch'] for b in bs if 'mreq_pct' in b]
    ok = ok and p['mreq_batch_sizes'] == want_mreq
    ok = ok and p['fields']['mreq'] == ('all' if len(want_mreq) == len(bs) else 'some' if want_mreq else 'none')
    for k in ('ao', 'wao', 'wsm'):
        want = [b['batch'] for b in bs if k in b.get('creq_pct', {})]
        ok = ok and p['creq_batch_sizes'][k] == want
        ok = ok and p['fields']['creq_' + k] == ('all' if len(want) == len(bs) else 'some' if want else 'none')
sys.exit(0 if ok else 1)"
check "show --json: a file that leaves out some Mreq/WAO is reported as partial" python3 -c "
import json, sys
d = json.load(open('$tmp/show.json'))
f = json.load(open('$v100'))
partial = [m['model'] for m in f['models'] if any('mreq_pct' not in b for b in m['batches'])]
got = {p['model']: p for p in d['profiles']}
sys.exit(0 if partial and all(got[m]['fields']['mreq'] == 'some' for m in partial) else 1)"
check "show: partial Mreq printed as n/m" python3 -c "
import json, re, sys
f = json.load(open('$v100'))
ok = True
for m in f['models']:
    n = sum('mreq_pct' in b for b in m['batches']); t = len(m['batches'])
    want = 'yes' if n == t else '-' if n == 0 else '%d/%d' % (n, t)
    line = [l for l in open('$tmp/show.txt') if l.startswith(m['model'] + ' ')][0].split()
    ok = ok and line[7] == want
sys.exit(0 if ok else 1)"
check "show: interference files covering a model are named (alexnet in igniter_v100)" python3 -c "
import glob, json, os, sys
d = json.load(open('$tmp/show.json'))
files = {}
for path in sorted(glob.glob('$src/data/profiles/*.json')):
    f = json.load(open(path))
    if f['format'] == 'clustersim-interference':
        files[os.path.basename(path)[:-5]] = {m['model'] for m in f['models']}
ok = 'alexnet' in files['igniter_v100']
ok = ok and all([x['file'] for x in p['interference']] == [n for n in sorted(files) if p['model'] in files[n]]
                for p in d['profiles'])
sys.exit(0 if ok else 1)"
check "show: v100 has no iGniter file: derived on demand" python3 -c "
import json, sys
d = json.load(open('$tmp/show.json'))
sys.exit(0 if all(p['igniter']['inputs'] == 'derived on demand' for p in d['profiles']) else 1)"
"$bin" profile show igniter_v100_profile --json >"$tmp/ign.json" 2>&1
check "show: iGniter measurements on v100_igniter: measured" python3 -c "
import json, sys
d = json.load(open('$tmp/ign.json'))
c = json.load(open('$src/data/profiles/igniter_v100_coefficients.json'))
names = {m['model'] for m in c['models']}
ok = len(d['profiles']) > 0 and all(
    (p['igniter']['inputs'] == 'measured') == (p['gpu_type'] == c['gpu_type'] and p['model'] in names)
    for p in d['profiles'])
sys.exit(0 if ok else 1)"
"$bin" profile show "$v100" --json >"$tmp/bypath.json" 2>&1
check "show PATH: same profiles as show NAME" python3 -c "
import json, sys
a = json.load(open('$tmp/show.json'))['profiles']; b = json.load(open('$tmp/bypath.json'))['profiles']
sys.exit(0 if a == b else 1)"

# ---- profile show MODEL / GPU TYPE ----------------------------------------
"$bin" profile show resnet50 --json >"$tmp/model.json" 2>&1
check "show MODEL: one row per (file, GPU type) that profiles it" python3 -c "
import json, glob, os, sys
d = json.load(open('$tmp/model.json'))
want = set()
for path in glob.glob('$src/data/profiles/*.json'):
    f = json.load(open(path))
    if f.get('format') == 'clustersim-profile':
        want |= {(os.path.basename(path)[:-5], m['gpu']) for m in f['models'] if m['model'] == 'resnet50'}
got = {(p['file'], p['gpu_type']) for p in d['profiles']}
sys.exit(0 if d['matched'] == 'model' and got == want and len(want) > 0 else 1)"
"$bin" profile show v100 --json >"$tmp/gpu.json" 2>&1
check "show GPU TYPE: every model of v100" python3 -c "
import json, sys
d = json.load(open('$tmp/gpu.json'))
f = json.load(open('$v100'))
sys.exit(0 if d['matched'] == 'gpu type' and sorted(p['model'] for p in d['profiles']) == sorted(m['model'] for m in f['models']) else 1)"
"$bin" profile show ResNet50 >"$tmp/case.txt" 2>&1
check "show: names differing only in case are pointed out" grep -q 'also known: "resnet50"' "$tmp/case.txt"

# ---- bad input: exit 2, message, nothing on stdout --------------------------
bad "show: unknown model" 'no profile file, model or GPU type called "alexnt" (did you mean "alexnet"?)' profile show alexnt
bad "show: unknown GPU type, case" 'called "V100" (did you mean "v100"?)' profile show V100
bad "show: unknown file name" '(did you mean "v100_thesis"?)' profile show v100_thesys --json
bad "show: no NAME" "expected exactly one NAME" profile show
bad "profile: no subcommand" "expected a subcommand: list, show, measure or import" profile
bad "list: missing --profile file" "--profile nope.json: file not found" profile list --profile nope.json
printf '{"format": "clustersim-profile", "version": 1, "source": "x", "models": [{"gpu": "v100", "model": "m", "linear": {"alpha_ms": 1, "beta_ms": -1}}]}' >"$tmp/badprof.json"
bad "list: invalid --profile file" "badprof.json: models[0]" profile list --profile "$tmp/badprof.json"
mkdir -p "$tmp/data/profiles"
printf '{"format": ' >"$tmp/data/profiles/broken.json"
CLUSTERSIM_DATA_DIR="$tmp/data" "$bin" profile list >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
check "list: broken file in a data directory: exit 2 naming it" \
  bash -c "test $rc -eq 2 && grep -q 'broken.json: line 1' '$tmp/bad.err' && test ! -s '$tmp/bad.out'"
printf '{"format": "clustersim-calibration", "version": 1}' >"$tmp/data/profiles/broken.json"
CLUSTERSIM_DATA_DIR="$tmp/data" "$bin" profile list --json >"$tmp/other.json" 2>&1
check "list: a data file of another format is skipped" python3 -c "
import json, sys
d = json.load(open('$tmp/other.json'))
sys.exit(0 if 'broken' not in [f['name'] for f in d['files']] and len(d['files']) > 0 else 1)"

# ---- given files -----------------------------------------------------------
printf '{"format": "clustersim-profile", "version": 1, "source": "a test", "models": [{"gpu": "v100", "model": "mine", "slo_ms": 25, "linear": {"alpha_ms": 1, "beta_ms": 2}}]}' >"$tmp/mine.json"
"$bin" profile show mine --profile v100_thesis --profile "$tmp/mine.json" --json >"$tmp/mine.out" 2>&1
check "--profile: given files load in order into one set (a GPU type of an earlier one)" python3 -c "
import json, sys
d = json.load(open('$tmp/mine.out'))
p = d['profiles']
sys.exit(0 if len(p) == 1 and p[0]['gpu_type'] == 'v100' and p[0]['slo_ms'] == 25 and p[0]['batch_sizes'] == [] else 1)"

# ---- scenario validation suggests known names --------------------------------
scenario() { # model, gpu_type -> $tmp/sc.json
  cat >"$tmp/sc.json" <<JSON
{"profiles": ["$v100"], "cluster": {"gpus": 1, "gpu_type": "$2"},
 "placement": {"policy": "dedicated"},
 "clients": [{"model": "$1", "rate": 10, "slo_ms": 200, "duration_s": 1}]}
JSON
}
scenario ResNet50 v100
bad "scenario: model in the wrong case" 'clients[0]: model "ResNet50" has no profile on any GPU type of the cluster (did you mean "resnet50"?)' run "$tmp/sc.json" --output "$tmp/never"
check "scenario error: no output directory" test ! -e "$tmp/never"
scenario resnet50 V100
bad "scenario: GPU type in the wrong case" 'cluster.gpu_type: "V100" is not defined by any loaded profile (did you mean "v100"?)' place "$tmp/sc.json"
scenario qwerty v100
bad "scenario: nothing close, no suggestion" 'model "qwerty" has no profile on any GPU type of the cluster' place "$tmp/sc.json"
check "scenario: nothing close, no suggestion text" bash -c "! grep -q 'did you mean' '$tmp/bad.err'"
cat >"$tmp/nodes.json" <<JSON
{"profiles": ["$v100"], "cluster": {"nodes": [{"gpus": 1, "gpu_type": "v100"}, {"gpus": 1, "gpu_type": "v10"}]},
 "placement": {"policy": "dedicated"},
 "clients": [{"model": "resnet50", "rate": 10, "slo_ms": 200, "duration_s": 1}]}
JSON
bad "scenario: nodes[i].gpu_type misspelt" 'cluster.nodes[1]: gpu_type "v10" is not defined by any loaded profile (did you mean "v100"?)' place "$tmp/nodes.json"

finish
