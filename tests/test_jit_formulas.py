"""numfuse.jit on a table of real formulas: each against the plain function (values within
docs/accuracy.md's bounds composed over the formula, dtypes, shapes, output structure)."""

from __future__ import annotations

import numpy as np
import pytest

import numfuse as nf
from jit_formulas import FORMULAS, inputs

# Each op is within 1 ULP (docs/accuracy.md); a formula composes a few dozen, some with
# cancellation (x - mean, 1 - p): relative tolerance, plus an absolute one at the scale
# of the result's largest value.
TOLERANCE = {np.float32: 2e-5, np.float64: 1e-12}
SHAPES = [(1000,), (7, 33), (1, 5)]


def assert_same(got, want, dtype):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, dtype)
        return
    if isinstance(want, dict):
        assert got.keys() == want.keys()
        for key in want:
            assert_same(got[key], want[key], dtype)
        return
    assert got.dtype == want.dtype
    assert np.shape(got) == np.shape(want)
    tol = TOLERANCE[dtype]
    scale = float(np.max(np.abs(want))) if np.size(want) else 0.0
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 8 * max(1.0, scale))


def test_table_has_fifty_formulas():
    assert len(FORMULAS) >= 50
    assert len({name for name, _, _ in FORMULAS}) == len(FORMULAS)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,function,domains", FORMULAS, ids=[f[0] for f in FORMULAS])
def test_formula_matches_plain_function(name, function, domains, dtype, shape):
    jitted = nf.jit(function)
    for seed in (0, 1):  # the second call replays the cached trace on new values
        args = inputs(domains, shape, dtype, seed)
        with np.errstate(all="ignore"):
            want = function(*args)
        got = jitted(*args)
        assert_same(got, want, dtype)


@pytest.mark.parametrize(
    "name",
    [
        "softmax",
        "gelu_tanh",
        "black_scholes_call",
        "mixture_loglik",
        "adam_step",
        "layer_norm",
        "huber",
    ],
)
@pytest.mark.parametrize("shape", [(4, 9), (30,)], ids=str)
def test_formula_fuses_without_breaks(name, shape):
    function, domains = next((f, d) for n, f, d in FORMULAS if n == name)
    jitted = nf.jit(function, strict=True)  # strict: any graph break raises
    args = inputs(domains, shape, np.float64)
    assert_same(jitted(*args), function(*args), np.float64)
    assert "numpy " not in jitted.explain()
