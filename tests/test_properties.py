"""Property tests (hypothesis): numfuse agrees with NumPy / SciPy on random inputs.

Random shapes (0-d, empty, broadcasting), views with negative and non-unit strides,
transposes, unaligned buffers (a byte offset into a bytearray), float32 / float64,
special values, and out= arrays that alias or overlap the input; Python ints of every
magnitude against every integer dtype (NumPy 2's rule, tests/python_int_table.py).

Budget: about 30 s in all with the "numfuse" profile below; NUMFUSE_HYPOTHESIS_EXAMPLES
scales the number of examples for longer runs (e.g. NUMFUSE_HYPOTHESIS_EXAMPLES=5000).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.special
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numfuse as nf
from conftest import ulp_distance
from function_table import FUNCTIONS, UFUNCS
from hypothesis_chooser import HypothesisChooser
from python_int_table import DTYPES as PYINT_DTYPES
from python_int_table import OPERATIONS as PYINT_OPERATIONS
from python_int_table import boundaries, expression, literal, numpy_outcome, same_result

sys.path.insert(0, str(Path(__file__).parent / "fuzz"))
import expressions  # noqa: E402  (tests/fuzz/expressions.py)

EXAMPLES = int(os.environ.get("NUMFUSE_HYPOTHESIS_EXAMPLES", "300"))
settings.register_profile(
    "numfuse",
    max_examples=EXAMPLES,
    deadline=None,
    database=None,  # no .hypothesis folder in the checkout
    # CI runs the same examples every time (a red CI must be reproducible);
    # NUMFUSE_HYPOTHESIS_RANDOM=1 explores new ones.
    derandomize=os.environ.get("NUMFUSE_HYPOTHESIS_RANDOM") != "1",
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile("numfuse")

FLOAT_DTYPES = [np.dtype(np.float32), np.dtype(np.float64)]


def float_elements(dtype, lo=None, hi=None, specials=True):
    width = 32 if dtype == np.float32 else 64
    if lo is None:
        return st.floats(
            width=width, allow_nan=specials, allow_infinity=specials, allow_subnormal=True
        )
    finite = st.floats(lo, hi, width=width, allow_subnormal=True)
    if not specials:
        return finite
    return st.one_of(finite, st.sampled_from([np.inf, -np.inf, np.nan, 0.0, -0.0]))


@st.composite
def strided_arrays(draw, dtype, shape=None, elements=None, max_dims=3, max_side=6):
    """An array of `dtype` as a view: any shape, steps in {1, 2, -1, -2}, maybe
    transposed, maybe in an unaligned buffer."""
    if shape is None:
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=max_side))
    steps = [draw(st.sampled_from([1, 2, -1, -2])) for _ in shape]
    transpose = len(shape) >= 2 and draw(st.booleans())
    if transpose:
        shape = tuple(reversed(shape))
    base_shape = tuple(n * abs(s) for n, s in zip(shape, steps))
    base = draw(
        hnp.arrays(
            dtype, base_shape, elements=float_elements(dtype) if elements is None else elements
        )
    )
    if draw(st.booleans()):  # unaligned: one byte into a buffer
        buffer = bytearray(base.nbytes + 1)
        moved = np.frombuffer(buffer, dtype=dtype, count=base.size, offset=1).reshape(base_shape)
        moved[...] = base
        base = moved
    view = base[tuple(slice(None, None, s) for s in steps) + (Ellipsis,)]  # 0-d stays an array
    return view.T if transpose else view


# ---------------------------------------------------------------- ufuncs


@settings(PROFILE)
@given(data=st.data(), dtype=st.sampled_from(FLOAT_DTYPES), name=st.sampled_from(UFUNCS))
def test_ufuncs_agree_with_numpy_and_scipy(data, dtype, name):
    x = data.draw(strided_arrays(dtype))
    reference = FUNCTIONS[name].reference
    ours = getattr(nf, name)
    with np.errstate(all="ignore"):
        expected = reference(x)
        got = ours(x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    # Both are within ~1 ULP of the exact value; specials (NaN, inf, 0) exactly equal.
    assert ulp_distance(got, expected).max(initial=0) <= 2
    special = ~np.isfinite(expected) | (expected == 0)
    assert np.array_equal(got[special], expected[special], equal_nan=True)


@settings(PROFILE)
@given(data=st.data(), dtype=st.sampled_from(FLOAT_DTYPES), name=st.sampled_from(["exp", "log"]))
def test_ufunc_out_aliasing_and_overlap(data, dtype, name):
    x = data.draw(strided_arrays(dtype, max_dims=2))
    ours, theirs = getattr(nf, name), getattr(np, name)
    with np.errstate(all="ignore"):
        expected = ours(x.copy())
        inplace = x.copy()
        ours(inplace, out=inplace)
        assert np.array_equal(inplace, expected, equal_nan=True)
        if x.ndim == 1 and x.size > 1:
            # out is the input reversed: NumPy's overlap handling must make this exact.
            buffer = x.copy()
            ours(buffer, out=buffer[::-1])
            assert np.array_equal(buffer, expected[::-1], equal_nan=True)
            check = x.copy()
            theirs(check, out=check[::-1])
            assert ulp_distance(buffer, check).max(initial=0) <= 2


@settings(PROFILE)
@given(
    data=st.data(),
    dtype=st.sampled_from(["float16", "int8", "int16", "int32", "int64", "uint8", "bool"]),
)
def test_ufunc_result_types_follow_numpy(data, dtype):
    x = data.draw(hnp.arrays(np.dtype(dtype), hnp.array_shapes(min_dims=0, max_dims=2, max_side=5)))
    with np.errstate(all="ignore"):
        for name in ("exp", "log"):
            got, expected = getattr(nf, name)(x), getattr(np, name)(x)
            assert got.dtype == expected.dtype
            assert ulp_distance(got, expected).max(initial=0) <= 2
        if dtype != "float16":
            assert nf.erf(x).dtype == scipy.special.erf(x).dtype


# ---------------------------------------------------------------- reductions


@st.composite
def axes_for(draw, ndim):
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none" or ndim == 0:
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    picked = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    return tuple(a - ndim if draw(st.booleans()) else a for a in picked)


def scipy_or_skip(function, *args, **kwargs):
    try:
        with np.errstate(all="ignore"):
            return function(*args, **kwargs)
    except (IndexError, ValueError):
        assume(False)  # documented difference (e.g. SciPy's IndexError on empty inputs)


@settings(PROFILE)
@given(data=st.data(), dtype=st.sampled_from(FLOAT_DTYPES))
def test_logsumexp_agrees_with_scipy(data, dtype):
    a = data.draw(strided_arrays(dtype, elements=float_elements(dtype, -100.0, 100.0)))
    axis = data.draw(axes_for(a.ndim))
    keepdims = data.draw(st.booleans())
    return_sign = data.draw(st.booleans())
    b = None
    if data.draw(st.booleans()):
        # Non-negative weights (zeros mask entries) of a's shape or broadcastable to it.
        b_shape = tuple(n if data.draw(st.booleans()) else 1 for n in a.shape)
        b_shape = b_shape[data.draw(st.integers(0, len(b_shape))) :]
        b = data.draw(
            strided_arrays(
                dtype, shape=b_shape, elements=st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.25])
            )
        )
    expected = scipy_or_skip(
        scipy.special.logsumexp, a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign
    )
    got = nf.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)
    if return_sign:
        (got, got_sign), (expected, expected_sign) = got, expected
        np.testing.assert_array_equal(got_sign, expected_sign)
    assert np.shape(got) == np.shape(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    eps = float(np.finfo(dtype).eps)
    scale = 1.0 + float(np.max(np.abs(a[np.isfinite(a)]), initial=0.0))
    np.testing.assert_allclose(got, expected, rtol=16 * eps, atol=16 * eps * scale)


@settings(PROFILE)
@given(data=st.data(), dtype=st.sampled_from(FLOAT_DTYPES), log=st.booleans())
def test_softmax_agrees_with_scipy(data, dtype, log):
    x = data.draw(strided_arrays(dtype, elements=float_elements(dtype, -80.0, 80.0)))
    axis = data.draw(axes_for(x.ndim))
    function = scipy.special.log_softmax if log else scipy.special.softmax
    expected = scipy_or_skip(function, x, axis=axis)
    got = (nf.log_softmax if log else nf.softmax)(x, axis=axis)
    assert np.shape(got) == np.shape(expected)
    eps = float(np.finfo(dtype).eps)
    scale = 1.0 + float(np.max(np.abs(x[np.isfinite(x)]), initial=0.0)) if log else 1.0
    np.testing.assert_allclose(got, expected, rtol=16 * eps, atol=16 * eps * scale)
    if x.size and data.draw(st.booleans()):
        # out= aliasing the input exactly (allowed) gives the same values.
        # (Compared with the same layout: lane order, hence rounding, follows the layout.)
        inplace = x.copy()
        same_layout = (nf.log_softmax if log else nf.softmax)(inplace.copy(), axis=axis)
        (nf.log_softmax if log else nf.softmax)(inplace, axis=axis, out=inplace)
        np.testing.assert_array_equal(inplace, same_layout)


# ---------------------------------------------------------------- evaluate


def used_names(tree, found=None):
    found = set() if found is None else found
    if tree[0] == "var":
        found.add(tree[1])
    for child in tree[1:]:
        if isinstance(child, tuple):
            used_names(child, found)
    return found


def value_dtype(tree, values):
    """NumPy's (NEP 50) result type of the tree as (dtype, weak): Python-float constants
    and Python arithmetic on them are weak; a NumPy function of a constant (np.exp(1.0),
    np.where(...)) is a strong float64; where() conditions do not count."""
    kind = tree[0]
    if kind == "var":
        return values[tree[1]].dtype, False
    if kind == "const":
        return np.dtype(np.float64), True
    if kind == "un":
        dtype, weak = value_dtype(tree[2], values)
        return dtype, weak and tree[1] in ("neg", "square")
    parts = [value_dtype(t, values) for t in ([tree[2], tree[3]] if kind == "bin" else tree[3:])]
    strong = [d for d, weak in parts if not weak]
    if not strong:
        return np.dtype(np.float64), kind == "bin"
    return np.result_type(*strong), False


@settings(PROFILE)
@given(data=st.data())
def test_evaluate_agrees_with_numpy(data):
    base = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))
    values = {}
    for name in expressions.VARIABLES:
        shape = tuple(n if data.draw(st.booleans()) else 1 for n in base)
        shape = shape[data.draw(st.integers(0, len(shape))) :]  # broadcasting drops dims
        dtype = data.draw(st.sampled_from(FLOAT_DTYPES))
        values[name] = data.draw(
            strided_arrays(dtype, shape=shape, elements=st.floats(-3, 3, width=dtype.itemsize * 8))
        )
    tree = expressions.random_tree(HypothesisChooser(data), data.draw(st.integers(0, 3)))
    assume(used_names(tree))
    text = expressions.text_of(tree)
    names = used_names(tree)
    shape = np.broadcast_shapes(*(values[n].shape for n in names))
    dtype, _ = value_dtype(tree, values)
    with np.errstate(all="ignore"):
        got = nf.evaluate(text, values)
    assert got.shape == shape and got.dtype == dtype, text
    work = expressions.working_dtype(values, names)
    ref = expressions.reference(tree, values, shape, lambda m: expressions.tolerance(work, m))
    problem = expressions.compare(got, ref, work)
    assert problem is None, f"{text}: {problem}"
    # The same through a compiled object, and into an out= that aliases an input.
    compiled = nf.compile(text)
    args = [values[n] for n in compiled.input_names]
    assert np.array_equal(compiled(*args), got, equal_nan=True), text
    for name in sorted(names):
        v = values[name]
        if v.shape == shape and v.dtype == dtype and v.size:
            target = v.copy()
            aliased = dict(values, **{name: target})
            nf.evaluate(text, aliased, out=target)
            assert np.array_equal(target, got, equal_nan=True), f"{text} out={name}"
            if v.ndim == 1 and v.size > 1:  # overlapping other than element for element
                target = v.copy()
                nf.evaluate(text, dict(values, **{name: target}), out=target[::-1])
                assert np.array_equal(target[::-1], got, equal_nan=True), f"{text} reversed"
            break


@settings(PROFILE)
@given(data=st.data(), dtype=st.sampled_from(FLOAT_DTYPES))
def test_evaluate_reductions_agree_with_numpy(data, dtype):
    x = data.draw(strided_arrays(dtype, elements=st.floats(-3, 3, width=dtype.itemsize * 8)))
    axis = (
        None
        if x.ndim == 0 or data.draw(st.booleans())
        else data.draw(st.integers(-x.ndim, x.ndim - 1))
    )
    function = data.draw(st.sampled_from(["sum", "prod", "min", "max"]))
    inner = data.draw(st.sampled_from(["x", "exp(x)", "x * x - 1", "sin(x) + 2"]))
    text = f"{function}({inner})" if axis is None else f"{function}({inner}, axis={axis})"
    numpy_inner = {
        "x": x,
        "exp(x)": np.exp(x),
        "x * x - 1": x * x - 1,
        "sin(x) + 2": np.sin(x) + 2,
    }[inner]
    try:
        expected = getattr(np, function)(numpy_inner.astype(np.float64), axis=axis)
    except ValueError:  # min/max of an empty axis
        with pytest.raises(ValueError, match="zero-size array"):
            nf.evaluate(text, {"x": x})
        return
    got = nf.evaluate(text, {"x": x})
    assert got.shape == np.shape(expected) and got.dtype == dtype, text
    # A result beyond the dtype's range (prod of many exp(2) in float32: inf, correctly)
    # is not comparable with the float64 reference; near the edge either may round to inf.
    assume(float(np.max(np.abs(expected), initial=0.0)) < float(np.finfo(dtype).max) / 4)
    count = max(1, x.size)
    eps = float(np.finfo(dtype).eps)
    magnitude = float(np.max(np.abs(expected), initial=1.0)) + 20.0 * count
    tol = 16 * eps * magnitude
    if function == "prod":
        tol = 16 * eps * count * float(np.max(np.abs(expected), initial=1.0))
    np.testing.assert_allclose(got, expected, rtol=0, atol=tol, err_msg=text)


# ---------------------------------------------------------------- regressions found here


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_log_softmax_short_groups_with_inf_and_nan(level, dtype):
    """Found by test_softmax_agrees_with_scipy: groups of <= 16 elements holding +inf
    and NaN gave -inf at finite entries on AVX2/AVX-512 (the register-only short-group
    kernel detected NaN with `x != x`, an ordered compare in xsimd 8.1 there)."""
    x = np.full((16, 3), 0.5, dtype)
    x[8] = [0.0, np.inf, np.nan]
    x[3] = [np.inf, 1.0, 2.0]
    got = nf.log_softmax(x, axis=-1)
    assert np.isnan(got[8]).all()
    np.testing.assert_array_equal(got[3], [np.nan, -np.inf, -np.inf])
    np.testing.assert_array_equal(np.isnan(nf.softmax(x, axis=-1)[8]), [True] * 3)


# Arithmetic is exact: for every supported dtype pair, evaluate's +, -, *, comparisons,
# where, abs and negation give NumPy's dtype and NumPy's values bit for bit (NaNs as
# NaNs), and raise NumPy's exception type where NumPy raises.
EXACT_DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]
EXACT_EXPRESSIONS = [
    "x + y",
    "x - y",
    "x * y",
    "x * y + x",
    "-x",
    "abs(x) - y",
    "x < y",
    "x == y",
    "where(x != y, x, y)",
    "x * 3",
    "y - 2.5",
    "(x + 1j) * y",
]


def exact_elements(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "i":  # small enough that no sum or product overflows
        return st.integers(-1000, 1000)
    width = 32 if dtype in (np.float32, np.complex64) else 64
    real = st.floats(-1e6, 1e6, width=width) | st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan])
    if dtype.kind == "c":
        return st.builds(complex, real, real)
    return real


@settings(PROFILE)
@given(
    data=st.data(),
    dtypes=st.tuples(st.sampled_from(EXACT_DTYPES), st.sampled_from(EXACT_DTYPES)),
    text=st.sampled_from(EXACT_EXPRESSIONS),
)
def test_evaluate_arithmetic_is_numpys_for_every_dtype(data, dtypes, text):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4))
    values = {
        name: data.draw(hnp.arrays(np.dtype(dtype), shape, elements=exact_elements(dtype)))
        for name, dtype in zip("xy", dtypes)
    }
    namespace = dict(values, abs=np.abs, where=np.where)
    try:
        with np.errstate(all="ignore"):
            expected = np.asarray(eval(text, {"__builtins__": {}}, namespace))  # noqa: S307
    except TypeError:  # e.g. -x and x - y on bool
        with pytest.raises(TypeError):
            nf.evaluate(text, values)
        return
    got = nf.evaluate(text, values)
    if any(np.dtype(d).kind == "b" for d in dtypes) and expected.dtype.kind in "iu":
        # bool in integer arithmetic: numexpr's (and numfuse's) widening, not int8.
        expected = expected.astype(got.dtype) if got.dtype.kind == "i" else expected
    assert got.dtype == expected.dtype, (text, dtypes, got.dtype, expected.dtype)
    assert got.shape == expected.shape
    complex_input = any(np.dtype(d).kind == "c" for d in dtypes)
    if complex_input and got.dtype.kind in "fc" and ("*" in text or "abs" in text):
        # Complex products and moduli: NumPy's own rounding depends on its build (its
        # AVX-512 loops fuse a*d + b*c; its complex64 abs can be 1 ulp off where
        # numfuse's is correctly rounded); agree within 2 ulp of the larger part.
        eps = max(
            float(np.finfo(np.dtype(d)).eps)
            for d in (*dtypes, got.dtype)
            if np.dtype(d).kind in "fc"
        )  # complex64 inputs: float32 intermediates
        scale = np.maximum(np.abs(np.real(expected)), np.abs(np.imag(expected)))
        finite = np.isfinite(expected) & np.isfinite(got)
        with np.errstate(all="ignore"):
            close = np.abs(got - expected) <= 2 * eps * scale
        same = (
            np.array_equal(np.isnan(got), np.isnan(expected))
            and bool(np.all(close[finite]))
            and np.array_equal(
                got[~finite & ~np.isnan(expected)], expected[~finite & ~np.isnan(expected)]
            )
        )
    else:
        same = np.array_equal(got, expected, equal_nan=True)
    assert same, f"{text} {dtypes}: numfuse {got!r} numpy {expected!r} inputs {values}"


@st.composite
def overlapping_views(draw, dtype):
    """Two 1-d views of one buffer of `dtype` with the same length: offsets, steps (any
    sign) and lengths drawn so that they overlap in every way (behind, ahead, crossing,
    reversed, partly), large enough to be threaded (the buffer's values come from a
    drawn seed: far more elements than Hypothesis draws quickly)."""
    n = draw(st.sampled_from([1, 7, 1000, 70_001, 300_007]))
    steps = st.sampled_from([1, 2, 3, -1, -2])
    in_step, out_step = draw(steps), draw(steps)
    span = n * max(abs(in_step), abs(out_step)) + draw(st.integers(0, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    buffer = (rng.uniform(-5, 5, span) * 10.0 ** rng.integers(-30, 3, span)).astype(dtype)

    def view(step):
        extent = (n - 1) * abs(step) + 1
        start = draw(st.integers(0, span - extent))
        if step < 0:
            start += extent - 1
        stop = start + n * step
        return buffer[start : stop if stop >= 0 else None : step]

    return buffer, view(in_step), view(out_step)


@settings(PROFILE)
@given(
    data=st.data(),
    dtype=st.sampled_from(FLOAT_DTYPES),
    name=st.sampled_from(UFUNCS + ["logaddexp"]),
    team=st.sampled_from([1, 2, 3, 7]),
)
def test_overlapping_out_gives_the_copy_first_result(data, dtype, name, team):
    buffer, src, dst = data.draw(overlapping_views(dtype))
    ufunc = getattr(nf, name)
    args = (src,) if ufunc.nin == 1 else (src, src[::-1])
    previous = nf._core._num_threads_setting()
    nf.set_num_threads(team)
    try:
        with np.errstate(all="ignore"):
            expected = ufunc(*(a.copy() for a in args))
            ufunc(*args, out=dst)
    finally:
        nf.set_num_threads(previous)
    bits = np.uint32 if dtype == np.float32 else np.uint64
    assert np.array_equal(dst.copy().view(bits), expected.view(bits))


@st.composite
def python_ints(draw):
    """Python ints of every magnitude: small, within int64, beyond int64 and uint64, beyond
    float64, and the bounds of every integer dtype +-1."""
    return draw(
        st.one_of(
            st.integers(-300, 300),
            st.integers(-(2**64), 2**64),
            st.integers(-(2**1100), 2**1100),
            st.sampled_from(boundaries()),
            st.sampled_from(boundaries()).map(lambda k: k + 1),
        )
    )


@settings(PROFILE)
@given(
    data=st.data(),
    dtype=st.sampled_from(PYINT_DTYPES),
    template=st.sampled_from(list(PYINT_OPERATIONS)),
    k=python_ints(),
    int_first=st.booleans(),
    form=st.sampled_from(["name", "literal", "compiled"]),
)
def test_python_int_operands_follow_numpy_2(data, dtype, template, k, int_first, form):
    """A Python int of any magnitude against an array of any integer dtype (bool and the
    floats too), in any form and operand order: NumPy 2's result or its exception
    (tests/python_int_table.py)."""
    dtype = np.dtype(dtype)
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=5))
    if dtype.kind == "f":
        elements = st.floats(-1e6, 1e6, width=dtype.itemsize * 8)
    else:  # any value of the dtype, its extremes included
        elements = hnp.from_dtype(dtype)
    x = data.draw(hnp.arrays(dtype, shape, elements=elements))
    # NumPy refuses ints to negative int powers element by element (not for an empty
    # array); evaluate refuses a negative literal exponent when it compiles.
    assume(x.size or "**" not in template)
    expected = numpy_outcome(template, x, k, int_first)
    text = expression(template, literal(k) if form == "literal" else "k", int_first)
    values = {"x": x} if form == "literal" else {"x": x, "k": k}
    try:
        if form == "compiled":
            got = nf.compile(text)(**values)
        else:
            got = nf.evaluate(text, values)
    except (OverflowError, ValueError, TypeError) as error:
        # numfuse.UnsupportedOperationError (`float_array & k`) is NumPy's TypeError there.
        unsupported = isinstance(error, nf.UnsupportedOperationError)
        got = TypeError if unsupported else type(error)
        assert got is expected, f"{text} with x {x!r}: {error!r}, NumPy {expected!r}"
        return
    assert not isinstance(expected, type), f"{text} with x {x!r}: {got!r}, NumPy raises {expected}"
    assert same_result(got, expected), f"{text} with x {x!r}: {got!r}, NumPy {expected!r}"
