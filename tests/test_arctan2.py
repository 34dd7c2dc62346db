"""arctan2's kernels (kernels/atan2.hpp) at every level: float32 in float32 lanes where
every lane of a vector is ordinary (AVX2: both magnitudes in [2^-96, 2^96], ratio >= 2^-30;
AVX-512: min >= 2^-40, max <= 2^60, any ratio) and in the wide float64 form for the other
lanes; float64 in pair arithmetic. A wrong fast
path shows here as an error above 1 ULP, a result that depends on its neighbours, or a
special value that differs from C99's."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import numfuse
from conftest import ulp_distance


def _f32_reference(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """float64 arctan2 of the float32 pairs rounded to float32: within 2^-29 ULP of the
    correctly rounded float32 value (the bound checked is 1 ULP)."""
    return np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(np.float32)


def _quadrants(y: np.ndarray, x: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    sy = rng.choice([-1.0, 1.0], y.size).astype(np.float32)
    sx = rng.choice([-1.0, 1.0], x.size).astype(np.float32)
    return (y * sy).astype(np.float32), (x * sx).astype(np.float32)


def test_float32_arctan2_within_1_ulp_across_the_fast_paths_range(level):
    rng = np.random.default_rng(29)
    n = 60000
    # ratio |y / x| log-uniform in [2^-34, 2^34] (across the 2^-30 edge of the float32 path),
    # magnitudes log-uniform in [2^-100, 2^127] (across its 2^-96 / 2^96 edges), next to the
    # diagonal (the polynomial's worst point, t = 1), and ordinary values.
    ratio = np.exp2(rng.uniform(-34, 34, n))
    mag = np.exp2(rng.uniform(-100, 93, n))
    y1, x1 = (mag * ratio).astype(np.float32), mag.astype(np.float32)
    d = rng.uniform(0.05, 20, n).astype(np.float32)
    y2 = (d * (1 + rng.uniform(-1e-3, 1e-3, n))).astype(np.float32)
    x3 = rng.uniform(-10, 10, n).astype(np.float32)
    y3 = rng.uniform(-10, 10, n).astype(np.float32)
    y, x = _quadrants(np.concatenate([y1, y2]), np.concatenate([x1, d]), rng)
    y, x = np.concatenate([y, y3]), np.concatenate([x, x3])
    with np.errstate(all="ignore"):
        got = numfuse.arctan2(y, x)
        expected = _f32_reference(y, x)
    distance = ulp_distance(got, expected)
    worst = int(np.argmax(distance))
    assert distance.max() <= 1, (y[worst], x[worst], got[worst], expected[worst])


def test_float32_arctan2_within_1_ulp_at_the_avx512_cells(level):
    """The AVX-512 float32 form reduces t = min/max by c = k/4 (k = 0..4, from a reciprocal
    estimate) and takes lanes with min >= 2^-40, max <= 2^60: ratios next to the cell edges
    k/4 +- 1/8 and to the estimate's 2^-12 slack, magnitudes next to the range edges, every
    quadrant."""
    rng = np.random.default_rng(2929)
    n = 40000
    edge = rng.choice(np.array([0.125, 0.375, 0.625, 0.875, 0.25, 0.5, 0.75, 1.0]), n)
    ratio = edge * (1 + rng.uniform(-(2.0**-10), 2.0**-10, n))
    x = rng.uniform(0.5, 2.0, n) * np.exp2(rng.integers(-50, 110, n).astype(np.float64))
    ratio2 = np.exp2(rng.uniform(-33, 0, n))  # across the 2^-31 ratio edge
    x2 = np.exp2(rng.uniform(-45, 106, n))
    y = np.concatenate([x * ratio, x2 * ratio2]).astype(np.float32)
    xx = np.concatenate([x, x2]).astype(np.float32)
    y, xx = _quadrants(y, xx, rng)
    with np.errstate(all="ignore"):
        got = numfuse.arctan2(y, xx)
        swapped = numfuse.arctan2(xx, y)
        expected = _f32_reference(y, xx)
        expected_swapped = _f32_reference(xx, y)
    for g, e in ((got, expected), (swapped, expected_swapped)):
        distance = ulp_distance(g, e)
        worst = int(np.argmax(distance))
        assert distance.max() <= 1, (level, worst, g[worst], e[worst])


def test_float32_arctan2_tiny_ratios_and_range_edges_of_the_avx512_form(level):
    """The AVX-512 float32 form takes every ratio of magnitudes in [2^-40, 2^60] (t down to
    2^-100, where u^2 and u^3 P underflow): tiny ratios at both ends of the range, and
    magnitudes one ulp inside and outside each edge, every quadrant and both orders, within
    1 ULP, with no floating-point condition (NumPy reports none for these pairs)."""
    rng = np.random.default_rng(2930)
    n = 20000
    lo, hi = np.float32(2.0**-40), np.float32(2.0**60)
    small = np.exp2(rng.uniform(-40, 20, n)).astype(np.float32)
    big = (small.astype(np.float64) * np.exp2(rng.uniform(0, 100, n))).astype(np.float32)
    keep = big <= hi
    small, big = small[keep], big[keep]
    edges = np.array(
        [lo, np.nextafter(lo, np.float32(0)), np.nextafter(lo, np.float32(1)), hi,
         np.nextafter(hi, np.float32(0)), np.nextafter(hi, np.float32(np.inf))],
        np.float32,
    )  # fmt: skip
    e1 = rng.choice(edges, 4000)
    e2 = np.exp2(rng.uniform(-40, 60, 4000)).astype(np.float32)
    y, x = _quadrants(np.concatenate([small, e1, e2]), np.concatenate([big, e2, e1]), rng)
    for a, b in ((y, x), (x, y)):
        with np.errstate(all="raise"):
            got = numfuse.arctan2(a, b)
        expected = _f32_reference(a, b)
        distance = ulp_distance(got, expected)
        worst = int(np.argmax(distance))
        assert distance.max() <= 1, (level, a[worst], b[worst], got[worst], expected[worst])
        assert np.array_equal(np.signbit(got), np.signbit(a))


def _specials(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, -0.25, float(info.max),
              -float(info.max), float(info.tiny), float(info.smallest_subnormal),
              -float(info.smallest_subnormal), 1e-30, 1e30, 2.0**-41, -(2.0**61)]  # fmt: skip
    return np.array(values, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_arctan2_special_pairs_as_c99(dtype, level):
    s = _specials(dtype)
    y, x = (a.ravel() for a in np.meshgrid(s, s, indexing="ij"))
    with np.errstate(all="ignore"):
        got = numfuse.arctan2(y, x)
        expected = np.array(
            [math.atan2(float(a), float(b)) for a, b in zip(y, x)], np.float64
        ).astype(dtype)
    bits = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan)
    # math.atan2 (the C library's) is correctly rounded on these pairs: zeros, +-pi,
    # +-pi/2, +-pi/4, +-3pi/4 and quotients far from any rounding boundary.
    close = ulp_distance(got[~nan], expected[~nan]) <= (1 if dtype == np.float32 else 0)
    exact = (got[~nan] == 0) == (expected[~nan] == 0)
    assert close.all() and exact.all(), list(zip(y[~nan][~close], x[~nan][~close]))
    # Signed zeros bit for bit.
    zero = ~nan & (expected == 0)
    assert np.array_equal(got[zero].view(bits), expected[zero].view(bits))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_arctan2_rare_lanes_do_not_change_their_neighbours(dtype, level):
    """A vector with a rare lane (zero, inf, NaN, subnormal, huge, tiny ratio) takes another
    path: each element must come out the same whatever its neighbours, in place and strided."""
    rng = np.random.default_rng(7)
    rare = _specials(dtype)
    bits = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
    for n in (7, 16, 33, 70, 129):
        y = rng.uniform(-5, 5, n).astype(dtype)
        x = rng.uniform(-5, 5, n).astype(dtype)
        y[rng.integers(0, n, 1 + n // 16)] = rng.choice(rare, 1 + n // 16)
        x[rng.integers(0, n, 1 + n // 16)] = rng.choice(rare, 1 + n // 16)
        with np.errstate(all="ignore"):
            whole = numfuse.arctan2(y, x)
            one_by_one = np.concatenate(
                [numfuse.arctan2(y[i : i + 1], x[i : i + 1]) for i in range(n)]
            )
            in_place = y.copy()
            numfuse.arctan2(in_place, x, out=in_place)
            strided = numfuse.arctan2(np.repeat(y, 2)[::2], np.repeat(x, 2)[::2])
        assert np.array_equal(whole.view(bits), one_by_one.view(bits))
        assert np.array_equal(whole.view(bits), in_place.view(bits))
        assert np.array_equal(whole.view(bits), strided.view(bits))


def test_float32_arctan2_in_evaluate_is_the_ufuncs(level):
    """evaluate's float32 arctan2 (widened values narrowed back into the float32 kernel)
    gives the ufunc's bits."""
    rng = np.random.default_rng(3)
    y = rng.uniform(-10, 10, 5000).astype(np.float32)
    x = np.exp2(rng.uniform(-140, 120, 5000)).astype(np.float32)
    x[::7] = -x[::7]
    with np.errstate(all="ignore"):
        got = numfuse.evaluate("arctan2(y, x)")
        expected = numfuse.arctan2(y, x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))


def _arctan2_conditions(y: np.ndarray, x: np.ndarray, layout: str) -> set[str]:
    """The floating-point conditions numfuse.arctan2 reports for float32 (y, x), called
    contiguous, in place or strided."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(all="warn"):
            if layout == "contiguous":
                numfuse.arctan2(y, x)
            elif layout == "in place":
                out = y.copy()
                numfuse.arctan2(out, x, out=out)
            else:
                numfuse.arctan2(np.repeat(y, 2)[::2], np.repeat(x, 2)[::2])
    return {
        w
        for w in ("overflow", "underflow", "invalid", "divide")
        for c in caught
        if w in str(c.message)
    }


@pytest.mark.parametrize("layout", ["contiguous", "in place", "strided"])
def test_float32_arctan2_conditions_wherever_the_rare_pair_sits(layout, level):
    """float32 arctan2 takes its conditions in the kernel's pass, from the batches that leave
    its fast form: one underflowing pair in the head, the body or the tail of an array raises
    underflow as NumPy's float32 loop does (a result below the smallest normal where |y| <
    2^-125 or |x| >= 2^123); pairs that leave the fast form without it (zeros, infinities,
    NaN, a tiny ratio with a normal result, and the subnormal or zero results of a normal y
    and an ordinary x, which NumPy does not report) raise nothing."""
    n = 67
    cases = [
        ((-1e-40, 3.0), {"underflow"}),
        ((1e-39, 2.0), {"underflow"}),
        ((2.0**-126 * 1.99, 3.0), {"underflow"}),
        ((2.0**-5, 2.0**124), {"underflow"}),
        ((2.0**-126 * 2.01, 3.0), set()),
        ((3e-38, 100.0), set()),
        ((1e-30, 1e20), set()),
        ((1e-40, -3.0), set()),
        ((0.0, 0.0), set()),
        ((np.inf, 2.0), set()),
        ((np.nan, 2.0), set()),
        ((1e-20, 1e10), set()),
    ]
    for (yv, xv), expected in cases:
        for position in (0, 3, 17, 40, n - 1):
            y = np.linspace(-3, 3, n).astype(np.float32)
            x = np.linspace(4, -2, n).astype(np.float32)
            y[position], x[position] = yv, xv
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with np.errstate(all="warn"):
                    np.arctan2(y, x)
            reference = {
                w
                for w in ("overflow", "underflow", "invalid", "divide")
                for c in caught
                if w in str(c.message)
            }
            # expected: NumPy 2.4.6 with SVML (AVX-512); other builds' C library may differ
            if reference != expected:
                pytest.skip(f"NumPy reports {reference} for {(yv, xv)}: not the SVML loop")
            assert _arctan2_conditions(y, x, layout) == reference, (yv, xv, position)


def test_float64_arctan2_subnormal_results_are_the_rounded_quotient(level):
    """float64 atan2(y, x) for x > 0 and |y / x| < 2^-70 is the quotient y / x rounded once,
    below the smallest normal to the subnormal grid (on AVX-512 from the significands'
    quotient and its remainder, no subnormal operation): bit for bit y / x, exact ties to
    even included, in vectors that mix such lanes with ordinary ones; beside pi/2 and pi
    (x < 0, or |y| > |x|) the tiny quotient changes nothing."""
    rng = np.random.default_rng(1022)
    n = 40000
    y = np.exp(rng.uniform(np.log(5e-324), np.log(1e-250), n)) * rng.choice([-1.0, 1.0], n)
    x = np.exp(rng.uniform(np.log(1e-30), np.log(1e30), n))
    k = np.arange(1, 3001, dtype=np.float64)
    ties_y = np.concatenate([k * 2.0**-1074, 3 * k * 2.0**-1074, [2.0**-1022 - 2.0**-1074]])
    ties_x = np.concatenate([np.full(k.size, 2.0), np.full(k.size, 2.0), [1 - 2.0**-53]])
    y = np.concatenate([y, ties_y, [0.0, -0.0, 5e-324, -5e-324]])
    x = np.concatenate([x, ties_x, [3.0, 3.0, 1e300, 1e300]])
    y[::5] = rng.uniform(-3, 3, y[::5].size)  # ordinary lanes beside them
    with np.errstate(all="ignore"):
        got = numfuse.arctan2(y, x)
        expected = y / x
    tiny = np.abs(expected) < 2.0**-70
    assert tiny.sum() > n // 2
    np.testing.assert_array_equal(got[tiny].view(np.uint64), expected[tiny].view(np.uint64))
    with np.errstate(all="ignore"):
        beside = numfuse.arctan2(np.concatenate([y, x]), np.concatenate([-x, y]))
        reference = np.arctan2(np.concatenate([y, x]), np.concatenate([-x, y]))
    assert (ulp_distance(beside, reference) <= 1).all()


@pytest.mark.parametrize("layout", ["contiguous", "in place", "strided"])
def test_float64_arctan2_conditions_of_tiny_results(layout, level):
    """float64 arctan2 reports underflow for a result below the smallest normal where |y| <
    4 times the smallest normal, the result is zero or |x| >= 2^1022 (NumPy's float64 loop
    on these probes), in any position of an array, and nothing for the others."""
    n = 37
    tiny = np.finfo(np.float64).tiny
    cases = [
        ((1e-310, 3.0), {"underflow"}),
        ((-3 * tiny, 4.0), {"underflow"}),
        ((1e-300, 1e300), {"underflow"}),
        ((3 * tiny, 1e5), {"underflow"}),
        ((2.0**-1000, 2.0**1022 * 1.5), {"underflow"}),
        ((1e-300, 1e20), set()),
        ((-3 * tiny, 2.0), set()),
        ((1e-310, -3.0), set()),
        ((1e300, 1e-300), set()),
        ((0.0, 2.0), set()),
        ((1e-20, 1e10), set()),
    ]
    for (yv, xv), expected in cases:
        for position in (0, 9, n - 1):
            y = np.linspace(-3, 3, n)
            x = np.linspace(4, -2, n)
            y[position], x[position] = yv, xv
            assert _arctan2_conditions(y, x, layout) == expected, (yv, xv, position)
