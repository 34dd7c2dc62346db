"""``numfuse.jit``: the decorator, its per-signature cache and its per-call path."""

from __future__ import annotations

import functools
import operator
import threading
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar

import numpy as np

from .. import _core, _dispatch, _reduce
from . import _program
from ._guards import Watch
from ._trace import Trace
from ._tracer import Tracer

# Signatures kept per function (a new one beyond this drops the others), and distinct
# values one guard may see before its misses run the plain function instead of tracing.
_MAX_SIGNATURES = 64
_MAX_PATHS = 16

# A jitted function's parameters and result: numfuse.jit keeps the function's signature.
_P = ParamSpec("_P")
_R = TypeVar("_R")


class _Unkeyable(Exception):
    pass


_array_key = operator.attrgetter("__class__", "dtype", "shape")
_jit_key = _core._jit_key


def _general_key(args, kwargs):
    """The signature key of any call: (type, dtype, shape) per array, else _key's value."""
    try:
        key = tuple(map(_array_key, args))
    except AttributeError:
        key = tuple([_key(a) for a in args])
    if kwargs:
        key += tuple(sorted((name, _key(v)) for name, v in kwargs.items()))
    return key


def _key(value):
    """The part of a call's signature one argument contributes (see docs/jit.md)."""
    kind = type(value)
    if (
        kind is np.ndarray
        or isinstance(value, np.generic)
        or (kind.__module__.startswith("dask.") and hasattr(value, "chunks"))
    ):
        return _array_key(value)  # as the all-arrays path
    if kind is float or kind is complex:
        return (kind, repr(value))  # NaN equal to itself, -0.0 apart from 0.0
    if kind is int or kind is bool:
        return (kind, value)
    if _immutable(value):
        return (kind, value)
    raise _Unkeyable  # a list, a dict, an object with attributes: the plain function runs


_IMMUTABLE = (type(None), str, bytes, type(Ellipsis), np.dtype, np.ufunc, types.BuiltinFunctionType)


def _immutable(value) -> bool:
    """Whether a non-array argument can key a trace: values that cannot change later."""
    if isinstance(value, (tuple, frozenset)):
        return all(_immutable(v) for v in value)
    return type(value) in _PYTHON_NUMBERS or isinstance(value, _IMMUTABLE)


_PYTHON_NUMBERS = (bool, int, float, complex)


def _is_array(value) -> bool:
    kind = type(value)
    return (
        kind is np.ndarray
        or isinstance(value, np.generic)
        or (kind.__module__.startswith("dask.") and hasattr(value, "chunks"))
    )


class _Entry:
    """One signature: where its arrays are among the arguments, and its block tree."""

    __slots__ = ("positions", "names", "root", "padding", "direct", "signature")

    def __init__(self, positions, names, root, slots):
        self.positions = positions  # indices of array arguments
        self.names = names  # keyword arguments that are arrays, sorted
        self.root = root
        # the slots after the inputs, of the longest path traced so far
        self.padding = [None] * (slots - len(positions) - len(names))
        self.direct = _direct(root, positions, names)
        self.signature = ()  # _general_key of the call: the arguments, for explain()


class JitFunction(_core._JitDispatch, Generic[_P, _R]):
    """A function traced once per input signature and run through the fused engine.

    Calls with the same signature (see docs/jit.md) replay the recorded steps; globals and
    closure values the function reads are compared with what the trace saw on every call,
    and values the Python code looked at (branches) are re-checked where they were read.

    A call is first offered to the C base class (src/python/jit_dispatch.cpp), which
    answers the signatures whose program is one fused expression when every watched value
    is the one remembered (what ``_publish`` gave it), and hands every other call to
    ``_call``, the one implementation of these rules.
    """

    def __init__(self, function: Callable[_P, _R], strict: bool = False) -> None:
        if not callable(function):
            raise TypeError(f"numfuse.jit needs a function, got {type(function).__name__}")
        functools.update_wrapper(self, function)
        self._function = function
        self._strict = bool(strict)
        self._watch = Watch(function) if hasattr(function, "__code__") else None
        self._snapshot = None
        self._entries = {}
        self._lock = threading.Lock()
        self._fast_state = None  # nothing traced: every call takes _call

    def __get__(self, instance: object, owner: type | None = None) -> Any:  # binds as a function
        return self if instance is None else functools.partial(self, instance)

    if TYPE_CHECKING:  # at run time the C base class's (see the class's docstring)

        def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R: ...

    # the Python path of a call, for every call the C base class does not answer
    def _call(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        # all arguments plain arrays of built-in dtypes (the common call): one bytes key
        # built in C (numfuse._core._jit_key); else (type, dtype, shape) or the value per
        # argument. The two kinds never compare equal.
        key = None if kwargs else _jit_key(*args)
        if key is None:
            try:
                key = _general_key(args, kwargs)
            except _Unkeyable:
                return self._function(*args, **kwargs)
        watch = self._watch
        if watch is not None and not watch.unchanged():
            return self._trace(key, args, kwargs, fresh=True)
        entry = self._entries.get(key)
        if entry is None:
            return self._trace(key, args, kwargs)
        direct = entry.direct
        if direct is not None:  # one fused expression of positional arrays and constants
            compiled, picks = direct
            if picks is None:  # the arguments themselves, in order
                return compiled(*args)
            return compiled(*[args[v] if is_arg else v for is_arg, v in picks])
        env = [args[i] for i in entry.positions]
        if entry.names:
            env += [kwargs[name] for name in entry.names]
        env += entry.padding
        try:
            return _program.run(entry.root, env)
        except _program.Miss:
            if _program.count_paths(entry.root) >= _MAX_PATHS:
                return self._function(*args, **kwargs)
            return self._trace(key, args, kwargs)
        except _program.RunPlain:
            return self._function(*args, **kwargs)

    def _trace(self, key, args, kwargs, fresh=False):
        if not all(_is_array(v) or _immutable(v) for v in (*args, *kwargs.values())):
            # an array type the tracer does not stand in for (a torch tensor, a list):
            # nothing is cached, the plain function answers
            return self._function(*args, **kwargs)
        snapshot = self._watch.read() if self._watch is not None else None
        trace = Trace(self._strict, getattr(self._function, "__qualname__", "function"))
        positions = [i for i, a in enumerate(args) if _is_array(a)]
        # env order: positional arrays, then keyword arrays sorted by name (as in the key)
        names = sorted(n for n, v in kwargs.items() if _is_array(v))
        traced_args = [trace.input(a) if _is_array(a) else a for a in args]
        keyword_inputs = {n: trace.input(kwargs[n]) for n in names}
        traced_kwargs = {n: keyword_inputs.get(n, v) for n, v in kwargs.items()}
        result = self._function(*traced_args, **traced_kwargs)
        items, value = trace.finish(result)
        with self._lock:
            if fresh or self._snapshot is None or not _same_values(snapshot, self._snapshot):
                self._entries = {}
                self._snapshot = snapshot
                if self._watch is not None:
                    self._watch.remember(snapshot)
            entry = self._entries.get(key)
            if entry is None:
                if len(self._entries) >= _MAX_SIGNATURES:
                    self._entries = {}
                self._entries[key] = _Entry(positions, names, _program.build(items), len(trace.env))
                self._entries[key].signature = _general_key(args, kwargs)
            else:
                _program.merge(entry.root, items)
                entry.direct = None
                extra = len(trace.env) - len(positions) - len(names) - len(entry.padding)
                if extra > 0:
                    entry.padding = entry.padding + [None] * extra
            self._publish()
        return value

    def _publish(self) -> None:
        """Give the C path what it may answer from, in one assignment (the caller holds
        the lock): the direct programs of bytes-keyed signatures and the watched values
        with what they must still be (src/python/jit_dispatch.cpp says the layout)."""
        watch = self._watch
        if watch is None:
            checks = ((), (), ())
        elif not watch.remembered():
            self._fast_state = None
            return
        else:
            checks = watch.flat_checks()
        targets = []
        for key, entry in self._entries.items():
            if type(key) is bytes and entry.direct is not None:
                compiled, picks = entry.direct
                targets += (key, compiled, None if picks is None else tuple(picks))
        self._fast_state = (tuple(targets), *checks)

    def explain(self) -> str:
        """What each cached signature runs: fused expressions, NumPy steps (graph breaks,
        with the user's source line), guards and their branches."""
        lines = [f"numfuse.jit({getattr(self._function, '__qualname__', self._function)!r})"]
        for entry in list(self._entries.values()):
            lines.append(f"signature {_describe_key(entry.signature)}:")
            lines.extend(_program.describe(entry.root))
        if len(lines) == 1:
            lines.append("  (not called yet: nothing traced)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<numfuse.jit of {self._function!r}>"


def _same_values(a, b) -> bool:
    return len(a) == len(b) and all(map(operator.is_, a, b))


def _direct(root, positions, names):
    """(compiled, picks) when the whole program is one fused expression returned as is,
    over positional array arguments and constants: the call then skips env and steps."""
    if names or type(root.end) is not _program.Return or len(root.steps) != 1:
        return None
    (step,) = root.steps
    ref = root.end.template
    if type(step) is not _program.Segment or step.foreign or step.scalar or step.shape:
        return None
    if type(ref) is not _program.Ref or ref.slot != step.out:
        return None
    if any(is_slot and v >= len(positions) for is_slot, v in step.inputs):
        return None
    picks = [(True, positions[v]) if is_slot else (False, v) for is_slot, v in step.inputs]
    if picks == [(True, i) for i in range(len(positions))] and positions == list(
        range(len(positions))
    ):
        picks = None  # every argument is an array, each an input in order
    return step.compiled, picks


def _describe_key(key) -> str:
    parts = []
    for item in key:
        if type(item) is tuple and len(item) == 3 and isinstance(item[1], np.dtype):
            kind, dtype, shape = item
            name = "" if kind is np.ndarray else f"{kind.__module__}.{kind.__name__} "
            parts.append(f"{name}{dtype}{list(shape)}")
        else:
            parts.append(repr(item[-1]) if type(item) is tuple else repr(item))
    return "(" + ", ".join(parts) + ")"


# numfuse.logsumexp / softmax / log_softmax reach a Tracer through the back-end hook they
# already have for dask arrays (_dispatch): fused when the engine spells them.
def _logsumexp(a, axis, b, keepdims, return_sign, out=None):
    if b is None and not return_sign and out is None and type(a) is Tracer:
        return a.trace.reduction(
            "logsumexp",
            lambda x: _reduce.logsumexp(x, axis=axis, keepdims=keepdims),
            a,
            axis,
            keepdims,
        )
    trace = a.trace if type(a) is Tracer else b.trace
    return trace.eager(
        _reduce.logsumexp,
        (a, axis, b, keepdims, return_sign),
        {"out": out},
        "numfuse.logsumexp with b=, return_sign= or out=",
    )


def _softmax(x, axis, log, out=None):
    function = _reduce.log_softmax if log else _reduce.softmax
    name = "log_softmax" if log else "softmax"
    if out is None:
        return x.trace.reduction(name, lambda v: function(v, axis=axis), x, axis, False)
    return x.trace.eager(function, (x, axis), {"out": out}, f"numfuse.{name}(out=...)")


_dispatch.register(
    "jit", lambda value: type(value) is Tracer, logsumexp=_logsumexp, softmax=_softmax
)
