#!/usr/bin/env python3
"""Paired gain of one variant of a sweep over the best of the others.

For every point of the sweep's axes, takes the variant given (e.g.
"search") and the other variant with the highest mean of the metric there,
and prints the mean of their per-seed differences (the seeds pair the runs:
same arrivals) with its 95 % confidence interval (Student's t), and the
relative gain. Reads DIR/runs.csv as `clustersim sweep -o DIR` writes it,
the "total" rows.

Usage: paired_gain.py SWEEPDIR VARIANT [--metric goodput_rps] [--exclude V,...]
"""
import argparse
import csv
import math
import statistics
import sys
from collections import defaultdict

# Two-sided 95 % quantiles of Student's t by degrees of freedom.
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262, 10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}


def t95(df):
    keys = sorted(k for k in T95 if k <= df)
    return T95[keys[-1]] if keys else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweepdir")
    ap.add_argument("variant")
    ap.add_argument("--metric", default="goodput_rps")
    ap.add_argument("--exclude", default="", help="variants not to compare against")
    a = ap.parse_args()
    excluded = set(x for x in a.exclude.split(",") if x)
    try:
        rows = list(csv.DictReader(open(f"{a.sweepdir}/runs.csv")))
    except OSError as e:
        print(f"paired_gain.py: {a.sweepdir}/runs.csv: {e.strerror}", file=sys.stderr)
        return 2
    if not rows:
        print(f"paired_gain.py: {a.sweepdir}/runs.csv: no rows", file=sys.stderr)
        return 2
    head = list(rows[0].keys())
    axes = head[head.index("variant") + 1:head.index("seed")]
    if a.metric not in head:
        print(f"paired_gain.py: no metric {a.metric!r} in runs.csv", file=sys.stderr)
        return 2
    data = defaultdict(lambda: defaultdict(dict))  # point -> variant -> seed -> value
    for r in rows:
        if r["model"] != "total" or r["status"] != "ok":
            continue
        point = tuple(r[x] for x in axes)
        data[point][r["variant"]][r["seed"]] = float(r[a.metric])
    if not any(a.variant in v for v in data.values()):
        print(f"paired_gain.py: no variant {a.variant!r} in runs.csv", file=sys.stderr)
        return 2
    print(",".join(axes + ["best_other", "other_mean", a.variant + "_mean", "gain_mean",
                           "gain_ci95", "gain_pct", "seeds"]))
    for point in sorted(data, key=lambda p: [float(x) if x.replace(".", "").isdigit() else x
                                             for x in p]):
        vs = data[point]
        if a.variant not in vs:
            continue
        others = {v: s for v, s in vs.items() if v != a.variant and v not in excluded}
        if not others:
            continue
        best = max(others, key=lambda v: statistics.mean(others[v].values()))
        seeds = sorted(set(vs[a.variant]) & set(others[best]))
        d = [vs[a.variant][s] - others[best][s] for s in seeds]
        mean = statistics.mean(d)
        ci = t95(len(d) - 1) * statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else float("nan")
        om = statistics.mean(others[best][s] for s in seeds)
        sm = statistics.mean(vs[a.variant][s] for s in seeds)
        pct = 100.0 * mean / om if om else float("nan")
        print(",".join(list(point) + [best, f"{om:.1f}", f"{sm:.1f}", f"{mean:.1f}", f"{ci:.1f}",
                                      f"{pct:.1f}", str(len(d))]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
