#!/usr/bin/env python3
"""Write notebooks/tour.ipynb from the cells below, run, with its outputs.

The notebook's cells are generated, not edited by hand: run this after changing a cell.
It is committed with the outputs of a run (`--execute`), so that a reader on the web sees
the tables and the plot; `--check` exits 1 if the committed notebook's cells differ from
the ones below or its outputs are not those of one clean run (every code cell run once, in
order, no error, no stderr, the plot in the last cell). tests/test_notebook.py runs the
check and executes the notebook top to bottom.

    python notebooks/make_tour.py --execute  # run it and write notebooks/tour.ipynb
    python notebooks/make_tour.py --check    # are cells and outputs in order?

`--execute` runs the cells in a kernel of this interpreter (its PYTHONPATH included), so
the numfuse it shows is the one this interpreter imports: the outputs name the machine,
the load and the versions of that run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import nbformat

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = os.path.join(HERE, "tour.ipynb")

CELLS = [
    (
        "markdown",
        """\
# A tour of numfuse

numfuse makes NumPy's transcendental functions fast: `numfuse.exp`, `log` and `erf` are
genuine `numpy.ufunc`s running SIMD kernels on OpenMP threads, `logsumexp`, `softmax` and
`log_softmax` follow SciPy in one pass over memory, and `numfuse.evaluate` is a
numexpr-compatible fused expression engine. This notebook checks the install, uses numfuse
next to NumPy, measures accuracy against mpmath and draws a small benchmark.

It runs top to bottom in CI (`tests/test_notebook.py`), on small arrays. The outputs
shown were made by `python notebooks/make_tour.py --execute`: the machine, its load and
the versions of that run are printed by the cells themselves.""",
    ),
    (
        "markdown",
        "## 1. Install check\n\nWhat was compiled, what this CPU uses, threads, "
        "OpenMP runtime, CUDA.",
    ),
    (
        "code",
        """\
import numpy as np

import numfuse

config = numfuse.show_config()""",
    ),
    (
        "markdown",
        """\
## 2. A drop-in next to NumPy

The ufuncs take everything `np.exp` takes: `out=`, `where=`, `dtype=`, broadcasting, strided
views, and NumPy's floating-point error handling.""",
    ),
    (
        "code",
        """\
rng = np.random.default_rng(0)
x = rng.uniform(-5, 5, size=(1000, 1000))

y = numfuse.exp(x)
print(type(numfuse.exp).__name__, y.dtype, y.shape)
print("max relative difference from np.exp:", np.max(np.abs(y - np.exp(x)) / np.exp(x)))

out = np.empty_like(x)
numfuse.log(np.abs(x) + 1, out=out)  # into a preallocated array
part = x[::-3, 1:]  # a strided, reversed view
masked = numfuse.erf(part, out=np.zeros_like(part), where=part > 0)
print("float32 stays float32:", numfuse.exp(x.astype(np.float32)).dtype)

with np.errstate(over="raise"):
    try:
        numfuse.exp(np.array([1000.0]))
    except FloatingPointError as error:
        print("np.errstate works too:", error)""",
    ),
    (
        "markdown",
        """\
## 3. `numfuse.evaluate`: numexpr's API, fused

Whole expressions run blockwise in one pass, without temporaries, including reductions.""",
    ),
    (
        "code",
        """\
import scipy.special

a = rng.standard_normal(1_000_000)
b = rng.standard_normal(1_000_000)
c = rng.uniform(-1, 1, 1_000_000)

r = numfuse.evaluate("2*a + 3*b")
np.testing.assert_allclose(r, 2 * a + 3 * b)

r = numfuse.evaluate("exp(a) + tan(c) - sinh(b)")
np.testing.assert_allclose(r, np.exp(a) + np.tan(c) - np.sinh(b), rtol=1e-12, atol=1e-13)

m = x - x.max(axis=1, keepdims=True)
lse = numfuse.evaluate("log(sum(exp(m), axis=1))")  # a fused reduction
np.testing.assert_allclose(lse, np.log(np.exp(m).sum(axis=1)), rtol=1e-12)

compiled = numfuse.compile("log(sum(exp(x), axis=0))")  # parse once, call many times
print(compiled(x)[:4])

np.testing.assert_allclose(
    numfuse.logsumexp(x, axis=1), scipy.special.logsumexp(x, axis=1), rtol=1e-13
)
np.testing.assert_allclose(
    numfuse.softmax(x, axis=0), scipy.special.softmax(x, axis=0), rtol=1e-12, atol=1e-300
)
print("evaluate, logsumexp and softmax agree with NumPy and SciPy")""",
    ),
    (
        "markdown",
        """\
## 4. Accuracy against mpmath

Max error in ULP (units in the last place) of the exact value, computed by mpmath at 128
bits, on a few hundred random inputs per row (the test suite and
`benchmarks/python/accuracy_table.py` use many more).""",
    ),
    (
        "code",
        """\
import mpmath
import scipy.special

mpmath.mp.prec = 128
POINTS = 300


def max_ulp(got, x, exact_fn, dtype):
    info = np.finfo(dtype)
    worst = 0.0
    for xi, gi in zip(x.astype(np.float64), got.astype(np.float64)):
        exact = exact_fn(mpmath.mpf(float(xi)))
        exponent = max(int(mpmath.floor(mpmath.log(abs(exact), 2))), info.minexp)
        ulp = mpmath.ldexp(1, exponent - info.nmant)
        worst = max(worst, float(abs(mpmath.mpf(float(gi)) - exact) / ulp))
    return worst


def inputs(name, dtype):
    g = np.random.default_rng(1)
    if name == "exp":
        hi = 88.0 if dtype == np.float32 else 709.0
        return g.uniform(-hi, hi, POINTS).astype(dtype)
    if name == "log":
        e = 30 if dtype == np.float32 else 300
        return (10.0 ** g.uniform(-e, e, POINTS)).astype(dtype)
    return g.uniform(-6, 6, POINTS).astype(dtype)


cases = {
    "exp": (mpmath.exp, np.exp, "NumPy"),
    "log": (mpmath.log, np.log, "NumPy"),
    "erf": (mpmath.erf, scipy.special.erf, "SciPy"),
}
print(f"{'function':<9}{'dtype':<9}{'numfuse':>9}{'peer':>14}")
for name, (exact_fn, peer_fn, peer) in cases.items():
    for dtype in (np.float32, np.float64):
        xs = inputs(name, dtype)
        mine = max_ulp(getattr(numfuse, name)(xs), xs, exact_fn, dtype)
        theirs = max_ulp(peer_fn(xs), xs, exact_fn, dtype)
        print(f"{name:<9}{np.dtype(dtype).name:<9}{mine:>9.3f}{theirs:>9.3f} {peer}")
        assert mine <= 1.0, (name, dtype, mine)""",
    ),
    (
        "markdown",
        """\
## 5. A benchmark, inline

`numfuse.bench` is what the `numfuse-bench` command runs; here on small sizes with a short
time budget. The full comparison is `numfuse-bench --json bench.json --plot bench.png`.""",
    ),
    (
        "code",
        """\
%matplotlib inline
from numfuse import bench

doc = bench.run(
    ["exp", "erf", "softmax", "2*a+3*b"],
    sizes=[1e3, 1e4, 1e5],
    dtypes=["float64"],
    quick=True,
    progress=False,
)
print(bench.case_report(doc["cases"][2], doc["threads"]["requested"]))
print(bench.summary(doc))""",
    ),
    (
        "code",
        """\
bench.plot(doc)""",
    ),
]


KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def build() -> nbformat.NotebookNode:
    """The notebook's cells, without outputs."""
    cells = []
    for index, (kind, source) in enumerate(CELLS):
        cell = (nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell)(
            source
        )
        cell["id"] = f"tour-{index:02d}"  # stable ids: regenerating changes nothing
        cells.append(cell)
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}}
    nbformat.validate(notebook)
    return notebook


def execute(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Run every cell in a kernel of this interpreter and keep only what a reader needs.

    The kernel is a throw-away kernelspec naming sys.executable, found before any installed
    'python3', so the run imports the numfuse this interpreter imports. Per-cell timing
    metadata is dropped (it would change every line of the diff on each run).
    """
    import tempfile

    import nbclient

    with tempfile.TemporaryDirectory() as jupyter:
        kernel_dir = os.path.join(jupyter, "kernels", "numfuse-tour")
        os.makedirs(kernel_dir)
        with open(os.path.join(kernel_dir, "kernel.json"), "w") as handle:
            json.dump(
                {
                    "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                    "display_name": "numfuse tour",
                    "language": "python",
                },
                handle,
            )
        saved = {key: os.environ.get(key) for key in ("JUPYTER_PATH", "JUPYTER_PLATFORM_DIRS")}
        os.environ["JUPYTER_PATH"] = jupyter
        os.environ["JUPYTER_PLATFORM_DIRS"] = "1"
        try:
            client = nbclient.NotebookClient(
                notebook,
                timeout=600,
                kernel_name="numfuse-tour",
                resources={"metadata": {"path": jupyter}},
            )
            client.execute()
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    for cell in notebook.cells:
        cell.metadata = {}
    language = notebook.metadata.get("language_info", {})
    notebook.metadata = {
        "kernelspec": dict(KERNELSPEC),
        "language_info": {key: language[key] for key in ("name", "version") if key in language},
    }
    nbformat.validate(notebook)
    return notebook


def problems(committed: nbformat.NotebookNode) -> list[str]:
    """Why the committed notebook is not this script's cells with one clean run's outputs."""
    found = []
    expected = build()
    if [(c.cell_type, c.get("id"), c.source) for c in committed.cells] != [
        (c.cell_type, c.id, c.source) for c in expected.cells
    ]:
        found.append("its cells differ from make_tour.py's")
    if committed.metadata.get("kernelspec") != KERNELSPEC or set(committed.metadata) != {
        "kernelspec",
        "language_info",
    }:
        found.append("its metadata is not the kernelspec and language_info alone")
    code = [cell for cell in committed.cells if cell.cell_type == "code"]
    counts = [cell.get("execution_count") for cell in code]
    if counts != list(range(1, len(code) + 1)):
        found.append(f"code cells were not run once each, in order (execution counts {counts})")
    for cell in code:
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                found.append(f"cell {cell.id} raised {out.get('ename')}")
            if out.output_type == "stream" and out.name == "stderr":
                found.append(f"cell {cell.id} wrote to stderr: {out.text[:200]!r}")
    if not code or not any(
        "image/png" in out.get("data", {}) for out in code[-1].get("outputs", [])
    ):
        found.append("the last cell shows no plot")
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument(
        "--execute", action="store_true", help="run the cells and write notebooks/tour.ipynb"
    )
    action.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if notebooks/tour.ipynb is not these cells with one clean run's outputs",
    )
    args = parser.parse_args(argv)
    if args.check:
        found = problems(nbformat.read(PATH, as_version=4))
        for problem in found:
            print(f"{PATH}: {problem}", file=sys.stderr)
        if found:
            print("rerun: python notebooks/make_tour.py --execute", file=sys.stderr)
            return 1
        print(f"{PATH} is up to date")
        return 0
    notebook = execute(build())
    with open(PATH, "w") as handle:
        handle.write(nbformat.writes(notebook) + "\n")
    print(f"wrote {PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
