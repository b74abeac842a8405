#!/usr/bin/env python3
"""Cost per request as runs grow: bench/engine_suite.py's workload a (one
model, batch 8, router, zero network, 4 V100s at 3,000 req/s) for 1 M, 10 M
and 100 M requests. Prints, for each, the engine's simulated requests per
second, the whole command's wall time, its peak resident memory and that
memory per request (docs/performance.md).

Usage: bench/scale.py [--build DIR] [--requests 1000000,10000000,100000000]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine_suite  # noqa: E402  (the workloads and the runner)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(engine_suite.ROOT, "build-release"))
    ap.add_argument("--requests", default="1000000,10000000,100000000")
    args = ap.parse_args()
    if not os.path.isdir(args.build):
        subprocess.run(["meson", "setup", args.build, engine_suite.ROOT, "--buildtype=release"],
                       check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", args.build, "src/cli/clustersim"], check=True,
                   stdout=subprocess.DEVNULL)
    binary = os.path.join(args.build, "src", "cli", "clustersim")
    print("| requests | simulated requests/s | command wall s | peak RSS MB | RSS bytes per request |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for n in (int(x) for x in args.requests.split(",")):
        s = engine_suite.scenario_a()
        s["clients"][0].pop("duration_s")
        s["clients"][0]["requests"] = n
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(s, f)
        _, rq, wall, rss = engine_suite.run(binary, f.name)
        os.unlink(f.name)
        print(f"| {n:,} | {rq:,} | {wall:.2f} | {rss:.0f} | {rss * 1048576 / n:.1f} |", flush=True)


if __name__ == "__main__":
    main()
