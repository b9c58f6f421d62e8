"""Every figure the book draws is legible, checked the same way for all of
them (the checks are figure_checks.collisions and .small_on_a_phone):

- no text overlaps another text or a legend, and no text sits on a line, a
  marker or a scatter point, unless it stands on an opaque box of its own
  drawn over it; in each drawing of the page, and in the phone's drawing
  where a figure has one;
- on a phone (a content column of 360 CSS px) no text is less than 9 px
  high, as the page shows the figure there: shrunk to the column, at its
  own width scrolled sideways (the bank grids, the fragments), or its
  phone's drawing in its place (figure_checks.LAYOUTS): font size in pt x
  96 / 72 px per pt x min(width, 360) / width, the width the SVG's in px;
- every figure draws in both page modes.

"Every figure the book draws": each directive on the pages
(chapters/**/*.md and docs/*.md) that names a figure of the registry
(code/ladder_tools/figures/registry.py), loaded by the figure's own ``load`` from the data
the page reads (the committed results and the chapters built in build/),
as code/ladder_tools/sphinx draws it. A figure no page draws is drawn from a case of its
own, so that every figure is checked.

The checks measure geometry, which is the same in the light and the dark
drawing (they differ only in colours, code/ladder_tools/figures/style.py): the checks run on
the light drawing, and the dark one of each figure is drawn once, to show
that it draws. The checks are tested here too, on toy figures that break
them.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass

from figure_checks import (
    BUILD,
    ROOT,
    collisions,
    draw_order,
    phone_scale,
    shown_texts,
    small_on_a_phone,
    svg_width_px,
)

# figure_checks first: it skips the file when matplotlib is missing.
# isort: split

import matplotlib.pyplot as plt
import pytest

from ladder_tools.analysis.binaries import AnalysisError
from ladder_tools.figures import style
from ladder_tools.figures.registry import Context, Drawing, Figure, every_figure

# -- The figures on the pages ----------------------------------------------------------

FIGURES = every_figure()
DIRECTIVE = re.compile(r"^(`{3,}|:{3,})\{ladder-([a-z-]+)\}\s*(.*)$")
OPTION = re.compile(r"^:([a-z-]+):\s*(.*)$")


@dataclass(frozen=True)
class Case:
    """A figure directive on a page: where, which figure, its arguments and
    options as the page writes them."""

    where: str
    name: str
    arguments: tuple[str, ...]
    options: tuple[tuple[str, str], ...]

    @property
    def figure(self) -> Figure:
        return FIGURES[self.name]

    def load(self) -> list[Drawing]:
        """The drawings, as the page's directive gets them; [] where the data
        is not measured yet."""
        options = self.figure.options
        given = {key: True if options[key].flag else options[key].parse(text)
                 for key, text in self.options}
        request = self.figure.request(list(self.arguments), given)
        try:
            return self.figure.load(Context(ROOT, BUILD), request).drawings
        except AnalysisError as error:
            if "build the chapters first" in str(error):
                pytest.skip(str(error))
            raise


def page_cases() -> list[Case]:
    """Every figure directive of the book's pages, once each (the same
    directive on two pages draws the same figure)."""
    pages = sorted((ROOT / "chapters").glob("**/*.md")) + sorted((ROOT / "docs").glob("*.md"))
    found, seen = [], set()
    for page in pages:
        lines = page.read_text().splitlines()
        for number, line in enumerate(lines, 1):
            match = DIRECTIVE.match(line)
            if not match or match.group(2) not in FIGURES:
                continue
            options = []
            for following in lines[number:]:
                option = OPTION.match(following)
                if not option:
                    break
                options.append((option.group(1), option.group(2).strip()))
            if match.group(2) == "bankmap" and "figure" not in dict(options):
                continue  # a table, not a figure
            # A table's own options ({ladder-sweep}'s :compare:) are not the figure's.
            options = [(k, v) for k, v in options if k in FIGURES[match.group(2)].options]
            case = Case(f"{page.relative_to(ROOT)}:{number}", match.group(2),
                        tuple(match.group(3).split()), tuple(options))
            key = (case.name, case.arguments, case.options)
            if key not in seen:
                seen.add(key)
                found.append(case)
    return found


#: Figures no page draws, each with a case of its own to draw it by:
#: bankmap's figure (the pages show its table), as draw.py's example draws it.
UNDRAWN = [Case("code/ladder_tools/figures/README.md (draw.py bankmap)", "bankmap",
                ("transpose.32x32.tile-read",), ())]
BOOK = page_cases()
CASES = BOOK + [c for c in UNDRAWN if c.name not in {b.name for b in BOOK}]


def case_id(c: Case) -> str:
    return f"{c.where} {c.name} {' '.join(c.arguments)}".strip()


@dataclass
class Measured:
    """What the checks found in one drawing."""

    name: str
    layout: str
    collisions: list[str]
    small: list[str]


def measure(make, layout: str, name: str) -> Measured:
    """Draws ``make("light")`` and runs the checks on it."""
    with plt.rc_context(style.RC):
        figure = make("light")
    try:
        order = draw_order(figure)
        renderer = figure.canvas.get_renderer()
        texts = shown_texts(figure, renderer, order)
        hits = collisions(figure, renderer, order)
        # A drawing the phone hides (it shows the phone's drawing in its
        # place) has no text on a phone to measure.
        small = ([] if layout == "hidden" else
                 small_on_a_phone(figure, renderer, layout, svg_width_px(figure), texts))
    finally:
        plt.close(figure)
    return Measured(name, layout, hits, small)


@functools.cache
def measured(case: Case) -> list[Measured]:
    """Each drawing of ``case``, and its phone's, drawn and measured once
    (both tests read it). The registry's layouts are figure_checks.LAYOUTS';
    a drawing with a phone's drawing of its own is hidden on a phone, and
    its phone's drawing shrunk to the column."""
    found = []
    for drawing in case.load():
        if drawing.phone is None:
            found.append(measure(drawing.make, drawing.layout, drawing.name))
        else:
            found.append(measure(drawing.make, "hidden", drawing.name))
            found.append(measure(drawing.phone, "column",
                                 f"{drawing.name}, phone" if drawing.name else "phone"))
    return found


def drawings_or_skip(case: Case) -> list[Measured]:
    found = measured(case)
    if not found:
        pytest.skip(f"{case_id(case)} draws no figure: its data is not measured")
    return found


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_no_text_collides_with_text_lines_or_markers(case):
    problems = [f"{case_id(case)}{', ' + m.name if m.name else ''}: {p}"
                for m in drawings_or_skip(case) for p in m.collisions]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_every_text_is_at_least_9_px_high_on_a_phone(case):
    problems = [f"{case_id(case)}{', ' + m.name if m.name else ''}: {p}"
                for m in drawings_or_skip(case) for p in m.small]
    assert not problems, "\n".join(problems)


#: One case per figure: the first the pages draw.
FIRST = {c.name: c for c in reversed(CASES)}


@pytest.mark.parametrize("name", sorted(FIRST))
def test_every_figure_draws_on_the_dark_page_too(name):
    drawings = FIRST[name].load()
    if not drawings:
        pytest.skip(f"{name} draws no figure: its data is not measured")
    for drawing in drawings:
        assert drawing.svg("dark").startswith(b"<?xml")
        if drawing.phone is not None:
            assert drawing.svg("dark", phone=True).startswith(b"<?xml")


def test_every_figure_is_checked():
    assert {c.name for c in CASES} == set(FIGURES), (
        "a figure of the registry has no case here: add one to UNDRAWN")


def test_every_module_of_figures_declares_a_figure_or_serves_one():
    """A module of code/ladder_tools/figures/ draws a figure of the registry, or is one that
    those draw with (the look, the registry, the command line; the
    handshake and the ring under the pipeline; the bank grids under the
    fragments)."""
    package = "ladder_tools.figures."
    declared = {figure.load.__module__.removeprefix(package) for figure in FIGURES.values()}
    modules = {path.stem for path in (ROOT / "code" / "ladder_tools" / "figures").glob("*.py")}
    assert modules - declared == {"__init__", "draw", "registry", "style", "handshake", "ring"}


def test_every_figure_directive_of_docs_ext_is_a_registered_figure():
    """code/ladder_tools/sphinx registers no figure directive of its own beside the
    registry's, only directives of tables and text (three of which show a
    registered figure beside their tables)."""
    registered = set()
    for source in (ROOT / "code" / "ladder_tools" / "sphinx").glob("*.py"):
        registered |= set(re.findall(r'add_directive\(\s*"ladder-([a-z-]+)"', source.read_text()))
    tables = {"results", "goals", "resources", "sass", "ncu", "issue", "transpose", "gpus",
              "tail-plans", "random", "ladder", "sweep", "bankmap"}
    assert registered == tables, registered - tables
    assert {n for n, f in FIGURES.items() if not f.directive} == {"ladder", "sweep", "bankmap"}


# -- The checks can fail: toy figures that break them ----------------------------------------


def toy(draw, size=(4, 3)):
    """A figure of one panel drawn by ``draw(axes)``, as the book draws."""
    with plt.rc_context(style.RC):
        figure, axes = plt.subplots(figsize=size)
        axes.set_xlim(0, 10)
        axes.set_ylim(0, 10)
        draw(axes)
        figure.canvas.draw()
    return figure


def found_in(draw, size=(4, 3)) -> list[str]:
    figure = toy(draw, size)
    try:
        return collisions(figure)
    finally:
        plt.close(figure)


def test_two_texts_on_each_other_are_a_collision():
    found = found_in(lambda a: (a.text(5, 5, "first label"), a.text(5.5, 5.1, "second label")))
    assert len(found) == 1 and "'first label' overlaps text 'second label'" in found[0]
    # Apart, they are not; nor is a title over its panel.
    assert found_in(lambda a: (a.text(1, 5, "first"), a.text(6, 5, "second"),
                               a.set_title("a title"))) == []


def test_a_text_on_a_tick_label_or_inside_a_legend_is_a_collision():
    found = found_in(lambda a: a.annotate("below the axis", (0, 0), xytext=(0.5, -0.6),
                                          annotation_clip=False))
    assert any(p.startswith("tick ") and "overlaps text 'below the axis'" in p
               for p in found), found
    found = found_in(lambda a: (a.plot([], [], label="a line"), a.legend(loc="upper left"),
                                a.text(0.6, 9.3, "in the legend")))
    assert any("is inside a legend" in p for p in found), found


def test_a_line_through_a_text_is_a_collision_and_one_beside_it_is_not():
    def through(a):
        a.plot([0, 10], [0, 10], gid="diagonal")
        a.text(5, 5, "on the line", ha="center", va="center")
    found = found_in(through)
    assert len(found) == 1 and "crossed by Line2D diagonal" in found[0], found

    # A V whose extent holds the label, but whose two strokes pass beside it:
    # the segments are what count, not the line's box.
    def beside(a):
        a.plot([0, 5, 10], [10, 0, 10], gid="vee")
        a.text(5, 7, "inside the V", ha="center", va="center")
    assert found_in(beside) == []


def test_a_line_clipped_away_from_a_text_is_not_a_collision():
    def clipped(a):
        a.plot([0, 30], [5, 5])  # clipped to the axes at x = 10
        a.text(11, 5, "outside", va="center", clip_on=False)
    assert found_in(clipped) == []


def test_markers_and_scatter_points_under_a_text_are_collisions():
    found = found_in(lambda a: (a.plot([5], [5], "o", gid="dot"),
                                a.text(5, 5, "on a marker", ha="center", va="center")))
    assert len(found) == 1 and "marker of Line2D dot" in found[0], found
    found = found_in(lambda a: (a.scatter([2, 5], [2, 5], s=30, gid="points"),
                                a.text(5, 5, "on a point", ha="center", va="center")))
    assert len(found) == 1 and "marker of PathCollection points" in found[0], found
    # A marker just beside the text is not.
    assert found_in(lambda a: (a.plot([5], [3], "o"),
                               a.text(5, 5, "above a marker", ha="center", va="center"))) == []


def test_an_arrow_through_another_text_is_a_collision_but_not_its_own():
    def arrows(a):
        a.annotate("from here", xy=(9, 9), xytext=(1, 1), arrowprops={"arrowstyle": "->"})
        a.text(5, 5, "in the way", ha="center", va="center")
    found = found_in(arrows)
    assert len(found) == 1 and "'in the way' is crossed by FancyArrowPatch" in found[0], found


def test_a_line_under_an_opaque_box_of_the_text_is_covered():
    page = style.THEMES["light"]["page"]

    def covered(a):
        a.plot([0, 10], [5, 5], zorder=2)
        a.text(5, 5, "over the line", ha="center", va="center", zorder=3,
               bbox={"boxstyle": "square,pad=0.1", "fc": page, "ec": "none"})
    assert found_in(covered) == []

    # Not when the box is see-through, nor when the line is drawn over it.
    def see_through(a):
        a.plot([0, 10], [5, 5], zorder=2)
        a.text(5, 5, "over the line", ha="center", va="center", zorder=3,
               bbox={"boxstyle": "square,pad=0.1", "fc": page, "ec": "none", "alpha": 0.5})

    def line_on_top(a):
        a.plot([0, 10], [5, 5], zorder=4)
        a.text(5, 5, "under the line", ha="center", va="center", zorder=3,
               bbox={"boxstyle": "square,pad=0.1", "fc": page, "ec": "none"})
    assert len(found_in(see_through)) == 1
    assert len(found_in(line_on_top)) == 1


def test_a_rotated_text_is_measured_in_its_own_box():
    # A text at 45 degrees: its axis-aligned extent is a large square, most
    # of it empty. A line across that square's corner misses the letters.
    def corner(a):
        a.text(5, 5, "a long rotated label", rotation=45, ha="center", va="center",
               rotation_mode="anchor")
        a.plot([6.2, 10], [3.2, 1.5], gid="corner")
    assert found_in(corner, size=(5, 5)) == []

    def across(a):
        a.text(5, 5, "a long rotated label", rotation=45, ha="center", va="center",
               rotation_mode="anchor")
        a.plot([3, 7], [7, 3], gid="across")
    found = found_in(across, size=(5, 5))
    assert len(found) == 1 and "crossed by Line2D across" in found[0], found


def test_small_text_on_a_phone_is_found():
    figure = toy(lambda a: (a.text(1, 5, "7 pt", fontsize=7), a.text(1, 2, "14 pt", fontsize=14)),
                 size=(8, 3))
    try:
        renderer = figure.canvas.get_renderer()
        width = svg_width_px(figure)
        assert 600 < width < 768  # 8 in at 96 px an inch, cropped to what is drawn
        # Shrunk to 360 px, about half: 7 pt (9.3 px unshrunk) is about 5 px,
        # the 10 pt tick labels about 7 px, 14 pt about 10 px.
        small = small_on_a_phone(figure, renderer, "natural", width)
        assert any("'7 pt'" in p for p in small) and not any("'14 pt'" in p for p in small)
        assert any(p.startswith("tick") for p in small)
        # Scrolled, not shrunk: 7 pt is 9.3 px.
        assert small_on_a_phone(figure, renderer, "scroll", width) == []
        assert phone_scale("hidden", width) is None
        assert small_on_a_phone(figure, renderer, "hidden", width) == []
    finally:
        plt.close(figure)


def test_draw_py_help_lists_every_figure():
    # argparse %-formats help texts: a summary's "% of cuBLAS" once made
    # `draw.py --help` crash.
    import subprocess

    done = subprocess.run([sys.executable, "-m", "ladder_tools.figures.draw", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "% of cuBLAS" in done.stdout
    assert all(name in done.stdout for name in FIGURES)


def test_draw_py_draws_a_figure_as_the_page_does(tmp_path):
    case = FIRST["rounds"]
    drawings = case.load()
    if not drawings:
        pytest.skip("rounds draws no figure: its data is not measured")
    import subprocess

    out = tmp_path / "rounds.svg"
    command = [sys.executable, "-m", "ladder_tools.figures.draw", "rounds", *case.arguments,
               *(f"--{key}={value}" for key, value in case.options), "--mode", "dark",
               "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == drawings[0].svg("dark")
