"""The warp-access figure (code/ladder_tools/figures/warp_access.py, {ladder-warp-access}): what
build/bin/warpmap computes with the chapters' index functions, checked
against the lesson counted here from the addresses: chapter 01's lanes have
32 rows of C in one column (32 sectors of A, a broadcast of B), chapter
02's 32 columns of one row (a broadcast of A, 4 sectors of one line of B),
chapter 07's float4s fill whole sectors and land transposed in As; the
expressions the tool quotes are still the kernels'; and the figure is
legible in both modes and fits the book's column.
"""

import re
from pathlib import Path

from figure_checks import (
    BUILD,
    COLUMN_PX,
    MODES,
    ROOT,
    drawn,
    natural_width_px,
    panel,
    patches,
    text_problems,
)

# figure_checks first: it skips the file when matplotlib is missing.
# isort: split

import matplotlib.pyplot as plt
import pytest

from ladder_tools.analysis.warpmap import CHAPTER_ACCESSES, chapter_accesses, run_warpmap
from ladder_tools.figures import warp_access

WARP_ACCESS = re.compile(r"^```\{ladder-warp-access\}\s+(.+)$")


def warpmap_tool() -> Path:
    tool = BUILD / "bin" / "warpmap"
    if not tool.is_file():
        pytest.skip(f"warpmap is not built in {BUILD}/bin")
    return tool


def counted(report: dict) -> tuple[int, int]:
    """(sectors, lines) the lanes' bytes fall in, counted here."""
    width = report["width_bytes"]
    spans = [range(int(lane["address"]), int(lane["address"]) + width)
             for lane in report["lanes"]]
    return (len({b // 32 for span in spans for b in span}),
            len({b // 128 for span in spans for b in span}))


@pytest.mark.parametrize("k,n", [(64, 64), (4096, 4096)])
def test_warpmap_counts_chapter_01s_32_sectors_against_chapter_02s_4(k, n):
    tool = warpmap_tool()
    found = {r["name"]: r for r in run_warpmap(tool, [*CHAPTER_ACCESSES["01-naive"],
                                                      *CHAPTER_ACCESSES["02-coalescing"]], k, n)}
    # The lanes' elements: chapter 01 down column 0, chapter 02 along row 0.
    for name, report in found.items():
        rows_cols = [(lane["row"], lane["col"]) for lane in report["lanes"]]
        lanes = range(32)
        expected = {
            "ch01.a-load": [(lane, 0) for lane in lanes], "ch01.b-load": [(0, 0)] * 32,
            "ch01.c-store": [(lane, 0) for lane in lanes],
            "ch02.a-load": [(0, 0)] * 32, "ch02.b-load": [(0, lane) for lane in lanes],
            "ch02.c-store": [(0, lane) for lane in lanes]}[name]
        assert rows_cols == expected, name
        row_floats = k if report["matrix"] == "A" else n
        assert [int(lane["address"]) for lane in report["lanes"]] == [
            4 * (row * row_floats + col) for row, col in rows_cols], name
        assert (len(report["sectors"]), len(report["lines"])) == counted(report), name
    assert counted(found["ch01.a-load"]) == (32, 32)
    assert counted(found["ch01.b-load"]) == (1, 1)
    assert counted(found["ch01.c-store"]) == (32, 32)
    assert counted(found["ch02.a-load"]) == (1, 1)
    assert counted(found["ch02.b-load"]) == (4, 1)
    assert counted(found["ch02.c-store"]) == (4, 1)


def test_warpmap_chapter_07s_float4s_fill_sectors_and_land_transposed():
    tool = warpmap_tool()
    (report,) = chapter_accesses(tool, "07-vectorized")
    # Two lanes per row of the A tile, BK = 8 floats = one 32-byte sector each.
    assert [(lane["row"], lane["col"]) for lane in report["lanes"]] == [
        (lane // 2, 4 * (lane % 2)) for lane in range(32)]
    assert counted(report) == (16, 16) == (len(report["sectors"]), len(report["lines"]))
    assert report["distinct_bytes"] == 32 * 16
    shared = report["shared"]
    assert (shared["rows"], shared["cols"]) == (8, 128)
    stores = shared["stores"]
    assert len(stores) == 128 and len({s["index"] for s in stores}) == 128
    by_lane = {lane["lane"]: lane for lane in report["lanes"]}
    for s in stores:
        lane = by_lane[s["lane"]]
        # Element e of the float4 at A tile (m, k) goes to As[k + e][m].
        assert (s["row"], s["col"]) == (lane["col"] + s["element"], lane["row"])
        assert s["index"] == s["row"] * shared["cols"] + s["col"]


def test_warpmap_quotes_the_kernels_own_expressions():
    """The element-to-address step is the kernel's row-major expression,
    written once in the tool: the kernel must still say what the tool quotes."""
    tool = warpmap_tool()
    for slug, names in CHAPTER_ACCESSES.items():
        source = " ".join((ROOT / "chapters" / slug / "kernel.cuh").read_text().split())
        for report in run_warpmap(tool, names):
            quoted = warp_access.expression(report)
            assert quoted in source, f"{slug}'s kernel no longer says {quoted}"


def warp_access_directives() -> list[tuple[str, list[str]]]:
    found = []
    for page in sorted((ROOT / "chapters").glob("**/*.md")):
        for number, line in enumerate(page.read_text().splitlines(), 1):
            if match := WARP_ACCESS.match(line):
                found.append((f"{page.relative_to(ROOT)}:{number}", match.group(1).split()))
    return found


WARP_ACCESS_CASES = warp_access_directives()


def test_the_pages_draw_the_warp_accesses_the_issue_asks_for():
    pages = {where.split(":")[0]: slugs for where, slugs in WARP_ACCESS_CASES}
    assert pages.get("chapters/01-naive/chapter.md") == ["01-naive"]
    assert pages.get("chapters/02-coalescing/chapter.md") == ["01-naive", "02-coalescing"]
    assert pages.get("chapters/07-vectorized/chapter.md") == ["07-vectorized"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where,slugs", WARP_ACCESS_CASES, ids=[w for w, _ in WARP_ACCESS_CASES])
def test_the_warp_access_figure_is_legible(where, slugs, mode):
    tool = warpmap_tool()
    columns = [(slug, chapter_accesses(tool, slug)) for slug in slugs]
    figure, renderer = drawn(lambda: warp_access.warp_access_figure(columns, mode))
    try:
        problems = text_problems(figure, renderer, mode)
        for _, reports in columns:
            for report in reports:
                if "shared" in report:
                    drawn_floats = patches(figure, "lane-float4")
                    if len(drawn_floats) != 32:
                        problems.append(f"{len(drawn_floats)} float4s drawn, not 32")
                    shown = panel(figure, "panel-shared").get_xlim()[1]
                    stored = [s for s in report["shared"]["stores"] if s["col"] < shown]
                    if len(patches(figure, "stored-float")) != len(stored):
                        problems.append("the stored floats drawn are not the tool's")
                    axes = panel(figure, "panel-global")
                else:
                    axes = panel(figure, f"panel-{report['name']}")
                sectors = [p for p in axes.patches if p.get_gid() == "sector"]
                if len(sectors) != len(report["sectors"]):
                    problems.append(f"{report['name']}: {len(sectors)} sectors drawn, the tool "
                                    f"counts {len(report['sectors'])}")
                if sorted(axes.get_xlim()) != [0, report["row_floats"]]:
                    problems.append(f"{report['name']}: the panel is not a row of A/B/C wide")
        alt = warp_access.alt_text(columns)
        for _, reports in columns:
            for report in reports:
                if warp_access.sector_words(report) not in alt:
                    problems.append(f"the alt text does not count {report['name']}'s sectors")
        assert not problems, "\n".join(f"{where}, {mode}: {p}" for p in problems)
        width = natural_width_px(warp_access.draw_warp_access(columns, mode))
        assert width <= COLUMN_PX, f"{where}: {width} px wide, the column is {COLUMN_PX}"
    finally:
        plt.close(figure)
