"""What the figure tests share (tests/python/test_figure_*.py, one file per
module of code/ladder_tools/figures/, and test_figures_all.py, which runs the checks below on
every figure the book draws):

- the data: the committed results and the test fixtures, the build folder
  and the chapters built in it, the H200's results;
- drawing a figure as the book does (under the book's rc settings) and
  reading it back: its texts, its panels, its patches by gid;
- the page modes (light and dark) and their ink;
- boxes in display space: which texts overlap one another, which texts a
  line, a marker or a scatter point runs through, and which of those the
  text deliberately covers (an opaque box drawn over them);
- the phone: how wide a figure is drawn (its SVG's width), how the page
  shows it in a phone's column (shrunk, scrolled, or a stacked drawing of
  its own), and how many pixels high its text is there.
"""

from __future__ import annotations

import functools
import io
import math
import os
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

matplotlib = pytest.importorskip("matplotlib")

import matplotlib.pyplot as plt  # noqa: E402  (after importorskip: skipped without matplotlib)
import numpy as np  # noqa: E402
from matplotlib.collections import LineCollection, PathCollection  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Patch  # noqa: E402
from matplotlib.text import Annotation, Text  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from ladder_tools.analysis.binaries import chapter_binaries  # noqa: E402
from ladder_tools.figures import style  # noqa: E402
from ladder_tools.figures.tiling import natural_width_px  # noqa: E402
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
    from ladder_tools.analysis.binaries import describe

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
    legends = [axes.get_legend() for axes in figure.axes if axes.get_legend()]
    for legend in legends:
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


# -- Collisions: texts over texts, lines and markers ----------------------------------
#
# Measured on the drawn figure, in display space (pixels), with the figure's
# renderer: each text's own box (an annotation's without its arrow; a
# rotated text's box rotated with it), against every other text's box, the
# legends' boxes, and what is drawn as lines and points: each Line2D's
# segments (clipped to the axes it is clipped to, then tested against the
# box, so that a line whose whole extent holds a label but which passes
# beside it is not flagged) and its markers, a LineCollection's segments, a
# scatter's markers, the lines that join two panels (ConnectionPatch) and
# the arrows of annotations (but for an annotation's own).
# A line or point drawn before a text that stands on an opaque box of its
# own (a bbox patch) is covered by it: that is how a figure lets a label
# sit over a line on purpose (the tiling figure's warp names over its zoom
# lines). Tick marks and grid lines are not checked (a label may sit on the
# grid), nor a legend's own sample lines.

#: A text box must overlap a line or a marker by more than this many pixels
#: to count: text boxes hold the line's whole height, with room above and
#: below the letters, so a line that grazes the box misses the letters. Two
#: texts' boxes count from the first pixel they share: side by side, the
#: letters of two boxes that touch touch too.
TOLERANCE_PX = 1.0
TEXT_TOLERANCE_PX = 0.0


@dataclass(frozen=True, eq=False)
class TextBox:
    """A text's box in display space: its centre, half width and half height
    along the text, and the angle of the text (radians)."""

    text: object
    kind: str  # "text", "tick" or "legend"
    cx: float
    cy: float
    hw: float
    hh: float
    angle: float

    def local(self, x, y):
        """Display points (arrays) in the box's own frame, its centre at 0."""
        c, s = math.cos(self.angle), math.sin(self.angle)
        dx, dy = x - self.cx, y - self.cy
        return dx * c + dy * s, -dx * s + dy * c

    def corners(self) -> np.ndarray:
        c, s = math.cos(self.angle), math.sin(self.angle)
        along, across = np.array([c, s]), np.array([-s, c])
        centre = np.array([self.cx, self.cy])
        return np.array([centre + i * self.hw * along + j * self.hh * across
                         for i, j in ((-1, -1), (1, -1), (1, 1), (-1, 1))])

    @functools.cached_property
    def extent(self) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1) of the box, turned or not."""
        c, s = abs(math.cos(self.angle)), abs(math.sin(self.angle))
        half_x, half_y = self.hw * c + self.hh * s, self.hw * s + self.hh * c
        return self.cx - half_x, self.cy - half_y, self.cx + half_x, self.cy + half_y

    @property
    def name(self) -> str:
        words = " ".join(self.text.get_text().split())
        return f"{self.kind} {words[:40]!r}"


def text_box(text, renderer, kind: str = "text") -> TextBox:
    """The box of ``text`` as drawn: the box of the unrotated text, turned by
    its rotation about the centre of its drawn (axis-aligned) extent, which
    is the rotated box's centre too."""
    drawn_box = Text.get_window_extent(text, renderer)
    angle = text.get_rotation()
    if angle % 180 == 0:
        width, height = drawn_box.width, drawn_box.height
    elif angle % 90 == 0:
        width, height = drawn_box.height, drawn_box.width
    else:
        text.set_rotation(0)
        try:
            flat = Text.get_window_extent(text, renderer)
        finally:
            text.set_rotation(angle)
        width, height = flat.width, flat.height
    return TextBox(text, kind, (drawn_box.x0 + drawn_box.x1) / 2, (drawn_box.y0 + drawn_box.y1) / 2,
                   width / 2, height / 2, math.radians(angle))


def boxes_overlap(a: TextBox, b: TextBox, tolerance: float = TOLERANCE_PX) -> bool:
    """Whether two boxes share more than ``tolerance`` pixels across
    (separating axes: two rectangles are apart when their projections on
    one of their four side directions are)."""
    (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = a.extent, b.extent
    if min(ax1, bx1) - max(ax0, bx0) <= tolerance or min(ay1, by1) - max(ay0, by0) <= tolerance:
        return False
    if a.angle % (math.pi / 2) == 0 and b.angle % (math.pi / 2) == 0:
        return True
    ca, cb = a.corners(), b.corners()
    for box in (a, b):
        for angle in (box.angle, box.angle + math.pi / 2):
            axis = np.array([math.cos(angle), math.sin(angle)])
            pa, pb = ca @ axis, cb @ axis
            if min(pa.max(), pb.max()) - max(pa.min(), pb.min()) <= tolerance:
                return False
    return True


def segment_in_box(box: TextBox, p, q, tolerance: float = TOLERANCE_PX):
    """The part of the segment p-q inside the box shrunk by ``tolerance``
    (Liang-Barsky in the box's frame), as display points; None outside."""
    (x0, x1), (y0, y1) = box.local(np.array([p[0], q[0]]), np.array([p[1], q[1]]))
    hw, hh = box.hw - tolerance, box.hh - tolerance
    if hw <= 0 or hh <= 0:
        return None
    dx, dy = x1 - x0, y1 - y0
    low, high = 0.0, 1.0
    for step, room in ((-dx, x0 + hw), (dx, hw - x0), (-dy, y0 + hh), (dy, hh - y0)):
        if step == 0:
            if room < 0:
                return None
            continue
        t = room / step
        if step < 0:
            low = max(low, t)
        else:
            high = min(high, t)
    if low >= high:
        return None
    p, q = np.asarray(p, float), np.asarray(q, float)
    return p + low * (q - p), p + high * (q - p)


def point_in_box(box: TextBox, x: float, y: float, radius: float,
                 tolerance: float = TOLERANCE_PX) -> bool:
    """Whether a round marker of ``radius`` pixels at (x, y) reaches more
    than ``tolerance`` pixels into the box."""
    lx, ly = box.local(x, y)
    ox, oy = max(abs(lx) - box.hw, 0.0), max(abs(ly) - box.hh, 0.0)
    if ox == 0 and oy == 0:
        return True
    return math.hypot(ox, oy) < radius - tolerance


def clip_segment(box, p, q):
    """The part of segment p-q inside an axis-aligned display box (a Bbox),
    or None."""
    centre = TextBox(None, "", (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2,
                     box.width / 2, box.height / 2, 0.0)
    return segment_in_box(centre, p, q, tolerance=-0.5)


@dataclass
class Obstacle:
    """What a text must not sit on: an artist's drawn segments and round
    points (display space)."""

    artist: object
    segments: list
    points: list  # (x, y, radius)

    def __post_init__(self):
        ends = np.array([[*p, *q] for p, q in self.segments], float).reshape(-1, 4)
        self._low = np.minimum(ends[:, :2], ends[:, 2:])
        self._high = np.maximum(ends[:, :2], ends[:, 2:])
        self._points = np.array(self.points, float).reshape(-1, 3)

    def near(self, extent) -> tuple[list, list]:
        """The segments and points whose boxes reach the box ``extent``
        (x0, y0, x1, y1): the only ones that can meet a text in it."""
        x0, y0, x1, y1 = extent
        hit = ((self._low[:, 0] <= x1) & (self._high[:, 0] >= x0)
               & (self._low[:, 1] <= y1) & (self._high[:, 1] >= y0))
        r = self._points[:, 2]
        dot = ((self._points[:, 0] + r >= x0) & (self._points[:, 0] - r <= x1)
               & (self._points[:, 1] + r >= y0) & (self._points[:, 1] - r <= y1))
        return ([self.segments[i] for i in np.flatnonzero(hit)],
                [self.points[i] for i in np.flatnonzero(dot)])

    @property
    def name(self) -> str:
        gid, label = self.artist.get_gid(), self.artist.get_label()
        what = gid or (label if label and not label.startswith("_") else "")
        return f"{type(self.artist).__name__} {what}".strip()


def _no_line(style) -> bool:
    return style in (None, "None", "none", "", " ")


def _clip_box(artist):
    if not artist.get_clip_on():
        return None
    box = artist.get_clip_box()
    return None if box is None else box.frozen()


def _clipped(segments, points, clip):
    if clip is None:
        return segments, points
    kept = []
    for p, q in segments:
        part = clip_segment(clip, p, q)
        if part is not None:
            kept.append(part)
    points = [(x, y, r) for x, y, r in points
              if clip.x0 - r <= x <= clip.x1 + r and clip.y0 - r <= y <= clip.y1 + r]
    return kept, points


def _polyline(xy) -> list:
    """The segments of a polyline of display points; NaN breaks it."""
    return [(xy[i], xy[i + 1]) for i in range(len(xy) - 1)
            if np.all(np.isfinite(xy[i])) and np.all(np.isfinite(xy[i + 1]))]


def obstacle_of(artist, dpi: float) -> Obstacle | None:
    """The drawn segments and points of a line, a collection of lines or
    points, or a line joining two panels; None for anything else."""
    px = dpi / 72
    if isinstance(artist, Line2D):
        xy = artist.get_transform().transform(artist.get_xydata())
        segments = [] if (_no_line(artist.get_linestyle()) or artist.get_linewidth() <= 0) \
            else _polyline(xy)
        points = []
        if not _no_line(artist.get_marker()) and artist.get_markersize() > 0:
            radius = (artist.get_markersize() / 2 + artist.get_markeredgewidth() / 2) * px
            points = [(x, y, radius) for x, y in xy if np.isfinite(x) and np.isfinite(y)]
        segments, points = _clipped(segments, points, _clip_box(artist))
    elif isinstance(artist, LineCollection):
        if not np.any(np.asarray(artist.get_linewidths()) > 0):
            return None
        transform = artist.get_transform()
        segments = [s for path in artist.get_segments() if len(path)
                    for s in _polyline(transform.transform(np.asarray(path)))]
        segments, points = _clipped(segments, [], _clip_box(artist))
    elif isinstance(artist, PathCollection):
        offsets = artist.get_offsets()
        if not len(offsets):
            return None
        xy = artist.get_offset_transform().transform(offsets)
        sizes = artist.get_sizes()
        widths = artist.get_linewidths()
        points = []
        for i, (x, y) in enumerate(xy):
            area = sizes[i % len(sizes)] if len(sizes) else 36.0
            edge = widths[i % len(widths)] if len(widths) else 0.0
            if np.isfinite(x) and np.isfinite(y) and area > 0:
                points.append((x, y, (math.sqrt(area) / 2 + edge / 2) * px))
        segments, points = _clipped([], points, _clip_box(artist))
    elif isinstance(artist, FancyArrowPatch):  # a ConnectionPatch, an annotation's arrow
        path = artist.get_path().transformed(artist.get_transform())
        segments = [s for line in path.to_polygons(closed_only=False) for s in _polyline(line)]
        points = []
    else:
        return None
    if not segments and not points:
        return None
    return Obstacle(artist, segments, points)


def draw_order(figure) -> dict:
    """Every artist the figure draws, in the order it draws them (id ->
    (index, artist)): recorded by drawing the figure once more, with the
    draw methods of texts, lines, collections and patches wrapped."""
    from matplotlib.collections import Collection

    order: dict = {}

    def recording(original):
        def draw(self, renderer, *args, **kwargs):
            if self.get_visible():
                order.setdefault(id(self), (len(order), self))
            return original(self, renderer, *args, **kwargs)
        return draw

    classes = (Text, Line2D, Collection, Patch, FancyArrowPatch)
    saved = {cls: cls.__dict__["draw"] for cls in classes}
    try:
        for cls, original in saved.items():
            cls.draw = recording(original)
        with plt.rc_context(style.RC):
            figure.canvas.draw()
    finally:
        for cls, original in saved.items():
            cls.draw = original
    return order


def _every_axes(figure) -> list:
    found = []

    def walk(axes):
        found.append(axes)
        for child in axes.child_axes:
            walk(child)
    for axes in figure.axes:
        walk(axes)
    return found


def _legends(figure) -> list:
    return [*figure.legends, *(a.get_legend() for a in _every_axes(figure) if a.get_legend())]


def shown_texts(figure, renderer, order: dict | None = None) -> list[TextBox]:
    """The box of every text the figure draws that has letters in it, with
    its kind: "tick" (a tick label or an axis's offset), "legend" (a legend's
    entries and title) or "text" (titles, axis labels, annotations, in-plot
    labels, the figure's own texts)."""
    order = draw_order(figure) if order is None else order
    ticks, legends = set(), set()
    for axes in _every_axes(figure):
        for axis in (axes.xaxis, axes.yaxis):
            ticks.add(id(axis.get_offset_text()))
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                ticks.update((id(tick.label1), id(tick.label2)))
    for legend in _legends(figure):
        legends.update(id(t) for t in [*legend.get_texts(), legend.get_title()])
    boxes = []
    for _, artist in sorted(order.values(), key=lambda entry: entry[0]):
        if not isinstance(artist, Text) or not artist.get_text().strip():
            continue
        if artist.get_alpha() == 0 or to_rgba(artist.get_color())[3] == 0:
            continue
        kind = "tick" if id(artist) in ticks else "legend" if id(artist) in legends else "text"
        boxes.append(text_box(artist, renderer, kind))
    return boxes


def _covers(text, artist, order: dict) -> bool:
    """Whether ``text`` stands on an opaque box of its own drawn after
    ``artist``, hiding it where they meet."""
    patch = text.get_bbox_patch()
    if patch is None or not patch.get_visible():
        return False
    opaque = to_rgba(patch.get_facecolor())[3] == 1 and patch.get_alpha() in (None, 1)
    return opaque and order[id(artist)][0] < order[id(text)][0]


def _legend_members(figure) -> set:
    members = set()
    for legend in _legends(figure):
        members.update(id(a) for a in legend.findobj())
    return members


def _tick_lines(figure) -> set:
    found = set()
    for axes in _every_axes(figure):
        for axis in (axes.xaxis, axes.yaxis):
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                found.update((id(tick.tick1line), id(tick.tick2line), id(tick.gridline)))
    return found


def collisions(figure, renderer=None, order: dict | None = None) -> list[str]:
    """Every text of the drawn ``figure`` that overlaps another text or a
    legend, or sits on a line, a marker or a scatter point it does not
    cover; [] when there is none. ``order``: draw_order(figure), when the
    caller has it."""
    order = draw_order(figure) if order is None else order
    renderer = figure.canvas.get_renderer() if renderer is None else renderer
    texts = shown_texts(figure, renderer, order)
    problems = []
    by_left = sorted(texts, key=lambda box: box.extent[0])
    for i, a in enumerate(by_left):
        for b in by_left[i + 1:]:
            if b.extent[0] >= a.extent[2]:
                break
            if boxes_overlap(a, b, TEXT_TOLERANCE_PX):
                first, second = sorted((a, b), key=texts.index)
                problems.append(f"{first.name} overlaps {second.name}")
    # A legend is a box of its own: no other text inside what it draws (its
    # entries and their samples, lines and patches; a scatter's sample has
    # no box of its own), not counting the padding around them.
    for legend in _legends(figure):
        drawn = [*legend.get_texts(), *(h for h in legend.legend_handles
                                        if isinstance(h, (Line2D, Patch)))]
        frame = Bbox.union([a.get_window_extent(renderer) for a in drawn])
        area = TextBox(legend, "legend box", (frame.x0 + frame.x1) / 2, (frame.y0 + frame.y1) / 2,
                       frame.width / 2, frame.height / 2, 0.0)
        own = {id(t) for t in [*legend.get_texts(), legend.get_title()]}
        problems += [f"{t.name} is inside a legend" for t in texts
                     if id(t.text) not in own and boxes_overlap(area, t)]
    skip = _legend_members(figure) | _tick_lines(figure)
    # An annotation's arrow starts at its own text: it may not cross others.
    own_arrow = {id(a.arrow_patch): a for a in figure.findobj(Annotation)
                 if a.arrow_patch is not None}
    obstacles = [o for _, artist in sorted(order.values(), key=lambda entry: entry[0])
                 if id(artist) not in skip and (o := obstacle_of(artist, figure.dpi)) is not None]
    for box in texts:
        for obstacle in obstacles:
            segments, points = obstacle.near(box.extent)
            if (not segments and not points) or _covers(box.text, obstacle.artist, order):
                continue
            if own_arrow.get(id(obstacle.artist)) is box.text:
                continue
            for p, q in segments:
                part = segment_in_box(box, p, q)
                if part is not None:
                    (x0, y0), (x1, y1) = part
                    problems.append(f"{box.name} is crossed by {obstacle.name} "
                                    f"from ({x0:.0f}, {y0:.0f}) to ({x1:.0f}, {y1:.0f}) px")
                    break
            else:
                for x, y, radius in points:
                    if point_in_box(box, x, y, radius):
                        problems.append(f"{box.name} lies on a marker of {obstacle.name} "
                                        f"at ({x:.0f}, {y:.0f}) px")
                        break
    return problems


# -- The phone ---------------------------------------------------------------------
#
# A figure's drawing is as wide as its SVG says (in pt, 96 / 72 CSS px per
# pt). The page shows it in one of these ways (code/ladder_tools/sphinx, docs/_static/
# ladder.css):
#
# - "natural": at its natural width, shrunk to the column where that is
#   narrower (natural_figure: the tiling, rounds, roofline, ... figures);
# - "column": as wide as the column (figure(): the ladder, the mix, the
#   sweep, a {ladder-plot}'s stacked drawing);
# - "scroll": at its natural width, scrolled sideways in a narrower column
#   (the bank grids: 32 cells across);
# - "hidden": not shown on a phone (a {ladder-plot}'s side-by-side drawing,
#   for which the phone has the stacked one).
#
# On a phone (390 CSS px, a content column of about 360 px) its text is then
# pt x 96 / 72 x min(width, 360) / width px high ("scroll": not shrunk; a
# "column" drawing narrower than 360 px is grown, which only helps, so it
# counts as not shrunk), and must be at least 9 px.

PHONE_COLUMN_PX = 360
PX_PER_PT = 96 / 72
LEAST_TEXT_PX = 9.0
LAYOUTS = ("natural", "column", "scroll", "hidden")


def svg_width_px(figure) -> float:
    """The CSS width of the figure's SVG as the book writes it (style.svg's
    settings), without closing the figure."""
    buffer = io.BytesIO()
    with plt.rc_context(style.RC):
        figure.savefig(buffer, format="svg", transparent=True, bbox_inches="tight",
                       metadata={"Date": None})
    return natural_width_px(buffer.getvalue())


def phone_scale(layout: str, width_px: float) -> float | None:
    """How much a phone's page shrinks a drawing of ``width_px`` shown as
    ``layout``; None where the phone does not show it."""
    assert layout in LAYOUTS, layout
    if layout == "hidden":
        return None
    if layout == "scroll":
        return 1.0
    return min(width_px, PHONE_COLUMN_PX) / width_px


def phone_text_px(texts: list[TextBox], scale: float) -> list[tuple[TextBox, float]]:
    """Each text's height in CSS px on the phone."""
    return [(t, t.text.get_fontsize() * PX_PER_PT * scale) for t in texts]


def small_on_a_phone(figure, renderer, layout: str, width_px: float | None = None,
                     texts: list[TextBox] | None = None) -> list[str]:
    """The texts of ``figure`` shown as ``layout`` that a phone draws less
    than LEAST_TEXT_PX high; [] when none is (or the phone does not show
    it). ``width_px`` and ``texts``: svg_width_px(figure) and
    shown_texts(figure, renderer), when the caller has them."""
    width_px = svg_width_px(figure) if width_px is None else width_px
    scale = phone_scale(layout, width_px)
    if scale is None:
        return []
    texts = shown_texts(figure, renderer) if texts is None else texts
    return [f"{t.name} is {px:.1f} px high ({t.text.get_fontsize():g} pt in a drawing "
            f"{width_px:.0f} px wide, shown {scale:.2f} times)"
            for t, px in phone_text_px(texts, scale) if px < LEAST_TEXT_PX - 1e-9]
