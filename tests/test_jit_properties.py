"""numfuse.jit against the plain function on random formulas (hypothesis).

The formulas come from the evaluate fuzzer's grammar (tests/fuzz/expressions.py), written
as plain NumPy functions instead of text; the reference and tolerances are the fuzzer's.
Each formula also gets a random graph break (np.cumsum, a Python branch on a value)
spliced in, so fused segments meet NumPy steps and guards.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numfuse as nf
from hypothesis_chooser import HypothesisChooser

sys.path.insert(0, str(Path(__file__).parent / "fuzz"))
import expressions  # noqa: E402  (tests/fuzz/expressions.py)

EXAMPLES = int(os.environ.get("NUMFUSE_HYPOTHESIS_EXAMPLES", "300"))
PROFILE = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def numpy_function(tree, breaks):
    """A plain NumPy function of x, y, z computing `tree`; `breaks` (node ids) get
    np.cumsum(...)[-1] * 0 added or an `if` on their sum, both value-neutral."""
    counter = iter(range(10**6))

    def build(node):
        index = next(counter)
        kind = node[0]
        if kind == "var":
            name = node[1]

            def leaf(env):
                return env[name]

            step = leaf
        elif kind == "const":
            value = float(node[1])

            def step(env):
                return value

        elif kind == "un":
            function, inner = expressions.UNARY[node[1]][1], build(node[2])

            def step(env):
                return function(inner(env))

        elif kind == "bin":
            function, a, b = expressions.BINARY[node[1]][1], build(node[2]), build(node[3])

            def step(env):
                return function(a(env), b(env))

        else:
            a, b, c, d = (build(t) for t in node[1:])

            def step(env):
                return np.where(a(env) > b(env), c(env), d(env))

        mode = breaks.get(index)
        if mode == "cumsum":

            def broken(env):
                v = step(env)
                return v + np.cumsum(np.atleast_1d(v * 0.0))[-1] if np.ndim(v) else v

            return broken
        if mode == "branch":

            def branched(env):
                v = step(env)
                if np.sum(v) > 0:
                    return v * 1.0
                return v

            return branched
        return step

    body = build(tree)

    def f(x, y, z):
        return body({"x": x, "y": y, "z": z})

    return f


@settings(PROFILE)
@given(data=st.data())
def test_jit_agrees_with_the_plain_function(data):
    base = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=5))
    dtype = np.dtype(data.draw(st.sampled_from(["float32", "float64"])))
    values = {}
    for name in expressions.VARIABLES:
        shape = tuple(n if data.draw(st.booleans()) else 1 for n in base)
        shape = shape[data.draw(st.integers(0, len(shape))) :]
        values[name] = data.draw(
            hnp.arrays(dtype, shape, elements=st.floats(-3, 3, width=dtype.itemsize * 8))
        )
    tree = expressions.random_tree(HypothesisChooser(data), data.draw(st.integers(0, 3)))
    breaks = {
        data.draw(st.integers(0, 12)): data.draw(st.sampled_from(["cumsum", "branch"]))
        for _ in range(data.draw(st.integers(0, 2)))
    }
    f = numpy_function(tree, breaks)
    args = (values["x"], values["y"], values["z"])
    with np.errstate(all="ignore"):
        want = f(*args)
    assume(isinstance(want, (np.ndarray, np.generic)))
    jitted = nf.jit(f)
    shape = np.shape(want)
    ref = expressions.reference(tree, values, shape, lambda m: expressions.tolerance(dtype, m))
    for _ in range(2):  # the trace, then its replay
        got = jitted(*args)
        assert type(got) is type(want)
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
        problem = expressions.compare(np.asarray(got), ref, dtype)
        assert problem is None, f"{expressions.text_of(tree)} {breaks}: {problem}"
