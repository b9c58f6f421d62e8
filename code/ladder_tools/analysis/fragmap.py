"""Chapter 14's mma fragments and the banks of the loads that feed them, from
build/bin/fragmap.

fragmap (code/tools/fragmap.cu) includes chapter 14's kernel header and
computes, with the chapter's own ``constexpr`` functions, which element of
the A (16 x 8), B (8 x 8) and C (16 x 8) tiles of one mma.sync.m16n8k8 each
lane holds in each register, and for every register of the A and B
fragments the word each lane loads from As or Bs, its bank, and the
wavefronts the bank model counts, with the chapter's padded rows and with
unpadded ones. Each load is in bankmap's JSON form, so code/ladder_tools/figures/bankgrid.py
draws it. This module runs the tool (cached) and picks what the figures show.
"""

from __future__ import annotations

from pathlib import Path

from ladder_tools.analysis.binaries import AnalysisError, tool_json

#: The loads the bank figure draws: register 0 of the A and of the B
#: fragment, each unpadded, padded and swizzled (the other registers' loads
#: take the same wavefronts, as fragmap prints).
SHOWN_LOADS = ("A.r0.unpadded", "A.r0.padded", "A.r0.swizzled", "B.r0.unpadded", "B.r0.padded",
               "B.r0.swizzled")

#: Lanes per group: lane = 4 * g + t, and the group g picks the row of A and
#: C, and the column of B, that the lane holds.
GROUP_LANES = 4


def run_fragmap(tool: Path) -> dict:
    """What ``fragmap --json`` prints, cached."""
    report = tool_json(tool, [])
    if not isinstance(report, dict) or "tiles" not in report or "loads" not in report:
        raise AnalysisError(f"{tool} --json printed no tiles and loads")
    return report


def lane_group(lane: int) -> int:
    """The group g = lane / 4 of a lane."""
    return lane // GROUP_LANES


def tile(report: dict, name: str) -> dict:
    """The tile ``name`` ("A", "B" or "C") of a fragmap report."""
    for found in report["tiles"]:
        if found["name"] == name:
            return found
    raise AnalysisError(f"fragmap reports no {name} tile")


def load(report: dict, name: str) -> dict:
    """The load ``name`` ("A.r0.padded", ...) of a fragmap report."""
    for found in report["loads"]:
        if found["name"] == name:
            return found
    known = ", ".join(found["name"] for found in report["loads"])
    raise AnalysisError(f"fragmap reports no load {name!r} (it has: {known})")


def load_title(found: dict) -> str:
    """A load in words: 'A fragment, rows of 32 floats (unpadded)'."""
    return f"{found['operand']} fragment, rows of {found['stride']} floats ({found['layout']})"


def shown_loads(report: dict) -> list[dict]:
    """The loads of SHOWN_LOADS, in that order."""
    return [load(report, name) for name in SHOWN_LOADS]
