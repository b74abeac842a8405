#!/usr/bin/env python3
"""Symphony Figure 6a in the simulator: eager's goodput as a share of deferred's.

Set-up (Symphony section 5.1): 10 models with one synthetic latency profile,
alpha = 1 ms and beta from 1 to 15 ms, SLO = 2 * l(8), 32 GPUs, Poisson
arrivals, no network or control delays. For each beta, the goodput (highest
load with every model's p99 <= SLO) of the deferred and the eager policy is
found with `clustersim search`; the table shows both and eager / deferred.

Usage: bench/symphony_fig6a.py [--clustersim PATH] [--betas 1,2,...] [--duration S]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def write_profile(path, beta):
    models = [{"gpu": "gpu", "model": f"m{i}", "input_bytes": 0, "output_bytes": 0,
               "linear": {"alpha_ms": 1.0, "beta_ms": beta}} for i in range(10)]
    doc = {"format": "clustersim-profile", "version": 1,
           "source": "synthetic profile of Symphony section 5.1 (Figure 6a)",
           "gpu_types": [{"name": "gpu", "description": "synthetic GPU", "sm_count": 80,
                          "memory_bytes": 0}],
           "models": models}
    with open(path, "w") as f:
        json.dump(doc, f)


def write_scenario(path, profile, policy, beta, duration):
    slo = 2 * (8 * 1.0 + beta)
    doc = {"seed": 1, "profiles": [profile], "cluster": {"gpus": 32, "gpu_type": "gpu"},
           "dispatch": {"policy": policy, "d_ctrl_us": 0, "d_data_us": 0, "d_resp_ms": 0},
           "clients": [{"model": f"m{i}", "rate": 100, "slo_ms": slo, "duration_s": duration,
                        "warmup_s": 1} for i in range(10)]}
    with open(path, "w") as f:
        json.dump(doc, f)


def goodput(clustersim, scenario):
    out = subprocess.run([clustersim, "search", scenario, "--json", "--max-multiplier", "256",
                          "--tolerance", "0.005"], check=True, capture_output=True, text=True)
    result = json.loads(out.stdout)
    if not result["passed"]:
        sys.exit(f"{scenario}: no load passes the SLO, so there is no goodput")
    return result["goodput_rps"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clustersim", default=os.path.join(HERE, "..", "build", "src", "cli",
                                                         "clustersim"))
    ap.add_argument("--betas", default=",".join(str(b) for b in range(1, 16)))
    ap.add_argument("--duration", type=float, default=10.0)
    args = ap.parse_args()
    print(f"{'beta/alpha':>10} {'slo_ms':>7} {'deferred_rps':>13} {'eager_rps':>10} {'eager/deferred':>15}")
    worst = None
    with tempfile.TemporaryDirectory() as tmp:
        for beta in [float(b) for b in args.betas.split(",")]:
            prof = os.path.join(tmp, "profile.json")
            write_profile(prof, beta)
            res = {}
            for policy in ("symphony", "eager"):
                sc = os.path.join(tmp, f"{policy}.json")
                write_scenario(sc, prof, policy, beta, args.duration)
                res[policy] = goodput(args.clustersim, sc)
            ratio = res["eager"] / res["symphony"] if res["symphony"] > 0 else float("nan")
            worst = ratio if worst is None else max(worst, ratio)
            print(f"{beta:>10g} {2 * (8 + beta):>7g} {res['symphony']:>13.0f} {res['eager']:>10.0f} "
                  f"{100 * ratio:>14.1f}%", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
