#!/usr/bin/env python3
"""Writes the fuzz seed corpora, the dictionaries and tests/fuzz/files from the
project's own files, so that they can be refreshed when those change.

  tests/fuzz/make_seeds.py [--check] [SOURCE_ROOT]

Everything written is derived from the repository (examples/, bench/,
tests/regression/, data/, the docs' examples and the trace test fixtures) and
kept small: the fuzzer mutates seeds, it does not need whole traces. Files a
fuzzer run adds to its working copy are never written back (tools/fuzz.sh).
Deterministic: running it twice gives the same files. --check writes them
into a temporary directory instead and exits 1, naming each file, when the
committed ones differ (the fuzz_seeds test), so a seed added by hand or a
source changed without a rerun is caught.
"""
import csv
import glob
import io
import json
import os
import re
import shutil
import sys
import tempfile

ARGS = [a for a in sys.argv[1:] if a != "--check"]
CHECK = "--check" in sys.argv[1:]
ROOT = os.path.abspath(ARGS[0] if ARGS else os.path.join(os.path.dirname(__file__), "..", ".."))
FUZZ = os.path.join(ROOT, "tests", "fuzz")
# Where the outputs go: the tree itself, or a scratch copy under --check.
OUT = tempfile.mkdtemp(prefix="make_seeds.") if CHECK else FUZZ
CORPUS = os.path.join(OUT, "corpus")
FILES = os.path.join(OUT, "files")

# Largest expected request count of a fuzz_simulate seed: under the harness's
# bound (fuzz_common.c), so that seeds do run.
SIMULATE_REQUESTS = 600


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        f.write(text)


def read(rel):
    with open(os.path.join(ROOT, rel), newline="") as f:
        return f.read()


def dumps(doc):
    return json.dumps(doc, indent=1) + "\n"


# ---- Trace excerpts (tests/fuzz/files and the trace corpora) ----------------

def maf2019_excerpt():
    """Ten minute columns of the rows whose counts there are small and not all
    zero, and the companion rows of the same functions."""
    rows = list(csv.reader(io.StringIO(read(
        "data/traces/maf2019_vhive_loader_sample500/invocations.csv"))))
    header, keep = rows[0][:14], []
    for r in rows[1:]:
        counts = [int(x) for x in r[4:14]]
        if 0 < sum(counts) <= 40:
            keep.append(r[:14])
        if len(keep) == 12:
            break
    functions = {r[2] for r in keep}
    out = {}
    for name in ("invocations", "durations", "memory"):
        src = list(csv.reader(io.StringIO(read(
            f"data/traces/maf2019_vhive_loader_sample500/{name}.csv"))))
        if name == "invocations":
            body = keep
        else:
            col = src[0].index("HashFunction")
            body = [r for r in src[1:] if r[col] in functions][:12]
            src[0] = src[0][:6]
            body = [r[:6] for r in body]
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(header if name == "invocations" else src[0])
        w.writerows(body)
        out[name] = buf.getvalue()
    return out


def head(rel, n):
    return "".join(read(rel).splitlines(keepends=True)[:n + 1])


MAF2021 = "data/traces/maf2021_vhive_invitro_head998/AzureFunctionsInvocationTraceForTwoWeeksJan2021.csv"
LLM = "data/traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv"
VIDUR_CODE = "data/traces/vidur_processed/splitwise_code.csv"

# Fixtures of tests/workloads/test_traces.c that the readers accept: the edge
# cases (zones, leap day, 9-digit fractions, unsorted rows, app-level memory).
FIXTURES = {
    "fuzz_azure_llm": {
        "precise.csv": "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                       "2024-02-29 23:59:59.9999999,1,2\n"
                       "2024-03-01 00:00:00.0000001,3,4\n"
                       "2024-03-01T00:00:00.000000250,5,6\n"
                       "2024-03-01 00:00:01,7,8\n"
                       "2024-03-01 00:00:01.5+00:00,9,10\n"
                       "2024-03-01 00:00:03Z,11,12\n"
                       "2024-03-01 01:00:02-01:00,13,14\n",
        "unsorted.csv": "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                        "2023-11-16 18:00:10,1,1\n"
                        "2023-11-16 18:00:05,2,2\n"
                        "2023-11-16 18:00:10,3,3\n",
        "crlf_bom.csv": "\ufeffTIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                        "\"2023-11-16 18:15:46.6805900\",374,44\r\n"
                        "2023-11-16 18:15:50.9951690,396,109",
    },
    "fuzz_maf2021": {
        "unsorted.csv": "app,func,end_timestamp,duration\n"
                        "a,f1,6,1\na,f2,2.5,0.5\nb,f3,5,0\nb,f4,3,2\n",
    },
    "fuzz_maf2019": {
        "app_memory.csv": "HashOwner,HashApp,HashFunction,Trigger,1\no1,a1,f1,http,2\n"
                          "##\n\n##\n"
                          "HashOwner,HashApp,SampleCount,AverageAllocatedMb\no1,a1,5,123.5\n",
    },
}


# ---- Scenarios -----------------------------------------------------------------

def bare(name, sub="profiles/"):
    """The name under data/<sub>, which the data directory search finds."""
    i = name.find("data/" + sub)
    return name[i + len("data/" + sub):] if i >= 0 else os.path.basename(name)


def retarget(doc):
    """File references as bare names (found in data/) and traces as the
    excerpts in tests/fuzz/files, so that they resolve from tests/fuzz/files."""
    doc["profiles"] = [bare(p) for p in doc.get("profiles", [])]
    net = doc.get("network")
    if isinstance(net, dict) and "curve" in net:
        net["curve"] = bare(net["curve"], "profiles/network/")
    cl = doc.get("cluster", {})
    if "interference" in cl:
        cl["interference"] = bare(cl["interference"])
    tr = doc.get("trace")
    if tr:
        f = tr["file"]
        tr["file"] = ("maf2019.csv" if "maf2019" in f else
                      "maf2021.csv" if "maf2021" in f else "azure_llm.csv")
        # The excerpts are minutes long: a window of the full trace would be
        # past their end.
        tr.pop("start_s", None)
        tr.pop("duration_s", None)
        for c in doc.get("clients", []):
            if c.get("arrival") == "trace":
                c.pop("warmup_s", None)
    # The harnesses skip clusters of more than 16 GPUs (fuzz_common.c).
    if cl.get("gpus", 0) > 16:
        cl["gpus"] = 16
    return doc


def client_requests(c, default_duration):
    if c.get("arrival") == "trace":
        return 0
    arr = c.get("arrival")
    if isinstance(arr, dict) and arr.get("process") == "times":
        return len(arr.get("times_ms", []))
    rate = c.get("rate", 0)
    if "requests" in c:
        return c["requests"] + rate * c.get("warmup_s", 0)
    return rate * (c.get("duration_s", default_duration or 0) + c.get("warmup_s", 0))


def shrink(doc):
    """The same scenario with its clients' phases shortened so that the whole
    run stays under SIMULATE_REQUESTS expected requests: fuzz_simulate then
    runs it (values, not only syntax)."""
    clients = doc.get("clients", [])
    default = doc.get("duration_s")
    total = sum(client_requests(c, default) for c in clients)
    if total <= SIMULATE_REQUESTS:
        return doc
    f = SIMULATE_REQUESTS / total
    for c in clients:
        if c.get("arrival") == "trace":
            continue
        if "requests" in c:
            c["requests"] = max(1, int(c["requests"] * f))
        elif "rate" in c:
            c["duration_s"] = round(c.get("duration_s", default or 1) * f, 3)
        if "warmup_s" in c:
            c["warmup_s"] = round(c["warmup_s"] * f, 3)
    if default:
        doc["duration_s"] = round(default * f, 3)
    return doc


# Scenarios that do not become seeds, and why.
NOT_SEEDS = {
    # 24 models mapped to trace functions: in the excerpt's few minutes some
    # get no request, which the scenario rightly refuses; the 16-GPU day and
    # the 8-hour MAF runs stand for them.
    "bench/maf2019_512gpu.json", "bench/maf2019_512gpu_day.json",
}


def scenario_files():
    pats = ["examples/*.json", "examples/*/*.json", "bench/*.json", "tests/regression/*.json"]
    for pat in pats:
        for p in sorted(glob.glob(os.path.join(ROOT, pat))):
            rel = os.path.relpath(p, ROOT)
            # examples/llm holds clustersim-llm-run configs, not scenarios.
            if rel not in NOT_SEEDS and not rel.startswith("examples/llm/"):
                yield rel


# Overrides as the CLI tests and docs use them (tests/cli, docs), one file per
# seed: a line per override.
SET_SEEDS = {
    "rates.txt": "clients[0].rate=250\nclients[1].rate=400\nclients[0].duration_s=2\n",
    "symphony.txt": 'dispatch={"policy":"symphony"}\nunset placement\n',
    "usher.txt": 'placement={"policy":"usher","mode":"min_gpus"}\ncluster.mps=true\n'
                 "cluster.mps_gamma=1.5\n",
    "milp.txt": "placement.policy=milp\nplacement.time_limit_s=5\ncluster.gpus=2\n",
    "interference.txt": "cluster.interference=igniter_v100\ncluster.mps=true\n"
                        "dispatch.max_wait_ms=20\n",
    "typed.txt": "int seed=7\ndouble clients[0].slo_ms=150.5\nstring clients[1].model=bert\n"
                 "bool cluster.mps=true\n",
    "append.txt": 'clients[2]={"model":"bert","rate":10,"slo_ms":300,"requests":20}\n'
                  "unset clients[0]\n",
    "trace.txt": 'trace={"file":"maf2021.csv","time_scale":0.05}\nclients[0].arrival=trace\n'
                 "unset clients[0].rate\nunset clients[0].duration_s\nunset clients[0].warmup_s\n",
    "mig.txt": 'cluster.mig=[{"sm_fraction":0.5,"memory_fraction":0.5},'
               '{"sm_fraction":0.5,"memory_fraction":0.5}]\ncluster.gpus=1\n',
    "network.txt": 'network={"constant_ms":2}\nclients[0].input_bytes=1000\n'
                   "clients[0].output_bytes=8\n",
    "times.txt": 'clients[0].arrival={"process":"times","times_ms":[0,1,1,5,20]}\n'
                 "unset clients[0].rate\nunset clients[0].duration_s\n",
}

# Controllers at work within a short run (tick, provisioning delay, a replan
# after a rate change), for both the scenario and the simulate harness.
CONTROLLER_SEEDS = {
    "controller_autoscale.json":
        '{"seed": 4, "profiles": ["v100_thesis.json"], "cluster": {"gpus": 3, "gpu_type": "v100"},\n'
        ' "dispatch": {"policy": "eager"},\n'
        ' "controller": {"policy": "autoscale", "initial_gpus": 1, "tick_s": 0.2, '
        '"provision_delay_s": 0.3, "bad_rate_threshold": 0.01, "hold_s": 0.5},\n'
        ' "clients": [{"model": "vgg19", "rate": 900, "slo_ms": 40, "requests": 1500}]}\n',
    "controller_replan.json":
        '{"seed": 3, "profiles": ["v100_thesis.json"], "cluster": {"gpus": 2, "gpu_type": "v100", '
        '"host_to_gpu_gbps": 4},\n'
        ' "dispatch": {"policy": "router", "max_wait_ms": 20}, "placement": {"policy": "usher"},\n'
        ' "controller": {"policy": "replan", "period_s": 0.5, "tick_s": 0.1, "half_life_s": 0.2, '
        '"rate_change": 0.1, "min_interval_s": 0.2},\n'
        ' "clients": [{"model": "resnet50", "rate": 300, "planned_rate": 50, "slo_ms": 100, '
        '"requests": 600},\n'
        '             {"model": "alexnet", "rate": 200, "slo_ms": 50, "requests": 400}]}\n',
}


# ---- Profile, network and interference files ----------------------------------

def profile_subset(rel, n_models):
    doc = json.loads(read(rel))
    doc["models"] = doc["models"][:n_models]
    doc["source"] = doc["source"][:200]
    return dumps(doc)


def interference_subset(rel, n_models, batches):
    """The first models, their tables cut to a few batch sizes (every share
    kept, so that the grid completes as in the full file)."""
    doc = json.loads(read(rel))
    doc["models"] = doc["models"][:n_models]
    doc["source"] = doc["source"][:200]
    for m in doc["models"]:
        for table in ("share_latency", "l2_util", "dram_util"):
            if table in m:
                m[table] = [row for row in m[table] if row[0] in batches]
    names = {m["model"] for m in doc["models"]}
    doc["pairs"] = [p for p in doc.get("pairs", [])
                    if p["victim"] in names and p["aggressor"] in names]
    return dumps(doc)


def doc_json_blocks(rel, marker):
    """The JSON examples of a doc page that hold marker (a format name)."""
    text = read(rel)
    for block in re.findall(r"```json\n(.*?)```", text, re.S):
        if marker in block and "..." not in block:
            yield block


# ---- Dictionaries -----------------------------------------------------------------

def json_dictionary():
    """Every field name and keyword the loaders compare against, from the
    sources (key lists, readers and policy parameters)."""
    words = set()
    # The CLI's own words (options, commands) are no input of the loaders.
    for path in sorted(glob.glob(os.path.join(ROOT, "src", "**", "*.c"), recursive=True)):
        if os.sep + "cli" + os.sep in path:
            continue
        text = open(path).read()
        for block in re.findall(r"keys\[\] = \{(.*?)\}", text, re.S):
            words.update(re.findall(r'"([A-Za-z_0-9]+)"', block))
        words.update(re.findall(r'cs_(?:json_read|params)_\w+\(\w+, "([A-Za-z_0-9]+)"', text))
        words.update(re.findall(r'strcmp\(\w+, "([A-Za-z_0-9.-]+)"\) == 0', text))
        words.update(re.findall(r'\.name = "([a-z_0-9-]+)"', text))
    words.update(["clustersim-profile", "clustersim-network", "clustersim-interference",
                  "v100_thesis", "igniter_v100", "gcp_n1_standard_16", "symphony_linear",
                  "maf2019.csv", "maf2021.csv", "azure_llm.csv", "v100",
                  # Read by the decision log's and the rate profile's own parsers,
                  # which the patterns above do not see.
                  "clustersim-decisions", "active", "windows"])
    lines = [f'"\\"{w}\\""' for w in sorted(words)]
    # Values at the edges of what validation accepts and of int32/int64/double.
    lines += ['"true"', '"false"', '"null"', '"1e308"', '"-1"', '"0.5"', '"9223372036854775807"',
              '"2305843009213693951"', '"9007199254740992"', '"4294967296"', '"2147483648"',
              '"1048576"', '"1e9"', '"1e12"', '"1e15"', '"1e18"', '"1e-9"', '"0.001"', '"1e-6"',
              '"[]"', '"{}"']
    return "# JSON field names and keywords of src/ (tests/fuzz/make_seeds.py)\n" + \
        "\n".join(lines) + "\n"


def csv_dictionary():
    words = ["HashOwner", "HashApp", "HashFunction", "Trigger", "Average", "Count",
             "AverageAllocatedMb", "SampleCount", "app", "func", "end_timestamp", "duration",
             "TIMESTAMP", "ContextTokens", "GeneratedTokens", "http", "timer", "1440",
             "2023-11-16 18:15:46.6805900", "+00:00", "Z", "\\x0d\\x0a", "\\x0a##\\x0a",
             "\\xef\\xbb\\xbf", "9223372036854775807", "4294967296", "999999999", "1e9", "-0",
             "nan", "inf", "2024-01-05 11:02:49", "9999-12-31 23:59:59", "1970-01-01 00:00:00"]
    return "# CSV column names and values of the trace formats (docs/traces.md)\n" + \
        "\n".join(f'"{w}"' for w in words) + "\n"


def main():
    for d in (CORPUS, FILES):
        shutil.rmtree(d, ignore_errors=True)
    m19 = maf2019_excerpt()
    m21 = head(MAF2021, 40)
    llm = head(LLM, 40)
    write(os.path.join(FILES, "maf2019.csv"), m19["invocations"])
    write(os.path.join(FILES, "maf2021.csv"), m21)
    write(os.path.join(FILES, "azure_llm.csv"), llm)
    write(os.path.join(FILES, "README.md"),
          "Files the fuzz seed scenarios name (tests/fuzz/make_seeds.py writes them): excerpts\n"
          "of the traces in data/traces. Profiles, curves and interference tables are named\n"
          "bare (\"v100_thesis\") and found in data/ (the harnesses set CLUSTERSIM_DATA_DIR).\n")

    c = lambda h, name, text: write(os.path.join(CORPUS, h, name), text)
    c("fuzz_maf2019", "excerpt.csv", m19["invocations"])
    c("fuzz_maf2019", "excerpt_companions.csv",
      m19["invocations"] + "##\n" + m19["durations"] + "##\n" + m19["memory"])
    c("fuzz_maf2021", "excerpt.csv", m21)
    c("fuzz_measured", "gpulet_isolated.csv", head("data/measured/gpulet_a100_isolated.csv", 6))
    c("fuzz_measured", "gpulet_pairs.csv",
      head("data/measured/gpulet_a100_isolated.csv", 6) +
      "".join(read("data/measured/gpulet_a100_pairs.csv").splitlines(keepends=True)[1:4]))
    c("fuzz_measured", "igniter_pairs.csv", head("data/measured/igniter_v100_pairs.csv", 4))
    c("fuzz_measured", "nvidia_dle.csv", head("data/measured/nvidia_dle_isolated.csv", 4))
    c("fuzz_measured", "mig_copies.csv",
      "source,gpu,model,batch,share_pct,mig_gpcs,partners,latency_ms,isolated_latency_ms,kind\n"
      "p,g,bert,1,,1,,13.0,,isolated\n"
      "p,g,bert,2,,,,20.0,,isolated\n"
      "p,g,bert,1,,1,\"bert:b=1:same MIG instance x2 (MPS default, no SM limit)\",25.0,13.0,"
      "colocated_same_model\n"
      "p,g,bert,1,40,,caffe:vgg16:1:b=2:s=30 x2;bert:b=1,30.0,13.0,colocated\n")
    c("fuzz_azure_llm", "excerpt.csv", llm)
    # Its 223rd line holds a float's repr (14 fraction digits): in the excerpt.
    c("fuzz_vidur_trace", "excerpt.csv", head(VIDUR_CODE, 230))
    c("fuzz_vidur_trace", "reordered.csv",
      "num_decode_tokens,arrived_at,num_prefill_tokens\r\n7,0.0000000004,3\r\n9,0.5,4\r\n9,0.5,1\r\n")
    for h, files in FIXTURES.items():
        for name, text in files.items():
            c(h, name, text)

    for rel in scenario_files():
        doc = retarget(json.loads(read(rel)))
        name = rel.replace("/", "_")
        c("fuzz_scenario", name, dumps(doc))
        c("fuzz_simulate", name, dumps(shrink(doc)))
    for name, text in SET_SEEDS.items():
        c("fuzz_set", name, text)
    for name, text in CONTROLLER_SEEDS.items():
        c("fuzz_scenario", name, text)
        c("fuzz_simulate", name, text)

    c("fuzz_profile", "symphony_table2.json", read("data/profiles/symphony_table2.json"))
    # Decision logs of two small runs (router; Symphony dropping), written by
    # `clustersim run --decisions` with the recorded scenario's files named
    # bare: tests/fuzz/decision_logs.
    for path in sorted(glob.glob(os.path.join(FUZZ, "decision_logs", "*.jsonl"))):
        with open(path, newline="") as f:
            c("fuzz_decisions", os.path.basename(path), f.read())
    c("fuzz_profile", "symphony_beta_1.json", read("data/profiles/symphony_fig6a/beta_1.json"))
    c("fuzz_profile", "v100_thesis_3.json", profile_subset("data/profiles/v100_thesis.json", 3))
    c("fuzz_profile", "igniter_v100_profile_2.json",
      profile_subset("data/profiles/igniter_v100_profile.json", 2))
    c("fuzz_profile", "symphony_linear_3.json",
      profile_subset("data/profiles/symphony_linear.json", 3))
    for i, block in enumerate(doc_json_blocks("docs/profiles.md", "clustersim-profile")):
        c("fuzz_profile", f"docs_{i}.json", block)
    c("fuzz_network", "gcp_n1_standard_16.json",
      read("data/profiles/network/gcp_n1_standard_16.json"))
    for i, block in enumerate(doc_json_blocks("docs/profiles.md", "clustersim-network")):
        c("fuzz_network", f"docs_{i}.json", block)
    c("fuzz_interference", "igniter_v100_3.json",
      interference_subset("data/profiles/igniter_v100.json", 3, {1, 4, 16}))
    c("fuzz_interference", "igniter_v100_1.json",
      interference_subset("data/profiles/igniter_v100.json", 1, {1, 2, 3, 32}))
    for i, block in enumerate(doc_json_blocks("docs/gpu-model.md", "clustersim-interference")):
        c("fuzz_interference", f"docs_{i}.json", block)

    # Large sizes with bounded work (issue 34): 10^5 send times the readers
    # walk once; 3000 GPUs under a placement linear in them.
    c("fuzz_scenario", "times_1e5.json", json.dumps(
        {"name": "10^5 explicit send times: a list the readers walk once", "seed": 1,
         "profiles": ["v100_thesis"], "network": "zero",
         "cluster": {"gpus": 2, "gpu_type": "v100"},
         "dispatch": {"policy": "router", "max_wait_ms": 10}, "placement": {"policy": "dedicated"},
         "clients": [{"model": "resnet50", "slo_ms": 200,
                      "arrival": {"process": "times", "times_ms": [0] * 100000}}]},
        separators=(",", ":")))
    c("fuzz_simulate", "gpus_3000.json", json.dumps(
        {"name": "3000 GPUs in 4 nodes: linear validation, a short run", "seed": 1,
         "profiles": ["v100_thesis"], "network": "zero",
         "cluster": {"nodes": [{"gpus": 750, "gpu_type": "v100"}] * 4},
         "dispatch": {"policy": "router", "max_wait_ms": 10}, "placement": {"policy": "dedicated"},
         "clients": [{"model": "resnet50", "rate": 100, "slo_ms": 200, "requests": 200},
                     {"model": "alexnet", "rate": 100, "slo_ms": 200, "requests": 200}]}))
    # Scripts of calls for fuzz_dispatch (its header says how bytes become
    # calls); each one runs to the end (a misuse would not be accepted).
    m0, m1 = [0, 0, 0, 3, 1, 0, 0, 0, 2, 0, 1], [0, 0, 2, 3, 1, 0, 0, 0, 2, 0, 2]
    scripts = {
        "central_one_by_one": [0] + [13, 0, 0] * 80,
        "placed_one_by_one": [1] + [13, 0, 0] * 80,
        "central_batches": [0] + (m0 + m1) * 40,
        "placed_batches_timers": [1] + ([0, 1, 0, 3, 1, 1, 0, 0, 2, 1, 1] +
                                        [0, 1, 2, 3, 1, 1, 0, 0, 2, 1, 2] +
                                        [5, 1, 10, 6, 0, 12, 0, 0, 0, 0, 0]) * 20,
        "central_preempt_drop": [0] + [13, 0, 0, 8, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0,
                                       9, 0, 0, 0, 3] * 20,
        "discard_and_defer": [0, 0, 2, 0, 2, 1, 2, 0, 0, 10, 2, 5, 11, 2, 7, 2, 12, 0, 0, 0, 0, 0,
                              0, 4, 0, 1, 1, 4, 0, 0, 2, 4, 1],
    }
    for name, script in scripts.items():
        path = os.path.join(CORPUS, "fuzz_dispatch", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(bytes(script))

    write(os.path.join(OUT, "dict", "json.dict"), json_dictionary())
    write(os.path.join(OUT, "dict", "csv.dict"), csv_dictionary())


def tree_files(top, subdirs):
    out = {}
    for sub in subdirs:
        for dirpath, _, names in os.walk(os.path.join(top, sub)):
            for n in names:
                path = os.path.join(dirpath, n)
                with open(path, "rb") as f:
                    out[os.path.relpath(path, top)] = f.read()
    return out


def check():
    """0 when the committed seeds, files and dictionaries are what main() writes."""
    subdirs = ("corpus", "files", "dict")
    made, kept = tree_files(OUT, subdirs), tree_files(FUZZ, subdirs)
    shutil.rmtree(OUT, ignore_errors=True)
    stale = sorted(p for p in made if kept.get(p) != made[p])
    extra = sorted(p for p in kept if p not in made)
    for p in stale:
        print(f"make_seeds: tests/fuzz/{p}: {'differs from' if p in kept else 'missing, not'} "
              f"what the script writes", file=sys.stderr)
    for p in extra:
        print(f"make_seeds: tests/fuzz/{p}: committed but not written by the script (add it "
              f"to the script or remove it)", file=sys.stderr)
    if stale or extra:
        print("make_seeds: stale: rerun python3 tests/fuzz/make_seeds.py and commit",
              file=sys.stderr)
        return 1
    print("make_seeds: the committed seeds, files and dictionaries are current")
    return 0


if __name__ == "__main__":
    main()
    sys.exit(check() if CHECK else 0)
