"""Placement policies written in Python: through the registry, equal to the
same replicas written as a "manual" placement, parameters checked by the
framework, misuse refused, exceptions raised as themselves, in sweeps."""
import json

import pytest

import clustersim as cs
from conftest import path

Q = path("examples", "quickstart.json")


def round_robin(problem):
    batch = problem.params.int("batch", default=8, min=1, max=1024)
    problem.params.doc("batch", "every replica's batch size")
    return [(m.name, m.index % len(problem.gpus), batch) for m in problem.models]


@pytest.fixture
def reg():
    return cs.Registry().add_placement("round-robin", round_robin, "each model on the next GPU")


def summary_with(sc_edit, reg=None):
    with cs.load(Q) as sc:
        if reg:
            sc.use(reg)
        sc_edit(sc)
        return sc.run(seed=3).summary


def test_equals_the_same_manual_placement(reg):
    py = summary_with(lambda sc: sc.set("placement", {"policy": "round-robin", "batch": 16}), reg)
    manual = summary_with(lambda sc: sc.set("placement", {"policy": "manual", "replicas": [
        {"model": "resnet50", "gpu": 0, "batch": 16}, {"model": "alexnet", "gpu": 1, "batch": 16},
        {"model": "bert", "gpu": 2, "batch": 16}]}))
    # Same replicas, same expected goodput (the manual placement's estimate),
    # so every figure of every model is the same.
    assert py["models"] == manual["models"]
    assert py["total"] == manual["total"]
    assert py["placement"]["policy"] == "round-robin"


def test_parameters_through_the_framework(reg):
    # The default batch (8) is the one every replica gets.
    default = summary_with(lambda sc: sc.set("placement", {"policy": "round-robin"}), reg)
    assert [r["batch"] for m in default["models"] for r in m["replicas"]] == [8, 8, 8]
    with cs.load(Q) as sc:
        sc.use(reg)
        sc.set("placement", {"policy": "round-robin", "batc": 16})
        with pytest.raises(cs.InputError) as e:
            sc.run()
        assert e.value.message.endswith('placement: unknown field "batc" (did you mean "batch"?)')
        sc.set("placement", {"policy": "round-robin", "batch": 0})
        with pytest.raises(cs.InputError) as e:
            sc.run()
        assert e.value.path == "placement.batch"
        assert e.value.message.endswith("expected an integer in [1, 1024], got 0")


def test_the_frameworks_checks_apply():
    reg = cs.Registry()
    reg.add_placement("gpu99", lambda pb: [("resnet50", 99, 8)])
    reg.add_placement("batch0", lambda pb: [(0, 0, 0)])
    reg.add_placement("nomodel", lambda pb: [("nope", 0, 1)])
    reg.add_placement("none", lambda pb: None)
    reg.add_placement("memory", lambda pb: [("bert", 0, 128)] * 8)
    want = {"gpu99": "its GPU index is out of range", "batch0": "its batch size is below 1",
            "nomodel": "model 'nope' is not one of the problem's",
            "none": "returned None", "memory": "cannot hold its replicas"}
    for name, text in want.items():
        with cs.load(Q) as sc:
            sc.use(reg).set("placement", {"policy": name})
            with pytest.raises(cs.ClusterSimError) as e:
                sc.run()
            assert text in e.value.message, name


def test_an_exception_comes_out_as_itself():
    def broken(problem):
        return [("resnet50", 0, 1 // 0)]
    reg = cs.Registry().add_placement("broken", broken)
    with cs.load(Q) as sc:
        sc.use(reg).set("placement", {"policy": "broken"})
        with pytest.raises(ZeroDivisionError) as e:
            sc.run()
    assert 'placement policy "broken" (Python) raised ZeroDivisionError' in str(e.value.__cause__)


def test_a_name_of_a_built_in_is_refused():
    with pytest.raises(cs.InputError, match='"usher": the registry already has a policy'):
        cs.Registry().add_placement("usher", round_robin)


def test_the_problem():
    seen = {}

    def look(problem):
        seen["models"] = [(m.index, m.name, m.rate_rps, m.slo_ms) for m in problem.models]
        seen["gpus"] = [(g.index, g.gpu_type, g.node) for g in problem.gpus]
        p = problem.profile("resnet50", "v100")
        seen["latency"] = p.latency_ms(8)
        seen["batches"] = p.batches
        seen["mreq"] = p.mreq_pct(8)
        seen["missing"] = problem.profile("resnet50", "a100")
        return [(0, 0, 8)]
    reg = cs.Registry().add_placement("look", look)
    with cs.load(Q) as sc:
        sc.use(reg).set("placement", {"policy": "look"}).run()
    assert seen["models"] == [(0, "resnet50", 300, 200), (1, "alexnet", 800, 100),
                              (2, "bert", 100, 300)]
    assert seen["gpus"] == [(g, "v100", 0) for g in range(4)]
    # data/profiles/v100_thesis.json: resnet50 at batch 8 (the thesis' Table A.1)
    with open(path("data", "profiles", "v100_thesis.json")) as f:
        prof = json.load(f)
    row = [m for m in prof["models"] if m["model"] == "resnet50" and m["gpu"] == "v100"][0]
    point = [b for b in row["batches"] if b["batch"] == 8][0]
    assert seen["latency"] == pytest.approx(point["latency_ms"], rel=1e-9)
    assert seen["batches"] == [b["batch"] for b in row["batches"]]
    assert seen["missing"] is None


def test_in_a_sweep(reg, tmp_path):
    exp = {"base": Q, "set": {"clients[*].duration_s": 10},
           "variants": [{"name": "py", "set": {"placement": {"policy": "round-robin", "batch": 16}}},
                        {"name": "manual", "set": {"placement": {"policy": "manual", "replicas": [
                            {"model": "resnet50", "gpu": 0, "batch": 16},
                            {"model": "alexnet", "gpu": 1, "batch": 16},
                            {"model": "bert", "gpu": 2, "batch": 16}]}}}],
           "seeds": [1, 2]}
    with cs.Experiment.from_dict(exp) as e:
        res = e.use(reg).sweep(threads=2)
    rows = {(r["variant"], r["seed"], r["model"]): r for r in res.runs}
    assert res.n_invalid == 0
    for seed in (1, 2):
        for model in ("resnet50", "alexnet", "bert", "total"):
            a, b = rows[("py", seed, model)], rows[("manual", seed, model)]
            # repr: the total row's slo_ms is nan, which equals nothing
            assert {k: repr(v) for k, v in a.items() if k not in ("run_id", "variant")} == \
                   {k: repr(v) for k, v in b.items() if k not in ("run_id", "variant")}
    # Without the registry the Python policy is unknown: invalid rows.
    with cs.Experiment.from_dict(exp) as e:
        assert e.sweep(threads=1).n_invalid > 0
