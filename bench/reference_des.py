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

Usage: bench/reference_des.py [--requests N] [--clustersim PATH]
       (default 1,000,000 requests; build-release/src/cli/clustersim)
"""
import argparse
import heapq
import json
import math
import os
import random
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=1000000)
    ap.add_argument("--clustersim", default=os.path.join(ROOT, "build-release", "src", "cli",
                                                         "clustersim"))
    args = ap.parse_args()
    # Python, whole process (interpreter start and profile reading included).
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-c",
                          "import sys; sys.path.insert(0, %r); import reference_des as r; "
                          "v = r.simulate(%d, r.latency_table()); "
                          "print(len(v), r.rank(v, 50) * 1e3, r.rank(v, 99) * 1e3)"
                          % (HERE, args.requests)],
                         check=True, capture_output=True, text=True).stdout.split()
    py_wall = time.monotonic() - t0
    # clustersim, whole process, on the same workload.
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
    t0 = time.monotonic()
    res = subprocess.run([args.clustersim, "run", f.name, "--json"], check=True,
                         capture_output=True, text=True).stdout
    cs_wall = time.monotonic() - t0
    os.unlink(f.name)
    lat = json.loads(res)["models"][0]["latency_ms"]
    print(f"requests: {args.requests:,}")
    print(f"python heapq: {py_wall:.2f} s wall, p50 {float(out[1]):.2f} ms, p99 {float(out[2]):.2f} ms")
    print(f"clustersim:   {cs_wall:.2f} s wall, p50 {lat['p50']:.2f} ms, p99 {lat['p99']:.2f} ms")
    print(f"ratio: clustersim is {py_wall / cs_wall:.1f} times faster, whole process")


if __name__ == "__main__":
    main()
