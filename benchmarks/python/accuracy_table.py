#!/usr/bin/env python3
"""Measure max error in ULPs of exp, log, erf for numfuse and its peers.

Errors are measured against the exact value (mpmath at 200 bits), as a
fraction of the unit in the last place of the exact result in the output
dtype, over the same inputs for every library:
  * NumPy's own validation data (tests/data/numpy-umath-validation), exp/log;
  * random sweeps over the whole finite domain and the hard sub-ranges.
Prints a Markdown table for the README.

    .venv/bin/python benchmarks/python/accuracy_table.py [--points 20000]
"""

from __future__ import annotations

import argparse
import pathlib

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


def ulp_errors(values: np.ndarray, x: np.ndarray, exact_function) -> float:
    """Max |value - exact| / ulp(exact) over the inputs (NaN if any value is NaN)."""
    info = np.finfo(values.dtype)
    mantissa_bits = info.nmant
    worst = 0.0
    with mpmath.workprec(200):
        for got, arg in zip(values.astype(np.float64), x.astype(np.float64)):
            exact = exact_function(mpmath.mpf(float(arg)))
            if exact == 0:
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


def peers():
    import scipy.special

    table = {
        "exp": {"numfuse": numfuse.exp, "NumPy": np.exp},
        "log": {"numfuse": numfuse.log, "NumPy": np.log},
        "erf": {"numfuse": numfuse.erf, "SciPy": scipy.special.erf},
    }
    try:
        import torch

        for name in table:
            function = getattr(torch, name)
            table[name]["torch"] = lambda x, f=function: f(torch.from_numpy(x)).numpy()
    except ImportError:
        pass
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=20000)
    args = parser.parse_args()
    exact = {"exp": mpmath.exp, "log": mpmath.log, "erf": mpmath.erf}
    table = peers()
    libraries = ["numfuse", "NumPy", "SciPy", "torch"]
    print(
        f"max error in ULP vs mpmath (level {numfuse.get_level()}), "
        f"{args.points} random points per sweep + NumPy's validation data\n"
    )
    print("| function | dtype | inputs | " + " | ".join(libraries) + " |")
    print("|---|---|---:|" + "---:|" * len(libraries))
    for name in ("exp", "log", "erf"):
        for dtype in (np.float32, np.float64):
            x = sweep(name, dtype, args.points)
            cells = []
            for library in libraries:
                function = table[name].get(library)
                if function is None:
                    cells.append("n/a")
                    continue
                with np.errstate(all="ignore"):
                    values = np.asarray(function(x))
                cells.append(f"{ulp_errors(values, x, exact[name]):.3f}")
            print(f"| {name} | {np.dtype(dtype).name} | {x.size} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
