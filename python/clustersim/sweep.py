"""Sweeps: the grid of simulations `clustersim sweep` runs (docs/experiments.md,
"Sweeps"), from an experiment file or a Python dict, with the same common
random numbers, aggregation and output files."""
import csv
import ctypes
import io
import json
import os
import shutil
import sys
import tempfile
import threading

from . import _native
from .results import Row, _frame, _number
from .scenario import Scenario

_lib = _native.lib


class Experiment(_native.Owned):
    """An experiment (docs/experiments.md): a base scenario, variants, axes
    and seeds. Experiment.load(path) reads a file; Experiment.from_dict(d,
    base_dir) takes the same content as a dict, its file names ("base",
    "plugins") relative to base_dir. Checked whole when made (every edit of
    the grid applied once): a bad experiment raises InputError."""
    _free = staticmethod(_lib.cs_experiment_free)
    _closed = "the experiment was closed"

    def __init__(self, handle, name):
        self._h = handle
        self.name = name
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path):
        err = _native.error_slot()
        h = _lib.cs_experiment_load(_native.c_str(os.fspath(path)), ctypes.byref(err))
        if not h:
            _native.raise_error(err)
        return cls(h, _lib.cs_experiment_name(h).decode())

    @classmethod
    def from_dict(cls, d, base_dir=".", name="experiment.json"):
        if not isinstance(d, dict):
            raise TypeError(f"clustersim: Experiment.from_dict takes a dict, got "
                            f"{type(d).__name__}")
        d = dict(d)
        d.setdefault("name", os.path.splitext(name)[0])
        base_dir = os.path.abspath(os.fspath(base_dir))
        # The library reads experiments from files, resolving their file
        # names against the file's directory: the dict's names are made
        # absolute against base_dir, and the file written in a directory of
        # its own (removed at once: loading reads everything).
        if isinstance(d.get("base"), str):
            d["base"] = os.path.join(base_dir, d["base"])
        if isinstance(d.get("plugins"), list):
            d["plugins"] = [os.path.join(base_dir, p) if isinstance(p, str) else p
                            for p in d["plugins"]]
        tmp = tempfile.mkdtemp(prefix="clustersim-")
        try:
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                json.dump(d, f)
            return cls.load(path)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def use(self, registry):
        """Runs the experiment's runs with the policies of registry (a
        Registry), besides the experiment's own plug-ins; before sweep() or
        scenario(). Returns self."""
        from .policies import Registry
        if not isinstance(registry, Registry):
            raise TypeError(f"clustersim: use() takes a Registry, got {type(registry).__name__}")
        err = _native.error_slot()
        if not _lib.cs_experiment_use_registry(self._handle(), registry._handle(),
                                               ctypes.byref(err)):
            _native.raise_error(err)
        self._registry = registry
        return self

    # ---- the grid ----------------------------------------------------------------------

    @property
    def n_runs(self):
        return _lib.cs_experiment_n_runs(self._handle())

    @property
    def variants(self):
        h = self._handle()
        return [_lib.cs_experiment_variant_name(h, i).decode()
                for i in range(_lib.cs_experiment_n_variants(h))]

    @property
    def axes(self):
        """[(name, [labels])] in axis order."""
        h = self._handle()
        return [(_lib.cs_experiment_axis_name(h, a).decode(),
                 [_lib.cs_experiment_axis_label(h, a, l).decode()
                  for l in range(_lib.cs_experiment_axis_n_levels(h, a))])
                for a in range(_lib.cs_experiment_n_axes(h))]

    def runs(self):
        """Every run: a Row with run, variant, each axis' label and seed."""
        h = self._handle()
        names = [a for a, _ in self.axes]
        out = []
        for r in range(self.n_runs):
            row = Row(run=r, variant=_lib.cs_experiment_run_variant(h, r).decode())
            for a, name in enumerate(names):
                row[name] = _lib.cs_experiment_run_label(h, r, a).decode()
            row["seed"] = _lib.cs_experiment_run_seed(h, r)
            out.append(row)
        return out

    def scenario(self, run):
        """The scenario of one run, its edits applied, to run or inspect
        alone: Experiment.scenario(7).run() is the sweep's run 7 (it runs
        with the run's seed unless given another)."""
        if not 0 <= run < self.n_runs:
            raise IndexError(f"clustersim: run {run}: the experiment has {self.n_runs} runs")
        err = _native.error_slot()
        h = _lib.cs_experiment_run_scenario(self._handle(), run, ctypes.byref(err))
        if not h:
            _native.raise_error(err)
        sc = Scenario(h, f"{self.name} run {run}")
        sc._registry = getattr(self, "_registry", None)
        sc.default_seed = _lib.cs_experiment_run_seed(self._handle(), run)
        return sc

    # ---- running --------------------------------------------------------------------------

    def sweep(self, threads=None, shard=None, progress=None, max_requests=None):
        """Runs the grid and returns its SweepResults.

        threads: runs at once (None: every processor).
        shard: (k, n) or "k/n", 1-based as `clustersim sweep --shard k/n`:
            only the runs whose number mod n is k - 1.
        progress: None shows a tqdm bar when tqdm is installed and stderr is a
            terminal; False nothing; a callable(done, total) is called after
            each run (from the library's worker threads, one call at a time).
        max_requests: each run's request limit (Scenario.run's).

        The GIL is released while the runs run."""
        opt = _native.SweepOptions()
        _lib.cs_sweep_options_init(ctypes.byref(opt))
        if threads is not None:
            if not isinstance(threads, int) or threads < 1:
                raise ValueError(f"clustersim: threads: expected an integer >= 1, got {threads!r}")
            opt.threads = threads
        if shard is not None:
            k, n = _shard(shard)
            opt.shard_index, opt.shard_count = k - 1, n
        if max_requests is not None:
            opt.max_requests = int(max_requests)
        bar = None
        if progress is None:
            bar = _tqdm_bar(self.n_runs if shard is None else None)
            progress = bar.update_to if bar else None
        failure = []
        callback = None
        if progress:
            def on_progress(done, total, _data):
                try:
                    progress(done, total)
                except BaseException as e:  # the runs go on; raised at the end
                    failure.append(e)
            callback = _native.SWEEP_PROGRESS(on_progress)
            opt.progress = ctypes.cast(callback, ctypes.c_void_p)
        try:
            with self._lock:
                h = _lib.cs_experiment_sweep(self._handle(), ctypes.byref(opt))
        finally:
            if bar:
                bar.close()
        if not h:
            raise ValueError("clustersim: the sweep's options were refused (see the warning)")
        res = SweepResults(h, self.name, shard is not None)
        if failure:
            raise failure[0]
        return res

    def __repr__(self):
        return f"<clustersim.Experiment {self.name!r}: {self.n_runs} runs>"


def _shard(shard):
    if isinstance(shard, str):
        parts = shard.split("/")
        try:
            k, n = (int(p) for p in parts)
        except ValueError:
            raise ValueError(f"clustersim: shard: expected \"k/n\", got {shard!r}") from None
    else:
        k, n = shard
    if not (isinstance(k, int) and isinstance(n, int) and 1 <= k <= n):
        raise ValueError(f"clustersim: shard: expected 1 <= k <= n, got {k}/{n}")
    return k, n


class _Bar:
    def __init__(self, tqdm, total):
        self._bar = tqdm(total=total, unit="run", desc="sweep")

    def update_to(self, done, total):
        self._bar.total = total
        self._bar.n = done
        self._bar.refresh()

    def close(self):
        self._bar.close()


def _tqdm_bar(total):
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return _Bar(tqdm, total)


class SweepResults(_native.Owned):
    """A sweep's results: the runs table and its aggregation (mean and 95 %
    confidence interval per variant, axis point, model and metric), as the
    files `clustersim sweep` writes, byte for byte (text(name), write(dir)).

    runs: runs.csv's rows (numbers as numbers); aggregate: aggregate.json as
    a dict; n_runs, n_invalid: the runs held, and those not "ok"."""

    def __init__(self, handle, name, shard):
        self._h = handle
        self.name = name
        self.shard = shard
        self.n_runs = _lib.cs_sweep_results_n_runs(handle)
        self.n_invalid = _lib.cs_sweep_results_n_invalid(handle)
        self.runs = [{k: _number(v, empty=None) for k, v in r.items()}
                     for r in csv.DictReader(io.StringIO(self.text("runs.csv")))]
        self.aggregate = None if shard else json.loads(self.text("aggregate.json"))

    def text(self, name):
        """The text of one output file: "runs.csv", "aggregate.csv",
        "aggregate.json", "sweep.json" (a shard's: "runs.csv", "shard.json")."""
        t = _native.take_string(_lib.cs_sweep_results_text(self._handle(), name.encode()))
        if t is None:
            raise ValueError(f"clustersim: the sweep has no output {name!r}")
        return t

    def write(self, directory, force=False):
        """Writes the output set into directory as `clustersim sweep -o DIR`
        does (without the figures: `clustersim sweep plot DIR` draws them)."""
        err = _native.error_slot()
        if not _lib.cs_sweep_results_write(self._handle(), _native.c_str(os.fspath(directory)),
                                           1 if force else 0, ctypes.byref(err)):
            _native.raise_error(err)

    def to_pandas(self, what="runs"):
        """"runs" (runs.csv) or "aggregate" (aggregate.csv) as a DataFrame,
        or a list of dicts without pandas."""
        if what == "runs":
            return _frame(self.runs)
        if what == "aggregate":
            rows = [{k: _number(v, empty=None) for k, v in r.items()}
                    for r in csv.DictReader(io.StringIO(self.text("aggregate.csv")))]
            return _frame(rows)
        raise ValueError(f"clustersim: to_pandas: expected \"runs\" or \"aggregate\", got {what!r}")

    _free = staticmethod(_lib.cs_sweep_results_free)
    _closed = "the sweep's results were closed"

    def __repr__(self):
        return f"<clustersim.SweepResults {self.name!r}: {self.n_runs} runs, {self.n_invalid} invalid>"


def sweep(experiment, base_dir=".", **kwargs):
    """Runs an experiment (an Experiment, a file path or a dict whose file
    names are relative to base_dir); keyword arguments as Experiment.sweep."""
    if isinstance(experiment, Experiment):
        return experiment.sweep(**kwargs)
    e = Experiment.from_dict(experiment, base_dir) if isinstance(experiment, dict) \
        else Experiment.load(experiment)
    with e:
        return e.sweep(**kwargs)
