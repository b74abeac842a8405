#!/usr/bin/env python3
"""Convert iGniter's V100 measurements into clustersim data files.

Run by hand when the source files change; the outputs are committed:

    python3 tools/convert_igniter.py [--source-dir DIR] [--out-dir DIR] [--check]

Inputs (in --source-dir, default ../shared/data/profiles/igniter_v100 next to the repo):
  solo_latency_by_batch_and_mps.json  latency and L2/DRAM utilisation per (batch, MPS share)
  pair_interference.json              two models co-located under MPS, measured latencies
  igniter_config.jsonl                iGniter's coefficient file (gpulatency 3x3 tables,
                                      payload sizes, PCIe bandwidth)
Outputs (in --out-dir, default data/profiles of the repo):
  igniter_v100.json             format "clustersim-interference" (docs/gpu-model.md):
                                latency-vs-MPS-share tables, utilisation tables, pairwise
                                the interference model's coefficients and its
                                scale per measured pair (fitted by `clustersim
                                calibrate`, copied here: FIT below)
  igniter_v100_profile.json     format "clustersim-profile" (docs/profiles.md): isolated
                                latency per batch 1..32 on GPU type "v100_igniter"
  gpu_calibration.json          format "clustersim-calibration" (docs/gpu-model.md): the
                                measured co-location experiments the GPU model is checked
                                against (`clustersim calibrate`)

Every number derived here (rather than copied) is computed by a rule written in
docs/gpu-model.md, and the C loader (src/profiles/interference.c) applies the
same table-completion rule, so the two agree; tests/gpu checks that.
--check compares instead of writing and exits 1 if a committed output is stale.
Python 3 standard library only.
"""

import argparse
import hashlib
import json
import os
import sys

from convert_profiles import V100_PRICE  # one price per GPU product, written once

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SRC = os.path.join(os.path.dirname(REPO), "shared", "data", "profiles", "igniter_v100")

IGNITER = ('F. Xu et al., "iGniter: Interference-Aware GPU Resource Provisioning for '
           'Predictable DNN Inference in the Cloud", IEEE TPDS 2022; measurement data of the '
           'public repository icloud-ecnu/igniter (commit b1ff2ab, Sep 2023): one Tesla V100 '
           '(AWS p3.2xlarge), NVIDIA MPS, TensorRT 8.0.1.6, FP32')
THESIS = ('P. Elvinger, "Towards resource and interference-aware scheduling of ML '
          'workloads", Master\'s thesis, ETH Zurich, 2024, doi:10.3929/ethz-b-000697738')

GIB = 1024 ** 3
MODELS = ["alexnet", "resnet50", "vgg19", "ssd"]
CONFIG_BATCHES = [1, 16, 32]     # rows of igniter_config gpulatency
CONFIG_SHARES = [10, 50, 100]    # columns of igniter_config gpulatency


def sha256_short(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def share_key(s):
    return str(int(s)) if float(s) == int(s) else str(s)


# ---- table completion (same rule as src/profiles/interference.c) ------------

def complete(cells):
    """cells: {(batch, share): value} measured. Returns {(b, s): (value, measured)} on the
    full grid of the batches and shares that occur. A missing cell (b, s) is filled from a
    reference column s' measured at b: value(b, s') times the ratio value(., s)/value(., s')
    interpolated linearly in batch between the nearest rows below and above b where both
    are measured (or the one such row on one side). Reference columns are tried by
    distance in the sorted share list, the larger share first on a tie."""
    batches = sorted({b for b, _ in cells})
    shares = sorted({s for _, s in cells})
    out = {k: (v, True) for k, v in cells.items()}
    for b in batches:
        for j, s in enumerate(shares):
            if (b, s) in cells:
                continue
            order = sorted((k for k in range(len(shares)) if k != j),
                           key=lambda k: (abs(k - j), -k))
            done = False
            for k in order:
                sk = shares[k]
                if (b, sk) not in cells:
                    continue
                both = [r for r in batches if (r, s) in cells and (r, sk) in cells]
                lo = [r for r in both if r < b]
                hi = [r for r in both if r > b]
                if not lo and not hi:
                    continue
                def q(r):
                    return cells[(r, s)] / cells[(r, sk)]
                if lo and hi:
                    b0, b1 = lo[-1], hi[0]
                    w = (b - b0) / (b1 - b0)
                    ratio = q(b0) + w * (q(b1) - q(b0))
                else:
                    ratio = q(lo[-1] if lo else hi[0])
                out[(b, s)] = (cells[(b, sk)] * ratio, False)
                done = True
                break
            if not done:
                sys.exit("convert_igniter: cannot complete cell batch %d share %s" % (b, s))
    return out


# ---- inputs --------------------------------------------------------------------

def read_config(path):
    cfg = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            for k, v in json.loads(line).items():
                cfg.setdefault(k, {}).update(v)
    return cfg


def share_latency_cells(solo, cfg, model):
    """Measured (batch, share%) -> latency ms: every solo-table point, plus the iGniter
    config's gpulatency points the solo table lacks (b16 and b32 at 10 % and 100 %),
    converted to the solo table's convention by adding the batch's PCIe transfer time
    batch * transferdata / bandwidth (the config's latency is kernel time only; the
    solo table includes the copies: see docs/gpu-model.md, where the two agree within
    2 % on the cells both give)."""
    cells = {}
    for b, row in solo[model]["latency"].items():
        for s, v in row.items():
            cells[(int(b), float(s))] = float(v)
    bw = float(cfg["hardware"]["bandwidth"])               # bytes per ms
    transfer = float(cfg[model]["transferdata"])           # bytes per request, in + out
    for i, b in enumerate(CONFIG_BATCHES):
        for j, s in enumerate(CONFIG_SHARES):
            key = (b, float(s))
            if key in cells:
                continue
            cells[key] = float(cfg[model]["gpulatency"][i][j]) + b * transfer / bw
    return cells


def util_cells(solo, model, kind):
    return {(int(b), float(s)): float(v)
            for b, row in solo[model][kind].items() for s, v in row.items()}


def triples(cells, digits=None):
    out = []
    for (b, s) in sorted(cells):
        v = cells[(b, s)]
        out.append([b, int(s) if s == int(s) else s, round(v, digits) if digits else v])
    return out


# ---- pair analysis ---------------------------------------------------------------

def pair_rows(solo, pairs):
    """(victim, aggressor, batch_v, batch_a, share_v, share_a, measured, solo) for both
    models of every measured co-location."""
    rows = []
    for m1, m2, b1, b2, p1, l1, l2 in pairs["latency"]:
        p2 = 100 - p1
        s1 = solo[m1]["latency"][str(b1)][share_key(p1)]
        s2 = solo[m2]["latency"][str(b2)][share_key(p2)]
        rows.append((m1, m2, b1, b2, p1, p2, l1, s1))
        rows.append((m2, m1, b2, b1, p2, p1, l2, s2))
    return rows


def dump(value, indent=0):
    """JSON with short arrays (table rows) on one line, for readable diffs."""
    pad = "  " * indent
    if isinstance(value, dict):
        if indent > 0 and all(not isinstance(v, (dict, list)) for v in value.values()):
            return "{" + ", ".join(json.dumps(k) + ": " + dump(v) for k, v in value.items()) + "}"
        inner = ",\n".join(pad + "  " + json.dumps(k) + ": " + dump(v, indent + 1)
                           for k, v in value.items())
        return "{\n" + inner + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if all(not isinstance(v, (dict, list)) for v in value):
            return "[" + ", ".join(dump(v) for v in value) + "]"
        inner = ",\n".join(pad + "  " + dump(v, indent + 1) for v in value)
        return "[\n" + inner + "\n" + pad + "]"
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


# The batch_share model (docs/gpu-model.md) of iGniter's V100 rows: the v100_igniter group
# of the joint fit that `clustersim calibrate` runs on the shipped pair data of every GPU type
# at once (its "Joint fit" section: z shared with Gpulet's A100 rows, no victim term), and the
# scale of each measured ordered pair on it; copied from its report to 4 significant digits.
# tests/gpu checks they equal the fit. The built-in default is the same model.
FIT = {"c": 0.08085, "batch_exponent": 0.1395, "share_exponent": 0.4256}
FIT_SCALES = {("alexnet", "resnet50"): 1.247, ("resnet50", "alexnet"): 1.153,
              ("resnet50", "vgg19"): 0.8293, ("vgg19", "resnet50"): 0.6016,
              ("vgg19", "ssd"): 1.073, ("ssd", "vgg19"): 1.111}


def build(src):
    solo_path = os.path.join(src, "solo_latency_by_batch_and_mps.json")
    pair_path = os.path.join(src, "pair_interference.json")
    cfg_path = os.path.join(src, "igniter_config.jsonl")
    with open(solo_path, encoding="utf-8") as f:
        solo = json.load(f)
    with open(pair_path, encoding="utf-8") as f:
        pairs = json.load(f)
    cfg = read_config(cfg_path)
    hashes = ("solo_latency_by_batch_and_mps.json (sha256 %s...), pair_interference.json "
              "(sha256 %s...) and igniter_config.jsonl (sha256 %s...)"
              % (sha256_short(solo_path), sha256_short(pair_path), sha256_short(cfg_path)))

    # -- interference file
    models = []
    full_tables = {}
    for m in MODELS:
        cells = share_latency_cells(solo, cfg, m)
        # Complete from the numbers as written (6 decimals), as the C loader does.
        cells = {k: round(v, 6) for k, v in cells.items()}
        full_tables[m] = complete(cells)
        models.append({
            "model": m,
            "share_latency": triples(cells, 6),
            "l2_util": triples(util_cells(solo, m, "l2cache"), 4),
            "dram_util": triples(util_cells(solo, m, "dram"), 4),
        })
    rows = pair_rows(solo, pairs)
    pair_out = []
    seen = []
    for r in rows:
        if (r[0], r[1]) not in seen:
            seen.append((r[0], r[1]))
    for v, a in seen:
        ratios = [r[6] / r[7] for r in rows if (r[0], r[1]) == (v, a)]
        pair_out.append({"victim": v, "aggressor": a, "scale": FIT_SCALES[(v, a)],
                         "samples": len(ratios)})
    interference = {
        "format": "clustersim-interference",
        "version": 1,
        "source": (
            "Converted by tools/convert_igniter.py from %s. Data: %s. share_latency: the solo "
            "table's latency (ms, one batch alone under an MPS share, copies included) for "
            "batch 1..32 at shares 20/40/50/60/80 %% (plus 10 and 100 %% at batch 1), and "
            "igniter_config's gpulatency at batch 16 and 32 for shares 10 and 100 %% plus the "
            "PCIe transfer time batch x transferdata / 10,000,000 bytes/ms (kernel time + "
            "copies, the solo table's convention). l2_util/dram_util: the solo table's L2 "
            "cache and DRAM utilisation (%% of peak). fallback: the batch_share model "
            "slowdown = 1 + c b_a^x (4 s_a s_v)^z fitted by `clustersim calibrate` (log least "
            "squares) on the 750 measured latencies of pair_interference.json (two models under "
            "MPS with shares p and 100-p, batches 2..32) against the solo latency at the same "
            "batch and share; pairs: the scale on that model's excess of each measured ordered "
            "pair, fitted the same way on its 125 co-locations (docs/gpu-model.md)."
            % (hashes, IGNITER)),
        "description": ("NVIDIA Tesla V100-SXM2-16GB (AWS p3.2xlarge), MPS, TensorRT 8.0.1.6, "
                        "FP32, as measured by iGniter"),
        "models": models,
        "pairs": pair_out,
        "fallback": dict({"form": "batch_share"}, **FIT),
        "combine": {"rule": "norm"},
    }

    # -- profile file (isolated latency = the completed 100 % column)
    prof_models = []
    for m in MODELS:
        table = full_tables[m]
        points = []
        for b in range(1, 33):
            v, measured = table[(b, 100.0)]
            p = {"batch": b, "latency_ms": round(v, 6)}
            if not measured:
                p["note"] = "derived: 80% share latency x interpolated 100%/80% ratio"
            elif (b, 100.0) in [(16, 100.0), (32, 100.0)]:
                p["note"] = "igniter_config gpulatency + PCIe transfer time"
            points.append(p)
        prof_models.append({
            "gpu": "v100_igniter", "model": m,
            "input_bytes": int(cfg[m]["inputdata"]), "output_bytes": int(cfg[m]["outputdata"]),
            "batches": points,
        })
    profile = {
        "format": "clustersim-profile",
        "version": 1,
        "source": (
            "Converted by tools/convert_igniter.py from %s. Data: %s. latency_ms: one batch "
            "alone with 100 %% of the SMs (MPS share 100 %%), copies included: measured at "
            "batch 1 (solo table), batch 16 and 32 from igniter_config gpulatency plus the "
            "PCIe transfer time; other batch sizes are derived from the measured 80 %% share "
            "latency of the same batch times the 100 %%/80 %% ratio interpolated in batch "
            "(docs/gpu-model.md, table completion) and carry a note. Payload sizes: "
            "igniter_config inputdata/outputdata. No Mreq/Creq: iGniter does not give them."
            % (hashes, IGNITER)),
        "gpu_types": [{
            "name": "v100_igniter",
            "description": ("NVIDIA Tesla V100-SXM2-16GB (AWS p3.2xlarge) as measured by iGniter "
                            "(TensorRT 8.0.1.6, FP32). A type of its own so that it can be "
                            "loaded next to v100_thesis.json (different framework, different "
                            "latencies for the same model names). memory_bytes: nominal 16 GiB."),
            "sm_count": 80, "memory_bytes": 16 * GIB,
            # iGniter measured on a p3.2xlarge: the thesis' V100 price is that instance's.
            **V100_PRICE,
        }],
        "models": prof_models,
    }

    # -- calibration file
    prow = []
    for (row, std) in zip(pairs["latency"], pairs["std"]):
        assert row[:5] == std[:5]
        prow.append(row + std[5:])
    calibration = {
        "format": "clustersim-calibration",
        "version": 1,
        "source": (
            "Written by tools/convert_igniter.py. pairs: pair_interference.json (%s) with its "
            "std-dev columns. colocations: the iGniter repository README example "
            "(\"Understanding the Results\", measured GPU latency of each model with the "
            "placement of its algorithm's example) and three observations of %s, section "
            "6.2 (values read off the thesis' figures and text, hence 'approx')."
            % (IGNITER, THESIS)),
        "pairs": {
            "columns": ["model1", "model2", "batch1", "batch2", "mps_pct1", "latency1_ms",
                        "latency2_ms", "std1_ms", "std2_ms"],
            "rows": prow,
        },
        "colocations": [
            {"name": "igniter-readme-example", "profile": "interference", "mps": True,
             "approx": False,
             "note": ("one V100, Triton with dynamic batching; requests at a constant rate, "
                      "simulated as whole batches every batch/rate seconds"),
             "workers": [
                 {"model": "alexnet", "batch": 4, "share_pct": 10, "rate_rps": 500,
                  "measured_ms": 6.612},
                 {"model": "resnet50", "batch": 8, "share_pct": 30, "rate_rps": 400,
                  "measured_ms": 18.458},
                 {"model": "vgg19", "batch": 6, "share_pct": 37.5, "rate_rps": 200,
                  "measured_ms": 27.702}]},
            {"name": "thesis-6.2.1-obs4", "profile": "v100", "mps": True, "approx": True,
             "note": ("WSM-MILP, GPU 3: resnet50 b4 and alexnet b4 co-located without MPS "
                      "shares; resnet50 about 8 ms instead of 6.8 ms (Figure 6.7b); achieved "
                      "submission rate of resnet50 433.34 req/s, alexnet target 500 req/s"),
             "workers": [
                 {"model": "resnet50", "batch": 4, "share_pct": 0, "rate_rps": 433.34,
                  "measured_ms": 8.0},
                 {"model": "alexnet", "batch": 4, "share_pct": 0, "rate_rps": 500}]},
            {"name": "thesis-6.2.1-obs2", "profile": "v100", "mps": True, "approx": True,
             "note": ("WAO-Usher, GPU 0: resnet50 b4 limited to an MPS share of 17.55 % "
                      "(its WAO); about 4x its isolated 6.8 ms, still so after the co-located "
                      "models finished (Figure 6.4a), so simulated alone"),
             "workers": [
                 {"model": "resnet50", "batch": 4, "share_pct": 17.55, "rate_rps": 500,
                  "measured_ms": 27.2}]},
            {"name": "thesis-6.2.2-obs1", "profile": "v100", "mps": True, "approx": True,
             "note": ("WAO-Usher: bert b4 alone on GPU 0 under an MPS share of 31.83 % "
                      "(its WAO): about 180 ms instead of 34.1 ms"),
             "workers": [
                 {"model": "bert", "batch": 4, "share_pct": 31.83, "rate_rps": 100,
                  "measured_ms": 180.0}]},
        ],
    }
    return {"igniter_v100.json": interference, "igniter_v100_profile.json": profile,
            "gpu_calibration.json": calibration}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source-dir", default=DEFAULT_SRC)
    ap.add_argument("--out-dir", default=os.path.join(REPO, "data", "profiles"))
    ap.add_argument("--check", action="store_true",
                    help="compare with the committed files instead of writing; exit 1 if stale")
    args = ap.parse_args()
    outputs = build(args.source_dir)
    stale = False
    for name, doc in outputs.items():
        text = dump(doc) + "\n"
        path = os.path.join(args.out_dir, name)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    old = f.read()
            except OSError:
                old = None
            if old != text:
                print("convert_igniter: %s is stale" % path, file=sys.stderr)
                stale = True
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print("wrote %s" % path)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
