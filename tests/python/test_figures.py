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

import matplotlib.colors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.patches import ConnectionPatch  # noqa: E402
from matplotlib.colors import to_rgb, to_rgba  # noqa: E402

from figures import by_size, mix, style, sweep  # noqa: E402
from ladder_tools.binaries import chapter_binaries  # noqa: E402
from ladder_tools.kernels import select_kernels  # noqa: E402
from ladder_tools.mix import kernel_mix, mix_categories  # noqa: E402
from ladder_tools.results import ChapterResult  # noqa: E402

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


@pytest.mark.parametrize("stacked", [False, True], ids=["side-by-side", "stacked"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,result", BY_SIZE_CASES, ids=[c[0] for c in BY_SIZE_CASES])
def test_by_size_figure_is_legible(name, result, mode, stacked):
    figure, renderer = drawn(lambda: by_size.by_size_figure(
        [series(result, "gflops")], [series(result, "cublas_gflops")],
        [series(result, "pct_cublas")], mode, stacked=stacked))
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


def test_a_tf32_plot_measures_against_cublas_on_tf32():
    """With the reference "tf32", the series are the TF32 keys and the axis
    and the dashed line say cuBLAS on TF32."""
    result = {"provenance": {"gpu": "GPU"}, "sizes": [
        {"M": m, "N": m, "K": m, "gflops": 2.0 * m, "cublas_gflops": 1.0 * m,
         "pct_cublas": 200.0, "cublas_tf32_gflops": 4.0 * m, "pct_cublas_tf32": 50.0,
         "time_ms": {"median": 1.0}, "cublas_time_ms": {"median": 1.0}}
        for m in (1024, 2048)]}
    chapter = ChapterResult("gpu", Path("x.json"), result, None)
    gflops, cublas, pct = by_size.by_size_series([chapter], "tf32")
    assert cublas[0].values == [4096.0, 8192.0] and pct[0].values == [50.0, 50.0]
    figure, _ = drawn(lambda: by_size.by_size_figure(gflops, cublas, pct, "light", "tf32"))
    try:
        left, right = figure.axes[:2]
        assert right.get_ylabel() == "% of cuBLAS on TF32"
        assert any(line.get_label() == "cuBLAS on TF32, GPU" for line in left.get_lines())
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
    # Chapter 12's: the exact path of the tiling kernel.cuh commits to, with
    # A padded (layout 0), not its other paths nor the swizzled and unpadded
    # variants' layouts.
    text = (ROOT / "chapters" / "12-final" / "kernel.cuh").read_text()
    chosen = re.search(r"using\s+Chosen\s*=\s*Tiling<([^>]*)>", text).group(1)
    assert bars["12 final"] == own_kernel_mix(needed[1], f"Tiling<{chosen}, (ch12::ALayout)0>",
                                              "true, false>")


# -- The tiling figure ({ladder-tiling}) -----------------------------------------
#
# Drawn for every chapter built, from its --describe constants, and measured:
# the rectangles are to scale (the block's sides are BN / BM, a warp tile's
# WN / WM, a thread's block TN / TM, in data units and on the drawn page),
# there are as many of each as the constants say, the marked thread sits
# where the kernel's thread map puts it, and the text is legible (the mode's
# ink, no two labels on top of each other).

from figures import tiling  # noqa: E402
from ladder_tools.binaries import describe  # noqa: E402


def built_chapters() -> list[tuple[str, Path]]:
    return chapter_binaries(ROOT, BUILD) if (BUILD / "bin").is_dir() else []


TILING_CHAPTERS = built_chapters()


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


def check_tiling_figure(name: str, c: dict, figure, renderer, mode: str,
                        walk: str | None = None) -> list[str]:
    """What the figure of constants ``c`` must show; the expectations are
    computed here from the constants, not taken from figures/tiling.py."""
    problems = text_problems(figure, renderer, mode)
    bm, bn = (c["BM"], c["BN"]) if "BM" in c else (c["BLOCK"], c["BLOCK"])
    tm, tn = c.get("TM", 1), c.get("TN", 1)
    if "MMA_M" in c:
        tm, tn = 1, 2  # the PTX ISA's C fragment: two neighbours of one row
    threads = c.get("NUM_THREADS", bm * bn // (tm * tn))
    block = panel(figure, "block-panel")
    # The block: BM x BN in data units, and BN / BM on the page.
    if sorted(block.get_xlim()) != [0, bn] or sorted(block.get_ylim()) != [0, bm]:
        problems.append(f"the block panel spans {block.get_xlim()} x {block.get_ylim()}, "
                        f"not {bn} x {bm}")
    box = block.get_window_extent(renderer)
    if abs(box.width / box.height - bn / bm) > 0.01 * bn / bm:
        problems.append(f"the block is drawn {box.width:.0f} x {box.height:.0f} px, "
                        f"not BN / BM = {bn} / {bm}")
    texts = {t.get_text() for t in drawn_texts(figure)}
    names = ("BM", "BN") if "BM" in c else ("BLOCK", "BLOCK")
    for label in (f"{names[0]} = {bm}", f"{names[1]} = {bn}"):
        if label not in texts:
            problems.append(f"no label {label!r}")
    tid = 32 + 9  # the marked thread: warp 1, lane 9
    if "WARPGROUP" in c:
        # Chapter 16: the producer's warps own none of C; the marked thread
        # is lane 9 of the second consumer warp. The PTX ISA's layout of a
        # wgmma.m64nNk8 accumulator D: warp w of the warpgroup holds rows
        # 16w + g and 16w + g + 8 of D, columns 8j + 2t and 8j + 2t + 1. The
        # kernel's D is C^T, so in C that is columns and rows swapped.
        warps_per_group = c["WARPGROUP"] // 32
        idle = threads // 32 - c["CONSUMERS"] * warps_per_group
        tid = (idle + 1) * 32 + 9
        consumer_warp, lane = divmod(tid - idle * 32, 32)
        consumer, warp = divmod(consumer_warp, warps_per_group)
        g, t = divmod(lane, 4)
        wn = bn // (c["CONSUMERS"] * warps_per_group)
        tiles = patches(figure, "warp-tile")
        if len(tiles) != c["CONSUMERS"] * warps_per_group:
            problems.append(f"{len(tiles)} warp columns, not one per consumer warp")
        problems += [f"a warp column is {size(w)}, not {bm} x {wn}"
                     for w in tiles if size(w) != (bm, wn)]
        expected = sorted((8 * j + 2 * t + r, 64 * consumer + 16 * warp + g + 8 * h)
                          for j in range(bm // 8) for r in (0, 1) for h in (0, 1))
        in_block = sorted(corner(p) for p in patches(figure, "thread-in-block"))
        if in_block != expected:
            problems.append(f"thread {tid}'s elements are drawn at {in_block}, the PTX ISA "
                            f"puts them at {expected}")
        zoomed = patches(figure, "thread")
        if len(zoomed) != 8:
            problems.append(f"{len(zoomed)} elements of the thread in the first 16 rows, not 8")
    elif "MMA_M" in c:
        wm, wn, mma_m, mma_n = c["WM"], c["WN"], c["MMA_M"], c["MMA_N"]
        tiles = patches(figure, "warp-tile")
        if len(tiles) != (bm // wm) * (bn // wn):
            problems.append(f"{len(tiles)} warp tiles, not (BM/WM)*(BN/WN)")
        problems += [f"a warp tile is {size(t)}, not WM x WN = {wm} x {wn}"
                     for t in tiles if size(t) != (wm, wn)]
        subtiles = patches(figure, "subtile")
        if len(subtiles) != c["MI"] * c["NI"]:
            problems.append(f"{len(subtiles)} mma tiles, not MI*NI = {c['MI'] * c['NI']}")
        problems += [f"an mma tile is {size(s)}, not {mma_m} x {mma_n}"
                     for s in subtiles if size(s) != (mma_m, mma_n)]
        # The PTX ISA's layout of C for m16n8k8: lane 4g + t holds rows g and
        # g + 8, columns 2t and 2t + 1, of every mma tile of its warp.
        warp, lane = divmod(tid, 32)
        g, t = divmod(lane, 4)
        warp_row, warp_col = divmod(warp, c["WARPS_N"])
        expected = sorted((warp_row * wm + i * mma_m + g + 8 * half,
                           warp_col * wn + j * mma_n + 2 * t)
                          for i in range(c["MI"]) for j in range(c["NI"]) for half in (0, 1))
        in_block = sorted(corner(p) for p in patches(figure, "thread-in-block"))
        if in_block != expected:
            problems.append(f"thread {tid}'s pieces are drawn at {in_block}, the PTX ISA "
                            f"puts them at {expected}")
        zoomed = patches(figure, "thread")
        if len(zoomed) != 2 * c["MI"] * c["NI"]:
            problems.append(f"{len(zoomed)} pieces of the thread in the warp tile")
    elif "WM" in c:
        wm, wn = c["WM"], c["WN"]
        tiles = patches(figure, "warp-tile")
        if len(tiles) != (bm // wm) * (bn // wn):
            problems.append(f"{len(tiles)} warp tiles, not (BM/WM)*(BN/WN) = "
                            f"{(bm // wm) * (bn // wn)}")
        problems += [f"a warp tile is {size(t)}, not WM x WN = {wm} x {wn}"
                     for t in tiles if size(t) != (wm, wn)]
        drawn_tile = tiles[0].get_window_extent(renderer)
        if abs(drawn_tile.width / drawn_tile.height - wn / wm) > 0.02 * wn / wm:
            problems.append("a warp tile is not drawn WN / WM wide")
        subtiles = patches(figure, "subtile")
        wmiter, wniter = c["WMITER"], c["WNITER"]
        if len(subtiles) != wmiter * wniter:
            problems.append(f"{len(subtiles)} sub-tiles, not WMITER*WNITER = {wmiter * wniter}")
        problems += [f"a sub-tile is {size(s)}, not {c['WSUBM']} x {c['WSUBN']}"
                     for s in subtiles if size(s) != (c["WSUBM"], c["WSUBN"])]
        # The marked thread, by the kernel's thread map (warp_row, lane_row, ...)
        # with the kernel's own WARPS_N, LANES_N, WSUBM and WSUBN.
        warp, lane = divmod(tid, 32)
        expected = sorted(
            ((warp // c["WARPS_N"]) * wm + i * c["WSUBM"] + (lane // c["LANES_N"]) * tm,
             (warp % c["WARPS_N"]) * wn + j * c["WSUBN"] + (lane % c["LANES_N"]) * tn)
            for i in range(wmiter) for j in range(wniter))
        in_block = sorted(corner(p) for p in patches(figure, "thread-in-block"))
        if in_block != expected:
            problems.append(f"thread {tid}'s blocks are drawn at {in_block}, the kernel "
                            f"puts them at {expected}")
        zoomed = patches(figure, "thread")
        if len(zoomed) != wmiter * wniter:
            problems.append(f"{len(zoomed)} blocks of the thread in the warp tile")
    else:
        warps = patches(figure, "warp")
        if len(warps) != threads // 32:
            problems.append(f"{len(warps)} warps, not NUM_THREADS / 32 = {threads // 32}")
        if sum(w.get_width() * w.get_height() for w in warps) != bm * bn:
            problems.append("the warps do not cover the block tile")
        # Warp 1: 32 threads of TM x TN, as a strip along the thread rows
        # (NUM_THREADS given: a flat index, row by row) or the lanes' walk.
        per_row = bn // tn
        strip = (max(1, 32 // per_row) * tm, min(32, per_row) * tn)
        if walk == "column":
            strip = strip[::-1]
        if size(warps[1]) != strip:
            problems.append(f"warp 1 is {size(warps[1])}, not {strip}")
        zoomed = patches(figure, "thread")
        row, col = divmod(tid, per_row) if walk != "column" else divmod(tid, bm // tm)[::-1]
        if [corner(p) for p in zoomed] != [(row * tm, col * tn)]:
            problems.append(f"thread {tid} is drawn at {[corner(p) for p in zoomed]}, "
                            f"not {(row * tm, col * tn)}")
    problems += [f"the thread's block is {size(p)}, not TM x TN = {tm} x {tn}"
                 for p in zoomed if size(p) != (tm, tn)]
    for p in zoomed[:1]:
        drawn_thread = p.get_window_extent(renderer)
        if abs(drawn_thread.width / drawn_thread.height - tn / tm) > 0.05 * tn / tm:
            problems.append("the thread's block is not drawn TN / TM wide")
    return [f"{name}, {mode}: {p}" for p in problems]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("slug,binary", TILING_CHAPTERS, ids=[s for s, _ in TILING_CHAPTERS])
def test_the_tiling_figure_is_the_chapters_tiling_to_scale(slug, binary, mode):
    tiling_found, _ = tiling.chapter_tiling(ROOT, BUILD, slug)
    constants = describe(binary)["variants"][0]["constants"]
    figure, renderer = drawn(lambda: tiling.tiling_figure(tiling_found, mode))
    try:
        problems = check_tiling_figure(slug, constants, figure, renderer, mode,
                                       tiling_found.walk)
        assert not problems, "\n".join(problems)
        assert tiling.draw_tiling(tiling_found, mode).startswith(b"<?xml")
    finally:
        plt.close(figure)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("slug,binary", TILING_CHAPTERS, ids=[s for s, _ in TILING_CHAPTERS])
def test_no_zoom_line_or_thread_cell_crosses_a_warp_name(slug, binary, mode):
    """Where a zoom line or a thread's cell overlaps a warp's name, the name
    is drawn over it on a patch of the page's colour, so nothing crosses the
    letters. Checked on the drawn figure: the name's box against each
    line's path and each cell's box, in pixels."""
    tiling_found, _ = tiling.chapter_tiling(ROOT, BUILD, slug)
    figure, renderer = drawn(lambda: tiling.tiling_figure(tiling_found, mode))
    try:
        block = panel(figure, "block-panel")
        names = [t for t in block.texts if re.fullmatch(r"warp \d+", t.get_text())]
        if not names:
            pytest.skip(f"{slug}'s figure names no warps")
        # A line drawn on the figure, not in the block's panel, is drawn after
        # the panel and so over every name it meets.
        lines = [a for a in (*figure.artists, *block.artists) if isinstance(a, ConnectionPatch)]
        cells = patches(figure, "thread-in-block")
        page = matplotlib.colors.to_hex(style.THEMES[mode]["page"])
        crossings = 0
        for name in names:
            box = name.get_window_extent(renderer)
            patch = name.get_bbox_patch()
            covered = (patch is not None and matplotlib.colors.to_hex(patch.get_facecolor())
                       == page and patch.get_alpha() in (None, 1))
            over = [line for line in lines
                    if line.get_path().transformed(line.get_transform()).intersects_bbox(box)]
            over += [cell for cell in cells if cell.get_window_extent(renderer).overlaps(box)]
            for artist in over:
                crossings += 1
                beneath = artist not in figure.artists and artist.get_zorder() < name.get_zorder()
                assert covered and beneath, (
                    f"{name.get_text()} is crossed by {type(artist).__name__} {artist.get_gid()}")
        # The drawing this guards: chapter 16's lines and cells do reach names.
        if tiling_found.wgmma:
            assert crossings > 0
    finally:
        plt.close(figure)


def test_every_chapter_has_a_tiling_figure():
    if len(TILING_CHAPTERS) < 12:
        pytest.skip(f"not every chapter is built in {BUILD}/bin")
    for slug, _ in TILING_CHAPTERS:
        text = (ROOT / "chapters" / slug / "chapter.md").read_text()
        assert f"```{{ladder-tiling}} {slug}" in text, f"{slug}'s page has no tiling figure"


def test_chapters_01_and_02_walk_c_in_different_directions():
    """The lanes' walk is read from the kernel: down a column of C in chapter
    01 (row from threadIdx.x), along a row in chapter 02."""
    walks = {}
    for slug in ("01-naive", "02-coalescing"):
        source = (ROOT / "chapters" / slug / "kernel.cuh").read_text()
        walks[slug] = tiling.lane_walk(source)
    assert walks == {"01-naive": "column", "02-coalescing": "row"}


MADE_UP_TILINGS = [
    # Warp tiling unlike any chapter's: 2 x 2 sub-tiles per warp, square threads.
    {"BM": 32, "BN": 128, "WM": 16, "WN": 64, "WMITER": 2, "WNITER": 2, "TM": 2, "TN": 4,
     "NUM_THREADS": 128, "WARPS_N": 2, "WSUBM": 8, "WSUBN": 32, "LANES_N": 8},
    # Thread tiling with a warp two thread rows high and TN > TM.
    {"BM": 32, "BN": 64, "TM": 2, "TN": 4, "NUM_THREADS": 256},
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("constants", MADE_UP_TILINGS, ids=["warp-tiled", "thread-tiled"])
def test_the_tiling_figure_follows_made_up_constants(constants, mode):
    found = tiling.tiling_of("made-up", constants)
    figure, renderer = drawn(lambda: tiling.tiling_figure(found, mode))
    try:
        problems = check_tiling_figure("made-up", constants, figure, renderer, mode)
        assert not problems, "\n".join(problems)
    finally:
        plt.close(figure)


def test_constants_that_do_not_tile_the_block_are_refused():
    with pytest.raises(tiling.TilingError):
        tiling.tiling_of("made-up", {"BM": 64, "BN": 64, "TM": 8, "NUM_THREADS": 256})


# -- The roofline ({ladder-roofline}) ---------------------------------------------
#
# Drawn from the committed H200 results and the built chapters: each chapter's
# point is where its measured GFLOP/s at 4096 and the intensity of its own
# tile constants put it (the intensity computed here, from --describe, not by
# figures/roofline.py), the ceilings are the baseline's, and no two texts
# (labels, ceilings' names, ticks) overlap, in the light and the dark drawing.

from matplotlib.text import Text  # noqa: E402

from figures import ladder, roofline  # noqa: E402
from ladder_tools.results import results_root  # noqa: E402

#: The H200's results, under $LADDER_RESULTS_DIR when set, as the book reads them.
H200 = results_root(ROOT) / "h200"
#: The roofline is the FMA units': Part II's chapters (the tensor cores) are not on it.
ROOFLINE_CHAPTERS = [(slug, binary) for slug, binary in TILING_CHAPTERS
                     if ladder.part_of(slug) == 1]


def roofline_or_skip():
    if len(TILING_CHAPTERS) < 12:
        pytest.skip(f"not every chapter is built in {BUILD}/bin")
    if not (H200 / "baseline.json").is_file():
        pytest.skip("no H200 baseline in results/")
    found, _, _ = roofline.roofline_data(ROOT, BUILD, "h200")
    assert found is not None
    return found


def expected_intensity(slug: str, binary: Path) -> float:
    """FLOP per byte of global loads from the chapter's --describe constants:
    a block tile BM x BN with K-step BK loads (BM + BN) * BK floats per
    BM * BN * BK multiply-adds; BLOCK with a __shared__ tile is BM = BN = BK
    = BLOCK; BLOCK without one (chapters 01 to 03) loads two floats per
    multiply-add."""
    c = describe(binary)["variants"][0]["constants"]
    source = (ROOT / "chapters" / slug / "kernel.cuh").read_text()
    if "BK" in c:
        bm, bn, bk = c["BM"], c["BN"], c["BK"]
    elif "__shared__" in source:
        bm = bn = bk = c["BLOCK"]
    else:
        return 2 / 8
    return (2 * bm * bn * bk) / (4 * (bm + bn) * bk)


def measured_at_4096(slug: str) -> float:
    data = json.loads((H200 / "chapters" / f"{slug}.json").read_text())
    (entry,) = [e for e in data["sizes"] if (e["M"], e["N"], e["K"]) == (4096, 4096, 4096)]
    return entry["gflops"]


def every_axes(figure) -> list:
    """The figure's axes and the panels inset in them."""
    return [a for axes in figure.axes for a in (axes, *axes.child_axes)]


def roofline_texts(figure) -> list:
    texts = list(drawn_texts(figure))
    for axes in figure.axes:
        for inset in axes.child_axes:
            texts += [t for t in inset.texts if t.get_visible()]
    return [t for t in texts if t.get_text().strip()]


def text_box(text, renderer):
    """A text's own box (an annotation's without its leader line)."""
    return Text.get_window_extent(text, renderer)


@pytest.mark.parametrize("mode", MODES)
def test_the_roofline_is_legible(mode):
    found = roofline_or_skip()
    figure, renderer = drawn(lambda: roofline.roofline_figure(found, mode))
    try:
        ink = to_rgba(style.THEMES[mode]["ink"])
        texts = roofline_texts(figure)
        problems = [f"{t.get_text()!r} is {t.get_color()}, not the {mode} ink"
                    for t in texts if to_rgba(t.get_color()) != ink]
        boxes = [(t.get_text(), text_box(t, renderer)) for t in texts]
        problems += [f"{a!r} overlaps {b!r}" for (a, box_a), (b, box_b)
                     in combinations(boxes, 2) if overlaps(box_a, box_b)]
        labelled = {part for t in texts if (t.get_gid() or "").startswith("label-")
                    for part in t.get_text().split(", ")}
        problems += [f"{slug} has no label" for slug, _ in ROOFLINE_CHAPTERS
                     if slug.split("-")[0] not in labelled]
        assert not problems, "\n".join(problems)
        assert roofline.draw_roofline(found, mode).startswith(b"<?xml")
    finally:
        plt.close(figure)


def test_each_chapter_sits_at_its_tiles_intensity_and_its_measured_rate():
    found = roofline_or_skip()
    figure, _ = drawn(lambda: roofline.roofline_figure(found, "light"))
    try:
        (main,) = [a for a in figure.axes if a.get_gid() == "roofline-axes"]
        (dots,) = [c for c in main.collections if c.get_gid() == "chapters"]
        drawn_points = [tuple(p) for p in dots.get_offsets()]
        assert len(drawn_points) == len(ROOFLINE_CHAPTERS)
        for slug, binary in ROOFLINE_CHAPTERS:
            x, y = expected_intensity(slug, binary), measured_at_4096(slug)
            assert any(abs(px - x) < 1e-9 * x and abs(py - y) < 1e-6 * y
                       for px, py in drawn_points), f"{slug} is not drawn at ({x}, {y})"
        # The chapters near the roof are drawn again, magnified, at the same place.
        insets = [a for a in every_axes(figure) if a.get_gid() == "roofline-magnified"]
        for inset in insets:
            (near,) = [c for c in inset.collections if c.get_gid() == "chapters-magnified"]
            assert {tuple(p) for p in near.get_offsets()} <= set(drawn_points)
    finally:
        plt.close(figure)


def test_the_roofline_leaves_out_part_ii(tmp_path, monkeypatch):
    """A tensor-core chapter's result is above the FMA roof, not under it:
    the roofline draws Part I's chapters only."""
    if not (BUILD / "bin" / "12-final").is_file() or not (H200 / "baseline.json").is_file():
        pytest.skip("needs build/bin/12-final and the H200's baseline")
    folder = tmp_path / "h200" / "chapters"
    folder.mkdir(parents=True)
    (tmp_path / "h200" / "baseline.json").write_text((H200 / "baseline.json").read_text())
    (folder / "12-final.json").write_text((H200 / "chapters" / "12-final.json").read_text())
    part_ii = json.loads((H200 / "chapters" / "12-final.json").read_text())
    part_ii["chapter"] = "14-tf32"
    for entry in part_ii["sizes"]:
        entry["gflops"] *= 3
    (folder / "14-tf32.json").write_text(json.dumps(part_ii))
    monkeypatch.setenv("LADDER_RESULTS_DIR", str(tmp_path))
    found, _, used = roofline.roofline_data(ROOT, BUILD, "h200")
    assert [p.slug for p in found.points] == ["12-final"]
    assert [r.data["chapter"] for r in used] == ["12-final"]


def test_the_chapters_intensities_are_the_tilings():
    """The numbers the book's reader can check by hand: 0.25 FLOP/byte for
    chapters 01 to 03, BLOCK / 4 for chapter 04, 2 BM BN / (4 (BM + BN))."""
    if len(TILING_CHAPTERS) < 12:
        pytest.skip(f"not every chapter is built in {BUILD}/bin")
    got = {slug: round(expected_intensity(slug, binary), 2) for slug, binary in TILING_CHAPTERS}
    assert got["01-naive"] == got["02-coalescing"] == got["03-flat-block"] == 0.25
    assert got["04-smem-tiling"] == 8.0


def test_the_ceilings_are_the_baselines():
    found = roofline_or_skip()
    baseline = json.loads((H200 / "baseline.json").read_text())
    peak, bandwidth = baseline["fma_peak_gflops"], baseline["copy_bandwidth_gbs"]
    p = baseline["provenance"]
    theoretical = p["sm_count"] * 128 * 2 * p["sm_clock_mhz"] / 1000  # sm_90: 128 FP32 lanes
    figure, _ = drawn(lambda: roofline.roofline_figure(found, "dark"))
    try:
        assert len(every_axes(figure)) == 2  # the roofline and its magnified panel
        for axes in every_axes(figure):
            lines = {line.get_gid(): line.get_xydata() for line in axes.get_lines()}
            roof = lines["ceiling-measured"]
            for x, y in roof:
                assert y == pytest.approx(min(peak, bandwidth * x), rel=1e-9)
            assert roof[1][0] == pytest.approx(peak / bandwidth)
            assert max(y for _, y in roof) == pytest.approx(peak)
            assert all(y == pytest.approx(theoretical) for _, y in lines["ceiling-theoretical"])
    finally:
        plt.close(figure)


# -- Chapter 11's stages and chapter 12's rounds --------------------------------
# The counts are computed here from --describe and the results file, not by
# the figures' modules.

from figures import rounds, stages  # noqa: E402


def describe_constants(chapter: str) -> dict:
    binary = BUILD / "bin" / chapter
    if not binary.is_file():
        pytest.skip(f"{chapter} is not built in {BUILD}/bin")
    return describe(binary)["variants"][0]["constants"]


def texts_of(figure) -> list[str]:
    return [t.get_text() for t in drawn_texts(figure) if t.get_text().strip()]


@pytest.mark.parametrize("mode", MODES)
def test_the_stages_figure_is_the_codes_order(mode):
    c = describe_constants("11-double-buffering")
    found, _ = stages.chapter_stages(ROOT, BUILD, "11-double-buffering")
    figure, renderer = drawn(lambda: stages.stages_figure(found, mode))
    try:
        assert text_problems(figure, renderer, mode) == []
        words = " ".join(texts_of(figure))
        assert f"STAGES = {c['STAGES']}" in words and f"BK = {c['BK']}" in words
        assert (f"As {c['A_STAGE_FLOATS']} + Bs {c['STAGE_FLOATS'] - c['A_STAGE_FLOATS']} = "
                f"{c['STAGE_FLOATS']} floats") in words
        lanes = panel(figure, "lanes")
        lane_height = lanes.get_ylim()[0] / c["STAGES"]

        def cells(gid):
            # (column, lane) of each box, and its text (the step).
            found_cells = {}
            for p in patches(figure, gid):
                column = int(p.get_x())
                lane = int(p.get_y() // lane_height)
                found_cells[column] = lane
            return found_cells

        fmas, loads = cells("fma"), cells("load")
        steps = len(fmas)
        assert steps >= 3
        # Step k (column k + 1) reads stage k mod STAGES and fills the other.
        assert fmas == {k + 1: k % c["STAGES"] for k in range(steps)}
        assert loads == {0: 0, **{k + 1: (k + 1) % c["STAGES"] for k in range(steps)}}
        # One barrier closes the prologue and each step.
        barriers = [line for line in lanes.get_lines() if line.get_gid() == "barrier"]
        assert sorted(line.get_xdata()[0] for line in barriers) == list(range(1, steps + 2))
    finally:
        plt.close(figure)


def expected_rounds(size: int) -> tuple[int, int, int, int]:
    """Blocks, blocks per round, full rounds and the last round's blocks of
    12-final at N = size, from --describe and results/h200."""
    c = describe_constants("12-final")
    path = H200 / "chapters" / "12-final.json"
    if not path.is_file():
        pytest.skip("no 12-final result for the H200")
    data = json.loads(path.read_text())
    per_round = data["provenance"]["sm_count"] * data["resources"]["blocks_per_sm"]
    blocks = -(-size // c["BM"]) * -(-size // c["BN"])
    return blocks, per_round, blocks // per_round, blocks % per_round


@pytest.mark.parametrize("size", [3072, 4096])
@pytest.mark.parametrize("mode", MODES)
def test_the_rounds_figure_counts_the_blocks(size, mode):
    blocks, per_round, full, last = expected_rounds(size)
    found, _, _ = rounds.chapter_rounds(ROOT, BUILD, "12-final", size, "h200")
    figure, renderer = drawn(lambda: rounds.rounds_figure(found, mode))
    try:
        assert text_problems(figure, renderer, mode) == []
        words = " ".join(texts_of(figure))
        assert f"= {blocks} blocks" in words
        assert f"= {per_round} per round" in words
        bars = patches(figure, "round")
        assert len(bars) == full + (1 if last else 0)
        per_sm = per_round / panel(figure, "rounds").get_xlim()[1]
        filled = [round(b.get_width() * per_sm) for b in bars]
        assert filled == [per_round] * full + ([last] if last else [])
        if last:
            assert f"{last} of {per_round}" in words
    finally:
        plt.close(figure)



# -- Chapter 16's cut last round ({ladder-cut}) ------------------------------------
# The busiest SM's K-steps, uncut and cut, computed here from the page's rule
# (at most SMs / tiles-left slices a tile, at most one a K-step, none under
# 2), against what build/bin/lastround gives from the chapter's own
# last_round() and block_work(), and what the figure draws of it.

from figures import cut  # noqa: E402


def expected_cut(size: int, sms: int) -> tuple[int, int, int, int]:
    """The uncut and the cut busiest SM's K-steps, the cut tiles and their
    slices of 17-3xtf32-wgmma's 128 x 128 tile at N = size."""
    tiles, steps = (-(-size // 128)) ** 2, -(-size // 32)
    uncut = -(-tiles // sms) * steps
    left = tiles % sms
    most = min(sms // left, steps) if left else 1
    if most < 2:
        return uncut, uncut, 0, 1
    per = -(-steps // most)
    return uncut, tiles // sms * steps + per, left, -(-steps // per)


@pytest.mark.parametrize("size", [1536, 2560, 4096])
@pytest.mark.parametrize("mode", MODES)
def test_the_cut_figure_is_the_count(size, mode):
    tool = BUILD / "bin" / "lastround"
    if not tool.is_file():
        pytest.skip(f"lastround is not built in {BUILD}/bin")
    found, _, _ = cut.chapter_cut(ROOT, tool, "17-3xtf32-wgmma", size, "h200")
    if found is None:
        pytest.skip("no 17-3xtf32-wgmma result for the H200")
    uncut, busiest, cut_tiles, slices = expected_cut(size, found.sms)
    assert (found.uncut.busiest, found.cut.busiest) == (uncut, busiest)
    assert (found.cut.cut_tiles, found.cut.slices) == (cut_tiles, slices)
    for plan in (found.uncut, found.cut):  # an SM runs one block at a time
        by_sm: dict[int, list] = {}
        for bar in plan.bars:
            by_sm.setdefault(bar.sm, []).append((bar.start, bar.start + bar.steps))
        for spans in by_sm.values():
            spans.sort()
            assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    figure, renderer = drawn(lambda: cut.cut_figure(found, mode))
    try:
        assert text_problems(figure, renderer, mode) == []
        words = " ".join(texts_of(figure))
        assert f"the busiest SM runs {uncut} steps" in words
        if cut_tiles:
            assert f"= {busiest} steps" in words
        # The slices' rectangles cover cut_tiles * slices SMs in all.
        assert round(sum(p.get_height() for p in patches(figure, "slices"))) == (
            cut_tiles * slices)
    finally:
        plt.close(figure)


# -- Chapter 16's pipeline ({ladder-pipeline}) -----------------------------------
# What the kernel's barriers require (sgemm_wgmma, consume_tf32,
# consume_3xtf32), checked here against the schedule figures/pipeline.py
# computes from each variant's --describe constants, and against what the
# figure draws of it.

from figures import pipeline  # noqa: E402
from ladder_tools.binaries import AnalysisError  # noqa: E402

PIPELINE_SLUGS = ["16-wgmma", "16-wgmma-wide", "17-3xtf32-wgmma"]


def variant_constants(slug: str) -> dict:
    chapter = "16-wgmma" if slug.startswith("16-") else "17-3xtf32-wgmma"
    binary = BUILD / "bin" / chapter
    if not binary.is_file():
        pytest.skip(f"{chapter} is not built in {BUILD}/bin")
    (variant,) = [v for v in describe(binary)["variants"] if v["slug"] == slug]
    return variant["constants"]


def made_up_wgmma(stages: int, products: int) -> dict:
    """Constants of a made-up variant of chapter 16's tiling (tiling.cuh's sums)."""
    bm, bn, bk = 128, 128, 32
    a_tiles = 3 if products == 3 else 1  # A's tile, and on 3xTF32 its two parts
    copy = (a_tiles * bm + bn) * bk
    return {"BM": bm, "BN": bn, "BK": bk, "STAGES": stages, "PRODUCTS": products,
            "CONSUMERS": 2, "WARPGROUP": 128, "A_TILES": a_tiles, "COPY_FLOATS": copy,
            "STAGE_FLOATS": copy}


def pipeline_problems(c: dict, tasks) -> list[str]:
    """What the kernel's barriers and roles require of a schedule of
    constants c; [] when it keeps them all."""
    stages = c["STAGES"]
    kinds = {"copy", "mma"}
    problems = []
    found: dict[tuple[str, int], list] = {}
    for t in tasks:
        found.setdefault((t.kind, t.step), []).append(t)
    steps = sorted({t.step for t in tasks})
    if steps != list(range(len(steps))) or len(steps) <= stages:
        problems.append(f"steps {steps}: not 0 .. n - 1 with a refill (n > STAGES = {stages})")
    for k in steps:
        for kind in kinds:
            if len(found.get((kind, k), [])) != 1:
                problems.append(f"step {k} has {len(found.get((kind, k), []))} {kind} tasks")
    problems += [f"a {kind} task" for kind in {t.kind for t in tasks} - kinds]
    problems += [f"step {t.step}'s {t.kind} is in stage {t.stage}, not k mod {stages}"
                 for t in tasks if t.stage != t.step % stages]
    if problems:
        return problems

    def task(kind, k):
        return found[(kind, k)][0]

    for k in steps:
        copy, mma = task("copy", k), task("mma", k)
        # "full": the consumers read step k after its copy landed.
        if mma.start < copy.end:
            problems.append(f"step {k} is multiplied before its copy lands")
        # "empty": the stage takes step k + STAGES only after the consumers
        # are done with step k.
        if k + stages in steps:
            refill = task("copy", k + stages)
            if refill.start < mma.end:
                problems.append(f"step {k + stages} refills stage {k % stages} before "
                                f"step {k}'s empty")
    # Each role does one step after another (the producer's thread issues its
    # copies in order; the consumers finish one first).
    for kind in kinds:
        order = [task(kind, k) for k in steps]
        for a, b in zip(order, order[1:]):
            if b.start < a.start or (kind != "copy" and b.start < a.end):
                problems.append(f"{kind} of step {b.step} runs before that of step {a.step}")
    # A stage holds one thing at a time.
    for stage in range(stages):
        lane = sorted((t for t in tasks if t.stage == stage), key=lambda t: t.start)
        problems += [f"stage {stage}: {a.kind} {a.step} and {b.kind} {b.step} overlap"
                     for a, b in zip(lane, lane[1:]) if b.start < a.end]
    # The ring overlaps copying with multiplying: the producer runs ahead.
    if not any(a.kind == "copy" and b.kind == "mma" and a.start == b.start and a.step > b.step
               for a in tasks for b in tasks):
        problems.append("no copy runs beside a multiply")
    return problems


@pytest.mark.parametrize("slug", PIPELINE_SLUGS)
def test_the_pipeline_schedule_keeps_the_kernels_barriers(slug):
    c = variant_constants(slug)
    found, _ = pipeline.chapter_pipeline(ROOT, BUILD, slug)
    assert (found.stages, found.products) == (c["STAGES"], c["PRODUCTS"])
    assert pipeline_problems(c, pipeline.schedule(found)) == []


@pytest.mark.parametrize("products", [1, 3])
@pytest.mark.parametrize("stages", [2, 3, 5])
def test_the_pipeline_schedule_follows_made_up_constants(stages, products):
    c = made_up_wgmma(stages, products)
    assert pipeline_problems(c, pipeline.schedule(pipeline.pipeline_of("made-up", c))) == []


def test_a_schedule_that_refills_before_empty_is_caught():
    # The check above can fail: a producer that ignores "empty" refills early.
    c = made_up_wgmma(3, 1)
    tasks = pipeline.schedule(pipeline.pipeline_of("made-up", c))
    early = [pipeline.Task(t.kind, t.step, t.stage, 0) if t.kind == "copy" else t for t in tasks]
    assert any("before step" in p for p in pipeline_problems(c, early))


@pytest.mark.parametrize("broken", [{"COPY_FLOATS": 1}, {"STAGE_FLOATS": 1}, {"PRODUCTS": 2},
                                    {"STAGES": 1}, {"A_TILES": 1}])
def test_the_pipeline_refuses_constants_that_are_not_the_kernels(broken):
    with pytest.raises(AnalysisError):
        pipeline.pipeline_of("made-up", {**made_up_wgmma(3, 3), **broken})


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("slug", PIPELINE_SLUGS)
def test_the_pipeline_figure_draws_each_task_and_barrier_once(slug, mode):
    c = variant_constants(slug)
    found, _ = pipeline.chapter_pipeline(ROOT, BUILD, slug)
    barrier_of = {"copy": "full", "mma": "empty"}
    kinds = ["copy", "mma"]
    figure, renderer = drawn(lambda: pipeline.pipeline_figure(found, mode))
    try:
        assert text_problems(figure, renderer, mode) == []
        words = " ".join(texts_of(figure))
        assert f"STAGES = {c['STAGES']}" in words and f"BK = {c['BK']}" in words
        assert f"= {c['STAGE_FLOATS']} floats" in words
        assert f"empty: {c['CONSUMERS'] * c['WARPGROUP']} arrived" in words
        assert ("A's parts" in words) == (c["PRODUCTS"] == 3)
        lanes = panel(figure, "lanes")
        lane_height = lanes.get_ylim()[0] / c["STAGES"]
        cells = {p.get_gid(): p for p in lanes.patches}
        steps = len([gid for gid in cells if gid.startswith("copy-")])
        assert steps > c["STAGES"]  # at least one stage refilled
        assert set(cells) == {f"{kind}-{k}" for kind in kinds for k in range(steps)}
        lines = {line.get_gid(): line for line in lanes.get_lines()}
        for gid, cell in cells.items():
            kind, step = gid.split("-")
            # Step k in stage k mod STAGES, its barrier at its end.
            assert int(cell.get_y() // lane_height) == int(step) % c["STAGES"], gid
            line = lines[f"barrier-{barrier_of[kind]}-{step}"]
            assert line.get_xdata()[0] == pytest.approx(round(cell.get_x() + cell.get_width()))
        assert len([gid for gid in lines if gid.startswith("barrier-")]) == len(cells)
    finally:
        plt.close(figure)
    # The SVG: one element per cell and per barrier, each under its own id.
    ids = re.findall(r'<g id="([^"]+)"', pipeline.draw_pipeline(found, mode).decode())
    for kind in kinds:
        for k in range(steps):
            assert ids.count(f"{kind}-{k}") == 1, f"{kind}-{k}"
            assert ids.count(f"barrier-{barrier_of[kind]}-{k}") == 1


def test_draw_py_draws_the_pipeline(tmp_path):
    variant_constants("17-3xtf32-wgmma")
    for mode in MODES:
        out = tmp_path / f"pipeline-{mode}.svg"
        done = subprocess.run([sys.executable, str(ROOT / "figures" / "draw.py"), "pipeline",
                               "17-3xtf32-wgmma", "--mode", mode, "--out", str(out)],
                              capture_output=True, text=True,
                              env={**os.environ, "LADDER_BUILD_DIR": str(BUILD)})
        assert done.returncode == 0, done.stderr
        assert 'id="copy-0"' in out.read_text() and "A's parts" in out.read_text()


# -- The bank grid ({ladder-bankgrid}) -------------------------------------------
# Every access a page draws as a bank grid, from bankmap's JSON: the grid has
# a row per wavefront of the model, each active lane's words sit in their
# banks (computed here from the lane's byte address), a cell is coloured
# conflicted exactly when the model counts more than one word in its bank in
# its phase, the text is legible and the figure fits the book's column.

from collections import Counter  # noqa: E402

from figures import bankgrid  # noqa: E402
from figures.tiling import natural_width_px  # noqa: E402
from ladder_tools.bankmap import run_bankmap  # noqa: E402

#: The narrowest desktop column of the book: furo's 46em content at 16 px.
COLUMN_PX = 736
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
    grids = [bankgrid.bank_grid(report, title) for report, title in zip(reports, titles)]
    figure, renderer = drawn(lambda: bankgrid.bankgrid_figure(grids, mode))
    problems = []
    try:
        problems += text_problems(figure, renderer, mode)
        for index, (report, title) in enumerate(zip(reports, titles)):
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
            for cell, label in zip(cells, labels):
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


# -- The warp-access figure ({ladder-warp-access}) -------------------------------
#
# What build/bin/warpmap computes with the chapters' index functions, checked
# against the lesson counted here from the addresses: chapter 01's lanes have
# 32 rows of C in one column (32 sectors of A, a broadcast of B), chapter
# 02's 32 columns of one row (a broadcast of A, 4 sectors of one line of B),
# chapter 07's float4s fill whole sectors and land transposed in As; the
# expressions the tool quotes are still the kernels'; and the figure is
# legible in both modes and fits the book's column.

from figures import warp_access  # noqa: E402
from ladder_tools.warpmap import CHAPTER_ACCESSES, chapter_accesses, run_warpmap  # noqa: E402

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


# -- Chapter 13's rounds and plans ({ladder-tail-rounds}, {ladder-tail-plans}) ------
# The plans and segments are build/bin/tailplan's (the chapter's own plan(),
# cost() and schedule functions); what is checked here is computed here: the
# tiles and steps from the sizes and tilings, every tile's K-steps covered
# once, the figure's bars those of the placement, the table those of the tool.

from figures import tail  # noqa: E402
from ladder_tools import results as results_tools  # noqa: E402
from ladder_tools import tailplan  # noqa: E402

#: The sizes and schemes chapter 13's page draws (the lead's list).
TAIL_SIZES = ["512", "768", "1024", "1280", "1536", "2048", "2560", "3072", "4096",
              "4097x4097x4097", "512x512x16384", "128x4096x4096"]
TAIL_FIGURES = [("3072", ["tiles", "split-k", "stream-k"]),
                ("1024", ["tiles", "split-k", "stream-k"]),
                ("512x512x16384", ["tiles", "split-k", "stream-k"]),
                ("4097x4097x4097", ["default", "big-tiles"])]
#: An H200's shape, for the tool alone (the book takes it from the results).
H200_SHAPE = tailplan.TailGpu("NVIDIA H200", 132, 1, 3, "the test's")


def tailplan_tool() -> Path:
    tool = BUILD / "bin" / "tailplan"
    if not tool.is_file():
        pytest.skip(f"tailplan is not built in {BUILD}/bin")
    return tool


def tail_pages() -> list[tuple[str, str, list[str]]]:
    """(page and line, size, schemes) of every {ladder-tail-rounds} on a page."""
    found = []
    for page in sorted((ROOT / "chapters").glob("**/*.md")):
        lines = page.read_text().splitlines()
        for number, line in enumerate(lines, 1):
            if match := re.match(r"^```\{ladder-tail-rounds\}\s+(\S+)", line):
                schemes = ["tiles", "split-k", "stream-k"]
                for option in lines[number:number + 3]:
                    if option.startswith(":schemes:"):
                        schemes = option.split()[1:]
                found.append((f"{page.relative_to(ROOT)}:{number}", match.group(1), schemes))
    return found


TAIL_CASES = [(f"size {size}", size, schemes) for size, schemes in TAIL_FIGURES] + tail_pages()


def test_tailplan_plans_follow_the_sizes_and_the_variants_rules():
    tool = tailplan_tool()
    sizes = [tailplan.parse_size(s) for s in TAIL_SIZES]
    report = tailplan.run_plans(tool, H200_SHAPE, sizes)
    assert [(e["M"], e["N"], e["K"]) for e in report["sizes"]] == sizes
    for entry in report["sizes"]:
        where = f"{entry['M']}x{entry['N']}x{entry['K']}"
        plans = {**entry["variants"], "big-tiles": entry["big_tiles"]}
        for name, plan in plans.items():
            t = report[plan["tiling"]]
            # A packed plan runs on copies whose rows are whole 128-byte
            # lines: N and K rounded up to multiples of 32 floats.
            n, k = entry["N"], entry["K"]
            if plan.get("packed"):
                n, k = -(-n // 32) * 32, -(-k // 32) * 32
            assert plan["tiles_m"] == -(-entry["M"] // t["BM"]), (where, name)
            assert plan["tiles_n"] == -(-n // t["BN"]), (where, name)
            assert plan["tiles"] == plan["tiles_m"] * plan["tiles_n"]
            assert plan["steps"] == -(-k // t["BK"]), (where, name)
            slots = report["sms"] * t["blocks_per_sm"]
            if plan["scheme"] == "stream-k":
                shared = plan["tiles"] - plan["dp_tiles"]
                assert plan["dp_tiles"] % slots == 0, (where, name)
                assert plan["sharing_blocks"] == min(slots, shared * plan["steps"]), (where, name)
                assert plan["blocks"] == plan["dp_tiles"] + plan["sharing_blocks"]
            else:
                assert plan["blocks"] == plan["tiles"] * plan["slices"], (where, name)
                assert (plan["slices"] > 1) == (plan["scheme"] == "split-k")
        v = entry["variants"]
        assert v["tiles"]["scheme"] == "tiles", where
        assert v["split-k"]["scheme"] != "stream-k", where
        assert v["stream-k"]["scheme"] == "stream-k", where
        assert entry["big_tiles"]["tiling"] == "big" and entry["big_tiles"]["scheme"] == "tiles"
        # More schemes to pick from never make the pick's count worse (the
        # count as plan() compares it: Small's weighted by its slowdown).
        cost = {name: plan["weighted_cost"] for name, plan in v.items()}
        assert cost["default"] <= cost["split-k"] <= cost["tiles"], where
        assert cost["tiles"] <= entry["big_tiles"]["weighted_cost"], where


@pytest.mark.parametrize("size", ["3072", "1024", "512x512x16384", "4097x4097x4097", "1280",
                                  "128x4096x4096"])
def test_every_schemes_segments_cover_each_tiles_steps_once(size):
    tool = tailplan_tool()
    for scheme in tailplan.SCHEMES:
        report = tailplan.run_segments(tool, H200_SHAPE, scheme, tailplan.parse_size(size))
        plan = report["plan"]
        assert len(report["blocks"]) == plan["blocks"], scheme
        covered: dict[int, list[tuple[int, int, int, int]]] = {}
        for block in report["blocks"]:
            for seg in block["segments"]:
                covered.setdefault(seg["tile"], []).append(
                    (seg["first_step"], seg["end_step"], seg["turn"], seg["turns"]))
        assert sorted(covered) == list(range(plan["tiles"])), scheme
        for tile, segs in covered.items():
            segs.sort()
            assert [s[0] for s in segs] == [0] + [s[1] for s in segs[:-1]], (scheme, tile)
            assert segs[-1][1] == plan["steps"], (scheme, tile)
            assert [s[2] for s in segs] == list(range(len(segs))), (scheme, tile)
            assert {s[3] for s in segs} == {len(segs)}, (scheme, tile)
        # The placement's bars and the busy slots add up to every tile's steps.
        (panel,) = tail.tail_panels([(scheme, report)])
        assert sum(b.steps for b in panel.bars) == plan["tiles"] * plan["steps"], scheme
        busy = panel.busy()
        area = sum(level * (after[0] - time) for (time, level), after in zip(busy, busy[1:]))
        assert area == plan["tiles"] * plan["steps"], scheme
        assert busy[-1][1] == 0 and max(level for _, level in busy) <= panel.slots, scheme
        # No slot runs two blocks at once.
        by_slot: dict[int, list] = {}
        for b in panel.bars:
            by_slot.setdefault(b.slot, []).append((b.start, b.start + b.steps))
        for spans in by_slot.values():
            spans.sort()
            assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), scheme


def tail_rounds_or_skip(size: str, schemes: list[str]):
    tool = tailplan_tool()
    found, _, _ = tail.chapter_tail_rounds(ROOT, BUILD, tool, tailplan.parse_size(size),
                                           schemes, "h200")
    if found is None:
        pytest.skip("no H200 result to take the SMs from")
    return found


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where,size,schemes", TAIL_CASES, ids=[c[0] for c in TAIL_CASES])
def test_the_tail_rounds_figure_is_the_tools_segments(where, size, schemes, mode):
    found = tail_rounds_or_skip(size, schemes)
    tool = tailplan_tool()
    gpu, _, _ = tailplan.tail_gpu(ROOT, BUILD, "h200")
    figure, renderer = drawn(lambda: tail.tail_rounds_figure(found, mode))
    try:
        problems = text_problems(figure, renderer, mode)
        # One panel per distinct plan; every scheme is named in one.
        assert sorted(n for p in found.panels for n in p.names) == sorted(schemes)
        sampled = found.sampled()
        for index, panel in enumerate(found.panels):
            report = tailplan.run_segments(tool, gpu, panel.names[0], found.size)
            plan = report["plan"]
            if sum(b.steps for b in panel.bars) != plan["tiles"] * plan["steps"]:
                problems.append(f"{panel.names}: the bars do not add up to tiles x steps")
            # The drawn bars are the placement's on the sampled SMs, to the step.
            expected = sorted((b.start, b.steps) for b in panel.bars
                              if b.slot % panel.sms in sampled)
            axes = panel_of(figure, f"tail-panel-{index}")
            bars = sorted((round(p.get_x()), round(p.get_width())) for p in axes.patches
                          if p.get_gid() == "tail-segment")
            if bars != expected:
                problems.append(f"{panel.names}: {len(bars)} bars drawn, {len(expected)} placed")
            if not any(t.get_text().startswith(" = ".join(panel.names) + ":")
                       for t in axes.texts if t.get_gid() == "tail-title"):
                problems.append(f"{panel.names}: the title does not name the schemes")
        alt = tail.alt_text(found)
        if f"{len(sampled)} of the {found.sms} SMs" not in alt:
            problems.append("the alt text does not say the SMs are sampled")
        assert not problems, "\n".join(f"{where}, {mode}: {p}" for p in problems)
        width = natural_width_px(tail.draw_tail_rounds(found, mode))
        assert width <= COLUMN_PX, f"{where}: {width} px wide, the column is {COLUMN_PX}"
    finally:
        plt.close(figure)


def panel_of(figure, gid: str):
    (axes,) = [a for a in figure.axes if a.get_gid() == gid]
    return axes


def test_the_tail_figure_shows_plain_tiles_idle_tail_and_stream_ks_even_shares():
    found = tail_rounds_or_skip("3072", ["big-tiles", "stream-k"])
    big, stream = found.panels
    # 288 Big tiles on 132 SMs: two full rounds and 24 blocks in the third.
    assert big.rounds() == [132, 132, 24]
    assert tail.schedule_words(big) == "288 blocks in 3 rounds of 132, the last 24"
    # Stream-K at 3072: the first round's 132 tiles a block each, the other
    # 156 tiles' steps shared by 132 blocks, every share the same give or take one.
    dp = stream.plan["dp_tiles"]
    assert dp == 132
    lengths = [e - s for e, s in zip(stream.block_ends(), stream.block_starts())]
    assert set(lengths[:dp]) == {stream.plan["steps"]}
    shares = lengths[dp:]
    assert len(shares) == 132 and max(shares) - min(shares) <= 1
    # Both panels on one time scale: the count's time of their last step.
    axes = [panel_of(found_figure, f"tail-panel-{i}")
            for found_figure in [tail.tail_rounds_figure(found, "light")] for i in (0, 1)]
    try:
        spans = [a.get_xlim()[1] * p.step_time for a, p in zip(axes, found.panels)]
        assert spans[0] == pytest.approx(spans[1])
    finally:
        plt.close(axes[0].figure)


def test_the_tail_figure_draws_split_ks_slices_then_its_second_pass():
    found = tail_rounds_or_skip("1024", ["big-tiles", "split-k"])
    big, split = found.panels
    assert not big.split and big.second_pass == 0
    assert split.split and split.plan["slices"] > 1
    # The second pass as the count prices it: the chapter's cost() less the
    # blocks' rounds, in K-steps of a full SM, after the last slice.
    plan = split.plan
    rounds_cost = split.step_time * (plan["steps_per_slice"] + 2)  # one round of Big
    assert plan["second_pass"] == pytest.approx(plan["cost"] - rounds_cost)
    assert split.second_pass > 0 and split.finish == split.makespan + split.second_pass
    figure = tail.tail_rounds_figure(found, "dark")
    try:
        axes = panel_of(figure, "tail-panel-1")
        passes = [p for p in axes.patches if p.get_gid() == "tail-second-pass"]
        assert len(passes) == len(found.sampled())
        assert all(p.get_x() == split.makespan and p.get_width() == pytest.approx(split.second_pass)
                   for p in passes)
        slices = [p for p in axes.patches if p.get_gid() == "tail-segment"]
        assert slices and all(p.get_facecolor()[:3] == to_rgb(tail.SLICE_COLOUR) for p in slices)
        labels = [t.get_text() for legend in figure.legends for t in legend.get_texts()]
        assert "second pass" in labels and "a later turn: adds into C" not in labels
        # The time scale holds the second pass: both panels end by the axis's end.
        assert panel_of(figure, "tail-panel-0").get_xlim()[1] * big.step_time >= \
            split.finish * split.step_time
    finally:
        plt.close(figure)


def fake_result(slug: str, times: dict[tuple[int, int, int], float]) -> results_tools.ChapterResult:
    sizes = [{"M": m, "N": n, "K": k, "time_ms": {"median": t, "min": t, "max": t},
              "pct_cublas": 50.0 + m % 7, "gflops": 1.0, "cublas_gflops": 1.0,
              "cublas_time_ms": {"median": t, "min": t, "max": t}, "max_rel_err": 0.0,
              "correct": True} for (m, n, k), t in times.items()]
    return results_tools.ChapterResult("h200", Path(f"{slug}.json"),
                                       {"chapter": slug, "sizes": sizes}, None)


def test_the_tail_plans_table_is_the_tools_plans():
    tool = tailplan_tool()
    sizes = [tailplan.parse_size(s) for s in TAIL_SIZES]
    report = tailplan.run_plans(tool, H200_SHAPE, sizes)
    # Measured at some sizes only: the others show a dash.
    ours = fake_result("13-tail", {sizes[0]: 1.0, sizes[7]: 3.0, sizes[10]: 2.0})
    tiles = fake_result("13-tail-tiles", {sizes[0]: 2.0, sizes[7]: 4.0})
    rows = tailplan.plans_rows(report, ours, tiles)
    assert len(rows) == len(sizes)
    assert len(tailplan.PLANS_HEADER) == len(rows[0])
    for row, entry, size in zip(rows, report["sizes"], sizes):
        own, plain = entry["variants"]["default"], entry["variants"]["tiles"]
        assert row[0] == tailplan.size_text(size)
        assert row[1] == {"big": "Big", "small": "Small"}[own["tiling"]]
        assert row[2].lower().startswith(own["scheme"].replace("-k", "-k"))
        assert row[3].split(" ")[0].replace(",", "") == str(own["blocks"])
        # As plan() weighs them: Small's count times its slowdown.
        assert float(row[4]) == pytest.approx(own["weighted_cost"] / plain["weighted_cost"],
                                              abs=0.005)
    assert [r[5] for r in rows] == ["0.50"] + ["\u2014"] * 6 + ["0.75"] + ["\u2014"] * 4
    assert rows[10][6] == f"{50.0 + 512 % 7:.1f}%" and rows[1][6] == "\u2014"
    # Not measured at all: every measured cell is a dash, the prediction stays.
    bare = tailplan.plans_rows(report, None, None)
    assert all(r[5] == r[6] == "\u2014" for r in bare)
    assert [r[4] for r in bare] == [r[4] for r in rows]


def test_the_tail_gpu_comes_from_the_13_tail_result(tmp_path, monkeypatch):
    tailplan_tool()
    if not (BUILD / "bin" / "13-tail").is_file():
        pytest.skip("13-tail is not built")
    folder = tmp_path / "h200" / "chapters"
    folder.mkdir(parents=True)
    result = {"schema": 1, "chapter": "13-tail",
              "provenance": {"gpu": "Made-up GPU", "source": "chapters/13-tail/kernel.cuh",
                             "sm_count": 100},
              "resources": {"blocks_per_sm": 2},
              "sizes": [{"M": 512, "N": 512, "K": 512, "max_rel_err": 0.0, "correct": True}]}
    (folder / "13-tail.json").write_text(json.dumps(result))
    monkeypatch.setenv("LADDER_RESULTS_DIR", str(tmp_path))
    found, read, got = tailplan.tail_gpu(ROOT, BUILD, "h200")
    assert (found.sms, found.big_blocks) == (100, 2)
    assert got is not None and got.path == folder / "13-tail.json"
    assert "13-tail's run" in found.whence and ".json" not in found.whence
    # Small's is computed from its kernel in the binary, whatever the result says.
    small, kernel = tailplan.small_blocks_per_sm(*binaries_find("13-tail"))
    assert found.small_blocks == small and "Tiling<64, 128," in kernel["name"]
    # Without any result of the GPU there is nothing to take the SMs from.
    (folder / "13-tail.json").unlink()
    assert tailplan.tail_gpu(ROOT, BUILD, "h200")[0] is None


def binaries_find(slug: str):
    from ladder_tools.binaries import find_variant
    return find_variant(ROOT, BUILD, slug)


# -- Chapter 13's map of where it wins ({ladder-tail-map}) ----------------------------
#
# Drawn from a made-up result that lacks some of the map's sizes: every size
# of the map is a cell or a point at its place, the values written are the
# result's, a size without a timed entry is a grey cell with a dash and a gap
# in the lines, and the figure is legible and fits the column. And the
# measure command measures every size the map draws.

import math  # noqa: E402
import subprocess  # noqa: E402
from types import SimpleNamespace  # noqa: E402

from figures import tail_map  # noqa: E402
from ladder_tools.formatting import DASH, format_gflops, format_percent  # noqa: E402

#: Sizes the made-up result leaves out, or holds checked but not timed.
MAP_ABSENT = {(512, 2048, 4096), (4096, 4096, 256)}
MAP_UNTIMED = {(8192, 256, 4096)}


def made_up_map_entries() -> list[dict]:
    entries = []
    for index, (m, n, k) in enumerate(tail_map.map_sizes() + [(1000, 1000, 1000)]):
        if (m, n, k) in MAP_ABSENT:
            continue
        entry = {"M": m, "N": n, "K": k, "max_rel_err": 1e-6, "correct": True}
        if (m, n, k) not in MAP_UNTIMED:
            entry.update({"time_ms": {"median": 1.0, "min": 1.0, "max": 1.0},
                          "cublas_time_ms": {"median": 1.0, "min": 1.0, "max": 1.0},
                          "gflops": 1.0, "cublas_gflops": 1000.0 * (index + 7) + 0.4,
                          "pct_cublas": 40.0 + 1.9 * index})
        entries.append(entry)
    return entries


def map_texts(axes, gid: str) -> dict[tuple[int, int], str]:
    """The texts of one kind in the heat map, by the (row, column) of their cell."""
    return {(math.floor(t.get_position()[1]), math.floor(t.get_position()[0])): t.get_text()
            for t in axes.texts if t.get_gid() == gid}


@pytest.mark.parametrize("mode", MODES)
def test_the_tail_map_draws_every_size_at_its_place_with_its_values(mode):
    entries = made_up_map_entries()
    timed = {(e["M"], e["N"], e["K"]): e for e in entries if "time_ms" in e}
    found = tail_map.tail_map("Made-up GPU", entries)
    figure, renderer = drawn(lambda: tail_map.tail_map_figure(found, mode))
    try:
        heat = panel(figure, "map-heat")
        sides = tail_map.MAP_SIDES
        want_pct, want_cublas, want_missing = {}, {}, set()
        for row, m in enumerate(sides):
            for column, n in enumerate(sides):
                entry = timed.get((m, n, tail_map.MAP_K))
                if entry is None:
                    want_missing.add((row, column))
                    continue
                want_pct[(row, column)] = format_percent(entry["pct_cublas"])
                want_cublas[(row, column)] = format_gflops(entry["cublas_gflops"])
        assert len(want_missing) == 2  # one absent, one untimed
        cells = {corner(p) for p in heat.patches if p.get_gid() == "map-cell"}
        missing = {corner(p) for p in heat.patches if p.get_gid() == "map-missing"}
        assert len(cells) + len(missing) == len(sides) ** 2
        assert {(int(r), int(c)) for r, c in missing} == want_missing
        assert map_texts(heat, "map-pct") == want_pct
        assert map_texts(heat, "map-cublas") == want_cublas
        assert map_texts(heat, "map-dash") == {cell: DASH for cell in want_missing}
        # Blue at or above cuBLAS, orange below; grey where nothing was measured.
        for p in heat.patches:
            row, column = (int(v) for v in corner(p))
            entry = timed.get((sides[row], sides[column], tail_map.MAP_K))
            colour = (tail_map.ABOVE if entry and entry["pct_cublas"] >= 100
                      else tail_map.BELOW if entry else style.THEMES[mode]["grid"])
            assert to_rgba(p.get_facecolor())[:3] == to_rgba(colour)[:3], (row, column)
        # (b): a point per K, a gap where the size was not measured.
        for gid, key in (("map-pct-line", "pct_cublas"), ("map-rate-line", "cublas_gflops")):
            (line,) = [l for a in figure.axes for l in a.get_lines() if l.get_gid() == gid]
            assert list(line.get_xdata()) == list(tail_map.SWEEP_KS)
            for k, y in zip(tail_map.SWEEP_KS, line.get_ydata()):
                entry = timed.get((tail_map.SWEEP_MN, tail_map.SWEEP_MN, k))
                assert math.isnan(y) if entry is None else y == entry[key], (gid, k)
        note = [t.get_text() for t in figure.texts if t.get_gid() == "map-note"]
        assert note == [f"3 of the figure's {len(tail_map.map_sizes())} sizes are not "
                        "measured yet: grey cells, gaps in the lines."]
        assert "512 not measured" not in tail_map.alt_text(found)
        assert "2048 not measured" in tail_map.alt_text(found)
        problems = text_problems(figure, renderer, mode)
        assert not problems, "\n".join(problems)
        width = natural_width_px(tail_map.draw_tail_map(found, mode))
        assert width <= COLUMN_PX, f"{width} px wide, the column is {COLUMN_PX}"
    finally:
        plt.close(figure)


def test_a_complete_tail_map_has_no_note_and_no_grey_cell():
    entries = [e for e in made_up_map_entries() if "time_ms" in e]
    entries += [{**e, "M": m, "N": n, "K": k} for (m, n, k), e in
                zip(MAP_ABSENT | MAP_UNTIMED, entries)]
    found = tail_map.tail_map("Made-up GPU", entries)
    assert not found.missing() and tail_map.missing_words(found) == ""
    figure, _ = drawn(lambda: tail_map.tail_map_figure(found, "light"))
    try:
        heat = panel(figure, "map-heat")
        assert not [p for p in heat.patches if p.get_gid() == "map-missing"]
        assert not [t for t in figure.texts if t.get_gid() == "map-note"]
    finally:
        plt.close(figure)


def test_the_measure_command_measures_every_size_of_the_tail_map():
    sys.path.insert(0, str(ROOT / "code"))
    import measure

    def size_of(text: str) -> tuple[int, int, int]:
        dims = tuple(int(d) for d in text.split("x"))
        return dims if len(dims) == 3 else dims * 3

    standard = [size_of(s) for s in measure.SIZES]
    chapter = SimpleNamespace(chapter="13-tail", name="13-tail")
    extra = [size_of(s) for s in measure.extra_sizes(chapter)]
    measured = standard + extra
    twice = [s for s in tail_map.map_sizes() if measured.count(s) > 1]
    assert not twice, f"measured twice: {twice}"
    unmeasured = [s for s in tail_map.map_sizes() if s not in measured]
    assert not unmeasured, f"chapters/13-tail/own-sizes lacks {unmeasured}"
    # The variants are not measured at the map's own sizes, only at the
    # sizes the page names.
    variant = SimpleNamespace(chapter="13-tail", name="13-tail-tiles")
    for_variants = [size_of(s) for s in measure.extra_sizes(variant)]
    assert len(for_variants) < len(extra)
    assert (4096, 128, 4096) in for_variants and (256, 256, 4096) not in for_variants


def test_draw_py_draws_the_tail_map(tmp_path):
    folder = tmp_path / "h200" / "chapters"
    folder.mkdir(parents=True)
    result = {"schema": 1, "chapter": "13-tail",
              "provenance": {"gpu": "Made-up GPU", "source": "chapters/13-tail/kernel.cuh"},
              "sizes": made_up_map_entries()}
    (folder / "13-tail.json").write_text(json.dumps(result))
    out = tmp_path / "map.svg"
    done = subprocess.run([sys.executable, str(ROOT / "figures" / "draw.py"), "tail-map",
                           "--mode", "dark", "--out", str(out)],
                          env={**os.environ, "LADDER_RESULTS_DIR": str(tmp_path)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "3 of the figure's" in done.stderr
    drawing = out.read_text()
    assert drawing.count('id="map-cell') == len(tail_map.MAP_SIDES) ** 2 - 2
    # No result for the GPU: one line, no figure.
    missing = subprocess.run([sys.executable, str(ROOT / "figures" / "draw.py"), "tail-map",
                              "--gpu", "nowhere", "--out", str(tmp_path / "no.svg")],
                             env={**os.environ, "LADDER_RESULTS_DIR": str(tmp_path)},
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode != 0 and "no result for 13-tail" in missing.stderr
    assert not (tmp_path / "no.svg").exists()


# -- Part II: error against speed ({ladder-accuracy}) and the ladder's panels --

from matplotlib.patches import Rectangle  # noqa: E402

from figures import accuracy, ladder  # noqa: E402
from ladder_tools.results import ChapterResult  # noqa: E402


def made_up_fp64(kernel: tuple[float, float], cublas=(1.1e-6, 6.0e-7),
                 tf32=(2.5e-4, 2.6e-4)) -> dict:
    """An fp64_error field: (uniform, wide) relative-norm errors per method."""
    methods = {"kernel": kernel, "cublas": cublas, "cublas_tf32": tf32}
    return {d: {m: {"rel_norm_err": errors[i], "max_rel_err": 10 * errors[i],
                    "tolerance": 1e-4, "bad_values": 0, "correct": True}
                for m, errors in methods.items()}
            for i, d in enumerate(("uniform", "wide"))}


def made_up_result(slug: str, title: str, gflops: float, kernel=None,
                   cublas_gflops: float = 50_000.0) -> ChapterResult:
    """A chapter result timed at 4096 (and at 1024 without FP64 errors); with
    ``kernel`` (uniform, wide) errors, FP64 errors and cuBLAS on TF32 at 4096."""
    at_4096 = {"M": 4096, "N": 4096, "K": 4096, "time_ms": {}, "gflops": gflops,
               "cublas_gflops": cublas_gflops, "pct_cublas": 100 * gflops / cublas_gflops,
               "max_rel_err": 1e-6, "correct": True}
    if kernel is not None:
        at_4096 |= {"cublas_tf32_gflops": 380_000.0, "fp64_error": made_up_fp64(kernel)}
    at_1024 = {**at_4096, "M": 1024, "N": 1024, "K": 1024}
    at_1024.pop("fp64_error", None)
    data = {"chapter": slug, "title": title, "sizes": [at_1024, at_4096],
            "provenance": {"gpu": "Made-up GPU", "source": "kernel.cuh"}}
    return ChapterResult("h200", Path(f"{slug}.json"), data, None)


MADE_UP_PART_II = [
    ("12-final", made_up_result("12-final", "The final kernel", 52_000.0)),
    ("14-tf32", made_up_result("14-tf32", "TF32 on mma.sync", 154_000.0, (2.5e-4, 2.6e-4))),
    ("15-3xtf32", made_up_result("15-3xtf32", "3xTF32 on mma.sync", 44_500.0, (4.0e-7, 4.0e-7),
                                 cublas_gflops=51_000.0)),
    ("15-3xtf32-in-core", made_up_result("15-3xtf32-in-core", "3xTF32, sums in the tensor cores",
                                         62_000.0, (2.8e-5, 1.6e-5))),
    ("16-nowhere", None),
]


def marker_at(figure, gid: str) -> tuple[float, float, bool]:
    """The data coordinates of the marker with ``gid``, and whether it is filled."""
    axes = next(a for a in figure.axes if a.get_gid() == "accuracy-axes")
    found = [line for line in axes.get_lines() if line.get_gid() == gid]
    assert len(found) == 1, f"{len(found)} markers with gid {gid}"
    (x, y), = found[0].get_xydata()
    return x, y, to_rgba(found[0].get_markerfacecolor())[3] > 0


def test_accuracy_points_take_every_method_that_recorded_fp64_errors():
    data = accuracy.accuracy_points(MADE_UP_PART_II, (4096,) * 3, "h200")
    labels = [p.label for p in data.points]
    assert labels == ["cuBLAS SGEMM (FP32)", "cuBLAS on TF32", "14 \u00b7 TF32 on mma.sync",
                      "15 \u00b7 3xTF32 on mma.sync",
                      "15 \u00b7 3xTF32, sums in the tensor cores"]
    # Chapter 12 recorded no FP64 error at 4096; 16 has no result: no points.
    assert data.missing == ["12-final", "16-nowhere"]
    # cuBLAS's points are the first run's that has them: chapter 14's, named
    # as its point is (a caption names no result by its file's slug).
    assert data.cublas_from == "14 \u00b7 TF32 on mma.sync"
    assert data.points[0].tflops == pytest.approx(50.0)
    assert data.points[1].tflops == pytest.approx(380.0)
    assert data.points[4].error == {"uniform": 2.8e-5, "wide": 1.6e-5}
    # At 1024 no result has FP64 errors: no points at all.
    assert not accuracy.accuracy_points(MADE_UP_PART_II, (1024,) * 3, "h200").points


@pytest.mark.parametrize("mode", MODES)
def test_the_accuracy_figure_puts_each_point_at_its_rate_and_error(mode):
    data = accuracy.accuracy_points(MADE_UP_PART_II, (4096,) * 3, "h200")
    figure, renderer = drawn(lambda: accuracy.accuracy_figure(data, mode))
    try:
        axes = next(a for a in figure.axes if a.get_gid() == "accuracy-axes")
        assert axes.get_yscale() == "log"
        for index, point in enumerate(data.points):
            for distribution in ("uniform", "wide"):
                x, y, filled = marker_at(figure, f"accuracy-{index}-{distribution}")
                assert (x, y) == pytest.approx((point.tflops, point.error[distribution]))
                assert filled == (distribution == "uniform")
                low, high = axes.get_ylim()
                assert low < y < high and 0 <= x < axes.get_xlim()[1]
        # Ordered as the data says: the in-core variant above 3xTF32, TF32 above both.
        assert marker_at(figure, "accuracy-4-uniform")[1] > marker_at(figure,
                                                                      "accuracy-3-uniform")[1]
        problems = legend_problems(figure, renderer) + ink_problems(figure, mode)
        assert not problems, problems
    finally:
        plt.close(figure)


def test_the_accuracy_figure_draws_a_method_measured_on_one_distribution_only():
    only_uniform = made_up_result("15-3xtf32", "3xTF32 on mma.sync", 44_500.0, (4e-7, 4e-7))
    del only_uniform.data["sizes"][1]["fp64_error"]["wide"]["kernel"]
    data = accuracy.accuracy_points([("15-3xtf32", only_uniform)], (4096,) * 3, "h200")
    assert data.points[-1].error == {"uniform": 4e-7, "wide": None}
    figure, _ = drawn(lambda: accuracy.accuracy_figure(data, "light"))
    try:
        gids = {line.get_gid() for a in figure.axes for line in a.get_lines()}
        assert "accuracy-2-uniform" in gids and "accuracy-2-wide" not in gids
    finally:
        plt.close(figure)


@pytest.mark.parametrize("near_tf32", [None, 0.9, 0.1])
def test_a_unit_roundoffs_label_covers_no_point(near_tf32):
    """A label sits just above its line: at the right end, or at the left
    when a point lies under the right end's label (not measured: made-up
    points, one at 1.4 times TF32's unit roundoff, near the right or left)."""
    points = [accuracy.Point("SGEMM", 50.0, {"uniform": 1e-6, "wide": 6e-7}),
              accuracy.Point("TF32", 400.0, {"uniform": 2.5e-4, "wide": 2.6e-4})]
    if near_tf32 is not None:
        points.append(accuracy.Point("near", 400.0 * near_tf32,
                                     {"uniform": 1.4 * 2.0 ** -11, "wide": None}))
    data = accuracy.Accuracy("h200", (4096,) * 3, points)
    figure, renderer = drawn(lambda: accuracy.accuracy_figure(data, "light"))
    try:
        axes = figure.axes[0]
        label = next(t for t in axes.texts if t.get_gid() == "roundoff-TF32")
        box = label.get_window_extent(renderer)
        for point in points:
            for value in point.error.values():
                if value is None:
                    continue
                x, y = axes.transData.transform((point.tflops, value))
                assert not box.expanded(1.05, 1.3).contains(x, y), (point.label, label.get_text())
        right = near_tf32 is None or near_tf32 < 0.4
        assert (label.get_horizontalalignment() == "right") == right
    finally:
        plt.close(figure)


def made_up_ladder() -> tuple[list[str], list[ladder.LadderBars]]:
    labels = [f"{n:02d} step" for n in range(1, 14)] + ["14 tf32", "15 3xtf32"]
    gflops = [400.0 + 4000.0 * n for n in range(13)] + [154_000.0, 44_500.0]
    gflops[4] = None  # a chapter not measured on this GPU
    return labels, [ladder.LadderBars("Made-up GPU", gflops, 51_000.0, 64_000.0, 380_000.0)]


@pytest.mark.parametrize("mode", MODES)
def test_the_ladder_draws_part_ii_in_a_panel_of_its_own(mode):
    labels, bars = made_up_ladder()
    figure, renderer = drawn(lambda: ladder.ladder_figure(labels, bars, mode))
    try:
        panels = {a.get_gid(): a for a in figure.axes}
        part_1, part_2 = panels["ladder-part-1"], panels["ladder-part-2"]
        heights = {1: [], 2: []}
        for part, axes in ((1, part_1), (2, part_2)):
            heights[part] = [p.get_height() for p in axes.patches if isinstance(p, Rectangle)
                             and p.get_height() > 0]
        measured = [g for g in bars[0].gflops if g is not None]
        assert heights[1] == pytest.approx(measured[:-2])
        assert heights[2] == pytest.approx([154_000.0, 44_500.0])
        assert [t.get_text() for t in part_2.get_xticklabels()] == ["14 tf32", "15 3xtf32"]
        # Part I keeps its own scale: its tallest line (the FMA peak) near the
        # top, not squeezed under Part II's cuBLAS on TF32.
        assert part_1.get_ylim()[1] < 1.2 * 64_000.0
        assert part_2.get_ylim()[1] >= 380_000.0
        part_2_lines = {line.get_linestyle() for line in part_2.get_lines()}
        part_1_lines = {line.get_linestyle() for line in part_1.get_lines()}
        assert "-." in part_2_lines and "-." not in part_1_lines
        problems = legend_problems(figure, renderer) + ink_problems(figure, mode)
        assert not problems, problems
    finally:
        plt.close(figure)


def test_the_ladder_without_part_ii_is_one_panel():
    labels, bars = made_up_ladder()
    part_1 = [ladder.LadderBars("Made-up GPU", bars[0].gflops[:13], 51_000.0, 64_000.0)]
    figure, _ = drawn(lambda: ladder.ladder_figure(labels[:13], part_1, "light"))
    try:
        assert [a.get_gid() for a in figure.axes] == ["ladder-part-1"]
    finally:
        plt.close(figure)


def test_draw_py_draws_the_accuracy_figure(tmp_path):
    import subprocess

    folder = tmp_path / "h200" / "chapters"
    folder.mkdir(parents=True)
    times = {"median": 1.0, "min": 1.0, "max": 1.0}
    for slug, result in MADE_UP_PART_II[1:3]:
        data = json.loads(json.dumps(result.data))
        data |= {"schema": 1, "provenance": {"gpu": "Made-up GPU", "source": "kernel.cuh"}}
        for entry in data["sizes"]:
            entry |= {"time_ms": times, "cublas_time_ms": times}
        (folder / f"{slug}.json").write_text(json.dumps(data))
    command = [sys.executable, str(ROOT / "figures" / "draw.py"), "accuracy", "12-final",
               "14-tf32", "15-3xtf32", "--mode", "dark", "--out"]
    env = {**os.environ, "LADDER_RESULTS_DIR": str(tmp_path)}
    done = subprocess.run(command + [str(tmp_path / "a.svg")], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "no point for 12-final" in done.stderr
    drawing = (tmp_path / "a.svg").read_text()
    # cuBLAS's two methods and the two chapters, each on both distributions.
    assert len(re.findall(r'id="accuracy-\d-(uniform|wide)"', drawing)) == 8
    # No chapter named has an error at 1024: one line, no figure.
    missing = subprocess.run(command[:-3] + ["--size", "1024", "--out",
                                             str(tmp_path / "no.svg")],
                             env=env, capture_output=True, text=True, timeout=120)
    assert missing.returncode != 0 and "no error against FP64 at 1024" in missing.stderr
    assert not (tmp_path / "no.svg").exists()
