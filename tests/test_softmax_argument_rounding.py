"""log_softmax at a group's maximum and logsumexp near 0: the rounding of x - max.

Each term exp(x - max) of the sum S is computed from x - max rounded, which costs the term
a relative error of up to |x - max| u. log_softmax at the maximum is -log(S) ~ -(S - 1)
and logsumexp with a maximum of 0 is log(S): where the maximum dominates, those results
inherit that error in full (e.g. [0.1, -699.93]: 102 eps before). A group where the
roundings may reach the result (lse::argument_rounding_matters in
src/core/lse_accumulator.hpp, from a bound on sum t |ln t|) is summed again with x - max
as a double word. These tests check those results against mpmath in every layout (1-d,
rows, columns, short groups, strided, groups longer than one chunk), float32 and float64.
"""

from __future__ import annotations

import zlib

import mpmath
import numpy as np
import pytest

import numfuse as nf
from conftest import relative_error_in_eps

CHUNK = 65536  # kReduceChunk

# (the maximum, the other element): log_softmax at the maximum is -log1p(exp(low - top)).
PAIRS = {
    np.float64: [(0.1, -699.93), (0.3, -700.3), (1e-3, -40.1234567), (5.5, -30.123)],
    np.float32: [(0.1, -80.3), (0.3, -86.7), (1e-3, -40.12346), (5.5, -30.123), (2.75, -17.3)],
}


def rng_for(*key):
    """A generator of its own for each key (strings and ints): a test's data never depends
    on which tests ran before it."""
    return np.random.default_rng([20261128, zlib.crc32(repr(key).encode())])


def group(dtype, top, low, n, key):
    """top followed by n - 1 values near low (each a different rounding of x - top)."""
    rng = rng_for(*key)
    rest = low + rng.uniform(-0.5, 0.5, n - 1) if n > 2 else np.array([low])
    return np.concatenate([[top], rest]).astype(dtype)


def log1p_rest(x):
    """log(sum of exp(x - max)) = log1p(the other terms) of a 1-d group, in mpmath, from
    its distinct values (fast for long groups)."""
    values, counts = np.unique(x.astype(np.float64), return_counts=True)
    with mpmath.workdps(60):
        top = mpmath.mpf(float(values[-1]))
        rest = mpmath.fsum(
            int(k) * mpmath.exp(mpmath.mpf(float(v)) - top)
            for v, k in zip(values[:-1], counts[:-1])
        )
        return float(mpmath.log1p(rest + (int(counts[-1]) - 1)))


def at_max_error(got, x, dtype):
    """The relative error in eps of log_softmax(x)[argmax] given the whole result got."""
    top = int(np.argmax(x))
    return relative_error_in_eps(got[top], -log1p_rest(x), dtype)


def layouts_log_softmax(x):
    """log_softmax of the group x in each layout, as the 1-d result."""
    rows = np.stack([x[::-1], x, x])
    columns = np.ascontiguousarray(rows.T)
    wide = np.ascontiguousarray(np.stack([x] * 40).T)  # 40 groups across lanes
    spread = np.zeros(3 * x.size, x.dtype)
    spread[1::3] = x
    yield "1-d", nf.log_softmax(x)
    yield "rows", nf.log_softmax(rows, axis=1)[1]
    yield "columns", nf.log_softmax(columns, axis=0)[:, 1]
    yield "wide columns", nf.log_softmax(wide, axis=0)[:, 7]
    yield "strided", nf.log_softmax(spread[1::3])


def layouts_logsumexp(x):
    """logsumexp of the group x in each layout."""
    rows = np.stack([x[::-1], x, x])
    wide = np.ascontiguousarray(np.stack([x] * 40).T)
    spread = np.zeros(3 * x.size, x.dtype)
    spread[1::3] = x
    yield "1-d", nf.logsumexp(x)
    yield "rows", nf.logsumexp(rows, axis=1)[1]
    yield "columns", nf.logsumexp(np.ascontiguousarray(rows.T), axis=0)[1]
    yield "wide columns", nf.logsumexp(wide, axis=0)[7]
    yield "strided", nf.logsumexp(spread[1::3])


# Where the maximum's exp(0) = 1 holds a lane's sum at 1, every smaller term goes into the
# lane's compensation word, so a lane of many such terms (a column is one lane; a chunk of
# 65536 equal terms 4096 a lane) needs that word's own additions compensated: added
# plainly they lost up to about (its terms) u / 2 of the result (5.3 eps for a float32
# column of 999 terms near e^-20, 250 eps for 65535 equal terms near e^-700; arch/
# softmax_exp.hpp: add_biased); test_many_equal_terms_in_one_chunk has the longest lanes.


def check(errors):
    """errors: (label, error in eps); every one must be within 4 eps."""
    bad = [(label, error) for label, error in errors if error > 4]
    assert not bad, bad


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [2, 7, 40, 1000])
def test_log_softmax_at_a_dominant_maximum(level, dtype, n):
    errors = []
    for top, low in PAIRS[dtype]:
        x = group(dtype, top, low, n, ("log_softmax", np.dtype(dtype).name, n, top))
        for name, got in layouts_log_softmax(x):
            errors.append(((name, top, low, n), at_max_error(got, x, dtype)))
    check(errors)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [2, 7, 40, 1000])
def test_logsumexp_with_a_maximum_of_zero(level, dtype, n):
    errors = []
    for _, low in PAIRS[dtype]:
        x = group(dtype, 0.0, low, n, ("logsumexp", np.dtype(dtype).name, n, low))
        expected = log1p_rest(x)
        for name, got in layouts_logsumexp(x):
            errors.append(((name, low, n), relative_error_in_eps(got, expected, dtype)))
    check(errors)


# Rows whose x - max takes Fast2Sum's low word (arch/softmax_exp.hpp: FastErrorMLarger for
# a maximum m > 0 and x > -2^(e_m + 1), FastErrorXLarger for m <= 0), and rows that leave it
# midway (an element at or below -2^(e_m + 1)): (the maximum, the others' centre, an element
# placed at `at` or None). The others lie near x - max = -30 (15 eps at the maximum if the
# low word were wrong or missing).
# The same rows for both dtypes (every value is exact in float32).
FAST_ROWS = [
    (40.0, 10.0, None),
    (33.0, 3.0, None),
    (-1.0, -31.0, None),
    (0.0, -30.0, None),
    (40.0, 10.0, (500, -64.0)),
    (40.0, 10.0, (500, -63.9)),
    (31.9, 1.9, (33, -33.0)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [40, 77, 1000])
def test_rows_with_fast_low_words(level, dtype, n):
    errors = []
    for top, low, extra in FAST_ROWS:
        x = group(dtype, top, low, n, ("fast rows", np.dtype(dtype).name, n, top, low))
        if extra is not None and extra[0] < n:
            x[extra[0]] = extra[1]
        for name, got in layouts_log_softmax(x):
            errors.append(((name, top, low, extra, n), at_max_error(got, x, dtype)))
        # softmax's numerators take the same low words (its entry at x[1]: exp(x[1] - top) / S).
        got = nf.softmax(np.stack([x, x[::-1]]), axis=1)[0][1]
        with mpmath.workdps(60):
            expected = float(
                mpmath.exp(mpmath.mpf(float(x[1])) - mpmath.mpf(float(top)) - log1p_rest(x))
            )
        error = relative_error_in_eps(got, expected, dtype)
        errors.append((("softmax rows", top, low, extra, n), error))
    check(errors)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_groups_longer_than_a_chunk(level, dtype):
    # One run of two chunks and columns of two chunks of steps: log_softmax at the maximum
    # and logsumexp at 0. Equal terms (one rounding of x - max for all: no averaging out)
    # after the maximum: a column is one lane of the online fold, whose terms all take
    # x - max after it (5258 eps at sse2 before log_softmax took softmax's passes instead,
    # reduce/softmax.cpp), thousands of equal terms a lane.
    errors = []
    for top, low in PAIRS[dtype]:
        x = np.full(CHUNK + 4000, low, dtype)
        x[5] = top
        errors.append((("1-d", top), at_max_error(nf.log_softmax(x), x, dtype)))
        columns = np.ascontiguousarray(np.stack([x, x[::-1], x]).T)
        got = nf.log_softmax(columns, axis=0)[:, 0]
        errors.append((("columns", top), at_max_error(got, x, dtype)))
        z = x - x.max()
        expected = log1p_rest(z)
        got = nf.logsumexp(z)
        errors.append((("lse 1-d", low), relative_error_in_eps(got, expected, dtype)))
        got = nf.logsumexp(np.stack([z, z]).T, axis=0)[1]
        errors.append((("lse columns", low), relative_error_in_eps(got, expected, dtype)))
    check(errors)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [4096, CHUNK])
def test_many_equal_terms_in_one_chunk(level, dtype, n):
    # Groups of one chunk at most: the maximum, then n - 1 equal terms (one rounding of
    # x - max for all, one-sided), so every lane's compensation word takes thousands of
    # equal terms: 1-d (the row kernel, two accumulators' lanes), strided (the strided
    # loop: one accumulator's lanes), columns across lanes (softmax_columns for 4096 steps
    # at AVX-512, the strips elsewhere). Plain additions of that word gave up to 5574 eps
    # (float64, 65536, wide columns at sse2).
    errors = []
    for top, low in PAIRS[dtype]:
        x = np.full(n, low, dtype)
        x[3] = top
        errors.append((("1-d", top, n), at_max_error(nf.log_softmax(x), x, dtype)))
        spread = np.zeros(2 * n, dtype)
        spread[::2] = x
        errors.append((("strided", top, n), at_max_error(nf.log_softmax(spread[::2]), x, dtype)))
        wide = np.ascontiguousarray(np.stack([x] * 20).T)
        got = nf.log_softmax(wide, axis=0)[:, 11]
        errors.append((("wide columns", top, n), at_max_error(got, x, dtype)))
    check(errors)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_short_rows_at_the_maximum(level, dtype):
    # Rows of 2-8 values of normal(0, 4) (8.2 eps at the maximum in float64 before): rows
    # and columns (short groups across lanes), every row's maximum against mpmath.
    rng = rng_for("random rows", np.dtype(dtype).name)
    worst = 0.0
    for n in range(2, 9):
        x = (rng.standard_normal((300, n)) * 4).astype(dtype)
        by_rows = nf.log_softmax(x, axis=1)
        by_columns = nf.log_softmax(np.ascontiguousarray(x.T), axis=0).T
        for row in range(x.shape[0]):
            worst = max(
                worst,
                at_max_error(by_rows[row], x[row], dtype),
                at_max_error(by_columns[row], x[row], dtype),
            )
    assert worst <= 4


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_evaluate_logsumexp_with_a_maximum_of_zero(level, dtype):
    # evaluate's logsumexp stages (reduce/stream.hpp) in their three layouts: a row per
    # output (short runs), runs longer than a chunk, and columns; operand x or x + 0 (a
    # computed block).
    errors = []
    for _, low in PAIRS[dtype]:
        x = group(dtype, 0.0, low, 40, ("evaluate", np.dtype(dtype).name, low))
        expected = log1p_rest(x)
        rows = np.stack([x[::-1], x, x])
        columns = np.stack([x] * 80).T
        for text in ("logsumexp(x, axis=1)", "logsumexp(x + 0, axis=1)"):
            got = nf.evaluate(text, {"x": rows})[1]
            errors.append(((text, low), relative_error_in_eps(got, expected, dtype)))
            got = nf.evaluate(text.replace("axis=1", "axis=0"), {"x": columns})[3]
            errors.append(((text, low), relative_error_in_eps(got, expected, dtype)))
        long = np.full(CHUNK + 4000, low, dtype)
        long[5] = 0.0
        expected = log1p_rest(long)
        for text in ("logsumexp(x)", "logsumexp(x + 0)"):
            got = nf.evaluate(text, {"x": long})
            errors.append(((text, low), relative_error_in_eps(got, expected, dtype)))
    check(errors)
