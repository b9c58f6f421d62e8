"""Sphinx glue that puts the book's figures on its pages: one directive for
every figure that ladder_tools/figures/registry.py declares.

``{ladder-<name>} [arguments]``  options: the figure's; body: the caption
    the figure ``<name>`` (ladder_tools/figures/<module>.py, its FIGURE says what it
    takes), drawn for the light and the dark page, with its alt text, and
    the caption written on the page or the figure's own; a note where its
    data is not measured yet. ``python -m ladder_tools.figures.draw --help`` lists the
    figures, ``draw.py <name> --help`` one figure's arguments and options.

Each drawing is shown as its layout says (ladder_tools/figures/registry.py, LAYOUTS),
with a phone's drawing where it has one. The figures that a page shows
beside tables ({ladder-ladder}, {ladder-sweep}, {ladder-bankmap} ``:figure:``)
come through the directives of those tables, which call figure_nodes().
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from ladder_tools import results
from ladder_tools.analysis.binaries import AnalysisError
from ladder_tools.figures.registry import Context, Drawing, Figure, Option, every_figure
from ladder_tools.figures.tiling import natural_width_px
from ladder_tools.sphinx.ladder_base import LadderMixin, not_measured_box
from ladder_tools.sphinx.ladder_nodes import figure, with_phone_drawing

if TYPE_CHECKING:
    from docutils.parsers.rst.states import RSTState
    from sphinx.application import Sphinx
    from sphinx.util.typing import ExtensionMetadata


def natural_figure(draw_svg: Callable[[str], bytes], alt: str, caption: str, state: RSTState,
                   lineno: int) -> list[nodes.Node]:
    """A light and dark figure shown at its natural width where the column is
    wider (the theme's max-width: 100% shrinks it on a phone), so that its
    text is the size of the prose, with its caption's inline markup (code,
    roles) parsed as in the prose."""
    drawings: dict[str, bytes] = {}

    def draw(mode: str) -> bytes:
        drawings[mode] = draw_svg(mode)
        return drawings[mode]

    node = figure(draw, alt=alt, caption=caption)
    width = natural_width_px(drawings["light"])
    for image in node.findall(nodes.image):
        image["width"] = f"{width}px"
        image["classes"].append("align-center")
    parsed, messages = state.inline_text(caption, lineno)
    node[-1] = nodes.caption(caption, "", *parsed)
    return [node, *messages]


def figure_nodes(drawing: Drawing, state: RSTState, lineno: int) -> list[nodes.Node]:
    """One drawing on the page, as its layout says, with its phone's
    drawing where it has one (docs/_static/ladder.css shows one or the
    other by the column's width)."""
    if drawing.layout == "column":
        output: list[nodes.Node] = [figure(drawing.svg, alt=drawing.alt,
                                           caption=drawing.caption)]
    else:
        output = natural_figure(drawing.svg, drawing.alt, drawing.caption, state, lineno)
    node = output[0]
    assert isinstance(node, nodes.figure)
    if drawing.layout == "scroll":
        node["classes"].append("ladder-scroll")
    if drawing.phone is not None:
        with_phone_drawing(node, lambda mode: drawing.svg(mode, phone=True), drawing.alt)
    return output


def _option_spec(options: dict[str, Option]) -> dict[str, Callable[[str], Any]]:
    """docutils' converters of a figure's options: its parse (a ValueError
    is docutils' report of a bad option); a flag is True when given."""
    def flag(text: str) -> bool:
        directives.flag(text)  # a flag takes no text
        return True

    def converter(option: Option) -> Callable[[str], Any]:
        if option.flag:
            return flag
        return lambda text: option.parse(directives.unchanged_required(text))
    return {name: converter(option) for name, option in options.items()}


class FigureDirective(LadderMixin, SphinxDirective):
    """``{ladder-<name>}``: the registered figure ``<name>`` (a subclass per
    figure, made by directive_of(), holds it)."""

    has_content = True
    declared: Figure

    def run(self) -> list[nodes.Node]:
        context = Context(self.repo_root, self.build_dir)
        request = self.declared.request(
            self.arguments, self.options,
            " ".join(line.strip() for line in self.content if line.strip()))
        try:
            drawn = self.declared.load(context, request)
        except (AnalysisError, results.ResultsError) as error:
            raise self.error(f"{self.name}: {error}") from error
        for path in [*context.tools, *drawn.read]:
            self.track(path)
        for result in drawn.used:
            if result.stale:
                self.note_stale(result)
        if not drawn.drawings:
            return [not_measured_box(self.env, "Not measured yet", drawn.missing)]
        return [node for drawing in drawn.drawings
                for node in figure_nodes(drawing, self.state, self.lineno)]


def directive_of(declared: Figure) -> type[FigureDirective]:
    """The directive class of one figure: its arguments and options."""
    least, most = declared.arguments

    class Directive(FigureDirective):
        required_arguments = least
        optional_arguments = most - least
        option_spec = _option_spec(declared.options)

    Directive.declared = declared

    return Directive


def setup(app: Sphinx) -> ExtensionMetadata:
    app.setup_extension("ladder_tools.sphinx.ladder_base")
    for name, declared in every_figure().items():
        if declared.directive:
            app.add_directive(f"ladder-{name}", directive_of(declared))
    return {"version": "1", "env_version": 1,
            "parallel_read_safe": True, "parallel_write_safe": True}
