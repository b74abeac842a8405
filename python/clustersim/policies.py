"""Policies written in Python, registered through the library's registry
(clustersim/registry.h) beside the built-in ones: a placement policy is a
callable, problem in, replicas out.

    def round_robin(problem):
        return [(m.name, m.index % len(problem.gpus), 8) for m in problem.models]

    reg = clustersim.Registry()
    reg.add_placement("round-robin", round_robin, "each model on the next GPU, batch 8")
    sc.use(reg).set("placement", {"policy": "round-robin"})

The framework treats it as any policy: its parameters are refused when it
does not ask for them, its placement checked (GPUs that exist, batch sizes,
memory), its expected goodput capped. It runs once, when the scenario is
compiled (and again at each re-placement by a controller), never per event.
"""
import ctypes
import math
import os
import threading
import traceback

from . import _native
from .errors import ClusterSimError, InputError, INVALID, POLICY
from .results import Row

_lib = _native.lib
_glib = _native._glib

# ---- the structs and functions of placement.h, params.h, profiles.h ----------------------


class _PlacementModel(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("rate_rps", ctypes.c_double),
                ("slo_ms", ctypes.c_double)]


class _PlacementGpu(ctypes.Structure):
    _fields_ = [("gpu_type", ctypes.c_char_p), ("node", ctypes.c_int)]


class _PlacementGpuModel(ctypes.Structure):
    _fields_ = [("mps", ctypes.c_int), ("mps_gamma", ctypes.c_double),
                ("interference", ctypes.c_void_p), ("interference_name", ctypes.c_char_p),
                ("mps_share_power", ctypes.c_int)]


class _PlacementProblem(ctypes.Structure):
    # The leading fields of CsPlacementProblem; the package reads only these.
    _fields_ = [("models", ctypes.POINTER(_PlacementModel)), ("n_models", ctypes.c_int),
                ("gpus", ctypes.POINTER(_PlacementGpu)), ("n_gpus", ctypes.c_int),
                ("profiles", ctypes.c_void_p),
                ("gpu_model", ctypes.POINTER(_PlacementGpuModel))]


_PLACE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(_PlacementProblem), ctypes.c_void_p,
                          ctypes.c_void_p, _native._PERR)


class _PlacementPolicy(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("description", ctypes.c_char_p),
                ("place", _PLACE)]


class _BatchPoint(ctypes.Structure):
    _fields_ = [("batch", ctypes.c_int), ("latency_ns", ctypes.c_int64),
                ("mreq_pct", ctypes.c_double), ("creq_pct", ctypes.c_double * 3),
                ("throughput_rps", ctypes.c_double), ("note", ctypes.c_char_p)]


_P = ctypes.c_void_p
_PERR = _native._PERR
for name, restype, argtypes in [
        ("cs_registry_new", _P, []),
        ("cs_registry_unref", None, [_P]),
        ("cs_registry_add_placement", ctypes.c_int, [_P, ctypes.POINTER(_PlacementPolicy), _P,
                                                     _PERR]),
        ("cs_scenario_set_registry", None, [_P, _P]),
        ("cs_registry_load_plugin", ctypes.c_int, [_P, ctypes.c_char_p, _PERR]),
        ("cs_scenario_load_plugins", ctypes.c_int, [_P, _PERR]),
        ("cs_experiment_use_registry", ctypes.c_int, [_P, _P, _PERR]),
        ("cs_error_quark", ctypes.c_uint32, []),
        ("cs_error_list_new", _P, []),
        ("cs_error_list_slot", _PERR, [_P]),
        ("cs_error_list_finish", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_char_p, _PERR]),
        ("cs_error_list_free", None, [_P]),
        ("cs_placement_new", _P, [ctypes.c_int]),
        ("cs_placement_free", None, [_P]),
        ("cs_placement_add", None, [_P, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_double]),
        ("cs_placement_set_expected_goodput", None, [_P, ctypes.c_int, ctypes.c_double]),
        ("cs_placement_log", None, [_P, ctypes.c_char_p, ctypes.c_char_p]),
        ("cs_params_file", ctypes.c_char_p, [_P]),
        ("cs_params_path", ctypes.c_char_p, [_P]),
        ("cs_params_has", ctypes.c_int, [_P, ctypes.c_char_p]),
        ("cs_params_describing", ctypes.c_int, [_P]),
        ("cs_params_double", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_int, ctypes.c_double,
                                            ctypes.c_double, ctypes.POINTER(ctypes.c_double), _PERR]),
        ("cs_params_int", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                         ctypes.c_int, ctypes.POINTER(ctypes.c_int), _PERR]),
        ("cs_params_bool", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_int,
                                          ctypes.POINTER(ctypes.c_int), _PERR]),
        ("cs_params_string", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_int,
                                            ctypes.POINTER(ctypes.c_char_p), _PERR]),
        ("cs_params_choice", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_int,
                                            ctypes.POINTER(ctypes.c_char_p),
                                            ctypes.POINTER(ctypes.c_int), _PERR]),
        ("cs_params_to_json", _P, [_P]),
        ("cs_params_fail", ctypes.c_int, [_P, _PERR, ctypes.c_char_p, ctypes.c_char_p]),
        ("cs_params_doc", None, [_P, ctypes.c_char_p, ctypes.c_char_p]),
        ("cs_profile_set_lookup", _P, [_P, ctypes.c_char_p, ctypes.c_char_p]),
        ("cs_model_profile_n_points", ctypes.c_int, [_P]),
        ("cs_model_profile_point_at", ctypes.POINTER(_BatchPoint), [_P, ctypes.c_int]),
        ("cs_model_profile_latency_ns", ctypes.c_int64, [_P, ctypes.c_int]),
        ("cs_model_profile_throughput_rps", ctypes.c_double, [_P, ctypes.c_int]),
        ("cs_model_profile_mreq_pct", ctypes.c_double, [_P, ctypes.c_int]),
        ("cs_model_profile_slo_ms", ctypes.c_double, [_P])]:
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = argtypes
_glib.g_set_error_literal.argtypes = [_PERR, ctypes.c_uint32, ctypes.c_int, ctypes.c_char_p]
_glib.g_set_error_literal.restype = None

CS_ERROR = _lib.cs_error_quark()

# An exception a policy raised, kept for the thread that called the library
# (Scenario.run raises it, chained, instead of the library's message alone).
_pending = threading.local()


def take_pending_exception():
    from . import dispatch
    e = getattr(_pending, "exception", None)
    _pending.exception = None
    d = dispatch.take_pending_exception()
    return e if e is not None else d


# ---- what a policy sees ----------------------------------------------------------------------


class Params:
    """A policy's parameters: a view of the scenario's "placement" (or
    "dispatch") object, valid during the call. Each reader returns the
    field's value, or default when it is absent. A value of the wrong type or
    out of range is a problem the reader files and answers with default: once
    the policy's function returns, the framework reports every problem filed
    as one error (InputError naming each field), as the built-in policies do.
    A field the policy never reads is refused by the framework, so a
    misspelt setting is never ignored; doc(key, text) describes one for
    `clustersim policies`."""

    def __init__(self, ptr):
        self._p = ptr
        self.file = _lib.cs_params_file(ptr).decode()
        self.path = _lib.cs_params_path(ptr).decode()
        #: TRUE when the catalogue describes the policy: read every parameter, return nothing.
        self.describing = bool(_lib.cs_params_describing(ptr))
        self._problems = _lib.cs_error_list_new()

    def _read(self, call, *args):
        if not call(self._p, *args, _lib.cs_error_list_slot(self._problems)):
            return False
        return True

    def _finish(self, error):
        """Reports the problems filed into error; TRUE when there were none."""
        problems, self._problems = self._problems, None
        return bool(_lib.cs_error_list_finish(problems, self.file.encode(), self.path.encode(),
                                              error))

    def __del__(self):
        if getattr(self, "_problems", None):
            _lib.cs_error_list_free(self._problems)
            self._problems = None

    def has(self, key):
        return bool(_lib.cs_params_has(self._p, key.encode()))

    def double(self, key, default=None, min=-math.inf, max=math.inf, required=False):
        out = ctypes.c_double(math.nan if default is None else default)
        if not self._read(_lib.cs_params_double, key.encode(), required, min, max,
                          ctypes.byref(out)):
            return default
        return None if default is None and not self.has(key) and not required else out.value

    def int(self, key, default=None, min=-2**31, max=2**31 - 1, required=False):
        out = ctypes.c_int(0 if default is None else default)
        if not self._read(_lib.cs_params_int, key.encode(), required, min, max, ctypes.byref(out)):
            return default
        return None if default is None and not self.has(key) and not required else out.value

    def bool(self, key, default=None, required=False):
        out = ctypes.c_int(1 if default else 0)
        if not self._read(_lib.cs_params_bool, key.encode(), required, ctypes.byref(out)):
            return default
        return None if default is None and not self.has(key) and not required else bool(out.value)

    def string(self, key, default=None, required=False):
        keep = None if default is None else default.encode()
        out = ctypes.c_char_p(keep)
        if not self._read(_lib.cs_params_string, key.encode(), required, ctypes.byref(out)):
            return default
        return None if out.value is None else out.value.decode()

    def choice(self, key, choices, default=None, required=False):
        arr = (ctypes.c_char_p * (len(choices) + 1))(*[c.encode() for c in choices], None)
        out = ctypes.c_int(choices.index(default) if default is not None else 0)
        if not self._read(_lib.cs_params_choice, key.encode(), required, arr, ctypes.byref(out)):
            return default
        return None if default is None and not self.has(key) and not required \
            else choices[out.value]

    def json(self):
        """The whole object as a Python value (counts as reading every field)."""
        import json
        return json.loads(_native.take_string(_lib.cs_params_to_json(self._p)))

    def doc(self, key, text):
        _lib.cs_params_doc(self._p, key.encode(), text.encode())

    def fail(self, message):
        """Raises InputError "FILE: PATH: message" for the policy's own checks."""
        err = _native.error_slot()
        _lib.cs_params_fail(self._p, ctypes.byref(err), b"%s", message.encode())
        _native.raise_error(err)


class Profile:
    """A model's profile on a GPU type (clustersim/profiles.h)."""

    def __init__(self, ptr, model, gpu_type):
        self._p = ptr
        self.model = model
        self.gpu_type = gpu_type

    @property
    def batches(self):
        """The profiled batch sizes, increasing."""
        return [_lib.cs_model_profile_point_at(self._p, i).contents.batch
                for i in range(_lib.cs_model_profile_n_points(self._p))]

    def latency_ms(self, batch):
        """Isolated latency of a batch of this size, ms (profiled, else the linear model)."""
        return _lib.cs_model_profile_latency_ns(self._p, int(batch)) * 1e-6

    def throughput_rps(self, batch):
        return _lib.cs_model_profile_throughput_rps(self._p, int(batch))

    def mreq_pct(self, batch):
        """Memory requirement of a replica at this batch size, % of the GPU."""
        return _lib.cs_model_profile_mreq_pct(self._p, int(batch))

    def creq_pct(self, batch, metric="ao"):
        """Compute requirement at a profiled batch size, % (metric ao, wao or wsm); None if unknown."""
        k = ("ao", "wao", "wsm").index(metric)
        for i in range(_lib.cs_model_profile_n_points(self._p)):
            pt = _lib.cs_model_profile_point_at(self._p, i).contents
            if pt.batch == batch:
                v = pt.creq_pct[k]
                return None if math.isnan(v) else v
        return None


class PlacementProblem:
    """What a placement policy plans for: models (Row: index, name, rate_rps,
    slo_ms), gpus (Row: index, gpu_type, node), mps (co-located replicas share
    SMs), params (Params), and profile(model, gpu_type) for the latencies,
    memory and compute requirements."""

    def __init__(self, pb, params):
        p = pb.contents
        self.models = [Row(index=i, name=p.models[i].name.decode(), rate_rps=p.models[i].rate_rps,
                           slo_ms=p.models[i].slo_ms) for i in range(p.n_models)]
        self.gpus = [Row(index=g, gpu_type=p.gpus[g].gpu_type.decode(), node=p.gpus[g].node)
                     for g in range(p.n_gpus)]
        gm = p.gpu_model
        self.mps = bool(gm.contents.mps) if gm else False
        self._profiles = p.profiles
        self.params = params

    def model(self, name):
        for m in self.models:
            if m.name == name:
                return m
        raise KeyError(f"clustersim: the problem has no model {name!r}")

    def profile(self, model, gpu_type):
        """The profile of model (a name or an index) on gpu_type, or None."""
        name = self.models[model].name if isinstance(model, int) else model
        ptr = _lib.cs_profile_set_lookup(self._profiles, gpu_type.encode(), name.encode())
        return Profile(ptr, name, gpu_type) if ptr else None


class Placement:
    """What a placement policy may return instead of a plain list of
    replicas: replicas [(model, gpu, batch) or (model, gpu, batch,
    mps_share)], model a name or an index; expected_goodput {model: req/s}
    (absent models: what their replicas serve alone, min(rate, sum of batch
    / latency), as the "manual" placement predicts); log, text for the
    placement log."""

    def __init__(self, replicas, expected_goodput=None, log=""):
        self.replicas = list(replicas)
        self.expected_goodput = dict(expected_goodput or {})
        self.log = log


class _Misuse(Exception):
    """A Python policy's result the package cannot turn into a placement."""


def _build(problem, result):
    if isinstance(result, Placement):
        placement = result
    else:
        placement = Placement(result)
    c = _lib.cs_placement_new(len(problem.models))
    try:
        capacity = [0.0] * len(problem.models)
        names = {m.name: m.index for m in problem.models}
        for i, rep in enumerate(placement.replicas):
            if not isinstance(rep, (tuple, list)) or len(rep) not in (3, 4):
                raise _Misuse(f"replica {i} is {rep!r}: expected (model, gpu, batch) or "
                              f"(model, gpu, batch, mps_share)")
            model, gpu, batch = rep[0], rep[1], rep[2]
            share = rep[3] if len(rep) == 4 else 0.0
            m = names.get(model) if isinstance(model, str) else model
            if type(m) is not int or not 0 <= m < len(problem.models):
                raise _Misuse(f"replica {i} {tuple(rep)!r}: model {model!r} is not one of the "
                              f"problem's ({', '.join(names)}, or their indices)")
            if type(gpu) is not int or type(batch) is not int or \
                    not isinstance(share, (int, float)):
                raise _Misuse(f"replica {i} {tuple(rep)!r}: gpu and batch must be integers, "
                              f"mps_share a number")
            _lib.cs_placement_add(c, m, gpu, batch, float(share))
            if 0 <= gpu < len(problem.gpus) and batch >= 1:
                prof = problem.profile(m, problem.gpus[gpu].gpu_type)
                if prof:
                    capacity[m] += batch / (prof.latency_ms(batch) * 1e-3)
        for m in problem.models:
            e = placement.expected_goodput.get(m.name, placement.expected_goodput.get(m.index))
            _lib.cs_placement_set_expected_goodput(
                c, m.index, min(m.rate_rps, capacity[m.index]) if e is None else float(e))
        if placement.log:
            _lib.cs_placement_log(c, b"%s", placement.log.encode())
        return c
    except BaseException:
        _lib.cs_placement_free(c)
        raise


def _set_error(error, code, message):
    _glib.g_set_error_literal(error, CS_ERROR, code, message.encode())


class Registry:
    """The library's registry of policies (every built-in one, plus those
    added here). Give it to a scenario with Scenario.use(registry), or to an
    experiment with Experiment.use(registry)."""

    def __init__(self):
        self._h = _lib.cs_registry_new()
        self._keep = []  # the structs and callbacks the library points at
        self.placement_policies = []
        self.dispatch_policies = []

    def add_placement(self, name, place, description=""):
        """Adds a placement policy: place(problem) returns a list of replicas
        or a Placement. Raise InputError (problem.params.fail) for a bad
        parameter; any other exception stops the run and is raised, chained,
        by Scenario.run. Returns self."""
        if not callable(place):
            raise TypeError(f"clustersim: add_placement: place must be callable, got {place!r}")
        policy_name = name

        def trampoline(pb, params, _user, error):
            try:
                prm = Params(params)
                problem = PlacementProblem(pb, prm)
                result = place(problem)
                if not prm._finish(error):
                    return None
                if prm.describing:
                    return None
                if result is None:
                    raise _Misuse("returned None (expected a list of replicas or a Placement)")
                return _build(problem, result)
            except _Misuse as e:
                _set_error(error, POLICY, f"placement policy \"{policy_name}\" (Python): {e}")
            except ClusterSimError as e:
                _set_error(error, e.code, e.message)
            except BaseException as e:
                _pending.exception = e
                where = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
                at = f" (at {where.filename}:{where.lineno})" if where else ""
                _set_error(error, POLICY, f"placement policy \"{policy_name}\" (Python) raised "
                                          f"{type(e).__name__}: {e}{at}")
            return None

        cb = _PLACE(trampoline)
        policy = _PlacementPolicy(name.encode(), description.encode(), cb)
        self._keep += [cb, policy]
        err = _native.error_slot()
        if not _lib.cs_registry_add_placement(self._h, ctypes.byref(policy), None,
                                              ctypes.byref(err)):
            self._keep = self._keep[:-2]
            _native.raise_error(err)
        self.placement_policies.append(name)
        return self

    def add_dispatch(self, cls):
        """Adds a dispatch policy: a subclass of DispatchPolicy (its name,
        description, uses_placement, parse and callbacks). Returns self."""
        from . import dispatch
        dispatch.register(self, cls)
        self.dispatch_policies.append(cls.name)
        return self

    def load_plugin(self, path):
        """Loads a plug-in (a shared object, docs/extending.md "Plug-ins") into
        the registry, as clustersim --plugin does. Returns self."""
        err = _native.error_slot()
        if not _lib.cs_registry_load_plugin(self._h, _native.c_str(os.fspath(path)),
                                            ctypes.byref(err)):
            _native.raise_error(err)
        return self

    def _handle(self):
        return self._h

    def __del__(self):
        if getattr(self, "_h", None):
            _lib.cs_registry_unref(self._h)
            self._h = None
