#!/usr/bin/env python3
"""Convert iGniter's coefficient file into the clustersim-igniter data file.

Run by hand when the source file changes; the output is committed:

    python3 tools/convert_igniter_coefficients.py [--source-dir DIR] [--out-dir DIR] [--check]

Input (in --source-dir, default ../shared/data/profiles/igniter_v100 next to the repo):
  igniter_config.jsonl   the coefficient file iGniter's provisioning algorithm reads: JSON
                         lines {"<model|hardware>": {"<key>": value}}, keys merged per object
Output (in --out-dir, default data/profiles of the repo):
  igniter_v100_coefficients.json   format "clustersim-igniter" version 1 (docs/policies.md,
                                   section "iGniter"), read by src/profiles/igniter_coef.c

The conversion only renames and regroups: every number is copied unchanged (Python's repr of
the parsed double, so it reads back bit for bit). Nothing is fitted here; the policy fits its
coefficients from these measurements when it loads the file, as iGniter's algorithm does when
it starts. Dropped keys, none of which the algorithm reads: "transferdata" (always inputdata +
outputdata; checked), "power_2" (power of the measured pair) and vgg19's "htddur" (a
host-to-device copy duration). The reference model of
the hardware scan (VGG-19) and the profiling grid (batch 1, 16, 32 x MPS share 10, 50, 100 %)
are hard-coded in iGniter's algorithm and written out here.
--check compares instead of writing and exits 1 if the committed output is stale.
Python 3 standard library only.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from convert_igniter import (  # noqa: E402
    DEFAULT_SRC, IGNITER, REPO, dump, read_config, sha256_short)

MODELS = ["alexnet", "resnet50", "vgg19", "ssd"]
GRID_BATCHES = [1, 16, 32]      # rows of gpulatency/power/frequency (iGniter: context.batchsize)
GRID_SHARES = [10, 50, 100]     # columns, MPS share % (iGniter: context.thread)
SCAN_MODEL = "vgg19"            # the hardware scan runs 1..5 copies of VGG-19
OUT_NAME = "igniter_v100_coefficients.json"


def num(v):
    """An integer-valued double as a JSON integer (1530, not 1530.0), else unchanged."""
    return int(v) if isinstance(v, float) and v.is_integer() else v


def table(rows):
    return [[num(float(x)) for x in row] for row in rows]


def build(src):
    cfg_path = os.path.join(src, "igniter_config.jsonl")
    cfg = read_config(cfg_path)
    hw = cfg["hardware"]
    n_scan = len(hw["power"])
    if not (len(hw["frequency"]) == len(hw["idletime"]) == n_scan):
        sys.exit("convert_igniter_coefficients: hardware power/frequency/idletime lengths differ")
    models = []
    for m in MODELS:
        c = cfg[m]
        if c["transferdata"] != c["inputdata"] + c["outputdata"]:
            sys.exit("convert_igniter_coefficients: %s transferdata != inputdata + outputdata" % m)
        if len(c["l2caches"]) != len(GRID_BATCHES):
            sys.exit("convert_igniter_coefficients: %s l2caches is not one per grid diagonal" % m)
        models.append({
            "model": m,
            "kernels": int(c["kernel"]),
            "input_bytes": int(c["inputdata"]),
            "output_bytes": int(c["outputdata"]),
            "idle_ms": num(c["idletime_1"]),
            "gpu_latency_ms": table(c["gpulatency"]),
            "power_w": table(c["power"]),
            "frequency_mhz": table(c["frequency"]),
            "l2_points": [{"batch": GRID_BATCHES[i], "share_pct": GRID_SHARES[i],
                           "l2_util_pct": num(float(c["l2caches"][i]))}
                          for i in range(len(GRID_BATCHES))],
            "pair": {
                "l2_util_pct": num(float(c["l2cache"])),
                "active_ms_alone": num(float(c["activetime_1"])),
                "active_ms_pair": num(float(c["activetime_2"])),
                "frequency_pair_mhz": num(float(c["frequency_2"])),
            },
        })
    return {
        "format": "clustersim-igniter",
        "version": 1,
        "source": (
            "Converted by tools/convert_igniter_coefficients.py from igniter_config.jsonl "
            "(sha256 %s...), the coefficient file of iGniter's provisioning algorithm. Data: %s. "
            "Key mapping (igniter_config -> here): hardware maxGPUfrequency -> "
            "max_frequency_mhz, maxGPUpower -> power_cap_w, idlepower -> idle_power_w, "
            "bandwidth -> pcie_bandwidth_bytes_per_ms, unit -> share_unit_pct (2.5 %% = 2 of "
            "the V100's 80 SMs); hardware power/frequency/idletime -> scan.power_w/"
            "frequency_mhz/idle_ms_per_kernel (1..5 concurrent copies of VGG-19); per model "
            "kernel -> kernels, inputdata/outputdata -> input_bytes/output_bytes, idletime_1 -> "
            "idle_ms, gpulatency/power/frequency -> gpu_latency_ms/power_w/frequency_mhz "
            "(rows batch 1, 16, 32; columns MPS share 10, 50, 100 %%), l2caches -> l2_points "
            "(at batch 1/share 10, 16/50, 32/100), l2cache/activetime_1/activetime_2/"
            "frequency_2 -> pair.l2_util_pct/active_ms_alone/active_ms_pair/frequency_pair_mhz. "
            "Numbers copied unchanged; not carried over because the algorithm does not read "
            "them: transferdata (= inputdata + outputdata), power_2, vgg19's htddur."
            % (sha256_short(cfg_path), IGNITER)),
        "description": ("NVIDIA Tesla V100-SXM2-16GB (AWS p3.2xlarge), MPS, TensorRT 8.0.1.6, "
                        "FP32: iGniter's own profiling of alexnet, resnet50, vgg19 and ssd"),
        "gpu_type": "v100_igniter",
        "hardware": {
            "max_frequency_mhz": num(float(hw["maxGPUfrequency"])),
            "power_cap_w": num(float(hw["maxGPUpower"])),
            "idle_power_w": num(float(hw["idlepower"])),
            "pcie_bandwidth_bytes_per_ms": num(float(hw["bandwidth"])),
            "share_unit_pct": num(float(hw["unit"])),
        },
        "scan": {
            "model": SCAN_MODEL,
            "copies": list(range(1, n_scan + 1)),
            "power_w": [num(float(x)) for x in hw["power"]],
            "frequency_mhz": [num(float(x)) for x in hw["frequency"]],
            "idle_ms_per_kernel": [num(float(x)) for x in hw["idletime"]],
        },
        "grid": {"batches": GRID_BATCHES, "shares_pct": GRID_SHARES},
        "models": models,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source-dir", default=DEFAULT_SRC)
    ap.add_argument("--out-dir", default=os.path.join(REPO, "data", "profiles"))
    ap.add_argument("--check", action="store_true",
                    help="compare with the committed file instead of writing; exit 1 if stale")
    args = ap.parse_args()
    text = dump(build(args.source_dir)) + "\n"
    path = os.path.join(args.out_dir, OUT_NAME)
    if args.check:
        try:
            with open(path, encoding="utf-8") as f:
                old = f.read()
        except OSError:
            old = None
        if old != text:
            print("convert_igniter_coefficients: %s is stale" % path, file=sys.stderr)
            return 1
        return 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
