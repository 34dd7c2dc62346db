"""x**y in evaluate: the power kernel (src/core/kernels/power.hpp) and its paths.

tests/test_evaluate_accuracy.py sweeps `a ** b` over its domain and checks the special
values against NumPy; this file adds what that sweep does not reach:

- constant exponents: x**n for every integer n in -16..16 and the half-integers (x**2.5,
  x**-0.5, ...), within 1 ULP of mpmath for float32 and float64 at every level, over
  inputs of every magnitude (results near overflow and underflow, subnormal ones included);
- x**y where y log|x| is near the overflow / underflow limits (the error of log|x| is
  multiplied by |y| there), subnormal bases, negative bases with integral exponents;
- special values bit for bit against NumPy (C99's pow) for array and constant exponents,
  NaN bits included where NumPy takes them from an input;
- the names pow, power and float_power, and integer operands as NumPy.

Run as a script to print the max-ULP table per case, dtype and level.
"""

from __future__ import annotations

import functools
import itertools
import warnings

import mpmath
import numpy as np
import pytest

import numfuse
from conftest import ulp_of

DTYPES = [np.float32, np.float64]
INTEGERS = list(range(-16, 17))
HALVES = [m / 2 for m in range(-33, 34, 2)]


def _exact(a: float, b: float):
    if a < 0:
        return mpmath.power(a, int(b))
    return mpmath.power(a, b)


def _bases(dtype, exponent: float, n: int, rng) -> np.ndarray:
    """Bases of both signs (positive only for non-integral exponents) whose power spans the
    whole range of the dtype: from below the smallest subnormal to past the overflow."""
    info = np.finfo(dtype)
    lo = float(np.log(float(info.smallest_subnormal))) * 1.02
    hi = float(np.log(float(info.max))) * 1.02
    if exponent == 0:
        logs = rng.uniform(lo, hi, n)
    else:
        logs = rng.uniform(lo, hi, n) / exponent  # log|x| with y log|x| in [lo, hi]
    x = np.exp(np.clip(logs, -745.0, 709.0))
    x = x[np.isfinite(x) & (x > 0)]
    x = np.concatenate([x, rng.uniform(0.5, 2.0, n // 4), [1.0, 2.0, 0.5, 3.0, 10.0]])
    if float(exponent).is_integer():
        x = x * rng.choice([-1.0, 1.0], x.size)
    with np.errstate(all="ignore"):
        x = x.astype(dtype)
    return x[np.isfinite(x) & (x != 0)]


def _max_ulp(got: np.ndarray, x: np.ndarray, y: np.ndarray, exact) -> float:
    """Max |got - exact| / ulp(exact) in got's dtype; an exact value past the overflow must
    give inf of its sign."""
    info = np.finfo(got.dtype)
    worst = 0.0
    with mpmath.workprec(160):
        big = mpmath.mpf(float(info.max)) * (1 + mpmath.mpf(2) ** -(info.nmant + 1))
        for k in range(got.size):
            value = exact(float(x[k]), float(y[k]))
            g = float(got[k])
            if abs(value) >= big:
                ok = np.isinf(g) and (g > 0) == (value > 0)
                worst = max(worst, 0.0 if ok else np.inf)
                continue
            if not np.isfinite(g):
                return np.inf
            worst = max(worst, float(abs(mpmath.mpf(g) - value) / ulp_of(value, info)))
    return worst


@functools.cache
def _constant_cases(dtype, exponent: float) -> np.ndarray:
    rng = np.random.default_rng(
        int(abs(exponent) * 10 + (exponent < 0) + 7 * (dtype == np.float32))
    )
    return _bases(dtype, exponent, 300, rng)


def _constant_error(dtype, exponent: float) -> float:
    x = _constant_cases(dtype, exponent)
    # a literal is weak: float32 x stays float32 (NumPy 2's rule)
    expression = f"x ** {int(exponent)}" if float(exponent).is_integer() else f"x ** {exponent!r}"
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = numfuse.evaluate(expression, local_dict={"x": x})
    assert got.dtype == dtype, expression
    return _max_ulp(got, x, np.full(x.size, exponent), _exact)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("n", INTEGERS)
def test_integer_exponents_within_1_ulp(n, dtype, level):
    err = _constant_error(dtype, float(n))
    assert err <= 1.0, f"x**{n} {np.dtype(dtype)} at {level}: {err:.3f} ULP"


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("h", [h for h in HALVES if h != 0.5])
def test_half_integer_exponents_within_1_ulp(h, dtype, level):
    err = _constant_error(dtype, h)
    assert err <= 1.0, f"x**{h} {np.dtype(dtype)} at {level}: {err:.3f} ULP"


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("exponent", [3.0, -3.0, 7.0, 2.5, -1.5, 16.5, -16.0])
def test_subnormal_results_and_mixed_batches_within_1_ulp(exponent, dtype, level):
    """Results in the subnormal band (rounded by integer operations on the product path)
    and batches that mix every magnitude, so that each batch takes the scaled path with
    lanes that are normal, subnormal, zero and overflowing at once."""
    info = np.finfo(dtype)
    rng = np.random.default_rng(int(abs(exponent) * 7) + (dtype == np.float32))
    lo = float(np.log(float(info.smallest_subnormal))) - 1.0
    hi = float(np.log(float(info.tiny)))
    band = np.exp(rng.uniform(lo, hi, 600) / exponent)  # x**exponent in the subnormal band
    spread = np.exp(rng.uniform(-745.0, 709.0, 600) / abs(exponent) * 1.05)
    x = np.empty(band.size + spread.size)
    x[0::2], x[1::2] = band, spread  # interleaved: every batch mixes the two
    if float(exponent).is_integer():
        x *= rng.choice([-1.0, 1.0], x.size)
    with np.errstate(all="ignore"):
        x = x.astype(dtype)
    x = x[np.isfinite(x) & (x != 0)]
    literal = repr(exponent) if not float(exponent).is_integer() else str(int(exponent))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = numfuse.evaluate(f"x ** {literal}", local_dict={"x": x})
    err = _max_ulp(got, x, np.full(x.size, exponent), _exact)
    assert err <= 1.0, f"x**{literal} {np.dtype(dtype)} at {level}: {err:.3f} ULP"


@functools.cache
def _hard_cases(dtype):
    """(x, y): y log|x| near the overflow and underflow limits with |log x| small and
    large, subnormal bases, negative bases with integral y, x near 1 with huge y."""
    rng = np.random.default_rng(29 + (dtype == np.float32))
    info = np.finfo(dtype)
    lnmax = float(np.log(float(info.max)))
    lnmin = float(np.log(float(info.smallest_subnormal)))
    n = 400
    x = np.exp(rng.uniform(-3, 3, n)) * rng.choice([1.0, 1.0 + 1e-6, 1.0 - 1e-6], n)
    x = np.where(x == 1.0, 1.5, x)
    target = np.concatenate(
        [rng.uniform(0.9, 1.0, n // 2) * lnmax, rng.uniform(0.9, 1.0, n // 2) * lnmin]
    )
    y = target / np.log(x)
    near_one = 1 + rng.uniform(-1e-4, 1e-4, n // 2)
    y_near_one = rng.uniform(-1, 1, n // 2) * lnmax / np.abs(np.log(near_one))
    sub = rng.uniform(1, 2**20, n // 4) * float(info.smallest_subnormal)
    y_sub = rng.uniform(-1.2, 1.2, n // 4)
    negative = -np.exp(rng.uniform(-5, 5, n // 4))
    y_negative = rng.integers(-60, 60, n // 4).astype(np.float64)
    xs = np.concatenate([x, near_one, sub, negative]).astype(dtype)
    ys = np.concatenate([y, y_near_one, y_sub, y_negative]).astype(dtype)
    keep = (xs != 0) & np.isfinite(xs) & np.isfinite(ys) & ((xs > 0) | (ys == np.trunc(ys)))
    return xs[keep], ys[keep]


def _hard_error(dtype) -> float:
    x, y = _hard_cases(dtype)
    with np.errstate(all="ignore"):
        got = numfuse.evaluate("x ** y", local_dict={"x": x, "y": y})
    return _max_ulp(got, x, y, _exact)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_hard_arguments_within_1_ulp(dtype, level):
    err = _hard_error(dtype)
    assert err <= 1.0, f"x**y {np.dtype(dtype)} at {level}: {err:.3f} ULP"


def _cells_by_one(n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """float64 pairs with |log x| in [0.01, 0.1] (the AVX-512 log's cells next to the one of
    1, where |t| reaches 0.034 and log x only ~0.03: a plain t^3 R(t) was 2^-62.6 off there,
    1.1 ULP at |y log x| ~ 700) and y log x within 10% of the overflow / underflow limits."""
    x = np.exp(rng.choice([-1.0, 1.0], n) * rng.uniform(0.01, 0.1, n))
    x[: n // 4] = 1.03125 * (1 + rng.uniform(-2e-3, 2e-3, n // 4))  # a cell boundary
    t = rng.choice([-708.0, 709.0], n) * rng.uniform(0.9, 1.0, n)
    return x, t / np.log(x)


def test_log_cells_next_to_one_within_1_ulp(level):
    x, y = _cells_by_one(600, np.random.default_rng(31))
    # the worst pair of the plain t^3 R(t) in 1e6 (1.10 ULP), and one at 0.84 ULP
    bad = [
        ("0x1.081ee8fee4fa5p+0", "0x1.5900e971ec702p+14"),
        ("0x1.07d3b8cf061dp+0", "0x1.2d4b5bc594903p+14"),
    ]
    x = np.concatenate([[float.fromhex(a) for a, _ in bad], x])
    y = np.concatenate([[float.fromhex(b) for _, b in bad], y])
    got = numfuse.power(x, y)
    assert _max_ulp(got, x, y, _exact) <= 1.0


def test_avx2_cells_and_negative_batches_within_1_ulp(level):
    """The AVX2+FMA kernel's log (128 cells, |t| <= 0.00528): x next to 1 and by the edges
    of the cells next to the one of 1 (|x - 1| in [2^-9, 2^-6]), y log x within 10% of the
    overflow / underflow limits; and whole batches of negative bases (integral y: the sign
    of odd powers; non-integral y: the invalid NaN as NumPy's) amid positive ones, which
    that kernel fixes up without its rare path."""
    rng = np.random.default_rng(41)
    n = 800
    d = rng.choice([-1.0, 1.0], n) * np.exp2(rng.uniform(-9, -6, n))
    x = np.concatenate([1 + d, 1 + rng.uniform(-(2.0**-9), 2.0**-9, n)])
    x = x[x != 1.0]
    t = rng.choice([-708.0, 709.0], x.size) * rng.uniform(0.9, 1.0, x.size)
    y = t / np.log(x)
    with np.errstate(all="ignore"):
        assert _max_ulp(numfuse.power(x, y), x, y, _exact) <= 1.0
    xb = rng.uniform(0.1, 10, 4 * n) * rng.choice([-1.0, 1.0], 4 * n)
    yb = np.where(
        rng.uniform(0, 1, 4 * n) < 0.5,
        np.round(rng.uniform(-9, 9, 4 * n)),
        rng.uniform(-9, 9, 4 * n),
    )
    with np.errstate(all="ignore"):
        got = numfuse.power(xb, yb)
        expected = np.power(xb, yb)
    assert np.all(_same_bits(got[np.isnan(expected)], expected[np.isnan(expected)]))
    real = ~np.isnan(expected)
    assert _max_ulp(got[real], xb[real], yb[real], _exact) <= 1.0


def _specials(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    return np.array(
        [
            0.0,
            -0.0,
            np.inf,
            -np.inf,
            np.nan,
            1.0,
            -1.0,
            2.0,
            -2.0,
            0.5,
            -0.5,
            3.0,
            -3.0,
            2.5,
            -2.5,
            0.25,
            1e-3,
            float(info.smallest_subnormal),
            -float(info.smallest_subnormal),
            float(info.max),
            -float(info.max),
            float(info.tiny),
        ],
        dtype=dtype,
    )


def _same_bits(got, expected):
    """Equal with the same sign; NaNs must both be NaN with the same sign bit."""
    return ((got == expected) & (np.signbit(got) == np.signbit(expected))) | (
        np.isnan(got) & np.isnan(expected) & (np.signbit(got) == np.signbit(expected))
    )


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_special_values_as_numpy(dtype, level):
    values = _specials(dtype)
    x, y = (a.ravel() for a in np.meshgrid(values, values))
    with np.errstate(all="ignore"):
        expected = np.power(x, y)
        got = numfuse.evaluate("x ** y", local_dict={"x": x, "y": y})
    exact_class = ~np.isfinite(expected) | (expected == 0) | (expected == 1) | ~np.isfinite(x)
    exact_class |= ~np.isfinite(y) | (x == 0) | (y == 0)
    bad = exact_class & ~_same_bits(got, expected)
    assert not bad.any(), list(zip(x[bad], y[bad], got[bad], expected[bad]))
    assert _max_ulp(got[~exact_class], x[~exact_class], y[~exact_class], _exact) <= 1.0


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("exponent", [*INTEGERS, *HALVES, 0.3, -7.25, 1e300, -1e300])
def test_special_bases_with_constant_exponents_as_numpy(exponent, dtype, level):
    x = _specials(dtype)
    if float(exponent).is_integer() and abs(exponent) <= 16:
        expression = f"x ** {int(exponent)}"
    else:
        expression = f"x ** {exponent!r}"
    with np.errstate(all="ignore"):
        got = numfuse.evaluate(expression, local_dict={"x": x})
        expected = x ** dtype(exponent) if exponent != 0.5 else np.sqrt(x)
    exact_class = ~np.isfinite(expected) | (expected == 0) | ~np.isfinite(x) | (x == 0)
    bad = exact_class & ~_same_bits(got, expected)
    assert not bad.any(), list(zip(x[bad], got[bad], expected[bad]))


def test_nan_bits_come_from_the_inputs_as_numpy():
    payload = np.array([0x7FF8000000000123, 0xFFF8000000000456], np.uint64).view(np.float64)
    x = np.array([payload[0], 2.0, payload[1], -1.5])
    y = np.array([3.5, payload[1], payload[0], 0.5])
    with np.errstate(all="ignore"):
        got = numfuse.evaluate("x ** y", local_dict={"x": x, "y": y})
        expected = np.power(x, y)
    assert got.view(np.uint64).tolist() == expected.view(np.uint64).tolist()


def test_x_half_is_numpys_sqrt_path():
    x = np.array([-0.0, -np.inf, 4.0, -1.0])
    with np.errstate(all="ignore"):
        got = numfuse.evaluate("x ** 0.5", local_dict={"x": x})
        expected = x**0.5
    assert _same_bits(got, expected).all()


def test_reciprocal_is_bit_for_bit_numpys():
    rng = np.random.default_rng(1)
    for dtype in DTYPES:
        x = (rng.standard_normal(1000) * 10.0 ** rng.integers(-30, 30, 1000)).astype(dtype)
        with np.errstate(all="ignore"):
            got = numfuse.evaluate("x ** -1", local_dict={"x": x})
            assert np.array_equal(got, x**-1)


@pytest.mark.parametrize("name", ["pow", "power"])
def test_pow_and_power_are_the_operator(name):
    rng = np.random.default_rng(2)
    x = rng.uniform(0.1, 10, 100)
    y = rng.uniform(-5, 5, 100)
    np.testing.assert_array_equal(
        numfuse.evaluate(f"{name}(x, y)", local_dict={"x": x, "y": y}),
        numfuse.evaluate("x ** y", local_dict={"x": x, "y": y}),
    )
    a = np.arange(-5, 5, dtype=np.int32)
    b = np.arange(10, dtype=np.int32) % 4
    got = numfuse.evaluate(f"{name}(a, b)", local_dict={"a": a, "b": b})
    assert got.dtype == np.power(a, b).dtype
    np.testing.assert_array_equal(got, np.power(a, b))
    with pytest.raises(ValueError, match="negative integer powers"):
        numfuse.evaluate(f"{name}(a, -b)", local_dict={"a": a, "b": b})
    with pytest.raises(ValueError, match="negative integer powers"):
        numfuse.evaluate(f"{name}(a, -2)", local_dict={"a": a})


def test_float_power_computes_in_float64():
    a = np.arange(1, 6, dtype=np.int64)
    x = np.linspace(0.5, 3, 5, dtype=np.float32)
    for args in [(a, -2), (x, 2.5), (a, x)]:
        local = {"p": args[0], "q": args[1]}
        got = numfuse.evaluate("float_power(p, q)", local_dict=local)
        expected = np.float_power(*args)
        assert got.dtype == expected.dtype == np.float64
        np.testing.assert_allclose(got, expected, rtol=2e-16)
    z = np.array([1 + 1j, 2 - 1j], np.complex64)
    got = numfuse.evaluate("float_power(z, 2)", local_dict={"z": z})
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, np.float_power(z, 2), rtol=1e-15)


def test_integer_operands_as_numpy():
    a = np.arange(-4, 5, dtype=np.int64)
    np.testing.assert_array_equal(numfuse.evaluate("a ** 3", local_dict={"a": a}), a**3)
    with np.errstate(invalid="ignore"):
        got = numfuse.evaluate("a ** 2.5", local_dict={"a": a})
        np.testing.assert_array_equal(got, np.power(a, 2.5))
    got = numfuse.evaluate("a ** 3", local_dict={"a": a})
    assert got.dtype == (a**3).dtype
    with pytest.raises(ValueError, match="negative integer powers"):
        numfuse.evaluate("a ** -1", local_dict={"a": a})


def test_mixed_exponent_blocks():
    """A block whose exponents are one value takes the product path, the next one not: both
    agree with the general kernel within 1 ULP and with NumPy on special values."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-3, 3, 20000)
    y = np.full(x.size, 3.0)
    y[15000:] = rng.uniform(-3, 3, 5000).round()
    with np.errstate(all="ignore"):
        got = numfuse.evaluate("x ** y", local_dict={"x": x, "y": y})
    assert _max_ulp(got[::37], x[::37], y[::37], _exact) <= 1.0


def _table() -> None:
    levels = numfuse.usable_levels()
    print("| case | " + " | ".join(f"{d.__name__} {lv}" for d in DTYPES for lv in levels) + " |")
    print("|---" * (1 + len(DTYPES) * len(levels)) + "|")
    cases = [("x**n, n in -16..16", None), ("x**(m/2)", "halves"), ("x**y hard", "hard")]
    for title, kind in cases:
        cells = []
        for dtype, lv in itertools.product(DTYPES, levels):
            previous = numfuse.set_level(lv)
            try:
                if kind is None:
                    err = max(_constant_error(dtype, float(n)) for n in INTEGERS)
                elif kind == "halves":
                    err = max(_constant_error(dtype, h) for h in HALVES if h != 0.5)
                else:
                    err = _hard_error(dtype)
            finally:
                numfuse.set_level(previous)
            cells.append(f"{err:.3f}")
        print(f"| {title} | " + " | ".join(cells) + " |")


def _pairs(n: int) -> None:
    """Max ULP of float64 numfuse.power at the active level over n mpmath-checked pairs in
    four groups (docs/accuracy.md's 1e6-pair table), normal and subnormal results apart."""
    rng = np.random.default_rng(1)
    q = n // 4
    lx = rng.uniform(-708, 709, q)
    d = rng.uniform(-1, 1, q) * 2.0 ** -rng.uniform(1, 52, q)
    near = 1 + d[d != 0]
    near = near[near != 1]  # 1 + d rounds to 1 below 2^-53: log(near) = 0
    groups = {
        "edges": (np.exp(lx), rng.uniform(-745.2, 709.8, q) / lx),
        "x near 1": (near, rng.uniform(-745, 709, near.size) / np.log(near)),
        "cells by 1": _cells_by_one(q, rng),
        "ordinary": (rng.uniform(0.1, 10, q), rng.uniform(-3, 3, q)),
    }
    info = np.finfo(np.float64)
    with np.errstate(all="ignore"):
        for name, (x, y) in groups.items():
            got = numfuse.power(x, y)
            worst = {"normal": 0.0, "subnormal": 0.0}
            with mpmath.workprec(120):
                for k in range(x.size):
                    value = _exact(float(x[k]), float(y[k]))
                    g = float(got[k])
                    if abs(value) > info.max or abs(value) < 2.0**-1075:
                        continue  # inf / 0: test_hard_arguments_within_1_ulp
                    err = float(abs(mpmath.mpf(g) - value) / ulp_of(value, info))
                    kind = "normal" if abs(value) >= info.tiny else "subnormal"
                    worst[kind] = max(worst[kind], err)
            print(
                f"{numfuse.get_level()} {name}: {x.size} pairs, max {worst['normal']:.3f} ULP "
                f"(subnormal results {worst['subnormal']:.3f})",
                flush=True,
            )


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 2 and sys.argv[1] == "--pairs":
        _pairs(int(float(sys.argv[2])))
    else:
        _table()
