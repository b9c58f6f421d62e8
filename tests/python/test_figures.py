"""The measured figures are legible: drawn here with matplotlib as the book
draws them (figures/by_size.py, figures/sweep.py), then
measured in display coordinates, in the light and the dark drawing:

- no two x tick labels overlap (chapter 12's sizes once put 1000 over 1024
  and 3072 to 8192 on top of each other);
- no legend lies over a data point or a line's vertex;
- the by-size line joins only the sizes of its series (4096 and 4097 once
  made a spike); the other sizes are markers of their own;
- a sweep's committed configuration (its ring) lies inside the axes, and the
  GFLOP/s axis spans the rates rather than starting at 0;
- text takes the mode's ink colour (light text on the dark page).

And the mix figure (figures/mix.py) draws one bar per chapter binary, that of
the chapter's own kernel, where a binary holds its variants' kernels too.

The data: the committed results (results/<gpu>/) where there are some, the
test fixtures (tests/fixtures/results/), and made-up worst cases.
"""

import json
import os
import re
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

from figures import by_size, mix, style, sweep  # noqa: E402
from ladder_tools.binaries import chapter_binaries  # noqa: E402
from ladder_tools.kernels import select_kernels  # noqa: E402
from ladder_tools.mix import kernel_mix, mix_categories  # noqa: E402

MODES = ("light", "dark")
RESULT_FOLDERS = [ROOT / "results", ROOT / "tests" / "fixtures" / "results"]


# -- The data -----------------------------------------------------------------


def chapter_results() -> list[tuple[str, dict]]:
    """(name, result) for every chapter result that has a timed square size."""
    found = []
    for folder in RESULT_FOLDERS:
        for path in sorted(folder.glob("*/chapters/*.json")):
            result = json.loads(path.read_text())
            if squares(result):
                found.append((str(path.relative_to(ROOT)), result))
    return found


def squares(result: dict) -> list[dict]:
    return sorted((e for e in result.get("sizes", [])
                   if e["M"] == e["N"] == e["K"] and "time_ms" in e), key=lambda e: e["M"])


def series(result: dict, key: str) -> by_size.Series:
    entries = squares(result)
    return by_size.Series("GPU", [e["M"] for e in entries], [e[key] for e in entries])


def sweeps() -> list[tuple[str, list[float], list[bool], int]]:
    """(name, rates, correct, committed index) per sweep file."""
    found = []
    for folder in RESULT_FOLDERS:
        for path in sorted(folder.glob("*/sweep-*.json")):
            configs = json.loads(path.read_text())["configs"]
            results = [c.get("result", c) for c in configs]
            rates = [r.get("gflops", 0.0) for r in results]
            correct = [r.get("status") == "correct" and "gflops" in r for r in results]
            best = max(range(len(rates)), key=lambda i: rates[i] if correct[i] else -1)
            found.append((str(path.relative_to(ROOT)), rates, correct, best))
    return found


# Chapter 12's sizes: powers of two, the multiples of 1024 between 2048 and
# 8192, and two sizes no tile divides.
CROWDED = [256, 512, 1000, 1024, 2048, 3072, 4096, 4097, 5120, 6144, 7168, 8192]
MADE_UP_RESULT = {"sizes": [
    {"M": s, "N": s, "K": s, "time_ms": 1.0,
     "gflops": 40_000.0 + (s % 7) * 1000 - (s == 4097) * 15_000,
     "cublas_gflops": 45_000.0, "pct_cublas": 90.0 + s % 5}
    for s in CROWDED]}

BY_SIZE_CASES = [("made-up: chapter 12's sizes", MADE_UP_RESULT)] + chapter_results()
SWEEP_CASES = sweeps() + [
    # A sweep whose fastest is first and whose rates spread near the top,
    # with an untimed configuration (rate 0) and an incorrect one.
    ("made-up", [52_000.0 - 90 * i for i in range(90)] + [0.0, 30_000.0],
     [True] * 90 + [False, False], 0),
    # The committed one last: the slowest correct.
    ("made-up, committed last", [50_000.0 - 50 * i for i in range(40)], [True] * 40, 39),
]


# -- Measuring a drawn figure -------------------------------------------------


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


def drawn(make):
    """Draws a figure (under the book's rc settings) and returns it with its
    renderer; the caller closes it."""
    with plt.rc_context(style.RC):
        figure = make()
        figure.canvas.draw()
        return figure, figure.canvas.get_renderer()


# -- The by-size figure (chapter pages' {ladder-plot}) --------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,result", BY_SIZE_CASES, ids=[c[0] for c in BY_SIZE_CASES])
def test_by_size_figure_is_legible(name, result, mode):
    figure, renderer = drawn(lambda: by_size.by_size_figure(
        [series(result, "gflops")], [series(result, "cublas_gflops")],
        [series(result, "pct_cublas")], mode))
    try:
        problems = []
        for axes in figure.axes:
            problems += [f"x tick labels overlap: {p}" for p in tick_label_overlaps(axes, renderer)]
            for line in axes.get_lines():
                joined = line.get_linestyle() not in ("None", "none", "")
                off = [x for x in line.get_xdata() if not by_size.on_series(int(x))]
                if joined and off:
                    problems.append(f"a line runs through {off}, off the series")
            drawn_sizes = {int(x) for line in axes.get_lines() for x in line.get_xdata()}
            assert drawn_sizes == {e["M"] for e in squares(result)}, "a size is not drawn"
        problems += legend_problems(figure, renderer)
        problems += ink_problems(figure, mode)
        assert not problems, f"{name}, {mode}:\n" + "\n".join(problems)
    finally:
        plt.close(figure)


def test_the_crowded_sizes_are_on_the_axis_without_overlap():
    """The made-up case has the sizes that crowded chapter 12's axis: each
    power of two is labelled, every other size has a tick of its own."""
    figure, _ = drawn(lambda: by_size.by_size_figure(
        [series(MADE_UP_RESULT, "gflops")], [series(MADE_UP_RESULT, "cublas_gflops")],
        [series(MADE_UP_RESULT, "pct_cublas")], "light"))
    try:
        axes = figure.axes[0]
        labelled = [t.get_text() for t in axes.get_xticklabels() if t.get_text()]
        assert labelled == ["256", "512", "1024", "2048", "4096", "8192"]
        minor = {int(x) for x in axes.get_xticks(minor=True)}
        assert {1000, 3072, 4097, 5120, 6144, 7168} <= minor
    finally:
        plt.close(figure)


# -- The sweep figure (chapters 09 and 12's {ladder-sweep}) ---------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,rates,correct,committed", SWEEP_CASES,
                         ids=[c[0] for c in SWEEP_CASES])
def test_sweep_figure_is_legible(name, rates, correct, committed, mode):
    median = sorted(r for r, ok in zip(rates, correct) if ok)[sum(correct) // 2]
    figure, renderer = drawn(lambda: sweep.sweep_figure(
        rates, correct, committed, median, mode))
    try:
        axes = figure.axes[0]
        problems = [f"x tick labels overlap: {p}" for p in tick_label_overlaps(axes, renderer)]
        problems += legend_problems(figure, renderer)
        problems += ink_problems(figure, mode)
        # The ring: the collection labelled "committed", whole inside the axes.
        # (A collection's own window extent leaves out its markers' size, so
        # the ring's box is made from its centre, area and line width.)
        ring = next(c for c in axes.collections if c.get_label() == "committed")
        (x, y), = ring.get_offset_transform().transform(ring.get_offsets())
        points = ring.get_sizes()[0] ** 0.5 / 2 + ring.get_linewidths()[0] / 2
        radius = points * figure.dpi / 72
        inside = axes.get_window_extent(renderer)
        if not (inside.x0 <= x - radius and x + radius <= inside.x1
                and inside.y0 <= y - radius and y + radius <= inside.y1):
            problems.append(f"the committed ring (centre {x:.0f}, {y:.0f}, radius "
                            f"{radius:.1f} px) is not inside the axes {inside.bounds}")
        # The y axis spans the correct rates: it does not start at 0 when
        # they are all far above it, and it shows every one of them.
        good = [r for r, ok in zip(rates, correct) if ok]
        low, high = axes.get_ylim()
        if low > min(good) or high < max(good):
            problems.append(f"y axis {low:.0f}..{high:.0f} cuts off the rates "
                            f"{min(good):.0f}..{max(good):.0f}")
        if min(good) > 0.5 * max(good) and low <= 0:
            problems.append("the y axis starts at 0, flattening the spread")
        assert not problems, f"{name}, {mode}:\n" + "\n".join(problems)
    finally:
        plt.close(figure)


# -- The mix figure ({ladder-mix-figure}) ---------------------------------------

BUILD = Path(os.environ.get("LADDER_BUILD_DIR", ROOT / "build"))


def own_kernel_mix(binary: Path, *parts: str) -> dict:
    """The K-loop families of the one kernel of ``binary`` whose name
    contains every one of ``parts``."""
    (kernel,) = [k for k in select_kernels(kernel_mix(binary), None)
                 if all(part in k["name"] for part in parts)]
    return mix_categories(kernel["loop"])


def test_the_mix_figure_has_one_bar_per_chapter_of_its_own_kernel():
    needed = [BUILD / "bin" / name for name in ("10-padding", "12-final")]
    if not all(path.is_file() for path in needed):
        pytest.skip(f"not built in {BUILD}/bin: 10-padding, 12-final (cmake --build build)")
    found = chapter_binaries(ROOT, BUILD)
    drawn_bars = mix.mix_bars(found)
    assert [bar.label for bar in drawn_bars] == [slug.replace("-", " ", 1) for slug, _ in found]
    bars = {bar.label: bar.families for bar in drawn_bars}
    # Chapter 10's own kernel: A padded (layout 0), chapter 09's order (1),
    # not the swizzled variant's nor the rows variant's.
    assert bars["10 padding"] == own_kernel_mix(needed[0], "ALayout)0, 1>")
    # Chapter 12's: the exact path of the tiling kernel.cuh commits to, not
    # its other paths nor the by-size variant's Small tiling.
    text = (ROOT / "chapters" / "12-final" / "kernel.cuh").read_text()
    chosen = re.search(r"using\s+Chosen\s*=\s*Tiling<([^>]*)>", text).group(1)
    assert bars["12 final"] == own_kernel_mix(needed[1], f"Tiling<{chosen},", "true, false>")
