"""Chapter 11's shared-memory stages over a few K-steps ({ladder-stages}).

The data: a chapter's ``--describe`` constants (STAGES, BK, A_STAGE_FLOATS,
STAGE_FLOATS), turned by stages_of() into Stages. schedule() is the order the
kernel's loop imposes: a prologue loads step 0 into stage 0; step k reads
stage k mod STAGES (its FMAs) while it issues step k + 1's loads into stage
(k + 1) mod STAGES; a barrier closes the prologue and every step. The figure
draws that order as one lane per stage; it is a schematic, not a timing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.patches import Patch, Rectangle

from ladder_tools.analysis.binaries import AnalysisError, describe, find_variant
from ladder_tools.figures.registry import Context, Drawing, Drawn, Figure, Request
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES, legend

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

LOAD_COLOUR = GPU_COLOURS[1]
FMA_COLOUR = GPU_COLOURS[0]
TEXT = 12.5
TITLE = 13
FIGURE_WIDTH = 5.2
#: The K-steps drawn after the prologue.
STEPS = 4
TIMES = "\u00d7"


@dataclass(frozen=True)
class Stages:
    chapter: str
    stages: int
    bk: int
    a_floats: int      #: floats of A's tile in one stage
    stage_floats: int  #: floats of one stage (A's tile and B's)
    steps: int = STEPS

    @property
    def b_floats(self) -> int:
        return self.stage_floats - self.a_floats


@dataclass(frozen=True)
class Cell:
    column: int  #: 0 is the prologue, 1 + k is step k
    stage: int
    kind: str    #: "load" or "fma"
    step: int    #: the K-step whose tiles it loads or reads


def stages_of(chapter: str, constants: dict) -> Stages:
    missing = [n for n in ("STAGES", "BK", "A_STAGE_FLOATS", "STAGE_FLOATS") if n not in constants]
    if missing:
        raise AnalysisError(f"{chapter}: its --describe constants have no {', '.join(missing)}")
    if constants["STAGES"] < 2:
        raise AnalysisError(f"{chapter}: STAGES = {constants['STAGES']}, nothing overlaps")
    return Stages(chapter, constants["STAGES"], constants["BK"], constants["A_STAGE_FLOATS"],
                  constants["STAGE_FLOATS"])


def chapter_stages(repo_root: Path, build: Path, slug: str) -> tuple[Stages, list[Path]]:
    path, variant = find_variant(repo_root, build, slug)
    sources = [Path(repo_root) / name for name in describe(path).get("sources") or []]
    return stages_of(slug, variant["constants"]), [path, *sources]


def schedule(s: Stages) -> tuple[list[Cell], list[int]]:
    """The cells of each lane and the columns a barrier closes."""
    cells = [Cell(0, 0, "load", 0)]
    for k in range(s.steps):
        cells.append(Cell(1 + k, k % s.stages, "fma", k))
        cells.append(Cell(1 + k, (k + 1) % s.stages, "load", k + 1))
    return cells, list(range(s.steps + 1))


def title_words(s: Stages) -> str:
    return (f"STAGES = {s.stages} stages of BK = {s.bk} rows, each\n"
            f"As {s.a_floats} + Bs {s.b_floats} = {s.stage_floats} floats")


def alt_text(s: Stages) -> str:
    return (f"{s.chapter}: {s.stages} shared-memory stages of {s.stage_floats} floats "
            f"(BK = {s.bk}) as lanes over a prologue and {s.steps} K-steps. Step k's FMAs "
            f"read stage k mod {s.stages} while step k + 1's tiles load into the other stage; "
            "one barrier ends each step, so the stages swap roles every step. The order "
            "the code imposes, not measured time.")


LANE = 0.62   # inches per lane
GAP = 0.22    # between lanes
LABEL_W = 0.95


@dataclass(frozen=True)
class Lanes:
    """A figure of one lane per stage, stage 0 on top, over `columns`
    columns: the stages figure's layout, which the pipeline figure
    (pipeline.py) shares. `height` is the lanes' extent in data
    units and `total` the figure's height in inches."""
    figure: plt.Figure
    axes: plt.Axes
    height: float
    total: float

    @staticmethod
    def top(stage: int) -> float:
        """The upper edge of a stage's lane, in data units (a lane is 1 high)."""
        return stage * (1 + GAP / LANE)


def lanes(gid: str, stages: int, columns: float, head: float, foot: float, label_x: float,
          ink: str) -> Lanes:
    """The figure and its axes, each lane labelled "stage s" at label_x
    (data units, left of 0). Call inside plt.rc_context(RC)."""
    lanes_h = stages * LANE + (stages - 1) * GAP
    total = head + lanes_h + foot
    figure = plt.figure(figsize=(FIGURE_WIDTH, total))
    figure.set_gid(gid)
    axes = figure.add_axes((LABEL_W / FIGURE_WIDTH, foot / total,
                            (FIGURE_WIDTH - LABEL_W - 0.1) / FIGURE_WIDTH, lanes_h / total))
    axes.set_gid("lanes")
    axes.set_axis_off()
    height = stages + (stages - 1) * GAP / LANE
    axes.set_xlim(0, columns)
    axes.set_ylim(height, 0)
    for stage in range(stages):
        axes.text(label_x, Lanes.top(stage) + 0.5, f"stage {stage}", ha="right", va="center",
                  fontsize=TEXT, color=ink)
    return Lanes(figure, axes, height, total)


def stages_figure(s: Stages, mode: str) -> MplFigure:
    theme = THEMES[mode]
    ink = theme["ink"]
    cells, barriers = schedule(s)
    columns = s.steps + 1
    with plt.rc_context(RC):
        drawn = lanes(f"stages-{s.chapter}", s.stages, columns, 1.25, 0.95, -0.1, ink)
        figure, axes, height, total, top = (drawn.figure, drawn.axes, drawn.height,
                                            drawn.total, drawn.top)
        for cell in cells:
            load = cell.kind == "load"
            patch = Rectangle((cell.column + 0.06, top(cell.stage) + 0.06), 0.88, 0.88,
                              fc=LOAD_COLOUR if load else FMA_COLOUR, alpha=0.35 if load else 0.6,
                              ec="none")
            patch.set_gid(cell.kind)
            axes.add_patch(patch)
            axes.text(cell.column + 0.5, top(cell.stage) + 0.5,
                      f"{'load' if load else 'FMA'}\n{cell.step}", ha="center", va="center",
                      fontsize=TEXT, color=ink, linespacing=1.1)
        for column in barriers:
            line = axes.plot([column + 1, column + 1], [-0.05, height + 0.05], color=ink, lw=2,
                             solid_capstyle="butt", clip_on=False)[0]
            line.set_gid("barrier")
        for column in range(columns):
            axes.text(column + 0.5, -0.12, "prologue" if column == 0 else f"k = {column - 1}",
                      ha="center", va="bottom", fontsize=TEXT if column else TEXT - 2.5,
                      color=ink)
        figure.text(0.5, 1 - 0.08 / total, title_words(s), ha="center", va="top",
                    fontsize=TITLE, color=ink, linespacing=1.3)
        legend(figure, theme,
               handles=[Patch(fc=LOAD_COLOUR, alpha=0.35, label="load step k + 1"),
                        Patch(fc=FMA_COLOUR, alpha=0.6, label="FMAs of step k"),
                        plt.Line2D([], [], color=ink, lw=2, label="barrier")],
               loc="lower center", bbox_to_anchor=(0.5, 0.02), ncol=2, fontsize=TEXT - 1,
               handlelength=1.2, columnspacing=1.0)
        return figure


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    slug = request.arguments[0]
    found, read = chapter_stages(context.repo_root, context.build_dir, slug)
    caption = request.caption_or(
        f"The shared-memory stages of {slug}, in the order the code imposes.")
    return Drawn([Drawing(lambda mode: stages_figure(found, mode), alt_text(found), caption)],
                 read=read)


FIGURE = Figure("stages", "a chapter's shared-memory stages over a few K-steps, in the code's "
                "order", load, arguments=(1, 1),
                argument="a chapter folder's name, e.g. 11-double-buffering")
