#!/usr/bin/env python3
"""Draws one of the book's figures from the command line, as SVG.

    python -m ladder_tools.figures.draw --help            # every figure
    python -m ladder_tools.figures.draw tiling --help     # one figure's arguments and options
    python -m ladder_tools.figures.draw plot 12-final --out sizes.svg
    python -m ladder_tools.figures.draw ladder --out ladder.svg
    python -m ladder_tools.figures.draw bankgrid ch09.a-store ch10.a-store \
        --titles "unpadded; padded" --out grid.svg
    python -m ladder_tools.figures.draw rounds 12-final --size 3072 --out rounds.svg
    python -m ladder_tools.figures.draw tail-rounds 3072 --schemes "tiles split-k stream-k" \
        --out tail.svg

A figure is drawn as the book's directive of the same name draws it
(``{ladder-rounds} 12-final`` with ``:size: 3072``): the figures and what
each takes are those registry.py finds. Where the figure is more
than one drawing (a sweep on each GPU, the pipeline with --handshake), each
is written beside --out, its name added to the file's; --phone writes the
phone's drawing of a figure that has one.

`python` is the book's environment's, build/venv/bin/python: it has
matplotlib, and this repository's package (ladder_tools, the figures
among it) installed (pyproject.toml).

--mode dark draws the dark page's version. The data is the book's: results/
(or $LADDER_RESULTS_DIR) and the chapters built in build/ (or
$LADDER_BUILD_DIR), read through code/ladder_tools.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ladder_tools import results
from ladder_tools.analysis import binaries
from ladder_tools.figures.registry import Context, Figure, every_figure
from ladder_tools.provenance import ROOT


def add_figure(figures: argparse._SubParsersAction[argparse.ArgumentParser],
               figure: Figure) -> None:
    """One subcommand: the figure's arguments and options, and --out, --mode."""
    # argparse formats help with %: "% of cuBLAS" must be %%.
    command = figures.add_parser(figure.name, help=figure.summary.replace("%", "%%"))
    command.set_defaults(figure=figure)
    command.add_argument("--out", type=Path, required=True, help="the SVG file to write")
    command.add_argument("--mode", choices=["light", "dark"], default="light",
                         help="the page mode it is drawn for (default light)")
    command.add_argument("--phone", action="store_true",
                         help="the phone's drawing, where the figure has one")
    least, most = figure.arguments
    if most == 1:
        command.add_argument("arguments", nargs=None if least else "?", metavar="ARGUMENT",
                             help=figure.argument.replace("%", "%%"))
    elif most > 1:
        command.add_argument("arguments", nargs="+" if least else "*", metavar="ARGUMENT",
                             help=f"{figure.argument} ({least} to {most})".replace("%", "%%"))
    for name, option in figure.options.items():
        words = option.help + ("" if option.flag or option.default is None
                               else f" (default {option.default})")
        if option.flag:
            command.add_argument(f"--{name}", action="store_true", help=words)
        else:
            command.add_argument(f"--{name}", dest=f"option_{name}", type=option.parse,
                                 metavar=name.upper(), help=words.replace("%", "%%"))


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    figures = main.add_subparsers(dest="name", required=True, metavar="FIGURE")
    for figure in every_figure().values():
        add_figure(figures, figure)
    return main


def given_options(args: argparse.Namespace, figure: Figure) -> dict:
    """The options given on the command line (the others take their default)."""
    given = {}
    for name, option in figure.options.items():
        value = getattr(args, name if option.flag else f"option_{name}")
        if value not in (None, False):
            given[name] = value
    return given


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    figure: Figure = args.figure
    arguments = getattr(args, "arguments", None) or []
    if isinstance(arguments, str):
        arguments = [arguments]
    least, most = figure.arguments
    if not least <= len(arguments) <= most:
        sys.exit(f"draw: {figure.name} takes {least} to {most} arguments")
    request = figure.request(arguments, given_options(args, figure))
    try:
        drawn = figure.load(Context(ROOT), request)
        if not drawn.drawings:
            sys.exit(f"draw: {drawn.missing[:1].lower()}{drawn.missing[1:]}")
        for note in drawn.notes:
            print(f"draw: {note}", file=sys.stderr)
        for drawing in drawn.drawings:
            if args.phone and drawing.phone is None:
                sys.exit(f"draw: {figure.name} has no phone's drawing")
            out = args.out
            if len(drawn.drawings) > 1:
                tag = drawing.name or "main"
                out = out.with_name(f"{out.stem}-{tag.replace(' ', '-')}{out.suffix}")
            out.write_bytes(drawing.svg(args.mode, phone=args.phone))
            print(f"wrote {out}")
    except (results.ResultsError, binaries.AnalysisError) as error:
        sys.exit(f"draw: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
