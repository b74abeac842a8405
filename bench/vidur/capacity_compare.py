#!/usr/bin/env python3
"""clustersim's capacity search side by side with Vidur's own (issue 38, item 5).

    python3 bench/vidur/capacity_compare.py [--clustersim BIN] [--write-configs] [--check]
                                            [--markdown FILE]

For each job that bench/vidur/capacity_vidur.py kept (tests/llm/vidur_expected/capacity/JOB.json:
every probe of Vidur's CapacitySearch, its capacity, Vidur's config.json) it runs
`clustersim llm search --json` on tests/llm/vidur_expected/capacity/clustersim_JOB.json: Vidur's
deployment (as compare.py derives it from Vidur's config.json), the very requests Vidur's probes
simulated (capacity/requests.csv, Vidur's list at 1 request/s; "trace_qps": 1, so a probe at q
divides its arrivals by q, as Vidur's generator does) and Vidur's search (scheduling delay p99
<= 5 s, start 2/s, 2.5 %, 20 probes). Twice, as compare.py runs:
  own     clustersim's tables (data/llm), "attention_outside_grid": "clamp";
  vidur   Vidur's forests' predictions (tests/llm/vidur_expected/predictions, the same forests
          as the search's: capacity_vidur.py checks it) expanded into clustersim's formats.
It prints each probe sequence next to Vidur's and the three capacities.

--write-configs writes the two clustersim configs from the kept JOB.json (they are committed;
without it the script checks that they are what it would write, exit 2 otherwise).
--check exits 1 unless clustersim on Vidur's predictions makes Vidur's probes: the same rates
in the same order (to 1e-12 relative), the same pass/fail, every scheduling delay p99 within
--bound PCT (default 0.5) of Vidur's, and the same capacity. The suite runs it
(llm_vidur_capacity). Exit 2 on bad input or a failed run. Python 3 standard library only.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402  (Vidur's deployment as a clustersim config; Vidur's tables)

CAPACITY = os.path.join(compare.EXPECTED, "capacity")
JOBS = ("vllm", "sarathi")
BOUND_PCT = 0.5


def die(msg):
    print(f"capacity_compare: {msg}", file=sys.stderr)
    sys.exit(2)


def search_config(kept):
    """clustersim-llm-search config of Vidur's job: its deployment from Vidur's config.json,
    Vidur's requests at 1/s (trace_qps 1) and Vidur's search parameters."""
    v = kept["vidur_config"]
    cfg = compare.config_for(CAPACITY, {"vidur_config": v})
    gen = v["request_generator_config"]
    # A synthetic generator with a length trace: the planner takes its max_tokens (4096).
    cfg["max_tokens"] = gen["length_generator_config"]["max_tokens"]
    cfg["format"] = "clustersim-llm-search"
    cfg["requests"] = {"trace": "requests.csv"}
    a = kept["search_args"]
    cfg["search"] = {
        "slo": {"scheduling_delay_s": {"quantile": a["scheduling_delay_slo_quantile"],
                                       "max": a["scheduling_delay_slo_value"]}},
        "start_qps": kept["job_config"]["trace"]["start_qps"],
        "granularity_pct": a["min_search_granularity"],
        "max_probes": a["max_iterations"],
        "trace_qps": 1}
    return cfg


def config_text(cfg):
    return json.dumps(cfg, indent=1, sort_keys=True) + "\n"


def run_search(binary, path, data_dir):
    env = dict(os.environ)
    if data_dir:
        env["CLUSTERSIM_DATA_DIR"] = data_dir
    p = subprocess.run([binary, "llm", "search", path, "--json"], capture_output=True, text=True,
                       env=env)
    if p.returncode != 0:
        die(f"clustersim llm search {path}: exit {p.returncode}: {p.stderr.strip()}")
    out = json.loads(p.stdout)
    if len(out["deployments"]) != 1:
        die(f"{path}: expected one deployment in the result")
    return out["deployments"][0]


def cell(qps, delay, ok):
    return f"{qps:.6g} / {delay:.4g} / {'pass' if ok else 'fail'}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clustersim", default=os.path.join(compare.ROOT, "build", "src", "cli",
                                                         "clustersim"))
    ap.add_argument("--write-configs", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--bound", type=float, default=BOUND_PCT, metavar="PCT")
    ap.add_argument("--markdown", default=None)
    a = ap.parse_args()
    kept = {}
    for job in JOBS:
        path = os.path.join(CAPACITY, job + ".json")
        if not os.path.isfile(path):
            die(f"{path}: missing (bench/vidur/capacity_vidur.py writes it)")
        kept[job] = json.load(open(path))
        cpath = os.path.join(CAPACITY, f"clustersim_{job}.json")
        text = config_text(search_config(kept[job]))
        if a.write_configs:
            open(cpath, "w").write(text)
        elif not os.path.isfile(cpath) or open(cpath).read() != text:
            die(f"{cpath}: not what {job}.json gives (run with --write-configs)")
    tmp = tempfile.mkdtemp(prefix="cs_vidur_capacity.")
    failures, lines, summary, worst, worst_s = [], [], [], 0.0, 0.0
    try:
        vdata = os.path.join(tmp, "vidur_data")
        compare.vidur_tables(vdata)
        for job in JOBS:
            k = kept[job]
            cpath = os.path.join(CAPACITY, f"clustersim_{job}.json")
            own = run_search(a.clustersim, cpath, None)
            vid = run_search(a.clustersim, cpath, vdata)
            vp, op, cp = k["probes"], own["probes"], vid["probes"]
            lines.append(f"{job}: probes, rate (req/s) / scheduling delay p99 (s) / SLO p99 <= 5 s")
            lines.append("")
            lines.append("| # | Vidur | clustersim, Vidur's predictions | clustersim, own tables |")
            lines.append("|---|---|---|---|")
            for i in range(max(len(vp), len(op), len(cp))):
                c = [cell(vp[i]["qps"], vp[i]["scheduling_delay_p99_s"], vp[i]["under_sla"])
                     if i < len(vp) else "",
                     cell(cp[i]["qps"], cp[i]["scheduling_delay_s"], cp[i]["pass"])
                     if i < len(cp) else "",
                     cell(op[i]["qps"], op[i]["scheduling_delay_s"], op[i]["pass"])
                     if i < len(op) else ""]
                lines.append(f"| {i + 1} | " + " | ".join(c) + " |")
            clamped = sum(z["attention_clamped_batches"] for z in op)
            batches = sum(z["batches"] for z in op)
            lines.append("")
            summary.append(f"| {job} | {k['max_qps_under_sla']:.6g} ({len(vp)} probes) | "
                           f"{vid['max_qps']:.6g} ({len(cp)}) | {own['max_qps']:.6g} ({len(op)}; "
                           f"{clamped} of {batches} batches clamped) |")
            # clustersim on Vidur's numbers must make Vidur's search.
            if len(cp) != len(vp):
                failures.append(f"{job}: {len(cp)} probes, Vidur {len(vp)}")
            for i, (x, y) in enumerate(zip(vp, cp)):
                if abs(y["qps"] - x["qps"]) > 1e-12 * x["qps"] or y["pass"] != x["under_sla"]:
                    failures.append(f"{job} probe {i + 1}: clustersim {y['qps']}/s "
                                    f"{'pass' if y['pass'] else 'fail'}, Vidur {x['qps']}/s "
                                    f"{'pass' if x['under_sla'] else 'fail'}")
                d = compare.pct(y["scheduling_delay_s"], x["scheduling_delay_p99_s"])
                worst = max(worst, abs(d))
                worst_s = max(worst_s, abs(y["scheduling_delay_s"] - x["scheduling_delay_p99_s"]))
                if not abs(d) <= a.bound:
                    failures.append(f"{job} probe {i + 1} at {x['qps']}/s: delay p99 "
                                    f"{y['scheduling_delay_s']:.6g} s, Vidur "
                                    f"{x['scheduling_delay_p99_s']:.6g} s ({d:+.2f} %)")
            if vid["max_qps"] != k["max_qps_under_sla"]:
                failures.append(f"{job}: capacity {vid['max_qps']}, Vidur "
                                f"{k['max_qps_under_sla']}")
            if vid["non_monotone"] or own["non_monotone"]:
                lines.append(f"({job}: a search's probes are not monotone)")
                lines.append("")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = "\n".join(
        ["| job | Vidur's search (req/s) | clustersim, Vidur's predictions | "
         "clustersim, own tables |", "|---|---|---|---|"] + summary + [""] +
        [f"Largest difference of a probe's scheduling delay p99, clustersim on Vidur's "
         f"predictions against Vidur: {worst:.2g} % ({worst_s:.2g} s).", ""] + lines)
    print(text)
    if a.markdown:
        open(a.markdown, "w").write(text)
    if a.check:
        for f in failures:
            print(f"capacity_compare: differs: {f}", file=sys.stderr)
        return 1 if failures else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
