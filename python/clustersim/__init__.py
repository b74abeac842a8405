"""clustersim: the deterministic GPU-cluster inference-serving simulator,
from Python.

    import clustersim
    with clustersim.Scenario.load("examples/quickstart.json") as sc:
        sc.set("clients[0].rate", 400)
        res = sc.run(seed=2)
    print(res.table())
    res["resnet50"].goodput_rps, res.latency("resnet50").p99
    res.to_pandas()          # per-model DataFrame (pandas), else a list of dicts

The simulation is the C library's (libclustersim) through ctypes; every run
releases the GIL, so Python threads simulate in parallel. Errors raise
InputError / PolicyError / CancelledError (all ClusterSimError), carrying the
CLI's message, the file and the JSON path. docs/python.md has the rest.
"""
from . import _native
from .errors import CancelledError, ClusterSimError, InputError, PolicyError
from .results import Results, Row, Warning
from .scenario import Scenario
from .sweep import Experiment, SweepResults, sweep
from .policies import Placement, PlacementProblem, Registry
from .dispatch import Batch, DispatchPolicy, Engine, Request

__version__ = _native.version
#: The libclustersim this package runs on.
library_path = _native.library_path


def load(path):
    """Scenario.load(path): a scenario file."""
    return Scenario.load(path)


def run(scenario, seed=None, **kwargs):
    """Runs a scenario (a Scenario, a file path or a dict) and returns its
    Results; keyword arguments as Scenario.run."""
    if isinstance(scenario, Scenario):
        return scenario.run(seed=seed, **kwargs)
    sc = Scenario.from_dict(scenario) if isinstance(scenario, dict) else Scenario.load(scenario)
    with sc:
        return sc.run(seed=seed, **kwargs)


__all__ = ["Scenario", "Results", "Experiment", "SweepResults", "sweep", "Registry",
           "Placement", "PlacementProblem", "DispatchPolicy", "Engine", "Batch", "Request", "Row", "Warning",
           "ClusterSimError", "InputError",
           "PolicyError", "CancelledError", "load", "run", "library_path"]
