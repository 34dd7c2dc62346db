"""The examples in the public docstrings run and print what they show (help() is part of
the API: issue 30)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import numfuse
from numfuse import _evaluate


@pytest.mark.parametrize("module", [_evaluate], ids=lambda m: m.__name__)
def test_docstring_examples_run(module):
    with np.printoptions(legacy=False):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize("name", ["evaluate", "compile", "validate", "re_evaluate", "jit"])
def test_public_functions_have_a_full_docstring(name):
    doc = getattr(numfuse, name).__doc__ or ""
    assert len(doc.strip().splitlines()) >= 3, f"numfuse.{name}: {doc!r}"
