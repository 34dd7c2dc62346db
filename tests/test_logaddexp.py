"""logaddexp next to zero: within 1 ULP of the exact value at every level, float32 and float64.

The result log(e^x + e^y) is near 0 where e^x + e^y is near 1 (x, y < 0): there the
textbook max + log1p(exp(-|x - y|)) cancels, and its absolute error, ~2^-53 |max|, is many
ULP of the result (NumPy's is millions of ULP off, or 0). The inputs below are built to
cancel: y the double nearest to log(1 - e^x) (its result is typically ~2^-53 |x|, the
deepest cancellation a pair of doubles reaches short of a search), neighbours of it,
perturbations that leave 5 to 50 bits (the double-double pass), results down to the
subnormals, and the deepest cases a search over many such pairs finds; both argument
orders. The exact value comes from mpmath at 600 bits, as log1p(expm1(max) + exp(min))
(tests/function_table.py), which keeps tiny maxima exact. evaluate's logaddexp must give
the ufunc's bits, whatever the array's length or layout.

Run as a script to print the measured maxima (docs/accuracy.md):

    PYTHONPATH=... python tests/test_logaddexp.py
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np
import pytest

import numfuse
from conftest import ulp_of
from function_table import FUNCTIONS

DTYPES = [np.float32, np.float64]
IDS = ["float32", "float64"]
PRECISION = 600


def _exact(a: float, b: float) -> mpmath.mpf:
    with mpmath.workprec(PRECISION):
        return FUNCTIONS["logaddexp"].exact(mpmath.mpf(a), mpmath.mpf(b))


def _nearest_log_one_minus_exp(m: np.ndarray, dtype) -> np.ndarray:
    """The dtype value nearest to log(1 - e^m) for each m < 0 (exact, through mpmath)."""
    with mpmath.workprec(PRECISION):
        exact = [mpmath.log(-mpmath.expm1(mpmath.mpf(float(v)))) for v in m]
    # float(mpf) rounds to nearest; float32 rounds from the 600-bit value's float64 rounding
    # only where that cannot change the nearest float32 (double rounding is off by at most
    # one float32 ULP, and the neighbours are tested too).
    return np.array([float(v) for v in exact]).astype(dtype)


def _mixed_order(rng, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    swap = rng.random(x.size) < 0.5
    return np.where(swap, y, x), np.where(swap, x, y)


def _near_zero_inputs(dtype, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    info = np.finfo(dtype)
    f64 = dtype == np.float64
    n = 250
    # max in (-0.69, 0) over every binade down to the smallest normals (float64: down to
    # 1e-300, where results are subnormal; float32: 1e-37)
    low = 1e-300 if f64 else 1e-37
    m = -np.exp(rng.uniform(np.log(low), np.log(0.69), n)).astype(dtype)
    s = _nearest_log_one_minus_exp(m, dtype)
    keep = s <= m
    m, s = m[keep], s[keep]
    parts_m, parts_s = [m], [s]
    for steps in (1, -1, 2, -3):  # neighbours of the nearest
        parts_m.append(m)
        parts_s.append(np.minimum(m, s + steps * np.spacing(s)))
    # perturbed by a relative 1e-15 .. 1e-2: 5 to 50 bits of cancellation
    rel = np.exp(rng.uniform(np.log(1e-15), np.log(1e-2), m.size)) * rng.choice([-1, 1], m.size)
    parts_m.append(m)
    parts_s.append(np.minimum(m, (s.astype(np.float64) * (1 + rel)).astype(dtype)))
    # tiny results below the smallest normal (float64 maxima near -2^-1000, float32 near
    # -2^-120: the result is ~2^-53 (2^-24) of them)
    tiny = -np.exp(rng.uniform(np.log(float(info.tiny)) + 2, np.log(float(info.tiny)) + 60, 60))
    tiny = tiny.astype(dtype)
    tiny_s = _nearest_log_one_minus_exp(tiny, dtype)
    parts_m += [tiny, tiny]
    parts_s += [tiny_s, tiny_s + np.spacing(tiny_s)]
    x, y = np.concatenate(parts_m), np.concatenate(parts_s)
    ok = np.isfinite(y) & (y <= x)
    return _mixed_order(rng, x[ok], y[ok])


def _deepest_cancellations(dtype, count: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """The pairs whose result is smallest relative to max(x, y), from a search over many
    nearest pairs (numfuse picks them; the test checks them against mpmath)."""
    rng = np.random.default_rng(91 if dtype == np.float64 else 92)
    m = -np.exp(rng.uniform(np.log(1e-6), np.log(0.69), 200_000)).astype(dtype)
    with np.errstate(all="ignore"):
        s = np.log(-np.expm1(m.astype(np.float64))).astype(dtype)
    x = np.concatenate([m, m, m])
    y = np.concatenate([s, s + np.spacing(s), s - np.spacing(s)])
    ok = np.isfinite(y) & (y <= x)
    x, y = x[ok], y[ok]
    with np.errstate(all="ignore"):
        depth = np.abs(numfuse.logaddexp(x, y).astype(np.float64) / x.astype(np.float64))
    pick = np.argsort(depth)[:count]
    return _mixed_order(rng, x[pick], y[pick])


_ulp = ulp_of


@functools.cache
def _cases(dtype, kind: str):
    """(x, y, exact values) of one input family."""
    if kind == "near_zero":
        x, y = _near_zero_inputs(dtype, 5 if dtype == np.float64 else 6)
    else:
        x, y = _deepest_cancellations(dtype)
    with mpmath.workprec(PRECISION):
        exact = [_exact(a, b) for a, b in zip(x.tolist(), y.tolist())]
    return x, y, exact


def max_ulp_error(x, y, exact, got) -> tuple[float, int]:
    info = np.finfo(got.dtype)
    worst, at = 0.0, -1
    with mpmath.workprec(PRECISION):
        for k, (value, g) in enumerate(zip(exact, got.tolist())):
            err = float(abs(mpmath.mpf(g) - value) / _ulp(value, info))
            if err > worst:
                worst, at = err, k
    return worst, at


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("kind", ["near_zero", "deepest"])
def test_within_1_ulp_next_to_zero(kind, dtype, level):
    x, y, exact = _cases(dtype, kind)
    assert x.size > 20
    got = numfuse.logaddexp(x, y)
    worst, k = max_ulp_error(x, y, exact, got)
    assert worst <= 1.0, f"logaddexp({x[k]!r}, {y[k]!r}) = {got[k]!r} at {level}: {worst:.3f} ULP"


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_the_deepest_cases_cancel_far(dtype):
    """The search finds what it is there for: results far below max(x, y) (float64: past
    what the double-double pass certifies, so the fixed-point pass is what is tested)."""
    x, y, exact = _cases(dtype, "deepest")
    m = np.maximum(x, y).astype(np.float64)
    depth = min(float(abs(v) / abs(mpmath.mpf(float(a)))) for v, a in zip(exact, m))
    assert depth < (2.0**-60 if dtype == np.float64 else 2.0**-30)


@pytest.mark.parametrize(
    ("x", "y", "exact"),
    [
        # the example: NumPy gives 0.0, the former kernel 5.4096e-18
        (-0.5, -0.9327521295671886, "4.96419092981849840849934397499e-18"),
    ],
)
def test_known_near_zero_value(x, y, exact, level):
    got = numfuse.logaddexp(x, y)
    ulp = float(np.spacing(np.float64(float(exact))))
    assert abs(mpmath.mpf(float(got)) - mpmath.mpf(exact)) <= ulp


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_equal_arguments_within_1_ulp(dtype, level):
    """x + log(2), rounded once: NumPy's x + RN(log 2) is up to 6 ULP off next to -log 2."""
    rng = np.random.default_rng(4)
    x = np.concatenate(
        [
            -np.log(2) + rng.uniform(-0.1, 0.1, 200),
            np.nextafter(-np.log(2), [-1.0, 1.0]),
            rng.uniform(-50, 50, 200),
        ]
    ).astype(dtype)
    got = numfuse.logaddexp(x, x)
    info = np.finfo(dtype)
    with mpmath.workprec(PRECISION):
        for a, g in zip(x.tolist(), got.tolist()):
            value = mpmath.mpf(a) + mpmath.log(2)
            assert abs(mpmath.mpf(g) - value) <= _ulp(value, info), (a, g)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_evaluate_gives_the_ufunc_bits(dtype, level):
    x, y, _ = _cases(dtype, "near_zero")
    rng = np.random.default_rng(8)
    x = np.concatenate([x, rng.uniform(-30, 30, 500).astype(dtype), [np.inf, -np.inf, np.nan]])
    y = np.concatenate([y, rng.uniform(-30, 30, 500).astype(dtype), [np.inf, -np.inf, 1]])
    x, y = x.astype(dtype), y.astype(dtype)
    bits = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
    with np.errstate(all="ignore"):
        ufunc = numfuse.logaddexp(x, y)
        vm = numfuse.evaluate("logaddexp(a, b)", local_dict={"a": x, "b": y})
    np.testing.assert_array_equal(vm.view(bits), ufunc.view(bits))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_results_do_not_depend_on_layout(dtype, level):
    """Near-zero lanes are gathered across batches and recomputed: the bits of an element
    must not depend on its neighbours, the array's length, strides or in-place output."""
    x, y, _ = _cases(dtype, "near_zero")
    bits = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
    whole = numfuse.logaddexp(x, y).view(bits)
    one_by_one = np.array([numfuse.logaddexp(a, b) for a, b in zip(x[:64], y[:64])], dtype)
    np.testing.assert_array_equal(one_by_one.view(bits), whole[:64])
    for start in (1, 3, 7):
        np.testing.assert_array_equal(
            numfuse.logaddexp(x[start:], y[start:]).view(bits), whole[start:]
        )
    np.testing.assert_array_equal(numfuse.logaddexp(x[::-1], y[::-1]).view(bits), whole[::-1])
    spread = np.zeros((x.size, 3), dtype)
    spread[:, 1] = x
    np.testing.assert_array_equal(numfuse.logaddexp(spread[:, 1], y).view(bits), whole)
    in_place = x.copy()
    numfuse.logaddexp(in_place, y, out=in_place)
    np.testing.assert_array_equal(in_place.view(bits), whole)
    # accumulate is an in-order chain with its own one-pair path (binary_fold): each step
    # must be the array kernel's bits, near-zero pairs included.
    for kind in ("near_zero", "deepest"):
        xs, ys, _ = _cases(dtype, kind)
        expected = numfuse.logaddexp(xs, ys).view(bits)
        pairs = np.stack([xs, ys], axis=1)
        steps = np.array([numfuse.logaddexp.accumulate(pair)[1] for pair in pairs], dtype)
        np.testing.assert_array_equal(steps.view(bits), expected)
        np.testing.assert_array_equal(
            numfuse.logaddexp.accumulate(pairs, axis=1)[:, 1].view(bits), expected
        )


if __name__ == "__main__":  # pragma: no cover
    for level in numfuse.usable_levels():
        numfuse.set_level(level)
        for dtype in DTYPES:
            for kind in ("near_zero", "deepest"):
                x, y, exact = _cases(dtype, kind)
                got = numfuse.logaddexp(x, y)
                worst, _ = max_ulp_error(x, y, exact, got)
                name = np.dtype(dtype).name
                print(f"{level:9} {name:8} {kind:10} {x.size:5} pairs: {worst:.3f} ULP")
