#!/usr/bin/env bash
# clustersim llm run: a synthetic run twice (byte-identical outputs), the
# shipped Vidur code trace under vLLM and Sarathi-Serve (a sanity check of
# magnitudes, docs/llm.md), and bad configs (exit 2, one message naming the
# file and the JSON path, no output). Usage: test_cli_llm.sh CLUSTERSIM SOURCE_ROOT
source "$(dirname "$0")/harness.sh" "$@"
cd "$tmp" || exit 1

base='"format": "clustersim-llm-run", "version": 1, "model": "meta-llama/Llama-2-7b-hf",
 "device": "a100", "node": "a100_pairwise_nvlink", "tensor_parallel": 1'
cat >syn.json <<JSON
{$base, "replicas": 2, "router": "lor", "scheduler": {"policy": "vllm"},
 "requests": {"synthetic": {"n": 50, "qps": 4.0, "arrival": "poisson",
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
  # Plausible: a lightly loaded replica (2.6 requests/s) answers in about
  # one prefill of the median prompt (about 1,000 tokens: 30-130 ms on an
  # A100 for Llama-2-7B), so TTFT p50 within 30 to 300 ms.
  check "code trace, $pol: TTFT p50 within 30 to 300 ms" py \
    "d['requests'] == 69 and 30 < d['ttft']['p50_ms'] < 300" $pol/summary.json
done

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
badcfg "pipeline parallel" 'bad.json: pipeline_parallel: expected 1: pipeline parallelism is not simulated yet, got 2' \
  "{$base, $req, \"pipeline_parallel\": 2}"
badcfg "router" 'bad.json: router: LLM router "random": expected round_robin or lor' \
  "{$base, $req, \"router\": \"random\"}"
badcfg "policy" 'bad.json: scheduler.policy: LLM replica scheduler "vlm"' \
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
bad "no subcommand" "expected a subcommand: run" llm
finish
