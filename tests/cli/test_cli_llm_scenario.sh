#!/usr/bin/env bash
# LLM deployments in a scenario (docs/llm.md, "LLM models in a scenario"):
# beside the quickstart's three DNN models, one deployment of the scenario's
# "llm" section. The expected values come from outside the engine:
#  - the DNN models' results and requests are those of the quickstart run
#    alone, byte for byte (the deployment's GPUs are its own);
#  - every LLM request's schedule and completion are those `clustersim llm
#    run` gives the same config (itself checked against Vidur's classes,
#    tests/llm/test_sim_vidur.py), for vLLM, Sarathi, a run with preemptions,
#    a disaggregated one and all requests at one instant (every arrival of
#    an instant before the deployment steps it);
#  - good requests, TTFT and TPOT percentiles (nearest rank) and the cost
#    recomputed by hand from the llm run's per-request file and the prices;
#  - the same scenario twice: byte-identical outputs;
#  - bad entries exit 2 naming the file and the JSON path; the goodput
#    search, provision and replay refuse a scenario with "llm".
# Usage: test_cli_llm_scenario.sh CLUSTERSIM SOURCE_ROOT
source "$(dirname "$0")/harness.sh" "$@"
cd "$tmp" || exit 1

# scen NAME POLICY LLM_EXTRA REQUESTS: a run config NAME.run.json and the
# quickstart with it as llm[0] (named "chat"), NAME.json.
scen() {
  local name=$1 policy=$2 extra=$3 requests=$4
  cat >"$name.run.json" <<JSON
{"format": "clustersim-llm-run", "version": 1, "model": "meta-llama/Llama-2-7b-hf",
 "device": "a100", "node": "a100_pairwise_nvlink", "tensor_parallel": 1,
 "attention_outside_grid": "clamp", "scheduler": {"policy": "$policy"}, $extra,
 "requests": $requests}
JSON
  python3 - "$src" "$name" <<'PY'
import json, sys
src, name = sys.argv[1:]
q = json.load(open(f"{src}/examples/quickstart.json"))
q["profiles"] = [f"{src}/data/profiles/v100_thesis.json"]
q["network"] = {"curve": f"{src}/data/profiles/network/gcp_n1_standard_16.json"}
q["outputs"] = {"requests_csv": True}
json.dump(q, open("dnn.json", "w"), indent=1)
d = json.load(open(f"{name}.run.json"))
del d["format"], d["version"]
d = {"name": "chat", "slo": {"ttft_ms": 250, "tpot_ms": 25}, **d}
q["llm"] = [d]
json.dump(q, open(f"{name}.json", "w"), indent=1)
PY
}

syn() { # N QPS PROMPT OUTPUT: synthetic Poisson requests
  echo "{\"synthetic\": {\"n\": $1, \"qps\": $2, \"arrival\": \"poisson\", \"prompt_tokens\": {\"uniform\": $3}, \"output_tokens\": {\"uniform\": $4}, \"seed\": 3}}"
}

scen vllm vllm '"replicas": 3, "router": "least_outstanding"' "$(syn 400 9 '[256, 2048]' '[1, 512]')"
scen sarathi sarathi '"replicas": 2, "router": "lor"' "$(syn 300 6 '[256, 2048]' '[1, 256]')"
scen preempt vllm '"replicas": 2, "router": "lor"' "$(syn 300 30 '[1024, 2500]' '[256, 1500]')"
scen disagg vllm '"disaggregated": {"prefill_replicas": 2, "decode_replicas": 1, "kv_transfer": {"gbps": 50, "latency_ms": 0.01}}' "$(syn 300 8 '[256, 2048]' '[1, 256]')"
scen instant vllm '"replicas": 2, "router": "lor"' '{"synthetic": {"n": 60, "arrival": "static", "prompt_tokens": {"uniform": [16, 900]}, "output_tokens": {"uniform": [1, 64]}, "seed": 2}}'

"$bin" run dnn.json -o dnn >dnn.out 2>&1
check "quickstart alone: exits 0" test $? -eq 0
same_as_llm_run() { # CASE
  local c=$1
  "$bin" llm run $c.run.json -o $c.llm >$c.llm.out 2>&1
  check "$c: llm run exits 0" test $? -eq 0
  "$bin" run $c.json -o $c.out >$c.stdout 2>$c.stderr
  check "$c: the scenario exits 0" test $? -eq 0
  check "$c: the table names the deployment" grep -q "^llm chat: meta-llama/Llama-2-7b-hf" $c.stdout
  check "$c: as llm run, the DNN models as alone, goodput and percentiles by hand" \
    python3 - dnn $c.out $c.llm <<'PY'
import csv, json, math, sys
dnn, mix, llm = sys.argv[1:]
a, b = (json.load(open(f"{d}/summary.json")) for d in (dnn, mix))
bad = []
if a["models"] != b["models"][:3]:
    bad.append("the DNN models' results differ from the quickstart alone")
ra = list(csv.DictReader(open(f"{dnn}/requests.csv")))
rb = list(csv.DictReader(open(f"{mix}/requests.csv")))
if ra != [r for r in rb if r["model"] != "chat"]:
    bad.append("the DNN models' requests differ from the quickstart alone")
mine = {int(r["id"]): r for r in rb if r["model"] == "chat"}
slo = json.load(open(f"{mix}/scenario.json"))["llm"][0]["slo"]
slo_ttft, slo_tpot = round(slo["ttft_ms"] * 1e6), round(slo["tpot_ms"] * 1e6)
ref = {int(r["id"]): r for r in csv.DictReader(open(f"{llm}/requests.csv"))}
if sorted(mine) != sorted(ref):
    bad.append(f"{len(mine)} LLM requests, llm run has {len(ref)}")
ttft, tpot, good = [], [], 0
for i, x in ref.items():
    r = mine.get(i)
    if r is None:
        continue
    # llm run writes seconds with 9 decimals: exact to the ns.
    for col, key in (("send_ns", "arrived_s"), ("exec_start_ns", "scheduled_s"),
                     ("receive_ns", "completed_s")):
        if abs(int(r[col]) - round(float(x[key]) * 1e9)) > 1:
            bad.append(f"request {i}: {col} {r[col]}, llm run {x[key]} s")
    t = round(float(x["first_token_s"]) * 1e9) - round(float(x["arrived_s"]) * 1e9)
    n = int(x["output_tokens"])
    p = (round(float(x["completed_s"]) * 1e9) - round(float(x["first_token_s"]) * 1e9)) / (n - 1) if n > 1 else 0.0
    ok = t <= slo_ttft and p <= slo_tpot
    good += ok
    if (r["slo_met"] == "1") != ok:
        bad.append(f"request {i}: slo_met {r['slo_met']}, by hand {ok}")
    ttft.append(t)
    if n > 1:
        tpot.append(round(p))
m = b["models"][3]
if m["model"] != "chat" or m["requests"]["good"] != good or m["requests"]["completed"] != len(ref):
    bad.append(f"good {m['requests']['good']}, completed {m['requests']['completed']}; by hand {good} of {len(ref)}")
def rank(v, q):  # nearest rank (sim/samples.h), ms
    v = sorted(v)
    return v[max(0, math.ceil(q / 100 * len(v)) - 1)] / 1e6
l = b["llm"][0]
for name, v in (("ttft_ms", ttft), ("tpot_ms", tpot)):
    for q in (50, 90, 99):
        if v and abs(l[name][f"p{q}"] - rank(v, q)) > 1e-6:
            bad.append(f"{name} p{q} {l[name][f'p{q}']}, by hand {rank(v, q)}")
s = json.load(open(f"{llm}/summary.json"))
if l["preemptions"] != s["preemptions"] or abs(l["output_tokens_per_s"] - s["output_tokens_per_s"]) > 1e-6 * s["output_tokens_per_s"]:
    bad.append(f"preemptions {l['preemptions']}, tokens/s {l['output_tokens_per_s']}; llm run {s['preemptions']}, {s['output_tokens_per_s']}")
# The cost: the quickstart's four V100s and the deployment's GPUs at a100's 2.21 $/h.
gpus = l["gpus"]
want = a["cost"]["price_per_hour"] + 2.21 * gpus
if abs(b["cost"]["price_per_hour"] - want) > 1e-9:
    bad.append(f"price {b['cost']['price_per_hour']} $/h, by hand {want}")
print("\n".join(bad[:10]) or f"# {len(ref)} requests, {good} good, {gpus} GPUs, {l['preemptions']} preemptions")
sys.exit(1 if bad else 0)
PY
}
for c in vllm sarathi preempt disagg instant; do
  same_as_llm_run $c
done
# SLOs at a request's own TTFT and TPOT: "within" includes the bound.
cp vllm.run.json bound.run.json
python3 - <<'PY'
import csv, json
r = sorted(csv.DictReader(open("vllm.llm/requests.csv")), key=lambda x: float(x["ttft_ms"]))[200]
ns = lambda k: round(float(r[k]) * 1e9)
ttft = ns("first_token_s") - ns("arrived_s")
d = json.load(open("vllm.json"))
d["llm"][0]["slo"] = {"ttft_ms": ttft / 1e6, "tpot_ms": 1e6}
json.dump(d, open("bound.json", "w"))
PY
same_as_llm_run bound
check "bound: the 201 requests up to the bound are good" py 'd["models"][3]["requests"]["good"] >= 201' bound.out/summary.json
check "preempt: preempts (the case is what it says)" py 'd["llm"][0]["preemptions"] > 0' preempt.out/summary.json
# The series over time: the scenario's llm_over_time.csv is llm run's
# timeseries.csv (both 1 s bins), and its sums are the run's totals.
check "preempt: llm_over_time.csv is llm run's timeseries.csv, its sums the totals" \
  python3 - preempt.out preempt.llm <<'PY'
import csv, json, sys
mix, llm = sys.argv[1:]
rows = list(csv.DictReader(open(f"{mix}/llm_over_time.csv")))
ref = list(csv.DictReader(open(f"{llm}/timeseries.csv")))
s = json.load(open(f"{llm}/summary.json"))
bad = []
if [{k: v for k, v in r.items() if k != "model"} for r in rows] != ref or {r["model"] for r in rows} != {"chat"}:
    bad.append("llm_over_time.csv differs from llm run's timeseries.csv")
tot = lambda k: sum(int(r[k]) for r in ref)
if (tot("preemptions"), tot("arrivals"), tot("completions")) != (s["preemptions"], s["requests"], s["requests"]):
    bad.append(f"sums {tot('preemptions')}, {tot('arrivals')}, {tot('completions')}; summary {s['preemptions']}, {s['requests']}")
# Mean KV use over the run: the bins' block-time over the makespan.
span = s["makespan_s"]
mean = sum(float(r["kv_util"]) * min(1.0, span - float(r["time_s"])) for r in ref) / span
if abs(mean - s["kv_mean_utilisation"]) > 1e-4:
    bad.append(f"mean KV use {mean}, summary {s['kv_mean_utilisation']}")
print("\n".join(bad) or f"# {len(ref)} bins, {tot('preemptions')} preemptions")
sys.exit(1 if bad else 0)
PY
"$bin" run vllm.json -o vllm.again >/dev/null 2>&1
check "same scenario, same summary" cmp vllm.out/summary.json vllm.again/summary.json
check "provenance: setup.llm names the data by hash, no path of this machine" python3 - "$src" vllm.out/summary.json <<'PY'
import hashlib, json, sys
src, f = sys.argv[1:]
l = json.load(open(f))["setup"]["llm"][0]
want = {"models": "models.json", "ops": "ops/a100/meta-llama__Llama-2-7b-hf.json",
        "attention": "attention/a100/meta-llama__Llama-2-7b-hf.json"}
ok = l["model"] == "chat" and l["gpus"] == 3 and l["price_per_hour"] == 2.21
for k, rel in want.items():
    d = l["data"][k]
    ok = ok and d["sha256"] == hashlib.sha256(open(f"{src}/data/llm/{rel}", "rb").read()).hexdigest()
    ok = ok and src not in json.dumps(d) and d["source"].startswith("Converted by")
sys.exit(0 if ok else 1)
PY
check "same scenario, same requests" cmp vllm.out/requests.csv vllm.again/requests.csv

# A warm-up: the requests arriving before it run but are not measured; the
# measured ones and their TTFT p50 (nearest rank) by hand from llm run's file.
"$bin" run vllm.json --set 'llm[0].warmup_s=10' -o warm >/dev/null 2>&1
check "warm-up: the measured requests and their TTFT p50 by hand" python3 - warm vllm.llm <<'PY'
import csv, json, math, sys
mix, llm = sys.argv[1:]
s = json.load(open(f"{mix}/summary.json"))
ref = list(csv.DictReader(open(f"{llm}/requests.csv")))
ns = lambda r, k: round(float(r[k]) * 1e9)
later = [r for r in ref if ns(r, "arrived_s") >= 10 * 10**9]
ttft = sorted(ns(r, "first_token_s") - ns(r, "arrived_s") for r in later)
p50 = ttft[math.ceil(0.5 * len(ttft)) - 1] / 1e6
m, l = s["models"][3], s["llm"][0]
ok = (m["requests"]["measured"] == len(later) and m["requests"]["warmup"] == len(ref) - len(later)
      and abs(l["ttft_ms"]["p50"] - p50) < 1e-6)
print(f"# {len(later)} of {len(ref)} measured, TTFT p50 {l['ttft_ms']['p50']} (by hand {p50})")
sys.exit(0 if ok else 1)
PY
bad "warm-up past the list" 'llm[0].warmup_s: expected a warm-up that ends before the last request arrives' run vllm.json --set 'llm[0].warmup_s=1000'

# clustersim plot on a run with a deployment: its KV use and tokens/s over
# time (every bin of llm_over_time.csv), and in the latency CDF its TTFT and
# TPOT SLOs named instead of a dashed SLO at its slo_ms.
"$bin" run vllm.json -o plotted --requests-csv >/dev/null 2>&1
"$bin" plot plotted >plot.out 2>plot.err
check "plot: exits 0 with llm_over_time" grep -q "llm_over_time" plot.out
check "plot: llm_over_time.dat holds every bin" python3 - plotted <<'PY'
import csv, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(f"{d}/llm_over_time.csv")))
dat = [l.split("\t") for l in open(f"{d}/figures/llm_over_time.dat") if l.strip() and not l.startswith("#")]
ok = len(dat) == len(rows) and all(abs(float(x[2]) - 100 * float(r["kv_util"])) < 1e-6 and
                                   abs(float(x[4]) - float(r["output_tokens_per_s"])) < 1e-3
                                   for x, r in zip(dat, rows))
sys.exit(0 if ok else 1)
PY
slo=$(python3 -c "import json; print(json.load(open('plotted/summary.json'))['models'][3]['slo_ms'])")
check "plot: the CDF names chat's TTFT and TPOT SLOs" grep -q "chat (n = 400, LLM: TTFT SLO 250 ms, TPOT SLO 25 ms)" plotted/figures/latency_cdf.gp
check "plot: no dashed SLO at chat's slo_ms ($slo)" bash -c "! grep -q 'set arrow from $slo,' plotted/figures/latency_cdf.gp"

# An offered rate past what the replicas serve warns (the wait for a first
# iteration grows through the list); the example's own rate does not.
"$bin" run "$src/examples/mixed_llm_dnn.json" --set 'llm[0].requests.synthetic.qps=40' >over.out 2>over.err
check "overloaded: warns llm_queue_growing" grep -q "warning \[llm_queue_growing\] chat" over.err
"$bin" run "$src/examples/mixed_llm_dnn.json" >fine.out 2>fine.err
check "the example's rate: no llm_queue_growing" bash -c '! grep -q llm_queue_growing fine.err'

# Bad entries: one message naming the file and the JSON path, exit 2.
edit() { # NAME PYTHON: vllm.json edited by a Python statement on d
  python3 -c "import json; d=json.load(open('vllm.json')); $2; json.dump(d, open('$1.json', 'w'))"
}
edit noslo 'del d["llm"][0]["slo"]'
bad "no slo" 'noslo.json: llm[0].slo: required field is missing' run noslo.json
edit halfslo 'del d["llm"][0]["slo"]["tpot_ms"]'
bad "no tpot" 'halfslo.json: llm[0].slo.tpot_ms: required field is missing' run halfslo.json
edit dupname 'd["llm"][0]["name"] = "bert"'
bad "a DNN model's name" 'dupname.json: llm[0]: name "bert" is already a model'"'"'s (clients)' run dupname.json
edit badmodel 'd["llm"][0]["model"] = "nosuch"'
bad "unknown LLM model" 'badmodel.json: llm[0]: model:' run badmodel.json
edit badfield 'd["llm"][0]["replica"] = 2'
bad "unknown field" 'badfield.json: llm[0]: unknown field "replica"' run badfield.json
edit hasformat 'd["llm"][0]["format"] = "clustersim-llm-run"'
bad "format inside a scenario" 'hasformat.json: llm[0]: unknown field "format"' run hasformat.json
edit ownbins 'd["llm"][0]["timeseries_bin_s"] = 5'
bad "its own bins" 'ownbins.json: llm[0].timeseries_bin_s: a scenario'"'"'s series share outputs.timeseries_bin_s' run ownbins.json
edit empty 'd["llm"] = []'
bad "empty llm" 'empty.json: llm: expected a non-empty array' run empty.json
bad "goodput search refuses" 'vllm.json: llm: the goodput search scales' search vllm.json
# A deployment whose lengths come from a trace (requests.synthetic.lengths):
# its summary names that trace with its SHA-256, as a run's trace.
code="$src/data/traces/vidur_processed/splitwise_code.csv"
scen lengths vllm '"replicas": 1, "attention_outside_grid": "clamp"' \
  "{\"synthetic\": {\"n\": 30, \"qps\": 4, \"arrival\": \"poisson\", \"lengths\": {\"trace\": \"$code\"}, \"seed\": 3}}"
"$bin" run lengths.json -o lengths >/dev/null 2>&1
check "lengths from a trace: the summary names the trace and its hash" python3 - lengths/summary.json "$code" <<'PY'
import hashlib, json, sys
d = json.load(open(sys.argv[1]))
t = d["setup"]["llm"][0]["lengths_trace"]
sys.exit(0 if t["file"] == "splitwise_code.csv"
         and t["sha256"] == hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest() else 1)
PY
"$bin" run vllm.json -o dec --decisions dec.jsonl >/dev/null 2>&1
bad "replay refuses" 'which are not replayed' replay dec.jsonl --backend emulated
finish
