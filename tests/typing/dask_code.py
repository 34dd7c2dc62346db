"""Dask arrays through the typed API: a dask array in gives a dask array out (numfuse's Dask
back end). Must pass `mypy --strict` but for the marked lines (tests/test_typing.py, where
dask is installed). Never run."""

import dask.array as da
import numpy as np

import numfuse as nf


def lazy(d: da.Array, w: da.Array) -> tuple[da.Array, ...]:
    total: da.Array = nf.logsumexp(d, axis=1)
    weighted: da.Array = nf.logsumexp(np.ones((4, 3)), b=w)
    probabilities: da.Array = nf.softmax(d, axis=1)
    return total, weighted, probabilities, nf.log_softmax(d, axis=1)


def wrong(d: da.Array) -> None:
    probabilities: np.ndarray = nf.softmax(d)  # E: assignment
    lse: np.ndarray = nf.logsumexp(d)  # E: assignment
    print(probabilities, lse)
