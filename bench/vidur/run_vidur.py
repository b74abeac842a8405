#!/usr/bin/env python3
"""Run Vidur (github:microsoft/vidur) here and keep its outputs as test expectations.

    python3 bench/vidur/run_vidur.py [--vidur-git DIR] [--cases A,B] [--check] [--keep-tmp DIR]

DIR is a git directory of Vidur (a clone or a bare mirror; default: the environment's
CS_VIDUR_GIT). The script extracts commit 7d47513 into a temporary directory (Vidur's code
never enters this project), puts the stand-ins of bench/vidur/shims on PYTHONPATH, writes
clustersim's attention sample (data/llm/sources) where Vidur's predictor reads attention.csv,
and runs `python3 -m vidur.main` with explicit flags for each case (CASES below). Without
--check it writes, per case, tests/llm/vidur_expected/CASE/: requests.csv (the request list
Vidur simulated, in Vidur's processed-trace format), request_metrics.csv (Vidur's per-request
metrics, trimmed), tbt_quantiles.csv (Vidur's per-token decode time quantiles), run.json (the
command line, Vidur's config.json, wall time, a summary); and
tests/llm/vidur_expected/predictions_between_rows.csv (Vidur's forest between profiled rows).
With --check it reruns the cases in a fresh directory and compares with what is kept (exit 1
on any difference). See bench/vidur/README.md. Needs Debian's python3-numpy, -pandas, -scipy,
-sklearn, -fasteners; nothing else is installed.
"""
import argparse
import csv
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

VIDUR_COMMIT = "7d47513363ec447a741ac5e47241580b47724fbf"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHIMS = os.path.join(HERE, "shims")
SAMPLE = os.path.join(ROOT, "data/llm/sources/vidur_attention_a100_llama2_7b_tp1_sample.csv")
CODE_TRACE = os.path.join(ROOT, "data/traces/vidur_processed/splitwise_code.csv")
EXPECTED = os.path.join(ROOT, "tests/llm/vidur_expected")
ATTENTION_PATH = "data/profiling/compute/a100/meta-llama/Llama-2-7b-hf/attention.csv"
MLP_PATH = "data/profiling/compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv"
PYTHON = "/usr/bin/python3"  # Debian's, where python3-sklearn etc. live

# Flags common to every case: the replica (Llama-2-7B, TP1, one a100 of an a100 pairwise
# NVLink node, one replica) and the predictor. The forest's grid is narrowed to one
# n_estimators (README: why); one training thread makes the forests reproducible (each
# RandomForestRegressor draws from numpy's global RNG, seeded by --seed, in one process).
COMMON = [
    "--seed", "42",
    "--replica_config_model_name", "meta-llama/Llama-2-7b-hf",
    "--replica_config_device", "a100",
    "--replica_config_network_device", "a100_pairwise_nvlink",
    "--replica_config_tensor_parallel_size", "1",
    "--replica_config_num_pipeline_stages", "1",
    "--cluster_config_num_replicas", "1",
    "--global_scheduler_config_type", "round_robin",
    "--execution_time_predictor_config_type", "random_forrest",
    "--random_forrest_execution_time_predictor_config_num_training_job_threads", "1",
    "--random_forrest_execution_time_predictor_config_num_estimators", "250",
    "--random_forrest_execution_time_predictor_config_max_depth", "8", "16", "32",
    "--random_forrest_execution_time_predictor_config_min_samples_split", "2", "5", "10",
    "--random_forrest_execution_time_predictor_config_k_fold_cv_splits", "10",
    "--random_forrest_execution_time_predictor_config_skip_cpu_overhead_modeling",
    "--no-metrics_config_store_plots",
    "--metrics_config_store_token_completion_metrics",
    "--no-metrics_config_enable_chrome_trace",
]
SCHEDULERS = {
    "vllm": ["--replica_scheduler_config_type", "vllm",
             "--vllm_scheduler_config_max_tokens_in_batch", "4096",
             "--vllm_scheduler_config_batch_size_cap", "128",
             "--vllm_scheduler_config_block_size", "16",
             "--vllm_scheduler_config_watermark_blocks_fraction", "0.01"],
    "sarathi": ["--replica_scheduler_config_type", "sarathi",
                "--sarathi_scheduler_config_chunk_size", "512",
                "--sarathi_scheduler_config_batch_size_cap", "128",
                "--sarathi_scheduler_config_block_size", "16",
                "--sarathi_scheduler_config_watermark_blocks_fraction", "0.01"],
}
# {TREE} is the extracted Vidur tree, written there by this script.
WORKLOADS = {
    # The first 200 requests of Vidur's processed splitwise code trace, replayed as is
    # (Vidur cuts a prompt whose prompt + output exceed max_tokens 4096).
    "code200": ["--request_generator_config_type", "trace_replay",
                "--trace_request_generator_config_trace_file", "{TREE}/code200.csv",
                "--trace_request_generator_config_max_tokens", "4096",
                "--trace_request_generator_config_time_scale_factor", "1.0",
                "--trace_request_generator_config_prefill_scale_factor", "1.0",
                "--trace_request_generator_config_decode_scale_factor", "1.0"],
}
# Synthetic: 200 requests, Poisson arrivals (Vidur's, capped at 3/qps), total tokens uniform
# on [256, 3072], decode = ceil(total / 5) (prefill_to_decode_ratio 4): every decode stays
# under 3072 processed tokens and every prefill under 3072 tokens, inside the sample's grid.
for _qps in ("1", "3"):
    WORKLOADS["uniform_q" + _qps] = [
        "--request_generator_config_type", "synthetic",
        "--synthetic_request_generator_config_num_requests", "200",
        "--length_generator_config_type", "uniform",
        "--uniform_request_length_generator_config_min_tokens", "256",
        "--uniform_request_length_generator_config_max_tokens", "3072",
        "--uniform_request_length_generator_config_prefill_to_decode_ratio", "4",
        "--interval_generator_config_type", "poisson",
        "--poisson_request_interval_generator_config_qps", _qps]
CASES = [s + "_" + w for w in ("code200", "uniform_q1", "uniform_q3") for s in ("vllm", "sarathi")]

# Columns of Vidur's request_metrics.csv that are kept (the others follow from them or are
# not compared), in this order.
METRIC_COLS = ["Request Id", "request_num_prefill_tokens", "request_num_decode_tokens",
               "request_num_restarts", "request_scheduling_delay", "prefill_e2e_time",
               "request_e2e_time", "decode_time_execution_plus_preemption_normalized",
               "request_execution_time", "request_preemption_time"]
TBT_FILE = "plots/decode_token_execution_plus_preemption_time.csv"

# Prints Vidur's request list for the flags in sys.argv, as its simulator makes it (the same
# config parsing and generator; the synthetic generator seeds itself, trace replay is
# deterministic): arrived_at with repr (full precision), token counts as ints, into the file
# named by CS_REQUESTS_OUT (Vidur logs to stdout).
DUMP_REQUESTS = r"""
import os
from vidur.config import SimulationConfig
from vidur.request_generator import RequestGeneratorRegistry
from vidur.utils.random import set_seeds
config = SimulationConfig.create_from_cli_args()
set_seeds(config.seed)
gen = RequestGeneratorRegistry.get(config.request_generator_config.get_type(),
                                   config.request_generator_config)
out = open(os.environ["CS_REQUESTS_OUT"], "w")
out.write("arrived_at,num_prefill_tokens,num_decode_tokens\n")
for r in gen.generate():
    out.write("%r,%d,%d\n" % (float(r.arrived_at), r.num_prefill_tokens, r.num_decode_tokens))
out.close()
"""


def die(msg):
    sys.stderr.write("run_vidur.py: " + msg + "\n")
    sys.exit(2)


def extract(git_dir, dest):
    """Writes every blob of VIDUR_COMMIT that the git directory holds under dest; returns the
    paths it lacks (the snapshot here lacks every attention.csv). Fails if code is missing."""
    try:
        ls = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", VIDUR_COMMIT],
                            check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        die("%s: cannot list commit %s (%s)" % (git_dir, VIDUR_COMMIT, e))
    entries = []
    for item in ls.split(b"\0"):
        if not item:
            continue
        meta, path = item.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob":
            entries.append((sha.decode(), path.decode()))
    batch = subprocess.Popen(["git", "--git-dir", git_dir, "cat-file", "--batch"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    missing = []
    for sha, path in entries:
        batch.stdin.write((sha + "\n").encode())
        batch.stdin.flush()
        head = batch.stdout.readline().split()
        if len(head) == 2 and head[1] == b"missing":
            missing.append(path)
            continue
        size = int(head[2])
        data = batch.stdout.read(size)
        batch.stdout.read(1)
        full = os.path.join(dest, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
    batch.stdin.close()
    batch.wait()
    for p in missing:
        if p.endswith(".py") or p == MLP_PATH:
            die("%s: commit %s lacks %s, which the run needs" % (git_dir, VIDUR_COMMIT, p))
    return missing


def write_attention(tree):
    """Vidur's attention.csv for a100 Llama-2-7B: the sample's rows without its added first
    column page_offset, header included, every other character as in the sample."""
    with open(SAMPLE, newline="") as f:
        lines = f.read().splitlines()
    if not lines or not lines[0].startswith("page_offset,time_stats.attn_input_reshape.min,"):
        die("%s: line 1: expected the header page_offset,time_stats.attn_input_reshape.min,..."
            % SAMPLE)
    out = [ln.split(",", 1)[1] for ln in lines]
    path = os.path.join(tree, ATTENTION_PATH)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return len(out) - 1


def write_code200(tree):
    with open(CODE_TRACE) as f:
        lines = f.read().splitlines()
    if lines[0] != "arrived_at,num_prefill_tokens,num_decode_tokens" or len(lines) < 201:
        die("%s: expected Vidur's processed-trace header and at least 200 rows" % CODE_TRACE)
    with open(os.path.join(tree, "code200.csv"), "w") as f:
        f.write("\n".join(lines[:201]) + "\n")


def case_args(case, tree, out_dir, cache_dir):
    sched, work = case.split("_", 1)
    args = COMMON + SCHEDULERS[sched] + WORKLOADS[work]
    args = [a.replace("{TREE}", tree) for a in args]
    return args + ["--metrics_config_output_dir", out_dir, "--metrics_config_cache_dir", cache_dir]


def env_for(tree):
    env = dict(os.environ)
    env["PYTHONPATH"] = SHIMS
    env["PYTHONHASHSEED"] = "0"
    env["OMP_NUM_THREADS"] = "1"
    return env


def run_case(case, tree, work, cache_dir):
    """Runs Vidur on one case; returns (args, output directory, wall seconds, requests text)."""
    out_dir = os.path.join(work, "out", case)
    args = case_args(case, tree, out_dir, cache_dir)
    cmd = [PYTHON, "-m", "vidur.main"] + args
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=tree, env=env_for(tree), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    with open(os.path.join(work, case + ".log"), "w") as f:
        f.write(p.stdout + p.stderr)
    if p.returncode != 0:
        die("%s: Vidur exited %d; last lines:\n%s" % (case, p.returncode, (p.stdout + p.stderr)[-3000:]))
    subdirs = sorted(os.listdir(out_dir))
    if len(subdirs) != 1:
        die("%s: expected one output directory under %s, found %s" % (case, out_dir, subdirs))
    env = env_for(tree)
    env["CS_REQUESTS_OUT"] = os.path.join(work, case + ".requests.csv")
    req = subprocess.run([PYTHON, "-c", DUMP_REQUESTS] + args, cwd=tree, env=env,
                         capture_output=True, text=True)
    if req.returncode != 0:
        die("%s: dumping the request list failed:\n%s" % (case, (req.stdout + req.stderr)[-3000:]))
    with open(env["CS_REQUESTS_OUT"]) as f:
        requests = f.read()
    return args, os.path.join(out_dir, subdirs[0]), wall, requests


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def trimmed_metrics(outdir):
    rows = read_csv(os.path.join(outdir, "request_metrics.csv"))
    rows.sort(key=lambda r: int(r["Request Id"]))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(METRIC_COLS)
    for r in rows:
        w.writerow([r[c] for c in METRIC_COLS])
    return buf.getvalue(), rows


def tbt_quantiles(outdir):
    rows = read_csv(os.path.join(outdir, TBT_FILE))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["cdf", "decode_token_execution_plus_preemption_time"])
    for r in rows:
        w.writerow([r["cdf"], r["decode_token_execution_plus_preemption_time"]])
    return buf.getvalue(), rows


def check_requests_match(case, req_text, metric_rows):
    """The dumped request list must be the one simulated: same count, and per request id the
    token counts Vidur recorded at arrival (request_metrics.csv)."""
    reqs = list(csv.DictReader(io.StringIO(req_text)))
    if len(reqs) != len(metric_rows):
        die("%s: %d requests dumped but %d in request_metrics.csv" % (case, len(reqs), len(metric_rows)))
    for i, (q, m) in enumerate(zip(reqs, metric_rows)):
        if int(m["Request Id"]) != i or int(float(m["request_num_prefill_tokens"])) != int(q["num_prefill_tokens"]) \
                or int(float(m["request_num_decode_tokens"])) != int(q["num_decode_tokens"]):
            die("%s: request %d: dumped %s, simulated %s" % (case, i, q, m))


def pct(values, q):
    """Percentile q (0..100) with linear interpolation between order statistics (numpy's
    default), so that clustersim can compute the same from request_metrics.csv."""
    s = sorted(values)
    pos = (len(s) - 1) * q / 100.0
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summary(metric_rows, tbt_rows):
    out = {}
    for key, col in (("ttft_s", "prefill_e2e_time"), ("e2e_s", "request_e2e_time"),
                     ("scheduling_delay_s", "request_scheduling_delay")):
        v = [float(r[col]) for r in metric_rows]
        out[key] = {"p50": pct(v, 50), "p90": pct(v, 90), "p99": pct(v, 99)}
    tb = {round(float(r["cdf"]), 2): float(r["decode_token_execution_plus_preemption_time"])
          for r in tbt_rows}
    out["tbt_s"] = {"p50": tb[0.5], "p90": tb[0.9], "p99": tb[0.99]}
    out["restarts"] = sum(int(float(r["request_num_restarts"])) for r in metric_rows)
    out["requests"] = len(metric_rows)
    return out


def portable(obj, tree, work):
    """Replaces this run's temporary paths by placeholders."""
    s = json.dumps(obj)
    s = s.replace(work, "{WORK}").replace(tree, "{TREE}")
    return json.loads(s)


def case_files(case, tree, work, cache_dir):
    args, outdir, wall, req_text = run_case(case, tree, work, cache_dir)
    metrics_text, metric_rows = trimmed_metrics(outdir)
    check_requests_match(case, req_text, metric_rows)
    tbt_text, tbt_rows = tbt_quantiles(outdir)
    with open(os.path.join(outdir, "config.json")) as f:
        config = json.load(f)
    config.get("metrics_config", {}).pop("output_dir", None)  # holds a timestamp
    run = {
        "case": case,
        "vidur_commit": VIDUR_COMMIT,
        "command": portable(["python3", "-m", "vidur.main"] + args, tree, work),
        "cwd": "{TREE} (Vidur's tree, extracted from its git directory)",
        "env": {"PYTHONPATH": "bench/vidur/shims", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"},
        "vidur_config": portable(config, tree, work),
        "summary": summary(metric_rows, tbt_rows),
    }
    files = {"requests.csv": req_text, "request_metrics.csv": metrics_text,
             "tbt_quantiles.csv": tbt_text}
    return files, run, wall


def profiled(tree):
    """mlp.csv medians of TP1 rows for Llama-2-7B: {op: {num_tokens: first median}}."""
    rows = read_csv(os.path.join(tree, MLP_PATH))
    out = {}
    for r in rows:
        if r["num_tensor_parallel_workers"] != "1":
            continue
        for op in ("mlp_up_proj", "attn_pre_proj"):
            out.setdefault(op, {}).setdefault(int(r["num_tokens"]), float(r["time_stats.%s.median" % op]))
    return out


def predictions_between_rows(tree, cache_dir):
    """Vidur's cached predictions at points between profiled rows, with the two rows around
    each and the linear interpolation between them (the forest itself is not linear)."""
    files = os.listdir(cache_dir)

    def pred_table(name):
        f = [x for x in files if x.startswith(name + "_") and x.endswith("_predictions.csv")
             and "training" not in x]
        if len(f) != 1:
            die("cache: expected one %s predictions file, found %s" % (name, f))
        return read_csv(os.path.join(cache_dir, f[0]))

    prof = profiled(tree)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["op", "point", "vidur_prediction_ms", "lower_row", "lower_ms", "upper_row",
                "upper_ms", "linear_ms"])
    for op in ("mlp_up_proj", "attn_pre_proj"):
        table = {int(float(r["num_tokens"])): float(r["prediction"]) for r in pred_table(op)}
        for n in (12, 1032, 2056, 2064, 2072, 3000):
            lo = max(k for k in prof[op] if k <= n)
            hi = min(k for k in prof[op] if k >= n)
            lin = prof[op][lo] if lo == hi else \
                prof[op][lo] + (prof[op][hi] - prof[op][lo]) * (n - lo) / (hi - lo)
            w.writerow([op, "num_tokens=%d" % n, repr(table[n]), lo, prof[op][lo], hi,
                        prof[op][hi], repr(lin)])
    att = read_csv(os.path.join(tree, ATTENTION_PATH))
    dec = {(int(r["batch_size"]), int(r["kv_cache_size"])): float(r["time_stats.attn_decode.median"])
           for r in att if r["is_prefill"] == "False"}
    pre = {(int(r["kv_cache_size"]), int(r["prefill_chunk_size"])): float(r["time_stats.attn_prefill.median"])
           for r in att if r["is_prefill"] == "True"}
    table = {(int(float(r["batch_size"])), int(float(r["kv_cache_size"]))): float(r["prediction"])
             for r in pred_table("attn_decode")}
    # decode: batch between 32 and 64 at kv 1024, kv between 1024 and 2048 at batch 32
    for (b, kv), (lo, hi), t in (((48, 1024), ((32, 1024), (64, 1024)), 0.5),
                                 ((32, 1536), ((32, 1024), (32, 2048)), 0.5)):
        lin = dec[lo] + (dec[hi] - dec[lo]) * t
        w.writerow(["attn_decode", "batch=%d kv=%d" % (b, kv), repr(table[(b, kv)]),
                    "batch=%d kv=%d" % lo, dec[lo], "batch=%d kv=%d" % hi, dec[hi], repr(lin)])
    table = {(int(float(r["kv_cache_size"])), int(round(math.sqrt(float(r["prefill_chunk_size_squared"]))))):
             float(r["prediction"]) for r in pred_table("attn_prefill")}
    # prefill at kv 0 between chunks 512 and 1024 (960 and 992 are known in Vidur's full table)
    for chunk in (768, 960, 992):
        lo, hi = (0, 512), (0, 1024)
        lin = pre[lo] + (pre[hi] - pre[lo]) * (chunk - 512) / 512
        w.writerow(["attn_prefill", "kv=0 chunk=%d" % chunk, repr(table[(0, chunk)]),
                    "kv=0 chunk=512", pre[lo], "kv=0 chunk=1024", pre[hi], repr(lin)])
    return buf.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vidur-git", default=os.environ.get("CS_VIDUR_GIT"))
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--keep-tmp", metavar="DIR", help="work in DIR and keep it")
    a = ap.parse_args()
    if not a.vidur_git:
        die("no Vidur git directory: pass --vidur-git DIR or set CS_VIDUR_GIT")
    cases = [c for c in a.cases.split(",") if c]
    for c in cases:
        if c not in CASES:
            die("--cases: unknown case %r (expected some of %s)" % (c, ",".join(CASES)))
    work = a.keep_tmp or tempfile.mkdtemp(prefix="run_vidur.")
    os.makedirs(work, exist_ok=True)
    work = os.path.realpath(work)
    tree = os.path.join(work, "vidur")
    shutil.rmtree(os.path.join(work, "out"), ignore_errors=True)
    shutil.rmtree(os.path.join(work, "cold"), ignore_errors=True)
    os.makedirs(tree, exist_ok=True)
    try:
        missing = extract(a.vidur_git, tree)
        n_att = write_attention(tree)
        write_code200(tree)
        print("extracted %s (%d blobs absent, all attention.csv: %s); attention.csv from the "
              "sample: %d rows" % (VIDUR_COMMIT[:7], len(missing),
                                   all(p.endswith("attention.csv") for p in missing), n_att))
        cache_dir = os.path.join(work, "cache")
        # A cold run trains the forests and fills the cache (one per invocation: the cache
        # key leaves out the grid, so it must not be shared with another grid); every case
        # then runs on the warm cache, so its wall time is the simulation's.
        # With --keep-tmp on a directory kept before, its cache is reused (no cold run, no
        # training.json): handy while exploring, not for the kept expectations' timings.
        cold = None
        if not (os.path.isdir(cache_dir) and os.listdir(cache_dir)):
            t0 = time.perf_counter()
            run_case(cases[0], tree, os.path.join(work, "cold"), cache_dir)
            cold = time.perf_counter() - t0
            print("cold run (training + %s): %.1f s" % (cases[0], cold))
        else:
            print("reusing the forests cached in %s" % cache_dir)
        failures = 0
        for case in cases:
            files, run, wall = case_files(case, tree, work, cache_dir)
            run["wall_s_warm_cache"] = round(wall, 2)
            s = run["summary"]
            print("%s: %.2f s; TTFT p50/p90/p99 %.4f/%.4f/%.4f TBT %.4f/%.4f/%.4f e2e %.3f/%.3f/%.3f restarts %d"
                  % (case, wall, *[s["ttft_s"][p] for p in ("p50", "p90", "p99")],
                     *[s["tbt_s"][p] for p in ("p50", "p90", "p99")],
                     *[s["e2e_s"][p] for p in ("p50", "p90", "p99")], s["restarts"]))
            d = os.path.join(EXPECTED, case)
            if a.check:
                for name, text in files.items():
                    with open(os.path.join(d, name)) as f:
                        kept = f.read()
                    if kept != text:
                        failures += 1
                        print("  DIFFERS: %s/%s" % (case, name))
                with open(os.path.join(d, "run.json")) as f:
                    kept = json.load(f)
                for k in ("command", "vidur_config", "summary"):
                    if kept[k] != run[k]:
                        failures += 1
                        print("  DIFFERS: %s/run.json %s" % (case, k))
                continue
            os.makedirs(d, exist_ok=True)
            for name, text in files.items():
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            with open(os.path.join(d, "run.json"), "w") as f:
                json.dump(run, f, indent=1, sort_keys=True)
                f.write("\n")
        between = predictions_between_rows(tree, cache_dir)
        path = os.path.join(EXPECTED, "predictions_between_rows.csv")
        timing = {"cold_run_s": round(cold or 0, 1), "cold_run_case": cases[0],
                  "machine": "2 shared cores, Debian 12, Python 3.11, scikit-learn 1.2.1"}
        if a.check:
            with open(path) as f:
                if f.read() != between:
                    failures += 1
                    print("  DIFFERS: predictions_between_rows.csv")
            print("check: %s" % ("identical" if failures == 0 else "%d differences" % failures))
            return 1 if failures else 0
        with open(path, "w") as f:
            f.write(between)
        if cold is None:
            return 0
        with open(os.path.join(EXPECTED, "training.json"), "w") as f:
            json.dump(timing, f, indent=1, sort_keys=True)
            f.write("\n")
        return 0
    finally:
        if not a.keep_tmp:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
