"""Dispatch policies written in Python: join-the-shortest-queue in Python
(examples/python/jsq.py) gives the results of the same algorithm in C
(examples/extending/jsq.c, built as a plug-in) to the last digit; the
engine's checks apply; exceptions stop the run and come out as themselves."""
import importlib.util
import os

import pytest

import clustersim as cs
from conftest import path

Q = path("examples", "quickstart.json")
JSQ_SO = os.environ.get("CLUSTERSIM_JSQ_PLUGIN")


def load_example():
    spec = importlib.util.spec_from_file_location("jsq_example", path("examples", "python", "jsq.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


jsq = load_example()


def run(policy, reg, seed=4, **params):
    with cs.load(Q) as sc:
        sc.use(reg).unset("placement").set("dispatch", dict({"policy": policy}, **params))
        sc.set("clients[0].rate", 900)
        return sc.run(seed=seed)


def test_equals_the_same_algorithm_in_c():
    if not JSQ_SO:
        pytest.fail("CLUSTERSIM_JSQ_PLUGIN is not set (run through meson test)")
    reg = jsq.registry().load_plugin(JSQ_SO)
    for params in ({}, {"max_batch": 16, "max_wait_ms": 2.5}):
        py = run("py-jsq", reg, **params).summary
        c = run("jsq", reg, **params).summary
        assert py["models"] == c["models"]
        assert py["total"] == c["total"]
        assert py["gpus"] == c["gpus"]


def test_parameters_through_the_framework():
    reg = jsq.registry()
    with pytest.raises(cs.InputError) as e:
        run("py-jsq", reg, max_bach=3)
    assert e.value.message.endswith('dispatch: unknown field "max_bach" (did you mean "max_batch"?)')
    with pytest.raises(cs.InputError) as e:
        run("py-jsq", reg, max_batch=0, max_wait_ms=-1)
    assert [p for p, _ in e.value.problems] == ["dispatch.max_batch", "dispatch.max_wait_ms"]


class Forger(cs.DispatchPolicy):
    name = "forger"

    def on_request(self, model, request):
        request._c.send_ns -= 1000  # a changed copy: the engine's ledger refuses it
        self.engine.drop(model, request)


class Twice(cs.DispatchPolicy):
    name = "twice"

    def on_request(self, model, request):
        b = self.engine.batch(model, 1)
        b.add(request)
        self.engine.send_gpu(b, 0)
        self.engine.send_gpu(b, 0)


class NoSuchGpu(cs.DispatchPolicy):
    name = "gpu99"

    def on_request(self, model, request):
        b = self.engine.batch(model, 1)
        b.add(request)
        self.engine.send_gpu(b, 99)


class Raises(cs.DispatchPolicy):
    name = "raises"

    def on_request(self, model, request):
        if request.id == 5:
            raise KeyError("no queue for it")
        self.engine.drop(model, request)


def test_the_engines_checks_apply():
    reg = cs.Registry()
    for cls in (Forger, Twice, NoSuchGpu):
        reg.add_dispatch(cls)
    want = {"forger": "cs_engine_drop: request 0 was changed",
            "twice": "cs_engine_send_gpu: the batch is not one the policy holds",
            "gpu99": "cs_engine_send_gpu"}
    for name, text in want.items():
        with pytest.raises(cs.PolicyError) as e:
            run(name, reg)
        assert f'dispatch policy "{name}": ' in e.value.message and text in e.value.message, name


def test_an_exception_stops_the_run_and_comes_out_as_itself():
    reg = cs.Registry().add_dispatch(Raises)
    with pytest.raises(KeyError) as e:
        run("raises", reg)
    cause = str(e.value.__cause__)
    assert 'dispatch policy "raises": (Python) raised KeyError' in cause
    assert "simulated)" in cause


def test_a_policy_class_is_checked():
    reg = cs.Registry()
    with pytest.raises(TypeError):
        reg.add_dispatch(object)

    class Nameless(cs.DispatchPolicy):
        pass
    with pytest.raises(ValueError, match="name"):
        reg.add_dispatch(Nameless)

    class Router(cs.DispatchPolicy):
        name = "router"
    with pytest.raises(cs.InputError, match="already has a policy"):
        reg.add_dispatch(Router)


def test_random_stream_is_deterministic():
    class Coin(cs.DispatchPolicy):
        name = "coin"

        def on_request(self, model, request):
            b = self.engine.batch(model, 1)
            b.add(request)
            self.engine.send_gpu(b, 0 if self.engine.uniform() < 0.5 else 1)
    reg = cs.Registry().add_dispatch(Coin)
    a = run("coin", reg, seed=9).to_json()
    assert a == run("coin", reg, seed=9).to_json()
    assert a != run("coin", reg, seed=10).to_json()
