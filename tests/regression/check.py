#!/usr/bin/env python3
"""Regression check: runs a scenario and compares its outputs with the stored
golden files. Runs are deterministic, so the comparison is exact. Goldens
detect change, not error: they hold what the simulator printed when they were
last regenerated (tools/update-goldens.sh), right or wrong.

- summary.json against GOLDEN (NAME.summary.json): every value that moved is
  printed as "  KEY: GOLDEN -> NOW" (KEY such as models[resnet50].latency_ms.p99).
- When the scenario asks for requests.csv ("outputs": {"requests_csv": true}),
  also requests.csv, gpus_over_time.csv, gpu_timeseries.csv and
  worker_latency.csv, each against NAME.FILE or NAME.FILE.gz beside GOLDEN
  (--csv-golden FILE=PATH names another). The first difference of each file is
  printed as "  FILE row N column COL: GOLDEN -> NOW" (rows count from 1 after
  the header; "FILE header" or "FILE row N" alone when the header or the
  number of rows differs), with the number of rows that differ.
- The effective scenario (scenario.json), rerun from another directory, must
  reproduce the summary and the CSV files byte for byte.

Exit 0 when everything matches, 1 on any difference or failure, 2 on usage.

Usage: check.py CLUSTERSIM SCENARIO GOLDEN [--csv-golden FILE=PATH ...]
"""
import csv
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile

IGNORED = {"clustersim_version"}  # a release bump alone is not a regression
CSV_FILES = ["requests.csv", "gpus_over_time.csv", "gpu_timeseries.csv", "worker_latency.csv"]


def flatten(node, prefix, out):
    if isinstance(node, dict):
        for k, v in node.items():
            if not prefix and k in IGNORED:
                continue
            flatten(v, f"{prefix}.{k}" if prefix else k, out)
    elif isinstance(node, list):
        seen = {}
        for i, v in enumerate(node):
            # name list items after their model/id where they have one; a
            # tag met again (two warnings about one model) gets #2, #3, ...,
            # or the later item would hide the earlier one's changes
            tag = v.get("model") if isinstance(v, dict) and "model" in v else (
                f"gpu {v['id']}" if isinstance(v, dict) and "id" in v else str(i))
            seen[tag] = seen.get(tag, 0) + 1
            if seen[tag] > 1:
                tag = f"{tag}#{seen[tag]}"
            flatten(v, f"{prefix}[{tag}]", out)
    else:
        out[prefix] = node


def read_text(path):
    if path.endswith(".gz"):
        with gzip.open(path, "rt", newline="") as f:
            return f.read()
    with open(path, newline="") as f:
        return f.read()


def csv_golden_path(golden, name, overrides):
    """The golden of output file NAME: an override, else NAME or NAME.gz
    beside the summary golden (exactly one of them)."""
    if name in overrides:
        return overrides[name]
    stem = golden[:-len(".summary.json")] if golden.endswith(".summary.json") else golden
    found = [p for p in (f"{stem}.{name}", f"{stem}.{name}.gz") if os.path.exists(p)]
    if len(found) > 1:
        raise ValueError(f"both {found[0]} and {found[1]} exist; keep one")
    return found[0] if found else f"{stem}.{name}[.gz]"


def compare_csv(name, old_text, new_text):
    """Lines describing the first difference (empty when equal)."""
    if old_text == new_text:
        return []
    old = list(csv.reader(io.StringIO(old_text)))
    new = list(csv.reader(io.StringIO(new_text)))
    if not old or not new or old[0] != new[0]:
        o = ",".join(old[0]) if old else "<empty>"
        n = ",".join(new[0]) if new else "<empty>"
        return [f"  {name} header: {o} -> {n}"]
    header = old[0]
    differing = sum(1 for a, b in zip(old[1:], new[1:]) if a != b) + abs(len(old) - len(new))
    tail = f"    ({differing} of {len(old) - 1} golden rows differ; {len(new) - 1} rows now)"
    for r in range(1, max(len(old), len(new))):
        a = old[r] if r < len(old) else None
        b = new[r] if r < len(new) else None
        if a == b:
            continue
        if a is None or b is None or len(a) != len(b):
            sa = ",".join(a) if a is not None else "<absent>"
            sb = ",".join(b) if b is not None else "<absent>"
            return [f"  {name} row {r}: {sa} -> {sb}", tail]
        c = next(i for i in range(len(a)) if a[i] != b[i])
        col = header[c] if c < len(header) else f"#{c + 1}"
        return [f"  {name} row {r} column {col}: {a[c]} -> {b[c]}",
                f"    (row {r} now: {','.join(b)})", tail]
    # equal as parsed rows but not as text (line endings, quoting)
    return [f"  {name} text: differs in formatting only", tail]


def run(clustersim, scenario, out, cwd=None):
    return subprocess.run([clustersim, "run", scenario, "--output", out],
                          capture_output=True, text=True, cwd=cwd)


def main(argv):
    args, overrides = [], {}
    it = iter(argv)
    for a in it:
        if a == "--csv-golden" or a.startswith("--csv-golden="):
            spec = a.split("=", 1)[1] if "=" in a else next(it, "")
            name, _, path = spec.partition("=")
            if name not in CSV_FILES or not path:
                print(f"--csv-golden expects FILE=PATH with FILE one of {', '.join(CSV_FILES)}",
                      file=sys.stderr)
                return 2
            overrides[name] = path
        else:
            args.append(a)
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    clustersim, scenario, golden = args
    name = os.path.basename(scenario)
    with open(scenario) as f:
        wants_csv = bool(json.load(f).get("outputs", {}).get("requests_csv", False))
    with tempfile.TemporaryDirectory() as tmp:
        first = run(clustersim, scenario, tmp)
        if first.returncode != 0:
            print(f"FAIL {name}: clustersim exited {first.returncode}\n{first.stderr}")
            return 1
        with open(os.path.join(tmp, "summary.json")) as f:
            text = f.read()
        new = json.loads(text)
        outputs = {"summary.json": text}
        for c in CSV_FILES:
            if os.path.exists(os.path.join(tmp, c)):
                outputs[c] = read_text(os.path.join(tmp, c))
        # Provenance: the effective scenario written beside the summary,
        # run from another directory, reproduces the outputs byte for byte.
        rerun = os.path.join(tmp, "rerun")
        again = run(os.path.abspath(clustersim), os.path.join(tmp, "scenario.json"), rerun, cwd="/")
        if again.returncode != 0:
            print(f"FAIL {name}: its effective scenario exited {again.returncode}\n{again.stderr}")
            return 1
        for out_name, out_text in outputs.items():
            path = os.path.join(rerun, out_name)
            if not os.path.exists(path) or read_text(path) != out_text:
                print(f"FAIL {name}: its effective scenario gives another {out_name}")
                return 1

    report = []
    if not os.path.exists(golden):
        print(f"FAIL {name}: no golden file {golden} (tools/update-goldens.sh creates it)")
        return 1
    with open(golden) as f:
        old = json.load(f)
    a, b = {}, {}
    flatten(old, "", a)
    flatten(new, "", b)
    moved = [k for k in sorted(set(a) | set(b)) if a.get(k, "<absent>") != b.get(k, "<absent>")]
    if moved:
        report.append(f"summary.json: {len(moved)} of {len(a)} values moved (golden -> now):")
        report += [f"  {k}: {a.get(k, '<absent>')} -> {b.get(k, '<absent>')}" for k in moved]

    compared = []
    for c in CSV_FILES:
        try:
            path = csv_golden_path(golden, c, overrides)
        except ValueError as e:
            print(f"FAIL {name}: {e}")
            return 1
        if not wants_csv:
            if os.path.exists(path):
                report.append(f"{c}: golden {path} exists but the scenario no longer asks for "
                              "requests.csv (outputs.requests_csv); remove it or ask again")
            continue
        if c not in outputs:
            report.append(f"{c}: the run wrote no {c}")
            continue
        if not os.path.exists(path):
            report.append(f"{c}: no golden file {path} (tools/update-goldens.sh creates it)")
            continue
        diff = compare_csv(c, read_text(path), outputs[c])
        if diff:
            report.append(f"{c}: differs from {os.path.basename(path)} (first difference, golden -> now):")
            report += diff
        compared.append(c)

    if not report:
        extra = f" and {len(compared)} CSV files" if compared else ""
        print(f"1 passed, 0 failed: {name} matches its golden summary ({len(a)} values){extra}")
        return 0
    print(f"FAIL {name}:")
    for line in report:
        print(line)
    print("If the change is intended, regenerate with tools/update-goldens.sh and commit the goldens.")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
