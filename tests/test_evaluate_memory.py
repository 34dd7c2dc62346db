"""evaluate's memory: fused stages need no O(n) temporaries (the evaluate issue's bound:
``exp(x) / sum(exp(x))`` on 1e7 float64 uses at most 2 MiB beyond its result).

Each case runs in a fresh child process: the inputs (and out=) are allocated and touched,
one small call starts the thread team and fills the plan cache, then the peak resident
set (VmHWM) is reset through /proc/self/clear_refs and read again after the one measured
call. A NumPy control shows that the probe does see temporaries.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import HANG_SCALE

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
    # ASan's quarantine and shadow memory make resident memory meaningless here.
    pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""), reason="under AddressSanitizer"),
]

MIB = 1 << 20
LIMIT = 2 * MIB

CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    import numfuse

    def peak():
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        raise RuntimeError("no VmHWM")

    def reset_peak():
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")

    kind, ex, shape = sys.argv[1], sys.argv[2], tuple(int(n) for n in sys.argv[3].split("x"))
    x = np.random.default_rng(0).standard_normal(shape)
    small = np.ascontiguousarray(x[..., :100])
    out = np.zeros_like(x) if kind == "out" else None
    if kind == "numpy":
        run = lambda v: eval(ex, {"__builtins__": {}}, {"x": v, "exp": np.exp, "sum": np.sum})
    else:
        run = lambda v: numfuse.evaluate(ex, {"x": v}, out=out if v is x else None)
    run(small)  # thread team, plan cache, lazy imports
    reset_peak()
    before = peak()
    result = run(x)
    after = peak()
    allocated = 0 if kind == "out" else result.nbytes
    print(after - before - allocated)
    """
)


def extra_bytes(kind: str, ex: str, shape: str) -> int:
    """Peak resident growth of one call beyond the result it allocates."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError as error:
        pytest.skip(f"cannot reset the peak RSS here: {error}")
    completed = subprocess.run(
        [sys.executable, "-c", CHILD, kind, ex, shape],
        capture_output=True,
        text=True,
        timeout=300 * HANG_SCALE,
    )
    assert completed.returncode == 0, completed.stderr
    extra = int(completed.stdout.split()[-1])
    print(f"{kind} {ex!r} {shape}: {extra / MIB:.2f} MiB beyond the result")
    return extra


SOFTMAX = (
    "exp(x - max(x, axis=1, keepdims=True))"
    " / sum(exp(x - max(x, axis=1, keepdims=True)), axis=1, keepdims=True)"
)


@pytest.mark.parametrize("kind", ["allocating", "out"])
@pytest.mark.parametrize(
    "ex,shape",
    [
        ("exp(x) / sum(exp(x))", "10000000"),
        (SOFTMAX, "1000x10000"),
        ("2*x + 3*sin(x) - exp(x)**2", "10000000"),
    ],
)
def test_fused_stages_need_no_temporaries(ex, shape, kind):
    assert extra_bytes(kind, ex, shape) <= LIMIT


def test_probe_sees_numpys_temporaries():
    # NumPy's recipe holds at least one 80 MB temporary next to its result.
    assert extra_bytes("numpy", "exp(x) / sum(exp(x))", "10000000") > 60 * MIB
