#!/usr/bin/env python3
"""Rerun the reproductions, judge every finding by its stated criteria, and
write the verdict tables and the numbers of the docs.

The findings of each reproduction are data: experiments/findings/NAME.json
lists the runs a page rests on (sweeps of experiments/*.json, provisioning
searches), the findings the paper states (paper value, metric, comparison,
tolerance) and the tables the docs show. This program

  1. runs every source (clustersim sweep / provision) and keeps the metrics
     the findings and tables use in experiments/results/NAME/SOURCE.csv;
  2. judges each finding from those results: "reproduced" only when every
     stated check holds at default settings; "reproduced only with
     non-default settings" when a check holds only with a setting the
     findings file names as non-default (the row gives the default's figure
     beside it); "partly reproduced" (the row says which checks hold and
     which do not); "not reproduced"; or "not judged" (no number to compare,
     with the reason);
  3. rewrites the generated parts of the docs: everything between
     <!-- gen:ID --> and <!-- /gen --> in docs/experiments.md and
     docs/reproductions/*.md: the verdict table of each findings file
     (verdicts:NAME), its tables (table:NAME:ID) and single numbers its
     "values" name for the prose (value:NAME:ID).

Usage:
  tools/reproduce.py [--build DIR] [-j N] [--only NAME ...]   rerun, write results and docs
  tools/reproduce.py --from-results                           write the docs from the committed results
  tools/reproduce.py --check [--from-results]                 write nothing; exit 1 and print a diff
                                                             when the committed results or docs differ
                                                             from what the runs (or the committed
                                                             results) give

Exit status: 0 on success (with --check: everything is current), 1 when
--check finds a difference or a run fails, 2 on a bad findings file (the
message names the file, the JSON path and what was expected).
"""

import argparse
import csv
import difflib
import io
import json
import math
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FINDINGS_DIR = os.path.join(ROOT, "experiments", "findings")
RESULTS_DIR = os.path.join(ROOT, "experiments", "results")
DOCS = [os.path.join(ROOT, "docs", "experiments.md")]
RESULT_FIELDS = ["variant", "point", "model", "metric", "n", "mean", "ci95"]
GEN_RE = re.compile(r"<!-- gen:([A-Za-z0-9_.:-]+) -->(.*?)<!-- /gen -->", re.S)


class FindingsError(Exception):
    """A findings file that does not say what this program needs."""


def fail_input(path, where, what):
    raise FindingsError(f"{os.path.relpath(path, ROOT)}: {where}: {what}")


def refuse_unknown_keys(path, where, node, keys, what):
    """Fails on the first key of node not in keys: a misspelt field would
    otherwise be ignored (a misspelt "unjudged" turns partly into reproduced)."""
    unknown = sorted(set(node) - keys)
    if unknown:
        fail_input(path, f"{where}.{unknown[0]}" if where else unknown[0],
                   f"not a field of {what} (expected {', '.join(sorted(keys))})")


# ---- results -------------------------------------------------------------------------------


def point_key(point):
    """A sweep point as one stable string: axis=level pairs in axis order."""
    return ";".join(f"{k}={v}" for k, v in point)


class Results:
    """The metrics of one source, by (variant, point, model, metric)."""

    def __init__(self):
        self.rows = {}

    def add(self, variant, point, model, metric, n, mean, ci95):
        self.rows[(variant, point, model, metric)] = (n, mean, ci95)

    def only(self, metrics):
        """The rows of these metrics alone."""
        kept = Results()
        kept.rows = {k: v for k, v in self.rows.items() if k[3] in metrics}
        return kept

    def get(self, variant, point, model, metric):
        return self.rows.get((variant, point, model, metric))

    def write(self, path):
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(RESULT_FIELDS)
        for (variant, point, model, metric), (n, mean, ci95) in sorted(self.rows.items()):
            w.writerow([variant, point, model, metric, n, fmt_float(mean), fmt_float(ci95)])
        return out.getvalue()

    @staticmethod
    def read(path):
        with open(path, newline="") as f:
            return parse_results_text(f.read())


def fmt_float(x):
    """A float as the shortest text that reads back to it (nan as 'nan')."""
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else repr(float(x))


def aggregate_to_results(aggregate_csv, axes, wanted_metrics):
    """Keeps the rows of a sweep's aggregate.csv whose metric is wanted."""
    res = Results()
    with open(aggregate_csv, newline="") as f:
        for row in csv.DictReader(f):
            if row["metric"] not in wanted_metrics:
                continue
            point = point_key([(a, row[a]) for a in axes])
            mean = float(row["mean"]) if row["mean"] not in ("", "nan") else math.nan
            ci = float(row["ci95"]) if row["ci95"] not in ("", "nan") else math.nan
            res.add(row["variant"], point, row["model"], row["metric"], int(row["n"]), mean, ci)
    return res


# ---- running the sources ---------------------------------------------------------------------


def run(cmd, log):
    log.write("$ " + " ".join(cmd) + "\n")
    log.flush()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr}")
    return proc.stdout


def run_sweep(clustersim, source, workdir, jobs, log, reuse):
    exp_path = source["experiment"]
    with open(os.path.join(ROOT, exp_path)) as f:
        exp = json.load(f)
    axes = [a["name"] for a in exp.get("axes", [])]
    out = os.path.join(workdir, os.path.basename(exp_path).removesuffix(".json"))
    if not (reuse and os.path.exists(os.path.join(out, "aggregate.csv"))):
        run([clustersim, "sweep", exp_path, "-j", str(jobs), "-o", out, "--force", "--no-render"], log)
    return aggregate_to_results(os.path.join(out, "aggregate.csv"), axes, source["metrics"])


def run_provision(clustersim, source, log):
    """One `clustersim provision` search per (variant, seed): metric `fewest_gpus`
    (nan when no count up to max_gpus passes)."""
    res = Results()
    for variant in source["variants"]:
        counts = []
        for seed in source["seeds"]:
            cmd = [clustersim, "provision", source["scenario"], "--types", source["types"],
                   "--max-gpus", str(variant.get("max_gpus", source.get("max_gpus", 16))), "--seed", str(seed), "--json"]
            for path, value in variant.get("set", {}).items():
                cmd += ["--set", f"{path}={json.dumps(value) if not isinstance(value, str) else value}"]
            found = json.loads(run(cmd, log)).get("fewest_gpus")
            gpus = float(found["gpus"]) if found else math.nan
            counts.append(gpus)
            res.add(variant["name"], point_key([("seed", seed)]), "total", "fewest_gpus", 1, gpus, 0.0)
        passed = [c for c in counts if not math.isnan(c)]
        # The count every seed passes with (none when a seed passes with no count).
        res.add(variant["name"], "", "total", "fewest_gpus_max", len(counts),
                max(passed) if len(passed) == len(counts) else math.nan, 0.0)
    return res


def experiment_edits(exp_path, variant, point):
    """The --set/--unset arguments that turn an experiment's base scenario into
    one run of its grid: the variant's edits, then each axis level's, in the
    order the sweep applies them."""
    with open(os.path.join(ROOT, exp_path)) as f:
        exp = json.load(f)
    exp_dir = os.path.dirname(os.path.join(ROOT, exp_path))
    base = os.path.normpath(os.path.join(exp_dir, exp["base"]))
    args = []
    with open(base) as f:
        base_json = json.load(f)

    def walk(node, path):
        for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
            node = node[int(part[1:-1])] if part.startswith("[") else node[part]
        return node

    def expand(path):
        # `run --set` takes one element at a time; the sweep's "[*]" means every
        # element of the base scenario's array.
        if "[*]" not in path:
            return [path]
        head, tail = path.split("[*]", 1)
        return [p for i in range(len(walk(base_json, head))) for p in expand(f"{head}[{i}]{tail}")]

    def add_set(edits):
        for path, value in edits.items():
            for p in expand(path):
                args.extend(["--set", f"{p}={json.dumps(value)}"])

    found = [v for v in exp.get("variants", []) if v["name"] == variant]
    if not found:
        raise FindingsError(f"{exp_path}: no variant {variant!r}")
    for path in found[0].get("unset", []):
        args.extend(["--unset", path])
    add_set(found[0].get("set", {}))
    for axis in exp.get("axes", []):
        level = str(point[axis["name"]])
        if "path" in axis:
            values = [v for v in axis["values"] if str(v) == level]
            if not values:
                raise FindingsError(f"{exp_path}: axis {axis['name']} has no value {level}")
            add_set({axis["path"]: values[0]})
        else:
            levels = [lv for lv in axis["levels"] if str(lv["label"]) == level]
            if not levels:
                raise FindingsError(f"{exp_path}: axis {axis['name']} has no level {level}")
            for path in levels[0].get("unset", []):
                args.extend(["--unset", path])
            add_set(levels[0].get("set", {}))
    return base, args


def summary_metrics(summary):
    """Per model: what a run measured and the placement it ran; 'total': the
    GPUs used, and per pair of models (model "a+b") the GPUs holding both."""
    out = {}
    gpus_of = {}
    for m in summary["models"]:
        reps = m.get("replicas", [])
        stages = m.get("stages_ms", {}).get("gpu", {})
        out[m["model"]] = {
            "goodput_rps": m["goodput_rps"], "throughput_rps": m["throughput_rps"],
            "mean_batch": m["batches"]["mean_size"],
            "gpu_ms_p50": stages.get("p50", math.nan), "gpu_ms_mean": stages.get("mean", math.nan),
            "replicas": float(len(reps)),
            "replica_batch_min": float(min((r["batch"] for r in reps), default=math.nan)),
            "replica_batch_max": float(max((r["batch"] for r in reps), default=math.nan)),
            "replica_gpus": float(len({r["gpu"] for r in reps})),
        }
        gpus_of[m["model"]] = {r["gpu"] for r in reps}
    used = set().union(*gpus_of.values()) if gpus_of else set()
    out["total"] = {"goodput_rps": summary["total"]["goodput_rps"], "gpus_used": float(len(used))}
    # A policy that plans for more GPUs than the cluster has says how many in its log.
    needed = re.search(r"^gpus_needed: (\d+)$", (summary.get("placement") or {}).get("log") or "", re.M)
    if needed:
        out["total"]["plan_gpus_needed"] = float(needed.group(1))
    names = sorted(gpus_of)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            out[f"{a}+{b}"] = {"colocated_gpus": float(len(gpus_of[a] & gpus_of[b]))}
    return out


def run_single(clustersim, source, workdir, log):
    """`clustersim run` of chosen runs of an experiment's grid (variant, point,
    seed), for what a sweep's outputs do not hold: the placement a run used,
    the GPUs it used, the time a batch took. Each run's total goodput is
    checked against the sweep's own row for that run when the sweep ran in
    the same call, so a run here is the sweep's run."""
    res = Results()
    for i, r in enumerate(source["runs"]):
        base, edits = experiment_edits(source["experiment"], r["variant"], r.get("point", {}))
        # Edits beyond the grid's (e.g. a larger cluster, to see how many GPUs
        # a plan needs): such a run is no run of the sweep, so it is not
        # checked against one.
        for path, value in r.get("set", {}).items():
            edits.extend(["--set", f"{path}={json.dumps(value)}"])
        seed = r.get("seed", 1)
        out = os.path.join(workdir, f"run-{os.path.basename(source['experiment'])}-{i}")
        run([clustersim, "run", base, "--seed", str(seed), "-o", out, "--force"] + edits, log)
        with open(os.path.join(out, "summary.json")) as f:
            metrics = summary_metrics(json.load(f))
        point = point_key(list(r.get("point", {}).items()) + list(r.get("set", {}).items()) + [("seed", seed)])
        for model, values in metrics.items():
            for metric, value in values.items():
                res.add(r["variant"], point, model, metric, 1, math.nan if value is None else float(value), 0.0)
        sweep_runs = os.path.join(workdir, os.path.basename(source["experiment"]).removesuffix(".json"), "runs.csv")
        if os.path.exists(sweep_runs) and not r.get("set"):
            with open(sweep_runs, newline="") as f:
                rows = [row for row in csv.DictReader(f) if row["variant"] == r["variant"] and row["model"] == "total"
                        and row["seed"] == str(seed) and all(row[k] == str(v) for k, v in r.get("point", {}).items())]
            if len(rows) != 1 or abs(float(rows[0]["goodput_rps"]) - metrics["total"]["goodput_rps"]) > 1e-6:
                raise RuntimeError(f"the run {r} does not give its sweep's goodput "
                                   f"({metrics['total']['goodput_rps']} here, {[x['goodput_rps'] for x in rows]} in {sweep_runs})")
    return res


# ---- the findings file -----------------------------------------------------------------------


def load_findings(path):
    try:
        with open(path) as f:
            spec = json.load(f)
    except json.JSONDecodeError as e:
        fail_input(path, f"line {e.lineno}", f"not JSON: {e.msg}")
    if not isinstance(spec, dict):
        fail_input(path, "(top)", "expected an object")
    keys = {"name", "title", "paper", "page", "sources", "nondefault", "defaults", "findings", "tables", "values"}
    for key in ("name", "page", "sources", "findings"):
        if key not in spec:
            fail_input(path, key, "missing (expected name, page, sources, findings, tables)")
    refuse_unknown_keys(path, "", spec, keys, "a findings file")
    if not isinstance(spec["sources"], dict) or not isinstance(spec["findings"], list):
        fail_input(path, "sources, findings", "expected an object of sources and a list of findings")
    if not all(isinstance(v, str) for v in spec.get("nondefault", {}).values()):
        fail_input(path, "nondefault", "expected an object of SOURCE.VARIANT: the setting in words")
    if "tol" in spec.get("defaults", {}):
        fail_input(path, "defaults.tol", "a tolerance is each check's own (relative or absolute by its comparison)")
    if not os.path.exists(os.path.join(ROOT, spec["page"])):
        fail_input(path, "page", f"{spec['page']}: no such page")
    ids = [t.get("id") for t in spec.get("tables", [])]
    if len(set(ids)) != len(ids) or None in ids:
        fail_input(path, "tables", "expected a unique id for every table")
    # Sweeps first: a single run of a grid is checked against its sweep's row.
    spec["sources"] = dict(sorted(spec["sources"].items(), key=lambda kv: kv[1].get("kind") != "sweep"))
    for sid, source in spec["sources"].items():
        if not isinstance(source, dict):
            fail_input(path, f"sources.{sid}", "expected an object")
        kind = source.get("kind")
        if kind not in ("sweep", "provision", "run"):
            fail_input(path, f"sources.{sid}.kind", f'expected "sweep", "provision" or "run", got {kind!r}')
        source.setdefault("metrics", [])
    spec["_path"] = path
    return spec


def wanted_metrics(spec):
    """Every metric a check or table of the file reads, by source."""
    wanted = {sid: set() for sid in spec["sources"]}

    def visit(node, defaults):
        if isinstance(node, dict):
            merged = dict(defaults)
            merged.update({k: v for k, v in node.get("defaults", {}).items() if k in ("source", "metric")})
            merged.update({k: v for k, v in node.items() if k in ("source", "metric")})
            if node.get("dim") == "metric" and "source" in merged and merged["source"] in wanted:
                wanted[merged["source"]].update(node.get("values", [node.get("value")]))
            if "source" in merged and "metric" in merged and merged["source"] in wanted:
                wanted[merged["source"]].add(merged["metric"])
            for v in node.values():
                visit(v, merged)
        elif isinstance(node, list):
            for v in node:
                visit(v, defaults)

    visit({"findings": spec["findings"], "tables": spec.get("tables", []), "values": spec.get("values", {})},
          spec.get("defaults", {}))
    return wanted


# ---- judging ---------------------------------------------------------------------------------


class Ref:
    """One number of the results: a source's (variant, point, model, metric)."""

    def __init__(self, spec, fields, where):
        self.spec = spec
        self.where = where
        self.fields = fields
        self.source = fields.get("source")
        self.variant = fields.get("variant")
        self.point = fields.get("point", {})
        self.model = fields.get("model", "total")
        self.metric = fields.get("metric")
        self.label = fields.get("label")
        self.scale = fields.get("scale", 1.0)
        self.none_as = fields.get("none_as")
        # "max_of": the value is the largest of these variants' (e.g. "the best policy").
        self.max_of = fields.get("max_of")
        if self.max_of is not None and (not isinstance(self.max_of, list) or not self.max_of
                                        or not all(isinstance(v, str) for v in self.max_of)):
            fail_input(spec["_path"], where + ".max_of", "expected a list of variant names")
        if self.max_of is not None:
            fields = merged(fields, {"variant": fields.get("variant", self.max_of[0])})
            self.variant = fields["variant"]
        self.per = self.minus = None
        if "per" in fields and "minus" in fields:
            fail_input(spec["_path"], where, "per and minus: expected one of them, not both")
        # The value the ratio or difference is taken against shares this one's
        # source, variant, point, model and metric unless it says otherwise, but
        # not its scale, label, none_as or max_of.
        base = {k: v for k, v in fields.items() if k not in ("per", "minus", "label", "none_as", "scale", "max_of")}
        self.per_const = None
        if isinstance(fields.get("per"), (int, float)) and not isinstance(fields.get("per"), bool):
            self.per_const = float(fields["per"])  # a stated number, e.g. a paper's bound
        elif "per" in fields:
            self.per = Ref(spec, merged(base, fields["per"]), where + ".per")
        if "minus" in fields:
            self.minus = Ref(spec, merged(base, fields["minus"]), where + ".minus")
        for key in ("source", "variant", "metric"):
            if fields.get(key) is None:
                fail_input(spec["_path"], where, f"{key}: missing (a value names its source, variant and metric)")
        if self.source not in spec["sources"]:
            fail_input(spec["_path"], where, f"source: {self.source!r} is not in sources")

    def point_string(self):
        return point_key(list(self.point.items()))

    def lookup(self, results):
        """The (n, mean, ci95) of this value's own row, or None when the results have none."""
        return results[self.source].get(self.variant, self.point_string(), self.model, self.metric)

    def missing(self):
        """What a failed lookup names."""
        return (f"no result for variant {self.variant!r} at {self.point_string() or 'the only point'},"
                f" model {self.model!r}, metric {self.metric!r} in source {self.source!r}")

    def value(self, results):
        got = self.lookup(results)
        if got is None:
            fail_input(self.spec["_path"], self.where, self.missing())
        n, mean, ci = got
        if self.max_of:
            best = None
            for v in self.max_of:
                row = results[self.source].get(v, self.point_string(), self.model, self.metric)
                if row is None:
                    fail_input(self.spec["_path"], self.where, f"max_of: no result for variant {v!r}")
                if math.isnan(row[1]):
                    return math.nan, math.nan
                if best is None or row[1] > best[1]:
                    best = row
            n, mean, ci = best
        if math.isnan(mean) and self.none_as is not None:
            mean, ci = float(self.none_as), 0.0
        mean, ci = mean * self.scale, ci * self.scale
        # A value relative to another result of the same source: "per" divides
        # by it (ratios), "minus" subtracts it (differences); the confidence
        # interval is then not shown, as the two are not independent.
        if self.per_const is not None:
            return (mean / self.per_const if self.per_const else math.nan), 0.0
        if self.per is not None:
            other, _ = self.per.value(results)
            return (mean / other if other else math.nan), 0.0
        if self.minus is not None:
            other, _ = self.minus.value(results)
            return mean - other, 0.0
        return mean, ci

    def nondefault(self):
        """The non-default settings this value needs, also through per, minus and max_of."""
        variants = self.max_of or [self.variant]
        own = {self.spec.get("nondefault", {}).get(f"{self.source}.{v}") for v in variants}
        for other in (self.per, self.minus):
            if other is not None:
                own |= other.nondefault()
        return {x for x in own if x}


def merged(defaults, node):
    out = dict(defaults)
    out.update(node)
    return out


def fmt_num(x, digits):
    if math.isnan(x):
        return "none"
    return f"{x:.{digits}f}"


def fmt_value(mean, ci, digits):
    if math.isnan(mean):
        return "none"
    if ci and not math.isnan(ci) and ci > 0:
        return f"{mean:.{digits}f} ± {ci:.{digits}f}"
    return fmt_num(mean, digits)


def fmt_pct(x):
    return f"{x * 100:+.1f} %"


class Check:
    """One stated number of a finding and how it is compared."""

    KINDS = ("within", "range", "at_least", "at_most", "above", "below", "equal", "order", "highest", "trend",
             "ratio_within")
    REF_FIELDS = ("source", "metric", "model", "variant", "point", "digits", "per", "minus", "none_as", "scale",
                  "max_of")
    KEYS = set(KINDS) | set(REF_FIELDS) | {"label", "tol", "default", "values"}

    def __init__(self, spec, node, defaults, where):
        self.spec = spec
        self.where = where
        if not isinstance(node, dict):
            fail_input(spec["_path"], where, "expected an object (a check)")
        refuse_unknown_keys(spec["_path"], where, node, self.KEYS, "a check")
        d = merged(defaults, {k: v for k, v in node.items() if k in self.REF_FIELDS})
        self.digits = d.get("digits", 1)
        self.label = node.get("label", "")
        kinds = [k for k in self.KINDS if k in node]
        if len(kinds) != 1:
            fail_input(spec["_path"], where, f"expected exactly one comparison of {', '.join(self.KINDS)}")
        self.kind = kinds[0]
        self.arg = node[self.kind]
        number = (int, float)
        if self.kind in ("within", "at_least", "at_most", "above", "below", "equal", "ratio_within") and (
                not isinstance(self.arg, number) or isinstance(self.arg, bool)):
            fail_input(spec["_path"], f"{where}.{self.kind}", "expected a number")
        if self.kind == "range" and not (isinstance(self.arg, list) and len(self.arg) == 2
                                         and all(isinstance(x, number) for x in self.arg)):
            fail_input(spec["_path"], f"{where}.range", "expected [low, high]")
        if self.kind == "trend" and self.arg not in ("increasing", "decreasing", "flat", "not_decreasing"):
            fail_input(spec["_path"], f"{where}.trend", f'expected "increasing", "decreasing", "flat" or "not_decreasing", got {self.arg!r}')
        # The tolerance is the check's own, never inherited: relative for
        # within/range/ratio_within and flat or not-decreasing trends (5 % unless
        # stated), absolute for equal (exact unless stated).
        self.tol = node.get("tol", 0 if self.kind == "equal" else 0.05)
        if not isinstance(self.tol, number) or self.tol < 0:
            fail_input(spec["_path"], f"{where}.tol", "expected a number >= 0")
        self.default = node.get("default")
        if self.kind in ("order", "highest", "trend", "ratio_within"):
            refs = node.get("values")
            if not isinstance(refs, list) or len(refs) < 2:
                fail_input(spec["_path"], where + ".values", "expected a list of at least two values")
            self.refs = [Ref(spec, merged(d, r), f"{where}.values[{i}]") for i, r in enumerate(refs)]
        else:
            self.refs = [Ref(spec, d, where)]
        if self.nondefault() and self.default is None:
            fail_input(spec["_path"], where, "default: required (a value here needs a non-default setting, "
                       "so the row must give the default's figure beside it)")
        if self.default is not None:
            # One set of edits for every value, or a list: one per value.
            per_value = self.default if isinstance(self.default, list) else [self.default] * len(self.refs)
            if len(per_value) != len(self.refs):
                fail_input(spec["_path"], where + ".default", f"expected one object, or a list of {len(self.refs)} (one per value)")
            self.default_refs = [Ref(spec, merged(r.fields, e), where + ".default") for r, e in zip(self.refs, per_value)]

    def nondefault(self):
        """The non-default settings this check's values need (an empty list when none)."""
        return sorted(set().union(*(r.nondefault() for r in self.refs)))

    def judge(self, results, refs=None):
        """Returns (holds, text): whether the stated number holds, and the measured figures."""
        refs = refs or self.refs
        vals = [r.value(results) for r in refs]
        k, a, dg = self.kind, self.arg, self.digits
        m, ci = vals[0]
        shown = fmt_value(m, ci, dg)
        if k == "within":
            dev = (m - a) / a if a else math.nan
            ok = not math.isnan(m) and abs(m - a) <= self.tol * abs(a)
            return ok, f"{shown} against {a:g} ({fmt_pct(dev) if not math.isnan(dev) else 'none'}; within {self.tol * 100:g} %: {'yes' if ok else 'no'})"
        if k == "range":
            lo, hi = a
            ok = not math.isnan(m) and lo * (1 - self.tol) <= m <= hi * (1 + self.tol)
            edge = lo if m < lo else hi if m > hi else None
            where = ("none" if math.isnan(m) else "in range" if edge is None
                     else f"{fmt_pct((m - edge) / edge) if edge else f'{m - edge:+g}'} of {edge:g}")
            return ok, f"{shown} against {lo:g}-{hi:g} ({where}; within {self.tol * 100:g} %: {'yes' if ok else 'no'})"
        if k in ("at_least", "at_most", "above", "below"):
            op = {"at_least": (lambda x: x >= a, "≥"), "at_most": (lambda x: x <= a, "≤"),
                  "above": (lambda x: x > a, ">"), "below": (lambda x: x < a, "<")}[k]
            ok = not math.isnan(m) and op[0](m)
            return ok, f"{shown} ({op[1]} {a:g}: {'yes' if ok else 'no'})"
        if k == "equal":
            ok = not math.isnan(m) and abs(m - a) <= self.tol
            within = f"within {self.tol:g}" if self.tol else "equal"
            return ok, f"{shown} against {a:g} ({within}: {'yes' if ok else 'no'})"
        if k == "ratio_within":
            (m2, _) = vals[1]
            r = m / m2 if m2 else math.nan
            ok = not math.isnan(r) and abs(r - a) <= self.tol * abs(a)
            return ok, f"{fmt_num(m, dg)} / {fmt_num(m2, dg)} = {r * 100:.1f} % against {a * 100:g} % ({'yes' if ok else 'no'})"
        means = [v[0] for v in vals]
        if any(math.isnan(x) for x in means) and k in ("order", "highest", "trend"):
            return False, " → ".join(fmt_num(x, dg) for x in means) + " (a value is missing: no)"
        if k in ("order", "highest"):
            # One value is above another only when the gap exceeds the noise:
            # the half-widths of the two 95 % intervals combined (a gap within
            # them is a tie, and a tie does not make an order).
            def above(i, j):
                return means[i] - means[j] > math.hypot(vals[i][1], vals[j][1])
            names = [r.label or r.variant for r in refs]
            if k == "order":
                pairs = [(i, i + 1) for i in range(len(means) - 1)]
            else:
                pairs = [(0, j) for j in range(1, len(means))]
            ok = all(above(i, j) for i, j in pairs)
            if k == "order":
                shown = f"{names[0]} {fmt_value(*vals[0], dg)}"
                for i, j in pairs:
                    shown += f" {'>' if above(i, j) else 'not >'} {names[j]} {fmt_value(*vals[j], dg)}"
                return ok, shown + ("" if ok else " (the order does not hold beyond the intervals)")
            return ok, (f"{names[0]} {fmt_value(*vals[0], dg)} {'above' if ok else 'not above all of'} "
                        + ", ".join(f"{n} {fmt_value(*v, dg)}" for n, v in zip(names[1:], vals[1:]))
                        + ("" if ok else " (beyond the intervals)"))
        if k == "trend":
            steps = list(zip(means, means[1:]))
            if a == "increasing":
                ok = all(y > x for x, y in steps)
            elif a == "decreasing":
                ok = all(y < x for x, y in steps)
            elif a == "flat":
                top = max(abs(x) for x in means) or 1.0
                ok = (max(means) - min(means)) <= self.tol * top
            else:  # not_decreasing: never more than tol below the highest value before it
                ok = all(means[i] >= max(means[:i]) * (1 - self.tol) for i in range(1, len(means)))
            return ok, " → ".join(fmt_num(x, dg) for x in means) + f" ({a.replace('_', ' ')}: {'yes' if ok else 'no'})"
        raise AssertionError(k)


class Finding:
    KEYS = {"finding", "note", "not_judged", "unjudged", "defaults", "checks"}

    def __init__(self, spec, node, index):
        where = f"findings[{index}]"
        self.spec = spec
        if not isinstance(node, dict):
            fail_input(spec["_path"], where, "expected an object (a finding)")
        refuse_unknown_keys(spec["_path"], where, node, self.KEYS, "a finding")
        if not isinstance(node.get("checks", []), list) or not isinstance(node.get("unjudged", []), list):
            fail_input(spec["_path"], where, "checks and unjudged: expected lists")
        if "tol" in node.get("defaults", {}):
            fail_input(spec["_path"], where + ".defaults.tol", "a tolerance is each check's own (relative or absolute by its comparison)")
        if "finding" not in node:
            fail_input(spec["_path"], where, "finding: missing (the paper's statement, short)")
        self.text = node["finding"]
        self.note = node.get("note", "")
        self.not_judged = node.get("not_judged")
        # Parts of the statement no output of the runs can decide: the verdict
        # is then at most "partly reproduced", and the row names them.
        self.unjudged = node.get("unjudged", [])
        defaults = merged(spec.get("defaults", {}), node.get("defaults", {}))
        self.checks = [Check(spec, c, defaults, f"{where}.checks[{i}]") for i, c in enumerate(node.get("checks", []))]
        if not self.checks and not self.not_judged:
            fail_input(spec["_path"], where, "expected checks, or not_judged with the reason nothing is compared")

    def verdict(self, results):
        """Returns (word, text) for the verdict table."""
        if not self.checks:
            return "not judged", f"not judged: {self.not_judged}"
        judged = []
        for c in self.checks:
            ok, text = c.judge(results)
            label = f"{c.label}: " if c.label else ""
            extra = ""
            nd = c.nondefault()
            needs_setting = False
            if nd:
                dok, dtext = c.judge(results, c.default_refs)
                extra = f" [with {', '.join(nd)}; at defaults {dtext}]"
                # A check that holds at the defaults too needs no setting.
                needs_setting = ok and not dok
            judged.append((ok, needs_setting, label + text + extra))
        held = [j for j in judged if j[0]]
        unjudged = ("; not judged (no output of the runs holds it): " + "; ".join(self.unjudged)) if self.unjudged else ""
        if len(held) == len(judged) and self.unjudged:
            word = "partly reproduced"
            body = "holds: " + "; ".join(j[2] for j in judged)
        elif len(held) == len(judged):
            word = "reproduced only with non-default settings" if any(j[1] for j in judged) else "reproduced"
            body = "; ".join(j[2] for j in judged)
        elif held:
            word = "partly reproduced"
            body = ("holds: " + "; ".join(j[2] for j in held) +
                    ". Does not hold: " + "; ".join(j[2] for j in judged if not j[0]))
        else:
            word = "not reproduced"
            body = "; ".join(j[2] for j in judged)
        text = f"**{word}**: {body}{unjudged}"
        if self.note:
            text += f". {self.note}"
        return word, text


def verdict_table(spec, results):
    lines = ["", "| finding | verdict |", "| --- | --- |"]
    for i, node in enumerate(spec["findings"]):
        f = Finding(spec, node, i)
        _, text = f.verdict(results)
        lines.append(f"| {f.text} | {text.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def pivot_table(spec, table, results, where):
    """A table of one metric: rows and columns each a variant list or an axis."""
    src = table.get("source")
    d = {"source": src, "metric": table.get("metric"), "model": table.get("model", "total"), "variant": table.get("variant")}
    digits = table.get("digits", 1)
    rows, cols = table["rows"], table["columns"]
    header = [table.get("corner", "")] + [c.get("label", c.get("value")) for c in cols]
    head = "| " + " | ".join(header) + " |"
    # A label may span several columns ("SLO ms | load"): count the cells drawn.
    lines = ["", head, "|" + "---|" * (head.count(" | ") + 1)]
    for r in rows:
        cells = [str(r.get("label", r.get("value")))]
        for c in cols:
            fields = dict(d)
            point = dict(table.get("point", {}))
            for dim in (r, c):
                if "point" in dim:
                    point.update(dim["point"])
                elif dim["dim"] == "variant":
                    fields["variant"] = dim["value"]
                elif dim["dim"] == "model":
                    fields["model"] = dim["value"]
                elif dim["dim"] == "metric":
                    fields["metric"] = dim["value"]
                else:
                    point[dim["dim"]] = dim["value"]
            fields["point"] = point
            ref = Ref(spec, fields, where)
            got = ref.lookup(results)
            if got is None:
                # A cell without a result is a typo unless the table says some are expected.
                if not table.get("missing", False):
                    fail_input(spec["_path"], where, ref.missing() +
                               ' (a table whose cells may be missing says "missing": true)')
                cells.append("-")
                continue
            m, ci = got[1], got[2]
            cells.append(fmt_value(m, ci if table.get("ci", True) else 0, digits))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def expand_dim(dim):
    """{"dim": "gpus", "values": [1, 2]} -> one entry per value;
    {"product": [dim, dim, ...]} -> one entry per combination of axis levels."""
    if "product" in dim:
        entries = [{"point": {}, "label": []}]
        for d in dim["product"]:
            entries = [{"point": {**e["point"], d["dim"]: str(v)}, "label": e["label"] + [str(v)]}
                       for e in entries for v in d["values"]]
        return [{"point": e["point"], "label": " | ".join(e["label"])} for e in entries]
    if "values" in dim:
        return [{"dim": dim["dim"], "value": str(v) if dim["dim"] not in ("variant", "model", "metric") else v,
                 "label": dim.get("labels", {}).get(str(v), str(v))} for v in dim["values"]]
    return [dim]


def value_text(spec, node, results, where):
    ref = Ref(spec, merged(spec.get("defaults", {}), node), where)
    m, ci = ref.value(results)
    return fmt_value(m, ci if node.get("ci", True) else 0, node.get("digits", 1))


def generated_blocks(spec, results):
    """Every generated part of the docs this findings file writes, by ID."""
    name = spec["name"]
    blocks = {f"verdicts:{name}": verdict_table(spec, results)}
    for i, table in enumerate(spec.get("tables", [])):
        where = f"tables[{i}]"
        t = dict(table)
        t["rows"] = [e for dim in table["rows"] for e in expand_dim(dim)]
        t["columns"] = [e for dim in table["columns"] for e in expand_dim(dim)]
        blocks[f"table:{name}:{table['id']}"] = pivot_table(spec, t, results, where)
    for vid, node in spec.get("values", {}).items():
        blocks[f"value:{name}:{vid}"] = value_text(spec, node, results, f"values.{vid}")
    return blocks


def render_doc(path, blocks, used):
    with open(path) as f:
        text = f.read()

    def sub(m):
        bid = m.group(1)
        if bid not in blocks:
            raise FindingsError(f"{os.path.relpath(path, ROOT)}: <!-- gen:{bid} -->: no findings file writes this part")
        used.add(bid)
        return f"<!-- gen:{bid} -->{blocks[bid]}<!-- /gen -->"

    return text, GEN_RE.sub(sub, text)


# ---- main ------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build directory holding src/cli/clustersim (default: build)")
    ap.add_argument("-j", type=int, default=2, help="runs at a time in each sweep (default 2)")
    ap.add_argument("--only", action="append", default=[], help="only this findings file (its name); repeatable")
    ap.add_argument("--from-results", action="store_true", help="judge and write the docs from the committed results, no run")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 with a diff when anything would change")
    ap.add_argument("--workdir", help="keep the sweeps' outputs in this directory (default: a temporary one)")
    ap.add_argument("--reuse", action="store_true", help="with --workdir: use a sweep's outputs already there instead of "
                    "running it again (while editing a findings file; never for a result to commit)")
    args = ap.parse_args()

    clustersim = os.path.join(args.build if os.path.isabs(args.build) else os.path.join(ROOT, args.build), "src", "cli", "clustersim")
    specs = []
    try:
        for fn in sorted(os.listdir(FINDINGS_DIR)):
            if fn.endswith(".json"):
                specs.append(load_findings(os.path.join(FINDINGS_DIR, fn)))
        names = {s["name"] for s in specs}
        if len(names) != len(specs):
            raise FindingsError("two findings files have the same name")
        for o in args.only:
            if o not in names:
                raise FindingsError(f"--only {o}: no findings file of that name (have: {', '.join(sorted(names))})")
    except FindingsError as e:
        print(f"reproduce: {e}", file=sys.stderr)
        return 2
    selected = [s for s in specs if not args.only or s["name"] in args.only]

    if not args.from_results and not os.access(clustersim, os.X_OK):
        print(f"reproduce: {clustersim}: not built (meson setup build && ninja -C build, or --build DIR)", file=sys.stderr)
        return 2

    changes = {}  # path -> (old text, new text)
    moved = {}  # page -> the "mean ± ci" texts of results that this run changed
    all_blocks = {}
    log = sys.stderr if sys.stderr.isatty() else open(os.devnull, "w")
    try:
        with tempfile.TemporaryDirectory(prefix="reproduce-") as tmp:
            work = args.workdir or tmp
            os.makedirs(work, exist_ok=True)
            for spec in specs:
                wanted = wanted_metrics(spec)
                results = {}
                for sid, source in spec["sources"].items():
                    rpath = os.path.join(RESULTS_DIR, spec["name"], f"{sid}.csv")
                    if spec in selected and not args.from_results:
                        source = dict(source)
                        source["metrics"] = sorted(wanted[sid] | (QUOTED_METRICS if source["kind"] == "sweep" else set()))
                        if source["kind"] == "sweep":
                            res = run_sweep(clustersim, source, work, args.j, log, args.reuse)
                        elif source["kind"] == "run":
                            res = run_single(clustersim, source, work, log).only(source["metrics"])
                        else:
                            res = run_provision(clustersim, source, log)
                        new = res.write(rpath)
                        old = open(rpath).read() if os.path.exists(rpath) else ""
                        if new != old:
                            changes[rpath] = (old, new)
                            moved[spec["page"]] = moved.get(spec["page"], set()) | (
                                quoted_strings(parse_results_text(old)) - quoted_strings(parse_results_text(new)))
                        # Judged from the results as written, so that a rerun and
                        # --from-results give the same docs to the last digit.
                        results[sid] = parse_results_text(new)
                    else:
                        if not os.path.exists(rpath):
                            raise FindingsError(f"{os.path.relpath(rpath, ROOT)}: missing (run tools/reproduce.py --only {spec['name']})")
                        results[sid] = Results.read(rpath)
                all_blocks.update(generated_blocks(spec, results))
        used = set()
        pages = DOCS + sorted({os.path.join(ROOT, s["page"]) for s in specs})
        for page in pages:
            old, new = render_doc(page, all_blocks, used)
            if new != old:
                changes[page] = (old, new)
        stale = stale_quotes(moved, changes)
        unused = sorted(set(all_blocks) - used)
        if unused:
            raise FindingsError("generated parts no doc shows (add <!-- gen:ID --><!-- /gen --> where they belong): " + ", ".join(unused))
    except FindingsError as e:
        print(f"reproduce: {e}", file=sys.stderr)
        return 2
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        # A findings file of the wrong shape that the checks above did not name.
        print(f"reproduce: a findings file (experiments/findings/) is malformed: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"reproduce: a run failed: {e}", file=sys.stderr)
        return 1

    for line in stale:
        print(line, file=sys.stderr)
    if args.check:
        if not changes:
            print(f"reproduce: the committed results and docs are current ({len(specs)} findings files)")
            return 0
        for path, (old, new) in sorted(changes.items()):
            rel = os.path.relpath(path, ROOT)
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/" + rel, "b/" + rel))
        print(f"reproduce: {len(changes)} file(s) differ from what {'the committed results give' if args.from_results else 'the runs give'}: "
              "run tools/reproduce.py and commit", file=sys.stderr)
        return 1
    for path, (_, new) in sorted(changes.items()):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(new)
        print(f"wrote {os.path.relpath(path, ROOT)}")
    if not changes:
        print("nothing changed")
    if stale:
        print(f"reproduce: {len(stale)} number(s) in the prose quote a result that moved: update them and rerun", file=sys.stderr)
        return 1
    return 0


# Metrics of a sweep that the pages' prose quotes (as "mean ± ci"), kept in the
# results beside those the findings and tables read, so that a quote of one
# that moves is found.
QUOTED_METRICS = {"goodput_rps", "throughput_rps", "submitted_rps", "max_load_rps", "mean_batch",
                  "median_batch", "latency_p50_ms", "latency_p99_ms"}
QUOTE_RE = re.compile(r"(\d+(?:\.\d+)?)\s+±\s+(\d+(?:\.\d+)?)")


def quoted_strings(results):
    """Every "mean ± ci" text a page could quote of these results (1 or 2 decimals)."""
    out = set()
    for n, mean, ci in results.rows.values():
        if not math.isnan(mean) and not math.isnan(ci):
            out.update(fmt_value(mean, ci, d) for d in (1, 2))
    return out


def stale_quotes(moved, changes):
    """Lines of the pages' prose (outside the generated parts) that quote a
    result this run changed: the number there is the old one."""
    out = []
    every = set().union(*moved.values()) if moved else set()
    pages = dict(moved)
    # docs/experiments.md quotes every reproduction.
    for doc in DOCS:
        pages[os.path.relpath(doc, ROOT)] = every
    for page, texts in sorted(pages.items()):
        if not texts:
            continue
        path = os.path.join(ROOT, page)
        text = changes[path][1] if path in changes else open(path).read()
        prose = GEN_RE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
        # A quote may be wrapped across lines: "2391.2 ±" then "76.3".
        for q in QUOTE_RE.finditer(prose):
            quote = f"{q.group(1)} ± {q.group(2)}"
            if quote in texts:
                lineno = prose.count("\n", 0, q.start()) + 1
                out.append(f"{page}:{lineno}: quotes {quote}, a result that has moved")
    return out


def parse_results_text(text):
    res = Results()
    for row in csv.DictReader(io.StringIO(text)):
        res.add(row["variant"], row["point"], row["model"], row["metric"],
                int(row["n"]), float(row["mean"]), float(row["ci95"]))
    return res


if __name__ == "__main__":
    sys.exit(main())
