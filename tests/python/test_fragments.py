"""Chapter 14's fragments figure ({ladder-fragments}) draws what the chapter's
code says, and build/bin/fragmap says what the PTX ISA says.

- fragmap's tiles are the PTX ISA's layout of mma.m16n8k8 with .tf32
  operands, written out here from the ISA's formulas (groupID = lane >> 2,
  threadID_in_group = lane % 4), not from the chapter's functions;
- each load's words are row * stride + col of the element the lane holds,
  its bank is the word mod 32, and its wavefronts are the most distinct
  words any bank is asked for, counted here: 1 for every padded load, 8 for
  the unpadded A loads, 4 for the unpadded B loads, 1 for the swizzled ones;
- the tiles figure labels every element (320 of them) with the tool's lane
  and register, in a cell of its group's colour, in the page's ink, with no
  two labels overlapping, and stays legible at a phone's width;
- the loads figure puts each lane's label in the tool's bank, in as many rows
  as the tool counts wavefronts;
- chapter 14's page draws both.
"""

import os
import re
from collections import Counter
from itertools import combinations
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("matplotlib")

import matplotlib.pyplot as plt  # noqa: E402  (after importorskip: skipped without matplotlib)
from matplotlib.colors import to_rgba  # noqa: E402

from ladder_tools.analysis.fragmap import SHOWN_LOADS, load, run_fragmap, tile  # noqa: E402
from ladder_tools.figures import bankgrid, fragments, style  # noqa: E402
from ladder_tools.figures.tiling import natural_width_px  # noqa: E402

BUILD = Path(os.environ.get("LADDER_BUILD_DIR", ROOT / "build"))
MODES = ("light", "dark")
PAGE = ROOT / "chapters" / "14-tf32" / "chapter.md"
#: The narrowest desktop column of the book (furo's 46em at 16 px), and the
#: content column of a 390 px phone.
COLUMN_PX = 736
PHONE_COLUMN_PX = 358


@pytest.fixture(scope="module")
def report() -> dict:
    tool = BUILD / "bin" / "fragmap"
    if not tool.is_file():
        pytest.skip(f"fragmap is not built in {BUILD}/bin")
    return run_fragmap(tool)


# -- The tool against the PTX ISA ------------------------------------------------


def ptx_layout(name: str, lane: int, register: int) -> tuple[int, int]:
    """(row, col) of register ``register`` of lane ``lane`` in the PTX ISA's
    figures for mma.m16n8k8, .tf32 A and B, .f32 C and D."""
    group, thread = lane >> 2, lane % 4
    if name == "A":
        return (group + 8 * (register % 2), thread + 4 * (register // 2))
    if name == "B":
        return (thread + 4 * register, group)
    return (group + 8 * (register // 2), 2 * thread + (register & 1))


def test_the_tiles_are_the_ptx_isas_layout(report):
    shapes = {"A": (16, 8, 4), "B": (8, 8, 2), "C": (16, 8, 4)}
    for name, (rows, cols, registers) in shapes.items():
        found = tile(report, name)
        assert (found["rows"], found["cols"], found["registers"]) == (rows, cols, registers)
        held = {(e["lane"], e["register"]): (e["row"], e["col"]) for e in found["elements"]}
        assert held == {(lane, r): ptx_layout(name, lane, r)
                        for lane in range(32) for r in range(registers)}, name
        assert sorted(held.values()) == [(r, c) for r in range(rows) for c in range(cols)]


def counted_wavefronts(found: dict) -> int:
    words = {int(lane["address"]) // 4 for lane in found["lanes"]}
    return max(Counter(word % 32 for word in words).values())


def swizzled_column(operand: str, row: int, col: int) -> int:
    """Where chapter 14's swizzled layout stores column `col` of a tile row:
    its 16-byte piece col // 4 moves to piece col // 4 ^ (row % 8) in As and
    to col // 4 ^ (2 * (row % 4)) in Bs, written out here from the chapter's
    [smem-index] comment."""
    moved = (col // 4) ^ (row % 8 if operand == "A" else 2 * (row % 4))
    return moved * 4 + col % 4


def test_the_loads_banks_and_wavefronts(report):
    chosen = report["chosen"]
    expected = {("A", "padded"): 1, ("B", "padded"): 1, ("A", "unpadded"): 8,
                ("B", "unpadded"): 4, ("A", "swizzled"): 1, ("B", "swizzled"): 1}
    strides = {("A", "padded"): chosen["A_STRIDE"], ("B", "padded"): chosen["B_STRIDE"],
               ("A", "unpadded"): chosen["BK"], ("B", "unpadded"): chosen["BN"],
               ("A", "swizzled"): chosen["BK"], ("B", "swizzled"): chosen["BN"]}
    seen = Counter()
    for found in report["loads"]:
        key = (found["operand"], found["layout"])
        seen[key] += 1
        assert found["stride"] == strides[key], found["name"]
        first = int(found["lanes"][0]["address"]) // 4 - found["lanes"][0]["index"]
        for lane in found["lanes"]:
            row, col = ptx_layout(found["operand"], lane["lane"], found["register"])
            assert (lane["row"], lane["col"]) == (row, col), found["name"]
            if found["layout"] == "swizzled":
                col = swizzled_column(found["operand"], row, col)
            assert lane["index"] == row * found["stride"] + col, found["name"]
            assert int(lane["address"]) // 4 == first + lane["index"], found["name"]
            assert lane["bank"] == int(lane["address"]) // 4 % 32, found["name"]
        assert counted_wavefronts(found) == found["wavefronts"] == expected[key], found["name"]
    assert seen == {(operand, layout): 4 if operand == "A" else 2
                    for operand in "AB" for layout in ("padded", "unpadded", "swizzled")}


# -- The tiles figure --------------------------------------------------------------


def drawn(make):
    with plt.rc_context(style.RC):
        figure = make()
        figure.canvas.draw()
        return figure, figure.canvas.get_renderer()


def overlapping(texts, renderer) -> list[str]:
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts if t.get_text()]
    return [f"{a!r} overlaps {b!r}" for (a, p), (b, q) in combinations(boxes, 2)
            if p.x0 < q.x1 - 0.5 and q.x0 < p.x1 - 0.5 and p.y0 < q.y1 - 0.5
            and q.y0 < p.y1 - 0.5]


def all_texts(figure) -> list:
    return [t for t in [*figure.texts, *(t for a in figure.axes for t in a.texts)]
            if t.get_visible() and t.get_text().strip()]


@pytest.mark.parametrize("mode", MODES)
def test_the_tiles_figure_labels_each_element_with_the_tools_lane(report, mode):
    tiles = fragments.fragment_tiles(report)
    figure, renderer = drawn(lambda: fragments.fragments_figure(tiles, mode))
    try:
        labelled = 0
        for name in ("A", "B", "C"):
            found = tile(report, name)
            expected = {(e["row"], e["col"]): (e["lane"], e["register"])
                        for e in found["elements"]}
            (axes,) = [a for a in figure.axes if a.get_gid() == f"tile-{name}"]
            lanes = [t for t in axes.texts if t.get_gid() == "lane"]
            registers = [t for t in axes.texts if t.get_gid() == "register"]
            cells = [p for p in axes.patches if (p.get_gid() or "").startswith("cell-g")]
            assert len(lanes) == len(registers) == len(cells) == len(expected), name
            for text, tag, cell in zip(lanes, registers, cells, strict=True):
                x, y = text.get_position()
                row, col = int(y), int(x)
                lane, register = expected[(row, col)]
                assert text.get_text() == str(lane), (name, row, col)
                assert tag.get_text() == f"{name.lower()}{register}", (name, row, col)
                assert (int(cell.get_y()), int(cell.get_x())) == (row, col)
                assert cell.get_gid() == f"cell-g{lane // 4}", (name, row, col)
                assert to_rgba(cell.get_facecolor())[:3] == to_rgba(
                    fragments.GROUP_COLOURS[lane // 4])[:3]
            labelled += len(lanes)
        assert labelled == 16 * 8 + 8 * 8 + 16 * 8
        texts = all_texts(figure)
        ink = to_rgba(style.THEMES[mode]["ink"])
        assert [t.get_text() for t in texts if to_rgba(t.get_color()) != ink] == []
        assert overlapping(texts, renderer) == []
        # Thick lines: A in quarters, B and C in halves; none down C's columns.
        lines = {a.get_gid(): len([line for line in a.get_lines()
                                   if line.get_gid() == "register-line"])
                 for a in figure.axes}
        assert lines == {"tile-A": 2, "tile-B": 1, "tile-C": 1}
    finally:
        plt.close(figure)


@pytest.mark.parametrize("mode", MODES)
def test_the_tiles_figure_fits_and_is_legible_on_a_phone(report, mode):
    tiles = fragments.fragment_tiles(report)
    width = natural_width_px(fragments.draw_fragments(tiles, mode))
    assert width <= COLUMN_PX
    # Shrunk to a phone's column, a lane number stays at least 9 px tall.
    scale = min(1.0, PHONE_COLUMN_PX / width)
    assert fragments.LANE_TEXT * 96 / 72 * scale >= 9, f"{width} px wide"


# -- The loads figure --------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_the_loads_figure_draws_each_lane_in_the_tools_bank(report, mode):
    grids = fragments.load_grids(report)
    figure, renderer = drawn(lambda: bankgrid.bankgrid_figure(grids, mode))
    try:
        for index, name in enumerate(SHOWN_LOADS):
            found = load(report, name)
            (axes,) = [a for a in figure.axes if a.get_gid() == f"bankgrid-{index}"]
            rows = abs(axes.get_ylim()[0] - axes.get_ylim()[1])
            assert rows == found["wavefronts"], name
            assert axes.get_title(loc="left").endswith(
                f"{found['wavefronts']} wavefront{'' if found['wavefronts'] == 1 else 's'}")
            labels = [t for t in axes.texts if t.get_gid() == "lane"]
            assert sorted(int(t.get_text()) for t in labels) == list(range(32)), name
            for text in labels:
                x, y = text.get_position()
                lane = found["lanes"][int(text.get_text())]
                assert int(x) == lane["bank"], f"{name}: lane {lane['lane']}"
            conflicted = [p for p in axes.patches if p.get_gid() == "word-conflicted"]
            assert bool(conflicted) == (found["wavefronts"] > 1), name
        assert overlapping(all_texts(figure), renderer) == []
    finally:
        plt.close(figure)


# -- The page ------------------------------------------------------------------------


def test_chapter_14_draws_the_tiles_and_the_loads():
    if not PAGE.is_file():
        pytest.skip(f"{PAGE.relative_to(ROOT)} is not written yet")
    text = PAGE.read_text()
    shown = re.findall(r"^```\{ladder-fragments\}\s*\n(?::show:\s*(\w+)\s*\n)?", text, re.M)
    assert sorted(s or "tiles" for s in shown) == ["loads", "tiles"]
