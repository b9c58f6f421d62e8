"""What the figure tests share (tests/python/test_figure_*.py, one file per
module of figures/):

- the data: the committed results and the test fixtures, the build folder
  and the chapters built in it, the H200's results;
- drawing a figure as the book does (under the book's rc settings) and
  reading it back: its texts, its panels, its patches by gid;
- the page modes (light and dark) and their ink;
- boxes in display space: which texts overlap one another, which legend
  lies over a point.
"""

from __future__ import annotations

import os
import sys
from itertools import combinations
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "code")]

matplotlib = pytest.importorskip("matplotlib")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from figures import style  # noqa: E402
from figures.tiling import natural_width_px  # noqa: E402,F401  (the tests import it from here)
from ladder_tools.binaries import chapter_binaries  # noqa: E402
from ladder_tools.results import results_root  # noqa: E402

# -- The data -------------------------------------------------------------------

MODES = ("light", "dark")
RESULT_FOLDERS = [ROOT / "results", ROOT / "tests" / "fixtures" / "results"]
BUILD = Path(os.environ.get("LADDER_BUILD_DIR", ROOT / "build"))
#: The H200's results, under $LADDER_RESULTS_DIR when set, as the book reads them.
H200 = results_root(ROOT) / "h200"
#: The narrowest desktop column of the book: furo's 46em content at 16 px.
COLUMN_PX = 736


def built_chapters() -> list[tuple[str, Path]]:
    return chapter_binaries(ROOT, BUILD) if (BUILD / "bin").is_dir() else []


TILING_CHAPTERS = built_chapters()


def describe_constants(chapter: str) -> dict:
    """The first variant's --describe constants of a built chapter (skips
    the test when it is not built)."""
    from ladder_tools.binaries import describe

    binary = BUILD / "bin" / chapter
    if not binary.is_file():
        pytest.skip(f"{chapter} is not built in {BUILD}/bin")
    return describe(binary)["variants"][0]["constants"]


# -- Drawing a figure and reading it back ------------------------------------------


def drawn(make):
    """Draws a figure (under the book's rc settings) and returns it with its
    renderer; the caller closes it."""
    with plt.rc_context(style.RC):
        figure = make()
        figure.canvas.draw()
        return figure, figure.canvas.get_renderer()


def patches(figure, gid: str) -> list:
    return [p for axes in figure.axes for p in axes.patches if p.get_gid() == gid]


def panel(figure, gid: str):
    (axes,) = [a for a in figure.axes if a.get_gid() == gid]
    return axes


def size(patch) -> tuple[float, float]:
    """(rows, columns) of a Rectangle in data units."""
    return patch.get_height(), patch.get_width()


def corner(patch) -> tuple[float, float]:
    """(first row, first column) of a Rectangle."""
    x, y = patch.get_xy()
    return y, x


def drawn_texts(figure) -> list:
    """The texts a figure shows: its own, its panels' (titles, labels,
    annotations) and its legends'; not the tick labels of hidden axes."""
    texts = list(figure.texts)
    for legend in figure.legends:
        texts += legend.get_texts()
    for axes in figure.axes:
        texts += [axes.title, *axes.texts]
        if axes.axison:
            texts += [*axes.get_xticklabels(), *axes.get_yticklabels()]
    return [t for t in texts if t.get_visible()]


def texts_of(figure) -> list[str]:
    return [t.get_text() for t in drawn_texts(figure) if t.get_text().strip()]


# -- Overlaps, legends and ink -----------------------------------------------------------


def overlaps(a, b) -> bool:
    """Whether two display-space boxes share area (touching is not overlap)."""
    return a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5


def tick_label_overlaps(axes, renderer) -> list[str]:
    labels = [label for label in axes.get_xticklabels(which="both")
              if label.get_visible() and label.get_text()]
    boxes = [(label.get_text(), label.get_window_extent(renderer)) for label in labels]
    return [f"{a} and {b}" for (a, box_a), (b, box_b) in combinations(boxes, 2)
            if overlaps(box_a, box_b)]


def data_points(axes) -> list[tuple[float, float]]:
    """Every marker and line vertex of the axes, in display coordinates."""
    points = []
    for line in axes.get_lines():
        xy = line.get_xydata()
        if len(xy):
            points += [tuple(p) for p in line.get_transform().transform(xy)]
    for collection in axes.collections:
        if isinstance(collection, PathCollection) and len(collection.get_offsets()):
            offsets = collection.get_offset_transform().transform(collection.get_offsets())
            points += [tuple(p) for p in offsets]
    return points


def legend_problems(figure, renderer) -> list[str]:
    problems = []
    legends = [(axes, axes.get_legend()) for axes in figure.axes if axes.get_legend()]
    for axes, legend in legends:
        box = legend.get_window_extent(renderer)
        for other in figure.axes:
            for x, y in data_points(other):
                if box.x0 <= x <= box.x1 and box.y0 <= y <= box.y1:
                    problems.append(f"legend over the point ({x:.0f}, {y:.0f})")
    return problems


def ink_problems(figure, mode: str) -> list[str]:
    ink = to_rgba(style.THEMES[mode]["ink"])
    texts = [t for axes in figure.axes for t in
             (axes.xaxis.label, axes.yaxis.label,
              *axes.get_xticklabels(), *axes.get_yticklabels(),
              *(axes.get_legend().get_texts() if axes.get_legend() else []))
             if t.get_text()]
    return [f"{t.get_text()!r} is {t.get_color()}, not the {mode} ink"
            for t in texts if to_rgba(t.get_color()) != ink]


def text_problems(figure, renderer, mode: str) -> list[str]:
    """Texts not in the mode's ink, and texts that overlap one another."""
    ink = to_rgba(style.THEMES[mode]["ink"])
    texts = [t for t in drawn_texts(figure) if t.get_text().strip()]
    problems = [f"{t.get_text()!r} is {t.get_color()}, not the {mode} ink"
                for t in texts if to_rgba(t.get_color()) != ink]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    problems += [f"{a!r} overlaps {b!r}" for (a, box_a), (b, box_b) in combinations(boxes, 2)
                 if overlaps(box_a, box_b)]
    return problems

