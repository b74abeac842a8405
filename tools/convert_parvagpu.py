#!/usr/bin/env python3
"""Convert ParvaGPU's A100 MIG x MPS measurements into a clustersim interference file.

Run by hand when the source file changes; the output is committed:

    python3 tools/convert_parvagpu.py [--source FILE] [--out FILE] [--profile-out FILE] [--check]

Input (default ../shared/data/measured/parvagpu_a100_mig_mps.csv next to the repo): the tidy
CSV of ../shared/data/measured/README.md, rows of MunQ-Lee/ParvaGPU_SC24 @5f3de1e (MIT),
prof_data/MODEL.csv: 11 models on an A100-80GB, each alone in a MIG instance of 1, 2, 3, 4 or
7 GPCs, or as 2-5 identical MPS processes of the same model in one instance, at batch 1-256.
Output (default data/profiles/a100_parvagpu_mig.json): format "clustersim-interference"
(docs/gpu-model.md, "MIG"), one entry per model with a "mig" table: per (gpcs, batch,
processes) the stored latency (1 ms resolution) and the per-process throughput (finer), and
the source row of every cell. The loader takes the latency from the throughput
(batch x 1000 / throughput ms) and checks it against the stored one.
Profile (default data/profiles/a100_parvagpu.json): format "clustersim-profile", GPU type
"a100_parvagpu" = the 7-GPC instance alone (98 of the A100's 108 SMs): per model and batch the
latency batch x 1000 / throughput (to 0.1 us) and the throughput as measured, so that a scenario
on it with the MIG tables runs every measured instance at its measured latency.

Columns are read by name. A row of another source, GPU, or without a MIG size is an error
(naming the line); so is a cell given twice.
--check compares instead of writing and exits 1 if the committed output is stale.
Python 3 standard library only.
"""

import argparse
import csv
import hashlib
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SRC = os.path.join(os.path.dirname(REPO), "shared", "data", "measured",
                           "parvagpu_a100_mig_mps.csv")
DEFAULT_OUT = os.path.join(REPO, "data", "profiles", "a100_parvagpu_mig.json")
DEFAULT_PROFILE = os.path.join(REPO, "data", "profiles", "a100_parvagpu.json")
GPU_GPCS = 7  # an A100's GPCs available to MIG (instances 1g, 2g, 3g, 4g, 7g)
PARTNERS = re.compile(r"^([A-Za-z0-9_.-]+):b=(\d+):same MIG instance x(\d+) \(MPS default, no SM limit\)$")


def fail(msg):
    sys.stderr.write(f"convert_parvagpu: {msg}\n")
    sys.exit(2)


def number(text):
    """The decimal text as a JSON number (an integer when it is one)."""
    v = float(text)
    return int(v) if v == int(v) and "e" not in text.lower() else v


def convert(src):
    with open(src, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    models = {}
    with open(src, newline="") as f:
        rd = csv.DictReader(f)
        need = ["source", "gpu", "model", "batch", "mig_gpcs", "partners", "latency_ms",
                "throughput_per_process", "source_path"]
        missing = [c for c in need if c not in (rd.fieldnames or [])]
        if missing:
            fail(f"{src}: missing columns {', '.join(missing)}")
        for line, r in enumerate(rd, start=2):
            where = f"{src}: line {line}"
            if r["source"] != "parvagpu_prof_data" or not r["gpu"].startswith("A100-80GB"):
                fail(f"{where}: expected source parvagpu_prof_data on an A100-80GB, got "
                     f"{r['source']!r} on {r['gpu']!r}")
            if not r["mig_gpcs"]:
                fail(f"{where}: mig_gpcs is empty")
            gpcs, batch = int(r["mig_gpcs"]), int(r["batch"])
            procs = 1
            if r["partners"]:
                m = PARTNERS.match(r["partners"])
                if not m or m.group(1) != r["model"] or int(m.group(2)) != batch:
                    fail(f"{where}: partners {r['partners']!r}: expected copies of the same "
                         f"model at the same batch")
                procs = 1 + int(m.group(3))
            cell = {"gpcs": gpcs, "batch": batch, "processes": procs,
                    "latency_ms": number(r["latency_ms"]),
                    "throughput_per_process": number(r["throughput_per_process"]),
                    "source": r["source_path"]}
            cells = models.setdefault(r["model"], {})
            key = (gpcs, batch, procs)
            if key in cells:
                fail(f"{where}: ({r['model']}, {gpcs} GPCs, batch {batch}, {procs} processes) "
                     f"given twice")
            cells[key] = cell
    out = {
        "format": "clustersim-interference",
        "version": 1,
        "source": ("MunQ-Lee/ParvaGPU_SC24 @5f3de1e (MIT), prof_data/MODEL.csv, via "
                   f"../shared/data/measured/parvagpu_a100_mig_mps.csv (sha256 {digest}); "
                   "written by tools/convert_parvagpu.py"),
        "description": ("NVIDIA A100-80GB split into MIG instances of 1, 2, 3, 4, 7 GPCs; each "
                        "model alone in an instance or as 2-5 identical processes of it under "
                        "MPS (no SM limit), closed loop; PyTorch eager (the repository's "
                        "scripts/dl_infer_runtime.py), images 3x224x224, bert sequence 128. "
                        "Latency stored at 1 ms resolution, per-process throughput finer"),
        "models": [{"model": name,
                    "mig": {"gpu_gpcs": GPU_GPCS,
                            "cells": [cells[k] for k in sorted(cells)]}}
                   for name, cells in sorted(models.items())],
    }
    # One cell a line: the file stays readable and diffs by cell.
    text = json.dumps(out, indent=1)
    tables = re.sub(r"\{\n\s+(\"gpcs\"[^}]*?)\n\s+\}",
                    lambda m: "{" + re.sub(r",\n\s+", ", ", m.group(1)) + "}", text) + "\n"
    profile = {
        "format": "clustersim-profile",
        "version": 1,
        "source": out["source"].replace("written by", "the 7-GPC instance alone; written by"),
        "gpu_types": [{"name": "a100_parvagpu",
                       "description": ("NVIDIA A100-80GB as one 7-GPC MIG instance (7g.80gb, 98 of "
                                       "108 SMs), ParvaGPU's profiling (PyTorch eager); the "
                                       "whole GPU of a100_parvagpu_mig.json's tables"),
                       "sm_count": 98, "memory_bytes": 80 * 1024 ** 3}],
        "models": [],
    }
    for name, cells in sorted(models.items()):
        pts = [c for (g, b, p), c in sorted(cells.items()) if g == GPU_GPCS and p == 1]
        profile["models"].append({
            "gpu": "a100_parvagpu", "model": name,
            "batches": [{"batch": c["batch"],
                         "latency_ms": round(c["batch"] * 1000 / c["throughput_per_process"], 4),
                         "throughput_rps": c["throughput_per_process"],
                         "note": c["source"] + " (latency from the throughput)"} for c in pts]})
    text = json.dumps(profile, indent=1)
    prof = re.sub(r"\{\n\s+(\"batch\"[^}]*?)\n\s+\}",
                  lambda m: "{" + re.sub(r",\n\s+", ", ", m.group(1)) + "}", text) + "\n"
    return tables, prof


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", default=DEFAULT_SRC)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--profile-out", default=DEFAULT_PROFILE)
    ap.add_argument("--check", action="store_true",
                    help="compare with the committed file instead of writing; exit 1 if stale")
    args = ap.parse_args()
    if args.check and not os.path.exists(args.source):
        print(f"convert_parvagpu: {args.source} not found: {args.out} not checked against it",
              file=sys.stderr)
        return 0
    outputs = dict(zip((args.out, args.profile_out), convert(args.source)))
    stale = False
    for path, text in outputs.items():
        if args.check:
            try:
                with open(path) as f:
                    same = f.read() == text
            except OSError:
                same = False
            if not same:
                print(f"{path} is stale: re-run tools/convert_parvagpu.py")
                stale = True
        else:
            with open(path, "w") as f:
                f.write(text)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
