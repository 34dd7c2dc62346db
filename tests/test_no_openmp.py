"""A build without OpenMP (NUMFUSE_OPENMP=OFF, or none found; `make test-no-openmp`)."""

from __future__ import annotations

import numpy as np
import pytest

import numfuse
from numfuse import _core

pytestmark = pytest.mark.skipif(_core._has_openmp(), reason="checks a build without OpenMP")


def test_every_call_runs_on_the_calling_thread(threads):
    assert numfuse.get_num_threads() == 1
    assert numfuse.set_num_threads(3) == 1
    assert numfuse.get_num_threads() == 1
    assert numfuse.show_config(print_config=False)["thread_setting"] == 3
    _core._peak_team_size()
    assert np.array_equal(numfuse.exp(np.zeros(1_000_000)), np.ones(1_000_000))
    assert _core._peak_team_size() == 1
    with pytest.raises(ValueError, match="n must be >= 1"):
        numfuse.set_num_threads(0)


def test_show_config_says_so():
    openmp = numfuse.show_config(print_config=False)["openmp"]
    assert openmp["enabled"] is False
    assert "without OpenMP" in openmp["note"]
