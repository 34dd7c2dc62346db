"""1e5 calls of each API: resident memory stays within 2 MiB and the reference counts
of the inputs (and out= arrays) do not change. Error paths are included: an exception
raised from C++ is a classic place to leak a reference or a buffer.

Tiny inputs keep this fast (the cost is the per-call overhead, ~1e5 x a few us).
"""

from __future__ import annotations

import gc
import os
import sys

import numpy as np
import pytest

import numfuse as nf

CALLS = 100_000
WARMUP = 2_000
RSS_LIMIT = 2 * 1024 * 1024

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
    # ASan's quarantine and shadow memory make resident memory meaningless here.
    pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""), reason="under AddressSanitizer"),
]


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        resident_pages = int(statm.read().split()[1])
    import resource

    return resident_pages * resource.getpagesize()


X = np.linspace(0.1, 2.0, 16)
X32 = X.astype(np.float32)
M = np.linspace(-1.0, 1.0, 24).reshape(4, 6)
B = np.full(16, 0.5)
OUT = np.empty(16)
OUT4 = np.empty(4)
OBJ = np.array([1.0], dtype=object)
COMPILED = nf.compile("2 * x + exp(x)")
COMPILED_SIG = nf.compile("x * y", [("x", "f8"), ("y", "f8")])
LOCALS = {"x": X, "y": X32, "m": M}


def expect_error(error, call):
    def run():
        try:
            call()
        except error:
            return
        raise AssertionError("expected an error")

    return run


def re_evaluate_call():
    nf.re_evaluate(LOCALS)


CASES = {
    "exp": lambda: nf.exp(X),
    "log-out": lambda: nf.log(X, out=OUT),
    "erf-f32": lambda: nf.erf(X32),
    "logsumexp": lambda: nf.logsumexp(X),
    "logsumexp-b-sign-axis": lambda: nf.logsumexp(M, axis=1, b=M, return_sign=True),
    "logsumexp-out": lambda: nf.logsumexp(M, axis=1, out=OUT4),
    "softmax": lambda: nf.softmax(M, axis=1),
    "log_softmax": lambda: nf.log_softmax(X32),
    "evaluate": lambda: nf.evaluate("x * 2 + sin(y)", LOCALS),
    "evaluate-out": lambda: nf.evaluate("x + 1", LOCALS, out=OUT),
    "evaluate-sum": lambda: nf.evaluate("sum(m, axis=0)", LOCALS),
    "re_evaluate": re_evaluate_call,
    "validate": lambda: nf.validate("x * y", LOCALS),
    "compiled": lambda: COMPILED(X),
    "compiled-kwargs": lambda: COMPILED(x=X, out=OUT),
    "compiled-signature": lambda: COMPILED_SIG(X, X),
    "error-unknown-name": expect_error(KeyError, lambda: nf.evaluate("x + zz", LOCALS)),
    "error-object-dtype": expect_error(TypeError, lambda: nf.evaluate("x + 1", {"x": OBJ})),
    "error-syntax": expect_error(SyntaxError, lambda: nf.evaluate("x +* 1", LOCALS)),
    "error-compiled-object": expect_error(TypeError, lambda: COMPILED(OBJ)),
    "error-logsumexp-axis": expect_error(ValueError, lambda: nf.logsumexp(M, axis=5)),
    "error-ufunc-object": expect_error(TypeError, lambda: nf.exp(OBJ)),
}

WATCHED = {"X": X, "X32": X32, "M": M, "B": B, "OUT": OUT, "OUT4": OUT4, "OBJ": OBJ}


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_growth(name):
    call = CASES[name]
    if name == "re_evaluate":
        nf.evaluate("x * 2 + sin(y)", LOCALS)  # the thread's last expression
    for _ in range(WARMUP):
        call()
    gc.collect()
    refcounts = {key: sys.getrefcount(value) for key, value in WATCHED.items()}
    before = rss_bytes()
    for _ in range(CALLS):
        call()
    gc.collect()
    growth = rss_bytes() - before
    print(f"{name}: {CALLS} calls, RSS growth {growth / 1024:.0f} KiB")
    assert growth <= RSS_LIMIT, f"{name}: RSS grew {growth / 2**20:.2f} MiB over {CALLS} calls"
    after = {key: sys.getrefcount(value) for key, value in WATCHED.items()}
    assert after == refcounts, f"{name}: reference counts changed {refcounts} -> {after}"
