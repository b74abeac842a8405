#!/usr/bin/env bash
# Prices and cost: the profile's default price per GPU type, a scenario's
# override per node, unknown prices (no number rather than a fake 0), the
# cost and goodput per dollar against their closed forms, and the effective
# scenario carrying the price that ran.
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

finish
