#!/usr/bin/env python3
"""Error figures of the GPU model against iGniter's measured pairs
(docs/gpu-model.md, section 4): predicted against measured latency for pairs
left out of the fit, and the CDF of the relative error, before (the model
shipped until 2026-11-26) and now.

Runs `clustersim calibrate --points` and writes into DIR (default
docs/figures) gpu_pairs_scatter and gpu_pairs_error_cdf as .dat, .gp and,
with gnuplot on PATH, .svg.

"now" is what calibrate simulates: `table` (the shipped file) and `lopo`
(the batch_share model fitted without the pair). "before" is the model as
it was: one flat factor per measured ordered pair, the median of measured /
solo over its 125 co-locations (a closed-loop pair runs at solo x factor),
and for an unseen pair the constant fitted without it (calibrate's
`loo-const`, simulated).

Usage: tools/plot_calibration.py [--build DIR] [--out DIR]
"""
import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCATTER = """set terminal svg size 720,560 dynamic font 'sans,12' noenhanced
set output 'gpu_pairs_scatter.svg'
set title 'Pairs left out of the fit: slowdown over the solo latency (iGniter V100)'
set xlabel 'measured latency / solo latency'
set ylabel 'simulated latency / solo latency'
set xrange [1.0:1.25]
set yrange [1.0:1.25]
set size square
set key top left
set grid
plot 'gpu_pairs_scatter.dat' using ($1/$2):($3/$2) with points pt 6 ps 0.5 title 'before: constant 1 + c0', \\
     '' using ($1/$2):($4/$2) with points pt 7 ps 0.4 title 'now: batch_share model', \\
     x with lines lc rgb '#555555' dt 2 title 'simulated = measured'
"""

CDF = """set terminal svg size 720,480 dynamic font 'sans,12' noenhanced
set output 'gpu_pairs_error_cdf.svg'
set title 'Relative error of 750 measured co-located latencies (iGniter V100)'
set xlabel '|simulated - measured| / measured (%)'
set ylabel 'fraction of latencies'
set xrange [0:15]
set yrange [0:1]
set key bottom right
set grid
plot 'gpu_pairs_error_cdf.dat' using 1:2 with lines lw 2 title 'measured pair, before (flat factor)', \\
     '' using 3:4 with lines lw 2 title 'measured pair, now (model x scale)', \\
     '' using 5:6 with lines lw 2 dt 2 title 'unseen pair, before (constant)', \\
     '' using 7:8 with lines lw 2 dt 2 title 'unseen pair, now (batch_share)'
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "figures"))
    args = ap.parse_args()
    binary = os.path.join(args.build, "src", "cli", "clustersim")
    with tempfile.TemporaryDirectory() as tmp:
        points = os.path.join(tmp, "points.csv")
        subprocess.run([binary, "calibrate", "--points", points], check=True,
                       stdout=subprocess.DEVNULL)
        with open(points, newline="") as f:
            rows = list(csv.DictReader(f))
    factor = {}
    for r in rows:
        factor.setdefault((r["victim"], r["aggressor"]), []).append(
            float(r["measured_ms"]) / float(r["solo_ms"]))
    factor = {k: statistics.median(v) for k, v in factor.items()}

    def err(pred, r):
        return abs(pred - float(r["measured_ms"])) / float(r["measured_ms"]) * 100.0

    series = {
        "table_before": [err(float(r["solo_ms"]) * factor[(r["victim"], r["aggressor"])], r)
                         for r in rows],
        "table_now": [err(float(r["table_ms"]), r) for r in rows],
        "unseen_before": [err(float(r["loo-const_ms"]), r) for r in rows],
        "unseen_now": [err(float(r["lopo_ms"]), r) for r in rows],
    }
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "gpu_pairs_scatter.dat"), "w") as f:
        f.write("# measured_ms\tsolo_ms\tbefore_loo_const_ms\tnow_lopo_ms "
                "(clustersim calibrate --points)\n")
        for r in rows:
            f.write(f"{r['measured_ms']}\t{r['solo_ms']}\t{r['loo-const_ms']}\t{r['lopo_ms']}\n")
    sorted_series = {k: sorted(v) for k, v in series.items()}
    n = len(rows)
    with open(os.path.join(args.out, "gpu_pairs_error_cdf.dat"), "w") as f:
        f.write("# per series: error %, fraction <= (table before, table now, unseen before, "
                "unseen now)\n")
        for i in range(n):
            f.write("\t".join(f"{sorted_series[k][i]:.4f}\t{(i + 1) / n:.5f}"
                              for k in ("table_before", "table_now", "unseen_before",
                                        "unseen_now")) + "\n")
    for name, text in (("gpu_pairs_scatter", SCATTER), ("gpu_pairs_error_cdf", CDF)):
        with open(os.path.join(args.out, name + ".gp"), "w") as f:
            f.write(text)
    for k, v in series.items():
        q = statistics.quantiles(v, n=10, method="inclusive")
        print(f"{k:14s} median {statistics.median(v):.2f} %  p90 {q[8]:.2f} %")
    if shutil.which("gnuplot"):
        for name in ("gpu_pairs_scatter", "gpu_pairs_error_cdf"):
            subprocess.run(["gnuplot", name + ".gp"], cwd=args.out, check=True)
        print(f"wrote {args.out}/gpu_pairs_scatter.svg and gpu_pairs_error_cdf.svg")
    else:
        print("gnuplot not found: wrote the .dat and .gp files only", file=sys.stderr)


if __name__ == "__main__":
    main()
