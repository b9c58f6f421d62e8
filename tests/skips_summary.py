#!/usr/bin/env python3
"""Which tests CTest skipped, and why: one line each, for CI's closing summary.

    python3 tests/skips_summary.py [build dir]      (default: build)

Reads the JUnit file the test preset writes (CMakePresets.json,
outputJUnitFile: <build dir>/Testing/ctest-junit.xml). CTest's own log
(Testing/Temporary/LastTest.log) cannot tell: it records a test that exited
with its SKIP_RETURN_CODE as "Test Passed.". A test's reason is the first
line of its output that starts with "skipped: " (what tests/python/conftest.py
prints for a Python test file whose every test skipped), else the first
line of its output (a chapter binary's "no CUDA GPU found"), else CTest's
own message. Exits 1 when the file is missing or unreadable.
"""
from __future__ import annotations

import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

JUNIT = Path("Testing") / "ctest-junit.xml"
SKIP_LINE = "skipped: "


def reason(testcase: ElementTree.Element) -> str:
    lines = [line.strip() for line in (testcase.findtext("system-out") or "").splitlines()]
    lines = [line for line in lines if line]
    for line in lines:
        if line.startswith(SKIP_LINE):
            return line[len(SKIP_LINE):]
    if lines:
        return lines[0]
    skipped = testcase.find("skipped")
    return skipped.get("message", "") if skipped is not None else ""


def skipped_tests(junit: Path) -> list[tuple[str, str]]:
    """(name, reason) of every test the JUnit file marks skipped."""
    root = ElementTree.parse(junit).getroot()
    return [(case.get("name", "?"), reason(case)) for case in root.iter("testcase")
            if case.find("skipped") is not None]


def main(argv: list[str]) -> int:
    build_dir = Path(argv[1]) if len(argv) > 1 else Path("build")
    junit = build_dir / JUNIT
    try:
        skipped = skipped_tests(junit)
    except (OSError, ElementTree.ParseError) as error:
        print(f"skips: cannot read CTest's JUnit file {junit} ({error}); "
              "it is written by the test preset (ctest --preset default)")
        return 1
    if not skipped:
        print("skips: no test was skipped")
        return 0
    print(f"skips: {len(skipped)} test{'s' if len(skipped) != 1 else ''} skipped:")
    width = max(len(name) for name, _ in skipped)
    for name, why in skipped:
        print(f"  {name:{width}}  {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
