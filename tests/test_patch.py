"""numfuse.patch_numpy / restore_numpy / is_patched / patched and ``python -m numfuse run``.

Table-driven: every numfuse ufunc whose reference (numpy.<name>, or scipy.special.<name> for
SciPy's loop order) is a ufunc here. Patched, the reference gives numfuse's results bit for
bit on float32/float64; restored, NumPy's own bit for bit; its other loops never change.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest
import scipy.special

import numfuse
from conftest import HANG_SCALE
from function_table import CORE, FUNCTIONS, Sweep, arguments
from numfuse import _core

PATCHABLE = [name for name in CORE if CORE[name].is_ufunc]


def _reference(name):
    return scipy.special if CORE[name].ufunc_of == "scipy" else np


def _target(name):
    return getattr(_reference(name), name)


def _inputs(name, dtype):
    sweep = Sweep(np.random.default_rng(7), dtype, 2000)
    args = arguments(name, sweep, dtype)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0], dtype=dtype)
    if len(args) == 1:
        return (np.concatenate([args[0], specials]),)
    return tuple(np.concatenate([a, specials]) for a in args)


def _bits(x):
    x = np.asarray(x)
    return x.view({2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize])


def _call(f, args):
    with np.errstate(all="ignore"):
        return f(*args)


@pytest.fixture(autouse=True)
def _nothing_patched():
    """Every test starts and must end with NumPy unpatched."""
    assert not numfuse.is_patched()
    yield
    leftover = numfuse.is_patched()
    numfuse.restore_numpy()
    assert not leftover, "a test left NumPy patched"


@pytest.mark.parametrize("name", PATCHABLE)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_patched_reference_gives_numfuse_results_and_restore_gives_the_original(name, dtype):
    target, ours = _target(name), getattr(numfuse, name)
    args = _inputs(name, dtype)
    before = _call(target, args)
    with numfuse.patched([name], scipy=True):
        assert numfuse.is_patched(name)
        patched = _call(target, args)
        assert patched.dtype == before.dtype
        np.testing.assert_array_equal(_bits(patched), _bits(_call(ours, args)))
        # Strided and in-place calls go through the same loop.
        strided = tuple(np.repeat(a, 2)[::2] for a in args)
        np.testing.assert_array_equal(_bits(_call(target, strided)), _bits(patched))
        in_place = args[0].copy()
        with np.errstate(all="ignore"):
            target(in_place, *args[1:], out=in_place)
        # (float_power's float64 results are cast to float32 in place)
        with np.errstate(over="ignore"):
            cast = patched.astype(in_place.dtype)
        np.testing.assert_array_equal(_bits(in_place), _bits(cast))
    assert not numfuse.is_patched(name)
    np.testing.assert_array_equal(_bits(_call(target, args)), _bits(before))


@pytest.mark.parametrize("name", PATCHABLE)
def test_other_loops_are_untouched(name):
    target = _target(name)
    arity = CORE[name].arity
    others = [t for t in ("e", "g", "F", "D", "G") if t * (arity + 1) in _signatures(target)]
    x = np.linspace(0.1, 0.9, 7)
    before = {t: _call(target, [x.astype(t)] * arity) for t in others}
    with numfuse.patched([name], scipy=True):
        for t in others:
            np.testing.assert_array_equal(_call(target, [x.astype(t)] * arity), before[t])


def _signatures(ufunc):
    return {sig.replace("->", "") for sig in ufunc.types}


def _float_loops(name):
    """The float32 / float64 loops a patch swaps (float_power has only float64)."""
    return [t for t in "fd" if t in CORE[name].loops]


def test_patched_loops_are_swapped_and_restored_exactly():
    for name in PATCHABLE:
        target, ours = _target(name), getattr(numfuse, name)
        for t in _float_loops(name):
            assert not _core._runs_loop_of(target, ours, t)
    with numfuse.patched(scipy=True):
        for name in PATCHABLE:
            target, ours = _target(name), getattr(numfuse, name)
            for t in _float_loops(name):
                assert _core._runs_loop_of(target, ours, t)
    for name in PATCHABLE:
        assert not _core._runs_loop_of(_target(name), getattr(numfuse, name), "d")


def test_patch_numpy_defaults_to_numpy_only_and_is_idempotent():
    numpy_names = [n for n in PATCHABLE if _reference(n) is np]
    assert numfuse.patch_numpy() == sorted(numpy_names)
    assert numfuse.patch_numpy() == sorted(numpy_names)  # idempotent
    assert all(numfuse.is_patched(n) for n in numpy_names)
    assert not any(numfuse.is_patched(n) for n in PATCHABLE if n not in numpy_names)
    numfuse.restore_numpy()  # one restore undoes any number of patch_numpy calls
    assert not numfuse.is_patched()
    numfuse.restore_numpy()  # nothing patched: a no-op


def test_patched_blocks_nest_and_outlive_restore_numpy():
    with numfuse.patched(["exp"]):
        numfuse.patch_numpy(["exp", "log"])
        with numfuse.patched(["exp"]):
            assert numfuse.is_patched("exp")
        assert numfuse.is_patched("exp")
        numfuse.restore_numpy()
        assert numfuse.is_patched("exp")  # the outer block still holds it
        assert not numfuse.is_patched("log")
    assert not numfuse.is_patched()


def test_patched_restores_on_exception():
    with pytest.raises(ZeroDivisionError), numfuse.patched():
        assert numfuse.is_patched("exp")
        1 / 0  # noqa: B018
    assert not numfuse.is_patched()


def test_concurrent_patch_and_restore_leave_numpy_as_it_was():
    x = np.linspace(-3, 3, 50_000)
    expected = np.exp(x)
    errors = []

    def worker():
        try:
            for _ in range(200):
                with numfuse.patched(["exp", "log"]):
                    np.exp(x)
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert not numfuse.is_patched()
    np.testing.assert_array_equal(_bits(np.exp(x)), _bits(expected))


def test_floating_point_warnings_and_errstate_stay_numpys():
    with numfuse.patched():
        with pytest.warns(RuntimeWarning, match="overflow"):
            np.exp(np.array([1000.0]))
        with pytest.warns(RuntimeWarning, match="divide by zero"):
            np.log(np.array([0.0], dtype=np.float32))
        with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
            np.log(np.array([-1.0]))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="ignore"):
                np.exp(np.array([1000.0]))


def test_bad_requests_raise_clear_errors():
    with pytest.raises(ValueError, match="'cbrt_nope'"):
        numfuse.patch_numpy(["exp", "cbrt_nope"])
    assert not numfuse.is_patched()  # nothing half-done
    with pytest.raises(ValueError, match="scipy=True"):
        numfuse.patch_numpy(["erf"])
    with pytest.raises(TypeError):
        numfuse.patch_numpy([np.exp])
    # A target without the loop, or of another arity: refused before anything changes.
    with pytest.raises(RuntimeError, match="invert has no d->d loop"):
        _core._swap_loop(np.invert, numfuse.exp, "d")
    with pytest.raises(ValueError, match="different numbers of arguments"):
        _core._swap_loop(np.add, numfuse.exp, "d")
    with pytest.raises(ValueError, match="float32"):
        _core._swap_loop(np.exp, numfuse.exp, "g")
    with pytest.raises(TypeError, match="numpy.ufunc"):
        _core._swap_loop(len, numfuse.exp, "d")
    with pytest.raises(TypeError):
        _core._restore_loop(np.exp, object())


def _run_python(code_or_args, env_extra=None, cwd=None):
    env = dict(os.environ, **(env_extra or {}))
    args = code_or_args if isinstance(code_or_args, list) else ["-c", code_or_args]
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=600 * HANG_SCALE,
    )


def test_environment_variable_patches_at_import():
    code = "import numfuse; print(numfuse.is_patched('exp'), numfuse.is_patched('erf'))"
    assert _run_python(code, {"NUMFUSE_PATCH_NUMPY": "1"}).stdout.split() == ["True", "False"]
    assert _run_python(code, {"NUMFUSE_PATCH_NUMPY": "scipy"}).stdout.split() == ["True", "True"]
    assert _run_python(code, {"NUMFUSE_PATCH_NUMPY": "0"}).stdout.split() == ["False", "False"]
    bad = _run_python(code, {"NUMFUSE_PATCH_NUMPY": "yes please"})
    assert bad.stdout.split() == ["False", "False"]
    assert "NUMFUSE_PATCH_NUMPY" in bad.stderr


# The start-up hook the wheel installs at site-packages' root (CMakeLists.txt); in a source
# tree, the file it is installed from.
HOOK_NAME = "numfuse_patch_numpy.pth"
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.realpath(numfuse.__file__)))
HOOK_SOURCE = os.path.join(os.path.dirname(__file__), os.pardir, "python", HOOK_NAME)


def _site_with_hook(tmp_path):
    """A folder laid out as the wheel installs numfuse: the package (linked to the one under
    test) and the hook beside it. The site module's addsitedir, which Python's start-up runs
    for every site-packages folder, processes it; tools/check_wheel.py checks a real install."""
    site_dir = tmp_path / "site-packages"
    site_dir.mkdir()
    (site_dir / "numfuse").symlink_to(os.path.join(PACKAGE_DIR, "numfuse"))
    installed = os.path.join(PACKAGE_DIR, HOOK_NAME)
    source = installed if os.path.exists(installed) else HOOK_SOURCE
    with open(source) as hook:
        (site_dir / HOOK_NAME).write_text(hook.read())
    return site_dir


def test_startup_hook_patches_an_unmodified_script(tmp_path):
    site_dir = _site_with_hook(tmp_path)
    script = tmp_path / "prog.py"
    script.write_text(  # never imports numfuse
        "import sys, numpy as np\n"
        "patched = 'numfuse' in sys.modules and sys.modules['numfuse'].is_patched('exp')\n"
        "print(patched, sys.modules['numfuse'].is_patched('erf') if patched else None)\n"
    )
    # Start-up as Python's site module runs it, then the script as `python prog.py` would.
    start = (
        "import sys, site, runpy; site.addsitedir(sys.argv[1]); "
        "runpy.run_path(sys.argv[2], run_name='__main__')"
    )
    env = {"PYTHONPATH": ""}

    def run(value, script=script):
        return _run_python(["-c", start, str(site_dir), str(script)], {**env, **value})

    assert run({"NUMFUSE_PATCH_NUMPY": "1"}).stdout.split() == ["True", "False"]
    assert run({"NUMFUSE_PATCH_NUMPY": "scipy"}).stdout.split() == ["True", "True"]
    bad = run({"NUMFUSE_PATCH_NUMPY": "yes please"})
    assert bad.returncode == 0 and "NUMFUSE_PATCH_NUMPY" in bad.stderr
    # Unset or 0: the hook imports nothing (neither numfuse nor NumPy) and costs one lookup.
    bare = tmp_path / "bare.py"
    bare.write_text("import sys; print('numfuse' in sys.modules, 'numpy' in sys.modules)\n")
    for value in ({}, {"NUMFUSE_PATCH_NUMPY": "0"}, {"NUMFUSE_PATCH_NUMPY": ""}):
        environment = {k: v for k, v in os.environ.items() if k != "NUMFUSE_PATCH_NUMPY"}
        result = subprocess.run(
            [sys.executable, "-c", start, str(site_dir), str(bare)],
            capture_output=True,
            text=True,
            env={**environment, **env, **value},
            timeout=600 * HANG_SCALE,
        )
        assert result.stdout.split() == ["False", "False"], (value, result.stderr)


def test_run_command_runs_an_unmodified_script_patched(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import sys, numpy as np, numfuse\n"
        "x = np.linspace(-1, 1, 101)\n"
        "assert (np.exp(x) == numfuse.exp(x)).all()\n"
        "print(numfuse.is_patched('exp'), numfuse.is_patched('erf'), sys.argv[1:], __name__)\n"
    )
    done = _run_python(["-m", "numfuse", "run", str(script), "a", "--b"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False", "['a',", "'--b']", "__main__"]
    done = _run_python(["-m", "numfuse", "run", "--scipy", "--functions", "exp,erf", str(script)])
    assert done.stdout.split()[:2] == ["True", "True"], done.stderr
    usage = _run_python(["-m", "numfuse", "run"])
    assert usage.returncode == 2 and "usage" in usage.stderr
    # mistakes get one line after the usage, never a traceback
    for args, message in (
        (["--functions", "nope", str(script)], "no ufunc 'nope'"),
        ([str(tmp_path / "nosuch.py")], "no such file"),
        (["-m", "nosuch_module_of_numfuse"], "no module named 'nosuch_module_of_numfuse'"),
    ):
        failed = _run_python(["-m", "numfuse", "run", *args])
        assert failed.returncode == 2, failed.stderr
        assert message in failed.stderr and "Traceback" not in failed.stderr


@pytest.mark.skipif(
    importlib.util.find_spec("numpy._core.tests.test_umath") is None
    or importlib.util.find_spec("hypothesis") is None,
    reason="this NumPy ships without its test modules (or hypothesis is missing)",
)
def test_numpys_own_umath_tests_pass_while_patched(tmp_path):
    done = _run_python(
        [
            "-m", "numfuse", "run", "--scipy", "-m", "pytest", "--pyargs",
            "numpy._core.tests.test_umath", "-q", "-p", "no:cacheprovider", "-x",
        ],
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout


def test_functions_table_rows_cover_the_patchable_set():
    assert set(PATCHABLE) <= set(FUNCTIONS)
