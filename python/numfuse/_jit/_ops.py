"""What the tracer can hand to the engine, and NumPy's verdict on every fused operation.

Each fusable operation is a pair: the NumPy callable the user's code called, and an
expression template in the engine's language (``"exp({0})"``). The tracer never infers a
result type itself: it asks NumPy (the callable run on the verdict's samples, or on
one-element stand-ins of the operands' dtypes and ndims where a sample cannot answer for
the real operands), and fuses an operation only when the engine, run on a few sample values
of the same operand types, returns NumPy's dtype and NumPy's values. That verdict is cached
per (template, operand types) for the life of the process, as the samples and stand-ins.
So a type rule on which the engine and NumPy differ (math on bool or int8, ``%`` of negative
ints, ...) is found by asking, not by a second type table, and that operation runs in NumPy
instead (a graph break).
"""

from __future__ import annotations

import contextvars
import operator
import sys
import threading
import warnings

import numpy as np

from .. import _core, _reduce

# dtypes the engine computes in as is; anything else (int8, uint*, float16, ...) the engine
# would widen, so operations on it run in NumPy.
ENGINE_DTYPES = frozenset(np.dtype(t) for t in ("?", "i4", "i8", "f4", "f8", "c8", "c16"))
PYTHON_SCALARS = (bool, int, float, complex)
NO_CONST = object()  # a Tracer's const when it is not a constant

# ufunc -> engine template. The engine's own names, reached as np.*, numfuse.* or
# scipy.special.* (each of those is a distinct ufunc object).
_UFUNC_TEMPLATES = {
    np.add: "({0} + {1})",
    np.subtract: "({0} - {1})",
    np.multiply: "({0} * {1})",
    np.true_divide: "({0} / {1})",
    np.floor_divide: "({0} // {1})",
    np.remainder: "({0} % {1})",
    np.power: "({0} ** {1})",
    np.bitwise_and: "({0} & {1})",
    np.bitwise_or: "({0} | {1})",
    np.bitwise_xor: "({0} ^ {1})",
    np.left_shift: "({0} << {1})",
    np.right_shift: "({0} >> {1})",
    np.less: "({0} < {1})",
    np.less_equal: "({0} <= {1})",
    np.equal: "({0} == {1})",
    np.not_equal: "({0} != {1})",
    np.greater: "({0} > {1})",
    np.greater_equal: "({0} >= {1})",
    np.negative: "(-{0})",
    np.positive: "(+{0})",
    np.invert: "(~{0})",
    np.square: "({0} ** 2)",
    np.absolute: "abs({0})",
    np.conjugate: "conj({0})",
}
_SAME_NAME_UFUNCS = (
    "isinf isnan isfinite signbit sin cos tan arcsin arccos arctan arctan2 hypot nextafter "
    "copysign maximum minimum sinh cosh tanh arcsinh arccosh arctanh log log10 log1p log2 exp "
    "expm1 sqrt trunc ceil floor fmod sign logaddexp logaddexp2 exp2 cbrt"
).split()
for _name in _SAME_NAME_UFUNCS:
    _UFUNC_TEMPLATES[getattr(np, _name)] = (
        f"{_name}({{0}})" if getattr(np, _name).nin == 1 else f"{_name}({{0}}, {{1}})"
    )
for _name in ("erf", "erfc", "expit", "logaddexp", *_SAME_NAME_UFUNCS):
    _ufunc = getattr(_core, _name, None)
    if isinstance(_ufunc, np.ufunc) and _ufunc.nin in (1, 2):
        _UFUNC_TEMPLATES[_ufunc] = (
            f"{_name}({{0}})" if _ufunc.nin == 1 else f"{_name}({{0}}, {{1}})"
        )
_scipy_added = False


def _add_scipy_ufuncs() -> None:
    """SciPy's erf/erfc/expit, once SciPy is imported (numfuse never imports it)."""
    global _scipy_added
    special = sys.modules.get("scipy.special")
    if special is None:
        return
    for name in ("erf", "erfc", "expit"):
        _UFUNC_TEMPLATES[getattr(special, name)] = f"{name}({{0}})"
    _scipy_added = True


def ufunc_template(ufunc) -> str | None:
    template = _UFUNC_TEMPLATES.get(ufunc)
    if template is None and not _scipy_added:
        _add_scipy_ufuncs()
        template = _UFUNC_TEMPLATES.get(ufunc)
    return template


# Reductions: NumPy function -> engine name. Methods map through REDUCTION_METHODS.
REDUCTIONS = {
    np.sum: "sum",
    np.prod: "prod",
    np.min: "min",
    np.max: "max",
    np.amin: "min",
    np.amax: "max",
    np.mean: "mean",
}
REDUCTION_METHODS = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max, "mean": np.mean}
NUMFUSE_REDUCTIONS = {
    "logsumexp": _reduce.logsumexp,
    "softmax": _reduce.softmax,
    "log_softmax": _reduce.log_softmax,
}


def normalize_axes(axis, ndim: int) -> tuple:
    """NumPy's axis argument as a sorted tuple of non-negative axes (NumPy's errors)."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(np.lib.array_utils.normalize_axis_tuple(axis, ndim)))


def reduced_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if d in axes else s for d, s in enumerate(shape))
    return tuple(s for d, s in enumerate(shape) if d not in axes)


def reduction_template(name: str, axes: tuple, keepdims: bool, ndim: int) -> str:
    """``sum({0}, axis=(0, 1), keepdims=True)``; softmax and log_softmax as formulas.

    A reduction over every axis is written without ``axis=`` or ``keepdims=`` (the engine's
    fast path for calls whose reductions take everything): its 0-d result broadcasts as the
    all-ones shape does, so only the final result may lack leading ones, which the
    segment restores with a reshape (see _program.Segment).
    """
    if len(axes) == ndim:
        if name == "softmax":
            return "(exp(({0} - max({0}))) / sum(exp(({0} - max({0})))))"
        if name == "log_softmax":
            shifted = "({0} - where(isfinite(max({0})), max({0}), 0))"
            return f"({shifted} - log(sum(exp({shifted}))))"
        return f"{name}({{0}})"
    ax = f"axis={axes!r}" if axes else "axis=()"
    kd = f"keepdims={keepdims}"
    if name == "softmax":
        shifted = f"({{0}} - max({{0}}, {ax}, keepdims=True))"
        return f"(exp({shifted}) / sum(exp({shifted}), {ax}, keepdims=True))"
    if name == "log_softmax":
        # numfuse.log_softmax's shift: 0 for a group whose max is not finite, so +inf
        # entries give NaN and the others -inf, as SciPy.
        top = f"max({{0}}, {ax}, keepdims=True)"
        shifted = f"({{0}} - where(isfinite({top}), {top}, 0))"
        return f"({shifted} - log(sum(exp({shifted}), {ax}, keepdims=True)))"
    return f"{name}({{0}}, {ax}, {kd})"


# ------------------------------------------------------------------ NumPy's answer


def standin(dtype, shape: tuple) -> np.ndarray:
    """A one-element-per-axis array of `dtype` with `shape`'s ndim (zero-size axes kept)."""
    return np.ones(tuple(1 if s else 0 for s in shape), dtype)


def broadcast_shape(shapes) -> tuple | None:
    """NumPy's broadcast of `shapes` (tuples of ints), or None where NumPy raises."""
    if len(shapes) == 1:
        return shapes[0]
    if len(shapes) == 2 and shapes[0] == shapes[1]:  # the common case: one shape
        return shapes[0]
    ndim = max(map(len, shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        offset = ndim - len(shape)
        for k, extent in enumerate(shape):
            current = out[offset + k]
            if extent != current:
                if current == 1:
                    out[offset + k] = extent
                elif extent != 1:
                    return None
    return tuple(out)


# The answers for one operation, per (template, ufunc or NumPy function, operand key):
# NumPy's result dtype, whether NumPy returns a scalar, and whether the operation is fused
# (the engine's verdict and dtypes). What a trace asks once per operation, for every
# operation, when a function is first called: one key and one lookup. Only answers, never
# errors, are kept (an error is raised again each time).
_answers: dict = {}
_MAX_ANSWERS = 4096
# The functions whose results depend on nothing but their operands (no closure state).
_PURE_CALLS = (np.where, np.clip, np.real, np.imag)


def answer(template, call, operands, key_call=None):
    """(dtype, scalar, fused) of `call(*operands)`: NumPy's result dtype, whether NumPy
    returns a NumPy scalar, and whether the engine computes `template` on these operand
    types as NumPy does (engine dtypes throughout and engine_agrees). `operands` as
    numpy_result's (broadcasting is the caller's check). Cached per template, call (or
    `key_call`, a hashable that stands for it) and operand key; NumPy's exceptions
    propagate and are not kept.

    The key (built here, not in a function of its own: this runs for every traced
    operation): arrays by dtype and ndim, and which axes are empty when one is (what the
    stand-ins have); Python numbers by their type, and an int by its value too (NumPy's
    OverflowError and negative-power errors depend on it); NumPy constants by type, dtype
    and value. No key, and no caching, where the answer may depend on more than it holds
    (a call other than a ufunc, a reduction's key or a pure function)."""
    if key_call is None:
        key_call = call
    key = None
    if isinstance(key_call, (np.ufunc, tuple)) or key_call in _PURE_CALLS:
        parts = [template, key_call]
        for op in operands:
            kind = type(op)
            if kind is tuple:
                dtype, shape = op
                parts.append(
                    (dtype, len(shape)) if 0 not in shape else (dtype, tuple(s == 0 for s in shape))
                )
            elif kind is int:
                parts.append((int, op))
            elif kind in PYTHON_SCALARS:
                parts.append(kind)
            else:
                parts.append((kind, np.asarray(op).dtype, repr(op)))
        key = tuple(parts)
        found = _answers.get(key)
        if found is not None:
            return found
    found = _new_answer(template, call, operands)
    if key is not None:
        if len(_answers) >= _MAX_ANSWERS:  # Python ints are keyed by value: bounded
            _answers.clear()
        _answers[key] = found  # a dict store: atomic, the same answer from any thread
    return found


def _ignoring_context() -> contextvars.Context:
    """A copy of the calling thread's context in which NumPy ignores floating-point errors
    (np.errstate keeps its state in a context variable)."""
    with np.errstate(all="ignore"):
        return contextvars.copy_context()


# Per thread, the context _new_answer runs its work in: entering a prepared context is one
# C call, where np.errstate (as a decorator too) builds NumPy's error-state object with six
# keyword arguments, sets and resets the context variable and adds a Python frame, per new
# operation type. One per thread: a context cannot be entered by two threads at once. It
# is a snapshot of the thread's context variables at its first miss: of them, only NumPy's
# error state is read by what runs in it (NumPy and the engine on the samples).
_ignoring = threading.local()


def _new_answer(template, call, operands):
    """answer()'s work on a miss (_answer_of), with NumPy's floating-point errors ignored."""
    try:
        context = _ignoring.context
    except AttributeError:
        context = _ignoring.context = _ignoring_context()
    try:
        return context.run(_answer_of, template, call, operands)
    except RuntimeError:
        # the context entered already on this thread (a NumPy call of the samples that
        # reached answer() again): the same work under np.errstate (an error of the work
        # itself is raised again there)
        with np.errstate(all="ignore"):
            return _answer_of(template, call, operands)


def _answer_of(template, call, operands):
    """_new_answer's work, under its error state.

    One pass over the operands gives what _operand_facts gives and the verdict's samples
    (an operand of an engine dtype or a Python number has one; the samples are used only
    when every operand has one); the ufunc's sample call and the verdict's cache lookup
    and store are written out here, not called: a process's first function runs this
    once per new operation type, mostly before the interpreter has specialized it, so
    every call and bytecode saved counts there."""
    engine_types = sampled = inexact = True
    python_int = False
    types = []
    samples = []
    index = 0
    for op in operands:
        kind = type(op)
        if kind is tuple:
            dtype, shape = op
            ndim = len(shape)
            types.append((dtype, ndim))
            if 0 in shape:
                sampled = False
            if dtype in ENGINE_DTYPES:
                if dtype not in _INEXACT_DTYPES:
                    inexact = False
                key = (index, dtype, ndim)
                array = _samples.get(key)
                if array is None:  # one read-only array per position, dtype and ndim
                    array = _samples[key] = _make_sample(index, dtype, ndim)
                samples.append(array)
            else:
                engine_types = False
        elif kind in PYTHON_SCALARS:
            if kind is int:
                if -_EXACT_INT <= op <= _EXACT_INT:
                    python_int = True
                else:
                    sampled = False
            types.append(kind)
            samples.append(_PYTHON_SAMPLES[kind])
        else:  # a NumPy constant: itself as its sample, its value in its type
            dtype = np.asarray(op).dtype
            if dtype not in ENGINE_DTYPES:
                engine_types = False
            if dtype not in _INEXACT_DTYPES:
                inexact = False
            types.append((kind, dtype, repr(op)))
            samples.append(op)
        index += 1
    if python_int and not inexact:
        sampled = False
    reference = None
    if engine_types and sampled:
        # The verdict's own sample call answers NumPy's dtype and scalar-ness too: NumPy 2
        # picks both from the operand dtypes and ndims alone (Python floats, complexes and
        # bools weakly, whatever their value), never from values or extents; the samples
        # have the operands' dtypes and ndims and no empty axis. A Python int is sampled
        # only beside floating-point and complex operands and within +-2**53, where NumPy
        # converts it exactly whatever its value; elsewhere (an integer or bool operand:
        # NumPy's OverflowError and negative-power errors depend on the value) Python ints
        # are not sampled here, nor empty axes (a reduction of one raises): those take
        # numpy_result's stand-ins of the real values.
        if type(call) is np.ufunc:  # no catch_warnings: see _reference
            try:
                reference = call(*samples)
            except Exception:  # noqa: BLE001 - NumPy refusing a sample: no verdict
                reference = _RAISED
        else:
            reference = _reference(call, samples)
    kind = type(reference)
    if kind is np.ndarray:
        dtype, scalar = reference.dtype, False
    elif reference is None or reference is _RAISED:
        # NumPy's answer on stand-ins (its exception, if any, is the user's)
        dtype, scalar = _numpy_result(call, operands)
    else:
        dtype, scalar = np.asarray(reference).dtype, isinstance(reference, np.generic)
    if not engine_types or dtype not in ENGINE_DTYPES:
        return dtype, scalar, False
    # the engine's verdict, cached per template and operand types (_engine_verdict's)
    key = (template, tuple(types))
    verdict = _verdicts.get(key)
    if verdict is None:
        if reference is None:
            reference = _reference(call, samples)
        verdict = False
        if reference is not _RAISED:
            try:  # _engine_same's call, written out (see above)
                verdict = _core._jit_engine_agrees(template, samples, reference)
            except Exception:  # noqa: BLE001 - samples the engine refuses: NumPy runs it
                verdict = False
        _verdicts[key] = verdict  # a dict store: atomic, as answer()'s
    return dtype, scalar, verdict


def _operand_facts(operands):
    """(engine_types, sampled, types) of answer()'s operands, in one pass: whether every
    operand is of an engine dtype or a Python number; whether the verdict's samples
    answer NumPy's dtype too (no Python int, no empty axis: stricter than _answer_of,
    which samples small ints beside floating-point operands too); and the operand types
    that key the verdict: (dtype, ndim) of an array, a Python number's type, a NumPy
    constant's type, dtype and value."""
    engine_types = sampled = True
    types = []
    for op in operands:
        kind = type(op)
        if kind is tuple:
            dtype, shape = op
            if dtype not in ENGINE_DTYPES:
                engine_types = False
            if 0 in shape:
                sampled = False
            types.append((dtype, len(shape)))
        elif kind in PYTHON_SCALARS:
            if kind is int:
                sampled = False
            types.append(kind)
        else:
            dtype = np.asarray(op).dtype
            if dtype not in ENGINE_DTYPES:
                engine_types = False
            types.append((kind, dtype, repr(op)))
    return engine_types, sampled, tuple(types)


_RAISED = object()  # the reference call raised on the samples
# The operand dtypes beside which a Python int's value does not change NumPy's answer (the
# result dtype, scalar-ness, an error or not), for ints within +-_EXACT_INT (converted to
# the floating-point type exactly in float64, within range in float32): _answer_of.
_INEXACT_DTYPES = frozenset(np.dtype(t) for t in ("f4", "f8", "c8", "c16"))
_EXACT_INT = 2**53


def _reference(call, samples):
    """NumPy's `call` on the verdict's samples (under the caller's errstate), or _RAISED."""
    try:
        if type(call) is np.ufunc:
            # A ufunc on engine dtypes warns only through the floating-point flags that
            # errstate silences (every template's ufunc on every dtype pair and Python
            # number kind: tests/test_jit_first_call.py); a warning NumPy might add for a
            # dtype is one the plain function gives too. No catch_warnings, which costs
            # more than the call.
            return call(*samples)
        # other calls (astype, clip, reductions' wrappers) may warn on sample values,
        # e.g. complex to float casts: silenced, once per process per key
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call(*samples)
    except Exception:  # noqa: BLE001 - NumPy refusing a sample: the engine is not asked
        return _RAISED


def numpy_result(call, operands):
    """NumPy's result dtype, and whether NumPy returns a scalar, for `call(*operands)`.

    `operands` are (dtype, shape) pairs for arrays and plain values for Python scalars.
    NumPy's own exception propagates (an OverflowError for ``int32_array + 2**40``, an
    AxisError, a broadcasting ValueError with NumPy's message).
    """
    with np.errstate(all="ignore"):
        return _numpy_result(call, operands)


def _numpy_result(call, operands):
    shapes = [op[1] for op in operands if type(op) is tuple]
    if broadcast_shape(shapes) is None:
        # NumPy's message: run the call on zero-stride stand-ins of the real shapes
        # (it raises before computing anything).
        full = [
            np.broadcast_to(np.ones((), op[0]), op[1]) if type(op) is tuple else op
            for op in operands
        ]
        call(*full)
        np.broadcast_shapes(*shapes)
        raise AssertionError("unreachable: NumPy broadcasts shapes numfuse does not")
    args = [_standin(*op) if type(op) is tuple else op for op in operands]
    result = call(*args)
    return np.asarray(result).dtype, isinstance(result, np.generic)


_standins: dict = {}


def _standin(dtype, shape: tuple) -> np.ndarray:
    """standin(), one read-only array per dtype and axis pattern for the process."""
    key = (dtype, tuple(1 if s else 0 for s in shape))
    array = _standins.get(key)
    if array is None:
        array = standin(dtype, shape)
        array.flags.writeable = False
        _standins[key] = array  # bounded: a few dtypes, ndim <= 64, empty axes rare
    return array


# ------------------------------------------------------------------ the engine's answer

# Sample operands for the verdict: signed zeros, infinities, NaN and negative numbers for
# floats; zero and negative divisors, shifts and exponents for integers (NumPy raising on
# a sample means the operation is left to NumPy).
_SAMPLES = (
    np.array([-2.5, -1.0, -0.0, 0.5, 3.0, 7.25, np.nan, np.inf, -np.inf]),
    np.array([1.5, -2.0, 3.0, 0.0, -0.0, 1.25, 1.0, np.nan, 2.0]),
    np.array([0.75, -0.5, 2.0, 1.0, -3.0, 4.5, -np.inf, 0.0, np.nan]),
)
_INT_SAMPLES = (
    np.array([-7, -1, 0, 1, 3, 100, 2, -2, 5]),
    np.array([2, -3, 1, 0, 5, -1, 1, 3, 2]),
    np.array([1, 0, -4, 2, 2, 7, -1, 0, 3]),
)
_PYTHON_SAMPLES = {bool: True, int: 2, float: 1.5, complex: 1.5 - 0.5j}
_verdicts: dict = {}


_samples: dict = {}


def _sample(index: int, operand):
    if type(operand) is not tuple:  # a Python number's type, or a NumPy constant itself
        return _PYTHON_SAMPLES.get(type(operand), operand)
    dtype, shape = operand
    key = (index, dtype, len(shape))
    array = _samples.get(key)
    if array is None:  # one read-only array per position, dtype and ndim for the process
        array = _samples[key] = _make_sample(index, dtype, len(shape))
    return array


def _make_sample(index: int, dtype, ndim: int) -> np.ndarray:
    samples = _SAMPLES if dtype.kind in "fc" else _INT_SAMPLES
    base = samples[index % len(samples)]
    if dtype.kind == "c":
        base = base + 0.5j * samples[(index + 1) % len(samples)]
    if not ndim:
        array = np.asarray(base[1]).astype(dtype)
    else:
        array = base.reshape((base.size,) + (1,) * (ndim - 1)).astype(dtype)
    array.flags.writeable = False
    return array


def engine_agrees(template: str, call, operands) -> bool:
    """Whether the engine computes `template` on these operand types as NumPy's `call`
    does (same dtype, shape and values on sample data); cached per template and types."""
    key = (template, _operand_facts(operands)[2])
    with np.errstate(all="ignore"):
        return _engine_verdict(key, template, call, operands, None, None)


def _engine_verdict(key, template, call, operands, samples, reference) -> bool:
    """engine_agrees() under the caller's errstate: the verdict cached under `key`
    (template and _operand_facts' types); `samples` and `reference` (NumPy's call on
    them, or _RAISED) when the caller has them already, else None."""
    verdict = _verdicts.get(key)
    if verdict is None:
        if samples is None:
            samples = [_sample(i, op) for i, op in enumerate(operands)]
            reference = _reference(call, samples)
        verdict = reference is not _RAISED and _engine_same(template, samples, reference)
        _verdicts[key] = verdict  # a dict store: atomic, as answer()'s
    return verdict


def _engine_same(template, samples, reference) -> bool:
    """The engine's formula `template` on `samples` against NumPy's `reference`: the
    template's operands named v0, v1, ..., compiled (without the plan cache), run and
    compared in one C++ call (src/python/jit_verdict.cpp: the same dtype and shape, the
    same bits or for floating-point types every element within rtol 1e-4 / atol 1e-6, NaN
    where NumPy has NaN, a zero's sign as NumPy's)."""
    try:
        return _core._jit_engine_agrees(template, samples, reference)
    except Exception:  # noqa: BLE001 - samples the engine refuses: run it in NumPy
        return False


def astype_template(source: np.dtype, target: np.dtype) -> str | None:
    """An engine spelling of ``x.astype(target)`` (None: NumPy does it)."""
    if target == source:
        return "copy({0})"
    if target == np.bool_:
        return "({0} != 0)"
    return None  # widening casts go through a strong one (see _trace.Tracer.astype)


def is_engine_dtype(dtype) -> bool:
    return dtype in ENGINE_DTYPES


# operator name -> ufunc, for the Tracer's dunder methods
BINARY_OPERATORS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.true_divide,
    "floordiv": np.floor_divide,
    "mod": np.remainder,
    "pow": np.power,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "lshift": np.left_shift,
    "rshift": np.right_shift,
}
COMPARISONS = {
    "lt": np.less,
    "le": np.less_equal,
    "eq": np.equal,
    "ne": np.not_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}
UNARY_OPERATORS = {"neg": np.negative, "pos": np.positive, "invert": np.invert, "abs": np.absolute}
INPLACE = {f"i{name}": getattr(operator, f"i{name}") for name in BINARY_OPERATORS}
