"""The log family's kernels (log, log2, log10, log1p, arcsinh, arccosh, arctanh, cbrt) on
inputs that mix magnitudes: subnormal lanes next to ordinary ones in the same SIMD batch
(at every lane position), the edges of the normal range, powers of two and of ten.

The kernels take subnormal inputs on their fast path (no per-batch rare path, no
multiplication by a subnormal operand, which costs a microcode assist on x86): these tests
would catch a fast path that gets such lanes wrong, or that changes their neighbours, at
every compiled level, for the ufuncs and for evaluate, contiguous and strided."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import numfuse
from conftest import ulp_distance

EXACT = {
    "log": mpmath.log,
    "log2": lambda x: mpmath.log(x, 2),
    "log10": mpmath.log10,
    "log1p": mpmath.log1p,
    "arcsinh": mpmath.asinh,
    "arccosh": mpmath.acosh,
    "arctanh": mpmath.atanh,
    "cbrt": lambda x: mpmath.sign(x) * mpmath.cbrt(abs(x)),
}
# Where each function's ordinary neighbours come from (one per lane between the subnormals).
ORDINARY = {
    "log": (0.5, 4.0),
    "log2": (0.5, 4.0),
    "log10": (0.5, 40.0),
    "log1p": (-0.5, 4.0),
    "arcsinh": (-10.0, 10.0),
    "arccosh": (1.0, 10.0),
    "arctanh": (-0.99, 0.99),
    "cbrt": (-10.0, 10.0),
}


def mixed_inputs(dtype) -> np.ndarray:
    """Ordinary values with a subnormal, a tiny normal or a huge value in some lanes.

    One rare lane per 7 elements walks through every lane position of every batch width;
    the rare values cover every subnormal binade (random fractions and the binade's first
    value), both sides of the smallest normal number and both signs."""
    info = np.finfo(dtype)
    rng = np.random.default_rng(1029)
    nbits = info.nmant + 1  # significant bits of a normal number
    sub_exponents = np.arange(info.minexp - nbits + 1, info.minexp)  # subnormal binades
    rare = np.concatenate(
        [
            np.ldexp(1.0 + rng.random(sub_exponents.size), sub_exponents),
            np.ldexp(1.0, sub_exponents),
            [info.smallest_subnormal, info.tiny, float(info.tiny) * (1 - info.epsneg)],
            [float(np.nextafter(info.tiny, dtype(1))), float(info.max), float(info.max) / 3],
            np.ldexp(1.0 + rng.random(20), rng.integers(info.minexp, info.maxexp, 20)),
        ]
    ).astype(dtype)
    rare = np.concatenate([rare, -rare])
    ordinary = rng.uniform(-10.0, 10.0, rare.size * 7).astype(dtype)
    x = ordinary.copy()
    x[::7] = rare
    return x


_exact_cache: dict = {}


def correctly_rounded(name: str, x: np.ndarray) -> np.ndarray:
    """mpmath at 200 bits, rounded once to float64 and then to x's dtype (NaN outside the
    domain, infinities at the poles)."""
    key = (name, x.dtype.str, x.tobytes())
    if key not in _exact_cache:
        values = []
        with mpmath.workprec(200):
            for value in x.astype(np.float64):
                try:
                    y = EXACT[name](mpmath.mpf(float(value)))
                except (ValueError, ZeroDivisionError):
                    y = mpmath.mpf("nan")
                if isinstance(y, mpmath.mpc):
                    y = mpmath.mpf("nan") if y.imag != 0 else y.real
                values.append(float(y))
        with np.errstate(over="ignore"):
            _exact_cache[key] = np.array(values, np.float64).astype(x.dtype)
    return _exact_cache[key]


def domain_inputs(name: str, dtype) -> np.ndarray:
    """mixed_inputs with the ordinary lanes moved into the function's usual range."""
    x = mixed_inputs(dtype)
    lo, hi = ORDINARY[name]
    rng = np.random.default_rng(hash(name) % 2**32)
    ordinary = np.ones(x.size, bool)
    ordinary[::7] = False
    x[ordinary] = rng.uniform(lo, hi, ordinary.sum()).astype(dtype)
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(EXACT))
def test_mixed_magnitudes_within_1_ulp(name, dtype, level):
    x = domain_inputs(name, dtype)
    exact = correctly_rounded(name, x)
    with np.errstate(all="ignore"):
        got = getattr(numfuse, name)(x)
        strided = getattr(numfuse, name)(np.repeat(x, 3)[::3])
        alone = np.concatenate([getattr(numfuse, name)(x[k : k + 1]) for k in range(x.size)])
        evaluated = numfuse.evaluate(f"{name}(x)", local_dict={"x": x})
    distance = ulp_distance(got, exact)
    worst = int(np.argmax(distance))
    assert distance.max() <= 1, f"{name}({x[worst]!r}) = {got[worst]!r}, exact {exact[worst]!r}"
    # The same bits whatever the neighbours, the stride and the front end.
    np.testing.assert_array_equal(got.view(np.uint8), strided.view(np.uint8))
    np.testing.assert_array_equal(got.view(np.uint8), alone.view(np.uint8))
    np.testing.assert_array_equal(got.view(np.uint8), evaluated.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log2_of_powers_of_two_is_exact(dtype, level):
    """log2(2^k) = k for every power of two of the dtype, subnormal ones included, with
    ordinary values in the other lanes."""
    info = np.finfo(dtype)
    k = np.arange(info.minexp - info.nmant, info.maxexp)
    x = np.ldexp(np.ones(k.size), k).astype(dtype)
    np.testing.assert_array_equal(numfuse.log2(x), k.astype(dtype))
    mixed = np.empty(2 * k.size, dtype)
    mixed[0::2] = x
    mixed[1::2] = dtype(3.0)
    np.testing.assert_array_equal(numfuse.log2(mixed)[0::2], k.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log10_of_powers_of_ten_is_exact(dtype, level):
    """log10(10^k) = k wherever 10^k is a number of the dtype (k <= 22 for float64, 10 for
    float32)."""
    top = 22 if dtype == np.float64 else 10
    k = np.arange(0, top + 1)
    x = (10.0 ** k.astype(np.float64)).astype(dtype)
    assert np.all(x.astype(np.float64) == 10.0 ** k.astype(np.float64))
    np.testing.assert_array_equal(numfuse.log10(x), k.astype(dtype))
    np.testing.assert_array_equal(
        numfuse.evaluate("log10(x)", local_dict={"x": x}), k.astype(dtype)
    )
