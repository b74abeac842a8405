#!/usr/bin/env python3
"""Independent checks of `clustersim sweep` outputs, for tests/cli/test_cli_sweep.sh.

  check_sweep.py stats RUNS_CSV AGGREGATE_CSV
      Recomputes every aggregate row from runs.csv with Python's statistics
      module (mean, stdev with n - 1) and Student's t from a printed table,
      and compares: same groups in the same order, same n and n_nan, values
      within 1e-4 relative (the table's t has 4 decimals).

  check_sweep.py vs-run RUNS_CSV RUN_ID SUMMARY_JSON
      The rows of run RUN_ID equal the summary.json of `clustersim run` of the
      same point and seed: every metric (NaN where the summary has null), and
      the warning codes. runs.csv holds every double exactly (%.17g); cJSON
      writes summary.json with 15 significant digits when they read back
      within an ulp or so, hence a relative tolerance of 1e-15.

Exit status 0 when the check holds, 1 with a message on stdout otherwise.
"""
import csv
import json
import math
import statistics
import sys

# t(0.975, df), from a printed table of Student's t.
T975 = {1: 12.7062, 2: 4.3027, 3: 3.1824, 4: 2.7764, 5: 2.5706, 9: 2.2622}

# runs.csv metric -> path in a summary.json model object.
SUMMARY = {
    "slo_ms": ("slo_ms",), "offered_rps": ("offered_rps",), "planned_rps": ("planned_rps",),
    "submitted_rps": ("submitted_rps",), "throughput_rps": ("throughput_rps",),
    "goodput_rps": ("goodput_rps",), "expected_goodput_rps": ("expected_goodput_rps",),
    "bad_rate": ("bad_rate",),
    "generated": ("requests", "generated"), "measured": ("requests", "measured"),
    "completed": ("requests", "completed"), "good": ("requests", "good"),
    "late": ("requests", "late"), "dropped": ("requests", "dropped"),
    "unserved": ("requests", "unserved"), "failed": ("requests", "failed"),
    "latency_p50_ms": ("latency_ms", "p50"), "latency_p90_ms": ("latency_ms", "p90"),
    "latency_p95_ms": ("latency_ms", "p95"), "latency_p99_ms": ("latency_ms", "p99"),
    "latency_max_ms": ("latency_ms", "max"), "latency_mean_ms": ("latency_ms", "mean"),
    "batches": ("batches", "count"), "mean_batch": ("batches", "mean_size"),
    "drain_s": ("drain_s",),
}


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def fail(msg):
    print(msg)
    sys.exit(1)


def stats(runs_path, agg_path):
    runs = read(runs_path)
    agg = read(agg_path)
    header = list(runs[0].keys())
    axes = header[2:header.index("seed")]
    metrics = header[header.index("error") + 1:header.index("warnings")]
    groups = {}
    for r in runs:
        if r["status"] != "ok":
            continue
        key = (r["variant"],) + tuple(r[a] for a in axes) + (r["model"],)
        groups.setdefault(key, []).append(r)
    expect = []
    for key, rows in groups.items():
        for m in metrics:
            vals = [float(r[m]) for r in rows]
            good = [v for v in vals if not math.isnan(v)]
            n = len(good)
            mean = statistics.mean(good) if n else None
            sd = statistics.stdev(good) if n > 1 else None
            ci = T975[n - 1] * sd / math.sqrt(n) if n > 1 else None
            expect.append((key, m, n, len(vals) - n, mean, sd, ci))
    if len(expect) != len(agg):
        fail(f"{agg_path}: {len(agg)} rows, expected {len(expect)}")
    for (key, m, n, n_nan, mean, sd, ci), a in zip(expect, agg):
        got_key = (a["variant"],) + tuple(a[x] for x in axes) + (a["model"],)
        where = f"{agg_path}: {got_key} {a['metric']}"
        if got_key != key or a["metric"] != m:
            fail(f"{where}: expected group {key} {m}")
        if int(a["n"]) != n or int(a["n_nan"]) != n_nan:
            fail(f"{where}: n {a['n']} n_nan {a['n_nan']}, expected {n} {n_nan}")
        for name, want in (("mean", mean), ("sd", sd), ("ci95", ci)):
            if want is None:
                if a[name] != "":
                    fail(f"{where}: {name} {a[name]}, expected empty")
                continue
            got = float(a[name])
            if abs(got - want) > 1e-4 * abs(want) + 1e-12:
                fail(f"{where}: {name} {got}, expected {want}")
    print(f"{len(agg)} aggregate rows recomputed")


def batch_percentile(sizes, pct):
    """Nearest rank of a {"size": count} map, by batches: the smallest size b
    whose batches of size <= b number ceil(pct/100 n); NaN without a batch."""
    items = sorted((int(k), v) for k, v in sizes.items())
    rank = math.ceil(pct * sum(v for _, v in items) / 100)
    cum = 0
    for k, v in items:
        cum += v
        if cum >= rank:
            return float(k)
    return float("nan")


def vs_run(runs_path, run_id, summary_path):
    rows = [r for r in read(runs_path) if r["run_id"] == run_id]
    d = json.load(open(summary_path))
    models = d["models"] + [d["total"]]
    if [r["model"] for r in rows] != [m["model"] for m in models]:
        fail(f"run {run_id}: models {[r['model'] for r in rows]}")
    for r, m in zip(rows, models):
        if r["status"] != "ok" or r["seed"] != str(d["seed"]):
            fail(f"run {run_id} {r['model']}: status {r['status']} seed {r['seed']}")
        for metric, path in SUMMARY.items():
            v = m
            for p in path:
                v = v[p]
            got = float(r[metric])
            if v is None:
                if not math.isnan(got):
                    fail(f"run {run_id} {r['model']} {metric}: {got}, summary null")
            elif abs(got - float(v)) > 1e-15 * abs(float(v)):
                fail(f"run {run_id} {r['model']} {metric}: {r[metric]}, summary {v}")
        # Cost: the cluster's price on every row; goodput per dollar of the
        # row's goodput, computed here from the summary's own figures.
        price = d["cost"]["price_per_hour"]
        want = {"cost_per_hour": price,
                "goodput_per_dollar": m["goodput_rps"] * 3600 / price if price else None}
        for metric, v in want.items():
            got = float(r[metric])
            if v is None:
                if not math.isnan(got):
                    fail(f"run {run_id} {r['model']} {metric}: {got}, expected no value")
            elif abs(got - v) > 1e-12 * abs(v):
                fail(f"run {run_id} {r['model']} {metric}: {r[metric]}, expected {v}")
        # The batch percentiles, from batches.sizes (the total: every model's, pooled).
        sizes = {}
        for x in (d["models"] if m["model"] == "total" else [m]):
            for k, v in x["batches"]["sizes"].items():
                sizes[k] = sizes.get(k, 0) + v
        for metric, pct in (("median_batch", 50), ("p90_batch", 90)):
            want, got = batch_percentile(sizes, pct), float(r[metric])
            if not (want == got or (math.isnan(want) and math.isnan(got))):
                fail(f"run {run_id} {r['model']} {metric}: {r[metric]}, summary's sizes give {want}")
        codes = []
        for w in d["warnings"]:
            if (m["model"] == "total" or w.get("model") == m["model"]) and w["code"] not in codes:
                codes.append(w["code"])
        if r["warnings"] != ";".join(codes):
            fail(f"run {run_id} {r['model']} warnings {r['warnings']!r}, summary {codes}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "stats":
        stats(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "vs-run":
        vs_run(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
