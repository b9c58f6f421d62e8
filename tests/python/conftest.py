"""Shared fixtures for the Python-side tests."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from common import ROOT


@pytest.fixture(scope="session")
def build_dir() -> Path:
    """The CMake build folder the chapters were built in (CTest passes it)."""
    path = Path(os.environ.get("LADDER_BUILD_DIR", ROOT / "build"))
    if not (path / "bin").is_dir():
        pytest.skip(f"no built chapters in {path}/bin: "
                    "build first (cmake --workflow --preset test)")
    return path


@pytest.fixture(scope="session")
def book_python() -> str:
    """An interpreter with the book's packages, for the tests that build the
    book (test_book.py, test_book_site.py); they skip without Doxygen."""
    import fixture_site
    if shutil.which("doxygen") is None:
        pytest.skip(fixture_site.DOXYGEN_MISSING)
    return fixture_site.book_python()


# -- A file whose every test skipped is reported skipped, not passed ---------
#
# CTest runs each test file as one entry (tests/CMakeLists.txt) and reports
# an entry that exits with SKIP_RETURN_CODE (77) as skipped. pytest exits 0
# when everything skipped, which CTest would call passed; this hook turns
# such a session (something skipped, nothing passed, failed or errored) into
# exit status 77, and prints each reason on its own line starting with
# "skipped: ", which tests/skips_summary.py shows in CI's closing summary.

SKIP_EXIT_STATUS = 77
SKIP_LINE = "skipped: "


def all_skipped_reasons(stats: dict) -> list[str] | None:
    """The skip reasons when the session's reports (the terminal reporter's
    stats: outcome -> reports) show that something skipped and nothing
    else ran; None otherwise."""
    ran = ("passed", "failed", "error", "xfailed", "xpassed")
    skipped = stats.get("skipped", [])
    if not skipped or any(stats.get(outcome) for outcome in ran):
        return None
    reasons = []
    for report in skipped:
        longrepr = getattr(report, "longrepr", None)
        whole = isinstance(longrepr, tuple) and len(longrepr) == 3
        reason = longrepr[2] if whole else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        if reason not in reasons:
            reasons.append(reason)
    return reasons


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    finished = (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
    if reporter is None or exitstatus not in finished:
        return
    reasons = all_skipped_reasons(reporter.stats)
    if reasons is None:
        return
    reporter.write("\n")
    for reason in reasons:
        reporter.write_line(SKIP_LINE + reason)
    session.exitstatus = SKIP_EXIT_STATUS
