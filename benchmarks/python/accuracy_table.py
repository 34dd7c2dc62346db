#!/usr/bin/env python3
"""Measure max error in ULPs of numfuse's ufuncs and their peers' functions.

Errors are measured against the exact value (mpmath at 200 bits), as a
fraction of the unit in the last place of the exact result in the output
dtype, over the same inputs for every library:
  * NumPy's own validation data (tests/data/numpy-umath-validation), exp/log;
  * random sweeps over the whole finite domain and the hard sub-ranges (exp, log, erf
    here; the other ufuncs take the domains of the tests' function table,
    tests/function_table.py, which also names the exact value).
Prints a Markdown table for the README.

    .venv/bin/python benchmarks/python/accuracy_table.py [--points 20000] [--functions tanh,erfc]
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import mpmath
import numpy as np

import numfuse

ROOT = pathlib.Path(__file__).resolve().parents[2]
VALIDATION = ROOT / "tests" / "data" / "numpy-umath-validation"


def load_validation(name: str, dtype) -> np.ndarray:
    """The inputs of NumPy's validation data for one function and dtype."""
    type_name = {np.float32: "np.float32", np.float64: "np.float64"}[dtype]
    bits = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
    path = VALIDATION / f"umath-validation-set-{name}.csv"
    inputs = [
        int(line.split(",")[1], 16)
        for line in path.read_text().splitlines()
        if line.startswith(type_name + ",")
    ]
    return np.array(inputs, bits).view(dtype)


def sweep(name: str, dtype, points: int) -> np.ndarray:
    rng = np.random.default_rng(2026)
    info = np.finfo(dtype)
    if name == "exp":
        top, bottom = np.log(info.max), np.log(info.smallest_subnormal)
        parts = [
            rng.uniform(bottom, top, points),
            rng.uniform(-2, 2, points // 2),
            rng.uniform(bottom, np.log(info.tiny), points // 4),
        ]
    elif name == "log":
        bits = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
        top = int(np.array(info.max, dtype).view(bits))
        parts = [
            rng.integers(1, top, points, dtype=bits).view(dtype),
            1 + rng.uniform(-0.3, 0.3, points // 2),
            1 + rng.uniform(-1e-5, 1e-5, points // 4),
        ]
    else:
        parts = [
            rng.uniform(-6.5, 6.5, points),
            rng.uniform(0.3, 3.0, points),
            np.exp(rng.uniform(np.log(info.smallest_subnormal), 0, points // 4)),
        ]
    x = np.concatenate(parts).astype(dtype)
    if name in ("exp", "log"):
        x = np.concatenate([x, load_validation(name, dtype)])
    return x[np.isfinite(x) & ((x > 0) if name == "log" else True)]


def exact_values(args: tuple, exact_function) -> list:
    """mpmath at 200 bits of every input (tuple of one or two argument arrays)."""
    with mpmath.workprec(200):
        return [
            exact_function(*(mpmath.mpf(float(a)) for a in point))
            for point in zip(*(a.astype(np.float64) for a in args))
        ]


def ulp_errors(values: np.ndarray, exacts: list) -> float:
    """Max |value - exact| / ulp(exact) over the inputs (NaN if any value is NaN)."""
    info = np.finfo(values.dtype)
    mantissa_bits = info.nmant
    worst = 0.0
    with mpmath.workprec(200):
        for got, exact in zip(values.astype(np.float64), exacts):
            if exact == 0:
                continue
            if not mpmath.isfinite(exact):  # arctanh(+-1): the result must be that infinity
                worst = max(worst, 0.0 if got == float(exact) else np.inf)
                continue
            exponent = max(int(mpmath.floor(mpmath.log(abs(exact), 2))), int(info.minexp))
            if exponent > info.maxexp - 1:  # beyond the range: the result must be inf
                worst = max(worst, 0.0 if np.isinf(got) else np.inf)
                continue
            ulp = mpmath.ldexp(1, exponent - mantissa_bits)
            if not np.isfinite(got):
                return float("inf")
            worst = max(worst, float(abs(mpmath.mpf(got) - exact) / ulp))
    return worst


# torch's names where they differ from NumPy's / SciPy's.
TORCH_NAMES = {"expit": "special.expit"}


def peers(names):
    import scipy.special

    table = {}
    for name in names:
        row = {"numfuse": getattr(numfuse, name)}
        if hasattr(np, name):
            row["NumPy"] = getattr(np, name)
        if hasattr(scipy.special, name) and not hasattr(np, name):
            row["SciPy"] = getattr(scipy.special, name)
        table[name] = row
    try:
        import torch

        for name in names:
            function = torch
            for part in TORCH_NAMES.get(name, name).split("."):
                function = getattr(function, part, None)
            if function is not None:
                table[name]["torch"] = lambda *a, f=function: f(
                    *(torch.from_numpy(x) for x in a)
                ).numpy()
    except ImportError:
        pass
    return table


def table_arguments(name: str, dtype, points: int) -> tuple:
    """The other ufuncs: the tests' function-table domain (and its exact value)."""
    sys.path.insert(0, str(ROOT / "tests"))
    import function_table

    rng = np.random.default_rng(2026)
    args = function_table.arguments(name, function_table.Sweep(rng, dtype, points), dtype)
    return args, function_table.FUNCTIONS[name].exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=20000)
    parser.add_argument(
        "--functions", default="", help="comma-separated ufuncs (default: every ufunc)"
    )
    args = parser.parse_args()
    every = [row[0] for row in numfuse._core._function_table() if row[3]]
    names = [n for n in args.functions.split(",") if n] or every
    exact = {"exp": mpmath.exp, "log": mpmath.log, "erf": mpmath.erf}
    table = peers(names)
    libraries = ["numfuse", "NumPy", "SciPy", "torch"]
    print(
        f"max error in ULP vs mpmath (level {numfuse.get_level()}), "
        f"{args.points} random points per sweep + NumPy's validation data\n"
    )
    print("| function | dtype | inputs | " + " | ".join(libraries) + " |")
    print("|---|---|---:|" + "---:|" * len(libraries))
    for name in names:
        for dtype in (np.float32, np.float64):
            if name in exact:
                inputs, exact_function = (sweep(name, dtype, args.points),), exact[name]
            else:
                inputs, exact_function = table_arguments(name, dtype, args.points)
            reference = exact_values(inputs, exact_function)
            cells = []
            for library in libraries:
                function = table[name].get(library)
                if function is None:
                    cells.append("n/a")
                    continue
                with np.errstate(all="ignore"):
                    values = np.asarray(function(*inputs))
                cells.append(f"{ulp_errors(values, reference):.3f}")
            size = inputs[0].size
            print(f"| {name} | {np.dtype(dtype).name} | {size} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
