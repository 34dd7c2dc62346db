"""softmax / log_softmax's two passes (src/core/reduce/softmax.cpp, arch/softmax_loops.hpp).

Each group's maximum is found first, then exp(x - max) is summed (softmax stores it into
the output), then the output is scaled; groups longer than one chunk (65536 elements) fold
each chunk with its own maximum and rescale it in the write pass. These tests aim at what
that can get wrong: the float32 path against mpmath (the numerators, the 1/sum factor, the
chunk rescale), chunks whose maxima differ by a lot, special values in one chunk only,
out= aliasing the input when the numerators are stored into it, narrow strips, subnormal
numerators and products over runs of many chunks, and the bits for every team size.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import numfuse as nf
from conftest import mp_parts, relative_error_in_eps
from test_logsumexp import assert_same, scipy_quiet


def rng_for(*key):
    """A generator of its own for each test and key, seeded from the key (strings and
    ints): a test's data never depends on which tests ran before it (pytest-xdist, -k)."""
    return np.random.default_rng([20261126, zlib.crc32(repr(key).encode())])


CHUNK = 65536  # kReduceChunk
LONG = 1_100_003  # 17 chunks (more than one per thread of any team tested); no multiple of 16
NAMES = ("softmax", "log_softmax")

FLOAT32_INPUTS = {
    "well-conditioned": lambda rng, n: rng.uniform(-1, 1, n),
    "normal": lambda rng, n: rng.standard_normal(n) * 30,
    "wide-range": lambda rng, n: rng.uniform(-700, 700, n),
    "wide-negative": lambda rng, n: rng.uniform(-90, -10, n),
    "sorted": lambda rng, n: np.sort(rng.uniform(-40, 40, n)),
}

_CACHE: dict = {}


def with_reference(key, make):
    """(x, mpmath's softmax, mpmath's log_softmax) for x = make(), made and computed once
    per key: every level reuses them (mpmath is the slow part)."""
    if key not in _CACHE:
        x = make()
        _CACHE[key] = (x, *mp_parts(x)[1:])
    return _CACHE[key]


def expected(name, x, axis=None):
    """SciPy's answer computed in float64 over a contiguous last axis (pairwise sums), in
    x's dtype: NumPy sums a non-contiguous axis in a plain loop, 1e-4 off in float32 and
    60 eps in float64 at 1e5 elements."""
    wide = x.astype(np.float64)
    if axis is None:
        return scipy_quiet(name, wide.ravel()).reshape(x.shape).astype(x.dtype)
    moved = np.ascontiguousarray(np.moveaxis(wide, axis, -1))
    return np.moveaxis(scipy_quiet(name, moved, axis=-1), -1, axis).astype(x.dtype)


def check_float32(got_soft, got_log, soft, log_soft):
    normal = soft > np.finfo(np.float32).tiny * 2**24
    assert relative_error_in_eps(got_soft[normal], soft[normal], np.float32) <= 4
    assert relative_error_in_eps(got_log, log_soft, np.float32) <= 4


@pytest.mark.parametrize("kind", sorted(FLOAT32_INPUTS))
def test_float32_rows_and_columns_vs_mpmath(level, kind):
    x, soft, log_soft = with_reference(
        ("f32", kind),
        lambda: FLOAT32_INPUTS[kind](rng_for("f32", kind), 3000).astype(np.float32),
    )
    check_float32(nf.softmax(x), nf.log_softmax(x), soft, log_soft)
    # the same group as a row of a matrix (axis=1), a column (axis=0: lanes across
    # outputs), and a strided row
    rows = np.stack([x, x[::-1], x])
    check_float32(nf.softmax(rows, axis=1)[2], nf.log_softmax(rows, axis=1)[2], soft, log_soft)
    cols = np.ascontiguousarray(rows.T)
    check_float32(
        nf.softmax(cols, axis=0)[:, 0], nf.log_softmax(cols, axis=0)[:, 0], soft, log_soft
    )
    strided = np.repeat(x, 3)[1::3]
    check_float32(nf.softmax(strided), nf.log_softmax(strided), soft, log_soft)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_chunks_with_far_apart_maxima_vs_mpmath(level, dtype):
    # Three chunks whose own maxima differ by 60 and 30: the first chunk's numerators are
    # exp(x - its max), which the write pass rescales by exp(chunk max - group max) / sum.

    def make():
        x = rng_for("chunks", np.dtype(dtype).name).uniform(-5, 0, 2 * CHUNK + 1000)
        x[:CHUNK] -= 60
        x[2 * CHUNK :] -= 30
        return x.astype(dtype)

    x, soft, log_soft = with_reference(("chunks", np.dtype(dtype).name), make)
    eps_type = np.float32 if dtype == np.float32 else np.float64
    tiny = np.finfo(dtype).tiny * 2 ** np.finfo(dtype).nmant
    normal = soft > tiny
    assert relative_error_in_eps(nf.softmax(x)[normal], soft[normal], eps_type) <= 4
    assert relative_error_in_eps(nf.log_softmax(x), log_soft, eps_type) <= 4
    # in place: the numerators are stored over the input
    y = x.copy()
    assert nf.softmax(y, out=y) is y
    assert relative_error_in_eps(y[normal], soft[normal], eps_type) <= 4


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("where", [0, CHUNK + 5, 2 * CHUNK + 3])
def test_special_values_in_one_chunk(level, dtype, where):
    rng = rng_for("special values in one chunk", np.dtype(dtype).name, where)
    base = rng.standard_normal(2 * CHUNK + 100).astype(dtype)
    for value in (np.nan, np.inf, -np.inf):
        x = base.copy()
        x[where] = value
        for name in NAMES:
            assert_same(getattr(nf, name)(x), expected(name, x))
    # a whole chunk of -inf, the others finite: zeros there, the rest as without it
    x = base.copy()
    x[CHUNK : 2 * CHUNK] = -np.inf
    for name in NAMES:
        assert_same(getattr(nf, name)(x), expected(name, x))
    # every element -inf: NaN everywhere, as SciPy
    x = np.full(2 * CHUNK + 100, -np.inf, dtype)
    for name in NAMES:
        assert np.isnan(getattr(nf, name)(x)).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape,axis",
    # rows in cache (softmax_rows) and lanes across columns (softmax_columns): several
    # strips with a partial last batch (1000 = 7 * 128 + 104 lanes), one narrow block,
    # a row of one element, groups whose numerators reach the subnormal range
    [((100, 1000), 0), ((37, 203), 0), ((1000, 100), 1), ((203, 37), 1), ((5, 1), 1)],
)
def test_special_values_per_row_and_column(level, dtype, shape, axis):
    rng = rng_for("special values per row", np.dtype(dtype).name, shape, axis)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    moved = np.moveaxis(x, axis, -1)  # a view: groups along its last axis
    groups = moved.shape[0]
    if groups >= 6 and moved.shape[-1] >= 3:
        moved[1, 2] = np.nan
        moved[2, 1] = np.inf
        moved[3, :] = -np.inf
        moved[4, 0] = -np.inf
        moved[5, :] = np.inf
        moved[groups - 1, 0] = moved[groups - 1, 1:].max() + 120  # saturated: the rest tiny
    if groups >= 8 and moved.shape[-1] >= 3:
        moved[6, 0] = np.inf  # +inf and NaN in one group: NaN (log_softmax scans for it)
        moved[6, -1] = np.nan
        moved[7, -1] = -np.inf  # -inf in the last step only
    for name in NAMES:
        reference = expected(name, x, axis)
        got = getattr(nf, name)(x, axis=axis)
        assert_same(got, reference)
        # in place: softmax stores its numerators over the input
        same = x.copy()
        assert getattr(nf, name)(same, axis=axis, out=same) is same
        assert same.tobytes() == got.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape,axis",
    [((1000, 1000), 0), ((1000, 1000), 1), ((3, 2 * CHUNK + 7), 1), ((2 * CHUNK + 7, 3), 0)],
)
def test_out_aliasing_and_views(level, dtype, shape, axis):
    rng = rng_for("aliasing", np.dtype(dtype).name, shape, axis)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    for name in NAMES:
        reference = expected(name, x, axis)
        same = x.copy()
        assert getattr(nf, name)(same, axis=axis, out=same) is same
        assert_same(same, reference)
        # out= a non-contiguous view, input a transposed copy
        out = np.zeros((shape[0], 2 * shape[1]), dtype)[:, ::2]
        getattr(nf, name)(np.asfortranarray(x), axis=axis, out=out)
        assert_same(out, reference)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape,axis",
    [
        ((2 * CHUNK + 9,), None),  # run mode, three chunks
        ((1000, 1000), 0),  # strips (narrower for softmax than for logsumexp)
        ((1000, 1000), 1),
        ((200_000, 20), 0),  # strips over several chunks of steps
        ((7, 80_000), None),  # a strided view below: several runs per chunk
        ((LONG,), None),  # a long 1-d run: 17 chunks, a partial last one
    ],
)
def test_bits_for_every_team_size(threads, dtype, shape, axis):
    rng = rng_for("team sizes", np.dtype(dtype).name, shape, axis)
    x = (rng.standard_normal(shape) * 5).astype(dtype)
    if shape == (7, 80_000):
        x = x[:, ::2]
    for name in NAMES:
        results = []
        for team in (1, 2, 3, 7):
            nf.set_num_threads(team)
            results.append(getattr(nf, name)(x, axis=axis))
        for other in results[1:]:
            assert other.tobytes() == results[0].tobytes(), (name, shape, axis)
    assert_same(results[0], expected(NAMES[-1], x, axis))


@pytest.mark.parametrize("axis", [0, 1])
def test_float32_wide_spread_subnormal_numerators(level, axis):
    # normal(0, 30) rows span ~200: most numerators exp(x - max) and most products with
    # 1/sum are subnormal in float32. Those batches take the shifted exp's and the scaling
    # pass's rare paths (no float32 multiply on a subnormal: results computed in float64 or
    # with integer scaling). Normal results within 4 eps; subnormal ones within a few steps
    # of the subnormal grid of the float64 answer (relative precision is lost there in any
    # algorithm); exact zeros where that answer rounds to zero.
    x = (rng_for("wide spread", axis).standard_normal((64, 1000)) * 30).astype(np.float32)
    if axis == 0:
        x = np.ascontiguousarray(x.T)
    got = nf.softmax(x, axis=axis)
    wide = expected("softmax", x.astype(np.float64), axis)
    tiny = np.finfo(np.float32).tiny
    normal = wide >= tiny
    assert relative_error_in_eps(got[normal], wide[normal], np.float32) <= 4
    step = np.finfo(np.float32).smallest_subnormal
    assert np.max(np.abs(got[~normal] - wide[~normal]) / step) <= 4
    assert (got[wide < step / 4] == 0).all()
    assert (got >= 0).all()
    # log_softmax away from each group's maximum (where it is -log(1 + tiny terms): those
    # terms take x - max as a double word now, 139 eps off there when they rounded it, but
    # a column's ~1000 terms below ulp(1) still go into one plain float32 compensation
    # word: up to 21 eps there; test_softmax_argument_rounding.py, PLAIN_SUM).
    log_got = nf.log_softmax(x, axis=axis)
    log_wide = expected("log_softmax", x.astype(np.float64), axis)
    away = np.abs(log_wide) > 1e-3
    assert relative_error_in_eps(log_got[away], log_wide[away], np.float32) <= 4


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_tail_length(level, dtype):
    # Rows of 1..70 elements against mpmath: the last partial batch pads with the maximum
    # and zeroes the padding lanes (a padding lane that leaked would add 1 to the sum).
    for n in range(1, 71):
        key = ("tail", np.dtype(dtype).name, n)
        x, soft, log_soft = with_reference(
            key, lambda key=key, n=n: (rng_for(*key).standard_normal(n) * 4).astype(dtype)
        )
        rows = np.stack([x, x, x])
        assert relative_error_in_eps(nf.softmax(rows, axis=1)[1], soft, dtype) <= 4, n
        assert relative_error_in_eps(nf.log_softmax(rows, axis=1)[1], log_soft, dtype) <= 4, n


def long_double_softmax(x):
    """softmax of a 1-d x in x87 long double (64-bit significand: x - max exact or nearly,
    exp to 2^-63), rounded to float64 once."""
    wide = x.astype(np.longdouble)
    numerators = np.exp(wide - wide.max())
    return (numerators / numerators.sum()).astype(np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "in place"])
def test_long_run_subnormal_numerators(level, dtype, layout):
    # A 1-d run of 17 chunks with a wide spread (normal(0, 30)): in float32 most numerators
    # and most products with the chunk factors are subnormal (the shifted exp's and the
    # scaling pass's rare paths), contiguous, strided and in place, against a long double
    # reference (SciPy in float64 rounds x - max: ~130 eps off at |x - max| ~ 150).
    rng = rng_for("long run subnormal", np.dtype(dtype).name, layout)
    x = (rng.standard_normal(LONG) * 30).astype(dtype)
    wide = long_double_softmax(x)
    if layout == "strided":
        source = np.zeros(2 * LONG, dtype)
        source[1::2] = x
        got = nf.softmax(source[1::2])
    elif layout == "in place":
        got = x.copy()
        assert nf.softmax(got, out=got) is got
    else:
        got = nf.softmax(x)
    normal = wide >= np.finfo(dtype).tiny
    assert relative_error_in_eps(got[normal], wide[normal], dtype) <= 4
    step = np.finfo(dtype).smallest_subnormal
    assert np.max(np.abs(got[~normal] - wide[~normal]) / step, initial=0) <= 4
    assert (got >= 0).all()
    # ordinary values (no rare path): the same bound
    y = rng.standard_normal(LONG).astype(dtype)
    assert relative_error_in_eps(nf.softmax(y), long_double_softmax(y), dtype) <= 4


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_run_special_values(level, dtype):
    base = rng_for("long run special", np.dtype(dtype).name).standard_normal(LONG).astype(dtype)
    for where, value in ((7, np.nan), (LONG - 1, np.inf), (CHUNK + 3, -np.inf)):
        x = base.copy()
        x[where] = value
        for name in NAMES:
            assert_same(getattr(nf, name)(x), expected(name, x))
    x = base.copy()
    x[: 3 * CHUNK] = -np.inf  # whole chunks of -inf: zeros there
    for name in NAMES:
        assert_same(getattr(nf, name)(x), expected(name, x))
    x = np.full(LONG, -np.inf, dtype)
    for name in NAMES:
        assert np.isnan(getattr(nf, name)(x)).all()
    x = base.copy()
    x[5] = 1e4  # saturated: one numerator 1, the rest 0 (rare path in every batch)
    for name in NAMES:
        assert_same(getattr(nf, name)(x), expected(name, x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["rows", "columns", "long run"])
def test_terms_at_the_common_path_limits(level, threads, dtype, layout):
    # x - max just above and just below the limits under which a batch leaves the shifted
    # exp's common path (float32: -76 for stored numerators, -87 for sums; float64: -708),
    # and a NaN in one batch of a pair whose other batch is ordinary: each term within the
    # bound of a long double reference whichever path its batch took, the NaN group NaN.
    limits = (-76.0, -87.0) if dtype == np.float32 else (-708.0,)
    n = 4 * CHUNK + 40 if layout == "long run" else 1000
    rng = rng_for("path limits", np.dtype(dtype).name, layout)
    deltas = np.concatenate([[0.0], *[lim + rng.uniform(-1.5, 1.5, 60) for lim in limits]])
    groups = []
    for g in range(6):
        x = rng.uniform(-3, 0, n)
        x[0] = 0.0  # the maximum
        where = rng.choice(np.arange(1, n), deltas.size - 1, replace=False)
        x[where] = deltas[1:] if g % 2 else np.sort(deltas[1:])
        groups.append(x)
    x = np.stack(groups).astype(dtype)  # (6, n): each group a row
    if layout == "long run":
        x = x[:1]
    tiny = np.finfo(dtype).tiny
    for team in (1, 2, 3):
        nf.set_num_threads(team)
        if layout == "columns":
            got = nf.softmax(np.ascontiguousarray(x.T), axis=0).T
            got_log = nf.log_softmax(np.ascontiguousarray(x.T), axis=0).T
        else:
            got = nf.softmax(x, axis=-1)
            got_log = nf.log_softmax(x, axis=-1)
        for row in range(x.shape[0]):
            wide = long_double_softmax(x[row])
            normal = wide >= tiny
            assert relative_error_in_eps(got[row][normal], wide[normal], dtype) <= 4
            step = np.finfo(dtype).smallest_subnormal
            assert np.max(np.abs(got[row][~normal] - wide[~normal]) / step, initial=0) <= 4
            assert_same(got_log[row], expected("log_softmax", x[row]))
    # one NaN: its group NaN, the others' bits unchanged
    y = x.copy()
    y[0, 37] = np.nan
    if layout == "columns":
        got_nan = nf.softmax(np.ascontiguousarray(y.T), axis=0).T
    else:
        got_nan = nf.softmax(y, axis=-1)
    assert np.isnan(got_nan[0]).all()
    assert got_nan[1:].tobytes() == got[1:].tobytes()
