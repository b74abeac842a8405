#!/usr/bin/env bash
# Prices and cost: the profile's default price per GPU type, a scenario's
# override per node, unknown prices (no number rather than a fake 0), the
# cost and goodput per dollar against their closed forms, and the effective
# scenario carrying the price that ran. Then `clustersim provision`: the
# fewest GPUs and the cheapest mix against a closed form and a brute-force
# enumeration of every mix, and its refusals.
# Usage: test_cli_cost.sh CLUSTERSIM_BINARY SOURCE_ROOT
. "$(dirname "$0")/harness.sh"
lin="$src/data/profiles/symphony_linear.json"
v100="$src/data/profiles/v100_thesis.json"

# ---- cost of a run ----------------------------------------------------------------
# Two V100s (AWS p3.2xlarge, $3.06 an hour each) over a 10 s window: $6.12
# an hour, 6.12 x 10 / 3600 dollars; goodput per dollar = goodput x 3600 / 6.12.
cat >"$tmp/v100.json" <<JSON
{"profiles": ["$v100"], "cluster": {"gpus": 2, "gpu_type": "v100"},
 "clients": [{"model": "resnet50", "rate": 200, "slo_ms": 200, "duration_s": 10, "warmup_s": 1,
              "arrival": "constant"}]}
JSON
"$bin" run "$tmp/v100.json" --output "$tmp/v100" >"$tmp/v100.out" 2>"$tmp/v100.err"
check "v100: runs" test $? -eq 0
check "v100: price = 2 x 3.06 from the profile, cost and goodput per dollar by their closed forms" \
  py "abs(d['cost']['price_per_hour'] - 6.12) < 1e-12 and d['cost']['duration_s'] == 10
      and abs(d['cost']['cost'] - 6.12 * 10 / 3600) < 1e-12
      and abs(d['cost']['goodput_per_dollar'] - d['total']['goodput_rps'] * 3600 / 6.12) < 1e-9
      and d['total']['goodput_rps'] > 190 and 'note' not in d['cost']" "$tmp/v100/summary.json"
check "v100: setup says where the price came from" \
  py "d['setup']['cluster']['prices'] == [{'node': 0, 'gpu_type': 'v100', 'gpus': 2, 'price_per_hour': 3.06,
      'price_source': d['setup']['cluster']['prices'][0]['price_source']}]
      and d['setup']['cluster']['prices'][0]['price_source'].startswith('profile default of GPU type v100: AWS EC2 On-Demand, p3.2xlarge')" \
  "$tmp/v100/summary.json"
check "v100: the table prints the cost" grep -q '^cost: \$6.12 per hour, \$0.017 for the 10 s measured, ' "$tmp/v100.out"
check "v100: the effective scenario carries the price and its source" \
  py "d['cluster']['price_per_hour'] == 3.06 and 'p3.2xlarge' in d['cluster']['price_source']" "$tmp/v100/scenario.json"
# Rerunning the effective scenario reproduces the summary, price source included.
(cd "$tmp" && "$bin" run "$tmp/v100/scenario.json" --output "$tmp/v100b" >/dev/null 2>&1)
check "v100: the effective scenario reproduces the summary byte for byte" cmp -s "$tmp/v100/summary.json" "$tmp/v100b/summary.json"

# ---- mixed types, unknown and overridden prices --------------------------------------
cat >"$tmp/mixed.json" <<JSON
{"profiles": ["$lin"], "dispatch": {"policy": "router", "max_wait_ms": 20},
 "cluster": {"nodes": [{"gpus": 1, "gpu_type": "1080ti"}, {"gpus": 3, "gpu_type": "a100"}]},
 "clients": [{"model": "ResNet50", "rate": 100, "slo_ms": 60, "duration_s": 4, "warmup_s": 1}]}
JSON
"$bin" run "$tmp/mixed.json" --output "$tmp/mixed" >"$tmp/mixed.out" 2>"$tmp/mixed.err"
check "1080ti + a100: runs" test $? -eq 0
check "1080ti + a100: no price for the 1080 Ti: cost fields null, a note names the node" \
  py "d['cost']['price_per_hour'] is None and d['cost']['cost'] is None and d['cost']['goodput_per_dollar'] is None
      and d['cost']['note'] == 'cost unknown: GPU type 1080ti (cluster.nodes[0]) has no price in its profile; give cluster.nodes[0].price_per_hour'
      and d['setup']['cluster']['prices'][0]['price_per_hour'] is None" "$tmp/mixed/summary.json"
check "1080ti + a100: the table says the cost is unknown" grep -q '^cost: -; cost unknown: GPU type 1080ti' "$tmp/mixed.out"
check "1080ti + a100: the effective scenario writes no price where none is known" \
  py "'price_per_hour' not in d['cluster']['nodes'][0] and 'price_per_hour' in d['cluster']['nodes'][1]" "$tmp/mixed/scenario.json"
"$bin" run "$tmp/mixed.json" --json --set 'cluster.nodes[0].price_per_hour=0.25' \
  --set 'cluster.nodes[1].price_per_hour=2' --set 'cluster.nodes[1].price_source="my quote"' >"$tmp/mixed2.json" 2>/dev/null
check "1080ti + a100 priced by the scenario: 0.25 + 3 x 2 = 6.25 an hour, sources recorded" \
  py "abs(d['cost']['price_per_hour'] - 6.25) < 1e-12 and abs(d['cost']['cost'] - 6.25 * 4 / 3600) < 1e-12
      and [p['price_source'] for p in d['setup']['cluster']['prices']] == ['scenario (cluster.nodes[0].price_per_hour)', 'my quote']" \
  "$tmp/mixed2.json"
"$bin" run "$tmp/v100.json" --json --set cluster.price_per_hour=0 >"$tmp/free.json" 2>/dev/null
check "a price of 0: cost 0, goodput per dollar undefined (null) with a note" \
  py "d['cost']['cost'] == 0 and d['cost']['goodput_per_dollar'] is None and 'price is 0' in d['cost']['note']" "$tmp/free.json"
# MIG: instances share their GPU's price.
"$bin" run "$tmp/v100.json" --json --set 'cluster.mig=[{"sm_fraction": 0.5, "memory_fraction": 0.5}, {"sm_fraction": 0.5, "memory_fraction": 0.5}]' >"$tmp/mig.json" 2>/dev/null
check "MIG: 4 instances of 2 GPUs cost 2 GPUs" py "len(d['gpus']) == 4 and abs(d['cost']['price_per_hour'] - 6.12) < 1e-12" "$tmp/mig.json"

# ---- provision ------------------------------------------------------------------
# Dedicated placement gives client i the i-th GPU, a100s first (the order of
# --types). ResNet50 at 1500 req/s needs an A100: at its largest batch within
# 50 ms (21) a 1080 Ti runs 21 / (2.05 x 21 + 5.378 ms) = 434 req/s; an A100
# at batch 30 (what 20 ms of MAX_WAIT gathers) runs 30 / 13.2 ms = 2270.
# DenseNet121 and MobileNetV2 at 100 req/s fit either type (batches of 2,
# 20 + 12.4 ms < 50). So a mix (a a100, b 1080ti) passes exactly when a >= 1
# and a + b >= 3: the fewest GPUs are 3, and with the 1080 Ti at $0.5 the
# cheapest mix is 1 a100 + 2 1080ti, $2.74470525 + $1 an hour, also the
# cheapest of the 3-GPU mixes.
cat >"$tmp/three.json" <<JSON
{"profiles": ["$lin"], "seed": 3, "dispatch": {"policy": "router", "max_wait_ms": 20},
 "cluster": {"gpus": 1, "gpu_type": "a100"},
 "clients": [{"model": "ResNet50", "rate": 1500, "slo_ms": 50, "duration_s": 3, "warmup_s": 0.5},
             {"model": "DenseNet121", "rate": 100, "slo_ms": 50, "duration_s": 3, "warmup_s": 0.5},
             {"model": "MobileNetV2", "rate": 100, "slo_ms": 50, "duration_s": 3, "warmup_s": 0.5}]}
JSON
"$bin" provision "$tmp/three.json" --types a100,1080ti --max-gpus 6 --max a100=3,1080ti=3 \
  --price 1080ti=0.5 --json >"$tmp/prov.json" 2>"$tmp/prov.err"
check "provision: exits 0" test $? -eq 0
check "provision: fewest GPUs 3 = 1 a100 + 2 1080ti (closed form), the cheapest too at 2.74470525 + 2 x 0.5" \
  py "d['fewest_gpus'] == {'gpus_per_type': {'a100': 1, '1080ti': 2}, 'gpus': 3, 'price_per_hour': d['fewest_gpus']['price_per_hour']}
      and abs(d['fewest_gpus']['price_per_hour'] - 3.74470525) < 1e-12 and d['cheapest'] == d['fewest_gpus']
      and d['monotonicity_violations'] == []" "$tmp/prov.json"
# Brute force: every mix within the bounds run by clustersim run, passed by
# the p99 criterion computed here from its summary.
check "provision: the same answers as running every mix (brute force), with fewer simulations" python3 -c "
import json, math, subprocess, sys
base = json.load(open('$tmp/three.json'))
res = json.load(open('$tmp/prov.json'))
price = {'a100': 21.957642 / 8, '1080ti': 0.5}
passing = []
for a in range(4):
    for b in range(4):
        if a + b == 0:
            continue
        nodes = [{'gpus': n, 'gpu_type': t} for n, t in ((a, 'a100'), (b, '1080ti')) if n]
        doc = dict(base, cluster={'nodes': nodes})
        open('$tmp/mix.json', 'w').write(json.dumps(doc))
        out = subprocess.run(['$bin', 'run', '$tmp/mix.json', '--json'], capture_output=True, text=True)
        d = json.loads(out.stdout)
        ok = all(m['requests']['measured'] > 0 and m['requests']['good'] >= math.ceil(0.99 * m['requests']['measured'])
                 for m in d['models'])
        # The probes the search ran give the same verdict.
        for p in res['probes']:
            if p['gpus_per_type'] == {'a100': a, '1080ti': b}:
                assert p['pass'] == ok, (a, b, p)
        if ok:
            passing.append((a + b, a * price['a100'] + b * price['1080ti'], a, b))
assert sorted((a, b) for _, _, a, b in passing) == [(a, b) for a in range(1, 4) for b in range(4) if a + b >= 3], passing
fewest = min(passing, key=lambda m: (m[0], m[1]))
cheapest = min(passing, key=lambda m: (m[1], m[0]))
f, c = res['fewest_gpus'], res['cheapest']
assert (f['gpus_per_type']['a100'], f['gpus_per_type']['1080ti']) == fewest[2:], (f, fewest)
assert (c['gpus_per_type']['a100'], c['gpus_per_type']['1080ti']) == cheapest[2:], (c, cheapest)
assert len(res['probes']) < 15, len(res['probes'])
"
"$bin" provision "$tmp/three.json" --types a100,1080ti --max-gpus 6 --max a100=3,1080ti=3 --price 1080ti=0.5 >"$tmp/prov.txt" 2>&1
check "provision: the table prints every probe, then the answers" \
  grep -qzP "probe +a100 +1080ti +gpus +\\\$/hour [\s\S]*\nfewest GPUs: 1 x a100 \+ 2 x 1080ti \(3 GPUs, \\\$3.7447 per hour\)\ncheapest: +1 x a100 \+ 2 x 1080ti" "$tmp/prov.txt"
"$bin" provision "$tmp/three.json" --types a100,1080ti --max-gpus 6 --max a100=3,1080ti=3 --price 1080ti=0.5 --json >"$tmp/prov2.json" 2>/dev/null
check "provision: deterministic (same JSON twice)" cmp -s "$tmp/prov.json" "$tmp/prov2.json"
"$bin" provision "$tmp/three.json" --types 1080ti --max-gpus 8 --json >"$tmp/none.json" 2>"$tmp/none.err"
check "provision: no 1080ti mix serves ResNet50's 1500 req/s: null answers and a warning" \
  py "d['fewest_gpus'] is None and d['cheapest'] is None and d['frontier'] == []" "$tmp/none.json"
check "provision: ...warned on stderr" grep -q "warning \[no_mix\]" "$tmp/none.err"
"$bin" provision "$tmp/three.json" --types a100,1080ti --max-gpus 6 --json >"$tmp/noprice.json" 2>/dev/null
check "provision: without a 1080 Ti price the cheapest is the cheapest priced mix (3 a100), never a fake 0" \
  py "d['cheapest']['gpus_per_type'] == {'a100': 3, '1080ti': 0} and d['fewest_gpus']['price_per_hour'] is None" "$tmp/noprice.json"

# More GPUs can hurt: dedicated gives the first GPU to ResNet50, and with a
# 1080 Ti listed first, adding one moves ResNet50 off its A100.
"$bin" provision "$tmp/three.json" --types 1080ti,a100 --max-gpus 3 --unset 'clients[2]' --unset 'clients[1]' \
  --json >"$tmp/nonmono.json" 2>"$tmp/nonmono.err"
check "provision: a probe that contradicts 'more GPUs never hurt' is reported (JSON and stderr)" \
  py "d['fewest_gpus']['gpus_per_type'] == {'1080ti': 0, 'a100': 1} and len(d['monotonicity_violations']) >= 1
      and d['monotonicity_violations'][0].startswith('probe ') and '(1 1080ti + 1 a100) fails although probe' in d['monotonicity_violations'][0]" \
  "$tmp/nonmono.json"
check "provision: ...with a warning on stderr" grep -q "warning \[not_monotone\]: probe" "$tmp/nonmono.err"

# The centralized policies plan with the slowest type present: a mixed
# search warns before its answer that its assumption fails across types.
"$bin" provision "$tmp/three.json" --types a100,1080ti --max-gpus 2 --unset 'clients[2]' --unset 'clients[1]' \
  --set 'dispatch={"policy": "symphony", "d_ctrl_us": 0}' --json >"$tmp/slowest.json" 2>"$tmp/slowest.err"
check "provision: symphony over two types is reported as not monotone by construction" \
  py "any(v.startswith('dispatch \"symphony\" plans every GPU with the slowest GPU type') for v in d['monotonicity_violations'])" \
  "$tmp/slowest.json"
"$bin" provision "$tmp/three.json" --types a100 --max-gpus 2 --unset 'clients[2]' --unset 'clients[1]' \
  --set 'dispatch={"policy": "symphony", "d_ctrl_us": 0}' --json >"$tmp/onetype.json" 2>/dev/null
check "provision: ...but not over one type" py "d['monotonicity_violations'] == []" "$tmp/onetype.json"

# The cheapest mix's tie: of mixes of one price, the fewest GPUs. ResNet50
# alone at 1200 req/s (eager, no placement) passes with 1 a100 or with 4
# 1080ti (found first, a100 count 0); at $2 and $0.5 both cost 4 x 0.5 =
# 1 x 2 = $2 an hour, so the cheapest is 1 a100, not the first found.
"$bin" provision "$tmp/three.json" --types a100,1080ti --max-gpus 6 --unset 'clients[2]' --unset 'clients[1]' \
  --set 'clients[0].rate=1200' --set 'dispatch={"policy": "eager"}' --price a100=2,1080ti=0.5 \
  --json >"$tmp/tie.json" 2>/dev/null
check "provision: of two mixes at \$2 an hour (4 1080ti found first, 1 a100), the cheapest is the one of fewer GPUs" \
  py "[(m['gpus_per_type'], m['price_per_hour']) for m in d['frontier']] == [({'a100': 0, '1080ti': 4}, 2), ({'a100': 1, '1080ti': 0}, 2)]
      and d['cheapest'] == {'gpus_per_type': {'a100': 1, '1080ti': 0}, 'gpus': 1, 'price_per_hour': 2}" "$tmp/tie.json"
bad "provision: no --types" "clustersim provision: --types: required" provision "$tmp/three.json"
bad "provision: an unknown type" 'clustersim: provision: --types: GPU type "a10" is not defined by the profiles of' \
  provision "$tmp/three.json" --types a10
bad "provision: a type twice" 'GPU type "a100" is given twice' provision "$tmp/three.json" --types a100,a100
bad "provision: --max-gpus 0" "clustersim provision: --max-gpus 0: expected an integer in [1, 1048576]" \
  provision "$tmp/three.json" --types a100 --max-gpus 0
bad "provision: --max of a type not in --types" 'clustersim provision: --max: "v100" is not one of the --types' \
  provision "$tmp/three.json" --types a100 --max v100=2
bad "provision: --max not a count" "clustersim provision: --max a100=-1: expected an integer in [0, 1048576]" \
  provision "$tmp/three.json" --types a100 --max a100=-1
bad "provision: --price negative" "clustersim provision: --price a100=-3: expected dollars per GPU-hour" \
  provision "$tmp/three.json" --types a100 --price a100=-3
bad "provision: --price without =" "clustersim provision: --price 3: expected TYPE=VALUE pairs" \
  provision "$tmp/three.json" --types a100 --price 3
bad "provision: bad criterion" "clustersim provision: --criterion p95: expected p99 or bad-rate" \
  provision "$tmp/three.json" --types a100 --criterion p95
bad "provision: unknown option" "clustersim provision: Unknown option --bogus" \
  provision "$tmp/three.json" --types a100 --bogus
bad "provision: MIG is not searched" 'cluster: provision replaces the cluster by whole GPUs and does not search MIG layouts' \
  provision "$tmp/three.json" --types a100 --set 'cluster.mig=[{"sm_fraction": 0.5, "memory_fraction": 0.5}]'

finish
