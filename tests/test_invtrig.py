"""arcsin, arccos, arctan, arctan2 (kernels/invtrig.hpp, invtrig_f32.hpp, atan2.hpp) at every
level, next to the edges of their methods, against mpmath: arcsin/arccos's switch to
sqrt((1 - |x|)/2) at |x| = 1/2 and its end at 1; arctan's table (c = k/4, switch to -1/|x|
above 7.625) and its clamps (2^-200, 2^60); arctan2's table (ratios next to k/4 +- 1/8), the
edges of its fast batches (magnitudes 2^-440 and 2^500, ratio 2^-60) and its tiny ratios; the
floor below which results are x. Also NaN inputs (x + x: sign and payload kept) and
neighbour independence across arctan2's batch-level fast path. The bound is 1 ULP; the
measured maxima are in docs/accuracy.md."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import numfuse
from conftest import ulp_distance


def _exact(function, *args: np.ndarray) -> np.ndarray:
    with mpmath.workprec(200):
        values = [float(function(*(mpmath.mpf(float(v)) for v in vs))) for vs in zip(*args)]
    return np.array(values, np.float64)


def _near(points, rng, n: int, widths=(1e-15, 1e-9, 1e-4)) -> np.ndarray:
    """n values at relative distances log-uniform up to each width from each point."""
    centre = rng.choice(np.asarray(points, np.float64), n)
    width = rng.choice(np.asarray(widths), n)
    offset = np.exp(rng.uniform(np.log(2.0**-60), np.log(width)))
    return centre * (1 + rng.choice([-1.0, 1.0], n) * offset)


def _check(got: np.ndarray, expected: np.ndarray, *args: np.ndarray) -> None:
    distance = ulp_distance(got, expected)
    worst = int(np.argmax(distance))
    assert distance.max() <= 1, ([a[worst] for a in args], got[worst], expected[worst])


def _unit_edges(rng) -> np.ndarray:
    n = 400
    parts = [
        _near([0.5, 1.0], rng, n),
        1 - np.exp2(-rng.integers(1, 54, n)).astype(np.float64),  # 1 - 2^-k, down to 1 - 2^-53
        np.exp2(rng.uniform(-230, -170, n)),  # across the 2^-200 floor
        np.exp2(rng.uniform(-40, -20, n)),  # where asin x rounds to x
        rng.uniform(0.45, 0.55, n),
        [0.5, np.nextafter(0.5, 0), np.nextafter(0.5, 1), np.nextafter(1.0, 0), 2.0**-200],
    ]
    x = np.concatenate([np.asarray(p, np.float64) for p in parts])
    x = x[np.abs(x) <= 1]
    return np.concatenate([x, -x])


@pytest.mark.parametrize(
    "name, exact", [("arcsin", mpmath.asin), ("arccos", mpmath.acos)], ids=["arcsin", "arccos"]
)
def test_arcsin_arccos_next_to_their_switches(name, exact, level):
    x = _unit_edges(np.random.default_rng(16))
    _check(getattr(numfuse, name)(x), _exact(exact, x), x)


def test_arctan_next_to_its_table_and_clamps(level):
    rng = np.random.default_rng(29)
    n = 300
    boundaries = np.arange(1, 64) / 8  # c = k/4 switches at odd multiples of 1/8; 7.625
    parts = [
        _near(boundaries, rng, 4 * n),
        _near([7.625, 7.75, 2.0**60], rng, n),
        np.exp2(rng.uniform(-230, -170, n)),  # across the 2^-200 floor
        np.exp2(rng.uniform(40, 80, n)),  # across the 2^60 clamp
        rng.uniform(0, 10, n),
        [7.625, 7.75, 8.0, 0.125, 0.375, 2.0**60, 2.0**-200, 1e300],
    ]
    x = np.concatenate([np.asarray(p, np.float64) for p in parts])
    x = np.concatenate([x, -x])
    _check(numfuse.arctan(x), _exact(mpmath.atan, x), x)


def _rounded_exact(function, x: np.ndarray) -> np.ndarray:
    """function(x) against mpmath, in x's dtype (float32 through the float64 value)."""
    return _exact(function, x.astype(np.float64)).astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_arctan_next_to_its_octave_tables(dtype, level):
    """AVX-512's arctan reduction: c switches at each half (float64) or quarter (float32)
    octave of [1/16, 16), c = 0 below 1/16, the last c above 16 up to the clamps."""
    rng = np.random.default_rng(27)
    edges = np.ldexp(1 + np.arange(4) / 4, np.arange(-4, 5)[:, None]).ravel()
    parts = [
        _near(edges, rng, 3000, widths=(1e-15, 1e-7, 1e-3, 3e-2)),
        np.exp2(rng.uniform(3, 70, 300)),  # the last c, across 2^30 and 2^60
        np.exp2(rng.uniform(-16, -2, 300)),  # c = 0, across 2^-12
        rng.uniform(0, 20, 600),
        edges,
    ]
    x = np.concatenate([np.asarray(p, np.float64) for p in parts]).astype(dtype)
    x = np.concatenate([x, -x])
    _check(numfuse.arctan(x), _rounded_exact(mpmath.atan, x), x)


def test_arcsin_float32_next_to_its_switches(level):
    """float32 arcsin (AVX-512: the root of (1 - |x|)/2 from vsqrtps rounded to a multiple of
    2^-24, its correction carried): next to 1/2 and 1, and where it rounds to x."""
    rng = np.random.default_rng(28)
    x = np.concatenate(
        [
            _near([0.5, 1.0], rng, 2000, widths=(1e-7, 1e-4, 1e-2)),
            1 - np.exp2(-rng.integers(1, 25, 200)).astype(np.float64),
            np.exp2(rng.uniform(-16, -8, 200)),  # across the 2^-12 floor
            rng.uniform(0.45, 1, 2000),
        ]
    ).astype(np.float32)
    x = x[np.abs(x) <= 1]
    x = np.concatenate([x, -x])
    _check(numfuse.arcsin(x), _rounded_exact(mpmath.asin, x), x)


@pytest.mark.parametrize("n", [1, 16, 17, 40, 129])
def test_float32_arcsin_of_one_and_beyond_among_ordinary_neighbours(n, level):
    """AVX-512's arcsin fast path leaves |x| = 1 (and |x| > 1) to its repair, which runs on the
    batches the loop's screen flags: +-1, the float32 values next to 1 and beyond it, scattered
    among ordinary values, give NumPy's bits (+-pi/2 rounded, NaN) in every layout (the
    ufunc contiguous, in place, strided; evaluate), the others within 1 ULP."""
    rng = np.random.default_rng(n)
    edge = np.array(
        [1.0, -1.0, np.nextafter(np.float32(1), np.float32(0)), 1.5, -np.inf, np.nan], np.float32
    )
    x = rng.uniform(-1, 1, n).astype(np.float32)
    at = rng.integers(0, n, 1 + n // 8)
    x[at] = rng.choice(edge, at.size)
    with np.errstate(invalid="ignore"):
        expected = np.arcsin(x)
        got = numfuse.arcsin(x)
        in_place = x.copy()
        numfuse.arcsin(in_place, out=in_place)
        strided = numfuse.arcsin(np.repeat(x, 2)[::2])
        evaluated = numfuse.evaluate("arcsin(x)", {"x": x})
    special = ~(np.abs(x) < 1)
    for result in (got, in_place, strided, evaluated):
        assert np.array_equal(np.isnan(result), np.isnan(expected))
        assert np.array_equal(
            result[special & ~np.isnan(x)].view(np.uint32),
            expected[special & ~np.isnan(x)].view(np.uint32),
        )
        number = ~np.isnan(result)
        assert np.array_equal(result[number].view(np.uint32), got[number].view(np.uint32))
    assert (ulp_distance(got[~special], _rounded_exact(mpmath.asin, x[~special])) <= 1).all()


def test_arctan2_next_to_its_table_and_fast_batches(level):
    rng = np.random.default_rng(2)
    n = 300
    ratio = np.concatenate(
        [
            _near(np.arange(1, 9) / 8, rng, 4 * n),  # k/4 +- 1/8
            np.exp2(rng.uniform(-64, -56, n)),  # the 2^-60 edge of the fast batches
            np.exp2(rng.uniform(-80, 0, n)),
        ]
    )
    # magnitudes across the fast batches' 2^-440 and 2^500 edges, and ordinary ones
    mag = np.concatenate(
        [
            np.exp2(rng.uniform(-450, -430, ratio.size // 3)),
            np.exp2(rng.uniform(490, 510, ratio.size // 3)),
        ]
    )
    mag = np.concatenate([mag, rng.uniform(0.1, 10, ratio.size - mag.size)])
    y, x = ratio * mag, mag
    swap = rng.random(y.size) < 0.5
    y[swap], x[swap] = x[swap], y[swap].copy()
    y *= rng.choice([-1.0, 1.0], y.size)
    x *= rng.choice([-1.0, 1.0], x.size)
    with np.errstate(all="ignore"):
        got = numfuse.arctan2(y, x)
    _check(got, _exact(mpmath.atan2, y, x), y, x)


@pytest.mark.parametrize("name", ["arcsin", "arccos", "arctan"])
def test_nan_inputs_as_numpy_in_evaluate(name, level):
    """evaluate returns NumPy's NaN for NaN inputs (quiet and signalling, both signs, with a
    payload), whatever the kernels' arithmetic does to it."""
    bits = np.array([0x7FF8000000000123, 0xFFF8000000000456, 0x7FF0000000000789], np.uint64)
    x = np.concatenate([bits.view(np.float64), np.linspace(-0.9, 0.9, 13)])
    got = numfuse.evaluate(f"{name}(x)", {"x": x})
    # NumPy's NaNs: the ufunc's policy. The C library's loops (NumPy without SVML) report
    # invalid for the signalling NaN; evaluate raises no warnings either way.
    with np.errstate(invalid="ignore"):
        np_bits = getattr(np, name)(x)
    assert np.array_equal(got.view(np.uint64)[:3], np_bits.view(np.uint64)[:3])


def test_arctan2_fast_batches_do_not_change_their_neighbours(level):
    """One lane outside the fast batches' range sends its whole batch to the general form:
    every element must come out the same whatever its neighbours."""
    rng = np.random.default_rng(5)
    y = rng.uniform(-5, 5, 64)
    x = rng.uniform(-5, 5, 64)
    odd = np.array([1e-300, 1e300, 0.0, -0.0, np.inf, 5e-324, 3.0 * 2.0**-441, 2.0**501])
    for v in odd:
        yy = y.copy()
        yy[rng.integers(0, 64, 3)] = v
        with np.errstate(all="ignore"):
            whole = numfuse.arctan2(yy, x)
            one_by_one = np.concatenate(
                [numfuse.arctan2(yy[i : i + 1], x[i : i + 1]) for i in range(64)]
            )
        assert np.array_equal(whole.view(np.uint64), one_by_one.view(np.uint64))
