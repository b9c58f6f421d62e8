"""Every figure the book draws is legible, checked the same way for all of
them (the checks are figure_checks.collisions and .small_on_a_phone):

- no text overlaps another text or a legend, and no text sits on a line, a
  marker or a scatter point, unless it stands on an opaque box of its own
  drawn over it; in the light and the dark drawing, and in the phone's
  drawing where a figure has one;
- on a phone (a content column of 360 CSS px) no text is less than 9 px
  high, as the page shows the figure there: shrunk to the column, at its
  own width scrolled sideways (the bank grids, the fragments), or its
  phone's drawing in its place (figure_checks.LAYOUTS): font size in pt x
  96 / 72 px per pt x min(width, 360) / width, the width the SVG's in px.

"Every figure the book draws": each figure directive on the pages
(chapters/**/*.md and docs/*.md), drawn from the data its directive reads
(the committed results and the chapters built in build/), by the module's
own drawing function, as docs/_ext draws it. A module of figures/ that no
page draws is drawn from a case of its own, so that every module is
checked. The checks are tested here too, on toy figures that break them.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from figure_checks import (
    BUILD,
    MODES,
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

from figures import (
    accuracy,
    bankgrid,
    bankmap,
    by_size,
    cut,
    fragments,
    handshake,
    ladder,
    mix,
    pipeline,
    roofline,
    rounds,
    split,
    stages,
    style,
    sweep,
    tail,
    tail_map,
    tiling,
    warp_access,
)
from ladder_tools import results, sweep_results, tailplan
from ladder_tools.formatting import parse_size

# -- The figures on the pages ----------------------------------------------------------

#: The figure directives, and the module of figures/ that draws each.
DIRECTIVES = {
    "plot": "by_size", "ladder": "ladder", "mix-figure": "mix", "bankmap": "bankmap",
    "bankgrid": "bankgrid", "sweep": "sweep", "tiling": "tiling", "roofline": "roofline",
    "stages": "stages", "pipeline": "pipeline", "split": "split", "rounds": "rounds",
    "cut": "cut", "warp-access": "warp_access", "fragments": "fragments", "tail-rounds": "tail",
    "tail-map": "tail_map", "accuracy": "accuracy",
}
#: A module a directive draws with one of its options: (directive, option).
OPTIONAL_MODULES = {("pipeline", "handshake"): "handshake"}
DIRECTIVE = re.compile(r"^(`{3,}|:{3,})\{ladder-([a-z-]+)\}\s*(.*)$")
OPTION = re.compile(r"^:([a-z-]+):\s*(.*)$")


@dataclass(frozen=True)
class Directive:
    """A figure directive on a page: where, which, its arguments and options."""

    where: str
    name: str
    arguments: tuple[str, ...]
    options: tuple[tuple[str, str], ...]

    @property
    def module(self) -> str:
        return DIRECTIVES[self.name]

    @property
    def modules(self) -> set[str]:
        """The modules of figures/ whose figures it draws."""
        return {self.module} | {module for (name, option), module in OPTIONAL_MODULES.items()
                                if name == self.name and option in dict(self.options)}

    def option(self, key: str, default=None):
        return dict(self.options).get(key, default)


def page_directives() -> list[Directive]:
    """Every figure directive of the book's pages, once each (the same
    directive on two pages draws the same figure)."""
    pages = sorted((ROOT / "chapters").glob("**/*.md")) + sorted((ROOT / "docs").glob("*.md"))
    found, seen = [], set()
    for page in pages:
        lines = page.read_text().splitlines()
        for number, line in enumerate(lines, 1):
            match = DIRECTIVE.match(line)
            if not match or match.group(2) not in DIRECTIVES:
                continue
            options = []
            for following in lines[number:]:
                option = OPTION.match(following)
                if not option:
                    break
                options.append((option.group(1), option.group(2).strip()))
            if match.group(2) == "bankmap" and "figure" not in dict(options):
                continue  # a table, not a figure
            directive = Directive(f"{page.relative_to(ROOT)}:{number}", match.group(2),
                                  tuple(match.group(3).split()), tuple(options))
            key = (directive.name, directive.arguments, directive.options)
            if key not in seen:
                seen.add(key)
                found.append(directive)
    return found


#: Modules no page draws, each with a directive of its own to draw it by:
#: bankmap's figure (the pages show its table), as draw.py's example draws it.
UNDRAWN = [Directive("figures/README.md (draw.py bankmap)", "bankmap",
                     ("transpose.32x32.tile-read",), (("figure", ""),))]
BOOK = page_directives()
CASES = BOOK + [d for d in UNDRAWN if d.module not in {b.module for b in BOOK}]


def tool(name: str) -> Path:
    path = BUILD / "bin" / name
    if not path.is_file():
        pytest.skip(f"{name} is not built in {BUILD}/bin")
    return path


def chapter_built(slug: str) -> None:
    """Skips unless the binary of ``slug`` (a chapter or one of its
    variants) is built."""
    from ladder_tools.binaries import AnalysisError, find_variant
    try:
        find_variant(ROOT, BUILD, slug)
    except AnalysisError as error:
        pytest.skip(str(error))


# What each directive draws, as docs/_ext draws it: a list of (name,
# layout, make), make(mode) giving the matplotlib figure; the layout is how
# the page shows it on a phone (figure_checks.LAYOUTS). [] where the
# directive draws no figure (a note that nothing is measured yet).


def draws_plot(d: Directive):
    found = results.load_chapter_results(results.results_root(ROOT), d.arguments[0], ROOT)
    shown = [r for r in found if by_size.square_series(r, "gflops").sizes]
    if not shown:
        return []
    reference = d.option("reference", "sgemm")
    series = by_size.by_size_series(shown, reference)
    return [("side by side", "hidden",
             lambda mode: by_size.by_size_figure(*series, mode, reference)),
            ("stacked", "column",
             lambda mode: by_size.by_size_figure(*series, mode, reference, stacked=True))]


def draws_ladder(d: Directive):
    slugs = results.chapter_slugs(ROOT)
    bars = ladder.every_gpu_bars(results.results_root(ROOT), ROOT, slugs, results.HEADLINE_SIZE)
    if not bars:
        return []
    labels = [slug.replace("-", " ", 1) for slug in slugs]
    return [("side by side", "hidden", lambda mode: ladder.ladder_figure(labels, bars, mode)),
            ("stacked", "column",
             lambda mode: ladder.ladder_figure(labels, bars, mode, stacked=True))]


def draws_mix(d: Directive):
    from ladder_tools.binaries import chapter_binaries
    if not (BUILD / "bin").is_dir():
        pytest.skip(f"no chapter is built in {BUILD}/bin")
    bars = mix.mix_bars(chapter_binaries(ROOT, BUILD))
    return [("side by side", "hidden", lambda mode: mix.mix_figure(bars, mode)),
            ("stacked", "column", lambda mode: mix.mix_figure(bars, mode, stacked=True))]


def draws_bankmap(d: Directive):
    from ladder_tools.bankmap import run_bankmap
    report = run_bankmap(tool("bankmap"), d.arguments[0] if d.arguments else None,
                         int(d.option("stride")) if d.option("stride") else None,
                         int(d.option("width", 4)))
    return [("", "column", lambda mode: bankmap.bankmap_figure(report, mode))]


def draws_bankgrid(d: Directive):
    from ladder_tools.bankmap import run_bankmap
    titles = ([t.strip() for t in d.option("titles").split(";")] if d.option("titles")
              else list(d.arguments))
    grids = [bankgrid.bank_grid(run_bankmap(tool("bankmap"), name), title)
             for name, title in zip(d.arguments, titles, strict=True)]
    return [("", "scroll", lambda mode: bankgrid.bankgrid_figure(grids, mode))]


def committed_constants(chapter: str) -> dict | None:
    """The constants the chapter's binary describes (its default variant's):
    the configuration its kernel commits to, as the sweep's directive reads it."""
    from ladder_tools.binaries import find_variant
    chapter_built(chapter)
    _, variant = find_variant(ROOT, BUILD, chapter)
    return variant.get("constants")


def draws_sweep(d: Directive):
    chapter, root = d.arguments[0], results.results_root(ROOT)
    drawn = []
    for gpu in results.gpu_folders(root):
        found = sweep_results.load_sweep(root, gpu, chapter)
        if found is None:
            continue
        committed = sweep_results.committed_config(found, committed_constants(chapter))
        points = sweep.sweep_points(found, committed)
        drawn.append((f"{gpu}, side by side", "hidden",
                      lambda mode, points=points: sweep.sweep_figure(*points, mode)))
        drawn.append((f"{gpu}, stacked", "column",
                      lambda mode, points=points: sweep.sweep_figure(*points, mode, True)))
    return drawn


def draws_constants(load, make):
    def draws(d: Directive):
        chapter_built(d.arguments[0])
        found, _ = load(ROOT, BUILD, d.arguments[0])
        return [("", "natural", lambda mode: make(found, mode))]
    return draws


def draws_pipeline(d: Directive):
    """The ring; with :handshake:, the handshake figure under it."""
    chapter_built(d.arguments[0])
    ring, _ = pipeline.chapter_pipeline(ROOT, BUILD, d.arguments[0])
    drawn = [("", "natural", lambda mode: pipeline.pipeline_figure(ring, mode))]
    if d.option("handshake") is not None:
        found, _ = handshake.chapter_handshake(ROOT, BUILD, d.arguments[0])
        drawn.append(("handshake", "natural",
                      lambda mode: handshake.handshake_figure(found, mode)))
    return drawn


def draws_roofline(d: Directive):
    found, _, _ = roofline.roofline_data(ROOT, BUILD, d.option("gpu", results.REFERENCE_GPU))
    if found is None:
        return []
    return [("", "natural", lambda mode: roofline.roofline_figure(found, mode))]


def draws_rounds(d: Directive):
    chapter_built(d.arguments[0])
    found, _, _ = rounds.chapter_rounds(ROOT, BUILD, d.arguments[0], int(d.option("size")),
                                        d.option("gpu", results.REFERENCE_GPU))
    return [] if found is None else [("", "natural",
                                      lambda mode: rounds.rounds_figure(found, mode))]


def draws_cut(d: Directive):
    found, _, _ = cut.chapter_cut(ROOT, tool("lastround"), d.arguments[0],
                                  int(d.option("size")), d.option("gpu", results.REFERENCE_GPU))
    return [] if found is None else [("", "natural", lambda mode: cut.cut_figure(found, mode))]


def draws_warp_access(d: Directive):
    from ladder_tools.warpmap import chapter_accesses
    columns = [(slug, chapter_accesses(tool("warpmap"), slug)) for slug in d.arguments]
    return [("", "natural", lambda mode: warp_access.warp_access_figure(columns, mode))]


def draws_fragments(d: Directive):
    from ladder_tools.fragmap import run_fragmap
    report = run_fragmap(tool("fragmap"))
    if d.option("show", "tiles") == "tiles":
        tiles = fragments.fragment_tiles(report)
        return [("", "scroll", lambda mode: fragments.fragments_figure(tiles, mode))]
    grids = fragments.load_grids(report)
    return [("", "scroll", lambda mode: bankgrid.bankgrid_figure(grids, mode))]


def draws_tail_rounds(d: Directive):
    found, _, _ = tail.chapter_tail_rounds(
        ROOT, BUILD, tool("tailplan"), tailplan.parse_size(d.arguments[0]),
        d.option("schemes", "tiles split-k stream-k").split(),
        d.option("gpu", results.REFERENCE_GPU))
    return [] if found is None else [
        ("", "hidden", lambda mode: tail.tail_rounds_figure(found, mode)),
        ("phone", "column", lambda mode: tail.tail_rounds_figure(found, mode, phone=True))]


def draws_tail_map(d: Directive):
    found, _ = tail_map.chapter_tail_map(ROOT, d.option("gpu", results.REFERENCE_GPU))
    return [] if found is None else [
        ("", "hidden", lambda mode: tail_map.tail_map_figure(found, mode)),
        ("phone", "column", lambda mode: tail_map.tail_map_figure(found, mode, phone=True))]


def draws_accuracy(d: Directive):
    found, _, _ = accuracy.accuracy_data(ROOT, list(d.arguments),
                                         parse_size(d.option("size", "4096")),
                                         d.option("gpu", results.REFERENCE_GPU))
    return [] if found is None else [("", "natural",
                                      lambda mode: accuracy.accuracy_figure(found, mode))]


DRAWS = {
    "plot": draws_plot, "ladder": draws_ladder, "mix-figure": draws_mix,
    "bankmap": draws_bankmap, "bankgrid": draws_bankgrid, "sweep": draws_sweep,
    "tiling": draws_constants(tiling.chapter_tiling, tiling.tiling_figure),
    "stages": draws_constants(stages.chapter_stages, stages.stages_figure),
    "pipeline": draws_pipeline,
    "split": draws_constants(split.chapter_split, split.split_figure),
    "roofline": draws_roofline, "rounds": draws_rounds, "cut": draws_cut,
    "warp-access": draws_warp_access, "fragments": draws_fragments,
    "tail-rounds": draws_tail_rounds, "tail-map": draws_tail_map, "accuracy": draws_accuracy,
}


@dataclass
class Measured:
    """What the checks found in one drawing."""

    name: str
    layout: str
    collisions: list[str]
    small: list[str]
    width_px: float
    least_pt: float


@functools.cache
def measured(directive: Directive, mode: str) -> list[Measured]:
    """Each drawing of ``directive`` in ``mode``, drawn and measured once
    (both tests read it)."""
    found = []
    for name, layout, make in DRAWS[directive.name](directive):
        with plt.rc_context(style.RC):
            figure = make(mode)
        try:
            order = draw_order(figure)
            renderer = figure.canvas.get_renderer()
            texts = shown_texts(figure, renderer, order)
            hits = collisions(figure, renderer, order)
            width = svg_width_px(figure)
            small = small_on_a_phone(figure, renderer, layout, width, texts)
            least = min(t.text.get_fontsize() for t in texts)
        finally:
            plt.close(figure)
        found.append(Measured(name, layout, hits, small, width, least))
    return found


def case_id(d: Directive) -> str:
    return f"{d.where} {d.name} {' '.join(d.arguments)}".strip()


def drawings_or_skip(directive: Directive, mode: str) -> list[Measured]:
    found = measured(directive, mode)
    if not found:
        pytest.skip(f"{case_id(directive)} draws no figure: its data is not measured")
    return found


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("directive", CASES, ids=[case_id(d) for d in CASES])
def test_no_text_collides_with_text_lines_or_markers(directive, mode):
    problems = [f"{case_id(directive)}, {mode}{', ' + m.name if m.name else ''}: {p}"
                for m in drawings_or_skip(directive, mode) for p in m.collisions]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("directive", CASES, ids=[case_id(d) for d in CASES])
def test_every_text_is_at_least_9_px_high_on_a_phone(directive):
    problems = [f"{case_id(directive)}{', ' + m.name if m.name else ''}: {p}"
                for m in drawings_or_skip(directive, "light") for p in m.small]
    assert not problems, "\n".join(problems)


def test_every_module_of_figures_is_checked():
    modules = {path.stem for path in (ROOT / "figures").glob("*.py")} - {
        "__init__", "draw", "style"}
    assert set(DIRECTIVES.values()) | set(OPTIONAL_MODULES.values()) == modules, (
        "a module of figures/ has no directive here")
    assert {m for d in CASES for m in d.modules} == modules, (
        "a module of figures/ has no figure checked")


def test_every_figure_directive_of_docs_ext_is_known():
    """A directive that docs/_ext registers and that draws a figure is in
    DIRECTIVES (the others make tables and text)."""
    registered = set()
    for source in (ROOT / "docs" / "_ext").glob("*.py"):
        registered |= set(re.findall(r'add_directive\(\s*"ladder-([a-z-]+)"', source.read_text()))
    tables = {"results", "goals", "resources", "sass", "ncu", "issue", "transpose", "gpus",
              "tail-plans", "random"}
    assert registered - tables == set(DIRECTIVES), registered - tables


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
    # argparse %-formats help texts: a docstring's "% of cuBLAS" once made
    # `draw.py --help` crash.
    import subprocess

    done = subprocess.run([sys.executable, str(ROOT / "figures" / "draw.py"), "--help"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "% of cuBLAS" in done.stdout
