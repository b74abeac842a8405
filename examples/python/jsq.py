#!/usr/bin/env python3
"""A dispatch policy in Python: join the shortest queue, the algorithm of
examples/extending/jsq.c line for line (one open batch per model; it leaves
at max_batch requests or max_wait_ms after its first, for the GPU with the
fewest batches in transfer, queued or running, the lowest id on a tie), so
that the two give the same results to the last digit (tests/python checks it).

Run as a program, it compares the policy with the built-in Symphony on
the quickstart's models over five seeds, mean and 95 % confidence interval
of the goodput, through a sweep (common random numbers: both policies see the
same arrivals for each seed):

    PYTHONPATH=build/python python3 examples/python/jsq.py
"""
import os
import sys

import clustersim


class JoinShortestQueue(clustersim.DispatchPolicy):
    name = "py-jsq"
    description = "join the shortest queue (Python): per-model batches to the GPU with the fewest"

    @staticmethod
    def parse(params):
        params.doc("max_batch", "largest batch sent to a GPU")
        params.doc("max_wait_ms", "an open batch leaves this long after its first request")
        return (params.int("max_batch", default=8, min=1, max=4096),
                params.double("max_wait_ms", default=5.0, min=0.0, max=1e6))

    def __init__(self, engine, params):
        super().__init__(engine, params)
        self.max_batch, max_wait_ms = params
        self.wait_ns = int(max_wait_ms * 1e6)
        self.open = [None] * engine.n_models
        self.timer = [0] * engine.n_models

    def shortest_queue(self):
        e = self.engine
        best, best_len = 0, None
        for g in range(e.n_gpus):
            n = e.gpu_load(g)
            if best_len is None or n < best_len:
                best, best_len = g, n
        return best

    def send_open(self, m):
        b, self.open[m] = self.open[m], None
        self.engine.cancel(self.timer[m])
        self.timer[m] = 0
        self.engine.send_gpu(b, self.shortest_queue())

    def on_request(self, m, request):
        e = self.engine
        if self.open[m] is None:
            self.open[m] = e.batch(m, self.max_batch)
            self.timer[m] = e.timer(e.now + self.wait_ns, m)
        self.open[m].add(request)
        if len(self.open[m]) >= self.max_batch:
            self.send_open(m)

    def on_timer(self, m):
        self.timer[m] = 0
        self.send_open(m)


def registry():
    return clustersim.Registry().add_dispatch(JoinShortestQueue)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    exp = {"base": os.path.join(here, "..", "quickstart.json"),
           "set": {"clients[*].duration_s": 30},
           "variants": [{"name": "py-jsq", "set": {"dispatch": {"policy": "py-jsq", "max_batch": 16}},
                         "unset": ["placement"]},
                        {"name": "symphony", "set": {"dispatch": {"policy": "symphony"}},
                         "unset": ["placement"]}],
           "seeds": {"first": 1, "count": 5}}
    with clustersim.Experiment.from_dict(exp) as e:
        res = e.use(registry()).sweep()
    table = res.to_pandas("aggregate")
    rows = table.to_dict("records") if hasattr(table, "to_dict") else table
    print("total goodput (req/s) over 5 seeds: mean ± 95 % CI half-width")
    for r in rows:
        if r["model"] == "total" and r["metric"] == "goodput_rps":
            print(f"  {r['variant']:10s} {r['mean']:8.1f} ± {r['ci95']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
