"""Inputs that are not NumPy arrays: zero-copy array protocols.

evaluate() and logsumexp() call in here only when a value is not a plain
NumPy array or Python/NumPy scalar, so the common path pays one type check
per value. Arrays of a back end (dask) never get here: the front ends hand
them to it first (numfuse._dispatch).

Zero-copy conversions, in NumPy's order: ``__array_interface__`` /
``__array_struct__``, the buffer protocol and ``__array__`` (torch CPU
tensors: ``Tensor.__array__`` returns ``Tensor.numpy()``, a view of the
tensor's memory) are what ``np.asarray`` and the C++ layer's
``PyArray_FROM_O`` already use; objects that only offer ``__dlpack__`` go
through ``np.from_dlpack``, which also shares memory.
"""

from __future__ import annotations

import numpy as np

_PLAIN_TYPES = frozenset({np.ndarray, float, int, bool, complex})


def _dlpack_only(value) -> bool:
    kind = type(value)
    return hasattr(kind, "__dlpack__") and not (
        hasattr(kind, "__array__")
        or hasattr(kind, "__array_interface__")
        or hasattr(kind, "__array_struct__")
        or isinstance(value, (memoryview, bytes, bytearray))
    )


def as_ndarray(value) -> np.ndarray:
    """np.asarray, plus __dlpack__-only objects (both share memory where they can)."""
    if type(value) is np.ndarray:
        return value
    if _dlpack_only(value):
        return np.from_dlpack(value)
    return np.asarray(value)


def foreign(values, out) -> bool:
    """True when evaluate() has a value or an `out` the C++ layer does not take as is."""
    if out is not None and type(out) is not np.ndarray:
        return True
    for value in values:
        if type(value) not in _PLAIN_TYPES and not isinstance(value, np.generic):
            return True
    return False


def evaluate(core_evaluate, ex, names, values, out, order, casting):
    """evaluate() for __dlpack__-only inputs and array-like `out`."""
    values = [as_ndarray(v) if _dlpack_only(v) else v for v in values]
    if out is None or type(out) is np.ndarray:
        return core_evaluate(ex, names, values, out, order, casting)
    # An array-like `out` (a torch tensor, an object exporting
    # __array_interface__ or __dlpack__) is written through a view of its
    # memory and returned itself.
    target = as_ndarray(out)
    if target.flags.owndata or target.dtype == object:
        # np.asarray made a new array (a list, a tuple, ...): writing it
        # would leave `out` unchanged.
        raise TypeError(
            f"out must be an array or expose its memory (__array_interface__, buffer, "
            f"__dlpack__, __array__ view), got {type(out).__name__}"
        )
    if not target.flags.writeable:
        raise ValueError(f"out ({type(out).__name__}) is read-only")
    core_evaluate(ex, names, values, target, order, casting)
    return out
