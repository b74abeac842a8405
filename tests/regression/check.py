#!/usr/bin/env python3
"""Regression check: runs a scenario and compares its summary.json with the
stored golden file. Runs are deterministic, so the comparison is exact; on a
difference it prints every metric that moved (model, metric, old -> new) and
exits 1. tools/update-goldens.sh regenerates the goldens on purpose.

Usage: check.py CLUSTERSIM SCENARIO GOLDEN
"""
import json
import os
import subprocess
import sys
import tempfile

IGNORED = {"clustersim_version"}  # a release bump alone is not a regression


def flatten(node, prefix, out):
    if isinstance(node, dict):
        for k, v in node.items():
            if not prefix and k in IGNORED:
                continue
            flatten(v, f"{prefix}.{k}" if prefix else k, out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            # name list items after their model/id where they have one
            tag = v.get("model") if isinstance(v, dict) and "model" in v else (
                f"gpu {v['id']}" if isinstance(v, dict) and "id" in v else str(i))
            flatten(v, f"{prefix}[{tag}]", out)
    else:
        out[prefix] = node


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    clustersim, scenario, golden = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([clustersim, "run", scenario, "--output", tmp],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL {scenario}: clustersim exited {run.returncode}\n{run.stderr}")
            return 1
        with open(os.path.join(tmp, "summary.json")) as f:
            text = f.read()
            new = json.loads(text)
        # Provenance: the effective scenario written beside the summary,
        # run from another directory, reproduces the summary byte for byte.
        rerun = os.path.join(tmp, "rerun")
        again = subprocess.run([os.path.abspath(clustersim), "run",
                                os.path.join(tmp, "scenario.json"), "--output", rerun],
                               capture_output=True, text=True, cwd="/")
        if again.returncode != 0:
            print(f"FAIL {scenario}: its effective scenario exited {again.returncode}\n"
                  f"{again.stderr}")
            return 1
        with open(os.path.join(rerun, "summary.json")) as f:
            if f.read() != text:
                print(f"FAIL {scenario}: its effective scenario gives another summary")
                return 1
    if not os.path.exists(golden):
        print(f"FAIL {scenario}: no golden file {golden} (tools/update-goldens.sh creates it)")
        return 1
    with open(golden) as f:
        old = json.load(f)
    a, b = {}, {}
    flatten(old, "", a)
    flatten(new, "", b)
    moved = [k for k in sorted(set(a) | set(b)) if a.get(k, "<absent>") != b.get(k, "<absent>")]
    name = os.path.basename(scenario)
    if not moved:
        print(f"1 passed, 0 failed: {name} matches its golden summary ({len(a)} values)")
        return 0
    print(f"FAIL {name}: {len(moved)} of {len(a)} values moved (golden -> now):")
    for k in moved:
        print(f"  {k}: {a.get(k, '<absent>')} -> {b.get(k, '<absent>')}")
    print("If the change is intended, regenerate with tools/update-goldens.sh and commit the goldens.")
    return 1


if __name__ == "__main__":
    sys.exit(main())
