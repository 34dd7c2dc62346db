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
from conftest import ulp_of
from function_table import CORE, FUNCTIONS, INVALID, Sweep, arguments

# random points per op and dtype, on top of the fixed hard cases (more: set
# NUMFUSE_ACCURACY_POINTS, e.g. for a long sweep from the script mode)
POINTS = int(os.environ.get("NUMFUSE_ACCURACY_POINTS", "1500"))


def _domain(name: str, dtype) -> tuple[np.ndarray, ...]:
    """Arguments (one array per operand) covering the op's domain (the function
    table's domain rows, tests/function_table.py; `power` is an operator)."""
    rng = np.random.default_rng(zlib.crc32(f"{name}{np.dtype(dtype).char}".encode()))
    sweep = Sweep(rng, dtype, POINTS)
    if name != "power":
        return arguments(name, sweep, dtype)
    n, lnmax = sweep.n, sweep.lnmax
    base = sweep.logu(1e-3, 1e3, n)
    expo = sweep.u(-1, 1, n) * (lnmax * 1.05 / np.abs(np.log(base)))
    neg = -sweep.logu(0.1, 10, n // 2)
    nexp = rng.integers(-40, 40, n // 2).astype(np.float64)
    small = 1 + sweep.u(-1e-3, 1e-3, n // 2)
    sexp = sweep.u(-1e4, 1e4, n // 2)
    return (
        np.concatenate([base, neg, small]).astype(dtype),
        np.concatenate([expo, nexp, sexp]).astype(dtype),
    )


def _power(a, b):
    if a < 0:
        return mpmath.power(a, int(b))
    return mpmath.power(a, b)


# Every table function with an exact reference (the others are exact by construction),
# and the power operator.
EXACT = {name: f.exact for name, f in FUNCTIONS.items() if f.exact is not None}
EXACT["power"] = _power
EXPRESSION = {
    name: f"{name}(a)" if CORE[name].arity == 1 else f"{name}(a, b)"
    for name in EXACT
    if name != "power"
}
EXPRESSION["power"] = "a ** b"
OPS = sorted(EXACT)
DTYPES = [np.float32, np.float64]


_ulp = ulp_of


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
    if name == "float_power" and dtype == np.float32:
        pytest.skip("float_power computes float32 operands in float64: the float64 case")
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
                if name == "float_power" and dtype == np.float32:
                    row.append("-")  # computed in float64
                    continue
                previous = numfuse.set_level(lv)
                try:
                    row.append(f"{max_ulp_error(name, dtype):.2f}")
                finally:
                    numfuse.set_level(previous)
        print(f"| {name} | " + " | ".join(row) + " |", flush=True)


# ------------------------------------------------------------ special values vs NumPy
def _numpy_reference(name):
    return np.power if name == "power" else FUNCTIONS[name].reference


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


# ------------------------------------------------------------ the NaN of invalid inputs
def _bits(a):
    return np.asarray(a).view(np.uint32 if np.asarray(a).dtype == np.float32 else np.uint64)


def _nan_inputs(dtype):
    """+NaN, -NaN and a NaN with a payload, of `dtype`."""
    bits = [0x7FC00000, 0xFFC00000, 0x7FC12345] if dtype == np.float32 else None
    if bits is None:
        bits = [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF800000ABCDEF1]
    return np.array(bits, np.uint32 if dtype == np.float32 else np.uint64).view(dtype)


def test_invalid_table_covers_the_function_table():
    assert set(INVALID) == set(CORE)
    # The rows without invalid arguments: NumPy returns no NaN for non-NaN special values.
    for name, invalid in INVALID.items():
        if invalid or CORE[name].arity != 1:
            continue
        for dtype in DTYPES:
            x = _special_values(dtype)
            x = x[~np.isnan(x)]
            with np.errstate(all="ignore"):
                assert not np.isnan(_numpy_reference(name)(x)).any(), name


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("name", [n for n in INVALID if CORE[n].arity == 1])
def test_nan_of_invalid_and_nan_inputs_is_the_ufuncs(name, dtype, level):
    """evaluate returns, bit for bit, the NaN numfuse's ufunc of the same function returns
    on this CPU, which is NumPy's (src/python/nan_policy.hpp): for arguments outside the
    domain and for NaN arguments, at every level, in SIMD lanes and in a loop's tail; so
    signbit/copysign of the result agree with NumPy's (docs/accuracy.md)."""
    row = CORE[name]
    ordinary = 1.5 if name == "arccosh" else 0.5
    bad = np.concatenate([np.array(INVALID[name], dtype), _nan_inputs(dtype)])
    for value in bad:
        x = np.full(37, ordinary, dtype)
        x[1::3] = value  # among ordinary arguments: lanes of full batches and of the tail
        with np.errstate(all="ignore"):
            numpy = _numpy_reference(name)(x)
            ufunc = getattr(numfuse, name)(x) if row.is_ufunc else numpy
        for got in (numfuse.evaluate(f"{name}(x)"), numfuse.compile(f"{name}(x)")(x)):
            np.testing.assert_array_equal(got[0::3], ufunc[0::3])
            assert np.isnan(got[1::3]).all(), (name, value)
            assert (_bits(got[1::3]) == _bits(ufunc[1::3])).all(), (
                f"{name}({value}): {_bits(got[1]):x}, the ufunc's {_bits(ufunc[1]):x}"
            )
            assert (np.signbit(got[1::3]) == np.signbit(numpy[1::3])).all(), (name, value)
        if dtype == np.float64 and np.isfinite(value):
            # A constant argument: folded at compile time through the same kernel.
            folded = numfuse.evaluate(f"{name}({float(value)!r})")
            assert _bits(folded) == _bits(ufunc[1]), (name, value)


# ------------------------------------------------------------ complex64
COMPLEX_EXACT = {
    name: f.exact_complex for name, f in FUNCTIONS.items() if f.exact_complex is not None
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
