"""expm1's paths for small and tiny arguments at every level. On AVX-512, float64: every lane
takes the table path (x = kd ln2/16 + r), tiny lanes (|x| < 2^-54) return x computed at 2^-54,
and only the lanes with kd = +-1 ([0x1.6p-6, 0x1.1p-4)) take the small-argument polynomial,
for the batches holding one; float32: every lane the table path, kd = 0 below 0x1.0cp-4 (no
polynomial), x below 2^-25; batches with every lane in [2^-25, 16) in magnitude scale before
the last sum, those with no lane below 1/4 skip the hold at 2^-25, the others hold x at 2^-25.
So: within 1 ULP of mpmath on both sides of each kd cell's edge and of the switches, measured
maxima printed; the same bits whichever lanes share a batch; NumPy's special values and
conditions."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import numfuse
from conftest import fp_conditions, results_in_three_layouts, ulp_distance, ulp_of

BITS = {np.float32: np.uint32, np.float64: np.uint64}
LN2_16 = math.log(2) / 16


def _small_arguments(dtype, rng) -> np.ndarray:
    """Both signs: each kd cell's edge ((kd + 1/2) ln2/16, kd = 0..6) and the switches with
    their 30 nearest neighbours (16: float32's fast form ends there; 16.6355: k = 24, where
    hi - 2^-k stops being exact), uniform and log-uniform arguments below 0.35."""
    edges = [(kd + 0.5) * LN2_16 for kd in range(7)]
    edges += [
        float.fromhex("0x1.6p-6"),
        float.fromhex("0x1.1p-4"),
        float.fromhex("0x1.0cp-4"),
        0.25,
        16.0,
        23.5 * 16 * LN2_16,
        0.328125,
        2.0**-25,
        2.0**-54,
        2.0**-30,
    ]
    parts = []
    for edge in edges:
        e = np.array(edge, dtype)
        parts.append(e + np.arange(-15, 16) * np.spacing(e))
    parts.append(rng.uniform(0, 0.35, 3000))
    parts.append(np.exp(rng.uniform(np.log(2.0**-60), np.log(0.35), 3000)))
    x = np.concatenate(parts).astype(dtype)
    return np.concatenate([x, -x])


def _ulp_errors(got: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|got - expm1(x)| in ULPs of the exact value (mpmath, 200 bits)."""
    info = np.finfo(x.dtype)
    out = np.empty(x.size)
    with mpmath.workprec(200):
        for i, (g, v) in enumerate(zip(got.tolist(), x.tolist())):
            exact = mpmath.expm1(mpmath.mpf(v))
            out[i] = float(abs(mpmath.mpf(g) - exact) / ulp_of(exact, info))
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_arguments_within_1_ulp(dtype, level):
    x = _small_arguments(dtype, np.random.default_rng(29))
    errors = _ulp_errors(numfuse.expm1(x), x)
    worst = int(np.argmax(errors))
    print(f"expm1 {np.dtype(dtype).name} {level}: max {errors[worst]:.3f} ULP at {x[worst]!r}")
    assert errors.max() <= 1.0, (x[errors > 1.0], errors[errors > 1.0])


def test_float32_dense_below_one(level):
    """float32: every 97th float32 from 2^-26 to 1, both signs, against the float64 result
    rounded once (at most 1 apart)."""
    lo, hi = np.array([2.0**-26, 1.0], np.float32).view(np.uint32)
    x = np.arange(lo, hi, 97, dtype=np.uint32).view(np.float32)
    x = np.concatenate([x, -x])
    ref = np.expm1(x.astype(np.float64)).astype(np.float32)
    distance = ulp_distance(numfuse.expm1(x), ref)
    assert distance.max() <= 1, x[distance > 1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_company_does_not_change_bits(dtype, level):
    """Each small argument alone, among kd = 0 lanes (no small-argument pass in their
    batches), among tiny and subnormal lanes and among kd = +-1 lanes (the pass runs): the
    same bits each time, in each of the three loop layouts."""
    ufunc = numfuse.expm1
    x = _small_arguments(dtype, np.random.default_rng(7))[::7]
    info = np.finfo(dtype)
    companies = [
        np.full(40, 0.01, dtype),
        np.full(40, float(info.smallest_subnormal) * 3, dtype),
        np.full(40, 0.04, dtype),
        np.linspace(-3, 3, 40).astype(dtype),
        np.full(40, 20.0, dtype),
        np.full(40, -1.5, dtype),
    ]
    alone = np.concatenate([ufunc(x[i : i + 1]) for i in range(x.size)])
    for company in companies:
        for offset in (0, 3, 11):
            block = np.concatenate([company[:offset], x, company])
            for got in results_in_three_layouts(ufunc, block):
                got = got[offset : offset + x.size]
                same = got.view(BITS[dtype]) == alone.view(BITS[dtype])
                assert same.all(), (x[~same], got[~same], alone[~same])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values_and_conditions(dtype, level):
    """+-0, subnormals and tiny normals return x, -inf -> -1, +inf and overflow -> +inf, NaN
    -> NumPy's NaN, bit for bit as NumPy, with NumPy's conditions wherever the lane sits."""
    info = np.finfo(dtype)
    special = np.array(
        [
            0.0,
            -0.0,
            float(info.smallest_subnormal),
            -float(info.smallest_subnormal),
            float(info.tiny) / 3,
            -float(info.tiny),
            1e-30,
            -1e-30,
            -np.inf,
            np.inf,
            -1000.0,
            1000.0,
            np.nan,
            -np.nan,
        ],
        dtype,
    )
    with np.errstate(all="ignore"):
        got = numfuse.expm1(special)
        want = np.expm1(special)
    assert np.array_equal(got.view(BITS[dtype]), want.view(BITS[dtype])), (special, got, want)
    n = 37
    for value in (1000.0, np.inf, -np.inf, np.nan, -1000.0):
        for position in (0, 5, 16, n - 1):
            x = np.linspace(-0.3, 0.3, n).astype(dtype)
            x[position] = value
            assert fp_conditions(numfuse.expm1, x) == fp_conditions(np.expm1, x), (value, position)
