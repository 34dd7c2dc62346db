"""numfuse.show_config(): what the build has and what it uses now."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import platform
import sys
import types

import pytest

import numfuse


def test_returns_the_build_and_runtime_facts(capsys):
    config = numfuse.show_config()
    printed = capsys.readouterr().out
    assert config["version"] == numfuse.__version__
    assert config["compiler"].split()[0] in ("gcc", "clang", "unknown")
    assert config["levels_compiled"] == numfuse.compiled_levels()
    assert config["levels_usable"] == numfuse.usable_levels()
    assert config["level_in_use"] == numfuse.get_level()
    assert config["level_in_use"] in config["levels_usable"]
    assert set(config["levels_usable"]) <= set(config["levels_compiled"])
    assert config["threads"] == numfuse.get_num_threads() >= 1
    assert config["processors"] >= 1
    # Everything is printed, one line per key.
    for key in config:
        assert f"{key}:" in printed
    assert config["level_in_use"] in printed
    json.dumps(config)  # plain data only


def test_reports_the_architecture_and_the_cpu_features():
    config = numfuse.show_config(print_config=False)
    features = config["cpu_features"]
    assert config["machine"] == platform.machine()
    assert all(isinstance(name, str) for name in features)
    usable = config["levels_usable"]
    if config["machine"] in ("x86_64", "AMD64"):
        assert config["levels_compiled"] == ["sse2", "avx2_fma", "avx512"]
        assert "sse2" in features
        assert ("avx2_fma" in usable) == {"avx2", "fma"}.issubset(features)
        assert ("avx512" in usable) == {"avx512bw", "avx512dq", "avx512cd", "fma"}.issubset(
            features
        )
    elif config["machine"] in ("aarch64", "arm64"):
        assert config["levels_compiled"] == usable == ["neon64"]
        assert "asimd" in features
    assert numfuse.devices()[0]["features"] == features


def test_quiet_mode_prints_nothing(capsys):
    numfuse.show_config(print_config=False)
    assert capsys.readouterr().out == ""


def test_openmp_runtime_is_the_one_core_uses():
    openmp = numfuse.show_config(print_config=False)["openmp"]
    assert isinstance(openmp["enabled"], bool)
    if not openmp["enabled"]:
        pytest.skip("built without OpenMP")
    macro = numfuse._core._openmp_version()
    assert macro > 200000  # yyyymm
    assert f"_OPENMP {macro}" in openmp["spec"]
    if sys.platform.startswith("linux"):
        path = openmp["runtime_path"]
        assert path is not None and os.path.exists(path)
        assert os.path.basename(path).startswith(("libgomp", "libomp", "libiomp"))
        # The runtime numfuse resolves to is mapped into this process.
        loaded = {os.path.realpath(p) for p in openmp["loaded_runtimes"]}
        assert os.path.realpath(path) in loaded


def test_thread_setting_follows_set_num_threads(threads):
    numfuse.set_num_threads(3)
    config = numfuse.show_config(print_config=False)
    assert config["threads"] == 3
    assert config["thread_setting"] == 3


def test_cuda_not_built_is_reported_plainly(monkeypatch):
    if importlib.util.find_spec("numfuse._cuda") is not None:
        pytest.skip("this build has the CUDA extension")
    cuda = numfuse.show_config(print_config=False)["cuda"]
    assert cuda["built"] is False
    assert "not built" in cuda["note"]


def _fake_cuda(monkeypatch, devices=None, **functions):
    module = types.ModuleType("numfuse._cuda")
    module.__spec__ = importlib.machinery.ModuleSpec("numfuse._cuda", None)
    if devices is not None:
        module.devices = devices
    for name, function in functions.items():
        setattr(module, name, function)
    monkeypatch.setitem(sys.modules, "numfuse._cuda", module)
    # A numfuse.devices() from the real extension would take precedence.
    monkeypatch.delattr(numfuse, "devices", raising=False)


def test_cuda_devices_are_listed(monkeypatch):
    _fake_cuda(monkeypatch, lambda: [{"index": 0, "name": "Fake GPU"}])
    cuda = numfuse.show_config(print_config=False)["cuda"]
    assert cuda == {"built": True, "usable": True, "devices": [{"index": 0, "name": "Fake GPU"}]}


def test_cuda_failure_is_reported_not_raised(monkeypatch):
    def broken():
        raise RuntimeError("no CUDA driver")

    _fake_cuda(monkeypatch, broken)
    cuda = numfuse.show_config(print_config=False)["cuda"]
    assert cuda["built"] is True and cuda["usable"] is False
    assert "no CUDA driver" in cuda["note"]


def test_cuda_without_devices_says_why(monkeypatch):
    _fake_cuda(
        monkeypatch,
        device_count=lambda: 0,
        device_count_error=lambda: "driver too old",
        runtime_version=lambda: 13000,
    )
    cuda = numfuse.show_config(print_config=False)["cuda"]
    assert cuda["usable"] is False and cuda["devices"] == []
    assert cuda["runtime_version"] == 13000
    assert "driver too old" in cuda["note"]


def test_cuda_devices_from_device_info(monkeypatch):
    _fake_cuda(monkeypatch, device_count=lambda: 2, device_info=lambda i: {"index": i})
    cuda = numfuse.show_config(print_config=False)["cuda"]
    assert cuda["usable"] is True and cuda["devices"] == [{"index": 0}, {"index": 1}]


def test_cpu_entries_of_numfuse_devices_are_not_cuda_devices(monkeypatch):
    _fake_cuda(monkeypatch)
    monkeypatch.setattr(
        numfuse, "devices", lambda: [{"kind": "cpu", "name": "x86_64"}], raising=False
    )
    cuda = numfuse.show_config(print_config=False)["cuda"]
    assert cuda["usable"] is False and cuda["devices"] == []
