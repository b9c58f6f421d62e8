"""The global addresses one warp touches in one step, from build/bin/warpmap.

warpmap (code/tools/warpmap.cu) includes the kernel headers of chapters 01,
02 and 07 and computes each lane's row and column with the chapters' own
``constexpr`` index functions, then the byte address, the 32-byte sector and
the 128-byte line. This module runs it (cached) and says which accesses make
each chapter's figure.
"""

from __future__ import annotations

from pathlib import Path

from ladder_tools.analysis.binaries import AnalysisError, tool_json

#: The accesses one chapter's figure draws, in order: one warp-wide step.
CHAPTER_ACCESSES = {
    "01-naive": ("ch01.a-load", "ch01.b-load", "ch01.c-store"),
    "02-coalescing": ("ch02.a-load", "ch02.b-load", "ch02.c-store"),
    "07-vectorized": ("ch07.a-load",),
}

#: The lengths of the rows of A (K) and of B and C (N) the figures use, in
#: floats: small enough that a 32-row excerpt of a matrix fits on the page.
DEFAULT_K = DEFAULT_N = 64


def run_warpmap(tool: Path, names: list[str] | tuple[str, ...], k: int = DEFAULT_K,
                n: int = DEFAULT_N) -> list[dict]:
    """The accesses ``names`` as ``warpmap --json`` reports them, cached per call."""
    arguments = ["--access", *names, "--K", str(k), "--N", str(n)]

    reports = tool_json(tool, arguments)
    if len(reports) != len(names):
        raise AnalysisError(f"warpmap returned {len(reports)} reports for {list(names)}")
    return reports


def chapter_accesses(tool: Path, slug: str, k: int = DEFAULT_K,
                     n: int = DEFAULT_N) -> list[dict]:
    """The accesses of chapter ``slug``'s figure (CHAPTER_ACCESSES)."""
    if slug not in CHAPTER_ACCESSES:
        raise AnalysisError(f"no warp-access figure for {slug}: there is one for "
                            f"{', '.join(CHAPTER_ACCESSES)}")
    return run_warpmap(tool, CHAPTER_ACCESSES[slug], k, n)


def sector_words(report: dict) -> str:
    """'32 sectors in 32 lines', '1 sector in 1 line'."""
    sectors, lines = len(report["sectors"]), len(report["lines"])
    return (f"{sectors} sector{'s' if sectors != 1 else ''} in "
            f"{lines} line{'s' if lines != 1 else ''}")


def is_broadcast(report: dict) -> bool:
    """Whether every lane reads the same address."""
    return len({lane["address"] for lane in report["lanes"]}) == 1
