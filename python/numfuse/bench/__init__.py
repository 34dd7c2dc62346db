"""numfuse.bench: numfuse against NumPy, numexpr, torch and SciPy, side by side.

Command line: ``numfuse-bench`` or ``python -m numfuse.bench`` (``--help``).
From Python (e.g. a notebook)::

    from numfuse import bench
    doc = bench.run(["exp", "softmax"], sizes=[1e3, 1e5], dtypes=["float64"], quick=True)
    print(bench.full_report(doc))
    bench.plot(doc)          # a matplotlib Figure: speed-up over NumPy vs size

``run`` returns one JSON-ready dict with every figure (per case and library:
ips, mean, deviation, median, 99th percentile, min/max, memory per call,
GB/s and roofline fraction), the machine, library versions and thread counts.
rich (progress bar) and matplotlib (plots) are optional: ``pip install
numfuse[bench]``.
"""

from .cases import FUNCTIONS, GROUPS
from .machine import machine_info, measure_bandwidth
from .plot import plot, speedups
from .report import case_report, full_report, header, summary
from .runner import run

__all__ = [
    "FUNCTIONS",
    "GROUPS",
    "case_report",
    "full_report",
    "header",
    "machine_info",
    "measure_bandwidth",
    "plot",
    "run",
    "speedups",
    "summary",
]
