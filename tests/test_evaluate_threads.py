"""Thread safety: evaluate, re_evaluate and compiled objects from many Python threads."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import numfuse


def _run_threads(worker, count=8):
    errors = []

    def guarded(index):
        try:
            worker(index)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


def test_concurrent_evaluate_with_distinct_expressions_and_types():
    rng = np.random.default_rng(5)
    data = [rng.standard_normal(50_000).astype(dt) for dt in (np.float64, np.float32)]

    def worker(index):
        x = data[index % 2]
        k = index + 1
        for _ in range(40):
            r = numfuse.evaluate(f"exp(x) * {k} + sum(x) - x*x")
            expected = np.exp(x) * k + x.sum(dtype=np.float64).astype(x.dtype) - x * x
            np.testing.assert_allclose(r, expected, rtol=1e-5 if x.dtype == np.float32 else 1e-12)

    _run_threads(worker)


def test_re_evaluate_is_per_thread():
    def worker(index):
        a = np.full(1000, float(index))
        numfuse.evaluate(f"a + {index}")
        for step in range(50):
            a = np.full(1000, float(step))
            r = numfuse.re_evaluate()
            np.testing.assert_array_equal(r, a + index)

    _run_threads(worker)


def test_shared_compiled_object():
    c = numfuse.compile("where(x > 0, log1p(x), expm1(x)) * y")
    rng = np.random.default_rng(9)

    def worker(index):
        x = rng.standard_normal(20_000) if index == 0 else np.linspace(-3, 3, 20_000 + index)
        y = np.float64(index)
        for _ in range(30):
            r = c(x, y)
            with np.errstate(all="ignore"):  # NumPy's where evaluates both branches
                expected = np.where(x > 0, np.log1p(x), np.expm1(x)) * y
            np.testing.assert_allclose(r, expected, rtol=1e-14, atol=1e-300)

    _run_threads(worker)


def test_concurrent_cache_churn_and_thread_count_changes(threads):
    numfuse._core._expr_set_cache_capacity(4)
    try:

        def worker(index):
            x = np.arange(10_000.0)
            for step in range(60):
                if index == 0:
                    numfuse.set_num_threads(1 + step % 3)
                r = numfuse.evaluate(f"x * {step % 9} + {index}")
                np.testing.assert_array_equal(r, x * (step % 9) + index)

        _run_threads(worker)
    finally:
        numfuse._core._expr_set_cache_capacity(256)


def _longest_main_thread_stall(call):
    """Run ``call`` on another thread; return (its duration, the longest gap between
    two consecutive steps of the main thread while it ran). A call that held the GIL
    throughout would stall the main thread for about its whole duration."""
    window = []

    def work():
        window.append(time.perf_counter())
        call()
        window.append(time.perf_counter())

    worker = threading.Thread(target=work)
    stamps = []
    worker.start()
    while worker.is_alive():
        stamps.append(time.perf_counter())
    worker.join()
    start, end = window
    inside = [start] + [t for t in stamps if start < t < end] + [end]
    return end - start, max(b - a for a, b in zip(inside, inside[1:]))


@pytest.mark.parametrize("kind", ["evaluate", "compiled"])
def test_gil_is_released_during_compute(kind, threads):
    numfuse.set_num_threads(1)
    # 64e6 broadcast elements, almost no memory: a few hundred ms on one thread.
    x = np.linspace(0.0, 1.0, 8000)[:, None]
    y = np.linspace(0.0, 1.0, 8000)[None, :]
    ex = "sum(sin(x * y) * exp(x))"
    compiled = numfuse.compile(ex)
    if kind == "evaluate":

        def call():
            numfuse.evaluate(ex, {"x": x, "y": y})
    else:

        def call():
            compiled(x, y)

    duration, stall = _longest_main_thread_stall(call)
    assert duration > 0.05, "the call is too short to tell"
    assert stall < duration / 2, f"main thread stalled {stall:.3f} s of a {duration:.3f} s call"
