"""numfuse on dask arrays against dask's own NumPy-backed operations, on a
dask.distributed LocalCluster of worker processes (issue 7's targets).

The input (--n float64 values in --chunks chunks, standard normal) is
generated inside the workers with dask's random generator and persisted
there, so neither contender ships data from the client or times its
generation. The two contenders of a row run alternately, --repeats times
each, after one warm-up run each; the table reports the minimum (on a shared
machine the least disturbed run) and the median.

* exp: ``numfuse.exp(x)`` vs ``da.exp(x)``, each persisted on the workers
  (results stay there and are released after each run).
* logsumexp over all elements: ``numfuse.logsumexp(x)`` vs
  ``da.log(da.exp(x).sum())`` (the target's formula; it overflows for
  inputs above ~709) and the stable two-pass ``m + da.log(da.exp(x - m).sum())``
  with ``m = x.max()``.
* fused element-wise (no target): ``numfuse.evaluate("exp(x) * 2 + sin(x)")``
  vs ``da.exp(x) * 2 + da.sin(x)`` (dask fuses the ops into one task per
  chunk, but NumPy makes a temporary per op).

"Passes over the data" counts, from the low-level graph, how many tasks read
each persisted input chunk (1: the chunk is read once).

    python benchmarks/python/compare_dask.py [--n 1e8] [--chunks 10] [--workers 2]
        [--threads-per-worker 1] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import dask
import dask.array as da
from distributed import Client, LocalCluster, get_task_stream, wait

import numfuse


def one_run(client, run) -> tuple[float, float]:
    """Wall seconds of run() and the worker compute seconds it caused (task
    stream: time inside task functions, summed over tasks). run() returns a
    clean-up callable, called outside the timed region."""
    with get_task_stream(client) as stream:
        start = time.perf_counter()
        cleanup = run()
        wall = time.perf_counter() - start
    cleanup()
    compute = sum(
        part["stop"] - part["start"]
        for task in stream.data
        for part in task["startstops"]
        if part["action"] == "compute"
    )
    return wall, compute


def timed_pair(client, ours, theirs, repeats: int):
    """Both contenders, alternating run by run (the machine is shared: load
    drifts over seconds, and alternating exposes both to the same drift),
    after one warm-up run each (imports on the workers, first-touch page
    faults). Returns (min, median, least compute) for each."""
    for run in (ours, theirs):
        run()()
    samples = {"ours": [], "theirs": []}
    for _ in range(repeats):
        samples["ours"].append(one_run(client, ours))
        samples["theirs"].append(one_run(client, theirs))
    return tuple(
        (min(w for w, _ in runs), statistics.median(w for w, _ in runs), min(c for _, c in runs))
        for runs in (samples["ours"], samples["theirs"])
    )


def reads_per_input_chunk(collection, x) -> int:
    """The most tasks of `collection`'s graph (before fusion) that take one chunk
    of x as an argument: 1 means each chunk of the data is read once."""
    graph = dict(collection.__dask_graph__())
    input_keys = set(dask.core.flatten(x.__dask_keys__()))
    readers = dict.fromkeys(input_keys, 0)
    for key in graph:
        if key in input_keys:
            continue
        for dependency in dask.core.get_dependencies(graph, key):
            if dependency in readers:
                readers[dependency] += 1
    return max(readers.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e8)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads-per-worker", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n = int(args.n)

    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=args.threads_per_worker,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        client.wait_for_workers(args.workers)
        x = da.random.default_rng(7).standard_normal(n, chunks=-(-n // args.chunks))
        x = client.persist(x)
        wait(x)

        def forget(keys):
            """Block until the scheduler has dropped `keys` (dask names are
            deterministic: a result still held would make the next run free)."""

            def held(dask_scheduler, keys=keys):
                return sum(key in dask_scheduler.tasks for key in keys)

            while client.run_on_scheduler(held):
                time.sleep(0.01)

        def persist_and_release(make):
            def run():
                result = client.persist(make())
                wait(result)
                keys = list(dask.core.flatten(result.__dask_keys__()))

                def cleanup():
                    nonlocal result
                    del result
                    forget(keys)

                return cleanup

            return run

        def compute(make):
            def run():
                make().compute()
                return lambda: None

            return run

        def numfuse_threads():
            return numfuse.get_num_threads(), numfuse._core._peak_team_size()

        threads_in_task = client.submit(numfuse_threads, pure=False).result()

        cases = [
            (
                "exp",
                "numfuse.exp(x)",
                persist_and_release(lambda: numfuse.exp(x)),
                "da.exp(x)",
                persist_and_release(lambda: da.exp(x)),
                1.5,
            ),
            (
                "logsumexp (all elements)",
                "numfuse.logsumexp(x)",
                compute(lambda: numfuse.logsumexp(x)),
                "da.log(da.exp(x).sum())",
                compute(lambda: da.log(da.exp(x).sum())),
                3.0,
            ),
        ]

        def stable():
            m = x.max()
            return m + da.log(da.exp(x - m).sum())

        cases.append(
            (
                "logsumexp (all elements)",
                "numfuse.logsumexp(x)",
                compute(lambda: numfuse.logsumexp(x)),
                "stable: m + da.log(da.exp(x - m).sum())",
                compute(stable),
                None,
            )
        )

        cases.append(
            (
                "fused element-wise",
                "numfuse.evaluate('exp(x) * 2 + sin(x)')",
                persist_and_release(lambda: numfuse.evaluate("exp(x) * 2 + sin(x)", {"x": x})),
                "da.exp(x) * 2 + da.sin(x)",
                persist_and_release(lambda: da.exp(x) * 2 + da.sin(x)),
                None,
            )
        )

        # correctness next to the timings
        ours = numfuse.logsumexp(x).compute()
        theirs = da.log(da.exp(x).sum()).compute()
        passes = {
            "numfuse.logsumexp(x)": reads_per_input_chunk(numfuse.logsumexp(x), x),
            "da.log(da.exp(x).sum())": reads_per_input_chunk(da.log(da.exp(x).sum()), x),
            "stable: m + da.log(da.exp(x - m).sum())": reads_per_input_chunk(stable(), x),
            "numfuse.exp(x)": reads_per_input_chunk(numfuse.exp(x), x),
            "da.exp(x)": reads_per_input_chunk(da.exp(x), x),
            "numfuse.evaluate('exp(x) * 2 + sin(x)')": reads_per_input_chunk(
                numfuse.evaluate("exp(x) * 2 + sin(x)", {"x": x}), x
            ),
            "da.exp(x) * 2 + da.sin(x)": reads_per_input_chunk(da.exp(x) * 2 + da.sin(x), x),
        }

        print(
            f"{n:.0e} float64 values in {args.chunks} chunks, {args.workers} worker processes x "
            f"{args.threads_per_worker} thread(s); numfuse threads per task: "
            f"{threads_in_task[0]} (peak team {threads_in_task[1]}); "
            f"repeats {args.repeats} (+1 warm-up)"
        )
        print(
            f"logsumexp: numfuse {ours!r}, dask {theirs!r}, relative difference "
            f"{abs(ours - theirs) / abs(theirs):.1e}"
        )
        print()
        print(
            "| case | numfuse | min s | median s | dask | min s | median s | reads/chunk "
            "(numfuse, dask) | speed-up (min) | target | result |"
        )
        print("|---|---|---:|---:|---|---:|---:|---|---:|---|---|")
        compute_rows = []
        for case, ours_name, ours_run, theirs_name, theirs_run, target in cases:
            (ours_min, ours_median, ours_compute), (theirs_min, theirs_median, theirs_compute) = (
                timed_pair(client, ours_run, theirs_run, args.repeats)
            )
            ratio = theirs_min / ours_min
            verdict = "—" if target is None else ("PASS" if ratio >= target else "FAIL")
            target_text = "—" if target is None else f"≥ {target:.1f}×"
            print(
                f"| {case} | `{ours_name}` | {ours_min:.3f} | {ours_median:.3f} | "
                f"`{theirs_name}` | {theirs_min:.3f} | {theirs_median:.3f} | "
                f"{passes[ours_name]}, {passes[theirs_name]} | {ratio:.2f}× | {target_text} | "
                f"{verdict} |"
            )
            compute_rows.append((case, ours_name, ours_compute, theirs_name, theirs_compute))
        latency = [one_run(client, compute(lambda: x[:1].sum()))[0] for _ in range(args.repeats)]
        latency_min, latency_median = min(latency), statistics.median(latency)
        print()
        print(
            f"Round trip of a one-element graph (x[:1].sum().compute()): min {latency_min:.3f} s, "
            f"median {latency_median:.3f} s: the fixed cost inside every wall time above."
        )
        print()
        print(
            "Time inside task functions on the workers, summed over all tasks of one run "
            "(least of the repeats), per input chunk:"
        )
        print()
        print("| case | numfuse | ms per chunk | dask | ms per chunk | ratio |")
        print("|---|---|---:|---|---:|---:|")
        for case, ours_name, ours_compute, theirs_name, theirs_compute in compute_rows:
            print(
                f"| {case} | `{ours_name}` | {ours_compute / args.chunks * 1e3:.1f} | "
                f"`{theirs_name}` | {theirs_compute / args.chunks * 1e3:.1f} | "
                f"{theirs_compute / ours_compute:.2f}× |"
            )


if __name__ == "__main__":
    main()
