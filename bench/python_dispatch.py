#!/usr/bin/env python3
"""The cost of a dispatch policy written in Python, per request: the same
join-the-shortest-queue algorithm in Python (examples/python/jsq.py) and in C
(examples/extending/jsq.c as a plug-in) on the same scenario, side by side,
several rounds; prints each one's wall time per simulated request and the
ratio. Both give the same results (checked here too), so the difference is
the cost of calling Python: about three callbacks into Python per request
(the arrival, the batch's timer or its send, the services it calls back).

Usage: PYTHONPATH=build/python bench/python_dispatch.py [--plugin build/examples/jsq.so]
       [--rounds R] [--duration S]
"""
import argparse
import importlib.util
import os
import sys
import time

import clustersim as cs

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plugin", default=os.path.join(ROOT, "build", "examples", "jsq.so"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=60.0)
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("jsq", os.path.join(ROOT, "examples", "python",
                                                                      "jsq.py"))
    jsq = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(jsq)
    reg = jsq.registry().load_plugin(a.plugin)
    print(f"clustersim {cs.__version__}; quickstart models at {a.duration:g} s, dispatch "
          f"max_batch 8, max_wait_ms 5")
    for r in range(a.rounds):
        out = {}
        for policy in ("jsq", "py-jsq"):
            with cs.load(os.path.join(ROOT, "examples", "quickstart.json")) as sc:
                sc.use(reg).unset("placement").set("dispatch", {"policy": policy})
                for i in range(3):
                    sc.set(f"clients[{i}].duration_s", a.duration)
                t = time.perf_counter()
                res = sc.run(seed=1)
                wall = time.perf_counter() - t
            n = res.total.requests.generated
            out[policy] = (wall, n, res.summary["models"])
        (wc, n, mc), (wp, _, mp) = out["jsq"], out["py-jsq"]
        same = "same results" if mc == mp else "RESULTS DIFFER"
        print(f"round {r + 1}: {n} requests: C {wc / n * 1e9:7.0f} ns/request, Python "
              f"{wp / n * 1e9:7.0f} ns/request, ratio {wp / wc:.1f} ({same})")
        if mc != mp:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
