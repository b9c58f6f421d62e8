"""The book as the book command renders it, for the tests that read it
(test_book_site.py): runs the CMake target `book_html` of a build folder, which
renders the book from results/ with warnings as errors when anything it
reads has changed since its last render (docs/build_book.py), and does
nothing when the book command has just rendered it.

CTest runs it as the test book.render (a CTest fixture, tests/CMakeLists.txt):

    python tests/python/book_render.py <cmake> <build dir>

It exits with the build's status, or 77 (CTest's skip) when Doxygen is
missing, as the tests that build a book are skipped then.
"""
from __future__ import annotations

import shutil
import subprocess
import sys

from fixture_site import DOXYGEN_MISSING, SKIP


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: book_render.py <cmake> <build dir>", file=sys.stderr)
        return 2
    if shutil.which("doxygen") is None:
        print(f"skipped: {DOXYGEN_MISSING}")
        return SKIP
    return subprocess.run([argv[1], "--build", argv[2], "--target", "book_html"]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
