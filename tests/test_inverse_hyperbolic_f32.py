"""float32 arcsinh, arccosh, arctanh (and log2, log10) on their float32 kernels.

On AVX-512 these run on float32 lanes in float32 arithmetic (src/core/kernels/
logpair_f32.hpp: the log of a float32 pair y, the pair built from x with error-free
transformations); the other levels widen to float64. The tests sweep every float32 bit
pattern (with a stride) of the regions the method treats apart: the cut-offs where lanes
return x (|x| < 2^-12) or take log(2|x|) (|x| > 2^12), the neighbourhood of 1 where
acosh(x) ~ sqrt(2 (x - 1)) and atanh(x) grows without bound, the huge arguments up to
the largest float32, and the ordinary ranges, and bound every result within 1 ULP of the
exact value (NumPy's float64 function, within 2^-29 of a float32 ULP of it), at every
level, through the ufunc and through evaluate. The measured maxima over all 2^32 inputs
are in docs/accuracy.md."""

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
            f32_range(2.0**-13, 2.0**-11),  # lanes returning x, and the first computed ones
            f32_range(2.0**-11, 2.0**11, 257),
            f32_range(2.0**11, 2.0**13, 3),  # log(2|x|) above 2^12
            f32_range(2.0**13, big, 4099),
        ]
        x = np.concatenate(parts)
        return np.concatenate([x, -x])
    if name == "arccosh":
        return np.concatenate(
            [
                f32_range(1.0, 1.0 + 2.0**-8),  # acosh ~ sqrt(2 (x - 1))
                f32_range(1.0 + 2.0**-8, 2.0**11, 257),
                f32_range(2.0**11, 2.0**13, 3),
                f32_range(2.0**13, big, 4099),
            ]
        )
    if name == "arctanh":
        x = np.concatenate(
            [
                f32_range(2.0**-13, 2.0**-11),
                f32_range(2.0**-11, 0.5, 131),
                f32_range(0.5, 1.0 - 2.0**-8, 61),
                f32_range(1.0 - 2.0**-8, 1.0),  # the pole: every float32 below 1
            ]
        )
        return np.concatenate([x, -x])
    # log2, log10: every binade, and next to 1 where the results are smallest
    return np.concatenate(
        [
            f32_range(float(np.finfo(F32).smallest_subnormal), big, 1031),
            f32_range(1.0 - 2.0**-10, 1.0 + 2.0**-10),
        ]
    )


FUNCTIONS = ["arcsinh", "arccosh", "arctanh", "log2", "log10"]


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


@pytest.mark.parametrize("name", ["arcsinh", "arccosh", "arctanh"])
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
            2.0**-12,
            2.0**12,
            float(np.nextafter(F32(2.0**12), F32(np.inf))),
            float(info.max),
            float(-info.max),
            float(info.smallest_subnormal),
            float(-info.tiny),
        ],
        dtype=F32,
    )
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(x)
        got = getattr(numfuse, name)(x)
    same = (got.view(np.int32) == expected.view(np.int32)) | (np.isnan(got) & np.isnan(expected))
    exact = getattr(np, name)(x.astype(np.float64))
    finite = np.isfinite(exact) & np.isfinite(got)
    close = np.zeros_like(same)
    close[finite] = ulp_error(got[finite], exact[finite]) <= 1.0
    assert np.all(same | close), x[~(same | close)]
    # NaN where NumPy gives NaN, infinities and zeros (with their signs) exactly
    exact_cases = np.isnan(expected) | np.isinf(expected) | (expected == 0)
    assert np.all(same[exact_cases]), x[exact_cases & ~same]
