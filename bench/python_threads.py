#!/usr/bin/env python3
"""How much Python threads speed up simulations from the Python package
(docs/python.md): the same runs (the quickstart scenario at --duration s,
seeds 1..N) one after another and in N threads, side by side, several rounds; prints
each round's times and the ratio serial / threaded. The package releases the
GIL during each run, so on a machine with N free cores the ratio approaches N.

Usage: PYTHONPATH=build/python bench/python_threads.py [--threads N] [--rounds R] [--duration S]
"""
import argparse
import os
import sys
import threading
import time

import clustersim as cs

HERE = os.path.dirname(os.path.abspath(__file__))


def scenarios(n, duration):
    out = []
    for _ in range(n):
        sc = cs.load(os.path.join(HERE, "..", "examples", "quickstart.json"))
        for i in range(3):
            sc.set(f"clients[{i}].duration_s", duration)
        out.append(sc)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=3600.0)
    a = ap.parse_args()
    scs = scenarios(a.threads, a.duration)
    print(f"clustersim {cs.__version__} ({cs.library_path}), {a.threads} runs, "
          f"{os.cpu_count()} CPUs")
    for r in range(a.rounds):
        t = time.perf_counter()
        serial = [sc.run(seed=i + 1).to_json() for i, sc in enumerate(scs)]
        t_serial = time.perf_counter() - t
        threaded = [None] * a.threads

        def go(i):
            threaded[i] = scs[i].run(seed=i + 1).to_json()
        ths = [threading.Thread(target=go, args=(i,)) for i in range(a.threads)]
        t = time.perf_counter()
        for th in ths:
            th.start()
        for th in ths:
            th.join()
        t_threads = time.perf_counter() - t
        same = "same results" if threaded == serial else "RESULTS DIFFER"
        print(f"round {r + 1}: serial {t_serial:.3f} s, {a.threads} threads {t_threads:.3f} s, "
              f"ratio {t_serial / t_threads:.2f} ({same})")
        if threaded != serial:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
