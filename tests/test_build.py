"""Where the build takes xsimd from (CMakeLists.txt, NUMFUSE_XSIMD; docs/install.md).

These configure (and two of them build) the core library in build/test-build/ from the
xsimd snapshots in ../shared/deps (NUMFUSE_DEPS_DIR overrides): offline, through
FETCHCONTENT_SOURCE_DIR_XSIMD. Skipped without cmake, a C++ compiler or the snapshots.
The two builds take a few minutes on a cold compiler cache.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The checkout's sibling shared/deps (a worktree one level deeper: its parent's sibling).
DEPS = next(
    (
        path
        for path in (ROOT.parent / "shared" / "deps", ROOT.parent.parent / "shared" / "deps")
        if path.is_dir()
    ),
    ROOT.parent / "shared" / "deps",
)
DEPS = pathlib.Path(os.environ.get("NUMFUSE_DEPS_DIR", DEPS))
WORK = ROOT / "build" / "test-build"
CMAKE = shutil.which(
    "cmake", path=f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
)
CXX = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
NINJA = shutil.which(
    "ninja", path=f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
)

pytestmark = pytest.mark.skipif(
    not (CMAKE and CXX), reason="needs cmake and a C++ compiler (source checkout builds only)"
)


def xsimd_copy(version: str) -> pathlib.Path:
    """The extracted snapshot of xsimd <version> (extracted once into build/test-build)."""
    archive = DEPS / f"xsimd-{version}.tar.gz"
    if not archive.is_file():
        pytest.skip(f"no xsimd snapshot {archive}")
    target = WORK / "deps" / f"xsimd-{version}"
    if not (target / "include" / "xsimd" / "xsimd.hpp").is_file():
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            top = {m.name.split("/")[0] for m in tar.getmembers()}
            tar.extractall(target.parent / "tmp")  # noqa: S202 (our own snapshot)
        (target.parent / "tmp" / top.pop()).rename(target)
        shutil.rmtree(target.parent / "tmp", ignore_errors=True)
    return target


def fake_xsimd(version: str) -> pathlib.Path:
    """An include folder that looks like xsimd <version> (configure-only tests)."""
    major, minor, patch = version.split(".")
    include = WORK / "deps" / f"fake-xsimd-{version}" / "include"
    (include / "xsimd" / "config").mkdir(parents=True, exist_ok=True)
    (include / "xsimd" / "xsimd.hpp").write_text('#error "fake xsimd: never compiled"\n')
    (include / "xsimd" / "config" / "xsimd_config.hpp").write_text(
        f"#define XSIMD_VERSION_MAJOR {major}\n#define XSIMD_VERSION_MINOR {minor}\n"
        f"#define XSIMD_VERSION_PATCH {patch}\n"
    )
    return include


def configure(name: str, *options: str, check: bool = True) -> subprocess.CompletedProcess:
    build = WORK / name
    shutil.rmtree(build, ignore_errors=True)
    command = [CMAKE, "-S", str(ROOT), "-B", str(build), f"-DCMAKE_CXX_COMPILER={CXX}"]
    if NINJA:
        command += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={NINJA}"]
    command += [
        "-DNUMFUSE_BUILD_PYTHON=OFF",
        "-DNUMFUSE_CUDA=OFF",
        "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
    ]
    command += ["-DFETCHCONTENT_FULLY_DISCONNECTED=ON", *options]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if check:
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def build_core(name: str) -> list:
    build = WORK / name
    result = subprocess.run(
        [CMAKE, "--build", str(build), "--target", "numfuse_core", "-j", str(os.cpu_count() or 2)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    return json.loads((build / "compile_commands.json").read_text())


def test_no_installed_xsimd_fetches_the_pinned_release():
    copy = xsimd_copy("8.1.0")
    # CMAKE_IGNORE_PATH hides /usr/include's xsimd from find_path: as on a machine without it.
    result = configure(
        "auto-none",
        "-DNUMFUSE_XSIMD=AUTO",
        "-DCMAKE_IGNORE_PATH=/usr/include;/usr/local/include",
        f"-DFETCHCONTENT_SOURCE_DIR_XSIMD={copy}",
    )
    assert "numfuse: no installed xsimd found; fetching xsimd 8.1.0" in result.stdout
    assert (
        f"numfuse: xsimd 8.1.0 fetched (local copy FETCHCONTENT_SOURCE_DIR_XSIMD): {copy}/include"
        in (result.stdout)
    )
    commands = build_core("auto-none")
    assert all(f"-isystem {copy}/include" in c["command"] for c in commands), commands[0]


def test_fetched_copy_wins_over_usr_include():
    # 14.3.0 fetched while /usr/include may hold Debian's 8.1.0: src/core/xsimd_version.cpp
    # stops the build unless the compiler sees 14.3.0 everywhere.
    copy = xsimd_copy("14.3.0")
    result = configure(
        "fetch-14", "-DNUMFUSE_XSIMD=FETCH", f"-DFETCHCONTENT_SOURCE_DIR_XSIMD={copy}"
    )
    assert "numfuse: xsimd 14.3.0 fetched" in result.stdout
    commands = build_core("fetch-14")
    version_check = [c for c in commands if c["file"].endswith("xsimd_version.cpp")]
    assert version_check and "-DNUMFUSE_XSIMD_EXPECT_MAJOR=14" in version_check[0]["command"]


def test_unsupported_installed_version_is_fetched_instead():
    copy = xsimd_copy("8.1.0")
    fake = fake_xsimd("11.0.0")
    result = configure(
        "auto-unsupported",
        "-DNUMFUSE_XSIMD=AUTO",
        f"-DNUMFUSE_XSIMD_INCLUDE={fake}",
        f"-DFETCHCONTENT_SOURCE_DIR_XSIMD={copy}",
    )
    assert f"xsimd '11.0.0' in {fake} is not a supported version" in result.stdout
    assert "fetching xsimd 8.1.0" in result.stdout


def test_system_mode_refuses_an_unsupported_version():
    fake = fake_xsimd("11.0.0")
    result = configure(
        "system-unsupported",
        "-DNUMFUSE_XSIMD=SYSTEM",
        f"-DNUMFUSE_XSIMD_INCLUDE={fake}",
        check=False,
    )
    assert result.returncode != 0
    assert "NUMFUSE_XSIMD=SYSTEM: xsimd '11.0.0'" in result.stderr


def test_bad_mode_is_a_clear_error():
    result = configure("bad-mode", "-DNUMFUSE_XSIMD=sometimes", check=False)
    assert result.returncode != 0
    assert "NUMFUSE_XSIMD must be AUTO, SYSTEM or FETCH (got 'sometimes')" in result.stderr


def test_version_check_rejects_other_headers():
    # The compile-time check itself: headers of one version, CMake expecting another.
    copy = xsimd_copy("8.1.0")
    result = subprocess.run(
        [
            CXX,
            "-std=c++17",
            "-fsyntax-only",
            "-isystem",
            str(copy / "include"),
            "-DNUMFUSE_XSIMD_EXPECT_MAJOR=14",
            "-DNUMFUSE_XSIMD_EXPECT_MINOR=3",
            "-DNUMFUSE_XSIMD_EXPECT_PATCH=0",
            str(ROOT / "src" / "core" / "xsimd_version.cpp"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert "not the version CMake chose" in result.stderr
