"""pytest plugin (`-p pytest_file_times`): after the run, the time spent in each test file.

Setup, call and teardown of every test count towards its file; collection does not. Used by
`make test-aarch64` to show which files are costly under qemu-aarch64.
"""

from __future__ import annotations

from collections import defaultdict

_seconds: dict[str, float] = defaultdict(float)
_tests: dict[str, int] = defaultdict(int)


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    _seconds[path] += report.duration
    if report.when == "call" or (report.when == "setup" and report.skipped):
        _tests[path] += 1


def pytest_terminal_summary(terminalreporter):
    if not _seconds:
        return
    terminalreporter.section("time per test file")
    for path, seconds in sorted(_seconds.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(f"{seconds:9.1f} s  {_tests[path]:6d} tests  {path}")
    terminalreporter.write_line(f"{sum(_seconds.values()):9.1f} s  total")
