#!/usr/bin/env python3
"""Two threads against one on a machine whose other cores are busy: the distribution of call times.

A call that a second thread makes slower is a regression that the fastest-of-N figure hides:
the worker that the OS puts aside shows up in the median and the tail. This script starts
busy-loop processes (`--busy pinned`: one per core but the first, each pinned to its core, so
the caller's core is free and every other core is shared; `--busy unpinned`: one per core,
left to the scheduler; `--busy quiet`: none), then, for each function and size, times single
calls with 1 thread, with `--threads` threads and NumPy/SciPy, alternating call by call in
one process so that all three see the same load. It prints per case the minimum, median, p90
and p99 of the call times and the team's median and p90 over one thread's (at most 1.00 is
the goal on a busy machine; below 1 on a quiet one), with the load average before and after.

    python benchmarks/python/busy_machine.py --busy pinned
    python benchmarks/python/busy_machine.py --busy quiet --sizes 1e5,1e6
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import pathlib
import sys
import time

import numpy as np
import scipy.special

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from compare_busy import _spin  # noqa: E402


def _pinned_spin(stop, cpu: int | None) -> None:
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    _spin(stop)


def _start_busy(mode: str, stop) -> list[multiprocessing.Process]:
    cpus = sorted(os.sched_getaffinity(0))
    if mode == "pinned":
        targets = list(cpus[1:])
    elif mode == "unpinned":
        targets = [None for _ in cpus]
    else:
        targets = []
    busy = [
        multiprocessing.Process(target=_pinned_spin, args=(stop, cpu), daemon=True)
        for cpu in targets
    ]
    for p in busy:
        p.start()
    if busy:
        time.sleep(0.5)
    return busy


def _cases(numfuse, name: str, n: int):
    rng = np.random.default_rng(0)
    if name == "exp":
        x = rng.uniform(-5, 5, n)
        out = np.empty_like(x)
        return lambda: numfuse.exp(x, out=out), lambda: np.exp(x, out=out)
    if name == "log":
        x = rng.uniform(0.01, 100, n)
        out = np.empty_like(x)
        return lambda: numfuse.log(x, out=out), lambda: np.log(x, out=out)
    if name == "erf":
        x = rng.uniform(-4, 4, n)
        out = np.empty_like(x)
        return lambda: numfuse.erf(x, out=out), lambda: scipy.special.erf(x, out=out)
    if name == "logsumexp":
        x = rng.normal(size=n)
        return lambda: numfuse.logsumexp(x), lambda: scipy.special.logsumexp(x)
    raise SystemExit(f"unknown function {name!r}")


def _stats(times_ns: list[int]) -> dict[str, float]:
    t = np.sort(np.asarray(times_ns, dtype=np.float64)) / 1e3
    return {
        "min": t[0],
        "median": float(np.percentile(t, 50)),
        "p90": float(np.percentile(t, 90)),
        "p99": float(np.percentile(t, 99)),
    }


def _row(d: dict[str, float]) -> str:
    return f"{d['min']:.1f} / {d['median']:.1f} / {d['p90']:.1f} / {d['p99']:.1f}"


def _time_case(numfuse, ours, reference, team: int, calls: int):
    """Calls alternate one thread / the team / the reference (when given), the order rotating
    each round."""
    contenders = [
        ("one", lambda: numfuse.set_num_threads(1), ours),
        ("team", lambda: numfuse.set_num_threads(team), ours),
    ]
    if reference is not None:
        contenders.append(("ref", lambda: None, reference))
    times = {key: [] for key, _, _ in contenders}
    for _, setup, fn in contenders:  # warm-up: pools made, pages touched
        setup()
        for _ in range(5):
            fn()
    clock = time.perf_counter_ns
    for i in range(calls):
        for k in range(len(contenders)):
            key, setup, fn = contenders[(i + k) % len(contenders)]
            setup()
            t0 = clock()
            fn()
            times[key].append(clock() - t0)
    numfuse.set_num_threads(None)
    return {key: _stats(v) for key, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--busy", choices=["pinned", "unpinned", "quiet"], default="pinned")
    parser.add_argument("--functions", default="exp,log,erf,logsumexp")
    parser.add_argument("--sizes", default="1e4,1e5,1e6")
    parser.add_argument("--threads", type=int, default=2, help="the team to compare with 1")
    parser.add_argument("--calls", type=int, default=400, help="calls per contender and case")
    parser.add_argument(
        "--no-reference", action="store_true", help="skip NumPy/SciPy (slow at 1e6 for erf)"
    )
    args = parser.parse_args()

    import numfuse

    stop = multiprocessing.Event()
    load_before = os.getloadavg()[0]
    busy = _start_busy(args.busy, stop)
    try:
        print(
            f"{len(os.sched_getaffinity(0))} cpus, numfuse {numfuse.get_level()}, "
            f"{args.threads} threads against 1, busy: {args.busy} ({len(busy)} busy-loop "
            f"processes), {args.calls} calls each, load {load_before:.1f} at start\n"
        )
        print(
            "| case | 1 thread min / median / p90 / p99 (us) | "
            f"{args.threads} threads min / median / p90 / p99 (us) | "
            "team / 1 median | team / 1 p90 | NumPy/SciPy median (us) |"
        )
        print("|---|---:|---:|---:|---:|---:|")
        for name in args.functions.split(","):
            for size in args.sizes.split(","):
                n = int(float(size))
                ours, reference = _cases(numfuse, name, n)
                reference = None if args.no_reference else reference
                s = _time_case(numfuse, ours, reference, args.threads, args.calls)
                one, team = s["one"], s["team"]
                ref = f"{s['ref']['median']:.1f}" if "ref" in s else "-"
                print(
                    f"| {name} {size} | {_row(one)} | {_row(team)} | "
                    f"{team['median'] / one['median']:.2f} | {team['p90'] / one['p90']:.2f} | "
                    f"{ref} |",
                    flush=True,
                )
    finally:
        stop.set()
        for p in busy:
            p.join(timeout=5)
    print(f"\nload {os.getloadavg()[0]:.1f} at end")


if __name__ == "__main__":
    main()
