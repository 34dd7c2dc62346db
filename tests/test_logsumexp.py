"""numfuse.logsumexp / softmax / log_softmax against scipy.special and mpmath.

SciPy answers every semantic question (values, dtypes, shapes, special
values, errors); mpmath is the accuracy reference (<= 4 eps). SciPy warns
for some special inputs where numfuse deliberately does not, so SciPy's
reference answers are computed under np.errstate(all="ignore").
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import scipy.special as sp

import numfuse as nf
from conftest import mp_logsumexp, mp_softmax_parts, relative_error_in_eps

FUNCTIONS = ["logsumexp", "softmax", "log_softmax"]


def scipy_quiet(name, *args, **kwargs):
    with np.errstate(all="ignore"):
        return getattr(sp, name)(*args, **kwargs)


def assert_same(actual, expected, rtol=None):
    """Same type (scalar vs array), dtype, shape; values close, NaN/inf/sign exact."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for x, y in zip(actual, expected):
            assert_same(x, y, rtol)
        return
    assert type(actual) is type(expected), (type(actual), type(expected))
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if rtol is None:
        rtol = 16 * np.finfo(expected.dtype).eps if expected.dtype.kind in "fc" else 0
    # SciPy's own rounding (e.g. x - max - log(s) near 0) is no reference for
    # single small entries: compare normwise; mpmath checks each entry below.
    finite = np.abs(expected[np.isfinite(expected)])
    atol = rtol * max(1.0, float(finite.max())) if finite.size else 0.0
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    # NaN, infinities and their signs must match exactly.
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    np.testing.assert_array_equal(
        np.isinf(actual) & (actual > 0), np.isinf(expected) & (expected > 0)
    )


RNG = np.random.default_rng(20240611)


# ------------------------------------------------------------------ values and layouts

LAYOUTS = [
    ((1000,), None),
    ((1000,), 0),
    ((37, 129), None),
    ((37, 129), 0),
    ((37, 129), 1),
    ((37, 129), -1),
    ((200, 300), 0),  # lanes across columns
    ((300, 5), 1),  # short reduced axis: vectorised across the outer dimension
    ((20, 30, 5), -1),
    ((20, 30, 5), (0, 2)),
    ((6, 7, 8, 9), (1, 3)),
    ((6, 7, 8, 9), (0, 1, 2, 3)),
    ((3, 4), ()),
    ((1,), None),
    ((5, 1, 3), 1),
]


@pytest.mark.parametrize("shape,axis", LAYOUTS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_scipy_layouts(level, shape, axis, dtype):
    x = (RNG.standard_normal(shape) * 3).astype(dtype)
    for name in FUNCTIONS:
        assert_same(getattr(nf, name)(x, axis=axis), scipy_quiet(name, x, axis=axis))
    assert_same(
        nf.logsumexp(x, axis=axis, keepdims=True), sp.logsumexp(x, axis=axis, keepdims=True)
    )


@pytest.mark.parametrize(
    "view",
    [
        lambda x: x[::2],
        lambda x: x[:, ::3],
        lambda x: x.T,
        lambda x: x[::-1, 1:],
        lambda x: np.asfortranarray(x),
        lambda x: x[:, :, None].repeat(3, axis=2)[:, :, 1],
    ],
)
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_strided_views(level, view, axis):
    x = view(RNG.standard_normal((64, 90)) * 4)
    for name in FUNCTIONS:
        assert_same(getattr(nf, name)(x, axis=axis), scipy_quiet(name, x, axis=axis))


def test_unaligned_input():
    buffer = np.zeros(8 * 300 + 1, np.uint8)
    x = buffer[1:].view(np.float64).reshape(20, 15)
    x[...] = RNG.standard_normal((20, 15))
    for axis in (None, 0, 1):
        for name in FUNCTIONS:
            assert_same(getattr(nf, name)(x, axis=axis), scipy_quiet(name, x, axis=axis))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_short_axis_softmax_any_lane_layout(level, dtype):
    # softmax over a short axis runs one group per lane. Full batches of groups a whole
    # number of elements apart load with the level's gather where it has one (AVX2,
    # AVX-512); partial batches and strides that are not a whole number of elements go
    # through a stack buffer. Every layout of the same groups gives the same bits.
    groups, item = 203, np.dtype(dtype).itemsize  # 203: a partial last batch at every width
    data = (RNG.standard_normal((groups, 5)) * 4).astype(dtype)
    data[7, 2], data[40] = np.nan, -np.inf  # special groups inside full batches
    buffer = np.zeros(groups * (5 * item + 3) + 8, np.uint8)
    odd = np.ndarray((groups, 5), dtype, buffer, offset=1, strides=(5 * item + 3, item))
    odd[...] = data
    wide = np.zeros((groups, 3, 5), dtype)
    wide[:, 1] = data
    far = np.zeros((groups * 997, 5), dtype)[::997]
    far[...] = data
    layouts = {
        "stride not a whole number of elements": odd,
        "reversed groups": data[::-1].copy()[::-1],
        "groups with gaps": wide[:, 1],
        "groups far apart": far,
        "reversed steps": data[:, ::-1].copy()[:, ::-1],
    }
    for name in ("softmax", "log_softmax"):
        expected = getattr(nf, name)(data, axis=1)
        assert_same(expected, scipy_quiet(name, data, axis=1))
        for layout, x in layouts.items():
            np.testing.assert_array_equal(x, data)
            got = getattr(nf, name)(x, axis=1)
            assert got.tobytes() == expected.tobytes(), (name, layout)


def test_long_reductions_cross_chunks(level):
    # More than one fixed chunk per output (kReduceChunk = 65536 elements).
    x = RNG.standard_normal(200_003) * 10
    assert_same(nf.logsumexp(x), sp.logsumexp(x))
    y = RNG.standard_normal((70_001, 3))
    for name in FUNCTIONS:
        assert_same(getattr(nf, name)(y, axis=0), scipy_quiet(name, y, axis=0))


def test_sorted_inputs_rescale_every_step(level):
    x = np.linspace(-50, 50, 10_001)
    for data in (x, x[::-1]):
        for name in FUNCTIONS:
            assert_same(getattr(nf, name)(data), scipy_quiet(name, data))


# ------------------------------------------------------------------ dtypes and promotion


@pytest.mark.parametrize(
    "a,b",
    [
        (np.arange(5), None),
        (np.arange(5, dtype=np.int8), None),
        (np.array([True, False, True]), None),
        (np.arange(5, dtype=np.float16), None),
        (np.arange(5, dtype=np.float32), None),
        (np.arange(5, dtype=np.float32), np.ones(5)),
        (np.arange(5, dtype=np.float32), np.ones(5, np.float32)),
        (np.arange(5, dtype=np.float32), 2.0),
        (np.arange(5, dtype=np.float32), 2),
        (np.arange(5, dtype=np.float32), np.float64(2)),
        (np.arange(5, dtype=np.float16), np.ones(5, np.int8)),
        ([1, 2, 3], [1, 2, 3]),
        (2.0, None),
        (np.array(2.0), 3.0),
        (np.arange(5, dtype=np.longdouble), None),
        (np.array([1 + 1j, 2 - 3j, -1 + 0.5j]), None),
        (np.array([1 + 1j, 2 - 3j], dtype=np.complex64), None),
        (np.array([1 + 1j, 2 - 3j]), np.array([1.0, -2.0])),
    ],
)
def test_logsumexp_result_types(a, b):
    assert_same(nf.logsumexp(a, b=b), sp.logsumexp(a, b=b), rtol=1e-3)
    assert_same(
        nf.logsumexp(a, b=b, return_sign=True), sp.logsumexp(a, b=b, return_sign=True), rtol=1e-3
    )


@pytest.mark.parametrize(
    "x",
    [
        np.arange(4, dtype=np.int8),
        np.arange(4, dtype=np.int16),
        np.arange(4, dtype=np.int32),
        np.arange(4),
        np.arange(4, dtype=np.float16),
        np.arange(4, dtype=np.float32),
        np.arange(4, dtype=np.longdouble),
        [1, 2, 3],
        3.0,
        np.array(3.0),
        np.array([1 + 1j, 2 - 3j, 0.5 + 2j]),
    ],
)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_result_types(x, name):
    assert_same(getattr(nf, name)(x), scipy_quiet(name, x), rtol=2e-3)


def test_softmax_integers_are_exact_where_scipy_wraps():
    x = np.array([0, 200], dtype=np.uint8)
    expected = sp.softmax(x.astype(np.float64)).astype(np.float16)
    assert_same(nf.softmax(x), expected, rtol=1e-3)


# ------------------------------------------------------------------ special values

INF = np.inf
NAN = np.nan

SPECIAL_A = [
    [INF, 1.0],
    [INF, INF],
    [INF, -INF],
    [INF, NAN],
    [1.0, NAN],
    [-INF, -INF],
    [-INF, 1.0],
    [-INF],
    [NAN],
    [1000.0, 1000.0],
    [-1000.0, -1000.5],
    [np.finfo(np.float64).max] * 3,
    [-np.finfo(np.float64).max] * 3,
    [-np.finfo(np.float64).max, -INF],
    [5e-324, 0.0, -0.0],
]


@pytest.mark.parametrize("a", SPECIAL_A)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_special_values(level, a, dtype):
    with np.errstate(all="ignore"):
        x = np.array(a, dtype=dtype)
    # Several lanes / batches: the special entries inside longer arrays too.
    for data in (x, np.concatenate([np.full(37, -3.0, dtype), x, np.full(50, -2.0, dtype)])):
        assert_same(nf.logsumexp(data), scipy_quiet("logsumexp", data))
        assert_same(
            nf.logsumexp(data, return_sign=True), scipy_quiet("logsumexp", data, return_sign=True)
        )
        for name in ("softmax", "log_softmax"):
            assert_same(getattr(nf, name)(data), scipy_quiet(name, data))
        rows = np.tile(data, (20, 1))
        for axis in (0, 1):
            for name in FUNCTIONS:
                assert_same(
                    getattr(nf, name)(rows.T, axis=axis), scipy_quiet(name, rows.T, axis=axis)
                )


WEIGHTED = [
    ([INF, 1.0], [0, 1]),
    ([NAN, 1.0], [0, 1]),
    ([INF, -INF], [0, 1]),
    ([1.0, 2.0], [0, 0]),
    ([1.0, 2.0], [1, -1]),
    ([1.0, 1.0], [1, -1]),
    ([1.0, 1.0, -700.0], [1, -1, 1]),
    ([INF, 1.0], [-1, 1]),
    ([INF, INF], [-1, 1]),
    ([-INF, -INF], [-1, -1]),
    ([1.0, 2.0], [NAN, 1]),
    ([1.0, 2.0], [INF, 1]),
    ([-INF, NAN], [1, 0]),
    ([0.0, 1.0, 2.0], [-1.0, 0.5, -0.25]),
    ([3.0, 1.0, 2.0], [2.0, 0.0, -1.0]),
]


@pytest.mark.parametrize("a,b", WEIGHTED)
def test_weights_special_values(level, a, b):
    a = np.array(a)
    b = np.array(b, dtype=np.float64)
    for return_sign in (False, True):
        assert_same(
            nf.logsumexp(a, b=b, return_sign=return_sign),
            scipy_quiet("logsumexp", a, b=b, return_sign=return_sign),
        )
    # Inside longer rows, lanes across outputs, and float32.
    pad_a = np.full(40, -5.0)
    pad_b = np.full(40, 0.5)
    long_a = np.concatenate([pad_a, a, pad_a])
    long_b = np.concatenate([pad_b, b, pad_b])
    for return_sign in (False, True):
        assert_same(
            nf.logsumexp(long_a, b=long_b, return_sign=return_sign),
            scipy_quiet("logsumexp", long_a, b=long_b, return_sign=return_sign),
        )
        rows_a = np.tile(long_a, (12, 1)).T
        rows_b = np.tile(long_b, (12, 1)).T
        assert_same(
            nf.logsumexp(rows_a, b=rows_b, axis=0, return_sign=return_sign),
            scipy_quiet("logsumexp", rows_a, b=rows_b, axis=0, return_sign=return_sign),
        )


def test_weights_broadcast(level):
    a = RNG.standard_normal((30, 40))
    for b in (
        RNG.standard_normal(40),
        RNG.standard_normal((30, 1)),
        2.5,
        RNG.standard_normal((2, 30, 40)),
    ):
        for axis in (None, 0, 1, -1):
            for return_sign in (False, True):
                assert_same(
                    nf.logsumexp(a, b=b, axis=axis, return_sign=return_sign),
                    scipy_quiet("logsumexp", a, b=b, axis=axis, return_sign=return_sign),
                    rtol=1e-12,
                )
    # a broadcast against a larger b
    assert_same(
        nf.logsumexp([1.0, 2.0], b=np.ones((3, 2)), axis=1),
        sp.logsumexp([1.0, 2.0], b=np.ones((3, 2)), axis=1),
    )


def test_masked_like_scipy_example():
    a = np.ma.array([np.log(2), 2, np.log(3)], mask=[False, True, False])
    b = (~a.mask).astype(int)
    assert nf.logsumexp(a.data, b=b) == pytest.approx(np.log(5), rel=1e-15)


# ------------------------------------------------------------------ empty, axes, keepdims


@pytest.mark.parametrize(
    "shape,axis",
    [
        ((0,), None),
        ((0,), 0),
        ((0, 3), 0),
        ((0, 3), 1),
        ((3, 0), 1),
        ((3, 0), (1,)),
        ((2, 0, 3), 1),
    ],
)
def test_empty_like_scipy(shape, axis):
    a = np.ones(shape)
    for keepdims in (False, True):
        assert_same(
            nf.logsumexp(a, axis=axis, keepdims=keepdims),
            sp.logsumexp(a, axis=axis, keepdims=keepdims),
        )
    assert_same(
        nf.logsumexp(a, axis=axis, return_sign=True), sp.logsumexp(a, axis=axis, return_sign=True)
    )


def test_empty_where_scipy_raises():
    # SciPy 1.17 raises IndexError here (it indexes a 1-d shape array with the
    # axis tuple); the answer it gives for every other empty input is -inf.
    assert_same(nf.logsumexp(np.ones((0, 3))), np.float64(-np.inf))
    assert_same(nf.logsumexp(np.ones((0, 3)), keepdims=True), np.full((1, 1), -np.inf))
    assert_same(nf.logsumexp(np.ones((2, 0)), axis=(0, 1)), np.float64(-np.inf))


@pytest.mark.parametrize("shape,axis", [((0,), None), ((0, 3), 0), ((0, 0), 0), ((3, 0), 1)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_empty_reduction_raises_like_scipy(name, shape, axis):
    with pytest.raises(ValueError, match="zero-size array"):
        scipy_quiet(name, np.ones(shape), axis=axis)
    with pytest.raises(ValueError, match="zero-size array"):
        getattr(nf, name)(np.ones(shape), axis=axis)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_empty_outer(name):
    x = np.ones((0, 3))
    assert_same(getattr(nf, name)(x, axis=1), scipy_quiet(name, x, axis=1))
    assert_same(getattr(nf, name)(np.ones(0), axis=()), scipy_quiet(name, np.ones(0), axis=()))


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize(
    "axis,error",
    [
        (5, np.exceptions.AxisError),
        (-3, np.exceptions.AxisError),
        ((0, 0), ValueError),
        ((1, -1), ValueError),
        (0.5, TypeError),
        ([0, 1], TypeError),
    ],
)
def test_bad_axis(name, axis, error):
    x = np.ones((3, 2))
    with pytest.raises(error):
        getattr(sp, name)(x, axis=axis)
    with pytest.raises(error):
        getattr(nf, name)(x, axis=axis)


def test_axis_numpy_integer_and_scalar_input():
    x = RNG.standard_normal((3, 4))
    assert_same(nf.logsumexp(x, axis=np.int64(1)), sp.logsumexp(x, axis=np.int64(1)))
    assert_same(nf.logsumexp(np.array(2.0), axis=0), sp.logsumexp(np.array(2.0), axis=0))
    assert_same(nf.logsumexp(3.0, keepdims=True), sp.logsumexp(3.0, keepdims=True))
    with pytest.raises(np.exceptions.AxisError):
        nf.logsumexp(np.array(2.0), axis=1)


def test_keepdims_and_sign_shapes():
    x = RNG.standard_normal((4, 5, 6))
    for axis in (None, 0, (0, 2), -1):
        assert_same(
            nf.logsumexp(x, axis=axis, keepdims=True, return_sign=True),
            sp.logsumexp(x, axis=axis, keepdims=True, return_sign=True),
        )


# ------------------------------------------------------------------ bad input


def test_bad_inputs_raise_cleanly():
    with pytest.raises(ValueError):
        nf.logsumexp([1.0, 2.0], b=np.ones(3))
    with pytest.raises(TypeError):
        nf.logsumexp(np.array([1, "a"], dtype=object))
    with pytest.raises(TypeError):
        nf.softmax(np.array([1.0, 2.0], dtype=object))
    with pytest.raises(TypeError):
        nf.logsumexp(np.array(["a"]))
    with pytest.raises(TypeError):
        nf.softmax(np.array([True, False]))
    with pytest.raises(TypeError):
        nf.log_softmax(np.array([True, False]))


def test_private_bindings_check_arguments():
    from numfuse import _core

    x = np.ones((3, 4))
    with pytest.raises(TypeError):
        _core._logsumexp(x.astype(np.int64), None, [0], np.empty(4), None)
    with pytest.raises(ValueError):
        _core._logsumexp(x, None, [2], np.empty(4), None)
    with pytest.raises(ValueError):
        _core._logsumexp(x, None, [0, 0], np.empty(4), None)
    with pytest.raises(ValueError):
        _core._logsumexp(x, None, [0], np.empty(5), None)
    with pytest.raises(TypeError):
        _core._logsumexp(x, None, [0], np.empty(4, np.float32), None)
    with pytest.raises(ValueError):
        _core._logsumexp(x, np.ones((3, 5)), [0], np.empty(4), None)
    readonly = np.empty(4)
    readonly.flags.writeable = False
    with pytest.raises(ValueError):
        _core._logsumexp(x, None, [0], readonly, None)
    with pytest.raises(ValueError):
        _core._softmax(x, [1], np.empty((4, 3)), False)
    with pytest.raises(ValueError):
        _core._softmax(np.ones((3, 0)), [1], np.empty((3, 0)), False)


# ------------------------------------------------------------------ out=


def test_out_logsumexp():
    x = RNG.standard_normal((6, 7))
    out = np.empty(7)
    assert nf.logsumexp(x, axis=0, out=out) is out
    assert_same(out, sp.logsumexp(x, axis=0))
    out_keep = np.empty((1, 7))
    assert nf.logsumexp(x, axis=0, keepdims=True, out=out_keep) is out_keep
    assert_same(out_keep, sp.logsumexp(x, axis=0, keepdims=True))
    res, sgn = np.empty(6), np.empty(6)
    got = nf.logsumexp(x, axis=1, b=-np.ones(7), return_sign=True, out=(res, sgn))
    assert got[0] is res and got[1] is sgn
    assert_same((res, sgn), sp.logsumexp(x, axis=1, b=-np.ones(7), return_sign=True))
    strided = np.empty(14)[::2]
    nf.logsumexp(x, axis=0, out=strided)
    assert_same(strided, sp.logsumexp(x, axis=0))
    scalar_out = np.empty(())
    assert nf.logsumexp(x, out=scalar_out) is scalar_out
    assert_same(scalar_out[()], sp.logsumexp(x))


def test_out_logsumexp_float16_and_errors():
    x = RNG.standard_normal((6, 7)).astype(np.float16)
    out = np.empty(7, np.float16)
    nf.logsumexp(x, axis=0, out=out)
    assert_same(out, sp.logsumexp(x, axis=0), rtol=2e-3)
    with pytest.raises(ValueError):
        nf.logsumexp(x, axis=0, out=np.empty(6, np.float16))
    with pytest.raises(TypeError):
        nf.logsumexp(x, axis=0, out=np.empty(7, np.float64))
    with pytest.raises(TypeError):
        nf.logsumexp(x, axis=0, out=[0.0] * 7)
    with pytest.raises(TypeError):
        nf.logsumexp(x, axis=0, out=(np.empty(7, np.float16), None))
    readonly = np.empty(7, np.float16)
    readonly.flags.writeable = False
    with pytest.raises(ValueError):
        nf.logsumexp(x, axis=0, out=readonly)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_out_softmax(name):
    x = RNG.standard_normal((50, 33))
    expected = scipy_quiet(name, x, axis=1)
    out = np.empty_like(x)
    assert getattr(nf, name)(x, axis=1, out=out) is out
    assert_same(out, expected)
    # in place
    y = x.copy()
    assert getattr(nf, name)(y, axis=1, out=y) is y
    assert_same(y, expected)
    # partially overlapping output: computed through a temporary
    buffer = np.concatenate([x.ravel(), np.zeros(33)])
    source = buffer[: x.size].reshape(x.shape)
    target = buffer[33:].reshape(x.shape)
    getattr(nf, name)(source, axis=1, out=target)
    assert_same(target, expected)
    f_out = np.empty_like(x, order="F")
    getattr(nf, name)(x, axis=0, out=f_out)
    assert_same(f_out, scipy_quiet(name, x, axis=0))
    with pytest.raises(ValueError):
        getattr(nf, name)(x, out=np.empty((33, 50)))
    with pytest.raises(TypeError):
        getattr(nf, name)(x, out=np.empty(x.shape, np.float32))


# ------------------------------------------------------------------ accuracy vs mpmath


ACCURACY_INPUTS = {
    "well-conditioned": lambda n: RNG.uniform(-1, 1, n),
    "normal": lambda n: RNG.standard_normal(n) * 3,
    "wide-range": lambda n: RNG.uniform(-700, 700, n),
    "wide-negative": lambda n: RNG.uniform(-740, -10, n),
    "sorted": lambda n: np.sort(RNG.uniform(-20, 20, n)),
}


@pytest.mark.parametrize("kind", sorted(ACCURACY_INPUTS))
@pytest.mark.parametrize("n", [7, 300, 2000])
def test_accuracy_vs_mpmath_float64(level, kind, n):
    x = ACCURACY_INPUTS[kind](n)
    soft, log_soft = mp_softmax_parts(x)
    assert relative_error_in_eps(nf.logsumexp(x), mp_logsumexp(x), np.float64) <= 4
    # softmax entries that underflow to subnormals lose relative precision in
    # any algorithm; the bound is for normal results.
    normal = soft > np.finfo(np.float64).tiny * 2**53
    got = nf.softmax(x)
    assert relative_error_in_eps(got[normal], soft[normal], np.float64) <= 4
    assert relative_error_in_eps(nf.log_softmax(x), log_soft, np.float64) <= 4
    # columns (lanes across outputs) and rows give the same accuracy
    cols = np.stack([x, x[::-1]], axis=1)
    assert relative_error_in_eps(nf.logsumexp(cols, axis=0)[0], mp_logsumexp(x), np.float64) <= 4
    assert relative_error_in_eps(nf.log_softmax(cols, axis=0)[:, 0], log_soft, np.float64) <= 4


@pytest.mark.parametrize("kind", ["well-conditioned", "normal", "sorted"])
@pytest.mark.parametrize("n", [7, 2000])
def test_accuracy_vs_mpmath_float32(level, kind, n):
    x = ACCURACY_INPUTS[kind](n).astype(np.float32)
    soft, log_soft = mp_softmax_parts(x)
    assert relative_error_in_eps(nf.logsumexp(x), mp_logsumexp(x), np.float32) <= 4
    normal = soft > np.finfo(np.float32).tiny * 2**24
    assert relative_error_in_eps(nf.softmax(x)[normal], soft[normal], np.float32) <= 4
    assert relative_error_in_eps(nf.log_softmax(x), log_soft, np.float32) <= 4


def test_log_softmax_saturated_maximum_is_accurate():
    # The largest entry's value is -log1p(tiny): SciPy's log(sum) returns 0.
    x = np.array([0.0, -40.0, -45.0])
    _, log_soft = mp_softmax_parts(x)
    got = nf.log_softmax(x)
    assert got[0] != 0.0
    assert relative_error_in_eps(got, log_soft, np.float64) <= 4


# ------------------------------------------------------------------ determinism


@pytest.mark.parametrize(
    "shape,axis",
    [((300_001,), None), ((2000, 700), 0), ((700, 2000), 1), ((100_000, 5), 1), ((5, 100_000), 0)],
)
def test_bit_identical_for_any_thread_count(threads, shape, axis):
    x = RNG.standard_normal(shape) * 5
    b = RNG.uniform(-1, 2, shape)
    results = []
    for n in (1, 2, 3, 4, 7):
        nf.set_num_threads(n)
        results.append(
            (
                nf.logsumexp(x, axis=axis),
                nf.logsumexp(x, axis=axis, b=b, return_sign=True),
                nf.softmax(x, axis=axis),
                nf.log_softmax(x, axis=axis),
            )
        )
    for other in results[1:]:
        for got, first in zip(other, results[0]):
            if isinstance(first, tuple):
                for g, f in zip(got, first):
                    assert np.array_equal(
                        np.asarray(g).view(np.uint64), np.asarray(f).view(np.uint64)
                    )
            else:
                assert np.array_equal(
                    np.asarray(got).view(np.uint64), np.asarray(first).view(np.uint64)
                )


def test_no_warnings_for_special_inputs():
    # pytest runs with filterwarnings=error: any RuntimeWarning would fail here.
    with np.errstate(all="raise"):
        nf.softmax([np.inf, 1.0])
        nf.log_softmax([-np.inf, -np.inf])
        nf.logsumexp([np.inf, -np.inf], b=[0, 1])
        nf.logsumexp([1.0, 2.0], b=[1, -1])


@pytest.mark.parametrize("shape", [(3, 1000, 20), (7, 3000, 33), (2, 50000, 9)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_middle_axis_every_team_size_gives_the_one_thread_bits(threads, shape, dtype):
    # Lanes across outputs: the last, partial batch of one work item's outputs must not
    # store stale states over the next item's, which another thread is folding (found as
    # 1e6-ULP and inf results at 2 threads). Repeated: a race shows on some calls only.
    x = np.random.default_rng(7).normal(0, 3, shape).astype(dtype)
    nf.set_num_threads(1)
    expected = nf.logsumexp(x, axis=1)
    expected_log_softmax = nf.log_softmax(x, axis=1)
    exact = sp.logsumexp(x.astype(np.float64), axis=1)
    assert np.allclose(expected, exact, rtol=8 * np.finfo(dtype).eps, atol=0)
    for team in (2, 3, 7):
        nf.set_num_threads(team)
        for _ in range(15):
            np.testing.assert_array_equal(nf.logsumexp(x, axis=1), expected)
        np.testing.assert_array_equal(nf.log_softmax(x, axis=1), expected_log_softmax)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_middle_axis_many_magnitudes_every_team_size(threads, dtype):
    # The same lanes-across-outputs path on values spanning the dtype's whole range, both
    # signs, subnormals and zeros included: every team size gives the one-thread bits.
    rng = np.random.default_rng(11)
    info = np.finfo(dtype)
    lo, hi = np.log10(info.smallest_subnormal), np.log10(info.max) - 1
    x = (
        rng.choice([-1.0, 1.0], (5, 2000, 19)) * 10.0 ** rng.uniform(lo, hi, (5, 2000, 19))
    ).astype(dtype)
    x[0, ::7] = 0.0
    nf.set_num_threads(1)
    expected = nf.logsumexp(x, axis=1)
    exact = sp.logsumexp(x.astype(np.float64), axis=1)
    assert np.allclose(expected, exact, rtol=8 * info.eps, atol=0)
    for team in (2, 3, 7):
        nf.set_num_threads(team)
        for _ in range(10):
            np.testing.assert_array_equal(nf.logsumexp(x, axis=1), expected)


# ------------------------------------------------------------------ blocks folded without tests
# Contiguous runs and strips fold blocks whose maximum and minimum were found first; a block
# with no new maximum and every x - max inside the exp kernel's fast range (|.| <= 708 for
# float64, 87 for float32) runs the exps with no test at all (runs of 32 blocks or more:
# 8192 float32 at AVX2, so the arrays here are longer). Special and extreme entries
# anywhere in a block must still send it down the checked path.

BLOCK_POSITIONS = [0, 1, 3, 63, 64, 100, 127, 128, 255, 256, 300, 511, 512, 1023, 4095, 8191, 9000]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("special", [NAN, INF, -INF, 800.0, -1000.0, -760.0, -90.0])
def test_special_entry_at_any_block_position(level, dtype, special):
    base = np.random.default_rng(3).uniform(-5, 5, 9001)
    for pos in BLOCK_POSITIONS:
        x = base.copy()
        x[pos] = special
        x = x.astype(dtype)
        cols = np.stack([x, np.roll(x, 1), x[::-1], np.roll(x, 77)] * 5, axis=1)
        for name in FUNCTIONS:
            assert_same(getattr(nf, name)(x), scipy_quiet(name, x))
            assert_same(getattr(nf, name)(cols, axis=0), scipy_quiet(name, cols, axis=0))
        assert_same(
            nf.logsumexp(x, return_sign=True), scipy_quiet("logsumexp", x, return_sign=True)
        )


def mp_lse_of_equal_terms(top, low, count, dtype):
    """log(exp(top) + count exp(low)) of the rounded inputs, exactly enough."""
    with mpmath.workdps(60):
        top, low = mpmath.mpf(float(dtype(top))), mpmath.mpf(float(dtype(low)))
        return float(top + mpmath.log1p(count * mpmath.exp(low - top)))


@pytest.mark.parametrize(
    "dtype,differences",
    [
        (np.float64, [-1.0, -700.0, -707.9, -708.0, -708.001, -708.4, -708.5, -720.0, -745.0]),
        (np.float32, [-1.0, -80.0, -86.9, -87.0, -87.01, -87.4, -90.0, -100.0, -103.0]),
    ],
)
def test_terms_at_the_edge_of_the_fast_exp_range(level, dtype, differences):
    # One maximum, then thousands of equal terms e^d: results down to the subnormal range,
    # where a flushed, clamped or garbage term would show.
    info = np.finfo(dtype)
    count = 9000
    for top in (0.0, 3.0):
        for d in differences:
            x = np.full(count + 1, top + d, dtype=dtype)
            for pos in (0, 700, count):
                x[:] = dtype(top + d)
                x[pos] = top
                expected = mp_lse_of_equal_terms(top, dtype(top + d), count, dtype)
                got = float(nf.logsumexp(x))
                cols = np.stack([x] * 9, axis=1)
                got_cols = nf.logsumexp(cols, axis=0).astype(np.float64)
                for value in [got, *got_cols]:
                    # With top = 0 the result is the tiny terms' sum itself, which the
                    # accumulator's correction term c holds as a plain sum (each term is below
                    # half an ulp of s = 1): count eps relative at worst (such inputs are
                    # ill-conditioned: |x| / result ~ 700). Subnormal terms are each rounded to
                    # the subnormal grid. A flushed, clamped or garbage term is far outside.
                    tolerance = count * max(info.eps * abs(expected), info.smallest_subnormal)
                    assert abs(value - expected) <= tolerance, (top, d, pos, value, expected)


# Terms of the unchecked blocks come from logsumexp's own exp (src/core/kernels/lse_exp.hpp:
# relative error below 1.75 u, where the exp kernel keeps 1.02 u); the result stays within
# 4 eps of mpmath. Rows of 8192 take the contiguous run's blocks, 8 columns of them the strips'
# pairs; the kinds put the result near 0 (one dominant term at 0), make every term 1, or
# mix magnitudes, where a term's relative error shows most.
FAST_BLOCK_INPUTS = {
    **ACCURACY_INPUTS,
    "uniform(-5, 5)": lambda n: RNG.uniform(-5, 5, n),
    "one dominant term at 0": lambda n: np.concatenate([[0.0], RNG.uniform(-60, -20, n - 1)]),
    "maximum near 0": lambda n: np.concatenate(
        [RNG.uniform(-1e-3, 1e-3, 1), RNG.uniform(-40, -5, n - 1)]
    ),
    "all equal": lambda n: np.full(n, RNG.uniform(-5, 5)),
    "mixed magnitudes": lambda n: RNG.uniform(-1, 1, n) * 10.0 ** RNG.uniform(-3, 2.8, n),
    "positive": lambda n: RNG.uniform(0, 700, n),
}


@pytest.mark.parametrize("kind", sorted(FAST_BLOCK_INPUTS))
def test_fast_blocks_within_4_eps_of_mpmath(level, kind):
    x = FAST_BLOCK_INPUTS[kind](8192)
    x = np.roll(x, int(RNG.integers(0, x.size)))  # the maximum anywhere
    expected = mp_logsumexp(x)
    assert relative_error_in_eps(nf.logsumexp(x), expected, np.float64) <= 4
    cols = np.stack([x, x[::-1], np.roll(x, 1), np.roll(x, 4095)] * 2, axis=1)
    assert relative_error_in_eps(nf.logsumexp(cols, axis=0), expected, np.float64) <= 4
    log_soft = mp_softmax_parts(x)[1]
    assert relative_error_in_eps(nf.log_softmax(cols, axis=0)[:, 0], log_soft, np.float64) <= 4


# The unchecked blocks of a contiguous run add each accumulator's 8 terms of a block plainly
# (a balanced tree) and compensate only the blocks' totals (arch/reduce_loops.hpp, at
# needs_fold: at most 3.01 u of the block's own total). Adversarial for that: terms all
# just below 1 (partial sums up to 8 that do not fit the grid), one dominant term with
# many tiny ones (the result is the tiny terms' sum), tiny terms at the unchecked range's
# floor, all-equal rows, +-700, mixed magnitudes. The reference sums the exact terms in
# long double (x87: 64-bit significand; aarch64: quad), far below the 4 eps checked.
def long_double_parts(x):
    """The maximum, log1p of the other terms' sum (the log of S = sum exp(x - max): exact
    enough where S is near 1) and x - max, in long double."""
    wide = np.asarray(x, dtype=np.longdouble)
    top_index = int(np.argmax(x))
    shifted = wide - wide[top_index]
    terms = np.exp(shifted)
    terms[top_index] = 0
    return wide[top_index], np.log1p(np.sum(terms)), shifted


def lse_long_double(x):
    top, log_sum, _ = long_double_parts(x)
    return float(top + log_sum)


BLOCK_SUM_INPUTS = {
    "near the maximum": lambda n: RNG.uniform(-1e-3, 0, n),
    "one dominant term, tiny ones": lambda n: np.concatenate([[0.0], RNG.uniform(-40, -30, n - 1)]),
    "one dominant term, terms at the floor": lambda n: np.concatenate(
        [[0.0], RNG.uniform(-708, -650, n - 1)]
    ),
    "all equal": lambda n: np.full(n, RNG.uniform(-5, 5)),
    "+-700": lambda n: RNG.uniform(-700, 700, n),
    "mixed magnitudes": lambda n: RNG.uniform(-1, 1, n) * 10.0 ** RNG.uniform(-3, 2.8, n),
    "uniform(-5, 5)": lambda n: RNG.uniform(-5, 5, n),
}


@pytest.mark.parametrize("kind", sorted(BLOCK_SUM_INPUTS))
@pytest.mark.parametrize(
    "n", [2**17 + 5, pytest.param(10**7, marks=pytest.mark.slow)], ids=["1.3e5", "1e7"]
)
def test_plain_block_sums_within_4_eps(level, kind, n):
    x = BLOCK_SUM_INPUTS[kind](n)
    x = np.roll(x, int(RNG.integers(0, x.size)))  # the maximum anywhere
    expected = lse_long_double(x)
    assert relative_error_in_eps(nf.logsumexp(x), expected, np.float64) <= 4
    # a run that starts mid-block and a strided view of the same values
    assert relative_error_in_eps(nf.logsumexp(x[3:]), lse_long_double(x[3:]), np.float64) <= 4
    assert relative_error_in_eps(nf.logsumexp(x[::2]), lse_long_double(x[::2]), np.float64) <= 4
    # log_softmax of a group longer than one chunk folds it with the same loops
    _, log_sum, shifted = long_double_parts(x)
    log_soft = (shifted - log_sum).astype(np.float64)
    assert relative_error_in_eps(nf.log_softmax(x), log_soft, np.float64) <= 4


@pytest.mark.parametrize("seed", range(3))
def test_tiny_terms_after_the_maximum_over_many_chunks(level, seed):
    # The maximum first and 2e6 terms near e^-650 after it (a strided and a contiguous run):
    # s stays 1 and c carries all the others through 32 chunk merges and each chunk's lane
    # merge, where c's plain additions lost up to 3 eps of the result (about 4e-278) here and
    # 6 at 1e7 elements, always low (log_softmax at the maximum alike).
    rng = np.random.default_rng(seed)
    x = np.concatenate([[0.0], rng.uniform(-708, -650, 2**22 - 1)])
    for view in (x[::2], x[: x.size // 2]):
        expected = lse_long_double(view)
        assert relative_error_in_eps(nf.logsumexp(view), expected, np.float64) <= 2
        # log_softmax at the maximum is -log(sum), merged the same way
        assert relative_error_in_eps(nf.log_softmax(view)[0], -expected, np.float64) <= 2
