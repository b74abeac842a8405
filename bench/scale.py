#!/usr/bin/env python3
"""Cost per request as runs grow (docs/performance.md).

Part 1: bench/engine_suite.py's workload a (one model, batch 8, router, zero
network, 4 V100s at 3,000 req/s) for 1 M to 100 M requests. Prints, for each,
the engine's simulated requests per second and nanoseconds of engine time per
simulated request, the whole command's wall time, its peak resident memory
and that memory per request.

Part 2 (--maf): bench/maf2019_8h.json (the MAF 2019 excerpt through 16 V100s)
at 4.28 times its rate, 13 M requests: the size of a full MAF day.

With --repeat N, each size (and the MAF run) runs N times and the fastest
run is reported (its engine speed, its wall time; peak memory is the same
in every run): the development machine spends some minutes a third slower,
and a single run per size draws that as a cost that is not flat.

With --plot DIR, also writes DIR/performance_cost_per_request.dat and .gp and,
when gnuplot is on PATH, the .svg (docs/figures holds the published one).

Usage: bench/scale.py [--build DIR] [--requests N,N,...] [--maf] [--repeat N] [--plot DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine_suite  # noqa: E402  (the workloads and the runner)

DEFAULT_REQUESTS = "1000000,2000000,5000000,10000000,20000000,50000000,100000000"
MAF_RATE_SCALE = 4.28  # the 8-hour excerpt has 3.04 M requests at its own rate

GNUPLOT = """set terminal svg size 720,420 dynamic font 'sans,12'
set output '{svg}'
set multiplot layout 1,2 title 'clustersim, workload a (bench/scale.py)'
set logscale x
set xrange [5e5:2e8]
set xlabel 'simulated requests'
set format x '10^{{%L}}'
set grid
set key off
set yrange [0:*]
set ylabel 'engine ns per simulated request'
plot '{dat}' using 1:2 with linespoints pt 7 lw 2
set ylabel 'peak RSS bytes per request'
plot '{dat}' using 1:3 with linespoints pt 7 lw 2
unset multiplot
"""


def write_temp(scenario):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False,
                                     dir=engine_suite.HERE) as f:
        json.dump(scenario, f)
    return f.name


def fastest(binary, path, repeat):
    """engine_suite.run's figures of the run with the fastest engine."""
    return max((engine_suite.run(binary, path) for _ in range(repeat)), key=lambda r: r[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(engine_suite.ROOT, "build-release"))
    ap.add_argument("--requests", default=DEFAULT_REQUESTS)
    ap.add_argument("--maf", action="store_true", help="also the 13 M-request MAF run")
    ap.add_argument("--plot", metavar="DIR", help="write the cost-per-request figure here")
    ap.add_argument("--repeat", type=int, default=1, help="runs per size; the fastest is reported")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if not os.path.isdir(args.build):
        subprocess.run(["meson", "setup", args.build, engine_suite.ROOT, "--buildtype=release"],
                       check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", args.build, "src/cli/clustersim"], check=True,
                   stdout=subprocess.DEVNULL)
    binary = os.path.join(args.build, "src", "cli", "clustersim")
    print("| requests | simulated requests/s | engine ns/request | command wall s "
          "| peak RSS MB | RSS bytes/request |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    rows = []
    for n in (int(x) for x in args.requests.split(",")):
        s = engine_suite.scenario_a()
        s["clients"][0].pop("duration_s")
        s["clients"][0]["requests"] = n
        path = write_temp(s)
        try:
            _, rq, wall, rss, _ = fastest(binary, path, args.repeat)
        finally:
            os.unlink(path)
        rows.append((n, 1e9 / rq, rss * 1048576 / n))
        print(f"| {n:,} | {rq:,} | {1e9 / rq:.0f} | {wall:.2f} | {rss:.0f} "
              f"| {rss * 1048576 / n:.1f} |", flush=True)
    if args.maf:
        with open(os.path.join(engine_suite.HERE, "maf2019_8h.json")) as f:
            s = json.load(f)
        s["trace"]["rate_scale"] = MAF_RATE_SCALE
        path = write_temp(s)  # beside the original: its relative paths hold
        try:
            _, rq, wall, rss, n = fastest(binary, path, args.repeat)
        finally:
            os.unlink(path)
        print(f"\nMAF 2019 excerpt x{MAF_RATE_SCALE} (16 V100s): {n / 1e6:.1f} M requests, "
              f"{rq:,} simulated requests/s, {wall:.2f} s wall, peak RSS {rss:.0f} MB "
              f"({rss * 1048576 / n:.1f} bytes/request)")
    if args.plot:
        os.makedirs(args.plot, exist_ok=True)
        dat = os.path.join(args.plot, "performance_cost_per_request.dat")
        with open(dat, "w") as f:
            f.write("# requests  engine_ns_per_request  peak_rss_bytes_per_request\n")
            for n, ns, b in rows:
                f.write(f"{n} {ns:.1f} {b:.2f}\n")
        gp = os.path.join(args.plot, "performance_cost_per_request.gp")
        svg = os.path.join(args.plot, "performance_cost_per_request.svg")
        with open(gp, "w") as f:
            f.write(GNUPLOT.format(svg=os.path.basename(svg), dat=os.path.basename(dat)))
        if shutil.which("gnuplot"):
            subprocess.run(["gnuplot", os.path.basename(gp)], cwd=args.plot, check=True)
            print(f"\nwrote {svg}")
        else:
            print(f"\nwrote {dat} and {gp} (gnuplot not found: no .svg)")


if __name__ == "__main__":
    main()
