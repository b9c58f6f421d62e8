"""The look every figure shares: colours, the SVG output, axes and legends.

Each figure is drawn twice, once for the light and once for the dark page
(furo shows an image with class ``only-light`` or ``only-dark`` in its own
mode). Backgrounds are transparent; the two drawings differ only in the
colour of text, axes and grid.
"""

from __future__ import annotations

import io
import textwrap
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")  # before pyplot is imported: the backend is chosen first

import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter
from matplotlib.typing import RcKeyType

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.legend import Legend

#: The page modes, each with its text, axis and grid colours.
THEMES = {
    "light": {"ink": "#303030", "grid": "#d0d0d0", "page": "#ffffff"},
    "dark": {"ink": "#d0d0d0", "grid": "#505050", "page": "#131416"},
}
#: One colour per GPU, in the order the GPUs are listed (the reference GPU
#: first); each is mid-contrast, readable on white and on near-black.
GPU_COLOURS = ["#3d7dd8", "#e0892b", "#3aa56b", "#c4508f", "#8a6fd1", "#9a8b3d"]

#: The rc settings every figure is drawn with: text as text, stable ids.
RC: dict[RcKeyType, Any] = {"svg.fonttype": "none", "svg.hashsalt": "ladder"}

#: Axis labels with thousands separators: 12,000.
thousands = FuncFormatter(lambda value, _: f"{value:,.0f}")


def style_axes(axes: Axes, theme: dict) -> None:
    """Transparent axes with the mode's ink and grid, no top or right spine."""
    axes.set_facecolor("none")
    axes.tick_params(colors=theme["ink"], which="both")
    for spine in axes.spines.values():
        spine.set_color(theme["grid"])
    axes.spines["top"].set_visible(False)
    axes.spines["right"].set_visible(False)
    axes.grid(True, color=theme["grid"], linewidth=0.6)
    axes.set_axisbelow(True)
    axes.xaxis.label.set_color(theme["ink"])
    axes.yaxis.label.set_color(theme["ink"])
    axes.title.set_color(theme["ink"])


#: Characters in a line of a legend before an entry wraps: a result's title
#: can be long, and a wider legend would shrink the whole figure on a phone.
LEGEND_CHARACTERS = 44


def legend(owner: Axes | MplFigure, theme: dict, **options: Any) -> Legend:
    """A frameless legend of ``owner`` (axes or figure) in the mode's ink,
    placed and sized as ``options`` say (small text unless they give a
    fontsize), each entry wrapped at LEGEND_CHARACTERS; returns it."""
    drawn = owner.legend(**{"frameon": False, "fontsize": "small", **options})
    for text in drawn.get_texts():
        text.set_text(textwrap.fill(text.get_text(), LEGEND_CHARACTERS))
        text.set_color(theme["ink"])
    return drawn


def svg(figure: MplFigure) -> bytes:
    """The figure as SVG (transparent, cropped, no date); closes it."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg", transparent=True, bbox_inches="tight",
                   metadata={"Date": None})
    plt.close(figure)
    return buffer.getvalue()
