"""Loading the optional numfuse._cuda extension; status, availability, devices.

Importing numfuse.cuda never fails because of CUDA: when the extension is
missing (built without nvcc) or cannot load, ``available()`` is False,
``status()`` says why, ``devices()`` lists the CPU only, and the GPU functions
raise RuntimeError with that reason.
"""

from __future__ import annotations

import platform
from typing import Any

from .. import _core

_cuda = None
_import_error: str | None = None
try:  # never let the optional extension break `import numfuse`
    from .. import _cuda  # type: ignore[attr-defined, no-redef]
except Exception as error:  # ImportError, OSError (a broken .so), anything else
    _cuda = None
    _import_error = f"{type(error).__name__}: {error}"
    if isinstance(error, ImportError) and "cannot import name '_cuda'" in str(error):
        _import_error = "not built: no CUDA toolkit at build time, or NUMFUSE_CUDA=OFF"


def status() -> str:
    """Why the GPU path is or is not usable, in one line."""
    if _cuda is None:
        return f"numfuse._cuda is not available ({_import_error})"
    count = _cuda.device_count()
    if count == 0:
        reason = _cuda.device_count_error() or "no CUDA device"
        return (
            f"numfuse._cuda is built (architectures {_cuda.architectures()}) but unusable: {reason}"
        )
    return f"numfuse._cuda: {count} CUDA device(s), architectures {_cuda.architectures()}"


def available() -> bool:
    """True when numfuse._cuda is built and at least one CUDA device is usable."""
    return _cuda is not None and _cuda.device_count() > 0


def devices() -> list[dict[str, Any]]:
    """The devices numfuse can compute on: the CPU first, then each CUDA device.

    CPU: ``{"kind": "cpu", "name", "level" (instruction set in use), "features" (its SIMD
    features that bear on the levels), "threads"}``.
    CUDA: ``{"kind": "cuda", "index", "name", "compute_capability", "total_memory"
    (bytes), "multiprocessors"}``.
    """
    listed = [
        {
            "kind": "cpu",
            "name": platform.processor() or platform.machine(),
            "level": _core.get_level(),
            "features": _core._cpu_features(),
            "threads": _core.get_num_threads(),
        }
    ]
    if _cuda is not None:
        for index in range(_cuda.device_count()):
            info = dict(_cuda.device_info(index))
            info["kind"] = "cuda"
            listed.append(info)
    return listed


def _require(fn: str):
    if _cuda is None:
        raise RuntimeError(f"numfuse.cuda.{fn}: {status()}")
    return _cuda


_device_seen = False  # a device once usable stays so: skip the runtime query on every call


def _require_device(fn: str):
    """The extension, when a CUDA device is usable; RuntimeError saying why not otherwise."""
    global _device_seen
    lib = _require(fn)
    if not _device_seen:
        if lib.device_count() == 0:
            raise RuntimeError(f"numfuse.cuda.{fn}: no usable CUDA device ({status()})")
        _device_seen = True
    return lib
