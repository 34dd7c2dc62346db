"""The `numfuse-bench` command (also `python -m numfuse.bench`)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import textwrap

from . import cases as _cases
from . import peers as _peers
from . import report as _report
from . import runner as _runner

# The run times below are measured (docs/benchmarks.md says where; keep the two in step:
# tests/test_bench_cli.py compares them).
EXAMPLES = """\
examples:
  numfuse-bench --quick                       # ~15 s, one screen: float64 at 1e3 and 1e5
  numfuse-bench --json bench.json --plot bench.png    # the full run, 1e3..1e8 (~1-1.5 h)
  numfuse-bench --functions exp,evaluate --sizes 1e6 --dtypes float64 --threads 1
  numfuse-bench --peers numpy,torch --expr 'sqrt(a)*b + 1'
  numfuse-bench --peers jax,numba --functions exp,softmax   # pip install numfuse[bench-compilers]
"""


def epilog() -> str:
    """The examples, then every benchmark and group by name (from the case table)."""
    names = " ".join(
        f"'{name}'" if "(" in name or "*" in name else name for name in _cases.FUNCTIONS
    )
    listed = textwrap.fill(
        names, width=92, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False
    )
    groups = "; ".join(f"{group} ({len(keys)})" for group, keys in _cases.GROUPS.items())
    return (
        f"{EXAMPLES}\nbenchmarks ({len(_cases.FUNCTIONS)}; --list shows each library's "
        f"spelling):\n{listed}\ngroups: {groups}; all\n"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="numfuse-bench",
        description="Benchmark numfuse against NumPy, numexpr, torch, SciPy, JAX and Numba "
        "(whichever are installed): Benchee-style reports, JSON, plots.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="float64 at sizes 1e3 and 1e5, 0.01 s of samples per library and case, and "
        "only the summary printed (one screen; every figure with --json)",
    )
    parser.add_argument(
        "--functions", default="all", help="comma list of functions or groups (default: all)"
    )
    parser.add_argument(
        "--expr",
        action="append",
        default=[],
        metavar="EX",
        help="also benchmark numfuse.evaluate(EX) against numexpr (repeatable)",
    )
    parser.add_argument(
        "--sizes",
        default=None,
        help="comma list of element counts (default 1e3,1e4,...,1e8; quick 1e3,1e5)",
    )
    parser.add_argument(
        "--dtypes", default=None, help="comma list (default float32,float64; quick float64)"
    )
    parser.add_argument(
        "--peers",
        default=None,
        help=f"comma list from {', '.join(_peers.ALL_PEERS[1:])} (default: all "
        "installed); numfuse is always included",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads for numfuse, numexpr, torch and Numba (default: all usable cores; "
        "JAX uses XLA's own pool, sized from the machine's cores)",
    )
    parser.add_argument(
        "--time",
        type=float,
        default=None,
        dest="budget",
        metavar="SECONDS",
        help="seconds of samples per library and case (default 0.5; quick 0.01)",
    )
    parser.add_argument(
        "--bandwidth",
        type=float,
        default=None,
        metavar="GBPS",
        help="memory bandwidth in GB/s for the roofline column (default: measured with np.copyto)",
    )
    parser.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    parser.add_argument(
        "--plot", metavar="FILE.png", help="speed-up over NumPy vs size, one panel per function"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--list",
        action="store_true",
        help="list the functions and each library's spelling, then exit",
    )
    return parser


def split_names(text: str) -> list:
    """Split a comma list, leaving commas inside parentheses alone
    ('exp,log(sum(exp(x),axis=0))' -> ['exp', 'log(sum(exp(x),axis=0))'])."""
    names, depth, current = [], 0, []
    for char in text:
        if char == "," and depth == 0:
            names.append("".join(current))
            current = []
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current.append(char)
    names.append("".join(current))
    return [name.strip() for name in names if name.strip()]


def list_functions() -> str:
    lines = []
    for name, function in _cases.FUNCTIONS.items():
        lines.append(f"{name}  [{function.kind}]")
        for peer, (text, binder) in function.spellings.items():
            lines.append(f"    {peer:<8} {text if binder else 'n/a: ' + text}")
    groups = "; ".join(f"{g}: {', '.join(keys)}" for g, keys in _cases.GROUPS.items())
    return "\n".join(lines) + f"\n\ngroups: {groups}; all\n"


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list:
        print(list_functions(), end="")
        return 0
    if args.threads is not None and args.threads < 1:
        parser.error(f"--threads must be >= 1, got {args.threads}")
    if args.budget is not None and args.budget <= 0:
        parser.error(f"--time must be > 0, got {args.budget}")
    if args.plot:
        try:
            import matplotlib  # noqa: F401  (checked before minutes of benchmarking)
        except ImportError:
            parser.error("--plot needs matplotlib (pip install matplotlib, or numfuse[bench])")
    peers = None
    if args.peers is not None:
        peers = [p.strip() for p in args.peers.split(",") if p.strip()]

    printed_header = []

    def on_case(case, doc, write):
        if not printed_header:
            write(_report.header(doc))
            printed_header.append(True)
        if not args.quick:  # quick: the summary only (each case's figures are in --json)
            write(_report.case_report(case, doc["threads"]["requested"]))

    try:
        doc = _runner.run(
            functions=split_names(args.functions),
            sizes=args.sizes,
            dtypes=args.dtypes,
            peers=peers,
            threads=args.threads,
            quick=args.quick,
            budget=args.budget,
            bandwidth=args.bandwidth * 1e9 if args.bandwidth else None,
            expressions=args.expr,
            progress=not args.no_progress,
            on_case=on_case,
            command=shlex.join(["numfuse-bench", *(sys.argv[1:] if argv is None else argv)]),
        )
    except (KeyError, ValueError, ImportError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        parser.error(str(message))
    print(_report.summary(doc), end="", flush=True)
    if args.quick:
        print(_report.quick_footer(doc), end="")
    for name, peer in doc["peers"].items():
        if not peer["available"]:
            print(f"note: {name} skipped: {peer['note']}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(doc, handle, indent=1, allow_nan=False, default=_json_default)
        print(f"wrote {args.json}")
    if args.plot:
        from .plot import plot

        plot(doc, args.plot)
        print(f"wrote {args.plot}")
    return 0


def _json_default(value):
    if hasattr(value, "item"):  # NumPy scalars
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
