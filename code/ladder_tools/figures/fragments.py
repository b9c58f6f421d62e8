"""Chapter 14's mma fragments and the loads that feed them ({ladder-fragments}).

The data: what build/bin/fragmap reports (ladder_tools.analysis.fragmap.run_fragmap),
computed by chapter 14's own functions. Two drawings:

- the tiles: the A (16 x 8), B (8 x 8) and C (16 x 8) tiles of one
  mma.sync.m16n8k8, laid out as the product is (A left of C, B above it),
  every element labelled with the lane that holds it and, small in its
  corner, the register; coloured by the lane's group g = lane / 4, so that
  a group's row of A and C and its column of B stand out. Thick lines part
  the registers where they split a tile (A's four quarters, B's halves, C's
  upper and lower halves).
- the loads: register 0 of the A and of the B fragment, each unpadded,
  padded and swizzled, as bank grids (bankgrid.py): 32 banks across, a row per
  wavefront.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from ladder_tools.analysis.binaries import AnalysisError
from ladder_tools.analysis.fragmap import lane_group, load_title, run_fragmap, shown_loads, tile
from ladder_tools.figures import bankgrid
from ladder_tools.figures.registry import Context, Drawing, Drawn, Figure, Option, Request, choice
from ladder_tools.figures.style import RC, THEMES, svg

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure

#: One colour per lane group (8 groups), mid-contrast on white and on
#: near-black, drawn at FILL_ALPHA under text in the page's ink.
GROUP_COLOURS = ["#3d7dd8", "#e0892b", "#3aa56b", "#c4508f", "#8a6fd1", "#9a8b3d", "#d0553f",
                 "#2fa3b0"]
FILL_ALPHA = 0.45
TIMES = "\u00d7"
DASH = "\u2013"

#: Sizes in inches and points. 17 cells across (A and C side by side) in
#: WIDTH inches. A phone's page shows the figure at this width and scrolls it
#: sideways, as it does the bank grids (the directive marks it ladder-scroll):
#: shrunk to a phone's column (about 360 px) a register's name would be 6 px
#: high; at its width it is 9 px, a lane number 14 px. A lane number and its
#: register's name share a cell of 0.3 in without their boxes touching.
WIDTH = 5.4
LEFT = 0.34
RIGHT = 0.06
GAP_CELLS = 1.0
TOP = 0.1
TITLE_ROOM = 0.36
INDEX_ROOM = 0.26
LANE_TEXT = 10.5
REGISTER_TEXT = 7
SMALL = 10.5
TITLE = 12

#: Where a tile sits in the figure: (first row, first column) in cells, the
#: rows counted down from B's top and the columns from A's left.
PLACES = {"B": (0, 8 + GAP_CELLS), "A": (8 + GAP_CELLS, 0), "C": (8 + GAP_CELLS, 8 + GAP_CELLS)}
#: How each tile's rows and columns are named: (rows, columns).
AXES = {"A": ("m", "k"), "B": ("k", "n"), "C": ("m", "n")}
#: The register prefix of each tile's elements in the PTX ISA's names.
PREFIX = {"A": "a", "B": "b", "C": "c"}


@dataclass(frozen=True)
class Element:
    row: int
    col: int
    lane: int
    register: int


@dataclass(frozen=True)
class Tile:
    """One mma tile: every element with the lane and register that hold it."""

    name: str
    rows: int
    cols: int
    registers: int
    elements: tuple[Element, ...]

    def at(self, row: int, col: int) -> Element:
        return self.elements[row * self.cols + col]

    @property
    def heading(self) -> str:
        rows, cols = AXES[self.name]
        return f"{self.name}: {self.rows} {TIMES} {self.cols} ({rows} {TIMES} {cols})"

    def register_bounds(self) -> tuple[list[int], list[int]]:
        """The thick lines (inner edges only): the rows and columns where the
        register changes along a whole line of the tile, when that parts the
        tile into blocks; registers that alternate from cell to cell (C's
        columns) are left to the labels."""
        rows = [r for r in range(1, self.rows)
                if all(self.at(r, c).register != self.at(r - 1, c).register
                       for c in range(self.cols))]
        cols = [c for c in range(1, self.cols)
                if all(self.at(r, c).register != self.at(r, c - 1).register
                       for r in range(self.rows))]
        return _blocks(rows, self.rows), _blocks(cols, self.cols)


def _blocks(bounds: list[int], length: int) -> list[int]:
    """``bounds`` when every block they make is at least two cells long, else none."""
    edges = [0, *bounds, length]
    return bounds if all(b - a >= 2 for a, b in pairwise(edges)) else []


def fragment_tiles(report: dict) -> list[Tile]:
    """The A, B and C tiles of a fragmap report; an AnalysisError unless
    every element is held by exactly one (lane, register)."""
    tiles = []
    for name in ("A", "B", "C"):
        found = tile(report, name)
        rows, cols = found["rows"], found["cols"]
        grid: dict[tuple[int, int], Element] = {}
        for held in found["elements"]:
            key = (held["row"], held["col"])
            if key in grid or not (0 <= key[0] < rows and 0 <= key[1] < cols):
                raise AnalysisError(f"fragmap: element {key} of {name} is held twice or outside")
            grid[key] = Element(*key, held["lane"], held["register"])
        if len(grid) != rows * cols:
            raise AnalysisError(f"fragmap: {rows * cols - len(grid)} elements of {name} unheld")
        tiles.append(Tile(name, rows, cols, found["registers"],
                          tuple(grid[(r, c)] for r in range(rows) for c in range(cols))))
    return tiles


def _draw_tile(axes: Axes, t: Tile, theme: dict) -> None:
    ink, lines = theme["ink"], theme["grid"]
    axes.set_gid(f"tile-{t.name}")
    axes.set_xlim(0, t.cols)
    axes.set_ylim(t.rows, 0)
    axes.set_axis_off()
    for e in t.elements:
        colour = GROUP_COLOURS[lane_group(e.lane)]
        cell = Rectangle((e.col, e.row), 1, 1, fc=colour, alpha=FILL_ALPHA, ec=lines, lw=0.5,
                         zorder=1)
        cell.set_gid(f"cell-g{lane_group(e.lane)}")
        axes.add_patch(cell)
        axes.text(e.col + 0.32, e.row + 0.3, str(e.lane), ha="center", va="center",
                  fontsize=LANE_TEXT, color=ink, zorder=3, gid="lane")
        axes.text(e.col + 0.98, e.row + 0.99, f"{PREFIX[t.name]}{e.register}", ha="right",
                  va="bottom", fontsize=REGISTER_TEXT, color=ink, zorder=3, gid="register")
    rows, cols = t.register_bounds()
    for r in rows:
        axes.plot([0, t.cols], [r, r], color=ink, lw=1.6, zorder=4, gid="register-line")
    for c in cols:
        axes.plot([c, c], [0, t.rows], color=ink, lw=1.6, zorder=4, gid="register-line")
    axes.add_patch(Rectangle((0, 0), t.cols, t.rows, fc="none", ec=ink, lw=1.0, zorder=4))


def _indices(figure: MplFigure, t: Tile, box: tuple[float, float, float, float], cell: float,
             where: str, ink: str) -> None:
    """Row numbers left of a tile, or column numbers above or below it."""
    fw, fh = figure.get_size_inches()
    x0, y0, w, h = box
    rows, cols = AXES[t.name]
    if where == "left":
        for r in range(t.rows):
            figure.text(x0 - 0.05 / fw, y0 + h - (r + 0.5) * cell / fh, str(r), ha="right",
                        va="center", fontsize=SMALL, color=ink, gid=f"index-{t.name}")
        figure.text(x0 - 0.05 / fw, y0 + h + 0.04 / fh, rows, ha="right", va="bottom",
                    fontsize=SMALL, color=ink, style="italic", gid=f"axis-{t.name}")
    else:
        above = where == "above"
        y = y0 + h + 0.04 / fh if above else y0 - 0.04 / fh
        for c in range(t.cols):
            figure.text(x0 + (c + 0.5) * cell / fw, y, str(c), ha="center",
                        va="bottom" if above else "top", fontsize=SMALL, color=ink,
                        gid=f"index-{t.name}")
        figure.text(x0 + w + 0.05 / fw, y, cols, ha="left", va="bottom" if above else "top",
                    fontsize=SMALL, color=ink, style="italic", gid=f"axis-{t.name}")


def fragments_figure(tiles: list[Tile], mode: str) -> MplFigure:
    """A left of C, B above C, each element with its lane and register."""
    theme = THEMES[mode]
    ink = theme["ink"]
    by_name = {t.name: t for t in tiles}
    if set(by_name) != {"A", "B", "C"}:
        raise AnalysisError("the fragments figure draws the A, B and C tiles")
    across = by_name["A"].cols + GAP_CELLS + by_name["C"].cols
    cell = (WIDTH - LEFT - RIGHT) / across
    down = PLACES["C"][0] + by_name["C"].rows
    height = TOP + TITLE_ROOM + INDEX_ROOM + down * cell + INDEX_ROOM
    figure = plt.figure(figsize=(WIDTH, height))
    figure.set_gid("fragments")
    grid_top = TOP + TITLE_ROOM + INDEX_ROOM  # inches from the figure's top to B's top
    for name in ("B", "A", "C"):
        t = by_name[name]
        row, col = PLACES[name]
        left, top = LEFT + col * cell, grid_top + row * cell
        box = (left / WIDTH, 1 - (top + t.rows * cell) / height, t.cols * cell / WIDTH,
               t.rows * cell / height)
        _draw_tile(figure.add_axes(box), t, theme)
        title_y = 1 - (top - (INDEX_ROOM if name == "B" else 0.06)) / height
        figure.text(box[0], title_y, t.heading, ha="left", va="bottom", fontsize=TITLE,
                    color=ink, gid=f"title-{name}")
        if name == "A":
            _indices(figure, t, box, cell, "left", ink)
            _indices(figure, t, box, cell, "below", ink)
        elif name == "B":
            _indices(figure, t, box, cell, "left", ink)
            _indices(figure, t, box, cell, "above", ink)
    # The key, in the corner left of B: a swatch per group, and what the
    # numbers are.
    key_top = grid_top
    figure.text(LEFT / WIDTH, 1 - key_top / height, "colour: group g = lane / 4",
                ha="left", va="top", fontsize=SMALL, color=ink, gid="key-text")
    swatch = cell * 0.8
    for g, colour in enumerate(GROUP_COLOURS):
        x, y = LEFT + (g % 4) * 2 * cell, key_top + 0.32 + (g // 4) * 1.2 * cell
        patch = Rectangle((x / WIDTH, 1 - (y + swatch) / height), swatch / WIDTH, swatch / height,
                          transform=figure.transFigure, fc=colour, alpha=FILL_ALPHA, ec=colour,
                          lw=0.8, figure=figure)
        patch.set_gid("key")
        figure.patches.append(patch)
        figure.text((x + swatch + 0.04) / WIDTH, 1 - (y + swatch / 2) / height, str(g),
                    ha="left", va="center", fontsize=SMALL, color=ink, gid="key-text")
    notes = ["large: the lane", "corner: its register", "thick lines: where the",
             "register changes"]
    for i, note in enumerate(notes):
        y = key_top + 0.4 + 2.4 * cell + i * 0.19
        figure.text(LEFT / WIDTH, 1 - y / height, note, ha="left", va="top", fontsize=SMALL,
                    color=ink, gid="key-text")
    return figure


def draw_fragments(tiles: list[Tile], mode: str) -> bytes:
    """The tiles figure as SVG for the page mode ``mode``."""
    with plt.rc_context(RC):
        return svg(fragments_figure(tiles, mode))


def alt_text(tiles: list[Tile]) -> str:
    parts = []
    for t in tiles:
        rows, cols = AXES[t.name]
        parts.append(f"{t.name}, {t.rows} {TIMES} {t.cols}, {t.registers} registers per lane")
    return ("The tiles of one mma.sync.m16n8k8, each element labelled with the lane that holds it "
            "and its register, coloured by the lane's group g = lane / 4: " + "; ".join(parts)
            + ". Lane 4g + t holds rows g and g + 8 of A and C and column g of B.")


# -- The loads, as bank grids ---------------------------------------------------


def load_grids(report: dict) -> list[bankgrid.Grid]:
    """The bank grids of the loads the figure shows (SHOWN_LOADS)."""
    return [bankgrid.bank_grid(found, load_title(found)) for found in shown_loads(report)]


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    """The tiles by lane and register, or (``:show: loads``) the fragment
    loads as bank grids; both 17 or 32 cells across, so that a phone
    scrolls them rather than shrink the registers' names to 6 px."""
    report = run_fragmap(context.tool("fragmap"))
    if request.options["show"] == "tiles":
        tiles = fragment_tiles(report)
        return Drawn([Drawing(lambda mode: fragments_figure(tiles, mode), alt_text(tiles),
                              request.caption_or("Which lane holds each element of the mma "
                                                 "tiles."), layout="scroll")])
    grids = load_grids(report)
    return Drawn([Drawing(lambda mode: bankgrid.bankgrid_figure(grids, mode),
                          bankgrid.alt_text(grids),
                          request.caption_or("The fragment loads in banks, one row per "
                                             "wavefront."), layout="scroll")])


FIGURE = Figure("fragments", "chapter 14's mma tiles by lane and register, or its fragment "
                "loads in banks", load,
                options={"show": Option("tiles: the mma tiles by lane and register; loads: "
                                        "the fragment loads as bank grids",
                                        choice("tiles", "loads"), "tiles")})
