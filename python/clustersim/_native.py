"""The C library through ctypes: loading it, the functions' prototypes, the
structs the package lays out itself, and GError to Python exceptions.

Every call into libclustersim goes through ctypes.CDLL, which releases the
GIL for the duration of the call: simulations run in parallel in Python
threads. Nothing here is public; the package's modules use it.
"""
import ctypes
import ctypes.util
import os
import re

from . import _paths
from .errors import error_from_gerror

# ---- the structs the package lays out -------------------------------------------------


class GError(ctypes.Structure):
    # GLib's public struct (glib/gerror.h), stable across GLib 2.x.
    _fields_ = [("domain", ctypes.c_uint32), ("code", ctypes.c_int),
                ("message", ctypes.c_char_p)]


class RunOptions(ctypes.Structure):
    # CsRunOptions (clustersim/clustersim.h), field by field; checked against
    # the library's cs_run_options_size() when the library is loaded.
    _fields_ = [("requests_csv", ctypes.c_char_p),
                ("on_request", ctypes.c_void_p),
                ("on_progress", ctypes.c_void_p),
                ("user_data", ctypes.c_void_p),
                ("seed_override", ctypes.c_int64),
                ("on_batch", ctypes.c_void_p),
                ("on_gpu", ctypes.c_void_p),
                ("trace_json", ctypes.c_char_p),
                ("trace_from_s", ctypes.c_double),
                ("trace_to_s", ctypes.c_double),
                ("max_requests", ctypes.c_int64),
                ("decisions", ctypes.c_char_p),
                ("timeseries", ctypes.c_int)]


# CsSweepProgress: void (*)(int done, int total, void *data)
SWEEP_PROGRESS = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_int, ctypes.c_void_p)


class SweepOptions(ctypes.Structure):
    # CsSweepOptions (clustersim/sweep.h), checked against cs_sweep_options_size().
    _fields_ = [("threads", ctypes.c_int),
                ("shard_index", ctypes.c_int),
                ("shard_count", ctypes.c_int),
                ("progress", ctypes.c_void_p),
                ("progress_data", ctypes.c_void_p),
                ("max_requests", ctypes.c_int64)]


class Warning_(ctypes.Structure):
    # CsWarning (clustersim/clustersim.h).
    _fields_ = [("code", ctypes.c_char_p), ("model", ctypes.c_char_p),
                ("gpu", ctypes.c_int), ("message", ctypes.c_char_p)]


# The binary interface this package was written for: the library's
# cs_abi_version() must return it (clustersim/plugin.h, CS_PLUGIN_ABI_VERSION).
ABI_VERSION = 1

# CsProgressCallback: gboolean (*)(double fraction, int64_t sim_time_ns, void *user_data)
PROGRESS = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, ctypes.c_int64, ctypes.c_void_p)

_P = ctypes.c_void_p
_PERR = ctypes.POINTER(ctypes.POINTER(GError))
_PROTOTYPES = {
    # name: (restype, argtypes)
    "cs_version": (ctypes.c_char_p, []),
    "cs_abi_version": (ctypes.c_int, []),
    "cs_run_options_size": (ctypes.c_size_t, []),
    "cs_run_options_init": (None, [ctypes.POINTER(RunOptions)]),
    "cs_scenario_load": (_P, [ctypes.c_char_p, _PERR]),
    "cs_scenario_load_plugins": (ctypes.c_int, [_P, _PERR]),
    "cs_scenario_new_from_json": (_P, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, _PERR]),
    "cs_scenario_free": (None, [_P]),
    "cs_scenario_set": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_char_p, _PERR]),
    "cs_scenario_unset": (ctypes.c_int, [_P, ctypes.c_char_p, _PERR]),
    "cs_scenario_validate": (ctypes.c_int, [_P, _PERR]),
    "cs_scenario_to_json": (_P, [_P]),
    "cs_scenario_effective_json": (_P, [_P, ctypes.POINTER(RunOptions), _PERR]),
    "cs_run": (_P, [_P, ctypes.POINTER(RunOptions), _PERR]),
    "cs_results_free": (None, [_P]),
    "cs_results_to_json": (_P, [_P]),
    "cs_results_effective_scenario": (ctypes.c_char_p, [_P]),
    "cs_results_print_table": (None, [_P, _P]),
    "cs_results_n_warnings": (ctypes.c_int, [_P]),
    "cs_results_warning": (ctypes.POINTER(Warning_), [_P, ctypes.c_int]),
    "cs_results_write_gpu_timeseries": (ctypes.c_int, [_P, ctypes.c_char_p, _PERR]),
    "cs_sweep_options_size": (ctypes.c_size_t, []),
    "cs_sweep_options_init": (None, [ctypes.POINTER(SweepOptions)]),
    "cs_experiment_load": (_P, [ctypes.c_char_p, _PERR]),
    "cs_experiment_free": (None, [_P]),
    "cs_experiment_name": (ctypes.c_char_p, [_P]),
    "cs_experiment_n_runs": (ctypes.c_int, [_P]),
    "cs_experiment_n_variants": (ctypes.c_int, [_P]),
    "cs_experiment_variant_name": (ctypes.c_char_p, [_P, ctypes.c_int]),
    "cs_experiment_n_axes": (ctypes.c_int, [_P]),
    "cs_experiment_axis_name": (ctypes.c_char_p, [_P, ctypes.c_int]),
    "cs_experiment_axis_n_levels": (ctypes.c_int, [_P, ctypes.c_int]),
    "cs_experiment_axis_label": (ctypes.c_char_p, [_P, ctypes.c_int, ctypes.c_int]),
    "cs_experiment_run_variant": (ctypes.c_char_p, [_P, ctypes.c_int]),
    "cs_experiment_run_label": (ctypes.c_char_p, [_P, ctypes.c_int, ctypes.c_int]),
    "cs_experiment_run_seed": (ctypes.c_int64, [_P, ctypes.c_int]),
    "cs_experiment_run_scenario": (_P, [_P, ctypes.c_int, _PERR]),
    "cs_experiment_sweep": (_P, [_P, ctypes.POINTER(SweepOptions)]),
    "cs_sweep_results_free": (None, [_P]),
    "cs_sweep_results_n_runs": (ctypes.c_int, [_P]),
    "cs_sweep_results_n_invalid": (ctypes.c_int, [_P]),
    "cs_sweep_results_text": (_P, [_P, ctypes.c_char_p]),
    "cs_sweep_results_write": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_int, _PERR]),
    "cs_results_write_gpu_detail": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_char_p, _PERR]),
    "cs_results_write_model_timeseries": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_char_p,
                                                         _PERR]),
    "cs_results_n_llm": (ctypes.c_int, [_P]),
    "cs_results_write_llm_timeseries": (ctypes.c_int, [_P, ctypes.c_char_p, _PERR]),
}


class LibraryError(ImportError):
    """The C library cannot be used: not found, or of another version."""


def _library_path():
    env = os.environ.get("CLUSTERSIM_LIBRARY")
    if env:
        return env, "CLUSTERSIM_LIBRARY"
    return _paths.LIBRARY, "the build (clustersim/_paths.py)"


def _load():
    path, where = _library_path()
    try:
        # RTLD_GLOBAL: a plug-in (Registry.load_plugin) finds the library's
        # functions by name, as in the clustersim program.
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise LibraryError(f"clustersim: cannot load libclustersim from {where}: {path}: {e}") \
            from None
    missing = [name for name in _PROTOTYPES if not hasattr(lib, name)]
    if "cs_abi_version" in missing:
        raise LibraryError(
            f"clustersim: {path} has no cs_abi_version: a libclustersim older than this "
            f"package (binary interface {ABI_VERSION}); install the library of the same "
            f"release, or set CLUSTERSIM_LIBRARY to it")
    abi = lib.cs_abi_version()
    if abi != ABI_VERSION:
        raise LibraryError(
            f"clustersim: {path} has binary interface {abi}, this package was written for "
            f"{ABI_VERSION}: install the Python package of the same release as the library, "
            f"or set CLUSTERSIM_LIBRARY to a library of interface {ABI_VERSION}")
    if missing:
        raise LibraryError(f"clustersim: {path} lacks {', '.join(missing)}")
    for name, (restype, argtypes) in _PROTOTYPES.items():
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = argtypes
    for struct, size_of in ((RunOptions, lib.cs_run_options_size),
                            (SweepOptions, lib.cs_sweep_options_size)):
        size = size_of()
        if size != ctypes.sizeof(struct):
            raise LibraryError(
                f"clustersim: {path}: Cs{struct.__name__} is {size} bytes, this package lays "
                f"out {ctypes.sizeof(struct)}: a library and package of different releases")
    return lib, path


lib, library_path = _load()
version = lib.cs_version().decode()

_glib = ctypes.CDLL(ctypes.util.find_library("glib-2.0") or "libglib-2.0.so.0")
_glib.g_free.argtypes = [ctypes.c_void_p]
_glib.g_free.restype = None
_glib.g_error_free.argtypes = [ctypes.POINTER(GError)]
_glib.g_error_free.restype = None
_libc = ctypes.CDLL(None)
_libc.open_memstream.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)]
_libc.open_memstream.restype = ctypes.c_void_p
_libc.fclose.argtypes = [ctypes.c_void_p]
_libc.free.argtypes = [ctypes.c_void_p]


def error_slot():
    """A GError * to pass by reference as a call's GError **."""
    return ctypes.POINTER(GError)()


def raise_error(slot):
    """Raises the exception for the GError a failed call left in slot (and frees it)."""
    if not slot:
        raise RuntimeError("clustersim: a call failed without saying why (a library bug)")
    e = slot.contents
    message = e.message.decode(errors="replace")
    code = e.code
    _glib.g_error_free(slot)
    raise error_from_gerror(code, message)


def free_error(slot):
    """Frees a GError left in slot without raising it."""
    if slot:
        _glib.g_error_free(slot)


def take_string(ptr):
    """The text of a g_malloc'd char * (then freed); None for NULL."""
    if not ptr:
        return None
    text = ctypes.string_at(ptr).decode()
    _glib.g_free(ptr)
    return text


def capture_stream(write):
    """Calls write(FILE *) on an in-memory stream and returns what it wrote."""
    buf = ctypes.c_void_p()
    size = ctypes.c_size_t()
    stream = _libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
    if not stream:
        raise MemoryError("clustersim: open_memstream failed")
    try:
        write(stream)
    finally:
        _libc.fclose(stream)
    text = ctypes.string_at(buf, size.value).decode()
    _libc.free(buf)
    return text


class Owned:
    """A Python object that owns one C object of the library: freed by
    close(), at the end of a with block, or when collected. A subclass sets
    _free (the library's free function, as a staticmethod) and _closed (what
    using it after close() says)."""
    _h = None
    _closed = "the object was closed"

    def _handle(self):
        if not self._h:
            raise ValueError(f"clustersim: {self._closed}")
        return self._h

    def close(self):
        """Frees it now (else when collected)."""
        if self._h:
            self._free(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        self.close()


def c_str(s):
    return None if s is None else os.fsencode(s) if isinstance(s, os.PathLike) else s.encode()
