"""numfuse.evaluate decisions where NumPy and numexpr differ (README, evaluate section).

* Ordering complex numbers: element-wise maximum()/minimum() follow NumPy's
  lexicographic order with its NaN rule; the min()/max() reductions refuse
  complex input with a TypeError, as numexpr does.
* Result dtypes of math on bool / 8- and 16-bit ints / float16: numexpr's
  (those inputs are widened to int32 / float32 first), not NumPy's float16.
* Floating-point warnings: none, as numexpr (NumPy warns for log(0) & co.).
* uint64 and long double inputs: a TypeError that says why and what to do.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import numfuse

NAN = np.nan


# ------------------------------------------------------------ complex ordering
def _complex_pairs(dtype):
    z = np.array(
        [
            1 + 2j,
            3 - 1j,
            1 + 5j,
            complex(NAN, 1),
            1 + 0j,
            complex(1, NAN),
            complex(2, NAN),
            1 + 1j,
            complex(NAN, NAN),
            -0.0 + 0j,
            complex(np.inf, 1),
            2 + 3j,
        ],
        dtype=dtype,
    )
    w = np.array(
        [
            2 + 0j,
            1 + 1j,
            1 + 4j,
            0j,
            complex(NAN, 2),
            1 + 1j,
            1 + 1j,
            complex(1, NAN),
            0j,
            0.0 - 0j,
            complex(np.inf, 2),
            2 + 3j,
        ],
        dtype=dtype,
    )
    return z, w


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_complex_maximum_minimum_as_numpy(name, dtype, level):
    z, w = _complex_pairs(dtype)
    got = numfuse.evaluate(f"{name}(z, w)", {"z": z, "w": w})
    expected = getattr(np, name)(z, w)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.view(got.real.dtype), expected.view(expected.real.dtype))


def test_complex_maximum_with_real_operand():
    z, _ = _complex_pairs(np.complex128)
    x = np.linspace(-1, 3, z.size)
    got = numfuse.evaluate("maximum(z, x)", {"z": z, "x": x})
    np.testing.assert_array_equal(got, np.maximum(z, x))


@pytest.mark.parametrize("reduction", ["min", "max"])
def test_complex_min_max_reductions_refused(reduction):
    z = np.array([1 + 2j, 3 - 1j])
    with pytest.raises(TypeError, match=rf"{reduction}\(\) is not supported for complex numbers"):
        numfuse.evaluate(f"{reduction}(z)", {"z": z})
    with pytest.raises(TypeError, match="complex"):
        numfuse.evaluate(f"{reduction}(z, axis=0)", {"z": z})


# ------------------------------------------------------------ small input dtypes
SMALL = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.float16]


NUMPY = {
    "np": np,
    "sin": np.sin,
    "sqrt": np.sqrt,
    "exp": np.exp,
    "log": np.log,
    "arcsin": np.arcsin,
}


@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ex", ["sin(a)", "sqrt(a)", "a + a", "exp(a) * 2"])
def test_small_dtypes_widen_as_numexpr(ex, dtype):
    a = np.array([1, 0, 1, 1], dtype=dtype)
    got = numfuse.evaluate(ex, {"a": a})
    ne = pytest.importorskip("numexpr")
    assert got.dtype == ne.evaluate(ex, {"a": a}).dtype
    # numexpr's rule: bool stays bool for arithmetic and math gives float32,
    # 8/16-bit ints widen to int32 (math gives float64), float16 to float32;
    # the values are NumPy's on the widened input.
    if got.dtype.kind == "f":
        widened = a.astype(got.dtype)
    else:
        widened = a.astype({np.bool_: np.bool_}.get(dtype, np.int32))
    expected = eval(ex, dict(NUMPY, a=widened))  # noqa: S307 - trusted literal test text
    assert got.dtype == expected.dtype
    if got.dtype.kind == "f":
        np.testing.assert_array_max_ulp(got, expected, maxulp=1)
    else:
        np.testing.assert_array_equal(got, expected)
    if dtype in (np.bool_, np.int8, np.uint8, np.float16) and ex == "sin(a)":
        assert np.sin(a).dtype == np.float16  # where NumPy differs (documented)


# ------------------------------------------------------------ floating-point warnings
@pytest.mark.parametrize(
    "ex, values",
    [
        ("log(a)", [0.0, -1.0, 1.0]),
        ("exp(a)", [1000.0, -1000.0, 0.0]),
        ("1 / a", [0.0, 1.0, -0.0]),
        ("arcsin(a)", [2.0, 0.5, -3.0]),
        ("sqrt(a)", [-1.0, 4.0, 0.0]),
    ],
)
def test_no_floating_point_warnings_as_numexpr(ex, values):
    a = np.array(values)
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        got = numfuse.evaluate(ex, {"a": a})  # neither raises nor warns
    with np.errstate(all="ignore"):
        expected = eval(ex, dict(NUMPY, a=a))  # noqa: S307 - trusted literal test text
    np.testing.assert_array_equal(got, expected)
    with pytest.warns(RuntimeWarning):  # where NumPy differs (documented)
        eval(ex, dict(NUMPY, a=a))  # noqa: S307


# ------------------------------------------------------------ refused dtypes
def test_uint64_refused_with_advice():
    a = np.array([1, 2], dtype=np.uint64)
    with pytest.raises(TypeError, match=r"uint64.*astype\(np\.int64\)"):
        numfuse.evaluate("a + 1", {"a": a})
    with pytest.raises(TypeError, match="uint64"):
        numfuse.compile("a + 1")(a)


@pytest.mark.skipif(np.dtype(np.longdouble).itemsize <= 8, reason="long double is double here")
@pytest.mark.parametrize("dtype", [np.longdouble, np.clongdouble])
def test_long_double_refused_with_advice(dtype):
    a = np.array([1, 2], dtype=dtype)
    with pytest.raises(TypeError, match=r"long double.*astype\(np\.float64\)"):
        numfuse.evaluate("sin(a)", {"a": a})
