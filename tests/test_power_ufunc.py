"""numfuse.power and numfuse.float_power as numpy.ufuncs (issue 29).

The table-driven tests (test_accuracy.py: within 1 ULP of mpmath at every level;
test_ufunc_api.py, test_overlap.py, test_function_table.py) cover what every two-argument
ufunc shares. This file adds what is particular to power:

- special values bit for bit against np.power (C99's pow: signed zeros, infinities, NaNs,
  negative bases with integral and non-integral exponents), at every level, in SIMD lanes
  and loop tails, float32 and float64;
- the floating-point conditions NumPy reports (divide-by-zero, invalid, overflow,
  underflow), pair by pair;
- integers as NumPy: integer power stays integer and wraps, negative integer exponents
  raise ValueError, mixed integer / float operands pick NumPy's loop;
- float_power's float64 / complex128 results, complex power as NumPy's, out=, where=,
  dtype=, patching np.power, and evaluate's power(a, b) with the same bits.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import numfuse
from conftest import ulp_distance

DTYPES = [np.float32, np.float64]
INF = float("inf")


def _specials(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    values = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, 0.25, 10.0]
    values += [INF, -INF, np.nan, float(info.max), -float(info.max), float(info.tiny)]
    values += [float(info.smallest_subnormal), -float(info.smallest_subnormal), 1 / 3, 7.0]
    values += [-7.0, 1e-3, 1e3, 64.0, -64.0, 1.0 + float(info.eps), 1.0 - float(info.epsneg)]
    values += [-1.0 - float(info.eps), 1e30, 1e-30, 200.0, -200.0, 1100.0, -1100.0, 150.0]
    x = np.array(values, dtype)
    nan_bits = [0xFFC00000, 0x7FC12345] if dtype == np.float32 else None
    if nan_bits is None:
        nan_bits = [0xFFF8000000000000, 0x7FF800000ABCDEF1]
    nans = np.array(nan_bits, np.uint32 if dtype == np.float32 else np.uint64).view(dtype)
    return np.concatenate([x, nans])


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.uint32 if x.dtype == np.float32 else np.uint64)


def _special_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairs whose result C99 defines exactly: x or y zero, infinite or NaN, x = +-1, and
    a finite negative x with a finite non-integral y (the invalid NaN)."""
    with np.errstate(invalid="ignore"):
        exact_a = (a == 0) | np.isinf(a) | np.isnan(a) | (np.abs(a) == 1)
        exact_b = (b == 0) | np.isinf(b) | np.isnan(b)
        invalid = (a < 0) & np.isfinite(a) & np.isfinite(b) & (b != np.trunc(b))
    return exact_a | exact_b | invalid


def _exact_power(a: float, b: float):
    import mpmath

    with mpmath.workprec(200):
        x, y = mpmath.mpf(a), mpmath.mpf(b)
        return mpmath.power(x, int(y)) if x < 0 else mpmath.power(x, y)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_special_values_bit_for_bit(dtype, level):
    s = _specials(dtype)
    a, b = (np.array(v, dtype) for v in zip(*itertools.product(s, s)))
    special = _special_pairs(a, b)
    with np.errstate(all="ignore"):
        expected = np.power(a, b)
        # whole arrays (SIMD lanes and a tail), a shorter tail, and strided operands
        for index in (slice(None), slice(None, -3), slice(None, None, 3)):
            got, want = numfuse.power(a[index], b[index]), expected[index]
            keep = special[index]
            bad = keep & (_bits(got) != _bits(want))
            assert not bad.any(), [(a[index][k], b[index][k]) for k in np.flatnonzero(bad)[:5]]
        if dtype == np.float64:
            # np.float_power's float64 loop is glibc's pow, np.power's SVML on AVX-512
            # machines: they differ in the sign of NaN ** odd integer (SVML: -NaN);
            # numfuse.float_power is numfuse.power in float64, NaN signs included.
            got, want = numfuse.float_power(a, b), np.float_power(a, b)
            assert (np.isnan(got) == np.isnan(want)).all()
            same = _bits(got) == _bits(want)
            assert (same | np.isnan(want))[special].all()
        # the other pairs: within 1 ULP of the exact value (NumPy's SVML loops are not
        # always: float32 np.power(7, -1) is 1 ULP off there, numfuse's is correctly rounded)
        got = numfuse.power(a, b)
    rest = np.flatnonzero(~special)
    exact = np.array([float(_exact_power(float(a[k]), float(b[k]))) for k in rest])
    with np.errstate(over="ignore"):
        exact = exact.astype(dtype)
    distance = ulp_distance(got[rest], exact)
    worst = rest[int(np.argmax(distance))]
    assert distance.max() <= 1, (a[worst], b[worst], got[worst])


# (base, exponent) pairs and the condition NumPy reports for each
CONDITION_PROBES = [
    (0.0, -1.0),
    (-0.0, -3.0),
    (0.0, -INF),
    (-0.0, -0.5),
    (0.0, 2.0),
    (-2.0, 0.5),
    (-8.0, 1 / 3),
    (-INF, 0.5),
    (-2.0, INF),
    (2.0, 2000.0),
    (-2.0, 2001.0),
    (10.0, 308.5),
    (2.0, -2000.0),
    (2.0, -1074.0),
    (2.0, -1073.5),
    (3.0, -700.0),
    (1e-300, 1.05),
    (2.0, -1022.0),
    (2.0, -1022.5),
    (0.5, INF),
    (INF, -1.0),
    (2.0, -149.0),
    (2.0, -149.5),
    (2.0, -126.0),
    (2.0, -126.5),
    (2.0, 127.5),
    (2.0, 128.0),
    (1e-310, 1.0),
    (1e-310, 0.5),
    (1e-310, 2.0),
    (np.nan, -1.0),
    (0.0, np.nan),
    (-1.0, np.nan),
    (1.0, 1e300),
    (1.5, 3.0),
    # exact subnormal results (|x| a power of two) and inexact ones next to them: C99
    # leaves underflow open for the exact ones (SVML reports it, glibc does not)
    (4.0, -74.5),
    (0.5, 140.0),
    (-2.0, -149.0),
    (-2.0, -141.0),
    (2.0**-70, 2.0),
    (0.25, 537.0),
    (8.0, -358.0),
    (2.0**-1000, 1.074),
    (3.0, -90.0),
    (0.75, 300.0),
    (2.0, -150.0),
    (-0.0, -INF),
]


def _conditions(f, a, b) -> set[str]:
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="warn"):
        warnings.simplefilter("always")
        f(a, b)
    return {str(w.message).split(" encountered")[0] for w in caught}


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_floating_point_conditions_as_numpy(dtype, level):
    for x, y in CONDITION_PROBES:
        with np.errstate(all="ignore"):
            a, b = np.array([x], dtype), np.array([y], dtype)
        for n in (1, 37):  # alone, and among ordinary pairs (SIMD lanes and the tail)
            aa, bb = np.full(n, 1.5, dtype), np.full(n, 2.0, dtype)
            aa[n // 2], bb[n // 2] = a[0], b[0]
            want = _conditions(np.power, aa, bb)
            assert _conditions(numfuse.power, aa, bb) == want, (x, y, n)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_nan_and_conditions_follow_numpy_in_every_layout(dtype, level):
    """The conventions numfuse.power takes from NumPy at import (nan_policy.hpp: the NaN of
    NaN ** odd integer, divide-by-zero for 0 ** -inf, underflow for exact subnormal
    results) hold in every path: SIMD lanes and tails, in place on either operand,
    strided, and the folds (accumulate and reduce, one pair at a time)."""
    rng = np.random.default_rng(20)
    # quiet NaNs only: glibc's pow reports invalid for a signalling one, numfuse does not
    nan_bits = [0xFFC00000, 0x7FC00000, 0xFFC12345, 0x7FC54321]
    if dtype == np.float64:
        nan_bits = [0xFFF8000000000000, 0x7FF8000000000000, 0xFFF80000ABCDE000, 0x7FF8000000000123]
    nans = np.array(nan_bits, np.uint32 if dtype == np.float32 else np.uint64).view(dtype)
    ys = np.array([3.0, -3.0, 1.0, -1.0, 2.0, 0.5, 5.0, 2001.0, -INF, INF, 0.0], dtype)
    n = 301
    a = rng.uniform(0.5, 2.0, n).astype(dtype)
    b = rng.uniform(-3.0, 3.0, n).astype(dtype)
    where = rng.choice(n, 80, replace=False)
    a[where] = rng.choice(nans, where.size)
    b[where] = rng.choice(ys, where.size)
    b[where[:10]] = rng.choice(nans, 10)
    zeros = where[-6:]
    a[zeros], b[zeros] = 0.0, -INF
    special = np.isnan(a) | np.isnan(b) | (a == 0)

    def check(got, want, mask):
        # the special lanes bit for bit, the ordinary ones within 1 ULP
        assert (_bits(got[mask]) == _bits(want[mask])).all()
        assert ulp_distance(got[~mask], want[~mask]).max() <= 1

    with np.errstate(all="ignore"):
        want = np.power(a, b)
        check(numfuse.power(a, b), want, special)
        check(numfuse.power(a[::2], b[::2]), want[::2], special[::2])
        for operand in ("a", "b"):
            aa, bb = a.copy(), b.copy()
            out = aa if operand == "a" else bb
            numfuse.power(aa, bb, out=out)
            check(out, want, special)
    assert _conditions(numfuse.power, a, b) == _conditions(np.power, a, b)
    # folds: accumulate chains each result into the next pair (a NaN stays one). The
    # expected chain is np.power's element loop applied pair by pair, the loop whose
    # conventions numfuse reads at import: NumPy's own accumulate may take another loop
    # (on AVX-512 CPUs its SVML loop keeps the sign of -NaN ** 3, while its fold goes
    # through the C library's pow, which clears it).
    chain = np.array([nans[0], 3.0, 1.0, -1.0, 5.0, 2.0, 3.0], dtype)
    want = chain.copy()
    with np.errstate(all="ignore"):
        got = numfuse.power.accumulate(chain)
        for i in range(1, chain.size):
            want[i] = np.power(want[i - 1 : i], chain[i : i + 1])[0]
    assert (_bits(got) == _bits(want)).all()
    for pair in ([0.0, -INF], [2.0, -149.0], [4.0, -74.5], [3.0, -100.0], [2.0, -1074.0]):
        with np.errstate(all="ignore"):
            pair_array = np.array(pair, dtype)
        assert _conditions(numfuse.power.reduce, pair_array, None) == _conditions(
            np.power.reduce, pair_array, None
        ), pair


INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_integers_stay_integers_and_wrap(dtype):
    rng = np.random.default_rng(29)
    info = np.iinfo(dtype)
    a = rng.integers(max(info.min, -50), min(info.max, 50), 300, endpoint=True).astype(dtype)
    b = rng.integers(0, 70, 300).astype(dtype)
    got = numfuse.power(a, b)
    assert got.dtype == np.power(a, b).dtype == dtype
    np.testing.assert_array_equal(got, np.power(a, b))


def test_integer_corner_cases():
    assert numfuse.power(np.array([True, False]), np.array([True, True])).dtype == np.int8
    np.testing.assert_array_equal(numfuse.power(np.arange(5), 3), np.arange(5) ** 3)
    for a, b in [(np.arange(5), 0.5), (np.arange(5, dtype=np.int32), np.float32(2)), (2, 3)]:
        expected = np.power(a, b)
        got = numfuse.power(a, b)
        assert np.asarray(got).dtype == np.asarray(expected).dtype
        np.testing.assert_allclose(got, expected, rtol=1e-15)
    message = "Integers to negative integer powers are not allowed."
    for dtype in (np.int8, np.int32, np.int64):
        with pytest.raises(ValueError, match=message):
            np.power(np.array([2, 3], dtype), np.array([1, -1], dtype))
        with pytest.raises(ValueError, match=message):
            numfuse.power(np.array([2, 3], dtype), np.array([1, -1], dtype))
    # unsigned exponents are never negative
    np.testing.assert_array_equal(
        numfuse.power(np.array([2], np.uint8), np.array([255], np.uint8)), [0]
    )


def test_float_power_results_are_float64_or_complex128():
    rng = np.random.default_rng(7)
    a, b = rng.uniform(0, 10, 100), rng.uniform(-5, 5, 100)
    for x, y in [(a.astype(np.float32), b.astype(np.float32)), (np.arange(1, 6), 2), (a, b)]:
        got, expected = numfuse.float_power(x, y), np.float_power(x, y)
        assert got.dtype == expected.dtype == np.float64
        assert ulp_distance(got, expected).max() <= 1
    z = (a + 1j * b).astype(np.complex64)
    got, expected = numfuse.float_power(z, 2), np.float_power(z, 2)
    assert got.dtype == expected.dtype == np.complex128
    np.testing.assert_allclose(got, expected, rtol=1e-15)
    assert numfuse.float_power.types == np.float_power.types


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_power_as_numpy(dtype):
    rng = np.random.default_rng(11)
    a = (rng.normal(size=200) + 1j * rng.normal(size=200)).astype(dtype)
    exponents = [0, 1, 2, 3, -1, -2, 7, 99, -99, 100, 0.5, 1j, 2 + 0.5j]
    for e in exponents:
        b = np.full(a.shape, e, dtype)
        with np.errstate(all="ignore"):
            got, expected = numfuse.power(a, b), np.power(a, b)
        assert got.dtype == expected.dtype == dtype
        rtol = 1e-5 if dtype == np.complex64 else 1e-13
        np.testing.assert_allclose(got, expected, rtol=rtol, err_msg=str(e))
    zero = np.zeros(3, dtype)
    with np.errstate(all="ignore"):
        got = numfuse.power(zero, np.array([2, 0, -1], dtype))
        expected = np.power(zero, np.array([2, 0, -1], dtype))
    np.testing.assert_array_equal(got, expected)


def test_out_where_dtype_and_broadcasting():
    rng = np.random.default_rng(3)
    a = rng.uniform(0.1, 10, (40, 30))
    b = rng.uniform(-3, 3, 30)
    expected = np.power(a, b)
    out = np.full_like(a, -1.0)
    mask = rng.random((40, 30)) < 0.5
    numfuse.power(a, b, out=out, where=mask)
    np.testing.assert_array_equal(out[~mask], -1.0)
    assert ulp_distance(out[mask], expected[mask]).max() <= 1
    got32 = numfuse.power(a, b, dtype=np.float32)
    assert got32.dtype == np.float32
    assert ulp_distance(got32, np.power(a, b, dtype=np.float32)).max() <= 1
    assert ulp_distance(numfuse.power(a.T, b[:, None]), np.power(a.T, b[:, None])).max() <= 1
    assert numfuse.power(2.0, 10.0) == 1024.0
    assert numfuse.power.types == [t for t in np.power.types if t != "OO->O"][:10] + [
        "ee->e",
        "ff->f",
        "dd->d",
        "gg->g",
        "FF->F",
        "DD->D",
        "GG->G",
    ]


def test_evaluate_power_has_the_ufuncs_bits():
    rng = np.random.default_rng(5)
    for dtype in DTYPES:
        a = rng.uniform(0, 20, 5000).astype(dtype)
        b = rng.uniform(-30, 30, 5000).astype(dtype)
        with np.errstate(all="ignore"):
            got = numfuse.power(a, b)
            assert (_bits(numfuse.evaluate("power(a, b)")) == _bits(got)).all()
            assert (_bits(numfuse.evaluate("a ** b")) == _bits(got)).all()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(
            numfuse.evaluate("float_power(a, b)"), numfuse.float_power(a, b)
        )
        np.testing.assert_array_equal(numfuse.float_power(a, b), numfuse.power(a64, b64))


def test_patching_np_power():
    rng = np.random.default_rng(9)
    a, b = rng.uniform(0, 5, 1000), rng.uniform(-5, 5, 1000)
    ours = numfuse.power(a, b)
    with numfuse.patched(["power", "float_power"]):
        np.testing.assert_array_equal(np.power(a, b), ours)
        np.testing.assert_array_equal(np.float_power(a, b), numfuse.float_power(a, b))
    assert not numfuse.is_patched("power")
    with numfuse.patched():  # every function, float_power (no float32 loop) included
        assert numfuse.is_patched("float_power")


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_strides_and_lengths_give_the_contiguous_bits(dtype, level):
    # every length through the SIMD batches and the tail, strided, reversed, a scalar
    # exponent; exponents that are one half-integer take the product path wherever a whole
    # block has them, so the arrays mix them with others
    rng = np.random.default_rng(19)
    a = rng.uniform(0.01, 30, 3 * 67 + 5).astype(dtype)
    b = rng.uniform(-20, 20, 3 * 67 + 5).astype(dtype)
    b[::4] = 3.0
    for n in range(0, 67):
        want = numfuse.power(a[:n].copy(), b[:n].copy())
        np.testing.assert_array_equal(
            numfuse.power(a[: 3 * n : 3], b[: 3 * n : 3]), numfuse.power(a[::3], b[::3])[:n]
        )
        reversed_a = a[n - 1 :: -1] if n else a[:0]
        np.testing.assert_array_equal(numfuse.power(reversed_a, b[:n][::-1]), want[::-1])
        if n:
            assert ulp_distance(want, np.power(a[:n], b[:n])).max() <= 1


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_accumulate_is_the_chain_and_reduce_its_end(dtype):
    # NumPy's contract for accumulate (its test_umath checks it): the chain of calls
    x = np.random.default_rng(23).uniform(0.9, 1.1, 500).astype(dtype)
    chain = np.array(list(itertools.accumulate(x, numfuse.power)), dtype=dtype)
    np.testing.assert_array_equal(numfuse.power.accumulate(x), chain)
    assert numfuse.power.reduce(x) == chain[-1]
    y = x.copy()
    numfuse.power.accumulate(y, out=y)
    np.testing.assert_array_equal(y, chain)
    assert ulp_distance(numfuse.power.accumulate(x)[1:], np.power(chain[:-1], x[1:])).max() <= 1
    with pytest.raises(ValueError):  # no identity, as np.power
        numfuse.power.reduce(x[:0])
    assert numfuse.power.identity is None and np.power.identity is None


def _measure(points: int) -> None:
    """Max error in ULP (fractional, mpmath at 160 bits) of numfuse.power and of np.power
    over the test table's domain (tests/function_table.py: _power), per dtype and level."""
    import mpmath

    from conftest import ulp_of
    from function_table import FUNCTIONS, Sweep, arguments

    exact = FUNCTIONS["power"].exact
    print("| dtype | level | numfuse.power max ULP | np.power max ULP |")
    print("|---|---|---|---|")
    for dtype in DTYPES:
        rng = np.random.default_rng(2029)
        a, b = arguments("power", Sweep(rng, dtype, points), dtype)
        info = np.finfo(dtype)
        with mpmath.workprec(160):
            values = [exact(mpmath.mpf(float(x)), mpmath.mpf(float(y))) for x, y in zip(a, b)]
            big = mpmath.mpf(float(info.max)) * (1 + mpmath.mpf(2) ** -(info.nmant + 1))
            keep = [k for k, v in enumerate(values) if abs(v) < big]
            units = [ulp_of(values[k], info) for k in keep]

            def worst(got, values=values, keep=keep, units=units):
                return max(
                    float(abs(mpmath.mpf(float(got[k])) - values[k]) / u)
                    for k, u in zip(keep, units)
                )

            with np.errstate(all="ignore"):
                reference = worst(np.power(a, b))
                for level in numfuse.usable_levels():
                    previous = numfuse.set_level(level)
                    try:
                        ours = worst(numfuse.power(a, b))
                    finally:
                        numfuse.set_level(previous)
                    name = np.dtype(dtype).name
                    print(f"| {name} | {level} | {ours:.3f} | {reference:.3f} |")


if __name__ == "__main__":
    _measure(20000)
