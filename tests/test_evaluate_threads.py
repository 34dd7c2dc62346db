"""Thread safety: evaluate, re_evaluate and compiled objects from many Python threads."""

from __future__ import annotations

import threading

import numpy as np

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
