"""numexpr-compatible string expressions: the thin Python layer.

Everything that understands the expression text is C++ (numfuse._core): the
tokenizer, parser, type checker, compiler and VM. This module only finds the
values of the names an expression uses (in the caller's frame, as numexpr
does) and hands them over. Nothing here, or anywhere in numfuse, passes the
expression to Python's ``eval``/``compile``/``ast``: a payload such as
``__import__('os').system('...')`` is just text the C++ parser rejects.
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from . import _core, _dispatch, _frames, _interop

if TYPE_CHECKING:  # numpy.typing costs milliseconds at import; annotations only
    import numpy.typing as npt

ExpressionError = _core.ExpressionError
UnsupportedDtypeError = _core.UnsupportedDtypeError

__all__ = [
    "ExpressionError",
    "NumExpr",
    "UnsupportedDtypeError",
    "compile",
    "disassemble",
    "evaluate",
    "re_evaluate",
    "validate",
]

# Names an expression uses, by text (parsing is cheap, but this keeps the
# per-call cost of small evaluations to a dict lookup).
_names_cache: dict[str, tuple[str, ...]] = {}
_NAMES_CACHE_LIMIT = 1024

# The types of the public signatures (NumPy's spellings of order= and casting=).
_Order = Literal["K", "C", "F", "A"]
_Casting = Literal["no", "equiv", "safe", "same_kind", "unsafe"]
_Scope = Mapping[str, Any]

# re_evaluate repeats the calling thread's last evaluate/validate. It holds the text, the
# names and the options, and out= only through a weak reference (as numexpr does): no user
# array outlives the call because of it. re_evaluate writes into that out while it is alive
# and returns a new array once it is gone.
_last = threading.local()


def _remember(ex, names, out, order, casting):
    if out is not None:
        try:
            out = weakref.ref(out)
        except TypeError:  # not weak-referenceable: re_evaluate gets a new array
            out = None
    _last.call = (ex, names, out, order, casting)


def _check_str(ex):
    """The one check of an expression's type, before any lookup that hashes it (a list
    would otherwise say "unhashable type"). numexpr raises ValueError here; numfuse keeps
    the TypeError of a wrong argument type and names the type."""
    if not isinstance(ex, str):
        raise TypeError(
            f"expression must be a str, got {type(ex).__name__}"
            + (" (decode bytes first)" if isinstance(ex, (bytes, bytearray)) else "")
        )


def _names(ex):
    _check_str(ex)
    names = _names_cache.get(ex)
    if names is None:
        _check_encodable(ex)
        names = tuple(_core._expr_names(ex))
        if len(_names_cache) >= _NAMES_CACHE_LIMIT:
            _names_cache.clear()
        _names_cache[ex] = names
    return names


def _check_encodable(ex):
    """Lone surrogates cannot reach the C++ parser (UTF-8): report them as it reports
    any other character it does not know, instead of a binding-level TypeError."""
    try:
        ex.encode("utf-8")
    except UnicodeEncodeError as error:
        raise _core.ExpressionError(
            f"unexpected character {ex[error.start]!r} (column {error.start + 1})"
        ) from None


def _check_kwargs(kwargs):
    # numexpr's keywords: accepted, and moot here (no VML, true division
    # always, and sanitizing is unnecessary since nothing is ever eval'ed).
    for key in kwargs:
        if key not in ("optimization", "truediv", "sanitize", "_frame_depth"):
            raise TypeError(f"evaluate() got an unexpected keyword argument {key!r}")


def evaluate(
    ex: str,
    local_dict: _Scope | None = None,
    global_dict: _Scope | None = None,
    out: Any = None,
    order: _Order = "K",
    casting: _Casting = "same_kind",
    **kwargs: object,
) -> npt.NDArray[Any]:
    """Evaluate a numexpr-style array expression in one fused, blockwise pass on all cores.

    ``numfuse.evaluate("2*a + 3*b")`` computes what NumPy computes for ``2*a + 3*b`` (the
    same dtypes, broadcasting and NumPy 2's rules for Python scalars) without the
    temporaries: the expression is parsed by numfuse's own C++ parser (never Python's
    ``eval``), compiled once (plans are cached) and run in cache-sized blocks on every
    core.

    Parameters
    ----------
    ex : str
        The expression: numbers, names, ``+ - * / // % **``, comparisons, ``& | ~``,
        ``where(c, x, y)``, the math functions (exp, log, erf, sin, ... as ``numfuse``'s
        ufuncs), and reductions anywhere inside: ``sum``, ``prod``, ``min``, ``max``,
        ``mean``, ``logsumexp`` with ``axis=`` and ``keepdims=``.
    local_dict, global_dict : mapping, optional
        Where names are looked up, in that order; by default the caller's local and
        global variables. An undefined name is a ``KeyError`` saying where it looked.
    out : ndarray, optional
        Where to write the result (it may be one of the inputs).
    order : {'K', 'C', 'F', 'A'}, optional
        The result's memory layout, as in NumPy.
    casting : {'no', 'equiv', 'safe', 'same_kind', 'unsafe'}, optional
        How the result may be cast into ``out``.
    optimization, truediv, sanitize
        numexpr's keywords: accepted and ignored (numfuse always optimises, divides as
        Python 3 does and never evaluates Python code).

    Returns
    -------
    ndarray
        NumPy's dtype and shape for the same formula; a reduction to a single value is a
        0-d array, as numexpr returns it.

    Raises
    ------
    ExpressionError
        Malformed text (a ``SyntaxError`` that is also a ``ValueError`` and a ``TypeError``,
        with the column and a caret).
    KeyError, TypeError, ValueError, OverflowError
        An undefined name; an operation the types do not support; shapes that do not
        broadcast; a Python int out of range for the array's integer type.

    Examples
    --------
    >>> import numpy as np, numfuse as nf
    >>> a = np.arange(4.0)
    >>> nf.evaluate("2*a + 1")
    array([1., 3., 5., 7.])
    >>> nf.evaluate("log(sum(exp(a)))")
    array(3.4401897)

    The grammar, the differences from NumPy and numexpr, and the threads:
    docs/evaluate.md in numfuse's source distribution.
    """
    depth = 1
    if kwargs:
        _check_kwargs(kwargs)
        depth = kwargs.get("_frame_depth", 1)
    try:
        names, compiled = _entries[ex]
    except (KeyError, TypeError):  # TypeError: an unhashable ex (the checks below report it)
        names, compiled = _entry(ex)
    if compiled is not None and out is None:
        # The common call: all names found, all arrays or scalars.
        found_locals, found_globals = local_dict, global_dict
        if local_dict is None or global_dict is None:
            frame = sys._getframe(depth)
            if local_dict is None:
                found_locals = frame.f_locals
            if global_dict is None:
                found_globals = frame.f_globals
            del frame
        values = _core._plain_values(names, found_locals, found_globals)
        if values is not None:
            _last.call = (ex, names, None, order, casting)
            if order == "K" and casting == "same_kind":
                return compiled(*values)
            return compiled(*values, order=order, casting=casting)
    used, values = _frames.lookup(names, local_dict, global_dict, depth)
    _remember(ex, names, out, order, casting)
    if _interop.foreign(values, out):  # dask arrays, __dlpack__, array-like out
        return _evaluate_foreign(ex, used, values, out, order, casting)
    if compiled is not None:
        if out is None and order == "K" and casting == "same_kind":
            return compiled(*values)
        return compiled(*values, out=out, order=order, casting=casting)
    return _core._evaluate(ex, used, values, out, order, casting)


# Per expression text: its names and, when the text names neither inf nor nan (which are
# constants only while the caller does not define them), a compiled object without a
# signature whose inputs are those names. Calling it is evaluate's whole C++ side (the
# same plan cache and code), with its fast path for 1-d contiguous inputs.
_entries: dict[str, tuple[tuple[str, ...], object]] = {}


def _entry(ex):
    names = _names(ex)
    compiled = None
    if not set(names) & set(_frames.CONSTANT_NAMES):
        compiled = _core.CompiledExpression(ex, None)
        names = tuple(compiled.input_names)
    if len(_entries) >= _NAMES_CACHE_LIMIT:
        _entries.clear()
    _entries[ex] = (names, compiled)
    return names, compiled


def _evaluate_foreign(ex, names, values, out, order, casting):
    backend = _dispatch.backend_for(out, *values)
    if backend is not None:
        return backend["evaluate"](ex, names, values, out=out, order=order, casting=casting)
    return _interop.evaluate(_core._evaluate, ex, names, values, out, order, casting)


def re_evaluate(
    local_dict: _Scope | None = None, global_dict: _Scope | None = None, _frame_depth: int = 1
) -> npt.NDArray[Any]:
    """Evaluate this thread's last expression again, with the names' current values.

    The last ``evaluate`` or ``validate`` call of the calling thread, with its ``order``,
    ``casting`` and ``out=`` (held through a weak reference: a new array is returned once
    that ``out`` is gone); names are looked up again in ``local_dict``/``global_dict`` or
    the caller's variables. ``RuntimeError`` when the thread has made no such call.
    """
    try:
        ex, names, out_ref, order, casting = _last.call
    except AttributeError:
        raise RuntimeError(
            "re_evaluate: no previous evaluate() or validate() in this thread"
        ) from None
    used, values = _frames.lookup(names, local_dict, global_dict, _frame_depth)
    out = None if out_ref is None else out_ref()
    if _interop.foreign(values, out):
        return _evaluate_foreign(ex, used, values, out, order, casting)
    return _core._evaluate(ex, used, values, out, order, casting)


def validate(
    ex: str,
    local_dict: _Scope | None = None,
    global_dict: _Scope | None = None,
    out: Any = None,
    order: _Order = "K",
    casting: _Casting = "same_kind",
    **kwargs: object,
) -> Exception | None:
    """Check that `ex` compiles for the current values; None if so, else the exception.

    On success the expression becomes this thread's target for re_evaluate().
    """
    try:
        _check_kwargs(kwargs)
        names = _names(ex)
        used, values = _frames.lookup(names, local_dict, global_dict, kwargs.get("_frame_depth", 1))
        _core._validate(ex, used, values)
    except Exception as error:  # noqa: BLE001 - numexpr's contract: return it
        return error
    _remember(ex, names, out, order, casting)
    return None


def compile(  # noqa: A001 - numexpr-style name
    ex: str, signature: Sequence[tuple[str, npt.DTypeLike]] | None = None, **kwargs: object
) -> _core.CompiledExpression:
    """A compiled expression object, callable as ``c(x, y)`` or ``c(x=..., y=...)``.

    ``signature`` (optional) is a list of ``(name, dtype)``: it fixes the
    argument order and types and compiles once; without it, arguments are in
    ``c.input_names`` order (sorted names) and types follow each call's inputs.
    Compiled objects may be called from many threads at once.
    """
    _check_kwargs(kwargs)
    _names(ex)  # str check, encodability, and the names cache
    return _core.CompiledExpression(ex, None if signature in (None, ()) else list(signature))


# numexpr's class name for compiled expressions.
NumExpr = compile


def disassemble(
    ex: str | _core.CompiledExpression,
    local_dict: _Scope | None = None,
    global_dict: _Scope | None = None,
) -> list[tuple[str, str | None, str | None, str | None, str | None]]:
    """The bytecode of an expression, as (opcode, destination, arg1, arg2, arg3) tuples.

    `ex` is a compiled object with a signature, or a string compiled for the
    values its names have in the caller's frame (or the dicts given).
    """
    if isinstance(ex, _core.CompiledExpression):
        return ex.disassemble()
    names = _names(ex)
    used, values = _frames.lookup(names, local_dict, global_dict, 1)
    return _core._disassemble(ex, used, values)
