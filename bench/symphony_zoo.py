#!/usr/bin/env python3
"""Scheduler speed on Symphony's model zoo: 64 A100 GPUs, all 37 A100 models of
data/profiles/symphony_linear.json (each with its SLO), Poisson arrivals of
equal rate, Symphony's deferred dispatch with its default delays. First finds
the goodput with `clustersim search` (short probes), then simulates 60 s at
that load and prints the engine's figures: events per second and simulated
requests per second of wall time. Compare builds side by side on one machine.

Usage: bench/symphony_zoo.py [--clustersim PATH] [--duration S] [--repeat N]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clustersim", default=os.path.join(ROOT, "build-release", "src", "cli",
                                                         "clustersim"))
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    profile = os.path.join(ROOT, "data", "profiles", "symphony_linear.json")
    with open(profile) as f:
        zoo = [m for m in json.load(f)["models"] if m["gpu"] == "a100"]
    with tempfile.TemporaryDirectory() as tmp:
        sc_path = os.path.join(tmp, "zoo.json")
        scenario = {"seed": 1, "profiles": [profile], "cluster": {"gpus": 64, "gpu_type": "a100"},
                    "dispatch": {"policy": "symphony"},
                    "clients": [{"model": m["model"], "rate": 100, "slo_ms": m["slo_ms"],
                                 "duration_s": 5, "warmup_s": 1} for m in zoo]}
        with open(sc_path, "w") as f:
            json.dump(scenario, f)
        out = subprocess.run([args.clustersim, "search", sc_path, "--json", "--tolerance", "0.02",
                              "--max-multiplier", "64"], check=True, capture_output=True, text=True)
        found = json.loads(out.stdout)
        k = found["multiplier"]
        print(f"{len(zoo)} models on 64 A100s: goodput {found['goodput_rps']:.0f} req/s "
              f"(rate multiplier {k:g}, {len(found['probes'])} probes)")
        sets = []
        for i in range(len(zoo)):
            sets += ["--set", f"clients[{i}].rate={100 * k}",
                     "--set", f"clients[{i}].duration_s={args.duration}"]
        best = 0
        for r in range(args.repeat):
            out = subprocess.run([args.clustersim, "run", sc_path] + sets, check=True,
                                 capture_output=True, text=True).stdout
            line = next(l for l in out.splitlines() if l.startswith("engine:"))
            print(f"run {r + 1}: {line}")
            rps = int(re.search(r"(\d+) simulated requests/s", line).group(1))
            best = max(best, rps)
        print(f"best: {best} simulated requests/s at the goodput load")
    return 0


if __name__ == "__main__":
    sys.exit(main())
