"""The engine paths that numfuse.jit's formulas lean on, checked bit for bit against the
engine's own slower paths.

- A reduction stage that stores its values in the result for the final stage (softmax's
  exp(x - max(x)) computed once, Plan::reuse): the same bits as the recomputing path, which
  the engine takes when the result overlaps an input or is not contiguous.
- (rows, 1) reduction results broadcast against (rows, cols) and C-ordered operands of a
  space that stays 2-d, read in place: the same bits as strided (gathered) operands.
- max/min over float runs in lanes: the ordered loop's result (NaN first seen, the sign of
  a zero the first zero's).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import numfuse as nf

SOFTMAX = (
    "exp(x - max(x, axis={a}, keepdims=True)) / "
    "sum(exp(x - max(x, axis={a}, keepdims=True)), axis={a}, keepdims=True)"
)
LAYER_NORM = (
    "(x - mean(x, axis={a}, keepdims=True)) / "
    "sqrt(mean((x - mean(x, axis={a}, keepdims=True))**2, axis={a}, keepdims=True) + 1e-5)"
)
CASES = [((1000,), -1), ((70000,), -1), ((37, 300), -1), ((300, 37), -1), ((300, 37), 0)]


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def _data(shape, dtype, seed=0, specials=False):
    x = np.random.default_rng(seed).uniform(-8, 8, shape).astype(dtype)
    if specials:
        flat = x.reshape(-1)
        flat[3] = np.nan
        flat[-5] = np.inf
        flat[flat.size // 2] = -np.inf
        flat[7] = -0.0
    return x


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("specials", [False, True])
def test_stored_values_give_the_recomputed_bits(dtype, shape, axis, specials):
    text = SOFTMAX.format(a=axis)
    x = _data(shape, dtype, specials=specials)
    with np.errstate(all="ignore"):
        stored = nf.evaluate(text, {"x": x})
        # the result overlapping the input: the engine recomputes the values instead
        aliased = x.copy()
        nf.evaluate(text, {"x": aliased}, out=aliased)
        # a strided result: the reduction cannot store into it
        wide = np.full(shape[:-1] + (2 * shape[-1],), 7.0, dtype)
        strided = wide[..., ::2]
        nf.evaluate(text, {"x": x}, out=strided)
    np.testing.assert_array_equal(_bits(stored), _bits(aliased))
    np.testing.assert_array_equal(_bits(stored), _bits(strided))
    assert np.all(wide[..., 1::2] == 7.0)
    if not specials:
        with np.errstate(all="ignore"):
            e = np.exp(x - x.max(axis=axis, keepdims=True))
            reference = e / e.sum(axis=axis, keepdims=True)
        np.testing.assert_allclose(stored, reference, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_jitted_softmax_is_the_engine_value(dtype):
    @nf.jit
    def softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    for shape in [(5000,), (40, 250)]:
        x = _data(shape, dtype, seed=3)
        aliased = x.copy()
        nf.evaluate(SOFTMAX.format(a=-1), {"x": aliased}, out=aliased)
        np.testing.assert_array_equal(_bits(softmax(x)), _bits(aliased))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("text", [SOFTMAX, LAYER_NORM])
@pytest.mark.parametrize("shape,axis", CASES[2:])
def test_broadcast_rows_read_in_place_give_the_gathered_bits(dtype, text, shape, axis):
    text = text.format(a=axis)
    x = _data(shape, dtype, seed=1)
    in_place = nf.evaluate(text, {"x": x})
    # the same values through strided operands: a Fortran-ordered copy and a view
    # with a gap after every row
    fortran = nf.evaluate(text, {"x": np.asfortranarray(x)})
    padded = np.zeros((shape[0], shape[1] + 3), dtype)
    padded[:, : shape[1]] = x
    gapped = nf.evaluate(text, {"x": padded[:, : shape[1]]})
    np.testing.assert_array_equal(_bits(in_place), _bits(fortran))
    np.testing.assert_array_equal(_bits(in_place), _bits(gapped))


def _ordered_extreme(values, largest):
    """The engine's rule: the first NaN; otherwise the extreme value, the first of
    equals (which decides the sign of a zero)."""
    best = -math.inf if largest else math.inf
    for v in values:
        if v != v:
            return v
        if (v > best) if largest else (v < best):
            best = v
    return best


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("n", [15, 16, 17, 1000, 40000])
@pytest.mark.parametrize(
    "pattern", ["random", "zeros", "nan", "inf", "all_negative_inf", "subnormal"]
)
def test_extremum_lanes_keep_the_ordered_result(dtype, largest, n, pattern):
    rng = np.random.default_rng(n)
    x = rng.uniform(-5, 5, n).astype(dtype)
    if pattern == "zeros":
        # the extreme is a zero: which sign comes first decides
        x = -np.abs(x) if largest else np.abs(x)
        x[n // 3] = 0.0
        x[n // 5] = -0.0
    elif pattern == "nan":
        x[n // 2] = np.nan
    elif pattern == "inf":
        x[n - 1] = np.inf if largest else -np.inf
    elif pattern == "all_negative_inf":
        x[:] = -np.inf if largest else np.inf
    elif pattern == "subnormal":
        x[:] = np.finfo(dtype).smallest_subnormal * rng.integers(1, 9, n)
        x[n // 2] = -np.finfo(dtype).smallest_subnormal
    got = nf.evaluate("max(x)" if largest else "min(x)", {"x": x})
    want = _ordered_extreme(x.tolist(), largest)
    if want != want:
        assert np.isnan(got)
    else:
        assert got == want
        assert math.copysign(1.0, float(got)) == math.copysign(1.0, want)
    # rows of the same values: the rows layout's runs
    rows = np.stack([x, x[::-1]])
    got_rows = nf.evaluate(("max" if largest else "min") + "(x, axis=1)", {"x": rows})
    for row, value in zip(rows, got_rows.tolist()):
        want = _ordered_extreme(row.tolist(), largest)
        if want != want:
            assert value != value
        else:
            assert value == want and math.copysign(1.0, value) == math.copysign(1.0, want)
