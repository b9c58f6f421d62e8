"""The book's figures, drawn with matplotlib as SVG from the tools' data.

One module per figure, each with its drawing function(s), the function
that turns what code/ladder_tools loads into the drawing's plain data, and
its declaration (FIGURE, registry.py), through which the docs extension
(ladder_tools/sphinx/ladder_figures.py), the command line (draw.py) and the
tests find it. style.py holds the look they share. See README.md.
"""
