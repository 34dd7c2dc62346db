"""tan's ufunc loops at every level: float32 at AVX-512 tests the lanes outside the kernel's
common path (+-0, subnormals, |x| >= 2^17, inf, NaN) once per contiguous call and recomputes
only the flagged batches after the loop, an in-place call's flagged pair by the whole kernel.
Whichever layout and wherever the rare lanes sit: the bits of evaluate's kernel, the same bits
in every layout, NumPy's NaNs and NumPy's floating-point conditions."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import numfuse
from conftest import fp_conditions, results_in_three_layouts

BITS = {np.float32: np.uint32, np.float64: np.uint64}


def _rare(dtype) -> list[float]:
    info = np.finfo(dtype)
    values = [0.0, -0.0, float(info.smallest_subnormal), -float(info.tiny) / 2, float(info.tiny)]
    values += [np.nan, -np.nan, np.inf, -np.inf, 1e30, -3e7]
    if dtype == np.float32:  # the common path's ends: FLT_MIN <= |x| < 2^17
        values += [2.0**17, -(2.0**17), float(np.nextafter(np.float32(2.0**17), 0)), 2.0**-12]
    else:
        values += [1.5e6, -1.5e6, 2.0**-27, -(2.0**-28)]
    return values


@pytest.mark.parametrize("team", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tan_rare_lanes_same_bits_and_conditions(dtype, team, level, threads):
    numfuse.set_num_threads(team)
    n = 100_003
    rng = np.random.default_rng(27)
    for value in [None, *_rare(dtype)]:
        for positions in ((0,), (n // 2, n // 3 + 1), (n - 1, 5, n // 7)):
            x = rng.uniform(-20, 20, n).astype(dtype)
            if value is not None:
                x[list(positions)] = value
            with np.errstate(all="ignore"):
                got, inplace, strided = results_in_three_layouts(numfuse.tan, x)
                kernel = numfuse.evaluate("tan(x)", local_dict={"x": x})
                ref = np.tan(x)
            for other in (inplace, strided, kernel):
                same = got.view(BITS[dtype]) == other.view(BITS[dtype])
                assert same.all(), (value, positions, x[~same], got[~same], other[~same])
            nan = np.isnan(ref)
            assert np.array_equal(np.isnan(got), nan), value
            assert np.array_equal(got[nan].view(BITS[dtype]), ref[nan].view(BITS[dtype])), value
            tiny = np.abs(x) < (2.0**-12 if dtype == np.float32 else 2.0**-27)  # tan x = x
            assert np.array_equal(got[tiny].view(BITS[dtype]), x[tiny].view(BITS[dtype])), value
            assert fp_conditions(numfuse.tan, x) == fp_conditions(np.tan, x), (value, positions)


# Each lane of the common path's edges, alone in an ordinary array: the ends of FLT_MIN <= |x| <
# 2^17 from both sides, and the values the deferred screen tells apart by class (quiet and
# signalling NaNs of both signs, zeros, the largest subnormal) or by the largest |x| (2^17,
# inf): at every lane of a pair of batches, the ufunc's bits are evaluate's kernel's.
EDGE_BITS_F32 = [
    0x00800000, 0x80800000, 0x007FFFFF, 0x807FFFFF, 0x00000000, 0x80000000,
    0x47FFFFFF, 0xC7FFFFFF, 0x48000000, 0xC8000000, 0x7F800000, 0xFF800000,
    0x7FC00000, 0xFFC00000, 0x7FA00000, 0xFFA00000,
]  # fmt: skip


@pytest.mark.parametrize("bits", EDGE_BITS_F32)
def test_tan_float32_screen_flags_every_lane(bits, level):
    numfuse.set_num_threads(1)
    n = 4096 + 64
    x = np.random.default_rng(30).uniform(-20, 20, n).astype(np.float32)
    value = np.uint32(bits).view(np.float32)
    for lane in range(64, 128):
        y = x.copy()
        y[lane] = value
        with np.errstate(all="ignore"):
            got = numfuse.tan(y)
            kernel = numfuse.evaluate("tan(x)", local_dict={"x": y})
        assert np.array_equal(got.view(np.uint32), kernel.view(np.uint32)), (hex(bits), lane)
        if not np.isnan(value):
            assert fp_conditions(numfuse.tan, y) == fp_conditions(np.tan, y), (hex(bits), lane)


def test_tan_float32_every_length_and_offset(level):
    """The contiguous loop's lengths around its runs of 32 floats (AVX-512: the software-
    pipelined tan_f32_common_run takes the whole pairs, its first and last run apart from the
    rest) at every alignment of input and output: evaluate's bits, a rare lane anywhere."""
    numfuse.set_num_threads(1)
    base = np.random.default_rng(31).uniform(-20, 20, 400).astype(np.float32)
    out = np.empty(416, np.float32)
    for n in [*range(1, 140), 191, 192, 193, 255, 256, 257, 383]:
        for offset in (0, 1, 5, 15):
            x = base[offset : offset + n].copy() if offset % 2 else base[offset : offset + n]
            want = numfuse.evaluate("tan(x)", local_dict={"x": x})
            got = numfuse.tan(x, out=out[15 - offset : 15 - offset + n])
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (n, offset)
    x = base[:300].copy()
    for lane in (0, 31, 32, 63, 64, 255, 256, 299):
        y = x.copy()
        y[lane] = 1e30
        want = numfuse.evaluate("tan(x)", local_dict={"x": y})
        assert np.array_equal(numfuse.tan(y).view(np.uint32), want.view(np.uint32)), lane


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tan_spanning_inputs_same_bits_and_conditions(dtype, level, threads):
    """Inputs spanning every magnitude, where most batches are flagged."""
    numfuse.set_num_threads(1)
    n = 40_000
    rng = np.random.default_rng(28)
    bits = rng.integers(0, np.iinfo(BITS[dtype]).max, n, dtype=BITS[dtype], endpoint=True)
    x = bits.view(dtype)
    x[np.isnan(x)] = np.nan  # quiet: NumPy's tan raises invalid for signalling NaNs
    with np.errstate(all="ignore"):
        got, inplace, strided = results_in_three_layouts(numfuse.tan, x)
        kernel = numfuse.evaluate("tan(x)", local_dict={"x": x})
    for other in (inplace, strided, kernel):
        same = got.view(BITS[dtype]) == other.view(BITS[dtype])
        assert same.all(), (x[~same], got[~same], other[~same])
    assert fp_conditions(numfuse.tan, x) == fp_conditions(np.tan, x)


def _tan_ulp_errors(x: np.ndarray, got: np.ndarray) -> np.ndarray:
    """|got - tan x| in ulps of tan x in got's precision (mpmath at 200 bits)."""
    digits = np.finfo(got.dtype).nmant + 1
    err = np.empty(x.size)
    with mpmath.workprec(200):
        for i, (xi, gi) in enumerate(zip(x.tolist(), got.tolist())):
            exact = mpmath.tan(mpmath.mpf(xi))
            _, e = np.frexp(float(exact))
            err[i] = float(abs(mpmath.mpf(gi) - exact) / mpmath.ldexp(1, int(e) - digits))
    return err


# The float32 x below 2^17 closest to a multiple of pi/2 (an exhaustive search over k with
# pi/2 to 200 bits): 161 pi/2 is 2^-27.8 from 252.898208, 33433 pi/2 2^-25.9 from 52516.434.
HARDEST_REDUCTIONS_F32 = [252.89820861816406, 505.7964172363281, 4.71238899230957,
                          52516.43359375, 1011.5928344726562, 105032.8671875]  # fmt: skip


def test_tan_float32_within_1_ulp_near_quarter_and_half_pi(level):
    """float32 tan next to (k + 1/2) pi/2 (|tan x| ~ 1, where the AVX-512 kernel's w = c - r1^2,
    off r by k C2, weighs most: largest for k near 2^17 2/pi) and next to k pi/2 (the hardest
    reductions, r down to 2^-27.8), up to x ~ 2^17, the ufunc and evaluate."""
    numfuse.set_num_threads(1)
    rng = np.random.default_rng(31)
    k = np.concatenate([np.arange(1, 100), rng.integers(100, 83_400, 200), [83_441, 83_442]])
    centres = np.concatenate([(k + 0.5) * (np.pi / 2), k * (np.pi / 2)]).astype(np.float32)
    steps = rng.integers(-8, 9, centres.size)
    x = np.nextafter(centres, np.float32(np.inf)) - centres  # float32 ulp at each centre
    x = centres + steps.astype(np.float32) * x
    x = np.concatenate([x, np.float32(HARDEST_REDUCTIONS_F32)]).astype(np.float32)
    x = np.concatenate([x, -x])
    assert np.abs(x).max() < 2.0**17
    got = numfuse.tan(x)
    assert np.array_equal(got, numfuse.evaluate("tan(x)", local_dict={"x": x}))
    err = _tan_ulp_errors(x, got)
    print(f"tan float32 at {level}: max {err.max():.4f} ULP on {x.size} points near (k/2) pi/2")
    assert err.max() <= 1.0, (x[err.argmax()], err.max())


def test_tan_float64_within_1_ulp_where_tan_is_near_one(level):
    """float64 tan next to (k + 1/2) pi/2 (|r| ~ pi/4: |tan x| ~ 1, the kernels' largest
    errors; the sweep of function_table.py has none of these points) and next to k pi/2, up to
    k ~ 1.9e6 (x below 1.5e6, the vector reduction's range), the ufunc and evaluate."""
    numfuse.set_num_threads(1)
    rng = np.random.default_rng(29)
    k = np.concatenate([np.arange(1, 200), rng.integers(200, 1_900_000, 300)])
    centres = np.concatenate([(k + 0.5) * (np.pi / 2), k * (np.pi / 2)])
    steps = rng.integers(-40, 41, centres.size)
    x = centres + steps * np.spacing(centres)
    x = np.concatenate([x, -x])
    got = numfuse.tan(x)
    assert np.array_equal(got, numfuse.evaluate("tan(x)", local_dict={"x": x}))
    err = _tan_ulp_errors(x, got)
    print(f"tan float64 at {level}: max {err.max():.4f} ULP on {x.size} points near (k/2) pi/2")
    assert err.max() <= 1.0, (x[err.argmax()], err.max())


# The k below 954930 (k pi/2 < 1.5e6, the vector reduction's range) whose k pi/2 lies
# closest, relative to its size, to a double: an exhaustive search over k with pi/2 to 190
# bits; the double next to 204551 pi/2 is 2^-72.6 of itself from it (|r| ~ 2^-54).
HARDEST_REDUCTION_K = [204551, 409102, 818204, 554999, 789615, 263205, 526410, 846793, 321859]


def test_tan_float64_hardest_reductions_below_the_fast_limit(level):
    """The doubles nearest those k pi/2, both signs: tan is r or -1/r with r ~ 2^-54 after
    the cancellation, so any error of the reduction's pieces of pi/2 shows up whole."""
    with mpmath.workprec(300):
        x = np.array([float(mpmath.mpf(k) * mpmath.pi / 2) for k in HARDEST_REDUCTION_K])
    x = np.concatenate([x, -x])
    got = numfuse.tan(x)
    assert np.array_equal(got, numfuse.evaluate("tan(x)", local_dict={"x": x}))
    err = _tan_ulp_errors(x, got)
    print(f"tan float64 at {level}: max {err.max():.4f} ULP on the hardest reductions")
    assert err.max() <= 1.0, (x[err.argmax()], err.max())
