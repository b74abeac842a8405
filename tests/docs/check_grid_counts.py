#!/usr/bin/env python3
"""Every number of runs README.md and docs/experiments.md state for a
shipped experiment grid equals the grid's own count, as `clustersim sweep
FILE --list` prints it (a line per run after the header), so that a stated
count cannot drift from the grid again (README once said 240 of the 6.2.1
grid's 270). The statements checked:
  - "`clustersim sweep experiments/X.json` (N simulations" (README's benches);
  - "sweep experiments/X.json ...``` runs the ... (... = N simulations)";
  - rows of experiments.md's table of shipped experiments naming one file,
    whose "runs" cell is a number.
Usage: check_grid_counts.py CLUSTERSIM SOURCE_ROOT"""
import os
import re
import subprocess
import sys

PATTERNS = [
    re.compile(r"`(?:clustersim )?sweep (experiments/[\w.]+\.json)[^`]*` \((\d+) (?:simulations|runs)"),
    re.compile(r"sweep (experiments/[\w.]+\.json)[^`]*``` runs the [^(]*\([^)]*?= (\d+) simulations"),
]
ROW = re.compile(r"^\| `(experiments/[\w.]+\.json)` \|[^|]*\| (\d+) \|", re.M)


def count(exe, root, path, cache={}):
    if path not in cache:
        out = subprocess.run([exe, "sweep", os.path.join(root, path), "--list"], check=True,
                             capture_output=True, text=True).stdout
        cache[path] = len(out.splitlines()) - 1
    return cache[path]


def main():
    exe, root = sys.argv[1], sys.argv[2]
    checked, bad = 0, []
    for doc in ("README.md", "docs/experiments.md"):
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            text = f.read()
        flat = " ".join(text.split())
        found = [m.groups() for p in PATTERNS for m in p.finditer(flat)]
        found += [m.groups() for m in ROW.finditer(text)]
        for path, stated in found:
            n = count(exe, root, path)
            checked += 1
            if int(stated) != n:
                bad.append("%s: says %s runs for %s; its grid has %d" % (doc, stated, path, n))
    if checked < 3:
        bad.append("only %d statements of a grid's size found: the patterns no longer match "
                   "the docs" % checked)
    for b in bad:
        print("check_grid_counts: " + b, file=sys.stderr)
    if bad:
        sys.exit(1)
    print("%d stated grid sizes match the grids" % checked)


main()
