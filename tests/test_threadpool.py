"""No oversubscription: the automatic thread rule (main thread: OpenMP's count;
any other thread: one), explicit counts, and threadpoolctl limits, observed
through the team size of the last parallel loop the calling thread ran."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import numfuse
from conftest import HANG_SCALE, needs_openmp
from numfuse import _core

BIG = np.linspace(-3, 3, 4_000_000)  # 60+ times the per-thread minimum


@pytest.fixture
def automatic():
    """The automatic rule for the test, then whatever was in force before."""
    previous = _core._num_threads_setting()
    numfuse.set_num_threads(None)
    yield
    numfuse.set_num_threads(previous)


def team_after(call):
    _core._peak_team_size()  # reset the record
    call()
    return _core._peak_team_size()


def in_thread(function):
    result = []
    worker = threading.Thread(target=lambda: result.append(function()))
    worker.start()
    worker.join(60)
    assert not worker.is_alive()
    return result[0]


def openmp_count():
    return int(os.environ.get("OMP_NUM_THREADS", "0") or 0) or _core._processor_count()


@pytest.mark.skipif("NUMFUSE_NUM_THREADS" in os.environ, reason="explicit thread count set")
def test_default_is_automatic_and_main_thread_uses_openmp_count():
    code = (
        "import numpy as np, numfuse\n"
        "numfuse.exp(np.ones(4_000_000))\n"
        "print(numfuse._core._num_threads_setting(), numfuse.get_num_threads(),"
        " numfuse._core._peak_team_size())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60 * HANG_SCALE,
    )
    assert out.returncode == 0, out.stderr
    setting, count, team = out.stdout.split()
    assert setting == "None"
    assert int(count) == _core._processor_count() == int(team)


def test_main_thread_team_matches_get_num_threads(automatic):
    expected = numfuse.get_num_threads()
    assert 1 <= expected <= openmp_count()  # torch.set_num_threads may have lowered it
    assert team_after(lambda: numfuse.exp(BIG)) == expected
    assert team_after(lambda: numfuse.evaluate("exp(x) + 1", {"x": BIG})) == expected
    assert team_after(lambda: numfuse.logsumexp(BIG)) == expected


@pytest.mark.parametrize(
    "call",
    [
        lambda: numfuse.exp(BIG),
        lambda: numfuse.evaluate("erf(x) * 2", {"x": BIG}),
        lambda: numfuse.logsumexp(BIG.reshape(2000, 2000), axis=0),
    ],
)
def test_other_threads_use_one_thread(automatic, call):
    def probe():
        return numfuse.get_num_threads(), team_after(call)

    assert in_thread(probe) == (1, 1)
    with ThreadPoolExecutor(max_workers=2) as pool:
        assert [f.result(60) for f in [pool.submit(probe) for _ in range(4)]] == [(1, 1)] * 4


def test_explicit_count_applies_to_every_thread(automatic):
    if _core._processor_count() < 2 or not _core._has_openmp():
        pytest.skip("needs OpenMP and two processors")
    numfuse.set_num_threads(2)
    assert _core._num_threads_setting() == 2

    def probe():
        return numfuse.get_num_threads(), team_after(lambda: numfuse.exp(BIG))

    assert in_thread(probe) == (2, 2)
    with ThreadPoolExecutor(max_workers=1) as pool:
        assert pool.submit(probe).result(60) == (2, 2)
    numfuse.set_num_threads(None)
    assert _core._num_threads_setting() is None
    assert in_thread(probe) == (1, 1)


@needs_openmp
def test_set_num_threads_api(automatic):
    before = numfuse.get_num_threads()
    assert numfuse.set_num_threads(3) == before  # previous count, an int
    assert numfuse.get_num_threads() == 3
    assert numfuse.set_num_threads(None) == 3
    assert numfuse.get_num_threads() == before
    with pytest.raises(ValueError, match="n must be from 1 to"):
        numfuse.set_num_threads(0)
    with pytest.raises(TypeError):
        numfuse.set_num_threads(2.5)
    assert "automatic" in numfuse.set_num_threads.__doc__


def test_threadpoolctl_sees_and_limits_numfuse_openmp(automatic):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    if _core._processor_count() < 2 or not _core._has_openmp():
        pytest.skip("needs OpenMP and two processors")
    openmp = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "openmp"]
    assert openmp, "threadpoolctl found no OpenMP runtime"
    # The runtime numfuse._core links is among those it controls.
    mapped = {os.path.realpath(i["filepath"]) for i in openmp}
    # GNU libgomp (GCC builds), LLVM libomp (clang builds) or Intel's libiomp.
    runtimes = ("libgomp", "libomp", "libiomp")
    with open("/proc/self/maps") as maps:
        loaded = {
            os.path.realpath(line.split()[-1])
            for line in maps
            if any(name in line for name in runtimes)
        }
    assert loaded & mapped

    # (A library sharing this libgomp, e.g. torch.set_num_threads, may have
    # lowered the main thread's limit earlier in the session: start from 2.)
    with threadpoolctl.threadpool_limits(limits=2, user_api="openmp"):
        assert numfuse.get_num_threads() == 2
        assert team_after(lambda: numfuse.exp(BIG)) == 2
        with threadpoolctl.threadpool_limits(limits=1, user_api="openmp"):
            assert numfuse.get_num_threads() == 1
            assert team_after(lambda: numfuse.exp(BIG)) == 1
            assert team_after(lambda: numfuse.evaluate("sin(x)", {"x": BIG})) == 1
        assert team_after(lambda: numfuse.exp(BIG)) == 2
        # an explicit count is capped by a limit lowered after it was set ...
        numfuse.set_num_threads(2)
        with threadpoolctl.threadpool_limits(limits=1, user_api="openmp"):
            assert numfuse.get_num_threads() == 1
            assert team_after(lambda: numfuse.logsumexp(BIG)) == 1
            # ... but not by one already in force when the count is set again
            numfuse.set_num_threads(2)
            assert numfuse.get_num_threads() == 2
            assert team_after(lambda: numfuse.exp(BIG)) == 2
        numfuse.set_num_threads(None)
        assert team_after(lambda: numfuse.exp(BIG)) == 2


@needs_openmp
def test_environment_count_is_explicit_in_worker_threads():
    code = (
        "import threading, numpy as np, numfuse\n"
        "out = []\n"
        "def probe():\n"
        "    numfuse._core._peak_team_size(); numfuse.exp(np.ones(4_000_000))\n"
        "    out.append((numfuse.get_num_threads(), numfuse._core._peak_team_size()))\n"
        "t = threading.Thread(target=probe); t.start(); t.join()\n"
        "print(numfuse._core._num_threads_setting(), *out[0])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    env["NUMFUSE_NUM_THREADS"] = "2"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60 * HANG_SCALE,
    )
    assert out.returncode == 0, out.stderr
    expected_team = "2" if _core._has_openmp() else "1"
    assert out.stdout.split() == ["2", "2", expected_team]


@needs_openmp
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
@pytest.mark.parametrize("omp_num_threads", [None, "1"])
def test_forked_child_runs_serially_even_with_an_explicit_count(omp_num_threads):
    # The explicit count is set while the OpenMP limit is already 1 (as after
    # torch.set_num_threads(1) on a shared libgomp), so it is not capped in
    # the parent; after fork() the child must still not ask libgomp for a
    # team (the parent's pool does not exist there: a team would hang).
    code = (
        "import os, sys, numpy as np, numfuse\n"
        "from threadpoolctl import threadpool_limits\n"
        "x = np.ones(4_000_000)\n"
        "numfuse.set_num_threads(2); numfuse.exp(x)  # the parent's pool exists\n"
        "with threadpool_limits(limits=1, user_api='openmp'):\n"
        "    numfuse.set_num_threads(2)\n"
        "    parent = numfuse.get_num_threads()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    numfuse._core._peak_team_size(); numfuse.exp(x)\n"
        "    os._exit(10 + numfuse._core._peak_team_size())\n"
        "_, status = os.waitpid(pid, 0)\n"
        "print(parent, os.waitstatus_to_exitcode(status) - 10)\n"
    )
    pytest.importorskip("threadpoolctl")
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if omp_num_threads:
        env["OMP_NUM_THREADS"] = omp_num_threads
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60 * HANG_SCALE,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "1"]
