"""numfuse on dask arrays: lazy results equal to the in-memory answers, computed
on a real dask.distributed cluster (two worker processes on 127.0.0.1), one
pass over the data for reductions, and dask never imported by numfuse itself."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import numfuse
from conftest import HANG_SCALE

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

# Bound every wait on the cluster: a hung worker fails the test instead of CI.
TIMEOUT_S = 120


@pytest.fixture(scope="module")
def client():
    """Two single-threaded worker processes on loopback; closed after the module."""
    distributed = pytest.importorskip("distributed")
    # The nanny writes its pre-spawn settings (OMP_NUM_THREADS=1, ...) into
    # this process's os.environ and leaves them there: every later subprocess
    # of the test session would inherit them. Put the environment back.
    saved_environ = dict(os.environ)
    try:
        yield from _cluster_client(distributed)
    finally:
        os.environ.clear()
        os.environ.update(saved_environ)


def _cluster_client(distributed):
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            worker_dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster, timeout=TIMEOUT_S) as client,
    ):
        client.wait_for_workers(2, timeout=TIMEOUT_S)
        yield client


def run(client, *collections):
    futures = client.compute(list(collections))
    return [f.result(timeout=TIMEOUT_S) for f in futures]


RNG = np.random.default_rng(2024)
X = RNG.standard_normal((240, 180)) * 4
Y = RNG.standard_normal((240, 1))
Z = RNG.standard_normal(180).astype(np.float32)


def dx(chunks=(50, 40)):
    return da.from_array(X, chunks=chunks)


# ------------------------------------------------------------- the cluster


def test_workers_are_separate_processes_that_import_numfuse(client):
    def where_am_i():
        import os

        import numfuse

        return os.getpid(), numfuse.__file__

    pids = set()
    for address in client.scheduler_info()["workers"]:
        pid, path = client.submit(where_am_i, workers=[address], pure=False).result(TIMEOUT_S)
        pids.add(pid)
        assert os.path.dirname(path) == os.path.dirname(numfuse.__file__)
    assert len(pids) == 2 and os.getpid() not in pids


@pytest.mark.skipif("NUMFUSE_NUM_THREADS" in os.environ, reason="explicit thread count set")
def test_worker_tasks_use_one_thread_each(client):
    def probe():
        import numpy as np

        import numfuse

        numfuse._core._peak_team_size()  # reset this thread's record
        numfuse.exp(np.ones(2_000_000))
        return numfuse.get_num_threads(), numfuse._core._peak_team_size()

    assert client.submit(probe, pure=False).result(TIMEOUT_S) == (1, 1)


def test_ufunc_on_cluster_stays_lazy_and_matches(client):
    x = dx()
    lazy = numfuse.exp(x) + numfuse.erf(x / 4)
    assert isinstance(lazy, da.Array)
    (got,) = run(client, lazy)
    np.testing.assert_array_equal(got, numfuse.exp(X) + numfuse.erf(X / 4))


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
def test_logsumexp_matches_in_memory(client, axis):
    lazy = numfuse.logsumexp(dx(), axis=axis)
    assert isinstance(lazy, da.Array)
    (got,) = run(client, lazy)
    np.testing.assert_allclose(got, numfuse.logsumexp(X, axis=axis), rtol=1e-14, atol=0)


def test_logsumexp_weights_sign_keepdims(client):
    b = RNG.standard_normal(180)  # negative weights: signed partial sums
    lazy, sign = numfuse.logsumexp(dx(), axis=1, b=b, keepdims=True, return_sign=True)
    got, got_sign = run(client, lazy, sign)
    want, want_sign = numfuse.logsumexp(X, axis=1, b=b, keepdims=True, return_sign=True)
    assert got.shape == want.shape == (240, 1)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_array_equal(got_sign, want_sign)
    # dask weights with other chunks than `a`
    lazy_b = numfuse.logsumexp(dx(), axis=0, b=da.from_array(np.abs(X) + 0.5, chunks=(60, 90)))
    (got,) = run(client, lazy_b)
    np.testing.assert_allclose(got, numfuse.logsumexp(X, axis=0, b=np.abs(X) + 0.5), rtol=1e-14)


def test_logsumexp_special_values_and_float32(client):
    x = X.copy()
    x[3, :] = -np.inf  # a row of -inf
    x[5, 7] = np.inf
    x[9, 100] = np.nan
    x[:, 11] = 800.0  # would overflow a naive exp
    lazy_rows = numfuse.logsumexp(da.from_array(x, chunks=(50, 40)), axis=1)
    lazy_cols = numfuse.logsumexp(da.from_array(x, chunks=(50, 40)), axis=0)
    x32 = x.astype(np.float32)
    lazy32 = numfuse.logsumexp(da.from_array(x32, chunks=(50, 40)), axis=0)
    rows, cols, got32 = run(client, lazy_rows, lazy_cols, lazy32)
    np.testing.assert_allclose(rows, numfuse.logsumexp(x, axis=1), rtol=1e-14)
    np.testing.assert_allclose(cols, numfuse.logsumexp(x, axis=0), rtol=1e-14)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, numfuse.logsumexp(x32, axis=0), rtol=2e-6)


def test_deep_reduction_trees_use_the_combine_step(client):
    # 400 chunks > 32 per step: partial combines, then the aggregate
    v = RNG.standard_normal(20_000) * 30
    v[123] = -np.inf
    x = da.from_array(v, chunks=50)
    b = np.cos(np.arange(v.size))
    lse, lse_sign = numfuse.logsumexp(x, b=b, return_sign=True)
    got = run(
        client,
        lse,
        lse_sign,
        numfuse.evaluate("logsumexp(x)", {"x": x}),
        numfuse.evaluate("sum(exp(x / 30))", {"x": x}),
        numfuse.evaluate("max(x)", {"x": x}),
    )
    want_lse, want_sign = numfuse.logsumexp(v, b=b, return_sign=True)
    np.testing.assert_allclose(got[0], want_lse, rtol=1e-13)
    assert got[1] == want_sign
    np.testing.assert_allclose(got[2], numfuse.evaluate("logsumexp(v)"), rtol=1e-14)
    np.testing.assert_allclose(got[3], numfuse.evaluate("sum(exp(v / 30))"), rtol=1e-12)
    assert got[4] == v.max()


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_softmax_matches_in_memory(client, log, axis):
    function = numfuse.log_softmax if log else numfuse.softmax
    chunked = function(dx(), axis=axis)  # the reduced axes span several chunks
    single = function(dx((240, 40)), axis=0)  # axis 0 in one chunk: blockwise
    got, got_single = run(client, chunked, single)
    np.testing.assert_allclose(got, function(X, axis=axis), rtol=1e-12, atol=1e-300)
    # per-block calls: the same one-pass kernel, on narrower arrays (the
    # summation order of a column may differ in the last bit)
    np.testing.assert_allclose(got_single, function(X, axis=0), rtol=1e-15, atol=1e-300)


def test_evaluate_elementwise_broadcasting_and_mixed_chunks(client):
    x = dx()
    y = da.from_array(Y, chunks=(70, 1))  # other row chunks than x: unified
    lazy = numfuse.evaluate("exp(x / 4) * y + where(x > 0, z, 2 * x)", {"x": x, "y": y, "z": Z})
    assert isinstance(lazy, da.Array)
    (got,) = run(client, lazy)
    want = numfuse.evaluate("exp(x / 4) * y + where(x > 0, z, 2 * x)", {"x": X, "y": Y, "z": Z})
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "ex",
    [
        "sum(exp(x / 8), axis=0)",
        "log(sum(exp(x), axis=1, keepdims=True))",
        "logsumexp(x, axis=None)",
        "exp(x - max(x, axis=1, keepdims=True))"
        " / sum(exp(x - max(x, axis=1, keepdims=True)), axis=1, keepdims=True)",
        "mean(x * y, axis=(0, 1))",
        "min(x, axis=0) + max(y)",
        "prod(x / x, axis=-1)",
        "sum(x > 0, axis=0)",
    ],
)
def test_evaluate_with_reductions_split(client, ex):
    env = {"x": dx(), "y": da.from_array(Y, chunks=(100, 1))}
    lazy = numfuse.evaluate(ex, env)
    want = numfuse.evaluate(ex, {"x": X, "y": Y})
    assert isinstance(lazy, da.Array)
    assert lazy.dtype == want.dtype and lazy.shape == want.shape
    (got,) = run(client, lazy)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300)


# ------------------------------------------------- without a cluster


def _counted_blocks(shape, chunks, seed):
    """A dask array whose blocks count how often they are produced."""
    calls = []

    def block(block_info=None):
        calls.append(block_info[None]["chunk-location"])
        location = block_info[None]["array-location"]
        rng = np.random.default_rng([seed, *[lo for lo, _ in location]])
        return rng.standard_normal(block_info[None]["chunk-shape"])

    return da.map_blocks(block, chunks=chunks, dtype=np.float64, meta=np.empty((0,))), calls


@pytest.mark.parametrize(
    "make",
    [
        lambda x: numfuse.logsumexp(x),
        lambda x: numfuse.evaluate("log(sum(exp(x)))", {"x": x}),
        lambda x: numfuse.evaluate("logsumexp(x * 2)", {"x": x}),
    ],
)
def test_reductions_read_each_block_once(make):
    x, calls = _counted_blocks((100_000,), ((10_000,) * 10,), seed=1)
    result = make(x).compute(scheduler="synchronous")
    assert len(calls) == 10 and len(set(calls)) == 10
    assert np.isfinite(result)


def test_plan_stages_describe_the_compiled_program():
    from numfuse import _core

    ex = "x / sum(exp(x - max(x, axis=1, keepdims=True)), axis=-1, keepdims=True) + s"
    inputs, stages = _core._plan_stages(ex, ["x", "s"], [np.zeros((1, 1), np.float32), 2.0])
    # (name, dtype, weak, the Python int or None: its value decides NumPy's range checks)
    assert inputs == [("x", "float32", False, None), ("s", "float64", True, None)]
    ints, _ = _core._plan_stages("x + k", ["x", "k"], [np.zeros(1, np.int32), 7])
    assert ints[1] == ("k", "int64", True, 7)
    assert [st["reduce"] for st in stages] == ["max", "sum", "none"]
    assert [st["inputs"] for st in stages] == [
        [(False, 0)],
        [(False, 0), (True, 0)],
        [(False, 0), (True, 1), (False, 1)],
    ]
    assert stages[1]["axes"] == [-1] and stages[1]["keepdims"] and not stages[1]["all_axes"]
    assert {st["out_dtype"] for st in stages} == {"float32"}
    x = RNG.standard_normal((5, 7)).astype(np.float32)
    top = _core._plan_run_stage(ex, inputs, 0, [x], "max", [1], True)
    np.testing.assert_array_equal(top, x.max(axis=1, keepdims=True))
    total = _core._plan_run_stage(ex, inputs, 1, [x, top], "sum", None, False)
    want = numfuse.evaluate("sum(exp(x - max(x, axis=1, keepdims=True)))", {"x": x})
    assert total.dtype == np.float32 and total == want
    result = _core._plan_run_stage(
        ex, inputs, 2, [x, total[None, None], np.array(2.0)], "none", None, False
    )
    np.testing.assert_array_equal(result, x / total + np.float32(2))
    with pytest.raises(TypeError, match="float32"):
        _core._plan_run_stage(ex, inputs, 0, [x.astype(np.float64)], "max", [1], True)


def test_dask_errors_are_clear():
    x = dx()
    with pytest.raises(TypeError, match="out= is not supported"):
        numfuse.evaluate("x + 1", {"x": x}, out=np.empty(X.shape))
    with pytest.raises(TypeError, match="out= is not supported"):
        numfuse.logsumexp(x, out=np.empty(()))
    with pytest.raises(TypeError, match="complex"):
        numfuse.logsumexp(x.astype(np.complex128))
    with pytest.raises(SyntaxError):
        numfuse.evaluate("x +* 1", {"x": x})
    with pytest.raises(ValueError):  # broadcasting checked before anything is computed
        numfuse.evaluate("x + y", {"x": x, "y": da.ones(7, chunks=3)})
    with pytest.raises(ValueError, match="axis 2"):
        numfuse.evaluate("sum(x, axis=2)", {"x": x})


def test_importing_numfuse_does_not_import_dask():
    code = (
        "import sys, numpy as np, numfuse\n"
        "numfuse.evaluate('x + 1', {'x': np.ones(3)}); numfuse.logsumexp(np.ones(3))\n"
        "print(sorted(m for m in sys.modules if m == 'dask' or m.startswith('dask.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60 * HANG_SCALE,
    )
    assert out.stdout.strip() == "[]"
