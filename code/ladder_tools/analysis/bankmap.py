"""Lane-to-bank maps of warp-wide shared-memory accesses, from build/bin/bankmap.

The bank model is C++ (code/include/ladder/bank_model.hpp), computed from
the chapters' own index functions; its front end, bankmap, prints a named
access (``bankmap --list``) or a strided one as JSON. This module runs it
(cached) and lays its report out for the book.
"""

from __future__ import annotations

from pathlib import Path

from ladder_tools.analysis.binaries import AnalysisError, tool_json


def run_bankmap(tool: Path, name: str | None = None, stride: int | None = None,
                width: int = 4) -> dict:
    """One access as ``bankmap --json`` reports it, cached per call."""
    if (name is None) == (stride is None):
        raise AnalysisError("give an access name or a stride, not both and not neither")
    arguments = ["--access", name] if name else ["--stride", str(stride), "--width", str(width)]

    reports = tool_json(tool, arguments)
    if len(reports) != 1:
        raise AnalysisError(f"bankmap returned {len(reports)} reports for {arguments}")
    return reports[0]


def bank_span(bank: int, width_bytes: int) -> str:
    """The banks a lane's access covers: '5', '4\u20135', '4\u20137'."""
    banks = max(1, width_bytes // 4)
    return str(bank) if banks == 1 else f"{bank}\u2013{bank + banks - 1}"


def bank_rows(report: dict, per_row: int = 8) -> list[list[str]]:
    """The lanes in rows of ``per_row`` cells 'lane\u2192bank' ('lane: off' if inactive)."""
    cells = [f"{lane['lane']}\u2192{bank_span(lane['bank'], report['width_bytes'])}"
             if lane["active"] else f"{lane['lane']}: off" for lane in report["lanes"]]
    cells += [""] * (-len(cells) % per_row)
    return [cells[i:i + per_row] for i in range(0, len(cells), per_row)]


def _number(value: float) -> str:
    return f"{value:g}" if value == round(value) else f"{value:.2f}"


def bank_summary(report: dict) -> str:
    """'32 wavefronts, 32-way (ideal 1)'; '1 wavefront, 1-way (ideal 1)'."""
    count = report["wavefronts"]
    return (f"{count} wavefront{'' if count == 1 else 's'}, "
            f"{_number(report['conflict_degree'])}-way "
            f"(ideal {report['ideal_wavefronts']})")
