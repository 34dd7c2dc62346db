#!/usr/bin/env python3
"""Side-by-side timings of numfuse.exp/log/erf against NumPy, numexpr, torch, SciPy.

Every figure is measured in this one run, on the same arrays, with the threaded
libraries (numfuse, numexpr, torch) set to the same thread count. Prints Markdown
tables: each peer cell is "time (speed-up)", where speed-up = peer time / numfuse
time (> 1 means numfuse is faster). `copy` is np.copyto(out, x), the memory bound
(one thread), `copy_mt` torch's threaded Tensor.copy_, and `numfuse/copy` is how
many np.copyto's worth of time numfuse takes.

    python benchmarks/python/compare.py              # sizes 1e3,1e6,1e8 (~ a few min)
    python benchmarks/python/compare.py --quick      # 1e3,1e5,1e6, ~20 s
    python benchmarks/python/compare.py --targets --json out.json

Dev aid: NUMFUSE_BENCH_FAKE=1 substitutes NumPy/SciPy functions for numfuse, so the
script can be exercised before the package is built (the header says FAKE).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

# --------------------------------------------------------------------------- peers


def _optional(name):
    try:
        return __import__(name, fromlist=["_"])
    except Exception:  # not installed or broken: skipped with a note
        return None


ne = _optional("numexpr")
torch = _optional("torch")
special = _optional("scipy.special")
scipy = _optional("scipy")


def _load_numfuse():
    if os.environ.get("NUMFUSE_BENCH_FAKE") == "1":
        import types

        erf = special.erf if special is not None else np.frompyfunc(__import__("math").erf, 1, 1)
        fake = types.SimpleNamespace(
            exp=np.exp, log=np.log, erf=erf, __version__="FAKE (numpy/scipy)"
        )
        fake.set_num_threads = lambda n: None
        fake.get_num_threads = lambda: 1
        return fake
    import numfuse

    return numfuse


nf = _load_numfuse()

# The case table: function -> input domain and each peer's spelling (None = n/a).
FUNCS = {
    "exp": dict(domain=(-5.0, 5.0), numpy="exp", numexpr="exp(x)", torch="exp", scipy=None),
    "log": dict(domain=(0.1, 100.0), numpy="log", numexpr="log(x)", torch="log", scipy=None),
    "erf": dict(domain=(-3.0, 3.0), numpy=None, numexpr=None, torch="erf", scipy="erf"),
}
PEERS = ["numfuse", "numpy", "numexpr", "torch", "scipy"]
INSTALLED = {"numfuse": nf, "numpy": np, "numexpr": ne, "torch": torch, "scipy": special}


def bind(peer, fn, x, o):
    """A zero-argument callable computing fn(x) [into o] with `peer`, or None if n/a."""
    spec = "" if peer == "numfuse" else FUNCS[fn][peer]
    if spec is None or INSTALLED[peer] is None:
        return None
    if peer == "numexpr":
        return lambda: ne.evaluate(spec, local_dict={"x": x}, out=o)
    if peer == "torch":
        f, tx = getattr(torch, spec), torch.from_numpy(x)
        if o is None:
            return lambda: f(tx)
        to = torch.from_numpy(o)
        return lambda: f(tx, out=to)
    f = getattr(INSTALLED[peer], fn if peer == "numfuse" else spec)  # ufuncs
    return (lambda: f(x)) if o is None else (lambda: f(x, out=o))


def set_threads(n):
    nf.set_num_threads(n)
    if ne is not None:
        ne.set_num_threads(n)
    if torch is not None:
        torch.set_num_threads(n)


def get_threads():
    got = {"numfuse": nf.get_num_threads()}
    if ne is not None:
        got["numexpr"] = ne.get_num_threads() if hasattr(ne, "get_num_threads") else "?"
    if torch is not None:
        got["torch"] = torch.get_num_threads()
    return got


# --------------------------------------------------------------------------- timing


def calibrate(f, min_time):
    """Calls per repeat so that a repeat lasts at least min_time (like timeit.autorange),
    after one warm-up call."""
    f()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        t = time.perf_counter() - t0
        if t >= min_time or number >= 1 << 20:
            return number
        number *= 2 if t * 4 >= min_time else 10


def measure_interleaved(funcs, repeats, min_time):
    """Per-call seconds (min, median) over `repeats` for each callable in `funcs` (a dict),
    the repeats taken round-robin across the callables: on a machine whose speed drifts
    (other tenants, clock changes) every contender sees the same slow and fast phases, so
    their ratios stay fair. A callable that raises gets {"error": ...} and is dropped."""
    numbers, out = {}, {}
    for name, f in funcs.items():
        try:
            numbers[name] = calibrate(f, min_time)
        except Exception as e:  # a peer lacking a dtype: note, go on
            out[name] = {"error": f"{type(e).__name__}: {e}"}
    times = {name: [] for name in numbers}
    for _ in range(repeats):
        for name, number in numbers.items():
            f = funcs[name]
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            times[name].append((time.perf_counter() - t0) / number)
    for name, ts in times.items():
        out[name] = {
            "min_s": min(ts),
            "median_s": statistics.median(ts),
            "number": numbers[name],
            "repeats": repeats,
        }
    return out


def measure(f, repeats, min_time):
    """Per-call seconds (min, median) of one callable (see measure_interleaved)."""
    return measure_interleaved({"f": f}, repeats, min_time)["f"]


def fill(x, rng, domain):
    lo, hi = domain
    rng.random(out=x, dtype=x.dtype.type)
    x *= hi - lo
    x += lo


def others_busy(interval=0.2):
    """CPU cores used by other processes (Linux /proc/stat) while we sleep; None elsewhere.
    Waits first so that our own pools' spinning threads have gone to sleep."""

    def busy():
        with open("/proc/stat") as fh:
            v = [int(t) for t in fh.readline().split()[1:9]]
        return sum(v) - v[3] - v[4]  # all but idle and iowait

    try:
        time.sleep(0.1)
        b0 = busy()
        time.sleep(interval)
        return (busy() - b0) / os.sysconf("SC_CLK_TCK") / interval
    except (OSError, ValueError):
        return None


def run_section(section, sizes, dtypes, threads, args, records):
    set_threads(threads)
    rng = np.random.default_rng(0)
    for dtype in dtypes:
        for n in sizes:
            big = n >= 10_000_000
            repeats = args.big_repeats if big else args.repeats
            x = np.empty(n, dtype)
            o = np.empty(n, dtype)
            o[...] = 0  # fault the pages in
            rec = dict(section=section, dtype=np.dtype(dtype).name, n=n, threads=threads)
            first, busy_before = len(records), others_busy()
            fill(x, rng, (0.0, 1.0))
            records.append(
                dict(
                    rec,
                    function="copy",
                    out=True,
                    peer="numpy",
                    **measure(lambda o=o, x=x: np.copyto(o, x), repeats, args.min_time),
                )
            )
            if torch is not None:  # a threaded copy, for reference
                tx, to = torch.from_numpy(x), torch.from_numpy(o)
                records.append(
                    dict(
                        rec,
                        function="copy",
                        out=True,
                        peer="torch",
                        **measure(lambda to=to, tx=tx: to.copy_(tx), repeats, args.min_time),
                    )
                )
                del tx, to
            for fn, case in FUNCS.items():
                fill(x, rng, case["domain"])
                for out in (False, True):
                    funcs = {peer: bind(peer, fn, x, o if out else None) for peer in PEERS}
                    funcs = {peer: f for peer, f in funcs.items() if f is not None}
                    # the copy as a contender too, so that roofline ratios are side by side
                    funcs["copy"] = lambda o=o, x=x: np.copyto(o, x)
                    got = measure_interleaved(funcs, repeats, args.min_time)
                    for peer in PEERS:
                        if peer not in got:
                            continue
                        m = got[peer]
                        records.append(dict(rec, function=fn, out=out, peer=peer, **m))
                        if args.verbose:
                            print(
                                f"  {section} {fn} {rec['dtype']} {n} out={out} {peer}: {m}",
                                file=sys.stderr,
                            )
                    if out:  # the copy measured beside this case, for its roofline target
                        records.append(
                            dict(rec, function="copy_beside", out=True, peer=fn, **got["copy"])
                        )
            del x, o, funcs  # funcs' callables hold x and o too
            gc.collect()
            busy = (
                max(b for b in (busy_before, others_busy()) if b is not None)
                if busy_before is not None
                else None
            )
            for r in records[first:]:
                r["others_busy_cores"] = busy


def sanity_check():
    """Warn (never fail) if numfuse disagrees with the reference on small inputs."""
    rng = np.random.default_rng(1)
    ref = {"exp": np.exp, "log": np.log, "erf": special.erf if special is not None else None}
    for fn, case in FUNCS.items():
        for dtype in (np.float32, np.float64):
            if ref[fn] is None:
                continue
            x = np.empty(1000, dtype)
            fill(x, rng, case["domain"])
            got, want = getattr(nf, fn)(x), ref[fn](x.astype(np.float64))
            err = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300)))
            if got.dtype != x.dtype or not err < (1e-5 if dtype == np.float32 else 1e-13):
                print(
                    f"WARNING: numfuse.{fn} {np.dtype(dtype).name}: dtype {got.dtype}, "
                    f"max rel err {err:.3g}",
                    file=sys.stderr,
                )


# --------------------------------------------------------------------------- output


def fmt_time(s):
    if s is None:
        return "n/a"
    if not s >= 1e-6:
        return f"{s * 1e9:.3g} ns"
    unit, scale = next(u for u in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)) if s >= u[1])
    return f"{s / scale:.3g} {unit}"


def fmt_n(n):
    e = len(str(n)) - 1
    return f"1e{e}" if n == 10**e else str(n)


def index(records, stat):
    return {
        (r["section"], r["function"], r["dtype"], r["n"], r["out"], r["peer"]): r.get(stat)
        for r in records
    }


def table(records, section, stat):
    t = index(records, stat)
    busy = {
        (r["dtype"], r["n"]): r.get("others_busy_cores") or 0.0
        for r in records
        if r["section"] == section
    }
    rows = sorted(
        {
            (r["function"], r["dtype"], r["n"], r["out"])
            for r in records
            if r["section"] == section and r["function"] not in ("copy", "copy_beside")
        },
        key=lambda k: (list(FUNCS).index(k[0]), k[1], k[2], k[3]),
    )
    lines = [
        "| function | dtype | n | out= | "
        + " | ".join(PEERS)
        + " | copy | copy_mt | numfuse/copy |",
        "|---|---|---|---|" + "---:|" * (len(PEERS) + 3),
    ]
    for fn, dtype, n, out in rows:
        mine = t.get((section, fn, dtype, n, out, "numfuse"))
        # the copy timed beside this function's cases (same slow and fast phases), else alone
        copy = t.get((section, "copy_beside", dtype, n, True, fn)) or t.get(
            (section, "copy", dtype, n, True, "numpy")
        )
        copy_mt = t.get((section, "copy", dtype, n, True, "torch"))
        cells = []
        for peer in PEERS:
            key = (section, fn, dtype, n, out, peer)
            if key not in t:
                cells.append("—" if INSTALLED[peer] is None else "n/a")
            elif t[key] is None:
                cells.append("error")
            elif peer == "numfuse" or not mine:
                cells.append(fmt_time(t[key]))
            else:
                cells.append(f"{fmt_time(t[key])} ({t[key] / mine:.2f}×)")
        ratio = f"{mine / copy:.2f}" if mine and copy else ""
        mark = f" ⚠{busy[dtype, n]:.1f}" if busy[dtype, n] > BUSY_LIMIT else ""
        lines.append(
            f"| {fn} | {dtype} | {fmt_n(n)}{mark} | {'yes' if out else 'no'} | "
            + " | ".join(cells)
            + f" | {fmt_time(copy)} | {fmt_time(copy_mt)} | {ratio} |"
        )
    if any(b > BUSY_LIMIT for b in busy.values()):
        lines.append(
            "\n⚠x: other processes kept x cores busy around these rows (measured "
            "before and after each size); threaded figures there are distorted."
        )
    return "\n".join(lines)


def k(fn, n, out, peer, dtype="float64", section="main"):
    return (section, fn, dtype, int(n), out, peer)


BUSY_LIMIT = 0.25  # cores used by other processes above which rows are marked

# (label, key a, key b, op, limit): passes when t(a)/t(b) op limit.
NF = "numfuse"
TARGETS = [
    (
        "1e8 f64 out=: exp ≤ 1.2× copy",
        k("exp", 1e8, True, NF),
        k("copy_beside", 1e8, True, "exp"),
        "<=",
        1.2,
    ),
    (
        "1e8 f64 out=: log ≤ 1.2× copy",
        k("log", 1e8, True, NF),
        k("copy_beside", 1e8, True, "log"),
        "<=",
        1.2,
    ),
    (
        "1e8 f64 out=: erf ≤ 1.5× copy",
        k("erf", 1e8, True, NF),
        k("copy_beside", 1e8, True, "erf"),
        "<=",
        1.5,
    ),
    (
        "1e8 f64: numfuse.exp(x) ≤ 0.7× np.exp(x)",
        k("exp", 1e8, False, NF),
        k("exp", 1e8, False, "numpy"),
        "<=",
        0.7,
    ),
    *[
        (
            f"1e6 f64 out=: {fn} ≥ {lim}× faster than {p}",
            k(fn, 1e6, True, p),
            k(fn, 1e6, True, NF),
            ">=",
            lim,
        )
        for fn, p, lim in [
            ("exp", "numpy", 2.5),
            ("exp", "torch", 2.5),
            ("log", "numpy", 2.5),
            ("log", "torch", 2.5),
            ("erf", "scipy", 5),
            ("erf", "torch", 5),
        ]
    ],
    (
        "1e6 f32 out=: exp ≥ 2.5× faster than numpy",
        k("exp", 1e6, True, "numpy", "float32"),
        k("exp", 1e6, True, NF, "float32"),
        ">=",
        2.5,
    ),
    *[
        (
            f"1 thread 1e5 f64 out=: {fn} ≥ {lim}× faster than {p}",
            k(fn, 1e5, True, p, section="1thread"),
            k(fn, 1e5, True, NF, section="1thread"),
            ">=",
            lim,
        )
        for fn, p, lim in [("exp", "numpy", 1.5), ("log", "numpy", 1.5), ("erf", "scipy", 4)]
    ],
    (
        "1e3 f64: numfuse.exp(x) call ≤ 1.1× np.exp(x)",
        k("exp", 1e3, False, NF),
        k("exp", 1e3, False, "numpy"),
        "<=",
        1.1,
    ),
]


def targets(records, stat):
    t = index(records, stat)
    out, lines = [], []
    for label, a, b, op, limit in TARGETS:
        ta, tb = t.get(a), t.get(b)
        if not ta or not tb:
            status, ratio = "SKIP", None
        else:
            ratio = ta / tb
            status = "PASS" if (ratio <= limit if op == "<=" else ratio >= limit) else "FAIL"
        lines.append(
            f"- **{status}** {label}"
            + (f" — measured {ratio:.2f}×" if ratio else " — not measured in this run")
        )
        out.append(dict(target=label, status=status, ratio=ratio, limit=limit, op=op))
    return "\n".join(lines), out


def header(args, threads):
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            info = fh.read()
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in info.splitlines()
            if line.startswith("model name")
        )
        flags = next(line for line in info.splitlines() if line.startswith("flags")).split()
        cpu += " (" + ", ".join(f for f in ("avx2", "fma", "avx512f") if f in flags) + ")"
    except (OSError, StopIteration):
        pass
    versions = {
        "python": platform.python_version(),
        "numfuse": getattr(nf, "__version__", "?"),
        "numpy": np.__version__,
    }
    for name, mod in (("numexpr", ne), ("torch", torch), ("scipy", scipy)):
        versions[name] = mod.__version__ if mod is not None else "not installed (skipped)"
    return dict(
        cpu=cpu,
        cores=os.cpu_count(),
        threads=threads,
        versions=versions,
        numfuse_level=nf.get_level() if hasattr(nf, "get_level") else "?",
        numfuse_arch=os.environ.get("NUMFUSE_ARCH", "unset"),
        load=" ".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?",
        stat=args.stat,
        fake=os.environ.get("NUMFUSE_BENCH_FAKE") == "1",
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default=None, help="comma list, e.g. 1e3,1e6,1e8 (default)")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--quick", action="store_true", help="sizes 1e3,1e5,1e6, few repeats (~20 s)")
    ap.add_argument(
        "--repeats", type=int, default=None, help="repeats per figure (default 7, quick 3)"
    )
    ap.add_argument("--big-repeats", type=int, default=3, help="repeats for n >= 1e7")
    ap.add_argument(
        "--min-time", type=float, default=None, help="s per repeat (default 0.05, quick 0.01)"
    )
    ap.add_argument(
        "--stat", choices=["min", "median"], default="min", help="figure shown in tables"
    )
    ap.add_argument(
        "--no-single", action="store_true", help="skip the one-thread 1e5 float64 section"
    )
    ap.add_argument(
        "--targets", action="store_true", help="print PASS/FAIL for the performance targets"
    )
    ap.add_argument("--json", metavar="FILE", help="dump every figure as JSON")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    sizes = args.sizes or ("1e3,1e5,1e6" if args.quick else "1e3,1e6,1e8")
    sizes = [int(float(s)) for s in sizes.split(",")]
    dtypes = args.dtypes.split(",")
    args.repeats = args.repeats or (3 if args.quick else 7)
    args.min_time = args.min_time or (0.01 if args.quick else 0.05)
    stat = args.stat + "_s"

    set_threads(args.threads)
    head = header(args, get_threads())
    print(
        f"# numfuse comparison{'  — FAKE numfuse (NUMFUSE_BENCH_FAKE=1)' if head['fake'] else ''}\n"
    )
    print(
        f"- CPU: {head['cpu']}, {head['cores']} logical cores; load average {head['load']}; "
        f"numfuse level {head['numfuse_level']} (NUMFUSE_ARCH {head['numfuse_arch']})"
    )
    print(
        "- threads: "
        + ", ".join(f"{k} {v}" for k, v in head["threads"].items())
        + " (numpy, scipy: 1)"
    )
    print("- versions: " + ", ".join(f"{k} {v}" for k, v in head["versions"].items()))
    print(
        f"- figure: {args.stat} of {args.repeats} repeats ({args.big_repeats} for n ≥ 1e7), "
        "per call; cell = time (peer time / numfuse time, > 1 = numfuse faster)\n",
        flush=True,
    )
    if args.threads > (os.cpu_count() or 1):
        print(f"WARNING: {args.threads} threads > {os.cpu_count()} cores\n", file=sys.stderr)
    sanity_check()

    records = []
    t0 = time.perf_counter()
    run_section("main", sizes, dtypes, args.threads, args, records)
    print(f"## {args.threads} thread(s)\n\n{table(records, 'main', stat)}\n", flush=True)
    if not args.no_single:
        run_section("1thread", [100_000], ["float64"], 1, args, records)
        set_threads(args.threads)
        print(f"## 1 thread\n\n{table(records, '1thread', stat)}\n")
    target_results = None
    if args.targets:
        text, target_results = targets(records, stat)
        print(f"## Targets ({args.stat} times)\n\n{text}\n")
    print(f"({time.perf_counter() - t0:.0f} s)")
    for peer in PEERS:
        if INSTALLED[peer] is None:
            print(f"note: {peer} not installed, column shows —")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(dict(header=head, records=records, targets=target_results), fh, indent=1)


if __name__ == "__main__":
    main()
