"""The machine a benchmark ran on, and its memory bandwidth measured with a plain copy."""

from __future__ import annotations

import os
import platform
import time

import numpy as np


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask), else the processor count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cpu_info() -> dict:
    info = {
        "model": None,
        "logical_cores": os.cpu_count(),
        "usable_cores": usable_cores(),
        "physical_cores": None,
        "flags": [],
    }
    text = _read("/proc/cpuinfo")
    cores = set()
    physical = core = None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "model name" and info["model"] is None:
            info["model"] = value
        elif key == "Features" and not info["flags"]:  # aarch64
            wanted = ("fp", "asimd", "asimdhp", "fphp", "sve", "sve2")
            present = set(value.split())
            info["flags"] = [flag for flag in wanted if flag in present]
        elif key == "flags" and not info["flags"]:
            wanted = (
                "sse2",
                "sse4_2",
                "avx",
                "avx2",
                "fma",
                "avx512f",
                "avx512dq",
                "avx512bw",
                "avx512vl",
                "avx512_fp16",
            )
            present = set(value.split())
            info["flags"] = [flag for flag in wanted if flag in present]
        elif key == "physical id":
            physical = value
        elif key == "core id":
            core = value
            cores.add((physical, core))
    if cores:
        info["physical_cores"] = len(cores)
    if info["model"] is None:
        info["model"] = platform.processor() or platform.machine()
    caches = {}
    base = "/sys/devices/system/cpu/cpu0/cache"
    for index in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        level = _read(f"{base}/{index}/level").strip()
        kind = _read(f"{base}/{index}/type").strip()
        size = _read(f"{base}/{index}/size").strip()
        if level and size and kind != "Instruction":
            caches[f"L{level}"] = size
    info["caches"] = caches
    return info


def memory_bytes():
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None


def busy_cores(interval: float = 0.3):
    """CPU cores kept busy by other processes while this one sleeps (Linux /proc/stat).

    Sleeps a little first so that this process's own thread pools (OpenMP workers
    spin for a while after a parallel region) have gone idle. None where /proc/stat
    is missing.
    """

    def busy_ticks():
        with open("/proc/stat") as handle:
            fields = [int(v) for v in handle.readline().split()[1:9]]
        return sum(fields) - fields[3] - fields[4]  # everything but idle and iowait

    try:
        time.sleep(0.2)
        before = busy_ticks()
        time.sleep(interval)
        return (busy_ticks() - before) / os.sysconf("SC_CLK_TCK") / interval
    except (OSError, ValueError, IndexError):
        return None


def machine_info() -> dict:
    """CPU model, cores, ISA levels, memory, OS: what the JSON and the header report."""
    import numfuse

    info = cpu_info()
    return {
        "cpu": info["model"],
        "logical_cores": info["logical_cores"],
        "physical_cores": info["physical_cores"],
        "usable_cores": info["usable_cores"],
        "cpu_flags": info["flags"],
        "caches": info["caches"],
        "memory_bytes": memory_bytes(),
        "numfuse_level": numfuse.get_level(),
        "numfuse_levels_usable": numfuse.usable_levels(),
        "numfuse_levels_compiled": numfuse.compiled_levels(),
        "NUMFUSE_ARCH": os.environ.get("NUMFUSE_ARCH"),
        "os": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def measure_bandwidth(nbytes: int = 256 << 20, repeats: int = 5) -> dict:
    """Memory bandwidth of np.copyto(dst, src) on float64 arrays of `nbytes` each.

    Bytes read + written (2 * nbytes) over the best time of `repeats` copies,
    one thread (NumPy's copy). Arrays should be well beyond the last-level
    cache (the default 256 MiB each is). The destination is written once
    before timing so that page faults are not counted.
    """
    n = max(1, nbytes // 8)
    src = np.ones(n)
    dst = np.zeros(n)
    np.copyto(dst, src)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - start)
    moved = 2 * n * 8
    return {
        "bytes_per_s": moved / best,
        "array_bytes": n * 8,
        "best_s": best,
        "repeats": repeats,
        "method": "np.copyto(dst, src), float64, 1 thread, best time",
    }
