"""__array_ufunc__ overrides of other libraries reach numfuse's ufuncs as they
reach np.exp: pandas keeps its index, dask stays lazy, xarray keeps coords."""

from __future__ import annotations

import numpy as np
import pytest

import numfuse


def test_pandas_series_keeps_index():
    pd = pytest.importorskip("pandas")
    series = pd.Series([0.5, 1.0, 2.0], index=["a", "b", "c"])
    result = numfuse.log(series)
    assert isinstance(result, pd.Series)
    assert list(result.index) == ["a", "b", "c"]
    np.testing.assert_array_equal(result.to_numpy(), numfuse.log(series.to_numpy()))


def test_dask_array_stays_lazy():
    da = pytest.importorskip("dask.array")
    x = da.linspace(0.1, 3.0, 1000, chunks=100)
    result = numfuse.exp(x)
    assert isinstance(result, da.Array)
    assert result.chunks == x.chunks
    np.testing.assert_array_equal(result.compute(), numfuse.exp(x.compute()))


def test_xarray_keeps_coords():
    xr = pytest.importorskip("xarray")
    data = xr.DataArray(np.linspace(-2, 2, 5), dims="t", coords={"t": np.arange(5)})
    result = numfuse.erf(data)
    assert isinstance(result, xr.DataArray)
    np.testing.assert_array_equal(result.coords["t"].values, np.arange(5))
    np.testing.assert_array_equal(result.values, numfuse.erf(data.values))
