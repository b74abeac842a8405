#!/usr/bin/env python3
"""Convert the published profile tables (CSV) into clustersim profile files.

Run by hand when the source tables change; the outputs are committed:

    python3 tools/convert_profiles.py [--source-dir DIR] [--out-dir DIR] [--check]

Inputs (in --source-dir, default ../shared/data/profiles next to the repo):
  v100_thesis_tableA1.csv       V100 latency, Mreq and Creq per model and batch
  v100_models_meta.csv          request/result payload size per V100 model
  symphony_linear_profiles.csv  alpha/beta linear latency models and SLOs
Outputs (in --out-dir, default data/profiles of the repo):
  v100_thesis.json, symphony_linear.json   (format: docs/profiles.md)
  symphony_table2.json          Symphony Table 2's two rows (transcribed below)
  symphony_fig6a/beta_N.json    Symphony Figure 6a's synthetic profiles
  symphony_fig2.json            Symphony Figure 2's ten ResNet models (section 5.4)

Numbers are copied as decimal text (no float round trip), so a value in the
output reads exactly as in the table; only seconds become milliseconds.
Each output's "source" names the input files, the sha256 of each, and the
paper tables they transcribe. --check compares instead of writing and exits
1 if a committed output is stale. Python 3 standard library only.
"""

import argparse
import csv
import hashlib
import io
import json
import os
import sys
from decimal import Decimal

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

THESIS = ('P. Elvinger, "Towards resource and interference-aware scheduling of ML '
          'workloads", Master\'s thesis, ETH Zurich, 2024, doi:10.3929/ethz-b-000697738')
SYMPHONY = ('L. Chen et al., "Symphony: Optimized DNN Model Serving using Deferred Batch '
            'Scheduling", arXiv:2308.07470v2, 2024')

GIB = 1024 ** 3

# Hourly prices of one GPU (docs/profiles.md, "Prices"): the on-demand price
# of a cloud instance per GPU it holds, with where and when it was read. A
# type no cloud offers (the 1080 Ti, a synthetic GPU) gets none: a made-up
# price would look like data.
V100_PRICE = {
    "price_per_hour": 3.06,
    "price_source": ("AWS EC2 On-Demand, p3.2xlarge (1 x V100-SXM2-16GB, 8 vCPU, 61 GiB), "
                     "US East (N. Virginia), Linux: $3.06 per instance-hour, its list price "
                     "since the P3 launch (2017-10), as found in copies of AWS's price list "
                     "read 2026-11; the instance price, CPU and memory included"),
}
A100_PRICE = {
    # 21.957642 / 8 GPUs
    "price_per_hour": 2.74470525,
    "price_source": ("AWS EC2 On-Demand, p4d.24xlarge (8 x A100-SXM4-40GB, 96 vCPU, 1152 GiB), "
                     "US East (N. Virginia), Linux: $21.957642 per instance-hour after AWS's "
                     "June 2025 cut ($32.7726 before), divided by its 8 GPUs; as retrieved "
                     "2026-11-09 by the data-receipts GPU price comparison "
                     "(github.com/datareceipts/data-receipts, 109-gpu-pricing). Symphony does "
                     "not say which A100: the 40 GB one is assumed"),
}

V100 = {
    "name": "v100",
    "description": ("NVIDIA Tesla V100-SXM2-16GB as profiled in the thesis (PyTorch 2.4, "
                    "CUDA 12.4). memory_bytes is the nominal 16 GiB that the thesis' Mreq "
                    "percentages refer to."),
    "sm_count": 80,
    "memory_bytes": 16 * GIB,
    **V100_PRICE,
}
GTX_1080TI = {
    "name": "1080ti",
    "description": ("NVIDIA GeForce GTX 1080 Ti as profiled by Symphony (TensorFlow 2.5). "
                    "memory_bytes is the nominal 11 GiB. No cloud offers it (a consumer card), "
                    "so it has no price: a scenario gives one (cluster.nodes[i].price_per_hour)."),
    "sm_count": 28,
    "memory_bytes": 11 * GIB,
}
A100 = {
    "name": "a100",
    "description": ("NVIDIA A100 as profiled by Symphony (TensorFlow 2.5). The paper does not "
                    "say whether the 40 GB or the 80 GB model was used, so memory_bytes is 0 "
                    "(unknown); both have 108 SMs."),
    "sm_count": 108,
    "memory_bytes": 0,
    **A100_PRICE,
}


def sha256_short(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def read_csv(path):
    """Rows of a CSV whose leading '#' lines are comments, as dicts."""
    with open(path, newline="", encoding="utf-8") as f:
        lines = [line for line in f if not line.startswith("#")]
    return list(csv.DictReader(io.StringIO("".join(lines))))


class Num:
    """A decimal number that json output writes verbatim (normalised)."""

    def __init__(self, text):
        self.value = Decimal(text)

    def __str__(self):
        d = self.value.normalize()
        # normalize() turns 100 into 1E+2: print plain positional notation.
        return format(d, "f")


def num(text, scale=1):
    n = Num(text)
    n.value = n.value * scale
    return n


def warn(msg):
    print("convert_profiles: warning: " + msg, file=sys.stderr)


def dump(value, indent=0):
    """JSON text: objects of scalars on one line, nested containers indented.

    Keeps a batch table one row per line so that diffs of the data files stay
    readable; json.dumps cannot do that mix.
    """
    pad = "  " * indent
    if isinstance(value, Num):
        return str(value)
    if isinstance(value, dict):
        flat = all(not isinstance(v, (dict, list)) or
                   (isinstance(v, dict) and all(not isinstance(x, (dict, list)) for x in v.values()))
                   for v in value.values())
        if flat and indent > 0:
            return "{" + ", ".join(json.dumps(k) + ": " + dump(v, indent) for k, v in value.items()) + "}"
        inner = ",\n".join(pad + "  " + json.dumps(k) + ": " + dump(v, indent + 1)
                           for k, v in value.items())
        return "{\n" + inner + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        inner = ",\n".join(pad + "  " + dump(v, indent + 1) for v in value)
        return "[\n" + inner + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


def convert_v100(src_dir):
    table_path = os.path.join(src_dir, "v100_thesis_tableA1.csv")
    meta_path = os.path.join(src_dir, "v100_models_meta.csv")
    meta = {row["model"]: row for row in read_csv(meta_path)}
    models = {}  # insertion order = table order
    for row in read_csv(table_path):
        name, batch = row["model"], int(row["batch"])
        lat_s = Decimal(row["latency_s"])
        # The table gives latency to 0.1 ms and throughput to 0.01 req/s; they
        # should agree to within the latency's rounding. A few rows do not
        # (data/profiles/README.md): report, keep both as published.
        if row["throughput_rps"]:
            implied = batch / Decimal(row["throughput_rps"])
            if abs(implied - lat_s) > Decimal("0.00005"):
                warn("%s b%d: batch/throughput = %.5f s but latency_s = %s s" %
                     (name, batch, implied, row["latency_s"]))
        point = {"batch": batch, "latency_ms": num(row["latency_s"], 1000)}
        if row["throughput_rps"]:
            point["throughput_rps"] = num(row["throughput_rps"])
        if row["mem_cap_pct"]:
            point["mreq_pct"] = num(row["mem_cap_pct"])
        creq = {}
        for key, col in (("ao", "achieved_occupancy_pct"), ("wao", "wavg_achieved_occupancy_pct"),
                         ("wsm", "wavg_sm_util_pct")):
            if row[col]:
                creq[key] = num(row[col])
        if creq:
            point["creq_pct"] = creq
        if row["note"]:
            point["note"] = row["note"]
        models.setdefault(name, []).append(point)

    out_models = []
    for name, points in models.items():
        if name not in meta:
            sys.exit("convert_profiles: %s has no row in v100_models_meta.csv" % name)
        m = meta[name]
        out_models.append({
            "gpu": "v100",
            "model": name,
            "input_bytes": int(m["input_bytes_per_request"]),
            "output_bytes": int(m["output_bytes_per_request"]),
            "batches": sorted(points, key=lambda p: p["batch"]),
        })
    for name in meta:
        if name not in models:
            warn("%s is in v100_models_meta.csv but not in the table" % name)

    source = (
        "Converted by tools/convert_profiles.py from v100_thesis_tableA1.csv (sha256 %s...) "
        "and v100_models_meta.csv (sha256 %s...). Profiles: %s, Table A.1 (also Tables 5.2, "
        "6.4, 6.5): one batch run in isolation on all SMs; latency_ms is the table's latency "
        "column (published to 0.1 ms), throughput_rps its throughput column, mreq_pct its "
        "memory-capacity column (%% of 16 GB), creq_pct its achieved occupancy (ao), "
        "weighted average achieved occupancy (wao) and weighted average SM utilisation (wsm); "
        "cells the source could not give are absent and note \"uncertain\" marks rows partly "
        "garbled in the source text. Payload sizes: same thesis, Tables 6.2 and 6.3 and "
        "section 6.1.2. No linear model is given: the loader fits one."
        % (sha256_short(table_path), sha256_short(meta_path), THESIS))
    return {"format": "clustersim-profile", "version": 1, "source": source,
            "gpu_types": [V100], "models": out_models}


def convert_symphony(src_dir):
    path = os.path.join(src_dir, "symphony_linear_profiles.csv")
    gpus = {"1080ti": GTX_1080TI, "a100": A100}
    out_models = []
    seen = set()
    for row in read_csv(path):
        gpu, name = row["gpu"], row["model"]
        if gpu not in gpus:
            sys.exit("convert_profiles: unknown GPU %r in %s" % (gpu, path))
        if (gpu, name) in seen:
            sys.exit("convert_profiles: %s on %s twice in %s" % (name, gpu, path))
        seen.add((gpu, name))
        alpha, beta = Decimal(row["alpha_ms"]), Decimal(row["beta_ms"])
        # beta_over_alpha is derived; it only serves to catch transcription slips.
        ratio = Decimal(row["beta_over_alpha"])
        if abs(beta / alpha - ratio) > Decimal("0.005") * max(ratio, Decimal(1)):
            warn("%s on %s: beta/alpha = %.3f but beta_over_alpha = %s" %
                 (name, gpu, beta / alpha, row["beta_over_alpha"]))
        out_models.append({
            "gpu": gpu,
            "model": name,
            "slo_ms": num(row["slo_ms"]),
            "linear": {"alpha_ms": num(row["alpha_ms"]), "beta_ms": num(row["beta_ms"])},
        })
    source = (
        "Converted by tools/convert_profiles.py from symphony_linear_profiles.csv (sha256 "
        "%s...). Profiles: %s, Appendix C, Table 3 (GeForce 1080 Ti) and Table 4 (A100): "
        "latency_ms(b) = alpha_ms * b + beta_ms measured with TensorFlow 2.5; slo_ms is the "
        "SLO the paper assigns so that each model can run with batch size >= 4. The paper "
        "publishes no per-batch points, Mreq, Creq or payload sizes."
        % (sha256_short(path), SYMPHONY))
    return {"format": "clustersim-profile", "version": 1, "source": source,
            "gpu_types": [GTX_1080TI, A100], "models": out_models}

# Symphony, Table 2: the two models of its batching analysis and measured
# goodput, on 8 GeForce 1080 Ti GPUs. These rows differ from Appendix C's
# Table 3 for the same model names (ResNet50 there: 2.050 / 5.378 ms, SLO 27
# ms), so they get a file of their own.
TABLE2_ROWS = [("ResNet50", "1.053", "5.072", "25"),
               ("InceptionResNetV2", "5.090", "18.368", "70")]

# Symphony, section 5.1 and Figure 6a: ten models sharing one synthetic
# profile, alpha = 1 ms and beta from 1 to 15 ms, SLO = 2 l(8).
FIG6A_BETAS = [1, 2, 4, 6, 8, 10, 12, 15]
FIG6A_MODELS = 10


def symphony_table2():
    models = [{"gpu": "1080ti", "model": name, "slo_ms": num(slo),
               "linear": {"alpha_ms": num(alpha), "beta_ms": num(beta)}}
              for name, alpha, beta, slo in TABLE2_ROWS]
    source = ("Written by tools/convert_profiles.py from %s, Table 2 (\"Theoretical analysis of "
              "batching and empirical measurement of goodput\"): latency_ms(b) = alpha_ms * b + "
              "beta_ms and the SLO of each model, on the paper's 8 GeForce 1080 Ti GPUs. No "
              "payload sizes are published: run with a zero network." % SYMPHONY)
    return {"format": "clustersim-profile", "version": 1, "source": source,
            "gpu_types": [GTX_1080TI], "models": models}


def symphony_fig6a(beta):
    gpu = {"name": "gpu", "description": ("Synthetic GPU of Symphony's Figure 6a: only the "
                                          "linear latency model below is known."),
           "sm_count": 80, "memory_bytes": 0}
    models = [{"gpu": "gpu", "model": "m%d" % i, "slo_ms": 2 * (8 + beta),
               "linear": {"alpha_ms": 1, "beta_ms": beta}} for i in range(FIG6A_MODELS)]
    source = ("Written by tools/convert_profiles.py after %s, section 5.1 and Figure 6a: %d "
              "models with one synthetic profile, alpha = 1 ms, beta = %d ms, SLO = 2 l(8) = %d "
              "ms. No payload sizes: run with a zero network." %
              (SYMPHONY, FIG6A_MODELS, beta, 2 * (8 + beta)))
    return {"format": "clustersim-profile", "version": 1, "source": source,
            "gpu_types": [gpu], "models": models}


def symphony_fig2():
    """Section 5.4's setting of Figure 2: "10 ResNet models with 100ms latency
    SLO": ten copies of Table 2's ResNet50 (the paper names no other ResNet),
    each its own model, on the 1080 Ti."""
    name, alpha, beta, _ = [row for row in TABLE2_ROWS if row[0] == "ResNet50"][0]
    models = [{"gpu": "1080ti", "model": "resnet50_%d" % i, "slo_ms": 100,
               "linear": {"alpha_ms": num(alpha), "beta_ms": num(beta)}} for i in range(10)]
    source = ("Written by tools/convert_profiles.py after %s, section 5.4 (the setting of "
              "Figure 2: \"10 ResNet models with 100ms latency SLO with 24 emulated GPUs\"): ten "
              "copies of Table 2's %s (latency_ms(b) = %s b + %s) with an SLO of 100 ms. No payload "
              "sizes are published: run with a zero network." % (SYMPHONY, name, alpha, beta))
    return {"format": "clustersim-profile", "version": 1, "source": source,
            "gpu_types": [GTX_1080TI], "models": models}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source-dir",
                    default=os.path.join(os.path.dirname(REPO), "shared", "data", "profiles"))
    ap.add_argument("--out-dir", default=os.path.join(REPO, "data", "profiles"))
    ap.add_argument("--check", action="store_true",
                    help="compare with the files in --out-dir instead of writing them")
    args = ap.parse_args()

    outputs = {
        "v100_thesis.json": convert_v100(args.source_dir),
        "symphony_linear.json": convert_symphony(args.source_dir),
        "symphony_table2.json": symphony_table2(),
        "symphony_fig2.json": symphony_fig2(),
    }
    for beta in FIG6A_BETAS:
        outputs["symphony_fig6a/beta_%d.json" % beta] = symphony_fig6a(beta)
    stale = []
    for name, doc in outputs.items():
        text = dump(doc) + "\n"
        json.loads(text)  # the emitter must produce valid JSON
        path = os.path.join(args.out_dir, name)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(path)
            except FileNotFoundError:
                stale.append(path)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print("wrote " + path)
    if stale:
        print("stale (re-run tools/convert_profiles.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
