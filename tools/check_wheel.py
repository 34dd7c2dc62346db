"""Checks an installed numfuse wheel (run by tools/check_wheel.sh in a fresh venv).

Fails (non-zero exit, AssertionError) unless: no compiler is reachable, numfuse and
its _core come from the venv (not the source tree given as argv[1]), the packages in
the venv are numfuse and NumPy only, exp/log/erf and evaluate compute correctly, and a
large call runs on more than one thread (where the machine has more than one processor),
and the start-up hook patches NumPy for a script that does not import numfuse.
The OpenMP runtime in use must be the one bundled in the wheel (auditwheel's repair), or,
with `--openmp=system` after the source tree (an unrepaired wheel: `make wheel-pythons`),
a runtime outside the venv that exists.
"""

import math
import os
import shutil
import subprocess
import sys
from importlib import metadata

source_tree = os.path.realpath(sys.argv[1])
system_openmp = sys.argv[2:] == ["--openmp=system"]
assert sys.argv[2:] in ([], ["--openmp=system"]), f"unknown arguments {sys.argv[2:]}"
assert not any(shutil.which(tool) for tool in ("cc", "gcc", "g++", "clang", "c++", "cmake")), (
    "a compiler is on PATH"
)
assert all(not os.path.realpath(p).startswith(source_tree) for p in sys.path if p), sys.path

import numpy as np  # noqa: E402

import numfuse  # noqa: E402

for module in (numfuse, numfuse._core):
    path = os.path.realpath(module.__file__)
    assert path.startswith(os.path.realpath(sys.prefix)), path
    assert not path.startswith(source_tree), path
installed = sorted(d.metadata["Name"].lower() for d in metadata.distributions())
assert set(installed) <= {"numpy", "numfuse", "pip", "setuptools"}, installed

config = numfuse.show_config(print_config=False)
print(
    "numfuse", numfuse.__version__, "level", config["level_in_use"], "compiler", config["compiler"]
)
print("openmp", config["openmp"])

x = np.linspace(-20.0, 20.0, 200_001)
positive = np.exp(np.linspace(-700.0, 700.0, 200_001))
# Within 1 ULP of math's libm (itself within ~1 ULP of exact): 2 ULP apart at most.
for ours, exact, values in (
    (numfuse.exp, math.exp, x),
    (numfuse.log, math.log, positive),
    (numfuse.erf, math.erf, x),
):
    got = ours(values)
    expected = np.array([exact(v) for v in values])
    ulps = np.abs(got - expected) / np.spacing(np.abs(expected))
    assert ulps.max() <= 2, (ours.__name__, ulps.max())
    with np.errstate(all="ignore"):  # the float32 cast overflows for the largest values
        assert ours(values.astype(np.float32)).dtype == np.float32
assert np.array_equal(numfuse.exp(np.array([-np.inf, np.inf, 0.0])), [0.0, np.inf, 1.0])
assert np.isnan(numfuse.log(np.array([np.nan]))[0])

# The start-up hook (numfuse_patch_numpy.pth at site-packages' root): NUMFUSE_PATCH_NUMPY=1
# patches NumPy for a script that never imports numfuse; unset, nothing is imported.
hook = os.path.join(os.path.dirname(os.path.dirname(numfuse.__file__)), "numfuse_patch_numpy.pth")
assert os.path.isfile(hook), f"no start-up hook at {hook}"
probe = (
    "import sys, numpy; m = sys.modules.get('numfuse'); "
    "print(m is not None and m.is_patched('exp'))"
)
bare = "import sys; print('numfuse' in sys.modules or 'numpy' in sys.modules)"
for code, value, expected in ((probe, "1", "True"), (bare, None, "False")):
    env = {k: v for k, v in os.environ.items() if k != "NUMFUSE_PATCH_NUMPY"}
    if value is not None:
        env["NUMFUSE_PATCH_NUMPY"] = value
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == expected, (value, out.stdout, out.stderr)
print("start-up hook: NUMFUSE_PATCH_NUMPY=1 patches a script that does not import numfuse")

a, b = x, positive
got = numfuse.evaluate("exp(-a * a) + log(b) * erf(a)")
expected = np.exp(-a * a) + np.log(b) * np.array([math.erf(v) for v in a])
assert np.allclose(got, expected, rtol=1e-14, atol=1e-300)

processors = numfuse._core._processor_count()
print("processors", processors, "threads", numfuse.get_num_threads())
assert config["openmp"]["enabled"], "the wheel was built without OpenMP"
runtime = os.path.realpath(config["openmp"].get("runtime_path") or "")
if system_openmp:
    assert os.path.isfile(runtime), f"OpenMP runtime not found: {runtime!r}"
else:
    assert runtime.startswith(os.path.realpath(sys.prefix)), (
        f"OpenMP runtime not bundled: {runtime}"
    )
if processors > 1:
    previous = numfuse.set_num_threads(2)
    numfuse._core._peak_team_size()
    big = np.linspace(-5.0, 5.0, 4_000_000)
    assert np.array_equal(numfuse.exp(big), numfuse.exp(big[::-1])[::-1])
    team = numfuse._core._peak_team_size()
    numfuse.set_num_threads(previous)
    assert team == 2, f"a large call ran on {team} thread(s), expected 2"
    print("threaded call: team of", team)
else:
    print("one processor: threaded call not checked")
print("wheel check passed")
