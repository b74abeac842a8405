#!/usr/bin/env python3
"""Build the shipped measured data and the profiles imported from it.

    python3 tools/import_measured.py [--clustersim BUILD/src/cli/clustersim]
                                     [--source-dir DIR] [--igniter-dir DIR] [--check]

1. data/measured/: the measured CSVs of --source-dir (default ../shared/data/measured next
   to the repository) that the shipped profiles use, copied byte for byte except where
   COPY_FIXES says (a unit written into a number field), and iGniter's V100 solo table and
   pairs (--igniter-dir, default ../shared/data/profiles/igniter_v100) written in the same
   tidy format, one row per measured latency with its source_path.
2. data/profiles/: the profiles and interference files of IMPORTS, each written by the
   built `clustersim profile import` from the CSVs of data/measured/, with the provenance
   CSV (FILE.sources.csv) the command writes beside it.

--check compares instead of writing and exits 1 if a committed file is stale (step 1 only
where the source directories exist; it says so when they do not). Python 3 standard
library only.
"""

import argparse
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(REPO), "shared", "data")
DEFAULT_SRC = os.path.join(SHARED, "measured")
DEFAULT_IGNITER = os.path.join(SHARED, "profiles", "igniter_v100")
DEFAULT_CLI = os.path.join(REPO, "build", "src", "cli", "clustersim")

# Copied from --source-dir. A fix is (column, function) applied to every row.
def strip_ms(text):
    """'9.0 ms' -> '9.0': nvidia_dle_isolated.csv writes the unit into some p99_ms cells."""
    return text[:-3] if text.endswith(" ms") else text

def blank(text):
    """'' for a column whose one value, the same in every row, data/measured/README.md states
    (rapp_v100_sm_share.csv: it halves the file)."""
    return ""

COPIES = {
    "gpulet_a100_isolated.csv": [],
    "rapp_v100_sm_share.csv": [("sharing", blank), ("stat", blank), ("notes", blank)],
    "gpulet_a100_pairs.csv": [],
    "nexus_titanx_isolated.csv": [],
    "nvidia_dle_isolated.csv": [("p99_ms", strip_ms)],
}

# The interference model of Gpulet's A100 rows: the a100_gpulet group of the joint fit that
# `clustersim calibrate` runs on the shipped pair data of every GPU type at once (its "Joint
# fit" section; docs/gpu-model.md), to 4 significant digits. The import fits the measured
# pairs' scales on it and writes it as the file's fallback. tests/gpu checks it equals the fit.
JOINT_FIT = {
    "a100_gpulet": {"c": 0.5714, "batch_exponent": 0.03739, "share_exponent": 0.4256,
                    "fixed_exponent": 0.6896},
}
JOINT_FIT_SOURCE = ("the a100_gpulet group of the joint fit of `clustersim calibrate` over the "
                    "shipped pair data of a100_gpulet and v100_igniter (docs/gpu-model.md), "
                    "copied by tools/import_measured.py")

# (outputs, arguments of `clustersim profile import` after the CSVs, CSVs in data/measured);
# {fit:NAME} is a file holding JOINT_FIT[NAME] as a fallback.
IMPORTS = [
    (["a100_gpulet.json", "a100_gpulet_interference.json"],
     ["--gpu-type", "a100_gpulet", "--interference", "{out}/a100_gpulet_interference.json",
      "--fallback-from", "{fit:a100_gpulet}"],
     ["gpulet_a100_isolated.csv", "gpulet_a100_pairs.csv"]),
    (["nexus_titanx.json"], ["--gpu-type", "titanx_nexus"], ["nexus_titanx_isolated.csv"]),
    (["nvidia_dle.json"],
     ["--variant-by", "framework_context,precision",
      "--gpu-type", "A100-80GB=a100_80gb_dle", "--gpu-type", "A100-40GB=a100_40gb_dle",
      "--gpu-type", "V100-16GB=v100_16gb_dle", "--gpu-type", "V100-32GB=v100_32gb_dle",
      "--gpu-type", "T4=t4_dle", "--gpu-type", "A30=a30_dle", "--gpu-type", "A40=a40_dle",
      "--gpu-type", "A10=a10_dle"],
     ["nvidia_dle_isolated.csv"]),
]

IGNITER_SOURCE = "igniter_icloud_ecnu"
IGNITER_GPU = "V100-SXM2-16GB (AWS p3.2xlarge)"
IGNITER_REPO = "icloud-ecnu/igniter@b1ff2ab"
IGNITER_NOTE = "TensorRT 8.0.1.6, FP32, MPS; via shared/data/profiles/igniter_v100 (README there)"
COLUMNS = ["source", "gpu", "model", "batch", "share_pct", "partners", "latency_ms",
           "isolated_latency_ms", "kind", "sharing", "stat", "throughput", "std_ms",
           "source_path", "notes"]


def num(x):
    return repr(float(x)) if not float(x).is_integer() else repr(float(x)).rstrip("0").rstrip(".")


def to_csv(rows):
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: r.get(c, "") for c in COLUMNS})
    return out.getvalue()


def igniter_csvs(src):
    """iGniter's solo table and pairs as tidy rows (only measured numbers)."""
    with open(os.path.join(src, "solo_latency_by_batch_and_mps.json")) as f:
        solo = json.load(f)
    with open(os.path.join(src, "pair_interference.json")) as f:
        pairs = json.load(f)
    iso = []
    for model in solo:
        lat = solo[model]["latency"]
        thr = solo[model].get("throughput", {})
        for b in sorted(lat, key=int):
            for s in sorted(lat[b], key=float):
                iso.append({
                    "source": IGNITER_SOURCE, "gpu": IGNITER_GPU, "model": model, "batch": b,
                    "share_pct": s, "latency_ms": num(lat[b][s]), "kind": "isolated",
                    "sharing": "mps_share", "stat": "mean latency per batch (ms)",
                    "throughput": num(thr[b][s]) if b in thr and s in thr[b] else "",
                    "source_path": "%s solo_latency_by_batch_and_mps.json: %s.latency[%s][%s]"
                                   % (IGNITER_REPO, model, b, s),
                    "notes": IGNITER_NOTE})
    solo_at = {(r["model"], int(r["batch"]), float(r["share_pct"])): r["latency_ms"] for r in iso}
    cols = pairs["columns"]
    out = []
    for i, row in enumerate(pairs["latency"]):
        r = dict(zip(cols, row))
        std = pairs["std"][i]
        p1 = float(r["mps_pct1"])
        sides = [(r["model1"], r["batch1"], p1, r["latency1_ms"], std[-2],
                  r["model2"], r["batch2"], 100 - p1),
                 (r["model2"], r["batch2"], 100 - p1, r["latency2_ms"], std[-1],
                  r["model1"], r["batch1"], p1)]
        for k, (m, b, s, l, sd, pm, pb, ps) in enumerate(sides):
            out.append({
                "source": IGNITER_SOURCE, "gpu": IGNITER_GPU, "model": m, "batch": b,
                "share_pct": num(s), "partners": "%s:b=%d:s=%s" % (pm, pb, num(ps)),
                "latency_ms": num(l),
                "isolated_latency_ms": solo_at.get((m, int(b), float(s)), ""),
                "kind": "colocated", "sharing": "mps_share",
                "stat": "mean latency per batch (ms), closed loop, both always running",
                "std_ms": num(sd),
                "source_path": "%s pair_interference.json: latency[%d] latency%d_ms"
                               % (IGNITER_REPO, i, k + 1),
                "notes": IGNITER_NOTE + "; isolated from the solo table at the same batch and share"})
    return {"igniter_v100_isolated.csv": to_csv(iso), "igniter_v100_pairs.csv": to_csv(out)}


def copies(src):
    out = {}
    for name, fixes in COPIES.items():
        with open(os.path.join(src, name), newline="", encoding="utf-8") as f:
            text = f.read()
        if fixes:
            rows = list(csv.reader(io.StringIO(text)))
            head = rows[0]
            for col, fn in fixes:
                c = head.index(col)
                for r in rows[1:]:
                    r[c] = fn(r[c])
            buf = io.StringIO()
            # The shared files end lines with CRLF (Python's csv default): kept.
            csv.writer(buf, lineterminator="\r\n" if "\r\n" in text else "\n").writerows(rows)
            text = buf.getvalue()
        out[name] = text
    return out


def fit_file(tmp, name):
    """Writes JOINT_FIT[name] as an interference file of its own (a fallback only) in tmp."""
    path = os.path.join(tmp, "fit", "joint_fit_%s.json" % name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fb = dict(form="batch_share", **JOINT_FIT[name])
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"format": "clustersim-interference", "version": 1,
                   "source": JOINT_FIT_SOURCE, "fallback": fb}, f)
    return path


def expand(arg, tmp):
    if arg.startswith("{fit:") and arg.endswith("}"):
        return fit_file(tmp, arg[len("{fit:"):-1])
    return arg.replace("{out}", tmp)


def imports(cli, measured_dir):
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for outputs, args, inputs in IMPORTS:
            cmd = [cli, "profile", "import", "--quiet"]
            cmd += [os.path.join(measured_dir, i) for i in inputs]
            cmd += ["-o", os.path.join(tmp, outputs[0])]
            cmd += [expand(a, tmp) for a in args]
            subprocess.run(cmd, check=True)
        for name in sorted(n for n in os.listdir(tmp) if n != "fit"):
            with open(os.path.join(tmp, name), encoding="utf-8") as f:
                out[name] = f.read()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clustersim", default=DEFAULT_CLI)
    ap.add_argument("--source-dir", default=DEFAULT_SRC)
    ap.add_argument("--igniter-dir", default=DEFAULT_IGNITER)
    ap.add_argument("--check", action="store_true",
                    help="compare with the committed files instead of writing; exit 1 if stale")
    args = ap.parse_args()
    measured = os.path.join(REPO, "data", "measured")
    files = {}
    if os.path.isdir(args.source_dir) and os.path.isdir(args.igniter_dir):
        for name, text in copies(args.source_dir).items():
            files[os.path.join(measured, name)] = text
        for name, text in igniter_csvs(args.igniter_dir).items():
            files[os.path.join(measured, name)] = text
    elif args.check:
        print("import_measured: %s or %s not found: data/measured/ not checked against them"
              % (args.source_dir, args.igniter_dir), file=sys.stderr)
    else:
        sys.exit("import_measured: %s and %s are needed" % (args.source_dir, args.igniter_dir))
    stale = False
    if not args.check:
        for path, text in files.items():
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            print("wrote %s" % os.path.relpath(path, REPO))
        files = {}
    for name, text in imports(args.clustersim, measured).items():
        files[os.path.join(REPO, "data", "profiles", name)] = text
    for path, text in files.items():
        if args.check:
            try:
                with open(path, encoding="utf-8", newline="") as f:
                    old = f.read()
            except OSError:
                old = None
            if old != text:
                print("import_measured: %s is stale" % os.path.relpath(path, REPO),
                      file=sys.stderr)
                stale = True
        else:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            print("wrote %s" % os.path.relpath(path, REPO))
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
