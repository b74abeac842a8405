#!/usr/bin/env python3
"""The researcher's usual alternative, for a side-by-side speed ratio: a
plain Python discrete-event simulation (heapq) of bench/engine_suite.py's
workload a, written as one would for a paper: one model (resnet50, its
V100 batch latencies from data/profiles/v100_thesis.json), Poisson arrivals,
a router that sends a batch when it holds 8 requests or 20 ms after the
first one to the GPU with the fewest batches, zero network, 4 GPUs each
running one batch at a time (a batch waits in its GPU's queue), a request
object per request and an event per stage as in clustersim's pipeline,
every latency recorded, nearest-rank percentiles at the end.

It then runs clustersim on the same workload (its own scenario, written
here) and prints both whole-process wall times, both p50/p99 (close, not
equal: other random draws, and clustersim's router and GPU model have
details this one leaves out) and the ratio.

The machine's speed moves from minute to minute, and Python's with it, so
with --repeat N each side runs N times, alternating, and the ratio is given
of the best times and of the medians; more than one --clustersim puts
several builds in the same alternation.

Usage: bench/reference_des.py [--requests N] [--repeat N] [--clustersim PATH]...
       (default 1,000,000 requests, one run each; build-release/src/cli/clustersim)
"""
import argparse
import heapq
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RATE, BATCH, MAX_WAIT, GPUS, SLO_MS = 3000.0, 8, 0.020, 4, 200


def latency_table():
    with open(os.path.join(ROOT, "data", "profiles", "v100_thesis.json")) as f:
        prof = json.load(f)
    for m in prof["models"]:
        if m["model"] == "resnet50" and m["gpu"] == "v100":
            return {b["batch"]: b["latency_ms"] / 1000.0 for b in m["batches"]}
    sys.exit("reference_des: no resnet50 on v100 in v100_thesis.json")


class Request:
    def __init__(self, rid, send):
        self.id = rid
        self.send = send
        self.dispatch = None
        self.done = None


def simulate(n_requests, lat):
    """Returns the sorted end-to-end latencies (s). The stages of
    clustersim's pipeline, each an event: arrival, the router's timeout, the
    batch reaching its GPU's queue (zero network: at once), the GPU
    finishing, the result reaching the client."""
    known = sorted(lat)

    def batch_latency(n):  # linear between profiled batch sizes
        lo = max(b for b in known if b <= n)
        hi = min(b for b in known if b >= n)
        if lo == hi:
            return lat[lo]
        return lat[lo] + (lat[hi] - lat[lo]) * (n - lo) / (hi - lo)

    rng = random.Random(1)
    events = []  # (time, seq, kind, payload)
    counter = [0]
    ARRIVAL, TIMEOUT, AT_GPU, GPU_DONE, RESULT = range(5)

    def push(t, kind, payload):
        counter[0] += 1
        heapq.heappush(events, (t, counter[0], kind, payload))

    push(rng.expovariate(RATE), ARRIVAL, 0)
    pending = []                       # requests of the batch being formed
    timer_gen = 0                      # invalidates a timeout of a batch already sent
    queues = [deque() for _ in range(GPUS)]
    busy = [False] * GPUS
    queued = [0] * GPUS                # batches waiting or running per GPU
    latencies = []

    def send(now):
        nonlocal pending
        g = min(range(GPUS), key=lambda k: queued[k])  # least loaded
        queued[g] += 1
        for r in pending:
            r.dispatch = now
        push(now, AT_GPU, (g, pending))
        pending = []

    def start(g, now):
        batch = queues[g].popleft()
        busy[g] = True
        push(now + batch_latency(len(batch)), GPU_DONE, (g, batch))

    while events:
        now, _, kind, payload = heapq.heappop(events)
        if kind == ARRIVAL:
            if payload + 1 < n_requests:
                push(now + rng.expovariate(RATE), ARRIVAL, payload + 1)
            pending.append(Request(payload, now))
            if len(pending) == 1:
                timer_gen += 1
                push(now + MAX_WAIT, TIMEOUT, timer_gen)
            if len(pending) == BATCH:
                timer_gen += 1
                send(now)
        elif kind == TIMEOUT:
            if payload == timer_gen and pending:
                timer_gen += 1
                send(now)
        elif kind == AT_GPU:
            g, batch = payload
            queues[g].append(batch)
            if not busy[g]:
                start(g, now)
        elif kind == GPU_DONE:
            g, batch = payload
            busy[g] = False
            queued[g] -= 1
            push(now, RESULT, batch)
            if queues[g]:
                start(g, now)
        else:
            for r in payload:
                r.done = now
                latencies.append(r.done - r.send)
    latencies.sort()
    return latencies


def rank(sorted_v, p):
    return sorted_v[max(1, math.ceil(p / 100.0 * len(sorted_v))) - 1]


def run_python(n_requests):
    """Whole-process wall time (interpreter start and profile reading
    included), and the output line: count, p50 ms, p99 ms."""
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-c",
                          "import sys; sys.path.insert(0, %r); import reference_des as r; "
                          "v = r.simulate(%d, r.latency_table()); "
                          "print(len(v), r.rank(v, 50) * 1e3, r.rank(v, 99) * 1e3)"
                          % (HERE, n_requests)],
                         check=True, capture_output=True, text=True).stdout.split()
    return time.monotonic() - t0, out


def run_clustersim(binary, scenario_path):
    """Whole-process wall time and the run's latency figures (ms)."""
    t0 = time.monotonic()
    res = subprocess.run([binary, "run", scenario_path, "--json"], check=True,
                         capture_output=True, text=True).stdout
    return time.monotonic() - t0, json.loads(res)["models"][0]["latency_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=1000000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--clustersim", action="append",
                    help="a clustersim binary (repeatable); default "
                         "build-release/src/cli/clustersim")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    binaries = args.clustersim or [os.path.join(ROOT, "build-release", "src", "cli", "clustersim")]
    scen = {
        "name": "reference_des: one model, batch 8, router, zero network", "seed": 1,
        "profiles": [os.path.join(ROOT, "data", "profiles", "v100_thesis.json")],
        "network": "zero", "cluster": {"gpus": GPUS, "gpu_type": "v100"},
        "dispatch": {"policy": "router", "max_wait_ms": MAX_WAIT * 1000},
        "placement": {"policy": "manual", "replicas": [
            {"model": "resnet50", "gpu": g, "batch": BATCH} for g in range(GPUS)]},
        "clients": [{"model": "resnet50", "rate": RATE, "slo_ms": SLO_MS,
                     "requests": args.requests}],
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(scen, f)
    py_walls, cs_walls, cs_lat = [], [[] for _ in binaries], [None] * len(binaries)
    try:
        for _ in range(args.repeat):
            wall, out = run_python(args.requests)
            py_walls.append(wall)
            for i, binary in enumerate(binaries):
                wall, cs_lat[i] = run_clustersim(binary, f.name)
                cs_walls[i].append(wall)
    finally:
        os.unlink(f.name)
    print(f"requests: {args.requests:,}, {args.repeat} run(s) each, alternating")
    print(f"python heapq: best {min(py_walls):.3f} s, median {statistics.median(py_walls):.3f} s "
          f"wall, p50 {float(out[1]):.2f} ms, p99 {float(out[2]):.2f} ms")
    for binary, walls, lat in zip(binaries, cs_walls, cs_lat):
        name = binary if len(binaries) > 1 else "clustersim"
        print(f"{name}: best {min(walls):.3f} s, median {statistics.median(walls):.3f} s wall, "
              f"p50 {lat['p50']:.2f} ms, p99 {lat['p99']:.2f} ms")
        print(f"  ratio: {min(py_walls) / min(walls):.1f} times faster (best against best), "
              f"{statistics.median(py_walls) / statistics.median(walls):.1f} (median against "
              f"median), whole process")


if __name__ == "__main__":
    main()
