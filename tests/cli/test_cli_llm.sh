#!/usr/bin/env bash
# clustersim llm run and search: a synthetic run twice (byte-identical outputs), the
# shipped Vidur code trace under vLLM and Sarathi-Serve (a sanity check of
# magnitudes, docs/llm.md), and bad configs (exit 2, one message naming the
# file and the JSON path, no output); a capacity search twice (byte-identical),
# its answers against its probes and the SLO, plausible against the
# replica's saturated throughput; a disaggregated deployment's two pools
# sized for a target rate against llm run of every split within the bound. Usage: test_cli_llm.sh CLUSTERSIM SOURCE_ROOT
source "$(dirname "$0")/harness.sh" "$@"
cd "$tmp" || exit 1

base='"format": "clustersim-llm-run", "version": 1, "model": "meta-llama/Llama-2-7b-hf",
 "device": "a100", "node": "a100_pairwise_nvlink", "tensor_parallel": 1'
# At 20 requests/s requests queue behind running batches, so lor (the
# shortest waiting queue, ties to replica 0) sends some to replica 1; at a
# rate where every request finds the queues empty it would send all to 0.
cat >syn.json <<JSON
{$base, "replicas": 2, "router": "lor", "scheduler": {"policy": "vllm"},
 "requests": {"synthetic": {"n": 50, "qps": 20.0, "arrival": "poisson",
   "prompt_tokens": {"uniform": [64, 1024]}, "output_tokens": {"uniform": [1, 64]}, "seed": 1}}}
JSON
"$bin" llm run syn.json -o a >a.out 2>a.err
check "synthetic run exits 0" test $? -eq 0
check "synthetic run: nothing on stderr" test ! -s a.err
check "synthetic run: the table" grep -q "^TTFT " a.out
"$bin" llm run syn.json -o b >b.out 2>&1
check "same config, same requests.csv" cmp a/requests.csv b/requests.csv
check "same config, same summary.json" cmp a/summary.json b/summary.json
check "same config, same table" cmp a.out b.out
check "requests.csv: a row per request" test "$(wc -l <a/requests.csv)" -eq 51
check "summary.json: provenance and metrics" py \
  "d['format'] == 'clustersim-llm-summary' and d['requests'] == 50 and
   'config' in d['provenance'] and 'vidur' in d['provenance']['ops'] + d['provenance']['models']
   and all(k in d for k in ('ttft', 'tbt', 'e2e', 'output_tokens_per_s', 'preemptions'))" a/summary.json
# Every request finished after it arrived and got its first token in between.
check "requests.csv: arrived <= scheduled <= first token <= completed" python3 - a/requests.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ok = all(float(r["arrived_s"]) <= float(r["scheduled_s"]) <= float(r["first_token_s"])
         <= float(r["completed_s"]) for r in rows)
sys.exit(0 if ok and {r["replica"] for r in rows} == {"0", "1"} else 1)
PY

# The same requests on replicas of 2 pipeline stages (docs/llm.md,
# "Pipeline parallelism"): every request finishes, in order of its events.
sed 's/"tensor_parallel": 1/"tensor_parallel": 1, "pipeline_parallel": 2/' syn.json >pp2.json
"$bin" llm run pp2.json -o pp2 >pp2.out 2>pp2.err
check "pipeline parallel 2: exits 0, nothing on stderr" test $? -eq 0 -a ! -s pp2.err
check "pipeline parallel 2: every request, arrived <= scheduled <= first token <= completed" \
  python3 - pp2/requests.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ok = len(rows) == 50 and all(float(r["arrived_s"]) <= float(r["scheduled_s"])
                             <= float(r["first_token_s"]) <= float(r["completed_s"]) for r in rows)
sys.exit(0 if ok else 1)
PY
# Vidur's memory plan per stage (src/llm/llm_model.h), by hand: a stage's 16
# layers of 202,375,168 parameters (4096 x 128 x 96 + 4096 x 128 x 32 + 3 x
# 4096 x 11008) in fp16 take 6,476,005,376 bytes of the 80 GiB x 0.9 =
# 77,309,411,328; the KV of a 4096-token request over all 32 layers,
# 2 x 2 x 128 x 32 x 32 x 4096 = 2 GiB: floor(70,833,405,952 / 2 GiB) = 32,
# x 2 stages = 64 request slots of 256 blocks: 16,384 (PP1: 29 x 256 = 7,424).
check "pipeline parallel 2: Vidur's KV blocks per stage" py \
  "d['num_blocks_per_replica'] == 16384" pp2/summary.json
check "pipeline parallel 1: the same plan's blocks" py "d['num_blocks_per_replica'] == 7424" a/summary.json

# The first 69 requests of Vidur's code trace whose prompts the sampled
# attention grid times (64 to 3072 tokens: chunks below 64 and prefills after
# more than 3072 cached tokens are outside it), one replica. Sarathi-Serve
# with chunk 1024 (512 leaves chunks below 64, outside the grid).
trace="$src/data/traces/vidur_processed/splitwise_code.csv"
for pol in vllm sarathi; do
  chunk=""
  [ $pol = sarathi ] && chunk=', "chunk_size": 1024'
  cat >$pol.json <<JSON
{$base, "scheduler": {"policy": "$pol"$chunk},
 "requests": {"trace": "$trace", "limit": 69, "min_prompt_tokens": 64, "max_prompt_tokens": 3072}}
JSON
  "$bin" llm run $pol.json -o $pol >$pol.out 2>$pol.err
  check "code trace, $pol: exits 0" test $? -eq 0
  sed -n 's/^TTFT *\([0-9.]*\).*/# code trace, '$pol': TTFT p50 \1 ms/p' $pol.out
  # Plausible (docs/llm.md): a lightly loaded replica (2.6 requests/s,
  # prompts of 675 tokens median, 1,021 mean) answers in about one prefill,
  # 12.7 ms for 110 tokens to 209 ms for 2,569 here, so TTFT p50 within 30
  # to 300 ms.
  check "code trace, $pol: TTFT p50 within 30 to 300 ms" py \
    "d['requests'] == 69 and 30 < d['ttft']['p50_ms'] < 300" $pol/summary.json
done

# One request worked from the data files, outside the simulator: trace row 2
# (110 prompt tokens) arrives at an idle replica under vLLM, so its TTFT is
# its prefill alone: 32 layers x (the nine operators at N8 = 112 tokens, a
# profiled row of ops/a100/..., + prefill attention at chunk 110, kv 0,
# linear between chunks 64 and 128 of attention/a100/...).
check "code trace, vllm: row 2's TTFT is its prefill, from the JSON files" python3 - \
  "$src/data/llm" vllm/requests.csv <<'PY'
import csv, json, sys
d = sys.argv[1]
ops = json.load(open(d + "/ops/a100/meta-llama__Llama-2-7b-hf.json"))
t = [x for x in ops["tensor_parallel"] if x["tp"] == 1][0]
i = t["num_tokens"].index(112)
layer = sum(t["median_ms"][o][i] for o in ops["ops"])
att = json.load(open(d + "/attention/a100/meta-llama__Llama-2-7b-hf.json"))["prefill"]
c, row = att["prefill_chunk_size"], att["median_ms"][att["kv_cache_size"].index(0)]
j = c.index(64)
assert c[j + 1] == 128
layer += row[j] + (row[j + 1] - row[j]) * (110 - 64) / (128 - 64)
r = [r for r in csv.DictReader(open(sys.argv[2])) if r["id"] == "2"][0]
ok = r["prompt_tokens"] == "110" and r["arrived_s"] == r["scheduled_s"]
sys.exit(0 if ok and abs(float(r["ttft_ms"]) - 32 * layer) < 1e-6 else 1)
PY

# Vidur's trace_replay steps, on a small trace beside the config, read from
# another directory (the path is the config's): decode tokens x 0.05
# truncate (10 -> 0, clipped to 1; 200 -> 10), prompts x 1, then row 3's
# 4096 + 10 > max_tokens 3000 cuts its prompt to 2990; arrivals x 2.
mkdir -p cfg
printf 'arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,100,10\n0.5,200,40\n1.25,4096,200\n' >cfg/t.csv
cat >cfg/scaled.json <<JSON
{$base, "scheduler": {"policy": "vllm"}, "max_tokens": 3000,
 "requests": {"trace": "t.csv", "time_scale": 2, "decode_scale": 0.05}}
JSON
"$bin" llm run cfg/scaled.json -o scaled >/dev/null 2>scaled.err
check "scaled trace: exits 0" test $? -eq 0
check "scaled trace: tokens and arrivals as trace_replay makes them" python3 - scaled/requests.csv <<'PY'
import csv, sys
rows = [(r["prompt_tokens"], r["output_tokens"], r["arrived_s"]) for r in csv.DictReader(open(sys.argv[1]))]
sys.exit(0 if rows == [("100", "1", "0.000000000"), ("200", "2", "1.000000000"),
                       ("2990", "10", "2.500000000")] else 1)
PY
check "scaled trace: one prompt cut" py "d['prompts_cut_to_max_tokens'] == 1" scaled/summary.json

# ---- bad configs: exit 2, the file and JSON path named, nothing written ----
badcfg() { # WHAT MESSAGE JSON
  printf '%s\n' "$3" >bad.json
  bad "$1" "$2" llm run bad.json -o badout
  check "$1: no output" test ! -e badout
}
req='"requests": {"synthetic": {"n": 2, "qps": 1, "prompt_tokens": {"fixed": 64}, "output_tokens": {"fixed": 2}, "seed": 1}}'
badcfg "wrong format" 'bad.json: format: expected "clustersim-llm-run"' \
  '{"format": "clustersim-run", "version": 1}'
badcfg "unknown field" 'bad.json: ' "{$base, $req, \"replica\": 2}"
badcfg "pipeline parallel not dividing the layers" 'bad.json: pipeline_parallel: expected a divisor of meta-llama/Llama-2-7b-hf'"'"'s num_layers (32), got 3' \
  "{$base, $req, \"pipeline_parallel\": 3}"
badcfg "pipeline parallel, batch_size_cap below the stages" 'bad.json: scheduler.batch_size_cap: expected >= pipeline_parallel (2): a batch holds at most batch_size_cap / pipeline_parallel requests, got 1' \
  "{$base, $req, \"pipeline_parallel\": 2, \"scheduler\": {\"policy\": \"vllm\", \"batch_size_cap\": 1}}"
badcfg "pipeline parallel, disaggregated" 'bad.json: pipeline_parallel: expected 1 with "disaggregated": pipeline stages are not simulated with disaggregated serving, got 2' \
  "{$base, $req, \"pipeline_parallel\": 2, \"disaggregated\": {\"prefill_replicas\": 1, \"decode_replicas\": 1}}"
badcfg "router" 'bad.json: router: LLM router "random": expected round_robin, lor or least_outstanding' \
  "{$base, $req, \"router\": \"random\"}"
badcfg "policy" 'bad.json: scheduler.policy: unknown LLM replica scheduler "vlm"' \
  "{$base, $req, \"scheduler\": {\"policy\": \"vlm\"}}"
badcfg "no requests" 'bad.json: requests: expected {"trace": PATH} or {"synthetic": {...}}' \
  "{$base}"
badcfg "missing trace" 'bad.json: requests.trace: ' \
  "{$base, \"requests\": {\"trace\": \"nosuch.csv\"}}"
badcfg "unknown model" 'bad.json: model: ' \
  '{"format": "clustersim-llm-run", "version": 1, "model": "llama", "device": "a100", "node": "a100_dgx", '"$req}"
badcfg "node of another device" 'bad.json: node: expected a node of a100 devices, got "h100_dgx"' \
  '{"format": "clustersim-llm-run", "version": 1, "model": "meta-llama/Llama-2-7b-hf", "device": "a100", "node": "h100_dgx", '"$req}"
badcfg "request too long" 'bad.json: requests.synthetic: expected the longest prompt + output (4096 + 2) to be at most max_tokens 4096' \
  "{$base, \"requests\": {\"synthetic\": {\"n\": 2, \"qps\": 1, \"prompt_tokens\": {\"fixed\": 4096}, \"output_tokens\": {\"fixed\": 2}, \"seed\": 1}}}"
badcfg "untimeable batch" 'replica 0, batch at 0.000000000 s: 1 requests (1 prefilling, 0 decoding), 32 tokens' \
  "{$base, \"requests\": {\"synthetic\": {\"n\": 1, \"arrival\": \"static\", \"prompt_tokens\": {\"fixed\": 32}, \"output_tokens\": {\"fixed\": 2}, \"seed\": 1}}}"

# ---- llm search: the capacity search (docs/llm.md "Capacity search") ----
# Llama-2-7B on one a100, vLLM and Sarathi-Serve (chunk 4096: smaller
# chunks leave prefill pieces below 64 tokens, outside the sampled
# attention grid), 300 requests of 128-1024 prompt and 64-256 output
# tokens, TTFT p90 <= 2 s and TBT p90 <= 100 ms; the cheapest for 8/s.
cat >search.json <<JSON
{"format": "clustersim-llm-search", "version": 1, "model": "meta-llama/Llama-2-7b-hf",
 "device": "a100", "node": "a100_pairwise_nvlink", "tensor_parallel": 1,
 "requests": {"synthetic": {"n": 300, "prompt_tokens": {"uniform": [128, 1024]},
   "output_tokens": {"uniform": [64, 256]}, "seed": 1}},
 "search": {"slo": {"ttft_ms": {"quantile": 0.9, "max": 2000}, "tbt_ms": {"quantile": 0.9, "max": 100}},
   "start_qps": 2, "target_qps": 8, "max_replicas": 2,
   "deployments": [{"scheduler": {"policy": "vllm"}},
                   {"scheduler": {"policy": "sarathi", "chunk_size": 4096}}]}}
JSON
"$bin" llm search search.json -o sa >sa.out 2>sa.err
check "search: exits 0" test $? -eq 0
check "search: nothing on stderr" test ! -s sa.err
"$bin" llm search search.json -o sb >sb.out 2>&1
check "search: same config, same search.json" cmp sa/search.json sb/search.json
check "search: same config, same table" cmp sa.out sb.out
"$bin" llm search search.json --json >sj.out
check "search: --json prints search.json" cmp sj.out sa/search.json
sed -n '1,/^$/s/^\(a100 TP1 [a-z]*\) .*cap 128 *\([0-9.]*\) .*/# search: \1 max qps \2/p' sa.out
# The answer against the probes and the SLO, the cheapest against the
# list: the probe at max_qps passed with both quantiles within the SLO, no
# probe above it passed, every probe's pass is its quantiles against the
# SLO, and the cheapest has the lowest cost (ties: fewer GPUs, then first).
check "search: answers consistent with their probes and the SLO" py "
all(x['max_qps'] is not None and not x['non_monotone'] and
    all(p['pass'] == (p['ttft_ms'] <= 2000 and p['tbt_ms'] <= 100) for p in x['probes']) and
    any(p['qps'] == x['max_qps'] and p['pass'] for p in x['probes']) and
    not any(p['pass'] and p['qps'] > x['max_qps'] for p in x['probes'])
    for x in d['deployments']) and
d['cheapest'] == min((x for x in d['deployments'] if x['target']['replicas'] > 0),
                     key=lambda x: (x['target']['cost_per_hour'], x['target']['gpus']))['name'] and
all(abs(x['target']['cost_per_hour'] - 2.21 * x['target']['replicas']) < 1e-9 for x in d['deployments'])" sa/search.json
# Plausible against the replica's throughput: the same requests at 100/s
# (saturated) finish at T output tokens/s, i.e. T / (mean output tokens)
# requests/s; the highest rate under a TBT p90 of 100 ms lies near that
# (docs/llm.md: a finite run of 300 requests can pass slightly above it).
cat >sat.json <<JSON
{$base, "scheduler": {"policy": "vllm"},
 "requests": {"synthetic": {"n": 300, "qps": 100, "prompt_tokens": {"uniform": [128, 1024]},
   "output_tokens": {"uniform": [64, 256]}, "seed": 1}}}
JSON
"$bin" llm run sat.json -o sat >/dev/null
check "search: vllm's max qps within 0.5 to 1.2 x the saturated rate" python3 - sa/search.json sat/summary.json sat/requests.csv <<'PY'
import csv, json, sys
d, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rows = list(csv.DictReader(open(sys.argv[3])))
rate = s["output_tokens_per_s"] / (sum(int(r["output_tokens"]) for r in rows) / len(rows))
q = d["deployments"][0]["max_qps"]
print(f"# search: vllm {q:.3f}/s, saturated {rate:.3f}/s")
sys.exit(0 if 0.5 * rate < q < 1.2 * rate else 1)
PY
# Decode-side memory pressure (2P+1D, long requests at 30/s): the decode
# replica reserves a request's blocks before its transfer (docs/llm.md), so
# requests wait for the transfer with their KV cache held by their prefill
# replica: the kv wait is > 0 (in the summary, the table and requests.csv,
# each row's wait its transfer's start minus its first token), no request's
# KV cache is ever held by no replica (no kv_unheld_wait warning, nothing on
# stderr), and the same config gives the same outputs.
cat >dpress.json <<JSON
{$base, "scheduler": {"policy": "vllm"},
 "disaggregated": {"prefill_replicas": 2, "decode_replicas": 1, "kv_transfer": {"gbps": 200, "latency_ms": 0.01}},
 "requests": {"synthetic": {"n": 600, "qps": 30, "arrival": "poisson", "prompt_tokens": {"uniform": [1024, 2048]},
   "output_tokens": {"uniform": [256, 1024]}, "seed": 1}}}
JSON
"$bin" llm run dpress.json -o dpress >dpress.out 2>dpress.err
check "disaggregated, decode memory pressure: exits 0" test $? -eq 0
check "disaggregated, decode memory pressure: no kv_unheld_wait warning, nothing on stderr" \
  test ! -s dpress.err
check "disaggregated, decode memory pressure: requests wait for decode blocks (kv_wait > 0)" py \
  "(k := d['disaggregated']['kv_wait'])['n'] == 600 and k['mean_ms'] > 0 and k['p99_ms'] > 0
   and 'kv_unheld_waits' not in d" dpress/summary.json
check "disaggregated, decode memory pressure: the table's kv wait row" grep -q "^kv wait " dpress.out
sed -n 's/^\(kv wait\) */# decode memory pressure: \1 p50 p90 p99 /p' dpress.out
check "disaggregated, decode memory pressure: requests.csv's kv_wait_ms" python3 - dpress/requests.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ok = all(abs(float(r["kv_wait_ms"]) - 1e3 * (float(r["transfer_start_s"]) - float(r["first_token_s"]))) < 1e-5
         and float(r["kv_wait_ms"]) >= 0 for r in rows)
sys.exit(0 if ok and max(float(r["kv_wait_ms"]) for r in rows) > 0 else 1)
PY
"$bin" llm run dpress.json -o dpress2 >dpress2.out 2>&1
check "disaggregated, decode memory pressure: same config, same outputs" \
  cmp dpress/requests.csv dpress2/requests.csv
check "disaggregated, decode memory pressure: same summary and table" \
  sh -c 'cmp dpress/summary.json dpress2/summary.json && cmp dpress.out dpress2.out'

# A disaggregated deployment (1 prefill + 1 decode vLLM replica): its
# highest rate searched at its pools' sizes; the answer against its probes
# and the SLO, and a run of the same requests at that rate (llm run, the
# arrivals drawn at that qps) meets the SLO, as its probe says; 2 GPUs at
# 2.21 $/h.
dis='"disaggregated": {"prefill_replicas": 1, "decode_replicas": 1, "kv_transfer": {"gbps": 200, "latency_ms": 0.01}}'
cat >dsearch.json <<JSON
{"format": "clustersim-llm-search", "version": 1, "model": "meta-llama/Llama-2-7b-hf",
 "device": "a100", "node": "a100_pairwise_nvlink", "tensor_parallel": 1, $dis,
 "scheduler": {"policy": "vllm"},
 "requests": {"synthetic": {"n": 300, "prompt_tokens": {"uniform": [128, 1024]},
   "output_tokens": {"uniform": [64, 256]}, "seed": 1}},
 "search": {"slo": {"ttft_ms": {"quantile": 0.9, "max": 2000}, "tbt_ms": {"quantile": 0.9, "max": 100}},
   "start_qps": 2}}
JSON
"$bin" llm search dsearch.json -o ds >ds.out 2>ds.err
check "search, disaggregated: exits 0" test $? -eq 0
check "search, disaggregated: the answer against its probes, 2 GPUs at 2 x 2.21 \$/h" py "
[x['max_qps'] is not None and x['name'].endswith('1P+1D') and x['gpus'] == 2 and
 x['replicas'] == 1 and x['decode_replicas'] == 1 and
 abs(x['cost_per_hour'] - 4.42) < 1e-9 and
 all(p['pass'] == (p['ttft_ms'] <= 2000 and p['tbt_ms'] <= 100) for p in x['probes']) and
 any(p['qps'] == x['max_qps'] and p['pass'] for p in x['probes']) and
 not any(p['pass'] and p['qps'] > x['max_qps'] for p in x['probes'])
 for x in d['deployments']] == [True]" ds/search.json
# The decode-wait warning (docs/llm.md): off here (no request waits for a
# place at the decode replica); on when the decode replica takes 8 requests
# at most (decode_scheduler batch_size_cap 8): at its max qps (8.6/s) the
# p90 wait for a place there, about 30 s, exceeds the TTFT p90 (1.6 s) that
# the SLO passes.
check "search, disaggregated: no decode-wait warning when none waits" python3 - ds/search.json ds.out <<'PY'
import json, sys
x = json.load(open(sys.argv[1]))["deployments"][0]
p = next(p for p in x["probes"] if p["qps"] == x["max_qps"])
sys.exit(0 if p["kv_wait_p90_ms"] <= p["ttft_p90_ms"] and "for a place at their decode replica" not in open(sys.argv[2]).read() else 1)
PY
sed 's/"latency_ms": 0.01}}/"latency_ms": 0.01}, "decode_scheduler": {"policy": "vllm", "batch_size_cap": 8}}/' dsearch.json >dcap8.json
"$bin" llm search dcap8.json -o dc8 >dc8.out 2>&1
check "search, disaggregated, decode cap 8: warned of its decode pool falling behind" python3 - dc8/search.json dc8.out <<'PY'
import json, sys
x = json.load(open(sys.argv[1]))["deployments"][0]
p = next(p for p in x["probes"] if p["qps"] == x["max_qps"])
sys.exit(0 if p["pass"] and p["kv_wait_p90_ms"] > 10 * p["ttft_p90_ms"]
         and "waited %.1f ms (p90) for a place at their decode replica" % p["kv_wait_p90_ms"] in open(sys.argv[2]).read() else 1)
PY
q=$(python3 -c "import json; print(json.load(open('ds/search.json'))['deployments'][0]['max_qps'])")
cat >dsrun.json <<JSON
{$base, $dis, "scheduler": {"policy": "vllm"},
 "requests": {"synthetic": {"n": 300, "qps": $q, "arrival": "poisson", "prompt_tokens": {"uniform": [128, 1024]},
   "output_tokens": {"uniform": [64, 256]}, "seed": 1}}}
JSON
"$bin" llm run dsrun.json -o dsrun >/dev/null 2>&1
check "search, disaggregated: a run at its max qps ($q/s) meets the SLO, as its probe" python3 - ds/search.json dsrun/summary.json <<'PY'
import json, sys
d, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
x = d["deployments"][0]
p = next(p for p in x["probes"] if p["qps"] == x["max_qps"])
ok = (abs(s["ttft"]["p90_ms"] - p["ttft_ms"]) < 1e-6 and abs(s["tbt"]["p90_ms"] - p["tbt_ms"]) < 1e-6
      and s["ttft"]["p90_ms"] <= 2000 and s["tbt"]["p90_ms"] <= 100)
print(f"# search, disaggregated: {x['max_qps']:.3f}/s, TTFT p90 {s['ttft']['p90_ms']:.1f} ms, TBT p90 {s['tbt']['p90_ms']:.2f} ms")
sys.exit(0 if ok else 1)
PY
# With target_qps the two pools are sized (llm_search.h, cs_llm_fewest_pools):
# the cheapest (P, D), P + D <= max_replicas, fewer prefill replicas on ties.
# Checked against a brute force of its own: llm run at 40/s for every split
# within 4 replicas, the SLO judged here from each summary.json, the
# cheapest passing split (fewest replicas, then fewest prefill) found in
# Python; each probe's kv_wait_p90_ms is its run's. At 40/s 1P+1D and 1P+2D fail on TTFT and 2P+1D passes: the
# answer is the last split of its total, not the first.
sed 's/"start_qps": 2}/"start_qps": 2, "target_qps": 40, "max_replicas": 4}/' dsearch.json >dtarget.json
"$bin" llm search dtarget.json -o dt >dt.out 2>dt.err
check "search, disaggregated, target: exits 0" test $? -eq 0
check "search, disaggregated, target: nothing on stderr" test ! -s dt.err
"$bin" llm search dtarget.json -o dt2 >dt2.out 2>&1
check "search, disaggregated, target: same config, same search.json" cmp dt/search.json dt2/search.json
check "search, disaggregated, target: same config, same table" cmp dt.out dt2.out
for n in 2 3 4; do
  for p in $(seq 1 $((n - 1))); do
    cat >split$p$((n - p)).json <<JSON
{$base, "scheduler": {"policy": "vllm"},
 "disaggregated": {"prefill_replicas": $p, "decode_replicas": $((n - p)), "kv_transfer": {"gbps": 200, "latency_ms": 0.01}},
 "requests": {"synthetic": {"n": 300, "qps": 40, "arrival": "poisson", "prompt_tokens": {"uniform": [128, 1024]},
   "output_tokens": {"uniform": [64, 256]}, "seed": 1}}}
JSON
    "$bin" llm run split$p$((n - p)).json -o split$p$((n - p)) >/dev/null 2>&1
  done
done
check "search, disaggregated, target: the cheapest split of a brute force over llm run" python3 - dt/search.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["deployments"][0]["target"]
ok = {}
for n in (2, 3, 4):
    for p in range(1, n):
        s = json.load(open(f"split{p}{n - p}/summary.json"))
        ok[(p, n - p)] = s["ttft"]["p90_ms"] <= 2000 and s["tbt"]["p90_ms"] <= 100
best = min((k for k in ok if ok[k]), key=lambda k: (k[0] + k[1], k[0]))
print(f"# search, disaggregated, target 40/s: brute force {best}, search {t['prefill_replicas']}P+{t['decode_replicas']}D,"
      f" {t['probes_run']} probes, TTFT p90 {t['ttft_p90_ms']:.1f} ms, TBT p90 {t['tbt_p90_ms']:.2f} ms")
s = json.load(open(f"split{best[0]}{best[1]}/summary.json"))
order = [(p, n - p) for n in (2, 3, 4) for p in range(1, n)]
sys.exit(0 if (t["prefill_replicas"], t["decode_replicas"]) == best == (2, 1) and t["replicas"] == 3
         and t["gpus"] == 3 and abs(t["cost_per_hour"] - 3 * 2.21) < 1e-9
         and t["probes_run"] == order.index(best) + 1 == len(t["probes"])
         and [(p["replicas"], p["decode_replicas"]) for p in t["probes"]] == order[:order.index(best) + 1]
         and abs(t["ttft_p90_ms"] - s["ttft"]["p90_ms"]) < 1e-6 and abs(t["tbt_p90_ms"] - s["tbt"]["p90_ms"]) < 1e-6
         and not t["max_probes_reached"] and d["cheapest"] == d["deployments"][0]["name"]
         and all(abs(p["kv_wait_p90_ms"] - json.load(open(f"split{p['replicas']}{p['decode_replicas']}/summary.json"))["disaggregated"]["kv_wait"]["p90_ms"]) < 1e-6
                 for p in t["probes"]) else 1)
PY
check "search, disaggregated, target: the table names the split" grep -q "^cheapest: .*, 2P+1D (3 replicas), 6.63 \$/h$" dt.out
# Within 2 replicas (only 1P+1D) none meets the SLO at 40/s: said, no cheapest.
sed 's/"max_replicas": 4/"max_replicas": 2/' dtarget.json >dtnone.json
"$bin" llm search dtnone.json -o dtn >dtn.out 2>&1
check "search, disaggregated, target: no split within the bound, said" grep -q "(no split of 2..2 replicas meets the SLO)" dtn.out
check "search, disaggregated, target: no split: no cheapest" py "d['cheapest'] is None and
 d['deployments'][0]['target']['replicas'] == 0 and d['deployments'][0]['target']['probes_run'] == 1 and
 not d['deployments'][0]['target']['max_probes_reached']" dtn/search.json
# max_probes 2 stops the scan before 2P+1D (the third split): no answer, warned.
sed 's/"max_replicas": 4/"max_replicas": 4, "max_probes": 2/' dtarget.json >dtlim.json
"$bin" llm search dtlim.json -o dtl >dtl.out 2>&1
check "search, disaggregated, target: max_probes reached, warned" grep -q "warning: .*max_probes (2) reached at 2P+1D" dtl.out
check "search, disaggregated, target: max_probes reached: no answer" py "d['cheapest'] is None and
 d['deployments'][0]['target']['max_probes_reached'] and d['deployments'][0]['target']['probes_run'] == 2 and
 d['deployments'][0]['target']['splits_complete_to'] == 2" dtl/search.json
sed 's/"max_replicas": 4/"max_replicas": 1/' dtarget.json >dtone.json
bad "search, disaggregated, target: max_replicas 1" 'dtone.json: search.max_replicas: expected at least 2 with "disaggregated" and target_qps' llm search dtone.json -o dtoneout
check "search, disaggregated, target: max_replicas 1: no output" test ! -e dtoneout
sed 's/"max_replicas": 4}/"max_replicas": 4, "deployments": [{"max_replicas": 1}]}/' dtarget.json >dtdone.json
bad "search, disaggregated, target: a deployment's max_replicas 1" 'dtdone.json: search.deployments[0].max_replicas: expected at least 2 with "disaggregated"' llm search dtdone.json

# Off the sampled attention grid (a prompt of 46 tokens: chunks start at
# 64): refused by default, with the way forward named; with
# "attention_outside_grid": "clamp" looked up at the grid's edge, said on
# stderr and counted in summary.json (1 request: its one prefill batch is
# clamped, its decodes of 47..50 cached tokens, kv 64, are inside).
printf 'arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,46,5\n' >short.csv
cat >short.json <<JSON
{$base, "scheduler": {"policy": "vllm"}, "requests": {"trace": "short.csv"}}
JSON
bad "off the attention grid: refused, the clamp named" \
  'prefill attention at chunk 46, kv 0: outside the profiled grid' llm run short.json -o shortout
check "off the attention grid: the message names attention_outside_grid" \
  grep -q '"attention_outside_grid": "clamp" looks such a point up' "$tmp/bad.err"
check "off the attention grid: no output" test ! -e shortout
sed 's/"scheduler"/"attention_outside_grid": "clamp", "scheduler"/' short.json >clamp.json
"$bin" llm run clamp.json -o clampout >clamp.out 2>clamp.err
check "clamped: exits 0" test $? -eq 0
check "clamped: the warning names the count" \
  grep -q 'warning \[attention_clamped\] 1 of 5 batches' clamp.err
check "clamped: summary.json says the mode and the count" py \
  "d['attention_outside_grid'] == 'clamp' and d['attention_clamped_batches'] == 1
   and d['batches'] == 5" clampout/summary.json
check "inside the grid: no batch clamped, mode refuse" py \
  "d['attention_outside_grid'] == 'refuse' and d['attention_clamped_batches'] == 0" a/summary.json

# Disaggregated prefill/decode (docs/llm.md): one request of 1000 prompt
# tokens, 1 prefill + 1 decode replica, 100 Gb/s and 0.5 ms: its KV cache is
# 1000 x 524,288 bytes (Llama-2-7B, TP1: 2 x 2 x 128 x 32 heads x 32 layers),
# 524,288,000 x 8 / 100e9 s = 41.94304 ms + 0.5 = 42.44304 ms.
dis='"disaggregated": {"prefill_replicas": 1, "decode_replicas": 1,
  "kv_transfer": {"gbps": 100, "latency_ms": 0.5}}'
cat >dis1.json <<JSON
{$base, "scheduler": {"policy": "vllm"}, $dis,
 "requests": {"synthetic": {"n": 1, "qps": 1.0, "prompt_tokens": {"fixed": 1000},
   "output_tokens": {"fixed": 4}, "seed": 1}}}
JSON
"$bin" llm run dis1.json -o dis1 >dis1.out 2>dis1.err
check "disaggregated: exits 0" test $? -eq 0
check "disaggregated: the table says so" grep -q "disaggregated: 1 prefill replica" dis1.out
check "disaggregated: the transfer by hand (42.44304 ms)" py \
  "abs(d['disaggregated']['kv_transfer']['p50_ms'] - 42.44304) < 1e-6
   and d['disaggregated']['kv_bytes_per_token_per_shard'] == 524288" dis1/summary.json
check "disaggregated: requests.csv names both replicas and the transfer" python3 - dis1/requests.csv <<'PY'
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
ok = (r["prefill_replica"] == "0" and r["decode_replica"] == "1"
      and abs(float(r["transfer_start_s"]) - float(r["first_token_s"])) < 1e-9
      and float(r["kv_wait_ms"]) == 0
      and abs(float(r["transfer_end_s"]) - float(r["transfer_start_s"]) - 0.04244304) < 1e-8)
sys.exit(0 if ok else 1)
PY
# 1P+1D against 2 colocated replicas (lor), the same 300 requests at 4/s:
# as DistServe and Splitwise report, the decodes no longer wait behind
# prefills (vLLM runs prefills first), so the TBT tail falls, and the one
# prefill replica queues more, so TTFT's tail rises.
for mode in colo dis; do
  extra='"replicas": 2, "router": "lor"'
  [ $mode = dis ] && extra='"disaggregated": {"prefill_replicas": 1, "decode_replicas": 1,
    "kv_transfer": {"gbps": 200, "latency_ms": 0.01}}'
  cat >cmp_$mode.json <<JSON
{$base, "scheduler": {"policy": "vllm"}, $extra,
 "requests": {"synthetic": {"n": 300, "qps": 4, "arrival": "poisson",
   "prompt_tokens": {"uniform": [256, 2048]}, "output_tokens": {"uniform": [32, 256]}, "seed": 1}}}
JSON
  "$bin" llm run cmp_$mode.json -o cmp_$mode >cmp_$mode.out 2>&1
  check "comparison, $mode: exits 0" test $? -eq 0
  sed -n 's/^\(TTFT\|TBT\) */# comparison, '$mode': \1 p50 p90 p99 /p' cmp_$mode.out
done
"$bin" llm run cmp_dis.json -o cmp_dis2 >/dev/null 2>&1
check "disaggregated: same config, same outputs" cmp cmp_dis/requests.csv cmp_dis2/requests.csv
check "disaggregated: same summary" cmp cmp_dis/summary.json cmp_dis2/summary.json
check "comparison: lower TBT p99, higher TTFT p90 disaggregated" python3 - cmp_colo/summary.json cmp_dis/summary.json <<'PY'
import json, sys
c, d = (json.load(open(f)) for f in sys.argv[1:])
sys.exit(0 if d["tbt"]["p99_ms"] < c["tbt"]["p99_ms"] and d["ttft"]["p90_ms"] > c["ttft"]["p90_ms"] else 1)
PY

# The Azure LLM inference trace read as it is ("trace_format": "azure_llm")
# gives the requests of the same rows converted to Vidur's processed format
# here, by Python's datetime (arrivals from the first, tokens clipped to 1).
python3 - "$src" <<'PY'
import csv, datetime, sys
rows = list(csv.DictReader(open(f"{sys.argv[1]}/data/traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv")))[:300]
def ns(t):
    day, frac = t.split(".")
    d = datetime.datetime.strptime(day, "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return int(d.timestamp()) * 10**9 + int((frac + "000000000")[:9])
t0 = ns(rows[0]["TIMESTAMP"])
with open("conv300.csv", "w") as f:
    f.write("arrived_at,num_prefill_tokens,num_decode_tokens\n")
    for r in rows:
        f.write("%d.%09d,%d,%d\n" % (*divmod(ns(r["TIMESTAMP"]) - t0, 10**9),
                                     max(1, int(r["ContextTokens"])), max(1, int(r["GeneratedTokens"]))))
PY
for fmt in vidur azure; do
  if [ $fmt = azure ]; then
    req="{\"trace\": \"$src/data/traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv\", \"trace_format\": \"azure_llm\", \"limit\": 300}"
  else
    req='{"trace": "conv300.csv"}'
  fi
  cat >conv_$fmt.json <<JSON
{$base, "replicas": 2, "router": "least_outstanding", "attention_outside_grid": "clamp",
 "scheduler": {"policy": "sarathi"}, "requests": $req}
JSON
  "$bin" llm run conv_$fmt.json -o conv_$fmt >/dev/null 2>&1
  check "azure trace: $fmt exits 0" test $? -eq 0
done
check "azure trace: the requests of its rows in Vidur's format" cmp conv_vidur/requests.csv conv_azure/requests.csv
sed 's/"azure_llm"/"azure"/' conv_azure.json >badfmt.json
bad "azure trace: unknown format" 'badfmt.json: requests.trace_format: expected "vidur"' llm run badfmt.json

printf '%s\n' '{"format": "clustersim-llm-search", "version": 1}' >badsearch.json
bad "search: bad config" 'badsearch.json: ' llm search badsearch.json -o badsearchout
check "search: bad config: no output" test ! -e badsearchout
bad "no subcommand" "expected a subcommand: run or search" llm
finish
