#!/usr/bin/env python3
"""Checks that every C++ and CUDA source of the project follows .clang-format.

    python3 tests/check_format.py [--fix]

Reads the sources under chapters/, code/ and tests/ (.cu, .cuh, .cpp, .hpp),
asks clang-format whether it would change any of them, and lists those it
would. Exit status 0 when none, 1 when some (run with --fix to format them
in place), 77 when clang-format is not installed (CTest then reports the
check skipped, not passed).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("chapters", "code", "tests")
SUFFIXES = {".cu", ".cuh", ".cpp", ".hpp"}
SKIP = 77


def sources() -> list[Path]:
    """The project's C++ and CUDA files, in order."""
    return sorted(path for folder in FOLDERS for path in (ROOT / folder).rglob("*")
                  if path.suffix in SUFFIXES and path.is_file())


def unformatted(clang_format: str, files: list[Path]) -> list[Path]:
    """The files clang-format would change."""
    return [path for path in files
            if subprocess.run([clang_format, "--dry-run", "--Werror", str(path)],
                              capture_output=True).returncode != 0]


def main() -> int:
    clang_format = shutil.which("clang-format")
    if clang_format is None:
        print("skipped: clang-format is not installed (Debian: apt-get install clang-format)")
        return SKIP
    files = sources()
    if "--fix" in sys.argv[1:]:
        subprocess.run([clang_format, "-i", *map(str, files)], check=True)
    bad = unformatted(clang_format, files)
    for path in bad:
        print(f"{path.relative_to(ROOT)}: not formatted as .clang-format says "
              f"(clang-format -i {path.relative_to(ROOT)})")
    print(f"format: {len(files) - len(bad)} of {len(files)} files follow .clang-format")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
