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


def test_pandas_dataframe_keeps_index_and_columns():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [0.1, 1.0], "b": [2.0, 3.0]}, index=["x", "y"])
    result = numfuse.exp(frame)
    assert isinstance(result, pd.DataFrame)
    assert list(result.index) == ["x", "y"] and list(result.columns) == ["a", "b"]
    np.testing.assert_array_equal(result.to_numpy(), numfuse.exp(frame.to_numpy()))


def test_xarray_dataset_keeps_coords_and_names():
    xr = pytest.importorskip("xarray")
    ds = xr.Dataset(
        {"u": ("t", np.linspace(0.5, 2, 4)), "v": ("t", np.linspace(1, 3, 4))},
        coords={"t": [10, 20, 30, 40]},
    )
    result = numfuse.log(ds)
    assert isinstance(result, xr.Dataset) and set(result.data_vars) == {"u", "v"}
    np.testing.assert_array_equal(result.coords["t"].values, [10, 20, 30, 40])
    np.testing.assert_array_equal(result["v"].values, numfuse.log(ds["v"].values))


def test_xarray_dask_backed_stays_lazy():
    xr = pytest.importorskip("xarray")
    da = pytest.importorskip("dask.array")
    data = xr.DataArray(da.linspace(0.1, 2, 100, chunks=25), dims="t")
    result = numfuse.erf(data)
    assert isinstance(result.data, da.Array)
    np.testing.assert_array_equal(result.values, numfuse.erf(data.values))


# ------------------------------------------------------------- zero-copy inputs
#
# NumPy reports its allocations to tracemalloc, so a copy of an input made on
# numfuse's way in (np.asarray(copy), PyArray_FromAny, np.from_dlpack(copy))
# shows up as a traced peak of the input's size; a view costs a few hundred
# bytes.

N = 1_000_000  # 8 MB of float64


def numpy_peak_bytes(call):
    import tracemalloc

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, peak


class InterfaceOnly:
    """Exports memory through __array_interface__ only."""

    def __init__(self, array):
        self._array = array
        self.__array_interface__ = array.__array_interface__


class DLPackOnly:
    """Exports memory through __dlpack__ only (no __array__, no buffer)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def _base():
    return np.linspace(-2.0, 2.0, N)


@pytest.mark.parametrize("wrap", ["interface", "dlpack", "buffer", "torch"])
def test_array_protocol_inputs_are_read_in_place(wrap):
    base = _base()
    if wrap == "interface":
        value = InterfaceOnly(base)
    elif wrap == "dlpack":
        value = DLPackOnly(base)
    elif wrap == "buffer":
        value = memoryview(base)
    else:
        torch = pytest.importorskip("torch")
        value = torch.from_numpy(base)
        assert np.asarray(value).ctypes.data == value.data_ptr() == base.ctypes.data
    total, peak = numpy_peak_bytes(lambda: numfuse.evaluate("sum(x * 2)", {"x": value}))
    assert total == pytest.approx(2 * base.sum(), abs=1e-6)
    assert peak < base.nbytes // 8, f"{peak} bytes traced: the input was copied"
    lse, peak = numpy_peak_bytes(lambda: numfuse.logsumexp(value))
    assert lse == numfuse.logsumexp(base)
    assert peak < base.nbytes // 8, f"{peak} bytes traced: the input was copied"


def test_torch_noncontiguous_view_is_read_in_place():
    torch = pytest.importorskip("torch")
    base = torch.linspace(-3, 3, 2 * N, dtype=torch.float64).reshape(1000, 2 * N // 1000)
    view = base[:, ::2].T  # strided and transposed
    as_numpy = np.asarray(view)
    assert as_numpy.ctypes.data == view.data_ptr() and not as_numpy.flags.c_contiguous
    result, peak = numpy_peak_bytes(lambda: numfuse.evaluate("logsumexp(v, axis=0)", {"v": view}))
    np.testing.assert_allclose(result, numfuse.logsumexp(as_numpy.copy(), axis=0), rtol=1e-14)
    assert peak < view.numel() * 8 // 8
    torch.testing.assert_close(
        torch.from_numpy(numfuse.logsumexp(view, axis=1)), torch.logsumexp(view, dim=1)
    )


def test_torch_tensor_requiring_grad_is_a_clear_error():
    torch = pytest.importorskip("torch")
    t = torch.ones(3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        numfuse.evaluate("t + 1", {"t": t})


# ------------------------------------------------------------- zero-copy outputs


def test_evaluate_writes_into_torch_tensor_out():
    torch = pytest.importorskip("torch")
    x = np.linspace(0, 1, 1000)
    out = torch.empty(1000, dtype=torch.float64)
    pointer = out.data_ptr()
    result = numfuse.evaluate("exp(x) * 2", {"x": x}, out=out)
    assert result is out and out.data_ptr() == pointer
    np.testing.assert_array_equal(out.numpy(), numfuse.exp(x) * 2)
    # in place on the tensor itself, through a transposed view
    t = torch.from_numpy(np.arange(12.0).reshape(3, 4)).T
    numfuse.evaluate("t * 10 + 1", {"t": t}, out=t)
    np.testing.assert_array_equal(t.T.numpy(), np.arange(12.0).reshape(3, 4) * 10 + 1)


@pytest.mark.parametrize("wrap", ["interface", "dlpack", "buffer"])
def test_evaluate_out_through_array_protocols(wrap):
    x = np.linspace(0, 1, 100)
    target = np.zeros(100)
    out = {"interface": InterfaceOnly, "dlpack": DLPackOnly, "buffer": memoryview}[wrap](target)
    result = numfuse.evaluate("log1p(x)", {"x": x}, out=out)
    assert result is out
    np.testing.assert_array_equal(target, numfuse.evaluate("log1p(x)", {"x": x}))
    assert np.shares_memory(numfuse._interop.as_ndarray(out), target)


def test_evaluate_out_read_only_or_not_an_array():
    x = np.ones(4)
    with pytest.raises(ValueError, match="read-only"):
        numfuse.evaluate("x + 1", {"x": x}, out=memoryview(bytes(32)).cast("d"))
    with pytest.raises(TypeError, match="out must be"):
        numfuse.evaluate("x + 1", {"x": x}, out=[0.0] * 4)


def test_unpickled_arrays_work_in_the_reductions():
    """Unpickled arrays (dask.distributed, multiprocessing) carry their own
    float64 descriptor objects; the reduce binding compares dtypes by value."""
    import pickle

    x = pickle.loads(pickle.dumps(np.linspace(-1, 1, 1000)))
    assert x.dtype is not np.dtype(np.float64)
    assert numfuse.logsumexp(x) == numfuse.logsumexp(np.linspace(-1, 1, 1000))
    np.testing.assert_array_equal(numfuse.softmax(x), numfuse.softmax(np.linspace(-1, 1, 1000)))
