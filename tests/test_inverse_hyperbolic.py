"""arcsinh, arccosh, arctanh (and float32 log2, log10) at the cut-offs of their kernels.

On AVX-512 the float32 functions run on float32 lanes in float32 arithmetic (src/core/
kernels/logpair_avx512.hpp: the log of a float32 pair y, the pair built from x with
error-free transformations); the other levels widen to float64. The float32 tests sweep
every float32 bit pattern (with a stride) of the regions the method treats apart: the
cut-offs where lanes return x (|x| < 2^-12) or take log(2|x|) (|x| > 2^12), the
neighbourhood of 1 where acosh(x) ~ sqrt(2 (x - 1)) and atanh(x) grows without bound, the
huge arguments up to the largest float32, and the ordinary ranges, and bound every result
within 1 ULP of the exact value (NumPy's float64 function, within 2^-29 of a float32 ULP
of it), at every level, through the ufunc and through evaluate. The float64 kernels of the
same file are checked against mpmath at their own cut-offs (2^-27, 2^28, next to 1). The
measured maxima over the float32 inputs are in docs/accuracy.md."""

from __future__ import annotations

import numpy as np
import pytest

import numfuse

F32 = np.float32


def f32_range(lo: float, hi: float, stride: int = 1) -> np.ndarray:
    """Every `stride`-th float32 in [lo, hi] (0 < lo < hi), by bit pattern."""
    a, b = np.array([lo, hi], dtype=F32).view(np.int32)
    return np.arange(a, b + 1, stride, dtype=np.int32).view(F32)


def ulp_error(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in float32 ULP of the exact value (float64 reference)."""
    exact = np.asarray(exact, np.float64)
    _, e = np.frexp(np.abs(exact))  # |exact| = m 2^e, m in [0.5, 1)
    ulp = np.ldexp(1.0, np.maximum(e - 24, -149))
    return np.abs(got.astype(np.float64) - exact) / ulp


def regions(name: str) -> np.ndarray:
    """The sweep of one function: dense at its cut-offs, strided elsewhere."""
    big = float(np.finfo(F32).max)
    if name == "arcsinh":
        parts = [
            f32_range(2.0**-13, 2.0**-11, 31),  # lanes returning x, the first computed ones
            f32_range(2.0**-11, 2.0**11, 257),
            # 1 / (2 sqrt(1 + x^2))'s switch (1 + x^2 = 1 + 2^-8) and where the series side
            # of it costs most (x ~ 2^-11.5)
            f32_range(0.0625 * (1 - 2.0**-10), 0.0625 * (1 + 2.0**-10)),
            f32_range(2.0**-11.6, 2.0**-11.4, 7),
            f32_range(2.0**11, 2.0**13, 61),  # log(2|x|) above 2^12
            f32_range(2.0**13, big, 4099),
        ]
        x = np.concatenate(parts)
        return np.concatenate([x, -x])
    if name == "arccosh":
        return np.concatenate(
            [
                f32_range(1.0, 1.0 + 2.0**-8),  # acosh ~ sqrt(2 (x - 1))
                f32_range(1.0 + 2.0**-8, 2.0**11, 257),
                f32_range(2.0**11, 2.0**13, 61),
                f32_range(2.0**13, big, 4099),
            ]
        )
    if name == "arctanh":
        x = np.concatenate(
            [
                f32_range(2.0**-13, 2.0**-11, 31),
                f32_range(2.0**-11, 0.5, 131),
                f32_range(0.0625 * (1 - 2.0**-10), 0.0625 * (1 + 2.0**-10)),  # 1 / (1 + a)'s switch
                f32_range(0.5, 1.0 - 2.0**-8, 61),
                f32_range(1.0 - 2.0**-8, 1.0 - 2.0**-24),  # the pole: every float32 below 1
            ]
        )
        return np.concatenate([x, -x])
    if name == "log1p":
        # every binade of both signs; dense at the switches of the AVX2+FMA kernel (x returned
        # below 2^-25, the Taylor form below 2^-7, the pair form above) and next to -1, where
        # 1 + x is exact and small
        x = np.concatenate(
            [
                f32_range(float(np.finfo(F32).smallest_subnormal), big, 1031),
                f32_range(2.0**-26, 2.0**-24, 7),
                f32_range(2.0**-7 * (1 - 2.0**-8), 2.0**-7 * (1 + 2.0**-8)),
                f32_range(2.0**-8, 2.0**-6, 61),
            ]
        )
        near_minus_one = -f32_range(1.0 - 2.0**-10, float(np.nextafter(F32(1), F32(0))))
        return np.concatenate([x, -x[x < 1], near_minus_one])
    # log2, log10: every binade, next to 1 where the results are smallest, and every float32
    # within 2^-12 of the AVX-512 kernel's cell edges (m = 1 + i/32) in the binades where the
    # table's T_hi and e cancel most (x in [1/4, 4)) and in two far ones
    edges = [
        f32_range(s * (1 + i / 32) * (1 - 2.0**-12), s * (1 + i / 32) * (1 + 2.0**-12), 3)
        for s in (0.25, 0.5, 1.0, 2.0, 2.0**-100, 2.0**90)
        for i in range(1, 33)
    ]
    # and of the AVX2+FMA kernel's 16 cells (j = round(16 / m) for m in [0.75, 1.5): edges at m =
    # 16 / (j + 1/2), where rcpps decides the cell)
    edges16 = [
        f32_range(s * m * (1 - 2.0**-13), s * m * (1 + 2.0**-13), 3)
        for s in (0.5, 1.0, 2.0, 2.0**-126, 2.0**100)
        for m in 16 / (np.arange(11, 22) + 0.5)
    ]
    return np.concatenate(
        [
            f32_range(float(np.finfo(F32).smallest_subnormal), big, 1031),
            f32_range(1.0 - 2.0**-10, 1.0 + 2.0**-10),
            *edges,
            *edges16,
        ]
    )


FUNCTIONS = ["arcsinh", "arccosh", "arctanh", "log2", "log10", "log1p"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_float32_within_one_ulp(name, level):
    x = regions(name)
    exact = getattr(np, name)(x.astype(np.float64))
    got = getattr(numfuse, name)(x)
    assert got.dtype == F32
    err = ulp_error(got, exact)
    worst = int(np.argmax(err))
    assert err[worst] <= 1.0, (name, level, float(x[worst]), float(err[worst]))
    # evaluate runs the same float32 kernel: the same bits
    np.testing.assert_array_equal(numfuse.evaluate(f"{name}(x)", local_dict={"x": x}), got)


@pytest.mark.parametrize("name", ["arcsinh", "arccosh", "arctanh", "log1p", "log2", "log10"])
def test_float32_special_values_as_numpy(name, level):
    """Zeros, infinities, NaN, subnormals, the domain edges: NumPy's values bit for bit."""
    info = np.finfo(F32)
    x = np.array(
        [
            0.0,
            -0.0,
            np.inf,
            -np.inf,
            np.nan,
            1.0,
            -1.0,
            1.5,
            -1.5,
            0.5,
            -0.5,
            2.0,  # x - 1 = 1: the fixup's +1 class (acosh), |x| - 1 = 1 (atanh)
            -2.0,
            3.0,
            2.0**-12,
            2.0**12,
            float(np.nextafter(F32(2.0**12), F32(np.inf))),
            float(info.max),
            float(-info.max),
            float(info.smallest_subnormal),
            float(-info.tiny),
            float(-info.smallest_subnormal),
            2.0**-25,
            -(2.0**-26),
            -0.75,
            float(np.nextafter(F32(-1), F32(0))),
        ],
        dtype=F32,
    )
    # each value also alone among ordinary lanes (the AVX2+FMA kernels repair special lanes on
    # a branch taken by the batches that hold one)
    alone = np.full(x.size * 16, 0.5, dtype=F32)
    alone[5::16] = x
    x = np.concatenate([x, alone])
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(x)
        got = getattr(numfuse, name)(x)
        exact = getattr(np, name)(x.astype(np.float64))
    same = (got.view(np.int32) == expected.view(np.int32)) | (np.isnan(got) & np.isnan(expected))
    finite = np.isfinite(exact) & np.isfinite(got)
    close = np.zeros_like(same)
    close[finite] = ulp_error(got[finite], exact[finite]) <= 1.0
    assert np.all(same | close), x[~(same | close)]
    # NaN where NumPy gives NaN, infinities and zeros (with their signs) exactly
    exact_cases = np.isnan(expected) | np.isinf(expected) | (expected == 0)
    assert np.all(same[exact_cases]), x[exact_cases & ~same]


# float64: the AVX-512 kernels of the same file (pairs built with FMAs; arcsinh's square root
# and arctanh's quotient each from one rounded hardware operation and its exact remainder) at
# their cut-offs, against mpmath; the other levels run logpair.hpp's double-double kernels.
def _f64_points(name: str) -> np.ndarray:
    rng = np.random.default_rng(2029)
    n = 600
    if name == "arcsinh":
        x = np.concatenate(
            [
                np.exp2(rng.uniform(-29, -25, n)),  # lanes returning x below 2^-27
                np.exp2(rng.uniform(-25, 3, n)),
                0.25 * np.exp2(rng.uniform(-0.01, 0.01, n)),  # where 1 / y changes method
                np.exp2(rng.uniform(26, 27, n)),  # 1 - (1 + x^2) inexact from 2^26.5
                np.exp2(rng.uniform(27, 29, n)),  # log(2|x|) above 2^28
                np.exp2(rng.uniform(29, 1023, n // 2)),
            ]
        )
        return np.concatenate([x, -x])
    if name == "arccosh":
        return np.concatenate(
            [
                1 + np.exp2(rng.uniform(-52, -10, n)),
                np.exp2(rng.uniform(0.01, 27, n)),
                np.exp2(rng.uniform(27, 29, n)),
                np.exp2(rng.uniform(29, 1023, n // 2)),
            ]
        )
    x = np.concatenate(
        [
            np.exp2(rng.uniform(-29, -25, n)),
            rng.uniform(0, 1, n),
            0.0625 * np.exp2(rng.uniform(-0.01, 0.01, n)),  # where 1 / (1 + |x|) changes method
            1 - np.exp2(rng.uniform(-53, -5, n)),  # the pole
            # AVX-512: next to 1/2, where the quotient's residual and the error of its
            # 1 / (1 + |x|) weigh most; the table's cell edge at (1 + |x|) / (1 - |x|) = 1 + 1/32
            # (the result small, T_hi not 0); from 1 - 2^-51 on, where 2g - 1/2 rounds
            0.5 * np.exp2(rng.uniform(-0.01, 0.01, n)),
            (1 / 65) * np.exp2(rng.uniform(-0.01, 0.01, n)),
            1 - np.exp2(rng.uniform(-53, -50, n // 4)),
        ]
    )
    return np.concatenate([x, -x])


@pytest.mark.parametrize("name", ["arcsinh", "arccosh", "arctanh"])
def test_float64_cutoffs_within_one_ulp(name, level):
    mpmath = pytest.importorskip("mpmath")
    exact_fn = {"arcsinh": mpmath.asinh, "arccosh": mpmath.acosh, "arctanh": mpmath.atanh}[name]
    x = _f64_points(name)
    got = getattr(numfuse, name)(x)
    with mpmath.workprec(120):
        worst = 0.0
        for xi, yi in zip(x.tolist(), got.tolist()):
            exact = exact_fn(mpmath.mpf(xi))
            if exact == 0:
                assert yi == 0
                continue
            ulp = mpmath.ldexp(1, int(mpmath.floor(mpmath.log(abs(exact), 2))) - 52)
            worst = max(worst, float(abs(mpmath.mpf(yi) - exact) / ulp))
    assert worst <= 1.0, (name, level, worst)
