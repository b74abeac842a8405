#!/usr/bin/env python3
"""The share rule per measured source and the MIG rule, computed here independently of the C
code (Python standard library: a closed-form line fit, a golden-section search for the one
parameter, the interpolated quantile GSL uses), and compared with what `clustersim calibrate`
prints (docs/gpu-model.md, "The MPS share rule against three sources" and "MIG").

    check_share_mig.py CLUSTERSIM SOURCE_ROOT

Checked: for Gpulet's and RaPP's measured files, the pooled median / p90 / max of every variant
(rule leaving one model out, in sample, e = 0, the power rule, the shipped e) and e itself; for
ParvaGPU's MIG tables, the pooled row of every variant, the rule's processes, kappa and kappa
without each model.
Figures to 0.1 percentage point as printed, e and kappa to 1e-3. Exit 1 on a mismatch.
"""

import csv
import json
import math
import os
import re
import subprocess
import sys

SHIPPED_E = 0.0989  # CS_SHARE_RULE_DEFAULT_SERIAL


def line_fit(xs, ys):
    """Least squares y = a x + b as the profile loader fits it: through the origin when b < 0,
    slope 0 when it would be negative. Returns the slope."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    a = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    if my - a * mx < 0:
        a = sum(x * y for x, y in zip(xs, ys)) / sum(x * x for x in xs)
    return max(a, 0.0)


def golden(f, lo, hi, tol=1e-10):
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    while b - a > tol:
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return (a + b) / 2


def quantile(sorted_x, q):
    """GSL's gsl_stats_quantile_from_sorted_data: linear between order statistics."""
    n = len(sorted_x)
    delta = (n - 1) * q
    i = int(math.floor(delta))
    if i + 1 < n:
        return (1 - (delta - i)) * sorted_x[i] + (delta - i) * sorted_x[i + 1]
    return sorted_x[i]


def stats(errs):
    s = sorted(errs)
    return (100 * quantile(s, 0.5), 100 * quantile(s, 0.9), 100 * s[-1])


# ---- the share rule -------------------------------------------------------------------------

def share_cells(path):
    rows = [r for r in csv.DictReader(open(path, newline="")) if r["kind"] == "isolated"
            and not r.get("mig_gpcs") and (not r.get("time_quota_pct")
                                           or float(r["time_quota_pct"]) >= 100)]
    lat = {}
    for r in rows:
        s = float(r["share_pct"]) if r["share_pct"] else 100.0
        lat[(r["model"], int(r["batch"]), min(s, 100.0))] = float(r["latency_ms"])
    cells = []
    for m in sorted({k[0] for k in lat}):
        full = {b: v for (mm, b, s), v in lat.items() if mm == m and s == 100.0}
        if len(full) < 2:
            continue
        bs = sorted(full)
        alpha = line_fit(bs, [full[b] for b in bs])
        for (mm, b, s), v in lat.items():
            if mm == m and s < 100.0 and b in full:
                f = min(1.0, max(0.0, alpha * b / full[b]))
                cells.append((m, s / 100.0, f, v / full[b]))
    return cells


def rule(e, c):
    _, r, f, _ = c
    return 1 + (1 - e) * f * (1 / r - 1)


def fit_e(cells):
    return golden(lambda e: sum(math.log(rule(e, c) / c[3]) ** 2 for c in cells), -1.0, 1.0)


def share_figures(cells):
    e_all = fit_e(cells)
    lomo = {m: fit_e([c for c in cells if c[0] != m]) for m in {c[0] for c in cells}}
    err = lambda pred: stats([abs(pred(c) - c[3]) / c[3] for c in cells])
    return {"rule, lomo": err(lambda c: rule(lomo[c[0]], c)),
            "rule, in sample": err(lambda c: rule(e_all, c)),
            "rule, e = 0": err(lambda c: rule(0.0, c)),
            "power (gamma)": err(lambda c: 1 / c[1]),
            "rule, e shipped": err(lambda c: rule(SHIPPED_E, c)),
            "e": e_all}


# ---- MIG ------------------------------------------------------------------------------------

def mig_obs(path):
    doc = json.load(open(path))
    obs, curves, procs = [], {}, []
    for m in doc["models"]:
        t = m.get("mig")
        if not t:
            continue
        G = t["gpu_gpcs"]
        lat = {}
        for c in t["cells"]:
            v = c["batch"] * 1000 / c["throughput_per_process"] if "throughput_per_process" in c \
                else c["latency_ms"]
            lat[(c["gpcs"], c["batch"], c["processes"])] = v
        whole = {b: v for (g, b, p), v in lat.items() if g == G and p == 1}
        bs = sorted(whole)
        curves[m["model"]] = (bs, [whole[b] for b in bs], line_fit(bs, [whole[b] for b in bs]))
        for (g, b, p), v in lat.items():
            if p == 1 and g < G and b in whole:
                obs.append((m["model"], b, g / G, v / whole[b]))
            if p > 1:  # the measured per-process ratio, at least 1 as the table gives it
                procs.append((m["model"], b, g / G, p, max(1.0, v / lat[(g, b, 1)])))
    return obs, curves, procs


def curve_at(curve, x):
    bs, ls, slope = curve
    if x <= bs[0]:
        return max(ls[0] - slope * (bs[0] - x), ls[0] * x / bs[0])
    for i in range(1, len(bs)):
        if x <= bs[i]:
            return ls[i - 1] + (ls[i] - ls[i - 1]) * (x - bs[i - 1]) / (bs[i] - bs[i - 1])
    return ls[-1] + slope * (x - bs[-1])


def mig_rule(curves, o, k):
    m, b, f, _ = o
    return curve_at(curves[m], b * f ** -k) / curve_at(curves[m], b)


def fit_kappa(obs, curves):
    return golden(lambda k: sum(math.log(mig_rule(curves, o, k) / o[3]) ** 2 for o in obs),
                  0.05, 3.0)


def mig_figures(obs, curves, procs):
    k_all = fit_kappa(obs, curves)
    lomo = {m: fit_kappa([o for o in obs if o[0] != m], curves) for m in curves}
    err = lambda pred: stats([abs(pred(o) - o[3]) / o[3] for o in obs])

    def procs_rule(o):
        m, b, f, p, _ = o
        x = b * (f ** -lomo[m] if f < 1 else 1.0)
        return curve_at(curves[m], p * x) / curve_at(curves[m], x)
    return {"rule, lomo": err(lambda o: mig_rule(curves, o, lomo[o[0]])),
            "rule, in sample": err(lambda o: mig_rule(curves, o, k_all)),
            "rule, kappa = 1": err(lambda o: mig_rule(curves, o, 1.0)),
            "power (1/f)": err(lambda o: 1 / o[2]),
            "procs": stats([abs(procs_rule(o) - o[4]) / o[4] for o in procs]),
            "kappa": k_all, "lomo": lomo}


# ---- comparison -----------------------------------------------------------------------------

PCT = re.compile(r"(-?[0-9.]+)% /\s*(-?[0-9.]+)% /\s*(-?[0-9.]+)%")


def triples(line):
    return [tuple(float(x) for x in m) for m in PCT.findall(line)]


def main():
    cli, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    out = subprocess.run([cli, "calibrate"], check=True, capture_output=True, text=True,
                         cwd=root).stdout
    lines = out.splitlines()
    bad, n = [], [0]

    def close(what, got, want, tol):
        n[0] += 1
        if not abs(got - want) <= tol:
            bad.append(f"{what}: calibrate {got}, here {want:.4f}")

    share_variants = ["rule, lomo", "rule, in sample", "rule, e = 0", "power (gamma)",
                      "rule, e shipped"]
    for name in ("gpulet_a100_isolated.csv", "rapp_v100_sm_share.csv"):
        want = share_figures(share_cells(os.path.join(root, "data", "measured", name)))
        row = [l for l in lines if l.startswith(name)]
        if len(row) != 1:
            bad.append(f"{name}: no row in calibrate's output")
            continue
        got = triples(row[0])
        close(f"{name} e", float(row[0].split()[-1]), want["e"], 1e-3)
        for v, g in zip(share_variants, got):
            for what, a, b in zip(("median", "p90", "max"), g, want[v]):
                close(f"{name} {v} {what}", a, b, 0.051)
    obs, curves, procs = mig_obs(os.path.join(root, "data", "profiles",
                                              "a100_parvagpu_mig.json"))
    want = mig_figures(obs, curves, procs)
    start = next(i for i, l in enumerate(lines) if l.startswith("MIG rule"))
    pooled = next(l for l in lines[start:] if l.startswith("pooled"))
    for v, g in zip(["rule, lomo", "rule, in sample", "rule, kappa = 1", "power (1/f)"],
                    triples(pooled)):
        for what, a, b in zip(("median", "p90", "max"), g, want[v]):
            close(f"MIG {v} {what}", a, b, 0.051)
    rule_line = next(l for l in lines[start:] if "the MIG rule's, L(p b" in l)
    got = re.search(r"median ([0-9.]+)% / p90 ([0-9.]+)% / max ([0-9.]+)%", rule_line).groups()
    for what, a, b in zip(("median", "p90", "max"), map(float, got), want["procs"]):
        close(f"MIG processes rule {what}", a, b, 0.051)
    for l in lines[start:]:
        m = re.match(r"\s+kappa on every model: ([0-9.]+)", l)
        if m:
            close("kappa", float(m.group(1)), want["kappa"], 1e-3)
        m = re.match(r"\s+kappa without (\S+)\s+([0-9.]+)", l)
        if m:
            close(f"kappa without {m.group(1)}", float(m.group(2)), want["lomo"][m.group(1)],
                  1e-3)
    for b in bad:
        print("MISMATCH", b)
    # 2 files x (5 variants x 3 + e), 4 MIG variants x 3, processes x 3, kappa and 11
    # without a model
    if n[0] != 2 * 16 + 12 + 3 + 12:
        bad.append(f"{n[0]} figures compared, expected 59 (calibrate's output changed?)")
    for b in bad:
        print("MISMATCH", b)
    print(f"check_share_mig: {n[0]} figures, {len(bad)} mismatches; kappa {want['kappa']:.4f}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
