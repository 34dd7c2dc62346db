"""Accuracy of every transcendental op of numfuse.evaluate, at every level.

Each op is measured against mpmath (the exact value at 160 bits) on a few
thousand points spread over its whole domain -- hard sub-ranges included
(tiny and subnormal arguments, huge trig arguments such as tan(1e300) and
sin(1e22), overflow edges, arguments next to the poles and branch points).
The error is |got - exact| / ulp(exact) in the output dtype; every op must
stay within 1 ULP for float32 and float64 at every instruction-set level.
Special values (+-0, +-inf, NaN, subnormals, just past the overflow
thresholds) must equal NumPy's results bit for bit (NaN sign and payload
aside: only NaN-ness is compared).

Run as a script to print the max-ULP table:

    PYTHONPATH=... python tests/test_evaluate_accuracy.py
"""

from __future__ import annotations

import functools
import os
import warnings
import zlib

import mpmath
import numpy as np
import pytest

import numfuse

# random points per op and dtype, on top of the fixed hard cases (more: set
# NUMFUSE_ACCURACY_POINTS, e.g. for a long sweep from the script mode)
POINTS = int(os.environ.get("NUMFUSE_ACCURACY_POINTS", "1500"))


def _logu(rng, lo, hi, n, signed=False):
    """Log-uniform magnitudes in [lo, hi] (random sign if `signed`)."""
    x = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    if signed:
        x *= rng.choice([-1.0, 1.0], n)
    return x


def _domain(name: str, dtype) -> tuple[np.ndarray, ...]:
    """Arguments (one array per operand) covering the op's domain."""
    rng = np.random.default_rng(zlib.crc32(f"{name}{np.dtype(dtype).char}".encode()))
    info = np.finfo(dtype)
    big, sub = float(info.max), float(info.smallest_subnormal)
    n = POINTS
    f64 = dtype == np.float64
    lnmax = float(np.log(big))

    def u(a, b, k=n):
        return rng.uniform(a, b, k)

    if name in ("sin", "cos", "tan"):
        halfpi = np.pi / 2 * np.arange(-40, 41)
        parts = [
            u(-10, 10),
            _logu(rng, sub, big, n, True),
            u(-1e6, 1e6, n // 4),
            halfpi,
            np.nextafter(halfpi, np.inf),
            np.nextafter(halfpi, -np.inf),
            [1e22, -1e22, 1e300, -1e300, 1e15, 2.0**60, 3e38, 1.5e38, 1e10, 355.0, 103993.0],
        ]
        if f64:
            parts.append([6381956970095103.0 * 2.0**797, 5.0e-324, 1e308, 1.7976931348623157e308])
    elif name in ("arcsin", "arccos", "arctanh"):
        edge = 1 - _logu(rng, float(info.eps) / 2, 0.5, n // 2)
        parts = [
            u(-1, 1),
            _logu(rng, sub, 1, n // 2, True),
            edge,
            -edge,
            [0.5, -0.5, 1.0, -1.0, 0.99, 1e-30],
        ]
    elif name == "arctan":
        parts = [u(-10, 10), _logu(rng, sub, big, n, True), [1.0, -1.0, big, -big]]
    elif name in ("sinh", "cosh"):
        edge = lnmax + np.log(2)
        parts = [
            u(-edge - 1, edge + 1),
            _logu(rng, sub, 2, n // 2, True),
            u(-25, 25, n // 2),
            edge - _logu(rng, 1e-7, 2, n // 4),
            -(edge - _logu(rng, 1e-7, 2, n // 4)),
        ]
    elif name == "tanh":
        parts = [u(-25, 25), _logu(rng, sub, 1, n // 2, True), u(-1, 1, n // 2), [19.0, 20.0, 40.0]]
    elif name == "arcsinh":
        parts = [u(-10, 10), _logu(rng, sub, big, n, True), [big, -big]]
    elif name == "arccosh":
        parts = [
            1 + _logu(rng, float(info.eps), 1, n // 2),
            _logu(rng, 1, big, n),
            u(1, 10, n // 2),
            [1.0, big],
        ]
    elif name in ("log2", "log10"):
        parts = [
            _logu(rng, sub, big, n),
            u(0.5, 2, n // 2),
            [1.0, 2.0, 10.0, 1000.0, 1024.0, sub, big],
        ]
    elif name == "log1p":
        parts = [
            _logu(rng, sub, big, n),
            -_logu(rng, sub, 1, n // 2),
            u(-0.5, 1, n // 2),
            -1 + _logu(rng, float(info.eps) / 2, 0.5, n // 4),
        ]
    elif name == "expm1":
        parts = [
            u(-lnmax - 50, lnmax + 1),
            _logu(rng, sub, 1, n // 2, True),
            u(-1, 1, n // 2),
            u(30, 45, n // 2),
            u(-45, -30, n // 4),
            [lnmax, lnmax - 1e-3],
        ]
    elif name == "exp":
        parts = [u(-lnmax - 50, lnmax + 1), u(-1, 1, n // 2)]
    elif name == "log":
        parts = [_logu(rng, sub, big, n), u(0.5, 2, n // 2)]
    elif name == "erf":
        parts = [u(-7, 7), _logu(rng, sub, 1, n // 2, True)]
    elif name == "erfc":
        parts = [u(-6, 27.3 if f64 else 10.1), u(-1, 1, n // 2), _logu(rng, sub, 1, n // 4, True)]
    elif name == "expit":
        parts = [u(-760 if f64 else -110, 40), u(-5, 5, n // 2), _logu(rng, sub, 1, n // 4, True)]
    elif name == "sqrt":
        parts = [_logu(rng, sub, big, n)]
    elif name == "arctan2":
        y, x = _logu(rng, sub, big, n, True), _logu(rng, sub, big, n, True)
        y2, x2 = u(-10, 10), u(-10, 10)
        return np.concatenate([y, y2]).astype(dtype), np.concatenate([x, x2]).astype(dtype)
    elif name == "hypot":
        a, b = _logu(rng, sub, big, n, True), _logu(rng, sub, big, n, True)
        c = u(-10, 10)
        d = c * _logu(rng, 1e-8, 1e8, n)
        return np.concatenate([a, c]).astype(dtype), np.concatenate([b, d]).astype(dtype)
    elif name == "power":
        base = _logu(rng, 1e-3, 1e3, n)
        expo = u(-1, 1, n) * (lnmax * 1.05 / np.abs(np.log(base)))
        neg = -_logu(rng, 0.1, 10, n // 2)
        nexp = rng.integers(-40, 40, n // 2).astype(np.float64)
        small = 1 + u(-1e-3, 1e-3, n // 2)
        sexp = u(-1e4, 1e4, n // 2)
        return (
            np.concatenate([base, neg, small]).astype(dtype),
            np.concatenate([expo, nexp, sexp]).astype(dtype),
        )
    elif name == "logaddexp":
        a = u(-800 if f64 else -110, 800 if f64 else 110)
        b = a + u(-40, 40, n)
        c = u(-3, 3, n // 2)
        return np.concatenate([a, c]).astype(dtype), np.concatenate([b, -c]).astype(dtype)
    else:  # pragma: no cover
        raise KeyError(name)
    with np.errstate(over="ignore"):
        x = np.concatenate([np.asarray(p, dtype=np.float64) for p in parts]).astype(dtype)
    return (x[np.isfinite(x)],)


def _erfc(x):
    return mpmath.erfc(x)


def _expit(x):
    return 1 / (1 + mpmath.exp(-x))


def _logaddexp(a, b):
    return mpmath.log(mpmath.exp(a) + mpmath.exp(b))


def _power(a, b):
    if a < 0:
        return mpmath.power(a, int(b))
    return mpmath.power(a, b)


EXACT = {
    "sin": mpmath.sin,
    "cos": mpmath.cos,
    "tan": mpmath.tan,
    "arcsin": mpmath.asin,
    "arccos": mpmath.acos,
    "arctan": mpmath.atan,
    "sinh": mpmath.sinh,
    "cosh": mpmath.cosh,
    "tanh": mpmath.tanh,
    "arcsinh": mpmath.asinh,
    "arccosh": mpmath.acosh,
    "arctanh": mpmath.atanh,
    "exp": mpmath.exp,
    "log": mpmath.log,
    "log2": lambda x: mpmath.log(x, 2),
    "log10": mpmath.log10,
    "log1p": mpmath.log1p,
    "expm1": mpmath.expm1,
    "erf": mpmath.erf,
    "erfc": _erfc,
    "expit": _expit,
    "sqrt": mpmath.sqrt,
    "arctan2": mpmath.atan2,
    "hypot": lambda a, b: mpmath.sqrt(a * a + b * b),
    "power": _power,
    "logaddexp": _logaddexp,
}
EXPRESSION = {name: f"{name}(a)" for name in EXACT}
EXPRESSION.update(
    {
        "arctan2": "arctan2(a, b)",
        "hypot": "hypot(a, b)",
        "power": "a ** b",
        "logaddexp": "logaddexp(a, b)",
    }
)
OPS = sorted(EXACT)
DTYPES = [np.float32, np.float64]


def _ulp(value: mpmath.mpf, info) -> mpmath.mpf:
    """Unit in the last place of `value` in the output format (subnormal spacing at the bottom)."""
    if value == 0:
        return mpmath.ldexp(1, int(info.minexp) - info.nmant)
    exponent = max(int(mpmath.floor(mpmath.log(abs(value), 2))), int(info.minexp))
    return mpmath.ldexp(1, exponent - info.nmant)


@functools.cache
def _reference(
    name: str, dtype
) -> tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray, np.ndarray]:
    """(arguments, exact value rounded to float64, its remainder in output ULPs, ULP size)."""
    args = _domain(name, dtype)
    exact = EXACT[name]
    info = np.finfo(dtype)
    hi = np.empty(args[0].size)
    offset = np.zeros(args[0].size)
    ulp = np.ones(args[0].size)
    with mpmath.workprec(160):
        for k in range(args[0].size):
            value = exact(*(mpmath.mpf(float(a[k])) for a in args))
            if isinstance(value, mpmath.mpc):
                value = value.real
            h = float(value)
            hi[k] = h
            if np.isfinite(h):
                u = _ulp(value, info)
                ulp[k] = float(u)
                offset[k] = float((value - mpmath.mpf(h)) / u)
    return args, hi, offset, ulp


def max_ulp_error(name: str, dtype) -> float:
    """Max |got - exact| / ulp(exact) of evaluate(name) over its domain sweep."""
    args, hi, offset, ulp = _reference(name, dtype)
    names = "abc"[: len(args)]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = numfuse.evaluate(EXPRESSION[name], local_dict=dict(zip(names, args)))
    assert got.dtype == dtype
    info = np.finfo(dtype)
    big = float(info.max)
    got64 = got.astype(np.float64)
    with np.errstate(all="ignore"):
        # beyond max * (1 + eps/4) the exact value rounds to inf in the output format
        overflow = np.abs(hi) >= big * (1 + 2.0 ** -(info.nmant + 1))
        err = np.abs((got64 - hi) / ulp - offset)  # got - hi exact when close
    err = np.where(
        overflow, np.where(np.isinf(got64) & (np.sign(got64) == np.sign(hi)), 0.0, np.inf), err
    )
    err = np.where(np.isnan(hi), np.where(np.isnan(got64), 0.0, np.inf), err)
    err = np.where(~overflow & ~np.isnan(hi) & ~np.isfinite(got64), np.inf, err)
    return float(err.max())


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("name", OPS)
def test_within_1_ulp_of_exact(name, dtype, level):
    err = max_ulp_error(name, dtype)
    assert err <= 1.0, f"{name} {np.dtype(dtype)} at {level}: {err:.3f} ULP"


if __name__ == "__main__":  # pragma: no cover
    import sys

    levels = numfuse.usable_levels()
    print("| op | " + " | ".join(f"{d.__name__} {lv}" for d in DTYPES for lv in levels) + " |")
    print("|---" * (1 + len(DTYPES) * len(levels)) + "|")
    for name in sys.argv[1:] or OPS:
        row = []
        for dtype in DTYPES:
            for lv in levels:
                previous = numfuse.set_level(lv)
                try:
                    row.append(f"{max_ulp_error(name, dtype):.2f}")
                finally:
                    numfuse.set_level(previous)
        print(f"| {name} | " + " | ".join(row) + " |", flush=True)


# ------------------------------------------------------------ special values vs NumPy
def _numpy_reference(name):
    import scipy.special

    if name == "expit":
        # SciPy's expit flushes to 0 near and below -log(max) (its exp(-x)
        # overflows); the true value there is e^x (1 - e^x), a subnormal, which
        # numfuse returns: the reference is NumPy's exp where SciPy says 0.
        def expit(x):
            r = scipy.special.expit(x)
            return np.where(r == 0, np.exp(x), r)

        return expit
    if name in ("erf", "erfc"):
        return getattr(scipy.special, name)
    if name == "power":
        return np.power
    return getattr(np, name)


UNARY = [op for op in OPS if EXPRESSION[op] == f"{op}(a)"]
BINARY = [op for op in OPS if op not in UNARY]


def _special_values(dtype):
    info = np.finfo(dtype)
    sub = info.smallest_subnormal
    return np.array(
        [
            0.0,
            -0.0,
            np.inf,
            -np.inf,
            np.nan,
            -np.nan,
            sub,
            -sub,
            3 * sub,
            info.tiny / 2,
            -info.tiny / 3,
            info.tiny,
            1.0,
            -1.0,
            2.0,
            0.5,
            info.max,
            -info.max,
        ],
        dtype=dtype,
    )


def _not_correctly_rounded(expected, inputs, name, candidates):
    """Where `candidates`: NumPy's value more than 0.5 ULP from the exact one."""
    info = np.finfo(expected.dtype)
    off = np.zeros(expected.shape, bool)
    with mpmath.workprec(160):
        for k in np.flatnonzero(candidates):
            value = EXACT[name](*(mpmath.mpf(float(x[k])) for x in inputs))
            if isinstance(value, mpmath.mpc):
                value = value.real
            off[k] = abs(mpmath.mpf(float(expected[k])) - value) / _ulp(value, info) > 0.5
    return off


def _assert_special_as_numpy(got, expected, inputs, name):
    """Bit for bit (NaN-ness only for NaN) where NumPy's result is special -- inf, NaN,
    zero, or the input itself -- or an input is inf / NaN (or +-0 for arctan2);
    elsewhere the same class and sign as NumPy and within 1 ULP of the exact value
    (NumPy / SciPy themselves are up to a few ULP off there, e.g. SciPy's erfc near 20)."""
    assert got.dtype == expected.dtype
    info = np.finfo(got.dtype)
    with np.errstate(all="ignore"):
        special = ~np.isfinite(expected) | (expected == 0) | ~np.isfinite(inputs).all(axis=0)
        special_only = special.copy()  # special whatever NumPy's rounding
        if name == "arctan2":
            special |= (inputs == 0).any(axis=0)  # signed zeros decide the branch: mpmath has none
        returned_input = np.zeros(expected.shape, bool)
        for x in inputs:
            returned_input |= (expected == x) & (np.signbit(expected) == np.signbit(x))
        special |= returned_input
        # The exact answer wins where NumPy returned the input but is not correctly rounded
        # (glibc's atanh at 2^-26 - 1 ULP, NumPy's fallback without AVX-512): numfuse must be
        # correctly rounded there instead of equal to NumPy.
        # Unary ops with normal results only: there mpmath at 160 bits is exact enough.
        candidates = returned_input & ~special_only & (np.abs(expected) >= info.tiny)
        if len(inputs) != 1:
            candidates[:] = False
        numpy_off = _not_correctly_rounded(expected, inputs, name, candidates)
        special &= ~numpy_off
        bad = special & ~_same(got, expected)
        assert not bad.any(), (
            f"{name}{tuple(x[bad] for x in inputs)} = {got[bad]}, NumPy {expected[bad]}"
        )
        for k in np.flatnonzero(numpy_off):
            with mpmath.workprec(160):
                value = EXACT[name](*(mpmath.mpf(float(x[k])) for x in inputs))
                if isinstance(value, mpmath.mpc):
                    value = value.real
                err = abs(mpmath.mpf(float(got[k])) - value) / _ulp(value, info)
            assert err <= 0.5, (
                f"{name}{tuple(float(x[k]) for x in inputs)} = {got[k]}: {float(err):.2f} ULP "
                "where NumPy returns the input and is not correctly rounded"
            )
        rest = ~special & ~numpy_off
        assert np.array_equal(np.isfinite(got[rest]), np.isfinite(expected[rest]))
        assert np.array_equal(np.signbit(got[rest]), np.signbit(expected[rest]))
    with mpmath.workprec(160):
        for k in np.flatnonzero(rest):
            value = EXACT[name](*(mpmath.mpf(float(x[k])) for x in inputs))
            if isinstance(value, mpmath.mpc):
                value = value.real
            err = abs(mpmath.mpf(float(got[k])) - value) / _ulp(value, info)
            assert err <= 1, (
                f"{name}{tuple(float(x[k]) for x in inputs)} = {got[k]}: {float(err):.2f} ULP"
            )


def _edge_values(dtype):
    """Around overflow / underflow thresholds and branch points: inf-ness must match NumPy."""
    info = np.finfo(dtype)
    lnmax = float(np.log(info.max))
    points = [
        lnmax,
        lnmax + np.log(2),
        -lnmax - np.log(2),
        np.log(float(info.smallest_subnormal)),
        np.log(float(info.tiny)),
        19.0,
        19.1,
        20.0,
        22.0,
        36.0,
        37.5,
        40.0,
        2.0**-27,
        2.0**-26,
        2.0**28,
        2.0**29,
        1.5e6,
        1e22,
        1e300,
        0.99999,
        1.00001,
    ]
    out = []
    with np.errstate(over="ignore"):
        for p in points:
            p = dtype(p) if np.isfinite(dtype(p)) else info.max
            for q in (np.nextafter(p, dtype(-np.inf)), p, np.nextafter(p, dtype(np.inf))):
                out += [q, -q]
    return np.array(out, dtype=dtype)


def _same(got, expected):
    return (got == expected) & (np.signbit(got) == np.signbit(expected)) | (
        np.isnan(got) & np.isnan(expected)
    )


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("name", UNARY)
def test_special_values_as_numpy(name, dtype, level):
    x = _special_values(dtype)
    with np.errstate(all="ignore"):
        expected = _numpy_reference(name)(x)
        got = numfuse.evaluate(EXPRESSION[name], local_dict={"a": x})
    _assert_special_as_numpy(got, expected, np.array([x]), name)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("name", UNARY)
def test_edges_as_numpy(name, dtype, level):
    x = _edge_values(dtype)
    with np.errstate(all="ignore"):
        expected = _numpy_reference(name)(x)
        got = numfuse.evaluate(EXPRESSION[name], local_dict={"a": x})
    _assert_special_as_numpy(got, expected, np.array([x]), name)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_special_values_as_numpy(name, dtype, level):
    v = _special_values(dtype)
    a, b = (m.ravel() for m in np.meshgrid(v, v))
    with np.errstate(all="ignore"):
        expected = _numpy_reference(name)(a, b)
        got = numfuse.evaluate(EXPRESSION[name], local_dict={"a": a, "b": b})
    _assert_special_as_numpy(got, expected, np.array([a, b]), name)


# ------------------------------------------------------------ complex64
COMPLEX_EXACT = {
    "sin": mpmath.sin,
    "cos": mpmath.cos,
    "tan": mpmath.tan,
    "arcsin": mpmath.asin,
    "arccos": mpmath.acos,
    "arctan": mpmath.atan,
    "sinh": mpmath.sinh,
    "cosh": mpmath.cosh,
    "tanh": mpmath.tanh,
    "arcsinh": mpmath.asinh,
    "arccosh": mpmath.acosh,
    "arctanh": mpmath.atanh,
    "exp": mpmath.exp,
    "log": mpmath.log,
    "log10": mpmath.log10,
    "log2": lambda z: mpmath.log(z, 2),
    "log1p": lambda z: mpmath.log(1 + z),
    "expm1": lambda z: mpmath.exp(z) - 1,
    "sqrt": mpmath.sqrt,
}


@pytest.mark.parametrize("name", sorted(COMPLEX_EXACT))
def test_complex64_within_1_ulp_normwise(name):
    """complex64 functions run in complex128 and round once: |got - exact| <= 1 ulp(|exact|)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    z = rng.uniform(-3, 3, 300) + 1j * rng.uniform(-3, 3, 300)
    z = np.concatenate([z, 1e-3 * z[:60], 20 * z[:60]]).astype(np.complex64)
    with np.errstate(all="ignore"):
        got = numfuse.evaluate(f"{name}(z)", {"z": z})
    assert got.dtype == np.complex64
    worst = 0.0
    with mpmath.workprec(120):
        for g, v in zip(got, z):
            exact = COMPLEX_EXACT[name](mpmath.mpc(complex(v)))
            size = abs(exact)
            if (
                not np.isfinite(g)
                or size < np.finfo(np.float32).tiny
                or size > np.finfo(np.float32).max
            ):
                continue
            ulp = mpmath.ldexp(1, int(mpmath.floor(mpmath.log(size, 2))) - 23)
            worst = max(worst, float(abs(mpmath.mpc(complex(g)) - exact) / ulp))
    assert worst <= 1.0, f"{name} complex64: {worst:.2f} ULP"
