"""1e8 float64 out= timings against np.copyto (NumPy's single-threaded copy, streaming stores).

Prints copy, multiply by 1, and numfuse exp, log, erf (ms, min of 5) with each one's ratio to
the copy. For a before/after table run it back to back with each build on PYTHONPATH
(e.g. main's package, then this tree's), alternating, and note the load average.
"""

import time

import numpy as np

import numfuse as nf

n = 10**8
x = np.random.default_rng(0).uniform(-5, 5, n)
out = np.empty_like(x)


def t(f, k=5):
    b = 1e9
    for _ in range(k):
        s = time.perf_counter()
        f()
        b = min(b, time.perf_counter() - s)
    return b * 1e3


c = t(lambda: np.copyto(out, x))
mul = t(lambda: np.multiply(x, 1.0, out=out))
e = t(lambda: nf.exp(x, out=out))
xa = np.abs(x)
lg = t(lambda: nf.log(xa, out=out))
er = t(lambda: nf.erf(x, out=out))
print(
    f"copy {c:.1f} mul1 {mul:.1f} exp {e:.1f} ({e / c:.2f}x)",
    f"log {lg:.1f} ({lg / c:.2f}x) erf {er:.1f} ({er / c:.2f}x)",
)
