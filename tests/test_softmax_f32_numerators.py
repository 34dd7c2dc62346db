"""softmax's float32 numerators exp(x - max) (arch/softmax_exp.hpp), seen directly.

A group of n entries whose other terms are all below e^-(17.5 + ln n) relative to its
maximum sums to 1 + (less than 2^-25), so its factor 1/sum rounds to exactly 1.0f and
every output is the numerator as the kernel stored it: its own error is measurable from
Python. At the avx2_fma level the float32-lane kernel (x - max as a double word folded
into the reduced argument) and at AVX-512 the native one promise <= 1 ULP of
exp(x - max) over the normal range; SSE2's exp_difference 1 ULP plus 1/2. Each layout
reaches the kernel another way: rows (tail batches and pairs of batches), columns (the
strip kernels), a 1-d run.
"""

from __future__ import annotations

import numpy as np
import pytest

import numfuse as nf

RNG = np.random.default_rng(20261128)


def ulp_error(got, x, m):
    """|got - exp(x - m)| in float32 ULP of the float64 reference (x - m exact there)."""
    want = np.exp(x.astype(np.float64) - m.astype(np.float64))
    _, e = np.frexp(want)
    ulp = np.ldexp(1.0, np.maximum(e - 24, -149))
    return np.abs(got.astype(np.float64) - want) / ulp


def groups(count, width):
    """(count, width) float32 groups: a maximum m anywhere in +-[2^-10, 2^12], the other
    entries m - d rounded, d in [17.5 + ln width, 87] (numerators normal, factor 1.0f)."""
    mag = np.ldexp(1.0, RNG.integers(-10, 12, count)) * RNG.uniform(1, 2, count)
    m = (mag * RNG.choice([-1.0, 1.0], count)).astype(np.float32)
    d = RNG.uniform(17.5 + np.log(width), 87.0, (count, width - 1))
    rest = (m[:, None].astype(np.float64) - d).astype(np.float32)
    rest = np.minimum(rest, m[:, None])  # rounding may not lift an entry above m
    return np.concatenate([m[:, None], rest], axis=1)


def bound(level):
    return 1.5 if level == "sse2" else 1.0


@pytest.mark.parametrize("width", [2, 7, 16, 40, 333])
def test_numerators_of_rows(level, width):
    x = groups(4000 // width + 50, width)
    out = nf.softmax(x, axis=1)
    assert np.all(out[:, 0] == np.float32(1.0))  # the factor is 1.0f
    err = ulp_error(out[:, 1:], x[:, 1:], np.repeat(x[:, :1], width - 1, axis=1))
    assert err.max() <= bound(level)


@pytest.mark.parametrize("width", [3, 64])
def test_numerators_of_columns(level, width):
    x = groups(2000, width)
    cols = np.ascontiguousarray(x.T)  # each group a column: axis 0, lanes across outputs
    out = nf.softmax(cols, axis=0).T
    assert np.all(out[:, 0] == np.float32(1.0))
    err = ulp_error(out[:, 1:], x[:, 1:], np.repeat(x[:, :1], width - 1, axis=1))
    assert err.max() <= bound(level)


def test_numerators_of_one_run(level):
    x = groups(1, 5001)[0]
    out = nf.softmax(x)
    assert out[0] == np.float32(1.0)
    err = ulp_error(out[1:], x[1:], np.full(x.size - 1, x[0]))
    assert err.max() <= bound(level)


def test_exact_ones_and_zeros(level):
    # x = max gives exactly 1 before scaling; -inf gives +0; the row's bits for a team of 1
    # and of 3 are the same.
    x = groups(300, 24)
    x[:, 5] = x[:, 0]
    x[::7, 9] = -np.inf
    previous = nf.get_num_threads()
    try:
        nf.set_num_threads(1)
        one = nf.softmax(x, axis=1)
        nf.set_num_threads(3)
        three = nf.softmax(x, axis=1)
    finally:
        nf.set_num_threads(previous)
    assert np.array_equal(one.view(np.uint32), three.view(np.uint32))
    assert np.all(one[:, 5] == one[:, 0])
    assert np.all(one[::7, 9] == 0) and not np.any(np.signbit(one[::7, 9]))
