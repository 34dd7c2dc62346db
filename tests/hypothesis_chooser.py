"""The evaluate fuzzer's grammar (tests/fuzz/expressions.py) driven by Hypothesis: its random
choices drawn from a Hypothesis `data` object, so failing formulas shrink. Shared by the
property tests of evaluate (test_properties.py) and of numfuse.jit (test_jit_properties.py)."""

from __future__ import annotations

from hypothesis import strategies as st


class HypothesisChooser:
    def __init__(self, data):
        self.data = data

    def pick(self, n):
        return self.data.draw(st.integers(0, n - 1))

    def uniform(self, lo, hi):
        return self.data.draw(st.floats(lo, hi))
