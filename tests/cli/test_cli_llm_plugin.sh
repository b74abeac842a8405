#!/usr/bin/env bash
# LLM replica schedulers of one's own through the CLI (clustersim/llm.h,
# docs/llm.md): the example vLLM plug-in (examples/extending/llm_vllm.c)
# gives the built-in vLLM's outputs byte for byte, with preemptions, on a
# disaggregated deployment and in a scenario; a policy's own field and its
# timeline (one request at a time, FIFO); a misuse stopped (exit 2, the
# scheduler, the time); an unknown name, a field nobody reads, a plug-in not
# loaded (exit 2, no output).
# Usage: test_cli_llm_plugin.sh CLUSTERSIM SOURCE_ROOT LLM_VLLM.so LLM_POLICIES.so
source "$(dirname "$0")/harness.sh" "$@"
vllm_so=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
policies_so=$(cd "$(dirname "$4")" && pwd)/$(basename "$4")
cd "$tmp" || exit 1

base='"format": "clustersim-llm-run", "version": 1, "model": "meta-llama/Llama-2-7b-hf",
 "device": "a100", "node": "a100_pairwise_nvlink", "tensor_parallel": 1'
reqs='"requests": {"synthetic": {"n": 120, "qps": 30.0, "arrival": "poisson",
   "prompt_tokens": {"uniform": [256, 1024]}, "output_tokens": {"uniform": [64, 256]}, "seed": 3}}'
# 200 blocks of 16 tokens hold about four requests: vLLM restarts some (24).
for pol in vllm vllm_example; do
  cat >$pol.json <<JSON
{$base, "replicas": 2, "router": "lor", "scheduler": {"policy": "$pol", "num_blocks": 200}, $reqs}
JSON
done
"$bin" llm run vllm.json -o b >b.out 2>b.err
check "built-in vllm: exits 0" test $? -eq 0
"$bin" --plugin "$vllm_so" llm run vllm_example.json -o m >m.out 2>m.err
check "the example vLLM plug-in: exits 0, quiet" test $? -eq 0 -a ! -s m.err
check "it preempts (the comparison covers restarts)" py 'd["preemptions"] > 10' m/summary.json
check "the same requests.csv" cmp b/requests.csv m/requests.csv
check "the same timeseries.csv" cmp b/timeseries.csv m/timeseries.csv
check "the same summary but for its provenance" python3 - b/summary.json m/summary.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
pa, pb = a.pop("provenance"), b.pop("provenance")
plugins = pb.get("plugins", [])
sys.exit(0 if a == b and "plugins" not in pa and len(plugins) == 1
         and plugins[0]["file"] == "llm_vllm.so" and len(plugins[0]["sha256"]) == 64 else 1)
PY
check "the table names the scheduler" grep -q "vllm_example" m.out
# The README's command: the shipped example config with the plug-in, the
# built-in's requests.csv.
"$bin" --plugin "$vllm_so" llm run "$src/examples/llm/run_plugin.json" -o readme_p >/dev/null 2>&1
check "README: examples/llm/run_plugin.json with the plug-in exits 0" test $? -eq 0
"$bin" llm run "$src/examples/llm/run.json" -o readme_b >/dev/null 2>&1
check "README: and gives examples/llm/run.json's requests" cmp readme_b/requests.csv readme_p/requests.csv

# Disaggregated, both pools the plug-in's.
for pol in vllm vllm_example; do
  cat >dg_$pol.json <<JSON
{$base, "scheduler": {"policy": "$pol", "num_blocks": 200},
 "disaggregated": {"prefill_replicas": 1, "decode_replicas": 1,
                   "kv_transfer": {"gbps": 200, "latency_ms": 0.01}}, $reqs}
JSON
done
"$bin" llm run dg_vllm.json -o dgb >/dev/null 2>&1
"$bin" --plugin "$vllm_so" llm run dg_vllm_example.json -o dgm >/dev/null 2>dgm.err
check "disaggregated, the plug-in on both pools: the same requests.csv" cmp dgb/requests.csv dgm/requests.csv

# In a scenario, beside DNN models (examples/mixed_llm_dnn.json, 10 s): the
# same rows as the built-in's.
for pol in vllm vllm_example; do
  python3 - "$src" "$pol" <<'PY'
import json, sys
src, pol = sys.argv[1:]
q = json.load(open(f"{src}/examples/mixed_llm_dnn.json"))
q["profiles"] = [f"{src}/data/profiles/v100_thesis.json"]
q["network"] = {"curve": f"{src}/data/profiles/network/gcp_n1_standard_16.json"}
q["outputs"] = {"requests_csv": True}
for c in q["clients"]:
    c["duration_s"] = 10
    c["warmup_s"] = 1
llm = q["llm"][0]
llm["scheduler"] = {"policy": pol, "num_blocks": 200}
llm["requests"]["synthetic"].update(n=80, qps=20)
json.dump(q, open(f"sc_{pol}.json", "w"), indent=1)
PY
done
"$bin" run sc_vllm.json -o scb >scb.out 2>scb.err
sc_rc=$?
"$bin" --plugin "$vllm_so" run sc_vllm_example.json -o scm >scm.out 2>scm.err
check "scenario: both run" test $sc_rc -eq 0 -a $? -eq 0
for f in scb/*.csv; do
  check "scenario: the same $(basename "$f")" cmp "$f" "scm/$(basename "$f")"
done

# A policy's own field, and the timeline it implies: with "requests": 1 one
# request at a time, FIFO, so each starts when the one before it ends (the
# next batch starts at that iteration's end).
cat >serial.json <<JSON
{$base, "scheduler": {"policy": "reserve_whole", "requests": 1},
 "requests": {"synthetic": {"n": 20, "qps": 50.0, "arrival": "poisson",
   "prompt_tokens": {"uniform": [64, 512]}, "output_tokens": {"uniform": [2, 32]}, "seed": 5}}}
JSON
"$bin" --plugin "$policies_so" llm run serial.json -o serial >serial.out 2>serial.err
check "reserve_whole, requests 1: exits 0" test $? -eq 0
check "reserve_whole, requests 1: one at a time, FIFO" python3 - serial/requests.csv <<'PY'
import csv, sys
rows = sorted(csv.DictReader(open(sys.argv[1])), key=lambda r: int(r["id"]))
ok = all(float(b["scheduled_s"]) == max(float(a["completed_s"]), float(b["arrived_s"]))
         for a, b in zip(rows, rows[1:]))
sys.exit(0 if ok and len(rows) == 20 else 1)
PY
sed 's/"requests": 1}/"requests": 8}/' serial.json >eight.json
"$bin" --plugin "$policies_so" llm run eight.json -o eight >/dev/null 2>&1
check "reserve_whole, requests 8: requests overlap" python3 - eight/requests.csv <<'PY'
import csv, sys
rows = sorted(csv.DictReader(open(sys.argv[1])), key=lambda r: int(r["id"]))
sys.exit(0 if any(float(b["scheduled_s"]) < float(a["completed_s"])
                  for a, b in zip(rows, rows[1:])) else 1)
PY

# llm search with the plug-in: the built-in vLLM's capacity, probe for probe.
for pol in vllm vllm_example; do
  cat >search_$pol.json <<JSON
{"format": "clustersim-llm-search", "version": 1, "model": "meta-llama/Llama-2-7b-hf",
 "device": "a100", "node": "a100_pairwise_nvlink", "scheduler": {"policy": "$pol"},
 "requests": {"synthetic": {"n": 60, "arrival": "poisson",
   "prompt_tokens": {"uniform": [256, 1024]}, "output_tokens": {"uniform": [16, 64]}, "seed": 3}},
 "search": {"slo": {"ttft_ms": {"quantile": 0.9, "max": 2000}}, "start_qps": 4, "max_probes": 8}}
JSON
done
"$bin" llm search search_vllm.json --json >sb.json 2>sb.err
sb_rc=$?
"$bin" --plugin "$vllm_so" llm search search_vllm_example.json --json >sm.json 2>sm.err
check "llm search: both run" test $sb_rc -eq 0 -a $? -eq 0
check "llm search: the same probes and capacity" python3 - sb.json sm.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
da, db = a["deployments"][0], b["deployments"][0]
for d in (da, db):
    d.pop("name", None)
sys.exit(0 if da == db and b["provenance"]["plugins"][0]["file"] == "llm_vllm.so" else 1)
PY

"$bin" --plugin "$policies_so" policies reserve_whole >pol.out 2>&1
check "clustersim policies lists a plug-in's LLM scheduler and its field" \
  grep -q "requests (integer in \[1, 100000\], optional, default 1)" pol.out
check "clustersim policies: its kind" grep -q "^reserve_whole (llm_scheduler)" pol.out

bad "a misuse stops the run, naming the scheduler and the time" \
  'scheduler "bad_decode": cs_llm_replica_schedule: request 0: a decode of 2 tokens, expected 1' \
  --plugin "$policies_so" llm run "$(sed 's/reserve_whole", "requests": 1/bad_decode"/' serial.json >bd.json; echo bd.json)"
check "the misuse: at a simulated time" grep -q "at [0-9.e-]* s simulated, replica 0" bad.err
bad "an unknown scheduler: the known ones and the way forward" \
  'vllm_example.json: scheduler.policy: unknown LLM replica scheduler "vllm_example" (known: vllm, sarathi, orca, static, faster_transformer)' \
  llm run vllm_example.json -o never
check "an unknown scheduler: no output" test ! -e never
bad "a field nobody reads" 'unknown field "request"' \
  --plugin "$policies_so" llm run "$(sed 's/"requests": 1}/"request": 1}/' serial.json >typo.json; echo typo.json)"
bad "a field the policy refuses" 'scheduler.requests' \
  --plugin "$policies_so" llm run "$(sed 's/"requests": 1}/"requests": 0}/' serial.json >zero.json; echo zero.json)"
bad "a scenario naming a scheduler no plug-in gave" 'llm[0]: scheduler.policy: unknown LLM replica scheduler "vllm_example"' \
  run sc_vllm_example.json -o never2
finish
