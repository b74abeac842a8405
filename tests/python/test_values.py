"""Results as Python values and tables: rows, percentiles, warnings,
provenance, DataFrames with pandas and lists without, the GIL released."""
import ctypes
import json
import os
import sys
import threading

import pytest

import clustersim as cs
from conftest import path


@pytest.fixture(scope="module")
def res():
    with cs.load(path("examples", "quickstart.json")) as sc:
        yield sc.run(seed=2, timeseries=True)


def test_rows(res):
    s = res.summary
    assert res["resnet50"] is res.models[0]
    assert res["resnet50"].goodput_rps == s["models"][0]["goodput_rps"]
    assert res.latency("alexnet") == s["models"][1]["latency_ms"]
    assert res.latency().p99 == s["total"]["latency_ms"]["p99"]
    with pytest.raises(KeyError, match="no model 'vgg'"):
        res["vgg"]
    with pytest.raises(AttributeError):
        res.total.no_such_figure


def test_warnings_and_provenance(res):
    assert [(w.code, w.model) for w in res.warnings] == \
        [(w["code"], w["model"]) for w in res.summary["warnings"]]
    assert all(isinstance(w.gpu, int) for w in res.warnings)
    p = res.provenance
    assert p.clustersim_version == cs.__version__
    assert p.seed == 2
    assert p.setup.profiles[0]["sha256"]
    assert p.effective_scenario["seed"] == 2


def test_to_pandas(res):
    pd = pytest.importorskip("pandas")
    models = res.to_pandas()
    assert isinstance(models, pd.DataFrame)
    assert list(models["model"]) == ["resnet50", "alexnet", "bert", "total"]
    assert list(models["latency_ms.p99"])[:3] == [m.latency_ms.p99 for m in res.models]
    assert list(res.to_pandas("gpus")["busy_fraction"]) == [g.busy_fraction for g in res.summary.gpus]
    ts = res.to_pandas("gpu_timeseries")
    assert len(ts) > 0
    assert len(res.to_pandas("models_over_time")) > 0
    with pytest.raises(ValueError, match="expected one of 'models'"):
        res.to_pandas("everything")


def test_lists_without_pandas(res, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    rows = res.to_pandas()
    assert isinstance(rows, list)
    assert [r["model"] for r in rows] == ["resnet50", "alexnet", "bert", "total"]
    assert rows[0]["latency_ms.p99"] == res.models[0].latency_ms.p99
    ts = res.to_pandas("gpu_timeseries")
    assert isinstance(ts, list) and ts and isinstance(next(iter(ts[0].values())), (int, float))


def test_time_series_need_asking():
    with cs.load(path("examples", "quickstart.json")) as sc:
        r = sc.run()
    with pytest.raises(ValueError, match="timeseries=True"):
        r.to_pandas("gpu_timeseries")
    with pytest.raises(ValueError, match="requests=True"):
        r.requests()


def test_runs_release_the_gil():
    # ctypes releases the GIL around every call of a CDLL's functions and
    # holds it for a PyDLL's (the ctypes documentation): the library must be
    # loaded the first way, and each function the package calls must come
    # from it. (How much faster threads make a sweep is a benchmark's
    # question: bench/python_threads.py.)
    lib = cs._native.lib
    assert type(lib) is ctypes.CDLL
    assert not lib._func_flags_ & ctypes._FUNCFLAG_PYTHONAPI
    for name in cs._native._PROTOTYPES:
        assert not getattr(lib, name)._flags_ & ctypes._FUNCFLAG_PYTHONAPI, name


def test_threads_give_the_same_results_as_one_after_another():
    q = path("examples", "quickstart.json")
    scenarios = [cs.load(q) for _ in range(4)]
    serial = [sc.run(seed=i).to_json() for i, sc in enumerate(scenarios)]
    parallel = [None] * 4

    def go(i):
        parallel[i] = scenarios[i].run(seed=i).to_json()
    threads = [threading.Thread(target=go, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for sc in scenarios:
        sc.close()
    assert parallel == serial


def test_help_answers():
    assert "Scenario.load" in cs.__doc__
    assert "GIL" in cs.Scenario.run.__doc__
    assert "summary.json" in cs.Results.__doc__
