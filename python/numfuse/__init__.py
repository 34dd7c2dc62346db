"""numfuse: fast NumPy math.

The element-wise functions (``numfuse.exp``, ``numfuse.tanh``, ``numfuse.erfc``,
``numfuse.logaddexp``, ...: every ufunc row of the function table) are genuine ``numpy.ufunc``
objects (out=, where=, dtype=, casting=, broadcasting, __array_ufunc__) backed
by SIMD kernels chosen for the running CPU and OpenMP threads for large
arrays, accurate to at most 1 ULP in float32 and float64.

This module only re-exports. The layers, bottom to top: helpers (``_axes``,
``_frames``, ``_interop``, ``_dispatch``, ``_config``), front ends (the ufuncs
of ``_core``, ``_evaluate``, ``_reduce``), back ends (``_dask``, ``cuda``)
that the front ends reach only through ``_dispatch``. ``numfuse.cuda`` is
imported on first use.
"""

import importlib as _importlib
import os as _os
from typing import Any as _Any

from . import _config, _core, _patch, _ufuncs
from ._config import __version__, detect_number_of_cores, show_config
from ._core import (
    compiled_levels,
    get_level,
    get_num_threads,
    set_level,
    set_num_threads,
    usable_levels,
)
from ._evaluate import (
    ExpressionError,
    NumExpr,
    UnsupportedDtypeError,
    UnsupportedOperationError,
    compile,
    disassemble,
    evaluate,
    re_evaluate,
    validate,
)
from ._jit import jit
from ._numexpr_surface import (
    detect_number_of_threads,
    get_vml_version,
    print_versions,
    set_vml_accuracy_mode,
    set_vml_num_threads,
    use_vml,
)
from ._patch import is_patched, patch_numpy, patched, restore_numpy
from ._reduce import log_softmax, logsumexp, softmax
from ._ufuncs import *  # noqa: F403 (the function table's ufuncs: exp, log, ...)

# numexpr's module attributes: processors, and (via __getattr__) threads in use.
ncores = detect_number_of_cores()
# The most threads set_num_threads accepts (numexpr's name for its own cap).
MAX_THREADS = _core._max_thread_count()

_config.check_arch_request()
_config.check_threads_request()

# NUMFUSE_PATCH_NUMPY=1 (or scipy): existing NumPy code gets numfuse's loops (docs/patching.md).
_patch.patch_from_environment(_os.environ.get("NUMFUSE_PATCH_NUMPY"))


# Made on access by __getattr__ (below); declared here for type checkers.
nthreads: int


def __getattr__(name: str) -> _Any:
    if name == "nthreads":
        return get_num_threads()
    if name == "cuda":  # numfuse.cuda.*: the same functions on GPU arrays
        return _importlib.import_module(f"{__name__}.cuda")
    if name == "devices":  # the CPU, then the GPUs numfuse.cuda can use
        globals()["devices"] = _importlib.import_module(f"{__name__}.cuda").devices
        return globals()["devices"]
    raise AttributeError(f"module 'numfuse' has no attribute {name!r}")


__all__ = [
    "ExpressionError",
    "MAX_THREADS",
    "NumExpr",
    "UnsupportedDtypeError",
    "UnsupportedOperationError",
    "__version__",
    "compile",
    "compiled_levels",
    "detect_number_of_cores",
    "detect_number_of_threads",
    "devices",  # noqa: F405 (numfuse.__getattr__ makes it)
    "disassemble",
    "evaluate",
    "get_level",
    "get_num_threads",
    "get_vml_version",
    "is_patched",
    "jit",
    "log_softmax",
    "logsumexp",
    "ncores",
    "patch_numpy",
    "patched",
    "print_versions",
    "re_evaluate",
    "restore_numpy",
    "set_level",
    "set_num_threads",
    "set_vml_accuracy_mode",
    "set_vml_num_threads",
    "show_config",
    "softmax",
    "usable_levels",
    "use_vml",
    "validate",
]
__all__ += _ufuncs.__all__  # the ufuncs, generated from the table (tools/gen_function_lists.py)
