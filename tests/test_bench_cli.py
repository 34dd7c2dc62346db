"""numfuse-bench / python -m numfuse.bench: report, JSON, plot, peers. No timing asserts."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import numfuse
from conftest import HANG_SCALE

pytest.importorskip("matplotlib")

FUNCTIONS = "exp,erf,logsumexp,2*a+3*b,log(sum(exp(x),axis=0))"


def run_bench(*args, env_extra=None, cwd=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "numfuse.bench", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300 * HANG_SCALE,
    )


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench")
    json_path, png_path = folder / "b.json", folder / "b.png"
    result = run_bench(  # not --quick (which prints the summary only): every case's report
        "--time",
        "0.02",
        "--sizes",
        "1e3,2e3",
        "--dtypes",
        "float64",
        "--functions",
        FUNCTIONS,
        "--threads",
        "1",
        "--no-progress",
        "--json",
        str(json_path),
        "--plot",
        str(png_path),
    )
    assert result.returncode == 0, result.stderr
    return result, json.loads(json_path.read_text()), png_path


def test_json_has_every_figure_and_the_machine(quick_run):
    _, doc, _ = quick_run
    assert doc["schema"] == "numfuse-bench/1"
    machine = doc["machine"]
    for key in (
        "cpu",
        "logical_cores",
        "usable_cores",
        "memory_bytes",
        "numfuse_level",
        "numfuse_levels_usable",
        "cpu_flags",
    ):
        assert key in machine
    assert machine["numfuse_level"] == numfuse.get_level()
    assert doc["versions"]["numfuse"] == numfuse.__version__
    assert doc["versions"]["numpy"]
    assert doc["threads"]["requested"] == 1
    assert doc["threads"]["numfuse"] == 1
    assert doc["bandwidth"]["bytes_per_s"] > 0
    assert set(doc["busy_cores"]) == {"before", "after"}
    # One case per function x size (one dtype).
    cases = {(c["function"], c["n"]) for c in doc["cases"]}
    names = ["exp", "erf", "logsumexp", "2*a+3*b", "log(sum(exp(x),axis=0))"]
    assert cases == {(f, n) for f in names for n in (1000, 2000)}
    for case in doc["cases"]:
        mine = case["results"]["numfuse"]
        assert mine["status"] == "ok"
        for key in (
            "ips",
            "mean_s",
            "stddev_s",
            "deviation_pct",
            "median_s",
            "p99_s",
            "min_s",
            "max_s",
            "samples",
            "memory_bytes",
            "roofline",
            "gb_per_s",
        ):
            assert key in mine, key
        assert mine["min_s"] <= mine["median_s"] <= mine["p99_s"] <= mine["max_s"]
        assert mine["samples"] >= 3
        assert mine["ips"] == pytest.approx(1 / mine["median_s"])  # the one statistic
        assert mine["memory_bytes"] >= 0
        assert case["bytes_moved"] > 0
        # Peers that ran agree with numfuse's result.
        for peer, r in case["results"].items():
            if r["status"] == "ok" and peer != "numfuse":
                assert r["check"]["agrees"], (case["function"], peer, r["check"])
                assert r["numfuse_speedup"] > 0
    by_key = {(c["function"], c["n"]): c for c in doc["cases"]}
    # An allocating exp of 1000 float64 allocates at least its 8000-byte result.
    assert by_key["exp", 1000]["results"]["numfuse"]["memory_bytes"] >= 8000
    assert by_key["exp", 1000]["results"]["scipy"]["status"] in ("n/a", "skipped")
    assert by_key["erf", 1000]["results"]["numpy"]["status"] == "n/a"


def test_report_has_benchee_columns_and_comparison(quick_run):
    result, doc, _ = quick_run
    out = result.stdout
    header = next(line for line in out.splitlines() if line.startswith("Name"))
    assert header.split() == [
        "Name",
        "ips",
        "average",
        "deviation",
        "median",
        "99th",
        "%",
        "memory",
        "roofline",
    ]
    assert "Comparison (median times):" in out
    assert "x slower +" in out
    # One statistic: each case's table lists the libraries in the order of their medians.
    blocks = [b for b in out.split("\n## ")[1:] if "\nName" in b]
    assert len(blocks) == len(doc["cases"])
    for block, case in zip(blocks, doc["cases"]):
        table = block.split("\n\n")[1].splitlines()[1:]
        timed = [r for r in case["results"].values() if r["status"] == "ok"]
        by_median = [r["peer"] for r in sorted(timed, key=lambda r: r["median_s"])]
        assert [line.split()[0] for line in table] == by_median, block
    assert "Threads:    1 requested -> numfuse 1" in out
    assert "## Summary" in out


def test_comparison_and_summary_agree(quick_run):
    _, doc, _ = quick_run
    for case in doc["cases"]:
        timed = {k: r for k, r in case["results"].items() if r["status"] == "ok"}
        assert case["fastest"] == min(timed, key=lambda k: timed[k]["median_s"])
        for r in timed.values():
            expected = r["median_s"] / timed["numfuse"]["median_s"]
            assert r["numfuse_speedup"] == pytest.approx(expected)
            assert "numfuse_speedup_mean" not in r


def test_quick_is_one_screen_with_the_details_in_json(tmp_path):
    # Every benchmark at the quick sizes (one peer, to keep the test short; the line count
    # does not depend on the peers): the header, the summary and a footer, <= 100 lines.
    json_path = tmp_path / "q.json"
    result = run_bench("--quick", "--peers", "numpy", "--no-progress", "--json", str(json_path))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) <= 100, len(lines)
    assert "## Summary" in result.stdout and "Comparison" not in result.stdout
    assert "is in --json FILE" in result.stdout
    from numfuse.bench import cases

    doc = json.loads(json_path.read_text())
    assert {c["function"] for c in doc["cases"]} == set(cases.FUNCTIONS)
    assert {c["n"] for c in doc["cases"]} == {1000, 100_000}
    assert {c["dtype"] for c in doc["cases"]} == {"float64"}
    for case in doc["cases"]:  # every figure of the case reports is in the JSON
        assert {"median_s", "mean_s", "p99_s", "memory_bytes"} <= set(case["results"]["numfuse"])


def test_help_lists_every_benchmark_and_the_docs_estimates():
    from numfuse.bench import cases, cli

    text = cli.build_parser().format_help()
    listed = text.split("benchmarks (")[1]
    for name in cases.FUNCTIONS:
        assert name in listed, name
    assert f"benchmarks ({len(cases.FUNCTIONS)};" in text
    # The run-time estimates of the help are the ones docs/benchmarks.md gives.
    docs = (Path(__file__).parent.parent / "docs" / "benchmarks.md").read_text()
    for command in ("numfuse-bench --quick ", "numfuse-bench --json bench.json --plot"):
        estimate = re.escape(command) + r".*?# .*?(~[\d.-]+ (?:s|min|h))"
        ours, theirs = re.search(estimate, cli.EXAMPLES), re.search(estimate, docs)
        assert ours and theirs and ours.group(1) == theirs.group(1), (command, ours, theirs)


def test_plot_is_a_png(quick_run):
    _, _, png = quick_run
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_missing_peer_is_skipped_with_a_note(tmp_path):
    # A 'torch' that fails to import as an uninstalled package does.
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n"
    )
    path = os.pathsep.join(p for p in (str(tmp_path / "fake"), os.environ.get("PYTHONPATH")) if p)
    json_path = tmp_path / "b.json"
    result = run_bench(
        "--quick",
        "--sizes",
        "1e3",
        "--dtypes",
        "float32",
        "--functions",
        "exp",
        "--no-progress",
        "--json",
        str(json_path),
        env_extra={"PYTHONPATH": path},
    )
    assert result.returncode == 0, result.stderr
    assert "note: torch skipped: not installed" in result.stdout
    doc = json.loads(json_path.read_text())
    assert doc["peers"]["torch"] == {"available": False, "version": None, "note": "not installed"}
    (case,) = doc["cases"]
    assert case["results"]["torch"]["status"] == "skipped"
    assert case["results"]["numpy"]["status"] == "ok"


def fake_uninstalled(folder, *names):
    """A PYTHONPATH under which `names` fail to import as uninstalled packages do."""
    for name in names:
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text(
            f"raise ModuleNotFoundError(\"No module named '{name}'\", name='{name}')\n"
        )
    return os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH")) if p)


def test_missing_compilers_are_skipped_with_a_note(tmp_path):
    # JAX and Numba are optional (numfuse[bench-compilers]): without them the run goes on.
    json_path = tmp_path / "b.json"
    result = run_bench(
        "--quick",
        "--sizes",
        "1e3",
        "--dtypes",
        "float64",
        "--functions",
        "exp,softmax",
        "--peers",
        "numpy,jax,numba",
        "--no-progress",
        "--json",
        str(json_path),
        env_extra={"PYTHONPATH": fake_uninstalled(tmp_path / "fake", "jax", "numba")},
    )
    assert result.returncode == 0, result.stderr
    assert "note: jax skipped: not installed" in result.stdout
    assert "note: numba skipped: not installed" in result.stdout
    doc = json.loads(json_path.read_text())
    for case in doc["cases"]:
        assert case["results"]["jax"]["status"] == "skipped"
        assert case["results"]["numba"]["status"] == "skipped"
        assert case["results"]["numfuse"]["status"] == "ok"
        assert case["results"]["numpy"]["status"] == "ok"
    assert "jax" not in doc["threads"] and "numba" not in doc["threads"]


def test_every_function_has_a_jax_and_a_numba_spelling():
    from numfuse.bench import cases

    for name, function in cases.FUNCTIONS.items():
        for peer in ("jax", "numba"):
            text, binder = function.spellings[peer]
            assert binder is not None, (name, peer, text)
    assert cases.FUNCTIONS["exp"].spellings["jax"][0] == "jax.jit(jnp.exp)(x)"
    custom = cases.custom_expression("a*b + 1")
    assert "jax" not in custom.spellings  # a user's expression: numexpr only


def test_compilers_run_and_agree_with_numfuse(tmp_path):
    # Runs where numfuse[bench-compilers] is installed (skipped elsewhere, e.g. in CI).
    pytest.importorskip("jax")
    pytest.importorskip("numba")
    json_path = tmp_path / "b.json"
    functions = "exp,erfc,logaddexp,logsumexp,softmax,2*a+3*b,log(sum(exp(x),axis=0))"
    result = run_bench(
        "--quick",
        "--sizes",
        "1e3",
        "--dtypes",
        "float32,float64",
        "--functions",
        functions,
        "--peers",
        "jax,numba",
        "--threads",
        "1",
        "--no-progress",
        "--json",
        str(json_path),
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(json_path.read_text())
    assert doc["peers"]["jax"]["available"] and doc["peers"]["numba"]["available"]
    assert doc["versions"]["jax"] and doc["versions"]["numba"]
    assert doc["threads"]["numba"] == 1  # limited like numfuse; JAX keeps XLA's pool
    assert doc["threads"]["jax"] >= 1
    assert len(doc["cases"]) == 7 * 2
    for case in doc["cases"]:
        for peer in ("jax", "numba"):
            entry = case["results"][peer]
            assert entry["status"] == "ok", (case["function"], case["dtype"], entry)
            assert entry["check"]["agrees"], (case["function"], case["dtype"], entry["check"])
            assert entry["memory_note"] == f"{peer} allocates outside tracemalloc"


def test_runs_without_rich_and_matplotlib(tmp_path):
    # The optional tools: no progress bar without rich, a clear error for --plot.
    fake = tmp_path / "fake"
    for name in ("rich", "matplotlib", "tqdm"):
        (fake / name).mkdir(parents=True)
        (fake / name / "__init__.py").write_text(
            f"raise ModuleNotFoundError(\"No module named '{name}'\", name='{name}')\n"
        )
    path = os.pathsep.join(p for p in (str(fake), os.environ.get("PYTHONPATH")) if p)
    result = run_bench(
        "--quick",
        "--sizes",
        "1e3",
        "--dtypes",
        "float32",
        "--functions",
        "log",
        "--peers",
        "numpy",
        env_extra={"PYTHONPATH": path},
    )
    assert result.returncode == 0, result.stderr
    assert "## Summary" in result.stdout
    result = run_bench(
        "--quick",
        "--functions",
        "log",
        "--plot",
        str(tmp_path / "p.png"),
        env_extra={"PYTHONPATH": path},
    )
    assert result.returncode == 2 and "--plot needs matplotlib" in result.stderr


def test_peers_option_limits_the_libraries(tmp_path):
    json_path = tmp_path / "b.json"
    result = run_bench(
        "--quick",
        "--sizes",
        "1e3",
        "--dtypes",
        "float32",
        "--functions",
        "softmax",
        "--peers",
        "numpy",
        "--no-progress",
        "--json",
        str(json_path),
    )
    assert result.returncode == 0, result.stderr
    (case,) = json.loads(json_path.read_text())["cases"]
    assert set(case["results"]) == {"numfuse", "numpy"}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--functions", "sinc"], "unknown function 'sinc'"),
        (["--sizes", "1e3,big"], "size 'big' is not a number"),
        (["--dtypes", "int8"], "dtype 'int8' is not benchmarked"),
        (["--peers", "cupy"], "unknown peer 'cupy'"),
        (["--threads", "0"], "--threads must be >= 1"),
    ],
)
def test_bad_options_are_clear_errors(args, message):
    result = run_bench("--quick", "--no-progress", *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_list_shows_each_spelling():
    result = run_bench("--list")
    assert result.returncode == 0
    assert "numfuse.evaluate('exp(a)+tan(b)-sinh(c)')" in result.stdout
    assert "n/a: NumPy has no erf" in result.stdout
    assert "jax.jit(jax.scipy.special.logsumexp)(x)" in result.stdout
    assert "@vectorize(target='parallel'): math.exp(v)" in result.stdout


def test_python_api_and_custom_expression():
    from numfuse import bench

    setting = numfuse._core._num_threads_setting()
    doc = bench.run(
        ["exp"],
        sizes=[1000],
        dtypes=["float32"],
        peers=["numpy", "numexpr"],
        threads=1,
        quick=True,
        bandwidth=1e10,
        expressions=["a*b+1"],
        progress=False,
    )
    assert numfuse._core._num_threads_setting() == setting  # restored after the run
    assert doc["threads"]["numfuse"] == 1
    assert [c["function"] for c in doc["cases"]] == ["exp", "a*b+1"]
    custom = doc["cases"][1]
    assert custom["results"]["numpy"]["status"] == "n/a"
    if custom["results"]["numexpr"]["status"] == "ok":
        assert custom["results"]["numexpr"]["check"]["agrees"]
    text = bench.full_report(doc)
    assert "## exp · float32 · n = 1e3, 1 thread" in text
    figure = bench.plot(doc)
    assert len(figure.axes) == 2


def test_a_peer_without_the_function_is_na_not_an_error():
    from numfuse import bench

    peers = [p for p in ("numexpr", "torch") if importlib.util.find_spec(p) is not None]
    if not peers:
        pytest.skip("neither numexpr nor torch is installed")
    doc = bench.run(
        ["cbrt"],
        sizes=[1000],
        dtypes=["float64"],
        peers=peers,
        threads=1,
        quick=True,
        bandwidth=1e10,
        progress=False,
    )
    for peer in peers:
        result = doc["cases"][0]["results"][peer]
        assert result["status"] == "n/a", result
        assert "has no" in result["note"]


def test_console_script_is_declared():
    tomllib = pytest.importorskip("tomllib")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "pyproject.toml"), "rb") as handle:
        project = tomllib.load(handle)["project"]
    target = project["scripts"]["numfuse-bench"]
    module, _, attribute = target.partition(":")
    assert callable(getattr(__import__(module, fromlist=[attribute]), attribute))
    assert {"rich", "matplotlib"} <= {
        textwrap.shorten(d, 40).split(">")[0].split("=")[0]
        for d in project["optional-dependencies"]["bench"]
    }


README_TABLE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    "benchmarks",
    "python",
    "readme_table.py",
)


def test_readme_table_fills_the_marked_blocks(quick_run, tmp_path):
    _, doc, _ = quick_run
    json_path = tmp_path / "b.json"
    json_path.write_text(json.dumps(doc))
    readme = tmp_path / "README.md"
    readme.write_text(
        "# title\n\nbefore\n<!-- bench:start functions=exp sizes=1e3 -->\nold table\n"
        "<!-- bench:end -->\nmiddle\n<!-- bench:start image=b.png -->\n<!-- bench:end -->\nafter\n"
    )
    result = subprocess.run(
        [sys.executable, README_TABLE, str(json_path), "--write", str(readme)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "replaced 2 table(s)" in result.stdout
    text = readme.read_text()
    assert "old table" not in text
    assert text.startswith("# title\n\nbefore\n") and text.endswith("after\n")
    first, second = text.split("middle")
    # The filtered block: exp at 1e3 only; the other: every case, and the plot.
    assert first.count("| exp | float64 | 1e3 |") == 1 and "| erf |" not in first
    assert "| `2*a+3*b` | float64 | 2000 |" in second and "![speed-up" in second
    assert f"Measured on {doc['machine']['cpu']}" in first
    assert "threads: numfuse 1" in first
    # stat=min: each library's fastest sample, named in the text.
    readme.write_text("<!-- bench:start functions=exp sizes=1e3 stat=min -->\n<!-- bench:end -->\n")
    subprocess.run(
        [sys.executable, README_TABLE, str(json_path), "--write", str(readme)],
        check=True,
        capture_output=True,
    )
    fastest = readme.read_text()
    (exp_case,) = [c for c in doc["cases"] if c["function"] == "exp" and c["n"] == 1000]
    assert "fastest sample's time per call (min of repeats)" in fastest
    numpy_min = exp_case["results"]["numpy"]["min_s"]
    ratio = numpy_min / exp_case["results"]["numfuse"]["min_s"]
    assert f"({ratio:.2f}×)" in fastest.split("| exp | float64 | 1e3 |")[1].split("\n")[0]
    readme.write_text(text)
    # Running it again is idempotent.
    subprocess.run(
        [sys.executable, README_TABLE, str(json_path), "--write", str(readme)],
        check=True,
        capture_output=True,
    )
    assert readme.read_text() == text


def test_readme_table_rejects_bad_markers(quick_run, tmp_path):
    _, doc, _ = quick_run
    json_path = tmp_path / "b.json"
    json_path.write_text(json.dumps(doc))
    readme = tmp_path / "README.md"
    readme.write_text("<!-- bench:start colour=red -->\n<!-- bench:end -->\n")
    result = subprocess.run(
        [sys.executable, README_TABLE, str(json_path), "--write", str(readme)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "bad option 'colour=red'" in result.stderr
    readme.write_text("<!-- bench:start stat=mean -->\n<!-- bench:end -->\n")
    result = subprocess.run(
        [sys.executable, README_TABLE, str(json_path), "--write", str(readme)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "stat is one of median, min" in result.stderr
    readme.write_text("no markers\n")
    result = subprocess.run(
        [sys.executable, README_TABLE, str(json_path), "--write", str(readme)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "has no <!-- bench:start -->" in result.stderr
