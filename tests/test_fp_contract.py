"""No silent FMA contraction: a * b + c written in the C++ sources is a product and a sum,
each rounded, at every instruction-set level (CMakeLists.txt passes -ffp-contract=off).

GCC's C++ default, -ffp-contract=fast, fuses a product feeding a sum into one FMA wherever
the unit's target has FMA (the avx2_fma and avx512 units, aarch64). Results then depend on
where a kernel is inlined (the contiguous loop against the strided one, the ufunc against
evaluate) and no longer follow the operations the kernels' error analyses describe.

The probe: evaluate's complex division (kernels::complex_divide, Smith's algorithm, plain
C++ compiled in each level's unit), whose four multiply-adds GCC contracted at avx2_fma
before the flag. Its reference here is the same formula in Python's (unfused) arithmetic;
the test first checks that the fused formula differs on its operands, so that it would fail
if contraction came back.
"""

from fractions import Fraction

import numpy as np
import pytest

import numfuse


def _smith(ar, ai, br, bi, madd):
    """Smith's division (a / b) with madd(x, y, z) = x * y + z as the caller rounds it."""
    if abs(br) >= abs(bi):
        rat = bi / br
        scl = 1 / madd(bi, rat, br)
        return madd(ai, rat, ar) * scl, madd(-ar, rat, ai) * scl
    rat = br / bi
    scl = 1 / madd(br, rat, bi)
    return madd(ar, rat, ai) * scl, madd(ai, rat, -ar) * scl


def _fused(real, x, y, z):
    """One rounding of the exact x * y + z (to float64 first: for float32 operands that is
    exact or off in a bit far below float32's last place)."""
    return real(float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))))


def _operands(real, ctype, count: int, seed: int):
    """count rows (ar, ai, br, bi) of real values in [-4, 4] and the complex z, w they make."""
    rng = np.random.default_rng(seed)
    parts = [real(v) for v in rng.uniform(-4.0, 4.0, (count, 4)).ravel()]
    rows = [parts[4 * k : 4 * k + 4] for k in range(count)]
    z = np.array([complex(r[0], r[1]) for r in rows], dtype=ctype)
    w = np.array([complex(r[2], r[3]) for r in rows], dtype=ctype)
    return rows, z, w


def _quotients(real, ctype, count: int, seed: int):
    rows, z, w = _operands(real, ctype, count, seed)

    def unfused(x, y, z):
        return real(x * y) + z

    def fused(x, y, z):
        return _fused(real, x, y, z)

    plain = np.array([complex(*_smith(*r, unfused)) for r in rows], dtype=ctype)
    contracted = np.array([complex(*_smith(*r, fused)) for r in rows], dtype=ctype)
    return z, w, plain, contracted


@pytest.mark.parametrize(
    ("real", "ctype"), [(np.float64, np.complex128), (np.float32, np.complex64)]
)
def test_complex_division_is_not_contracted(level, real, ctype):
    z, w, expected, contracted = _quotients(real, ctype, 301, seed=29)
    # The probe can see contraction: fused multiply-adds would change many quotients.
    assert np.count_nonzero(contracted != expected) > 20
    got = numfuse.evaluate("z / w", {"z": z, "w": w})
    assert got.dtype == ctype
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, (
        f"{level}: {bad.size} of {len(z)} quotients not Smith's unfused formula "
        f"({np.count_nonzero(got[bad] == contracted[bad])} of them the fused one; first: "
        f"{z[bad[0]]!r} / {w[bad[0]]!r} = {got[bad[0]]!r}, expected {expected[bad[0]]!r})"
    )


def _products(real, ctype, count: int, seed: int):
    """(z, w, textbook, fused): z * w unfused, and with NumPy's FMA form
    re = fma(ar, br, -(ai bi)), im = fma(ar, bi, ai br)."""
    rows, z, w = _operands(real, ctype, count, seed)
    textbook = np.array(
        [
            complex(real(ar * br) - real(ai * bi), real(ar * bi) + real(ai * br))
            for ar, ai, br, bi in rows
        ],
        dtype=ctype,
    )
    fused = np.array(
        [
            complex(_fused(real, ar, br, -real(ai * bi)), _fused(real, ar, bi, real(ai * br)))
            for ar, ai, br, bi in rows
        ],
        dtype=ctype,
    )
    return z, w, textbook, fused


@pytest.mark.parametrize(
    ("real", "ctype"), [(np.float64, np.complex128), (np.float32, np.complex64)]
)
def test_complex_product_one_formula_per_level(level, real, ctype):
    # 301 elements: the vectorized body and a tail at every level, contiguous and strided.
    z, w, textbook, fused = _products(real, ctype, 301, seed=31)
    assert np.count_nonzero(textbook != fused) > 20
    # NumPy's x86 loops fuse with FMA; numfuse's x86 FMA levels give the same bits.
    expected = fused if level in ("avx2_fma", "avx512") else textbook
    for zz, ww, want in ((z, w, expected), (z[::3], w[::3], expected[::3])):
        got = numfuse.evaluate("z * w", {"z": zz, "w": ww})
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, (
            f"{level}: {bad.size} of {len(zz)} products not the level's formula "
            f"(first: {zz[bad[0]]!r} * {ww[bad[0]]!r} = {got[bad[0]]!r}, expected {want[bad[0]]!r})"
        )
