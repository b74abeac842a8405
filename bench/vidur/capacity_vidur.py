#!/usr/bin/env python3
"""Run Vidur's own capacity search (github:microsoft/vidur) here and keep its probes.

    python3 bench/vidur/capacity_vidur.py [--vidur-git DIR] [--jobs vllm,sarathi] [--check]
                                          [--keep-tmp DIR]

DIR is a git directory of Vidur (default: the environment's CS_VIDUR_GIT). As run_vidur.py
does, the script extracts commit 7d47513 into a temporary directory, writes clustersim's
attention sample where Vidur's predictor reads attention.csv and puts bench/vidur/shims on
PYTHONPATH (now with a stand-in for ray, shims/ray.py). Then, in one process of Debian's
Python, it builds Vidur's own `CapacitySearch`
(vidur/config_optimizer/config_explorer/capacity_search.py) on one of Vidur's own `JobConfig`s
per job (JOBS below) and calls its `search()`: Vidur's bisection, each probe a
`nice -n 1 python -m vidur.main ...` that Vidur's code builds and starts, judged by Vidur's
`_is_under_sla` (the scheduling delay quantile <= the SLO, from the run's
plots/request_scheduling_delay.csv). The only additions to Vidur's command are the predictor's
flags of run_vidur.py (the narrowed forest grid, one training thread), added by a subclass of
JobConfig to its to_config_dict, and `python` on PATH is Debian's python3.

Without --check it writes tests/llm/vidur_expected/capacity/: requests.csv (the request list
Vidur's generator makes for these flags at 1 request/s; at rate q its arrivals are these
divided by q, checked at every probe), JOB.json (every probe: rate, scheduling delay quantile,
pass, the command; the capacity; Vidur's config.json of the first probe; wall times) and
training.json. With --check it reruns in a fresh directory and compares (exit 1 on any
difference). See bench/vidur/README.md ("Vidur's own capacity search").
"""
import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_vidur as rv  # noqa: E402  (extraction, attention sample, environment)

EXPECTED = os.path.join(rv.EXPECTED, "capacity")
# The lengths: the 200 requests Vidur's uniform generator drew for the kept uniform cases
# (total uniform on [256, 3072], decode = ceil(total / 5); all inside the attention sample),
# given to Vidur's search as the length trace its TraceConfig takes (arrivals ignored there).
LENGTHS = os.path.join(rv.EXPECTED, "vllm_uniform_q1", "requests.csv")
LENGTHS_IN_TREE = "uniform200_lengths.csv"

# Vidur's own search parameters (config_explorer/main.py's defaults) but start_qps, which its
# TraceConfig sets per trace: scheduling delay p99 <= 5 s, 2.5 % granularity, 20 iterations,
# time limit 30 min of simulated time.
SEARCH = {"scheduling_delay_slo_value": 5.0, "scheduling_delay_slo_quantile": 0.99,
          "min_search_granularity": 2.5, "max_iterations": 20, "time_limit": 30}
JOB = {"model": {"name": "llama-2-7b-hf", "identifier": "meta-llama/Llama-2-7b-hf"},
       "trace": {"name": "uniform200", "trace_file": LENGTHS_IN_TREE, "max_seq_len": 4096,
                 "num_requests": 200, "start_qps": 2},
       "cluster": {"device": "a100", "num_gpus": 1, "gpus_per_node": 1},
       "tp": 1, "pp": 1, "batch_size": 128}
JOBS = {"vllm": {"scheduler": "vllm"},
        "sarathi": {"scheduler": "sarathi", "chunk_size": 512}}
# The predictor as run_vidur.py runs it (README: the narrowing; one thread for determinism).
PREDICTOR = {
    "random_forrest_execution_time_predictor_config_num_training_job_threads": 1,
    "random_forrest_execution_time_predictor_config_num_estimators": 250,
    "random_forrest_execution_time_predictor_config_max_depth": "8 16 32",
    "random_forrest_execution_time_predictor_config_min_samples_split": "2 5 10",
    "random_forrest_execution_time_predictor_config_k_fold_cv_splits": 10,
}

# Vidur's TraceConfig.to_config_dict (config_explorer/config/config.py) passes
# --synthetic_request_generator_config_max_tokens, which vidur.main at this commit refuses
# ("unrecognized arguments": SyntheticRequestGeneratorConfig has no max_tokens field since
# Vidur's config rewrite, it takes its length generator's), so every probe of Vidur's search
# as is exits 2 and the search stops after one probe with no capacity. The flag is taken
# out; the length generator's max_tokens, which the synthetic generator takes, is still
# passed (trace_request_length_generator_config_max_tokens, 4096).
DROPPED = ["synthetic_request_generator_config_max_tokens"]

# Runs in Vidur's tree (cwd) with the shims on PYTHONPATH; reads its parameters from the JSON
# file named by CS_SPEC and writes the search's record to CS_RESULT.
DRIVER = r"""
import argparse, json, os, shlex, sys, time
spec = json.load(open(os.environ["CS_SPEC"]))
from vidur.config_optimizer.config_explorer.config import (
    ClusterConfig, JobConfig, ModelConfig, SchedulerConfig, SimulationConfig, TraceConfig)
from vidur.config_optimizer.config_explorer.capacity_search import CapacitySearch

class Job(JobConfig):
    # Vidur's JobConfig with the predictor's flags added to the command it makes and the
    # flag vidur.main refuses taken out (DROPPED in capacity_vidur.py says why).
    def to_config_dict(self):
        d = super().to_config_dict()
        for k in spec["drop_flags"]:
            del d[k]
        d.update(spec["extra_flags"])
        return d

class Recorded(CapacitySearch):
    # Vidur's CapacitySearch; records each probe's command, result and wall time.
    probes = []
    def _generate_run_command(self, scheduler_config):
        self._last_command = super()._generate_run_command(scheduler_config)
        return self._last_command
    def is_under_sla(self, qps):
        self._last_command = None
        t0 = time.perf_counter()
        ok, delay = super().is_under_sla(qps)
        self.probes.append({"qps": qps, "scheduling_delay": delay, "under_sla": bool(ok),
                            "wall_s": round(time.perf_counter() - t0, 2),
                            "command": self._last_command,
                            "run_dir": SimulationConfig(
                                output_dir=self.args.output_dir, cache_dir=self.args.cache_dir,
                                qps=qps, time_limit=self.args.time_limit,
                                job_config=self.job_config).get_run_dir()})
        return ok, delay

j = spec["job"]
job = Job(ModelConfig(**j["model"]), TraceConfig(**j["trace"]), ClusterConfig(**j["cluster"]),
          SchedulerConfig(**j["scheduler"]), j["tp"], j["pp"], j["batch_size"])
args = argparse.Namespace(output_dir=spec["output_dir"], cache_dir=spec["cache_dir"],
                          **spec["search"])
t0 = time.perf_counter()
result = Recorded(job, args).search()
wall = time.perf_counter() - t0
json.dump({"result": result, "probes": Recorded.probes, "wall_s": round(wall, 2),
           "job_key": job.get_key(), "job_hash": job.get_hash()},
          open(os.environ["CS_RESULT"], "w"), indent=1)
"""

# Vidur's request list for the flags of a probe's command (without `nice -n 1 python -m
# vidur.main`), with the rate replaced by CS_QPS: Vidur's SimulationConfig parsing and its
# generator (it seeds itself), written to CS_REQUESTS_OUT with full precision.
DUMP = r"""
import os, shlex, sys
argv = shlex.split(os.environ["CS_ARGS"])
q = os.environ["CS_QPS"]
for i, a in enumerate(argv):
    if a in ("--poisson_request_interval_generator_config_qps",
             "--gamma_request_interval_generator_config_qps"):
        argv[i + 1] = q
    if a == "--metrics_config_output_dir":
        argv[i + 1] = os.environ["CS_SCRATCH"]  # Vidur writes its config.json there
sys.argv = ["vidur"] + argv
from vidur.config import SimulationConfig
from vidur.request_generator import RequestGeneratorRegistry
config = SimulationConfig.create_from_cli_args()
gen = RequestGeneratorRegistry.get(config.request_generator_config.get_type(),
                                   config.request_generator_config)
with open(os.environ["CS_REQUESTS_OUT"], "w") as out:
    out.write("arrived_at,num_prefill_tokens,num_decode_tokens\n")
    for r in gen.generate():
        out.write("%r,%d,%d\n" % (float(r.arrived_at), r.num_prefill_tokens, r.num_decode_tokens))
"""


def die(msg):
    sys.stderr.write("capacity_vidur.py: " + msg + "\n")
    sys.exit(2)


def env_for(tree, bindir):
    env = rv.env_for(tree)
    # Vidur's probe command is `nice -n 1 python -m vidur.main`: `python` is Debian's python3.
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    return env


def run_search(name, tree, work, cache_dir, bindir, search):
    spec = {"job": dict(JOB, scheduler=JOBS[name]), "extra_flags": PREDICTOR,
            "drop_flags": DROPPED, "search": search,
            "output_dir": os.path.join(work, "out", name), "cache_dir": cache_dir}
    spec_path = os.path.join(work, name + ".spec.json")
    result_path = os.path.join(work, name + ".result.json")
    json.dump(spec, open(spec_path, "w"))
    env = env_for(tree, bindir)
    env["CS_SPEC"], env["CS_RESULT"] = spec_path, result_path
    t0 = time.perf_counter()
    p = subprocess.run([rv.PYTHON, "-c", DRIVER], cwd=tree, env=env, capture_output=True,
                       text=True)
    wall = time.perf_counter() - t0
    with open(os.path.join(work, name + ".log"), "w") as f:
        f.write(p.stdout + p.stderr)
    if p.returncode != 0:
        die("%s: Vidur's search exited %d; last lines:\n%s" % (name, p.returncode,
                                                               (p.stdout + p.stderr)[-3000:]))
    res = json.load(open(result_path))
    res["process_wall_s"] = round(wall, 2)
    for pr in res["probes"]:
        if pr["scheduling_delay"] is None:
            die("%s: probe at %r: Vidur's run failed (see %s)" % (name, pr["qps"], pr["run_dir"]))
    return res


def dump_requests(tree, bindir, command, qps, work, tag):
    args = command.split(" -m vidur.main ", 1)[1]
    env = env_for(tree, bindir)
    env.update(CS_ARGS=args, CS_QPS=repr(qps), CS_SCRATCH=os.path.join(work, "scratch", tag),
               CS_REQUESTS_OUT=os.path.join(work, tag + ".requests.csv"))
    p = subprocess.run([rv.PYTHON, "-c", DUMP], cwd=tree, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        die("dumping Vidur's requests at %r/s failed:\n%s" % (qps, (p.stdout + p.stderr)[-3000:]))
    return open(env["CS_REQUESTS_OUT"]).read()


def parse_requests(text):
    return [(float(r["arrived_at"]), int(r["num_prefill_tokens"]), int(r["num_decode_tokens"]))
            for r in csv.DictReader(io.StringIO(text))]


def check_probe_requests(name, pr, reqs_q, base):
    """The probe's requests are the rate-1 list with arrivals / q (same lengths, same order),
    and they are what Vidur simulated (request_metrics.csv: count, tokens and the interval
    since the previous arrival per id)."""
    q = pr["qps"]
    if len(reqs_q) != len(base) or any(a[1:] != b[1:] for a, b in zip(reqs_q, base)):
        die("%s: at %r/s Vidur's request lengths differ from those at 1/s" % (name, q))
    dev = max(abs(a[0] - b[0] / q) for a, b in zip(reqs_q, base))
    if dev > 1e-9:
        die("%s: at %r/s an arrival differs from the 1/s one divided by the rate by %g s"
            % (name, q, dev))
    sub = [d for d in os.listdir(pr["run_dir"]) if os.path.isdir(os.path.join(pr["run_dir"], d))]
    if len(sub) != 1:
        die("%s: expected one output directory under %s, found %s" % (name, pr["run_dir"], sub))
    rows = rv.read_csv(os.path.join(pr["run_dir"], sub[0], "request_metrics.csv"))
    rows.sort(key=lambda r: int(r["Request Id"]))
    if len(rows) != len(base):
        die("%s: at %r/s Vidur simulated %d requests, the list has %d" % (name, q, len(rows),
                                                                          len(base)))
    for i, (r, b) in enumerate(zip(rows, base)):
        if int(r["Request Id"]) != i or int(float(r["request_num_prefill_tokens"])) != b[1] \
                or int(float(r["request_num_decode_tokens"])) != b[2]:
            die("%s: at %r/s request %d: simulated %s, listed %s" % (name, q, i, r, b))
        # Vidur records each request's interval since the previous arrival (none for the first).
        if i > 0 and abs(float(r["request_inter_arrival_delay"])
                         - (reqs_q[i][0] - reqs_q[i - 1][0])) > 1e-9:
            die("%s: at %r/s request %d: simulated interval %s s, listed %r s"
                % (name, q, i, r["request_inter_arrival_delay"], reqs_q[i][0] - reqs_q[i - 1][0]))
    config = json.load(open(os.path.join(pr["run_dir"], sub[0], "config.json")))
    config.get("metrics_config", {}).pop("output_dir", None)  # holds a timestamp
    delays = [float(r["request_scheduling_delay"]) for r in rows]
    return dev, config, {k: rv.pct(delays, p) for k, p in (("p50", 50), ("p90", 90),
                                                           ("p99", 99))}


def record(name, res, tree, work, bindir, base_text):
    base = parse_requests(base_text)
    probes, worst, config = [], 0.0, None
    for i, pr in enumerate(res["probes"]):
        reqs = parse_requests(dump_requests(tree, bindir, pr["command"], pr["qps"], work,
                                            "%s_%d" % (name, i)))
        dev, cfg, delays = check_probe_requests(name, pr, reqs, base)
        worst = max(worst, dev)
        config = config or cfg
        probes.append({"qps": pr["qps"], "scheduling_delay_p99_s": pr["scheduling_delay"],
                       "under_sla": pr["under_sla"],
                       "scheduling_delay_s": delays,  # p50/p90/p99 from request_metrics.csv
                       "command": rv.portable(pr["command"], tree, work),
                       "wall_s": pr["wall_s"]})
    return {
        "job": name, "vidur_commit": rv.VIDUR_COMMIT,
        "what": "Vidur's CapacitySearch.search() (capacity_search.py) on Vidur's JobConfig; "
                "bench/vidur/capacity_vidur.py",
        "job_config": dict(JOB, scheduler=JOBS[name]), "job_key": res["job_key"],
        "search_args": SEARCH, "predictor_flags_added": PREDICTOR, "flags_dropped": DROPPED,
        "max_qps_under_sla": res["result"]["max_qps_under_sla"],
        "probes": probes,
        "arrivals_vs_rate_1_max_abs_s": worst,
        "vidur_config": rv.portable(config, tree, work),
        "cwd": "{TREE} (Vidur's tree, extracted from its git directory)",
        "env": {"PYTHONPATH": "bench/vidur/shims", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1",
                "PATH": "python: Debian's python3 first"},
        "wall_s_search": res["process_wall_s"],
    }


COMPARED = ("job_config", "job_key", "search_args", "predictor_flags_added", "flags_dropped",
            "forests_identical_to_kept_predictions",
            "max_qps_under_sla", "vidur_config")
PROBE_COMPARED = ("qps", "scheduling_delay_p99_s", "under_sla", "scheduling_delay_s", "command")


def forests_as_kept(cache_dir, work):
    """Whether this run's forests predict exactly what tests/llm/vidur_expected/predictions
    keeps (run_vidur.py's forests, which compare.py and capacity_compare.py feed to clustersim):
    the cache's prediction tables written as compare.py writes them, compared file by file."""
    import compare
    kept, compare.PREDICTIONS = compare.PREDICTIONS, os.path.join(work, "predictions")
    try:
        compare.save_predictions(cache_dir)
    finally:
        mine, compare.PREDICTIONS = compare.PREDICTIONS, kept
    names = sorted(os.listdir(kept))
    return names == sorted(os.listdir(mine)) and all(
        open(os.path.join(kept, n)).read() == open(os.path.join(mine, n)).read() for n in names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vidur-git", default=os.environ.get("CS_VIDUR_GIT"))
    ap.add_argument("--jobs", default=",".join(JOBS))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--keep-tmp", metavar="DIR", help="work in DIR and keep it")
    a = ap.parse_args()
    if not a.vidur_git:
        die("no Vidur git directory: pass --vidur-git DIR or set CS_VIDUR_GIT")
    jobs = [j for j in a.jobs.split(",") if j]
    for j in jobs:
        if j not in JOBS:
            die("--jobs: unknown job %r (expected some of %s)" % (j, ",".join(JOBS)))
    work = a.keep_tmp or tempfile.mkdtemp(prefix="capacity_vidur.")
    os.makedirs(work, exist_ok=True)
    work = os.path.realpath(work)
    tree = os.path.join(work, "vidur")
    for d in ("out", "warmup", "scratch"):
        shutil.rmtree(os.path.join(work, d), ignore_errors=True)
    os.makedirs(tree, exist_ok=True)
    bindir = os.path.join(work, "bin")
    os.makedirs(bindir, exist_ok=True)
    if not os.path.exists(os.path.join(bindir, "python")):
        os.symlink(rv.PYTHON, os.path.join(bindir, "python"))
    try:
        rv.extract(a.vidur_git, tree)
        rv.write_attention(tree)
        shutil.copyfile(LENGTHS, os.path.join(tree, LENGTHS_IN_TREE))
        cache_dir = os.path.join(work, "cache")
        # Vidur's ConfigExplorer warms the cache first (_warmup_cache: one iteration of each
        # model's search); here one iteration of the first job in its own output directory,
        # so that no probe of the searches reuses the warm-up's run (Vidur would, by run dir).
        cold = None
        if not (os.path.isdir(cache_dir) and os.listdir(cache_dir)):
            t0 = time.perf_counter()
            os.makedirs(os.path.join(work, "warmup"), exist_ok=True)
            run_search(jobs[0], tree, os.path.join(work, "warmup"), cache_dir, bindir,
                       dict(SEARCH, max_iterations=1))
            cold = time.perf_counter() - t0
            print("warm-up (training the forests + one probe of %s): %.1f s" % (jobs[0], cold))
        else:
            print("reusing the forests cached in %s" % cache_dir)
        same = forests_as_kept(cache_dir, work)
        print("forests: predictions %s the kept ones (tests/llm/vidur_expected/predictions)"
              % ("identical to" if same else "DIFFER FROM"))
        failures, base_text = 0, None
        for name in jobs:
            res = run_search(name, tree, work, cache_dir, bindir, SEARCH)
            # The rate-1 list, for the flags of this job's first probe.
            text = dump_requests(tree, bindir, res["probes"][0]["command"], 1.0, work,
                                 name + "_rate1")
            if base_text is not None and text != base_text:
                die("%s: the request list at 1/s differs from the first job's" % name)
            base_text = text
            rec = record(name, res, tree, work, bindir, base_text)
            rec["forests_identical_to_kept_predictions"] = same
            print("%s: capacity %r/s, %d probes, %.1f s" % (name, rec["max_qps_under_sla"],
                                                         len(rec["probes"]),
                                                         rec["wall_s_search"]))
            for p in rec["probes"]:
                print("  %-10.6g delay p99 %9.4f s  %s  (%.1f s)" % (
                    p["qps"], p["scheduling_delay_p99_s"], "pass" if p["under_sla"] else "FAIL",
                    p["wall_s"]))
            path = os.path.join(EXPECTED, name + ".json")
            if a.check:
                kept = json.load(open(path))
                for k in COMPARED:
                    if kept[k] != rec[k]:
                        failures += 1
                        print("  DIFFERS: %s.json %s" % (name, k))
                if len(kept["probes"]) != len(rec["probes"]):
                    failures += 1
                    print("  DIFFERS: %s.json: %d probes kept, %d now"
                          % (name, len(kept["probes"]), len(rec["probes"])))
                for i, (x, y) in enumerate(zip(kept["probes"], rec["probes"])):
                    for k in PROBE_COMPARED:
                        if x[k] != y[k]:
                            failures += 1
                            print("  DIFFERS: %s.json probes[%d].%s: kept %r, now %r"
                                  % (name, i, k, x[k], y[k]))
                continue
            os.makedirs(EXPECTED, exist_ok=True)
            with open(path, "w") as f:
                json.dump(rec, f, indent=1, sort_keys=True)
                f.write("\n")
        req_path = os.path.join(EXPECTED, "requests.csv")
        if a.check:
            if open(req_path).read() != base_text:
                failures += 1
                print("  DIFFERS: requests.csv")
            print("check: %s" % ("identical" if failures == 0 else "%d differences" % failures))
            return 1 if failures else 0
        with open(req_path, "w") as f:
            f.write(base_text)
        if cold is not None:
            with open(os.path.join(EXPECTED, "training.json"), "w") as f:
                json.dump({"warmup_s": round(cold, 1), "warmup_job": jobs[0],
                           "machine": "2 shared cores, Debian 12, Python 3.11, "
                                      "scikit-learn 1.2.1"}, f, indent=1, sort_keys=True)
                f.write("\n")
        return 0
    finally:
        if not a.keep_tmp:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
