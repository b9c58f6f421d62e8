"""The bank grid (code/ladder_tools/figures/bankgrid.py, {ladder-bankgrid}): every access a
page draws as a bank grid, from bankmap's JSON: the grid has a row per
wavefront of the model, each active lane's words sit in their banks
(computed here from the lane's byte address), a cell is coloured conflicted
exactly when the model counts more than one word in its bank in its phase,
the text is legible and the figure fits the book's column.
"""

import re
from collections import Counter
from pathlib import Path

from figure_checks import (
    BUILD,
    COLUMN_PX,
    MODES,
    ROOT,
    drawn,
    natural_width_px,
    panel,
    text_problems,
)

# figure_checks first: it skips the file when matplotlib is missing.
# isort: split

import matplotlib.pyplot as plt
import pytest

from ladder_tools.analysis.bankmap import run_bankmap
from ladder_tools.figures import bankgrid

BANKGRID = re.compile(r"^```\{ladder-bankgrid\}\s+(.+)$")


def bankgrid_directives() -> list[tuple[str, list[str], list[str]]]:
    """(page and line, access names, titles) of every {ladder-bankgrid}."""
    found = []
    for page in sorted((ROOT / "chapters").glob("**/*.md")):
        lines = page.read_text().splitlines()
        for number, line in enumerate(lines, 1):
            match = BANKGRID.match(line)
            if not match:
                continue
            names = match.group(1).split()
            titles = names
            for option in lines[number:number + 3]:
                if option.startswith(":titles:"):
                    titles = [t.strip() for t in option[len(":titles:"):].split(";")]
            found.append((f"{page.relative_to(ROOT)}:{number}", names, titles))
    return found


BANKGRID_CASES = bankgrid_directives()


def bankmap_tool() -> Path:
    tool = BUILD / "bin" / "bankmap"
    if not tool.is_file():
        pytest.skip(f"bankmap is not built in {BUILD}/bin")
    return tool


def expected_words(report: dict) -> dict[tuple[int, int], bool]:
    """(phase, word) -> conflicted, from the lanes' byte addresses and the
    model's phases: a word is conflicted when its bank has more than one
    distinct word in the phase."""
    words_per_lane = report["width_bytes"] // 4
    found = {}
    for index, phase in enumerate(report["phases"]):
        lanes = report["lanes"][phase["first_lane"]:phase["first_lane"] + phase["lanes"]]
        words = {int(lane["address"]) // 4 + w for lane in lanes if lane["active"]
                 for w in range(words_per_lane)}
        per_bank = Counter(word % 32 for word in words)
        assert [per_bank.get(b, 0) for b in range(32)] == phase["words_per_bank"]
        found.update({(index, word): per_bank[word % 32] > 1 for word in words})
    return found


def check_bankgrid(name: str, reports: list[dict], titles: list[str], mode: str) -> list[str]:
    grids = [bankgrid.bank_grid(report, title)
             for report, title in zip(reports, titles, strict=True)]
    figure, renderer = drawn(lambda: bankgrid.bankgrid_figure(grids, mode))
    problems = []
    try:
        problems += text_problems(figure, renderer, mode)
        for index, (report, title) in enumerate(zip(reports, titles, strict=True)):
            axes = panel(figure, f"bankgrid-{index}")
            rows = abs(axes.get_ylim()[0] - axes.get_ylim()[1])
            if rows != report["wavefronts"]:
                problems.append(f"{report['name']}: {rows} rows, the model counts "
                                f"{report['wavefronts']} wavefronts")
            s = "" if report["wavefronts"] == 1 else "s"
            if axes.get_title(loc="left") != f"{title}: {report['wavefronts']} wavefront{s}":
                problems.append(f"{report['name']}: titled {axes.get_title(loc='left')!r}")
            if re.search(r"\b(ch\d\d|transpose)[\w-]*\.", title):
                problems.append(f"{title!r} shows an internal access name")
            # Each drawn cell: its banks, its row's phase, its colour; each
            # word of each active lane drawn once.
            phase_of_row = {}
            for i, phase in enumerate(report["phases"]):
                first = sum(p["wavefronts"] for p in report["phases"][:i])
                phase_of_row.update({first + r: i for r in range(phase["wavefronts"])})
            labels = [t for t in axes.texts if t.get_gid() == "lane"]
            cells = [p for p in axes.patches if p.get_gid() in ("word", "word-conflicted")]
            if len(labels) != len(cells):
                problems.append(f"{report['name']}: {len(cells)} cells, {len(labels)} labels")
            expected = expected_words(report)
            drawn_words = Counter()
            for cell, label in zip(cells, labels, strict=True):
                first_bank, row = int(cell.get_x()), int(cell.get_y())
                banks = round(cell.get_width())
                lane = int(re.match(r"\d+", label.get_text()).group())
                address = int(report["lanes"][lane]["address"]) // 4
                phase = phase_of_row[row]
                for b in range(first_bank, first_bank + banks):
                    word = next((w for w in range(address, address + report["width_bytes"] // 4)
                                 if w % 32 == b), None)
                    if word is None:
                        problems.append(f"{report['name']}: lane {lane} drawn in bank {b}")
                        continue
                    drawn_words[(phase, word)] += 1
                    if (cell.get_gid() == "word-conflicted") != expected[(phase, word)]:
                        problems.append(f"{report['name']}: lane {lane}'s word in bank {b} "
                                        f"coloured {cell.get_gid()}")
            if drawn_words != Counter(expected.keys()):
                problems.append(f"{report['name']}: the words drawn are not each lane's "
                                "words once")
        width = natural_width_px(bankgrid.draw_bankgrid(grids, mode))
        if width > COLUMN_PX:
            problems.append(f"{width} px wide, the column is {COLUMN_PX}")
    finally:
        plt.close(figure)
    return [f"{name}, {mode}: {p}" for p in problems]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where,names,titles", BANKGRID_CASES,
                         ids=[c[0] for c in BANKGRID_CASES])
def test_the_bank_grids_of_the_pages_are_the_models(where, names, titles, mode):
    tool = bankmap_tool()
    assert len(titles) == len(names), f"{where}: a title per access"
    reports = [run_bankmap(tool, name) for name in names]
    assert check_bankgrid(where, reports, titles, mode) == []


# Accesses no page draws: 8- and 16-byte ones in phases, with broadcast.
WIDE_ACCESSES = [["ch10.a-load", "ch07.b-load", "ch12.a-load"]]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("names", WIDE_ACCESSES, ids=["8-and-16-byte"])
def test_the_bank_grid_of_wide_accesses(names, mode):
    tool = bankmap_tool()
    reports = [run_bankmap(tool, name) for name in names]
    reports.append(run_bankmap(tool, stride=4, width=16))
    titles = [f"access {i}" for i in range(len(reports))]
    assert check_bankgrid("wide", reports, titles, mode) == []


# Chapter 16's load of B^T's fragment, the three ways bankmap computes it:
# drawn as its page draws them, whichever of them the page names.
CH16_BT_LOADS = ["ch16.bt-load.unswizzled", "ch16.bt-load.in-order", "ch16.bt-load"]


@pytest.mark.parametrize("mode", MODES)
def test_the_bank_grids_of_chapter16s_bt_loads(mode):
    tool = bankmap_tool()
    reports = [run_bankmap(tool, name) for name in CH16_BT_LOADS]
    assert [report["wavefronts"] for report in reports] == [4, 2, 1]
    titles = ["without a swizzle", "columns in order", "columns spread"]
    assert check_bankgrid("ch16", reports, titles, mode) == []
    assert [bankgrid.bank_grid(r, t).rows for r, t in zip(reports, titles, strict=True)] == [
        4, 2, 1]


def test_the_transpose_reads_take_32_and_1_wavefronts():
    """Counted here from the lanes' addresses (the most distinct words any
    bank is asked for), then checked against the model and the grid."""
    tool = bankmap_tool()
    for name, count in (("transpose.32x32.tile-read", 32), ("transpose.32x33.tile-read", 1)):
        report = run_bankmap(tool, name)
        words = {int(lane["address"]) // 4 for lane in report["lanes"] if lane["active"]}
        busiest = max(Counter(word % 32 for word in words).values())
        assert busiest == count == report["wavefronts"]
        assert bankgrid.bank_grid(report, name).rows == count


def test_the_pages_draw_the_bank_grids_the_issue_asks_for():
    drawn_sets = {tuple(names) for _, names, _ in BANKGRID_CASES}
    assert ("ch07.a-store",) in drawn_sets
    assert ("ch09.a-store", "ch10.a-store", "ch10-swizzled.a-store") in drawn_sets
    assert any(names[:2] == ("transpose.32x32.tile-read", "transpose.32x33.tile-read")
               for names in drawn_sets)
