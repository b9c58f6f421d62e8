"""Warp-wide shared-memory accesses as bank grids ({ladder-bankgrid}).

The data: each access as build/bin/bankmap reports it
(ladder_tools.analysis.bankmap.run_bankmap): every lane's byte address, the access
width, and the model's phases with their wavefronts. bank_grid() places each
lane's words: a 4-byte word at byte address a is word a / 4, in bank
(a / 4) mod 32; an 8- or 16-byte access covers 2 or 4 consecutive words. The
lanes are served in the model's phases (32 lanes for 4 bytes, 16 for 8, 8 for
16). Inside a phase, words that several lanes ask for are served once
(broadcast), and the k-th distinct word a bank is asked for goes in the
phase's k-th wavefront: the schedule whose length is the model's count (the
busiest bank's distinct words), not the hardware's documented order, which
NVIDIA does not publish. A bank is conflicted in a phase when it is asked
for more than one distinct word there.

The figure draws one panel per access: 32 banks across, one row per
wavefront, each word a cell in its bank and its wavefront's row, labelled
with its lane, coloured by whether its bank is conflicted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from ladder_tools.analysis.bankmap import run_bankmap
from ladder_tools.analysis.binaries import AnalysisError
from ladder_tools.figures.registry import Context, Drawing, Drawn, Figure, Option, Request
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES, svg

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

BANKS = 32
BANK_BYTES = 4
CONFLICT_COLOUR = GPU_COLOURS[1]
FREE_COLOUR = GPU_COLOURS[0]

#: Sizes in inches and points. The figure is WIDTH inches wide (about 715 px
#: at its natural size), inside the book's narrowest desktop column (46em,
#: 736 px); a cell is square, 0.21 inches, or 0.19 where the phases' lanes
#: are named on the right: wide enough for a two-digit lane number at
#: LANE_TEXT.
WIDTH = 7.5
LEFT = 0.64
RIGHT = 0.12
PHASE_LABEL = 0.78
TITLE_ROOM = 0.34
TICK_ROOM = 0.24
KEY_ROOM = 0.36
GAP = 0.1
TITLE = 12
LANE_TEXT = 9
SMALL = 9
DASH = "\u2013"


@dataclass(frozen=True)
class Cell:
    """One or more consecutive words of one lane's access, served in one
    wavefront: ``banks`` banks from ``bank``, in row ``row`` (0 is the first
    wavefront), asked for by ``lanes`` (several when they share the words)."""

    lanes: tuple[int, ...]
    bank: int
    banks: int
    row: int
    conflicted: bool

    @property
    def label(self) -> str:
        first, last = self.lanes[0], self.lanes[-1]
        if len(self.lanes) == 1:
            return str(first)
        consecutive = list(self.lanes) == list(range(first, last + 1))
        return f"{first}{DASH}{last}" if consecutive and self.banks > 1 else f"{first}+"


@dataclass(frozen=True)
class Phase:
    first_lane: int
    lanes: int
    first_row: int
    rows: int


@dataclass(frozen=True)
class Grid:
    """One access laid out in banks and wavefronts."""

    title: str
    width_bytes: int
    wavefronts: int  #: the bank model's count
    cells: tuple[Cell, ...]
    phases: tuple[Phase, ...]

    @property
    def rows(self) -> int:
        """Rows of the grid: the wavefronts the schedule takes."""
        return sum(p.rows for p in self.phases)

    @property
    def heading(self) -> str:
        s = "" if self.wavefronts == 1 else "s"
        return f"{self.title}: {self.wavefronts} wavefront{s}"


def _phase_cells(report: dict, first: int, count: int, first_row: int) -> tuple[list[Cell], int]:
    """The cells of the lanes [first, first + count) and the rows they take."""
    words_per_lane = max(1, report["width_bytes"] // BANK_BYTES)
    askers: dict[int, list[int]] = {}  # word -> its lanes, words in order of first ask
    for lane in report["lanes"][first:first + count]:
        if not lane["active"]:
            continue
        start = int(lane["address"]) // BANK_BYTES
        for word in range(start, start + words_per_lane):
            askers.setdefault(word, []).append(lane["lane"])
    row_of: dict[int, int] = {}
    per_bank = [0] * BANKS
    for word in askers:
        row_of[word] = per_bank[word % BANKS]
        per_bank[word % BANKS] += 1
    # One lane's consecutive words in one row make one cell.
    cells: list[Cell] = []
    for word, lanes in askers.items():
        bank, row = word % BANKS, row_of[word]
        previous = cells[-1] if cells else None
        if (previous and previous.lanes == tuple(lanes) and previous.row == first_row + row
                and previous.bank + previous.banks == bank):
            cells[-1] = Cell(previous.lanes, previous.bank, previous.banks + 1, previous.row,
                             previous.conflicted or per_bank[bank] > 1)
        else:
            cells.append(Cell(tuple(lanes), bank, 1, first_row + row, per_bank[bank] > 1))
    return cells, max(per_bank)


def bank_grid(report: dict, title: str) -> Grid:
    """The Grid of one ``bankmap --json`` report, under ``title``; an
    AnalysisError when the rows differ from the model's wavefronts."""
    cells: list[Cell] = []
    phases: list[Phase] = []
    row = 0
    for phase in report["phases"]:
        found, rows = _phase_cells(report, phase["first_lane"], phase["lanes"], row)
        if rows != phase["wavefronts"]:
            raise AnalysisError(f"{report['name']}: lanes {phase['first_lane']}+ take {rows} "
                                f"rows here, {phase['wavefronts']} wavefronts in the model")
        cells += found
        phases.append(Phase(phase["first_lane"], phase["lanes"], row, rows))
        row += rows
    grid = Grid(title, report["width_bytes"], report["wavefronts"], tuple(cells), tuple(phases))
    if grid.rows != report["wavefronts"]:
        raise AnalysisError(f"{report['name']}: {grid.rows} rows, {report['wavefronts']} "
                            "wavefronts in the model")
    return grid


def _describe(grid: Grid) -> str:
    used = sorted({(c.bank + i) % BANKS for c in grid.cells for i in range(c.banks)})
    conflicted = sorted({(c.bank + i) % BANKS for c in grid.cells if c.conflicted
                         for i in range(c.banks)})
    words = f"{len(used)} of the 32 banks used"
    if conflicted:
        words += f", {len(conflicted)} of them conflicted"
    else:
        words += ", no bank asked for two words at once"
    return f"{grid.heading} ({words})"


def alt_text(grids: list[Grid]) -> str:
    return ("Bank grids, 32 banks across and one row per wavefront, each lane's word drawn in "
            "its bank and labelled with the lane: " + "; ".join(_describe(g) for g in grids)
            + ".")


def _multi_phase(grids: list[Grid]) -> bool:
    return any(len([p for p in g.phases if p.rows]) > 1 for g in grids)


def _panel(figure: MplFigure, grid: Grid, box: tuple[float, float, float, float], cell: float,
           index: int, theme: dict, phase_labels: bool) -> None:
    """One access's grid in ``box`` (figure fractions); ``cell`` is a cell's side in inches."""
    ink, lines = theme["ink"], theme["grid"]
    axes = figure.add_axes(box)
    axes.set_gid(f"bankgrid-{index}")
    axes.set_xlim(0, BANKS)
    axes.set_ylim(grid.rows, 0)
    axes.set_facecolor("none")
    for spine in axes.spines.values():
        spine.set_visible(False)
    axes.tick_params(length=0, colors=ink, labelsize=SMALL, pad=2)
    axes.set_xticks([b + 0.5 for b in range(0, BANKS, 4)] + [BANKS - 0.5])
    axes.set_xticklabels([str(b) for b in range(0, BANKS, 4)] + [str(BANKS - 1)])
    axes.set_yticks([r + 0.5 for r in range(grid.rows)])
    axes.set_yticklabels([str(r + 1) for r in range(grid.rows)])
    for x in range(BANKS + 1):
        axes.plot([x, x], [0, grid.rows], color=lines, lw=0.5, zorder=1, gid="bank-line")
    for y in range(grid.rows + 1):
        axes.plot([0, BANKS], [y, y], color=lines, lw=0.5, zorder=1, gid="row-line")
    for phase in grid.phases[1:]:
        if phase.rows and phase.first_row:
            axes.plot([0, BANKS], [phase.first_row] * 2, color=ink, lw=1.2, zorder=4,
                      gid="phase-line")
    for word in grid.cells:
        colour = CONFLICT_COLOUR if word.conflicted else FREE_COLOUR
        patch = Rectangle((word.bank + 0.06, word.row + 0.06), word.banks - 0.12, 0.88,
                          fc=colour, alpha=0.5, ec=colour, lw=0.8, zorder=2)
        patch.set_gid("word-conflicted" if word.conflicted else "word")
        axes.add_patch(patch)
        axes.text(word.bank + word.banks / 2, word.row + 0.5, word.label, ha="center",
                  va="center_baseline", fontsize=LANE_TEXT, color=ink, zorder=3, gid="lane")
    axes.set_title(grid.heading, fontsize=TITLE, color=ink, loc="left", pad=4)
    axes.text((0.12 - LEFT) / cell, grid.rows, "bank", fontsize=SMALL, color=ink,
              ha="left", va="top", gid="bank-axis")
    if phase_labels:
        for phase in grid.phases:
            if phase.rows:
                axes.text(BANKS + 0.4, phase.first_row + phase.rows / 2,
                          f"lanes {phase.first_lane}{DASH}{phase.first_lane + phase.lanes - 1}",
                          ha="left", va="center", fontsize=SMALL, color=ink, gid="phase")


def bankgrid_figure(grids: list[Grid], mode: str) -> MplFigure:
    """The panels stacked, the first at the top, under a key of the colours."""
    theme = THEMES[mode]
    ink = theme["ink"]
    phase_labels = _multi_phase(grids)
    right = RIGHT + (PHASE_LABEL if phase_labels else 0)
    width = WIDTH
    cell = (width - LEFT - right) / BANKS
    heights = [TITLE_ROOM + g.rows * cell + TICK_ROOM for g in grids]
    height = KEY_ROOM + sum(heights) + GAP * (len(grids) - 1)
    figure = plt.figure(figsize=(width, height))
    figure.set_gid("bankgrid")
    top = height - KEY_ROOM
    for index, (grid, room) in enumerate(zip(grids, heights, strict=True)):
        bottom = top - room + TICK_ROOM
        _panel(figure, grid, (LEFT / width, bottom / height, BANKS * cell / width,
                              grid.rows * cell / height), cell, index, theme, phase_labels)
        top -= room + GAP
    # The key: a swatch of each colour and its words, one after the other.
    y = (height - KEY_ROOM / 2) / height
    x = LEFT / width
    for colour, words in ((CONFLICT_COLOUR, "bank asked for two or more words: a conflict"),
                          (FREE_COLOUR, "bank asked for one word")):
        swatch = Rectangle((x, y - 0.5 * cell / height), cell / width, cell / height,
                           transform=figure.transFigure, fc=colour, alpha=0.5, ec=colour,
                           lw=0.8, figure=figure)
        swatch.set_gid("key")
        figure.patches.append(swatch)
        label = figure.text(x + 1.5 * cell / width, y, words, fontsize=SMALL, color=ink,
                            va="center", gid="key-text")
        # Measured with the figure's own renderer (the canvas's: Agg, the
        # backend style.py chooses).
        x = figure.transFigure.inverted().transform(
            (label.get_window_extent().x1, 0))[0] + 0.3 / width
    # What the rows are, over the first panel's row numbers, beside its title.
    figure.text(0.08 / width, (height - KEY_ROOM - TITLE_ROOM + 0.02) / height, "wave-\nfront",
                fontsize=SMALL, color=ink, va="bottom", ha="left", linespacing=1.0,
                gid="row-axis")
    return figure


def draw_bankgrid(grids: list[Grid], mode: str) -> bytes:
    """The figure as SVG for the page mode ``mode``."""
    with plt.rc_context(RC):
        return svg(bankgrid_figure(grids, mode))


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    """32 cells across stay legible only near the natural width: a column
    narrower than that (a phone) scrolls the figure sideways instead."""
    names = request.arguments
    titles = ([t.strip() for t in request.options["titles"].split(";")]
              if request.options["titles"] else names)
    if len(titles) != len(names):
        raise AnalysisError(f":titles: has {len(titles)} titles for {len(names)} accesses")
    tool = context.tool("bankmap")
    grids = [bank_grid(run_bankmap(tool, name), title)
             for name, title in zip(names, titles, strict=True)]
    caption = request.caption_or("Each lane's word in its bank, one row per wavefront.")
    return Drawn([Drawing(lambda mode: bankgrid_figure(grids, mode), alt_text(grids), caption,
                          layout="scroll")])


FIGURE = Figure("bankgrid", "named accesses as bank grids: banks across, a row per wavefront",
                load, arguments=(1, 6), argument="access names (bankmap --list)",
                options={"titles": Option("a title per access, separated by ';'")})
