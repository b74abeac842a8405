#!/usr/bin/env python3
"""clustersim side by side with Vidur on the cases run_vidur.py keeps (issue 38, part 4).

    python3 bench/vidur/compare.py [--clustersim BIN] [--cases A,B] [--markdown FILE]
                                   [--check] [--repeat N] [--no-speed]
    python3 bench/vidur/compare.py --save-predictions CACHE

For each case under tests/llm/vidur_expected/ it writes a clustersim-llm-run config with Vidur's
deployment (model, device, node, TP, replicas, router, the replica scheduler and its settings,
the max_tokens Vidur's memory planner takes) and Vidur's own request list (CASE/requests.csv:
the same arrivals and lengths), runs `clustersim llm run` on it twice and compares TTFT, TBT
and end-to-end latency p50/p90/p99 with Vidur's (CASE/run.json's summary, from Vidur's
request_metrics.csv and its TBT quantiles):
  own     clustersim's tables (data/llm: the profiles linear in tokens, the attention sample
          bilinear), with "attention_outside_grid": "clamp", since the code trace's requests
          and Sarathi's small chunks leave the sampled grid (the table says how many batches);
  vidur   the same simulation on Vidur's own numbers: its random forests evaluated on its
          prediction grid (the *_predictions.csv of its cache, kept run-length encoded in
          tests/llm/vidur_expected/predictions/), expanded into clustersim's formats in a
          temporary data directory. Both simulators then time every batch from the same
          numbers, and what differs is the simulation itself.
--save-predictions CACHE writes that directory from a Vidur cache (run_vidur.py --keep-tmp
DIR leaves one in DIR/cache).

Percentiles: TTFT and e2e on both sides by linear interpolation between order statistics
(numpy's default: run.json's summary is computed so, clustersim's here from requests.csv);
TBT: Vidur's are the element of rank floor(q (n - 1)) of its per-token samples (the DDSketch
stand-in's, bench/vidur/README.md), clustersim's linear over all its samples (summary.json).

Speed (not with --no-speed): clustersim's whole process, best of --repeat runs, against Vidur's
warm-cache wall time (run.json) and its cold run (training.json).

--check exits 1 when a metric of the "vidur" run differs from Vidur's by more than --bound
PCT (default 5, the issue's bound). The suite runs it (llm_vidur) without timing and at
0.5 %: the two agree to about 0.1 % (the TBT quantile rule and times rounded to the ns), so
a change to the simulation that moves one number by less than 5 % still fails there. Exit 2 on bad input or a
failed run. Python 3 standard library only.
"""

import argparse
import csv
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
EXPECTED = os.path.join(ROOT, "tests", "llm", "vidur_expected")
MODEL = "meta-llama/Llama-2-7b-hf"
MODEL_FILE = "meta-llama__Llama-2-7b-hf.json"
OPS = ["input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
       "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"]
METRICS = [("ttft", "TTFT"), ("tbt", "TBT"), ("e2e", "e2e")]
QS = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)]
BOUND_PCT = 5.0


def quantile(values, q):
    """numpy's default (linear) quantile of a non-empty list."""
    s = sorted(values)
    h = q * (len(s) - 1)
    lo = math.floor(h)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (h - lo) * (s[hi] - s[lo])


def die(msg):
    print(f"compare: {msg}", file=sys.stderr)
    sys.exit(2)


# ---- Vidur's predictions: kept run-length encoded, expanded into clustersim tables ----------

PREDICTIONS = os.path.join(EXPECTED, "predictions")
# Vidur's operator name -> (its feature columns, the axis that runs are taken along).
PRED_OPS = {op: (["num_tokens"], "num_tokens") for op in OPS}
PRED_OPS["attn_decode"] = (["kv_cache_size", "batch_size"], "batch_size")
PRED_OPS["attn_prefill"] = (["kv_cache_size", "prefill_chunk_size"], "prefill_chunk_size")


def prediction_file(cache, name):
    """The one {name}_{hash}_predictions.csv of a Vidur cache directory."""
    found = [p for p in glob.glob(os.path.join(cache, f"{name}_*_predictions.csv"))
             if not p.endswith("_training_predictions.csv")
             and os.path.basename(p)[len(name) + 1:].count("_") == 1]
    if len(found) != 1:
        die(f"{cache}: expected one {name}_HASH_predictions.csv, found {len(found)} "
            f"(a cache of one grid only: run_vidur.py --keep-tmp DIR makes one)")
    return found[0]


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def save_predictions(cache):
    """Vidur's predictions in the cache, as runs of equal values along one axis (a forest is
    piecewise constant: 266,240 prefill points are 650 runs), each value as Vidur wrote it,
    into tests/llm/vidur_expected/predictions/OP.csv."""
    os.makedirs(PREDICTIONS, exist_ok=True)
    for op, (cols, axis) in PRED_OPS.items():
        src = prediction_file(cache, op)
        pts = []
        for r in read_rows(src):
            x = {c: int(float(r[c])) for c in cols if c != "prefill_chunk_size"}
            if "prefill_chunk_size" in cols:
                x["prefill_chunk_size"] = math.isqrt(int(round(float(r["prefill_chunk_size_squared"]))))
            pts.append((tuple(x[c] for c in cols), r["prediction"]))
        pts.sort(key=lambda p: p[0])
        outer = [c for c in cols if c != axis]
        runs = []
        for key, value in pts:
            at = key[cols.index(axis)]
            rest = tuple(key[cols.index(c)] for c in outer)
            if runs and runs[-1][0] == rest and runs[-1][3] == value and runs[-1][2] == at - 1:
                runs[-1][2] = at
            else:
                runs.append([rest, at, at, value])
        with open(os.path.join(PREDICTIONS, op + ".csv"), "w", newline="") as f:
            f.write(",".join(outer + [axis + "_from", axis + "_to", "prediction"]) + "\n")
            for rest, a, b, v in runs:
                f.write(",".join([str(x) for x in rest] + [str(a), str(b), v]) + "\n")
        print(f"{op}: {len(pts)} points, {len(runs)} runs ({os.path.basename(src)})")


def load_predictions(name):
    """{feature tuple: ms} from a kept run-length file, the features in PRED_OPS order."""
    cols, axis = PRED_OPS[name]
    outer = [c for c in cols if c != axis]
    out = {}
    for r in read_rows(os.path.join(PREDICTIONS, name + ".csv")):
        rest = [int(r[c]) for c in outer]
        for at in range(int(r[axis + "_from"]), int(r[axis + "_to"]) + 1):
            key = dict(zip(outer, rest))
            key[axis] = at
            out[tuple(key[c] for c in cols)] = float(r["prediction"])
    return out


def vidur_tables(out_dir):
    """Writes llm/ (models, collectives copied; ops and attention from Vidur's kept
    predictions) under out_dir, the layout of a clustersim data directory."""
    src = os.path.join(ROOT, "data", "llm")
    llm = os.path.join(out_dir, "llm")
    shutil.copytree(src, llm, ignore=shutil.ignore_patterns("ops", "attention", "sources",
                                                             "README.md", "meson.build"))
    why = ("Vidur's random-forest predictions on its prediction grid "
           "(tests/llm/vidur_expected/predictions), expanded by bench/vidur/compare.py; "
           "not measurements")
    base = json.load(open(os.path.join(src, "ops", "a100", MODEL_FILE)))
    med, tokens = {}, None
    for op in OPS:
        pred = load_predictions(op)
        t = sorted(k[0] for k in pred)
        if tokens is None:
            tokens = t
        elif t != tokens:
            die(f"{op}: predictions at other token counts than {OPS[0]}'s")
        med[op] = [pred[(n,)] for n in t]
    ops = dict(base, source=why, tensor_parallel=[{"tp": 1, "num_tokens": tokens,
                                                   "median_ms": med}])
    os.makedirs(os.path.join(llm, "ops", "a100"))
    json.dump(ops, open(os.path.join(llm, "ops", "a100", MODEL_FILE), "w"))

    att = json.load(open(os.path.join(src, "attention", "a100", MODEL_FILE)))
    dec, pre = load_predictions("attn_decode"), load_predictions("attn_prefill")
    # clustersim's decode lookups are at kv >= 64 (processed >= 1, rounded up to 64).
    d_kv = sorted({k for k, _ in dec if k > 0})
    d_b = sorted({b for _, b in dec})
    p_kv = sorted({k for k, _ in pre})
    p_c = sorted({c for _, c in pre})
    # Vidur predicts the whole rectangle; a max_model_len no point exceeds keeps it whole.
    att.update(source=why, max_model_len=p_kv[-1] + p_c[-1],
               decode={"kv_cache_size": d_kv, "batch_size": d_b,
                       "median_ms": [[dec[(k, b)] for b in d_b] for k in d_kv]},
               prefill={"kv_cache_size": p_kv, "prefill_chunk_size": p_c,
                        "median_ms": [[pre[(k, c)] for c in p_c] for k in p_kv]})
    os.makedirs(os.path.join(llm, "attention", "a100"))
    json.dump(att, open(os.path.join(llm, "attention", "a100", MODEL_FILE), "w"))


# ---- One case -----------------------------------------------------------------------------

def config_for(case_dir, run):
    """clustersim-llm-run config of Vidur's deployment on Vidur's requests."""
    v = run["vidur_config"]
    rep = v["cluster_config"]["replica_config"]
    sch = v["cluster_config"]["replica_scheduler_config"]
    gen = v["request_generator_config"]
    max_tokens = gen.get("max_tokens") or gen["length_generator_config"]["max_tokens"]
    if gen["name"] == "synthetic":
        # Vidur's memory planner takes the length generator's max_tokens (README).
        max_tokens = gen["length_generator_config"]["max_tokens"]
    s = {"policy": sch["name"], "batch_size_cap": sch["batch_size_cap"],
         "block_size": sch["block_size"],
         "watermark_blocks_fraction": sch["watermark_blocks_fraction"]}
    if sch["name"] == "sarathi":
        s["chunk_size"] = sch["chunk_size"]
    if sch["name"] == "vllm":
        s["max_tokens_in_batch"] = sch["max_tokens_in_batch"]
    return {"format": "clustersim-llm-run", "version": 1, "model": rep["model_name"],
            "device": rep["device"], "node": rep["network_device"],
            "tensor_parallel": rep["tensor_parallel_size"],
            "pipeline_parallel": rep["num_pipeline_stages"],
            "replicas": v["cluster_config"]["num_replicas"],
            "router": v["cluster_config"]["global_scheduler_config"]["name"],
            "memory_margin": rep["memory_margin_fraction"], "max_tokens": max_tokens,
            "attention_outside_grid": "clamp", "scheduler": s,
            "requests": {"trace": os.path.join(case_dir, "requests.csv")}}


def run_clustersim(binary, cfg, work, data_dir, repeat):
    path = os.path.join(work, "config.json")
    json.dump(cfg, open(path, "w"), indent=1)
    out = os.path.join(work, "out")
    env = dict(os.environ)
    if data_dir:
        env["CLUSTERSIM_DATA_DIR"] = data_dir
    best = None
    for _ in range(repeat):
        shutil.rmtree(out, ignore_errors=True)
        t0 = time.perf_counter()
        p = subprocess.run([binary, "llm", "run", path, "-o", out], capture_output=True,
                           text=True, env=env)
        dt = time.perf_counter() - t0
        if p.returncode != 0:
            die(f"clustersim llm run {path}: exit {p.returncode}: {p.stderr.strip()}")
        best = dt if best is None else min(best, dt)
    summ = json.load(open(os.path.join(out, "summary.json")))
    rows = read_rows(os.path.join(out, "requests.csv"))
    got = {"ttft": {k: quantile([float(r["ttft_ms"]) for r in rows], q) / 1e3 for k, q in QS},
           "e2e": {k: quantile([float(r["e2e_ms"]) for r in rows], q) / 1e3 for k, q in QS},
           "tbt": {k: summ["tbt"][k + "_ms"] / 1e3 for k, _ in QS}}
    summ["_ttft_s"] = [float(r["ttft_ms"]) / 1e3 for r in rows]
    return got, best, summ


def vidur_metrics(run):
    s = run["summary"]
    out = {}
    for m, _ in METRICS:
        key = {"ttft": "ttft_s", "tbt": "tbt_s", "e2e": "e2e_s"}[m]
        if key not in s:
            die(f"{run['case']}: run.json summary has no {key} (keys: {sorted(s)})")
        out[m] = {k: s[key][k] for k, _ in QS}
    return out


def write_figure(out, case, vidur, own, on_vidur):
    """The TTFT CDFs of one case: Vidur, clustersim on its own tables, clustersim on Vidur's
    predictions (gnuplot script and data; the SVG when gnuplot is on PATH)."""
    os.makedirs(out, exist_ok=True)
    series = [sorted(vidur), sorted(own), sorted(on_vidur)]
    n = max(len(x) for x in series)
    with open(os.path.join(out, "vidur_ttft_cdf.dat"), "w") as f:
        f.write(f"# {case}: TTFT s, fraction <= (Vidur; clustersim, own tables; clustersim, "
                f"Vidur's predictions); bench/vidur/compare.py --figure-dir\n")
        for i in range(n):
            f.write("\t".join(f"{x[i]:.6f}\t{(i + 1) / len(x):.5f}" if i < len(x) else "?\t?"
                              for x in series) + "\n")
    with open(os.path.join(out, "vidur_ttft_cdf.gp"), "w") as f:
        f.write(f"""set terminal svg size 720,480 dynamic font 'sans,12' noenhanced
set output 'vidur_ttft_cdf.svg'
set title 'TTFT, {case}: Llama-2-7B on one A100, the same 200 requests'
set xlabel 'time to first token (s)'
set ylabel 'fraction of requests'
set logscale x
set yrange [0:1]
set key bottom right
set grid
plot 'vidur_ttft_cdf.dat' using 1:2 with lines lw 3 title 'Vidur (forests trained on the sample)', \\
     '' using 5:6 with lines lw 2 dt 2 title "clustersim on Vidur's predictions", \\
     '' using 3:4 with lines lw 2 title 'clustersim on its own tables (linear)'
""")
    if shutil.which("gnuplot"):
        subprocess.run(["gnuplot", "vidur_ttft_cdf.gp"], cwd=out, check=True)


def pct(a, b):
    return 100.0 * (a - b) / b if b else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clustersim", default=os.path.join(ROOT, "build", "src", "cli", "clustersim"))
    ap.add_argument("--cases", default=None)
    ap.add_argument("--save-predictions", metavar="CACHE", default=None)
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--bound", type=float, default=BOUND_PCT, metavar="PCT")
    ap.add_argument("--figure-dir", metavar="DIR", default=None,
                    help="write vidur_ttft_cdf.{dat,gp} there (and .svg with gnuplot)")
    ap.add_argument("--figure-case", default="vllm_uniform_q3")
    ap.add_argument("--markdown", default=None)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    cases = sorted(d for d in os.listdir(EXPECTED)
                   if os.path.isfile(os.path.join(EXPECTED, d, "run.json")))
    if a.cases:
        want = a.cases.split(",")
        bad = [c for c in want if c not in cases]
        if bad:
            die(f"--cases: no case {bad[0]!r} (known: {', '.join(cases)})")
        cases = want
    if a.save_predictions:
        save_predictions(a.save_predictions)
        return 0
    training = json.load(open(os.path.join(EXPECTED, "training.json")))
    tmp = tempfile.mkdtemp(prefix="cs_vidur_compare.")
    try:
        vdata = os.path.join(tmp, "vidur_data")
        vidur_tables(vdata)
        lines, failures, diffs = [], [], []
        lines.append("| case | metric | Vidur p50 / p90 / p99 (s) | clustersim, own tables: "
                     "difference % | clustersim, Vidur's predictions: difference % |")
        lines.append("|---|---|---|---|---|")
        speed = []
        for case in cases:
            d = os.path.join(EXPECTED, case)
            run = json.load(open(os.path.join(d, "run.json")))
            cfg = config_for(d, run)
            want = vidur_metrics(run)
            os.makedirs(os.path.join(tmp, case, "own"))
            own, t_own, s_own = run_clustersim(a.clustersim, cfg, os.path.join(tmp, case, "own"),
                                               None, a.repeat)
            os.makedirs(os.path.join(tmp, case, "vidur"))
            vid, t_vid, s_vid = run_clustersim(a.clustersim, cfg, os.path.join(tmp, case, "vidur"),
                                               vdata, a.repeat)
            if s_vid["attention_clamped_batches"]:
                failures.append(f"{case}: {s_vid['attention_clamped_batches']} batches off "
                                f"Vidur's prediction grid")
            for m, label in METRICS:
                w = want[m]
                cell_own = " / ".join(f"{pct(own[m][k], w[k]):+.1f}" for k, _ in QS)
                cell_vid = " / ".join(f"{pct(vid[m][k], w[k]):+.1f}" for k, _ in QS)
                lines.append(f"| {case} | {label} | "
                             + " / ".join(f"{w[k]:.4g}" for k, _ in QS)
                             + f" | {cell_own} | {cell_vid} |")
                for k, _ in QS:
                    diffs.append((vid[m][k], w[k]))
                    if abs(pct(vid[m][k], w[k])) > a.bound:
                        failures.append(f"{case} {label} {k}: clustersim {vid[m][k]:.6g} s, "
                                        f"Vidur {w[k]:.6g} s ({pct(vid[m][k], w[k]):+.2f} %)")
            if a.figure_dir and case == a.figure_case:
                vt = [float(r["prefill_e2e_time"])
                      for r in read_rows(os.path.join(d, "request_metrics.csv"))]
                write_figure(a.figure_dir, case, vt, s_own["_ttft_s"], s_vid["_ttft_s"])
            clamped = s_own["attention_clamped_batches"]
            speed.append((case, run["wall_s_warm_cache"], t_own, t_vid, clamped,
                          s_own["batches"], s_own["num_blocks_per_replica"]))
        worst = max(abs(pct(v, w)) for v, w in diffs)
        lines.append("")
        lines.append(f"Largest difference of clustersim on Vidur's predictions from Vidur: "
                     f"{worst:.3f} %.")
        lines.append("")
        if a.no_speed:
            speed = []
        else:
            lines.append("| case | Vidur, warm cache (s) | clustersim own (s) | speed-up | "
                         "clustersim on Vidur's tables (s) | own: batches clamped / all | "
                         "KV blocks |")
            lines.append("|---|---|---|---|---|---|---|")
        for case, vw, to, tv, cl, nb, blocks in speed:
            lines.append(f"| {case} | {vw:.2f} | {to:.4f} | {vw / to:.0f}x | {tv:.4f} | "
                         f"{cl} / {nb} | {blocks} |")
        if speed:
            lines.append("")
            lines.append(f"Vidur's cold run (training the forests, then the first case): "
                         f"{training['cold_run_s']} s ({training['machine']}).")
        text = "\n".join(lines) + "\n"
        print(text)
        if a.markdown:
            open(a.markdown, "w").write(text)
        if a.check:
            for f in failures:
                print(f"compare: over the bound: {f}", file=sys.stderr)
            return 1 if failures else 0
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
