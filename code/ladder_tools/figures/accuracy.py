"""Error against speed at one size: every method of Part II as a point
({ladder-accuracy}).

x is TFLOP/s, y (log) the relative error ||out - ref|| / ||ref|| against an
FP64 product (cublasDgemm), as the runner of a tensor-core chapter records
it per size (``fp64_error``, see docs/results-schema.md). A point per method:
each chapter (or variant) result named, and cuBLAS on FP32 (SGEMM) and on
TF32, which the runner times and checks in the same process as the kernel.
Filled markers are the uniform inputs (in [-1, 1)), hollow ones the wide
inputs (uniform times 2^e, e in [-16, 16]); both share the method's x, its
rate (timed on uniform inputs). Two dotted lines mark the unit roundoff of
FP32 (2^-24) and of TF32 (2^-11), which are constants, not measurements.

The data: the chapter results (ladder_tools.results) as one Accuracy
(accuracy_data); a result without ``fp64_error`` at the size (Part I's
chapters record it only at small sizes) has no point, and the caption says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.ticker import LogLocator, NullFormatter

from ladder_tools import results
from ladder_tools.figures.registry import GPU, Context, Drawing, Drawn, Figure, Option, Request
from ladder_tools.figures.style import GPU_COLOURS, RC, THEMES, legend, style_axes, svg
from ladder_tools.formatting import format_size, parse_size

if TYPE_CHECKING:
    from pathlib import Path

    from matplotlib.figure import Figure as MplFigure

#: The input distributions, as the results name them, and how each is drawn.
DISTRIBUTIONS = ("uniform", "wide")
FILLED = {"uniform": True, "wide": False}
#: The unit roundoff of each format: half the gap between 1 and the next
#: number, 2^-(significand bits). FP32 keeps 24 bits, TF32 11.
UNIT_ROUNDOFF = {"FP32": 2.0 ** -24, "TF32": 2.0 ** -11}
#: Text sizes in points; the figure is shown at its natural width where the
#: column allows, shrunk to the column on a phone.
TEXT = 12
FIGURE_SIZE = (5.4, 5.6)
MARKER_SIZE = 9
#: A hollow (wide-input) marker is drawn larger, so that it rings a filled one
#: at the same place instead of hiding behind it.
HOLLOW_SIZE = 15
#: The cuBLAS methods, their labels, and the keys of their rate and error.
CUBLAS = (("cuBLAS SGEMM (FP32)", "cublas_gflops", "cublas"),
          ("cuBLAS on TF32", "cublas_tf32_gflops", "cublas_tf32"))
#: One marker shape per method, in the order they are drawn.
SHAPES = ["s", "D", "o", "^", "v", "P", "X", "p"]


@dataclass(frozen=True)
class Point:
    """One method: its label, its rate in TFLOP/s and its error by input
    distribution (None where not measured)."""

    label: str
    tflops: float
    error: dict[str, float | None]


@dataclass(frozen=True)
class Accuracy:
    """What the figure draws: the GPU, the size, the points (cuBLAS first,
    then the results in the order named) and the results named that have no
    point at the size (unmeasured, or measured without FP64 errors there)."""

    gpu: str
    size: tuple[int, int, int]
    points: list[Point]
    cublas_from: str | None = None  #: the label of the result whose run gave cuBLAS's points
    missing: list[str] = field(default_factory=list)


def _errors(entry: dict, method: str) -> dict[str, float | None] | None:
    """The relative-norm error of one method per distribution in an entry;
    None when the entry has no FP64 error for that method."""
    found = entry.get("fp64_error")
    if not isinstance(found, dict):
        return None
    errors = {}
    for distribution in DISTRIBUTIONS:
        value = (found.get(distribution) or {}).get(method, {}).get("rel_norm_err")
        errors[distribution] = value if isinstance(value, (int, float)) else None
    return errors if any(v is not None for v in errors.values()) else None


def accuracy_points(named: list[tuple[str, results.ChapterResult | None]],
                    size: tuple[int, int, int], gpu: str) -> Accuracy:
    """The figure's data from (slug, result or None) pairs: a point per result
    timed at ``size`` with FP64 errors there, and cuBLAS's two points from the
    first of them that recorded both cuBLAS rates and errors."""
    points, missing, cublas, cublas_from = [], [], [], None
    for slug, result in named:
        entry = result.timed_at(size) if result is not None else None
        errors = _errors(entry, "kernel") if entry is not None else None
        if result is None or entry is None or errors is None:
            missing.append(slug)
            continue
        points.append(Point(result.label, entry["gflops"] / 1e3, errors))
        if cublas_from is None:
            found = [(label, entry.get(rate), _errors(entry, method))
                     for label, rate, method in CUBLAS]
            both = [Point(label, r / 1e3, e) for label, r, e in found
                    if isinstance(r, (int, float)) and e is not None]
            if len(both) == len(found):
                cublas = both
                cublas_from = result.label
    m, n, k = size
    return Accuracy(gpu, (m, n, k), cublas + points, cublas_from, missing)


def accuracy_data(repo_root: str | os.PathLike, slugs: list[str],
                  size: tuple[int, int, int], gpu: str = results.REFERENCE_GPU
                  ) -> tuple[Accuracy | None, list[results.ChapterResult], list[Path]]:
    """(Accuracy or None, the results used, the files read) for the named
    results on one GPU; None when no result has a point at ``size``."""
    root = results.results_root(repo_root)
    read = [results.chapter_result_path(root, gpu, slug) for slug in slugs]
    named = [(slug, results.load_chapter_result(root, gpu, slug, repo_root)) for slug in slugs]
    used = [result for _, result in named if result is not None]
    found = accuracy_points(named, size, gpu)
    if not found.points:
        return None, used, read
    gpu_name = used[0].provenance["gpu"] if used else gpu
    return Accuracy(gpu_name, found.size, found.points, found.cublas_from, found.missing), \
        used, read


def _log_limits(values: list[float]) -> tuple[float, float]:
    """A log range that holds every value and both unit roundoffs, with room."""
    low = min([*values, *UNIT_ROUNDOFF.values()])
    high = max([*values, *UNIT_ROUNDOFF.values()])
    return low / 3, high * 4


def _label_goes_right(data: Accuracy, line: float, x_max: float) -> bool:
    """Whether a unit roundoff's label, which sits just above its line, goes
    at the right end (the default) or the left: the right when no point lies
    in the band it would cover (the outer 40% of the x range, from the line
    to 5 times it), else the left when that end is free."""
    def crowded(right: bool) -> bool:
        return any((p.tflops > 0.6 * x_max if right else p.tflops < 0.4 * x_max)
                   and e is not None and line <= e <= 5 * line
                   for p in data.points for e in p.error.values())
    return not crowded(True) or crowded(False)


def accuracy_figure(data: Accuracy, mode: str) -> MplFigure:
    """The matplotlib figure of draw_accuracy (the tests measure it); the
    caller closes it. Each marker has a gid: ``accuracy-<index>-<distribution>``,
    the index of its point in ``data.points``."""
    theme = THEMES[mode]
    ink = theme["ink"]
    figure = plt.figure(figsize=FIGURE_SIZE)
    figure.set_gid("accuracy")
    axes = figure.add_axes((0.19, 0.36, 0.77, 0.61))
    axes.set_gid("accuracy-axes")
    axes.set_yscale("log")
    style_axes(axes, theme)
    errors = [e for p in data.points for e in p.error.values() if e is not None]
    axes.set_ylim(*_log_limits(errors))
    fastest = max(p.tflops for p in data.points)
    axes.set_xlim(0, fastest * 1.12)
    for name, value in UNIT_ROUNDOFF.items():
        axes.axhline(value, color=ink, linestyle=":", linewidth=1.0, zorder=1)
        right = _label_goes_right(data, value, fastest * 1.12)
        axes.annotate(f"unit roundoff of {name}", xy=(1.0 if right else 0.0, value),
                      xycoords=("axes fraction", "data"), xytext=(-2 if right else 2, 3),
                      textcoords="offset points", ha="right" if right else "left",
                      va="bottom", fontsize=TEXT - 1, color=ink, gid=f"roundoff-{name}")
    handles = []
    for index, point in enumerate(data.points):
        colour = GPU_COLOURS[index % len(GPU_COLOURS)]
        shape = SHAPES[index % len(SHAPES)]
        for distribution in DISTRIBUTIONS:
            error = point.error[distribution]
            if error is None:
                continue
            filled = FILLED[distribution]
            axes.plot([point.tflops], [error], linestyle="none", marker=shape,
                      markersize=MARKER_SIZE if filled else HOLLOW_SIZE,
                      markeredgewidth=1.5, color=colour,
                      markerfacecolor=colour if filled else "none",
                      zorder=3, gid=f"accuracy-{index}-{distribution}")
        handles.append(Line2D([], [], linestyle="none", marker=shape, markersize=MARKER_SIZE,
                              color=colour, label=point.label))
    for distribution, words in (("uniform", "filled: inputs uniform in [\u22121, 1)"),
                                ("wide", "hollow: the same \u00d7 2\u1d49, e in [\u221216, 16]")):
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=MARKER_SIZE,
                              markeredgewidth=1.5, color=ink, label=words,
                              markerfacecolor=ink if FILLED[distribution] else "none"))
    axes.yaxis.set_major_locator(LogLocator(base=10))
    axes.yaxis.set_minor_formatter(NullFormatter())
    axes.tick_params(labelsize=TEXT)
    axes.set_xlabel(f"TFLOP/s at {format_size(data.size)}", fontsize=TEXT)
    axes.set_ylabel("relative error against FP64", fontsize=TEXT)
    legend(axes, theme, handles=handles, fontsize=TEXT - 1, loc="upper left",
           bbox_to_anchor=(-0.24, -0.13), ncols=1, handletextpad=0.4, borderaxespad=0.0)
    return figure


def draw_accuracy(data: Accuracy, mode: str) -> bytes:
    """Error (log) against TFLOP/s, a marker per method and distribution."""
    with plt.rc_context(RC):
        return svg(accuracy_figure(data, mode))


def alt_text(data: Accuracy) -> str:
    """The figure in words, for its alt attribute."""
    names = ", ".join(p.label for p in data.points)
    return (f"Relative error against FP64 (log scale) against TFLOP/s at "
            f"{format_size(data.size)} on the {data.gpu}: {names}.")


def caption_notes(data: Accuracy) -> str:
    """What the caption adds: where cuBLAS's points come from, and the results
    named that have no point."""
    notes = []
    if data.cublas_from is not None:
        notes.append(f"cuBLAS's points are from the run of {data.cublas_from}.")
    if data.missing:
        notes.append(f"No FP64 error at {format_size(data.size)}: "
                     f"{', '.join(data.missing)}.")
    return " ".join(notes)


# -- The figure, as the book asks for it (registry.py) ------------------------


def load(context: Context, request: Request) -> Drawn:
    size, gpu = request.options["size"], request.options["gpu"]
    found, used, read = accuracy_data(context.repo_root, request.arguments, size, gpu)
    read = [*read, *(context.repo_root / r.provenance["source"] for r in used)]
    if found is None:
        return Drawn([], f"No error against FP64 at {format_size(size)} on {gpu} for "
                     f"{', '.join(request.arguments)}.", read, used)
    stale = [r.label for r in used if r.stale]
    caption = " ".join(part for part in (
        request.caption_or(f"Error against FP64 and speed at {format_size(size)}."),
        caption_notes(found),
        # "; " between labels: a chapter's title may hold a comma.
        f"Stale: {'; '.join(stale)}." if stale else "") if part)
    return Drawn([Drawing(lambda mode: accuracy_figure(found, mode), alt_text(found), caption)],
                 read=read, used=used,
                 notes=[f"no point for {', '.join(found.missing)}"] if found.missing else [])


FIGURE = Figure("accuracy", "Part II's error against FP64 and TFLOP/s at one size, a point per "
                "method", load, arguments=(1, 9),
                argument="result names, e.g. 14-tf32 15-3xtf32 15-3xtf32-in-core",
                options={"size": Option("N or MxNxK", parse_size, parse_size("4096")),
                         "gpu": GPU})
