"""Many Python threads at once, and fork() after OpenMP ran.

* 16 threads x 500 calls mixing the ufuncs, logsumexp/softmax, evaluate, re_evaluate
  and compiled objects (with and without a signature): every result is bit-identical
  to the one computed serially first, and every thread finishes (joined with a timeout).
* fork() after OpenMP teams ran: the child still computes (GNU libgomp would hang in
  the child's first parallel region; numfuse limits the child to one OpenMP thread).
* Teams of 1, 2, 3 and 7 threads whose calls find the pool's workers spinning (back to
  back) or asleep (after a pause; a short job then runs on the caller alone, a long one
  wakes them): bit-identical results, and the floating-point condition of an element at
  the front or the back of the range (the caller's end or the workers') is reported.
"""

from __future__ import annotations

import os
import threading
import time
import warnings

import numpy as np
import pytest

import numfuse as nf
from conftest import HANG_SCALE

THREADS = 16
CALLS = 500
JOIN_TIMEOUT = 300 * HANG_SCALE


def make_inputs(seed: int):
    rng = np.random.default_rng(seed)
    small = rng.standard_normal(1000)
    medium = rng.standard_normal(50_000)
    matrix = rng.standard_normal((64, 300)).astype(np.float32)
    positive = np.abs(medium) + 0.5
    return small, medium, matrix, positive


SMALL, MEDIUM, MATRIX, POSITIVE = make_inputs(1234)
COMPILED = nf.compile("exp(-x * x) + where(x > 0, log1p(x * x), sin(x))")
COMPILED_SIG = nf.compile("2 * a + b * c", [("a", "f8"), ("b", "f8"), ("c", "f8")])


def task_table():
    """(name, callable) pairs; each returns an array or a tuple of arrays."""

    def re_evaluate_task():
        # evaluate, then re_evaluate with other values: the thread's own last call.
        first = nf.evaluate("a * 2 + b", {"a": SMALL, "b": 1.5})
        again = nf.re_evaluate({"a": MEDIUM[:1000], "b": 2.5})
        return first, again

    def evaluate_out_task():
        out = np.empty_like(MEDIUM)
        nf.evaluate("sqrt(p) * cos(p) - p ** 1.5", {"p": POSITIVE}, out=out)
        return out

    return [
        ("exp-small", lambda: nf.exp(SMALL)),
        ("log-medium", lambda: nf.log(POSITIVE)),
        ("erf-f32", lambda: nf.erf(MATRIX)),
        ("exp-strided", lambda: nf.exp(MEDIUM[::3])),
        ("logsumexp-all", lambda: nf.logsumexp(MEDIUM)),
        ("logsumexp-axis", lambda: nf.logsumexp(MATRIX, axis=1)),
        ("logsumexp-b-sign", lambda: nf.logsumexp(SMALL, b=SMALL, return_sign=True)),
        ("softmax", lambda: nf.softmax(MATRIX, axis=0)),
        ("log_softmax", lambda: nf.log_softmax(MEDIUM)),
        ("evaluate", lambda: nf.evaluate("exp(x) * 2 - sin(x) ** 2", {"x": MEDIUM})),
        ("evaluate-sum", lambda: nf.evaluate("sum(x * x, axis=1)", {"x": MATRIX})),
        (
            "evaluate-broadcast",
            lambda: nf.evaluate("x + y", {"x": SMALL[:, None], "y": SMALL[:64]}),
        ),
        ("evaluate-out", evaluate_out_task),
        ("re_evaluate", re_evaluate_task),
        ("compiled", lambda: COMPILED(MEDIUM)),
        ("compiled-kw", lambda: COMPILED(x=SMALL)),
        ("compiled-signature", lambda: COMPILED_SIG(MEDIUM, POSITIVE, MEDIUM)),
    ]


def as_bytes(result):
    if isinstance(result, tuple):
        return tuple(as_bytes(r) for r in result)
    array = np.asarray(result)
    return (array.dtype.str, array.shape, array.tobytes())


@pytest.mark.parametrize("team", [None, 2], ids=["automatic", "two-per-call"])
def test_many_threads_bit_identical_to_serial(team, threads):
    """`team`: None keeps the automatic rule (1 OpenMP thread off the main thread);
    2 makes every Python thread start its own 2-thread OpenMP team (32 threads)."""
    if team is not None:
        nf.set_num_threads(team)
    tasks = task_table()
    expected = [as_bytes(call()) for _, call in tasks]
    failures = []
    done = []

    def worker(index: int):
        try:
            for k in range(CALLS):
                slot = (index * 7 + k * 3) % len(tasks)
                name, call = tasks[slot]
                got = as_bytes(call())
                if got != expected[slot]:
                    failures.append(f"thread {index} call {k}: {name} differs from serial")
                    return
            done.append(index)
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(f"thread {index}: {type(error).__name__}: {error}")

    workers = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(THREADS)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    deadline = time.monotonic() + JOIN_TIMEOUT
    for w in workers:
        w.join(max(0.0, deadline - time.monotonic()))
    hung = [w.name for w in workers if w.is_alive()]
    print(f"{THREADS} threads x {CALLS} calls: {time.perf_counter() - start:.2f} s")
    assert not hung, f"deadlock or hang: {hung} still running after {JOIN_TIMEOUT} s"
    assert not failures, failures[:5]
    assert sorted(done) == list(range(THREADS))


def test_shared_compiled_object_memo_across_types():
    """One compiled object without a signature, called from many threads with inputs
    of different types (its plan memo switches under the GIL)."""
    compiled = nf.compile("x * 3 + 1")
    inputs = [
        np.arange(5000, dtype=np.float64),
        np.arange(5000, dtype=np.float32),
        np.arange(5000, dtype=np.int32),
        np.arange(5000, dtype=np.int64),
    ]
    expected = [as_bytes(compiled(x)) for x in inputs]
    failures = []

    def worker(index: int):
        for k in range(300):
            slot = (index + k) % len(inputs)
            if as_bytes(compiled(inputs[slot])) != expected[slot]:
                failures.append((index, k))
                return

    workers = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(JOIN_TIMEOUT)
    assert not any(w.is_alive() for w in workers)
    assert not failures


def _pool_cases():
    """(name, call) pairs around the threading thresholds: exp at 1e5 splits into a two-thread
    job of a few tens of microseconds (below the pool's wake_worth), the others are longer."""
    rng = np.random.default_rng(77)
    short = rng.uniform(-5, 5, 100_000)
    long = rng.uniform(-5, 5, 1_000_000)
    positive = np.abs(long) + 0.1
    return [
        ("exp-1e5", lambda: nf.exp(short)),
        ("exp-1e6", lambda: nf.exp(long)),
        ("log-1e6-float32", lambda: nf.log(positive.astype(np.float32))),
        ("erf-1e5", lambda: nf.erf(short)),
        ("logsumexp-1e6", lambda: nf.logsumexp(long)),
        ("evaluate-1e6", lambda: nf.evaluate("exp(x) * 2 - sin(x)", {"x": long})),
    ]


@pytest.mark.parametrize("team", [2, 3, 7])
def test_pool_asleep_or_spinning_bit_identical(team, threads):
    cases = _pool_cases()
    nf.set_num_threads(1)
    expected = [as_bytes(call()) for _, call in cases]
    nf.set_num_threads(team)
    for pause in (0.0, 0.002, 0.0, 0.02):  # back to back, then after the workers slept
        for (name, call), want in zip(cases, expected):
            time.sleep(pause)
            assert as_bytes(call()) == want, f"{name}, {team} threads, pause {pause} s"


@pytest.mark.parametrize("team", [1, 2, 3, 7])
@pytest.mark.parametrize("where", [0, -1], ids=["front", "back"])
def test_pool_reports_the_condition_of_any_chunk(team, where, threads):
    """An invalid element in the caller's first chunk or the workers' last one raises under
    errstate(invalid="raise"), whether the workers were awake or asleep."""
    nf.set_num_threads(team)
    for n in (100_000, 1_000_000):
        x = np.linspace(0.5, 2.0, n)
        x[where] = -1.0
        for pause in (0.0, 0.02):
            time.sleep(pause)
            with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
                nf.log(x)


CHILD_TIMEOUT = 60 * HANG_SCALE


def _wait_for_child(pid: int) -> int:
    deadline = time.monotonic() + CHILD_TIMEOUT
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail(f"forked child still running after {CHILD_TIMEOUT} s: OpenMP hang after fork")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("explicit", [False, True], ids=["automatic", "set_num_threads(2)"])
def test_fork_after_openmp_child_still_computes(explicit, threads):
    if explicit:
        nf.set_num_threads(2)
    x = np.linspace(-5, 5, 4_000_000)
    expected = nf.evaluate("exp(sin(x)) * 2 + x", {"x": x})  # big enough to start a team
    expected_lse = nf.logsumexp(x)
    expected_exp = nf.exp(x)
    with warnings.catch_warnings():  # Python 3.12+ warns about fork() with threads
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: compute, report through the exit status only
        code = 3
        try:
            ok = (
                np.array_equal(nf.evaluate("exp(sin(x)) * 2 + x", {"x": x}), expected)
                and nf.logsumexp(x) == expected_lse
                and np.array_equal(nf.exp(x), expected_exp)
                and nf.get_num_threads() == 1
            )
            code = 0 if ok else 1
        except BaseException:  # noqa: BLE001 - any failure is exit status 2
            code = 2
        finally:
            os._exit(code)
    status = _wait_for_child(pid)
    assert status == 0, f"forked child failed with exit status {status}"
    # The parent keeps its team.
    assert np.array_equal(nf.evaluate("exp(sin(x)) * 2 + x", {"x": x}), expected)
