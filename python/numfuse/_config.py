"""How this numfuse was built and what it uses at run time: show_config and its probes.

Nothing here runs on import except reading the environment; the probes
(OpenMP runtime, CUDA extension) run when show_config() is called.
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import os
import platform
import sys
import warnings
from typing import Any

from . import _core
from ._core import compiled_levels, get_level, get_num_threads, usable_levels

__version__ = "0.1.0"


def detect_number_of_cores() -> int:
    """Processors available to this process."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def check_arch_request() -> None:
    """Tell the user when NUMFUSE_ARCH asked for a level that is not in use."""
    requested = os.environ.get("NUMFUSE_ARCH")
    if not requested:
        return
    wanted = {"avx2": "avx2_fma"}.get(requested, requested)
    if wanted != get_level():
        warnings.warn(
            f"NUMFUSE_ARCH={requested!r} is not usable here (usable: "
            f"{', '.join(usable_levels())}); using {get_level()!r}",
            RuntimeWarning,
            stacklevel=3,
        )


def check_threads_request() -> None:
    """Tell the user when NUMFUSE_NUM_THREADS holds something that is not a thread count."""
    found = _core._num_threads_environment()
    if found is None or found[1]:
        return
    warnings.warn(
        f"NUMFUSE_NUM_THREADS={found[0]!r} is not a thread count numfuse can use (an integer "
        f"from 1 to {_core._max_thread_count()}); using the automatic count "
        f"({get_num_threads()} threads here)",
        RuntimeWarning,
        stacklevel=3,
    )


# _OPENMP macro values (yyyymm) and the OpenMP specification they name.
_OPENMP_SPECS = {
    200505: "2.5",
    200805: "3.0",
    201107: "3.1",
    201307: "4.0",
    201511: "4.5",
    201811: "5.0",
    202011: "5.1",
    202111: "5.2",
    202411: "6.0",
}


_OPENMP_VENDORS = {"libgomp": "GNU libgomp", "libiomp": "Intel OpenMP", "libomp": "LLVM libomp"}


def _loaded_openmp_runtimes() -> list:
    """Paths of OpenMP runtimes mapped into this process (/proc/self/maps; Linux only)."""
    found = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rsplit(None, 1)[-1] if "/" in line else ""
                base = os.path.basename(path)
                if base.startswith(tuple(_OPENMP_VENDORS)) and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def _openmp_runtime_of_core():
    """The shared library that provides OpenMP to numfuse._core, found by asking the
    dynamic linker where _core's own omp_get_max_threads resolves (dlsym + dladdr)."""

    class _DlInfo(ctypes.Structure):
        _fields_ = [
            ("dli_fname", ctypes.c_char_p),
            ("dli_fbase", ctypes.c_void_p),
            ("dli_sname", ctypes.c_char_p),
            ("dli_saddr", ctypes.c_void_p),
        ]

    try:
        core_library = ctypes.CDLL(_core.__file__)  # already loaded: the same handle
        symbol = ctypes.cast(core_library.omp_get_max_threads, ctypes.c_void_p)
        info = _DlInfo()
        dladdr = ctypes.CDLL(None).dladdr
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        if dladdr(symbol, ctypes.byref(info)) and info.dli_fname:
            return os.fsdecode(info.dli_fname)
    except (AttributeError, OSError):  # no OpenMP symbol, no dladdr (non-glibc)
        pass
    return None


def _openmp_config() -> dict:
    macro = _core._openmp_version() if hasattr(_core, "_openmp_version") else None
    config = {"enabled": bool(_core._has_openmp())}
    if not config["enabled"]:
        config["note"] = "built without OpenMP: every call runs on the calling thread"
    if macro:
        config["spec"] = f"{_OPENMP_SPECS.get(macro, '?')} (_OPENMP {macro})"
    if config["enabled"]:
        path = _openmp_runtime_of_core()
        if path:
            path = os.path.realpath(path)
            base = os.path.basename(path)
            vendor = next((v for k, v in _OPENMP_VENDORS.items() if base.startswith(k)), "?")
            config["runtime"] = f"{vendor} ({base})"
        else:
            config["runtime"] = "unknown"
        config["runtime_path"] = path
    loaded = _loaded_openmp_runtimes()
    if loaded:
        config["loaded_runtimes"] = loaded  # other libraries (torch, ...) may bring their own
    return config


def _cuda_config() -> dict:
    """Whether the optional numfuse._cuda extension is built and which devices it sees."""
    if importlib.util.find_spec(f"{__package__}._cuda") is None:
        return {"built": False, "note": "not built (no CUDA compiler at build time)"}
    try:
        _cuda = importlib.import_module(f"{__package__}._cuda")
    except ImportError as error:  # e.g. the CUDA runtime library is missing
        return {"built": True, "usable": False, "note": f"cannot load: {error}"}
    plain = (str, int, float, bool, type(None), dict, list, tuple)

    def as_plain(value):
        return value if isinstance(value, plain) else repr(value)

    config = {"built": True}
    for name in ("runtime_version", "driver_version", "architectures"):
        try:
            config[name] = as_plain(getattr(_cuda, name)())
        except Exception:  # absent, or no driver: leave it out
            pass
    try:
        # The extension's own view first; else the package's devices() listing (which
        # tests may replace), less the CPU entry.
        list_devices = getattr(_cuda, "devices", None) or getattr(
            sys.modules[__package__], "devices", None
        )
        if hasattr(_cuda, "device_count"):
            found = [
                _cuda.device_info(i) if hasattr(_cuda, "device_info") else i
                for i in range(_cuda.device_count())
            ]
        elif list_devices is not None:
            found = [
                d for d in list_devices() if not (isinstance(d, dict) and d.get("kind") == "cpu")
            ]
        else:
            config.update(usable=True, devices=None, note="the extension lists no devices")
            return config
    except Exception as error:  # no driver, no device: report, never fail
        config.update(
            usable=False,
            devices=[],
            note=f"listing devices failed: {type(error).__name__}: {error}",
        )
        return config
    config.update(usable=bool(found), devices=[as_plain(d) for d in found])
    if not found:
        reason = ""
        if hasattr(_cuda, "device_count_error"):
            try:
                reason = str(_cuda.device_count_error())
            except Exception:
                reason = ""
        config["note"] = f"no usable device{': ' + reason if reason else ''}"
    return config


def show_config(print_config: bool = True) -> dict[str, Any]:
    """Print and return how this numfuse was built and what it uses now.

    Keys: version, compiler, machine (the CPU architecture, e.g. x86_64 or
    aarch64), cpu_features (the SIMD features of this CPU that bear on the
    levels), levels_compiled / levels_usable / level_in_use (instruction sets),
    threads (what a large call from this thread would use), thread_setting
    ("automatic" or the explicit count), processors, openmp (enabled, spec
    version, the runtime library _core uses, every OpenMP runtime loaded in the
    process), cuda (built?, devices). ``print_config=False`` only
    returns the dict.
    """
    setting = _core._num_threads_setting() if hasattr(_core, "_num_threads_setting") else None
    config = {
        "version": __version__,
        "compiler": _core._compiler(),
        "machine": platform.machine(),
        "cpu_features": _core._cpu_features(),
        "levels_compiled": compiled_levels(),
        "levels_usable": usable_levels(),
        "level_in_use": get_level(),
        "threads": get_num_threads(),
        "thread_setting": "automatic" if setting is None else setting,
        "processors": _core._processor_count(),
        "openmp": _openmp_config(),
        "cuda": _cuda_config(),
    }
    if print_config:
        for key, value in config.items():
            if isinstance(value, dict):
                print(f"{key:>16}:")
                for inner, item in value.items():
                    if isinstance(item, list):
                        item = ", ".join(str(v) for v in item) or "none"
                    print(f"{'':>18}{inner}: {item}")
            else:
                if isinstance(value, list):
                    value = ", ".join(value)
                print(f"{key:>16}: {value}")
    return config
