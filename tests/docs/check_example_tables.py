#!/usr/bin/env python3
"""The result tables docs/extending.md shows are the ones its example
programs print today. Each program is run on the thesis' V100 profile; every
table it prints (a header line starting "goodput req/s" or "dispatch", then
its rows up to a blank line) must appear in the page's code blocks line for
line. The first-fit table had drifted for weeks (the share rule changed
Usher's resnet50 from 794.8 to 560.6 req/s) with the page unchanged.
Usage: check_example_tables.py SOURCE_ROOT PROGRAM..."""
import os
import subprocess
import sys

HEADERS = ("goodput req/s", "dispatch ")


def tables(text):
    out, cur = [], None
    for line in text.splitlines():
        if line.startswith(HEADERS):
            cur = [line]
            out.append(cur)
        elif cur is not None and line.strip() and not line.startswith(("ok -", "FAIL -")):
            cur.append(line)
        else:
            cur = None
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    root, programs = sys.argv[1], sys.argv[2:]
    with open(os.path.join(root, "docs", "extending.md")) as f:
        page = f.read().splitlines()
    profile = os.path.join(root, "data", "profiles", "v100_thesis.json")
    fails, seen = [], 0
    for prog in programs:
        out = subprocess.run([prog, profile], capture_output=True, text=True, check=True).stdout
        for t in tables(out):
            seen += 1
            found = any(page[i:i + len(t)] == t for i in range(len(page)))
            if not found:
                fails.append(f"{os.path.basename(prog)}: this table is not in docs/extending.md:\n  "
                             + "\n  ".join(t))
    if seen == 0:
        fails.append("no table found in the programs' output")
    for f in fails:
        print("FAIL -", f)
    print(f"{seen} tables checked, {len(fails)} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
