"""Threads and environment: identical results for any thread count, the GIL is
released during compute, NUMFUSE_ARCH and NUMFUSE_NUM_THREADS are honoured."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import numfuse
from conftest import needs_openmp


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_results_identical_for_any_thread_count(dtype, threads):
    rng = np.random.default_rng(5)
    x = rng.uniform(-20, 20, 3_000_001).astype(dtype)
    results = {}
    for count in (1, 2, 3):
        numfuse.set_num_threads(count)
        results[count] = [numfuse.exp(x), numfuse.log(np.abs(x)), numfuse.erf(x)]
    for count in (2, 3):
        for single, multi in zip(results[1], results[count]):
            np.testing.assert_array_equal(single, multi)


def test_large_strided_threaded_call_matches_serial(threads):
    x = np.linspace(-5, 5, 4_000_000)[::-2]
    numfuse.set_num_threads(1)
    serial = numfuse.exp(x)
    numfuse.set_num_threads(2)
    np.testing.assert_array_equal(numfuse.exp(x), serial)


def test_gil_is_released_during_compute(threads):
    numfuse.set_num_threads(1)
    x = np.linspace(0, 1, 30_000_000)
    out = np.empty_like(x)
    started = threading.Event()

    def work():
        started.set()
        for _ in range(5):
            numfuse.erf(x, out=out)

    worker = threading.Thread(target=work)
    worker.start()
    started.wait()
    python_steps_while_computing = 0
    while worker.is_alive():
        python_steps_while_computing += 1
    worker.join()
    # Holding the GIL for the whole call would leave the main thread at ~0 steps.
    assert python_steps_while_computing > 1000


def test_concurrent_callers_get_correct_results():
    x = np.linspace(0.1, 10, 500_000)
    expected = np.log(x)
    failures = []

    def work():
        for _ in range(10):
            if not np.array_equal(numfuse.log(x), numfuse.log(x.copy())):
                failures.append(1)
            np.testing.assert_allclose(numfuse.log(x), expected, rtol=3e-16)

    pool = [threading.Thread(target=work) for _ in range(4)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    assert not failures


def run_python(code: str, **env) -> str:
    environment = dict(os.environ, **env)
    return subprocess.run(
        [sys.executable, "-c", code], env=environment, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.mark.parametrize("level", numfuse.usable_levels())
def test_numfuse_arch_environment_variable(level):
    name = "avx2" if level == "avx2_fma" else level
    assert run_python("import numfuse; print(numfuse.get_level())", NUMFUSE_ARCH=name) == level


def test_unknown_numfuse_arch_warns_and_uses_best():
    result = subprocess.run(
        [sys.executable, "-W", "always", "-c", "import numfuse; print(numfuse.get_level())"],
        env=dict(os.environ, NUMFUSE_ARCH="mmx"),
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == numfuse.usable_levels()[-1]
    assert "NUMFUSE_ARCH='mmx' is not usable" in result.stderr


@needs_openmp
def test_numfuse_num_threads_environment_variable():
    assert (
        run_python("import numfuse; print(numfuse.get_num_threads())", NUMFUSE_NUM_THREADS="3")
        == "3"
    )


def _import_with(code, warnings_flag, **env):
    return subprocess.run(
        [sys.executable, "-W", warnings_flag, "-c", code],
        env=dict(os.environ, **env),
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5", "2 ", "", "99999999999999999999"])
def test_invalid_numfuse_num_threads_warns_and_uses_automatic(value):
    code = "import numfuse; print(numfuse.get_num_threads(), numfuse._core._num_threads_setting())"
    result = _import_with(code, "always", NUMFUSE_NUM_THREADS=value)
    assert result.returncode == 0, result.stderr
    count, setting = result.stdout.split()
    assert setting == "None" and int(count) >= 1
    assert f"NUMFUSE_NUM_THREADS={value!r} is not a thread count" in result.stderr


def test_numfuse_num_threads_above_the_cap_warns():
    value = str(numfuse.MAX_THREADS + 1)
    result = _import_with("import numfuse", "always", NUMFUSE_NUM_THREADS=value)
    assert result.returncode == 0, result.stderr
    assert f"NUMFUSE_NUM_THREADS={value!r}" in result.stderr


def test_valid_numfuse_num_threads_does_not_warn():
    result = _import_with("import numfuse", "error", NUMFUSE_NUM_THREADS="2")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("n", [0, -1, "max+1", 10**6, 2**40])
def test_set_num_threads_refuses_counts_out_of_range(n):
    if n == "max+1":
        n = numfuse.MAX_THREADS + 1
    before = numfuse.get_num_threads()
    with pytest.raises((ValueError, TypeError)) as info:
        numfuse.set_num_threads(n)
    if isinstance(info.value, ValueError) and n > 0:
        assert "MAX_THREADS" in str(info.value)
    assert numfuse.get_num_threads() == before


def test_max_threads_is_at_least_the_processor_count():
    assert numfuse.MAX_THREADS >= max(64, numfuse._core._processor_count())
    previous = numfuse._core._num_threads_setting()
    numfuse.set_num_threads(numfuse.MAX_THREADS)
    try:
        assert numfuse._core._num_threads_setting() == numfuse.MAX_THREADS
    finally:
        numfuse.set_num_threads(previous)
