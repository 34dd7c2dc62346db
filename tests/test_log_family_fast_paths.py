"""The log family's kernels (log, log2, log10, log1p, arcsinh, arccosh, arctanh, cbrt) and
sqrt on inputs that mix magnitudes: subnormal lanes next to ordinary ones in the same SIMD
batch (at every lane position), the edges of the normal range, powers of two and of ten;
and cbrt's float32 kernel over every reduced argument.

The kernels take subnormal inputs without a multiplication by a subnormal operand (which
costs a microcode assist on x86), most on their fast path; float64 log at avx2_fma sends the
batches holding one to the ufunc loop's rare path (its fast kernel skips the scaling): these
tests would catch a fast or rare path that gets such lanes wrong, or that changes their
neighbours, at every compiled level, for the ufuncs and for evaluate, contiguous (out of place:
the deferred test and rescan; in place: the per-pair test) and strided."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import numfuse
from conftest import fp_conditions, results_in_three_layouts, ulp_distance

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
        in_place = x.copy()
        getattr(numfuse, name)(in_place, out=in_place)
        evaluated = numfuse.evaluate(f"{name}(x)", local_dict={"x": x})
    distance = ulp_distance(got, exact)
    worst = int(np.argmax(distance))
    assert distance.max() <= 1, f"{name}({x[worst]!r}) = {got[worst]!r}, exact {exact[worst]!r}"
    # The same bits whatever the neighbours, the stride and the front end.
    np.testing.assert_array_equal(got.view(np.uint8), strided.view(np.uint8))
    np.testing.assert_array_equal(got.view(np.uint8), alone.view(np.uint8))
    np.testing.assert_array_equal(got.view(np.uint8), in_place.view(np.uint8))
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


def _float32_ulps_from(got: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """|got - reference| in float32 ULPs of got (got float32, reference float64, both
    finite and normal in float32)."""
    spacing = np.spacing(np.abs(got)).astype(np.float64)
    return np.abs(got.astype(np.float64) - reference) / spacing


def test_cbrt_float32_every_value_of_three_binades(level):
    """Every float32 in [1, 8) (the reduced argument's range: every other input is one of
    these times 2^(3q)), against float64's cube root: the float32 kernel's method bound is
    0.5 + 2^-6 ULP on every level, whether it runs on float32 lanes (FMA levels) or widened
    to float64 (SSE2). A sloppy seed, a Newton step without its exact residual or a wrong
    2^(-r/3) shows up here as 0.6 ULP or more."""
    bits = np.arange(0x3F800000, 0x41000000, dtype=np.uint32)  # [1, 8)
    x = bits.view(np.float32)
    reference = np.cbrt(x.astype(np.float64))
    got = numfuse.cbrt(x)
    assert _float32_ulps_from(got, reference).max() <= 0.5 + 2.0**-6
    np.testing.assert_array_equal(numfuse.cbrt(-x), -got)


def test_cbrt_float32_across_all_binades(level):
    """Random float32 bit patterns over every positive binade, subnormals included, and
    their negatives: within the method bound of float64's cube root, and cbrt(x 2^3k) =
    cbrt(x) 2^k exactly (the reduction's q and r are right in every binade)."""
    rng = np.random.default_rng(2915)
    bits = rng.integers(1, 0x7F800000, 1 << 20, dtype=np.uint32)
    x = np.concatenate([bits.view(np.float32), np.float32([1.0, 8.0, 0.125, 27.0])])
    reference = np.cbrt(x.astype(np.float64))
    got = numfuse.cbrt(x)
    assert _float32_ulps_from(got, reference).max() <= 0.5 + 2.0**-6
    np.testing.assert_array_equal(numfuse.cbrt(-x), -got)
    np.testing.assert_array_equal(got[-4:], np.float32([1.0, 2.0, 0.5, 3.0]))
    # Scaling by 2^(3k) within the normal range scales the root by 2^k, bit for bit.
    base = np.linspace(1.0, 8.0, 1001, dtype=np.float32)
    for k in (-41, -13, -1, 1, 17, 41):
        scaled = np.ldexp(base, 3 * k).astype(np.float32)
        np.testing.assert_array_equal(numfuse.cbrt(scaled), np.ldexp(numfuse.cbrt(base), k))


def test_cbrt_float32_every_subnormal_and_the_top_binade(level):
    """Every subnormal float32 (vgetmant / vgetexp's exact reduction, the exponent down to
    -149, q = -50) and every float32 of the top binade (q = 43: the exponent word's largest
    addition), both signs: within the method bound of float64's cube root. A reduction or
    exponent word that is right only for the middle binades shows up here."""
    for lo, hi in ((0x00000001, 0x00800000), (0x7F000000, 0x7F800000)):
        x = np.arange(lo, hi, dtype=np.uint32).view(np.float32)
        got = numfuse.cbrt(x)
        assert _float32_ulps_from(got, np.cbrt(x.astype(np.float64))).max() <= 0.5 + 2.0**-6
        np.testing.assert_array_equal(numfuse.cbrt(-x), -got)


def test_cbrt_float64_reduced_arguments(level):
    """Random float64 in [1, 8) (the reduced argument's range) against mpmath, and their
    negatives: within 0.5 + 2^-4 ULP on every level (the method bounds are 0.535 ULP at
    AVX-512, 0.5 + 2^-12 elsewhere). A series cut a term short, a seed whose rounding keeps
    a bit too many (inexact u^3) or a wrong 2^(r/3) shows up as 0.6 ULP or (far) more."""
    rng = np.random.default_rng(3127)
    x = rng.uniform(1.0, 8.0, 4000)
    got = numfuse.cbrt(x)
    with mpmath.workprec(120):
        worst = max(
            abs(mpmath.mpf(float(g)) - mpmath.cbrt(mpmath.mpf(float(v)))) / float(np.spacing(g))
            for v, g in zip(x, got)
        )
    assert worst <= 0.5 + 2.0**-4
    np.testing.assert_array_equal(numfuse.cbrt(-x), -got)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cbrt_special_values(dtype, level):
    """+-0, +-inf keep their sign; NaN stays NaN; exact cubes are exact, in every lane
    position next to ordinary values."""
    info = np.finfo(dtype)
    specials = np.array(
        [0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 8.0, -27.0, 0.125, info.smallest_subnormal],
        dtype,
    )
    expected = np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 2.0, -3.0, 0.5, np.nan], dtype)
    for shift in range(17):
        x = np.full(40, dtype(5.0))
        x[shift : shift + specials.size] = specials
        x = np.append(x, dtype(np.nan))
        got = numfuse.cbrt(x)
        got_specials = got[shift : shift + specials.size]
        np.testing.assert_array_equal(got_specials[:-1], expected[:-1])
        np.testing.assert_array_equal(np.signbit(got_specials[:-1]), np.signbit(expected[:-1]))
        assert np.isnan(got[-1])
        tiny = correctly_rounded("cbrt", specials[-1:])
        assert ulp_distance(got_specials[-1:], tiny).max() <= 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cbrt_nan_lanes_anywhere_in_a_contiguous_call(dtype, level):
    """NaN and -NaN at the head, the middle and the tail of a contiguous out-of-place call,
    and infinities alone or beside a NaN: the in-place and strided calls' bits, NumPy's
    NaNs (the rare path's NaN policy), and no warning."""
    n = 10_007
    bits = np.uint32 if dtype == np.float32 else np.uint64
    rng = np.random.default_rng(26)
    for values, positions in (
        ((np.nan,), (0,)),
        ((-np.nan, np.nan), (n // 2, n - 1)),
        ((np.inf, -np.inf), (3, n // 3)),
        ((np.inf, np.nan), (5, n - 2)),
    ):
        x = rng.uniform(-100, 100, n).astype(dtype)
        x[list(positions)] = values
        with np.errstate(all="raise"):
            got, inplace, strided = results_in_three_layouts(numfuse.cbrt, x)
            ref = np.cbrt(x)
        for other in (inplace, strided):
            np.testing.assert_array_equal(got.view(bits), other.view(bits))
        nan = np.isnan(ref)
        np.testing.assert_array_equal(np.isnan(got), nan)
        np.testing.assert_array_equal(got[nan].view(bits), ref[nan].view(bits))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sqrt_is_the_hardware_root_with_subnormal_lanes(dtype, level):
    """sqrt scales subnormal inputs by integer operations before the root (no microcode
    assist) and back after: the bits must stay NumPy's (the correctly rounded root) for
    every subnormal binade in every lane position, next to ordinary values, with -0, the
    negative subnormals (NaN, invalid) and the edges of the normal range; in the ufunc
    (contiguous, strided, out=) and in evaluate."""
    x = mixed_inputs(dtype)
    x = np.concatenate([x, np.array([0.0, -0.0, np.inf, -np.inf, 1.0, 4.0], dtype)])
    with np.errstate(invalid="ignore"):
        expected = np.sqrt(x)
        got = numfuse.sqrt(x)
        out = np.empty_like(x)
        numfuse.sqrt(x, out=out)
        strided = numfuse.sqrt(np.repeat(x, 3)[::3])
        evaluated = numfuse.evaluate("sqrt(x)", local_dict={"x": x})
    finite = ~np.isnan(expected)
    for result in (got, out, strided, evaluated):
        np.testing.assert_array_equal(
            result[finite].view(np.uint8), expected[finite].view(np.uint8)
        )
        assert np.array_equal(np.isnan(result), np.isnan(expected))
    # x < 0 raises invalid, as NumPy's; positive subnormals raise nothing.
    positive = x[x > 0]
    with np.errstate(all="raise"):
        numfuse.sqrt(positive, out=np.empty_like(positive))
        with pytest.raises(FloatingPointError):
            numfuse.sqrt(x, out=np.empty_like(x))


def cell_edges() -> np.ndarray:
    """The cell edges of the float64 log's table reductions, as values in [0.5, 2):
    bits(0.640625) + i 2^48 (avx512's 16 cells of z in [0.640625, 1.28125)) and
    bits(0.638671875) + i 2^45 (avx2_fma's 128 cells of z in [0.638671875, 1.27734375))."""
    return np.concatenate(
        [
            (0x3FE4800000000000 + (np.arange(16, dtype=np.uint64) << np.uint64(48))),
            (0x3FE4700000000000 + (np.arange(128, dtype=np.uint64) << np.uint64(45))),
        ]
    ).view(np.float64)


def test_log_float64_cell_edges_within_1_ulp(level):
    """Every input within 40 ulps of every cell edge (both table reductions, cell_edges), in
    the binades of k = -1, 0, 1 where the cells' -log(invc) meets t without a large k ln2
    beside it, and every input within 2000 ulps of 1: <= 1 ULP against mpmath, contiguous
    (the avx2_fma ufunc loop's rows from memory) and strided (rows from the lanes)."""
    steps = np.arange(-40, 41, dtype=np.int64)
    edges = cell_edges()
    base = np.concatenate([edges, edges * 2, edges / 2])
    values = (base.view(np.int64)[:, None] + steps[None, :]).ravel().view(np.float64)
    near_one = (np.float64(1.0).view(np.int64) + np.arange(-2000, 2001)).view(np.float64)
    values = np.unique(np.concatenate([values, near_one]))
    exact = correctly_rounded("log", values)
    contiguous = numfuse.log(values)
    strided = numfuse.log(np.repeat(values, 2)[::2])
    assert ulp_distance(contiguous, exact).max() <= 1
    assert ulp_distance(strided, exact).max() <= 1
    np.testing.assert_array_equal(contiguous.view(np.uint64), strided.view(np.uint64))
    assert numfuse.log(np.array([1.0]))[0] == 0 and not np.signbit(numfuse.log(np.ones(5)))[0]


def test_log_float64_contiguous_same_bits_as_strided(level):
    """Contiguous out-of-place float64 log with no rare lane runs the fast kernel over the
    whole array (at avx2_fma it reads each lane's table cell from the input's memory, not
    from the vector lanes); strided and one-element calls take the kernel on loaded lanes.
    Every binade, both sides of every cell edge of the table reductions (avx512: the top
    four fraction bits of x + 1 - 0.640625; avx2_fma: the top seven of x + 1 - 0.638671875)
    and random fractions, at four input alignments."""
    rng = np.random.default_rng(2921)
    exponents = np.arange(-1022, 1024)
    edges = cell_edges()
    edges = np.concatenate([np.nextafter(edges, 0), edges, np.nextafter(edges, 2)])
    values = np.concatenate(
        [
            np.ldexp(
                edges[:, None], exponents[None, :] - rng.integers(0, 2, exponents.size)
            ).ravel(),
            np.ldexp(1.0 + rng.random(4000), rng.integers(-1022, 1024, 4000)),
            1.0 + np.ldexp(rng.random(2000) - 0.5, -rng.integers(1, 50, 2000)),
        ]
    )
    values = values[np.isfinite(values) & (values >= np.finfo(np.float64).tiny)]
    rng.shuffle(values)
    strided = numfuse.log(np.repeat(values, 2)[::2])
    alone = np.concatenate([numfuse.log(values[k : k + 1]) for k in range(0, values.size, 97)])
    np.testing.assert_array_equal(strided[::97].view(np.uint64), alone.view(np.uint64))
    for offset in range(4):
        buffer = np.empty(values.size + 4)
        x = buffer[offset : offset + values.size]
        x[:] = values
        got = numfuse.log(x)
        np.testing.assert_array_equal(got.view(np.uint64), strided.view(np.uint64))
        out = np.empty(values.size + 4)[3 - offset : 3 - offset + values.size]
        numfuse.log(x, out=out)
        np.testing.assert_array_equal(out.view(np.uint64), strided.view(np.uint64))
    exact = correctly_rounded("log", values[::53])
    assert ulp_distance(strided[::53], exact).max() <= 1


def table_log_arguments(name: str) -> np.ndarray:
    """Inputs of the float64 log family whose log argument lands next to a cell edge of the
    table logs (cell_edges: avx512's 16 cells, avx2_fma's 128), one ULP either side, in several
    binades, plus each kernel's switch points: log2 / log10 take the log of x, log1p of 1 + x,
    arcsinh of |x| + sqrt(x^2 + 1), arccosh of x + sqrt(x^2 - 1), arctanh of
    (1 + |x|) / (1 - |x|)."""
    edges = cell_edges()
    edges = np.concatenate([np.nextafter(edges, 0), edges, np.nextafter(edges, 2)])
    if name in ("log2", "log10"):
        return np.concatenate([np.ldexp(edges[:, None], [-1074 + 60, -3, 0, 1, 7, 1000]).ravel()])
    if name == "log1p":
        y = np.ldexp(edges[:, None], [-1, 0, 1, 4]).ravel()
        switch = [2.0**-54, 2.0**-53, 2.0**-52, 1.5 * 2.0**-54]
        x = np.concatenate([y - 1, switch, np.negative(switch), [-1 + 2.0**-53, -1 + 2.0**-40]])
        x = np.concatenate([x, np.nextafter(x, -2), np.nextafter(x, 2)])
        return x[x > -1]
    y = np.ldexp(edges[:, None], np.arange(0, 30, 3)).ravel()
    y = y[y > 1]
    if name == "arcsinh":
        switch = [2.0**-28, 2.0**-27, 0.25, 2.0**26.5, 2.0**28]
        x = np.concatenate([(y - 1 / y) / 2, switch])
        x = np.concatenate([x, np.nextafter(x, 0), np.nextafter(x, np.inf)])
        return np.concatenate([x, -x])
    if name == "arccosh":
        switch = [1 + 2.0**-52, 1 + 2.0**-30, 1.25, 2.0**28]
        x = np.concatenate([(y + 1 / y) / 2, switch])
        return np.concatenate([x, np.nextafter(x, 0), np.nextafter(x, np.inf)])
    switch = [2.0**-28, 2.0**-27, 0.5, 1 / 65, 1 - 2.0**-53, 1 - 2.0**-30]
    x = np.concatenate([(y - 1) / (y + 1), switch])
    x = np.concatenate([x, np.nextafter(x, 0), np.nextafter(x, 1)])
    x = x[x < 1]
    return np.concatenate([x, -x])


@pytest.mark.parametrize("name", ["log2", "log10", "log1p", "arcsinh", "arccosh", "arctanh"])
def test_log_family_float64_at_the_table_cells(name, level):
    """The float64 kernels built on the table logs' pair (avx512, avx2_fma): within 1 ULP
    where the log's argument sits on a cell edge and at each kernel's switch points."""
    x = table_log_arguments(name)
    got = getattr(numfuse, name)(x)
    exact = correctly_rounded(name, x)
    assert ulp_distance(got, exact).max() <= 1, (name, level)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["log2", "log10"])
def test_log2_log10_rare_lane_at_every_position(name, dtype, level):
    """One rare value (+-0, +-inf, NaN, x < 0, a subnormal, the smallest normal and its
    neighbours, the largest value, 1) in one lane of an ordinary array, at every position
    of a 16-lane window and in the array's second half: the contiguous loop computes every
    batch by the compute half alone and repairs the batches its screen flags, so a screen
    that misses a lane, or a repair that changes the flagged batch's ordinary lanes, gives
    other bits than the strided loop and evaluate (the whole kernel per batch). Conditions
    as NumPy's: divide for +-0, invalid for x < 0 and -inf, none for the others."""
    ufunc = getattr(numfuse, name)
    info = np.finfo(dtype)
    rare_values = [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        -1.5,
        float(info.smallest_subnormal),
        float(info.tiny) / 3,
        float(info.tiny),
        float(np.nextafter(info.tiny, dtype(0))),
        float(np.nextafter(info.tiny, dtype(1))),
        float(info.max),
        1.0,
    ]
    rng = np.random.default_rng(3030)
    base = rng.uniform(0.1, 100.0, 80).astype(dtype)
    for value in rare_values:
        for position in list(range(16)) + [47, 63]:
            x = base.copy()
            x[position] = dtype(value)
            with np.errstate(all="ignore"):
                expected = ufunc(np.repeat(x, 2)[::2])
                got, inplace, strided = results_in_three_layouts(ufunc, x)
                evaluated = numfuse.evaluate(f"{name}(x)", local_dict={"x": x})
                reference = getattr(np, name)(x.astype(np.float64)).astype(dtype)
            bits = np.uint64 if dtype == np.float64 else np.uint32
            for result in (got, inplace, strided, evaluated):
                np.testing.assert_array_equal(result.view(bits), expected.view(bits))
            np.testing.assert_array_equal(np.isnan(got), np.isnan(reference))
            assert ulp_distance(got[position + 1 :], reference[position + 1 :]).max() <= 1
            want = {"divide"} if value == 0 else {"invalid"} if value < 0 else set()
            assert fp_conditions(ufunc, x) == want, (value, position)
