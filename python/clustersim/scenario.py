"""Scenarios: load, edit as the CLI's --set/--unset do, validate, run."""
import ctypes
import json
import os
import shutil
import tempfile
import threading

from . import _native
from .results import Results

_lib = _native.lib


class Scenario(_native.Owned):
    """A scenario (docs/scenario.md): load one with Scenario.load(path) or
    build one from a dict with Scenario.from_dict(d); edit it with set() and
    unset() (the paths of the CLI's --set and --unset); run it with run().

    File names inside the scenario (profiles, network curve, traces) are
    resolved against the scenario file's directory, or base_dir for a
    scenario built from a dict. A scenario can be used as a context manager;
    it is freed when it leaves the block, or when collected."""
    _free = staticmethod(_lib.cs_scenario_free)
    _closed = "the scenario was closed"

    def __init__(self, handle, name):
        if not handle:
            raise ValueError("clustersim: Scenario() takes a handle: use Scenario.load() "
                             "or Scenario.from_dict()")
        self._h = handle
        self.name = name
        # cs_run uses one scenario from one thread at a time (clustersim.h);
        # different scenarios run in parallel.
        self._lock = threading.Lock()
        # The seed run() uses when given none (an experiment's run: its seed
        # is not written into the scenario, as the sweep passes it).
        self.default_seed = None

    # ---- making one -------------------------------------------------------------

    @classmethod
    def load(cls, path):
        """Loads a scenario file. Raises InputError (file, JSON path, what was
        expected) when it cannot be read or is not JSON; its content is
        checked by validate() and run()."""
        err = _native.error_slot()
        h = _lib.cs_scenario_load(_native.c_str(os.fspath(path)), ctypes.byref(err))
        if not h:
            _native.raise_error(err)
        sc = cls(h, os.fspath(path))
        sc._load_plugins()
        return sc

    @classmethod
    def from_json(cls, text, name="scenario.json", base_dir="."):
        """A scenario from JSON text; name is the file name messages use."""
        err = _native.error_slot()
        h = _lib.cs_scenario_new_from_json(text.encode(), name.encode(),
                                           _native.c_str(os.fspath(base_dir)), ctypes.byref(err))
        if not h:
            _native.raise_error(err)
        sc = cls(h, name)
        sc._load_plugins()
        return sc

    def _load_plugins(self):
        # The plug-ins the scenario's "plugins" field names (docs/scenario.md),
        # into its registry, as the CLI loads them.
        err = _native.error_slot()
        if not _lib.cs_scenario_load_plugins(self._handle(), ctypes.byref(err)):
            _native.raise_error(err)

    @classmethod
    def from_dict(cls, d, name="scenario.json", base_dir="."):
        """A scenario from a dict (what json.load gives for a scenario file)."""
        if not isinstance(d, dict):
            raise TypeError(f"clustersim: Scenario.from_dict takes a dict, got "
                            f"{type(d).__name__}")
        return cls.from_json(json.dumps(d), name, base_dir)

    def use(self, registry):
        """Runs the scenario with the policies of registry (a Registry: the
        built-in ones and those added in Python). Returns self."""
        from .policies import Registry
        if not isinstance(registry, Registry):
            raise TypeError(f"clustersim: use() takes a Registry, got {type(registry).__name__}")
        _native.lib.cs_scenario_set_registry(self._handle(), registry._handle())
        self._registry = registry  # its policies' callbacks live as long as the scenario
        self._load_plugins()
        return self

    # ---- editing ------------------------------------------------------------------

    def set(self, path, value):
        """Sets the field at path (e.g. "clients[0].rate", "dispatch.policy",
        "clients[*].slo_ms") to value, a Python value written as JSON: as the
        CLI's --set PATH=JSON. Recorded in the run's provenance. Returns self."""
        err = _native.error_slot()
        text = json.dumps(value, allow_nan=False)
        if not _lib.cs_scenario_set(self._handle(), path.encode(), text.encode(),
                                    ctypes.byref(err)):
            _native.raise_error(err)
        return self

    def unset(self, path):
        """Removes the field at path (the CLI's --unset). Returns self."""
        err = _native.error_slot()
        if not _lib.cs_scenario_unset(self._handle(), path.encode(), ctypes.byref(err)):
            _native.raise_error(err)
        return self

    def to_dict(self):
        """The scenario as a dict (its JSON, with the edits made)."""
        return json.loads(_native.take_string(_lib.cs_scenario_to_json(self._handle())))

    def validate(self):
        """Checks everything a run would check without simulating. Raises
        InputError listing the problems; returns self when it is valid."""
        err = _native.error_slot()
        with self._lock:
            if not _lib.cs_scenario_validate(self._handle(), ctypes.byref(err)):
                _raise_with_policy_exception(err)
        return self

    # ---- running --------------------------------------------------------------------

    def run(self, seed=None, requests=False, timeseries=False, max_requests=None,
            progress=None):
        """Simulates the scenario and returns its Results.

        seed: replaces the scenario's seed (the CLI's --seed); None keeps it
            (or, for Experiment.scenario(run), uses the run's seed).
        requests: keep every request (Results.requests(), to_pandas("requests")).
        timeseries: keep the time series (to_pandas("gpu_timeseries") ...).
        max_requests: the most requests the run may send (None: the library's
            default, 10^8; a negative number: no limit).
        progress: a callable(fraction, sim_time_s) called now and then; it
            may return False to stop the run (CancelledError).

        The GIL is released while the simulation runs. Raises InputError for
        an invalid scenario, PolicyError when a policy fails."""
        opt = _native.RunOptions()
        _lib.cs_run_options_init(ctypes.byref(opt))
        if seed is None:
            seed = self.default_seed
        if seed is not None:
            if not isinstance(seed, int) or seed < 0:
                raise ValueError(f"clustersim: seed: expected an integer >= 0, got {seed!r}")
            opt.seed_override = seed
        if max_requests is not None:
            opt.max_requests = int(max_requests)
        opt.timeseries = 1 if timeseries else 0
        # The requests stream to a CSV file in a directory the results own
        # (and remove when they are freed): it is read only when asked for.
        tmp = tempfile.mkdtemp(prefix="clustersim-") if requests else None
        if tmp:
            opt.requests_csv = os.path.join(tmp, "requests.csv").encode()
        failure = []
        if progress is not None:
            def on_progress(fraction, sim_ns, _user):
                try:
                    return 0 if progress(fraction, sim_ns * 1e-9) is False else 1
                except BaseException as e:  # raised once the run has returned
                    failure.append(e)
                    return 0
            callback = _native.PROGRESS(on_progress)
            opt.on_progress = ctypes.cast(callback, ctypes.c_void_p)
        err = _native.error_slot()
        try:
            with self._lock:
                h = _lib.cs_run(self._handle(), ctypes.byref(opt), ctypes.byref(err))
        except BaseException:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
            raise
        if not h or failure:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
            if h:
                _lib.cs_results_free(h)
            if failure:
                if err:
                    _native.free_error(err)
                raise failure[0]
            _raise_with_policy_exception(err)
        return Results(h, self.name, requests_dir=tmp, timeseries=bool(timeseries))

    def __repr__(self):
        return f"<clustersim.Scenario {self.name!r}>"


def _raise_with_policy_exception(err):
    """Raises the library's error, or, when a Python policy's exception
    caused it, that exception with the library's error as its cause."""
    from .policies import take_pending_exception
    pending = take_pending_exception()
    if pending is None:
        _native.raise_error(err)
    try:
        _native.raise_error(err)
    except Exception as library_error:
        raise pending from library_error
