#!/usr/bin/env python3
"""numfuse's default team against one thread on a busy machine (and on a quiet one).

A shared server, a CI runner or a laptop with a browser open has more runnable processes
than cores. This script makes such a machine: it starts `--busy-per-core` busy-loop
processes per core (default 2), then times each case with numfuse's default thread count
and with one thread, interleaved in batches so that both see the same load, and prints the
median time per call and their ratio (default team / one thread: at most ~1.3 means the
team holds up; NumPy's time is printed for reference). `--busy-per-core 0` gives the quiet
machine's figures. The busy processes are stopped when the script ends.

    python benchmarks/python/compare_busy.py                 # busy machine
    python benchmarks/python/compare_busy.py --busy-per-core 0
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import statistics
import time

import numpy as np


def _spin(stop) -> None:
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x += 1


def _median_ms(fn, calls: int) -> float:
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def _cases(numfuse):
    rng = np.random.default_rng(0)
    x = rng.uniform(-5, 5, 1_000_000)
    out = np.empty_like(x)
    table = rng.normal(size=(1000, 1000))
    t = rng.normal(size=1_000_000)
    softmax = numfuse.compile("exp(t) / sum(exp(t))")
    return [
        ("exp 1e6 float64", lambda: numfuse.exp(x, out=out), lambda: np.exp(x, out=out)),
        (
            "logsumexp (1000,1000) axis=1",
            lambda: numfuse.logsumexp(table, axis=1),
            lambda: np.log(np.exp(table - table.max(1, keepdims=True)).sum(1)),
        ),
        (
            "evaluate softmax 1e6",
            lambda: numfuse.evaluate("exp(t) / sum(exp(t))", local_dict={"t": t}),
            lambda: np.exp(t) / np.exp(t).sum(),
        ),
        ("compiled softmax 1e6", lambda: softmax(t), lambda: np.exp(t) / np.exp(t).sum()),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--busy-per-core", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved batches per case")
    parser.add_argument("--calls", type=int, default=40, help="calls per batch")
    args = parser.parse_args()

    import numfuse

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    team = numfuse.get_num_threads()
    stop = multiprocessing.Event()
    busy = [
        multiprocessing.Process(target=_spin, args=(stop,), daemon=True)
        for _ in range(args.busy_per_core * cores)
    ]
    for p in busy:
        p.start()
    time.sleep(0.5 if busy else 0.0)
    try:
        print(
            f"{platform.processor() or platform.machine()}, {cores} cores, numfuse "
            f"{numfuse.get_level()}, default team {team} threads, "
            f"{len(busy)} busy-loop processes ({args.busy_per_core} per core)\n"
        )
        print("| case | default team | 1 thread | team / 1 thread | NumPy |")
        print("|---|---:|---:|---:|---:|")
        for name, ours, numpy_version in _cases(numfuse):
            timings = {"team": [], "one": [], "numpy": []}
            for _ in range(args.rounds):
                numfuse.set_num_threads(None)
                timings["team"].append(_median_ms(ours, args.calls))
                numfuse.set_num_threads(1)
                timings["one"].append(_median_ms(ours, args.calls))
                timings["numpy"].append(_median_ms(numpy_version, args.calls))
            numfuse.set_num_threads(None)
            med = {k: statistics.median(v) for k, v in timings.items()}
            print(
                f"| {name} | {med['team']:.3f} ms | {med['one']:.3f} ms | "
                f"{med['team'] / med['one']:.2f}x | {med['numpy']:.3f} ms |",
                flush=True,
            )
    finally:
        stop.set()
        for p in busy:
            p.join(timeout=5)


if __name__ == "__main__":
    main()
