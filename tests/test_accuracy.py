"""Accuracy of the ufuncs (the function table's ufunc rows: exp, log, erf): at most
1 ULP in float32 and float64 at every compiled level, against NumPy's validation data
and an mpmath reference; special values bit for bit as NumPy / SciPy give them."""

from __future__ import annotations

import pathlib
import zlib

import mpmath
import numpy as np
import pytest

import numfuse
from conftest import ulp_distance
from function_table import BINARY_UFUNCS, CORE, UFUNCS, Sweep, arguments
from function_table import FUNCTIONS as FUNCTIONS_TABLE

DATA = pathlib.Path(__file__).parent / "data" / "numpy-umath-validation"
# (numfuse ufunc, NumPy / SciPy reference, mpmath) per ufunc of the function table.
FUNCTIONS = {
    name: (getattr(numfuse, name), FUNCTIONS_TABLE[name].reference, FUNCTIONS_TABLE[name].exact)
    for name in UFUNCS
}
# NumPy ships validation data for some of them.
VALIDATED = [name for name in UFUNCS if (DATA / f"umath-validation-set-{name}.csv").exists()]


def load_validation(name: str, dtype) -> tuple[np.ndarray, np.ndarray]:
    type_name = {np.float32: "np.float32", np.float64: "np.float64"}[dtype]
    bits = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
    inputs, outputs = [], []
    for line in (DATA / f"umath-validation-set-{name}.csv").read_text().splitlines():
        if line.startswith(type_name + ","):
            _, x, y, _ = line.split(",")
            inputs.append(int(x, 16))
            outputs.append(int(y, 16))
    return np.array(inputs, bits).view(dtype), np.array(outputs, bits).view(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", VALIDATED)
def test_numpy_validation_data_within_1_ulp(name, dtype, level):
    x, expected = load_validation(name, dtype)
    assert x.size > 100
    with np.errstate(all="ignore"):
        got = FUNCTIONS[name][0](x)
    assert ulp_distance(got, expected).max() <= 1


def correctly_rounded(function, x: np.ndarray) -> np.ndarray:
    """mpmath at 200 bits, rounded once to float64, then to the input dtype."""
    with mpmath.workprec(200):
        values = []
        for value in x.astype(np.float64):
            if not np.isfinite(value) or (function is mpmath.log and value <= 0):
                values.append(np.nan)
                continue
            values.append(float(function(mpmath.mpf(float(value)))))
    with np.errstate(over="ignore"):  # beyond float32's range: inf, as the function gives
        return np.array(values, np.float64).astype(x.dtype)


def sweep_inputs(name: str, dtype) -> np.ndarray:
    """Hand-made sweeps for exp, log and erf; the function table's domain for the others."""
    seeds = {"exp": 1, "log": 2, "erf": 3}
    if name not in seeds:
        rng = np.random.default_rng(zlib.crc32(f"ufunc{name}{np.dtype(dtype).char}".encode()))
        return arguments(name, Sweep(rng, dtype, 2000), dtype)[0]
    rng = np.random.default_rng(seeds[name])
    info = np.finfo(dtype)
    if name == "exp":
        top = np.log(info.max)
        bottom = np.log(info.smallest_subnormal)
        parts = [
            rng.uniform(bottom, top, 1500),
            rng.uniform(-1, 1, 500),
            rng.uniform(bottom, np.log(info.tiny), 300),
            top - rng.uniform(0, 1, 100),
        ]
    elif name == "log":
        int_type = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
        max_bits = np.array(info.max, dtype).view(int_type)
        random_bits = rng.integers(1, int(max_bits), 1500, dtype=int_type).view(dtype)
        parts = [
            random_bits,
            1 + rng.uniform(-0.3, 0.3, 500),
            1 + rng.uniform(-1e-4, 1e-4, 300),
            rng.uniform(0, 1, 200) * info.tiny,
        ]
    else:  # erf
        parts = [
            rng.uniform(-6.5, 6.5, 1500),
            rng.uniform(-1, 1, 500),
            np.exp(rng.uniform(np.log(info.smallest_subnormal), 0, 300)),
            rng.uniform(0.5, 3.5, 500),
        ]
    return np.concatenate(parts).astype(dtype)


_reference_cache: dict = {}


def reference(name: str, dtype):
    key = (name, dtype)
    if key not in _reference_cache:
        x = sweep_inputs(name, dtype)
        _reference_cache[key] = (x, correctly_rounded(FUNCTIONS[name][2], x))
    return _reference_cache[key]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UFUNCS)
def test_mpmath_sweep_within_1_ulp(name, dtype, level):
    x, expected = reference(name, dtype)
    with np.errstate(all="ignore"):
        got = FUNCTIONS[name][0](x)
    distance = ulp_distance(got, expected)
    worst = int(np.argmax(distance))
    assert distance.max() <= 1, f"{name}({x[worst]!r}) = {got[worst]!r}, exact {expected[worst]!r}"


_half_pi_cache: dict = {}


def near_half_pi_multiples() -> tuple[np.ndarray, dict]:
    """float32 inputs next to k pi/2 (the deepest cancellation in the reduction) for k up
    to 2^17 2/pi, and around 2^17, where float32 sin/cos switch from float32 lanes to
    float64; with their correctly rounded sin and cos."""
    if not _half_pi_cache:
        k = np.unique(np.concatenate([np.arange(1, 1500), np.geomspace(1500, 83500, 1500)]))
        centre = (k.astype(np.int64) * (np.pi / 2)).astype(np.float32)
        edge = np.float32(2.0**17)
        parts = [centre, np.nextafter(centre, np.float32(np.inf)), np.nextafter(centre, 0)]
        parts.append(edge + np.arange(-8, 8, dtype=np.float32) * np.spacing(edge))
        x = np.concatenate(parts).astype(np.float32)
        x = np.concatenate([x, -x])
        _half_pi_cache["x"] = x
        for name in ("sin", "cos", "tan"):
            _half_pi_cache[name] = correctly_rounded(getattr(mpmath, name), x)
    return _half_pi_cache["x"], _half_pi_cache


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_float32_trig_near_multiples_of_half_pi(name, level):
    x, exact = near_half_pi_multiples()
    got = FUNCTIONS[name][0](x)
    distance = ulp_distance(got, exact[name])
    worst = int(np.argmax(distance))
    assert distance.max() <= 1, (
        f"{name}({x[worst]!r}) = {got[worst]!r}, exact {exact[name][worst]!r}"
    )


def test_float32_tan_of_tiny_arguments_is_x_and_tan_is_odd(level):
    """tan returns x itself for |x| < 2^-12 (+-0, subnormals, tiny normals; the AVX-512
    kernel computes them on its ordinary path, the others replace them), in batches of tiny
    lanes only and in batches mixed with ordinary lanes; and tan is odd bit for bit."""
    tan = FUNCTIONS["tan"][0]
    rng = np.random.default_rng(5)
    tiny = np.concatenate(
        [
            np.array([0.0, 2.0**-149, 2.0**-126, 2.0**-13, np.nextafter(2.0**-12, 0)]),
            2.0 ** rng.uniform(-149, -12, 4000),
        ]
    ).astype(np.float32)
    tiny = np.concatenate([tiny, -tiny])
    mixed = np.concatenate([tiny, rng.uniform(-100, 100, tiny.size).astype(np.float32)])
    mixed = mixed[rng.permutation(mixed.size)]
    with np.errstate(all="ignore"):
        assert np.array_equal(tan(tiny).view(np.uint32), tiny.view(np.uint32))
        got = tan(mixed)
        small = np.abs(mixed) < 2.0**-12
        assert np.array_equal(got[small].view(np.uint32), mixed[small].view(np.uint32))
        assert np.array_equal(tan(-mixed).view(np.uint32), (-got).view(np.uint32))


_huge_cache: dict = {}


def huge_near_half_pi_multiples() -> tuple[np.ndarray, dict]:
    """float32 inputs from 2^17 to the largest finite with the deepest cancellation against
    a multiple of pi/2 in each binade (x = m 2^(e-23): the m in [2^23, 2^24) that are
    denominators of the convergents of 2^(e-23) 2/pi's continued fraction, or multiples of
    them), where the large-argument reduction must keep its bits; with their correctly
    rounded sin, cos and tan."""
    if not _huge_cache:
        values = []
        with mpmath.workprec(600):
            for e in range(17, 128):
                beta = mpmath.ldexp(2 / mpmath.pi, e - 23)
                h1, h2, k1, k2 = 1, 0, 0, 1
                b = beta
                for _ in range(60):
                    a = int(mpmath.floor(b))
                    h1, h2 = a * h1 + h2, h1
                    k1, k2 = a * k1 + k2, k1
                    if k1 >= 2**24:
                        break
                    for m in {k1, k1 * -(-(2**23) // k1)}:
                        if 2**23 <= m < 2**24:
                            values.append(float(mpmath.ldexp(m, e - 23)))
                    b = 1 / (b - a)
        x = np.unique(np.array(values, np.float64).astype(np.float32))
        x = np.concatenate([x, -x])
        _huge_cache["x"] = x
        for name in ("sin", "cos", "tan"):
            _huge_cache[name] = correctly_rounded(getattr(mpmath, name), x)
    return _huge_cache["x"], _huge_cache


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_float32_trig_huge_arguments_near_multiples_of_half_pi(name, level):
    x, exact = huge_near_half_pi_multiples()
    assert x.size > 400
    got = FUNCTIONS[name][0](x)
    distance = ulp_distance(got, exact[name])
    worst = int(np.argmax(distance))
    assert distance.max() <= 1, (
        f"{name}({x[worst]!r}) = {got[worst]!r}, exact {exact[name][worst]!r}"
    )


def _float32_run(start: float, count: int) -> np.ndarray:
    """count consecutive float32 values from start upwards."""
    first = np.array([start], np.float32).view(np.int32)[0]
    return (first + np.arange(count, dtype=np.int32)).view(np.float32)


def _inverse_trig_edges(name: str) -> np.ndarray:
    """float32 inputs where the float32-lane kernels (kernels/invtrig_f32.hpp) are closest to
    their bound or switch paths: every float32 in [1, 1.07) for arctan (|atan(1/a) - 1/a|
    is largest next to a = 1, where the bound is 0.97 ULP), in [1/2, 0.53) and the 65536
    below 1 for arcsin / arccos (the switch to the sqrt((1 - a)/2) form and its end), and
    both sides of 2^-12 (tiny inputs return x), 2^26..2^31 (arctan's clamp), subnormals."""
    if name == "arctan":
        parts = [_float32_run(1.0, 600_000), np.geomspace(2.0**24, 2.0**40, 4000)]
    else:
        parts = [_float32_run(0.5, 520_000), _float32_run(1.0 - 2.0**-8, 65536)]
    parts += [
        _float32_run(2.0**-12 * (1 - 2.0**-10), 20000),
        np.geomspace(2.0**-149, 2.0**-100, 500),
        np.linspace(0.0, 1.0, 20000),
    ]
    x = np.concatenate([np.asarray(p, np.float32) for p in parts])
    return np.concatenate([x, -x])


@pytest.mark.parametrize("name", ["arctan", "arcsin", "arccos"])
def test_float32_inverse_trig_near_the_kernels_edges(name, level):
    """Within 1 ULP of the float64 function rounded once (faithful rounding against it
    implies it against the exact value up to float64's 2^-53), and subnormal inputs kept
    (arctan, arcsin), at every level."""
    x = _inverse_trig_edges(name)
    reference = getattr(np, name)(x.astype(np.float64)).astype(np.float32)
    got = getattr(numfuse, name)(x)
    distance = ulp_distance(got, reference)
    worst = int(np.argmax(distance))
    assert distance.max() <= 1, f"{name}({x[worst]!r}) = {got[worst]!r}, want {reference[worst]!r}"
    if name != "arccos":
        small = np.abs(x) < np.float32(2.0**-12)
        np.testing.assert_array_equal(got[small].view(np.uint32), x[small].view(np.uint32))
    else:
        assert got[x == 1].view(np.uint32).tolist() == [0]


def test_float32_log2_of_powers_of_two_is_exact(level):
    """log2(2^k) = k for every float32 power of two, subnormal ones included."""
    k = np.arange(-149, 128)
    x = np.ldexp(np.float32(1), k).astype(np.float32)
    np.testing.assert_array_equal(numfuse.log2(x), k.astype(np.float32))


_next_to_one_cache: dict = {}


def test_float32_arccosh_next_to_one(level):
    """The 2048 float32 values just above 1, where float32 arccosh's own kernel (plain float64,
    its rounding of x + sqrt(x^2 - 1) against a result near 2^-11) has its largest error."""
    if not _next_to_one_cache:
        k = np.arange(1, 2049, dtype=np.float32)
        x = (np.float32(1) + k * np.float32(2.0**-23)).astype(np.float32)
        _next_to_one_cache["x"] = x
        _next_to_one_cache["exact"] = correctly_rounded(mpmath.acosh, x)
    x, exact = _next_to_one_cache["x"], _next_to_one_cache["exact"]
    got = numfuse.arccosh(x)
    distance = ulp_distance(got, exact)
    worst = int(np.argmax(distance))
    assert distance.max() <= 1, f"arccosh({x[worst]!r}) = {got[worst]!r}, exact {exact[worst]!r}"


_expit_cache: dict = {}


def expit_edges(dtype) -> tuple[np.ndarray, np.ndarray]:
    """Inputs where expit's float32 kernel (plain float64) or float64 kernel (pairs) is most
    likely to go wrong, with their correctly rounded values: float32 -- a dense grid of
    [-105, 20] and the inputs next to where the result becomes subnormal (x ~ -87.34), the
    smallest subnormal (-103.28), 0 (-103.97) and 1 (17.33); float64 -- around 0 and
    +-1e-300, the x < -40 and x < -708 (subnormal) regions, the exp limit and large x."""
    key = np.dtype(dtype).char
    if key not in _expit_cache:
        rng = np.random.default_rng(16)
        if dtype == np.float32:
            edges = np.array([-87.336544, -87.33655, -103.27893, -103.97208, 17.328680, 16.635532])
            edge_x = edges.astype(np.float32)
            steps = np.arange(-200, 201, dtype=np.float32)
            near = [e + steps * np.spacing(e) for e in edge_x]
            parts = [np.linspace(-105, 20, 12001), rng.uniform(-10, 10, 4000)] + near
            parts.append(np.float32(2.0) ** -np.arange(1, 150, dtype=np.float32))
        else:
            tiny = np.array([1e-300, 5e-324, 2.2250738585072014e-308, 1e-20, 2.0**-54])
            parts = [
                np.concatenate([tiny, -tiny]),
                rng.uniform(-1e-3, 1e-3, 500),
                rng.uniform(-45, -35, 800),
                rng.uniform(-746, -700, 1200),
                np.linspace(-709.0, -707.0, 401),
                rng.uniform(30, 800, 400),
                rng.uniform(-40, 40, 1500),
            ]
        x = np.concatenate([np.asarray(part, np.float64) for part in parts]).astype(dtype)
        _expit_cache[key] = (x, correctly_rounded(lambda v: 1 / (1 + mpmath.exp(-v)), x))
    return _expit_cache[key]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_expit_edges_within_1_ulp(dtype, level):
    x, exact = expit_edges(dtype)
    got = numfuse.expit(x)
    distance = ulp_distance(got, exact)
    worst = int(np.argmax(distance))
    assert distance.max() <= 1, f"expit({x[worst]!r}) = {got[worst]!r}, exact {exact[worst]!r}"
    # float32: rounded once from a value within 2^-39.6 of the exact one, so all but a
    # handful are the correctly rounded value (the reference rounds twice: it may miss by 1)
    if dtype == np.float32:
        assert int((distance > 0).sum()) <= 2
    else:
        # float64 carries e^-x to ~2^-57 and corrects 1 / (1 + e^-x) with an exact residual:
        # a few percent of the results miss the correctly rounded value, not one in five
        # (as when the residual is rounded)
        assert (distance > 0).mean() < 0.05
    # the subnormal and zero results of both kernels are the correctly rounded ones
    small = exact < np.finfo(dtype).tiny
    assert small.sum() > 50
    assert ulp_distance(got[small], exact[small]).max() <= (0 if dtype == np.float32 else 1)


_tanh_cache: dict = {}


def tanh_edges() -> tuple[np.ndarray, np.ndarray]:
    """float64 inputs where tanh is hardest, with their correctly rounded values: next to the
    reduction's boundaries 2a = (kd + 1/2) ln2/16 (kd = 16k + j: the table entry and r's sign
    change there; AVX-512's reduction) and 2a = (kd + 1/2) ln2/8 (kd = 8k + j: AVX2's), the
    region 2a < ln2 (k = 0) where e^2a - 1 cancels, the end where tanh approaches 1 (2^-k far
    below 1, k up to 56), and around 2^-27, below which tanh is x."""
    if not _tanh_cache:
        rng = np.random.default_rng(27)
        bounds = np.concatenate(
            [
                (np.arange(0, 900) + 0.5) * (np.log(2) / 32),
                (np.arange(0, 450) + 0.5) * (np.log(2) / 16),
            ]
        )
        parts = [
            bounds,
            np.nextafter(bounds, 0),
            np.nextafter(bounds, 1),
            rng.uniform(0, np.log(2) / 2, 3000),
            np.exp2(rng.uniform(-27.5, -3, 1000)),
            rng.uniform(17, 19.6, 1000),
            np.array([2.0**-27, np.nextafter(2.0**-27, 0), 2.0**-30, 19.0625, 19.5, 20.0]),
        ]
        x = np.concatenate(parts)
        x = np.concatenate([x, -x])
        _tanh_cache["x"] = (x, correctly_rounded(mpmath.tanh, x))
    return _tanh_cache["x"]


def test_tanh_edges_within_1_ulp(level):
    x, exact = tanh_edges()
    got = numfuse.tanh(x)
    distance = ulp_distance(got, exact)
    worst = int(np.argmax(distance))
    assert distance.max() <= 1, f"tanh({x[worst]!r}) = {got[worst]!r}, exact {exact[worst]!r}"
    # the kernels carry e^2a - 1 (or the small-argument series) as a pair and correct the
    # quotient: about one result in a thousand misses the correctly rounded value
    assert (distance > 0).mean() < 0.01
    # odd, bit for bit
    assert np.array_equal(numfuse.tanh(-x).view(np.uint64), (-got).view(np.uint64))


def special_inputs(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    bits = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
    negative_nan = np.array(np.nan, dtype).view(bits) | np.array(-0.0, dtype).view(bits)
    # Only inputs whose results are exact or saturate: at ordinary points such
    # as exp(1) NumPy/SciPy are themselves up to 1 ULP off (numfuse matches the
    # correctly rounded value there; the mpmath sweep checks those).
    values = [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        info.smallest_subnormal,
        -info.smallest_subnormal,
        info.tiny,
        -info.tiny,
        info.tiny - info.smallest_subnormal,
        info.max,
        -info.max,
        1e-30,
        -1e-30,
    ]
    result = np.array(values, dtype)
    return np.concatenate([result, np.array([negative_nan], bits).view(dtype)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UFUNCS)
def test_special_values_bit_identical(name, dtype, level):
    ours, peer, _ = FUNCTIONS[name]
    x = special_inputs(dtype)
    with np.errstate(all="ignore"):
        got, expected = ours(x), peer(x)
    bits = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
    # Where the reference is not correctly rounded at a finite input (np.arcsinh(max) is
    # 1 ULP off), the correctly rounded value is the one to give.
    off = (got.view(bits) != expected.view(bits)) & np.isfinite(x) & np.isfinite(expected)
    if off.any():
        expected = expected.copy()
        expected[off] = correctly_rounded(FUNCTIONS[name][2], x[off])
    mismatched = got.view(bits) != expected.view(bits)
    assert not mismatched.any(), list(zip(x[mismatched], got[mismatched], expected[mismatched]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", [name for name in UFUNCS if not hasattr(np, name)])
def test_scipy_nan_bits(name, dtype, level):
    """scipy.special's NaN for quiet and signalling NaNs of both signs with payloads: erf and
    erfc give +qNaN, expit the input quieted with its sign flipped (1 / (1 + exp(-x)))."""
    ours, peer, _ = FUNCTIONS[name]
    bits = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
    if dtype == np.float64:
        patterns = [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000000000123,
                    0xFFF4000000000123, 0x7FF0000000000001]  # fmt: skip
    else:
        patterns = [0x7FC00000, 0xFFC00000, 0x7FC00123, 0xFFA00123, 0x7F800001]
    x = np.array(patterns * 5, bits).view(dtype)  # long enough for the vector loops
    with np.errstate(all="ignore"):
        got, expected = ours(x), peer(x)
    np.testing.assert_array_equal(got.view(bits), expected.view(bits))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UFUNCS)
def test_rare_lanes_do_not_change_their_neighbours(name, dtype, level):
    """The loops run a fast kernel and recompute (or repair) only the batches that hold a
    rare lane (NaN, inf, zero, negative, subnormal, |x| beyond the exp limit): every element
    must come out the same, bit for bit, whether its batch held such a lane or not, so the
    whole-array result equals the element-by-element one."""
    ours = FUNCTIONS[name][0]
    rng = np.random.default_rng(11)
    rare = special_inputs(dtype)
    bits = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
    for n in (7, 16, 33, 70, 129):
        x = rng.uniform(0.05, 5.0, n).astype(dtype)
        x[rng.integers(0, n, 1 + n // 16)] = rng.choice(rare, 1 + n // 16)
        with np.errstate(all="ignore"):
            whole = ours(x)
            one_by_one = np.concatenate([ours(x[i : i + 1]) for i in range(n)])
            in_place = x.copy()
            ours(in_place, out=in_place)
        assert np.array_equal(whole.view(bits), one_by_one.view(bits)), x[
            whole.view(bits) != one_by_one.view(bits)
        ]
        assert np.array_equal(whole.view(bits), in_place.view(bits))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp_overflow_and_underflow_edges(dtype, level):
    info = np.finfo(dtype)
    edges = [np.log(info.max), np.log(info.tiny), np.log(info.smallest_subnormal)]
    x = np.concatenate(
        [
            np.array(edge, dtype) + np.arange(-40, 41) * np.spacing(np.array(edge, dtype))
            for edge in edges
        ]
    ).astype(dtype)
    with np.errstate(all="ignore"):
        got = numfuse.exp(x)
        expected = correctly_rounded(mpmath.exp, x)
    # Beyond the double range mpmath's float() saturates correctly to inf / 0.
    assert np.array_equal(np.isinf(got), np.isinf(expected))
    assert ulp_distance(got, expected).max() <= 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_is_odd_bitwise(dtype, level):
    x = np.linspace(0, 7, 10001).astype(dtype)
    np.testing.assert_array_equal(numfuse.erf(-x), -numfuse.erf(x))


# The ufuncs with a float16 loop (computed through float32).
HALF_LOOPS = [name for name in UFUNCS if "e" in CORE[name].loops]


def test_float16_through_float32():
    x = np.arange(-2048, 2048, dtype=np.int16).view(np.float16)  # many bit patterns
    x = np.concatenate([x, np.linspace(-12, 12, 500).astype(np.float16)])
    with np.errstate(all="ignore"):
        for name in HALF_LOOPS:
            ours, peer, _ = FUNCTIONS[name]
            got, expected = ours(x), peer(x)
            assert got.dtype == np.float16
            assert ulp_distance(got, expected).max() <= 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", BINARY_UFUNCS)
def test_binary_mpmath_sweep_within_1_ulp(name, dtype, level):
    if name == "float_power" and dtype == np.float32:
        pytest.skip("float_power computes float32 operands in float64: the float64 case")
    rng = np.random.default_rng(zlib.crc32(f"ufunc{name}{np.dtype(dtype).char}".encode()))
    a, b = arguments(name, Sweep(rng, dtype, 2000), dtype)
    exact = FUNCTIONS_TABLE[name].exact
    with mpmath.workprec(200):
        expected = np.array(
            [float(exact(mpmath.mpf(float(x)), mpmath.mpf(float(y)))) for x, y in zip(a, b)]
        )
    with np.errstate(over="ignore"):
        expected = expected.astype(dtype)
    with np.errstate(all="ignore"):
        got = getattr(numfuse, name)(a, b)
    distance = ulp_distance(got, expected)
    worst = int(np.argmax(distance))
    assert distance.max() <= 1, f"{name}({a[worst]!r}, {b[worst]!r}) = {got[worst]!r}"
