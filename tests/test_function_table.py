"""The function table (src/core/functions.hpp) and what is generated from it: every row
reaches the parser, the compiler's type rule, the VM's opcodes and, for ufuncs, a
numpy.ufunc with the table's loop order; the tests' table (tests/function_table.py) has
a row for every function."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import numfuse
from function_table import BINARY_UFUNCS, CORE, FUNCTIONS, INVALID, UFUNCS
from numfuse import _scipy_loops

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    path = ROOT / "tools" / "gen_function_lists.py"
    spec = importlib.util.spec_from_file_location("gen_function_lists", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The opcode rows each type rule expands to (type letters after the name).
OPCODE_SUFFIXES = {
    "float_complex": ["ff", "dd", "cc", "zz"],
    "float_only": ["ff", "dd"],
    "float_pair": ["fff", "ddd"],
    "rounding": ["ff", "dd"],
    "rounding_complex": ["ff", "dd", "cc", "zz"],
    # power and float_power compile to the ** operator's opcodes (pow_*), not rows of their own
    "power": ["fff", "ddd", "ccc", "zzz"],
    "float_power": ["fff", "ddd", "ccc", "zzz"],
}
POWER_RULES = ("power", "float_power")


def test_the_generator_reads_the_table_the_extension_has():
    # tools/gen_function_lists.py parses functions.hpp as text: the same rows, in order.
    rows = _generator().read_table()
    assert [r["name"] for r in rows] == list(CORE)
    for r in rows:
        row = CORE[r["name"]]
        assert (r["ufunc"] != "no", int(r["arity"]), r["libm"]) == (
            row.is_ufunc,
            row.arity,
            row.libm,
        )


def test_generated_lists_are_current():
    # The package's ufunc exports, the stub and the docs' lists (make regen writes them).
    stale = [
        str(p.relative_to(ROOT))
        for p, text in _generator().outputs().items()
        if p.read_text() != text
    ]
    assert not stale, f"run `make regen`: {stale} are out of date with functions.hpp"


def test_every_function_has_a_test_row():
    assert sorted(CORE) == sorted(FUNCTIONS)


def test_float_complex_functions_have_a_complex_reference():
    for name, row in CORE.items():
        if row.types == "float_complex":
            assert FUNCTIONS[name].exact_complex is not None, name


@pytest.mark.parametrize("name", sorted(CORE))
def test_row_generates_its_opcodes(name):
    row = CORE[name]
    assert row.arity == len(OPCODE_SUFFIXES[row.types][0]) - 1
    opcodes = set(numfuse._core._expr_opcode_names())
    prefix = "pow" if row.types in POWER_RULES else name
    for suffix in OPCODE_SUFFIXES[row.types]:
        assert f"{prefix}_{suffix}" in opcodes
    assert f"{prefix}_{'c' * (row.arity + 1)}" in opcodes or not row.has_complex
    if row.arity == 2:
        assert (f"{name}_ddd" in opcodes) == (row.types not in POWER_RULES)


@pytest.mark.parametrize("name", sorted(CORE))
def test_row_reaches_evaluate_with_its_type_rule(name):
    row = CORE[name]
    args = {"a": np.linspace(0.25, 0.75, 5), "b": np.linspace(0.5, 1.5, 5)}
    text = f"{name}(a)" if row.arity == 1 else f"{name}(a, b)"
    with np.errstate(all="ignore"):
        got = numfuse.evaluate(text, local_dict=args)
        expected = FUNCTIONS[name].reference(*list(args.values())[: row.arity])
    np.testing.assert_allclose(got, expected, rtol=1e-15)
    singles = {k: v.astype(np.float32) for k, v in args.items()}
    # float_power computes in float64 (NumPy's)
    single = np.float64 if row.types == "float_power" else np.float32
    with np.errstate(all="ignore"):
        assert numfuse.evaluate(text, local_dict=singles).dtype == single
    ints = {"a": np.arange(1, 4), "b": np.arange(2, 5)}
    result = numfuse.evaluate(text, local_dict=ints)
    # float64 for integers, except that rounding and power keep them as they are
    keeps = row.types.startswith("rounding") or row.types == "power"
    assert result.dtype == (np.int64 if keeps else np.float64)
    z = {"a": np.array([0.5 + 0.25j]), "b": np.array([1.0 + 0j])}
    if row.has_complex:
        assert numfuse.evaluate(text, local_dict=z).dtype == np.complex128
    else:
        with pytest.raises(TypeError, match=f"'{name}' is not supported for complex128"):
            numfuse.evaluate(text, local_dict=z)


@pytest.mark.parametrize("name", UFUNCS + BINARY_UFUNCS)
def test_ufunc_rows_are_ufuncs_with_the_table_loop_order(name):
    ufunc = getattr(numfuse, name)
    arity = CORE[name].arity
    assert isinstance(ufunc, np.ufunc) and ufunc.__name__ == name
    assert (ufunc.nin, ufunc.nout) == (arity, 1)
    loops = CORE[name].loops
    # Rows in SciPy's order (float64 first) follow the installed SciPy, which lists float32
    # first from 1.18 on (numfuse/_scipy_loops.py; test_ufunc_api checks that rule).
    if loops[:2] == "df" and _scipy_loops.scipy_float32_first():
        loops = "fd" + loops[2:]
    assert ufunc.types == [t * arity + "->" + t for t in loops]
    assert CORE[name].summary in ufunc.__doc__


@pytest.mark.parametrize("name", sorted(CORE))
def test_invalid_column_names_arguments_outside_the_domain(name):
    # The C++ row's invalid arguments (the NaN policy probes NumPy with them) are NaN
    # arguments of the reference, and a row without them has none in the tests' table.
    row = CORE[name]
    assert bool(row.invalid) == bool(INVALID[name]), name
    if row.invalid and row.arity == 1:
        with np.errstate(all="ignore"):
            assert np.isnan(FUNCTIONS[name].reference(np.array(row.invalid))).all(), name


@pytest.mark.parametrize("name", sorted(CORE))
def test_threads_and_bench_columns(name):
    row = CORE[name]
    assert (row.threads > 1000) if row.is_ufunc else (row.threads == 0), name
    lo, hi = row.bench_domain
    assert lo < hi, name
    with np.errstate(all="ignore"):
        x = np.linspace(lo, hi, 101)[1:-1]  # inside: arctanh(+-1) is infinite
        y = FUNCTIONS[name].reference(*([x] * row.arity))
    assert np.isfinite(y).all(), f"{name}: its benchmark domain leaves its domain"


def test_only_ufunc_rows_are_ufuncs():
    for name, row in CORE.items():
        if not row.is_ufunc:
            assert not isinstance(getattr(numfuse, name, None), np.ufunc), name


@pytest.mark.parametrize("name", ["log1p", "log2", "log10"])
def test_complex_scalar_forms_are_shared_by_evaluate_and_the_ufunc(name):
    # NumPy's complex formulas live once, in src/core/scalar_libm.hpp: the ufunc's complex
    # loop and the VM's complex128 path give the same bits, NumPy's, at every level.
    # (expm1 is left out: at avx2_fma/avx512 evaluate's complex128 expm1 differs from the
    # ufunc's in the last bit for ~20% of arguments, at 1d67912 too; sse2 agrees.)
    rng = np.random.default_rng(7)
    z = rng.uniform(-5, 5, 4000) + 1j * rng.uniform(-5, 5, 4000)
    expected = getattr(np, name)(z)
    level = numfuse.get_level()
    try:
        for each in numfuse.usable_levels():
            numfuse.set_level(each)
            got = numfuse.evaluate(f"{name}(z)", local_dict={"z": z})
            np.testing.assert_array_equal(got.view(np.float64), expected.view(np.float64))
            ufunc = getattr(numfuse, name)(z)
            np.testing.assert_array_equal(ufunc.view(np.float64), expected.view(np.float64))
    finally:
        numfuse.set_level(level)
