"""Subnormal inputs where NumPy's loops report underflow for them (its AVX2 and scalar loops).

numfuse follows NumPy's loop on whether a subnormal input of arcsin, arctan, arcsinh,
arctanh, log1p, expm1 raises underflow (probed at import: NumPy's AVX-512 loops are quiet,
its AVX2 and scalar ones are not). Where NumPy reports it, the first subnormal lane sets
the call's underflow and later batches are screened for their other conditions only. This
file runs NumPy with its AVX-512 loops switched off (NPY_DISABLE_CPU_FEATURES, as on an
AVX2-only CPU) in a subprocess, so the reporting policy is exercised on any x86-64 machine,
and checks that it changes no value and that every condition is still reported as NumPy's.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import numfuse

pytestmark = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64"),
    reason="NPY_DISABLE_CPU_FEATURES names x86-64 features",
)

NAMES = ["arcsin", "arctan", "arcsinh", "arctanh", "log1p", "expm1"]
CONDITIONS = ["divide", "over", "under", "invalid"]

# The values that need the rare path besides subnormals, per function (edges of the domain,
# overflow, NaN), placed in batches after the first subnormal lane.
RARE = {
    "arcsin": [1.5, -2.0, np.nan],
    "arctan": [np.nan, np.inf],
    "arcsinh": [np.nan, -np.inf],
    "arctanh": [1.0, -1.0, 3.0, np.nan],
    "log1p": [-1.0, -2.0, np.nan, -np.inf],
    "expm1": [1000.0, np.nan, np.inf],
}


def _case(name: str, dtype) -> np.ndarray:
    """4099 elements: ordinary values, subnormals every 37th element from element 40 on, and
    the rare values of the function from element 700 on (so in batches after the first
    subnormal at every width)."""
    rng = np.random.default_rng(sum(map(ord, name)))
    x = rng.uniform(-0.9, 0.9, 4099).astype(dtype)
    tiny = np.finfo(dtype).smallest_subnormal
    x[40::37] = np.array([tiny * k for k in (1, -3, 1000, -77777)] * 200, dtype)[: x[40::37].size]
    for k, value in enumerate(RARE[name]):
        x[700 + 211 * k] = value
    return x


def _results() -> dict:
    """Per level, function and dtype: the result's bytes (hex) and the conditions raised."""
    out = {}
    for level in numfuse.usable_levels():
        numfuse.set_level(level)
        for name in NAMES:
            for dtype in (np.float32, np.float64):
                x = _case(name, dtype)
                ours, theirs = getattr(numfuse, name), getattr(np, name)
                raised = {}
                for who, fn in (("numfuse", ours), ("numpy", theirs)):
                    got = []
                    for cond in CONDITIONS:
                        with np.errstate(all="ignore", **{cond: "raise"}):
                            try:
                                fn(x)
                            except FloatingPointError:
                                got.append(cond)
                    raised[who] = got
                with np.errstate(all="ignore"):
                    bits = ours(x).tobytes().hex()
                    # a strided and an unaligned view too (other loops, other batch edges)
                    bits += ours(x[1::3]).tobytes().hex() + ours(x[1:]).tobytes().hex()
                out[f"{level} {name} {np.dtype(dtype).name}"] = {"bits": bits, **raised}
    return out


CHILD = """
import json, sys
sys.path.insert(0, {tests!r})
import numpy as np
import test_subnormal_underflow_policy as t
underflows = {{}}
for name in t.NAMES:
    x = np.full(64, 0.25, np.float32)
    x[20] = np.finfo(np.float32).smallest_subnormal * 5
    with np.errstate(all="ignore", under="raise"):
        try:
            getattr(np, name)(x)
            underflows[name] = False
        except FloatingPointError:
            underflows[name] = True
print(json.dumps({{"numpy_underflows": underflows, "results": t._results()}}))
"""


@pytest.fixture(scope="module")
def avx2_numpy() -> dict:
    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR")
    tests = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.run(
        [sys.executable, "-c", CHILD.format(tests=tests)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_policy_is_exercised(avx2_numpy):
    # NumPy's AVX2/scalar loops report underflow for subnormal float32 inputs of these
    # functions; if none does, this file tests nothing (a NumPy that changed its loops).
    assert any(avx2_numpy["numpy_underflows"].values()), avx2_numpy["numpy_underflows"]


def test_conditions_as_numpy_where_it_reports_subnormal_underflow(avx2_numpy):
    bad = {
        key: (r["numfuse"], r["numpy"])
        for key, r in avx2_numpy["results"].items()
        if r["numfuse"] != r["numpy"]
    }
    assert not bad


def test_values_do_not_depend_on_the_policy(avx2_numpy):
    # The same bits, NaNs aside: which NaN an invalid operation gives follows NumPy's loop
    # too (nan_policy.cpp), and NumPy's AVX-512 and AVX2 loops differ there.
    here = _results()
    assert here.keys() == avx2_numpy["results"].keys()
    differ = []
    for key, ours in here.items():
        dtype = np.dtype(key.split()[-1])
        a = np.frombuffer(bytes.fromhex(ours["bits"]), dtype)
        b = np.frombuffer(bytes.fromhex(avx2_numpy["results"][key]["bits"]), dtype)
        same = (a.view(f"u{dtype.itemsize}") == b.view(f"u{dtype.itemsize}")) | (
            np.isnan(a) & np.isnan(b)
        )
        if not same.all():
            differ.append(key)
    assert not differ
