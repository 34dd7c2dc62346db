"""The GPU code paths run on the CPU over NumPy arrays: hooks for tests/test_cuda.py."""

from __future__ import annotations

import numpy as np

from ._api import _evaluate_inputs, _reduce_geometry
from ._arrays import _DTYPE_OF_LETTER, _FLOATS, _View
from ._loader import _require


def reduce_host(fn: str, x, axis=None, keepdims=False):
    """The GPU reduction in its exact order of operations, run on the CPU; for tests."""
    lib = _require(fn)
    x = np.ascontiguousarray(x)
    if x.dtype not in _FLOATS:
        raise TypeError(f"numfuse.cuda.{fn}: float32 or float64 arrays expected, got {x.dtype}")
    outer, n, inner, result_shape = _reduce_geometry(fn, x.shape, axis, keepdims)
    result = np.empty(result_shape, x.dtype)
    lib.reduce_host(fn, x.dtype.name, x.ctypes.data, result.ctypes.data, outer, n, inner)
    return result


def evaluate_host(ex, local_dict):
    """The GPU interpreter's per-element code run on the CPU over NumPy arrays; for tests.

    Same translation (bytecode -> device program) and same per-element code as the
    kernel; only libdevice functions are replaced by the C++ library's.
    """
    lib = _require("evaluate")

    def view_of(name, value):
        if not isinstance(value, np.ndarray):
            raise TypeError(f"evaluate_host: '{name}' must be a NumPy array")
        view = _View()
        host = np.ascontiguousarray(value)
        view.obj, view.keepalive, view.kind = host, host, "host"
        view.ptr, view.shape, view.dtype, view.device = host.ctypes.data, host.shape, host.dtype, -1
        return view

    names, types, weak, arrays, bits, views = _evaluate_inputs(ex, local_dict, {}, 1, view_of)
    first = views[0][1]
    letter = lib.evaluate_result_type(ex, names, types, weak)
    result = np.empty(first.shape, _DTYPE_OF_LETTER[letter])
    lib.evaluate_host(ex, names, types, weak, arrays, bits, result.ctypes.data, result.size)
    return result


def host_math(fn: str, x):
    """The GPU kernels' scalar math evaluated on the CPU (same source); for tests."""
    return _require("host_math").host_math(fn, np.asarray(x))
