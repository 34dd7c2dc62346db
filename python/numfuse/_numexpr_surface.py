"""numexpr's module-level names that have no other home in numfuse, each with an honest meaning.

`import numfuse as ne` should run code written for numexpr unchanged. numexpr can delegate
its transcendental functions to Intel's VML; numfuse has no VML (its own SIMD kernels are
within 1 ULP at every level), so the VML names report that and change nothing, after
checking their arguments as numexpr does.
"""

from __future__ import annotations

import platform
import sys

import numpy as np

from . import _core
from ._config import __version__

# numexpr: whether VML is in use. numfuse never uses VML.
use_vml = False

_VML_ACCURACY_MODES = (None, "high", "low", "fast")


def set_vml_num_threads(nthreads: int) -> None:
    """numexpr's VML thread count. numfuse has no VML: nothing to set (the thread count of
    every numfuse loop is `set_num_threads`)."""
    if isinstance(nthreads, bool) or not isinstance(nthreads, int):
        raise TypeError(
            f"set_vml_num_threads: nthreads must be an int, got {type(nthreads).__name__}"
        )


def set_vml_accuracy_mode(mode: str | None) -> None:
    """numexpr's VML accuracy mode (None, 'high', 'low', 'fast'). numfuse has no VML and
    one accuracy, at most 1 ULP from the exact result (docs/accuracy.md): returns None, as
    numexpr does without VML. Any other mode is a ValueError, as numexpr raises where it
    has VML (without, it accepts anything)."""
    if mode not in _VML_ACCURACY_MODES:
        raise ValueError("mode argument must be one of: None, 'high', 'low', 'fast'")
    return None


def get_vml_version() -> None:
    """numexpr's VML version string; None without VML, as numexpr returns then."""
    return None


def detect_number_of_threads() -> int:
    """The threads a large call from the main thread uses when `set_num_threads` has not
    been called: NUMFUSE_NUM_THREADS where it was accepted at start-up, else OMP_NUM_THREADS,
    else the processor count; at most `MAX_THREADS`."""
    return _core._start_thread_count()


def print_versions() -> None:
    """numexpr's version report: numfuse, NumPy, Python, the platform, the CPU level and the
    thread counts. `show_config()` prints everything numfuse knows."""
    rows = [
        ("numfuse", __version__),
        ("NumPy", np.__version__),
        ("Python", sys.version.split()[0]),
        ("Platform", f"{platform.system()}-{platform.machine()}"),
        ("CPU level", _core.get_level()),
        ("VML available?", "False (numfuse's own SIMD kernels)"),
        (
            "Number of threads used by default",
            f"{detect_number_of_threads()} (out of {_core._processor_count()} processors)",
        ),
        ("Maximum number of threads", str(_core._max_thread_count())),
    ]
    width = max(len(name) for name, _ in rows)
    print("-" * 78)
    for name, value in rows:
        print(f"{name + ':':<{width + 1}} {value}")
    print("-" * 78)
