#!/usr/bin/env python3
"""Goodput and GPUs provisioned over time, for runs compared side by side.

Reads each RUNDIR's models_over_time.csv (per model and bin: requests sent,
results within the SLO, requests that left without one) and
cluster_over_time.csv (GPUs provisioned at each change), as `clustersim run
-o RUNDIR` writes them, sums the models per bin, averages over windows of
--window seconds, and writes OUT.dat (one block per run: time_s,
goodput_rps, bad_rps, sent_rps, gpus_provisioned at the window's start)
and OUT.gp, a gnuplot script drawing two panels (goodput; GPUs) over a
shared time axis; with gnuplot on the PATH it also renders OUT.svg.

Usage: plot_over_time.py -o OUT [--window S] [--title T] [--no-render] NAME=RUNDIR...
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
from collections import defaultdict


def fail(msg):
    print(f"plot_over_time.py: {msg}", file=sys.stderr)
    sys.exit(2)


def read_csv(path, columns):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    for i, r in enumerate(rows, 2):
        for c in columns:
            try:
                float(r[c])
            except (KeyError, TypeError, ValueError):
                fail(f"{path}: line {i}: column {c}: expected a number, got {r.get(c)!r}")
    return rows


def series(rundir, window):
    """[(t, goodput_rps, bad_rps, sent_rps, gpus)] per window of the run."""
    models = read_csv(os.path.join(rundir, "models_over_time.csv"),
                      ["time_s", "sent", "good", "bad"])
    steps = read_csv(os.path.join(rundir, "cluster_over_time.csv"), ["time_s", "gpus_provisioned"])
    sums = defaultdict(lambda: [0.0, 0.0, 0.0])
    for r in models:
        k = int(float(r["time_s"]) // window)
        sums[k][0] += float(r["good"])
        sums[k][1] += float(r["bad"])
        sums[k][2] += float(r["sent"])
    if not sums:
        return []
    out = []
    for k in range(0, max(sums) + 1):
        t = k * window
        gpus = 0
        for s in steps:  # the level in force at t: the last change at or before it
            if float(s["time_s"]) <= t:
                gpus = int(float(s["gpus_provisioned"]))
        g, b, n = sums[k]
        out.append((t, g / window, b / window, n / window, gpus))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", dest="out", required=True)
    ap.add_argument("--window", type=float, default=10.0)
    ap.add_argument("--title", default="")
    ap.add_argument("--no-render", action="store_true", help="write .dat and .gp only")
    ap.add_argument("runs", nargs="+", metavar="NAME=RUNDIR")
    a = ap.parse_args()
    if not a.window > 0:
        fail(f"--window {a.window}: expected a number of seconds > 0")
    runs = []
    for spec in a.runs:
        name, eq, d = spec.partition("=")
        if not eq or not name or not d:
            fail(f"{spec}: expected NAME=RUNDIR")
        runs.append((name, series(d, a.window)))
    with open(a.out + ".dat", "w") as f:
        for name, rows in runs:
            f.write(f"# {name}\n")
            for t, g, b, n, gpus in rows:
                f.write(f"{t:g} {g:.6g} {b:.6g} {n:.6g} {gpus}\n")
            f.write("\n\n")
    dat = os.path.basename(a.out) + ".dat"
    plots_g = ", ".join(f"'{dat}' index {i} using 1:2 with lines lw 2 title '{n}'"
                        for i, (n, _) in enumerate(runs))
    plots_n = ", ".join(f"'{dat}' index {i} using 1:5 with steps lw 2 title '{n}'"
                        for i, (n, _) in enumerate(runs))
    with open(a.out + ".gp", "w") as f:
        f.write(f"""set terminal svg size 900,640 dynamic font 'sans,11'
set output '{os.path.basename(a.out)}.svg'
set multiplot layout 2,1 title '{a.title}'
set ylabel 'goodput (req/s, {a.window:g} s windows)'
set key outside right
set grid
plot {plots_g}
set ylabel 'GPUs provisioned'
set xlabel 'simulated time (s)'
set yrange [0:*]
plot {plots_n}
unset multiplot
""")
    if not a.no_render and shutil.which("gnuplot"):
        subprocess.run(["gnuplot", os.path.basename(a.out) + ".gp"],
                       cwd=os.path.dirname(os.path.abspath(a.out)), check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
