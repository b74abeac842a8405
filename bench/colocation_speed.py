#!/usr/bin/env python3
"""Cost of co-location in the engine: 8 GPUs with 4 co-located workers each
(MPS, processor sharing with interference, all busy) against the same load on
32 GPUs with one worker each, simulated side by side. Prints simulated requests
per second of wall time for both and their ratio (the target: co-located at
least a quarter of the isolated figure).

Usage: bench/colocation_speed.py [--clustersim PATH] [--duration S] [--repeat N]
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
# Four V100 models with small memory needs; batch 8; rates keep each worker busy.
MODELS = [("resnet50", 8), ("densenet121", 8), ("mobilenet_v2", 8), ("inception_v3", 8)]


def scenario(colocated, duration):
    replicas, clients = [], []
    for i, (m, b) in enumerate(MODELS):
        for g in range(8):
            gpu = g if colocated else 8 * i + g
            replicas.append({"model": m, "gpu": gpu, "batch": b})
        clients.append({"model": m, "rate": 2000, "slo_ms": 500, "duration_s": duration})
    return {"seed": 1, "profiles": [os.path.join(ROOT, "data", "profiles", "v100_thesis.json")],
            "cluster": {"gpus": 8 if colocated else 32, "gpu_type": "v100", "mps": colocated,
                        "interference": os.path.join(ROOT, "data", "profiles", "igniter_v100.json")},
            "dispatch": {"policy": "router", "max_wait_ms": 20},
            "placement": {"policy": "manual", "replicas": replicas},
            "clients": clients}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clustersim", default=os.path.join(ROOT, "build-release", "src", "cli",
                                                         "clustersim"))
    ap.add_argument("--duration", type=float, default=600.0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    best = {}
    with tempfile.TemporaryDirectory() as tmp:
        for colocated in (True, False):
            path = os.path.join(tmp, f"{colocated}.json")
            with open(path, "w") as f:
                json.dump(scenario(colocated, args.duration), f)
            name = "co-located (8 GPUs x 4 workers, MPS)" if colocated else "isolated (32 GPUs x 1)"
            for r in range(args.repeat):
                out = subprocess.run([args.clustersim, "run", path], check=True,
                                     capture_output=True, text=True).stdout
                line = next(l for l in out.splitlines() if l.startswith("engine:"))
                busy = next(l for l in out.splitlines() if l.startswith("gpu busy:"))
                rps = int(re.search(r"(\d+) simulated requests/s", line).group(1))
                best[colocated] = max(best.get(colocated, 0), rps)
                print(f"{name}, run {r + 1}: {line}")
            print(f"  {busy[:100]}...")
    ratio = best[True] / best[False]
    print(f"co-located / isolated simulated requests per second: {ratio:.2f} (target >= 0.25)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
