"""The optional CUDA path (numfuse.cuda, numfuse._cuda).

Three layers, so something meaningful runs everywhere:
* always: numfuse imports and works when the extension is missing or broken
  (simulated in a subprocess), and numfuse.devices() lists the CPU;
* when numfuse._cuda is built (nvcc present, no GPU needed): the device kernels'
  scalar math, run on the CPU from the very same source, against mpmath (<= 1 ULP)
  and NumPy/SciPy special values bit for bit; the evaluate translator's errors;
  argument checking; the no-device errors;
* on a GPU (marker ``gpu``, skipped without one): results against the host math
  bit for bit, reductions against SciPy, determinism, torch/CuPy interop.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numfuse
from function_table import FUNCTIONS, GPU_UFUNCS
from numfuse.cuda import _arrays, _loader, _testing

HAVE_EXTENSION = _loader._cuda is not None
HAVE_GPU = HAVE_EXTENSION and numfuse.cuda.available()

needs_extension = pytest.mark.skipif(not HAVE_EXTENSION, reason="numfuse._cuda not built")

PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(numfuse.__file__)))


# ---------------------------------------------------------------- always


def run_python(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_devices_lists_the_cpu_first():
    listed = numfuse.devices()
    assert listed[0]["kind"] == "cpu"
    assert listed[0]["level"] == numfuse.get_level()
    assert all(d["kind"] == "cuda" for d in listed[1:])
    if not HAVE_GPU:
        assert len(listed) == 1


@pytest.mark.parametrize(
    "block",
    [
        # the extension absent (a CPU-only build)
        "sys.modules['numfuse._cuda'] = None",
        # the extension present but failing to load (e.g. a broken CUDA runtime)
        textwrap.dedent(
            """
            import importlib.abc
            class Broken(importlib.abc.MetaPathFinder):
                def find_spec(self, name, path=None, target=None):
                    if name == 'numfuse._cuda':
                        raise OSError('libcudart: simulated load failure')
            sys.meta_path.insert(0, Broken())
            """
        ),
    ],
    ids=["missing", "broken"],
)
def test_package_works_without_the_cuda_extension(block):
    code = (
        "import sys\n"
        + block
        + "\n"
        + textwrap.dedent(
            """
            import numpy as np
            import numfuse
            x = np.linspace(-2.0, 2.0, 101)
            assert np.array_equal(numfuse.exp(x), numfuse.exp(x))
            np.testing.assert_allclose(numfuse.exp(x), np.exp(x), rtol=1e-15)
            assert [d['kind'] for d in numfuse.devices()] == ['cpu']
            assert not numfuse.cuda.available()
            assert 'not available' in numfuse.cuda.status(), numfuse.cuda.status()
            try:
                numfuse.cuda.exp(x, device='cuda')
            except RuntimeError as error:
                assert 'numfuse.cuda.exp' in str(error)
            else:
                raise AssertionError('no RuntimeError')
            print('ok')
            """
        )
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


# ---------------------------------------------------------------- host-side device math


def ulp_distance(y: np.ndarray, ref: list, dtype) -> np.ndarray:
    """|y - ref| in units of the reference's spacing at `dtype` (mpmath references)."""
    import mpmath

    info = np.finfo(dtype)
    out = np.empty(len(ref))
    for k, (got, r) in enumerate(zip(y.tolist(), ref)):
        rounded = dtype(float(r))
        if not np.isfinite(rounded):
            out[k] = 0.0 if got == rounded else np.inf
            continue
        exponent = max(
            int(mpmath.floor(mpmath.log(abs(r), 2))) if r != 0 else info.minexp, info.minexp
        )
        spacing = mpmath.ldexp(1, exponent - info.nmant)
        out[k] = float(abs(mpmath.mpf(got) - r) / spacing)
    return out


def sample(fn: str, dtype, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    big = 709.0 if dtype == np.float64 else 88.0
    if fn == "exp":
        x = np.concatenate([rng.uniform(-big - 36, big, n), rng.uniform(-1, 1, n // 4)])
    elif fn == "log":
        x = np.concatenate(
            [
                10.0
                ** rng.uniform(
                    -300 if dtype == np.float64 else -37, 300 if dtype == np.float64 else 37, n
                ),
                rng.uniform(0.9, 1.1, n // 4),
            ]
        )
    else:
        x = np.concatenate([rng.uniform(-6.5, 6.5, n), rng.uniform(-0.5, 0.5, n // 4)])
    return x.astype(dtype)


@needs_extension
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("fn", GPU_UFUNCS)
def test_device_math_on_host_within_one_ulp_of_mpmath(fn, dtype):
    import mpmath

    mpmath.mp.prec = 120
    x = sample(fn, dtype, 1500, 7 + len(fn))
    y = _testing.host_math(fn, x)
    assert y.dtype == dtype and y.shape == x.shape
    f = FUNCTIONS[fn].exact
    ref = [f(mpmath.mpf(float(v))) for v in x]
    err = ulp_distance(y, ref, dtype)
    assert err.max() <= 1.0, (fn, dtype, x[err.argmax()], err.max())


def special_inputs(dtype):
    info = np.finfo(dtype)
    values = [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        -np.nan,
        1.0,
        -1.0,
        info.tiny,
        -info.tiny,
        info.smallest_subnormal,
        -info.smallest_subnormal,
        info.max,
        -info.max,
        0.5,
        2.0,
        700.0,
        -700.0,
        88.7,
        -103.9,
        745.0,
        -745.2,
        1e-300,
        6.0,
        -6.0,
        4.0,
        27.0,
    ]
    return np.array(values, dtype=dtype)


@needs_extension
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("fn", GPU_UFUNCS)
def test_device_math_special_values_match_numpy_and_scipy(fn, dtype):
    pytest.importorskip("scipy.special")
    x = special_inputs(dtype)
    with np.errstate(all="ignore"):
        y = _testing.host_math(fn, x)
        ref = FUNCTIONS[fn].reference(x).astype(dtype)
    exact = ~np.isfinite(ref) | (ref == 0) | (np.abs(ref) == 1) | np.isnan(ref)
    # NaNs: NumPy's NaN bit patterns (sign, payload) for exp/log; SciPy's erf gives a +qNaN.
    np.testing.assert_array_equal(np.isnan(y), np.isnan(ref))
    if fn != "erf":
        bits = np.uint32 if dtype == np.float32 else np.uint64
        # An invalid operation (log of a negative number) gives the x86 default NaN (sign
        # set) on the device, as NumPy's AVX-512 loops do; NumPy's libm fallback (CPUs
        # without AVX-512F) returns +NaN there, which only the CPU ufuncs follow
        # (src/python/nan_policy.hpp).
        invalid = np.isnan(ref) & ~np.isnan(x)
        default_nan = np.array(0xFFC00000 if dtype == np.float32 else 0xFFF8000000000000, bits)
        ref = ref.copy()
        ref.view(bits)[invalid] = default_nan
        assert np.array_equal(y[exact].view(bits), ref[exact].view(bits)), (
            x[exact],
            y[exact],
            ref[exact],
        )
    else:
        finite = exact & ~np.isnan(ref)
        assert np.array_equal(y[finite], ref[finite]) and np.array_equal(
            np.signbit(y[finite]), np.signbit(ref[finite])
        )
    spacing = np.spacing(np.abs(ref[~exact]).astype(dtype))
    assert np.all(np.abs(y[~exact] - ref[~exact]) <= 2 * spacing)


@needs_extension
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("fn", GPU_UFUNCS)
def test_device_math_agrees_with_the_cpu_simd_kernels(fn, dtype):
    x = sample(fn, dtype, 20000, 3)
    gpu_source = _testing.host_math(fn, x)
    simd = getattr(numfuse, fn)(x)
    # Normal results only: subnormal float32 exp results are the CPU kernels' business
    # (tests/test_accuracy.py); here the question is whether the two sources agree.
    normal = np.abs(gpu_source) >= np.finfo(dtype).tiny
    gpu_source, simd = gpu_source[normal], simd[normal]
    # Both are within 1 ULP of the truth, so at most 2 ULP apart; mostly identical (the
    # AVX-512 exp/log use table methods, the device code the portable ones: ~89% for f32 exp).
    diff = np.abs(gpu_source.astype(np.float64) - simd) / np.spacing(np.abs(simd)).astype(
        np.float64
    )
    assert diff.max() <= 2.0
    assert np.mean(gpu_source == simd) > 0.75


@needs_extension
def test_host_math_rejects_other_dtypes():
    with pytest.raises(TypeError, match="float32 or float64"):
        _testing.host_math("exp", np.arange(3))
    with pytest.raises(ValueError, match="unknown function"):
        _testing.host_math("tan", np.ones(3))


# ---------------------------------------------------------------- evaluate translation (no GPU)


@needs_extension
def test_evaluate_translation_result_types_and_errors():
    lib = _loader._cuda
    assert (
        lib.evaluate_result_type(
            "exp(a) * 2 + erf(b) - log(a)", ["a", "b"], ["d", "f"], [False, False]
        )
        == "d"
    )
    assert lib.evaluate_result_type("a * 2.5 + 1", ["a"], ["f"], [False]) == "f"  # weak scalars
    assert (
        lib.evaluate_result_type("where(a > 0, a, -a) + c", ["a", "c"], ["f", "d"], [False, True])
        == "f"
    )
    assert lib.evaluate_result_type("a > 1", ["a"], ["l"], [False]) == "b"
    with pytest.raises(NotImplementedError, match="reductions"):
        lib.evaluate_result_type("sum(a)", ["a"], ["d"], [False])
    with pytest.raises(NotImplementedError, match="complex"):
        lib.evaluate_result_type("a * 1j", ["a"], ["d"], [False])
    with pytest.raises(SyntaxError):
        lib.evaluate_result_type("a +", ["a"], ["d"], [False])
    with pytest.raises(KeyError):
        lib.evaluate_result_type("a + b", ["a"], ["d"], [False])


# ---------------------------------------------------------------- the GPU code paths run on the CPU


def interpreter_inputs():
    rng = np.random.default_rng(1)
    i = np.arange(-500, 501)
    return {
        "a": rng.uniform(-3.0, 3.0, i.size),
        "p": rng.uniform(0.1, 3.0, i.size),
        "b": rng.uniform(-2.0, 2.0, i.size).astype(np.float32),
        "i": i,
        "j": (i % 13 - 6).astype(np.int32),
        "m": rng.uniform(size=i.size) > 0.5,
    }


# Programs whose every operation is exact or numfuse's own exp/log/erf, in both engines.
EXACT_PROGRAMS = [
    "a * 2.5 + 1",
    "b * 2.5 + 1",
    "i * 3 - 7",
    "j * j - i",
    "(i > 3) & (i < 9)",
    "~m | (a < 1)",
    "where(m, i, 0)",
    "where(b > 0, a, -a)",
    "maximum(a, b) - minimum(p, 1.5)",
    "abs(i) + -j",
    "i / 3",
    "i % 7",
    "i // j",
    "i % j",
    "a // 0.3",
    "a % -0.7",
    "b % 0.25",
    "fmod(a, 0.7)",
    "floor(a * 3) + round(b) + ceil(p) - trunc(a)",
    "sqrt(p) + a ** 2",
    "exp(a) * 2 + erf(b) - log(p) / (1 + a * a)",
    "copysign(p, a) + (a != a)",
]

# The magnitude of the terms of EXACT_PROGRAMS whose sums may cancel, in ULPs of the
# result's dtype: erf(b) is computed in float32 (b is float32), whose ULP is 2^29 float64
# ULPs (the float32 kernels need not be correctly rounded, so the two sources may differ there).
TERM_SCALES = {
    "exp(a) * 2 + erf(b) - log(p) / (1 + a * a)": (
        "abs(exp(a) * 2) + abs(erf(b)) * 2.0**29 + abs(log(p) / (1 + a * a))"
    ),
}

# libdevice on the GPU, the C++ library on the host: compare with numfuse.evaluate loosely.
LIBRARY_PROGRAMS = ["sin(a) + cos(p)", "tanh(b)", "expm1(a) - log1p(p)", "arctan2(a, p)", "p ** b"]


@needs_extension
@pytest.mark.parametrize("ex", EXACT_PROGRAMS)
def test_device_interpreter_on_host_equals_evaluate(ex):
    values = interpreter_inputs()
    with np.errstate(all="ignore"):
        got = _testing.evaluate_host(ex, values)
        ref = numfuse.evaluate(ex, local_dict=values)
    assert got.dtype == ref.dtype
    if got.dtype.kind == "f":
        # exp/log/erf: the device code vs the CPU's SIMD kernels, both <= 1 ULP: the two
        # differ by a few ULP of the terms, which a sum that cancels (TERM_SCALES) can make
        # many ULP of the result.
        scale = np.abs(ref)
        if ex in TERM_SCALES:
            scale = numfuse.evaluate(TERM_SCALES[ex], local_dict=values)
        spacing = np.spacing(scale.astype(ref.dtype))
        assert np.all(np.abs(got - ref) <= 2 * spacing * max(1, ex.count("(") - ex.count("where(")))
        assert np.array_equal(np.isnan(got), np.isnan(ref))
    else:
        assert np.array_equal(got, ref)


@needs_extension
@pytest.mark.parametrize("ex", LIBRARY_PROGRAMS)
def test_device_interpreter_on_host_library_functions(ex):
    values = interpreter_inputs()
    got = _testing.evaluate_host(ex, values)
    ref = numfuse.evaluate(ex, local_dict=values)
    assert got.dtype == ref.dtype
    # Sums of terms of size ~1 may cancel: an absolute bound of a few ulp of 1.
    eps = np.finfo(ref.dtype).eps
    np.testing.assert_allclose(got, ref, rtol=4 * eps, atol=4 * eps)


@needs_extension
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize(
    "shape, axis",
    [
        ((300, 7000), None),  # one line of 2.1e6: 129 chunks of 16384, a 256-lane finish
        ((300, 7000), 1),  # a block per row; softmax keeps the row in registers
        ((300, 7000), 0),  # column kernel (inner > 1), chunked
        ((7, 5, 40001), -1),  # a block per (row, chunk), 3 chunks, 32-lane finish
        ((70000, 3), 1),  # a warp per row
        ((2000, 1000), 1),  # a warp per row, 32 elements per lane in registers
        ((50, 15000), 1),  # one chunk per row, too long for registers: two passes
        ((3, 1100, 7), 1),  # columns with a short inner axis
        ((4, 0), 1),  # empty lines: -inf
    ],
)
def test_device_reductions_on_host_match_scipy(shape, axis, dtype):
    scipy_special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 20).astype(dtype)
    if x.size:
        x.flat[7] = -np.inf
    x64 = x.astype(np.float64)
    rtol = 4 * np.finfo(dtype).eps
    with np.errstate(divide="ignore"):
        ref = scipy_special.logsumexp(x64, axis=axis)
    got = _testing.reduce_host("logsumexp", x, axis)
    assert got.dtype == dtype and got.shape == np.shape(ref)
    # m + log(s) may cancel to ~0: absolute error ~ eps * |x| there.
    scale = np.max(np.abs(x64[np.isfinite(x64)])) if x.size else 1.0
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * scale)
    keep = _testing.reduce_host("logsumexp", x, axis, keepdims=True)
    assert keep.shape == np.shape(np.sum(x, axis=axis, keepdims=True))
    if x.size == 0:
        return
    tiny = np.finfo(dtype).tiny
    sm = _testing.reduce_host("softmax", x, axis)
    ref_sm = scipy_special.softmax(x64, axis=axis)
    normal = ref_sm > tiny * 2**30
    np.testing.assert_allclose(
        sm[normal], ref_sm[normal], rtol=2e-13 if dtype == np.float64 else 2e-7
    )
    lsm = _testing.reduce_host("log_softmax", x, axis)
    ref_lsm = scipy_special.log_softmax(x64, axis=axis)
    finite = np.isfinite(ref_lsm)
    # x - m - log(s) cancels for the largest elements: absolute error ~ eps * |x|.
    np.testing.assert_allclose(lsm[finite], ref_lsm[finite], rtol=rtol, atol=rtol * scale)
    assert np.array_equal(np.isneginf(lsm), np.isneginf(ref_lsm))


@needs_extension
def test_device_reductions_on_host_special_values():
    x = np.array(
        [[0.0, -np.inf], [np.inf, 1.0], [np.nan, 1.0], [-np.inf, -np.inf], [np.inf, np.nan]]
    )
    got = _testing.reduce_host("logsumexp", x, 1)
    np.testing.assert_array_equal(got, [0.0, np.inf, np.nan, -np.inf, np.nan])
    np.testing.assert_array_equal(
        _testing.reduce_host("softmax", np.array([[1.0, 1.0], [-np.inf, 0.0]]), 1),
        [[0.5, 0.5], [0.0, 1.0]],
    )


def special_rows(n: int, dtype) -> np.ndarray:
    """Rows of length n (>= 8) with -inf, +inf and NaN placed at and away from a batch
    boundary, all -inf, and one plain row: each reduction layout sees every rule."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, n)).astype(dtype)
    x[0, 0] = x[0, n - 1] = -np.inf  # -inf among finite values: no effect
    x[1, n // 2] = np.inf  # +inf: result +inf, softmax NaN / 0
    x[2, 5] = np.nan  # NaN: NaN
    x[3, :] = -np.inf  # all -inf: -inf, softmax NaN
    x[4, 1] = np.inf
    x[4, 2] = np.nan  # +inf and NaN: NaN
    x[5, :] = 7.0  # all equal: log(n) + 7, softmax exactly 1/n where 1/n is exact
    x[6, n - 1] = 1e30 if dtype == np.float64 else 1e30  # one dominant element
    return x


@needs_extension
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("n", [8, 1000, 5000, 15000, 40001], ids=lambda n: f"n{n}")
def test_device_reductions_on_host_special_values_every_layout(n, dtype):
    # n = 8 / 1000: a warp per row (registers); 5000: a block per row (registers);
    # 15000: a block per row, two passes; 40001: chunks. The transpose: columns.
    x = special_rows(n, dtype)
    with np.errstate(all="ignore"):
        ref = np.log(np.sum(np.exp(x.astype(np.float64) - 7.0), axis=1)) + 7.0
        ref[6] = 1e30
    for rows, axis in ((x, 1), (np.ascontiguousarray(x.T), 0)):
        got = _testing.reduce_host("logsumexp", rows, axis)
        np.testing.assert_array_equal(np.isnan(got), [0, 0, 1, 0, 1, 0, 0, 0])
        assert got[1] == np.inf and got[3] == -np.inf and got[6] == dtype(1e30)
        finite = [0, 5, 7]
        np.testing.assert_allclose(got[finite], ref[finite].astype(dtype), rtol=4e-7)
        sm = _testing.reduce_host("softmax", rows, axis)
        sm = sm if axis == 1 else sm.T
        assert np.all(np.isnan(sm[[1, 2, 3, 4]]) | (sm[[1, 2, 3, 4]] == 0))
        assert np.all(np.isnan(sm[[2, 3, 4]]))
        assert sm[1, n // 2] != sm[1, n // 2] and np.all(sm[1, : n // 2] == 0)
        assert sm[6, n - 1] == 1 and np.all(sm[6, : n - 1] == 0)
        assert sm[0, 0] == 0 and sm[0, n - 1] == 0
        if n in (8, 1000):
            assert np.all(sm[5] == dtype(1.0 / n))
        lsm = _testing.reduce_host("log_softmax", rows, axis)
        lsm = lsm if axis == 1 else lsm.T
        assert lsm[0, 0] == -np.inf and np.all(np.isnan(lsm[3]))


@needs_extension
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("n", [8, 1000, 5000, 15000, 40001], ids=lambda n: f"n{n}")
def test_device_reductions_on_host_dominant_maximum(n, dtype):
    """A maximum at 0 far above the rest: logsumexp is log1p(t) and log_softmax at the
    maximum -log1p(t), t the other terms' sum (~1e-9 here); both keep their relative
    accuracy only if each term's x - m is a double word and the sums are compensated (the
    plain (m, s) state lost all of t below 2^-53 and |x - m|/2 eps of each term). Every
    layout: rows (warp, block, registers, two passes, chunks) and, transposed, columns."""
    rng = np.random.default_rng(11)
    x = rng.uniform(-60.0, -30.0, (4, n)).astype(dtype)
    where = [0, n // 2, n - 1, min(7, n - 1)]
    x[np.arange(4), where] = 0.0
    # The reference in long double: x - 0 is exact, exp and the pairwise sum ~2^-64.
    others = np.exp(x.astype(np.longdouble))
    others[np.arange(4), where] = 0
    t = np.sum(others, axis=1)
    want_lse = np.log1p(t)
    eps = np.finfo(dtype).eps
    for rows, axis in ((x, 1), (np.ascontiguousarray(x.T), 0)):
        got = _testing.reduce_host("logsumexp", rows, axis).astype(np.longdouble)
        assert np.all(np.abs(got - want_lse) <= 4 * eps * want_lse), (got, want_lse)
        lsm = _testing.reduce_host("log_softmax", rows, axis)
        lsm = (lsm if axis == 1 else lsm.T)[np.arange(4), where].astype(np.longdouble)
        assert np.all(np.abs(lsm + want_lse) <= 4 * eps * want_lse), (lsm, -want_lse)
        if HAVE_GPU:  # the device runs the emulated operations: the same bits
            d = numfuse.cuda.to_device(rows)
            for fn in ("logsumexp", "softmax", "log_softmax"):
                on_gpu = getattr(numfuse.cuda, fn)(d, axis=axis)
                if isinstance(on_gpu, numfuse.cuda.DeviceArray):
                    on_gpu = on_gpu.get()
                assert np.array_equal(on_gpu, _testing.reduce_host(fn, rows, axis)), fn


# ---------------------------------------------------------------- argument checking (no GPU)


class FakeDeviceArray:
    """Carries a __cuda_array_interface__ without real device memory (checks only)."""

    def __init__(self, shape, typestr="<f8", strides=None, mask=None):
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "data": (0, False),
            "version": 3,
            "strides": strides,
            "mask": mask,
            "stream": None,
        }


@needs_extension
def test_argument_errors_are_clear():
    x = np.linspace(0.5, 2.0, 8)
    with pytest.raises(TypeError, match="host .NumPy. array; pass device='cuda'"):
        numfuse.cuda.exp(x)
    with pytest.raises(TypeError, match="expected a GPU array"):
        numfuse.cuda.log("not an array")
    with pytest.raises(ValueError, match="not C-contiguous"):
        numfuse.cuda.erf(FakeDeviceArray((4, 4), strides=(8, 32)))
    with pytest.raises(ValueError, match="masked"):
        numfuse.cuda.erf(FakeDeviceArray((4,), mask=object()))
    with pytest.raises(TypeError, match="must be a str"):
        numfuse.cuda.evaluate(3)


@needs_extension
@pytest.mark.skipif(HAVE_GPU, reason="a CUDA device is present")
def test_without_a_device_calls_raise_runtime_error():
    assert not numfuse.cuda.available()
    with pytest.raises(RuntimeError, match="no usable CUDA device"):
        numfuse.cuda.exp(np.ones(4), device="cuda")
    with pytest.raises(RuntimeError, match="no usable CUDA device"):
        numfuse.cuda.logsumexp(FakeDeviceArray((4,)))
    with pytest.raises(RuntimeError, match="no usable CUDA device"):
        numfuse.cuda.to_device(np.ones(3))


# ---------------------------------------------------------------- on a GPU


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("fn", GPU_UFUNCS)
@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device")
def test_gpu_ufuncs_equal_host_math_bit_for_bit(fn, dtype):
    x = np.concatenate([sample(fn, dtype, 100000, 11), special_inputs(dtype)])
    with np.errstate(all="ignore"):
        host = _testing.host_math(fn, x)
    device_x = numfuse.cuda.to_device(x)
    y = getattr(numfuse.cuda, fn)(device_x)
    assert isinstance(y, numfuse.cuda.DeviceArray)
    bits = np.uint32 if dtype == np.float32 else np.uint64
    got = y.get()
    same = got.view(bits) == host.view(bits)
    # NaN payloads may differ between GPU and CPU only where the math does not define them.
    assert np.all(same | (np.isnan(got) & np.isnan(host)))
    assert np.array_equal(np.isnan(got), np.isnan(host))
    # NumPy in, device='cuda': same numbers back in a NumPy array.
    round_trip = getattr(numfuse.cuda, fn)(x, device="cuda")
    assert isinstance(round_trip, np.ndarray)
    assert np.array_equal(round_trip, got, equal_nan=True)
    # In place (out= the input).
    getattr(numfuse.cuda, fn)(device_x, out=device_x)
    assert np.array_equal(device_x.get(), got, equal_nan=True)


# Every reduction layout of lse_core.hpp's plan: a warp per row (with and without the
# row in registers), a block per row (registers, two passes), chunked rows, one long
# line (axis=None, 256-lane finish), columns (chunked, short inner axis, one chunk).
GPU_REDUCTION_CASES = [
    ((300, 7000), None),
    ((300, 7000), 0),
    ((300, 7000), 1),
    ((300, 7000), -1),
    ((20000, 100), 1),
    ((3000, 1000), 1),
    ((500, 1500), 1),
    ((50, 15000), 1),
    ((7, 5, 40001), -1),
    ((3, 1100, 7), 1),
    ((40, 3000), 0),
    ((1000, 10), 0),
    ((1,), 0),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("shape, axis", GPU_REDUCTION_CASES, ids=str)
@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device")
def test_gpu_logsumexp_softmax_match_scipy_and_are_deterministic(shape, axis, dtype):
    scipy_special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 20).astype(dtype)
    x.flat[min(17, x.size - 1)] = -np.inf
    d = numfuse.cuda.to_device(x)
    got = numfuse.cuda.logsumexp(d, axis=axis)
    got = got.get() if isinstance(got, numfuse.cuda.DeviceArray) else got
    x64 = x.astype(np.float64)
    with np.errstate(divide="ignore"):
        ref = scipy_special.logsumexp(x64, axis=axis)
    scale = np.max(np.abs(x64[np.isfinite(x64)])) if np.isfinite(x64).any() else 1.0
    rtol = 4 * np.finfo(dtype).eps  # the bound the host tests hold the emulation to
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * scale)
    # The GPU and its CPU emulation (checked against SciPy closely above) run the same
    # operations in the same order: equal bit for bit.
    assert np.array_equal(got, _testing.reduce_host("logsumexp", x, axis), equal_nan=True)
    again = numfuse.cuda.logsumexp(d, axis=axis)
    again = again.get() if isinstance(again, numfuse.cuda.DeviceArray) else again
    assert np.array_equal(got, again)  # bit for bit: fixed reduction trees, no atomics
    for fn in ("softmax", "log_softmax"):
        on_gpu = getattr(numfuse.cuda, fn)(d, axis=axis).get()
        assert np.array_equal(on_gpu, _testing.reduce_host(fn, x, axis), equal_nan=True), fn
        assert np.array_equal(
            on_gpu, getattr(numfuse.cuda, fn)(d, axis=axis).get(), equal_nan=True
        ), fn
    with np.errstate(invalid="ignore"):  # all -inf lines: NaN
        ref_sm = scipy_special.softmax(x64, axis=axis)
    sm = numfuse.cuda.softmax(d, axis=axis).get()
    normal = ref_sm > np.finfo(dtype).tiny * 2**30
    np.testing.assert_allclose(
        sm[normal], ref_sm[normal], rtol=2e-13 if dtype == np.float64 else 2e-7
    )
    # In place: out= the input.
    numfuse.cuda.softmax(d, axis=axis, out=d)
    assert np.array_equal(d.get(), sm, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("n", [8, 1000, 5000, 15000, 40001], ids=lambda n: f"n{n}")
@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device")
def test_gpu_reduction_special_values_every_layout_equal_the_emulation(n, dtype):
    x = special_rows(n, dtype)
    for rows, axis in ((x, 1), (np.ascontiguousarray(x.T), 0)):
        d = numfuse.cuda.to_device(rows)
        for fn in ("logsumexp", "softmax", "log_softmax"):
            got = getattr(numfuse.cuda, fn)(d, axis=axis).get()
            assert np.array_equal(got, _testing.reduce_host(fn, rows, axis), equal_nan=True), fn


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device")
def test_gpu_reductions_refuse_non_contiguous_inputs():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    x = torch.randn(64, 48, device="cuda", dtype=torch.float64)
    for fn in ("logsumexp", "softmax", "log_softmax"):
        with pytest.raises(ValueError, match="C-contiguous"):
            getattr(numfuse.cuda, fn)(x.t(), axis=1)
        with pytest.raises(ValueError, match="C-contiguous"):
            getattr(numfuse.cuda, fn)(x[:, ::2], axis=1)
    # A contiguous slice is fine, and torch agrees.
    torch.testing.assert_close(
        numfuse.cuda.softmax(x[3:40], axis=1), torch.softmax(x[3:40], dim=1), rtol=1e-14, atol=0
    )


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device")
def test_gpu_logsumexp_special_values():
    x = np.array([[0.0, -np.inf], [np.inf, 1.0], [np.nan, 1.0], [-np.inf, -np.inf]])
    got = numfuse.cuda.logsumexp(x, axis=1, device="cuda")
    np.testing.assert_array_equal(got, [0.0, np.inf, np.nan, -np.inf])


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device")
def test_gpu_evaluate_matches_cpu_evaluate():
    rng = np.random.default_rng(9)
    a_host = rng.uniform(0.1, 3.0, 100001)
    b_host = rng.uniform(-2.0, 2.0, 100001).astype(np.float32)
    a = numfuse.cuda.to_device(a_host)
    b = numfuse.cuda.to_device(b_host)  # noqa: F841 - found by evaluate in this frame
    ex = "exp(a) * 2 + erf(b) - log(a) / (1 + a * a) + where(b > 0, a, -a)"
    got = numfuse.cuda.evaluate(ex).get()
    ref = numfuse.evaluate(ex, local_dict={"a": a_host, "b": b_host})
    assert got.dtype == ref.dtype
    np.testing.assert_allclose(got, ref, rtol=1e-14)
    host = _testing.evaluate_host(ex, {"a": a_host, "b": b_host})
    assert np.array_equal(got, host)  # the interpreter's code on both sides
    # int and bool paths
    i = numfuse.cuda.to_device(np.arange(-50, 50, dtype=np.int64))
    np.testing.assert_array_equal(
        numfuse.cuda.evaluate("i * 3 - 7", local_dict={"i": i}).get(), np.arange(-50, 50) * 3 - 7
    )
    np.testing.assert_array_equal(
        numfuse.cuda.evaluate("(i > 3) & (i < 9)", local_dict={"i": i}).get(),
        (np.arange(-50, 50) > 3) & (np.arange(-50, 50) < 9),
    )
    with pytest.raises(ValueError, match="same shape"):
        numfuse.cuda.evaluate("a + c", local_dict={"a": a, "c": numfuse.cuda.to_device(np.ones(3))})


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device")
def test_gpu_torch_tensors_in_place_and_same_kind():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    x = torch.linspace(-3, 3, 10001, device="cuda", dtype=torch.float64)
    y = numfuse.cuda.erf(x)
    assert isinstance(y, torch.Tensor) and y.device == x.device
    torch.testing.assert_close(y, torch.erf(x), rtol=1e-15, atol=1e-16)
    out = torch.empty_like(x)
    assert numfuse.cuda.exp(x, out=out) is out
    torch.testing.assert_close(out, torch.exp(x), rtol=1e-15, atol=0)
    s = torch.cuda.Stream()
    x2 = x[:9999].reshape(101, 99)
    with torch.cuda.stream(s):
        z = numfuse.cuda.logsumexp(x2, axis=1)
    s.synchronize()
    torch.testing.assert_close(z, torch.logsumexp(x2, dim=1), rtol=1e-13, atol=0)
    # what the torch fast path must still refuse or get right
    with pytest.raises(ValueError, match="C-contiguous"):
        numfuse.cuda.exp(x2.t())
    with pytest.raises(TypeError):
        numfuse.cuda.exp(x.clone().requires_grad_(True))
    with pytest.raises(TypeError):
        numfuse.cuda.exp(x.to(torch.float16))
    f32 = x.to(torch.float32)
    torch.testing.assert_close(numfuse.cuda.exp(f32[1:]), torch.exp(f32[1:]), rtol=2e-7, atol=0)
    assert numfuse.cuda.exp(x[:0]).shape == (0,)


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device")
def test_gpu_cupy_arrays_same_kind():
    cupy = pytest.importorskip("cupy")
    x = cupy.linspace(0.1, 5, 10001, dtype=cupy.float32)
    y = numfuse.cuda.log(x)
    assert isinstance(y, cupy.ndarray)
    cupy.testing.assert_allclose(y, cupy.log(x), rtol=2e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("fn", GPU_UFUNCS)
@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device")
def test_gpu_ufuncs_every_size_and_alignment(fn, dtype):
    """The vectorised kernel (16-byte loads) and its tail, and the scalar kernel taken
    for arrays that are not 16-byte aligned: sizes 0..70 and offsets 0..3 elements."""
    cupy = pytest.importorskip("cupy")
    x = sample(fn, dtype, 200, 5)
    with np.errstate(all="ignore"):
        host = _testing.host_math(fn, x)
    base = cupy.asarray(x)
    bits = np.uint32 if dtype == np.float32 else np.uint64
    for offset in range(4):
        for n in range(71):
            got = cupy.asnumpy(getattr(numfuse.cuda, fn)(base[offset : offset + n]))
            want = host[offset : offset + n]
            assert np.array_equal(got.view(bits), want.view(bits)), (offset, n)
        inplace = base[offset : offset + 67].copy()
        getattr(numfuse.cuda, fn)(inplace, out=inplace)
        assert np.array_equal(
            cupy.asnumpy(inplace).view(bits), host[offset : offset + 67].view(bits)
        )


@needs_extension
def test_jit_status_and_source_without_a_device():
    status = numfuse.cuda.jit_status()
    assert set(status) >= {"enabled", "loaded", "library", "load_error", "kernels", "failures"}
    if not status["loaded"]:
        assert status["load_error"] or not status["enabled"]
    lib = _loader._cuda
    src = lib.jit_source("exp(a) * b + erf(a)", ["a", "b"], ["d", "f"], [False, False])
    # one exec per instruction (exp, cast of b, mul, erf, add), both inputs loaded
    assert src.count("nfv::exec<") == 5
    assert "a.inputs[0]" in src and "a.inputs[1]" in src
    assert "erf_rows_to_shared" in src  # erf reads its rows from shared memory
    assert "erf_rows_to_shared" not in lib.jit_source("a * 2", ["a"], ["d"], [False])


@needs_extension
def test_expression_errors_map_as_on_the_cpu_without_a_device():
    # numfuse._cuda maps engine errors with the CPU module's code (src/python/expr_error.hpp):
    # the same classes, columns and caret, behind a "numfuse.cuda.evaluate: " prefix.
    lib = _loader._cuda
    for ex in ("a +", "a + (", "lambda: a"):
        with pytest.raises(numfuse.ExpressionError) as gpu:
            lib.jit_source(ex, ["a"], ["d"], [False])
        with pytest.raises(numfuse.ExpressionError) as cpu:
            numfuse.evaluate(ex, {"a": np.ones(2)})
        assert gpu.value.offset == cpu.value.offset and gpu.value.text == cpu.value.text
        assert str(gpu.value) == "numfuse.cuda.evaluate: " + str(cpu.value)
    with pytest.raises(TypeError) as gpu:
        lib.jit_source("a & 1.5", ["a"], ["d"], [False])
    with pytest.raises(TypeError) as cpu:
        numfuse.evaluate("a & 1.5", {"a": np.ones(2)})
    assert str(gpu.value) == "numfuse.cuda.evaluate: " + str(cpu.value)
    with pytest.raises(KeyError, match="zz"):
        lib.jit_source("zz + a", ["a"], ["d"], [False])


@needs_extension
@pytest.mark.parametrize("ex", EXACT_PROGRAMS + LIBRARY_PROGRAMS)
def test_generated_kernels_compile_with_nvrtc(ex):
    """The GPU evaluate compiler's output (straight-line CUDA C++ over vm_exec.hpp, with
    numfuse's own minimal std headers) compiles with NVRTC; no GPU needed, only the
    nvidia-cuda-nvrtc wheel (requirements-dev.txt)."""
    status = numfuse.cuda.jit_status()
    if not status["loaded"]:
        pytest.skip(f"no NVRTC: {status['load_error']}")
    values = interpreter_inputs()
    names = sorted(values)
    types = [_arrays._LETTERS[values[k].dtype] for k in names]
    lib = _loader._cuda
    for arch, cubin in ((90, True), (80, True), (90, False)):
        size, error = lib.jit_compile_check(ex, names, types, [False] * len(names), arch, cubin)
        assert size > 1000 and not error, error


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device")
@pytest.mark.parametrize("ex", EXACT_PROGRAMS + LIBRARY_PROGRAMS)
def test_gpu_compiled_programs_equal_the_interpreter(ex):
    status = numfuse.cuda.jit_status()
    if not status["loaded"]:
        pytest.skip(f"no NVRTC: {status['load_error']}")
    host_values = interpreter_inputs()
    values = {k: numfuse.cuda.to_device(v) for k, v in host_values.items()}
    compiled = numfuse.cuda.evaluate(ex, local_dict=values, engine="compiled").get()
    interpreted = numfuse.cuda.evaluate(ex, local_dict=values, engine="interpreter").get()
    assert compiled.dtype == interpreted.dtype
    assert compiled.tobytes() == interpreted.tobytes()
    if ex in EXACT_PROGRAMS:
        with np.errstate(all="ignore"):
            host = _testing.evaluate_host(ex, host_values)
        assert compiled.tobytes() == host.tobytes()
    # a scalar changes the constants, not the compiled kernel
    before = numfuse.cuda.jit_status()["kernels"]
    s1 = numfuse.cuda.evaluate("a * k + 1", local_dict={"a": values["a"], "k": 2.0}).get()
    s2 = numfuse.cuda.evaluate("a * k + 1", local_dict={"a": values["a"], "k": 3.0}).get()
    np.testing.assert_array_equal(s1, host_values["a"] * 2.0 + 1)
    np.testing.assert_array_equal(s2, host_values["a"] * 3.0 + 1)
    assert numfuse.cuda.jit_status()["kernels"] <= before + 1


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device")
def test_gpu_evaluate_engines_and_sizes():
    with pytest.raises(ValueError, match="engine"):
        numfuse.cuda.evaluate(
            "a + 1", local_dict={"a": numfuse.cuda.to_device(np.ones(3))}, engine="x"
        )
    rng = np.random.default_rng(3)
    for n in (0, 1, 5, 1023, 1024, 1025, 4097, 300001):
        a_host = rng.uniform(0.1, 3.0, n)
        a = numfuse.cuda.to_device(a_host)
        got = numfuse.cuda.evaluate("exp(a) * a + log(a) - erf(a)", local_dict={"a": a}).get()
        host = _testing.evaluate_host("exp(a) * a + log(a) - erf(a)", {"a": a_host})
        assert got.tobytes() == host.tobytes(), n
        # in place
        numfuse.cuda.evaluate("a * 2 - 1", local_dict={"a": a}, out=a)
        np.testing.assert_array_equal(a.get(), a_host * 2 - 1)
