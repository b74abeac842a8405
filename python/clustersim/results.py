"""A run's results as Python values: the summary (what summary.json holds),
per-model rows, latency percentiles, warnings, provenance, the CLI's table,
and DataFrames when pandas is installed."""
import csv
import ctypes
import json
import os
import shutil
import tempfile
from collections import namedtuple

from . import _native

_lib = _native.lib

# The time series' CSV files, as `clustersim run -o` names them.
TIME_SERIES = ("gpus_over_time", "gpu_timeseries", "worker_latency", "models_over_time",
               "cluster_over_time")
# Written only by runs with LLM deployments (the scenario's "llm").
LLM_TIME_SERIES = ("llm_over_time",)
TABLES = ("models", "gpus", "requests", "llm") + TIME_SERIES + LLM_TIME_SERIES

Warning = namedtuple("Warning", "code model gpu message")
Warning.__doc__ = """A condition that does not stop a run but would mislead a reader of its
numbers (docs/scenario.md, "Warnings"): code is stable; model is None and
gpu -1 when it concerns no single model or GPU."""


class Row(dict):
    """A dict whose keys are also attributes: row.goodput_rps == row["goodput_rps"]."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __dir__(self):
        return list(self.keys()) + dir(dict)


def _rows(value):
    if isinstance(value, dict):
        return Row({k: _rows(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_rows(v) for v in value]
    return value


def _flatten(row):
    """A model's row with nested objects as dotted columns: latency_ms.p99, ..."""
    out = {}
    for k, v in row.items():
        if isinstance(v, dict):
            for k2, v2 in v.items():
                if isinstance(v2, dict):
                    for k3, v3 in v2.items():
                        out[f"{k}.{k2}.{k3}"] = v3
                else:
                    out[f"{k}.{k2}"] = v2
        elif not isinstance(v, list):
            out[k] = v
    return out


class Results(_native.Owned):
    """What a run gives (Scenario.run). Every figure is defined in
    docs/scenario.md, "What is measured".

    summary: the whole summary as a dict, exactly what `clustersim run -o`
        writes to summary.json (to_json() gives its text byte for byte).
    models: the per-model rows (Row: keys are also attributes), in scenario
        order, the LLM deployments' after the DNN models'; results["resnet50"]
        is one of them. total: the totals row.
    llm: the LLM deployments' own rows (summary.json's "llm": TTFT, TBT and
        TPOT percentiles, tokens/s, KV use, preemptions; docs/llm.md, "LLM
        models in a scenario"), [] without any.
    warnings: the run's warnings (Warning: code, model, gpu, message).
    provenance: version, seed, setup (profiles with their hashes, cluster,
        clients, overrides) and the effective scenario (every default made
        explicit), what a rerun needs.
    """

    def __init__(self, handle, name, requests_dir=None, timeseries=False):
        self._h = handle
        self.name = name
        self._requests_dir = requests_dir
        self._timeseries = timeseries
        self._json = _native.take_string(_lib.cs_results_to_json(handle))
        self.summary = _rows(json.loads(self._json))
        self.models = self.summary["models"]
        self.total = self.summary["total"]
        self.llm = self.summary.get("llm", [])
        self.warnings = []
        for i in range(_lib.cs_results_n_warnings(handle)):
            w = _lib.cs_results_warning(handle, i).contents
            self.warnings.append(Warning(w.code.decode(), w.model.decode() if w.model else None,
                                         w.gpu, w.message.decode()))

    # ---- values -------------------------------------------------------------------------

    def __getitem__(self, model):
        for m in self.models:
            if m["model"] == model:
                return m
        if model == "total":
            return self.total
        raise KeyError(f"clustersim: the run has no model {model!r} "
                       f"(models: {', '.join(m['model'] for m in self.models)})")

    def latency(self, model="total"):
        """End-to-end latency of a model's measured requests, in ms: a Row
        with p50, p90, p95, p99, max, mean (None when no request completed)."""
        return self[model]["latency_ms"]

    @property
    def provenance(self):
        s = self.summary
        return Row({"clustersim_version": s["clustersim_version"], "seed": s["seed"],
                    "setup": s["setup"], "effective_scenario": self.effective_scenario()})

    def effective_scenario(self):
        """The scenario as it ran, every default explicit (scenario.json of
        `clustersim run -o`), as a dict."""
        return json.loads(_lib.cs_results_effective_scenario(self._handle()).decode())

    def to_json(self):
        """The summary's text, byte for byte what summary.json holds."""
        return self._json

    def table(self):
        """The table `clustersim run` prints, as text."""
        h = self._handle()
        return _native.capture_stream(lambda f: _lib.cs_results_print_table(h, f))

    def __str__(self):
        return self.table()

    def __repr__(self):
        t = self.total
        return (f"<clustersim.Results {self.name!r}: {len(self.models)} models, goodput "
                f"{t['goodput_rps']:.1f} of {t['offered_rps']:.1f} req/s offered>")

    # ---- tables ---------------------------------------------------------------------------

    def requests(self):
        """Every request of the run as a list of dicts (the columns of
        requests.csv, docs/scenario.md), when run(requests=True)."""
        with open(self._requests_path(), newline="") as f:
            return list(csv.DictReader(f))

    def to_pandas(self, what="models"):
        """A table of the run as a pandas DataFrame, or, when pandas is not
        installed, as a list of dicts (one per row, the same columns).

        what: "models" (one row per model and the total; nested figures as
        dotted columns: latency_ms.p99, stages_ms.gpu.p50, requests.good ...),
        "gpus" (one row per GPU), "requests" (run(requests=True)), or one of
        the time series of run(timeseries=True), the CSV files `clustersim
        run -o` writes under the same names (docs/scenario.md, "Outputs"):
        "gpus_over_time", "gpu_timeseries", "worker_latency",
        "models_over_time", "cluster_over_time", and with LLM deployments
        "llm" (one row per deployment, nested figures dotted: ttft_ms.p99 ...)
        and "llm_over_time" (KV use, preemptions, tokens/s per bin)."""
        if what == "models":
            rows = [_flatten(m) for m in self.models] + [_flatten(self.total)]
            return _frame(rows)
        if what == "gpus":
            return _frame([_flatten(g) for g in self.summary["gpus"]])
        if what == "requests":
            return _frame_csv(self._requests_path())
        if what == "llm":
            return _frame([_flatten(m) for m in self.llm])
        if what in LLM_TIME_SERIES and not self.llm:
            raise ValueError(f"clustersim: to_pandas({what!r}): the run has no LLM deployment")
        if what in TIME_SERIES + LLM_TIME_SERIES:
            if not self._timeseries:
                raise ValueError(f"clustersim: to_pandas({what!r}) needs the time series: "
                                 f"run(timeseries=True)")
            d = tempfile.mkdtemp(prefix="clustersim-")
            try:
                self._write_time_series(d)
                return _frame_csv(os.path.join(d, what + ".csv"))
            finally:
                shutil.rmtree(d, ignore_errors=True)
        raise ValueError(f"clustersim: to_pandas: expected one of "
                         f"{', '.join(repr(w) for w in TABLES)}, got {what!r}")

    def _write_time_series(self, d):
        """Writes the time-series CSVs into d (the five, and llm_over_time with LLM
        deployments), named as `clustersim run -o` names them."""
        h = self._handle()
        p = {w: os.path.join(d, w + ".csv").encode() for w in TIME_SERIES}
        err = _native.error_slot()
        ok = (_lib.cs_results_write_gpu_timeseries(h, p["gpus_over_time"], ctypes.byref(err)) and
              _lib.cs_results_write_gpu_detail(h, p["gpu_timeseries"], p["worker_latency"],
                                               ctypes.byref(err)) and
              _lib.cs_results_write_model_timeseries(h, p["models_over_time"],
                                                     p["cluster_over_time"], ctypes.byref(err)))
        if ok and _lib.cs_results_n_llm(h) > 0:
            ok = _lib.cs_results_write_llm_timeseries(
                h, os.path.join(d, "llm_over_time.csv").encode(), ctypes.byref(err))
        if not ok:
            _native.raise_error(err)

    def _requests_path(self):
        if not self._requests_dir:
            raise ValueError("clustersim: the run kept no requests: run(requests=True)")
        return os.path.join(self._requests_dir, "requests.csv")

    # ---- lifetime ------------------------------------------------------------------------

    _free = staticmethod(_lib.cs_results_free)
    _closed = "the results were closed"

    def close(self):
        """Frees the results and their files now (else when collected)."""
        super().close()
        if getattr(self, "_requests_dir", None):
            shutil.rmtree(self._requests_dir, ignore_errors=True)
            self._requests_dir = None


def _pandas():
    try:
        import pandas
    except ImportError:
        return None
    return pandas


def _frame(rows):
    pd = _pandas()
    return pd.DataFrame(rows) if pd else rows


def _frame_csv(path):
    pd = _pandas()
    if pd:
        return pd.read_csv(path)
    with open(path, newline="") as f:
        return [{k: _number(v) for k, v in r.items()} for r in csv.DictReader(f)]


def _number(text, empty=""):
    """A CSV cell as a number when it reads as one; an empty cell is empty."""
    if text == "":
        return empty
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
