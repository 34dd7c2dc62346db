"""softmax / log_softmax over groups across contiguous lanes (axis 0 of a C array).

The driver (src/core/reduce/softmax.cpp) hands such groups to the level's softmax_columns
(arch/softmax_blocks.hpp: softmax and log_softmax on AVX-512, 512 KiB strips through
three passes) or to the strip kernels (softmax: max, then the stored numerators summed,
then the scaling; log_softmax: logsumexp's online fold of (max, sum) per lane in blocks
of 8 steps, then the write; other levels and layouts). These tests aim at what strips and
blocks can get wrong: a lane whose maximum rises in every block (a rescale per block), a
last block shorter than 8 steps, strips with a partial last batch, one step or very few,
terms in the subnormal range, special values in the first step and the last, strided
inputs and outputs, and the bits for every team size and wherever the groups start.
References in long double (x - max exact or nearly, exp to 2^-63), so the bound is the
kernels' own.
"""

from __future__ import annotations

import numpy as np
import pytest

import numfuse as nf
from conftest import relative_error_in_eps
from test_logsumexp import assert_same
from test_softmax_passes import expected

RNG = np.random.default_rng(20261127)
NAMES = ("softmax", "log_softmax")

INPUTS = {
    "normal": lambda shape: RNG.standard_normal(shape) * 3,
    # ascending along axis 0: every block of steps brings a new maximum to every lane
    "ascending": lambda shape: np.sort(RNG.uniform(-40, 40, shape), axis=0),
    # descending: the maximum in the first step, no rescale after it
    "descending": lambda shape: -np.sort(RNG.uniform(-40, 40, shape), axis=0),
    # normal(0, 30): float32 terms exp(x - max) below 2^-126 (the shifted exp's rare path)
    "wide": lambda shape: RNG.standard_normal(shape) * 30,
}

SHAPES = [
    (1000, 1000),  # the benchmark's case: several strips per thread, 1000 = 62 * 16 + 8
    (1003, 257),  # steps not a multiple of 8, lanes not a multiple of a batch
    (9, 1500),  # one block and one step; strips capped at their widest
    (1, 300),  # one step: each group a single element
    (3, 40),  # fewer steps than a block
    (300, 1),  # one group (run mode)
]


def error_in_eps(got, reference, dtype):
    """relative_error_in_eps, 0 for no elements (e.g. log_softmax of one step: all 0)."""
    return relative_error_in_eps(got, reference, dtype) if got.size else 0.0


def long_double_reference(name, x):
    """softmax / log_softmax over axis 0 in long double, rounded to x's dtype once."""
    wide = x.astype(np.longdouble)
    shifted = wide - wide.max(axis=0)
    e = np.exp(shifted)
    total = e.sum(axis=0)
    result = e / total if name == "softmax" else shifted - np.log(total)
    return result.astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("inputs", sorted(INPUTS))
def test_against_long_double(level, dtype, shape, inputs):
    x = INPUTS[inputs](shape).astype(dtype)
    tiny = np.finfo(dtype).tiny
    for name in NAMES:
        got = getattr(nf, name)(x, axis=0)
        reference = long_double_reference(name, x)
        assert got.dtype == dtype and got.shape == shape
        if name == "softmax":
            normal = reference >= tiny
            assert error_in_eps(got[normal], reference[normal], dtype) <= 4, name
            step = np.finfo(dtype).smallest_subnormal
            assert np.max(np.abs(got[~normal] - reference[~normal]) / step, initial=0) <= 4
        else:
            # -log(1 + tiny terms) at a saturated maximum: those terms use a rounded
            # x - max (documented); everywhere else the 4-eps bound.
            away = np.abs(reference) > 1e-3
            assert error_in_eps(got[away], reference[away], dtype) <= 4, name
            assert np.all(got <= 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("steps", [1000, 13])
def test_special_values_per_column(level, dtype, steps):
    x = (RNG.standard_normal((steps, 600)) * 4).astype(dtype)
    x[0, 1] = np.nan  # NaN in the first step (before any maximum)
    x[steps // 2, 2] = np.nan
    x[steps - 1, 3] = np.inf  # +inf in the last step
    x[:, 4] = -np.inf  # every step -inf
    x[: min(8, steps - 1), 5] = -np.inf  # a first block of -inf, then finite steps
    x[:, 6] = np.inf
    x[0, 7] = np.inf  # +inf and NaN in one group: NaN (log_softmax scans for it)
    x[steps - 1, 7] = np.nan
    x[steps - 1, 8] = -np.inf  # -inf in the last step only
    x[steps // 3, 9] = x[:, 9].max() + 120  # saturated: the others' terms tiny
    x[steps - 1, 599] = np.inf  # the last lane of the last, partial strip
    x[0, 320] = -np.inf  # a lane of a later strip
    for name in NAMES:
        assert_same(getattr(nf, name)(x, axis=0), expected(name, x, 0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_strided_input_and_output(level, dtype):
    # Steps apart by two rows (the column kernels with a longer step); lanes apart by two
    # elements and a strided out= (the strip kernels): all within the bound.
    base = (RNG.standard_normal((2000, 1200)) * 3).astype(dtype)
    for x in (base[::2], base[:, ::2], base[::2, 1::2]):
        for name in NAMES:
            reference = long_double_reference(name, x)
            got = getattr(nf, name)(x, axis=0)
            assert relative_error_in_eps(got, reference, dtype) <= 4, (name, x.strides)
            out = np.zeros((x.shape[0], 2 * x.shape[1]), dtype)[:, ::2]
            assert getattr(nf, name)(x, axis=0, out=out) is out
            assert relative_error_in_eps(out, reference, dtype) <= 4, (name, x.strides)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1000, 1003), (64, 5000), (1003, 37)])
def test_bits_for_every_team_size(threads, dtype, shape):
    # The team size moves where each thread's block of lanes and its strips start; each
    # group's bits must not move with it.
    x = (RNG.standard_normal(shape) * 5).astype(dtype)
    for name in NAMES:
        results = []
        for team in (1, 2, 3, 7):
            nf.set_num_threads(team)
            results.append(getattr(nf, name)(x, axis=0))
        for other in results[1:]:
            assert other.tobytes() == results[0].tobytes(), (name, shape)
        # and the same bits when the groups start at another lane (a view of 40 columns)
        part = getattr(nf, name)(x[:, 17:57], axis=0)
        assert part.tobytes() == np.ascontiguousarray(results[0][:, 17:57]).tobytes(), name


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lanes", [16, 24, 27, 40, 1000])
@pytest.mark.parametrize("inputs", ["normal", "ascending", "wide"])
def test_contiguous_lanes_match_strided_lanes(level, dtype, lanes, inputs):
    # The strip kernels take contiguous lanes two full batches at a time and the rest (a
    # full batch, a partial one) lane by lane; strided lanes take the second way only. Each
    # lane's operations are the same either way, so the bits must be. Lane counts: whole
    # pairs of batches, a pair and one batch, a pair, a batch and a part (float32: 8 lanes
    # a batch at AVX2, 16 at AVX-512; float64 4 / 8), several strips. At AVX-512 both
    # take the column kernel for contiguous lanes (another summation): nothing to compare
    # there.
    if level == "avx512":
        pytest.skip("contiguous lanes take softmax_columns at avx512")
    x = INPUTS[inputs]((203, lanes)).astype(dtype)
    x[5, 3] = np.nan
    x[7, lanes - 1] = np.inf
    x[:, lanes // 2] = -np.inf
    wide = np.zeros((203, 2 * lanes), dtype)
    wide[:, ::2] = x
    strided = wide[:, ::2]

    def assert_bits(a, b, name):
        # NaN where the other has NaN (its sign: whichever operand the compiler put first
        # in the NaN * NaN of a group with +inf), every other value bit for bit.
        assert np.array_equal(np.isnan(a), np.isnan(b)), name
        keep = ~np.isnan(a)
        assert a[keep].tobytes() == b[keep].tobytes(), name

    for name in NAMES:
        fn = getattr(nf, name)
        got = fn(x, axis=0)
        assert_bits(got, fn(strided, axis=0), name)
        out = np.zeros((203, 2 * lanes), dtype)[:, ::2]
        fn(strided, axis=0, out=out)
        assert_bits(got, np.ascontiguousarray(out), name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1000, 1000), (1003, 257), (9, 1500)])
@pytest.mark.parametrize("inputs", ["normal", "wide"])
def test_in_place_same_bits(level, threads, dtype, shape, inputs):
    # out= x itself: each strip's maximum and sum passes read x before its write pass
    # overwrites it (log_softmax's column kernel writes (x - m) - log(sum) from x), and a
    # group holding +inf scans its own x for NaN before that. The same bits as a new
    # result, at every team size.
    x = INPUTS[inputs](shape).astype(dtype)
    x[shape[0] // 2, 3] = np.inf
    x[0, 3] = np.nan
    x[shape[0] - 1, shape[1] - 2] = np.inf
    for name in NAMES:
        fn = getattr(nf, name)
        fresh = fn(x, axis=0)
        for team in (1, 2, 3):
            nf.set_num_threads(team)
            y = x.copy()
            assert fn(y, axis=0, out=y) is y
            assert np.array_equal(np.isnan(y), np.isnan(fresh)), (name, team)
            keep = ~np.isnan(fresh)
            assert y[keep].tobytes() == fresh[keep].tobytes(), (name, team)
