"""logaddexp and logaddexp2 on float32: the screened float64 first pass
(src/core/kernels/logaddexp_f32.hpp) must round every lane it certifies correctly and send
the rest to the exact passes.

The lanes a loose screen would get wrong are those whose value lies within the screened
pass's error (~2^-49 of L, ~2^-25 float32 ULP) of a float32 rounding boundary. The pairs
below are built to land there: m = max with a tiny other term, m + base^(s - m) (roughly)
aimed at the midpoint m + (k + 1/2) ulp(m), s the float32 nearest to the exact aim and its
neighbours, so the values fall within ~2^-20 ULP of the midpoint, a few hundred within
2^-26. Each is checked against mpmath's correct rounding (the exact passes keep these
within 0.5 + 2^-37 ULP, pass 1's bound where |result| >= |max| / 2). Also: the one-pair
path of accumulate gives the array's bits, and special values are NumPy's.
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np
import pytest

import numfuse
from conftest import ulp_of
from function_table import FUNCTIONS

NAMES = ["logaddexp", "logaddexp2"]


def _midpoint_pairs(name: str, count: int = 200, neighbours: int = 8):
    """Pairs (m, s) whose value m + log(1 + base^(s - m)) lies near the float32 midpoint m +
    (k + 1/2) ulp(m): s the float32 nearest to the exact aim and its neighbours. Moving s by
    one of its ULPs moves the value by (k + 1/2) ulp(s) ULP, so two families: m of 1/8 to 4
    (s near m - 17: steps of ~2^-20 ULP, values 2^-30 to 2^-16 ULP from the midpoint, most
    certified by the screen) and m where the aim puts s next to 0 (m near 14, base 2 near
    19: steps of ~2^-30 ULP, values within ~2^-26 ULP, all for the exact passes)."""
    rng = np.random.default_rng(31 if name == "logaddexp" else 32)
    k = rng.integers(0, 4, 2 * count)
    coarse = np.exp(rng.uniform(np.log(0.125), np.log(4.0), count)) * rng.choice([-1.0, 1.0], count)
    if name == "logaddexp":
        fine = 20 * np.log(2.0) - np.log(k[count:] + 0.5)
    else:
        fine = 19.0 - np.log2((k[count:] + 0.5) * np.log(2.0))
    fine = fine + rng.uniform(-0.02, 0.02, count)
    m = np.concatenate([coarse, fine]).astype(np.float32)
    target = (k + 0.5) * np.spacing(np.abs(m)).astype(np.float64)
    if name == "logaddexp":
        d = np.log(np.expm1(target))
    else:
        d = np.log2(np.expm1(target * np.log(2.0)))
    s0 = (m.astype(np.float64) + d).astype(np.float32)
    steps = np.arange(-neighbours, neighbours + 1)
    s = (s0[:, None] + steps[None, :] * np.spacing(np.abs(s0))[:, None]).astype(np.float32)
    x = np.repeat(m, steps.size)
    y = s.ravel()
    swap = rng.random(x.size) < 0.5
    return np.where(swap, y, x), np.where(swap, x, y)


def _large_l_pairs(name: str, count: int = 120, neighbours: int = 48):
    """Pairs whose value is nearly all L (where the screened pass's error, a fraction of L,
    is largest in ULP): s from -12 to -4, the max m a tiny positive value that puts m + L
    next to the float32 midpoint nearest above L(0, s), and its neighbours: one ULP of m
    moves the value by ~2^-24 ULP, so the values lie from ~2^-30 to 2^-18 ULP from it."""
    rng = np.random.default_rng(35 if name == "logaddexp" else 36)
    s = rng.uniform(-12, -4, count).astype(np.float32)
    with mpmath.workprec(200):
        ms = []
        for v in s.tolist():
            r0 = FUNCTIONS[name].exact(mpmath.mpf(0), mpmath.mpf(v))
            u = ulp_of(r0, np.finfo(np.float32))
            mid = (mpmath.floor(r0 / u) + mpmath.mpf(0.5)) * u
            base = mpmath.e if name == "logaddexp" else mpmath.mpf(2)
            ms.append(float((mid - r0) * (1 + mpmath.power(base, v))))  # 1 / d(value)/dm
    m0 = np.array(ms).astype(np.float32)
    steps = np.arange(-neighbours, neighbours + 1)
    m = (m0[:, None] + steps[None, :] * np.spacing(m0)[:, None]).astype(np.float32)
    return m.ravel(), np.repeat(s, steps.size)


@functools.cache
def _midpoint_cases(name: str):
    x, y = _midpoint_pairs(name)
    x2, y2 = _large_l_pairs(name)
    x, y = np.concatenate([x, x2]), np.concatenate([y, y2])
    info = np.finfo(np.float32)
    with mpmath.workprec(200):
        exact = [
            FUNCTIONS[name].exact(mpmath.mpf(a), mpmath.mpf(b))
            for a, b in zip(x.tolist(), y.tolist())
        ]
        # distance of the value from the nearest float32 midpoint, in float32 ULP
        dist = []
        for v in exact:
            u = ulp_of(v, info)
            frac = (abs(v) / u) % 1
            dist.append(float(abs(frac - mpmath.mpf(0.5))))
    return x, y, exact, np.array(dist)


@pytest.mark.parametrize("name", NAMES)
def test_values_next_to_rounding_boundaries_round_correctly(name, level):
    x, y, exact, dist = _midpoint_cases(name)
    # the set reaches the lanes the screen must refuse (its error is ~2^-25 ULP at most)
    assert np.count_nonzero(dist < 2.0**-26) >= 1000
    assert np.count_nonzero((dist > 2.0**-29) & (dist < 2.0**-25)) >= 500
    got = getattr(numfuse, name)(x, y)
    info = np.finfo(np.float32)
    worst, at = 0.0, -1
    with mpmath.workprec(200):
        for i, (v, g) in enumerate(zip(exact, got.tolist())):
            err = float(abs(mpmath.mpf(g) - v) / ulp_of(v, info))
            if err > worst:
                worst, at = err, i
    # the exact passes round a float64 value to float32: within 2^-30 ULP of a boundary
    # that may round either way (0.5 ULP of float64 is 2^-30 of float32), and not further
    assert worst <= 0.5 + 2.0**-29, (
        f"{name}({x[at]!r}, {y[at]!r}) = {got[at]!r} at {level}: {worst!r} ULP, "
        f"value {dist[at]:.3g} ULP from a boundary"
    )


@pytest.mark.parametrize("name", NAMES)
def test_float32_is_the_float64_kernel_rounded(name, level):
    """Away from float32 rounding boundaries (not built to be near one) and from zero, the
    float32 result is the float64 kernel's (<= 0.52 ULP) rounded to float32."""
    rng = np.random.default_rng(33)
    parts = [
        (rng.uniform(-5, 5, 4000), rng.uniform(-5, 5, 4000)),
        (rng.uniform(-110, 110, 4000), rng.uniform(-150, 150, 4000)),
        (rng.uniform(-1, 0, 4000), rng.uniform(-1, 0, 4000)),
        (np.exp(rng.uniform(-80, 80, 4000)), -np.exp(rng.uniform(-80, 80, 4000))),
    ]
    x = np.concatenate([p[0] for p in parts]).astype(np.float32)
    y = np.concatenate([p[1] for p in parts]).astype(np.float32)
    f = getattr(numfuse, name)
    with np.errstate(all="ignore"):
        got = f(x, y)
        wide = f(x.astype(np.float64), y.astype(np.float64))
    # leave out the results within 2^-20 float32 ULP of a boundary, where the float64
    # kernel's own rounding may decide the float32 one differently
    r32 = wide.astype(np.float32)
    frac = np.abs((wide - r32.astype(np.float64)) / np.spacing(np.abs(r32)).astype(np.float64))
    clear = np.abs(frac - 0.5) > 2.0**-20
    np.testing.assert_array_equal(got[clear].view(np.uint32), r32[clear].view(np.uint32))


@pytest.mark.parametrize("name", NAMES)
def test_accumulate_gives_the_array_bits(name, level):
    """accumulate's one-pair path (logaddexp_base_one) screens as the array kernel does."""
    rng = np.random.default_rng(34)
    x = rng.uniform(-3, 3, 3000).astype(np.float32)
    f = getattr(numfuse, name)
    acc = f.accumulate(x)
    again = f(np.concatenate([[x[0]], acc[:-1]]).astype(np.float32), x)
    again[0] = x[0]
    np.testing.assert_array_equal(acc.view(np.uint32), again.view(np.uint32))


@pytest.mark.parametrize("name", NAMES)
def test_special_values_are_numpys(name, level):
    special = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45, 3.4e38, -3.4e38, 1e-38],
        np.float32,
    )
    x = np.repeat(special, special.size)
    y = np.tile(special, special.size)
    with np.errstate(all="ignore"):
        got = getattr(numfuse, name)(x, y)
        want = getattr(np, name)(x, y)
    both_nan = np.isnan(got) & np.isnan(want)
    exact = np.isinf(want) | (want == 0) | np.isnan(want)
    np.testing.assert_array_equal(
        got[exact & ~both_nan].view(np.uint32), want[exact & ~both_nan].view(np.uint32)
    )
    assert np.array_equal(np.isnan(got), np.isnan(want))
