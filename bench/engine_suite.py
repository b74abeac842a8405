#!/usr/bin/env python3
"""Engine speed and memory on five workloads, for one or more builds side by
side (docs/performance.md):

  a  one model (resnet50), batch 8, router, zero network, 4 V100s, 3 M requests
  b  bench/engine_1h.json: 5 models, batch 16, GCP network, one hour, 18 M requests
  c  bench/maf2019_8h.json: the MAF 2019 excerpt, 8 hours, 16 V100s, 3 M requests
  d  MPS co-location: 4 models co-located on each of 8 V100s (processor sharing
     with interference), 4 M requests
  e  Symphony's deferred batch scheduling on 64 A100s (ResNet50, 150,000 req/s,
     10 s), 1.5 M requests
  f  bench/day_16gpu.json: one simulated day, 16 V100s, 5 models at 30 req/s
     each (Poisson), 13 M requests, GPUs mostly idle: where time series grow
     with the span, not the requests (issue 32)
  g  bench/maf2019_512gpu_day.json: 512 A100s, 24 models, the whole 8-hour MAF
     2019 excerpt stretched to a simulated day at 16 times its rate, 49 M
     requests, GPUs mostly idle (about a minute a run: not in the default set)

With --with-output each run also writes the output set (--output to a
temporary directory, --force), the time series included, as a user who
wants summary.json runs it.

Each is run REPEAT times per build, alternating builds, and the best run is
printed: events per second, simulated requests per second (both of the
engine's own wall time, as its "engine:" line reports them), the whole
command's wall time and its peak resident memory (both measured by
bench/peak_rss.c, compiled here with cc: from Python the peak would include
the interpreter's own).
Compare ratios of builds run here side by side, not absolute figures from
another machine.

Usage: bench/engine_suite.py [--build DIR]... [--only a,b,...] [--repeat N]
       (default: build-release, configured with --buildtype=release if missing)
"""
import argparse
import atexit
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROFILES = os.path.join(ROOT, "data", "profiles")


def scenario_a():
    return {
        "name": "bench a: one model, batch 8, router, zero network",
        "seed": 1, "profiles": [os.path.join(PROFILES, "v100_thesis.json")], "network": "zero",
        "cluster": {"gpus": 4, "gpu_type": "v100"},
        "dispatch": {"policy": "router", "max_wait_ms": 20},
        "placement": {"policy": "manual", "replicas": [
            {"model": "resnet50", "gpu": g, "batch": 8} for g in range(4)]},
        "clients": [{"model": "resnet50", "rate": 3000, "slo_ms": 200, "duration_s": 1000}],
    }


def scenario_d():
    models = ["resnet50", "densenet121", "mobilenet_v2", "inception_v3"]
    return {
        "name": "bench d: MPS co-location, 4 models on each of 8 GPUs",
        "seed": 1, "profiles": [os.path.join(PROFILES, "v100_thesis.json")], "network": "zero",
        "cluster": {"gpus": 8, "gpu_type": "v100", "mps": True,
                    "interference": os.path.join(PROFILES, "igniter_v100.json")},
        "placement": {"policy": "manual", "replicas": [
            {"model": m, "gpu": g, "batch": 8} for m in models for g in range(8)]},
        "clients": [{"model": m, "rate": 1000, "slo_ms": 500, "duration_s": 1000} for m in models],
    }


def scenario_e():
    with open(os.path.join(ROOT, "examples", "symphony", "fig10.json")) as f:
        s = json.load(f)
    base = os.path.join(ROOT, "examples", "symphony")
    # Paths relative to the example; bare names are shipped profiles.
    s["profiles"] = [os.path.normpath(os.path.join(base, p)) if "/" in p else p
                     for p in s["profiles"]]
    s["name"] = "bench e: Symphony on 64 A100s"
    s["cluster"]["gpus"] = 64
    for c in s["clients"]:
        c["rate"] = c["rate"] * 10
    return s


WORKLOADS = {
    "a": ("one model, batch 8, router", scenario_a),
    "b": ("engine_1h.json", os.path.join(HERE, "engine_1h.json")),
    "c": ("MAF 2019 excerpt, 8 h", os.path.join(HERE, "maf2019_8h.json")),
    "d": ("MPS co-location", scenario_d),
    "e": ("Symphony, 64 GPUs", scenario_e),
    "f": ("day_16gpu.json, one day, 16 GPUs, low load", os.path.join(HERE, "day_16gpu.json")),
    "g": ("maf2019_512gpu_day.json, one day, 512 GPUs, low load",
          os.path.join(HERE, "maf2019_512gpu_day.json")),
}

ENGINE = re.compile(r"^engine: (\d+) events, ([\d.]+) s simulated, ([\d.]+) s wall, "
                    r"(\d+) events/s, (\d+) simulated requests/s", re.M)


_peak_rss = None


def peak_rss_tool():
    """bench/peak_rss.c, compiled once per benchmark process: the runs'
    peak memory and wall time measured apart from Python's (its header says
    why a child of Python cannot be measured from Python)."""
    global _peak_rss
    if _peak_rss is None:
        tool = os.path.join(tempfile.mkdtemp(prefix="cs-peak-rss-"), "peak_rss")
        subprocess.run(shlex.split(os.environ.get("CC", "cc")) +
                       ["-O2", "-std=c11", "-o", tool, os.path.join(HERE, "peak_rss.c")],
                       check=True)
        atexit.register(shutil.rmtree, os.path.dirname(tool), True)
        _peak_rss = tool
    return _peak_rss


def run(binary, path, output=None):
    """One run: (events/s, requests/s, command wall s, peak RSS MB, simulated
    requests: engine wall x requests/s, to the rounding of the engine line).
    With output, the run writes its output set there (--force)."""
    extra = ["--output", output, "--force"] if output else []
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as measured:
        child = subprocess.run([peak_rss_tool(), measured.name, binary, "run", path] + extra,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        fields = measured.read().split()
    m = ENGINE.search(child.stdout)
    if child.returncode != 0 or not m or len(fields) != 2:
        sys.exit(f"engine_suite: {binary} run {path} failed (status {child.returncode})")
    rss_kb, wall = int(fields[0]), float(fields[1])
    return (int(m.group(4)), int(m.group(5)), wall, rss_kb / 1024.0,
            round(float(m.group(3)) * int(m.group(5))))


def build_label(build, builds):
    """The build directory's name, with its parent's when two builds share
    a name (build-release of two trees)."""
    name = os.path.basename(os.path.normpath(build))
    if sum(os.path.basename(os.path.normpath(b)) == name for b in builds) > 1:
        name = os.path.join(os.path.basename(os.path.dirname(os.path.abspath(build))), name)
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", action="append", help="build directory (repeatable)")
    ap.add_argument("--only", default="a,b,c,d,e,f", help="workloads, comma separated (g: opt-in)")
    ap.add_argument("--with-output", action="store_true",
                    help="runs write the output set (time series included) to a temporary directory")
    ap.add_argument("--repeat", type=int, default=int(os.environ.get("REPEAT", "3")))
    args = ap.parse_args()
    builds = args.build or [os.path.join(ROOT, "build-release")]
    for b in builds:
        if not os.path.isdir(b):
            subprocess.run(["meson", "setup", b, ROOT, "--buildtype=release"], check=True,
                           stdout=subprocess.DEVNULL)
        subprocess.run(["ninja", "-C", b, "src/cli/clustersim"], check=True,
                       stdout=subprocess.DEVNULL)
    tmp = tempfile.mkdtemp(prefix="cs-bench-")
    print("| workload | build | events/s | simulated requests/s | ns/request | command wall s "
          "| peak RSS MB |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for key in args.only.split(","):
        label, what = WORKLOADS[key]
        if callable(what):
            path = os.path.join(tmp, f"{key}.json")
            with open(path, "w") as f:
                json.dump(what(), f)
        else:
            path = what
        best = {b: None for b in builds}
        for i in range(args.repeat):
            for b in builds:
                if sys.stderr.isatty():
                    print(f"\r{key}: run {i + 1}/{args.repeat} of {b}   ", end="", file=sys.stderr)
                r = run(os.path.join(b, "src", "cli", "clustersim"), path,
                        os.path.join(tmp, "out") if args.with_output else None)
                if best[b] is None or r[1] > best[b][1]:
                    best[b] = r
        if sys.stderr.isatty():
            print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
        for b in builds:
            ev, rq, wall, rss, _ = best[b]
            # ns per simulated request of the engine's own time (its line).
            print(f"| {key}: {label} | {build_label(b, builds)} | {ev:,} | {rq:,} "
                  f"| {1e9 / rq:.0f} | {wall:.2f} | {rss:.0f} |", flush=True)


if __name__ == "__main__":
    main()
