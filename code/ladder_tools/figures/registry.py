"""The book's figures, each declared once.

A module of this package that draws a figure of the book ends with one
declaration, ``FIGURE = Figure(...)``: the figure's name, what a page may
ask of it (its arguments and options), and ``load``, which reads the data
(through code/ladder_tools), and gives the drawings with their alt text and
caption, the files it read and the results it used. Everything else is
done once, for every figure, by the three that use the registry:

- the book: ladder_tools/sphinx/ladder_figures.py makes ``{ladder-<name>}`` of each
  figure (its body is the caption), and says "not measured yet" where
  ``load`` finds nothing to draw;
- the command line: draw.py ``<name>`` draws it as SVG;
- the tests: tests/python/test_figures_all.py checks every figure that a
  page draws (text that collides, text too small on a phone).

So a new figure is one new module here (its drawing, its ``load`` and its
``FIGURE``) and its test, tests/python/test_figure_<module>.py.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt

from ladder_tools import results
from ladder_tools.analysis import binaries
from ladder_tools.figures.style import RC, svg

#: How the page shows a drawing (and so how the tests judge it on a phone):
#: "natural": at its natural width where the column is wider (its text the
#: size of the prose), shrunk to a phone's column, its caption's inline
#: markup parsed as in the prose; "scroll": the same, but a phone scrolls it
#: sideways instead of shrinking it; "column": as wide as the column, its
#: caption plain text.
LAYOUTS = ("natural", "scroll", "column")


@dataclass(frozen=True)
class Option:
    """One option a page may give a figure (``:size: 3072``), or draw.py
    (``--size 3072``): ``parse`` turns its text into the value ``load``
    reads; a ``flag`` has no text, and is True when given."""

    help: str
    parse: Callable[[str], Any] = str
    default: Any = None
    flag: bool = False


def choice(*values: str) -> Callable[[str], str]:
    """An option's parse that accepts one of ``values``."""
    def parse(text: str) -> str:
        if text.strip() not in values:
            raise ValueError(f"{text.strip()!r} is not one of {', '.join(values)}")
        return text.strip()
    return parse


def positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError(f"{text!r} is not a positive whole number")
    return value


#: The ``:gpu:`` option of the figures drawn from one GPU's results.
GPU = Option("the GPU's folder under results/", default=results.REFERENCE_GPU)


@dataclass(frozen=True)
class Request:
    """What a page (or draw.py) asks of a figure: its arguments, its options
    (each given or its default), and the caption written under it ("" when
    the page gives none)."""

    arguments: list[str]
    options: dict[str, Any]
    caption: str = ""

    def caption_or(self, default: str) -> str:
        return self.caption or default


@dataclass(frozen=True)
class Drawing:
    """One figure on the page: ``make(mode)`` draws it for the light or the
    dark page as a matplotlib figure; ``phone(mode)``, where given, draws a
    narrow one in its place on a phone (its text would be too small shrunk
    to the column). ``name`` tells apart the drawings of one request."""

    make: Callable[[str], Any]
    alt: str
    caption: str
    layout: str = "natural"
    phone: Callable[[str], Any] | None = None
    name: str = ""

    def svg(self, mode: str, phone: bool = False) -> bytes:
        """The drawing (or its phone's) as SVG, as the book shows it."""
        make = self.phone if phone else self.make
        assert make is not None, "this drawing has no phone's drawing"
        with plt.rc_context(RC):
            return svg(make(mode))


@dataclass
class Drawn:
    """What ``load`` gives: the drawings, or none and ``missing``, the words
    that say what is not measured yet; the files read (the page is rebuilt
    when one changes) and the chapter results used (a stale one is
    reported); ``notes``, what the drawings leave out, in words that draw.py
    prints (the page says it in the caption or in the figure)."""

    drawings: list[Drawing]
    missing: str = ""
    read: list[Path] = field(default_factory=list)
    used: list[results.ChapterResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class Context:
    """Where ``load`` reads from: the repository (its results/, or
    $LADDER_RESULTS_DIR) and the build folder with the chapters' binaries."""

    def __init__(self, repo_root: Path, build_dir: Path | None = None):
        self.repo_root = Path(repo_root)
        self.build_dir = build_dir if build_dir is not None else binaries.build_dir(repo_root)
        #: Every tool asked for, so that the page is rebuilt when one changes.
        self.tools: list[Path] = []

    @property
    def results_root(self) -> Path:
        return results.results_root(self.repo_root)

    def tool(self, name: str) -> Path:
        """build/bin/<name>; binaries.AnalysisError says how to build it
        when it is missing."""
        path = binaries.require_binary(self.build_dir, name)
        self.tools.append(path)
        return path


@dataclass(frozen=True)
class Figure:
    """A figure of the book: ``{ladder-<name>}`` on a page, ``draw.py <name>``.

    ``arguments`` is the least and most arguments it takes, ``argument``
    what they are (for draw.py's help), ``options`` what it may be given
    by name; ``load(context, request)`` reads and draws (Drawn)."""


    name: str
    summary: str
    load: Callable[[Context, Request], Drawn]
    arguments: tuple[int, int] = (0, 0)
    argument: str = ""
    options: dict[str, Option] = field(default_factory=dict)
    #: False for a figure that a page shows through a directive of its own,
    #: which adds tables beside it (ladder, sweep, bankmap :figure:).
    directive: bool = True

    def request(self, arguments: list[str], given: dict[str, Any],
                caption: str = "") -> Request:
        """A request with each option not given at its default."""
        options = {name: given.get(name, False if option.flag else option.default)
                   for name, option in self.options.items()}
        return Request(list(arguments), options, caption)


@functools.cache
def every_figure() -> dict[str, Figure]:
    """Every figure of the book, by name: the FIGURE of each module of this
    package that has one (found when first asked, so that a module may
    import this one)."""
    from ladder_tools import figures

    found: dict[str, Figure] = {}
    for module in pkgutil.iter_modules(figures.__path__):
        loaded = importlib.import_module(f"{figures.__name__}.{module.name}")
        declared = getattr(loaded, "FIGURE", None)
        if isinstance(declared, Figure):
            assert declared.name not in found, f"two figures are named {declared.name}"
            found[declared.name] = declared
    return dict(sorted(found.items()))
