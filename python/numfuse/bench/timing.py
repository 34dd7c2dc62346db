"""Timing and memory of one callable: the figures of a Benchee report.

A *sample* is the mean time of `number` back-to-back calls, where `number`
is calibrated so that a sample lasts at least `sample_time` (so that
perf_counter's own cost, ~50 ns, stays below ~0.1 % of it). Samples are
taken until `budget` seconds have passed and at least `min_samples` exist;
average, deviation, median and 99th percentile are over the samples. The median is
the statistic every comparison uses (a stray descheduled sample moves the mean, not
the median), and ips is its inverse.
The garbage collector is off while timing (as in timeit).

Each sample also records the process's CPU time (all its threads), so that a call
that mostly *waited* can be told from a slow one: `cpu_share` is the median of CPU
time / wall time over the samples. A single-threaded call has a share near 1, a call
on k busy threads near k; a share far below 1 means the call's wall time was spent
waiting for a core (its OpenMP team's threads not scheduled on a machine busy with
other work: torch, for example, then takes ~28 ms per call of any size), which says
something about the machine, not the library (report.WAITED marks it).

Memory per call is the peak of bytes allocated during one call as seen by
tracemalloc: Python objects and NumPy arrays (NumPy reports its data
allocations to tracemalloc). Memory a library takes from its own allocator
(torch tensors, C++ scratch buffers inside numexpr or numfuse) is invisible
to it, which is why torch shows n/a.
"""

from __future__ import annotations

import gc
import math
import time
import tracemalloc

import numpy as np


def calibrate(fn, sample_time: float) -> int:
    """Calls per sample so that one sample lasts at least sample_time (after a warm-up)."""
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= sample_time or number >= 1 << 22:
            return number
        # Aim a little past the target; never grow by more than 100x at once.
        grow = sample_time * 1.2 / elapsed if elapsed > 0 else 100.0
        number = max(number + 1, int(number * min(grow, 100.0)))


def sample(
    fn, budget: float, sample_time: float = 2e-4, min_samples: int = 3, max_samples: int = 100_000
) -> dict:
    """Warm up, calibrate, then time `fn`; returns the statistics (seconds per call)."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        fn()  # warm-up: page faults, thread pools waking, caches, lazy compilation
        number = calibrate(fn, sample_time)
        samples = []
        shares = []
        clock, cpu = time.perf_counter, time.process_time
        deadline = clock() + budget
        while len(samples) < max_samples:
            c0 = cpu()
            t0 = clock()
            for _ in range(number):
                fn()
            t1 = clock()
            c1 = cpu()
            samples.append((t1 - t0) / number)
            if t1 > t0:
                shares.append((c1 - c0) / (t1 - t0))
            if t1 >= deadline and len(samples) >= min_samples:
                break
        wall = time.perf_counter() - start
    finally:
        if gc_was_enabled:
            gc.enable()
    return summarize(samples, number, wall, shares)


def summarize(samples, number: int, wall: float = math.nan, cpu_shares=()) -> dict:
    values = np.asarray(samples, dtype=np.float64)
    mean = float(values.mean())
    stddev = float(values.std(ddof=1)) if values.size > 1 else 0.0
    median = float(np.median(values))
    return {
        "ips": 1.0 / median if median > 0 else math.inf,
        "mean_s": mean,
        "stddev_s": stddev,
        "deviation_pct": 100.0 * stddev / mean if mean > 0 else 0.0,
        "median_s": median,
        "p99_s": float(np.percentile(values, 99)),
        "min_s": float(values.min()),
        "max_s": float(values.max()),
        "samples": int(values.size),
        "calls_per_sample": int(number),
        "wall_s": wall,
        "cpu_share": float(np.median(cpu_shares)) if len(cpu_shares) else math.nan,
    }


def peak_memory(fn):
    """(peak bytes allocated during one call of fn, its result), via tracemalloc."""
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.clear_traces()
        base, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return max(0, peak - base), result
