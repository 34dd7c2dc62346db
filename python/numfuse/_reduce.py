"""logsumexp, softmax and log_softmax with scipy.special's signatures.

This layer only does SciPy's argument handling: dtype promotion, ``b``
broadcasting, axis normalisation, empty inputs, ``keepdims``, ``out=``; the
float32/float64 work happens in one pass in C++ (``numfuse._core._logsumexp``
and ``_softmax``, see src/core/reduce/). float16 is computed through
float32; complex and long double inputs, which have no SIMD loops, use a
NumPy implementation of the same formulas.

Deliberate differences from SciPy 1.17 (documented in the docstrings):

* no floating-point warnings: SciPy warns ("invalid value encountered in
  subtract") for softmax/log_softmax of groups holding +inf or only -inf,
  while it computes the same NaN answers; numfuse returns them silently;
* empty inputs always give -inf, also where SciPy 1.17 raises IndexError
  (axis=None or a tuple axis on an empty array of two or more dimensions);
* softmax/log_softmax of integer input is computed exactly in floating
  point (SciPy subtracts the maximum in the integer type, which wraps for
  unsigned and for wide-range small integer types); the result dtype is
  SciPy's (that of np.exp on the input type).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

if TYPE_CHECKING:  # numpy.typing costs milliseconds at import; annotations only
    import numpy.typing as npt

from . import _core, _dispatch, _interop
from ._axes import normalise_axes as _normalise_axes
from ._axes import reduced_shape as _reduced_shape

__all__ = ["log_softmax", "logsumexp", "softmax"]

# SciPy's axis argument: None (all axes), an int or a tuple of ints.
_Axis = int | tuple[int, ...] | None

_SIMD_TYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _check_numeric(array: np.ndarray, name: str) -> None:
    if array.dtype.kind not in "biufc":
        raise TypeError(
            f"{name}: unsupported input dtype {array.dtype} (expected a boolean, integer, "
            "floating-point or complex array)"
        )


def _is_python_scalar(value) -> bool:
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)


def _check_out(out, shape, dtype, name: str) -> np.ndarray:
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name}: out must be a numpy.ndarray, got {type(out).__name__}")
    if out.shape != tuple(shape):
        raise ValueError(f"{name}: out has shape {out.shape}, expected {tuple(shape)}")
    if out.dtype != dtype:
        raise TypeError(f"{name}: out has dtype {out.dtype}, expected {dtype}")
    if not out.flags.writeable:
        raise ValueError(f"{name}: out is read-only")
    return out


def _compute_dtype(dtype: np.dtype) -> np.dtype | None:
    """The SIMD type a result dtype is computed in (None: NumPy fallback)."""
    if dtype in _SIMD_TYPES:
        return dtype
    if dtype == np.float16:
        return np.dtype(np.float32)
    return None


# ---------------------------------------------------------------- logsumexp


# logsumexp's result is an array or, where the reduction leaves no axis, a NumPy scalar (as
# SciPy returns it): which one depends on shapes, so its type is Any, as for NumPy's own
# reductions; return_sign=True makes it a pair.
@overload
def logsumexp(
    a: npt.ArrayLike,
    axis: _Axis = None,
    b: npt.ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: Literal[False] = False,
    *,
    out: npt.NDArray[Any] | None = None,
) -> Any: ...
@overload
def logsumexp(
    a: npt.ArrayLike,
    axis: _Axis = None,
    b: npt.ArrayLike | None = None,
    keepdims: bool = False,
    *,
    return_sign: Literal[True],
    out: tuple[npt.NDArray[Any] | None, npt.NDArray[Any] | None] | None = None,
) -> tuple[Any, Any]: ...
@overload
def logsumexp(
    a: npt.ArrayLike,
    axis: _Axis,
    b: npt.ArrayLike | None,
    keepdims: bool,
    return_sign: Literal[True],
    *,
    out: tuple[npt.NDArray[Any] | None, npt.NDArray[Any] | None] | None = None,
) -> tuple[Any, Any]: ...
@overload
def logsumexp(
    a: npt.ArrayLike,
    axis: _Axis = None,
    b: npt.ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: bool = False,
    *,
    out: Any = None,
) -> Any: ...
def logsumexp(
    a: Any,
    axis: _Axis = None,
    b: Any = None,
    keepdims: bool = False,
    return_sign: bool = False,
    *,
    out: Any = None,
) -> Any:
    """Log of the sum of exponentials: a drop-in for ``scipy.special.logsumexp``.

    Computes ``log(sum(b * exp(a), axis))`` without overflow, in one pass
    over memory (an online max-and-rescale accumulator per SIMD lane),
    threaded, and bit-identical for any thread count.

    Parameters and results are SciPy's: ``axis`` (None, int or tuple),
    ``b`` (weights broadcast against ``a``; zero weights mask their entries,
    even infinite or NaN ones; negative weights allowed), ``keepdims``,
    ``return_sign`` (return ``(log|sum|, sign(sum))``; without it a negative
    sum gives NaN). Integer and boolean input gives float64, float32 stays
    float32, float16 is computed in float32; complex input follows SciPy's
    principal-branch convention (a slower NumPy path).

    ``out``: an array of the result's shape and dtype to write into (with
    ``return_sign``, a pair ``(out, sign_out)``, either of which may be
    None); it is returned instead of a new array.

    Differences from SciPy 1.17: no floating-point warnings; an empty input
    always gives -inf (SciPy raises IndexError for axis=None on empty arrays
    of two or more dimensions).
    """
    if (
        b is None
        and out is None
        and not return_sign
        and type(a) is np.ndarray
        and a.dtype in _SIMD_TYPES
        and a.ndim
        and a.size
    ):
        # fast path for the common call (a float32/float64 ndarray, no b/out/sign):
        # the same core call as below with ~5 us less argument handling per call
        axes = tuple(range(a.ndim)) if axis is None else _normalise_axes(axis, a.ndim)
        result = np.empty(_reduced_shape(a.shape, axes, False), a.dtype)
        _core._logsumexp(a, None, list(axes), result, None)
        if keepdims:
            result = result.reshape(_reduced_shape(a.shape, axes, True))
        return result[()] if result.ndim == 0 else result
    backend = _dispatch.backend_for(a, b)  # e.g. a lazy dask reduction (numfuse/_dask.py)
    if backend is not None:
        return backend["logsumexp"](a, axis, b, keepdims, return_sign, out=out)
    a = _interop.as_ndarray(a)  # zero-copy for torch tensors, __dlpack__, buffers
    _check_numeric(a, "logsumexp")
    if b is not None:
        b_scalar = b if _is_python_scalar(b) else None
        b = _interop.as_ndarray(b)
        _check_numeric(b, "logsumexp")
        dtype = np.result_type(a, b if b_scalar is None else b_scalar)
        shape = np.broadcast_shapes(a.shape, b.shape)
    else:
        dtype = a.dtype
        shape = a.shape
    if dtype.kind in "biu":
        dtype = np.dtype(np.float64)
    if len(shape) == 0:  # SciPy works on at least 1-d arrays
        shape = (1,)
    axes = _normalise_axes(axis, len(shape))
    result_shape = _reduced_shape(shape, axes, keepdims)

    out_result, out_sign = _split_logsumexp_out(out, return_sign)
    res_dtype = np.finfo(dtype).dtype if dtype.kind == "c" and return_sign else dtype
    sign_dtype = dtype
    if out_result is not None:
        _check_out(out_result, result_shape, res_dtype, "logsumexp")
    if out_sign is not None:
        _check_out(out_sign, result_shape, sign_dtype, "logsumexp (sign)")

    compute = _compute_dtype(dtype)
    kept = _reduced_shape(shape, axes, False)
    if int(np.prod(shape)) == 0:
        # SciPy: -inf, and sign(-inf) = -1, whatever b holds.
        result = np.full(kept, -np.inf, dtype=res_dtype)
        sign = np.full(kept, -1.0, dtype=sign_dtype)
    elif compute is None:
        result, sign = _logsumexp_numpy(
            np.broadcast_to(a.astype(dtype, copy=False), shape),
            None if b is None else np.broadcast_to(b.astype(dtype, copy=False), shape),
            axes,
            return_sign,
        )
    else:
        a_c = np.broadcast_to(a.astype(compute, copy=False), shape)
        b_c = None if b is None else np.broadcast_to(b.astype(compute, copy=False), shape)
        result = _direct_output(out_result, compute, axes, keepdims, (a_c, b_c))
        if result is None:
            result = np.empty(kept, compute)
        sign = None
        if return_sign:
            sign = _direct_output(out_sign, compute, axes, keepdims, (a_c, b_c))
            if sign is None:
                sign = np.empty(kept, compute)
        _core._logsumexp(a_c, b_c, list(axes), result, sign)

    result = _deliver(result, out_result, res_dtype, result_shape)
    if not return_sign:
        return result
    return result, _deliver(sign, out_sign, sign_dtype, result_shape)


def _split_logsumexp_out(out, return_sign: bool):
    if out is None:
        return None, None
    if isinstance(out, tuple):
        if not return_sign or len(out) != 2:
            raise TypeError(
                "logsumexp: out must be an array, or a pair (out, sign_out) with return_sign=True"
            )
        return out
    return out, None


def _direct_output(out, compute: np.dtype, axes, keepdims: bool, inputs):
    """A view of `out` the core can write into (right dtype, no overlap), or None."""
    if out is None or out.dtype != compute:
        return None
    for array in inputs:
        if array is not None and np.may_share_memory(out, array):
            return None
    return np.squeeze(out, axis=axes) if keepdims else out


def _deliver(value: np.ndarray, out, dtype: np.dtype, shape):
    """The result as returned: `out` (filled unless the core wrote it), or
    `value` reshaped and converted, 0-d arrays as NumPy scalars."""
    if out is not None:
        if not np.may_share_memory(value, out):
            out[...] = value.reshape(shape)
        return out
    value = value.astype(dtype, copy=False).reshape(shape)
    return value[()] if value.ndim == 0 else value


def _logsumexp_numpy(a, b, axes, return_sign):
    """logsumexp for complex and long double: the same formula in NumPy.

    Shift by the largest real part among entries with nonzero weight, sum,
    take the principal logarithm; where that is not finite, the plain
    log(sum(b * exp(a))) decides (SciPy's rule).
    """
    with np.errstate(all="ignore"):
        masked = a if b is None else np.where(b == 0, -np.inf, a)
        shift = np.max(masked.real, axis=axes, keepdims=True)
        shift = np.where(np.isfinite(shift), shift, 0)
        terms = np.exp(masked - shift)
        if b is not None:
            terms = np.where(b == 0, 0, terms * b)
        total = np.sum(terms, axis=axes)
        shift = np.squeeze(shift, axis=axes)
        plain = np.sum(np.exp(a) if b is None else b * np.exp(a), axis=axes)
        if return_sign:
            magnitude = np.abs(total)
            result = np.log(magnitude) + shift
            sign = np.where(magnitude == 0, 0, total / np.where(magnitude == 0, 1, magnitude))
            bad = ~np.isfinite(result)
            result = np.where(bad, np.log(np.abs(plain)), result)
            sign = np.where(bad, np.sign(plain), sign).astype(a.dtype)
            if a.dtype.kind == "c":
                result = result.real
        else:
            result = np.log(total) + shift
            bad = ~np.isfinite(result)
            result = np.where(bad, np.log(plain), result)
            sign = np.ones_like(result)
    return np.asarray(result), np.asarray(sign)


# ---------------------------------------------------------------- softmax


def _softmax_dtype(x: np.ndarray, name: str) -> np.dtype:
    if x.dtype.kind == "b":
        raise TypeError(f"{name}: boolean input is not supported (as in SciPy)")
    _check_numeric(x, name)
    if x.dtype.kind in "iu":
        return np.exp(np.zeros(0, x.dtype)).dtype  # SciPy's result type: np.exp's
    return x.dtype


def _softmax_any(x, axis, out, log: bool):
    if out is None and type(x) is np.ndarray and x.dtype in _SIMD_TYPES and x.size:
        # fast path (float32/float64 ndarray, no out=): the same core call as below
        axes = tuple(range(x.ndim)) if axis is None else _normalise_axes(axis, x.ndim)
        result = np.empty(x.shape, x.dtype)
        _core._softmax(x, list(axes), result, log)
        return result[()] if result.ndim == 0 else result
    name = "log_softmax" if log else "softmax"
    backend = _dispatch.backend_for(x)
    if backend is not None:
        return backend["softmax"](x, axis, log, out=out)
    x = _interop.as_ndarray(x)
    dtype = _softmax_dtype(x, name)
    axes = _normalise_axes(axis, x.ndim)
    if out is not None:
        _check_out(out, x.shape, dtype, name)
    if int(np.prod([x.shape[d] for d in axes])) == 0:  # NumPy's rule for max()
        raise ValueError("zero-size array to reduction operation maximum which has no identity")
    compute = _compute_dtype(dtype)
    if compute is None:
        result = _softmax_numpy(x.astype(dtype, copy=False), axes, log)
    else:
        x_c = x.astype(compute, copy=False)
        result = None
        if out is not None and out.dtype == compute:
            same_view = (
                out.__array_interface__["data"][0] == x_c.__array_interface__["data"][0]
                and out.strides == x_c.strides
            )
            if same_view or not np.may_share_memory(out, x_c):
                result = out
        if result is None:
            result = np.empty(x.shape, compute)
        if x.size:
            _core._softmax(x_c, list(axes), result, log)
    if out is not None:
        if result is not out:
            out[...] = result
        return out
    result = result.astype(dtype, copy=False)
    return result[()] if result.ndim == 0 else result


def _softmax_numpy(x, axes, log: bool):
    """softmax / log_softmax for complex and long double (no SIMD loops)."""
    with np.errstate(all="ignore"):
        shift = np.max(x, axis=axes, keepdims=True)
        if log:
            shift = np.where(np.isfinite(shift), shift, 0)
            shifted = x - shift
            return shifted - np.log(np.sum(np.exp(shifted), axis=axes, keepdims=True))
        e = np.exp(x - shift)
        return e / np.sum(e, axis=axes, keepdims=True)


def softmax(
    x: npt.ArrayLike, axis: _Axis = None, *, out: npt.NDArray[Any] | None = None
) -> npt.NDArray[Any]:
    """Softmax: a drop-in for ``scipy.special.softmax``.

    ``exp(x) / sum(exp(x), axis)`` computed stably, reading ``x`` twice and
    writing the result once (no temporaries), threaded, bit-identical for
    any thread count. ``axis``: None (all elements), int or tuple. Groups
    holding +inf, NaN or only -inf give NaN, as in SciPy, but without
    SciPy's warnings. ``out``: an array of ``x``'s shape and the result's
    dtype (``x`` itself is allowed).
    """
    return _softmax_any(x, axis, out, log=False)


def log_softmax(
    x: npt.ArrayLike, axis: _Axis = None, *, out: npt.NDArray[Any] | None = None
) -> npt.NDArray[Any]:
    """Logarithm of softmax: a drop-in for ``scipy.special.log_softmax``.

    ``x - max - log(sum(exp(x - max)))`` with the sum carried in double
    word, so even the largest entry of a saturated softmax (a value like
    -1e-300) is accurate. Special values as SciPy (+inf entries: NaN there
    and -inf elsewhere; NaN or all -inf: NaN), without SciPy's warnings.
    ``out``: as for :func:`softmax`.
    """
    return _softmax_any(x, axis, out, log=True)
