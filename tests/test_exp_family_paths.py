"""The exp family's switch points at every level: exp, exp2, expm1, sinh, cosh and tanh change
method per batch (subnormal and zero results without vscalef's or a multiply's subnormal
operands, tiny arguments computed as a safe stand-in, sinh/cosh's large-argument part run
only for the batches that need it, expm1 beyond 40 from its own reduction), and the exp loop
collects its floating-point conditions with vector compares. A wrong switch shows here:
results within 1 ULP of mpmath on both sides of every switch, the same bits whichever lanes
share a batch, and NumPy's conditions wherever the rare lane sits in the array."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import numfuse
from conftest import fp_conditions, results_in_three_layouts, ulp_distance
from function_table import FUNCTIONS

BITS = {np.float32: np.uint32, np.float64: np.uint64}


def _edges(name: str, dtype) -> list[float]:
    """The arguments where the kernels switch method (both signs where the function is odd
    or even), with the overflow and underflow thresholds."""
    f64 = dtype == np.float64
    lnmax = float(np.log(np.finfo(dtype).max))
    lntiny = float(np.log(np.finfo(dtype).tiny))
    lnsub = float(np.log(np.finfo(dtype).smallest_subnormal))
    if name == "exp":
        return [lnmax, lntiny, lnsub, -708.0 if f64 else -87.0, 708.0 if f64 else 87.0]
    if name == "exp2":
        return (
            [-1022.0, -1074.0, -1075.0, 1024.0, 1022.0] if f64 else [-126.0, -149.0, -150.0, 128.0]
        )
    if name == "expm1":
        # [0x1.6p-6, 0x1.1p-4): the AVX-512 float64 polynomial's lanes (kd = +-1); -37.43:
        # where the result reaches -1; float32 (AVX-512): 0x1.0cp-4 the end of kd = 0, 1/4
        # where the hold at 2^-25 starts, 2^-25 where x is returned, 16 the fast form's end,
        # -18 and 89 the clamps, -17.33 where the result reaches -1
        edges = [40.0, -40.0, 2.0**-54, -(2.0**-54), lnmax, 2.0**-30, 0.328125, -0.328125]
        edges += [
            float.fromhex(h) * s for h in ("0x1.6p-6", "0x1.1p-4", "0x1.0cp-4") for s in (1, -1)
        ]
        return [
            *edges,
            -37.43,
            0.25,
            -0.25,
            2.0**-25,
            -(2.0**-25),
            16.0,
            -16.0,
            -18.0,
            -17.33,
            89.0,
        ]
    if name in ("sinh", "cosh"):
        big = lnmax + float(np.log(2))
        # 0.5, 20, 2^-12: the float32 (AVX-512) sinh polynomial's end, e^-a's clamp, x itself;
        # 3, 22: the AVX-512 float64 exponential form's start and its e^-a term's end
        edges = (18.0, 2.0**-27, 2.0**-30, big, 22.0, 40.0, 0.5, 20.0, 2.0**-12, 3.0)
        return [s * v for v in edges for s in (1, -1)]
    assert name == "tanh"
    # 0.25: the float64 polynomial's end; the float32 (AVX-512) table's cells: four per
    # binade from 2^-4 to 8, 5/64 (the end of its small cell), 9.25 (its clamp), 9.0109
    # (where float32 tanh reaches 1); the float32 AVX2+FMA table's cells: the half binades
    # of a + 3/4
    cells = [2.0**e * (1 + q / 4) for e in range(-4, 4) for q in range(4)]
    cells += [0.75, 1.25, 2.25, 3.25, 5.25, 7.25]
    edges = (19.5, 2.0**-27, 2.0**-30, 9.0, 0.25, 9.25, 9.0109, 5 / 64, 2.0**-12, *cells)
    return [s * v for v in edges for s in (1, -1)]


def _around(edges: list[float], dtype) -> np.ndarray:
    """Each edge, its 40 nearest neighbours in the dtype and relative steps of 1e-12..1e-1."""
    parts = []
    for edge in edges:
        e = np.array(edge, dtype)
        parts.append(e + np.arange(-20, 21) * np.spacing(e))
        steps = np.logspace(-12, -1, 12)
        parts.append((float(e) * (1 + np.concatenate([steps, -steps]))).astype(dtype))
    return np.concatenate(parts).astype(dtype)


NAMES = ["exp", "exp2", "expm1", "sinh", "cosh", "tanh"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", NAMES)
def test_switch_points_within_1_ulp(name, dtype, level):
    x = _around(_edges(name, dtype), dtype)
    with np.errstate(all="ignore"):
        got = getattr(numfuse, name)(x)
    with mpmath.workprec(200):
        exact = FUNCTIONS[name].exact
        ref = np.array([float(exact(mpmath.mpf(float(v)))) for v in x], np.float64)
    with np.errstate(over="ignore"):
        ref = ref.astype(dtype)
    assert np.array_equal(np.isinf(got), np.isinf(ref)), x[np.isinf(got) != np.isinf(ref)]
    distance = ulp_distance(got, ref)
    assert distance.max() <= 1, (x[distance > 1], got[distance > 1], ref[distance > 1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", NAMES)
def test_batch_company_does_not_change_bits(name, dtype, level):
    """Every switch-point argument alone, in a block of arguments all on the far side of the
    large-argument switches (those batches skip the small-argument part, and sinh/cosh's
    e^-a term), and among ordinary arguments (both parts run): the same bits each time."""
    ufunc = getattr(numfuse, name)
    x = _around(_edges(name, dtype), dtype)
    far = np.full(64, 45.0, dtype)  # beyond 18, 19.5 and 40, not rare
    near = np.linspace(0.1, 3.0, 64).astype(dtype)
    with np.errstate(all="ignore"):
        alone = np.concatenate([ufunc(x[i : i + 1]) for i in range(x.size)])
        for company in (far, near):
            for offset in (0, 5, 13):
                block = np.concatenate([company[:offset], x, company])
                got = ufunc(block)[offset : offset + x.size]
                same = got.view(BITS[dtype]) == alone.view(BITS[dtype])
                assert same.all(), (x[~same], got[~same], alone[~same])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp_conditions_wherever_the_rare_lane_sits(dtype, level):
    """exp collects a flagged batch's conditions with vector compares (overflow: an infinite
    result of a finite argument; underflow: a result below the smallest normal): one rare
    lane in the head, the body or the tail of an array raises what NumPy raises, and
    infinite or NaN arguments raise nothing."""
    n = 67
    for value in (
        1000.0,
        -1000.0,
        -720.0 if dtype == np.float64 else -90.0,
        np.inf,
        -np.inf,
        np.nan,
        700.0 if dtype == np.float64 else 85.0,
    ):
        for position in (0, 3, 17, 40, n - 1):
            x = np.linspace(-3, 3, n).astype(dtype)
            x[position] = value
            expected = fp_conditions(np.exp, x)
            assert fp_conditions(numfuse.exp, x) == expected, (value, position)


def test_tanh_float32_dense(level):
    """tanh float32 (float32-lane kernels on AVX-512 and AVX2+FMA): every 61st float32 from 2^-13
    to 9.25 and the same negated, within 1 ULP of the float64 result rounded once; beyond
    that +-1, +-0 and subnormals as themselves, +-inf -> +-1, NaN -> NaN."""
    lo, hi = np.array([2.0**-13, 9.25], np.float32).view(np.uint32)
    x = np.arange(lo, hi, 61, dtype=np.uint32).view(np.float32)
    x = np.concatenate([x, -x])
    ref = np.tanh(x.astype(np.float64)).astype(np.float32)
    distance = ulp_distance(numfuse.tanh(x), ref)
    assert distance.max() <= 1, x[distance > 1]
    special = np.array(
        [0.0, -0.0, 1e-45, -1e-45, 1e-39, 2.0**-12, 20.0, -100.0, np.inf, -np.inf], np.float32
    )
    got = numfuse.tanh(special)
    want = np.tanh(special)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (special, got, want)
    # NaN (signs, payloads, signalling ones): NumPy's NaN bit for bit
    nan = np.array([0x7FC00000, 0xFFC00000, 0x7FC12345, 0x7FA00001, 0xFF800001], np.uint32)
    got = numfuse.tanh(nan.view(np.float32)).view(np.uint32)
    want = np.tanh(nan.view(np.float32)).view(np.uint32)
    assert np.array_equal(got, want), ([hex(v) for v in got], [hex(v) for v in want])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp2_conditions_wherever_the_rare_lane_sits(dtype, level):
    """exp2 collects a flagged batch's conditions with vector compares, and below AVX-512
    its float32 loop keeps the first pass's results for flagged batches: one rare lane in the
    head, the body or the tail of an array raises what NumPy raises (overflow; underflow
    for an inexact result below the smallest normal) and gets NumPy's value, and infinite
    or NaN arguments raise nothing."""
    n = 67
    f64 = dtype == np.float64
    for value in (
        1030.0 if f64 else 130.0,
        1023.5 if f64 else 127.5,
        -1074.5 if f64 else -140.5,
        -1100.0 if f64 else -160.0,
        -1021.5 if f64 else -125.5,
        1e30,
        -1e30,
        np.inf,
        -np.inf,
        np.nan,
    ):
        for position in (0, 3, 17, 40, n - 1):
            x = np.linspace(-3, 3, n).astype(dtype)
            x[position] = value
            assert fp_conditions(numfuse.exp2, x) == fp_conditions(np.exp2, x), (value, position)
            with np.errstate(all="ignore"):
                got, ref = numfuse.exp2(x), np.exp2(x)
            assert np.array_equal(np.isnan(got), np.isnan(ref)), (value, position)
            assert ulp_distance(got, ref).max() <= 1, (value, position)


@pytest.mark.parametrize("team", [1, 2, 3, 7])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp_deferred_loop_same_bits_and_conditions(dtype, team, level, threads):
    """The contiguous out-of-place exp loop tests for rare lanes once per call (float64 below
    AVX-512) and then recomputes only the flagged batches: the same bits as the in-place call
    (per-pair test) and the strided call (per-batch test), and NumPy's conditions, with the
    rare lanes in the head, at chunk edges and in the tail of a call split across threads."""
    numfuse.set_num_threads(team)
    n = 200_003
    rng = np.random.default_rng(7)
    big = 708.0 if dtype == np.float64 else 87.0
    rare = [np.nan, np.inf, -np.inf, 1000.0, -1000.0, big * 1.001, -big * 1.001, big, -big]
    for value in [None, *rare]:
        for positions in ((0,), (n // 2, n // 3 + 1), (n - 1, 5, n // 7)):
            x = rng.uniform(-5, 5, n).astype(dtype)
            if value is not None:
                x[list(positions)] = value
            with np.errstate(all="ignore"):
                got, inplace, strided = results_in_three_layouts(numfuse.exp, x)
            for other in (inplace, strided):
                same = got.view(BITS[dtype]) == other.view(BITS[dtype])
                assert same.all(), (value, positions, x[~same], got[~same], other[~same])
            assert fp_conditions(numfuse.exp, x) == fp_conditions(np.exp, x), (value, positions)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp_spanning_inputs_same_bits_and_conditions(dtype, level, threads):
    """Inputs spanning exp's whole range, where most batches hold lanes that overflow or
    underflow (float32 at AVX-512: a flagged pair is computed by the whole kernel alone, and
    conditions are collected only until both are found): the same bits as the in-place and
    the strided calls, NumPy's conditions, and NumPy's NaNs for NaN lanes placed after the
    first overflow and underflow, or with one kind of condition only."""
    numfuse.set_num_threads(1)
    n = 40_000
    rng = np.random.default_rng(11)
    lnmax = float(np.log(np.finfo(dtype).max))
    span = rng.uniform(-lnmax - 50, lnmax + 1, n)
    cases = {
        "spanning": span,
        "spanning, NaN after both": np.concatenate([[1000.0, -1000.0], span[2:]]),
        "underflow only": rng.uniform(-lnmax - 50, 3, n),
        "overflow only": rng.uniform(-3, lnmax + 1, n),
        "one underflow at the end": np.concatenate([rng.uniform(-3, 3, n - 1), [-1000.0]]),
    }
    for label, values in cases.items():
        x = values.astype(dtype)
        if "NaN" in label:
            x[[7, n // 2, n - 1]] = np.nan
            x[n // 3] = -np.nan
        with np.errstate(all="ignore"):
            got, inplace, strided = results_in_three_layouts(numfuse.exp, x)
            ref = np.exp(x)
        for other in (inplace, strided):
            same = got.view(BITS[dtype]) == other.view(BITS[dtype])
            assert same.all(), (label, x[~same], got[~same], other[~same])
        nan = np.isnan(ref)
        assert np.array_equal(np.isnan(got), nan), label
        assert np.array_equal(got[nan].view(BITS[dtype]), ref[nan].view(BITS[dtype])), label
        assert fp_conditions(numfuse.exp, x) == fp_conditions(np.exp, x), label


def test_exp_float64_every_table_cell(level):
    """float64 exp at AVX2+FMA reduces x = (8 k + j) ln2/8 + r with 2^(j/8) from an 8-entry
    register table: every j, both ends of r's interval (|r| up to ln2/16), the cell centres,
    across the range (k from -1021 to 1020) and in a batch of each j, against mpmath. The
    header proves 0.595 ULP for that kernel (the other levels: the 1 ULP contract)."""
    from conftest import ulp_of

    rng = np.random.default_rng(29)
    step = np.log(2.0) / 8
    ks = np.concatenate([[-1021, -1020, -1, 0, 1, 1019, 1020], rng.integers(-1021, 1021, 9)])
    parts = []
    for k in ks:
        for j in range(8):
            centre = (8 * int(k) + j) * step
            half = step / 2 * np.array([-0.999999, -0.9, -0.5, 0.0, 0.5, 0.9, 0.999999])
            parts.append(centre + half)
            parts.append(centre + rng.uniform(-step / 2, step / 2, 4))
    x = np.concatenate(parts)
    x = x[np.abs(x) <= 708.0]
    got = numfuse.exp(x)
    info = np.finfo(np.float64)
    with mpmath.workprec(160):
        err = [
            float(abs(mpmath.mpf(float(g)) - e) / ulp_of(e, info))
            for g, e in ((g, mpmath.exp(mpmath.mpf(float(v)))) for g, v in zip(got, x))
        ]
    bound = 0.595 if level == "avx2_fma" else 1.0
    worst = int(np.argmax(err))
    assert max(err) <= bound, (x[worst], got[worst], max(err))


def _float32_cell_edges(step: float, kds) -> np.ndarray:
    """float32 arguments on both sides of each reduction cell's edges (kd + 1/2) step (the
    four floats nearest each edge on each side) and at the cells' centres kd step."""
    parts = []
    for kd in kds:
        for centre in ((kd + 0.5) * step, kd * step):
            e = np.float32(centre)
            parts.append(e + np.arange(-4, 5, dtype=np.float32) * np.spacing(e))
    return np.concatenate(parts).astype(np.float32)


@pytest.mark.parametrize("name", ["exp", "expm1"])
def test_exp_expm1_float32_every_table_cell(name, level):
    """float32 exp at AVX2+FMA reduces x = (8 k + j) ln2/8 + r in float32 lanes with 2^(j/8)
    from an 8-entry register table, expm1 the same way in float64 lanes (exp's float64 table
    reduction): both sides of every cell edge from the subnormal results to overflow, and
    every centre, against mpmath. The headers prove 0.654 ULP for exp's normal results and
    0.5 + 0.33 for its subnormal ones, 0.5 + 2^-25 for expm1, at avx2_fma (the other levels:
    the 1 ULP contract)."""
    from conftest import ulp_of

    step = np.log(2.0) / 8
    x = _float32_cell_edges(step, range(-1200, 1026))
    x = x[(x > -104.0) & (x < 88.7)]
    got = getattr(numfuse, name)(x)
    info = np.finfo(np.float32)
    fn = mpmath.exp if name == "exp" else mpmath.expm1
    with mpmath.workprec(120):
        exact = [fn(mpmath.mpf(float(v))) for v in x]
        err = np.array(
            [float(abs(mpmath.mpf(float(g)) - e) / ulp_of(e, info)) for g, e in zip(got, exact)]
        )
    normal = np.abs(got) >= info.tiny
    if level == "avx2_fma":
        bounds = (0.654, 0.83) if name == "exp" else (0.5 + 2.0**-25, 0.5 + 2.0**-25)
    else:
        bounds = (1.0, 1.0)
    for mask, bound in zip((normal, ~normal), bounds):
        if mask.any():
            worst = int(np.argmax(np.where(mask, err, -1)))
            assert err[worst] <= bound, (x[worst], got[worst], err[worst])


@pytest.mark.parametrize("name", ["sinh", "cosh"])
def test_sinh_cosh_float32_reduction_cells(name, level):
    """float32 sinh and cosh below AVX-512 (neon64, AVX2+FMA) reduce a = |x| = k ln2 + r once for
    e^a and e^-a (|r| <= ln2/2): both sides of every cell edge (k + 1/2) ln2 up to overflow,
    and the centres, against mpmath (the headers: 2^-41 relative before the one rounding)."""
    from conftest import ulp_of

    x = _float32_cell_edges(np.log(2.0), range(0, 130))
    x = np.concatenate([x, -x])
    x = x[np.abs(x) < 89.4]
    got = getattr(numfuse, name)(x)
    info = np.finfo(np.float32)
    fn = getattr(mpmath, name)
    with mpmath.workprec(120):
        err = np.array(
            [
                float(abs(mpmath.mpf(float(g)) - e) / ulp_of(e, info))
                for g, e in ((g, fn(mpmath.mpf(float(v)))) for g, v in zip(got, x))
            ]
        )
    bound = 0.5 + 2.0**-16 if level in ("avx2_fma", "neon64") else 1.0
    worst = int(np.argmax(err))
    assert err[worst] <= bound, (x[worst], got[worst], err[worst])
