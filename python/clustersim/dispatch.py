"""Dispatch policies written in Python: a class with the callbacks of
clustersim/dispatch.h, driving the engine through its services.

    class JoinShortestQueue(clustersim.DispatchPolicy):
        name = "py-jsq"
        description = "each request alone to the GPU with the fewest batches"

        def on_request(self, model, request):
            e = self.engine
            gpu = min(range(e.n_gpus), key=lambda g: e.gpu_load(g))
            batch = e.batch(model, 1)
            batch.add(request)
            e.send_gpu(batch, gpu)

    reg.add_dispatch(JoinShortestQueue)

Every service checks its use as for a policy in C (the engine's ledger: a
request sent twice, a forged one, a GPU out of range stop the run with
PolicyError). An exception a callback raises stops the run too, and
Scenario.run raises it as itself. Each callback is a call from C into Python:
its cost per event is measured in bench/python_dispatch.py (docs/python.md).
"""
import ctypes
import itertools
import threading
import traceback

from . import _native
from .results import Row

_lib = _native.lib
_P = ctypes.c_void_p
_PERR = _native._PERR


class _Request(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64), ("send_ns", ctypes.c_int64), ("measured", ctypes.c_int)]


class _BatchEvent(ctypes.Structure):
    _fields_ = [("model", ctypes.c_int), ("gpu", ctypes.c_int), ("replica", ctypes.c_int),
                ("size", ctypes.c_int), ("dispatch_ns", ctypes.c_int64),
                ("node_ns", ctypes.c_int64), ("start_ns", ctypes.c_int64),
                ("end_ns", ctypes.c_int64), ("batch_id", ctypes.c_uint64),
                ("worker", ctypes.c_int)]


class _ReplicaQueue(ctypes.Structure):
    _fields_ = [("in_transfer", ctypes.c_int), ("queued", ctypes.c_int),
                ("waiting_requests", ctypes.c_int64), ("busy", ctypes.c_int),
                ("running_requests", ctypes.c_int64), ("fails_memory", ctypes.c_int)]


class _Replica(ctypes.Structure):
    _fields_ = [("model", ctypes.c_int), ("gpu", ctypes.c_int), ("batch", ctypes.c_int),
                ("mps_share", ctypes.c_double)]


_PARSE = ctypes.CFUNCTYPE(_P, _P, _P, _PERR)
_FREE = ctypes.CFUNCTYPE(None, _P)
_CREATE = ctypes.CFUNCTYPE(_P, _P, _P, _P)
_ON_REQUEST = ctypes.CFUNCTYPE(None, _P, ctypes.c_int, ctypes.POINTER(_Request))
_ON_TIMER = ctypes.CFUNCTYPE(None, _P, ctypes.c_uint32)
_ON_BATCH = ctypes.CFUNCTYPE(None, _P, ctypes.POINTER(_BatchEvent))
_ON_STATE = ctypes.CFUNCTYPE(None, _P)


class _DispatchPolicy(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("description", ctypes.c_char_p),
                ("uses_placement", ctypes.c_int),
                ("parse", _PARSE), ("free_params", _FREE), ("check", _P),
                ("create", _CREATE), ("destroy", _FREE),
                ("on_request", _ON_REQUEST), ("on_timer", _ON_TIMER),
                ("on_batch_start", _ON_BATCH), ("on_batch_finish", _ON_BATCH),
                ("describe", _P), ("write_defaults", _P),
                ("on_quiet", _ON_STATE), ("on_cluster_change", _ON_STATE)]


for name, restype, argtypes in [
        ("cs_registry_add_dispatch", ctypes.c_int, [_P, ctypes.POINTER(_DispatchPolicy), _P, _PERR]),
        ("cs_engine_world", _P, [_P]),
        ("cs_engine_now", ctypes.c_int64, [_P]),
        ("cs_engine_timer", ctypes.c_uint64, [_P, ctypes.c_int64, ctypes.c_uint32]),
        ("cs_engine_cancel", ctypes.c_int, [_P, ctypes.c_uint64]),
        ("cs_engine_batch_new", _P, [_P, ctypes.c_int, ctypes.c_int]),
        ("cs_engine_batch_discard", None, [_P, _P]),
        ("cs_batch_add", None, [_P, _P, ctypes.POINTER(_Request)]),
        ("cs_batch_size", ctypes.c_int, [_P]),
        ("cs_batch_model", ctypes.c_int, [_P]),
        ("cs_batch_set_not_before", None, [_P, ctypes.c_int64]),
        ("cs_engine_n_replicas", ctypes.c_int, [_P]),
        ("cs_engine_replica", ctypes.POINTER(_Replica), [_P, ctypes.c_int]),
        ("cs_engine_replica_active", ctypes.c_int, [_P, ctypes.c_int]),
        ("cs_engine_replica_pending", ctypes.c_int, [_P, ctypes.c_int]),
        ("cs_engine_replica_queue", ctypes.c_int, [_P, ctypes.c_int, ctypes.POINTER(_ReplicaQueue)]),
        ("cs_engine_gpu_ready", ctypes.c_int, [_P, ctypes.c_int]),
        ("cs_engine_send_replica", None, [_P, _P, ctypes.c_int]),
        ("cs_engine_send_gpu", None, [_P, _P, ctypes.c_int]),
        ("cs_engine_drop", None, [_P, ctypes.c_int, ctypes.POINTER(_Request)]),
        ("cs_engine_unserved", None, [_P, ctypes.c_int, ctypes.POINTER(_Request)]),
        ("cs_engine_exec_ns", ctypes.c_int64, [_P, ctypes.c_int, ctypes.c_int, ctypes.c_int]),
        ("cs_engine_gpu_in_transfer", ctypes.c_int, [_P, ctypes.c_int]),
        ("cs_engine_gpu_queued", ctypes.c_int, [_P, ctypes.c_int]),
        ("cs_engine_gpu_running", ctypes.c_int, [_P, ctypes.c_int]),
        ("cs_engine_policy_uniform", ctypes.c_double, [_P]),
        ("cs_engine_policy_random", ctypes.c_uint64, [_P]),
        ("cs_engine_abort", None, [_P, ctypes.c_char_p]),
        ("cs_world_n_models", ctypes.c_int, [_P]),
        ("cs_world_model_name", ctypes.c_char_p, [_P, ctypes.c_int]),
        ("cs_world_slo_ns", ctypes.c_int64, [_P, ctypes.c_int]),
        ("cs_world_rate_rps", ctypes.c_double, [_P, ctypes.c_int]),
        ("cs_world_n_gpus", ctypes.c_int, [_P]),
        ("cs_world_gpu_type", ctypes.c_char_p, [_P, ctypes.c_int]),
        ("cs_world_gpu_node", ctypes.c_int, [_P, ctypes.c_int]),
        ("cs_world_network_ns", ctypes.c_int64, [_P, ctypes.c_int64])]:
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = argtypes


class Request:
    """A request the engine gave the policy: id, send_ns, measured. Keep the
    object (not a copy of its fields): the engine checks that what comes
    back is what it gave."""
    __slots__ = ("_c",)

    def __init__(self, c):
        self._c = c

    id = property(lambda self: self._c.id)
    send_ns = property(lambda self: self._c.send_ns)
    measured = property(lambda self: bool(self._c.measured))

    def __repr__(self):
        return f"Request(id={self.id}, send_ns={self.send_ns}, measured={self.measured})"


class Batch:
    """A batch the policy is filling (Engine.batch); add requests, then send
    it with Engine.send_gpu / send_replica, or discard it."""
    __slots__ = ("_e", "_b", "model", "_size")

    def __init__(self, engine, handle, model):
        self._e = engine
        self._b = handle
        self.model = model
        self._size = 0

    def add(self, request):
        _lib.cs_batch_add(self._e._h, self._b, ctypes.byref(request._c))
        self._size += 1

    def __len__(self):
        return self._size

    def set_not_before(self, t_ns):
        _lib.cs_batch_set_not_before(self._b, int(t_ns))


class Engine:
    """The engine's services (clustersim/dispatch.h) for the policy's
    callbacks. Times are simulated ns."""

    def __init__(self, handle):
        self._h = handle
        w = _lib.cs_engine_world(handle)
        self._w = w
        self.n_models = _lib.cs_world_n_models(w)
        self.n_gpus = _lib.cs_world_n_gpus(w)
        self.models = [Row(index=m, name=_lib.cs_world_model_name(w, m).decode(),
                           slo_ns=_lib.cs_world_slo_ns(w, m), rate_rps=_lib.cs_world_rate_rps(w, m))
                       for m in range(self.n_models)]
        self.gpus = [Row(index=g, gpu_type=_lib.cs_world_gpu_type(w, g).decode(),
                         node=_lib.cs_world_gpu_node(w, g)) for g in range(self.n_gpus)]

    @property
    def now(self):
        return _lib.cs_engine_now(self._h)

    def timer(self, at_ns, arg=0):
        """on_timer(arg) at at_ns (earlier: now). Returns a handle for cancel()."""
        return _lib.cs_engine_timer(self._h, int(at_ns), arg)

    def cancel(self, handle):
        return bool(_lib.cs_engine_cancel(self._h, handle))

    def batch(self, model, capacity):
        return Batch(self, _lib.cs_engine_batch_new(self._h, model, capacity), model)

    def discard(self, batch):
        _lib.cs_engine_batch_discard(self._h, batch._b)

    def send_gpu(self, batch, gpu):
        _lib.cs_engine_send_gpu(self._h, batch._b, gpu)

    def send_replica(self, batch, replica):
        _lib.cs_engine_send_replica(self._h, batch._b, replica)

    def drop(self, model, request):
        _lib.cs_engine_drop(self._h, model, ctypes.byref(request._c))

    def unserved(self, model, request):
        _lib.cs_engine_unserved(self._h, model, ctypes.byref(request._c))

    def exec_ns(self, model, gpu, n):
        """How long a batch of n requests of model runs alone on gpu, ns."""
        return _lib.cs_engine_exec_ns(self._h, model, gpu, n)

    def network_ns(self, nbytes):
        return _lib.cs_world_network_ns(self._w, int(nbytes))

    def gpu_in_transfer(self, gpu):
        return _lib.cs_engine_gpu_in_transfer(self._h, gpu)

    def gpu_queued(self, gpu):
        return _lib.cs_engine_gpu_queued(self._h, gpu)

    def gpu_running(self, gpu):
        return _lib.cs_engine_gpu_running(self._h, gpu)

    def gpu_load(self, gpu):
        """Batches in transfer to gpu, queued at it and running on it."""
        h = self._h
        return (_lib.cs_engine_gpu_in_transfer(h, gpu) + _lib.cs_engine_gpu_queued(h, gpu) +
                _lib.cs_engine_gpu_running(h, gpu))

    def gpu_ready(self, gpu):
        return bool(_lib.cs_engine_gpu_ready(self._h, gpu))

    @property
    def n_replicas(self):
        return _lib.cs_engine_n_replicas(self._h)

    def replica(self, i):
        """Row(model, gpu, batch, mps_share) of replica i."""
        r = _lib.cs_engine_replica(self._h, i)
        if not r:
            raise IndexError(f"clustersim: replica {i}: the run has {self.n_replicas}")
        r = r.contents
        return Row(model=r.model, gpu=r.gpu, batch=r.batch, mps_share=r.mps_share)

    def replica_active(self, i):
        return bool(_lib.cs_engine_replica_active(self._h, i))

    def replica_queue(self, i):
        q = _ReplicaQueue()
        if not _lib.cs_engine_replica_queue(self._h, i, ctypes.byref(q)):
            raise IndexError(f"clustersim: replica {i}: the run has {self.n_replicas}")
        return Row(in_transfer=q.in_transfer, queued=q.queued,
                   waiting_requests=q.waiting_requests, busy=bool(q.busy),
                   running_requests=q.running_requests, fails_memory=bool(q.fails_memory))

    def uniform(self):
        """A draw in [0, 1) of the policy's own random stream (dispatch.h)."""
        return _lib.cs_engine_policy_uniform(self._h)

    def random(self):
        """64 random bits of the policy's own stream."""
        return _lib.cs_engine_policy_random(self._h)


class DispatchPolicy:
    """Base class of a dispatch policy in Python. Set name (and description,
    uses_placement: True sends batches to the placement's replicas); define
    on_request(model, request) and, as needed, on_timer(arg),
    on_batch_start(event), on_batch_finish(event), on_quiet(),
    on_cluster_change(), and parse(params) (a classmethod or staticmethod:
    the scenario's "dispatch" object through Params readers; what it returns
    is self.params). __init__(engine, params) runs once per run: call super()
    or keep engine as self.engine."""
    name = None
    description = ""
    uses_placement = False

    def __init__(self, engine, params):
        self.engine = engine
        self.params = params

    @staticmethod
    def parse(params):
        return None

    def on_request(self, model, request):
        raise NotImplementedError("a dispatch policy defines on_request(model, request)")


_pending = threading.local()


def take_pending_exception():
    e = getattr(_pending, "exception", None)
    _pending.exception = None
    return e


class _Adapter:
    """The C callbacks of one Python policy class: its params and per-run
    objects live in dicts keyed by the small integers given to C as pointers."""

    def __init__(self, cls):
        from .policies import Params, _set_error
        from .errors import ClusterSimError
        self.cls = cls
        self.params = {}
        self.states = {}
        ids = itertools.count(1)
        name = cls.name

        def fail(engine_handle, e):
            if getattr(_pending, "exception", None) is None:
                _pending.exception = e
            where = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
            at = f" (at {where.filename}:{where.lineno})" if where else ""
            _lib.cs_engine_abort(engine_handle,
                                 f"(Python) raised {type(e).__name__}: {e}{at}".encode())

        def parse(params, _user, error):
            try:
                prm = Params(params)
                value = cls.parse(prm)
                if not prm._finish(error):
                    return None
            except ClusterSimError as e:
                _set_error(error, e.code, e.message)
                return None
            except BaseException as e:
                _pending.exception = e
                _set_error(error, 3, f"dispatch policy \"{name}\" (Python): parse raised "
                                     f"{type(e).__name__}: {e}")
                return None
            k = next(ids)
            self.params[k] = value
            return k

        def free_params(k):
            self.params.pop(k, None)

        def create(engine, k, _user):
            eng = Engine(engine)
            try:
                obj = cls(eng, self.params.get(k))
                if not hasattr(obj, "engine"):
                    obj.engine = eng
            except BaseException as e:
                fail(engine, e)
                obj = None
            s = next(ids)
            self.states[s] = (obj, engine)
            return s

        def destroy(s):
            self.states.pop(s, None)

        def callback(method, convert):
            def call(s, *args):
                obj, engine = self.states[s]
                if obj is None:
                    return
                try:
                    getattr(obj, method)(*convert(*args))
                except BaseException as e:
                    fail(engine, e)
            return call

        def on_request(s, model, r):
            obj, engine = self.states[s]
            if obj is None:
                return
            c = _Request(r.contents.id, r.contents.send_ns, r.contents.measured)
            try:
                obj.on_request(model, Request(c))
            except BaseException as e:
                fail(engine, e)

        def event(b):
            e = b.contents
            return (Row(model=e.model, gpu=e.gpu, replica=e.replica, size=e.size,
                        dispatch_ns=e.dispatch_ns, node_ns=e.node_ns, start_ns=e.start_ns,
                        end_ns=e.end_ns, batch_id=e.batch_id, worker=e.worker),)

        def has(method):
            return callable(getattr(cls, method, None))

        fields = {"name": name.encode(), "description": (cls.description or "").encode(),
                  "uses_placement": 1 if cls.uses_placement else 0,
                  "parse": _PARSE(parse), "free_params": _FREE(free_params),
                  "create": _CREATE(create), "destroy": _FREE(destroy),
                  "on_request": _ON_REQUEST(on_request)}
        # An optional callback the class does not define stays NULL: the
        # engine then does not call it (on_cluster_change's absence refuses
        # a controller that changes the cluster, as for a policy in C).
        if has("on_timer"):
            fields["on_timer"] = _ON_TIMER(callback("on_timer", lambda a: (a,)))
        if has("on_batch_start"):
            fields["on_batch_start"] = _ON_BATCH(callback("on_batch_start", event))
        if has("on_batch_finish"):
            fields["on_batch_finish"] = _ON_BATCH(callback("on_batch_finish", event))
        if has("on_quiet"):
            fields["on_quiet"] = _ON_STATE(callback("on_quiet", lambda: ()))
        if has("on_cluster_change"):
            fields["on_cluster_change"] = _ON_STATE(callback("on_cluster_change", lambda: ()))
        self.struct = _DispatchPolicy(**fields)
        self.keep = list(fields.values())  # the callbacks live as long as the registry


def register(registry, cls):
    if not (isinstance(cls, type) and issubclass(cls, DispatchPolicy)):
        raise TypeError(f"clustersim: add_dispatch takes a subclass of DispatchPolicy, got {cls!r}")
    if not cls.name or not isinstance(cls.name, str):
        raise ValueError(f"clustersim: {cls.__name__}.name: expected the policy's name")
    adapter = _Adapter(cls)
    err = _native.error_slot()
    if not _lib.cs_registry_add_dispatch(registry._h, ctypes.byref(adapter.struct), None,
                                         ctypes.byref(err)):
        _native.raise_error(err)
    registry._keep.append(adapter)
