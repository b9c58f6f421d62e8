"""A roofline of one GPU with every chapter on it ({ladder-roofline}).

Log-log: x is arithmetic intensity in FLOP per byte of global-memory
traffic, y is GFLOP/s. The ceilings are the GPU's baseline.json (the
measured copy bandwidth, a slope, and the measured FP32 FMA peak, a flat
line; ladder_tools.results) and, dashed, the theoretical FMA peak
(ladder_tools.results.values). Each chapter sits at its measured GFLOP/s at 4096 x
4096 x 4096 and at the intensity of its own tile constants, as its binary's
``--describe`` reports them (ladder_tools.analysis.binaries):

- a block tile BM x BN with K-step BK (BM, BN, BK): each block reads
  (BM + BN) * BK floats of A and B per BM * BN * BK multiply-adds, so
  2 * BM * BN / (4 * (BM + BN)) FLOP per byte;
- BLOCK alone, on a kernel that has shared memory (chapter 04: its
  static shared bytes in the binary, ``cuobjdump -res-usage`` through
  ladder_tools.analysis.resources, or dynamic ones its launch asks for): the same
  with BM = BN = BK = BLOCK;
- BLOCK alone, without shared memory (chapters 01 to 03): the assumption is
  that every operand load reaches L2/DRAM, one float of A and one of B per
  multiply-add, 2 FLOP per 8 bytes.

Part II's chapters are not drawn: they run on the tensor cores, whose
ceiling this roofline of the FMA units does not have (ladder.py
shows them on a scale of their own).

This intensity counts the global loads the tiling issues: an upper bound on
DRAM traffic, of which L2 (and for 01 to 03, L1) absorbs much. A point above
the bandwidth slope is a chapter whose loads the caches served.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

import matplotlib.pyplot as plt
from matplotlib.artist import Artist
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from matplotlib.transforms import Bbox

from ladder_tools import results
from ladder_tools.analysis.binaries import AnalysisError, describe, find_variant
from ladder_tools.analysis.resources import BOOK_ARCH, kernel_resources
from ladder_tools.figures.ladder import part_of
from ladder_tools.figures.registry import GPU, Context, Drawing, Drawn, Figure, Request
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES, style_axes, svg
from ladder_tools.formatting import format_gflops
from ladder_tools.results.values import theoretical_fma_gflops

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
    from matplotlib.figure import Figure as MplFigure

#: Bytes per float, and the intensity of a kernel whose every operand load
#: reaches L2/DRAM: 2 FLOP (one FMA) per two floats loaded.
FLOAT_BYTES = 4
UNTILED_INTENSITY = 2 / (2 * FLOAT_BYTES)

POINT_COLOUR = GPU_COLOURS[0]
#: Text sizes in points; the figure is shown at its natural width where the
#: column allows (as the tiling figure is), shrunk to the column on a phone.
TEXT = 12
LABEL = 12
FIGURE_SIZE = (5.4, 5.4)
#: The chapters' markers' radius in points.
MARKER_RADIUS = 2.3
#: Where the magnified panel of the chapters near the roof goes, in
#: fractions of the axes (left, bottom, width, height).
INSET = (0.53, 0.05, 0.45, 0.40)
X_RANGE = (0.05, 100.0)


#: What the figure's caption adds to the page's sentence: how the intensity
#: is counted, so that it is not read as measured DRAM traffic.
INTENSITY_NOTE = (
    "Each chapter sits at its GFLOP/s at 4096 \u00d7 4096 \u00d7 4096 and at the intensity "
    "of the global loads its tiling issues: a block tile BM \u00d7 BN with K-step BK reads "
    "(BM + BN) \u00b7 BK floats per BM \u00b7 BN \u00b7 BK multiply-adds, "
    "2 \u00b7 BM \u00b7 BN / (4 \u00b7 (BM + BN)) FLOP per byte; chapters 01 to 03 have no "
    "shared-memory tile and are placed as if every operand load reached L2/DRAM, one float "
    "of A and one of B per multiply-add, 2 FLOP per 8 bytes. This counts loads, not DRAM "
    "traffic: it is an upper bound on the bytes DRAM delivers, since L2 (and L1) serve much "
    "of it, which is how a point can sit above the bandwidth slope. The panel at the lower "
    "right magnifies the chapters near the roof.")


class RooflineError(ValueError):
    """The data cannot make a roofline."""


@dataclass(frozen=True)
class Point:
    """One chapter on the roofline."""

    slug: str
    intensity: float  #: FLOP per byte of global loads, from the tile constants
    gflops: float  #: measured at the headline size
    basis: str  #: how the intensity was computed, in words

    @property
    def label(self) -> str:
        return self.slug.split("-", 1)[0]


@dataclass(frozen=True)
class Roofline:
    gpu: str
    fma_peak_gflops: float
    copy_bandwidth_gbs: float
    theoretical_gflops: float | None
    points: list[Point]

    @property
    def ridge(self) -> float:
        """The intensity at which the two measured ceilings meet."""
        return self.fma_peak_gflops / self.copy_bandwidth_gbs


def tile_intensity(constants: dict, shared: bool = False) -> tuple[float, str]:
    """FLOP per byte of global loads that a chapter's tiling issues, and the
    basis in words (see the module's docstring); ``shared``: the kernel has
    shared memory."""
    c = constants
    if "BM" in c and "BN" in c and "BK" in c:
        bm, bn, bk = c["BM"], c["BN"], c["BK"]
        basis = f"block tile {bm} \u00d7 {bn}, K-step {bk}"
    elif "BLOCK" in c and shared:
        bm = bn = bk = c["BLOCK"]
        basis = f"shared tiles of {bm} \u00d7 {bk}"
    elif "BLOCK" in c:
        return (UNTILED_INTENSITY,
                "no shared-memory tile, every operand load counted as reaching L2/DRAM")
    else:
        raise RooflineError(f"constants with neither BM, BN, BK nor BLOCK: {sorted(c)}")
    return 2 * bm * bn * bk / (FLOAT_BYTES * (bm + bn) * bk), basis


def chapter_point(repo_root: Path, build: Path, slug: str,
                  gflops: float) -> tuple[Point, list[Path]]:
    """The point of result ``slug`` and the files it was read from (the
    binary and the kernel's sources), for a directive to track."""
    path, variant = find_variant(repo_root, build, slug)
    sources = [Path(repo_root) / name for name in describe(path).get("sources") or []]
    try:
        intensity, basis = tile_intensity(variant["constants"], has_shared(path, variant))
    except RooflineError as error:
        raise AnalysisError(f"{slug}: {error}") from error
    return Point(slug, intensity, gflops, basis), [path, *sources]


def has_shared(path: Path, variant: dict) -> bool:
    """Whether the variant's kernel has shared memory: static bytes in the
    binary (for the book's architecture), or dynamic bytes its launch asks for."""
    kernel = variant.get("kernel") or {}
    if kernel.get("dynamic_smem_bytes"):
        return True
    found = [k for k in kernel_resources(path)
             if k["mangled"] == kernel.get("name") and k["arch"] == BOOK_ARCH]
    if not found:
        raise AnalysisError(f"{path}: cuobjdump -res-usage lists no {BOOK_ARCH} kernel "
                            f"{kernel.get('name')!r}")
    return any(k["shared_bytes"] > 0 for k in found)


def roofline_data(repo_root: Path, build: Path, gpu: str = results.REFERENCE_GPU,
                  size: tuple[int, int, int] = results.HEADLINE_SIZE
                  ) -> tuple[Roofline | None, list[Path], list[results.ChapterResult]]:
    """The roofline of ``gpu``: its baseline's ceilings and every Part I
    chapter with a timed result at ``size``; with the files read and the results
    used (to track and to mark stale). None when the baseline lacks a
    ceiling or no chapter was measured."""
    root = results.results_root(repo_root)
    read = [results.baseline_path(root, gpu)]
    baseline = results.load_baseline(root, gpu) or {}
    peak, bandwidth = baseline.get("fma_peak_gflops"), baseline.get("copy_bandwidth_gbs")
    points, used = [], []
    for slug in results.chapter_slugs(repo_root):
        if part_of(slug) != 1:
            continue  # the tensor cores' chapters: above this roof, not under it
        read.append(results.chapter_result_path(root, gpu, slug))
        result = results.load_chapter_result(root, gpu, slug, repo_root)
        entry = result.timed_at(size) if result else None
        if result is None or entry is None:
            continue
        point, files = chapter_point(repo_root, build, slug, entry["gflops"])
        points.append(point)
        used.append(result)
        read += files
    if not isinstance(peak, (int, float)) or not isinstance(bandwidth, (int, float)) or not points:
        return None, read, used
    name = (baseline.get("provenance") or {}).get("gpu", gpu)
    return Roofline(name, float(peak), float(bandwidth), theoretical_fma_gflops(baseline),
                    points), read, used


# -- Words ----------------------------------------------------------------------


def _number(value: float) -> str:
    return f"{value:.3g}" if value < 1 else f"{value:.1f}"


def alt_text(r: Roofline) -> str:
    """What the figure shows, with its numbers, for the image's alt text."""
    words = (f"Roofline of the {r.gpu}, log-log: GFLOP/s against FLOP per byte of global "
             f"loads. Ceilings: the measured copy bandwidth, {format_gflops(r.copy_bandwidth_gbs)}"
             f" GB/s, a slope, meeting the measured FP32 FMA peak, "
             f"{format_gflops(r.fma_peak_gflops)} GFLOP/s, at {_number(r.ridge)} FLOP/byte")
    if r.theoretical_gflops is not None:
        words += (f"; dashed, the theoretical FMA peak, "
                  f"{format_gflops(r.theoretical_gflops)} GFLOP/s")
    words += ". Chapters at 4096: " + "; ".join(
        f"{p.slug}, {_number(p.intensity)} FLOP/byte ({p.basis}), {format_gflops(p.gflops)} "
        f"GFLOP/s" for p in r.points) + "."
    near = crowded(r)
    if len(near) > 1:
        words += (" A panel at the lower right magnifies "
                  + ", ".join(p.label for p in near) + ", the chapters near the roof.")
    return words


# -- Drawing ----------------------------------------------------------------------

#: Where a chapter's label may go, relative to its point, in points: nearest
#: first; a label that has to go further than the first ring gets a leader line.
_DIRECTIONS = [(1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1), (0, 1), (0, -1)]
_RINGS = [7, 14, 22, 31, 41]


def _overlap(a: Bbox, b: Bbox, pad: float = 1.0) -> bool:
    return (a.x0 < b.x1 + pad and b.x0 < a.x1 + pad and a.y0 < b.y1 + pad and b.y0 < a.y1 + pad)


def _axis_number(value: float, _: int | None = None) -> str:
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def _ceilings(axes: Axes, r: Roofline, x_range: tuple[float, float], ink: str) -> None:
    """The measured ceilings (the bandwidth slope up to the ridge, then the
    flat FMA peak) and, dashed, the theoretical FMA peak."""
    xs = [x_range[0], r.ridge, x_range[1]]
    roof, = axes.plot(xs, [r.copy_bandwidth_gbs * xs[0], r.fma_peak_gflops, r.fma_peak_gflops],
                      color=ink, linewidth=1.6)
    roof.set_gid("ceiling-measured")
    if r.theoretical_gflops is not None:
        dashed, = axes.plot(x_range, [r.theoretical_gflops] * 2, color=ink, linewidth=1.0,
                            linestyle=(0, (4, 3)))
        dashed.set_gid("ceiling-theoretical")


def _dots(axes: Axes, points: list[Point], gid: str) -> None:
    dots = axes.scatter([p.intensity for p in points], [p.gflops for p in points],
                        s=(2 * MARKER_RADIUS) ** 2, color=POINT_COLOUR, edgecolors="none",
                        zorder=3)
    dots.set_gid(gid)


def crowded(r: Roofline) -> list[Point]:
    """The chapters near the roof, right of the ridge, that the magnified
    panel shows (those within a factor 2.5 of the FMA peak)."""
    return [p for p in r.points if p.intensity >= r.ridge and p.gflops >= r.fma_peak_gflops / 2.5]


def roofline_figure(r: Roofline, mode: str) -> MplFigure:
    """The drawn figure (matplotlib), for draw_roofline and the tests."""
    theme = THEMES[mode]
    ink = theme["ink"]
    top = max(r.fma_peak_gflops, r.theoretical_gflops or 0)
    lowest = min(min(p.gflops for p in r.points), r.copy_bandwidth_gbs * X_RANGE[0])
    y_range = (lowest / 1.6, top * 1.8)
    x_range = (min(X_RANGE[0], min(p.intensity for p in r.points) / 2),
               max(X_RANGE[1], max(p.intensity for p in r.points) * 2))
    with plt.rc_context(RC):
        figure = plt.figure(figsize=FIGURE_SIZE)
        figure.set_gid("roofline")
        axes = figure.add_axes((0.17, 0.12, 0.8, 0.86))
        axes.set_gid("roofline-axes")
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlim(*x_range)
        axes.set_ylim(*y_range)
        style_axes(axes, theme)
        axes.grid(True, which="major", color=theme["grid"], linewidth=0.6)
        for axis in (axes.xaxis, axes.yaxis):
            axis.set_major_locator(LogLocator(base=10))
            axis.set_major_formatter(FuncFormatter(_axis_number))
            axis.set_minor_formatter(NullFormatter())
        axes.tick_params(labelsize=TEXT)
        axes.set_xlabel("FLOP per byte of global loads", fontsize=TEXT)
        axes.set_ylabel("GFLOP/s", fontsize=TEXT)
        _ceilings(axes, r, x_range, ink)

        texts: list[Artist] = []  # what the labels keep off
        if r.theoretical_gflops is not None:
            texts.append(axes.annotate(
                f"theoretical FMA peak {format_gflops(r.theoretical_gflops)}",
                xy=(x_range[0], r.theoretical_gflops), xytext=(4, 3), textcoords="offset points",
                ha="left", va="bottom", fontsize=LABEL, color=ink))
        texts.append(axes.annotate(
            f"measured FMA peak {format_gflops(r.fma_peak_gflops)}",
            xy=(x_range[0], r.fma_peak_gflops), xytext=(4, -4), textcoords="offset points",
            ha="left", va="top", fontsize=LABEL, color=ink))
        # The slope's label, along it, at a fortieth of the ridge's intensity.
        at = r.ridge / 40
        start = axes.transData.transform((at, r.copy_bandwidth_gbs * at))
        end = axes.transData.transform((at * 10, r.copy_bandwidth_gbs * at * 10))
        angle = math.degrees(math.atan2(end[1] - start[1], end[0] - start[0]))
        texts.append(axes.annotate(
            f"copy bandwidth {format_gflops(r.copy_bandwidth_gbs)} GB/s",
            xy=(at, r.copy_bandwidth_gbs * at), xytext=(-3, 5), textcoords="offset points",
            ha="left", va="bottom", rotation=angle, rotation_mode="anchor", fontsize=LABEL,
            color=ink))
        _dots(axes, r.points, "chapters")

        # The chapters near the roof, magnified in a panel at the lower right.
        near = crowded(r)
        others = [p for p in r.points if p not in near]
        if len(near) > 1:
            inset = axes.inset_axes(INSET)
            inset.set_gid("roofline-magnified")
            inset.set_xscale("log")
            inset.set_yscale("log")
            inset.set_xlim(min(p.intensity for p in near) / 1.25,
                           max(p.intensity for p in near) * 1.25)
            inset.set_ylim(min(p.gflops for p in near) / 1.2, top * 1.12)
            inset.set_xticks([])
            inset.set_yticks([])
            inset.minorticks_off()
            # Opaque, in the page's colour, so the main axes' grid does not
            # run through the magnified panel as if it were its scale.
            inset.set_facecolor(THEMES[mode]["page"])
            for spine in inset.spines.values():
                spine.set_color(ink)
                spine.set_linewidth(0.8)
            _ceilings(inset, r, x_range, ink)
            _dots(inset, near, "chapters-magnified")
            zoom = axes.indicate_inset_zoom(inset, edgecolor=ink, alpha=0.8, linewidth=0.8)
            for line in zoom.connectors or ():
                line.set_linewidth(0.6)
            figure.canvas.draw()
            _place_labels(figure, inset, near, [], ink)
            texts.append(inset)
        _place_labels(figure, axes, others, texts, ink)
        return figure


def _place_labels(figure: MplFigure, axes: Axes, points: list[Point], avoid: list[Artist],
                  ink: str) -> None:
    """Each chapter's number beside its point in ``axes``, at the nearest
    place where it overlaps no other label, no point, nothing in ``avoid``
    (texts, the magnified panel) and stays in the axes; a label further than
    the nearest ring gets a leader line. Points whose markers touch share
    one label ("08, 09")."""
    if not points:
        return
    figure.canvas.draw()
    # The figures are drawn with Agg (style.py), whose canvas has a
    # renderer; matplotlib leaves its get_renderer unannotated.
    get_renderer: Callable[[], RendererAgg] = cast("FigureCanvasAgg", figure.canvas).get_renderer
    renderer = get_renderer()
    scale = figure.dpi / 72
    taken = [a.get_window_extent(renderer) for a in avoid]
    taken += [Text.get_window_extent(t, renderer)
              for a in figure.axes for inner in (a, *a.child_axes) for t in inner.texts
              if (t.get_gid() or "").startswith("label-")]
    centres = [axes.transData.transform((p.intensity, p.gflops)) for p in points]
    radius = MARKER_RADIUS * scale
    dots = [Bbox.from_extents(x - radius, y - radius, x + radius, y + radius) for x, y in centres]
    frame = axes.get_window_extent(renderer)
    groups: list[list[int]] = []
    for index in sorted(range(len(points)), key=lambda i: -points[i].gflops):
        for group in groups:
            if math.dist(centres[index], centres[group[0]]) < 2 * radius:
                group.append(index)
                break
        else:
            groups.append([index])
    # The lowest first: the crowded ones are near the roof.
    for group in sorted(groups, key=lambda g: points[g[0]].gflops):
        p = points[group[0]]
        text = ", ".join(points[i].label for i in sorted(group))
        placed = None
        for ring, distance in enumerate(_RINGS):
            for dx, dy in _DIRECTIONS:
                norm = math.hypot(dx, dy)
                label = axes.annotate(
                    text, xy=(p.intensity, p.gflops),
                    xytext=(dx / norm * distance, dy / norm * distance),
                    textcoords="offset points", fontsize=LABEL, color=ink, zorder=4,
                    ha="left" if dx > 0 else "right" if dx < 0 else "center",
                    va="bottom" if dy > 0 else "top" if dy < 0 else "center",
                    arrowprops=(dict(arrowstyle="-", color=ink, lw=0.7, shrinkA=1,
                                     shrinkB=2.5) if ring > 0 else None))
                label.set_gid("label-" + "-".join(points[i].label for i in sorted(group)))
                label.update_positions(renderer)
                box = Text.get_window_extent(label, renderer)
                inside = (frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0
                          and box.y1 <= frame.y1)
                if inside and not any(_overlap(box, other) for other in taken + dots):
                    placed = label
                    break
                label.remove()
            if placed is not None:
                break
        if placed is None:
            raise RooflineError(f"no room for the label of {text}")
        taken.append(Text.get_window_extent(placed, renderer))


def draw_roofline(r: Roofline, mode: str) -> bytes:
    """The figure as SVG for the page mode ``mode``."""
    with plt.rc_context(RC):
        return svg(roofline_figure(r, mode))


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    """The caption adds how the intensity is counted."""
    gpu = request.options["gpu"]
    found, read, used = roofline_data(context.repo_root, context.build_dir, gpu)
    if found is None:
        return Drawn([], f"No roofline: {gpu} has no baseline ceilings or no chapter measured "
                     "at 4096.", read, used)
    stale = [r.label for r in used if r.stale]
    caption = (request.caption_or(f"The roofline of the {found.gpu} with every chapter on it.")
               + f" {INTENSITY_NOTE}" + (f" Stale: {', '.join(stale)}." if stale else ""))
    return Drawn([Drawing(lambda mode: roofline_figure(found, mode), alt_text(found), caption)],
                 read=read, used=used)


FIGURE = Figure("roofline", "a GPU's roofline with every chapter at 4096, at its tiles' "
                "intensity", load, options={"gpu": GPU})
