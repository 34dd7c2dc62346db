"""numfuse.cuda's public functions: ufuncs, reductions and evaluate on GPU arrays."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from .. import _core, _frames
from . import _loader, _nvrtc
from ._arrays import _DTYPE_OF_LETTER, _FLOATS, _LETTERS, _prepare_out, _view
from ._loader import _require

# ---------------------------------------------------------------- element-wise functions

# The public functions take and return any GPU array kind (torch, CuPy, CAI/DLPack) or, with
# device=, NumPy arrays: the result is the input's kind, so their array types are Any.


def _unary(fn: str, x, out, device, stream):
    view = _view(x, fn, device, stream)
    if view.dtype not in _FLOATS:
        raise TypeError(
            f"numfuse.cuda.{fn}: float32 or float64 arrays expected, got {view.dtype} "
            "(cast on the device first)"
        )
    _, ptr, finish = _prepare_out(out, view, view.shape, view.dtype, fn, stream)
    n = math.prod(view.shape)
    _loader._cuda.unary(fn, view.dtype.name, view.ptr, ptr, n, view.stream, view.device)
    return finish()


def exp(x: Any, out: Any = None, *, device: Any = None, stream: Any = None) -> Any:
    """e**x on the GPU (numfuse's own kernel, <= 1 ULP; specials as NumPy)."""
    return _unary("exp", x, out, device, stream)


def log(x: Any, out: Any = None, *, device: Any = None, stream: Any = None) -> Any:
    """Natural logarithm on the GPU (<= 1 ULP; specials as NumPy)."""
    return _unary("log", x, out, device, stream)


def erf(x: Any, out: Any = None, *, device: Any = None, stream: Any = None) -> Any:
    """The error function on the GPU (<= 1 ULP; specials as scipy.special.erf)."""
    return _unary("erf", x, out, device, stream)


# ---------------------------------------------------------------- reductions


def _reduce_geometry(fn: str, shape, axis, keepdims):
    """(outer, n, inner, result shape) for reducing `shape` over `axis` (an int or None)."""
    if axis is None:
        outer, n, inner = 1, math.prod(shape), 1
        reduced = tuple(1 for _ in shape) if keepdims else ()
    else:
        if isinstance(axis, (tuple, list)):
            raise NotImplementedError(
                f"numfuse.cuda.{fn}: one axis or None (a tuple of axes is CPU-only)"
            )
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            raise TypeError(
                f"numfuse.cuda.{fn}: axis must be an int or None, got {type(axis).__name__}"
            )
        ndim = len(shape)
        if not -ndim <= axis < ndim:
            raise np.exceptions.AxisError(int(axis), ndim)
        axis = int(axis) % ndim
        outer, n, inner = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])
        reduced = shape[:axis] + ((1,) if keepdims else ()) + shape[axis + 1 :]
    return outer, n, inner, (reduced if fn == "logsumexp" else tuple(shape))


def _reduce(fn: str, x, axis, keepdims, out, device, stream):
    view = _view(x, fn, device, stream)
    if view.dtype not in _FLOATS:
        raise TypeError(f"numfuse.cuda.{fn}: float32 or float64 arrays expected, got {view.dtype}")
    outer, n, inner, result_shape = _reduce_geometry(fn, view.shape, axis, keepdims)
    _, ptr, finish = _prepare_out(out, view, result_shape, view.dtype, fn, stream)
    _loader._cuda.reduce(
        fn, view.dtype.name, view.ptr, ptr, outer, n, inner, view.stream, view.device
    )
    result = finish()
    if fn == "logsumexp" and result_shape == () and view.kind == "numpy":
        return result[()]
    return result


def logsumexp(
    x: Any,
    axis: int | None = None,
    keepdims: bool = False,
    out: Any = None,
    *,
    device: Any = None,
    stream: Any = None,
) -> Any:
    """log(sum(exp(x))) over one axis (or all), deterministic on the GPU.

    The same reduction order on every run and every GPU: the split into rows, chunks
    and threads depends on the shape only, partial results combine in fixed trees; no
    floating-point atomics (docs/gpu.md, Reductions).
    """
    return _reduce("logsumexp", x, axis, keepdims, out, device, stream)


def softmax(
    x: Any, axis: int | None = None, out: Any = None, *, device: Any = None, stream: Any = None
) -> Any:
    """exp(x - logsumexp(x, axis, keepdims=True)) on the GPU (deterministic)."""
    return _reduce("softmax", x, axis, False, out, device, stream)


def log_softmax(
    x: Any, axis: int | None = None, out: Any = None, *, device: Any = None, stream: Any = None
) -> Any:
    """x - logsumexp(x, axis, keepdims=True) on the GPU (deterministic)."""
    return _reduce("log_softmax", x, axis, False, out, device, stream)


# ---------------------------------------------------------------- evaluate


def _scalar_bits(value, dtype) -> int:
    raw = np.array(value, dtype=dtype).tobytes()
    return int.from_bytes(raw.ljust(8, b"\0"), "little")


def _evaluate_inputs(ex, local_dict, global_dict, frame_depth, view_of):
    """(names, type letters, weak flags, pointers, scalar bits, [(name, view)]) for `ex`."""
    if not isinstance(ex, str):
        raise TypeError(
            f"numfuse.cuda.evaluate: the expression must be a str, got {type(ex).__name__}"
        )
    names, values = _frames.lookup(_core._expr_names(ex), local_dict, global_dict, frame_depth + 1)
    types, weak, arrays, bits, views = [], [], [], [], []
    for name, value in zip(names, values):
        if isinstance(value, (bytes, str)) or getattr(value, "dtype", np.dtype(float)).kind in "SU":
            raise TypeError(
                f"numfuse.cuda.evaluate: '{name}' is a string; byte-string comparisons run on "
                "the CPU (numfuse.evaluate), not on the GPU"
            )
        if isinstance(value, complex) or (isinstance(value, np.generic) and np.iscomplexobj(value)):
            raise NotImplementedError(
                "numfuse.cuda.evaluate: complex numbers are not supported on the GPU"
            )
        if isinstance(value, (bool, np.bool_)):
            types.append("b")
            weak.append(isinstance(value, bool))
            arrays.append(0)
            bits.append(int(bool(value)))
            continue
        if type(value) in (int, float) or isinstance(value, np.generic):
            if isinstance(value, np.generic):
                dtype = np.dtype(type(value))
                if dtype not in _LETTERS:
                    raise TypeError(f"numfuse.cuda.evaluate: {name} has unsupported dtype {dtype}")
                letter, is_weak = _LETTERS[dtype], False
            else:
                letter, is_weak = ("l" if type(value) is int else "d"), True
            types.append(letter)
            weak.append(is_weak)
            arrays.append(0)
            bits.append(_scalar_bits(value, _DTYPE_OF_LETTER[letter]))
            continue
        view = view_of(name, value)
        if view.dtype not in _LETTERS:
            raise TypeError(
                f"numfuse.cuda.evaluate: '{name}' has dtype {view.dtype}; "
                "bool, int32, int64, float32 or float64 expected on the GPU"
            )
        types.append(_LETTERS[view.dtype])
        weak.append(False)
        arrays.append(view.ptr)
        bits.append(0)
        views.append((name, view))
    if not views:
        raise ValueError("numfuse.cuda.evaluate: at least one input must be an array")
    first_name, first = views[0]
    for name, view in views[1:]:
        if view.shape != first.shape:
            raise ValueError(
                "numfuse.cuda.evaluate: inputs must have the same shape on the GPU "
                f"(no broadcasting): '{first_name}' {first.shape} vs '{name}' {view.shape}"
            )
        if view.device != first.device:
            raise ValueError(
                f"numfuse.cuda.evaluate: '{first_name}' and '{name}' are on different devices"
            )
    return names, types, weak, arrays, bits, views


def jit_status() -> dict[str, Any]:
    """The GPU evaluate compiler (NVRTC): whether it is loaded, its cache and errors."""
    lib = _require("jit_status")
    _nvrtc.set_nvrtc_candidates(lib)
    return dict(lib.jit_status())


def evaluate(
    ex: str,
    local_dict: Mapping[str, Any] | None = None,
    global_dict: Mapping[str, Any] | None = None,
    out: Any = None,
    *,
    device: Any = None,
    stream: Any = None,
    engine: Literal["auto", "compiled", "interpreter"] = "auto",
) -> Any:
    """numfuse.evaluate's expression language, run as one fused kernel on the GPU.

    The expression is compiled by the same compiler as numfuse.evaluate (same type
    rules, common-subexpression elimination) into one kernel: one pass over the
    inputs, no temporaries in device memory. Array inputs must be C-contiguous
    device arrays of one shape (no broadcasting on the GPU yet) of dtype bool,
    int32, int64, float32 or float64; Python and NumPy scalars are fine.
    Reductions (sum, ..., logsumexp inside the expression) and complex numbers
    raise NotImplementedError.

    engine: 'auto' (default) compiles each distinct program to CUDA code with NVRTC
    the first time it is seen (about 0.1-0.5 s, then cached for the process) and runs
    it at memory speed; where NVRTC is missing (or NUMFUSE_CUDA_JIT=0) it runs the
    bytecode interpreter kernel instead, which gives the same bits, slower.
    'compiled' raises RuntimeError instead of falling back; 'interpreter' never
    compiles. ``numfuse.cuda.jit_status()`` tells which is available.
    """
    return _evaluate(ex, local_dict, global_dict, out, device, stream, engine, 2)


def _evaluate(ex, local_dict, global_dict, out, device, stream, engine, frame_depth):
    """numfuse.cuda.evaluate, names looked up `frame_depth` frames above this function
    (1: its caller) where no dict is given."""
    lib = _require("evaluate")
    if engine not in ("auto", "compiled", "interpreter"):
        raise ValueError(
            "numfuse.cuda.evaluate: engine must be 'auto', 'compiled' or 'interpreter', "
            f"got {engine!r}"
        )
    _nvrtc.set_nvrtc_candidates(lib)

    def view_of(name, value):
        return _view(value, "evaluate", device, stream, role=f"'{name}'")

    names, types, weak, arrays, bits, views = _evaluate_inputs(
        ex, local_dict, global_dict, frame_depth, view_of
    )
    first = views[0][1]
    letter = lib.evaluate_result_type(ex, names, types, weak)
    _, ptr, finish = _prepare_out(
        out, first, first.shape, _DTYPE_OF_LETTER[letter], "evaluate", stream
    )
    n = math.prod(first.shape)
    lib.evaluate(ex, names, types, weak, arrays, bits, ptr, n, first.stream, first.device, engine)
    return finish()
