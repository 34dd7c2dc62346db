"""Running a benchmark: every (function, dtype, size) case against every peer.

Each peer is timed in a block of its own per case (warm-up, calibration,
samples), not interleaved call by call: numfuse and torch each bring an
OpenMP runtime whose idle workers spin for a while after a parallel region,
and alternating calls would time each library against the other's spinning
threads. The result is one JSON-ready dict holding every figure.
"""

from __future__ import annotations

import contextlib
import datetime
import math
import os
import sys
import time

import numpy as np

from . import cases as _cases
from . import machine as _machine
from . import peers as _peers
from . import timing as _timing

SCHEMA = "numfuse-bench/1"
FULL_SIZES = (10**3, 10**4, 10**5, 10**6, 10**7, 10**8)
QUICK_SIZES = (10**3, 10**5)
DTYPES = ("float32", "float64")
QUICK_DTYPES = ("float64",)  # quick: one summary row per function and size (one screen)
FULL_BUDGET = 0.5  # seconds of samples per peer and case
QUICK_BUDGET = 0.01
FULL_BANDWIDTH_BYTES = 256 << 20
QUICK_BANDWIDTH_BYTES = 64 << 20
# Peers whose memory tracemalloc cannot see: torch's allocator, XLA's buffers, Numba's NRT.
OWN_ALLOCATORS = ("torch", "jax", "numba")


def parse_sizes(text) -> list:
    """'1e3,1e5,100' or an iterable of numbers -> [1000, 100000, 100]."""
    items = text.split(",") if isinstance(text, str) else list(text)
    sizes = []
    for item in items:
        if isinstance(item, str):
            item = item.strip()
            if not item:
                continue
        try:
            value = float(item)
        except (TypeError, ValueError):
            raise ValueError(f"size {item!r} is not a number (use e.g. 1e3,1e6)") from None
        if not math.isfinite(value) or value < 1 or value != int(value):
            raise ValueError(f"size {item!r} is not a positive whole number")
        sizes.append(int(value))
    if not sizes:
        raise ValueError("no sizes given")
    return sizes


def parse_dtypes(text) -> list:
    items = text.split(",") if isinstance(text, str) else list(text)
    dtypes = []
    for item in items:
        name = np.dtype(str(item).strip()).name if str(item).strip() else None
        if name is None:
            continue
        if name not in DTYPES:
            raise ValueError(f"dtype {item!r} is not benchmarked; choose from {', '.join(DTYPES)}")
        dtypes.append(name)
    if not dtypes:
        raise ValueError("no dtypes given")
    return dtypes


def _as_array(value):
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        value = value.detach().numpy()
    return np.asarray(value)


def agreement(reference, result, dtype, max_elements: int = 1_000_000) -> dict:
    """How far a peer's result is from numfuse's, relative to the largest |value|
    (on an evenly strided subset of at most max_elements, to spare memory at 1e8)."""
    ref, got = _as_array(reference), _as_array(result)
    if ref.shape != got.shape:
        return {
            "agrees": False,
            "max_rel_diff": None,
            "note": f"shape {got.shape} differs from numfuse's {ref.shape}",
        }
    if ref.size == 0:
        return {"agrees": True, "max_rel_diff": 0.0}
    step = max(1, ref.size // max_elements)
    ref = ref.reshape(-1)[::step].astype(np.float64)
    got = got.reshape(-1)[::step].astype(np.float64)
    scale = max(float(np.max(np.abs(ref))), np.finfo(np.float64).tiny)
    diff = float(np.max(np.abs(got - ref))) / scale
    tolerance = 1e-4 if np.dtype(dtype) == np.float32 else 1e-9
    return {"agrees": bool(diff <= tolerance), "max_rel_diff": diff}


def _available_memory():
    for line in _machine._read("/proc/meminfo").splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return None


class _ProgressBar:
    """rich's progress bar (tqdm's if rich is missing; nothing if neither is installed)."""

    def __init__(self, total: int, enabled: bool):
        self._rich = self._tqdm = None
        if not enabled:
            return
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._rich = Progress(
                TextColumn("{task.description:<44}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._rich.start()
            self._task = self._rich.add_task("numfuse-bench", total=total)
        except ImportError:
            try:
                from tqdm import tqdm

                self._tqdm = tqdm(total=total, file=sys.stderr, leave=False)
            except ImportError:
                pass

    def describe(self, text: str) -> None:
        if self._rich is not None:
            self._rich.update(self._task, description=text)
        elif self._tqdm is not None:
            self._tqdm.set_description(text)

    def advance(self) -> None:
        if self._rich is not None:
            self._rich.advance(self._task)
        elif self._tqdm is not None:
            self._tqdm.update(1)

    def print(self, text: str) -> None:
        """Print a report above the bar when both share a terminal, else plainly to stdout."""
        shared_terminal = sys.stdout.isatty() and sys.stderr.isatty()
        if self._rich is not None and shared_terminal:
            self._rich.console.print(text, markup=False, highlight=False, soft_wrap=True)
        elif self._tqdm is not None and shared_terminal:
            self._tqdm.write(text)
        else:
            print(text, flush=True)

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()
        elif self._tqdm is not None:
            self._tqdm.close()


def run_case(
    function,
    n: int,
    dtype: str,
    peers: dict,
    budget: float,
    sample_time: float,
    bandwidth: float,
    progress=None,
) -> dict:
    """Time one (function, size, dtype) case against every peer; returns its record."""
    inputs = function.inputs(n, dtype)
    moved = function.bytes_moved(n, dtype)
    case = _case_record(function, n, dtype, moved, list(function.notes))
    case["results"] = {}
    reference = None
    for name, peer in peers.items():
        if progress is not None:
            progress.describe(f"{function.name} {dtype} {n:.0e} {name}")
        text, binder = function.spellings.get(name, (f"{name} has no spelling", None))
        entry = {"peer": name, "code": text if binder is not None else None}
        if not peer.available:
            entry.update(status="skipped", note=f"{name} {peer.note}")
        elif binder is None:
            entry.update(status="n/a", note=text)
        else:
            try:
                call = binder(peer.module, inputs)
                entry.update(status="ok", **_timing.sample(call, budget, sample_time))
                if name in OWN_ALLOCATORS:
                    memory, result = None, call()
                    entry["memory_note"] = f"{name} allocates outside tracemalloc"
                else:
                    memory, result = _timing.peak_memory(call)
                entry["memory_bytes"] = memory
                entry["gb_per_s"] = moved / entry["median_s"] / 1e9
                entry["roofline"] = moved / entry["median_s"] / bandwidth
                if name == "numfuse":
                    reference = result
                elif reference is not None:
                    entry["check"] = agreement(reference, result, dtype)
                del result, call
            except _cases.Unavailable as lacking:
                entry.update(status="n/a", note=str(lacking))
            except Exception as error:  # a peer lacking a dtype or a feature: note, go on
                entry.update(status="error", note=f"{type(error).__name__}: {error}")
        case["results"][name] = entry
        if progress is not None:
            progress.advance()
    _compare(case)
    del inputs
    return case


def _compare(case: dict) -> None:
    """Ratios measured in this case: vs numfuse, vs NumPy, and the fastest peer, all of
    median times (the one statistic of every comparison: robust against a stray
    descheduled sample, which can move a mean several-fold at small sizes)."""
    timed = {name: r for name, r in case["results"].items() if r["status"] == "ok"}
    mine = timed.get("numfuse")
    base = timed.get("numpy")
    for r in timed.values():  # > 1: numfuse is faster by that factor
        if mine is not None:
            r["numfuse_speedup"] = r["median_s"] / mine["median_s"]
        if base is not None:
            r["speedup_vs_numpy"] = base["median_s"] / r["median_s"]
    case["fastest"] = min(timed, key=lambda k: timed[k]["median_s"]) if timed else None


def run(
    functions=("all",),
    sizes=None,
    dtypes=None,
    peers=None,
    threads=None,
    *,
    quick: bool = False,
    budget=None,
    sample_time: float = 2e-4,
    bandwidth=None,
    expressions=(),
    progress: bool = True,
    on_case=None,
    command=None,
) -> dict:
    """Benchmark numfuse against the installed peers; returns every figure as a dict.

    functions: names or groups (``exp``, ``log``, ``erf``, ``logsumexp``,
    ``softmax``, the evaluate expressions ``2*a+3*b``, ``exp(a)+tan(b)-sinh(c)``,
    ``log(sum(exp(x),axis=0))``; groups ``ufuncs``, ``reductions``, ``evaluate``,
    ``all``); expressions: extra numfuse.evaluate strings (compared with numexpr).
    sizes: element counts (default 1e3..1e8, quick 1e3 and 1e5). dtypes: float32 and
    float64 (quick: float64). peers: a subset
    of numpy, numexpr, torch, scipy, jax, numba (default all; missing ones are
    skipped with a note). threads: for numfuse, numexpr, torch and Numba (default:
    all usable cores; JAX runs on XLA's own pool, see peers.py).
    budget: seconds of samples per peer and case. bandwidth: bytes/s to use for
    the roofline column instead of measuring it. on_case: called with each case's
    record, the whole document so far and a print function that writes above the
    progress bar, as each case completes. command: how the run was started (JSON).
    """
    started = time.perf_counter()
    chosen = _cases.resolve(functions)
    chosen += [_cases.custom_expression(ex) for ex in expressions]
    if not chosen:
        raise ValueError("no functions to benchmark")
    sizes = parse_sizes(sizes if sizes is not None else (QUICK_SIZES if quick else FULL_SIZES))
    dtypes = parse_dtypes(dtypes if dtypes is not None else (QUICK_DTYPES if quick else DTYPES))
    budget = budget if budget is not None else (QUICK_BUDGET if quick else FULL_BUDGET)
    loaded = _peers.load(peers)
    threads = threads if threads is not None else _machine.usable_cores()
    with _threads_set(loaded, threads):
        if bandwidth is None:
            measured = _machine.measure_bandwidth(
                QUICK_BANDWIDTH_BYTES if quick else FULL_BANDWIDTH_BYTES
            )
        else:
            measured = {"bytes_per_s": float(bandwidth), "method": "given by the caller"}

        busy_before = _machine.busy_cores()
        doc = {
            "schema": SCHEMA,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": command or "numfuse.bench.run(...)",
            "options": {
                "functions": [f.name for f in chosen],
                "sizes": sizes,
                "dtypes": dtypes,
                "quick": quick,
                "budget_s": budget,
                "sample_time_s": sample_time,
            },
            "machine": _machine.machine_info(),
            "bandwidth": measured,
            "versions": _peers.library_versions(loaded),
            "peers": {name: peer.describe() for name, peer in loaded.items()},
            "threads": {
                "requested": threads,
                **_peers.thread_counts(loaded),
                "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
            },
            "busy_cores": {"before": busy_before, "after": None},
            "cases": [],
        }
        total = len(chosen) * len(sizes) * len(dtypes) * len(loaded)
        bar = _ProgressBar(total, progress)
        try:
            for function in chosen:
                for dtype in dtypes:
                    for n in sizes:
                        need = _estimate_bytes(function, n, dtype)
                        free = _available_memory()
                        if free is not None and need > 0.8 * free:
                            case = _skipped_case(
                                function,
                                n,
                                dtype,
                                loaded,
                                f"needs ~{need / 2**30:.1f} GiB, {free / 2**30:.1f} GiB available",
                            )
                            for _ in loaded:
                                bar.advance()
                        else:
                            case = run_case(
                                function,
                                n,
                                dtype,
                                loaded,
                                budget,
                                sample_time,
                                measured["bytes_per_s"],
                                bar,
                            )
                        doc["cases"].append(case)
                        if on_case is not None:
                            on_case(case, doc, bar.print)
        finally:
            bar.close()
        doc["busy_cores"]["after"] = _machine.busy_cores()
        doc["duration_s"] = time.perf_counter() - started
        return doc


@contextlib.contextmanager
def _threads_set(loaded: dict, threads: int):
    """The peers' thread counts set to `threads` while the block runs, restored after."""
    restore = _peers.set_threads(loaded, threads)
    try:
        yield
    finally:
        restore()


def _estimate_bytes(function, n: int, dtype) -> int:
    """Inputs plus a generous allowance for results and peers' temporaries."""
    itemsize = np.dtype(dtype).itemsize
    return (len(function.variables) + 4) * n * itemsize


def _case_record(function, n: int, dtype: str, bytes_moved: int, notes: list) -> dict:
    """The fields every case record starts with, timed or skipped."""
    shape = function.shape(n)
    return {
        "function": function.name,
        "kind": function.kind,
        "dtype": dtype,
        "n": n,
        "shape": list(shape),
        "elements": int(np.prod(shape)),
        "bytes_moved": bytes_moved,
        "notes": notes,
    }


def _skipped_case(function, n, dtype, loaded, reason) -> dict:
    case = _case_record(function, n, dtype, 0, [f"skipped: {reason}"])
    case["fastest"] = None
    case["results"] = {name: {"peer": name, "status": "skipped", "note": reason} for name in loaded}
    return case
