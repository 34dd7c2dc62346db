"""Per-call cost of small evaluations (1e3 float64): numfuse against NumPy and numexpr.

What a user calling exp/log "a great many times" on modest arrays feels is the fixed cost
per call. Each case is timed as the minimum over many short batches of calls, all cases
interleaved batch by batch in one process, so that the ratios hold on a busy machine.
Prints a Markdown table and a PASS/FAIL line per target of issue 17:

- ``evaluate("2*a + 3*b")`` no slower than NumPy's ``2*a + 3*b`` (a row with Python-float
  locals, ``s*x + t``, is shown beside it);
- ``evaluate("exp(x)")`` at most 1.5x ``np.exp(x)``;
- a compiled ``exp(x)`` at most 1.1x ``np.exp(x)``, called positionally or with keywords;
- a compiled softmax ``exp(x)/sum(exp(x))`` faster than NumPy's two passes.

    python benchmarks/python/compare_percall.py [--n 1000] [--rounds 80] [--threads 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import numfuse

try:
    import numexpr
except ImportError:  # pragma: no cover - optional peer
    numexpr = None


def best_times(cases: dict, rounds: int, batch: int) -> dict:
    best = dict.fromkeys(cases, float("inf"))
    for f in cases.values():
        f()  # warm-up: plan caches, first allocations
    for _ in range(rounds):
        for name, f in cases.items():
            start = time.perf_counter()
            for _ in range(batch):
                f()
            best[name] = min(best[name], (time.perf_counter() - start) / batch)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=80)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    numfuse.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(args.n), rng.standard_normal(args.n)
    x = a.copy()
    s, t = 1.5, -0.25  # Python floats, as scale/offset locals usually are
    # evaluate's local_dict (lambdas have no such locals)
    names = {"a": a, "b": b, "x": x, "s": s, "t": t}
    exp_compiled = numfuse.compile("exp(x)")
    softmax_compiled = numfuse.compile("exp(x)/sum(exp(x))")

    def numpy_softmax():
        e = np.exp(x)
        return e / e.sum()

    # (row, contender) -> callable; rows are what the user computes.
    cases = {
        ("2*a + 3*b", "NumPy"): lambda: 2 * a + 3 * b,
        ("2*a + 3*b", "numfuse.evaluate"): lambda: numfuse.evaluate("2*a + 3*b", names),
        ("s*x + t (Python floats s, t)", "NumPy"): lambda: s * x + t,
        ("s*x + t (Python floats s, t)", "numfuse.evaluate"): lambda: numfuse.evaluate(
            "s*x + t", names
        ),
        ("exp(x)", "NumPy"): lambda: np.exp(x),
        ("exp(x)", "numfuse.evaluate"): lambda: numfuse.evaluate("exp(x)", names),
        ("exp(x)", "compiled c(x)"): lambda: exp_compiled(x),
        ("exp(x)", "compiled c(x=x)"): lambda: exp_compiled(x=x),
        ("exp(x)", "numfuse.exp"): lambda: numfuse.exp(x),
        ("softmax exp(x)/sum(exp(x))", "NumPy"): numpy_softmax,
        ("softmax exp(x)/sum(exp(x))", "compiled c(x)"): lambda: softmax_compiled(x),
        ("softmax exp(x)/sum(exp(x))", "numfuse.evaluate"): lambda: numfuse.evaluate(
            "exp(x)/sum(exp(x))", names
        ),
    }
    if numexpr is not None:
        numexpr.set_num_threads(args.threads)
        cases[("2*a + 3*b", "numexpr")] = lambda: numexpr.evaluate("2*a + 3*b", names)
        cases[("s*x + t (Python floats s, t)", "numexpr")] = lambda: numexpr.evaluate(
            "s*x + t", names
        )
        cases[("exp(x)", "numexpr")] = lambda: numexpr.evaluate("exp(x)", names)
        cases[("softmax exp(x)/sum(exp(x))", "numexpr")] = lambda: (
            numexpr.evaluate("exp(x)", names) / numexpr.evaluate("sum(exp(x))", names)
        )
    t = best_times(cases, args.rounds, args.batch)

    print(f"n = {args.n} float64, {args.threads} threads, level {numfuse.get_level()}; ")
    print(f"minimum over {args.rounds} batches of {args.batch} calls\n")
    print("| computation | contender | per call | vs NumPy |")
    print("|---|---|---:|---:|")
    for (row, who), seconds in t.items():
        ratio = seconds / t[(row, "NumPy")]
        print(f"| `{row}` | {who} | {seconds * 1e6:.2f} us | {ratio:.2f}x |")

    def verdict(ok, text):
        return f"{'PASS' if ok else 'FAIL'}: {text}"

    r = {key: t[key] / t[(key[0], "NumPy")] for key in t}
    print()
    print(verdict(r[("2*a + 3*b", "numfuse.evaluate")] <= 1.0, "evaluate 2*a+3*b <= NumPy"))
    print(verdict(r[("exp(x)", "numfuse.evaluate")] <= 1.5, "evaluate exp(x) <= 1.5x np.exp"))
    worst = max(r[("exp(x)", "compiled c(x)")], r[("exp(x)", "compiled c(x=x)")])
    print(verdict(worst <= 1.1, f"compiled exp(x) <= 1.1x np.exp (worst {worst:.2f}x)"))
    print(
        verdict(
            r[("softmax exp(x)/sum(exp(x))", "compiled c(x)")] < 1.0,
            "compiled softmax faster than NumPy's two passes",
        )
    )


if __name__ == "__main__":
    main()
