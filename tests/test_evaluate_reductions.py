"""Reductions anywhere in an expression: staged, fused, parallel, deterministic."""

from __future__ import annotations

import numpy as np
import pytest

import numfuse
from conftest import mp_logsumexp, relative_error_in_eps

RNG = np.random.default_rng(3)
X2 = RNG.standard_normal((123, 77))
X3 = RNG.standard_normal((9, 40, 33))


def _reference(kind, x, axis, keepdims):
    if kind == "logsumexp":
        m = np.max(x, axis=axis, keepdims=True)
        r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
        return r if keepdims else np.squeeze(r, axis=axis if axis is not None else None)
    return getattr(np, kind)(x, axis=axis, keepdims=keepdims)


def _axis_text(axis):
    if axis is None:
        return "None"
    return str(axis) if isinstance(axis, int) else "(" + ",".join(map(str, axis)) + ",)"


@pytest.mark.parametrize("kind", ["sum", "prod", "min", "max", "mean", "logsumexp"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, -2, (0, 1), (0, 2), (2, 0), (1,)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_kinds_axes_keepdims(kind, axis, keepdims, threads):
    x = X3 * (0.1 if kind == "prod" else 1.0)
    expected = _reference(kind, x, axis, keepdims)
    ex = f"{kind}(x, axis={_axis_text(axis)}, keepdims={keepdims})"
    for n in (1, 2, 3):
        numfuse.set_num_threads(n)
        actual = numfuse.evaluate(ex)
        assert actual.shape == np.shape(expected)
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64, np.float32, np.complex128])
def test_reduction_types_follow_numpy(dtype):
    x = (np.arange(60).reshape(6, 10) % 7).astype(dtype)
    for kind in ("sum", "prod", "mean") + (() if dtype == np.complex128 else ("min", "max")):
        expected = getattr(np, kind)(x, axis=0)
        actual = numfuse.evaluate(f"{kind}(x, axis=0)")
        assert actual.dtype == expected.dtype, (kind, dtype)
        np.testing.assert_allclose(actual, expected, rtol=1e-6)


def test_softmax_with_nested_reductions():
    x = X2
    ex = (
        "exp(x - max(x, axis=1, keepdims=True)) / "
        "sum(exp(x - max(x, axis=1, keepdims=True)), axis=1, keepdims=True)"
    )
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(numfuse.evaluate(ex), e / e.sum(axis=1, keepdims=True), rtol=1e-14)


def test_reductions_inside_arithmetic():
    x = X2
    np.testing.assert_allclose(
        numfuse.evaluate("log(sum(exp(x), axis=0))"), np.log(np.exp(x).sum(axis=0)), rtol=1e-14
    )
    np.testing.assert_allclose(
        numfuse.evaluate("x - mean(x, axis=0)"), x - x.mean(axis=0), rtol=1e-13, atol=1e-15
    )
    np.testing.assert_allclose(
        numfuse.evaluate("sum(x * x) / sum(x) + max(x) - min(x)"),
        (x * x).sum() / x.sum() + x.max() - x.min(),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        numfuse.evaluate("logsumexp(x, axis=1) - max(x, axis=1)"),
        np.log(np.exp(x - x.max(1, keepdims=True)).sum(1)),
        rtol=1e-13,
    )
    assert numfuse.evaluate("sum(3)") == 3


@pytest.mark.parametrize(
    "shape,axis",
    [
        ((1_000_003,), None),
        ((7, 300_001), 1),
        ((300_001, 7), 0),
        ((2000, 700), 0),
        ((700, 2000), 1),
    ],
)
def test_parallel_reductions_are_bit_identical_across_thread_counts(shape, axis, threads):
    x = RNG.standard_normal(shape)
    ex = f"sum(exp(x) * 0.5, axis={_axis_text(axis)})"
    results = []
    for n in (1, 2, 3, 4):
        numfuse.set_num_threads(n)
        results.append(numfuse.evaluate(ex))
    for r in results[1:]:
        assert r.tobytes() == results[0].tobytes()
    np.testing.assert_allclose(results[0], np.sum(np.exp(x) * 0.5, axis=axis), rtol=1e-11)


def test_special_values_and_empty():
    x = np.array([[1.0, np.nan, 3.0], [-np.inf, -np.inf, -np.inf]])
    np.testing.assert_array_equal(numfuse.evaluate("max(x, axis=1)"), [np.nan, -np.inf])
    np.testing.assert_array_equal(numfuse.evaluate("logsumexp(x, axis=1)"), [np.nan, -np.inf])
    y = np.array([np.inf, 1.0])
    assert numfuse.evaluate("logsumexp(y)") == np.inf
    empty = np.zeros((0, 4))
    np.testing.assert_array_equal(numfuse.evaluate("sum(empty, axis=0)"), np.zeros(4))
    np.testing.assert_array_equal(numfuse.evaluate("prod(empty, axis=0)"), np.ones(4))
    with pytest.raises(ValueError, match="zero-size"):
        numfuse.evaluate("max(empty, axis=0)")


def _zero_d_reference(kind, x, axis, keepdims):
    """NumPy's reduction of a 0-d operand (numfuse.logsumexp's for logsumexp, which follows
    SciPy): its value, or the exception class it raises."""
    try:
        if kind == "logsumexp" and axis == ():
            return np.asarray(x, dtype=np.float64)  # over no axes: the identity
        if kind == "logsumexp":
            # The axes it accepts and its value; the shape is NumPy's () (SciPy's
            # logsumexp, and so numfuse.logsumexp, make 0-d operands 1-d: atleast_1d).
            return numfuse.logsumexp(x, axis=axis, keepdims=keepdims).reshape(())
        return getattr(np, kind)(x, axis=axis, keepdims=keepdims)
    except ValueError:  # np.exceptions.AxisError, or a duplicate axis
        return ValueError


ZERO_D_AXES = [None, 0, -1, 1, -2, (), (0,), (-1,), (0, -1)]


@pytest.mark.parametrize("kind", ["sum", "prod", "min", "max", "mean", "logsumexp"])
@pytest.mark.parametrize("axis", ZERO_D_AXES, ids=repr)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize(
    "x", [np.array(-2.5), np.float64(3.0), np.array(7, dtype=np.int32)], ids=repr
)
def test_zero_d_reductions_accept_numpys_axes(kind, axis, keepdims, x):
    """A 0-d operand: NumPy's sum/prod/min/max take axis=0 and axis=-1 (not (0,), not 1);
    np.mean takes neither; numfuse.logsumexp (as SciPy) takes (0,) too."""
    if kind == "logsumexp" and x.dtype.kind == "i":
        x = x.astype(np.float64)
    expected = _zero_d_reference(kind, x, axis, keepdims)
    ex = f"{kind}(x, axis={_axis_text(axis) if axis != () else '()'}, keepdims={keepdims})"
    if expected is ValueError:
        with pytest.raises(ValueError, match="axis"):
            numfuse.evaluate(ex)
        return
    for actual in (numfuse.evaluate(ex), numfuse.compile(ex)(x)):
        assert actual.shape == np.shape(expected) == ()
        assert actual.dtype == np.asarray(expected).dtype
        np.testing.assert_array_equal(actual, expected)
    # Inside an expression, as a fused stage whose result later operands broadcast against.
    combined = numfuse.evaluate(f"x - {ex}")
    np.testing.assert_array_equal(combined, x - expected)


def test_axis_errors():
    x = X2
    with pytest.raises(ValueError, match="out of bounds"):
        numfuse.evaluate("sum(x, axis=2)")
    with pytest.raises(ValueError, match="duplicate"):
        numfuse.evaluate("sum(x, axis=(0, 0))")
    with pytest.raises(SyntaxError):
        numfuse.evaluate("sum(x, axis=1.5)")
    with pytest.raises(SyntaxError):
        numfuse.evaluate("sum(x, bogus=1)")
    with pytest.raises(TypeError):
        numfuse.evaluate("max(x * 1j)")


# logsumexp inside evaluate goes through numfuse.logsumexp's kernels, compensation and
# merges (reduce/stream.hpp), so it has its accuracy: a plain sum of exp(x - max) (the VM's
# before session 27) was 603 ULP off on the "near zero" row and returned 0 for "floor".
LSE_KINDS = {
    # result ~0.0055: a maximum near 0, the other terms far below it
    "near zero": lambda n: np.concatenate([[-1e-3], RNG.uniform(-40, -5, n - 1)]),
    # result ~1e-278: one 0, the rest at exp's floor (sum 1 + tiny)
    "floor": lambda n: np.concatenate([[0.0], RNG.uniform(-708, -650, n - 1)]),
    "normal": lambda n: RNG.normal(0, 3, n),
    "wide": lambda n: RNG.uniform(-700, 700, n),
}


@pytest.mark.parametrize("kind", sorted(LSE_KINDS))
@pytest.mark.parametrize("n", [50, 3000, 70000])
def test_logsumexp_accuracy_every_layout(level, kind, n):
    """Rows (short rows packed per unit, long runs cut into chunks), each a permutation of
    the same values, within 4 eps of mpmath at every level; columns bit-identical to
    numfuse.logsumexp over axis 0 within its first chunk (the same strip kernel, whose
    accuracy test_logsumexp checks; "floor" is ill-conditioned there, docs/accuracy.md),
    within 4 eps beyond it; all of it bit-identical
    for 1, 2 and 3 threads."""
    x = LSE_KINDS[kind](n)
    x_rows = np.stack([x, x[::-1], RNG.permutation(x)])
    cols = np.tile(x[:, None], (1, 70))  # at least 64 outputs: the columns layout
    results = []
    for t in (1, 2, 3):
        numfuse.set_num_threads(t)
        results.append(
            [
                numfuse.evaluate("logsumexp(x_rows + 0.0, axis=1)"),
                numfuse.evaluate("logsumexp(cols + 0.0, axis=0)"),
            ]
        )
    for got in results[1:]:
        for a, b in zip(got, results[0]):
            assert a.tobytes() == b.tobytes()
    rows, columns = results[0]
    assert relative_error_in_eps(rows, mp_logsumexp(x), np.float64) <= 4, (kind, n)
    if n <= 65536:  # one chunk of numfuse.logsumexp: the same folding order
        assert columns.tobytes() == numfuse.logsumexp(cols, axis=0).tobytes()
    elif kind != "floor":
        assert relative_error_in_eps(columns, mp_logsumexp(x), np.float64) <= 4, (kind, n)
    x32 = x.astype(np.float32)
    got32 = numfuse.evaluate("logsumexp(x32 + 0.0)")
    assert got32.dtype == np.float32
    assert relative_error_in_eps(got32, mp_logsumexp(x32), np.float32) <= 4


@pytest.mark.parametrize("n", [5, 3000, 70000])
def test_logsumexp_special_values_every_layout(level, n):
    """NaN wins over +inf, +inf over everything else, all -inf gives -inf: in one row, in
    a row's later chunk, and in columns (where +inf and NaN together need a second look)."""
    base = np.random.default_rng(n).uniform(-5, 5, n)
    groups = {"plain": base, "nan": base.copy(), "inf": base.copy(), "both": base.copy()}
    groups["nan"][n - 1] = np.nan
    groups["inf"][n // 2] = np.inf
    groups["both"][0] = np.inf
    groups["both"][n - 1] = np.nan
    groups["-inf"] = np.full(n, -np.inf)
    want = [mp_logsumexp(base), np.nan, np.inf, np.nan, -np.inf]
    rows = np.stack(list(groups.values()))
    got_rows = numfuse.evaluate("logsumexp(rows * 1.0, axis=1)")
    assert relative_error_in_eps(got_rows[0], want[0], np.float64) <= 4
    np.testing.assert_array_equal(np.isnan(got_rows), np.isnan(want))
    np.testing.assert_array_equal(
        got_rows[1:][~np.isnan(want[1:])], np.array(want[1:])[~np.isnan(want[1:])]
    )
    cols = np.repeat(rows.T, 16, axis=1)  # 80 outputs: the columns layout
    got_cols = numfuse.evaluate("logsumexp(cols * 1.0, axis=0)").reshape(5, 16)
    for g in range(5):
        if np.isnan(want[g]):
            assert np.isnan(got_cols[g]).all()
        elif g == 0:
            assert relative_error_in_eps(got_cols[g], want[0], np.float64) <= 4
        else:
            assert (got_cols[g] == want[g]).all()
