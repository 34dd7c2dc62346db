"""numexpr's module-level names on numfuse (`import numfuse as ne`), each with its meaning:
no VML (the VML calls check their arguments and change nothing), the thread counts of
numfuse's own rule, and a version report."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import numfuse

NAMES = (
    "use_vml",
    "set_vml_num_threads",
    "set_vml_accuracy_mode",
    "get_vml_version",
    "MAX_THREADS",
    "detect_number_of_threads",
    "print_versions",
    "ncores",
    "nthreads",
    "set_num_threads",
    "get_num_threads",
    "evaluate",
    "re_evaluate",
    "validate",
    "NumExpr",
    "disassemble",
)


@pytest.mark.parametrize("name", NAMES)
def test_numexpr_name_exists(name):
    assert hasattr(numfuse, name)
    numexpr = pytest.importorskip("numexpr")
    assert hasattr(numexpr, name), f"numexpr {numexpr.__version__} has no {name}"


def test_no_vml():
    assert numfuse.use_vml is False
    assert numfuse.get_vml_version() is None
    for mode in (None, "high", "low", "fast"):
        assert numfuse.set_vml_accuracy_mode(mode) is None
    with pytest.raises(ValueError, match="mode argument must be one of"):
        numfuse.set_vml_accuracy_mode("exact")
    before = numfuse.get_num_threads()
    assert numfuse.set_vml_num_threads(1) is None
    assert numfuse.get_num_threads() == before  # VML's count is not numfuse's
    with pytest.raises(TypeError, match="must be an int"):
        numfuse.set_vml_num_threads("2")


def _start_count(env: dict) -> int:
    code = "import numfuse; print(numfuse.detect_number_of_threads())"
    clean = {
        k: v for k, v in os.environ.items() if k not in ("NUMFUSE_NUM_THREADS", "OMP_NUM_THREADS")
    }
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.split()[-1])


def test_detect_number_of_threads_follows_the_start_up_rule():
    processors = numfuse._core._processor_count()
    assert _start_count({}) == min(processors, numfuse.MAX_THREADS)
    assert _start_count({"OMP_NUM_THREADS": "3"}) == 3
    assert _start_count({"NUMFUSE_NUM_THREADS": "5", "OMP_NUM_THREADS": "3"}) == 5
    # set_num_threads changes the count in use, not the start-up count
    before = numfuse.detect_number_of_threads()
    previous = numfuse.set_num_threads(1)
    try:
        assert numfuse.detect_number_of_threads() == before
    finally:
        numfuse.set_num_threads(previous if numfuse._core._num_threads_setting() else None)


def test_print_versions(capsys):
    numfuse.print_versions()
    text = capsys.readouterr().out
    for expected in ("numfuse:", numfuse.__version__, "NumPy:", "Python:", "CPU level:"):
        assert expected in text
    assert numfuse.get_level() in text
