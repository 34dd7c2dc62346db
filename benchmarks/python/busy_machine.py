#!/usr/bin/env python3
"""A team of threads against one, on a busy machine and on a quiet one: the distribution of
call times.

A shared server, a CI runner or a laptop with a browser open has more runnable processes than
cores, and a call that a second thread makes slower is a regression that the fastest-of-N
figure hides: the worker that the OS puts aside shows up in the median and the tail. This
script makes such a machine: `--busy pinned` starts one busy-loop process per core but the
first, each pinned to its core (the caller's core is free, every other core is shared);
`--busy unpinned` starts `--per-core` busy loops per core (default 1), left to the scheduler;
`--busy quiet` starts none. Then, for each case and size, it times single calls with one
thread, with the team (`--threads`, default 2; 0: numfuse's default count) and with the
NumPy/SciPy reference, alternating call by call in one process so that all three see the
same load, the order rotating each round. `--gap` waits that many microseconds (busy, on the
calling thread) before each call: with a gap longer than the pool's idle spin the workers
are asleep when a call comes, as in a program that does other work between calls.

It prints per case the minimum, median, p90 and p99 of the call times (µs) and the team's
median and p90 over one thread's (at most 1.00 is the goal on a busy machine; below 1 on a
quiet one, and never above 1 with or without a gap), with the load average before and after.
The busy processes are stopped when the script ends.

    python benchmarks/python/busy_machine.py --busy pinned
    python benchmarks/python/busy_machine.py --busy unpinned --per-core 2 --threads 0 \
        --functions exp,logsumexp-rows,softmax-evaluate,softmax-compiled --sizes 1e6
    python benchmarks/python/busy_machine.py --busy quiet --gap 200 --sizes 1e4,1e5,1e6
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time

import numpy as np
import scipy.special

CASES = ("exp", "log", "erf", "logsumexp", "logsumexp-rows", "softmax-evaluate", "softmax-compiled")


def _spin(stop, cpu: int | None) -> None:
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x += 1


def _start_busy(mode: str, per_core: int, stop) -> list[multiprocessing.Process]:
    cpus = sorted(os.sched_getaffinity(0))
    if mode == "pinned":
        targets = list(cpus[1:])
    elif mode == "unpinned":
        targets = [None] * (per_core * len(cpus))
    else:
        targets = []
    busy = [multiprocessing.Process(target=_spin, args=(stop, cpu), daemon=True) for cpu in targets]
    for p in busy:
        p.start()
    if busy:
        time.sleep(0.5)
    return busy


def _case(numfuse, name: str, n: int):
    """(numfuse's call, the reference's call) for n elements."""
    rng = np.random.default_rng(0)
    if name in ("exp", "log", "erf"):
        low, high = {"exp": (-5, 5), "log": (0.01, 100), "erf": (-4, 4)}[name]
        x = rng.uniform(low, high, n)
        out = np.empty_like(x)
        ours = getattr(numfuse, name)
        reference = scipy.special.erf if name == "erf" else getattr(np, name)
        return lambda: ours(x, out=out), lambda: reference(x, out=out)
    if name == "logsumexp":
        x = rng.normal(size=n)
        return lambda: numfuse.logsumexp(x), lambda: scipy.special.logsumexp(x)
    if name == "logsumexp-rows":  # rows of 1000, reduced along axis 1
        table = rng.normal(size=(max(n // 1000, 1), 1000))
        return (
            lambda: numfuse.logsumexp(table, axis=1),
            lambda: scipy.special.logsumexp(table, axis=1),
        )
    if name in ("softmax-evaluate", "softmax-compiled"):
        t = rng.normal(size=n)
        text = "exp(t) / sum(exp(t))"
        if name == "softmax-evaluate":
            ours = lambda: numfuse.evaluate(text, local_dict={"t": t})  # noqa: E731
        else:
            compiled = numfuse.compile(text)
            ours = lambda: compiled(t)  # noqa: E731
        return ours, lambda: np.exp(t) / np.exp(t).sum()
    raise SystemExit(f"unknown case {name!r} (known: {', '.join(CASES)})")


def _stats(times_ns: list[int]) -> dict[str, float]:
    t = np.asarray(times_ns, dtype=np.float64) / 1e3
    return {
        "min": float(t.min()),
        "median": float(np.percentile(t, 50)),
        "p90": float(np.percentile(t, 90)),
        "p99": float(np.percentile(t, 99)),
    }


def _row(d: dict[str, float]) -> str:
    return f"{d['min']:.1f} / {d['median']:.1f} / {d['p90']:.1f} / {d['p99']:.1f}"


def _wait(gap_ns: int) -> None:
    """Busy on the calling thread for gap_ns: the program's own work between calls."""
    if gap_ns > 0:
        end = time.perf_counter_ns() + gap_ns
        while time.perf_counter_ns() < end:
            pass


def _time_case(numfuse, ours, reference, team: int | None, calls: int, gap_us: float):
    """Calls alternate one thread / the team / the reference (when given), the order rotating
    each round; each call is preceded by the gap."""
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
    gap_ns = int(gap_us * 1e3)
    for i in range(calls):
        for k in range(len(contenders)):
            key, setup, fn = contenders[(i + k) % len(contenders)]
            setup()
            _wait(gap_ns)
            t0 = clock()
            fn()
            times[key].append(clock() - t0)
    numfuse.set_num_threads(None)
    return {key: _stats(v) for key, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--busy", choices=["pinned", "unpinned", "quiet"], default="pinned")
    parser.add_argument(
        "--per-core", type=int, default=1, help="busy loops per core with --busy unpinned"
    )
    parser.add_argument("--functions", default="exp,log,erf,logsumexp", help=", ".join(CASES))
    parser.add_argument("--sizes", default="1e4,1e5,1e6", help="elements per call")
    parser.add_argument(
        "--threads", type=int, default=2, help="the team to compare with 1 (0: the default)"
    )
    parser.add_argument("--calls", type=int, default=400, help="calls per contender and case")
    parser.add_argument(
        "--gap", type=float, default=0.0, help="µs of busy waiting before each call"
    )
    parser.add_argument(
        "--no-reference", action="store_true", help="skip NumPy/SciPy (slow at 1e6 for erf)"
    )
    args = parser.parse_args()

    import numfuse

    team = None if args.threads == 0 else args.threads
    team_size = numfuse.get_num_threads() if team is None else team
    stop = multiprocessing.Event()
    load_before = os.getloadavg()[0]
    busy = _start_busy(args.busy, args.per_core, stop)
    try:
        print(
            f"{len(os.sched_getaffinity(0))} cpus, numfuse {numfuse.get_level()}, "
            f"{team_size} threads against 1, busy: {args.busy} ({len(busy)} busy-loop "
            f"processes), {args.calls} calls each, gap {args.gap:g} µs, "
            f"load {load_before:.1f} at start\n"
        )
        print(
            "| case | 1 thread min / median / p90 / p99 (µs) | "
            f"{team_size} threads min / median / p90 / p99 (µs) | "
            "team / 1 median | team / 1 p90 | NumPy/SciPy median (µs) |"
        )
        print("|---|---:|---:|---:|---:|---:|")
        for name in args.functions.split(","):
            for size in args.sizes.split(","):
                ours, reference = _case(numfuse, name, int(float(size)))
                reference = None if args.no_reference else reference
                s = _time_case(numfuse, ours, reference, team, args.calls, args.gap)
                one, together = s["one"], s["team"]
                ref = f"{s['ref']['median']:.1f}" if "ref" in s else "-"
                print(
                    f"| {name} {size} | {_row(one)} | {_row(together)} | "
                    f"{together['median'] / one['median']:.2f} | "
                    f"{together['p90'] / one['p90']:.2f} | {ref} |",
                    flush=True,
                )
    finally:
        stop.set()
        for p in busy:
            p.join(timeout=5)
    print(f"\nload {os.getloadavg()[0]:.1f} at end")


if __name__ == "__main__":
    main()
