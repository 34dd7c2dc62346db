"""numfuse: fast NumPy math.

``numfuse.exp``, ``numfuse.log`` and ``numfuse.erf`` are genuine ``numpy.ufunc``
objects (out=, where=, dtype=, casting=, broadcasting, __array_ufunc__) backed
by SIMD kernels chosen for the running CPU and OpenMP threads for large
arrays, accurate to at most 1 ULP in float32 and float64.
"""

from __future__ import annotations

import os as _os
import warnings as _warnings

from . import _core
from ._core import (
    compiled_levels,
    erf,
    exp,
    get_level,
    get_num_threads,
    log,
    set_level,
    set_num_threads,
    usable_levels,
)

from ._expr import (
    NumExpr,
    compile,
    detect_number_of_cores,
    disassemble,
    evaluate,
    re_evaluate,
    validate,
)
from ._reduce import log_softmax, logsumexp, softmax

__version__ = "0.1.0"

# numexpr's module attributes: processors, and (via __getattr__) threads in use.
ncores = detect_number_of_cores()


def __getattr__(name):
    if name == "nthreads":
        return get_num_threads()
    raise AttributeError(f"module 'numfuse' has no attribute {name!r}")


__all__ = [
    "NumExpr",
    "__version__",
    "compile",
    "compiled_levels",
    "detect_number_of_cores",
    "disassemble",
    "erf",
    "evaluate",
    "exp",
    "get_level",
    "get_num_threads",
    "log",
    "log_softmax",
    "logsumexp",
    "ncores",
    "re_evaluate",
    "set_level",
    "set_num_threads",
    "show_config",
    "softmax",
    "usable_levels",
    "validate",
]


def _check_arch_request() -> None:
    """Tell the user when NUMFUSE_ARCH asked for a level that is not in use."""
    requested = _os.environ.get("NUMFUSE_ARCH")
    if not requested:
        return
    wanted = {"avx2": "avx2_fma"}.get(requested, requested)
    if wanted != get_level():
        _warnings.warn(
            f"NUMFUSE_ARCH={requested!r} is not usable here (usable: "
            f"{', '.join(usable_levels())}); using {get_level()!r}",
            RuntimeWarning,
            stacklevel=3,
        )


_check_arch_request()


def show_config() -> dict:
    """Print and return how this numfuse was built and what it uses now."""
    config = {
        "version": __version__,
        "compiler": _core._compiler(),
        "levels_compiled": compiled_levels(),
        "levels_usable": usable_levels(),
        "level_in_use": get_level(),
        "threads": get_num_threads(),
        "processors": _core._processor_count(),
        "openmp": _core._has_openmp(),
    }
    for key, value in config.items():
        print(f"{key:>16}: {value}")
    return config
