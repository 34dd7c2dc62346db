"""numfuse's public API is typed: `mypy --strict` passes a typical user file and flags wrong calls.

tests/typing/user_code.py must type-check cleanly (no "call to untyped function", no untyped
decorator); tests/typing/wrong_calls.py marks each call mypy must report with
`# E: <error code>`. mypy sees numfuse as an installed package (found on sys.path, with its
py.typed), as a user's mypy does, so only the annotations of the public API matter.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import numfuse

TYPING = Path(__file__).resolve().parent / "typing"
MARK = re.compile(r"#\s*E:\s*([\w-]+)")
REPORT = re.compile(r"^[^:]+:(\d+): error: .*\[([\w-]+)\]$")

needs_mypy = pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed (requirements-dev.txt pins it: "
    "pip install -r requirements-dev.txt)",
)


def _mypy(name: str) -> tuple[int, str]:
    """Run `python -m mypy --strict` on tests/typing/<name> with numfuse importable as here."""
    env = dict(os.environ)
    package_root = str(Path(numfuse.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    env.pop("MYPYPATH", None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--no-color-output",
            "--hide-error-context",
            "--no-error-summary",
            name,
        ],
        cwd=TYPING,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return result.returncode, result.stdout + result.stderr


@needs_mypy
def test_user_code_passes_mypy_strict():
    code, output = _mypy("user_code.py")
    assert code == 0, f"mypy --strict reports on tests/typing/user_code.py:\n{output}"


@needs_mypy
def test_wrong_calls_are_flagged():
    _check_marked_errors("wrong_calls.py", at_least=10)


@needs_mypy
def test_dask_arrays_give_dask_arrays():
    pytest.importorskip("dask.array")
    _check_marked_errors("dask_code.py", at_least=1)


def _check_marked_errors(name: str, at_least: int) -> None:
    """mypy reports exactly the lines of tests/typing/<name> marked `# E: <code>`."""
    lines = (TYPING / name).read_text().splitlines()
    expected = {
        number: match.group(1)
        for number, line in enumerate(lines, start=1)
        if (match := MARK.search(line))
    }
    assert len(expected) >= at_least
    code, output = _mypy(name)
    assert code == 1, output
    reported: dict[int, set[str]] = {}
    for line in output.splitlines():
        if match := REPORT.match(line.strip()):
            reported.setdefault(int(match.group(1)), set()).add(match.group(2))
    missing = {n: c for n, c in expected.items() if c not in reported.get(n, set())}
    assert not missing, f"mypy did not report (line: code) {missing}; it said:\n{output}"
    unexpected = sorted(set(reported) - set(expected))
    assert not unexpected, f"mypy reports unmarked lines {unexpected}:\n{output}"


def test_user_code_runs(capsys):
    """The typed example is real code: it runs (the GPU part only where a device is)."""
    spec = importlib.util.spec_from_file_location("numfuse_user_code", TYPING / "user_code.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main()
    assert not numfuse.is_patched()
    assert capsys.readouterr().out


def test_cuda_evaluate_hides_frame_depth(monkeypatch):
    """numfuse.cuda.evaluate's signature has no _frame_depth; names still come from the
    caller's frame (checked without a GPU: the first array lookup is intercepted)."""
    cuda_api = importlib.import_module("numfuse.cuda._api")
    import numfuse.cuda as nfc

    assert "_frame_depth" not in inspect.signature(nfc.evaluate).parameters

    class Found(Exception):
        pass

    def view(value, *args, **kwargs):
        raise Found(value)

    monkeypatch.setattr(cuda_api, "_view", view)
    monkeypatch.setattr(cuda_api, "_require", lambda name: object())
    monkeypatch.setattr(cuda_api._nvrtc, "set_nvrtc_candidates", lambda lib: None)
    callers_array = np.arange(3.0)
    with pytest.raises(Found) as found:
        nfc.evaluate("callers_array + 1")
    assert found.value.args[0] is callers_array
