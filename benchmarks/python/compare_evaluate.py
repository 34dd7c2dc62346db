"""numfuse.evaluate against numexpr, NumPy and torch (the issue-4 targets), then against
the compilers a user would pick instead: JAX (``jax.jit`` on the CPU, XLA) and Numba
(``@vectorize(target="parallel")``, ``@njit(parallel=True)``).

Prints a Markdown table of median times (all measured in this one run) and
the ratios each target is about, with PASS/FAIL, and a second table for JAX/Numba
(skipped with a note when they are not installed: ``pip install "jax[cpu]" numba``).
Every library is limited to the same thread count (2 by default; JAX's CPU client
sizes its own pool from the machine's cores). The JAX/Numba spellings are numfuse-bench's
(``numfuse.bench.compilers``; ``numfuse-bench --peers jax,numba`` runs them on every
function). Timings on a shared machine are noisy: each case takes the median of several
repeats.

    python benchmarks/python/compare_evaluate.py [--threads 2] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import textwrap
import time

import numpy as np

import numfuse

try:
    import numexpr
except ImportError:  # pragma: no cover - optional peer
    numexpr = None
try:
    import torch
except ImportError:  # pragma: no cover - optional peer
    torch = None


def median_time(fn, repeats, inner=1):
    fn()  # warm-up (caches, thread pools, page faults)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)


def fmt(seconds):
    if seconds is None:
        return "n/a"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.3f} s"


def peak_extra_bytes(n):
    """Peak RSS growth of evaluate('exp(x) / sum(exp(x))') beyond its result (subprocess).

    The large call runs once, in a fresh process, after a small warm-up call (thread team,
    plan cache) and a reset of the peak resident set (VmHWM, via /proc/self/clear_refs):
    a warm-up at full size would already hold any temporaries in the high-water mark and
    hide them. Returns the worse of the allocating call and the out= call.
    """
    code = textwrap.dedent(
        f"""
        import numpy as np, numfuse

        def peak():
            with open("/proc/self/status") as status:
                return next(int(line.split()[1]) * 1024 for line in status
                            if line.startswith("VmHWM:"))

        def reset_peak():
            with open("/proc/self/clear_refs", "w") as refs:
                refs.write("5")

        ex = 'exp(x) / sum(exp(x))'
        x = np.random.default_rng(0).standard_normal({n})
        out = np.zeros_like(x)  # the result, touched up front
        numfuse.evaluate(ex, {{"x": x[:1000].copy()}})  # warm: threads, plan cache
        reset_peak(); before = peak()
        numfuse.evaluate(ex, {{"x": x}}, out=out)
        with_out = peak() - before
        reset_peak(); before = peak()
        r = numfuse.evaluate(ex, {{"x": x}})  # allocates only its result
        fresh = peak() - before - r.nbytes
        print(with_out, fresh)
        """
    )
    env = dict(os.environ)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    with_out, fresh = (int(v) for v in result.stdout.split())
    return max(with_out, fresh)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    args = parser.parse_args()

    threads = args.threads
    numfuse.set_num_threads(threads)
    if numexpr is not None:
        numexpr.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    repeats = 5 if args.quick else 9
    rows = []  # (case, numfuse, peer name, peer time, target text, ratio, passed)

    def target(case, ours, peer, theirs, want, kind):
        if theirs is None:
            rows.append((case, ours, peer, None, want, None, None))
            return
        if kind == "speedup":  # peer time / our time >= want
            ratio = theirs / ours
            ok = ratio >= want
            text = f"≥ {want}× faster"
        else:  # our time / peer time <= want
            ratio = ours / theirs
            ok = ratio <= want
            text = f"≤ {want}× its time"
        rows.append((case, ours, peer, theirs, text, ratio, ok))

    # ---- small arrays: call overhead
    x = rng.standard_normal(1000)
    inner = 2000
    # Names are passed as local_dict to both (the lambdas' frames do not hold them).
    env = {"x": x}
    ours = median_time(lambda: numfuse.evaluate("exp(x)", env), repeats, inner)
    theirs = (
        median_time(lambda: numexpr.evaluate("exp(x)", env), repeats, inner) if numexpr else None
    )
    target("1e3 `evaluate('exp(x)')`", ours, "numexpr", theirs, 0.3, "fraction")
    compiled = numfuse.compile("exp(x)")
    ours = median_time(lambda: compiled(x), repeats, inner)
    theirs = median_time(lambda: np.exp(x), repeats, inner)
    target("1e3 compiled `exp(x)` call", ours, "np.exp", theirs, 1.5, "fraction")

    # ---- 1e7 element-wise
    n = 2_000_000 if args.quick else 10_000_000
    a, b, c = (rng.standard_normal(n) for _ in range(3))
    out = np.empty(n)
    env = {"a": a, "b": b, "c": c}
    for ex, np_fn, want_ne, want_np in [
        ("2*a + 3*b", lambda: 2 * a + 3 * b, 1.3, 3.0),
        ("exp(a) + tan(b) - sinh(c)", lambda: np.exp(a) + np.tan(b) - np.sinh(c), 2.0, 3.0),
    ]:
        ours = median_time(lambda ex=ex: numfuse.evaluate(ex, env, out=out), repeats)
        theirs = (
            median_time(lambda ex=ex: numexpr.evaluate(ex, env, out=out), repeats)
            if numexpr
            else None
        )
        target(f"{n:.0e} f64 `{ex}`", ours, "numexpr", theirs, want_ne, "speedup")
        target(
            f"{n:.0e} f64 `{ex}`", ours, "NumPy", median_time(np_fn, repeats), want_np, "speedup"
        )

    # ---- logsumexp over axis 0 of a square matrix
    side = 4000 if args.quick else 10000
    m = rng.standard_normal((side, side))
    lse_repeats = 3 if args.quick else 5
    env = {"m": m}
    ours = median_time(lambda: numfuse.evaluate("log(sum(exp(m), axis=0))", env), lse_repeats)

    def numexpr_recipe():
        e = numexpr.evaluate("exp(m)", env)
        s = numexpr.evaluate("sum(e, axis=0)", {"e": e})
        return numexpr.evaluate("log(s)", {"s": s})

    theirs = median_time(numexpr_recipe, lse_repeats) if numexpr else None
    case = f"{side}×{side} `log(sum(exp(x), axis=0))`"
    target(case, ours, "numexpr 3 calls", theirs, 5.0, "speedup")
    if torch is not None:
        t = torch.from_numpy(m)
        theirs = median_time(lambda: torch.logsumexp(t, dim=0), lse_repeats)
    else:
        theirs = None
    target(case, ours, "torch.logsumexp", theirs, 2.0, "speedup")
    del m

    # ---- memory
    mem_n = 2_000_000 if args.quick else 10_000_000
    extra = peak_extra_bytes(mem_n)
    mem_ok = extra <= 2 * 1024 * 1024

    print(
        f"numfuse {numfuse.__version__}, level {numfuse.get_level()}, {threads} threads; "
        f"numexpr {getattr(numexpr, '__version__', 'missing')}, NumPy {np.__version__}, "
        f"torch {getattr(torch, '__version__', 'missing')}\n"
    )
    print("| case | numfuse | peer | peer time | target | measured | result |")
    print("|---|---|---|---|---|---|---|")
    for case, ours, peer, theirs, want, ratio, ok in rows:
        measured = "n/a" if ratio is None else f"{ratio:.2f}×"
        verdict = "n/a" if ok is None else ("PASS" if ok else "FAIL")
        print(
            f"| {case} | {fmt(ours)} | {peer} | {fmt(theirs)} | {want} | {measured} | {verdict} |"
        )
    print(
        f"| {mem_n:.0e} f64 `exp(x) / sum(exp(x))` memory | {extra / 2**20:.2f} MiB beyond result "
        f"| — | — | ≤ 2 MiB | {extra / 2**20:.2f} MiB | {'PASS' if mem_ok else 'FAIL'} |"
    )
    print()
    compare_compilers(threads, rng, repeats, args.quick)


def compare_compilers(threads, rng, repeats, quick):
    """numfuse against JAX and Numba, spelled as numfuse-bench spells them
    (numfuse/bench/compilers.py): inputs are NumPy arrays and results come back as
    NumPy arrays, as a NumPy user calls them. Numba gets `threads` threads; JAX runs on
    XLA's CPU pool, sized from the machine's cores. A compiler that is not installed
    is skipped with a note."""
    from numfuse.bench import compilers, peers

    loaded = peers.load(["jax", "numba"])
    restore_threads = peers.set_threads(loaded, threads)
    notes = [f"{name} skipped: {p.note}" for name, p in loaded.items() if not p.available]
    x3 = rng.standard_normal(1000)
    x6 = rng.standard_normal(1_000_000)
    soft = rng.standard_normal((200 if quick else 1000, 1000, 5)).astype(np.float32)
    big = rng.standard_normal(2_000_000 if quick else 10_000_000)
    # (case, numfuse's call, the compilers' function name, its argument, calls per sample)
    cases = [
        ("1e3 f64 `exp(x)`", lambda: numfuse.evaluate("exp(x)", {"x": x3}), "exp", x3, 2000),
        ("1e6 f64 `exp(x)`", lambda: numfuse.evaluate("exp(x)", {"x": x6}), "exp", x6, 1),
        (
            f"{soft.shape} f32 softmax, last axis",
            lambda: numfuse.softmax(soft, axis=-1),
            "softmax_last_axis",
            soft,
            1,
        ),
        (f"{big.size:.0e} f64 logsumexp", lambda: numfuse.logsumexp(big), "logsumexp", big, 1),
    ]
    contenders = {}
    if loaded["jax"].available:
        contenders["JAX jit"] = lambda name, x: compilers.jax_call(loaded["jax"].module, name, x)
    if loaded["numba"].available:
        contenders["Numba parallel"] = lambda name, x: compilers.numba_call(
            loaded["numba"].module, name, x
        )
    try:
        print(
            "numfuse against the compilers (results as NumPy arrays; speed-up = peer / numfuse)\n"
        )
        if notes:
            print("; ".join(notes) + "\n")
        print("| case | numfuse | " + " | ".join(contenders) + " |")
        print("|---|---:|" + "---:|" * len(contenders))
        for case, ours_fn, name, x, inner in cases:
            ours = median_time(ours_fn, repeats, inner)
            cells = []
            for bind in contenders.values():
                theirs = median_time(bind(name, x), repeats, inner)
                cells.append(f"{fmt(theirs)} ({theirs / ours:.2f}×)")
            print(f"| {case} | {fmt(ours)} | " + " | ".join(cells) + " |")
    finally:
        restore_threads()


if __name__ == "__main__":
    main()
