"""Shared fixtures: every test that takes `level` runs at every usable level.

Under emulation (`make test-aarch64`: an arm64 Python under qemu-aarch64, which sets
NUMFUSE_TEST_EMULATOR and NUMFUSE_TEST_PYTHON) child interpreters start through the same
emulator, and the tests in SKIPPED_UNDER_EMULATION are skipped with their reason.
"""

from __future__ import annotations

import os
import platform
import sys
import warnings

import mpmath
import numpy as np
import pytest

import numfuse

EMULATOR = os.environ.get("NUMFUSE_TEST_EMULATOR", "")
# Timeouts in the tests detect hangs; they are no speed bound. Under the emulator (software
# floating point, every guest thread and child interpreter on the host's cores) they are
# multiplied by this.
HANG_SCALE = 10 if EMULATOR else 1
if os.environ.get("NUMFUSE_TEST_PYTHON"):
    # The host kernel cannot execute an aarch64 binary (no binfmt_misc on CI machines): tests
    # that start `sys.executable` start the wrapper script, which runs it under qemu.
    sys.executable = os.environ["NUMFUSE_TEST_PYTHON"]

# Node-id prefix -> why it does not run under emulation. Only tests whose cost under qemu
# (software floating point, one host thread per guest thread) is out of proportion to what
# they check on aarch64; accuracy, ufunc semantics, evaluate and the reductions always run.
SKIPPED_UNDER_EMULATION: dict[str, str] = {
    "tests/test_show_config.py::test_openmp_runtime_is_the_one_core_uses": (
        "qemu -L maps the sysroot in: the dynamic loader names libgomp by its guest path, "
        "/proc/self/maps by its host path, so the two names cannot match"
    ),
    "tests/test_build.py": (
        "configures and builds the core with the host's cmake and compiler (x86-64 code, not "
        "the emulated target's), for minutes of host time; CMake's choice of xsimd does not "
        "depend on the interpreter, and the native suite runs these tests"
    ),
    "tests/test_patch.py::test_numpys_own_umath_tests_pass_while_patched": (
        "runs NumPy's whole test_umath module (thousands of tests) in a subprocess: more than "
        "15 minutes under qemu; the patched loops are the same kernels the accuracy and ufunc "
        "tests check here, and the native suite runs it"
    ),
    "tests/test_evaluate_memory.py::test_fused_stages_need_no_temporaries": (
        "the peak resident set read from /proc/self/status is qemu's own: it also counts the "
        "code qemu translates while the measured call first runs its paths (3.6-7.4 MiB, "
        "0 when the same call is repeated), above the 2 MiB bound for temporaries"
    ),
}


# Node id -> an open aarch64 (neon64) bug the test shows; xfail there (not strict: a fix
# shows up as XPASS), run normally everywhere else. Each is listed in the closing note of the
# session that found it and stays here only until fixed.
KNOWN_AARCH64_FAILURES: dict[str, str] = {}


def pytest_collection_modifyitems(config, items):
    if platform.machine() in ("aarch64", "arm64"):
        for item in items:
            reason = KNOWN_AARCH64_FAILURES.get(item.nodeid)
            if reason is not None:
                item.add_marker(pytest.mark.xfail(reason=reason, strict=False))
    if not EMULATOR:
        return
    for item in items:
        for prefix, reason in SKIPPED_UNDER_EMULATION.items():
            if item.nodeid == prefix or item.nodeid.startswith((prefix + "::", prefix + "[")):
                item.add_marker(pytest.mark.skip(reason=f"under {EMULATOR}: {reason}"))
                break


# Tests of the thread-count API that only hold where numfuse has threads: a build without
# OpenMP runs every call on the calling thread and get_num_threads() is always 1.
needs_openmp = pytest.mark.skipif(
    not numfuse._core._has_openmp(), reason="built without OpenMP: get_num_threads() is always 1"
)


@pytest.fixture(params=numfuse.usable_levels())
def level(request):
    """Run the test with the instruction-set level forced to each usable one."""
    previous = numfuse.set_level(request.param)
    yield request.param
    numfuse.set_level(previous)


@pytest.fixture
def threads():
    """Restore the thread count a test changes."""
    previous = numfuse.get_num_threads()
    yield
    numfuse.set_num_threads(previous)


def ulp_of(value, info):
    """Unit in the last place of the mpmath value `value` in the format `info` (np.finfo),
    subnormal spacing at the bottom."""
    import mpmath

    if value == 0:
        return mpmath.ldexp(1, int(info.minexp) - info.nmant)
    exponent = max(int(mpmath.floor(mpmath.log(abs(value), 2))), int(info.minexp))
    return mpmath.ldexp(1, exponent - info.nmant)


def ulp_distance(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Number of representable values between two same-dtype float arrays.

    NaN against NaN counts as 0; NaN against a number as a huge distance.
    """
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype
    int_type = {2: np.int64, 4: np.int64, 8: object}[actual.dtype.itemsize]
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[actual.dtype.itemsize]

    def ordered(values):
        raw = values.view(bits).astype(int_type)
        # Map sign-magnitude bit patterns onto a monotonic integer line.
        return np.where(raw < 0, -(raw & ((1 << (8 * values.itemsize - 1)) - 1)), raw)

    distance = np.abs(ordered(actual) - ordered(expected))
    both_nan = np.isnan(actual) & np.isnan(expected)
    one_nan = np.isnan(actual) ^ np.isnan(expected)
    distance = np.where(both_nan, 0, distance)
    return np.where(one_nan, 1 << 60, distance).astype(np.float64)


def results_in_three_layouts(ufunc, x):
    """ufunc(x) into a fresh array, in place on a copy of x, and on a strided view holding
    the same values (the contiguous, overlapping-out and strided loops), under the caller's
    np.errstate."""
    inplace = x.copy()
    wide = np.empty(2 * x.size, x.dtype)
    wide[::2] = x
    got = ufunc(x, out=np.empty_like(x))
    ufunc(inplace, out=inplace)
    return got, inplace, ufunc(wide[::2])


def fp_conditions(ufunc, x) -> set[str]:
    """The floating-point conditions ('overflow', 'underflow', 'invalid', 'divide') that
    ufunc(x) reports under np.errstate(all="warn")."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(all="warn"):
            ufunc(x)
    return {
        w
        for w in ("overflow", "underflow", "invalid", "divide")
        for c in caught
        if w in str(c.message)
    }


# ------------------------------------------------------------------ logsumexp in mpmath


def mp_parts(values):
    """logsumexp, softmax and log_softmax of float values in mpmath.

    Shifted by the maximum and with log1p of the non-maximal part, so that
    50 digits suffice even when the result is, e.g., -1e-300 next to 700.
    """
    values = [float(v) for v in values]
    top = int(np.argmax(values))
    with mpmath.workdps(50):
        shift = mpmath.mpf(values[top])
        diffs = [mpmath.mpf(v) - shift for v in values]
        exps = [mpmath.exp(d) for d in diffs]
        rest = mpmath.fsum(e for j, e in enumerate(exps) if j != top)
        log_total = mpmath.log1p(rest)
        total = 1 + rest
        lse = float(shift + log_total)
        soft = np.array([float(e / total) for e in exps])
        log_soft = np.array([float(d - log_total) for d in diffs])
    return lse, soft, log_soft


def mp_logsumexp(values):
    return mp_parts(values)[0]


def mp_softmax_parts(values):
    return mp_parts(values)[1:]


def relative_error_in_eps(actual, expected, dtype):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    scale = np.abs(expected)
    tiny = np.finfo(dtype).tiny
    return np.max(np.abs(actual - expected) / np.maximum(scale, tiny)) / np.finfo(dtype).eps
