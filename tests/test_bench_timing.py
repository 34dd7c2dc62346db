"""numfuse.bench's timing statistics: a call that waits is told from a slow one."""

from __future__ import annotations

import time

from numfuse.bench import report, timing


def _spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_cpu_share_tells_waiting_from_working():
    # A sleeping call stands for one whose threads are not scheduled: wall time, no CPU.
    # Short working calls: the median sample fits in a time slice even on a busy machine.
    slept = timing.sample(lambda: time.sleep(0.002), budget=0.02)
    worked = timing.sample(lambda: _spin(2e-5), budget=0.05)
    assert slept["cpu_share"] < 0.2
    assert worked["cpu_share"] > 0.5
    assert report.waited({**slept, "peer": "p"}) and not report.waited({**worked, "peer": "p"})


def test_summary_shows_no_ratio_for_a_call_that_waited():
    def result(peer, median, share):
        return {
            "peer": peer,
            "status": "ok",
            "median_s": median,
            "cpu_share": share,
            "numfuse_speedup": median / 1e-6,
            "roofline": 1.0,
        }

    case = {
        "function": "exp",
        "dtype": "float64",
        "n": 1000,
        "shape": [1000],
        "results": {
            "numfuse": result("numfuse", 1e-6, 1.0),
            "torch": result("torch", 0.028, 0.01),
            "numpy": result("numpy", 2e-6, 1.0),
        },
    }
    doc = {
        "peers": {"numfuse": {}, "torch": {}, "numpy": {}},
        "cases": [case],
        "machine": {"usable_cores": 2},
    }
    text = report.summary(doc)
    row = next(line for line in text.splitlines() if line.startswith("exp"))
    assert "waited" + report.WAITED in row and "28000" not in row
    assert "2.00x" in row
    assert report.WAITED + " waited for a core" in text
